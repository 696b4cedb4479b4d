/*
 * GatherND (namespace "plugrt", version "1"), ONNX opsets 11 to 13 (12
 * added batch_dims): data of any dtype (rank r >= 1), indices int64 (int32
 * accepted; rank q >= 1) whose last dim m, a constant at build time, is in
 * [1, r - b]. The output has dims indices[:-1] + data[b + m:]:
 *   out[i0..i(q-2), ...] = data[i0..i(b-1), indices[i0..i(q-2), :], ...]
 * where the first b dims of data and indices are batch dims and must be
 * equal.
 *
 * Field batch_dims (int32, default 0), in [0, min(q, r) - 1].
 *
 * An index may be negative (counting from the end of its dim); one outside
 * [-s, s-1] fails the run, naming it, instead of reading out of bounds.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct gnd_op {
    op_object o;
    int32_t batch_dims;
} gnd_op;

static prt_status gnd_parse(op_object *o, const op_fields *f)
{
    gnd_op *g = (gnd_op *)o;
    prt_status st = op_field_i32(f, "batch_dims", 0, &g->batch_dims);
    if (!st && g->batch_dims < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'batch_dims' is %d; it must be >= 0",
                              (int)g->batch_dims);
    return st;
}

static int32_t gnd_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "batch_dims", PRT_FIELD_INT32, &((gnd_op *)o)->batch_dims, 1);
    return 1;
}

/* The rules that need only ranks and m (the last dim of indices). */
static prt_status gnd_check(const op_object *o, int32_t r, int32_t q, int64_t m)
{
    int32_t b = ((const gnd_op *)o)->batch_dims;
    if (r < 1 || q < 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "data (rank %d) and indices (rank %d) must have rank >= 1", (int)r,
                       (int)q);
    if (b >= r || b >= q)
        return op_fail(o, PRT_ERR_SHAPE,
                       "batch_dims %d must be less than the ranks of data (%d) and "
                       "indices (%d)",
                       (int)b, (int)r, (int)q);
    if (m < 1 || m > r - b)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the last dim of indices is %lld; it must be 1 to %d (data's "
                       "rank %d less batch_dims %d)",
                       (long long)m, (int)(r - b), (int)r, (int)b);
    if (q - 1 + r - b - m > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "the output would have rank %d (max %d)",
                       (int)(q - 1 + r - b - m), PRT_MAX_DIMS);
    return PRT_OK;
}

static prt_status gnd_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t r = in[0].nb_dims, q = in[1].nb_dims, b = ((gnd_op *)o)->batch_dims;
    int64_t m = 0;
    prt_status st;
    (void)nb_in;
    if (q >= 1 && !eb->is_constant(eb, in[1].d[q - 1], &m))
        return op_fail(o, PRT_ERR_SHAPE,
                       "the last dim of indices must be known at build time (it "
                       "decides the output's rank)");
    st = gnd_check(o, r, q, m);
    if (st)
        return st;
    for (int32_t i = 0; i < b; i++) {
        int64_t u, v;
        if (eb->is_constant(eb, in[0].d[i], &u) && eb->is_constant(eb, in[1].d[i], &v) &&
            u != v)
            return op_fail(o, PRT_ERR_SHAPE,
                           "batch dim %d is %lld in data but %lld in indices", (int)i,
                           (long long)u, (long long)v);
    }
    out->nb_dims = 0;
    for (int32_t i = 0; i < q - 1; i++)
        out->d[out->nb_dims++] = in[1].d[i];
    for (int32_t i = b + (int32_t)m; i < r; i++)
        out->d[out->nb_dims++] = in[0].d[i];
    return PRT_OK;
}

static prt_status gnd_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    int32_t r = in[0].nb_dims, q = in[1].nb_dims, b = ((const gnd_op *)o)->batch_dims;
    int64_t m = q >= 1 ? in[1].d[q - 1] : 0;
    prt_status st = gnd_check(o, r, q, m);
    (void)nb_in;
    if (st)
        return st;
    for (int32_t i = 0; i < b; i++)
        if (in[0].d[i] != in[1].d[i])
            return op_fail(o, PRT_ERR_SHAPE,
                           "batch dim %d is %lld in data but %lld in indices", (int)i,
                           (long long)in[0].d[i], (long long)in[1].d[i]);
    out->nb_dims = 0;
    for (int32_t i = 0; i < q - 1; i++)
        out->d[out->nb_dims++] = in[1].d[i];
    for (int32_t i = b + (int32_t)m; i < r; i++)
        out->d[out->nb_dims++] = in[0].d[i];
    return PRT_OK;
}

int32_t gnd_batch_dims(const op_object *o)
{
    return ((const gnd_op *)o)->batch_dims;
}

static prt_status gnd_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const prt_dims *dd = &in[0].dims, *id = &in[1].dims;
    int32_t r = dd->nb_dims, q = id->nb_dims, b = ((const gnd_op *)o)->batch_dims;
    int32_t m = (int32_t)id->d[q - 1];
    int64_t ds[PRT_MAX_DIMS], nb_batch = 1, per_batch = 1, slice, tuples = 1;
    size_t es = prt_dtype_size(dtype);
    (void)nb_in, (void)out, (void)ws, (void)stream;
    opd_strides(dd, ds);
    for (int32_t i = 0; i < b; i++)
        nb_batch *= dd->d[i];
    for (int32_t i = b; i < r; i++)
        per_batch *= dd->d[i];
    slice = ds[b + m - 1]; /* the elements of data[b + m:] */
    for (int32_t i = b; i < q - 1; i++)
        tuples *= id->d[i];
    for (int64_t bi = 0; bi < nb_batch; bi++)
        for (int64_t t = 0; t < tuples; t++) {
            int64_t e = bi * tuples + t, src = bi * per_batch;
            for (int32_t j = 0; j < m; j++) {
                int64_t v = op_int_at(x[1], in[1].dtype, e * m + j), s = dd->d[b + j];
                if (v < -s || v >= s)
                    return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                                   "index %lld (element %lld of indices) is out of "
                                   "range for data dim %d of size %lld",
                                   (long long)v, (long long)(e * m + j), (int)(b + j),
                                   (long long)s);
                src += (v < 0 ? v + s : v) * ds[b + j];
            }
            if (slice > 0)
                memcpy((uint8_t *)y + (size_t)(e * slice) * es,
                       (const uint8_t *)x[0] + (size_t)src * es, (size_t)slice * es);
        }
    return PRT_OK;
}

static uint32_t gnd_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT_INDEX;
}

static const op_class gnd_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(gnd_op),
    .alias_input = -1,
    .parse = gnd_parse,
    .serialize = gnd_serialize,
    .shapes = gnd_shapes,
    .infer = gnd_infer,
    .run = gnd_run,
    .in_dtypes = gnd_in_dtypes,
};

static const prt_field_schema gnd_schema[] = {
    {"batch_dims", PRT_FIELD_INT32, 1,
     "leading dims shared by data and indices, default 0"},
};

const prt_plugin_creator op_gather_nd_creator =
    OP_CREATOR("GatherND", gnd_class, gnd_schema, 1);

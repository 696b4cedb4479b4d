/*
 * Compress (namespace "plugrt", version "1"), ONNX opsets 9 and 11 (11
 * added negative axes): the slices of `input` (any dtype) along `axis`
 * whose entry of `condition` (1-D bool) is true, or without an axis the
 * elements of the flattened input.
 *
 * Field axis (int32, optional), in [-r, r-1]; absent: the input is
 * flattened and the output is 1-D.
 *
 * condition may be shorter than the axis (or the volume): entries past its
 * end count as false. A true entry past the axis' end fails the run, as
 * numpy.compress does.
 *
 * Output 0: the input's dims with the axis' (or [K]) replaced by K, the
 * number of true entries. Output 1: K, the size tensor (a 0-D int64),
 * declared with upper bound min(len(condition), the axis' length) and opt
 * half of it (ops_data.h); the importer keeps it internal.
 */
#include <string.h>

#include "ops/ops_data.h"

typedef struct compress_op {
    op_object o;
    int32_t has_axis;
    int32_t axis;
} compress_op;

static prt_status compress_parse(op_object *o, const op_fields *f)
{
    compress_op *c = (compress_op *)o;
    const prt_field *fl;
    prt_status st = op_field_find(f, "axis", &fl);
    if (!st)
        st = op_field_i32(f, "axis", 0, &c->axis);
    c->has_axis = fl != NULL;
    return st;
}

static int32_t compress_serialize(op_object *o, prt_field *ser)
{
    compress_op *c = (compress_op *)o;
    if (!c->has_axis)
        return 0;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &c->axis, 1);
    return 1;
}

static int32_t compress_nb_outputs(const op_object *o)
{
    (void)o;
    return 2;
}

static int32_t compress_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                                  int32_t index)
{
    (void)o, (void)nb_in;
    return index == 0 ? types[0] : PRT_INT64;
}

static uint32_t compress_in_dtypes(const op_object *o, int32_t index,
                                   const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT(PRT_BOOL);
}

static prt_status compress_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                  const prt_dim_exprs *sv, int32_t nb_sv,
                                  prt_dim_exprs *out, int32_t nb_out,
                                  prt_expr_builder *eb)
{
    const compress_op *c = (const compress_op *)o;
    const prt_expr *len, *k;
    int32_t axis = 0;
    (void)nb_in, (void)sv, (void)nb_sv, (void)nb_out;
    if (in[1].nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "condition has rank %d; it must be 1-D",
                       (int)in[1].nb_dims);
    if (c->has_axis) {
        prt_status st = op_axis(o, c->axis, in[0].nb_dims, 0, "the input", &axis);
        if (st)
            return st;
        len = in[0].d[axis];
    } else {
        len = eb->constant(eb, 1);
        for (int32_t i = 0; i < in[0].nb_dims; i++)
            len = eb->operation(eb, PRT_DIM_PROD, len, in[0].d[i]);
    }
    k = opd_declare_size(o, eb, 1, eb->operation(eb, PRT_DIM_MIN, len, in[1].d[0]));
    if (!k)
        return PRT_ERR_OUT_OF_MEMORY;
    if (c->has_axis) {
        out[0] = in[0];
        out[0].d[axis] = k;
    } else {
        out[0].nb_dims = 1;
        out[0].d[0] = k;
    }
    out[1].nb_dims = 0;
    return PRT_OK;
}

prt_status compress_geometry(const op_object *o, const prt_dims *d, int32_t *axis,
                             int64_t *outer, int64_t *len, int64_t *inner)
{
    const compress_op *c = (const compress_op *)o;
    *axis = 0;
    *outer = 1;
    *inner = 1;
    if (!c->has_axis) {
        *len = base_volume(d);
        return PRT_OK;
    }
    prt_status st = op_axis(o, c->axis, d->nb_dims, 0, "the input", axis);
    if (st)
        return st;
    *len = d->d[*axis];
    for (int32_t i = 0; i < *axis; i++)
        *outer *= d->d[i];
    for (int32_t i = *axis + 1; i < d->nb_dims; i++)
        *inner *= d->d[i];
    return PRT_OK;
}

static prt_status compress_run(const op_object *o, int32_t dtype,
                               const prt_tensor_desc *in, int32_t nb_in,
                               const prt_tensor_desc *out, int32_t nb_out,
                               const void *const *x, void *const *y, void *ws,
                               void *stream)
{
    const compress_op *c = (const compress_op *)o;
    const uint8_t *cond = x[1], *xb = x[0];
    int64_t nc = base_volume(&in[1].dims), len, outer, inner, k = 0;
    size_t es = prt_dtype_size(dtype);
    int32_t axis = 0;
    uint8_t *yb = y[0];
    prt_status st = compress_geometry(o, &in[0].dims, &axis, &outer, &len, &inner);
    (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (st)
        return st;
    for (int64_t i = 0; i < nc; i++)
        if (cond[i]) {
            if (i >= len)
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "condition entry %lld is true, past the %lld %s",
                               (long long)i, (long long)len,
                               c->has_axis ? "slices along the axis" : "elements");
            k++;
        }
    if (out[0].dims.nb_dims != (c->has_axis ? in[0].dims.nb_dims : 1) ||
        out[0].dims.d[c->has_axis ? axis : 0] < k)
        return op_fail(o, PRT_ERR_SHAPE, "output 0 cannot hold %lld slices",
                       (long long)k);
    /* Densely with the true K: [outer, K, inner]. */
    for (int64_t b = 0; b < outer && inner > 0; b++)
        for (int64_t i = 0, j = 0; i < nc && i < len; i++)
            if (cond[i]) {
                memcpy(yb + (size_t)((b * k + j) * inner) * es,
                       xb + (size_t)((b * len + i) * inner) * es, (size_t)inner * es);
                j++;
            }
    memcpy(y[1], &k, sizeof k);
    return PRT_OK;
}

static const op_class compress_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(compress_op),
    .alias_input = -1,
    .parse = compress_parse,
    .serialize = compress_serialize,
    .in_dtypes = compress_in_dtypes,
    .nb_outputs = compress_nb_outputs,
    .shapes_n = compress_shapes,
    .out_dtype_n = compress_out_dtype,
    .run = compress_run,
};

static const prt_field_schema compress_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis to select along; absent: the flattened input"},
};

const prt_plugin_creator op_compress_creator =
    OP_CREATOR("Compress", compress_class, compress_schema, 1);

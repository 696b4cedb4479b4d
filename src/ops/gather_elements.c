/*
 * GatherElements (namespace "plugrt", version "1"), ONNX opset 13
 * semantics. Inputs data (any dtype, rank r >= 1) and indices (int32 or
 * int64, rank r); the output has indices' dims and data's dtype:
 *   out[i0, .., ia, .., i(r-1)] = data[i0, .., indices[i0, .., i(r-1)], ..]
 * with ia the `axis` position. Every other dim of indices must be at most
 * data's (ONNX Runtime's rule).
 *
 * Field axis (int32, default 0; int64 accepted), in [-r, r-1].
 *
 * An index may be negative (counting from the end of the axis); one outside
 * [-s, s-1] for an axis of size s fails the run, naming the element, instead
 * of reading out of bounds.
 */
#include <string.h>

#include "ops/math_ops.h"
#include "ops/shape_ops.h"

typedef struct ge_op {
    op_object o;
    int32_t axis;
} ge_op;

static prt_status ge_parse(op_object *o, const op_fields *f)
{
    return op_field_i32(f, "axis", 0, &((ge_op *)o)->axis);
}

static int32_t ge_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &((ge_op *)o)->axis, 1);
    return 1;
}

prt_status ge_axis(const op_object *o, int32_t r, int32_t ri, int32_t *out)
{
    prt_status st = op_axis(o, ((const ge_op *)o)->axis, r, 0, "data", out);
    if (!st && ri != r)
        return op_fail(o, PRT_ERR_SHAPE,
                       "indices have rank %d but data has rank %d; they "
                       "must be equal",
                       (int)ri, (int)r);
    return st;
}

/* Indices larger than the data outside the axis; dims already written out. */
static prt_status ge_exceed(const op_object *o, const char *indices, const char *data,
                            int32_t dim, int32_t axis)
{
    return op_fail(o, PRT_ERR_SHAPE,
                   "indices %s exceed data %s in dim %d (only the axis, %d, may be "
                   "larger)",
                   indices, data, (int)dim, (int)axis);
}

static prt_status ge_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t axis = 0;
    char sa[128], sb[128];
    prt_status st = ge_axis(o, in[0].nb_dims, in[1].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    for (int32_t i = 0; i < in[0].nb_dims; i++) {
        int64_t vd, vi;
        if (i != axis && eb->is_constant(eb, in[0].d[i], &vd) &&
            eb->is_constant(eb, in[1].d[i], &vi) && vi > vd)
            return ge_exceed(o, op_exprs_str(eb, &in[1], sa, sizeof sa),
                             op_exprs_str(eb, &in[0], sb, sizeof sb), i, axis);
    }
    *out = in[1];
    return PRT_OK;
}

static prt_status ge_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    int32_t axis = 0;
    char sa[128], sb[128];
    prt_status st = ge_axis(o, in[0].nb_dims, in[1].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    for (int32_t i = 0; i < in[0].nb_dims; i++)
        if (i != axis && in[1].d[i] > in[0].d[i])
            return ge_exceed(o, base_dims_format(&in[1], BASE_DIMS_LIST, sa, sizeof sa),
                             base_dims_format(&in[0], BASE_DIMS_LIST, sb, sizeof sb), i,
                             axis);
    /* Indices along an empty axis can only be out of range. */
    if (in[0].d[axis] == 0 && base_volume(&in[1]) > 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "data %s is empty along axis %d, so no index is in "
                       "range",
                       base_dims_format(&in[0], BASE_DIMS_LIST, sb, sizeof sb),
                       (int)axis);
    *out = in[1];
    return PRT_OK;
}

static uint32_t ge_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT(PRT_INT32) | OP_DT(PRT_INT64);
}

static prt_status ge_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const prt_dims *dd = &in[0].dims, *id = &in[1].dims;
    int32_t r = dd->nb_dims, axis = 0, it = in[1].dtype;
    int64_t dstride[PRT_MAX_DIMS], idx[PRT_MAX_DIMS] = {0};
    int64_t n = base_volume(id), base = 0, size;
    size_t es = prt_dtype_size(dtype);
    const uint8_t *data = x[0];
    uint8_t *yb = y;
    prt_status st = ge_axis(o, r, id->nb_dims, &axis);
    (void)nb_in, (void)out, (void)ws;
    if (st)
        return st;
    size = dd->d[axis];
    dstride[r - 1] = 1;
    for (int32_t i = r - 2; i >= 0; i--)
        dstride[i] = dstride[i + 1] * dd->d[i + 1];
    /* base: data's offset of idx with the axis coordinate left 0. */
    for (int64_t e = 0; e < n; e++) {
        int64_t v =
            it == PRT_INT32 ? ((const int32_t *)x[1])[e] : ((const int64_t *)x[1])[e];
        if (v < -size || v >= size)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "index %lld at element %lld of indices is out of "
                           "range for axis %d of size %lld (-%lld to %lld)",
                           (long long)v, (long long)e, (int)axis, (long long)size,
                           (long long)size, (long long)(size - 1));
        if (v < 0)
            v += size;
        memcpy(yb + (size_t)e * es, data + (size_t)(base + v * dstride[axis]) * es, es);
        for (int32_t k = r - 1; k >= 0; k--) {
            idx[k]++;
            if (k != axis)
                base += dstride[k];
            if (idx[k] < id->d[k])
                break;
            if (k != axis)
                base -= dstride[k] * id->d[k];
            idx[k] = 0;
        }
    }
    return PRT_OK;
}

static const op_class ge_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(ge_op),
    .alias_input = -1,
    .parse = ge_parse,
    .serialize = ge_serialize,
    .shapes = ge_shapes,
    .infer = ge_infer,
    .run = ge_run,
    .in_dtypes = ge_in_dtypes,
};

static const prt_field_schema ge_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis indices index, default 0; -r to r-1"},
};

const prt_plugin_creator op_gather_elements_creator =
    OP_CREATOR("GatherElements", ge_class, ge_schema, 1);

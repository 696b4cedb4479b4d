/*
 * OneHot (namespace "plugrt", version "1"), ONNX opsets 9 and 11 (11 added
 * negative indices and axes): inputs indices (any numeric dtype; floats are
 * truncated toward zero, as ONNX casts them to int64) and values (two
 * elements [off, on] of the output's dtype, any). The output has indices'
 * dims with `depth` inserted at `axis`: off everywhere but on where the
 * inserted coordinate is the index (a negative one counts from depth).
 * Indices outside [-depth, depth-1] give a row of off.
 *
 * depth: the shape input (a 0-D or one-element int32/int64; its value is
 * the new dim), or field depth (int64, which the importer makes from a
 * constant input of any numeric dtype). It must be >= 1.
 *
 * Field axis (int32, default -1), in [-(r+1), r] for indices of rank r;
 * a negative one counts from the end of the output.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct one_hot_op {
    op_object o;
    int32_t axis;
    int32_t has_depth;
    int64_t depth;
    int32_t depth_float; /* 1: the shape input is float32, truncated */
} one_hot_op;

static prt_status oh_parse(op_object *o, const op_fields *f)
{
    one_hot_op *h = (one_hot_op *)o;
    const prt_field *fl;
    double unused;
    prt_status st = op_field_i32(f, "axis", -1, &h->axis);
    if (!st)
        st = op_field_i32(f, "depth_float", 0, &h->depth_float);
    if (!st && (h->depth_float & ~1))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'depth_float' is %d; it must be 0 or 1",
                              (int)h->depth_float);
    if (!st)
        st = op_field_find(f, "depth", &fl);
    if (st || !fl)
        return st;
    if (fl->length != 1 || op_field_number_at(fl, 0, &h->depth, &unused) != 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'depth' must be one integer");
    if (h->depth < 1 || h->depth > ((int64_t)1 << 40))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'depth' is %lld; it must be 1 to 2^40",
                              (long long)h->depth);
    h->has_depth = 1;
    return PRT_OK;
}

static int32_t oh_serialize(op_object *o, prt_field *ser)
{
    one_hot_op *h = (one_hot_op *)o;
    int32_t n = 1;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &h->axis, 1);
    if (h->depth_float)
        op_ser(&ser[n++], "depth_float", PRT_FIELD_INT32, &h->depth_float, 1);
    if (h->has_depth)
        op_ser(&ser[n++], "depth", PRT_FIELD_INT64, &h->depth, 1);
    return n;
}

/* The axis for indices of rank r, in [0, r]: negative ones count from the
 * end of the output, of rank r + 1. */
static prt_status oh_axis(const op_object *o, int32_t r, int32_t *axis)
{
    prt_status st =
        op_axis(o, ((const one_hot_op *)o)->axis, r + 1, 0, "the output", axis);
    if (!st && r + 1 > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "the output would have rank %d (max %d)",
                       (int)(r + 1), PRT_MAX_DIMS);
    return st;
}

static prt_status oh_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                            prt_expr_builder *eb)
{
    const one_hot_op *h = (const one_hot_op *)o;
    const prt_expr *depth;
    int32_t axis, n = 0;
    int64_t v;
    prt_status st = oh_axis(o, in[0].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    if (h->has_depth == (nb_sv > 0))
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "depth comes from the field or from the shape input, not both "
                       "or neither");
    if (nb_sv && sv[0].nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "depth must hold one value, not %d",
                       (int)sv[0].nb_dims);
    if (op_static_count(eb, &in[1]) >= 0 && op_static_count(eb, &in[1]) != 2)
        return op_fail(o, PRT_ERR_SHAPE, "values must hold two elements [off, on]");
    depth = nb_sv ? sv[0].d[0] : eb->constant(eb, h->depth);
    /* A float depth: floor(1 x depth), which is its truncation wherever
     * depth >= 1 holds (ONNX casts it to an integer). */
    if (nb_sv && h->depth_float)
        depth = eb->operation(eb, PRT_DIM_FLOOR_MUL_F32, eb->constant(eb, 1), depth);
    if (!depth)
        return op_fail(o, PRT_ERR_SHAPE, "depth is no finite float");
    if (eb->is_constant(eb, depth, &v) && v < 1)
        return op_fail(o, PRT_ERR_SHAPE, "depth is %lld; it must be 1 or more",
                       (long long)v);
    for (int32_t i = 0; i <= in[0].nb_dims; i++)
        out->d[n++] = i == axis ? depth : in[0].d[i - (i > axis)];
    out->nb_dims = n;
    return PRT_OK;
}

prt_status oh_check(const op_object *o, const prt_tensor_desc *in, const prt_dims *od,
                    int64_t *outer, int64_t *depth, int64_t *inner)
{
    const prt_dims *id = &in[0].dims;
    int32_t axis = 0, r = id->nb_dims;
    prt_dims want;
    char a[128], b[128];
    prt_status st = oh_axis(o, r, &axis);
    if (st)
        return st;
    if (base_volume(&in[1].dims) != 2)
        return op_fail(o, PRT_ERR_SHAPE, "values must hold two elements [off, on]");
    *depth = od->nb_dims == r + 1 ? od->d[axis] : -1;
    want.nb_dims = r + 1;
    for (int32_t i = 0; i <= r; i++)
        want.d[i] = i == axis ? *depth : id->d[i - (i > axis)];
    if (*depth < 1 || !opd_dims_eq(&want, od))
        return op_fail(o, PRT_ERR_SHAPE, "the output dims %s do not suit indices %s",
                       base_dims_format(od, BASE_DIMS_LIST, a, sizeof a),
                       base_dims_format(id, BASE_DIMS_LIST, b, sizeof b));
    *outer = 1;
    *inner = 1;
    for (int32_t i = 0; i < axis; i++)
        *outer *= id->d[i];
    for (int32_t i = axis; i < r; i++)
        *inner *= id->d[i];
    return PRT_OK;
}

static prt_status oh_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    int64_t outer, inner, depth, n = base_volume(&out->dims);
    size_t es = prt_dtype_size(out->dtype);
    const uint8_t *vals = x[1];
    uint8_t *yb = ys[0];
    prt_status st = oh_check(o, in, &out->dims, &outer, &depth, &inner);
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (st)
        return st;
    for (int64_t e = 0; e < n; e++)
        memcpy(yb + (size_t)e * es, vals, es);
    for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < inner; q++) {
            double v = opd_get(x[0], in[0].dtype, p * inner + q);
            int64_t k;
            if (!(v > -(double)depth - 1.0 && v < (double)depth + 1.0))
                continue; /* out of range, or NaN */
            k = (int64_t)v;
            k = k < 0 ? k + depth : k;
            if (k >= 0 && k < depth)
                memcpy(yb + (size_t)((p * depth + k) * inner + q) * es, vals + es, es);
        }
    return PRT_OK;
}

static uint32_t oh_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)index, (void)types;
    return OP_DT_NO_FP8;
}

static int32_t oh_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o;
    return nb_in > 1 ? types[1] : -1;
}

static int oh_float_shape_input(const op_object *o, int32_t index)
{
    return index == 0 && ((const one_hot_op *)o)->depth_float;
}

static const op_class one_hot_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_NO_FP8,
    .size = sizeof(one_hot_op),
    .alias_input = -1,
    .parse = oh_parse,
    .serialize = oh_serialize,
    .run = oh_run,
    .min_shape_inputs = 0,
    .max_shape_inputs = 1,
    .in_dtypes = oh_in_dtypes,
    .out_dtype = oh_out_dtype,
    .shapes_sv = oh_shapes,
    .float_shape_input = oh_float_shape_input,
};

static const prt_field_schema one_hot_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "where the new dim goes, default -1; -(r+1) to r"},
    {"depth", PRT_FIELD_INT64, 1, "the new dim; absent: the shape input's value"},
    {"depth_float", PRT_FIELD_INT32, 1,
     "1: the shape input is float32 (its value truncated), default 0"},
};

const prt_plugin_creator op_one_hot_creator =
    OP_CREATOR("OneHot", one_hot_class, one_hot_schema, 3);

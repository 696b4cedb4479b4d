/*
 * Gather (namespace "plugrt", version "1"), ONNX opset 13 semantics. Data
 * of any dtype, indices int32 or int64; the output has the data's dtype.
 *
 * Field axis (int32, default 0), in [-r, r-1] for data of rank r. Output
 * dims: data[:axis] + indices' dims + data[axis+1:]. An index i in
 * [-d, d-1] (d the axis' size) selects i (i + d when negative); anything
 * else fails the run with a message.
 *
 * Values: when the data is a shape tensor (rank 0 or 1) and the indices'
 * values are constants, the output's values are the selected data values
 * (Shape -> Gather picks one dim).
 */
#include <string.h>

#include "ops/shape_ops.h"

typedef struct gather_op {
    op_object o;
    int32_t axis;
} gather_op;

static prt_status gather_parse(op_object *o, const op_fields *f)
{
    return op_field_i32(f, "axis", 0, &((gather_op *)o)->axis);
}

static int32_t gather_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &((gather_op *)o)->axis, 1);
    return 1;
}

prt_status gather_axis(const op_object *o, int32_t r, int32_t q, int32_t *out)
{
    prt_status st = op_axis(o, ((const gather_op *)o)->axis, r, 0, "data", out);
    if (!st && r - 1 + q > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "the output would have rank %d (max %d)",
                       (int)(r - 1 + q), PRT_MAX_DIMS);
    return st;
}

static prt_status gather_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t axis, n = 0;
    prt_status st = gather_axis(o, in[0].nb_dims, in[1].nb_dims, &axis);
    (void)nb_in, (void)eb;
    if (st)
        return st;
    for (int32_t i = 0; i < axis; i++)
        out->d[n++] = in[0].d[i];
    for (int32_t i = 0; i < in[1].nb_dims; i++)
        out->d[n++] = in[1].d[i];
    for (int32_t i = axis + 1; i < in[0].nb_dims; i++)
        out->d[n++] = in[0].d[i];
    out->nb_dims = n;
    return PRT_OK;
}

static prt_status gather_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    int32_t axis, n = 0;
    prt_status st = gather_axis(o, in[0].nb_dims, in[1].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    for (int32_t i = 0; i < axis; i++)
        out->d[n++] = in[0].d[i];
    for (int32_t i = 0; i < in[1].nb_dims; i++)
        out->d[n++] = in[1].d[i];
    for (int32_t i = axis + 1; i < in[0].nb_dims; i++)
        out->d[n++] = in[0].d[i];
    out->nb_dims = n;
    return PRT_OK;
}

static prt_status gather_values(op_object *o, const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *in_values, int32_t nb_in,
                                const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                                prt_expr_builder *eb)
{
    int32_t n = in_values[0].nb_dims;
    (void)o, (void)nb_in, (void)out_dims;
    if (in_dims[0].nb_dims != 1 || n < 0 || in_values[1].nb_dims < 0)
        return PRT_OK;
    for (int32_t k = 0; k < in_values[1].nb_dims; k++) {
        int64_t i;
        if (!eb->is_constant(eb, in_values[1].d[k], &i))
            return PRT_OK;
        if (i < -n || i >= n)
            return op_fail(o, PRT_ERR_SHAPE, "index %lld is out of range for %d values",
                           (long long)i, (int)n);
        out_values->d[k] = in_values[0].d[i < 0 ? i + n : i];
    }
    out_values->nb_dims = in_values[1].nb_dims;
    return PRT_OK;
}

static prt_status gather_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    void *y = ys[0];
    int32_t axis = 0;
    int64_t outer = 1, inner = 1, d, ni = base_volume(&in[1].dims);
    size_t es = prt_dtype_size(dtype);
    (void)nb_in, (void)out, (void)ws;
    gather_axis(o, in[0].dims.nb_dims, in[1].dims.nb_dims, &axis);
    d = in[0].dims.d[axis];
    for (int32_t i = 0; i < axis; i++)
        outer *= in[0].dims.d[i];
    for (int32_t i = axis + 1; i < in[0].dims.nb_dims; i++)
        inner *= in[0].dims.d[i];
    for (int64_t k = 0; k < ni; k++) {
        int64_t i = op_int_at(x[1], in[1].dtype, k);
        if (i < -d || i >= d)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "index %lld (element %lld) is out of range for an "
                           "axis of size %lld",
                           (long long)i, (long long)k, (long long)d);
    }
    for (int64_t b = 0; b < outer; b++)
        for (int64_t k = 0; k < ni; k++) {
            int64_t i = op_int_at(x[1], in[1].dtype, k);
            i = i < 0 ? i + d : i;
            memcpy((uint8_t *)y + (size_t)((b * ni + k) * inner) * es,
                   (const uint8_t *)x[0] + (size_t)((b * d + i) * inner) * es,
                   (size_t)inner * es);
        }
    return PRT_OK;
}

static uint32_t gather_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT_INDEX;
}

static const op_class gather_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(gather_op),
    .alias_input = -1,
    .parse = gather_parse,
    .serialize = gather_serialize,
    .shapes = gather_shapes,
    .infer = gather_infer,
    .run = gather_run,
    .in_dtypes = gather_in_dtypes,
    .values = gather_values,
};

static const prt_field_schema gather_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the data axis to index, default 0; -r to r-1"},
};

const prt_plugin_creator op_gather_creator =
    OP_CREATOR("Gather", gather_class, gather_schema, 1);

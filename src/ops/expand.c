/*
 * Expand (namespace "plugrt", version "1"), ONNX opset 13 semantics: input
 * data (any dtype), shape input `shape`. The output dims are the
 * multidirectional broadcast of the data's dims and the shape's values
 * (op_broadcast_exprs: a shape value of 1 keeps the data's dim, so the
 * output may be larger than `shape` says, as ONNX wants). The run checks
 * that the data broadcasts to the output's dims, then copies as Tile does
 * (op_tile_copy: each input run once, repeated by doubling).
 *
 * Values: data values broadcast to an output of static size <= 8.
 */
#include <string.h>

#include "ops/shape_ops.h"

static prt_status expand_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in, (void)nb_sv;
    if (sv[0].nb_dims > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "the shape has %d values (max %d)",
                       (int)sv[0].nb_dims, PRT_MAX_DIMS);
    return op_broadcast_exprs(o, eb, &in[0], &sv[0], out, "the input and the shape");
}

/* Index into `in` (broadcast, right-aligned) of output element `lin`. */
static int64_t bcast_index(const prt_dims *in, const prt_dims *out, int64_t lin)
{
    int64_t idx = 0, stride = 1;
    int32_t off = out->nb_dims - in->nb_dims;
    for (int32_t d = out->nb_dims - 1; d >= 0; d--) {
        int64_t c = lin % out->d[d];
        lin /= out->d[d];
        if (d >= off) {
            int64_t n = in->d[d - off];
            idx += (n == 1 ? 0 : c) * stride;
            stride *= n;
        }
    }
    return idx;
}

static prt_status expand_values(op_object *o, const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *in_values, int32_t nb_in,
                                const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                                prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims);
    prt_dims id, od;
    (void)o, (void)nb_in;
    if (n < 0 || in_values[0].nb_dims < 0 || op_static_count(eb, &in_dims[0]) < 0)
        return PRT_OK;
    id.nb_dims = in_dims[0].nb_dims;
    od.nb_dims = out_dims->nb_dims;
    for (int32_t d = 0; d < id.nb_dims; d++)
        eb->is_constant(eb, in_dims[0].d[d], &id.d[d]);
    for (int32_t d = 0; d < od.nb_dims; d++)
        eb->is_constant(eb, out_dims->d[d], &od.d[d]);
    for (int32_t i = 0; i < n; i++)
        out_values->d[i] = in_values[0].d[bcast_index(&id, &od, i)];
    out_values->nb_dims = n;
    return PRT_OK;
}

/* The input broadcasts to the output's dims. */
prt_status expand_check(const op_object *o, const prt_dims *id, const prt_dims *od)
{
    int32_t off = od->nb_dims - id->nb_dims;
    char a[128], b[128];
    for (int32_t d = 0; off >= 0 && d < id->nb_dims; d++)
        if (id->d[d] != 1 && id->d[d] != od->d[d + off])
            off = -1;
    if (off >= 0)
        return PRT_OK;
    return op_fail(o, PRT_ERR_SHAPE, "the input dims %s do not broadcast to %s",
                   base_dims_format(id, BASE_DIMS_LIST, a, sizeof a),
                   base_dims_format(od, BASE_DIMS_LIST, b, sizeof b));
}

static prt_status expand_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    const prt_dims *od = &out->dims;
    prt_dims id = {od->nb_dims, {0}};
    int32_t off = od->nb_dims - in[0].dims.nb_dims;
    prt_status st = expand_check(o, &in[0].dims, od);
    (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (st)
        return st;
    /* A broadcast is a tiling of the input's dims, right-aligned with 1s
     * before: each dim of 1 repeats to the output's. */
    for (int32_t d = 0; d < od->nb_dims; d++)
        id.d[d] = d < off ? 1 : in[0].dims.d[d - off];
    op_tile_copy(&id, od, x[0], ys[0], prt_dtype_size(dtype));
    return PRT_OK;
}

static const op_class expand_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(op_object),
    .alias_input = -1,
    .run = expand_run,
    .min_shape_inputs = 1,
    .max_shape_inputs = 1,
    .shapes_sv = expand_shapes,
    .values = expand_values,
};

const prt_plugin_creator op_expand_creator = OP_CREATOR("Expand", expand_class, NULL, 0);

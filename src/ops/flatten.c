/*
 * Flatten (namespace "plugrt", version "1"), ONNX opset 13 semantics. Any
 * dtype.
 *
 * Field axis (int32, default 1; int64 accepted), in [-r, r] for an input of
 * rank r, negative counting from the end. Output [d0 * ... * d(axis-1),
 * d(axis) * ... * d(r-1)]: always 2-D, an empty product being 1 (axis 0
 * gives [1, volume], axis r gives [volume, 1]; a scalar gives [1, 1]).
 *
 * The bytes are the input's: a view (op_class.view), so the builder gives
 * the output the input's memory where it can and the run copies only when
 * they are apart.
 */
#include <string.h>

#include "ops/op_common.h"

typedef struct flatten_op {
    op_object o;
    int32_t axis;
} flatten_op;

static prt_status flatten_parse(op_object *o, const op_fields *f)
{
    return op_field_i32(f, "axis", 1, &((flatten_op *)o)->axis);
}

static int32_t flatten_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &((flatten_op *)o)->axis, 1);
    return 1;
}

/* The axis for rank r, in [0, r]. */
static prt_status flatten_axis(const op_object *o, int32_t r, int32_t *out)
{
    return op_axis(o, ((const flatten_op *)o)->axis, r, 1, "an input", out);
}

static prt_status flatten_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                 prt_dim_exprs *out, prt_expr_builder *eb)
{
    const prt_expr *p[2];
    int32_t axis = 0;
    prt_status st = flatten_axis(o, in[0].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    p[0] = p[1] = eb->constant(eb, 1);
    for (int32_t i = 0; i < in[0].nb_dims; i++)
        p[i >= axis] = eb->operation(eb, PRT_DIM_PROD, p[i >= axis], in[0].d[i]);
    out->nb_dims = 2;
    out->d[0] = p[0];
    out->d[1] = p[1];
    return PRT_OK;
}

static prt_status flatten_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                                prt_dims *out)
{
    int32_t axis = 0;
    prt_status st = flatten_axis(o, in[0].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    out->nb_dims = 2;
    out->d[0] = out->d[1] = 1;
    for (int32_t i = 0; i < in[0].nb_dims; i++)
        if (!base_mul_i64(out->d[i >= axis], in[0].d[i], &out->d[i >= axis]))
            return op_fail(o, PRT_ERR_SHAPE, "the output dims overflow");
    return PRT_OK;
}

static prt_status flatten_run(const op_object *o, int32_t dtype,
                              const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out,
                              const void *const *x, void *const *ys, void *ws,
                              void *stream)
{
    void *y = ys[0];
    (void)o, (void)nb_in, (void)out, (void)ws;
    if (x[0] != y)
        memmove(y, x[0], prt_dtype_size(dtype) * (size_t)base_volume(&in[0].dims));
    return PRT_OK;
}

static const op_class flatten_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(flatten_op),
    .alias_input = -1, /* the dims differ: a view instead */
    .view = 1,
    .parse = flatten_parse,
    .serialize = flatten_serialize,
    .shapes = flatten_shapes,
    .infer = flatten_infer,
    .run = flatten_run,
};

static const prt_field_schema flatten_schema[] = {
    {"axis", PRT_FIELD_INT32, 1,
     "dims before it make the output's first dim, default 1; -r to r"},
};

const prt_plugin_creator op_flatten_creator =
    OP_CREATOR("Flatten", flatten_class, flatten_schema, 1);

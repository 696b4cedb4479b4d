/*
 * Shape (namespace "plugrt", version "1"), ONNX opset 15 semantics (opset 1
 * to 14 is the same without start/end). Any input dtype; the output is the
 * 1-D int64 tensor of the input's dims.
 *
 * Fields start (int32, default 0) and end (int32, default: the rank), as
 * ONNX: negative counts from the end, both are clamped to [0, rank], and
 * end <= start gives an empty output. The output's values are the input's
 * dim expressions (a shape tensor), so Shape is where shape arithmetic
 * starts.
 *
 * Size (namespace "plugrt", version "1"), ONNX opset 13 semantics (1 to 12
 * the same): any input dtype; the output is a 0-D int64 holding the
 * input's element count, whose value (the product of the dim expressions)
 * is stated, so a Size folds at build time when the dims are static.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct shape_op {
    op_object o;
    int32_t start;
    int32_t end;
    int32_t has_end;
} shape_op;

static prt_status shape_parse(op_object *o, const op_fields *f)
{
    shape_op *s = (shape_op *)o;
    int32_t end[1], len;
    prt_status st = op_field_i32(f, "start", 0, &s->start);
    if (!st)
        st = op_field_i32_array(f, "end", end, 1, &len);
    if (!st && len == 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'end' must hold one value");
    s->has_end = len == 1;
    s->end = s->has_end ? end[0] : 0;
    return st;
}

static int32_t shape_serialize(op_object *o, prt_field *ser)
{
    shape_op *s = (shape_op *)o;
    op_ser(&ser[0], "start", PRT_FIELD_INT32, &s->start, 1);
    if (!s->has_end)
        return 1;
    op_ser(&ser[1], "end", PRT_FIELD_INT32, &s->end, 1);
    return 2;
}

/* [*b, *e) of dims for rank r. */
void shape_range(const op_object *o, int32_t r, int32_t *b, int32_t *e)
{
    const shape_op *s = (const shape_op *)o;
    int64_t lo = s->start, hi = s->has_end ? s->end : r;
    lo = lo < 0 ? lo + r : lo;
    hi = hi < 0 ? hi + r : hi;
    lo = lo < 0 ? 0 : lo > r ? r : lo;
    hi = hi < 0 ? 0 : hi > r ? r : hi;
    *b = (int32_t)lo;
    *e = (int32_t)(hi < lo ? lo : hi);
}

static prt_status shape_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t b, e;
    (void)nb_in;
    shape_range(o, in[0].nb_dims, &b, &e);
    out->nb_dims = 1;
    out->d[0] = eb->constant(eb, e - b);
    return PRT_OK;
}

static prt_status shape_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    int32_t b, e;
    (void)nb_in;
    shape_range(o, in[0].nb_dims, &b, &e);
    out->nb_dims = 1;
    out->d[0] = e - b;
    return PRT_OK;
}

static prt_status shape_values(op_object *o, const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *in_values, int32_t nb_in,
                               const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                               prt_expr_builder *eb)
{
    int32_t b, e;
    (void)in_values, (void)nb_in, (void)out_dims, (void)eb;
    shape_range(o, in_dims[0].nb_dims, &b, &e);
    out_values->nb_dims = e - b;
    for (int32_t i = b; i < e; i++)
        out_values->d[i - b] = in_dims[0].d[i];
    return PRT_OK;
}

static prt_status shape_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int32_t b, e;
    (void)dtype, (void)nb_in, (void)out, (void)x, (void)ws;
    shape_range(o, in[0].dims.nb_dims, &b, &e);
    for (int32_t i = b; i < e; i++)
        ((int64_t *)y)[i - b] = in[0].dims.d[i];
    return PRT_OK;
}

static int32_t shape_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)types, (void)nb_in;
    return PRT_INT64;
}

static const op_class shape_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(shape_op),
    .alias_input = -1,
    .parse = shape_parse,
    .serialize = shape_serialize,
    .shapes = shape_shapes,
    .infer = shape_infer,
    .run = shape_run,
    .out_dtype = shape_out_dtype,
    .values = shape_values,
};

static const prt_field_schema shape_schema[] = {
    {"start", PRT_FIELD_INT32, 1, "first dim, default 0; negative from the end"},
    {"end", PRT_FIELD_INT32, 1, "one past the last dim, default the rank"},
};

const prt_plugin_creator op_shape_creator =
    OP_CREATOR("Shape", shape_class, shape_schema, 2);

/* ---- Size ----------------------------------------------------------------- */

static prt_status size_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)o, (void)in, (void)nb_in, (void)eb;
    out->nb_dims = 0;
    return PRT_OK;
}

static prt_status size_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    (void)o, (void)in, (void)nb_in;
    out->nb_dims = 0;
    return PRT_OK;
}

static prt_status size_values(op_object *o, const prt_dim_exprs *in_dims,
                              const prt_dim_exprs *in_values, int32_t nb_in,
                              const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                              prt_expr_builder *eb)
{
    const prt_expr *n = eb->constant(eb, 1);
    (void)o, (void)in_values, (void)nb_in, (void)out_dims;
    for (int32_t i = 0; i < in_dims[0].nb_dims; i++)
        n = eb->operation(eb, PRT_DIM_PROD, n, in_dims[0].d[i]);
    out_values->nb_dims = 1;
    out_values->d[0] = n;
    return PRT_OK;
}

static prt_status size_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int64_t n = base_volume(&in[0].dims);
    (void)o, (void)dtype, (void)nb_in, (void)out, (void)x, (void)ws, (void)stream;
    memcpy(y, &n, sizeof n);
    return PRT_OK;
}

static const op_class size_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = size_shapes,
    .infer = size_infer,
    .run = size_run,
    .out_dtype = shape_out_dtype,
    .values = size_values,
};

const prt_plugin_creator op_size_creator = OP_CREATOR("Size", size_class, NULL, 0);

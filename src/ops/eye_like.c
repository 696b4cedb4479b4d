/*
 * EyeLike (namespace "plugrt", version "1"), ONNX opset 9: a 2-D output of
 * the input's dims (any dtype; only the dims are read) that is 1 on the
 * k-th diagonal (positive above the main one) and 0 elsewhere.
 *
 * Fields k (int32, default 0) and dtype (int32, a prt_dtype; default the
 * input's; the importer converts ONNX's element type).
 */
#include <string.h>

#include "ops/op_elem.h"
#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct eye_op {
    op_object o;
    int32_t k;
    int32_t dtype; /* -1: the input's */
} eye_op;

static prt_status eye_parse(op_object *o, const op_fields *f)
{
    eye_op *e = (eye_op *)o;
    prt_status st = op_field_i32(f, "k", 0, &e->k);
    if (!st)
        st = op_field_i32(f, "dtype", -1, &e->dtype);
    if (!st && (e->dtype < -1 || e->dtype >= PRT_DTYPE_COUNT))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'dtype' is %d, not a prt_dtype", (int)e->dtype);
    return st;
}

static int32_t eye_serialize(op_object *o, prt_field *ser)
{
    eye_op *e = (eye_op *)o;
    op_ser(&ser[0], "k", PRT_FIELD_INT32, &e->k, 1);
    if (e->dtype < 0)
        return 1;
    op_ser(&ser[1], "dtype", PRT_FIELD_INT32, &e->dtype, 1);
    return 2;
}

static prt_status eye_rank(const op_object *o, int32_t r)
{
    if (r != 2)
        return op_fail(o, PRT_ERR_SHAPE, "the input has rank %d; it must be 2", (int)r);
    return PRT_OK;
}

static prt_status eye_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in, (void)eb;
    *out = in[0];
    return eye_rank(o, in[0].nb_dims);
}

static prt_status eye_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    (void)nb_in;
    *out = in[0];
    return eye_rank(o, in[0].nb_dims);
}

static int32_t eye_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    int32_t dt = ((const eye_op *)o)->dtype;
    return dt >= 0 ? dt : nb_in > 0 ? types[0] : -1;
}

int64_t eye_like_k(const op_object *o)
{
    return ((const eye_op *)o)->k;
}

void eye_like_one(int32_t dtype, uint8_t one[8])
{
    const float f1 = 1.0f;
    memset(one, 0, 8);
    if (dtype == PRT_FLOAT32)
        memcpy(one, &f1, 4);
    else
        opk_cast_at(PRT_FLOAT32, dtype, &f1, one, 0);
}

static prt_status eye_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int64_t rows = out->dims.d[0], cols = out->dims.d[1], k = eye_like_k(o);
    size_t es = prt_dtype_size(out->dtype);
    uint8_t one[8];
    (void)dtype, (void)in, (void)nb_in, (void)nb_out, (void)x, (void)ws, (void)stream;
    eye_like_one(out->dtype, one);
    memset(y, 0, (size_t)(rows * cols) * es);
    for (int64_t i = 0; i < rows; i++)
        if (i + k >= 0 && i + k < cols)
            memcpy((uint8_t *)y + (size_t)(i * cols + i + k) * es, one, es);
    return PRT_OK;
}

static const op_class eye_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_NO_FP8 | OP_DT_WIDE,
    .size = sizeof(eye_op),
    .alias_input = -1,
    .parse = eye_parse,
    .serialize = eye_serialize,
    .shapes = eye_shapes,
    .infer = eye_infer,
    .run = eye_run,
    .out_dtype = eye_out_dtype,
};

static const prt_field_schema eye_schema[] = {
    {"k", PRT_FIELD_INT32, 1, "the diagonal, default 0; positive above the main one"},
    {"dtype", PRT_FIELD_INT32, 1, "the output's prt_dtype, default the input's"},
};

const prt_plugin_creator op_eye_like_creator =
    OP_CREATOR("EyeLike", eye_class, eye_schema, 2);

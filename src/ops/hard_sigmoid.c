/*
 * HardSigmoid and HardSwish (namespace "plugrt", version "1"), ONNX opset 6+
 * and 14+ semantics. float32, float16, bfloat16; the output has the input's
 * dims.
 *
 * HardSigmoid: y = max(0, min(1, alpha * x + beta)).
 *   Fields (ONNX attribute names): alpha float32, default 0.2;
 *                                  beta  float32, default 0.5.
 * HardSwish: y = x * max(0, min(1, x / 6 + 0.5)) (alpha 1/6 and beta 0.5
 *   fixed by ONNX). No fields.
 *
 * The clamp lets NaN through (as numpy.clip and ONNX's reference do), so NaN
 * gives NaN; HardSwish(-inf) is -inf * 0 = NaN, as in the reference. Half
 * floats compute in float32 and round once.
 */
#include "ops/op_common.h"

enum { HARD_SIGMOID, HARD_SWISH };

typedef struct hard_op {
    op_object o;
    float alpha, beta;
} hard_op;

static prt_status hard_parse(op_object *o, const op_fields *f)
{
    hard_op *h = (hard_op *)o;
    prt_status st = op_field_f32(f, "alpha", 0.2f, &h->alpha);
    if (!st)
        st = op_field_f32(f, "beta", 0.5f, &h->beta);
    return st;
}

static int32_t hard_serialize(op_object *o, prt_field *ser)
{
    hard_op *h = (hard_op *)o;
    op_ser(&ser[0], "alpha", PRT_FIELD_FLOAT32, &h->alpha, 1);
    op_ser(&ser[1], "beta", PRT_FIELD_FLOAT32, &h->beta, 1);
    return 2;
}

static prt_status hard_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)o, (void)nb_in, (void)eb;
    *out = in[0];
    return PRT_OK;
}

static prt_status hard_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    (void)o, (void)nb_in;
    *out = in[0];
    return PRT_OK;
}

/* One element. Comparisons are false for NaN, which passes through. */
static float hard_one(int32_t kind, float alpha, float beta, float x)
{
    float v = alpha * x + beta;
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return kind == HARD_SWISH ? x * v : v;
}

static prt_status hard_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out,
                           const void *const *xs, void *y, void *ws, void *stream)
{
    const int32_t kind = o->cls->kind;
    /* ONNX fixes HardSwish's alpha at 1/6, beta at 1/2. */
    const float alpha = kind == HARD_SWISH ? 1.0f / 6.0f : ((const hard_op *)o)->alpha;
    const float beta = kind == HARD_SWISH ? 0.5f : ((const hard_op *)o)->beta;
    int64_t n = base_volume(&in[0].dims);
    (void)nb_in, (void)out, (void)ws;
    if (dtype == PRT_FLOAT32) {
        const float *x = xs[0];
        float *yf = y;
        for (int64_t i = 0; i < n; i++)
            yf[i] = hard_one(kind, alpha, beta, x[i]);
    } else if (dtype == PRT_FLOAT16) {
        const uint16_t *x = xs[0];
        uint16_t *yh = y;
        for (int64_t i = 0; i < n; i++)
            yh[i] =
                prt_float_to_half(hard_one(kind, alpha, beta, prt_half_to_float(x[i])));
    } else if (dtype == PRT_BFLOAT16) {
        const uint16_t *x = xs[0];
        uint16_t *yh = y;
        for (int64_t i = 0; i < n; i++)
            yh[i] =
                prt_float_to_bf16(hard_one(kind, alpha, beta, prt_bf16_to_float(x[i])));
    } else {
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    return PRT_OK;
}

static const op_class hard_sigmoid_class = {
    .kind = HARD_SIGMOID,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(hard_op),
    .alias_input = -1,
    .parse = hard_parse,
    .serialize = hard_serialize,
    .shapes = hard_shapes,
    .infer = hard_infer,
    .run = {[PRT_DEVICE_CPU] = hard_run},
};

static const op_class hard_swish_class = {
    .kind = HARD_SWISH,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(hard_op),
    .alias_input = -1,
    .shapes = hard_shapes,
    .infer = hard_infer,
    .run = {[PRT_DEVICE_CPU] = hard_run},
};

static const prt_field_schema hard_sigmoid_schema[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "slope, default 0.2"},
    {"beta", PRT_FIELD_FLOAT32, 1, "offset, default 0.5"},
};

const prt_plugin_creator op_hard_sigmoid_creator =
    OP_CREATOR("HardSigmoid", hard_sigmoid_class, hard_sigmoid_schema,
               (int32_t)(sizeof hard_sigmoid_schema / sizeof hard_sigmoid_schema[0]));
const prt_plugin_creator op_hard_swish_creator =
    OP_CREATOR("HardSwish", hard_swish_class, NULL, 0);

/*
 * Shrink (namespace "plugrt", version "1"), ONNX opset 9: elementwise
 *
 *   y = x < -lambd ? x + bias : x > lambd ? x - bias : 0
 *
 * over every numeric dtype (float32, float16, bfloat16, int8, uint8,
 * int32, int64); y has x's dims and dtype. Floats are computed in float32
 * (NaN compares false both ways, so it gives 0, as numpy's where does);
 * integers in double (ONNX's reference adds the float attribute to the
 * integer), the result truncated toward zero and wrapped to the dtype.
 *
 * Fields: lambd (default 0.5), bias (default 0.0), both float.
 */
#include <math.h>

#include "base/fp16.h"
#include "ops/ops_data.h"

typedef struct shrink_op {
    op_object o;
    float lambd, bias;
} shrink_op;

static prt_status shrink_parse(op_object *o, const op_fields *f)
{
    shrink_op *s = (shrink_op *)o;
    prt_status st = op_field_f32(f, "lambd", 0.5f, &s->lambd);
    if (!st)
        st = op_field_f32(f, "bias", 0.0f, &s->bias);
    return st;
}

static int32_t shrink_serialize(op_object *o, prt_field *ser)
{
    shrink_op *s = (shrink_op *)o;
    op_ser(&ser[0], "lambd", PRT_FIELD_FLOAT32, &s->lambd, 1);
    op_ser(&ser[1], "bias", PRT_FIELD_FLOAT32, &s->bias, 1);
    return 2;
}

static prt_status shrink_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)o, (void)nb_in, (void)eb;
    *out = in[0];
    return PRT_OK;
}

static prt_status shrink_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    (void)o, (void)nb_in;
    *out = in[0];
    return PRT_OK;
}

void shrink_params(const op_object *o, float *lambd, float *bias)
{
    *lambd = ((const shrink_op *)o)->lambd;
    *bias = ((const shrink_op *)o)->bias;
}

/* An integer's result: v in double, truncated and wrapped (int64_t to the
 * narrower type by the usual conversion, which wraps modulo 2^n). Values
 * beyond int64's range saturate there rather than being undefined. */
static int64_t shrink_int(double v, double lambd, double bias)
{
    double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if (!(r > -9.2233720368547758e18))
        return INT64_MIN;
    if (r >= 9.2233720368547758e18)
        return INT64_MAX;
    return (int64_t)r;
}

static prt_status shrink_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    const shrink_op *s = (const shrink_op *)o;
    int64_t n = base_volume(&in[0].dims);
    float l = s->lambd, b = s->bias;
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    for (int64_t i = 0; i < n; i++) {
        float v;
        switch (dtype) {
        case PRT_FLOAT32:
        case PRT_FLOAT16:
        case PRT_BFLOAT16:
            v = dtype == PRT_FLOAT32   ? ((const float *)x[0])[i]
                : dtype == PRT_FLOAT16 ? base_h2f(((const uint16_t *)x[0])[i])
                                       : base_bf2f(((const uint16_t *)x[0])[i]);
            v = v < -l ? v + b : v > l ? v - b : 0.0f;
            if (dtype == PRT_FLOAT32)
                ((float *)ys[0])[i] = v;
            else if (dtype == PRT_FLOAT16)
                ((uint16_t *)ys[0])[i] = base_f2h(v);
            else
                ((uint16_t *)ys[0])[i] = base_f2bf(v);
            break;
        case PRT_INT8:
            ((int8_t *)ys[0])[i] = (int8_t)shrink_int(((const int8_t *)x[0])[i], l, b);
            break;
        case PRT_UINT8:
            ((uint8_t *)ys[0])[i] = (uint8_t)shrink_int(((const uint8_t *)x[0])[i], l, b);
            break;
        case PRT_INT32:
            ((int32_t *)ys[0])[i] = (int32_t)shrink_int(((const int32_t *)x[0])[i], l, b);
            break;
        default: /* PRT_INT64 */
            ((int64_t *)ys[0])[i] = shrink_int((double)((const int64_t *)x[0])[i], l, b);
            break;
        }
    }
    return PRT_OK;
}

static const op_class shrink_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) |
              OP_DT(PRT_INT32) | OP_DT(PRT_INT64),
    .size = sizeof(shrink_op),
    .alias_input = 0,
    .parse = shrink_parse,
    .serialize = shrink_serialize,
    .shapes = shrink_shapes,
    .infer = shrink_infer,
    .run = shrink_run,
};

static const prt_field_schema shrink_schema[] = {
    {"lambd", PRT_FIELD_FLOAT32, 1, "the band [-lambd, lambd] set to 0, default 0.5"},
    {"bias", PRT_FIELD_FLOAT32, 1, "subtracted above the band, added below; default 0"},
};

const prt_plugin_creator op_shrink_creator =
    OP_CREATOR("Shrink", shrink_class, shrink_schema, 2);

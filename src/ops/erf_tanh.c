/*
 * Erf and Tanh (namespace "plugrt", version "1"), ONNX opset 13 semantics.
 * No fields. float32, float16, bfloat16; the output has the input's dims.
 *
 * y = erff(x) and y = tanhf(x) from libm, so the results are libm's (within
 * an ulp or two of the exact value); NaN gives NaN, +-inf gives +-1. Half
 * floats compute in float32 and round once.
 */
#include <math.h>

#include "ops/math_ops.h"

enum { MATH_ERF, MATH_TANH };

static prt_status ew_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)o, (void)nb_in, (void)eb;
    *out = in[0];
    return PRT_OK;
}

static prt_status ew_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    (void)o, (void)nb_in;
    *out = in[0];
    return PRT_OK;
}

static float ew_one(int32_t kind, float x)
{
    return kind == MATH_ERF ? erff(x) : tanhf(x);
}

static prt_status ew_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, const void *const *xs,
                         void *y, void *ws, void *stream)
{
    const int32_t kind = o->cls->kind;
    int64_t n = base_volume(&in[0].dims);
    (void)nb_in, (void)out, (void)ws;
    if (dtype == PRT_FLOAT32) {
        const float *x = xs[0];
        float *yf = y;
        /* Two loops so each is a plain call the compiler can vectorize. */
        if (kind == MATH_ERF)
            for (int64_t i = 0; i < n; i++)
                yf[i] = erff(x[i]);
        else
            for (int64_t i = 0; i < n; i++)
                yf[i] = tanhf(x[i]);
    } else if (dtype == PRT_FLOAT16) {
        const uint16_t *x = xs[0];
        uint16_t *yh = y;
        for (int64_t i = 0; i < n; i++)
            yh[i] = prt_float_to_half(ew_one(kind, prt_half_to_float(x[i])));
    } else if (dtype == PRT_BFLOAT16) {
        const uint16_t *x = xs[0];
        uint16_t *yh = y;
        for (int64_t i = 0; i < n; i++)
            yh[i] = prt_float_to_bf16(ew_one(kind, prt_bf16_to_float(x[i])));
    } else {
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    return PRT_OK;
}

#define EW_CLASS(k)                                                                      \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1,                                   \
        .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16), .size = sizeof(op_object),          \
        .alias_input = -1, .shapes = ew_shapes, .infer = ew_infer,                       \
        .run = {[PRT_DEVICE_CPU] = ew_run},                                              \
    }

static const op_class erf_class = EW_CLASS(MATH_ERF);
static const op_class tanh_class = EW_CLASS(MATH_TANH);

const prt_plugin_creator op_erf_creator = OP_CREATOR("Erf", erf_class, NULL, 0);
const prt_plugin_creator op_tanh_creator = OP_CREATOR("Tanh", tanh_class, NULL, 0);

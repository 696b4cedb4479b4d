/*
 * The float functions of one input (namespace "plugrt", version "1"),
 * ONNX semantics of opsets 6 to 20. float32, float16, bfloat16, float64; the
 * output has the input's dims and dtype. Half floats compute in float32 and
 * round once; float64 in double with libm's double functions (Sigmoid, Gelu
 * and Tanh too, by their definitions). float32 calls libm's float functions, so results
 * are libm's (within an ulp or two of the exact value), but for Sigmoid and Gelu, which
 * are vector kernels of their own (cpu_kernels.h), within 2.4 ulp (as the libm loop it
 * replaced) and 5e-7 relative. NaN gives NaN but for ThresholdedRelu.
 *
 *   Exp Log Sqrt Reciprocal Floor Ceil Sin Cos Tan Asin Acos Atan Sinh Cosh
 *   Asinh Acosh Atanh Erf: the libm function (Reciprocal 1 / x; out of
 *   the domain NaN, at a pole +-inf, as libm and numpy).
 *   Tanh by op_tanh_f32 (cpu_kernels.h: vectors; tanh.c gives its error).
 *   Round: to nearest, halves to even (rintf in the default rounding mode).
 *   Sigmoid 1 / (1 + e^-x), by op_sigmoid_f32 (cpu_kernels.h: vectors,
 *   1 / (1 + e) or e / (1 + e) with e = e^-|x|, which never overflows;
 *   within 2.4 ulp, subnormal below -87 as the exact value, 0 past -104);
 *   Softplus ln(1 + e^x) = max(x, 0) + log1p(e^-|x|); Softsign x / (1 + |x|);
 *   Mish x * tanh(softplus(x)).
 *   Gelu (opset 20), field approximate "none" (default):
 *   x / 2 * (1 + erf(x / sqrt 2)), by op_gelu_f32 (cpu_kernels.h: vectors,
 *   within 5e-7 relative, and exact where x is very negative, where
 *   1 + erff cancels); "tanh": x / 2 * (1 + tanh(sqrt(2 / pi) *
 *   (x + 0.044715 x^3))), by op_gelu_tanh_f32 (tanh.c: in one pass, the
 *   tanh op_tanh_f32's). Another value fails naming it.
 *   Elu (alpha 1): x < 0 ? alpha * (e^x - 1) : x.
 *   Selu (alpha 1.67326..., gamma 1.05070...): gamma * (x <= 0 ? alpha *
 *   (e^x - 1) : x).
 *   Celu (alpha 1, not 0): max(0, x) + min(0, alpha * (e^(x / alpha) - 1)).
 *   LeakyRelu (alpha 0.01): x < 0 ? alpha * x : x.
 *   ThresholdedRelu (alpha 1): x > alpha ? x : 0 (so NaN gives 0, as in
 *   ONNX's reference).
 *   HardSigmoid (alpha 0.2, beta 0.5): max(0, min(1, alpha * x + beta)).
 *   HardSwish: x * HardSigmoid(x) with alpha 1/6, beta 1/2 (fixed by ONNX).
 *   The clamps let NaN through (as numpy.clip and ONNX's reference), so
 *   HardSwish(-inf) = -inf * 0 = NaN, as in the reference.
 * Fields carry the ONNX attribute names (alpha, beta, gamma float32,
 * approximate a string); e^x - 1 is expm1f.
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ew_kinds.h"
#include "ops/math_ops.h"
#include "ops/ops_ew.h"

/* The defaults of alpha, beta and gamma, by kind (ONNX's). */
static const float um_defaults[UM_COUNT][3] = {
    [UM_ELU] = {1.0f, 0, 0},
    [UM_SELU] = {1.67326319217681884765625f, 0, 1.05070102214813232421875f},
    [UM_CELU] = {1.0f, 0, 0},
    [UM_LEAKY_RELU] = {0.01f, 0, 0},
    [UM_THRESHOLDED_RELU] = {1.0f, 0, 0},
    [UM_HARD_SIGMOID] = {0.2f, 0.5f, 0},
    /* ONNX fixes HardSwish's. */
    [UM_HARD_SWISH] = {1.0f / 6.0f, 0.5f, 0},
};

static const char *const gelu_modes[] = {"none", "tanh"};

static prt_status um_parse(op_object *o, const op_fields *f)
{
    um_op *u = (um_op *)o;
    const float *d = um_defaults[o->cls->kind];
    /* Fields outside the op's schema were refused before parse. */
    prt_status st = op_field_f32(f, "alpha", d[0], &u->alpha);
    if (!st)
        st = op_field_f32(f, "beta", d[1], &u->beta);
    if (!st)
        st = op_field_f32(f, "gamma", d[2], &u->gamma);
    if (!st)
        st = ew_field_choice(f, "approximate", gelu_modes, 2, 0, &u->approximate);
    if (!st && o->cls->kind == UM_CELU && u->alpha == 0.0f)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "alpha 0 is not supported (Celu divides by alpha)");
    return st;
}

/* The op's schema fields, pointing into the object. */
static int32_t um_serialize(op_object *o, prt_field *ser)
{
    um_op *u = (um_op *)o;
    const prt_plugin_creator *c = o->creator;
    int32_t n = 0;
    for (int32_t i = 0; i < c->nb_fields; i++) {
        const char *name = c->fields[i].name;
        if (strcmp(name, "approximate") == 0) {
            const char *s = gelu_modes[u->approximate];
            op_ser(&ser[n++], name, PRT_FIELD_CHAR, s, (int64_t)strlen(s));
            continue;
        }
        op_ser(&ser[n++], name, PRT_FIELD_FLOAT32,
               strcmp(name, "alpha") == 0  ? &u->alpha
               : strcmp(name, "beta") == 0 ? &u->beta
                                           : &u->gamma,
               1);
    }
    return n;
}

#define UM_LOOP(EXPR)                                                                    \
    for (int64_t i = 0; i < n; i++) {                                                    \
        const float v = x[i];                                                            \
        y[i] = (EXPR);                                                                   \
    }                                                                                    \
    break

static float softplus(float v)
{
    return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

/* y = f(x) over n floats; y may be x. */
static void um_f32(const um_op *u, int32_t kind, const float *x, float *y, int64_t n)
{
    const float a = u->alpha, b = u->beta, g = u->gamma;
    switch (kind) {
    case UM_EXP:
        UM_LOOP(expf(v));
    case UM_LOG:
        UM_LOOP(logf(v));
    case UM_SQRT:
        UM_LOOP(sqrtf(v));
    case UM_RECIPROCAL:
        UM_LOOP(1.0f / v);
    case UM_FLOOR:
        UM_LOOP(floorf(v));
    case UM_CEIL:
        UM_LOOP(ceilf(v));
    case UM_ROUND:
        UM_LOOP(rintf(v));
    case UM_SIN:
        UM_LOOP(sinf(v));
    case UM_COS:
        UM_LOOP(cosf(v));
    case UM_TAN:
        UM_LOOP(tanf(v));
    case UM_ASIN:
        UM_LOOP(asinf(v));
    case UM_ACOS:
        UM_LOOP(acosf(v));
    case UM_ATAN:
        UM_LOOP(atanf(v));
    case UM_SINH:
        UM_LOOP(sinhf(v));
    case UM_COSH:
        UM_LOOP(coshf(v));
    case UM_ASINH:
        UM_LOOP(asinhf(v));
    case UM_ACOSH:
        UM_LOOP(acoshf(v));
    case UM_ATANH:
        UM_LOOP(atanhf(v));
    case UM_TANH:
        op_tanh_f32(x, y, n);
        break;
    case UM_ERF:
        UM_LOOP(erff(v));
    case UM_SIGMOID:
        op_sigmoid_f32(x, y, n);
        break;
    case UM_SOFTPLUS:
        UM_LOOP(softplus(v));
    case UM_SOFTSIGN:
        UM_LOOP(v / (1.0f + fabsf(v)));
    case UM_MISH:
        UM_LOOP(v * tanhf(softplus(v)));
    case UM_GELU:
        if (u->approximate == 0)
            op_gelu_f32(x, y, n);
        else
            op_gelu_tanh_f32(x, y, n);
        break;
    case UM_ELU:
        UM_LOOP(v < 0.0f ? a * expm1f(v) : v);
    case UM_SELU:
        UM_LOOP(v <= 0.0f ? g * (a * expm1f(v)) : g * v);
    case UM_CELU:
        UM_LOOP(v != v ? v : fmaxf(v, 0.0f) + fminf(0.0f, a * expm1f(v / a)));
    case UM_LEAKY_RELU:
        UM_LOOP(v < 0.0f ? a * v : v);
    case UM_THRESHOLDED_RELU:
        UM_LOOP(v > a ? v : 0.0f);
    case UM_HARD_SIGMOID:
    case UM_HARD_SWISH:
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i];
            float h = a * v + b;
            /* Comparisons are false for NaN, which passes through. */
            h = h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
            y[i] = kind == UM_HARD_SWISH ? v * h : h;
        }
        break;
    default:
        break;
    }
}

static double softplus_d(double v)
{
    return v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

#define UMD_LOOP(EXPR)                                                                   \
    for (int64_t i = 0; i < n; i++) {                                                    \
        const double v = x[i];                                                           \
        y[i] = (EXPR);                                                                   \
    }                                                                                    \
    break

/* float64: the same functions in double (libm's), the fields widened. */
static void um_f64(const um_op *u, int32_t kind, const double *x, double *y, int64_t n)
{
    const double a = u->alpha, b = u->beta, g = u->gamma;
    switch (kind) {
    case UM_EXP:
        UMD_LOOP(exp(v));
    case UM_LOG:
        UMD_LOOP(log(v));
    case UM_SQRT:
        UMD_LOOP(sqrt(v));
    case UM_RECIPROCAL:
        UMD_LOOP(1.0 / v);
    case UM_FLOOR:
        UMD_LOOP(floor(v));
    case UM_CEIL:
        UMD_LOOP(ceil(v));
    case UM_ROUND:
        UMD_LOOP(rint(v));
    case UM_SIN:
        UMD_LOOP(sin(v));
    case UM_COS:
        UMD_LOOP(cos(v));
    case UM_TAN:
        UMD_LOOP(tan(v));
    case UM_ASIN:
        UMD_LOOP(asin(v));
    case UM_ACOS:
        UMD_LOOP(acos(v));
    case UM_ATAN:
        UMD_LOOP(atan(v));
    case UM_SINH:
        UMD_LOOP(sinh(v));
    case UM_COSH:
        UMD_LOOP(cosh(v));
    case UM_ASINH:
        UMD_LOOP(asinh(v));
    case UM_ACOSH:
        UMD_LOOP(acosh(v));
    case UM_ATANH:
        UMD_LOOP(atanh(v));
    case UM_TANH:
        UMD_LOOP(tanh(v));
    case UM_ERF:
        UMD_LOOP(erf(v));
    case UM_SIGMOID:
        UMD_LOOP(v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v)));
    case UM_SOFTPLUS:
        UMD_LOOP(softplus_d(v));
    case UM_SOFTSIGN:
        UMD_LOOP(v / (1.0 + fabs(v)));
    case UM_MISH:
        UMD_LOOP(v * tanh(softplus_d(v)));
    case UM_GELU:
        UMD_LOOP(u->approximate == 0 ? 0.5 * v * (1.0 + erf(v * 0.70710678118654752440))
                                     : 0.5 * v *
                                           (1.0 + tanh(0.79788456080286535588 *
                                                       (v + 0.044715 * v * v * v))));
    case UM_ELU:
        UMD_LOOP(v < 0.0 ? a * expm1(v) : v);
    case UM_SELU:
        UMD_LOOP(v <= 0.0 ? g * (a * expm1(v)) : g * v);
    case UM_CELU:
        UMD_LOOP(v != v ? v : fmax(v, 0.0) + fmin(0.0, a * expm1(v / a)));
    case UM_LEAKY_RELU:
        UMD_LOOP(v < 0.0 ? a * v : v);
    case UM_THRESHOLDED_RELU:
        UMD_LOOP(v > a ? v : 0.0);
    case UM_HARD_SIGMOID:
    case UM_HARD_SWISH:
        for (int64_t i = 0; i < n; i++) {
            const double v = x[i];
            double h = a * v + b;
            h = h < 0.0 ? 0.0 : h > 1.0 ? 1.0 : h;
            y[i] = kind == UM_HARD_SWISH ? v * h : h;
        }
        break;
    default:
        break;
    }
}

typedef struct um_job {
    const um_op *u;
    int32_t dtype;
    const void *x;
    void *y;
} um_job;

/* Elements [b, e), each computed alone (a half float through float32 and
 * rounded once), so any split gives the same bits. */
static void um_range(void *arg, int64_t b, int64_t e)
{
    const um_job *j = arg;
    const int32_t kind = j->u->o.cls->kind;
    if (j->dtype == PRT_FLOAT32) {
        um_f32(j->u, kind, (const float *)j->x + b, (float *)j->y + b, e - b);
        return;
    }
    if (j->dtype == PRT_FLOAT64) {
        um_f64(j->u, kind, (const double *)j->x + b, (double *)j->y + b, e - b);
        return;
    }
    for (int64_t i = b; i < e; i += EW_CHUNK) {
        float buf[EW_CHUNK];
        int64_t m = e - i < EW_CHUNK ? e - i : EW_CHUNK;
        ew_load_f32((const uint16_t *)j->x + i, j->dtype, 1, m, buf);
        um_f32(j->u, kind, buf, buf, m);
        op_from_f32(buf, j->dtype, m, (uint16_t *)j->y + i);
    }
}

/* The piecewise-linear ones and the roundings cost little more than a load
 * and a store, Sigmoid's vectors (0.23 ns an element, AVX-512) not much
 * more; the rest a libm call per element. */
static int64_t um_grain(int32_t kind)
{
    switch (kind) {
    case UM_RECIPROCAL:
    case UM_FLOOR:
    case UM_CEIL:
    case UM_ROUND:
    case UM_SOFTSIGN:
    case UM_LEAKY_RELU:
    case UM_THRESHOLDED_RELU:
    case UM_HARD_SIGMOID:
    case UM_HARD_SWISH:
    case UM_SIGMOID:
    case UM_TANH:
        return OP_GRAIN_SIMPLE;
    default:
        return OP_GRAIN_MATH;
    }
}

static prt_status um_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    um_job j = {(const um_op *)o, dtype, xs[0], y};
    int32_t kind = o->cls->kind;
    (void)nb_in, (void)out, (void)ws, (void)stream;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16 &&
        dtype != PRT_FLOAT64)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    base_parallel_for(base_volume(&in[0].dims), um_grain(kind), um_range, &j);
    return PRT_OK;
}

/* ---- classes, schemas, creators ------------------------------------------ */

#define UM_CLASS(k)                                                                      \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1,                                   \
        .dtypes = EW_DT_FLOATS | OP_DT(PRT_FLOAT64), .size = sizeof(um_op),              \
        .alias_input = -1, .parse = um_parse, .serialize = um_serialize,                 \
        .shapes = ew_same_shapes, .infer = ew_same_infer, .run = um_run,                 \
    }

static const op_class um_classes[UM_COUNT] = {
    UM_CLASS(UM_EXP),          UM_CLASS(UM_LOG),        UM_CLASS(UM_SQRT),
    UM_CLASS(UM_RECIPROCAL),   UM_CLASS(UM_FLOOR),      UM_CLASS(UM_CEIL),
    UM_CLASS(UM_ROUND),        UM_CLASS(UM_SIN),        UM_CLASS(UM_COS),
    UM_CLASS(UM_TAN),          UM_CLASS(UM_ASIN),       UM_CLASS(UM_ACOS),
    UM_CLASS(UM_ATAN),         UM_CLASS(UM_SINH),       UM_CLASS(UM_COSH),
    UM_CLASS(UM_ASINH),        UM_CLASS(UM_ACOSH),      UM_CLASS(UM_ATANH),
    UM_CLASS(UM_TANH),         UM_CLASS(UM_ERF),        UM_CLASS(UM_SIGMOID),
    UM_CLASS(UM_SOFTPLUS),     UM_CLASS(UM_SOFTSIGN),   UM_CLASS(UM_MISH),
    UM_CLASS(UM_GELU),         UM_CLASS(UM_ELU),        UM_CLASS(UM_SELU),
    UM_CLASS(UM_CELU),         UM_CLASS(UM_LEAKY_RELU), UM_CLASS(UM_THRESHOLDED_RELU),
    UM_CLASS(UM_HARD_SIGMOID), UM_CLASS(UM_HARD_SWISH),
};

static const prt_field_schema alpha_1[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "alpha, default 1"},
};
static const prt_field_schema leaky_schema[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "the slope below 0, default 0.01"},
};
static const prt_field_schema selu_schema[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "alpha, default 1.6732632"},
    {"gamma", PRT_FIELD_FLOAT32, 1, "gamma, default 1.0507010"},
};
static const prt_field_schema hard_sigmoid_schema[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "slope, default 0.2"},
    {"beta", PRT_FIELD_FLOAT32, 1, "offset, default 0.5"},
};
static const prt_field_schema gelu_schema[] = {
    {"approximate", PRT_FIELD_CHAR, -1, "\"none\" (default) or \"tanh\""},
};

#define UM_CREATOR(name, k) OP_CREATOR(name, um_classes[k], NULL, 0)
#define UM_CREATOR_F(name, k, schema)                                                    \
    OP_CREATOR(name, um_classes[k], schema, (int32_t)(sizeof schema / sizeof schema[0]))

const prt_plugin_creator op_exp_creator = UM_CREATOR("Exp", UM_EXP);
const prt_plugin_creator op_log_creator = UM_CREATOR("Log", UM_LOG);
const prt_plugin_creator op_sqrt_creator = UM_CREATOR("Sqrt", UM_SQRT);
const prt_plugin_creator op_reciprocal_creator = UM_CREATOR("Reciprocal", UM_RECIPROCAL);
const prt_plugin_creator op_floor_creator = UM_CREATOR("Floor", UM_FLOOR);
const prt_plugin_creator op_ceil_creator = UM_CREATOR("Ceil", UM_CEIL);
const prt_plugin_creator op_round_creator = UM_CREATOR("Round", UM_ROUND);
const prt_plugin_creator op_sin_creator = UM_CREATOR("Sin", UM_SIN);
const prt_plugin_creator op_cos_creator = UM_CREATOR("Cos", UM_COS);
const prt_plugin_creator op_tan_creator = UM_CREATOR("Tan", UM_TAN);
const prt_plugin_creator op_asin_creator = UM_CREATOR("Asin", UM_ASIN);
const prt_plugin_creator op_acos_creator = UM_CREATOR("Acos", UM_ACOS);
const prt_plugin_creator op_atan_creator = UM_CREATOR("Atan", UM_ATAN);
const prt_plugin_creator op_sinh_creator = UM_CREATOR("Sinh", UM_SINH);
const prt_plugin_creator op_cosh_creator = UM_CREATOR("Cosh", UM_COSH);
const prt_plugin_creator op_asinh_creator = UM_CREATOR("Asinh", UM_ASINH);
const prt_plugin_creator op_acosh_creator = UM_CREATOR("Acosh", UM_ACOSH);
const prt_plugin_creator op_atanh_creator = UM_CREATOR("Atanh", UM_ATANH);
const prt_plugin_creator op_tanh_creator = UM_CREATOR("Tanh", UM_TANH);
const prt_plugin_creator op_erf_creator = UM_CREATOR("Erf", UM_ERF);
const prt_plugin_creator op_sigmoid_creator = UM_CREATOR("Sigmoid", UM_SIGMOID);
const prt_plugin_creator op_softplus_creator = UM_CREATOR("Softplus", UM_SOFTPLUS);
const prt_plugin_creator op_softsign_creator = UM_CREATOR("Softsign", UM_SOFTSIGN);
const prt_plugin_creator op_mish_creator = UM_CREATOR("Mish", UM_MISH);
const prt_plugin_creator op_gelu_creator = UM_CREATOR_F("Gelu", UM_GELU, gelu_schema);
const prt_plugin_creator op_elu_creator = UM_CREATOR_F("Elu", UM_ELU, alpha_1);
const prt_plugin_creator op_selu_creator = UM_CREATOR_F("Selu", UM_SELU, selu_schema);
const prt_plugin_creator op_celu_creator = UM_CREATOR_F("Celu", UM_CELU, alpha_1);
const prt_plugin_creator op_leaky_relu_creator =
    UM_CREATOR_F("LeakyRelu", UM_LEAKY_RELU, leaky_schema);
const prt_plugin_creator op_thresholded_relu_creator =
    UM_CREATOR_F("ThresholdedRelu", UM_THRESHOLDED_RELU, alpha_1);
const prt_plugin_creator op_hard_sigmoid_creator =
    UM_CREATOR_F("HardSigmoid", UM_HARD_SIGMOID, hard_sigmoid_schema);
const prt_plugin_creator op_hard_swish_creator = UM_CREATOR("HardSwish", UM_HARD_SWISH);

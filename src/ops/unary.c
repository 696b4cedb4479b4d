/*
 * Relu, Identity, Abs, Neg, Sign (namespace "plugrt", version "1"). No
 * fields; the output has the input's dims and dtype.
 *
 * Relu: float32, float16, bfloat16, float64, int8, int16, int32, int64;
 * y = x < 0 ? 0 : x,
 * so NaN stays NaN and -0 stays -0 (what numpy.maximum(x, 0) gives for NaN;
 * ONNX leaves both open).
 * Abs (every numeric dtype): |x|; Neg (floats, int8, int16, int32, int64):
 * -x;
 * Sign (every numeric dtype): -1, 0 or 1 (floats keep a zero's sign and
 * NaN). Integers wrap: |INT_MIN| and -INT_MIN are INT_MIN, as in numpy.
 * Half floats are handled on their bits, exactly (Abs and Neg clear or flip
 * the sign bit, also of NaN).
 *
 * Identity: any dtype. The output shares the input's memory when the builder
 * can arrange it (get_aliased_input); otherwise it is a copy.
 */
#include <math.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "base/parallel.h"
#include "ops/ops_ew.h"

/* A 16-bit float: `inf` is the bits of +infinity in the format (0x7C00
 * half, 0x7F80 bfloat16), `one` those of 1.0 (0x3C00, 0x3F80). */
static void unary_16(int32_t kind, const uint16_t *x, uint16_t *y, int64_t n,
                     uint16_t inf, uint16_t one)
{
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = x[i], mag = (uint16_t)(h & 0x7FFFu);
        int number = mag != 0 && mag <= inf; /* neither a zero nor NaN */
        switch (kind) {
        case UNARY_RELU:
            y[i] = (h & 0x8000u) && number ? 0 : h;
            break;
        case UNARY_ABS:
            y[i] = mag;
            break;
        case UNARY_NEG:
            y[i] = (uint16_t)(h ^ 0x8000u);
            break;
        default: /* Sign */
            y[i] = number ? (uint16_t)((h & 0x8000u) | one) : h;
            break;
        }
    }
}

/* Signed integers through the unsigned type U, so that negation wraps. */
#define UNARY_INT(T, U)                                                                  \
    do {                                                                                 \
        const T *a = x;                                                                  \
        T *b = y;                                                                        \
        switch (kind) {                                                                  \
        case UNARY_RELU:                                                                 \
            for (int64_t i = 0; i < n; i++)                                              \
                b[i] = a[i] < 0 ? (T)0 : a[i];                                           \
            break;                                                                       \
        case UNARY_ABS:                                                                  \
            for (int64_t i = 0; i < n; i++)                                              \
                b[i] = a[i] < 0 ? (T)(0 - (U)a[i]) : a[i];                               \
            break;                                                                       \
        case UNARY_NEG:                                                                  \
            for (int64_t i = 0; i < n; i++)                                              \
                b[i] = (T)(0 - (U)a[i]);                                                 \
            break;                                                                       \
        default:                                                                         \
            for (int64_t i = 0; i < n; i++)                                              \
                b[i] = (T)((a[i] > 0) - (a[i] < 0));                                     \
            break;                                                                       \
        }                                                                                \
    } while (0)

/* max(0, x) as x86's maxps computes it, 0 > x ? 0 : x, which is this op's
 * x < 0 ? 0 : x (NaN and -0 pass through) without a branch: the compiler
 * writes the plain loop with one, and on activations, about half of them
 * negative, it mispredicts every other element. */
static void relu_f32(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
#if defined(__SSE__)
    const __m128 zero = _mm_setzero_ps();
    for (; i + 4 <= n; i += 4)
        _mm_storeu_ps(y + i, _mm_max_ps(zero, _mm_loadu_ps(x + i)));
#endif
    for (; i < n; i++)
        y[i] = x[i] < 0 ? 0.0f : x[i];
}

static void unary_f32(int32_t kind, const float *x, float *y, int64_t n)
{
    switch (kind) {
    case UNARY_RELU:
        relu_f32(x, y, n);
        break;
    case UNARY_ABS:
        for (int64_t i = 0; i < n; i++)
            y[i] = fabsf(x[i]);
        break;
    case UNARY_NEG:
        for (int64_t i = 0; i < n; i++)
            y[i] = -x[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] > 0 ? 1.0f : x[i] < 0 ? -1.0f : x[i];
        break;
    }
}

static void unary_f64(int32_t kind, const double *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        switch (kind) {
        case UNARY_RELU:
            y[i] = x[i] < 0 ? 0.0 : x[i];
            break;
        case UNARY_ABS:
            y[i] = fabs(x[i]);
            break;
        case UNARY_NEG:
            y[i] = -x[i];
            break;
        default:
            y[i] = x[i] > 0 ? 1.0 : x[i] < 0 ? -1.0 : x[i];
            break;
        }
}

/* Unsigned types: Abs is the value, Sign 0 or 1 (Relu and Neg do not take
 * them). */
#define UNARY_UNSIGNED(T)                                                                \
    for (int64_t i = 0; i < n; i++)                                                      \
    ((T *)y)[i] = kind == UNARY_SIGN ? (T)(((const T *)x)[i] != 0) : ((const T *)x)[i]

/* y = f(x) over n elements of a dtype the op takes (checked before). */
static void unary_elems(int32_t kind, int32_t dtype, const void *x, void *y, int64_t n)
{
    switch (dtype) {
    case PRT_FLOAT32:
        unary_f32(kind, x, y, n);
        break;
    case PRT_FLOAT16:
        unary_16(kind, x, y, n, 0x7C00u, 0x3C00u);
        break;
    case PRT_BFLOAT16:
        unary_16(kind, x, y, n, 0x7F80u, 0x3F80u);
        break;
    case PRT_INT8:
        UNARY_INT(int8_t, uint8_t);
        break;
    case PRT_UINT8: /* Abs and Sign; Relu and Neg do not take it */
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)y)[i] = kind == UNARY_SIGN ? ((const uint8_t *)x)[i] != 0
                                                   : ((const uint8_t *)x)[i];
        break;
    case PRT_INT32:
        UNARY_INT(int32_t, uint32_t);
        break;
    case PRT_INT64:
        UNARY_INT(int64_t, uint64_t);
        break;
    case PRT_FLOAT64:
        unary_f64(kind, x, y, n);
        break;
    case PRT_INT16:
        UNARY_INT(int16_t, uint16_t);
        break;
    case PRT_UINT16:
        UNARY_UNSIGNED(uint16_t);
        break;
    case PRT_UINT32:
        UNARY_UNSIGNED(uint32_t);
        break;
    case PRT_UINT64:
        UNARY_UNSIGNED(uint64_t);
        break;
    default:
        break;
    }
}

typedef struct unary_job {
    int32_t kind, dtype;
    const uint8_t *x;
    uint8_t *y;
} unary_job;

/* Elements [b, e): each computed alone, so any split gives the same bits. */
static void unary_range(void *arg, int64_t b, int64_t e)
{
    const unary_job *j = arg;
    size_t es = prt_dtype_size(j->dtype);
    unary_elems(j->kind, j->dtype, j->x + (size_t)b * es, j->y + (size_t)b * es, e - b);
}

static prt_status unary_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *xs, void *const *ys, void *ws,
                            void *stream)
{
    void *y = ys[0];
    const int32_t kind = o->cls->kind;
    /* CHW8 (Relu): every lane, the padding's too, which stays 0. */
    int64_t n = in[0].format == PRT_FORMAT_CHW8
                    ? prt_format_volume(PRT_FORMAT_CHW8, &in[0].dims)
                    : base_volume(&in[0].dims);
    unary_job j = {kind, dtype, xs[0], y};
    (void)nb_in, (void)out, (void)ws, (void)stream;
    if (kind == UNARY_IDENTITY) {
        if (xs[0] != y)
            memmove(y, xs[0], prt_dtype_size(dtype) * (size_t)n);
        return PRT_OK;
    }
    if (dtype < 0 || dtype >= PRT_DTYPE_COUNT ||
        !(OP_DT(dtype) & (EW_DT_NUMERIC | OP_DT_WIDE)))
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    base_parallel_for(n, OP_GRAIN_SIMPLE, unary_range, &j);
    return PRT_OK;
}

/* Relu: X and Y both LINEAR or both CHW8 (relu(0) = 0 keeps the padding
 * lanes 0). */
static int relu_chw8_ok(const op_object *o, int32_t pos,
                        const prt_dynamic_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)o, (void)nb_in, (void)nb_out;
    return pos == 0 || io[pos].desc.format == io[0].desc.format;
}

static const op_class relu_class = {
    .kind = UNARY_RELU,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_INT32) |
              OP_DT(PRT_INT64) | OP_DT(PRT_FLOAT64) | OP_DT(PRT_INT16),
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = ew_same_shapes,
    .infer = ew_same_infer,
    .run = unary_run,
    .chw8_ok = relu_chw8_ok,
};

/* Identity's values are its input's (a shape tensor passes through). */
static prt_status identity_values(op_object *o, const prt_dim_exprs *in_dims,
                                  const prt_dim_exprs *in_values, int32_t nb_in,
                                  const prt_dim_exprs *out_dims,
                                  prt_dim_exprs *out_values, prt_expr_builder *eb)
{
    (void)o, (void)in_dims, (void)nb_in, (void)out_dims, (void)eb;
    *out_values = in_values[0];
    return PRT_OK;
}

static const op_class identity_class = {
    .kind = UNARY_IDENTITY,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(op_object),
    .alias_input = 0, /* in place when the builder can arrange it */
    .shapes = ew_same_shapes,
    .infer = ew_same_infer,
    .run = unary_run,
    .values = identity_values,
};

/* Neg's and Abs's values of a small integer tensor (a shape computation:
 * ONNX's expanded LayerNormalization negates an axis to count the reduced
 * ones), as expressions: 0 - v and MAX(v, 0 - v). */
static prt_status neg_abs_values(op_object *o, const prt_dim_exprs *in_dims,
                                 const prt_dim_exprs *in_values, int32_t nb_in,
                                 const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                                 prt_expr_builder *eb)
{
    const prt_expr *zero = eb->constant(eb, 0);
    (void)in_dims, (void)nb_in, (void)out_dims;
    if (in_values[0].nb_dims < 0 || !zero)
        return PRT_OK;
    for (int32_t i = 0; i < in_values[0].nb_dims; i++) {
        const prt_expr *v = in_values[0].d[i];
        const prt_expr *neg = eb->operation(eb, PRT_DIM_SUB, zero, v);
        out_values->d[i] = o->cls->kind == UNARY_NEG || !neg
                               ? neg
                               : eb->operation(eb, PRT_DIM_MAX, v, neg);
        if (!out_values->d[i])
            return PRT_OK; /* the values stay unknown */
    }
    out_values->nb_dims = in_values[0].nb_dims;
    return PRT_OK;
}

#define UNARY_CLASS(k, dt, val)                                                          \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1, .dtypes = (dt),                   \
        .size = sizeof(op_object), .alias_input = -1, .shapes = ew_same_shapes,          \
        .infer = ew_same_infer, .run = unary_run, .values = (val),                       \
    }

static const op_class abs_class =
    UNARY_CLASS(UNARY_ABS, EW_DT_NUMERIC | OP_DT_WIDE, neg_abs_values);
static const op_class neg_class =
    UNARY_CLASS(UNARY_NEG,
                EW_DT_FLOATS | OP_DT(PRT_INT8) | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) |
                    OP_DT(PRT_FLOAT64) | OP_DT(PRT_INT16),
                neg_abs_values);
static const op_class sign_class =
    UNARY_CLASS(UNARY_SIGN, EW_DT_NUMERIC | OP_DT_WIDE, NULL);

const prt_plugin_creator op_abs_creator = OP_CREATOR("Abs", abs_class, NULL, 0);
const prt_plugin_creator op_neg_creator = OP_CREATOR("Neg", neg_class, NULL, 0);
const prt_plugin_creator op_sign_creator = OP_CREATOR("Sign", sign_class, NULL, 0);
const prt_plugin_creator op_relu_creator = OP_CREATOR("Relu", relu_class, NULL, 0);
const prt_plugin_creator op_identity_creator =
    OP_CREATOR("Identity", identity_class, NULL, 0);

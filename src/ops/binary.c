/*
 * Add, Sub, Mul, Div (namespace "plugrt", version "1"). No fields.
 *
 * Two inputs A and B of one dtype (float32, float16, bfloat16, int8, uint8,
 * int32, int64)
 * with numpy/ONNX multidirectional broadcasting; the output has that dtype.
 * Output dims follow op_broadcast_exprs (op_common.h): where both dims are
 * symbols the output dim is MAX(a, b), assuming at run time they are equal
 * or one is 1; run time checks it.
 *
 * Arithmetic: half floats compute in float32 and round once (the result is
 * the correctly rounded half result). Integers wrap around on overflow
 * (two's complement, as ONNX Runtime does); integer Div truncates toward
 * zero (C, and ONNX's reference), INT_MIN / -1 wraps to INT_MIN, and a
 * division by zero fails the run with a message instead of trapping.
 */
#include <string.h>

#include "ops/op_common.h"

enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV };

static prt_status bin_shapes(op_object *o, const prt_dim_exprs *in,
                             int32_t nb_in, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    (void)nb_in;
    return op_broadcast_exprs(o, eb, &in[0], &in[1], out, "inputs A and B");
}

static prt_status bin_infer(const op_object *o, const prt_dims *in,
                            int32_t nb_in, prt_dims *out)
{
    (void)nb_in;
    return op_broadcast_dims(o, &in[0], &in[1], out, "inputs A and B");
}

/* ---- inner loops: y[j] = a[j * sa] op b[j * sb], j < n ------------------- */

static void inner_f32(int32_t kind, const float *a, int64_t sa, const float *b,
                      int64_t sb, float *y, int64_t n)
{
    switch (kind) {
    case BIN_ADD:
        for (int64_t j = 0; j < n; j++)
            y[j] = a[j * sa] + b[j * sb];
        break;
    case BIN_SUB:
        for (int64_t j = 0; j < n; j++)
            y[j] = a[j * sa] - b[j * sb];
        break;
    case BIN_MUL:
        for (int64_t j = 0; j < n; j++)
            y[j] = a[j * sa] * b[j * sb];
        break;
    default:
        for (int64_t j = 0; j < n; j++)
            y[j] = a[j * sa] / b[j * sb];
        break;
    }
}

static float apply_f(int32_t kind, float a, float b)
{
    switch (kind) {
    case BIN_ADD:
        return a + b;
    case BIN_SUB:
        return a - b;
    case BIN_MUL:
        return a * b;
    default:
        return a / b;
    }
}

static void inner_16(int32_t kind, int32_t dtype, const uint16_t *a, int64_t sa,
                     const uint16_t *b, int64_t sb, uint16_t *y, int64_t n)
{
    if (dtype == PRT_FLOAT16)
        for (int64_t j = 0; j < n; j++)
            y[j] =
                prt_float_to_half(apply_f(kind, prt_half_to_float(a[j * sa]),
                                           prt_half_to_float(b[j * sb])));
    else
        for (int64_t j = 0; j < n; j++)
            y[j] =
                prt_float_to_bf16(apply_f(kind, prt_bf16_to_float(a[j * sa]),
                                           prt_bf16_to_float(b[j * sb])));
}

/* Integer loops through the unsigned type so overflow wraps instead of
 * being undefined. Return 0 on a division by zero. SIGNED: T is signed, so
 * x / -1 must not overflow. */
#define INNER_INT(NAME, T, U, SIGNED)                                          \
    static int NAME(int32_t kind, const T *a, int64_t sa, const T *b,          \
                    int64_t sb, T *y, int64_t n)                               \
    {                                                                          \
        switch (kind) {                                                        \
        case BIN_ADD:                                                          \
            for (int64_t j = 0; j < n; j++)                                    \
                y[j] = (T)((U)a[j * sa] + (U)b[j * sb]);                       \
            break;                                                             \
        case BIN_SUB:                                                          \
            for (int64_t j = 0; j < n; j++)                                    \
                y[j] = (T)((U)a[j * sa] - (U)b[j * sb]);                       \
            break;                                                             \
        case BIN_MUL:                                                          \
            for (int64_t j = 0; j < n; j++)                                    \
                y[j] = (T)((U)a[j * sa] * (U)b[j * sb]);                       \
            break;                                                             \
        default:                                                               \
            for (int64_t j = 0; j < n; j++) {                                  \
                T av = a[j * sa], bv = b[j * sb];                              \
                if (bv == 0)                                                   \
                    return 0;                                                  \
                y[j] = SIGNED && bv == (T)-1 ? (T)(0 - (U)av) : (T)(av / bv);  \
            }                                                                  \
            break;                                                             \
        }                                                                      \
        return 1;                                                              \
    }

INNER_INT(inner_i8, int8_t, uint8_t, 1)
INNER_INT(inner_u8, uint8_t, uint8_t, 0)
INNER_INT(inner_i32, int32_t, uint32_t, 1)
INNER_INT(inner_i64, int64_t, uint64_t, 1)

/* ---- broadcast walk --------------------------------------------------------
 */

static prt_status bin_run(const op_object *o, int32_t dtype,
                          const prt_tensor_desc *in, int32_t nb_in,
                          const prt_tensor_desc *out, const void *const *x,
                          void *y, void *ws, void *stream)
{
    const prt_dims *od = &out->dims;
    int64_t sa0[PRT_MAX_DIMS], sb0[PRT_MAX_DIMS];
    int64_t d[PRT_MAX_DIMS], sa[PRT_MAX_DIMS], sb[PRT_MAX_DIMS];
    int64_t idx[PRT_MAX_DIMS] = {0};
    int64_t n, outer = 1, oa = 0, ob = 0, oy = 0;
    size_t es = prt_dtype_size(dtype);
    int32_t r = 0, kind = o->cls->kind;
    (void)nb_in, (void)ws;

    op_broadcast_strides(&in[0].dims, od, sa0);
    op_broadcast_strides(&in[1].dims, od, sb0);
    /* Drop size-1 dims and merge neighbours that stay contiguous in both
     * inputs, so the inner loop is as long as possible. */
    for (int32_t i = 0; i < od->nb_dims; i++) {
        if (od->d[i] == 1)
            continue;
        if (r > 0 && sa[r - 1] == sa0[i] * od->d[i] &&
            sb[r - 1] == sb0[i] * od->d[i]) {
            d[r - 1] *= od->d[i];
            sa[r - 1] = sa0[i];
            sb[r - 1] = sb0[i];
            continue;
        }
        d[r] = od->d[i];
        sa[r] = sa0[i];
        sb[r] = sb0[i];
        r++;
    }
    if (r == 0) {
        d[0] = 1;
        sa[0] = sb[0] = 0;
        r = 1;
    }
    n = d[r - 1];
    for (int32_t i = 0; i < r - 1; i++)
        outer *= d[i];
    for (int64_t it = 0; it < outer; it++) {
        const uint8_t *pa = (const uint8_t *)x[0] + (size_t)oa * es;
        const uint8_t *pb = (const uint8_t *)x[1] + (size_t)ob * es;
        uint8_t *py = (uint8_t *)y + (size_t)oy * es;
        int ok = 1;
        switch (dtype) {
        case PRT_FLOAT32:
            inner_f32(kind, (const float *)pa, sa[r - 1], (const float *)pb,
                      sb[r - 1], (float *)py, n);
            break;
        case PRT_FLOAT16:
        case PRT_BFLOAT16:
            inner_16(kind, dtype, (const uint16_t *)pa, sa[r - 1],
                     (const uint16_t *)pb, sb[r - 1], (uint16_t *)py, n);
            break;
        case PRT_INT8:
            ok = inner_i8(kind, (const int8_t *)pa, sa[r - 1],
                          (const int8_t *)pb, sb[r - 1], (int8_t *)py, n);
            break;
        case PRT_UINT8:
            ok = inner_u8(kind, pa, sa[r - 1], pb, sb[r - 1], py, n);
            break;
        case PRT_INT32:
            ok = inner_i32(kind, (const int32_t *)pa, sa[r - 1],
                           (const int32_t *)pb, sb[r - 1], (int32_t *)py, n);
            break;
        case PRT_INT64:
            ok = inner_i64(kind, (const int64_t *)pa, sa[r - 1],
                           (const int64_t *)pb, sb[r - 1], (int64_t *)py, n);
            break;
        default:
            return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           prt_dtype_name(dtype));
        }
        if (!ok)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "integer division by zero (%s)",
                           prt_dtype_name(dtype));
        oy += n;
        /* Next outer index (odometer over dims 0 .. r-2). */
        for (int32_t k = r - 2; k >= 0; k--) {
            idx[k]++;
            oa += sa[k];
            ob += sb[k];
            if (idx[k] < d[k])
                break;
            oa -= sa[k] * d[k];
            ob -= sb[k] * d[k];
            idx[k] = 0;
        }
    }
    return PRT_OK;
}

/* Values (shape tensors): elementwise on the known values, a single value
 * broadcast. Integer Div truncates toward zero, as the run does: for a
 * divisor b > 0, trunc(a / b) = a < 0 ? -floor(-a / b) : floor(a / b),
 * written as a select on LESS(a, 0); other divisors give no values unless
 * both sides are constants. */
static const prt_expr *trunc_div(prt_expr_builder *eb, const prt_expr *a,
                                 const prt_expr *b)
{
    int64_t va, vb;
    const prt_expr *zero = eb->constant(eb, 0), *neg, *down, *up;
    if (eb->is_constant(eb, a, &va) && eb->is_constant(eb, b, &vb))
        return vb == 0 || (va == INT64_MIN && vb == -1) ? NULL
                                                        : eb->constant(eb, va / vb);
    if (!eb->is_constant(eb, b, &vb) || vb <= 0)
        return NULL;
    neg = eb->operation(eb, PRT_DIM_LESS, a, zero);
    down = eb->operation(eb, PRT_DIM_FLOOR_DIV, a, b);
    up = eb->operation(eb, PRT_DIM_SUB, zero,
                       eb->operation(eb, PRT_DIM_FLOOR_DIV,
                                     eb->operation(eb, PRT_DIM_SUB, zero, a), b));
    /* neg * up + (1 - neg) * down */
    return eb->operation(
        eb, PRT_DIM_SUM, eb->operation(eb, PRT_DIM_PROD, neg, up),
        eb->operation(eb, PRT_DIM_PROD,
                      eb->operation(eb, PRT_DIM_SUB, eb->constant(eb, 1), neg), down));
}

static prt_status bin_values(op_object *o, const prt_dim_exprs *in_dims,
                             const prt_dim_exprs *in_values, int32_t nb_in,
                             const prt_dim_exprs *out_dims,
                             prt_dim_exprs *out_values, prt_expr_builder *eb)
{
    static const int32_t ops[] = {PRT_DIM_SUM, PRT_DIM_SUB, PRT_DIM_PROD};
    int32_t n = op_static_count(eb, out_dims);
    int32_t na = in_values[0].nb_dims, nb = in_values[1].nb_dims;
    (void)in_dims, (void)nb_in;
    if (n < 0 || na < 0 || nb < 0 || (na != n && na != 1) || (nb != n && nb != 1))
        return PRT_OK;
    for (int32_t i = 0; i < n; i++) {
        const prt_expr *a = in_values[0].d[na == 1 ? 0 : i];
        const prt_expr *b = in_values[1].d[nb == 1 ? 0 : i];
        out_values->d[i] = o->cls->kind == BIN_DIV
                               ? trunc_div(eb, a, b)
                               : eb->operation(eb, ops[o->cls->kind], a, b);
        if (!out_values->d[i])
            return PRT_OK; /* not expressible: the values stay unknown */
    }
    out_values->nb_dims = n;
    return PRT_OK;
}

#define BIN_DTYPES                                                             \
    (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) |  \
     OP_DT(PRT_INT32) | OP_DT(PRT_INT64))

#define BIN_CLASS(k)                                                           \
    {                                                                          \
        .kind = (k), .min_inputs = 2, .max_inputs = 2, .dtypes = BIN_DTYPES,   \
        .size = sizeof(op_object), .alias_input = -1, .shapes = bin_shapes,    \
        .infer = bin_infer, .run = {[PRT_DEVICE_CPU] = bin_run}, .values = bin_values,              \
    }

static const op_class add_class = BIN_CLASS(BIN_ADD);
static const op_class sub_class = BIN_CLASS(BIN_SUB);
static const op_class mul_class = BIN_CLASS(BIN_MUL);
static const op_class div_class = BIN_CLASS(BIN_DIV);

const prt_plugin_creator op_add_creator = OP_CREATOR("Add", add_class, NULL, 0);
const prt_plugin_creator op_sub_creator = OP_CREATOR("Sub", sub_class, NULL, 0);
const prt_plugin_creator op_mul_creator = OP_CREATOR("Mul", mul_class, NULL, 0);
const prt_plugin_creator op_div_creator = OP_CREATOR("Div", div_class, NULL, 0);

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

static prt_status bin_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in;
    return op_broadcast_exprs(o, eb, &in[0], &in[1], out, "inputs A and B");
}

static prt_status bin_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    (void)nb_in;
    return op_broadcast_dims(o, &in[0], &in[1], out, "inputs A and B");
}

/* ---- rows: y[j] = a[j * sa] op b[j * sb], j < n ---------------------------
 *
 * op_bcast_walk's rows have element strides 0 or 1: both 1 for inputs of
 * one shape, one of them 0 for a scalar or a broadcast row. Those get loops
 * of their own, with constant strides and the broadcast value read once
 * (the compiler cannot keep b[j * 0] in a register itself: as far as it
 * knows, a store to y may change it). */
#define BIN_ROWS(T, F)                                                                   \
    do {                                                                                 \
        if (sa == 1 && sb == 1) {                                                        \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = F(a[j], b[j]);                                                    \
        } else if (sa == 1 && sb == 0) {                                                 \
            const T bv = b[0];                                                           \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = F(a[j], bv);                                                      \
        } else if (sa == 0 && sb == 1) {                                                 \
            const T av = a[0];                                                           \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = F(av, b[j]);                                                      \
        } else {                                                                         \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = F(a[j * sa], b[j * sb]);                                          \
        }                                                                                \
    } while (0)

#define F_ADD(x, z) ((x) + (z))
#define F_SUB(x, z) ((x) - (z))
#define F_MUL(x, z) ((x) * (z))
#define F_DIV(x, z) ((x) / (z))

static void row_f32(int32_t kind, const float *a, int64_t sa, const float *b, int64_t sb,
                    float *y, int64_t n)
{
    switch (kind) {
    case BIN_ADD:
        BIN_ROWS(float, F_ADD);
        break;
    case BIN_SUB:
        BIN_ROWS(float, F_SUB);
        break;
    case BIN_MUL:
        BIN_ROWS(float, F_MUL);
        break;
    default:
        BIN_ROWS(float, F_DIV);
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

/* Half floats compute in float32 and round once (kind: row_16's). */
#define F_HALF(x, z)                                                                     \
    prt_float_to_half(apply_f(kind, prt_half_to_float(x), prt_half_to_float(z)))
#define F_BF16(x, z)                                                                     \
    prt_float_to_bf16(apply_f(kind, prt_bf16_to_float(x), prt_bf16_to_float(z)))

static void row_16(int32_t kind, int32_t dtype, const uint16_t *a, int64_t sa,
                   const uint16_t *b, int64_t sb, uint16_t *y, int64_t n)
{
    if (dtype == PRT_FLOAT16)
        BIN_ROWS(uint16_t, F_HALF);
    else
        BIN_ROWS(uint16_t, F_BF16);
}

/* Integer rows through the unsigned type (bin_u, with T as bin_t) so
 * overflow wraps instead of being undefined. Return 0 on a division by
 * zero. SIGNED: T is signed, so x / -1 must not overflow. */
#define W_ADD(x, z) ((bin_t)((bin_u)(x) + (bin_u)(z)))
#define W_SUB(x, z) ((bin_t)((bin_u)(x) - (bin_u)(z)))
#define W_MUL(x, z) ((bin_t)((bin_u)(x) * (bin_u)(z)))
#define ROW_INT(NAME, T, U, SIGNED)                                                      \
    static int NAME(int32_t kind, const T *a, int64_t sa, const T *b, int64_t sb, T *y,  \
                    int64_t n)                                                           \
    {                                                                                    \
        typedef T bin_t;                                                                 \
        typedef U bin_u;                                                                 \
        switch (kind) {                                                                  \
        case BIN_ADD:                                                                    \
            BIN_ROWS(T, W_ADD);                                                          \
            break;                                                                       \
        case BIN_SUB:                                                                    \
            BIN_ROWS(T, W_SUB);                                                          \
            break;                                                                       \
        case BIN_MUL:                                                                    \
            BIN_ROWS(T, W_MUL);                                                          \
            break;                                                                       \
        default:                                                                         \
            for (int64_t j = 0; j < n; j++) {                                            \
                T av = a[j * sa], bv = b[j * sb];                                        \
                if (bv == 0)                                                             \
                    return 0;                                                            \
                y[j] = SIGNED && bv == (T)-1 ? (T)(0 - (U)av) : (T)(av / bv);            \
            }                                                                            \
            break;                                                                       \
        }                                                                                \
        return 1;                                                                        \
    }

ROW_INT(row_i8, int8_t, uint8_t, 1)
ROW_INT(row_u8, uint8_t, uint8_t, 0)
ROW_INT(row_i32, int32_t, uint32_t, 1)
ROW_INT(row_i64, int64_t, uint64_t, 1)

typedef struct bin_ctx {
    int32_t kind, dtype;
} bin_ctx;

enum { BIN_ROW_OK, BIN_ROW_DIV_ZERO, BIN_ROW_DTYPE };

static int bin_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                   int64_t n)
{
    const bin_ctx *c = ctx;
    int ok = 1;
    switch (c->dtype) {
    case PRT_FLOAT32:
        row_f32(c->kind, (const float *)p[0], s[0], (const float *)p[1], s[1], (float *)y,
                n);
        break;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        row_16(c->kind, c->dtype, (const uint16_t *)p[0], s[0], (const uint16_t *)p[1],
               s[1], (uint16_t *)y, n);
        break;
    case PRT_INT8:
        ok = row_i8(c->kind, (const int8_t *)p[0], s[0], (const int8_t *)p[1], s[1],
                    (int8_t *)y, n);
        break;
    case PRT_UINT8:
        ok = row_u8(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_INT32:
        ok = row_i32(c->kind, (const int32_t *)p[0], s[0], (const int32_t *)p[1], s[1],
                     (int32_t *)y, n);
        break;
    case PRT_INT64:
        ok = row_i64(c->kind, (const int64_t *)p[0], s[0], (const int64_t *)p[1], s[1],
                     (int64_t *)y, n);
        break;
    default:
        return BIN_ROW_DTYPE;
    }
    return ok ? BIN_ROW_OK : BIN_ROW_DIV_ZERO;
}

static prt_status bin_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, const void *const *x,
                          void *y, void *ws, void *stream)
{
    const prt_dims dims[2] = {in[0].dims, in[1].dims};
    const size_t es[2] = {prt_dtype_size(dtype), prt_dtype_size(dtype)};
    const bin_ctx c = {o->cls->kind, dtype};
    (void)nb_in, (void)ws;
    switch (op_bcast_walk(&out->dims, 2, dims, es, es[0], x, y, bin_row, &c)) {
    case BIN_ROW_OK:
        return PRT_OK;
    case BIN_ROW_DIV_ZERO:
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "integer division by zero (%s)",
                       prt_dtype_name(dtype));
    default:
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
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
    up = eb->operation(
        eb, PRT_DIM_SUB, zero,
        eb->operation(eb, PRT_DIM_FLOOR_DIV, eb->operation(eb, PRT_DIM_SUB, zero, a), b));
    /* neg * up + (1 - neg) * down */
    return eb->operation(
        eb, PRT_DIM_SUM, eb->operation(eb, PRT_DIM_PROD, neg, up),
        eb->operation(eb, PRT_DIM_PROD,
                      eb->operation(eb, PRT_DIM_SUB, eb->constant(eb, 1), neg), down));
}

static prt_status bin_values(op_object *o, const prt_dim_exprs *in_dims,
                             const prt_dim_exprs *in_values, int32_t nb_in,
                             const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                             prt_expr_builder *eb)
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

#define BIN_DTYPES                                                                       \
    (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) |            \
     OP_DT(PRT_INT32) | OP_DT(PRT_INT64))

#define BIN_CLASS(k)                                                                     \
    {                                                                                    \
        .kind = (k), .min_inputs = 2, .max_inputs = 2, .dtypes = BIN_DTYPES,             \
        .size = sizeof(op_object), .alias_input = -1, .shapes = bin_shapes,              \
        .infer = bin_infer, .run = {[PRT_DEVICE_CPU] = bin_run}, .values = bin_values,   \
    }

static const op_class add_class = BIN_CLASS(BIN_ADD);
static const op_class sub_class = BIN_CLASS(BIN_SUB);
static const op_class mul_class = BIN_CLASS(BIN_MUL);
static const op_class div_class = BIN_CLASS(BIN_DIV);

const prt_plugin_creator op_add_creator = OP_CREATOR("Add", add_class, NULL, 0);
const prt_plugin_creator op_sub_creator = OP_CREATOR("Sub", sub_class, NULL, 0);
const prt_plugin_creator op_mul_creator = OP_CREATOR("Mul", mul_class, NULL, 0);
const prt_plugin_creator op_div_creator = OP_CREATOR("Div", div_class, NULL, 0);

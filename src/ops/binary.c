/*
 * The arithmetic of inputs of one dtype (namespace "plugrt", version "1"),
 * ONNX opset 7-19 semantics, with numpy/ONNX multidirectional broadcasting;
 * the output has the inputs' dtype. Output dims follow op_broadcast_exprs
 * (op_common.h): where both dims are symbols the output dim is MAX(a, b),
 * assuming at run time they are equal or one is 1; run time checks it.
 *
 * Add, Sub, Mul, Div: two inputs, float32, float16, bfloat16, float64, int8,
 *   uint8, int16, uint16, int32, uint32, int64, uint64 (float64 in double).
 * Mod: the same dtypes; field fmod (0 default, or 1). fmod 1 is C's fmod /
 *   %: the result has the dividend's sign. fmod 0 has the divisor's sign
 *   (Python's %, numpy.mod), for floats too (ONNX asks floats for fmod 1;
 *   its reference computes numpy.mod).
 * Max, Min: 1 to 8 inputs, the same dtypes; a NaN wins (numpy.maximum).
 * Sum, Mean: 1 to 8 inputs, float32, float16, bfloat16, float64; Mean
 *   divides the sum by the count.
 * BitShift: uint8, uint16, uint32, uint64; field direction "LEFT" or
 *   "RIGHT" (required); a shift by the type's width or more gives 0.
 * PRelu: X and slope, float32, float16, bfloat16, float64, int32, int64,
 *   uint32, uint64; slope
 *   broadcasts to X (unidirectionally: the output has X's dims); y = x < 0 ?
 *   slope * x : x.
 *
 * Arithmetic: half floats compute in float32 and round once (the result is
 * the correctly rounded half result); with more than two inputs each step
 * rounds, as numpy does. float32 (and half floats') Add, Sub, Mul and Div
 * run in vectors (cpu_kernels.h: op_bin_rows_f32 on LINEAR rows,
 * op_bin_c8_f32 on CHW8 blocks), each element the same one operation.
 * Integers wrap around on overflow (two's complement, as ONNX Runtime
 * does); integer Div truncates toward zero (C, and ONNX's reference),
 * INT_MIN / -1 wraps to INT_MIN, and a division (or Mod) by zero fails the
 * run with a message instead of trapping.
 *
 * Shape tensors: Add, Sub, Mul, Div, Mod (by a constant), Max and Min state
 * the values of small integer outputs from their inputs' values.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/ew_kinds.h"
#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_ew.h"

typedef struct bin_op {
    op_object o;
    int32_t fmod;      /* Mod */
    int32_t direction; /* BitShift: 0 LEFT, 1 RIGHT */
} bin_op;

static const char *const directions[] = {"LEFT", "RIGHT"};

static prt_status bin_parse(op_object *o, const op_fields *f)
{
    bin_op *b = (bin_op *)o;
    prt_status st = ew_field_flag(f, "fmod", 0, &b->fmod);
    if (!st)
        st = ew_field_choice(f, "direction", directions, 2, -1, &b->direction);
    if (!st && o->cls->kind == BIN_BITSHIFT && b->direction < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "needs field direction (\"LEFT\" or \"RIGHT\")");
    return st;
}

static int32_t bin_serialize(op_object *o, prt_field *ser)
{
    bin_op *b = (bin_op *)o;
    if (o->cls->kind == BIN_MOD) {
        op_ser(&ser[0], "fmod", PRT_FIELD_INT32, &b->fmod, 1);
        return 1;
    }
    if (o->cls->kind == BIN_BITSHIFT) {
        const char *s = directions[b->direction];
        op_ser(&ser[0], "direction", PRT_FIELD_CHAR, s, (int64_t)strlen(s));
        return 1;
    }
    return 0;
}

int32_t bin_row_kind(const op_object *o)
{
    static const int32_t rk[] = {
        [BIN_ADD] = BIN_R_ADD, [BIN_SUB] = BIN_R_SUB,  [BIN_MUL] = BIN_R_MUL,
        [BIN_DIV] = BIN_R_DIV, [BIN_MAX] = BIN_R_MAX,  [BIN_MIN] = BIN_R_MIN,
        [BIN_SUM] = BIN_R_ADD, [BIN_MEAN] = BIN_R_ADD, [BIN_PRELU] = BIN_R_PRELU};
    const bin_op *b = (const bin_op *)o;
    if (o->cls->kind == BIN_MOD)
        return b->fmod ? BIN_R_FMOD : BIN_R_MOD;
    if (o->cls->kind == BIN_BITSHIFT)
        return b->direction ? BIN_R_SHR : BIN_R_SHL;
    return rk[o->cls->kind];
}

/* ---- shapes ------------------------------------------------------------------ */

static const char *bcast_what(int32_t nb_in, int32_t k, char *buf, size_t cap)
{
    if (nb_in == 2)
        return "inputs A and B";
    snprintf(buf, cap, "input %d and the inputs before it", (int)k);
    return buf;
}

static prt_status bin_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    char what[64];
    *out = in[0];
    for (int32_t k = 1; k < nb_in; k++) {
        prt_dim_exprs acc = *out;
        prt_status st = op_broadcast_exprs(o, eb, &acc, &in[k], out,
                                           bcast_what(nb_in, k, what, sizeof what));
        if (st)
            return st;
    }
    return PRT_OK;
}

static prt_status bin_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    char what[64];
    *out = in[0];
    for (int32_t k = 1; k < nb_in; k++) {
        prt_dims acc = *out;
        prt_status st = op_broadcast_dims(o, &acc, &in[k], out,
                                          bcast_what(nb_in, k, what, sizeof what));
        if (st)
            return st;
    }
    return PRT_OK;
}

/* PRelu: slope must broadcast to X, whose dims the output keeps. */
static prt_status prelu_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t shift = in[0].nb_dims - in[1].nb_dims;
    char a[128], b[128];
    (void)nb_in;
    *out = in[0];
    for (int32_t i = 0; i < in[1].nb_dims; i++) {
        int64_t s, x;
        if (shift < 0 || (eb->is_constant(eb, in[1].d[i], &s) && s != 1 &&
                          eb->is_constant(eb, in[0].d[i + shift], &x) && s != x))
            return op_fail(o, PRT_ERR_SHAPE,
                           "slope dims %s do not broadcast to X dims %s (the output "
                           "keeps X's)",
                           op_exprs_str(eb, &in[1], b, sizeof b),
                           op_exprs_str(eb, &in[0], a, sizeof a));
    }
    return PRT_OK;
}

static prt_status prelu_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    int32_t shift = in[0].nb_dims - in[1].nb_dims;
    char a[128], b[128];
    (void)nb_in;
    *out = in[0];
    for (int32_t i = 0; i < in[1].nb_dims; i++)
        if (shift < 0 || (in[1].d[i] != 1 && in[1].d[i] != in[0].d[i + shift]))
            return op_fail(o, PRT_ERR_SHAPE,
                           "slope dims %s do not broadcast to X dims %s (the output "
                           "keeps X's)",
                           base_dims_format(&in[1], BASE_DIMS_LIST, b, sizeof b),
                           base_dims_format(&in[0], BASE_DIMS_LIST, a, sizeof a));
    return PRT_OK;
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

/* A NaN on either side wins. */
#define F_MAX(x, z) ((x) != (x) || (x) > (z) ? (x) : (z))
#define F_MIN(x, z) ((x) != (x) || (x) < (z) ? (x) : (z))
#define F_PRELU(x, z) ((x) < 0 ? (x) * (z) : (x))

/* numpy.mod: the remainder takes the divisor's sign (NaN for a 0 divisor). */
static float mod_f(float x, float z)
{
    float r = fmodf(x, z);
    return r != 0 && (r < 0) != (z < 0) ? r + z : r;
}

static void row_f32(int32_t kind, const float *a, int64_t sa, const float *b, int64_t sb,
                    float *y, int64_t n)
{
    switch (kind) {
    case BIN_R_ADD:
    case BIN_R_SUB:
    case BIN_R_MUL:
    case BIN_R_DIV:
        /* The same operations in vectors (a walk's strides are 0 or 1). */
        op_bin_rows_f32(kind, a, sa, b, sb, y, n);
        break;
    case BIN_R_MOD:
        BIN_ROWS(float, mod_f);
        break;
    case BIN_R_FMOD:
        BIN_ROWS(float, fmodf);
        break;
    case BIN_R_MAX:
        BIN_ROWS(float, F_MAX);
        break;
    case BIN_R_MIN:
        BIN_ROWS(float, F_MIN);
        break;
    default:
        BIN_ROWS(float, F_PRELU);
        break;
    }
}

/* numpy.mod in double. */
static double mod_d(double x, double z)
{
    double r = fmod(x, z);
    return r != 0 && (r < 0) != (z < 0) ? r + z : r;
}

static void row_f64(int32_t kind, const double *a, int64_t sa, const double *b,
                    int64_t sb, double *y, int64_t n)
{
#define D_ADD(x, z) ((x) + (z))
#define D_SUB(x, z) ((x) - (z))
#define D_MUL(x, z) ((x) * (z))
#define D_DIV(x, z) ((x) / (z))
    switch (kind) {
    case BIN_R_ADD:
        BIN_ROWS(double, D_ADD);
        break;
    case BIN_R_SUB:
        BIN_ROWS(double, D_SUB);
        break;
    case BIN_R_MUL:
        BIN_ROWS(double, D_MUL);
        break;
    case BIN_R_DIV:
        BIN_ROWS(double, D_DIV);
        break;
    case BIN_R_MOD:
        BIN_ROWS(double, mod_d);
        break;
    case BIN_R_FMOD:
        BIN_ROWS(double, fmod);
        break;
    case BIN_R_MAX:
        BIN_ROWS(double, F_MAX);
        break;
    case BIN_R_MIN:
        BIN_ROWS(double, F_MIN);
        break;
    default:
        BIN_ROWS(double, F_PRELU);
        break;
    }
#undef D_ADD
#undef D_SUB
#undef D_MUL
#undef D_DIV
}

/* Half floats: as float32 a chunk at a time, rounded once. */
static void row_16(int32_t kind, int32_t dtype, const uint16_t *a, int64_t sa,
                   const uint16_t *b, int64_t sb, uint16_t *y, int64_t n)
{
    for (int64_t j = 0; j < n; j += EW_CHUNK) {
        float fa[EW_CHUNK], fb[EW_CHUNK], fy[EW_CHUNK];
        int64_t m = n - j < EW_CHUNK ? n - j : EW_CHUNK;
        ew_load_f32(a + j * sa, dtype, sa, sa ? m : 1, fa);
        ew_load_f32(b + j * sb, dtype, sb, sb ? m : 1, fb);
        row_f32(kind, fa, sa, fb, sb, fy, m);
        op_from_f32(fy, dtype, m, y + j);
    }
}

/* Integer rows through the unsigned type (bin_u, with T as bin_t) so
 * overflow wraps instead of being undefined. Return 0 on a division by
 * zero. SIGNED: T is signed, so x / -1 must not overflow. */
#define W_ADD(x, z) ((bin_t)((bin_u)(x) + (bin_u)(z)))
#define W_SUB(x, z) ((bin_t)((bin_u)(x) - (bin_u)(z)))
/* bin_m: at least unsigned int wide, so no product is promoted to int */
#define W_MUL(x, z) ((bin_t)((bin_m)(x) * (bin_m)(z)))
#define I_MAX(x, z) ((x) > (z) ? (x) : (z))
#define I_MIN(x, z) ((x) < (z) ? (x) : (z))
#define I_SHL(x, z) (I_NEG(z) || (z) >= BITS ? (bin_t)0 : (bin_t)((bin_u)(x) << (z)))
#define I_SHR(x, z) (I_NEG(z) || (z) >= BITS ? (bin_t)0 : (bin_t)((bin_u)(x) >> (z)))
#define I_PRELU(x, z) (I_NEG(x) ? W_MUL(x, z) : (x))
/* v < 0, against a variable so that unsigned types compile without a
 * warning that it never holds. */
#define I_NEG(v) ((v) < zero_)
#define ROW_INT(NAME, T, U, M, SIGNED)                                                   \
    static int NAME(int32_t kind, const T *a, int64_t sa, const T *b, int64_t sb, T *y,  \
                    int64_t n)                                                           \
    {                                                                                    \
        typedef T bin_t;                                                                 \
        typedef U bin_u;                                                                 \
        typedef M bin_m;                                                                 \
        enum { BITS = 8 * (int)sizeof(T) };                                              \
        const T zero_ = 0;                                                               \
        switch (kind) {                                                                  \
        case BIN_R_ADD:                                                                  \
            BIN_ROWS(T, W_ADD);                                                          \
            break;                                                                       \
        case BIN_R_SUB:                                                                  \
            BIN_ROWS(T, W_SUB);                                                          \
            break;                                                                       \
        case BIN_R_MUL:                                                                  \
            BIN_ROWS(T, W_MUL);                                                          \
            break;                                                                       \
        case BIN_R_MAX:                                                                  \
            BIN_ROWS(T, I_MAX);                                                          \
            break;                                                                       \
        case BIN_R_MIN:                                                                  \
            BIN_ROWS(T, I_MIN);                                                          \
            break;                                                                       \
        case BIN_R_SHL:                                                                  \
            BIN_ROWS(T, I_SHL);                                                          \
            break;                                                                       \
        case BIN_R_SHR:                                                                  \
            BIN_ROWS(T, I_SHR);                                                          \
            break;                                                                       \
        case BIN_R_PRELU:                                                                \
            BIN_ROWS(T, I_PRELU);                                                        \
            break;                                                                       \
        default: /* Div, Mod, fmod */                                                    \
            for (int64_t j = 0; j < n; j++) {                                            \
                T av = a[j * sa], bv = b[j * sb], r;                                     \
                if (bv == 0)                                                             \
                    return 0;                                                            \
                if (SIGNED && bv == (T)-1)                                               \
                    r = kind == BIN_R_DIV ? (T)(0 - (U)av) : (T)0;                       \
                else                                                                     \
                    r = kind == BIN_R_DIV ? (T)(av / bv) : (T)(av % bv);                 \
                if (kind == BIN_R_MOD && r != 0 && I_NEG(r) != I_NEG(bv))                \
                    r = W_ADD(r, bv);                                                    \
                y[j] = r;                                                                \
            }                                                                            \
            break;                                                                       \
        }                                                                                \
        return 1;                                                                        \
    }

ROW_INT(row_i8, int8_t, uint8_t, uint32_t, 1)
ROW_INT(row_u8, uint8_t, uint8_t, uint32_t, 0)
ROW_INT(row_i32, int32_t, uint32_t, uint32_t, 1)
ROW_INT(row_i64, int64_t, uint64_t, uint64_t, 1)
ROW_INT(row_i16, int16_t, uint16_t, uint32_t, 1)
ROW_INT(row_u16, uint16_t, uint16_t, uint32_t, 0)
ROW_INT(row_u32, uint32_t, uint32_t, uint32_t, 0)
ROW_INT(row_u64, uint64_t, uint64_t, uint64_t, 0)

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
    case PRT_FLOAT64:
        row_f64(c->kind, (const double *)p[0], s[0], (const double *)p[1], s[1],
                (double *)y, n);
        break;
    case PRT_INT16:
        ok = row_i16(c->kind, (const int16_t *)p[0], s[0], (const int16_t *)p[1], s[1],
                     (int16_t *)y, n);
        break;
    case PRT_UINT16:
        ok = row_u16(c->kind, (const uint16_t *)p[0], s[0], (const uint16_t *)p[1], s[1],
                     (uint16_t *)y, n);
        break;
    case PRT_UINT32:
        ok = row_u32(c->kind, (const uint32_t *)p[0], s[0], (const uint32_t *)p[1], s[1],
                     (uint32_t *)y, n);
        break;
    case PRT_UINT64:
        ok = row_u64(c->kind, (const uint64_t *)p[0], s[0], (const uint64_t *)p[1], s[1],
                     (uint64_t *)y, n);
        break;
    default:
        return BIN_ROW_DTYPE;
    }
    return ok ? BIN_ROW_OK : BIN_ROW_DIV_ZERO;
}

/* y = a op b over out's dims (a and b broadcast to them). Floats, whose
 * rows cannot fail and compute each element alone, on the context's
 * threads; integers (a division by zero stops the walk) on this one. */
static int bin_walk(const prt_dims *out, const prt_dims *da, const prt_dims *db,
                    const void *a, const void *b, void *y, const bin_ctx *c)
{
    const prt_dims dims[2] = {*da, *db};
    const size_t es = prt_dtype_size(c->dtype), ess[2] = {es, es};
    const void *x[2] = {a, b};
    if (!ew_is_float(c->dtype) && c->dtype != PRT_FLOAT64)
        return op_bcast_walk(out, 2, dims, ess, es, x, y, bin_row, c);
    op_bcast_walk_parallel(out, 2, dims, ess, es, x, y, bin_row, c, OP_GRAIN_SIMPLE);
    return BIN_ROW_OK;
}

/* ---- the blocked format CHW8 (Add, Sub, Mul, Div of two float32 inputs) --- */

/* An input of dims d against the output's dims od, both rank 4: 1 when it
 * has the output's dims (-1, unknown, matches -1), 2 when it holds one
 * value per channel ([N or 1, C, 1, 1]), else 0. */
static int bin_c8_shape(const prt_dims *d, const prt_dims *od)
{
    int same = d->nb_dims == 4 && od->nb_dims == 4;
    for (int32_t i = 0; same && i < 4; i++)
        same = d->d[i] == od->d[i];
    if (same)
        return 1;
    if (d->nb_dims == 4 && od->nb_dims == 4 && d->d[1] == od->d[1] && d->d[1] > 0 &&
        d->d[2] == 1 && d->d[3] == 1 && (d->d[0] == 1 || d->d[0] == od->d[0]))
        return 2;
    return 0;
}

/* All three CHW8 or none; in CHW8 each input of the output's dims or one
 * value a channel. */
static int bin_chw8_ok(const op_object *o, int32_t pos, const prt_dynamic_tensor_desc *io,
                       int32_t nb_in, int32_t nb_out)
{
    const int32_t f = io[pos].desc.format;
    (void)o, (void)nb_out;
    if (pos > 0 && io[0].desc.format != f)
        return 0;
    if (f == PRT_FORMAT_LINEAR)
        return 1;
    if (nb_in != 2 || io[2].desc.dims.nb_dims != 4)
        return 0;
    return pos == 2 || bin_c8_shape(&io[pos].desc.dims, &io[2].desc.dims) != 0;
}

typedef struct bin_c8_job {
    const float *a, *b;
    float *y;
    int sa, sb; /* bin_c8_shape's */
    int64_t N, C, C8, R, na, nb;
    int32_t rk;
} bin_c8_job;

static void bin_c8_range(void *arg, int64_t begin, int64_t end)
{
    const bin_c8_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t n = it / j->C8, cb = it % j->C8, live = j->C - cb * 8;
        const int64_t base = it * j->R * 8;
        const float *a =
            j->sa == 1 ? j->a + base : j->a + ((j->na > 1 ? n : 0) * j->C8 + cb) * 8;
        const float *b =
            j->sb == 1 ? j->b + base : j->b + ((j->nb > 1 ? n : 0) * j->C8 + cb) * 8;
        /* A vector a pixel, a per-channel side one vector for the block;
         * CHW8's padding lanes are zeros. */
        op_bin_c8_f32(j->rk, a, j->sa == 1 ? 8 : 0, b, j->sb == 1 ? 8 : 0, j->y + base,
                      j->R, live);
    }
}

static prt_status bin_run_c8(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, const void *const *x, void *y)
{
    bin_c8_job j;
    const int32_t rk = bin_row_kind(o);
    if (nb_in != 2 || in[0].format != PRT_FORMAT_CHW8 ||
        in[1].format != PRT_FORMAT_CHW8 || out->format != PRT_FORMAT_CHW8 ||
        out->dims.nb_dims != 4 ||
        (rk != BIN_R_ADD && rk != BIN_R_SUB && rk != BIN_R_MUL && rk != BIN_R_DIV))
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "the blocked format CHW8 takes Add, Sub, Mul and Div of two "
                       "CHW8 inputs of rank 4 into a CHW8 output");
    memset(&j, 0, sizeof j);
    j.sa = bin_c8_shape(&in[0].dims, &out->dims);
    j.sb = bin_c8_shape(&in[1].dims, &out->dims);
    if (!j.sa || !j.sb)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "in the blocked format CHW8 each input has the output's dims or "
                       "one value a channel");
    j.a = x[0];
    j.b = x[1];
    j.y = y;
    j.N = out->dims.d[0];
    j.C = out->dims.d[1];
    j.C8 = (j.C + 7) / 8;
    j.R = out->dims.d[2] * out->dims.d[3];
    j.na = in[0].dims.d[0];
    j.nb = in[1].dims.d[0];
    j.rk = rk;
    base_parallel_for(j.N * j.C8,
                      j.R > 0 ? (OP_GRAIN_SIMPLE + 8 * j.R - 1) / (8 * j.R) : 1,
                      bin_c8_range, &j);
    return PRT_OK;
}

static prt_status bin_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const bin_ctx c = {bin_row_kind(o), dtype};
    int code = BIN_ROW_OK;
    (void)ws, (void)stream;
    if (out->format == PRT_FORMAT_CHW8 ||
        (nb_in > 0 && in[0].format == PRT_FORMAT_CHW8) ||
        (nb_in > 1 && in[1].format == PRT_FORMAT_CHW8))
        return bin_run_c8(o, in, nb_in, out, x, y);
    if (nb_in == 1) {
        /* Max, Min, Sum, Mean of one input: itself. */
        if (x[0] != y)
            memmove(y, x[0], prt_dtype_size(dtype) * (size_t)base_volume(&out->dims));
        return PRT_OK;
    }
    code = bin_walk(&out->dims, &in[0].dims, &in[1].dims, x[0], x[1], y, &c);
    /* More inputs: y = y op x[k], in place (each element is read before it
     * is written). */
    for (int32_t k = 2; k < nb_in && code == BIN_ROW_OK; k++)
        code = bin_walk(&out->dims, &out->dims, &in[k].dims, y, x[k], y, &c);
    if (code == BIN_ROW_OK && o->cls->kind == BIN_MEAN) {
        const bin_ctx div = {BIN_R_DIV, dtype};
        const prt_dims scalar = {0, {0}};
        float count = (float)nb_in;
        double dcount = (double)nb_in;
        uint16_t h =
            dtype == PRT_FLOAT16 ? prt_float_to_half(count) : prt_float_to_bf16(count);
        code = bin_walk(&out->dims, &out->dims, &scalar, y,
                        dtype == PRT_FLOAT32   ? (const void *)&count
                        : dtype == PRT_FLOAT64 ? (const void *)&dcount
                                               : (const void *)&h,
                        y, &div);
    }
    switch (code) {
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

/* ---- values (shape tensors) ------------------------------------------------ */

/* Integer Div truncates toward zero, as the run does: for a divisor b > 0,
 * trunc(a / b) = a < 0 ? -floor(-a / b) : floor(a / b), written as a select
 * on LESS(a, 0); other divisors give no values unless both sides are
 * constants. */
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

/* a op b as an expression, NULL where it cannot be written. */
static const prt_expr *bin_value(prt_expr_builder *eb, int32_t kind, const prt_expr *a,
                                 const prt_expr *b)
{
    const prt_expr *q;
    int64_t vb;
    switch (kind) {
    case BIN_R_ADD:
        return eb->operation(eb, PRT_DIM_SUM, a, b);
    case BIN_R_SUB:
        return eb->operation(eb, PRT_DIM_SUB, a, b);
    case BIN_R_MUL:
        return eb->operation(eb, PRT_DIM_PROD, a, b);
    case BIN_R_MAX:
        return eb->operation(eb, PRT_DIM_MAX, a, b);
    case BIN_R_MIN:
        return eb->operation(eb, PRT_DIM_MIN, a, b);
    case BIN_R_DIV:
        return trunc_div(eb, a, b);
    case BIN_R_MOD:
    case BIN_R_FMOD:
        /* a - b * q, q floored (Mod) or truncated (fmod), by a constant. */
        if (!eb->is_constant(eb, b, &vb) || vb == 0)
            return NULL;
        q = kind == BIN_R_MOD ? eb->operation(eb, PRT_DIM_FLOOR_DIV, a, b)
                              : trunc_div(eb, a, b);
        return q ? eb->operation(eb, PRT_DIM_SUB, a,
                                 eb->operation(eb, PRT_DIM_PROD, b, q))
                 : NULL;
    default:
        return NULL;
    }
}

/* Elementwise on the known values, a single value broadcast. */
static prt_status bin_values(op_object *o, const prt_dim_exprs *in_dims,
                             const prt_dim_exprs *in_values, int32_t nb_in,
                             const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                             prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims), kind = bin_row_kind(o);
    (void)in_dims;
    if (n < 0 || o->cls->kind == BIN_MEAN)
        return PRT_OK;
    for (int32_t k = 0; k < nb_in; k++)
        if (in_values[k].nb_dims < 0 ||
            (in_values[k].nb_dims != n && in_values[k].nb_dims != 1))
            return PRT_OK;
    for (int32_t i = 0; i < n; i++) {
        const prt_expr *v = in_values[0].d[in_values[0].nb_dims == 1 ? 0 : i];
        for (int32_t k = 1; k < nb_in && v; k++)
            v = bin_value(eb, kind, v, in_values[k].d[in_values[k].nb_dims == 1 ? 0 : i]);
        if (!v)
            return PRT_OK; /* not expressible: the values stay unknown */
        out_values->d[i] = v;
    }
    out_values->nb_dims = n;
    return PRT_OK;
}

/* ---- classes ------------------------------------------------------------------ */

#define BIN_CLASS(k, nb_max, dt, shp, inf)                                               \
    {                                                                                    \
        .kind = (k), .min_inputs = (nb_max) == 2 ? 2 : 1, .max_inputs = (nb_max),        \
        .dtypes = (dt), .size = sizeof(bin_op), .alias_input = -1, .parse = bin_parse,   \
        .serialize = bin_serialize, .shapes = (shp), .infer = (inf), .run = bin_run,     \
        .values = bin_values,                                                            \
    }

/* Every number: the float and integer types, the wide ones too. */
#define BIN_DT_NUMERIC (EW_DT_NUMERIC | OP_DT_WIDE)

/* The same with CHW8 (bin_chw8_ok). */
#define BIN_CLASS8(k)                                                                    \
    {                                                                                    \
        .kind = (k), .min_inputs = 2, .max_inputs = 2, .dtypes = BIN_DT_NUMERIC,         \
        .size = sizeof(bin_op), .alias_input = -1, .parse = bin_parse,                   \
        .serialize = bin_serialize, .shapes = bin_shapes, .infer = bin_infer,            \
        .run = bin_run, .values = bin_values, .chw8_ok = bin_chw8_ok,                    \
    }

static const op_class add_class = BIN_CLASS8(BIN_ADD);
static const op_class sub_class = BIN_CLASS8(BIN_SUB);
static const op_class mul_class = BIN_CLASS8(BIN_MUL);
static const op_class div_class = BIN_CLASS8(BIN_DIV);
static const op_class mod_class =
    BIN_CLASS(BIN_MOD, 2, BIN_DT_NUMERIC, bin_shapes, bin_infer);
static const op_class max_class =
    BIN_CLASS(BIN_MAX, OP_MAX_INPUTS, BIN_DT_NUMERIC, bin_shapes, bin_infer);
static const op_class min_class =
    BIN_CLASS(BIN_MIN, OP_MAX_INPUTS, BIN_DT_NUMERIC, bin_shapes, bin_infer);
static const op_class sum_class = BIN_CLASS(
    BIN_SUM, OP_MAX_INPUTS, EW_DT_FLOATS | OP_DT(PRT_FLOAT64), bin_shapes, bin_infer);
static const op_class mean_class = BIN_CLASS(
    BIN_MEAN, OP_MAX_INPUTS, EW_DT_FLOATS | OP_DT(PRT_FLOAT64), bin_shapes, bin_infer);
static const op_class bit_shift_class = BIN_CLASS(
    BIN_BITSHIFT, 2,
    OP_DT(PRT_UINT8) | OP_DT(PRT_UINT16) | OP_DT(PRT_UINT32) | OP_DT(PRT_UINT64),
    bin_shapes, bin_infer);
static const op_class prelu_class =
    BIN_CLASS(BIN_PRELU, 2,
              EW_DT_FLOATS | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) | OP_DT(PRT_FLOAT64) |
                  OP_DT(PRT_UINT32) | OP_DT(PRT_UINT64),
              prelu_shapes, prelu_infer);

static const prt_field_schema mod_schema[] = {
    {"fmod", PRT_FIELD_INT32, 1,
     "0 (default): the remainder has the divisor's sign; 1: the dividend's (C fmod)"},
};
static const prt_field_schema bit_shift_schema[] = {
    {"direction", PRT_FIELD_CHAR, -1, "\"LEFT\" or \"RIGHT\" (required)"},
};

const prt_plugin_creator op_add_creator = OP_CREATOR("Add", add_class, NULL, 0);
const prt_plugin_creator op_sub_creator = OP_CREATOR("Sub", sub_class, NULL, 0);
const prt_plugin_creator op_mul_creator = OP_CREATOR("Mul", mul_class, NULL, 0);
const prt_plugin_creator op_div_creator = OP_CREATOR("Div", div_class, NULL, 0);
const prt_plugin_creator op_mod_creator = OP_CREATOR("Mod", mod_class, mod_schema, 1);
const prt_plugin_creator op_max_creator = OP_CREATOR("Max", max_class, NULL, 0);
const prt_plugin_creator op_min_creator = OP_CREATOR("Min", min_class, NULL, 0);
const prt_plugin_creator op_sum_creator = OP_CREATOR("Sum", sum_class, NULL, 0);
const prt_plugin_creator op_mean_creator = OP_CREATOR("Mean", mean_class, NULL, 0);
const prt_plugin_creator op_bit_shift_creator =
    OP_CREATOR("BitShift", bit_shift_class, bit_shift_schema, 1);
const prt_plugin_creator op_prelu_creator = OP_CREATOR("PRelu", prelu_class, NULL, 0);

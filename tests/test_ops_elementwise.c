/*
 * The elementwise and unary built-ins of issue 8 (namespace "plugrt"), each
 * in a one-layer network that is built, run, serialized, loaded through an
 * empty registry and run again (both runs must give the same bytes), and
 * compared with a plain C reference written here in double or int64:
 *
 *  - Mod (fmod 0 and 1), Max, Min, Sum, Mean (1 to 4 inputs), BitShift,
 *    PRelu, Pow (every pair of base and exponent dtypes) and Add..Div on
 *    random broadcast shapes (ranks 0 to 4, dims of 0 and 1, long rows),
 *    every dtype each takes; integer wrap-around and extremes; division by
 *    zero as an error;
 *  - Less, LessOrEqual, Greater, GreaterOrEqual, Equal, And, Or, Xor, Not,
 *    IsNaN, IsInf (detect_positive/detect_negative) with NaN, -0 and
 *    infinities;
 *  - the float functions (Exp ... ThresholdedRelu, HardSigmoid, HardSwish,
 *    Gelu both ways) on float32, float16, bfloat16, with their special
 *    values and non-default attributes;
 *  - Abs, Neg, Sign over every dtype, integer extremes;
 *  - Clip with bounds as inputs (min only, max only, both, none, min > max)
 *    and as fields, every numeric dtype;
 *  - Cast and CastLike between every pair of dtypes (saturation, NaN,
 *    rounding), the saturate field;
 *  - the errors: unknown attribute values, missing fields, dtypes refused,
 *    shapes that do not broadcast;
 *  - allocation failure at every point of a Mean and a Gelu build, load and
 *    run.
 * The tensor and one-op network helpers are op_testutil.h's.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "op_testutil.h"

static const int32_t all_types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8,
                                    PRT_UINT8,   PRT_INT32,   PRT_INT64,    PRT_BOOL};
#define NB_TYPES 8
#define NB_NUMERIC 7 /* all_types without bool */
static const int32_t float_types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
#define NB_FLOAT_TYPES 3

/* The tolerance of a result computed in float32 and rounded once to dt,
 * relative to max(1, |want|). */
static double tol_for(int32_t dt, double f32_tol)
{
    return dt == PRT_FLOAT16 ? 2e-3 : dt == PRT_BFLOAT16 ? 1.6e-2 : f32_tol;
}

/* v as dt holds it: rounded for floats (overflowing to inf), wrapped for
 * integers (v must then be an integer in int64's range), 0/1 for bool. */
static double as_dtype(int32_t dt, double v)
{
    ot_tensor t = ot_make(dt, D0());
    double r;
    if (!ot_is_float(dt) && dt != PRT_BOOL) {
        int64_t i = (int64_t)v;
        switch (dt) {
        case PRT_INT8:
            v = (int8_t)(uint8_t)(uint64_t)i;
            break;
        case PRT_UINT8:
            v = (uint8_t)(uint64_t)i;
            break;
        case PRT_INT32:
            v = (int32_t)(uint32_t)(uint64_t)i;
            break;
        default:
            break;
        }
    }
    ot_set(&t, 0, dt == PRT_BOOL ? (v != 0) : v);
    r = ot_get(&t, 0);
    ot_free(&t);
    return r;
}

/* ot_run_op on zeroed inputs of dtypes dt[k] and dims d[k] fails with
 * `want` and a message containing sub. */
static void expect_err(const char *file, int line, const char *op, const prt_field *f,
                       int32_t nf, int32_t nb, const int32_t *dt, const prt_dims *d,
                       prt_status want, const char *sub)
{
    ot_tensor in[4], y = {0};
    for (int32_t k = 0; k < nb; k++)
        in[k] = ot_make(dt[k], d[k]);
    tu_check_err(ot_run_op(op, f, nf, in, nb, &y), want, sub, file, line, op);
    ot_free(&y);
    for (int32_t k = 0; k < nb; k++)
        ot_free(&in[k]);
}
#define EXPECT_ERR(op, f, nf, nb, dts, dims, want, sub)                                  \
    expect_err(__FILE__, __LINE__, op, f, nf, nb, (const int32_t[])dts,                  \
               (const prt_dims[])dims, want, sub)
/* Braced lists as macro arguments. */
#define L(...)                                                                           \
    {                                                                                    \
        __VA_ARGS__                                                                      \
    }

/* ---- random broadcast shapes ------------------------------------------------ */

static prt_dims bcast_of(const prt_dims *in, int32_t nb);

/* nb input shapes that broadcast together, and their broadcast: ranks 0 to
 * 4, dims 1 to 5, now and then a 0 (an empty output). */
static void random_bcast(tu_rng *r, int32_t nb, prt_dims *in, prt_dims *out)
{
    prt_dims full;
    full.nb_dims = (int32_t)tu_rng_range(r, 0, 4);
    for (int32_t i = 0; i < full.nb_dims; i++)
        full.d[i] = tu_rng_range(r, 0, 30) == 0 ? 0 : tu_rng_range(r, 1, 5);
    for (int32_t k = 0; k < nb; k++) {
        int32_t rk = (int32_t)tu_rng_range(r, 0, full.nb_dims);
        in[k].nb_dims = rk;
        for (int32_t i = 0; i < rk; i++) {
            int64_t d = full.d[full.nb_dims - rk + i];
            in[k].d[i] = tu_rng_range(r, 0, 2) == 0 ? 1 : d;
        }
    }
    *out = bcast_of(in, nb);
}

/* The broadcast of nb shapes (which must broadcast). */
static prt_dims bcast_of(const prt_dims *in, int32_t nb)
{
    prt_dims out;
    out.nb_dims = 0;
    for (int32_t k = 0; k < nb; k++)
        if (in[k].nb_dims > out.nb_dims)
            out.nb_dims = in[k].nb_dims;
    for (int32_t i = 0; i < out.nb_dims; i++) {
        out.d[i] = 1;
        for (int32_t k = 0; k < nb; k++) {
            int32_t j = i - (out.nb_dims - in[k].nb_dims);
            if (j >= 0 && in[k].d[j] != 1)
                out.d[i] = in[k].d[j];
        }
    }
    return out;
}

/* Fixed cases: same, scalar, long rows (past a kernel's chunk), a column,
 * both sides, empty. */
static const struct {
    prt_dims a, b;
} fixed_cases[] = {
    {{3, {2, 3, 4}}, {3, {2, 3, 4}}},
    {{2, {3, 300}}, {0, {0}}},
    {{1, {300}}, {2, {2, 300}}},
    {{2, {3, 1}}, {2, {3, 300}}},
    {{3, {1, 3, 1}}, {3, {2, 1, 4}}},
    {{2, {0, 3}}, {1, {3}}},
    {{1, {1}}, {1, {1}}},
};
#define NB_FIXED ((int)(sizeof fixed_cases / sizeof fixed_cases[0]))

/* Case c's two input shapes and their broadcast: the fixed cases, then
 * random ones. */
static prt_dims pick_pair(tu_rng *r, int c, prt_dims *dims)
{
    prt_dims yd;
    if (c >= NB_FIXED) {
        random_bcast(r, 2, dims, &yd);
        return yd;
    }
    dims[0] = fixed_cases[c].a;
    dims[1] = fixed_cases[c].b;
    return bcast_of(dims, 2);
}

/* Random values for an op's input: floats scaled, integers small (or full
 * range with `wide`). */
static ot_tensor random_input(int32_t dt, prt_dims d, tu_rng *r, double scale, int wide)
{
    ot_tensor t = ot_random(dt, d, r, 0);
    for (int64_t i = 0; i < tu_volume(&d); i++) {
        if (ot_is_float(dt))
            ot_set(&t, i, ot_get(&t, i) * scale);
        else if (wide && dt == PRT_INT64) /* within double's 53 bits */
            ot_set(&t, i, (double)((int64_t)(tu_rng_u64(r) >> 11) - ((int64_t)1 << 52)));
        else if (wide && dt != PRT_BOOL)
            ot_set(&t, i, as_dtype(dt, (double)(tu_rng_u64(r) & 0xffffffffu)));
    }
    return t;
}

/* ---- binary and variadic arithmetic ------------------------------------------- */

enum {
    A_ADD,
    A_SUB,
    A_MUL,
    A_DIV,
    A_MOD,
    A_FMOD,
    A_MAX,
    A_MIN,
    A_SUM,
    A_MEAN,
    A_SHL,
    A_SHR,
    A_PRELU
};

static const struct {
    const char *name;
    int32_t kind, min_in, max_in;
    uint32_t dtypes; /* bits of all_types' indices */
} arith_ops[] = {
    {"Add", A_ADD, 2, 2, 0x7f},      {"Sub", A_SUB, 2, 2, 0x7f},
    {"Mul", A_MUL, 2, 2, 0x7f},      {"Div", A_DIV, 2, 2, 0x7f},
    {"Mod", A_MOD, 2, 2, 0x7f},      {"Mod", A_FMOD, 2, 2, 0x7f},
    {"Max", A_MAX, 1, 4, 0x7f},      {"Min", A_MIN, 1, 4, 0x7f},
    {"Sum", A_SUM, 1, 4, 0x07},      {"Mean", A_MEAN, 1, 4, 0x07},
    {"BitShift", A_SHL, 2, 2, 0x10}, {"BitShift", A_SHR, 2, 2, 0x10},
    {"PRelu", A_PRELU, 2, 2, 0x67},
};
#define NB_ARITH ((int)(sizeof arith_ops / sizeof arith_ops[0]))

/* a op b in double (floats) or exactly in int64, wrapped later. */
static double ref_arith(int32_t kind, int32_t dt, double a, double b)
{
    int fl = ot_is_float(dt);
    int64_t x = (int64_t)a, z = (int64_t)b, r;
    switch (kind) {
    case A_ADD:
    case A_SUM:
    case A_MEAN:
        return fl ? a + b : (double)(int64_t)((uint64_t)x + (uint64_t)z);
    case A_SUB:
        return fl ? a - b : (double)(int64_t)((uint64_t)x - (uint64_t)z);
    case A_MUL:
        return fl ? a * b : (double)(int64_t)((uint64_t)x * (uint64_t)z);
    case A_DIV:
        return fl ? a / b : (double)(x / z);
    case A_MOD:
        if (fl) {
            double m = fmod(a, b);
            return m != 0 && (m < 0) != (b < 0) ? m + b : m;
        }
        r = x % z;
        return (double)(r != 0 && (r < 0) != (z < 0) ? r + z : r);
    case A_FMOD:
        return fl ? fmod(a, b) : (double)(x % z);
    case A_MAX:
        return a != a || a > b ? a : b;
    case A_MIN:
        return a != a || a < b ? a : b;
    case A_SHL:
        return z >= 8 ? 0 : (double)((x << z) & 0xff);
    case A_SHR:
        return z >= 8 ? 0 : (double)(x >> z);
    default:
        return a < 0 ? (fl ? a * b : (double)(int64_t)((uint64_t)x * (uint64_t)z)) : a;
    }
}

static int test_arith(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 2024);
    for (int op = 0; op < NB_ARITH; op++)
        for (int t = 0; t < NB_NUMERIC; t++) {
            int32_t dt = all_types[t], kind = arith_ops[op].kind;
            const char *dir = kind == A_SHL ? "LEFT" : "RIGHT";
            int32_t fmod1 = kind == A_FMOD;
            prt_field f;
            int32_t nf = 0;
            if (!((arith_ops[op].dtypes >> t) & 1u))
                continue;
            if (kind == A_MOD || kind == A_FMOD) {
                f = ot_fld_i32("fmod", &fmod1, 1);
                nf = 1;
            } else if (kind == A_SHL || kind == A_SHR) {
                f = ot_fld_str("direction", dir);
                nf = 1;
            }
            for (int c = 0; c < NB_FIXED + 14; c++) {
                prt_dims dims[4], yd;
                ot_tensor in[4], y;
                int32_t nb = arith_ops[op].min_in, i;
                int nonzero = kind == A_DIV || kind == A_MOD || kind == A_FMOD;
                double *want;
                char what[160];
                if (arith_ops[op].max_in > 2)
                    nb = (int32_t)tu_rng_range(&rng, 1, 4);
                if (c < NB_FIXED) {
                    nb = nb == 1 ? 1 : 2;
                    dims[0] = fixed_cases[c].a;
                    dims[1] = fixed_cases[c].b;
                    if (nb == 1)
                        dims[0] = fixed_cases[c].b;
                    yd = bcast_of(dims, nb);
                } else {
                    random_bcast(&rng, nb, dims, &yd);
                }
                /* PRelu's slope broadcasts to X, which keeps its dims. */
                if (kind == A_PRELU) {
                    dims[0] = yd;
                    if (dims[1].nb_dims > yd.nb_dims)
                        continue;
                }
                for (i = 0; i < nb; i++) {
                    in[i] = random_input(dt, dims[i], &rng, 4.0, 0);
                    for (int64_t e = 0; e < tu_volume(&dims[i]); e++) {
                        if (nonzero && i == 1 && ot_get(&in[i], e) == 0)
                            ot_set(&in[i], e, 3);
                        if ((kind == A_SHL || kind == A_SHR) && i == 1)
                            ot_set(&in[i], e, (double)tu_rng_range(&rng, 0, 9));
                    }
                }
                /* Special values now and then. */
                if (ot_is_float(dt) && tu_volume(&dims[0]) > 3 && kind != A_MOD &&
                    kind != A_FMOD) {
                    ot_set(&in[0], 0, NAN);
                    ot_set(&in[0], 1, INFINITY);
                    ot_set(&in[0], 2, -0.0);
                }
                want = malloc(sizeof(double) * (size_t)(tu_volume(&yd) + 1));
                REQUIRE(want != NULL);
                for (int64_t e = 0; e < tu_volume(&yd); e++) {
                    int64_t idx[PRT_MAX_DIMS];
                    double v;
                    ot_unravel(&yd, e, idx);
                    v = ot_get(&in[0], ot_bcast_at(&dims[0], &yd, idx));
                    for (i = 1; i < nb; i++) {
                        v = ref_arith(kind, dt, v,
                                      ot_get(&in[i], ot_bcast_at(&dims[i], &yd, idx)));
                        /* Each step rounds, as the op's does. */
                        v = as_dtype(dt, v);
                    }
                    if (kind == A_MEAN)
                        v = as_dtype(dt, v / nb);
                    want[e] = v;
                }
                snprintf(what, sizeof what, "%s%s %s case %d (%d inputs)",
                         arith_ops[op].name, kind == A_FMOD ? " fmod" : "",
                         prt_dtype_name(dt), c, (int)nb);
                CHECK_OK(ot_run_op(arith_ops[op].name, &f, nf, in, nb, &y));
                if (y.data) {
                    CHECK(y.dtype == dt);
                    ot_check_close(what, &y, &yd, want,
                                   ot_is_float(dt) ? tol_for(dt, 2e-6) : 0);
                } else {
                    fprintf(stderr, "%s: %s\n", what, prt_last_error());
                }
                free(want);
                for (i = 0; i < nb; i++)
                    ot_free(&in[i]);
                ot_free(&y);
            }
        }
    return 0;
}

/* Integer extremes: wrap-around, INT_MIN % -1, Python's and C's remainder. */
static int test_arith_ints(void)
{
    static const int64_t a32[] = {INT32_MIN, INT32_MAX, -7, 7, -7, 7, INT32_MIN, 5};
    static const int64_t b32[] = {-1, 1, 3, -3, -3, 3, INT32_MAX, 0 /* replaced */};
    ot_tensor in[2], y;
    int32_t fm[2] = {0, 1};
    /* Mod fmod 0: divisor's sign; fmod 1: dividend's. */
    static const double mod0[] = {0, 0, 2, -2, -1, 1, INT32_MAX - 1, 0};
    static const double mod1[] = {0, 0, -1, 1, -1, 1, -1, 0};
    for (int k = 0; k < 2; k++) {
        prt_field f = ot_fld_i32("fmod", &fm[k], 1);
        in[0] = ot_make(PRT_INT32, D1(7));
        in[1] = ot_make(PRT_INT32, D1(7));
        for (int i = 0; i < 7; i++) {
            ot_set(&in[0], i, (double)a32[i]);
            ot_set(&in[1], i, (double)b32[i]);
        }
        CHECK_OK(ot_run_op("Mod", &f, 1, in, 2, &y));
        if (y.data)
            ot_check_close(k ? "Mod fmod int32" : "Mod int32", &y, &in[0].dims,
                           k ? mod1 : mod0, 0);
        ot_free(&y);
        /* A zero divisor fails the run. */
        ot_set(&in[1], 3, 0);
        CHECK_ERR(ot_run_op("Mod", &f, 1, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
                  "integer division by zero (int32)");
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* Max/Min of int64 extremes, Sum over more inputs than two (floats). */
    {
        static const double w[] = {(double)INT64_MAX, 3};
        in[0] = ot_make(PRT_INT64, D1(2));
        in[1] = ot_make(PRT_INT64, D1(2));
        ((int64_t *)in[0].data)[0] = INT64_MAX;
        ((int64_t *)in[0].data)[1] = 3;
        ((int64_t *)in[1].data)[0] = INT64_MIN;
        ((int64_t *)in[1].data)[1] = -3;
        CHECK_OK(ot_run_op("Max", NULL, 0, in, 2, &y));
        if (y.data)
            CHECK(((int64_t *)y.data)[0] == INT64_MAX && ((int64_t *)y.data)[1] == 3);
        ot_free(&y);
        CHECK_OK(ot_run_op("Min", NULL, 0, in, 2, &y));
        if (y.data)
            CHECK(((int64_t *)y.data)[0] == INT64_MIN && ((int64_t *)y.data)[1] == -3);
        ot_free(&y);
        (void)w;
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* ---- Pow ---------------------------------------------------------------------- */

static int test_pow(void)
{
    static const int32_t bases[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT32,
                                    PRT_INT64};
    tu_rng rng;
    tu_rng_seed(&rng, 77);
    for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++)
        for (int et = 0; et < NB_NUMERIC; et++)
            for (int c = 0; c < NB_FIXED + 4; c++) {
                int32_t xt = bases[bi], yt = all_types[et];
                prt_dims dims[2], yd;
                ot_tensor in[2], y;
                double *want;
                char what[128];
                yd = pick_pair(&rng, c, dims);
                in[0] = random_input(xt, dims[0], &rng, 3.0, 0);
                in[1] = ot_make(yt, dims[1]);
                for (int64_t e = 0; e < tu_volume(&dims[1]); e++) {
                    /* Integer exponents from -2 to 4; floats in [-2, 2]. */
                    double v = ot_is_float(yt) ? tu_rng_uniform(&rng) * 4 - 2
                                               : (double)tu_rng_range(&rng, -2, 4);
                    if (yt == PRT_UINT8 && v < 0)
                        v = -v;
                    if (!ot_is_float(xt) && !ot_is_float(yt) && v < 0)
                        v = 2; /* 0 to a negative integer power is an error */
                    ot_set(&in[1], e, yt == PRT_BOOL ? (v > 0) : v);
                }
                want = malloc(sizeof(double) * (size_t)(tu_volume(&yd) + 1));
                REQUIRE(want != NULL);
                for (int64_t e = 0; e < tu_volume(&yd); e++) {
                    int64_t idx[PRT_MAX_DIMS];
                    double a, b, r;
                    ot_unravel(&yd, e, idx);
                    a = ot_get(&in[0], ot_bcast_at(&dims[0], &yd, idx));
                    b = ot_get(&in[1], ot_bcast_at(&dims[1], &yd, idx));
                    r = pow(a, b);
                    if (!ot_is_float(xt)) {
                        int64_t lo = xt == PRT_INT32 ? INT32_MIN : INT64_MIN;
                        int64_t hi = xt == PRT_INT32 ? INT32_MAX : INT64_MAX;
                        r = r != r            ? 0
                            : r <= (double)lo ? (double)lo
                            : r >= (double)hi ? (double)hi
                                              : trunc(r);
                    }
                    /* Integers are truncated and saturated already. */
                    want[e] = ot_is_float(xt) ? as_dtype(xt, r) : r;
                }
                snprintf(what, sizeof what, "Pow %s^%s case %d", prt_dtype_name(xt),
                         prt_dtype_name(yt), c);
                CHECK_OK(ot_run_op("Pow", NULL, 0, in, 2, &y));
                if (y.data) {
                    CHECK(y.dtype == xt);
                    ot_check_close(what, &y, &yd, want,
                                   ot_is_float(xt) ? tol_for(xt, 1e-5) : 0);
                }
                free(want);
                ot_free(&in[0]);
                ot_free(&in[1]);
                ot_free(&y);
            }
    /* float32 to a scalar 2 or 3 (the fast paths): within an ulp of x^y
     * rounded once from double, across magnitudes, signs, 0, infinities,
     * NaN and overflow. */
    for (int e = 2; e <= 3; e++) {
        ot_tensor in[2], y;
        const int64_t n = 1000;
        in[0] = ot_make(PRT_FLOAT32, D1(n));
        in[1] = ot_make(PRT_FLOAT32, D0());
        ((float *)in[1].data)[0] = (float)e;
        for (int64_t i = 0; i < n; i++)
            ((float *)in[0].data)[i] =
                i < 6 ? (float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3e30f}[i]
                      : (float)((tu_rng_uniform(&rng) * 2 - 1) *
                                pow(10.0, tu_rng_range(&rng, -15, 15)));
        CHECK_OK(ot_run_op("Pow", NULL, 0, in, 2, &y));
        for (int64_t i = 0; y.data && i < n; i++) {
            const float x = ((float *)in[0].data)[i], got = ((float *)y.data)[i];
            const float want = (float)pow((double)x, (double)e);
            if (!(got == want || (got != got && want != want) ||
                  nextafterf(want, INFINITY) == got ||
                  nextafterf(want, -INFINITY) == got)) {
                CHECK(!"Pow by a scalar 2 or 3 within an ulp");
                fprintf(stderr, "  %.9g^%d: got %.9g, want %.9g\n", x, e, got, want);
                break;
            }
        }
        ot_free(&in[0]);
        ot_free(&in[1]);
        ot_free(&y);
    }
    /* Integers: exact powers, wrap-around, negative exponents, 0^-1. */
    {
        static const int64_t xs[] = {3, -2, 7, 1, -1, -1, 5, 2};
        static const int64_t ys[] = {4, 3, 30, -5, -3, -4, -1, 64};
        ot_tensor in[2], y;
        double want[8];
        in[0] = ot_make(PRT_INT64, D1(8));
        in[1] = ot_make(PRT_INT64, D1(8));
        for (int i = 0; i < 8; i++) {
            ((int64_t *)in[0].data)[i] = xs[i];
            ((int64_t *)in[1].data)[i] = ys[i];
        }
        want[0] = 81;
        want[1] = -8;
        /* 7^30 wraps modulo 2^64. */
        {
            uint64_t p = 1;
            for (int i = 0; i < 30; i++)
                p *= 7;
            want[2] = (double)(int64_t)p;
        }
        want[3] = 1;
        want[4] = -1;
        want[5] = 1;
        want[6] = 0;
        want[7] = 0; /* 2^64 wraps to 0 */
        CHECK_OK(ot_run_op("Pow", NULL, 0, in, 2, &y));
        if (y.data) {
            ot_check_close("Pow int64", &y, &in[0].dims, want, 0);
            CHECK(((int64_t *)y.data)[2] == (int64_t)(uint64_t)want[2] ||
                  ((int64_t *)y.data)[2] != 0);
        }
        ot_free(&y);
        ((int64_t *)in[0].data)[0] = 0;
        ((int64_t *)in[1].data)[0] = -1;
        CHECK_ERR(ot_run_op("Pow", NULL, 0, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
                  "integer 0 to a negative power");
        ot_free(&in[0]);
        ot_free(&in[1]);
        /* The base must be float or int32/int64. */
        EXPECT_ERR("Pow", NULL, 0, 2, L(PRT_INT8, PRT_INT8), L(D1(2), D1(2)),
                   PRT_ERR_UNSUPPORTED, "input 0 dtype int8 is not supported here");
    }
    return 0;
}

/* ---- comparisons and logic ------------------------------------------------------- */

enum { C_EQ, C_LT, C_LE, C_GT, C_GE, C_AND, C_OR, C_XOR };

static int test_compare(void)
{
    static const char *const names[] = {
        "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"};
    tu_rng rng;
    tu_rng_seed(&rng, 31);
    for (int kind = 0; kind < 8; kind++)
        for (int t = 0; t < NB_TYPES; t++)
            for (int c = 0; c < NB_FIXED + 6; c++) {
                int32_t dt = all_types[t];
                prt_dims dims[2], yd;
                ot_tensor in[2], y;
                double *want;
                char what[128];
                if ((kind >= C_AND) != (dt == PRT_BOOL) &&
                    !(kind == C_EQ && dt == PRT_BOOL))
                    continue;
                yd = pick_pair(&rng, c, dims);
                for (int k = 0; k < 2; k++) {
                    in[k] = ot_random(dt, dims[k], &rng, 0);
                    /* Few distinct values, so equal pairs are common. */
                    for (int64_t e = 0; e < tu_volume(&dims[k]); e++)
                        if (dt != PRT_BOOL)
                            ot_set(&in[k], e,
                                   ot_is_float(dt)
                                       ? floor(ot_get(&in[k], e) * 2)
                                       : (double)((int64_t)ot_get(&in[k], e) % 3));
                }
                if (ot_is_float(dt) && tu_volume(&dims[0]) > 3) {
                    ot_set(&in[0], 0, NAN);
                    ot_set(&in[0], 1, -0.0);
                    ot_set(&in[0], 2, -INFINITY);
                }
                want = malloc(sizeof(double) * (size_t)(tu_volume(&yd) + 1));
                REQUIRE(want != NULL);
                for (int64_t e = 0; e < tu_volume(&yd); e++) {
                    int64_t idx[PRT_MAX_DIMS];
                    double a, b;
                    ot_unravel(&yd, e, idx);
                    a = ot_get(&in[0], ot_bcast_at(&dims[0], &yd, idx));
                    b = ot_get(&in[1], ot_bcast_at(&dims[1], &yd, idx));
                    switch (kind) {
                    case C_EQ:
                        want[e] = a == b;
                        break;
                    case C_LT:
                        want[e] = a < b;
                        break;
                    case C_LE:
                        want[e] = a <= b;
                        break;
                    case C_GT:
                        want[e] = a > b;
                        break;
                    case C_GE:
                        want[e] = a >= b;
                        break;
                    case C_AND:
                        want[e] = a != 0 && b != 0;
                        break;
                    case C_OR:
                        want[e] = a != 0 || b != 0;
                        break;
                    default:
                        want[e] = (a != 0) != (b != 0);
                        break;
                    }
                }
                snprintf(what, sizeof what, "%s %s case %d", names[kind],
                         prt_dtype_name(dt), c);
                CHECK_OK(ot_run_op(names[kind], NULL, 0, in, 2, &y));
                if (y.data) {
                    CHECK(y.dtype == PRT_BOOL);
                    ot_check_close(what, &y, &yd, want, 0);
                }
                free(want);
                ot_free(&in[0]);
                ot_free(&in[1]);
                ot_free(&y);
            }
    /* Not; IsNaN and IsInf with each detect combination. */
    {
        ot_tensor x = ot_make(PRT_BOOL, D2(3, 4)), y;
        double want[600];
        for (int i = 0; i < 12; i++) {
            ot_set(&x, i, i % 3 == 0);
            want[i] = i % 3 != 0;
        }
        CHECK_OK(ot_run_op("Not", NULL, 0, &x, 1, &y));
        if (y.data)
            ot_check_close("Not", &y, &x.dims, want, 0);
        ot_free(&x);
        ot_free(&y);
        for (int t = 0; t < NB_FLOAT_TYPES; t++)
            for (int det = 0; det < 5; det++) {
                int32_t pos = det & 1, neg = (det >> 1) & 1;
                prt_field f[2] = {ot_fld_i32("detect_positive", &pos, 1),
                                  ot_fld_i32("detect_negative", &neg, 1)};
                const char *name = det == 4 ? "IsNaN" : "IsInf";
                char what[64];
                x = ot_random(float_types[t], D2(2, 300), &rng, 0);
                for (int i = 0; i < 600; i += 7)
                    ot_set(&x, i, i % 3 == 0 ? INFINITY : i % 3 == 1 ? -INFINITY : NAN);
                for (int i = 0; i < 600; i++) {
                    double v = ot_get(&x, i);
                    want[i] = det == 4
                                  ? v != v
                                  : (pos && v == INFINITY) || (neg && v == -INFINITY);
                }
                snprintf(what, sizeof what, "%s %d %s", name, det,
                         prt_dtype_name(float_types[t]));
                CHECK_OK(ot_run_op(name, f, det == 4 ? 0 : 2, &x, 1, &y));
                if (y.data)
                    ot_check_close(what, &y, &x.dims, want, 0);
                ot_free(&x);
                ot_free(&y);
            }
        /* IsInf's defaults detect both. */
        x = ot_make(PRT_FLOAT32, D1(3));
        ot_set(&x, 0, INFINITY);
        ot_set(&x, 1, -INFINITY);
        ot_set(&x, 2, 1);
        want[0] = want[1] = 1;
        want[2] = 0;
        CHECK_OK(ot_run_op("IsInf", NULL, 0, &x, 1, &y));
        if (y.data)
            ot_check_close("IsInf defaults", &y, &x.dims, want, 0);
        ot_free(&y);
        ot_free(&x);
    }
    /* Dtypes refused: Less on bool, Or on ints, Not on floats; shapes. */
    EXPECT_ERR("Less", NULL, 0, 2, L(PRT_BOOL, PRT_BOOL), L(D1(3), D1(3)),
               PRT_ERR_UNSUPPORTED, "input 0 dtype bool is not supported here");
    EXPECT_ERR("Or", NULL, 0, 2, L(PRT_INT32, PRT_INT32), L(D1(3), D1(3)),
               PRT_ERR_UNSUPPORTED, "(supported: bool)");
    EXPECT_ERR("Greater", NULL, 0, 2, L(PRT_INT32, PRT_INT32), L(D1(3), D1(4)),
               PRT_ERR_SHAPE, "inputs A and B");
    EXPECT_ERR("Not", NULL, 0, 1, L(PRT_FLOAT32), L(D1(3)), PRT_ERR_UNSUPPORTED,
               "float32");
    return 0;
}

/* ---- the float functions ------------------------------------------------------------
 */

static double ref_sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}
static double ref_softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
static double ref_hard_sigmoid(double x, double a, double b)
{
    double v = a * x + b;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Fields a case gives. */
enum { F_ALPHA = 1, F_BETA = 2, F_GAMMA = 4, F_TANH = 8 };

typedef struct um_case {
    const char *name;
    double scale; /* inputs uniform in [-scale, scale) */
    float alpha, beta, gamma;
    int fields;
} um_case;

static const um_case um_cases[] = {
    {"Exp", 4, 0, 0, 0, 0},
    {"Log", 4, 0, 0, 0, 0},
    {"Sqrt", 4, 0, 0, 0, 0},
    {"Reciprocal", 4, 0, 0, 0, 0},
    {"Floor", 4, 0, 0, 0, 0},
    {"Ceil", 4, 0, 0, 0, 0},
    {"Round", 4, 0, 0, 0, 0},
    {"Sin", 4, 0, 0, 0, 0},
    {"Cos", 4, 0, 0, 0, 0},
    {"Tan", 1.2, 0, 0, 0, 0},
    {"Asin", 1.2, 0, 0, 0, 0},
    {"Acos", 1.2, 0, 0, 0, 0},
    {"Atan", 4, 0, 0, 0, 0},
    {"Sinh", 4, 0, 0, 0, 0},
    {"Cosh", 4, 0, 0, 0, 0},
    {"Asinh", 4, 0, 0, 0, 0},
    {"Acosh", 4, 0, 0, 0, 0},
    {"Atanh", 1.2, 0, 0, 0, 0},
    {"Tanh", 4, 0, 0, 0, 0},
    {"Erf", 4, 0, 0, 0, 0},
    {"Sigmoid", 8, 0, 0, 0, 0},
    {"Softplus", 8, 0, 0, 0, 0},
    {"Softsign", 8, 0, 0, 0, 0},
    {"Mish", 8, 0, 0, 0, 0},
    {"Gelu", 4, 0, 0, 0, 0},
    {"Gelu", 4, 0, 0, 0, F_TANH},
    {"Elu", 4, 1.0f, 0, 0, 0},
    {"Elu", 4, 0.5f, 0, 0, F_ALPHA},
    {"Selu", 4, 1.67326319217681884765625f, 0, 1.05070102214813232421875f, 0},
    {"Selu", 4, 2.0f, 0, 3.0f, F_ALPHA | F_GAMMA},
    {"Celu", 4, 1.0f, 0, 0, 0},
    {"Celu", 4, 2.0f, 0, 0, F_ALPHA},
    {"LeakyRelu", 4, 0.01f, 0, 0, 0},
    {"LeakyRelu", 4, 0.3f, 0, 0, F_ALPHA},
    {"ThresholdedRelu", 4, 1.0f, 0, 0, 0},
    {"ThresholdedRelu", 4, 0.5f, 0, 0, F_ALPHA},
    {"HardSigmoid", 4, 0.2f, 0.5f, 0, 0},
    {"HardSigmoid", 4, 0.3f, 0.1f, 0, F_ALPHA | F_BETA},
    {"HardSwish", 6, 0, 0, 0, 0},
};
#define NB_UM ((int)(sizeof um_cases / sizeof um_cases[0]))

static double ref_um(const um_case *c, double x)
{
    const char *n = c->name;
    double a = c->alpha, b = c->beta, g = c->gamma;
    if (!strcmp(n, "Exp"))
        return exp(x);
    if (!strcmp(n, "Log"))
        return log(x);
    if (!strcmp(n, "Sqrt"))
        return sqrt(x);
    if (!strcmp(n, "Reciprocal"))
        return 1.0 / x;
    if (!strcmp(n, "Floor"))
        return floor(x);
    if (!strcmp(n, "Ceil"))
        return ceil(x);
    if (!strcmp(n, "Round"))
        return nearbyint(x);
    if (!strcmp(n, "Sin"))
        return sin(x);
    if (!strcmp(n, "Cos"))
        return cos(x);
    if (!strcmp(n, "Tan"))
        return tan(x);
    if (!strcmp(n, "Asin"))
        return asin(x);
    if (!strcmp(n, "Acos"))
        return acos(x);
    if (!strcmp(n, "Atan"))
        return atan(x);
    if (!strcmp(n, "Sinh"))
        return sinh(x);
    if (!strcmp(n, "Cosh"))
        return cosh(x);
    if (!strcmp(n, "Asinh"))
        return asinh(x);
    if (!strcmp(n, "Acosh"))
        return acosh(x);
    if (!strcmp(n, "Atanh"))
        return atanh(x);
    if (!strcmp(n, "Tanh"))
        return tanh(x);
    if (!strcmp(n, "Erf"))
        return erf(x);
    if (!strcmp(n, "Sigmoid"))
        return ref_sigmoid(x);
    if (!strcmp(n, "Softplus"))
        return ref_softplus(x);
    if (!strcmp(n, "Softsign"))
        return x / (1 + fabs(x));
    if (!strcmp(n, "Mish"))
        return x * tanh(ref_softplus(x));
    if (!strcmp(n, "Gelu") && (c->fields & F_TANH))
        return 0.5 * x *
               (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    if (!strcmp(n, "Gelu"))
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    if (!strcmp(n, "Elu"))
        return x < 0 ? a * (exp(x) - 1) : x;
    if (!strcmp(n, "Selu"))
        return x <= 0 ? g * (a * exp(x) - a) : g * x;
    if (!strcmp(n, "Celu"))
        return x != x ? x : fmax(0, x) + fmin(0, a * (exp(x / a) - 1));
    if (!strcmp(n, "LeakyRelu"))
        return x < 0 ? a * x : x;
    if (!strcmp(n, "ThresholdedRelu"))
        return x > a ? x : 0;
    if (!strcmp(n, "HardSigmoid"))
        return ref_hard_sigmoid(x, a, b);
    return x * ref_hard_sigmoid(x, 1.0 / 6, 0.5); /* HardSwish */
}

static int test_unary_math(void)
{
    static const double specials[] = {0.0,  -0.0, INFINITY, -INFINITY, NAN, 0.5,
                                      -0.5, 1.5,  2.5,      -2.5,      1.0, -1.0};
    static const prt_dims shapes[] = {
        {0, {0}}, {1, {1}}, {2, {0, 4}}, {3, {2, 3, 5}}, {2, {3, 300}}};
    tu_rng rng;
    tu_rng_seed(&rng, 5);
    for (int u = 0; u < NB_UM; u++)
        for (int t = 0; t < NB_FLOAT_TYPES; t++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                const um_case *c = &um_cases[u];
                int32_t dt = float_types[t];
                prt_field f[3];
                int32_t nf = 0;
                ot_tensor x = random_input(dt, shapes[s], &rng, c->scale, 0), y;
                int64_t n = tu_volume(&shapes[s]);
                double *want = malloc(sizeof(double) * (size_t)(n + 1));
                char what[128];
                REQUIRE(want != NULL);
                if (c->fields & F_ALPHA)
                    f[nf++] = ot_fld_f32("alpha", &c->alpha);
                if (c->fields & F_BETA)
                    f[nf++] = ot_fld_f32("beta", &c->beta);
                if (c->fields & F_GAMMA)
                    f[nf++] = ot_fld_f32("gamma", &c->gamma);
                if (c->fields & F_TANH)
                    f[nf++] = ot_fld_str("approximate", "tanh");
                for (int64_t i = 0; i < n && i < 12; i++)
                    ot_set(&x, i, specials[i]);
                for (int64_t i = 0; i < n; i++)
                    want[i] = as_dtype(dt, ref_um(c, ot_get(&x, i)));
                snprintf(what, sizeof what, "%s fields %d %s shape %d", c->name,
                         c->fields, prt_dtype_name(dt), (int)s);
                CHECK_OK(ot_run_op(c->name, f, nf, &x, 1, &y));
                if (y.data) {
                    CHECK(y.dtype == dt);
                    ot_check_close(what, &y, &x.dims, want, tol_for(dt, 1e-5));
                } else {
                    fprintf(stderr, "%s: %s\n", what, prt_last_error());
                }
                free(want);
                ot_free(&x);
                ot_free(&y);
            }
    /* Round halves to even, exactly. */
    {
        static const double xs[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 3.5000001};
        static const double want[] = {0, 2, 2, -0.0, -2, -2, 2, 4};
        ot_tensor x = ot_make(PRT_FLOAT32, D1(8)), y;
        for (int i = 0; i < 8; i++)
            ot_set(&x, i, xs[i]);
        CHECK_OK(ot_run_op("Round", NULL, 0, &x, 1, &y));
        if (y.data)
            ot_check_close("Round halves", &y, &x.dims, want, 0);
        ot_free(&x);
        ot_free(&y);
    }
    /* Errors: integers refused, attribute values, fields not in the schema. */
    {
        ot_tensor x = ot_make(PRT_INT32, D1(4)), y;
        float zero = 0.0f, one = 1.0f;
        prt_field f = ot_fld_str("approximate", "erf");
        prt_plugin *p = NULL;
        CHECK_ERR(ot_run_op("Exp", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported (supported: float32, float16, "
                  "bfloat16 or float64)");
        CHECK_ERR(ot_make_op("Gelu", &f, 1, &p), PRT_ERR_UNSUPPORTED,
                  "approximate 'erf' is not supported (supported: 'none' or 'tanh')");
        f = ot_fld_f32("alpha", &zero);
        CHECK_ERR(ot_make_op("Celu", &f, 1, &p), PRT_ERR_UNSUPPORTED, "alpha 0");
        f = ot_fld_f32("beta", &one);
        CHECK_ERR(ot_make_op("Elu", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "unknown field 'beta' (accepted: alpha)");
        CHECK_ERR(ot_make_op("Sigmoid", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "it takes no fields");
        ot_free(&x);
    }
    return 0;
}

/* ---- Abs, Neg, Sign ---------------------------------------------------------------- */

static int test_abs_neg_sign(void)
{
    static const char *const names[] = {"Abs", "Neg", "Sign"};
    tu_rng rng;
    tu_rng_seed(&rng, 9);
    for (int k = 0; k < 3; k++)
        for (int t = 0; t < NB_NUMERIC; t++) {
            int32_t dt = all_types[t];
            ot_tensor x = random_input(dt, D2(3, 100), &rng, 5.0, 1), y;
            double want[300];
            char what[64];
            int64_t lo = 0, hi = 0;
            if (k == 1 && dt == PRT_UINT8) {
                CHECK_ERR(ot_run_op("Neg", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                          "uint8");
                ot_free(&x);
                continue;
            }
            switch (dt) {
            case PRT_INT8:
                lo = INT8_MIN, hi = INT8_MAX;
                break;
            case PRT_UINT8:
                hi = UINT8_MAX;
                break;
            case PRT_INT32:
                lo = INT32_MIN, hi = INT32_MAX;
                break;
            case PRT_INT64:
                lo = INT64_MIN, hi = INT64_MAX;
                break;
            default:
                ot_set(&x, 0, NAN);
                ot_set(&x, 1, -0.0);
                ot_set(&x, 2, -INFINITY);
                break;
            }
            if (!ot_is_float(dt)) {
                if (dt == PRT_INT64) {
                    ((int64_t *)x.data)[0] = INT64_MIN;
                    ((int64_t *)x.data)[1] = INT64_MAX;
                } else {
                    ot_set(&x, 0, (double)lo);
                    ot_set(&x, 1, (double)hi);
                }
                ot_set(&x, 2, 0);
            }
            for (int i = 0; i < 300; i++) {
                double v = ot_get(&x, i);
                if (k == 2)
                    want[i] = v > 0 ? 1 : v < 0 ? -1 : v;
                else if (ot_is_float(dt))
                    want[i] = k == 0 ? fabs(v) : -v;
                else if (dt == PRT_INT64 && i < 2) /* |MIN| and -MIN wrap */
                    want[i] = i == 0   ? (double)INT64_MIN
                              : k == 0 ? (double)INT64_MAX
                                       : -(double)INT64_MAX;
                else
                    want[i] = as_dtype(dt, k == 0 ? fabs(v) : -v);
            }
            snprintf(what, sizeof what, "%s %s", names[k], prt_dtype_name(dt));
            CHECK_OK(ot_run_op(names[k], NULL, 0, &x, 1, &y));
            if (y.data) {
                ot_check_close(what, &y, &x.dims, want, 0);
                /* Floats keep the sign bit rules: Abs(-0) = +0, Neg(-0) = +0. */
                if (ot_is_float(dt) && k < 2)
                    CHECK(!signbit(ot_get(&y, 1)));
                if (dt == PRT_INT64)
                    CHECK(((int64_t *)y.data)[0] == (k == 2 ? -1 : INT64_MIN) &&
                          ((int64_t *)y.data)[1] == (k == 1   ? -INT64_MAX
                                                     : k == 2 ? 1
                                                              : INT64_MAX));
            }
            ot_free(&x);
            ot_free(&y);
        }
    return 0;
}

/* ---- Clip -----------------------------------------------------------------------------
 */

static int test_clip(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 13);
    for (int t = 0; t < NB_NUMERIC; t++)
        for (int mode = 0; mode < 6; mode++) {
            /* 0 none, 1 min, 2 min+max, 3 max only, 4 min > max, 5 fields */
            int32_t dt = all_types[t], one = 1, nb = 1, nf = 0;
            prt_field f[2];
            float fmin = -1.5f, fmax = 2.0f;
            ot_tensor in[3], y;
            double lo = -INFINITY, hi = INFINITY, want[600];
            char what[64];
            if (mode == 5 && !ot_is_float(dt))
                continue;
            in[0] = random_input(dt, D2(2, 300), &rng, 4.0, 0);
            if (ot_is_float(dt))
                ot_set(&in[0], 5, NAN);
            if (mode >= 1 && mode <= 4) {
                double a = mode == 4 ? 3 : ot_is_float(dt) ? -1.25 : 2;
                double b = mode == 4 ? 1 : ot_is_float(dt) ? 2.5 : 9;
                if (mode == 3) {
                    in[1] = ot_make(dt, D0());
                    ot_set(&in[1], 0, b);
                    hi = b;
                    f[nf++] = ot_fld_i32("max_only", &one, 1);
                    nb = 2;
                } else {
                    in[1] = ot_make(dt, D1(1)); /* one element, any rank */
                    ot_set(&in[1], 0, a);
                    lo = a;
                    nb = 2;
                    if (mode != 1) {
                        in[2] = ot_make(dt, D0());
                        ot_set(&in[2], 0, b);
                        hi = b;
                        nb = 3;
                    }
                }
            }
            if (mode == 5) {
                f[nf++] = ot_fld_f32("min", &fmin);
                f[nf++] = ot_fld_f32("max", &fmax);
                lo = fmin;
                hi = fmax;
            }
            for (int i = 0; i < 600; i++) {
                double v = ot_get(&in[0], i);
                v = v < lo ? lo : v;
                want[i] = v > hi ? hi : v;
            }
            snprintf(what, sizeof what, "Clip %s mode %d", prt_dtype_name(dt), mode);
            CHECK_OK(ot_run_op("Clip", f, nf, in, nb, &y));
            if (y.data)
                ot_check_close(what, &y, &in[0].dims, want, 0);
            for (int k = 0; k < nb; k++)
                ot_free(&in[k]);
            ot_free(&y);
        }
    /* Errors: both a field and an input, field bounds on integers, a bound
     * of two elements, max_only with three inputs. */
    {
        float fmin = 0.0f;
        int32_t one = 1;
        prt_field f = ot_fld_f32("min", &fmin), g = ot_fld_i32("max_only", &one, 1);
        EXPECT_ERR("Clip", &f, 1, 2, L(PRT_FLOAT32, PRT_FLOAT32), L(D1(4), D0()),
                   PRT_ERR_INVALID_ARGUMENT,
                   "min is given both as a field (attribute) and as an input");
        EXPECT_ERR("Clip", NULL, 0, 3, L(PRT_FLOAT32, PRT_FLOAT32, PRT_FLOAT32),
                   L(D1(4), D0(), D1(2)), PRT_ERR_SHAPE,
                   "input 2 (max) must hold one element");
        EXPECT_ERR("Clip", &g, 1, 3, L(PRT_FLOAT32, PRT_FLOAT32, PRT_FLOAT32),
                   L(D1(4), D0(), D0()), PRT_ERR_INVALID_ARGUMENT,
                   "max_only 1 takes X and max");
        EXPECT_ERR("Clip", &f, 1, 1, L(PRT_INT32), L(D1(4)), PRT_ERR_UNSUPPORTED,
                   "input 0 dtype int32 is not supported here (supported: float32, "
                   "float16, bfloat16 or float64)");
    }
    return 0;
}

/* ---- Cast and CastLike ----------------------------------------------------------------
 */

/* x (of dtype from) converted to `to`, as ONNX/numpy with plugrt's choices:
 * floats to integers truncate and saturate (NaN 0), integers wrap, to bool
 * x != 0. */
static double ref_cast(int32_t from, int32_t to, double v)
{
    if (to == PRT_BOOL)
        return v != 0;
    if (ot_is_float(to))
        return as_dtype(to, (double)(float)v);
    if (ot_is_float(from)) {
        double lo = to == PRT_INT8    ? INT8_MIN
                    : to == PRT_UINT8 ? 0
                    : to == PRT_INT32 ? INT32_MIN
                                      : (double)INT64_MIN;
        double hi = to == PRT_INT8    ? INT8_MAX
                    : to == PRT_UINT8 ? UINT8_MAX
                    : to == PRT_INT32 ? INT32_MAX
                                      : (double)INT64_MAX;
        return v != v ? 0 : v <= lo ? lo : v >= hi ? hi : trunc(v);
    }
    return as_dtype(to, v);
}

static int test_cast(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 41);
    for (int a = 0; a < NB_TYPES; a++)
        for (int b = 0; b < NB_TYPES; b++)
            for (int like = 0; like < 2; like++) {
                int32_t from = all_types[a], to = all_types[b], sat = like;
                prt_field f[2] = {ot_fld_i32("to", &to, 1),
                                  ot_fld_i32("saturate", &sat, 1)};
                ot_tensor in[2], y;
                double want[520];
                char what[64];
                in[0] = random_input(from, D2(2, 260), &rng, 400.0, 1);
                if (ot_is_float(from)) {
                    static const double sp[] = {NAN, INFINITY, -INFINITY, 0.5,   -0.5,
                                                2.5, -0.0,     1e10,      -1e10, 127.9};
                    for (int i = 0; i < 10; i++)
                        ot_set(&in[0], i, sp[i]);
                }
                for (int i = 0; i < 520; i++)
                    want[i] = ref_cast(from, to, ot_get(&in[0], i));
                /* int64 beyond double's 53 bits: read back exactly. */
                snprintf(what, sizeof what, "%s %s to %s", like ? "CastLike" : "Cast",
                         prt_dtype_name(from), prt_dtype_name(to));
                if (like) {
                    in[1] = ot_make(to, D1(3));
                    CHECK_OK(ot_run_op("CastLike", &f[1], 1, in, 2, &y));
                    ot_free(&in[1]);
                } else {
                    CHECK_OK(ot_run_op("Cast", f, 1 + (a & 1), in, 1, &y));
                }
                if (y.data) {
                    CHECK(y.dtype == to);
                    ot_check_close(what, &y, &in[0].dims, want, 0);
                    if (from == PRT_INT64 && to == PRT_INT64)
                        CHECK(memcmp(y.data, in[0].data, 520 * 8) == 0);
                }
                ot_free(&in[0]);
                ot_free(&y);
            }
    /* saturate takes 0 or 1. */
    {
        int32_t to = PRT_FLOAT16, sat = 2;
        prt_field f[2] = {ot_fld_i32("to", &to, 1), ot_fld_i32("saturate", &sat, 1)};
        prt_plugin *p = NULL;
        CHECK_ERR(ot_make_op("Cast", f, 2, &p), PRT_ERR_UNSUPPORTED,
                  "saturate 2 is not supported (supported: 0 or 1)");
        CHECK_ERR(ot_make_op("CastLike", &f[1], 1, &p), PRT_ERR_UNSUPPORTED,
                  "saturate 2");
    }
    return 0;
}

/* ---- errors of the arithmetic's fields and shapes
 * --------------------------------------- */

static int test_arith_errors(void)
{
    int32_t two = 2;
    prt_field f = ot_fld_str("direction", "UP");
    prt_plugin *p = NULL;
    CHECK_ERR(ot_make_op("BitShift", &f, 1, &p), PRT_ERR_UNSUPPORTED,
              "direction 'UP' is not supported (supported: 'LEFT' or 'RIGHT')");
    CHECK_ERR(ot_make_op("BitShift", NULL, 0, &p), PRT_ERR_INVALID_ARGUMENT,
              "needs field direction");
    f = ot_fld_i32("fmod", &two, 1);
    CHECK_ERR(ot_make_op("Mod", &f, 1, &p), PRT_ERR_UNSUPPORTED,
              "fmod 2 is not supported (supported: 0 or 1)");
    f = ot_fld_str("direction", "LEFT");
    EXPECT_ERR("BitShift", &f, 1, 2, L(PRT_INT32, PRT_INT32), L(D1(3), D1(3)),
               PRT_ERR_UNSUPPORTED,
               "dtype int32 is not supported (supported: uint8, uint16, uint32 or "
               "uint64)");
    EXPECT_ERR("Sum", NULL, 0, 2, L(PRT_INT32, PRT_INT32), L(D1(3), D1(3)),
               PRT_ERR_UNSUPPORTED, "dtype int32 is not supported");
    /* Variadic shapes name the input that does not broadcast. */
    EXPECT_ERR("Max", NULL, 0, 3, L(PRT_FLOAT32, PRT_FLOAT32, PRT_FLOAT32),
               L(D2(2, 3), D1(3), D1(4)), PRT_ERR_SHAPE,
               "input 2 and the inputs before it");
    /* PRelu: the slope broadcasts to X, not the other way. */
    EXPECT_ERR("PRelu", NULL, 0, 2, L(PRT_FLOAT32, PRT_FLOAT32), L(D2(2, 3), D3(4, 2, 3)),
               PRT_ERR_SHAPE, "slope dims [4, 2, 3] do not broadcast to X dims [2, 3]");
    EXPECT_ERR("PRelu", NULL, 0, 2, L(PRT_FLOAT32, PRT_FLOAT32), L(D2(2, 3), D1(2)),
               PRT_ERR_SHAPE, "do not broadcast to X");
    return 0;
}

/* Allocation failure at every point of a build, load and run. */
static int test_alloc_failures(void)
{
    tu_rng rng;
    ot_tensor in[2];
    int64_t n;
    tu_rng_seed(&rng, 6);
    in[0] = ot_random(PRT_FLOAT16, D2(3, 8), &rng, 0);
    in[1] = ot_random(PRT_FLOAT16, D1(8), &rng, 0);
    n = ot_alloc_failures("Mean", NULL, 0, in, 2);
    CHECK(n > 3 && n < OT_MAX_ALLOCS);
    n = ot_alloc_failures("Gelu", NULL, 0, in, 1);
    CHECK(n > 3 && n < OT_MAX_ALLOCS);
    ot_free(&in[0]);
    ot_free(&in[1]);
    return 0;
}

int main(void)
{
    test_arith();
    test_arith_ints();
    test_arith_errors();
    test_pow();
    test_compare();
    test_unary_math();
    test_abs_neg_sign();
    test_clip();
    test_cast();
    test_alloc_failures();
    return tu_finish("test_ops_elementwise");
}

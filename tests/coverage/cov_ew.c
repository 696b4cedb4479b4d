/*
 * Generators of the coverage matrix (cov.h) for the elementwise ops:
 * unary.c's, unary_math.c's, binary.c's and compare.c's ops, Pow, Clip,
 * Cast and CastLike, Where and Dropout. Shapes broadcast every way ONNX
 * allows; float inputs carry NaN, infinities and signed zeros.
 */
#include <string.h>

#include "cov.h"

/* Every broadcast kind of oc_bcast_pair. */
#define NB_KINDS OC_BCAST_KINDS

static void bcast_pair(cov *c, int kind, prt_dims *a, prt_dims *b)
{
    oc_bcast_pair(cov_rng(c), kind, a, b);
}

static int unidirectional(int kind)
{
    return kind == 0 || kind == 1 || kind == 2 || kind == 5;
}

/* Relu, Identity, Abs, Neg, Sign: every shape rank 0 to 4, exactly. */
static void gen_unary(cov *c, const char *op, int32_t dt)
{
    for (int32_t rank = 0; rank <= 4; rank++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        char what[64];
        k.in[0] = cov_random(c, dt, cov_dims(c, rank, 1), 1);
        if (dt == PRT_INT8 && tu_volume(&k.in[0].dims) > 0)
            ot_set(&k.in[0], 0, -128); /* wraps */
        snprintf(what, sizeof what, "%s rank %d", op, (int)rank);
        cov_case(c, what, &k);
    }
}

/* The float functions, with their fields where they have any; values of
 * [-4, 4) (their interesting parts) and specials. */
static void gen_unary_math(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 3; v++) {
        oc_case k = {.op = op, .nb = 1, .rtol = cov_rtol(dt, 2e-6)};
        prt_field f[2];
        float alpha = 0.37f, beta = 0.61f;
        char what[64];
        if (v == 1 &&
            (!strcmp(op, "Elu") || !strcmp(op, "Celu") || !strcmp(op, "LeakyRelu") ||
             !strcmp(op, "ThresholdedRelu") || !strcmp(op, "Selu"))) {
            f[0] = ot_fld_f32("alpha", &alpha);
            k.f = f;
            k.nf = 1;
        } else if (v == 1 && !strcmp(op, "HardSigmoid")) {
            f[0] = ot_fld_f32("alpha", &alpha);
            f[1] = ot_fld_f32("beta", &beta);
            k.f = f;
            k.nf = 2;
        } else if (v == 1 && !strcmp(op, "Gelu")) {
            f[0] = ot_fld_str("approximate", "tanh");
            k.f = f;
            k.nf = 1;
        } else if (v == 1) {
            continue;
        }
        k.in[0] = cov_random(c, dt, v == 2 ? cov_dims(c, 2, 1) : D2(5, 67), 1);
        for (int64_t i = 0; i < tu_volume(&k.in[0].dims); i++)
            if (i % 3 == 1)
                ot_set(&k.in[0], i, tu_rng_uniform(cov_rng(c)) * 8.0 - 4.0);
        snprintf(what, sizeof what, "%s variant %d", op, v);
        cov_case(c, what, &k);
    }
}

/* The arithmetic of two inputs (and BitShift, Pow), every broadcast kind;
 * integer divisors nonzero (a zero fails the CPU's run). */
static void gen_binary(cov *c, const char *op, int32_t dt)
{
    const int is_f = ot_is_float(dt);
    const int prelu = !strcmp(op, "PRelu"), pow = !strcmp(op, "Pow");
    const int div = !strcmp(op, "Div") || !strcmp(op, "Mod");
    for (int kind = 0; kind < NB_KINDS; kind++) {
        oc_case k = {.op = op, .nb = 2, .rtol = cov_rtol(dt, 1e-6)};
        int32_t fmod = kind & 1, exp_dt = pow ? (is_f ? dt : PRT_INT32) : dt;
        prt_field f;
        char what[64];
        if (prelu && !unidirectional(kind))
            continue; /* the slope broadcasts to X */
        bcast_pair(c, kind, &k.in[0].dims, &k.in[1].dims);
        k.in[0] = is_f ? cov_random(c, dt, k.in[0].dims, 1)
                       : ot_random(dt, k.in[0].dims, cov_rng(c), 0);
        k.in[1] = is_f ? cov_random(c, exp_dt, k.in[1].dims, !pow)
                       : ot_random(exp_dt, k.in[1].dims, cov_rng(c), div);
        if (!strcmp(op, "Mod")) {
            f = ot_fld_i32("fmod", &fmod, 1);
            k.f = &f;
            k.nf = 1;
        } else if (!strcmp(op, "BitShift")) {
            f = ot_fld_str("direction", kind & 1 ? "RIGHT" : "LEFT");
            k.f = &f;
            k.nf = 1;
        }
        /* Integer powers: small exponents >= 0 (a negative one fails the
         * CPU's run), results that wrap alike. */
        for (int64_t i = 0; pow && !is_f && i < tu_volume(&k.in[1].dims); i++)
            ot_set(&k.in[1], i, (double)tu_rng_range(cov_rng(c), 0, 3));
        for (int64_t i = 0; !strcmp(op, "BitShift") && i < tu_volume(&k.in[1].dims); i++)
            ot_set(&k.in[1], i, (double)tu_rng_range(cov_rng(c), 0, 9));
        snprintf(what, sizeof what, "%s broadcast kind %d", op, kind);
        cov_case(c, what, &k);
    }
}

/* Sum, Mean, Max, Min of 1 to 4 inputs, one of them a row. */
static void gen_variadic(cov *c, const char *op, int32_t dt)
{
    for (int32_t nb = 1; nb <= 4; nb++) {
        oc_case k = {.op = op, .nb = nb, .rtol = cov_rtol(dt, 1e-6)};
        char what[64];
        for (int32_t i = 0; i < nb; i++)
            k.in[i] = cov_random(c, dt, i == 1 ? D1(13) : D3(2, 5, 13), 1);
        snprintf(what, sizeof what, "%s of %d", op, (int)nb);
        cov_case(c, what, &k);
    }
    gen_binary(c, op, dt);
}

/* Comparisons and logic: every broadcast kind, integers of a small range
 * so that equal values occur; Not, IsNaN and IsInf (its two flags). */
static void gen_compare(cov *c, const char *op, int32_t dt)
{
    if (!strcmp(op, "Not") || !strcmp(op, "IsNaN") || !strcmp(op, "IsInf")) {
        for (int v = 0; v < 4; v++) {
            int32_t pos = v & 1, neg = v >> 1;
            prt_field f[2] = {ot_fld_i32("detect_positive", &pos, 1),
                              ot_fld_i32("detect_negative", &neg, 1)};
            oc_case k = {.op = op, .nb = 1, .exact = 1};
            char what[64];
            if (!strcmp(op, "IsInf")) {
                k.f = f;
                k.nf = 2;
            } else if (v > 1) {
                continue;
            }
            k.in[0] = cov_random(c, dt, cov_dims(c, 3, 1), 1);
            snprintf(what, sizeof what, "%s variant %d", op, v);
            cov_case(c, what, &k);
        }
        return;
    }
    for (int kind = 0; kind < NB_KINDS; kind++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        char what[64];
        bcast_pair(c, kind, &k.in[0].dims, &k.in[1].dims);
        k.in[0] = cov_random(c, dt, k.in[0].dims, 1);
        k.in[1] = cov_random(c, dt, k.in[1].dims, 1);
        snprintf(what, sizeof what, "%s broadcast kind %d", op, kind);
        cov_case(c, what, &k);
    }
}

/* Clip: no bounds, a min input, both, max only, bounds as fields (floats),
 * min above max. */
static void gen_clip(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .rtol = cov_rtol(dt, 0), .exact = !ot_is_float(dt)};
        int32_t one = 1;
        float fmin = -0.3f, fmax = 0.6f;
        prt_field f[2];
        char what[64];
        if (v == 4 && !ot_is_float(dt))
            continue;
        k.in[0] = cov_random(c, dt, cov_dims(c, 3, 1), 1);
        k.nb = v == 0 || v == 4 ? 1 : v == 3 ? 2 : 3;
        if (v == 1)
            k.nb = 2;
        for (int32_t i = 1; i < k.nb; i++) {
            k.in[i] = ot_make(dt, i == 1 && v % 2 ? D1(1) : D0());
            ot_set(&k.in[i], 0, v == 5 ? (i == 1 ? 5 : -5) : (i == 1 ? -3 : 7));
            if (ot_is_float(dt))
                ot_set(&k.in[i], 0, ot_get(&k.in[i], 0) / 10.0);
        }
        if (v == 3) {
            f[0] = ot_fld_i32("max_only", &one, 1);
            k.f = f;
            k.nf = 1;
        } else if (v == 4) {
            f[0] = ot_fld_f32("min", &fmin);
            f[1] = ot_fld_f32("max", &fmax);
            k.f = f;
            k.nf = 2;
        }
        snprintf(what, sizeof what, "Clip variant %d", v);
        cov_case(c, what, &k);
    }
}

/* Cast to every dtype (CastLike: to the second input's). */
static void gen_cast(cov *c, const char *op, int32_t dt)
{
    const int like = !strcmp(op, "CastLike");
    for (int32_t to = 0; to < PRT_DTYPE_COUNT; to++) {
        oc_case k = {.op = op, .nb = like ? 2 : 1, .exact = 1};
        prt_field f = ot_fld_i32("to", &to, 1);
        char what[64];
        /* A device kernel takes no wide type (op_device.h): to those the
         * cast runs on the CPU alone. */
        if (cov_device(c) != PRT_DEVICE_CPU && cov_dtype_wide(to))
            continue;
        k.in[0] = cov_random(c, dt, cov_dims(c, 2, 1), 1);
        if (like)
            k.in[1] = ot_random(to, D1(1), cov_rng(c), 0);
        else {
            k.f = &f;
            k.nf = 1;
        }
        snprintf(what, sizeof what, "%s to %s", op, prt_dtype_name(to));
        cov_case(c, what, &k);
    }
}

/* Where: the condition and Y broadcast to X (and X to them). */
static void gen_where(cov *c, const char *op, int32_t dt)
{
    for (int kind = 0; kind < NB_KINDS; kind++) {
        oc_case k = {.op = op, .nb = 3, .exact = 1};
        prt_dims a, b;
        char what[64];
        bcast_pair(c, kind, &a, &b);
        k.in[0] = ot_random(PRT_BOOL, kind & 1 ? a : b, cov_rng(c), 0);
        k.in[1] = cov_random(c, dt, a, 1);
        k.in[2] = cov_random(c, dt, kind == 2 ? D0() : b, 1);
        snprintf(what, sizeof what, "Where broadcast kind %d", kind);
        cov_case(c, what, &k);
    }
}

/* Dropout at inference: the data, and the mask of each kind. */
static void gen_dropout(cov *c, const char *op, int32_t dt)
{
    for (int32_t mask = 0; mask < 3; mask++) {
        oc_case k = {.op = op, .nb = 1, .nb_out = mask ? 2 : 1, .exact = 1};
        prt_field f = ot_fld_i32("mask", &mask, 1);
        char what[64];
        k.f = &f;
        k.nf = 1;
        k.in[0] = cov_random(c, dt, cov_dims(c, 3, 1), 1);
        snprintf(what, sizeof what, "Dropout mask %d", (int)mask);
        cov_case(c, what, &k);
    }
}

const cov_entry cov_ew_entries[] = {
    {"Relu", gen_unary},
    {"Identity", gen_unary},
    {"Abs", gen_unary},
    {"Neg", gen_unary},
    {"Sign", gen_unary},
    {"Exp", gen_unary_math},
    {"Log", gen_unary_math},
    {"Sqrt", gen_unary_math},
    {"Reciprocal", gen_unary_math},
    {"Floor", gen_unary_math},
    {"Ceil", gen_unary_math},
    {"Round", gen_unary_math},
    {"Sin", gen_unary_math},
    {"Cos", gen_unary_math},
    {"Tan", gen_unary_math},
    {"Asin", gen_unary_math},
    {"Acos", gen_unary_math},
    {"Atan", gen_unary_math},
    {"Sinh", gen_unary_math},
    {"Cosh", gen_unary_math},
    {"Asinh", gen_unary_math},
    {"Acosh", gen_unary_math},
    {"Atanh", gen_unary_math},
    {"Tanh", gen_unary_math},
    {"Erf", gen_unary_math},
    {"Sigmoid", gen_unary_math},
    {"Softplus", gen_unary_math},
    {"Softsign", gen_unary_math},
    {"Mish", gen_unary_math},
    {"Gelu", gen_unary_math},
    {"Elu", gen_unary_math},
    {"Selu", gen_unary_math},
    {"Celu", gen_unary_math},
    {"LeakyRelu", gen_unary_math},
    {"ThresholdedRelu", gen_unary_math},
    {"HardSigmoid", gen_unary_math},
    {"HardSwish", gen_unary_math},
    {"Add", gen_binary},
    {"Sub", gen_binary},
    {"Mul", gen_binary},
    {"Div", gen_binary},
    {"Mod", gen_binary},
    {"PRelu", gen_binary},
    {"BitShift", gen_binary},
    {"Pow", gen_binary},
    {"Max", gen_variadic},
    {"Min", gen_variadic},
    {"Sum", gen_variadic},
    {"Mean", gen_variadic},
    {"Equal", gen_compare},
    {"Less", gen_compare},
    {"LessOrEqual", gen_compare},
    {"Greater", gen_compare},
    {"GreaterOrEqual", gen_compare},
    {"And", gen_compare},
    {"Or", gen_compare},
    {"Xor", gen_compare},
    {"Not", gen_compare},
    {"IsNaN", gen_compare},
    {"IsInf", gen_compare},
    {"Clip", gen_clip},
    {"Cast", gen_cast},
    {"CastLike", gen_cast},
    {"Where", gen_where},
    {"Dropout", gen_dropout},
    {NULL, NULL},
};

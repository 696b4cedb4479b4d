/*
 * The built-in ops with CUDA kernels against their CPU kernels (ctest -L
 * cuda): random shapes (odd sizes, sizes 1 and 0 where legal, every kind of
 * broadcast), every dtype the kernels take, every axis, outputs poisoned
 * before each run so an unwritten element fails. Each case is a network of
 * one op built for each device and loaded back: its inputs are network
 * inputs, constants, or constant shape inputs (Reshape's shape, Slice's
 * starts), and every output is compared. Ops whose CUDA kernel takes fewer
 * dtypes than the CPU's must fail the CUDA build naming the layer, the op
 * and the dtype. Without a GPU the test says why and exits 77 (skipped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_case.h"

static int cases, failures_before;

/* ---- one-op networks (op_case.h) ---------------------------------------- */

typedef oc_case tcase;
#define TC_MAXOUT OC_MAXOUT

/* The last failed build's message (kept: later calls may replace
 * prt_last_error()'s). */
static char build_error[1024];

static prt_engine *case_build(int32_t device, const tcase *c)
{
    return oc_build(device, c, build_error, sizeof build_error);
}

/* Runs e on `device`; out[k] gets output k (poisoned with 0xFF bytes
 * before the run). 0 on success. */
static int case_run(prt_engine *e, int32_t device, const tcase *c, ot_tensor *out)
{
    return oc_run(e, device, c, 0, 0xff, out);
}

/* PLUGRT_TEST_HARNESS=cpu: the cases run on the CPU twice (no GPU needed),
 * which checks the cases and this harness, not the kernels. */
static int harness_cpu;

/* The case on the CPU (reference) and on CUDA, every output compared. */
static void run_case(const char *what, const tcase *c)
{
    ot_tensor want[TC_MAXOUT] = {{0}}, got[TC_MAXOUT] = {{0}};
    prt_engine *ce, *ge;
    cases++;
    ce = case_build(PRT_DEVICE_CPU, c);
    if (!ce) {
        printf("%s: the CPU build fails: %s\n", what, build_error);
        CHECK(!"CPU reference builds");
        return;
    }
    ge = case_build(harness_cpu ? PRT_DEVICE_CPU : PRT_DEVICE_CUDA, c);
    if (!ge)
        printf("%s: the CUDA build fails: %s\n", what, build_error);
    CHECK(ge != NULL);
    if (ge && case_run(ce, PRT_DEVICE_CPU, c, want) == 0 &&
        case_run(ge, harness_cpu ? PRT_DEVICE_CPU : PRT_DEVICE_CUDA, c, got) == 0)
        oc_compare(what, c, got, want);
    for (int32_t k = 0; k < TC_MAXOUT; k++) {
        ot_free(&want[k]);
        ot_free(&got[k]);
    }
    prt_engine_destroy(ce);
    prt_engine_destroy(ge);
}

/* A case whose CUDA build must fail naming the layer (the op's name, its
 * default), the op and the dtype. */
static void expect_refused(const char *what, const tcase *c, const char *dtype)
{
    prt_engine *ge;
    const char *msg;
    char layer[64];
    if (harness_cpu)
        return;
    ge = case_build(PRT_DEVICE_CUDA, c);
    msg = build_error;
    cases++;
    snprintf(layer, sizeof layer, "layer '%s_", c->op); /* the default name */
    if (ge || !strstr(msg, layer) || !strstr(msg, c->op) || !strstr(msg, dtype) ||
        !strstr(msg, "CUDA")) {
        printf("%s: the CUDA build should fail naming %s and %s; it %s: %s\n", what,
               c->op, dtype, ge ? "succeeded" : "failed", ge ? "" : msg);
        CHECK(!"CUDA build refused with a clear message");
    }
    prt_engine_destroy(ge);
}

/* A case of network inputs only. */
static void compare(const char *what, const char *name, const prt_field *f, int32_t nf,
                    const ot_tensor *in, int32_t nb_in, double rtol)
{
    tcase c = {
        .op = name, .f = f, .nf = nf, .nb = nb_in, .rtol = rtol, .exact = rtol == 0};
    for (int32_t i = 0; i < nb_in; i++)
        c.in[i] = in[i]; /* borrowed */
    run_case(what, &c);
}

static void test_relu(tu_rng *r)
{
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16,
                                  PRT_INT8,    PRT_INT32,   PRT_INT64};
    static const int64_t sizes[] = {1, 7, 1000, 65537, 0};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            ot_tensor x = ot_random(dts[d], D2(sizes[k], 3), r, 0);
            char what[64];
            snprintf(what, sizeof what, "Relu %s [%lld, 3]", prt_dtype_name(dts[d]),
                     (long long)sizes[k]);
            compare(what, "Relu", NULL, 0, &x, 1, 0);
            compare(what, "Identity", NULL, 0, &x, 1, 0);
            ot_free(&x);
        }
}

static void test_transpose(tu_rng *r)
{
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT8, PRT_INT64};
    /* 32 cases: each activation (ai) four times, once in each position
     * modulo 4 (float16 at 3) and of either parity (bias when odd). */
    for (int t = 0; t < 32; t++) {
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 5), perm[8];
        int64_t d[6];
        prt_dims dims;
        prt_field f;
        ot_tensor x;
        char what[96];
        for (int32_t i = 0; i < rank; i++) {
            d[i] = tu_rng_range(r, 1, 9);
            perm[i] = i;
        }
        for (int32_t i = rank - 1; i > 0; i--) {
            int32_t j = (int32_t)tu_rng_range(r, 0, i), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        dims = tu_dims(rank, d);
        x = ot_random(dts[t % 4], dims, r, 0);
        f = ot_fld_i32("perm", perm, rank);
        snprintf(what, sizeof what, "Transpose %s rank %d case %d",
                 prt_dtype_name(dts[t % 4]), (int)rank, t);
        compare(what, "Transpose", &f, 1, &x, 1, 0);
        ot_free(&x);
    }
}

static void test_einsum(tu_rng *r)
{
    static const struct {
        const char *eq;
        int nb;
        prt_dims d[2];
    } cs[] = {
        {"ij,ij->i", 2, {{2, {5, 32}}, {2, {5, 32}}}},
        {"ij,jk->ik", 2, {{2, {7, 9}}, {2, {9, 3}}}},
        {"bij,bjk->bik", 2, {{3, {2, 4, 5}}, {3, {2, 5, 6}}}},
        {"ii->i", 1, {{2, {6, 6}}}},
        {"ij->ji", 1, {{2, {3, 8}}}},
        {"ij->", 1, {{2, {4, 33}}}},
    };
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT32, PRT_INT64};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            ot_tensor x[2];
            prt_field f = ot_fld_str("equation", cs[c].eq);
            char what[96];
            for (int k = 0; k < cs[c].nb; k++)
                x[k] = ot_random(dts[d], cs[c].d[k], r, 0);
            snprintf(what, sizeof what, "Einsum %s %s", cs[c].eq, prt_dtype_name(dts[d]));
            compare(what, "Einsum", &f, 1, x, cs[c].nb,
                    dts[d] == PRT_FLOAT16 ? 2e-3 : 1e-6);
            for (int k = 0; k < cs[c].nb; k++)
                ot_free(&x[k]);
        }
}

static void test_conv(tu_rng *r)
{
    /* 32 cases: each activation (ai) four times, once in each position
     * modulo 4 (float16 at 3) and of either parity (bias when odd). */
    for (int t = 0; t < 32; t++) {
        int32_t g = t % 3 == 0 ? 2 : 1, cg = (int32_t)tu_rng_range(r, 1, 4);
        int32_t mg = (int32_t)tu_rng_range(r, 1, 3), k0 = (int32_t)tu_rng_range(r, 1, 3);
        int32_t k1 = (int32_t)tu_rng_range(r, 1, 3), s[2], dl[2], pads[4];
        /* At least 5: a kernel of 3 dilated by 2 fits without padding. */
        int64_t h = tu_rng_range(r, 5, 17), w = tu_rng_range(r, 5, 17);
        int32_t dt = t % 4 == 3 ? PRT_FLOAT16 : PRT_FLOAT32;
        static const char *const acts[] = {"",        "Relu",        "LeakyRelu",
                                           "Clip",    "HardSigmoid", "HardSwish",
                                           "Sigmoid", "Silu"};
        static const float params[2] = {-0.25f, 0.5f};
        const int ai = (t + t / 8) % 8;
        const char *act = acts[ai];
        ot_tensor in[3];
        prt_field f[6];
        char what[160];
        int nb = t % 2 ? 3 : 2, nf = 4;
        s[0] = (int32_t)tu_rng_range(r, 1, 2);
        s[1] = (int32_t)tu_rng_range(r, 1, 2);
        dl[0] = (int32_t)tu_rng_range(r, 1, 2);
        dl[1] = (int32_t)tu_rng_range(r, 1, 2);
        for (int i = 0; i < 4; i++)
            pads[i] = (int32_t)tu_rng_range(r, 0, 2);
        in[0] = ot_random(dt, D4(tu_rng_range(r, 1, 2), g * cg, h, w), r, 0);
        in[1] = ot_random(dt, D4(g * mg, cg, k0, k1), r, 0);
        in[2] = ot_random(dt, D1(g * mg), r, 0);
        f[0] = ot_fld_i32("group", &g, 1);
        f[1] = ot_fld_i32("strides", s, 2);
        f[2] = ot_fld_i32("dilations", dl, 2);
        f[3] = ot_fld_i32("pads", pads, 4);
        /* The importer's fused activations (fields activation and
         * activation_params), each against the CPU's. */
        if (act[0])
            f[nf++] = ot_fld_str("activation", act);
        if (ai == 2 || ai == 3) {
            f[nf] = ot_fld_f32("activation_params", params);
            f[nf++].length = ai == 3 ? 2 : 1;
        }
        snprintf(what, sizeof what,
                 "Conv %s case %d (g %d, k %dx%d, s %d,%d, d %d,%d, activation '%s')",
                 prt_dtype_name(dt), t, (int)g, (int)k0, (int)k1, (int)s[0], (int)s[1],
                 (int)dl[0], (int)dl[1], act);
        compare(what, "Conv", f, nf, in, nb, dt == PRT_FLOAT16 ? 4e-3 : 1e-5);
        for (int i = 0; i < 3; i++)
            ot_free(&in[i]);
    }
}

static void test_matmul(tu_rng *r)
{
    static const struct {
        prt_dims a, b;
    } cs[] = {
        {{2, {8, 32}}, {2, {32, 64}}},
        {{2, {1, 1}}, {2, {1, 1}}},
        {{3, {3, 5, 7}}, {2, {7, 4}}},
        {{3, {3, 5, 7}}, {3, {3, 7, 4}}},
        {{4, {2, 1, 5, 6}}, {3, {3, 6, 2}}},
        {{1, {9}}, {2, {9, 5}}},
        {{2, {4, 9}}, {1, {9}}},
        {{2, {0, 9}}, {2, {9, 5}}},
        {{2, {130, 257}}, {2, {257, 129}}},
    };
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            ot_tensor x[2];
            char what[96];
            x[0] = ot_random(dts[d], cs[c].a, r, 0);
            x[1] = ot_random(dts[d], cs[c].b, r, 0);
            snprintf(what, sizeof what, "MatMul %s case %d", prt_dtype_name(dts[d]),
                     (int)c);
            /* cuBLAS sums in another order (and may use TF32-free FMAs). */
            compare(what, "MatMul", NULL, 0, x, 2, dts[d] == PRT_FLOAT32 ? 1e-4 : 1e-2);
            ot_free(&x[0]);
            ot_free(&x[1]);
        }
    /* The bias input (the importer's MatMul + Add), added by a kernel of
     * its own after cuBLAS. */
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int c = 0; c < 3; c++) {
            static const prt_dims a[3] = {{3, {3, 5, 7}}, {2, {130, 257}}, {1, {9}}};
            static const prt_dims b[3] = {{2, {7, 4}}, {2, {257, 129}}, {2, {9, 5}}};
            static const prt_dims bias[3] = {{1, {4}}, {2, {1, 129}}, {1, {5}}};
            ot_tensor x[3];
            char what[96];
            x[0] = ot_random(dts[d], a[c], r, 0);
            x[1] = ot_random(dts[d], b[c], r, 0);
            x[2] = ot_random(dts[d], bias[c], r, 0);
            snprintf(what, sizeof what, "MatMul with bias %s case %d",
                     prt_dtype_name(dts[d]), c);
            compare(what, "MatMul", NULL, 0, x, 3, dts[d] == PRT_FLOAT32 ? 1e-4 : 1e-2);
            for (int k = 0; k < 3; k++)
                ot_free(&x[k]);
        }
}

static void free_case(tcase *c)
{
    oc_free(c);
}

/* A random float tensor with NaN, infinities and zeros sprinkled in. */
static ot_tensor random_special(int32_t dtype, prt_dims d, tu_rng *r)
{
    static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 0.5};
    ot_tensor t = ot_random(dtype, d, r, 0);
    int64_t n = tu_volume(&d);
    for (int64_t i = 0; i < n; i++)
        if (tu_rng_range(r, 0, 7) == 0)
            ot_set(&t, i, sp[tu_rng_range(r, 0, 7)]);
    return t;
}

static const int32_t all_dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8,
                                  PRT_UINT8,   PRT_INT32,   PRT_INT64,    PRT_BOOL};
#define NB_ALL_DTS 8

static double float_rtol(int32_t dt, double f32)
{
    return dt == PRT_FLOAT32    ? f32
           : dt == PRT_FLOAT16  ? 2e-3
           : dt == PRT_BFLOAT16 ? 1.6e-2
                                : 0;
}

static void test_binary(tu_rng *r)
{
    static const struct {
        const char *op;
        int ints, floats; /* dtypes taken on CUDA */
    } ops[] = {{"Add", 1, 1}, {"Sub", 1, 1}, {"Mul", 1, 1}, {"Div", 1, 1},
               {"Mod", 1, 1}, {"Max", 1, 1}, {"Min", 1, 1}, {"PRelu", 1, 1}};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int d = 0; d < NB_ALL_DTS - 1; d++)
            for (int kind = 0; kind < 7; kind++) {
                const int32_t dt = all_dts[d];
                const int is_f = d < 3;
                tcase c = {.op = ops[o].op, .nb = 2, .rtol = float_rtol(dt, 1e-6)};
                int32_t fmod = kind & 1;
                prt_field f = ot_fld_i32("fmod", &fmod, 1);
                char what[128];
                if (!strcmp(ops[o].op, "PRelu") && (dt == PRT_INT8 || dt == PRT_UINT8 ||
                                                    kind == 3 || kind == 4 || kind == 6))
                    continue; /* PRelu: its dtypes, and a slope that fits X */
                if (!strcmp(ops[o].op, "Mod")) {
                    c.f = &f;
                    c.nf = 1;
                }
                oc_bcast_pair(r, kind, &c.in[0].dims, &c.in[1].dims);
                c.in[0] = is_f ? random_special(dt, c.in[0].dims, r)
                               : ot_random(dt, c.in[0].dims, r, 0);
                c.in[1] = is_f ? random_special(dt, c.in[1].dims, r)
                               : ot_random(dt, c.in[1].dims, r, 1);
                /* Half floats are rounded once after float32 arithmetic:
                 * a result that differs in float32's last bits may round
                 * the other way. Exact for integers. */
                snprintf(what, sizeof what, "%s %s broadcast kind %d", ops[o].op,
                         prt_dtype_name(dt), kind);
                if (is_f || ops[o].ints)
                    run_case(what, &c);
                else
                    expect_refused(what, &c, prt_dtype_name(dt));
                free_case(&c);
            }
    /* Several inputs: Sum, Mean, Max, Min of 1 to 4, one of them a scalar. */
    for (int nb = 1; nb <= 4; nb++)
        for (int d = 0; d < 3; d++) {
            static const char *const multi[] = {"Sum", "Mean", "Max", "Min"};
            for (int m = 0; m < 4; m++) {
                tcase c = {
                    .op = multi[m], .nb = nb, .rtol = float_rtol(all_dts[d], 1e-6)};
                char what[96];
                for (int k = 0; k < nb; k++)
                    c.in[k] =
                        random_special(all_dts[d], k == 1 ? D1(13) : D3(2, 5, 13), r);
                snprintf(what, sizeof what, "%s of %d %s", multi[m], nb,
                         prt_dtype_name(all_dts[d]));
                run_case(what, &c);
                free_case(&c);
            }
        }
    {
        /* BitShift (uint8), shifts up to 9 (8 and more give 0). */
        static const char *const dirs[] = {"LEFT", "RIGHT"};
        for (int k = 0; k < 2; k++) {
            tcase c = {.op = "BitShift", .nb = 2, .exact = 1};
            prt_field f = ot_fld_str("direction", dirs[k]);
            c.f = &f;
            c.nf = 1;
            c.in[0] = ot_random(PRT_UINT8, D2(7, 33), r, 0);
            c.in[1] = ot_make(PRT_UINT8, D1(33));
            for (int i = 0; i < 33; i++)
                ot_set(&c.in[1], i, (double)(i % 10));
            run_case(dirs[k], &c);
            free_case(&c);
        }
    }
}

static void test_compare(tu_rng *r)
{
    static const char *const cmp[] = {"Equal", "Less", "LessOrEqual", "Greater",
                                      "GreaterOrEqual"};
    static const char *const logic[] = {"And", "Or", "Xor", "Equal"};
    for (int o = 0; o < 5; o++)
        for (int d = 0; d < NB_ALL_DTS; d++)
            for (int kind = 0; kind < 7; kind++) {
                tcase c = {.op = cmp[o], .nb = 2, .exact = 1};
                char what[96];
                if (all_dts[d] == PRT_BOOL && o != 0)
                    continue;
                oc_bcast_pair(r, kind, &c.in[0].dims, &c.in[1].dims);
                c.in[0] = d < 3 ? random_special(all_dts[d], c.in[0].dims, r)
                                : ot_random(all_dts[d], c.in[0].dims, r, 0);
                /* Integers of a small range, so that equal values occur. */
                c.in[1] = d < 3 ? random_special(all_dts[d], c.in[1].dims, r)
                                : ot_random(all_dts[d], c.in[1].dims, r, 0);
                snprintf(what, sizeof what, "%s %s kind %d", cmp[o],
                         prt_dtype_name(all_dts[d]), kind);
                run_case(what, &c);
                free_case(&c);
            }
    for (int o = 0; o < 4; o++)
        for (int kind = 0; kind < 7; kind++) {
            tcase c = {.op = logic[o], .nb = 2, .exact = 1};
            oc_bcast_pair(r, kind, &c.in[0].dims, &c.in[1].dims);
            c.in[0] = ot_random(PRT_BOOL, c.in[0].dims, r, 0);
            c.in[1] = ot_random(PRT_BOOL, c.in[1].dims, r, 0);
            run_case(logic[o], &c);
            free_case(&c);
        }
    {
        tcase c = {.op = "Not", .nb = 1, .exact = 1};
        c.in[0] = ot_random(PRT_BOOL, D2(3, 1001), r, 0);
        run_case("Not", &c);
        free_case(&c);
    }
    for (int d = 0; d < 3; d++)
        for (int v = 0; v < 4; v++) {
            int32_t pos = v & 1, neg = v >> 1;
            prt_field f[2] = {ot_fld_i32("detect_positive", &pos, 1),
                              ot_fld_i32("detect_negative", &neg, 1)};
            tcase c = {.op = v == 3 ? "IsNaN" : "IsInf",
                       .f = v == 3 ? NULL : f,
                       .nf = v == 3 ? 0 : 2,
                       .nb = 1,
                       .exact = 1};
            char what[64];
            c.in[0] = random_special(all_dts[d], D2(5, 211), r);
            snprintf(what, sizeof what, "%s %s (%d, %d)", c.op,
                     prt_dtype_name(all_dts[d]), (int)pos, (int)neg);
            run_case(what, &c);
            free_case(&c);
        }
}

static void test_where(tu_rng *r)
{
    for (int d = 0; d < NB_ALL_DTS; d++)
        for (int kind = 0; kind < 6; kind++) {
            tcase c = {.op = "Where", .nb = 3, .exact = 1};
            prt_dims a, b;
            char what[64];
            oc_bcast_pair(r, kind, &a, &b);
            c.in[0] = ot_random(PRT_BOOL, kind & 1 ? a : b, r, 0);
            c.in[1] = ot_random(all_dts[d], a, r, 0);
            c.in[2] = ot_random(all_dts[d], kind == 2 ? D0() : b, r, 0);
            snprintf(what, sizeof what, "Where %s kind %d", prt_dtype_name(all_dts[d]),
                     kind);
            run_case(what, &c);
            free_case(&c);
        }
}

static void test_unary_math(tu_rng *r)
{
    static const char *const fns[] = {
        "Exp",         "Log",      "Sqrt",     "Reciprocal", "Floor",
        "Ceil",        "Round",    "Sin",      "Cos",        "Tan",
        "Asin",        "Acos",     "Atan",     "Sinh",       "Cosh",
        "Asinh",       "Acosh",    "Atanh",    "Tanh",       "Erf",
        "Sigmoid",     "Softplus", "Softsign", "Mish",       "Gelu",
        "Elu",         "Selu",     "Celu",     "LeakyRelu",  "ThresholdedRelu",
        "HardSigmoid", "HardSwish"};
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
        for (int d = 0; d < 3; d++)
            for (int v = 0; v < 2; v++) {
                tcase c = {.op = fns[k], .nb = 1, .rtol = float_rtol(all_dts[d], 2e-6)};
                prt_field f[2];
                float alpha = 0.37f, beta = 0.61f;
                char what[96];
                /* With fields where the op has them. */
                if (v && (!strcmp(fns[k], "Elu") || !strcmp(fns[k], "Celu") ||
                          !strcmp(fns[k], "LeakyRelu") ||
                          !strcmp(fns[k], "ThresholdedRelu"))) {
                    f[0] = ot_fld_f32("alpha", &alpha);
                    c.f = f;
                    c.nf = 1;
                } else if (v && !strcmp(fns[k], "HardSigmoid")) {
                    f[0] = ot_fld_f32("alpha", &alpha);
                    f[1] = ot_fld_f32("beta", &beta);
                    c.f = f;
                    c.nf = 2;
                } else if (v && !strcmp(fns[k], "Gelu")) {
                    f[0] = ot_fld_str("approximate", "tanh");
                    c.f = f;
                    c.nf = 1;
                } else if (v) {
                    continue;
                }
                /* Values of [-4, 4) and specials: the functions' interesting
                 * parts, and their NaN and infinity rules. */
                c.in[0] = random_special(all_dts[d], D2(9, 137), r);
                for (int64_t i = 0; i < 9 * 137; i++)
                    if (i % 3 == 1)
                        ot_set(&c.in[0], i, tu_rng_uniform(r) * 8.0 - 4.0);
                snprintf(what, sizeof what, "%s %s%s", fns[k], prt_dtype_name(all_dts[d]),
                         v ? " with fields" : "");
                run_case(what, &c);
                free_case(&c);
            }
    /* Abs, Neg, Sign over their dtypes, exactly; Relu's dtypes are above. */
    for (int d = 0; d < NB_ALL_DTS - 1; d++) {
        static const char *const ops[] = {"Abs", "Neg", "Sign"};
        for (int o = 0; o < 3; o++) {
            tcase c = {.op = ops[o], .nb = 1, .exact = 1};
            char what[64];
            if (o == 1 && all_dts[d] == PRT_UINT8)
                continue;
            c.in[0] = d < 3 ? random_special(all_dts[d], D1(1000), r)
                            : ot_random(all_dts[d], D1(1000), r, 0);
            if (all_dts[d] == PRT_INT8)
                ot_set(&c.in[0], 0, -128); /* wraps */
            snprintf(what, sizeof what, "%s %s", ops[o], prt_dtype_name(all_dts[d]));
            run_case(what, &c);
            free_case(&c);
        }
    }
}

static void test_clip(tu_rng *r)
{
    for (int d = 0; d < NB_ALL_DTS - 1; d++)
        for (int v = 0; v < 6; v++) {
            /* v: no bounds, min, min and max, max only (max_only), the
             * bounds as fields (floats), min above max. */
            const int32_t dt = all_dts[d];
            int32_t one = 1;
            float fmin = -0.3f, fmax = 0.6f;
            prt_field f[2];
            tcase c = {.op = "Clip", .nb = 1, .exact = 1};
            char what[64];
            if (v == 4 && d >= 3)
                continue;
            c.in[0] = d < 3 ? random_special(dt, D2(7, 129), r)
                            : ot_random(dt, D2(7, 129), r, 0);
            if (v == 1 || v == 2 || v == 5) {
                c.in[c.nb] = ot_make(dt, D0());
                ot_set(&c.in[c.nb], 0, v == 5 ? 3 : d < 3 ? -0.25 : -5);
                c.role[c.nb++] = v == 2 ? OC_DATA : OC_CONST;
            }
            if (v == 2 || v == 3 || v == 5) {
                c.in[c.nb] = ot_make(dt, D1(1));
                ot_set(&c.in[c.nb], 0, v == 5 ? 1 : d < 3 ? 0.5 : 7);
                c.role[c.nb++] = OC_CONST;
            }
            if (v == 3) {
                f[0] = ot_fld_i32("max_only", &one, 1);
                c.f = f;
                c.nf = 1;
            } else if (v == 4) {
                f[0] = ot_fld_f32("min", &fmin);
                f[1] = ot_fld_f32("max", &fmax);
                c.f = f;
                c.nf = 2;
            }
            snprintf(what, sizeof what, "Clip %s variant %d", prt_dtype_name(dt), v);
            run_case(what, &c);
            free_case(&c);
        }
}

static void test_dropout(tu_rng *r)
{
    for (int d = 0; d < 3; d++)
        for (int32_t mask = 0; mask < 3; mask++) {
            prt_field f = ot_fld_i32("mask", &mask, 1);
            tcase c = {.op = "Dropout",
                       .f = &f,
                       .nf = 1,
                       .nb = 1 + (mask == 1),
                       .nb_out = mask ? 2 : 1,
                       .exact = 1};
            char what[64];
            c.in[0] = random_special(all_dts[d], D3(3, 1, 77), r);
            if (c.nb == 2) { /* ratio: not read */
                c.in[1] = ot_make(all_dts[d], D0());
                ot_set(&c.in[1], 0, 0.25);
                c.role[1] = OC_CONST;
            }
            snprintf(what, sizeof what, "Dropout %s mask %d", prt_dtype_name(all_dts[d]),
                     (int)mask);
            run_case(what, &c);
            free_case(&c);
        }
}

static void test_cast(tu_rng *r)
{
    for (int a = 0; a < NB_ALL_DTS; a++)
        for (int b = 0; b < NB_ALL_DTS; b++) {
            int32_t to = all_dts[b];
            prt_field f = ot_fld_i32("to", &to, 1);
            tcase c = {.op = "Cast", .f = &f, .nf = 1, .nb = 1, .exact = 1};
            char what[64];
            c.in[0] = a < 3 ? random_special(all_dts[a], D2(3, 301), r)
                            : ot_random(all_dts[a], D2(3, 301), r, 0);
            /* Large and fractional values: saturation and truncation. */
            for (int64_t i = 0; a < 3 && i < 3 * 301; i += 5)
                ot_set(&c.in[0], i, (tu_rng_uniform(r) - 0.5) * 1e3);
            if (all_dts[a] == PRT_INT64)
                ot_set(&c.in[0], 1, 9007199254740993.0); /* rounds in float32 */
            snprintf(what, sizeof what, "Cast %s to %s", prt_dtype_name(all_dts[a]),
                     prt_dtype_name(to));
            run_case(what, &c);
            free_case(&c);
        }
}

/* The 8-bit floats (base/fp8.h) on CUDA against the CPU: Cast of all 256
 * codes to float32 and float16; Cast of float32 and float16 values to them
 * (specials, magnitudes from far below the least subnormal to far past
 * the largest) with saturate 0 and 1; QuantizeLinear per axis to them and
 * DequantizeLinear of all codes per axis with float16 scales. */
static void test_fp8(tu_rng *r)
{
    static const int32_t f8[2] = {PRT_FLOAT8E4M3FN, PRT_FLOAT8E5M2};
    char what[96];
    for (int k = 0; k < 2; k++)
        for (int32_t sat = 0; sat < 2; sat++) {
            int32_t axis = 1;
            prt_field qf[2] = {ot_fld_i32("axis", &axis, 1),
                               ot_fld_i32("saturate", &sat, 1)};
            for (int s = 0; s < 2; s++) {
                int32_t to = s ? PRT_FLOAT16 : PRT_FLOAT32, to8 = f8[k];
                prt_field f = ot_fld_i32("to", &to, 1);
                prt_field f2[2] = {ot_fld_i32("to", &to8, 1),
                                   ot_fld_i32("saturate", &sat, 1)};
                tcase c = {.op = "Cast", .f = &f, .nf = 1, .nb = 1, .exact = 1};
                tcase d = {.op = "Cast", .f = f2, .nf = 2, .nb = 1, .exact = 1};
                c.in[0] = ot_make(f8[k], D1(256));
                for (int i = 0; i < 256; i++)
                    ((uint8_t *)c.in[0].data)[i] = (uint8_t)i;
                snprintf(what, sizeof what, "Cast %s to %s", prt_dtype_name(f8[k]),
                         prt_dtype_name(to));
                run_case(what, &c);
                free_case(&c);
                d.in[0] = random_special(to, D2(3, 301), r);
                for (int64_t i = 0; i < 3 * 301; i += 2)
                    ot_set(&d.in[0], i,
                           ot_get(&d.in[0], i) *
                               pow(2.0, (double)tu_rng_range(r, -26, 17)));
                snprintf(what, sizeof what, "Cast %s to %s, saturate %d",
                         prt_dtype_name(to), prt_dtype_name(f8[k]), (int)sat);
                run_case(what, &d);
                free_case(&d);
            }
            {
                tcase c = {.op = "QuantizeLinear", .f = qf, .nf = 2, .nb = 3, .exact = 1};
                c.in[0] = random_special(PRT_FLOAT32, D3(2, 3, 50), r);
                for (int64_t i = 0; i < 300; i += 3)
                    ot_set(&c.in[0], i, ot_get(&c.in[0], i) * 1e3);
                c.in[1] = ot_make(PRT_FLOAT32, D1(3));
                ot_set(&c.in[1], 0, 0.01);
                ot_set(&c.in[1], 1, 1.0);
                ot_set(&c.in[1], 2, 300.0);
                c.in[2] = ot_make(f8[k], D1(3)); /* zeros */
                c.role[1] = c.role[2] = OC_CONST;
                snprintf(what, sizeof what, "QuantizeLinear to %s, saturate %d",
                         prt_dtype_name(f8[k]), (int)sat);
                run_case(what, &c);
                free_case(&c);
            }
            if (sat) {
                tcase c = {
                    .op = "DequantizeLinear", .f = qf, .nf = 1, .nb = 2, .exact = 1};
                c.in[0] = ot_make(f8[k], D3(2, 3, 256));
                for (int i = 0; i < 2 * 3 * 256; i++)
                    ((uint8_t *)c.in[0].data)[i] = (uint8_t)i;
                c.in[1] = ot_make(PRT_FLOAT16, D1(3));
                ot_set(&c.in[1], 0, 0.125);
                ot_set(&c.in[1], 1, 3.0);
                ot_set(&c.in[1], 2, 0.001);
                snprintf(what, sizeof what, "DequantizeLinear from %s",
                         prt_dtype_name(f8[k]));
                run_case(what, &c);
                free_case(&c);
            }
        }
}

/* An int64 (or int32) constant of n values. */
static ot_tensor ints(int32_t dtype, int32_t n, const int64_t *v)
{
    ot_tensor t = ot_make(dtype, D1(n));
    for (int32_t i = 0; i < n; i++)
        ot_set(&t, i, (double)v[i]);
    return t;
}

static ot_tensor scalar_i(int32_t dtype, int64_t v)
{
    ot_tensor t = ot_make(dtype, D0());
    ot_set(&t, 0, (double)v);
    return t;
}

/* An integer Div or Mod by zero fails the CPU's run; on CUDA that element
 * is 0 and the others are the CPU's (DESIGN-NOTES: what a kernel cannot
 * refuse), by -1 and from the lowest value included. */
static void test_div_by_zero(void)
{
    static const int64_t a[5] = {7, -7, 5, INT32_MIN, -9}, b[5] = {2, 0, -1, -1, 4};
    static const int64_t div[5] = {3, 0, -5, INT32_MIN, -2}, mod[5] = {1, 0, 0, 0, 3};
    for (int m = 0; m < 2 && !harness_cpu; m++) {
        tcase c = {.op = m ? "Mod" : "Div", .nb = 2, .exact = 1};
        ot_tensor got[TC_MAXOUT] = {{0}};
        prt_engine *e;
        c.in[0] = ints(PRT_INT32, 5, a);
        c.in[1] = ints(PRT_INT32, 5, b);
        e = case_build(PRT_DEVICE_CUDA, &c);
        if (!e)
            printf("%s int32 by zero: the CUDA build fails: %s\n", c.op, build_error);
        CHECK(e != NULL);
        if (e && case_run(e, PRT_DEVICE_CUDA, &c, got) == 0)
            for (int i = 0; i < 5; i++)
                CHECK(ot_get(&got[0], i) == (double)(m ? mod : div)[i]);
        ot_free(&got[0]);
        prt_engine_destroy(e);
        free_case(&c);
        cases++;
    }
}

static void test_gather(tu_rng *r)
{
    for (int t = 0; t < 48; t++) {
        const int32_t dt = all_dts[t % NB_ALL_DTS];
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 3), axis;
        int32_t irank = (int32_t)tu_rng_range(r, 0, 2),
                idt = t & 1 ? PRT_INT32 : PRT_INT64;
        int64_t d[4], id[2];
        tcase c = {.op = "Gather", .nb = 2, .exact = 1};
        prt_field f;
        char what[96];
        for (int32_t i = 0; i < rank; i++)
            d[i] = tu_rng_range(r, 1, 6);
        axis = (int32_t)tu_rng_range(r, -rank, rank - 1);
        for (int32_t i = 0; i < irank; i++)
            id[i] = tu_rng_range(r, 0, 4);
        f = ot_fld_i32("axis", &axis, 1);
        c.f = &f;
        c.nf = 1;
        c.in[0] = ot_random(dt, tu_dims(rank, d), r, 0);
        c.in[1] = ot_make(idt, tu_dims(irank, id));
        for (int64_t i = 0; i < tu_volume(&c.in[1].dims); i++) {
            int64_t n = d[axis < 0 ? axis + rank : axis];
            ot_set(&c.in[1], i, (double)tu_rng_range(r, -n, n - 1)); /* negatives too */
        }
        c.role[1] = t % 3 == 0 ? OC_CONST : OC_DATA;
        snprintf(what, sizeof what, "Gather %s rank %d axis %d, %s indices of rank %d",
                 prt_dtype_name(dt), (int)rank, (int)axis, prt_dtype_name(idt),
                 (int)irank);
        run_case(what, &c);
        free_case(&c);
    }
    for (int t = 0; t < 32; t++) {
        const int32_t dt = all_dts[t % NB_ALL_DTS];
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 3), axis;
        int64_t d[4], id[4];
        tcase c = {.op = "GatherElements", .nb = 2, .exact = 1};
        prt_field f;
        char what[96];
        for (int32_t i = 0; i < rank; i++) {
            d[i] = tu_rng_range(r, 1, 5);
            id[i] = tu_rng_range(r, 1, d[i]);
        }
        axis = (int32_t)tu_rng_range(r, -rank, rank - 1);
        id[axis < 0 ? axis + rank : axis] = tu_rng_range(r, 0, 6);
        f = ot_fld_i32("axis", &axis, 1);
        c.f = &f;
        c.nf = 1;
        c.in[0] = ot_random(dt, tu_dims(rank, d), r, 0);
        c.in[1] = ot_make(t & 1 ? PRT_INT32 : PRT_INT64, tu_dims(rank, id));
        for (int64_t i = 0; i < tu_volume(&c.in[1].dims); i++) {
            int64_t n = d[axis < 0 ? axis + rank : axis];
            ot_set(&c.in[1], i, (double)tu_rng_range(r, -n, n - 1));
        }
        snprintf(what, sizeof what, "GatherElements %s rank %d axis %d",
                 prt_dtype_name(dt), (int)rank, (int)axis);
        run_case(what, &c);
        free_case(&c);
    }
}

static void test_slice(tu_rng *r)
{
    for (int t = 0; t < 60; t++) {
        const int32_t dt = all_dts[t % NB_ALL_DTS], vdt = t & 1 ? PRT_INT32 : PRT_INT64;
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 3),
                n = 1 + (int32_t)tu_rng_range(r, 0, rank - 1);
        int64_t d[4], st[4], en[4], ax[4], sp[4];
        int32_t perm[4] = {0, 1, 2, 3};
        tcase c = {.op = "Slice", .exact = 1};
        char what[96];
        for (int32_t i = 0; i < rank; i++)
            d[i] = tu_rng_range(r, 1, 7);
        for (int32_t i = rank - 1; i > 0; i--) {
            int32_t j = (int32_t)tu_rng_range(r, 0, i), x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        for (int32_t i = 0; i < n; i++) {
            ax[i] = tu_rng_range(r, 0, 1) ? perm[i] : perm[i] - rank;
            sp[i] =
                tu_rng_range(r, 0, 3) ? tu_rng_range(r, 1, 3) : -tu_rng_range(r, 1, 2);
            st[i] = tu_rng_range(r, -9, 9);
            /* Past either end now and then (clamped). */
            en[i] = tu_rng_range(r, 0, 5) ? tu_rng_range(r, -9, 9)
                                          : (sp[i] > 0 ? 1000000000 : -1000000000);
        }
        c.in[0] = ot_random(dt, tu_dims(rank, d), r, 0);
        c.in[1] = ints(vdt, n, st);
        c.in[2] = ints(vdt, n, en);
        c.in[3] = ints(vdt, n, ax);
        c.in[4] = ints(vdt, n, sp);
        c.role[1] = c.role[2] = c.role[3] = c.role[4] = OC_BOTH;
        c.nb = 3 + (int32_t)tu_rng_range(r, 0, 2);
        if (c.nb < 5)
            for (int32_t i = 0; i < n; i++)
                if (sp[i] < 0) /* steps 1 without the input */
                    c.nb = 5;
        snprintf(what, sizeof what, "Slice %s rank %d, %d entries, %d inputs case %d",
                 prt_dtype_name(dt), (int)rank, (int)n, (int)c.nb, t);
        run_case(what, &c);
        for (int32_t i = c.nb; i < 5; i++)
            ot_free(&c.in[i]);
        free_case(&c);
    }
    {
        /* The opset 1-9 form: fields starts, ends, axes. */
        int64_t s[2] = {1, -3}, e[2] = {INT64_MAX, -1};
        int32_t ax[2] = {2, 0};
        prt_field f[3] = {{"starts", s, PRT_FIELD_INT64, 2},
                          {"ends", e, PRT_FIELD_INT64, 2},
                          ot_fld_i32("axes", ax, 2)};
        tcase c = {.op = "Slice", .f = f, .nf = 3, .nb = 1, .exact = 1};
        c.in[0] = ot_random(PRT_FLOAT32, D3(5, 4, 6), r, 0);
        run_case("Slice with fields", &c);
        free_case(&c);
    }
}

static void test_concat_expand(tu_rng *r)
{
    for (int t = 0; t < 40; t++) {
        const int32_t dt = all_dts[t % NB_ALL_DTS];
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 3), axis,
                nb = 1 + (int32_t)tu_rng_range(r, 0, 3);
        int64_t d[4];
        tcase c = {.op = "Concat", .nb = nb, .exact = 1};
        prt_field f;
        char what[96];
        for (int32_t i = 0; i < rank; i++)
            d[i] = tu_rng_range(r, 1, 5);
        axis = (int32_t)tu_rng_range(r, -rank, rank - 1);
        f = ot_fld_i32("axis", &axis, 1);
        c.f = &f;
        c.nf = 1;
        for (int32_t k = 0; k < nb; k++) {
            d[axis < 0 ? axis + rank : axis] = k == 1 ? 0 : tu_rng_range(r, 1, 6);
            c.in[k] = ot_random(dt, tu_dims(rank, d), r, 0);
            c.role[k] = k == 2 ? OC_CONST : OC_DATA;
        }
        snprintf(what, sizeof what, "Concat of %d %s rank %d axis %d", (int)nb,
                 prt_dtype_name(dt), (int)rank, (int)axis);
        run_case(what, &c);
        free_case(&c);
    }
    /* 32 cases: each activation (ai) four times, once in each position
     * modulo 4 (float16 at 3) and of either parity (bias when odd). */
    for (int t = 0; t < 32; t++) {
        const int32_t dt = all_dts[t % NB_ALL_DTS];
        static const struct {
            prt_dims x;
            int32_t n;
            int64_t shape[4];
        } cs[] = {{{1, {1}}, 3, {2, 3, 4}},
                  {{2, {3, 1}}, 2, {3, 5}},
                  {{3, {2, 1, 4}}, 4, {3, 1, 7, 4}},
                  {{2, {1, 5}}, 1, {1}},
                  {{0, {0}}, 2, {4, 6}},
                  {{2, {1, 7}}, 3, {2, 0, 7}}};
        tcase c = {.op = "Expand", .nb = 2, .exact = 1};
        c.in[0] = ot_random(dt, cs[t % 6].x, r, 0);
        c.in[1] = ints(PRT_INT64, cs[t % 6].n, cs[t % 6].shape);
        c.role[1] = OC_SHAPE;
        run_case("Expand", &c);
        free_case(&c);
    }
}

static void test_reshaping(tu_rng *r)
{
    for (int d = 0; d < NB_ALL_DTS; d++) {
        const int32_t dt = all_dts[d];
        static const int64_t shape[3] = {-1, 5, 3}, axes[2] = {0, 3};
        int32_t axis = d % 4;
        prt_field f = ot_fld_i32("axis", &axis, 1);
        tcase c = {.op = "Reshape", .nb = 2, .exact = 1};
        c.in[0] = ot_random(dt, D3(2, 3, 5), r, 0);
        c.in[1] = ints(PRT_INT64, 3, shape);
        c.role[1] = OC_SHAPE;
        run_case("Reshape", &c);
        c.op = "Unsqueeze";
        ot_free(&c.in[1]);
        c.in[1] = ints(PRT_INT64, 2, axes);
        run_case("Unsqueeze", &c);
        c.op = "Flatten";
        c.f = &f;
        c.nf = 1;
        c.nb = 1;
        run_case("Flatten", &c);
        c.f = NULL;
        c.nf = 0;
        c.op = "Identity";
        run_case("Identity", &c);
        c.op = "Shape";
        run_case("Shape", &c);
        c.op = "Size";
        run_case("Size", &c);
        ot_free(&c.in[0]);
        c.in[0] = ot_random(dt, D4(1, 7, 1, 2), r, 0);
        c.op = "Squeeze";
        run_case("Squeeze", &c);
        c.nb = 2;
        free_case(&c);
    }
    for (int v = 0; v < 4; v++) {
        /* Shape's start and end. */
        int32_t se[4][2] = {{1, 3}, {-2, 9}, {0, -1}, {3, 1}};
        prt_field f[2] = {ot_fld_i32("start", &se[v][0], 1),
                          ot_fld_i32("end", &se[v][1], 1)};
        tcase c = {.op = "Shape", .f = f, .nf = 2, .nb = 1, .exact = 1};
        c.in[0] = ot_random(PRT_FLOAT32, D4(2, 3, 4, 5), r, 0);
        run_case("Shape with start and end", &c);
        free_case(&c);
    }
}

static void test_fills(void)
{
    for (int d = 0; d < NB_ALL_DTS; d++) {
        static const int64_t shape[3] = {3, 1, 17};
        int32_t dt = all_dts[d];
        float fv = -2.75f;
        int32_t iv = d == 4 ? 200 : -7;
        prt_field f[2] = {ot_fld_i32("dtype", &dt, 1),
                          d < 3 ? ot_fld_f32("value", &fv) : ot_fld_i32("value", &iv, 1)};
        tcase c = {.op = "ConstantOfShape", .f = f, .nf = 2, .nb = 1, .exact = 1};
        char what[64];
        c.in[0] = ints(PRT_INT64, 3, shape);
        c.role[0] = OC_SHAPE;
        snprintf(what, sizeof what, "ConstantOfShape %s", prt_dtype_name(dt));
        run_case(what, &c);
        free_case(&c);
    }
    for (int t = 0; t < 8; t++) {
        static const int64_t b[8][3] = {{0, 10, 1},   {3, -7, -2}, {5, 5, 1},
                                        {-4, 100, 7}, {0, 1, 1},   {9, 0, -3},
                                        {2, 40, 13},  {0, 0, -1}};
        const int32_t dt = t & 1 ? PRT_INT32 : PRT_INT64;
        tcase c = {.op = "Range", .nb = 3, .exact = 1};
        for (int k = 0; k < 3; k++) {
            c.in[k] = scalar_i(dt, b[t][k]);
            c.role[k] = OC_BOTH;
        }
        run_case("Range", &c);
        free_case(&c);
    }
}

static void test_rows(tu_rng *r)
{
    for (int t = 0; t < 36; t++) {
        const int32_t dt = all_dts[t % 3];
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 3), axis, c2 = t % 5 == 4;
        int64_t d[4];
        prt_field f[2];
        tcase c = {.op = t & 1 ? "LogSoftmax" : "Softmax",
                   .f = f,
                   .nf = 2,
                   .nb = 1,
                   .rtol = float_rtol(dt, 1e-5)};
        char what[96];
        for (int32_t i = 0; i < rank; i++)
            d[i] = tu_rng_range(r, 1, 9);
        /* Long rows: a warp takes up to 1024 elements, a block more. */
        if (t == 6 || t == 10)
            d[rank - 1] = t == 6 ? 3000 : 1024;
        axis = t == 6 || t == 10 ? -1 : (int32_t)tu_rng_range(r, -rank, rank - 1);
        f[0] = ot_fld_i32("axis", &axis, 1);
        f[1] = ot_fld_i32("coerce_2d", &c2, 1);
        c.in[0] = t % 4 == 3 ? random_special(dt, tu_dims(rank, d), r)
                             : ot_random(dt, tu_dims(rank, d), r, 0);
        for (int64_t i = 0; i < tu_volume(&c.in[0].dims); i++)
            ot_set(&c.in[0], i, ot_get(&c.in[0], i) * 6.0); /* a real spread */
        snprintf(what, sizeof what, "%s %s rank %d axis %d coerce_2d %d", c.op,
                 prt_dtype_name(dt), (int)rank, (int)axis, (int)c2);
        run_case(what, &c);
        free_case(&c);
    }
    for (int t = 0; t < 36; t++) {
        const int32_t dt = all_dts[t % 3];
        static const int32_t stash[3] = {1, 10, 16};
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 3), axis, nbo = 1 + t % 3;
        int32_t st = stash[(t / 3) % 3];
        int64_t d[4], sd[4];
        float eps = t % 2 ? 1e-5f : 1e-2f;
        prt_field f[4];
        tcase c = {.op = "LayerNormalization",
                   .f = f,
                   .nf = 4,
                   .nb = 2 + (t / 2) % 2,
                   .nb_out = nbo,
                   .rtol = float_rtol(dt, 2e-5)};
        char what[128];
        for (int32_t i = 0; i < rank; i++)
            d[i] = tu_rng_range(r, 1, 7);
        if (t == 5 || t == 11)
            d[rank - 1] = t == 5 ? 2500 : 1025;
        axis = (int32_t)tu_rng_range(r, -rank, rank - 1);
        for (int32_t i = 0; i < rank; i++)
            sd[i] = i < (axis < 0 ? axis + rank : axis) || tu_rng_range(r, 0, 2) == 0
                        ? 1
                        : d[i];
        f[0] = ot_fld_i32("axis", &axis, 1);
        f[1] = ot_fld_f32("epsilon", &eps);
        f[2] = ot_fld_i32("stash_type", &st, 1);
        f[3] = ot_fld_i32("nb_outputs", &nbo, 1);
        c.in[0] = ot_random(dt, tu_dims(rank, d), r, 0);
        c.in[1] = ot_random(dt, tu_dims(rank, sd), r, 0);
        c.in[2] = ot_random(dt, tu_dims(rank - (int32_t)(t % 2), sd + t % 2), r, 0);
        c.role[1] = c.role[2] = t % 4 == 0 ? OC_CONST : OC_DATA;
        if (st != 1) /* statistics rounded to 16 bits */
            c.rtol = c.rtol > 1.6e-2 ? c.rtol : st == 10 ? 2e-3 : 1.6e-2;
        snprintf(what, sizeof what,
                 "LayerNormalization %s rank %d axis %d, %d inputs, %d outputs, stash %d",
                 prt_dtype_name(dt), (int)rank, (int)axis, (int)c.nb, (int)nbo, (int)st);
        run_case(what, &c);
        if (c.nb == 2)
            ot_free(&c.in[2]);
        free_case(&c);
    }
    for (int t = 0; t < 12; t++) {
        const int32_t dt = all_dts[t % 3];
        static const prt_dims xs[4] = {{4, {2, 3, 7, 9}},
                                       {3, {1, 5, 1000}},
                                       {5, {2, 2, 3, 1, 5}},
                                       {4, {1, 16, 56, 56}}};
        tcase c = {.op = "GlobalAveragePool", .nb = 1, .rtol = float_rtol(dt, 1e-6)};
        char what[64];
        c.in[0] = ot_random(dt, xs[t % 4], r, 0);
        snprintf(what, sizeof what, "GlobalAveragePool %s case %d", prt_dtype_name(dt),
                 t);
        run_case(what, &c);
        free_case(&c);
    }
}

/* Gemm's 16-bit products go to cuBLAS's Ex call as MatMul's do (nn_cuda.c):
 * every transA x transB x C broadcast (none, scalar, per column, per row,
 * full, a row of N) with alpha and beta other than 1, in float16 and
 * bfloat16, against the CPU. Odd sizes put each float32 copy after Y off
 * any alignment a naive layout would give; the larger shapes take
 * cuBLAS's tensor-core kernels. */
static void test_gemm_16bit(tu_rng *r)
{
    static const int32_t dts[2] = {PRT_FLOAT16, PRT_BFLOAT16};
    static const int64_t sizes[3][3] = {{7, 13, 9}, {65, 33, 127}, {128, 96, 256}};
    int t = 0;
    for (int d = 0; d < 2; d++)
        for (int32_t ta = 0; ta < 2; ta++)
            for (int32_t tb = 0; tb < 2; tb++)
                for (int ck = 0; ck < 6; ck++, t++) {
                    const int64_t *sz = sizes[t % 3];
                    const int64_t M = sz[0], N = sz[1], K = sz[2];
                    float alpha = ck % 2 ? 0.75f : 1.0f, beta = ck == 4 ? 1.0f : -1.5f;
                    int32_t fta = ta, ftb = tb;
                    prt_field f[4] = {
                        ot_fld_f32("alpha", &alpha), ot_fld_f32("beta", &beta),
                        ot_fld_i32("transA", &fta, 1), ot_fld_i32("transB", &ftb, 1)};
                    tcase c = {.op = "Gemm",
                               .f = f,
                               .nf = 4,
                               .nb = ck == 5 ? 2 : 3,
                               .rtol = 1e-2};
                    prt_dims cd[5] = {D0(), D1(N), D2(M, 1), D2(M, N), D2(1, N)};
                    char what[128];
                    c.in[0] = ot_random(dts[d], ta ? D2(K, M) : D2(M, K), r, 0);
                    c.in[1] = ot_random(dts[d], tb ? D2(N, K) : D2(K, N), r, 0);
                    if (ck < 5)
                        c.in[2] = ot_random(dts[d], cd[ck], r, 0);
                    /* B and C constants (a Linear layer's) or inputs. */
                    c.role[1] = c.role[2] = t % 2 ? OC_CONST : OC_DATA;
                    snprintf(what, sizeof what,
                             "Gemm 16-bit %s %lldx%lldx%lld transA %d transB %d alpha %g "
                             "beta %g C kind %d",
                             prt_dtype_name(dts[d]), (long long)M, (long long)N,
                             (long long)K, (int)ta, (int)tb, alpha, beta, ck);
                    run_case(what, &c);
                    free_case(&c);
                }
}

static void test_gemm(tu_rng *r)
{
    for (int t = 0; t < 36; t++) {
        const int32_t dt = all_dts[t % 3];
        int32_t ta = (t >> 1) & 1, tb = (t >> 2) & 1;
        float alpha = t % 5 == 0 ? 1.0f : 0.75f, beta = t % 7 == 0 ? 0.0f
                                                        : t % 3    ? 1.0f
                                                                   : -1.5f;
        int64_t M = tu_rng_range(r, 1, 40), N = tu_rng_range(r, 1, 40),
                K = tu_rng_range(r, 1, 70);
        static const int nc_kinds = 6;
        int ck = t % nc_kinds;
        prt_field f[4] = {ot_fld_f32("alpha", &alpha), ot_fld_f32("beta", &beta),
                          ot_fld_i32("transA", &ta, 1), ot_fld_i32("transB", &tb, 1)};
        tcase c = {.op = "Gemm",
                   .f = f,
                   .nf = 4,
                   .nb = ck == 5 ? 2 : 3,
                   .rtol = dt == PRT_FLOAT32 ? 1e-4 : 1e-2};
        char what[128];
        prt_dims cd[5] = {D0(), D1(N), D2(M, 1), D2(M, N), D2(1, N)};
        c.in[0] = ot_random(dt, ta ? D2(K, M) : D2(M, K), r, 0);
        c.in[1] = ot_random(dt, tb ? D2(N, K) : D2(K, N), r, 0);
        if (ck < 5)
            c.in[2] = ot_random(dt, cd[ck], r, 0);
        c.role[1] = c.role[2] = t % 2 ? OC_CONST : OC_DATA;
        snprintf(what, sizeof what,
                 "Gemm %s %lldx%lldx%lld transA %d transB %d alpha %g beta %g C kind %d",
                 prt_dtype_name(dt), (long long)M, (long long)N, (long long)K, (int)ta,
                 (int)tb, alpha, beta, ck);
        run_case(what, &c);
        free_case(&c);
    }
    for (int d = 0; d < 3; d++) {
        /* Empty sums (K = 0): zeros, plus C. */
        float alpha = 1.0f, beta = 0.5f;
        int32_t tb = d == 1;
        prt_field f[3] = {ot_fld_f32("alpha", &alpha), ot_fld_f32("beta", &beta),
                          ot_fld_i32("transB", &tb, 1)};
        tcase g = {.op = "Gemm", .f = f, .nf = 3, .nb = 3, .rtol = 1e-6};
        tcase m = {.op = "MatMul", .nb = 2, .rtol = 1e-6};
        g.in[0] = ot_random(all_dts[d], D2(5, 0), r, 0);
        g.in[1] = ot_random(all_dts[d], tb ? D2(3, 0) : D2(0, 3), r, 0);
        g.in[2] = ot_random(all_dts[d], D1(3), r, 0);
        m.in[0] = ot_random(all_dts[d], D3(2, 5, 0), r, 0);
        m.in[1] = ot_random(all_dts[d], D3(2, 0, 3), r, 0);
        run_case("Gemm with K = 0", &g);
        run_case("MatMul with K = 0", &m);
        free_case(&g);
        free_case(&m);
    }
    {
        /* Integer products stay on the CPU. */
        tcase c = {.op = "MatMul", .nb = 2};
        c.in[0] = ot_random(PRT_INT32, D2(3, 4), r, 0);
        c.in[1] = ot_random(PRT_INT32, D2(4, 5), r, 0);
        expect_refused("MatMul int32", &c, "int32");
        free_case(&c);
    }
}

/* The importer's fused layers at transformer shapes, each against the
 * CPU's kernel: SkipLayerNormalization (BERT's rows of 128 and 768, a
 * residual broadcast along the batch, the sum written too), MatMul with
 * its bias and activation (one pass after cuBLAS) and ElementwiseChain. */
static void test_fused(tu_rng *r)
{
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
    for (int t = 0; t < 12; t++) {
        const int32_t dt = dts[t % 3];
        int32_t nbo = t % 2 ? 4 : 1;
        int64_t h = t / 3 % 2 ? 768 : 128, s = t < 6 ? 128 : 7;
        float eps = 1e-12f;
        prt_field f[2] = {ot_fld_f32("epsilon", &eps), ot_fld_i32("nb_outputs", &nbo, 1)};
        tcase c = {.op = "SkipLayerNormalization",
                   .f = f,
                   .nf = 2,
                   .nb = 4 + t % 2,
                   .nb_out = nbo,
                   .rtol = float_rtol(dt, 2e-5)};
        char what[128];
        c.in[0] = ot_random(dt, (prt_dims){3, {2, s, h}}, r, 0);
        c.in[1] = ot_random(
            dt, t % 4 == 2 ? (prt_dims){2, {s, h}} : (prt_dims){3, {2, s, h}}, r, 0);
        for (int k = 2; k < c.nb; k++)
            c.in[k] = ot_random(dt, (prt_dims){1, {h}}, r, 0);
        snprintf(what, sizeof what, "SkipLayerNormalization %s 2x%lldx%lld, %d inputs",
                 prt_dtype_name(dt), (long long)s, (long long)h, (int)c.nb);
        run_case(what, &c);
        free_case(&c);
    }
    for (int t = 0; t < 6; t++) {
        const int32_t dt = dts[t % 3];
        const char *act = t < 3 ? "Relu" : "Gelu";
        prt_field f[1] = {ot_fld_str("activation", act)};
        ot_tensor x[3];
        char what[96];
        x[0] = ot_random(dt, (prt_dims){3, {2, 128, 128}}, r, 0);
        x[1] = ot_random(dt, (prt_dims){2, {128, 512}}, r, 0);
        x[2] = ot_random(dt, (prt_dims){1, {512}}, r, 0);
        snprintf(what, sizeof what, "MatMul with bias and %s %s", act,
                 prt_dtype_name(dt));
        compare(what, "MatMul", f, 1, x, 3, dt == PRT_FLOAT32 ? 1e-4 : 1e-2);
        snprintf(what, sizeof what, "MatMul with %s %s", act, prt_dtype_name(dt));
        compare(what, "MatMul", f, 1, x, 2, dt == PRT_FLOAT32 ? 1e-4 : 1e-2);
        for (int k = 0; k < 3; k++)
            ot_free(&x[k]);
    }
    /* GPT-2's tanh GELU as one chain over an MLP's activations, and a
     * mask's (1 - m) * -10000 + scores with m broadcast along the rows. */
    for (int t = 0; t < 6; t++) {
        const int32_t dt = dts[t % 3];
        static const int32_t gelu_ops[14] = {0, 0, 0, 1, 1, 0, 0, 2, 0, 0, 0, 3, 1, 1};
        static const int32_t mask_ops[6] = {4, 3, 0, 4, 1, 1};
        static const float consts[5] = {3.0f, 0.044715f, 0.7978846f, 1.0f, -10000.0f};
        const int gelu = t < 3;
        prt_field f[3] = {
            ot_fld_str("ops", gelu ? "Pow,Mul,Add,Mul,Tanh,Add,Mul" : "Sub,Mul,Add"),
            ot_fld_i32("operands", gelu ? gelu_ops : mask_ops, gelu ? 14 : 6),
            {"constants", consts, PRT_FIELD_FLOAT32, 5}};
        ot_tensor x[2];
        char what[96];
        x[0] = ot_random(
            dt, gelu ? (prt_dims){3, {2, 128, 2048}} : (prt_dims){4, {2, 1, 1, 128}}, r,
            0);
        x[1] = ot_random(
            dt, gelu ? (prt_dims){3, {2, 128, 2048}} : (prt_dims){4, {2, 4, 128, 128}}, r,
            0);
        snprintf(what, sizeof what, "ElementwiseChain %s %s", gelu ? "tanh GELU" : "mask",
                 prt_dtype_name(dt));
        compare(what, "ElementwiseChain", f, 3, x, 2, float_rtol(dt, 2e-6));
        ot_free(&x[0]);
        ot_free(&x[1]);
    }
}

int main(void)
{
    tu_rng r;
    const char *h = getenv("PLUGRT_TEST_HARNESS");
    harness_cpu = h && strcmp(h, "cpu") == 0;
    if (!harness_cpu)
        tu_require_cuda("test_cuda_ops");
    tu_rng_seed(&r, 20261201);
    failures_before = tu_failures;
    test_relu(&r);
    test_transpose(&r);
    test_einsum(&r);
    test_conv(&r);
    test_matmul(&r);
    test_binary(&r);
    test_compare(&r);
    test_where(&r);
    test_unary_math(&r);
    test_cast(&r);
    test_fp8(&r);
    test_clip(&r);
    test_dropout(&r);
    test_div_by_zero();
    test_gather(&r);
    test_slice(&r);
    test_concat_expand(&r);
    test_reshaping(&r);
    test_fills();
    test_rows(&r);
    test_gemm(&r);
    test_gemm_16bit(&r);
    test_fused(&r);
    printf("test_cuda_ops: %d cases\n", cases);
    return tu_finish("test_cuda_ops");
}

/*
 * The losses, MeanVarianceNormalization and Det (ops_loss.h) on the CPU
 * against plain references written here in double, from the ONNX
 * definitions:
 *  - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: every
 *    reduction, [N, C] and [N, C, d1, ...], with and without weight and
 *    ignore_index (inside and outside [0, C)), int32 and int64 targets,
 *    SCE's log_prob, every position ignored (mean NaN), no position; the
 *    16-bit floats;
 *  - MeanVarianceNormalization: the default axes, one, negative, apart,
 *    empty (every dim), each by a naive walk over every element;
 *  - Det: against the cofactor expansion, and closed forms (identity,
 *    permutations, triangular, singular, 0 x 0);
 * one and several threads give the same bits. Then the refusals, each
 * naming the problem: ranks, dims, dtypes, fields, and a target out of
 * range at run time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_case.h"

/* Sums of up to a few thousand double terms of float inputs, rounded
 * once; SoftmaxCrossEntropyLoss rounds each log-probability to float32
 * before its loss, the reference does not. */
#define LOSS_RTOL 2e-6
#define SCE_RTOL 1e-5

static double rtol_for(int32_t dt, double f32)
{
    return dt == PRT_FLOAT16 ? 2e-3 : dt == PRT_BFLOAT16 ? 1.6e-2 : f32;
}

/* Builds and runs k on the CPU with `threads`; 0 with out[] set. */
static int run_case(const char *what, oc_case *k, int32_t threads, ot_tensor *out)
{
    char err[512];
    prt_engine *e = oc_build(PRT_DEVICE_CPU, k, err, sizeof err);
    int rc;
    if (!e) {
        fprintf(stderr, "%s: build fails: %s\n", what, err);
        CHECK(!"the case builds");
        return 1;
    }
    rc = oc_run(e, PRT_DEVICE_CPU, k, threads, 0x7f, out);
    prt_engine_destroy(e);
    return rc;
}

/* Checks output j against want[j] (dims yd[j]), then the same bits on 1
 * thread as on 3. */
static void check_case(const char *what, oc_case *k, const prt_dims *yd,
                       double *const *want, double rtol)
{
    const int32_t nb = k->nb_out ? k->nb_out : 1;
    ot_tensor got[OC_MAXOUT] = {{0}}, one[OC_MAXOUT] = {{0}};
    if (run_case(what, k, 3, got) == 0) {
        for (int32_t j = 0; j < nb; j++)
            ot_check_close(what, &got[j], &yd[j], want[j], rtol);
        if (run_case(what, k, 1, one) == 0)
            for (int32_t j = 0; j < nb; j++)
                CHECK(one[j].data && got[j].data &&
                      memcmp(one[j].data, got[j].data,
                             (size_t)tu_volume(&yd[j]) * prt_dtype_size(got[j].dtype)) ==
                          0);
    }
    for (int32_t j = 0; j < OC_MAXOUT; j++) {
        ot_free(&got[j]);
        ot_free(&one[j]);
    }
}

/* ---- the losses ------------------------------------------------------------ */

static const char *const red_names[3] = {"none", "sum", "mean"};

typedef struct loss_spec {
    int32_t rank;
    int64_t d[5];
    int32_t tdt, red, has_ii, ii, weight, log_prob, all_ignored;
} loss_spec;

/* ONNX's reference (onnx/backend/test/case/node/negativeloglikelihoodloss.py
 * and softmaxcrossentropy.py) in double: lp the scores (NLL) or their
 * log-softmax over C (SCE), then per position w = weight[t] (1 without),
 * 0 where t is ignore_index, term -lp[n, t, d] w; none the terms, sum their
 * sum, mean sum / sum of w. */
static void loss_ref(const loss_spec *s, int sce, const ot_tensor *x, const ot_tensor *t,
                     const ot_tensor *w, double *loss, double *lp)
{
    const int64_t N = s->d[0], C = s->d[1];
    int64_t D = 1;
    double sum = 0.0, wsum = 0.0;
    for (int32_t i = 2; i < s->rank; i++)
        D *= s->d[i];
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            double mx = -INFINITY, e = 0.0;
            for (int64_t c = 0; c < C; c++)
                mx = fmax(mx, ot_get(x, (n * C + c) * D + d));
            for (int64_t c = 0; c < C; c++)
                e += exp(ot_get(x, (n * C + c) * D + d) - mx);
            for (int64_t c = 0; c < C; c++) {
                const int64_t i = (n * C + c) * D + d;
                lp[i] = sce ? ot_get(x, i) - mx - log(e) : ot_get(x, i);
            }
        }
    for (int64_t p = 0; p < N * D; p++) {
        const int64_t tv = (int64_t)ot_get(t, p), n = p / D, d = p % D;
        double wt = 0.0, term = 0.0;
        if (!(s->has_ii && tv == s->ii)) {
            wt = w ? ot_get(w, tv) : 1.0;
            term = -lp[(n * C + tv) * D + d] * wt;
        }
        if (s->red == 0)
            loss[p] = term;
        sum += term;
        wsum += wt;
    }
    if (s->red == 1)
        loss[0] = sum;
    if (s->red == 2)
        loss[0] = sum / wsum;
}

static void test_loss_one(tu_rng *r, const char *op, int32_t dt, const loss_spec *s)
{
    const int sce = op[0] == 'S';
    const int64_t C = s->d[1];
    int32_t two = 2, ii = s->ii;
    prt_dims xd = ot_dims5(s->rank, s->d[0], s->d[1], s->d[2], s->d[3], s->d[4]);
    prt_dims td = xd, yd[2];
    prt_field f[3];
    oc_case k = {.op = op, .f = f, .nb = 2};
    double *want[2];
    char what[160];
    td.nb_dims = s->rank - 1;
    for (int32_t i = 1; i < s->rank - 1; i++)
        td.d[i] = xd.d[i + 1];
    f[k.nf++] = ot_fld_str("reduction", red_names[s->red]);
    if (s->has_ii)
        f[k.nf++] = ot_fld_i32("ignore_index", &ii, 1);
    if (s->log_prob) {
        f[k.nf++] = ot_fld_i32("nb_outputs", &two, 1);
        k.nb_out = 2;
    }
    k.in[0] = ot_random(dt, xd, r, 0);
    if (sce)
        for (int64_t i = 0; i < tu_volume(&xd); i++)
            ot_set(&k.in[0], i, ot_get(&k.in[0], i) * 5.0);
    k.in[1] = ot_make(s->tdt, td);
    for (int64_t i = 0; i < tu_volume(&td); i++)
        ot_set(&k.in[1], i,
               s->has_ii && (s->all_ignored || tu_rng_range(r, 0, 3) == 0)
                   ? (double)ii
                   : (double)tu_rng_range(r, 0, C - 1));
    if (s->weight) {
        /* Positive, as class weights are: a weighted mean of mixed signs
         * may divide by nearly 0. */
        k.in[2] = ot_random(dt, D1(C), r, 0);
        for (int64_t c = 0; c < C; c++)
            ot_set(&k.in[2], c, fabs(ot_get(&k.in[2], c)) + 0.125);
        k.nb = 3;
    }
    yd[0] = s->red ? D0() : td;
    yd[1] = xd;
    want[0] = calloc((size_t)tu_volume(&td) + 1, sizeof(double));
    want[1] = calloc((size_t)tu_volume(&xd) + 1, sizeof(double));
    loss_ref(s, sce, &k.in[0], &k.in[1], s->weight ? &k.in[2] : NULL, want[0], want[1]);
    snprintf(what, sizeof what, "%s %s rank %d reduction %s%s%s%s, %s targets", op,
             prt_dtype_name(dt), (int)s->rank, red_names[s->red],
             s->has_ii ? " ignore_index" : "", s->weight ? " weight" : "",
             s->log_prob ? " log_prob" : "", prt_dtype_name(s->tdt));
    check_case(what, &k, yd, want, rtol_for(dt, sce ? SCE_RTOL : LOSS_RTOL));
    oc_free(&k);
    free(want[0]);
    free(want[1]);
}

static void test_losses(void)
{
    const int32_t i32 = PRT_INT32, i64 = PRT_INT64;
    const loss_spec specs[] = {
        /* rank, dims, target dtype, reduction, ignore_index?, its value,
         * weight, log_prob, all ignored */
        {2, {3, 5}, i64, 2, 0, 0, 0, 0, 0},
        {2, {4, 3}, i32, 1, 0, 0, 1, 1, 0},
        {2, {6, 4}, i64, 0, 0, 0, 1, 0, 0},
        {3, {3, 5, 2}, i64, 2, 1, 2, 1, 1, 0},
        {3, {3, 5, 6}, i32, 2, 1, -1, 1, 0, 0},
        {4, {2, 3, 4, 5}, i64, 0, 1, -5, 0, 1, 0},
        {4, {2, 4, 3, 3}, i64, 2, 1, 10, 0, 0, 0},
        {5, {2, 3, 2, 2, 3}, i32, 1, 1, 0, 1, 1, 0},
        {3, {4, 6, 300}, i64, 2, 1, -100, 1, 0, 0},
        {3, {2, 3, 4}, i64, 2, 1, 1, 1, 1, 1},
        {3, {2, 3, 4}, i64, 2, 1, 1, 0, 0, 1},
        {3, {0, 3, 4}, i64, 1, 0, 0, 1, 1, 0},
        {2, {5, 1}, i32, 2, 0, 0, 1, 1, 0},
    };
    static const char *const ops[2] = {"NegativeLogLikelihoodLoss",
                                       "SoftmaxCrossEntropyLoss"};
    tu_rng r;
    tu_rng_seed(&r, 4242);
    for (int o = 0; o < 2; o++)
        for (size_t v = 0; v < sizeof specs / sizeof specs[0]; v++) {
            loss_spec s = specs[v];
            if (o == 0)
                s.log_prob = 0; /* NLL has one output */
            test_loss_one(&r, ops[o], PRT_FLOAT32, &s);
            if (v == 3 || v == 5)
                for (int32_t dt = PRT_FLOAT16; dt <= PRT_BFLOAT16; dt++)
                    test_loss_one(&r, ops[o], dt, &s);
        }
}

/* The node test's values for NLL of [N, C] = [3, 5] with a weight and
 * reduction mean, worked by hand: sum_p -x[p, t_p] w[t_p] / sum_p w[t_p]. */
static void test_nll_by_hand(void)
{
    static const double x[15] = {-1,   -2,   -3, -4, -5, -0.5, -1.5, -2.5,
                                 -3.5, -4.5, -2, -2, -2, -2,   -2};
    static const double t[3] = {0, 4, 2}, w[5] = {1, 2, 3, 4, 5};
    oc_case k = {.op = "NegativeLogLikelihoodLoss", .nb = 3};
    prt_dims yd = D0();
    double want = (1.0 * 1 + 4.5 * 5 + 2.0 * 3) / (1 + 5 + 3), *wp = &want;
    k.in[0] = ot_make(PRT_FLOAT32, D2(3, 5));
    k.in[1] = ot_make(PRT_INT64, D1(3));
    k.in[2] = ot_make(PRT_FLOAT32, D1(5));
    for (int i = 0; i < 15; i++)
        ot_set(&k.in[0], i, x[i]);
    for (int i = 0; i < 3; i++)
        ot_set(&k.in[1], i, t[i]);
    for (int i = 0; i < 5; i++)
        ot_set(&k.in[2], i, w[i]);
    check_case("NLL by hand", &k, &yd, &wp, 1e-7);
    oc_free(&k);
}

/* ---- MeanVarianceNormalization ---------------------------------------------- */

static void test_mvn_one(tu_rng *r, int32_t dt, prt_dims xd, const int32_t *axes,
                         int32_t nb_axes)
{
    const int32_t rk = xd.nb_dims;
    const int64_t n = tu_volume(&xd);
    prt_field f[1] = {ot_fld_i32("axes", axes, nb_axes)};
    oc_case k = {.op = "MeanVarianceNormalization", .f = f, .nf = nb_axes >= 0, .nb = 1};
    uint32_t red = nb_axes == 0 ? (1u << rk) - 1u : 0;
    double *want = calloc((size_t)n + 1, sizeof(double));
    int64_t idx[PRT_MAX_DIMS], jdx[PRT_MAX_DIMS];
    char what[128];
    int len;
    if (nb_axes < 0) { /* the default, [0, 2, 3] */
        static const int32_t dflt[3] = {0, 2, 3};
        axes = dflt;
        nb_axes = 3;
    }
    for (int32_t i = 0; i < nb_axes; i++)
        red |= 1u << (axes[i] < 0 ? axes[i] + rk : axes[i]);
    k.in[0] = ot_random(dt, xd, r, 0);
    for (int64_t i = 0; i < n; i++)
        ot_set(&k.in[0], i, ot_get(&k.in[0], i) * 3.0 + 1.0);
    /* Each element: the mean and variance of every element that shares its
     * indices over the kept dims, by a walk over all of X. */
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0, q = 0.0, cnt = 0.0, mean;
        ot_unravel(&xd, i, idx);
        for (int pass = 0; pass < 2; pass++)
            for (int64_t j = 0; j < n; j++) {
                int same = 1;
                ot_unravel(&xd, j, jdx);
                for (int32_t a = 0; a < rk && same; a++)
                    same = (red >> a & 1u) || idx[a] == jdx[a];
                if (!same)
                    continue;
                if (pass == 0) {
                    s += ot_get(&k.in[0], j);
                    cnt += 1.0;
                } else {
                    q +=
                        (ot_get(&k.in[0], j) - s / cnt) * (ot_get(&k.in[0], j) - s / cnt);
                }
            }
        mean = s / cnt;
        want[i] = (ot_get(&k.in[0], i) - mean) / (sqrt(q / cnt) + 1e-9);
    }
    len = snprintf(what, sizeof what, "MeanVarianceNormalization %s, axes",
                   prt_dtype_name(dt));
    for (int32_t i = 0; i < nb_axes && len > 0 && (size_t)len < sizeof what; i++)
        len += snprintf(what + len, sizeof what - (size_t)len, " %d", (int)axes[i]);
    check_case(what, &k, &xd, &want, rtol_for(dt, 2e-6));
    oc_free(&k);
    free(want);
}

static void test_mvn(void)
{
    static const int32_t a1[1] = {1}, aneg[2] = {-1, -3}, a02[2] = {0, 2};
    static const int32_t a23[2] = {2, 3}, a0[1] = {0};
    tu_rng r;
    tu_rng_seed(&r, 77);
    test_mvn_one(&r, PRT_FLOAT32, D4(3, 3, 3, 1), NULL, -1);
    test_mvn_one(&r, PRT_FLOAT32, D4(2, 5, 3, 4), NULL, -1);
    test_mvn_one(&r, PRT_FLOAT32, D3(4, 6, 5), a1, 1);
    test_mvn_one(&r, PRT_FLOAT32, D3(3, 4, 5), aneg, 2);
    test_mvn_one(&r, PRT_FLOAT32, D3(3, 4, 5), a02, 2);
    test_mvn_one(&r, PRT_FLOAT32, D4(2, 3, 4, 5), a23, 2);
    test_mvn_one(&r, PRT_FLOAT32, D3(2, 3, 4), a0, 0); /* every dim */
    test_mvn_one(&r, PRT_FLOAT32, D2(7, 1), a1, 1);    /* groups of one */
    test_mvn_one(&r, PRT_FLOAT32, D4(2, 0, 3, 1), NULL, -1);
    test_mvn_one(&r, PRT_FLOAT16, D4(2, 3, 4, 2), NULL, -1);
    test_mvn_one(&r, PRT_BFLOAT16, D3(3, 4, 5), a02, 2);
}

/* ---- Det ------------------------------------------------------------------- */

/* The cofactor expansion along the first row (the m x m matrix at a, rows
 * `stride` apart; m <= 6). */
static double det_ref(const double *a, int64_t m, int64_t stride)
{
    double minor[36], s = 0.0;
    if (m == 0)
        return 1.0;
    if (m == 1)
        return a[0];
    for (int64_t j = 0; j < m; j++) {
        for (int64_t i = 1; i < m; i++)
            for (int64_t c = 0, k = 0; c < m; c++)
                if (c != j)
                    minor[(i - 1) * (m - 1) + k++] = a[i * stride + c];
        s += (j % 2 ? -1.0 : 1.0) * a[j] * det_ref(minor, m - 1, m - 1);
    }
    return s;
}

static void test_det_one(tu_rng *r, int32_t dt, prt_dims xd, int fill)
{
    const int32_t rk = xd.nb_dims;
    const int64_t m = xd.d[rk - 1], mm = m * m;
    prt_dims yd = xd;
    int64_t batch;
    oc_case k = {.op = "Det", .nb = 1};
    double a[36], *want;
    char what[96];
    yd.nb_dims = rk - 2;
    batch = tu_volume(&yd);
    want = calloc((size_t)batch + 1, sizeof(double));
    k.in[0] = ot_random(dt, xd, r, 0);
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < mm; i++) {
            const int64_t row = i / m, col = i % m;
            /* fill 1: the identity with rows swapped b times; 2: upper
             * triangular; 3: the last row a sum of the others. */
            double v = ot_get(&k.in[0], b * mm + i);
            if (fill == 1)
                v = col == (row + b) % m ? 1.0 : 0.0;
            else if (fill == 2 && col < row)
                v = 0.0;
            else if (fill == 3 && row == m - 1) {
                v = 0.0;
                for (int64_t q = 0; q < m - 1; q++)
                    v += ot_get(&k.in[0], b * mm + q * m + col);
            }
            ot_set(&k.in[0], b * mm + i, v);
            a[i] = ot_get(&k.in[0], b * mm + i);
        }
        want[b] = det_ref(a, m, m);
    }
    snprintf(what, sizeof what, "Det %s %lld x %lld, %lld matrices, fill %d",
             prt_dtype_name(dt), (long long)m, (long long)m, (long long)batch, fill);
    check_case(what, &k, &yd, &want, rtol_for(dt, 2e-7));
    oc_free(&k);
    free(want);
}

static void test_det(void)
{
    tu_rng r;
    tu_rng_seed(&r, 11);
    test_det_one(&r, PRT_FLOAT32, D2(2, 2), 0);
    test_det_one(&r, PRT_FLOAT32, D3(3, 2, 2), 0);
    test_det_one(&r, PRT_FLOAT32, D2(1, 1), 0);
    test_det_one(&r, PRT_FLOAT32, D3(20, 3, 3), 0);
    test_det_one(&r, PRT_FLOAT32, D4(2, 3, 5, 5), 0);
    test_det_one(&r, PRT_FLOAT32, D3(4, 6, 6), 0);
    test_det_one(&r, PRT_FLOAT32, D3(5, 4, 4), 1);
    test_det_one(&r, PRT_FLOAT32, D3(3, 5, 5), 2);
    test_det_one(&r, PRT_FLOAT32, D3(3, 4, 4), 3);
    test_det_one(&r, PRT_FLOAT32, D3(3, 0, 0), 0);
    test_det_one(&r, PRT_FLOAT32, D3(0, 3, 3), 0);
    test_det_one(&r, PRT_FLOAT16, D3(4, 3, 3), 0);
    test_det_one(&r, PRT_BFLOAT16, D3(4, 3, 3), 0);
}

/* ---- refusals ------------------------------------------------------------ */

static void expect_refusal(const char *what, oc_case *k, const char *needle)
{
    char err[512];
    prt_engine *e = oc_build(PRT_DEVICE_CPU, k, err, sizeof err);
    CHECK(e == NULL);
    if (!strstr(err, needle)) {
        fprintf(stderr, "%s: the error '%s' does not say '%s'\n", what, err, needle);
        CHECK(!"the error names the problem");
    }
    prt_engine_destroy(e);
    oc_free(k);
}

/* A loss case of scores [3, 5], targets [3] (dtype tdt) holding t. */
static oc_case loss3(const char *op, int32_t tdt, const double *t)
{
    oc_case k = {.op = op, .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D2(3, 5));
    k.in[1] = ot_make(tdt, D1(3));
    for (int i = 0; i < 3; i++)
        ot_set(&k.in[1], i, t[i]);
    return k;
}

/* A target out of range fails the run (not the build), naming it. */
static void expect_run_error(const char *what, oc_case *k, const char *needle)
{
    prt_engine *e = NULL;
    ot_tensor y = {0};
    CHECK_OK(ot_build_op(k->op, k->f, k->nf, k->in, k->nb, NULL, &e));
    if (e) {
        prt_status st = ot_run_engine(e, k->in, k->nb, &y);
        if (st != PRT_ERR_INVALID_ARGUMENT || !strstr(prt_last_error(), needle)) {
            fprintf(stderr, "%s: status %d, '%s' does not say '%s'\n", what, (int)st,
                    prt_last_error(), needle);
            CHECK(!"the run fails naming the target");
        }
    }
    ot_free(&y);
    prt_engine_destroy(e);
    oc_free(k);
}

static void test_refusals(void)
{
    static const double ok[3] = {0, 1, 2}, high[3] = {0, 5, 1}, neg[3] = {2, -3, 0};
    static const double ign[3] = {-1, 7, 0};
    int32_t ax4 = 4, ax11[2] = {1, -2}, ii = -1;
    prt_field fr = ot_fld_str("reduction", "avg");
    prt_field fa = ot_fld_i32("axes", &ax4, 1), fd = ot_fld_i32("axes", ax11, 2);
    prt_field fi = ot_fld_i32("ignore_index", &ii, 1);
    oc_case k;

    k = (oc_case){.op = "NegativeLogLikelihoodLoss", .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D1(5));
    k.in[1] = ot_make(PRT_INT64, D0());
    expect_refusal("NLL rank 1", &k, "input has rank 1; it must be [N, C]");

    k = (oc_case){.op = "NegativeLogLikelihoodLoss", .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D3(3, 5, 2));
    k.in[1] = ot_make(PRT_INT64, D1(3));
    expect_refusal("NLL target rank", &k, "target [3] has rank 1; it must have rank 2");

    k = (oc_case){.op = "SoftmaxCrossEntropyLoss", .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D3(3, 5, 2));
    k.in[1] = ot_make(PRT_INT64, D2(3, 4));
    expect_refusal("SCE labels dims", &k,
                   "labels [3, 4] does not match scores [3, 5, 2]");

    k = loss3("NegativeLogLikelihoodLoss", PRT_INT64, ok);
    k.in[2] = ot_make(PRT_FLOAT32, D1(4));
    k.nb = 3;
    expect_refusal("NLL weight [4]", &k, "weight [4] must be [C]");

    k = loss3("SoftmaxCrossEntropyLoss", PRT_INT64, ok);
    k.in[2] = ot_make(PRT_FLOAT32, D2(1, 5));
    k.nb = 3;
    expect_refusal("SCE weights rank 2", &k, "weights [1, 5] must be [C]");

    k = loss3("NegativeLogLikelihoodLoss", PRT_FLOAT32, ok);
    expect_refusal("NLL float target", &k, "float32");

    k = loss3("NegativeLogLikelihoodLoss", PRT_INT8, ok);
    expect_refusal("NLL int8 target", &k, "int8");

    k = loss3("SoftmaxCrossEntropyLoss", PRT_INT64, ok);
    k.f = &fr;
    k.nf = 1;
    expect_refusal("SCE reduction avg", &k, "reduction 'avg' is not supported");

    k = loss3("NegativeLogLikelihoodLoss", PRT_INT64, high);
    expect_run_error("NLL target 5 of 5", &k,
                     "target 5 (element 1) is out of range: C is 5, so it must lie in "
                     "[0, 5) (no ignore_index is set)");

    k = loss3("NegativeLogLikelihoodLoss", PRT_INT32, neg);
    k.f = &fi;
    k.nf = 1;
    expect_run_error("NLL target -3", &k, "target -3 (element 1) is out of range");

    k = loss3("SoftmaxCrossEntropyLoss", PRT_INT64, ign);
    k.f = &fi;
    k.nf = 1;
    expect_run_error("SCE label 7", &k,
                     "label 7 (element 1) is out of range: C is 5, so it must lie in "
                     "[0, 5) (ignore_index is -1)");

    k = (oc_case){.op = "MeanVarianceNormalization", .f = &fa, .nf = 1, .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D4(1, 2, 3, 4));
    expect_refusal("MVN axis 4", &k, "axis 4 is out of range for X of rank 4");

    k = (oc_case){.op = "MeanVarianceNormalization", .f = &fd, .nf = 1, .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 3, 4));
    expect_refusal("MVN axes 1, -2", &k, "axes name dim 1 twice");

    k = (oc_case){.op = "MeanVarianceNormalization", .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 3, 4));
    expect_refusal("MVN default axes on rank 3", &k, "axis 3 is out of range");

    k = (oc_case){.op = "MeanVarianceNormalization", .nb = 1};
    k.in[0] = ot_make(PRT_INT32, D4(2, 3, 4, 1));
    expect_refusal("MVN int32", &k, "int32");

    k = (oc_case){.op = "Det", .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D1(4));
    expect_refusal("Det rank 1", &k, "X has rank 1; it must be [*, M, M]");

    k = (oc_case){.op = "Det", .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 2, 3));
    expect_refusal("Det 2 x 3", &k, "last two dims are 2 and 3");

    k = (oc_case){.op = "Det", .nb = 1};
    k.in[0] = ot_make(PRT_INT64, D2(2, 2));
    expect_refusal("Det int64", &k, "int64");
}

int main(void)
{
    test_losses();
    test_nll_by_hand();
    test_mvn();
    test_det();
    test_refusals();
    return tu_finish("test_ops_loss");
}

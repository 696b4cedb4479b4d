/*
 * The integer products (MatMulInteger, QLinearMatMul, ConvInteger,
 * QLinearConv; src/ops/qlinear.h) against references written here from
 * ONNX's definitions: sums of (a - a_zero_point)(b - b_zero_point) in
 * int64, requantized as qlinear.h states (float32 multiplier, rint half to
 * even, saturation). Shapes around the kernel's tiles and panels (odd
 * sizes, K not a multiple of 4 or 64, one row, one column), every mix of
 * uint8 and int8, zero points at the ends of their ranges (0, 255, -128,
 * 127) and random, per row, per column and per output channel, B and W as
 * constants (packed once) and as inputs (packed per run), batches, and
 * each build of the kernel this machine has: AVX-512 VNNI, the AVX2 tile,
 * the portable code built for AVX2 and plain (cpu_force_baseline), on 1 and 3 threads.
 * Then the errors: zero points and scales of the wrong size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "op_testutil.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/cpu/qgemm.h"
#include "ops/qlinear.h"

static tu_rng rng;

/* Random bytes of dtype (uint8 or int8); extremes now and then. */
static ot_tensor q_random(int32_t dtype, prt_dims d)
{
    ot_tensor t = ot_make(dtype, d);
    int64_t n = base_volume(&d);
    uint8_t *p = t.data;
    for (int64_t i = 0; p && i < n; i++)
        p[i] = (uint8_t)tu_rng_range(&rng, 0, 255);
    return t;
}

/* A zero point of dtype: an extreme or a random value. */
static double q_zp(int32_t dtype)
{
    int64_t lo = dtype == PRT_UINT8 ? 0 : -128, hi = lo + 255;
    switch (tu_rng_range(&rng, 0, 3)) {
    case 0:
        return (double)lo;
    case 1:
        return (double)hi;
    default:
        return (double)tu_rng_range(&rng, lo, hi);
    }
}

static ot_tensor q_zps(int32_t dtype, prt_dims d)
{
    ot_tensor t = ot_make(dtype, d);
    for (int64_t i = 0; i < base_volume(&d); i++)
        ot_set(&t, i, q_zp(dtype));
    return t;
}

static ot_tensor q_scales(prt_dims d, float lo, float hi)
{
    ot_tensor t = ot_make(PRT_FLOAT32, d);
    for (int64_t i = 0; i < base_volume(&d); i++)
        ((float *)t.data)[i] = lo + (hi - lo) * (float)tu_rng_uniform(&rng);
    return t;
}

static ot_tensor q_scalar_f(float v)
{
    ot_tensor t = ot_make(PRT_FLOAT32, D0());
    *(float *)t.data = v;
    return t;
}

/* qlinear.h's requantization of one sum. */
static double q_requant(int64_t sum, float mult, int32_t zp, int32_t dtype)
{
    const int32_t lo = dtype == PRT_UINT8 ? 0 : -128, hi = lo + 255;
    float f = (float)(int32_t)sum * mult;
    f = f >= (float)(lo - zp) ? f : (float)(lo - zp);
    f = f <= (float)(hi - zp) ? f : (float)(hi - zp);
    return (double)((int32_t)nearbyintf(f) + zp);
}

/* The kernel builds to run each case with: 0 the best this CPU has
 * (VNNI, else the AVX2 int16 tiles), 1 no VNNI (the products' AVX2 tile
 * and the int16 convolution tiles even on a VNNI CPU), 2 the portable
 * code built for AVX2, 3 the portable code built plain. */
#define Q_BUILDS 4

static int q_set_build(int b)
{
    static const int force[Q_BUILDS] = {OP_QG_AUTO, OP_QG_AVX2, OP_QG_PORTABLE,
                                        OP_QG_PORTABLE};
    op_qg_force(force[b]);
    cpu_force_baseline(b == 3);
    if (b == 0)
        return 1;
    if (b == 1 || b == 2)
        return cpu_avx2();
    return 1;
}

/* Runs engine e with 1 and 3 threads, each output checked against want. */
static void q_run_threads(const char *what, prt_engine *e, int b, const ot_tensor *in,
                          int32_t nb, uint32_t consts, const prt_dims *wd,
                          const double *want, double rtol)
{
    for (int threads = 1; threads <= 3; threads += 2) {
        ot_tensor y = {0};
        char name[256];
        snprintf(name, sizeof name, "%s (build %d, %d threads)", what, b, threads);
        CHECK_OK(ot_run_engine_const(e, in, nb, consts, threads, &y));
        if (y.data)
            ot_check_close(name, &y, wd, want, rtol);
        ot_free(&y);
    }
}

/* Runs op on in[0..nb) (constants where bit i of consts is set) with every
 * build and 1 and 3 threads, each checked against want: the engine built
 * with the best build (its constants packed for that build's layout, and
 * run with the others, which then pack per run), and one built with build
 * 1 (the int16 layout) run with it. */
static void q_run_all(const char *what, const char *op, const prt_field *f, int32_t nf,
                      const ot_tensor *in, int32_t nb, uint32_t consts,
                      const prt_dims *wd, const double *want, double rtol)
{
    prt_engine *e = NULL;
    prt_status st = ot_build_op_const(op, f, nf, in, nb, consts, &e);
    if (st) {
        tu_checks++;
        fprintf(stderr, "%s: build failed: %s\n", what, prt_last_error());
        tu_fail(__FILE__, __LINE__, what);
        return;
    }
    for (int b = 0; b < Q_BUILDS; b++) {
        if (!q_set_build(b))
            continue;
        q_run_threads(what, e, b, in, nb, consts, wd, want, rtol);
        if (b == 1 && op_qg_wide()) {
            prt_engine *e1 = NULL;
            CHECK_OK(ot_build_op_const(op, f, nf, in, nb, consts, &e1));
            if (e1)
                q_run_threads(what, e1, b, in, nb, consts, wd, want, rtol);
            prt_engine_destroy(e1);
        }
    }
    q_set_build(0);
    prt_engine_destroy(e);
}

/* ---- MatMulInteger and QLinearMatMul ------------------------------------- */

static void q_matmul_case(int qlinear, int64_t batch, int b_batched, int64_t M, int64_t K,
                          int64_t N)
{
    const int32_t ta = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int32_t tb = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int32_t ty = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int row_zp = !qlinear && tu_rng_range(&rng, 0, 2) == 0;
    const int col_zp = tu_rng_range(&rng, 0, 1);
    const int b_const = !b_batched && tu_rng_range(&rng, 0, 1);
    prt_dims ad = batch > 1 ? D3(batch, M, K) : D2(M, K);
    prt_dims bd = b_batched ? D3(batch, K, N) : D2(K, N);
    prt_dims yd = batch > 1 ? D3(batch, M, N) : D2(M, N);
    ot_tensor in[8] = {0}, A = q_random(ta, ad), B = q_random(tb, bd);
    ot_tensor az = q_zps(ta, row_zp ? D1(M) : D0());
    ot_tensor bz = q_zps(tb, col_zp ? D1(N) : D0());
    ot_tensor as = q_scalar_f(0.01f + 0.05f * (float)tu_rng_uniform(&rng));
    ot_tensor bs = q_scales(col_zp ? D1(N) : D0(), 0.001f, 0.05f);
    ot_tensor ys = q_scalar_f(0.5f + 4.0f * (float)tu_rng_uniform(&rng));
    ot_tensor yz = q_zps(ty, D0());
    double *want = malloc(sizeof(double) * (size_t)(batch * M * N + 1));
    int32_t nb;
    char what[160];
    if (!want || !A.data || !B.data)
        abort(); /* out of memory in the test itself */
    for (int64_t p = 0; p < batch; p++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t s = 0;
                double za = ot_get(&az, row_zp ? i : 0), zb = ot_get(&bz, col_zp ? j : 0);
                for (int64_t k = 0; k < K; k++)
                    s +=
                        (int64_t)(ot_get(&A, (p * M + i) * K + k) - za) *
                        (int64_t)(ot_get(&B, ((b_batched ? p : 0) * K + k) * N + j) - zb);
                if (qlinear) {
                    float mult = *(float *)as.data * ((float *)bs.data)[col_zp ? j : 0] /
                                 *(float *)ys.data;
                    want[(p * M + i) * N + j] =
                        q_requant(s, mult, (int32_t)ot_get(&yz, 0), ty);
                } else {
                    want[(p * M + i) * N + j] = (double)(int32_t)s;
                }
            }
    if (qlinear) {
        ot_tensor q[8] = {A, as, az, B, bs, bz, ys, yz};
        memcpy(in, q, sizeof q);
        nb = 8;
    } else {
        ot_tensor q[4] = {A, B, az, bz};
        memcpy(in, q, sizeof q);
        nb = 4;
        ot_free(&as), ot_free(&bs), ot_free(&ys), ot_free(&yz);
    }
    snprintf(what, sizeof what, "%s %s x %s batch %lld%s M %lld K %lld N %lld%s%s%s",
             qlinear ? "QLinearMatMul" : "MatMulInteger", prt_dtype_name(ta),
             prt_dtype_name(tb), (long long)batch, b_batched ? " (B too)" : "",
             (long long)M, (long long)K, (long long)N, row_zp ? ", zp per row" : "",
             col_zp ? ", per column" : "", b_const ? ", B constant" : "");
    /* Zero points and scales constants, as models have them. */
    q_run_all(what, qlinear ? "QLinearMatMul" : "MatMulInteger", NULL, 0, in, nb,
              (qlinear ? 0xf6u : 0xcu) | (b_const ? (qlinear ? 0x8u : 0x2u) : 0u), &yd,
              want, 0.0);
    for (int32_t k = 0; k < nb; k++)
        ot_free(&in[k]);
    free(want);
}

static void test_matmul(void)
{
    static const int64_t Ms[] = {1, 2, 7, 8, 9, 33, 64, 70};
    static const int64_t Ks[] = {1, 3, 4, 5, 17, 63, 64, 65, 131, 300};
    static const int64_t Ns[] = {1, 5, 15, 16, 17, 31, 32, 33, 100, 129};
    for (int qlinear = 0; qlinear < 2; qlinear++)
        for (int t = 0; t < 40; t++) {
            int64_t M = Ms[tu_rng_range(&rng, 0, 7)], K = Ks[tu_rng_range(&rng, 0, 9)];
            int64_t N = Ns[tu_rng_range(&rng, 0, 9)];
            int64_t batch = t % 5 == 0 ? 3 : 1;
            q_matmul_case(qlinear, batch, batch > 1 && t % 2, M, K, N);
        }
}

/* ---- DynamicQuantizeMatMul and MatMulIntegerToFloat ---------------------- */

/* ONNX's DynamicQuantizeLinear of x[0..n) into q (uint8), written from its
 * definition: the range widened to hold 0, scale (max - min) / 255 (1 when
 * x is all zeros, ORT's rule), zero point and values rounded half to even. */
static void q_dql_ref(const float *x, int64_t n, uint8_t *q, float *scale, int32_t *zp)
{
    float mn = 0.0f, mx = 0.0f, z;
    for (int64_t i = 0; i < n; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    *scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    z = 0.0f - mn / *scale;
    z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
    *zp = (int32_t)nearbyintf(z);
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / *scale) + (float)*zp;
        q[i] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
    }
}

/* One case of the float-output products against the unfused chain's
 * arithmetic: the int32 sums exact (unit scales and no bias: float(sum)
 * bit for bit), else sum * float32(a_scale b_scale[j]) + bias[j] within
 * an ulp or two. */
static void q_float_case(int dynamic, int exact, int64_t batch, int64_t M, int64_t K,
                         int64_t N)
{
    const int32_t ta = dynamic                    ? PRT_UINT8
                       : tu_rng_range(&rng, 0, 1) ? PRT_UINT8
                                                  : PRT_INT8;
    const int32_t tb = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int col = tu_rng_range(&rng, 0, 1), b_const = tu_rng_range(&rng, 0, 1);
    const int with_bias = !exact && tu_rng_range(&rng, 0, 2) != 0;
    const int with_bz = with_bias || tu_rng_range(&rng, 0, 2) != 0;
    const int64_t rows = batch * M;
    prt_dims ad = batch > 1 ? D3(batch, M, K) : D2(M, K);
    prt_dims yd = batch > 1 ? D3(batch, M, N) : D2(M, N);
    ot_tensor in[7] = {0}, B = q_random(tb, D2(K, N)), A, as = {0}, az = {0};
    ot_tensor bs = exact ? ot_make(PRT_FLOAT32, col ? D1(N) : D0())
                         : q_scales(col ? D1(N) : D0(), 0.001f, 0.05f);
    ot_tensor bz = q_zps(tb, col ? D1(N) : D0());
    ot_tensor bias = q_scales(D1(N), -3.0f, 3.0f);
    uint8_t *qa = malloc((size_t)(rows * K + 1));
    double *want = malloc(sizeof(double) * (size_t)(rows * N + 1));
    float a_scale = 1.0f;
    int32_t a_zp = 0, nb = 0;
    uint32_t consts;
    char what[160];
    if (!qa || !want || !B.data)
        abort(); /* out of memory in the test itself */
    for (int64_t j = 0; exact && j < base_volume(&bs.dims); j++)
        ((float *)bs.data)[j] = 1.0f;
    if (dynamic) {
        /* all positive now and then (the zero point 0), else around 0 */
        const float lo = tu_rng_range(&rng, 0, 3) == 0 ? 0.5f : -2.5f;
        A = q_scales(ad, lo, 4.0f);
        q_dql_ref((const float *)A.data, rows * K, qa, &a_scale, &a_zp);
    } else {
        A = q_random(ta, ad);
        az = q_zps(ta, D0());
        as = q_scalar_f(exact ? 1.0f : 0.01f + 0.05f * (float)tu_rng_uniform(&rng));
        a_scale = *(float *)as.data;
        a_zp = (int32_t)ot_get(&az, 0);
        for (int64_t i = 0; i < rows * K; i++)
            qa[i] = (uint8_t)(int32_t)ot_get(&A, i);
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < N; j++) {
            const double zb = with_bz ? ot_get(&bz, col ? j : 0) : 0.0;
            const float m = a_scale * ((const float *)bs.data)[col ? j : 0];
            int64_t s = 0;
            for (int64_t k = 0; k < K; k++) {
                const int64_t av = ta == PRT_INT8 ? (int8_t)qa[i * K + k] : qa[i * K + k];
                s += (av - a_zp) * (int64_t)(ot_get(&B, k * N + j) - zb);
            }
            want[i * N + j] = exact ? (double)(float)(int32_t)s
                                    : (double)(float)(int32_t)s * m +
                                          (with_bias ? ((float *)bias.data)[j] : 0.0);
        }
    in[nb++] = A;
    in[nb++] = B;
    if (!dynamic)
        in[nb++] = as;
    in[nb++] = bs;
    if (!dynamic)
        in[nb++] = az;
    if (with_bz)
        in[nb++] = bz;
    else
        ot_free(&bz);
    if (with_bias)
        in[nb++] = bias;
    else
        ot_free(&bias);
    /* everything but A constant; B an input now and then */
    consts = ((1u << nb) - 1u) & ~1u & (b_const ? ~0u : ~2u);
    snprintf(what, sizeof what, "%s %s x %s batch %lld M %lld K %lld N %lld%s%s%s%s",
             dynamic ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat",
             prt_dtype_name(dynamic ? PRT_FLOAT32 : ta), prt_dtype_name(tb),
             (long long)batch, (long long)M, (long long)K, (long long)N,
             col ? ", per column" : "", with_bz ? "" : ", no b_zero_point",
             with_bias ? ", bias" : "", exact ? ", unit scales" : "");
    q_run_all(what, dynamic ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat", NULL, 0,
              in, nb, consts, &yd, want, exact ? 0.0 : 2e-6);
    for (int32_t k = 0; k < nb; k++)
        ot_free(&in[k]);
    free(qa);
    free(want);
}

static void test_float_products(void)
{
    static const int64_t Ms[] = {1, 2, 7, 8, 9, 33, 64};
    static const int64_t Ks[] = {1, 3, 4, 5, 17, 63, 64, 65, 127};
    static const int64_t Ns[] = {1, 5, 15, 16, 17, 31, 32, 33, 100, 129};
    for (int t = 0; t < 48; t++) {
        const int64_t M = Ms[tu_rng_range(&rng, 0, 6)], K = Ks[tu_rng_range(&rng, 0, 8)];
        const int64_t N = Ns[tu_rng_range(&rng, 0, 9)];
        q_float_case(t % 2, t % 3 == 0 && t % 2 == 0, t % 5 == 0 ? 3 : 1, M, K, N);
    }
}

static void test_float_errors(void)
{
    ot_tensor in[5] = {q_scales(D2(3, 4), -1.0f, 1.0f), q_random(PRT_INT8, D2(4, 5)),
                       q_scales(D1(2), 0.01f, 0.02f)};
    ot_tensor y = {0};
    CHECK_ERR(ot_run_op("DynamicQuantizeMatMul", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
              "b_scale has 2 values; it takes one, or one per column of B");
    ot_free(&y);
    ot_free(&in[2]);
    in[2] = q_scales(D0(), 0.01f, 0.02f);
    in[3] = q_zps(PRT_INT8, D0());
    in[4] = q_scales(D1(4), -1.0f, 1.0f);
    CHECK_ERR(ot_run_op("DynamicQuantizeMatMul", NULL, 0, in, 5, &y), PRT_ERR_SHAPE,
              "bias has 4 values; it takes one per column (5)");
    ot_free(&y);
    ot_free(&in[1]);
    in[1] = q_random(PRT_INT8, D3(1, 4, 5));
    CHECK_ERR(ot_run_op("DynamicQuantizeMatMul", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
              "B must be a [K, N] matrix");
    ot_free(&y);
    for (int k = 0; k < 5; k++)
        ot_free(&in[k]);
}

/* ---- ConvInteger and QLinearConv ----------------------------------------- */

typedef struct q_conv_shape {
    int32_t ns, group;
    int sym; /* W's zero points 0 on the signed side (int8 0, uint8 128) */
    int64_t n, c, m, d[2], k[2];
    int32_t s[2], dl[2], pads[4];
} q_conv_shape;

static void q_conv_case(int qlinear, const q_conv_shape *cs)
{
    const int32_t ns = cs->ns;
    const int32_t tx = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int32_t tw = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int32_t ty = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int per_ch = tu_rng_range(&rng, 0, 1), w_const = tu_rng_range(&rng, 0, 1);
    const int has_bias = qlinear && tu_rng_range(&rng, 0, 1);
    const int64_t M = cs->m, C = cs->c, Cg = C / cs->group;
    prt_dims xd = ns == 1 ? D3(cs->n, C, cs->d[0]) : D4(cs->n, C, cs->d[0], cs->d[1]);
    prt_dims wd = ns == 1 ? D3(M, Cg, cs->k[0]) : D4(M, Cg, cs->k[0], cs->k[1]);
    int64_t st[2], dl[2], pb[2], O[2], ovol = 1;
    prt_dims yd;
    ot_tensor X = q_random(tx, xd), W = q_random(tw, wd), xz = q_zps(tx, D0());
    ot_tensor wz = q_zps(tw, per_ch ? D1(M) : D0()), xf, wf, bias = {0};
    ot_tensor xs = q_scalar_f(0.01f + 0.05f * (float)tu_rng_uniform(&rng));
    ot_tensor wsc = q_scales(per_ch ? D1(M) : D0(), 0.001f, 0.05f);
    ot_tensor ys = q_scalar_f(0.5f + 4.0f * (float)tu_rng_uniform(&rng));
    ot_tensor yz = q_zps(ty, D0()), in[9] = {0};
    prt_field f[4];
    int32_t nf = 0, nb;
    double *want;
    char what[200];
    for (int32_t i = 0; i < ns; i++) {
        st[i] = cs->s[i];
        dl[i] = cs->dl[i];
        pb[i] = cs->pads[i];
        O[i] = (cs->d[i] + cs->pads[i] + cs->pads[ns + i] - dl[i] * (cs->k[i] - 1) - 1) /
                   st[i] +
               1;
        ovol *= O[i];
    }
    yd = ns == 1 ? D3(cs->n, M, O[0]) : D4(cs->n, M, O[0], O[1]);
    want = malloc(sizeof(double) * (size_t)(base_volume(&yd) + 1));
    for (int64_t i = 0; cs->sym && i < base_volume(&wz.dims); i++)
        ot_set(&wz, i, tw == PRT_UINT8 ? 128 : 0);
    /* The definition: (x - x_zp) conv (w - w_zp), padding 0, in double. */
    xf = ot_make(PRT_FLOAT32, xd);
    wf = ot_make(PRT_FLOAT32, wd);
    if (!want || !xf.data || !wf.data)
        abort(); /* out of memory in the test itself */
    for (int64_t i = 0; i < base_volume(&xd); i++)
        ot_set(&xf, i, ot_get(&X, i) - ot_get(&xz, 0));
    for (int64_t i = 0; i < base_volume(&wd); i++)
        ot_set(&wf, i,
               ot_get(&W, i) - ot_get(&wz, per_ch ? i / (base_volume(&wd) / M) : 0));
    if (has_bias) {
        bias = ot_make(PRT_INT32, D1(M));
        for (int64_t m = 0; m < M; m++)
            ot_set(&bias, m, (double)tu_rng_range(&rng, -5000, 5000));
    }
    ot_conv_ref(&xf, &wf, has_bias ? &bias : NULL, cs->group, st, dl, pb, O, want);
    for (int64_t i = 0; i < base_volume(&yd); i++) {
        const int64_t m = i / ovol % M;
        if (qlinear)
            want[i] = q_requant((int64_t)want[i],
                                *(float *)xs.data * ((float *)wsc.data)[per_ch ? m : 0] /
                                    *(float *)ys.data,
                                (int32_t)ot_get(&yz, 0), ty);
        else
            want[i] = (double)(int32_t)(int64_t)want[i];
    }
    f[nf++] = ot_fld_i32("strides", cs->s, ns);
    f[nf++] = ot_fld_i32("dilations", cs->dl, ns);
    f[nf++] = ot_fld_i32("pads", cs->pads, 2 * ns);
    f[nf++] = ot_fld_i32("group", &cs->group, 1);
    if (qlinear) {
        ot_tensor q[9] = {X, xs, xz, W, wsc, wz, ys, yz, bias};
        memcpy(in, q, sizeof q);
        nb = has_bias ? 9 : 8;
    } else {
        ot_tensor q[4] = {X, W, xz, wz};
        memcpy(in, q, sizeof q);
        nb = 4;
        ot_free(&xs), ot_free(&wsc), ot_free(&ys), ot_free(&yz);
    }
    snprintf(what, sizeof what,
             "%s %s x %s, %d-D, N %lld C %lld M %lld group %d, k %lld, s %d, d %d, "
             "pad %d%s%s%s%s",
             qlinear ? "QLinearConv" : "ConvInteger", prt_dtype_name(tx),
             prt_dtype_name(tw), (int)ns, (long long)cs->n, (long long)C, (long long)M,
             (int)cs->group, (long long)cs->k[0], (int)cs->s[0], (int)cs->dl[0],
             (int)cs->pads[0], per_ch ? ", per channel" : "",
             w_const ? ", W constant" : "", has_bias ? ", bias" : "",
             cs->sym ? ", symmetric W" : "");
    q_run_all(what, qlinear ? "QLinearConv" : "ConvInteger", f, nf, in, nb,
              qlinear ? 0x1f6u | (w_const ? 0x8u : 0u) : 0xcu | (w_const ? 0x2u : 0u),
              &yd, want, 0.0);
    for (int32_t k = 0; k < nb; k++)
        ot_free(&in[k]);
    ot_free(&xf);
    ot_free(&wf);
    free(want);
}

/* Case t of a run of random shapes: 1-D every fourth, groups now and
 * then, channels up to maxc and maxm (per group), kernels up to maxk. */
static void q_conv_random(int qlinear, int t, int sym, int group_every, int64_t maxc,
                          int64_t maxm, int64_t maxk, int depthwise)
{
    q_conv_shape cs;
    memset(&cs, 0, sizeof cs);
    cs.sym = sym;
    cs.ns = t % 4 == 3 ? 1 : 2;
    cs.group = t % group_every == group_every - 1 ? (int32_t)tu_rng_range(&rng, 2, 3) : 1;
    cs.n = tu_rng_range(&rng, 1, 2);
    cs.c = cs.group * tu_rng_range(&rng, 1, maxc);
    cs.m = cs.group * tu_rng_range(&rng, 1, maxm);
    if (depthwise) {
        cs.ns = t % 7 == 6 ? 1 : 2;
        cs.group = (int32_t)tu_rng_range(&rng, 2, maxc);
        cs.c = cs.m = cs.group;
    }
    for (int32_t i = 0; i < cs.ns; i++) {
        cs.k[i] = t % 3 == 0 ? 1 : tu_rng_range(&rng, 1, maxk);
        cs.s[i] = t % 3 == 0 && t % 2 ? 1 : (int32_t)tu_rng_range(&rng, 1, 2);
        cs.dl[i] = t % 3 == 0 || t % 4 ? 1 : (int32_t)tu_rng_range(&rng, 1, 2);
        cs.pads[i] = t % 3 == 0 ? 0 : (int32_t)tu_rng_range(&rng, 0, 2);
        cs.pads[cs.ns + i] = t % 3 == 0 ? 0 : (int32_t)tu_rng_range(&rng, 0, 2);
        cs.d[i] = cs.dl[i] * (cs.k[i] - 1) + 1 + tu_rng_range(&rng, 0, 20);
    }
    q_conv_case(qlinear, &cs);
}

/* Case t of grouped (not depthwise) convolutions with symmetric W: the
 * channel-last path's groups (qconv_kernel.h), 2 to 32 of them, channels
 * per group odd and even (steps running past a group's channels into the
 * next one's, panels of a group stopping short of 16), strides, padding
 * and dilations. */
static void q_conv_grouped(int t)
{
    static const int32_t groups[] = {2, 4, 8, 32};
    static const int64_t per_group[] = {1, 3, 4, 5, 8, 17};
    q_conv_shape cs;
    memset(&cs, 0, sizeof cs);
    cs.sym = 1;
    cs.ns = t % 5 == 4 ? 1 : 2;
    cs.group = groups[t % 4];
    cs.n = tu_rng_range(&rng, 1, 2);
    cs.c = cs.group * per_group[tu_rng_range(&rng, 0, 5)];
    cs.m = cs.group * per_group[tu_rng_range(&rng, 0, 5)];
    if (cs.c == cs.group && cs.m == cs.group)
        cs.c *= 2; /* not depthwise: that is the float planes' path */
    for (int32_t i = 0; i < cs.ns; i++) {
        cs.k[i] = t % 6 == 0 ? 1 : tu_rng_range(&rng, 1, 3);
        cs.s[i] = (int32_t)tu_rng_range(&rng, 1, 2);
        cs.dl[i] = t % 3 == 2 ? 2 : 1;
        cs.pads[i] = (int32_t)tu_rng_range(&rng, 0, 2);
        cs.pads[cs.ns + i] = (int32_t)tu_rng_range(&rng, 0, 2);
        cs.d[i] = cs.dl[i] * (cs.k[i] - 1) + 1 + tu_rng_range(&rng, 0, 14);
    }
    q_conv_case(1, &cs);
}

static void test_conv(void)
{
    for (int qlinear = 0; qlinear < 2; qlinear++)
        for (int t = 0; t < 30; t++)
            q_conv_random(qlinear, t, 0, 5, 9, 20, 4, 0);
    /* Symmetric W: QLinearConv's channel-last VNNI path where W is a
     * constant (qconv_kernel.h), channels across its panels and tiles,
     * kernels wider than the padding (rows inside x and at its edges). */
    for (int t = 0; t < 24; t++)
        q_conv_random(1, t, 1, 8, 40, 90, 5, 0);
    /* ... with 8 output channels or fewer (one panel, half of it padding)
     * and kernels up to 7 x 7, as resnet18_w8's stem and first layers. */
    for (int t = 0; t < 16; t++)
        q_conv_random(1, t, 1, 100, 12, 8, 7, 0);
    /* Depthwise: the float planes of conv_dw.c (qconv_kernel.h), any zero
     * points, kernels up to 7 x 7 at strides 1 and 2 with padding. */
    for (int qlinear = 0; qlinear < 2; qlinear++)
        for (int t = 0; t < 20; t++)
            q_conv_random(qlinear, t, t % 2, 5, 24, 1, 7, 1);
    for (int t = 0; t < 40; t++)
        q_conv_grouped(t);
}

/* ---- errors --------------------------------------------------------------- */

static void test_errors(void)
{
    ot_tensor in[8] = {q_random(PRT_UINT8, D2(3, 4)), q_random(PRT_INT8, D2(4, 5)),
                       q_zps(PRT_UINT8, D1(2)), q_zps(PRT_INT8, D0())};
    ot_tensor y = {0};
    CHECK_ERR(ot_run_op("MatMulInteger", NULL, 0, in, 4, &y), PRT_ERR_SHAPE,
              "a_zero_point [2] has 2 values; it takes one, or one per row of A (3)");
    ot_free(&y);
    ot_free(&in[2]);
    in[2] = q_zps(PRT_UINT8, D0());
    ot_free(&in[3]);
    in[3] = q_zps(PRT_INT8, D1(4));
    CHECK_ERR(ot_run_op("MatMulInteger", NULL, 0, in, 4, &y), PRT_ERR_SHAPE,
              "b_zero_point [4] has 4 values; it takes one, or one per column of B (5)");
    ot_free(&y);
    for (int k = 0; k < 4; k++)
        ot_free(&in[k]);
}

/* The workspace MatMulInteger and QLinearMatMul claim covers the buffers
 * CUDA's cuBLASLt path carves from it (ql_tn_layout) at every shape, one
 * row and tiny ones included: issue 30, where the claim was the CPU
 * kernel's alone and products such as 1 x 4 x 4 or 7 x 64 x 32 silently
 * missed cuBLASLt for want of a few hundred bytes. */
static void test_tn_workspace(void)
{
    static const char *const ops[] = {"MatMulInteger", "QLinearMatMul"};
    /* {batch, M, K, N} */
    static const int64_t shapes[][4] = {
        {1, 1, 4, 4},      {1, 7, 64, 32},     {3, 5, 128, 96}, {2, 33, 36, 20},
        {1, 1, 1, 1},      {1, 1, 4096, 4},    {1, 300, 4, 4},  {4, 1, 16, 16},
        {1, 64, 768, 256}, {1, 2100, 16, 4096}};
    for (int op = 0; op < 2; op++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int64_t batch = shapes[s][0], M = shapes[s][1], K = shapes[s][2],
                          N = shapes[s][3];
            const prt_plugin_creator *c = NULL;
            prt_field_collection fc = {0, NULL};
            prt_plugin *p = NULL;
            prt_dynamic_tensor_desc io[9];
            const int32_t nb_in = op ? 8 : 2;
            int64_t ws = -1, need;
            CHECK_OK(prt_builtin_find_creator(ops[op], NULL, &c));
            if (!c)
                return;
            CHECK_OK(c->create(c, "q", &fc, PRT_PHASE_BUILD, &p));
            if (!p)
                return;
            memset(io, 0, sizeof io);
            /* QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale,
             * y_zp, then y; MatMulInteger: a, b, then y. */
            for (int32_t k = 0; k <= nb_in; k++) {
                const int is_b = k == (op ? 3 : 1), is_y = k == nb_in;
                prt_dims d = (prt_dims){0, {0}};
                io[k].desc.dtype = op && (k == 1 || k == 4 || k == 6) ? PRT_FLOAT32
                                   : is_y && !op                      ? PRT_INT32
                                                                      : PRT_UINT8;
                if (k == 0)
                    d = batch > 1 ? D3(batch, M, K) : D2(M, K);
                else if (is_b)
                    d = D2(K, N);
                else if (is_y)
                    d = batch > 1 ? D3(batch, M, N) : D2(M, N);
                io[k].desc.dims = io[k].min = io[k].opt = io[k].max = d;
            }
            CHECK_OK(p->vt->build->configure(p, io, nb_in, io + nb_in, 1));
            CHECK_OK(p->vt->build->get_workspace_size(p, io, nb_in, io + nb_in, 1, &ws));
            need = ql_tn_layout(batch * M, N, K, NULL, NULL);
            CHECK(need > 0 && ws >= need);
            if (!(need > 0 && ws >= need))
                fprintf(stderr,
                        "  %s batch %lld M %lld K %lld N %lld: workspace %lld, the "
                        "TN layout needs %lld\n",
                        ops[op], (long long)batch, (long long)M, (long long)K,
                        (long long)N, (long long)ws, (long long)need);
            p->vt->runtime->destroy(p);
        }
}

int main(void)
{
    tu_rng_seed(&rng, 30);
    test_matmul();
    test_conv();
    test_errors();
    test_float_products();
    test_float_errors();
    test_tn_workspace();
    return tu_finish("test_qgemm");
}

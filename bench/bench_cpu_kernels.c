/*
 * The CPU kernels' choices, measured (bench/RESULTS.md, "CPU kernels"):
 *
 *  - depthwise convolution: the plane kernel (op_dw_run, conv_dw.c) against
 *    the eight-channel channels-last one (op_dw8_run, conv_dw8.c) on
 *    MobileNet-v3's depthwise layers, the same inputs in one process,
 *    alternating; conv.c takes planes at stride 1 and eight channels at
 *    larger strides from these figures;
 *  - matrix products without transposes: the register tiles (op_gemm_nn)
 *    against OpenBLAS's cblas_sgemm (one thread) on MobileNet's and BERT's
 *    product shapes; op_math.c sends products up to 2^23 multiply-adds to
 *    the tiles from these;
 *  - h/cpuperf's kernels against what they replaced: depthwise 3x3 at
 *    stride 2 read in place against the planes, op_gemm_nn's B in panels
 *    against B read in place (BERT's blocks, whose B strides are multiples
 *    of 256 bytes, and MobileNet's, which stay in place), and a classifier's
 *    few rows against a transposed B as dot products against OpenBLAS.
 *
 *  - the blocked format CHW8's kernels (conv_chw8.c, conv_dw8.c's blocks in
 *    place) against the planes' on the same layers.
 *
 *  - the products with a constant B in packed panels, in the blocks a
 *    MatMul layer runs, against OpenBLAS;
 *  - GlobalAveragePool's CHW8 block means (op_block_means) against one
 *    running sum a lane (in chw8's part).
 *
 *    build/bench/bench_cpu_kernels [REPS] [chw8 | panels] [avx2]
 *
 * (`avx2` runs the AVX2 build where the CPU has AVX-512, to compare the two.)
 *
 * One thread; the best of REPS runs (default 300) of each. Prints a
 * Markdown table per part. Not a test: it checks nothing but that the two
 * agree (to 1e-4 relative) and runs for a few seconds.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/cpu/cpu_kernels.h"
#include "ops/op_common.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float *floats(size_t n, unsigned seed)
{
    float *p = malloc(sizeof(float) * (n ? n : 1) + 64);
    for (size_t i = 0; p && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

static double worst_rel(const float *a, const float *b, size_t n)
{
    double w = 0, scale = 1e-30;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(b[i]));
    for (size_t i = 0; i < n; i++)
        w = fmax(w, fabs(a[i] - b[i]) / scale);
    return w;
}

/* C, H, k, stride of MobileNet-v3-small's depthwise layers (pad k / 2). */
static const int dw_shapes[][4] = {
    {16, 112, 3, 2}, {72, 56, 3, 2},  {88, 28, 3, 1},  {96, 28, 5, 2}, {240, 14, 5, 1},
    {120, 14, 5, 1}, {144, 14, 5, 1}, {288, 14, 5, 2}, {576, 7, 5, 1},
};

static void bench_depthwise(int reps)
{
    const op_act act = {OP_ACT_HARD_SWISH, 1.0f / 6, 0.5f};
    printf(
        "| depthwise layer (C, H x W, k x k, stride) | planes (op_dw) | eight channels "
        "(op_dw8) |\n|---|---|---|\n");
    for (size_t s = 0; s < sizeof dw_shapes / sizeof dw_shapes[0]; s++) {
        const int64_t C = dw_shapes[s][0], H = dw_shapes[s][1], k = dw_shapes[s][2];
        const int64_t st = dw_shapes[s][3], pad = k / 2, OH = (H + 2 * pad - k) / st + 1;
        const int64_t in[2] = {H, H}, kk[2] = {k, k}, out[2] = {OH, OH}, ss[2] = {st, st};
        const int64_t dd[2] = {1, 1}, pb[2] = {pad, pad};
        op_dw p;
        op_dw8 p8;
        float *x = floats((size_t)(C * H * H), 1), *w = floats((size_t)(C * k * k), 2);
        float *b = floats((size_t)C + 8, 3), *y1 = floats((size_t)(C * OH * OH), 0);
        float *y2 = floats((size_t)(C * OH * OH), 0), *scratch;
        double best1 = 1e30, best2 = 1e30;
        if (!op_dw_plan(2, in, kk, out, ss, dd, pb, &p) ||
            !op_dw8_plan(2, in, kk, out, ss, dd, pb, &p8))
            continue;
        scratch = floats((size_t)(p.slot > op_dw8_slot(kk, out, ss, dd)
                                      ? p.slot
                                      : op_dw8_slot(kk, out, ss, dd)),
                         0);
        for (int r = 0; r < reps; r++) {
            double t0 = now(), t1;
            op_dw_zero(&p, scratch);
            for (int64_t c = 0; c < C; c++)
                op_dw_run(&p, x + c * H * H, w + c * k * k, b[c], &act, y1 + c * OH * OH,
                          scratch);
            t1 = now();
            for (int64_t c = 0; c < C; c += 8)
                op_dw8_run(&p8, x + c * H * H, w + c * k * k, b + c, &act,
                           C - c < 8 ? C - c : 8, y2 + c * OH * OH, scratch);
            best1 = fmin(best1, t1 - t0);
            best2 = fmin(best2, now() - t1);
        }
        if (worst_rel(y1, y2, (size_t)(C * OH * OH)) > 1e-4)
            printf("(the kernels disagree on the next row)\n");
        printf("| %lld, %lld x %lld, %lld x %lld, %lld | %.1f us | %.1f us |\n",
               (long long)C, (long long)H, (long long)H, (long long)k, (long long)k,
               (long long)st, best1 * 1e6, best2 * 1e6);
        free(x), free(w), free(b), free(y1), free(y2), free(scratch);
    }
}

/* M, N, K of MobileNet's pointwise layers (per image) and BERT's products
 * (batch 1 and 8, sequence 32). */
static const int64_t mm_shapes[][3] = {
    {72, 3136, 16}, {24, 784, 88},  {576, 49, 96},   {96, 49, 576},   {240, 196, 40},
    {32, 512, 128}, {32, 128, 512}, {256, 512, 128}, {256, 128, 512},
};

/* BERT's products with a constant B (batch 1 and 8, sequence 32), through
 * the packed panels (the AVX-512 tiles where the CPU has them). */
static const int64_t panel_shapes[][3] = {
    {32, 128, 128},  {32, 512, 128},  {32, 128, 512},
    {256, 128, 128}, {256, 512, 128}, {256, 128, 512},
};

/* Our product of A (M x K) and B (K x N) into C: op_gemm_nn, or (panels)
 * as a MatMul layer with a constant B runs it on one thread: B packed once
 * into bp, the product in op_gemm_split's blocks, each op_gemm_nn_panels. */
static void product(int panels, int64_t M, int64_t N, int64_t K, const float *A,
                    const float *B, const float *bp, float *C)
{
    int64_t mb, nb;
    if (!panels) {
        op_gemm_nn(M, N, K, A, K, B, N, C, N, NULL);
        return;
    }
    op_gemm_split(M, N, K, &mb, &nb);
    for (int64_t i0 = 0; i0 < M; i0 += mb)
        for (int64_t j0 = 0; j0 < N; j0 += nb)
            op_gemm_nn_panels(M - i0 < mb ? M - i0 : mb, N - j0 < nb ? N - j0 : nb, K,
                              A + i0 * K, K, bp + j0 * K, C + i0 * N + j0, N, NULL);
}

/* The products of `shapes` by `product`, against OpenBLAS's. */
static void bench_products(int reps, const int64_t (*shapes)[3], size_t nb_shapes,
                           int panels)
{
    if (!op_blas_in_use()) {
        printf("\n(OpenBLAS is not loaded here: no products to compare)\n");
        return;
    }
    printf("\n| product M x N x K%s | multiply-adds | %s | GMAC/s | OpenBLAS | GMAC/s "
           "|\n|---|---|---|---|---|---|\n",
           panels ? ", B constant" : "",
           panels ? "packed panels in blocks (op_gemm_nn_panels)"
                  : "register tiles (op_gemm_nn)");
    for (size_t s = 0; s < nb_shapes; s++) {
        const int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        const double macs = (double)(M * N * K);
        float *A = floats((size_t)(M * K), 4), *B = floats((size_t)(K * N), 5);
        float *C1 = floats((size_t)(M * N), 0), *C2 = floats((size_t)(M * N), 0);
        float *bp = floats((size_t)op_gemm_panel_floats(K, N), 0);
        double best1 = 1e30, best2 = 1e30;
        op_gemm_pack_panels(K, N, B, N, 0, (N + 15) / 16, bp);
        for (int r = 0; r < reps; r++) {
            double t0 = now(), t1;
            product(panels, M, N, K, A, B, bp, C1);
            t1 = now();
            op_blas_sgemm(0, 0, M, N, K, A, K, B, N, C2, N);
            best1 = fmin(best1, t1 - t0);
            best2 = fmin(best2, now() - t1);
        }
        if (worst_rel(C1, C2, (size_t)(M * N)) > 1e-4)
            printf("(the kernels disagree on the next row)\n");
        printf("| %lld x %lld x %lld | %.2fM | %.1f us | %.1f | %.1f us | %.1f |\n",
               (long long)M, (long long)N, (long long)K, macs * 1e-6, best1 * 1e6,
               macs / best1 * 1e-9, best2 * 1e6, macs / best2 * 1e-9);
        free(A), free(B), free(C1), free(C2), free(bp);
    }
}

/* ---- h/cpuperf's kernels against what they replace -------------------- */

/* Two ways of one computation, timed alternately: the best of reps. */
typedef struct bench_pair {
    void (*run)(const struct bench_pair *b, int which);
    const op_dw *dw;
    const float *x, *w, *b;
    float *y, *scratch;
    int64_t C, M, N, K, ldb;
    int32_t *boff;
} bench_pair;

static void bench_best(const bench_pair *b, int reps, double *best)
{
    best[0] = best[1] = 1e30;
    for (int r = 0; r < reps; r++)
        for (int which = 0; which < 2; which++) {
            double t0 = now();
            b->run(b, which);
            best[which] = fmin(best[which], now() - t0);
        }
}

/* Depthwise 3x3 at stride 2: 0 in place (s2k3), 1 the planes. */
static void run_dw3(const bench_pair *b, int which)
{
    const op_act act = {OP_ACT_RELU, 0, 0};
    op_dw p = *b->dw;
    const int64_t in = p.g.H * p.g.W, out = p.g.OH * p.g.OW;
    p.s2k3 = which == 0;
    op_dw_zero(&p, b->scratch);
    for (int64_t c = 0; c < b->C; c++)
        op_dw_run(&p, b->x + c * in, b->w + c * 9, b->b[c], &act, b->y + c * out,
                  b->scratch);
}

/* A product: 0 op_gemm_nn (B in panels where its stride asks for them), 1
 * B read in place (op_gemm_nn_rows over B's rows). */
static void run_panels(const bench_pair *b, int which)
{
    if (which == 0)
        op_gemm_nn(b->M, b->N, b->K, b->x, b->K, b->w, b->ldb, b->y, b->N, NULL);
    else
        op_gemm_nn_rows(b->M, b->N, b->K, b->x, b->K, b->w, b->boff, b->y, b->N, NULL);
}

/* A classifier at batch M: 0 op_gemv_f32's rows, 1 OpenBLAS (C = A B^T). */
static void run_rows(const bench_pair *b, int which)
{
    if (which == 0)
        op_gemv_f32(0, 1, b->M, b->N, b->K, b->x, b->K, b->w, b->K, b->y, b->N);
    else
        op_blas_sgemm(0, 1, b->M, b->N, b->K, b->x, b->K, b->w, b->K, b->y, b->N);
}

/* Operands of M x K and K x ldb (or N x K) floats, and C. */
static int bench_operands(bench_pair *b, int64_t nb)
{
    b->x = floats((size_t)(b->M * b->K), 9);
    b->w = floats((size_t)nb, 10);
    b->y = floats((size_t)(b->M * b->N), 0);
    return b->x && b->w && b->y;
}

static void bench_cpuperf(int reps)
{
    static const int64_t dw3[][2] = {{16, 112}, {72, 56}}; /* C, H */
    /* M, N, K, B's stride: BERT's blocks at batch 1 and 8, MobileNet's */
    static const int64_t pn[][4] = {{32, 64, 128, 512},  {32, 64, 512, 128},
                                    {256, 64, 128, 512}, {24, 128, 128, 128},
                                    {24, 128, 512, 128}, {72, 128, 16, 3136},
                                    {24, 49, 576, 49}};
    static const int64_t cls[][3] = {{8, 1024, 576}, {8, 1000, 1024}}; /* M, N, K */
    double best[2];
    printf("\n| depthwise 3x3 at stride 2 (C, H x W) | in place | planes |\n"
           "|---|---|---|\n");
    for (size_t s = 0; s < sizeof dw3 / sizeof dw3[0]; s++) {
        const int64_t C = dw3[s][0], H = dw3[s][1], OH = H / 2;
        const int64_t in[2] = {H, H}, k[2] = {3, 3}, out[2] = {OH, OH}, st[2] = {2, 2};
        const int64_t d[2] = {1, 1}, pb[2] = {1, 1};
        op_dw p;
        bench_pair b;
        if (!op_dw_plan(2, in, k, out, st, d, pb, &p))
            continue;
        memset(&b, 0, sizeof b);
        b.run = run_dw3;
        b.dw = &p;
        b.C = C;
        b.x = floats((size_t)(C * H * H), 6);
        b.w = floats((size_t)(C * 9), 7);
        b.b = floats((size_t)C, 8);
        b.y = floats((size_t)(C * OH * OH), 0);
        b.scratch = floats((size_t)p.slot, 0);
        bench_best(&b, reps, best);
        printf("| %lld, %lld x %lld | %.1f us | %.1f us |\n", (long long)C, (long long)H,
               (long long)H, best[0] * 1e6, best[1] * 1e6);
        free((void *)b.x), free((void *)b.w), free((void *)b.b);
        free(b.y), free(b.scratch);
    }
    printf("\n| product M x N x K (B's stride) | op_gemm_nn | B in place |\n"
           "|---|---|---|\n");
    for (size_t s = 0; s < sizeof pn / sizeof pn[0]; s++) {
        bench_pair b;
        memset(&b, 0, sizeof b);
        b.run = run_panels;
        b.M = pn[s][0], b.N = pn[s][1], b.K = pn[s][2], b.ldb = pn[s][3];
        b.boff = malloc(sizeof(int32_t) * (size_t)b.K);
        for (int64_t kk = 0; b.boff && kk < b.K; kk++)
            b.boff[kk] = (int32_t)(kk * b.ldb);
        if (b.boff && bench_operands(&b, b.K * b.ldb)) {
            bench_best(&b, reps, best);
            printf("| %lld x %lld x %lld (%lld) | %.1f us | %.1f us |\n", (long long)b.M,
                   (long long)b.N, (long long)b.K, (long long)b.ldb, best[0] * 1e6,
                   best[1] * 1e6);
        }
        free((void *)b.x), free((void *)b.w), free(b.y), free(b.boff);
    }
    if (!op_blas_in_use())
        return;
    printf(
        "\n| classifier M x N x K (C = A B^T) | dot products (op_gemv_f32) | OpenBLAS |\n"
        "|---|---|---|\n");
    for (size_t s = 0; s < sizeof cls / sizeof cls[0]; s++) {
        bench_pair b;
        memset(&b, 0, sizeof b);
        b.run = run_rows;
        b.M = cls[s][0], b.N = cls[s][1], b.K = cls[s][2];
        if (bench_operands(&b, b.N * b.K)) {
            bench_best(&b, reps, best);
            printf("| %lld x %lld x %lld | %.1f us | %.1f us |\n", (long long)b.M,
                   (long long)b.N, (long long)b.K, best[0] * 1e6, best[1] * 1e6);
        }
        free((void *)b.x), free((void *)b.w), free(b.y);
    }
}

/* ---- the blocked format CHW8 against the planes --------------------------- */

/* M, P (pixels), K of MobileNet-v3-small's pointwise layers, per image. */
static const int64_t pw_shapes[][3] = {
    {16, 3136, 16}, {72, 3136, 16}, {24, 784, 72},  {88, 784, 24},  {24, 784, 88},
    {96, 784, 24},  {40, 196, 96},  {240, 196, 40}, {40, 196, 240}, {48, 196, 144},
    {288, 196, 48}, {96, 49, 288},  {576, 49, 96},  {96, 49, 576},
};

/* GlobalAveragePool on CHW8 (pool.c): a block's eight channel means by
 * op_block_means (four running sums a lane) against one running sum a
 * lane, in double as both are, on MobileNet's squeeze-and-excite inputs. */
static void block_means_one_sum(const float *x, int64_t n, float *m)
{
    double s[8] = {0};
    for (int64_t r = 0; r < n; r++)
        for (int l = 0; l < 8; l++)
            s[l] += x[r * 8 + l];
    for (int l = 0; l < 8; l++)
        m[l] = (float)(s[l] / (double)n);
}

static void bench_block_means(int reps)
{
    static const int64_t shapes[][2] = {{16, 3136}, {96, 196}, {240, 196}, {576, 49}};
    printf("\n| GlobalAveragePool, CHW8 (C, pixels) | one running sum a lane | "
           "op_block_means |\n|---|---|---|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t C8 = shapes[s][0] / 8, n = shapes[s][1];
        float *x = floats((size_t)(C8 * 8 * n), 7), m1[8] = {0}, m2[8] = {0};
        double best1 = 1e30, best2 = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now(), t1;
            for (int64_t c = 0; c < C8; c++)
                block_means_one_sum(x + c * n * 8, n, m1);
            t1 = now();
            for (int64_t c = 0; c < C8; c++)
                op_block_means(x + c * n * 8, n, m2);
            best1 = fmin(best1, t1 - t0);
            best2 = fmin(best2, now() - t1);
        }
        if (worst_rel(m1, m2, 8) > 1e-6)
            printf("(the two disagree on the next row)\n");
        printf("| %lld, %lld | %.1f us | %.1f us |\n", (long long)shapes[s][0],
               (long long)n, best1 * 1e6, best2 * 1e6);
        free(x);
    }
}

static void bench_chw8(int reps)
{
    const op_act act = {OP_ACT_HARD_SWISH, 1.0f / 6, 0.5f};
    printf("\n| pointwise M x pixels x K | planes (op_gemm_nn) | CHW8 (op_pw8_run) |\n"
           "|---|---|---|\n");
    for (size_t s = 0; s < sizeof pw_shapes / sizeof pw_shapes[0]; s++) {
        const int64_t M = pw_shapes[s][0], P = pw_shapes[s][1], K = pw_shapes[s][2];
        const int64_t M8 = (M + 7) / 8, K8 = (K + 7) / 8;
        float *W = floats((size_t)(M * K), 4), *X = floats((size_t)(K * P), 5);
        float *B = floats((size_t)M, 6), *Y1 = floats((size_t)(M * P), 0);
        float *X8 = floats((size_t)(K8 * 8 * P), 0),
              *Y8 = floats((size_t)(M8 * 8 * P), 0);
        float *Wp = floats((size_t)(M8 * 8 * K), 0), *Y2 = floats((size_t)(M * P), 0);
        const op_epilogue e = {B, NULL, act};
        op_pw8 pw = {K, M, P, Wp, B, act, 0};
        double best1 = 1e30, best2 = 1e30;
        op_pw8_pack(W, M, K, Wp);
        for (int64_t cb = 0; cb < K8; cb++)
            op_chw8_pack_block(X, K, P, cb, X8 + cb * P * 8);
        for (int r = 0; r < reps; r++) {
            double t0 = now(), t1;
            op_gemm_nn(M, P, K, W, K, X, P, Y1, P, &e);
            t1 = now();
            op_pw8_run(&pw, X8, 0, M8, 0, P, Y8);
            best1 = fmin(best1, t1 - t0);
            best2 = fmin(best2, now() - t1);
        }
        for (int64_t cb = 0; cb < M8; cb++)
            op_chw8_unpack_block(Y8 + cb * P * 8, M, P, cb, Y2);
        if (worst_rel(Y1, Y2, (size_t)(M * P)) > 1e-4)
            printf("(the kernels disagree on the next row)\n");
        printf("| %lld x %lld x %lld | %.1f us | %.1f us |\n", (long long)M, (long long)P,
               (long long)K, best1 * 1e6, best2 * 1e6);
        free(W), free(X), free(B), free(Y1), free(X8), free(Y8), free(Wp), free(Y2);
    }
    printf("\n| depthwise (C, H x W, k x k, stride) | planes (op_dw / op_dw8) | CHW8 in "
           "place (op_dw8d_run) | CHW8 band buffers, block pairs (op_dw8b_run_pair) "
           "|\n|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof dw_shapes / sizeof dw_shapes[0]; s++) {
        const int64_t C = dw_shapes[s][0], H = dw_shapes[s][1], k = dw_shapes[s][2];
        const int64_t st = dw_shapes[s][3], pad = k / 2, OH = (H + 2 * pad - k) / st + 1;
        const int64_t in[2] = {H, H}, kk[2] = {k, k}, out[2] = {OH, OH}, ss[2] = {st, st};
        const int64_t dd[2] = {1, 1}, pb[2] = {pad, pad}, C8 = (C + 7) / 8;
        op_dw p;
        op_dw8 p8;
        int planes;
        float *x = floats((size_t)(C * H * H), 1), *w = floats((size_t)(C * k * k), 2);
        float *b = floats((size_t)C + 8, 3), *y1 = floats((size_t)(C * OH * OH), 0);
        float *x8 = floats((size_t)(C8 * 8 * H * H), 0),
              *y8 = floats((size_t)(C8 * 8 * OH * OH), 0);
        float *y2 = floats((size_t)(C * OH * OH), 0), *scratch;
        float *y9 = floats((size_t)(C8 * 8 * OH * OH), 0);
        double best1 = 1e30, best2 = 1e30, best3 = 1e30;
        if (!op_dw8_plan(2, in, kk, out, ss, dd, pb, &p8))
            continue;
        /* What conv.c takes on planes: op_dw at stride 1 or for narrow
         * kernels, op_dw8 for wide kernels at larger strides. */
        planes = (st == 1 || k < 5) && op_dw_plan(2, in, kk, out, ss, dd, pb, &p);
        scratch = floats((size_t)(planes && p.slot > op_dw8_slot(kk, out, ss, dd)
                                      ? p.slot
                                      : op_dw8_slot(kk, out, ss, dd)),
                         0);
        for (int64_t cb = 0; cb < C8; cb++)
            op_chw8_pack_block(x, C, H * H, cb, x8 + cb * H * H * 8);
        for (int r = 0; r < reps; r++) {
            double t0 = now(), t1, t2;
            if (planes) {
                op_dw_zero(&p, scratch);
                for (int64_t c = 0; c < C; c++)
                    op_dw_run(&p, x + c * H * H, w + c * k * k, b[c], &act,
                              y1 + c * OH * OH, scratch);
            } else {
                for (int64_t c = 0; c < C; c += 8)
                    op_dw8_run(&p8, x + c * H * H, w + c * k * k, b + c, &act,
                               C - c < 8 ? C - c : 8, y1 + c * OH * OH, scratch);
            }
            t1 = now();
            for (int64_t cb = 0; cb < C8; cb++)
                op_dw8d_run(&p8, x8 + cb * H * H * 8, w + cb * 8 * k * k, b + cb * 8,
                            &act, C - cb * 8 < 8 ? C - cb * 8 : 8, 0, OH,
                            y8 + cb * OH * OH * 8);
            t2 = now();
            /* Block pairs, as conv.c runs them (one 16-float pass each
             * where AVX-512 is), then a last single block. */
            for (int64_t cb = 0; cb < C8; cb += 2)
                if (cb + 1 < C8)
                    op_dw8b_run_pair(&p8, x8 + cb * H * H * 8, w + cb * 8 * k * k,
                                     b + cb * 8, &act, C - cb * 8 < 16 ? C - cb * 8 : 16,
                                     y9 + cb * OH * OH * 8, scratch);
                else
                    op_dw8b_run(&p8, x8 + cb * H * H * 8, w + cb * 8 * k * k, b + cb * 8,
                                &act, C - cb * 8 < 8 ? C - cb * 8 : 8,
                                y9 + cb * OH * OH * 8, scratch);
            best1 = fmin(best1, t1 - t0);
            best2 = fmin(best2, t2 - t1);
            best3 = fmin(best3, now() - t2);
        }
        if (memcmp(y8, y9, sizeof(float) * (size_t)(C8 * 8 * OH * OH)) != 0)
            printf("(the two CHW8 kernels disagree on the next row)\n");
        for (int64_t cb = 0; cb < C8; cb++)
            op_chw8_unpack_block(y8 + cb * OH * OH * 8, C, OH * OH, cb, y2);
        if (worst_rel(y1, y2, (size_t)(C * OH * OH)) > 1e-4)
            printf("(the kernels disagree on the next row)\n");
        printf("| %lld, %lld x %lld, %lld x %lld, %lld | %.1f us | %.1f us | %.1f us |\n",
               (long long)C, (long long)H, (long long)H, (long long)k, (long long)k,
               (long long)st, best1 * 1e6, best2 * 1e6, best3 * 1e6);
        free(x), free(w), free(b), free(y1), free(x8), free(y8), free(y9), free(y2);
        free(scratch);
    }
    {
        /* MobileNet's first layer: 3 planes of 224 x 224 into 16 channels
         * of CHW8, 3x3 at stride 2, one padding pixel a side. */
        const int64_t C = 3, H = 224, M = 16, k = 3, st = 2, OH = 112, K = C * k * k;
        const int64_t in[2] = {H, H}, kk[2] = {k, k}, out[2] = {OH, OH}, ss[2] = {st, st};
        const int64_t dd[2] = {1, 1}, pb[2] = {1, 1};
        float *x = floats((size_t)(C * H * H), 1), *w = floats((size_t)(M * K), 2);
        float *b = floats((size_t)M, 3), *wp = floats((size_t)(M * K), 0);
        float *y = floats((size_t)(M * OH * OH), 0);
        op_cv8 p;
        double best = 1e30;
        memset(&p, 0, sizeof p);
        if (op_win2_make(2, in, kk, out, ss, dd, pb, &p.g)) {
            op_pw8_pack(w, M, K, wp);
            p.C = C, p.M = M, p.w = wp, p.bias = b, p.act = act;
            for (int r = 0; r < reps; r++) {
                double t0 = now();
                op_cv8_run(&p, x, 0, OH, y);
                best = fmin(best, now() - t0);
            }
            printf("\n| first layer (C -> M, H x W, k x k, stride) | op_cv8_run |\n"
                   "|---|---|\n| 3 -> 16, 224 x 224, 3 x 3, 2 | %.1f us |\n",
                   best * 1e6);
        }
        free(x), free(w), free(b), free(wp), free(y);
    }
    bench_block_means(reps);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 300;
    if (reps < 1)
        reps = 1;
    op_blas_prepare();
    /* "avx2" last: the AVX2 build even where the CPU has AVX-512. */
    if (argc > 2 && strcmp(argv[argc - 1], "avx2") == 0)
        cpu_force_avx2(1);
    printf("CPU kernels, one thread, best of %d runs; %s build of the kernels\n\n", reps,
           cpu_avx512() ? "AVX-512 (where it has one) and AVX2 + FMA"
           : cpu_avx2() ? "AVX2 + FMA"
                        : "baseline");
    if (argc > 2 && strcmp(argv[2], "chw8") == 0) {
        bench_chw8(reps);
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "panels") == 0) {
        bench_products(reps, panel_shapes, sizeof panel_shapes / sizeof panel_shapes[0],
                       1);
        return 0;
    }
    bench_depthwise(reps);
    bench_products(reps, mm_shapes, sizeof mm_shapes / sizeof mm_shapes[0], 0);
    bench_products(reps, panel_shapes, sizeof panel_shapes / sizeof panel_shapes[0], 1);
    bench_cpuperf(reps);
    bench_chw8(reps);
    return 0;
}

/* The register-tiled product of cpu_kernels.h (op_gemm_nn), in a baseline
 * and an AVX2 + FMA build. */
#include "ops/cpu/cpu_kernels.h"

#include "base/base.h"

/* Rows and vectors of columns of a tile: 6 x 2 sums, with the two loads of
 * B and the broadcast of A, fill 15 of AVX2's 16 registers; per k a tile
 * does 12 FMAs for 8 loads, so the FMAs, not the loads, bound it. */
#define GK_MR 6
#define GK_NV 2
#define GK_NR (8 * GK_NV)

/* Row k of B at columns [j, j + 8): straight from B when the whole vector
 * lies inside the matrix, else (the last rows of a ragged right edge)
 * through a copy of the n columns that exist. Lanes past n hold whatever
 * follows in memory, or 0: they only feed columns that are not stored. */
static inline CPU_INLINE void gk_load_b(const float *b, int64_t n, int inside, cpu_v8 *v)
{
    if (inside) {
        CPU_LOAD(*v, b);
    } else {
        float t[8] = {0};
        for (int64_t q = 0; q < n && q < 8; q++)
            t[q] = b[q];
        CPU_LOAD(*v, t);
    }
}

static inline CPU_INLINE void gk_zero(int mr, int nv, cpu_v8 (*acc)[GK_NV])
{
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++)
            acc[r][v] = (cpu_v8){0};
}

/* One k of a tile: acc[r] += A's element (r, k) (at a + r lda) times
 * row k of B (bv). */
static inline CPU_INLINE void gk_fma(int mr, int nv, const float *a, int64_t lda,
                                     const cpu_v8 *bv, cpu_v8 (*acc)[GK_NV])
{
    for (int r = 0; r < mr; r++) {
        const cpu_v8 av = CPU_SPLAT(a[r * lda]);
        for (int v = 0; v < nv; v++)
            acc[r][v] += av * bv[v];
    }
}

/* A tile's sums to C at (i, j), n columns of them (n <= 8 nv), through
 * e's bias and activation. */
static inline CPU_INLINE void gk_store(int mr, int nv, cpu_v8 (*acc)[GK_NV], int64_t i,
                                       int64_t j, int64_t n, float *C, int64_t ldc,
                                       const op_epilogue *e)
{
    for (int r = 0; r < mr; r++) {
        float *c = C + (i + r) * ldc + j;
        for (int v = 0; v < nv; v++) {
            cpu_v8 x = acc[r][v];
            if (e && e->row_bias)
                x += e->row_bias[i + r];
            if (e && e->col_bias) {
                cpu_v8 cb;
                gk_load_b(e->col_bias + j + 8 * v, n - 8 * v, n >= 8 * v + 8, &cb);
                x += cb;
            }
            if (e)
                cpu_act_v8(&e->act, &x);
            if (n >= 8 * v + 8) {
                CPU_STORE(c + 8 * v, x);
            } else {
                float t[8];
                CPU_STORE(t, x);
                for (int64_t q = 0; q < n - 8 * v; q++)
                    c[8 * v + q] = t[q];
            }
        }
    }
}

/* One tile: mr rows (a constant) by nv vectors (a constant) of columns
 * from (i, j), n of them stored (n <= 8 nv). */
static inline CPU_INLINE void gk_tile(int mr, int nv, int64_t i, int64_t j, int64_t n,
                                      int64_t K, const float *A, int64_t lda,
                                      const float *B, int64_t ldb, int64_t bend, float *C,
                                      int64_t ldc, const op_epilogue *e)
{
    cpu_v8 acc[GK_MR][GK_NV];
    const float *a = A + i * lda;
    gk_zero(mr, nv, acc);
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb + j;
        cpu_v8 bv[GK_NV];
        for (int v = 0; v < nv; v++)
            gk_load_b(b + 8 * v, n - 8 * v, b + 8 * v + 8 <= B + bend, &bv[v]);
        gk_fma(mr, nv, a + k, lda, bv, acc);
    }
    gk_store(mr, nv, acc, i, j, n, C, ldc, e);
}

/* The same with row k of B at B + boff[k], every load inside. */
static inline CPU_INLINE void gkr_tile(int mr, int nv, int64_t i, int64_t j, int64_t n,
                                       int64_t K, const float *A, int64_t lda,
                                       const float *B, const int32_t *boff, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
    cpu_v8 acc[GK_MR][GK_NV];
    const float *a = A + i * lda;
    gk_zero(mr, nv, acc);
    B += j;
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + boff[k];
        cpu_v8 bv[GK_NV];
        for (int v = 0; v < nv; v++)
            CPU_LOAD(bv[v], b + 8 * v);
        gk_fma(mr, nv, a + k, lda, bv, acc);
    }
    gk_store(mr, nv, acc, i, j, n, C, ldc, e);
}

/* TILE(mr, i) over rows [0, M): tiles of GK_MR rows, then 4, 2 and 1 (each
 * count a constant, so each tile's sums stay in registers). */
#define GK_ROWS(M, TILE)                                                                 \
    do {                                                                                 \
        int64_t i_ = 0;                                                                  \
        for (; i_ + GK_MR <= (M); i_ += GK_MR)                                           \
            TILE(GK_MR, i_);                                                             \
        if (((M)-i_) & 4) {                                                              \
            TILE(4, i_);                                                                 \
            i_ += 4;                                                                     \
        }                                                                                \
        if (((M)-i_) & 2) {                                                              \
            TILE(2, i_);                                                                 \
            i_ += 2;                                                                     \
        }                                                                                \
        if ((M)-i_)                                                                      \
            TILE(1, i_);                                                                 \
    } while (0)

/* Rows [0, M) of column block j (n columns, nv vectors). */
static inline CPU_INLINE void gk_cols(int nv, int64_t j, int64_t n, int64_t M, int64_t K,
                                      const float *A, int64_t lda, const float *B,
                                      int64_t ldb, const int32_t *boff, int64_t bend,
                                      float *C, int64_t ldc, const op_epilogue *e)
{
#define GK_TILE(mr, i)                                                                   \
    (boff ? gkr_tile(mr, nv, i, j, n, K, A, lda, B, boff, C, ldc, e)                     \
          : gk_tile(mr, nv, i, j, n, K, A, lda, B, ldb, bend, C, ldc, e))
    GK_ROWS(M, GK_TILE);
#undef GK_TILE
}

/* ---- B packed into panels ------------------------------------------------
 *
 * Where B's rows lie a multiple of 256 bytes apart (BERT's weights, 128 or
 * 512 columns), a strip of them read in place falls into a few of L1's
 * sets (64 sets of 64-byte lines: a 512-byte stride uses 8 of them, 2 KiB
 * 2), so the strip evicts itself while the tiles of rows sweep it. For a
 * tall product each 16-column strip of B is there first copied, GK_KC rows
 * at a time, into a contiguous panel on the stack (16 KiB, zero past the
 * last column), and the tiles read that: 256 x 64 x 128 with B 512 wide
 * 1.26x. On MobileNet's strides (49, 196, 784 floats) in place is as fast,
 * and at a few dozen rows the copy is not repaid (bench/RESULTS.md, "CPU
 * kernels", h/cpuperf). Sums over more than GK_KC rows are stored to C
 * between panels and loaded back, which is exact, so every element is the
 * same in-order sum as without packing, bit for bit: a caller's split into
 * blocks never shows. */
#define GK_KC 256
/* Packing needs rows of C enough to share the copy (BERT's 24- and 32-row
 * blocks measured 0.85-1.04x), K long enough for the strip to outgrow its
 * sets, and B's stride a multiple of GK_PACK_STRIDE floats (256 bytes). */
#define GK_PACK_MIN_M 128
#define GK_PACK_MIN_K 64
#define GK_PACK_STRIDE 64

/* Rows [k0, k0 + kc) of B's columns [j, j + n) (n <= 16) into bp, 16 floats
 * a row, zero past n. */
static inline CPU_INLINE void gk_pack(const float *B, int64_t ldb, int64_t k0, int64_t kc,
                                      int64_t j, int64_t n, float *bp)
{
    const float *b = B + k0 * ldb + j;
    if (n == GK_NR) {
        for (int64_t k = 0; k < kc; k++) {
            cpu_v8 v0, v1;
            CPU_LOAD(v0, b + k * ldb);
            CPU_LOAD(v1, b + k * ldb + 8);
            CPU_STORE(bp + k * GK_NR, v0);
            CPU_STORE(bp + k * GK_NR + 8, v1);
        }
        return;
    }
    for (int64_t k = 0; k < kc; k++) {
        int64_t q = 0;
        for (; q < n; q++)
            bp[k * GK_NR + q] = b[k * ldb + q];
        for (; q < GK_NR; q++)
            bp[k * GK_NR + q] = 0.0f;
    }
}

/* acc[r] += the kc terms of a's row r (at a + r lda) times the panel's
 * rows. */
static inline CPU_INLINE void gkp_sums(int mr, int nv, int64_t kc, const float *a,
                                       int64_t lda, const float *bp, cpu_v8 (*acc)[GK_NV])
{
    for (int64_t k = 0; k < kc; k++) {
        const float *b = bp + k * GK_NR;
        cpu_v8 bv[GK_NV];
        for (int v = 0; v < nv; v++)
            CPU_LOAD(bv[v], b + 8 * v);
        gk_fma(mr, nv, a + k, lda, bv, acc);
    }
}

/* One tile over a panel: rows [k0, k0 + kc) of the sums of C's tile at
 * (i, j), n columns stored; the sums start from C's stored partial ones
 * unless k0 is 0, and take e's epilogue only on the last panel. */
static inline CPU_INLINE void gkp_tile(int mr, int nv, int64_t i, int64_t j, int64_t n,
                                       int64_t k0, int64_t kc, int last, const float *A,
                                       int64_t lda, const float *bp, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
    cpu_v8 acc[GK_MR][GK_NV];
    const float *a = A + i * lda + k0;
    if (k0 == 0) {
        gk_zero(mr, nv, acc);
    } else {
        for (int r = 0; r < mr; r++)
            for (int v = 0; v < nv; v++)
                gk_load_b(C + (i + r) * ldc + j + 8 * v, n - 8 * v, n >= 8 * v + 8,
                          &acc[r][v]);
    }
    gkp_sums(mr, nv, kc, a, lda, bp, acc);
    gk_store(mr, nv, acc, i, j, n, C, ldc, last ? e : NULL);
}

/* Every row of strip j (n columns, nv vectors) over one panel. */
static inline CPU_INLINE void gkp_cols(int nv, int64_t j, int64_t n, int64_t k0,
                                       int64_t kc, int last, int64_t M, const float *A,
                                       int64_t lda, const float *bp, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
#define GKP_TILE(mr, i) gkp_tile(mr, nv, i, j, n, k0, kc, last, A, lda, bp, C, ldc, e)
    GK_ROWS(M, GKP_TILE);
#undef GKP_TILE
}

static inline CPU_INLINE void gkp_body(int64_t M, int64_t N, int64_t K, const float *A,
                                       int64_t lda, const float *B, int64_t ldb, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
    float bp[GK_KC * GK_NR] __attribute__((aligned(64)));
    for (int64_t j = 0; j < N; j += GK_NR) {
        const int64_t n = N - j < GK_NR ? N - j : GK_NR;
        for (int64_t k0 = 0; k0 < K; k0 += GK_KC) {
            const int64_t kc = K - k0 < GK_KC ? K - k0 : GK_KC;
            const int last = k0 + kc == K;
            gk_pack(B, ldb, k0, kc, j, n, bp);
            if (n > 8)
                gkp_cols(GK_NV, j, n, k0, kc, last, M, A, lda, bp, C, ldc, e);
            else
                gkp_cols(1, j, n, k0, kc, last, M, A, lda, bp, C, ldc, e);
        }
    }
}

CPU_BUILDS(gkp, gkp_body,
           (int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
            int64_t ldb, float *C, int64_t ldc, const op_epilogue *e),
           (M, N, K, A, lda, B, ldb, C, ldc, e))

static inline CPU_INLINE void gk_body(int64_t M, int64_t N, int64_t K, const float *A,
                                      int64_t lda, const float *B, int64_t ldb,
                                      const int32_t *boff, float *C, int64_t ldc,
                                      const op_epilogue *e)
{
    /* One past B's last element: loads must stay below it. */
    const int64_t bend = (K - 1) * ldb + N;
    int64_t j = 0;
    for (; j + GK_NR <= N; j += GK_NR)
        gk_cols(GK_NV, j, GK_NR, M, K, A, lda, B, ldb, boff, bend, C, ldc, e);
    for (; j < N; j += 8)
        gk_cols(1, j, N - j < 8 ? N - j : 8, M, K, A, lda, B, ldb, boff, bend, C, ldc, e);
}

CPU_BUILDS(gk, gk_body,
           (int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
            int64_t ldb, const int32_t *boff, float *C, int64_t ldc,
            const op_epilogue *e),
           (M, N, K, A, lda, B, ldb, boff, C, ldc, e))

void op_gemm_nn(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                const float *B, int64_t ldb, float *C, int64_t ldc, const op_epilogue *e)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        /* The epilogue of zero sums. */
        for (int64_t i = 0; i < M; i++) {
            memset(C + i * ldc, 0, sizeof(float) * (size_t)N);
            if (e)
                for (int64_t j = 0; j < N; j++) {
                    C[i * ldc + j] = (e->row_bias ? e->row_bias[i] : 0.0f) +
                                     (e->col_bias ? e->col_bias[j] : 0.0f);
                    op_act_bias(&e->act, 0.0f, C + i * ldc + j, 1);
                }
        }
        return;
    }
    if (M >= GK_PACK_MIN_M && K >= GK_PACK_MIN_K && ldb % GK_PACK_STRIDE == 0)
        CPU_PICK(gkp)(M, N, K, A, lda, B, ldb, C, ldc, e);
    else
        CPU_PICK(gk)(M, N, K, A, lda, B, ldb, NULL, C, ldc, e);
}

void op_gemm_nn_rows(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                     const float *B, const int32_t *boff, float *C, int64_t ldc,
                     const op_epilogue *e)
{
    if (M <= 0 || N <= 0 || K <= 0)
        return;
    CPU_PICK(gk)(M, N, K, A, lda, B, 0, boff, C, ldc, e);
}

int64_t op_gemm_panel_floats(int64_t K, int64_t N)
{
    int64_t n;
    if (K <= 0 || N <= 0)
        return 0;
    return base_mul_i64(K, (N + GK_NR - 1) / GK_NR * GK_NR, &n) ? n : -1;
}

void op_gemm_pack_panels(int64_t K, int64_t N, const float *B, int64_t ldb, int64_t s0,
                         int64_t s1, float *bp)
{
    for (int64_t s = s0; s < s1; s++) {
        const int64_t j = s * GK_NR, n = N - j < GK_NR ? N - j : GK_NR;
        gk_pack(B, ldb, 0, K, j, n, bp + s * K * GK_NR);
    }
}

/* op_gemm_nn over panels packed whole (op_gemm_pack_panels): every strip
 * one panel of K rows, no copies. */
static inline CPU_INLINE void gkq_body(int64_t M, int64_t N, int64_t K, const float *A,
                                       int64_t lda, const float *bp, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
    for (int64_t j = 0; j < N; j += GK_NR) {
        const int64_t n = N - j < GK_NR ? N - j : GK_NR;
        const float *p = bp + j * K;
        if (n > 8)
            gkp_cols(GK_NV, j, n, 0, K, 1, M, A, lda, p, C, ldc, e);
        else
            gkp_cols(1, j, n, 0, K, 1, M, A, lda, p, C, ldc, e);
    }
}

CPU_BUILDS(gkq, gkq_body,
           (int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *bp,
            float *C, int64_t ldc, const op_epilogue *e),
           (M, N, K, A, lda, bp, C, ldc, e))

/* ---- an AVX-512 build of the panels' tiles -----------------------------------
 *
 * Where the CPU has AVX-512 (the H200 host's Xeon: twice the multiply-adds
 * of AVX2 a cycle, bench/fma_peak.c), a full strip's rows run in tiles of
 * 12 rows by one 16-float vector, one vector a panel row, with 32 registers
 * to hold them. Each lane does the same multiply-adds in the same order as
 * gkp_tile's, and the tile is stored through gk_store in halves, so every
 * element has the AVX2 build's bits. Two full strips side by side take
 * tiles of 12 rows by two vectors (24 sums, two loads of B and 12
 * broadcasts of A a k: the multiply-adds, not the loads, bound it), a
 * strip alone the 12 by one. Ragged strips and a lone strip's last rows
 * (under 12) keep the 8-float tiles. */
#if CPU_HAVE_AVX2_BUILD
#define G16_MR 12

_Static_assert(GK_NV == 2, "a 16-float vector is one row of a strip");

/* gkp_tile for mr rows (a constant) of a full strip over its whole panel
 * (K rows): the sums of C's tile at (i, j), through e. */
static inline CPU_INLINE void g16_tile(int mr, int64_t i, int64_t j, int64_t K,
                                       const float *A, int64_t lda, const float *bp,
                                       float *C, int64_t ldc, const op_epilogue *e)
{
    cpu_v16 acc[G16_MR];
    const float *a = A + i * lda;
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++)
        acc[r] = (cpu_v16){0};
    for (int64_t k = 0; k < K; k++) {
        cpu_v16 b;
        memcpy(&b, bp + k * GK_NR, sizeof b);
#pragma GCC unroll 16
        for (int r = 0; r < mr; r++) {
            const float x = a[r * lda + k];
            acc[r] += (cpu_v16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x} * b;
        }
    }
#pragma GCC unroll 16
    for (int r0 = 0; r0 < mr; r0 += GK_MR) {
        cpu_v8 h[GK_MR][GK_NV];
#pragma GCC unroll 16
        for (int r = 0; r < GK_MR; r++) {
            h[r][0] = CPU_V16_LO(acc[r0 + r]);
            h[r][1] = CPU_V16_HI(acc[r0 + r]);
        }
        gk_store(GK_MR, GK_NV, h, i + r0, j, GK_NR, C, ldc, e);
    }
}

/* g16_tile over two full strips at once: strip j's panel at bp, strip
 * j + 16's at bq, mr rows (a constant). */
static inline CPU_INLINE void g32_tile(int mr, int64_t i, int64_t j, int64_t K,
                                       const float *A, int64_t lda, const float *bp,
                                       const float *bq, float *C, int64_t ldc,
                                       const op_epilogue *e)
{
    cpu_v16 acc[2][G16_MR];
    const float *a = A + i * lda;
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++)
        acc[0][r] = acc[1][r] = (cpu_v16){0};
    for (int64_t k = 0; k < K; k++) {
        cpu_v16 b0, b1;
        memcpy(&b0, bp + k * GK_NR, sizeof b0);
        memcpy(&b1, bq + k * GK_NR, sizeof b1);
#pragma GCC unroll 16
        for (int r = 0; r < mr; r++) {
            const float x = a[r * lda + k];
            const cpu_v16 xv = {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
            acc[0][r] += xv * b0;
            acc[1][r] += xv * b1;
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++) {
        cpu_v8 h[2][GK_NV]; /* the row's halves in each strip */
#pragma GCC unroll 2
        for (int s = 0; s < 2; s++) {
            h[s][0] = CPU_V16_LO(acc[s][r]);
            h[s][1] = CPU_V16_HI(acc[s][r]);
            gk_store(1, GK_NV, &h[s], i + r, j + s * GK_NR, GK_NR, C, ldc, e);
        }
    }
}

/* Two full strips from j over their whole panels: tiles of 12 rows, then
 * 8, 4, 2 and 1. */
static inline CPU_INLINE void g32_cols(int64_t j, int64_t K, int64_t M, const float *A,
                                       int64_t lda, const float *bp, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
    const float *bq = bp + GK_NR * K;
    int64_t i = 0;
    for (; i + G16_MR <= M; i += G16_MR)
        g32_tile(G16_MR, i, j, K, A, lda, bp, bq, C, ldc, e);
    if ((M - i) & 8) {
        g32_tile(8, i, j, K, A, lda, bp, bq, C, ldc, e);
        i += 8;
    }
    if ((M - i) & 4) {
        g32_tile(4, i, j, K, A, lda, bp, bq, C, ldc, e);
        i += 4;
    }
    if ((M - i) & 2) {
        g32_tile(2, i, j, K, A, lda, bp, bq, C, ldc, e);
        i += 2;
    }
    if (M - i)
        g32_tile(1, i, j, K, A, lda, bp, bq, C, ldc, e);
}

/* gkp_cols for a full strip over its whole panel: tiles of 12 rows, the
 * rest gkp_tile's. */
static inline CPU_INLINE void g16_cols(int64_t j, int64_t K, int64_t M, const float *A,
                                       int64_t lda, const float *bp, float *C,
                                       int64_t ldc, const op_epilogue *e)
{
    int64_t i = 0;
    for (; i + G16_MR <= M; i += G16_MR)
        g16_tile(G16_MR, i, j, K, A, lda, bp, C, ldc, e);
    for (; i + GK_MR <= M; i += GK_MR)
        gkp_tile(GK_MR, GK_NV, i, j, GK_NR, 0, K, 1, A, lda, bp, C, ldc, e);
    if ((M - i) & 4) {
        gkp_tile(4, GK_NV, i, j, GK_NR, 0, K, 1, A, lda, bp, C, ldc, e);
        i += 4;
    }
    if ((M - i) & 2) {
        gkp_tile(2, GK_NV, i, j, GK_NR, 0, K, 1, A, lda, bp, C, ldc, e);
        i += 2;
    }
    if (M - i)
        gkp_tile(1, GK_NV, i, j, GK_NR, 0, K, 1, A, lda, bp, C, ldc, e);
}

CPU_TARGET_AVX512 static void gkq_avx512(int64_t M, int64_t N, int64_t K, const float *A,
                                         int64_t lda, const float *bp, float *C,
                                         int64_t ldc, const op_epilogue *e)
{
    int64_t j = 0;
    for (; j + 2 * GK_NR <= N; j += 2 * GK_NR)
        g32_cols(j, K, M, A, lda, bp + j * K, C, ldc, e);
    for (; j < N; j += GK_NR) {
        const int64_t n = N - j < GK_NR ? N - j : GK_NR;
        const float *p = bp + j * K;
        if (n == GK_NR)
            g16_cols(j, K, M, A, lda, p, C, ldc, e);
        else if (n > 8)
            gkp_cols(GK_NV, j, n, 0, K, 1, M, A, lda, p, C, ldc, e);
        else
            gkp_cols(1, j, n, 0, K, 1, M, A, lda, p, C, ldc, e);
    }
}
#endif

void op_gemm_nn_panels(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *bp, float *C, int64_t ldc, const op_epilogue *e)
{
    if (M <= 0 || N <= 0 || K <= 0)
        return;
#if CPU_HAVE_AVX2_BUILD
    if (cpu_avx512()) {
        gkq_avx512(M, N, K, A, lda, bp, C, ldc, e);
        return;
    }
#endif
    CPU_PICK(gkq)(M, N, K, A, lda, bp, C, ldc, e);
}

/* ---- the columns of several images side by side ----------------------------
 *
 * A pointwise convolution over a batch of small images (MobileNet's 7 x 7
 * layers: 49 columns an image, three strips of 16 and a tile of one column
 * that costs half a full one) as one product whose columns are the images'
 * pixels in turn. Each strip of 16 columns is packed into a panel as in
 * gkp_body; a strip inside one image is read and written as op_gemm_nn's
 * are, one that straddles images is gathered column by column into the
 * panel and its tiles scattered back through a buffer. The tiles, the order
 * of every sum and the epilogue are gkp_tile's, so each element has the bits
 * op_gemm_nn gives that image alone. */

/* Where the n columns from column c of the side-by-side product lie: bo in
 * B, co in C; 1 when all in one image (then contiguous). */
static int gki_offsets(int64_t hw, int64_t c, int64_t n, int64_t ldbn, int64_t ldcn,
                       int64_t *bo, int64_t *co)
{
    for (int64_t q = 0; q < n; q++) {
        const int64_t img = (c + q) / hw, p = (c + q) % hw;
        bo[q] = img * ldbn + p;
        co[q] = img * ldcn + p;
    }
    return (c + n - 1) / hw == c / hw;
}

/* A tile of a straddling strip: gkp_tile's sums, C's columns at co. */
static inline CPU_INLINE void gkx_tile(int mr, int nv, int64_t i, int64_t n, int64_t k0,
                                       int64_t kc, int last, const float *A, int64_t lda,
                                       const float *bp, float *C, int64_t ldc,
                                       const int64_t *co, const op_epilogue *e)
{
    float t[GK_MR * GK_NR] __attribute__((aligned(32))) = {0};
    cpu_v8 acc[GK_MR][GK_NV];
    op_epilogue er;
    for (int r = 0; k0 > 0 && r < mr; r++)
        for (int64_t q = 0; q < n; q++)
            t[r * GK_NR + q] = C[(i + r) * ldc + co[q]];
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++)
            CPU_LOAD(acc[r][v], t + r * GK_NR + 8 * v);
    gkp_sums(mr, nv, kc, A + i * lda + k0, lda, bp, acc);
    if (last && e) {
        er = *e;
        er.row_bias = e->row_bias ? e->row_bias + i : NULL;
    }
    gk_store(mr, nv, acc, 0, 0, 8 * nv, t, GK_NR, last && e ? &er : NULL);
    for (int r = 0; r < mr; r++)
        for (int64_t q = 0; q < n; q++)
            C[(i + r) * ldc + co[q]] = t[r * GK_NR + q];
}

static inline CPU_INLINE void gkx_cols(int nv, int64_t n, int64_t k0, int64_t kc,
                                       int last, int64_t M, const float *A, int64_t lda,
                                       const float *bp, float *C, int64_t ldc,
                                       const int64_t *co, const op_epilogue *e)
{
#define GKX_TILE(mr, i) gkx_tile(mr, nv, i, n, k0, kc, last, A, lda, bp, C, ldc, co, e)
    GK_ROWS(M, GKX_TILE);
#undef GKX_TILE
}

static inline CPU_INLINE void gki_body(int64_t M, int64_t K, int64_t hw, int64_t c0,
                                       int64_t N, const float *A, int64_t lda,
                                       const float *B, int64_t ldb, int64_t ldbn,
                                       float *C, int64_t ldc, int64_t ldcn,
                                       const op_epilogue *e)
{
    float bp[GK_KC * GK_NR] __attribute__((aligned(64)));
    int64_t bo[GK_NR], co[GK_NR];
    for (int64_t j = 0; j < N; j += GK_NR) {
        const int64_t n = N - j < GK_NR ? N - j : GK_NR;
        const int one = gki_offsets(hw, c0 + j, n, ldbn, ldcn, bo, co);
        const int nv = n > 8 ? GK_NV : 1;
        for (int64_t k0 = 0; k0 < K; k0 += GK_KC) {
            const int64_t kc = K - k0 < GK_KC ? K - k0 : GK_KC;
            const int last = k0 + kc == K;
            if (one) {
                gk_pack(B + bo[0], ldb, k0, kc, 0, n, bp);
                if (nv == GK_NV)
                    gkp_cols(GK_NV, 0, n, k0, kc, last, M, A, lda, bp, C + co[0], ldc, e);
                else
                    gkp_cols(1, 0, n, k0, kc, last, M, A, lda, bp, C + co[0], ldc, e);
                continue;
            }
            for (int64_t k = 0; k < kc; k++) {
                int64_t q = 0;
                for (; q < n; q++)
                    bp[k * GK_NR + q] = B[(k0 + k) * ldb + bo[q]];
                for (; q < GK_NR; q++)
                    bp[k * GK_NR + q] = 0.0f;
            }
            if (nv == GK_NV)
                gkx_cols(GK_NV, n, k0, kc, last, M, A, lda, bp, C, ldc, co, e);
            else
                gkx_cols(1, n, k0, kc, last, M, A, lda, bp, C, ldc, co, e);
        }
    }
}

CPU_BUILDS(gki, gki_body,
           (int64_t M, int64_t K, int64_t hw, int64_t c0, int64_t N, const float *A,
            int64_t lda, const float *B, int64_t ldb, int64_t ldbn, float *C, int64_t ldc,
            int64_t ldcn, const op_epilogue *e),
           (M, K, hw, c0, N, A, lda, B, ldb, ldbn, C, ldc, ldcn, e))

void op_gemm_nn_images(int64_t M, int64_t K, int64_t hw, int64_t c0, int64_t N,
                       const float *A, int64_t lda, const float *B, int64_t ldb,
                       int64_t ldbn, float *C, int64_t ldc, int64_t ldcn,
                       const op_epilogue *e)
{
    if (M <= 0 || N <= 0 || K <= 0 || hw <= 0)
        return;
    CPU_PICK(gki)(M, K, hw, c0, N, A, lda, B, ldb, ldbn, C, ldc, ldcn, e);
}

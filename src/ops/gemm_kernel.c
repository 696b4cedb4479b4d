/* The register-tiled product of cpu_kernels.h (op_gemm_nn), in a baseline
 * and an AVX2 + FMA build. */
#include "ops/cpu_kernels.h"

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
        for (int r = 0; r < mr; r++) {
            const cpu_v8 av = CPU_SPLAT(a[r * lda + k]);
            for (int v = 0; v < nv; v++)
                acc[r][v] += av * bv[v];
        }
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
        for (int r = 0; r < mr; r++) {
            const cpu_v8 av = CPU_SPLAT(a[r * lda + k]);
            for (int v = 0; v < nv; v++)
                acc[r][v] += av * bv[v];
        }
    }
    gk_store(mr, nv, acc, i, j, n, C, ldc, e);
}

/* Rows [0, M) of column block j (n columns, nv vectors): tiles of GK_MR
 * rows, then 4, 2 and 1. */
static inline CPU_INLINE void gk_cols(int nv, int64_t j, int64_t n, int64_t M, int64_t K,
                                      const float *A, int64_t lda, const float *B,
                                      int64_t ldb, const int32_t *boff, int64_t bend,
                                      float *C, int64_t ldc, const op_epilogue *e)
{
#define GK_TILE(mr)                                                                      \
    (boff ? gkr_tile(mr, nv, i, j, n, K, A, lda, B, boff, C, ldc, e)                     \
          : gk_tile(mr, nv, i, j, n, K, A, lda, B, ldb, bend, C, ldc, e))
    int64_t i = 0;
    for (; i + GK_MR <= M; i += GK_MR)
        GK_TILE(GK_MR);
    if ((M - i) & 4) {
        GK_TILE(4);
        i += 4;
    }
    if ((M - i) & 2) {
        GK_TILE(2);
        i += 2;
    }
    if (M - i)
        GK_TILE(1);
#undef GK_TILE
}

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

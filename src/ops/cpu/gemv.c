/* Matrix-vector products (cpu_kernels.h): dot products of contiguous rows,
 * or sums of scaled contiguous rows, in a baseline and an AVX2 + FMA build.
 * Both read the matrix once, in order; each output's sum runs over k in a
 * fixed order (two interleaved vector sums for a dot product, four rows
 * sharing each load of the vector), so results do not depend on how a
 * caller splits the outputs. */
#include "ops/cpu/cpu_kernels.h"

/* Rows at a time of the dot products: four share each load of x. */
#define GV_ROWS 4

/* y[j * ldy] = dot(x, m + j ldm) for j < nr (nr <= GV_ROWS, a constant
 * after inlining), each over k floats. A row's sum runs the same way
 * whatever nr is: two running sums of eight lanes over k in steps of 16,
 * then the lanes in a fixed tree, then the tail in order. */
static inline CPU_INLINE void gv_dot_rows(int nr, const float *x, const float *m,
                                          int64_t ldm, int64_t k, float *y, int64_t ldy)
{
    cpu_v8 acc[GV_ROWS][2];
    int64_t i = 0;
    for (int r = 0; r < nr; r++)
        acc[r][0] = acc[r][1] = (cpu_v8){0};
    for (; i + 16 <= k; i += 16) {
        cpu_v8 a0, a1;
        CPU_LOAD(a0, x + i);
        CPU_LOAD(a1, x + i + 8);
        for (int r = 0; r < nr; r++) {
            cpu_v8 b0, b1;
            CPU_LOAD(b0, m + r * ldm + i);
            CPU_LOAD(b1, m + r * ldm + i + 8);
            acc[r][0] += a0 * b0;
            acc[r][1] += a1 * b1;
        }
    }
    for (int r = 0; r < nr; r++) {
        const float *row = m + r * ldm;
        float t[8], s;
        cpu_v8 v = acc[r][0] + acc[r][1];
        CPU_STORE(t, v);
        s = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
        for (int64_t q = i; q < k; q++)
            s += x[q] * row[q];
        y[r * ldy] = s;
    }
}

/* y[j] = dot(x, m + j ldm) for j < n, each over k floats. */
static inline CPU_INLINE void gv_dots(const float *x, const float *m, int64_t ldm,
                                      int64_t n, int64_t k, float *y, int64_t ldy)
{
    int64_t j = 0;
    for (; j + GV_ROWS <= n; j += GV_ROWS)
        gv_dot_rows(GV_ROWS, x, m + j * ldm, ldm, k, y + j * ldy, ldy);
    for (; j < n; j++)
        gv_dot_rows(1, x, m + j * ldm, ldm, k, y + j * ldy, ldy);
}

/* y[0..n) = sum over i < k of x[i] * (m + i ldm)[0..n): columns in blocks
 * of 64 held in registers while i runs. */
static inline CPU_INLINE void gv_axpys(const float *x, const float *m, int64_t ldm,
                                       int64_t n, int64_t k, float *y)
{
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) {
        cpu_v8 acc[8];
        for (int v = 0; v < 8; v++)
            acc[v] = (cpu_v8){0};
        for (int64_t i = 0; i < k; i++) {
            const cpu_v8 xi = CPU_SPLAT(x[i]);
            const float *r = m + i * ldm + j;
            for (int v = 0; v < 8; v++) {
                cpu_v8 b;
                CPU_LOAD(b, r + 8 * v);
                acc[v] += xi * b;
            }
        }
        for (int v = 0; v < 8; v++)
            CPU_STORE(y + j + 8 * v, acc[v]);
    }
    for (; j + 8 <= n; j += 8) {
        cpu_v8 acc = {0};
        for (int64_t i = 0; i < k; i++) {
            cpu_v8 b;
            CPU_LOAD(b, m + i * ldm + j);
            acc += CPU_SPLAT(x[i]) * b;
        }
        CPU_STORE(y + j, acc);
    }
    for (; j < n; j++) {
        float s = 0.0f;
        for (int64_t i = 0; i < k; i++)
            s += x[i] * m[i * ldm + j];
        y[j] = s;
    }
}

/* The vector x and the matrix: dots (rows of length k) or axpys. */
static inline CPU_INLINE void gv_body(int dots, const float *x, const float *m,
                                      int64_t ldm, int64_t n, int64_t k, float *y,
                                      int64_t ldy)
{
    if (dots)
        gv_dots(x, m, ldm, n, k, y, ldy);
    else
        gv_axpys(x, m, ldm, n, k, y);
}

CPU_BUILDS(gv, gv_body,
           (int dots, const float *x, const float *m, int64_t ldm, int64_t n, int64_t k,
            float *y, int64_t ldy),
           (dots, x, m, ldm, n, k, y, ldy))

static void gv_run(int dots, const float *x, const float *m, int64_t ldm, int64_t n,
                   int64_t k, float *y, int64_t ldy)
{
    CPU_PICK(gv)(dots, x, m, ldm, n, k, y, ldy);
}

/* A few rows of A against B's rows (C = A B^T, OP_GEMV_ROWS):
 * GV_ROWS rows of B at a time, each block against every row of A while it
 * is in L1, so B (a classifier's weights) is read from memory once; each
 * element is the dot product gv_dot_rows computes for a single row, bit for
 * bit. */
static inline CPU_INLINE void gv_rows_body(int64_t M, const float *A, int64_t lda,
                                           const float *B, int64_t ldb, int64_t N,
                                           int64_t K, float *C, int64_t ldc)
{
    int64_t j = 0;
    for (; j + GV_ROWS <= N; j += GV_ROWS)
        for (int64_t i = 0; i < M; i++)
            gv_dot_rows(GV_ROWS, A + i * lda, B + j * ldb, ldb, K, C + i * ldc + j, 1);
    for (; j < N; j++)
        for (int64_t i = 0; i < M; i++)
            gv_dot_rows(1, A + i * lda, B + j * ldb, ldb, K, C + i * ldc + j, 1);
}

CPU_BUILDS(gv_rows, gv_rows_body,
           (int64_t M, const float *A, int64_t lda, const float *B, int64_t ldb,
            int64_t N, int64_t K, float *C, int64_t ldc),
           (M, A, lda, B, ldb, N, K, C, ldc))

int op_gemv_f32(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                int64_t ldc)
{
    if (M == 1 && (!trans_a || lda == 1)) {
        /* C's row = a op(B): op(B)'s column j is B's row j when B is
         * transposed (a dot), else the rows of B are scaled and summed. */
        gv_run(trans_b, A, B, ldb, N, K, C, 1);
        return 1;
    }
    if (N == 1 && (trans_b || ldb == 1)) {
        /* C's column = op(A) b: op(A)'s row i is A's row i unless A is
         * transposed. */
        if (!trans_a)
            gv_run(1, B, A, lda, M, K, C, ldc);
        else if (ldc == 1)
            gv_run(0, B, A, lda, M, K, C, 1);
        else
            return 0;
        return 1;
    }
    if (OP_GEMV_ROWS(trans_a, trans_b, M)) {
        CPU_PICK(gv_rows)(M, A, lda, B, ldb, N, K, C, ldc);
        return 1;
    }
    return 0;
}

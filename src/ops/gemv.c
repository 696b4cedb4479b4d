/* Matrix-vector products (cpu_kernels.h): dot products of contiguous rows,
 * or sums of scaled contiguous rows, in a baseline and an AVX2 + FMA build.
 * Both read the matrix once, in order; each output's sum runs over k in a
 * fixed order (four interleaved partial sums for a dot product), so results
 * do not depend on how a caller splits the outputs. */
#include "ops/cpu_kernels.h"

/* y[j] = dot(x, m + j ldm) for j < n, each over k floats. */
static inline CPU_INLINE void gv_dots(const float *x, const float *m, int64_t ldm,
                                      int64_t n, int64_t k, float *y, int64_t ldy)
{
    for (int64_t j = 0; j < n; j++) {
        const float *r = m + j * ldm;
        cpu_v8 acc[4] = {{0}, {0}, {0}, {0}};
        float s, t[8];
        int64_t i = 0;
        for (; i + 32 <= k; i += 32)
            for (int v = 0; v < 4; v++) {
                cpu_v8 a, b;
                CPU_LOAD(a, x + i + 8 * v);
                CPU_LOAD(b, r + i + 8 * v);
                acc[v] += a * b;
            }
        for (; i + 8 <= k; i += 8) {
            cpu_v8 a, b;
            CPU_LOAD(a, x + i);
            CPU_LOAD(b, r + i);
            acc[0] += a * b;
        }
        acc[0] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        CPU_STORE(t, acc[0]);
        s = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
        for (; i < k; i++)
            s += x[i] * r[i];
        y[j * ldy] = s;
    }
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
    return 0;
}

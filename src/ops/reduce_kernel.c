/* Row means of floats (cpu_kernels.h), in a baseline and an AVX2 + FMA
 * build: each row summed in double, eight running sums of four lanes each
 * (the float widened as it is loaded), combined in a fixed order, so a
 * row's mean depends on its values alone. */
#include "ops/cpu_kernels.h"

typedef float rk_v4 __attribute__((vector_size(16)));
typedef double rk_v4d __attribute__((vector_size(32)));

static inline CPU_INLINE void rk_body(const float *x, int64_t rows, int64_t n, float *y)
{
    for (int64_t r = 0; r < rows; r++, x += n) {
        rk_v4d acc[8] = {{0}};
        double s;
        int64_t k = 0;
        for (; k + 32 <= n; k += 32)
            for (int v = 0; v < 8; v++) {
                rk_v4 f;
                memcpy(&f, x + k + 4 * v, sizeof f);
                acc[v] += __builtin_convertvector(f, rk_v4d);
            }
        for (; k + 4 <= n; k += 4) {
            rk_v4 f;
            memcpy(&f, x + k, sizeof f);
            acc[0] += __builtin_convertvector(f, rk_v4d);
        }
        for (int v = 0; v < 4; v++)
            acc[v] = (acc[v] + acc[v + 4]);
        acc[0] = (acc[0] + acc[2]) + (acc[1] + acc[3]);
        s = (acc[0][0] + acc[0][1]) + (acc[0][2] + acc[0][3]);
        for (; k < n; k++)
            s += x[k];
        y[r] = n > 0 ? (float)(s / (double)n) : __builtin_nanf("");
    }
}

CPU_BUILDS(rk, rk_body, (const float *x, int64_t rows, int64_t n, float *y),
           (x, rows, n, y))

void op_row_means(const float *x, int64_t rows, int64_t n, float *y)
{
    CPU_PICK(rk)(x, rows, n, y);
}

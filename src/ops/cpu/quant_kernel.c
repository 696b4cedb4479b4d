/* The quantization ops' inner loops (quant.h's element code) in a baseline
 * and an AVX2 build: the AVX2 build rounds eight floats at once (vroundps;
 * baseline x86-64 has no vector rounding, so its rintf stays a call per
 * element) and narrows with saturating packs. Built with -O3 but without
 * the kernels' -ffp-contract=fast (CMakeLists.txt): a multiply-add fused
 * here would move QLinearAdd's sums across rounding ties, and every build
 * and device must give the same integers (quant.h). */
#include <math.h>

#include "ops/cpu/cpu_kernels.h"
#include "ops/quant.h"

/* y[j] = quantize(x[j], scale, zp) for j < n, y int8 or uint8. */
static inline CPU_INLINE void qk_quantize(const float *x, int64_t n, float scale,
                                          int32_t zp, int32_t dtype, void *y)
{
    const int32_t lo = opq_lo(dtype), hi = opq_hi(dtype);
    if (dtype == PRT_INT8) {
        int8_t *q = (int8_t *)y;
        for (int64_t j = 0; j < n; j++)
            q[j] = (int8_t)opq_quantize(x[j], scale, zp, lo, hi);
    } else {
        uint8_t *q = (uint8_t *)y;
        for (int64_t j = 0; j < n; j++)
            q[j] = (uint8_t)opq_quantize(x[j], scale, zp, lo, hi);
    }
}
CPU_BUILDS(qk_quantize_f32, qk_quantize,
           (const float *x, int64_t n, float scale, int32_t zp, int32_t dtype, void *y),
           (x, n, scale, zp, dtype, y))

void op_quantize_f32(const float *x, int64_t n, float scale, int32_t zp, int32_t dtype,
                     void *y)
{
    CPU_PICK(qk_quantize_f32)(x, n, scale, zp, dtype, y);
}

/* y[j] = dequantize(x[j], zp, scale) for j < n, x int8, uint8 or int32. */
static inline CPU_INLINE void qk_dequantize(int32_t dtype, const void *x, int64_t n,
                                            float scale, int32_t zp, float *y)
{
    if (dtype == PRT_INT8) {
        const int8_t *q = (const int8_t *)x;
        for (int64_t j = 0; j < n; j++)
            y[j] = opq_dequantize(q[j], zp, scale);
    } else if (dtype == PRT_UINT8) {
        const uint8_t *q = (const uint8_t *)x;
        for (int64_t j = 0; j < n; j++)
            y[j] = opq_dequantize(q[j], zp, scale);
    } else {
        const int32_t *q = (const int32_t *)x;
        for (int64_t j = 0; j < n; j++)
            y[j] = opq_dequantize(q[j], zp, scale);
    }
}
CPU_BUILDS(qk_dequantize_f32, qk_dequantize,
           (int32_t dtype, const void *x, int64_t n, float scale, int32_t zp, float *y),
           (dtype, x, n, scale, zp, y))

void op_dequantize_f32(int32_t dtype, const void *x, int64_t n, float scale, int32_t zp,
                       float *y)
{
    CPU_PICK(qk_dequantize_f32)(dtype, x, n, scale, zp, y);
}

/* The smallest and largest of 0 and n floats (NaN skipped: it loses every
 * comparison), in 32 lanes: four independent vectors of eight, so the
 * compare-selects (vminps / vmaxps in the AVX2 build) are not one
 * dependency chain (8 lanes ran at a third of the loads' rate). */
#define QK_MM_LANES 32
static inline CPU_INLINE void qk_minmax(const float *x, int64_t n, float *mn, float *mx)
{
    float lo[QK_MM_LANES], hi[QK_MM_LANES];
    int64_t j = 0;
    for (int k = 0; k < QK_MM_LANES; k++)
        lo[k] = hi[k] = 0.0f;
    for (; j + QK_MM_LANES <= n; j += QK_MM_LANES)
        for (int k = 0; k < QK_MM_LANES; k++) {
            lo[k] = x[j + k] < lo[k] ? x[j + k] : lo[k];
            hi[k] = x[j + k] > hi[k] ? x[j + k] : hi[k];
        }
    for (; j < n; j++) {
        lo[0] = x[j] < lo[0] ? x[j] : lo[0];
        hi[0] = x[j] > hi[0] ? x[j] : hi[0];
    }
    for (int k = 1; k < QK_MM_LANES; k++) {
        lo[0] = lo[k] < lo[0] ? lo[k] : lo[0];
        hi[0] = hi[k] > hi[0] ? hi[k] : hi[0];
    }
    *mn = lo[0];
    *mx = hi[0];
}
CPU_BUILDS(qk_minmax_f32, qk_minmax, (const float *x, int64_t n, float *mn, float *mx),
           (x, n, mn, mx))

void op_minmax_f32(const float *x, int64_t n, float *mn, float *mx)
{
    CPU_PICK(qk_minmax_f32)(x, n, mn, mx);
}

/* One QLinearAdd/QLinearMul row of element type T with FN (opq_qadd or
 * opq_qmul): the strides 0 or 1 made constants so each case vectorizes. */
#define QK_ROW(T, FN)                                                                    \
    do {                                                                                 \
        const T *a_ = (const T *)a, *b_ = (const T *)b;                                  \
        T *y_ = (T *)y;                                                                  \
        if (sa && sb)                                                                    \
            for (int64_t j = 0; j < n; j++)                                              \
                y_[j] = (T)FN(a_[j], b_[j], &pl);                                        \
        else if (sb)                                                                     \
            for (int64_t j = 0; j < n; j++)                                              \
                y_[j] = (T)FN(a_[0], b_[j], &pl);                                        \
        else if (sa)                                                                     \
            for (int64_t j = 0; j < n; j++)                                              \
                y_[j] = (T)FN(a_[j], b_[0], &pl);                                        \
        else                                                                             \
            for (int64_t j = 0; j < n; j++)                                              \
                y_[j] = (T)FN(a_[0], b_[0], &pl);                                        \
    } while (0)

static inline CPU_INLINE void qk_qbinary(int32_t mul, int32_t dtype, const void *a,
                                         int64_t sa, const void *b, int64_t sb, void *y,
                                         int64_t n, const opq_binary *p)
{
    /* A copy: y (bytes) may alias *p as far as the compiler knows, which
     * would reload the parameters every element. */
    const opq_binary pl = *p;
    if (dtype == PRT_INT8) {
        if (mul)
            QK_ROW(int8_t, opq_qmul);
        else
            QK_ROW(int8_t, opq_qadd);
    } else {
        if (mul)
            QK_ROW(uint8_t, opq_qmul);
        else
            QK_ROW(uint8_t, opq_qadd);
    }
}
CPU_BUILDS(qk_qbinary_rows, qk_qbinary,
           (int32_t mul, int32_t dtype, const void *a, int64_t sa, const void *b,
            int64_t sb, void *y, int64_t n, const opq_binary *p),
           (mul, dtype, a, sa, b, sb, y, n, p))

void op_qbinary_row(int32_t mul, int32_t dtype, const void *a, int64_t sa, const void *b,
                    int64_t sb, void *y, int64_t n, const struct opq_binary *p)
{
    CPU_PICK(qk_qbinary_rows)(mul, dtype, a, sa, b, sb, y, n, p);
}

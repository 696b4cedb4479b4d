/* The logistic sigmoid, 1 / (1 + e^-x), over floats (cpu_kernels.h), in a
 * baseline, an AVX2 + FMA and an AVX-512 build of CPU_SIGMOID, which the
 * fused activations Sigmoid and Silu use too (CPU_ACT_N).
 *
 * e = e^-|x| is cpu_exp_neg_v8's polynomial (5e-9 relative before
 * rounding), then one rounded addition and one rounded division, each
 * within 2^-24 relative: the result within about 3 2^-24 relative, which
 * near the top of a binade is 2.4 ulp. Measured against 1 / (1 + exp(-x))
 * in double over every float: at most 2.40 ulp (at x = -4.157), relative
 * error 1.77e-7 (AVX2 build) and 1.9e-7 (baseline, no FMA) where the result
 * is normal; subnormal results within 0.99 (1.19) of a subnormal step.
 * The scalar loop over libm's expf it replaced measured 2.40 ulp, 1.77e-7
 * and 0.5 step. tests/test_cpu_kernels.c checks a dense range and the ends.
 */
#include "ops/cpu/cpu_kernels.h"

static inline CPU_INLINE void sigmoid_v8(cpu_v8 *v)
{
    CPU_SIGMOID(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, v);
}

#if CPU_HAVE_AVX2_BUILD
/* The AVX-512 build's vectors: 16 floats, the AVX2 build's bits. */
static inline CPU_INLINE void sigmoid_v16(cpu_v16 *v)
{
    CPU_SIGMOID(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, v);
}
#endif

CPU_MAP_F32_FUNCTION(sigmoid, op_sigmoid_f32)

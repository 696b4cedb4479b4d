/* tanh over floats (cpu_kernels.h), in a baseline, an AVX2 + FMA and an
 * AVX-512 build: GPT-2's GELU (its tanh form) spends most of its time here.
 *
 * With a = |x|: below 0.5, a + a^3 P(a^2), P of degree 6 fitted in double
 * (relative error 1e-12 there, so the float evaluation's rounding is what
 * is left); from 0.5, (1 - e) / (1 + e) with e = e^-2a by cpu_exp_neg's
 * polynomial (2a is exact; e <= e^-1, so 1 - e loses no more than a bit);
 * from 9.1, 1 (tanh(9.1) rounds to 1 in float). The sign is x's, so -0
 * stays -0; infinities give +-1, NaN itself. Measured against tanh in
 * double over [-12, 12] every 5e-5: at most 2.32 ulp (AVX2 and AVX-512
 * builds) and 2.01 (baseline), against libm's tanhf's 1; tests/
 * test_cpu_kernels.c holds it to 3 and checks the ends. The vector
 * function is CPU_TANH (cpu_kernels.h), which the recurrent layers' gates
 * use too. */
#include "ops/cpu/cpu_kernels.h"

static inline CPU_INLINE void tanhk_v8(cpu_v8 *v)
{
    CPU_TANH(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, v);
}

#if CPU_HAVE_AVX2_BUILD
static inline CPU_INLINE void tanhk_v16(cpu_v16 *v)
{
    CPU_TANH(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, v);
}
#endif

CPU_MAP_F32_FUNCTION(tanhk, op_tanh_f32)

/* Gelu's tanh form, x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the
 * argument and the product in the same vectors as the tanh (unary_math.c
 * computed them in scalar loops around op_tanh_f32: a third of the op's
 * time in gpt2_tiny). The constants are unary_math.c's. */
#define GELU_TANH(T, TI, SPLAT, SELECT, v)                                               \
    do {                                                                                 \
        const T x_ = *(v);                                                               \
        T t_ = SPLAT(0.79788456080286536f) * (x_ + SPLAT(0.044715f) * x_ * x_ * x_);     \
        CPU_TANH(T, TI, SPLAT, SELECT, &t_);                                             \
        *(v) = SPLAT(0.5f) * x_ * (SPLAT(1.0f) + t_);                                    \
    } while (0)

static inline CPU_INLINE void gelutk_v8(cpu_v8 *v)
{
    GELU_TANH(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, v);
}

#if CPU_HAVE_AVX2_BUILD
static inline CPU_INLINE void gelutk_v16(cpu_v16 *v)
{
    GELU_TANH(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, v);
}
#endif

CPU_MAP_F32_FUNCTION(gelutk, op_gelu_tanh_f32)

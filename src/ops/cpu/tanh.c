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
 * test_cpu_kernels.c holds it to 3 and checks the ends. */
#include "ops/cpu/cpu_kernels.h"

static const float tanh_p[7] = {
    -3.3333333334e-01f, 1.3333333284e-01f, -5.3968201539e-02f, 2.1867964565e-02f,
    -8.8436848329e-03f, 3.4660180014e-03f, -1.0456625240e-03f,
};

#define TANH_V(T, TI, SPLAT, SELECT, xv)                                                 \
    do {                                                                                 \
        const T tx_ = *(xv), tzero_ = {0}, tone_ = SPLAT(1.0f);                          \
        const TI tsign_ = (TI)tx_ & (TI)SPLAT(-0.0f);                                    \
        const T ta_ = (T)((TI)tx_ & ~(TI)SPLAT(-0.0f));                                  \
        const T tu_ = ta_ * ta_;                                                         \
        T tp_ = SPLAT(tanh_p[6]), th_, te_, tr_;                                         \
        for (int tk_ = 5; tk_ >= 0; tk_--)                                               \
            tp_ = tp_ * tu_ + tanh_p[tk_];                                               \
        /* 2a past 87 (and NaN) take 87: those lanes are 1 or NaN below. */              \
        th_ = ta_ + ta_;                                                                 \
        th_ = SELECT(th_ <= SPLAT(87.0f), th_, SPLAT(87.0f));                            \
        CPU_EXP_NEG(T, TI, SPLAT, &th_, &tzero_, &te_);                                  \
        tr_ = SELECT(ta_ < SPLAT(0.5f), ta_ + ta_ * tu_ * tp_,                           \
                     (tone_ - te_) / (tone_ + te_));                                     \
        tr_ = SELECT(ta_ > SPLAT(9.1f), tone_, tr_);                                     \
        tr_ = (T)((TI)tr_ | tsign_);                                                     \
        *(xv) = SELECT(tx_ != tx_, tx_, tr_);                                            \
    } while (0)

static inline CPU_INLINE void tanhk_v8(cpu_v8 *v)
{
    TANH_V(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, v);
}

#if CPU_HAVE_AVX2_BUILD
static inline CPU_INLINE void tanhk_v16(cpu_v16 *v)
{
    TANH_V(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, v);
}
#endif

CPU_MAP_F32_FUNCTION(tanhk, op_tanh_f32)

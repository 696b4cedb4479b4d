/* GELU, x / 2 (1 + erf(x / sqrt 2)), over floats (cpu_kernels.h), in a
 * baseline and an AVX2 + FMA build.
 *
 * With z = x / sqrt 2 and t = |z|, 1 + erf(z) is 2 - erfc(t) for z >= 0 and
 * erfc(t) for z < 0, so y = x (1 - e) or x e with e = erfc(t) / 2: no
 * cancellation for negative x, where 1 + erf(z) computed directly loses
 * its digits (at x = -4 libm's erff leaves 1 + erf a relative error of
 * 1e-3). erfc(t) = exp(-t^2) R(t), R a polynomial of degree 9 in
 * u = 1 / (1 + t / 2) whose coefficients scripts/fit_erfc.py fitted (largest
 * relative error 3e-8, 3.2e-7 evaluated in float); t^2 = x^2 / 2 is carried
 * exactly as a sum of two floats into exp's argument reduction, since its
 * rounding alone would cost a relative error of t^2 2^-23. Measured against
 * erfc in double over [-14, 6], every 1e-5: largest relative error 3.8e-7
 * (AVX2 build), 4.3e-7 (baseline). e is 0 once t^2 > 87 (y is x, or -0 for
 * negative x, NaN for -inf as x * 0 gives); NaN stays NaN. */
#include "ops/cpu/cpu_kernels.h"

static const float gelu_r[10] = {
    -8.283213901e-06f, 2.822697461e-01f,  2.806617618e-01f, 2.519882917e-01f,
    1.744663566e-01f,  3.048061579e-02f,  2.042150050e-01f, -4.281480610e-01f,
    2.579985559e-01f,  -5.392403528e-02f,
};

/* GELU on *xv, a vector of type T (TI its integer twin, SPLAT and SELECT
 * its CPU_SPLAT and CPU_SELECT, EXP its cpu_exp_neg): one macro writes the
 * 8- and 16-float versions, each lane the same operations, so the same
 * bits. */
#define GELU_V(T, TI, SPLAT, SELECT, EXP, xv)                                            \
    do {                                                                                 \
        const T x = *(xv), zero = {0};                                                   \
        /* ~0xFFF in each lane: a float's bits but the low 12 of its                     \
         * significand. */                                                               \
        const TI neg = x < zero, split = (TI){0} - 4096;                                 \
        const T ax = SELECT(neg, -x, x);                                                 \
        /* t^2 = x^2 / 2 exactly as hi + lo: x = xh + xl with xh's low 12                \
         * significand bits cleared, so xh^2, xh xl and xl^2 are exact. */               \
        const T xh = (T)((TI)ax & split), xl = ax - xh;                                  \
        T hi = xh * xh * 0.5f, lo = (xh * xl + xl * xl * 0.5f);                          \
        T u, rr, ex, e, phi;                                                             \
        const TI big = hi > 87.0f;                                                       \
        hi = SELECT(big, zero, hi);                                                      \
        lo = SELECT(big, zero, lo);                                                      \
        u = 1.0f / (ax * (0.70710678118654752f * 0.5f) + 1.0f);                          \
        rr = SPLAT(gelu_r[9]);                                                           \
        for (int k = 8; k >= 0; k--)                                                     \
            rr = rr * u + gelu_r[k];                                                     \
        EXP(&hi, &lo, &ex);                                                              \
        e = ex * rr * 0.5f;                                                              \
        e = SELECT(big, zero, e);                                                        \
        phi = SELECT(neg, e, 1.0f - e);                                                  \
        /* x * phi; NaN (x != x) passes as itself. */                                    \
        *(xv) = SELECT(x != x, x, x * phi);                                              \
    } while (0)

static inline CPU_INLINE void gelu_v8(cpu_v8 *xv)
{
    GELU_V(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, cpu_exp_neg_v8, xv);
}

#if CPU_HAVE_AVX2_BUILD
/* The AVX-512 build's vectors: 16 floats, the AVX2 build's bits. */
static inline CPU_INLINE void gelu_v16(cpu_v16 *xv)
{
    GELU_V(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, cpu_exp_neg_v16, xv);
}
#endif

CPU_MAP_F32_FUNCTION(gelu, op_gelu_f32)

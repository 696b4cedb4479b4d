/*
 * Number conversions written once for the host and the CUDA kernels: plain
 * C that nvcc compiles as __host__ __device__ code and the C compiler as
 * static inline functions. The 16-bit floats (prt_half_to_float and its
 * kin in util.c are these), NaN payloads included, so a kernel's results
 * are the CPU's bytes; Cast's float-to-integer rule. Needs no CUDA header.
 */
#ifndef PLUGRT_BASE_FP16_H
#define PLUGRT_BASE_FP16_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define BASE_HD static inline __host__ __device__
#else
#define BASE_HD static inline
#endif

BASE_HD float base_bits_f32(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, 4);
    return f;
#endif
}

BASE_HD uint32_t base_f32_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
#endif
}

BASE_HD float base_h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0) {
        float f = (float)man * 5.9604644775390625e-8f; /* man * 2^-24, exact */
        return sign ? -f : f;
    }
    if (exp == 31)
        return base_bits_f32(sign | 0x7f800000u | (man << 13));
    return base_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

BASE_HD uint16_t base_f2h(float f)
{
    uint32_t x = base_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    int32_t e = (int32_t)exp - 127 + 15;
    if (exp == 0xff) /* inf or NaN (kept quiet) */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* a subnormal half: round to nearest even */
        uint32_t m, shift, r, half;
        if (e < -10)
            return (uint16_t)sign;
        m = man | 0x800000u;
        shift = (uint32_t)(14 - e);
        r = m >> shift;
        half = 1u << (shift - 1);
        if ((m & ((1u << shift) - 1)) > half ||
            ((m & ((1u << shift) - 1)) == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t r = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (r & 1)))
            r++; /* may carry into the exponent, which is right */
        return (uint16_t)(sign | r);
    }
}

BASE_HD float base_bf2f(uint16_t h)
{
    return base_bits_f32((uint32_t)h << 16);
}

BASE_HD uint16_t base_f2bf(float f)
{
    uint32_t x = base_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* A double as an integer of [lo, hi]: truncated toward zero, saturated,
 * NaN as 0 (ew_f64_to_int, Cast's rule). */
BASE_HD int64_t base_f64_to_int(double v, int64_t lo, int64_t hi)
{
    if (v != v)
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

#endif /* PLUGRT_BASE_FP16_H */

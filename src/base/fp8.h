/*
 * The 8-bit floats of ONNX opset 19 (PRT_FLOAT8E4M3FN, PRT_FLOAT8E5M2, the
 * OCP FP8 formats), written once for the host and the CUDA kernels as
 * fp16.h's conversions are, so a kernel's bytes are the CPU's. A software
 * conversion: sm_89's hardware converts would serve only the newest cards.
 *
 * To float32: exact. NaN codes give a quiet NaN of the code's sign.
 *
 * From float32 (QuantizeLinear and Cast, ONNX's table): round to nearest
 * even; NaN gives S.1111111; with `saturate` (the default) infinities and
 * values beyond the largest finite give +-largest (448, 57344), without it
 * NaN (E4M3FN, which has no infinity) or +-inf (E5M2). One exception is
 * ONNX Runtime's and the ONNX reference's (which produced the node tests'
 * outputs): an E4M3FN of |x| in [480, 496) without saturate gives +-448,
 * not NaN; it is kept so plugrt's bytes are theirs.
 */
#ifndef PLUGRT_BASE_FP8_H
#define PLUGRT_BASE_FP8_H

#include "base/fp16.h"

BASE_HD float base_e4m3_to_f32(uint8_t v)
{
    const uint32_t sign = (uint32_t)(v & 0x80u) << 24, exp = (v >> 3) & 0xfu,
                   man = v & 7u;
    if ((v & 0x7fu) == 0x7fu)
        return base_bits_f32(sign | 0x7fc00000u);
    if (exp == 0) {
        const float f = (float)man * 0.001953125f; /* man * 2^-9, exact */
        return sign ? -f : f;
    }
    return base_bits_f32(sign | ((exp + 120u) << 23) | (man << 20));
}

/* E5M2 is the top byte of an IEEE half. */
BASE_HD float base_e5m2_to_f32(uint8_t v)
{
    if ((v & 0x7fu) > 0x7cu)
        return base_bits_f32(((uint32_t)(v & 0x80u) << 24) | 0x7fc00000u);
    return base_h2f((uint16_t)(v << 8));
}

/* |x| (float32 bits `a`, finite) rounded to nearest even to a float of
 * `mbits` mantissa bits and exponent bias `bias`, as its unsigned code
 * (exponent << mbits | mantissa), which may pass the format's largest
 * finite: the caller's overflow rule decides. */
BASE_HD uint32_t base_f8_round(uint32_t a, int32_t mbits, int32_t bias)
{
    const int32_t e = (int32_t)(a >> 23) - 127, emin = 1 - bias;
    const uint32_t sig = (a & 0x7fffffu) | 0x800000u; /* |x| = sig * 2^(e - 23) */
    int32_t shift;
    uint32_t q, rest, half;
    if ((a >> 23) == 0)
        return 0; /* a float32 subnormal: far below half the least code */
    /* units of the result's last place: 2^(e - mbits), or the subnormals'
     * 2^(emin - mbits) below the least normal */
    shift = 23 - mbits + (e < emin ? emin - e : 0);
    if (shift > 24)
        return 0; /* below half the least subnormal */
    q = sig >> shift;
    rest = sig & ((1u << shift) - 1u);
    half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1u)))
        q++;
    if (e < emin)
        return q; /* q == 1 << mbits is the least normal's code */
    /* q holds the leading 1 (1 << mbits); a carry to 2 << mbits moves
     * into the exponent, which is right */
    return ((uint32_t)(e + bias - 1) << mbits) + q;
}

/* f as the 8-bit float of base_f8_round's `mbits` and `bias` whose
 * largest finite code is `max`; without `saturate`, past it is `over` (NaN
 * or infinity). */
BASE_HD uint8_t base_f32_to_f8(float f, int saturate, int32_t mbits, int32_t bias,
                               uint32_t max, uint32_t over)
{
    const uint32_t x = base_f32_bits(f), sign = (x >> 24) & 0x80u, a = x & 0x7fffffffu;
    uint32_t c;
    if (a > 0x7f800000u)
        return (uint8_t)(sign | 0x7fu);
    if (a == 0x7f800000u)
        return (uint8_t)(sign | (saturate ? max : over));
    c = base_f8_round(a, mbits, bias);
    if (c > max) /* E4M3FN's [480, 496) is 448 in ONNX Runtime (above) */
        c = saturate || (max == 0x7eu && a >= 0x43f00000u && a < 0x43f80000u) ? max
                                                                              : over;
    return (uint8_t)(sign | c);
}

BASE_HD uint8_t base_f32_to_e4m3(float f, int saturate)
{
    return base_f32_to_f8(f, saturate, 3, 7, 0x7eu, 0x7fu);
}

BASE_HD uint8_t base_f32_to_e5m2(float f, int saturate)
{
    return base_f32_to_f8(f, saturate, 2, 15, 0x7bu, 0x7cu);
}

#endif /* PLUGRT_BASE_FP8_H */

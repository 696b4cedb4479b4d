/*
 * Quantization arithmetic written once for every device's kernels (internal
 * to libplugrt), as op_elem.h is: plain C that nvcc compiles as __host__
 * __device__ code and the C compiler as static inline functions, so the CPU
 * kernels of the quantization ops and their CUDA kernels compute every
 * element with the same code, and the CPU tests run it without a GPU.
 *
 * A quantized tensor is an int8 or uint8 (int32 for accumulators) tensor
 * whose real value is (q - zero_point) * scale; the scale and zero point are
 * ordinary tensors beside it (ONNX's rule), per tensor or per channel.
 *
 * Rounding follows ONNX and ONNX Runtime: x / scale is rounded to nearest,
 * halves to even (rintf in the default rounding mode), after being clamped
 * to the range that the zero point leaves, so infinities saturate and NaN
 * gives the range's low end (MLAS's max/min return their bound for NaN).
 * No step may be fused into a multiply-add: a fused product lands on the
 * other side of a rounding tie now and then, so the files that use this
 * header are compiled without contraction, and the CUDA side spells each
 * operation with its own rounding (OPQ_MUL, OPQ_ADD, OPQ_DIV).
 */
#ifndef PLUGRT_OPS_QUANT_H
#define PLUGRT_OPS_QUANT_H

#include <math.h>
#include <stdint.h>

#include "ops/op_elem.h"

#ifdef __CUDA_ARCH__
#define OPQ_MUL(a, b) __fmul_rn((a), (b))
#define OPQ_ADD(a, b) __fadd_rn((a), (b))
#define OPQ_DIV(a, b) __fdiv_rn((a), (b))
#else
#define OPQ_MUL(a, b) ((a) * (b))
#define OPQ_ADD(a, b) ((a) + (b))
#define OPQ_DIV(a, b) ((a) / (b))
#endif

/* The range of a quantized dtype: int8 [-128, 127], otherwise (uint8)
 * [0, 255]. */
OPK_HD int32_t opq_lo(int32_t dtype)
{
    return dtype == PRT_INT8 ? -128 : 0;
}
OPK_HD int32_t opq_hi(int32_t dtype)
{
    return dtype == PRT_INT8 ? 127 : 255;
}

/* saturate(round_half_even(x / scale) + zp) into [lo, hi]: QuantizeLinear's
 * element (x / scale clamped to [lo - zp, hi - zp] first, which gives the
 * same integers and keeps the conversion in range). */
OPK_HD int32_t opq_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    float v = OPQ_DIV(x, scale);
    v = v >= flo ? v : flo; /* NaN: lo */
    v = v <= fhi ? v : fhi;
    return (int32_t)rintf(v) + zp;
}

/* (q - zp) * scale: DequantizeLinear's element (q - zp is exact in int32
 * for int8 and uint8; int32 tensors have zp 0). */
OPK_HD float opq_dequantize(int32_t q, int32_t zp, float scale)
{
    return OPQ_MUL((float)(q - zp), scale);
}

/* DynamicQuantizeLinear's uint8 scale and zero point from x's minimum and
 * maximum, ONNX Runtime's rule: the range widened to hold 0, scale =
 * range / 255 (1 when the range is empty, all of x zeros: ONNX's formula
 * would divide by 0), zero point = round(clamp(0 - min / scale, 0, 255)). */
OPK_HD void opq_dynamic_params(float mn, float mx, float *scale, int32_t *zp)
{
    float s, z;
    mn = mn < 0.0f ? mn : 0.0f;
    mx = mx > 0.0f ? mx : 0.0f;
    s = mx == mn ? 1.0f : OPQ_DIV(mx - mn, 255.0f);
    z = 0.0f - OPQ_DIV(mn, s);
    z = z >= 0.0f ? z : 0.0f;
    z = z <= 255.0f ? z : 255.0f;
    *scale = s;
    *zp = (int32_t)rintf(z);
}

/* QLinearAdd's and QLinearMul's parameters: the inputs' and the output's
 * scales and zero points, and the output's range. */
typedef struct opq_binary {
    float sa, sb, sc;
    int32_t za, zb, zc;
    int32_t lo, hi;
} opq_binary;

/* C = quantize(sa (a - za) + sb (b - zb)) with sc, zc: com.microsoft
 * QLinearAdd's definition. */
OPK_HD int32_t opq_qadd(int32_t a, int32_t b, const opq_binary *p)
{
    const float va = OPQ_MUL(p->sa, (float)(a - p->za));
    const float vb = OPQ_MUL(p->sb, (float)(b - p->zb));
    return opq_quantize(OPQ_ADD(va, vb), p->sc, p->zc, p->lo, p->hi);
}

/* C = quantize(sa (a - za) * sb (b - zb)) with sc, zc: QLinearMul's. */
OPK_HD int32_t opq_qmul(int32_t a, int32_t b, const opq_binary *p)
{
    const float va = OPQ_MUL(p->sa, (float)(a - p->za));
    const float vb = OPQ_MUL(p->sb, (float)(b - p->zb));
    return opq_quantize(OPQ_MUL(va, vb), p->sc, p->zc, p->lo, p->hi);
}

#endif /* PLUGRT_OPS_QUANT_H */

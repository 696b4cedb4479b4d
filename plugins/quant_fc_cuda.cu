// QuantFC on CUDA (cuda_launch.h): one thread per output element of the
// launch's channel chunk, consecutive threads on consecutive channels so the
// row of y is written in one sweep. An integer x meets int8 weights in an
// int32 dot: four bytes at a time with __dp4a when both are int8, k is a
// multiple of four and the rows are 4-byte aligned, byte by byte otherwise;
// x's zero point comes off as x_zp * sum(w) (sum(w) in the same pass). The
// dequantization is the epilogue: one multiply by the channel's combined
// scale (a launch argument), the bias, ReLU, and for an integer y the
// quantization (round half to even, saturated), written directly. The
// multiply and add are rounded separately (__fmul_rn, __fadd_rn), as the
// CPU computes them, so an integer x gives the CPU's result to the bit.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_launch.h"

namespace
{

constexpr int B = 256;

__device__ __forceinline__ int32_t dot_i8(const int8_t *x, const int8_t *w, int64_t k,
                                          int32_t x_zp, bool dp4a)
{
    int32_t acc = 0, wsum = 0;
    if (dp4a) {
        const int *x4 = reinterpret_cast<const int *>(x);
        const int *w4 = reinterpret_cast<const int *>(w);
        for (int64_t i = 0; i < k / 4; i++) {
            const int wv = w4[i];
            acc = __dp4a(x4[i], wv, acc);
            wsum = __dp4a(0x01010101, wv, wsum);
        }
    } else {
        for (int64_t i = 0; i < k; i++) {
            acc += (int32_t)x[i] * (int32_t)w[i];
            wsum += w[i];
        }
    }
    return acc - x_zp * wsum;
}

__device__ __forceinline__ int32_t dot_u8(const uint8_t *x, const int8_t *w, int64_t k,
                                          int32_t x_zp)
{
    int32_t acc = 0, wsum = 0;
    for (int64_t i = 0; i < k; i++) {
        acc += (int32_t)x[i] * (int32_t)w[i];
        wsum += w[i];
    }
    return acc - x_zp * wsum;
}

__device__ __forceinline__ float dot_f32(const float *x, const float *w, int64_t k)
{
    float acc = 0.0f;
    for (int64_t i = 0; i < k; i++)
        acc = __fadd_rn(acc, __fmul_rn(x[i], w[i]));
    return acc;
}

__global__ void __launch_bounds__(B) qfc_kernel(const plg_qfc_launch a, bool dp4a)
{
    const int64_t i = (int64_t)blockIdx.x * B + threadIdx.x;
    if (i >= a.m * a.nc)
        return;
    const int64_t m = i / a.nc, c = i % a.nc, n = a.n0 + c;
    float v;
    if (a.x_dtype == PRT_FLOAT32) {
        v = dot_f32(static_cast<const float *>(a.x) + m * a.k,
                    static_cast<const float *>(a.w) + n * a.k, a.k);
    } else {
        const int8_t *w = static_cast<const int8_t *>(a.w) + n * a.k;
        const int32_t acc =
            a.x_dtype == PRT_INT8
                ? dot_i8(static_cast<const int8_t *>(a.x) + m * a.k, w, a.k, a.x_zp, dp4a)
                : dot_u8(static_cast<const uint8_t *>(a.x) + m * a.k, w, a.k, a.x_zp);
        v = __fmul_rn((float)acc, a.scale[c]);
    }
    if (a.b)
        v = __fadd_rn(v, a.b[n]);
    if (a.relu && !(v > 0.0f))
        v = v != v ? v : 0.0f;
    const int64_t o = m * a.n + n;
    if (a.y_dtype == PRT_FLOAT32) {
        static_cast<float *>(a.y)[o] = v;
        return;
    }
    const float lo = a.y_dtype == PRT_INT8 ? -128.0f : 0.0f;
    const float hi = a.y_dtype == PRT_INT8 ? 127.0f : 255.0f;
    float q = v != v ? (float)a.y_zp : rintf(__fdiv_rn(v, a.y_scale)) + (float)a.y_zp;
    q = fminf(fmaxf(q, lo), hi);
    if (a.y_dtype == PRT_INT8)
        static_cast<int8_t *>(a.y)[o] = (int8_t)(int)q;
    else
        static_cast<uint8_t *>(a.y)[o] = (uint8_t)(int)q;
}

} // namespace

extern "C" int plg_qfc_cuda(const plg_qfc_launch *a, void *stream)
{
    const int64_t total = a->m * a->nc;
    if (total == 0)
        return 0;
    const bool dp4a = a->x_dtype == PRT_INT8 && a->k % 4 == 0 &&
                      reinterpret_cast<uintptr_t>(a->x) % 4 == 0 &&
                      reinterpret_cast<uintptr_t>(a->w) % 4 == 0;
    const int64_t blocks = (total + B - 1) / B;
    qfc_kernel<<<(unsigned)blocks, B, 0, static_cast<cudaStream_t>(stream)>>>(*a, dp4a);
    return (int)cudaGetLastError();
}

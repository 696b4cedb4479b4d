// CUDA kernels of the quantization ops (launch.h), each element quant.h's
// code, so the CPU's integers bit for bit. Scales and zero points are read
// from device memory by the kernels (their values never cross to the host),
// so nothing here can check them: a scale that fails the CPU's run (not
// positive and finite) gives whatever the arithmetic gives.
#include <string.h>

#include "ops/cuda/launch.cuh"
#include "ops/quant.h"

namespace opk
{
namespace
{

// The channel of element i of x [outer, ch, inner].
__device__ inline int64_t channel(int64_t i, int64_t ch, int64_t inner)
{
    return ch == 1 ? 0 : (i / inner) % ch;
}

__global__ void quantize_kernel(int32_t xdt, const void *x, int32_t sdt,
                                const void *scale, int32_t zdt, const void *zp,
                                int32_t ydt, void *y, int64_t n, int64_t ch,
                                int64_t inner, int saturate)
{
    const int32_t lo = opq_lo(ydt), hi = opq_hi(ydt);
    OPK_FOR(i, n)
    {
        const int64_t c = channel(i, ch, inner);
        const float s = opk_float_at(sdt, scale, c);
        if (ydt == PRT_FLOAT8E4M3FN || ydt == PRT_FLOAT8E5M2) {
            opk_float_put_sat(ydt, y, i, opk_float_at(xdt, x, i) / s, saturate);
            continue;
        }
        const int32_t z = zp ? (int32_t)opk_int_at(zdt, zp, c) : 0;
        const int32_t q = opq_quantize(opk_float_at(xdt, x, i), s, z, lo, hi);
        if (ydt == DT_I8)
            ((int8_t *)y)[i] = (int8_t)q;
        else
            ((uint8_t *)y)[i] = (uint8_t)q;
    }
}

// y has the scale's dtype.
__global__ void dequantize_kernel(int32_t xdt, const void *x, int32_t sdt,
                                  const void *scale, int32_t zdt, const void *zp, void *y,
                                  int64_t n, int64_t ch, int64_t inner)
{
    OPK_FOR(i, n)
    {
        const int64_t c = channel(i, ch, inner);
        const float s = opk_float_at(sdt, scale, c);
        if (xdt == PRT_FLOAT8E4M3FN || xdt == PRT_FLOAT8E5M2) {
            // A NaN code stays the NaN it decodes to, as the CPU's product
            // hands its NaN operand on (the GPU's would be canonical).
            const float v = opk_float_at(xdt, x, i);
            opk_float_put(sdt, y, i, v != v ? v : v * s);
            continue;
        }
        const int32_t z = zp ? (int32_t)opk_int_at(zdt, zp, c) : 0;
        opk_float_put(sdt, y, i, opq_dequantize((int32_t)opk_int_at(xdt, x, i), z, s));
    }
}

constexpr int kMinMaxThreads = 1024;

// DynamicQuantizeLinear's scale and zero point: one block finds the least
// and greatest of 0 and x (NaN skipped, as the CPU's lanes skip it; minimum
// and maximum do not depend on the order), then opq_dynamic_params.
__global__ void dynamic_params_kernel(const float *x, int64_t n, float *scale,
                                      uint8_t *zp)
{
    __shared__ float lo[kMinMaxThreads], hi[kMinMaxThreads];
    const int t = threadIdx.x;
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = t; i < n; i += blockDim.x) {
        const float v = x[i];
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    lo[t] = mn;
    hi[t] = mx;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            lo[t] = lo[t + s] < lo[t] ? lo[t + s] : lo[t];
            hi[t] = hi[t + s] > hi[t] ? hi[t + s] : hi[t];
        }
        __syncthreads();
    }
    if (t == 0) {
        float sc;
        int32_t z;
        opq_dynamic_params(lo[0], hi[0], &sc, &z);
        *scale = sc;
        *zp = (uint8_t)z;
    }
}

template <typename T>
__global__ void qlinear_kernel(int32_t mul, opk_bcast b, const T *a, const T *c,
                               const float *sa, const T *za, const float *sb, const T *zb,
                               const float *sc, const T *zc, T *y, int64_t n)
{
    opq_binary p;
    p.sa = *sa;
    p.sb = *sb;
    p.sc = *sc;
    p.za = *za;
    p.zb = *zb;
    p.zc = zc ? (int32_t)*zc : 0;
    p.lo = sizeof(T) == 1 && (T)-1 < 0 ? -128 : 0;
    p.hi = p.lo ? 127 : 255;
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        y[i] = (T)(mul ? opq_qmul(a[off[0]], c[off[1]], &p)
                       : opq_qadd(a[off[0]], c[off[1]], &p));
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_quantize(int32_t xdt, const void *x, int32_t sdt, const void *scale,
                            int32_t zdt, const void *zp, int32_t ydt, void *y, int64_t n,
                            int64_t ch, int64_t inner, int saturate, void *stream)
{
    if (n == 0)
        return 0;
    quantize_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        xdt, x, sdt, scale, zdt, zp, ydt, y, n, ch, inner, saturate);
    return launched();
}

extern "C" int opk_dequantize(int32_t xdt, const void *x, int32_t sdt, const void *scale,
                              int32_t zdt, const void *zp, void *y, int64_t n, int64_t ch,
                              int64_t inner, void *stream)
{
    if (n == 0)
        return 0;
    dequantize_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        xdt, x, sdt, scale, zdt, zp, y, n, ch, inner);
    return launched();
}

extern "C" int opk_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale,
                                    uint8_t *zp, void *stream)
{
    dynamic_params_kernel<<<1, kMinMaxThreads, 0, (cudaStream_t)stream>>>(x, n, scale,
                                                                          zp);
    if (int err = launched())
        return err;
    return opk_quantize(PRT_FLOAT32, x, PRT_FLOAT32, scale, PRT_UINT8, zp, PRT_UINT8, y,
                        n, 1, n, 1, stream);
}

extern "C" int opk_qlinear(int32_t mul, int32_t dtype, const opk_bcast *b, const void *a,
                           const void *c, const float *sa, const void *za,
                           const float *sb, const void *zb, const float *sc,
                           const void *zc, void *y, int64_t n, void *stream)
{
    if (n == 0)
        return 0;
    if (dtype == PRT_INT8)
        qlinear_kernel<int8_t><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            mul, *b, (const int8_t *)a, (const int8_t *)c, sa, (const int8_t *)za, sb,
            (const int8_t *)zb, sc, (const int8_t *)zc, (int8_t *)y, n);
    else
        qlinear_kernel<uint8_t><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            mul, *b, (const uint8_t *)a, (const uint8_t *)c, sa, (const uint8_t *)za, sb,
            (const uint8_t *)zb, sc, (const uint8_t *)zc, (uint8_t *)y, n);
    return launched();
}

/* LookupTable8: the table travels as a kernel argument (256 bytes) and is
 * copied to shared memory once per block, where every thread's lookups
 * read it (a per-byte read of constant memory would serialize on distinct
 * addresses within a warp). */
struct lut8_table {
    uint8_t t[256];
};

__global__ void lut8_kernel(lut8_table table, const uint8_t *x, uint8_t *y, int64_t n)
{
    __shared__ uint8_t t[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x)
        t[k] = table.t[k];
    __syncthreads();
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = t[x[i]];
}

extern "C" int opk_lut8(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n,
                        void *stream)
{
    lut8_table t;
    if (n == 0)
        return 0;
    memcpy(t.t, table, sizeof t.t);
    lut8_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(t, x, y, n);
    return launched();
}

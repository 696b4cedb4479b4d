// AddInPlace on CUDA (cuda_launch.h): out = a + b elementwise, out usually
// being a itself. Each thread reads a[i] and b[i] before it writes out[i],
// so an output equal to an input is safe; the C side refuses partial
// overlaps, which no order of parallel threads could compute.
//
// float16 sums are computed in float32 and rounded once to float16 (round to
// nearest even), exactly as on the CPU; only NaN payloads may differ (the
// GPU's arithmetic returns its canonical NaN).
//
// 16-byte accesses when all three pointers are 16-byte aligned (the tail
// element by element); otherwise one element per thread. Plain loads, not
// the read-only path (__ldg): the kernel writes the memory a points to.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_device.cuh"
#include "cuda_launch.h"

namespace
{

constexpr int B = 256;

__device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b)
{
    return __float_as_uint(__uint_as_float(a) + __uint_as_float(b));
}

__device__ __forceinline__ uint16_t add(uint16_t a, uint16_t b)
{
    const float s = plg::elem<uint16_t>::to_float(a) + plg::elem<uint16_t>::to_float(b);
    return __half_as_ushort(__float2half_rn(s));
}

template <typename T, bool VEC>
__global__ void __launch_bounds__(B)
    add_kernel(const T *a, const T *b, T *out, int64_t count, const int64_t *dims_device,
               int32_t rank)
{
    constexpr int W = 16 / sizeof(T);
    const int64_t n = dims_device ? plg::volume(dims_device, rank) : count;
    const int64_t tid = (int64_t)blockIdx.x * B + threadIdx.x,
                  stride = (int64_t)gridDim.x * B;
    int64_t done = 0;
    if (VEC) {
        union pack {
            uint4 v;
            T e[W];
        };
        const int64_t nv = n / W;
        for (int64_t i = tid; i < nv; i += stride) {
            pack x, y;
            x.v = reinterpret_cast<const uint4 *>(a)[i];
            y.v = reinterpret_cast<const uint4 *>(b)[i];
#pragma unroll
            for (int q = 0; q < W; q++)
                x.e[q] = add(x.e[q], y.e[q]);
            reinterpret_cast<uint4 *>(out)[i] = x.v;
        }
        done = nv * W;
    }
    for (int64_t i = done + tid; i < n; i += stride)
        out[i] = add(a[i], b[i]);
}

template <typename T> cudaError_t launch(const plg_add_launch *p, cudaStream_t s)
{
    const T *a = static_cast<const T *>(p->a), *b = static_cast<const T *>(p->b);
    T *out = static_cast<T *>(p->out);
    const int sms = plg::sm_count();
    const bool vec = plg::aligned16(a) && plg::aligned16(b) && plg::aligned16(out);
    const int64_t per_thread = vec ? 16 / (int64_t)sizeof(T) : 1;
    const unsigned grid =
        plg::grid_for(plg::ceil_div(plg::ceil_div(p->count, per_thread), B), sms);
    if (vec)
        add_kernel<T, true>
            <<<grid, B, 0, s>>>(a, b, out, p->count, p->dims_device, p->rank);
    else
        add_kernel<T, false>
            <<<grid, B, 0, s>>>(a, b, out, p->count, p->dims_device, p->rank);
    return cudaGetLastError();
}

} // namespace

extern "C" int plg_add_cuda(const plg_add_launch *a, void *stream)
{
    if (a->count == 0)
        return (int)cudaSuccess;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    return (int)(a->dtype == PRT_FLOAT32 ? launch<uint32_t>(a, s)
                                         : launch<uint16_t>(a, s));
}

// What the built-in ops' CUDA kernel files share (internal to the .cu
// files): the launch shape, grid-stride loops with 64-bit indices, the
// 16-bit float codecs and the broadcast walk's per-element offsets.
#ifndef PLUGRT_OPS_CUDA_LAUNCH_CUH
#define PLUGRT_OPS_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "ops/cuda/launch.h"

namespace opk
{

// plugin.h's prt_dtype values.
enum {
    DT_F32 = PRT_FLOAT32,
    DT_F16 = PRT_FLOAT16,
    DT_BF16 = PRT_BFLOAT16,
    DT_I8 = PRT_INT8,
    DT_U8 = PRT_UINT8,
    DT_I32 = PRT_INT32,
    DT_I64 = PRT_INT64,
    DT_BOOL = PRT_BOOL
};

constexpr int kThreads = 256;

// Blocks for n elements, one per kThreads up to a cap the grid-stride
// loops cover beyond.
inline int blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return (int)(b > 65535 * 16 ? 65535 * 16 : b);
}

// for (i over [0, n)) grid-stride, 64-bit.
#define OPK_FOR(i, n)                                                                    \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);            \
         i += (int64_t)gridDim.x * blockDim.x)

// The float dtypes as float32 and back, exactly as the CPU converts: S
// the stored type, V the one computed in.
struct cf32 {
    typedef float S;
    typedef float V;
    static __device__ float ld(float v) { return v; }
    static __device__ float st(float v) { return v; }
};
struct cf16 {
    typedef uint16_t S;
    typedef float V;
    static __device__ float ld(uint16_t v) { return base_h2f(v); }
    static __device__ uint16_t st(float v) { return base_f2h(v); }
};
struct cbf16 {
    typedef uint16_t S;
    typedef float V;
    static __device__ float ld(uint16_t v) { return base_bf2f(v); }
    static __device__ uint16_t st(float v) { return base_f2bf(v); }
};

// A float dtype's element i as float32, and back (op_elem.h).
__device__ inline float load_f(int32_t dtype, const void *p, int64_t i)
{
    return opk_float_at(dtype, p, i);
}

__device__ inline void store_f(int32_t dtype, void *p, int64_t i, float v)
{
    opk_float_put(dtype, p, i, v);
}

// The input offsets of element i; rank 1 (the common case: same shapes, a
// scalar) without a division.
// The block's sum of v in double, every thread getting it: a tree over
// sh's Threads slots (Threads the block's size, a power of two). sh may be
// reused at once (the last barrier).
template <int Threads> __device__ inline double block_sum_f64(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int w = Threads / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    v = sh[0];
    __syncthreads();
    return v;
}

__device__ inline void offsets(const opk_bcast &b, int64_t i, int64_t *off)
{
    if (b.rank == 1) {
        for (int32_t k = 0; k < b.nb; k++)
            off[k] = i * b.stride[k][0];
        return;
    }
    opk_bcast_offsets(&b, i, off);
}

inline int launched()
{
    return (int)cudaGetLastError();
}

// f(T()) with T the unsigned type of esize bytes (1, 2, 4 or 8), for the
// kernels that move elements without looking at them; then the launch's
// result. Another size is an error.
template <class F> int by_esize(int32_t esize, F f)
{
    switch (esize) {
    case 1:
        f(uint8_t());
        break;
    case 2:
        f(uint16_t());
        break;
    case 4:
        f(uint32_t());
        break;
    case 8:
        f(uint64_t());
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return launched();
}

} // namespace opk

#endif // PLUGRT_OPS_CUDA_LAUNCH_CUH

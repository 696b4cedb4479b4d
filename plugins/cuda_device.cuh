// Device-side helpers shared by the plugin library's kernels (*_cuda.cu).
// Internal to the library: everything is inline or in an anonymous
// namespace, so no symbol leaves a translation unit.
#ifndef PLUGRT_PLUGINS_CUDA_DEVICE_CUH
#define PLUGRT_PLUGINS_CUDA_DEVICE_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

namespace plg
{

constexpr unsigned FULL_MASK = 0xffffffffu;

// Blocks to launch for grid-stride loops: enough to fill every SM several
// times over, never more than the work has.
constexpr int BLOCKS_PER_SM = 16;

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// Multiprocessors of the current device (132 on an H200 if the query fails;
// a failed query leaves no error behind, and the launch reports any real
// problem). Asked once per device (the first 64 devices) and kept, since
// every enqueue of every plugin wants it.
inline int sm_count()
{
    constexpr int CACHED = 64;
    static std::atomic<int> known[CACHED]; // 0: not asked yet
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 132;
    }
    const bool cached = dev >= 0 && dev < CACHED;
    if (cached && (n = known[dev].load(std::memory_order_relaxed)) > 0)
        return n;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        n <= 0) {
        (void)cudaGetLastError();
        return 132;
    }
    if (cached)
        known[dev].store(n, std::memory_order_relaxed);
    return n;
}

// Grid for a grid-stride loop over `units` (>= 1) block-sized units.
inline unsigned grid_for(int64_t units, int sms)
{
    int64_t cap = (int64_t)sms * BLOCKS_PER_SM;
    int64_t g = units < cap ? units : cap;
    return (unsigned)(g < 1 ? 1 : g);
}

inline bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

// a / b and a % b; 32-bit division when both fit (several times cheaper
// than the 64-bit sequence).
__device__ __forceinline__ void divmod(uint64_t a, uint64_t b, uint64_t &q, uint64_t &r)
{
    if (((a | b) >> 32) == 0) {
        uint32_t q32 = (uint32_t)a / (uint32_t)b;
        q = q32;
        r = (uint32_t)a - q32 * (uint32_t)b;
    } else {
        q = a / b;
        r = a - q * b;
    }
}

template <typename V> __device__ __forceinline__ V warp_inclusive_scan(V v, int lane)
{
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        V t = __shfl_up_sync(FULL_MASK, v, o);
        if (lane >= o)
            v += t;
    }
    return v;
}

__device__ __forceinline__ int64_t warp_sum64(int64_t v)
{
#pragma unroll
    for (int o = 16; o >= 1; o >>= 1)
        v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// Lanes in groups of G (a power of two <= 32), each group working on one
// line at a time: the lane's place in its group and the group's in its warp,
// and this warp's index among all warps of the grid (B threads a block).
template <int G, int B> struct lane_group {
    int lane, gl, gw;
    int64_t warp, nwarps;
    __device__ lane_group()
        : lane(threadIdx.x & 31), gl(lane % G), gw(lane / G),
          warp(((int64_t)blockIdx.x * B + threadIdx.x) >> 5),
          nwarps((int64_t)gridDim.x * (B / 32))
    {
    }
};

// Elements as their raw bits (float32 -> uint32_t, float16 -> uint16_t), so
// that copies are bit-exact and nothing depends on the compiler's handling of
// NaN payloads or subnormals.
template <typename T> struct elem;
template <> struct elem<uint32_t> {
    static constexpr uint32_t ONE = 0x3F800000u; // 1.0f
    __device__ static float to_float(uint32_t b) { return __uint_as_float(b); }
};
template <> struct elem<uint16_t> {
    static constexpr uint16_t ONE = 0x3C00u; // 1.0 in binary16
    __device__ static float to_float(uint16_t b)
    {
        return __half2float(__ushort_as_half(b));
    }
};

// Product of the first `rank` dims of a device array (true dims).
__device__ __forceinline__ int64_t volume(const int64_t *dims, int rank)
{
    int64_t v = 1;
    for (int i = 0; i < rank; i++)
        v *= dims[i];
    return v;
}

} // namespace plg

#endif // PLUGRT_PLUGINS_CUDA_DEVICE_CUH

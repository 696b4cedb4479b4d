// CUDA row kernels of the built-ins (launch.h): Softmax and LogSoftmax,
// LayerNormalization, row means (GlobalAveragePool), and Gemm's epilogue.
// A row is folded by a group of threads, each taking a strided part, then
// combined: a warp per row (shuffles, several rows per block) up to
// kWarpRow elements, a block per row (shared memory) beyond; rows are
// grid-strided. Sums are in double, as on the CPU (the order differs, so
// results agree to rounding, not bit for bit).
#include <math.h>

#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

constexpr int kRowThreads = 256; // a power of two: the block reductions halve it
constexpr int kWarp = 32;
constexpr int64_t kWarpRow = 1024; // the longest row a warp takes

// Blocks for `n` groups of `per` per block, up to a cap the loops cover
// beyond.
int row_blocks(int64_t n, int per)
{
    int64_t b = (n + per - 1) / per;
    return (int)(b < 1 ? 1 : b > 65535 * 16 ? 65535 * 16 : b);
}

// A block per row. The reductions give every thread the result; sh has
// kRowThreads slots of each kind.
struct block_group {
    struct shared {
        double d[kRowThreads];
        float f[kRowThreads];
        int i[kRowThreads];
    };
    static __device__ int lane() { return (int)threadIdx.x; }
    static __device__ int size() { return kRowThreads; }
    static __device__ int64_t first() { return blockIdx.x; }
    static __device__ int64_t step() { return gridDim.x; }
    static __device__ double sum(double v, shared *sh)
    {
        sh->d[threadIdx.x] = v;
        __syncthreads();
        for (int w = kRowThreads / 2; w > 0; w /= 2) {
            if ((int)threadIdx.x < w)
                sh->d[threadIdx.x] += sh->d[threadIdx.x + w];
            __syncthreads();
        }
        v = sh->d[0];
        __syncthreads(); // sh is reused by the next reduction
        return v;
    }
    // The largest v, and whether any thread saw a NaN (*nan in and out).
    static __device__ float max(float v, int *nan, shared *sh)
    {
        sh->f[threadIdx.x] = v;
        sh->i[threadIdx.x] = *nan;
        __syncthreads();
        for (int w = kRowThreads / 2; w > 0; w /= 2) {
            if ((int)threadIdx.x < w) {
                float o = sh->f[threadIdx.x + w];
                sh->f[threadIdx.x] = o > sh->f[threadIdx.x] ? o : sh->f[threadIdx.x];
                sh->i[threadIdx.x] |= sh->i[threadIdx.x + w];
            }
            __syncthreads();
        }
        v = sh->f[0];
        *nan = sh->i[0];
        __syncthreads();
        return v;
    }
};

// A warp per row, kRowThreads / kWarp rows per block; no shared memory.
struct warp_group {
    struct shared {
        int unused;
    };
    static __device__ int lane() { return (int)(threadIdx.x % kWarp); }
    static __device__ int size() { return kWarp; }
    static __device__ int64_t first()
    {
        return (int64_t)blockIdx.x * (kRowThreads / kWarp) + threadIdx.x / kWarp;
    }
    static __device__ int64_t step()
    {
        return (int64_t)gridDim.x * (kRowThreads / kWarp);
    }
    static __device__ double sum(double v, shared *)
    {
        for (int o = kWarp / 2; o > 0; o /= 2)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        return v;
    }
    static __device__ float max(float v, int *nan, shared *)
    {
        for (int o = kWarp / 2; o > 0; o /= 2) {
            float w = __shfl_xor_sync(0xffffffffu, v, o);
            v = w > v ? w : v;
        }
        *nan = __any_sync(0xffffffffu, *nan);
        return v;
    }
};

// softmax.c's rows: the largest value (NaN when the row holds one)
// subtracted, e^(x - max) summed in double, then scaled by 1 / sum (or
// x - max - log(sum) for the log). Every thread of a group runs the same
// rows, so the group's reductions are reached by all of it.
template <class G>
__global__ void softmax_kernel(int32_t dtype, const void *x, void *y, int64_t outer,
                               int64_t n, int64_t inner, int32_t log_softmax)
{
    __shared__ typename G::shared sh;
    const int64_t rows = outer * inner;
    for (int64_t r = G::first(); r < rows; r += G::step()) {
        const int64_t base = r / inner * n * inner + r % inner;
        float mx = -INFINITY;
        int nan = 0;
        double s = 0.0;
        for (int64_t k = G::lane(); k < n; k += G::size()) {
            float v = load_f(dtype, x, base + k * inner);
            if (v != v)
                nan = 1;
            else if (v > mx)
                mx = v;
        }
        mx = G::max(mx, &nan, &sh);
        if (nan)
            mx = NAN;
        for (int64_t k = G::lane(); k < n; k += G::size())
            s += (double)expf(load_f(dtype, x, base + k * inner) - mx);
        s = G::sum(s, &sh);
        if (log_softmax) {
            const float ls = (float)log(s);
            for (int64_t k = G::lane(); k < n; k += G::size()) {
                const int64_t i = base + k * inner;
                store_f(dtype, y, i, (load_f(dtype, x, i) - mx) - ls);
            }
        } else {
            const float inv = (float)(1.0 / s);
            for (int64_t k = G::lane(); k < n; k += G::size()) {
                const int64_t i = base + k * inner;
                store_f(dtype, y, i, expf(load_f(dtype, x, i) - mx) * inv);
            }
        }
    }
}

// layer_norm.c's rows: the mean, then the variance about it (two passes in
// double), both rounded to float32 and then to the stash dtype, which the
// normalization uses.
template <class G> __global__ void layer_norm_kernel(opk_layer_norm_args a)
{
    __shared__ typename G::shared sh;
    for (int64_t r = G::first(); r < a.rows; r += G::step()) {
        const int64_t base = r * a.norm;
        double s = 0.0, q = 0.0;
        float mean, inv;
        if (a.norm == 0) { // no elements: NaN statistics (numpy's mean of nothing)
            if (G::lane() == 0) {
                if (a.mean)
                    store_f(a.stash_dtype, a.mean, r, NAN);
                if (a.inv_std)
                    store_f(a.stash_dtype, a.inv_std, r, NAN);
            }
            continue;
        }
        for (int64_t k = G::lane(); k < a.norm; k += G::size())
            s += (double)load_f(a.dtype, a.x, base + k);
        s = G::sum(s, &sh);
        mean = (float)(s / (double)a.norm);
        for (int64_t k = G::lane(); k < a.norm; k += G::size()) {
            double d = (double)load_f(a.dtype, a.x, base + k) - (double)mean;
            q += d * d;
        }
        q = G::sum(q, &sh);
        inv = (float)(1.0 / sqrt(q / (double)a.norm + (double)a.epsilon));
        if (a.stash_dtype == DT_F16) {
            mean = base_h2f(base_f2h(mean));
            inv = base_h2f(base_f2h(inv));
        } else if (a.stash_dtype == DT_BF16) {
            mean = base_bf2f(base_f2bf(mean));
            inv = base_bf2f(base_f2bf(inv));
        }
        if (G::lane() == 0) {
            if (a.mean)
                store_f(a.stash_dtype, a.mean, r, mean);
            if (a.inv_std)
                store_f(a.stash_dtype, a.inv_std, r, inv);
        }
        for (int64_t k = G::lane(); k < a.norm; k += G::size()) {
            int64_t off[OPK_MAX_IN];
            float v = load_f(a.dtype, a.x, base + k), sc, bi;
            offsets(a.sb, k, off);
            sc = load_f(a.dtype, a.scale, off[0]);
            bi = a.bias ? load_f(a.dtype, a.bias, off[1]) : 0.0f;
            store_f(a.dtype, a.y, base + k, (v - mean) * inv * sc + bi);
        }
    }
}

template <class G>
__global__ void row_mean_kernel(int32_t dtype, const void *x, void *y, int64_t rows,
                                int64_t n)
{
    __shared__ typename G::shared sh;
    for (int64_t r = G::first(); r < rows; r += G::step()) {
        double s = 0.0;
        for (int64_t k = G::lane(); k < n; k += G::size())
            s += (double)load_f(dtype, x, r * n + k);
        s = G::sum(s, &sh);
        if (G::lane() == 0)
            store_f(dtype, y, r, n > 0 ? (float)(s / (double)n) : NAN);
    }
}

// Launches K<warp_group> for rows of up to kWarpRow elements, else
// K<block_group>: f(group, blocks).
template <class F> int by_row(int64_t rows, int64_t n, F f)
{
    if (n <= kWarpRow)
        f(warp_group(), row_blocks(rows, kRowThreads / kWarp));
    else
        f(block_group(), row_blocks(rows, 1));
    return launched();
}

__global__ void gemm_epilogue_kernel(float *y, int64_t M, int64_t N, float alpha,
                                     const float *c, int64_t si, int64_t sj, float beta)
{
    const int64_t n = M * N;
    OPK_FOR(e, n)
    {
        const int64_t i = e / N, j = e % N;
        y[e] = c ? y[e] * alpha + c[i * si + j * sj] * beta : y[e] * alpha;
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_softmax(int32_t dtype, const void *x, void *y, int64_t outer,
                           int64_t n, int64_t inner, int32_t log_softmax, void *stream)
{
    if (outer * n * inner == 0)
        return 0;
    return by_row(outer * inner, n, [&](auto g, int blocks) {
        softmax_kernel<decltype(g)><<<blocks, kRowThreads, 0, (cudaStream_t)stream>>>(
            dtype, x, y, outer, n, inner, log_softmax);
    });
}

extern "C" int opk_layer_norm(const opk_layer_norm_args *a, void *stream)
{
    if (a->rows == 0)
        return 0;
    return by_row(a->rows, a->norm, [&](auto g, int blocks) {
        layer_norm_kernel<decltype(g)>
            <<<blocks, kRowThreads, 0, (cudaStream_t)stream>>>(*a);
    });
}

extern "C" int opk_row_mean(int32_t dtype, const void *x, void *y, int64_t rows,
                            int64_t n, void *stream)
{
    if (rows == 0)
        return 0;
    return by_row(rows, n, [&](auto g, int blocks) {
        row_mean_kernel<decltype(g)>
            <<<blocks, kRowThreads, 0, (cudaStream_t)stream>>>(dtype, x, y, rows, n);
    });
}

extern "C" int opk_gemm_epilogue(float *y, int64_t M, int64_t N, float alpha,
                                 const float *c, int64_t si, int64_t sj, float beta,
                                 void *stream)
{
    if (M * N == 0)
        return 0;
    gemm_epilogue_kernel<<<blocks_for(M * N), kThreads, 0, (cudaStream_t)stream>>>(
        y, M, N, alpha, c, si, sj, beta);
    return launched();
}

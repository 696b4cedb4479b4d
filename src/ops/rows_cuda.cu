// CUDA row kernels of the built-ins (ops_cuda.h): Softmax and LogSoftmax,
// LayerNormalization, row means (GlobalAveragePool), and Gemm's epilogue.
// One block per row (rows grid-strided): each thread folds a strided part
// of the row, then the block combines the parts in shared memory. Sums are
// in double, as on the CPU (the order differs, so results agree to
// rounding, not bit for bit).
#include <math.h>

#include "ops/opk_launch.cuh"

namespace opk
{
namespace
{

constexpr int kRowThreads = 256; // a power of two: the reductions halve it

// Blocks for `rows` rows: one each, up to a cap the loops cover beyond.
int row_blocks(int64_t rows)
{
    return (int)(rows < 1 ? 1 : rows > 65535 * 16 ? 65535 * 16 : rows);
}

// The block's sum of v (every thread gets it). sh has kRowThreads slots.
__device__ double block_sum(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int w = kRowThreads / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    v = sh[0];
    __syncthreads(); // sh is reused by the next reduction
    return v;
}

// The block's largest v, and whether any thread saw a NaN.
__device__ float block_max(float v, int nan, float *sh, int *shn, int *any_nan)
{
    sh[threadIdx.x] = v;
    shn[threadIdx.x] = nan;
    __syncthreads();
    for (int w = kRowThreads / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) {
            float o = sh[threadIdx.x + w];
            sh[threadIdx.x] = o > sh[threadIdx.x] ? o : sh[threadIdx.x];
            shn[threadIdx.x] |= shn[threadIdx.x + w];
        }
        __syncthreads();
    }
    v = sh[0];
    *any_nan = shn[0];
    __syncthreads();
    return v;
}

// softmax.c's rows: the largest value (NaN when the row holds one)
// subtracted, e^(x - max) summed in double, then scaled by 1 / sum (or
// x - max - log(sum) for the log).
__global__ void softmax_kernel(int32_t dtype, const void *x, void *y, int64_t outer,
                               int64_t n, int64_t inner, int32_t log_softmax)
{
    __shared__ float shf[kRowThreads];
    __shared__ int shn[kRowThreads];
    __shared__ double shd[kRowThreads];
    const int64_t rows = outer * inner;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t base = r / inner * n * inner + r % inner;
        float mx = -INFINITY;
        int nan = 0;
        double s = 0.0;
        for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
            float v = load_f(dtype, x, base + k * inner);
            if (v != v)
                nan = 1;
            else if (v > mx)
                mx = v;
        }
        mx = block_max(mx, nan, shf, shn, &nan);
        if (nan)
            mx = NAN;
        for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
            s += (double)expf(load_f(dtype, x, base + k * inner) - mx);
        s = block_sum(s, shd);
        if (log_softmax) {
            const float ls = (float)log(s);
            for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
                const int64_t i = base + k * inner;
                store_f(dtype, y, i, (load_f(dtype, x, i) - mx) - ls);
            }
        } else {
            const float inv = (float)(1.0 / s);
            for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
                const int64_t i = base + k * inner;
                store_f(dtype, y, i, expf(load_f(dtype, x, i) - mx) * inv);
            }
        }
    }
}

// layer_norm.c's rows: the mean, then the variance about it (two passes in
// double), both rounded to float32 and then to the stash dtype, which the
// normalization uses.
__global__ void layer_norm_kernel(opk_layer_norm_args a)
{
    __shared__ double shd[kRowThreads];
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
        const int64_t base = r * a.norm;
        double s = 0.0, q = 0.0;
        float mean, inv;
        if (a.norm == 0) { // no elements: NaN statistics (numpy's mean of nothing)
            if (threadIdx.x == 0) {
                if (a.mean)
                    store_f(a.stash_dtype, a.mean, r, NAN);
                if (a.inv_std)
                    store_f(a.stash_dtype, a.inv_std, r, NAN);
            }
            continue;
        }
        for (int64_t k = threadIdx.x; k < a.norm; k += blockDim.x)
            s += (double)load_f(a.dtype, a.x, base + k);
        s = block_sum(s, shd);
        mean = (float)(s / (double)a.norm);
        for (int64_t k = threadIdx.x; k < a.norm; k += blockDim.x) {
            double d = (double)load_f(a.dtype, a.x, base + k) - (double)mean;
            q += d * d;
        }
        q = block_sum(q, shd);
        inv = (float)(1.0 / sqrt(q / (double)a.norm + (double)a.epsilon));
        if (a.stash_dtype == DT_F16) {
            mean = base_h2f(base_f2h(mean));
            inv = base_h2f(base_f2h(inv));
        } else if (a.stash_dtype == DT_BF16) {
            mean = base_bf2f(base_f2bf(mean));
            inv = base_bf2f(base_f2bf(inv));
        }
        if (threadIdx.x == 0) {
            if (a.mean)
                store_f(a.stash_dtype, a.mean, r, mean);
            if (a.inv_std)
                store_f(a.stash_dtype, a.inv_std, r, inv);
        }
        for (int64_t k = threadIdx.x; k < a.norm; k += blockDim.x) {
            int64_t off[OPK_MAX_IN];
            float v = load_f(a.dtype, a.x, base + k), sc, bi;
            offsets(a.sb, k, off);
            sc = load_f(a.dtype, a.scale, off[0]);
            bi = a.bias ? load_f(a.dtype, a.bias, off[1]) : 0.0f;
            store_f(a.dtype, a.y, base + k, (v - mean) * inv * sc + bi);
        }
    }
}

__global__ void row_mean_kernel(int32_t dtype, const void *x, void *y, int64_t rows,
                                int64_t n)
{
    __shared__ double shd[kRowThreads];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        double s = 0.0;
        for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
            s += (double)load_f(dtype, x, r * n + k);
        s = block_sum(s, shd);
        if (threadIdx.x == 0)
            store_f(dtype, y, r, n > 0 ? (float)(s / (double)n) : NAN);
    }
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
    softmax_kernel<<<row_blocks(outer * inner), kRowThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, y, outer, n, inner, log_softmax);
    return launched();
}

extern "C" int opk_layer_norm(const opk_layer_norm_args *a, void *stream)
{
    if (a->rows == 0)
        return 0;
    layer_norm_kernel<<<row_blocks(a->rows), kRowThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

extern "C" int opk_row_mean(int32_t dtype, const void *x, void *y, int64_t rows,
                            int64_t n, void *stream)
{
    if (rows == 0)
        return 0;
    row_mean_kernel<<<row_blocks(rows), kRowThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, y, rows, n);
    return launched();
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

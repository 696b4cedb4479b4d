// The fused layers' kernels (fuse.h): SkipLayerNormalization, a warp per
// row; ElementwiseChain, a thread per element; MatMul's bias and
// activation epilogue, one pass.
#include <math.h>

#include "ops/cuda/fuse.h"
#include "ops/cuda/launch.cuh"
#include "ops/ew_chain_prog.h"

namespace opk
{
namespace
{

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kThreads / kWarp;

__device__ double warp_sum(double v)
{
    for (int o = kWarp / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Where row r starts in x (ox) and skip (os): r's coordinates in the
// leading dims.
__device__ void sln_row(const opk_skip_ln_args &a, int64_t r, int64_t *ox, int64_t *os)
{
    *ox = *os = 0;
    for (int32_t i = a.rank - 2; i >= 0; i--) {
        *ox += r % a.d[i] * a.sx[i];
        *os += r % a.d[i] * a.ss[i];
        r /= a.d[i];
    }
}

// Element k of a row's sum, in float32 as the CPU adds it: x, then skip,
// then bias.
__device__ float sln_sum(const opk_skip_ln_args &a, int64_t ox, int64_t os, int64_t k)
{
    const int32_t l = a.rank - 1;
    float s = load_f(a.dtype, a.x, ox + k * a.sx[l]) +
              load_f(a.dtype, a.skip, os + k * a.ss[l]);
    if (a.bias)
        s += load_f(a.dtype, a.bias, a.nbias == 1 ? 0 : k);
    return s;
}

// Rows of nothing (h 0) get NaN statistics: 0 / 0. A warp per row (rows are a
// transformer's hidden size: hundreds to a few thousand), the sum recomputed from the
// inputs on each pass (they stay in cache) rather than stored; the statistics as
// layer_norm_kernel's: the mean, then the variance about it, in double, both rounded to
// float32.
__global__ void skip_ln_kernel(opk_skip_ln_args a)
{
    const int lane = (int)(threadIdx.x % kWarp);
    for (int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
         r < a.rows; r += (int64_t)gridDim.x * kRowsPerBlock) {
        double s = 0.0, q = 0.0;
        float mean, inv;
        int64_t ox, os;
        sln_row(a, r, &ox, &os);
        for (int64_t k = lane; k < a.h; k += kWarp)
            s += (double)sln_sum(a, ox, os, k);
        s = warp_sum(s);
        mean = (float)(s / (double)a.h);
        for (int64_t k = lane; k < a.h; k += kWarp) {
            double d = (double)sln_sum(a, ox, os, k) - (double)mean;
            q += d * d;
        }
        q = warp_sum(q);
        inv = (float)(1.0 / sqrt(q / (double)a.h + (double)a.epsilon));
        if (lane == 0) {
            if (a.mean)
                a.mean[r] = mean;
            if (a.inv_std)
                a.inv_std[r] = inv;
        }
        for (int64_t k = lane; k < a.h; k += kWarp) {
            float v = sln_sum(a, ox, os, k);
            float g = load_f(a.dtype, a.gamma, a.ng == 1 ? 0 : k);
            float b = a.beta ? load_f(a.dtype, a.beta, a.nbeta == 1 ? 0 : k) : 0.0f;
            if (a.sum)
                store_f(a.dtype, a.sum, r * a.h + k, v);
            store_f(a.dtype, a.y, r * a.h + k, (v - mean) * inv * g + b);
        }
    }
}

// ops_nn.h's MM_ACT_*.
enum { ACT_NONE, ACT_RELU, ACT_GELU };

__global__ void bias_act_kernel(int32_t dtype, const void *bias, int32_t act, float *y,
                                int64_t rows, int64_t n)
{
    OPK_FOR(i, rows * n)
    {
        float v = y[i];
        if (bias)
            v += load_f(dtype, bias, i % n);
        if (act == ACT_RELU)
            v = v < 0.0f ? 0.0f : v;
        else if (act == ACT_GELU)
            v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        y[i] = v;
    }
}

// A thread per element: the inputs' elements, then the program.
__global__ void ew_chain_kernel(opk_ew_chain_args a)
{
    OPK_FOR(i, a.n)
    {
        int64_t off[OPK_MAX_IN];
        float v[OPK_MAX_IN], acc;
        offsets(a.b, i, off);
        for (int32_t k = 0; k < a.b.nb; k++)
            v[k] = load_f(a.dtype, a.x[k], off[k]);
        acc = v[0];
        for (int32_t s = 0; s < a.nb_steps; s++) {
            const int32_t op = a.prog[s][0], kind = a.prog[s][1] & 3, idx = a.prog[s][2];
            float o;
            if (!EC_IS_BINARY(op)) {
                acc = ec_step(op, acc, 0.0f);
                continue;
            }
            o = kind == 0 ? a.consts[idx] : kind == 1 ? v[idx] : acc;
            acc = a.prog[s][1] & 4 ? ec_step(op, o, acc) : ec_step(op, acc, o);
        }
        store_f(a.dtype, a.y, i, acc);
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_skip_ln(const opk_skip_ln_args *a, void *stream)
{
    int64_t b = (a->rows + kRowsPerBlock - 1) / kRowsPerBlock;
    if (a->rows == 0)
        return 0;
    skip_ln_kernel<<<(int)(b > 65535 * 16 ? 65535 * 16 : b), kThreads, 0,
                     (cudaStream_t)stream>>>(*a);
    return launched();
}

extern "C" int opk_bias_act_rows(int32_t dtype, const void *bias, int32_t act, float *y,
                                 int64_t rows, int64_t n, void *stream)
{
    if (rows * n == 0)
        return 0;
    bias_act_kernel<<<blocks_for(rows * n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, bias, act, y, rows, n);
    return launched();
}

extern "C" int opk_ew_chain(const opk_ew_chain_args *a, void *stream)
{
    if (a->n == 0)
        return 0;
    ew_chain_kernel<<<blocks_for(a->n), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

// CUDA kernels of NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss,
// MeanVarianceNormalization and Det (launch.h). Every element is
// loss_elem.h's function, the CPU kernel's own code (built with
// -fmad=false, CMakeLists.txt, so the double arithmetic rounds as the
// CPU's does): a thread per loss term, per position's log-softmax, per
// matrix; the sums (a reduced loss, a group's mean and variance) are
// block sums in double, in another order than the CPU's serial ones. A
// target outside [0, C) counts as ignored (a kernel cannot fail the run).
#include "ops/cuda/launch.cuh"
#include "ops/loss_elem.h"

namespace opk
{
namespace
{

constexpr int kSumThreads = 256; // a power of two: the reduction halves it

__device__ inline double block_sum(double v, double *sh)
{
    return block_sum_f64<kSumThreads>(v, sh);
}

__global__ void nll_none_kernel(opk_loss_params p, const void *x, const void *target,
                                const void *weight, void *y, int32_t ydt)
{
    OPK_FOR(pos, p.N * p.D)
    {
        double term, w;
        (void)opk_nll_term(&p, x, target, weight, pos, &term, &w);
        opk_float_put(ydt, y, pos, (float)term);
    }
}

// One block: the terms' and the weights' sums, then the reduction.
__global__ void nll_reduce_kernel(opk_loss_params p, const void *x, const void *target,
                                  const void *weight, void *y, int32_t ydt)
{
    __shared__ double sh[kSumThreads];
    const int64_t n = p.N * p.D;
    double s = 0.0, ws = 0.0;
    for (int64_t pos = threadIdx.x; pos < n; pos += kSumThreads) {
        double term, w;
        (void)opk_nll_term(&p, x, target, weight, pos, &term, &w);
        s += term;
        ws += w;
    }
    s = block_sum(s, sh);
    ws = block_sum(ws, sh);
    if (threadIdx.x == 0)
        opk_float_put(ydt, y, 0, (float)opk_loss_reduce(p.reduction, s, ws));
}

__global__ void log_softmax_kernel(opk_loss_params p, const void *x, float *lp, void *y,
                                   int32_t ydt)
{
    OPK_FOR(pos, p.N * p.D)
    {
        opk_log_softmax_at(&p, x, pos, lp, y, ydt);
    }
}

// One group per block iteration: its mean, its variance about the mean,
// then its elements.
__global__ void mvn_kernel(opk_mvn_params p, const void *x, void *y)
{
    __shared__ double sh[kSumThreads];
    for (int64_t g = blockIdx.x; g < p.groups; g += gridDim.x) {
        const int64_t base = opk_mvn_offset(p.nk, p.ksize, p.kstride, g);
        double s = 0.0, q = 0.0;
        for (int64_t j = threadIdx.x; j < p.count; j += kSumThreads)
            s += (double)load_f(p.dtype, x,
                                base + opk_mvn_offset(p.nr, p.rsize, p.rstride, j));
        s = block_sum(s, sh);
        const double mean = s / (double)p.count;
        for (int64_t j = threadIdx.x; j < p.count; j += kSumThreads) {
            const double d =
                (double)load_f(p.dtype, x,
                               base + opk_mvn_offset(p.nr, p.rsize, p.rstride, j)) -
                mean;
            q += d * d;
        }
        q = block_sum(q, sh);
        const double var = q / (double)p.count;
        for (int64_t j = threadIdx.x; j < p.count; j += kSumThreads) {
            const int64_t i = base + opk_mvn_offset(p.nr, p.rsize, p.rstride, j);
            store_f(p.dtype, y, i,
                    (float)opk_mvn_value((double)load_f(p.dtype, x, i), mean, var));
        }
    }
}

__global__ void det_kernel(int32_t dtype, const void *x, void *y, int32_t ydt,
                           int64_t batch, int64_t m, double *ws)
{
    OPK_FOR(i, batch)
    {
        store_f(ydt, y, i,
                (float)opk_det(dtype, x, i * m * m, m, m ? ws + i * m * m : nullptr));
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_nll_loss(const opk_loss_params *p, const void *x, const void *target,
                            const void *weight, void *y, int32_t ydt, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t n = p->N * p->D;
    if (p->reduction == OPK_LOSS_NONE) {
        if (n == 0)
            return 0;
        nll_none_kernel<<<blocks_for(n), kThreads, 0, s>>>(*p, x, target, weight, y, ydt);
    } else {
        nll_reduce_kernel<<<1, kSumThreads, 0, s>>>(*p, x, target, weight, y, ydt);
    }
    return launched();
}

extern "C" int opk_sce_log_softmax(const opk_loss_params *p, const void *x, float *lp,
                                   void *y, int32_t ydt, void *stream)
{
    const int64_t n = p->N * p->D;
    if (n == 0 || p->C == 0)
        return 0;
    log_softmax_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(*p, x, lp, y,
                                                                             ydt);
    return launched();
}

extern "C" int opk_mvn_norm(const opk_mvn_params *p, const void *x, void *y, void *stream)
{
    if (p->groups <= 0 || p->count <= 0)
        return 0;
    mvn_kernel<<<(int)(p->groups < 65535 * 16 ? p->groups : 65535 * 16), kSumThreads, 0,
                 (cudaStream_t)stream>>>(*p, x, y);
    return launched();
}

extern "C" int opk_det_batch(int32_t dtype, const void *x, void *y, int32_t ydt,
                             int64_t batch, int64_t m, void *ws, void *stream)
{
    if (batch == 0)
        return 0;
    det_kernel<<<blocks_for(batch), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, y, ydt, batch, m, (double *)ws);
    return launched();
}

// CUDA normalizations of the built-ins (launch.h): BatchNormalization
// (inference; one thread per element), InstanceNormalization and
// GroupNormalization (a block per image's group: the mean, then the
// variance about it, in double over the block, as norm.c's two passes),
// LpNormalization (a thread per line), each with its fused activation
// (act.cuh) as the value is stored. The float arithmetic is norm.c's,
// operation for operation, in _rn intrinsics so that nvcc fuses none of it
// (the C compiler does not either); the sums in double agree with the
// CPU's to rounding (their order differs).
#include <math.h>

#include "ops/cuda/act.cuh"
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

// ops_views.h's OPV_NORM_* (nn2_cuda.c checks the numbers).
enum { NORM_BATCH, NORM_INSTANCE, NORM_GROUP, NORM_LP };

constexpr int kNormThreads = 256; // a power of two: the reduction halves it

__device__ inline double block_sum(double v, double *sh)
{
    return block_sum_f64<kNormThreads>(v, sh);
}

// (x - mean) * (scale / sqrt(var + eps)) + B, the factor rounded to float
// once as norm.c does.
__global__ void batch_norm_kernel(opk_norm_args a)
{
    const int64_t total = a.N * a.C * a.sp;
    OPK_FOR(e, total)
    {
        const int64_t q = e % a.sp, c = e / a.sp % a.C;
        const int64_t i = a.per == 1 ? c : c * a.sp + q;
        const float sc = load_f(a.pdt[1], a.par[1], i), b = load_f(a.pdt[2], a.par[2], i);
        const float mean = load_f(a.pdt[3], a.par[3], i);
        const float var = load_f(a.pdt[4], a.par[4], i);
        const float f =
            (float)__ddiv_rn((double)sc, sqrt(__dadd_rn((double)var, (double)a.epsilon)));
        const float x = load_f(a.dtype, a.x, e);
        store_f(a.dtype, a.y, e,
                act_apply(a.act, a.act_alpha, a.act_beta,
                          __fadd_rn(__fmul_rn(__fsub_rn(x, mean), f), b)));
    }
}

// One image's group of cg channels of sp positions per block iteration.
__global__ void group_norm_kernel(opk_norm_args a)
{
    __shared__ double sh[kNormThreads];
    const int64_t groups = a.N * a.G, count = a.cg * a.sp;
    for (int64_t gi = blockIdx.x; gi < groups; gi += gridDim.x) {
        const int64_t n = gi / a.G, g = gi % a.G;
        const int64_t base = (n * a.C + g * a.cg) * a.sp;
        double s = 0.0, q = 0.0;
        for (int64_t k = threadIdx.x; k < count; k += kNormThreads)
            s += (double)load_f(a.dtype, a.x, base + k);
        s = block_sum(s, sh);
        const float mean = (float)__ddiv_rn(s, (double)count);
        for (int64_t k = threadIdx.x; k < count; k += kNormThreads) {
            const double d =
                __dsub_rn((double)load_f(a.dtype, a.x, base + k), (double)mean);
            q = __dadd_rn(q, __dmul_rn(d, d));
        }
        q = block_sum(q, sh);
        const float inv = (float)__ddiv_rn(
            1.0, sqrt(__dadd_rn(__ddiv_rn(q, (double)count), (double)a.epsilon)));
        for (int64_t k = threadIdx.x; k < count; k += kNormThreads) {
            const int64_t i = a.per_group ? g : g * a.cg + k / a.sp;
            const float sc = load_f(a.pdt[1], a.par[1], i);
            const float b = load_f(a.pdt[2], a.par[2], i);
            const float x = load_f(a.dtype, a.x, base + k);
            store_f(a.dtype, a.y, base + k,
                    act_apply(
                        a.act, a.act_alpha, a.act_beta,
                        __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(x, mean), inv), sc), b)));
        }
    }
}

// norm.c's lp_row: the norm in double rounded to float, each element
// divided by it in float (0 where the norm is 0).
__global__ void lp_norm_kernel(opk_norm_args a)
{
    const int64_t lines = a.outer * a.inner;
    OPK_FOR(l, lines)
    {
        const int64_t base = l / a.inner * a.n * a.inner + l % a.inner;
        double s = 0.0;
        for (int64_t k = 0; k < a.n; k++) {
            const double v = (double)load_f(a.dtype, a.x, base + k * a.inner);
            s = __dadd_rn(s, a.p == 1 ? fabs(v) : __dmul_rn(v, v));
        }
        const float norm = (float)(a.p == 1 ? s : sqrt(s));
        for (int64_t k = 0; k < a.n; k++) {
            const int64_t i = base + k * a.inner;
            store_f(a.dtype, a.y, i,
                    act_apply(a.act, a.act_alpha, a.act_beta,
                              norm != 0.0f ? __fdiv_rn(load_f(a.dtype, a.x, i), norm)
                                           : 0.0f));
        }
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_norm(const opk_norm_args *a, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (a->kind == NORM_LP) {
        const int64_t lines = a->outer * a->inner;
        if (lines <= 0 || a->n <= 0)
            return 0;
        lp_norm_kernel<<<blocks_for(lines), kThreads, 0, s>>>(*a);
    } else if (a->kind == NORM_BATCH) {
        const int64_t total = a->N * a->C * a->sp;
        if (total <= 0)
            return 0;
        batch_norm_kernel<<<blocks_for(total), kThreads, 0, s>>>(*a);
    } else {
        // Empty groups are skipped (norm.c writes nothing for them: X has
        // no elements there).
        const int64_t groups = a->N * a->G;
        if (groups <= 0 || a->cg * a->sp <= 0)
            return 0;
        group_norm_kernel<<<(int)(groups < 65535 * 16 ? groups : 65535 * 16),
                            kNormThreads, 0, s>>>(*a);
    }
    return launched();
}

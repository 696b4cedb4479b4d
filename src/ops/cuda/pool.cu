// CUDA pools of the built-ins (launch.h): MaxPool (with Indices),
// AveragePool, LpPool, GlobalMaxPool and GlobalLpPool. One thread per
// output element walks its window in the CPU's order (kernel positions
// row-major), with the CPU's arithmetic: pool.c's pool_window, or
// cpu_pool2d_rows' (the `fast` flag) where the CPU runs that. The float
// operations are the _rn intrinsics so that nvcc fuses none of them, as
// the C compiler does not.
#include <math.h>

#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

// ops_views.h's OPV_POOL_* (nn2_cuda.c checks the numbers).
enum { POOL_MAX, POOL_AVG, POOL_LP };

// The kernel positions [*k0, *k1) of a window starting at s0 (dilation d,
// K positions) that fall in [lo, hi): pool.c's pool_span.
__device__ void span(int64_t s0, int64_t d, int64_t K, int64_t lo, int64_t hi,
                     int64_t *k0, int64_t *k1)
{
    int64_t a = s0 >= lo ? 0 : (lo - s0 + d - 1) / d;
    int64_t b = hi - s0 <= 0 ? 0 : (hi - s0 + d - 1) / d;
    *k0 = a;
    *k1 = b < K ? b : K;
    if (*k1 < *k0)
        *k1 = *k0;
}

// Element i of x (a float dtype, or int8 / uint8) as float32: exact.
__device__ float load_any(int32_t dtype, const void *x, int64_t i)
{
    if (dtype == DT_I8)
        return (float)((const int8_t *)x)[i];
    if (dtype == DT_U8)
        return (float)((const uint8_t *)x)[i];
    return load_f(dtype, x, i);
}

// pool_from_f32: an 8-bit maximum is a value of the dtype.
__device__ void store_any(int32_t dtype, void *y, int64_t i, float v)
{
    if (dtype == DT_I8)
        ((int8_t *)y)[i] = (int8_t)v;
    else if (dtype == DT_U8)
        ((uint8_t *)y)[i] = (uint8_t)v;
    else
        store_f(dtype, y, i, v);
}

// NS: the spatial dims, a constant (1 to 3: the per-dim loops unroll and
// the windows' coordinates stay in registers, where indexed by a variable
// they went through local memory), or 0: a.ns's.
template <int NS> __global__ void pool_kernel(opk_pool_args a)
{
    const int32_t ns = NS > 0 ? NS : a.ns;
    const int64_t total = a.planes * a.ovol;
    OPK_FOR(e, total)
    {
        const int64_t pl = e / a.ovol;
        const int64_t base = pl * a.ivol;
        int64_t q = e % a.ovol, istr[OPK_MAX_SP_POOL];
        int64_t start[OPK_MAX_SP_POOL], k0[OPK_MAX_SP_POOL], k1[OPK_MAX_SP_POOL],
            kk[OPK_MAX_SP_POOL];
        int64_t cnt = 1, padded = 1, arg = -1, s = 1;
        int32_t i;
        // The output's coordinates, the window's start and its spans.
#pragma unroll
        for (i = ns - 1; i >= 0; i--) {
            const int64_t o = q % a.out[i];
            q /= a.out[i];
            istr[i] = s;
            s *= a.in[i];
            start[i] = o * a.s[i] - a.pb[i];
        }
#pragma unroll
        for (i = 0; i < ns; i++) {
            int64_t p0, p1;
            span(start[i], a.d[i], a.k[i], 0, a.in[i], &k0[i], &k1[i]);
            cnt *= k1[i] - k0[i];
            // count_include_pad: the positions in the padded input.
            span(start[i], a.d[i], a.k[i], -a.pb[i], a.in[i] + a.pe[i], &p0, &p1);
            padded *= p1 - p0;
            kk[i] = k0[i];
        }
        float r;
        if (cnt == 0) {
            // Nothing inside X: the lowest value (index -1); a mean over
            // the padding (0, or NaN without it); a p-norm of nothing, 0.
            if (a.kind == POOL_MAX)
                r = a.lowest;
            else if (a.kind == POOL_AVG)
                r = a.fast ? (a.with_pad ? __fdiv_rn(0.0f, (float)padded) : NAN)
                           : (float)(0.0 / (double)(a.with_pad ? padded : 0));
            else
                r = 0.0f;
        } else {
            float mx = a.lowest, fsum = 0.0f;
            double acc = 0.0;
            do {
                int64_t off = 0;
#pragma unroll
                for (i = 0; i < ns; i++)
                    off += (start[i] + kk[i] * a.d[i]) * istr[i];
                const float v = load_any(a.dtype, a.x, base + off);
                if (a.kind == POOL_MAX) {
                    // The first maximum (the generic loop takes the first
                    // element whatever it is; the fast one starts from
                    // lowest); a NaN, once met, stays.
                    const int take = a.fast
                                         ? (v > mx || v != v)
                                         : (arg < 0 || (mx == mx && (v > mx || v != v)));
                    if (take) {
                        mx = v;
                        if (!a.fast) {
                            arg = 0;
#pragma unroll
                            for (i = 0; i < ns; i++)
                                arg += (start[i] + kk[i] * a.d[i]) * a.ostr[i];
                        }
                    }
                } else if (a.kind == POOL_AVG) {
                    if (a.fast)
                        fsum = __fadd_rn(fsum, v);
                    else
                        acc = __dadd_rn(acc, (double)v);
                } else {
                    const double m = fabs((double)v);
                    acc = __dadd_rn(acc, a.p == 1   ? m
                                         : a.p == 2 ? __dmul_rn(m, m)
                                                    : pow(m, (double)a.p));
                }
#pragma unroll
                for (i = ns - 1; i >= 0; i--) {
                    if (++kk[i] < k1[i])
                        break;
                    kk[i] = k0[i];
                }
            } while (i >= 0);
            if (a.kind == POOL_MAX)
                r = mx;
            else if (a.kind == POOL_AVG)
                r = a.fast ? __fdiv_rn(fsum, (float)(a.with_pad ? padded : cnt))
                           : (float)__ddiv_rn(acc, (double)(a.with_pad ? padded : cnt));
            else
                r = (float)(a.p == 1   ? acc
                            : a.p == 2 ? sqrt(acc)
                                       : pow(acc, __ddiv_rn(1.0, (double)a.p)));
        }
        store_any(a.dtype, a.y, e, r);
        if (a.idx)
            a.idx[e] = arg < 0 ? -1 : base + arg;
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_pool(const opk_pool_args *a, void *stream)
{
    const int64_t total = a->planes * a->ovol;
    if (total <= 0)
        return 0;
    if (a->ns == 1)
        pool_kernel<1><<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(*a);
    else if (a->ns == 2)
        pool_kernel<2><<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(*a);
    else if (a->ns == 3)
        pool_kernel<3><<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(*a);
    else
        pool_kernel<0><<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

// CUDA Pow of the built-ins (launch.h), pow.c's arithmetic: float32 to a
// float32 power as x * x for 2, x^3 in double for 3, else the power in
// double rounded once; other dtypes in double, stored as ew_store_f64
// does. The CPU's powf (glibc's) is not correctly rounded everywhere: an
// exact tie (3.625^5) or a near one (3^1.125) can round the other way, an
// ulp apart; and the CPU takes 2 and 3 apart only where the exponent is
// one value along its walk's row (else powf), here per element, the same
// values or an ulp apart.
#include <math.h>

#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ double exponent_at(int32_t yt, const void *e, int64_t i)
{
    if (yt == DT_F32 || yt == DT_F16 || yt == DT_BF16)
        return (double)load_f(yt, e, i);
    return (double)opk_int_at(yt, e, i);
}

__global__ void pow_kernel(int32_t xt, int32_t yt, opk_bcast b, const void *x,
                           const void *e, void *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        const float a = load_f(xt, x, off[0]);
        if (xt == DT_F32 && yt == DT_F32) {
            const float p = ((const float *)e)[off[1]];
            float r;
            if (p == 2.0f) {
                r = __fmul_rn(a, a);
            } else if (p == 3.0f) {
                const double v = (double)a;
                r = (float)__dmul_rn(__dmul_rn(v, v), v);
            } else {
                r = (float)pow((double)a, (double)p);
            }
            ((float *)y)[i] = r;
        } else {
            store_f(xt, y, i, (float)pow((double)a, exponent_at(yt, e, off[1])));
        }
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_pow(int32_t xt, int32_t yt, const opk_bcast *b, const void *x,
                       const void *e, void *y, int64_t n, void *stream)
{
    if (n <= 0)
        return 0;
    pow_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(xt, yt, *b, x, e, y,
                                                                     n);
    return launched();
}

// CUDA kernel of ConvTranspose (launch.h): one thread per output element,
// gathering the input elements whose windows cover it (o = i s - pb + k d),
// summed in double over the group's channels and the kernel, plus the bias,
// rounded once: the CPU's GEMM + col2im in another order, with less
// rounding.
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__global__ void conv_transpose_kernel(opk_convt_args a)
{
    OPK_FOR(e, a.n)
    {
        int64_t rest = e, o[OPK_CT_MAX_SP];
        for (int32_t d = a.ns - 1; d >= 0; d--) {
            o[d] = rest % a.out[d];
            rest /= a.out[d];
        }
        const int64_t m = rest % a.M, n = rest / a.M, g = m / a.Mg, mg = m % a.Mg;
        double acc = a.b ? (double)load_f(a.dtype, a.b, m) : 0.0;
        for (int64_t kk = 0; kk < a.kvol; kk++) {
            int64_t kr = kk, xoff = 0, xs = 1;
            int ok = 1;
            for (int32_t d = a.ns - 1; d >= 0 && ok; d--) {
                int64_t k = kr % a.k[d], t;
                kr /= a.k[d];
                t = o[d] + a.pb[d] - k * a.dil[d];
                ok = t >= 0 && t % a.s[d] == 0 && t / a.s[d] < a.in[d];
                xoff += (t / a.s[d]) * xs;
                xs *= a.in[d];
            }
            if (!ok)
                continue;
            for (int64_t c = 0; c < a.Cg; c++) {
                const int64_t ci = g * a.Cg + c;
                const float xv = load_f(a.dtype, a.x, (n * a.C + ci) * a.ivol + xoff);
                const float wv = load_f(a.dtype, a.w, (ci * a.Mg + mg) * a.kvol + kk);
                acc += (double)xv * (double)wv;
            }
        }
        store_f(a.dtype, a.y, e, (float)acc);
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_conv_transpose(const opk_convt_args *a, void *stream)
{
    if (a->n == 0)
        return 0;
    if (a->ns < 1 || a->ns > OPK_CT_MAX_SP)
        return (int)cudaErrorInvalidValue;
    conv_transpose_kernel<<<blocks_for(a->n), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

// CUDA kernels of the integer products (launch.h, opk_qgemm): a thread
// per output element, the int32 sum of (a - a_zp)(b - b_zp) in unsigned
// arithmetic (wrapping as the CPU's), then the bias and the requantization
// in the CPU's float operations (qlinear.h: the multiplier a_scale b_scale /
// y_scale rounded at each step, the clamp, then rint half to even). Padding
// of a convolution holds x's zero point, so its taps are skipped.
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ int32_t q_at(int32_t dtype, const void *p, int64_t i)
{
    return dtype == DT_U8 ? (int32_t)((const uint8_t *)p)[i]
                          : (int32_t)((const int8_t *)p)[i];
}

__device__ int32_t q_zp(int32_t dtype, const void *p, int64_t n, int64_t i)
{
    return p ? q_at(dtype, p, n > 1 ? i : 0) : 0;
}

// Stores output element e of channel c (the per-column or per-channel
// index of b's scale) from its sum.
__device__ void q_store(const opk_qgemm_args &a, int64_t e, int64_t c, uint32_t sum)
{
    if (a.bias)
        sum += (uint32_t)a.bias[c];
    if (a.out == OPK_Q_I32) {
        ((int32_t *)a.y)[e] = (int32_t)sum;
        return;
    }
    const int32_t lo = a.out == OPK_Q_U8 ? 0 : -128, hi = lo + 255;
    const int32_t zp = q_at(a.out == OPK_Q_U8 ? DT_U8 : DT_I8, a.y_zp, 0);
    const float bs = a.b_scale[a.b_nscale > 1 ? c : 0];
    const float mult = __fdiv_rn(__fmul_rn(a.a_scale[0], bs), a.y_scale[0]);
    float f = __fmul_rn((float)(int32_t)sum, mult);
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    f = f >= flo ? f : flo;
    f = f <= fhi ? f : fhi;
    ((uint8_t *)a.y)[e] = (uint8_t)((int32_t)rintf(f) + zp);
}

__global__ void qmatmul_kernel(opk_qgemm_args a)
{
    OPK_FOR(e, a.count)
    {
        const int64_t j = e % a.N, i = e / a.N % a.M, bt = e / a.N / a.M;
        int64_t oa = 0, ob = 0, r = bt;
        for (int32_t k = a.brank - 1; k >= 0; k--) {
            const int64_t c = r % a.bdims[k];
            r /= a.bdims[k];
            oa += c * a.astr[k];
            ob += c * a.bstr[k];
        }
        const int64_t abase = oa * a.M * a.K + i * a.K, bbase = ob * a.K * a.N + j;
        const int32_t za = q_zp(a.a_dtype, a.a_zp, a.a_nzp, i);
        const int32_t zb = q_zp(a.b_dtype, a.b_zp, a.b_nzp, j);
        uint32_t sum = 0;
        for (int64_t k = 0; k < a.K; k++)
            sum += (uint32_t)(q_at(a.a_dtype, a.a, abase + k) - za) *
                   (uint32_t)(q_at(a.b_dtype, a.b, bbase + k * a.N) - zb);
        q_store(a, e, j, sum);
    }
}

__global__ void qconv_kernel(opk_qgemm_args a)
{
    OPK_FOR(e, a.count)
    {
        const int64_t p = e % a.ovol, m = e / a.ovol % a.Mc, n = e / a.ovol / a.Mc;
        const int64_t g = m / a.Mg;
        const int32_t zx = q_zp(a.a_dtype, a.a_zp, 1, 0);
        const int32_t zw = q_zp(a.b_dtype, a.b_zp, a.b_nzp, m);
        int64_t oi[OPK_MAX_SP] = {0}, r = p;
        for (int32_t d = a.ns - 1; d >= 0; d--) {
            oi[d] = r % a.o[d];
            r /= a.o[d];
        }
        uint32_t sum = 0;
        for (int64_t c = 0; c < a.Cg; c++) {
            const int64_t xb = (n * a.C + g * a.Cg + c) * a.ivol;
            const int64_t wb = (m * a.Cg + c) * a.kvol;
            for (int64_t kp = 0; kp < a.kvol; kp++) {
                int64_t rk = kp, pos = 0, stride = 1;
                bool inside = true;
                for (int32_t d = a.ns - 1; d >= 0; d--) {
                    const int64_t kd = rk % a.k[d];
                    rk /= a.k[d];
                    const int64_t q = oi[d] * a.s[d] - a.pb[d] + kd * a.d[d];
                    inside = inside && q >= 0 && q < a.in[d];
                    pos += q * stride;
                    stride *= a.in[d];
                }
                if (inside)
                    sum += (uint32_t)(q_at(a.a_dtype, a.a, xb + pos) - zx) *
                           (uint32_t)(q_at(a.b_dtype, a.b, wb + kp) - zw);
            }
        }
        q_store(a, e, m, sum);
    }
}

} // namespace

extern "C" int opk_qgemm(const opk_qgemm_args *a, void *stream)
{
    if (a->count == 0)
        return 0;
    if (a->conv)
        qconv_kernel<<<blocks_for(a->count), kThreads, 0, (cudaStream_t)stream>>>(*a);
    else
        qmatmul_kernel<<<blocks_for(a->count), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

} // namespace opk

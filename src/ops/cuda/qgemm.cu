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

// The int8 value cuBLASLt multiplies: uint8 v as v - 128 (v ^ 0x80).
__device__ int32_t q_signed(int32_t dtype, int32_t v)
{
    return dtype == DT_U8 ? v - 128 : v;
}

// One block per row of A: its int8 copy and its sum.
__global__ void qlt_rows_kernel(opk_qlt_args a)
{
    __shared__ int32_t part[kThreads];
    const int64_t i = blockIdx.x;
    int32_t sum = 0;
    for (int64_t k = threadIdx.x; k < a.q.K; k += blockDim.x) {
        const int32_t v = q_signed(a.q.a_dtype, q_at(a.q.a_dtype, a.q.a, i * a.q.K + k));
        a.a8[i * a.q.K + k] = (int8_t)v;
        sum += v;
    }
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        a.rowsum[i] = part[0];
}

// B [K x N] to int8 Bt [N x K] through 32 x 32 tiles (both sides
// coalesced), its column sums added atomically (integers: any order gives
// the same sum).
__global__ void qlt_cols_kernel(opk_qlt_args a)
{
    __shared__ int8_t tile[32][33];
    const int64_t k0 = (int64_t)blockIdx.y * 32, n0 = (int64_t)blockIdx.x * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int r = ty; r < 32; r += blockDim.y) {
        const int64_t k = k0 + r, n = n0 + tx;
        int32_t v = 0;
        if (k < a.q.K && n < a.q.N)
            v = q_signed(a.q.b_dtype, q_at(a.q.b_dtype, a.q.b, k * a.q.N + n));
        tile[r][tx] = (int8_t)v;
    }
    __syncthreads();
    for (int r = ty; r < 32; r += blockDim.y) {
        const int64_t n = n0 + r, k = k0 + tx;
        if (n < a.q.N && k < a.q.K)
            a.b8t[n * a.q.K + k] = tile[tx][r];
    }
    if (ty == 0 && n0 + tx < a.q.N) {
        int32_t sum = 0;
        for (int r = 0; r < 32; r++)
            sum += tile[r][tx];
        atomicAdd(&a.colsum[n0 + tx], sum);
    }
}

__global__ void qlt_epilogue_kernel(opk_qlt_args a)
{
    OPK_FOR(e, a.rc * a.q.N)
    {
        const int64_t j = e % a.q.N, i = a.r0 + e / a.q.N;
        const uint32_t alpha = (uint32_t)q_signed(
            a.q.a_dtype, q_zp(a.q.a_dtype, a.q.a_zp, a.q.a_nzp, i % a.q.M));
        const uint32_t beta =
            (uint32_t)q_signed(a.q.b_dtype, q_zp(a.q.b_dtype, a.q.b_zp, a.q.b_nzp, j));
        // A zero point of 0 on a uint8 side is alpha = -128: the terms stay.
        uint32_t sum = (uint32_t)a.c32[e] - beta * (uint32_t)a.rowsum[i] -
                       alpha * (uint32_t)a.colsum[j] + (uint32_t)a.q.K * alpha * beta;
        q_store(a.q, i * a.q.N + j, j, sum);
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

extern "C" int opk_qlt_prepare(const opk_qlt_args *a, void *stream)
{
    const cudaStream_t s = (cudaStream_t)stream;
    if (a->rows == 0 || a->q.N == 0 || a->q.K == 0)
        return 0;
    if (cudaMemsetAsync(a->colsum, 0, sizeof(int32_t) * (size_t)a->q.N, s) != cudaSuccess)
        return launched();
    // rows <= 2^31 - 1 (qgemm_cuda.c checks: cuBLASLt's own limit).
    qlt_rows_kernel<<<(unsigned)a->rows, kThreads, 0, s>>>(*a);
    const dim3 grid((unsigned)((a->q.N + 31) / 32), (unsigned)((a->q.K + 31) / 32));
    qlt_cols_kernel<<<grid, dim3(32, 8), 0, s>>>(*a);
    return launched();
}

extern "C" int opk_qlt_epilogue(const opk_qlt_args *a, void *stream)
{
    if (a->rc == 0 || a->q.N == 0)
        return 0;
    qlt_epilogue_kernel<<<blocks_for(a->rc * a->q.N), kThreads, 0,
                          (cudaStream_t)stream>>>(*a);
    return launched();
}

} // namespace opk

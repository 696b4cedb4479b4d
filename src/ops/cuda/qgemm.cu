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

// DynamicQuantizeMatMul's and MatMulIntegerToFloat's float output from
// the int32 sums: sum times a_scale b_scale[j] (their float32 product, as
// the unfused Mul computes it), plus bias[j], then the activation (1 Relu,
// 2 Gelu: x / 2 (1 + erf(x / sqrt 2))).
__global__ void qmf_epilogue_kernel(const int32_t *c32, const float *a_scale,
                                    const float *b_scale, int64_t b_nscale,
                                    const float *bias, int32_t act, float *y,
                                    int64_t count, int64_t N)
{
    OPK_FOR(e, count)
    {
        const int64_t j = e % N;
        const float m = __fmul_rn(a_scale[0], b_scale[b_nscale > 1 ? j : 0]);
        const float f = (float)c32[e];
        float v = bias ? __fmaf_rn(f, m, bias[j]) : __fmul_rn(f, m);
        if (act == 1)
            v = v < 0.0f ? 0.0f : v;
        else if (act == 2)
            v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        y[e] = v;
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

// ---- ConvInteger and QLinearConv as an implicit GEMM on the tensor cores ----
//
// Rows are output pixels (all images: n * ovol + p), columns a group's
// output channels, K = Cg * kvol its taps in W's order (c, then the kernel
// position), so that W [M, Cg, kvol] is already each column's K bytes in a
// row: read as it is, no packing. A block computes 64 rows x 32 columns;
// each step of 32 taps gathers A (im2col of x on the fly) and B into shared
// memory as signed bytes (uint8 xor 0x80, its zero point less 128, as
// qlt's path) and its four warps multiply with mma.sync m16n8k32 s8
// (sm_80 and later), 16 rows x 4 n8 tiles each, int32 accumulators.
//
// The zero points then come in through sums, exact mod 2^32 as the CPU's
// wrapping sum: with a the gathered bytes (x's zero point zx where a tap
// falls in the padding, 0 past K), b W's,
//   sum (a - zx)(b - zw) = P - zw RA - zx CB + K zx zw,
// P the product, RA the row's sum of a, CB the column's sum of b (both
// with dp4a as they are gathered). A padding tap gives a - zx = 0: it adds
// nothing, as on the CPU. The store is q_store, the plain kernel's.
constexpr int kQcRows = 64, kQcCols = 32, kQcK = 32, kQcThreads = 128;
// Words per tile row in shared memory: 8 of data and 4 of padding, so that
// the fragment reads (8 rows x 4 words) and the 16-byte stores of a quarter
// warp (8 rows) touch 32 different banks.
constexpr int kQcStride = 12;

// The byte at x[i] (unsigned, flipped to signed by `flip`).
__device__ uint32_t qc_byte(const uint8_t *p, int64_t i, uint32_t flip)
{
    return (uint32_t)__ldg(p + i) ^ flip;
}

__global__ void __launch_bounds__(kQcThreads) qconv_mma_kernel(opk_qgemm_args a)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __shared__ __align__(16) uint32_t sa[kQcRows * kQcStride];
    __shared__ __align__(16) uint32_t sb[kQcCols * kQcStride];
    __shared__ int64_t tap_off[kQcK]; // channel offset in x; -1 past K
    __shared__ int32_t tap_h[kQcK], tap_w[kQcK];
    __shared__ int32_t rsum[2][kQcRows], csum[kQcCols];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int gid = lane >> 2, tig = lane & 3;
    // One spatial dim is the second of two with a height of 1.
    const int two = a.ns == 2;
    const int32_t H = two ? (int32_t)a.in[0] : 1, W = (int32_t)a.in[two];
    const int32_t KW = (int32_t)a.k[two], OW = (int32_t)a.o[two];
    const int32_t dh = two ? (int32_t)a.d[0] : 1, dw = (int32_t)a.d[two];
    const int64_t K = a.Cg * a.kvol, rows = a.n_img * a.ovol;
    const int64_t g = blockIdx.z, col0 = (int64_t)blockIdx.y * kQcCols;
    const int64_t row0 = (int64_t)blockIdx.x * kQcRows;
    const int32_t zx = q_signed(a.a_dtype, q_zp(a.a_dtype, a.a_zp, 1, 0));
    const uint32_t xflip = a.a_dtype == DT_U8 ? 0x80u : 0u;
    const uint32_t wflip = a.b_dtype == DT_U8 ? 0x80u : 0u;
    const uint8_t *x = (const uint8_t *)a.a, *w = (const uint8_t *)a.b;

    // This thread's row of A (one pixel) and half of each step's 32 taps.
    const int ar = t & (kQcRows - 1), ahalf = t >> 6;
    const int64_t prow = row0 + ar;
    const bool arow_ok = prow < rows;
    int32_t ih0 = 0, iw0 = 0;
    int64_t xbase = 0;
    if (arow_ok) {
        const int64_t n = prow / a.ovol, p = prow % a.ovol;
        const int64_t oh = p / OW, ow = p % OW;
        ih0 = two ? (int32_t)(oh * a.s[0] - a.pb[0]) : 0;
        iw0 = (int32_t)(ow * a.s[two] - a.pb[two]);
        xbase = (n * a.C + g * a.Cg) * a.ivol;
    }
    // This thread's column of B (one output channel) and quarter of a step.
    const int bc = t >> 2, bq = t & 3;
    const bool bcol_ok = col0 + bc < a.Mg;
    const int64_t wbase = (g * a.Mg + col0 + bc) * K;

    int32_t acc[4][4] = {};
    int32_t rs = 0, cs = 0;
    for (int64_t k0 = 0; k0 < K; k0 += kQcK) {
        if (t < kQcK) {
            const int64_t k = k0 + t;
            if (k < K) {
                const int64_t c = k / a.kvol, kp = k % a.kvol;
                tap_off[t] = c * a.ivol;
                tap_h[t] = (int32_t)(kp / KW) * dh;
                tap_w[t] = (int32_t)(kp % KW) * dw;
            } else {
                tap_off[t] = -1;
            }
        }
        __syncthreads();
        {
            uint32_t v[4];
            for (int j = 0; j < 4; j++) {
                uint32_t word = 0;
                for (int b = 0; b < 4; b++) {
                    const int kk = ahalf * 16 + j * 4 + b;
                    const int64_t off = tap_off[kk];
                    uint32_t byte = 0;
                    if (arow_ok && off >= 0) {
                        const int32_t ih = ih0 + tap_h[kk], iw = iw0 + tap_w[kk];
                        byte = ih >= 0 && ih < H && iw >= 0 && iw < W
                                   ? qc_byte(x, xbase + off + (int64_t)ih * W + iw, xflip)
                                   : (uint32_t)zx & 0xffu;
                    }
                    word |= byte << (8 * b);
                }
                v[j] = word;
                rs = __dp4a((int)word, 0x01010101, rs);
            }
            *(uint4 *)&sa[ar * kQcStride + ahalf * 4] =
                make_uint4(v[0], v[1], v[2], v[3]);
        }
        {
            uint32_t v[2];
            for (int j = 0; j < 2; j++) {
                uint32_t word = 0;
                for (int b = 0; b < 4; b++) {
                    const int64_t k = k0 + bq * 8 + j * 4 + b;
                    if (bcol_ok && k < K)
                        word |= qc_byte(w, wbase + k, wflip) << (8 * b);
                }
                v[j] = word;
                cs = __dp4a((int)word, 0x01010101, cs);
            }
            *(uint2 *)&sb[bc * kQcStride + bq * 2] = make_uint2(v[0], v[1]);
        }
        __syncthreads();
        {
            const uint32_t *ra = &sa[(warp * 16 + gid) * kQcStride + tig];
            const uint32_t a0 = ra[0], a1 = ra[8 * kQcStride], a2 = ra[4],
                           a3 = ra[8 * kQcStride + 4];
            for (int nt = 0; nt < 4; nt++) {
                const uint32_t *rb = &sb[(nt * 8 + gid) * kQcStride + tig];
                asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+r"(acc[nt][0]), "+r"(acc[nt][1]), "+r"(acc[nt][2]),
                               "+r"(acc[nt][3])
                             : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(rb[0]),
                               "r"(rb[4]));
            }
        }
        // The next step's taps and tiles overwrite what this one read.
        __syncthreads();
    }
    // A column's four quarters are four neighbouring lanes of one warp.
    cs += __shfl_xor_sync(0xffffffffu, cs, 1);
    cs += __shfl_xor_sync(0xffffffffu, cs, 2);
    rsum[ahalf][ar] = rs;
    if (bq == 0)
        csum[bc] = cs;
    __syncthreads();
    for (int nt = 0; nt < 4; nt++)
        for (int i = 0; i < 4; i++) {
            const int rl = warp * 16 + gid + (i >= 2 ? 8 : 0);
            const int cl = nt * 8 + tig * 2 + (i & 1);
            const int64_t r = row0 + rl, ch = col0 + cl;
            if (r >= rows || ch >= a.Mg)
                continue;
            const int64_t m = g * a.Mg + ch, n = r / a.ovol, p = r % a.ovol;
            const uint32_t zw =
                (uint32_t)q_signed(a.b_dtype, q_zp(a.b_dtype, a.b_zp, a.b_nzp, m));
            const uint32_t ra = (uint32_t)(rsum[0][rl] + rsum[1][rl]);
            const uint32_t sum = (uint32_t)acc[nt][i] - zw * ra -
                                 (uint32_t)zx * (uint32_t)csum[cl] +
                                 (uint32_t)K * (uint32_t)zx * zw;
            q_store(a, (n * a.Mc + m) * a.ovol + p, m, sum);
        }
#else
    // Never launched: opk_qconv_mma_ok says no below sm_80.
    __trap();
#endif
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

extern "C" int opk_qmf_epilogue(const int32_t *c32, const float *a_scale,
                                const float *b_scale, int64_t b_nscale, const float *bias,
                                int32_t act, float *y, int64_t rows, int64_t N,
                                void *stream)
{
    if (rows == 0 || N == 0)
        return 0;
    qmf_epilogue_kernel<<<blocks_for(rows * N), kThreads, 0, (cudaStream_t)stream>>>(
        c32, a_scale, b_scale, b_nscale, bias, act, y, rows * N, N);
    return launched();
}

extern "C" int opk_qconv_mma_ok(void)
{
    // The code the driver loaded for this device: compiled for a virtual
    // architecture below compute_80 (an older one in
    // CMAKE_CUDA_ARCHITECTURES), the kernel is a stub.
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, qconv_mma_kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return fa.ptxVersion ? fa.ptxVersion >= 80 : fa.binaryVersion >= 80;
}

extern "C" int opk_qconv_mma(const opk_qgemm_args *a, void *stream)
{
    const int64_t rows = a->n_img * a->ovol;
    if (rows == 0 || a->Mg == 0 || a->C == 0)
        return 0;
    // qgemm_cuda.c checked the grid: rows / 64, Mg / 32 and the groups fit.
    const dim3 grid((unsigned)((rows + kQcRows - 1) / kQcRows),
                    (unsigned)((a->Mg + kQcCols - 1) / kQcCols),
                    (unsigned)(a->Mc / a->Mg));
    qconv_mma_kernel<<<grid, kQcThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

} // namespace opk

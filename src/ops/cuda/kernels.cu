// CUDA kernels of the built-in ops (launch.h): elementwise, permutation,
// einsum and convolution. Grids are sized with a grid-stride loop so any
// element count fits; every index is 64-bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "ops/cuda/act.cuh"
#include "ops/cuda/launch.h"
extern "C" {
#include "ops/op_act.h"
}

namespace
{

// plugin.h's prt_dtype values, restated for device code.
enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2, DT_I8 = 3, DT_I32 = 5, DT_I64 = 6 };

constexpr int kThreads = 256;

int blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return (int)(b > 65535 * 16 ? 65535 * 16 : b);
}

template <typename T> __global__ void relu_kernel(const T *x, T *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        T v = x[i];
        y[i] = v < T(0) ? T(0) : v;
    }
}

// 16-bit floats by their bits: negative, non-zero, not NaN becomes +0.
__global__ void relu16_kernel(const uint16_t *x, uint16_t *y, int64_t n, uint16_t inf)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint16_t h = x[i], mag = (uint16_t)(h & 0x7FFFu);
        y[i] = (h & 0x8000u) && mag != 0 && mag <= inf ? (uint16_t)0 : h;
    }
}

struct perm_args {
    int32_t rank;
    int64_t dims[OPK_MAX_RANK];
    int64_t stride[OPK_MAX_RANK];
};

template <typename T>
__global__ void transpose_kernel(const T *x, T *y, perm_args p, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t rest = i, src = 0;
        for (int32_t k = p.rank - 1; k >= 0; k--) {
            int64_t c = rest % p.dims[k];
            rest /= p.dims[k];
            src += c * p.stride[k];
        }
        y[i] = x[src];
    }
}

__device__ double load_d(const void *p, int32_t dtype, int64_t i)
{
    return dtype == DT_F32 ? (double)((const float *)p)[i]
                           : (double)__half2float(((const __half *)p)[i]);
}

__device__ int64_t load_i(const void *p, int32_t dtype, int64_t i)
{
    return dtype == DT_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

__device__ void einsum_store(const opk_einsum_args &a, int64_t o, double fs, int64_t is)
{
    switch (a.dtype) {
    case DT_F32:
        ((float *)a.y)[o] = (float)fs;
        break;
    case DT_F16:
        ((__half *)a.y)[o] = __float2half((float)fs);
        break;
    case DT_I32:
        ((int32_t *)a.y)[o] = (int32_t)is;
        break;
    default:
        ((int64_t *)a.y)[o] = is;
        break;
    }
}

// off[k] = from[k] (0 where from is NULL) plus operand k's offset of the
// letters hi down to lo at their index in idx (letter lo varying slowest).
__device__ void einsum_offsets(const opk_einsum_args &a, int32_t hi, int32_t lo,
                               int64_t idx, const int64_t *from, int64_t *off)
{
    for (int32_t k = 0; k < a.nb_ops; k++)
        off[k] = from ? from[k] : 0;
    for (int32_t l = hi; l >= lo; l--) {
        int64_t c = idx % a.size[l];
        idx /= a.size[l];
        for (int32_t k = 0; k < a.nb_ops; k++)
            off[k] += c * a.stride[k][l];
    }
}

// Adds the product of the operands at off[k] + t * step[k] to *fs or *is
// (integers wrap, as the CPU's int64 products).
__device__ void einsum_term(const opk_einsum_args &a, int is_float, const int64_t *off,
                            const int64_t *step, int64_t t, double *fs, uint64_t *is)
{
    if (is_float) {
        double p = 1;
        for (int32_t k = 0; k < a.nb_ops; k++)
            p *= load_d(a.x[k], a.dtype, off[k] + t * step[k]);
        *fs += p;
    } else {
        uint64_t p = 1;
        for (int32_t k = 0; k < a.nb_ops; k++)
            p *= (uint64_t)load_i(a.x[k], a.dtype, off[k] + t * step[k]);
        *is += p;
    }
}

__global__ void einsum_kernel(opk_einsum_args a)
{
    int is_float = a.dtype == DT_F32 || a.dtype == DT_F16;
    // The last summed letter (none: one term of step 0) and its strides.
    const int32_t last = a.nb_letters - 1;
    const int summed = a.nb_letters > a.out_rank;
    const int64_t inner = summed ? a.size[last] : 1;
    const int64_t outer = inner > 0 ? a.sum_count / inner : 0;
    int64_t step[OPK_MAX_OPERANDS];
    for (int32_t k = 0; k < a.nb_ops; k++)
        step[k] = summed ? a.stride[k][last] : 0;
    for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < a.out_count;
         o += (int64_t)gridDim.x * blockDim.x) {
        int64_t base[OPK_MAX_OPERANDS];
        double fs = 0;
        uint64_t is = 0;
        einsum_offsets(a, a.out_rank - 1, 0, o, NULL, base);
        // The summed letters in the CPU's order (the last fastest): the
        // last one's run a plain loop, the others' index found once a run
        // (a division per letter per term was most of a long sum's time).
        for (int64_t s0 = 0; s0 < outer; s0++) {
            int64_t off[OPK_MAX_OPERANDS];
            einsum_offsets(a, last - 1, a.out_rank, s0, base, off);
            for (int64_t t = 0; t < inner; t++)
                einsum_term(a, is_float, off, step, t, &fs, &is);
        }
        einsum_store(a, o, fs, (int64_t)is);
    }
}

// Few outputs, long sums (qa_custom_hardmax's ij,ij->i: 8 outputs of 64
// terms): a warp per output, its lanes over the terms 32 apart, the
// partial sums added by shuffles. A thread's serial loop of dependent
// loads was 26 µs there. Integer sums wrap as the CPU's; double sums
// are the per-thread kernel's terms added in another order (each product
// of two floats is exact in double; only the final rounding could differ,
// which the coverage tolerance allows).
__global__ void einsum_warp_kernel(opk_einsum_args a)
{
    const int is_float = a.dtype == DT_F32 || a.dtype == DT_F16;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    const int64_t step[OPK_MAX_OPERANDS] = {0};
    for (int64_t o = blockIdx.x * (int64_t)(blockDim.x >> 5) + (threadIdx.x >> 5);
         o < a.out_count; o += warps) {
        int64_t base[OPK_MAX_OPERANDS];
        double fs = 0;
        uint64_t is = 0;
        einsum_offsets(a, a.out_rank - 1, 0, o, NULL, base);
        for (int64_t s0 = lane; s0 < a.sum_count; s0 += 32) {
            int64_t off[OPK_MAX_OPERANDS];
            einsum_offsets(a, a.nb_letters - 1, a.out_rank, s0, base, off);
            einsum_term(a, is_float, off, step, 0, &fs, &is);
        }
        for (int d = 16; d > 0; d >>= 1) {
            fs += __shfl_down_sync(0xffffffffu, fs, d);
            is += __shfl_down_sync(0xffffffffu, is, d);
        }
        if (lane == 0)
            einsum_store(a, o, fs, (int64_t)is);
    }
}

__device__ float load_f(const void *p, int32_t dtype, int64_t i)
{
    return dtype == DT_F32 ? ((const float *)p)[i] : __half2float(((const __half *)p)[i]);
}

// Conv's fused activation (act.cuh).
__device__ float conv_act(const opk_conv_args &a, float x)
{
    return opk::act_apply(a.act, a.act_alpha, a.act_beta, x);
}

// What a convolution stores at y[idx] from its sum with the bias, v: the
// residual z[idx] added where there is one, then the activation. Float16:
// v rounded first (the Conv layer's output) and the sum again (the Add
// layer's), so the values are the unfused layers'.
__device__ float conv_out(const opk_conv_args &a, float v, int64_t idx)
{
    if (a.z) {
        if (a.dtype != DT_F32)
            v = __half2float(__float2half_rn(v));
        v += load_f(a.z, a.dtype, idx);
        if (a.dtype != DT_F32)
            v = __half2float(__float2half_rn(v));
    }
    return conv_act(a, v);
}

// One thread per output element (n, m, spatial position).
__global__ void conv_kernel(opk_conv_args a)
{
    int64_t total = a.N * a.M * a.ovol;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t opos = idx % a.ovol, nm = idx / a.ovol;
        int64_t m = nm % a.M, n = nm / a.M, g = m / a.Mg;
        int64_t oc[OPK_MAX_SP] = {0, 0, 0};
        int64_t r = opos;
        float acc = a.b ? load_f(a.b, a.dtype, m) : 0.0f;
        for (int32_t i = a.ns - 1; i >= 0; i--) {
            oc[i] = r % a.out[i];
            r /= a.out[i];
        }
        for (int64_t c = 0; c < a.Cg; c++) {
            int64_t xbase = (n * a.C + g * a.Cg + c) * a.ivol;
            int64_t wbase = (m * a.Cg + c) * a.kvol;
            for (int64_t kp = 0; kp < a.kvol; kp++) {
                int64_t kr = kp, ipos = 0, istride = 1;
                int inside = 1;
                int64_t kc[OPK_MAX_SP] = {0, 0, 0};
                for (int32_t i = a.ns - 1; i >= 0; i--) {
                    kc[i] = kr % a.k[i];
                    kr /= a.k[i];
                }
                for (int32_t i = a.ns - 1; i >= 0; i--) {
                    int64_t p = oc[i] * a.s[i] + kc[i] * a.d[i] - a.pb[i];
                    if (p < 0 || p >= a.in[i])
                        inside = 0;
                    ipos += p * istride;
                    istride *= a.in[i];
                }
                if (inside)
                    acc += load_f(a.x, a.dtype, xbase + ipos) *
                           load_f(a.w, a.dtype, wbase + kp);
            }
        }
        acc = conv_out(a, acc, idx);
        if (a.dtype == DT_F32)
            ((float *)a.y)[idx] = acc;
        else
            ((__half *)a.y)[idx] = __float2half(acc);
    }
}

// Two spatial dims (most convolutions, depthwise ones included): the same
// sums in the same order as conv_kernel (channels, then kernel rows, then
// columns), with the window's rows and columns clipped once instead of a
// division and a bounds test per tap. A plane of the output (an image's
// output channel) per blockIdx.y, its positions over x, so consecutive
// threads read consecutive columns and a thread divides once for its
// position. I: the index type, 32-bit when every offset fits (a 64-bit
// division is tens of instructions); D1: dilation 1, whose clipping needs
// no division.
template <typename I, bool D1> __global__ void conv2d_kernel(opk_conv_args a)
{
    const I OW = (I)a.out[1], IH = (I)a.in[0], IW = (I)a.in[1];
    const I KH = (I)a.k[0], KW = (I)a.k[1];
    const I M = (I)a.M, Mg = (I)a.Mg, Cg = (I)a.Cg, C = (I)a.C;
    const I ovol = (I)a.ovol, ivol = (I)a.ivol, kvol = (I)a.kvol, planes = (I)(a.N * a.M);
    const I sh = (I)a.s[0], sw = (I)a.s[1], dh = D1 ? 1 : (I)a.d[0],
            dw = D1 ? 1 : (I)a.d[1];
    const I ph = (I)a.pb[0], pw = (I)a.pb[1];
    for (I plane = blockIdx.y; plane < planes; plane += (I)gridDim.y) {
        const I m = plane % M, n = plane / M, g = m / Mg;
        const float bias = a.b ? load_f(a.b, a.dtype, m) : 0.0f;
        for (I p = blockIdx.x * (I)blockDim.x + threadIdx.x; p < ovol;
             p += (I)gridDim.x * (I)blockDim.x) {
            const I oh = p / OW, ow = p - oh * OW;
            const I h0 = oh * sh - ph, w0 = ow * sw - pw;
            // The taps inside the input: kh in [kh0, kh1), kw in [kw0, kw1).
            I kh0, kw0, kh1, kw1;
            if (D1) {
                kh0 = h0 < 0 ? -h0 : 0;
                kw0 = w0 < 0 ? -w0 : 0;
                kh1 = IH - h0;
                kw1 = IW - w0;
            } else {
                kh0 = h0 < 0 ? (-h0 + dh - 1) / dh : 0;
                kw0 = w0 < 0 ? (-w0 + dw - 1) / dw : 0;
                kh1 = h0 >= IH ? 0 : (IH - h0 + dh - 1) / dh;
                kw1 = w0 >= IW ? 0 : (IW - w0 + dw - 1) / dw;
            }
            kh1 = kh1 < KH ? kh1 : KH;
            kw1 = kw1 < KW ? kw1 : KW;
            float acc = bias;
            for (I c = 0; c < Cg; c++) {
                const I xbase = (n * C + g * Cg + c) * ivol;
                const I wbase = (m * Cg + c) * kvol;
                for (I kh = kh0; kh < kh1; kh++) {
                    const I xrow = xbase + (h0 + kh * dh) * IW + w0;
                    const I wrow = wbase + kh * KW;
                    for (I kw = kw0; kw < kw1; kw++)
                        acc += load_f(a.x, a.dtype, xrow + kw * dw) *
                               load_f(a.w, a.dtype, wrow + kw);
                }
            }
            const I idx = plane * ovol + p;
            acc = conv_out(a, acc, (int64_t)idx);
            if (a.dtype == DT_F32)
                ((float *)a.y)[idx] = acc;
            else
                ((__half *)a.y)[idx] = __float2half(acc);
        }
    }
}

// One group (dense convolutions: a stem over 3 channels, 3x3 layers): a
// thread computes OPK_CONV_MB output channels at one position, so each
// input tap is read once for all of them. Each channel's sum is conv2d's,
// in conv2d's order.
#define OPK_CONV_MB 8
template <typename I, bool D1> __global__ void conv2d_mb_kernel(opk_conv_args a)
{
    const I OW = (I)a.out[1], IH = (I)a.in[0], IW = (I)a.in[1];
    const I KH = (I)a.k[0], KW = (I)a.k[1];
    const I M = (I)a.M, C = (I)a.C, mblocks = (M + OPK_CONV_MB - 1) / OPK_CONV_MB;
    const I ovol = (I)a.ovol, ivol = (I)a.ivol, kvol = (I)a.kvol;
    const I planes = (I)a.N * mblocks, ck = C * kvol;
    const I sh = (I)a.s[0], sw = (I)a.s[1], dh = D1 ? 1 : (I)a.d[0],
            dw = D1 ? 1 : (I)a.d[1];
    const I ph = (I)a.pb[0], pw = (I)a.pb[1];
    for (I plane = blockIdx.y; plane < planes; plane += (I)gridDim.y) {
        const I m0 = (plane % mblocks) * OPK_CONV_MB, n = plane / mblocks;
        const I nm = M - m0 < OPK_CONV_MB ? M - m0 : OPK_CONV_MB;
        for (I p = blockIdx.x * (I)blockDim.x + threadIdx.x; p < ovol;
             p += (I)gridDim.x * (I)blockDim.x) {
            const I oh = p / OW, ow = p - oh * OW;
            const I h0 = oh * sh - ph, w0 = ow * sw - pw;
            I kh0, kw0, kh1, kw1;
            float acc[OPK_CONV_MB];
            if (D1) {
                kh0 = h0 < 0 ? -h0 : 0;
                kw0 = w0 < 0 ? -w0 : 0;
                kh1 = IH - h0;
                kw1 = IW - w0;
            } else {
                kh0 = h0 < 0 ? (-h0 + dh - 1) / dh : 0;
                kw0 = w0 < 0 ? (-w0 + dw - 1) / dw : 0;
                kh1 = h0 >= IH ? 0 : (IH - h0 + dh - 1) / dh;
                kw1 = w0 >= IW ? 0 : (IW - w0 + dw - 1) / dw;
            }
            kh1 = kh1 < KH ? kh1 : KH;
            kw1 = kw1 < KW ? kw1 : KW;
#pragma unroll
            for (int j = 0; j < OPK_CONV_MB; j++)
                acc[j] = a.b && j < nm ? load_f(a.b, a.dtype, m0 + j) : 0.0f;
            for (I c = 0; c < C; c++) {
                const I xbase = (n * C + c) * ivol;
                const I wbase = m0 * ck + c * kvol;
                for (I kh = kh0; kh < kh1; kh++) {
                    const I xrow = xbase + (h0 + kh * dh) * IW + w0;
                    const I wrow = wbase + kh * KW;
                    for (I kw = kw0; kw < kw1; kw++) {
                        const float xv = load_f(a.x, a.dtype, xrow + kw * dw);
#pragma unroll
                        for (int j = 0; j < OPK_CONV_MB; j++)
                            if (j < nm)
                                acc[j] += xv * load_f(a.w, a.dtype, wrow + j * ck + kw);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < OPK_CONV_MB; j++)
                if (j < nm) {
                    const I idx = (n * M + m0 + j) * ovol + p;
                    const float v = conv_out(a, acc[j], (int64_t)idx);
                    if (a.dtype == DT_F32)
                        ((float *)a.y)[idx] = v;
                    else
                        ((__half *)a.y)[idx] = __float2half(v);
                }
        }
    }
}

// A 2-D convolution as an implicit GEMM per group: Y[m, q] = sum_k W[m, k]
// X[k, q], m an output channel of the group, k = (c, kh, kw) over its Cg
// input channels and the kernel's taps, q = (n, oh, ow) over the images'
// output positions. A block of 256 threads computes a 64 x 64 tile of Y
// through shared memory in steps of 16 k, each thread 4 x 4 outputs; X's
// columns are gathered from the input as they are loaded (zero in the
// padding), so nothing is unfolded in memory. Float32 sums, the bias and
// activation at the store.
constexpr int kGM = 64, kGN = 64, kGK = 16;

__global__ void __launch_bounds__(256) conv2d_gemm_kernel(opk_conv_args a)
{
    __shared__ __align__(16) float ws[kGK][kGM + 4];
    __shared__ __align__(16) float xs[kGK][kGN + 4];
    const int t = threadIdx.x;
    const int Mg = (int)a.Mg, Cg = (int)a.Cg, KW = (int)a.k[1], kvol = (int)a.kvol;
    const int OW = (int)a.out[1], IH = (int)a.in[0], IW = (int)a.in[1];
    const int sh = (int)a.s[0], sw = (int)a.s[1], dh = (int)a.d[0], dw = (int)a.d[1];
    const int Kt = Cg * kvol;
    const int64_t ovol = a.ovol, Q = a.N * a.ovol;
    const int g = blockIdx.z, m0 = blockIdx.y * kGM;
    const int64_t q0 = (int64_t)blockIdx.x * kGN;
    // The X loader: column qq of the tile, rows kr + 4 i.
    const int qq = t & 63, kr = t >> 6;
    const int64_t q = q0 + qq;
    const bool qv = q < Q;
    const int64_t n = qv ? q / ovol : 0;
    const int p = qv ? (int)(q - n * ovol) : 0;
    const int oh = p / OW, ow = p - oh * OW;
    const int h0 = oh * sh - (int)a.pb[0], w0 = ow * sw - (int)a.pb[1];
    const int64_t xb = (n * a.C + (int64_t)g * Cg) * a.ivol;
    // The W loader: row wm of the tile, columns wk .. wk + 3.
    const int wm = t >> 2, wk = (t & 3) * 4;
    const bool wv = m0 + wm < Mg;
    const int64_t wb = ((int64_t)g * Mg + m0 + wm) * Kt;
    const int ty = t >> 4, tx = t & 15;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < Kt; k0 += kGK) {
        float xr[4], wr[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int k = k0 + kr + 4 * i;
            float v = 0.0f;
            if (qv && k < Kt) {
                const int c = k / kvol, r = k - c * kvol;
                const int kh = r / KW, kw = r - kh * KW;
                const int ih = h0 + kh * dh, iw = w0 + kw * dw;
                if ((unsigned)ih < (unsigned)IH && (unsigned)iw < (unsigned)IW)
                    v = load_f(a.x, a.dtype,
                               xb + (int64_t)c * a.ivol + (int64_t)ih * IW + iw);
            }
            xr[i] = v;
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int k = k0 + wk + i;
            wr[i] = wv && k < Kt ? load_f(a.w, a.dtype, wb + k) : 0.0f;
        }
        __syncthreads(); // the previous step's tiles are read
#pragma unroll
        for (int i = 0; i < 4; i++) {
            xs[kr + 4 * i][qq] = xr[i];
            ws[wk + i][wm] = wr[i];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kGK; kk++) {
            const float4 w4 = *(const float4 *)&ws[kk][ty * 4];
            const float4 x4 = *(const float4 *)&xs[kk][tx * 4];
            const float wv4[4] = {w4.x, w4.y, w4.z, w4.w},
                        xv4[4] = {x4.x, x4.y, x4.z, x4.w};
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = fmaf(wv4[i], xv4[j], acc[i][j]);
        }
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int m = m0 + ty * 4 + i;
        if (m >= Mg)
            continue;
        const int64_t mo = (int64_t)g * Mg + m;
        const float bias = a.b ? load_f(a.b, a.dtype, mo) : 0.0f;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int64_t qo = q0 + tx * 4 + j;
            if (qo >= Q)
                continue;
            const int64_t no = qo / ovol, po = qo - no * ovol;
            const int64_t idx = (no * a.M + mo) * ovol + po;
            const float v = conv_out(a, acc[i][j] + bias, idx);
            if (a.dtype == DT_F32)
                ((float *)a.y)[idx] = v;
            else
                ((__half *)a.y)[idx] = __float2half(v);
        }
    }
}

template <typename I> int launch_conv2d(const opk_conv_args *a, void *stream)
{
    const int64_t x = (a->ovol + kThreads - 1) / kThreads;
    const int dense = a->G == 1 && a->M > 1;
    const int64_t planes =
        dense ? a->N * ((a->M + OPK_CONV_MB - 1) / OPK_CONV_MB) : a->N * a->M;
    const int d1 = a->d[0] == 1 && a->d[1] == 1;
    dim3 grid((unsigned)(x < 4096 ? x : 4096),
              (unsigned)(planes < 65535 ? planes : 65535));
    if (dense && d1)
        conv2d_mb_kernel<I, true><<<grid, kThreads, 0, (cudaStream_t)stream>>>(*a);
    else if (dense)
        conv2d_mb_kernel<I, false><<<grid, kThreads, 0, (cudaStream_t)stream>>>(*a);
    else if (d1)
        conv2d_kernel<I, true><<<grid, kThreads, 0, (cudaStream_t)stream>>>(*a);
    else
        conv2d_kernel<I, false><<<grid, kThreads, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

// A float32 convolution's bias and activation over y [N, M, ovol] in
// place, after its product (the pointwise path).
__global__ void conv_epilogue_kernel(opk_conv_args a)
{
    const int64_t total = a.N * a.M * a.ovol;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int64_t m = (idx / a.ovol) % a.M;
        float v = load_f(a.y, a.dtype, idx);
        if (a.b)
            v += load_f(a.b, a.dtype, m);
        v = conv_out(a, v, idx);
        // float16 (cuDNN's product): rounded again after the bias.
        if (a.dtype == DT_F32)
            ((float *)a.y)[idx] = v;
        else
            ((__half *)a.y)[idx] = __float2half_rn(v);
    }
}

__global__ void to_f32_kernel(int32_t dtype, const uint16_t *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = dtype == DT_F16 ? __half2float(__ushort_as_half(x[i]))
                               : __bfloat162float(__ushort_as_bfloat16(x[i]));
}

__global__ void from_f32_kernel(int32_t dtype, const float *x, uint16_t *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = dtype == DT_F16 ? __half_as_ushort(__float2half_rn(x[i]))
                               : __bfloat16_as_ushort(__float2bfloat16_rn(x[i]));
}

} // namespace

extern "C" int opk_relu(int32_t dtype, const void *x, void *y, int64_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    int b = blocks_for(n);
    if (n == 0)
        return 0;
    switch (dtype) {
    case DT_F32:
        relu_kernel<float><<<b, kThreads, 0, s>>>((const float *)x, (float *)y, n);
        break;
    case DT_F16:
        relu16_kernel<<<b, kThreads, 0, s>>>((const uint16_t *)x, (uint16_t *)y, n,
                                             0x7C00u);
        break;
    case DT_BF16:
        relu16_kernel<<<b, kThreads, 0, s>>>((const uint16_t *)x, (uint16_t *)y, n,
                                             0x7F80u);
        break;
    case DT_I8:
        relu_kernel<int8_t><<<b, kThreads, 0, s>>>((const int8_t *)x, (int8_t *)y, n);
        break;
    case DT_I32:
        relu_kernel<int32_t><<<b, kThreads, 0, s>>>((const int32_t *)x, (int32_t *)y, n);
        break;
    case DT_I64:
        relu_kernel<int64_t><<<b, kThreads, 0, s>>>((const int64_t *)x, (int64_t *)y, n);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int opk_transpose(int32_t esize, const void *x, void *y, int32_t rank,
                             const int64_t *out_dims, const int64_t *in_stride, int64_t n,
                             void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    perm_args p;
    int b = blocks_for(n);
    if (n == 0)
        return 0;
    if (rank < 0 || rank > OPK_MAX_RANK)
        return (int)cudaErrorInvalidValue;
    p.rank = rank;
    for (int32_t k = 0; k < rank; k++) {
        p.dims[k] = out_dims[k];
        p.stride[k] = in_stride[k];
    }
    switch (esize) {
    case 1:
        transpose_kernel<uint8_t>
            <<<b, kThreads, 0, s>>>((const uint8_t *)x, (uint8_t *)y, p, n);
        break;
    case 2:
        transpose_kernel<uint16_t>
            <<<b, kThreads, 0, s>>>((const uint16_t *)x, (uint16_t *)y, p, n);
        break;
    case 4:
        transpose_kernel<uint32_t>
            <<<b, kThreads, 0, s>>>((const uint32_t *)x, (uint32_t *)y, p, n);
        break;
    case 8:
        transpose_kernel<uint64_t>
            <<<b, kThreads, 0, s>>>((const uint64_t *)x, (uint64_t *)y, p, n);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int opk_einsum(const opk_einsum_args *a, void *stream)
{
    if (a->out_count == 0)
        return 0;
    // A warp an output where the outputs alone would not fill the GPU
    // (fewer than 32 blocks of threads) and each sums many terms.
    if (a->sum_count >= 32 && a->out_count < 32 * (int64_t)kThreads) {
        const int64_t warps_per_block = kThreads / 32;
        einsum_warp_kernel<<<(unsigned)((a->out_count + warps_per_block - 1) /
                                        warps_per_block),
                             kThreads, 0, (cudaStream_t)stream>>>(*a);
    } else {
        einsum_kernel<<<blocks_for(a->out_count), kThreads, 0, (cudaStream_t)stream>>>(
            *a);
    }
    return (int)cudaGetLastError();
}

extern "C" int opk_conv(const opk_conv_args *a, void *stream)
{
    int64_t total = a->N * a->M * a->ovol;
    if (total == 0)
        return 0;
    // 32-bit indices when every element offset, and the grid-stride loops'
    // last steps past the end, fit.
    const int64_t lim = (int64_t)1 << 30;
    if (a->ns == 2 && total < lim && a->N * a->C * a->ivol < lim &&
        a->M * a->Cg * a->kvol < lim)
        return launch_conv2d<int32_t>(a, stream);
    if (a->ns == 2)
        return launch_conv2d<int64_t>(a, stream);
    conv_kernel<<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int opk_conv_gemm(const opk_conv_args *a, void *stream)
{
    const int64_t Q = a->N * a->ovol;
    const int64_t gx = (Q + kGN - 1) / kGN, gy = (a->Mg + kGM - 1) / kGM;
    if (Q == 0 || a->M == 0)
        return 0;
    if (a->ns != 2 || gx > INT32_MAX || gy > 65535 || a->G > 65535 ||
        a->Cg * a->kvol > INT32_MAX || a->in[0] * a->in[1] > INT32_MAX)
        return (int)cudaErrorInvalidValue;
    conv2d_gemm_kernel<<<dim3((unsigned)gx, (unsigned)gy, (unsigned)a->G), 256, 0,
                         (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int opk_conv_epilogue(const opk_conv_args *a, void *stream)
{
    int64_t total = a->N * a->M * a->ovol;
    if (total == 0 || (!a->b && !a->z && a->act == OP_ACT_NONE))
        return 0;
    conv_epilogue_kernel<<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int opk_to_f32(int32_t dtype, const void *x, float *y, int64_t n, void *stream)
{
    if (n == 0)
        return 0;
    to_f32_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, (const uint16_t *)x, y, n);
    return (int)cudaGetLastError();
}

extern "C" int opk_from_f32(int32_t dtype, const float *x, void *y, int64_t n,
                            void *stream)
{
    if (n == 0)
        return 0;
    from_f32_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, (uint16_t *)y, n);
    return (int)cudaGetLastError();
}

// CUDA kernels of Shrink, LRN, ReverseSequence and MaxUnpool (launch.h),
// each the CPU kernel's arithmetic: a thread per output element. A kernel
// cannot fail the run: a sequence length outside [0, T] is clamped to it,
// an unpooling index outside the frame is skipped (the CPU fails both).
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ int64_t shrink_int(double v, double l, double b)
{
    double r = v < -l ? v + b : v > l ? v - b : 0.0;
    if (!(r > -9.2233720368547758e18))
        return INT64_MIN;
    if (r >= 9.2233720368547758e18)
        return INT64_MAX;
    return (int64_t)r;
}

__global__ void shrink_kernel(int32_t dtype, const void *x, void *y, int64_t n, float l,
                              float b)
{
    OPK_FOR(i, n)
    {
        switch (dtype) {
        case DT_F32:
        case DT_F16:
        case DT_BF16: {
            float v = opk_float_at(dtype, x, i);
            // The CPU's: a sum, not contracted with anything.
            v = v < -l ? __fadd_rn(v, b) : v > l ? __fsub_rn(v, b) : 0.0f;
            opk_float_put(dtype, y, i, v);
            break;
        }
        case DT_I8:
            ((int8_t *)y)[i] = (int8_t)shrink_int(((const int8_t *)x)[i], l, b);
            break;
        case DT_U8:
            ((uint8_t *)y)[i] = (uint8_t)shrink_int(((const uint8_t *)x)[i], l, b);
            break;
        case DT_I32:
            ((int32_t *)y)[i] = (int32_t)shrink_int(((const int32_t *)x)[i], l, b);
            break;
        default:
            ((int64_t *)y)[i] = shrink_int((double)((const int64_t *)x)[i], l, b);
            break;
        }
    }
}

// The squares of the channel window summed in channel order, in float32,
// products and sums rounded apart as the CPU's.
__global__ void lrn_kernel(int32_t dtype, const void *x, void *y, int64_t C,
                           int64_t inner, int64_t n, int32_t size, float alpha,
                           float beta, float bias)
{
    const int64_t lo = (size - 1) / 2, hi = size / 2;
    const float scale = alpha / (float)size;
    OPK_FOR(at, n)
    {
        const int64_t i = at % inner, c = (at / inner) % C, nn = at / (inner * C);
        const int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
        float s = 0.0f;
        for (int64_t k = c0; k <= c1; k++) {
            const float v = opk_float_at(dtype, x, (nn * C + k) * inner + i);
            s = __fadd_rn(s, __fmul_rn(v, v));
        }
        opk_float_put(dtype, y, at,
                      opk_float_at(dtype, x, at) /
                          powf(__fadd_rn(bias, __fmul_rn(scale, s)), beta));
    }
}

template <typename T>
__global__ void revseq_kernel(const T *x, const void *lens, int32_t lens_dtype, T *y,
                              int32_t batch_axis, int64_t B, int64_t T_, int64_t inner,
                              int64_t n)
{
    OPK_FOR(e, n)
    {
        const int64_t i = e % inner, row = e / inner;
        const int64_t a1 = row % (batch_axis ? B : T_), a0 = row / (batch_axis ? B : T_);
        const int64_t b = batch_axis ? a1 : a0, t = batch_axis ? a0 : a1;
        int64_t len = lens_dtype == DT_I32 ? ((const int32_t *)lens)[b]
                                           : ((const int64_t *)lens)[b];
        len = len < 0 ? 0 : len > T_ ? T_ : len;
        const int64_t src = t < len ? len - 1 - t : t;
        const int64_t xo = batch_axis ? src * B + b : b * T_ + src;
        y[e] = x[xo * inner + i];
    }
}

__global__ void unpool_claim_kernel(const int64_t *idx, int64_t n, int64_t fv,
                                    opk_dims_arg frame, opk_dims_arg yd,
                                    unsigned long long *win)
{
    OPK_FOR(j, n)
    {
        int64_t f = idx[j], at = 0, stride = 1;
        if (f < 0 || f >= fv)
            continue;
        for (int32_t d = yd.rank - 1; d >= 0; d--) {
            at += f % frame.d[d] * stride;
            f /= frame.d[d];
            stride *= yd.d[d];
        }
        // The last input of equal indices wins, as on the CPU.
        atomicMax(win + at, (unsigned long long)j + 1);
    }
}

template <typename T>
__global__ void unpool_write_kernel(const T *x, const unsigned long long *win, T *y,
                                    int64_t m)
{
    OPK_FOR(e, m)
    {
        const unsigned long long w = win[e];
        y[e] = w ? x[w - 1] : (T)0;
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_shrink(int32_t dtype, const void *x, void *y, int64_t n, float lambd,
                          float bias, void *stream)
{
    if (n == 0)
        return 0;
    shrink_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(dtype, x, y, n,
                                                                        lambd, bias);
    return launched();
}

extern "C" int opk_lrn(int32_t dtype, const void *x, void *y, int64_t N, int64_t C,
                       int64_t inner, int32_t size, float alpha, float beta, float bias,
                       void *stream)
{
    const int64_t n = N * C * inner;
    if (n == 0)
        return 0;
    lrn_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, y, C, inner, n, size, alpha, beta, bias);
    return launched();
}

extern "C" int opk_reverse_sequence(int32_t esize, const void *x, const void *lens,
                                    int32_t lens_dtype, void *y, int32_t batch_axis,
                                    int64_t B, int64_t T, int64_t inner, void *stream)
{
    const int64_t n = B * T * inner;
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) E;
        revseq_kernel<E><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            (const E *)x, lens, lens_dtype, (E *)y, batch_axis, B, T, inner, n);
    });
}

extern "C" int opk_max_unpool(int32_t esize, const void *x, const int64_t *idx, int64_t n,
                              const opk_dims_arg *frame, const opk_dims_arg *yd, void *y,
                              void *ws, void *stream)
{
    int64_t m = 1, fv = 1;
    for (int32_t d = 0; d < yd->rank; d++) {
        m *= yd->d[d];
        fv *= frame->d[d];
    }
    if (m == 0)
        return 0;
    cudaError_t e = cudaMemsetAsync(ws, 0, (size_t)m * 8, (cudaStream_t)stream);
    if (e != cudaSuccess)
        return (int)e;
    if (n > 0) {
        unpool_claim_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            idx, n, fv, *frame, *yd, (unsigned long long *)ws);
        if (int err = launched())
            return err;
    }
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) E;
        unpool_write_kernel<E><<<blocks_for(m), kThreads, 0, (cudaStream_t)stream>>>(
            (const E *)x, (const unsigned long long *)ws, (E *)y, m);
    });
}

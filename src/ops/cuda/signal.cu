// CUDA kernels of the signal ops (launch.h): the window functions,
// MelWeightMatrix, DFT and STFT, a thread per output element. The values
// that size the work (dft_length, frame_step, frame_length, MelWeightMatrix's
// scalars) are read from device memory in the kernel; the grid comes from
// the output's dims. DFT and STFT sum the direct transform in double with
// each twiddle from its own reduced angle (k t mod n), the CPU's error
// bound (signal_fft.c) without its FFT.
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ int64_t int_at(const void *p, int32_t dtype)
{
    return dtype == DT_I64 ? *(const int64_t *)p
                           : static_cast<int64_t>(*(const int32_t *)p);
}

__device__ void store_d(int32_t dtype, void *y, int64_t i, double v)
{
    store_f(dtype, y, i, (float)v);
}

__global__ void window_kernel(int32_t dtype, void *y, int64_t n, double c0, double c1,
                              double c2, int32_t periodic)
{
    const int64_t den = periodic ? n : n - 1;
    OPK_FOR(k, n)
    {
        // cospi(2 k / den): the angle reduced exactly.
        const double a = 2.0 * (double)k / (double)den;
        store_d(dtype, y, k, den == 0 ? 1.0 : c0 - c1 * cospi(a) + c2 * cospi(2.0 * a));
    }
}

__device__ int64_t mel_point(int64_t p, int64_t bins, int64_t len, double rate, float lo,
                             float hi)
{
    const float lm = 2595.0f * log10f(1.0f + lo / 700.0f);
    const float hm = 2595.0f * log10f(1.0f + hi / 700.0f);
    const float step = (hm - lm) / (float)(bins + 2);
    const double mel = (double)p * (double)step + (double)lm;
    const double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
    return (int64_t)floor((double)(len + 1) * hz / rate);
}

__global__ void mel_kernel(int32_t dtype, void *y, int64_t R, int64_t M, const void *lenp,
                           int64_t len_value, const void *ratep, int32_t idt,
                           const void *lop, const void *hip, int32_t fdt)
{
    const int64_t len = lenp ? int_at(lenp, idt) : len_value, rate = int_at(ratep, idt);
    const float lo = load_f(fdt, lop, 0), hi = load_f(fdt, hip, 0);
    OPK_FOR(at, R * M)
    {
        const int64_t j = at / M, i = at % M;
        double v = 0.0;
        if (rate > 0) {
            const int64_t l = mel_point(i, M, len, (double)rate, lo, hi);
            const int64_t c = mel_point(i + 1, M, len, (double)rate, lo, hi);
            const int64_t h = mel_point(i + 2, M, len, (double)rate, lo, hi);
            if (h > c && j >= c && j < h)
                v = (double)(h - j) / (double)(h - c);
            else if (c == l)
                v = j == c ? 1.0 : 0.0;
            else if (j >= l && j <= c)
                v = (double)(j - l) / (double)(c - l);
        }
        store_d(dtype, y, at, v);
    }
}

// Bin k of the line starting at element `base` of x, points `stride`
// elements apart, m of them read (zero beyond), length n.
__device__ void dft_bin(int32_t dtype, const void *x, int64_t base, int64_t stride,
                        int64_t comps, int64_t m, int64_t n, int64_t k, double sign,
                        const void *w, double *re, double *im)
{
    double sr = 0.0, si = 0.0;
    int64_t at = 0;
    for (int64_t t = 0; t < m; t++) {
        const double f = w ? load_f(dtype, w, t) : 1.0;
        const double xr = load_f(dtype, x, base + t * stride) * f;
        const double xi = comps == 2 ? load_f(dtype, x, base + t * stride + 1) * f : 0.0;
        double s, c;
        sincospi(2.0 * (double)at / (double)n, &s, &c);
        s *= sign;
        sr += xr * c - xi * s;
        si += xr * s + xi * c;
        at += k;
        at %= n;
    }
    *re = sr;
    *im = si;
}

__global__ void dft_kernel(int32_t dtype, const void *x, void *y, opk_dft_geom g,
                           const void *lenp, int32_t len_dtype)
{
    const int64_t n = lenp ? int_at(lenp, len_dtype) : g.len;
    const int64_t m = g.axis_len < n ? g.axis_len : n;
    const double sign = g.inverse ? 1.0 : -1.0, scale = g.inverse ? 1.0 / (double)n : 1.0;
    OPK_FOR(at, g.outer * g.bins * g.inner)
    {
        const int64_t i = at % g.inner, k = (at / g.inner) % g.bins;
        const int64_t o = at / (g.inner * g.bins);
        double re = 0.0, im = 0.0;
        if (n > 0)
            dft_bin(dtype, x, (o * g.axis_len * g.inner + i) * g.comps, g.inner * g.comps,
                    g.comps, m, n, k, sign, nullptr, &re, &im);
        store_d(dtype, y, at * 2, re * scale);
        store_d(dtype, y, at * 2 + 1, im * scale);
    }
}

__global__ void stft_kernel(int32_t dtype, const void *x, const void *w, void *y,
                            opk_stft_geom g, const void *stepp, const void *lenp,
                            int32_t step_dtype, int32_t len_dtype)
{
    const int64_t step = stepp ? int_at(stepp, step_dtype) : g.step;
    const int64_t n = lenp ? int_at(lenp, len_dtype) : g.len;
    OPK_FOR(at, g.batch * g.frames * g.bins)
    {
        const int64_t k = at % g.bins, f = (at / g.bins) % g.frames;
        const int64_t b = at / (g.bins * g.frames);
        const int64_t first = f * step;
        double re = 0.0, im = 0.0;
        // A frame past the signal (a value that disagrees with the dims)
        // is left zero: the kernel cannot fail the run.
        if (n > 0 && step > 0 && first + n <= g.samples)
            dft_bin(dtype, x, (b * g.samples + first) * g.comps, g.comps, g.comps, n, n,
                    k, -1.0, w, &re, &im);
        store_d(dtype, y, at * 2, re);
        store_d(dtype, y, at * 2 + 1, im);
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_window(int32_t dtype, void *y, int64_t n, const double *c,
                          int32_t periodic, void *stream)
{
    if (n == 0)
        return 0;
    window_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, y, n, c[0], c[1], c[2], periodic);
    return launched();
}

extern "C" int opk_mel_weight(int32_t dtype, void *y, int64_t R, int64_t M,
                              const void *len, int64_t len_value, const void *rate,
                              int32_t idt, const void *lo, const void *hi, int32_t fdt,
                              void *stream)
{
    if (R * M == 0)
        return 0;
    mel_kernel<<<blocks_for(R * M), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, y, R, M, len, len_value, rate, idt, lo, hi, fdt);
    return launched();
}

extern "C" int opk_dft(int32_t dtype, const void *x, void *y, const opk_dft_geom *g,
                       const void *len, int32_t len_dtype, void *stream)
{
    const int64_t n = g->outer * g->bins * g->inner;
    if (n == 0)
        return 0;
    dft_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(dtype, x, y, *g, len,
                                                                     len_dtype);
    return launched();
}

extern "C" int opk_stft(int32_t dtype, const void *x, const void *w, void *y,
                        const opk_stft_geom *g, const void *step, int32_t step_dtype,
                        const void *len, int32_t len_dtype, void *stream)
{
    const int64_t n = g->batch * g->frames * g->bins;
    if (n == 0)
        return 0;
    stft_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, w, y, *g, step, len, step_dtype, len_dtype);
    return launched();
}

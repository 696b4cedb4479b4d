/*
 * The transform DFT and STFT share (ops_signal.h): one line of n complex
 * values at a time, in double. A power-of-two n takes an iterative radix-2
 * FFT (bit reversal, then log2 n butterfly passes); any other n the direct
 * sum over a table of the n twiddles (k t mod n indexes it), O(n) per bin.
 * The twiddles are computed once per run, each from its own angle (no
 * recurrence), so the error stays a few ulps of double however long n is.
 */
#include <math.h>

#include "base/fp16.h"
#include "ops/ops_signal.h"

#define SIGNAL_PI 3.14159265358979323846

static int64_t fft_rev_bytes(int64_t n)
{
    return (n * 4 + 7) / 8 * 8;
}

int64_t signal_fft_workspace(int64_t n)
{
    if (n <= 0)
        return 0;
    if (n > (INT64_MAX / 8 - 64) / (2 + 4 * SIGNAL_SLOTS))
        return -1;
    return n * 16 + fft_rev_bytes(n) + (int64_t)SIGNAL_SLOTS * n * 32;
}

static int is_pow2(int64_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

void signal_fft_init(signal_fft *f, int64_t n, void *ws)
{
    double *tw = ws;
    int32_t *rev = (int32_t *)(tw + 2 * n);
    f->n = n;
    f->pow2 = is_pow2(n);
    for (int64_t j = 0; j < n; j++) {
        double a = 2.0 * SIGNAL_PI * (double)j / (double)n;
        tw[2 * j] = cos(a);
        tw[2 * j + 1] = sin(a);
    }
    if (f->pow2) {
        int32_t bits = 0;
        while (((int64_t)1 << bits) < n)
            bits++;
        for (int64_t j = 0; j < n; j++) {
            int32_t r = 0;
            for (int32_t b = 0; b < bits; b++)
                r |= (int32_t)((j >> b) & 1) << (bits - 1 - b);
            rev[j] = r;
        }
    }
    f->tw = tw;
    f->rev = rev;
    f->slots = (double *)((uint8_t *)rev + fft_rev_bytes(n));
}

double *signal_fft_slot(const signal_fft *f)
{
    int32_t t = base_parallel_thread_index();
    return f->slots + (t < SIGNAL_SLOTS ? t : 0) * 4 * f->n;
}

/* The radix-2 passes: butterflies of width len, twiddle j * (n / len). */
static void fft_pow2(const signal_fft *f, const double *xr, const double *xi, double *yr,
                     double *yi, double sign)
{
    const int64_t n = f->n;
    for (int64_t j = 0; j < n; j++) {
        yr[f->rev[j]] = xr[j];
        yi[f->rev[j]] = xi[j];
    }
    for (int64_t len = 2; len <= n; len *= 2) {
        const int64_t half = len / 2, step = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t j = 0; j < half; j++) {
                const double wr = f->tw[2 * j * step],
                             wi = sign * f->tw[2 * j * step + 1];
                const int64_t a = s + j, b = a + half;
                const double br = yr[b] * wr - yi[b] * wi, bi = yr[b] * wi + yi[b] * wr;
                yr[b] = yr[a] - br;
                yi[b] = yi[a] - bi;
                yr[a] += br;
                yi[a] += bi;
            }
    }
}

/* The direct sum for any n: bin k of the first `bins`. */
static void dft_direct(const signal_fft *f, const double *xr, const double *xi,
                       double *yr, double *yi, int64_t bins, double sign)
{
    const int64_t n = f->n;
    for (int64_t k = 0; k < bins; k++) {
        double sr = 0.0, si = 0.0;
        int64_t at = 0;
        for (int64_t t = 0; t < n; t++) {
            const double wr = f->tw[2 * at], wi = sign * f->tw[2 * at + 1];
            sr += xr[t] * wr - xi[t] * wi;
            si += xr[t] * wi + xi[t] * wr;
            at += k;
            if (at >= n)
                at -= n;
        }
        yr[k] = sr;
        yi[k] = si;
    }
}

void signal_fft_line(const signal_fft *f, double *slot, int64_t bins, int32_t inverse)
{
    const int64_t n = f->n;
    /* exp(-2 pi i k t / n) forward: the table holds +sin. */
    const double sign = inverse ? 1.0 : -1.0;
    if (f->pow2)
        fft_pow2(f, slot, slot + n, slot + 2 * n, slot + 3 * n, sign);
    else
        dft_direct(f, slot, slot + n, slot + 2 * n, slot + 3 * n, bins, sign);
}

void signal_fft_for(int64_t lines, int64_t n, base_range_fn fn, void *arg)
{
    /* About 8K flops a range at the least (OP_GRAIN_SIMPLE). */
    int64_t grain = n >= OP_GRAIN_SIMPLE ? 1 : OP_GRAIN_SIMPLE / (n > 0 ? n : 1);
    if (base_parallel_threads() <= SIGNAL_SLOTS)
        base_parallel_for(lines, grain, fn, arg);
    else
        fn(arg, 0, lines);
}

double signal_load(const void *x, int32_t dtype, int64_t i)
{
    if (dtype == PRT_FLOAT16)
        return base_h2f(((const uint16_t *)x)[i]);
    if (dtype == PRT_BFLOAT16)
        return base_bf2f(((const uint16_t *)x)[i]);
    return ((const float *)x)[i];
}

void signal_store(void *y, int32_t dtype, int64_t i, double v)
{
    if (dtype == PRT_FLOAT16)
        ((uint16_t *)y)[i] = base_f2h((float)v);
    else if (dtype == PRT_BFLOAT16)
        ((uint16_t *)y)[i] = base_f2bf((float)v);
    else
        ((float *)y)[i] = (float)v;
}

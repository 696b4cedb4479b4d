/*
 * The ceiling of the CPU kernels (bench/RESULTS.md, "a tile's sums in
 * registers"): one core's rate of fused multiply-adds, 12 independent
 * accumulators so that no FMA waits for the one before, in 8-float vectors
 * (AVX2 + FMA, what plugrt's kernels are built for) and, where the CPU has
 * AVX-512, in 16-float vectors (what ONNX Runtime's kernels use there).
 *
 *    build/bench/bench_fma_peak
 *
 * Prints GMAC/s (10^9 multiply-adds of one float a second) for each; the
 * best of 5 runs of 10^8 steps. Not a test.
 */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define STEPS 100000000L

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float sink;

__attribute__((target("avx2,fma"))) static double peak8(void)
{
    __m256 a[12];
    const __m256 x = _mm256_set1_ps(0.9999f), y = _mm256_set1_ps(1e-5f);
    double best = 1e30;
    for (int i = 0; i < 12; i++)
        a[i] = _mm256_set1_ps((float)i * 1e-3f);
    for (int r = 0; r < 5; r++) {
        const double t0 = now();
        for (long s = 0; s < STEPS; s++) {
#pragma GCC unroll 12
            for (int i = 0; i < 12; i++)
                a[i] = _mm256_fmadd_ps(a[i], x, y);
        }
        if (now() - t0 < best)
            best = now() - t0;
    }
    for (int i = 0; i < 12; i++)
        sink += _mm256_cvtss_f32(a[i]);
    return (double)STEPS * 12 * 8 / best * 1e-9;
}

__attribute__((target("avx512f"))) static double peak16(void)
{
    __m512 a[12];
    const __m512 x = _mm512_set1_ps(0.9999f), y = _mm512_set1_ps(1e-5f);
    double best = 1e30;
    for (int i = 0; i < 12; i++)
        a[i] = _mm512_set1_ps((float)i * 1e-3f);
    for (int r = 0; r < 5; r++) {
        const double t0 = now();
        for (long s = 0; s < STEPS; s++) {
#pragma GCC unroll 12
            for (int i = 0; i < 12; i++)
                a[i] = _mm512_fmadd_ps(a[i], x, y);
        }
        if (now() - t0 < best)
            best = now() - t0;
    }
    for (int i = 0; i < 12; i++)
        sink += _mm512_cvtss_f32(a[i]);
    return (double)STEPS * 12 * 16 / best * 1e-9;
}

int main(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("no AVX2 + FMA on this CPU\n");
        return 0;
    }
    printf("8-float FMAs (AVX2):     %.1f GMAC/s\n", peak8());
    if (__builtin_cpu_supports("avx512f"))
        printf("16-float FMAs (AVX-512): %.1f GMAC/s\n", peak16());
    else
        printf("16-float FMAs: no AVX-512 on this CPU\n");
    return sink == 12345.0f; /* keeps the sums live */
}

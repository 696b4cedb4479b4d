/* LookupTable8's byte lookup (cpu_kernels.h: op_lut8).
 *
 * With AVX-512 VBMI, vpermi2b looks up 64 bytes at once in a 128-byte
 * table (two registers) by each index's low 7 bits; two of them, on the
 * table's halves, and a blend on each index's bit 7 give the whole
 * 256-entry lookup: three instructions per 64 bytes, against a load and a
 * store per byte for the plain loop (measured in bench/RESULTS.md, "8-bit
 * lookup tables"). Without VBMI the plain loop runs; AVX2 has no byte
 * permute wider than 16 entries (pshufb), and 16 of them with their blends
 * per 32 bytes is no faster than the loop's loads.
 */
#include <stdatomic.h>

#include "ops/cpu/cpu_kernels.h"

#if CPU_HAVE_AVX2_BUILD && defined(__GNUC__)
#include <immintrin.h>
#define LUT_HAVE_VBMI_BUILD 1
#define LUT_TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

static LUT_TARGET_VBMI void lut8_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y,
                                      int64_t n)
{
    const __m512i t0 = _mm512_loadu_si512((const void *)table),
                  t1 = _mm512_loadu_si512((const void *)(table + 64)),
                  t2 = _mm512_loadu_si512((const void *)(table + 128)),
                  t3 = _mm512_loadu_si512((const void *)(table + 192));
    int64_t j = 0;
    for (; j < n; j += 64) {
        /* the tail under a mask: no read or write past n */
        const __mmask64 m = n - j >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - j)) - 1);
        const __m512i i = _mm512_maskz_loadu_epi8(m, x + j);
        const __m512i lo = _mm512_permutex2var_epi8(t0, i, t1),
                      hi = _mm512_permutex2var_epi8(t2, i, t3);
        const __mmask64 top = _mm512_movepi8_mask(i); /* bit 7 of each index */
        _mm512_mask_storeu_epi8(y + j, m, _mm512_mask_blend_epi8(top, lo, hi));
    }
}
#else
#define LUT_HAVE_VBMI_BUILD 0
#endif

/* -1 not asked yet, 0 plain loop, 1 VBMI. */
static _Atomic int lut_vbmi = -1;

static int lut_has_vbmi(void)
{
    int s = atomic_load_explicit(&lut_vbmi, memory_order_relaxed);
    if (s < 0) {
#if LUT_HAVE_VBMI_BUILD
        __builtin_cpu_init();
        s = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vbmi");
#else
        s = 0;
#endif
        atomic_store_explicit(&lut_vbmi, s, memory_order_relaxed);
    }
    /* cpu_force_baseline turns it off too: the coverage test's reference is
     * then the plain loop */
    return s && cpu_avx2();
}

void op_lut8(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n)
{
#if LUT_HAVE_VBMI_BUILD
    if (n >= 64 && lut_has_vbmi()) {
        lut8_vbmi(table, x, y, n);
        return;
    }
#else
    (void)lut_has_vbmi;
#endif
    for (int64_t j = 0; j < n; j++)
        y[j] = table[x[j]];
}

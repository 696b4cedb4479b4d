/* LookupTable8's byte lookup (cpu_kernels.h: op_lut8).
 *
 * With AVX-512 VBMI, vpermi2b looks up 64 bytes at once in a 128-byte
 * table (two registers) by each index's low 7 bits; two of them, on the
 * table's halves, and a blend on each index's bit 7 give the whole
 * 256-entry lookup: three instructions per 64 bytes, against a load and a
 * store per byte for the plain loop (measured in bench/RESULTS.md, "8-bit
 * lookup tables"). With AVX2 (no VBMI: Zen 3), 16 vpshufb of 16-entry
 * tables per 32 bytes, without blends (lut8_avx2); else the plain loop.
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

/* The 256 entries as 16 rows of 16 (row i: indices 16 i ..), each half
 * (rows 0-7: indices below 128; 8-15: above) looked up with vpshufb,
 * which returns 0 where an index byte has bit 7 set and else the entry
 * of its low 4 bits. Row i takes v - 16 i, subtracted with signed
 * saturation: an index below 16 i, or of the other half (negative as
 * int8: saturates, stays negative), gives 0; one of row b >= i gives its
 * low nibble's entry. So with d[i] = row i ^ row i - 1 (row i alone at a
 * half's first), the XOR over a half's rows gives row b's entry, the XOR
 * of d[0..b] telescoping to row b. The upper half runs on v ^ 0x80. 16
 * vpshufb, 16 subtractions and 16 XORs per 32 bytes, no blend. */
CPU_TARGET_AVX2 static void lut8_avx2(const uint8_t *table, const uint8_t *x, uint8_t *y,
                                      int64_t n)
{
    __m256i d[16];
    int64_t j = 0;
    for (int i = 0; i < 16; i++) {
        __m128i t = _mm_loadu_si128((const __m128i *)(const void *)(table + 16 * i));
        if (i % 8)
            t = _mm_xor_si128(
                t, _mm_loadu_si128((const __m128i *)(const void *)(table + 16 * i - 16)));
        d[i] = _mm256_broadcastsi128_si256(t);
    }
    for (; j + 32 <= n; j += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + j));
        const __m256i h = _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80));
        __m256i r = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const __m256i o = _mm256_set1_epi8((char)(16 * i));
            r = _mm256_xor_si256(r, _mm256_shuffle_epi8(d[i], _mm256_subs_epi8(v, o)));
            r = _mm256_xor_si256(r,
                                 _mm256_shuffle_epi8(d[8 + i], _mm256_subs_epi8(h, o)));
        }
        _mm256_storeu_si256((__m256i *)(void *)(y + j), r);
    }
    for (; j < n; j++)
        y[j] = table[x[j]];
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
     * then the plain loop; cpu_force_avx2 leaves the AVX2 build */
    return s && cpu_avx512();
}

void op_lut8(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n)
{
#if LUT_HAVE_VBMI_BUILD
    if (n >= 64 && lut_has_vbmi()) {
        lut8_vbmi(table, x, y, n);
        return;
    }
    if (n >= 32 && cpu_avx2()) {
        lut8_avx2(table, x, y, n);
        return;
    }
#else
    (void)lut_has_vbmi;
#endif
    for (int64_t j = 0; j < n; j++)
        y[j] = table[x[j]];
}

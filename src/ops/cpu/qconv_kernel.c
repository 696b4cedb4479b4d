/*
 * The 8-bit convolution over channel-last pixels (qconv_kernel.h): W's
 * packing, the CHW -> HWC transpose of x and the VNNI tiles with their
 * requantizing store.
 */
#include "ops/cpu/qconv_kernel.h"

#include <string.h>

#include "base/base.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/cpu/qgemm.h"

#if CPU_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

int64_t op_qc_c4(int64_t C)
{
    return C < 0 || C > INT64_MAX - 3 ? -1 : (C + 3) / 4 * 4;
}

int64_t op_qc_w_bytes(int64_t M, int64_t C, int64_t kvol)
{
    int64_t c4 = op_qc_c4(C), s = (M + OP_QC_PANEL - 1) / OP_QC_PANEL, n;
    if (c4 < 0 || M < 0 || kvol < 0 || !base_mul_i64(c4, kvol, &n) ||
        !base_mul_i64(n, s * OP_QC_PANEL, &n))
        return -1;
    return n;
}

void op_qc_pack_w(int64_t M, int64_t Mb, int64_t C, int64_t kvol, const uint8_t *W,
                  uint8_t flip, int wide, void *wp, int32_t *colsum)
{
    const int64_t C4 = op_qc_c4(M / Mb * C), S = (M + OP_QC_PANEL - 1) / OP_QC_PANEL;
    /* inputs a step (one int32 lane of a vector of W): 4 bytes or 2 int16 */
    const int64_t sw = wide ? 2 : 4;
    memset(wp, 0, (size_t)(S * OP_QC_PANEL * kvol * C4 * (wide ? 2 : 1)));
    for (int64_t m = 0; m < M; m++) {
        const int64_t p =
            m / OP_QC_PANEL * kvol * C4 * OP_QC_PANEL + m % OP_QC_PANEL * sw;
        const int64_t c0 = m / Mb * C;
        uint32_t sum = 0;
        for (int64_t c = 0; c < C; c++)
            for (int64_t kp = 0; kp < kvol; kp++) {
                const uint8_t v = W[(m * C + c) * kvol + kp] ^ flip;
                const int64_t at =
                    p + (kp * C4 + (c0 + c) / sw * sw) * OP_QC_PANEL + (c0 + c) % sw;
                if (wide)
                    ((int16_t *)wp)[at] = (int16_t)(int8_t)v;
                else
                    ((uint8_t *)wp)[at] = v;
                sum += (uint32_t)(int32_t)(int8_t)v;
            }
        colsum[m] = (int32_t)sum;
    }
}

typedef uint8_t qc_u8x16 __attribute__((vector_size(16)));
typedef uint16_t qc_u16x8 __attribute__((vector_size(16)));
typedef uint32_t qc_u32x4 __attribute__((vector_size(16)));
typedef uint64_t qc_u64x2 __attribute__((vector_size(16)));

/* The 16 x 16 bytes of r (row c: 16 pixels of channel c) transposed in
 * place (row j: pixel j's 16 channels), in four rounds of interleaves of
 * 1, 2, 4 and 8 bytes. */
static inline CPU_INLINE void qc_transpose16(qc_u8x16 r[16])
{
    qc_u8x16 t[16];
    /* t[2c + h]: channels 2c, 2c + 1 of pixels 8h..8h+7, byte pairs */
    for (int i = 0; i < 16; i += 2) {
        t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20,
                                       5, 21, 6, 22, 7, 23);
        t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 8, 24, 9, 25, 10, 26, 11, 27,
                                           12, 28, 13, 29, 14, 30, 15, 31);
    }
    for (int i = 0; i < 16; i += 4)
        for (int h = 0; h < 2; h++) {
            const qc_u16x8 a = (qc_u16x8)t[i + h], b = (qc_u16x8)t[i + 2 + h];
            r[i + 2 * h] =
                (qc_u8x16)__builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
            r[i + 2 * h + 1] =
                (qc_u8x16)__builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15);
        }
    /* r[4g + q]: channels 4g..4g+3 of pixels 4q..4q+3, as 32-bit groups */
    for (int i = 0; i < 16; i += 8)
        for (int q = 0; q < 4; q++) {
            const qc_u32x4 a = (qc_u32x4)r[i + q], b = (qc_u32x4)r[i + 4 + q];
            t[i + 2 * q] = (qc_u8x16)__builtin_shufflevector(a, b, 0, 4, 1, 5);
            t[i + 2 * q + 1] = (qc_u8x16)__builtin_shufflevector(a, b, 2, 6, 3, 7);
        }
    /* t[8e + o]: channels 8e..8e+7 of pixels 2o, 2o + 1, as 64-bit groups */
    for (int o = 0; o < 8; o++) {
        const qc_u64x2 a = (qc_u64x2)t[o], b = (qc_u64x2)t[8 + o];
        r[2 * o] = (qc_u8x16)__builtin_shufflevector(a, b, 0, 2);
        r[2 * o + 1] = (qc_u8x16)__builtin_shufflevector(a, b, 1, 3);
    }
}

/* In blocks of pixels so that a block's C4-element rows stay in L1 while
 * the channels are written into them; 16 channels by 16 pixels at a time
 * through a byte transpose, the rest one by one. */
#define QC_HWC_BLOCK 256

typedef uint16_t qc_u16x16 __attribute__((vector_size(32)));

/* The first n (16 or 8) bytes of v at element e of xt: as they are, or
 * widened to uint16. */
static inline CPU_INLINE void qc_putn(void *xt, int wide, int64_t e, qc_u8x16 v, int n)
{
    if (wide) {
        const qc_u16x16 w = __builtin_convertvector(v, qc_u16x16);
        memcpy((uint16_t *)xt + e, &w, (size_t)n * 2);
    } else {
        memcpy((uint8_t *)xt + e, &v, (size_t)n);
    }
}

static inline CPU_INLINE void qc_put1(void *xt, int wide, int64_t e, uint8_t v)
{
    if (wide)
        ((uint16_t *)xt)[e] = v;
    else
        ((uint8_t *)xt)[e] = v;
}

static inline CPU_INLINE void qc_to_hwc_body(const uint8_t *x, int64_t C, int64_t hw,
                                             uint8_t flip, int64_t C4, int64_t p0,
                                             int64_t p1, int wide, void *xt)
{
    const qc_u8x16 fv = {flip, flip, flip, flip, flip, flip, flip, flip,
                         flip, flip, flip, flip, flip, flip, flip, flip};
    if (C4 == 4) {
        /* An image's stem (C <= 4): 16 pixels of four channels are 64
         * contiguous elements, op_qg_zip4 of four 16-byte rows (a zero row
         * past C). */
        const qc_u8x16 zero = {0};
        int64_t p = p0;
        for (; p + 16 <= p1; p += 16) {
            qc_u8x16 r[4], t[4];
            for (int i = 0; i < 4; i++) {
                r[i] = zero;
                if (i < C) {
                    memcpy(&r[i], x + i * hw + p, 16);
                    r[i] ^= fv;
                }
            }
            op_qg_zip4(r, t);
            for (int i = 0; i < 4; i++)
                qc_putn(xt, wide, (p - p0) * 4 + 16 * i, t[i], 16);
        }
        for (; p < p1; p++)
            for (int64_t c = 0; c < 4; c++)
                qc_put1(xt, wide, (p - p0) * 4 + c, c < C ? x[c * hw + p] ^ flip : 0);
        return;
    }
    for (int64_t b0 = p0; b0 < p1; b0 += QC_HWC_BLOCK) {
        const int64_t b1 = b0 + QC_HWC_BLOCK < p1 ? b0 + QC_HWC_BLOCK : p1;
        int64_t c = 0;
        /* blocks of 16 channels, then one of 8 (C = 8 mod 16: 24, 40, ...)
         * through the same transpose with 8 rows of zeros */
        for (int64_t nc = 16; nc >= 8; nc -= 8)
            for (; c + nc <= C; c += nc) {
                int64_t p = b0;
                for (; p + 16 <= b1; p += 16) {
                    qc_u8x16 r[16];
                    for (int i = 0; i < 16; i++) {
                        r[i] = (qc_u8x16){0};
                        if (i < nc) {
                            memcpy(&r[i], x + (c + i) * hw + p, 16);
                            r[i] ^= fv;
                        }
                    }
                    qc_transpose16(r);
                    for (int i = 0; i < 16; i++) {
                        /* n a constant at each call: fixed-size moves */
                        if (nc == 16)
                            qc_putn(xt, wide, (p - p0 + i) * C4 + c, r[i], 16);
                        else
                            qc_putn(xt, wide, (p - p0 + i) * C4 + c, r[i], 8);
                    }
                }
                for (; p < b1; p++)
                    for (int i = 0; i < nc; i++)
                        qc_put1(xt, wide, (p - p0) * C4 + c + i,
                                x[(c + i) * hw + p] ^ flip);
            }
        for (; c < C; c++) {
            const uint8_t *xc = x + c * hw;
            for (int64_t p = b0; p < b1; p++)
                qc_put1(xt, wide, (p - p0) * C4 + c, xc[p] ^ flip);
        }
        for (c = C; c < C4; c++)
            for (int64_t p = b0; p < b1; p++)
                qc_put1(xt, wide, (p - p0) * C4 + c, 0);
    }
}

CPU_BUILDS(qc_to_hwc, qc_to_hwc_body,
           (const uint8_t *x, int64_t C, int64_t hw, uint8_t flip, int64_t C4, int64_t p0,
            int64_t p1, int wide, void *xt),
           (x, C, hw, flip, C4, p0, p1, wide, xt))

void op_qc_to_hwc(const uint8_t *x, int64_t C, int64_t hw, uint8_t flip, int64_t C4,
                  int64_t p0, int64_t p1, int wide, void *xt)
{
    CPU_PICK(qc_to_hwc)(x, C, hw, flip, C4, p0, p1, wide, xt);
}

void op_qc_from_hwc(const uint8_t *yt, int64_t M16, int64_t M, int64_t hw, int64_t p0,
                    int64_t p1, uint8_t *y)
{
    int64_t p = p0;
    for (; p + 16 <= p1; p += 16)
        for (int64_t c = 0; c < M; c += 16) {
            qc_u8x16 r[16];
            for (int i = 0; i < 16; i++)
                memcpy(&r[i], yt + (p + i) * M16 + c, 16);
            qc_transpose16(r);
            for (int i = 0; i < 16 && c + i < M; i++)
                memcpy(y + (c + i) * hw + p, &r[i], 16);
        }
    for (; p < p1; p++)
        for (int64_t c = 0; c < M; c++)
            y[c * hw + p] = yt[p * M16 + c];
}

static inline CPU_INLINE void qc_plane_f32_body(const uint8_t *x, int64_t n, uint8_t flip,
                                                int32_t zp, float *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = (float)((int32_t)(uint8_t)(x[i] ^ flip) - zp);
}

CPU_BUILDS(qc_plane_f32, qc_plane_f32_body,
           (const uint8_t *x, int64_t n, uint8_t flip, int32_t zp, float *out),
           (x, n, flip, zp, out))

void op_qc_plane_f32(const uint8_t *x, int64_t n, uint8_t flip, int32_t zp, float *out)
{
    CPU_PICK(qc_plane_f32)(x, n, flip, zp, out);
}

static inline CPU_INLINE void qc_requant_f32_body(const float *sum, int64_t n,
                                                  int32_t bias, float scale, int32_t zp,
                                                  int is_u8, int is_i32, void *y)
{
    const int32_t lo = is_u8 ? 0 : -128, hi = is_u8 ? 255 : 127;
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    if (is_i32) {
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)y)[i] = (int32_t)sum[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        /* qgemm.h's store pass, operation for operation */
        const int32_t v = (int32_t)((uint32_t)(int32_t)sum[i] + (uint32_t)bias);
        float f = (float)v * scale;
        f = f >= flo ? f : flo;
        f = f <= fhi ? f : fhi;
        f = (f + 12582912.0f) - 12582912.0f;
        ((uint8_t *)y)[i] = (uint8_t)((int32_t)f + zp);
    }
}

CPU_BUILDS(qc_requant_f32, qc_requant_f32_body,
           (const float *sum, int64_t n, int32_t bias, float scale, int32_t zp, int is_u8,
            int is_i32, void *y),
           (sum, n, bias, scale, zp, is_u8, is_i32, y))

void op_qc_requant_f32(const float *sum, int64_t n, int32_t bias, float scale, int32_t zp,
                       int is_u8, int is_i32, void *y)
{
    CPU_PICK(qc_requant_f32)(sum, n, bias, scale, zp, is_u8, is_i32, y);
}

#if CPU_HAVE_AVX2_BUILD
/* ---- the AVX2 tiles (a->wide) ----------------------------------------------
 *
 * AVX2 has no vpdpbusd, and its vpmaddubsw saturates a pair's int16 sum
 * (255 x 127 x 2 > 32767), which ORT's AVX2 kernels accept. Exact instead:
 * x and W as int16 (x' 0..255, W' -128..127), vpmaddwd multiplying two
 * input channels of one pixel (broadcast) by the same two of 8 output
 * channels into int32 lanes (|pair sum| <= 2 x 255 x 128), and vpaddd into
 * the sums. 16 products per vpmaddwd against an fp32 FMA's 8. A tile is
 * QC16_MR1 pixels by 8 channels or QC16_MR2 pixels by 16 (two vectors):
 * 12 sums, the W vectors, the broadcast and the product in 16 registers. */
#define QC16_MR1 8
#define QC16_MR2 6

/* c0 (and c1 when two) += the int16 pairs of b0 (b1) times the pair at
 * src broadcast: one step of a tile, the broadcast being a pixel's two
 * inputs (the channel-last tiles) or a channel's two weights (the
 * pointwise kernel). */
static inline CPU_INLINE CPU_TARGET_AVX2 void
qc16_madd(__m256i *c0, __m256i *c1, const void *src, __m256i b0, __m256i b1, int two)
{
    int32_t v;
    __m256i bv;
    memcpy(&v, src, 4);
    bv = _mm256_set1_epi32(v);
    *c0 = _mm256_add_epi32(*c0, _mm256_madd_epi16(bv, b0));
    if (two)
        *c1 = _mm256_add_epi32(*c1, _mm256_madd_epi16(bv, b1));
}

/* n int16 (a multiple of 2) from each pixel's xr[r] against the W steps at
 * wk into the sums acc (pixel r's vector q at acc[2 r + q]): nv vectors of
 * 8 channels. The sums are in registers only here: in a loop nest that
 * also keeps the tile's pixel positions live, GCC spilled sums or pixel
 * pointers to the stack at every step (the 6 x 2 tile at 0.7x). */
static inline CPU_INLINE CPU_TARGET_AVX2 void
qc16_steps(const int16_t *const *xr, int64_t n, int64_t npos, int64_t ps, int64_t nrows,
           int64_t rs, const int16_t *wk, int mr, int nv, __m256i *acc)
{
    const int16_t *x[QC16_MR1];
    __m256i c[QC16_MR1][2];
#pragma GCC unroll 16
    for (int r = 0; r < QC16_MR1; r++) {
        if (r >= mr)
            break;
        x[r] = xr[r];
        c[r][0] = acc[2 * r];
        c[r][1] = nv > 1 ? acc[2 * r + 1] : c[r][0];
    }
    for (int64_t i = 0; i < nrows; i++)
        for (int64_t jj = 0, cc = i * rs, end = cc + n; jj < npos;
             jj++, cc = i * rs + jj * ps, end = cc + n)
            for (; cc < end; cc += 2, wk += 2 * OP_QC_PANEL) {
                const __m256i b0 = _mm256_loadu_si256((const __m256i *)wk);
                const __m256i b1 =
                    nv > 1 ? _mm256_loadu_si256((const __m256i *)(wk + 16)) : b0;
#pragma GCC unroll 16
                for (int r = 0; r < QC16_MR1; r++) {
                    if (r >= mr)
                        break;
                    qc16_madd(&c[r][0], &c[r][1], x[r] + cc, b0, b1, nv > 1);
                }
            }
#pragma GCC unroll 16
    for (int r = 0; r < QC16_MR1; r++) {
        if (r >= mr)
            break;
        acc[2 * r] = c[r][0];
        if (nv > 1)
            acc[2 * r + 1] = c[r][1];
    }
}

#define QC16_STEPS(MR, NV)                                                               \
    case MR:                                                                             \
        qc16_steps(xr, n, npos, ps, nrows, rs, wk, MR, NV, acc);                         \
        break;

/* qc16_steps with mr and nv made constants. */
static __attribute__((noinline)) CPU_TARGET_AVX2 void
qc16_steps_any(const int16_t *const *xr, int64_t n, int64_t npos, int64_t ps,
               int64_t nrows, int64_t rs, const int16_t *wk, int mr, int nv, __m256i *acc)
{
    if (nv == 1) {
        switch (mr) {
            QC16_STEPS(1, 1)
            QC16_STEPS(2, 1)
            QC16_STEPS(3, 1)
            QC16_STEPS(4, 1)
            QC16_STEPS(5, 1)
            QC16_STEPS(6, 1)
            QC16_STEPS(7, 1)
        default:
            QC16_STEPS(8, 1)
        }
        return;
    }
    switch (mr) {
        QC16_STEPS(1, 2)
        QC16_STEPS(2, 2)
        QC16_STEPS(3, 2)
        QC16_STEPS(4, 2)
        QC16_STEPS(5, 2)
    default:
        QC16_STEPS(6, 2)
    }
}

/* 8 sums requantized (qgemm.h's store pass in vectors: the same float
 * operations in the same order) as int32. */
static inline CPU_INLINE CPU_TARGET_AVX2 __m256i qc16_requant(__m256i v, __m256 scale,
                                                              __m256 flo, __m256 fhi,
                                                              __m256i zp)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), scale);
    /* max/min return their second operand when the first is NaN: a NaN
     * takes the low end, as the scalar f >= flo ? f : flo. */
    f = _mm256_max_ps(f, flo);
    f = _mm256_min_ps(f, fhi);
    f = _mm256_sub_ps(_mm256_add_ps(f, magic), magic);
    return _mm256_add_epi32(_mm256_cvttps_epi32(f), zp);
}

/* 8 int32 in the output's range as 8 int16 (exact: |v| <= 255). */
static inline CPU_INLINE CPU_TARGET_AVX2 __m128i qc16_narrow(__m256i v)
{
    return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

/* 16 int16 (w0 then w1) as bytes, the first `keep` (at most 16) at y:
 * fixed-size moves (a variable memcpy was a libc call a pixel: densenet_w8's
 * 20-channel layers, 4 in the last panel). */
static inline CPU_INLINE CPU_TARGET_AVX2 void qc16_put(uint8_t *y, __m128i w0, __m128i w1,
                                                       int is_u8, int64_t keep)
{
    const __m128i b = is_u8 ? _mm_packus_epi16(w0, w1) : _mm_packs_epi16(w0, w1);
    uint8_t tmp[16];
    int64_t k = 0;
    if (keep == 16) {
        _mm_storeu_si128((__m128i *)(void *)y, b);
        return;
    }
    _mm_storeu_si128((__m128i *)(void *)tmp, b);
    if (keep - k >= 8)
        memcpy(y + k, tmp + k, 8), k += 8;
    if (keep - k >= 4)
        memcpy(y + k, tmp + k, 4), k += 4;
    for (; k < keep; k++)
        y[k] = tmp[k];
}

/* What the store of a panel's tiles needs, set once a panel. */
typedef struct qc16_store {
    __m256i ct[2], zp;
    __m256 sc[2], flo, fhi;
    int64_t m0, keep; /* the panel's first channel, channels stored */
    int nv;
} qc16_store;

/* mr pixels from p of panel s (st). x is padded (a->wide): every window
 * lies inside it, so a kernel row is read without bounds checks, in one
 * run where it is contiguous. */
static CPU_TARGET_AVX2 void qc16_tile(const op_qc_args *a, const qc16_store *st,
                                      int64_t p, int mr, int64_t s)
{
    const int64_t C4 = a->C4, ldx = a->ldx, pstride = a->kh * a->kw * C4 * OP_QC_PANEL;
    const int16_t *xt = (const int16_t *)(const void *)a->xt;
    const int16_t *wk = (const int16_t *)(const void *)a->wp + s * pstride;
    const int nv = st->nv;
    const int16_t *x0[QC16_MR1];
    __m256i acc[2 * QC16_MR1];
    int64_t oh = p / a->OW, ow = p % a->OW;
    for (int r = 0; r < mr; r++) {
        x0[r] = xt + (oh * a->sh * a->W + ow * a->sw) * ldx;
        if (++ow == a->OW)
            ow = 0, oh++;
        acc[2 * r] = acc[2 * r + 1] = _mm256_setzero_si256();
    }
    /* the kernel rows (a->dh W ldx apart) in one call: each one run of kw
     * C4, or kw runs of C4 (dilated, or a group's channels within the
     * pixel) */
    if (a->dw == 1 && ldx == C4)
        qc16_steps_any(x0, a->kw * C4, 1, 0, a->kh, a->dh * a->W * ldx, wk, mr, nv, acc);
    else
        qc16_steps_any(x0, C4, a->kw, a->dw * ldx, a->kh, a->dh * a->W * ldx, wk, mr, nv,
                       acc);
    for (int r = 0; r < mr; r++) {
        __m128i w[2];
        uint8_t *y = a->yt + (p + r) * a->M16 + st->m0;
        for (int q = 0; q < 2; q++)
            w[q] = q < nv ? qc16_narrow(
                                qc16_requant(_mm256_add_epi32(acc[2 * r + q], st->ct[q]),
                                             st->sc[q], st->flo, st->fhi, st->zp))
                          : _mm_setzero_si128();
        qc16_put(y, w[0], w[1], a->is_u8, st->keep);
    }
}

static CPU_TARGET_AVX2 void qc16_conv(const op_qc_args *a, int64_t p0, int64_t p1,
                                      int64_t s0, int64_t s1)
{
    const int32_t lo = a->is_u8 ? 0 : -128, hi = a->is_u8 ? 255 : 127;
    qc16_store st;
    memset(&st, 0, sizeof st);
    st.flo = _mm256_set1_ps((float)(lo - a->zp));
    st.fhi = _mm256_set1_ps((float)(hi - a->zp));
    st.zp = _mm256_set1_epi32(a->zp);
    /* Panel by panel, over the pixels; a panel of 8 channels or fewer (a
     * group's last, or all of a narrow layer) takes the tile of one vector
     * and more pixels. */
    for (int64_t s = s0; s < s1; s++) {
        int64_t mrmax;
        st.m0 = s * OP_QC_PANEL;
        st.nv = a->M - st.m0 > 8 ? 2 : 1;
        /* a group's last panel stops at its channels: the next group's may
         * be another thread's */
        st.keep = a->M - st.m0 < 8 * st.nv ? a->M - st.m0 : 8 * st.nv;
        for (int q = 0; q < 2; q++) {
            st.ct[q] = _mm256_loadu_si256((const __m256i *)(a->cterm + st.m0 + 8 * q));
            st.sc[q] = _mm256_loadu_ps(a->scale + st.m0 + 8 * q);
        }
        mrmax = st.nv == 1 ? QC16_MR1 : QC16_MR2;
        for (int64_t p = p0; p < p1; p += mrmax)
            qc16_tile(a, &st, p, (int)(p1 - p < mrmax ? p1 - p : mrmax), s);
    }
}
#endif

#if CPU_HAVE_AVX2_BUILD
/* The store's constants of the channel-first kernels, set once a tile. */
typedef struct qc_cf_consts {
    __m256 flo, fhi;
    __m256i zp;
} qc_cf_consts;

static inline CPU_INLINE CPU_TARGET_AVX2 qc_cf_consts
qc_cf_consts_of(const op_qc_cf_out *o)
{
    const int32_t lo = o->is_u8 ? 0 : -128, hi = o->is_u8 ? 255 : 127;
    qc_cf_consts k;
    k.flo = _mm256_set1_ps((float)(lo - o->zp));
    k.fhi = _mm256_set1_ps((float)(hi - o->zp));
    k.zp = _mm256_set1_epi32(o->zp);
    return k;
}

/* Channel m's 16 sums (c0 then c1) requantized into y, the first `keep`. */
static inline CPU_INLINE CPU_TARGET_AVX2 void
qc_cf_store(const op_qc_cf_out *o, const qc_cf_consts *k, uint8_t *y, int64_t m,
            __m256i c0, __m256i c1, int64_t keep)
{
    const __m256i ct = _mm256_set1_epi32(o->cterm[m]);
    const __m256 sc = _mm256_set1_ps(o->scale[m]);
    const __m128i w0 =
        qc16_narrow(qc16_requant(_mm256_add_epi32(c0, ct), sc, k->flo, k->fhi, k->zp));
    const __m128i w1 =
        qc16_narrow(qc16_requant(_mm256_add_epi32(c1, ct), sc, k->flo, k->fhi, k->zp));
    const __m128i b = o->is_u8 ? _mm_packus_epi16(w0, w1) : _mm_packs_epi16(w0, w1);
    if (keep == 16) {
        _mm_storeu_si128((__m128i *)(void *)y, b);
    } else {
        uint8_t tmp[16];
        _mm_storeu_si128((__m128i *)(void *)tmp, b);
        for (int64_t t = 0; t < keep; t++)
            y[t] = tmp[t];
    }
}

#define QC_PW_MT 4 /* output channels of a pointwise tile */
#define QC_PW_NV 2 /* vectors of 8 pixels of a pointwise tile */

/* MT channels from m by the 16 pixels from p (constants after inlining);
 * 8 sums and the two pixel vectors in registers, a broadcast a product. */
static inline CPU_INLINE CPU_TARGET_AVX2 void qc_pw_tile(const op_qc_pw_args *a,
                                                         int64_t m, int64_t p, int mt)
{
    const int16_t *wm[QC_PW_MT];
    const uint16_t *xq = a->xp + 2 * p;
    __m256i c[QC_PW_MT][QC_PW_NV];
#pragma GCC unroll 8
    for (int i = 0; i < QC_PW_MT; i++) {
        const int64_t mi = m + (i < mt ? i : 0);
        /* op_qc_pack_w's wide layout at kp 0: channel mi's pair c2 at
         * panel (mi / 16) + c2 32 + (mi % 16) 2 */
        wm[i] = a->o.wp + mi / OP_QC_PANEL * a->o.C4 * OP_QC_PANEL + mi % OP_QC_PANEL * 2;
        c[i][0] = c[i][1] = _mm256_setzero_si256();
    }
    for (int64_t q = 0; q < a->C2; q++, xq += 2 * a->P16) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)xq);
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(xq + 16));
#pragma GCC unroll 8
        for (int i = 0; i < QC_PW_MT; i++) {
            if (i >= mt)
                break;
            qc16_madd(&c[i][0], &c[i][1], wm[i] + q * 2 * OP_QC_PANEL, x0, x1, 1);
        }
    }
    {
        const int32_t lo = a->o.is_u8 ? 0 : -128, hi = a->o.is_u8 ? 255 : 127;
        const __m256 flo = _mm256_set1_ps((float)(lo - a->o.zp));
        const __m256 fhi = _mm256_set1_ps((float)(hi - a->o.zp));
        const __m256i zp = _mm256_set1_epi32(a->o.zp);
        const int64_t keep = a->P - p < 16 ? a->P - p : 16;
#pragma GCC unroll 8
        for (int i = 0; i < QC_PW_MT; i++) {
            __m128i w[2], b;
            uint8_t *y = a->y + (m + i) * a->P + p;
            if (i >= mt)
                break;
            for (int v = 0; v < QC_PW_NV; v++)
                w[v] = qc16_narrow(qc16_requant(
                    _mm256_add_epi32(c[i][v], _mm256_set1_epi32(a->o.cterm[m + i])),
                    _mm256_set1_ps(a->o.scale[m + i]), flo, fhi, zp));
            b = a->o.is_u8 ? _mm_packus_epi16(w[0], w[1]) : _mm_packs_epi16(w[0], w[1]);
            if (keep == 16) {
                _mm_storeu_si128((__m128i *)(void *)y, b);
            } else {
                uint8_t tmp[16];
                _mm_storeu_si128((__m128i *)(void *)tmp, b);
                for (int64_t k = 0; k < keep; k++)
                    y[k] = tmp[k];
            }
        }
    }
}

static CPU_TARGET_AVX2 void qc_pw_run(const op_qc_pw_args *a, int64_t m0, int64_t m1,
                                      int64_t p0, int64_t p1)
{
    for (int64_t m = m0; m < m1; m += QC_PW_MT) {
        const int mt = (int)(m1 - m < QC_PW_MT ? m1 - m : QC_PW_MT);
        for (int64_t p = p0; p < p1; p += 8 * QC_PW_NV) {
            switch (mt) {
            case 1:
                qc_pw_tile(a, m, p, 1);
                break;
            case 2:
                qc_pw_tile(a, m, p, 2);
                break;
            case 3:
                qc_pw_tile(a, m, p, 3);
                break;
            default:
                qc_pw_tile(a, m, p, 4);
            }
        }
    }
}
#endif

void op_qc_pw(const op_qc_pw_args *a, int64_t m0, int64_t m1, int64_t p0, int64_t p1)
{
#if CPU_HAVE_AVX2_BUILD
    qc_pw_run(a, m0, m1, p0, p1);
#else
    /* Never called: op_qg_wide() is 0 without the x86 builds. */
    (void)a, (void)m0, (void)m1, (void)p0, (void)p1;
#endif
}

/* `n` pixels of pair (a, b) (b NULL: a missing odd channel, 0) at d, each
 * byte ^ flip, as uint16 pairs. */
static inline CPU_INLINE void qc_cf_row(const uint8_t *a, const uint8_t *b, int64_t n,
                                        uint8_t flip, uint16_t *d)
{
    const qc_u8x16 fv = {flip, flip, flip, flip, flip, flip, flip, flip,
                         flip, flip, flip, flip, flip, flip, flip, flip};
    int64_t p = 0;
    for (; p + 16 <= n; p += 16) {
        qc_u8x16 u, v = {0}, lo, hi;
        qc_u16x16 w;
        memcpy(&u, a + p, 16);
        u ^= fv;
        if (b) {
            memcpy(&v, b + p, 16);
            v ^= fv;
        }
        lo = __builtin_shufflevector(u, v, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6,
                                     22, 7, 23);
        hi = __builtin_shufflevector(u, v, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29,
                                     14, 30, 15, 31);
        w = __builtin_convertvector(lo, qc_u16x16);
        memcpy(d + 2 * p, &w, 32);
        w = __builtin_convertvector(hi, qc_u16x16);
        memcpy(d + 2 * p + 16, &w, 32);
    }
    for (; p < n; p++) {
        d[2 * p] = (uint8_t)(a[p] ^ flip);
        d[2 * p + 1] = b ? (uint8_t)(b[p] ^ flip) : 0;
    }
}

void op_qc_pw_pairs(const uint8_t *x, int64_t C, int64_t P, int64_t P16, uint8_t flip,
                    int64_t q0, int64_t q1, uint16_t *xp)
{
    for (int64_t q = q0; q < q1; q++) {
        const uint8_t *x0 = x + 2 * q * P;
        qc_cf_row(x0, 2 * q + 1 < C ? x0 + P : NULL, P, flip, xp + q * P16 * 2);
        memset(xp + (q * P16 + P) * 2, 0, (size_t)(P16 - P) * 4);
    }
}

static inline CPU_INLINE void qc_cf_pairs_body(const uint8_t *x, int64_t C, int64_t H,
                                               int64_t W, int64_t top, int64_t left,
                                               int64_t Hp, int64_t Wp, int64_t PP,
                                               uint8_t flip, uint16_t ax, int64_t q0,
                                               int64_t q1, uint16_t *xp)
{
    for (int64_t q = q0; q < q1; q++) {
        const uint8_t *x0 = x + 2 * q * H * W, *x1 = 2 * q + 1 < C ? x0 + H * W : NULL;
        const uint16_t pad1 = x1 ? ax : 0;
        uint16_t *d = xp + q * PP * 2;
        for (int64_t h = 0; h < Hp; h++) {
            uint16_t *row = d + h * Wp * 2;
            const int inside = h >= top && h < top + H;
            /* the padding pixels: the whole row, or left and right of x */
            for (int64_t w = 0; w < Wp; w++) {
                if (inside && w == left)
                    w += W;
                if (w < Wp)
                    row[2 * w] = ax, row[2 * w + 1] = pad1;
            }
            if (inside)
                qc_cf_row(x0 + (h - top) * W, x1 ? x1 + (h - top) * W : NULL, W, flip,
                          row + left * 2);
        }
        memset(d + Hp * Wp * 2, 0, (size_t)(PP - Hp * Wp) * 4);
    }
}

CPU_BUILDS(qc_cf_pairs, qc_cf_pairs_body,
           (const uint8_t *x, int64_t C, int64_t H, int64_t W, int64_t top, int64_t left,
            int64_t Hp, int64_t Wp, int64_t PP, uint8_t flip, uint16_t ax, int64_t q0,
            int64_t q1, uint16_t *xp),
           (x, C, H, W, top, left, Hp, Wp, PP, flip, ax, q0, q1, xp))

void op_qc_cf_pairs(const uint8_t *x, int64_t C, int64_t H, int64_t W, int64_t top,
                    int64_t left, int64_t Hp, int64_t Wp, int64_t PP, uint8_t flip,
                    uint16_t ax, int64_t q0, int64_t q1, uint16_t *xp)
{
    CPU_PICK(qc_cf_pairs)(x, C, H, W, top, left, Hp, Wp, PP, flip, ax, q0, q1, xp);
}

#if CPU_HAVE_AVX2_BUILD
#define QC_CF_MT 4 /* output channels of a channel-first tile */

/* MT channels from m (one group's) by the 16 outputs from (oh, ow), the
 * first `keep` stored; 8 sums and the two pixel vectors in registers, a
 * broadcast a product. */
static inline CPU_INLINE CPU_TARGET_AVX2 void qc_cf_tile(const op_qc_cf_args *a,
                                                         int64_t m, int64_t oh,
                                                         int64_t ow, int64_t keep, int mt)
{
    const int64_t b = m / a->Mb, ml = m % a->Mb, kvol = a->kh * a->kw;
    /* the group's inputs within its block, as pairs (a pair running into
     * a neighbour group meets W's zeros), and the block's first pair */
    const int64_t cs = ml / a->Mg * a->Cg, c2lo = cs / 2, c2hi = (cs + a->Cg + 1) / 2;
    const int64_t qb = b * (a->Mb / a->Mg) * a->Cg / 2;
    const uint16_t *xb = a->xp + ((qb + c2lo) * a->PP + oh * a->Wp + ow) * 2;
    const int16_t *wm[QC_CF_MT];
    __m256i c[QC_CF_MT][2];
#pragma GCC unroll 4
    for (int i = 0; i < QC_CF_MT; i++) {
        const int64_t mi = ml + (i < mt ? i : 0);
        /* op_qc_pack_w's wide layout: channel mi's pair c2 at position kp
         * at panel (mi / 16) + (kp C4 + 2 c2) 16 + (mi % 16) 2 */
        wm[i] = a->o.wp + b * a->wblock +
                mi / OP_QC_PANEL * kvol * a->o.C4 * OP_QC_PANEL + mi % OP_QC_PANEL * 2;
        c[i][0] = c[i][1] = _mm256_setzero_si256();
    }
    for (int64_t i = 0; i < a->kh; i++)
        for (int64_t j = 0; j < a->kw; j++) {
            const uint16_t *xq = xb + (i * a->dh * a->Wp + j * a->dw) * 2;
            int64_t wo = ((i * a->kw + j) * a->o.C4 + 2 * c2lo) * OP_QC_PANEL;
            for (int64_t c2 = c2lo; c2 < c2hi;
                 c2++, xq += a->PP * 2, wo += 2 * OP_QC_PANEL) {
                const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)xq);
                const __m256i x1 =
                    _mm256_loadu_si256((const __m256i *)(const void *)(xq + 16));
#pragma GCC unroll 4
                for (int k = 0; k < QC_CF_MT; k++) {
                    if (k >= mt)
                        break;
                    qc16_madd(&c[k][0], &c[k][1], wm[k] + wo, x0, x1, 1);
                }
            }
        }
    {
        const qc_cf_consts k = qc_cf_consts_of(&a->o);
#pragma GCC unroll 4
        for (int i = 0; i < QC_CF_MT; i++) {
            if (i >= mt)
                break;
            qc_cf_store(&a->o, &k, a->y + ((m + i) * a->OH + oh) * a->OW + ow, m + i,
                        c[i][0], c[i][1], keep);
        }
    }
}

static CPU_TARGET_AVX2 void qc_cf_run(const op_qc_cf_args *a, int64_t m0, int64_t m1,
                                      int64_t r0, int64_t r1)
{
    for (int64_t m = m0; m < m1;) {
        /* a tile's channels within one group */
        const int64_t gend = (m / a->Mg + 1) * a->Mg, mend = gend < m1 ? gend : m1;
        const int mt = (int)(mend - m < QC_CF_MT ? mend - m : QC_CF_MT);
        for (int64_t oh = r0; oh < r1; oh++)
            for (int64_t ow = 0; ow < a->OW; ow += 16) {
                const int64_t keep = a->OW - ow < 16 ? a->OW - ow : 16;
                switch (mt) {
                case 1:
                    qc_cf_tile(a, m, oh, ow, keep, 1);
                    break;
                case 2:
                    qc_cf_tile(a, m, oh, ow, keep, 2);
                    break;
                case 3:
                    qc_cf_tile(a, m, oh, ow, keep, 3);
                    break;
                default:
                    qc_cf_tile(a, m, oh, ow, keep, 4);
                }
            }
        m += mt;
    }
}
#endif

void op_qc_cf(const op_qc_cf_args *a, int64_t m0, int64_t m1, int64_t r0, int64_t r1)
{
#if CPU_HAVE_AVX2_BUILD
    qc_cf_run(a, m0, m1, r0, r1);
#else
    /* Never called: op_qg_wide() is 0 without the x86 builds. */
    (void)a, (void)m0, (void)m1, (void)r0, (void)r1;
#endif
}

#if CPU_HAVE_AVX2_BUILD
#define QC_TARGET_VNNI                                                                   \
    __attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni,avx2,fma")))

/* The requantization of 16 sums (qgemm.h's store pass in vectors: the
 * same float operations in the same order, so the same bytes). */
static inline CPU_INLINE QC_TARGET_VNNI __m128i qc_requant(__m512i v, __m512 scale,
                                                           __m512 flo, __m512 fhi,
                                                           __m512i zp)
{
    const __m512 magic = _mm512_set1_ps(12582912.0f);
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), scale);
    /* max/min return their second operand when the first is NaN: a NaN
     * takes the low end, as the scalar f >= flo ? f : flo. */
    f = _mm512_max_ps(f, flo);
    f = _mm512_min_ps(f, fhi);
    f = _mm512_sub_ps(_mm512_add_ps(f, magic), magic);
    return _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvttps_epi32(f), zp));
}

/* n bytes (a multiple of 4) from each pixel's xr[r] against the W steps
 * at wk (panels pstride apart) into the sums c. */
static inline CPU_INLINE QC_TARGET_VNNI void qc_steps(const uint8_t *const *xr, int64_t n,
                                                      const uint8_t *wk, int64_t pstride,
                                                      int mr, int np,
                                                      __m512i c[OP_QC_MR][OP_QC_NP])
{
    for (int64_t cc = 0; cc < n; cc += 4, wk += 4 * OP_QC_PANEL) {
        __m512i b[OP_QC_NP];
#pragma GCC unroll 4
        for (int q = 0; q < OP_QC_NP; q++)
            if (q < np)
                b[q] = _mm512_loadu_si512(wk + q * pstride);
#pragma GCC unroll 16
        for (int r = 0; r < OP_QC_MR; r++) {
            int32_t a4;
            __m512i av;
            if (r >= mr)
                break;
            memcpy(&a4, xr[r] + cc, 4);
            av = _mm512_set1_epi32(a4);
#pragma GCC unroll 4
            for (int q = 0; q < OP_QC_NP; q++)
                if (q < np)
                    c[r][q] = _mm512_dpbusd_epi32(c[r][q], av, b[q]);
        }
    }
}

/* MR pixels from p by NP panels from s (constants after inlining). */
static inline CPU_INLINE QC_TARGET_VNNI void qc_tile(const op_qc_args *a, int64_t p,
                                                     int mr, int np, int64_t s)
{
    const int64_t C4 = a->C4, pstride = a->kh * a->kw * C4 * OP_QC_PANEL;
    const uint8_t *wk = a->wp + s * pstride;
    int64_t ih0[OP_QC_MR], iw0[OP_QC_MR];
    __m512i c[OP_QC_MR][OP_QC_NP];
    int64_t oh = p / a->OW, ow = p % a->OW;
    /* Pixels past mr repeat the last one (read, never stored). */
#pragma GCC unroll 16
    for (int r = 0; r < OP_QC_MR; r++) {
        ih0[r] = oh * a->sh - a->ph;
        iw0[r] = ow * a->sw - a->pw;
        if (r + 1 < mr && ++ow == a->OW)
            ow = 0, oh++;
#pragma GCC unroll 4
        for (int n = 0; n < OP_QC_NP; n++)
            c[r][n] = _mm512_setzero_si512();
    }
    for (int64_t i = 0; i < a->kh; i++) {
        /* A kernel row whose kw inputs all lie inside x for every pixel
         * needs no bounds checks; at dilation 1 and with the whole pixel
         * read (one group) it is kw C4 contiguous bytes of xt per pixel,
         * read in one run, as W's positions follow each other in the same
         * order. A row at an edge goes position by position. */
        const int64_t span = (a->kw - 1) * a->dw + 1;
        int inside = 1;
#pragma GCC unroll 16
        for (int r = 0; r < OP_QC_MR; r++) {
            const int64_t ih = ih0[r] + i * a->dh;
            inside =
                inside && ih >= 0 && ih < a->H && iw0[r] >= 0 && iw0[r] + span <= a->W;
        }
        if (inside) {
            const uint8_t *xr[OP_QC_MR];
#pragma GCC unroll 16
            for (int r = 0; r < OP_QC_MR; r++)
                xr[r] = a->xt + ((ih0[r] + i * a->dh) * a->W + iw0[r]) * a->ldx;
            if (a->dw == 1 && a->ldx == C4) {
                qc_steps(xr, a->kw * C4, wk, pstride, mr, np, c);
                wk += a->kw * C4 * OP_QC_PANEL;
                continue;
            }
            for (int64_t jj = 0; jj < a->kw; jj++) {
                qc_steps(xr, C4, wk, pstride, mr, np, c);
                wk += C4 * OP_QC_PANEL;
#pragma GCC unroll 16
                for (int r = 0; r < OP_QC_MR; r++)
                    xr[r] += a->dw * a->ldx;
            }
            continue;
        }
        for (int64_t jj = 0; jj < a->kw; jj++) {
            const uint8_t *xr[OP_QC_MR];
#pragma GCC unroll 16
            for (int r = 0; r < OP_QC_MR; r++) {
                const int64_t ih = ih0[r] + i * a->dh, iw = iw0[r] + jj * a->dw;
                xr[r] = ih >= 0 && ih < a->H && iw >= 0 && iw < a->W
                            ? a->xt + (ih * a->W + iw) * a->ldx
                            : a->zrow;
            }
            qc_steps(xr, C4, wk, pstride, mr, np, c);
            wk += C4 * OP_QC_PANEL;
        }
    }
    {
        const int32_t lo = a->is_u8 ? 0 : -128, hi = a->is_u8 ? 255 : 127;
        const __m512 flo = _mm512_set1_ps((float)(lo - a->zp));
        const __m512 fhi = _mm512_set1_ps((float)(hi - a->zp));
        const __m512i zp = _mm512_set1_epi32(a->zp);
#pragma GCC unroll 4
        for (int n = 0; n < OP_QC_NP; n++) {
            if (n >= np)
                break;
            const int64_t m0 = (s + n) * OP_QC_PANEL;
            const __m512i ct = _mm512_loadu_si512(a->cterm + m0);
            const __m512 sc = _mm512_loadu_ps(a->scale + m0);
            /* a group's last panel stops at its channels: the next group's
             * may be another thread's (asked only for the np panels in use,
             * each of which starts below M) */
            const __mmask16 keep =
                a->M - m0 >= OP_QC_PANEL ? 0xffff : (__mmask16)((1u << (a->M - m0)) - 1u);
#pragma GCC unroll 16
            for (int r = 0; r < OP_QC_MR; r++) {
                if (r >= mr)
                    break;
                _mm_mask_storeu_epi8(
                    a->yt + (p + r) * a->M16 + m0, keep,
                    qc_requant(_mm512_add_epi32(c[r][n], ct), sc, flo, fhi, zp));
            }
        }
    }
}

#define QC_TILE_NP(MR)                                                                   \
    case MR:                                                                             \
        switch (np) {                                                                    \
        case 1:                                                                          \
            qc_tile(a, p, MR, 1, s);                                                     \
            break;                                                                       \
        case 2:                                                                          \
            qc_tile(a, p, MR, 2, s);                                                     \
            break;                                                                       \
        case 3:                                                                          \
            qc_tile(a, p, MR, 3, s);                                                     \
            break;                                                                       \
        default:                                                                         \
            qc_tile(a, p, MR, 4, s);                                                     \
        }                                                                                \
        break;

/* qc_tile with mr and np made constants. */
static QC_TARGET_VNNI void qc_tile_any(const op_qc_args *a, int64_t p, int mr, int np,
                                       int64_t s)
{
    switch (mr) {
        QC_TILE_NP(1)
        QC_TILE_NP(2)
        QC_TILE_NP(3)
        QC_TILE_NP(4)
        QC_TILE_NP(5)
    default:
        QC_TILE_NP(6)
    }
}

static void qc_conv_vnni(const op_qc_args *a, int64_t p0, int64_t p1, int64_t s0,
                         int64_t s1)
{
    /* Panels outermost: a panel's W (kvol C4 64 bytes) stays in cache
     * over the pixels. */
    for (int64_t s = s0; s < s1; s += OP_QC_NP) {
        const int np = (int)(s1 - s < OP_QC_NP ? s1 - s : OP_QC_NP);
        for (int64_t p = p0; p < p1; p += OP_QC_MR)
            qc_tile_any(a, p, (int)(p1 - p < OP_QC_MR ? p1 - p : OP_QC_MR), np, s);
    }
}
#endif

void op_qc_conv(const op_qc_args *a, int64_t p0, int64_t p1, int64_t s0, int64_t s1)
{
#if CPU_HAVE_AVX2_BUILD
    if (a->wide)
        qc16_conv(a, p0, p1, s0, s1);
    else
        qc_conv_vnni(a, p0, p1, s0, s1);
#else
    /* Never called: op_qc_hwc_kind() is 0 without the x86 builds. */
    (void)a, (void)p0, (void)p1, (void)s0, (void)s1;
#endif
}

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
                  uint8_t flip, uint8_t *wp, int32_t *colsum)
{
    const int64_t C4 = op_qc_c4(M / Mb * C), S = (M + OP_QC_PANEL - 1) / OP_QC_PANEL;
    memset(wp, 0, (size_t)(S * OP_QC_PANEL * kvol * C4));
    for (int64_t m = 0; m < M; m++) {
        uint8_t *p = wp + m / OP_QC_PANEL * kvol * C4 * OP_QC_PANEL + m % OP_QC_PANEL * 4;
        const int64_t c0 = m / Mb * C;
        uint32_t sum = 0;
        for (int64_t c = 0; c < C; c++)
            for (int64_t kp = 0; kp < kvol; kp++) {
                const uint8_t v = W[(m * C + c) * kvol + kp] ^ flip;
                p[(kp * C4 + (c0 + c) / 4 * 4) * OP_QC_PANEL + (c0 + c) % 4] = v;
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

/* In blocks of pixels so that a block's C4-byte rows stay in L1 while the
 * channels are written into them; 16 channels by 16 pixels at a time
 * through a byte transpose, the rest byte by byte. */
#define QC_HWC_BLOCK 256

void op_qc_to_hwc(const uint8_t *x, int64_t C, int64_t hw, uint8_t flip, int64_t C4,
                  int64_t p0, int64_t p1, uint8_t *xt)
{
    const qc_u8x16 fv = {flip, flip, flip, flip, flip, flip, flip, flip,
                         flip, flip, flip, flip, flip, flip, flip, flip};
    if (C4 == 4) {
        /* An image's stem (C <= 4): 16 pixels of four channels are 64
         * contiguous bytes, op_qg_zip4 of four 16-byte rows (a zero row
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
            memcpy(xt + p * 4, t, 64);
        }
        for (; p < p1; p++)
            for (int64_t c = 0; c < 4; c++)
                xt[p * 4 + c] = c < C ? x[c * hw + p] ^ flip : 0;
        return;
    }
    for (int64_t b0 = p0; b0 < p1; b0 += QC_HWC_BLOCK) {
        const int64_t b1 = b0 + QC_HWC_BLOCK < p1 ? b0 + QC_HWC_BLOCK : p1;
        int64_t c = 0;
        for (; c + 16 <= C; c += 16) {
            int64_t p = b0;
            for (; p + 16 <= b1; p += 16) {
                qc_u8x16 r[16];
                for (int i = 0; i < 16; i++) {
                    memcpy(&r[i], x + (c + i) * hw + p, 16);
                    r[i] ^= fv;
                }
                qc_transpose16(r);
                for (int i = 0; i < 16; i++)
                    memcpy(xt + (p + i) * C4 + c, &r[i], 16);
            }
            for (; p < b1; p++)
                for (int i = 0; i < 16; i++)
                    xt[p * C4 + c + i] = x[(c + i) * hw + p] ^ flip;
        }
        for (; c < C; c++) {
            const uint8_t *xc = x + c * hw;
            uint8_t *d = xt + c;
            for (int64_t p = b0; p < b1; p++)
                d[p * C4] = xc[p] ^ flip;
        }
        for (c = C; c < C4; c++)
            for (int64_t p = b0; p < b1; p++)
                xt[p * C4 + c] = 0;
    }
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

void op_qc_conv(const op_qc_args *a, int64_t p0, int64_t p1, int64_t s0, int64_t s1)
{
    /* Panels outermost: a panel's W (kvol C4 64 bytes) stays in cache
     * over the pixels. */
    for (int64_t s = s0; s < s1; s += OP_QC_NP) {
        const int np = (int)(s1 - s < OP_QC_NP ? s1 - s : OP_QC_NP);
        for (int64_t p = p0; p < p1; p += OP_QC_MR)
            qc_tile_any(a, p, (int)(p1 - p < OP_QC_MR ? p1 - p : OP_QC_MR), np, s);
    }
}
#else
void op_qc_conv(const op_qc_args *a, int64_t p0, int64_t p1, int64_t s0, int64_t s1)
{
    /* Never called: op_qg_vnni() is 0 without the x86 builds. */
    (void)a, (void)p0, (void)p1, (void)s0, (void)s1;
}
#endif

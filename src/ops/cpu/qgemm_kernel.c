/*
 * The 8-bit integer matrix product (qgemm.h): packing, the register tiles
 * of each build and the store pass (zero-point terms, bias,
 * requantization).
 */
#include "ops/cpu/qgemm.h"

#include <stdatomic.h>
#include <string.h>

#include "base/base.h"
#include "ops/cpu/cpu_kernels.h"

#if CPU_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

int64_t op_qg_k4(int64_t K)
{
    return K < 0 || K > INT64_MAX - 3 ? -1 : (K + 3) / 4 * 4;
}

int64_t op_qg_panel_bytes(int64_t K, int64_t N)
{
    int64_t k4 = op_qg_k4(K), s = (N + OP_QG_PANEL - 1) / OP_QG_PANEL, n;
    if (k4 < 0 || N < 0 || !base_mul_i64(k4, s * OP_QG_PANEL, &n))
        return -1;
    return n;
}

typedef uint8_t qg_u8x16 __attribute__((vector_size(16)));
typedef int8_t qg_i8x16 __attribute__((vector_size(16)));
typedef int32_t qg_i32x16 __attribute__((vector_size(64)));

typedef int16_t qg_i16x16 __attribute__((vector_size(32)));

/* Rows of int16 partial column sums before they move to int32: 128 rows of
 * bytes sum to at most 255 x 128 = 32640 in magnitude. */
#define QG_SUM16_ROWS 128

/* The panels of op_qg_pack_b. Four rows of 16 bytes become one panel step
 * (byte (j, t) of the step is row t's column j) through two rounds of
 * interleaves, bytes then 16-bit pairs (SSE2's punpck shapes, so the plain
 * build needs no byte shuffle); the column sums run in int16 lanes. */
static inline CPU_INLINE void qg_pack_b_body(int64_t K, int64_t N, const uint8_t *B,
                                             int64_t ldb, uint8_t flip, int as_signed,
                                             int64_t s0, int64_t s1, uint8_t *bp,
                                             int32_t *colsum)
{
    const int64_t K4 = op_qg_k4(K);
    const qg_u8x16 fv = {flip, flip, flip, flip, flip, flip, flip, flip,
                         flip, flip, flip, flip, flip, flip, flip, flip};
    for (int64_t s = s0; s < s1; s++) {
        const int64_t j0 = s * OP_QG_PANEL;
        const int64_t nc = N - j0 < OP_QG_PANEL ? N - j0 : OP_QG_PANEL;
        uint8_t *p = bp + s * OP_QG_PANEL * K4;
        qg_i32x16 cs = {0};
        qg_i16x16 h = {0};
        for (int64_t k = 0; k < K4; k += 4) {
            qg_u8x16 r[4], u[4];
            for (int q = 0; q < 4; q++) {
                if (k + q < K && nc == OP_QG_PANEL) {
                    memcpy(&r[q], B + (k + q) * ldb + j0, 16);
                    r[q] ^= fv;
                } else {
                    uint8_t tmp[16] = {0};
                    for (int64_t j = 0; k + q < K && j < nc; j++)
                        tmp[j] = B[(k + q) * ldb + j0 + j] ^ flip;
                    memcpy(&r[q], tmp, 16);
                }
                if (as_signed)
                    h += __builtin_convertvector((qg_i8x16)r[q], qg_i16x16);
                else
                    h += __builtin_convertvector(r[q], qg_i16x16);
            }
            if ((k + 4) % QG_SUM16_ROWS == 0) {
                cs += __builtin_convertvector(h, qg_i32x16);
                h = (qg_i16x16){0};
            }
            op_qg_zip4(r, u);
            memcpy(p + k * OP_QG_PANEL, u, 64);
        }
        cs += __builtin_convertvector(h, qg_i32x16);
        for (int64_t j = 0; j < nc; j++)
            colsum[j0 + j] = cs[j];
    }
}

CPU_BUILDS(qg_pack_b, qg_pack_b_body,
           (int64_t K, int64_t N, const uint8_t *B, int64_t ldb, uint8_t flip,
            int as_signed, int64_t s0, int64_t s1, uint8_t *bp, int32_t *colsum),
           (K, N, B, ldb, flip, as_signed, s0, s1, bp, colsum))

void op_qg_pack_b(int64_t K, int64_t N, const uint8_t *B, int64_t ldb, uint8_t flip,
                  int as_signed, int64_t s0, int64_t s1, uint8_t *bp, int32_t *colsum)
{
    CPU_PICK(qg_pack_b)(K, N, B, ldb, flip, as_signed, s0, s1, bp, colsum);
}

void op_qg_pack_a(int64_t K, const uint8_t *A, int64_t lda, uint8_t flip, int as_signed,
                  int64_t r0, int64_t r1, uint8_t *ap, int32_t *rowsum)
{
    const int64_t K4 = op_qg_k4(K);
    for (int64_t i = r0; i < r1; i++) {
        const uint8_t *a = A + i * lda;
        uint8_t *d = ap + i * K4;
        uint32_t sum = 0;
        for (int64_t k = 0; k < K; k++) {
            uint8_t v = a[k] ^ flip;
            d[k] = v;
            sum += as_signed ? (uint32_t)(int32_t)(int8_t)v : v;
        }
        for (int64_t k = K; k < K4; k++)
            d[k] = 0;
        rowsum[i] = (int32_t)sum;
    }
}

void op_qg_colterm(const int32_t *colsum, const int32_t *beta, int64_t K, int64_t N,
                   int32_t *colterm)
{
    for (int64_t j = 0; j < N; j++)
        colterm[j] = (int32_t)((uint32_t)colsum[j] - (uint32_t)K * (uint32_t)beta[j]);
}

/* ---- the store pass ------------------------------------------------------ */

/* Rows [0, mr) and columns [0, nc) of the tile acc (raw sums of rows i0..
 * and columns j0..) into C. */
static inline CPU_INLINE void qg_store_body(const op_qg_args *a,
                                            int32_t acc[OP_QG_MR][OP_QG_NR], int64_t i0,
                                            int64_t j0, int mr, int nc)
{
    const int32_t *beta = a->beta + j0, *ct = a->colterm + j0;
    const int32_t *bcol = a->bias && !a->bias_rows ? a->bias + j0 : NULL;
    const float *scol = a->scale && !a->scale_rows ? a->scale + j0 : NULL;
    const int32_t lo = a->out == OP_QG_OUT_U8 ? 0 : -128;
    const int32_t hi = a->out == OP_QG_OUT_U8 ? 255 : 127;
    const float flo = (float)(lo - a->zp), fhi = (float)(hi - a->zp);
    for (int r = 0; r < mr; r++) {
        const int64_t i = i0 + r;
        const uint32_t ra = (uint32_t)a->rowsum[i];
        const uint32_t al = (uint32_t)a->alpha[i * a->alpha_step];
        const uint32_t brow = a->bias && a->bias_rows ? (uint32_t)a->bias[i] : 0;
        const float srow = a->scale && a->scale_rows ? a->scale[i * a->scale_step] : 0;
        int32_t v[OP_QG_NR];
        for (int j = 0; j < nc; j++)
            v[j] =
                (int32_t)((uint32_t)acc[r][j] - (uint32_t)beta[j] * ra -
                          al * (uint32_t)ct[j] + brow + (bcol ? (uint32_t)bcol[j] : 0u));
        if (a->out == OP_QG_OUT_I32) {
            memcpy((int32_t *)a->C + i * a->ldc + j0, v, sizeof(int32_t) * (size_t)nc);
            continue;
        }
        if (a->out == OP_QG_OUT_F32) {
            float *y = (float *)a->C + i * a->ldc + j0;
            if (a->fbias)
                for (int j = 0; j < nc; j++)
                    y[j] = (float)v[j] * (scol ? scol[j] : srow) + a->fbias[j0 + j];
            else
                for (int j = 0; j < nc; j++)
                    y[j] = (float)v[j] * (scol ? scol[j] : srow);
            continue;
        }
        {
            uint8_t *y = (uint8_t *)a->C + i * a->ldc + j0;
            for (int j = 0; j < nc; j++) {
                float f = (float)v[j] * (scol ? scol[j] : srow);
                /* NaN (a NaN scale) takes the low end; rounding the clamped
                 * value is the same as clamping the rounded one, the
                 * bounds being integers. 1.5 2^23 rounds |f| < 2^22 to an
                 * integer, half to even. */
                f = f >= flo ? f : flo;
                f = f <= fhi ? f : fhi;
                f = (f + 12582912.0f) - 12582912.0f;
                y[j] = (uint8_t)((int32_t)f + a->zp);
            }
        }
    }
}

/* Rows [i0, i1) and columns [j0, j1) of the product in register tiles,
 * columns outermost (a tile's panels stay in cache over the rows), each
 * tile's raw sums from TILE(ap, K4, bp, pstride, mr, np, a_u8, acc), then
 * stored. */
#define QG_GEMM_LOOP(TILE, a, i0, i1, j0, j1)                                            \
    do {                                                                                 \
        const int64_t K4_ = op_qg_k4((a)->K), ps_ = K4_ * OP_QG_PANEL;                   \
        int32_t acc_[OP_QG_MR][OP_QG_NR];                                                \
        for (int64_t j_ = (j0); j_ < (j1); j_ += OP_QG_NR) {                             \
            const int nc_ = (int)((j1)-j_ < OP_QG_NR ? (j1)-j_ : OP_QG_NR);              \
            const uint8_t *bp_ = (a)->bp + j_ / OP_QG_PANEL * ps_;                       \
            for (int64_t i_ = (i0); i_ < (i1); i_ += OP_QG_MR) {                         \
                const int mr_ = (int)((i1)-i_ < OP_QG_MR ? (i1)-i_ : OP_QG_MR);          \
                TILE((a)->ap + i_ * K4_, K4_, bp_, ps_, mr_, nc_ > OP_QG_PANEL ? 2 : 1,  \
                     (a)->a_u8, acc_);                                                   \
                qg_store_body((a), acc_, i_, j_, mr_, nc_);                              \
            }                                                                            \
        }                                                                                \
    } while (0)

/* ---- the portable tile --------------------------------------------------- */

/* Raw sums of rows [0, mr) of ap (rows K4 apart) and the np panels at bp
 * (pstride bytes apart) into acc. */
static inline CPU_INLINE void qg_tile_port_body(const uint8_t *ap, int64_t K4,
                                                const uint8_t *bp, int64_t pstride,
                                                int mr, int np, int a_u8,
                                                int32_t acc[OP_QG_MR][OP_QG_NR])
{
    memset(acc, 0, sizeof(int32_t) * OP_QG_MR * OP_QG_NR);
    for (int p = 0; p < np; p++)
        for (int r = 0; r < mr; r++) {
            const uint8_t *ar = ap + r * K4;
            int32_t s[OP_QG_PANEL] = {0};
            for (int64_t k = 0; k < K4; k += 4) {
                const uint8_t *b = bp + p * pstride + k * OP_QG_PANEL;
                int32_t a0, a1, a2, a3;
                if (a_u8) {
                    a0 = ar[k], a1 = ar[k + 1], a2 = ar[k + 2], a3 = ar[k + 3];
                    for (int j = 0; j < OP_QG_PANEL; j++)
                        s[j] += a0 * (int8_t)b[4 * j] + a1 * (int8_t)b[4 * j + 1] +
                                a2 * (int8_t)b[4 * j + 2] + a3 * (int8_t)b[4 * j + 3];
                } else {
                    a0 = (int8_t)ar[k], a1 = (int8_t)ar[k + 1], a2 = (int8_t)ar[k + 2],
                    a3 = (int8_t)ar[k + 3];
                    for (int j = 0; j < OP_QG_PANEL; j++)
                        s[j] += a0 * b[4 * j] + a1 * b[4 * j + 1] + a2 * b[4 * j + 2] +
                                a3 * b[4 * j + 3];
                }
            }
            memcpy(&acc[r][p * OP_QG_PANEL], s, sizeof s);
        }
}

static inline CPU_INLINE void qg_gemm_port_body(const op_qg_args *a, int64_t i0,
                                                int64_t i1, int64_t j0, int64_t j1)
{
    QG_GEMM_LOOP(qg_tile_port_body, a, i0, i1, j0, j1);
}

CPU_BUILDS(qg_gemm_port, qg_gemm_port_body,
           (const op_qg_args *a, int64_t i0, int64_t i1, int64_t j0, int64_t j1),
           (a, i0, i1, j0, j1))

/* ---- the AVX-512 VNNI tile ------------------------------------------------ */

#if CPU_HAVE_AVX2_BUILD
/* Four bytes of A' (one k step of a row) as one int32, to broadcast. */
static inline CPU_INLINE int32_t qg_a4(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

#define QG_TARGET_VNNI                                                                   \
    __attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni,avx2,fma")))

/* MR rows by NP panels (constants after inlining) of raw sums, each four
 * k one vpdpbusd per row and panel: A' four bytes broadcast, B' a panel's
 * 64 bytes. */
static inline CPU_INLINE QG_TARGET_VNNI void
qg_tile_vnni(const uint8_t *ap, int64_t K4, const uint8_t *bp, int64_t pstride, int mr,
             int np, int a_u8, int32_t acc[OP_QG_MR][OP_QG_NR])
{
    __m512i c[OP_QG_MR][2];
#pragma GCC unroll 16
    for (int r = 0; r < OP_QG_MR; r++)
        c[r][0] = c[r][1] = _mm512_setzero_si512();
    for (int64_t k = 0; k < K4; k += 4) {
        const __m512i b0 = _mm512_loadu_si512(bp + k * OP_QG_PANEL);
        const __m512i b1 =
            np > 1 ? _mm512_loadu_si512(bp + pstride + k * OP_QG_PANEL) : b0;
#pragma GCC unroll 16
        for (int r = 0; r < OP_QG_MR; r++) {
            __m512i av;
            if (r >= mr)
                break;
            av = _mm512_set1_epi32(qg_a4(ap + r * K4 + k));
            if (a_u8) {
                c[r][0] = _mm512_dpbusd_epi32(c[r][0], av, b0);
                if (np > 1)
                    c[r][1] = _mm512_dpbusd_epi32(c[r][1], av, b1);
            } else {
                c[r][0] = _mm512_dpbusd_epi32(c[r][0], b0, av);
                if (np > 1)
                    c[r][1] = _mm512_dpbusd_epi32(c[r][1], b1, av);
            }
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < OP_QG_MR; r++) {
        if (r >= mr)
            break;
        _mm512_storeu_si512(&acc[r][0], c[r][0]);
        if (np > 1)
            _mm512_storeu_si512(&acc[r][OP_QG_PANEL], c[r][1]);
    }
}

#define QG_VNNI_MR(MR)                                                                   \
    case MR:                                                                             \
        if (np > 1) {                                                                    \
            if (a_u8)                                                                    \
                qg_tile_vnni(ap, K4, bp, pstride, MR, 2, 1, acc);                        \
            else                                                                         \
                qg_tile_vnni(ap, K4, bp, pstride, MR, 2, 0, acc);                        \
        } else {                                                                         \
            if (a_u8)                                                                    \
                qg_tile_vnni(ap, K4, bp, pstride, MR, 1, 1, acc);                        \
            else                                                                         \
                qg_tile_vnni(ap, K4, bp, pstride, MR, 1, 0, acc);                        \
        }                                                                                \
        break;

/* qg_tile_vnni with mr, np and a_u8 made constants. */
static QG_TARGET_VNNI void qg_tile_vnni_any(const uint8_t *ap, int64_t K4,
                                            const uint8_t *bp, int64_t pstride, int mr,
                                            int np, int a_u8,
                                            int32_t acc[OP_QG_MR][OP_QG_NR])
{
    switch (mr) {
        QG_VNNI_MR(1)
        QG_VNNI_MR(2)
        QG_VNNI_MR(3)
        QG_VNNI_MR(4)
        QG_VNNI_MR(5)
        QG_VNNI_MR(6)
        QG_VNNI_MR(7)
    default:
        QG_VNNI_MR(8)
    }
}

static QG_TARGET_VNNI void qg_gemm_vnni(const op_qg_args *a, int64_t i0, int64_t i1,
                                        int64_t j0, int64_t j1)
{
    QG_GEMM_LOOP(qg_tile_vnni_any, a, i0, i1, j0, j1);
}
#endif

/* ---- the AVX2 tile --------------------------------------------------------- */

#if CPU_HAVE_AVX2_BUILD
#define QG_TARGET_AVX2 __attribute__((target("avx2,fma")))

/* Two rows (one when mr is 1) by one panel of raw sums without VNNI, exact:
 * both sides widened to int16 and multiplied by vpmaddwd, whose int32 lane
 * sums two products (at most 2 x 255 x 128 in magnitude: nothing
 * saturates, unlike vpmaddubsw's int16 pairs, which is why ORT's AVX2
 * u8s8 path asks for 7-bit weights). A panel step's 64 bytes are four
 * vectors of 4 columns x 4 k (qgemm.h's layout); A's four bytes are
 * broadcast as [a0 a1 a2 a3] x 4, so lane 2c + h of vector q holds column
 * 4 q + c's k pair h: c[r][q] accumulates them and one hadd per 8 columns
 * joins each column's two pairs at the end. 4 vectors of B, 8 sums, one A
 * and one product: 14 of the 16 ymm registers. */
static inline CPU_INLINE QG_TARGET_AVX2 void qg_tile2_avx2(const uint8_t *ap, int64_t K4,
                                                           const uint8_t *bp, int mr,
                                                           int a_u8, int32_t *acc0,
                                                           int32_t *acc1)
{
    __m256i c[2][4];
#pragma GCC unroll 8
    for (int q = 0; q < 4; q++)
        c[0][q] = c[1][q] = _mm256_setzero_si256();
    for (int64_t k = 0; k < K4; k += 4) {
        __m256i bw[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            const __m128i v =
                _mm_loadu_si128((const __m128i *)(bp + k * OP_QG_PANEL + 16 * q));
            bw[q] = a_u8 ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
        }
#pragma GCC unroll 2
        for (int r = 0; r < mr; r++) {
            const __m128i av = _mm_set1_epi32(qg_a4(ap + r * K4 + k));
            const __m256i aw = a_u8 ? _mm256_cvtepu8_epi16(av) : _mm256_cvtepi8_epi16(av);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                c[r][q] = _mm256_add_epi32(c[r][q], _mm256_madd_epi16(bw[q], aw));
        }
    }
#pragma GCC unroll 2
    for (int r = 0; r < mr; r++) {
        int32_t *acc = r ? acc1 : acc0;
        /* hadd gives columns 0 1 4 5 | 2 3 6 7: qwords back in order */
        _mm256_storeu_si256(
            (__m256i *)acc,
            _mm256_permute4x64_epi64(_mm256_hadd_epi32(c[r][0], c[r][1]), 0xD8));
        _mm256_storeu_si256(
            (__m256i *)(acc + 8),
            _mm256_permute4x64_epi64(_mm256_hadd_epi32(c[r][2], c[r][3]), 0xD8));
    }
}

/* The register tile of QG_GEMM_LOOP from two-row blocks of each panel. */
static QG_TARGET_AVX2 void qg_tile_avx2_any(const uint8_t *ap, int64_t K4,
                                            const uint8_t *bp, int64_t pstride, int mr,
                                            int np, int a_u8,
                                            int32_t acc[OP_QG_MR][OP_QG_NR])
{
    for (int p = 0; p < np; p++)
        for (int r = 0; r < mr; r += 2) {
            int32_t *a0 = &acc[r][p * OP_QG_PANEL];
            int32_t *a1 = r + 1 < mr ? &acc[r + 1][p * OP_QG_PANEL] : a0;
            const uint8_t *ar = ap + r * K4, *b = bp + p * pstride;
            if (r + 1 < mr) {
                if (a_u8)
                    qg_tile2_avx2(ar, K4, b, 2, 1, a0, a1);
                else
                    qg_tile2_avx2(ar, K4, b, 2, 0, a0, a1);
            } else {
                if (a_u8)
                    qg_tile2_avx2(ar, K4, b, 1, 1, a0, a1);
                else
                    qg_tile2_avx2(ar, K4, b, 1, 0, a0, a1);
            }
        }
}

/* K4 up to which qg_gemm_avx2 widens a strip's panels and a tile's rows to
 * int16 once (on the stack: two panels of K4 x 16 int16, 32 KB at most)
 * instead of at every use; longer products take qg_tile_avx2_any. */
#define QG_AVX2_KMAX 512
#define QG_AVX2_ROWS 2 /* rows of the widened tile: 8 sums, A, a product */
#define QG_AVX2_AMAX (32 * QG_AVX2_KMAX) /* int16 of A widened at once */
#define QG_AVX2_RB 32                    /* rows of a block over one panel */

/* Bytes src[0..n) as int16 into dst, sign-extended when as_signed. */
static inline CPU_INLINE QG_TARGET_AVX2 void qg_widen(const uint8_t *src, int64_t n,
                                                      int as_signed, int16_t *dst)
{
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(src + e));
        _mm256_storeu_si256((__m256i *)(dst + e), as_signed ? _mm256_cvtepi8_epi16(v)
                                                            : _mm256_cvtepu8_epi16(v));
    }
    for (; e < n; e++)
        dst[e] = as_signed ? (int16_t)(int8_t)src[e] : (int16_t)src[e];
}

/* acc += vpmaddwd(*b, a) with acc kept in its register: written with the
 * intrinsics, GCC 12 put each product in a new register, added the sum to
 * it and copied it back (one vmovdqa a product, a third of the loop). */
static inline CPU_INLINE QG_TARGET_AVX2 void qg_madd_acc(__m256i *acc, const int16_t *b,
                                                         __m256i a)
{
    __m256i t;
    __asm__("vpmaddwd %2, %3, %1\n\tvpaddd %1, %0, %0"
            : "+x"(*acc), "=&x"(t)
            : "m"(*(const __m256i *)b), "x"(a));
}

/* One row's step: its four int16 at a broadcast, times the panel step's
 * four vectors at b, into c0..c3. */
static inline CPU_INLINE QG_TARGET_AVX2 void qg_madd_row(__m256i *c0, __m256i *c1,
                                                         __m256i *c2, __m256i *c3,
                                                         const int16_t *a,
                                                         const int16_t *b)
{
    int64_t a8;
    __m256i av;
    memcpy(&a8, a, 8);
    av = _mm256_set1_epi64x(a8);
    qg_madd_acc(c0, b, av);
    qg_madd_acc(c1, b + 16, av);
    qg_madd_acc(c2, b + 32, av);
    qg_madd_acc(c3, b + 48, av);
}

/* One or two (two: a constant after inlining) widened rows of A (aw, rows
 * K4 apart) by one widened panel (bw) into acc rows (OP_QG_NR apart):
 * qg_tile2_avx2's arithmetic with no conversion in the loop (B's four
 * vectors loaded once a step, A's four int16 one vpbroadcastq). The sums
 * are eight named variables: held in arrays, GCC 12 copied every sum
 * through another register each step and spilled a third row's. */
static QG_TARGET_AVX2 __attribute__((noinline)) void
qg_tile_w16(const int16_t *aw, int64_t K4, const int16_t *bw, int two, int32_t *acc)
{
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c02 = c00, c03 = c00;
    __m256i c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    const int16_t *a1 = two ? aw + K4 : aw;
    for (int64_t k = 0; k < K4; k += 4) {
        const int16_t *b = bw + k * OP_QG_PANEL;
        qg_madd_row(&c00, &c01, &c02, &c03, aw + k, b);
        if (two)
            qg_madd_row(&c10, &c11, &c12, &c13, a1 + k, b);
    }
    /* hadd gives columns 0 1 4 5 | 2 3 6 7: qwords back in order */
    _mm256_storeu_si256((__m256i *)acc,
                        _mm256_permute4x64_epi64(_mm256_hadd_epi32(c00, c01), 0xD8));
    _mm256_storeu_si256((__m256i *)(acc + 8),
                        _mm256_permute4x64_epi64(_mm256_hadd_epi32(c02, c03), 0xD8));
    if (two) {
        _mm256_storeu_si256((__m256i *)(acc + OP_QG_NR),
                            _mm256_permute4x64_epi64(_mm256_hadd_epi32(c10, c11), 0xD8));
        _mm256_storeu_si256((__m256i *)(acc + OP_QG_NR + 8),
                            _mm256_permute4x64_epi64(_mm256_hadd_epi32(c12, c13), 0xD8));
    }
}

static QG_TARGET_AVX2 void qg_widen_avx2(const uint8_t *src, int64_t n, int as_signed,
                                         int16_t *dst)
{
    qg_widen(src, n, as_signed, dst);
}

static QG_TARGET_AVX2 void qg_gemm_avx2(const op_qg_args *a, int64_t i0, int64_t i1,
                                        int64_t j0, int64_t j1)
{
    const int64_t K4 = op_qg_k4(a->K), ps = K4 * OP_QG_PANEL;
    /* the rows widened once for every strip when they fit (32 KB; the
     * products' blocks of 32 rows do up to K4 512), else per tile */
    const int once = (i1 - i0) * K4 <= QG_AVX2_AMAX;
    int16_t bw[2 * QG_AVX2_KMAX * OP_QG_PANEL], aw[QG_AVX2_AMAX];
    /* a row block's sums, panel by panel: one widened panel (up to 16 KB)
     * stays in L1 over the block's rows */
    int32_t acc[QG_AVX2_RB][OP_QG_NR];
    if (K4 > QG_AVX2_KMAX) {
        QG_GEMM_LOOP(qg_tile_avx2_any, a, i0, i1, j0, j1);
        return;
    }
    if (once) /* A' unsigned: zero-extended */
        qg_widen(a->ap + i0 * K4, (i1 - i0) * K4, !a->a_u8, aw);
    for (int64_t j = j0; j < j1; j += OP_QG_NR) {
        const int nc = (int)(j1 - j < OP_QG_NR ? j1 - j : OP_QG_NR);
        const int np = nc > OP_QG_PANEL ? 2 : 1;
        /* B' signed when A' is unsigned; widened once (prepare) or here */
        const int16_t *bs = bw;
        if (a->bp16 && a->a_u8)
            bs = a->bp16 + j / OP_QG_PANEL * ps;
        else
            qg_widen(a->bp + j / OP_QG_PANEL * ps, np * ps, a->a_u8, bw);
        for (int64_t ib = i0; ib < i1; ib += QG_AVX2_RB) {
            const int rb = (int)(i1 - ib < QG_AVX2_RB ? i1 - ib : QG_AVX2_RB);
            for (int p = 0; p < np; p++)
                for (int r = 0; r < rb; r += QG_AVX2_ROWS) {
                    const int two = r + 1 < rb;
                    const int16_t *ar = aw + (ib + r - i0) * K4;
                    if (!once) {
                        qg_widen(a->ap + (ib + r) * K4, (two ? 2 : 1) * K4, !a->a_u8, aw);
                        ar = aw;
                    }
                    qg_tile_w16(ar, K4, bs + p * ps, two, &acc[r][p * OP_QG_PANEL]);
                }
            for (int r = 0; r < rb; r += OP_QG_MR)
                qg_store_body(a, &acc[r], ib + r, j,
                              rb - r < OP_QG_MR ? rb - r : OP_QG_MR, nc);
        }
    }
}
#endif

/* ---- dispatch ------------------------------------------------------------ */

void op_qg_widen_b(const uint8_t *src, int64_t n, int as_signed, int16_t *dst)
{
#if CPU_HAVE_AVX2_BUILD
    if (cpu_avx2()) {
        qg_widen_avx2(src, n, as_signed, dst);
        return;
    }
#endif
    for (int64_t e = 0; e < n; e++)
        dst[e] = as_signed ? (int16_t)(int8_t)src[e] : (int16_t)src[e];
}

static _Atomic int qg_forced = OP_QG_AUTO;
static _Atomic int qg_has_vnni = -1;

void op_qg_force(int which)
{
    atomic_store(&qg_forced, which);
}

int op_qg_vnni(void)
{
    int s = atomic_load_explicit(&qg_has_vnni, memory_order_relaxed);
    if (s < 0) {
#if CPU_HAVE_AVX2_BUILD && defined(__GNUC__)
        __builtin_cpu_init();
        s = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
#else
        s = 0;
#endif
        atomic_store_explicit(&qg_has_vnni, s, memory_order_relaxed);
    }
    {
        const int f = atomic_load_explicit(&qg_forced, memory_order_relaxed);
        return s && cpu_avx2() && f != OP_QG_PORTABLE && f != OP_QG_AVX2;
    }
}

int op_qg_wide(void)
{
    return cpu_avx2() &&
           atomic_load_explicit(&qg_forced, memory_order_relaxed) != OP_QG_PORTABLE &&
           !op_qg_vnni();
}

void op_qg_gemm(const op_qg_args *a, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    if (i0 >= i1 || j0 >= j1)
        return;
#if CPU_HAVE_AVX2_BUILD
    if (op_qg_vnni()) {
        qg_gemm_vnni(a, i0, i1, j0, j1);
        return;
    }
    if (op_qg_wide()) {
        qg_gemm_avx2(a, i0, i1, j0, j1);
        return;
    }
#endif
    CPU_PICK(qg_gemm_port)(a, i0, i1, j0, j1);
}

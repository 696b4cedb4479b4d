/* The softmax rows of the Attention layer's CPU kernel (ops/attention.c):
 * a tile of Q K^T products scaled, masked and softmaxed in place, in the
 * vector builds of cpu_kernels.h (8 floats: a 16-float AVX-512 build
 * measured 10% slower on this repo's AMD EPYC VM, at GPT-2's 32 keys).
 * attention.c is built as plain C (-O2, no AVX2), where its per-element
 * loop stayed scalar and called expf: at GPT-2's small heads that cost
 * three times the unfused MatMul, Mul, Add and Softmax layers it replaced.
 *
 * A row takes two passes (the scores and their largest; the exponentials
 * and their sum) where the unfused layers made six: the division by the
 * sum is left to the caller, who applies it to the row's Dv outputs of
 * P V rather than to its n probabilities. Softmax's exponential
 * (cpu_exp_neg_v8), so the result is within a few float roundings of the
 * unfused graph's. Three builds: baseline, AVX2 and AVX-512 (still 8
 * floats, for its mask registers at a row's odd end; see AK_TAIL_*). */
#include "ops/cpu/cpu_kernels.h"

#include <math.h>
#include <string.h>

/* The last r (1 to 7) floats of a row as a vector, and back: lanes past r
 * read as 0 and are not written. The AVX-512 build loads and stores them
 * under a mask register, the AVX2 build with vmaskmovps, the baseline
 * through a buffer: at ViT's 65 keys a row's one odd float cost as much
 * as a vector in the element loop these replace. Every build then does
 * the same vector arithmetic on the same lanes, so AVX-512 and AVX2 give
 * the same bits. */
#if CPU_HAVE_AVX2_BUILD
#include <immintrin.h>
#define AK_TAIL_LOAD_512(v, p, r)                                                        \
    ((v) = (cpu_v8)_mm256_maskz_loadu_ps((__mmask8)((1u << (r)) - 1u), (p)))
#define AK_TAIL_STORE_512(p, v, r)                                                       \
    _mm256_mask_storeu_ps((p), (__mmask8)((1u << (r)) - 1u), (__m256)(v))
#define AK_TAIL_LOAD_AVX2(v, p, r)                                                       \
    ((v) = (cpu_v8)_mm256_maskload_ps((p), (__m256i)(ak_lanes < (r))))
#define AK_TAIL_STORE_AVX2(p, v, r)                                                      \
    _mm256_maskstore_ps((p), (__m256i)(ak_lanes < (r)), (__m256)(v))
#endif
#define AK_TAIL_LOAD_BASE(v, p, r)                                                       \
    do {                                                                                 \
        float b_[8] = {0};                                                               \
        memcpy(b_, (p), sizeof(float) * (size_t)(r));                                    \
        memcpy(&(v), b_, sizeof b_);                                                     \
    } while (0)
#define AK_TAIL_STORE_BASE(p, v, r)                                                      \
    do {                                                                                 \
        float b_[8];                                                                     \
        memcpy(b_, &(v), sizeof b_);                                                     \
        memcpy((p), b_, sizeof(float) * (size_t)(r));                                    \
    } while (0)

/* a * b + c, rounded once in the AVX2 and AVX-512 builds alike: left to
 * -ffp-contract, GCC fused it in the AVX-512 build and not in the AVX2
 * one, and the bits differed. The baseline has no FMA. */
#if CPU_HAVE_AVX2_BUILD
#define AK_FMA_X86(a, b, c)                                                              \
    ((cpu_v8)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#endif
#define AK_FMA_BASE(a, b, c) ((a) * (b) + (c))

static const cpu_v8i ak_lanes = {0, 1, 2, 3, 4, 5, 6, 7};

/* The body over 8-float vectors (LOAD and STORE the build's AK_TAIL_*,
 * FMA its AK_FMA_*):
 * the row's n scores, then their exponentials (unnormalized), *inv = 1 /
 * their sum. *inv 0, with the scores in the row, when their largest is
 * NaN or infinite (every key masked among them): the caller's plain loop
 * has ONNX's rules for those. A row's last n % 8 floats take one vector
 * whose lanes past n hold -inf (no key: e^-inf adds 0). The sum runs in
 * float per lane (n / 8 terms each, all in (0, 1]: within n / 8 float
 * roundings) and adds the lanes in double, in an order fixed by n. */
#define AK_SOFTMAX(LOAD, STORE, FMA)                                                     \
    do {                                                                                 \
        const cpu_v8 sc_ = CPU_SPLAT(scale), ninf_ = CPU_SPLAT(-INFINITY), zero_ = {0};  \
        cpu_v8 mv_ = ninf_, t_, m_;                                                      \
        cpu_v8i nan_ = {0};                                                              \
        cpu_v8 acc_ = zero_;                                                             \
        float mx_ = -INFINITY;                                                           \
        double sum_ = 0.0;                                                               \
        *inv = 0.0f;                                                                     \
        for (int64_t c_ = 0; c_ < n; c_ += 8) {                                          \
            const int r_ = n - c_ < 8 ? (int)(n - c_) : 8;                               \
            const cpu_v8i in_ = ak_lanes < r_;                                           \
            if (r_ == 8) {                                                               \
                CPU_LOAD(t_, row + c_);                                                  \
                if (madd)                                                                \
                    CPU_LOAD(m_, madd + c_);                                             \
            } else {                                                                     \
                LOAD(t_, row + c_, r_);                                                  \
                if (madd)                                                                \
                    LOAD(m_, madd + c_, r_);                                             \
            }                                                                            \
            if (madd) {                                                                  \
                t_ = FMA(t_, sc_, m_);                                                   \
            } else if (mbool) {                                                          \
                cpu_v8i keep_ = {0};                                                     \
                for (int q_ = 0; q_ < r_; q_++)                                          \
                    keep_[q_] = -(int32_t)(mbool[c_ + q_] != 0);                         \
                t_ = CPU_SELECT(keep_, t_ * sc_, ninf_);                                 \
            } else {                                                                     \
                t_ = t_ * sc_;                                                           \
            }                                                                            \
            if (r_ == 8) {                                                               \
                CPU_STORE(row + c_, t_);                                                 \
            } else {                                                                     \
                STORE(row + c_, t_, r_);                                                 \
                t_ = CPU_SELECT(in_, t_, ninf_);                                         \
            }                                                                            \
            mv_ = CPU_SELECT(t_ > mv_, t_, mv_);                                         \
            nan_ |= t_ != t_;                                                            \
        }                                                                                \
        for (int q_ = 0; q_ < 8; q_++) {                                                 \
            mx_ = mv_[q_] > mx_ ? mv_[q_] : mx_;                                         \
            nan_[0] |= nan_[q_];                                                         \
        }                                                                                \
        if (nan_[0] || mx_ == INFINITY || mx_ == -INFINITY)                              \
            return;                                                                      \
        mv_ = CPU_SPLAT(mx_);                                                            \
        for (int64_t c_ = 0; c_ < n; c_ += 8) {                                          \
            const int r_ = n - c_ < 8 ? (int)(n - c_) : 8;                               \
            cpu_v8 hi_, e_;                                                              \
            cpu_v8i big_;                                                                \
            if (r_ == 8) {                                                               \
                CPU_LOAD(t_, row + c_);                                                  \
            } else {                                                                     \
                LOAD(t_, row + c_, r_);                                                  \
                t_ = CPU_SELECT(ak_lanes < r_, t_, ninf_);                               \
            }                                                                            \
            /* e^(x - mx), 0 below -87 (Softmax's rk_exp_shift). */                      \
            hi_ = mv_ - t_;                                                              \
            big_ = hi_ > 87.0f;                                                          \
            hi_ = CPU_SELECT(big_, zero_, hi_);                                          \
            cpu_exp_neg_v8(&hi_, &zero_, &e_);                                           \
            t_ = CPU_SELECT(big_, zero_, e_);                                            \
            acc_ += t_;                                                                  \
            if (r_ == 8)                                                                 \
                CPU_STORE(row + c_, t_);                                                 \
            else                                                                         \
                STORE(row + c_, t_, r_);                                                 \
        }                                                                                \
        for (int q_ = 0; q_ < 8; q_++)                                                   \
            sum_ += acc_[q_];                                                            \
        *inv = (float)(1.0 / sum_);                                                      \
    } while (0)

/* Rows [0, rows) of a tile (op_attn_softmax_rows). One call a tile, not a
 * row: at GPT-2's 32 keys a row is four vectors, and a call and a dispatch
 * each cost about as much as one of them. The row's softmax is the body
 * SOFTMAX (AK_SOFTMAX with the build's tails), inlined into each build. */
#define AK_ROWS(SOFTMAX)                                                                 \
    do {                                                                                 \
        for (int64_t r = 0; r < rows; r++) {                                             \
            float *row = s + r * ld;                                                     \
            const float *ma = madd ? madd + r * mstride : NULL;                          \
            const uint8_t *mb = mbool ? mbool + r * mstride : NULL;                      \
            int64_t lim = causal && i0 + r + 1 < n ? i0 + r + 1 : n;                     \
            inv[r] = 0.0f;                                                               \
            if (lim > 0)                                                                 \
                SOFTMAX(row, lim, scale, ma, mb, &inv[r]);                               \
            if (inv[r] > 0.0f && lim < n)                                                \
                memset(row + lim, 0, (size_t)(n - lim) * sizeof(float));                 \
        }                                                                                \
    } while (0)

#define AK_PARAMS                                                                        \
    (float *s, int64_t ld, int64_t rows, int64_t n, int64_t i0, int causal, float scale, \
     const float *madd, const uint8_t *mbool, int64_t mstride, float *inv)
#define AK_ROW_PARAMS                                                                    \
    (float *row, int64_t n, float scale, const float *madd, const uint8_t *mbool,        \
     float *inv)

static inline CPU_INLINE void ak_softmax_base AK_ROW_PARAMS
{
    AK_SOFTMAX(AK_TAIL_LOAD_BASE, AK_TAIL_STORE_BASE, AK_FMA_BASE);
}

static void ak_rows_base AK_PARAMS
{
    AK_ROWS(ak_softmax_base);
}

#if CPU_HAVE_AVX2_BUILD
CPU_TARGET_AVX2 static inline CPU_INLINE void ak_softmax_avx2 AK_ROW_PARAMS
{
    AK_SOFTMAX(AK_TAIL_LOAD_AVX2, AK_TAIL_STORE_AVX2, AK_FMA_X86);
}

CPU_TARGET_AVX2 static void ak_rows_avx2 AK_PARAMS
{
    AK_ROWS(ak_softmax_avx2);
}

CPU_TARGET_AVX512 static inline CPU_INLINE void ak_softmax_avx512 AK_ROW_PARAMS
{
    AK_SOFTMAX(AK_TAIL_LOAD_512, AK_TAIL_STORE_512, AK_FMA_X86);
}

CPU_TARGET_AVX512 static void ak_rows_avx512 AK_PARAMS
{
    AK_ROWS(ak_softmax_avx512);
}
#define AK_PICK (cpu_avx512() ? ak_rows_avx512 : cpu_avx2() ? ak_rows_avx2 : ak_rows_base)
#else
#define AK_PICK ak_rows_base
#endif

void op_attn_softmax_rows(float *s, int64_t ld, int64_t rows, int64_t n, int64_t i0,
                          int causal, float scale, const float *madd,
                          const uint8_t *mbool, int64_t mstride, float *inv)
{
    AK_PICK(s, ld, rows, n, i0, causal, scale, madd, mbool, mstride, inv);
}

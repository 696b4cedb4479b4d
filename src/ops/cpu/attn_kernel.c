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
 * unfused graph's. */
#include "ops/cpu/cpu_kernels.h"

#include <math.h>
#include <string.h>

/* The body over vectors of type T (W floats; TI the integer twin, SPLAT
 * and SELECT its CPU_SPLAT and CPU_SELECT, EXP its cpu_exp_neg_*): the
 * row's n scores, then their exponentials (unnormalized), *inv = 1 / their
 * sum. *inv 0, with the scores in the row, when their largest is NaN or
 * infinite (every key masked among them): the caller's plain loop has
 * ONNX's rules for those. The sum runs in float per lane (n / W terms
 * each, all in (0, 1]: within n / W float roundings) and adds the lanes in
 * double, in an order fixed by n and W. */
#define AK_SOFTMAX(T, TI, W, SPLAT, SELECT, EXP)                                         \
    do {                                                                                 \
        const T sc_ = SPLAT(scale), ninf_ = SPLAT(-INFINITY), zero_ = {0};               \
        T mv_ = ninf_, t_, m_;                                                           \
        TI nan_ = {0};                                                                   \
        T acc_ = zero_;                                                                  \
        float mx_ = -INFINITY, buf_[W];                                                  \
        double sum_ = 0.0;                                                               \
        int64_t c_ = 0;                                                                  \
        *inv = 0.0f;                                                                     \
        for (; c_ + W <= n; c_ += W) {                                                   \
            memcpy(&t_, row + c_, sizeof t_);                                            \
            if (madd) {                                                                  \
                memcpy(&m_, madd + c_, sizeof m_);                                       \
                t_ = t_ * sc_ + m_;                                                      \
            } else if (mbool) {                                                          \
                TI keep_;                                                                \
                for (int q_ = 0; q_ < W; q_++)                                           \
                    keep_[q_] = -(int32_t)(mbool[c_ + q_] != 0);                         \
                t_ = SELECT(keep_, t_ * sc_, ninf_);                                     \
            } else {                                                                     \
                t_ = t_ * sc_;                                                           \
            }                                                                            \
            memcpy(row + c_, &t_, sizeof t_);                                            \
            mv_ = SELECT(t_ > mv_, t_, mv_);                                             \
            nan_ |= t_ != t_;                                                            \
        }                                                                                \
        for (; c_ < n; c_++) {                                                           \
            const float s_ = row[c_] * scale;                                            \
            row[c_] = madd ? s_ + madd[c_] : mbool && !mbool[c_] ? -INFINITY : s_;       \
            nan_[0] |= row[c_] != row[c_];                                               \
            mx_ = row[c_] > mx_ ? row[c_] : mx_;                                         \
        }                                                                                \
        for (int q_ = 0; q_ < W; q_++) {                                                 \
            mx_ = mv_[q_] > mx_ ? mv_[q_] : mx_;                                         \
            nan_[0] |= nan_[q_];                                                         \
        }                                                                                \
        if (nan_[0] || mx_ == INFINITY || mx_ == -INFINITY)                              \
            return;                                                                      \
        mv_ = SPLAT(mx_);                                                                \
        for (c_ = 0; c_ < n; c_ += W) {                                                  \
            const int full_ = c_ + W <= n;                                               \
            T hi_, e_;                                                                   \
            TI big_;                                                                     \
            if (full_) {                                                                 \
                memcpy(&t_, row + c_, sizeof t_);                                        \
            } else {                                                                     \
                for (int q_ = 0; q_ < W; q_++)                                           \
                    buf_[q_] = c_ + q_ < n ? row[c_ + q_] : -INFINITY;                   \
                memcpy(&t_, buf_, sizeof t_);                                            \
            }                                                                            \
            /* e^(x - mx), 0 below -87 (Softmax's rk_exp_shift). */                      \
            hi_ = mv_ - t_;                                                              \
            big_ = hi_ > 87.0f;                                                          \
            hi_ = SELECT(big_, zero_, hi_);                                              \
            EXP(&hi_, &zero_, &e_);                                                      \
            t_ = SELECT(big_, zero_, e_);                                                \
            acc_ += t_;                                                                  \
            if (full_) {                                                                 \
                memcpy(row + c_, &t_, sizeof t_);                                        \
            } else {                                                                     \
                memcpy(buf_, &t_, sizeof t_);                                            \
                memcpy(row + c_, buf_, sizeof(float) * (size_t)(n - c_));                \
            }                                                                            \
        }                                                                                \
        for (int q_ = 0; q_ < W; q_++)                                                   \
            sum_ += acc_[q_];                                                            \
        *inv = (float)(1.0 / sum_);                                                      \
    } while (0)

static inline CPU_INLINE void ak_softmax8(float *row, int64_t n, float scale,
                                          const float *madd, const uint8_t *mbool,
                                          float *inv)
{
    AK_SOFTMAX(cpu_v8, cpu_v8i, 8, CPU_SPLAT, CPU_SELECT, cpu_exp_neg_v8);
}

/* Rows [0, rows) of a tile (op_attn_softmax_rows). One call a tile, not a
 * row: at GPT-2's 32 keys a row is four vectors, and a call and a dispatch
 * each cost about as much as one of them. */
static inline CPU_INLINE void ak_rows(float *s, int64_t ld, int64_t rows, int64_t n,
                                      int64_t i0, int causal, float scale,
                                      const float *madd, const uint8_t *mbool,
                                      int64_t mstride, float *inv)
{
    for (int64_t r = 0; r < rows; r++) {
        float *row = s + r * ld;
        const float *ma = madd ? madd + r * mstride : NULL;
        const uint8_t *mb = mbool ? mbool + r * mstride : NULL;
        int64_t lim = causal && i0 + r + 1 < n ? i0 + r + 1 : n;
        inv[r] = 0.0f;
        if (lim > 0)
            ak_softmax8(row, lim, scale, ma, mb, &inv[r]);
        if (inv[r] > 0.0f && lim < n)
            memset(row + lim, 0, (size_t)(n - lim) * sizeof(float));
    }
}

CPU_BUILDS(ak_rows_k, ak_rows,
           (float *s, int64_t ld, int64_t rows, int64_t n, int64_t i0, int causal,
            float scale, const float *madd, const uint8_t *mbool, int64_t mstride,
            float *inv),
           (s, ld, rows, n, i0, causal, scale, madd, mbool, mstride, inv))

void op_attn_softmax_rows(float *s, int64_t ld, int64_t rows, int64_t n, int64_t i0,
                          int causal, float scale, const float *madd,
                          const uint8_t *mbool, int64_t mstride, float *inv)
{
    CPU_PICK(ak_rows_k)(s, ld, rows, n, i0, causal, scale, madd, mbool, mstride, inv);
}

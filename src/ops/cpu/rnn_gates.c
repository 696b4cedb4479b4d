/* LSTM's gates in one pass (cpu_kernels.h): each unit's four gate inputs,
 * peepholes, clip, the sigmoid (CPU_SIGMOID) and tanh (CPU_TANH), the new
 * cell and hidden state, 8 units a vector in a baseline and an AVX2 + FMA
 * build (two such vectors side by side for a plain LSTM), 16 in an
 * AVX-512 one; the last units padded with zeros. Per element the same
 * operations whatever the batch entries' spread over threads. */
#include "ops/cpu/cpu_kernels.h"

/* One vector of W lanes (type T; TI, SPLAT, SELECT its twins) at unit j:
 * the units' gates, their cell and hidden state. Loads and stores of the
 * last n < W units go through a padded copy. */
#define LG_LOAD(T, W, v, p, n)                                                           \
    do {                                                                                 \
        if ((n) == (W)) {                                                                \
            memcpy(&(v), (p), sizeof(T));                                                \
        } else {                                                                         \
            float t_[W] = {0};                                                           \
            memcpy(t_, (p), sizeof(float) * (size_t)(n));                                \
            memcpy(&(v), t_, sizeof(T));                                                 \
        }                                                                                \
    } while (0)
#define LG_STORE(T, W, p, v, n)                                                          \
    do {                                                                                 \
        if ((n) == (W)) {                                                                \
            memcpy((p), &(v), sizeof(T));                                                \
        } else {                                                                         \
            float t_[W];                                                                 \
            memcpy(t_, &(v), sizeof(T));                                                 \
            memcpy((p), t_, sizeof(float) * (size_t)(n));                                \
        }                                                                                \
    } while (0)
/* The gate's function on v, clipped first where r clips (never where
 * PLAIN, a constant, says r has no clip). */
#define LG_ACT(T, TI, SPLAT, SELECT, PLAIN, r, v, is_tanh)                               \
    do {                                                                                 \
        if (!(PLAIN) && (r)->has_clip) {                                                 \
            const T lo_ = SPLAT(-(r)->clip), hi_ = SPLAT((r)->clip);                     \
            (v) = SELECT((v) < lo_, lo_, (v));                                           \
            (v) = SELECT((v) > hi_, hi_, (v));                                           \
        }                                                                                \
        if (is_tanh)                                                                     \
            CPU_TANH(T, TI, SPLAT, SELECT, &(v));                                        \
        else                                                                             \
            CPU_SIGMOID(T, TI, SPLAT, SELECT, &(v));                                     \
    } while (0)
/* K vectors of W units side by side from unit j (K a constant; K > 1 only
 * where all K * W units exist), each step written for all K before the
 * next, so K chains of exponentials and divisions overlap instead of one
 * waiting on another's latency. PLAIN (a constant): r has no clip, no
 * peepholes, no input_forget, and their branches go. A gate's sum is
 * formed in registers before it goes into lgpre_: loaded straight into the
 * array, GCC copied it there in two 16-byte halves and then read it as one
 * 32-byte vector, a store-forwarding stall that was a third of the gates'
 * time. */
#define LG_UNITS(T, TI, SPLAT, SELECT, W, K, PLAIN, r, j)                                \
    do {                                                                                 \
        const int64_t lgH_ = (r)->H;                                                     \
        int64_t lgn_[K];                                                                 \
        T lgpre_[K][4], lgcp_[K], lga_, lgb_, lgcn_[K], lgth_[K];                        \
        for (int u_ = 0; u_ < (K); u_++) {                                               \
            const int64_t lgj_ = (j) + (W)*u_;                                           \
            lgn_[u_] = (K) > 1 || lgH_ - lgj_ >= (W) ? (W) : lgH_ - lgj_;                \
            LG_LOAD(T, W, lgcp_[u_], (r)->c + lgj_, lgn_[u_]);                           \
            for (int lgk_ = 0; lgk_ < 4; lgk_++) {                                       \
                const int64_t lgat_ = lgk_ * lgH_ + lgj_;                                \
                T lgg_;                                                                  \
                LG_LOAD(T, W, lgg_, (r)->g + lgat_, lgn_[u_]);                           \
                LG_LOAD(T, W, lga_, (r)->x + lgat_, lgn_[u_]);                           \
                LG_LOAD(T, W, lgb_, (r)->b + lgat_, lgn_[u_]);                           \
                lgpre_[u_][lgk_] = lgg_ + (lga_ + lgb_);                                 \
            }                                                                            \
            if (!(PLAIN) && (r)->p) {                                                    \
                LG_LOAD(T, W, lga_, (r)->p + lgj_, lgn_[u_]);                            \
                LG_LOAD(T, W, lgb_, (r)->p + 2 * lgH_ + lgj_, lgn_[u_]);                 \
                lgpre_[u_][0] += lga_ * lgcp_[u_];                                       \
                lgpre_[u_][2] += lgb_ * lgcp_[u_];                                       \
            }                                                                            \
        }                                                                                \
        for (int u_ = 0; u_ < (K); u_++)                                                 \
            LG_ACT(T, TI, SPLAT, SELECT, PLAIN, r, lgpre_[u_][0], 0); /* i */            \
        for (int u_ = 0; u_ < (K); u_++) {                                               \
            if (!(PLAIN) && (r)->input_forget)                                           \
                lgpre_[u_][2] = SPLAT(1.0f) - lgpre_[u_][0];                             \
            else                                                                         \
                LG_ACT(T, TI, SPLAT, SELECT, PLAIN, r, lgpre_[u_][2], 0); /* f */        \
        }                                                                                \
        for (int u_ = 0; u_ < (K); u_++)                                                 \
            LG_ACT(T, TI, SPLAT, SELECT, PLAIN, r, lgpre_[u_][3], 1); /* c */            \
        for (int u_ = 0; u_ < (K); u_++) {                                               \
            const int64_t lgj_ = (j) + (W)*u_;                                           \
            lgcn_[u_] = lgpre_[u_][2] * lgcp_[u_] + lgpre_[u_][0] * lgpre_[u_][3];       \
            if (!(PLAIN) && (r)->p) {                                                    \
                LG_LOAD(T, W, lga_, (r)->p + lgH_ + lgj_, lgn_[u_]);                     \
                lgpre_[u_][1] += lga_ * lgcn_[u_];                                       \
            }                                                                            \
        }                                                                                \
        for (int u_ = 0; u_ < (K); u_++)                                                 \
            LG_ACT(T, TI, SPLAT, SELECT, PLAIN, r, lgpre_[u_][1], 0); /* o */            \
        for (int u_ = 0; u_ < (K); u_++) {                                               \
            lgth_[u_] = lgcn_[u_];                                                       \
            CPU_TANH(T, TI, SPLAT, SELECT, &lgth_[u_]); /* h(C): never clipped */        \
        }                                                                                \
        for (int u_ = 0; u_ < (K); u_++) {                                               \
            const int64_t lgj_ = (j) + (W)*u_;                                           \
            lgth_[u_] = lgpre_[u_][1] * lgth_[u_];                                       \
            LG_STORE(T, W, (r)->c + lgj_, lgcn_[u_], lgn_[u_]);                          \
            LG_STORE(T, W, (r)->h + lgj_, lgth_[u_], lgn_[u_]);                          \
        }                                                                                \
    } while (0)

/* 16 units a vector in the AVX-512 build (`wide`, a constant), else 8;
 * each lane the same operations, so the same bits either way. */
static inline CPU_INLINE void lstm_body(const op_lstm_row *r, int wide)
{
    const op_lstm_row row = *r; /* held apart from what the stores may alias */
#if CPU_HAVE_AVX2_BUILD
    if (wide) {
        for (int64_t j = 0; j < row.H; j += 16)
            LG_UNITS(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, 16, 1, 0, &row, j);
        return;
    }
#endif
    (void)wide;
    int64_t j = 0;
    if (!row.has_clip && !row.p && !row.input_forget)
        for (; j + 16 <= row.H; j += 16)
            LG_UNITS(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, 8, 2, 1, &row, j);
    for (; j < row.H; j += 8)
        LG_UNITS(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, 8, 1, 0, &row, j);
}

CPU_BUILDS3(lstm_gates, lstm_body, (const op_lstm_row *r), (r, 0), (r, 1))

void op_lstm_gates_f32(const op_lstm_row *r)
{
    CPU_PICK3(lstm_gates)(r);
}

/* LSTM's gates in one pass (cpu_kernels.h): each unit's four gate inputs,
 * peepholes, clip, the sigmoid (CPU_SIGMOID) and tanh (CPU_TANH), the new
 * cell and hidden state, 8 units a vector in a baseline and an AVX2 + FMA
 * build (two such vectors side by side for a plain LSTM, LG_PAIR), 16 in an
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
/* The gate's function on v, clipped first where r clips. */
#define LG_ACT(T, TI, SPLAT, SELECT, r, v, is_tanh)                                      \
    do {                                                                                 \
        if ((r)->has_clip) {                                                             \
            const T lo_ = SPLAT(-(r)->clip), hi_ = SPLAT((r)->clip);                     \
            (v) = SELECT((v) < lo_, lo_, (v));                                           \
            (v) = SELECT((v) > hi_, hi_, (v));                                           \
        }                                                                                \
        if (is_tanh)                                                                     \
            CPU_TANH(T, TI, SPLAT, SELECT, &(v));                                        \
        else                                                                             \
            CPU_SIGMOID(T, TI, SPLAT, SELECT, &(v));                                     \
    } while (0)
#define LG_UNITS(T, TI, SPLAT, SELECT, W, r, j)                                          \
    do {                                                                                 \
        const int64_t lgH_ = (r)->H, lgn_ = lgH_ - (j) < (W) ? lgH_ - (j) : (W);         \
        T lgpre_[4], lgcp_, lga_, lgb_, lgcn_, lgth_;                                    \
        LG_LOAD(T, W, lgcp_, (r)->c + (j), lgn_);                                        \
        for (int lgk_ = 0; lgk_ < 4; lgk_++) {                                           \
            const int64_t lgat_ = lgk_ * lgH_ + (j);                                     \
            LG_LOAD(T, W, lgpre_[lgk_], (r)->g + lgat_, lgn_);                           \
            LG_LOAD(T, W, lga_, (r)->x + lgat_, lgn_);                                   \
            LG_LOAD(T, W, lgb_, (r)->b + lgat_, lgn_);                                   \
            lgpre_[lgk_] += lga_ + lgb_;                                                 \
        }                                                                                \
        if ((r)->p) {                                                                    \
            LG_LOAD(T, W, lga_, (r)->p + (j), lgn_);                                     \
            LG_LOAD(T, W, lgb_, (r)->p + 2 * lgH_ + (j), lgn_);                          \
            lgpre_[0] += lga_ * lgcp_;                                                   \
            lgpre_[2] += lgb_ * lgcp_;                                                   \
        }                                                                                \
        LG_ACT(T, TI, SPLAT, SELECT, r, lgpre_[0], 0); /* i */                           \
        if ((r)->input_forget)                                                           \
            lgpre_[2] = SPLAT(1.0f) - lgpre_[0];                                         \
        else                                                                             \
            LG_ACT(T, TI, SPLAT, SELECT, r, lgpre_[2], 0); /* f */                       \
        LG_ACT(T, TI, SPLAT, SELECT, r, lgpre_[3], 1);     /* c */                       \
        lgcn_ = lgpre_[2] * lgcp_ + lgpre_[0] * lgpre_[3];                               \
        if ((r)->p) {                                                                    \
            LG_LOAD(T, W, lga_, (r)->p + lgH_ + (j), lgn_);                              \
            lgpre_[1] += lga_ * lgcn_;                                                   \
        }                                                                                \
        LG_ACT(T, TI, SPLAT, SELECT, r, lgpre_[1], 0); /* o */                           \
        lgth_ = lgcn_;                                                                   \
        CPU_TANH(T, TI, SPLAT, SELECT, &lgth_); /* h(C): never clipped */                \
        lgth_ = lgpre_[1] * lgth_;                                                       \
        LG_STORE(T, W, (r)->c + (j), lgcn_, lgn_);                                       \
        LG_STORE(T, W, (r)->h + (j), lgth_, lgn_);                                       \
    } while (0)

/* Two vectors of 8 units side by side (units j to j + 15), for the plain
 * LSTM (no clip, no peepholes, no input_forget): LG_UNITS' operations
 * lane by lane, each step written for both vectors before the next, so
 * the two chains of exponentials and divisions overlap instead of one
 * waiting on the other's latency. */
#define LG_PAIR(r, j)                                                                    \
    do {                                                                                 \
        const int64_t lpH_ = (r)->H;                                                     \
        cpu_v8 lppre_[2][4], lpcp_[2], lpa_, lpb_, lpcn_[2], lpth_[2];                   \
        for (int lpu_ = 0; lpu_ < 2; lpu_++) {                                           \
            const int64_t lpj_ = (j) + 8 * lpu_;                                         \
            CPU_LOAD(lpcp_[lpu_], (r)->c + lpj_);                                        \
            for (int lpk_ = 0; lpk_ < 4; lpk_++) {                                       \
                const int64_t lpat_ = lpk_ * lpH_ + lpj_;                                \
                CPU_LOAD(lppre_[lpu_][lpk_], (r)->g + lpat_);                            \
                CPU_LOAD(lpa_, (r)->x + lpat_);                                          \
                CPU_LOAD(lpb_, (r)->b + lpat_);                                          \
                lppre_[lpu_][lpk_] += lpa_ + lpb_;                                       \
            }                                                                            \
        }                                                                                \
        for (int lpu_ = 0; lpu_ < 2; lpu_++)                                             \
            CPU_SIGMOID(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, &lppre_[lpu_][0]);       \
        for (int lpu_ = 0; lpu_ < 2; lpu_++)                                             \
            CPU_SIGMOID(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, &lppre_[lpu_][2]);       \
        for (int lpu_ = 0; lpu_ < 2; lpu_++)                                             \
            CPU_TANH(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, &lppre_[lpu_][3]);          \
        for (int lpu_ = 0; lpu_ < 2; lpu_++)                                             \
            lpcn_[lpu_] =                                                                \
                lppre_[lpu_][2] * lpcp_[lpu_] + lppre_[lpu_][0] * lppre_[lpu_][3];       \
        for (int lpu_ = 0; lpu_ < 2; lpu_++)                                             \
            CPU_SIGMOID(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, &lppre_[lpu_][1]);       \
        for (int lpu_ = 0; lpu_ < 2; lpu_++) {                                           \
            lpth_[lpu_] = lpcn_[lpu_];                                                   \
            CPU_TANH(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, &lpth_[lpu_]);              \
        }                                                                                \
        for (int lpu_ = 0; lpu_ < 2; lpu_++) {                                           \
            lpth_[lpu_] = lppre_[lpu_][1] * lpth_[lpu_];                                 \
            CPU_STORE((r)->c + (j) + 8 * lpu_, lpcn_[lpu_]);                             \
            CPU_STORE((r)->h + (j) + 8 * lpu_, lpth_[lpu_]);                             \
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
            LG_UNITS(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, 16, &row, j);
        return;
    }
#endif
    (void)wide;
    int64_t j = 0;
    if (!row.has_clip && !row.p && !row.input_forget)
        for (; j + 16 <= row.H; j += 16)
            LG_PAIR(&row, j);
    for (; j < row.H; j += 8)
        LG_UNITS(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, 8, &row, j);
}

CPU_BUILDS3(lstm_gates, lstm_body, (const op_lstm_row *r), (r, 0), (r, 1))

void op_lstm_gates_f32(const op_lstm_row *r)
{
    CPU_PICK3(lstm_gates)(r);
}

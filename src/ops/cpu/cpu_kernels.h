/*
 * The CPU's fast kernels (internal to libplugrt): the vector type they are
 * written in, the choice between the baseline and the AVX2 + FMA build of
 * each, fused activations, and the direct convolution (conv_direct.c).
 *
 * Vectors. Kernels are written once in GCC's generic vectors of 8 floats
 * (cpu_v8), which compile to two SSE registers on baseline x86-64, to NEON
 * pairs on arm64, and to one AVX register in a function built with
 * CPU_TARGET_AVX2. A kernel is a `static inline CPU_INLINE` body called from
 * two thin functions (CPU_BUILDS), one plain and one with CPU_TARGET_AVX2;
 * cpu_avx2() picks one at run time (CPU_PICK). The files holding kernels are built with
 * -ffp-contract=fast (CMakeLists.txt), so in the AVX2 build a * b + c is
 * one fused multiply-add: results are then within float rounding of the
 * baseline build's, not bit for bit.
 *
 * Values never cross a function boundary as vectors (GCC's -Wpsabi warns
 * that their ABI differs between the two builds): CPU_LOAD and CPU_STORE are
 * macros, and every helper that takes or returns one is inlined.
 */
#ifndef PLUGRT_OPS_CPU_KERNELS_H
#define PLUGRT_OPS_CPU_KERNELS_H

#include <stdint.h>
#include <string.h>

#include "ops/op_act.h"

typedef float cpu_v8 __attribute__((vector_size(32)));
typedef int32_t cpu_v8i __attribute__((vector_size(32)));

#define CPU_INLINE __attribute__((always_inline))
/* Kernels put `#pragma GCC unroll 16` before each loop over a tile's sums
 * (its trip count a constant after inlining): indexed by a loop variable
 * the sums would live in memory, and a tile would store and load them at
 * every step (MobileNet's pointwise kernel ran at a third of the FMA rate
 * so). For the same reason a padding lane is cleared by a mask
 * (cpu_zero_lanes_from), not by an element index. */
#if defined(__x86_64__) || defined(__i386__)
#define CPU_HAVE_AVX2_BUILD 1
#define CPU_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define CPU_HAVE_AVX2_BUILD 0
#define CPU_TARGET_AVX2
#endif

#if CPU_HAVE_AVX2_BUILD
/* The few kernels with an AVX-512 build (cpu_avx512()) are compiled with
 * this, in 16-float vectors. */
#define CPU_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))
typedef float cpu_v16 __attribute__((vector_size(64)));
/* Two 8-float vectors side by side in one 16-float vector, and its halves
 * back (one shuffle each; a copy through memory stalls on store
 * forwarding). */
#define CPU_V16_JOIN(lo, hi)                                                             \
    __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define CPU_V16_LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define CPU_V16_HI(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
typedef int32_t cpu_v16i __attribute__((vector_size(64)));
/* CPU_SPLAT and CPU_SELECT on 16-float vectors. */
#define CPU_SPLAT16(x)                                                                   \
    ((cpu_v16){(x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x),     \
               (x), (x)})
#define CPU_SELECT16(m, a, b) ((cpu_v16)(((cpu_v16i)(a) & (m)) | ((cpu_v16i)(b) & ~(m))))
#endif

/* A kernel's two builds: NAME_base and NAME_avx2 (with CPU_TARGET_AVX2),
 * void functions of PARAMS that call the inline body BODY with ARGS; and
 * the one to call here. Elsewhere than x86 both are the baseline build. */
#define CPU_BUILDS(NAME, BODY, PARAMS, ARGS)                                             \
    static void NAME##_base PARAMS                                                       \
    {                                                                                    \
        BODY ARGS;                                                                       \
    }                                                                                    \
    CPU_TARGET_AVX2 static void NAME##_avx2 PARAMS                                       \
    {                                                                                    \
        BODY ARGS;                                                                       \
    }
#define CPU_PICK(NAME) (cpu_avx2() ? NAME##_avx2 : NAME##_base)

/* CPU_BUILDS and a third build, NAME_avx512 (CPU_TARGET_AVX512), that
 * calls BODY with WIDE_ARGS: for a body with a `wide` flag, a constant,
 * ARGS passing 0 and WIDE_ARGS 1. CPU_PICK3 adds it to the choice where
 * cpu_avx512(). Elsewhere than x86 these are CPU_BUILDS and CPU_PICK. */
#if CPU_HAVE_AVX2_BUILD
#define CPU_BUILDS3(NAME, BODY, PARAMS, ARGS, WIDE_ARGS)                                 \
    CPU_BUILDS(NAME, BODY, PARAMS, ARGS)                                                 \
    CPU_TARGET_AVX512 static void NAME##_avx512 PARAMS                                   \
    {                                                                                    \
        BODY WIDE_ARGS;                                                                  \
    }
#define CPU_PICK3(NAME) (cpu_avx512() ? NAME##_avx512 : CPU_PICK(NAME))
#else
#define CPU_BUILDS3(NAME, BODY, PARAMS, ARGS, WIDE_ARGS)                                 \
    CPU_BUILDS(NAME, BODY, PARAMS, ARGS)
#define CPU_PICK3(NAME) CPU_PICK(NAME)
#endif

/* Unaligned 8-float load and store (memcpy is what compilers turn into
 * one instruction). */
#define CPU_LOAD(v, p) memcpy(&(v), (p), sizeof(cpu_v8))
#define CPU_STORE(p, v) memcpy((p), &(v), sizeof(cpu_v8))
/* The float x in every lane (x is evaluated eight times: give it a plain
 * expression). Not 0 + x, which is an addition: -0 + 0 is +0. */
#define CPU_SPLAT(x) ((cpu_v8){(x), (x), (x), (x), (x), (x), (x), (x)})
/* m ? a : b per lane, m a comparison's result (all ones or zero). */
#define CPU_SELECT(m, a, b) ((cpu_v8)(((cpu_v8i)(a) & (m)) | ((cpu_v8i)(b) & ~(m))))

/* An 8 x 8 transpose: r[i][j] becomes r[j][i]. Three rounds of two-input
 * shuffles (AVX's unpack, shufps and vperm2f128 shapes). */
static inline CPU_INLINE void cpu_transpose8(cpu_v8 *r)
{
    const cpu_v8i lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const cpu_v8i q0 = {0, 1, 8, 9, 4, 5, 12, 13}, q1 = {2, 3, 10, 11, 6, 7, 14, 15};
    const cpu_v8i h0 = {0, 1, 2, 3, 8, 9, 10, 11}, h1 = {4, 5, 6, 7, 12, 13, 14, 15};
    cpu_v8 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], lo);
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi);
    }
    /* u[i + 2h + l]: columns h * 2 + l and that + 4 of rows i .. i + 3. */
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; h++) {
            u[i + 2 * h] = __builtin_shuffle(t[i + h], t[i + h + 2], q0);
            u[i + 2 * h + 1] = __builtin_shuffle(t[i + h], t[i + h + 2], q1);
        }
    for (int j = 0; j < 4; j++) {
        r[j] = __builtin_shuffle(u[j], u[j + 4], h0);
        r[j + 4] = __builtin_shuffle(u[j], u[j + 4], h1);
    }
}

/* 1 when the AVX2 + FMA builds of the kernels run here (the CPU has both,
 * and cpu_force_baseline has not turned them off). Cheap: one atomic load
 * after the first call. */
int cpu_avx2(void);
/* Test hook: 1 makes cpu_avx2() answer 0 from now on, so the baseline build
 * of every kernel can be checked on a machine that has AVX2; 0 undoes it. */
void cpu_force_baseline(int on);
/* 1 when the AVX-512 build of the few kernels that have one runs here (the
 * CPU has AVX-512 F and VL, cpu_avx2() is 1, and cpu_force_avx2 has not
 * turned it off). That build gives the same bits as the AVX2 one. */
int cpu_avx512(void);
/* Test hook: 1 makes cpu_avx512() answer 0, so the two builds can be
 * compared on a machine with AVX-512; 0 undoes it. */
void cpu_force_avx2(int on);

/* ---- the exponential --------------------------------------------------- */

/* e^-(hi + lo) per lane for 0 <= hi <= 87 and |lo| <= 2^-10 hi (garbage
 * beyond: the caller masks it), within 5e-9 relative before rounding
 * (GELU's and Softmax's exponential): 2^n e^r with n the integer nearest -hi log2 e and
 * r = -hi - n ln 2 - lo (ln 2 in two parts, the first short enough that
 * n times it is exact), e^r by its Taylor polynomial of degree 7 (error
 * below 5e-9 for |r| <= 0.35). One macro over the vector type T (TI its
 * integer twin, SPLAT its CPU_SPLAT) writes every width. */
#define CPU_EXP_NEG(T, TI, SPLAT, hi, lo, out)                                           \
    do {                                                                                 \
        const T round_ = SPLAT(12582912.0f); /* 1.5 2^23: adding rounds to integer */    \
        const T v_ = -*(hi);                                                             \
        T n_, r_, p_;                                                                    \
        TI bits_;                                                                        \
        n_ = (v_ * 1.44269504089f + round_) - round_;                                    \
        r_ = ((v_ - n_ * 0.693145751953125f) - n_ * 1.428606765330187e-06f) - *(lo);     \
        p_ = SPLAT(1.0f / 5040.0f);                                                      \
        p_ = p_ * r_ + 1.0f / 720.0f;                                                    \
        p_ = p_ * r_ + 1.0f / 120.0f;                                                    \
        p_ = p_ * r_ + 1.0f / 24.0f;                                                     \
        p_ = p_ * r_ + 1.0f / 6.0f;                                                      \
        p_ = p_ * r_ + 0.5f;                                                             \
        p_ = p_ * r_ + 1.0f;                                                             \
        p_ = p_ * r_ + 1.0f;                                                             \
        /* 2^n for n in [-126, 0]: the exponent field alone. */                          \
        bits_ = (__builtin_convertvector(n_, TI) + 127) << 23;                           \
        *(out) = p_ * (T)bits_;                                                          \
    } while (0)

static inline CPU_INLINE void cpu_exp_neg_v8(const cpu_v8 *hi, const cpu_v8 *lo,
                                             cpu_v8 *out)
{
    CPU_EXP_NEG(cpu_v8, cpu_v8i, CPU_SPLAT, hi, lo, out);
}

#if CPU_HAVE_AVX2_BUILD
/* The same on 16-float vectors (CPU_TARGET_AVX512 functions only): the same
 * operations lane by lane, so the same bits. */
static inline CPU_INLINE void cpu_exp_neg_v16(const cpu_v16 *hi, const cpu_v16 *lo,
                                              cpu_v16 *out)
{
    CPU_EXP_NEG(cpu_v16, cpu_v16i, CPU_SPLAT16, hi, lo, out);
}
#endif

/* The logistic sigmoid 1 / (1 + e^-x) per lane of *xv (sigmoid.c says how
 * accurate): with e = e^-|x|, which never overflows, 1 / (1 + e) for
 * x >= 0 and e / (1 + e) below, each a correctly rounded division. Where
 * |x| > 87, past CPU_EXP_NEG's range, e is e^-(|x| / 2) squared (|x| / 2
 * is exact), so below -87 the result is e^x down to the subnormals and 0
 * past -103.97, not 0 from -87 on; other lanes multiply e by 1, so only
 * lanes with |x| > 87 can make a subnormal product. x = +inf gives
 * 1, -inf +0, +-0 one half, NaN itself. One macro over the vector type T
 * (TI its integer twin, SPLAT and SELECT its CPU_SPLAT and CPU_SELECT)
 * writes every width, each lane the same operations, so the same bits. */
#define CPU_SIGMOID(T, TI, SPLAT, SELECT, xv)                                            \
    do {                                                                                 \
        const T sx_ = *(xv), szero_ = {0}, sone_ = SPLAT(1.0f), slim_ = SPLAT(87.0f);    \
        const T sa_ = (T)((TI)sx_ & ~(TI)SPLAT(-0.0f)); /* |x|; -0 and NaN as below */   \
        const TI sbig_ = sa_ > slim_;                                                    \
        T sh_ = SELECT(sbig_, sa_ * 0.5f, sa_), se_;                                     \
        /* NaN and what stays above 87 (|x| > 174, e is 0) take 87. */                   \
        sh_ = SELECT(sh_ <= slim_, sh_, slim_);                                          \
        CPU_EXP_NEG(T, TI, SPLAT, &sh_, &szero_, &se_);                                  \
        se_ = se_ * SELECT(sbig_, se_, sone_);                                           \
        se_ = SELECT(sx_ >= szero_, sone_, se_) / (sone_ + se_);                         \
        *(xv) = SELECT(sx_ != sx_, sx_, se_);                                            \
    } while (0)

/* tanh per lane of *xv (tanh.c says how, and how accurate): with a = |x|,
 * below 0.5 a + a^3 P(a^2) (P of degree 6, its coefficients below), from
 * 0.5 (1 - e) / (1 + e) with e = e^-2a, from 9.1 1; x's sign; NaN itself.
 * One macro over the vector type, as CPU_SIGMOID. */

#define CPU_TANH(T, TI, SPLAT, SELECT, xv)                                               \
    do {                                                                                 \
        const T tx_ = *(xv), tzero_ = {0}, tone_ = SPLAT(1.0f);                          \
        const TI tsign_ = (TI)tx_ & (TI)SPLAT(-0.0f);                                    \
        const T ta_ = (T)((TI)tx_ & ~(TI)SPLAT(-0.0f));                                  \
        const T tu_ = ta_ * ta_;                                                         \
        T tp_ = SPLAT(-1.0456625240e-03f), th_, te_, tr_;                                \
        tp_ = tp_ * tu_ + 3.4660180014e-03f;                                             \
        tp_ = tp_ * tu_ + -8.8436848329e-03f;                                            \
        tp_ = tp_ * tu_ + 2.1867964565e-02f;                                             \
        tp_ = tp_ * tu_ + -5.3968201539e-02f;                                            \
        tp_ = tp_ * tu_ + 1.3333333284e-01f;                                             \
        tp_ = tp_ * tu_ + -3.3333333334e-01f;                                            \
        /* 2a past 87 (and NaN) take 87: those lanes are 1 or NaN below. */              \
        th_ = ta_ + ta_;                                                                 \
        th_ = SELECT(th_ <= SPLAT(87.0f), th_, SPLAT(87.0f));                            \
        CPU_EXP_NEG(T, TI, SPLAT, &th_, &tzero_, &te_);                                  \
        tr_ = SELECT(ta_ < SPLAT(0.5f), ta_ + ta_ * tu_ * tp_,                           \
                     (tone_ - te_) / (tone_ + te_));                                     \
        tr_ = SELECT(ta_ > SPLAT(9.1f), tone_, tr_);                                     \
        tr_ = (T)((TI)tr_ | tsign_);                                                     \
        *(xv) = SELECT(tx_ != tx_, tx_, tr_);                                            \
    } while (0)

/* ---- one float function over an array (gelu.c, sigmoid.c) -------------- */

/* y[i] = F(x[i]) for n floats (y may be x), F a vector function applied in
 * place: F16 (on a cpu_v16, for the AVX-512 build) to 16 floats at a time
 * first where `wide` (a constant), then F8 (on a cpu_v8) to 8 at a time and
 * to the last n % 8 padded with zeros. Elsewhere than x86 F16 is never
 * named. */
#if CPU_HAVE_AVX2_BUILD
#define CPU_MAP_WIDE_(x, y, n, wide, F16, i)                                             \
    for (; (wide) && (i) + 16 <= (n); (i) += 16) {                                       \
        cpu_v16 mw_;                                                                     \
        memcpy(&mw_, (x) + (i), sizeof mw_);                                             \
        F16(&mw_);                                                                       \
        memcpy((y) + (i), &mw_, sizeof mw_);                                             \
    }
#else
#define CPU_MAP_WIDE_(x, y, n, wide, F16, i)
#endif
#define CPU_MAP_F32(x, y, n, wide, F8, F16)                                              \
    do {                                                                                 \
        const int64_t mn_ = (n);                                                         \
        int64_t mi_ = 0;                                                                 \
        cpu_v8 mv_;                                                                      \
        CPU_MAP_WIDE_(x, y, mn_, wide, F16, mi_)                                         \
        for (; mi_ + 8 <= mn_; mi_ += 8) {                                               \
            CPU_LOAD(mv_, (x) + mi_);                                                    \
            F8(&mv_);                                                                    \
            CPU_STORE((y) + mi_, mv_);                                                   \
        }                                                                                \
        if (mi_ < mn_) {                                                                 \
            float mt_[8] = {0};                                                          \
            memcpy(mt_, (x) + mi_, sizeof(float) * (size_t)(mn_ - mi_));                 \
            CPU_LOAD(mv_, mt_);                                                          \
            F8(&mv_);                                                                    \
            CPU_STORE(mt_, mv_);                                                         \
            memcpy((y) + mi_, mt_, sizeof(float) * (size_t)(mn_ - mi_));                 \
        }                                                                                \
    } while (0)

/* A float function over arrays, whole: given NAME_v8 (and, on x86,
 * NAME_v16) applying it in place to a vector, the body mapping them over
 * an array (CPU_MAP_F32), its three builds (CPU_BUILDS3) and EXPORT, void
 * EXPORT(const float *x, float *y, int64_t n), calling the build this
 * machine runs best. */
#define CPU_MAP_F32_FUNCTION(NAME, EXPORT)                                               \
    static inline CPU_INLINE void NAME##_body(const float *x, float *y, int64_t n,       \
                                              int wide)                                  \
    {                                                                                    \
        CPU_MAP_F32(x, y, n, wide, NAME##_v8, NAME##_v16);                               \
    }                                                                                    \
    CPU_BUILDS3(NAME, NAME##_body, (const float *x, float *y, int64_t n), (x, y, n, 0),  \
                (x, y, n, 1))                                                            \
    void EXPORT(const float *x, float *y, int64_t n)                                     \
    {                                                                                    \
        CPU_PICK3(NAME)(x, y, n);                                                        \
    }

/* ---- fused activations (act.c) ------------------------------------------ */

/* y[i] = act(y[i] + bias) for n floats (bias 0 for none). */
void op_act_bias(const op_act *a, float bias, float *y, int64_t n);

/* The activation on the n vectors v[0..n) of type T (a 8- or 16-float
 * vector; TI its integer twin, SPLAT and SELECT its CPU_SPLAT and
 * CPU_SELECT), the kind chosen once: a kernel's tile of sums stays in
 * registers (n a constant after inlining). Every width does each lane's
 * operations in the same order, so gives the same bits. */
#define CPU_ACT_N(T, TI, SPLAT, SELECT, a, v, n)                                         \
    do {                                                                                 \
        const T zero_ = {0}, one_ = SPLAT(1.0f);                                         \
        const T al_ = SPLAT((a)->alpha), be_ = SPLAT((a)->beta);                         \
        switch ((a)->kind) {                                                             \
        case OP_ACT_RELU:                                                                \
            _Pragma("GCC unroll 16") for (int i_ = 0; i_ < (n); i_++)(v)[i_] =           \
                SELECT((v)[i_] < zero_, zero_, (v)[i_]);                                 \
            break;                                                                       \
        case OP_ACT_LEAKY_RELU:                                                          \
            _Pragma("GCC unroll 16") for (int i_ = 0; i_ < (n); i_++)(v)[i_] =           \
                SELECT((v)[i_] < zero_, al_ * (v)[i_], (v)[i_]);                         \
            break;                                                                       \
        case OP_ACT_CLIP:                                                                \
            _Pragma("GCC unroll 16") for (int i_ = 0; i_ < (n); i_++)                    \
            {                                                                            \
                const T x_ = SELECT((v)[i_] < al_, al_, (v)[i_]);                        \
                (v)[i_] = SELECT(x_ > be_, be_, x_);                                     \
            }                                                                            \
            break;                                                                       \
        case OP_ACT_HARD_SIGMOID:                                                        \
        case OP_ACT_HARD_SWISH:                                                          \
            _Pragma("GCC unroll 16") for (int i_ = 0; i_ < (n); i_++)                    \
            {                                                                            \
                T h_ = al_ * (v)[i_] + be_;                                              \
                h_ = SELECT(h_ < zero_, zero_, h_);                                      \
                h_ = SELECT(h_ > one_, one_, h_);                                        \
                (v)[i_] = (a)->kind == OP_ACT_HARD_SWISH ? (v)[i_] * h_ : h_;            \
            }                                                                            \
            break;                                                                       \
        case OP_ACT_SIGMOID:                                                             \
        case OP_ACT_SILU:                                                                \
            _Pragma("GCC unroll 16") for (int i_ = 0; i_ < (n); i_++)                    \
            {                                                                            \
                T s_ = (v)[i_];                                                          \
                CPU_SIGMOID(T, TI, SPLAT, SELECT, &s_);                                  \
                (v)[i_] = (a)->kind == OP_ACT_SILU ? (v)[i_] * s_ : s_;                  \
            }                                                                            \
            break;                                                                       \
        default:                                                                         \
            break;                                                                       \
        }                                                                                \
    } while (0)

static inline CPU_INLINE void cpu_act_v8n(const op_act *a, cpu_v8 *v, int n)
{
    CPU_ACT_N(cpu_v8, cpu_v8i, CPU_SPLAT, CPU_SELECT, a, v, n);
}

/* The activation on one vector, for kernels (inlined into each build). */
static inline CPU_INLINE void cpu_act_v8(const op_act *a, cpu_v8 *v)
{
    cpu_act_v8n(a, v, 1);
}

#if CPU_HAVE_AVX2_BUILD
/* cpu_act_v8n on 16-float vectors, for the AVX-512 builds (inlined only
 * into CPU_TARGET_AVX512 functions). */
static inline CPU_INLINE void cpu_act_v16n(const op_act *a, cpu_v16 *v, int n)
{
    CPU_ACT_N(cpu_v16, cpu_v16i, CPU_SPLAT16, CPU_SELECT16, a, v, n);
}
#endif

/* Lanes live.. 7 of v set to 0 (CHW8's padding lanes) by a mask, not by
 * an element index, which would send a kernel's sums through memory. */
static inline CPU_INLINE void cpu_zero_lanes_from(int64_t live, cpu_v8 *v)
{
    if (live < 8) {
        const int32_t n = live < 0 ? 0 : (int32_t)live;
        const cpu_v8i lane = {0, 1, 2, 3, 4, 5, 6, 7};
        const cpu_v8i keep = lane < (cpu_v8i){n, n, n, n, n, n, n, n};
        *v = (cpu_v8)((cpu_v8i)*v & keep);
    }
}

/* ---- direct convolution (conv_direct.c) ---------------------------------- */

/* The sizes of a 2-D sliding window: input H x W, output OH x OW, kernel
 * kh x kw, strides, dilations and the padding before the first row and
 * column. A 1-D window is a 2-D one of one row (height, kernel height,
 * strides 1 and no padding in the first dim). */
typedef struct op_win2 {
    int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
} op_win2;

/* Fills g from 1 or 2 spatial dims (in, k, out, s, d, pb as op_win_geom
 * holds them); 0 for another number of dims. */
int op_win2_make(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
                 const int64_t *s, const int64_t *d, const int64_t *pb, op_win2 *g);

/* ---- 3 x 3 at stride 2 from the rows in place (conv_dw.c) ---------------
 *
 * A 3 x 3 window at stride 2 (dilation 1) with one padding column before,
 * as networks' downsampling layers have, reads its rows where they lie:
 * eight outputs take sixteen columns of each input row in two loads,
 * split into even and odd columns by one shuffle a tap. The shuffles give
 * their lanes in an order of their own (GCC makes vshufps of them: within
 * each half, two of the first vector then two of the second), the same for
 * every tap, so sums stay in that order and CPU_S2_BACK puts them back once
 * before they are stored. The first vector's padding column is the even
 * column of the output before, shifted in (CPU_S2_SHIFT; index 8 is zero).
 * Every load stays inside its row when OW >= 8 and 2 OW <= W (the last
 * vector is taken at OW - 8). */
#define CPU_S2_EVEN ((cpu_v8i){0, 2, 8, 10, 4, 6, 12, 14})
#define CPU_S2_ODD ((cpu_v8i){1, 3, 9, 11, 5, 7, 13, 15})
#define CPU_S2_BACK ((cpu_v8i){0, 1, 4, 5, 2, 3, 6, 7})
#define CPU_S2_SHIFT ((cpu_v8i){8, 0, 5, 2, 1, 4, 3, 6})

/* The three taps (columns -1, 0 and 1 of each output's pair) of one input
 * row for eight outputs whose middle taps are s[0], s[2], ..., s[14], in
 * the shuffles' lane order; s NULL: a padding row (zeros). `left`: the
 * first vector of a row, whose s[-1] is padding. */
static inline CPU_INLINE void cpu_s2k3_taps(const float *s, int left, cpu_v8 *t)
{
    const cpu_v8 zero = {0};
    cpu_v8 lo, hi;
    if (!s) {
        t[0] = t[1] = t[2] = zero;
    } else if (left) {
        CPU_LOAD(lo, s);
        CPU_LOAD(hi, s + 8);
        t[1] = __builtin_shuffle(lo, hi, CPU_S2_EVEN);
        t[2] = __builtin_shuffle(lo, hi, CPU_S2_ODD);
        t[0] = __builtin_shuffle(t[2], zero, CPU_S2_SHIFT);
    } else {
        cpu_v8 lo1, hi1;
        CPU_LOAD(lo, s - 1);
        CPU_LOAD(hi, s + 7);
        CPU_LOAD(lo1, s);
        CPU_LOAD(hi1, s + 8);
        t[0] = __builtin_shuffle(lo, hi, CPU_S2_EVEN);
        t[1] = __builtin_shuffle(lo, hi, CPU_S2_ODD);
        t[2] = __builtin_shuffle(lo1, hi1, CPU_S2_ODD);
    }
}

/* 1 when g is such a window whose loads stay inside its rows. */
static inline int cpu_s2k3_fits(const op_win2 *g)
{
    return g->kh == 3 && g->kw == 3 && g->sh == 2 && g->sw == 2 && g->dh == 1 &&
           g->dw == 1 && g->pl == 1 && g->OW >= 8 && 2 * g->OW <= g->W;
}

#define OP_DCONV_MAX_TAPS 512 /* Cg x kh x kw of the direct path */

/* One 2-D convolution of Cg input channels per group, computed directly:
 * each input channel is copied once into a zero-padded plane split into
 * stride-phase planes (phase (a, b) holds the padded input's rows a, a + sh,
 * ... and columns b, b + sw, ...), so that every kernel tap reads one
 * contiguous run of a phase plane for a whole row of outputs, and the rows
 * of one phase plane lie back to back, so a run continues into the next row:
 * the kernel computes Wq >= OW columns per output row (the extra ones are
 * dropped) as one flat vector loop over OH * Wq outputs, tap by tap from
 * registers. 1-D convolutions are 2-D ones of height 1. */
typedef struct op_dconv {
    op_win2 g;
    int64_t Cg;
    int64_t Hq, Wq;                 /* rows and columns of a phase plane */
    int64_t plane;                  /* floats of one phase plane, with slack */
    int64_t chan;                   /* floats of one channel's phase planes */
    int32_t ntaps;                  /* Cg * kh * kw */
    int32_t off[OP_DCONV_MAX_TAPS]; /* each tap's offset into the packed input */
} op_dconv;

/* Floats of one channel's phase planes (op_dconv.chan) for a 2-D kernel
 * k[2], output out[2], strides s[2] and dilations d[2] (a 1-D convolution:
 * k, out, s, d of 1 in the first dim); -1 on overflow. Grows with each. */
int64_t op_dconv_chan(const int64_t *k, const int64_t *out, const int64_t *s,
                      const int64_t *d);
/* Fills p for a convolution of 1 or 2 spatial dims (in, k, out, s, d, pb
 * as op_win_geom holds them) and Cg channels per group; 0 when the direct
 * path does not take it (more taps than OP_DCONV_MAX_TAPS, or sizes beyond
 * int32 offsets). */
int op_dconv_plan(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
                  const int64_t *s, const int64_t *d, const int64_t *pb, int64_t Cg,
                  op_dconv *p);
/* Packs channels [c0, c1) of x (Cg planes of H x W) into `packed` (p->chan
 * floats per channel). */
void op_dconv_pack(const op_dconv *p, const float *x, int64_t c0, int64_t c1,
                   float *packed);
/* Output rows [r0, r1) of nm output channels: channel m's plane (OH x OW)
 * at y + m ldy is act(bias[m] + the sum over taps of w[m ntaps + t] times
 * the packed input), w holding each channel's Cg x kh x kw weights; bias
 * NULL for none. */
void op_dconv_run(const op_dconv *p, const float *packed, const float *w, int64_t nm,
                  const float *bias, const op_act *act, float *y, int64_t ldy, int64_t r0,
                  int64_t r1);

/* ---- depthwise convolution (conv_dw.c) ---------------------------------- */

#define OP_DW_MAX_TAPS 64  /* kh x kw of the depthwise path */
#define OP_DW_MAX_STRIDE 8 /* its column stride */

/* A 2-D convolution of one input and one output channel (a group of a
 * depthwise Conv), a plane at a time: the plane is copied into zero-padded
 * rows split by column phase, then every output is the sum of its taps'
 * contiguous runs of those rows, computed in register tiles and stored
 * straight into the output plane (conv_dw.c). 1-D is 2-D of height 1. */
typedef struct op_dw {
    op_win2 g;
    int64_t Hp;   /* padded input rows read: (OH - 1) sh + (kh - 1) dh + 1 */
    int64_t Wq;   /* floats of a row's phase: OW rounded up to 8 + (kw - 1) dw / sw */
    int64_t slot; /* floats of scratch op_dw_run needs: Hp sw Wq + 8 */
    int64_t c0[OP_DW_MAX_STRIDE], c1[OP_DW_MAX_STRIDE]; /* phase columns inside */
    int32_t ntaps;
    int32_t off[OP_DW_MAX_TAPS]; /* tap (i, j): its run's offset from its output's */
    /* 1: 3 x 3 at stride 2 read from the input in place (cpu_s2k3_fits),
     * without the padded copy or the scratch */
    int32_t s2k3;
} op_dw;

/* op_dw.slot for a 2-D kernel k[2], output out[2], strides s[2] and
 * dilations d[2] (1-D: 1s in the first dim); -1 on overflow. Grows with
 * each. */
int64_t op_dw_slot(const int64_t *k, const int64_t *out, const int64_t *s,
                   const int64_t *d);
/* Fills p (arguments as op_dconv_plan's); 0 when the kernel has more than
 * OP_DW_MAX_TAPS taps, the column stride is above OP_DW_MAX_STRIDE or the
 * spatial dims are not 1 or 2. */
int op_dw_plan(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
               const int64_t *s, const int64_t *d, const int64_t *pb, op_dw *p);
/* Zeroes p->slot floats of scratch: the padding op_dw_run reads and
 * never writes, so once for every channel of one geometry. */
void op_dw_zero(const op_dw *p, float *scratch);
/* One channel: y (OH x OW) = act(bias + x (H x W) convolved with w (kh x
 * kw)). scratch: p->slot floats, zeroed by op_dw_zero for this p (by this
 * call's or another channel's run of the same p since). */
void op_dw_run(const op_dw *p, const float *x, const float *w, float bias,
               const op_act *act, float *y, float *scratch);

/* ---- depthwise convolution, eight channels at a time (conv_dw8.c) ------- */

#define OP_DW8_MAX_TAPS 64 /* kh x kw of the depthwise path */

/* A 2-D convolution with one input and one output channel per group (for
 * wide kernels at strides above 1; op_dw for the rest), computed eight
 * channels at a time: a band of
 * output rows reads its input rows moved channels-last into a buffer (one vector: one
 * pixel of eight channels, zero padded), so every tap is one vector load and one FMA per
 * output pixel, with no stride phases and no wasted columns; the band's
 * outputs go back to the channels' planes through 8 x 8 transposes. 1-D is
 * 2-D of height 1. */
typedef struct op_dw8 {
    op_win2 g;
    int64_t Wp;     /* pixels of a buffer row: (OW - 1) sw + (kw - 1) dw + 1 */
    int64_t rows;   /* output rows of a band */
    int64_t inrows; /* input rows of a band */
    int64_t inbuf;  /* floats of the input buffer; the output's follow */
} op_dw8;

/* Floats of scratch one op_dw8_run needs at most, for a 2-D kernel k[2],
 * output out[2], strides s[2] and dilations d[2] (1-D: 1s in the first
 * dim); -1 on overflow. Grows with each. */
int64_t op_dw8_slot(const int64_t *k, const int64_t *out, const int64_t *s,
                    const int64_t *d);
/* Fills p (arguments as op_dconv_plan's); 0 when the kernel has more than
 * OP_DW8_MAX_TAPS taps or the spatial dims are not 1 or 2. */
int op_dw8_plan(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
                const int64_t *s, const int64_t *d, const int64_t *pb, op_dw8 *p);
/* Channels [0, nc) (nc <= 8) of x (planes of H x W) into y (planes of
 * OH x OW): y_c = act(bias[c] + x_c convolved with w_c), w_c the kh x kw
 * weights at w + c kh kw; bias may be NULL. scratch: op_dw8_slot floats. */
void op_dw8_run(const op_dw8 *p, const float *x, const float *w, const float *bias,
                const op_act *act, int64_t nc, float *y, float *scratch);

/* ---- the blocked format CHW8 (conv_chw8.c) -------------------------------- */

/* Block cb of one image between LINEAR (C planes of R floats at x) and
 * CHW8 (R pixels of eight lanes at y, lanes past C zero). */
void op_chw8_pack_block(const float *x, int64_t C, int64_t R, int64_t cb, float *y);
void op_chw8_unpack_block(const float *y, int64_t C, int64_t R, int64_t cb, float *x);

/* A pointwise convolution of one image on CHW8: K input channels, M output
 * channels, P pixels; w the weights packed by op_pw8_pack ((M + 7) / 8
 * blocks of K x 8 floats), bias M floats or NULL, then the activation. */
typedef struct op_pw8 {
    int64_t K, M, P;
    const float *w, *bias;
    op_act act;
    /* 1: x is LINEAR, channel k's P pixels at x + k P (the same sums in
     * the same order as from blocks); 0: CHW8 blocks. */
    int32_t x_linear;
} op_pw8;

/* The same on the blocked format CHW8 (plugin.h): x is one block of eight
 * channels of one image (H x W pixels of eight lanes), y the block's output
 * (OH x OW pixels of eight), lanes from nc on written as 0, through the band
 * buffer (rows copied with their zero padding); w and bias as op_dw8_run's
 * for the block's channels. scratch: op_dw8_slot floats. */
void op_dw8b_run(const op_dw8 *p, const float *x, const float *w, const float *bias,
                 const op_act *act, int64_t nc, float *y, float *scratch);
/* Two consecutive blocks of one image at once, channels [0, nc) for
 * 8 < nc <= 16 (x: the first block, the second H W 8 floats on; y likewise
 * with OH OW 8; w and bias from the first block's channel on): what two
 * op_dw8b_run give, bit for bit, in one pass where cpu_avx512() (a pixel of
 * both blocks one 16-float vector), else as those two calls. */
void op_dw8b_run_pair(const op_dw8 *p, const float *x, const float *w, const float *bias,
                      const op_act *act, int64_t nc, float *y, float *scratch);
/* The same read in place, no band buffer (conv.c takes it at strides
 * above 1, op_dw8b_run at stride 1: bench/RESULTS.md, "CPU kernels"): x holds H x W
 * pixels of eight lanes, y gets output rows [oh0, oh1) of OH x OW (geometry, weights and
 * bias as op_dw8_run's for the block's channels; p from op_dw8_plan), lanes from nc on
 * written as 0. Tap by tap over strips of eight pixels; edge pixels check their columns.
 */
void op_dw8d_run(const op_dw8 *p, const float *x, const float *w, const float *bias,
                 const op_act *act, int64_t nc, int64_t oh0, int64_t oh1, float *y);

/* A 2-D convolution of one group into CHW8: C input channels of H x W at x
 * (one image), as LINEAR planes, or with `blocked` as CHW8 blocks; M
 * output channels, geometry g; w packed by op_cv8_pack over K = C kh kw
 * taps (W's own order), bias M floats or NULL, then the activation. Output
 * rows [oh0, oh1) of y (the image's (M + 7) / 8 blocks of OH x OW pixels of
 * eight); lanes past M are 0. Tiles of two blocks by six pixels, as
 * op_pw8_run's, each tap a broadcast input value; either layout of x gives
 * the same bits. The C channels are x's c0 .. c0 + C - 1 (a group's). */
typedef struct op_cv8 {
    op_win2 g;
    int64_t C, M;
    const float *w, *bias;
    op_act act;
    int blocked;
    int64_t c0; /* X's channel where the C start (a group's first) */
    /* A residual Z (Conv's `residual`) in y's layout, added to each sum
     * after the bias and before the activation, as the tile is stored
     * (the bits of a pass over the stored sums); NULL: none. Only where
     * op_cv8_takes_z(). */
    const float *z;
} op_cv8;
void op_cv8_run(const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y);
/* 1 when op_cv8_run's tiles here take op_cv8's z: not the AVX-512 build's
 * (cvp_tile), whose callers add Z in a pass of their own. */
int op_cv8_takes_z(void);

/* W [M][K] (row-major) into op_cv8's packing, zero past M: as
 * op_pw8_pack's blocks of K x 8, but each pair of blocks (ob even, ob + 1
 * < (M + 7) / 8) as K x 16, a tap's 16 weights together (one load of the
 * AVX-512 build's tiles); an odd last block as K x 8. */
void op_cv8_pack(const float *w, int64_t M, int64_t K, float *wp);
/* W [M][K] (row-major) into op_pw8's packing, zero past M. */
void op_pw8_pack(const float *w, int64_t M, int64_t K, float *wp);
/* Output blocks [ob0, ob1) at pixels [p0, p1) from x (the image's input
 * blocks) into y (the image's output blocks); lanes past M are 0. */
void op_pw8_run(const op_pw8 *p, const float *x, int64_t ob0, int64_t ob1, int64_t p0,
                int64_t p1, float *y);

/* ---- matrix products (gemm_kernel.c) ------------------------------------- */

/* What a product does to each element of C as it stores it: adds a bias
 * per row (row_bias[i]) or per column (col_bias[j]) or none (NULL), then the
 * activation. */
typedef struct op_epilogue {
    const float *row_bias, *col_bias;
    op_act act;
} op_epilogue;

/* e on an M x N block of C already computed (act.c). */
void op_epilogue_apply(const op_epilogue *e, int64_t M, int64_t N, float *C, int64_t ldc);

/* C[M x N] = epilogue(A[M x K] B[K x N]), all row-major with leading dims
 * (no transposes), in register tiles of 6 rows by 16 columns that read B
 * where it lies: the right size for the products of convolutions and
 * transformers, whose A or B is small enough to stay in cache, where a
 * BLAS's packing of both costs as much as the product. Each element's sum
 * runs over k in order from 0 (one FMA per term in the AVX2 build), so the
 * result does not depend on how a caller splits C into blocks. e may be
 * NULL. */
void op_gemm_nn(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                const float *B, int64_t ldb, float *C, int64_t ldc, const op_epilogue *e);

/* B packed once for many products over it (MatMul's B shared by every
 * block and thread): strip s of 16 columns [16 s, 16 s + 16) is a panel of
 * K rows of 16 floats at bp + 16 s K, zero past column N. The floats that
 * takes (0 for an empty B, -1 on overflow); strips [s0, s1) of B packed
 * (so threads can share the copy); and op_gemm_nn reading B from such
 * panels, bp pointing at the panel of the block's first column (a multiple
 * of 16). Every element is the same sum as op_gemm_nn's, bit for bit. */
int64_t op_gemm_panel_floats(int64_t K, int64_t N);
void op_gemm_pack_panels(int64_t K, int64_t N, const float *B, int64_t ldb, int64_t s0,
                         int64_t s1, float *bp);
void op_gemm_nn_panels(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *bp, float *C, int64_t ldc, const op_epilogue *e);

/* op_gemm_nn over several images' columns side by side (a pointwise
 * convolution over a batch of small images, whose per-image products are
 * too narrow for full tiles): column c = n hw + p (p < hw) of B's row k at
 * B + n ldbn + k ldb + p, of C's row i at C + n ldcn + i ldc + p; columns
 * [c0, c0 + N) computed. e's col_bias must be NULL. Every element has the
 * bits op_gemm_nn gives its image's product alone (K > 0). */
void op_gemm_nn_images(int64_t M, int64_t K, int64_t hw, int64_t c0, int64_t N,
                       const float *A, int64_t lda, const float *B, int64_t ldb,
                       int64_t ldbn, float *C, int64_t ldc, int64_t ldcn,
                       const op_epilogue *e);

/* op_gemm_nn with row k of B at B + boff[k] (K > 0): a direct convolution's
 * taps read in place from its packed input (conv_direct.c). Every load of
 * 16 floats from B + boff[k] + j, j < N, must be inside the caller's
 * memory. */
void op_gemm_nn_rows(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                     const float *B, const int32_t *boff, float *C, int64_t ldc,
                     const op_epilogue *e);

/* ---- matrix-vector products (gemv.c) ------------------------------------ */

/* A product of a few rows against a transposed B (a classifier's Gemm at a
 * small batch: C = A W^T): op_gemv_f32 computes it as dot products, B read
 * once for all the rows, where a BLAS would first pack the whole of B (for
 * MobileNet's two classifier layers at batch 8, 4 and 2.3 MiB per run). */
#define OP_GEMV_MAX_ROWS 8
#define OP_GEMV_ROWS(trans_a, trans_b, M)                                                \
    (!(trans_a) && (trans_b) && (M) <= OP_GEMV_MAX_ROWS)

/* op_gemm_f32_t's product (op_common.h) when it is a matrix times a vector:
 * M == 1 with op(A)'s row contiguous (A not transposed, or lda == 1), or
 * N == 1 with op(B)'s column contiguous (B transposed, or ldb == 1); or a
 * few rows against a transposed B (OP_GEMV_ROWS). Each output is a dot
 * product (a row of the matrix against the vector) or, when the matrix is
 * stored the other way, a sum of scaled rows; 1 when done, 0 when the shape
 * is not one of these. A BLAS's general product packs the whole matrix
 * first, which for a vector costs as much as the product. A row's dot
 * products are the same bits whichever of these computes them. */
int op_gemv_f32(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                int64_t ldc);

/* ---- rows: means, normalization, softmax (reduce_kernel.c) ---------------- */

/* Every sum below is in double, in an order fixed by n alone, so a row's
 * result depends on its values alone (and on the build: FMA). */

/* y[r] = the mean of the n floats at x + r n, for r < rows (NaN for n 0),
 * and the sum (0 for n 0): each a double sum in vectors, rounded once. */
void op_row_means(const float *x, int64_t rows, int64_t n, float *y);
void op_row_sums(const float *x, int64_t rows, int64_t n, float *y);
/* m[l] = the mean of lane l of the n pixels of eight floats at x, for l <
 * 8 (NaN for n 0): a CHW8 block's channel means. Summed in double from
 * float sums of four pixels each (reduce_kernel.c). */
void op_block_means(const float *x, int64_t n, float *m);
/* y[r] = the largest (is_max) or smallest of the n > 0 floats at x + r n,
 * for r < rows; a NaN wins, and of equal values (0 and -0) the first. */
void op_row_minmax(const float *x, int64_t rows, int64_t n, int is_max, float *y);
/* The mean of n > 0 floats and 1 / sqrt(variance + epsilon) (the
 * population variance, from the deviations from the mean rounded to
 * float). */
void op_row_stats(const float *x, int64_t n, float epsilon, float *mean, float *inv);
/* y[p] = (x[p] - mean) inv scale[p] + bias[p] for p < n (y may be x). */
void op_norm_apply(const float *x, int64_t n, float mean, float inv, const float *scale,
                   const float *bias, float *y);
/* Softmax (log_softmax when take_log) of n > 0 contiguous floats (y may be
 * x): 1 when done, 0 (nothing written) when the row's largest value is not
 * finite (NaN, an infinity), which the caller's plain loop handles. */
int op_softmax_row(const float *x, float *y, int64_t n, int take_log);

/* ---- max and average pooling (pool2d.c) --------------------------------- */

/* A max or average pool over two spatial dims (one: ih = kh = sh = dh = 1,
 * no padding there), float32. Begin pads pt (rows), pl (columns); end pads
 * pb, pr. Padding holds nothing: the maximum of a window with nothing
 * inside X is `lowest`; a mean divides by the positions inside X, or with
 * with_pad by those inside the padded input (an empty window's mean is 0
 * with with_pad, else NaN). Sums are float32, in window order. */
typedef struct cpu_pool2d {
    int32_t avg, with_pad;
    int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    float lowest;
} cpu_pool2d;

/* Output rows [b, e) of planes * oh (row i: output row i % oh of plane
 * i / oh). chw8_channels 0: LINEAR planes of ih * iw floats. Else CHW8
 * blocks of ih * iw * 8 floats of an image of chw8_channels channels (plane
 * i is block i % ceil(channels / 8) of its image); the padding lanes are
 * written 0. */
void cpu_pool2d_rows(const cpu_pool2d *p, const float *x, float *y, int64_t b, int64_t e,
                     int64_t chw8_channels);

/* ---- strided copies (copy.c) ----------------------------------------------- */

/* y, dense of dims d[0..nb_dims), from x read with element strides s (any
 * sign; elements of es bytes): contiguous runs as memcpy, threaded over
 * rows. */
void op_copy_strided(void *y, const void *x, size_t es, int32_t nb_dims, const int64_t *d,
                     const int64_t *s);

/* ---- GELU (gelu.c) ----------------------------------------------------- */

/* y[i] = x[i] / 2 (1 + erf(x[i] / sqrt 2)) for n floats (y may be x), within
 * 5e-7 relative of the exact value (gelu.c says how). */
void op_gelu_f32(const float *x, float *y, int64_t n);

/* ---- arithmetic (binary_kernel.c) --------------------------------------- */

/* binary.c's float32 Add, Sub, Mul and Div (rk: BIN_R_ADD, _SUB, _MUL or
 * _DIV of ew_kinds.h) in vectors, each element the one IEEE operation the
 * scalar loop does. op_bin_rows_f32: y[j] = a[j sa] op b[j sb] for j < n,
 * sa and sb 0 or 1 (a broadcast walk's row; y may be a or b).
 * op_bin_c8_f32: R pixels of a CHW8 block, y = a op b a pixel, a and b
 * advancing 8 floats a pixel (da, db 8) or not (0: one value a channel, a
 * squeeze-and-excitation scale); lanes from live on written as 0. */
void op_bin_rows_f32(int32_t rk, const float *a, int64_t sa, const float *b, int64_t sb,
                     float *y, int64_t n);
void op_bin_c8_f32(int32_t rk, const float *a, int64_t da, const float *b, int64_t db,
                   float *y, int64_t R, int64_t live);
/* Pow.c's float32 cube: y[j] = x[j]^3 as (x x) x in double, rounded once to
 * float (x x is exact there), four doubles a vector: the same bits as the
 * scalar loop, GPT-2's tanh GELU cubing every activation (y may be x). */
void op_cube_f32(const float *x, float *y, int64_t n);

/* ---- the sigmoid (sigmoid.c) ------------------------------------------- */

/* y[i] = 1 / (1 + e^-x[i]) for n floats (y may be x), within 2.4 ulp,
 * 1.9e-7 relative (sigmoid.c says how; CPU_SIGMOID); NaN stays NaN. */
void op_sigmoid_f32(const float *x, float *y, int64_t n);
/* y[i] = tanh(x[i]) for n floats (y may be x), within a few ulp (tanh.c
 * says how); NaN stays NaN, -0 stays -0. */
void op_tanh_f32(const float *x, float *y, int64_t n);
/* y[i] = x[i] / 2 (1 + tanh(sqrt(2 / pi) (x[i] + 0.044715 x[i]^3))), Gelu's
 * approximate "tanh" (unary_math.c), the tanh as op_tanh_f32's (y may be
 * x). */
void op_gelu_tanh_f32(const float *x, float *y, int64_t n);

/* ---- LSTM's gates (rnn_gates.c) ------------------------------------------ */

/* One batch entry's step of an LSTM whose functions are the defaults
 * (f Sigmoid, g and h Tanh), in one pass over its H units: the gates'
 * inputs g[k H + j] + (x[k H + j] + b[k H + j]) for gates k = i, o, f, c
 * (g: H R^T, x: X W^T, b: the biases' sum), peepholes p [3 H] (i, o, f;
 * NULL: none), each clipped to [-clip, clip] when has_clip, then
 * c = f c + i tanh(c gate), h = o tanh(c); f = 1 - i with input_forget.
 * c is read and written; h written. */
typedef struct op_lstm_row {
    const float *g, *x, *b, *p;
    float *c, *h;
    int64_t H;
    float clip;
    int32_t has_clip, input_forget;
} op_lstm_row;
void op_lstm_gates_f32(const op_lstm_row *r);

/* ---- quantization (quant_kernel.c; quant.h's element code) ---------------- */

struct opq_binary;
/* y[j] = quantize(x[j], scale, zp) for j < n, y of dtype int8 or uint8. */
void op_quantize_f32(const float *x, int64_t n, float scale, int32_t zp, int32_t dtype,
                     void *y);
/* y[j] = dequantize(x[j], zp, scale) for j < n, x int8, uint8 or int32. */
void op_dequantize_f32(int32_t dtype, const void *x, int64_t n, float scale, int32_t zp,
                       float *y);
/* The smallest and largest of 0 and n floats, NaN skipped:
 * DynamicQuantizeLinear's range, which always holds 0. */
void op_minmax_f32(const float *x, int64_t n, float *mn, float *mx);
/* One row of QLinearAdd (mul 0) or QLinearMul (1) over int8 or uint8:
 * y[j] from a[j sa] and b[j sb], sa and sb 0 or 1. */
void op_qbinary_row(int32_t mul, int32_t dtype, const void *a, int64_t sa, const void *b,
                    int64_t sb, void *y, int64_t n, const struct opq_binary *p);
/* y[j] = table[x[j]] for j < n (LookupTable8; lut_kernel.c): vpermb on
 * 64 bytes at a time where the CPU has AVX-512 VBMI (and cpu_avx2() is 1:
 * cpu_force_baseline makes it the plain loop), else a plain loop. x and y
 * may be one buffer. */
void op_lut8(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n);

/* ---- attention softmax rows (attn_kernel.c) ------------------------------ */

/* The softmax rows of a tile of attention scores, in place but for the
 * division: row r at s + r ld (query i0 + r) sees its first lim keys (n,
 * or i0 + r + 1 if fewer under causal); each score becomes s scale +
 * madd[c] (a float mask's row, at madd + r mstride), or with mbool (a bool
 * mask's row) s scale where it is true and -inf where not, or s scale;
 * then e^(score - the row's largest) with Softmax's exponential, zeros
 * past lim, and inv[r] = 1 / their sum (> 0): the caller scales the row's
 * product with V by it. inv[r] = 0 leaves the lim scores in the row and
 * nothing past them written, when their largest is NaN or infinite (every
 * key masked among them): the caller's plain loop handles those. */
void op_attn_softmax_rows(float *s, int64_t ld, int64_t rows, int64_t n, int64_t i0,
                          int causal, float scale, const float *madd,
                          const uint8_t *mbool, int64_t mstride, float *inv);

#endif /* PLUGRT_OPS_CPU_KERNELS_H */

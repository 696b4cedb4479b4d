/* Row kernels of cpu_kernels.h, in a baseline and an AVX2 + FMA build:
 * means, normalization statistics, the normalization itself and softmax.
 * Sums are in double, eight running sums of four lanes each (floats
 * widened as they are loaded) combined in a fixed order, so a row's result
 * depends on its values alone. */
#include <math.h>

#include "ops/cpu/cpu_kernels.h"

typedef float rk_v4 __attribute__((vector_size(16)));
typedef double rk_v4d __attribute__((vector_size(32)));

#if CPU_HAVE_AVX2_BUILD
typedef float rk_v8 __attribute__((vector_size(32)));
typedef double rk_v8d __attribute__((vector_size(64)));
#endif

/* The sum over k < n of x[k] - c, or of (x[k] - c)^2 when sq. `wide` (a
 * constant, 1 in the AVX-512 build only): the running sums two at a time
 * in vectors of eight doubles, each lane the same additions, so the same
 * bits. */
static inline CPU_INLINE double rk_sum(const float *x, int64_t n, int sq, double c,
                                       int wide)
{
    const rk_v4d cv = {c, c, c, c};
    rk_v4d acc[8] = {{0}};
    double s;
    int64_t k = 0;
#if CPU_HAVE_AVX2_BUILD
    if (wide) {
        const rk_v8d cw = {c, c, c, c, c, c, c, c};
        rk_v8d aw[4] = {{0}};
        for (; k + 32 <= n; k += 32)
            for (int v = 0; v < 4; v++) {
                rk_v8 f;
                rk_v8d d;
                memcpy(&f, x + k + 8 * v, sizeof f);
                d = __builtin_convertvector(f, rk_v8d) - cw;
                aw[v] += sq ? d * d : d;
            }
        for (int v = 0; v < 4; v++) {
            acc[2 * v] = __builtin_shufflevector(aw[v], aw[v], 0, 1, 2, 3);
            acc[2 * v + 1] = __builtin_shufflevector(aw[v], aw[v], 4, 5, 6, 7);
        }
    }
#endif
    for (; k + 32 <= n; k += 32)
        for (int v = 0; v < 8; v++) {
            rk_v4 f;
            rk_v4d d;
            memcpy(&f, x + k + 4 * v, sizeof f);
            d = __builtin_convertvector(f, rk_v4d) - cv;
            acc[v] += sq ? d * d : d;
        }
    for (; k + 4 <= n; k += 4) {
        rk_v4 f;
        rk_v4d d;
        memcpy(&f, x + k, sizeof f);
        d = __builtin_convertvector(f, rk_v4d) - cv;
        acc[0] += sq ? d * d : d;
    }
    for (int v = 0; v < 4; v++)
        acc[v] = acc[v] + acc[v + 4];
    acc[0] = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    s = (acc[0][0] + acc[0][1]) + (acc[0][2] + acc[0][3]);
    for (; k < n; k++) {
        double d = (double)x[k] - c;
        s += sq ? d * d : d;
    }
    return s;
}

static inline CPU_INLINE void rk_means(const float *x, int64_t rows, int64_t n, float *y)
{
    for (int64_t r = 0; r < rows; r++, x += n)
        y[r] = n > 0 ? (float)(rk_sum(x, n, 0, 0.0, 0) / (double)n) : __builtin_nanf("");
}

static inline CPU_INLINE void rk_sums(const float *x, int64_t rows, int64_t n, float *y)
{
    for (int64_t r = 0; r < rows; r++, x += n)
        y[r] = (float)rk_sum(x, n, 0, 0.0, 0);
}

static inline CPU_INLINE void rk_stats(const float *x, int64_t n, float epsilon,
                                       float *mean, float *inv, int wide)
{
    const float m = (float)(rk_sum(x, n, 0, 0.0, wide) / (double)n);
    const double sq = rk_sum(x, n, 1, (double)m, wide);
    *mean = m;
    *inv = (float)(1.0 / sqrt(sq / (double)n + (double)epsilon));
}

/* `wide` (a constant, 1 in the AVX-512 build only): 16 floats at a time
 * first, the same operations lane by lane. */
static inline CPU_INLINE void rk_apply(const float *x, int64_t n, float mean, float inv,
                                       const float *scale, const float *bias, float *y,
                                       int wide)
{
    const cpu_v8 mv = CPU_SPLAT(mean), iv = CPU_SPLAT(inv);
    int64_t p = 0;
#if CPU_HAVE_AVX2_BUILD
    if (wide) {
        const cpu_v16 mw = CPU_SPLAT16(mean), iw = CPU_SPLAT16(inv);
        for (; p + 16 <= n; p += 16) {
            cpu_v16 v, sc, b;
            memcpy(&v, x + p, sizeof v);
            memcpy(&sc, scale + p, sizeof sc);
            memcpy(&b, bias + p, sizeof b);
            v = (v - mw) * iw * sc + b;
            memcpy(y + p, &v, sizeof v);
        }
    }
#endif
    for (; p + 8 <= n; p += 8) {
        cpu_v8 v, s, b;
        CPU_LOAD(v, x + p);
        CPU_LOAD(s, scale + p);
        CPU_LOAD(b, bias + p);
        v = (v - mv) * iv * s + b;
        CPU_STORE(y + p, v);
    }
    for (; p < n; p++)
        y[p] = (x[p] - mean) * inv * scale[p] + bias[p];
}

/* e^(x - mx) for the lanes of v (x - mx <= 0); 0 once x - mx < -87, where
 * the exponential is 0 or a denormal below 2^-125. */
static inline CPU_INLINE void rk_exp_shift(cpu_v8 *v, float mx)
{
    const cpu_v8 zero = {0};
    cpu_v8 hi = CPU_SPLAT(mx) - *v, e;
    const cpu_v8i big = hi > 87.0f;
    hi = CPU_SELECT(big, zero, hi);
    cpu_exp_neg_v8(&hi, &zero, &e);
    *v = CPU_SELECT(big, zero, e);
}

static inline CPU_INLINE int rk_softmax(const float *x, float *y, int64_t n, int take_log)
{
    cpu_v8 mv = CPU_SPLAT(-INFINITY), t;
    float mx = -INFINITY, buf[8];
    rk_v4d acc[2] = {{0}, {0}};
    double sum;
    int64_t k = 0;
    /* The largest value. A NaN anywhere, or an infinite largest value,
     * goes back to the caller's loop (its NaN rules). */
    for (; k + 8 <= n; k += 8) {
        CPU_LOAD(t, x + k);
        mv = CPU_SELECT(t > mv, t, mv);
        if (__builtin_expect((t != t)[0] | (t != t)[1] | (t != t)[2] | (t != t)[3] |
                                 (t != t)[4] | (t != t)[5] | (t != t)[6] | (t != t)[7],
                             0))
            return 0;
    }
    for (int v = 0; v < 8; v++)
        mx = mv[v] > mx ? mv[v] : mx;
    for (; k < n; k++) {
        if (x[k] != x[k])
            return 0;
        mx = x[k] > mx ? x[k] : mx;
    }
    if (mx == INFINITY || mx == -INFINITY)
        return 0;
    /* The exponentials (kept in y unless it is the log) and their sum. */
    for (k = 0; k + 8 <= n; k += 8) {
        rk_v4 lo, hi;
        CPU_LOAD(t, x + k);
        rk_exp_shift(&t, mx);
        if (!take_log)
            CPU_STORE(y + k, t);
        memcpy(&lo, &t, sizeof lo);
        memcpy(&hi, (const float *)&t + 4, sizeof hi);
        acc[0] += __builtin_convertvector(lo, rk_v4d);
        acc[1] += __builtin_convertvector(hi, rk_v4d);
    }
    acc[0] += acc[1];
    sum = (acc[0][0] + acc[0][1]) + (acc[0][2] + acc[0][3]);
    if (k < n) {
        memset(buf, 0, sizeof buf);
        memcpy(buf, x + k, sizeof(float) * (size_t)(n - k));
        CPU_LOAD(t, buf);
        rk_exp_shift(&t, mx);
        CPU_STORE(buf, t);
        for (int64_t q = 0; q < n - k; q++) {
            sum += buf[q];
            if (!take_log)
                y[k + q] = buf[q];
        }
    }
    if (take_log) {
        const float ls = (float)log(sum);
        for (k = 0; k < n; k++)
            y[k] = (x[k] - mx) - ls;
    } else {
        const cpu_v8 iv = CPU_SPLAT((float)(1.0 / sum));
        for (k = 0; k + 8 <= n; k += 8) {
            CPU_LOAD(t, y + k);
            t *= iv;
            CPU_STORE(y + k, t);
        }
        for (; k < n; k++)
            y[k] *= iv[0];
    }
    return 1;
}

CPU_BUILDS(rk_means_k, rk_means, (const float *x, int64_t rows, int64_t n, float *y),
           (x, rows, n, y))

void op_row_means(const float *x, int64_t rows, int64_t n, float *y)
{
    CPU_PICK(rk_means_k)(x, rows, n, y);
}

CPU_BUILDS(rk_sums_k, rk_sums, (const float *x, int64_t rows, int64_t n, float *y),
           (x, rows, n, y))

void op_row_sums(const float *x, int64_t rows, int64_t n, float *y)
{
    CPU_PICK(rk_sums_k)(x, rows, n, y);
}

/* op_row_minmax: a row in vectors of eight (the last one overlapping the
 * one before: an extreme does not mind a value seen twice), lanes combined
 * at the end. That order picks another of two equal values, which only
 * 0 and -0 can tell apart, and another NaN: a row whose extreme is 0 or
 * that holds a NaN is folded again from its first element in element
 * order under reduce.c's rule (a NaN wins; of equal values the first
 * stays), so every value is what reduce.c's double walk gives. */
#define RK_MAX(a, b) ((b) > (a) || (b) != (b) ? (b) : (a))
#define RK_MIN(a, b) ((b) < (a) || (b) != (b) ? (b) : (a))

static inline CPU_INLINE float rk_fold(const float *xr, int64_t n, int is_max)
{
    float a = xr[0];
    for (int64_t j = 1; j < n; j++)
        a = is_max ? RK_MAX(a, xr[j]) : RK_MIN(a, xr[j]);
    return a;
}

static inline CPU_INLINE void rk_minmax(const float *x, int64_t rows, int64_t n,
                                        int is_max, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        cpu_v8 a, b;
        cpu_v8i nan;
        float m;
        int bad = 0;
        if (n < 8) {
            y[r] = rk_fold(xr, n, is_max);
            continue;
        }
        memcpy(&a, xr, sizeof a);
        nan = a != a;
        for (int64_t j = 8; j < n; j += 8) {
            memcpy(&b, xr + (j + 8 <= n ? j : n - 8), sizeof b);
            nan |= b != b;
            a = is_max ? CPU_SELECT(b > a, b, a) : CPU_SELECT(b < a, b, a);
        }
        m = a[0];
        for (int l = 0; l < 8; l++) {
            m = is_max ? (a[l] > m ? a[l] : m) : (a[l] < m ? a[l] : m);
            bad |= nan[l];
        }
        y[r] = bad || m == 0.0f ? rk_fold(xr, n, is_max) : m;
    }
}

CPU_BUILDS(rk_minmax_k, rk_minmax,
           (const float *x, int64_t rows, int64_t n, int is_max, float *y),
           (x, rows, n, is_max, y))

void op_row_minmax(const float *x, int64_t rows, int64_t n, int is_max, float *y)
{
    CPU_PICK(rk_minmax_k)(x, rows, n, is_max, y);
}

/* op_block_means: four running sums a lane (pixels k mod 4), each two
 * vectors of four doubles, combined in a fixed order. Sixteen pixels at a
 * time go in as four float sums of four pixels each (pixels k + q, k + q +
 * 4, ..., added in that order), so a double conversion serves four pixels:
 * the conversions, one a pixel before, bound the loop. Each float sum of
 * four is within 2^-22 of its magnitude. */
static inline CPU_INLINE void rk_block_means(const float *x, int64_t n, float *m)
{
    rk_v4d acc[4][2] = {{{0}}};
    int64_t k = 0;
    for (; k + 16 <= n; k += 16)
        for (int q = 0; q < 4; q++) {
            cpu_v8 f, t;
            CPU_LOAD(f, x + (k + q) * 8);
            for (int r = 1; r < 4; r++) {
                CPU_LOAD(t, x + (k + 4 * r + q) * 8);
                f += t;
            }
            for (int h = 0; h < 2; h++) {
                const rk_v4 fh = {f[4 * h], f[4 * h + 1], f[4 * h + 2], f[4 * h + 3]};
                acc[q][h] += __builtin_convertvector(fh, rk_v4d);
            }
        }
    for (; k + 4 <= n; k += 4)
        for (int q = 0; q < 4; q++)
            for (int h = 0; h < 2; h++) {
                rk_v4 f;
                memcpy(&f, x + (k + q) * 8 + 4 * h, sizeof f);
                acc[q][h] += __builtin_convertvector(f, rk_v4d);
            }
    for (; k < n; k++)
        for (int h = 0; h < 2; h++) {
            rk_v4 f;
            memcpy(&f, x + k * 8 + 4 * h, sizeof f);
            acc[0][h] += __builtin_convertvector(f, rk_v4d);
        }
    for (int h = 0; h < 2; h++) {
        const rk_v4d s = (acc[0][h] + acc[2][h]) + (acc[1][h] + acc[3][h]);
        for (int l = 0; l < 4; l++)
            m[4 * h + l] = n > 0 ? (float)(s[l] / (double)n) : __builtin_nanf("");
    }
}

CPU_BUILDS(rk_block_means_k, rk_block_means, (const float *x, int64_t n, float *m),
           (x, n, m))

void op_block_means(const float *x, int64_t n, float *m)
{
    CPU_PICK(rk_block_means_k)(x, n, m);
}

CPU_BUILDS3(rk_stats_k, rk_stats,
            (const float *x, int64_t n, float epsilon, float *mean, float *inv),
            (x, n, epsilon, mean, inv, 0), (x, n, epsilon, mean, inv, 1))

void op_row_stats(const float *x, int64_t n, float epsilon, float *mean, float *inv)
{
    CPU_PICK3(rk_stats_k)(x, n, epsilon, mean, inv);
}

CPU_BUILDS3(rk_apply_k, rk_apply,
            (const float *x, int64_t n, float mean, float inv, const float *scale,
             const float *bias, float *y),
            (x, n, mean, inv, scale, bias, y, 0), (x, n, mean, inv, scale, bias, y, 1))

void op_norm_apply(const float *x, int64_t n, float mean, float inv, const float *scale,
                   const float *bias, float *y)
{
    CPU_PICK3(rk_apply_k)(x, n, mean, inv, scale, bias, y);
}

/* CPU_BUILDS makes void functions: the answer goes through *done. */
static inline CPU_INLINE void rk_softmax_body(const float *x, float *y, int64_t n,
                                              int take_log, int *done)
{
    *done = rk_softmax(x, y, n, take_log);
}

CPU_BUILDS(rk_softmax_k, rk_softmax_body,
           (const float *x, float *y, int64_t n, int take_log, int *done),
           (x, y, n, take_log, done))

int op_softmax_row(const float *x, float *y, int64_t n, int take_log)
{
    int done = 0;
    CPU_PICK(rk_softmax_k)(x, y, n, take_log, &done);
    return done;
}

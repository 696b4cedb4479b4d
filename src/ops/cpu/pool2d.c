/*
 * Max and average pooling over one or two spatial dims, float32, in LINEAR
 * planes or CHW8 blocks (cpu_kernels.h). Each output is its window's
 * elements taken row by row, column by column: the same operations in the
 * same order in every build and both layouts, so the vector paths and the
 * scalar edges agree bit for bit.
 *
 * CHW8: each position is eight channels; an output position is one vector
 * per window element. LINEAR: the maximum eight outputs at a time from
 * input rows split by column phase (p2_max_ring), where they fit; else the
 * outputs whose windows lie wholly inside the row go eight at a time
 * (stride 1 one load per window element, stride 2 two loads and a shuffle,
 * other strides lane by lane); the edges one by one.
 */
#include "ops/cpu/cpu_kernels.h"

/* The kernel positions [*k0, *k1) of a window at s0 (dilation d, K
 * positions) that fall in [lo, hi). */
static inline CPU_INLINE void p2_span(int64_t s0, int64_t d, int64_t K, int64_t lo,
                                      int64_t hi, int64_t *k0, int64_t *k1)
{
    int64_t a = s0 >= lo ? 0 : (lo - s0 + d - 1) / d;
    int64_t b = hi - s0 <= 0 ? 0 : (hi - s0 + d - 1) / d;
    *k0 = a;
    *k1 = b < K ? b : K;
    if (*k1 < *k0)
        *k1 = *k0;
}

/* The maximum's rule, per lane: v replaces m when greater or NaN, and a
 * NaN once taken stays (numpy's max). */
#define P2_MAX8(m, v) ((m) = CPU_SELECT(((v) > (m)) | ((v) != (v)), (v), (m)))
#define P2_MAX1(m, v) ((m) = ((v) > (m) || (v) != (v)) ? (v) : (m))

/* The result of a window with cnt elements inside X (acc their max or sum)
 * and padded positions inside the padded input. */
static inline CPU_INLINE float p2_finish1(const cpu_pool2d *p, float acc, int64_t cnt,
                                          int64_t padded)
{
    if (!p->avg)
        return acc;
    if (cnt == 0 && !p->with_pad)
        return 0.0f / 0.0f;
    return acc / (float)(p->with_pad ? padded : cnt);
}

/* The outputs [*lo, *hi) of a row whose windows lie wholly inside X's
 * columns. */
static inline CPU_INLINE void p2_inside(const cpu_pool2d *p, int64_t *lo, int64_t *hi)
{
    const int64_t span = (p->kw - 1) * p->dw;
    *lo = (p->pl + p->sw - 1) / p->sw;
    *hi = p->iw - 1 - span + p->pl < 0 ? 0 : (p->iw - 1 - span + p->pl) / p->sw + 1;
    if (*hi > p->ow)
        *hi = p->ow;
    if (*lo > *hi)
        *lo = *hi;
}

/* A CHW8 output from its window's max or sum (cnt elements inside X,
 * padded ones inside the padded input), lanes outside `keep` 0. */
static inline CPU_INLINE void p2_store8(const cpu_pool2d *p, cpu_v8 acc, int64_t cnt,
                                        int64_t padded, cpu_v8i keep, float *y)
{
    const cpu_v8 zero = {0};
    cpu_v8 r;
    if (!p->avg)
        r = acc;
    else if (cnt == 0 && !p->with_pad)
        r = CPU_SPLAT(0.0f / 0.0f);
    else
        r = acc / CPU_SPLAT((float)(p->with_pad ? padded : cnt));
    r = CPU_SELECT(keep, r, zero);
    CPU_STORE(y, r);
}

/* CHW8 output (oy, ox) whose window may cross X's columns (rows [ky0, ky1)
 * of it inside X, prows inside the padded input). */
static inline CPU_INLINE void p2_out8(const cpu_pool2d *p, const float *x, float *y,
                                      int64_t oy, int64_t ox, int64_t ky0, int64_t ky1,
                                      int64_t prows, cpu_v8i keep)
{
    const int64_t y0 = oy * p->sh - p->pt, x0 = ox * p->sw - p->pl;
    int64_t kx0, kx1, pkx0, pkx1;
    cpu_v8 acc = p->avg ? (cpu_v8){0} : CPU_SPLAT(p->lowest);
    p2_span(x0, p->dw, p->kw, 0, p->iw, &kx0, &kx1);
    p2_span(x0, p->dw, p->kw, -p->pl, p->iw + p->pr, &pkx0, &pkx1);
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *row = x + (y0 + ky * p->dh) * p->iw * 8;
        for (int64_t kx = kx0; kx < kx1; kx++) {
            cpu_v8 v;
            CPU_LOAD(v, row + (x0 + kx * p->dw) * 8);
            if (p->avg)
                acc += v;
            else
                P2_MAX8(acc, v);
        }
    }
    p2_store8(p, acc, (ky1 - ky0) * (kx1 - kx0), prows * (pkx1 - pkx0), keep,
              y + (oy * p->ow + ox) * 8);
}

/* One output row oy of a plane: LINEAR (lanes 1) or a CHW8 block whose
 * lanes from `valid` on are padding (written 0). */
static inline CPU_INLINE void p2_row(const cpu_pool2d *p, const float *x, float *y,
                                     int64_t oy, int lanes, int valid)
{
    const int64_t y0 = oy * p->sh - p->pt;
    int64_t ky0, ky1, pky0, pky1, ox = 0;
    p2_span(y0, p->dh, p->kh, 0, p->ih, &ky0, &ky1);
    p2_span(y0, p->dh, p->kh, -p->pt, p->ih + p->pb, &pky0, &pky1);
    if (lanes == 8) {
        const cpu_v8i lane = {0, 1, 2, 3, 4, 5, 6, 7};
        const cpu_v8i keep =
            lane < (cpu_v8i){valid, valid, valid, valid, valid, valid, valid, valid};
        int64_t lo, hi;
        p2_inside(p, &lo, &hi);
        for (ox = 0; ox < lo; ox++)
            p2_out8(p, x, y, oy, ox, ky0, ky1, pky1 - pky0, keep);
        /* Windows inside the row: every column, no spans to work out. */
        for (; ox < hi; ox++) {
            const float *base = x + ((y0 + ky0 * p->dh) * p->iw + ox * p->sw - p->pl) * 8;
            cpu_v8 acc = p->avg ? (cpu_v8){0} : CPU_SPLAT(p->lowest);
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const float *row = base + (ky - ky0) * p->dh * p->iw * 8;
                for (int64_t kx = 0; kx < p->kw; kx++) {
                    cpu_v8 v;
                    CPU_LOAD(v, row + kx * p->dw * 8);
                    if (p->avg)
                        acc += v;
                    else
                        P2_MAX8(acc, v);
                }
            }
            p2_store8(p, acc, (ky1 - ky0) * p->kw, (pky1 - pky0) * p->kw, keep,
                      y + (oy * p->ow + ox) * 8);
        }
        for (; ox < p->ow; ox++)
            p2_out8(p, x, y, oy, ox, ky0, ky1, pky1 - pky0, keep);
        return;
    }
    {
        /* The outputs whose windows lie inside the row: [lo, hi). */
        const int64_t span = (p->kw - 1) * p->dw;
        int64_t lo, hi;
        p2_inside(p, &lo, &hi);
        while (ox < p->ow) {
            const int64_t x0 = ox * p->sw - p->pl;
            int64_t kx0, kx1, pkx0, pkx1;
            float acc = p->avg ? 0.0f : p->lowest;
            if (ox >= lo && ox + 8 <= hi) {
                /* Eight windows at once, each lane one output; two full
                 * loads for stride 2 where the row holds 16 floats. */
                const int full = x0 + span + 16 <= p->iw;
                cpu_v8 a8 = p->avg ? (cpu_v8){0} : CPU_SPLAT(p->lowest), r;
                for (int64_t ky = ky0; ky < ky1; ky++) {
                    const float *row = x + (y0 + ky * p->dh) * p->iw + x0;
                    for (int64_t kx = 0; kx < p->kw; kx++) {
                        const float *q = row + kx * p->dw;
                        cpu_v8 v;
                        if (p->sw == 1) {
                            CPU_LOAD(v, q);
                        } else if (p->sw == 2 && full) {
                            const cpu_v8i ev = {0, 2, 4, 6, 8, 10, 12, 14};
                            cpu_v8 v0, v1;
                            CPU_LOAD(v0, q);
                            CPU_LOAD(v1, q + 8);
                            v = __builtin_shuffle(v0, v1, ev);
                        } else {
                            for (int l = 0; l < 8; l++)
                                v[l] = q[l * p->sw];
                        }
                        if (p->avg)
                            a8 += v;
                        else
                            P2_MAX8(a8, v);
                    }
                }
                if (!p->avg)
                    r = a8;
                else if (ky1 == ky0 && !p->with_pad)
                    r = CPU_SPLAT(0.0f / 0.0f);
                else
                    r = a8 / CPU_SPLAT((float)((p->with_pad ? pky1 - pky0 : ky1 - ky0) *
                                               p->kw));
                CPU_STORE(y + oy * p->ow + ox, r);
                ox += 8;
                continue;
            }
            p2_span(x0, p->dw, p->kw, 0, p->iw, &kx0, &kx1);
            p2_span(x0, p->dw, p->kw, -p->pl, p->iw + p->pr, &pkx0, &pkx1);
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const float *row = x + (y0 + ky * p->dh) * p->iw;
                for (int64_t kx = kx0; kx < kx1; kx++) {
                    const float v = row[x0 + kx * p->dw];
                    if (p->avg)
                        acc += v;
                    else
                        P2_MAX1(acc, v);
                }
            }
            y[oy * p->ow + ox] = p2_finish1(p, acc, (ky1 - ky0) * (kx1 - kx0),
                                            (pky1 - pky0) * (pkx1 - pkx0));
            ox++;
        }
    }
}

/* The LINEAR maximum's rows keep their input rows split by column phase:
 * ring slot r % span (span the window's rows from first to last) holds
 * input row r as sw phases, phase q
 * element j the padded row's column j * sw + q, the columns outside X the
 * lowest value. A tap kx of outputs ox..ox+7 is then one plain load (phase
 * kx * dw % sw from ox + kx * dw / sw) for every stride and every output,
 * edges included: the lowest value leaves a maximum as it is (never
 * greater, never NaN), so the extra taps change no bit, and the order of
 * the others (row by row, column by column) is p2_row's. Each input row is
 * split once per range of rows, not once per window that reads it: at
 * stride 2 the shuffles of the two-load path took most of MaxPool 3x3
 * stride 2's time (densenet_w8's maxpool_5). Geometries whose ring does not
 * fit P2_RING floats take p2_row. */
#define P2_RING 4096
#define P2_RING_TAPS 32
#define P2_RING_ROWS 64

/* The ring's row length per phase: every output group's last tap. */
static inline CPU_INLINE int64_t p2_ring_len(const cpu_pool2d *p)
{
    return (p->ow + 7) / 8 * 8 + (p->kw - 1) * p->dw / p->sw + 1;
}

static int p2_ring_fits(const cpu_pool2d *p)
{
    const int64_t span = (p->kh - 1) * p->dh + 1;
    return !p->avg && p->kw <= P2_RING_TAPS && span <= P2_RING_ROWS && p->sw >= 1 &&
           p->sw <= 64 && span * p->sw * p2_ring_len(p) <= P2_RING;
}

/* An input row split into its sw phases of L floats at dst. */
static inline CPU_INLINE void p2_ring_fill(const cpu_pool2d *p, const float *row,
                                           float *dst, int64_t L)
{
    const int64_t sw = p->sw, pl = p->pl;
    for (int64_t q = 0; q < sw; q++) {
        float *d = dst + q * L;
        int64_t j = 0;
        /* Columns j * sw + q - pl inside [0, iw): j in [j0, j1). */
        {
            const int64_t j0 = q >= pl ? 0 : (pl - q + sw - 1) / sw;
            int64_t j1 = p->iw + pl - q <= 0 ? 0 : (p->iw + pl - q + sw - 1) / sw;
            const float *s = row + q - pl;
            if (j1 > L)
                j1 = L;
            for (; j < j0 && j < L; j++)
                d[j] = p->lowest;
            if (sw == 1) {
                if (j1 > j)
                    memcpy(d + j, s + j, sizeof(float) * (size_t)(j1 - j));
                j = j1 > j ? j1 : j;
            } else if (sw == 2) {
                const cpu_v8i ev = {0, 2, 4, 6, 8, 10, 12, 14};
                for (; j + 8 <= j1; j += 8) {
                    cpu_v8 v0, v1, v;
                    if (2 * j + q - pl + 16 > p->iw)
                        break; /* the second load would pass X's row */
                    CPU_LOAD(v0, s + 2 * j);
                    CPU_LOAD(v1, s + 2 * j + 8);
                    v = __builtin_shuffle(v0, v1, ev);
                    CPU_STORE(d + j, v);
                }
            }
            for (; j < j1; j++)
                d[j] = s[j * sw];
            for (; j < L; j++)
                d[j] = p->lowest;
        }
    }
}

/* Output rows [b, e) of a LINEAR maximum through the ring (p2_ring_fits). */
static inline CPU_INLINE void p2_max_ring(const cpu_pool2d *p, const float *x, float *y,
                                          int64_t b, int64_t e)
{
    float ring[P2_RING];
    int64_t tags[P2_RING_ROWS]; /* plane * ih + row held by each slot, -1 none */
    int64_t tap[P2_RING_TAPS];
    const int64_t span = (p->kh - 1) * p->dh + 1, L = p2_ring_len(p), S = p->sw * L;
    for (int64_t s = 0; s < span; s++)
        tags[s] = -1;
    for (int64_t kx = 0; kx < p->kw; kx++)
        tap[kx] = (kx * p->dw % p->sw) * L + kx * p->dw / p->sw;
    for (int64_t i = b; i < e; i++) {
        const int64_t pn = i / p->oh, oy = i % p->oh, y0 = oy * p->sh - p->pt;
        const float *xp = x + pn * p->ih * p->iw;
        float *yr = y + i * p->ow;
        int64_t ky0, ky1;
        p2_span(y0, p->dh, p->kh, 0, p->ih, &ky0, &ky1);
        for (int64_t ky = ky0; ky < ky1; ky++) {
            const int64_t r = y0 + ky * p->dh, s = r % span;
            if (tags[s] != pn * p->ih + r) {
                p2_ring_fill(p, xp + r * p->iw, ring + s * S, L);
                tags[s] = pn * p->ih + r;
            }
        }
        for (int64_t ox = 0; ox < p->ow; ox += 8) {
            cpu_v8 acc = CPU_SPLAT(p->lowest);
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const int64_t r = y0 + ky * p->dh;
                const float *q = ring + r % span * S + ox;
                for (int64_t kx = 0; kx < p->kw; kx++) {
                    cpu_v8 v;
                    CPU_LOAD(v, q + tap[kx]);
                    P2_MAX8(acc, v);
                }
            }
            if (ox + 8 <= p->ow)
                CPU_STORE(yr + ox, acc);
            else
                for (int64_t l = 0; l < p->ow - ox; l++)
                    yr[ox + l] = acc[l];
        }
    }
}

/* Rows [b, e) of planes * oh: row i is output row i % oh of plane i / oh. */
static inline CPU_INLINE void p2_rows(const cpu_pool2d *p, const float *x, float *y,
                                      int64_t b, int64_t e, int lanes, int64_t channels)
{
    const int64_t ip = p->ih * p->iw * lanes, op = p->oh * p->ow * lanes;
    if (lanes == 1 && p2_ring_fits(p)) {
        p2_max_ring(p, x, y, b, e);
        return;
    }
    for (int64_t i = b; i < e; i++) {
        const int64_t pl = i / p->oh;
        int valid = 8;
        if (lanes == 8) {
            /* Plane pl is block pl % C8 of its image. */
            const int64_t c8 = (channels + 7) / 8, c0 = (pl % c8) * 8;
            valid = channels - c0 < 8 ? (int)(channels - c0) : 8;
        }
        p2_row(p, x + pl * ip, y + pl * op, i % p->oh, lanes, valid);
    }
}

static inline CPU_INLINE void p2_linear(const cpu_pool2d *p, const float *x, float *y,
                                        int64_t b, int64_t e)
{
    p2_rows(p, x, y, b, e, 1, 0);
}

static inline CPU_INLINE void p2_chw8(const cpu_pool2d *p, const float *x, float *y,
                                      int64_t b, int64_t e, int64_t channels)
{
    p2_rows(p, x, y, b, e, 8, channels);
}

CPU_BUILDS(p2_linear_k, p2_linear,
           (const cpu_pool2d *p, const float *x, float *y, int64_t b, int64_t e),
           (p, x, y, b, e))
CPU_BUILDS(p2_chw8_k, p2_chw8,
           (const cpu_pool2d *p, const float *x, float *y, int64_t b, int64_t e,
            int64_t channels),
           (p, x, y, b, e, channels))

void cpu_pool2d_rows(const cpu_pool2d *p, const float *x, float *y, int64_t b, int64_t e,
                     int64_t chw8_channels)
{
    if (chw8_channels > 0)
        CPU_PICK(p2_chw8_k)(p, x, y, b, e, chw8_channels);
    else
        CPU_PICK(p2_linear_k)(p, x, y, b, e);
}

/* The depthwise convolution of cpu_kernels.h for wide kernels (5 and
 * more) at strides above 1: eight
 * channels at a time, moved channels-last into a band buffer so that one
 * vector holds one pixel of eight channels, in a baseline and an AVX2 +
 * FMA build. (Others take conv_dw.c's planes: measured, bench/RESULTS.md,
 * "CPU kernels".) */
#include "ops/cpu/cpu_kernels.h"

#include "base/base.h"

/* Output pixels per register strip: DW_U vectors of eight channels. */
#define DW_U 8
/* Floats of a band's input buffer the plan aims for (32 KiB: L1). */
#define DW_BUDGET 8192

/* The band buffer's start: scratch rounded up to 64 bytes (within the
 * slack op_dw8_slot leaves), so that no pixel's vector crosses a cache line
 * (unaligned, a third slower). */
static float *dw_band_start(float *scratch)
{
    return (float *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
}

static int64_t dw_band_rows(int64_t sh, int64_t wp)
{
    int64_t r = DW_BUDGET / (sh * wp * 8);
    return r < 1 ? 1 : r;
}

int64_t op_dw8_slot(const int64_t *k, const int64_t *out, const int64_t *s,
                    const int64_t *d)
{
    /* A band of R = min(OH, max(1, DW_BUDGET / (sh Wp L))) output rows, L
     * lanes a pixel (8, or 16 for a block pair, op_dw8b_run_pair), reads
     * (R - 1) sh + ekh input rows of Wp pixels and writes R rows of OW:
     * in <= min(DW_BUDGET, (OH - 1) sh Wp L) + ekh Wp L, at most the bound
     * for L = 16, and out <= min(DW_BUDGET + Wp 8, OH Wp 8) (OW <= Wp; only
     * the planes' path has an output buffer, of eight lanes). Each term
     * grows with every size, so the bound does. 64 floats more: room to
     * start the buffers at 64 bytes (dw_band_start). */
    int64_t wp8, wp16, t, in, out_, rows;
    if (!base_mul_i64(out[1] - 1, s[1], &wp8) || !base_mul_i64(k[1] - 1, d[1], &t) ||
        !base_add_i64(wp8, t + 1, &wp8) || !base_mul_i64(wp8, 8, &wp8) ||
        !base_mul_i64(wp8, 2, &wp16) || !base_mul_i64(out[0] - 1, s[0], &rows) ||
        !base_mul_i64(rows, wp16, &in) || !base_mul_i64(k[0] - 1, d[0], &t) ||
        !base_mul_i64(t + 1, wp16, &t) || !base_mul_i64(out[0], wp8, &out_))
        return -1;
    in = (in < DW_BUDGET ? in : DW_BUDGET) + t;
    if (out_ > DW_BUDGET + wp8)
        out_ = DW_BUDGET + wp8;
    return base_add_i64(in, out_ + 64, &in) ? in : -1;
}

int op_dw8_plan(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
                const int64_t *s, const int64_t *d, const int64_t *pb, op_dw8 *p)
{
    memset(p, 0, sizeof *p);
    if (!op_win2_make(ns, in, k, out, s, d, pb, &p->g))
        return 0;
    if (p->g.kh * p->g.kw > OP_DW8_MAX_TAPS)
        return 0;
    p->Wp = (p->g.OW - 1) * p->g.sw + (p->g.kw - 1) * p->g.dw + 1;
    p->rows = dw_band_rows(p->g.sh, p->Wp);
    if (p->rows > p->g.OH)
        p->rows = p->g.OH;
    p->inrows = (p->rows - 1) * p->g.sh + (p->g.kh - 1) * p->g.dh + 1;
    p->inbuf = p->inrows * p->Wp * 8;
    return 1;
}

/* Input rows [xr0, xr1) (inside the input) of channels c < nc (planes
 * x + c H W) into the band buffer `in`, whose row 0 is input row ir0: the
 * rows' pixels are contiguous in the planes, so they are moved eight at a
 * time in plane order (across row ends), each transposed block's pixels
 * stored at their (row, column + pl). Padding columns are zeroed here; rows
 * outside the input by the caller. */
static inline CPU_INLINE void dw_rows_in(const op_dw8 *p, const float *x, int64_t nc,
                                         int64_t xr0, int64_t xr1, int64_t ir0, float *in)
{
    const int64_t plane = p->g.H * p->g.W, row8 = p->Wp * 8;
    const int64_t wr =
        p->g.W < p->Wp - p->g.pl ? p->g.W : p->Wp - p->g.pl; /* columns kept */
    const int64_t f1 = xr1 * p->g.W;
    int64_t f = xr0 * p->g.W, r = xr0, col = 0;
    for (int64_t rr = xr0; rr < xr1; rr++) {
        float *row = in + (rr - ir0) * row8;
        memset(row, 0, sizeof(float) * (size_t)(p->g.pl * 8));
        if (p->g.pl + wr < p->Wp)
            memset(row + (p->g.pl + wr) * 8, 0,
                   sizeof(float) * (size_t)((p->Wp - p->g.pl - wr) * 8));
    }
    x += f;
    for (; f + 8 <= f1; f += 8, x += 8) {
        cpu_v8 v[8];
        for (int c = 0; c < 8; c++) {
            v[c] = (cpu_v8){0};
            if (c < nc)
                CPU_LOAD(v[c], x + c * plane);
        }
        cpu_transpose8(v);
        for (int q = 0; q < 8; q++) {
            if (col < wr)
                CPU_STORE(in + (r - ir0) * row8 + (col + p->g.pl) * 8, v[q]);
            if (++col == p->g.W) {
                col = 0;
                r++;
            }
        }
    }
    for (; f < f1; f++, x++) {
        if (col < wr)
            for (int c = 0; c < 8; c++)
                in[(r - ir0) * row8 + (col + p->g.pl) * 8 + c] =
                    c < nc ? x[c * plane] : 0.0f;
        if (++col == p->g.W) {
            col = 0;
            r++;
        }
    }
}

/* The band's input pixel at which each of nu output pixels' windows
 * starts (its top-left tap), lanes floats a pixel: the band's output
 * pixels taken in order across its rows, from (*oh, *ow), oh counted from
 * the band's first row; (*oh, *ow) moved on past them. A strip of them may
 * span rows, so that a row's last few pixels (OW 14 is a strip of 8, one
 * of 4 and one of 2) do not run alone, a multiply-add chain each, at the
 * FMA's latency. */
static inline CPU_INLINE void dw_strip_starts(const op_dw8 *p, const float *in,
                                              int64_t *oh, int64_t *ow, int nu,
                                              int64_t lanes, const float **start)
{
    int64_t h = *oh, w = *ow;
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++) {
        start[u] = in + (h * p->g.sh * p->Wp + w * p->g.sw) * lanes;
        if (++w == p->g.OW) {
            w = 0;
            h++;
        }
    }
    *oh = h;
    *ow = w;
}

/* nu output pixels (a constant after inlining) whose windows start at
 * start[u]: every tap's eight weights times its pixel, then the
 * activation, into out (nu pixels in order). */
static inline CPU_INLINE void dw_strip(const op_dw8 *p, const float *const *start,
                                       const cpu_v8 *wt, cpu_v8 b, const op_act *act,
                                       int nu, int64_t live, float *out)
{
    cpu_v8 acc[DW_U];
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++)
        acc[u] = b;
    for (int64_t i = 0; i < p->g.kh; i++) {
        const int64_t row = i * p->g.dh * p->Wp * 8;
        for (int64_t j = 0; j < p->g.kw; j++) {
            const cpu_v8 w = wt[i * p->g.kw + j];
            const int64_t off = row + j * p->g.dw * 8;
#pragma GCC unroll 16
            for (int u = 0; u < nu; u++) {
                cpu_v8 v;
                CPU_LOAD(v, start[u] + off);
                acc[u] += w * v;
            }
        }
    }
    cpu_act_v8n(act, acc, nu);
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++) {
        /* CHW8's padding lanes are zeros (live: the lanes that are
         * channels; 8 for the planes, whose extra lanes are dropped). */
        cpu_zero_lanes_from(live, &acc[u]);
        CPU_STORE(out + u * 8, acc[u]);
    }
}

/* The band's n output pixels in strips of DW_U, then of 4, 2 and 1 (each
 * compiled for its constant width); STRIP(nu, q) runs nu of them from
 * pixel q. */
#define DW_STRIPS(n, STRIP)                                                              \
    do {                                                                                 \
        int64_t q_ = 0;                                                                  \
        for (; q_ + DW_U <= (n); q_ += DW_U)                                             \
            STRIP(DW_U, q_);                                                             \
        if (((n)-q_) & 4) {                                                              \
            STRIP(4, q_);                                                                \
            q_ += 4;                                                                     \
        }                                                                                \
        if (((n)-q_) & 2) {                                                              \
            STRIP(2, q_);                                                                \
            q_ += 2;                                                                     \
        }                                                                                \
        if ((n)-q_)                                                                      \
            STRIP(1, q_);                                                                \
    } while (0)

/* Input rows [xr0, xr1) of one CHW8 block (rows of W pixels of eight) into
 * the band buffer, as dw_rows_in does from planes: a copy per row. */
static inline CPU_INLINE void dw_rows_in_blk(const op_dw8 *p, const float *x, int64_t xr0,
                                             int64_t xr1, int64_t ir0, float *in)
{
    const int64_t row8 = p->Wp * 8;
    const int64_t wr = p->g.W < p->Wp - p->g.pl ? p->g.W : p->Wp - p->g.pl;
    for (int64_t rr = xr0; rr < xr1; rr++) {
        float *row = in + (rr - ir0) * row8;
        memset(row, 0, sizeof(float) * (size_t)(p->g.pl * 8));
        if (wr > 0)
            memcpy(row + p->g.pl * 8, x + rr * p->g.W * 8,
                   sizeof(float) * (size_t)(wr * 8));
        if (p->g.pl + wr < p->Wp)
            memset(row + (p->g.pl + (wr > 0 ? wr : 0)) * 8, 0,
                   sizeof(float) * (size_t)((p->Wp - p->g.pl - (wr > 0 ? wr : 0)) * 8));
    }
}

/* The band's output, rows [r0, r1) of OW pixels x 8 (contiguous, as the
 * rows are in the planes), back to the planes of channels c < nc. */
static inline CPU_INLINE void dw_rows_out(const op_dw8 *p, const float *src, int64_t nc,
                                          int64_t r0, int64_t r1, float *y)
{
    const int64_t plane = p->g.OH * p->g.OW, n = (r1 - r0) * p->g.OW;
    int64_t q = 0;
    y += r0 * p->g.OW;
    for (; q + 8 <= n; q += 8) {
        cpu_v8 v[8];
        for (int j = 0; j < 8; j++)
            CPU_LOAD(v[j], src + (q + j) * 8);
        cpu_transpose8(v);
        for (int c = 0; c < 8; c++)
            if (c < nc)
                CPU_STORE(y + c * plane + q, v[c]);
    }
    for (; q < n; q++)
        for (int c = 0; c < nc; c++)
            y[c * plane + q] = src[q * 8 + c];
}

/* The band of output rows [r0, r1): the input rows it reads that lie in
 * the input, [*xr0, *xr1), and the buffer's rows (Wp pixels of `lanes`
 * floats, row 0 input row r0 sh - pt) outside the input set to zero. */
static void dw_band_edges(const op_dw8 *p, int64_t r0, int64_t r1, int64_t lanes,
                          float *in, int64_t *xr0, int64_t *xr1)
{
    const int64_t ir0 = r0 * p->g.sh - p->g.pt, row = p->Wp * lanes;
    const int64_t nin = (r1 - 1 - r0) * p->g.sh + (p->g.kh - 1) * p->g.dh + 1;
    *xr0 = ir0 < 0 ? 0 : ir0;
    *xr1 = ir0 + nin > p->g.H ? p->g.H : ir0 + nin;
    if (*xr1 < *xr0)
        *xr1 = *xr0;
    if (*xr0 > ir0)
        memset(in, 0, sizeof(float) * (size_t)((*xr0 - ir0) * row));
    if (ir0 + nin > *xr1)
        memset(in + (*xr1 - ir0) * row, 0,
               sizeof(float) * (size_t)((ir0 + nin - *xr1) * row));
}

/* blk (a constant): x and y are CHW8 blocks read and written in place,
 * else eight planes each. */
static inline CPU_INLINE void dw_body(const op_dw8 *p, const float *x, const float *w,
                                      const float *bias, const op_act *act, int64_t nc,
                                      float *y, float *scratch, int blk)
{
    const int64_t kvol = p->g.kh * p->g.kw;
    float *in = dw_band_start(scratch), *out = in + p->inbuf;
    cpu_v8 wt[OP_DW8_MAX_TAPS], b = {0};
    /* Weights and bias eight channels wide, 0 past nc. */
    for (int64_t t = 0; t < kvol; t++)
        for (int c = 0; c < 8; c++)
            wt[t][c] = c < nc ? w[c * kvol + t] : 0.0f;
    for (int c = 0; c < 8; c++)
        b[c] = bias && c < nc ? bias[c] : 0.0f;
    for (int64_t r0 = 0; r0 < p->g.OH; r0 += p->rows) {
        const int64_t r1 = r0 + p->rows < p->g.OH ? r0 + p->rows : p->g.OH;
        const int64_t ir0 = r0 * p->g.sh - p->g.pt;
        int64_t xr0, xr1;
        dw_band_edges(p, r0, r1, 8, in, &xr0, &xr1);
        if (blk)
            dw_rows_in_blk(p, x, xr0, xr1, ir0, in);
        else
            dw_rows_in(p, x, nc, xr0, xr1, ir0, in);
        {
            /* The band's output pixels, in place or into the buffer. */
            float *ob = blk ? y + r0 * p->g.OW * 8 : out;
            const int64_t live = blk ? nc : 8;
            int64_t soh = 0, sow = 0; /* the next strip's first pixel */
#define DW_STRIP8(nu, q)                                                                 \
    do {                                                                                 \
        const float *st_[DW_U];                                                          \
        dw_strip_starts(p, in, &soh, &sow, nu, 8, st_);                                  \
        dw_strip(p, st_, wt, b, act, nu, live, ob + (q)*8);                              \
    } while (0)
            DW_STRIPS((r1 - r0) * p->g.OW, DW_STRIP8);
#undef DW_STRIP8
        }
        if (!blk)
            dw_rows_out(p, out, nc, r0, r1, y);
    }
}

CPU_BUILDS(dw8, dw_body,
           (const op_dw8 *p, const float *x, const float *w, const float *bias,
            const op_act *act, int64_t nc, float *y, float *scratch),
           (p, x, w, bias, act, nc, y, scratch, 0))
CPU_BUILDS(dw8b, dw_body,
           (const op_dw8 *p, const float *x, const float *w, const float *bias,
            const op_act *act, int64_t nc, float *y, float *scratch),
           (p, x, w, bias, act, nc, y, scratch, 1))

void op_dw8b_run(const op_dw8 *p, const float *x, const float *w, const float *bias,
                 const op_act *act, int64_t nc, float *y, float *scratch)
{
    CPU_PICK(dw8b)(p, x, w, bias, act, nc, y, scratch);
}

/* The AVX-512 build of a block pair (cpu_avx512()): the band buffer holds
 * both blocks' rows side by side, a pixel's 16 channels in one 16-float
 * vector, so a tap is one load and one FMA for 16 channels. Each lane does
 * dw_strip's multiply-adds in its order and the activation's operations
 * (cpu_act_v16n), so every output has the AVX2 build's bits. */
#if CPU_HAVE_AVX2_BUILD
/* Input rows [xr0, xr1) of the two blocks (xa, xb: H x W pixels of eight)
 * into the pair's band buffer (rows of Wp pixels of 16, row 0 input row
 * ir0), padding columns zero. */
static inline CPU_INLINE void dw16_rows_in(const op_dw8 *p, const float *xa,
                                           const float *xb, int64_t xr0, int64_t xr1,
                                           int64_t ir0, float *in)
{
    /* Locals: the stores below may alias *p as far as the compiler knows,
     * which would reload its fields at every pixel. */
    const int64_t Wp = p->Wp, W = p->g.W, pl = p->g.pl, row16 = Wp * 16;
    const int64_t wr = W < Wp - pl ? W : Wp - pl;
    for (int64_t rr = xr0; rr < xr1; rr++) {
        float *row = in + (rr - ir0) * row16, *dst = row + pl * 16;
        const float *ra = xa + rr * W * 8, *rb = xb + rr * W * 8;
        int64_t c = 0;
        memset(row, 0, sizeof(float) * (size_t)(pl * 16));
        for (; c < wr; c++) {
            cpu_v8 a, b;
            CPU_LOAD(a, ra + c * 8);
            CPU_LOAD(b, rb + c * 8);
            CPU_STORE(dst + c * 16, a);
            CPU_STORE(dst + c * 16 + 8, b);
        }
        c = pl + (wr > 0 ? wr : 0);
        if (c < Wp)
            memset(row + c * 16, 0, sizeof(float) * (size_t)((Wp - c) * 16));
    }
}

/* dw_strip for the pair: windows from start[u] (dw_strip_starts, 16
 * lanes), the pair's 16 channels a vector; stored as the two blocks'
 * pixels at ya and yb. */
static inline CPU_INLINE void dw16_strip(const op_dw8 *p, const float *const *start,
                                         const cpu_v16 *wt, cpu_v16 b, const op_act *act,
                                         int nu, int64_t live, float *ya, float *yb)
{
    cpu_v16 acc[DW_U];
    cpu_v8 lo[DW_U], hi[DW_U];
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++)
        acc[u] = b;
    for (int64_t i = 0; i < p->g.kh; i++) {
        const int64_t row = i * p->g.dh * p->Wp * 16;
        for (int64_t j = 0; j < p->g.kw; j++) {
            const cpu_v16 w = wt[i * p->g.kw + j];
            const int64_t off = row + j * p->g.dw * 16;
#pragma GCC unroll 16
            for (int u = 0; u < nu; u++) {
                cpu_v16 v;
                memcpy(&v, start[u] + off, sizeof v);
                acc[u] += w * v;
            }
        }
    }
    cpu_act_v16n(act, acc, nu);
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++) {
        lo[u] = CPU_V16_LO(acc[u]);
        hi[u] = CPU_V16_HI(acc[u]);
        cpu_zero_lanes_from(live - 8, &hi[u]);
        CPU_STORE(ya + u * 8, lo[u]);
        CPU_STORE(yb + u * 8, hi[u]);
    }
}

CPU_TARGET_AVX512 static void dw16_pair(const op_dw8 *p, const float *x, const float *w,
                                        const float *bias, const op_act *act, int64_t nc,
                                        float *y, float *scratch)
{
    const int64_t kvol = p->g.kh * p->g.kw, ivol = p->g.H * p->g.W;
    const int64_t ovol = p->g.OH * p->g.OW;
    int64_t rows = DW_BUDGET / (p->g.sh * p->Wp * 16);
    cpu_v16 wt[OP_DW8_MAX_TAPS], b;
    float bt[16], *in = dw_band_start(scratch);
    rows = rows < 1 ? 1 : rows > p->g.OH ? p->g.OH : rows;
    /* Weights and bias 16 channels wide, 0 past nc. */
    for (int64_t t = 0; t < kvol; t++) {
        float wv[16];
        for (int c = 0; c < 16; c++)
            wv[c] = c < nc ? w[c * kvol + t] : 0.0f;
        memcpy(&wt[t], wv, sizeof wv);
    }
    for (int c = 0; c < 16; c++)
        bt[c] = bias && c < nc ? bias[c] : 0.0f;
    memcpy(&b, bt, sizeof b);
    for (int64_t r0 = 0; r0 < p->g.OH; r0 += rows) {
        const int64_t r1 = r0 + rows < p->g.OH ? r0 + rows : p->g.OH;
        const int64_t ir0 = r0 * p->g.sh - p->g.pt;
        int64_t xr0, xr1;
        dw_band_edges(p, r0, r1, 16, in, &xr0, &xr1);
        dw16_rows_in(p, x, x + ivol * 8, xr0, xr1, ir0, in);
        {
            float *ya = y + r0 * p->g.OW * 8, *yb = ya + ovol * 8;
            int64_t soh = 0, sow = 0; /* the next strip's first pixel */
#define DW_STRIP16(nu, q)                                                                \
    do {                                                                                 \
        const float *st_[DW_U];                                                          \
        dw_strip_starts(p, in, &soh, &sow, nu, 16, st_);                                 \
        dw16_strip(p, st_, wt, b, act, nu, nc, ya + (q)*8, yb + (q)*8);                  \
    } while (0)
            DW_STRIPS((r1 - r0) * p->g.OW, DW_STRIP16);
#undef DW_STRIP16
        }
    }
}
#endif

void op_dw8b_run_pair(const op_dw8 *p, const float *x, const float *w, const float *bias,
                      const op_act *act, int64_t nc, float *y, float *scratch)
{
    const int64_t kvol = p->g.kh * p->g.kw;
#if CPU_HAVE_AVX2_BUILD
    if (cpu_avx512()) {
        dw16_pair(p, x, w, bias, act, nc, y, scratch);
        return;
    }
#endif
    op_dw8b_run(p, x, w, bias, act, 8, y, scratch);
    op_dw8b_run(p, x + p->g.H * p->g.W * 8, w + 8 * kvol, bias ? bias + 8 : NULL, act,
                nc - 8, y + p->g.OH * p->g.OW * 8, scratch);
}

void op_dw8_run(const op_dw8 *p, const float *x, const float *w, const float *bias,
                const op_act *act, int64_t nc, float *y, float *scratch)
{
    CPU_PICK(dw8)(p, x, w, bias, act, nc, y, scratch);
}

/* The direct convolution of cpu_kernels.h: packing into stride-phase planes
 * and the tap loop, in a baseline and an AVX2 + FMA build. */
#include "ops/cpu/cpu_kernels.h"

#include "base/base.h"

/* Outputs computed per register strip: DC_V vectors of 8. Eight
 * independent sums cover the FMA's latency (4 cycles, 2 per cycle) and leave
 * AVX2's 16 registers room for the tap's weight and a load. */
#define DC_V 8
#define DC_STRIP (8 * DC_V)
/* Flat outputs of one block of rows that every output channel computes
 * before the next block (dc_body): its input, Cg channels of a few rows,
 * stays in L1. */
#define DC_BLOCK 512
/* Output channels from which a row's product (op_gemm_nn_rows) beats the
 * strips, which reload every input for each channel. */
#define DC_GEMM_MIN_CHANNELS 4

static int64_t dc_div_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

int op_win2_make(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
                 const int64_t *s, const int64_t *d, const int64_t *pb, op_win2 *g)
{
    if (ns < 1 || ns > 2)
        return 0;
    g->H = ns == 2 ? in[0] : 1;
    g->kh = ns == 2 ? k[0] : 1;
    g->OH = ns == 2 ? out[0] : 1;
    g->sh = ns == 2 ? s[0] : 1;
    g->dh = ns == 2 ? d[0] : 1;
    g->pt = ns == 2 ? pb[0] : 0;
    g->W = in[ns - 1];
    g->kw = k[ns - 1];
    g->OW = out[ns - 1];
    g->sw = s[ns - 1];
    g->dw = d[ns - 1];
    g->pl = pb[ns - 1];
    return 1;
}

int64_t op_dconv_chan(const int64_t *k, const int64_t *out, const int64_t *s,
                      const int64_t *d)
{
    /* A tap (i, j) reads phase ((i dh) mod sh, (j dw) mod sw) from row
     * (i dh) div sh and column (j dw) div sw on, so a phase plane has
     * Hq = OH + (kh - 1) dh div sh rows of Wq = OW + (kw - 1) dw div sw.
     * A strip may run DC_STRIP - 1 past the last output, and the last row's
     * dropped columns read into the row after Hq: slack of one row and one
     * strip, zero filled. Rounded to 16 floats (64 bytes), so every plane
     * starts on a cache line. */
    int64_t hq, wq, plane, n;
    if (!base_mul_i64(k[0] - 1, d[0], &hq) || !base_add_i64(hq / s[0], out[0] + 1, &hq) ||
        !base_mul_i64(k[1] - 1, d[1], &wq) || !base_add_i64(wq / s[1], out[1], &wq) ||
        !base_mul_i64(hq, wq, &plane) || !base_add_i64(plane, DC_STRIP + 15, &plane) ||
        !base_mul_i64(plane / 16 * 16, s[0], &n) || !base_mul_i64(n, s[1], &n))
        return -1;
    return n;
}

int op_dconv_plan(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
                  const int64_t *s, const int64_t *d, const int64_t *pb, int64_t Cg,
                  op_dconv *p)
{
    int64_t offh, offw, t = 0;
    memset(p, 0, offsetof(op_dconv, off));
    if (!op_win2_make(ns, in, k, out, s, d, pb, &p->g))
        return 0;
    p->Cg = Cg;
    if (Cg < 1 || p->g.kh * p->g.kw > OP_DCONV_MAX_TAPS / Cg)
        return 0;
    p->ntaps = (int32_t)(Cg * p->g.kh * p->g.kw);
    {
        const int64_t k2[2] = {p->g.kh, p->g.kw}, o2[2] = {p->g.OH, p->g.OW};
        const int64_t s2[2] = {p->g.sh, p->g.sw}, d2[2] = {p->g.dh, p->g.dw};
        p->chan = op_dconv_chan(k2, o2, s2, d2);
    }
    offh = (p->g.kh - 1) * p->g.dh / p->g.sh;
    offw = (p->g.kw - 1) * p->g.dw / p->g.sw;
    p->Hq = p->g.OH + offh;
    p->Wq = p->g.OW + offw;
    p->plane = ((p->Hq + 1) * p->Wq + DC_STRIP + 15) / 16 * 16;
    /* Offsets are int32 (a smaller table, read once per tap and strip). */
    if (p->chan < 0 || p->chan > INT32_MAX / Cg)
        return 0;
    for (int64_t c = 0; c < Cg; c++)
        for (int64_t i = 0; i < p->g.kh; i++)
            for (int64_t j = 0; j < p->g.kw; j++) {
                int64_t ri = i * p->g.dh, rj = j * p->g.dw;
                int64_t phase = (ri % p->g.sh) * p->g.sw + rj % p->g.sw;
                p->off[t++] = (int32_t)(c * p->chan + phase * p->plane +
                                        ri / p->g.sh * p->Wq + rj / p->g.sw);
            }
    return 1;
}

/* Phase row i of phase column b gets input row xr's columns j sw + b - pl
 * for j in [j0, j1) (columns outside are already zero). Stride 2, the
 * common case, splits pairs with a vector shuffle. */
static inline CPU_INLINE void dc_pack_row(const op_dconv *p, const float *xr, int64_t b,
                                          float *q)
{
    int64_t j0 = p->g.pl > b ? dc_div_up(p->g.pl - b, p->g.sw) : 0;
    int64_t j1 = dc_div_up(p->g.W + p->g.pl - b, p->g.sw), j;
    const float *src;
    if (j1 > p->Wq)
        j1 = p->Wq;
    if (j1 <= j0)
        return;
    src = xr + j0 * p->g.sw + b - p->g.pl; /* input column of phase column j0 */
    if (p->g.sw == 1) {
        memcpy(q + j0, src, sizeof(float) * (size_t)(j1 - j0));
        return;
    }
    j = j0;
    if (p->g.sw == 2) {
        /* Sixteen input columns whole inside the row give eight outputs. */
        const int64_t last = p->g.W - (b - p->g.pl + 2 * j0); /* columns left at src */
        const cpu_v8i even = {0, 2, 4, 6, 8, 10, 12, 14};
        for (; j + 8 <= j1 && 2 * (j - j0) + 16 <= last; j += 8) {
            cpu_v8 lo, hi, v;
            CPU_LOAD(lo, src + 2 * (j - j0));
            CPU_LOAD(hi, src + 2 * (j - j0) + 8);
            v = __builtin_shuffle(lo, hi, even);
            CPU_STORE(q + j, v);
        }
    }
    for (; j < j1; j++)
        q[j] = src[(j - j0) * p->g.sw];
}

/* Zero the channel's planes, then each input row into its phase row. */
static inline CPU_INLINE void dc_pack_body(const op_dconv *p, const float *x, int64_t c0,
                                           int64_t c1, float *packed)
{
    for (int64_t c = c0; c < c1; c++) {
        const float *xc = x + c * p->g.H * p->g.W;
        float *pc = packed + c * p->chan;
        memset(pc, 0, sizeof(float) * (size_t)p->chan);
        for (int64_t r = 0; r < p->g.H; r++) {
            /* Padded row r + pt is row (r + pt) div sh of phase (r + pt) mod sh. */
            int64_t rp = r + p->g.pt, a = rp % p->g.sh, i = rp / p->g.sh;
            if (i >= p->Hq)
                break;
            for (int64_t b = 0; b < p->g.sw; b++)
                dc_pack_row(p, xc + r * p->g.W, b,
                            pc + (a * p->g.sw + b) * p->plane + i * p->Wq);
        }
    }
}

CPU_BUILDS(dc_pack, dc_pack_body,
           (const op_dconv *p, const float *x, int64_t c0, int64_t c1, float *packed),
           (p, x, c0, c1, packed))

void op_dconv_pack(const op_dconv *p, const float *x, int64_t c0, int64_t c1,
                   float *packed)
{
    CPU_PICK(dc_pack)(p, x, c0, c1, packed);
}

/* Copies outputs [f, f + n) of the flat Wq-wide grid into y (OH x OW),
 * dropping the columns at or past OW. */
static void dc_scatter(const op_dconv *p, const float *buf, int64_t f, int64_t n,
                       float *y)
{
    const int64_t f0 = f, end = f + n;
    int64_t oh = f / p->Wq, ow = f - oh * p->Wq;
    while (f < end) {
        int64_t seg = p->Wq - ow < end - f ? p->Wq - ow : end - f;
        if (ow < p->g.OW) {
            int64_t cnt = p->g.OW - ow < seg ? p->g.OW - ow : seg;
            float *yr = y + oh * p->g.OW + ow;
            const float *br = buf + (f - f0);
            for (int64_t j = 0; j < cnt; j++)
                yr[j] = br[j];
        }
        f += seg;
        oh++;
        ow = 0;
    }
}

/* nv vectors of outputs from flat position i (nv a constant after
 * inlining, so acc[] lives in registers): every tap's weight times its run
 * of the packed input, then the activation, into buf. */
static inline CPU_INLINE void dc_strip(const op_dconv *p, const float *packed,
                                       const float *w, float bias, const op_act *act,
                                       int64_t i, int nv, float *buf)
{
    const float *q = packed + i;
    cpu_v8 acc[DC_V] = {{0}};
    for (int v = 0; v < nv; v++)
        acc[v] = CPU_SPLAT(bias);
    for (int32_t t = 0; t < p->ntaps; t++) {
        const float *qt = q + p->off[t];
        const cpu_v8 wt = CPU_SPLAT(w[t]);
        for (int v = 0; v < nv; v++) {
            cpu_v8 xv;
            CPU_LOAD(xv, qt + 8 * v);
            acc[v] += wt * xv;
        }
    }
    for (int v = 0; v < nv; v++) {
        cpu_act_v8(act, &acc[v]);
        CPU_STORE(buf + 8 * v, acc[v]);
    }
}

/* Flat outputs [i0, i1) of one output channel, in strips. */
static inline CPU_INLINE void dc_range(const op_dconv *p, const float *packed,
                                       const float *w, float bias, const op_act *act,
                                       int64_t i0, int64_t i1, float *y)
{
    float buf[DC_STRIP];
    int64_t i = i0;
    for (; i + DC_STRIP <= i1; i += DC_STRIP) {
        dc_strip(p, packed, w, bias, act, i, DC_V, buf);
        dc_scatter(p, buf, i, DC_STRIP, y);
    }
    /* The rest: at most DC_V vectors, as one strip of DC_V or strips of 4,
     * 2 and 1 (the last partly past i1: into the next rows, or past the
     * end into the planes' slack). */
    {
        const int64_t nvec = (i1 - i + 7) / 8;
        if (nvec == DC_V) {
            dc_strip(p, packed, w, bias, act, i, DC_V, buf);
            dc_scatter(p, buf, i, i1 - i, y);
            return;
        }
        /* Each width written out, so that it is compiled as a constant. */
        if (nvec & 4) {
            dc_strip(p, packed, w, bias, act, i, 4, buf);
            dc_scatter(p, buf, i, i1 - i < 32 ? i1 - i : 32, y);
            i += 32;
        }
        if (nvec & 2) {
            dc_strip(p, packed, w, bias, act, i, 2, buf);
            dc_scatter(p, buf, i, i1 - i < 16 ? i1 - i : 16, y);
            i += 16;
        }
        if (nvec & 1) {
            dc_strip(p, packed, w, bias, act, i, 1, buf);
            dc_scatter(p, buf, i, i1 - i, y);
        }
    }
}

/* Output rows [r0, r1) of nm channels, a block of rows at a time so that
 * the packed input they read stays in L1 while every channel uses it. */
static inline CPU_INLINE void dc_body(const op_dconv *p, const float *packed,
                                      const float *w, int64_t nm, const float *bias,
                                      const op_act *act, float *y, int64_t ldy,
                                      int64_t r0, int64_t r1)
{
    if (nm >= DC_GEMM_MIN_CHANNELS) {
        /* Each output row is a product: channels x taps weights by taps x
         * OW inputs, tap t's row read in place at packed + off[t] (the
         * tiles of op_gemm_nn_rows reuse each input load across six
         * channels). */
        const op_epilogue e = {bias, NULL, *act};
        for (int64_t oh = r0; oh < r1; oh++)
            op_gemm_nn_rows(nm, p->g.OW, p->ntaps, w, p->ntaps, packed + oh * p->Wq,
                            p->off, y + oh * p->g.OW, ldy, &e);
        return;
    }
    const int64_t rows = nm > 1 && p->Wq < DC_BLOCK ? DC_BLOCK / p->Wq : r1 - r0;
    for (int64_t rb = r0; rb < r1; rb += rows) {
        const int64_t i0 = rb * p->Wq, i1 = (rb + rows < r1 ? rb + rows : r1) * p->Wq;
        for (int64_t m = 0; m < nm; m++)
            dc_range(p, packed, w + m * p->ntaps, bias ? bias[m] : 0.0f, act, i0, i1,
                     y + m * ldy);
    }
}

CPU_BUILDS(dc_run, dc_body,
           (const op_dconv *p, const float *packed, const float *w, int64_t nm,
            const float *bias, const op_act *act, float *y, int64_t ldy, int64_t r0,
            int64_t r1),
           (p, packed, w, nm, bias, act, y, ldy, r0, r1))

void op_dconv_run(const op_dconv *p, const float *packed, const float *w, int64_t nm,
                  const float *bias, const op_act *act, float *y, int64_t ldy, int64_t r0,
                  int64_t r1)
{
    CPU_PICK(dc_run)(p, packed, w, nm, bias, act, y, ldy, r0, r1);
}

/* The depthwise convolution of cpu_kernels.h, one channel plane at a time,
 * in a baseline and an AVX2 + FMA build.
 *
 * The channel's input is first copied into zero-padded rows split by
 * column phase (phase b of a padded row holds its columns b, b + sw, ...),
 * so a tap (i, j) of output row oh reads one contiguous run: padded row
 * oh sh + i dh, phase (j dw) mod sw, from column (j dw) div sw on. The
 * outputs are then computed in tiles of R rows by V vectors of eight
 * columns (R V = 8 independent sums, enough to cover the FMA's latency),
 * tap by tap, each tap one broadcast weight and R V loads and FMAs; bias
 * and activation are applied as a tile is stored, straight into the
 * output plane (the last vector of a row through a copy of the columns
 * that exist). No transposes, no wasted columns but the last vector's.
 *
 * A 3 x 3 kernel at stride 2 with one column of padding before (MobileNet's
 * and most networks' downsampling layers) is computed from the input rows
 * where they lie instead (dw3s2): eight outputs read sixteen columns of
 * each of their three input rows in two loads, split into even and odd
 * columns by one shuffle per tap, so the plane is read once and nothing is
 * written but the output. 1.75-1.8x faster than the copy into column phases on
 * MobileNet-v3's two such layers (bench/RESULTS.md, "CPU kernels",
 * h/cpuperf). */
#include "ops/cpu/cpu_kernels.h"

#include "base/base.h"

static int64_t dw_round8(int64_t n)
{
    return (n + 7) / 8 * 8;
}

int64_t op_dw_slot(const int64_t *k, const int64_t *out, const int64_t *s,
                   const int64_t *d)
{
    /* Hp padded rows of sw phases of Wq floats, plus one vector of slack:
     * each factor grows with every size, so the bound does. */
    int64_t hp, wq, t, n;
    if (!base_mul_i64(out[0] - 1, s[0], &hp) || !base_mul_i64(k[0] - 1, d[0], &t) ||
        !base_add_i64(hp, t + 1, &hp) || !base_mul_i64(k[1] - 1, d[1], &t) ||
        !base_add_i64(dw_round8(out[1]), t / s[1], &wq) || !base_mul_i64(hp, s[1], &n) ||
        !base_mul_i64(n, wq, &n) || !base_add_i64(n, 8, &n))
        return -1;
    return n;
}

int op_dw_plan(int32_t ns, const int64_t *in, const int64_t *k, const int64_t *out,
               const int64_t *s, const int64_t *d, const int64_t *pb, op_dw *p)
{
    memset(p, 0, sizeof *p);
    if (!op_win2_make(ns, in, k, out, s, d, pb, &p->g))
        return 0;
    if (p->g.kh * p->g.kw > OP_DW_MAX_TAPS)
        return 0;
    p->ntaps = (int32_t)(p->g.kh * p->g.kw);
    if (p->g.sw > OP_DW_MAX_STRIDE)
        return 0;
    p->Hp = (p->g.OH - 1) * p->g.sh + (p->g.kh - 1) * p->g.dh + 1;
    p->Wq = dw_round8(p->g.OW) + (p->g.kw - 1) * p->g.dw / p->g.sw;
    p->slot = p->Hp * p->g.sw * p->Wq + 8;
    /* Offsets are int32 (a small table read once per tap and tile). */
    if (p->slot > INT32_MAX)
        return 0;
    /* Phase b's column c holds input column c sw + b - pl: inside the
     * input for c in [c0, c1). */
    for (int64_t b = 0; b < p->g.sw; b++) {
        const int64_t off = b - p->g.pl;
        int64_t c0 = off < 0 ? (-off + p->g.sw - 1) / p->g.sw : 0;
        int64_t c1 = (p->g.W - off + p->g.sw - 1) / p->g.sw;
        c1 = c1 > p->Wq ? p->Wq : c1;
        c0 = c0 > c1 ? c1 : c0;
        p->c0[b] = c0;
        p->c1[b] = c1;
    }
    p->s2k3 = cpu_s2k3_fits(&p->g);
    for (int64_t i = 0; i < p->g.kh; i++)
        for (int64_t j = 0; j < p->g.kw; j++) {
            const int64_t jd = j * p->g.dw;
            p->off[i * p->g.kw + j] = (int32_t)(i * p->g.dh * p->g.sw * p->Wq +
                                                jd % p->g.sw * p->Wq + jd / p->g.sw);
        }
    return 1;
}

/* n floats (fewer than 8) from src to dst, in copies of fixed sizes (a
 * loop the compiler would turn into a call to memcpy, which for a few
 * floats costs more than the copy). */
static inline CPU_INLINE void dw_copy_short(float *dst, const float *src, int64_t n)
{
    if (n & 4) {
        memcpy(dst, src, 4 * sizeof(float));
        dst += 4;
        src += 4;
    }
    if (n & 2) {
        memcpy(dst, src, 2 * sizeof(float));
        dst += 2;
        src += 2;
    }
    if (n & 1)
        *dst = *src;
}

/* The input's part of padded row r (input row r - pt, inside the input),
 * every phase; the padding around it is zero already (op_dw_zero) and is
 * never written. Stride 2, the common case besides 1, splits pairs with a
 * shuffle. */
static inline CPU_INLINE void dw_pack_row(const op_dw *p, const float *x, int64_t r,
                                          float *q)
{
    const int64_t sw = p->g.sw, wq = p->Wq, xr = r - p->g.pt;
    x += xr * p->g.W;
    for (int64_t b = 0; b < sw; b++, q += wq) {
        /* Phase column c holds input column c sw + off. */
        const int64_t off = b - p->g.pl, c1 = p->c1[b];
        int64_t c = p->c0[b];
        if (sw == 1) {
            for (; c + 8 <= c1; c += 8) {
                cpu_v8 v;
                CPU_LOAD(v, x + c + off);
                CPU_STORE(q + c, v);
            }
            if (c < c1)
                dw_copy_short(q + c, x + c + off, c1 - c);
            continue;
        }
        if (sw == 2) {
            const cpu_v8i even = {0, 2, 4, 6, 8, 10, 12, 14};
            /* Sixteen input columns from c * 2 + off, all inside. */
            for (; c + 8 <= c1 && c * 2 + off + 16 <= p->g.W; c += 8) {
                cpu_v8 lo, hi, v;
                CPU_LOAD(lo, x + c * 2 + off);
                CPU_LOAD(hi, x + c * 2 + off + 8);
                v = __builtin_shuffle(lo, hi, even);
                CPU_STORE(q + c, v);
            }
        }
        for (; c < c1; c++)
            q[c] = x[c * sw + off];
    }
}

void op_dw_zero(const op_dw *p, float *scratch)
{
    memset(scratch, 0, sizeof(float) * (size_t)p->slot);
}

/* Output rows [oh, oh + R) by vectors [ow, ow + 8 V) of columns (R and V
 * constants after inlining). */
static inline CPU_INLINE void dw_tile(const op_dw *p, const float *q, const float *w,
                                      float bias, const op_act *act, int R, int V,
                                      int64_t oh, int64_t ow, float *y)
{
    const int64_t ph = p->g.sw * p->Wq; /* floats of a padded row */
    /* Only acc[r][v] for r < R, v < V exist (registers, once R and V are
     * constants): GCC's warning sees the whole array. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
    cpu_v8 acc[8][4];
#pragma GCC unroll 16
    for (int r = 0; r < R; r++)
#pragma GCC unroll 16
        for (int v = 0; v < V; v++)
            acc[r][v] = CPU_SPLAT(bias);
    const int64_t rs = p->g.sh * ph; /* from one output row to the next */
    const float *q0 = q + oh * rs + ow;
    for (int32_t k = 0; k < p->ntaps; k++) {
        const float *t = q0 + p->off[k];
        const cpu_v8 wt = CPU_SPLAT(w[k]);
#pragma GCC unroll 16
        for (int r = 0; r < R; r++)
#pragma GCC unroll 16
            for (int v = 0; v < V; v++) {
                cpu_v8 xv;
                CPU_LOAD(xv, t + r * rs + 8 * v);
                acc[r][v] += wt * xv;
            }
    }
#pragma GCC diagnostic pop
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
        float *yr = y + (oh + r) * p->g.OW + ow;
        cpu_act_v8n(act, acc[r], V);
#pragma GCC unroll 16
        for (int v = 0; v < V; v++) {
            if (ow + 8 * v + 8 <= p->g.OW) {
                CPU_STORE(yr + 8 * v, acc[r][v]);
            } else {
                float tmp[8];
                CPU_STORE(tmp, acc[r][v]);
                dw_copy_short(yr + 8 * v, tmp, p->g.OW - ow - 8 * v);
            }
        }
    }
}

/* The columns [ow, ow + 8 V) of every output row (V a constant): tiles
 * of 8 / V rows, so that each holds eight independent sums, and the rows
 * left over in one tile of exactly as many (each count written out, so
 * that it is a constant too). */
static inline CPU_INLINE void dw_strip(const op_dw *p, const float *q, const float *w,
                                       float bias, const op_act *act, int V, int64_t ow,
                                       float *y)
{
    const int R = 8 / V;
    int64_t oh = 0;
    for (; oh + R <= p->g.OH; oh += R)
        dw_tile(p, q, w, bias, act, R, V, oh, ow, y);
#define DW_REST(n)                                                                       \
    case n:                                                                              \
        dw_tile(p, q, w, bias, act, n, V, oh, ow, y);                                    \
        break
    switch (p->g.OH - oh) {
        DW_REST(7);
        DW_REST(6);
        DW_REST(5);
        DW_REST(4);
        DW_REST(3);
        DW_REST(2);
        DW_REST(1);
    default:
        break;
    }
#undef DW_REST
}

static inline CPU_INLINE void dw_body(const op_dw *p, const float *x, const float *w,
                                      float bias, const op_act *act, float *y,
                                      float *scratch)
{
    const int64_t nvec = (p->g.OW + 7) / 8;
    /* The padded rows that hold input rows. */
    const int64_t r0 = p->g.pt, r1 = p->g.H + p->g.pt < p->Hp ? p->g.H + p->g.pt : p->Hp;
    int64_t v = 0;
    for (int64_t r = r0; r < r1; r++)
        dw_pack_row(p, x, r, scratch + r * p->g.sw * p->Wq);
    /* Strips of four vectors, then of two and one. */
    for (; v + 4 <= nvec; v += 4)
        dw_strip(p, scratch, w, bias, act, 4, 8 * v, y);
    if (v + 2 <= nvec) {
        dw_strip(p, scratch, w, bias, act, 2, 8 * v, y);
        v += 2;
    }
    if (v < nvec)
        dw_strip(p, scratch, w, bias, act, 1, 8 * v, y);
}

/* ---- 3 x 3 at stride 2, from the rows in place (cpu_s2k3_taps) --------
 *
 * Each output's taps are summed in the planes kernel's order, a padding
 * row or column as a product with zero, so both give the same bits. */

/* Outputs [ow, ow + 8) of output row oh. */
static inline CPU_INLINE void dw3_vec(const op_win2 *g, const float *x, const float *w,
                                      float bias, const op_act *act, float *y, int64_t oh,
                                      int64_t ow, int left)
{
    cpu_v8 acc = CPU_SPLAT(bias), t[3];
    for (int i = 0; i < 3; i++) {
        const int64_t r = 2 * oh - g->pt + i;
        cpu_s2k3_taps(r >= 0 && r < g->H ? x + r * g->W + 2 * ow : NULL, left, t);
        for (int j = 0; j < 3; j++)
            acc += CPU_SPLAT(w[3 * i + j]) * t[j];
    }
    acc = __builtin_shuffle(acc, CPU_S2_BACK);
    cpu_act_v8(act, &acc);
    CPU_STORE(y + oh * g->OW + ow, acc);
}

/* The plane with activation `kind` (a constant after inlining, so no
 * vector pays the activation's switch). */
static inline CPU_INLINE void dw3_plane(const op_win2 *g, const float *x, const float *w,
                                        float bias, const op_act *act, int32_t kind,
                                        float *y)
{
    const op_act a = {kind, act->alpha, act->beta};
    for (int64_t oh = 0; oh < g->OH; oh++) {
        int64_t ow = 8;
        dw3_vec(g, x, w, bias, &a, y, oh, 0, 1);
        for (; ow + 8 <= g->OW; ow += 8)
            dw3_vec(g, x, w, bias, &a, y, oh, ow, 0);
        if (ow < g->OW)
            dw3_vec(g, x, w, bias, &a, y, oh, g->OW - 8, 0);
    }
}

static inline CPU_INLINE void dw3_body(const op_win2 *g, const float *x, const float *w,
                                       float bias, const op_act *act, float *y)
{
    switch (act->kind) {
#define DW3_ACT(k)                                                                       \
    case k:                                                                              \
        dw3_plane(g, x, w, bias, act, k, y);                                             \
        break
        DW3_ACT(OP_ACT_NONE);
        DW3_ACT(OP_ACT_RELU);
        DW3_ACT(OP_ACT_LEAKY_RELU);
        DW3_ACT(OP_ACT_CLIP);
        DW3_ACT(OP_ACT_HARD_SIGMOID);
        DW3_ACT(OP_ACT_HARD_SWISH);
        DW3_ACT(OP_ACT_SIGMOID);
        DW3_ACT(OP_ACT_SILU);
#undef DW3_ACT
    default: /* a kind not listed above: right, if slower */
        dw3_plane(g, x, w, bias, act, act->kind, y);
        break;
    }
}

CPU_BUILDS(dw3, dw3_body,
           (const op_win2 *g, const float *x, const float *w, float bias,
            const op_act *act, float *y),
           (g, x, w, bias, act, y))

CPU_BUILDS(dw, dw_body,
           (const op_dw *p, const float *x, const float *w, float bias, const op_act *act,
            float *y, float *scratch),
           (p, x, w, bias, act, y, scratch))

void op_dw_run(const op_dw *p, const float *x, const float *w, float bias,
               const op_act *act, float *y, float *scratch)
{
    if (p->s2k3)
        CPU_PICK(dw3)(&p->g, x, w, bias, act, y);
    else
        CPU_PICK(dw)(p, x, w, bias, act, y, scratch);
}

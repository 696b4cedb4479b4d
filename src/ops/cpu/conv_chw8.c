/* The kernels of the blocked format CHW8 (plugin.h; cpu_kernels.h): moving
 * a tensor between LINEAR and CHW8, and the pointwise convolution on CHW8,
 * and the pointwise and depthwise convolutions on CHW8, in a baseline and
 * an AVX2 + FMA build.
 *
 * The pointwise product. Output block ob (eight output channels) at pixel
 * p is bias + sum over k of W[ob's eight][k] x[k][p]: each k one vector of
 * packed weights times the broadcast input element, so a tile of two blocks
 * by six pixels is 12 sums in registers, two weight loads and six
 * broadcasts per k, as the register tiles of the plain product
 * (gemm_kernel.c); there the columns are pixels in strips of 16, here the
 * pixels go six at a time and the channels eight, so small images (7 x 7,
 * 14 x 14) and channel counts waste fewer lanes. Sums run over k in order,
 * so results do not depend on how the work is split. */
#include "ops/cpu/cpu_kernels.h"

#include "base/base.h"

/* ---- LINEAR <-> CHW8 ---------------------------------------------------- */

/* Block cb of one image: x holds C planes of R floats, y the block's R
 * pixels of eight lanes (zero past C). */
static inline CPU_INLINE void c8_pack_body(const float *x, int64_t C, int64_t R,
                                           int64_t cb, float *y)
{
    const int64_t c0 = cb * 8, nc = C - c0 < 8 ? C - c0 : 8;
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        cpu_v8 v[8];
        for (int c = 0; c < 8; c++) {
            v[c] = (cpu_v8){0};
            if (c < nc)
                CPU_LOAD(v[c], x + (c0 + c) * R + r);
        }
        cpu_transpose8(v);
        for (int q = 0; q < 8; q++)
            CPU_STORE(y + (r + q) * 8, v[q]);
    }
    for (; r < R; r++)
        for (int c = 0; c < 8; c++)
            y[r * 8 + c] = c < nc ? x[(c0 + c) * R + r] : 0.0f;
}

/* The reverse: the block's real lanes back into their planes. */
static inline CPU_INLINE void c8_unpack_body(const float *y, int64_t C, int64_t R,
                                             int64_t cb, float *x)
{
    const int64_t c0 = cb * 8, nc = C - c0 < 8 ? C - c0 : 8;
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        cpu_v8 v[8];
        for (int q = 0; q < 8; q++)
            CPU_LOAD(v[q], y + (r + q) * 8);
        cpu_transpose8(v);
        for (int c = 0; c < nc; c++)
            CPU_STORE(x + (c0 + c) * R + r, v[c]);
    }
    for (; r < R; r++)
        for (int c = 0; c < nc; c++)
            x[(c0 + c) * R + r] = y[r * 8 + c];
}

CPU_BUILDS(c8_pack, c8_pack_body,
           (const float *x, int64_t C, int64_t R, int64_t cb, float *y), (x, C, R, cb, y))
CPU_BUILDS(c8_unpack, c8_unpack_body,
           (const float *y, int64_t C, int64_t R, int64_t cb, float *x), (y, C, R, cb, x))

void op_chw8_pack_block(const float *x, int64_t C, int64_t R, int64_t cb, float *y)
{
    CPU_PICK(c8_pack)(x, C, R, cb, y);
}

void op_chw8_unpack_block(const float *y, int64_t C, int64_t R, int64_t cb, float *x)
{
    CPU_PICK(c8_unpack)(y, C, R, cb, x);
}

/* ---- the pointwise convolution ------------------------------------------ */

void op_pw8_pack(const float *w, int64_t M, int64_t K, float *wp)
{
    for (int64_t ob = 0; ob < (M + 7) / 8; ob++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t l = 0; l < 8; l++)
                wp[(ob * K + k) * 8 + l] =
                    ob * 8 + l < M ? w[(ob * 8 + l) * K + k] : 0.0f;
}

void op_cv8_pack(const float *w, int64_t M, int64_t K, float *wp)
{
    const int64_t M8 = (M + 7) / 8;
    for (int64_t ob = 0; ob < M8; ob += 2) {
        /* A whole pair's 16 channels a tap, else the last block's 8. */
        const int64_t nl = ob + 1 < M8 ? 16 : 8;
        for (int64_t k = 0; k < K; k++)
            for (int64_t l = 0; l < nl; l++)
                wp[ob * K * 8 + k * nl + l] =
                    ob * 8 + l < M ? w[(ob * 8 + l) * K + k] : 0.0f;
    }
}

#define PW_U 6 /* pixels of a tile */

/* A tile's sums start at blocks ob.. ob + nb - 1's biases (0 past M, and
 * without a bias). */
static inline CPU_INLINE void pw8_start(const float *bias, int64_t M, int64_t ob, int nb,
                                        int nu, cpu_v8 (*acc)[PW_U])
{
#pragma GCC unroll 16
    for (int b = 0; b < nb; b++) {
        cpu_v8 bv = {0};
        if (bias && (ob + b) * 8 + 8 <= M) {
            CPU_LOAD(bv, bias + (ob + b) * 8);
        } else if (bias) {
            float t[8];
            for (int l = 0; l < 8; l++)
                t[l] = (ob + b) * 8 + l < M ? bias[(ob + b) * 8 + l] : 0.0f;
            CPU_LOAD(bv, t);
        }
#pragma GCC unroll 16
        for (int u = 0; u < nu; u++)
            acc[b][u] = bv;
    }
}

/* A tile's sums through the activation into blocks ob.. of y (P pixels a
 * block), from pixel px; lanes past M are 0. */
static inline CPU_INLINE void pw8_finish(const op_act *act, int64_t M, int64_t ob, int nb,
                                         int nu, cpu_v8 (*acc)[PW_U], int64_t P,
                                         int64_t px, float *y)
{
#pragma GCC unroll 16
    for (int b = 0; b < nb; b++) {
        const int64_t live = M - (ob + b) * 8;
        float *yb = y + ((ob + b) * P + px) * 8;
        cpu_act_v8n(act, acc[b], nu);
#pragma GCC unroll 16
        for (int u = 0; u < nu; u++) {
            cpu_zero_lanes_from(live, &acc[b][u]);
            CPU_STORE(yb + u * 8, acc[b][u]);
        }
    }
}

/* Where X's values lie (op_pw8.x_linear): pixel u of lane l of a block
 * at x[u * PW_SU(lin) + l * PW_SL(lin, P)], a block's next at P * 8 on,
 * for CHW8 blocks (lin 0) and LINEAR planes (lin 1) alike. */
#define PW_SU(lin) ((lin) ? 1 : 8)
#define PW_SL(lin, P) ((lin) ? (P) : 1)

/* Input channel k (lane l of its block, x at the tile's first pixel; su
 * and sl as PW_SU and PW_SL): the blocks' eight weights times each
 * pixel's value. */
static inline CPU_INLINE void pw8_step(const float *w, int64_t K, const float *x,
                                       int64_t k, int l, int su, int64_t sl, int nb,
                                       int nu, cpu_v8 (*acc)[PW_U])
{
    cpu_v8 w0, w1 = {0};
    CPU_LOAD(w0, w + k * 8);
    if (nb == 2)
        CPU_LOAD(w1, w + (K + k) * 8);
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++) {
        const cpu_v8 xv = CPU_SPLAT(x[u * su + l * sl]);
        acc[0][u] += w0 * xv;
        if (nb == 2)
            acc[1][u] += w1 * xv;
    }
}

/* nb blocks (1 or 2) from ob by nu pixels (both constants after inlining)
 * from pixel px: 12 sums, which with the two weights and a broadcast fill
 * 15 of AVX2's 16 registers. (Three blocks by four pixels, three weights
 * and four broadcasts a channel, ran 3-4x slower: spilled.) */
static inline CPU_INLINE void pw8_tile(const op_pw8 *p, const float *x, int nb, int nu,
                                       int64_t ob, int64_t px, float *y, int lin)
{
    const int64_t K = p->K, P = p->P, sl = PW_SL(lin, P);
    const int su = PW_SU(lin);
    const float *w = p->w + ob * K * 8;
    cpu_v8 acc[2][PW_U];
    pw8_start(p->bias, p->M, ob, nb, nu, acc);
    x += px * su;
    for (int64_t kb = 0; kb * 8 < K; kb++, x += P * 8) {
        /* Whole blocks with a constant trip count (unrolled), the last of
         * fewer channels with its own. */
        if (K - kb * 8 >= 8)
            for (int l = 0; l < 8; l++)
                pw8_step(w, K, x, kb * 8 + l, l, su, sl, nb, nu, acc);
        else
            for (int64_t l = 0; l < K - kb * 8; l++)
                pw8_step(w, K, x, kb * 8 + l, (int)l, su, sl, nb, nu, acc);
    }
    pw8_finish(&p->act, p->M, ob, nb, nu, acc, P, px, y);
}

/* Pixels [p0, p1) of nb blocks from ob: tiles of PW_U, then 4, 2 and 1
 * (written out so that each is compiled for its constant width). */
static inline CPU_INLINE void pw8_pixels(const op_pw8 *p, const float *x, int nb,
                                         int64_t ob, int64_t p0, int64_t p1, float *y,
                                         int lin)
{
    int64_t px = p0;
    for (; px + PW_U <= p1; px += PW_U)
        pw8_tile(p, x, nb, PW_U, ob, px, y, lin);
    if ((p1 - px) & 4) {
        pw8_tile(p, x, nb, 4, ob, px, y, lin);
        px += 4;
    }
    if ((p1 - px) & 2) {
        pw8_tile(p, x, nb, 2, ob, px, y, lin);
        px += 2;
    }
    if (p1 - px)
        pw8_tile(p, x, nb, 1, ob, px, y, lin);
}

/* Pixels of a chunk: its input (every channel) about 16 KiB, in L1 while
 * every block pair sweeps it; a multiple of the tile. */
#define PW_CHUNK_FLOATS 4096

/* Pixels of a chunk for K input channels, a multiple of `tile`. */
static inline int64_t pw8_chunk(int64_t K, int64_t tile)
{
    const int64_t pc = PW_CHUNK_FLOATS / (8 * ((K + 7) / 8)) / tile * tile;
    return pc < tile ? tile : pc;
}

static inline CPU_INLINE void pw8_span(const op_pw8 *p, const float *x, int64_t ob0,
                                       int64_t ob1, int64_t p0, int64_t p1, float *y,
                                       int lin)
{
    const int64_t pc = pw8_chunk(p->K, PW_U);
    for (int64_t c0 = p0; c0 < p1; c0 += pc) {
        const int64_t c1 = c0 + pc < p1 ? c0 + pc : p1;
        int64_t ob = ob0;
        for (; ob + 2 <= ob1; ob += 2)
            pw8_pixels(p, x, 2, ob, c0, c1, y, lin);
        if (ob < ob1)
            pw8_pixels(p, x, 1, ob, c0, c1, y, lin);
    }
}

/* Compiled for each layout of X. */
static inline CPU_INLINE void pw8_body(const op_pw8 *p, const float *x, int64_t ob0,
                                       int64_t ob1, int64_t p0, int64_t p1, float *y)
{
    if (p->x_linear)
        pw8_span(p, x, ob0, ob1, p0, p1, y, 1);
    else
        pw8_span(p, x, ob0, ob1, p0, p1, y, 0);
}

CPU_BUILDS(pw8, pw8_body,
           (const op_pw8 *p, const float *x, int64_t ob0, int64_t ob1, int64_t p0,
            int64_t p1, float *y),
           (p, x, ob0, ob1, p0, p1, y))

/* The AVX-512 build (cpu_avx512()): a block pair's 16 output channels in
 * one 16-float vector (the two blocks' weights at k put side by side).
 * Two pairs at a time by up to twelve pixels (pw32_tile), then a last pair
 * by twelve (pw16_tile). Each lane does the same in-order multiply-adds as
 * pw8_tile's, and the tile is finished through pw16_finish, so every output
 * has the AVX2 build's bits. A single last block, and a last pair's pixels
 * past the twelves, take the 8-float tiles. */
#if CPU_HAVE_AVX2_BUILD
#define PW16_U 12

/* pw8_finish for a block pair's sums in 16-float vectors (lanes 0-7 block
 * ob's, 8-15 block ob + 1's), nu pixels (a constant, at most PW16_U) from
 * px: where both blocks are whole, the activation 16 lanes at a time and
 * each vector's halves stored to the two blocks; else in halves through
 * pw8_finish. Either way each lane has the AVX2 build's bits. */
static inline CPU_INLINE void pw16_finish(const op_act *act, int64_t M, int64_t ob,
                                          cpu_v16 *acc, int nu, int64_t P, int64_t px,
                                          float *y)
{
    if (M - ob * 8 >= 16) {
        float *ya = y + (ob * P + px) * 8, *yb = ya + P * 8;
        cpu_act_v16n(act, acc, nu);
#pragma GCC unroll 16
        for (int u = 0; u < nu; u++) {
            const cpu_v8 lo = CPU_V16_LO(acc[u]), hi = CPU_V16_HI(acc[u]);
            CPU_STORE(ya + u * 8, lo);
            CPU_STORE(yb + u * 8, hi);
        }
        return;
    }
#pragma GCC unroll 16
    for (int u0 = 0; u0 < nu; u0 += PW_U) {
        const int n = nu - u0 < PW_U ? nu - u0 : PW_U;
        cpu_v8 h[2][PW_U];
#pragma GCC unroll 16
        for (int u = 0; u < n; u++) {
            h[0][u] = CPU_V16_LO(acc[u0 + u]);
            h[1][u] = CPU_V16_HI(acc[u0 + u]);
        }
        pw8_finish(act, M, ob, 2, n, h, P, px + u0, y);
    }
}

/* Block pair ob's weights at input channel k side by side. */
#define PW16_WEIGHTS(wv, w, K, k)                                                        \
    do {                                                                                 \
        cpu_v8 w0_, w1_;                                                                 \
        CPU_LOAD(w0_, (w) + (k)*8);                                                      \
        CPU_LOAD(w1_, (w) + ((K) + (k)) * 8);                                            \
        (wv) = CPU_V16_JOIN(w0_, w1_);                                                   \
    } while (0)

/* The starting sums of block pair ob, nu pixels of them. */
static inline CPU_INLINE void pw16_start(const float *bias, int64_t M, int64_t ob, int nu,
                                         cpu_v16 *acc)
{
    cpu_v8 h[2][PW_U];
    pw8_start(bias, M, ob, 2, 1, h);
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++)
        acc[u] = CPU_V16_JOIN(h[0][0], h[1][0]);
}

static inline CPU_INLINE void pw16_tile(const op_pw8 *p, const float *x, int64_t ob,
                                        int64_t px, float *y, int lin)
{
    const int64_t K = p->K, P = p->P, sl = PW_SL(lin, P);
    const int su = PW_SU(lin);
    const float *w = p->w + ob * K * 8;
    cpu_v16 acc[PW16_U];
    pw16_start(p->bias, p->M, ob, PW16_U, acc);
    x += px * su;
    for (int64_t k = 0; k < K; k++) {
        /* Input channel k: lane k % 8 of block k / 8. */
        const float *xk = x + (k / 8) * P * 8 + (k % 8) * sl;
        cpu_v16 wv;
        PW16_WEIGHTS(wv, w, K, k);
#pragma GCC unroll 16
        for (int u = 0; u < PW16_U; u++) {
            const float v = xk[u * su];
            acc[u] += wv * (cpu_v16){v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v};
        }
    }
    pw16_finish(&p->act, p->M, ob, acc, PW16_U, P, px, y);
}

/* Two block pairs (ob .. ob + 3, 32 output channels) by nu pixels (a
 * constant, at most PW16_U): 24 sums, two weight vectors and a broadcast
 * of the 32 registers, so a broadcast input feeds two multiply-adds. Each
 * lane's sum is pw16_tile's, bit for bit. */
static inline CPU_INLINE void pw32_tile(const op_pw8 *p, const float *x, int64_t ob,
                                        int nu, int64_t px, float *y, int lin)
{
    const int64_t K = p->K, P = p->P, sl = PW_SL(lin, P);
    const int su = PW_SU(lin);
    const float *w = p->w + ob * K * 8, *w2 = w + 2 * K * 8;
    cpu_v16 acc[2][PW16_U];
    pw16_start(p->bias, p->M, ob, nu, acc[0]);
    pw16_start(p->bias, p->M, ob + 2, nu, acc[1]);
    x += px * su;
    for (int64_t k = 0; k < K; k++) {
        const float *xk = x + (k / 8) * P * 8 + (k % 8) * sl;
        cpu_v16 wa, wb;
        PW16_WEIGHTS(wa, w, K, k);
        PW16_WEIGHTS(wb, w2, K, k);
#pragma GCC unroll 16
        for (int u = 0; u < nu; u++) {
            const float v = xk[u * su];
            const cpu_v16 xv = {v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v};
            acc[0][u] += wa * xv;
            acc[1][u] += wb * xv;
        }
    }
    pw16_finish(&p->act, p->M, ob, acc[0], nu, P, px, y);
    pw16_finish(&p->act, p->M, ob + 2, acc[1], nu, P, px, y);
}

/* Pixels [p0, p1) of block pairs ob .. ob + 3: tiles of PW16_U, then of
 * 8, 4, 2 and 1 (each compiled for its constant width). */
static inline CPU_INLINE void pw32_pixels(const op_pw8 *p, const float *x, int64_t ob,
                                          int64_t p0, int64_t p1, float *y, int lin)
{
    int64_t px = p0;
    for (; px + PW16_U <= p1; px += PW16_U)
        pw32_tile(p, x, ob, PW16_U, px, y, lin);
    if ((p1 - px) & 8) {
        pw32_tile(p, x, ob, 8, px, y, lin);
        px += 8;
    }
    if ((p1 - px) & 4) {
        pw32_tile(p, x, ob, 4, px, y, lin);
        px += 4;
    }
    if ((p1 - px) & 2) {
        pw32_tile(p, x, ob, 2, px, y, lin);
        px += 2;
    }
    if (p1 - px)
        pw32_tile(p, x, ob, 1, px, y, lin);
}

static inline CPU_INLINE void pw8_avx512_span(const op_pw8 *p, const float *x,
                                              int64_t ob0, int64_t ob1, int64_t p0,
                                              int64_t p1, float *y, int lin)
{
    const int64_t pc = pw8_chunk(p->K, PW16_U);
    for (int64_t c0 = p0; c0 < p1; c0 += pc) {
        const int64_t c1 = c0 + pc < p1 ? c0 + pc : p1;
        int64_t ob = ob0;
        for (; ob + 4 <= ob1; ob += 4)
            pw32_pixels(p, x, ob, c0, c1, y, lin);
        for (; ob + 2 <= ob1; ob += 2) {
            int64_t px = c0;
            for (; px + PW16_U <= c1; px += PW16_U)
                pw16_tile(p, x, ob, px, y, lin);
            if (px < c1)
                pw8_pixels(p, x, 2, ob, px, c1, y, lin);
        }
        if (ob < ob1)
            pw8_pixels(p, x, 1, ob, c0, c1, y, lin);
    }
}

CPU_TARGET_AVX512 static void pw8_avx512(const op_pw8 *p, const float *x, int64_t ob0,
                                         int64_t ob1, int64_t p0, int64_t p1, float *y)
{
    if (p->x_linear)
        pw8_avx512_span(p, x, ob0, ob1, p0, p1, y, 1);
    else
        pw8_avx512_span(p, x, ob0, ob1, p0, p1, y, 0);
}
#endif

void op_pw8_run(const op_pw8 *p, const float *x, int64_t ob0, int64_t ob1, int64_t p0,
                int64_t p1, float *y)
{
#if CPU_HAVE_AVX2_BUILD
    if (cpu_avx512()) {
        pw8_avx512(p, x, ob0, ob1, p0, p1, y);
        return;
    }
#endif
    CPU_PICK(pw8)(p, x, ob0, ob1, p0, p1, y);
}

/* ---- the depthwise convolution -------------------------------------------- */

/* Output pixels of a strip: eight sums in registers, as conv_dw8.c's. */
#define DWB_U 8

/* nu output pixels (a constant) of row oh from column ow of one block:
 * every tap inside the input adds its eight weights times its pixel.
 * `checked` (a constant): columns may fall outside the input (the edges),
 * else every one lies inside. */
static inline CPU_INLINE void dwb_strip(const op_dw8 *p, const float *x, const cpu_v8 *wt,
                                        cpu_v8 b, const op_act *act, int64_t live,
                                        int64_t oh, int64_t ow, int nu, int checked,
                                        float *y)
{
    const op_win2 *g = &p->g;
    cpu_v8 acc[DWB_U];
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++)
        acc[u] = b;
    for (int64_t i = 0; i < g->kh; i++) {
        const int64_t ih = oh * g->sh - g->pt + i * g->dh;
        const float *row = x + ih * g->W * 8;
        if (ih < 0 || ih >= g->H)
            continue;
        for (int64_t j = 0; j < g->kw; j++) {
            const cpu_v8 w = wt[i * g->kw + j];
            const int64_t iw0 = ow * g->sw - g->pl + j * g->dw;
#pragma GCC unroll 16
            for (int u = 0; u < nu; u++) {
                const int64_t iw = iw0 + u * g->sw;
                cpu_v8 v;
                if (checked && (iw < 0 || iw >= g->W))
                    continue;
                CPU_LOAD(v, row + iw * 8);
                acc[u] += w * v;
            }
        }
    }
    cpu_act_v8n(act, acc, nu);
#pragma GCC unroll 16
    for (int u = 0; u < nu; u++) {
        cpu_zero_lanes_from(live, &acc[u]);
        CPU_STORE(y + (oh * g->OW + ow + u) * 8, acc[u]);
    }
}

static inline CPU_INLINE void dwb_body(const op_dw8 *p, const float *x, const float *w,
                                       const float *bias, const op_act *act, int64_t nc,
                                       int64_t oh0, int64_t oh1, float *y)
{
    const op_win2 *g = &p->g;
    const int64_t kvol = g->kh * g->kw;
    /* Columns [lo, hi) whose every tap lies inside the input. */
    int64_t lo = (g->pl + g->sw - 1) / g->sw;
    int64_t hi = g->W - 1 + g->pl - (g->kw - 1) * g->dw;
    cpu_v8 wt[OP_DW8_MAX_TAPS], b = {0};
    hi = hi < 0 ? 0 : hi / g->sw + 1;
    if (hi > g->OW)
        hi = g->OW;
    if (lo > hi)
        lo = hi;
    for (int64_t t = 0; t < kvol; t++)
        for (int c = 0; c < 8; c++)
            wt[t][c] = c < nc ? w[c * kvol + t] : 0.0f;
    for (int c = 0; c < 8; c++)
        b[c] = bias && c < nc ? bias[c] : 0.0f;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        int64_t ow = 0;
        for (; ow < lo; ow++)
            dwb_strip(p, x, wt, b, act, nc, oh, ow, 1, 1, y);
        for (; ow + DWB_U <= hi; ow += DWB_U)
            dwb_strip(p, x, wt, b, act, nc, oh, ow, DWB_U, 0, y);
        if ((hi - ow) & 4) {
            dwb_strip(p, x, wt, b, act, nc, oh, ow, 4, 0, y);
            ow += 4;
        }
        if ((hi - ow) & 2) {
            dwb_strip(p, x, wt, b, act, nc, oh, ow, 2, 0, y);
            ow += 2;
        }
        if (hi - ow > 0)
            dwb_strip(p, x, wt, b, act, nc, oh, ow++, 1, 0, y);
        for (; ow < g->OW; ow++)
            dwb_strip(p, x, wt, b, act, nc, oh, ow, 1, 1, y);
    }
}

CPU_BUILDS(dwd, dwb_body,
           (const op_dw8 *p, const float *x, const float *w, const float *bias,
            const op_act *act, int64_t nc, int64_t oh0, int64_t oh1, float *y),
           (p, x, w, bias, act, nc, oh0, oh1, y))

void op_dw8d_run(const op_dw8 *p, const float *x, const float *w, const float *bias,
                 const op_act *act, int64_t nc, int64_t oh0, int64_t oh1, float *y)
{
    CPU_PICK(dwd)(p, x, w, bias, act, nc, oh0, oh1, y);
}

/* ---- a convolution of one group, LINEAR or CHW8 in, CHW8 out ----------------- */

/* Input channel c's row ih: of C planes (bx 0), or of CHW8 blocks (bx 1),
 * whose pixels are then eight floats apart. */
#define CV8_ROW(bx, x, c, ih, g)                                                         \
    ((bx) ? (x) + (((c) >> 3) * (g)->H * (g)->W + (ih) * (g)->W) * 8 + ((c)&7)           \
          : (x) + ((c) * (g)->H + (ih)) * (g)->W)

/* A direct tile's sums (nb blocks from ob by nu pixels from px, constants)
 * plus the residual Z where p has one, through the activation into y. */
static inline CPU_INLINE void cv8_store(const op_cv8 *p, int nb, int nu, int64_t ob,
                                        int64_t px, cpu_v8 (*acc)[PW_U], float *y)
{
    const int64_t P = p->g.OH * p->g.OW;
    if (p->z) {
#pragma GCC unroll 2
        for (int b = 0; b < nb; b++)
#pragma GCC unroll 16
            for (int u = 0; u < nu; u++) {
                cpu_v8 zv;
                CPU_LOAD(zv, p->z + ((ob + b) * P + px + u) * 8);
                acc[b][u] += zv;
            }
    }
    pw8_finish(&p->act, p->M, ob, nb, nu, acc, P, px, y);
}

/* nb blocks (1 or 2) by nu output pixels (constants) of row oh from column
 * ow: every tap (input channel, kernel row, kernel column) inside the input
 * adds its packed weights times its input value. `checked` (a constant):
 * columns may fall outside the input. */
static inline CPU_INLINE void cv8_tile(const op_cv8 *p, const float *x, int nb, int nu,
                                       int checked, int bx, int64_t ob, int64_t oh,
                                       int64_t ow, float *y)
{
    const op_win2 *g = &p->g;
    const int64_t K = p->C * g->kh * g->kw;
    const float *w = p->w + ob * K * 8;
    cpu_v8 acc[2][PW_U];
    pw8_start(p->bias, p->M, ob, nb, nu, acc);
    for (int64_t c = 0; c < p->C; c++)
        for (int64_t i = 0; i < g->kh; i++) {
            const int64_t ih = oh * g->sh - g->pt + i * g->dh;
            const float *row = CV8_ROW(bx, x, p->c0 + c, ih, g);
            if (ih < 0 || ih >= g->H)
                continue;
            for (int64_t j = 0; j < g->kw; j++) {
                const int64_t k = (c * g->kh + i) * g->kw + j;
                const int64_t iw0 = ow * g->sw - g->pl + j * g->dw;
                cpu_v8 w0, w1 = {0};
                /* op_cv8_pack: a pair's two blocks side by side a tap. */
                CPU_LOAD(w0, w + k * 8 * nb);
                if (nb == 2)
                    CPU_LOAD(w1, w + k * 16 + 8);
#pragma GCC unroll 16
                for (int u = 0; u < nu; u++) {
                    const int64_t iw = iw0 + u * g->sw;
                    cpu_v8 xv;
                    if (checked && (iw < 0 || iw >= g->W))
                        continue;
                    xv = CPU_SPLAT(row[iw * (bx ? 8 : 1)]);
                    acc[0][u] += w0 * xv;
                    if (nb == 2)
                        acc[1][u] += w1 * xv;
                }
            }
        }
    cv8_store(p, nb, nu, ob, oh * g->OW + ow, acc, y);
}

#if CPU_HAVE_AVX2_BUILD
/* np block pairs (1 to 3, 16 np output channels from block ob) by nu
 * pixels (constants, np nu at most 24) of row oh from column ow: up to 24
 * sums, np weight vectors (one load each: op_cv8_pack puts a pair's 16
 * weights of a tap together) and a broadcast of the 32 registers, so each
 * input value loaded feeds np multiply-adds (a tile of one pair left its
 * FMAs waiting on the loads: deeplab's undilated 3x3 convs at ~70
 * GFLOP/s of the core's ~230). `checked` (a constant): columns may fall
 * outside the input. Each lane adds cv8_tile's taps in its order: the
 * AVX2 build's bits. */
static inline CPU_INLINE void cvp_tile(const op_cv8 *p, const float *x, int bx, int np,
                                       int nu, int checked, int64_t ob, int64_t oh,
                                       int64_t ow, float *y)
{
    const op_win2 *g = &p->g;
    const int64_t K = p->C * g->kh * g->kw, P = g->OH * g->OW;
    const int64_t px = bx ? 8 : 1, step = g->sw * px;
    const float *w = p->w + ob * K * 8;
    cpu_v16 acc[3][PW16_U];
#pragma GCC unroll 4
    for (int q = 0; q < np; q++)
        pw16_start(p->bias, p->M, ob + 2 * q, nu, acc[q]);
    for (int64_t c = 0; c < p->C; c++)
        for (int64_t i = 0; i < g->kh; i++) {
            const int64_t ih = oh * g->sh - g->pt + i * g->dh;
            const float *row = CV8_ROW(bx, x, p->c0 + c, ih, g);
            const int64_t k0 = (c * g->kh + i) * g->kw;
            if (ih < 0 || ih >= g->H)
                continue;
            for (int64_t j = 0; j < g->kw; j++) {
                const int64_t iw0 = ow * g->sw - g->pl + j * g->dw;
                /* Unchecked, iw0 >= 0; checked, indexed from the row, so
                 * that no pointer is formed before it. */
                const float *xr = row + (checked ? 0 : iw0 * px);
                /* Checked: the tile's pixels [ua, ub) read inside the row. */
                const int64_t ua = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;
                const int64_t ub = iw0 >= g->W ? 0 : (g->W - iw0 + g->sw - 1) / g->sw;
                cpu_v16 wv[3];
#pragma GCC unroll 4
                for (int q = 0; q < np; q++)
                    memcpy(&wv[q], w + (2 * q * K + (k0 + j) * 2) * 8, sizeof wv[q]);
#pragma GCC unroll 16
                for (int u = 0; u < nu; u++) {
                    float v;
                    cpu_v16 xv;
                    if (checked && (u < ua || u >= ub))
                        continue;
                    v = checked ? xr[(iw0 + u * g->sw) * px] : xr[u * step];
                    xv = (cpu_v16){v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v};
#pragma GCC unroll 4
                    for (int q = 0; q < np; q++)
                        acc[q][u] += wv[q] * xv;
                }
            }
        }
#pragma GCC unroll 4
    for (int q = 0; q < np; q++)
        pw16_finish(&p->act, p->M, ob + 2 * q, acc[q], nu, P, oh * g->OW + ow, y);
}

/* One tile of row oh from column ow, nu pixels (a constant), checked only
 * where one of its columns lies outside [lo, hi) (the columns whose every
 * tap lies inside the input). */
#define CVP_TILE(nu)                                                                     \
    do {                                                                                 \
        if (ow < lo || ow + (nu) > hi)                                                   \
            cvp_tile(p, x, bx, np, (nu), 1, ob, oh, ow, y);                              \
        else                                                                             \
            cvp_tile(p, x, bx, np, (nu), 0, ob, oh, ow, y);                              \
        ow += (nu);                                                                      \
    } while (0)

/* Row oh for np block pairs (a constant) from block ob in tiles of
 * PW16_U pixels (8 for three pairs), then 8, 4, 2 and 1, from the row's
 * start, the edge columns inside the tiles beside them: every tile passes
 * over all of W's taps, so a tile of its own for the one edge column of a
 * 3x3 kernel (or the six at a dilation of 6) cost a pass over W for a few
 * multiply-adds. */
static inline CPU_INLINE void cvp_row(const op_cv8 *p, const float *x, int bx, int np,
                                      int64_t ob, int64_t oh, int64_t lo, int64_t hi,
                                      float *y)
{
    const int64_t OW = p->g.OW;
    int64_t ow = 0;
    if (np < 3)
        while (ow + PW16_U <= OW)
            CVP_TILE(PW16_U);
    while (ow + 8 <= OW)
        CVP_TILE(8);
    if ((OW - ow) & 4)
        CVP_TILE(4);
    if ((OW - ow) & 2)
        CVP_TILE(2);
    if (OW - ow)
        CVP_TILE(1);
}
#undef CVP_TILE
#endif

/* Columns [from, to) of row oh for nb blocks from ob in tiles of PW_U,
 * 4, 2 and 1 pixels, `checked` (a constant) where a column's taps may fall
 * outside the input. A pixel's sum is the same whatever tile holds it. */
static inline CPU_INLINE void cv8_span(const op_cv8 *p, const float *x, int nb,
                                       int64_t ob, int64_t oh, int64_t from, int64_t to,
                                       int checked, int bx, float *y)
{
    int64_t ow = from;
    for (; ow + PW_U <= to; ow += PW_U)
        cv8_tile(p, x, nb, PW_U, checked, bx, ob, oh, ow, y);
    if ((to - ow) & 4) {
        cv8_tile(p, x, nb, 4, checked, bx, ob, oh, ow, y);
        ow += 4;
    }
    if ((to - ow) & 2) {
        cv8_tile(p, x, nb, 2, checked, bx, ob, oh, ow, y);
        ow += 2;
    }
    if (to - ow > 0)
        cv8_tile(p, x, nb, 1, checked, bx, ob, oh, ow, y);
}

/* One row's pixels for nb blocks from ob: checked tiles at the edges
 * (a dilated kernel's edges are most of a small map: DeepLab's 3x3 at
 * dilation 6 on 16 columns has 4 inside, and one pixel a tile loaded each
 * tap's weights for one multiply-add), tiles between. */
static inline CPU_INLINE void cv8_row(const op_cv8 *p, const float *x, int nb, int64_t ob,
                                      int64_t oh, int64_t lo, int64_t hi, int bx,
                                      float *y)
{
    cv8_span(p, x, nb, ob, oh, 0, lo, 1, bx, y);
    cv8_span(p, x, nb, ob, oh, lo, hi, 0, bx, y);
    cv8_span(p, x, nb, ob, oh, hi, p->g.OW, 1, bx, y);
}

/* ---- the padded direct kind (the AVX2 and baseline builds) -------------- */

/* Floats of the padded copy of a band's input (on the stack: 64 KiB), and
 * the most taps a kernel may have to take it. */
#define CVX_FLOATS 16384
#define CVX_TAPS 64
/* Floats of a band's copy where more than one row of output: about half of
 * L1, beside the weights. */
#define CVX_BAND_FLOATS 4096

/* The padded copy's width: the input columns every output column of a row
 * reads, the padding included. */
static inline int64_t cvx_width(const op_win2 *g)
{
    return (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
}

/* Input rows of a band of `rows` output rows. */
static inline int64_t cvx_rows(const op_win2 *g, int64_t rows)
{
    return (rows - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

/* Floats a padded input row takes: blocks of the group's C channels (bx),
 * or C planes. */
static inline int64_t cvx_row_floats(const op_cv8 *p, int bx)
{
    return (bx ? (p->C + 7) / 8 * 8 : p->C) * cvx_width(&p->g);
}

/* nb blocks (1 or 2) by nu pixels (constants) of one output row read from
 * the padded copy: the tile's first pixel's inputs of channel 0 at xb,
 * channel c's (c >> 3) planes and c & 7 floats on (bx) or c planes on, tap
 * t off[t] floats on, pixel u ps (a constant) on. Every tap is inside the
 * copy, so no column is checked; a tap on the padding adds W times 0, so
 * each sum is cv8_tile's, term for term, with exact zeros between: the
 * same bits. */
static inline CPU_INLINE void cvx_tile(const op_cv8 *p, const float *xb, int64_t plane,
                                       const int64_t *off, int bx, int nb, int nu,
                                       int64_t ps, int64_t ob, int64_t px, float *y)
{
    const op_win2 *g = &p->g;
    const int64_t kvol = g->kh * g->kw, K = p->C * kvol;
    const float *w = p->w + ob * K * 8;
    cpu_v8 acc[2][PW_U];
    pw8_start(p->bias, p->M, ob, nb, nu, acc);
    for (int64_t c = 0; c < p->C; c++) {
        const float *xc = xb + (bx ? (c >> 3) * plane + (c & 7) : c * plane);
        for (int64_t t = 0; t < kvol; t++, w += 8 * nb) {
            const float *xt = xc + off[t];
            cpu_v8 w0, w1 = {0};
            CPU_LOAD(w0, w);
            if (nb == 2)
                CPU_LOAD(w1, w + 8);
#pragma GCC unroll 16
            for (int u = 0; u < nu; u++) {
                const cpu_v8 xv = CPU_SPLAT(xt[u * ps]);
                acc[0][u] += w0 * xv;
                if (nb == 2)
                    acc[1][u] += w1 * xv;
            }
        }
    }
    cv8_store(p, nb, nu, ob, px, acc, y);
}

#define CVX_TILE(nu)                                                                     \
    cvx_tile(p, xb + ow * ps, plane, off, bx, nb, (nu), ps, ob, px0 + ow, y)

/* One output row (its first pixel px0) of nb blocks from ob: tiles of six
 * pixels, the last up to twelve as two of nearly equal width. A tile of
 * two blocks by fewer than four pixels waits on its multiply-adds'
 * latency, so seven pixels as four and three take what eight would, where
 * six and one took what ten would. */
static inline CPU_INLINE void cvx_row(const op_cv8 *p, const float *xb, int64_t plane,
                                      const int64_t *off, int bx, int nb, int64_t ps,
                                      int64_t ob, int64_t px0, float *y)
{
    const int64_t OW = p->g.OW;
    int64_t ow = 0;
    for (; OW - ow > 2 * PW_U; ow += PW_U)
        CVX_TILE(PW_U);
    for (int half = 0; half < 2 && ow < OW; half++) {
        const int64_t n = OW - ow > PW_U ? (OW - ow + 1) / 2 : OW - ow;
        switch (n) {
        case 6:
            CVX_TILE(6);
            break;
        case 5:
            CVX_TILE(5);
            break;
        case 4:
            CVX_TILE(4);
            break;
        case 3:
            CVX_TILE(3);
            break;
        case 2:
            CVX_TILE(2);
            break;
        default:
            CVX_TILE(1);
            break;
        }
        ow += n;
    }
}
#undef CVX_TILE

/* Rows [a, b) of the band's input, padded, into buf: row r is input row
 * a sh - pt + r, column q input column q - pl, zeros outside the input;
 * the group's C channels as blocks (bx: lanes past C unset, never read)
 * or planes, plane floats apart. */
static inline CPU_INLINE void cvx_fill(const op_cv8 *p, const float *x, int bx, int64_t a,
                                       int64_t hb, int64_t plane, float *buf)
{
    const op_win2 *g = &p->g;
    const int64_t Wp = cvx_width(g), px = bx ? 8 : 1;
    const int64_t lo = g->pl < Wp ? g->pl : Wp;
    const int64_t hi = g->pl + g->W < Wp ? g->pl + g->W : Wp;
    /* Blocks copy whole where the group's channels start a block. */
    const int whole = !bx || p->c0 % 8 == 0;
    const int64_t nplanes = bx ? (p->C + 7) / 8 : p->C;
    for (int64_t q = 0; q < nplanes; q++)
        for (int64_t r = 0; r < hb; r++) {
            const int64_t ih = a * g->sh - g->pt + r;
            float *d = buf + q * plane + r * Wp * px;
            if (ih < 0 || ih >= g->H) {
                memset(d, 0, sizeof(float) * (size_t)(Wp * px));
                continue;
            }
            memset(d, 0, sizeof(float) * (size_t)(lo * px));
            if (whole && hi > lo)
                memcpy(d + lo * px, CV8_ROW(bx, x, p->c0 + q * px, ih, g),
                       sizeof(float) * (size_t)((hi - lo) * px));
            else
                for (int l = 0; l < 8 && q * 8 + l < p->C; l++) {
                    const float *s = CV8_ROW(bx, x, p->c0 + q * 8 + l, ih, g);
                    for (int64_t col = lo; col < hi; col++)
                        d[col * 8 + l] = s[(col - g->pl) * 8];
                }
            if (hi < Wp)
                memset(d + hi * px, 0, sizeof(float) * (size_t)((Wp - hi) * px));
        }
}

/* 1 when rows of p's input fit the padded copy, one output row's at least,
 * and its kernel has at most CVX_TAPS taps. */
static inline int cvx_fits(const op_cv8 *p, int bx)
{
    return p->g.kh * p->g.kw <= CVX_TAPS &&
           cvx_rows(&p->g, 1) * cvx_row_floats(p, bx) <= CVX_FLOATS;
}

/* Output rows [oh0, oh1) through the padded copy, in bands of as many rows
 * as it holds; sw the stride (a constant: 1 or 2), or 0 for g's. */
static inline CPU_INLINE void cvx_body(const op_cv8 *p, const float *x, int64_t oh0,
                                       int64_t oh1, int bx, int sw, float *y)
{
    const op_win2 *g = &p->g;
    const int64_t Wp = cvx_width(g), px = bx ? 8 : 1, M8 = (p->M + 7) / 8;
    const int64_t rowf = cvx_row_floats(p, bx), ps = (sw ? sw : g->sw) * px;
    float buf[CVX_FLOATS];
    int64_t off[CVX_TAPS], R = 1;
    while (R < oh1 - oh0 && cvx_rows(g, R + 1) * rowf <= CVX_BAND_FLOATS)
        R++;
    for (int64_t a = oh0; a < oh1; a += R) {
        const int64_t b = a + R < oh1 ? a + R : oh1, hb = cvx_rows(g, b - a);
        const int64_t plane = hb * Wp * px;
        for (int64_t i = 0; i < g->kh; i++)
            for (int64_t j = 0; j < g->kw; j++)
                off[i * g->kw + j] = (i * g->dh * Wp + j * g->dw) * px;
        cvx_fill(p, x, bx, a, hb, plane, buf);
        for (int64_t oh = a; oh < b; oh++) {
            const float *xb = buf + (oh - a) * g->sh * Wp * px;
            int64_t ob = 0;
#define CVX_ROWS(nb) cvx_row(p, xb, plane, off, bx, (nb), ps, ob, oh * g->OW, y)
            for (; ob + 2 <= M8; ob += 2)
                CVX_ROWS(2);
            if (ob < M8)
                CVX_ROWS(1);
#undef CVX_ROWS
        }
    }
}

/* A build a layout (blocks, planes) and stride (1, 2, other), each its own
 * function: inlined into one, the tiles of every variant left GCC short of
 * registers, and it kept sums on the stack (half the speed). The baseline
 * build (no AVX2: rare on x86, and everywhere else) takes the stride from
 * g, one function a layout, to keep the library small. */
CPU_BUILDS(cvx_bn, cvx_body,
           (const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y),
           (p, x, oh0, oh1, 1, 0, y))
CPU_BUILDS(cvx_ln, cvx_body,
           (const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y),
           (p, x, oh0, oh1, 0, 0, y))
#if CPU_HAVE_AVX2_BUILD
#define CVX_AVX2(NAME, BX, SW)                                                           \
    CPU_TARGET_AVX2 static void NAME(const op_cv8 *p, const float *x, int64_t oh0,       \
                                     int64_t oh1, float *y)                              \
    {                                                                                    \
        cvx_body(p, x, oh0, oh1, BX, SW, y);                                             \
    }
CVX_AVX2(cvx_b1_avx2, 1, 1)
CVX_AVX2(cvx_b2_avx2, 1, 2)
CVX_AVX2(cvx_l1_avx2, 0, 1)
CVX_AVX2(cvx_l2_avx2, 0, 2)
#undef CVX_AVX2
#endif

/* The padded kind for p: 1 when it ran. */
static int cvx_run(const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y)
{
    const int64_t sw = p->g.sw;
    if (!cvx_fits(p, p->blocked))
        return 0;
#if CPU_HAVE_AVX2_BUILD
    if (cpu_avx2() && (sw == 1 || sw == 2)) {
        if (p->blocked)
            (sw == 1 ? cvx_b1_avx2 : cvx_b2_avx2)(p, x, oh0, oh1, y);
        else
            (sw == 1 ? cvx_l1_avx2 : cvx_l2_avx2)(p, x, oh0, oh1, y);
        return 1;
    }
#endif
    (void)sw;
    if (p->blocked)
        CPU_PICK(cvx_bn)(p, x, oh0, oh1, y);
    else
        CPU_PICK(cvx_ln)(p, x, oh0, oh1, y);
    return 1;
}

static inline CPU_INLINE void cv8_body(const op_cv8 *p, const float *x, int64_t oh0,
                                       int64_t oh1, int wide, int bx, float *y)
{
    const op_win2 *g = &p->g;
    const int64_t M8 = (p->M + 7) / 8;
    /* Columns [lo, hi) whose every tap lies inside the input. */
    int64_t lo = (g->pl + g->sw - 1) / g->sw;
    int64_t hi = g->W - 1 + g->pl - (g->kw - 1) * g->dw;
    hi = hi < 0 ? 0 : hi / g->sw + 1;
    if (hi > g->OW)
        hi = g->OW;
    if (lo > hi)
        lo = hi;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        int64_t ob = 0;
#if CPU_HAVE_AVX2_BUILD
        /* The AVX-512 build: the block pairs three or two at a time (two
         * and two for four), one alone (an odd last block below). */
        if (wide) {
            const int64_t pairs = M8 / 2;
            for (int64_t q = 0; q < pairs;) {
                const int64_t left = pairs - q;
                if (left == 3 || left >= 5) {
                    cvp_row(p, x, bx, 3, q * 2, oh, lo, hi, y);
                    q += 3;
                } else if (left >= 2) {
                    cvp_row(p, x, bx, 2, q * 2, oh, lo, hi, y);
                    q += 2;
                } else {
                    cvp_row(p, x, bx, 1, q * 2, oh, lo, hi, y);
                    q++;
                }
            }
            ob = pairs * 2;
        }
#else
        (void)wide;
#endif
        for (; ob + 2 <= M8; ob += 2)
            cv8_row(p, x, 2, ob, oh, lo, hi, bx, y);
        if (ob < M8)
            cv8_row(p, x, 1, ob, oh, lo, hi, bx, y);
    }
}

CPU_BUILDS(cv8, cv8_body,
           (const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y),
           (p, x, oh0, oh1, 0, 0, y))
CPU_BUILDS(cv8b, cv8_body,
           (const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y),
           (p, x, oh0, oh1, 0, 1, y))

#if CPU_HAVE_AVX2_BUILD
CPU_TARGET_AVX512 static void cv8_avx512(const op_cv8 *p, const float *x, int64_t oh0,
                                         int64_t oh1, float *y)
{
    if (p->blocked)
        cv8_body(p, x, oh0, oh1, 1, 1, y);
    else
        cv8_body(p, x, oh0, oh1, 1, 0, y);
}
#endif

int op_cv8_takes_z(void)
{
#if CPU_HAVE_AVX2_BUILD
    return !cpu_avx512();
#else
    return 1;
#endif
}

void op_cv8_run(const op_cv8 *p, const float *x, int64_t oh0, int64_t oh1, float *y)
{
#if CPU_HAVE_AVX2_BUILD
    if (cpu_avx512()) {
        cv8_avx512(p, x, oh0, oh1, y);
        return;
    }
#endif
    if (cvx_run(p, x, oh0, oh1, y))
        return;
    if (p->blocked)
        CPU_PICK(cv8b)(p, x, oh0, oh1, y);
    else
        CPU_PICK(cv8)(p, x, oh0, oh1, y);
}

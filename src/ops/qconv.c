/*
 * ConvInteger and QLinearConv (namespace "plugrt", version "1"; ONNX opset
 * 10): Conv over 8-bit tensors less their zero points, with int32 sums;
 * ConvInteger outputs them, QLinearConv adds its optional int32 bias and
 * requantizes to y's scale and zero point (qlinear.h).
 *
 *   ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32
 *   QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 *               y_scale, y_zero_point, B?) -> y_zero_point's dtype
 *
 * x and w are uint8 or int8 in any mix; w's zero point and scale are one
 * value or one per output channel. Fields and shapes are Conv's (auto_pad,
 * dilations, group, kernel_shape, pads, strides; conv.c, ops_nn.h's
 * window rules), 1 to 6 spatial dims. The padding holds x's zero point, so
 * it adds nothing to a sum (ONNX's definition subtracts the zero point and
 * pads with 0).
 *
 * Computed per image and group as one 8-bit product (qgemm.h): W's rows
 * (the signed side, packed once when W is a constant: qconv_prepare) times
 * the im2col matrix of x (a 1x1 kernel at stride 1 without padding reads x
 * itself), packed into panels per run; zero points through row and column
 * sums, bias and requantization in the store pass. Integer sums are exact,
 * so the result does not depend on the thread count or the build.
 *
 * Two faster paths give the same bits: QLinearConv with symmetric
 * constant weights on an AVX2 or VNNI CPU runs channel-last
 * (qconv_run_hwc, cpu/qconv_kernel.h: VNNI's byte tiles, or AVX2's exact
 * int16 ones; a grouped one over one HWC copy of x, each group's
 * panels packed on their own and reading from its first channel), and a
 * depthwise convolution runs through the float depthwise kernel with exact
 * integer sums (qconv_run_dw).
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/cpu/qconv_kernel.h"
#include "ops/cpu/qgemm.h"
#include "ops/ops_nn.h"
#include "ops/qlinear.h"

#define QCV_MB 32  /* rows (output channels) of a block */
#define QCV_NB 128 /* columns (output pixels) of a block */
#define QCV_ALIGN 64
/* Elements readable past the channel-last copy of x and its padding pixel:
 * a group's last 4-element step may run 3 past the image's channels. */
#define QCV_SLACK 4
/* Bytes of an element of the channel-last copy at most (int16, the AVX2
 * tiles'): the workspace is sized for it whichever path runs. */
#define QCV_ES 2

typedef struct qconv_op {
    op_object o;
    op_window w;
    int32_t group;
} qconv_op;

static prt_status qconv_parse(op_object *o, const op_fields *f)
{
    qconv_op *c = (qconv_op *)o;
    prt_status st = op_window_parse(o, f, &c->w);
    if (!st)
        st = op_field_i32(f, "group", 1, &c->group);
    if (!st && c->group < 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "group is %d; it must be >= 1",
                     (int)c->group);
    return st;
}

static int32_t qconv_serialize(op_object *o, prt_field *ser)
{
    qconv_op *c = (qconv_op *)o;
    int32_t n = op_window_ser_pad(&c->w, ser);
    op_ser(&ser[n++], "group", PRT_FIELD_INT32, &c->group, 1);
    return n + op_window_ser_arrays(&c->w, ser + n);
}

/* X, W and the bias (when given) side by side, as Conv takes them. */
static int32_t qconv_xwb(const ql_inputs *q, int32_t *idx)
{
    idx[0] = q->a;
    idx[1] = q->b;
    idx[2] = q->bias;
    return q->bias >= 0 ? 3 : 2;
}

static prt_status qconv_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    const qconv_op *c = (const qconv_op *)o;
    ql_inputs q;
    prt_dim_exprs xwb[3];
    int32_t idx[3], n;
    ql_inputs_of(o, nb_in, &q);
    n = qconv_xwb(&q, idx);
    for (int32_t k = 0; k < n; k++)
        xwb[k] = in[idx[k]];
    return op_conv_shapes(o, &c->w, c->group, xwb, n, out, eb);
}

prt_status qconv_geom(const op_object *o, const prt_dims *in, int32_t nb_in,
                      op_conv_geom *g)
{
    const qconv_op *c = (const qconv_op *)o;
    ql_inputs q;
    prt_dims xwb[3];
    int32_t idx[3], n;
    prt_status st;
    ql_inputs_of(o, nb_in, &q);
    n = qconv_xwb(&q, idx);
    for (int32_t k = 0; k < n; k++)
        xwb[k] = in[idx[k]];
    st = op_conv_geom_make(o, &c->w, c->group, xwb, n, g);
    if (!st)
        st = ql_check_params(o, &q, in, 0, g->M);
    return st;
}

static prt_status qconv_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    op_conv_geom g;
    prt_status st = qconv_geom(o, in, nb_in, &g);
    if (!st)
        op_conv_out_dims(&g, g.w.out, out);
    return st;
}

/* W's bytes flipped onto the signed side (uint8 ^ 0x80 is the int8 v - 128),
 * x's onto the unsigned side (int8 ^ 0x80 is the uint8 v + 128). */
static uint8_t qconv_w_flip(int32_t dtype)
{
    return dtype == PRT_UINT8 ? 0x80 : 0;
}
static uint8_t qconv_x_flip(int32_t dtype)
{
    return dtype == PRT_INT8 ? 0x80 : 0;
}

/* W' packed once: M rows of K4 bytes and their sums (ap), or, for the
 * channel-last path (qconv_hwc_ok), in qconv_kernel.h's panels (wq, ap
 * NULL). */
typedef struct qconv_const {
    op_const head;
    ql_const_src src;
    int32_t *rowsum; /* M */
    uint8_t *ap;
    uint8_t *wq;
    int32_t wide; /* wq for the int16 AVX2 tiles (op_qg_wide() at build) */
} qconv_const;

/* Whether W's zero points (desc d, values zp; NULL: none) are all 0 once
 * W is on the signed side: qconv_kernel.h's condition. */
static int qconv_w_symmetric(int32_t w_dtype, const prt_tensor_desc *d, const void *zp)
{
    const int32_t want = w_dtype == PRT_UINT8 ? 128 : 0;
    if (!d)
        return want == 0;
    for (int64_t i = 0; i < base_volume(&d->dims); i++)
        if (op_int_at(zp, d->dtype, i) != want)
            return 0;
    return 1;
}

/* The channel-last path (VNNI, or the int16 AVX2 tiles) takes QLinearConv
 * over 1 or 2 spatial dims
 * (W's rank: at build only the constants' dims are known), of any groups
 * that divide W's output channels, with symmetric weights, W's zero
 * points as given (zp NULL: none). */
static int qconv_hwc_ok(const op_object *o, const ql_inputs *q, const prt_tensor_desc *in,
                        const void *w_zp)
{
    const qconv_op *c = (const qconv_op *)o;
    const int32_t ns = in[q->b].dims.nb_dims - 2;
    return q->kind == QL_QLINEAR_CONV && in[q->b].dims.d[0] % c->group == 0 &&
           (ns == 1 || ns == 2) && (op_qg_vnni() || op_qg_wide()) &&
           qconv_w_symmetric(in[q->b].dtype, q->b_zp >= 0 ? &in[q->b_zp] : NULL, w_zp);
}

/* Groups of the channel-last path packed as one (op_qc_pack_w's Mb): for
 * groups of fewer than 16 output channels the most that divide G and fit
 * one panel together, so that a tile's broadcast of a pixel's 4 bytes
 * feeds 16 used channels, not Mg (resnext_w8's groups of 4: a quarter of
 * the lanes, and a tile's bookkeeping for 4 channels' work). The
 * products are the same; the zero blocks cost nothing the padding of
 * one group's panel would not. The int16 tiles (`wide`) fill one vector
 * of 8 channels instead: a tile of 8 channels is as fast a product as one
 * of 16 there (one broadcast a product, within the loads' rate), so
 * blocks of 8 do half the products of blocks of 16, whose inputs are
 * twice as many and half of them zeros (resnext_w8's groups of 4 and 8:
 * 2.0 and 1.6 times faster). */
static int64_t qconv_group_block(int64_t G, int64_t Mg, int wide)
{
    const int64_t most = wide ? OP_QC_PANEL / 2 : OP_QC_PANEL;
    int64_t k = 1;
    for (int64_t b = 2; b <= G && b * Mg <= most; b++)
        if (G % b == 0)
            k = b;
    return k;
}

/* W packed for the channel-last path: M sums, then the panels, block by
 * block of qconv_group_block's groups. */
static prt_status qconv_prepare_hwc(const op_object *o, const ql_inputs *q,
                                    const prt_tensor_desc *in, const void *const *data,
                                    op_const **out)
{
    const prt_dims *d = &in[q->b].dims;
    const int64_t G0 = ((const qconv_op *)o)->group, M = d->d[0], C = d->d[1];
    const int wide = op_qg_wide();
    const int64_t k = qconv_group_block(G0, M / G0, wide), G = G0 / k, Mg = M / G;
    const int64_t kvol = base_volume(d) / (M * (C ? C : 1));
    const int64_t wg = op_qc_w_bytes(Mg, k * C, kvol) * (wide ? 2 : 1);
    int64_t bytes;
    qconv_const *c;
    if (C < 1 || wg < 0 || !base_mul_i64(wg, G, &bytes) ||
        !base_add_i64(bytes, (int64_t)sizeof *c + 4 * M + QCV_ALIGN, &bytes))
        return PRT_OK;
    c = (qconv_const *)op_const_alloc((size_t)bytes);
    if (!c)
        return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "out of memory packing W (%lld bytes)",
                       (long long)bytes);
    ql_const_set(&c->src, &in[q->b], data[q->b]);
    c->rowsum = (int32_t *)(c + 1);
    c->wq =
        (uint8_t *)(((uintptr_t)(c->rowsum + M) + QCV_ALIGN - 1) / QCV_ALIGN * QCV_ALIGN);
    c->wide = wide;
    for (int64_t gi = 0; gi < G; gi++)
        op_qc_pack_w(
            Mg, Mg / k, C, kvol, (const uint8_t *)data[q->b] + gi * Mg * C * kvol,
            qconv_w_flip(c->src.dtype), wide, c->wq + gi * wg, c->rowsum + gi * Mg);
    *out = &c->head;
    return PRT_OK;
}

static prt_status qconv_prepare(const op_object *o, const prt_tensor_desc *in,
                                int32_t nb_in, const void *const *data, op_const **out)
{
    ql_inputs q;
    const prt_dims *d;
    int64_t M, K, k4, ab, bytes;
    qconv_const *c;
    ql_inputs_of(o, nb_in, &q);
    d = &in[q.b].dims;
    if (!data[q.b] || d->nb_dims < 3)
        return PRT_OK;
    M = d->d[0];
    K = M > 0 ? base_volume(d) / M : 0;
    /* W's zero points must be known now to choose the layout. */
    if (M >= 1 && (q.b_zp < 0 || data[q.b_zp]) &&
        qconv_hwc_ok(o, &q, in, q.b_zp >= 0 ? data[q.b_zp] : NULL))
        return qconv_prepare_hwc(o, &q, in, data, out);
    k4 = op_qg_k4(K);
    if (M < 1 || k4 < 0 || !base_mul_i64(M, k4, &ab) ||
        !base_add_i64(ab, (int64_t)sizeof *c + 4 * M + QCV_ALIGN, &bytes))
        return PRT_OK;
    c = (qconv_const *)op_const_alloc((size_t)bytes);
    if (!c)
        return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "out of memory packing W (%lld bytes)",
                       (long long)bytes);
    ql_const_set(&c->src, &in[q.b], data[q.b]);
    c->rowsum = (int32_t *)(c + 1);
    c->ap =
        (uint8_t *)(((uintptr_t)(c->rowsum + M) + QCV_ALIGN - 1) / QCV_ALIGN * QCV_ALIGN);
    op_qg_pack_a(K, data[q.b], K, qconv_w_flip(c->src.dtype), 1, 0, M, c->ap, c->rowsum);
    *out = &c->head;
    return PRT_OK;
}

/* The workspace of one run, carved from `base` (NULL: only sized). */
typedef struct qconv_ws {
    uint8_t *ap, *col, *bp;
    int32_t *rowsum, *alpha, *colsum, *beta, *colterm;
    float *scale;
    /* the channel-last path: one image of x in HWC, the padding pixel, and
     * cterm and multipliers of M rounded up to a panel */
    uint8_t *xt, *zrow, *yt;
    int32_t *cterm;
    float *hscale;
} qconv_ws;

static int qconv_carve(uint8_t *base, int64_t *off, int64_t count, int64_t size,
                       void **out)
{
    int64_t o = (*off + QCV_ALIGN - 1) / QCV_ALIGN * QCV_ALIGN, bytes;
    if (count < 0 || !base_mul_i64(count, size, &bytes) || !base_add_i64(o, bytes, off))
        return 0;
    if (base)
        *out = base + o;
    return 1;
}

/* The int16 tiles' copy of x has its padding written out (the padding
 * pixel: x's zero point, zeros past the channels), so that every window
 * lies inside it and no tile checks bounds: x's pixel (h, w) at (top + h,
 * left + w) of Hp x Wp, the rest padding. 1-D as H = 1. */
typedef struct qconv_pad {
    int64_t H, W, top, left, Hp, Wp;
} qconv_pad;

static void qconv_pad_of(const op_win_geom *wg, qconv_pad *pd)
{
    const int32_t l = wg->ns - 1;
    /* the padded extent a dimension's windows reach, and x's */
    int64_t need = (wg->out[l] - 1) * wg->s[l] + (wg->k[l] - 1) * wg->d[l] + 1;
    pd->W = wg->in[l];
    pd->left = wg->pb[l];
    pd->Wp = need > pd->W + pd->left ? need : pd->W + pd->left;
    pd->H = pd->Hp = 1;
    pd->top = 0;
    if (wg->ns == 2) {
        need = (wg->out[0] - 1) * wg->s[0] + (wg->k[0] - 1) * wg->d[0] + 1;
        pd->H = wg->in[0];
        pd->top = wg->pb[0];
        pd->Hp = need > pd->H + pd->top ? need : pd->H + pd->top;
    }
}

/* Pixels the channel-last copy of x may take: x's, or the padded
 * image's (qconv_pad) where larger; -1 on overflow. */
static int64_t qconv_xvol(const op_win_geom *wg)
{
    qconv_pad pd;
    int64_t n;
    if (wg->ns != 1 && wg->ns != 2)
        return wg->ivol;
    qconv_pad_of(wg, &pd);
    if (!base_mul_i64(pd.Hp, pd.Wp, &n))
        return -1;
    n = n > wg->ivol ? n : wg->ivol;
    /* the channel-first pairs' 16 pixels past the (padded) image */
    return base_add_i64(n, 16, &n) ? n : -1;
}

/* A 1x1 convolution at stride 1 without padding: the int16 path's
 * pointwise kernel (qconv_kernel.h, op_qc_pw) reads x's planes. */
static int qconv_pw_ok(const op_win_geom *wg)
{
    if (wg->kvol != 1)
        return 0;
    for (int32_t i = 0; i < wg->ns; i++)
        if (wg->s[i] != 1 || wg->pb[i] != 0 || wg->pe[i] != 0)
            return 0;
    return 1;
}

/* The int16 path's grouped channel-first kernel (qconv_kernel.h,
 * op_qc_cf): groups whose inputs start at even channels (pairs), stride 1.
 * Measured against the channel-last tiles, it wins there only: resnext_w8's
 * groups of 4 and 8 1.45x and 1.1-1.6x, where a block's zero products go;
 * 64 -> 64 3x3 ran 0.69x, pointwise 0.88x (op_qc_pw's one-row tiles). */
static int qconv_cf_ok(const op_conv_geom *g)
{
    if (g->G == 1 || g->Cg % 2)
        return 0;
    for (int32_t i = 0; i < g->w.ns; i++)
        if (g->w.s[i] != 1)
            return 0;
    return 1;
}

/* For M output channels, K = Cg kvol taps and P output pixels; C input
 * channels of ivol pixels (the channel-last path's copy of x). */
static int64_t qconv_layout(int64_t M, int64_t K, int64_t P, int64_t C, int64_t ivol,
                            uint8_t *base, qconv_ws *w)
{
    const int64_t m16 = (M + OP_QC_PANEL - 1) / OP_QC_PANEL * OP_QC_PANEL;
    int64_t off = 0, k4 = op_qg_k4(K), c4 = op_qc_c4(C), ab, kp, xb;
    qconv_ws unused;
    if (!w)
        w = &unused;
    if (k4 < 0 || !base_mul_i64(M, k4, &ab) || !base_mul_i64(K, P, &kp) ||
        !qconv_carve(base, &off, ab, 1, (void **)&w->ap) ||
        !qconv_carve(base, &off, kp, 1, (void **)&w->col) ||
        !qconv_carve(base, &off, op_qg_panel_bytes(K, P), 1, (void **)&w->bp) ||
        !qconv_carve(base, &off, M, 4, (void **)&w->rowsum) ||
        !qconv_carve(base, &off, M, 4, (void **)&w->alpha) ||
        !qconv_carve(base, &off, M, 4, (void **)&w->scale) ||
        !qconv_carve(base, &off, P, 4, (void **)&w->colsum) ||
        !qconv_carve(base, &off, P, 4, (void **)&w->beta) ||
        !qconv_carve(base, &off, P, 4, (void **)&w->colterm) || c4 < 0 ||
        !base_mul_i64(ivol, c4, &xb) || xb > INT64_MAX - QCV_SLACK ||
        !qconv_carve(base, &off, xb + QCV_SLACK, QCV_ES, (void **)&w->xt) ||
        !qconv_carve(base, &off, c4 + QCV_SLACK, QCV_ES, (void **)&w->zrow) ||
        !base_mul_i64(P, m16, &xb) || !qconv_carve(base, &off, xb, 1, (void **)&w->yt) ||
        !qconv_carve(base, &off, m16 + OP_QC_PANEL, 4, (void **)&w->cterm) ||
        !qconv_carve(base, &off, m16 + OP_QC_PANEL, 4, (void **)&w->hscale))
        return -1;
    return off + QCV_ALIGN;
}

/* ---- depthwise (qconv_kernel.h's float planes) ---------------------------- */

/* Scratch slots of the depthwise path: its chunks of (image, channel)
 * items, one thread each at most. */
#define QCV_DW_SLOTS 16

/* A depthwise convolution (one input and one output channel per group) of
 * 2 spatial dims and few enough taps for exact float sums: p planned. */
static int qconv_dw_plan(const op_conv_geom *g, op_dw *p)
{
    return g->G > 1 && g->Cg == 1 && g->Mg == 1 && g->w.ns == 2 &&
           g->w.kvol <= OP_QC_DW_MAX_TAPS &&
           op_dw_plan(g->w.ns, g->w.in, g->w.k, g->w.out, g->w.s, g->w.d, g->w.pb, p);
}

/* Floats of one slot: op_dw's scratch, an input plane, an output plane. */
static int64_t qconv_dw_slot(const op_conv_geom *g, const op_dw *p)
{
    int64_t n;
    if (p->slot < 0 || !base_add_i64(p->slot, g->w.ivol, &n) ||
        !base_add_i64(n, g->w.ovol, &n))
        return -1;
    return n;
}

/* Bytes after qconv_layout's: the slots and the taps (C kvol floats). */
static int64_t qconv_dw_bytes(const op_conv_geom *g, const op_dw *p)
{
    int64_t slot = qconv_dw_slot(g, p), taps, n;
    if (slot < 0 || !base_mul_i64(g->C, g->w.kvol, &taps) ||
        !base_mul_i64(slot, QCV_DW_SLOTS, &n) || !base_add_i64(n, taps, &n) ||
        !base_mul_i64(n, 4, &n) || !base_add_i64(n, QCV_ALIGN, &n))
        return -1;
    return n;
}

typedef struct qconv_dw_job {
    op_dw dw;
    const op_conv_geom *g;
    const ql_values *v;
    const uint8_t *x;
    const int32_t *bias;
    const float *taps; /* w - w_zp, channel c's at c kvol */
    float *scratch;
    void *y;
    int64_t slot, slots, items, es;
    int32_t ax;
    uint8_t fx;
} qconv_dw_job;

static void qconv_dw_chunks(void *arg, int64_t begin, int64_t end)
{
    const qconv_dw_job *j = arg;
    const op_conv_geom *g = j->g;
    const op_act none = {OP_ACT_NONE, 0.0f, 0.0f};
    for (int64_t t = begin; t < end; t++) {
        float *s = j->scratch + t * j->slot, *xin = s + j->dw.slot,
              *sum = xin + g->w.ivol;
        op_dw_zero(&j->dw, s);
        for (int64_t it = t * j->items / j->slots; it < (t + 1) * j->items / j->slots;
             it++) {
            const int64_t c = it % g->C, n = it / g->C;
            op_qc_plane_f32(j->x + (n * g->C + c) * g->w.ivol, g->w.ivol, j->fx, j->ax,
                            xin);
            op_dw_run(&j->dw, xin, j->taps + c * g->w.kvol, 0.0f, &none, sum, s);
            op_qc_requant_f32(sum, g->w.ovol, j->bias ? j->bias[c] : 0,
                              ql_multiplier(j->v, c), j->v->y_zp,
                              j->v->out == OP_QG_OUT_U8, j->v->out == OP_QG_OUT_I32,
                              (uint8_t *)j->y + (n * g->M + c) * g->w.ovol * j->es);
        }
    }
}

/* x's and W's zero points subtracted up front (any zero points). */
static prt_status qconv_run_dw(qconv_dw_job *j, const void *W, const void *bias, void *y,
                               void *ws, int64_t ws_off)
{
    const op_conv_geom *g = j->g;
    const ql_values *v = j->v;
    const int64_t kvol = g->w.kvol;
    float *taps = (float *)(((uintptr_t)ws + (uintptr_t)ws_off + QCV_ALIGN - 1) /
                            QCV_ALIGN * QCV_ALIGN);
    for (int64_t c = 0; c < g->C; c++) {
        const int32_t zp = ql_b_zp(v, c);
        for (int64_t k = 0; k < kvol; k++) {
            const uint8_t b = ((const uint8_t *)W)[c * kvol + k];
            taps[c * kvol + k] =
                (float)((v->b_dtype == PRT_INT8 ? (int32_t)(int8_t)b : (int32_t)b) - zp);
        }
    }
    j->taps = taps;
    j->scratch = taps + g->C * kvol;
    j->slot = qconv_dw_slot(g, &j->dw);
    j->items = g->N * g->C;
    j->slots = j->items < QCV_DW_SLOTS ? j->items : QCV_DW_SLOTS;
    j->bias = bias;
    j->y = y;
    base_parallel_for(j->slots, 1, qconv_dw_chunks, j);
    return PRT_OK;
}

/* Sizes only from the dims, whatever they are (the builder asks with
 * profile maxima): M from W, K from W's volume, P from the output's. */
static int64_t qconv_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                               int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    ql_inputs q;
    int64_t M, K, P, C, ivol;
    (void)dtype, (void)nb_out;
    ql_inputs_of(o, nb_in, &q);
    if (in[q.b].nb_dims < 3 || out[0].nb_dims < 3 || in[q.a].nb_dims < 3)
        return -1;
    C = in[q.a].d[1];
    ivol = in[q.a].d[0] * C > 0 ? base_volume(&in[q.a]) / (in[q.a].d[0] * C) : 0;
    M = in[q.b].d[0];
    K = M > 0 ? base_volume(&in[q.b]) / M : 0;
    P = out[0].d[0] * out[0].d[1] > 0 ? base_volume(&out[0]) / (out[0].d[0] * out[0].d[1])
                                      : 0;
    {
        op_conv_geom g;
        op_dw dw;
        const int geom_ok = !qconv_geom(o, in, nb_in, &g);
        const int64_t base =
            qconv_layout(M, K, P, C, geom_ok ? qconv_xvol(&g.w) : ivol, NULL, NULL);
        int64_t extra;
        if (base < 0 || !geom_ok || !qconv_dw_plan(&g, &dw))
            return base;
        extra = qconv_dw_bytes(&g, &dw);
        return extra < 0 || base > INT64_MAX - extra ? -1 : base + extra;
    }
}

/* One image and group: im2col, packing, then the blocks. */
typedef struct qconv_job {
    op_qg_args g;
    const op_win_geom *wg;
    const uint8_t *x; /* the group's first channel of the image */
    uint8_t pad;      /* x's zero point, as stored in x */
    uint8_t fx;
    const uint8_t *B; /* x itself (direct) or the im2col matrix */
    uint8_t *col, *bp;
    int32_t *colsum;
    int64_t nbn;
} qconv_job;

/* Rows of the im2col matrix for channels [c0, c1): row c kvol + kp holds
 * kernel position kp's input over the ovol windows, `pad` outside x. */
static void qconv_im2col_range(void *arg, int64_t c0, int64_t c1)
{
    const qconv_job *j = arg;
    const op_win_geom *g = j->wg;
    const int32_t ns = g->ns, last = ns - 1;
    const int64_t olast = g->out[last], orows = g->ovol / olast;
    const int64_t D = g->in[last], st = g->s[last];
    int64_t istr[OP_SP_MAX], s = 1;
    for (int32_t i = ns - 1; i >= 0; i--) {
        istr[i] = s;
        s *= g->in[i];
    }
    for (int64_t c = c0; c < c1; c++) {
        const uint8_t *xc = j->x + c * g->ivol;
        int64_t kidx[OP_SP_MAX] = {0};
        for (int64_t kp = 0; kp < g->kvol; kp++) {
            uint8_t *row = j->col + (c * g->kvol + kp) * g->ovol;
            const int64_t koff = kidx[last] * g->d[last] - g->pb[last];
            /* The columns whose input position j st + koff lies in [0, D). */
            int64_t j0 = koff >= 0 ? 0 : (-koff + st - 1) / st;
            int64_t j1 = D - koff <= 0 ? 0 : (D - koff + st - 1) / st;
            int64_t oidx[OP_SP_MAX] = {0};
            if (j1 > olast)
                j1 = olast;
            if (j0 > j1)
                j0 = j1;
            for (int64_t r = 0; r < orows; r++, row += olast) {
                int64_t p0 = koff;
                int inside = 1;
                for (int32_t i = 0; i < last; i++) {
                    int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
                    inside = inside && p >= 0 && p < g->in[i];
                    p0 += p * istr[i];
                }
                if (!inside) {
                    memset(row, j->pad, (size_t)olast);
                } else {
                    memset(row, j->pad, (size_t)j0);
                    if (st == 1)
                        memcpy(row + j0, xc + p0 + j0, (size_t)(j1 - j0));
                    else
                        for (int64_t q = j0; q < j1; q++)
                            row[q] = xc[p0 + q * st];
                    memset(row + j1, j->pad, (size_t)(olast - j1));
                }
                for (int32_t i = last - 1; i >= 0; i--) {
                    if (++oidx[i] < g->out[i])
                        break;
                    oidx[i] = 0;
                }
            }
            for (int32_t i = ns - 1; i >= 0; i--) {
                if (++kidx[i] < g->k[i])
                    break;
                kidx[i] = 0;
            }
        }
    }
}

static void qconv_pack_b_range(void *arg, int64_t begin, int64_t end)
{
    qconv_job *j = arg;
    op_qg_pack_b(j->g.K, j->g.N, j->B, j->g.N, j->fx, 0, begin, end, j->bp, j->colsum);
}

static void qconv_block_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t i0 = it / j->nbn * QCV_MB, j0 = it % j->nbn * QCV_NB;
        op_qg_gemm(&j->g, i0, i0 + QCV_MB < j->g.M ? i0 + QCV_MB : j->g.M, j0,
                   j0 + QCV_NB < j->g.N ? j0 + QCV_NB : j->g.N);
    }
}

static void qconv_pack_w_range(void *arg, int64_t begin, int64_t end)
{
    qconv_job *j = arg;
    op_qg_pack_a(j->g.K, j->B, j->g.K, j->fx, 1, begin, end, (uint8_t *)j->g.ap,
                 (int32_t *)j->g.rowsum);
}

/* One image through the channel-last path (qconv_kernel.h): `a` is
 * group 0's arguments, a group's are offset from them (qconv_hwc_group). */
typedef struct qconv_hwc_job {
    op_qc_args a;
    const uint8_t *x; /* the image, CHW */
    uint8_t *y;       /* its output, CHW */
    int64_t C, npb, S;
    int64_t Cg, Mg, wg; /* channels of a group in and out, W bytes of a group */
    int64_t M, M16;     /* the whole output's channels, and yt's row */
    int64_t nsb;        /* blocks of OP_QC_NP panels of a group */
    qconv_pad pad;      /* the int16 tiles' padded copy (a.wide) */
    op_qc_pw_args pw;   /* the pointwise kernel's (qconv_pw_ok) */
    const uint8_t *xpw; /* the image for op_qc_pw_pairs */
    op_qc_cf_args cf;   /* the grouped channel-first kernel's (qconv_cf_ok) */
    const uint8_t *xcf; /* the image for op_qc_cf_pairs */
    int64_t rows;       /* output rows of an item of op_qc_cf */
    uint16_t ax;        /* x's zero point as stored (the padding) */
    uint8_t fx;
} qconv_hwc_job;

/* Pixels and channels of a block of the pointwise kernel's work. */
#define QCV_PW_PIX 256
#define QCV_PW_CH 12

static void qconv_pw_pairs_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    op_qc_pw_pairs(j->xpw, j->C, j->pw.P, j->pw.P16, j->fx, begin, end,
                   (uint16_t *)j->pw.xp);
}

/* Items: blocks of QCV_PW_CH channels by QCV_PW_PIX pixels, pixels
 * innermost. */
static void qconv_pw_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    const int64_t npb = (j->pw.P + QCV_PW_PIX - 1) / QCV_PW_PIX;
    for (int64_t it = begin; it < end; it++) {
        const int64_t m0 = it / npb * QCV_PW_CH, p0 = it % npb * QCV_PW_PIX;
        op_qc_pw(&j->pw, m0, m0 + QCV_PW_CH < j->pw.o.M ? m0 + QCV_PW_CH : j->pw.o.M, p0,
                 p0 + QCV_PW_PIX < j->pw.P ? p0 + QCV_PW_PIX : j->pw.P);
    }
}

/* Channels of a block of the channel-first kernel's work. */
#define QCV_CF_CH 12

static void qconv_cf_pairs_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    op_qc_cf_pairs(j->xcf, j->C, j->pad.H, j->pad.W, j->pad.top, j->pad.left, j->pad.Hp,
                   j->pad.Wp, j->cf.PP, j->fx, j->ax, begin, end, (uint16_t *)j->cf.xp);
}

/* Items: blocks of QCV_CF_CH channels by j->rows output rows, rows
 * innermost. */
static void qconv_cf_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    const int64_t nrb = (j->cf.OH + j->rows - 1) / j->rows;
    for (int64_t it = begin; it < end; it++) {
        const int64_t m0 = it / nrb * QCV_CF_CH, r0 = it % nrb * j->rows;
        op_qc_cf(&j->cf, m0, m0 + QCV_CF_CH < j->cf.o.M ? m0 + QCV_CF_CH : j->cf.o.M, r0,
                 r0 + j->rows < j->cf.OH ? r0 + j->rows : j->cf.OH);
    }
}

/* Output pixels of a block: enough tiles to reuse a W group from cache. */
#define QCV_HWC_PIX (16 * OP_QC_MR)

static void qconv_hwc_copy_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    op_qc_to_hwc(j->x, j->C, j->a.H * j->a.W, j->fx, j->a.ldx, begin, end, 0,
                 (uint8_t *)j->a.xt + begin * j->a.ldx);
}

/* Rows [begin, end) of x into the int16 tiles' padded copy, and the
 * padding pixels left and right of each. */
static void qconv_hwc_rows16(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    const qconv_pad *pd = &j->pad;
    const size_t px = (size_t)j->a.ldx * 2;
    uint8_t *xt = (uint8_t *)j->a.xt;
    for (int64_t h = begin; h < end; h++) {
        uint8_t *row = xt + (size_t)((pd->top + h) * pd->Wp) * px;
        op_qc_to_hwc(j->x, j->C, pd->H * pd->W, j->fx, j->a.ldx, h * pd->W,
                     (h + 1) * pd->W, 1, row + (size_t)pd->left * px);
        for (int64_t w = 0; w < pd->left; w++)
            memcpy(row + (size_t)w * px, j->a.zrow, px);
        for (int64_t w = pd->left + pd->W; w < pd->Wp; w++)
            memcpy(row + (size_t)w * px, j->a.zrow, px);
    }
}

/* The padded copy's rows above and below x: padding pixels. */
static void qconv_hwc_pad_rows16(const qconv_hwc_job *j)
{
    const qconv_pad *pd = &j->pad;
    const size_t px = (size_t)j->a.ldx * 2;
    for (int64_t h = 0; h < pd->Hp; h++)
        if (h < pd->top || h >= pd->top + pd->H)
            for (int64_t w = 0; w < pd->Wp; w++)
                memcpy((uint8_t *)j->a.xt + (size_t)(h * pd->Wp + w) * px, j->a.zrow, px);
}

static void qconv_hwc_out_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    op_qc_from_hwc(j->a.yt, j->M16, j->M, j->a.P, begin, end, j->y);
}

/* Items in W panels' order (group, block of panels, pixels): consecutive
 * items of a thread share a panel. A group's inputs start at its first
 * channel within each pixel of xt, its outputs likewise in yt. */
static void qconv_hwc_tile_range(void *arg, int64_t begin, int64_t end)
{
    const qconv_hwc_job *j = arg;
    op_qc_args a = j->a;
    int64_t gcur = 0;
    for (int64_t it = begin; it < end; it++) {
        const int64_t gi = it / (j->nsb * j->npb), r = it % (j->nsb * j->npb);
        const int64_t s0 = r / j->npb * OP_QC_NP, p0 = r % j->npb * QCV_HWC_PIX;
        if (gi != gcur) {
            const int64_t es = j->a.wide ? 2 : 1;
            gcur = gi;
            a.xt = j->a.xt + gi * j->Cg * es;
            a.zrow = j->a.zrow + gi * j->Cg * es;
            a.wp = j->a.wp + gi * j->wg;
            a.cterm = j->a.cterm + gi * j->Mg;
            a.scale = j->a.scale + gi * j->Mg;
            a.yt = j->a.yt + gi * j->Mg;
        }
        op_qc_conv(&a, p0, p0 + QCV_HWC_PIX < a.P ? p0 + QCV_HWC_PIX : a.P, s0,
                   s0 + OP_QC_NP < j->S ? s0 + OP_QC_NP : j->S);
    }
}

static prt_status qconv_run_hwc(const op_conv_geom *g, const ql_values *v,
                                const qconv_const *pc, const int32_t *bias, const void *x,
                                void *y, const qconv_ws *w)
{
    const op_win_geom *wg = &g->w;
    const int32_t ax = v->a_zp + (qconv_x_flip(v->a_dtype) ? 128 : 0);
    const int64_t k = qconv_group_block(g->G, g->Mg, pc->wide), G = g->G / k;
    const int64_t es = pc->wide ? 2 : 1;
    op_qc_cf_out out;
    qconv_hwc_job j;
    memset(&j, 0, sizeof j);
    j.a.wide = pc->wide;
    j.C = g->C;
    j.Cg = k * g->Cg; /* a block of k groups (qconv_group_block) */
    j.Mg = k * g->Mg;
    j.M = g->M;
    j.fx = qconv_x_flip(v->a_dtype);
    /* panels of a group */
    j.S = (j.Mg + OP_QC_PANEL - 1) / OP_QC_PANEL;
    j.nsb = (j.S + OP_QC_NP - 1) / OP_QC_NP;
    j.wg = op_qc_w_bytes(j.Mg, j.Cg, wg->kvol) * es;
    j.M16 = (g->M + OP_QC_PANEL - 1) / OP_QC_PANEL * OP_QC_PANEL;
    j.a.C4 = op_qc_c4(j.Cg);
    j.a.ldx = op_qc_c4(g->C);
    if (wg->ns == 1) {
        j.a.H = j.a.OH = j.a.kh = j.a.sh = j.a.dh = 1;
        j.a.ph = 0;
    } else {
        j.a.H = wg->in[0], j.a.OH = wg->out[0], j.a.kh = wg->k[0];
        j.a.sh = wg->s[0], j.a.dh = wg->d[0], j.a.ph = wg->pb[0];
    }
    j.a.W = wg->in[wg->ns - 1], j.a.OW = wg->out[wg->ns - 1], j.a.kw = wg->k[wg->ns - 1];
    j.a.sw = wg->s[wg->ns - 1], j.a.dw = wg->d[wg->ns - 1], j.a.pw = wg->pb[wg->ns - 1];
    if (j.a.wide) {
        qconv_pad_of(wg, &j.pad);
        j.a.H = j.pad.Hp, j.a.W = j.pad.Wp, j.a.ph = j.a.pw = 0;
    }
    j.a.xt = w->xt;
    j.a.zrow = w->zrow;
    j.a.wp = pc->wq;
    j.a.M = j.Mg;
    j.a.cterm = w->cterm;
    j.a.scale = w->hscale;
    j.a.zp = v->y_zp;
    j.a.is_u8 = v->out == OP_QG_OUT_U8;
    j.a.yt = w->yt;
    j.a.M16 = j.M16;
    j.a.P = wg->ovol;
    j.npb = (j.a.P + QCV_HWC_PIX - 1) / QCV_HWC_PIX;
    memset(w->zrow, 0, (size_t)((j.a.ldx + QCV_SLACK) * es));
    for (int64_t c = 0; c < g->C; c++) {
        if (es == 2)
            ((uint16_t *)(void *)w->zrow)[c] = (uint16_t)ax;
        else
            w->zrow[c] = (uint8_t)ax;
    }
    /* the copy's slack (read against W's zero padding) holds zeros too */
    memset(w->xt + j.a.H * j.a.W * j.a.ldx * es, 0, QCV_SLACK * es);
    for (int64_t m = 0; m < j.M16 + OP_QC_PANEL; m++) {
        /* bias - ax colsum_w, wrapping as qgemm.h's store pass */
        w->cterm[m] = m < g->M ? (int32_t)((bias ? (uint32_t)bias[m] : 0u) -
                                           (uint32_t)ax * (uint32_t)pc->rowsum[m])
                               : 0;
        w->hscale[m] = m < g->M ? ql_multiplier(v, m) : 0.0f;
    }
    out.wp = (const int16_t *)(const void *)pc->wq;
    out.C4 = j.a.C4;
    out.M = g->M;
    out.cterm = w->cterm;
    out.scale = w->hscale;
    out.zp = v->y_zp;
    out.is_u8 = v->out == OP_QG_OUT_U8;
    if (j.a.wide && g->G == 1 && qconv_pw_ok(wg)) {
        j.pw.xp = (const uint16_t *)(const void *)w->xt;
        j.pw.C2 = (g->C + 1) / 2;
        j.pw.P = wg->ovol;
        j.pw.P16 = (wg->ovol + 15) / 16 * 16;
        j.pw.o = out;
        for (int64_t n = 0; n < g->N; n++) {
            j.xpw = (const uint8_t *)x + n * g->C * wg->ivol;
            j.pw.y = (uint8_t *)y + n * g->M * j.pw.P;
            base_parallel_for(j.pw.C2, 1, qconv_pw_pairs_range, &j);
            base_parallel_for((g->M + QCV_PW_CH - 1) / QCV_PW_CH *
                                  ((j.pw.P + QCV_PW_PIX - 1) / QCV_PW_PIX),
                              1, qconv_pw_range, &j);
        }
        return PRT_OK;
    }
    if (j.a.wide && qconv_cf_ok(g)) {
        qconv_pad_of(wg, &j.pad);
        j.cf.OH = j.a.OH;
        j.cf.OW = j.a.OW;
        j.cf.Wp = j.pad.Wp;
        j.cf.PP = j.pad.Hp * j.pad.Wp + 16;
        j.cf.xp = (const uint16_t *)(const void *)w->xt;
        j.cf.kh = j.a.kh, j.cf.kw = j.a.kw, j.cf.dh = j.a.dh, j.cf.dw = j.a.dw;
        j.cf.Cg = g->Cg;
        j.cf.Mg = g->Mg;
        j.cf.Mb = j.Mg; /* a packed block's channels (qconv_group_block) */
        j.cf.wblock = j.wg / 2;
        j.cf.o = out;
        j.ax = (uint16_t)ax;
        j.rows = (255 + j.cf.OW) / j.cf.OW;
        for (int64_t n = 0; n < g->N; n++) {
            j.xcf = (const uint8_t *)x + n * g->C * wg->ivol;
            j.cf.y = (uint8_t *)y + n * g->M * wg->ovol;
            base_parallel_for((g->C + 1) / 2, 1, qconv_cf_pairs_range, &j);
            base_parallel_for((g->M + QCV_CF_CH - 1) / QCV_CF_CH *
                                  ((j.cf.OH + j.rows - 1) / j.rows),
                              1, qconv_cf_range, &j);
        }
        return PRT_OK;
    }
    for (int64_t n = 0; n < g->N; n++) {
        j.x = (const uint8_t *)x + n * g->C * wg->ivol;
        j.y = (uint8_t *)y + n * g->M * j.a.P;
        if (j.a.wide) {
            qconv_hwc_pad_rows16(&j);
            base_parallel_for(j.pad.H, (1023 + j.pad.W) / j.pad.W, qconv_hwc_rows16, &j);
        } else {
            base_parallel_for(wg->ivol, 1024, qconv_hwc_copy_range, &j);
        }
        base_parallel_for(G * j.nsb * j.npb, 1, qconv_hwc_tile_range, &j);
        base_parallel_for(j.a.P, 256, qconv_hwc_out_range, &j);
    }
    return PRT_OK;
}

static prt_status qconv_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    ql_inputs q;
    ql_values v;
    op_conv_geom g;
    prt_dims dims[OP_MAX_INPUTS];
    qconv_ws w;
    qconv_job j;
    const qconv_const *pc = (const qconv_const *)o->cst;
    const int32_t *bias;
    int64_t K, P, es, dx;
    int32_t dw;
    prt_status st;
    (void)dtype, (void)nb_out, (void)stream;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = qconv_geom(o, dims, nb_in, &g);
    if (st)
        return st;
    ql_inputs_of(o, nb_in, &q);
    ql_values_of(&q, in, x, &v);
    K = g.Cg * g.w.kvol;
    P = g.w.ovol;
    if (g.N == 0 || g.M == 0 || P == 0)
        return PRT_OK;
    {
        qconv_dw_job dj;
        memset(&dj, 0, sizeof dj);
        if (qconv_dw_plan(&g, &dj.dw)) {
            dj.g = &g;
            dj.v = &v;
            dj.x = x[q.a];
            dj.fx = qconv_x_flip(v.a_dtype);
            dj.ax = v.a_zp + (dj.fx ? 128 : 0);
            dj.es = (int64_t)prt_dtype_size(out->dtype);
            return qconv_run_dw(
                &dj, x[q.b], q.bias >= 0 ? x[q.bias] : NULL, ys[0], ws,
                qconv_layout(g.M, K, P, g.C, qconv_xvol(&g.w), NULL, NULL));
        }
    }
    (void)qconv_layout(g.M, K, P, g.C, qconv_xvol(&g.w), ws, &w);
    if (pc && !ql_const_is(&pc->src, &in[q.b], x[q.b]))
        pc = NULL;
    if (pc && pc->wq) {
        /* the layout packed at build must be the one of the tiles that
         * run now (op_qg_force, a test hook, may have changed them) */
        if (qconv_hwc_ok(o, &q, in, q.b_zp >= 0 ? x[q.b_zp] : NULL) &&
            pc->wide == op_qg_wide())
            return qconv_run_hwc(&g, &v, pc, q.bias >= 0 ? x[q.bias] : NULL, x[q.a],
                                 ys[0], &w);
        pc = NULL; /* W packed per run, as without a constant */
    }
    memset(&j, 0, sizeof j);
    j.wg = &g.w;
    j.fx = qconv_x_flip(v.a_dtype);
    j.pad = (uint8_t)v.a_zp;
    dx = j.fx ? 128 : 0;
    dw = qconv_w_flip(v.b_dtype) ? -128 : 0;
    if (!pc) {
        j.g.K = K;
        j.g.ap = w.ap;
        j.g.rowsum = w.rowsum;
        j.B = x[q.b];
        j.fx = qconv_w_flip(v.b_dtype);
        base_parallel_for(g.M, OP_QG_MR, qconv_pack_w_range, &j);
        j.fx = qconv_x_flip(v.a_dtype);
    }
    for (int64_t m = 0; m < g.M; m++) {
        w.alpha[m] = ql_b_zp(&v, m) + dw;
        w.scale[m] = ql_multiplier(&v, m);
    }
    for (int64_t p = 0; p < P; p++)
        w.beta[p] = (int32_t)(v.a_zp + dx);
    bias = q.bias >= 0 ? x[q.bias] : NULL;
    es = (int64_t)prt_dtype_size(out->dtype);
    j.g.M = g.Mg;
    j.g.N = P;
    j.g.K = K;
    j.g.a_u8 = 0;
    j.g.alpha_step = 1;
    j.g.beta = w.beta;
    j.g.colterm = w.colterm;
    j.g.colsum = j.colsum = w.colsum;
    j.g.bp = j.bp = w.bp;
    j.g.bias_rows = 1;
    j.g.out = v.out;
    j.g.scale_rows = 1;
    j.g.scale_step = 1;
    j.g.zp = v.y_zp;
    j.g.ldc = P;
    j.col = w.col;
    j.nbn = (P + QCV_NB - 1) / QCV_NB;
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gi = 0; gi < g.G; gi++) {
            const int64_t m0 = gi * g.Mg;
            j.x = (const uint8_t *)x[q.a] + (n * g.C + gi * g.Cg) * g.w.ivol;
            if (g.direct) {
                j.B = j.x;
            } else {
                j.B = j.col;
                base_parallel_for(g.Cg, 1, qconv_im2col_range, &j);
            }
            base_parallel_for((P + OP_QG_PANEL - 1) / OP_QG_PANEL, 1, qconv_pack_b_range,
                              &j);
            op_qg_colterm(w.colsum, w.beta, K, P, w.colterm);
            j.g.ap = (pc ? pc->ap : w.ap) + m0 * op_qg_k4(K);
            j.g.rowsum = (pc ? pc->rowsum : w.rowsum) + m0;
            j.g.alpha = w.alpha + m0;
            j.g.bias = bias ? bias + m0 : NULL;
            j.g.scale = v.out == OP_QG_OUT_I32 ? NULL : w.scale + m0;
            j.g.C = (uint8_t *)ys[0] + (n * g.M + m0) * P * es;
            base_parallel_for((g.Mg + QCV_MB - 1) / QCV_MB * j.nbn, 1, qconv_block_range,
                              &j);
        }
    return PRT_OK;
}

static const prt_field_schema qconv_schema[] = {
    {"auto_pad", PRT_FIELD_CHAR, -1, "NOTSET (default), SAME_UPPER, SAME_LOWER or VALID"},
    {"dilations", PRT_FIELD_INT32, -1, "per spatial dim, default 1s"},
    {"group", PRT_FIELD_INT32, 1, "groups of channels, default 1"},
    {"kernel_shape", PRT_FIELD_INT32, -1, "W's spatial dims (optional)"},
    {"pads", PRT_FIELD_INT32, -1, "begins then ends, default 0s"},
    {"strides", PRT_FIELD_INT32, -1, "per spatial dim, default 1s"},
};

#define QCONV_CLASS(KIND, MIN, MAX)                                                      \
    {                                                                                    \
        .kind = (KIND), .min_inputs = (MIN), .max_inputs = (MAX),                        \
        .dtypes = OP_DT(PRT_UINT8) | OP_DT(PRT_INT8), .in_dtypes = ql_in_dtypes,         \
        .out_dtype = ql_out_dtype, .size = sizeof(qconv_op), .alias_input = -1,          \
        .parse = qconv_parse, .serialize = qconv_serialize, .shapes = qconv_shapes,      \
        .infer = qconv_infer, .workspace = qconv_workspace, .run = qconv_run,            \
        .prepare = qconv_prepare,                                                        \
    }

static const op_class conv_integer_class = QCONV_CLASS(QL_CONV_INTEGER, 2, 4);
static const op_class qlinear_conv_class = QCONV_CLASS(QL_QLINEAR_CONV, 8, 9);

const prt_plugin_creator op_conv_integer_creator =
    OP_CREATOR("ConvInteger", conv_integer_class, qconv_schema, 6);
const prt_plugin_creator op_qlinear_conv_creator =
    OP_CREATOR("QLinearConv", qlinear_conv_class, qconv_schema, 6);

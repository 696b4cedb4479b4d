/* The geometry of sliding windows, shared by Conv, ConvTranspose and the
 * pools: attributes, output sizes and padding, im2col and col2im. The rules
 * are in ops_nn.h. */
#include <string.h>

#include "ops/ops_nn.h"

static const char *const pad_names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

/* An int array field whose values are all >= lo. */
static prt_status win_array(op_object *o, const op_fields *f, const char *name,
                            int32_t *dst, int32_t cap, int32_t lo, int32_t *nb)
{
    int32_t n;
    prt_status st = op_field_i32_array(f, name, dst, cap, &n);
    if (st)
        return st;
    *nb = n < 0 ? 0 : n;
    for (int32_t i = 0; i < *nb; i++)
        if (dst[i] < lo)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "%s[%d] is %d; it must be >= %d",
                           name, (int)i, (int)dst[i], (int)lo);
    return PRT_OK;
}

prt_status op_window_parse(op_object *o, const op_fields *f, op_window *w)
{
    char ap[32];
    int32_t len, n = -1;
    prt_status st = op_field_str(f, "auto_pad", ap, sizeof ap, &len);
    if (st)
        return st;
    w->auto_pad = -1;
    for (int32_t i = 0; i < 4; i++)
        if (len < 0 || strcmp(ap, pad_names[i]) == 0) {
            w->auto_pad = len < 0 ? OP_PAD_NOTSET : i;
            break;
        }
    if (w->auto_pad < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER "
                       "or VALID",
                       ap);
    st = win_array(o, f, "dilations", w->dil, OP_SP_MAX, 1, &w->nb_dil);
    if (!st)
        st = win_array(o, f, "kernel_shape", w->ks, OP_SP_MAX, 1, &w->nb_ks);
    if (!st)
        st = win_array(o, f, "pads", w->pads, 2 * OP_SP_MAX, 0, &w->nb_pads);
    if (!st)
        st = win_array(o, f, "strides", w->str, OP_SP_MAX, 1, &w->nb_str);
    if (st)
        return st;
    if (w->nb_pads % 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "pads has %d values; it needs 2 per spatial dim "
                       "(begins, then ends)",
                       (int)w->nb_pads);
    if (w->auto_pad != OP_PAD_NOTSET)
        for (int32_t i = 0; i < w->nb_pads; i++)
            if (w->pads[i])
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "explicit pads cannot be used with auto_pad "
                               "%s",
                               pad_names[w->auto_pad]);
    /* The arrays given must agree on the number of spatial dims. */
    {
        const int32_t lens[4] = {w->nb_dil, w->nb_ks, w->nb_pads / 2, w->nb_str};
        for (int32_t i = 0; i < 4; i++) {
            if (lens[i] == 0)
                continue;
            if (n >= 0 && lens[i] != n)
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "dilations (%d), kernel_shape (%d), pads (%d "
                               "= 2 x %d) and strides (%d) disagree on the "
                               "number of spatial dims",
                               (int)w->nb_dil, (int)w->nb_ks, (int)w->nb_pads,
                               (int)w->nb_pads / 2, (int)w->nb_str);
            n = lens[i];
        }
    }
    return PRT_OK;
}

int32_t op_window_ser_pad(op_window *w, prt_field *ser)
{
    const char *ap = pad_names[w->auto_pad];
    op_ser(&ser[0], "auto_pad", PRT_FIELD_CHAR, ap, (int64_t)strlen(ap));
    return 1;
}

int32_t op_window_ser_arrays(op_window *w, prt_field *ser)
{
    int32_t n = 0;
    if (w->nb_dil)
        op_ser(&ser[n++], "dilations", PRT_FIELD_INT32, w->dil, w->nb_dil);
    if (w->nb_ks)
        op_ser(&ser[n++], "kernel_shape", PRT_FIELD_INT32, w->ks, w->nb_ks);
    if (w->nb_pads)
        op_ser(&ser[n++], "pads", PRT_FIELD_INT32, w->pads, w->nb_pads);
    if (w->nb_str)
        op_ser(&ser[n++], "strides", PRT_FIELD_INT32, w->str, w->nb_str);
    return n;
}

prt_status op_window_check_ns(const op_object *o, const op_window *w, int32_t ns,
                              const char *x)
{
    if ((w->nb_dil && w->nb_dil != ns) || (w->nb_ks && w->nb_ks != ns) ||
        (w->nb_str && w->nb_str != ns) || (w->nb_pads && w->nb_pads != 2 * ns))
        return op_fail(o, PRT_ERR_SHAPE,
                       "%s has %d spatial dims but dilations has %d values, "
                       "kernel_shape %d, strides %d, pads %d (0: not given; "
                       "pads needs 2 per dim)",
                       x, (int)ns, (int)w->nb_dil, (int)w->nb_ks, (int)w->nb_str,
                       (int)w->nb_pads);
    return PRT_OK;
}

prt_status op_window_rank(const op_object *o, int32_t r)
{
    if (r < 3)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X must have rank 3 or more (N x C x D1 ...), it has "
                       "rank %d",
                       (int)r);
    return PRT_OK;
}

prt_status op_conv_check_ranks(const op_object *o, const op_window *w, int32_t nb_in,
                               int32_t rx, int32_t rw, int32_t rb, const char *wshape)
{
    prt_status st = op_window_rank(o, rx);
    if (st)
        return st;
    if (rw != rx)
        return op_fail(o, PRT_ERR_SHAPE, "W has rank %d but X has rank %d (W is %s)",
                       (int)rw, (int)rx, wshape);
    if (nb_in == 3 && rb != 1)
        return op_fail(o, PRT_ERR_SHAPE, "B must have rank 1, it has rank %d", (int)rb);
    return op_window_check_ns(o, w, rx - 2, "X");
}

prt_status op_window_check_kernel(const op_object *o, const op_window *w, int32_t i,
                                  int64_t k)
{
    if (w->nb_ks && k != w->ks[i])
        return op_fail(o, PRT_ERR_SHAPE,
                       "kernel_shape[%d] is %d but W's spatial dim %d is %lld", (int)i,
                       (int)w->ks[i], (int)i, (long long)k);
    return PRT_OK;
}

void op_conv_out_dims(const op_conv_geom *g, const int64_t *sp, prt_dims *out)
{
    out->nb_dims = g->w.ns + 2;
    out->d[0] = g->N;
    out->d[1] = g->M;
    for (int32_t i = 0; i < g->w.ns; i++)
        out->d[2 + i] = sp[i];
}

float *op_conv_to_f32(const void *const *xs, int32_t dtype, const prt_dims *dims,
                      int32_t nb_in, float *ws, const float **x, const float **w,
                      const float **b)
{
    const float **dst[3] = {x, w, b};
    for (int32_t k = 0; k < nb_in; k++) {
        int64_t v = base_volume(&dims[k]);
        op_to_f32(xs[k], dtype, v, ws);
        *dst[k] = ws;
        ws += v;
    }
    return ws;
}

int op_conv_f16_floats(int32_t dtype, const prt_dims *in, int32_t nb_in,
                       const prt_dims *out, int64_t *n)
{
    if (dtype != PRT_FLOAT16)
        return 1;
    for (int32_t k = 0; k <= nb_in; k++) {
        int64_t vol = base_volume(k < nb_in ? &in[k] : out); /* inputs, then Y */
        if (vol < 0 || !base_add_i64(*n, vol, n))
            return 0;
    }
    return 1;
}

int64_t op_window_str(const op_window *w, int32_t i)
{
    return w->nb_str ? w->str[i] : 1;
}

int64_t op_window_dil(const op_window *w, int32_t i)
{
    return w->nb_dil ? w->dil[i] : 1;
}

int64_t op_window_pad_begin(const op_window *w, int32_t i, int32_t ns)
{
    (void)ns;
    return w->auto_pad == OP_PAD_NOTSET && w->nb_pads ? w->pads[i] : 0;
}

int64_t op_window_pad_end(const op_window *w, int32_t i, int32_t ns)
{
    return w->auto_pad == OP_PAD_NOTSET && w->nb_pads ? w->pads[ns + i] : 0;
}

static int win_same(const op_window *w)
{
    return w->auto_pad == OP_PAD_SAME_UPPER || w->auto_pad == OP_PAD_SAME_LOWER;
}

prt_status op_window_out_expr(op_object *o, prt_expr_builder *eb, const op_window *w,
                              int32_t i, int32_t ns, const prt_expr *d, const prt_expr *k,
                              int32_t ceil_mode, const prt_expr **out)
{
    int64_t s = op_window_str(w, i), dil = op_window_dil(w, i);
    int64_t pb = op_window_pad_begin(w, i, ns), pads = pb + op_window_pad_end(w, i, ns);
    int64_t vd, vk;
    const prt_expr *ext, *num, *q, *one = eb->constant(eb, 1);
    if (win_same(w)) {
        *out = eb->operation(eb, PRT_DIM_CEIL_DIV, d, eb->constant(eb, s));
        return PRT_OK;
    }
    if (eb->is_constant(eb, d, &vd) && eb->is_constant(eb, k, &vk) &&
        vd + pads < dil * (vk - 1) + 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "spatial dim %d: the padded input (%lld + %lld) "
                       "is smaller than the dilated kernel (%lld)",
                       (int)i, (long long)vd, (long long)pads,
                       (long long)(dil * (vk - 1) + 1));
    /* d + pads - 1 - dil * (k - 1), divided by s, plus 1 */
    ext = eb->operation(eb, PRT_DIM_PROD, eb->constant(eb, dil),
                        eb->operation(eb, PRT_DIM_SUB, k, one));
    num =
        eb->operation(eb, PRT_DIM_SUB,
                      eb->operation(eb, PRT_DIM_SUM, d, eb->constant(eb, pads - 1)), ext);
    q = eb->operation(eb, ceil_mode ? PRT_DIM_CEIL_DIV : PRT_DIM_FLOOR_DIV, num,
                      eb->constant(eb, s));
    if (ceil_mode) {
        /* q + 1 windows, less the last when it starts at or past d + pb:
         * q + LESS(q * s, d + pb). */
        const prt_expr *start = eb->operation(eb, PRT_DIM_PROD, q, eb->constant(eb, s));
        const prt_expr *lim = eb->operation(eb, PRT_DIM_SUM, d, eb->constant(eb, pb));
        *out = eb->operation(eb, PRT_DIM_SUM, q,
                             eb->operation(eb, PRT_DIM_LESS, start, lim));
    } else {
        *out = eb->operation(eb, PRT_DIM_SUM, q, one);
    }
    return PRT_OK;
}

prt_status op_window_geom(const op_object *o, const op_window *w, int32_t ns,
                          const int64_t *in, const int64_t *k, int32_t ceil_mode,
                          op_win_geom *g)
{
    memset(g, 0, sizeof *g);
    g->ns = ns;
    g->ivol = g->kvol = g->ovol = 1;
    for (int32_t i = 0; i < ns; i++) {
        int64_t D = in[i], K = k[i], ek, s, span;
        g->in[i] = D;
        g->k[i] = K;
        g->s[i] = s = op_window_str(w, i);
        g->d[i] = op_window_dil(w, i);
        if (K < 1)
            return op_fail(o, PRT_ERR_SHAPE, "the kernel's spatial dim %d is %lld",
                           (int)i, (long long)K);
        ek = g->d[i] * (K - 1) + 1;
        if (win_same(w)) {
            int64_t total;
            g->out[i] = (D + s - 1) / s;
            total = (g->out[i] - 1) * s + ek - D;
            if (total < 0)
                total = 0;
            g->pb[i] = w->auto_pad == OP_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
        } else {
            g->pb[i] = op_window_pad_begin(w, i, ns);
            g->pe[i] = op_window_pad_end(w, i, ns);
            span = D + g->pb[i] + g->pe[i] - ek;
            if (span < 0)
                return op_fail(o, PRT_ERR_SHAPE,
                               "spatial dim %d: the padded input (%lld + %lld "
                               "+ %lld) is smaller than the dilated kernel "
                               "(%lld)",
                               (int)i, (long long)D, (long long)g->pb[i],
                               (long long)g->pe[i], (long long)ek);
            if (ceil_mode) {
                g->out[i] = (span + s - 1) / s + 1;
                if ((g->out[i] - 1) * s >= D + g->pb[i])
                    g->out[i]--;
            } else {
                g->out[i] = span / s + 1;
            }
        }
        g->ivol *= D;
        g->kvol *= K;
        g->ovol *= g->out[i];
    }
    return PRT_OK;
}

/* Row-major strides of the input's spatial dims. */
static void win_strides(const op_win_geom *g, int64_t *istr)
{
    int64_t s = 1;
    for (int32_t i = g->ns - 1; i >= 0; i--) {
        istr[i] = s;
        s *= g->in[i];
    }
}

/* Steps idx, a position in dims[0..n) row-major, to the next one (back to
 * all zeros after the last). */
static void win_next(int64_t *idx, const int64_t *dims, int32_t n)
{
    for (int32_t i = n - 1; i >= 0; i--) {
        if (++idx[i] < dims[i])
            return;
        idx[i] = 0;
    }
}

/* The walk of im2col and col2im: for each channel and kernel position, the
 * rows of windows along the last dim. im2col reads xs and writes cd;
 * col2im reads cs and adds into xd (the other two are NULL). */
static void win_walk(const op_win_geom *g, int64_t channels, const float *xs, float *xd,
                     const float *cs, float *cd)
{
    int32_t ns = g->ns, last = ns - 1;
    int64_t istr[OP_SP_MAX], olast = g->out[last], orows;
    int64_t D = g->in[last], st = g->s[last];
    if (g->ovol == 0)
        return; /* no windows */
    orows = g->ovol / olast;
    win_strides(g, istr);
    for (int64_t c = 0; c < channels; c++) {
        int64_t xoff = c * g->ivol, kidx[OP_SP_MAX] = {0};
        for (int64_t kp = 0; kp < g->kvol; kp++) {
            int64_t coff = (c * g->kvol + kp) * g->ovol, oidx[OP_SP_MAX] = {0};
            int64_t koff = kidx[last] * g->d[last] - g->pb[last];
            /* The columns j whose input position j * st + koff is in [0, D). */
            int64_t j0 = koff >= 0 ? 0 : (-koff + st - 1) / st;
            int64_t j1 = D - koff <= 0 ? 0 : (D - koff + st - 1) / st;
            if (j1 > olast)
                j1 = olast;
            if (j0 > j1)
                j0 = j1;
            for (int64_t r = 0; r < orows; r++, coff += olast) {
                int64_t p0 = xoff + koff;
                int inside = 1;
                for (int32_t i = 0; i < last; i++) {
                    int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
                    if (p < 0 || p >= g->in[i])
                        inside = 0;
                    p0 += p * istr[i];
                }
                if (xd) {
                    for (int64_t j = j0; inside && j < j1; j++)
                        xd[p0 + j * st] += cs[coff + j];
                } else if (!inside) {
                    memset(cd + coff, 0, sizeof(float) * (size_t)olast);
                } else {
                    for (int64_t j = 0; j < j0; j++)
                        cd[coff + j] = 0.0f;
                    for (int64_t j = j0; j < j1; j++)
                        cd[coff + j] = xs[p0 + j * st];
                    for (int64_t j = j1; j < olast; j++)
                        cd[coff + j] = 0.0f;
                }
                win_next(oidx, g->out, last);
            }
            win_next(kidx, g->k, ns);
        }
    }
}

/* im2col where every window lies inside the input along the last dim (no
 * padding reached there: a ViT's patches, 16 x 16 at stride 16): for each
 * channel, kernel position of the other dims and output row, the input
 * row's stretch is read once for all the last dim's kernel positions, which
 * win_walk takes one at a time, each time with its bounds; here the walk's
 * cost is paid once a row of windows, not once a kernel position. */
static void win_im2col_rows(const op_win_geom *g, int64_t channels, const float *x,
                            float *col, int64_t K, int64_t k0)
{
    const int32_t last = g->ns - 1;
    const int64_t olast = g->out[last], orows = g->ovol / olast, kl = g->k[last];
    const int64_t st = g->s[last], dl = g->d[last], krows = g->kvol / kl;
    int64_t istr[OP_SP_MAX];
    win_strides(g, istr);
    for (int64_t c = 0; c < channels; c++) {
        int64_t kidx[OP_SP_MAX] = {0};
        for (int64_t kr = 0; kr < krows; kr++) {
            int64_t oidx[OP_SP_MAX] = {0};
            const int64_t k = k0 + c * g->kvol + kr * kl; /* col's row */
            float *cd = col + (c * g->kvol + kr * kl) * g->ovol;
            for (int64_t r = 0; r < orows; r++, cd += olast) {
                int64_t off = c * g->ivol;
                int inside = 1;
                for (int32_t i = 0; i < last; i++) {
                    int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
                    if (p < 0 || p >= g->in[i])
                        inside = 0;
                    off += p * istr[i];
                }
                if (K > 0) {
                    /* Panels: column p of row k at (p / 16) K 16 + k 16 +
                     * p % 16. */
                    const float *xs = x + off;
                    for (int64_t j = 0; j < olast; j++) {
                        const int64_t p = r * olast + j;
                        float *d = col + (p >> 4) * K * 16 + k * 16 + (p & 15);
                        for (int64_t kw = 0; kw < kl; kw++)
                            d[kw * 16] = inside ? xs[j * st + kw * dl] : 0.0f;
                    }
                } else if (!inside) {
                    for (int64_t kw = 0; kw < kl; kw++)
                        memset(cd + kw * g->ovol, 0, sizeof(float) * (size_t)olast);
                } else {
                    /* Along the input row (each window's kl elements in
                     * turn), one element to each of kl rows of col. */
                    const float *xs = x + off;
                    for (int64_t j = 0; j < olast; j++)
                        for (int64_t kw = 0; kw < kl; kw++)
                            cd[kw * g->ovol + j] = xs[j * st + kw * dl];
                }
                win_next(oidx, g->out, last);
            }
            win_next(kidx, g->k, last);
        }
    }
}

int op_im2col_rows_ok(const op_win_geom *g)
{
    const int32_t last = g->ns - 1;
    /* Every window inside along the last dim: no padding before it, and
     * the last window's last element inside. */
    return g->ovol > 0 && g->pb[last] == 0 &&
           (g->out[last] - 1) * g->s[last] + (g->k[last] - 1) * g->d[last] < g->in[last];
}

void op_im2col(const op_win_geom *g, int64_t channels, const float *x, float *col)
{
    if (op_im2col_rows_ok(g))
        win_im2col_rows(g, channels, x, col, 0, 0);
    else
        win_walk(g, channels, x, NULL, NULL, col);
}

void op_im2col_panels(const op_win_geom *g, int64_t channels, const float *x, int64_t K,
                      int64_t k0, float *bp)
{
    win_im2col_rows(g, channels, x, bp, K, k0);
}

void op_col2im(const op_win_geom *g, int64_t channels, const float *col, float *x)
{
    win_walk(g, channels, NULL, x, col, NULL);
}

/*
 * Conv (namespace "plugrt", version "1"), ONNX Conv (opset 11+ semantics).
 *
 * Inputs X [N, C, D1, ..., Dn], W [M, C/group, k1, ..., kn], optional B [M];
 * n = 1 to 6 spatial dims. Output Y [N, M, O1, ..., On]. float32; float16
 * is converted to float32 in the workspace and rounded once at the end.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   auto_pad     char: NOTSET (default), SAME_UPPER, SAME_LOWER, VALID
 *   dilations    int32[n], default 1s
 *   group        int32, default 1; C and M must be multiples of it
 *   kernel_shape int32[n], optional; must equal W's spatial dims
 *   pads         int32[2n]: begins then ends, default 0s; only with NOTSET
 *                (non-zero pads with another auto_pad are rejected)
 *   strides      int32[n], default 1s
 * Oi = floor((Di + begin_i + end_i - dil_i*(ki-1) - 1) / s_i) + 1 for NOTSET
 * and VALID (pads 0), which needs the padded input at least as large as the
 * dilated kernel; SAME_*: Oi = ceil(Di / s_i) with total padding
 * max(0, (Oi-1)*s_i + dil_i*(ki-1) + 1 - Di), split evenly and the odd one
 * at the end (SAME_UPPER) or the beginning (SAME_LOWER).
 *
 * Computation: per image and group, im2col into the workspace and one GEMM
 * (op_gemm_f32: OpenBLAS or the built-in loops, blas.c);
 * a 1x1 kernel with stride 1 and no padding multiplies X directly.
 */
#include <string.h>

#include "ops/op_common.h"
#ifdef PRT_HAVE_CUDA
#include "ops/ops_cuda.h"
#endif

#define CONV_MAX_SP (PRT_MAX_DIMS - 2)

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };
static const char *const pad_names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

typedef struct conv_op {
    op_object o;
    int32_t auto_pad;
    int32_t group;
    int32_t nb_dil, dil[CONV_MAX_SP]; /* nb_*: 0 when not given */
    int32_t nb_ks, ks[CONV_MAX_SP];
    int32_t nb_pads, pads[2 * CONV_MAX_SP];
    int32_t nb_str, str[CONV_MAX_SP];
} conv_op;

static const conv_op *ccv(const op_object *o)
{
    return (const conv_op *)o;
}

/* An int array field whose values are all >= lo. */
static prt_status conv_array(op_object *o, const op_fields *f, const char *name,
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

static prt_status conv_parse(op_object *o, const op_fields *f)
{
    conv_op *c = (conv_op *)o;
    char ap[32];
    int32_t len, n = -1;
    prt_status st = op_field_str(f, "auto_pad", ap, sizeof ap, &len);
    if (st)
        return st;
    c->auto_pad = -1;
    for (int32_t i = 0; i < 4; i++)
        if (len < 0 || strcmp(ap, pad_names[i]) == 0) {
            c->auto_pad = len < 0 ? PAD_NOTSET : i;
            break;
        }
    if (c->auto_pad < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER "
                       "or VALID",
                       ap);
    st = op_field_i32(f, "group", 1, &c->group);
    if (!st && c->group < 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "group is %d; it must be >= 1",
                     (int)c->group);
    if (!st)
        st = conv_array(o, f, "dilations", c->dil, CONV_MAX_SP, 1, &c->nb_dil);
    if (!st)
        st = conv_array(o, f, "kernel_shape", c->ks, CONV_MAX_SP, 1, &c->nb_ks);
    if (!st)
        st = conv_array(o, f, "pads", c->pads, 2 * CONV_MAX_SP, 0, &c->nb_pads);
    if (!st)
        st = conv_array(o, f, "strides", c->str, CONV_MAX_SP, 1, &c->nb_str);
    if (st)
        return st;
    if (c->nb_pads % 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "pads has %d values; it needs 2 per spatial dim "
                       "(begins, then ends)",
                       (int)c->nb_pads);
    if (c->auto_pad != PAD_NOTSET)
        for (int32_t i = 0; i < c->nb_pads; i++)
            if (c->pads[i])
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "explicit pads cannot be used with auto_pad "
                               "%s",
                               pad_names[c->auto_pad]);
    /* The arrays given must agree on the number of spatial dims. */
    {
        const int32_t lens[4] = {c->nb_dil, c->nb_ks, c->nb_pads / 2, c->nb_str};
        for (int32_t i = 0; i < 4; i++) {
            if (lens[i] == 0)
                continue;
            if (n >= 0 && lens[i] != n)
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "dilations (%d), kernel_shape (%d), pads (%d "
                               "= 2 x %d) and strides (%d) disagree on the "
                               "number of spatial dims",
                               (int)c->nb_dil, (int)c->nb_ks, (int)c->nb_pads,
                               (int)c->nb_pads / 2, (int)c->nb_str);
            n = lens[i];
        }
    }
    return PRT_OK;
}

static int32_t conv_serialize(op_object *o, prt_field *ser)
{
    conv_op *c = (conv_op *)o;
    int32_t n = 0;
    const char *ap = pad_names[c->auto_pad];
    op_ser(&ser[n++], "auto_pad", PRT_FIELD_CHAR, ap, (int64_t)strlen(ap));
    op_ser(&ser[n++], "group", PRT_FIELD_INT32, &c->group, 1);
    if (c->nb_dil)
        op_ser(&ser[n++], "dilations", PRT_FIELD_INT32, c->dil, c->nb_dil);
    if (c->nb_ks)
        op_ser(&ser[n++], "kernel_shape", PRT_FIELD_INT32, c->ks, c->nb_ks);
    if (c->nb_pads)
        op_ser(&ser[n++], "pads", PRT_FIELD_INT32, c->pads, c->nb_pads);
    if (c->nb_str)
        op_ser(&ser[n++], "strides", PRT_FIELD_INT32, c->str, c->nb_str);
    return n;
}

/* Ranks and field lengths against X's rank. */
static prt_status conv_check_ranks(const conv_op *c, int32_t nb_in, int32_t rx,
                                   int32_t rw, int32_t rb)
{
    int32_t ns = rx - 2;
    const op_object *o = &c->o;
    if (rx < 3)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X must have rank 3 or more (N x C x D1 ...), it has "
                       "rank %d",
                       (int)rx);
    if (rw != rx)
        return op_fail(o, PRT_ERR_SHAPE,
                       "W has rank %d but X has rank %d (W is M x C/group x "
                       "k1 ...)",
                       (int)rw, (int)rx);
    if (nb_in == 3 && rb != 1)
        return op_fail(o, PRT_ERR_SHAPE, "B must have rank 1, it has rank %d", (int)rb);
    if ((c->nb_dil && c->nb_dil != ns) || (c->nb_ks && c->nb_ks != ns) ||
        (c->nb_str && c->nb_str != ns) || (c->nb_pads && c->nb_pads != 2 * ns))
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %d spatial dims but dilations has %d values, "
                       "kernel_shape %d, strides %d, pads %d (0: not given; "
                       "pads needs 2 per dim)",
                       (int)ns, (int)c->nb_dil, (int)c->nb_ks, (int)c->nb_str,
                       (int)c->nb_pads);
    return PRT_OK;
}

static int64_t conv_dil(const conv_op *c, int32_t i)
{
    return c->nb_dil ? c->dil[i] : 1;
}
static int64_t conv_str(const conv_op *c, int32_t i)
{
    return c->nb_str ? c->str[i] : 1;
}

static prt_status conv_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    const conv_op *c = ccv(o);
    const prt_dim_exprs *x = &in[0], *w = &in[1];
    int32_t ns;
    int64_t vx, vw, vb;
    prt_status st = conv_check_ranks(c, nb_in, x->nb_dims, w->nb_dims,
                                     nb_in == 3 ? in[2].nb_dims : 1);
    if (st)
        return st;
    ns = x->nb_dims - 2;
    if (eb->is_constant(eb, x->d[1], &vx) && eb->is_constant(eb, w->d[1], &vw) &&
        vx != vw * c->group)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels but W takes %lld per group x %d "
                       "group%s",
                       (long long)vx, (long long)vw, (int)c->group,
                       c->group == 1 ? "" : "s");
    if (eb->is_constant(eb, w->d[0], &vw) && vw % c->group != 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "W has %lld output channels, not a multiple of group "
                       "%d",
                       (long long)vw, (int)c->group);
    if (nb_in == 3 && eb->is_constant(eb, w->d[0], &vw) &&
        eb->is_constant(eb, in[2].d[0], &vb) && vb != vw)
        return op_fail(o, PRT_ERR_SHAPE,
                       "B has %lld values but W has %lld output channels", (long long)vb,
                       (long long)vw);
    out->nb_dims = x->nb_dims;
    out->d[0] = x->d[0];
    out->d[1] = w->d[0];
    for (int32_t i = 0; i < ns; i++) {
        const prt_expr *d = x->d[2 + i], *k = w->d[2 + i], *r;
        int64_t s = conv_str(c, i), dil = conv_dil(c, i), vk, vd;
        if (c->nb_ks && eb->is_constant(eb, k, &vk) && vk != c->ks[i])
            return op_fail(o, PRT_ERR_SHAPE,
                           "kernel_shape[%d] is %d but W's spatial dim %d is "
                           "%lld",
                           (int)i, (int)c->ks[i], (int)i, (long long)vk);
        if (c->auto_pad == PAD_SAME_UPPER || c->auto_pad == PAD_SAME_LOWER) {
            r = eb->operation(eb, PRT_DIM_CEIL_DIV, d, eb->constant(eb, s));
        } else {
            int64_t pads = c->auto_pad == PAD_VALID || !c->nb_pads
                               ? 0
                               : (int64_t)c->pads[i] + c->pads[ns + i];
            /* d + pads - 1 - dil * (k - 1), floor-divided by s, plus 1 */
            const prt_expr *ext =
                eb->operation(eb, PRT_DIM_PROD, eb->constant(eb, dil),
                              eb->operation(eb, PRT_DIM_SUB, k, eb->constant(eb, 1)));
            const prt_expr *num = eb->operation(
                eb, PRT_DIM_SUB,
                eb->operation(eb, PRT_DIM_SUM, d, eb->constant(eb, pads - 1)), ext);
            r = eb->operation(
                eb, PRT_DIM_SUM,
                eb->operation(eb, PRT_DIM_FLOOR_DIV, num, eb->constant(eb, s)),
                eb->constant(eb, 1));
            if (eb->is_constant(eb, d, &vd) && eb->is_constant(eb, k, &vk) &&
                vd + pads < dil * (vk - 1) + 1)
                return op_fail(o, PRT_ERR_SHAPE,
                               "spatial dim %d: the padded input (%lld + %lld) "
                               "is smaller than the dilated kernel (%lld)",
                               (int)i, (long long)vd, (long long)pads,
                               (long long)(dil * (vk - 1) + 1));
        }
        out->d[2 + i] = r;
    }
    return PRT_OK;
}

/* Everything about one concrete convolution. */
typedef struct conv_geom {
    int32_t ns;
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[CONV_MAX_SP], k[CONV_MAX_SP], out[CONV_MAX_SP];
    int64_t s[CONV_MAX_SP], d[CONV_MAX_SP], pb[CONV_MAX_SP];
    int64_t ivol, kvol, ovol;
    int direct; /* 1x1, stride 1, no padding: X is its own im2col */
} conv_geom;

static prt_status conv_geom_make(const conv_op *c, const prt_dims *in, int32_t nb_in,
                                 conv_geom *g)
{
    const op_object *o = &c->o;
    const prt_dims *x = &in[0], *w = &in[1];
    prt_status st = conv_check_ranks(c, nb_in, x->nb_dims, w->nb_dims,
                                     nb_in == 3 ? in[2].nb_dims : 1);
    if (st)
        return st;
    memset(g, 0, sizeof *g);
    g->ns = x->nb_dims - 2;
    g->N = x->d[0];
    g->C = x->d[1];
    g->M = w->d[0];
    g->G = c->group;
    g->Cg = w->d[1];
    if (g->C != g->Cg * g->G)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels but W takes %lld per group x %d "
                       "group%s",
                       (long long)g->C, (long long)g->Cg, (int)c->group,
                       c->group == 1 ? "" : "s");
    if (g->M % g->G)
        return op_fail(o, PRT_ERR_SHAPE,
                       "W has %lld output channels, not a multiple of group "
                       "%d",
                       (long long)g->M, (int)c->group);
    g->Mg = g->M / g->G;
    if (nb_in == 3 && in[2].d[0] != g->M)
        return op_fail(o, PRT_ERR_SHAPE,
                       "B has %lld values but W has %lld output channels",
                       (long long)in[2].d[0], (long long)g->M);
    g->ivol = g->kvol = g->ovol = 1;
    g->direct = 1;
    for (int32_t i = 0; i < g->ns; i++) {
        int64_t D = x->d[2 + i], K = w->d[2 + i], ek, pe;
        g->in[i] = D;
        g->k[i] = K;
        g->s[i] = conv_str(c, i);
        g->d[i] = conv_dil(c, i);
        if (c->nb_ks && K != c->ks[i])
            return op_fail(o, PRT_ERR_SHAPE,
                           "kernel_shape[%d] is %d but W's spatial dim %d is "
                           "%lld",
                           (int)i, (int)c->ks[i], (int)i, (long long)K);
        if (K < 1)
            return op_fail(o, PRT_ERR_SHAPE, "W's spatial dim %d is %lld", (int)i,
                           (long long)K);
        ek = g->d[i] * (K - 1) + 1;
        if (c->auto_pad == PAD_SAME_UPPER || c->auto_pad == PAD_SAME_LOWER) {
            int64_t total;
            g->out[i] = (D + g->s[i] - 1) / g->s[i];
            total = (g->out[i] - 1) * g->s[i] + ek - D;
            if (total < 0)
                total = 0;
            g->pb[i] = c->auto_pad == PAD_SAME_UPPER ? total / 2 : total - total / 2;
            pe = total - g->pb[i];
        } else {
            g->pb[i] = c->auto_pad == PAD_VALID || !c->nb_pads ? 0 : c->pads[i];
            pe = c->auto_pad == PAD_VALID || !c->nb_pads ? 0 : c->pads[g->ns + i];
            if (D + g->pb[i] + pe < ek)
                return op_fail(o, PRT_ERR_SHAPE,
                               "spatial dim %d: the padded input (%lld + %lld "
                               "+ %lld) is smaller than the dilated kernel "
                               "(%lld)",
                               (int)i, (long long)D, (long long)g->pb[i], (long long)pe,
                               (long long)ek);
            g->out[i] = (D + g->pb[i] + pe - ek) / g->s[i] + 1;
        }
        if (K != 1 || g->s[i] != 1 || g->pb[i] != 0 || pe != 0)
            g->direct = 0;
        g->ivol *= D;
        g->kvol *= K;
        g->ovol *= g->out[i];
    }
    return PRT_OK;
}

static prt_status conv_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    conv_geom g;
    prt_status st = conv_geom_make(ccv(o), in, nb_in, &g);
    if (st)
        return st;
    out->nb_dims = g.ns + 2;
    out->d[0] = g.N;
    out->d[1] = g.M;
    for (int32_t i = 0; i < g.ns; i++)
        out->d[2 + i] = g.out[i];
    return PRT_OK;
}

/* Bytes: the im2col matrix (Cg*kvol x ovol floats) unless the kernel is
 * 1x1 with stride 1 and no padding; for float16 also X, W, B and Y as
 * float32. Computed from W and Y dims alone, so it grows with every dim and
 * works on the profile's maxima. */
static int64_t conv_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out)
{
    const conv_op *c = ccv(o);
    const prt_dims *w = &in[1];
    int64_t col = 0, n = 0, ovol = 1, kvol = 1, vol;
    int direct = 1; /* conv_geom_make's `direct`, decided from fields and W */
    if (w->nb_dims < 3 || out->nb_dims != w->nb_dims)
        return 0;
    /* SAME pads nothing for a 1x1 kernel at stride 1; VALID never pads. */
    for (int32_t i = 0; c->auto_pad == PAD_NOTSET && i < c->nb_pads; i++)
        direct &= c->pads[i] == 0;
    for (int32_t i = 2; i < w->nb_dims; i++) {
        if (!base_mul_i64(kvol, w->d[i], &kvol) || !base_mul_i64(ovol, out->d[i], &ovol))
            return -1;
        direct &= w->d[i] == 1 && conv_str(c, i - 2) == 1;
    }
    if (!direct && (!base_mul_i64(w->d[1], kvol, &col) || !base_mul_i64(col, ovol, &col)))
        return -1;
    n = col;
    if (dtype == PRT_FLOAT16) {
        for (int32_t k = 0; k <= nb_in; k++) {
            vol = base_volume(k < nb_in ? &in[k] : out); /* X, W, B, then Y */
            if (vol < 0 || !base_add_i64(n, vol, &n))
                return -1;
        }
    }
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* col[(c * kvol + kpos) * ovol + opos] = x[c][input position], 0 in the
 * padding; x is one group of one image (Cg x ivol). */
static void im2col(const conv_geom *g, const float *x, float *col)
{
    int32_t ns = g->ns, last = ns - 1;
    int64_t istr[CONV_MAX_SP], s = 1, olast = g->out[last];
    for (int32_t i = ns - 1; i >= 0; i--) {
        istr[i] = s;
        s *= g->in[i];
    }
    for (int64_t c = 0; c < g->Cg; c++) {
        const float *xc = x + c * g->ivol;
        int64_t kidx[CONV_MAX_SP] = {0};
        for (int64_t kp = 0; kp < g->kvol; kp++) {
            float *dst = col + (c * g->kvol + kp) * g->ovol;
            int64_t oidx[CONV_MAX_SP] = {0}, orows = g->ovol / olast;
            int64_t koff = kidx[last] * g->d[last] - g->pb[last];
            for (int64_t r = 0; r < orows; r++, dst += olast) {
                int64_t base = 0;
                int inside = 1;
                for (int32_t i = 0; i < last; i++) {
                    int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
                    if (p < 0 || p >= g->in[i])
                        inside = 0;
                    base += p * istr[i];
                }
                if (!inside) {
                    memset(dst, 0, sizeof(float) * (size_t)olast);
                } else {
                    const float *xr = xc + base;
                    int64_t D = g->in[last], st = g->s[last];
                    for (int64_t j = 0; j < olast; j++) {
                        int64_t p = j * st + koff;
                        dst[j] = p >= 0 && p < D ? xr[p] : 0.0f;
                    }
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

static prt_status conv_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out,
                           const void *const *xs, void *y, void *ws, void *stream)
{
    prt_dims dims[3];
    conv_geom g;
    const float *X = xs[0], *W = xs[1], *B = nb_in == 3 ? xs[2] : NULL;
    float *Y = y, *col = ws;
    int64_t kc, ncol;
    prt_status st;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = conv_geom_make(ccv(o), dims, nb_in, &g);
    if (st)
        return st;
    kc = g.Cg * g.kvol;
    ncol = g.direct ? 0 : kc * g.ovol;
    if (dtype == PRT_FLOAT16) {
        float *w = col + ncol;
        int64_t v[3];
        for (int32_t k = 0; k < nb_in; k++) {
            v[k] = base_volume(&dims[k]);
            op_to_f32(xs[k], dtype, v[k], w);
            if (k == 0)
                X = w;
            else if (k == 1)
                W = w;
            else
                B = w;
            w += v[k];
        }
        Y = w;
    }
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gi = 0; gi < g.G; gi++) {
            const float *xg = X + (n * g.C + gi * g.Cg) * g.ivol;
            const float *cm = xg;
            float *yg = Y + (n * g.M + gi * g.Mg) * g.ovol;
            if (!g.direct) {
                im2col(&g, xg, col);
                cm = col;
            }
            op_gemm_f32(g.Mg, g.ovol, kc, W + gi * g.Mg * kc, kc, cm, g.ovol, yg, g.ovol);
            if (B)
                for (int64_t m = 0; m < g.Mg; m++) {
                    float b = B[gi * g.Mg + m];
                    float *row = yg + m * g.ovol;
                    for (int64_t p = 0; p < g.ovol; p++)
                        row[p] += b;
                }
        }
    if (dtype == PRT_FLOAT16)
        op_from_f32(Y, dtype, base_volume(&out->dims), y);
    return PRT_OK;
}

#ifdef PRT_HAVE_CUDA
/* CUDA: a direct convolution, one thread per output element. */
static prt_status conv_run_cuda(const op_object *o, int32_t dtype,
                                const prt_tensor_desc *in, int32_t nb_in,
                                const prt_tensor_desc *out, const void *const *x, void *y,
                                void *ws, void *stream)
{
    prt_dims dims[3];
    conv_geom g;
    opk_conv_args a;
    prt_status st;
    int err;
    (void)out, (void)ws;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = conv_geom_make(ccv(o), dims, nb_in, &g);
    if (st)
        return st;
    if (g.ns > OPK_MAX_SP)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d spatial dims on CUDA (at most %d)",
                       (int)g.ns, OPK_MAX_SP);
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.ns = g.ns;
    a.N = g.N;
    a.C = g.C;
    a.M = g.M;
    a.G = g.G;
    a.Cg = g.Cg;
    a.Mg = g.Mg;
    for (int32_t i = 0; i < g.ns; i++) {
        a.in[i] = g.in[i];
        a.k[i] = g.k[i];
        a.out[i] = g.out[i];
        a.s[i] = g.s[i];
        a.d[i] = g.d[i];
        a.pb[i] = g.pb[i];
    }
    a.ivol = g.ivol;
    a.kvol = g.kvol;
    a.ovol = g.ovol;
    a.x = x[0];
    a.w = x[1];
    a.b = nb_in == 3 ? x[2] : NULL;
    a.y = y;
    err = opk_conv(&a, stream);
    return err ? op_fail(o, PRT_ERR_INTERNAL, "CUDA kernel launch failed (error %d)", err)
               : PRT_OK;
}
#define CONV_CUDA conv_run_cuda
#else
#define CONV_CUDA NULL
#endif

static const op_class conv_class = {
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = OP_DT_FLOAT,
    .size = sizeof(conv_op),
    .alias_input = -1,
    .parse = conv_parse,
    .serialize = conv_serialize,
    .shapes = conv_shapes,
    .infer = conv_infer,
    .workspace = conv_workspace,
    .run = {[PRT_DEVICE_CPU] = conv_run, [PRT_DEVICE_CUDA] = CONV_CUDA},
    .blas = 1,
};

static const prt_field_schema conv_schema[] = {
    {"auto_pad", PRT_FIELD_CHAR, -1,
     "NOTSET (default, use pads), SAME_UPPER, SAME_LOWER or VALID"},
    {"dilations", PRT_FIELD_INT32, -1, "per spatial dim, default 1"},
    {"group", PRT_FIELD_INT32, 1, "number of groups, default 1"},
    {"kernel_shape", PRT_FIELD_INT32, -1,
     "per spatial dim; optional, must equal W's spatial dims"},
    {"pads", PRT_FIELD_INT32, -1,
     "begin of each spatial dim, then end of each; default 0"},
    {"strides", PRT_FIELD_INT32, -1, "per spatial dim, default 1"},
};

const prt_plugin_creator op_conv_creator =
    OP_CREATOR("Conv", conv_class, conv_schema,
               (int32_t)(sizeof conv_schema / sizeof conv_schema[0]));

/*
 * ConvTranspose (namespace "plugrt", version "1"), ONNX ConvTranspose
 * (opsets 1-19; the same attributes throughout).
 *
 * Inputs X [N, C, D1, ..., Dn], W [C, M/group, k1, ..., kn], optional B [M];
 * n = 1 to 6 spatial dims. Output Y [N, M, O1, ..., On]: each input element
 * adds X * W into the window of Y it would be the output of in a Conv with
 * the same attributes (Y[o] += X[i] W[k] for o = i s - pad_begin + k d).
 * float32; float16 is converted to float32 in the workspace and rounded once.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   auto_pad        char: NOTSET (default), SAME_UPPER, SAME_LOWER, VALID
 *   dilations       int32[n], default 1s
 *   group           int32, default 1; C and M must be multiples of it
 *   kernel_shape    int32[n], optional; must equal W's spatial dims
 *   output_padding  int32[n], default 0s: added to the end of each dim
 *   output_shape    int32[n] (or [n + 2], N and C first, which are
 *                   ignored), optional: fixes O and so the padding
 *   pads            int32[2n]: begins then ends, default 0s (NOTSET only)
 *   strides         int32[n], default 1s
 * With ek = d (k - 1) + 1 and full = s (D - 1) + output_padding + ek:
 *  - output_shape given: O = output_shape, total padding full - O;
 *  - SAME_UPPER / SAME_LOWER: O = D s, total padding full - O;
 *  - otherwise O = full - pad_begin - pad_end (VALID: no pads).
 * A total padding is split as ONNX says: SAME_UPPER puts the odd one at the
 * end (pad_begin = total / 2), the others at the beginning. Negative padding
 * (an output larger than the full one) leaves positions that only B
 * reaches.
 *
 * Computation: per image and group, one GEMM (W_g^T X_g, op_gemm_f32_t:
 * OpenBLAS or the built-in loops) into columns, then col2im (window.c, the
 * adjoint of Conv's im2col) adds them into Y, which starts as B.
 */
#include <string.h>

#include "ops/ops_nn.h"

typedef struct ct_op {
    op_object o;
    op_window w;
    int32_t group;
    int32_t nb_opad, opad[OP_SP_MAX];         /* output_padding; 0: absent */
    int32_t nb_oshape, oshape[OP_SP_MAX + 2]; /* output_shape; 0: absent */
} ct_op;

static const ct_op *cct(const op_object *o)
{
    return (const ct_op *)o;
}

static prt_status ct_parse(op_object *o, const op_fields *f)
{
    ct_op *c = (ct_op *)o;
    int32_t n;
    prt_status st = op_window_parse(o, f, &c->w);
    if (!st)
        st = op_field_i32(f, "group", 1, &c->group);
    if (!st && c->group < 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "group is %d; it must be >= 1",
                     (int)c->group);
    if (!st)
        st = op_field_i32_array(f, "output_padding", c->opad, OP_SP_MAX, &n);
    if (st)
        return st;
    c->nb_opad = n < 0 ? 0 : n;
    for (int32_t i = 0; i < c->nb_opad; i++)
        if (c->opad[i] < 0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "output_padding[%d] is %d; it must be >= 0", (int)i,
                           (int)c->opad[i]);
    st = op_field_i32_array(f, "output_shape", c->oshape, OP_SP_MAX + 2, &n);
    if (st)
        return st;
    c->nb_oshape = n < 0 ? 0 : n;
    for (int32_t i = 0; i < c->nb_oshape; i++)
        if (c->oshape[i] < 0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "output_shape[%d] is %d; it must be >= 0", (int)i,
                           (int)c->oshape[i]);
    return PRT_OK;
}

static int32_t ct_serialize(op_object *o, prt_field *ser)
{
    ct_op *c = (ct_op *)o;
    int32_t n = op_window_ser_pad(&c->w, ser);
    op_ser(&ser[n++], "group", PRT_FIELD_INT32, &c->group, 1);
    if (c->nb_opad)
        op_ser(&ser[n++], "output_padding", PRT_FIELD_INT32, c->opad, c->nb_opad);
    if (c->nb_oshape)
        op_ser(&ser[n++], "output_shape", PRT_FIELD_INT32, c->oshape, c->nb_oshape);
    return n + op_window_ser_arrays(&c->w, ser + n);
}

static prt_status ct_check_ranks(const ct_op *c, int32_t nb_in, int32_t rx, int32_t rw,
                                 int32_t rb)
{
    int32_t ns = rx - 2;
    prt_status st =
        op_conv_check_ranks(&c->o, &c->w, nb_in, rx, rw, rb, "C x M/group x k1 ...");
    if (st)
        return st;
    if ((c->nb_opad && c->nb_opad != ns) ||
        (c->nb_oshape && c->nb_oshape != ns && c->nb_oshape != ns + 2))
        return op_fail(&c->o, PRT_ERR_SHAPE,
                       "X has %d spatial dims but output_padding has %d values and "
                       "output_shape %d (0: not given; output_shape may also hold "
                       "N and C first)",
                       (int)ns, (int)c->nb_opad, (int)c->nb_oshape);
    return PRT_OK;
}

/* output_shape's value for spatial dim i, or -1 when it is not given. */
static int64_t ct_oshape(const ct_op *c, int32_t i, int32_t ns)
{
    if (!c->nb_oshape)
        return -1;
    return c->oshape[c->nb_oshape - ns + i];
}

static int64_t ct_opad(const ct_op *c, int32_t i)
{
    return c->nb_opad ? c->opad[i] : 0;
}

static int ct_same(const ct_op *c)
{
    return c->w.auto_pad == OP_PAD_SAME_UPPER || c->w.auto_pad == OP_PAD_SAME_LOWER;
}

/* The output size and padding of spatial dim i (input D, kernel K). */
static void ct_dim(const ct_op *c, int32_t i, int32_t ns, int64_t D, int64_t K,
                   int64_t *out, int64_t *pb, int64_t *pe)
{
    int64_t s = op_window_str(&c->w, i), d = op_window_dil(&c->w, i);
    int64_t full = s * (D - 1) + ct_opad(c, i) + d * (K - 1) + 1, O = ct_oshape(c, i, ns);
    if (O >= 0 || ct_same(c)) {
        int64_t total;
        if (O < 0)
            O = D * s;
        total = full - O;
        /* Floor halves, so that a negative total splits the same way. */
        *pb = c->w.auto_pad == OP_PAD_SAME_UPPER
                  ? (total >= 0 ? total / 2 : -((-total + 1) / 2))
                  : total - (total >= 0 ? total / 2 : -((-total + 1) / 2));
        *pe = total - *pb;
        *out = O;
        return;
    }
    *pb = op_window_pad_begin(&c->w, i, ns);
    *pe = op_window_pad_end(&c->w, i, ns);
    *out = full - *pb - *pe;
}

static prt_status ct_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    const ct_op *c = cct(o);
    const prt_dim_exprs *x = &in[0], *w = &in[1];
    int32_t ns;
    int64_t vx, vw, vb;
    prt_status st =
        ct_check_ranks(c, nb_in, x->nb_dims, w->nb_dims, nb_in == 3 ? in[2].nb_dims : 1);
    if (st)
        return st;
    ns = x->nb_dims - 2;
    if (eb->is_constant(eb, x->d[1], &vx) && vx % c->group != 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels, not a multiple of group %d", (long long)vx,
                       (int)c->group);
    if (eb->is_constant(eb, x->d[1], &vx) && eb->is_constant(eb, w->d[0], &vw) &&
        vx != vw)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels but W has %lld (W is C x "
                       "M/group x k1 ...)",
                       (long long)vx, (long long)vw);
    out->nb_dims = x->nb_dims;
    out->d[0] = x->d[0];
    out->d[1] = eb->operation(eb, PRT_DIM_PROD, w->d[1], eb->constant(eb, c->group));
    if (nb_in == 3 && eb->is_constant(eb, out->d[1], &vw) &&
        eb->is_constant(eb, in[2].d[0], &vb) && vb != vw)
        return op_fail(o, PRT_ERR_SHAPE,
                       "B has %lld values but the output has %lld channels",
                       (long long)vb, (long long)vw);
    for (int32_t i = 0; i < ns; i++) {
        const prt_expr *k = w->d[2 + i], *d = x->d[2 + i], *one = eb->constant(eb, 1);
        int64_t s = op_window_str(&c->w, i), dil = op_window_dil(&c->w, i), vk;
        if (eb->is_constant(eb, k, &vk) && (st = op_window_check_kernel(o, &c->w, i, vk)))
            return st;
        if (ct_oshape(c, i, ns) >= 0) {
            out->d[2 + i] = eb->constant(eb, ct_oshape(c, i, ns));
        } else if (ct_same(c)) {
            out->d[2 + i] = eb->operation(eb, PRT_DIM_PROD, d, eb->constant(eb, s));
        } else {
            /* s (d - 1) + dil (k - 1) + 1 + output_padding - pads */
            int64_t pads =
                op_window_pad_begin(&c->w, i, ns) + op_window_pad_end(&c->w, i, ns);
            const prt_expr *a = eb->operation(eb, PRT_DIM_PROD, eb->constant(eb, s),
                                              eb->operation(eb, PRT_DIM_SUB, d, one));
            const prt_expr *b = eb->operation(eb, PRT_DIM_PROD, eb->constant(eb, dil),
                                              eb->operation(eb, PRT_DIM_SUB, k, one));
            out->d[2 + i] =
                eb->operation(eb, PRT_DIM_SUM, eb->operation(eb, PRT_DIM_SUM, a, b),
                              eb->constant(eb, 1 + ct_opad(c, i) - pads));
        }
    }
    return PRT_OK;
}

/* One concrete transposed convolution; col2im's window: in = Y's spatial
 * dims, out = X's. */
typedef op_conv_geom ct_geom;

static prt_status ct_geom_make(const ct_op *c, const prt_dims *in, int32_t nb_in,
                               ct_geom *g)
{
    const op_object *o = &c->o;
    const prt_dims *x = &in[0], *w = &in[1];
    int32_t ns = x->nb_dims - 2;
    prt_status st =
        ct_check_ranks(c, nb_in, x->nb_dims, w->nb_dims, nb_in == 3 ? in[2].nb_dims : 1);
    if (st)
        return st;
    memset(g, 0, sizeof *g);
    g->N = x->d[0];
    g->C = x->d[1];
    g->G = c->group;
    g->Mg = w->d[1];
    g->M = g->Mg * g->G;
    if (g->C % g->G)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels, not a multiple of group %d", (long long)g->C,
                       (int)c->group);
    if (w->d[0] != g->C)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels but W has %lld (W is C x M/group x k1 ...)",
                       (long long)g->C, (long long)w->d[0]);
    g->Cg = g->C / g->G;
    if (nb_in == 3 && in[2].d[0] != g->M)
        return op_fail(o, PRT_ERR_SHAPE,
                       "B has %lld values but the output has %lld channels",
                       (long long)in[2].d[0], (long long)g->M);
    g->w.ns = ns;
    g->w.ivol = g->w.kvol = g->w.ovol = 1;
    for (int32_t i = 0; i < ns; i++) {
        int64_t D = x->d[2 + i], K = w->d[2 + i];
        if ((st = op_window_check_kernel(o, &c->w, i, K)) != PRT_OK)
            return st;
        if (K < 1)
            return op_fail(o, PRT_ERR_SHAPE, "W's spatial dim %d is %lld", (int)i,
                           (long long)K);
        ct_dim(c, i, ns, D, K, &g->w.in[i], &g->w.pb[i], &g->w.pe[i]);
        if (g->w.in[i] < 0)
            return op_fail(o, PRT_ERR_SHAPE,
                           "spatial dim %d: the output size is %lld (the pads exceed "
                           "the full output)",
                           (int)i, (long long)g->w.in[i]);
        g->w.out[i] = D;
        g->w.k[i] = K;
        g->w.s[i] = op_window_str(&c->w, i);
        g->w.d[i] = op_window_dil(&c->w, i);
        g->w.ivol *= g->w.in[i];
        g->w.kvol *= K;
        g->w.ovol *= D;
    }
    return PRT_OK;
}

prt_status ct_geometry(const op_object *o, const prt_dims *in, int32_t nb_in,
                       op_conv_geom *g)
{
    return ct_geom_make(cct(o), in, nb_in, g);
}

static prt_status ct_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    ct_geom g;
    prt_status st = ct_geom_make(cct(o), in, nb_in, &g);
    if (st)
        return st;
    op_conv_out_dims(&g, g.w.in, out);
    return PRT_OK;
}

/* Bytes: the columns (Mg * kvol x X's spatial volume floats), and for
 * float16 X, W, B and Y as float32. From W's and X's dims alone, so it grows
 * with every dim. */
static int64_t ct_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                            int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    const prt_dims *x = &in[0], *w = &in[1];
    int64_t n = w->nb_dims >= 2 ? w->d[1] : 0;
    (void)o;
    if (w->nb_dims != x->nb_dims || x->nb_dims < 3)
        return 0;
    for (int32_t i = 2; i < w->nb_dims; i++)
        if (!base_mul_i64(n, w->d[i], &n) || !base_mul_i64(n, x->d[i], &n))
            return -1;
    if (!op_conv_f16_floats(dtype, in, nb_in, out, &n))
        return -1;
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

static prt_status ct_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    prt_dims dims[3];
    ct_geom g;
    const float *X = xs[0], *W = xs[1], *B = nb_in == 3 ? xs[2] : NULL;
    float *Y = y, *col = ws;
    int64_t xvol, yvol, rows;
    prt_status st;
    (void)stream;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = ct_geom_make(cct(o), dims, nb_in, &g);
    if (st)
        return st;
    xvol = g.w.ovol; /* X's spatial volume: col2im's windows */
    yvol = g.w.ivol;
    rows = g.Mg * g.w.kvol;
    if (dtype == PRT_FLOAT16)
        Y = op_conv_to_f32(xs, dtype, dims, nb_in, col + rows * xvol, &X, &W, &B);
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gi = 0; gi < g.G; gi++) {
            const float *xg = X + (n * g.C + gi * g.Cg) * xvol;
            float *yg = Y + (n * g.M + gi * g.Mg) * yvol;
            for (int64_t m = 0; m < g.Mg; m++) {
                float b = B ? B[gi * g.Mg + m] : 0.0f;
                for (int64_t p = 0; p < yvol; p++)
                    yg[m * yvol + p] = b;
            }
            if (xvol == 0 || g.Cg == 0)
                continue;
            op_gemm_f32_t(1, 0, rows, xvol, g.Cg, W + gi * g.Cg * rows, rows, xg, xvol,
                          col, xvol);
            op_col2im(&g.w, g.Mg, col, yg);
        }
    if (dtype == PRT_FLOAT16)
        op_from_f32(Y, dtype, base_volume(&out->dims), y);
    return PRT_OK;
}

static const op_class ct_class = {
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = OP_DT_FLOAT,
    .size = sizeof(ct_op),
    .alias_input = -1,
    .parse = ct_parse,
    .serialize = ct_serialize,
    .shapes = ct_shapes,
    .infer = ct_infer,
    .workspace = ct_workspace,
    .run = ct_run,
    .blas = 1,
};

static const prt_field_schema ct_schema[] = {
    {"auto_pad", PRT_FIELD_CHAR, -1,
     "NOTSET (default, use pads), SAME_UPPER, SAME_LOWER or VALID"},
    {"dilations", PRT_FIELD_INT32, -1, "per spatial dim, default 1"},
    {"group", PRT_FIELD_INT32, 1, "number of groups, default 1"},
    {"kernel_shape", PRT_FIELD_INT32, -1,
     "per spatial dim; optional, must equal W's spatial dims"},
    {"output_padding", PRT_FIELD_INT32, -1, "added at the end of each dim, default 0"},
    {"output_shape", PRT_FIELD_INT32, -1, "per spatial dim: the output's; optional"},
    {"pads", PRT_FIELD_INT32, -1,
     "begin of each spatial dim, then end of each; default 0"},
    {"strides", PRT_FIELD_INT32, -1, "per spatial dim, default 1"},
};

const prt_plugin_creator op_conv_transpose_creator =
    OP_CREATOR("ConvTranspose", ct_class, ct_schema,
               (int32_t)(sizeof ct_schema / sizeof ct_schema[0]));

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
 * The output size and padding follow the window rules of ops_nn.h
 * (window.c, shared with ConvTranspose and the pools): NOTSET and VALID give
 * Oi = floor((Di + begin_i + end_i - dil_i*(ki-1) - 1) / s_i) + 1, which
 * needs the padded input at least as large as the dilated kernel; SAME_*
 * give Oi = ceil(Di / s_i), the odd padding at the end (SAME_UPPER) or the
 * beginning (SAME_LOWER).
 *
 * Computation: per image and group, im2col into the workspace and one GEMM
 * (op_gemm_f32: OpenBLAS or the built-in loops, blas.c);
 * a 1x1 kernel with stride 1 and no padding multiplies X directly.
 */
#include <string.h>

#include "ops/ops_nn.h"
#ifdef PRT_HAVE_CUDA
#include "ops/ops_cuda.h"
#endif

typedef struct conv_op {
    op_object o;
    op_window w; /* auto_pad, dilations, kernel_shape, pads, strides */
    int32_t group;
} conv_op;

static const conv_op *ccv(const op_object *o)
{
    return (const conv_op *)o;
}

static prt_status conv_parse(op_object *o, const op_fields *f)
{
    conv_op *c = (conv_op *)o;
    prt_status st = op_window_parse(o, f, &c->w);
    if (!st)
        st = op_field_i32(f, "group", 1, &c->group);
    if (!st && c->group < 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "group is %d; it must be >= 1",
                     (int)c->group);
    return st;
}

static int32_t conv_serialize(op_object *o, prt_field *ser)
{
    conv_op *c = (conv_op *)o;
    int32_t n = op_window_ser_pad(&c->w, ser);
    op_ser(&ser[n++], "group", PRT_FIELD_INT32, &c->group, 1);
    return n + op_window_ser_arrays(&c->w, ser + n);
}

/* Ranks and field lengths against X's rank. */
static prt_status conv_check_ranks(const conv_op *c, int32_t nb_in, int32_t rx,
                                   int32_t rw, int32_t rb)
{
    return op_conv_check_ranks(&c->o, &c->w, nb_in, rx, rw, rb, "M x C/group x k1 ...");
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
        const prt_expr *k = w->d[2 + i];
        int64_t vk;
        if (eb->is_constant(eb, k, &vk) && (st = op_window_check_kernel(o, &c->w, i, vk)))
            return st;
        st = op_window_out_expr(o, eb, &c->w, i, ns, x->d[2 + i], k, 0, &out->d[2 + i]);
        if (st)
            return st;
    }
    return PRT_OK;
}

/* Everything about one concrete convolution. */
typedef op_conv_geom conv_geom;

static prt_status conv_geom_make(const conv_op *c, const prt_dims *in, int32_t nb_in,
                                 conv_geom *g)
{
    const op_object *o = &c->o;
    const prt_dims *x = &in[0], *w = &in[1];
    prt_status st = conv_check_ranks(c, nb_in, x->nb_dims, w->nb_dims,
                                     nb_in == 3 ? in[2].nb_dims : 1);
    int32_t ns = x->nb_dims - 2;
    if (st)
        return st;
    memset(g, 0, sizeof *g);
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
    for (int32_t i = 0; i < ns && !st; i++)
        st = op_window_check_kernel(o, &c->w, i, w->d[2 + i]);
    if (!st)
        st = op_window_geom(o, &c->w, ns, x->d + 2, w->d + 2, 0, &g->w);
    if (st)
        return st;
    g->direct = 1;
    for (int32_t i = 0; i < ns; i++)
        if (g->w.k[i] != 1 || g->w.s[i] != 1 || g->w.pb[i] != 0 || g->w.pe[i] != 0)
            g->direct = 0;
    return PRT_OK;
}

static prt_status conv_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    conv_geom g;
    prt_status st = conv_geom_make(ccv(o), in, nb_in, &g);
    if (st)
        return st;
    op_conv_out_dims(&g, g.w.out, out);
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
    int64_t col = 0, n = 0, ovol = 1, kvol = 1;
    int direct = 1; /* conv_geom_make's `direct`, decided from fields and W */
    if (w->nb_dims < 3 || out->nb_dims != w->nb_dims)
        return 0;
    /* SAME pads nothing for a 1x1 kernel at stride 1; VALID never pads. */
    for (int32_t i = 0; c->w.auto_pad == OP_PAD_NOTSET && i < c->w.nb_pads; i++)
        direct &= c->w.pads[i] == 0;
    for (int32_t i = 2; i < w->nb_dims; i++) {
        if (!base_mul_i64(kvol, w->d[i], &kvol) || !base_mul_i64(ovol, out->d[i], &ovol))
            return -1;
        direct &= w->d[i] == 1 && op_window_str(&c->w, i - 2) == 1;
    }
    if (!direct && (!base_mul_i64(w->d[1], kvol, &col) || !base_mul_i64(col, ovol, &col)))
        return -1;
    n = col;
    if (!op_conv_f16_floats(dtype, in, nb_in, out, &n))
        return -1;
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

static prt_status conv_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out,
                           const void *const *xs, void *y, void *ws, void *stream)
{
    prt_dims dims[3];
    conv_geom g;
    const float *X = xs[0], *W = xs[1], *B = nb_in == 3 ? xs[2] : NULL;
    float *Y = y, *col = ws;
    int64_t kc, ncol, ivol, ovol;
    prt_status st;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = conv_geom_make(ccv(o), dims, nb_in, &g);
    if (st)
        return st;
    ivol = g.w.ivol;
    ovol = g.w.ovol;
    kc = g.Cg * g.w.kvol;
    ncol = g.direct ? 0 : kc * ovol;
    if (dtype == PRT_FLOAT16)
        Y = op_conv_to_f32(xs, dtype, dims, nb_in, col + ncol, &X, &W, &B);
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gi = 0; gi < g.G; gi++) {
            const float *xg = X + (n * g.C + gi * g.Cg) * ivol;
            const float *cm = xg;
            float *yg = Y + (n * g.M + gi * g.Mg) * ovol;
            if (!g.direct) {
                op_im2col(&g.w, g.Cg, xg, col);
                cm = col;
            }
            op_gemm_f32(g.Mg, ovol, kc, W + gi * g.Mg * kc, kc, cm, ovol, yg, ovol);
            if (B)
                for (int64_t m = 0; m < g.Mg; m++) {
                    float b = B[gi * g.Mg + m];
                    float *row = yg + m * ovol;
                    for (int64_t p = 0; p < ovol; p++)
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
    if (g.w.ns > OPK_MAX_SP)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d spatial dims on CUDA (at most %d)",
                       (int)g.w.ns, OPK_MAX_SP);
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.ns = g.w.ns;
    a.N = g.N;
    a.C = g.C;
    a.M = g.M;
    a.G = g.G;
    a.Cg = g.Cg;
    a.Mg = g.Mg;
    for (int32_t i = 0; i < g.w.ns; i++) {
        a.in[i] = g.w.in[i];
        a.k[i] = g.w.k[i];
        a.out[i] = g.w.out[i];
        a.s[i] = g.w.s[i];
        a.d[i] = g.w.d[i];
        a.pb[i] = g.w.pb[i];
    }
    a.ivol = g.w.ivol;
    a.kvol = g.w.kvol;
    a.ovol = g.w.ovol;
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

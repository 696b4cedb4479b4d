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
 * and two of plugrt's own, which the ONNX importer sets when it fuses a
 * Conv with the activation that alone reads its output:
 *   activation         char: Relu, LeakyRelu, Clip, HardSigmoid,
 *                      HardSwish, Sigmoid or Silu (x * Sigmoid(x), which
 *                      the importer makes of Conv -> Sigmoid -> Mul),
 *                      applied to every output as it is stored (op_act.h);
 *                      absent or "": none
 *   activation_params  float32[]: the activation's alpha (LeakyRelu's,
 *                      HardSigmoid's) and beta (HardSigmoid's), or Clip's
 *                      min and max; absent: the op's defaults
 * and a third, which the importer sets when it folds a residual Add
 * (ResNet's Add(Conv(x), skip)) into the Conv:
 *   residual           int32, 0 (default) or 1: the last input is Z, of
 *                      Y's dims and dtype (and format), and
 *                      Y = act(conv(X, W) + B + Z): the sum rounded as the
 *                      Conv's output, then Z added, then the activation,
 *                      the float operations of Conv, Add and the
 *                      activation one after the other, so the bits are the
 *                      unfused layers'. Inputs X, W, [B,] Z.
 * The output size and padding follow the window rules of ops_nn.h
 * (window.c, shared with ConvTranspose and the pools): NOTSET and VALID give
 * Oi = floor((Di + begin_i + end_i - dil_i*(ki-1) - 1) / s_i) + 1, which
 * needs the padded input at least as large as the dilated kernel; SAME_*
 * give Oi = ceil(Di / s_i), the odd padding at the end (SAME_UPPER) or the
 * beginning (SAME_LOWER).
 *
 * Computation, one of five paths chosen from W's dims and the fields:
 *  - pointwise (a 1x1 kernel, stride 1, no padding): X is its own im2col
 *    matrix, so each image and group is one GEMM (op_gemm_f32_ep: the
 *    register tiles, OpenBLAS or the built-in loops; op_common.h); images
 *    of one pixel (squeeze-and-excitation) are the rows of one product;
 *    images of a few pixels (under CONV_PW_BATCH_HW) the columns of one
 *    product a group, so the register tiles are full, with the same bits;
 *  - depthwise (one input and one output channel per group, 1 or 2
 *    spatial dims): at stride 1 a channel plane at a time (conv_dw.c:
 *    zero-padded rows, register tiles of eight sums), and also at larger
 *    strides for kernels under 5 wide (3x3 at stride 2 from the rows in
 *    place, no copy); wider ones at larger strides
 *    ("depthwise8") eight channels at a time moved channels-last
 *    (conv_dw8.c), which needs no stride phases; measured, bench/RESULTS.md,
 *    "CPU kernels";
 *  - direct (1 or 2 spatial dims, a kernel larger than 1x1, and few taps
 *    per output: small groups, few input channels as a network's first
 *    layer, or few output channels of a few hundred taps as DenseNet's
 *    growth layers): the stride-phase kernel of cpu_kernels.h (conv_direct.c),
 *    which packs each input channel once; an output row of four or more
 *    channels is one product whose taps are read in place;
 *  - im2col: per image and group, im2col into the workspace and one GEMM;
 *    images of fewer pixels than CONV_COLS_BATCH_HW (a ViT's patch
 *    embedding: 8 x 8 outputs of a 16 x 16 kernel at stride 16) up to
 *    CONV_COLS_BATCH columns at a time, their matrices side by side in the
 *    workspace and one product a group over all their columns, so that two
 *    threads have blocks to share and the tiles read packed panels; the
 *    same bits as one image at a time.
 * Bias and activation are applied as each block of output is written (the
 * GEMM paths, block by block while it is in cache). Work is spread with
 * base_parallel_for over images x groups, output channels or blocks of the
 * GEMM whose bounds depend only on the shapes, so results do not depend on
 * the number of threads.
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_nn.h"

typedef struct conv_op {
    op_object o;
    op_window w; /* auto_pad, dilations, kernel_shape, pads, strides */
    int32_t group;
    op_act act;
    float act_params[2]; /* as serialized: alpha, beta */
    int32_t residual;    /* 1: the last input is Z, added before act */
} conv_op;

static const conv_op *ccv(const op_object *o)
{
    return (const conv_op *)o;
}

op_act conv_act(const op_object *o)
{
    return ccv(o)->act;
}

int32_t conv_residual(const op_object *o)
{
    return ccv(o)->residual;
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
    if (!st)
        st = op_act_parse(o, f, &c->act, c->act_params);
    if (!st)
        st = op_field_i32(f, "residual", 0, &c->residual);
    if (!st && c->residual != 0 && c->residual != 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "residual is %d; it must be 0 or 1",
                     (int)c->residual);
    return st;
}

static int32_t conv_serialize(op_object *o, prt_field *ser)
{
    conv_op *c = (conv_op *)o;
    int32_t n = 0;
    if (!c->residual) {
        n = op_window_ser_pad(&c->w, ser);
        op_ser(&ser[n++], "group", PRT_FIELD_INT32, &c->group, 1);
        n += op_window_ser_arrays(&c->w, ser + n);
    } else {
        /* Nine fields would pass OP_MAX_FIELDS: a residual Conv (new, so
         * no older plan holds one) leaves out what its defaults say, an
         * auto_pad of NOTSET and, with another auto_pad, pads (all 0 there:
         * conv_parse refuses others). */
        prt_field arr[4];
        const int32_t na = op_window_ser_arrays(&c->w, arr);
        if (c->w.auto_pad != OP_PAD_NOTSET)
            n = op_window_ser_pad(&c->w, ser);
        op_ser(&ser[n++], "group", PRT_FIELD_INT32, &c->group, 1);
        for (int32_t k = 0; k < na; k++)
            if (c->w.auto_pad == OP_PAD_NOTSET || strcmp(arr[k].name, "pads") != 0)
                ser[n++] = arr[k];
    }
    n += op_act_serialize(&c->act, c->act_params, ser + n);
    /* Only when set, so a Conv without Z serializes as before. */
    if (c->residual)
        op_ser(&ser[n++], "residual", PRT_FIELD_INT32, &c->residual, 1);
    return n;
}

prt_status op_conv_shapes(op_object *o, const op_window *win, int32_t group,
                          const prt_dim_exprs *in, int32_t nb_in, prt_dim_exprs *out,
                          prt_expr_builder *eb)
{
    const prt_dim_exprs *x = &in[0], *w = &in[1];
    int32_t ns;
    int64_t vx, vw, vb;
    prt_status st =
        op_conv_check_ranks(o, win, nb_in, x->nb_dims, w->nb_dims,
                            nb_in == 3 ? in[2].nb_dims : 1, "M x C/group x k1 ...");
    if (st)
        return st;
    ns = x->nb_dims - 2;
    if (eb->is_constant(eb, x->d[1], &vx) && eb->is_constant(eb, w->d[1], &vw) &&
        vx != vw * group)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels but W takes %lld per group x %d "
                       "group%s",
                       (long long)vx, (long long)vw, (int)group, group == 1 ? "" : "s");
    if (eb->is_constant(eb, w->d[0], &vw) && vw % group != 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "W has %lld output channels, not a multiple of group "
                       "%d",
                       (long long)vw, (int)group);
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
        if (eb->is_constant(eb, k, &vk) && (st = op_window_check_kernel(o, win, i, vk)))
            return st;
        st = op_window_out_expr(o, eb, win, i, ns, x->d[2 + i], k, 0, &out->d[2 + i]);
        if (st)
            return st;
    }
    return PRT_OK;
}

/* Z (input `at`) against Y's dims: the rank, and each dim where both are
 * constants (a dynamic one is checked at run time, conv_geom_make). */
static prt_status conv_z_shapes(op_object *o, const prt_dim_exprs *z, int32_t at,
                                const prt_dim_exprs *out, prt_expr_builder *eb)
{
    if (z->nb_dims != out->nb_dims)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the residual input Z (input %d) has rank %d but Y has rank %d",
                       (int)at, (int)z->nb_dims, (int)out->nb_dims);
    for (int32_t i = 0; i < z->nb_dims; i++) {
        int64_t vz, vy;
        if (eb->is_constant(eb, z->d[i], &vz) && eb->is_constant(eb, out->d[i], &vy) &&
            vz != vy)
            return op_fail(o, PRT_ERR_SHAPE,
                           "the residual input Z (input %d) has %lld in dim %d but Y "
                           "has %lld: Z must have Y's dims (no broadcast)",
                           (int)at, (long long)vz, (int)i, (long long)vy);
    }
    return PRT_OK;
}

static prt_status conv_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    const int32_t nb = nb_in - ccv(o)->residual;
    prt_status st;
    if (nb < 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "residual is set but there is no Z after X and W");
    st = op_conv_shapes(o, &ccv(o)->w, ccv(o)->group, in, nb, out, eb);
    if (!st && ccv(o)->residual)
        st = conv_z_shapes(o, &in[nb], nb, out, eb);
    return st;
}

/* Everything about one concrete convolution. */
typedef op_conv_geom conv_geom;

prt_status op_conv_geom_make(const op_object *o, const op_window *win, int32_t group,
                             const prt_dims *in, int32_t nb_in, op_conv_geom *g)
{
    const prt_dims *x = &in[0], *w = &in[1];
    prt_status st =
        op_conv_check_ranks(o, win, nb_in, x->nb_dims, w->nb_dims,
                            nb_in == 3 ? in[2].nb_dims : 1, "M x C/group x k1 ...");
    int32_t ns = x->nb_dims - 2;
    if (st)
        return st;
    memset(g, 0, sizeof *g);
    g->N = x->d[0];
    g->C = x->d[1];
    g->M = w->d[0];
    g->G = group;
    g->Cg = w->d[1];
    if (g->C != g->Cg * g->G)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels but W takes %lld per group x %d "
                       "group%s",
                       (long long)g->C, (long long)g->Cg, (int)group,
                       group == 1 ? "" : "s");
    if (g->M % g->G)
        return op_fail(o, PRT_ERR_SHAPE,
                       "W has %lld output channels, not a multiple of group "
                       "%d",
                       (long long)g->M, (int)group);
    g->Mg = g->M / g->G;
    if (nb_in == 3 && in[2].d[0] != g->M)
        return op_fail(o, PRT_ERR_SHAPE,
                       "B has %lld values but W has %lld output channels",
                       (long long)in[2].d[0], (long long)g->M);
    for (int32_t i = 0; i < ns && !st; i++)
        st = op_window_check_kernel(o, win, i, w->d[2 + i]);
    if (!st)
        st = op_window_geom(o, win, ns, x->d + 2, w->d + 2, 0, &g->w);
    if (st)
        return st;
    g->direct = 1;
    for (int32_t i = 0; i < ns; i++)
        if (g->w.k[i] != 1 || g->w.s[i] != 1 || g->w.pb[i] != 0 || g->w.pe[i] != 0)
            g->direct = 0;
    return PRT_OK;
}

/* nb_in counts Z where the Conv has one; checked against Y's dims. */
static prt_status conv_geom_make(const conv_op *c, const prt_dims *in, int32_t nb_in,
                                 conv_geom *g)
{
    const int32_t nb = nb_in - c->residual;
    prt_dims y;
    prt_status st;
    if (nb < 2)
        return op_fail(&c->o, PRT_ERR_INVALID_ARGUMENT,
                       "residual is set but there is no Z after X and W");
    st = op_conv_geom_make(&c->o, &c->w, c->group, in, nb, g);
    if (st || !c->residual)
        return st;
    op_conv_out_dims(g, g->w.out, &y);
    if (in[nb].nb_dims != y.nb_dims)
        return op_fail(&c->o, PRT_ERR_SHAPE,
                       "the residual input Z (input %d) has rank %d but Y has rank %d",
                       (int)nb, (int)in[nb].nb_dims, (int)y.nb_dims);
    for (int32_t i = 0; i < y.nb_dims; i++)
        if (in[nb].d[i] != y.d[i])
            return op_fail(&c->o, PRT_ERR_SHAPE,
                           "the residual input Z (input %d) has %lld in dim %d but Y "
                           "has %lld: Z must have Y's dims (no broadcast)",
                           (int)nb, (long long)in[nb].d[i], (int)i, (long long)y.d[i]);
    return PRT_OK;
}

prt_status conv_geom_of(const op_object *o, const prt_dims *in, int32_t nb_in,
                        op_conv_geom *g)
{
    return conv_geom_make(ccv(o), in, nb_in, g);
}

prt_status conv_geom_core(const op_object *o, const prt_dims *in, int32_t nb_in,
                          op_conv_geom *g)
{
    return op_conv_geom_make(o, &ccv(o)->w, ccv(o)->group, in, nb_in, g);
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

/* ---- paths and workspace ------------------------------------------------ */

enum { CONV_POINTWISE, CONV_DEPTHWISE, CONV_DIRECT, CONV_IM2COL, CONV_DEPTHWISE8 };

/* Groups the direct path packs at once, at most (one per thread). */
#define CONV_SLOTS 16
/* The direct path takes groups of several channels when each output sums
 * at most this many products; beyond, im2col and a GEMM are faster. At 27
 * (MobileNet's first layer, 3 channels of 3x3) the direct path took 0.38 ms
 * and im2col 0.47 (bench/RESULTS.md, "CPU kernels"). */
#define CONV_DIRECT_TAPS 64
/* And so do groups of at most CONV_DIRECT_NARROW output channels over at
 * most CONV_DIRECT_NARROW_TAPS products an output: the im2col matrix is
 * then Cg * kvol times the output's pixels for a product of a few rows,
 * written and read once from beyond L2. densenet_w8's 3x3 convolutions of
 * 16-36 channels to 8 at 56 x 56 went 0.59 -> 0.20 ms (conv_31) at one
 * thread, 32 -> 4 channels 0.72 -> 0.15; at 64 channels of 3x3 at stride 2
 * and 128 at stride 1 the two were even at one thread (bench/RESULTS.md,
 * "densenet_w8"). */
#define CONV_DIRECT_NARROW 8
#define CONV_DIRECT_NARROW_TAPS 576
/* The kernel size from which a depthwise Conv at a stride above 1 takes
 * eight channels at a time (conv_path). */
#define CONV_DW8_MIN_K 5
/* Output rows of one item of the direct path over one group. */
#define CONV_DIRECT_ROWS 8

/* The im2col path puts the matrices of images of at most half
 * CONV_COLS_BATCH output pixels side by side, CONV_COLS_BATCH columns
 * (whole images, at least two) at a time: a ViT's patch embedding (8 x 8
 * outputs) and a network's last 7 x 7 layers, whose per-image products
 * are one or two blocks (nothing for a second thread) with B's rows a
 * multiple of 256 bytes apart (read in place, they evict each other from
 * L1). Never more than CONV_COLS_BATCH columns, whatever the image size,
 * so the workspace that the builder's largest dims give holds every run's
 * (conv_need). */
#define CONV_COLS_BATCH 256
#define CONV_COLS_BATCH_HW (CONV_COLS_BATCH / 2 + 1)

/* The scratch of a convolution, in floats, from the fields, W's dims and Y's
 * dims alone (so the builder's maxima bound every run's): `col` the im2col
 * matrix (0 for the pointwise path), and for kernels larger than 1x1 of 1
 * or 2 spatial dims `slots`, room for the direct paths' packed groups: one
 * group of the stride-phase kernel (Cg planes), and CONV_SLOTS buffers of
 * the depthwise kernel. Both grow with every dim whichever path W's dims
 * choose, so a W whose dims vary between profiles cannot need more at run
 * time than the build planned. 0 on overflow. */
static int conv_need(const conv_op *c, const prt_dims *w, const prt_dims *out,
                     int64_t *col, int64_t *slots)
{
    int32_t ns = w->nb_dims - 2;
    int64_t ovol = 1, kvol = 1, s[2] = {1, 1}, d[2] = {1, 1}, k[2] = {1, 1};
    int64_t o[2] = {1, 1}, phase, dw, dw8, items, cols, kc, one;
    int pointwise = 1; /* conv_geom_make's `direct`, from fields and W */
    *col = *slots = 0;
    if (ns < 1 || out->nb_dims != w->nb_dims)
        return 1;
    /* SAME pads nothing for a 1x1 kernel at stride 1; VALID never pads. */
    for (int32_t i = 0; c->w.auto_pad == OP_PAD_NOTSET && i < c->w.nb_pads; i++)
        pointwise &= c->w.pads[i] == 0;
    for (int32_t i = 0; i < ns; i++) {
        if (!base_mul_i64(kvol, w->d[2 + i], &kvol) ||
            !base_mul_i64(ovol, out->d[2 + i], &ovol))
            return 0;
        pointwise &= w->d[2 + i] == 1 && op_window_str(&c->w, i) == 1;
    }
    if (pointwise)
        return 1;
    /* im2col: the matrices of images side by side (conv_cols_imgs), at
     * most the batch's pixels and CONV_COLS_BATCH columns: a run of
     * smaller dims than these (the builder's largest) never needs more,
     * even where these images are too large to go side by side. */
    cols = ovol;
    if (out->d[0] >= 2 && !base_mul_i64(out->d[0], ovol, &cols))
        return 0;
    cols = cols < CONV_COLS_BATCH ? cols : CONV_COLS_BATCH;
    if (!base_mul_i64(w->d[1], kvol, &kc) || !base_mul_i64(kc, ovol, &one) ||
        !base_mul_i64(kc, cols > ovol ? cols : ovol, col))
        return 0;
    if (ns > 2 || kvol == 1)
        return 1;
    for (int32_t i = 0; i < ns; i++) {
        int32_t j = 2 - ns + i; /* 1-D: height 1 */
        k[j] = w->d[2 + i];
        o[j] = out->d[2 + i];
        s[j] = op_window_str(&c->w, i);
        d[j] = op_window_dil(&c->w, i);
    }
    /* Slots for the (image, group) or (image, channel) items there can
     * be, up to CONV_SLOTS: the depthwise kernel's all; the stride-phase
     * kernel's one, and more as far as the im2col matrix is larger (its
     * packed groups are about s^2 / kvol of it). */
    items = w->d[0];
    if (!base_mul_i64(items, out->d[0], &items))
        return 0;
    phase = op_dconv_chan(k, o, s, d);
    dw = op_dw_slot(k, o, s, d);
    dw8 = op_dw8_slot(k, o, s, d);
    if (phase < 0 || dw < 0 || dw8 < 0 || !base_mul_i64(phase, w->d[1], &phase) ||
        !base_mul_i64(dw > dw8 ? dw : dw8, items < CONV_SLOTS ? items : CONV_SLOTS, &dw))
        return 0;
    if (phase < one)
        phase = one < phase * CONV_SLOTS ? one : phase * CONV_SLOTS;
    *slots = phase > dw ? phase : dw;
    return 1;
}

static int conv_c8_floats(const conv_op *c, uint32_t chw8, const prt_dims *in,
                          const prt_dims *out, int64_t *n);
static prt_status conv_run_c8(const conv_op *c, const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, const void *const *xs, void *y,
                              void *ws, op_act act, const float *z);
static int conv_c8_kind(const conv_op *c, const prt_dims *w);
enum { CONV_C8_NONE, CONV_C8_POINTWISE, CONV_C8_DEPTHWISE, CONV_C8_DIRECT };

/* Bytes: conv_need's floats, then for float16 X, W, B and Y as float32;
 * for a CHW8 convolution conv_c8_floats's. */
static int64_t conv_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t col, slot, n;
    if (o->chw8 & (1u | (1u << OP_CHW8_OUT))) {
        if (!conv_c8_floats(ccv(o), o->chw8, in, out, &n))
            return -1;
        return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
    }
    if (!conv_need(ccv(o), &in[1], out, &col, &slot) || !base_add_i64(col, slot, &n) ||
        !op_conv_f16_floats(dtype, in, nb_in - ccv(o)->residual, out, &n))
        return -1;
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* One convolution being run: geometry, pointers, the path's plan. */
typedef struct conv_job {
    conv_geom g;
    const float *X, *W, *B;
    float *Y, *scratch;
    op_act act;
    /* GEMM paths: per image and group an Mg x ovol product over kc, in
     * blocks of mb rows and nb columns (nbm x nbn of them). */
    int64_t kc, mb, nb, nbm, nbn;
    const float *colm;    /* im2col path: the matrix of the current image */
    int64_t img, grp;     /* the current image and group (one at a time) */
    int64_t nimg;         /* im2col side by side: images from img at once */
    int panels;           /* ... written as the register tiles' panels */
    int64_t slots, items; /* direct paths, several groups */
    int64_t slot;         /* floats of one slot */
    op_dw dw;             /* depthwise path, stride 1 */
    op_dw8 dw8;           /* depthwise path, larger strides */
    op_dconv dc;          /* direct path; last, as conv_run clears the rest */
} conv_job;

static int64_t conv_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t conv_max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static void conv_blocks(conv_job *j, int64_t M, int64_t N, int64_t K)
{
    op_gemm_split(M, N, K, &j->mb, &j->nb);
    j->nbm = M > 0 ? (M + j->mb - 1) / j->mb : 0;
    j->nbn = N > 0 ? (N + j->nb - 1) / j->nb : 0;
}

/* Pointwise images of fewer pixels than this go side by side
 * (conv_pointwise_batch_range): MobileNet's 7 x 7 layers, 49 columns an
 * image, three strips of 16 and one of a column (bench/RESULTS.md,
 * h/pwbatch). At 14 x 14 the narrow strip is 4 columns of 196, a few per
 * cent of the work at most; not measured there. */
#define CONV_PW_BATCH_HW 64
/* Multiply-adds of one block of the side-by-side product (whole strips of
 * 16 columns, at least one): the size of op_gemm_split's blocks. */
#define CONV_PW_BATCH_MACS (1 << 17)

/* 1 when the pointwise product goes side by side, which needs every block
 * of the per-image one (conv_blocks) to take the register tiles
 * (op_gemm_takes_nn: a block of one row would be a vector's, a large one
 * OpenBLAS's) for the bits to be the same; then sets the column blocks. */
static int conv_pw_batch_plan(conv_job *j, int64_t max_hw)
{
    const conv_geom *g = &j->g;
    const int64_t ovol = g->w.ovol;
    int64_t strips;
    if (g->N < 2 || ovol < 2 || ovol >= max_hw)
        return 0;
    conv_blocks(j, g->Mg, ovol, j->kc);
    if (!op_gemm_takes_nn(j->mb, j->nb, j->kc, ovol) ||
        !op_gemm_takes_nn(g->Mg - (j->nbm - 1) * j->mb, 2, j->kc, ovol))
        return 0;
    strips = CONV_PW_BATCH_MACS / (16 * g->Mg * j->kc);
    j->nb = 16 * (strips > 1 ? strips : 1);
    j->nbn = (g->N * ovol + j->nb - 1) / j->nb;
    return 1;
}

/* Block (bi, bj) of image n, group gi: the product, then bias and
 * activation on each row while it is in cache. B is the right-hand matrix
 * (X itself or the im2col matrix), ovol wide. */
static void conv_gemm_block(const conv_job *j, int64_t n, int64_t gi, const float *B,
                            int64_t bi, int64_t bj)
{
    const conv_geom *g = &j->g;
    const int64_t ovol = g->w.ovol, m0 = bi * j->mb, j0 = bj * j->nb;
    const int64_t mr = conv_min(j->mb, g->Mg - m0), nc = conv_min(j->nb, ovol - j0);
    float *y = j->Y + (n * g->M + gi * g->Mg + m0) * ovol + j0;
    op_epilogue e = {j->B ? j->B + gi * g->Mg + m0 : NULL, NULL, j->act};
    op_gemm_f32_ep(0, 0, mr, nc, j->kc, j->W + (gi * g->Mg + m0) * j->kc, j->kc, B + j0,
                   ovol, y, ovol, &e);
}

/* Pointwise: items are (image, group, row block, column block). */
static void conv_pointwise_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    for (int64_t it = begin; it < end; it++) {
        int64_t bj = it % j->nbn, r = it / j->nbn;
        int64_t bi = r % j->nbm, ng = r / j->nbm;
        int64_t gi = ng % g->G, n = ng / g->G;
        conv_gemm_block(j, n, gi, j->X + (n * g->C + gi * g->Cg) * g->w.ivol, bi, bj);
    }
}

/* Pointwise over a batch of small images: one product a group whose
 * columns are the N images' pixels side by side (op_gemm_nn_images), so
 * its tiles are full; items are (group, column block), every block all of
 * the group's Mg rows. */
static void conv_pointwise_batch_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    const int64_t ovol = g->w.ovol, cols = g->N * ovol;
    for (int64_t it = begin; it < end; it++) {
        const int64_t gi = it / j->nbn, c0 = it % j->nbn * j->nb;
        op_epilogue e = {j->B ? j->B + gi * g->Mg : NULL, NULL, j->act};
        op_gemm_nn_images(g->Mg, j->kc, ovol, c0, conv_min(j->nb, cols - c0),
                          j->W + gi * g->Mg * j->kc, j->kc, j->X + gi * g->Cg * ovol,
                          ovol, g->C * ovol, j->Y + gi * g->Mg * ovol, ovol, g->M * ovol,
                          &e);
    }
}

/* im2col: the matrix of one image and group, channel ranges at a time. */
static void conv_im2col_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    const float *xg = j->X + (j->img * g->C + j->grp * g->Cg) * g->w.ivol;
    op_im2col(&g->w, end - begin, xg + begin * g->w.ivol,
              j->scratch + begin * g->w.kvol * g->w.ovol);
}

/* im2col: the product's blocks for the current image and group. */
static void conv_im2col_gemm_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    for (int64_t it = begin; it < end; it++)
        conv_gemm_block(j, j->img, j->grp, j->colm, it / j->nbn, it % j->nbn);
}

/* im2col side by side: the matrices of images [img, img + nimg) of the
 * current group, (image, channel) items, image k's at k kc ovol. */
static void conv_im2col_imgs_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    for (int64_t it = begin; it < end; it++) {
        const int64_t k = it / g->Cg, ch = it % g->Cg;
        const float *x = j->X + ((j->img + k) * g->C + j->grp * g->Cg + ch) * g->w.ivol;
        if (j->panels)
            op_im2col_panels(&g->w, 1, x, j->kc, ch * g->w.kvol,
                             j->scratch + k * j->kc * g->w.ovol);
        else
            op_im2col(&g->w, 1, x, j->scratch + (k * j->kc + ch * g->w.kvol) * g->w.ovol);
    }
}

/* im2col side by side: column blocks of the images' product, every block
 * all of the group's Mg rows. */
static void conv_im2col_imgs_gemm_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    const int64_t ovol = g->w.ovol, cols = j->nimg * ovol, gi = j->grp;
    for (int64_t it = begin; it < end; it++) {
        const int64_t c0 = it * j->nb, c1 = conv_min(c0 + j->nb, cols);
        op_epilogue e = {j->B ? j->B + gi * g->Mg : NULL, NULL, j->act};
        /* Panels: each image's columns start a strip (ovol a multiple
         * of 16), so a run of them within one image is one product. */
        for (int64_t c = c0, run; j->panels && c < c1; c += run) {
            const int64_t n = c / ovol, p = c % ovol;
            run = conv_min(c1, (n + 1) * ovol) - c;
            op_gemm_nn_panels(
                g->Mg, run, j->kc, j->W + gi * g->Mg * j->kc, j->kc, j->colm + c * j->kc,
                j->Y + ((j->img + n) * g->M + gi * g->Mg) * ovol + p, ovol, &e);
        }
        if (!j->panels)
            op_gemm_nn_images(g->Mg, j->kc, ovol, c0, conv_min(j->nb, cols - c0),
                              j->W + gi * g->Mg * j->kc, j->kc, j->colm, ovol,
                              j->kc * ovol, j->Y + (j->img * g->M + gi * g->Mg) * ovol,
                              ovol, g->M * ovol, &e);
    }
}

/* Output rows [r0, r1) of group gi of image n from its packed input. */
static void conv_direct_outputs(const conv_job *j, int64_t n, int64_t gi, int64_t r0,
                                int64_t r1, const float *packed)
{
    const conv_geom *g = &j->g;
    const int64_t m0 = gi * g->Mg;
    op_dconv_run(&j->dc, packed, j->W + m0 * j->kc, g->Mg, j->B ? j->B + m0 : NULL,
                 &j->act, j->Y + (n * g->M + m0) * g->w.ovol, g->w.ovol, r0, r1);
}

/* Direct, several groups: chunk t of `slots` takes its share of the
 * (image, group) items, packing each into its own slot. */
static void conv_direct_chunks(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    for (int64_t t = begin; t < end; t++) {
        float *slot = j->scratch + t * j->slot;
        for (int64_t it = t * j->items / j->slots; it < (t + 1) * j->items / j->slots;
             it++) {
            int64_t gi = it % g->G, n = it / g->G;
            op_dconv_pack(&j->dc, j->X + (n * g->C + gi * g->Cg) * g->w.ivol, 0, g->Cg,
                          slot);
            conv_direct_outputs(j, n, gi, 0, j->dc.g.OH, slot);
        }
    }
}

/* Depthwise: chunk t of `slots` takes its share of the (image, channel)
 * items. */
static void conv_dw_chunks(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    for (int64_t t = begin; t < end; t++) {
        float *slot = j->scratch + t * j->slot;
        op_dw_zero(&j->dw, slot);
        for (int64_t it = t * j->items / j->slots; it < (t + 1) * j->items / j->slots;
             it++) {
            int64_t c = it % g->C, n = it / g->C;
            op_dw_run(&j->dw, j->X + (n * g->C + c) * g->w.ivol, j->W + c * j->kc,
                      j->B ? j->B[c] : 0.0f, &j->act, j->Y + (n * g->M + c) * g->w.ovol,
                      slot);
        }
    }
}

/* Depthwise, eight channels at a time: chunk t of `slots` takes its share
 * of the (image, block of 8 channels) items. */
static void conv_dw8_chunks(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    const int64_t nblk = (g->C + 7) / 8;
    for (int64_t t = begin; t < end; t++) {
        float *slot = j->scratch + t * j->slot;
        for (int64_t it = t * j->items / j->slots; it < (t + 1) * j->items / j->slots;
             it++) {
            int64_t c0 = it % nblk * 8, n = it / nblk, nc = conv_min(8, g->C - c0);
            op_dw8_run(&j->dw8, j->X + (n * g->C + c0) * g->w.ivol, j->W + c0 * j->kc,
                       j->B ? j->B + c0 : NULL, &j->act, nc,
                       j->Y + (n * g->M + c0) * g->w.ovol, slot);
        }
    }
}

/* Direct, one group: the current image's channels packed, then blocks of
 * output rows. */
static void conv_direct_pack_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    op_dconv_pack(&j->dc, j->X + j->img * j->g.C * j->g.w.ivol, begin, end, j->scratch);
}

static void conv_direct_out_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *j = arg;
    conv_direct_outputs(j, j->img, 0, begin * CONV_DIRECT_ROWS,
                        conv_min(end * CONV_DIRECT_ROWS, j->dc.g.OH), j->scratch);
}

/* The path for this geometry; fills the direct plan when it is direct. */
static int32_t conv_path(conv_job *j)
{
    const conv_geom *g = &j->g;
    if (g->direct)
        return CONV_POINTWISE;
    if (g->w.ns <= 2 && g->w.kvol > 1 && g->Cg == 1 && g->Mg == 1) {
        /* Planes, but for a wide kernel at a stride above 1, where eight
         * channels at a time need no stride phases and win
         * (bench/RESULTS.md, "CPU kernels": 5x5 at stride 2 1.3-1.45x;
         * 3x3 at stride 2 loses 1.04-1.23x). */
        int planes = 1;
        for (int32_t i = 0; i < g->w.ns; i++)
            planes &= g->w.s[i] == 1 || g->w.k[i] < CONV_DW8_MIN_K;
        if (planes && op_dw_plan(g->w.ns, g->w.in, g->w.k, g->w.out, g->w.s, g->w.d,
                                 g->w.pb, &j->dw))
            return CONV_DEPTHWISE;
        if (op_dw8_plan(g->w.ns, g->w.in, g->w.k, g->w.out, g->w.s, g->w.d, g->w.pb,
                        &j->dw8))
            return CONV_DEPTHWISE8;
    }
    if (g->w.ns <= 2 && g->w.kvol > 1 &&
        (g->Cg == 1 || g->Cg * g->w.kvol <= CONV_DIRECT_TAPS ||
         (g->Mg <= CONV_DIRECT_NARROW && g->Cg * g->w.kvol <= CONV_DIRECT_NARROW_TAPS)) &&
        op_dconv_plan(g->w.ns, g->w.in, g->w.k, g->w.out, g->w.s, g->w.d, g->w.pb, g->Cg,
                      &j->dc))
        return CONV_DIRECT;
    return CONV_IM2COL;
}

/* How many images the im2col path (j's) takes side by side (their
 * matrices one product's columns, op_gemm_nn_images), 1 for one at a
 * time: images of fewer than CONV_COLS_BATCH_HW pixels whose per-image
 * blocks take the register tiles (conv_pw_batch_plan, which sets j's
 * column blocks), as many as CONV_COLS_BATCH columns hold (two at least);
 * conv_need's room. */
static int64_t conv_cols_imgs(conv_job *j)
{
    int64_t q;
    if (!conv_pw_batch_plan(j, CONV_COLS_BATCH_HW))
        return 1;
    q = CONV_COLS_BATCH / j->g.w.ovol; /* at least 2: CONV_COLS_BATCH_HW */
    return q < j->g.N ? q : j->g.N;
}

const char *op_conv_path(const prt_plugin *conv, const prt_dims *x, const prt_dims *w)
{
    static const char *const names[] = {"pointwise", "depthwise", "direct", "im2col",
                                        "depthwise8"};
    const op_object *o = (const op_object *)conv;
    prt_dims dims[2];
    conv_job j;
    if (!conv || o->creator != &op_conv_creator)
        return NULL;
    dims[0] = *x;
    dims[1] = *w;
    memset(&j, 0, offsetof(conv_job, dc));
    if (op_conv_geom_make(o, &ccv(o)->w, ccv(o)->group, dims, 2, &j.g))
        return NULL;
    return names[conv_path(&j)];
}

/* The convolution of X, W and B (nb_in of them, no Z) into y with
 * activation act. */
static prt_status conv_run_core(const conv_op *c, int32_t dtype,
                                const prt_tensor_desc *in, int32_t nb_in,
                                const prt_tensor_desc *out, const void *const *xs,
                                void *y, void *ws, op_act act)
{
    const op_object *o = &c->o;
    prt_dims dims[3];
    conv_job j;
    int64_t col, slot, q;
    int32_t path;
    prt_status st;
    if (in[0].format == PRT_FORMAT_CHW8 || out->format == PRT_FORMAT_CHW8)
        return conv_run_c8(c, in, nb_in, out, xs, y, ws, act, NULL);
    memset(&j, 0, offsetof(conv_job, dc));
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = op_conv_geom_make(o, &c->w, c->group, dims, nb_in, &j.g);
    if (st)
        return st;
    if (!conv_need(c, &dims[1], &out->dims, &col, &slot))
        return op_fail(o, PRT_ERR_SHAPE, "the workspace size overflows");
    j.X = xs[0];
    j.W = xs[1];
    j.B = nb_in == 3 ? xs[2] : NULL;
    j.Y = y;
    j.scratch = ws;
    j.act = act;
    j.kc = j.g.Cg * j.g.w.kvol;
    if (dtype == PRT_FLOAT16)
        j.Y = op_conv_to_f32(xs, dtype, dims, nb_in, j.scratch + col + slot, &j.X, &j.W,
                             &j.B);
    path = conv_path(&j);
    if (path == CONV_DEPTHWISE || path == CONV_DEPTHWISE8 ||
        (path == CONV_DIRECT && j.g.G > 1)) {
        /* As many slots as conv_need's room holds (one per item for the
         * depthwise kernel, up to CONV_SLOTS; one at least for the other),
         * each a chunk of the items that one thread takes. */
        const int32_t ns = j.g.w.ns;
        const int64_t k2[2] = {ns == 2 ? j.g.w.k[0] : 1, j.g.w.k[ns - 1]};
        const int64_t o2[2] = {ns == 2 ? j.g.w.out[0] : 1, j.g.w.out[ns - 1]};
        const int64_t s2[2] = {ns == 2 ? j.g.w.s[0] : 1, j.g.w.s[ns - 1]};
        const int64_t d2[2] = {ns == 2 ? j.g.w.d[0] : 1, j.g.w.d[ns - 1]};
        j.slot = path == CONV_DEPTHWISE    ? op_dw_slot(k2, o2, s2, d2)
                 : path == CONV_DEPTHWISE8 ? op_dw8_slot(k2, o2, s2, d2)
                                           : j.g.Cg * j.dc.chan;
        j.items = path == CONV_DEPTHWISE    ? j.g.N * j.g.C
                  : path == CONV_DEPTHWISE8 ? j.g.N * ((j.g.C + 7) / 8)
                                            : j.g.N * j.g.G;
        /* The chunks depend on the shape alone, never on the thread count:
         * one thread takes them in turn. */
        j.slots = conv_min(conv_min(slot / j.slot, CONV_SLOTS), j.items);
        base_parallel_for(j.slots, 1,
                          path == CONV_DEPTHWISE    ? conv_dw_chunks
                          : path == CONV_DEPTHWISE8 ? conv_dw8_chunks
                                                    : conv_direct_chunks,
                          &j);
    } else if (path == CONV_DIRECT) {
        for (j.img = 0; j.img < j.g.N; j.img++) {
            base_parallel_for(j.g.Cg, 1, conv_direct_pack_range, &j);
            base_parallel_for((j.dc.g.OH + CONV_DIRECT_ROWS - 1) / CONV_DIRECT_ROWS, 1,
                              conv_direct_out_range, &j);
        }
    } else if (path == CONV_POINTWISE && j.g.w.ovol == 1 && j.g.G == 1 && j.g.N > 1) {
        /* One pixel per image (a squeeze-and-excitation block's): the
         * images are the rows of one product with W's transpose, so W is
         * read once, not once per image. */
        op_epilogue e = {NULL, j.B, j.act};
        op_gemm_f32_par(0, 1, j.g.N, j.g.M, j.kc, j.X, j.kc, j.W, j.kc, j.Y, j.g.M, &e);
    } else if (path == CONV_POINTWISE && conv_pw_batch_plan(&j, CONV_PW_BATCH_HW)) {
        base_parallel_for(j.g.G * j.nbn, 1, conv_pointwise_batch_range, &j);
    } else if (path == CONV_POINTWISE) {
        conv_blocks(&j, j.g.Mg, j.g.w.ovol, j.kc);
        base_parallel_for(j.g.N * j.g.G * j.nbm * j.nbn, 1, conv_pointwise_range, &j);
    } else if ((q = conv_cols_imgs(&j)) > 1) {
        /* Written straight into panels where each image's columns start a
         * strip and the rows walk applies: no copy of B per block, and
         * op_gemm_nn_panels' tiles (AVX-512 where there is one). */
        j.panels = j.g.w.ovol % 16 == 0 && op_im2col_rows_ok(&j.g.w);
        j.colm = j.scratch;
        for (j.img = 0; j.img < j.g.N; j.img += q) {
            j.nimg = conv_min(q, j.g.N - j.img);
            j.nbn = (j.nimg * j.g.w.ovol + j.nb - 1) / j.nb;
            for (j.grp = 0; j.grp < j.g.G; j.grp++) {
                base_parallel_for(j.nimg * j.g.Cg, 1, conv_im2col_imgs_range, &j);
                base_parallel_for(j.nbn, 1, conv_im2col_imgs_gemm_range, &j);
            }
        }
    } else {
        conv_blocks(&j, j.g.Mg, j.g.w.ovol, j.kc);
        j.colm = j.scratch;
        for (j.img = 0; j.img < j.g.N; j.img++)
            for (j.grp = 0; j.grp < j.g.G; j.grp++) {
                base_parallel_for(j.g.Cg, 1, conv_im2col_range, &j);
                base_parallel_for(j.nbm * j.nbn, 1, conv_im2col_gemm_range, &j);
            }
    }
    if (dtype == PRT_FLOAT16)
        op_from_f32(j.Y, dtype, base_volume(&out->dims), y);
    return PRT_OK;
}

/* The residual pass: y = act(y + z) over n floats, y holding the Conv's
 * rounded output (bias added), in chunks on threads. */
typedef struct conv_res_job {
    float *y;
    const float *z;
    const void *y16;
    int64_t n;
    int32_t dtype;
    op_act act;
} conv_res_job;

/* Floats of one item of the residual pass. */
#define CONV_RES_CHUNK 4096

static void conv_res_range(void *arg, int64_t begin, int64_t end)
{
    const conv_res_job *r = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t i = it * CONV_RES_CHUNK, m = conv_min(CONV_RES_CHUNK, r->n - i);
        /* act(y + z): op_epilogue_apply's column bias is Z's row. */
        op_epilogue e = {NULL, r->z + i, r->act};
        op_epilogue_apply(&e, 1, m, r->y + i, m);
    }
}

/* 16-bit floats: the sum rounded to the dtype (as the Add layer rounds
 * it), then the activation, rounded again. */
static void conv_res16_range(void *arg, int64_t begin, int64_t end)
{
    const conv_res_job *r = arg;
    const size_t es = 2;
    for (int64_t it = begin; it < end; it++) {
        const int64_t i = it * 256, m = conv_min(256, r->n - i);
        float a[256], b[256];
        uint16_t h[256];
        op_to_f32((const char *)r->y16 + i * es, r->dtype, m, a);
        op_to_f32((const char *)r->z + i * es, r->dtype, m, b);
        for (int64_t k = 0; k < m; k++)
            a[k] += b[k];
        op_from_f32(a, r->dtype, m, h);
        op_to_f32(h, r->dtype, m, a);
        op_act_bias(&r->act, 0.0f, a, m);
        op_from_f32(a, r->dtype, m, (char *)r->y16 + i * es);
    }
}

/* Zero the lanes past M of a CHW8 Y's last blocks, which the activation
 * of 0 + 0 may have made non-zero (Clip from above 0, HardSigmoid). */
static void conv_res_c8_lanes(float *y, const prt_dims *d)
{
    const int64_t M = d->d[1], M8 = (M + 7) / 8, vol = d->d[2] * d->d[3];
    if (M % 8 == 0)
        return;
    for (int64_t n = 0; n < d->d[0]; n++) {
        float *b = y + ((n * M8 + M8 - 1) * vol) * 8;
        for (int64_t p = 0; p < vol; p++)
            for (int64_t l = M % 8; l < 8; l++)
                b[p * 8 + l] = 0.0f;
    }
}

static prt_status conv_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *xs, void *const *ys, void *ws, void *stream)
{
    const conv_op *c = ccv(o);
    const int32_t nb = nb_in - c->residual;
    const op_act none = {OP_ACT_NONE, 0.0f, 0.0f};
    conv_res_job r;
    prt_status st;
    (void)stream;
    (void)nb_out;
    if (c->residual) {
        prt_dims dims[4];
        conv_geom g;
        for (int32_t k = 0; k < nb_in && k < 4; k++)
            dims[k] = in[k].dims;
        if (nb_in > 4)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "%d inputs", (int)nb_in);
        st = conv_geom_make(c, dims, nb_in, &g);
        if (st)
            return st;
        if (in[nb].format != out->format)
            return op_fail(o, PRT_ERR_UNSUPPORTED,
                           "the residual input Z is %s but Y is %s: they must share "
                           "one format",
                           in[nb].format == PRT_FORMAT_CHW8 ? "CHW8" : "LINEAR",
                           out->format == PRT_FORMAT_CHW8 ? "CHW8" : "LINEAR");
    }
    /* A float32 CHW8 Y of the direct kind: Z added in the tiles' store
     * (op_cv8's z), the same float operations in the same order as the
     * pass below, without that pass over Y and Z. */
    if (c->residual && dtype == PRT_FLOAT32 && out->format == PRT_FORMAT_CHW8 &&
        in[nb].format == PRT_FORMAT_CHW8 && nb >= 2 &&
        conv_c8_kind(c, &in[1].dims) == CONV_C8_DIRECT && op_cv8_takes_z())
        return conv_run_c8(c, in, nb, out, xs, ys[0], ws, c->act, xs[nb]);
    st = conv_run_core(c, dtype, in, nb, out, xs, ys[0], ws, c->residual ? none : c->act);
    if (st || !c->residual)
        return st;
    /* Z in place over Y, after the product: the float operations of Conv,
     * Add and the activation in that order, so the bits are the unfused
     * layers'. */
    memset(&r, 0, sizeof r);
    r.act = c->act;
    r.dtype = dtype;
    r.z = xs[nb];
    r.n = base_volume(&out->dims);
    if (out->format == PRT_FORMAT_CHW8)
        r.n = r.n / out->dims.d[1] * ((out->dims.d[1] + 7) / 8 * 8);
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        r.y16 = ys[0];
        base_parallel_for((r.n + 255) / 256, 1, conv_res16_range, &r);
        return PRT_OK;
    }
    r.y = ys[0];
    base_parallel_for((r.n + CONV_RES_CHUNK - 1) / CONV_RES_CHUNK, 1, conv_res_range, &r);
    if (out->format == PRT_FORMAT_CHW8)
        conv_res_c8_lanes(r.y, &out->dims);
    return PRT_OK;
}

/* ---- the blocked format CHW8 ------------------------------------------- */

/* Convolutions with a CHW8 kernel, from the fields and W's dims: a
 * pointwise one (1x1 kernel, stride 1, no padding, one group), a depthwise
 * one (2 spatial dims, one input and one output channel per group, at most
 * OP_DW8_MAX_TAPS taps), and any other of one group (at most
 * CONV_C8_DIRECT_TAPS taps an output), which reads X's planes or blocks
 * in place (op_cv8_run). X and Y may each be LINEAR or CHW8: a LINEAR one
 * is moved through the workspace (but a LINEAR X of the direct kind, read
 * as it is). */
/* Every output of the direct kind sums at most this many products (a 3x3
 * kernel over 512 channels); beyond, the planes' paths. */
#define CONV_C8_DIRECT_TAPS 4608

/* The direct kind: one group, or groups of output channels in whole
 * blocks (Mg a multiple of 8; each group its own convolution over its Cg
 * input channels, read in place), at most CONV_C8_DIRECT_TAPS taps an
 * output. Narrower groups (ResNeXt's 4 a group) stay on the planes' direct
 * path: as whole blocks with W block-diagonal they ran 2x slower there
 * (one block a tile, twice the products). */
static int conv_c8_direct_ok(const conv_op *c, const prt_dims *w)
{
    const int64_t G = c->group;
    return G >= 1 && w->d[0] % G == 0 && (G == 1 || (w->d[0] / G) % 8 == 0) &&
           w->d[1] * w->d[2] * w->d[3] <= CONV_C8_DIRECT_TAPS;
}

/* Floats of W packed for the direct kind: each group's Mg x K in
 * op_cv8_pack's layout (one group's M rounded up to a block). */
static int64_t conv_c8_wfloats(const conv_op *c, const prt_dims *w)
{
    const int64_t K = w->d[1] * w->d[2] * w->d[3];
    return (c->group == 1 ? (w->d[0] + 7) / 8 * 8 : w->d[0]) * K;
}

/* W (dims w) packed for the direct kind into wp (conv_c8_wfloats). */
static void conv_c8_pack(const conv_op *c, const float *W, const prt_dims *w, float *wp)
{
    const int64_t G = c->group, Mg = w->d[0] / G, K = w->d[1] * w->d[2] * w->d[3];
    for (int64_t g = 0; g < G; g++)
        op_cv8_pack(W + g * Mg * K, Mg, K, wp + g * Mg * K);
}

static int conv_c8_kind(const conv_op *c, const prt_dims *w)
{
    int pointwise;
    if (w->nb_dims != 4 || w->d[0] < 1 || w->d[1] < 1)
        return CONV_C8_NONE;
    pointwise = c->group == 1 && w->d[2] == 1 && w->d[3] == 1;
    for (int32_t i = 0; i < 2; i++)
        pointwise &= op_window_str(&c->w, i) == 1;
    for (int32_t i = 0; c->w.auto_pad == OP_PAD_NOTSET && i < c->w.nb_pads; i++)
        pointwise &= c->w.pads[i] == 0;
    if (pointwise)
        return CONV_C8_POINTWISE;
    if (w->d[1] == 1 && w->d[0] == c->group && w->d[2] * w->d[3] <= OP_DW8_MAX_TAPS)
        return CONV_C8_DEPTHWISE;
    if (conv_c8_direct_ok(c, w))
        return CONV_C8_DIRECT;
    return CONV_C8_NONE;
}

/* X (position 0) and Y (the output) may be CHW8 where a CHW8 kernel takes
 * the convolution, each apart from the other; W and B are LINEAR. */
static int conv_chw8_ok(const op_object *o, int32_t pos,
                        const prt_dynamic_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    const conv_op *c = ccv(o);
    int kind;
    (void)nb_out;
    /* Z and Y in one format (the residual pass walks both alike): Y's
     * position asks Z's, so a mismatch turns one of them LINEAR. */
    if (c->residual && pos == nb_in && nb_in >= 3 &&
        io[nb_in - 1].desc.format != io[pos].desc.format)
        return 0;
    if (io[pos].desc.format == PRT_FORMAT_LINEAR)
        return 1;
    if (c->residual && pos == nb_in - 1)
        pos = nb_in; /* Z: CHW8 where Y may be */
    if ((pos != 0 && pos != nb_in) || nb_in < 2 || io[0].desc.dims.nb_dims != 4)
        return 0;
    kind = conv_c8_kind(c, &io[1].desc.dims);
    return kind == CONV_C8_POINTWISE ||
           (kind == CONV_C8_DEPTHWISE && io[0].desc.dims.d[1] == c->group) ||
           kind == CONV_C8_DIRECT;
}

/* Whether the CHW8 depthwise kernel goes through band buffers
 * (op_dw8b_run) rather than reading in place (op_dw8d_run): all but small
 * kernels at strides above 1. */
static int conv_c8_dw_banded(int64_t sh, int64_t sw, int64_t taps)
{
    return (sh == 1 && sw == 1) || taps > 9;
}

static int64_t conv_round8(int64_t n)
{
    return (n + 7) / 8 * 8;
}

/* Floats of workspace a CHW8 convolution needs:
 *  - the direct kind: W packed, and a LINEAR Y's blocks;
 *  - a LINEAR X (and a CHW8 Y): the planes' path (conv_need) and Y's
 *    planes, moved into blocks at the end; or, for a pointwise one, W
 *    packed, its kernel reading X's planes in place (the larger of the
 *    two: which runs depends on the pixels of the run);
 *  - a CHW8 X: a LINEAR Y's blocks, and W packed for the pointwise kernel
 *    or the depthwise kernel's band buffers. */
static int conv_c8_floats(const conv_op *c, uint32_t chw8, const prt_dims *in,
                          const prt_dims *out, int64_t *n)
{
    const prt_dims *w = &in[1];
    int kind = conv_c8_kind(c, w);
    int64_t t, col, slot;
    *n = 0;
    if (kind == CONV_C8_NONE || in[0].nb_dims != 4 || out->nb_dims != 4)
        return 1;
    if (kind == CONV_C8_DIRECT) { /* W packed; a LINEAR Y's blocks */
        *n = conv_c8_wfloats(c, w);
        return (chw8 & (1u << OP_CHW8_OUT)) ||
               (base_mul_i64(out->d[0], conv_round8(out->d[1]), &t) &&
                base_mul_i64(t, out->d[2], &t) && base_mul_i64(t, out->d[3], &t) &&
                base_add_i64(*n, t, n));
    }
    if (!(chw8 & 1u)) {
        /* A pointwise one into a CHW8 Y of more than a pixel an image
         * reads X in place (conv_run_c8): W packed; else (and whatever
         * the dims here: a profile may reach one pixel) the planes'
         * path. */
        if (!conv_need(c, w, out, &col, &slot) || !base_add_i64(col, slot, n) ||
            !base_mul_i64(out->d[0], out->d[1], &t) || !base_mul_i64(t, out->d[2], &t) ||
            !base_mul_i64(t, out->d[3], &t) || !base_add_i64(*n, t, n))
            return 0;
        if (kind == CONV_C8_POINTWISE && (chw8 & (1u << OP_CHW8_OUT))) {
            if (!base_mul_i64(conv_round8(w->d[0]), w->d[1], &t))
                return 0;
            *n = t > *n ? t : *n;
        }
        return 1;
    }
    if (!(chw8 & (1u << OP_CHW8_OUT))) {
        if (!base_mul_i64(out->d[0], conv_round8(out->d[1]), &t) ||
            !base_mul_i64(t, out->d[2], &t) || !base_mul_i64(t, out->d[3], &t) ||
            !base_add_i64(*n, t, n))
            return 0;
    }
    if (kind == CONV_C8_POINTWISE) {
        if (!base_mul_i64(conv_round8(w->d[0]), w->d[1], &t) || !base_add_i64(*n, t, n))
            return 0;
        /* X's and Y's blocks with the batch as pixels, for a run of one
         * pixel an image (conv_c8_pointwise_batch): whatever the dims
         * here, since a profile's spatial dims may reach 1 x 1 below the
         * ones the workspace is sized at (N (C + M) floats, far less than
         * X and Y at any larger size). */
        if (!base_mul_i64(out->d[0], conv_round8(in[0].d[1]) + conv_round8(out->d[1]),
                          &t) ||
            !base_add_i64(*n, t, n))
            return 0;
    } else if (conv_c8_dw_banded(op_window_str(&c->w, 0), op_window_str(&c->w, 1),
                                 w->d[2] * w->d[3])) {
        /* CONV_SLOTS band buffers. */
        const int64_t k[2] = {w->d[2], w->d[3]}, o2[2] = {out->d[2], out->d[3]};
        const int64_t s[2] = {op_window_str(&c->w, 0), op_window_str(&c->w, 1)};
        const int64_t d[2] = {op_window_dil(&c->w, 0), op_window_dil(&c->w, 1)};
        int64_t sl = op_dw8_slot(k, o2, s, d);
        if (sl < 0 || !base_mul_i64(sl, CONV_SLOTS, &t) || !base_add_i64(*n, t, n))
            return 0;
    }
    return 1;
}

/* W packed for the pointwise and direct kernels when X is CHW8, for the
 * pointwise one into a CHW8 Y, and for a direct one of few taps (a first layer, whose Y
 * is CHW8 from a LINEAR X; elsewhere packing in each run costs a pass over W, far below
 * the convolution's) once, when it is a constant of a CPU engine (the builder's timing
 * runs pack it in the workspace). */
typedef struct conv_c8_const {
    op_const head;
    const void *src; /* W's bytes it was packed from */
    int64_t M, K;
    float wp[];
} conv_c8_const;

static prt_status conv_prepare(const op_object *o, const prt_tensor_desc *in,
                               int32_t nb_in, const void *const *data, op_const **out)
{
    const prt_dims *w = &in[1].dims;
    conv_c8_const *k;
    size_t floats;
    const int kind = nb_in >= 2 ? conv_c8_kind(ccv(o), w) : CONV_C8_NONE;
    /* A LINEAR X into a CHW8 Y (o->chw8, op_bind_constants) also reads
     * packed W in the pointwise kernel (conv_run_c8). */
    const int pw_lin = kind == CONV_C8_POINTWISE && (o->chw8 & (1u << OP_CHW8_OUT));
    if (nb_in < 2 || !data[1] || in[1].dtype != PRT_FLOAT32 ||
        !(((kind == CONV_C8_POINTWISE || kind == CONV_C8_DIRECT) &&
           in[0].format == PRT_FORMAT_CHW8) ||
          pw_lin ||
          (kind == CONV_C8_DIRECT && w->d[1] * w->d[2] * w->d[3] <= CONV_DIRECT_TAPS)))
        return PRT_OK;
    floats = kind == CONV_C8_DIRECT
                 ? (size_t)conv_c8_wfloats(ccv(o), w)
                 : (size_t)conv_round8(w->d[0]) * (size_t)(w->d[1] * w->d[2] * w->d[3]);
    k = (conv_c8_const *)op_const_alloc(sizeof *k + floats * sizeof(float));
    if (!k)
        return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "packing W: out of memory");
    k->src = data[1];
    k->M = w->d[0];
    k->K = w->d[1] * w->d[2] * w->d[3];
    if (kind == CONV_C8_DIRECT)
        conv_c8_pack(ccv(o), data[1], w, k->wp);
    else
        op_pw8_pack(data[1], k->M, k->K, k->wp);
    *out = &k->head;
    return PRT_OK;
}

/* One CHW8 convolution being run. */
typedef struct conv_c8_job {
    const float *X8, *xl, *W, *B;
    float *Y8, *yl, *scratch;
    int64_t N, C, M, C8, M8, ivol, ovol;
    op_act act;
    op_pw8 pw;
    /* Pointwise: pixels a chunk, chunks; block pairs an item, groups. */
    int64_t pc, npc, ppi, npg;
    op_dw8 dw;
    int64_t rows, bands; /* depthwise, in place: output rows an item, items a block */
    int64_t slot, slots, items; /* depthwise through band buffers */
    op_cv8 cv;                  /* the direct kind: one group's */
    int64_t groups;
} conv_c8_job;

static void conv_c8_pack_range(void *arg, int64_t begin, int64_t end)
{
    const conv_c8_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        int64_t n = it / j->C8, cb = it % j->C8;
        op_chw8_pack_block(j->xl + n * j->C * j->ivol, j->C, j->ivol, cb,
                           (float *)j->X8 + (n * j->C8 + cb) * j->ivol * 8);
    }
}

static void conv_c8_unpack_range(void *arg, int64_t begin, int64_t end)
{
    const conv_c8_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        int64_t n = it / j->M8, cb = it % j->M8;
        op_chw8_unpack_block(j->Y8 + (n * j->M8 + cb) * j->ovol * 8, j->M, j->ovol, cb,
                             j->yl + n * j->M * j->ovol);
    }
}

/* Pointwise items: (image, chunk of pixels, group of block pairs). */
static void conv_c8_pw_range(void *arg, int64_t begin, int64_t end)
{
    const conv_c8_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        int64_t g = it % j->npg, pcix = it / j->npg % j->npc, n = it / j->npg / j->npc;
        int64_t ob0 = g * j->ppi * 2, ob1 = conv_min(ob0 + j->ppi * 2, j->M8);
        int64_t p0 = pcix * j->pc, p1 = conv_min(p0 + j->pc, j->ovol);
        op_pw8_run(&j->pw,
                   j->pw.x_linear ? j->xl + n * j->C * j->ivol
                                  : j->X8 + n * j->C8 * j->ivol * 8,
                   ob0, ob1, p0, p1, j->Y8 + n * j->M8 * j->ovol * 8);
    }
}

/* Depthwise through band buffers: chunk t of `slots` takes its share of
 * the (image, block pair) items, as conv_dw8_chunks; a pair whose second
 * block lies past C8 is a single block. */
static void conv_c8_dwb_chunks(void *arg, int64_t begin, int64_t end)
{
    const conv_c8_job *j = arg;
    const int64_t pairs = (j->C8 + 1) / 2;
    for (int64_t t = begin; t < end; t++) {
        float *slot = j->scratch + t * j->slot;
        const int64_t i1 = (t + 1) * j->items / j->slots;
        for (int64_t it = t * j->items / j->slots; it < i1; it++) {
            const int64_t cb = it % pairs * 2, n = it / pairs, c0 = cb * 8;
            const float *x = j->X8 + (n * j->C8 + cb) * j->ivol * 8;
            const float *w = j->W + c0 * j->dw.g.kh * j->dw.g.kw;
            float *y = j->Y8 + (n * j->M8 + cb) * j->ovol * 8;
            if (cb + 1 < j->C8)
                op_dw8b_run_pair(&j->dw, x, w, j->B ? j->B + c0 : NULL, &j->act,
                                 conv_min(16, j->C - c0), y, slot);
            else
                op_dw8b_run(&j->dw, x, w, j->B ? j->B + c0 : NULL, &j->act,
                            conv_min(8, j->C - c0), y, slot);
        }
    }
}

/* The direct kind: items are (image, group, band of output rows). */
static void conv_c8_cv_range(void *arg, int64_t begin, int64_t end)
{
    const conv_c8_job *j = arg;
    const int64_t Mg = j->cv.M, K = j->cv.C * j->cv.g.kh * j->cv.g.kw;
    for (int64_t it = begin; it < end; it++) {
        const int64_t band = it % j->bands, gi = it / j->bands % j->groups;
        const int64_t n = it / j->bands / j->groups, oh0 = band * j->rows;
        op_cv8 cv = j->cv;
        cv.c0 = gi * cv.C;
        cv.w += gi * Mg * K;
        cv.bias = cv.bias ? cv.bias + gi * Mg : NULL;
        cv.z = cv.z ? cv.z + (n * j->M8 + gi * Mg / 8) * j->ovol * 8 : NULL;
        op_cv8_run(&cv,
                   cv.blocked ? j->X8 + n * j->C8 * j->ivol * 8
                              : j->xl + n * j->C * j->ivol,
                   oh0, conv_min(oh0 + j->rows, cv.g.OH),
                   j->Y8 + (n * j->M8 + gi * Mg / 8) * j->ovol * 8);
    }
}

/* Depthwise in place: items are (image, block, band of output rows). */
static void conv_c8_dw_range(void *arg, int64_t begin, int64_t end)
{
    const conv_c8_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t band = it % j->bands, cb = it / j->bands % j->C8;
        const int64_t n = it / j->bands / j->C8, c0 = cb * 8, oh0 = band * j->rows;
        op_dw8d_run(&j->dw, j->X8 + (n * j->C8 + cb) * j->ivol * 8,
                    j->W + c0 * j->dw.g.kh * j->dw.g.kw, j->B ? j->B + c0 : NULL, &j->act,
                    conv_min(8, j->C - c0), oh0, conv_min(oh0 + j->rows, j->dw.g.OH),
                    j->Y8 + (n * j->M8 + cb) * j->ovol * 8);
    }
}

/* W (M x K) packed for the CHW8 kernels: the engine's copy (conv_prepare)
 * when it was packed from this W, else packed into the workspace. */
static const float *conv_c8_weights(const op_object *o, const void *w, int64_t M,
                                    int64_t K, float *scratch)
{
    const conv_c8_const *k = (const conv_c8_const *)o->cst;
    if (k && k->src == w && k->M == M && k->K == K)
        return k->wp;
    op_pw8_pack(w, M, K, scratch);
    return scratch;
}

/* Pixels of a pointwise chunk: about 16 KiB of X's blocks (every input
 * channel), a multiple of CONV_C8_PW_TILE: the AVX-512 build's tile of 12
 * pixels, twice the AVX2 build's, so that neither leaves a chunk a tail of
 * narrower tiles (on the Xeon a tail of 6 pixels in the AVX2 tile costs
 * what 12 do). Tiles never change an output's bits, so neither does the
 * choice. */
#define CONV_C8_CHUNK_FLOATS 4096
#define CONV_C8_PW_TILE 12
/* Multiply-adds of one pointwise item, about. */
#define CONV_C8_ITEM_MACS (1 << 17)

/* The pointwise kernel over j's images: chunks of pixels whose blocks fit
 * in L1, split evenly; then as many block pairs an item as make
 * CONV_C8_ITEM_MACS. All from the shape, so the split never depends on the
 * threads. */
static void conv_c8_pointwise(conv_c8_job *j)
{
    const int64_t t = CONV_C8_PW_TILE, pairs = (j->M8 + 1) / 2;
    int64_t nch, macs;
    j->pc = CONV_C8_CHUNK_FLOATS / (8 * j->C8) / t * t;
    if (j->pc < t)
        j->pc = t;
    nch = (j->ovol + j->pc - 1) / j->pc;
    j->pc = nch ? ((j->ovol + nch - 1) / nch + t - 1) / t * t : t;
    j->npc = (j->ovol + j->pc - 1) / j->pc;
    macs = 16 * j->C * j->pc;
    /* An even count, so the AVX-512 build's tiles of two pairs fill it. */
    j->ppi = macs > 0 ? CONV_C8_ITEM_MACS / macs / 2 * 2 : pairs;
    j->ppi = j->ppi < 2 ? 2 : j->ppi;
    j->ppi = j->ppi > pairs ? pairs : j->ppi;
    j->npg = (pairs + j->ppi - 1) / j->ppi;
    base_parallel_for(j->N * j->npc * j->npg, 1, conv_c8_pw_range, j);
}

/* A pointwise convolution of one pixel an image (a squeeze-excite block's
 * layers) with the batch as the pixels of one image: X's N x C8 blocks
 * moved into C8 x N at xt, the product into M8 x N at yt, moved back into
 * j's Y. Image by image the kernel would read all of W for one pixel (a
 * matrix times a vector, bound by W's bandwidth); as one image it runs its
 * register tiles. A tile never changes an output's bits, so neither does
 * this. */
static void conv_c8_pointwise_batch(conv_c8_job *j, float *xt, float *yt)
{
    conv_c8_job b = *j;
    const int64_t N = j->N;
    for (int64_t n = 0; n < N; n++)
        for (int64_t cb = 0; cb < j->C8; cb++)
            memcpy(xt + (cb * N + n) * 8, j->X8 + (n * j->C8 + cb) * 8,
                   8 * sizeof(float));
    b.X8 = xt;
    b.Y8 = yt;
    b.N = 1;
    b.ivol = b.ovol = b.pw.P = N;
    conv_c8_pointwise(&b);
    for (int64_t n = 0; n < N; n++)
        for (int64_t ob = 0; ob < j->M8; ob++)
            memcpy(j->Y8 + (n * j->M8 + ob) * 8, yt + (ob * N + n) * 8,
                   8 * sizeof(float));
}

/* The direct kind: X's planes or blocks read in place into CHW8 blocks (Y,
 * or a LINEAR Y's blocks in the workspace, unpacked at the end), a group
 * at a time, in bands of about CONV_C8_ITEM_MACS multiply-adds. */
static prt_status conv_c8_direct(const conv_op *c, const conv_geom *g, conv_c8_job *j,
                                 const prt_tensor_desc *in, const prt_tensor_desc *out,
                                 const void *const *xs, void *y, const float *z,
                                 float *scratch)
{
    const op_object *o = &c->o;
    const prt_dims *wd = &in[1].dims;
    const int64_t K = g->Cg * g->w.kvol;
    const conv_c8_const *k = (const conv_c8_const *)o->cst;
    if (!conv_c8_direct_ok(c, wd) ||
        !op_win2_make(2, g->w.in, g->w.k, g->w.out, g->w.s, g->w.d, g->w.pb, &j->cv.g))
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "the blocked format's direct convolution takes 2 spatial dims");
    if (k && k->src == xs[1] && k->M == g->M && k->K == K) {
        j->cv.w = k->wp;
    } else {
        conv_c8_pack(c, xs[1], wd, scratch);
        j->cv.w = scratch;
        scratch += conv_c8_wfloats(c, wd);
    }
    j->groups = g->G;
    j->cv.C = g->Cg;
    j->cv.M = g->Mg;
    j->cv.bias = j->B;
    j->cv.act = j->act;
    j->cv.blocked = in[0].format == PRT_FORMAT_CHW8;
    j->cv.z = out->format == PRT_FORMAT_CHW8 ? z : NULL;
    j->xl = xs[0];
    j->X8 = xs[0];
    if (out->format == PRT_FORMAT_CHW8) {
        j->Y8 = y;
    } else {
        j->yl = y;
        j->Y8 = scratch;
    }
    j->rows = CONV_C8_ITEM_MACS /
              conv_max(1, j->cv.g.OW * j->cv.C * g->w.kvol * conv_round8(j->cv.M));
    j->rows = j->rows < 1 ? 1 : j->rows;
    j->bands = (j->cv.g.OH + j->rows - 1) / j->rows;
    base_parallel_for(j->N * j->groups * j->bands, 1, conv_c8_cv_range, j);
    if (out->format != PRT_FORMAT_CHW8)
        base_parallel_for(j->N * j->M8, 1, conv_c8_unpack_range, j);
    return PRT_OK;
}

/* A LINEAR X into a CHW8 Y: the planes' path into the workspace, then Y's
 * planes into blocks (smaller than X's wherever a network narrows). */
static prt_status conv_c8_from_linear(const conv_op *c, const conv_geom *g,
                                      conv_c8_job *j, const prt_tensor_desc *in,
                                      int32_t nb_in, const prt_tensor_desc *out,
                                      const void *const *xs, void *y, float *scratch)
{
    prt_tensor_desc lin = *out;
    float *yl = scratch;
    prt_status st;
    lin.format = PRT_FORMAT_LINEAR;
    st = conv_run_core(c, PRT_FLOAT32, in, nb_in, &lin, xs, yl,
                       yl + base_volume(&out->dims), j->act);
    if (st)
        return st;
    j->xl = yl; /* the planes to move: Y's, M of them */
    j->X8 = y;
    j->C = g->M;
    j->C8 = j->M8;
    j->ivol = j->ovol;
    base_parallel_for(j->N * j->C8, 1, conv_c8_pack_range, j);
    return PRT_OK;
}

/* Pointwise on CHW8 X into j->Y8; one pixel an image takes the batch as
 * its pixels. */
static void conv_c8_pw(const conv_op *c, const conv_geom *g, conv_c8_job *j,
                       const void *const *xs, float *scratch)
{
    j->pw.w = conv_c8_weights(&c->o, xs[1], g->M, g->C, scratch);
    j->pw.K = g->C;
    j->pw.M = g->M;
    j->pw.P = j->ovol;
    j->pw.bias = j->B;
    j->pw.act = j->act;
    if (j->ovol == 1 && j->N > 1) {
        float *xt = scratch + j->M8 * 8 * g->C; /* past W packed */
        conv_c8_pointwise_batch(j, xt, xt + j->N * j->C8 * 8);
    } else {
        conv_c8_pointwise(j);
    }
}

/* Depthwise on CHW8 X into j->Y8. */
static prt_status conv_c8_dw(const conv_op *c, const conv_geom *g, conv_c8_job *j,
                             float *scratch)
{
    if (!op_dw8_plan(2, g->w.in, g->w.k, g->w.out, g->w.s, g->w.d, g->w.pb, &j->dw))
        return op_fail(&c->o, PRT_ERR_UNSUPPORTED,
                       "this depthwise kernel has too many taps");
    if (conv_c8_dw_banded(j->dw.g.sh, j->dw.g.sw, j->dw.g.kh * j->dw.g.kw)) {
        /* Zero-padded band buffers keep every pixel on the fast path,
         * where edges are many (5x5 at stride 1: 4 columns of 14);
         * 3x3 at stride 2, with one edge column a side, reads in place
         * and copies nothing (bench/RESULTS.md, "CPU kernels"). */
        j->slot = op_dw8_slot(g->w.k, g->w.out, g->w.s, g->w.d);
        j->scratch = scratch;
        j->items = j->N * ((j->C8 + 1) / 2);
        j->slots = conv_min(CONV_SLOTS, j->items);
        base_parallel_for(j->slots, 1, conv_c8_dwb_chunks, j);
    } else {
        /* Bands of about CONV_C8_ITEM_MACS / 8 vector multiply-adds. */
        j->rows =
            CONV_C8_ITEM_MACS / 8 / conv_max(1, j->dw.g.OW * j->dw.g.kh * j->dw.g.kw);
        j->rows = j->rows < 1 ? 1 : j->rows;
        j->bands = (j->dw.g.OH + j->rows - 1) / j->rows;
        base_parallel_for(j->N * j->C8 * j->bands, 1, conv_c8_dw_range, j);
    }
    return PRT_OK;
}

/* The blocked format's convolutions: the kind from the weights, then its
 * path; a LINEAR Y is unpacked from blocks in the workspace at the end. */
static prt_status conv_run_c8(const conv_op *c, const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, const void *const *xs, void *y,
                              void *ws, op_act act, const float *z)
{
    const op_object *o = &c->o;
    prt_dims dims[3];
    conv_geom g;
    conv_c8_job j;
    float *scratch = ws;
    int kind;
    prt_status st = PRT_OK;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = op_conv_geom_make(o, &c->w, c->group, dims, nb_in, &g);
    if (st)
        return st;
    kind = conv_c8_kind(c, &dims[1]);
    if (in[0].dtype != PRT_FLOAT32 || g.w.ns != 2 || kind == CONV_C8_NONE ||
        (kind == CONV_C8_DEPTHWISE && g.C != g.G))
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "the blocked format CHW8 takes float32 2-D convolutions of one "
                       "group, and depthwise ones, only");
    memset(&j, 0, sizeof j);
    j.N = g.N;
    j.C = g.C;
    j.M = g.M;
    j.C8 = (g.C + 7) / 8;
    j.M8 = (g.M + 7) / 8;
    j.ivol = g.w.ivol;
    j.ovol = g.w.ovol;
    j.W = xs[1];
    j.B = nb_in == 3 ? xs[2] : NULL;
    j.act = act;
    if (kind == CONV_C8_DIRECT)
        return conv_c8_direct(c, &g, &j, in, out, xs, y, z, scratch);
    if (in[0].format != PRT_FORMAT_CHW8 && kind == CONV_C8_POINTWISE &&
        out->format == PRT_FORMAT_CHW8 && g.w.ovol > 1) {
        /* The pointwise kernel reads X's planes in place
         * (op_pw8.x_linear) into Y's blocks: no pass over X or Y. */
        j.xl = xs[0];
        j.Y8 = y;
        j.pw.x_linear = 1;
        conv_c8_pw(c, &g, &j, xs, scratch);
        return PRT_OK;
    }
    if (in[0].format != PRT_FORMAT_CHW8)
        return conv_c8_from_linear(c, &g, &j, in, nb_in, out, xs, y, scratch);
    j.X8 = xs[0];
    if (out->format == PRT_FORMAT_CHW8) {
        j.Y8 = y;
    } else {
        j.yl = y;
        j.Y8 = scratch;
        scratch += j.N * j.M8 * 8 * j.ovol;
    }
    if (kind == CONV_C8_POINTWISE)
        conv_c8_pw(c, &g, &j, xs, scratch);
    else
        st = conv_c8_dw(c, &g, &j, scratch);
    if (!st && out->format != PRT_FORMAT_CHW8)
        base_parallel_for(j.N * j.M8, 1, conv_c8_unpack_range, &j);
    return st;
}

static const op_class conv_class = {
    .min_inputs = 2,
    .max_inputs = 4,
    .dtypes = OP_DT_FLOAT,
    .size = sizeof(conv_op),
    .alias_input = -1,
    .parse = conv_parse,
    .serialize = conv_serialize,
    .shapes = conv_shapes,
    .infer = conv_infer,
    .workspace = conv_workspace,
    .run = conv_run,
    .blas = 1,
    .chw8_ok = conv_chw8_ok,
    .prepare = conv_prepare,
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
    {"activation", PRT_FIELD_CHAR, -1,
     "fused activation: Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Sigmoid or Silu "
     "(x * Sigmoid(x); plugrt's)"},
    {"activation_params", PRT_FIELD_FLOAT32, -1,
     "the activation's alpha and beta, or Clip's min and max (plugrt's)"},
    {"residual", PRT_FIELD_INT32, 1,
     "1: the last input is Z (Y's dims), Y = act(conv + B + Z) (plugrt's)"},
};

const prt_plugin_creator op_conv_creator =
    OP_CREATOR("Conv", conv_class, conv_schema,
               (int32_t)(sizeof conv_schema / sizeof conv_schema[0]));

/*
 * The CUDA kernels of the network ops (ops.h): Conv (its own kernel, cuBLAS
 * or cuDNN, cudnn_cuda.c, by the layer's tactic), MatMul and Gemm (through
 * cuBLAS, blas_cuda.c), Einsum, Softmax and LogSoftmax, LayerNormalization
 * and GlobalAveragePool, each the CPU kernel's semantics through the
 * launchers of kernels.cu and rows.cu.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/cuda/blas.h"
#include "ops/cuda/cudnn.h"
#include "ops/cuda/fuse.h"
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/op_device.h"
#include "ops/ops_nn.h"

/* ---- Conv: tactics ---------------------------------------------------------
 *
 * Conv's implementations on CUDA, chosen per layer by the builder's tuner
 * (op_device_tuning) and stored in the engine as the layer's tactic:
 *   0  cuBLAS for a pointwise float32 or float16 convolution, else the
 *      direct kernel: the first listed (what the builder takes without
 *      --autotune), except for a convolution neither pointwise nor
 *      grouped, whose first is cuDNN's own first choice where cuDNN is
 *      (PRT_CUDA_CONV_DNN_FIRST=0 turns that off; conv_tactics);
 *   1  the direct kernel (listed when 0 is cuBLAS);
 *   2  plugrt's implicit GEMM (2-D, not depthwise: opk_conv_gemm), listed
 *      only when PRT_CUDA_CONV_IMPL=gemm asks for it (conv_tactics);
 *   cuDNN: bits 0-7 CONV_DNN + cuDNN's algorithm, bits 8-30 the
 *      workspace it needs at the profile's largest shapes in 64 KiB units,
 *      so the layer's workspace is a function of the tactic alone (a
 *      machine without cuDNN still computes the claim the engine states).
 * A cuDNN tactic that cannot run (cuDNN missing where the engine is
 * loaded, or refusing the shapes of a run) runs the direct kernel, with a
 * warning once per object. */
#define CONV_OWN 1
#define CONV_GEMM 2
#define CONV_DNN 16
#define CONV_WS_UNIT ((int64_t)64 << 10)
#define CONV_WS_UNITS_MAX ((int64_t)1 << 23)

/* Per object (op_device_table.attach with resources 3): the cuBLAS handle
 * of the pointwise path, the cuDNN handle of a cuDNN tactic. */
typedef struct conv_res {
    opk_blas *blas;
    opk_dnn *dnn;
    int warned; /* the fallback from cuDNN was logged */
    /* Made at a first run, not by a context: the builder's timing runs,
     * where a cuDNN tactic that cannot run must fail (and be skipped), not
     * be timed as the direct kernel under cuDNN's name. */
    int timing;
} conv_res;

static int conv_is_dnn(int32_t tactic)
{
    return tactic > 0 && (tactic & 0xff) >= CONV_DNN &&
           (tactic & 0xff) < CONV_DNN + OPK_DNN_ALGOS;
}

/* The math a cuDNN convolution may use: strict float32 unless the engine
 * was built with --tf32 (PRT_PRECISION_TF32 in o->precision, set through
 * op_set_precision by the builder before it lists, sizes and times the
 * tactics, and by the engine for its runs). */
static int32_t conv_dnn_math(const op_object *o)
{
    return o->precision & PRT_PRECISION_TF32 ? OPK_DNN_TF32 : OPK_DNN_STRICT;
}

/* The convolutions plugrt's implicit GEMM takes: 2-D, float32 or
 * float16, with enough rows and reduction per group to fill its tiles
 * (depthwise ones stay with the direct kernel). */
static int conv_gemm_fits(const op_conv_geom *g, int32_t dtype)
{
    return g->w.ns == 2 && (dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16) && g->Mg >= 8 &&
           g->Cg * g->w.kvol >= 8;
}

/* The pointwise float32 and float16 case cuBLAS serves: 1x1, stride 1, no padding,
 * one group. */
static int conv_pointwise(const op_conv_geom *g, int32_t dtype)
{
    return g->direct && g->G == 1 && (dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16) &&
           g->C > 0;
}

/* g as cuDNN's descriptors take it; 0 when cuDNN's API cannot express it
 * (asymmetric pads, dtype, more than 3 spatial dims). */
static int conv_dnn_of(const op_object *o, const op_conv_geom *g, int32_t dtype,
                       opk_dnn_conv *c)
{
    memset(c, 0, sizeof *c);
    if ((dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16) || g->w.ns < 1 || g->w.ns > 3 ||
        g->N < 1 || g->C < 1 || g->M < 1 || g->w.ovol < 1)
        return 0;
    c->dtype = dtype;
    c->ns = g->w.ns;
    c->math = conv_dnn_math(o);
    c->N = g->N;
    c->C = g->C;
    c->M = g->M;
    c->G = g->G;
    for (int32_t i = 0; i < g->w.ns; i++) {
        if (g->w.pb[i] != g->w.pe[i])
            return 0;
        c->in[i] = g->w.in[i];
        c->k[i] = g->w.k[i];
        c->out[i] = g->w.out[i];
        c->s[i] = g->w.s[i];
        c->d[i] = g->w.d[i];
        c->p[i] = g->w.pb[i];
        if (c->in[i] > INT32_MAX || c->k[i] > INT32_MAX || c->s[i] > INT32_MAX ||
            c->d[i] > INT32_MAX || c->p[i] > INT32_MAX)
            return 0;
    }
    return 1;
}

static const char *conv_tactic_name(int32_t tactic)
{
    static const char *const dnn_names[OPK_DNN_ALGOS] = {
        "cuDNN IMPLICIT_GEMM", "cuDNN IMPLICIT_PRECOMP_GEMM",
        "cuDNN GEMM",          "cuDNN DIRECT",
        "cuDNN FFT",           "cuDNN FFT_TILING",
        "cuDNN WINOGRAD",      "cuDNN WINOGRAD_NONFUSED"};
    if (tactic == 0)
        return "default (cuBLAS if pointwise float32/16, else plugrt's direct kernel)";
    if (tactic == CONV_OWN)
        return "plugrt's direct kernel";
    if (tactic == CONV_GEMM)
        return "plugrt's implicit GEMM";
    return conv_is_dnn(tactic) ? dnn_names[(tactic & 0xff) - CONV_DNN] : NULL;
}

static int64_t conv_tactic_workspace(int32_t tactic)
{
    return conv_is_dnn(tactic) ? (int64_t)(tactic >> 8) * CONV_WS_UNIT : 0;
}

/* Which implementations to list (a test hook; unset: all that apply):
 * PRT_CUDA_CONV_IMPL=own, cublas, gemm or cudnn lists only that one (the
 * default tactic when the one asked for does not apply). */
static int conv_impl_wanted(const char *impl)
{
    const char *e = getenv("PRT_CUDA_CONV_IMPL");
    return !e || !e[0] || strcmp(e, impl) == 0;
}

/* The cuDNN tactics for o at opt (timed) whose workspace at max fits a
 * tactic; appended to list. */
static int32_t conv_dnn_tactics(const op_object *o, int32_t dtype, const op_conv_geom *go,
                                const op_conv_geom *gm, int32_t *list, int32_t n,
                                int32_t cap)
{
    static int told; /* a missing cuDNN is logged once per process */
    opk_dnn_conv co, cm;
    opk_dnn *h = NULL;
    int32_t ao[OPK_DNN_ALGOS], am[OPK_DNN_ALGOS], no = 0, nm = 0;
    int64_t wo[OPK_DNN_ALGOS], wm[OPK_DNN_ALGOS];
    char why[256];
    prt_status st;
    if (!conv_dnn_of(o, go, dtype, &co) || !conv_dnn_of(o, gm, dtype, &cm))
        return n;
    if (!opk_dnn_available(why, sizeof why)) {
        if (!told) {
            told = 1;
            base_log(PRT_SEV_INFO, "%s: Conv layers on CUDA use plugrt's kernels", why);
        }
        return n;
    }
    st = opk_dnn_open(&h);
    if (!st)
        st = opk_dnn_algos(h, &co, ao, wo, OPK_DNN_ALGOS, &no);
    if (!st)
        st = opk_dnn_algos(h, &cm, am, wm, OPK_DNN_ALGOS, &nm);
    opk_dnn_close(h);
    if (st) {
        base_log(PRT_SEV_INFO, "Conv (layer '%s'): no cuDNN tactic: %s", o->layer,
                 prt_last_error());
        return n;
    }
    for (int32_t i = 0; i < no && n < cap; i++)
        for (int32_t j = 0; j < nm; j++) {
            int64_t units = (wm[j] + CONV_WS_UNIT - 1) / CONV_WS_UNIT;
            if (am[j] != ao[i] || units >= CONV_WS_UNITS_MAX)
                continue;
            list[n++] = (int32_t)(units << 8) | (CONV_DNN + ao[i]);
            break;
        }
    return n;
}

static int32_t conv_tactics(const op_object *o, int32_t dtype, const prt_dims *opt,
                            const prt_dims *max, int32_t nb_in, int32_t *list,
                            int32_t cap)
{
    op_conv_geom go, gm;
    int32_t n = 0;
    const char *e = getenv("PRT_CUDA_CONV_IMPL");
    int forced = e && e[0];
    /* The tuner's inputs are the first OP_TUNE_INPUTS: X, W and B, or Z
     * in B's place, which the geometry leaves out. */
    const int32_t nb =
        nb_in < o->nb_inputs - conv_residual(o) ? nb_in : o->nb_inputs - conv_residual(o);
    if (conv_geom_core(o, opt, nb, &go) != PRT_OK ||
        conv_geom_core(o, max, nb, &gm) != PRT_OK) {
        base_clear_error();
        return 0;
    }
    if (!forced || (conv_impl_wanted("cublas") && conv_pointwise(&go, dtype)))
        list[n++] = 0;
    if (conv_impl_wanted("own") && (forced || conv_pointwise(&go, dtype)))
        list[n++] = CONV_OWN;
    /* Listed only when asked for (PRT_CUDA_CONV_IMPL=gemm): on an H100 the
     * tuner chose it for most of resnet18_w8's, deeplab_w8's and
     * densenet_w8's convs, and the models ran 15-60% slower at batch 1, 8
     * and 64 than with the direct kernel and cuDNN (narrow layers fill a
     * fraction of its 64-row tiles; a late layer at batch 1 is one block).
     * Smaller tiles and a split over k come before the tuner sees it. */
    if (forced && conv_impl_wanted("gemm") && conv_gemm_fits(&go, dtype) &&
        conv_gemm_fits(&gm, dtype))
        list[n++] = CONV_GEMM;
    if (conv_impl_wanted("cudnn"))
        n = conv_dnn_tactics(o, dtype, &go, &gm, list, n, cap);
    /* Without --autotune the builder takes the first listed. For a
     * convolution neither pointwise nor grouped that is to be cuDNN's own
     * first choice (its algorithms are listed in the order of its
     * heuristic), far ahead of the direct kernel on 3x3 and larger kernels
     * (resnet18_w8's at batch 8 on an H100: 0.32 ms each in the direct
     * kernel); pointwise ones keep cuBLAS, grouped and depthwise ones the
     * direct kernel, which is ahead of cuDNN there (mobilenet_v3_small).
     * --autotune times every one of them against this first. On an H100
     * (session 39) resnet18_w8 went from 2.23 to 0.22 ms at batch 1,
     * densenet_w8 from 1.03 to 0.27 at batch 8. PRT_CUDA_CONV_DNN_FIRST=0
     * keeps the direct kernel first (the old default). */
    const char *dnn_first = getenv("PRT_CUDA_CONV_DNN_FIRST");
    if (!forced && !(dnn_first && strcmp(dnn_first, "0") == 0) && n > 1 && list[0] == 0 &&
        go.G == 1 && !conv_pointwise(&go, dtype) && conv_is_dnn(list[1])) {
        list[0] = list[1];
        list[1] = 0;
    }
    if (n == 0) /* the one forced does not apply */
        list[n++] = 0;
    return n;
}

const op_device_tuning opc_conv_tuning = {"Conv", conv_tactics, conv_tactic_name,
                                          conv_tactic_workspace};

prt_status opc_conv_attach(op_object *o, void *stream)
{
    conv_res *r;
    prt_status st;
    if (stream && opk_blas_capturing(stream))
        return base_error(PRT_ERR_STATE, "needs a cuBLAS handle, which cannot be made "
                                         "during a graph capture");
    r = base_calloc(1, sizeof *r);
    if (!r)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "Conv: out of memory");
    /* A handle without a workspace: the pointwise products need none, and
     * 8 MiB per Conv of a context would add up. */
    st = opk_blas_open(&r->blas, 0);
    if (st) {
        base_free(r);
        return st;
    }
    if (conv_is_dnn(o->tactic) && opk_dnn_open(&r->dnn) != PRT_OK) {
        base_log(PRT_SEV_WARNING,
                 "Conv (layer '%s'): the engine chose %s, which cannot run here (%s); "
                 "plugrt's direct kernel runs instead",
                 o->layer, conv_tactic_name(o->tactic), prt_last_error());
        r->warned = 1;
    }
    r->timing = stream != NULL;
    o->res[PRT_DEVICE_CUDA] = r;
    return PRT_OK;
}

void opc_conv_detach(op_object *o)
{
    conv_res *r = o->res[PRT_DEVICE_CUDA];
    if (r) {
        opk_blas_close(r->blas);
        opk_dnn_close(r->dnn);
        base_free(r);
    }
    o->res[PRT_DEVICE_CUDA] = NULL;
}

/* The cuDNN tactic's forward into y (no bias or activation yet); non-zero
 * status when it cannot run, after which the caller runs its own kernel. */
static prt_status conv_dnn_run(const op_object *o, conv_res *r, const op_conv_geom *g,
                               int32_t dtype, const void *const *x, void *y, void *ws,
                               void *stream)
{
    opk_dnn_conv c;
    if (!r->dnn && !r->warned && !opk_blas_capturing(stream)) {
        /* The builder's tuning runs set tactics after the first run made
         * the resources; a context's object has its handle from attach. */
        prt_status st = opk_dnn_open(&r->dnn);
        if (st)
            return st;
    }
    if (!r->dnn)
        return base_error(PRT_ERR_UNSUPPORTED, "cuDNN is not open");
    if (!conv_dnn_of(o, g, dtype, &c))
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuDNN cannot express this convolution (asymmetric pads?)");
    return opk_dnn_forward(r->dnn, &c, (o->tactic & 0xff) - CONV_DNN, x[0], x[1], y, ws,
                           o->ws_bytes, stream);
}

/* The layer's tactic: cuDNN (falling back to the direct kernel when it
 * cannot run), cuBLAS for a pointwise float32 or float16 convolution (tactic 0), or
 * the direct kernel, one thread per output element; the bias and
 * activation after cuDNN's or cuBLAS's product in one pass. */
OPC_KERNEL(opc_conv)
{
    prt_dims dims[4];
    op_conv_geom g;
    op_act act = conv_act(o);
    const int32_t nb = nb_in - conv_residual(o);
    conv_res *r = o->res[PRT_DEVICE_CUDA];
    opk_conv_args a;
    prt_status st;
    if (nb_in > 4)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "%d inputs", (int)nb_in);
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = conv_geom_of(o, dims, nb_in, &g); /* Z checked against Y too */
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
    a.b = nb == 3 ? x[2] : NULL;
    a.z = conv_residual(o) ? x[nb] : NULL;
    a.y = y[0];
    a.act = act.kind;
    a.act_alpha = act.alpha;
    a.act_beta = act.beta;
    if (r && conv_is_dnn(o->tactic)) {
        st = conv_dnn_run(o, r, &g, dtype, x, y[0], ws, stream);
        if (!st)
            return opc_status(o, opk_conv_epilogue(&a, stream));
        if (r->timing)
            return op_fail(o, st, "%s", prt_last_error());
        if (!r->warned) {
            r->warned = 1;
            base_log(PRT_SEV_WARNING,
                     "Conv (layer '%s'): %s cannot run (%s); plugrt's direct kernel "
                     "runs instead",
                     o->layer, conv_tactic_name(o->tactic), prt_last_error());
        }
    }
    if (o->tactic == CONV_GEMM && conv_gemm_fits(&g, dtype))
        return opc_status(o, opk_conv_gemm(&a, stream));
    /* A pointwise convolution is a product per image, Y_n [M x
     * ovol] = W [M x C] X_n [C x ovol]: cuBLAS, one strided batch over the
     * images, then the bias and activation in one pass. */
    if (r && r->blas && o->tactic == 0 && conv_pointwise(&g, dtype)) {
        /* float16: tensor cores with float32 sums, rounded once. */
        st = opk_blas_gemm_ex(r->blas, stream, dtype, dtype, 0, 0, g.M, g.w.ovol, g.C,
                              x[1], g.C, 0, x[0], g.w.ovol, g.C * g.w.ovol, y[0],
                              g.w.ovol, g.M * g.w.ovol, g.N);
        if (st)
            return op_fail(o, st, "%s", prt_last_error());
        return opc_status(o, opk_conv_epilogue(&a, stream));
    }
    return opc_status(o, opk_conv(&a, stream));
}

/* Float32 and 16-bit floats with cuBLAS: one product when B has no batch
 * of its own, one strided batch when A's and B's batches are the same,
 * else one product per output matrix. 16-bit A and B are read as they
 * are (tensor cores, float32 sums) into float32 Y in the workspace, where
 * the bias is added before the one rounding to the output's type. A
 * product of the first two kinds that is 16-bit, or float32 with a bias or
 * a ReLU (not GELU: cuBLASLt's is the tanh form), is one cuBLASLt call
 * with both in its epilogue and the one rounding in its store, where
 * cuBLASLt takes it (opk_blas_gemm_bias; 16-bit not with PRT_CUDA_LT16=0,
 * blas.h); else cuBLAS and a pass. */
OPC_KERNEL(opc_matmul)
{
    opk_blas *blas = o->res[PRT_DEVICE_CUDA];
    const char *A = x[0], *B = x[1];
    const size_t es = prt_dtype_size(dtype);
    const int32_t act = ((const mm_op *)o)->act;
    float *Y = y[0];
    prt_dims bo;
    mm_geom g;
    int64_t nb;
    prt_status st;
    int err = 0, shared, same;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "%s on CUDA is not supported (float32, "
                       "float16 and bfloat16 are)",
                       prt_dtype_name(dtype));
    mm_split(&in[0].dims, &in[1].dims, &g);
    st = op_broadcast_dims(o, &g.ba, &g.bb, &bo, "the batch dims of A and B");
    if (st)
        return st;
    nb = base_volume(&bo);
    shared = base_volume(&g.bb) == 1;
    same = base_volume(&g.ba) == nb && base_volume(&g.bb) == nb &&
           g.ba.nb_dims == g.bb.nb_dims &&
           memcmp(g.ba.d, g.bb.d, sizeof(int64_t) * (size_t)g.ba.nb_dims) == 0;
    if ((dtype != PRT_FLOAT32 || nb_in == 3 || act == MM_ACT_RELU) &&
        act != MM_ACT_GELU && (shared || same) && nb * g.M > 0 && g.N > 0 && g.K > 0) {
        st = opk_blas_gemm_bias(blas, stream, dtype, 0, 0, shared ? nb * g.M : g.M, g.N,
                                g.K, 1.0f, A, g.K, shared ? 0 : g.M * g.K, B, g.N,
                                shared ? 0 : g.K * g.N, nb_in == 3 ? x[2] : NULL,
                                act == MM_ACT_RELU, y[0], shared ? 1 : nb);
        if (st != PRT_ERR_UNSUPPORTED)
            return st ? op_fail(o, st, "%s", prt_last_error()) : PRT_OK;
        base_clear_error(); /* cuBLAS and the pass below */
    }
    if (dtype != PRT_FLOAT32)
        Y = ws; /* float32 sums, rounded once below */
    if (shared)
        st = opk_blas_gemm_ex(blas, stream, dtype, PRT_FLOAT32, 0, 0, nb * g.M, g.N, g.K,
                              A, g.K, 0, B, g.N, 0, Y, g.N, 0, 1);
    else if (same)
        st = opk_blas_gemm_ex(blas, stream, dtype, PRT_FLOAT32, 0, 0, g.M, g.N, g.K, A,
                              g.K, g.M * g.K, B, g.N, g.K * g.N, Y, g.N, g.M * g.N, nb);
    else
        for (int64_t b = 0; b < nb && !st; b++)
            st = opk_blas_gemm_ex(
                blas, stream, dtype, PRT_FLOAT32, 0, 0, g.M, g.N, g.K,
                A + (size_t)(mm_batch_offset(&g.ba, &bo, b) * g.M * g.K) * es, g.K, 0,
                B + (size_t)(mm_batch_offset(&g.bb, &bo, b) * g.K * g.N) * es, g.N, 0,
                Y + b * g.M * g.N, g.N, 0, 1);
    if (st)
        return op_fail(o, st, "%s", prt_last_error());
    /* The bias and the fused activation in one pass (fuse.cu). */
    if ((nb_in == 3 || act) &&
        (err = opk_bias_act_rows(dtype, nb_in == 3 ? x[2] : NULL, act, Y,
                                 base_volume(&out->dims) / (g.N > 0 ? g.N : 1), g.N,
                                 stream)) != 0)
        return opc_status(o, err);
    if (dtype != PRT_FLOAT32 &&
        (err = opk_from_f32(dtype, Y, y[0], base_volume(&out->dims), stream)) != 0)
        return opc_status(o, err);
    return PRT_OK;
}

/* Where the workspace's next float32 buffer starts: at a multiple of 256
 * bytes, as cudaMalloc's pointers are. cuBLAS's documentation asks for
 * "properly aligned" pointers in its tensor-core modes, "to avoid
 * misaligned memory access errors", without saying how aligned. */
static float *gemm_ws_next(float *w, int64_t floats)
{
    return w + (floats + GEMM_WS_ALIGN_FLOATS - 1) / GEMM_WS_ALIGN_FLOATS *
                   GEMM_WS_ALIGN_FLOATS;
}

/* cuBLAS's product into float32 Y, then alpha and C in one pass. 16-bit A
 * and B go to cublasGemmStridedBatchedEx as they are, as MatMul's do (the
 * same call through opk_blas_gemm_ex, float32 sums), with Y at the start
 * of the workspace and C after it, each 256-byte aligned. (Gemm's Ex call
 * once had Y after room for float32 A, B and C, 4-byte aligned only:
 * on an H100 cuBLAS refused such products as unsupported or faulted with a
 * misaligned address; MatMul's Y at the workspace's start never did. The
 * alignment is the one difference between the two calls: leading dims,
 * transposes and compute type are the same; test_cuda_ops's
 * test_gemm_16bit checks it on a GPU, where the Ex path was verified on an
 * H100.) A refused Ex call is an error naming the layer and cuBLAS's
 * status; the float32 copies of A and B that gemm_workspace also counts
 * are the CPU kernel's. A Gemm whose C is a row of N (a Linear layer's
 * bias) with beta 1, or a 16-bit one without C, is one cuBLASLt call with
 * C in its epilogue (alpha times the float32 sum, then C, then the one
 * rounding: the CPU's operations), where cuBLASLt takes it
 * (opk_blas_gemm_bias). */
OPC_KERNEL(opc_gemm)
{
    const gemm_op *g = (const gemm_op *)o;
    const float *C = nb_in == 3 ? x[2] : NULL;
    float *Y = y[0], *w = ws;
    int64_t M = out->dims.d[0], N = out->dims.d[1];
    int64_t K = in[0].dims.d[g->trans_a ? 0 : 1];
    int64_t lda = g->trans_a ? M : K, ldb = g->trans_b ? K : N;
    int64_t si = 0, sj = 0;
    const int half = dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16;
    prt_status st;
    int err = 0;
    if (!half && dtype != PRT_FLOAT32)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    if (C)
        gemm_c_strides(&in[2].dims, &si, &sj);
    if ((half || C) && (!C || (g->beta == 1.0f && si == 0 && sj == 1)) && M > 0 &&
        N > 0 && K > 0) {
        st = opk_blas_gemm_bias(o->res[PRT_DEVICE_CUDA], stream, dtype, g->trans_a,
                                g->trans_b, M, N, K, g->alpha, x[0], lda, 0, x[1], ldb, 0,
                                C, 0, y[0], 1);
        if (st != PRT_ERR_UNSUPPORTED)
            return st ? op_fail(o, st, "%s", prt_last_error()) : PRT_OK;
        base_clear_error(); /* cuBLAS and the pass below */
    }
    if (half) {
        Y = w; /* float32 sums, rounded once below */
        w = gemm_ws_next(w, M * N);
        if (C) {
            err = opk_to_f32(dtype, x[2], w, base_volume(&in[2].dims), stream);
            C = w;
        }
        if (err)
            return opc_status(o, err);
    }
    st = opk_blas_gemm_ex(o->res[PRT_DEVICE_CUDA], stream, dtype, PRT_FLOAT32, g->trans_a,
                          g->trans_b, M, N, K, x[0], lda, 0, x[1], ldb, 0, Y, N, 0, 1);
    if (st)
        return op_fail(o, st, "%s", prt_last_error());
    if (C && g->beta != 0.0f) {
        err = opk_gemm_epilogue(Y, M, N, g->alpha, C, si, sj, g->beta, stream);
    } else if (g->alpha != 1.0f) {
        err = opk_gemm_epilogue(Y, M, N, g->alpha, NULL, 0, 0, 0.0f, stream);
    }
    if (!err && Y != y[0])
        err = opk_from_f32(dtype, Y, y[0], M * N, stream);
    return opc_status(o, err);
}

/* The CPU's loop nest, one thread per output element. */
OPC_KERNEL(opc_einsum)
{
    const einsum_op *e = (const einsum_op *)o;
    opk_einsum_args a;
    prt_dims dims[ES_MAX_OPS] = {{0, {0}}};
    prt_status s;
    if (nb_in > OPK_MAX_OPERANDS)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d operands on CUDA (at most %d)",
                       (int)nb_in, OPK_MAX_OPERANDS);
    memset(&a, 0, sizeof a);
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    s = es_letter_sizes(e, dims, nb_in, a.size);
    if (s)
        return s;
    for (int32_t k = 0; k < nb_in; k++) {
        int64_t stride = 1;
        for (int32_t i = e->rank[k] - 1; i >= 0; i--) {
            a.stride[k][(int32_t)e->label[k][i]] += stride;
            stride *= dims[k].d[i];
        }
        a.x[k] = x[k];
    }
    a.dtype = dtype;
    a.nb_ops = nb_in;
    a.nb_letters = e->nb_letters;
    a.out_rank = e->out_rank;
    a.y = y[0];
    a.out_count = base_volume(&out->dims);
    a.sum_count = 1;
    for (int32_t l = e->out_rank; l < e->nb_letters; l++)
        a.sum_count *= a.size[l];
    return opc_status(o, opk_einsum(&a, stream));
}

OPC_KERNEL(opc_softmax)
{
    int64_t outer, inner, n;
    prt_status st = softmax_view(o, &in[0].dims, &outer, &n, &inner);
    if (st)
        return st;
    return opc_status(o, opk_softmax(dtype, x[0], y[0], outer, n, inner,
                                     o->cls->kind == LOG_SOFTMAX, stream));
}

/* Scale and B are read through a walk of the normalized dims (their dims
 * before the axis are 1, checked, and drop out of the walk). */
OPC_KERNEL(opc_layer_norm)
{
    const prt_dims *xd = &in[0].dims;
    int32_t axis = 0, types[1] = {dtype};
    opk_layer_norm_args a;
    prt_dims nd, sb[2];
    prt_status st = ln_axis(o, xd->nb_dims, &axis);
    if (st)
        return st;
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.stash_dtype = ln_out_dtype_n(o, types, 1, 1);
    a.norm = ln_norm_size(o, xd);
    if (a.norm < 0)
        return op_fail(o, PRT_ERR_SHAPE, "the normalized dims overflow");
    a.rows = a.norm > 0   ? base_volume(xd) / a.norm
             : nb_out > 1 ? base_volume(&out[1].dims)
                          : 0;
    a.epsilon = ((const ln_op *)o)->epsilon;
    nd.nb_dims = xd->nb_dims - axis;
    for (int32_t i = 0; i < nd.nb_dims; i++)
        nd.d[i] = xd->d[axis + i];
    for (int32_t k = 0; k < 2; k++) {
        /* Scale, then B (or Scale again in its place, unread). */
        prt_dims t = in[k + 1 < nb_in ? k + 1 : 1].dims;
        if (t.nb_dims > nd.nb_dims) { /* leading 1s before the axis */
            int32_t drop = t.nb_dims - nd.nb_dims;
            for (int32_t i = 0; i < nd.nb_dims; i++)
                t.d[i] = t.d[i + drop];
            t.nb_dims = nd.nb_dims;
        }
        sb[k] = t;
    }
    opk_bcast_init(&a.sb, &nd, 2, sb);
    a.x = x[0];
    a.scale = x[1];
    a.bias = nb_in == 3 ? x[2] : NULL;
    a.y = y[0];
    a.mean = nb_out > 1 ? y[1] : NULL;
    a.inv_std = nb_out > 2 ? y[2] : NULL;
    return opc_status(o, opk_layer_norm(&a, stream));
}

OPC_KERNEL(opc_global_average_pool)
{
    const prt_dims *d = &in[0].dims;
    int64_t sp = 1;
    for (int32_t i = 2; i < d->nb_dims; i++)
        sp *= d->d[i];
    return opc_status(o, opk_row_mean(dtype, x[0], y[0], d->d[0] * d->d[1], sp, stream));
}

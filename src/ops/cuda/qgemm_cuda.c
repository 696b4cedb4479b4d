/*
 * The CUDA kernels of MatMulInteger, QLinearMatMul, ConvInteger and
 * QLinearConv (ops.h): the CPU files' geometry and checks (qlinear.h),
 * then qgemm.cu's launcher with device pointers to the zero points, scales
 * and bias.
 *
 * MatMulInteger and QLinearMatMul take cuBLASLt's int8 tensor-core kernels
 * (lt.h) where they can: B one matrix (a weight; A's batch is stacked into
 * rows), N and K multiples of 4 (cuBLASLt's int8 rule), A re-signed and B
 * transposed fitting in the op's own workspace, cuBLASLt loaded. Else, or
 * with PRT_CUDA_QGEMM=kernel in the environment (tests and benchmarks
 * compare the two), qgemm.cu's kernel runs. Both give the CPU's bytes:
 * the int32 sums are exact and the requantization is the same code.
 *
 * DynamicQuantizeMatMul and MatMulIntegerToFloat (qmatmul_float.c) are
 * composed of the same launchers: DynamicQuantizeLinear's kernel into the
 * op's workspace (ql_dq_layout), qgemm.cu's plain kernel to int32 sums
 * there, then opk_qmf_epilogue. Built, not yet run on a GPU (session 38).
 *
 * ConvInteger and QLinearConv run as an implicit GEMM on the int8 tensor
 * cores (opk_qconv_mma: x gathered on the fly, W read as it is, no
 * workspace) where qconv_mma_takes says; depthwise and narrow groups, 3
 * or more spatial dims, PRT_CUDA_QGEMM=kernel and PRT_CUDA_QCONV_MMA=0
 * take the plain kernel.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ops/cuda/blas.h"
#include "ops/cuda/launch.h"
#include "ops/cuda/lt.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"
#include "ops/qlinear.h"

/* What both launches share: data, zero points, scales, bias, output. */
static void qc_common(const ql_inputs *q, const prt_tensor_desc *in,
                      const prt_tensor_desc *out, const void *const *x, void *y,
                      opk_qgemm_args *a)
{
    memset(a, 0, sizeof *a);
    a->a = x[q->a];
    a->b = x[q->b];
    a->a_dtype = in[q->a].dtype;
    a->b_dtype = in[q->b].dtype;
    a->a_zp = q->a_zp >= 0 ? x[q->a_zp] : NULL;
    a->a_nzp = q->a_zp >= 0 ? base_volume(&in[q->a_zp].dims) : 0;
    a->b_zp = q->b_zp >= 0 ? x[q->b_zp] : NULL;
    a->b_nzp = q->b_zp >= 0 ? base_volume(&in[q->b_zp].dims) : 0;
    a->a_scale = q->a_scale >= 0 ? x[q->a_scale] : NULL;
    a->b_scale = q->b_scale >= 0 ? x[q->b_scale] : NULL;
    a->b_nscale = q->b_scale >= 0 ? base_volume(&in[q->b_scale].dims) : 0;
    a->y_scale = q->y_scale >= 0 ? x[q->y_scale] : NULL;
    a->y_zp = q->y_zp >= 0 ? x[q->y_zp] : NULL;
    a->bias = q->bias >= 0 ? x[q->bias] : NULL;
    a->out = q->y_zp < 0 ? OPK_Q_I32 : out->dtype == PRT_UINT8 ? OPK_Q_U8 : OPK_Q_I8;
    a->y = y;
    a->count = base_volume(&out->dims);
}

/* Per object (op_device_table.attach, resources 4): the cuBLASLt handle,
 * NULL where cuBLASLt cannot be used (the plain kernel runs). */
typedef struct qlt_res {
    opk_lt *lt;
    _Atomic int told; /* a refusal of this object's product was logged */
} qlt_res;

static _Atomic int64_t qlt_runs;

int64_t opc_qmm_lt_runs(void)
{
    return atomic_load_explicit(&qlt_runs, memory_order_relaxed);
}

prt_status opc_qmm_attach(op_object *o)
{
    static _Atomic int told; /* a missing cuBLASLt is logged once per process */
    qlt_res *r = base_calloc(1, sizeof *r);
    const char *why = opk_lt_unavailable();
    if (!r)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", o->layer);
    if (why) {
        if (!atomic_exchange(&told, 1))
            base_log(PRT_SEV_INFO,
                     "%s: MatMulInteger and QLinearMatMul on CUDA use plugrt's kernels",
                     why);
    } else if (opk_lt_open(&r->lt) != PRT_OK) {
        /* No workspace for it: the plain kernel needs none of its own. */
        base_log(PRT_SEV_INFO, "layer '%s': %s; plugrt's integer kernel runs it",
                 o->layer, prt_last_error());
        r->lt = NULL;
    }
    o->res[PRT_DEVICE_CUDA] = r;
    return PRT_OK;
}

void opc_qmm_detach(op_object *o)
{
    qlt_res *r = o->res[PRT_DEVICE_CUDA];
    if (r)
        opk_lt_close(r->lt);
    base_free(r);
    o->res[PRT_DEVICE_CUDA] = NULL;
}

/* The cuBLASLt path's buffers in the op's workspace (ql_tn_layout, which
 * the op's workspace covers; base NULL: only sized). -1: overflow. */
static int64_t qlt_layout(int64_t rows, int64_t N, int64_t K, uint8_t *base,
                          opk_qlt_args *a)
{
    void *at[4] = {NULL, NULL, NULL, NULL};
    const int64_t need = ql_tn_layout(rows, N, K, base, at);
    if (a) {
        a->a8 = at[0];
        a->b8t = at[1];
        a->rowsum = at[2];
        a->colsum = at[3];
    }
    return need;
}

/* Why cuBLASLt cannot take o's product (static storage, or `buf`), NULL
 * when it can (the file's comment says when). */
static const char *qlt_refusal(const op_object *o, const mm_geom *g, int64_t rows,
                               const void *ws, char *buf, size_t cap)
{
    int64_t need;
    if (base_volume(&g->bb) != 1)
        return "B has a batch of its own (cuBLASLt's path takes one weight matrix)";
    if (rows <= 0 || rows > INT32_MAX)
        return "the rows of A are out of cuBLASLt's int32 range";
    if (!opk_lt_s8_fits(g->N, g->K))
        return "N and K must be multiples of 4 (cuBLASLt's int8 rule)";
    if (g->N > (int64_t)(OPK_LT_SCRATCH / 4))
        return "N exceeds the handle's int32 scratch for one row";
    if (g->K > (int64_t)65535 * 32)
        return "K exceeds the transposing kernel's grid";
    need = qlt_layout(rows, g->N, g->K, NULL, NULL);
    if (!ws || need < 0 || need > o->ws_bytes) {
        snprintf(buf, cap,
                 "the op's workspace (%lld bytes) lacks the %lld its buffers need",
                 (long long)o->ws_bytes, (long long)need);
        return buf;
    }
    return NULL;
}

/* 1 when o's product goes to cuBLASLt. A refusal other than the
 * environment's or a missing cuBLASLt (logged by attach) is logged once
 * per object, naming the shape and why, so a run that expected cuBLASLt
 * says what stopped it (issue 30). */
static int qlt_takes(const op_object *o, const mm_geom *g, int64_t rows, void *ws)
{
    qlt_res *r = o->res[PRT_DEVICE_CUDA];
    const char *env = getenv("PRT_CUDA_QGEMM");
    const char *why;
    char buf[160];
    if (!r || !r->lt || (env && strcmp(env, "kernel") == 0))
        return 0;
    why = qlt_refusal(o, g, rows, ws, buf, sizeof buf);
    if (why && !atomic_exchange(&r->told, 1))
        base_log(PRT_SEV_INFO,
                 "layer '%s': product %lld x %lld x %lld (rows x N x K) not through "
                 "cuBLASLt: %s; plugrt's integer kernel runs it",
                 o->layer, (long long)rows, (long long)g->N, (long long)g->K, why);
    return why == NULL;
}

/* The product through cuBLASLt: prepare, then per block of rows that fits
 * the handle's scratch (all of them at once when the result is the int32
 * sum itself, computed in place) the product and the epilogue.
 * PRT_ERR_UNSUPPORTED when cuBLASLt refused the shape before running
 * anything of its own: the caller runs the plain kernel, which rewrites
 * every output (what ran before it only wrote the op's workspace or y,
 * both rewritten). */
static prt_status qlt_run(const op_object *o, const opk_qgemm_args *q, int64_t rows,
                          void *ws, void *stream)
{
    qlt_res *r = o->res[PRT_DEVICE_CUDA];
    opk_qlt_args a;
    prt_status st = PRT_OK;
    int64_t block;
    memset(&a, 0, sizeof a);
    a.q = *q;
    a.rows = rows;
    qlt_layout(rows, q->N, q->K, ws, &a);
    st = opc_status(o, opk_qlt_prepare(&a, stream));
    if (st)
        return st;
    block = q->out == OPK_Q_I32 ? rows : (int64_t)(OPK_LT_SCRATCH / 4) / q->N;
    for (a.r0 = 0; a.r0 < rows && !st; a.r0 += block) {
        int32_t *c32 =
            q->out == OPK_Q_I32 ? (int32_t *)q->y + a.r0 * q->N : opk_lt_scratch(r->lt);
        a.rc = rows - a.r0 < block ? rows - a.r0 : block;
        a.c32 = c32;
        st = opk_lt_gemm_s8(r->lt, stream, a.rc, q->N, q->K, a.a8 + a.r0 * q->K, a.b8t,
                            c32);
        /* cuBLASLt found no algorithm for the shape: the plain kernel
         * computes the whole product instead (the caller's fallback);
         * opk_lt_gemm_s8 logged why, once. */
        if (st == PRT_ERR_UNSUPPORTED)
            return st;
        if (st)
            return op_fail(o, st, "%s", prt_last_error());
        st = opc_status(o, opk_qlt_epilogue(&a, stream));
    }
    if (!st)
        atomic_fetch_add_explicit(&qlt_runs, 1, memory_order_relaxed);
    return st;
}

OPC_KERNEL(opc_qmatmul)
{
    ql_inputs q;
    opk_qgemm_args a;
    mm_geom g;
    prt_dims bo;
    int64_t sa = 1, sb = 1;
    prt_status st;
    (void)dtype, (void)nb_out;
    ql_inputs_of(o, nb_in, &q);
    mm_split(&in[q.a].dims, &in[q.b].dims, &g);
    st = op_broadcast_dims(o, &g.ba, &g.bb, &bo, "the batch dims of A and B");
    if (st)
        return st;
    if (bo.nb_dims > OPK_MAX_RANK)
        return op_fail(o, PRT_ERR_SHAPE, "%d batch dims on CUDA (at most %d)",
                       (int)bo.nb_dims, OPK_MAX_RANK);
    qc_common(&q, in, out, x, y[0], &a);
    a.M = g.M;
    a.N = g.N;
    a.K = g.K;
    if (qlt_takes(o, &g, base_volume(&g.ba) * g.M, ws)) {
        st = qlt_run(o, &a, base_volume(&g.ba) * g.M, ws, stream);
        if (st != PRT_ERR_UNSUPPORTED)
            return st;
        base_clear_error();
    }
    a.brank = bo.nb_dims;
    /* Each operand's batch stride in matrices, 0 along a broadcast dim
     * (mm_batch_offset's rule). */
    for (int32_t i = bo.nb_dims - 1; i >= 0; i--) {
        const int32_t ja = i - (bo.nb_dims - g.ba.nb_dims);
        const int32_t jb = i - (bo.nb_dims - g.bb.nb_dims);
        a.bdims[i] = bo.d[i];
        a.astr[i] = ja >= 0 && g.ba.d[ja] != 1 ? sa : 0;
        a.bstr[i] = jb >= 0 && g.bb.d[jb] != 1 ? sb : 0;
        sa *= ja >= 0 ? g.ba.d[ja] : 1;
        sb *= jb >= 0 ? g.bb.d[jb] : 1;
    }
    return opc_status(o, opk_qgemm(&a, stream));
}

static _Atomic int64_t qconv_mma_count;

int64_t opc_qconv_mma_runs(void)
{
    return atomic_load_explicit(&qconv_mma_count, memory_order_relaxed);
}

/* 1 when a's convolution goes to the tensor-core kernel (opk_qconv_mma):
 * 1 or 2 spatial dims, a grid that fits, a group of at least
 * QCONV_MMA_MIN_MG channels and QCONV_MMA_MIN_K taps (a depthwise
 * convolution, one channel per group, would fill 1 column of the 32 of
 * a tile: the plain kernel, a thread per output, suits it better), the
 * device at sm_80 or later, PRT_CUDA_QGEMM not "kernel" and
 * PRT_CUDA_QCONV_MMA not "0" (both test and benchmark hooks: the plain
 * kernel for comparison). */
#define QCONV_MMA_MIN_MG 4
#define QCONV_MMA_MIN_K 8
static int qconv_mma_takes(const opk_qgemm_args *a)
{
    static _Atomic int ok = -1; /* opk_qconv_mma_ok, asked once */
    const char *env = getenv("PRT_CUDA_QGEMM");
    int v = atomic_load(&ok);
    if (a->ns > 2 || a->Mg < QCONV_MMA_MIN_MG || a->Cg * a->kvol < QCONV_MMA_MIN_K ||
        (a->n_img * a->ovol + 63) / 64 > INT32_MAX || (a->Mg + 31) / 32 > 65535 ||
        a->Mc / a->Mg > 65535 || a->Cg * a->kvol > INT32_MAX || a->ivol > INT32_MAX ||
        (env && strcmp(env, "kernel") == 0))
        return 0;
    env = getenv("PRT_CUDA_QCONV_MMA");
    if (env && strcmp(env, "0") == 0)
        return 0;
    /* The kernel's positions are int32: an output's first tap and its
     * kernel's reach stay well inside. */
    for (int32_t d = 0; d < a->ns; d++)
        if (a->o[d] * a->s[d] + a->k[d] * a->d[d] + a->in[d] > INT32_MAX / 2)
            return 0;
    if (v < 0) {
        v = opk_qconv_mma_ok();
        atomic_store(&ok, v);
    }
    return v;
}

OPC_KERNEL(opc_qconv)
{
    ql_inputs q;
    opk_qgemm_args a;
    op_conv_geom g;
    prt_dims dims[OP_MAX_INPUTS];
    prt_status st;
    (void)dtype, (void)nb_out, (void)ws;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = qconv_geom(o, dims, nb_in, &g);
    if (st)
        return st;
    if (g.w.ns > OPK_MAX_SP)
        return op_fail(o, PRT_ERR_SHAPE, "%d spatial dims on CUDA (at most %d)",
                       (int)g.w.ns, OPK_MAX_SP);
    ql_inputs_of(o, nb_in, &q);
    qc_common(&q, in, out, x, y[0], &a);
    a.conv = 1;
    a.ns = g.w.ns;
    a.n_img = g.N;
    a.C = g.C;
    a.Mc = g.M;
    a.Cg = g.Cg;
    a.Mg = g.Mg;
    for (int32_t i = 0; i < g.w.ns; i++) {
        a.in[i] = g.w.in[i];
        a.k[i] = g.w.k[i];
        a.o[i] = g.w.out[i];
        a.s[i] = g.w.s[i];
        a.d[i] = g.w.d[i];
        a.pb[i] = g.w.pb[i];
    }
    a.ivol = g.w.ivol;
    a.kvol = g.w.kvol;
    a.ovol = g.w.ovol;
    if (qconv_mma_takes(&a)) {
        st = opc_status(o, opk_qconv_mma(&a, stream));
        if (!st)
            atomic_fetch_add_explicit(&qconv_mma_count, 1, memory_order_relaxed);
        return st;
    }
    return opc_status(o, opk_qgemm(&a, stream));
}

OPC_KERNEL(opc_qmatmul_float)
{
    const int dynamic = o->cls->kind == QMF_DYNAMIC;
    const int32_t bs = dynamic ? 2 : 3, bz = dynamic ? 3 : 5, ab = dynamic ? 4 : 6;
    const int64_t K = in[1].dims.d[0], N = in[1].dims.d[1];
    int64_t rows = 1;
    void *at[4] = {NULL, NULL, NULL, NULL};
    opk_qgemm_args a;
    prt_status st;
    (void)dtype, (void)out, (void)nb_out;
    for (int32_t i = 0; i + 1 < in[0].dims.nb_dims; i++)
        rows *= in[0].dims.d[i];
    if (rows == 0 || N == 0)
        return PRT_OK;
    if (ql_dq_layout(rows, K, N, ws, at) < 0 ||
        ql_dq_layout(rows, K, N, NULL, NULL) > o->ws_bytes)
        return op_fail(o, PRT_ERR_INTERNAL,
                       "the op's workspace (%lld bytes) is too small",
                       (long long)o->ws_bytes);
    memset(&a, 0, sizeof a);
    if (dynamic) {
        st = opc_status(o, opk_dynamic_quantize((const float *)x[0], rows * K,
                                                (uint8_t *)at[0], (float *)at[1],
                                                (uint8_t *)at[2], stream));
        if (st)
            return st;
        a.a = at[0];
        a.a_dtype = PRT_UINT8;
        a.a_zp = at[2];
        a.a_scale = at[1];
    } else {
        a.a = x[0];
        a.a_dtype = in[0].dtype;
        a.a_zp = nb_in > 4 ? x[4] : NULL;
        a.a_scale = x[2];
    }
    a.a_nzp = a.a_zp ? 1 : 0;
    a.b = x[1];
    a.b_dtype = in[1].dtype;
    a.b_zp = nb_in > bz ? x[bz] : NULL;
    a.b_nzp = nb_in > bz ? base_volume(&in[bz].dims) : 0;
    a.out = OPK_Q_I32;
    a.y = at[3];
    a.M = rows;
    a.N = N;
    a.K = K;
    a.count = rows * N;
    st = opc_status(o, opk_qgemm(&a, stream));
    if (st)
        return st;
    return opc_status(o, opk_qmf_epilogue((const int32_t *)at[3], a.a_scale,
                                          (const float *)x[bs], base_volume(&in[bs].dims),
                                          nb_in > ab ? (const float *)x[ab] : NULL,
                                          ((const mm_op *)o)->act, (float *)y[0], rows, N,
                                          stream));
}

/*
 * DynamicQuantizeMatMul and MatMulIntegerToFloat (namespace "plugrt",
 * version "1"; ONNX Runtime's com.microsoft ops of those names, same
 * inputs): an 8-bit product whose int32 sums come out as floats, what
 * ONNX Runtime's quantize_dynamic writes as
 *
 *   DynamicQuantizeLinear(A) -> MatMulInteger(., B, ., b_zp) -> Cast(float)
 *     -> Mul(a_scale * b_scale) [-> Add(bias)]
 *
 * and the importer folds into one layer (src/onnx/onnx_dynq.c). Field
 * activation, MatMul's (ops_nn.h: "Relu" or "Gelu", none by default):
 * applied to each block of the output while it is in cache (BERT's
 * intermediate dense -> GELU, as the float MatMul fuses it).
 *
 *   DynamicQuantizeMatMul(A float32, B, b_scale, b_zero_point?, bias?)
 *   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?,
 *                        b_zero_point?, bias?)            -> float32
 *
 * A is [..., K] (its batch dims stacked into rows), B one [K, N] matrix of
 * uint8 or int8 (packed once when constant, as MatMulInteger's), b_scale
 * and b_zero_point one value or N (per column), a_scale and a_zero_point
 * one value, bias N floats. DynamicQuantizeMatMul first quantizes A to
 * uint8 with DynamicQuantizeLinear's scale and zero point (the same
 * functions, quant.h's opq_dynamic_params and op_quantize_f32, so the
 * same bytes), straight into the product's packed rows. Then
 * y = float(sum) * (a_scale * b_scale[j]) (+ bias[j]): the multiplier in
 * float32 as the Mul of the two scales computes it, then one multiply-add
 * (the unfused Mul and Add round twice; the difference is an ulp). The
 * sums are exact, so the result does not depend on the thread count or
 * the kernel's build (qgemm.h).
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/cpu/qgemm.h"
#include "ops/ops_nn.h"
#include "ops/qlinear.h"
#include "ops/quant.h"

#define QMF_MB 32  /* rows of a block (whole register tiles) */
#define QMF_NB 128 /* columns of a block */

/* Input positions of one kind's parts (-1: absent). */
typedef struct qmf_inputs {
    int dynamic; /* A is float and quantized here */
    int32_t a, b, a_scale, b_scale, a_zp, b_zp, bias;
} qmf_inputs;

static void qmf_inputs_of(const op_object *o, int32_t nb_in, qmf_inputs *q)
{
    q->dynamic = o->cls->kind == QMF_DYNAMIC;
    q->a = 0;
    q->b = 1;
    if (q->dynamic) {
        q->a_scale = q->a_zp = -1;
        q->b_scale = 2;
        q->b_zp = nb_in > 3 ? 3 : -1;
        q->bias = nb_in > 4 ? 4 : -1;
    } else {
        q->a_scale = 2;
        q->b_scale = 3;
        q->a_zp = nb_in > 4 ? 4 : -1;
        q->b_zp = nb_in > 5 ? 5 : -1;
        q->bias = nb_in > 6 ? 6 : -1;
    }
}

static uint32_t qmf_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    qmf_inputs q;
    qmf_inputs_of(o, OP_MAX_INPUTS, &q);
    if (index == q.a)
        return q.dynamic ? OP_DT(PRT_FLOAT32) : OP_DT(PRT_UINT8) | OP_DT(PRT_INT8);
    if (index == q.b)
        return OP_DT(PRT_UINT8) | OP_DT(PRT_INT8);
    if (index == q.a_zp)
        return OP_DT(types[q.a]);
    if (index == q.b_zp)
        return OP_DT(types[q.b]);
    return OP_DT(PRT_FLOAT32); /* scales, bias */
}

static int32_t qmf_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)types, (void)nb_in;
    return PRT_FLOAT32;
}

static prt_status qmf_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in;
    if (in[0].nb_dims < 1 || in[1].nb_dims != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "A has %d dims and B %d; A takes one or more, B must be a [K, N] "
                       "matrix",
                       (int)in[0].nb_dims, (int)in[1].nb_dims);
    return mm_shapes(o, in, 2, out, eb);
}

/* Input k (if any) holds one value, or n when n > 0. */
static prt_status qmf_count(const op_object *o, const prt_dims *in, int32_t k,
                            const char *what, int64_t n)
{
    int64_t v;
    if (k < 0)
        return PRT_OK;
    v = base_volume(&in[k]);
    if (v == 1 || (n > 0 && v == n))
        return PRT_OK;
    return op_fail(o, PRT_ERR_SHAPE, "%s has %lld values; it takes one%s", what,
                   (long long)v, n > 0 ? ", or one per column of B" : "");
}

static prt_status qmf_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    qmf_inputs q;
    mm_geom g;
    prt_status st;
    if (in[0].nb_dims < 1 || in[1].nb_dims != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "A has %d dims and B %d; A takes one or more, B must be a [K, N] "
                       "matrix",
                       (int)in[0].nb_dims, (int)in[1].nb_dims);
    st = mm_infer(o, in, 2, out);
    if (st)
        return st;
    qmf_inputs_of(o, nb_in, &q);
    mm_split(&in[0], &in[1], &g);
    st = qmf_count(o, in, q.a_scale, "a_scale", 0);
    if (!st)
        st = qmf_count(o, in, q.a_zp, "a_zero_point", 0);
    if (!st)
        st = qmf_count(o, in, q.b_scale, "b_scale", g.N);
    if (!st)
        st = qmf_count(o, in, q.b_zp, "b_zero_point", g.N);
    if (!st && q.bias >= 0 && base_volume(&in[q.bias]) != g.N)
        st = op_fail(o, PRT_ERR_SHAPE,
                     "bias has %lld values; it takes one per column (%lld)",
                     (long long)base_volume(&in[q.bias]), (long long)g.N);
    return st;
}

/* The run's buffers, carved from `base` (NULL: only sized). */
typedef struct qmf_ws {
    uint8_t *ap, *bp;
    int32_t *rowsum, *colsum, *beta, *colterm;
    float *scale;
} qmf_ws;

static int64_t qmf_layout(int64_t rows, int64_t K, int64_t N, uint8_t *base, qmf_ws *w)
{
    int64_t off = 0, k4 = op_qg_k4(K), ab, n4, r4;
    qmf_ws unused;
    if (!w)
        w = &unused;
    if (k4 < 0 || !base_mul_i64(rows, k4, &ab) || !base_mul_i64(N, 4, &n4) ||
        !base_mul_i64(rows, 4, &r4) || !ql_carve(base, &off, ab, (void **)&w->ap) ||
        !ql_carve(base, &off, op_qg_panel_bytes(K, N), (void **)&w->bp) ||
        !ql_carve(base, &off, r4, (void **)&w->rowsum) ||
        !ql_carve(base, &off, n4, (void **)&w->colsum) ||
        !ql_carve(base, &off, n4, (void **)&w->beta) ||
        !ql_carve(base, &off, n4, (void **)&w->colterm) ||
        !ql_carve(base, &off, n4, (void **)&w->scale))
        return -1;
    return off + QL_CARVE_ALIGN; /* base's own alignment */
}

static int64_t qmf_rows(const prt_dims *a)
{
    int64_t rows = 1;
    for (int32_t i = 0; i + 1 < a->nb_dims; i++)
        if (!base_mul_i64(rows, a->d[i] > 0 ? a->d[i] : 0, &rows))
            return -1;
    return rows;
}

static int64_t qmf_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t rows, cpu, tn, K, N;
    (void)o, (void)dtype, (void)nb_in, (void)out, (void)nb_out;
    if (in[0].nb_dims < 1 || in[1].nb_dims < 2)
        return -1;
    rows = qmf_rows(&in[0]);
    K = in[0].d[in[0].nb_dims - 1] > in[1].d[0] ? in[0].d[in[0].nb_dims - 1] : in[1].d[0];
    N = in[1].d[1];
    if (rows < 0)
        return -1;
    cpu = qmf_layout(rows, K, N, NULL, NULL);
    /* CUDA's kernel (qgemm_cuda.c) carves A's bytes, its scale and zero
     * point and the int32 sums from the same workspace. */
    tn = ql_dq_layout(rows, K, N, NULL, NULL);
    return cpu < 0 || tn < 0 ? -1 : cpu > tn ? cpu : tn;
}

static prt_status qmf_prepare(const op_object *o, const prt_tensor_desc *in,
                              int32_t nb_in, const void *const *data, op_const **out)
{
    (void)nb_in;
    return in[1].dims.nb_dims == 2 ? ql_pack_b_const(o, &in[1], data[1], out) : PRT_OK;
}

typedef struct qmf_job {
    op_qg_args g;
    const void *A;
    float a_scale;
    int32_t a_zp;
    uint8_t fa;
    const uint8_t *B;
    uint8_t fb;
    uint8_t *bp;
    int32_t *colsum;
    int64_t nbn;
    int32_t act; /* MM_ACT_* */
} qmf_job;

/* Rows [r0, r1) of A into A' (rows of K4 bytes) with their sums:
 * quantized from float (DynamicQuantizeLinear's bytes), or copied. */
static void qmf_pack_a_range(void *arg, int64_t r0, int64_t r1)
{
    qmf_job *j = arg;
    const int64_t K = j->g.K, K4 = op_qg_k4(K);
    if (j->fa == 0xff) {
        uint8_t *ap = (uint8_t *)j->g.ap;
        for (int64_t i = r0; i < r1; i++) {
            uint8_t *d = ap + i * K4;
            uint32_t sum[16] = {0};
            int64_t k = 0;
            op_quantize_f32((const float *)j->A + i * K, K, j->a_scale, j->a_zp,
                            PRT_UINT8, d);
            for (int64_t e = K; e < K4; e++)
                d[e] = 0;
            /* 16 lanes (one vector of bytes widened) over K4, zeros past K */
            for (; k + 16 <= K4; k += 16)
                for (int l = 0; l < 16; l++)
                    sum[l] += d[k + l];
            for (; k < K4; k++)
                sum[0] += d[k];
            for (int l = 1; l < 16; l++)
                sum[0] += sum[l];
            ((int32_t *)j->g.rowsum)[i] = (int32_t)sum[0];
        }
        return;
    }
    op_qg_pack_a(K, j->A, K, j->fa, 0, r0, r1, (uint8_t *)j->g.ap,
                 (int32_t *)j->g.rowsum);
}

static void qmf_pack_b_range(void *arg, int64_t s0, int64_t s1)
{
    qmf_job *j = arg;
    op_qg_pack_b(j->g.K, j->g.N, j->B, j->g.N, j->fb, 1, s0, s1, j->bp, j->colsum);
}

static void qmf_block_range(void *arg, int64_t begin, int64_t end)
{
    const qmf_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t i0 = it / j->nbn * QMF_MB, j0 = it % j->nbn * QMF_NB;
        const int64_t i1 = i0 + QMF_MB < j->g.M ? i0 + QMF_MB : j->g.M;
        const int64_t j1 = j0 + QMF_NB < j->g.N ? j0 + QMF_NB : j->g.N;
        op_qg_gemm(&j->g, i0, i1, j0, j1);
        for (int64_t i = i0; j->act != MM_ACT_NONE && i < i1; i++) {
            float *y = (float *)j->g.C + i * j->g.N + j0;
            if (j->act == MM_ACT_GELU)
                op_gelu_f32(y, y, j1 - j0);
            else
                for (int64_t c = 0; c < j1 - j0; c++)
                    y[c] = y[c] < 0.0f ? 0.0f : y[c]; /* NaN stays */
        }
    }
}

static prt_status qmf_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    qmf_inputs q;
    qmf_ws w;
    qmf_job j;
    const ql_packed_b *pc = (const ql_packed_b *)o->cst;
    const int64_t K = in[1].dims.d[0], N = in[1].dims.d[1];
    const int64_t rows = qmf_rows(&in[0].dims);
    const int32_t bdt = in[1].dtype;
    const float *bs;
    int64_t nbs, nbz;
    int32_t alpha;
    (void)dtype, (void)out, (void)nb_out, (void)stream;
    if (rows <= 0 || N <= 0)
        return PRT_OK;
    qmf_inputs_of(o, nb_in, &q);
    (void)qmf_layout(rows, K, N, ws, &w);
    memset(&j, 0, sizeof j);
    j.A = x[0];
    if (q.dynamic) {
        float mn, mx;
        op_minmax_f32((const float *)x[0], rows * K, &mn, &mx);
        opq_dynamic_params(mn, mx, &j.a_scale, &j.a_zp);
        j.fa = 0xff; /* quantize while packing */
        alpha = j.a_zp;
    } else {
        j.a_scale = *(const float *)x[q.a_scale];
        j.a_zp = q.a_zp >= 0 ? (int32_t)op_int_at(x[q.a_zp], in[0].dtype, 0) : 0;
        j.fa = in[0].dtype == PRT_INT8 ? 0x80 : 0; /* int8 ^ 0x80 is the uint8 v + 128 */
        alpha = j.a_zp + (j.fa ? 128 : 0);
    }
    j.fb = bdt == PRT_UINT8 ? 0x80 : 0; /* uint8 ^ 0x80 is the int8 v - 128 */
    bs = (const float *)x[q.b_scale];
    nbs = base_volume(&in[q.b_scale].dims);
    nbz = q.b_zp >= 0 ? base_volume(&in[q.b_zp].dims) : 0;
    for (int64_t c = 0; c < N; c++) {
        const int32_t bz =
            q.b_zp >= 0 ? (int32_t)op_int_at(x[q.b_zp], bdt, nbz > 1 ? c : 0) : 0;
        w.beta[c] = bz + (j.fb ? -128 : 0);
        /* the Mul of DynamicQuantizeLinear's scale by B's, in float32 */
        w.scale[c] = j.a_scale * bs[nbs > 1 ? c : 0];
    }
    if (pc && !ql_const_is(&pc->src, &in[1], x[1]))
        pc = NULL;
    j.B = x[1];
    j.bp = w.bp;
    j.colsum = w.colsum;
    j.g.M = rows;
    j.g.N = N;
    j.g.K = K;
    j.g.ap = w.ap;
    j.g.bp = pc ? pc->panels : w.bp;
    j.g.bp16 = pc ? pc->panels16 : NULL;
    j.g.a_u8 = 1;
    j.g.rowsum = w.rowsum;
    j.g.colsum = pc ? pc->colsum : w.colsum;
    j.g.alpha = &alpha;
    j.g.alpha_step = 0;
    j.g.beta = w.beta;
    j.g.colterm = w.colterm;
    j.g.out = OP_QG_OUT_F32;
    j.g.scale = w.scale;
    j.g.fbias = q.bias >= 0 ? (const float *)x[q.bias] : NULL;
    j.g.C = ys[0];
    j.g.ldc = N;
    j.nbn = (N + QMF_NB - 1) / QMF_NB;
    j.act = ((const mm_op *)o)->act;
    base_parallel_for(rows, OP_QG_MR, qmf_pack_a_range, &j);
    if (!pc)
        base_parallel_for((N + OP_QG_PANEL - 1) / OP_QG_PANEL, 1, qmf_pack_b_range, &j);
    op_qg_colterm(j.g.colsum, w.beta, K, N, w.colterm);
    base_parallel_for((rows + QMF_MB - 1) / QMF_MB * j.nbn, 1, qmf_block_range, &j);
    return PRT_OK;
}

#define QMF_CLASS(KIND, MIN, MAX, DTYPES)                                                \
    {                                                                                    \
        .kind = (KIND), .min_inputs = (MIN), .max_inputs = (MAX), .dtypes = (DTYPES),    \
        .in_dtypes = qmf_in_dtypes, .out_dtype = qmf_out_dtype, .size = sizeof(mm_op),   \
        .alias_input = -1, .shapes = qmf_shapes, .parse = mm_act_parse,                  \
        .serialize = mm_act_serialize, .infer = qmf_infer, .workspace = qmf_workspace,   \
        .run = qmf_run, .prepare = qmf_prepare,                                          \
    }

static const op_class dynamic_quantize_matmul_class =
    QMF_CLASS(QMF_DYNAMIC, 3, 5, OP_DT(PRT_FLOAT32));
static const op_class matmul_integer_to_float_class =
    QMF_CLASS(QMF_INTEGER, 4, 7, OP_DT(PRT_UINT8) | OP_DT(PRT_INT8));

const prt_plugin_creator op_dynamic_quantize_matmul_creator =
    OP_CREATOR("DynamicQuantizeMatMul", dynamic_quantize_matmul_class, mm_act_schema, 1);
const prt_plugin_creator op_matmul_integer_to_float_creator =
    OP_CREATOR("MatMulIntegerToFloat", matmul_integer_to_float_class, mm_act_schema, 1);

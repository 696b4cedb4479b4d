/*
 * MatMulInteger and QLinearMatMul (namespace "plugrt", version "1"; ONNX
 * opset 10): numpy.matmul of two 8-bit tensors less their zero points,
 * with int32 sums; MatMulInteger outputs them, QLinearMatMul requantizes
 * them to y's scale and zero point (qlinear.h). No fields.
 *
 *   MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32
 *   QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 *                 y_scale, y_zero_point) -> y_zero_point's dtype
 *
 * A and B are uint8 or int8 in any mix; shapes and batch broadcasting are
 * MatMul's (matmul.c). Computed by the 8-bit product of qgemm.h: A' rows
 * packed per run (A on the unsigned side), B' in panels (the signed side)
 * packed once when B is a constant of one matrix (qmm_prepare), else per
 * run; the zero points enter through row and column sums, the
 * requantization in the store pass. Blocks of QMM_MB x QMM_NB outputs are
 * spread over the context's threads; integer sums are exact, so the result
 * does not depend on the thread count or the build.
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/qgemm.h"
#include "ops/ops_nn.h"
#include "ops/qlinear.h"

#define QMM_MB 32  /* rows of a block (whole register tiles) */
#define QMM_NB 128 /* columns of a block */

/* The workspace of one run, carved from `base` (NULL: only sized). */
typedef struct qmm_ws {
    uint8_t *ap, *bp;
    int32_t *rowsum, *alpha, *colsum, *beta, *colterm;
    float *scale;
} qmm_ws;

/* Bytes of the workspace for Mt rows of A per product; -1 on overflow. */
static int64_t qmm_layout(int64_t Mt, int64_t K, int64_t N, uint8_t *base, qmm_ws *w)
{
    int64_t off = 0, k4 = op_qg_k4(K), ab, n4;
    qmm_ws unused;
    if (!w)
        w = &unused;
    if (k4 < 0 || !base_mul_i64(Mt, k4, &ab) || !base_mul_i64(N, 4, &n4) ||
        !ql_carve(base, &off, ab, (void **)&w->ap) ||
        !ql_carve(base, &off, op_qg_panel_bytes(K, N), (void **)&w->bp) ||
        !ql_carve(base, &off, Mt * 4, (void **)&w->rowsum) ||
        !ql_carve(base, &off, Mt * 4, (void **)&w->alpha) ||
        !ql_carve(base, &off, n4, (void **)&w->colsum) ||
        !ql_carve(base, &off, n4, (void **)&w->beta) ||
        !ql_carve(base, &off, n4, (void **)&w->colterm) ||
        !ql_carve(base, &off, n4, (void **)&w->scale))
        return -1;
    return off + QL_CARVE_ALIGN;
}

/* Rows of A per product (A's batch stacked when B is one matrix). */
static int64_t qmm_rows(const mm_geom *g)
{
    int64_t rows;
    if (base_volume(&g->bb) != 1)
        return g->M;
    return base_mul_i64(base_volume(&g->ba), g->M, &rows) ? rows : -1;
}

static int64_t qmm_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    ql_inputs q;
    mm_geom g;
    int64_t rows, cpu, tn;
    (void)dtype, (void)out, (void)nb_out;
    ql_inputs_of(o, nb_in, &q);
    if (in[q.a].nb_dims < 1 || in[q.b].nb_dims < 1)
        return -1;
    mm_split(&in[q.a], &in[q.b], &g);
    rows = qmm_rows(&g);
    cpu = qmm_layout(rows, g.K, g.N, NULL, NULL);
    /* CUDA's cuBLASLt path carves its own buffers from the same workspace
     * (ql_tn_layout); the op claims the larger need. */
    tn = ql_tn_layout(rows, g.N, g.K, NULL, NULL);
    return cpu < 0 || tn < 0 ? -1 : cpu > tn ? cpu : tn;
}

static prt_status qmm_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    ql_inputs q;
    prt_dim_exprs ab[2];
    ql_inputs_of(o, nb_in, &q);
    ab[0] = in[q.a];
    ab[1] = in[q.b];
    return mm_shapes(o, ab, 2, out, eb);
}

static prt_status qmm_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    ql_inputs q;
    prt_dims ab[2];
    mm_geom g;
    prt_status st;
    ql_inputs_of(o, nb_in, &q);
    ab[0] = in[q.a];
    ab[1] = in[q.b];
    st = mm_infer(o, ab, 2, out);
    if (st)
        return st;
    mm_split(&ab[0], &ab[1], &g);
    return ql_check_params(o, &q, in, q.kind == QL_MATMUL_INTEGER ? g.M : 0, g.N);
}

/* B's bytes flipped onto the signed side: uint8 ^ 0x80 is the int8 v - 128. */
static uint8_t qmm_b_flip(int32_t dtype)
{
    return dtype == PRT_UINT8 ? 0x80 : 0;
}

static prt_status qmm_prepare(const op_object *o, const prt_tensor_desc *in,
                              int32_t nb_in, const void *const *data, op_const **out)
{
    ql_inputs q;
    const prt_dims *d;
    ql_inputs_of(o, nb_in, &q);
    d = &in[q.b].dims;
    /* one matrix: every batch dim 1 */
    for (int32_t i = 0; i + 2 < d->nb_dims; i++)
        if (d->d[i] != 1)
            return PRT_OK;
    return ql_pack_b_const(o, &in[q.b], data[q.b], out);
}

/* o's packed B when the run's is the constant it was packed from. */
static const ql_packed_b *qmm_const_for(const op_object *o, const prt_tensor_desc *b,
                                        const void *x)
{
    const ql_packed_b *c = (const ql_packed_b *)o->cst;
    return c && ql_const_is(&c->src, b, x) ? c : NULL;
}

/* One product of a run: packing of A and B, then the blocks. */
typedef struct qmm_job {
    op_qg_args g;
    const uint8_t *A, *B;
    uint8_t fa, fb;
    uint8_t *ap, *bp;
    int32_t *rowsum, *colsum;
    int64_t nbn; /* blocks across */
} qmm_job;

static void qmm_pack_a_range(void *arg, int64_t begin, int64_t end)
{
    qmm_job *j = arg;
    op_qg_pack_a(j->g.K, j->A, j->g.K, j->fa, 0, begin, end, j->ap, j->rowsum);
}

static void qmm_pack_b_range(void *arg, int64_t begin, int64_t end)
{
    qmm_job *j = arg;
    op_qg_pack_b(j->g.K, j->g.N, j->B, j->g.N, j->fb, 1, begin, end, j->bp, j->colsum);
}

static void qmm_block_range(void *arg, int64_t begin, int64_t end)
{
    const qmm_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t i0 = it / j->nbn * QMM_MB, j0 = it % j->nbn * QMM_NB;
        op_qg_gemm(&j->g, i0, i0 + QMM_MB < j->g.M ? i0 + QMM_MB : j->g.M, j0,
                   j0 + QMM_NB < j->g.N ? j0 + QMM_NB : j->g.N);
    }
}

static prt_status qmm_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    ql_inputs q;
    ql_values v;
    mm_geom g;
    prt_dims bo;
    qmm_ws w;
    qmm_job j;
    const ql_packed_b *pc;
    int64_t nbat, Mt, nprod, es;
    int32_t da, db;
    prt_status st;
    (void)dtype, (void)nb_out, (void)stream;
    ql_inputs_of(o, nb_in, &q);
    ql_values_of(&q, in, x, &v);
    mm_split(&in[q.a].dims, &in[q.b].dims, &g);
    st = op_broadcast_dims(o, &g.ba, &g.bb, &bo, "the batch dims of A and B");
    if (st)
        return st;
    nbat = base_volume(&bo);
    Mt = qmm_rows(&g);
    nprod = base_volume(&g.bb) == 1 ? 1 : nbat;
    if (Mt <= 0 || g.N <= 0 || nbat <= 0)
        return PRT_OK;
    (void)qmm_layout(Mt, g.K, g.N, ws, &w);
    memset(&j, 0, sizeof j);
    j.fa = v.a_dtype == PRT_INT8 ? 0x80 : 0; /* int8 ^ 0x80 is the uint8 v + 128 */
    j.fb = qmm_b_flip(v.b_dtype);
    da = j.fa ? 128 : 0;
    db = j.fb ? -128 : 0;
    for (int64_t i = 0; i < Mt; i++)
        w.alpha[i] =
            (v.a_zps ? (int32_t)op_int_at(v.a_zps, v.a_dtype, i % g.M) : v.a_zp) + da;
    for (int64_t c = 0; c < g.N; c++) {
        w.beta[c] = ql_b_zp(&v, c) + db;
        w.scale[c] = ql_multiplier(&v, c);
    }
    pc = nprod == 1 ? qmm_const_for(o, &in[q.b], x[q.b]) : NULL;
    j.g.M = Mt;
    j.g.N = g.N;
    j.g.K = g.K;
    j.g.ap = j.ap = w.ap;
    j.g.bp = j.bp = pc ? pc->panels : w.bp;
    j.g.bp16 = pc ? pc->panels16 : NULL;
    j.g.a_u8 = 1;
    j.g.rowsum = j.rowsum = w.rowsum;
    j.g.colsum = j.colsum = pc ? pc->colsum : w.colsum;
    j.g.alpha = w.alpha;
    j.g.alpha_step = 1;
    j.g.beta = w.beta;
    j.g.colterm = w.colterm;
    j.g.out = v.out;
    j.g.scale = v.out == OP_QG_OUT_I32 ? NULL : w.scale;
    j.g.zp = v.y_zp;
    j.g.ldc = g.N;
    j.nbn = (g.N + QMM_NB - 1) / QMM_NB;
    es = (int64_t)prt_dtype_size(out->dtype);
    for (int64_t p = 0; p < nprod; p++) {
        const int64_t oa = nprod == 1 ? 0 : mm_batch_offset(&g.ba, &bo, p) * g.M * g.K;
        const int64_t ob = nprod == 1 ? 0 : mm_batch_offset(&g.bb, &bo, p) * g.K * g.N;
        j.A = (const uint8_t *)x[q.a] + oa;
        j.B = (const uint8_t *)x[q.b] + ob;
        j.g.C = (uint8_t *)ys[0] + p * g.M * g.N * es;
        base_parallel_for(Mt, OP_QG_MR, qmm_pack_a_range, &j);
        if (!pc)
            base_parallel_for((g.N + OP_QG_PANEL - 1) / OP_QG_PANEL, 1, qmm_pack_b_range,
                              &j);
        op_qg_colterm(j.colsum, w.beta, g.K, g.N, w.colterm);
        base_parallel_for((Mt + QMM_MB - 1) / QMM_MB * j.nbn, 1, qmm_block_range, &j);
    }
    return PRT_OK;
}

#define QMM_CLASS(KIND, MIN, MAX)                                                        \
    {                                                                                    \
        .kind = (KIND), .min_inputs = (MIN), .max_inputs = (MAX),                        \
        .dtypes = OP_DT(PRT_UINT8) | OP_DT(PRT_INT8), .in_dtypes = ql_in_dtypes,         \
        .out_dtype = ql_out_dtype, .size = sizeof(op_object), .alias_input = -1,         \
        .shapes = qmm_shapes, .infer = qmm_infer, .workspace = qmm_workspace,            \
        .run = qmm_run, .prepare = qmm_prepare,                                          \
    }

static const op_class matmul_integer_class = QMM_CLASS(QL_MATMUL_INTEGER, 2, 4);
static const op_class qlinear_matmul_class = QMM_CLASS(QL_QLINEAR_MATMUL, 8, 8);

const prt_plugin_creator op_matmul_integer_creator =
    OP_CREATOR("MatMulInteger", matmul_integer_class, NULL, 0);
const prt_plugin_creator op_qlinear_matmul_creator =
    OP_CREATOR("QLinearMatMul", qlinear_matmul_class, NULL, 0);

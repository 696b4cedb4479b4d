/*
 * MatMul (namespace "plugrt", version "1"). One field, activation (below).
 *
 * numpy.matmul semantics: A [..., M, K] x B [..., K, N] -> [..., M, N]; a
 * rank-1 A is [1, K] with that 1 dropped from the output, a rank-1 B is
 * [K, 1] with that 1 dropped (two vectors give a scalar); batch dims
 * broadcast like Add's (op_broadcast_exprs). Scalars are rejected.
 *
 * An optional third input, bias (plugrt's: the ONNX importer fuses a
 * MatMul and the Add of a constant vector into it), holds N values (any
 * rank, every dim but the last 1), added to every row of the product as it
 * is stored; float dtypes only.
 *
 * Field activation (char, plugrt's; default none): "Relu" or "Gelu" (ONNX's
 * Gelu, approximate none), applied to each element of the product (plus
 * bias) before it is stored (the importer's MatMul (-> Add of a bias) ->
 * Relu | Gelu): Relu in the register tiles' epilogue, Gelu on each block of
 * the product while it is in cache. Float dtypes only.
 *
 * float32 through op_gemm_f32_ep (the register tiles, OpenBLAS or the
 * built-in loops; op_common.h) in the blocks of op_gemm_split, spread with
 * base_parallel_for over (batch, block) items: the whole batch is one tall
 * product when B has no batch of its own. The blocks depend on the shapes
 * alone, so the result does not depend on the thread count. float16 and
 * bfloat16 are converted to float32 in the workspace, computed there and
 * rounded once; int32, int64, uint32 and uint64 use plain loops that wrap
 * on overflow, float64 the same loops in double (not threaded).
 *
 * A constant B of one matrix is packed into the register tiles' panels once,
 * when a CPU engine is built or loaded (mm_prepare), and every context's
 * object reads that one copy; a B given at run time is packed per run for
 * tall products (MM_PANEL_*). Either way each element is the same sum.
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/op_common.h"
#include "ops/ops_nn.h"

void mm_split(const prt_dims *a, const prt_dims *b, mm_geom *g)
{
    int32_t ra = a->nb_dims, rb = b->nb_dims;
    memset(g, 0, sizeof *g);
    g->M = ra >= 2 ? a->d[ra - 2] : 1;
    g->K = a->d[ra - 1];
    g->KB = rb >= 2 ? b->d[rb - 2] : b->d[0];
    g->N = rb >= 2 ? b->d[rb - 1] : 1;
    g->ba.nb_dims = ra >= 2 ? ra - 2 : 0;
    g->bb.nb_dims = rb >= 2 ? rb - 2 : 0;
    for (int32_t i = 0; i < g->ba.nb_dims; i++)
        g->ba.d[i] = a->d[i];
    for (int32_t i = 0; i < g->bb.nb_dims; i++)
        g->bb.d[i] = b->d[i];
}

prt_status mm_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                     prt_dim_exprs *out, prt_expr_builder *eb)
{
    const prt_dim_exprs *a = &in[0], *b = &in[1];
    int32_t ra = a->nb_dims, rb = b->nb_dims;
    prt_dim_exprs ba, bb;
    const prt_expr *ka, *kb;
    int64_t va, vb;
    char sa[128], sb[128];
    prt_status st;
    if (ra < 1 || rb < 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "inputs must have rank >= 1 (numpy.matmul takes no "
                       "scalars); A has rank %d, B has rank %d",
                       (int)ra, (int)rb);
    ka = a->d[ra - 1];
    kb = rb >= 2 ? b->d[rb - 2] : b->d[0];
    if (ka != kb && eb->is_constant(eb, ka, &va) && eb->is_constant(eb, kb, &vb) &&
        va != vb)
        return op_fail(o, PRT_ERR_SHAPE,
                       "inner dims differ: A %s has K = %lld, B %s has "
                       "K = %lld",
                       op_exprs_str(eb, a, sa, sizeof sa), (long long)va,
                       op_exprs_str(eb, b, sb, sizeof sb), (long long)vb);
    memset(&ba, 0, sizeof ba);
    memset(&bb, 0, sizeof bb);
    ba.nb_dims = ra >= 2 ? ra - 2 : 0;
    bb.nb_dims = rb >= 2 ? rb - 2 : 0;
    for (int32_t i = 0; i < ba.nb_dims; i++)
        ba.d[i] = a->d[i];
    for (int32_t i = 0; i < bb.nb_dims; i++)
        bb.d[i] = b->d[i];
    st = op_broadcast_exprs(o, eb, &ba, &bb, out, "the batch dims of A and B");
    if (st)
        return st;
    if (ra >= 2)
        out->d[out->nb_dims++] = a->d[ra - 2];
    if (rb >= 2)
        out->d[out->nb_dims++] = b->d[rb - 1];
    if (nb_in == 3) {
        const prt_dim_exprs *c = &in[2];
        const prt_expr *n = rb >= 2 ? b->d[rb - 1] : NULL;
        for (int32_t i = 0; i + 1 < c->nb_dims; i++)
            if (!eb->is_constant(eb, c->d[i], &va) || va != 1)
                return op_fail(o, PRT_ERR_SHAPE,
                               "the bias %s must be a vector of N values (every dim but "
                               "the last 1)",
                               op_exprs_str(eb, c, sa, sizeof sa));
        if (c->nb_dims < 1 ||
            (n && eb->is_constant(eb, n, &va) &&
             eb->is_constant(eb, c->d[c->nb_dims - 1], &vb) && va != vb) ||
            (!n && (!eb->is_constant(eb, c->d[c->nb_dims - 1], &vb) || vb != 1)))
            return op_fail(o, PRT_ERR_SHAPE,
                           "the bias %s must hold N values, one per column of the "
                           "product (B %s)",
                           op_exprs_str(eb, c, sa, sizeof sa),
                           op_exprs_str(eb, b, sb, sizeof sb));
    }
    return PRT_OK;
}

prt_status mm_infer(const op_object *o, const prt_dims *in, int32_t nb_in, prt_dims *out)
{
    mm_geom g;
    char sa[128], sb[128];
    prt_status st;
    if (in[0].nb_dims < 1 || in[1].nb_dims < 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "inputs must have rank >= 1; A has rank %d, B has "
                       "rank %d",
                       (int)in[0].nb_dims, (int)in[1].nb_dims);
    mm_split(&in[0], &in[1], &g);
    if (g.K != g.KB)
        return op_fail(
            o, PRT_ERR_SHAPE,
            "inner dims differ: A %s has K = %lld, B %s has "
            "K = %lld",
            base_dims_format(&in[0], BASE_DIMS_LIST, sa, sizeof sa), (long long)g.K,
            base_dims_format(&in[1], BASE_DIMS_LIST, sb, sizeof sb), (long long)g.KB);
    st = op_broadcast_dims(o, &g.ba, &g.bb, out, "the batch dims of A and B");
    if (st)
        return st;
    if (in[0].nb_dims >= 2)
        out->d[out->nb_dims++] = g.M;
    if (in[1].nb_dims >= 2)
        out->d[out->nb_dims++] = g.N;
    if (nb_in == 3 && (in[2].nb_dims < 1 || in[2].d[in[2].nb_dims - 1] != g.N ||
                       base_volume(&in[2]) != g.N))
        return op_fail(o, PRT_ERR_SHAPE,
                       "the bias %s must hold N = %lld values (every dim but the last 1)",
                       base_dims_format(&in[2], BASE_DIMS_LIST, sa, sizeof sa),
                       (long long)g.N);
    return PRT_OK;
}

/* B packed into the register tiles' panels once per run (op_gemm_pack_panels)
 * when it is one matrix shared by every block and thread, the product is
 * tall enough to repay the copy (MM_PANEL_MIN_M rows with the batch
 * stacked: BERT at batch 8 has 256; at batch 1, 32 rows, the copy of each
 * weight per run made the whole model 1.07-1.12x slower), K at least
 * MM_PANEL_MIN_K and the panels at most MM_PANEL_MAX floats (4 MiB; larger
 * B are OpenBLAS's or not worth a copy per run). */
#define MM_PANEL_MIN_M 128
#define MM_PANEL_MIN_K 64
#define MM_PANEL_MAX (1 << 20)

/* Floats of the half-float copies: A, B, the bias and Y as float32. */
static int64_t mm_half_floats(int32_t dtype, const prt_dims *in, int32_t nb_in,
                              const prt_dims *out)
{
    int64_t n = 0;
    if (dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return 0;
    for (int32_t k = 0; k <= nb_in; k++) {
        int64_t v = base_volume(k < nb_in ? &in[k] : out); /* inputs, then Y */
        if (v < 0 || !base_add_i64(n, v, &n))
            return -1;
    }
    return n;
}

/* The half-float copies, then room for B's panels: for a B of one matrix,
 * the panels of the largest B up to MM_PANEL_MAX, so that any run whose
 * panels fit MM_PANEL_MAX has room for them (K and N never exceed the
 * largest shapes' that this is computed for). */
static int64_t mm_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                            int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = mm_half_floats(dtype, in, nb_in, out), p;
    mm_geom g;
    (void)o;
    if (n < 0 || in[0].nb_dims < 1 || in[1].nb_dims < 1)
        return -1;
    mm_split(&in[0], &in[1], &g);
    if (dtype != PRT_INT32 && dtype != PRT_INT64 && !(OP_DT(dtype) & OP_DT_WIDE) &&
        base_volume(&g.bb) == 1) {
        p = op_gemm_panel_floats(g.KB, g.N);
        if (p < 0 || p > MM_PANEL_MAX)
            p = MM_PANEL_MAX;
        if (!base_add_i64(n, p, &n))
            return -1;
    }
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* C = A * B for integers; unsigned arithmetic wraps instead of overflowing. */
#define MM_INT(NAME, T, U)                                                               \
    static void NAME(int64_t M, int64_t N, int64_t K, const T *A, const T *B, T *C)      \
    {                                                                                    \
        for (int64_t i = 0; i < M; i++) {                                                \
            T *c = C + i * N;                                                            \
            for (int64_t j = 0; j < N; j++)                                              \
                c[j] = 0;                                                                \
            for (int64_t k = 0; k < K; k++) {                                            \
                U av = (U)A[i * K + k];                                                  \
                const T *bk = B + k * N;                                                 \
                for (int64_t j = 0; j < N; j++)                                          \
                    c[j] = (T)((U)c[j] + av * (U)bk[j]);                                 \
            }                                                                            \
        }                                                                                \
    }

MM_INT(mm_i32, int32_t, uint32_t)
MM_INT(mm_i64, int64_t, uint64_t)
MM_INT(mm_u32, uint32_t, uint32_t)
MM_INT(mm_u64, uint64_t, uint64_t)
/* float64: the same loop order (rows of C in vectors), each element's sum
 * in order of k, in double. */
MM_INT(mm_f64, double, double)

/* A row of the integer batch walk: n products of one matrix of A and one
 * of B (each an element of the walk). */
typedef struct mm_batch {
    int32_t dtype;
    int64_t M, N, K;
} mm_batch;

static int mm_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                  int64_t n)
{
    const mm_batch *c = ctx;
    size_t es = prt_dtype_size(c->dtype);
    size_t sa = (size_t)(c->M * c->K) * es, sb = (size_t)(c->K * c->N) * es;
    size_t sy = (size_t)(c->M * c->N) * es;
    for (int64_t j = 0; j < n; j++) {
        const void *a = p[0] + (size_t)(j * s[0]) * sa,
                   *b = p[1] + (size_t)(j * s[1]) * sb;
        void *yj = y + (size_t)j * sy;
        switch (c->dtype) {
        case PRT_INT32:
            mm_i32(c->M, c->N, c->K, a, b, yj);
            break;
        case PRT_UINT32:
            mm_u32(c->M, c->N, c->K, a, b, yj);
            break;
        case PRT_UINT64:
            mm_u64(c->M, c->N, c->K, a, b, yj);
            break;
        case PRT_FLOAT64:
            mm_f64(c->M, c->N, c->K, a, b, yj);
            break;
        default:
            mm_i64(c->M, c->N, c->K, a, b, yj);
            break;
        }
    }
    return 0;
}

/* Element offset of batch b (row-major over bo) in a batch of dims `dims`
 * broadcast to bo, in matrices. */
int64_t mm_batch_offset(const prt_dims *dims, const prt_dims *bo, int64_t b)
{
    int64_t off = 0, stride = 1;
    for (int32_t i = bo->nb_dims - 1, j = dims->nb_dims - 1; i >= 0; i--, j--) {
        int64_t c = b % bo->d[i];
        b /= bo->d[i];
        if (j >= 0) {
            if (dims->d[j] != 1)
                off += c * stride;
            stride *= dims->d[j];
        }
    }
    return off;
}

static const char *const mm_act_names[] = {"", "Relu", "Gelu"};

prt_status mm_act_parse(op_object *o, const op_fields *f)
{
    mm_op *m = (mm_op *)o;
    char name[16];
    int32_t len;
    prt_status st = op_field_str(f, "activation", name, sizeof name, &len);
    m->act = MM_ACT_NONE;
    if (st || len < 0)
        return st;
    for (int32_t k = 0; k < 3; k++)
        if (strcmp(name, mm_act_names[k]) == 0)
            m->act = k;
    if (name[0] && m->act == MM_ACT_NONE)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "activation '%s' is not Relu or Gelu (or empty: none)",
                              name);
    return PRT_OK;
}

int32_t mm_act_serialize(op_object *o, prt_field *ser)
{
    const mm_op *m = (const mm_op *)o;
    if (m->act == MM_ACT_NONE)
        return 0;
    op_ser(&ser[0], "activation", PRT_FIELD_CHAR, mm_act_names[m->act],
           (int64_t)strlen(mm_act_names[m->act]));
    return 1;
}

/* The float products: nbat of M x N x K, each in nbm x nbn blocks of
 * mb x nb (op_gemm_split), one item per (batch, block). */
typedef struct mm_job {
    const float *A, *B, *bias;
    float *Y;
    int32_t act; /* MM_ACT_* */
    /* B packed (MM_PANEL_*, or once for a constant B: op_pack_b), or NULL:
     * B read in place. */
    const float *panels;
    /* 1: every block reads the panels (B itself may not be converted to
     * float32); 0: only the blocks op_gemm_f32_ep would give the register
     * tiles, the others read B in place, so each keeps its bits. */
    int32_t all_panels;
    int64_t M, N, K, mb, nb, nbm, nbn;
    prt_dims ba, bb, bo; /* batch dims; bo empty for one tall product */
} mm_job;

static void mm_range(void *arg, int64_t begin, int64_t end)
{
    const mm_job *j = arg;
    const int64_t per = j->nbm * j->nbn;
    for (int64_t it = begin; it < end; it++) {
        const int64_t b = it / per, bi = it % per / j->nbn, bj = it % j->nbn;
        const int64_t i0 = bi * j->mb, j0 = bj * j->nb;
        const int64_t m = j->M - i0 < j->mb ? j->M - i0 : j->mb;
        const int64_t n = j->N - j0 < j->nb ? j->N - j0 : j->nb;
        const float *a = j->A + mm_batch_offset(&j->ba, &j->bo, b) * j->M * j->K;
        const float *bm = j->B + mm_batch_offset(&j->bb, &j->bo, b) * j->K * j->N;
        op_epilogue e = {NULL,
                         j->bias ? j->bias + j0 : NULL,
                         {j->act == MM_ACT_RELU ? OP_ACT_RELU : OP_ACT_NONE, 0, 0}};
        const op_epilogue *ep = j->bias || j->act == MM_ACT_RELU ? &e : NULL;
        float *y = j->Y + (b * j->M + i0) * j->N + j0;
        if (j->panels && (j->all_panels || op_gemm_takes_nn(m, n, j->K, j->N)))
            op_gemm_nn_panels(m, n, j->K, a + i0 * j->K, j->K, j->panels + j0 * j->K, y,
                              j->N, ep);
        else
            op_gemm_f32_ep(0, 0, m, n, j->K, a + i0 * j->K, j->K, bm + j0, j->N, y, j->N,
                           ep);
        /* The block is still in cache: Gelu on its rows. */
        if (j->act == MM_ACT_GELU)
            for (int64_t r = 0; r < m; r++)
                op_gelu_f32(y + r * j->N, y + r * j->N, n);
    }
}

/* Strips [begin, end) of B into the panels (the workspace's). */
static void mm_pack_range(void *arg, int64_t begin, int64_t end)
{
    const mm_job *j = arg;
    op_gemm_pack_panels(j->K, j->N, j->B, j->N, begin, end, (float *)j->panels);
}

/* A constant B of one matrix (every batch dim 1; A's batch stacks on it)
 * packed once (op_pack_b) when the engine is built or loaded. Runs read it
 * instead of packing B into the workspace (products of MM_PANEL_MIN_M rows
 * or more), and below that the blocks that op_gemm_f32_ep would give the
 * register tiles read it too, with the same sums. */
static prt_status mm_prepare(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                             const void *const *data, op_const **out)
{
    const prt_dims *d = &in[1].dims;
    (void)nb_in;
    if (!data[1] || d->nb_dims < 2)
        return PRT_OK;
    for (int32_t i = 0; i + 2 < d->nb_dims; i++)
        if (d->d[i] != 1)
            return PRT_OK;
    return op_pack_b(o, &in[1], data[1], d->d[d->nb_dims - 2], d->d[d->nb_dims - 1], out);
}

/* Whether every block of j (the four shapes of full and last blocks) takes
 * the register tiles in op_gemm_f32_ep. */
static int mm_blocks_take_nn(const mm_job *j)
{
    const int64_t ms[2] = {j->mb, j->M - (j->nbm - 1) * j->mb};
    const int64_t ns[2] = {j->nb, j->N - (j->nbn - 1) * j->nb};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            if (!op_gemm_takes_nn(ms[a], ns[b], j->K, j->N))
                return 0;
    return 1;
}

static prt_status mm_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    mm_job j;
    mm_geom g;
    const op_packed_b *pc;
    prt_dims dims[3];
    int64_t nbat;
    prt_status st;
    (void)stream;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    mm_split(&in[0].dims, &in[1].dims, &g);
    memset(&j, 0, sizeof j);
    st = op_broadcast_dims(o, &g.ba, &g.bb, &j.bo, "the batch dims of A and B");
    if (st)
        return st;
    if (dtype == PRT_INT32 || dtype == PRT_INT64 || (OP_DT(dtype) & OP_DT_WIDE)) {
        const mm_batch c = {dtype, g.M, g.N, g.K};
        size_t es = prt_dtype_size(dtype);
        const size_t mes[2] = {(size_t)(g.M * g.K) * es, (size_t)(g.K * g.N) * es};
        const prt_dims batch[2] = {g.ba, g.bb};
        const void *mats[2] = {x[0], x[1]};
        if (nb_in == 3 || ((const mm_op *)o)->act != MM_ACT_NONE)
            return op_fail(o, PRT_ERR_UNSUPPORTED,
                           "a bias input or an activation needs float32, float16 or "
                           "bfloat16, not %s",
                           prt_dtype_name(dtype));
        /* The rows never stop the walk. */
        (void)op_bcast_walk(&j.bo, 2, batch, mes, (size_t)(g.M * g.N) * es, mats, y,
                            mm_row, &c);
        return PRT_OK;
    }
    j.M = g.M;
    j.N = g.N;
    j.K = g.K;
    j.ba = g.ba;
    j.bb = g.bb;
    nbat = base_volume(&j.bo);
    if (base_volume(&g.bb) == 1) {
        /* B is one matrix: A's batch rows stack into one tall product. */
        j.M *= nbat;
        nbat = 1;
        j.ba.nb_dims = j.bb.nb_dims = j.bo.nb_dims = 0;
    }
    op_gemm_split(j.M, j.N, j.K, &j.mb, &j.nb);
    j.nbm = j.M > 0 ? (j.M + j.mb - 1) / j.mb : 0;
    j.nbn = j.N > 0 ? (j.N + j.nb - 1) / j.nb : 0;
    /* B in panels for the whole product, packed per run when there is no
     * packed constant. The blocks' columns start at multiples of 16
     * (op_gemm_split), each at its panel. */
    if (nbat == 1 && !j.bo.nb_dims && j.M >= MM_PANEL_MIN_M && j.K >= MM_PANEL_MIN_K &&
        j.N >= 16) {
        int64_t p = op_gemm_panel_floats(j.K, j.N);
        j.all_panels = p > 0 && p <= MM_PANEL_MAX;
    }
    pc = nbat == 1 && j.M > 0 ? op_packed_b_for(o, &in[1], x[1]) : NULL;
    if (pc) {
        j.panels = pc->panels;
        j.all_panels = j.all_panels || mm_blocks_take_nn(&j);
    }
    j.A = x[0];
    j.B = x[1];
    j.bias = nb_in == 3 ? x[2] : NULL;
    j.Y = y;
    j.act = ((const mm_op *)o)->act;
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        float *w = ws;
        const float **dst[3] = {&j.A, &j.B, &j.bias};
        for (int32_t k = 0; k < nb_in; k++) {
            int64_t v = base_volume(&in[k].dims);
            /* A B every block reads from the panels is not needed. */
            if (k != 1 || !pc || !j.all_panels)
                op_to_f32(x[k], dtype, v, w);
            *dst[k] = w;
            w += v;
        }
        j.Y = w;
    }
    if (!pc && j.all_panels) {
        /* After the half-float copies (mm_workspace). */
        j.panels = (float *)ws + mm_half_floats(dtype, dims, nb_in, &out->dims);
        base_parallel_for((j.N + 15) / 16, 1, mm_pack_range, &j);
    }
    base_parallel_for(nbat * j.nbm * j.nbn, 1, mm_range, &j);
    if (j.Y != y)
        op_from_f32(j.Y, dtype, base_volume(&out->dims), y);
    return PRT_OK;
}

#define MM_DTYPES                                                                        \
    (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) |           \
     OP_DT(PRT_FLOAT64) | OP_DT(PRT_UINT32) | OP_DT(PRT_UINT64))

/* A and B of one dtype; the bias too, and only a float one. */
static uint32_t mm_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    if (index == 0)
        return MM_DTYPES;
    if (types[0] < 0 || types[0] >= PRT_DTYPE_COUNT)
        return 0;
    return OP_DT(types[0]) & (index == 1 ? MM_DTYPES : OP_DT_FLOAT | OP_DT(PRT_BFLOAT16));
}

static const op_class matmul_class = {
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = MM_DTYPES,
    .in_dtypes = mm_in_dtypes,
    .size = sizeof(mm_op),
    .alias_input = -1,
    .parse = mm_act_parse,
    .serialize = mm_act_serialize,
    .shapes = mm_shapes,
    .infer = mm_infer,
    .workspace = mm_workspace,
    .run = mm_run,
    .blas = 1,
    .prepare = mm_prepare,
};

const prt_field_schema mm_act_schema[1] = {
    {"activation", PRT_FIELD_CHAR, -1,
     "fused activation: Relu or Gelu, on each element as it is stored (plugrt's)"},
};

const prt_plugin_creator op_matmul_creator =
    OP_CREATOR("MatMul", matmul_class, mm_act_schema, 1);

/*
 * Gemm (namespace "plugrt", version "1"), ONNX opset 13 semantics.
 *
 * Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (M x K), B' =
 * transB ? B^T : B (K x N). A and B are 2-D; C is optional and
 * unidirectionally broadcast to [M, N] (a scalar, [N], [1, N], [M, 1],
 * [M, N], or 1s in their place); Y is [M, N]. float32; float16 and bfloat16
 * are converted to float32 in the workspace and rounded once at the end.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   alpha  float32, default 1
 *   beta   float32, default 1
 *   transA int32, default 0; non-zero transposes A (as ONNX Runtime reads it)
 *   transB int32, default 0
 *
 * The product goes through op_gemm_f32_par (the register tiles, OpenBLAS
 * or the built-in loops, over the context's threads; op_common.h); alpha
 * and C are applied in one pass after it, as ONNX's reference does
 * (dot(A', B') * alpha + C * beta), except that a C of one row or one
 * column with alpha and beta 1 (a Linear layer's bias) is added as each
 * block of the product is stored; a constant B without transposes is
 * packed once into panels (gemm_prepare). When beta is 0, C is not read, so
 * its NaNs and infinities do not reach Y (ONNX's reference and ONNX Runtime
 * skip it too).
 */
#include "ops/cpu/cpu_kernels.h"
#include "ops/op_common.h"
#include "ops/ops_nn.h"

static const gemm_op *cgm(const op_object *o)
{
    return (const gemm_op *)o;
}

static prt_status gemm_parse(op_object *o, const op_fields *f)
{
    gemm_op *g = (gemm_op *)o;
    prt_status st = op_field_f32(f, "alpha", 1.0f, &g->alpha);
    if (!st)
        st = op_field_f32(f, "beta", 1.0f, &g->beta);
    if (!st)
        st = op_field_i32(f, "transA", 0, &g->trans_a);
    if (!st)
        st = op_field_i32(f, "transB", 0, &g->trans_b);
    g->trans_a = g->trans_a != 0;
    g->trans_b = g->trans_b != 0;
    return st;
}

static int32_t gemm_serialize(op_object *o, prt_field *ser)
{
    gemm_op *g = (gemm_op *)o;
    op_ser(&ser[0], "alpha", PRT_FIELD_FLOAT32, &g->alpha, 1);
    op_ser(&ser[1], "beta", PRT_FIELD_FLOAT32, &g->beta, 1);
    op_ser(&ser[2], "transA", PRT_FIELD_INT32, &g->trans_a, 1);
    op_ser(&ser[3], "transB", PRT_FIELD_INT32, &g->trans_b, 1);
    return 4;
}

static prt_status gemm_check_ranks(const op_object *o, int32_t nb_in, int32_t ra,
                                   int32_t rb, int32_t rc)
{
    if (ra != 2 || rb != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "A and B must be 2-D; A has rank %d, B has rank %d", (int)ra,
                       (int)rb);
    if (nb_in == 3 && rc > 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "C must have rank 2 or less (it is broadcast to "
                       "M x N), it has rank %d",
                       (int)rc);
    return PRT_OK;
}

/* The two shape errors, with dims already written out. */
static prt_status gemm_k_fail(const op_object *o, const char *a, int64_t ka,
                              const char *b, int64_t kb)
{
    const gemm_op *g = cgm(o);
    return op_fail(o, PRT_ERR_SHAPE,
                   "inner dims differ: A %s%s has K = %lld, B %s%s has K = %lld", a,
                   g->trans_a ? " (transposed)" : "", (long long)ka, b,
                   g->trans_b ? " (transposed)" : "", (long long)kb);
}

static prt_status gemm_c_fail(const op_object *o, const char *c, const char *y)
{
    return op_fail(o, PRT_ERR_SHAPE,
                   "C %s cannot be broadcast to M x N = %s (each dim of C must be 1 "
                   "or equal)",
                   c, y);
}

static prt_status gemm_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    const gemm_op *g = cgm(o);
    const prt_dim_exprs *a = &in[0], *b = &in[1];
    const prt_expr *ka, *kb;
    int64_t va, vb;
    char sa[128], sb[128];
    prt_status st = gemm_check_ranks(o, nb_in, a->nb_dims, b->nb_dims,
                                     nb_in == 3 ? in[2].nb_dims : 0);
    if (st)
        return st;
    out->nb_dims = 2;
    out->d[0] = a->d[g->trans_a ? 1 : 0];
    out->d[1] = b->d[g->trans_b ? 0 : 1];
    ka = a->d[g->trans_a ? 0 : 1];
    kb = b->d[g->trans_b ? 1 : 0];
    if (ka != kb && eb->is_constant(eb, ka, &va) && eb->is_constant(eb, kb, &vb) &&
        va != vb)
        return gemm_k_fail(o, op_exprs_str(eb, a, sa, sizeof sa), va,
                           op_exprs_str(eb, b, sb, sizeof sb), vb);
    if (nb_in == 3) {
        const prt_dim_exprs *c = &in[2];
        for (int32_t i = 0; i < c->nb_dims; i++) {
            const prt_expr *cd = c->d[i], *od = out->d[2 - c->nb_dims + i];
            if (cd != od && eb->is_constant(eb, cd, &va) && va != 1 &&
                eb->is_constant(eb, od, &vb) && va != vb)
                return gemm_c_fail(o, op_exprs_str(eb, c, sa, sizeof sa),
                                   op_exprs_str(eb, out, sb, sizeof sb));
        }
    }
    return PRT_OK;
}

static prt_status gemm_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    const gemm_op *g = cgm(o);
    const prt_dims *a = &in[0], *b = &in[1];
    int64_t ka, kb;
    char sa[128], sb[128];
    prt_status st = gemm_check_ranks(o, nb_in, a->nb_dims, b->nb_dims,
                                     nb_in == 3 ? in[2].nb_dims : 0);
    if (st)
        return st;
    out->nb_dims = 2;
    out->d[0] = a->d[g->trans_a ? 1 : 0];
    out->d[1] = b->d[g->trans_b ? 0 : 1];
    ka = a->d[g->trans_a ? 0 : 1];
    kb = b->d[g->trans_b ? 1 : 0];
    if (ka != kb)
        return gemm_k_fail(o, base_dims_format(a, BASE_DIMS_LIST, sa, sizeof sa), ka,
                           base_dims_format(b, BASE_DIMS_LIST, sb, sizeof sb), kb);
    if (nb_in == 3) {
        const prt_dims *c = &in[2];
        for (int32_t i = 0; i < c->nb_dims; i++) {
            int64_t cd = c->d[i], od = out->d[2 - c->nb_dims + i];
            if (cd != 1 && cd != od)
                return gemm_c_fail(o, base_dims_format(c, BASE_DIMS_LIST, sa, sizeof sa),
                                   base_dims_format(out, BASE_DIMS_LIST, sb, sizeof sb));
        }
    }
    return PRT_OK;
}

/* Half floats: A, B, C and Y as float32, plus the CUDA kernel's padding
 * between them (GEMM_WS_ALIGN_FLOATS, ops_nn.h). */
static int64_t gemm_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = 3 * GEMM_WS_ALIGN_FLOATS;
    (void)o;
    if (dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return 0;
    for (int32_t k = 0; k <= nb_in; k++) {
        int64_t v = base_volume(k < nb_in ? &in[k] : out); /* inputs, then Y */
        if (v < 0 || !base_add_i64(n, v, &n))
            return -1;
    }
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* C's element strides along Y's rows and columns (0 where it is
 * broadcast). */
void gemm_c_strides(const prt_dims *c, int64_t *si, int64_t *sj)
{
    *si = *sj = 0;
    if (c->nb_dims >= 1 && c->d[c->nb_dims - 1] != 1)
        *sj = 1;
    if (c->nb_dims == 2 && c->d[0] != 1)
        *si = c->d[1];
}

/* A constant B without transposes packed once (op_pack_b), when the
 * engine is built or loaded: the blocks of the product that take the
 * register tiles read it instead of B, whose strips op_gemm_nn would copy
 * per block for 128 rows or more. (With a transpose the blocks take the
 * vector kernels, OpenBLAS or the built-in loops, which read B as it is.) */
static prt_status gemm_prepare(const op_object *o, const prt_tensor_desc *in,
                               int32_t nb_in, const void *const *data, op_const **out)
{
    const gemm_op *g = cgm(o);
    (void)nb_in;
    if (g->trans_a || g->trans_b || !data[1] || in[1].dims.nb_dims != 2)
        return PRT_OK;
    return op_pack_b(o, &in[1], data[1], in[1].dims.d[0], in[1].dims.d[1], out);
}

static prt_status gemm_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const gemm_op *g = cgm(o);
    const float *A = x[0], *B = x[1], *C = nb_in == 3 ? x[2] : NULL;
    float *Y = y;
    int64_t M = out->dims.d[0], N = out->dims.d[1];
    int64_t K = in[0].dims.d[g->trans_a ? 0 : 1];
    int64_t si = 0, sj = 0; /* C's element strides along Y's rows, cols */
    op_epilogue e = {NULL, NULL, {OP_ACT_NONE, 0, 0}};
    const op_packed_b *pb = op_packed_b_for(o, &in[1], x[1]);
    int fold;
    (void)ws;
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        float *w = ws;
        const float **dst[3] = {&A, &B, &C};
        for (int32_t k = 0; k < nb_in; k++) {
            int64_t v = base_volume(&in[k].dims);
            op_to_f32(x[k], dtype, v, w);
            *dst[k] = w;
            w += v;
        }
        Y = w;
    } else if (dtype != PRT_FLOAT32) {
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    if (C && g->beta != 0.0f)
        gemm_c_strides(&in[2].dims, &si, &sj);
    /* A bias per column (a Linear layer's) or per row with alpha = beta =
     * 1 is added as each block of the product is stored. */
    fold = C && g->alpha == 1.0f && g->beta == 1.0f && (si == 0) != (sj == 0);
    e.row_bias = fold && si ? C : NULL;
    e.col_bias = fold && sj ? C : NULL;
    op_gemm_f32_par_panels(g->trans_a, g->trans_b, M, N, K, A, g->trans_a ? M : K, B,
                           g->trans_b ? K : N, pb ? pb->panels : NULL, Y, N,
                           fold ? &e : NULL);
    if (fold) {
        /* done */
    } else if (C && g->beta != 0.0f) {
        for (int64_t i = 0; i < M; i++) {
            float *row = Y + i * N;
            const float *cr = C + i * si;
            for (int64_t j = 0; j < N; j++)
                row[j] = row[j] * g->alpha + cr[j * sj] * g->beta;
        }
    } else if (g->alpha != 1.0f) {
        for (int64_t i = 0; i < M * N; i++)
            Y[i] *= g->alpha;
    }
    if (Y != y)
        op_from_f32(Y, dtype, M * N, y);
    return PRT_OK;
}

static const op_class gemm_class = {
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(gemm_op),
    .alias_input = -1,
    .parse = gemm_parse,
    .serialize = gemm_serialize,
    .shapes = gemm_shapes,
    .infer = gemm_infer,
    .workspace = gemm_workspace,
    .run = gemm_run,
    .blas = 1,
    .prepare = gemm_prepare,
};

static const prt_field_schema gemm_schema[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "scale of A' * B', default 1"},
    {"beta", PRT_FIELD_FLOAT32, 1, "scale of C, default 1"},
    {"transA", PRT_FIELD_INT32, 1, "non-zero: A is K x M, default 0"},
    {"transB", PRT_FIELD_INT32, 1, "non-zero: B is N x K, default 0"},
};

const prt_plugin_creator op_gemm_creator =
    OP_CREATOR("Gemm", gemm_class, gemm_schema,
               (int32_t)(sizeof gemm_schema / sizeof gemm_schema[0]));

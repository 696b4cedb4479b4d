/*
 * Det (namespace "plugrt", version "1"), ONNX opset 11: X [*, M, M] ->
 * Y [*], the determinant of each square matrix of the last two dims (a
 * 2-D X gives a scalar). float32, float16, bfloat16.
 *
 * Each determinant comes from an LU factorization with partial pivoting
 * in double (loss_elem.h's opk_det, which CUDA runs too), rounded once: a
 * singular matrix gives 0 where a float32 LU (numpy's, ONNX's reference)
 * may leave a residue, and an empty matrix (M = 0) gives 1. The workspace
 * holds each matrix's copy, so the matrices are spread over the threads.
 */
#include "base/parallel.h"
#include "ops/ops_loss.h"

void det_geom(const prt_dims *x, int64_t *batch, int64_t *m)
{
    *m = x->d[x->nb_dims - 1];
    *batch = 1;
    for (int32_t i = 0; i < x->nb_dims - 2; i++)
        *batch *= x->d[i];
}

/* The rank, then the two last dims, each a constant or BASE_DIM_UNKNOWN. */
static prt_status det_check(const op_object *o, int32_t r, int64_t a, int64_t b)
{
    if (r < 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has rank %d; it must be [*, M, M], of rank 2 or more", (int)r);
    if (a != b && a != BASE_DIM_UNKNOWN && b != BASE_DIM_UNKNOWN)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X's last two dims are %lld and %lld; a determinant needs square "
                       "matrices",
                       (long long)a, (long long)b);
    return PRT_OK;
}

static prt_status det_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    const int32_t r = in[0].nb_dims;
    int64_t a = BASE_DIM_UNKNOWN, b = BASE_DIM_UNKNOWN;
    prt_status st;
    (void)nb_in;
    if (r >= 2) {
        if (!eb->is_constant(eb, in[0].d[r - 2], &a))
            a = BASE_DIM_UNKNOWN;
        if (!eb->is_constant(eb, in[0].d[r - 1], &b))
            b = BASE_DIM_UNKNOWN;
    }
    st = det_check(o, r, a, b);
    if (st)
        return st;
    *out = in[0];
    out->nb_dims = r - 2;
    return PRT_OK;
}

static prt_status det_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    const int32_t r = in[0].nb_dims;
    prt_status st =
        det_check(o, r, r >= 2 ? in[0].d[r - 2] : 0, r >= 2 ? in[0].d[r - 1] : 0);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    out->nb_dims = r - 2;
    return PRT_OK;
}

/* One copy of every matrix, in double. */
static int64_t det_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = base_volume(&in[0]);
    (void)o, (void)dtype, (void)nb_in, (void)out, (void)nb_out;
    return n >= 0 && base_mul_i64(n, (int64_t)sizeof(double), &n) ? n : -1;
}

typedef struct det_job {
    const void *x;
    void *y;
    double *ws;
    int64_t m;
    int32_t dtype, ydt;
} det_job;

static void det_range(void *arg, int64_t b, int64_t e)
{
    const det_job *j = arg;
    const int64_t mm = j->m * j->m;
    /* 0 x 0 matrices have no workspace (ws NULL) and need none. */
    for (int64_t i = b; i < e; i++)
        opk_float_put(
            j->ydt, j->y, i,
            (float)opk_det(j->dtype, j->x, i * mm, j->m, mm ? j->ws + i * mm : NULL));
}

static prt_status det_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    int64_t batch, m;
    (void)o, (void)nb_in, (void)nb_out, (void)stream;
    det_geom(&in[0].dims, &batch, &m);
    if (batch > 0) {
        det_job j = {x[0], y[0], ws, m, dtype, out[0].dtype};
        /* A matrix costs about m^3 / 3 multiply-adds (one alone is
         * enough work past m = 64). */
        const int64_t cost = m > 64 ? OP_GRAIN_SIMPLE : m * m * m / 3 + 1;
        base_parallel_for(batch, (OP_GRAIN_SIMPLE + cost - 1) / cost, det_range, &j);
    }
    return PRT_OK;
}

static const op_class det_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = det_shapes,
    .infer = det_infer,
    .workspace = det_workspace,
    .run = det_run,
};

const prt_plugin_creator op_det_creator = OP_CREATOR("Det", det_class, NULL, 0);

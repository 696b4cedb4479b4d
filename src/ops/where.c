/*
 * Where (namespace "plugrt", version "1"), ONNX opset 16 semantics (9 to 15
 * the same without bfloat16). No fields.
 *
 * Inputs condition (bool), X and Y (one dtype, any), broadcast together
 * (numpy's rule); y = condition ? X : Y, with X's dtype. Output dims: the
 * broadcast of condition with X, then with Y (op_broadcast_exprs).
 *
 * Shape tensors: when all three inputs have known values, Where states
 * c * x + (1 - c) * y for each element (c being 0 or 1), so shape arithmetic
 * such as Where(Equal(shape, -1), ones, shape) stays an expression.
 */
#include <string.h>

#include "ops/math_ops.h"

static prt_status where_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    prt_dim_exprs cx;
    prt_status st = op_broadcast_exprs(o, eb, &in[0], &in[1], &cx, "condition and X");
    (void)nb_in;
    if (st)
        return st;
    return op_broadcast_exprs(o, eb, &cx, &in[2], out, "condition, X and Y");
}

static prt_status where_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    prt_dims cx;
    prt_status st = op_broadcast_dims(o, &in[0], &in[1], &cx, "condition and X");
    (void)nb_in;
    if (st)
        return st;
    return op_broadcast_dims(o, &cx, &in[2], out, "condition, X and Y");
}

static uint32_t where_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    if (index == 0)
        return OP_DT(PRT_BOOL);
    if (index == 1)
        return OP_DT_ALL;
    return OP_DT(types[1]);
}

static int32_t where_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o;
    return nb_in > 1 ? types[1] : -1;
}

/* One row; ctx points to the element size. */
static int where_row(const void *ctx, const uint8_t *const *p, const int64_t *s,
                     uint8_t *y, int64_t n)
{
    size_t es = *(const size_t *)ctx;
    for (int64_t j = 0; j < n; j++) {
        const uint8_t *src = p[0][j * s[0]] ? p[1] + (size_t)(j * s[1]) * es
                                            : p[2] + (size_t)(j * s[2]) * es;
        memcpy(y + (size_t)j * es, src, es);
    }
    return 0;
}

static int where_row_f32(const void *ctx, const uint8_t *const *p, const int64_t *s,
                         uint8_t *y, int64_t n)
{
    const float *a = (const float *)p[1], *b = (const float *)p[2];
    float *yf = (float *)y;
    (void)ctx;
    for (int64_t j = 0; j < n; j++)
        yf[j] = p[0][j * s[0]] ? a[j * s[1]] : b[j * s[2]];
    return 0;
}

static prt_status where_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    size_t es[3], ves = prt_dtype_size(in[1].dtype);
    prt_dims dims[3];
    (void)o, (void)dtype, (void)nb_in, (void)ws;
    for (int32_t k = 0; k < 3; k++) {
        es[k] = prt_dtype_size(in[k].dtype);
        dims[k] = in[k].dims;
    }
    /* The rows never stop the walk. */
    (void)op_bcast_walk(&out->dims, 3, dims, es, ves, x, y,
                        in[1].dtype == PRT_FLOAT32 ? where_row_f32 : where_row, &ves);
    return PRT_OK;
}

/* c * x + (1 - c) * y per element; a single value broadcasts. */
static prt_status where_values(op_object *o, const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *in_values, int32_t nb_in,
                               const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                               prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims), cnt[3];
    const prt_expr *one = eb->constant(eb, 1);
    (void)o, (void)nb_in;
    if (n < 0 || out_dims->nb_dims > 1 || !one)
        return PRT_OK;
    for (int32_t k = 0; k < 3; k++) {
        cnt[k] = op_static_count(eb, &in_dims[k]);
        if (cnt[k] < 0 || in_values[k].nb_dims != cnt[k] || (cnt[k] != 1 && cnt[k] != n))
            return PRT_OK; /* not known: out_values stays -1 */
    }
    for (int32_t j = 0; j < n; j++) {
        const prt_expr *c = in_values[0].d[cnt[0] == 1 ? 0 : j];
        const prt_expr *a = in_values[1].d[cnt[1] == 1 ? 0 : j];
        const prt_expr *b = in_values[2].d[cnt[2] == 1 ? 0 : j];
        int64_t cv;
        if (eb->is_constant(eb, c, &cv)) {
            out_values->d[j] = cv ? a : b;
            continue;
        }
        out_values->d[j] = eb->operation(
            eb, PRT_DIM_SUM, eb->operation(eb, PRT_DIM_PROD, c, a),
            eb->operation(eb, PRT_DIM_PROD, eb->operation(eb, PRT_DIM_SUB, one, c), b));
    }
    out_values->nb_dims = n;
    return PRT_OK;
}

static const op_class where_class = {
    .min_inputs = 3,
    .max_inputs = 3,
    .dtypes = OP_DT(PRT_BOOL),
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = where_shapes,
    .infer = where_infer,
    .run = where_run,
    .in_dtypes = where_in_dtypes,
    .out_dtype = where_out_dtype,
    .values = where_values,
    .dtype_input = 1, /* X: the condition is bool whatever the data */
};

const prt_plugin_creator op_where_creator = OP_CREATOR("Where", where_class, NULL, 0);

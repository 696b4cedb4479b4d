/*
 * ArgMax and ArgMin (namespace "plugrt", version "1"), ONNX opset 1-19
 * semantics. Input data: any numeric dtype (float32, float16, bfloat16,
 * float64, int8, uint8, int16, uint16, int32, uint32, int64); the output is int64, data's
 * dims with the axis' dim 1 (keepdims 1, the default) or gone (keepdims 0).
 *
 * Fields: axis (default 0; -r to r-1), keepdims (0 or 1), select_last_index
 * (0, the default: the first of equal extremes; 1: the last). A NaN is the
 * extreme of both, as numpy.argmax/argmin take it (the first NaN, or with
 * select_last_index the last). The axis must have elements: an empty one
 * has no index to give, which fails the build (or the run, for a dim only
 * known then).
 */
#include <string.h>

#include "ops/ops_ew.h"
#include "ops/ops_views.h"

enum { ARG_MAX, ARG_MIN };

typedef struct argmax_op {
    op_object o;
    int32_t axis, keepdims, select_last;
} argmax_op;

static prt_status argmax_parse(op_object *o, const op_fields *f)
{
    argmax_op *a = (argmax_op *)o;
    prt_status st = op_field_i32(f, "axis", 0, &a->axis);
    if (!st)
        st = ew_field_flag(f, "keepdims", 1, &a->keepdims);
    if (!st)
        st = ew_field_flag(f, "select_last_index", 0, &a->select_last);
    return st;
}

static int32_t argmax_serialize(op_object *o, prt_field *ser)
{
    argmax_op *a = (argmax_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &a->axis, 1);
    op_ser(&ser[1], "keepdims", PRT_FIELD_INT32, &a->keepdims, 1);
    op_ser(&ser[2], "select_last_index", PRT_FIELD_INT32, &a->select_last, 1);
    return 3;
}

static prt_status empty_axis(const op_object *o, int32_t axis)
{
    return op_fail(o, PRT_ERR_SHAPE, "the axis (dim %d) has no elements, so no index",
                   (int)axis);
}

static prt_status argmax_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    const argmax_op *a = (const argmax_op *)o;
    int32_t axis;
    int64_t v;
    prt_status st = op_axis(o, a->axis, in[0].nb_dims, 0, "data", &axis);
    (void)nb_in;
    if (st)
        return st;
    if (eb->is_constant(eb, in[0].d[axis], &v) && v == 0)
        return empty_axis(o, axis);
    *out = in[0];
    if (a->keepdims) {
        out->d[axis] = eb->constant(eb, 1);
        return PRT_OK;
    }
    out->nb_dims--;
    for (int32_t i = axis; i < out->nb_dims; i++)
        out->d[i] = in[0].d[i + 1];
    return PRT_OK;
}

static prt_status argmax_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    const argmax_op *a = (const argmax_op *)o;
    int32_t axis;
    prt_status st = op_axis(o, a->axis, in[0].nb_dims, 0, "data", &axis);
    (void)nb_in;
    if (st)
        return st;
    if (in[0].d[axis] == 0)
        return empty_axis(o, axis);
    *out = in[0];
    if (a->keepdims) {
        out->d[axis] = 1;
        return PRT_OK;
    }
    out->nb_dims--;
    for (int32_t i = axis; i < out->nb_dims; i++)
        out->d[i] = in[0].d[i + 1];
    return PRT_OK;
}

static int32_t argmax_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)types, (void)nb_in;
    return PRT_INT64;
}

/* Whether v replaces the best b so far: larger (ArgMax) or smaller, or a
 * NaN where b is not one; with select_last also an equal value, or a later
 * NaN. */
#define ARG_BETTER(v, b)                                                                 \
    (last ? (kind == ARG_MAX ? (v) >= (b) : (v) <= (b)) || (v) != (v)                    \
          : (kind == ARG_MAX ? (v) > (b) : (v) < (b)) || ((v) != (v) && (b) == (b)))

/* One outer slice: n rows of `inner` elements at x (dtype), indices into
 * y[inner]; `best` holds inner values (workspace). */
#define ARG_SLICE(T, LOAD)                                                               \
    do {                                                                                 \
        T *best = ws;                                                                    \
        T buf[EW_CHUNK];                                                                 \
        if (inner == 1) {                                                                \
            T b = 0;                                                                     \
            int64_t bi = 0;                                                              \
            for (int64_t k = 0; k < n; k += EW_CHUNK) {                                  \
                int64_t m = n - k < EW_CHUNK ? n - k : EW_CHUNK;                         \
                LOAD(x + (size_t)k * es, dtype, 1, m, buf);                              \
                if (k == 0)                                                              \
                    b = buf[0];                                                          \
                for (int64_t j = 0; j < m; j++)                                          \
                    if (ARG_BETTER(buf[j], b)) {                                         \
                        b = buf[j];                                                      \
                        bi = k + j;                                                      \
                    }                                                                    \
            }                                                                            \
            y[0] = bi;                                                                   \
            break;                                                                       \
        }                                                                                \
        for (int64_t k = 0; k < n; k++)                                                  \
            for (int64_t j = 0; j < inner; j += EW_CHUNK) {                              \
                int64_t m = inner - j < EW_CHUNK ? inner - j : EW_CHUNK;                 \
                LOAD(x + (size_t)(k * inner + j) * es, dtype, 1, m, buf);                \
                for (int64_t i = 0; i < m; i++)                                          \
                    if (k == 0 || ARG_BETTER(buf[i], best[j + i])) {                     \
                        best[j + i] = buf[i];                                            \
                        y[j + i] = k;                                                    \
                    }                                                                    \
            }                                                                            \
    } while (0)

/* The values of the current best of each column: one per inner element. */
static int64_t argmax_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                                int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    const argmax_op *a = (const argmax_op *)o;
    int32_t axis;
    int64_t inner = 1;
    (void)dtype, (void)nb_in, (void)out;
    if (op_axis(o, a->axis, in[0].nb_dims, 0, "data", &axis))
        return 0; /* no run: infer fails first */
    for (int32_t i = axis + 1; i < in[0].nb_dims; i++)
        if (!base_mul_i64(inner, in[0].d[i] > 0 ? in[0].d[i] : 1, &inner))
            return -1;
    return base_mul_i64(inner, 8, &inner) ? inner : -1;
}

static prt_status argmax_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *xs, void *const *yss, void *ws,
                             void *stream)
{
    void *ys = yss[0];
    const argmax_op *a = (const argmax_op *)o;
    const int32_t kind = o->cls->kind, last = a->select_last;
    const prt_dims *d = &in[0].dims;
    const size_t es = prt_dtype_size(dtype);
    int64_t outer, inner, n;
    int32_t axis = 0;
    prt_status st = op_axis(o, a->axis, d->nb_dims, 0, "data", &axis);
    (void)nb_in, (void)out, (void)stream;
    if (st)
        return st;
    ew_axis_split(d, axis, &outer, &inner);
    n = d->d[axis];
    for (int64_t s = 0; s < outer; s++) {
        const uint8_t *x = (const uint8_t *)xs[0] + (size_t)(s * n * inner) * es;
        int64_t *y = (int64_t *)ys + s * inner;
        if (ew_is_float(dtype) || dtype == PRT_FLOAT64)
            ARG_SLICE(double, ew_load_f64);
        else
            ARG_SLICE(int64_t, ew_load_i64);
    }
    return PRT_OK;
}

prt_status op_argmax_view_of(const op_object *o, const prt_dims *x, op_axis_view *v)
{
    const argmax_op *a = (const argmax_op *)o;
    prt_status st;
    memset(v, 0, sizeof *v);
    st = op_axis(o, a->axis, x->nb_dims, 0, "data", &v->axis);
    if (st)
        return st;
    ew_axis_split(x, v->axis, &v->outer, &v->inner);
    v->n = x->d[v->axis];
    v->is_min = o->cls->kind == ARG_MIN;
    v->last = a->select_last;
    return PRT_OK;
}

#define ARG_CLASS(k)                                                                     \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1,                                   \
        .dtypes = EW_DT_NUMERIC | OP_DT(PRT_FLOAT64) | OP_DT(PRT_INT16) |                \
                  OP_DT(PRT_UINT16) | OP_DT(PRT_UINT32),                                 \
        .size = sizeof(argmax_op), .alias_input = -1, .parse = argmax_parse,             \
        .serialize = argmax_serialize, .shapes = argmax_shapes, .infer = argmax_infer,   \
        .workspace = argmax_workspace, .run = argmax_run, .out_dtype = argmax_out_dtype, \
    }

static const op_class argmax_class = ARG_CLASS(ARG_MAX);
static const op_class argmin_class = ARG_CLASS(ARG_MIN);

static const prt_field_schema arg_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis, default 0; -r to r-1"},
    {"keepdims", PRT_FIELD_INT32, 1, "1 (default): the axis stays as 1; 0: it goes"},
    {"select_last_index", PRT_FIELD_INT32, 1,
     "0 (default): the first of equal extremes; 1: the last"},
};

const prt_plugin_creator op_argmax_creator =
    OP_CREATOR("ArgMax", argmax_class, arg_schema, 3);
const prt_plugin_creator op_argmin_creator =
    OP_CREATOR("ArgMin", argmin_class, arg_schema, 3);

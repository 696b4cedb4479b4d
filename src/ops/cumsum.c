/*
 * CumSum (namespace "plugrt", version "1"), ONNX opset 11-19 semantics.
 * Input x: float32, float16, bfloat16, float64, int32, int64, uint32, uint64;
 * the output has its
 * dims and dtype: running sums along one axis.
 *
 * The axis is a shape input (ONNX's 0-D input `axis`), whose value must be
 * known at build time, or field axis; in [-r, r-1]. get_output_shapes
 * resolves the input's value and serializes it as the field, so the
 * engine's layer has no such input. Fields exclusive (0 default, or 1):
 * each sum leaves out its own element (the first is 0); reverse (0 or 1):
 * the sums run from the end.
 *
 * Floats accumulate in float32 in order (as numpy.cumsum does for float32),
 * half floats rounded once per output; float64 in double; integers in
 * int64, wrapping (uint64 as its bits: the same sums modulo 2^64).
 */
#include <string.h>

#include "ops/ops_ew.h"
#include "ops/ops_views.h"

typedef struct cumsum_op {
    op_object o;
    int32_t exclusive, reverse;
    int32_t nb_field, field; /* field axis at creation: nb_field 1, else -1 */
    int32_t nb_axis, axis;   /* the axis in use; nb_axis -1 until known */
} cumsum_op;

static prt_status cumsum_parse(op_object *o, const op_fields *f)
{
    cumsum_op *c = (cumsum_op *)o;
    prt_status st = ew_field_flag(f, "exclusive", 0, &c->exclusive);
    if (!st)
        st = ew_field_flag(f, "reverse", 0, &c->reverse);
    if (!st)
        st = op_field_i32_array(f, "axis", &c->field, 1, &c->nb_field);
    c->nb_axis = c->nb_field;
    c->axis = c->field;
    return st;
}

static int32_t cumsum_serialize(op_object *o, prt_field *ser)
{
    cumsum_op *c = (cumsum_op *)o;
    op_ser(&ser[0], "exclusive", PRT_FIELD_INT32, &c->exclusive, 1);
    op_ser(&ser[1], "reverse", PRT_FIELD_INT32, &c->reverse, 1);
    if (c->nb_axis < 0)
        return 2;
    op_ser(&ser[2], "axis", PRT_FIELD_INT32, &c->axis, 1);
    return 3;
}

/* The axis in [0, r) from the field or shape input values. */
static prt_status cumsum_axis(op_object *o, const int32_t *field, int32_t nb_field,
                              const prt_dim_exprs *sv, int32_t nb_sv,
                              prt_expr_builder *eb, int32_t r, int32_t *out)
{
    int32_t ax[PRT_MAX_DIMS], n;
    prt_status st = ew_const_axes(o, field, nb_field, sv, nb_sv, eb, r, "axis", ax, &n);
    if (st)
        return st;
    if (n < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "needs the axis (an input)");
    if (n != 1)
        return op_fail(o, PRT_ERR_SHAPE, "the axis must be one value, not %d", (int)n);
    *out = ax[0];
    return PRT_OK;
}

static prt_status cumsum_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    cumsum_op *c = (cumsum_op *)o;
    prt_status st =
        cumsum_axis(o, &c->field, c->nb_field, sv, nb_sv, eb, in[0].nb_dims, &c->axis);
    (void)nb_in;
    if (st)
        return st;
    c->nb_axis = 1;
    *out = in[0];
    return PRT_OK;
}

static prt_status cumsum_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    const cumsum_op *c = (const cumsum_op *)o;
    int32_t axis = 0;
    (void)nb_in;
    *out = in[0];
    return cumsum_axis((op_object *)o, &c->axis, c->nb_axis, NULL, 0, NULL, in[0].nb_dims,
                       &axis);
}

/* The running sums of one slice: 8 bytes per element after the axis. */
static int64_t cumsum_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                                int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    const cumsum_op *c = (const cumsum_op *)o;
    int64_t inner = 8;
    (void)dtype, (void)nb_in, (void)out;
    if (c->nb_axis < 0)
        return 0;
    for (int32_t i = c->axis + 1; i < in[0].nb_dims; i++)
        if (!base_mul_i64(inner, in[0].d[i] > 0 ? in[0].d[i] : 1, &inner))
            return -1;
    return inner;
}

/* One step along the axis: acc[j] += x[j] with y[j] the sum before
 * (exclusive) or after it, for m elements. */
#define CS_STEP(T)                                                                       \
    do {                                                                                 \
        if (c->exclusive)                                                                \
            for (int64_t i = 0; i < m; i++) {                                            \
                T v = buf[i];                                                            \
                buf[i] = acc[j + i];                                                     \
                acc[j + i] = ADD(acc[j + i], v);                                         \
            }                                                                            \
        else                                                                             \
            for (int64_t i = 0; i < m; i++)                                              \
                buf[i] = acc[j + i] = ADD(acc[j + i], buf[i]);                           \
    } while (0)

static prt_status cumsum_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *xs, void *const *yss, void *ws,
                             void *stream)
{
    void *ys = yss[0];
    const cumsum_op *c = (const cumsum_op *)o;
    const prt_dims *d = &in[0].dims;
    const size_t es = prt_dtype_size(dtype);
    int64_t outer, inner, n;
    int32_t axis = 0;
    prt_status st = cumsum_axis((op_object *)o, &c->axis, c->nb_axis, NULL, 0, NULL,
                                d->nb_dims, &axis);
    (void)nb_in, (void)out, (void)stream;
    if (st)
        return st;
    ew_axis_split(d, axis, &outer, &inner);
    n = d->d[axis];
    for (int64_t s = 0; s < outer; s++) {
        for (int64_t j = 0; j < inner; j++) {
            if (ew_is_float(dtype))
                ((float *)ws)[j] = 0.0f;
            else if (dtype == PRT_FLOAT64)
                ((double *)ws)[j] = 0.0;
            else
                ((int64_t *)ws)[j] = 0;
        }
        for (int64_t t = 0; t < n; t++) {
            int64_t k = c->reverse ? n - 1 - t : t;
            size_t off = (size_t)((s * n + k) * inner) * es;
            const uint8_t *x = (const uint8_t *)xs[0] + off;
            uint8_t *y = (uint8_t *)ys + off;
            for (int64_t j = 0; j < inner; j += EW_CHUNK) {
                int64_t m = inner - j < EW_CHUNK ? inner - j : EW_CHUNK;
                if (ew_is_float(dtype)) {
                    float buf[EW_CHUNK], *acc = ws;
#define ADD(a, b) ((a) + (b))
                    ew_load_f32(x + (size_t)j * es, dtype, 1, m, buf);
                    CS_STEP(float);
#undef ADD
                    op_from_f32(buf, dtype, m, y + (size_t)j * es);
                } else if (dtype == PRT_FLOAT64) {
                    double buf[EW_CHUNK], *acc = ws;
#define ADD(a, b) ((a) + (b))
                    memcpy(buf, x + (size_t)j * es, sizeof(double) * (size_t)m);
                    CS_STEP(double);
#undef ADD
                    memcpy(y + (size_t)j * es, buf, sizeof(double) * (size_t)m);
                } else {
                    int64_t buf[EW_CHUNK], *acc = ws;
#define ADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
                    ew_load_i64(x + (size_t)j * es, dtype, 1, m, buf);
                    CS_STEP(int64_t);
#undef ADD
                    ew_store_i64(buf, dtype, m, y + (size_t)j * es);
                }
            }
        }
    }
    return PRT_OK;
}

prt_status op_cumsum_view_of(const op_object *o, const prt_dims *x, op_axis_view *v)
{
    const cumsum_op *c = (const cumsum_op *)o;
    prt_status st;
    memset(v, 0, sizeof *v);
    st = cumsum_axis((op_object *)o, &c->axis, c->nb_axis, NULL, 0, NULL, x->nb_dims,
                     &v->axis);
    if (st)
        return st;
    ew_axis_split(x, v->axis, &v->outer, &v->inner);
    v->n = x->d[v->axis];
    v->exclusive = c->exclusive;
    v->reverse = c->reverse;
    return PRT_OK;
}

static const op_class cumsum_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = EW_DT_FLOATS | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) | OP_DT(PRT_FLOAT64) |
              OP_DT(PRT_UINT32) | OP_DT(PRT_UINT64),
    .size = sizeof(cumsum_op),
    .alias_input = -1,
    .parse = cumsum_parse,
    .serialize = cumsum_serialize,
    .infer = cumsum_infer,
    .workspace = cumsum_workspace,
    .run = cumsum_run,
    .min_shape_inputs = 0,
    .max_shape_inputs = 1,
    .shapes_sv = cumsum_shapes,
};

static const prt_field_schema cumsum_schema[] = {
    {"exclusive", PRT_FIELD_INT32, 1, "1: each sum leaves out its element; default 0"},
    {"reverse", PRT_FIELD_INT32, 1, "1: the sums run from the end; default 0"},
    {"axis", PRT_FIELD_INT32, 1, "the axis, when not given as a shape input"},
};

const prt_plugin_creator op_cumsum_creator =
    OP_CREATOR("CumSum", cumsum_class, cumsum_schema, 3);

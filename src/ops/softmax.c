/*
 * Softmax and LogSoftmax (namespace "plugrt", version "1"). float32,
 * float16, bfloat16, float64 (in double); the output has the input's dims,
 * rank >= 1.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   axis       int32, default -1; in [-r, r-1] for an input of rank r,
 *              negative counting from the end
 *   coerce_2d  int32 0 or 1, default 0. 0: ONNX opset 13 semantics, along
 *              the one axis. 1: opsets 1-12, X coerced to 2-D at `axis`:
 *              each row holds all of X's dims from `axis` on (the importer
 *              sets it, and axis's default 1 there).
 *
 * Softmax y_i = exp(x_i - max) / sum_j exp(x_j - max), LogSoftmax
 * y_i = x_i - max - log(sum_j exp(x_j - max)), over each row: subtracting
 * the maximum keeps exp from overflowing (ONNX's reference does the same),
 * so large inputs give exact 0s and 1s rather than inf/inf. The sum is kept
 * in double. A NaN in a row makes the row NaN; +inf makes it NaN (inf -
 * inf), as in the reference. Half floats compute in float32 in the
 * workspace and round once.
 */
#include <math.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/math_ops.h"
#include "ops/ops_nn.h"

typedef struct softmax_op {
    op_object o;
    int32_t axis;
    int32_t coerce_2d;
} softmax_op;

static prt_status softmax_parse(op_object *o, const op_fields *f)
{
    softmax_op *s = (softmax_op *)o;
    prt_status st = op_field_i32(f, "axis", -1, &s->axis);
    if (!st)
        st = op_field_i32(f, "coerce_2d", 0, &s->coerce_2d);
    if (!st && s->coerce_2d != 0 && s->coerce_2d != 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "coerce_2d is %d; it must be 0 or 1",
                     (int)s->coerce_2d);
    return st;
}

static int32_t softmax_serialize(op_object *o, prt_field *ser)
{
    softmax_op *s = (softmax_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &s->axis, 1);
    op_ser(&ser[1], "coerce_2d", PRT_FIELD_INT32, &s->coerce_2d, 1);
    return 2;
}

/* The axis for rank r, in [0, r). */
static prt_status softmax_axis(const op_object *o, int32_t r, int32_t *out)
{
    return op_axis(o, ((const softmax_op *)o)->axis, r, 0, "an input", out);
}

static prt_status softmax_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                 prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t axis;
    (void)nb_in, (void)eb;
    *out = in[0];
    return softmax_axis(o, in[0].nb_dims, &axis);
}

static prt_status softmax_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                                prt_dims *out)
{
    int32_t axis;
    (void)nb_in;
    *out = in[0];
    return softmax_axis(o, in[0].nb_dims, &axis);
}

/* Half floats: the input as float32, computed in place. */
static int64_t softmax_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                                 int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = base_volume(&in[0]);
    (void)o, (void)nb_in, (void)out;
    if (dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return 0;
    return n >= 0 && base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* y = softmax(x) (log: log softmax) over n elements spaced `stride` apart;
 * x may be y. */
static void softmax_row(const float *x, float *y, int64_t n, int64_t stride, int take_log)
{
    float mx = -INFINITY;
    double sum = 0.0;
    float inv;
    for (int64_t k = 0; k < n; k++) {
        float v = x[k * stride];
        if (v > mx || v != v)
            mx = v;
        if (v != v)
            break; /* NaN: the row is NaN whatever else it holds */
    }
    if (take_log) {
        float ls;
        for (int64_t k = 0; k < n; k++)
            sum += expf(x[k * stride] - mx);
        ls = (float)log(sum);
        for (int64_t k = 0; k < n; k++)
            y[k * stride] = (x[k * stride] - mx) - ls;
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        float e = expf(x[k * stride] - mx);
        y[k * stride] = e;
        sum += e;
    }
    inv = (float)(1.0 / sum);
    for (int64_t k = 0; k < n; k++)
        y[k * stride] *= inv;
}

/* softmax_row in double (float64's rows). */
static void softmax_row_f64(const double *x, double *y, int64_t n, int64_t stride,
                            int take_log)
{
    double mx = -INFINITY, sum = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double v = x[k * stride];
        if (v > mx || v != v)
            mx = v;
        if (v != v)
            break;
    }
    for (int64_t k = 0; k < n; k++) {
        double e = exp(x[k * stride] - mx);
        if (!take_log)
            y[k * stride] = e;
        sum += e;
    }
    if (take_log) {
        double ls = log(sum);
        for (int64_t k = 0; k < n; k++)
            y[k * stride] = (x[k * stride] - mx) - ls;
        return;
    }
    for (int64_t k = 0; k < n; k++)
        y[k * stride] /= sum;
}

typedef struct softmax_job {
    const float *src;
    float *dst;
    int64_t n, inner;
    int take_log, f64;
} softmax_job;

/* Rows [b, e) of outer x inner: each row whole on one thread, in its own
 * order, so the split never changes a bit. */
static void softmax_range(void *arg, int64_t b, int64_t e)
{
    const softmax_job *j = arg;
    for (int64_t r = b; r < e; r++) {
        int64_t base = r / j->inner * j->n * j->inner + r % j->inner;
        if (j->f64) {
            softmax_row_f64((const double *)(const void *)j->src + base,
                            (double *)(void *)j->dst + base, j->n, j->inner, j->take_log);
            continue;
        }
        /* A contiguous row with a finite largest value: the vector kernel. */
        if (j->inner == 1 && j->n > 0 &&
            op_softmax_row(j->src + base, j->dst + base, j->n, j->take_log))
            continue;
        softmax_row(j->src + base, j->dst + base, j->n, j->inner, j->take_log);
    }
}

/* The rows: x viewed as [outer, n, inner], each row n elements spaced
 * inner apart. */
prt_status softmax_view(const op_object *o, const prt_dims *d, int64_t *outer, int64_t *n,
                        int64_t *inner)
{
    int32_t axis = 0;
    prt_status st = softmax_axis(o, d->nb_dims, &axis);
    if (st)
        return st;
    *outer = *inner = 1;
    for (int32_t i = 0; i < axis; i++)
        *outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        *inner *= d->d[i];
    *n = d->d[axis];
    if (((const softmax_op *)o)->coerce_2d) {
        /* One row per index of the dims before the axis. */
        *n *= *inner;
        *inner = 1;
    }
    return PRT_OK;
}

static prt_status softmax_run(const op_object *o, int32_t dtype,
                              const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out,
                              const void *const *x, void *const *ys, void *ws,
                              void *stream)
{
    void *y = ys[0];
    const prt_dims *d = &in[0].dims;
    int64_t outer, inner, n, total = base_volume(d);
    const float *src = x[0];
    float *dst = y;
    prt_status st = softmax_view(o, d, &outer, &n, &inner);
    (void)nb_in, (void)out;
    if (st)
        return st;
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        op_to_f32(x[0], dtype, total, ws);
        src = dst = ws;
    } else if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT64) {
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    {
        softmax_job j = {
            src, dst, n, inner, o->cls->kind == LOG_SOFTMAX, dtype == PRT_FLOAT64};
        /* A row costs an exp per element. */
        base_parallel_for(outer * inner,
                          n > 0 ? (OP_GRAIN_MATH + n - 1) / n : outer * inner,
                          softmax_range, &j);
    }
    if (dst != y)
        op_from_f32(dst, dtype, total, y);
    return PRT_OK;
}

#define SOFTMAX_CLASS(NAME, KIND)                                                        \
    static const op_class NAME = {                                                       \
        .kind = (KIND),                                                                  \
        .min_inputs = 1,                                                                 \
        .max_inputs = 1,                                                                 \
        .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_FLOAT64),                \
        .size = sizeof(softmax_op),                                                      \
        .alias_input = -1,                                                               \
        .parse = softmax_parse,                                                          \
        .serialize = softmax_serialize,                                                  \
        .shapes = softmax_shapes,                                                        \
        .infer = softmax_infer,                                                          \
        .workspace = softmax_workspace,                                                  \
        .run = softmax_run,                                                              \
    }

SOFTMAX_CLASS(softmax_class, SOFTMAX);
SOFTMAX_CLASS(log_softmax_class, LOG_SOFTMAX);

static const prt_field_schema softmax_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis softmax runs along, default -1; -r to r-1"},
    {"coerce_2d", PRT_FIELD_INT32, 1,
     "1: rows hold every dim from axis on (ONNX opsets 1-12); default 0"},
};

const prt_plugin_creator op_softmax_creator =
    OP_CREATOR("Softmax", softmax_class, softmax_schema, 2);
const prt_plugin_creator op_log_softmax_creator =
    OP_CREATOR("LogSoftmax", log_softmax_class, softmax_schema, 2);

/*
 * Softmax (namespace "plugrt", version "1"), ONNX opset 13 semantics: along
 * one axis (not the opset 1-12 flatten-to-2-D rule). float32, float16,
 * bfloat16; the output has the input's dims, rank >= 1.
 *
 * Field axis (int32, default -1; int64 accepted), in [-r, r-1] for an input
 * of rank r, negative counting from the end.
 *
 * y_i = exp(x_i - max) / sum_j exp(x_j - max) over the axis: subtracting the
 * maximum keeps exp from overflowing (ONNX's reference does the same), so
 * large inputs give exact 0s and 1s rather than inf/inf. The sum is kept in
 * double. A NaN in a row makes the row NaN; +inf makes it NaN (inf - inf), as
 * in the reference. Half floats compute in float32 in the workspace and
 * round once.
 */
#include <math.h>

#include "ops/math_ops.h"

typedef struct softmax_op {
    op_object o;
    int32_t axis;
} softmax_op;

static prt_status softmax_parse(op_object *o, const op_fields *f)
{
    return op_field_i32(f, "axis", -1, &((softmax_op *)o)->axis);
}

static int32_t softmax_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &((softmax_op *)o)->axis, 1);
    return 1;
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
                                 int32_t nb_in, const prt_dims *out)
{
    int64_t n = base_volume(&in[0]);
    (void)o, (void)nb_in, (void)out;
    if (dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return 0;
    return n >= 0 && base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* y = softmax(x) over n elements spaced `stride` apart; x may be y. */
static void softmax_row(const float *x, float *y, int64_t n, int64_t stride)
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
    for (int64_t k = 0; k < n; k++) {
        float e = expf(x[k * stride] - mx);
        y[k * stride] = e;
        sum += e;
    }
    inv = (float)(1.0 / sum);
    for (int64_t k = 0; k < n; k++)
        y[k * stride] *= inv;
}

static prt_status softmax_run(const op_object *o, int32_t dtype,
                              const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, const void *const *x, void *y,
                              void *ws, void *stream)
{
    const prt_dims *d = &in[0].dims;
    int64_t outer = 1, inner = 1, n, total = base_volume(d);
    int32_t axis = 0;
    const float *src = x[0];
    float *dst = y;
    prt_status st = softmax_axis(o, d->nb_dims, &axis);
    (void)nb_in, (void)out;
    if (st)
        return st;
    for (int32_t i = 0; i < axis; i++)
        outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    n = d->d[axis];
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        op_to_f32(x[0], dtype, total, ws);
        src = dst = ws;
    } else if (dtype != PRT_FLOAT32) {
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t base = i * n * inner + j;
            softmax_row(src + base, dst + base, n, inner);
        }
    if (dst != y)
        op_from_f32(dst, dtype, total, y);
    return PRT_OK;
}

static const op_class softmax_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(softmax_op),
    .alias_input = -1,
    .parse = softmax_parse,
    .serialize = softmax_serialize,
    .shapes = softmax_shapes,
    .infer = softmax_infer,
    .workspace = softmax_workspace,
    .run = {[PRT_DEVICE_CPU] = softmax_run},
};

static const prt_field_schema softmax_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis softmax runs along, default -1; -r to r-1"},
};

const prt_plugin_creator op_softmax_creator =
    OP_CREATOR("Softmax", softmax_class, softmax_schema, 1);

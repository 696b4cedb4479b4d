/*
 * Hardmax (namespace "plugrt", version "1"), ONNX opsets 1 to 13: 1 at the
 * first maximum of each row and 0 elsewhere; float32, float16, bfloat16;
 * the output has the input's dims (rank >= 1) and dtype.
 *
 * Fields:
 *   axis (int32), in [-r, r-1].
 *   coerce_2d (int32, default 0): 0 is opset 13's rule, rows along `axis`
 *     alone (default axis -1); 1 is opsets 1 to 12's, the input viewed as
 *     2-D [d0 * .. * d(axis-1), d(axis) * .. * d(r-1)] with rows of the
 *     second dim (default axis 1). The importer sets it by opset.
 *
 * NaN compares greater than every number and the first NaN wins, as
 * numpy.argmax does; the standard plugin CustomHardmax has the same rule.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/ops_views.h"

typedef struct hardmax_op {
    op_object o;
    int32_t axis;
    int32_t coerce_2d;
} hardmax_op;

static prt_status hm_parse(op_object *o, const op_fields *f)
{
    hardmax_op *h = (hardmax_op *)o;
    prt_status st = op_field_i32(f, "coerce_2d", 0, &h->coerce_2d);
    h->coerce_2d = h->coerce_2d != 0;
    if (!st)
        st = op_field_i32(f, "axis", h->coerce_2d ? 1 : -1, &h->axis);
    return st;
}

static int32_t hm_serialize(op_object *o, prt_field *ser)
{
    hardmax_op *h = (hardmax_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &h->axis, 1);
    op_ser(&ser[1], "coerce_2d", PRT_FIELD_INT32, &h->coerce_2d, 1);
    return 2;
}

static prt_status hm_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t axis;
    (void)nb_in, (void)eb;
    *out = in[0];
    return op_axis(o, ((hardmax_op *)o)->axis, in[0].nb_dims, 0, "the input", &axis);
}

static prt_status hm_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    int32_t axis;
    (void)nb_in;
    *out = in[0];
    return op_axis(o, ((const hardmax_op *)o)->axis, in[0].nb_dims, 0, "the input",
                   &axis);
}

/* One row of n values spaced `stride` apart: the first maximum's index. */
static int64_t hm_argmax(const void *x, int32_t dtype, int64_t base, int64_t n,
                         int64_t stride)
{
    int64_t best = 0;
    double mx = opd_get(x, dtype, base);
    for (int64_t k = 1; k < n && mx == mx; k++) {
        double v = opd_get(x, dtype, base + k * stride);
        if (v > mx || v != v) {
            mx = v;
            best = k;
        }
    }
    return best;
}

prt_status op_hardmax_view_of(const op_object *o, const prt_dims *x, op_axis_view *v)
{
    const hardmax_op *h = (const hardmax_op *)o;
    prt_status st;
    memset(v, 0, sizeof *v);
    st = op_axis(o, h->axis, x->nb_dims, 0, "the input", &v->axis);
    if (st)
        return st;
    /* Rows of n elements `inner` apart: opset 13 along the axis alone,
     * earlier opsets over every dim from the axis on. */
    v->outer = v->n = v->inner = 1;
    for (int32_t i = 0; i < x->nb_dims; i++) {
        if (i < v->axis)
            v->outer *= x->d[i];
        else if (i == v->axis || h->coerce_2d)
            v->n *= x->d[i];
        else
            v->inner *= x->d[i];
    }
    return PRT_OK;
}

static prt_status hm_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const prt_dims *d = &in[0].dims;
    int64_t outer, n, inner;
    size_t es = prt_dtype_size(dtype);
    float one = 1.0f;
    uint8_t one_bits[4];
    op_axis_view v;
    prt_status st = op_hardmax_view_of(o, d, &v);
    (void)nb_in, (void)out, (void)ws, (void)stream;
    if (st)
        return st;
    outer = v.outer;
    n = v.n;
    inner = v.inner;
    op_from_f32(&one, dtype, 1, one_bits);
    memset(y, 0, (size_t)base_volume(d) * es);
    if (n == 0)
        return PRT_OK;
    for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < inner; q++) {
            int64_t base = p * n * inner + q;
            int64_t k = hm_argmax(x[0], dtype, base, n, inner);
            memcpy((uint8_t *)y + (size_t)(base + k * inner) * es, one_bits, es);
        }
    return PRT_OK;
}

static const op_class hardmax_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(hardmax_op),
    .alias_input = -1,
    .parse = hm_parse,
    .serialize = hm_serialize,
    .shapes = hm_shapes,
    .infer = hm_infer,
    .run = hm_run,
};

static const prt_field_schema hardmax_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the rows' axis; default -1 (1 with coerce_2d)"},
    {"coerce_2d", PRT_FIELD_INT32, 1, "1: opsets 1-12's 2-D view; 0 (default): opset 13"},
};

const prt_plugin_creator op_hardmax_creator =
    OP_CREATOR("Hardmax", hardmax_class, hardmax_schema, 2);

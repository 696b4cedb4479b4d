/*
 * QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (namespace
 * "plugrt", version "1"), ONNX opsets 10 to 20 (issue 30). The arithmetic
 * of every element is quant.h's, rounded as ONNX Runtime rounds.
 *
 * QuantizeLinear: inputs x (float32, float16 or bfloat16), y_scale (x's
 * dtype) and the optional y_zero_point (int8, uint8 or an 8-bit float;
 * absent: uint8 0); y = saturate(round_half_even(x / y_scale) +
 * y_zero_point), of the zero point's dtype (uint8 without one). Half floats
 * are divided in float32, as ONNX Runtime does. Field axis (default 1): the
 * axis a 1-D scale runs along (per-axis quantization, opset 13); a scale of
 * one element (a scalar or 1-D) is per tensor. An 8-bit float y (opset 19)
 * is x / y_scale converted (base/fp8.h: round to nearest even); its zero
 * point must be 0 (ONNX), and field saturate (0 or 1, default 1) says what
 * values beyond its range become: the largest finite, or NaN (E4M3FN) /
 * infinity (E5M2). Every scale must be positive and finite (the run fails
 * naming the first that is not): a zero, negative or NaN scale has no
 * quantization.
 *
 * DequantizeLinear: inputs x (int8, uint8, int32 or an 8-bit float),
 * x_scale (float32, float16 or bfloat16) and the optional x_zero_point (x's
 * dtype); y = (x - x_zero_point) * x_scale, of the scale's dtype (computed
 * in float32, rounded once). Field axis as above. An int32 or 8-bit float x
 * has no zero point other than 0 (ONNX): a non-zero one fails the run.
 *
 * Scales and zero points are ordinary inputs, usually constants, read at
 * every run; their dims are checked with x's before it (quant_view).
 * Blocked quantization (a scale of x's rank, opset 21) is beyond plugrt's
 * opset 20 and fails naming it.
 *
 * DynamicQuantizeLinear (opset 11): input x (float32); outputs y (uint8,
 * x's dims), y_scale (float32 scalar) and y_zero_point (uint8 scalar) from
 * x's range (opq_dynamic_params: ONNX Runtime's rule, scale 1 for an
 * all-zero x), then y = QuantizeLinear(x, y_scale, y_zero_point).
 *
 * The CPU kernels are quant_kernel.c's loops (vectorized in the AVX2
 * build) over ranges of the elements spread on the context's threads.
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_ew.h"
#include "ops/ops_quant.h"

typedef struct quant_op {
    op_object o;
    int32_t axis;
    int32_t saturate; /* QuantizeLinear */
} quant_op;

enum { QUANTIZE, DEQUANTIZE, DYNAMIC };

static prt_status quant_parse(op_object *o, const op_fields *f)
{
    quant_op *q = (quant_op *)o;
    prt_status st = op_field_i32(f, "axis", 1, &q->axis);
    if (!st && o->cls->kind == QUANTIZE)
        st = ew_field_flag(f, "saturate", 1, &q->saturate);
    return st;
}

static int32_t quant_serialize(op_object *o, prt_field *ser)
{
    quant_op *q = (quant_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &q->axis, 1);
    if (o->cls->kind != QUANTIZE)
        return 1;
    op_ser(&ser[1], "saturate", PRT_FIELD_INT32, &q->saturate, 1);
    return 2;
}

static int per_tensor(const prt_dims *s)
{
    return s->nb_dims == 0 || (s->nb_dims == 1 && s->d[0] == 1);
}

prt_status quant_view(const op_object *o, const prt_dims *in, int32_t nb_in,
                      int64_t *outer, int64_t *ch, int64_t *inner)
{
    const prt_dims *x = &in[0], *s = &in[1];
    char a[96], b[96];
    int32_t axis;
    prt_status st;
    *outer = 1;
    *ch = 1;
    *inner = base_volume(x);
    if (!per_tensor(s)) {
        if (s->nb_dims != 1)
            return op_fail(o, PRT_ERR_SHAPE,
                           "the scale has dims %s; it must hold one value (per tensor) "
                           "or be 1-D (per axis): blocked quantization (opset 21) is "
                           "not supported",
                           base_dims_format(s, BASE_DIMS_LIST, a, sizeof a));
        st = op_axis(o, ((const quant_op *)o)->axis, x->nb_dims, 0, "x", &axis);
        if (st)
            return st;
        if (s->d[0] != x->d[axis])
            return op_fail(o, PRT_ERR_SHAPE,
                           "the scale holds %lld values for x's dim %d of %lld "
                           "(x %s, axis %d)",
                           (long long)s->d[0], (int)axis, (long long)x->d[axis],
                           base_dims_format(x, BASE_DIMS_LIST, a, sizeof a), (int)axis);
        *ch = x->d[axis];
        *inner = 1;
        for (int32_t k = 0; k < x->nb_dims; k++)
            if (k < axis)
                *outer *= x->d[k];
            else if (k > axis)
                *inner *= x->d[k];
    }
    if (nb_in > 2) {
        const prt_dims *z = &in[2];
        int same = z->nb_dims == s->nb_dims;
        for (int32_t k = 0; same && k < z->nb_dims; k++)
            same = z->d[k] == s->d[k];
        if (!same && !(per_tensor(s) && per_tensor(z)))
            return op_fail(o, PRT_ERR_SHAPE,
                           "the zero point's dims %s disagree with the scale's %s",
                           base_dims_format(z, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(s, BASE_DIMS_LIST, b, sizeof b));
    }
    return PRT_OK;
}

static prt_status quant_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    int64_t outer, ch, inner;
    *out = in[0];
    return quant_view(o, in, nb_in, &outer, &ch, &inner);
}

static uint32_t ql_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    if (index == 0)
        return o->cls->dtypes;
    if (index == 1)
        return OP_DT(types[0]);
    return OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) | OP_DT(PRT_FLOAT8E4M3FN) |
           OP_DT(PRT_FLOAT8E5M2);
}

static int32_t ql_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o;
    return nb_in > 2 ? types[2] : PRT_UINT8;
}

static uint32_t dql_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    if (index == 0)
        return o->cls->dtypes;
    return index == 1 ? EW_DT_FLOATS : OP_DT(types[0]);
}

static int32_t dql_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o;
    return nb_in > 1 ? types[1] : -1;
}

/* ---- the CPU kernels ------------------------------------------------------ */

/* One run's operands: x [outer, ch, inner] (flat), the scale and zero point
 * (zp NULL: 0) of ch values each. */
typedef struct quant_run {
    const void *x, *scale, *zp;
    void *y;
    int32_t xdt, sdt, zdt, ydt;
    int32_t saturate; /* an 8-bit float y */
    int64_t ch, inner;
} quant_run;

/* The segments of [b, e) within one row of `inner` elements, each with its
 * channel's scale and zero point. */
#define QUANT_SEGMENTS(r, b, e, BODY)                                                    \
    while ((b) < (e)) {                                                                  \
        const int64_t row_ = (b) / (r)->inner, c_ = row_ % (r)->ch;                      \
        const int64_t m = (r)->inner - ((b)-row_ * (r)->inner) < (e) - (b)               \
                              ? (r)->inner - ((b)-row_ * (r)->inner)                     \
                              : (e) - (b);                                               \
        const float s = opk_float_at((r)->sdt, (r)->scale, c_);                          \
        const int32_t z = (r)->zp ? (int32_t)opk_int_at((r)->zdt, (r)->zp, c_) : 0;      \
        BODY;                                                                            \
        (b) += m;                                                                        \
    }

static void ql_range(void *arg, int64_t b, int64_t e)
{
    const quant_run *r = (const quant_run *)arg;
    uint8_t *y = (uint8_t *)r->y; /* int8, uint8 or fp8: one byte an element */
    QUANT_SEGMENTS(r, b, e, {
        (void)z; /* an 8-bit float's is 0 (quant_prepare) */
        if (op_is_fp8(r->ydt)) {
            /* ONNX Runtime's x / scale in float32, then the conversion */
            for (int64_t k = 0; k < m; k++)
                opk_float_put_sat(r->ydt, y, b + k, opk_float_at(r->xdt, r->x, b + k) / s,
                                  r->saturate);
        } else if (r->xdt == PRT_FLOAT32) {
            op_quantize_f32((const float *)r->x + b, m, s, z, r->ydt, y + b);
        } else {
            float buf[EW_CHUNK];
            for (int64_t k = 0; k < m; k += EW_CHUNK) {
                const int64_t len = m - k < EW_CHUNK ? m - k : EW_CHUNK;
                op_to_f32((const uint16_t *)r->x + b + k, r->xdt, len, buf);
                op_quantize_f32(buf, len, s, z, r->ydt, y + b + k);
            }
        }
    })
}

static void dql_range(void *arg, int64_t b, int64_t e)
{
    const quant_run *r = (const quant_run *)arg;
    const size_t es = prt_dtype_size(r->xdt);
    QUANT_SEGMENTS(r, b, e, {
        const uint8_t *x = (const uint8_t *)r->x + (size_t)b * es;
        if (op_is_fp8(r->xdt)) {
            for (int64_t k = 0; k < m; k++)
                opk_float_put(r->ydt, r->y, b + k, opk_float_at(r->xdt, r->x, b + k) * s);
        } else if (r->ydt == PRT_FLOAT32) {
            op_dequantize_f32(r->xdt, x, m, s, z, (float *)r->y + b);
        } else {
            float buf[EW_CHUNK];
            for (int64_t k = 0; k < m; k += EW_CHUNK) {
                const int64_t len = m - k < EW_CHUNK ? m - k : EW_CHUNK;
                op_dequantize_f32(r->xdt, x + (size_t)k * es, len, s, z, buf);
                op_from_f32(buf, r->ydt, len, (uint16_t *)r->y + b + k);
            }
        }
    })
}

/* The run's operands, with the checks of its values. */
static prt_status quant_prepare(const op_object *o, const prt_tensor_desc *in,
                                int32_t nb_in, const prt_tensor_desc *out,
                                const void *const *x, void *y, quant_run *r)
{
    prt_dims d[3];
    int64_t outer;
    prt_status st;
    for (int32_t k = 0; k < nb_in && k < 3; k++)
        d[k] = in[k].dims;
    st = quant_view(o, d, nb_in, &outer, &r->ch, &r->inner);
    if (st)
        return st;
    r->x = x[0];
    r->scale = x[1];
    r->zp = nb_in > 2 ? x[2] : NULL;
    r->y = y;
    r->xdt = in[0].dtype;
    r->sdt = in[1].dtype;
    r->zdt = nb_in > 2 ? in[2].dtype : PRT_UINT8;
    r->ydt = out->dtype;
    r->saturate = o->cls->kind == QUANTIZE ? ((const quant_op *)o)->saturate : 1;
    for (int64_t c = 0; c < r->ch; c++) {
        const float s = opk_float_at(r->sdt, r->scale, c);
        if (o->cls->kind == QUANTIZE && !(s > 0.0f && isfinite(s)))
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "y_scale[%lld] is %g; a scale must be positive and finite",
                           (long long)c, (double)s);
        if (o->cls->kind == DEQUANTIZE && r->xdt == PRT_INT32 && r->zp &&
            opk_int_at(r->zdt, r->zp, c) != 0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "x_zero_point[%lld] is %lld; an int32 x has zero point 0",
                           (long long)c, (long long)opk_int_at(r->zdt, r->zp, c));
        /* +0 or -0 */
        if (r->zp && op_is_fp8(r->zdt) && (((const uint8_t *)r->zp)[c] & 0x7fu))
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "the zero point [%lld] is %g; an 8-bit float's must be 0",
                           (long long)c, (double)opk_float_at(r->zdt, r->zp, c));
    }
    return PRT_OK;
}

static prt_status quant_run_cpu(const op_object *o, int32_t dtype,
                                const prt_tensor_desc *in, int32_t nb_in,
                                const prt_tensor_desc *out, int32_t nb_out,
                                const void *const *x, void *const *ys, void *ws,
                                void *stream)
{
    quant_run r;
    const int64_t n = base_volume(&in[0].dims);
    prt_status st;
    (void)dtype, (void)nb_out, (void)ws, (void)stream;
    if (n == 0)
        return PRT_OK;
    st = quant_prepare(o, in, nb_in, out, x, ys[0], &r);
    if (st)
        return st;
    base_parallel_for(n, OP_GRAIN_SIMPLE, o->cls->kind == QUANTIZE ? ql_range : dql_range,
                      &r);
    return PRT_OK;
}

/* ---- DynamicQuantizeLinear ------------------------------------------------- */

static int32_t dyn_nb_outputs(const op_object *o)
{
    (void)o;
    return 3;
}

static prt_status dyn_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             int32_t nb_out, prt_expr_builder *eb)
{
    (void)o, (void)nb_in, (void)sv, (void)nb_sv, (void)nb_out, (void)eb;
    out[0] = in[0];
    out[1].nb_dims = out[2].nb_dims = 0;
    return PRT_OK;
}

static prt_status dyn_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out, int32_t nb_out)
{
    (void)o, (void)nb_in, (void)nb_out;
    out[0] = in[0];
    memset(&out[1], 0, sizeof out[1]);
    memset(&out[2], 0, sizeof out[2]);
    return PRT_OK;
}

static int32_t dyn_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                             int32_t index)
{
    (void)o, (void)types, (void)nb_in;
    return index == 1 ? PRT_FLOAT32 : PRT_UINT8;
}

static prt_status dyn_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    const int64_t n = base_volume(&in[0].dims);
    float mn, mx, scale;
    int32_t zp;
    uint8_t zp8;
    quant_run r;
    (void)o, (void)dtype, (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    op_minmax_f32((const float *)x[0], n, &mn, &mx);
    opq_dynamic_params(mn, mx, &scale, &zp);
    zp8 = (uint8_t)zp;
    memcpy(ys[1], &scale, sizeof scale);
    memcpy(ys[2], &zp8, 1);
    if (n == 0)
        return PRT_OK;
    memset(&r, 0, sizeof r);
    r.x = x[0];
    r.scale = &scale;
    r.zp = &zp8;
    r.y = ys[0];
    r.xdt = r.sdt = PRT_FLOAT32;
    r.zdt = r.ydt = PRT_UINT8;
    r.ch = 1;
    r.inner = n;
    base_parallel_for(n, OP_GRAIN_SIMPLE, ql_range, &r);
    return PRT_OK;
}

/* ---- classes ---------------------------------------------------------------- */

#define QUANT_CLASS(k, dts, in_dt, out_dt)                                               \
    {                                                                                    \
        .kind = (k), .min_inputs = 2, .max_inputs = 3, .dtypes = (dts),                  \
        .size = sizeof(quant_op), .alias_input = -1, .parse = quant_parse,               \
        .serialize = quant_serialize, .shapes = ew_same_shapes, .infer = quant_infer,    \
        .run = quant_run_cpu, .in_dtypes = (in_dt), .out_dtype = (out_dt),               \
    }

static const op_class quantize_class =
    QUANT_CLASS(QUANTIZE, EW_DT_FLOATS, ql_in_dtypes, ql_out_dtype);
static const op_class dequantize_class =
    QUANT_CLASS(DEQUANTIZE,
                OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) | OP_DT(PRT_INT32) |
                    OP_DT(PRT_FLOAT8E4M3FN) | OP_DT(PRT_FLOAT8E5M2),
                dql_in_dtypes, dql_out_dtype);

static const op_class dynamic_class = {
    .kind = DYNAMIC,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT(PRT_FLOAT32),
    .size = sizeof(op_object),
    .alias_input = -1,
    .run = dyn_run,
    .nb_outputs = dyn_nb_outputs,
    .shapes_n = dyn_shapes,
    .infer_n = dyn_infer,
    .out_dtype_n = dyn_out_dtype,
};

static const prt_field_schema quant_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis a 1-D (per-axis) scale runs along, default 1"},
    {"saturate", PRT_FIELD_INT32, 1, "0 or 1 (default); only 8-bit floats use it"},
};

int op_quant_saturate(const op_object *o)
{
    return o->cls->kind == QUANTIZE ? ((const quant_op *)o)->saturate : 1;
}

const prt_plugin_creator op_quantize_linear_creator =
    OP_CREATOR("QuantizeLinear", quantize_class, quant_schema, 2);
const prt_plugin_creator op_dequantize_linear_creator =
    OP_CREATOR("DequantizeLinear", dequantize_class, quant_schema, 1);
const prt_plugin_creator op_dynamic_quantize_linear_creator =
    OP_CREATOR("DynamicQuantizeLinear", dynamic_class, NULL, 0);

/*
 * Clip (namespace "plugrt", version "1"), ONNX opset 6-19 semantics.
 *
 * Inputs: X (any numeric dtype, the wide ones too), then optional min and
 * max (opset 11 on):
 * one-element tensors (0-D, or of any rank holding one element) of X's
 * dtype, read when the layer runs. The output has X's dims and dtype:
 * y = min(max(x, min), max), so min > max gives max everywhere (as ONNX
 * says) and NaN passes through (as numpy.clip).
 *
 * Fields:
 *   min, max (float32): the bounds as attributes (opsets 6 to 10, floats
 *     only), defaults the lowest and the highest float; with one of them an
 *     input of that bound is an error.
 *   max_only (int32, 0 or 1; default 0): the second input is max, not min
 *     (the ONNX importer sets it for a node that omits min but gives max,
 *     since plugin inputs are positional).
 * Integer bounds compare exactly; half floats compare as float32 (exact).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ops/ops_ew.h"

static prt_status clip_parse(op_object *o, const op_fields *f)
{
    clip_op *c = (clip_op *)o;
    const prt_field *fl;
    prt_status st = op_field_f32(f, "min", -FLT_MAX, &c->min);
    if (!st)
        st = op_field_f32(f, "max", FLT_MAX, &c->max);
    if (!st)
        st = ew_field_flag(f, "max_only", 0, &c->max_only);
    if (!st)
        st = op_field_find(f, "min", &fl);
    c->has_min = !st && fl;
    if (!st)
        st = op_field_find(f, "max", &fl);
    c->has_max = !st && fl;
    return st;
}

static int32_t clip_serialize(op_object *o, prt_field *ser)
{
    clip_op *c = (clip_op *)o;
    int32_t n = 0;
    if (c->has_min)
        op_ser(&ser[n++], "min", PRT_FIELD_FLOAT32, &c->min, 1);
    if (c->has_max)
        op_ser(&ser[n++], "max", PRT_FIELD_FLOAT32, &c->max, 1);
    op_ser(&ser[n++], "max_only", PRT_FIELD_INT32, &c->max_only, 1);
    return n;
}

/* Which bound input k (1 or 2) is: 0 min, 1 max. */
int clip_bound_of(const clip_op *c, int32_t k)
{
    return k == 2 || c->max_only;
}

static prt_status clip_check(const op_object *o, int32_t nb_in)
{
    const clip_op *c = (const clip_op *)o;
    if (c->max_only && nb_in != 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "max_only 1 takes X and max, two inputs; got %d", (int)nb_in);
    for (int32_t k = 1; k < nb_in; k++)
        if (clip_bound_of(c, k) ? c->has_max : c->has_min)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "%s is given both as a field (attribute) and as an input",
                           clip_bound_of(c, k) ? "max" : "min");
    return PRT_OK;
}

static prt_status clip_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    prt_status st = clip_check(o, nb_in);
    for (int32_t k = 1; !st && k < nb_in; k++) {
        int64_t v = 1, n = 1;
        for (int32_t d = 0; d < in[k].nb_dims; d++)
            if (eb->is_constant(eb, in[k].d[d], &v))
                n *= v;
        if (n != 1)
            return op_fail(o, PRT_ERR_SHAPE, "input %d (%s) must hold one element",
                           (int)k, clip_bound_of((const clip_op *)o, k) ? "max" : "min");
    }
    *out = in[0];
    return st;
}

static prt_status clip_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    *out = in[0];
    for (int32_t k = 1; k < nb_in; k++)
        if (base_volume(&in[k]) != 1)
            return op_fail(o, PRT_ERR_SHAPE, "input %d (%s) must hold one element",
                           (int)k, clip_bound_of((const clip_op *)o, k) ? "max" : "min");
    return clip_check(o, nb_in);
}

/* Bounds as attributes are floats (opsets 6 to 10 take only floats). */
static uint32_t clip_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    const clip_op *c = (const clip_op *)o;
    if (index > 0)
        return OP_DT(types[0]);
    return c->has_min || c->has_max ? EW_DT_FLOATS | OP_DT(PRT_FLOAT64)
                                    : EW_DT_NUMERIC | OP_DT_WIDE;
}

#define CLIP_LOOP(T, lo, hi)                                                             \
    do {                                                                                 \
        const T *a = x;                                                                  \
        T *b = y;                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                \
            T v = a[i] < (lo) ? (lo) : a[i];                                             \
            b[i] = v > (hi) ? (hi) : v;                                                  \
        }                                                                                \
    } while (0)

static prt_status clip_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const clip_op *c = (const clip_op *)o;
    int64_t n = base_volume(&in[0].dims), lo = 0, hi = 0;
    const void *x = xs[0];
    double bound[2];
    (void)out, (void)ws, (void)stream;
    ew_int_range(dtype, &lo, &hi);
    bound[0] = ew_is_float(dtype) || dtype == PRT_FLOAT64 ? (double)c->min : (double)lo;
    bound[1] = ew_is_float(dtype) || dtype == PRT_FLOAT64 ? (double)c->max : (double)hi;
    if (dtype == PRT_FLOAT64) {
        /* no bound: none at all (the float32 defaults would cut doubles) */
        bound[0] = c->has_min ? (double)c->min : -INFINITY;
        bound[1] = c->has_max ? (double)c->max : INFINITY;
        for (int32_t k = 1; k < nb_in; k++)
            ew_load_f64(xs[k], dtype, 1, 1, &bound[clip_bound_of(c, k)]);
        CLIP_LOOP(double, bound[0], bound[1]);
        return PRT_OK;
    }
    if (dtype == PRT_UINT64) {
        /* unsigned 64-bit bounds: the default max is the type's largest */
        uint64_t ub[2] = {0, UINT64_MAX};
        for (int32_t k = 1; k < nb_in; k++)
            memcpy(&ub[clip_bound_of(c, k)], xs[k], sizeof(uint64_t));
        CLIP_LOOP(uint64_t, ub[0], ub[1]);
        return PRT_OK;
    }
    if (!ew_is_float(dtype)) {
        int64_t ib[2] = {lo, hi};
        for (int32_t k = 1; k < nb_in; k++)
            ew_load_i64(xs[k], dtype, 1, 1, &ib[clip_bound_of(c, k)]);
        switch (dtype) {
        case PRT_INT8:
            CLIP_LOOP(int8_t, (int8_t)ib[0], (int8_t)ib[1]);
            break;
        case PRT_UINT8:
            CLIP_LOOP(uint8_t, (uint8_t)ib[0], (uint8_t)ib[1]);
            break;
        case PRT_INT32:
            CLIP_LOOP(int32_t, (int32_t)ib[0], (int32_t)ib[1]);
            break;
        case PRT_INT16:
            CLIP_LOOP(int16_t, (int16_t)ib[0], (int16_t)ib[1]);
            break;
        case PRT_UINT16:
            CLIP_LOOP(uint16_t, (uint16_t)ib[0], (uint16_t)ib[1]);
            break;
        case PRT_UINT32:
            CLIP_LOOP(uint32_t, (uint32_t)ib[0], (uint32_t)ib[1]);
            break;
        default:
            CLIP_LOOP(int64_t, ib[0], ib[1]);
            break;
        }
        return PRT_OK;
    }
    for (int32_t k = 1; k < nb_in; k++)
        ew_load_f64(xs[k], dtype, 1, 1, &bound[clip_bound_of(c, k)]);
    {
        const float fl = (float)bound[0], fh = (float)bound[1];
        if (dtype == PRT_FLOAT32) {
            CLIP_LOOP(float, fl, fh);
            return PRT_OK;
        }
        for (int64_t i = 0; i < n; i += EW_CHUNK) {
            float buf[EW_CHUNK];
            int64_t m = n - i < EW_CHUNK ? n - i : EW_CHUNK;
            ew_load_f32((const uint16_t *)x + i, dtype, 1, m, buf);
            for (int64_t j = 0; j < m; j++) {
                float v = buf[j] < fl ? fl : buf[j];
                buf[j] = v > fh ? fh : v;
            }
            op_from_f32(buf, dtype, m, (uint16_t *)y + i);
        }
    }
    return PRT_OK;
}

static const op_class clip_class = {
    .min_inputs = 1,
    .max_inputs = 3,
    .dtypes = EW_DT_NUMERIC | OP_DT_WIDE,
    .size = sizeof(clip_op),
    .alias_input = -1,
    .parse = clip_parse,
    .serialize = clip_serialize,
    .shapes = clip_shapes,
    .infer = clip_infer,
    .run = clip_run,
    .in_dtypes = clip_in_dtypes,
};

static const prt_field_schema clip_schema[] = {
    {"min", PRT_FIELD_FLOAT32, 1, "the lower bound (opsets 6 to 10; later an input)"},
    {"max", PRT_FIELD_FLOAT32, 1, "the upper bound (opsets 6 to 10; later an input)"},
    {"max_only", PRT_FIELD_INT32, 1, "1: the second input is max (min omitted)"},
};

const prt_plugin_creator op_clip_creator = OP_CREATOR("Clip", clip_class, clip_schema, 3);

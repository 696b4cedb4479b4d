/*
 * The ops that make a tensor from shape values alone (namespace "plugrt",
 * version "1").
 *
 * ConstantOfShape, ONNX opset 9 semantics: no data input; shape input
 *   `input` gives the output dims (no values: a scalar). Fields dtype
 *   (int32, a prt_dtype, default float32) and value (one number, integer
 *   or float field, default 0), converted to dtype (the ONNX importer makes
 *   both from the `value` TENSOR attribute). An int32/int64/bool output of
 *   static size <= 8 states its values.
 * Range, ONNX opset 11 semantics: inputs start, limit, delta, 0-D int32 or
 *   int64 of one dtype, which are also shape inputs (the output length is
 *   max(ceil((limit - start) / delta), 0) as an expression). y[i] = start +
 *   i * delta. A delta of 0 fails. Float Range is not supported: its
 *   length cannot be an expression of integer values.
 */
#include <math.h>
#include <string.h>

#include "ops/shape_ops.h"

/* ---- ConstantOfShape -------------------------------------------------------- */

typedef struct cos_op {
    op_object o;
    int32_t dtype;
    int64_t ival; /* the value for integer dtypes and bool */
    double fval;  /* for float dtypes */
} cos_op;

static int is_float_dt(int32_t t)
{
    return t == PRT_FLOAT32 || t == PRT_FLOAT16 || t == PRT_BFLOAT16 || t == PRT_FLOAT64;
}

static prt_status cos_parse(op_object *o, const op_fields *f)
{
    cos_op *c = (cos_op *)o;
    const prt_field *fl;
    int number;
    prt_status st = op_field_i32(f, "dtype", PRT_FLOAT32, &c->dtype);
    if (st)
        return st;
    if (c->dtype < 0 || c->dtype >= PRT_DTYPE_COUNT)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'dtype' is %d, not a prt_dtype", (int)c->dtype);
    st = op_field_find(f, "value", &fl);
    if (st)
        return st;
    c->ival = 0;
    c->fval = 0.0;
    if (!fl)
        return PRT_OK;
    if (fl->length != 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'value' must hold one value, it holds %lld",
                              (long long)fl->length);
    number = op_field_number_at(fl, 0, &c->ival, &c->fval);
    if (!number)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'value' has type %s, expected a number",
                              base_field_type_name(fl->type));
    if (number == 1)
        c->fval = (double)c->ival;
    else if (!is_float_dt(c->dtype)) {
        /* A float value for an integer dtype: truncate, saturating. */
        double v = c->fval;
        c->ival = v != v         ? 0
                  : v >= 9.2e18  ? INT64_MAX
                  : v <= -9.2e18 ? INT64_MIN
                                 : (int64_t)v;
    }
    if (c->dtype == PRT_BOOL)
        c->ival = c->ival != 0;
    return PRT_OK;
}

static int32_t cos_serialize(op_object *o, prt_field *ser)
{
    cos_op *c = (cos_op *)o;
    op_ser(&ser[0], "dtype", PRT_FIELD_INT32, &c->dtype, 1);
    if (is_float_dt(c->dtype))
        op_ser(&ser[1], "value", PRT_FIELD_FLOAT64, &c->fval, 1);
    else
        op_ser(&ser[1], "value", PRT_FIELD_INT64, &c->ival, 1);
    return 2;
}

static prt_status cos_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    (void)in, (void)nb_in, (void)nb_sv;
    if (sv[0].nb_dims > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "the shape has %d values (max %d)",
                       (int)sv[0].nb_dims, PRT_MAX_DIMS);
    for (int32_t i = 0; i < sv[0].nb_dims; i++) {
        int64_t v;
        if (eb->is_constant(eb, sv[0].d[i], &v) && v < 0)
            return op_fail(o, PRT_ERR_SHAPE, "shape value %d is %lld (< 0)", (int)i,
                           (long long)v);
    }
    *out = sv[0];
    return PRT_OK;
}

static int32_t cos_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)types, (void)nb_in;
    return ((const cos_op *)o)->dtype;
}

static prt_status cos_values(op_object *o, const prt_dim_exprs *in_dims,
                             const prt_dim_exprs *in_values, int32_t nb_in,
                             const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                             prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims), dt = ((const cos_op *)o)->dtype;
    (void)in_dims, (void)in_values, (void)nb_in;
    if (dt != PRT_INT32 && dt != PRT_INT64 && dt != PRT_BOOL)
        return PRT_OK;
    for (int32_t i = 0; i < n; i++)
        out_values->d[i] = eb->constant(eb, ((const cos_op *)o)->ival);
    out_values->nb_dims = n;
    return PRT_OK;
}

/* The bytes of one element: the value in dtype. */
void cos_element(const op_object *o, int32_t dtype, uint8_t one[8])
{
    const cos_op *c = (const cos_op *)o;
    memset(one, 0, 8);
    switch (dtype) {
    case PRT_FLOAT32: {
        float v = (float)c->fval;
        memcpy(one, &v, 4);
        break;
    }
    case PRT_FLOAT16:
    case PRT_BFLOAT16: {
        float v = (float)c->fval;
        uint16_t h = dtype == PRT_FLOAT16 ? prt_float_to_half(v) : prt_float_to_bf16(v);
        memcpy(one, &h, 2);
        break;
    }
    case PRT_INT32: {
        int32_t v = (int32_t)(uint32_t)(uint64_t)c->ival;
        memcpy(one, &v, 4);
        break;
    }
    case PRT_INT64:
    case PRT_UINT64:
        memcpy(one, &c->ival, 8);
        break;
    case PRT_FLOAT64:
        memcpy(one, &c->fval, 8);
        break;
    case PRT_UINT32: {
        uint32_t v = (uint32_t)(uint64_t)c->ival;
        memcpy(one, &v, 4);
        break;
    }
    case PRT_INT16:
    case PRT_UINT16: {
        uint16_t v = (uint16_t)(uint64_t)c->ival;
        memcpy(one, &v, 2);
        break;
    }
    default: /* int8, uint8, bool: the low byte */
        one[0] = (uint8_t)(uint64_t)c->ival;
        break;
    }
}

static prt_status cos_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int64_t n = base_volume(&out->dims);
    size_t es = prt_dtype_size(dtype);
    uint8_t one[8];
    (void)in, (void)nb_in, (void)x, (void)ws, (void)stream;
    cos_element(o, dtype, one);
    for (int64_t i = 0; i < n; i++)
        memcpy((uint8_t *)y + (size_t)i * es, one, es);
    return PRT_OK;
}

static const op_class cos_class = {
    .min_inputs = 0,
    .max_inputs = 0,
    .dtypes = OP_DT_NO_FP8 | OP_DT_WIDE,
    .size = sizeof(cos_op),
    .alias_input = -1,
    .parse = cos_parse,
    .serialize = cos_serialize,
    .run = cos_run,
    .min_shape_inputs = 1,
    .max_shape_inputs = 1,
    .out_dtype = cos_out_dtype,
    .shapes_sv = cos_shapes,
    .values = cos_values,
};

static const prt_field_schema cos_schema[] = {
    {"dtype", PRT_FIELD_INT32, 1, "the output's prt_dtype, default float32"},
    {"value", PRT_FIELD_FLOAT64, 1, "the fill value (any number field), default 0"},
};

const prt_plugin_creator op_constant_of_shape_creator =
    OP_CREATOR("ConstantOfShape", cos_class, cos_schema, 2);

/* ---- Range -------------------------------------------------------------------- */

static prt_status range_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                               prt_expr_builder *eb)
{
    int64_t dv;
    (void)nb_in, (void)nb_sv;
    for (int32_t i = 0; i < 3; i++)
        if (in[i].nb_dims != 0 || sv[i].nb_dims != 1)
            return op_fail(o, PRT_ERR_SHAPE,
                           "start, limit and delta must be scalars (input %d "
                           "has rank %d)",
                           (int)i, (int)in[i].nb_dims);
    if (eb->is_constant(eb, sv[2].d[0], &dv) && dv == 0)
        return op_fail(o, PRT_ERR_SHAPE, "delta is 0");
    out->nb_dims = 1;
    out->d[0] = eb->operation(
        eb, PRT_DIM_MAX,
        eb->operation(eb, PRT_DIM_CEIL_DIV,
                      eb->operation(eb, PRT_DIM_SUB, sv[1].d[0], sv[0].d[0]), sv[2].d[0]),
        eb->constant(eb, 0));
    return PRT_OK;
}

static prt_status range_values(op_object *o, const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *in_values, int32_t nb_in,
                               const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                               prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims);
    (void)o, (void)in_dims, (void)nb_in;
    if (in_values[0].nb_dims != 1 || in_values[2].nb_dims != 1)
        return PRT_OK;
    for (int32_t i = 0; i < n; i++)
        out_values->d[i] = eb->operation(
            eb, PRT_DIM_SUM, in_values[0].d[0],
            eb->operation(eb, PRT_DIM_PROD, eb->constant(eb, i), in_values[2].d[0]));
    out_values->nb_dims = n;
    return PRT_OK;
}

static prt_status range_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int64_t s = op_int_at(x[0], dtype, 0), l = op_int_at(x[1], dtype, 0);
    int64_t d = op_int_at(x[2], dtype, 0), n;
    (void)in, (void)nb_in, (void)ws;
    if (d == 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "delta is 0");
    /* ceil((l - s) / d) without overflow for the values shapes use. */
    {
        double q = ceil(((double)l - (double)s) / (double)d);
        n = q > 0 ? (int64_t)q : 0;
    }
    if (out->dims.nb_dims != 1 || out->dims.d[0] != n)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the output has %lld elements; start %lld, limit %lld, "
                       "delta %lld give %lld",
                       (long long)(out->dims.nb_dims == 1 ? out->dims.d[0] : -1),
                       (long long)s, (long long)l, (long long)d, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (dtype == PRT_INT64)
            ((int64_t *)y)[i] = s + i * d;
        else
            ((int32_t *)y)[i] = (int32_t)(s + i * d);
    }
    return PRT_OK;
}

static const op_class range_class = {
    .min_inputs = 3,
    .max_inputs = 3,
    .dtypes = OP_DT_INDEX,
    .size = sizeof(op_object),
    .alias_input = -1,
    .run = range_run,
    .min_shape_inputs = 3,
    .max_shape_inputs = 3,
    .shapes_sv = range_shapes,
    .values = range_values,
};

const prt_plugin_creator op_range_creator = OP_CREATOR("Range", range_class, NULL, 0);

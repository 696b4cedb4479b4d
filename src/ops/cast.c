/*
 * Cast and CastLike (namespace "plugrt", version "1"), ONNX opset 6-19
 * semantics over plugrt's dtypes (every pair of them).
 *
 * Cast: any input dtype; field `to` (int32) is the output's prt_dtype (the
 * ONNX importer translates ONNX's TensorProto code).
 * CastLike: inputs input and target_type (any dtypes); the output has the
 * input's dims and target_type's dtype (target_type's values are not read).
 * Both take field saturate (int32, 0 or 1, default 1, opset 19), which ONNX
 * defines only for conversions to the 8-bit floats: with it, values beyond
 * their range (and infinities) become the largest finite; without, NaN
 * (E4M3FN) or infinity (E5M2), base/fp8.h.
 *
 * Conversions: to bool, x != 0 (NaN is true, as in numpy); from bool, 0 or
 * 1; float to integer truncates toward zero and saturates at the type's
 * range (NaN gives 0; ONNX leaves out-of-range undefined); integer to
 * integer wraps (two's complement, as numpy); to a half float rounds to
 * nearest even; to an 8-bit float likewise, through float32 (float64 to a
 * narrower float too, as ONNX Runtime does; to float64 exactly from every
 * float, integers rounded past 2^53, uint64 as unsigned). Integers travel through
 * int64 so int64 values stay exact. Values pass through between int32, int64 and bool (to
 * bool: x != 0).
 */
#include <math.h>
#include <string.h>

#include "ops/op_elem.h"
#include "ops/ops_ew.h"
#include "ops/shape_ops.h"

typedef struct cast_op {
    op_object o;
    int32_t to; /* Cast */
    int32_t saturate;
} cast_op;

enum { CAST, CAST_LIKE };

static prt_status cast_parse(op_object *o, const op_fields *f)
{
    cast_op *c = (cast_op *)o;
    prt_status st = ew_field_flag(f, "saturate", 1, &c->saturate);
    if (!st)
        st = op_field_i32(f, "to", -1, &c->to);
    if (st || o->cls->kind == CAST_LIKE)
        return st;
    if (c->to < 0 || c->to >= PRT_DTYPE_COUNT)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'to' is %d; it must be a prt_dtype (0 to %d)",
                              (int)c->to, PRT_DTYPE_COUNT - 1);
    return PRT_OK;
}

static int32_t cast_serialize(op_object *o, prt_field *ser)
{
    cast_op *c = (cast_op *)o;
    op_ser(&ser[0], "saturate", PRT_FIELD_INT32, &c->saturate, 1);
    if (o->cls->kind == CAST_LIKE)
        return 1;
    op_ser(&ser[1], "to", PRT_FIELD_INT32, &c->to, 1);
    return 2;
}

static int32_t cast_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    if (o->cls->kind == CAST_LIKE)
        return nb_in > 1 ? types[1] : -1;
    return ((const cast_op *)o)->to;
}

static uint32_t cast_like_in_dtypes(const op_object *o, int32_t index,
                                    const int32_t *types)
{
    (void)o, (void)index, (void)types;
    return OP_DT_ALL;
}

static prt_status cast_values(op_object *o, const prt_dim_exprs *in_dims,
                              const prt_dim_exprs *in_values, int32_t nb_in,
                              const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                              prt_expr_builder *eb)
{
    int32_t to = ((const cast_op *)o)->to;
    (void)in_dims, (void)nb_in, (void)out_dims;
    /* Known only for integer and bool inputs; int64 -> int32 of a dim is
     * exact; to bool, x != 0 is 1 - (x == 0). */
    if (to == PRT_INT32 || to == PRT_INT64)
        *out_values = in_values[0];
    else if (to == PRT_BOOL && in_values[0].nb_dims >= 0) {
        for (int32_t i = 0; i < in_values[0].nb_dims; i++)
            out_values->d[i] = eb->operation(
                eb, PRT_DIM_SUB, eb->constant(eb, 1),
                eb->operation(eb, PRT_DIM_EQUAL, in_values[0].d[i], eb->constant(eb, 0)));
        out_values->nb_dims = in_values[0].nb_dims;
    }
    return PRT_OK;
}

static prt_status cast_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int32_t to = out->dtype;
    int64_t n = base_volume(&in[0].dims);
    const void *x = xs[0];
    (void)nb_in, (void)ws;
    if (to == dtype) {
        if (x != y)
            memmove(y, x, prt_dtype_size(dtype) * (size_t)n);
        return PRT_OK;
    }
    /* op_elem.h: the CUDA kernel's very code. */
    for (int64_t i = 0; i < n; i++)
        opk_cast_at_sat(dtype, to, x, y, i, ((const cast_op *)o)->saturate);
    return PRT_OK;
}

int op_cast_saturate(const op_object *o)
{
    return ((const cast_op *)o)->saturate;
}

#define CAST_CLASS(k, nb_in, in_dt, vals)                                                \
    {                                                                                    \
        .kind = (k), .min_inputs = (nb_in), .max_inputs = (nb_in), .dtypes = OP_DT_ALL,  \
        .size = sizeof(cast_op), .alias_input = -1, .parse = cast_parse,                 \
        .serialize = cast_serialize, .shapes = ew_same_shapes, .infer = ew_same_infer,   \
        .run = cast_run, .in_dtypes = (in_dt), .out_dtype = cast_out_dtype,              \
        .values = (vals),                                                                \
    }

static const op_class cast_class = CAST_CLASS(CAST, 1, NULL, cast_values);
/* CastLike's values would need the target's dtype, which the hook is not
 * told. */
static const op_class cast_like_class =
    CAST_CLASS(CAST_LIKE, 2, cast_like_in_dtypes, NULL);

static const prt_field_schema cast_schema[] = {
    {"to", PRT_FIELD_INT32, 1, "the output's prt_dtype (required)"},
    {"saturate", PRT_FIELD_INT32, 1, "0 or 1 (default); only 8-bit floats use it"},
};

const prt_plugin_creator op_cast_creator = OP_CREATOR("Cast", cast_class, cast_schema, 2);
const prt_plugin_creator op_cast_like_creator =
    OP_CREATOR("CastLike", cast_like_class, &cast_schema[1], 1);

/*
 * Dropout (namespace "plugrt", version "1"), ONNX opset 7-19 semantics for
 * inference: the output is the input (shared with it where the builder can
 * arrange it, else a copy), and the mask, when asked for, is all true.
 *
 * Inputs: data (float32, float16, bfloat16); optional ratio (a float
 * tensor, not read: it matters only in training); optional shape input
 * training_mode (opset 12 on), whose value must be known at build time and
 * false (true is a build error: plugrt does not train).
 * Fields: ratio (float32; the opset 7-10 attribute, not used), seed (int32;
 * not used), mask (int32): 0 (default) no mask output, 1 a bool mask
 * (opset 10 on), 2 a mask of data's dtype holding 1 (opsets 7 to 9). The
 * ONNX importer sets mask from the node's outputs.
 */
#include <string.h>

#include "ops/ops_ew.h"

typedef struct dropout_op {
    op_object o;
    float ratio;
    int32_t mask;
    int64_t seed;
} dropout_op;

static prt_status dropout_parse(op_object *o, const op_fields *f)
{
    dropout_op *d = (dropout_op *)o;
    const prt_field *fl = NULL;
    prt_status st = op_field_f32(f, "ratio", 0.5f, &d->ratio);
    if (!st)
        st = op_field_find(f, "seed", &fl);
    if (!st && fl) {
        double unused;
        if (fl->length != 1 || op_field_number_at(fl, 0, &d->seed, &unused) != 1)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field 'seed' must hold one integer");
    }
    if (!st)
        st = op_field_i32(f, "mask", 0, &d->mask);
    if (!st && (d->mask < 0 || d->mask > 2))
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "mask %d is not supported (supported: 0 none, 1 bool, 2 "
                              "the data's dtype)",
                              (int)d->mask);
    return st;
}

static int32_t dropout_serialize(op_object *o, prt_field *ser)
{
    dropout_op *d = (dropout_op *)o;
    op_ser(&ser[0], "ratio", PRT_FIELD_FLOAT32, &d->ratio, 1);
    op_ser(&ser[1], "seed", PRT_FIELD_INT64, &d->seed, 1);
    op_ser(&ser[2], "mask", PRT_FIELD_INT32, &d->mask, 1);
    return 3;
}

static int32_t dropout_nb_outputs(const op_object *o)
{
    return ((const dropout_op *)o)->mask ? 2 : 1;
}

static prt_status dropout_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                 const prt_dim_exprs *sv, int32_t nb_sv,
                                 prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *eb)
{
    int64_t v = 0;
    (void)nb_in;
    if (nb_sv > 0) {
        if (sv[0].nb_dims != 1)
            return op_fail(o, PRT_ERR_SHAPE, "training_mode must hold one value, not %d",
                           (int)sv[0].nb_dims);
        if (!eb->is_constant(eb, sv[0].d[0], &v))
            return op_fail(o, PRT_ERR_SHAPE,
                           "training_mode must be known at build time (plugrt runs "
                           "Dropout for inference only)");
        if (v != 0)
            return op_fail(o, PRT_ERR_UNSUPPORTED,
                           "training_mode true is not supported (plugrt runs Dropout "
                           "for inference only)");
    }
    for (int32_t k = 0; k < nb_out; k++)
        out[k] = in[0];
    return PRT_OK;
}

static prt_status dropout_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                                prt_dims *out, int32_t nb_out)
{
    (void)o, (void)nb_in;
    for (int32_t k = 0; k < nb_out; k++)
        out[k] = in[0];
    return PRT_OK;
}

static uint32_t dropout_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)index, (void)types;
    return EW_DT_FLOATS;
}

static int32_t dropout_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                                 int32_t index)
{
    (void)nb_in;
    return index == 1 && ((const dropout_op *)o)->mask == 1 ? PRT_BOOL : types[0];
}

/* The mask's element: true, or 1 in the data's dtype; its bytes first. */
uint64_t dropout_one(int32_t mask_dtype)
{
    const double one = 1.0;
    uint8_t bits[8] = {0};
    uint64_t v;
    ew_store_f64(&one, mask_dtype, 1, bits);
    memcpy(&v, bits, sizeof v);
    return v;
}

static prt_status dropout_run(const op_object *o, int32_t dtype,
                              const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out,
                              const void *const *x, void *const *y, void *ws,
                              void *stream)
{
    int64_t n = base_volume(&in[0].dims);
    (void)o, (void)nb_in, (void)ws, (void)stream;
    if (n == 0)
        return PRT_OK;
    if (x[0] != y[0])
        memmove(y[0], x[0], prt_dtype_size(dtype) * (size_t)n);
    if (nb_out < 2)
        return PRT_OK;
    {
        const uint64_t one = dropout_one(out[1].dtype);
        const size_t es = prt_dtype_size(out[1].dtype);
        for (int64_t i = 0; i < n; i++)
            memcpy((uint8_t *)y[1] + (size_t)i * es, &one, es);
    }
    return PRT_OK;
}

static const op_class dropout_class = {
    .min_inputs = 1,
    .max_inputs = 2,
    .dtypes = EW_DT_FLOATS,
    .size = sizeof(dropout_op),
    .alias_input = 0,
    .parse = dropout_parse,
    .serialize = dropout_serialize,
    .max_shape_inputs = 1,
    .in_dtypes = dropout_in_dtypes,
    .nb_outputs = dropout_nb_outputs,
    .shapes_n = dropout_shapes,
    .infer_n = dropout_infer,
    .out_dtype_n = dropout_out_dtype,
    .run = dropout_run,
};

static const prt_field_schema dropout_schema[] = {
    {"ratio", PRT_FIELD_FLOAT32, 1, "the drop ratio (opsets 7 to 11; not used)"},
    {"seed", PRT_FIELD_INT64, 1, "the random seed (not used)"},
    {"mask", PRT_FIELD_INT32, 1,
     "0 (default): no mask output; 1: a bool mask; 2: a mask of the data's dtype"},
};

const prt_plugin_creator op_dropout_creator =
    OP_CREATOR("Dropout", dropout_class, dropout_schema, 3);

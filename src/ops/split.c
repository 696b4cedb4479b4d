/*
 * Split (namespace "plugrt", version "1"), ONNX opsets 2 to 18: one input
 * of any dtype and rank >= 1 cut along `axis` into n outputs of its dtype.
 *
 * Fields:
 *   axis (int32, default 0), in [-r, r-1].
 *   split (int32 array): the parts' lengths (opset 2 to 12's attribute; the
 *     importer also puts a constant `split` input here). n is its length.
 *   num_outputs (int32, opset 18): n parts of ceil(d / n), the last one
 *     d - (n - 1) * ceil(d / n) (ONNX's rule; it must not be negative).
 *   outputs (int32): n, when neither of the above gives it (the importer
 *     passes the node's output count): the parts are then the lengths in
 *     the `split` input, or n equal parts (d must divide by n).
 * Exactly one of split, num_outputs, outputs gives n (1 to 64); a second
 * one must agree with it.
 *
 * Input 1 (optional, opset 13 on): `split`, 1-D int32/int64 of n values,
 * both a shape input (its values are the output dims) and a data input
 * (the run checks them). As a shape input it holds at most 8 values.
 *
 * Every output's dims come from the fields or the values, so there is no
 * concrete `infer`: the run checks that the outputs' dims are the input's
 * but along the axis, that those sum to the input's, and that they are
 * the lengths the rule gives, before it copies.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct split_op {
    op_object o;
    int32_t axis;
    int32_t nb_split; /* -1: no split field */
    int32_t num_outputs;
    int32_t outputs;
    int32_t n; /* the number of outputs */
    int32_t split[OP_MAX_OUTPUTS];
} split_op;

static prt_status split_parse(op_object *o, const op_fields *f)
{
    split_op *s = (split_op *)o;
    prt_status st = op_field_i32(f, "axis", 0, &s->axis);
    if (!st)
        st = op_field_i32_array(f, "split", s->split, OP_MAX_OUTPUTS, &s->nb_split);
    if (!st)
        st = op_field_i32(f, "num_outputs", 0, &s->num_outputs);
    if (!st)
        st = op_field_i32(f, "outputs", 0, &s->outputs);
    if (st)
        return st;
    for (int32_t k = 0; k < s->nb_split; k++)
        if (s->split[k] < 0)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field 'split' value %d is %d; lengths are >= 0",
                                  (int)k, (int)s->split[k]);
    if (s->num_outputs < 0 || s->num_outputs > OP_MAX_OUTPUTS || s->outputs < 0 ||
        s->outputs > OP_MAX_OUTPUTS || s->nb_split == 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "split has %d values, num_outputs is %d, outputs %d: "
                              "the number of outputs must be 1 to %d",
                              (int)s->nb_split, (int)s->num_outputs, (int)s->outputs,
                              OP_MAX_OUTPUTS);
    s->n = s->nb_split > 0 ? s->nb_split : s->num_outputs ? s->num_outputs : s->outputs;
    if (s->n == 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "needs the number of outputs: field split, num_outputs "
                              "or outputs");
    if ((s->num_outputs && s->num_outputs != s->n) || (s->outputs && s->outputs != s->n))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "split has %d values, num_outputs is %d, outputs %d: "
                              "they disagree on the number of outputs",
                              (int)s->nb_split, (int)s->num_outputs, (int)s->outputs);
    return PRT_OK;
}

static int32_t split_serialize(op_object *o, prt_field *ser)
{
    split_op *s = (split_op *)o;
    int32_t n = 0;
    op_ser(&ser[n++], "axis", PRT_FIELD_INT32, &s->axis, 1);
    if (s->nb_split > 0)
        op_ser(&ser[n++], "split", PRT_FIELD_INT32, s->split, s->nb_split);
    if (s->num_outputs)
        op_ser(&ser[n++], "num_outputs", PRT_FIELD_INT32, &s->num_outputs, 1);
    if (s->outputs)
        op_ser(&ser[n++], "outputs", PRT_FIELD_INT32, &s->outputs, 1);
    return n;
}

static int32_t split_nb_outputs(const op_object *o)
{
    return ((const split_op *)o)->n;
}

static int32_t split_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                               int32_t index)
{
    (void)o, (void)nb_in, (void)index;
    return types[0];
}

static uint32_t split_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT_INDEX;
}

static prt_status split_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                               int32_t nb_out, prt_expr_builder *eb)
{
    const split_op *s = (const split_op *)o;
    const prt_expr *d, *part = NULL, *sum;
    int32_t axis, n = s->n;
    int64_t dv, v;
    int dc;
    prt_status st = op_axis(o, s->axis, in[0].nb_dims, 0, "the input", &axis);
    if (st)
        return st;
    if (nb_sv != nb_in - 1)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "the split input must be both a data input and a shape input");
    if (nb_sv > 0 && s->nb_split >= 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "split is given both as a field and as an input");
    if (nb_sv > 0 && s->num_outputs)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "num_outputs and a split input exclude each other");
    if (nb_sv > 0 && sv[0].nb_dims != n)
        return op_fail(o, PRT_ERR_SHAPE, "the split input has %d values for %d outputs",
                       (int)sv[0].nb_dims, (int)n);
    d = in[0].d[axis];
    dc = eb->is_constant(eb, d, &dv);
    if (nb_sv == 0 && s->nb_split < 0) {
        /* n parts: equal ones (d must divide), or ONNX 18's ceil rule. */
        if (!s->num_outputs && dc && dv % n != 0)
            return op_fail(o, PRT_ERR_SHAPE,
                           "dim %d (%lld) does not split into %d equal parts", (int)axis,
                           (long long)dv, (int)n);
        part = eb->operation(eb, s->num_outputs ? PRT_DIM_CEIL_DIV : PRT_DIM_FLOOR_DIV, d,
                             eb->constant(eb, n));
    }
    sum = eb->constant(eb, 0);
    for (int32_t k = 0; k < nb_out; k++) {
        const prt_expr *e = part;
        if (nb_sv > 0)
            e = sv[0].d[k];
        else if (s->nb_split >= 0)
            e = eb->constant(eb, s->split[k]);
        else if (s->num_outputs && k == n - 1)
            e = eb->operation(
                eb, PRT_DIM_SUB, d,
                eb->operation(eb, PRT_DIM_PROD, part, eb->constant(eb, n - 1)));
        if (e && eb->is_constant(eb, e, &v) && v < 0)
            return op_fail(o, PRT_ERR_SHAPE,
                           "output %d would have length %lld along axis %d", (int)k,
                           (long long)v, (int)axis);
        out[k] = in[0];
        out[k].d[axis] = e;
        sum = eb->operation(eb, PRT_DIM_SUM, sum, e);
    }
    if (dc && sum && eb->is_constant(eb, sum, &v) && v != dv)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the parts' lengths sum to %lld, but dim %d is %lld", (long long)v,
                       (int)axis, (long long)dv);
    return PRT_OK;
}

/* The length of part k for an axis of length d (split values in sv when the
 * input gives them). */
static int64_t split_length(const split_op *s, int64_t d, const int64_t *sv, int32_t k)
{
    int64_t c;
    if (sv)
        return sv[k];
    if (s->nb_split >= 0)
        return s->split[k];
    if (!s->num_outputs)
        return d / s->n;
    c = (d + s->n - 1) / s->n;
    return k < s->n - 1 ? c : d - c * (s->n - 1);
}

/* The axis, with every output's dims checked against the parts' lengths:
 * from sv (the split input's values, on the host) or, where only the
 * device holds them (sv NULL with a split input), the outputs' own lengths,
 * which the same values gave as expressions. */
prt_status split_check(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                       const prt_tensor_desc *out, int32_t nb_out, const int64_t *sv,
                       int32_t *axis, int64_t *outer, int64_t *inner)
{
    const split_op *s = (const split_op *)o;
    const prt_dims *id = &in[0].dims;
    int64_t sum = 0;
    char a[128], b[128];
    prt_status st = op_axis(o, s->axis, id->nb_dims, 0, "the input", axis);
    if (st)
        return st;
    if (nb_in > 1 && (base_volume(&in[1].dims) != nb_out || in[1].dims.nb_dims != 1))
        return op_fail(o, PRT_ERR_SHAPE, "the split input must hold %d values",
                       (int)nb_out);
    if (!s->num_outputs && nb_in < 2 && s->nb_split < 0 && id->d[*axis] % s->n != 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "dim %d (%lld) does not split into %d equal parts", (int)*axis,
                       (long long)id->d[*axis], (int)s->n);
    for (int32_t k = 0; k < nb_out; k++) {
        prt_dims want = *id;
        want.d[*axis] = nb_in > 1 && !sv
                            ? out[k].dims.d[*axis]
                            : split_length(s, id->d[*axis], nb_in > 1 ? sv : NULL, k);
        sum += want.d[*axis];
        if (!opd_dims_eq(&want, &out[k].dims))
            return op_fail(o, PRT_ERR_SHAPE, "output %d dims %s differ from %s", (int)k,
                           base_dims_format(&out[k].dims, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(&want, BASE_DIMS_LIST, b, sizeof b));
    }
    if (sum != id->d[*axis])
        return op_fail(o, PRT_ERR_SHAPE,
                       "the parts' lengths sum to %lld, but dim %d of the input is %lld",
                       (long long)sum, (int)*axis, (long long)id->d[*axis]);
    *outer = 1;
    *inner = 1;
    for (int32_t i = 0; i < *axis; i++)
        *outer *= id->d[i];
    for (int32_t i = *axis + 1; i < id->nb_dims; i++)
        *inner *= id->d[i];
    return PRT_OK;
}

static prt_status split_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *y, void *ws, void *stream)
{
    const prt_dims *id = &in[0].dims;
    int64_t sv[OP_MAX_OUTPUTS], outer, inner, off = 0;
    size_t es = prt_dtype_size(dtype);
    int32_t axis = 0;
    prt_status st;
    (void)ws, (void)stream;
    if (nb_in > 1 && base_volume(&in[1].dims) == nb_out)
        for (int32_t k = 0; k < nb_out; k++)
            sv[k] = op_int_at(x[1], in[1].dtype, k);
    st = split_check(o, in, nb_in, out, nb_out, sv, &axis, &outer, &inner);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_out; k++) {
        int64_t len = out[k].dims.d[axis] * inner, row = id->d[axis] * inner;
        for (int64_t b0 = 0; b0 < outer && len > 0; b0++)
            memcpy((uint8_t *)y[k] + (size_t)(b0 * len) * es,
                   (const uint8_t *)x[0] + (size_t)(b0 * row + off) * es,
                   (size_t)len * es);
        off += len;
    }
    return PRT_OK;
}

static const op_class split_class = {
    .min_inputs = 1,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(split_op),
    .alias_input = -1,
    .parse = split_parse,
    .serialize = split_serialize,
    .min_shape_inputs = 0,
    .max_shape_inputs = 1,
    .in_dtypes = split_in_dtypes,
    .nb_outputs = split_nb_outputs,
    .shapes_n = split_shapes,
    .out_dtype_n = split_out_dtype,
    .run = split_run,
};

static const prt_field_schema split_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis to cut, default 0; -r to r-1"},
    {"split", PRT_FIELD_INT32, -1, "the parts' lengths (their count is the outputs')"},
    {"num_outputs", PRT_FIELD_INT32, 1, "n parts of ceil(d / n), the last one smaller"},
    {"outputs", PRT_FIELD_INT32, 1, "n, for the split input's lengths or n equal parts"},
};

const prt_plugin_creator op_split_creator =
    OP_CREATOR("Split", split_class, split_schema,
               (int32_t)(sizeof split_schema / sizeof split_schema[0]));

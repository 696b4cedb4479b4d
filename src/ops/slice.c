/*
 * Slice (namespace "plugrt", version "1"), ONNX opset 13 semantics. Inputs
 * data (any dtype), starts, ends, optional axes and steps (1-D int32/int64
 * of one length); starts..steps are also shape inputs, so the output dims
 * are expressions of their values. axes (default 0..n-1) and steps
 * (default 1) must be constants at build time; starts and ends may be
 * expressions (then taken as >= 0, which a value computed from dims is).
 *
 * Per ONNX: a negative start or end counts from the end of the axis; with
 * step > 0 both are clamped to [0, d], with step < 0 the start to [0, d-1]
 * and the end to [-1, d-1]; the axis' length is max(ceil((end - start) /
 * step), 0). The run computes the same from the values in memory and
 * fails if they give other dims than the runtime's.
 *
 * Opsets 1 to 9 gave starts, ends and axes as attributes: fields starts,
 * ends (int64 arrays) and axes (int32 array), used when the op has no
 * input but data.
 *
 * Values: a 1-D data shape tensor sliced by constants gives its values.
 */
#include <string.h>

#include "ops/cpu/cpu_kernels.h"
#include "ops/shape_ops.h"

typedef struct slice_op {
    op_object o;
    int32_t nb; /* entries of the fields starts, ends (and axes); -1: none */
    int32_t nb_axes;
    int64_t f[3][SLICE_MAX]; /* starts, ends, axes */
} slice_op;

static const char *const slice_field_names[3] = {"starts", "ends", "axes"};

static prt_status slice_parse(op_object *o, const op_fields *f)
{
    slice_op *s = (slice_op *)o;
    int32_t len[3];
    for (int32_t k = 0; k < 3; k++) {
        const prt_field *fl;
        prt_status st = op_field_find(f, slice_field_names[k], &fl);
        if (st)
            return st;
        len[k] = fl ? (int32_t)(fl->length > SLICE_MAX ? SLICE_MAX + 1 : fl->length) : -1;
        if (len[k] > SLICE_MAX)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field '%s' has more than %d values",
                                  slice_field_names[k], SLICE_MAX);
        for (int32_t i = 0; i < len[k]; i++) {
            double unused;
            if (op_field_number_at(fl, i, &s->f[k][i], &unused) != 1)
                return op_fields_fail(
                    f, PRT_ERR_INVALID_ARGUMENT, "field '%s' has type %s, expected int64",
                    slice_field_names[k], base_field_type_name(fl->type));
        }
    }
    if ((len[0] < 0) != (len[1] < 0) || len[0] != len[1] ||
        (len[2] >= 0 && len[2] != len[0]))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "fields starts, ends (and axes) go together and hold one "
                              "count of values (%d, %d, %d)",
                              (int)len[0], (int)len[1], (int)len[2]);
    s->nb = len[0];
    s->nb_axes = len[2];
    return PRT_OK;
}

static int32_t slice_serialize(op_object *o, prt_field *ser)
{
    slice_op *s = (slice_op *)o;
    int32_t n = 0;
    for (int32_t k = 0; s->nb >= 0 && k < 3; k++)
        if (k < 2 || s->nb_axes >= 0)
            op_ser(&ser[n++], slice_field_names[k], PRT_FIELD_INT64, s->f[k], s->nb);
    return n;
}

/* The fields as shape-input values (starts, ends, axes), into sv; their
 * count. */
static int32_t slice_field_exprs(const op_object *o, prt_expr_builder *eb,
                                 prt_dim_exprs *sv)
{
    const slice_op *s = (const slice_op *)o;
    int32_t n = s->nb_axes >= 0 ? 3 : 2;
    for (int32_t k = 0; k < n; k++) {
        sv[k].nb_dims = s->nb;
        for (int32_t i = 0; i < s->nb; i++)
            sv[k].d[i] = eb->constant(eb, s->f[k][i]);
    }
    return n;
}

/* v + d * (v < 0): an axis position counted from the end when negative. */
static const prt_expr *slice_from_end(prt_expr_builder *eb, const prt_expr *v,
                                      const prt_expr *d)
{
    const prt_expr *neg = eb->operation(eb, PRT_DIM_LESS, v, eb->constant(eb, 0));
    return eb->operation(eb, PRT_DIM_SUM, v, eb->operation(eb, PRT_DIM_PROD, neg, d));
}

static prt_status slice_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                               prt_expr_builder *eb)
{
    int32_t n, r = in[0].nb_dims, seen[PRT_MAX_DIMS] = {0};
    prt_dim_exprs fsv[3];
    if ((nb_sv > 0) == (((slice_op *)o)->nb >= 0) || nb_in != nb_sv + 1)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "starts and ends come from the fields or from inputs 1.. (data "
                       "and shape inputs both), not both or neither");
    if (nb_sv == 0) {
        nb_sv = slice_field_exprs(o, eb, fsv);
        sv = fsv;
    }
    n = sv[0].nb_dims;
    if (nb_sv < 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "needs starts and ends");
    for (int32_t k = 1; k < nb_sv; k++)
        if (sv[k].nb_dims != n)
            return op_fail(o, PRT_ERR_SHAPE, "starts has %d values, input %d has %d",
                           (int)n, (int)(k + 1), (int)sv[k].nb_dims);
    if (n > r)
        return op_fail(o, PRT_ERR_SHAPE, "%d starts for data of rank %d", (int)n, (int)r);
    *out = in[0];
    for (int32_t i = 0; i < n; i++) {
        int64_t axis = i, step = 1, v;
        const prt_expr *d, *s, *e;
        if (nb_sv > 2 && !eb->is_constant(eb, sv[2].d[i], &axis))
            return op_fail(o, PRT_ERR_SHAPE, "axes value %d is not a constant", (int)i);
        if (nb_sv > 3 && !eb->is_constant(eb, sv[3].d[i], &step))
            return op_fail(o, PRT_ERR_SHAPE, "steps value %d is not a constant", (int)i);
        if (axis < -r || axis >= r)
            return op_fail(o, PRT_ERR_SHAPE, "axis %lld is out of range for rank %d",
                           (long long)axis, (int)r);
        axis = axis < 0 ? axis + r : axis;
        if (seen[axis]++)
            return op_fail(o, PRT_ERR_SHAPE, "axis %lld is given twice", (long long)axis);
        if (step == 0)
            return op_fail(o, PRT_ERR_SHAPE, "step %d is 0", (int)i);
        d = in[0].d[axis];
        s = sv[0].d[i];
        e = sv[1].d[i];
        /* A negative start or end counts from the end; then clamp. A value
         * known only at run time (a shape input) may be either sign, so it
         * becomes v + d * (v < 0); a non-negative constant is kept as is. */
        if (!eb->is_constant(eb, s, &v) || v < 0)
            s = eb->operation(eb, PRT_DIM_MAX, slice_from_end(eb, s, d),
                              eb->constant(eb, 0));
        if (!eb->is_constant(eb, e, &v) || v < 0)
            e = eb->operation(eb, PRT_DIM_MAX, slice_from_end(eb, e, d),
                              eb->constant(eb, step > 0 ? 0 : -1));
        if (step > 0) {
            s = eb->operation(eb, PRT_DIM_MIN, s, d);
            e = eb->operation(eb, PRT_DIM_MIN, e, d);
        } else {
            const prt_expr *dm1 = eb->operation(eb, PRT_DIM_SUB, d, eb->constant(eb, 1));
            s = eb->operation(eb, PRT_DIM_MIN, s, dm1);
            e = eb->operation(eb, PRT_DIM_MIN, e, dm1);
        }
        out->d[axis] = eb->operation(eb, PRT_DIM_MAX,
                                     eb->operation(eb, PRT_DIM_CEIL_DIV,
                                                   eb->operation(eb, PRT_DIM_SUB, e, s),
                                                   eb->constant(eb, step)),
                                     eb->constant(eb, 0));
    }
    return PRT_OK;
}

/* Concrete start and step per data axis (every axis; untouched ones
 * 0 and 1) and the output dims, from the parameters' values. */
static prt_status slice_params(const op_object *o, const prt_dims *dd,
                               const int64_t *const vals[4], int32_t nb, int32_t n,
                               int64_t *start, int64_t *step, prt_dims *od)
{
    int32_t r = dd->nb_dims, seen[PRT_MAX_DIMS] = {0};
    *od = *dd;
    for (int32_t a = 0; a < r; a++) {
        start[a] = 0;
        step[a] = 1;
    }
    for (int32_t i = 0; i < n; i++) {
        int64_t axis = nb > 2 ? vals[2][i] : i, k = nb > 3 ? vals[3][i] : 1;
        int64_t s = vals[0][i], e = vals[1][i], d, len;
        if (axis < -r || axis >= r || k == 0 || k == INT64_MIN)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "entry %d: axis %lld or step %lld is not valid", (int)i,
                           (long long)axis, (long long)k);
        axis = axis < 0 ? axis + r : axis;
        if (seen[axis]++)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "axis %lld is given twice",
                           (long long)axis);
        d = dd->d[axis];
        s = s < 0 ? (s < -d ? 0 : s + d) : s;
        if (e < 0)
            e = e < -d ? (k > 0 ? 0 : -1) : e + d;
        if (k > 0) {
            s = s > d ? d : s;
            e = e > d ? d : e;
        } else {
            s = s > d - 1 ? d - 1 : s;
            e = e > d - 1 ? d - 1 : e;
        }
        /* max(ceil((e - s) / k), 0), both signs of k; |e - s| <= d + 1. */
        if (k > 0)
            len = e > s ? (e - s - 1) / k + 1 : 0;
        else
            len = s > e ? (s - e - 1) / -k + 1 : 0;
        od->d[axis] = len;
        start[axis] = s;
        step[axis] = k;
    }
    return PRT_OK;
}

prt_status slice_host_params(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                             const void *const *x, const prt_tensor_desc *out,
                             int64_t *start, int64_t *step)
{
    int64_t buf[4][SLICE_MAX];
    const int64_t *vals[4] = {NULL, NULL, NULL, NULL};
    const prt_dims *dd = &in[0].dims;
    int32_t cnt = nb_in > 1 ? (int32_t)base_volume(&in[1].dims) : 0, r = dd->nb_dims;
    prt_dims od;
    char a[128], b[128];
    prt_status st;
    if (nb_in == 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "needs starts and ends");
    if (cnt > SLICE_MAX)
        return op_fail(o, PRT_ERR_SHAPE, "more than %d starts", SLICE_MAX);
    for (int32_t k = 1; k < nb_in; k++) {
        if (in[k].dims.nb_dims != 1 || in[k].dims.d[0] != cnt)
            return op_fail(o, PRT_ERR_SHAPE, "input %d must hold %d values", (int)k,
                           (int)cnt);
        for (int32_t i = 0; i < cnt; i++)
            buf[k - 1][i] = op_int_at(x[k], in[k].dtype, i);
        vals[k - 1] = buf[k - 1];
    }
    if (nb_in == 1) { /* the fields */
        const slice_op *s = (const slice_op *)o;
        cnt = s->nb;
        nb_in = s->nb_axes >= 0 ? 4 : 3;
        for (int32_t k = 0; k < nb_in - 1; k++)
            vals[k] = s->f[k];
    }
    st = slice_params(o, dd, vals, nb_in - 1, cnt, start, step, &od);
    if (st)
        return st;
    if (od.nb_dims != out->dims.nb_dims ||
        memcmp(od.d, out->dims.d, sizeof(int64_t) * (size_t)r))
        return op_fail(o, PRT_ERR_SHAPE,
                       "the output dims %s differ from %s, which the values of "
                       "starts, ends, axes and steps give",
                       base_dims_format(&out->dims, BASE_DIMS_LIST, a, sizeof a),
                       base_dims_format(&od, BASE_DIMS_LIST, b, sizeof b));
    return PRT_OK;
}

static prt_status slice_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int64_t start[PRT_MAX_DIMS], step[PRT_MAX_DIMS];
    int64_t istride[PRT_MAX_DIMS], src = 0;
    const prt_dims *dd = &in[0].dims, od = out->dims;
    size_t es = prt_dtype_size(dtype);
    int32_t r = dd->nb_dims;
    prt_status st = slice_host_params(o, in, nb_in, x, out, start, step);
    (void)ws;
    if (st)
        return st;
    for (int32_t d = r - 1; d >= 0; d--)
        istride[d] = d == r - 1 ? 1 : istride[d + 1] * dd->d[d + 1];
    for (int32_t d = 0; d < r; d++) {
        src += start[d] * istride[d];
        step[d] *= istride[d]; /* the element stride of output dim d */
    }
    if (base_volume(&od) > 0)
        op_copy_strided(y, (const uint8_t *)x[0] + (size_t)src * es, es, r, od.d, step);
    return PRT_OK;
}

static prt_status slice_values(op_object *o, const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *in_values, int32_t nb_in,
                               const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                               prt_expr_builder *eb)
{
    int64_t buf[4][SLICE_MAX], start[PRT_MAX_DIMS], step[PRT_MAX_DIMS];
    const int64_t *vals[4] = {NULL, NULL, NULL, NULL};
    const slice_op *s = (const slice_op *)o;
    int32_t cnt = nb_in > 1 ? in_values[1].nb_dims : s->nb;
    prt_dims dd, od;
    (void)out_dims;
    if (in_dims[0].nb_dims != 1 || in_values[0].nb_dims < 0 || cnt < 0 || cnt > SLICE_MAX)
        return PRT_OK;
    dd.nb_dims = 1;
    dd.d[0] = in_values[0].nb_dims;
    for (int32_t k = 1; k < nb_in; k++) {
        if (in_values[k].nb_dims != cnt)
            return PRT_OK;
        for (int32_t i = 0; i < cnt; i++)
            if (!eb->is_constant(eb, in_values[k].d[i], &buf[k - 1][i]))
                return PRT_OK;
        vals[k - 1] = buf[k - 1];
    }
    if (nb_in == 1) { /* the fields */
        nb_in = s->nb_axes >= 0 ? 4 : 3;
        for (int32_t k = 0; k < nb_in - 1; k++)
            vals[k] = s->f[k];
    }
    if (slice_params(o, &dd, vals, nb_in - 1, cnt, start, step, &od))
        return PRT_ERR_SHAPE;
    for (int64_t i = 0; i < od.d[0]; i++)
        out_values->d[i] = in_values[0].d[start[0] + i * step[0]];
    out_values->nb_dims = (int32_t)od.d[0];
    return PRT_OK;
}

static uint32_t slice_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    if (index == 0)
        return OP_DT_ALL;
    return index == 1 ? OP_DT_INDEX : OP_DT(types[1]);
}

static const op_class slice_class = {
    .min_inputs = 1,
    .max_inputs = 5,
    .dtypes = OP_DT_ALL,
    .size = sizeof(slice_op),
    .alias_input = -1,
    .parse = slice_parse,
    .serialize = slice_serialize,
    .run = slice_run,
    .min_shape_inputs = 0,
    .max_shape_inputs = 4,
    .in_dtypes = slice_in_dtypes,
    .shapes_sv = slice_shapes,
    .values = slice_values,
};

static const prt_field_schema slice_schema[] = {
    {"starts", PRT_FIELD_INT64, -1, "opsets 1-9: the starts (without inputs 1..4)"},
    {"ends", PRT_FIELD_INT64, -1, "opsets 1-9: the ends"},
    {"axes", PRT_FIELD_INT64, -1, "opsets 1-9: the axes, default 0..n-1"},
};

const prt_plugin_creator op_slice_creator =
    OP_CREATOR("Slice", slice_class, slice_schema, 3);

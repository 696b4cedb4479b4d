/*
 * The reshaping ops (namespace "plugrt", version "1"): the output holds the
 * input's elements in the same order under other dims. Any dtype. Their
 * dims come from shape inputs, so they have no concrete `infer`: the run
 * checks that the volumes agree. They are views (op_class.view): the
 * builder gives the output the input's memory where the input dies here,
 * and the run copies only when the two are apart. Values (shape tensors)
 * pass through.
 *
 * Reshape, ONNX opset 14: input data, shape input `shape` (its values).
 *   Field allowzero (int32, default 0). A value 0 copies the input's dim at
 *   that position (allowzero 0) or is a 0 dim (allowzero 1); one value may
 *   be -1, inferred as FLOOR_DIV(volume, product of the others) (the run
 *   fails when that does not divide). A value that is not a constant at
 *   build time is taken as the dim itself (a dim computed from dims is
 *   neither 0 nor -1 in practice; the run's volume check catches the rest).
 * Unsqueeze, ONNX opset 13: input data, axes from shape input `axes` or
 *   (opset 1 to 12) field axes; the axes are constants in [-R, R-1] for
 *   the output rank R, no repeats; a 1 is inserted at each.
 * Squeeze, ONNX opset 13: input data, axes as for Unsqueeze but optional
 *   and in [-r, r-1]; without axes every dim that is a constant 1 goes (a
 *   symbolic dim is an error: whether it is 1 is not known at build time).
 *   A squeezed dim must be 1: a constant other than 1 fails the build.
 */
#include <string.h>

#include "ops/shape_ops.h"

enum { RS_RESHAPE, RS_UNSQUEEZE, RS_SQUEEZE };

typedef struct reshape_op {
    op_object o;
    int32_t allowzero; /* Reshape */
    int32_t nb_axes;   /* Unsqueeze, Squeeze: field axes, -1 if absent */
    int32_t axes[PRT_MAX_DIMS];
} reshape_op;

static prt_status reshape_parse(op_object *o, const op_fields *f)
{
    reshape_op *r = (reshape_op *)o;
    if (o->cls->kind == RS_RESHAPE) {
        r->nb_axes = -1;
        return op_field_i32(f, "allowzero", 0, &r->allowzero);
    }
    return op_field_i32_array(f, "axes", r->axes, PRT_MAX_DIMS, &r->nb_axes);
}

static int32_t reshape_serialize(op_object *o, prt_field *ser)
{
    reshape_op *r = (reshape_op *)o;
    if (o->cls->kind == RS_RESHAPE) {
        op_ser(&ser[0], "allowzero", PRT_FIELD_INT32, &r->allowzero, 1);
        return 1;
    }
    if (r->nb_axes < 0)
        return 0;
    op_ser(&ser[0], "axes", PRT_FIELD_INT32, r->axes, r->nb_axes);
    return 1;
}

/* The output holds the input's elements. */
prt_status op_copy_check(const op_object *o, const prt_tensor_desc *in,
                         const prt_tensor_desc *out)
{
    char a[128], b[128];
    if (base_volume(&in[0].dims) == base_volume(&out->dims))
        return PRT_OK;
    return op_fail(o, PRT_ERR_SHAPE,
                   "the output dims %s do not hold the input's %s elements",
                   base_dims_format(&out->dims, BASE_DIMS_LIST, a, sizeof a),
                   base_dims_format(&in[0].dims, BASE_DIMS_LIST, b, sizeof b));
}

prt_status op_copy_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                       int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                       const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    int64_t n = base_volume(&in[0].dims);
    prt_status st = op_copy_check(o, in, out);
    (void)nb_in, (void)ws;
    if (st)
        return st;
    if (x[0] != y)
        memmove(y, x[0], prt_dtype_size(dtype) * (size_t)n);
    return PRT_OK;
}

/* The -1 dim: volume / (product of the other dims). Dims that appear both
 * in the input and among the other output dims (the same expression) are
 * cancelled first, and constant factors reduced, so [b, s, 128] -> [b, s,
 * -1, 64] infers the constant 2, not FLOOR_DIV(b*s*128, b*s*64): the value
 * is the same (floor(x*k / (y*k)) = floor(x / y) for k > 0), but the
 * bounds of a quotient of symbols are loose and would size memory for the
 * worst case of each. */
static const prt_expr *infer_dim(prt_expr_builder *eb, const prt_dim_exprs *in,
                                 const prt_dim_exprs *out, int32_t skip)
{
    int32_t used[PRT_MAX_DIMS] = {0};
    int64_t cin = 1, cout = 1, v;
    const prt_expr *num = eb->constant(eb, 1), *den = eb->constant(eb, 1);
    for (int32_t i = 0; i < out->nb_dims; i++) {
        int32_t k;
        if (i == skip)
            continue;
        for (k = 0; k < in->nb_dims; k++)
            if (!used[k] && in->d[k] == out->d[i])
                break;
        if (k < in->nb_dims) {
            used[k] = 1;
            continue;
        }
        if (eb->is_constant(eb, out->d[i], &v) && v > 0 && cout <= INT32_MAX)
            cout *= v;
        else
            den = eb->operation(eb, PRT_DIM_PROD, den, out->d[i]);
    }
    for (int32_t k = 0; k < in->nb_dims; k++) {
        if (used[k])
            continue;
        if (eb->is_constant(eb, in->d[k], &v) && v > 0 && cin <= INT32_MAX)
            cin *= v;
        else
            num = eb->operation(eb, PRT_DIM_PROD, num, in->d[k]);
    }
    if (cin % cout == 0) {
        cin /= cout;
        cout = 1;
    }
    num = eb->operation(eb, PRT_DIM_PROD, num, eb->constant(eb, cin));
    den = eb->operation(eb, PRT_DIM_PROD, den, eb->constant(eb, cout));
    return eb->operation(eb, PRT_DIM_FLOOR_DIV, num, den);
}

static prt_status reshape_to(op_object *o, const prt_dim_exprs *in,
                             const prt_dim_exprs *shape, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    const prt_expr *rest = eb->constant(eb, 1);
    int32_t infer = -1;
    out->nb_dims = shape->nb_dims;
    for (int32_t i = 0; i < shape->nb_dims; i++) {
        int64_t v;
        const prt_expr *e = shape->d[i];
        if (eb->is_constant(eb, e, &v)) {
            if (v == -1) {
                if (infer >= 0)
                    return op_fail(o, PRT_ERR_SHAPE,
                                   "the shape has -1 at %d and at %d; only "
                                   "one dim can be inferred",
                                   (int)infer, (int)i);
                infer = i;
                out->d[i] = e;
                continue;
            }
            if (v < -1)
                return op_fail(o, PRT_ERR_SHAPE,
                               "shape value %d is %lld; dims are >= 0 (or -1)", (int)i,
                               (long long)v);
            if (v == 0 && !((reshape_op *)o)->allowzero) {
                if (i >= in->nb_dims)
                    return op_fail(o, PRT_ERR_SHAPE,
                                   "shape value %d is 0 (copy the input's dim) "
                                   "but the input has rank %d",
                                   (int)i, (int)in->nb_dims);
                e = in->d[i];
            }
        }
        out->d[i] = e;
        rest = eb->operation(eb, PRT_DIM_PROD, rest, e);
    }
    if (infer >= 0) {
        int64_t r;
        if (rest && eb->is_constant(eb, rest, &r) && r == 0)
            return op_fail(o, PRT_ERR_SHAPE,
                           "cannot infer the -1 dim: the other dims hold 0 "
                           "elements");
        out->d[infer] = infer_dim(eb, in, out, infer);
    }
    return PRT_OK;
}

/* Axes as constants from the shape input or the field, into ax[0..*n). */
static prt_status get_axes(op_object *o, const prt_dim_exprs *sv, int32_t nb_sv,
                           prt_expr_builder *eb, int64_t *ax, int32_t *n)
{
    const reshape_op *r = (const reshape_op *)o;
    if (nb_sv > 0 && r->nb_axes >= 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "axes are given both as a field and as an input");
    if (nb_sv == 0) {
        *n = r->nb_axes;
        for (int32_t i = 0; i < r->nb_axes; i++)
            ax[i] = r->axes[i];
        return PRT_OK;
    }
    if (sv[0].nb_dims > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "too many axes (%d)", (int)sv[0].nb_dims);
    *n = sv[0].nb_dims;
    for (int32_t i = 0; i < sv[0].nb_dims; i++)
        if (!eb->is_constant(eb, sv[0].d[i], &ax[i]))
            return op_fail(o, PRT_ERR_SHAPE,
                           "axes value %d is not a constant at build time", (int)i);
    return PRT_OK;
}

/* Normalizes axes into [0, rank) and marks them in mark[]. */
static prt_status mark_axes(op_object *o, const int64_t *ax, int32_t n, int32_t rank,
                            int32_t *mark)
{
    memset(mark, 0, sizeof(int32_t) * PRT_MAX_DIMS);
    for (int32_t i = 0; i < n; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
        if (a < 0 || a >= rank)
            return op_fail(o, PRT_ERR_SHAPE, "axis %lld is out of range for rank %d",
                           (long long)ax[i], (int)rank);
        if (mark[a])
            return op_fail(o, PRT_ERR_SHAPE, "axis %lld is given twice",
                           (long long)ax[i]);
        mark[a] = 1;
    }
    return PRT_OK;
}

static prt_status reshape_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                 const prt_dim_exprs *sv, int32_t nb_sv,
                                 prt_dim_exprs *out, prt_expr_builder *eb)
{
    int64_t ax[PRT_MAX_DIMS];
    int32_t n = 0, mark[PRT_MAX_DIMS], r = in[0].nb_dims, k = 0;
    prt_status st;
    (void)nb_in;
    if (o->cls->kind == RS_RESHAPE) {
        if (sv[0].nb_dims > PRT_MAX_DIMS)
            return op_fail(o, PRT_ERR_SHAPE, "the shape has %d values (max %d)",
                           (int)sv[0].nb_dims, PRT_MAX_DIMS);
        return reshape_to(o, &in[0], &sv[0], out, eb);
    }
    st = get_axes(o, sv, nb_sv, eb, ax, &n);
    if (st)
        return st;
    if (o->cls->kind == RS_UNSQUEEZE) {
        if (n < 0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "needs axes");
        if (r + n > PRT_MAX_DIMS)
            return op_fail(o, PRT_ERR_SHAPE, "the output would have rank %d",
                           (int)(r + n));
        st = mark_axes(o, ax, n, r + n, mark);
        if (st)
            return st;
        out->nb_dims = r + n;
        for (int32_t i = 0; i < r + n; i++)
            out->d[i] = mark[i] ? eb->constant(eb, 1) : in[0].d[k++];
        return PRT_OK;
    }
    if (n >= 0) {
        st = mark_axes(o, ax, n, r, mark);
        if (st)
            return st;
    }
    out->nb_dims = 0;
    for (int32_t i = 0; i < r; i++) {
        int64_t v = 0;
        int c = eb->is_constant(eb, in[0].d[i], &v);
        if (n < 0 && !c)
            return op_fail(o, PRT_ERR_SHAPE,
                           "without axes, dim %d must be known at build time "
                           "(whether it is 1 decides the output rank)",
                           (int)i);
        if (n < 0 ? v == 1 : mark[i]) {
            if (c && v != 1)
                return op_fail(o, PRT_ERR_SHAPE,
                               "dim %d is %lld; only a dim of 1 can be squeezed", (int)i,
                               (long long)v);
            continue;
        }
        out->d[out->nb_dims++] = in[0].d[i];
    }
    return PRT_OK;
}

static prt_status reshape_values(op_object *o, const prt_dim_exprs *in_dims,
                                 const prt_dim_exprs *in_values, int32_t nb_in,
                                 const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                                 prt_expr_builder *eb)
{
    (void)o, (void)in_dims, (void)nb_in, (void)out_dims, (void)eb;
    *out_values = in_values[0];
    return PRT_OK;
}

#define RESHAPE_CLASS(k, nsv_min, nsv_max)                                               \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1, .dtypes = OP_DT_ALL,              \
        .size = sizeof(reshape_op), .alias_input = -1, .view = 1,                        \
        .parse = reshape_parse, .serialize = reshape_serialize, .run = op_copy_run,      \
        .min_shape_inputs = (nsv_min), .max_shape_inputs = (nsv_max),                    \
        .shapes_sv = reshape_shapes, .values = reshape_values,                           \
    }

static const op_class reshape_class = RESHAPE_CLASS(RS_RESHAPE, 1, 1);
static const op_class unsqueeze_class = RESHAPE_CLASS(RS_UNSQUEEZE, 0, 1);
static const op_class squeeze_class = RESHAPE_CLASS(RS_SQUEEZE, 0, 1);

static const prt_field_schema reshape_schema[] = {
    {"allowzero", PRT_FIELD_INT32, 1,
     "1: a shape value 0 is a 0 dim; 0 (default): it copies the input's dim"},
};
static const prt_field_schema axes_schema[] = {
    {"axes", PRT_FIELD_INT32, -1,
     "the axes (opset < 13; later opsets give them as a shape input)"},
};

const prt_plugin_creator op_reshape_creator =
    OP_CREATOR("Reshape", reshape_class, reshape_schema, 1);
const prt_plugin_creator op_unsqueeze_creator =
    OP_CREATOR("Unsqueeze", unsqueeze_class, axes_schema, 1);
const prt_plugin_creator op_squeeze_creator =
    OP_CREATOR("Squeeze", squeeze_class, axes_schema, 1);

/*
 * The scatter ops (namespace "plugrt", version "1"): the output is `data`
 * with elements replaced or combined with `updates` at places `indices`
 * names. Any dtype for data and updates (one dtype), indices int64 (int32
 * accepted). The output has data's dims and may share data's memory (the
 * runtime copies data first when it cannot).
 *
 * Field reduction (char, default "none"): how an update meets the element:
 * "none" replaces it (with repeated indices the last update wins, in
 * row-major order of indices), "add", "mul", "max", "min" (ONNX opsets 16
 * and 18). Half floats compute in float32; integers wrap; on bool add and
 * max are "or", mul and min "and". Another value fails at creation.
 *
 * ScatterND, ONNX opsets 11 to 18: indices of rank q >= 1 whose last dim m
 *   (a constant at build time) is in [1, r]; updates has dims indices[:-1]
 *   + data[m:]. Each index tuple names a slice data[i0..i(m-1), ...].
 * ScatterElements, ONNX opsets 11 to 18 (and Scatter, 9 and 10): indices
 *   and updates of one shape and data's rank, each dim but `axis` at most
 *   data's; out[.., indices[i], ..] (at the axis) = updates[i]. Field axis
 *   (int32, default 0), in [-r, r-1].
 *
 * An index may be negative (counting from the end of its dim); one outside
 * [-s, s-1] fails the run, naming it, instead of writing out of bounds.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

enum { SC_ND, SC_ELEMENTS };
enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static const char *const red_names[] = {"none", "add", "mul", "max", "min"};

typedef struct scatter_op {
    op_object o;
    int32_t axis; /* ScatterElements */
    int32_t reduction;
} scatter_op;

static prt_status scatter_parse(op_object *o, const op_fields *f)
{
    scatter_op *s = (scatter_op *)o;
    char red[16];
    int32_t len;
    prt_status st = op_field_str(f, "reduction", red, sizeof red, &len);
    if (!st && o->cls->kind == SC_ELEMENTS)
        st = op_field_i32(f, "axis", 0, &s->axis);
    if (st)
        return st;
    s->reduction = len < 0 ? RED_NONE : -1;
    for (int32_t k = 0; k < 5 && len >= 0; k++)
        if (strcmp(red, red_names[k]) == 0)
            s->reduction = k;
    if (s->reduction < 0)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "reduction '%s' is not supported (none, add, mul, max, "
                              "min)",
                              red);
    return PRT_OK;
}

static int32_t scatter_serialize(op_object *o, prt_field *ser)
{
    scatter_op *s = (scatter_op *)o;
    const char *r = red_names[s->reduction];
    op_ser(&ser[0], "reduction", PRT_FIELD_CHAR, r, (int64_t)strlen(r));
    if (o->cls->kind != SC_ELEMENTS)
        return 1;
    op_ser(&ser[1], "axis", PRT_FIELD_INT32, &s->axis, 1);
    return 2;
}

/* ---- shapes --------------------------------------------------------------- */

/* ScatterND's rules over dims given as constants (-1: not known). */
static prt_status snd_check(const op_object *o, const prt_dims *dd, const prt_dims *id,
                            const prt_dims *ud)
{
    int32_t r = dd->nb_dims, q = id->nb_dims;
    int64_t m = q >= 1 ? id->d[q - 1] : 0;
    char a[128], b[128];
    if (r < 1 || q < 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "data (rank %d) and indices (rank %d) must have rank >= 1", (int)r,
                       (int)q);
    if (m < 1 || m > r)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the last dim of indices is %lld; it must be known at build "
                       "time and 1 to %d (data's rank)",
                       (long long)m, (int)r);
    if (ud->nb_dims != q - 1 + r - (int32_t)m)
        goto bad;
    for (int32_t i = 0; i < ud->nb_dims; i++) {
        int64_t want = i < q - 1 ? id->d[i] : dd->d[m + i - (q - 1)];
        if (want >= 0 && ud->d[i] >= 0 && want != ud->d[i])
            goto bad;
    }
    return PRT_OK;
bad:
    return op_fail(o, PRT_ERR_SHAPE,
                   "updates %s must have the dims of indices[:-1] + data[%lld:] "
                   "(indices %s)",
                   base_dims_format(ud, BASE_DIMS_LIST, a, sizeof a), (long long)m,
                   base_dims_format(id, BASE_DIMS_LIST, b, sizeof b));
}

/* ScatterElements' rules; the same convention. */
static prt_status sel_check(const op_object *o, const prt_dims *dd, const prt_dims *id,
                            const prt_dims *ud, int32_t *axis)
{
    char a[128], b[128];
    prt_status st =
        op_axis(o, ((const scatter_op *)o)->axis, dd->nb_dims, 0, "data", axis);
    if (st)
        return st;
    if (id->nb_dims != dd->nb_dims || ud->nb_dims != id->nb_dims)
        return op_fail(o, PRT_ERR_SHAPE,
                       "data, indices and updates must have one rank (%d, %d, %d)",
                       (int)dd->nb_dims, (int)id->nb_dims, (int)ud->nb_dims);
    for (int32_t i = 0; i < id->nb_dims; i++) {
        if (id->d[i] >= 0 && ud->d[i] >= 0 && id->d[i] != ud->d[i])
            return op_fail(o, PRT_ERR_SHAPE, "updates %s and indices %s differ",
                           base_dims_format(ud, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(id, BASE_DIMS_LIST, b, sizeof b));
        if (i != *axis && id->d[i] >= 0 && dd->d[i] >= 0 && id->d[i] > dd->d[i])
            return op_fail(o, PRT_ERR_SHAPE,
                           "indices %s exceed data %s in dim %d (only the axis, %d, "
                           "may be larger)",
                           base_dims_format(id, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(dd, BASE_DIMS_LIST, b, sizeof b), (int)i,
                           (int)*axis);
    }
    return PRT_OK;
}

/* Symbolic dims as constants, -1 where not known. */
static prt_dims known(prt_expr_builder *eb, const prt_dim_exprs *e)
{
    prt_dims d;
    d.nb_dims = e->nb_dims;
    for (int32_t i = 0; i < e->nb_dims; i++)
        if (!eb->is_constant(eb, e->d[i], &d.d[i]))
            d.d[i] = -1;
    return d;
}

static prt_status scatter_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                 prt_dim_exprs *out, prt_expr_builder *eb)
{
    prt_dims dd = known(eb, &in[0]), id = known(eb, &in[1]), ud = known(eb, &in[2]);
    int32_t axis;
    prt_status st = o->cls->kind == SC_ND ? snd_check(o, &dd, &id, &ud)
                                          : sel_check(o, &dd, &id, &ud, &axis);
    (void)nb_in;
    *out = in[0];
    return st;
}

static prt_status scatter_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                                prt_dims *out)
{
    int32_t axis;
    prt_status st = o->cls->kind == SC_ND ? snd_check(o, &in[0], &in[1], &in[2])
                                          : sel_check(o, &in[0], &in[1], &in[2], &axis);
    (void)nb_in;
    *out = in[0];
    return st;
}

/* ---- combining ------------------------------------------------------------ */

/* dst[k] = combine(dst[k], src[k]) for k < n, for every dtype. */
#define SC_INT(T)                                                                        \
    do {                                                                                 \
        T *d = dst;                                                                      \
        const T *s = src;                                                                \
        for (int64_t k = 0; k < n; k++)                                                  \
            switch (red) {                                                               \
            case RED_ADD:                                                                \
                d[k] = (T)((uint64_t)d[k] + (uint64_t)s[k]);                             \
                break;                                                                   \
            case RED_MUL:                                                                \
                d[k] = (T)((uint64_t)d[k] * (uint64_t)s[k]);                             \
                break;                                                                   \
            case RED_MAX:                                                                \
                d[k] = s[k] > d[k] ? s[k] : d[k];                                        \
                break;                                                                   \
            default:                                                                     \
                d[k] = s[k] < d[k] ? s[k] : d[k];                                        \
                break;                                                                   \
            }                                                                            \
    } while (0)

static float combine_f(int32_t red, float a, float b)
{
    switch (red) {
    case RED_ADD:
        return a + b;
    case RED_MUL:
        return a * b;
    case RED_MAX: /* NaN wins, as in ONNX's reference (numpy.maximum) */
        return b > a || b != b ? b : a;
    default:
        return b < a || b != b ? b : a;
    }
}

static void combine(int32_t dtype, int32_t red, void *dst, const void *src, int64_t n)
{
    size_t es = prt_dtype_size(dtype);
    if (red == RED_NONE) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (dtype) {
    case PRT_FLOAT32:
        for (int64_t k = 0; k < n; k++)
            ((float *)dst)[k] =
                combine_f(red, ((float *)dst)[k], ((const float *)src)[k]);
        break;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        for (int64_t k = 0; k < n; k++) {
            float a, b;
            op_to_f32((uint16_t *)dst + k, dtype, 1, &a);
            op_to_f32((const uint16_t *)src + k, dtype, 1, &b);
            a = combine_f(red, a, b);
            op_from_f32(&a, dtype, 1, (uint16_t *)dst + k);
        }
        break;
    case PRT_INT8:
        SC_INT(int8_t);
        break;
    case PRT_UINT8:
        SC_INT(uint8_t);
        break;
    case PRT_INT32:
        SC_INT(int32_t);
        break;
    case PRT_INT64:
        SC_INT(int64_t);
        break;
    default: /* bool: add and max are or, mul and min and */
        for (int64_t k = 0; k < n; k++) {
            uint8_t *d = (uint8_t *)dst + k, s = ((const uint8_t *)src)[k];
            *d = red == RED_ADD || red == RED_MAX ? (*d | s) != 0 : (*d && s);
        }
        break;
    }
}

/* ---- kernels -------------------------------------------------------------- */

static prt_status bad_index(const op_object *o, int64_t v, int64_t e, int32_t dim,
                            int64_t s)
{
    return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                   "index %lld (element %lld of indices) is out of range for data dim "
                   "%d of size %lld",
                   (long long)v, (long long)e, (int)dim, (long long)s);
}

int32_t scatter_is_elements(const op_object *o)
{
    return o->cls->kind == SC_ELEMENTS;
}

int32_t scatter_reduction(const op_object *o)
{
    return ((const scatter_op *)o)->reduction;
}

prt_status scatter_axis(const op_object *o, int32_t r, int32_t *axis)
{
    return op_axis(o, ((const scatter_op *)o)->axis, r, 0, "data", axis);
}

static prt_status scatter_run(const op_object *o, int32_t dtype,
                              const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out,
                              const void *const *x, void *const *ys, void *ws,
                              void *stream)
{
    void *y = ys[0];
    const scatter_op *s = (const scatter_op *)o;
    const prt_dims *dd = &in[0].dims, *id = &in[1].dims;
    int64_t ds[PRT_MAX_DIMS], n = base_volume(id);
    size_t es = prt_dtype_size(dtype);
    uint8_t *yb = y;
    const uint8_t *ub = x[2];
    (void)nb_in, (void)out, (void)ws, (void)stream;
    opd_strides(dd, ds);
    /* Every index first: a bad one must leave nothing half done. */
    if (o->cls->kind == SC_ND) {
        int32_t m = (int32_t)id->d[id->nb_dims - 1];
        int64_t slice = ds[m - 1];
        for (int64_t e = 0; e < n; e++) {
            int64_t v = op_int_at(x[1], in[1].dtype, e), sz = dd->d[e % m];
            if (v < -sz || v >= sz)
                return bad_index(o, v, e, (int32_t)(e % m), sz);
        }
        if (x[0] != y)
            memcpy(y, x[0], (size_t)base_volume(dd) * es);
        for (int64_t t = 0; t < n / m; t++) {
            int64_t dst = 0;
            for (int32_t j = 0; j < m; j++) {
                int64_t v = op_int_at(x[1], in[1].dtype, t * m + j);
                dst += (v < 0 ? v + dd->d[j] : v) * ds[j];
            }
            combine(dtype, s->reduction, yb + (size_t)dst * es,
                    ub + (size_t)(t * slice) * es, slice);
        }
        return PRT_OK;
    }
    {
        int32_t axis = 0, r = dd->nb_dims;
        int64_t idx[PRT_MAX_DIMS] = {0}, base = 0, sz;
        op_axis(o, s->axis, r, 0, "data", &axis);
        sz = dd->d[axis];
        for (int64_t e = 0; e < n; e++) {
            int64_t v = op_int_at(x[1], in[1].dtype, e);
            if (v < -sz || v >= sz)
                return bad_index(o, v, e, axis, sz);
        }
        if (x[0] != y)
            memcpy(y, x[0], (size_t)base_volume(dd) * es);
        /* base: data's offset of idx with the axis coordinate left 0. */
        for (int64_t e = 0; e < n; e++) {
            int64_t v = op_int_at(x[1], in[1].dtype, e);
            combine(dtype, s->reduction,
                    yb + (size_t)(base + (v < 0 ? v + sz : v) * ds[axis]) * es,
                    ub + (size_t)e * es, 1);
            for (int32_t k = r - 1; k >= 0; k--) {
                idx[k]++;
                if (k != axis)
                    base += ds[k];
                if (idx[k] < id->d[k])
                    break;
                if (k != axis)
                    base -= ds[k] * id->d[k];
                idx[k] = 0;
            }
        }
    }
    return PRT_OK;
}

static uint32_t scatter_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    if (index == 0)
        return OP_DT_NO_FP8; /* reductions add and compare numbers */
    return index == 1 ? OP_DT_INDEX : OP_DT(types[0]);
}

#define SCATTER_CLASS(k)                                                                 \
    {                                                                                    \
        .kind = (k), .min_inputs = 3, .max_inputs = 3, .dtypes = OP_DT_NO_FP8,           \
        .size = sizeof(scatter_op), .alias_input = 0, .parse = scatter_parse,            \
        .serialize = scatter_serialize, .shapes = scatter_shapes,                        \
        .infer = scatter_infer, .run = scatter_run, .in_dtypes = scatter_in_dtypes,      \
    }

static const op_class scatter_nd_class = SCATTER_CLASS(SC_ND);
static const op_class scatter_elements_class = SCATTER_CLASS(SC_ELEMENTS);

static const prt_field_schema scatter_schema[] = {
    {"reduction", PRT_FIELD_CHAR, -1, "none (default), add, mul, max or min"},
    {"axis", PRT_FIELD_INT32, 1, "the axis indices index, default 0; -r to r-1"},
};

const prt_plugin_creator op_scatter_nd_creator =
    OP_CREATOR("ScatterND", scatter_nd_class, scatter_schema, 1);
const prt_plugin_creator op_scatter_elements_creator =
    OP_CREATOR("ScatterElements", scatter_elements_class, scatter_schema, 2);

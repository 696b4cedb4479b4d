/*
 * GatherElements (namespace "plugrt", version "1"), ONNX opset 13
 * semantics. Inputs data (any dtype, rank r >= 1) and indices (int32 or
 * int64, rank r); the output has indices' dims and data's dtype:
 *   out[i0, .., ia, .., i(r-1)] = data[i0, .., indices[i0, .., i(r-1)], ..]
 * with ia the `axis` position. Every other dim of indices must be at most
 * data's (ONNX Runtime's rule).
 *
 * Field axis (int32, default 0; int64 accepted), in [-r, r-1].
 *
 * An index may be negative (counting from the end of the axis); one outside
 * [-s, s-1] for an axis of size s fails the run, naming the element, instead
 * of reading out of bounds. The check is one pass over the indices before
 * the copy (min and max), so the copy runs unchecked: rows along the last
 * dim, typed by element size, a row of one index value one memcpy.
 */
#include <string.h>

#include "ops/math_ops.h"
#include "ops/shape_ops.h"

typedef struct ge_op {
    op_object o;
    int32_t axis;
} ge_op;

static prt_status ge_parse(op_object *o, const op_fields *f)
{
    return op_field_i32(f, "axis", 0, &((ge_op *)o)->axis);
}

static int32_t ge_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &((ge_op *)o)->axis, 1);
    return 1;
}

prt_status ge_axis(const op_object *o, int32_t r, int32_t ri, int32_t *out)
{
    prt_status st = op_axis(o, ((const ge_op *)o)->axis, r, 0, "data", out);
    if (!st && ri != r)
        return op_fail(o, PRT_ERR_SHAPE,
                       "indices have rank %d but data has rank %d; they "
                       "must be equal",
                       (int)ri, (int)r);
    return st;
}

/* Indices larger than the data outside the axis; dims already written out. */
static prt_status ge_exceed(const op_object *o, const char *indices, const char *data,
                            int32_t dim, int32_t axis)
{
    return op_fail(o, PRT_ERR_SHAPE,
                   "indices %s exceed data %s in dim %d (only the axis, %d, may be "
                   "larger)",
                   indices, data, (int)dim, (int)axis);
}

static prt_status ge_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t axis = 0;
    char sa[128], sb[128];
    prt_status st = ge_axis(o, in[0].nb_dims, in[1].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    for (int32_t i = 0; i < in[0].nb_dims; i++) {
        int64_t vd, vi;
        if (i != axis && eb->is_constant(eb, in[0].d[i], &vd) &&
            eb->is_constant(eb, in[1].d[i], &vi) && vi > vd)
            return ge_exceed(o, op_exprs_str(eb, &in[1], sa, sizeof sa),
                             op_exprs_str(eb, &in[0], sb, sizeof sb), i, axis);
    }
    *out = in[1];
    return PRT_OK;
}

static prt_status ge_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    int32_t axis = 0;
    char sa[128], sb[128];
    prt_status st = ge_axis(o, in[0].nb_dims, in[1].nb_dims, &axis);
    (void)nb_in;
    if (st)
        return st;
    for (int32_t i = 0; i < in[0].nb_dims; i++)
        if (i != axis && in[1].d[i] > in[0].d[i])
            return ge_exceed(o, base_dims_format(&in[1], BASE_DIMS_LIST, sa, sizeof sa),
                             base_dims_format(&in[0], BASE_DIMS_LIST, sb, sizeof sb), i,
                             axis);
    /* Indices along an empty axis can only be out of range. */
    if (in[0].d[axis] == 0 && base_volume(&in[1]) > 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "data %s is empty along axis %d, so no index is in "
                       "range",
                       base_dims_format(&in[0], BASE_DIMS_LIST, sb, sizeof sb),
                       (int)axis);
    *out = in[1];
    return PRT_OK;
}

static uint32_t ge_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT(PRT_INT32) | OP_DT(PRT_INT64);
}

/* The indices' range, checked once before any element is read: min and
 * max in one pass (it vectorizes), then, only when one is out, the first
 * such for the message. */
#define GE_RANGE(T)                                                                      \
    static int64_t ge_first_bad_##T(const T *v, int64_t n, int64_t size)                 \
    {                                                                                    \
        T lo = 0, hi = 0;                                                                \
        for (int64_t e = 0; e < n; e++) {                                                \
            lo = v[e] < lo ? v[e] : lo;                                                  \
            hi = v[e] > hi ? v[e] : hi;                                                  \
        }                                                                                \
        if (lo >= -size && hi < size)                                                    \
            return -1;                                                                   \
        for (int64_t e = 0;; e++)                                                        \
            if (v[e] < -size || v[e] >= size)                                            \
                return e;                                                                \
    }
GE_RANGE(int32_t)
GE_RANGE(int64_t)

/* One row of n outputs along indices' last dim: data element base + v *
 * sa + j * sj for index v (negative ones from the axis' end) at j. The
 * innermost axis (sa 1, sj 0) is a gather within the data's row; another
 * axis reads down a column, and a row whose indices are all one value
 * (a Tile'd index: detect_post's boxes and scores by TopK's choice) is
 * one block copy. E the element's type (a memcpy of es bytes for other
 * sizes), T the index's. */
#define GE_ROW(T, E)                                                                     \
    do {                                                                                 \
        const T *iv_ = (const T *)idx;                                                   \
        E *y_ = (E *)(void *)y;                                                          \
        const E *x_ = (const E *)(const void *)x;                                        \
        for (int64_t j_ = 0; j_ < n; j_++) {                                             \
            int64_t v_ = iv_[j_];                                                        \
            v_ += v_ < 0 ? size : 0;                                                     \
            y_[j_] = x_[v_ * sa + j_ * sj];                                              \
        }                                                                                \
    } while (0)

#define GE_ROWS(T)                                                                       \
    static void ge_row_##T(const uint8_t *x, const void *idx, uint8_t *y, int64_t n,     \
                           int64_t size, int64_t sa, int64_t sj, size_t es)              \
    {                                                                                    \
        switch (es) {                                                                    \
        case 1:                                                                          \
            GE_ROW(T, uint8_t);                                                          \
            return;                                                                      \
        case 2:                                                                          \
            GE_ROW(T, uint16_t);                                                         \
            return;                                                                      \
        case 4:                                                                          \
            GE_ROW(T, uint32_t);                                                         \
            return;                                                                      \
        case 8:                                                                          \
            GE_ROW(T, uint64_t);                                                         \
            return;                                                                      \
        default:                                                                         \
            for (int64_t j = 0; j < n; j++) {                                            \
                int64_t v = ((const T *)idx)[j];                                         \
                v += v < 0 ? size : 0;                                                   \
                memcpy(y + (size_t)j * es, x + (size_t)(v * sa + j * sj) * es, es);      \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    /* Whether the row's n indices are one value (its place, v, in *v). */               \
    static int ge_uniform_##T(const T *idx, int64_t n, int64_t size, int64_t *v)         \
    {                                                                                    \
        for (int64_t j = 1; j < n; j++)                                                  \
            if (idx[j] != idx[0])                                                        \
                return 0;                                                                \
        *v = idx[0] < 0 ? idx[0] + size : idx[0];                                        \
        return 1;                                                                        \
    }
GE_ROWS(int32_t)
GE_ROWS(int64_t)

static prt_status ge_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    const prt_dims *dd = &in[0].dims, *id = &in[1].dims;
    int32_t r = dd->nb_dims, axis = 0, wide = in[1].dtype == PRT_INT64;
    int64_t dstride[PRT_MAX_DIMS], c[PRT_MAX_DIMS] = {0};
    int64_t n = base_volume(id), size, row, rows, base = 0, bad;
    size_t es = prt_dtype_size(dtype), is = wide ? 8 : 4;
    const uint8_t *data = x[0], *ib = x[1];
    uint8_t *yb = ys[0];
    prt_status st = ge_axis(o, r, id->nb_dims, &axis);
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    if (st)
        return st;
    if (n == 0)
        return PRT_OK;
    size = dd->d[axis];
    bad =
        wide ? ge_first_bad_int64_t(x[1], n, size) : ge_first_bad_int32_t(x[1], n, size);
    if (bad >= 0) {
        int64_t v = wide ? ((const int64_t *)x[1])[bad] : ((const int32_t *)x[1])[bad];
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "index %lld at element %lld of indices is out of "
                       "range for axis %d of size %lld (-%lld to %lld)",
                       (long long)v, (long long)bad, (int)axis, (long long)size,
                       (long long)size, (long long)(size - 1));
    }
    dstride[r - 1] = 1;
    for (int32_t i = r - 2; i >= 0; i--)
        dstride[i] = dstride[i + 1] * dd->d[i + 1];
    rows = n / id->d[r - 1];
    /* Rows along indices' last dim; base: data's offset of the row's first
     * element with the axis coordinate left 0. */
    for (row = 0; row < rows; row++) {
        const int64_t m = id->d[r - 1];
        const void *iv = ib + (size_t)(row * m) * is;
        uint8_t *y = yb + (size_t)(row * m) * es;
        int64_t v;
        if (axis == r - 1)
            wide ? ge_row_int64_t(data + (size_t)base * es, iv, y, m, size, 1, 0, es)
                 : ge_row_int32_t(data + (size_t)base * es, iv, y, m, size, 1, 0, es);
        else if (wide ? ge_uniform_int64_t(iv, m, size, &v)
                      : ge_uniform_int32_t(iv, m, size, &v))
            memcpy(y, data + (size_t)(base + v * dstride[axis]) * es, (size_t)m * es);
        else
            wide ? ge_row_int64_t(data + (size_t)base * es, iv, y, m, size, dstride[axis],
                                  1, es)
                 : ge_row_int32_t(data + (size_t)base * es, iv, y, m, size, dstride[axis],
                                  1, es);
        for (int32_t k = r - 2; k >= 0; k--) {
            if (k != axis)
                base += dstride[k];
            if (++c[k] < id->d[k])
                break;
            if (k != axis)
                base -= dstride[k] * id->d[k];
            c[k] = 0;
        }
    }
    return PRT_OK;
}

static const op_class ge_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(ge_op),
    .alias_input = -1,
    .parse = ge_parse,
    .serialize = ge_serialize,
    .shapes = ge_shapes,
    .infer = ge_infer,
    .run = ge_run,
    .in_dtypes = ge_in_dtypes,
};

static const prt_field_schema ge_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis indices index, default 0; -r to r-1"},
};

const prt_plugin_creator op_gather_elements_creator =
    OP_CREATOR("GatherElements", ge_class, ge_schema, 1);

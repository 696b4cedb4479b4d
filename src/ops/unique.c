/*
 * Unique (namespace "plugrt", version "1"), ONNX opset 11: the distinct
 * elements of X (any dtype), or with `axis` its distinct slices along it.
 *
 * Fields sorted (int32, default 1): the unique values in ascending order
 * (slices compared lexicographically in row-major order), else in the
 * order of their first occurrence; axis (int32, optional), in [-r, r-1];
 * absent: X is flattened.
 *
 * Outputs, with m the number of items (X's volume, or its axis' length)
 * and K the number of unique ones:
 *   0 Y: X's dtype, [K] (flattened) or X's dims with the axis' set to K;
 *   1 indices: int64 [K], each unique item's first occurrence in X;
 *   2 inverse_indices: int64 [m], each item's position in Y;
 *   3 counts: int64 [K], how often each occurs;
 *   4 K, the size tensor (a 0-D int64), upper bound m, opt half of it
 *     (ops_data.h); the importer keeps it internal.
 *
 * Equality is by value: 0 and -0 are one value, every NaN is equal to
 * every other and sorts after all numbers (numpy's equal_nan). A stable
 * merge sort of the items' positions (in the workspace, 32 bytes an item)
 * makes the first of equal items its first occurrence.
 */
#include <string.h>

#include "ops/ops_data.h"

enum { UQ_Y, UQ_INDICES, UQ_INVERSE, UQ_COUNTS, UQ_SIZE, UQ_NB };

typedef struct unique_op {
    op_object o;
    int32_t sorted;
    int32_t has_axis;
    int32_t axis;
} unique_op;

static prt_status uq_parse(op_object *o, const op_fields *f)
{
    unique_op *u = (unique_op *)o;
    const prt_field *fl;
    prt_status st = op_field_i32(f, "sorted", 1, &u->sorted);
    if (!st)
        st = op_field_find(f, "axis", &fl);
    if (!st)
        st = op_field_i32(f, "axis", 0, &u->axis);
    u->has_axis = fl != NULL;
    u->sorted = u->sorted != 0;
    return st;
}

static int32_t uq_serialize(op_object *o, prt_field *ser)
{
    unique_op *u = (unique_op *)o;
    op_ser(&ser[0], "sorted", PRT_FIELD_INT32, &u->sorted, 1);
    if (!u->has_axis)
        return 1;
    op_ser(&ser[1], "axis", PRT_FIELD_INT32, &u->axis, 1);
    return 2;
}

static int32_t uq_nb_outputs(const op_object *o)
{
    (void)o;
    return UQ_NB;
}

static int32_t uq_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                            int32_t index)
{
    (void)o, (void)nb_in;
    return index == UQ_Y ? types[0] : PRT_INT64;
}

static prt_status uq_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    const unique_op *u = (const unique_op *)o;
    const prt_expr *m, *k;
    int32_t axis = 0;
    (void)nb_in, (void)sv, (void)nb_sv, (void)nb_out;
    if (u->has_axis) {
        prt_status st = op_axis(o, u->axis, in[0].nb_dims, 0, "X", &axis);
        if (st)
            return st;
        m = in[0].d[axis];
    } else {
        m = eb->constant(eb, 1);
        for (int32_t i = 0; i < in[0].nb_dims; i++)
            m = eb->operation(eb, PRT_DIM_PROD, m, in[0].d[i]);
    }
    k = opd_declare_size(o, eb, UQ_SIZE, m);
    if (!k)
        return PRT_ERR_OUT_OF_MEMORY;
    if (u->has_axis) {
        out[UQ_Y] = in[0];
        out[UQ_Y].d[axis] = k;
    } else {
        out[UQ_Y].nb_dims = 1;
        out[UQ_Y].d[0] = k;
    }
    out[UQ_INDICES].nb_dims = out[UQ_COUNTS].nb_dims = out[UQ_INVERSE].nb_dims = 1;
    out[UQ_INDICES].d[0] = out[UQ_COUNTS].d[0] = k;
    out[UQ_INVERSE].d[0] = m;
    out[UQ_SIZE].nb_dims = 0;
    return PRT_OK;
}

/* The items' geometry: m items of `outer` runs of `inner` elements. */
typedef struct uq_geom {
    int64_t m, outer, inner;
} uq_geom;

static uq_geom uq_geometry(const unique_op *u, const prt_dims *d)
{
    uq_geom g = {base_volume(d), 1, 1};
    int32_t axis = u->axis < 0 ? u->axis + d->nb_dims : u->axis;
    if (!u->has_axis)
        return g;
    if (axis < 0 || axis >= d->nb_dims) {
        g.m = 0; /* an error the shapes reported; nothing to size */
        return g;
    }
    g.m = d->d[axis];
    for (int32_t i = 0; i < axis; i++)
        g.outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        g.inner *= d->d[i];
    return g;
}

static int64_t uq_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                            int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t m = uq_geometry((const unique_op *)o, &in[0]).m, n;
    (void)dtype, (void)nb_in, (void)out, (void)nb_out;
    return m >= 0 && base_mul_i64(m, 4 * (int64_t)sizeof(int64_t), &n) ? n : -1;
}

/* Orders elements a and b of x: -1, 0 or 1. */
static int elem_cmp(const void *x, int32_t dtype, int64_t a, int64_t b)
{
    if (dtype == PRT_INT64) {
        int64_t p = ((const int64_t *)x)[a], q = ((const int64_t *)x)[b];
        return (p > q) - (p < q);
    } else {
        double p = opd_get(x, dtype, a), q = opd_get(x, dtype, b);
        if (p != p || q != q)
            return (p != p) - (q != q); /* NaN after every number */
        return (p > q) - (p < q);
    }
}

typedef struct uq_ctx {
    const void *x;
    int32_t dtype;
    uq_geom g;
} uq_ctx;

/* Orders items a and b: their elements in row-major order. */
static int item_cmp(const uq_ctx *c, int64_t a, int64_t b)
{
    for (int64_t p = 0; p < c->g.outer; p++)
        for (int64_t q = 0; q < c->g.inner; q++) {
            int64_t base = p * c->g.m * c->g.inner + q;
            int r =
                elem_cmp(c->x, c->dtype, base + a * c->g.inner, base + b * c->g.inner);
            if (r)
                return r;
        }
    return 0;
}

/* Sorts perm[0..n) by item, stably (bottom-up merge through tmp). */
static void merge_sort(const uq_ctx *c, int64_t *perm, int64_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = item_cmp(c, perm[j], perm[i]) < 0 ? perm[j++] : perm[i++];
            while (i < mid)
                tmp[k++] = perm[i++];
            while (j < hi)
                tmp[k++] = perm[j++];
        }
        memcpy(perm, tmp, sizeof(int64_t) * (size_t)n);
    }
}

prt_status unique_plan(const op_object *o, const prt_tensor_desc *in,
                       const prt_tensor_desc *out, int64_t *m, int64_t *outer,
                       int64_t *inner, int32_t *sorted)
{
    const unique_op *u = (const unique_op *)o;
    uq_geom g = uq_geometry(u, &in[0].dims);
    int32_t axis = 0;
    if (u->has_axis) {
        prt_status st = op_axis(o, u->axis, in[0].dims.nb_dims, 0, "X", &axis);
        if (st)
            return st;
    }
    if (out[UQ_INVERSE].dims.nb_dims != 1 || out[UQ_INVERSE].dims.d[0] != g.m ||
        out[UQ_INDICES].dims.d[0] < g.m || out[UQ_COUNTS].dims.d[0] < g.m ||
        out[UQ_Y].dims.d[u->has_axis ? axis : 0] < g.m)
        return op_fail(o, PRT_ERR_SHAPE, "the outputs cannot hold %lld items",
                       (long long)g.m);
    *m = g.m;
    *outer = g.outer;
    *inner = g.inner;
    *sorted = u->sorted;
    return PRT_OK;
}

static prt_status uq_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *y, void *ws, void *stream)
{
    const unique_op *u = (const unique_op *)o;
    uq_ctx c = {x[0], dtype, uq_geometry(u, &in[0].dims)};
    int64_t m = c.g.m, k = 0, *perm = ws, *tmp = perm + m, *gstart = tmp + m;
    int64_t *gorder = gstart + m;
    int64_t *yi = y[UQ_INDICES], *yinv = y[UQ_INVERSE], *ycnt = y[UQ_COUNTS];
    size_t es = prt_dtype_size(dtype);
    int32_t sorted;
    prt_status st = unique_plan(o, in, out, &m, &c.g.outer, &c.g.inner, &sorted);
    (void)nb_in, (void)nb_out, (void)stream;
    if (st)
        return st;
    if (m > 0) {
        for (int64_t i = 0; i < m; i++)
            perm[i] = i;
        merge_sort(&c, perm, tmp, m);
        for (int64_t t = 0; t < m; t++)
            if (t == 0 || item_cmp(&c, perm[t - 1], perm[t]) != 0)
                gstart[k++] = t;
        /* Output order: sorted, or by first occurrence (tmp: item -> group
         * of which it is the first). */
        if (sorted) {
            for (int64_t g = 0; g < k; g++)
                gorder[g] = g;
        } else {
            int64_t p = 0;
            for (int64_t i = 0; i < m; i++)
                tmp[i] = -1;
            for (int64_t g = 0; g < k; g++)
                tmp[perm[gstart[g]]] = g;
            for (int64_t i = 0; i < m; i++)
                if (tmp[i] >= 0)
                    gorder[p++] = tmp[i];
        }
        /* tmp: group -> output position */
        for (int64_t p = 0; p < k; p++)
            tmp[gorder[p]] = p;
        for (int64_t p = 0; p < k; p++) {
            int64_t g = gorder[p], first = perm[gstart[g]];
            int64_t end = g + 1 < k ? gstart[g + 1] : m;
            yi[p] = first;
            ycnt[p] = end - gstart[g];
            for (int64_t t = gstart[g]; t < end; t++)
                yinv[perm[t]] = p;
            /* Y densely with the true K: [outer, K, inner]. */
            for (int64_t q = 0; q < c.g.outer && c.g.inner > 0; q++)
                memcpy((uint8_t *)y[UQ_Y] + (size_t)((q * k + p) * c.g.inner) * es,
                       (const uint8_t *)x[0] + (size_t)((q * m + first) * c.g.inner) * es,
                       (size_t)c.g.inner * es);
        }
    }
    memcpy(y[UQ_SIZE], &k, sizeof k);
    return PRT_OK;
}

static const op_class unique_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_NO_FP8,
    .size = sizeof(unique_op),
    .alias_input = -1,
    .parse = uq_parse,
    .serialize = uq_serialize,
    .nb_outputs = uq_nb_outputs,
    .shapes_n = uq_shapes,
    .out_dtype_n = uq_out_dtype,
    .workspace = uq_workspace,
    .run = uq_run,
};

static const prt_field_schema unique_schema[] = {
    {"sorted", PRT_FIELD_INT32, 1, "1 (default): ascending; 0: by first occurrence"},
    {"axis", PRT_FIELD_INT32, 1, "the axis of the slices; absent: the flattened X"},
};

const prt_plugin_creator op_unique_creator =
    OP_CREATOR("Unique", unique_class, unique_schema, 2);

/*
 * The ops whose every output coordinate reads one input coordinate per dim
 * (namespace "plugrt", version "1"), any dtype. Pad: a per-dim map from
 * output to input offsets (in the workspace) drives one walk. Tile (and
 * Expand, expand.c): op_tile_copy copies each input run once and repeats
 * it by doubling memcpy, with no map and no per-element call.
 *
 * Tile, ONNX opsets 6 to 13: input x, shape input `repeats` (1-D int64 of
 *   x's rank, values >= 0). Output dim i is x's dim i times repeats[i].
 *   The run checks that the output's dims are multiples of the input's.
 *   A 1-D shape tensor tiled states its values (Shape -> Tile).
 * Pad, ONNX opsets 2 to 19:
 *   Field mode (char): "constant" (default), "reflect" (mirrored without
 *     repeating the edge, numpy's rule, which also serves pads longer than
 *     the dim), "edge" (the edge repeated) or "wrap" (opset 19: periodic).
 *     Another mode fails at creation.
 *   Pads: field pads (int64 array: opset 2 to 10's attribute, or a
 *     constant input the importer folded), else input 1 (opset 11 on: 1-D
 *     int64, a shape input for the output dims and a data input for the
 *     run, at most 8 values as a shape input). [b0, b1, ..., e0, e1, ...]:
 *     begin and end counts per padded axis; negative ones crop.
 *   The padded axes: field axes (int32 array, opset 18's input, which the
 *     importer folds), default all; the pads hold 2 per axis.
 *   The constant: the last input when there is one more (opset 11 on:
 *     constant_value, a scalar of x's dtype), else field value (float32,
 *     opset 2 to 10), else 0.
 *   Output dim i is d + b + e (it must be >= 0). reflect, edge and wrap
 *   need a non-empty dim where they pad.
 */
#include <string.h>

#include "ops/cuda/gpu_args.h"
#include "ops/ops_data.h"
#include "ops/shape_ops.h"

/* ---- the walk ------------------------------------------------------------- */

/* y (dims od, dense) from x: element (o0, .., o(r-1)) reads x at offset
 * map[0][o0] + .. + map[r-1][o(r-1)], or `fill` where one of them is -1. */
static void map_walk(const prt_dims *od, int64_t *const *map, const void *x, void *y,
                     size_t es, const void *fill)
{
    int32_t r = od->nb_dims;
    int64_t idx[PRT_MAX_DIMS] = {0}, rows = 1, n;
    const uint8_t *xb = x;
    uint8_t *yb = y;
    if (r == 0) {
        memcpy(y, x, es);
        return;
    }
    n = od->d[r - 1];
    for (int32_t d = 0; d < r - 1; d++)
        rows *= od->d[d];
    for (int64_t row = 0; row < rows; row++, yb += (size_t)n * es) {
        int64_t base = 0;
        int pad = 0;
        for (int32_t d = 0; d < r - 1; d++) {
            pad |= map[d][idx[d]] < 0;
            base += map[d][idx[d]];
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t m = map[r - 1][j];
            memcpy(yb + (size_t)j * es,
                   pad || m < 0 ? fill : xb + (size_t)(base + m) * es, es);
        }
        for (int32_t d = r - 2; d >= 0; d--) {
            if (++idx[d] < od->d[d])
                break;
            idx[d] = 0;
        }
    }
}

/* The maps' room: one int64 per output coordinate of every dim. */
static int64_t map_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = 0;
    (void)o, (void)dtype, (void)in, (void)nb_in;
    for (int32_t d = 0; d < out->nb_dims; d++)
        if (out->d[d] < 0 || !base_add_i64(n, out->d[d], &n))
            return -1;
    return base_mul_i64(n, (int64_t)sizeof(int64_t), &n) ? n : -1;
}

/* Points map[d] into ws, one after another. */
static void map_alloc(const prt_dims *od, void *ws, int64_t **map)
{
    int64_t *p = ws;
    for (int32_t d = 0; d < od->nb_dims; d++) {
        map[d] = p;
        p += od->d[d];
    }
}

/* ---- Tile ----------------------------------------------------------------- */

static prt_status tile_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                              prt_expr_builder *eb)
{
    (void)nb_in, (void)nb_sv;
    if (sv[0].nb_dims != in[0].nb_dims)
        return op_fail(o, PRT_ERR_SHAPE, "repeats has %d values for an input of rank %d",
                       (int)sv[0].nb_dims, (int)in[0].nb_dims);
    out->nb_dims = in[0].nb_dims;
    for (int32_t i = 0; i < in[0].nb_dims; i++) {
        int64_t v;
        if (eb->is_constant(eb, sv[0].d[i], &v) && v < 0)
            return op_fail(o, PRT_ERR_SHAPE, "repeats value %d is %lld (< 0)", (int)i,
                           (long long)v);
        out->d[i] = eb->operation(eb, PRT_DIM_PROD, in[0].d[i], sv[0].d[i]);
    }
    return PRT_OK;
}

/* Values: a shape tensor's (1-D) values repeated, for an output of static
 * size <= 8 (Shape -> Tile). */
static prt_status tile_values(op_object *o, const prt_dim_exprs *in_dims,
                              const prt_dim_exprs *in_values, int32_t nb_in,
                              const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                              prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims), m = in_values[0].nb_dims;
    (void)o, (void)nb_in;
    if (n < 0 || m <= 0 || in_dims[0].nb_dims != 1)
        return PRT_OK;
    for (int32_t i = 0; i < n; i++)
        out_values->d[i] = in_values[0].d[i % m];
    out_values->nb_dims = n;
    return PRT_OK;
}

/* The output's dims are a tiling of the input's. */
prt_status tile_check(const op_object *o, const prt_dims *id, const prt_dims *od)
{
    char a[128], b[128];
    int ok = od->nb_dims == id->nb_dims;
    for (int32_t d = 0; ok && d < id->nb_dims; d++)
        ok = id->d[d] == 0 ? od->d[d] == 0 : od->d[d] % id->d[d] == 0;
    if (ok)
        return PRT_OK;
    return op_fail(o, PRT_ERR_SHAPE,
                   "the output dims %s are not a tiling of the input's %s",
                   base_dims_format(od, BASE_DIMS_LIST, a, sizeof a),
                   base_dims_format(id, BASE_DIMS_LIST, b, sizeof b));
}

/* The repeated dims' walk (op_tile_copy): dims 0..r-1 after merging the
 * trailing dims that repeat once into the element (es bytes), their input
 * dims and repeats, x's strides and y's block sizes in bytes (yb[d]: one
 * index of dim d - 1, so yb[r] = es). */
typedef struct tile_walk {
    int32_t r;
    int64_t in[PRT_MAX_DIMS], rep[PRT_MAX_DIMS];
    size_t xs[PRT_MAX_DIMS], yb[PRT_MAX_DIMS + 1];
} tile_walk;

/* y holds n bytes; makes it reps copies of them. Elements of 1 to 8 bytes
 * are stored one by one (a constant-size store the compiler vectorizes:
 * detect_post's Tile of one int64 index to 20); longer runs double, each
 * memcpy as long as what is written so far. */
static void tile_repeat(uint8_t *y, size_t n, int64_t reps)
{
    size_t have = n, total = n * (size_t)reps;
#define TILE_SPLAT(T)                                                                    \
    do {                                                                                 \
        T v_;                                                                            \
        memcpy(&v_, y, sizeof v_);                                                       \
        for (int64_t i_ = 1; i_ < reps; i_++)                                            \
            memcpy(y + (size_t)i_ * sizeof v_, &v_, sizeof v_);                          \
        return;                                                                          \
    } while (0)
    if (reps <= 1)
        return;
    switch (n) {
    case 1:
        memset(y + 1, y[0], total - 1);
        return;
    case 2:
        TILE_SPLAT(uint16_t);
    case 4:
        TILE_SPLAT(uint32_t);
    case 8:
        TILE_SPLAT(uint64_t);
    default:
        break;
    }
#undef TILE_SPLAT
    while (have < total) {
        size_t c = have < total - have ? have : total - have;
        memcpy(y + have, y, c);
        have += c;
    }
}

/* Output block of dim d from input block x: the input's in[d] sub-blocks
 * (the last dim's one memcpy), then that run repeated. */
static void tile_level(const tile_walk *w, int32_t d, const uint8_t *x, uint8_t *y)
{
    size_t blk = w->yb[d + 1];
    if (d == w->r - 1)
        memcpy(y, x, (size_t)w->in[d] * blk);
    else
        for (int64_t k = 0; k < w->in[d]; k++)
            tile_level(w, d + 1, x + (size_t)k * w->xs[d], y + (size_t)k * blk);
    tile_repeat(y, (size_t)w->in[d] * blk, w->rep[d]);
}

void op_tile_copy(const prt_dims *id, const prt_dims *od, const void *x, void *y,
                  size_t es)
{
    tile_walk w;
    int32_t r = od->nb_dims;
    size_t xs;
    if (base_volume(od) == 0)
        return;
    /* Trailing dims repeated once are part of a contiguous element. */
    while (r > 0 && od->d[r - 1] == id->d[r - 1]) {
        es *= (size_t)id->d[r - 1];
        r--;
    }
    if (r == 0) {
        memcpy(y, x, es);
        return;
    }
    w.r = r;
    w.yb[r] = es;
    xs = es;
    for (int32_t d = r - 1; d >= 0; d--) {
        w.in[d] = id->d[d];
        w.rep[d] = od->d[d] / id->d[d];
        w.xs[d] = xs;
        w.yb[d] = w.yb[d + 1] * (size_t)od->d[d];
        xs *= (size_t)id->d[d];
    }
    tile_level(&w, 0, x, y);
}

static prt_status tile_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *x, void *const *ys, void *ws, void *stream)
{
    const prt_dims *id = &in[0].dims, *od = &out->dims;
    prt_status s = tile_check(o, id, od);
    (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (s)
        return s;
    op_tile_copy(id, od, x[0], ys[0], prt_dtype_size(dtype));
    return PRT_OK;
}

static const op_class tile_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(op_object),
    .alias_input = -1,
    .run = tile_run,
    .min_shape_inputs = 1,
    .max_shape_inputs = 1,
    .shapes_sv = tile_shapes,
    .values = tile_values,
};

const prt_plugin_creator op_tile_creator = OP_CREATOR("Tile", tile_class, NULL, 0);

/* ---- Pad ------------------------------------------------------------------ */

static const char *const pad_modes[] = {"constant", "reflect", "edge", "wrap"};

#define PAD_MAX (2 * PRT_MAX_DIMS)

typedef struct pad_op {
    op_object o;
    int32_t mode;
    int32_t nb_pads; /* -1: pads come from input 1 */
    int32_t nb_axes; /* -1: every axis */
    int32_t axes[PRT_MAX_DIMS];
    int64_t pads[PAD_MAX];
    float value;
    int32_t has_value;
} pad_op;

static prt_status pad_parse(op_object *o, const op_fields *f)
{
    pad_op *p = (pad_op *)o;
    const prt_field *fl;
    char mode[16];
    int32_t len;
    prt_status st = op_field_str(f, "mode", mode, sizeof mode, &len);
    if (!st)
        st = op_field_i32_array(f, "axes", p->axes, PRT_MAX_DIMS, &p->nb_axes);
    if (!st)
        st = op_field_find(f, "value", &fl);
    if (!st)
        st = op_field_f32(f, "value", 0.0f, &p->value);
    if (st)
        return st;
    p->has_value = fl != NULL;
    p->mode = len < 0 ? OPK_PAD_CONSTANT : -1;
    for (int32_t k = 0; k < 4 && len >= 0; k++)
        if (strcmp(mode, pad_modes[k]) == 0)
            p->mode = k;
    if (p->mode < 0)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "mode '%s' is not supported (constant, reflect, edge, "
                              "wrap)",
                              mode);
    st = op_field_find(f, "pads", &fl);
    if (st)
        return st;
    p->nb_pads = -1;
    if (!fl)
        return PRT_OK;
    if (fl->length > PAD_MAX || fl->length % 2)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'pads' has %lld values; it holds two per axis, at "
                              "most %d",
                              (long long)fl->length, PAD_MAX);
    for (int64_t k = 0; k < fl->length; k++) {
        double unused;
        if (op_field_number_at(fl, k, &p->pads[k], &unused) != 1)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field 'pads' has type %s, expected int64",
                                  base_field_type_name(fl->type));
        if (p->pads[k] < -((int64_t)1 << 48) || p->pads[k] > ((int64_t)1 << 48))
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field 'pads' value %lld is out of range",
                                  (long long)p->pads[k]);
    }
    p->nb_pads = (int32_t)fl->length;
    return PRT_OK;
}

static int32_t pad_serialize(op_object *o, prt_field *ser)
{
    pad_op *p = (pad_op *)o;
    const char *m = pad_modes[p->mode];
    int32_t n = 0;
    op_ser(&ser[n++], "mode", PRT_FIELD_CHAR, m, (int64_t)strlen(m));
    if (p->nb_pads >= 0)
        op_ser(&ser[n++], "pads", PRT_FIELD_INT64, p->pads, p->nb_pads);
    if (p->nb_axes >= 0)
        op_ser(&ser[n++], "axes", PRT_FIELD_INT32, p->axes, p->nb_axes);
    if (p->has_value)
        op_ser(&ser[n++], "value", PRT_FIELD_FLOAT32, &p->value, 1);
    return n;
}

/* The padded axes for rank r, normalized, into ax[0..*n). */
static prt_status pad_axes(const op_object *o, int32_t r, int32_t *ax, int32_t *n)
{
    const pad_op *p = (const pad_op *)o;
    int32_t seen[PRT_MAX_DIMS] = {0};
    *n = p->nb_axes < 0 ? r : p->nb_axes;
    for (int32_t i = 0; i < *n; i++) {
        int32_t a = i;
        if (p->nb_axes >= 0) {
            prt_status st = op_axis(o, p->axes[i], r, 0, "the input", &a);
            if (st)
                return st;
            if (seen[a]++)
                return op_fail(o, PRT_ERR_SHAPE, "axis %d is given twice",
                               (int)p->axes[i]);
        }
        ax[i] = a;
    }
    return PRT_OK;
}

/* The number of pads input 1 (or the field) must hold for rank r. */
static prt_status pad_count(const op_object *o, int32_t r, int32_t have, int32_t *ax,
                            int32_t *nax)
{
    prt_status st = pad_axes(o, r, ax, nax);
    if (!st && have != 2 * *nax)
        return op_fail(o, PRT_ERR_SHAPE,
                       "pads has %d values; %d axes need %d (begins, then ends)",
                       (int)have, (int)*nax, (int)(2 * *nax));
    return st;
}

static prt_status pad_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    const pad_op *p = (const pad_op *)o;
    const prt_expr *pe[PAD_MAX];
    int32_t ax[PRT_MAX_DIMS], nax, have = p->nb_pads >= 0 ? p->nb_pads : sv[0].nb_dims;
    prt_status st;
    if ((p->nb_pads >= 0) != (nb_sv == 0) || nb_in > (nb_sv == 0 ? 2 : 3) ||
        (nb_sv && nb_in < 2))
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "pads come from the field or from input 1 (a data and a "
                       "shape input), not both or neither");
    st = pad_count(o, in[0].nb_dims, have, ax, &nax);
    if (st)
        return st;
    for (int32_t k = 0; k < have; k++)
        pe[k] = nb_sv ? sv[0].d[k] : eb->constant(eb, p->pads[k]);
    *out = in[0];
    for (int32_t i = 0; i < nax; i++) {
        const prt_expr *d = in[0].d[ax[i]];
        int64_t dv, v;
        out->d[ax[i]] = eb->operation(eb, PRT_DIM_SUM, d,
                                      eb->operation(eb, PRT_DIM_SUM, pe[i], pe[i + nax]));
        if (out->d[ax[i]] && eb->is_constant(eb, out->d[ax[i]], &v) && v < 0)
            return op_fail(o, PRT_ERR_SHAPE, "the pads make dim %d %lld long", (int)ax[i],
                           (long long)v);
        if (p->mode != OPK_PAD_CONSTANT && eb->is_constant(eb, d, &dv) && dv == 0 &&
            !(eb->is_constant(eb, out->d[ax[i]], &v) && v == 0))
            return op_fail(o, PRT_ERR_SHAPE, "mode %s cannot pad dim %d, which is empty",
                           pad_modes[p->mode], (int)ax[i]);
    }
    return PRT_OK;
}

/* The constant, in the output's dtype, from the field: floats rounded,
 * integers truncated and saturated to int64, then cut to the dtype's width
 * (C's conversion), bool non-zero. */
static void pad_field_value(const pad_op *p, int32_t dtype, uint8_t *v)
{
    double f = p->value;
    int64_t i = f != f         ? 0
                : f >= 9.2e18  ? INT64_MAX
                : f <= -9.2e18 ? INT64_MIN
                               : (int64_t)f;
    switch (dtype) {
    case PRT_FLOAT32:
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        op_from_f32(&p->value, dtype, 1, v);
        break;
    case PRT_INT32: {
        int32_t w = (int32_t)(uint32_t)(uint64_t)i;
        memcpy(v, &w, 4);
        break;
    }
    case PRT_INT64:
        memcpy(v, &i, 8);
        break;
    case PRT_BOOL:
        v[0] = f != 0.0;
        break;
    default: /* int8, uint8 */
        v[0] = (uint8_t)(uint64_t)i;
        break;
    }
}

prt_status pad_plan_make(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_dims *od, const void *pads_in,
                         pad_plan *pl)
{
    const pad_op *p = (const pad_op *)o;
    const prt_dims *id = &in[0].dims;
    int64_t pads[PAD_MAX];
    int32_t have = p->nb_pads, cv = p->nb_pads >= 0 ? 1 : 2;
    prt_dims want = *id;
    char a[128], b[128];
    prt_status s;
    memset(pl, 0, sizeof *pl);
    pl->mode = p->mode;
    pl->fill_input = -1;
    pl->pads_known = p->nb_pads >= 0 || pads_in;
    if (p->nb_pads < 0) {
        have = (int32_t)base_volume(&in[1].dims);
        if (in[1].dims.nb_dims != 1 || have > PAD_MAX)
            return op_fail(o, PRT_ERR_SHAPE, "pads must be 1-D with at most %d values",
                           PAD_MAX);
        for (int32_t k = 0; pads_in && k < have; k++)
            pads[k] = op_int_at(pads_in, in[1].dtype, k);
    } else {
        memcpy(pads, p->pads, sizeof(int64_t) * (size_t)have);
    }
    s = pad_count(o, id->nb_dims, have, pl->ax, &pl->nax);
    if (s)
        return s;
    for (int32_t i = 0; pl->pads_known && i < pl->nax; i++) {
        int32_t d = pl->ax[i];
        pl->begin[d] = pads[i];
        want.d[d] = id->d[d] + pads[i] + pads[i + pl->nax];
    }
    for (int32_t i = 0; i < pl->nax; i++) {
        int32_t d = pl->ax[i];
        /* Without the pads on the host, the output's dims are those the
         * same values gave as expressions. */
        if (!pl->pads_known)
            want.d[d] = od->nb_dims == id->nb_dims ? od->d[d] : -1;
        if (p->mode != OPK_PAD_CONSTANT && id->d[d] == 0 && want.d[d] > 0)
            return op_fail(o, PRT_ERR_SHAPE, "mode %s cannot pad dim %d, which is empty",
                           pad_modes[p->mode], (int)d);
    }
    if (!opd_dims_eq(&want, od))
        return op_fail(o, PRT_ERR_SHAPE,
                       "the output dims %s differ from %s, which the pads give",
                       base_dims_format(od, BASE_DIMS_LIST, a, sizeof a),
                       base_dims_format(&want, BASE_DIMS_LIST, b, sizeof b));
    if (nb_in > cv) {
        if (base_volume(&in[cv].dims) != 1)
            return op_fail(o, PRT_ERR_SHAPE, "constant_value must hold one value");
        pl->fill_input = cv;
    } else if (p->has_value) {
        pad_field_value(p, dtype, pl->fill);
    }
    return PRT_OK;
}

static prt_status pad_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    const prt_dims *id = &in[0].dims, *od = &out->dims;
    int64_t st[PRT_MAX_DIMS], *map[PRT_MAX_DIMS];
    size_t es = prt_dtype_size(dtype);
    pad_plan pl;
    prt_status s = pad_plan_make(o, dtype, in, nb_in, od, nb_in > 1 ? x[1] : NULL, &pl);
    (void)nb_out, (void)stream;
    if (s)
        return s;
    if (pl.fill_input >= 0)
        memcpy(pl.fill, x[pl.fill_input], es);
    opd_strides(id, st);
    map_alloc(od, ws, map);
    for (int32_t d = 0; d < od->nb_dims; d++)
        for (int64_t k = 0; k < od->d[d]; k++) {
            int64_t c = opk_pad_source(pl.mode, k - pl.begin[d], id->d[d]);
            map[d][k] = c < 0 ? -1 : c * st[d];
        }
    map_walk(od, map, x[0], ys[0], es, pl.fill);
    return PRT_OK;
}

static uint32_t pad_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    if (index == 0)
        return OP_DT_NO_FP8;
    /* pads (without the field), then the constant in x's dtype */
    return index == 1 && ((const pad_op *)o)->nb_pads < 0 ? OP_DT_INDEX : OP_DT(types[0]);
}

static const op_class pad_class = {
    .min_inputs = 1,
    .max_inputs = 3,
    .dtypes = OP_DT_NO_FP8,
    .size = sizeof(pad_op),
    .alias_input = -1,
    .parse = pad_parse,
    .serialize = pad_serialize,
    .workspace = map_workspace,
    .run = pad_run,
    .min_shape_inputs = 0,
    .max_shape_inputs = 1,
    .in_dtypes = pad_in_dtypes,
    .shapes_sv = pad_shapes,
};

static const prt_field_schema pad_schema[] = {
    {"mode", PRT_FIELD_CHAR, -1, "constant (default), reflect, edge or wrap"},
    {"pads", PRT_FIELD_INT64, -1, "begins then ends per axis; absent: input 1"},
    {"axes", PRT_FIELD_INT32, -1, "the padded axes, default all"},
    {"value", PRT_FIELD_FLOAT32, 1, "the constant without a constant_value input"},
};

const prt_plugin_creator op_pad_creator = OP_CREATOR(
    "Pad", pad_class, pad_schema, (int32_t)(sizeof pad_schema / sizeof pad_schema[0]));

/*
 * DepthToSpace and SpaceToDepth (namespace "plugrt", version "1"), ONNX
 * opsets 1 to 13 (11 added DepthToSpace's mode): a 4-D input [N, C, H, W]
 * of any dtype rearranged in blocks of blocksize b, as a reshape to 6-D, a
 * transpose and a reshape back.
 *
 * DepthToSpace -> [N, C / b^2, H * b, W * b]; C must divide by b^2.
 *   Field mode (char): "DCR" (default; depth-column-row: the input viewed
 *   as [N, b, b, C/b^2, H, W]) or "CRD" (column-row-depth: [N, C/b^2, b, b,
 *   H, W]).
 * SpaceToDepth -> [N, C * b^2, H / b, W / b]; H and W must divide by b.
 * Field blocksize (int32, required, >= 1).
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

enum { DS_D2S, DS_S2D };

typedef struct ds_op {
    op_object o;
    int32_t blocksize;
    int32_t crd;
} ds_op;

static prt_status ds_parse(op_object *o, const op_fields *f)
{
    ds_op *s = (ds_op *)o;
    char mode[8];
    int32_t len = -1;
    prt_status st = op_field_i32(f, "blocksize", 0, &s->blocksize);
    if (!st && o->cls->kind == DS_D2S)
        st = op_field_str(f, "mode", mode, sizeof mode, &len);
    if (st)
        return st;
    if (s->blocksize < 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'blocksize' is %d; it is required and must be >= 1",
                              (int)s->blocksize);
    if (len >= 0 && strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "mode '%s' is not supported (DCR or CRD)", mode);
    s->crd = len >= 0 && strcmp(mode, "CRD") == 0;
    return PRT_OK;
}

static int32_t ds_serialize(op_object *o, prt_field *ser)
{
    ds_op *s = (ds_op *)o;
    op_ser(&ser[0], "blocksize", PRT_FIELD_INT32, &s->blocksize, 1);
    if (o->cls->kind != DS_D2S)
        return 1;
    op_ser(&ser[1], "mode", PRT_FIELD_CHAR, s->crd ? "CRD" : "DCR", 3);
    return 2;
}

static prt_status ds_rank(const op_object *o, int32_t r)
{
    if (r != 4)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the input has rank %d; it must be 4 (N, C, H, W)", (int)r);
    return PRT_OK;
}

static prt_status ds_indivisible(const op_object *o, const char *what, int64_t v,
                                 int64_t by)
{
    return op_fail(o, PRT_ERR_SHAPE, "%s (%lld) does not divide by %lld", what,
                   (long long)v, (long long)by);
}

static prt_status ds_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    int64_t b = ((ds_op *)o)->blocksize, v;
    const prt_expr *be = eb->constant(eb, b), *bb = eb->constant(eb, b * b);
    prt_status st = ds_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    if (o->cls->kind == DS_D2S) {
        if (eb->is_constant(eb, in[0].d[1], &v) && v % (b * b))
            return ds_indivisible(o, "the channels", v, b * b);
        out->d[1] = eb->operation(eb, PRT_DIM_FLOOR_DIV, in[0].d[1], bb);
        out->d[2] = eb->operation(eb, PRT_DIM_PROD, in[0].d[2], be);
        out->d[3] = eb->operation(eb, PRT_DIM_PROD, in[0].d[3], be);
        return PRT_OK;
    }
    for (int32_t i = 2; i < 4; i++)
        if (eb->is_constant(eb, in[0].d[i], &v) && v % b)
            return ds_indivisible(o, i == 2 ? "the height" : "the width", v, b);
    out->d[1] = eb->operation(eb, PRT_DIM_PROD, in[0].d[1], bb);
    out->d[2] = eb->operation(eb, PRT_DIM_FLOOR_DIV, in[0].d[2], be);
    out->d[3] = eb->operation(eb, PRT_DIM_FLOOR_DIV, in[0].d[3], be);
    return PRT_OK;
}

static prt_status ds_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    int64_t b = ((const ds_op *)o)->blocksize;
    prt_status st = ds_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    if (o->cls->kind == DS_D2S) {
        if (in[0].d[1] % (b * b))
            return ds_indivisible(o, "the channels", in[0].d[1], b * b);
        out->d[1] = in[0].d[1] / (b * b);
        out->d[2] = in[0].d[2] * b;
        out->d[3] = in[0].d[3] * b;
        return PRT_OK;
    }
    for (int32_t i = 2; i < 4; i++)
        if (in[0].d[i] % b)
            return ds_indivisible(o, i == 2 ? "the height" : "the width", in[0].d[i], b);
    out->d[1] = in[0].d[1] * b * b;
    out->d[2] = in[0].d[2] / b;
    out->d[3] = in[0].d[3] / b;
    return PRT_OK;
}

void ds_view(const op_object *o, const prt_dims *id, int64_t *od, int64_t *st)
{
    static const int32_t perm_dcr[6] = {0, 3, 4, 1, 5, 2};
    static const int32_t perm_crd[6] = {0, 1, 4, 2, 5, 3};
    static const int32_t perm_s2d[6] = {0, 3, 5, 1, 2, 4};
    const ds_op *s = (const ds_op *)o;
    const int32_t *perm;
    int64_t b = s->blocksize, n = id->d[0], c = id->d[1], h = id->d[2], w = id->d[3];
    int64_t vs[6];
    prt_dims v = {6, {0}};
    /* The input as 6-D, and which of its dims each output dim is. */
    if (o->cls->kind == DS_S2D) {
        prt_dims t = {6, {n, c, h / b, b, w / b, b}};
        v = t;
        perm = perm_s2d;
    } else if (s->crd) {
        prt_dims t = {6, {n, c / (b * b), b, b, h, w}};
        v = t;
        perm = perm_crd;
    } else {
        prt_dims t = {6, {n, b, b, c / (b * b), h, w}};
        v = t;
        perm = perm_dcr;
    }
    opd_strides(&v, vs);
    for (int32_t i = 0; i < 6; i++) {
        od[i] = v.d[perm[i]];
        st[i] = vs[perm[i]];
    }
}

static prt_status ds_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    const prt_dims *id = &in[0].dims;
    int64_t od[6], st[6], idx[6] = {0}, src = 0, total = base_volume(id);
    size_t es = prt_dtype_size(dtype);
    uint8_t *yb = ys[0];
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    ds_view(o, id, od, st);
    for (int64_t e = 0; e < total; e++, yb += es) {
        memcpy(yb, (const uint8_t *)x[0] + (size_t)src * es, es);
        for (int32_t k = 5; k >= 0; k--) {
            src += st[k];
            if (++idx[k] < od[k])
                break;
            src -= st[k] * od[k];
            idx[k] = 0;
        }
    }
    return PRT_OK;
}

#define DS_CLASS(k)                                                                      \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1, .dtypes = OP_DT_ALL,              \
        .size = sizeof(ds_op), .alias_input = -1, .parse = ds_parse,                     \
        .serialize = ds_serialize, .shapes = ds_shapes, .infer = ds_infer,               \
        .run = ds_run,                                                                   \
    }

static const op_class d2s_class = DS_CLASS(DS_D2S);
static const op_class s2d_class = DS_CLASS(DS_S2D);

static const prt_field_schema ds_schema[] = {
    {"blocksize", PRT_FIELD_INT32, 1, "the block's side, required, >= 1"},
    {"mode", PRT_FIELD_CHAR, -1, "DCR (default) or CRD"},
};

const prt_plugin_creator op_depth_to_space_creator =
    OP_CREATOR("DepthToSpace", d2s_class, ds_schema, 2);
const prt_plugin_creator op_space_to_depth_creator =
    OP_CREATOR("SpaceToDepth", s2d_class, ds_schema, 1);

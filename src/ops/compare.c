/*
 * The comparisons and logic ops (namespace "plugrt", version "1"), ONNX
 * opset 7-19 semantics. The output is bool (one byte, 0 or 1).
 *
 * Equal: A and B of one dtype (any: float32, float16, bfloat16, float64,
 *   int8/16/32/64, uint8/16/32/64, bool), numpy broadcasting; y = A == B. Floats compare
 * as floats (NaN differs from everything, -0 equals +0). Less, LessOrEqual, Greater,
 * GreaterOrEqual: the same without bool; y = A < B, A <= B, A > B, A >= B (all false with
 * a NaN). And, Or, Xor: A and B bool, broadcasting; any non-zero byte is true. Not: X
 * bool; y = !X. IsNaN: X float32, float16, bfloat16 or float64; y = isnan(X), X's dims.
 * IsInf: the same floats; y = X is +inf (field detect_positive, default 1)
 *   or -inf (detect_negative, default 1); each field 0 or 1.
 *
 * Output dims of the binary ops follow op_broadcast_exprs (op_common.h).
 *
 * Shape tensors: when the inputs have known values (small integer shape
 * arithmetic, as exporters write for Expand and Reshape), the comparisons
 * and logic ops state theirs (EQUAL and LESS of the values, 0/1 arithmetic
 * for the logic), so a Where after them can state its own (the builder
 * takes bool shape tensors as 0/1).
 */
#include <math.h>

#include "ops/math_ops.h"
#include "ops/ops_ew.h"

static prt_status cmp_parse(op_object *o, const op_fields *f)
{
    cmp_op *c = (cmp_op *)o;
    prt_status st = ew_field_flag(f, "detect_positive", 1, &c->detect_positive);
    if (!st)
        st = ew_field_flag(f, "detect_negative", 1, &c->detect_negative);
    return st;
}

static int32_t cmp_serialize(op_object *o, prt_field *ser)
{
    cmp_op *c = (cmp_op *)o;
    if (o->cls->kind != CMP_ISINF)
        return 0;
    op_ser(&ser[0], "detect_positive", PRT_FIELD_INT32, &c->detect_positive, 1);
    op_ser(&ser[1], "detect_negative", PRT_FIELD_INT32, &c->detect_negative, 1);
    return 2;
}

static prt_status cmp_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    if (nb_in == 1) {
        *out = in[0];
        return PRT_OK;
    }
    return op_broadcast_exprs(o, eb, &in[0], &in[1], out, "inputs A and B");
}

static prt_status cmp_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    if (nb_in == 1) {
        *out = in[0];
        return PRT_OK;
    }
    return op_broadcast_dims(o, &in[0], &in[1], out, "inputs A and B");
}

static uint32_t cmp_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    if (index > 0)
        return OP_DT(types[0]) & o->cls->dtypes;
    return o->cls->dtypes;
}

static int32_t cmp_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)types, (void)nb_in;
    return PRT_BOOL;
}

/* ---- rows ----------------------------------------------------------------- */

/* y[j] = a[j * sa] OP b[j * sb]: strides are 0 or 1 (op_bcast_walk's), and
 * each kind of row gets its loop, the broadcast value read once. */
#define CMP_ROWS(T, OP)                                                                  \
    do {                                                                                 \
        const T *a_ = (const T *)pa, *b_ = (const T *)pb;                                \
        if (sa == 1 && sb == 1) {                                                        \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = a_[j] OP b_[j];                                                   \
        } else if (sb == 0) {                                                            \
            const T bv = b_[0];                                                          \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = a_[j * sa] OP bv;                                                 \
        } else {                                                                         \
            const T av = a_[0];                                                          \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = av OP b_[j];                                                      \
        }                                                                                \
    } while (0)

#define CMP_TYPED(NAME, T)                                                               \
    static void NAME(int32_t kind, const void *pa, int64_t sa, const void *pb,           \
                     int64_t sb, uint8_t *y, int64_t n)                                  \
    {                                                                                    \
        switch (kind) {                                                                  \
        case CMP_EQUAL:                                                                  \
            CMP_ROWS(T, ==);                                                             \
            break;                                                                       \
        case CMP_LESS:                                                                   \
            CMP_ROWS(T, <);                                                              \
            break;                                                                       \
        case CMP_LE:                                                                     \
            CMP_ROWS(T, <=);                                                             \
            break;                                                                       \
        case CMP_GREATER:                                                                \
            CMP_ROWS(T, >);                                                              \
            break;                                                                       \
        default:                                                                         \
            CMP_ROWS(T, >=);                                                             \
            break;                                                                       \
        }                                                                                \
    }

CMP_TYPED(cmp_f32, float)
CMP_TYPED(cmp_i8, int8_t)
CMP_TYPED(cmp_u8, uint8_t)
CMP_TYPED(cmp_i32, int32_t)
CMP_TYPED(cmp_i64, int64_t)
CMP_TYPED(cmp_f64, double)
CMP_TYPED(cmp_i16, int16_t)
CMP_TYPED(cmp_u16, uint16_t)
CMP_TYPED(cmp_u32, uint32_t)
CMP_TYPED(cmp_u64, uint64_t)

/* Truth values: non-zero bytes are true. */
#define B_EQ(x, z) (((x) != 0) == ((z) != 0))
#define B_AND(x, z) ((x) != 0 && (z) != 0)
#define B_OR(x, z) ((x) != 0 || (z) != 0)
#define B_XOR(x, z) (((x) != 0) != ((z) != 0))
#define BOOL_ROWS(F)                                                                     \
    for (int64_t j = 0; j < n; j++)                                                      \
        y[j] = (uint8_t)F(pa[j * sa], pb[j * sb]);                                       \
    break

static void cmp_bool(int32_t kind, const uint8_t *pa, int64_t sa, const uint8_t *pb,
                     int64_t sb, uint8_t *y, int64_t n)
{
    switch (kind) {
    case CMP_EQUAL:
        BOOL_ROWS(B_EQ);
    case CMP_AND:
        BOOL_ROWS(B_AND);
    case CMP_OR:
        BOOL_ROWS(B_OR);
    default:
        BOOL_ROWS(B_XOR);
    }
}

typedef struct cmp_ctx {
    int32_t kind, dtype;
} cmp_ctx;

static int cmp_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                   int64_t n)
{
    const cmp_ctx *c = ctx;
    switch (c->dtype) {
    case PRT_FLOAT32:
        cmp_f32(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        /* As float32 (exact), a chunk at a time. */
        for (int64_t j = 0; j < n; j += EW_CHUNK) {
            float a[EW_CHUNK], b[EW_CHUNK];
            int64_t m = n - j < EW_CHUNK ? n - j : EW_CHUNK;
            ew_load_f32((const uint16_t *)p[0] + j * s[0], c->dtype, s[0], s[0] ? m : 1,
                        a);
            ew_load_f32((const uint16_t *)p[1] + j * s[1], c->dtype, s[1], s[1] ? m : 1,
                        b);
            cmp_f32(c->kind, a, s[0], b, s[1], y + j, m);
        }
        break;
    case PRT_INT8:
        cmp_i8(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_UINT8:
        cmp_u8(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_INT32:
        cmp_i32(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_INT64:
        cmp_i64(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_FLOAT64:
        cmp_f64(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_INT16:
        cmp_i16(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_UINT16:
        cmp_u16(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_UINT32:
        cmp_u32(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    case PRT_UINT64:
        cmp_u64(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    default:
        cmp_bool(c->kind, p[0], s[0], p[1], s[1], y, n);
        break;
    }
    return 0;
}

/* Not, IsNaN, IsInf. */
static void cmp_unary(const cmp_op *c, int32_t dtype, const void *x, uint8_t *y,
                      int64_t n)
{
    const int32_t kind = c->o.cls->kind;
    const float pos = c->detect_positive ? INFINITY : NAN;
    const float neg = c->detect_negative ? -INFINITY : NAN;
    if (kind == CMP_NOT) {
        for (int64_t i = 0; i < n; i++)
            y[i] = ((const uint8_t *)x)[i] == 0;
        return;
    }
    if (dtype == PRT_FLOAT64) {
        const double *v = x;
        for (int64_t j = 0; j < n; j++)
            y[j] = kind == CMP_ISNAN ? v[j] != v[j] : v[j] == pos || v[j] == neg;
        return;
    }
    for (int64_t i = 0; i < n; i += EW_CHUNK) {
        float buf[EW_CHUNK];
        const float *v = buf;
        int64_t m = n - i < EW_CHUNK ? n - i : EW_CHUNK;
        if (dtype == PRT_FLOAT32)
            v = (const float *)x + i;
        else
            ew_load_f32((const uint16_t *)x + i, dtype, 1, m, buf);
        /* NaN equals nothing, so an undetected sign compares with NaN. */
        if (kind == CMP_ISNAN)
            for (int64_t j = 0; j < m; j++)
                y[i + j] = v[j] != v[j];
        else
            for (int64_t j = 0; j < m; j++)
                y[i + j] = v[j] == pos || v[j] == neg;
    }
}

static prt_status cmp_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    cmp_ctx c;
    size_t es[2];
    prt_dims dims[2];
    (void)ws, (void)stream;
    if (nb_in == 1) {
        cmp_unary((const cmp_op *)o, dtype, x[0], y, base_volume(&in[0].dims));
        return PRT_OK;
    }
    c.kind = o->cls->kind;
    c.dtype = dtype;
    for (int32_t k = 0; k < 2; k++) {
        es[k] = prt_dtype_size(dtype);
        dims[k] = in[k].dims;
    }
    /* The rows never stop the walk. */
    (void)op_bcast_walk(&out->dims, 2, dims, es, 1, x, y, cmp_row, &c);
    return PRT_OK;
}

/* ---- values ----------------------------------------------------------------- */

/* One element of the output's values from a and b (b NULL for Not); truth
 * values are 0/1. */
static const prt_expr *cmp_value(prt_expr_builder *eb, int32_t kind, const prt_expr *a,
                                 const prt_expr *b)
{
    const prt_expr *one = eb->constant(eb, 1);
    switch (kind) {
    case CMP_EQUAL:
        return eb->operation(eb, PRT_DIM_EQUAL, a, b);
    case CMP_LESS:
        return eb->operation(eb, PRT_DIM_LESS, a, b);
    case CMP_LE:
        return eb->operation(eb, PRT_DIM_SUB, one, eb->operation(eb, PRT_DIM_LESS, b, a));
    case CMP_GREATER:
        return eb->operation(eb, PRT_DIM_LESS, b, a);
    case CMP_GE:
        return eb->operation(eb, PRT_DIM_SUB, one, eb->operation(eb, PRT_DIM_LESS, a, b));
    case CMP_AND:
        return eb->operation(eb, PRT_DIM_MIN, a, b);
    case CMP_OR:
        return eb->operation(eb, PRT_DIM_MAX, a, b);
    case CMP_XOR:
        return eb->operation(eb, PRT_DIM_SUB, one,
                             eb->operation(eb, PRT_DIM_EQUAL, a, b));
    default: /* Not */
        return eb->operation(eb, PRT_DIM_SUB, one, a);
    }
}

/* Element j of each input (a single value broadcast). */
static prt_status cmp_values(op_object *o, const prt_dim_exprs *in_dims,
                             const prt_dim_exprs *in_values, int32_t nb_in,
                             const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                             prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims), cnt[2] = {1, 1};
    if (n < 0 || out_dims->nb_dims > 1)
        return PRT_OK;
    for (int32_t k = 0; k < nb_in; k++) {
        cnt[k] = op_static_count(eb, &in_dims[k]);
        if (cnt[k] < 0 || in_values[k].nb_dims != cnt[k] || (cnt[k] != 1 && cnt[k] != n))
            return PRT_OK; /* not known: out_values stays -1 */
    }
    for (int32_t j = 0; j < n; j++)
        out_values->d[j] =
            cmp_value(eb, o->cls->kind, in_values[0].d[cnt[0] == 1 ? 0 : j],
                      nb_in > 1 ? in_values[1].d[cnt[1] == 1 ? 0 : j] : NULL);
    out_values->nb_dims = n;
    return PRT_OK;
}

/* Every comparison: bool out, no aliasing; cmp_* dispatch on the kind. */
#define CMP_CLASS(k, nb_in, dt, vals)                                                    \
    {                                                                                    \
        .kind = (k), .min_inputs = (nb_in), .max_inputs = (nb_in), .dtypes = (dt),       \
        .size = sizeof(cmp_op), .alias_input = -1, .parse = cmp_parse,                   \
        .serialize = cmp_serialize, .shapes = cmp_shapes, .infer = cmp_infer,            \
        .run = cmp_run, .in_dtypes = cmp_in_dtypes, .out_dtype = cmp_out_dtype,          \
        .values = (vals),                                                                \
    }

/* Every number, the wide types too. */
#define CMP_DT (EW_DT_NUMERIC | OP_DT_WIDE)

static const op_class equal_class =
    CMP_CLASS(CMP_EQUAL, 2, CMP_DT | OP_DT(PRT_BOOL), cmp_values);
static const op_class less_class = CMP_CLASS(CMP_LESS, 2, CMP_DT, cmp_values);
static const op_class le_class = CMP_CLASS(CMP_LE, 2, CMP_DT, cmp_values);
static const op_class greater_class = CMP_CLASS(CMP_GREATER, 2, CMP_DT, cmp_values);
static const op_class ge_class = CMP_CLASS(CMP_GE, 2, CMP_DT, cmp_values);
static const op_class and_class = CMP_CLASS(CMP_AND, 2, OP_DT(PRT_BOOL), cmp_values);
static const op_class or_class = CMP_CLASS(CMP_OR, 2, OP_DT(PRT_BOOL), cmp_values);
static const op_class xor_class = CMP_CLASS(CMP_XOR, 2, OP_DT(PRT_BOOL), cmp_values);
static const op_class not_class = CMP_CLASS(CMP_NOT, 1, OP_DT(PRT_BOOL), cmp_values);
static const op_class is_nan_class =
    CMP_CLASS(CMP_ISNAN, 1, EW_DT_FLOATS | OP_DT(PRT_FLOAT64), NULL);
static const op_class is_inf_class =
    CMP_CLASS(CMP_ISINF, 1, EW_DT_FLOATS | OP_DT(PRT_FLOAT64), NULL);

static const prt_field_schema is_inf_schema[] = {
    {"detect_positive", PRT_FIELD_INT32, 1, "1 (default): +inf is true; 0: false"},
    {"detect_negative", PRT_FIELD_INT32, 1, "1 (default): -inf is true; 0: false"},
};

const prt_plugin_creator op_equal_creator = OP_CREATOR("Equal", equal_class, NULL, 0);
const prt_plugin_creator op_less_creator = OP_CREATOR("Less", less_class, NULL, 0);
const prt_plugin_creator op_less_or_equal_creator =
    OP_CREATOR("LessOrEqual", le_class, NULL, 0);
const prt_plugin_creator op_greater_creator =
    OP_CREATOR("Greater", greater_class, NULL, 0);
const prt_plugin_creator op_greater_or_equal_creator =
    OP_CREATOR("GreaterOrEqual", ge_class, NULL, 0);
const prt_plugin_creator op_and_creator = OP_CREATOR("And", and_class, NULL, 0);
const prt_plugin_creator op_or_creator = OP_CREATOR("Or", or_class, NULL, 0);
const prt_plugin_creator op_xor_creator = OP_CREATOR("Xor", xor_class, NULL, 0);
const prt_plugin_creator op_not_creator = OP_CREATOR("Not", not_class, NULL, 0);
const prt_plugin_creator op_is_nan_creator = OP_CREATOR("IsNaN", is_nan_class, NULL, 0);
const prt_plugin_creator op_is_inf_creator =
    OP_CREATOR("IsInf", is_inf_class, is_inf_schema, 2);

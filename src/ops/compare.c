/*
 * Equal, GreaterOrEqual, And, IsNaN (namespace "plugrt", version "1"), ONNX
 * opset 13-17 semantics. No fields. The output is bool (one byte, 0 or 1).
 *
 * Equal: A and B of one dtype (any: float32, float16, bfloat16, int8, uint8,
 *   int32, int64, bool), numpy broadcasting; y = A == B. Floats compare as
 *   floats (NaN differs from everything, -0 equals +0).
 * GreaterOrEqual: the same without bool; y = A >= B (false with a NaN).
 * And: A and B bool, broadcasting; y = A && B (any non-zero byte is true).
 * IsNaN: X float32, float16 or bfloat16; y = isnan(X), X's dims.
 *
 * Output dims of the binary ops follow op_broadcast_exprs (op_common.h).
 *
 * Shape tensors: when both inputs of Equal have known values (small integer
 * shape arithmetic, as exporters write for Expand and Reshape), Equal can
 * state its values, PRT_DIM_EQUAL of theirs, so a Where after it can state
 * its own (the builder takes bool shape tensors as 0/1).
 */
#include <math.h>

#include "ops/math_ops.h"

enum { CMP_EQUAL, CMP_GE, CMP_AND, CMP_ISNAN };

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

typedef struct cmp_ctx {
    int32_t kind, dtype;
} cmp_ctx;

#define CMP_ROW(T)                                                                       \
    do {                                                                                 \
        const T *a = (const T *)p[0], *b = (const T *)p[1];                              \
        if (c->kind == CMP_EQUAL)                                                        \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = a[j * s[0]] == b[j * s[1]];                                       \
        else                                                                             \
            for (int64_t j = 0; j < n; j++)                                              \
                y[j] = a[j * s[0]] >= b[j * s[1]];                                       \
    } while (0)

static float f16_at(int32_t dtype, const uint8_t *p, int64_t i)
{
    uint16_t h = ((const uint16_t *)p)[i];
    return dtype == PRT_FLOAT16 ? prt_half_to_float(h) : prt_bf16_to_float(h);
}

static int cmp_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                   int64_t n)
{
    const cmp_ctx *c = ctx;
    switch (c->dtype) {
    case PRT_FLOAT32:
        CMP_ROW(float);
        break;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        for (int64_t j = 0; j < n; j++) {
            float a = f16_at(c->dtype, p[0], j * s[0]);
            float b = f16_at(c->dtype, p[1], j * s[1]);
            y[j] = c->kind == CMP_EQUAL ? a == b : a >= b;
        }
        break;
    case PRT_INT8:
        CMP_ROW(int8_t);
        break;
    case PRT_UINT8:
        CMP_ROW(uint8_t);
        break;
    case PRT_INT32:
        CMP_ROW(int32_t);
        break;
    case PRT_INT64:
        CMP_ROW(int64_t);
        break;
    default: /* bool: Equal or And, on truth values */
        for (int64_t j = 0; j < n; j++) {
            int a = p[0][j * s[0]] != 0, b = p[1][j * s[1]] != 0;
            y[j] = (uint8_t)(c->kind == CMP_AND ? a && b : a == b);
        }
        break;
    }
    return 0;
}

static prt_status cmp_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, const void *const *x,
                          void *y, void *ws, void *stream)
{
    cmp_ctx c;
    size_t es[2];
    prt_dims dims[2];
    (void)ws;
    if (o->cls->kind == CMP_ISNAN) {
        int64_t n = base_volume(&in[0].dims);
        uint8_t *yb = y;
        for (int64_t i = 0; i < n; i++) {
            float v =
                dtype == PRT_FLOAT32 ? ((const float *)x[0])[i] : f16_at(dtype, x[0], i);
            yb[i] = v != v;
        }
        return PRT_OK;
    }
    (void)nb_in;
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

/* Equal's values: element j of each input (a single value broadcast). */
static prt_status equal_values(op_object *o, const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *in_values, int32_t nb_in,
                               const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                               prt_expr_builder *eb)
{
    int32_t n = op_static_count(eb, out_dims), na, nb;
    (void)o, (void)nb_in;
    na = op_static_count(eb, &in_dims[0]);
    nb = op_static_count(eb, &in_dims[1]);
    if (n < 0 || out_dims->nb_dims > 1 || na < 0 || nb < 0 ||
        in_values[0].nb_dims != na || in_values[1].nb_dims != nb ||
        (na != 1 && na != n) || (nb != 1 && nb != n))
        return PRT_OK; /* not known: out_values stays -1 */
    for (int32_t j = 0; j < n; j++)
        out_values->d[j] =
            eb->operation(eb, PRT_DIM_EQUAL, in_values[0].d[na == 1 ? 0 : j],
                          in_values[1].d[nb == 1 ? 0 : j]);
    out_values->nb_dims = n;
    return PRT_OK;
}

#define CMP_ALL_DTYPES                                                                   \
    (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) |            \
     OP_DT(PRT_INT32) | OP_DT(PRT_INT64))

/* Every comparison: bool out, no aliasing; cmp_* dispatch on the kind. */
#define CMP_CLASS(k, nb_in, dt, vals)                                                    \
    {                                                                                    \
        .kind = (k), .min_inputs = (nb_in), .max_inputs = (nb_in), .dtypes = (dt),       \
        .size = sizeof(op_object), .alias_input = -1, .shapes = cmp_shapes,              \
        .infer = cmp_infer, .run = {[PRT_DEVICE_CPU] = cmp_run},                         \
        .in_dtypes = cmp_in_dtypes, .out_dtype = cmp_out_dtype, .values = (vals),        \
    }

static const op_class equal_class =
    CMP_CLASS(CMP_EQUAL, 2, CMP_ALL_DTYPES | OP_DT(PRT_BOOL), equal_values);
static const op_class ge_class = CMP_CLASS(CMP_GE, 2, CMP_ALL_DTYPES, NULL);
static const op_class and_class = CMP_CLASS(CMP_AND, 2, OP_DT(PRT_BOOL), NULL);
static const op_class is_nan_class =
    CMP_CLASS(CMP_ISNAN, 1, OP_DT_FLOAT | OP_DT(PRT_BFLOAT16), NULL);

const prt_plugin_creator op_equal_creator = OP_CREATOR("Equal", equal_class, NULL, 0);
const prt_plugin_creator op_greater_or_equal_creator =
    OP_CREATOR("GreaterOrEqual", ge_class, NULL, 0);
const prt_plugin_creator op_and_creator = OP_CREATOR("And", and_class, NULL, 0);
const prt_plugin_creator op_is_nan_creator = OP_CREATOR("IsNaN", is_nan_class, NULL, 0);

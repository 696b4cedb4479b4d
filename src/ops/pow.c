/*
 * Pow (namespace "plugrt", version "1"), ONNX opset 7-19 semantics. No
 * fields. Inputs X (float32, float16, bfloat16, float64, int32, int64) and Y
 * (any numeric dtype: the floats, int8/16/32/64, uint8/16/32/64),
 * numpy broadcasting; the output has X's dtype and the broadcast dims.
 *
 * Floats: x^y in double, rounded once to X's dtype (float32 to float32 with
 * powf, the exponent 2 as x * x, which is the same, and 3 as x * x * x in
 * double). Integer X with an
 * integer Y: exact, wrapping on overflow; a negative Y gives the truncated
 * real result (1 for X 1, +-1 for X -1, 0 otherwise) and X 0 with a
 * negative Y fails the run (a division by zero). Integer X with a float Y:
 * x^y in double, truncated toward zero and saturated (NaN gives 0), as
 * numpy's float result cast back to X's dtype.
 */
#include <math.h>

#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_ew.h"

static prt_status pow_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in;
    return op_broadcast_exprs(o, eb, &in[0], &in[1], out, "inputs X and Y");
}

static prt_status pow_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    (void)nb_in;
    return op_broadcast_dims(o, &in[0], &in[1], out, "inputs X and Y");
}

static uint32_t pow_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0
               ? EW_DT_FLOATS | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) | OP_DT(PRT_FLOAT64)
               : EW_DT_NUMERIC | OP_DT_WIDE;
}

/* x^y for integers, y >= 0, wrapping (square and multiply). */
static int64_t ipow(int64_t x, int64_t y)
{
    uint64_t r = 1, b = (uint64_t)x;
    while (y > 0) {
        if (y & 1)
            r *= b;
        b *= b;
        y >>= 1;
    }
    return (int64_t)r;
}

typedef struct pow_ctx {
    int32_t xt, yt; /* dtypes */
} pow_ctx;

enum { POW_OK, POW_ZERO_NEG };

static int pow_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                   int64_t n)
{
    const pow_ctx *c = ctx;
    size_t xs = prt_dtype_size(c->xt), ys = prt_dtype_size(c->yt);
    if (c->xt == PRT_FLOAT32 && c->yt == PRT_FLOAT32) {
        const float *a = (const float *)p[0], *b = (const float *)p[1];
        float *r = (float *)y;
        if (s[1] == 0 && b[0] == 2.0f) {
            for (int64_t j = 0; j < n; j++)
                r[j] = a[j * s[0]] * a[j * s[0]];
        } else if (s[1] == 0 && b[0] == 3.0f && s[0] == 1) {
            /* x^3 in double (x x exact there), rounded once more to float:
             * GPT-2's GELU cubes every activation. */
            op_cube_f32(a, r, n);
        } else if (s[1] == 0 && b[0] == 3.0f) {
            for (int64_t j = 0; j < n; j++) {
                const double v = a[j * s[0]];
                r[j] = (float)(v * v * v);
            }
        } else
            for (int64_t j = 0; j < n; j++)
                r[j] = powf(a[j * s[0]], b[j * s[1]]);
        return POW_OK;
    }
    for (int64_t j = 0; j < n; j += EW_CHUNK) {
        int64_t m = n - j < EW_CHUNK ? n - j : EW_CHUNK;
        const uint8_t *pa = p[0] + (size_t)(j * s[0]) * xs;
        const uint8_t *pb = p[1] + (size_t)(j * s[1]) * ys;
        uint8_t *py = y + (size_t)j * xs;
        if (!ew_is_float(c->xt) && !ew_is_float(c->yt) && c->xt != PRT_FLOAT64 &&
            c->yt != PRT_FLOAT64) {
            int64_t a[EW_CHUNK], b[EW_CHUNK], r[EW_CHUNK];
            ew_load_i64(pa, c->xt, s[0], s[0] ? m : 1, a);
            ew_load_i64(pb, c->yt, s[1], s[1] ? m : 1, b);
            for (int64_t k = 0; k < m; k++) {
                int64_t av = a[k * s[0]], bv = b[k * s[1]];
                if (bv < 0 && av == 0)
                    return POW_ZERO_NEG;
                r[k] = bv >= 0    ? ipow(av, bv)
                       : av == 1  ? 1
                       : av == -1 ? ((bv & 1) ? -1 : 1)
                                  : 0;
            }
            ew_store_i64(r, c->xt, m, py);
        } else {
            double a[EW_CHUNK], b[EW_CHUNK], r[EW_CHUNK];
            ew_load_f64(pa, c->xt, s[0], s[0] ? m : 1, a);
            ew_load_f64(pb, c->yt, s[1], s[1] ? m : 1, b);
            for (int64_t k = 0; k < m; k++)
                r[k] = pow(a[k * s[0]], b[k * s[1]]);
            ew_store_f64(r, c->xt, m, py);
        }
    }
    return POW_OK;
}

static prt_status pow_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const pow_ctx c = {in[0].dtype, in[1].dtype};
    const prt_dims dims[2] = {in[0].dims, in[1].dims};
    const size_t es[2] = {prt_dtype_size(in[0].dtype), prt_dtype_size(in[1].dtype)};
    (void)dtype, (void)nb_in, (void)ws, (void)stream;
    if (op_bcast_walk(&out->dims, 2, dims, es, es[0], x, y, pow_row, &c) != POW_OK)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "integer 0 to a negative power (a division by zero)");
    return PRT_OK;
}

static const op_class pow_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = EW_DT_NUMERIC | OP_DT_WIDE,
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = pow_shapes,
    .infer = pow_infer,
    .run = pow_run,
    .in_dtypes = pow_in_dtypes,
};

const prt_plugin_creator op_pow_creator = OP_CREATOR("Pow", pow_class, NULL, 0);

/*
 * LRN (namespace "plugrt", version "1"), ONNX opset 1 (13 adds bfloat16):
 * local response normalization across channels. X [N, C, D1, ...] (rank 2
 * or more; float32, float16, bfloat16), Y of X's dims:
 *
 *   Y[n, c, d] = X[n, c, d] / (bias + alpha / size * S[n, c, d]) ^ beta,
 *   S[n, c, d] = sum of X[n, c', d]^2 over c' in
 *                [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] within [0, C).
 *
 * Fields: size (int32, required, >= 1), alpha (default 1e-4), beta (0.75),
 * bias (1.0). Computed in float32, the squares summed in channel order
 * (the CUDA kernel sums in the same order).
 */
#include <math.h>

#include "base/fp16.h"
#include "ops/ops_nn.h"

typedef struct lrn_op {
    op_object o;
    int32_t size;
    float alpha, beta, bias;
} lrn_op;

static prt_status lrn_parse(op_object *o, const op_fields *f)
{
    lrn_op *l = (lrn_op *)o;
    prt_status st = op_field_i32(f, "size", 0, &l->size);
    if (!st)
        st = op_field_f32(f, "alpha", 1e-4f, &l->alpha);
    if (!st)
        st = op_field_f32(f, "beta", 0.75f, &l->beta);
    if (!st)
        st = op_field_f32(f, "bias", 1.0f, &l->bias);
    if (!st && l->size < 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                     "size is %d; it is required and must be 1 or more", (int)l->size);
    return st;
}

static int32_t lrn_serialize(op_object *o, prt_field *ser)
{
    lrn_op *l = (lrn_op *)o;
    op_ser(&ser[0], "size", PRT_FIELD_INT32, &l->size, 1);
    op_ser(&ser[1], "alpha", PRT_FIELD_FLOAT32, &l->alpha, 1);
    op_ser(&ser[2], "beta", PRT_FIELD_FLOAT32, &l->beta, 1);
    op_ser(&ser[3], "bias", PRT_FIELD_FLOAT32, &l->bias, 1);
    return 4;
}

static prt_status lrn_rank(const op_object *o, int32_t r)
{
    if (r < 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has rank %d; it must be 2 or more ([N, C, ...])", (int)r);
    return PRT_OK;
}

static prt_status lrn_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in, (void)eb;
    *out = in[0];
    return lrn_rank(o, in[0].nb_dims);
}

static prt_status lrn_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    (void)nb_in;
    *out = in[0];
    return lrn_rank(o, in[0].nb_dims);
}

void lrn_params(const op_object *o, int32_t *size, float *alpha, float *beta, float *bias)
{
    const lrn_op *l = (const lrn_op *)o;
    *size = l->size;
    *alpha = l->alpha;
    *beta = l->beta;
    *bias = l->bias;
}

static float lrn_ld(const void *x, int32_t dt, int64_t i)
{
    if (dt == PRT_FLOAT16)
        return base_h2f(((const uint16_t *)x)[i]);
    if (dt == PRT_BFLOAT16)
        return base_bf2f(((const uint16_t *)x)[i]);
    return ((const float *)x)[i];
}

static void lrn_st(void *y, int32_t dt, int64_t i, float v)
{
    if (dt == PRT_FLOAT16)
        ((uint16_t *)y)[i] = base_f2h(v);
    else if (dt == PRT_BFLOAT16)
        ((uint16_t *)y)[i] = base_f2bf(v);
    else
        ((float *)y)[i] = v;
}

static prt_status lrn_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    const lrn_op *l = (const lrn_op *)o;
    const prt_dims *d = &in[0].dims;
    int64_t N = d->d[0], C = d->d[1], nc = N * C,
            inner = nc > 0 ? base_volume(d) / nc : 0;
    int64_t lo = (l->size - 1) / 2, hi = l->size / 2; /* floor, ceil of (size-1)/2 */
    float scale = l->alpha / (float)l->size;
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    if (inner == 0)
        return PRT_OK;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
                float s = 0.0f;
                for (int64_t k = c0; k <= c1; k++) {
                    float v = lrn_ld(x[0], dtype, (n * C + k) * inner + i);
                    s += v * v;
                }
                int64_t at = (n * C + c) * inner + i;
                lrn_st(ys[0], dtype, at,
                       lrn_ld(x[0], dtype, at) / powf(l->bias + scale * s, l->beta));
            }
    return PRT_OK;
}

static const op_class lrn_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(lrn_op),
    .alias_input = -1,
    .parse = lrn_parse,
    .serialize = lrn_serialize,
    .shapes = lrn_shapes,
    .infer = lrn_infer,
    .run = lrn_run,
};

static const prt_field_schema lrn_schema[] = {
    {"size", PRT_FIELD_INT32, 1, "channels summed over, required (>= 1)"},
    {"alpha", PRT_FIELD_FLOAT32, 1, "scale of the sum, default 1e-4"},
    {"beta", PRT_FIELD_FLOAT32, 1, "exponent, default 0.75"},
    {"bias", PRT_FIELD_FLOAT32, 1, "added to the scaled sum, default 1"},
};

const prt_plugin_creator op_lrn_creator = OP_CREATOR("LRN", lrn_class, lrn_schema, 4);

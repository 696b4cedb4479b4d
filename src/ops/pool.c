/*
 * GlobalAveragePool (namespace "plugrt", version "1"), ONNX opset 1+
 * semantics. No fields.
 *
 * X [N, C, D1, ..., Dn] (n >= 1) -> Y [N, C, 1, ..., 1]: the mean of each
 * image's channel over its spatial positions. float32, float16, bfloat16.
 * Rank 2 and below are rejected, as ONNX Runtime does (the spec describes
 * N x C x D1 ... Dn only).
 *
 * Sums run in double and are rounded once, so the result does not depend
 * on the spatial size's order of summation; an empty spatial extent gives
 * NaN (numpy's mean of nothing).
 */
#include <math.h>

#include "ops/op_common.h"

static prt_status gap_rank(const op_object *o, int32_t r)
{
    if (r < 3)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X must have rank 3 or more (N x C x D1 ...), it has "
                       "rank %d",
                       (int)r);
    return PRT_OK;
}

static prt_status gap_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    prt_status st = gap_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    for (int32_t i = 2; i < out->nb_dims; i++)
        out->d[i] = eb->constant(eb, 1);
    return PRT_OK;
}

static prt_status gap_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    prt_status st = gap_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    for (int32_t i = 2; i < out->nb_dims; i++)
        out->d[i] = 1;
    return PRT_OK;
}

static prt_status gap_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out,
                          const void *const *xs, void *y, void *ws, void *stream)
{
    const prt_dims *d = &in[0].dims;
    int64_t rows = d->d[0] * d->d[1], sp = 1;
    (void)nb_in, (void)out, (void)ws;
    for (int32_t i = 2; i < d->nb_dims; i++)
        sp *= d->d[i];
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        float m;
        if (dtype == PRT_FLOAT32) {
            const float *x = (const float *)xs[0] + r * sp;
            for (int64_t k = 0; k < sp; k++)
                s += x[k];
        } else if (dtype == PRT_FLOAT16) {
            const uint16_t *x = (const uint16_t *)xs[0] + r * sp;
            for (int64_t k = 0; k < sp; k++)
                s += prt_half_to_float(x[k]);
        } else if (dtype == PRT_BFLOAT16) {
            const uint16_t *x = (const uint16_t *)xs[0] + r * sp;
            for (int64_t k = 0; k < sp; k++)
                s += prt_bf16_to_float(x[k]);
        } else {
            return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           prt_dtype_name(dtype));
        }
        m = sp > 0 ? (float)(s / (double)sp) : NAN;
        if (dtype == PRT_FLOAT32)
            ((float *)y)[r] = m;
        else if (dtype == PRT_FLOAT16)
            ((uint16_t *)y)[r] = prt_float_to_half(m);
        else
            ((uint16_t *)y)[r] = prt_float_to_bf16(m);
    }
    return PRT_OK;
}

static const op_class gap_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = gap_shapes,
    .infer = gap_infer,
    .run = {[PRT_DEVICE_CPU] = gap_run},
};

const prt_plugin_creator op_global_average_pool_creator =
    OP_CREATOR("GlobalAveragePool", gap_class, NULL, 0);

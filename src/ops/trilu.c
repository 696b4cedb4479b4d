/*
 * Trilu (namespace "plugrt", version "1"), ONNX opset 14: the upper or
 * lower triangle of each matrix in the last two dims, the rest zero. Input
 * x of any dtype and rank >= 2, optional input k (a 0-D or one-element
 * int64, int32 accepted; default 0): the diagonal, positive above the main
 * one. The output has x's dims and dtype.
 *
 * Field upper (int32, default 1): element (i, j) is kept where j - i >= k
 * (upper) or j - i <= k (lower).
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct trilu_op {
    op_object o;
    int32_t upper;
} trilu_op;

static prt_status trilu_parse(op_object *o, const op_fields *f)
{
    trilu_op *t = (trilu_op *)o;
    prt_status st = op_field_i32(f, "upper", 1, &t->upper);
    t->upper = t->upper != 0;
    return st;
}

static int32_t trilu_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "upper", PRT_FIELD_INT32, &((trilu_op *)o)->upper, 1);
    return 1;
}

static prt_status trilu_rank(const op_object *o, int32_t r)
{
    if (r < 2)
        return op_fail(o, PRT_ERR_SHAPE, "the input has rank %d; it must be 2 or more",
                       (int)r);
    return PRT_OK;
}

static prt_status trilu_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)eb;
    if (nb_in > 1 && in[1].nb_dims > 1)
        return op_fail(o, PRT_ERR_SHAPE, "k must be a scalar, not of rank %d",
                       (int)in[1].nb_dims);
    *out = in[0];
    return trilu_rank(o, in[0].nb_dims);
}

static prt_status trilu_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    if (nb_in > 1 && base_volume(&in[1]) != 1)
        return op_fail(o, PRT_ERR_SHAPE, "k must hold one value");
    *out = in[0];
    return trilu_rank(o, in[0].nb_dims);
}

int32_t trilu_upper(const op_object *o)
{
    return ((const trilu_op *)o)->upper;
}

static prt_status trilu_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const prt_dims *d = &in[0].dims;
    int64_t rows = d->d[d->nb_dims - 2], cols = d->d[d->nb_dims - 1];
    int64_t mats = base_volume(d) / (rows * cols), k = 0;
    size_t es = prt_dtype_size(dtype);
    const uint8_t *xb = x[0];
    uint8_t *yb = y;
    int upper = ((const trilu_op *)o)->upper;
    (void)out, (void)ws, (void)stream;
    if (nb_in > 1)
        k = op_int_at(x[1], in[1].dtype, 0);
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++, xb += es, yb += es) {
                int keep = upper ? j - i >= k : j - i <= k;
                if (keep)
                    memcpy(yb, xb, es);
                else
                    memset(yb, 0, es);
            }
    return PRT_OK;
}

static uint32_t trilu_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT_INDEX;
}

static const op_class trilu_class = {
    .min_inputs = 1,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(trilu_op),
    .alias_input = -1,
    .parse = trilu_parse,
    .serialize = trilu_serialize,
    .shapes = trilu_shapes,
    .infer = trilu_infer,
    .run = trilu_run,
    .in_dtypes = trilu_in_dtypes,
};

static const prt_field_schema trilu_schema[] = {
    {"upper", PRT_FIELD_INT32, 1, "1 (default): the upper triangle; 0: the lower"},
};

const prt_plugin_creator op_trilu_creator =
    OP_CREATOR("Trilu", trilu_class, trilu_schema, 1);

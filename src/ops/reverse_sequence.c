/*
 * ReverseSequence (namespace "plugrt", version "1"), ONNX opset 10: input
 * of any dtype and rank >= 2, sequence_lens (int64, int32 accepted) of
 * [batch]; for each batch entry b the first sequence_lens[b] elements
 * along the time axis are reversed, the rest copied. The output has the
 * input's dims and dtype.
 *
 * Fields batch_axis (default 1) and time_axis (default 0): one is 0 and the
 * other 1. A length outside [0, time] fails the CPU's run; the CUDA
 * kernel, which cannot refuse, clamps it into that range.
 */
#include <string.h>

#include "ops/ops_data.h"
#include "ops/shape_ops.h"

typedef struct revseq_op {
    op_object o;
    int32_t batch_axis, time_axis;
} revseq_op;

static prt_status revseq_parse(op_object *o, const op_fields *f)
{
    revseq_op *r = (revseq_op *)o;
    prt_status st = op_field_i32(f, "batch_axis", 1, &r->batch_axis);
    if (!st)
        st = op_field_i32(f, "time_axis", 0, &r->time_axis);
    if (!st && !((r->batch_axis == 0 && r->time_axis == 1) ||
                 (r->batch_axis == 1 && r->time_axis == 0)))
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                     "batch_axis %d and time_axis %d: one must be 0 and the other 1",
                     (int)r->batch_axis, (int)r->time_axis);
    return st;
}

static int32_t revseq_serialize(op_object *o, prt_field *ser)
{
    revseq_op *r = (revseq_op *)o;
    op_ser(&ser[0], "batch_axis", PRT_FIELD_INT32, &r->batch_axis, 1);
    op_ser(&ser[1], "time_axis", PRT_FIELD_INT32, &r->time_axis, 1);
    return 2;
}

static prt_status revseq_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    const revseq_op *r = (const revseq_op *)o;
    int64_t b, n;
    (void)nb_in;
    if (in[0].nb_dims < 2)
        return op_fail(o, PRT_ERR_SHAPE, "the input has rank %d; it must be 2 or more",
                       (int)in[0].nb_dims);
    if (in[1].nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "sequence_lens has rank %d; it must be 1",
                       (int)in[1].nb_dims);
    if (eb->is_constant(eb, in[0].d[r->batch_axis], &b) &&
        eb->is_constant(eb, in[1].d[0], &n) && b != n)
        return op_fail(o, PRT_ERR_SHAPE,
                       "sequence_lens has %lld values for a batch (axis %d) of %lld",
                       (long long)n, (int)r->batch_axis, (long long)b);
    *out = in[0];
    return PRT_OK;
}

static prt_status revseq_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    const revseq_op *r = (const revseq_op *)o;
    (void)nb_in;
    if (in[0].nb_dims < 2 || in[1].nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the input has rank %d (2 or more needed) and sequence_lens "
                       "rank %d (1 needed)",
                       (int)in[0].nb_dims, (int)in[1].nb_dims);
    if (in[1].d[0] != in[0].d[r->batch_axis])
        return op_fail(o, PRT_ERR_SHAPE,
                       "sequence_lens has %lld values for a batch (axis %d) of %lld",
                       (long long)in[1].d[0], (int)r->batch_axis,
                       (long long)in[0].d[r->batch_axis]);
    *out = in[0];
    return PRT_OK;
}

int32_t revseq_batch_axis(const op_object *o)
{
    return ((const revseq_op *)o)->batch_axis;
}

static prt_status revseq_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    const prt_dims *d = &in[0].dims;
    int32_t ba = revseq_batch_axis(o);
    int64_t B = d->d[ba], T = d->d[1 - ba];
    int64_t bt = B * T, inner = bt > 0 ? base_volume(d) / bt : 0;
    size_t es = prt_dtype_size(dtype), row = (size_t)inner * es;
    const uint8_t *xb = x[0];
    uint8_t *yb = ys[0];
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    if (inner == 0)
        return PRT_OK;
    for (int64_t b = 0; b < B; b++) {
        int64_t len = op_int_at(x[1], in[1].dtype, b);
        if (len < 0 || len > T)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "sequence_lens[%lld] is %lld; it must be in [0, %lld] (the "
                           "time axis's size)",
                           (long long)b, (long long)len, (long long)T);
        for (int64_t t = 0; t < T; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            /* Element [axis0][axis1] is (axis0 * dim1 + axis1) rows in. */
            int64_t yo = ba ? t * B + b : b * T + t, xo = ba ? src * B + b : b * T + src;
            memcpy(yb + (size_t)yo * row, xb + (size_t)xo * row, row);
        }
    }
    return PRT_OK;
}

static uint32_t revseq_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_ALL : OP_DT_INDEX;
}

static const op_class revseq_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_ALL,
    .size = sizeof(revseq_op),
    .alias_input = -1,
    .parse = revseq_parse,
    .serialize = revseq_serialize,
    .shapes = revseq_shapes,
    .infer = revseq_infer,
    .run = revseq_run,
    .in_dtypes = revseq_in_dtypes,
};

static const prt_field_schema revseq_schema[] = {
    {"batch_axis", PRT_FIELD_INT32, 1, "the batch axis, 0 or 1; default 1"},
    {"time_axis", PRT_FIELD_INT32, 1, "the time axis, 1 or 0; default 0"},
};

const prt_plugin_creator op_reverse_sequence_creator =
    OP_CREATOR("ReverseSequence", revseq_class, revseq_schema, 2);

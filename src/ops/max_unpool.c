/*
 * MaxUnpool (namespace "plugrt", version "1"), ONNX opset 9 (11 is the
 * same): MaxPool's partial inverse. X [N, C, D1, ...] (rank 3 or more;
 * float32, float16, bfloat16), I (int64) of X's dims, and optionally
 * output_shape (int64, a shape input of X's rank values).
 *
 * The frame is [N, C, (Di - 1) * si - pbi - pei + ki, ...]; with
 * output_shape the pads are ignored there (ONNX's reference: output_shape
 * is what disambiguates the size). Y is zero but for Y[frame position
 * I[j]] = X[j] (I holds flat indices into the frame, as MaxPool's Indices
 * are; where two are equal the last in X's order wins), the frame placed
 * at Y's origin: Y's dims are output_shape's, each at least the frame's,
 * or the frame's without it.
 *
 * Fields: kernel_shape (required), pads, strides, as MaxPool's. An index
 * outside the frame fails the CPU's run; the CUDA kernel, which cannot
 * refuse, skips it.
 *
 * The run cannot tell whether output_shape was given (the dims arrive
 * either way), so it takes the frame with pads when Y's dims are exactly
 * that (without output_shape they are), and without pads otherwise. The
 * two differ only for an output_shape equal to the padded frame with pads
 * not all zero, which ONNX's reference rejects as smaller than its frame.
 */
#include <string.h>

#include "ops/ops_nn.h"

typedef struct unpool_op {
    op_object o;
    op_window w;
} unpool_op;

static prt_status unpool_parse(op_object *o, const op_fields *f)
{
    unpool_op *u = (unpool_op *)o;
    prt_status st = op_window_parse(o, f, &u->w);
    if (!st && u->w.nb_ks == 0)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "kernel_shape is required");
    return st;
}

static int32_t unpool_serialize(op_object *o, prt_field *ser)
{
    return op_window_ser_arrays(&((unpool_op *)o)->w, ser);
}

static prt_status unpool_ranks(const op_object *o, int32_t rx, int32_t ri)
{
    prt_status st = op_window_rank(o, rx);
    if (!st && ri != rx)
        st = op_fail(o, PRT_ERR_SHAPE, "I has rank %d; it must have X's (%d)", (int)ri,
                     (int)rx);
    if (!st)
        st = op_window_check_ns(o, &((const unpool_op *)o)->w, rx - 2, "X");
    return st;
}

static prt_status unpool_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    const op_window *w = &((const unpool_op *)o)->w;
    int32_t r = in[0].nb_dims, ns = r - 2;
    prt_status st = unpool_ranks(o, r, in[1].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    if (nb_sv > 0) {
        if (sv[0].nb_dims != r)
            return op_fail(o, PRT_ERR_SHAPE,
                           "output_shape has %d values; it needs X's rank (%d)",
                           (int)sv[0].nb_dims, (int)r);
        *out = sv[0];
        return PRT_OK;
    }
    *out = in[0];
    for (int32_t i = 0; i < ns; i++) {
        int64_t add =
            w->ks[i] - op_window_pad_begin(w, i, ns) - op_window_pad_end(w, i, ns);
        const prt_expr *dm1 =
            eb->operation(eb, PRT_DIM_SUB, in[0].d[2 + i], eb->constant(eb, 1));
        const prt_expr *e =
            eb->operation(eb, PRT_DIM_PROD, dm1, eb->constant(eb, op_window_str(w, i)));
        int64_t v;
        out->d[2 + i] = eb->operation(eb, PRT_DIM_SUM, e, eb->constant(eb, add));
        if (eb->is_constant(eb, out->d[2 + i], &v) && v < 0)
            return op_fail(o, PRT_ERR_SHAPE, "output dim %d would be %lld (< 0)",
                           (int)(2 + i), (long long)v);
    }
    return PRT_OK;
}

prt_status max_unpool_frame(const op_object *o, const prt_dims *x, const prt_dims *idx,
                            const prt_dims *y, prt_dims *frame)
{
    const op_window *w = &((const unpool_op *)o)->w;
    int32_t r = x->nb_dims, ns = r - 2, padded;
    prt_status st = unpool_ranks(o, r, idx->nb_dims);
    if (st)
        return st;
    for (int32_t i = 0; i < r; i++)
        if (idx->d[i] != x->d[i])
            return op_fail(o, PRT_ERR_SHAPE, "I's dim %d is %lld; X's is %lld", (int)i,
                           (long long)idx->d[i], (long long)x->d[i]);
    if (y->nb_dims != r)
        return op_fail(o, PRT_ERR_SHAPE, "Y has rank %d; it must have X's (%d)",
                       (int)y->nb_dims, (int)r);
    for (padded = 1; padded >= 0; padded--) {
        int same = 1;
        *frame = *x;
        for (int32_t i = 0; i < ns; i++) {
            int64_t p =
                padded ? op_window_pad_begin(w, i, ns) + op_window_pad_end(w, i, ns) : 0;
            frame->d[2 + i] = (x->d[2 + i] - 1) * op_window_str(w, i) - p + w->ks[i];
            if (frame->d[2 + i] < 0)
                frame->d[2 + i] = 0;
        }
        for (int32_t i = 0; i < r; i++)
            same &= frame->d[i] == y->d[i];
        if (same)
            return PRT_OK;
    }
    for (int32_t i = 0; i < r; i++)
        if (y->d[i] < frame->d[i]) {
            char a[96], b[96];
            return op_fail(o, PRT_ERR_SHAPE,
                           "output_shape %s is smaller than the unpooled %s",
                           base_dims_format(y, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(frame, BASE_DIMS_LIST, b, sizeof b));
        }
    return PRT_OK;
}

/* Y's int64 workspace on CUDA (the winning X element per frame element);
 * Y's volume bounds the frame's. */
static int64_t unpool_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                                int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = base_volume(&out[0]);
    (void)o, (void)dtype, (void)in, (void)nb_in, (void)nb_out;
    return n < 0 || n > INT64_MAX / 8 ? -1 : n * 8;
}

/* Element `f` of the frame as an element of y (the frame at y's origin). */
int64_t max_unpool_place(const prt_dims *frame, const prt_dims *y, int64_t f)
{
    int64_t at = 0, stride = 1;
    for (int32_t d = y->nb_dims - 1; d >= 0; d--) {
        at += f % frame->d[d] * stride;
        f /= frame->d[d];
        stride *= y->d[d];
    }
    return at;
}

static prt_status unpool_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    prt_dims frame;
    prt_status st = max_unpool_frame(o, &in[0].dims, &in[1].dims, &out->dims, &frame);
    int64_t n = base_volume(&in[0].dims), fv = base_volume(&frame);
    size_t es = prt_dtype_size(dtype);
    const int64_t *idx = x[1];
    (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (st)
        return st;
    for (int64_t j = 0; j < n; j++)
        if (idx[j] < 0 || idx[j] >= fv)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "I[%lld] is %lld; it must be in [0, %lld) (the unpooled "
                           "volume)",
                           (long long)j, (long long)idx[j], (long long)fv);
    if (base_volume(&out->dims) == 0)
        return PRT_OK;
    memset(ys[0], 0, (size_t)base_volume(&out->dims) * es);
    for (int64_t j = 0; j < n; j++)
        memcpy((uint8_t *)ys[0] +
                   (size_t)max_unpool_place(&frame, &out->dims, idx[j]) * es,
               (const uint8_t *)x[0] + (size_t)j * es, es);
    return PRT_OK;
}

static uint32_t unpool_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    return index == 0   ? OP_DT_FLOAT | OP_DT(PRT_BFLOAT16)
           : index == 1 ? OP_DT(PRT_INT64)
                        : OP_DT(types[0]);
}

static const op_class unpool_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(unpool_op),
    .alias_input = -1,
    .parse = unpool_parse,
    .serialize = unpool_serialize,
    .shapes_sv = unpool_shapes,
    .workspace = unpool_workspace,
    .run = unpool_run,
    .min_shape_inputs = 0,
    .max_shape_inputs = 1,
    .in_dtypes = unpool_in_dtypes,
};

static const prt_field_schema unpool_schema[] = {
    {"kernel_shape", PRT_FIELD_INT32, -1, "per spatial dim, required"},
    {"pads", PRT_FIELD_INT32, -1,
     "begin of each spatial dim, then end of each; default 0"},
    {"strides", PRT_FIELD_INT32, -1, "per spatial dim, default 1"},
};

const prt_plugin_creator op_max_unpool_creator =
    OP_CREATOR("MaxUnpool", unpool_class, unpool_schema, 3);

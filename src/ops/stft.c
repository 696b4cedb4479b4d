/*
 * STFT (namespace "plugrt", version "1"), ONNX opset 17: the short-time
 * Fourier transform. Inputs: signal [batch, samples, comps] (comps 1 real,
 * 2 complex; float32, float16, bfloat16), frame_step (0-D int32/int64),
 * optionally window [frame_length] (signal's dtype) and frame_length (0-D
 * int32/int64); frame_step and frame_length are shape inputs that are also
 * read. One of window and frame_length is needed; with both they must
 * agree. The ONNX importer drops an omitted window (stft_inputs).
 *
 *   y[b, f, k] = sum_t x[b, f * step + t] w[t] exp(-2 pi i k t / len)
 *
 * for frames f < (samples - len) / step + 1 and bins k < len (len / 2 + 1
 * with onesided, the default), y [batch, frames, bins, 2]; computed in
 * double as DFT is (signal_fft.c). Field: onesided (0 or 1, default 1).
 */
#include "ops/ops_signal.h"

typedef struct stft_op {
    op_object o;
    int32_t onesided;
} stft_op;

static prt_status stft_parse(op_object *o, const op_fields *f)
{
    stft_op *s = (stft_op *)o;
    prt_status st = op_field_i32(f, "onesided", 1, &s->onesided);
    if (!st && (uint32_t)s->onesided > 1)
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "onesided is %d; it must be 0 or 1", (int)s->onesided);
    return st;
}

static int32_t stft_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "onesided", PRT_FIELD_INT32, &((stft_op *)o)->onesided, 1);
    return 1;
}

void stft_inputs(int32_t nb_in, int32_t nb_sv, int32_t *window, int32_t *length)
{
    *window = *length = -1;
    if (nb_in == 4) {
        *window = 2;
        *length = 3;
    } else if (nb_in == 3) {
        *(nb_sv == 2 ? length : window) = 2;
    }
}

/* The ranks: signal 3, frame_step and frame_length scalars, window 1-D. */
static prt_status stft_ranks(const op_object *o, const int32_t *ranks, int32_t nb_in,
                             int32_t nb_sv)
{
    int32_t w, l;
    stft_inputs(nb_in, nb_sv, &w, &l);
    if (nb_in == 4 && nb_sv != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "frame_length must be a shape input (a value known when the "
                       "engine is built: it sizes the output)");
    if (ranks[0] != 3)
        return op_fail(o, PRT_ERR_SHAPE,
                       "signal has rank %d; it must be [batch, samples, 1 or 2]",
                       (int)ranks[0]);
    if (nb_in < 2 || ranks[1] != 0)
        return op_fail(o, PRT_ERR_SHAPE, "frame_step must be a scalar");
    if (w < 0 && l < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "needs a window or a frame_length (neither is given)");
    if (w >= 0 && ranks[w] != 1)
        return op_fail(o, PRT_ERR_SHAPE, "window has rank %d; it must be 1-D",
                       (int)ranks[w]);
    if (l >= 0 && ranks[l] != 0)
        return op_fail(o, PRT_ERR_SHAPE, "frame_length has rank %d; it must be a scalar",
                       (int)ranks[l]);
    return PRT_OK;
}

static prt_status stft_len_expr(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_expr_builder *eb, const prt_expr **len)
{
    int32_t w, l;
    int64_t a, b;
    stft_inputs(nb_in, nb_sv, &w, &l);
    *len = l >= 0 ? sv[1].d[0] : in[w].d[0];
    if (l >= 0 && w >= 0 && eb->is_constant(eb, sv[1].d[0], &a) &&
        eb->is_constant(eb, in[w].d[0], &b) && a != b)
        return op_fail(o, PRT_ERR_SHAPE, "frame_length is %lld but the window has %lld",
                       (long long)a, (long long)b);
    if (eb->is_constant(eb, *len, &a) && a < 1)
        return op_fail(o, PRT_ERR_SHAPE, "frame_length is %lld; it must be 1 or more",
                       (long long)a);
    return PRT_OK;
}

static prt_status stft_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                              prt_expr_builder *eb)
{
    int32_t ranks[4] = {0, 0, 0, 0};
    const prt_expr *len, *frames;
    int64_t v;
    prt_status st;
    for (int32_t k = 0; k < nb_in && k < 4; k++)
        ranks[k] = in[k].nb_dims;
    st = stft_ranks(o, ranks, nb_in, nb_sv);
    if (!st)
        st = stft_len_expr(o, in, nb_in, sv, nb_sv, eb, &len);
    if (st)
        return st;
    if (eb->is_constant(eb, sv[0].d[0], &v) && v < 1)
        return op_fail(o, PRT_ERR_SHAPE, "frame_step is %lld; it must be 1 or more",
                       (long long)v);
    if (eb->is_constant(eb, in[0].d[2], &v) && v != 1 && v != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "signal's last dim is %lld; it must be 1 (real) or 2 (complex)",
                       (long long)v);
    frames = eb->operation(eb, PRT_DIM_SUM,
                           eb->operation(eb, PRT_DIM_FLOOR_DIV,
                                         eb->operation(eb, PRT_DIM_SUB, in[0].d[1], len),
                                         sv[0].d[0]),
                           eb->constant(eb, 1));
    if (eb->is_constant(eb, frames, &v) && v < 1)
        return op_fail(o, PRT_ERR_SHAPE, "the signal is shorter than one frame");
    out->nb_dims = 4;
    out->d[0] = in[0].d[0];
    out->d[1] = frames;
    out->d[2] = ((const stft_op *)o)->onesided
                    ? eb->operation(
                          eb, PRT_DIM_SUM,
                          eb->operation(eb, PRT_DIM_FLOOR_DIV, len, eb->constant(eb, 2)),
                          eb->constant(eb, 1))
                    : len;
    out->d[3] = eb->constant(eb, 2);
    return PRT_OK;
}

void stft_roles(const prt_tensor_desc *in, int32_t nb_in, int32_t *window,
                int32_t *length)
{
    int is_len = nb_in == 3 && (in[2].dtype == PRT_INT32 || in[2].dtype == PRT_INT64);
    stft_inputs(nb_in, nb_in == 4 || is_len ? 2 : 1, window, length);
}

prt_status stft_geom(const op_object *o, const prt_tensor_desc *in, int32_t w,
                     const prt_dims *out, int64_t step, int64_t len, signal_stft_geom *g)
{
    const prt_dims *x = &in[0].dims;
    if (x->nb_dims != 3 || (x->d[2] != 1 && x->d[2] != 2))
        return op_fail(o, PRT_ERR_SHAPE, "signal must be [batch, samples, 1 or 2]");
    if (w >= 0 && (in[w].dims.nb_dims != 1 || (len >= 0 && in[w].dims.d[0] != len)))
        return op_fail(o, PRT_ERR_SHAPE, "the window must be 1-D of frame_length values");
    if (w >= 0 && in[w].dtype != in[0].dtype)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "the window must have signal's dtype");
    g->len = len != -1 ? len : w >= 0 ? in[w].dims.d[0] : -1;
    g->step = step;
    g->batch = x->d[0];
    g->samples = x->d[1];
    g->comps = x->d[2];
    if (g->len == SIGNAL_ON_DEVICE || step == SIGNAL_ON_DEVICE) {
        if (out->nb_dims != 4 || out->d[0] != g->batch || out->d[3] != 2)
            return op_fail(o, PRT_ERR_SHAPE,
                           "the output must be [batch, frames, bins, 2]");
        g->frames = out->d[1];
        g->bins = out->d[2];
        return PRT_OK;
    }
    if (g->len < 1 || step < 1 || g->len > x->d[1])
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "frame_length %lld and frame_step %lld must be >= 1, and a frame "
                       "at most the signal's %lld samples",
                       (long long)g->len, (long long)step, (long long)x->d[1]);
    g->frames = (g->samples - g->len) / step + 1;
    g->bins = ((const stft_op *)o)->onesided ? g->len / 2 + 1 : g->len;
    if (out->nb_dims != 4 || out->d[0] != g->batch || out->d[1] != g->frames ||
        out->d[2] != g->bins || out->d[3] != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the output's dims do not match frame_length %lld and "
                       "frame_step %lld",
                       (long long)g->len, (long long)step);
    return PRT_OK;
}

static int64_t stft_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    (void)dtype, (void)in, (void)nb_in, (void)nb_out;
    if (out->nb_dims != 4)
        return 0;
    return signal_fft_workspace(((const stft_op *)o)->onesided ? 2 * out->d[2]
                                                               : out->d[2]);
}

typedef struct stft_job {
    signal_stft_geom g;
    signal_fft f;
    int32_t dtype;
    const void *x, *w;
    void *y;
} stft_job;

static void stft_range(void *arg, int64_t begin, int64_t end)
{
    const stft_job *j = arg;
    const signal_stft_geom *g = &j->g;
    const int64_t n = g->len;
    double *s = signal_fft_slot(&j->f);
    for (int64_t line = begin; line < end; line++) {
        const int64_t b = line / g->frames, fr = line % g->frames;
        for (int64_t t = 0; t < n; t++) {
            const int64_t at = (b * g->samples + fr * g->step + t) * g->comps;
            const double w = j->w ? signal_load(j->w, j->dtype, t) : 1.0;
            s[t] = signal_load(j->x, j->dtype, at) * w;
            s[n + t] = g->comps == 2 ? signal_load(j->x, j->dtype, at + 1) * w : 0.0;
        }
        signal_fft_line(&j->f, s, g->bins, 0);
        for (int64_t k = 0; k < g->bins; k++) {
            signal_store(j->y, j->dtype, (line * g->bins + k) * 2, s[2 * n + k]);
            signal_store(j->y, j->dtype, (line * g->bins + k) * 2 + 1, s[3 * n + k]);
        }
    }
}

static prt_status stft_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *x, void *const *ys, void *ws, void *stream)
{
    stft_job j;
    int32_t w, l;
    prt_status st;
    (void)nb_out, (void)stream;
    stft_roles(in, nb_in, &w, &l);
    st = stft_geom(o, in, w, &out->dims, op_int_at(x[1], in[1].dtype, 0),
                   l >= 0 ? op_int_at(x[l], in[l].dtype, 0) : -1, &j.g);
    if (st || base_volume(&out->dims) == 0)
        return st;
    if (!ws || signal_fft_workspace(j.g.len) > o->ws_bytes)
        return op_fail(o, PRT_ERR_MALFORMED, "needs %lld bytes of workspace",
                       (long long)signal_fft_workspace(j.g.len));
    signal_fft_init(&j.f, j.g.len, ws);
    j.dtype = dtype;
    j.x = x[0];
    j.w = w >= 0 ? x[w] : NULL;
    j.y = ys[0];
    signal_fft_for(j.g.batch * j.g.frames, j.g.len, stft_range, &j);
    return PRT_OK;
}

/* Input 2 is the window (the signal's dtype) or frame_length (an index). */
static uint32_t stft_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    return index == 0   ? OP_DT_FLOAT | OP_DT(PRT_BFLOAT16)
           : index == 2 ? OP_DT(types[0]) | OP_DT(PRT_INT32) | OP_DT(PRT_INT64)
                        : OP_DT(PRT_INT32) | OP_DT(PRT_INT64);
}

static int32_t stft_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)nb_in;
    return types[0];
}

static const op_class stft_class = {
    .min_inputs = 2,
    .max_inputs = 4,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(stft_op),
    .alias_input = -1,
    .parse = stft_parse,
    .serialize = stft_serialize,
    .shapes_sv = stft_shapes,
    .workspace = stft_workspace,
    .run = stft_run,
    .min_shape_inputs = 1,
    .max_shape_inputs = 2,
    .in_dtypes = stft_in_dtypes,
    .out_dtype = stft_out_dtype,
};

static const prt_field_schema stft_schema[] = {
    {"onesided", PRT_FIELD_INT32, 1, "1 (default): only bins 0 .. frame_length/2"},
};

const prt_plugin_creator op_stft_creator = OP_CREATOR("STFT", stft_class, stft_schema, 1);

/*
 * DFT (namespace "plugrt", version "1"), ONNX opset 17: the discrete
 * Fourier transform along one axis. input [batch, signal dims..., comps]
 * (comps 1: real, 2: complex as real, imaginary; float32, float16,
 * bfloat16) and optionally dft_length (a 0-D int32/int64 shape input that
 * is also read: the transform's length, the axis zero-padded or truncated
 * to it). y has input's dims but the axis (dft_length, or
 * dft_length / 2 + 1 with onesided) and comps 2:
 *
 *   y[k] = sum_t x[t] exp(-2 pi i k t / n)        (inverse: +, then / n)
 *
 * computed in double (signal_fft.c: an FFT for a power-of-two n, the
 * direct sum otherwise) and rounded once to the dtype.
 *
 * Fields: axis (default 1; a negative one counts back from the comps dim,
 * so -1 is the last signal dim; the comps dim itself is refused), inverse
 * and onesided (0 or 1, default 0). onesided keeps the first n / 2 + 1
 * bins of whatever is computed, as ONNX's reference does (also for
 * complex or inverse input).
 */
#include "ops/ops_signal.h"

typedef struct dft_op {
    op_object o;
    int32_t axis, inverse, onesided;
} dft_op;

static prt_status dft_parse(op_object *o, const op_fields *f)
{
    dft_op *d = (dft_op *)o;
    prt_status st = op_field_i32(f, "axis", 1, &d->axis);
    if (!st)
        st = op_field_i32(f, "inverse", 0, &d->inverse);
    if (!st)
        st = op_field_i32(f, "onesided", 0, &d->onesided);
    if (!st && ((uint32_t)d->inverse > 1 || (uint32_t)d->onesided > 1))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "inverse (%d) and onesided (%d) must be 0 or 1",
                            (int)d->inverse, (int)d->onesided);
    return st;
}

static int32_t dft_serialize(op_object *o, prt_field *ser)
{
    dft_op *d = (dft_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &d->axis, 1);
    op_ser(&ser[1], "inverse", PRT_FIELD_INT32, &d->inverse, 1);
    op_ser(&ser[2], "onesided", PRT_FIELD_INT32, &d->onesided, 1);
    return 3;
}

void dft_params(const op_object *o, int32_t *axis, int32_t *inverse, int32_t *onesided)
{
    const dft_op *d = (const dft_op *)o;
    *axis = d->axis;
    *inverse = d->inverse;
    *onesided = d->onesided;
}

/* The axis for input rank r: in [0, r - 2] (the comps dim excluded). */
static prt_status dft_axis(const op_object *o, int32_t r, int32_t *axis)
{
    int32_t a = ((const dft_op *)o)->axis;
    if (r < 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "input has rank %d; it needs a signal dim and the comps dim "
                       "(rank 2 or more)",
                       (int)r);
    if (a < 0)
        a += r - 1;
    if (a < 0 || a > r - 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "axis %d is out of range for input of rank %d (the signal dims "
                       "are 0 to %d)",
                       (int)((const dft_op *)o)->axis, (int)r, (int)r - 2);
    *axis = a;
    return PRT_OK;
}

static prt_status dft_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    const dft_op *d = (const dft_op *)o;
    int32_t r = in[0].nb_dims, axis = 0;
    int64_t c;
    const prt_expr *len;
    prt_status st = dft_axis(o, r, &axis);
    if (st)
        return st;
    if (eb->is_constant(eb, in[0].d[r - 1], &c) && c != 1 && c != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "input's last dim is %lld; it must be 1 (real) or 2 (complex)",
                       (long long)c);
    len = in[0].d[axis];
    if (nb_in > 1 && nb_sv != 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "dft_length must be a shape input (a value known when the engine "
                       "is built: it sizes the output)");
    if (nb_sv > 0) {
        if (nb_in < 2 || in[1].nb_dims != 0 || sv[0].nb_dims != 1)
            return op_fail(o, PRT_ERR_SHAPE,
                           "dft_length must be a scalar (it has rank %d)",
                           nb_in < 2 ? -1 : (int)in[1].nb_dims);
        len = sv[0].d[0];
        if (eb->is_constant(eb, len, &c) && c < 1)
            return op_fail(o, PRT_ERR_SHAPE, "dft_length is %lld; it must be 1 or more",
                           (long long)c);
    }
    *out = in[0];
    out->d[r - 1] = eb->constant(eb, 2);
    out->d[axis] = d->onesided ? eb->operation(eb, PRT_DIM_SUM,
                                               eb->operation(eb, PRT_DIM_FLOOR_DIV, len,
                                                             eb->constant(eb, 2)),
                                               eb->constant(eb, 1))
                               : len;
    return PRT_OK;
}

prt_status dft_geom(const op_object *o, const prt_tensor_desc *in, const prt_dims *out,
                    int64_t len, signal_dft_geom *g)
{
    const prt_dims *x = &in[0].dims;
    int32_t r = x->nb_dims, axis = 0;
    prt_status st = dft_axis(o, r, &axis);
    if (st)
        return st;
    g->comps = x->d[r - 1];
    if (g->comps != 1 && g->comps != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "input's last dim is %lld; it must be 1 (real) or 2 (complex)",
                       (long long)g->comps);
    g->axis_len = x->d[axis];
    g->len = len == -1 ? g->axis_len : len;
    g->bins = ((const dft_op *)o)->onesided ? g->len / 2 + 1 : g->len;
    if (len == SIGNAL_ON_DEVICE)
        g->bins = out->nb_dims == r ? out->d[axis] : -1;
    else if (g->len < 1)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "dft_length is %lld; it must be 1 or more", (long long)g->len);
    g->inverse = ((const dft_op *)o)->inverse;
    g->outer = g->inner = 1;
    for (int32_t k = 0; k < axis; k++)
        g->outer *= x->d[k];
    for (int32_t k = axis + 1; k < r - 1; k++)
        g->inner *= x->d[k];
    if (out->nb_dims != r || out->d[axis] != g->bins || out->d[r - 1] != 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the output's dims do not match dft_length %lld (%lld bins)",
                       (long long)g->len, (long long)g->bins);
    return PRT_OK;
}

/* Bins kept can need up to 2 * bins points when onesided. */
static int64_t dft_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int32_t axis = 0;
    (void)dtype, (void)nb_in, (void)nb_out;
    if (dft_axis(o, in[0].nb_dims, &axis) || out->nb_dims != in[0].nb_dims)
        return 0; /* refused before a run asks */
    return signal_fft_workspace(((const dft_op *)o)->onesided ? 2 * out->d[axis]
                                                              : out->d[axis]);
}

typedef struct dft_job {
    signal_dft_geom g;
    signal_fft f;
    int32_t dtype;
    const void *x;
    void *y;
} dft_job;

static void dft_range(void *arg, int64_t begin, int64_t end)
{
    const dft_job *j = arg;
    const signal_dft_geom *g = &j->g;
    const int64_t n = g->len, m = g->axis_len < n ? g->axis_len : n;
    const double scale = g->inverse ? 1.0 / (double)n : 1.0;
    double *s = signal_fft_slot(&j->f);
    for (int64_t line = begin; line < end; line++) {
        const int64_t o = line / g->inner, i = line % g->inner;
        for (int64_t t = 0; t < n; t++) {
            const int64_t at = ((o * g->axis_len + t) * g->inner + i) * g->comps;
            s[t] = t < m ? signal_load(j->x, j->dtype, at) : 0.0;
            s[n + t] = t < m && g->comps == 2 ? signal_load(j->x, j->dtype, at + 1) : 0.0;
        }
        signal_fft_line(&j->f, s, g->bins, g->inverse);
        for (int64_t k = 0; k < g->bins; k++) {
            const int64_t at = ((o * g->bins + k) * g->inner + i) * 2;
            signal_store(j->y, j->dtype, at, s[2 * n + k] * scale);
            signal_store(j->y, j->dtype, at + 1, s[3 * n + k] * scale);
        }
    }
}

static prt_status dft_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    dft_job j;
    int64_t len = nb_in > 1 ? op_int_at(x[1], in[1].dtype, 0) : -1;
    prt_status st = dft_geom(o, in, &out->dims, len, &j.g);
    (void)nb_out, (void)stream;
    if (st)
        return st;
    if (base_volume(&out->dims) == 0)
        return PRT_OK;
    if (!ws || signal_fft_workspace(j.g.len) > o->ws_bytes)
        return op_fail(o, PRT_ERR_MALFORMED, "needs %lld bytes of workspace",
                       (long long)signal_fft_workspace(j.g.len));
    signal_fft_init(&j.f, j.g.len, ws);
    j.dtype = dtype;
    j.x = x[0];
    j.y = ys[0];
    signal_fft_for(j.g.outer * j.g.inner, j.g.len, dft_range, &j);
    return PRT_OK;
}

static uint32_t dft_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == 0 ? OP_DT_FLOAT | OP_DT(PRT_BFLOAT16)
                      : OP_DT(PRT_INT32) | OP_DT(PRT_INT64);
}

static int32_t dft_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)nb_in;
    return types[0];
}

static const op_class dft_class = {
    .min_inputs = 1,
    .max_inputs = 2,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(dft_op),
    .alias_input = -1,
    .parse = dft_parse,
    .serialize = dft_serialize,
    .shapes_sv = dft_shapes,
    .workspace = dft_workspace,
    .run = dft_run,
    .min_shape_inputs = 0,
    .max_shape_inputs = 1,
    .in_dtypes = dft_in_dtypes,
    .out_dtype = dft_out_dtype,
};

static const prt_field_schema dft_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the signal axis, default 1 (negative: from the end)"},
    {"inverse", PRT_FIELD_INT32, 1,
     "1: the inverse transform (scaled by 1/n); default 0"},
    {"onesided", PRT_FIELD_INT32, 1, "1: only bins 0 .. n/2; default 0"},
};

const prt_plugin_creator op_dft_creator = OP_CREATOR("DFT", dft_class, dft_schema, 3);

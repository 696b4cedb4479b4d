/*
 * The window functions and MelWeightMatrix (namespace "plugrt", version
 * "1"), ONNX opset 17: outputs made from values alone.
 *
 * HannWindow, HammingWindow, BlackmanWindow: input size (a 0-D int32/int64
 *   shape input that is also a data input, so its rank is checked), output
 *   [size] of
 *     w[k] = a0 - a1 cos(2 pi k / D) + a2 cos(4 pi k / D)
 *   D = size when periodic (the default), size - 1 otherwise; (a0, a1, a2)
 *   Hann (0.5, 0.5, 0), Hamming (25/46, 21/46, 0), Blackman (0.42, 0.5,
 *   0.08), in double, rounded once. A symmetric window of one point is
 *   1.0 (numpy's; ONNX's formula divides 0 by 0).
 * MelWeightMatrix: inputs num_mel_bins, dft_length (int32/int64 scalars,
 *   shape inputs also read), sample_rate (their dtype), lower_edge_hertz,
 *   upper_edge_hertz (float scalars); output [dft_length / 2 + 1,
 *   num_mel_bins] of triangular filters, ONNX's reference's arithmetic
 *   (its mel step divides by num_mel_bins + 2 points; the edges' mels in
 *   float32 as numpy computes them from float32 inputs, the rest in double).
 *
 * Field of all four: dtype (a prt_dtype, default float32; float32,
 * float16 or bfloat16), the importer's conversion of output_datatype.
 */
#include <math.h>

#include "ops/ops_signal.h"

#define WIN_HANN 0
#define WIN_HAMMING 1
#define WIN_BLACKMAN 2
#define WIN_PI 3.14159265358979323846

typedef struct win_op {
    op_object o;
    int32_t periodic, dtype;
} win_op;

static prt_status win_dtype_ok(const op_fields *f, int32_t dt)
{
    if (dt != PRT_FLOAT32 && dt != PRT_FLOAT16 && dt != PRT_BFLOAT16)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "output dtype %d (%s) is not supported: float32, float16 "
                              "or bfloat16",
                              (int)dt,
                              dt >= 0 && dt < PRT_DTYPE_COUNT ? prt_dtype_name(dt) : "?");
    return PRT_OK;
}

static prt_status win_parse(op_object *o, const op_fields *f)
{
    win_op *w = (win_op *)o;
    prt_status st = op_field_i32(f, "periodic", 1, &w->periodic);
    if (!st)
        st = op_field_i32(f, "dtype", PRT_FLOAT32, &w->dtype);
    if (!st && (uint32_t)w->periodic > 1)
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "periodic is %d; it must be 0 or 1", (int)w->periodic);
    return st ? st : win_dtype_ok(f, w->dtype);
}

static int32_t win_serialize(op_object *o, prt_field *ser)
{
    win_op *w = (win_op *)o;
    op_ser(&ser[0], "periodic", PRT_FIELD_INT32, &w->periodic, 1);
    op_ser(&ser[1], "dtype", PRT_FIELD_INT32, &w->dtype, 1);
    return 2;
}

void signal_window_params(const op_object *o, double c[3], int32_t *periodic)
{
    switch (o->cls->kind) {
    case WIN_HANN:
        c[0] = 0.5, c[1] = 0.5, c[2] = 0.0;
        break;
    case WIN_HAMMING:
        c[0] = 25.0 / 46.0, c[1] = 21.0 / 46.0, c[2] = 0.0;
        break;
    default:
        c[0] = 0.42, c[1] = 0.5, c[2] = 0.08;
        break;
    }
    *periodic = ((const win_op *)o)->periodic;
}

/* A value that sizes an output: a scalar, >= 0 where known. */
static prt_status win_size(op_object *o, const prt_dim_exprs *in, const prt_dim_exprs *sv,
                           int32_t k, const char *what, prt_expr_builder *eb)
{
    int64_t v;
    if (in[k].nb_dims != 0 || sv[k].nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "%s must be a scalar (it has rank %d)", what,
                       (int)in[k].nb_dims);
    if (eb->is_constant(eb, sv[k].d[0], &v) && v < 0)
        return op_fail(o, PRT_ERR_SHAPE, "%s is %lld; it must be 0 or more", what,
                       (long long)v);
    return PRT_OK;
}

static prt_status win_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    prt_status st = win_size(o, in, sv, 0, "size", eb);
    (void)nb_in, (void)nb_sv;
    if (st)
        return st;
    out->nb_dims = 1;
    out->d[0] = sv[0].d[0];
    return PRT_OK;
}

static int32_t win_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)types, (void)nb_in;
    return ((const win_op *)o)->dtype;
}

static prt_status win_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    int64_t n = op_int_at(x[0], in[0].dtype, 0), den;
    double c[3];
    int32_t periodic;
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (out->dims.nb_dims != 1 || out->dims.d[0] != n || n < 0)
        return op_fail(o, PRT_ERR_SHAPE, "size is %lld; the output has %lld elements",
                       (long long)n, (long long)base_volume(&out->dims));
    signal_window_params(o, c, &periodic);
    den = periodic ? n : n - 1;
    for (int64_t k = 0; k < n; k++) {
        double a = 2.0 * WIN_PI * (double)k / (double)den;
        double v = den == 0 ? 1.0 : c[0] - c[1] * cos(a) + c[2] * cos(2.0 * a);
        signal_store(ys[0], out->dtype, k, v);
    }
    return PRT_OK;
}

static uint32_t win_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)index, (void)types;
    return OP_DT(PRT_INT32) | OP_DT(PRT_INT64);
}

#define WIN_CLASS(k)                                                                     \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1,                                   \
        .dtypes = OP_DT(PRT_INT32) | OP_DT(PRT_INT64), .size = sizeof(win_op),           \
        .alias_input = -1, .parse = win_parse, .serialize = win_serialize,               \
        .shapes_sv = win_shapes, .run = win_run, .min_shape_inputs = 1,                  \
        .max_shape_inputs = 1, .in_dtypes = win_in_dtypes, .out_dtype = win_out_dtype,   \
    }

static const op_class hann_class = WIN_CLASS(WIN_HANN);
static const op_class hamming_class = WIN_CLASS(WIN_HAMMING);
static const op_class blackman_class = WIN_CLASS(WIN_BLACKMAN);

static const prt_field_schema win_schema[] = {
    {"periodic", PRT_FIELD_INT32, 1, "1 (default): periodic, 0: symmetric"},
    {"dtype", PRT_FIELD_INT32, 1, "the output's prt_dtype (float32, float16, bfloat16)"},
};

const prt_plugin_creator op_hann_window_creator =
    OP_CREATOR("HannWindow", hann_class, win_schema, 2);
const prt_plugin_creator op_hamming_window_creator =
    OP_CREATOR("HammingWindow", hamming_class, win_schema, 2);
const prt_plugin_creator op_blackman_window_creator =
    OP_CREATOR("BlackmanWindow", blackman_class, win_schema, 2);

/* ---- MelWeightMatrix -------------------------------------------------------- */

static prt_status mel_parse(op_object *o, const op_fields *f)
{
    win_op *w = (win_op *)o;
    prt_status st = op_field_i32(f, "dtype", PRT_FLOAT32, &w->dtype);
    w->periodic = 0;
    return st ? st : win_dtype_ok(f, w->dtype);
}

static int32_t mel_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "dtype", PRT_FIELD_INT32, &((win_op *)o)->dtype, 1);
    return 1;
}

static prt_status mel_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             prt_expr_builder *eb)
{
    prt_status st = win_size(o, in, sv, 0, "num_mel_bins", eb);
    (void)nb_in, (void)nb_sv;
    if (!st)
        st = win_size(o, in, sv, 1, "dft_length", eb);
    for (int32_t k = 2; k < 5 && !st; k++)
        if (in[k].nb_dims != 0)
            st = op_fail(o, PRT_ERR_SHAPE, "input %d must be a scalar (it has rank %d)",
                         (int)k, (int)in[k].nb_dims);
    if (st)
        return st;
    out->nb_dims = 2;
    out->d[0] = eb->operation(
        eb, PRT_DIM_SUM,
        eb->operation(eb, PRT_DIM_FLOOR_DIV, sv[1].d[0], eb->constant(eb, 2)),
        eb->constant(eb, 1));
    out->d[1] = sv[0].d[0];
    return PRT_OK;
}

/* Point p of the mel scale's num_mel_bins + 2 points as a DFT bin. */
static int64_t mel_point(int64_t p, int64_t bins, int64_t dft_len, double rate, float lo,
                         float hi)
{
    const float lm = 2595.0f * log10f(1.0f + lo / 700.0f);
    const float hm = 2595.0f * log10f(1.0f + hi / 700.0f);
    const float step = (hm - lm) / (float)(bins + 2);
    double mel = (double)p * (double)step + (double)lm;
    double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
    return (int64_t)floor((double)(dft_len + 1) * hz / rate);
}

/* Filter i's weight at bin j, its points l, c, h: rising over [l, c], falling
 * over [c, h); a filter with l == c is 1 at c. */
static double mel_weight(int64_t j, int64_t l, int64_t c, int64_t h)
{
    if (h > c && j >= c && j < h)
        return (double)(h - j) / (double)(h - c);
    if (c == l)
        return j == c ? 1.0 : 0.0;
    if (j >= l && j <= c)
        return (double)(j - l) / (double)(c - l);
    return 0.0;
}

static prt_status mel_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    const int64_t M = op_int_at(x[0], in[0].dtype, 0),
                  L = op_int_at(x[1], in[1].dtype, 0);
    const int64_t rate = op_int_at(x[2], in[2].dtype, 0), R = L / 2 + 1;
    const float lo = (float)signal_load(x[3], in[3].dtype, 0);
    const float hi = (float)signal_load(x[4], in[4].dtype, 0);
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (out->dims.nb_dims != 2 || out->dims.d[0] != R || out->dims.d[1] != M)
        return op_fail(o, PRT_ERR_SHAPE,
                       "num_mel_bins %lld and dft_length %lld do not give the output's "
                       "dims",
                       (long long)M, (long long)L);
    if (rate <= 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "sample_rate is %lld; it must be > 0",
                       (long long)rate);
    for (int64_t i = 0; i < M; i++) {
        int64_t l = mel_point(i, M, L, (double)rate, lo, hi);
        int64_t c = mel_point(i + 1, M, L, (double)rate, lo, hi);
        int64_t h = mel_point(i + 2, M, L, (double)rate, lo, hi);
        for (int64_t j = 0; j < R; j++)
            signal_store(ys[0], out->dtype, j * M + i, mel_weight(j, l, c, h));
    }
    return PRT_OK;
}

static uint32_t mel_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    return index == 0   ? OP_DT(PRT_INT32) | OP_DT(PRT_INT64)
           : index < 3  ? OP_DT(types[0])
           : index == 3 ? OP_DT_FLOAT | OP_DT(PRT_BFLOAT16)
                        : OP_DT(types[3]);
}

static const op_class mel_class = {
    .min_inputs = 5,
    .max_inputs = 5,
    .dtypes = OP_DT(PRT_INT32) | OP_DT(PRT_INT64),
    .size = sizeof(win_op),
    .alias_input = -1,
    .parse = mel_parse,
    .serialize = mel_serialize,
    .shapes_sv = mel_shapes,
    .run = mel_run,
    .min_shape_inputs = 2,
    .max_shape_inputs = 2,
    .in_dtypes = mel_in_dtypes,
    .out_dtype = win_out_dtype,
};

static const prt_field_schema mel_schema[] = {
    {"dtype", PRT_FIELD_INT32, 1, "the output's prt_dtype (float32, float16, bfloat16)"},
};

const prt_plugin_creator op_mel_weight_matrix_creator =
    OP_CREATOR("MelWeightMatrix", mel_class, mel_schema, 1);

/*
 * SkipLayerNormalization (namespace "plugrt", version "1"): a residual add
 * and the LayerNormalization of the sum in one pass over memory, ONNX
 * Runtime's com.microsoft op of that name. The importer makes it of a
 * com.microsoft node and of Add(x, r) -> LayerNormalization over the last
 * axis (onnx_fuse.c), which transformers spend a layer pair on per block
 * (bert_small: 25 such pairs).
 *
 * Inputs: input and skip, then gamma, optional beta, optional bias (in
 * ORT's order). The sum
 *   S = input + skip (+ bias)
 * broadcasts input and skip as Add does (numpy's rule: ORT's skip of
 * [S, H] or [1, S, H] beside an input of [B, S, H], or either side short,
 * as Add's operands may be); its last dim H is the one normalized. gamma, beta and bias
 * hold H values, or 1 for all (any rank, every dim but the last 1: LayerNormalization's
 * Scale and B over the last axis). Each row of S (H elements) is normalized: output = (S
 * - mean) / sqrt(var + epsilon) * gamma + beta. Outputs (as many as nb_outputs): output;
 * mean and inv_std_var, the output's dims with the last set to 1, float32;
 * input_skip_bias_sum, S in the inputs' dtype (the importer asks for it when a node other
 * than the LayerNormalization reads the Add's result, as pre-LN GPT-2 does).
 *
 * Fields:
 *   epsilon    float32, default 1e-12 (ORT's)
 *   nb_outputs int32 1 to 4, default 1
 *
 * Float dtypes. S is summed in float32 (half floats converted first and
 * the sum not rounded before the statistics: an Add of half floats would
 * round it, so the fused layer differs from the pair by that rounding at
 * most), the statistics in double over two passes (op_norm_stats), as
 * LayerNormalization's. A row is summed, measured and normalized whole on
 * one thread while it is in cache.
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/math_ops.h"
#include "ops/ops_nn.h"

static const sln_op *csln(const op_object *o)
{
    return (const sln_op *)o;
}

static prt_status sln_parse(op_object *o, const op_fields *f)
{
    sln_op *l = (sln_op *)o;
    prt_status st = op_field_f32(f, "epsilon", 1e-12f, &l->epsilon);
    if (!st)
        st = op_field_i32(f, "nb_outputs", 1, &l->nb_outputs);
    if (!st && (l->nb_outputs < 1 || l->nb_outputs > 4))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "nb_outputs is %d; it must be 1 to 4 (output, mean, "
                            "inv_std_var, input_skip_bias_sum)",
                            (int)l->nb_outputs);
    if (!st && !(l->epsilon >= 0.0f))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "epsilon must be >= 0, it is %g",
                            (double)l->epsilon);
    return st;
}

static int32_t sln_serialize(op_object *o, prt_field *ser)
{
    sln_op *l = (sln_op *)o;
    op_ser(&ser[0], "epsilon", PRT_FIELD_FLOAT32, &l->epsilon, 1);
    op_ser(&ser[1], "nb_outputs", PRT_FIELD_INT32, &l->nb_outputs, 1);
    return 2;
}

static int32_t sln_nb_outputs(const op_object *o)
{
    return csln(o)->nb_outputs;
}

/* The inputs' dtype for output and the sum, float32 for the statistics. */
static int32_t sln_out_dtype_n(const op_object *o, const int32_t *types, int32_t nb_in,
                               int32_t index)
{
    (void)o, (void)nb_in;
    return index == 1 || index == 2 ? PRT_FLOAT32 : types[0];
}

static const char *const sln_names[5] = {"input", "skip", "gamma", "beta", "bias"};

static prt_status sln_shapes_n(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                               int32_t nb_out, prt_expr_builder *eb)
{
    prt_dim_exprs s;
    prt_status st;
    (void)sv, (void)nb_sv, (void)nb_in;
    if (in[0].nb_dims < 1 || in[1].nb_dims < 1)
        return op_fail(o, PRT_ERR_SHAPE, "input and skip must have rank 1 or more");
    st = op_broadcast_exprs(o, eb, &in[0], &in[1], &s, "input and skip");
    if (st)
        return st;
    for (int32_t k = 0; k < nb_out; k++) {
        out[k] = s;
        if (k == 1 || k == 2)
            out[k].d[s.nb_dims - 1] = eb->constant(eb, 1);
    }
    return PRT_OK;
}

static prt_status sln_infer_n(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out, int32_t nb_out)
{
    prt_dims s;
    char sa[128];
    int64_t h;
    prt_status st;
    if (in[0].nb_dims < 1 || in[1].nb_dims < 1)
        return op_fail(o, PRT_ERR_SHAPE, "input and skip must have rank 1 or more");
    st = op_broadcast_dims(o, &in[0], &in[1], &s, "input and skip");
    if (st)
        return st;
    h = s.d[s.nb_dims - 1];
    for (int32_t k = 2; k < nb_in; k++) {
        const prt_dims *v = &in[k];
        int ok =
            v->nb_dims >= 1 && (v->d[v->nb_dims - 1] == h || v->d[v->nb_dims - 1] == 1);
        for (int32_t i = 0; ok && i + 1 < v->nb_dims; i++)
            ok = v->d[i] == 1;
        if (!ok)
            return op_fail(o, PRT_ERR_SHAPE,
                           "%s %s must hold the normalized dim's %lld values or 1 (every "
                           "dim but the last 1)",
                           sln_names[k],
                           base_dims_format(v, BASE_DIMS_LIST, sa, sizeof sa),
                           (long long)h);
    }
    for (int32_t k = 0; k < nb_out; k++) {
        out[k] = s;
        if (k == 1 || k == 2)
            out[k].d[s.nb_dims - 1] = 1;
    }
    return PRT_OK;
}

/* gamma, beta and bias as float32 (3 H), then the sum (the output's
 * volume) where it is not written straight into output 3. */
static int64_t sln_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t v = base_volume(&out[0]), h, n;
    (void)o, (void)dtype, (void)in, (void)nb_in, (void)nb_out;
    if (v < 0 || out[0].nb_dims < 1)
        return 0; /* the dims are refused before a run asks */
    h = out[0].d[out[0].nb_dims - 1];
    if (!base_mul_i64(h, 3, &n) || !base_add_i64(n, v, &n))
        return -1;
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

typedef struct sln_job {
    int32_t dtype;
    const void *in[2]; /* input, skip */
    /* Their element strides along the output's dims (0: broadcast). */
    int64_t strides[2][PRT_MAX_DIMS];
    prt_dims od;
    const float *gamma, *beta, *bias;
    float *sum; /* float32 sums: output 3's memory or the workspace */
    int64_t h;
    float epsilon;
    int32_t nb_out;
    void *const *y;
} sln_job;

#define SLN_CHUNK 256 /* floats converted at a time from half floats */

/* dst[0..n) += src[0..n) of dtype, elements `step` (0 or 1) apart (dst =
 * src when add is 0). */
static void sln_acc(const void *src, int32_t dtype, int64_t n, int64_t step, float *dst,
                    int add)
{
    float t[SLN_CHUNK];
    if (step == 0) { /* one value along the row */
        float v;
        op_to_f32(src, dtype, 1, &v);
        for (int64_t i = 0; i < n; i++)
            dst[i] = add ? dst[i] + v : v;
        return;
    }
    for (int64_t b = 0; b < n; b += SLN_CHUNK) {
        int64_t m = n - b < SLN_CHUNK ? n - b : SLN_CHUNK;
        const float *s = t;
        if (dtype == PRT_FLOAT32)
            s = (const float *)src + b;
        else
            op_to_f32((const uint8_t *)src + (size_t)b * prt_dtype_size(dtype), dtype, m,
                      t);
        if (add)
            for (int64_t i = 0; i < m; i++)
                dst[b + i] += s[i];
        else
            memcpy(dst + b, s, (size_t)m * sizeof(float));
    }
}

static void sln_range(void *arg, int64_t b, int64_t e)
{
    const sln_job *j = arg;
    const size_t es = prt_dtype_size(j->dtype);
    for (int64_t rw = b; rw < e; rw++) {
        const int64_t at = rw * j->h;
        const int32_t last = j->od.nb_dims - 1;
        float *s = j->sum + at, mean, inv;
        for (int32_t k = 0; k < 2; k++) {
            /* The row's first element: rw's coordinates in the leading
             * dims. */
            int64_t off = 0, q = rw;
            for (int32_t i = last - 1; i >= 0; i--) {
                off += q % j->od.d[i] * j->strides[k][i];
                q /= j->od.d[i];
            }
            sln_acc((const uint8_t *)j->in[k] + (size_t)off * es, j->dtype, j->h,
                    j->strides[k][last], s, k);
        }
        if (j->bias)
            for (int64_t i = 0; i < j->h; i++)
                s[i] += j->bias[i];
        op_norm_stats(s, j->h, j->epsilon, &mean, &inv);
        if (j->nb_out > 1)
            ((float *)j->y[1])[rw] = mean;
        if (j->nb_out > 2)
            ((float *)j->y[2])[rw] = inv;
        if (j->dtype == PRT_FLOAT32) {
            op_norm_apply(s, j->h, mean, inv, j->gamma, j->beta, (float *)j->y[0] + at);
            continue;
        }
        if (j->nb_out > 3)
            op_from_f32(s, j->dtype, j->h, (uint8_t *)j->y[3] + (size_t)at * es);
        op_norm_apply(s, j->h, mean, inv, j->gamma, j->beta, s);
        op_from_f32(s, j->dtype, j->h, (uint8_t *)j->y[0] + (size_t)at * es);
    }
}

/* A vector of n (H or 1) values of dtype as H float32s (0s for an absent
 * one). */
static void sln_vec(const void *p, const prt_tensor_desc *d, int32_t dtype, int64_t h,
                    float *dst)
{
    int64_t n = p ? base_volume(&d->dims) : 0;
    if (!p) {
        memset(dst, 0, (size_t)h * sizeof(float));
        return;
    }
    op_to_f32(p, dtype, n, dst);
    for (int64_t i = n; i < h; i++)
        dst[i] = dst[0];
}

static prt_status sln_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    const prt_dims *od = &out[0].dims;
    int64_t total = base_volume(od), h = od->d[od->nb_dims - 1], rows;
    float *w = ws;
    sln_job j;
    (void)stream;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    rows = h > 0 ? total / h : 0;
    if (h <= 0) { /* rows of nothing: NaN statistics, as LayerNormalization's */
        for (int32_t k = 1; k < 3 && k < nb_out; k++)
            for (int64_t r = 0, n = base_volume(&out[k].dims); r < n; r++)
                ((float *)y[k])[r] = NAN;
        return PRT_OK;
    }
    memset(&j, 0, sizeof j);
    j.dtype = dtype;
    j.in[0] = x[0];
    j.in[1] = x[1];
    j.od = *od;
    op_broadcast_strides(&in[0].dims, od, j.strides[0]);
    op_broadcast_strides(&in[1].dims, od, j.strides[1]);
    j.h = h;
    j.epsilon = csln(o)->epsilon;
    j.nb_out = nb_out;
    j.y = y;
    for (int32_t k = 2; k < 5; k++)
        sln_vec(k < nb_in ? x[k] : NULL, &in[k < nb_in ? k : 0], dtype, h,
                w + (k - 2) * h);
    j.gamma = w;
    j.beta = w + h;
    j.bias = nb_in > 4 && x[4] ? w + 2 * h : NULL;
    j.sum = dtype == PRT_FLOAT32 && nb_out > 3 ? (float *)y[3] : w + 3 * h;
    /* A row: a sum, its statistics, a few operations per element. */
    base_parallel_for(rows, (OP_GRAIN_SIMPLE + 3 * h - 1) / (3 * h), sln_range, &j);
    return PRT_OK;
}

static const op_class sln_class = {
    .min_inputs = 3,
    .max_inputs = 5,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(sln_op),
    .alias_input = -1,
    .parse = sln_parse,
    .serialize = sln_serialize,
    .nb_outputs = sln_nb_outputs,
    .shapes_n = sln_shapes_n,
    .infer_n = sln_infer_n,
    .out_dtype_n = sln_out_dtype_n,
    .workspace = sln_workspace,
    .run = sln_run,
};

static const prt_field_schema sln_schema[] = {
    {"epsilon", PRT_FIELD_FLOAT32, 1, "added to the variance, default 1e-12"},
    {"nb_outputs", PRT_FIELD_INT32, 1,
     "1: output (default), 2: and mean, 3: and inv_std_var, 4: and "
     "input_skip_bias_sum"},
};

const prt_plugin_creator op_skip_layer_norm_creator =
    OP_CREATOR("SkipLayerNormalization", sln_class, sln_schema,
               (int32_t)(sizeof sln_schema / sizeof sln_schema[0]));

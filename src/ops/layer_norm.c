/*
 * LayerNormalization (namespace "plugrt", version "1"), ONNX opset 17
 * semantics. float32, float16, bfloat16.
 *
 * Inputs X (rank r >= 1), Scale, optional B. The normalized dims are X's
 * dims from `axis` on; each row (one index of the dims before `axis`) is
 * normalized over them:
 *   Y = (X - mean) / sqrt(var + epsilon) * Scale + B,
 * with mean and the population variance over the row. Scale and B broadcast
 * to the normalized dims (numpy's rule, aligned at the right): each dim is 1
 * or equal to X's, and any dims of theirs before `axis` must be 1 (a scale
 * that varied per row would not be a layer norm). Y has X's dims; the
 * optional outputs Mean and InvStdDev (1 / sqrt(var + epsilon)) have them
 * with the normalized dims set to 1, in stash_type's dtype.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   axis       int32, default -1; -r to r-1
 *   epsilon    float32, default 1e-5
 *   stash_type int32, default 1: the dtype of Mean and InvStdDev, as an
 *              ONNX element type: 1 float32, 10 float16, 16 bfloat16
 *   nb_outputs int32 1 to 3, default 1: Y, then Mean, then InvStdDev (the
 *              importer sets it from the node's outputs)
 *
 * Mean and variance are accumulated in double over a two-pass loop (no
 * E[x^2] - E[x]^2 cancellation) and rounded to stash_type's dtype, and each
 * element is computed from those in float32 (ONNX computes in stash_type).
 * Half floats are converted to float32 in the workspace and rounded once.
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/math_ops.h"
#include "ops/ops_nn.h"

static const ln_op *cln(const op_object *o)
{
    return (const ln_op *)o;
}

static prt_status ln_parse(op_object *o, const op_fields *f)
{
    ln_op *l = (ln_op *)o;
    prt_status st = op_field_i32(f, "axis", -1, &l->axis);
    if (!st)
        st = op_field_f32(f, "epsilon", 1e-5f, &l->epsilon);
    if (!st)
        st = op_field_i32(f, "stash_type", 1, &l->stash_type);
    if (!st && l->stash_type != 1 && l->stash_type != 10 && l->stash_type != 16)
        st = op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                            "stash_type %d is not supported (1: float32, 10: "
                            "float16, 16: bfloat16)",
                            (int)l->stash_type);
    if (!st)
        st = op_field_i32(f, "nb_outputs", 1, &l->nb_outputs);
    if (!st && (l->nb_outputs < 1 || l->nb_outputs > 3))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "nb_outputs is %d; it must be 1 (Y), 2 (Y, Mean) or 3 (Y, "
                            "Mean, InvStdDev)",
                            (int)l->nb_outputs);
    if (!st && !(l->epsilon >= 0.0f))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "epsilon must be >= 0, it is %g",
                            (double)l->epsilon);
    return st;
}

static int32_t ln_serialize(op_object *o, prt_field *ser)
{
    ln_op *l = (ln_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &l->axis, 1);
    op_ser(&ser[1], "epsilon", PRT_FIELD_FLOAT32, &l->epsilon, 1);
    op_ser(&ser[2], "stash_type", PRT_FIELD_INT32, &l->stash_type, 1);
    op_ser(&ser[3], "nb_outputs", PRT_FIELD_INT32, &l->nb_outputs, 1);
    return 4;
}

static int32_t ln_nb_outputs(const op_object *o)
{
    return cln(o)->nb_outputs;
}

/* Output k's dtype: X's for Y, stash_type's for the statistics. */
int32_t ln_out_dtype_n(const op_object *o, const int32_t *types, int32_t nb_in,
                       int32_t index)
{
    int32_t st = cln(o)->stash_type;
    (void)nb_in;
    if (index == 0)
        return types[0];
    return st == 10 ? PRT_FLOAT16 : st == 16 ? PRT_BFLOAT16 : PRT_FLOAT32;
}

/* The axis for rank r, in [0, r). */
prt_status ln_axis(const op_object *o, int32_t r, int32_t *out)
{
    return op_axis(o, cln(o)->axis, r, 0, "X", out);
}

static const char *const ln_names[3] = {"X", "Scale", "B"};

/* Scale or B (k) that does not broadcast to X's normalized dims; dims
 * already written out. */
static prt_status ln_bcast_fail(const op_object *o, int32_t k, const char *s,
                                const char *x, int32_t axis)
{
    return op_fail(o, PRT_ERR_SHAPE,
                   "%s %s cannot be broadcast to X %s's normalized dims (from axis %d)",
                   ln_names[k], s, x, (int)axis);
}

static prt_status ln_shapes_n(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                              int32_t nb_out, prt_expr_builder *eb)
{
    const prt_dim_exprs *x = &in[0];
    int32_t axis = 0, r = x->nb_dims;
    char sa[128], sb[128];
    prt_status st = ln_axis(o, r, &axis);
    (void)sv, (void)nb_sv;
    if (st)
        return st;
    for (int32_t k = 1; k < nb_in; k++) {
        const prt_dim_exprs *s = &in[k];
        if (s->nb_dims > r)
            return op_fail(o, PRT_ERR_SHAPE, "%s has rank %d, more than X's %d",
                           ln_names[k], (int)s->nb_dims, (int)r);
        for (int32_t i = 0; i < s->nb_dims; i++) {
            int32_t xi = r - s->nb_dims + i;
            const prt_expr *sd = s->d[i], *xd = x->d[xi];
            int64_t vs, vx;
            if (sd == xd || !eb->is_constant(eb, sd, &vs) || vs == 1)
                continue;
            if (xi < axis || (eb->is_constant(eb, xd, &vx) && vx != vs))
                return ln_bcast_fail(o, k, op_exprs_str(eb, s, sa, sizeof sa),
                                     op_exprs_str(eb, x, sb, sizeof sb), axis);
        }
    }
    out[0] = *x;
    for (int32_t k = 1; k < nb_out; k++) {
        out[k] = *x;
        for (int32_t i = axis; i < r; i++)
            out[k].d[i] = eb->constant(eb, 1);
    }
    return PRT_OK;
}

static prt_status ln_infer_n(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out, int32_t nb_out)
{
    const prt_dims *x = &in[0];
    int32_t axis = 0, r = x->nb_dims;
    char sa[128], sb[128];
    prt_status st = ln_axis(o, r, &axis);
    if (st)
        return st;
    for (int32_t k = 1; k < nb_in; k++) {
        const prt_dims *s = &in[k];
        int ok = s->nb_dims <= r;
        for (int32_t i = 0; ok && i < s->nb_dims; i++) {
            int32_t xi = r - s->nb_dims + i;
            ok = s->d[i] == 1 || (xi >= axis && s->d[i] == x->d[xi]);
        }
        if (!ok)
            return ln_bcast_fail(o, k, base_dims_format(s, BASE_DIMS_LIST, sa, sizeof sa),
                                 base_dims_format(x, BASE_DIMS_LIST, sb, sizeof sb),
                                 axis);
    }
    out[0] = *x;
    for (int32_t k = 1; k < nb_out; k++) {
        out[k] = *x;
        for (int32_t i = axis; i < r; i++)
            out[k].d[i] = 1;
    }
    return PRT_OK;
}

/* Elements of the normalized dims of x; -1 on overflow or a bad axis. */
int64_t ln_norm_size(const op_object *o, const prt_dims *x)
{
    int32_t r = x->nb_dims, a = cln(o)->axis;
    int64_t n = 1;
    if (r < 1 || r > PRT_MAX_DIMS || a < -r || a >= r)
        return -1;
    for (int32_t i = a < 0 ? a + r : a; i < r; i++)
        if (x->d[i] < 0 || !base_mul_i64(n, x->d[i], &n))
            return -1;
    return n;
}

/* Scale and B expanded to the normalized dims (float32); half floats also
 * X as float32, normalized in place. */
static int64_t ln_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                            int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t norm = ln_norm_size(o, &in[0]), n;
    (void)nb_in, (void)out, (void)nb_out;
    if (norm < 0)
        return 0; /* the dims are refused before a run asks */
    if (!base_mul_i64(norm, 2, &n))
        return -1;
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        int64_t v = base_volume(&in[0]);
        if (v < 0 || !base_add_i64(n, v, &n))
            return -1;
    }
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* One row of ln_expand: n elements converted, or one converted and
 * repeated; ctx points to the dtype. */
static int ln_expand_row(const void *ctx, const uint8_t *const *p, const int64_t *s,
                         uint8_t *y, int64_t n)
{
    float *dst = (float *)y;
    op_to_f32(p[0], *(const int32_t *)ctx, s[0] ? n : 1, dst);
    for (int64_t j = s[0] ? n : 1; j < n; j++)
        dst[j] = dst[0];
    return 0;
}

/* dst = s broadcast to the normalized dims nd (float32). */
static void ln_expand(const void *s, int32_t dtype, const prt_dims *sd,
                      const prt_dims *nd, float *dst)
{
    prt_dims trimmed = *sd;
    size_t es = prt_dtype_size(dtype);
    /* Dims of s before the axis are all 1 (checked): drop them. */
    if (trimmed.nb_dims > nd->nb_dims) {
        int32_t drop = trimmed.nb_dims - nd->nb_dims;
        for (int32_t i = 0; i < nd->nb_dims; i++)
            trimmed.d[i] = trimmed.d[i + drop];
        trimmed.nb_dims = nd->nb_dims;
    }
    /* The rows never stop the walk. */
    (void)op_bcast_walk(nd, 1, &trimmed, &es, sizeof(float), &s, dst, ln_expand_row,
                        &dtype);
}

/* Writes statistic v of row rw into output k (stash_type's dtype), when
 * there is one; returns v as that dtype rounds it. */
static float ln_stat(const prt_tensor_desc *out, int32_t nb_out, void *const *y,
                     int32_t k, int64_t rw, float v, int32_t stash)
{
    uint16_t bits[2]; /* v in the stash dtype: a float32 or a half */
    size_t es = prt_dtype_size(stash);
    float r;
    if (stash == PRT_FLOAT32) { /* no rounding: a store at most */
        if (k < nb_out)
            ((float *)y[k])[rw] = v;
        return v;
    }
    op_from_f32(&v, stash, 1, bits);
    if (k < nb_out)
        memcpy((uint8_t *)y[k] + (size_t)rw * es, bits, es);
    op_to_f32(bits, stash, 1, &r);
    return r;
}

typedef struct ln_job {
    const float *src;
    float *dst;
    const float *scale, *bias;
    int64_t norm;
    float epsilon;
    const prt_tensor_desc *out;
    int32_t nb_out;
    void *const *y;
    int32_t stash;
} ln_job;

/* Rows [b, e), each normalized whole on one thread (its statistics in a
 * fixed order), so the split never changes a bit. */
static void ln_range(void *arg, int64_t b, int64_t e)
{
    const ln_job *j = arg;
    for (int64_t rw = b; rw < e; rw++) {
        const float *xr = j->src + rw * j->norm;
        float *yr = j->dst + rw * j->norm;
        float mean, inv;
        op_norm_stats(xr, j->norm, j->epsilon, &mean, &inv);
        mean = ln_stat(j->out, j->nb_out, j->y, 1, rw, mean, j->stash);
        inv = ln_stat(j->out, j->nb_out, j->y, 2, rw, inv, j->stash);
        op_norm_apply(xr, j->norm, mean, inv, j->scale, j->bias, yr);
    }
}

static prt_status ln_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *y, void *ws, void *stream)
{
    const prt_dims *xd = &in[0].dims;
    int64_t norm = ln_norm_size(o, xd), total = base_volume(xd), rows;
    int32_t axis = 0, types[1] = {dtype}, stash = ln_out_dtype_n(o, types, 1, 1);
    float *scale = ws, *bias, *buf = NULL;
    const float *src = x[0];
    float *dst = y[0];
    prt_dims nd;
    prt_status st = ln_axis(o, xd->nb_dims, &axis);
    (void)stream;
    if (st)
        return st;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    if (norm <= 0) {
        /* Rows of nothing: Y is empty, the statistics are NaN (numpy's mean
         * of nothing). */
        rows = nb_out > 1 ? base_volume(&out[1].dims) : 0;
        for (int64_t rw = 0; rw < rows; rw++)
            for (int32_t k = 1; k < 3; k++)
                (void)ln_stat(out, nb_out, y, k, rw, NAN, stash);
        return PRT_OK;
    }
    rows = total / norm;
    bias = scale + norm;
    nd.nb_dims = xd->nb_dims - axis;
    for (int32_t i = 0; i < nd.nb_dims; i++)
        nd.d[i] = xd->d[axis + i];
    ln_expand(x[1], dtype, &in[1].dims, &nd, scale);
    if (nb_in == 3)
        ln_expand(x[2], dtype, &in[2].dims, &nd, bias);
    else
        for (int64_t p = 0; p < norm; p++)
            bias[p] = 0.0f;
    if (dtype != PRT_FLOAT32) {
        buf = bias + norm;
        op_to_f32(x[0], dtype, total, buf);
        src = dst = buf;
    }
    {
        ln_job j = {src, dst, scale, bias, norm, cln(o)->epsilon, out, nb_out, y, stash};
        /* A row: its statistics, then a few operations per element. */
        base_parallel_for(rows, (OP_GRAIN_SIMPLE + norm - 1) / norm, ln_range, &j);
    }
    if (buf)
        op_from_f32(buf, dtype, total, y[0]);
    return PRT_OK;
}

static const op_class ln_class = {
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(ln_op),
    .alias_input = -1,
    .parse = ln_parse,
    .serialize = ln_serialize,
    .nb_outputs = ln_nb_outputs,
    .shapes_n = ln_shapes_n,
    .infer_n = ln_infer_n,
    .out_dtype_n = ln_out_dtype_n,
    .workspace = ln_workspace,
    .run = ln_run,
};

static const prt_field_schema ln_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "first normalized dim, default -1; -r to r-1"},
    {"epsilon", PRT_FIELD_FLOAT32, 1, "added to the variance, default 1e-5"},
    {"stash_type", PRT_FIELD_INT32, 1,
     "dtype of Mean and InvStdDev: 1 float32 (default), 10 float16, 16 bfloat16"},
    {"nb_outputs", PRT_FIELD_INT32, 1, "1: Y (default), 2: and Mean, 3: and InvStdDev"},
};

const prt_plugin_creator op_layer_norm_creator =
    OP_CREATOR("LayerNormalization", ln_class, ln_schema,
               (int32_t)(sizeof ln_schema / sizeof ln_schema[0]));

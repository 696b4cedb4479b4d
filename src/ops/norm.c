/*
 * The normalizations over channels and groups (namespace "plugrt", version
 * "1"), ONNX semantics at opsets 7-19 (GroupNormalization also 21's scale):
 *
 *  - BatchNormalization, inference mode: X [N, C, D1, ..., Dn] (rank 1: [N]
 *    with C = 1), scale, B, mean, var of [C];
 *      Y = (X - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + B[c].
 *    With spatial 0 (opsets 7-8) the four are [C, D1, ..., Dn]: one value
 *    per channel and position. scale and B share a dtype, mean and var
 *    share one (opset 15 lets them differ from X's); momentum only matters
 *    to training and is accepted and ignored; training_mode must be 0.
 *  - InstanceNormalization: X [N, C, D1, ...] (rank >= 3, as ONNX Runtime),
 *    scale and B [C]: each (image, channel) plane normalized over its
 *    positions, then scaled and shifted per channel.
 *  - GroupNormalization (opset 18): X [N, C, D1, ...] (rank >= 2), C a
 *    multiple of num_groups; each image's group of C / num_groups channels
 *    normalized over its channels and positions; scale and B of
 *    [num_groups] (opset 18: per group) or [C] (opset 21: per channel; the
 *    two agree when num_groups == C).
 *  - LpNormalization: X / ||X||_p along `axis` (p 1 or 2); a zero norm
 *    gives 0s (ONNX Runtime's rule, where the reference would divide by 0).
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   epsilon        float32, default 1e-5 (the first three)
 *   momentum       float32, default 0.9 (BatchNormalization; unused)
 *   spatial        int32 0 or 1, default 1 (BatchNormalization)
 *   training_mode  int32, default 0; only 0 (BatchNormalization)
 *   num_groups     int32 >= 1, required (GroupNormalization)
 *   stash_type     int32, default 1; only 1 (GroupNormalization, opset 21)
 *   axis           int32, default -1; p int32 1 or 2, default 2
 *                  (LpNormalization)
 *   activation, activation_params
 *                  a fused activation applied to each result as it is
 *                  stored, as Conv's (op_act.h; the importer's
 *                  BatchNormalization -> Relu and the like), all four
 *
 * float32, float16, bfloat16 (half floats converted to float32 in the
 * workspace and rounded once). Means and variances are two-pass sums in
 * double (op_norm_stats, shared with LayerNormalization).
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_nn.h"
#include "ops/ops_views.h"

enum { NORM_BATCH, NORM_INSTANCE, NORM_GROUP, NORM_LP }; /* op_class.kind */

typedef struct norm_op {
    op_object o;
    float epsilon, momentum;
    int32_t spatial, training_mode; /* BatchNormalization */
    int32_t num_groups, stash_type; /* GroupNormalization */
    int32_t axis, p;                /* LpNormalization */
    op_act act;                     /* the fused activation (all four) */
    float act_params[2];            /* as serialized */
} norm_op;

static const norm_op *cnm(const op_object *o)
{
    return (const norm_op *)o;
}

void op_norm_stats(const float *x, int64_t n, float epsilon, float *mean, float *inv)
{
    op_row_stats(x, n, epsilon, mean, inv);
}

/* An int field that must be one of lo..hi. */
static prt_status norm_int(op_object *o, const op_fields *f, const char *name,
                           int32_t dflt, int32_t lo, int32_t hi, prt_status bad,
                           int32_t *out)
{
    prt_status st = op_field_i32(f, name, dflt, out);
    if (!st && (*out < lo || *out > hi))
        st = op_fail(o, bad, "%s %d is not supported (%d to %d)", name, (int)*out,
                     (int)lo, (int)hi);
    return st;
}

static prt_status norm_parse(op_object *o, const op_fields *f)
{
    norm_op *n = (norm_op *)o;
    prt_status st = op_field_f32(f, "epsilon", 1e-5f, &n->epsilon);
    if (!st && !(n->epsilon >= 0.0f))
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "epsilon must be >= 0, it is %g",
                     (double)n->epsilon);
    if (!st)
        st = op_field_f32(f, "momentum", 0.9f, &n->momentum);
    if (!st)
        st = norm_int(o, f, "spatial", 1, 0, 1, PRT_ERR_INVALID_ARGUMENT, &n->spatial);
    if (!st)
        st = op_field_i32(f, "training_mode", 0, &n->training_mode);
    if (!st && n->training_mode != 0)
        st = op_fail(o, PRT_ERR_UNSUPPORTED,
                     "training_mode %d is not supported (inference only: 0)",
                     (int)n->training_mode);
    if (!st)
        st = op_field_i32(f, "num_groups", -1, &n->num_groups);
    if (!st && o->cls->kind == NORM_GROUP && n->num_groups < 1)
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                     n->num_groups == -1 ? "num_groups is required"
                                         : "num_groups must be >= 1");
    if (!st)
        st = norm_int(o, f, "stash_type", 1, 1, 1, PRT_ERR_UNSUPPORTED, &n->stash_type);
    if (!st)
        st = op_field_i32(f, "axis", -1, &n->axis);
    if (!st)
        st = norm_int(o, f, "p", 2, 1, 2, PRT_ERR_UNSUPPORTED, &n->p);
    if (!st)
        st = op_act_parse(o, f, &n->act, n->act_params);
    return st;
}

static int32_t norm_serialize(op_object *o, prt_field *ser)
{
    norm_op *n = (norm_op *)o;
    int32_t k = 0;
    switch (o->cls->kind) {
    case NORM_BATCH:
        op_ser(&ser[k++], "momentum", PRT_FIELD_FLOAT32, &n->momentum, 1);
        op_ser(&ser[k++], "spatial", PRT_FIELD_INT32, &n->spatial, 1);
        op_ser(&ser[k++], "training_mode", PRT_FIELD_INT32, &n->training_mode, 1);
        break;
    case NORM_GROUP:
        op_ser(&ser[k++], "num_groups", PRT_FIELD_INT32, &n->num_groups, 1);
        op_ser(&ser[k++], "stash_type", PRT_FIELD_INT32, &n->stash_type, 1);
        break;
    case NORM_LP:
        op_ser(&ser[k++], "axis", PRT_FIELD_INT32, &n->axis, 1);
        op_ser(&ser[k++], "p", PRT_FIELD_INT32, &n->p, 1);
        return k + op_act_serialize(&n->act, n->act_params, ser + k);
    default:
        break;
    }
    op_ser(&ser[k++], "epsilon", PRT_FIELD_FLOAT32, &n->epsilon, 1);
    return k + op_act_serialize(&n->act, n->act_params, ser + k);
}

/* BatchNormalization: scale and B share a float dtype (T1), mean and var
 * another (T2); InstanceNormalization and GroupNormalization: X's. */
static uint32_t norm_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    if (o->cls->kind != NORM_BATCH || index == 0)
        return index == 0 ? o->cls->dtypes : OP_DT(types[0]);
    if (index == 2 || index == 4)
        return OP_DT(types[index - 1]);
    return o->cls->dtypes;
}

static const char *const bn_names[] = {"X", "scale", "B", "mean", "var"};

/* The number of parameters each of inputs 1.. holds, from X's dims: C, or
 * C * D1 * ... for BatchNormalization's spatial 0, or num_groups or C for
 * GroupNormalization's (*alt: the other count accepted, else -1). */
static int64_t norm_params(const op_object *o, const prt_dims *x, int64_t *alt)
{
    int64_t c = x->nb_dims >= 2 ? x->d[1] : 1, n = c;
    *alt = -1;
    if (o->cls->kind == NORM_BATCH && !cnm(o)->spatial)
        for (int32_t i = 2; i < x->nb_dims; i++)
            n *= x->d[i];
    if (o->cls->kind == NORM_GROUP)
        *alt = cnm(o)->num_groups;
    return n;
}

/* The rules that need only X's rank. */
static prt_status norm_rank(const op_object *o, int32_t r)
{
    int32_t kind = o->cls->kind, lo = kind == NORM_INSTANCE ? 3
                                      : kind == NORM_GROUP  ? 2
                                                            : 1;
    int32_t axis;
    if (r < lo)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X must have rank %d or more (N x C x D1 ...), it has rank %d",
                       (int)lo, (int)r);
    return kind == NORM_LP ? op_axis(o, cnm(o)->axis, r, 0, "X", &axis) : PRT_OK;
}

/* Rank and shape rules from concrete dims. */
static prt_status norm_check(const op_object *o, const prt_dims *in, int32_t nb_in)
{
    const prt_dims *x = &in[0];
    int32_t kind = o->cls->kind;
    int64_t want, alt;
    char a[128], b[128];
    prt_status st = norm_rank(o, x->nb_dims);
    if (st || kind == NORM_LP)
        return st;
    if (kind == NORM_GROUP && x->d[1] % cnm(o)->num_groups)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has %lld channels, not a multiple of num_groups %d",
                       (long long)x->d[1], (int)cnm(o)->num_groups);
    want = norm_params(o, x, &alt);
    for (int32_t k = 1; k < nb_in; k++) {
        const prt_dims *p = &in[k];
        int ok;
        if (kind == NORM_BATCH && !cnm(o)->spatial && x->nb_dims >= 2) {
            /* [C, D1, ..., Dn]: X's dims after N. */
            ok = p->nb_dims == x->nb_dims - 1;
            for (int32_t i = 0; ok && i < p->nb_dims; i++)
                ok = p->d[i] == x->d[i + 1];
        } else {
            ok = p->nb_dims == 1 && (p->d[0] == want || p->d[0] == alt);
        }
        if (!ok)
            return op_fail(o, PRT_ERR_SHAPE, "%s %s does not fit X %s (it must be %s)",
                           kind == NORM_BATCH ? bn_names[k]
                           : k == 1           ? "scale"
                                              : "B",
                           base_dims_format(p, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(x, BASE_DIMS_LIST, b, sizeof b),
                           kind == NORM_BATCH && !cnm(o)->spatial
                               ? "[C, D1, ...] with spatial 0"
                           : kind == NORM_GROUP ? "[num_groups] or [C]"
                                                : "[C]");
    }
    return PRT_OK;
}

static prt_status norm_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    prt_dims d[5];
    int known = 1;
    prt_status st = norm_rank(o, in[0].nb_dims);
    *out = in[0];
    if (st)
        return st;
    /* The other rules need concrete dims: here when every dim is a
     * constant, else at configure and run time. */
    for (int32_t k = 0; k < nb_in; k++) {
        d[k].nb_dims = in[k].nb_dims;
        for (int32_t i = 0; i < in[k].nb_dims; i++)
            known &= eb->is_constant(eb, in[k].d[i], &d[k].d[i]) != 0;
    }
    return known ? norm_check(o, d, nb_in) : PRT_OK;
}

static prt_status norm_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    *out = in[0];
    return norm_check(o, in, nb_in);
}

/* float32 bytes: the parameters as float32 (4 arrays of the largest count
 * X allows), and X for half floats. */
static int64_t norm_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = 0, v;
    (void)o, (void)out;
    for (int32_t k = 1; k < nb_in; k++) {
        v = base_volume(&in[k]);
        if (v < 0 || !base_add_i64(n, v, &n))
            return -1;
    }
    if (dtype != PRT_FLOAT32) {
        v = base_volume(&in[0]);
        if (v < 0 || !base_add_i64(n, v, &n))
            return -1;
    }
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

/* LpNormalization of n elements spaced `stride` apart, in place. */
static void lp_row(float *x, int64_t n, int64_t stride, int32_t p)
{
    double s = 0.0;
    float norm;
    for (int64_t k = 0; k < n; k++) {
        double v = x[k * stride];
        s += p == 1 ? fabs(v) : v * v;
    }
    norm = (float)(p == 1 ? s : sqrt(s));
    for (int64_t k = 0; k < n; k++)
        x[k * stride] = norm != 0.0f ? x[k * stride] / norm : 0.0f;
}

/* BatchNormalization over planes [begin, end) of (image, channel):
 * (x - mean) * scale + B, scale already divided by sqrt(var + eps), one
 * value per channel (spatial) or per channel and position; then the fused
 * activation on the plane while it is in cache. */
typedef struct bn_job {
    const float *x;
    float *y;
    const float *mean, *scale, *bias;
    const op_act *act;
    int64_t C, sp;
    int spatial;
} bn_job;

static inline CPU_INLINE void bn_planes_body(void *arg, int64_t begin, int64_t end)
{
    const bn_job *j = arg;
    for (int64_t p = begin; p < end; p++) {
        const int64_t c = p % j->C, sp = j->sp;
        /* x and y may be one buffer (the 16-bit path converts in place):
         * element q is read before it is written, and nothing else. */
        const float *xp = j->x + p * sp;
        float *yp = j->y + p * sp;
        if (j->spatial) {
            const float m = j->mean[c], s = j->scale[c], b = j->bias[c];
            for (int64_t q = 0; q < sp; q++)
                yp[q] = (xp[q] - m) * s + b;
        } else {
            const float *m = j->mean + c * sp, *s = j->scale + c * sp,
                        *b = j->bias + c * sp;
            for (int64_t q = 0; q < sp; q++)
                yp[q] = (xp[q] - m[q]) * s[q] + b[q];
        }
        if (j->act->kind != OP_ACT_NONE)
            op_act_bias(j->act, 0.0f, yp, sp);
    }
}

/* Both builds do the same float operations (no contraction in this
 * library), so they give the same bits. */
CPU_BUILDS(bn_planes, bn_planes_body, (void *arg, int64_t begin, int64_t end),
           (arg, begin, end))

static prt_status norm_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const norm_op *nm = cnm(o);
    const prt_dims *xd = &in[0].dims;
    int32_t kind = o->cls->kind;
    int64_t total = base_volume(xd), N = xd->d[0], C = xd->nb_dims >= 2 ? xd->d[1] : 1;
    int64_t sp = 1, np[5] = {0};
    float *w = ws, *par[5] = {NULL}, *buf;
    const float *src = xs[0];
    float *dst = y;
    (void)out, (void)stream;
    for (int32_t i = 2; i < xd->nb_dims; i++)
        sp *= xd->d[i];
    /* The parameters as float32. */
    for (int32_t k = 1; k < nb_in; k++) {
        np[k] = base_volume(&in[k].dims);
        par[k] = w;
        op_to_f32(xs[k], in[k].dtype, np[k], w);
        w += np[k];
    }
    buf = w;
    if (dtype != PRT_FLOAT32) {
        op_to_f32(xs[0], dtype, total, buf);
        src = dst = buf;
    }
    if (kind == NORM_LP) {
        int32_t axis = 0;
        int64_t outer = 1, inner = 1, n;
        (void)op_axis(o, nm->axis, xd->nb_dims, 0, "X", &axis); /* checked */
        for (int32_t i = 0; i < axis; i++)
            outer *= xd->d[i];
        for (int32_t i = axis + 1; i < xd->nb_dims; i++)
            inner *= xd->d[i];
        n = xd->d[axis];
        if (dst != src)
            memcpy(dst, src, sizeof(float) * (size_t)total);
        for (int64_t i = 0; i < outer; i++)
            for (int64_t j = 0; j < inner; j++)
                lp_row(dst + i * n * inner + j, n, inner, nm->p);
        if (nm->act.kind != OP_ACT_NONE)
            op_act_bias(&nm->act, 0.0f, dst, total);
    } else if (kind == NORM_BATCH) {
        /* Per parameter: (x - mean) * (scale / sqrt(var + eps)) + B. */
        int64_t nparam = np[1];
        bn_job j = {src, dst, par[3], par[1], par[2], &nm->act, C, sp, nm->spatial != 0};
        for (int64_t q = 0; q < nparam; q++)
            par[1][q] = (float)((double)par[1][q] /
                                sqrt((double)par[4][q] + (double)nm->epsilon));
        /* Planes of (image, channel) on the pool's threads, each chunk at
         * least ~16K elements. */
        base_parallel_for(N * C, sp >= 16384 ? 1 : 16384 / (sp > 0 ? sp : 1),
                          CPU_PICK(bn_planes), &j);
    } else {
        /* Instance: groups of one channel; Group: C / G channels. */
        int64_t G = kind == NORM_GROUP ? nm->num_groups : C, cg = C / G;
        int per_group = kind == NORM_GROUP && np[1] == G && G != C;
        for (int64_t n = 0; n < N; n++)
            for (int64_t g = 0; g < G; g++) {
                const float *xp = src + (n * C + g * cg) * sp;
                float *yp = dst + (n * C + g * cg) * sp;
                float mean, inv;
                if (cg * sp == 0)
                    continue;
                op_norm_stats(xp, cg * sp, nm->epsilon, &mean, &inv);
                for (int64_t c = 0; c < cg; c++) {
                    int64_t i = per_group ? g : g * cg + c;
                    float a = par[1][i], b = nb_in > 2 ? par[2][i] : 0.0f;
                    for (int64_t q = 0; q < sp; q++)
                        yp[c * sp + q] = (xp[c * sp + q] - mean) * inv * a + b;
                }
                if (nm->act.kind != OP_ACT_NONE)
                    op_act_bias(&nm->act, 0.0f, yp, cg * sp);
            }
    }
    if (dst != y)
        op_from_f32(dst, dtype, total, y);
    return PRT_OK;
}

prt_status op_norm_view_of(const op_object *o, const prt_dims *in, int32_t nb_in,
                           op_norm_view *v)
{
    const norm_op *nm = cnm(o);
    const prt_dims *xd = &in[0];
    prt_status st = norm_check(o, in, nb_in);
    if (st)
        return st;
    /* norm_run's view of X, one for one. */
    memset(v, 0, sizeof *v);
    v->kind = o->cls->kind;
    v->epsilon = nm->epsilon;
    v->N = xd->d[0];
    v->C = xd->nb_dims >= 2 ? xd->d[1] : 1;
    v->sp = 1;
    for (int32_t i = 2; i < xd->nb_dims; i++)
        v->sp *= xd->d[i];
    v->per = nm->spatial ? 1 : v->sp;
    v->G = v->kind == NORM_GROUP ? nm->num_groups : v->C;
    v->cg = v->G > 0 ? v->C / v->G : 0;
    v->per_group =
        v->kind == NORM_GROUP && nb_in > 1 && base_volume(&in[1]) == v->G && v->G != v->C;
    v->p = nm->p;
    v->act = nm->act;
    if (v->kind == NORM_LP) {
        int32_t axis = 0;
        (void)op_axis(o, nm->axis, xd->nb_dims, 0, "X", &axis); /* checked */
        v->outer = v->inner = 1;
        for (int32_t i = 0; i < axis; i++)
            v->outer *= xd->d[i];
        for (int32_t i = axis + 1; i < xd->nb_dims; i++)
            v->inner *= xd->d[i];
        v->n = xd->d[axis];
    }
    return PRT_OK;
}

#define NORM_CLASS(NAME, KIND, MIN_IN, MAX_IN)                                           \
    static const op_class NAME = {                                                       \
        .kind = (KIND),                                                                  \
        .min_inputs = (MIN_IN),                                                          \
        .max_inputs = (MAX_IN),                                                          \
        .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),                                     \
        .size = sizeof(norm_op),                                                         \
        .alias_input = -1,                                                               \
        .parse = norm_parse,                                                             \
        .serialize = norm_serialize,                                                     \
        .shapes = norm_shapes,                                                           \
        .infer = norm_infer,                                                             \
        .workspace = norm_workspace,                                                     \
        .run = norm_run,                                                                 \
        .in_dtypes = norm_in_dtypes,                                                     \
    }

NORM_CLASS(batch_norm_class, NORM_BATCH, 5, 5);
NORM_CLASS(instance_norm_class, NORM_INSTANCE, 3, 3);
NORM_CLASS(group_norm_class, NORM_GROUP, 3, 3);
NORM_CLASS(lp_norm_class, NORM_LP, 1, 1);

#define NORM_EPS                                                                         \
    {                                                                                    \
        "epsilon", PRT_FIELD_FLOAT32, 1, "added to the variance, default 1e-5"           \
    }

#define NORM_ACT                                                                         \
    {"activation", PRT_FIELD_CHAR, -1,                                                   \
     "fused activation after the normalization: Relu, LeakyRelu, Clip, HardSigmoid, "    \
     "HardSwish, Sigmoid or Silu (none by default)"},                                    \
    {                                                                                    \
        "activation_params", PRT_FIELD_FLOAT32, -1, "the activation's alpha (and beta)"  \
    }

static const prt_field_schema batch_norm_schema[] = {
    NORM_EPS,
    {"momentum", PRT_FIELD_FLOAT32, 1, "training only; accepted and unused"},
    {"spatial", PRT_FIELD_INT32, 1, "0: parameters per channel and position (opset < 9)"},
    {"training_mode", PRT_FIELD_INT32, 1, "0 (inference) only"},
    NORM_ACT,
};
static const prt_field_schema instance_norm_schema[] = {NORM_EPS, NORM_ACT};
static const prt_field_schema group_norm_schema[] = {
    NORM_EPS,
    {"num_groups", PRT_FIELD_INT32, 1, "groups of channels, required"},
    {"stash_type", PRT_FIELD_INT32, 1, "precision of the statistics: 1 (float32) only"},
    NORM_ACT,
};
static const prt_field_schema lp_norm_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis normalized along, default -1"},
    {"p", PRT_FIELD_INT32, 1, "the norm: 1 or 2 (default)"},
    NORM_ACT,
};

#define NB_SCHEMA(s) ((int32_t)(sizeof(s) / sizeof(s)[0]))

const prt_plugin_creator op_batch_norm_creator =
    OP_CREATOR("BatchNormalization", batch_norm_class, batch_norm_schema,
               NB_SCHEMA(batch_norm_schema));
const prt_plugin_creator op_instance_norm_creator =
    OP_CREATOR("InstanceNormalization", instance_norm_class, instance_norm_schema,
               NB_SCHEMA(instance_norm_schema));
const prt_plugin_creator op_group_norm_creator =
    OP_CREATOR("GroupNormalization", group_norm_class, group_norm_schema,
               NB_SCHEMA(group_norm_schema));
const prt_plugin_creator op_lp_norm_creator = OP_CREATOR(
    "LpNormalization", lp_norm_class, lp_norm_schema, NB_SCHEMA(lp_norm_schema));

/*
 * NegativeLogLikelihoodLoss (ONNX opsets 12, 13, 22) and
 * SoftmaxCrossEntropyLoss (12, 13) (namespace "plugrt", version "1").
 * float32, float16, bfloat16.
 *
 * Inputs: scores X [N, C] or [N, C, d1, ..., dk] (NLL's input, SCE's
 * scores), targets T [N] or [N, d1, ..., dk] (int32 or int64; NLL's
 * target, SCE's labels), optional weight W [C] (X's dtype). Each position
 * (n, d1, ..., dk) has the weight w = W[t] (1 without W) and the term
 * -X[n, t, d1, ..., dk] * w, t its target; a target equal to ignore_index
 * has weight 0 and term 0, and any other target outside [0, C) fails the
 * run naming it (on CUDA it counts as ignored: a kernel cannot fail the
 * run, DESIGN-NOTES). Output loss: reduction "none" the terms, of T's
 * dims; "sum" their sum; "mean" (the default) the sum divided by the sum
 * of the weights (with neither W nor ignore_index: the number of
 * positions), NaN when every position is ignored, as ONNX's 0 / 0.
 *
 * SoftmaxCrossEntropyLoss first takes the log-softmax of X over C, in
 * double, rounded to float32 once per element, and applies the rule above
 * to it; its optional output log_prob is that log-softmax in X's dtype and
 * dims. Terms and sums are double, rounded once.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   reduction     char: "none", "sum" or "mean" (default)
 *   ignore_index  int32, optional (absent: every target must be a class)
 *   nb_outputs    int32 1 or 2 (SoftmaxCrossEntropyLoss: loss, then
 *                 log_prob; the importer sets it from the node's outputs)
 */
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/ops_loss.h"

enum { LOSS_NLL, LOSS_SCE }; /* op_class.kind */

#define LOSS_INDEX (OP_DT(PRT_INT32) | OP_DT(PRT_INT64))

static const char *const red_names[3] = {"none", "sum", "mean"};

/* The ONNX names of each op's inputs. */
static const char *const in_names[2][3] = {{"input", "target", "weight"},
                                           {"scores", "labels", "weights"}};

typedef struct loss_op {
    op_object o;
    int32_t reduction; /* OPK_LOSS_* */
    int32_t has_ignore, ignore_index;
    int32_t nb_outputs;
} loss_op;

static const loss_op *lop(const op_object *o)
{
    return (const loss_op *)o;
}

static prt_status loss_parse(op_object *o, const op_fields *f)
{
    loss_op *l = (loss_op *)o;
    const prt_field *ii = NULL;
    char red[16];
    int32_t len;
    prt_status st = op_field_str(f, "reduction", red, sizeof red, &len);
    if (st)
        return st;
    l->reduction = len < 0 ? OPK_LOSS_MEAN : -1;
    for (int32_t k = 0; k < 3 && len >= 0; k++)
        if (strcmp(red, red_names[k]) == 0)
            l->reduction = k;
    if (l->reduction < 0)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "reduction '%s' is not supported (none, sum, mean)", red);
    st = op_field_find(f, "ignore_index", &ii);
    l->has_ignore = ii != NULL;
    if (!st && ii)
        st = op_field_i32(f, "ignore_index", 0, &l->ignore_index);
    if (!st)
        st = op_field_i32(f, "nb_outputs", 1, &l->nb_outputs);
    if (!st && (l->nb_outputs < 1 || l->nb_outputs > 2))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "nb_outputs is %d; it must be 1 (loss) or 2 (loss, log_prob)",
                            (int)l->nb_outputs);
    return st;
}

static int32_t loss_serialize(op_object *o, prt_field *ser)
{
    loss_op *l = (loss_op *)o;
    const char *r = red_names[l->reduction];
    int32_t k = 0;
    op_ser(&ser[k++], "reduction", PRT_FIELD_CHAR, r, (int64_t)strlen(r));
    if (l->has_ignore)
        op_ser(&ser[k++], "ignore_index", PRT_FIELD_INT32, &l->ignore_index, 1);
    if (o->cls->kind == LOSS_SCE)
        op_ser(&ser[k++], "nb_outputs", PRT_FIELD_INT32, &l->nb_outputs, 1);
    return k;
}

/* The dims rules, on concrete dims or on symbolic ones made concrete where
 * they are constants (BASE_DIM_UNKNOWN elsewhere, never compared). */
static prt_status loss_check(const op_object *o, const prt_dims *in, int32_t nb_in)
{
    const char *const *nm = in_names[o->cls->kind];
    const prt_dims *x = &in[0], *t = &in[1];
    const int32_t r = x->nb_dims;
    char sx[128], st[128];
    if (r < 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "%s has rank %d; it must be [N, C] or [N, C, d1, ..., dk]", nm[0],
                       (int)r);
    base_dims_format(x, BASE_DIMS_LIST, sx, sizeof sx);
    base_dims_format(t, BASE_DIMS_LIST, st, sizeof st);
    if (t->nb_dims != r - 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "%s %s has rank %d; it must have rank %d, [N, d1, ..., dk] of %s "
                       "%s",
                       nm[1], st, (int)t->nb_dims, (int)(r - 1), nm[0], sx);
    for (int32_t i = 0; i < r - 1; i++) {
        const int64_t a = t->d[i], b = x->d[i == 0 ? 0 : i + 1];
        if (a != b && a != BASE_DIM_UNKNOWN && b != BASE_DIM_UNKNOWN)
            return op_fail(o, PRT_ERR_SHAPE,
                           "%s %s does not match %s %s: it must be [N, d1, ..., dk] of "
                           "[N, C, d1, ..., dk]",
                           nm[1], st, nm[0], sx);
    }
    if (nb_in > 2) {
        const prt_dims *w = &in[2];
        const int64_t c = x->d[1];
        char sw[128];
        base_dims_format(w, BASE_DIMS_LIST, sw, sizeof sw);
        if (w->nb_dims != 1 ||
            (w->d[0] != c && w->d[0] != BASE_DIM_UNKNOWN && c != BASE_DIM_UNKNOWN))
            return op_fail(o, PRT_ERR_SHAPE, "%s %s must be [C], C = dim 1 of %s %s",
                           nm[2], sw, nm[0], sx);
    }
    return PRT_OK;
}

/* The output dims: the targets' with reduction none, else a scalar; the
 * log-probabilities' those of the scores. */
static void loss_out_dims(const op_object *o, const prt_dims *in, prt_dims *out,
                          int32_t nb_out)
{
    out[0] = in[1];
    if (lop(o)->reduction != OPK_LOSS_NONE)
        out[0].nb_dims = 0;
    if (nb_out > 1)
        out[1] = in[0];
}

static prt_status loss_shapes_n(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *eb)
{
    prt_dims d[3];
    prt_status st;
    (void)sv, (void)nb_sv;
    for (int32_t k = 0; k < nb_in; k++) {
        d[k].nb_dims = in[k].nb_dims;
        for (int32_t i = 0; i < in[k].nb_dims; i++)
            if (!eb->is_constant(eb, in[k].d[i], &d[k].d[i]))
                d[k].d[i] = BASE_DIM_UNKNOWN;
    }
    st = loss_check(o, d, nb_in);
    if (st)
        return st;
    out[0] = in[1];
    if (lop(o)->reduction != OPK_LOSS_NONE)
        out[0].nb_dims = 0;
    if (nb_out > 1)
        out[1] = in[0];
    return PRT_OK;
}

static prt_status loss_infer_n(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out, int32_t nb_out)
{
    prt_status st = loss_check(o, in, nb_in);
    if (!st)
        loss_out_dims(o, in, out, nb_out);
    return st;
}

static prt_status loss_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    return loss_shapes_n(o, in, nb_in, NULL, 0, out, 1, eb);
}

static prt_status loss_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    return loss_infer_n(o, in, nb_in, out, 1);
}

static int32_t loss_nb_outputs(const op_object *o)
{
    return lop(o)->nb_outputs;
}

static int32_t loss_out_dtype_n(const op_object *o, const int32_t *types, int32_t nb_in,
                                int32_t index)
{
    (void)o, (void)nb_in, (void)index;
    return types[0];
}

static uint32_t loss_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    return index == 0   ? OP_DT_FLOAT | OP_DT(PRT_BFLOAT16)
           : index == 1 ? LOSS_INDEX
                        : OP_DT(types[0]);
}

void loss_params(const op_object *o, const prt_tensor_desc *in, opk_loss_params *p)
{
    const prt_dims *x = &in[0].dims;
    p->N = x->d[0];
    p->C = x->d[1];
    p->D = 1;
    for (int32_t i = 2; i < x->nb_dims; i++)
        p->D *= x->d[i];
    p->xdt = p->wdt = in[0].dtype;
    p->tdt = in[1].dtype;
    p->reduction = lop(o)->reduction;
    p->has_ignore = lop(o)->has_ignore;
    p->ignore_index = lop(o)->ignore_index;
}

/* The loss over x (p's view; the log-probabilities for SCE) into y
 * (dtype ydt): the terms with reduction none, else their reduction. A
 * target out of range fails naming it, its position and the classes. */
static prt_status loss_apply(const op_object *o, const opk_loss_params *p, const void *x,
                             const void *target, const void *weight, void *y, int32_t ydt)
{
    const int64_t n = p->N * p->D;
    double sum = 0.0, wsum = 0.0;
    for (int64_t pos = 0; pos < n; pos++) {
        double term, w;
        if (opk_nll_term(p, x, target, weight, pos, &term, &w)) {
            char ii[48] = "no ignore_index is set";
            if (p->has_ignore)
                snprintf(ii, sizeof ii, "ignore_index is %lld",
                         (long long)p->ignore_index);
            return op_fail(
                o, PRT_ERR_INVALID_ARGUMENT,
                "%s %lld (element %lld) is out of range: C is %lld, so it must "
                "lie in [0, %lld) (%s)",
                o->cls->kind == LOSS_NLL ? "target" : "label",
                (long long)opk_int_at(p->tdt, target, pos), (long long)pos,
                (long long)p->C, (long long)p->C, ii);
        }
        if (p->reduction == OPK_LOSS_NONE) {
            opk_float_put(ydt, y, pos, (float)term);
        } else {
            sum += term;
            wsum += w;
        }
    }
    if (p->reduction != OPK_LOSS_NONE)
        opk_float_put(ydt, y, 0, (float)opk_loss_reduce(p->reduction, sum, wsum));
    return PRT_OK;
}

static prt_status nll_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    opk_loss_params p;
    (void)dtype, (void)nb_out, (void)ws, (void)stream;
    loss_params(o, in, &p);
    return loss_apply(o, &p, x[0], x[1], nb_in > 2 ? x[2] : NULL, y[0], out[0].dtype);
}

/* SCE's log-probabilities as float32: X's elements. */
static int64_t sce_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = base_volume(&in[0]);
    (void)o, (void)dtype, (void)nb_in, (void)out, (void)nb_out;
    return n >= 0 && base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

typedef struct sce_job {
    const opk_loss_params *p;
    const void *x;
    float *lp;
    void *y; /* log_prob, or NULL */
    int32_t ydt;
} sce_job;

/* Positions [b, e): each whole on one thread, so the split changes no bit. */
static void sce_range(void *arg, int64_t b, int64_t e)
{
    const sce_job *j = arg;
    for (int64_t pos = b; pos < e; pos++)
        opk_log_softmax_at(j->p, j->x, pos, j->lp, j->y, j->ydt);
}

static prt_status sce_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    opk_loss_params p;
    (void)dtype, (void)stream;
    loss_params(o, in, &p);
    {
        sce_job j = {&p, x[0], ws, nb_out > 1 ? y[1] : NULL,
                     nb_out > 1 ? out[1].dtype : PRT_FLOAT32};
        /* A position costs an exp per class. */
        base_parallel_for(p.N * p.D,
                          p.C > 0 ? (OP_GRAIN_MATH + p.C - 1) / p.C : p.N * p.D,
                          sce_range, &j);
    }
    p.xdt = PRT_FLOAT32;
    return loss_apply(o, &p, ws, x[1], nb_in > 2 ? x[2] : NULL, y[0], out[0].dtype);
}

static const op_class nll_class = {
    .kind = LOSS_NLL,
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(loss_op),
    .alias_input = -1,
    .parse = loss_parse,
    .serialize = loss_serialize,
    .shapes = loss_shapes,
    .infer = loss_infer,
    .run = nll_run,
    .in_dtypes = loss_in_dtypes,
};

static const op_class sce_class = {
    .kind = LOSS_SCE,
    .min_inputs = 2,
    .max_inputs = 3,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(loss_op),
    .alias_input = -1,
    .parse = loss_parse,
    .serialize = loss_serialize,
    .workspace = sce_workspace,
    .run = sce_run,
    .in_dtypes = loss_in_dtypes,
    .nb_outputs = loss_nb_outputs,
    .shapes_n = loss_shapes_n,
    .infer_n = loss_infer_n,
    .out_dtype_n = loss_out_dtype_n,
};

static const prt_field_schema loss_schema[] = {
    {"reduction", PRT_FIELD_CHAR, -1, "none, sum or mean (default)"},
    {"ignore_index", PRT_FIELD_INT32, 1,
     "a target value that contributes nothing (optional)"},
    {"nb_outputs", PRT_FIELD_INT32, 1, "1: loss (default), 2: and log_prob"},
};

const prt_plugin_creator op_nll_loss_creator =
    OP_CREATOR("NegativeLogLikelihoodLoss", nll_class, loss_schema, 2);
const prt_plugin_creator op_sce_loss_creator =
    OP_CREATOR("SoftmaxCrossEntropyLoss", sce_class, loss_schema, 3);

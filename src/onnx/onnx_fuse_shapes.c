/* Static shapes for the fusion planner (onnx_fuse.c): what a value's dims
 * are before any layer exists, as far as the graph alone says, so that a
 * pattern that needs two values of one shape (a residual Add folded into
 * its Conv: no broadcast) can prove it. The models of the zoo declare no
 * value_info, so the dims are propagated from the graph inputs and the
 * initializers through the ops a convolutional network is made of: Conv,
 * the pools, BatchNormalization, the activations and the broadcasting
 * elementwise ops. Anything else is unknown, and an unknown dim never
 * equals another: the fold is then left, never wrong.
 *
 * A dim is a number (>= 0), a symbol (a graph input's dynamic dim: its
 * own, so the batch dim that flows from one input into both operands of an
 * Add is equal to itself) or unknown. */
#include <string.h>

#include "onnx_fuse_facts.h"

/* Dims of a symbol: -(2 + 8 input + dim); FC_DIM_UNKNOWN equals nothing. */
#define FC_DIM_UNKNOWN INT64_MIN

typedef struct fc_sdims {
    int32_t state; /* 0 not computed, 1 computing, 2 known, 3 unknown */
    int32_t rank;
    int64_t d[PRT_MAX_DIMS];
} fc_sdims;

static int fc_sdims_of(const fuse_ctx *c, const char *name, fc_sdims *memo,
                       fc_sdims *out);

static int fc_sd_known(int64_t d)
{
    return d != FC_DIM_UNKNOWN;
}

/* An ints attribute of at most max values: the count, or -1 when absent,
 * -2 when malformed. */
static int fc_sd_ints(const Onnx__NodeProto *n, const char *name, int64_t *v, int max)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    if (!a)
        return -1;
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints > (size_t)max)
        return -2;
    for (size_t k = 0; k < a->n_ints; k++)
        v[k] = a->ints[k];
    return (int)a->n_ints;
}

static int64_t fc_sd_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : dflt;
}

/* A graph input's declared dims or an initializer's. */
static int fc_sd_declared(const fuse_ctx *c, const char *name, fc_sdims *o)
{
    const Onnx__GraphProto *g = c->imp->graph;
    const Onnx__TensorProto *tp = fc_const_proto(c, name);
    if (tp) {
        if (tp->n_dims > PRT_MAX_DIMS)
            return 0;
        o->rank = (int32_t)tp->n_dims;
        for (size_t k = 0; k < tp->n_dims; k++)
            o->d[k] = tp->dims[k];
        return 1;
    }
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        const Onnx__TensorShapeProto *s;
        if (strcmp(onnx_str(vi->name), name) != 0 || !vi->type ||
            vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !vi->type->tensor_type || !vi->type->tensor_type->shape)
            return 0;
        s = vi->type->tensor_type->shape;
        if (s->n_dim > PRT_MAX_DIMS)
            return 0;
        o->rank = (int32_t)s->n_dim;
        for (size_t i = 0; i < s->n_dim; i++) {
            const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
            o->d[i] =
                d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                        d->dim_value >= 0
                    ? d->dim_value
                    : -(int64_t)(2 + 8 * k + i);
        }
        return 1;
    }
    return 0;
}

/* Numpy broadcasting of a and b into a. */
static int fc_sd_broadcast(fc_sdims *a, const fc_sdims *b)
{
    fc_sdims r;
    r.rank = a->rank > b->rank ? a->rank : b->rank;
    for (int32_t i = 0; i < r.rank; i++) {
        const int32_t ia = i - (r.rank - a->rank), ib = i - (r.rank - b->rank);
        const int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
        if (x == y || y == 1)
            r.d[i] = x;
        else if (x == 1)
            r.d[i] = y;
        else if (x >= 0 && y >= 0)
            return 0; /* not broadcastable: the import will say so */
        else
            r.d[i] = FC_DIM_UNKNOWN;
    }
    *a = r;
    return 1;
}

/* Conv's and the pools' output: X's batch, `m` channels, each spatial dim
 * from the window (ops_nn.h's rules; ceil for a pool's ceil_mode). */
static int fc_sd_window(const Onnx__NodeProto *n, const fc_sdims *x, const int64_t *k,
                        int64_t m, int ceil_mode, fc_sdims *o)
{
    const int32_t ns = x->rank - 2;
    const Onnx__AttributeProto *ap = onnx_node_attr(n, "auto_pad");
    int64_t s[PRT_MAX_DIMS], dl[PRT_MAX_DIMS], p[2 * PRT_MAX_DIMS];
    int same = 0;
    if (ns < 1 || ns > 3)
        return 0;
    if (ap) {
        /* ap->s is bytes, not a C string. */
        same = ap->s.len >= 4 && memcmp(ap->s.data, "SAME", 4) == 0;
        if (!same && !(ap->s.len == 5 && memcmp(ap->s.data, "VALID", 5) == 0) &&
            !(ap->s.len == 6 && memcmp(ap->s.data, "NOTSET", 6) == 0) && ap->s.len != 0)
            return 0;
    }
    for (int32_t i = 0; i < ns; i++)
        s[i] = dl[i] = 1;
    for (int32_t i = 0; i < 2 * ns; i++)
        p[i] = 0;
    if (fc_sd_ints(n, "strides", s, ns) == -2 ||
        fc_sd_ints(n, "dilations", dl, ns) == -2 ||
        fc_sd_ints(n, "pads", p, 2 * ns) == -2)
        return 0;
    o->rank = x->rank;
    o->d[0] = x->d[0];
    o->d[1] = m;
    for (int32_t i = 0; i < ns; i++) {
        const int64_t d = x->d[2 + i];
        int64_t num;
        if (d < 0 || s[i] < 1 || dl[i] < 1 || k[i] < 1) {
            o->d[2 + i] = FC_DIM_UNKNOWN;
            continue;
        }
        if (same) {
            o->d[2 + i] = (d + s[i] - 1) / s[i];
            continue;
        }
        num = d + p[i] + p[ns + i] - dl[i] * (k[i] - 1) - 1;
        if (num < 0)
            return 0;
        o->d[2 + i] = (ceil_mode ? (num + s[i] - 1) / s[i] : num / s[i]) + 1;
    }
    return 1;
}

static const char *const fc_sd_same_ops[] = {
    "Relu",     "LeakyRelu", "Clip",  "Sigmoid", "HardSigmoid", "HardSwish",
    "Tanh",     "Identity",  "Elu",   "Selu",    "Softplus",    "Neg",
    "Abs",      "Exp",       "Erf",   "Sqrt",    "Dropout",     "BatchNormalization",
    "Cast",     "Gelu",      "Mish",  "Softmax", "Reciprocal",  "InstanceNormalization",
    "Softsign", "Sign",      "Floor", "Ceil",    "Round",       "LRN"};
static const char *const fc_sd_bcast_ops[] = {"Add", "Sub", "Mul", "Div",
                                              "Pow", "Max", "Min", "Sum"};

/* Node n's first output. */
static int fc_sd_node(const fuse_ctx *c, const Onnx__NodeProto *n, fc_sdims *memo,
                      fc_sdims *o)
{
    const char *op = onnx_str(n->op_type);
    fc_sdims x, w;
    if (n->n_input < 1 || !onnx_node_input(n, 0)[0] ||
        !fc_sdims_of(c, onnx_node_input(n, 0), memo, &x))
        return 0;
    for (size_t k = 0; k < sizeof fc_sd_same_ops / sizeof *fc_sd_same_ops; k++)
        if (strcmp(op, fc_sd_same_ops[k]) == 0) {
            *o = x;
            return 1;
        }
    for (size_t k = 0; k < sizeof fc_sd_bcast_ops / sizeof *fc_sd_bcast_ops; k++)
        if (strcmp(op, fc_sd_bcast_ops[k]) == 0) {
            for (size_t i = 1; i < n->n_input; i++)
                if (!fc_sdims_of(c, onnx_node_input(n, i), memo, &w) ||
                    !fc_sd_broadcast(&x, &w))
                    return 0;
            *o = x;
            return 1;
        }
    if (strcmp(op, "Conv") == 0) {
        int64_t k[PRT_MAX_DIMS];
        if (n->n_input < 2 || !fc_sdims_of(c, onnx_node_input(n, 1), memo, &w) ||
            w.rank != x.rank || w.d[0] < 0)
            return 0;
        for (int32_t i = 2; i < w.rank; i++)
            k[i - 2] = w.d[i];
        return fc_sd_window(n, &x, k, w.d[0], 0, o);
    }
    if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0) {
        int64_t k[PRT_MAX_DIMS];
        if (n->n_output != 1 || x.rank < 3 ||
            fc_sd_ints(n, "kernel_shape", k, x.rank - 2) != x.rank - 2)
            return 0;
        return fc_sd_window(n, &x, k, x.d[1], fc_sd_int(n, "ceil_mode", 0) != 0, o);
    }
    if (strcmp(op, "GlobalAveragePool") == 0 || strcmp(op, "GlobalMaxPool") == 0) {
        *o = x;
        for (int32_t i = 2; i < o->rank; i++)
            o->d[i] = 1;
        return x.rank >= 3;
    }
    return 0;
}

static int fc_sdims_of(const fuse_ctx *c, const char *name, fc_sdims *memo, fc_sdims *out)
{
    const int32_t pos = fc_get(&c->producer, name);
    fc_sdims *m;
    if (pos < 0)
        return fc_sd_declared(c, name, out);
    m = &memo[pos];
    if (m->state == 0) {
        const Onnx__NodeProto *n = fc_node(c, pos);
        m->state = 1; /* a cycle (a malformed graph) reads as unknown */
        m->state = strcmp(fc_out(n), name) == 0 && fc_sd_node(c, n, memo, m) ? 2 : 3;
    }
    if (m->state != 2)
        return 0;
    *out = *m;
    return 1;
}

int fc_same_static_shape(fuse_ctx *c, const char *a, const char *b)
{
    fc_sdims x, y;
    if (!c->sdims)
        c->sdims = onnx_calloc((size_t)c->n + 1, sizeof(fc_sdims));
    if (!c->sdims || !fc_sdims_of(c, a, c->sdims, &x) ||
        !fc_sdims_of(c, b, c->sdims, &y) || x.rank != y.rank)
        return 0;
    for (int32_t i = 0; i < x.rank; i++)
        if (!fc_sd_known(x.d[i]) || x.d[i] != y.d[i])
            return 0;
    return 1;
}

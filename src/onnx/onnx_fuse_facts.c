/* The shape facts the Attention fusion proves its rank-3 form with
 * (onnx_fuse.c's header, fc_attention): what is known of each value's
 * shape from the graph alone, before any layer exists, computed forward
 * over the nodes in order (fc_fact_node), and the entries of the Reshape
 * shapes the head split and merge read (fc_shape_entries,
 * fc_entry_keeps). Only facts that hold for every input the graph accepts
 * are stated; an unknown is "no fact", which leaves the pattern. */
#include <string.h>

#include "onnx_fuse_facts.h"

/* The integers of a constant (an int64 or int32 tensor of at most max
 * elements): their count, else -1. */
int fc_ints(const fuse_ctx *c, const char *name, int64_t *v, int max)
{
    const Onnx__TensorProto *tp = fc_const_proto(c, name);
    onnx_tensor t;
    int nb = -1;
    if (!tp || onnx_tensor_load(tp, c->imp->base_dir, name, &t) != PRT_OK) {
        prt_clear_error(); /* not a constant we can use */
        return -1;
    }
    if ((t.dtype == PRT_INT64 || t.dtype == PRT_INT32) && t.dims.nb_dims <= 1 &&
        t.bytes / prt_dtype_size(t.dtype) <= (size_t)max) {
        nb = (int)(t.bytes / prt_dtype_size(t.dtype));
        for (int k = 0; k < nb; k++)
            v[k] = onnx_tensor_int(&t, (size_t)k);
    }
    onnx_tensor_free(&t);
    return nb;
}

/* The facts a graph input, value_info entry or initializer states. */
static int fc_declared(const fuse_ctx *c, const char *name, fc_fact *o)
{
    const Onnx__GraphProto *g = c->imp->graph;
    const Onnx__TypeProto__Tensor *tt = NULL;
    const Onnx__TensorProto *tp = fc_const_proto(c, name);
    if (tp) {
        /* A scalar constant counts as rank 1 of one element (rank 0 means
         * unknown here): broadcasting it changes nothing either way. */
        o->rank = tp->n_dims > 0 ? (int32_t)tp->n_dims : 1;
        o->last = tp->n_dims > 0 ? tp->dims[tp->n_dims - 1] : 1;
        o->lead = name;
        o->pre = NULL;
        return 1;
    }
    for (size_t k = 0; k < g->n_input + g->n_value_info && !tt; k++) {
        const Onnx__ValueInfoProto *vi =
            k < g->n_input ? g->input[k] : g->value_info[k - g->n_input];
        /* TypeProto's value is a oneof: tensor_type means something only
         * for a tensor (an optional's or a sequence's type shares its
         * storage). */
        if (strcmp(onnx_str(vi->name), name) == 0 && vi->type &&
            vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
            vi->type->tensor_type && vi->type->tensor_type->shape)
            tt = vi->type->tensor_type;
    }
    if (!tt || tt->shape->n_dim == 0)
        return 0;
    {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[tt->shape->n_dim - 1];
        o->rank = (int32_t)tt->shape->n_dim;
        o->last = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                          d->dim_value > 0
                      ? d->dim_value
                      : -1;
        o->lead = name;
        o->pre = NULL;
    }
    return 1;
}

/* What is known of `name`'s shape: 1 and *o, else 0. */
int fc_fact_of(const fuse_ctx *c, const char *name, fc_fact *o)
{
    int32_t pos = fc_get(&c->producer, name);
    const Onnx__NodeProto *n = pos >= 0 ? fc_node(c, pos) : NULL;
    o->rank = 0;
    o->last = -1;
    o->lead = name;
    o->pre = NULL;
    if (!n)
        return fc_declared(c, name, o);
    if (strcmp(onnx_str(n->op_type), "Split") == 0 && n->n_input >= 1) {
        /* Output k of a Split on the last axis: sizes from the constant
         * 'split' input, or equal parts of a known last dim. */
        const Onnx__AttributeProto *ax = onnx_node_attr(n, "axis");
        int64_t sz[16];
        size_t k;
        int nb;
        fc_fact in;
        for (k = 0; k < n->n_output && strcmp(onnx_str(n->output[k]), name) != 0; k++)
            ;
        if (!fc_fact_of(c, onnx_node_input(n, 0), &in) || in.rank < 1 || k == n->n_output)
            return fc_declared(c, name, o);
        *o = in;
        o->lead = in.lead;
        if (!ax || (ax->i != -1 && ax->i != in.rank - 1)) {
            o->last = in.last;
            return 1;
        }
        nb = n->n_input > 1 ? fc_ints(c, onnx_node_input(n, 1), sz, 16) : -1;
        o->last = nb == (int)n->n_output ? sz[k]
                  : n->n_input == 1 && in.last > 0 && in.last % (int64_t)n->n_output == 0
                      ? in.last / (int64_t)n->n_output
                      : -1;
        return 1;
    }
    if (n->n_output < 1 || strcmp(onnx_str(n->output[0]), name) != 0 ||
        c->facts[pos].rank == 0)
        return fc_declared(c, name, o);
    *o = c->facts[pos];
    return 1;
}

/* `name` made by Shape(t, start = k, end = k + 1), the dynamo export's
 * x.size(k): 1 and *e, dim k of t; else 0. */
static int fc_size_entry(const fuse_ctx *c, const char *name, fc_entry *e)
{
    int32_t pos = fc_get(&c->producer, name);
    const Onnx__NodeProto *n = pos >= 0 ? fc_node(c, pos) : NULL;
    const Onnx__AttributeProto *st, *en;
    if (!n || strcmp(onnx_str(n->op_type), "Shape") != 0 || n->n_input != 1)
        return 0;
    st = onnx_node_attr(n, "start");
    en = onnx_node_attr(n, "end");
    if (!st || !en || n->n_attribute != 2 || st->i < 0 || en->i != st->i + 1)
        return 0;
    *e = (fc_entry){2, st->i, onnx_node_input(n, 0)};
    return 1;
}

/* The entries of a Reshape's shape: a constant, or a Concat (axis 0) of
 * constants and Unsqueeze(Gather(Shape(t), constant k)), PyTorch's
 * x.size(k). Their count (at most max), else -1. */
int fc_shape_entries(const fuse_ctx *c, const char *name, fc_entry *e, int max)
{
    int64_t v[8];
    int nb = fc_ints(c, name, v, 8), total = 0;
    int32_t pos = fc_get(&c->producer, name);
    const Onnx__NodeProto *n;
    const Onnx__AttributeProto *ax;
    if (nb >= 0) {
        if (nb > max)
            return -1;
        for (int k = 0; k < nb; k++)
            e[k] = (fc_entry){1, v[k], NULL};
        return nb;
    }
    if (pos < 0 || strcmp(onnx_str(fc_node(c, pos)->op_type), "Concat") != 0)
        return -1;
    n = fc_node(c, pos);
    ax = onnx_node_attr(n, "axis");
    if (!ax || ax->i != 0)
        return -1;
    for (size_t k = 0; k < n->n_input; k++) {
        const char *in = onnx_node_input(n, k);
        int32_t u = fc_get(&c->producer, in), g, s;
        const Onnx__NodeProto *un = u >= 0 ? fc_node(c, u) : NULL, *gn;
        int64_t idx;
        nb = fc_ints(c, in, v, 8);
        if (nb >= 0) {
            if (total + nb > max)
                return -1;
            for (int j = 0; j < nb; j++)
                e[total++] = (fc_entry){1, v[j], NULL};
            continue;
        }
        if (fc_size_entry(c, in, &e[total])) {
            if (total >= max)
                return -1;
            total++;
            continue;
        }
        if (!un || strcmp(onnx_str(un->op_type), "Unsqueeze") != 0 || total >= max)
            return -1;
        g = fc_get(&c->producer, onnx_node_input(un, 0));
        gn = g >= 0 ? fc_node(c, g) : NULL;
        if (!gn || strcmp(onnx_str(gn->op_type), "Gather") != 0 || gn->n_input != 2)
            return -1;
        s = fc_get(&c->producer, onnx_node_input(gn, 0));
        /* A scalar index: the Gather gives one element, the Unsqueeze a
         * vector of one. */
        if (s < 0 || strcmp(onnx_str(fc_node(c, s)->op_type), "Shape") != 0 ||
            fc_node(c, s)->n_attribute != 0 ||
            !fc_const_proto(c, onnx_node_input(gn, 1)) ||
            fc_const_proto(c, onnx_node_input(gn, 1))->n_dims != 0 ||
            fc_ints(c, onnx_node_input(gn, 1), &idx, 1) != 1 || idx < 0)
            return -1;
        e[total++] = (fc_entry){2, idx, onnx_node_input(fc_node(c, s), 0)};
    }
    return total;
}

/* Entry k of a Reshape of x is x's own dim k: a 0 (ONNX copies the dim
 * when allowzero is 0, which `zero_copies` says), the size k of a value of
 * x's rank whose dims but the last are x's, or the size k of x's pre. */
int fc_entry_keeps(const fuse_ctx *c, const fc_entry *e, int64_t k, const fc_fact *x,
                   int zero_copies)
{
    fc_fact t;
    if (e->kind == 1)
        return e->v == 0 && zero_copies;
    if (e->kind != 2 || e->v != k || k >= x->rank - 1)
        return 0;
    if (x->pre && strcmp(e->t, x->pre) == 0)
        return 1;
    return fc_fact_of(c, e->t, &t) && t.rank == x->rank && strcmp(t.lead, x->lead) == 0;
}

/* The facts of node pos's first output, from its inputs' (in order). */
void fc_fact_node(fuse_ctx *c, int32_t pos)
{
    const Onnx__NodeProto *n = fc_node(c, pos);
    const char *op = onnx_str(n->op_type), *y = fc_out(n);
    fc_fact a, b, *o = &c->facts[pos];
    o->rank = 0;
    o->last = -1;
    o->lead = y;
    o->pre = NULL;
    if (!y[0])
        return;
    if (n->n_input < 1 || !fc_fact_of(c, onnx_node_input(n, 0), &a)) {
        a.rank = 0; /* unknown: the rules below that need it check */
        a.last = -1;
        a.lead = y;
        a.pre = NULL;
    }
    if (!strcmp(op, "Relu") || !strcmp(op, "Gelu") || !strcmp(op, "Erf") ||
        !strcmp(op, "Tanh") || !strcmp(op, "Sigmoid") || !strcmp(op, "Cast") ||
        !strcmp(op, "Identity") || !strcmp(op, "Sqrt") || !strcmp(op, "Neg") ||
        !strcmp(op, "Softmax") || !strcmp(op, "Dropout") ||
        !strcmp(op, "LayerNormalization") || !strcmp(op, "SkipLayerNormalization")) {
        *o = a;
    } else if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
               !strcmp(op, "Div") || !strcmp(op, "Pow") || !strcmp(op, "Equal") ||
               !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "And") ||
               !strcmp(op, "Or") || !strcmp(op, "Where")) {
        /* Broadcast, input by input: a side of rank 1 (a bias) changes
         * only the last dim; two sides of one rank keep their dims when
         * they share them. */
        *o = a;
        for (size_t k = 1; k < n->n_input && o->rank; k++) {
            const fc_fact *big, *small;
            fc_fact r;
            if (!fc_fact_of(c, onnx_node_input(n, k), &b) || !b.rank) {
                o->rank = 0;
                break;
            }
            big = o->rank >= b.rank ? o : &b;
            small = o->rank >= b.rank ? &b : o;
            r.rank = big->rank;
            /* a dim broadcast with a known one above 1 is that one */
            r.last = big->last > 1 && small->last > 1
                         ? (big->last == small->last ? big->last : -1)
                     : big->last > 1                      ? big->last
                     : small->last > 1                    ? small->last
                     : big->last == 1 && small->last == 1 ? 1
                                                          : -1;
            r.lead = small->rank == 1 || strcmp(o->lead, b.lead) == 0 ? big->lead : y;
            r.pre = strcmp(r.lead, y) != 0 ? big->pre : NULL;
            *o = r;
        }
        if (!o->rank)
            o->last = -1, o->lead = y, o->pre = NULL;
    } else if (!strcmp(op, "Shape") && n->n_attribute == 0) {
        o->rank = 1;
        o->last = a.rank;
    } else if (!strcmp(op, "ConstantOfShape") && a.rank == 1) {
        o->rank = (int32_t)a.last; /* 0 when unknown */
    } else if (!strcmp(op, "GatherElements") && n->n_input == 2) {
        if (fc_fact_of(c, onnx_node_input(n, 1), &b))
            o->rank = b.rank, o->last = b.last;
    } else if (!strcmp(op, "Concat") && a.rank == 1 && onnx_node_attr(n, "axis") &&
               onnx_node_attr(n, "axis")->i == 0) {
        o->rank = 1;
        o->last = 0;
        for (size_t k = 0; k < n->n_input && o->last >= 0; k++)
            o->last =
                fc_fact_of(c, onnx_node_input(n, k), &b) && b.rank == 1 && b.last >= 0
                    ? o->last + b.last
                    : -1;
    } else if (!strcmp(op, "Concat") && onnx_node_attr(n, "axis")) {
        /* Along another axis than the last (ViT's class token before its
         * patches): the inputs' rank, which ONNX makes one, and their last
         * dim, which they share. The other dims add up: no lead. */
        int64_t ax = onnx_node_attr(n, "axis")->i;
        for (size_t k = 0; k < n->n_input; k++)
            if (fc_fact_of(c, onnx_node_input(n, k), &b) && b.rank > 1) {
                o->rank = o->rank ? o->rank : b.rank;
                o->last = o->last > 0 ? o->last : b.last;
            }
        if (ax < 0)
            ax += o->rank;
        if (ax < 0 || ax >= o->rank - 1)
            o->rank = 0, o->last = -1;
    } else if (!strcmp(op, "MatMul") && n->n_input == 2 &&
               fc_fact_of(c, onnx_node_input(n, 1), &b) && b.rank == 2 && a.rank >= 2) {
        *o = a;
        o->last = b.last;
    } else if (!strcmp(op, "Gather") && n->n_input == 2 && a.rank == 2 &&
               fc_fact_of(c, onnx_node_input(n, 1), &b) && b.rank > 0 &&
               (!onnx_node_attr(n, "axis") || onnx_node_attr(n, "axis")->i == 0)) {
        /* An embedding: the indices' dims, then the table's rows. */
        o->rank = b.rank + 1;
        o->last = a.last;
    } else if (!strcmp(op, "Unsqueeze") && n->n_input == 2) {
        /* An element of a vector (a Gather of a scalar constant index)
         * made a vector of one: x.size(k) in a shape */
        int32_t g = fc_get(&c->producer, onnx_node_input(n, 0));
        const Onnx__NodeProto *gn = g >= 0 ? fc_node(c, g) : NULL;
        const Onnx__TensorProto *ix =
            gn && gn->n_input == 2 && !strcmp(onnx_str(gn->op_type), "Gather")
                ? fc_const_proto(c, onnx_node_input(gn, 1))
                : NULL;
        int64_t axes[2];
        if (ix && ix->n_dims == 0 && fc_fact_of(c, onnx_node_input(gn, 0), &b) &&
            b.rank == 1 && fc_ints(c, onnx_node_input(n, 1), axes, 2) == 1 &&
            (axes[0] == 0 || axes[0] == -1)) {
            o->rank = 1;
            o->last = 1;
        }
    } else if (!strcmp(op, "Slice")) {
        o->rank = a.rank; /* the dims change, not their count */
    } else if (!strcmp(op, "Expand") && n->n_input == 2) {
        /* rank max(x's, the shape's length) */
        if (fc_fact_of(c, onnx_node_input(n, 1), &b) && b.rank == 1 && b.last > 0 &&
            a.rank)
            o->rank = b.last > a.rank ? (int32_t)b.last : a.rank;
    } else if (!strcmp(op, "Reshape") && n->n_input == 2) {
        fc_entry e[8];
        int nb = fc_shape_entries(c, onnx_node_input(n, 1), e, 8), keep = nb >= 2;
        const Onnx__AttributeProto *az = onnx_node_attr(n, "allowzero");
        int zero_copies = !az || az->i == 0, pre = nb >= 2;
        if (nb == 1 && e[0].kind == 1 && e[0].v == -1 && a.rank == 1) {
            *o = a; /* a flat vector stays itself */
            o->lead = y;
            o->pre = NULL;
            return;
        }
        if (nb < 1)
            return;
        o->rank = nb;
        o->last = e[nb - 1].kind == 1 && e[nb - 1].v > 0 ? e[nb - 1].v : -1;
        /* The dims but the last are x's (entries 0), or those of one value
         * of rank nb (its sizes): its lead. */
        for (int k = 0; k + 1 < nb && keep; k++) {
            const char *lead = NULL;
            if (e[k].kind == 1 && e[k].v == 0 && zero_copies && a.rank == nb)
                lead = a.lead;
            else if (e[k].kind == 2 && e[k].v == k && fc_fact_of(c, e[k].t, &b) &&
                     b.rank == nb)
                lead = b.lead;
            keep = lead && (k == 0 || strcmp(lead, o->lead) == 0);
            o->lead = lead ? lead : y;
        }
        if (!keep)
            o->lead = y;
        /* Or they are the sizes 0 .. nb - 2 of one value of rank nb - 1:
         * its pre. */
        for (int k = 0; k + 1 < nb && pre; k++)
            pre = e[k].kind == 2 && e[k].v == k && strcmp(e[k].t, e[0].t) == 0;
        if (pre && fc_fact_of(c, e[0].t, &b) && b.rank == nb - 1)
            o->pre = e[0].t;
    } else if (!strcmp(op, "Transpose") && a.rank > 0) {
        int64_t p[5];
        int r = fc_perm(c, pos, p);
        o->rank = r == a.rank ? a.rank : 0;
        o->last = r == a.rank && p[r - 1] == r - 1 ? a.last : -1;
    } else {
        fc_declared(c, y, o);
    }
}

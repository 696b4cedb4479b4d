/* 8-bit elementwise chains as one LookupTable8 (issue 30).
 *
 * A chain starts at a DequantizeLinear of an 8-bit x that is no constant,
 * goes through float elementwise built-ins and inner Q -> DQ pairs, and
 * ends in one QuantizeLinear:
 *
 *   a = DQ(x); y = Q(f(a))   e.g. efficientnet's quantized SiLU,
 *                            Q(Mul(a, DQ(Q(Sigmoid(a))))), or Q(HardSwish(a))
 *
 * Every value inside is read by chain nodes alone and is no graph output,
 * every node's inputs are chain values or constants (a unary op's input 0
 * a chain value; a binary op's operands chain values or rank-0 one-element
 * constants, at least one a chain value; Clip's bounds and every Q/DQ's
 * scale and zero point one-element constants): then y[i] depends on the
 * one byte x[i] alone, and the chain is a table of 256 bytes. A Q or DQ
 * with per-axis (or blocked) scales gives each channel its own function:
 * no fold, and an info line says so.
 *
 * The table is made by the chain's own layers: its nodes are imported as
 * the importer would import them unfused, into a network of their own whose
 * input is the 256 bytes 0..255, built and run on the CPU (qlut_table). So
 * the table holds, bit for bit, what the unfused layers compute for each
 * byte, whatever the ops, their rounding or their saturation. Where that
 * network cannot give the table (x's dtype unknown or not 8 bits, a layer
 * that the CPU refuses), the chain is imported unfused instead, with an
 * info line saying why.
 *
 * The chain's layer is added at its Q's position in the topological order
 * (x is there by then; nothing outside reads the values inside), named
 * after its first DQ, its output carrying the Q's output name. Planned
 * before onnx_fuse.c's patterns (onnx_parser.c), whose ElementwiseChain or
 * GELU would otherwise take a chain's float nodes and leave the Q/DQ pairs
 * around them.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* Nodes in one chain, and nodes looked at from one DQ (the chain and the
 * readers past its Q that the search walks into before it picks the Q). */
#define QLUT_MAX_NODES 16
#define QLUT_MAX_SEEN 32

typedef struct qlut_chain {
    int32_t nb;
    int32_t pos[QLUT_MAX_NODES]; /* order positions, ascending: the DQ first,
                                    the Q last */
} qlut_chain;

struct onnx_qluts {
    int32_t *role; /* per order position, as onnx_qlut_role says */
    qlut_chain *c;
    int32_t nb;
};

typedef struct qlut_ctx {
    onnx_import *imp;
    const int32_t *order;
    const onnx_choice *choices;
    int32_t n;
    onnx_names producer; /* output name of a one-output node -> its position */
    int32_t *head;       /* per position: its output's first reader edge, -1 */
    int32_t *next;       /* per edge: the next edge reading the same value */
    int32_t *reader;     /* per edge: the reading node's position */
    uint8_t *is_output;  /* per position: its output is a graph output */
    uint8_t *taken;      /* per position: in a chain already */
} qlut_ctx;

/* Elementwise built-ins of one float input (Clip's bounds aside). */
static const char *const qlut_unary[] = {
    "Abs",      "Ceil",      "Celu",     "Clip",   "Cos",         "Elu",
    "Erf",      "Exp",       "Floor",    "Gelu",   "HardSigmoid", "HardSwish",
    "Identity", "LeakyRelu", "Log",      "Mish",   "Neg",         "Reciprocal",
    "Relu",     "Round",     "Selu",     "Shrink", "Sigmoid",     "Sign",
    "Sin",      "Softplus",  "Softsign", "Sqrt",   "Tanh",        "ThresholdedRelu"};
/* Elementwise built-ins of two inputs, which broadcast. */
static const char *const qlut_binary[] = {"Add", "Sub", "Mul", "Div",
                                          "Pow", "Max", "Min", "PRelu"};

enum { QL_NO, QL_UNARY, QL_BINARY, QL_Q, QL_DQ };

static const Onnx__NodeProto *ql_node(const qlut_ctx *c, int32_t pos)
{
    return c->imp->graph->node[c->order[pos]];
}

static int ql_in(const char *op, const char *const *set, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(op, set[k]) == 0)
            return 1;
    return 0;
}

/* What the node at pos is to a chain: QL_NO unless the importer makes it
 * the built-in of its own name, with one output. */
static int ql_kind(const qlut_ctx *c, int32_t pos)
{
    const Onnx__NodeProto *n = ql_node(c, pos);
    const prt_plugin_creator *cr = c->choices[pos].creator;
    const char *op = onnx_str(n->op_type);
    if (!cr || c->taken[pos] || n->n_output != 1 || !onnx_str(n->output[0])[0] ||
        strcmp(cr->plugin_namespace, PRT_BUILTIN_NAMESPACE) != 0 ||
        strcmp(cr->name, op) != 0)
        return QL_NO;
    if (strcmp(op, "QuantizeLinear") == 0)
        return QL_Q;
    if (strcmp(op, "DequantizeLinear") == 0)
        return QL_DQ;
    if (ql_in(op, qlut_unary, sizeof qlut_unary / sizeof *qlut_unary))
        return QL_UNARY;
    if (ql_in(op, qlut_binary, sizeof qlut_binary / sizeof *qlut_binary))
        return QL_BINARY;
    return QL_NO;
}

/* A constant's element count and rank (an initializer or a Constant node's
 * value): 1, else 0 (not a constant). */
static int ql_const(const qlut_ctx *c, const char *name, int64_t *count, int32_t *rank)
{
    const Onnx__TensorProto *t = NULL;
    const onnx_value *v;
    int32_t pos;
    if (onnx_names_get(&c->producer, name, &pos) == 0) {
        const Onnx__NodeProto *n = ql_node(c, pos);
        const Onnx__AttributeProto *a = n->n_attribute == 1 ? n->attribute[0] : NULL;
        if (strcmp(onnx_str(n->op_type), "Constant") != 0 || !a)
            return 0;
        switch (a->type) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
            *count = 1;
            *rank = 0;
            return 1;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
            *count = (int64_t)a->n_floats;
            *rank = 1;
            return 1;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
            *count = (int64_t)a->n_ints;
            *rank = 1;
            return 1;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
            t = a->t;
            break;
        default:
            return 0;
        }
    } else if ((v = onnx_value_find(c->imp, name)) != NULL &&
               v->kind == ONNX_VALUE_CONSTANT) {
        t = v->init;
    }
    if (!t)
        return 0;
    *count = 1;
    for (size_t k = 0; k < t->n_dims; k++)
        *count *= t->dims[k] > 0 ? t->dims[k] : 0;
    *rank = (int32_t)t->n_dims;
    return 1;
}

static int ql_member(const int32_t *m, int32_t nb, int32_t pos)
{
    for (int32_t k = 0; k < nb; k++)
        if (m[k] == pos)
            return 1;
    return 0;
}

/* The member producing `name`, or -1. */
static int32_t ql_from(const qlut_ctx *c, const int32_t *m, int32_t nb, const char *name)
{
    int32_t pos;
    return name[0] && onnx_names_get(&c->producer, name, &pos) == 0 &&
                   ql_member(m, nb, pos)
               ? pos
               : -1;
}

/* Whether the node at pos can join members m[0..nb): 0 no, 1 yes, 2 yes
 * but a Q or DQ of per-axis scales (*why says which). */
static int ql_join(const qlut_ctx *c, int32_t pos, const int32_t *m, int32_t nb)
{
    const Onnx__NodeProto *n = ql_node(c, pos);
    const int kind = ql_kind(c, pos);
    int from_chain = 0, per_axis = 0;
    if (kind == QL_NO)
        return 0;
    if ((kind == QL_UNARY && n->n_input != 1 &&
         strcmp(onnx_str(n->op_type), "Clip") != 0) ||
        (kind == QL_BINARY && n->n_input != 2) || n->n_input < 1 || n->n_input > 3)
        return 0;
    for (size_t k = 0; k < n->n_input; k++) {
        const char *in = onnx_node_input(n, k);
        int64_t count;
        int32_t rank;
        if (ql_from(c, m, nb, in) >= 0) {
            /* a chain value: a binary op's operand or any op's input 0 */
            if (k > 0 && kind != QL_BINARY)
                return 0;
            from_chain = 1;
            continue;
        }
        if (k == 0 && kind != QL_BINARY)
            return 0;
        if (!in[0]) {
            /* an omitted optional input: Clip's bounds, a zero point */
            if (kind == QL_BINARY || (kind != QL_UNARY && k == 1))
                return 0;
            continue;
        }
        if (!ql_const(c, in, &count, &rank))
            return 0;
        if (kind == QL_Q || kind == QL_DQ) {
            /* scale and zero point: per tensor ([] or [1]) or per axis */
            if (count != 1)
                per_axis = 1;
            else if (rank > 1)
                return 0;
        } else if (count != 1 || rank != 0) {
            /* a rank-0 scalar leaves x's shape as it is */
            return 0;
        }
    }
    if (!from_chain)
        return 0;
    return per_axis ? 2 : 1;
}

/* The nodes from which `t` is reached through members' values, t among
 * them, into s[] in ascending position; their count, or -1 past the limit. */
static int32_t ql_back(const qlut_ctx *c, const int32_t *m, int32_t nb, int32_t t,
                       int32_t *s)
{
    int32_t ns = 1;
    s[0] = t;
    for (int32_t i = 0; i < ns; i++) {
        const Onnx__NodeProto *n = ql_node(c, s[i]);
        for (size_t k = 0; k < n->n_input; k++) {
            int32_t p = ql_from(c, m, nb, onnx_node_input(n, k));
            if (p < 0 || ql_member(s, ns, p))
                continue;
            if (ns == QLUT_MAX_NODES)
                return -1;
            s[ns++] = p;
        }
    }
    for (int32_t i = 1; i < ns; i++) /* insertion sort: a few nodes */
        for (int32_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            int32_t tmp = s[j];
            s[j] = s[j - 1];
            s[j - 1] = tmp;
        }
    return ns;
}

/* Whether s[0..ns) is a chain ending in s[ns - 1]: no value but the last
 * read outside it or a graph output, and one float op at least. */
static int ql_closed(const qlut_ctx *c, const int32_t *s, int32_t ns)
{
    int float_op = 0;
    for (int32_t i = 0; i < ns; i++) {
        const int kind = ql_kind(c, s[i]);
        float_op |= kind == QL_UNARY || kind == QL_BINARY;
        if (i == ns - 1)
            break;
        if (c->is_output[s[i]])
            return 0;
        for (int32_t e = c->head[s[i]]; e >= 0; e = c->next[e])
            if (!ql_member(s, ns, c->reader[e]))
                return 0;
    }
    return float_op;
}

/* "DequantizeLinear -> Sigmoid -> ..." of a chain's nodes into buf. */
static void ql_path(const qlut_ctx *c, const int32_t *s, int32_t ns, char *buf,
                    size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (int32_t i = 0; i < ns && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? " -> " : "",
                               onnx_str(ql_node(c, s[i])->op_type));
}

/* The chain from the DQ at d, into *ch: 1, else 0. The search takes in
 * every node that can join (ql_join) reachable from d, then picks the
 * latest Q that closes a chain (the longest: DQ -> Relu -> Q -> DQ -> Clip
 * -> Q is one table, not two). */
static int ql_find(qlut_ctx *c, int32_t d, qlut_chain *ch)
{
    int32_t m[QLUT_MAX_SEEN], nb = 1, per_axis = 0;
    int32_t s[QLUT_MAX_NODES];
    const Onnx__NodeProto *dq = ql_node(c, d);
    int64_t count;
    int32_t rank;
    if (ql_kind(c, d) != QL_DQ || dq->n_input < 2 || dq->n_input > 3)
        return 0;
    /* x is a node's output or a graph input: a DQ of a constant is a constant */
    if (ql_const(c, onnx_node_input(dq, 0), &count, &rank))
        return 0;
    for (size_t k = 1; k < dq->n_input; k++) {
        const char *in = onnx_node_input(dq, k);
        if (!in[0] || !ql_const(c, in, &count, &rank) || rank > 1)
            return 0;
        per_axis |= count != 1;
    }
    m[0] = d;
    for (int32_t i = 0; i < nb; i++)
        for (int32_t e = c->head[m[i]]; e >= 0 && nb < QLUT_MAX_SEEN; e = c->next[e]) {
            const int32_t r = c->reader[e];
            int j;
            if (ql_member(m, nb, r) || (j = ql_join(c, r, m, nb)) == 0)
                continue;
            m[nb++] = r;
        }
    for (int32_t i = 1; i < nb; i++)
        for (int32_t j = i; j > 0 && m[j - 1] < m[j]; j--) {
            int32_t tmp = m[j];
            m[j] = m[j - 1];
            m[j - 1] = tmp;
        }
    /* m descending: the latest Q first */
    for (int32_t i = 0; i < nb; i++) {
        int32_t ns;
        int axis = per_axis;
        if (ql_kind(c, m[i]) != QL_Q)
            continue;
        ns = ql_back(c, m, nb, m[i], s);
        if (ns < 2 || s[0] != d || !ql_closed(c, s, ns))
            continue;
        for (int32_t k = 1; k < ns; k++)
            axis |= ql_join(c, s[k], s, ns) == 2;
        if (axis) {
            char path[512], label[512];
            ql_path(c, s, ns, path, sizeof path);
            onnx_node_label(dq, c->order[d], label, sizeof label);
            onnx_info("%s: %s not folded into a LookupTable8: a Q or DQ in it has "
                      "per-axis scales, so each channel has a table of its own",
                      label, path);
            return 0;
        }
        ch->nb = ns;
        memcpy(ch->pos, s, sizeof *s * (size_t)ns);
        return 1;
    }
    return 0;
}

/* The producer map and the reader lists of one-output nodes. */
static prt_status ql_index(qlut_ctx *c)
{
    const Onnx__GraphProto *g = c->imp->graph;
    size_t edges = 0;
    int32_t e = 0;
    for (int32_t i = 0; i < c->n; i++)
        edges += ql_node(c, i)->n_input;
    if (edges > (size_t)INT32_MAX / 2)
        return PRT_ERR_OUT_OF_MEMORY;
    c->head = onnx_calloc((size_t)c->n + 1, sizeof *c->head);
    c->next = onnx_calloc(edges + 1, sizeof *c->next);
    c->reader = onnx_calloc(edges + 1, sizeof *c->reader);
    c->is_output = onnx_calloc((size_t)c->n + 1, 1);
    c->taken = onnx_calloc((size_t)c->n + 1, 1);
    if (!c->head || !c->next || !c->reader || !c->is_output || !c->taken)
        return PRT_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < c->n; i++) {
        const Onnx__NodeProto *n = ql_node(c, i);
        c->head[i] = -1;
        if (n->n_output == 1 && onnx_str(n->output[0])[0] &&
            onnx_names_put(&c->producer, onnx_str(n->output[0]), i))
            return PRT_ERR_OUT_OF_MEMORY;
    }
    /* reversed, so that each list runs in ascending reader position */
    for (int32_t i = c->n - 1; i >= 0; i--) {
        const Onnx__NodeProto *n = ql_node(c, i);
        for (size_t k = n->n_input; k-- > 0;) {
            int32_t p;
            if (!onnx_node_input(n, k)[0] ||
                onnx_names_get(&c->producer, onnx_node_input(n, k), &p) != 0)
                continue;
            c->reader[e] = i;
            c->next[e] = c->head[p];
            c->head[p] = e++;
        }
    }
    for (size_t k = 0; k < g->n_output; k++) {
        int32_t p;
        if (onnx_names_get(&c->producer, onnx_str(g->output[k]->name), &p) == 0)
            c->is_output[p] = 1;
    }
    return PRT_OK;
}

prt_status onnx_qlut_plan(onnx_import *imp, const int32_t *order, onnx_choice *choices,
                          onnx_qluts **out)
{
    qlut_ctx c;
    onnx_qluts *p;
    prt_status st;
    memset(&c, 0, sizeof c);
    c.imp = imp;
    c.order = order;
    c.choices = choices;
    c.n = (int32_t)imp->graph->n_node;
    *out = NULL;
    p = onnx_calloc(1, sizeof *p);
    if (p) {
        p->role = onnx_calloc((size_t)c.n + 1, sizeof *p->role);
        p->c =
            onnx_calloc((size_t)c.n / 3 + 1, sizeof *p->c); /* 3 nodes a chain at least */
    }
    st = p && p->role && p->c ? ql_index(&c) : PRT_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; !st && i < c.n; i++)
        p->role[i] = -1;
    for (int32_t i = 0; !st && i < c.n; i++) {
        qlut_chain *ch = &p->c[p->nb];
        if (!ql_find(&c, i, ch))
            continue;
        for (int32_t k = 0; k < ch->nb; k++) {
            c.taken[ch->pos[k]] = 1;
            p->role[ch->pos[k]] = -2;
            /* no other fusion takes them (onnx_fuse.c's fc_is) */
            choices[ch->pos[k]].creator = NULL;
        }
        p->role[ch->pos[ch->nb - 1]] = p->nb++;
    }
    onnx_names_free(&c.producer);
    prt_free(c.head);
    prt_free(c.next);
    prt_free(c.reader);
    prt_free(c.is_output);
    prt_free(c.taken);
    if (st) {
        onnx_qlut_free(p);
        return onnx_error(st, "ONNX import: out of memory planning 8-bit table folds");
    }
    *out = p;
    return PRT_OK;
}

int32_t onnx_qlut_role(const onnx_qluts *p, int32_t pos)
{
    return p ? p->role[pos] : -1;
}

void onnx_qlut_free(onnx_qluts *p)
{
    if (!p)
        return;
    prt_free(p->role);
    prt_free(p->c);
    prt_free(p);
}

/* ---- import ----------------------------------------------------------------- */

/* Makes `name` (a constant of the graph) a constant of sub. */
static prt_status ql_sub_const(onnx_import *imp, onnx_import *sub, const char *name,
                               const char *label)
{
    const onnx_value *v = onnx_value_find(imp, name);
    onnx_tensor t;
    int found;
    prt_status st;
    if (onnx_value_find(sub, name))
        return PRT_OK;
    if (v && v->init)
        return onnx_value_add(sub, name, ONNX_VALUE_CONSTANT, -1, v->init, label);
    st = onnx_value_const_tensor(imp, name, label, &t, &found);
    if (!st && !found)
        st = onnx_error(PRT_ERR_INTERNAL, "%s: input '%s' is no constant", label, name);
    if (!st)
        st = onnx_value_add_constant(sub, name, &t, label);
    onnx_tensor_free(&t);
    return st;
}

/* The chain's 256 output bytes for the inputs 0..255 of dtype xdt, from its
 * nodes imported as the importer imports them unfused into a network of
 * their own, built and run on the CPU. *ydt: the output's dtype. A
 * non-zero status (its error recorded) when that fails. */
static prt_status ql_table(onnx_import *imp, const qlut_chain *ch, const int32_t *order,
                           const char *label, int32_t xdt, uint8_t *table, int32_t *ydt)
{
    const Onnx__GraphProto *g = imp->graph;
    const Onnx__NodeProto *dq = g->node[order[ch->pos[0]]];
    const char *x = onnx_node_input(dq, 0);
    const char *y = onnx_str(g->node[order[ch->pos[ch->nb - 1]]]->output[0]);
    const prt_dims d = {1, {256}};
    onnx_import sub;
    prt_builder_config *cfg = NULL;
    prt_engine *eng = NULL;
    prt_context *ctx = NULL;
    prt_io_info io;
    uint8_t bytes[256];
    int32_t xt, yt, io_index;
    prt_status st;
    for (int k = 0; k < 256; k++)
        bytes[k] = (uint8_t)k;
    memset(&sub, 0, sizeof sub);
    sub.parser = imp->parser;
    sub.graph = g;
    sub.base_dir = imp->base_dir;
    sub.opset = imp->opset;
    st = prt_network_create(&sub.net);
    if (!st)
        st = prt_network_add_input(sub.net, x, xdt, &d, &xt);
    if (!st)
        st = onnx_value_add(&sub, x, ONNX_VALUE_INPUT, xt, NULL, label);
    for (int32_t j = 0; !st && j < ch->nb; j++) {
        const Onnx__NodeProto *n = g->node[order[ch->pos[j]]];
        onnx_choice choice;
        for (size_t k = 0; !st && k < n->n_input; k++) {
            const char *in = onnx_node_input(n, k);
            if (in[0] && !onnx_value_find(&sub, in))
                st = ql_sub_const(imp, &sub, in, label);
        }
        if (!st)
            st = onnx_choose(&sub, n, order[ch->pos[j]], &choice);
        if (!st)
            st = onnx_import_node(&sub, n, order[ch->pos[j]], &choice);
    }
    if (!st)
        st = onnx_value_tensor(&sub, y, &yt);
    if (!st)
        st = prt_network_mark_output(sub.net, yt);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CPU);
    if (!st)
        st = prt_engine_build(sub.net, cfg, NULL, &eng);
    memset(&io, 0, sizeof io);
    io.struct_size = sizeof io;
    if (!st)
        st = prt_engine_find_io(eng, y, &io_index);
    if (!st)
        st = prt_engine_get_io(eng, io_index, &io);
    /* one byte an element, and x's shape: a constant operand of more dims
     * would have broadcast it (ql_join takes rank-0 ones alone) */
    if (!st && ((io.dtype != PRT_INT8 && io.dtype != PRT_UINT8) || io.dims.nb_dims != 1 ||
                io.dims.d[0] != 256))
        st =
            onnx_error(PRT_ERR_UNSUPPORTED, "its output is not one byte for each of x's");
    if (!st)
        st = prt_context_create(eng, &ctx);
    if (!st)
        st = prt_context_set_tensor_address(ctx, x, bytes);
    if (!st)
        st = prt_context_set_tensor_address(ctx, y, table);
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    if (!st)
        *ydt = io.dtype;
    prt_context_destroy(ctx);
    prt_engine_destroy(eng);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(sub.net);
    prt_free(sub.values);
    onnx_names_free(&sub.names);
    return st;
}

/* x's dtype: the network's, else the first DQ's zero point's (x's by the
 * ONNX spec); -1 when neither says. */
static int32_t ql_x_dtype(onnx_import *imp, const Onnx__NodeProto *dq)
{
    const char *zn = onnx_node_input(dq, 2);
    const onnx_value *v;
    int32_t t, dt = -1;
    if (onnx_value_tensor(imp, onnx_node_input(dq, 0), &t) == PRT_OK &&
        prt_network_get_tensor(imp->net, t, NULL, &dt, NULL) == PRT_OK && dt >= 0)
        return dt;
    prt_clear_error();
    if (zn[0] && (v = onnx_value_find(imp, zn)) != NULL && v->init)
        return v->init->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8    ? PRT_INT8
               : v->init->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ? PRT_UINT8
                                                                            : -1;
    return -1;
}

prt_status onnx_qlut_import(onnx_import *imp, const onnx_qluts *p, int32_t pos,
                            const int32_t *order)
{
    const qlut_chain *ch = &p->c[p->role[pos]];
    const Onnx__GraphProto *g = imp->graph;
    const Onnx__NodeProto *dq = g->node[order[ch->pos[0]]];
    const char *ins[1] = {onnx_node_input(dq, 0)};
    const char *outs[1] = {onnx_str(g->node[order[ch->pos[ch->nb - 1]]]->output[0])};
    const prt_plugin_creator *c = NULL;
    const int32_t xdt = ql_x_dtype(imp, dq);
    char label[512], path[512], why[512];
    uint8_t table[256];
    int32_t ydt = -1;
    prt_status st = PRT_ERR_UNSUPPORTED;
    onnx_node_label(dq, order[ch->pos[0]], label, sizeof label);
    for (int32_t k = 0, at = 0; k < ch->nb && at < (int32_t)sizeof path; k++)
        at += snprintf(path + at, sizeof path - (size_t)at, "%s%s", k ? " -> " : "",
                       onnx_str(g->node[order[ch->pos[k]]]->op_type));
    snprintf(why, sizeof why, "x's dtype is not known to be int8 or uint8");
    if (xdt == PRT_INT8 || xdt == PRT_UINT8) {
        st = ql_table(imp, ch, order, label, xdt, table, &ydt);
        if (st == PRT_ERR_OUT_OF_MEMORY)
            return st;
        if (st)
            snprintf(why, sizeof why, "%s", prt_last_error());
    }
    if (!st)
        st = prt_builtin_find_creator("LookupTable8", "1", &c);
    if (!st) {
        /* the DQ's attributes (axis) are none of LookupTable8's */
        Onnx__NodeProto n = *dq;
        prt_field extra[2] = {{"table", table, PRT_FIELD_BYTES, 256},
                              {"output_dtype", &ydt, PRT_FIELD_INT32, 1}};
        n.n_attribute = 0;
        onnx_info("%s: %s (%d nodes) fused into one LookupTable8", label, path,
                  (int)ch->nb);
        return onnx_import_fused(imp, &n, label, c, extra, 2, ins, 1, outs, 1);
    }
    prt_clear_error();
    onnx_info("%s: %s left unfused, not one LookupTable8: %s", label, path, why);
    st = PRT_OK;
    for (int32_t k = 0; !st && k < ch->nb; k++) {
        const Onnx__NodeProto *n = g->node[order[ch->pos[k]]];
        onnx_choice choice;
        st = onnx_choose(imp, n, order[ch->pos[k]], &choice);
        if (!st)
            st = onnx_import_node(imp, n, order[ch->pos[k]], &choice);
    }
    return st;
}

/*
 * If, Loop and Scan folded at import (issue 25, "Control flow"). plugrt's
 * networks have no conditional or loop layers: an If whose condition is a
 * constant becomes the branch it chooses, inlined, and a Loop that runs a
 * constant number of times, or a Scan over sequences whose length the
 * graph fixes, becomes that many copies of its body, before the graph is
 * ordered and imported. A condition or trip count may also be a
 * shape computation that the graph decides (ctl_eval): integer and bool
 * ops over constants, ranks (a Shape's length is its input's stated rank)
 * and the fixed dims graph inputs, value_info and initializers state; a
 * symbolic dim decides nothing. Anything else is an error that names the
 * node and the value that is not constant.
 *
 * A constant is an initializer or a Constant node of the graph or of a graph
 * around it. ONNX forbids a subgraph's names to shadow the outer graphs', so
 * an If's branch is inlined under its own names; an If output is an
 * Identity of the branch's output (the branch may return an outer value).
 * A Loop's body is flattened once (its own Ifs and Loops), then copied per
 * iteration with every name the body defines (its inputs, initializers and
 * node outputs) renamed "<loop>/<i>/<name>", the iteration number an int64
 * initializer, the condition input a true one, and each loop-carried input
 * the previous iteration's output (the initial value first). The final
 * carried values are Identities of the last iteration's; a scan output is
 * the iterations' values, each unsqueezed on axis 0, concatenated (at most 8
 * inputs a Concat, as the built-in takes: a tree of them beyond).
 *
 * A Scan is unrolled by the same machinery (ctl_unroll_begin, ctl_loop_copy,
 * ctl_concat): its state variables are the carried values, and iteration
 * t's element of each scan input is a Gather of the scalar index t (T-1-t
 * reversed) on its scan axis, which drops that axis. Its sequence length T
 * is the dim the graph states for a scan input along its axis (a graph
 * input's or value_info's shape, an initializer's, a Constant's); a scan
 * output is its elements unsqueezed on its axis and concatenated there,
 * in reverse order where it prepends. An opset 8 Scan is taken only for a
 * batch of 1 and no sequence_lens: the batch dim is squeezed off its inputs
 * and unsqueezed back onto its outputs.
 *
 * Everything made here (nodes, names, tensors, the graph) is kept by the
 * import (onnx_keep) and freed with it; the model's own messages are only
 * read.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* Iterations and nodes an unrolled Loop or Scan may make. */
#define CTL_MAX_NODES 100000
/* Inputs of one Concat (the built-in's limit). */
#define CTL_CONCAT_MAX 8

/* The graphs around the one being flattened, innermost first: where a name
 * may be a constant. */
typedef struct ctl_scope {
    const Onnx__GraphProto *g;
    const struct ctl_scope *outer;
} ctl_scope;

/* A graph being made: its nodes and initializers, in growable arrays
 * (onnx_resize; ctl_done keeps them with the import). */
typedef struct ctl_graph {
    Onnx__NodeProto **node;
    size_t n_node, cap_node;
    Onnx__TensorProto **init;
    size_t n_init, cap_init;
} ctl_graph;

static void ctl_graph_free(ctl_graph *c)
{
    prt_free(c->node);
    prt_free(c->init);
    memset(c, 0, sizeof *c);
}

static prt_status ctl_oom(void)
{
    return onnx_error(PRT_ERR_OUT_OF_MEMORY,
                      "ONNX import: out of memory (If, Loop and Scan)");
}

static prt_status ctl_grow(void ***v, size_t n, size_t *cap)
{
    size_t c = *cap ? *cap * 2 : 16;
    void **g;
    if (n < *cap)
        return PRT_OK;
    g = onnx_resize(*v, sizeof *g * *cap, sizeof *g * c);
    if (!g)
        return ctl_oom();
    *v = g;
    *cap = c;
    return PRT_OK;
}

static prt_status ctl_push_node(ctl_graph *c, Onnx__NodeProto *n)
{
    prt_status st;
    if (c->n_node >= CTL_MAX_NODES)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "folding If, Loop and Scan would make more than %d nodes",
                          CTL_MAX_NODES);
    st = ctl_grow((void ***)&c->node, c->n_node, &c->cap_node);
    if (!st)
        c->node[c->n_node++] = n;
    return st;
}

static prt_status ctl_push_init(ctl_graph *c, Onnx__TensorProto *t)
{
    prt_status st = ctl_grow((void ***)&c->init, c->n_init, &c->cap_init);
    if (!st)
        c->init[c->n_init++] = t;
    return st;
}

/* A name of the import's own, printf-style; NULL when out of memory. */
static char *ctl_name(onnx_import *imp, const char *fmt, ...) ONNX_PRINTF(2, 3);
static char *ctl_name(onnx_import *imp, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(s = onnx_keep(imp, (size_t)n + 1)))
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A node of the default domain: op, its inputs and outputs (names the
 * caller keeps alive), no attributes. */
static Onnx__NodeProto *ctl_node(onnx_import *imp, const char *op, const char *name,
                                 char **in, size_t nin, char **out, size_t nout)
{
    Onnx__NodeProto *n = onnx_keep(imp, sizeof *n);
    char **io = onnx_keep(imp, sizeof *io * (nin + nout));
    if (!n || !io)
        return NULL;
    onnx__node_proto__init(n);
    memcpy(io, in, sizeof *io * nin);
    memcpy(io + nin, out, sizeof *io * nout);
    n->op_type = (char *)op;
    n->domain = (char *)"";
    n->name = (char *)name;
    n->input = io;
    n->n_input = nin;
    n->output = io + nin;
    n->n_output = nout;
    return n;
}

/* An int64 attribute or a one-int list attribute on node n. */
static prt_status ctl_attr_int(onnx_import *imp, Onnx__NodeProto *n, const char *name,
                               int64_t v, int as_list)
{
    Onnx__AttributeProto *a = onnx_keep(imp, sizeof *a);
    Onnx__AttributeProto **list = onnx_keep(imp, sizeof *list);
    int64_t *ints = onnx_keep(imp, sizeof *ints);
    if (!a || !list || !ints)
        return ctl_oom();
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    if (as_list) {
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        *ints = v;
        a->ints = ints;
        a->n_ints = 1;
    } else {
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->has_i = 1;
        a->i = v;
    }
    *list = a;
    n->attribute = list;
    n->n_attribute = 1;
    return PRT_OK;
}

/* An initializer `name` of type elem (INT64 or BOOL) and dims (rank 0 or
 * 1: nb values), holding v[]. */
static Onnx__TensorProto *ctl_const(onnx_import *imp, const char *name, int32_t elem,
                                    const int64_t *v, size_t nb, int rank1)
{
    Onnx__TensorProto *t = onnx_keep(imp, sizeof *t);
    int64_t *dims = onnx_keep(imp, sizeof *dims);
    void *data = onnx_keep(imp, sizeof(int64_t) * (nb ? nb : 1));
    if (!t || !dims || !data)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = elem;
    *dims = (int64_t)nb;
    t->dims = dims;
    t->n_dims = rank1 ? 1 : 0;
    if (elem == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) {
        int32_t *b = data;
        for (size_t k = 0; k < nb; k++)
            b[k] = v[k] != 0;
        t->int32_data = b;
        t->n_int32_data = nb;
    } else {
        memcpy(data, v, sizeof *v * nb);
        t->int64_data = data;
        t->n_int64_data = nb;
    }
    return t;
}

/* ---- constants ------------------------------------------------------------- */

/* The one integer or bool value of constant `name` in scope: *found 0
 * when `name` is no constant there. A constant of more than one value, or
 * of another type, is an error naming `what`. */
static prt_status ctl_const_int(onnx_import *imp, const ctl_scope *sc, const char *name,
                                const char *what, int64_t *v, int *found)
{
    const Onnx__TensorProto *tp = NULL;
    const Onnx__AttributeProto *attr = NULL;
    onnx_tensor t;
    int64_t vol = 1;
    prt_status st;
    *found = 0;
    for (; sc && !tp && !attr; sc = sc->outer) {
        for (size_t i = 0; i < sc->g->n_initializer && !tp; i++)
            if (strcmp(onnx_str(sc->g->initializer[i]->name), name) == 0)
                tp = sc->g->initializer[i];
        for (size_t i = 0; i < sc->g->n_node && !tp && !attr; i++) {
            const Onnx__NodeProto *n = sc->g->node[i];
            if (strcmp(onnx_str(n->op_type), "Constant") != 0 || n->n_output != 1 ||
                strcmp(onnx_str(n->output[0]), name) != 0 || n->n_attribute != 1)
                continue;
            if (n->attribute[0]->t &&
                strcmp(onnx_str(n->attribute[0]->name), "value") == 0)
                tp = n->attribute[0]->t;
            else if (strcmp(onnx_str(n->attribute[0]->name), "value_int") == 0)
                attr = n->attribute[0];
        }
    }
    if (!tp && !attr)
        return PRT_OK;
    st = tp ? onnx_tensor_load(tp, imp->base_dir, what, &t)
            : onnx_tensor_from_attr(attr, what, &t);
    if (st)
        return st;
    for (int32_t k = 0; k < t.dims.nb_dims; k++)
        vol *= t.dims.d[k];
    if (vol != 1 || onnx_dtype_is_float(t.dtype)) {
        onnx_tensor_free(&t);
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s '%s' must be one integer or bool value", what, name);
    }
    *v = onnx_tensor_int(&t, 0);
    *found = 1;
    onnx_tensor_free(&t);
    return PRT_OK;
}

/* ---- shape computations ------------------------------------------------------ */

/* What a condition or a trip count computed from shapes is known to hold:
 * up to CTL_VAL_MAX integers (rank 0 or 1), each known or not. A Shape of a
 * value whose rank the graph states has its length known even where its
 * dims are symbols, so Size(Shape(x)) folds; a symbolic dim stays unknown
 * and so does all that is computed from it. */
#define CTL_VAL_MAX 16
#define CTL_EVAL_DEPTH 64
typedef struct ctl_val {
    int32_t n;
    int64_t v[CTL_VAL_MAX];
    uint8_t known[CTL_VAL_MAX];
} ctl_val;

/* The dims the graph states for `name` (a graph input, a value_info entry
 * or an initializer of a graph in scope): rank in *rank, dim k in d[k]
 * (-1 for a symbol); 0 when nothing is stated. */
static int ctl_declared_dims(const ctl_scope *sc, const char *name, int32_t *rank,
                             int64_t *d)
{
    for (; sc; sc = sc->outer) {
        const Onnx__GraphProto *g = sc->g;
        for (size_t i = 0; i < g->n_initializer; i++) {
            const Onnx__TensorProto *t = g->initializer[i];
            if (strcmp(onnx_str(t->name), name) != 0)
                continue;
            if (t->n_dims > CTL_VAL_MAX)
                return 0;
            *rank = (int32_t)t->n_dims;
            for (size_t k = 0; k < t->n_dims; k++)
                d[k] = t->dims[k];
            return 1;
        }
        for (size_t i = 0; i < g->n_input + g->n_value_info; i++) {
            const Onnx__ValueInfoProto *vi =
                i < g->n_input ? g->input[i] : g->value_info[i - g->n_input];
            const Onnx__TensorShapeProto *sh;
            if (strcmp(onnx_str(vi->name), name) != 0 || !vi->type ||
                vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
                !vi->type->tensor_type || !vi->type->tensor_type->shape)
                continue;
            sh = vi->type->tensor_type->shape;
            if (sh->n_dim > CTL_VAL_MAX)
                return 0;
            *rank = (int32_t)sh->n_dim;
            for (size_t k = 0; k < sh->n_dim; k++)
                d[k] = sh->dim[k]->value_case ==
                                   ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                               sh->dim[k]->dim_value >= 0
                           ? sh->dim[k]->dim_value
                           : -1;
            return 1;
        }
    }
    return 0;
}

/* The node of a graph in scope that makes `name`, and which output it is. */
static const Onnx__NodeProto *ctl_producer(const ctl_scope *sc, const char *name)
{
    for (; sc; sc = sc->outer)
        for (size_t i = 0; i < sc->g->n_node; i++) {
            const Onnx__NodeProto *n = sc->g->node[i];
            for (size_t k = 0; k < n->n_output; k++)
                if (strcmp(onnx_str(n->output[k]), name) == 0)
                    return n;
        }
    return NULL;
}

static int64_t ctl_attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : dflt;
}

static int ctl_eval(onnx_import *imp, const ctl_scope *sc, const char *name, int depth,
                    ctl_val *out);

/* A constant tensor of at most CTL_VAL_MAX integers (rank 0 or 1) as a
 * ctl_val, every entry known; 0 for anything else (floats, more values). */
static int ctl_val_of(onnx_import *imp, const Onnx__TensorProto *tp, const char *name,
                      ctl_val *out)
{
    onnx_tensor t;
    size_t cnt;
    if (tp->n_dims > 1 || onnx_tensor_load(tp, imp->base_dir, name, &t) != PRT_OK) {
        prt_clear_error();
        return 0;
    }
    cnt = t.bytes / (prt_dtype_size(t.dtype) ? prt_dtype_size(t.dtype) : 1);
    if (onnx_dtype_is_float(t.dtype) || t.dtype == PRT_FLOAT64 || cnt > CTL_VAL_MAX) {
        onnx_tensor_free(&t);
        return 0;
    }
    out->n = (int32_t)cnt;
    for (size_t k = 0; k < cnt; k++) {
        out->v[k] = onnx_tensor_int(&t, k);
        out->known[k] = 1;
    }
    onnx_tensor_free(&t);
    return 1;
}

/* Input k of n evaluated; 0 when it is absent or not a shape computation. */
static int ctl_eval_in(onnx_import *imp, const ctl_scope *sc, const Onnx__NodeProto *n,
                       size_t k, int depth, ctl_val *out)
{
    return k < n->n_input && onnx_str(n->input[k])[0] &&
           ctl_eval(imp, sc, n->input[k], depth + 1, out);
}

/* a op b elementwise (counts equal, or one of them 1). */
static int ctl_binary(const char *op, const ctl_val *a, const ctl_val *b, ctl_val *out)
{
    const int32_t n = a->n == 1 ? b->n : a->n;
    if (a->n != b->n && a->n != 1 && b->n != 1)
        return 0;
    out->n = n;
    for (int32_t i = 0; i < n; i++) {
        const int32_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
        const int64_t x = a->v[ia], y = b->v[ib];
        int64_t r;
        out->known[i] = a->known[ia] && b->known[ib];
        if (!strcmp(op, "Equal"))
            r = x == y;
        else if (!strcmp(op, "Less"))
            r = x < y;
        else if (!strcmp(op, "Greater"))
            r = x > y;
        else if (!strcmp(op, "LessOrEqual"))
            r = x <= y;
        else if (!strcmp(op, "GreaterOrEqual"))
            r = x >= y;
        else if (!strcmp(op, "And"))
            r = x && y;
        else if (!strcmp(op, "Or"))
            r = x || y;
        else if (!strcmp(op, "Xor"))
            r = !x != !y;
        else if (!strcmp(op, "Add"))
            r = (int64_t)((uint64_t)x + (uint64_t)y);
        else if (!strcmp(op, "Sub"))
            r = (int64_t)((uint64_t)x - (uint64_t)y);
        else if (!strcmp(op, "Mul"))
            r = (int64_t)((uint64_t)x * (uint64_t)y);
        else if (!strcmp(op, "Max"))
            r = x > y ? x : y;
        else if (!strcmp(op, "Min"))
            r = x < y ? x : y;
        else { /* Div: integers truncate; by 0 (or INT64_MIN / -1) unknown */
            const int ok = y != 0 && !(x == INT64_MIN && y == -1);
            r = ok ? x / y : 0;
            out->known[i] = out->known[i] && ok;
        }
        out->v[i] = r;
    }
    return 1;
}

/* Whether `name` is a computation on constants, ranks and the dims the
 * graph states (ctl_val's), and its value. Float values are not. */
static int ctl_eval(onnx_import *imp, const ctl_scope *sc, const char *name, int depth,
                    ctl_val *out)
{
    static const char *const binaries[] = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
        "And",   "Or",   "Xor",     "Add",         "Sub",
        "Mul",   "Div",  "Max",     "Min"};
    const Onnx__NodeProto *n;
    const char *op;
    ctl_val a, b;
    int64_t v;
    int found = 0;
    memset(out, 0, sizeof *out);
    if (depth > CTL_EVAL_DEPTH)
        return 0;
    /* A constant of one value (ctl_const_int), or of a few integers. */
    if (ctl_const_int(imp, sc, name, name, &v, &found) != PRT_OK) {
        prt_clear_error(); /* more than one value, or a float: read below */
        found = 0;
    }
    if (found) {
        out->n = 1;
        out->v[0] = v;
        out->known[0] = 1;
        return 1;
    }
    for (const ctl_scope *s = sc; s; s = s->outer)
        for (size_t i = 0; i < s->g->n_initializer; i++)
            if (strcmp(onnx_str(s->g->initializer[i]->name), name) == 0)
                return ctl_val_of(imp, s->g->initializer[i], name, out);
    n = ctl_producer(sc, name);
    if (!n || onnx_str(n->domain)[0])
        return 0;
    op = onnx_str(n->op_type);
    if (!strcmp(op, "Constant")) {
        /* a vector of integers (one value ctl_const_int read above) */
        const Onnx__AttributeProto *at = onnx_node_attr(n, "value");
        return at && at->t && ctl_val_of(imp, at->t, name, out);
    }
    if (!strcmp(op, "Shape")) {
        int32_t rank;
        int64_t d[CTL_VAL_MAX], st, en;
        if (n->n_input < 1 || !ctl_declared_dims(sc, onnx_str(n->input[0]), &rank, d))
            return 0;
        st = ctl_attr_i(n, "start", 0);
        en = ctl_attr_i(n, "end", rank);
        st = st < 0 ? st + rank : st;
        en = en < 0 ? en + rank : en;
        st = st < 0 ? 0 : st > rank ? rank : st;
        en = en < 0 ? 0 : en > rank ? rank : en;
        for (int64_t k = st; k < en; k++) {
            out->v[out->n] = d[k];
            out->known[out->n++] = d[k] >= 0;
        }
        return 1;
    }
    if (!strcmp(op, "Size")) {
        int32_t rank;
        int64_t d[CTL_VAL_MAX], vol = 1;
        int known = 1;
        if (n->n_input < 1 || !ctl_declared_dims(sc, onnx_str(n->input[0]), &rank, d)) {
            /* Size of a computed vector: its count. */
            if (!ctl_eval_in(imp, sc, n, 0, depth, &a))
                return 0;
            rank = 1;
            d[0] = a.n;
        }
        for (int32_t k = 0; k < rank; k++) {
            known = known && d[k] >= 0;
            vol *= d[k] >= 0 ? d[k] : 1;
        }
        out->n = 1;
        out->v[0] = vol;
        out->known[0] = (uint8_t)known;
        return 1;
    }
    if (!strcmp(op, "Identity") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
        !strcmp(op, "Reshape") || !strcmp(op, "Flatten"))
        return ctl_eval_in(imp, sc, n, 0, depth, out);
    if (!strcmp(op, "Cast")) {
        const int64_t to = ctl_attr_i(n, "to", 0);
        if (!ctl_eval_in(imp, sc, n, 0, depth, out))
            return 0;
        if (to == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
            for (int32_t i = 0; i < out->n; i++)
                out->v[i] = out->v[i] != 0;
        return to == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
               to == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ||
               to == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    }
    if (!strcmp(op, "Not")) {
        if (!ctl_eval_in(imp, sc, n, 0, depth, out))
            return 0;
        for (int32_t i = 0; i < out->n; i++)
            out->v[i] = !out->v[i];
        return 1;
    }
    if (!strcmp(op, "Gather")) {
        if (ctl_attr_i(n, "axis", 0) != 0 || !ctl_eval_in(imp, sc, n, 0, depth, &a) ||
            !ctl_eval_in(imp, sc, n, 1, depth, &b))
            return 0;
        out->n = b.n;
        for (int32_t i = 0; i < b.n; i++) {
            int64_t k = b.v[i] < 0 ? b.v[i] + a.n : b.v[i];
            if (!b.known[i] || k < 0 || k >= a.n)
                return 0;
            out->v[i] = a.v[k];
            out->known[i] = a.known[k];
        }
        return 1;
    }
    if (!strcmp(op, "Concat")) {
        for (size_t k = 0; k < n->n_input; k++) {
            if (!ctl_eval_in(imp, sc, n, k, depth, &a) || out->n + a.n > CTL_VAL_MAX)
                return 0;
            memcpy(out->v + out->n, a.v, sizeof a.v[0] * (size_t)a.n);
            memcpy(out->known + out->n, a.known, (size_t)a.n);
            out->n += a.n;
        }
        return 1;
    }
    if (!strcmp(op, "ReduceProd") || !strcmp(op, "ReduceSum") ||
        !strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin")) {
        /* over the one axis a vector has */
        int64_t r = !strcmp(op, "ReduceProd") ? 1 : 0;
        uint8_t known = 1;
        if (!ctl_eval_in(imp, sc, n, 0, depth, &a) || a.n == 0)
            return 0;
        r = !strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin") ? a.v[0] : r;
        for (int32_t i = 0; i < a.n; i++) {
            known = known && a.known[i];
            if (!strcmp(op, "ReduceProd"))
                r = (int64_t)((uint64_t)r * (uint64_t)a.v[i]);
            else if (!strcmp(op, "ReduceSum"))
                r = (int64_t)((uint64_t)r + (uint64_t)a.v[i]);
            else if (!strcmp(op, "ReduceMax"))
                r = a.v[i] > r ? a.v[i] : r;
            else
                r = a.v[i] < r ? a.v[i] : r;
        }
        out->n = 1;
        out->v[0] = r;
        out->known[0] = known;
        return 1;
    }
    if (!strcmp(op, "Slice") && imp->opset >= 10) {
        ctl_val st, en, ax, sp;
        int64_t s0, e0, step = 1;
        if (!ctl_eval_in(imp, sc, n, 0, depth, &a) ||
            !ctl_eval_in(imp, sc, n, 1, depth, &st) ||
            !ctl_eval_in(imp, sc, n, 2, depth, &en) || st.n != 1 || en.n != 1 ||
            !st.known[0] || !en.known[0])
            return 0;
        if (n->n_input > 3 && onnx_str(n->input[3])[0] &&
            (!ctl_eval_in(imp, sc, n, 3, depth, &ax) || ax.n != 1 || !ax.known[0] ||
             (ax.v[0] != 0 && ax.v[0] != -1)))
            return 0;
        if (n->n_input > 4 && onnx_str(n->input[4])[0]) {
            if (!ctl_eval_in(imp, sc, n, 4, depth, &sp) || sp.n != 1 || !sp.known[0] ||
                sp.v[0] <= 0)
                return 0; /* positive steps only */
            step = sp.v[0];
        }
        s0 = st.v[0] < 0 ? st.v[0] + a.n : st.v[0];
        e0 = en.v[0] < 0 ? en.v[0] + a.n : en.v[0];
        s0 = s0 < 0 ? 0 : s0 > a.n ? a.n : s0;
        e0 = e0 < 0 ? 0 : e0 > a.n ? a.n : e0;
        for (int64_t k = s0; k < e0; k += step) {
            out->v[out->n] = a.v[k];
            out->known[out->n++] = a.known[k];
        }
        return 1;
    }
    for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++)
        if (!strcmp(op, binaries[i]))
            return ctl_eval_in(imp, sc, n, 0, depth, &a) &&
                   ctl_eval_in(imp, sc, n, 1, depth, &b) && ctl_binary(op, &a, &b, out);
    return 0;
}

/* The constant integer input k of a control node, or an error saying it
 * must be one. */
static prt_status ctl_need_const(onnx_import *imp, const ctl_scope *sc,
                                 const Onnx__NodeProto *n, size_t k, const char *label,
                                 const char *what, int64_t *v)
{
    const char *name = k < n->n_input ? onnx_str(n->input[k]) : "";
    int found = 0;
    char full[640];
    prt_status st;
    snprintf(full, sizeof full, "%s: its %s", label, what);
    if (!name[0])
        return onnx_error(PRT_ERR_UNSUPPORTED, "%s is not given", full);
    st = ctl_const_int(imp, sc, name, full, v, &found);
    if (!st && !found) {
        /* A computation on ranks and stated dims (Size(Shape(x)) == 4). */
        ctl_val val;
        if (ctl_eval(imp, sc, name, 0, &val) && val.n == 1 && val.known[0]) {
            *v = val.v[0];
            onnx_info("%s '%s' is %lld from the graph's constants, ranks and dims", full,
                      name, (long long)val.v[0]);
            return PRT_OK;
        }
        st = onnx_error(PRT_ERR_UNSUPPORTED,
                        "%s '%s' is not a constant: plugrt has no conditional or loop "
                        "layers and folds %s only where it is (an initializer, a "
                        "Constant node, or one value computed from them and from the "
                        "ranks and fixed dims the graph states)",
                        full, name, onnx_str(n->op_type));
    }
    return st;
}

static const Onnx__GraphProto *ctl_graph_attr(const Onnx__NodeProto *n, const char *name)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    return a ? a->g : NULL;
}

static int ctl_is(const Onnx__NodeProto *n, const char *op)
{
    return strcmp(onnx_str(n->op_type), op) == 0 && !onnx_str(n->domain)[0];
}

static prt_status ctl_flatten(onnx_import *imp, const ctl_scope *sc, ctl_graph *out);

/* What the names a control node makes start with: its name, else its first
 * output's. */
static const char *ctl_prefix(const Onnx__NodeProto *n)
{
    if (onnx_str(n->name)[0])
        return n->name;
    return n->n_output ? onnx_str(n->output[0]) : "";
}

/* ---- If ---------------------------------------------------------------------- */

static prt_status ctl_if(onnx_import *imp, const ctl_scope *sc, const Onnx__NodeProto *n,
                         const char *label, ctl_graph *out)
{
    int64_t cond = 0;
    const Onnx__GraphProto *b;
    ctl_scope inner;
    prt_status st = ctl_need_const(imp, sc, n, 0, label, "condition", &cond);
    if (st)
        return st;
    b = ctl_graph_attr(n, cond ? "then_branch" : "else_branch");
    if (!b)
        return onnx_error(PRT_ERR_MALFORMED, "%s: no %s graph", label,
                          cond ? "then_branch" : "else_branch");
    if (b->n_output != n->n_output)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: its %s has %zu outputs for the node's %zu", label,
                          cond ? "then_branch" : "else_branch", b->n_output, n->n_output);
    onnx_info("%s: the condition is %s, so the %s is inlined (%zu nodes)", label,
              cond ? "true" : "false", cond ? "then_branch" : "else_branch", b->n_node);
    inner.g = b;
    inner.outer = sc;
    st = ctl_flatten(imp, &inner, out);
    for (size_t i = 0; i < b->n_initializer && !st; i++)
        st = ctl_push_init(out, b->initializer[i]);
    for (size_t k = 0; k < n->n_output && !st; k++) {
        char *in = onnx_str(b->output[k]->name)[0] ? b->output[k]->name : NULL;
        Onnx__NodeProto *id;
        if (!onnx_str(n->output[k])[0])
            continue;
        if (!in)
            return onnx_error(PRT_ERR_MALFORMED, "%s: branch output %zu has no name",
                              label, k);
        id = ctl_node(imp, "Identity", ctl_name(imp, "%s/out%zu", ctl_prefix(n), k), &in,
                      1, &n->output[k], 1);
        st = id && id->name ? ctl_push_node(out, id) : ctl_oom();
    }
    return st;
}

/* ---- Loop -------------------------------------------------------------------- */

/* The names a Loop's body defines, each bound to what it stands for in the
 * iteration being copied. */
typedef struct ctl_binds {
    onnx_names index; /* body name -> slot */
    char **to;        /* slot -> the name in the flat graph */
    size_t n, cap;
} ctl_binds;

static prt_status ctl_bind_add(ctl_binds *b, const char *name)
{
    prt_status st;
    int32_t slot;
    if (!name[0] || onnx_names_get(&b->index, name, &slot) == 0)
        return PRT_OK;
    st = ctl_grow((void ***)&b->to, b->n, &b->cap);
    if (!st && onnx_names_put(&b->index, name, (int32_t)b->n))
        st = ctl_oom();
    if (!st)
        b->to[b->n++] = NULL;
    return st;
}

static void ctl_bind(ctl_binds *b, const char *name, char *to)
{
    int32_t slot;
    if (name[0] && onnx_names_get(&b->index, name, &slot) == 0)
        b->to[slot] = to;
}

/* What `name` is in this iteration: its binding, or itself (an outer name,
 * or "" for an input left out). */
static char *ctl_bound(const ctl_binds *b, char *name)
{
    int32_t slot;
    if (name && name[0] && onnx_names_get(&b->index, name, &slot) == 0)
        return b->to[slot];
    return name;
}

/* A Loop's shape: N carried values, K scan outputs, the body checked. */
typedef struct ctl_loop {
    const Onnx__NodeProto *n;
    const Onnx__GraphProto *body;
    const char *label;  /* the node, for messages */
    const char *prefix; /* of the names it makes: the node's name or output */
    int64_t trips;
    size_t nc, ns;
} ctl_loop;

static prt_status ctl_loop_check(onnx_import *imp, const ctl_scope *sc, ctl_loop *L)
{
    const Onnx__NodeProto *n = L->n;
    const Onnx__GraphProto *body = L->body;
    const char *cond_in, *cond_out;
    int64_t cond = 1, v = 0;
    int found = 0;
    ctl_scope inner;
    prt_status st = ctl_need_const(imp, sc, n, 0, L->label, "trip count M", &L->trips);
    if (!st && n->n_input > 1 && onnx_str(n->input[1])[0])
        st = ctl_need_const(imp, sc, n, 1, L->label, "condition", &cond);
    if (st)
        return st;
    if (L->trips < 0 || L->trips > CTL_MAX_NODES)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: trip count %lld is outside [0, %d] (plugrt unrolls "
                          "the loop)",
                          L->label, (long long)L->trips, CTL_MAX_NODES);
    if (!cond)
        L->trips = 0;
    if (n->n_input < 2 || body->n_input != n->n_input || body->n_output < 1 ||
        body->n_output - 1 < n->n_input - 2 || n->n_output != body->n_output - 1)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: %zu inputs, %zu outputs and a body of %zu inputs and %zu "
                          "outputs do not agree (the body takes the iteration number, "
                          "the condition and each carried value, and gives the "
                          "condition, each carried value and each scan output)",
                          L->label, n->n_input, n->n_output, body->n_input,
                          body->n_output);
    L->nc = n->n_input - 2;
    L->ns = n->n_output - L->nc;
    for (size_t j = 0; j < L->nc; j++)
        if (!onnx_str(n->input[2 + j])[0])
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: carried input %zu is left out (an optional value "
                              "plugrt does not have)",
                              L->label, j);
    if (L->ns && L->trips == 0)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: runs no iteration, so its %zu scan outputs would be "
                          "empty of unknown shape",
                          L->label, L->ns);
    /* The condition must stay true: the body passes its input on, or
     * gives a constant true. */
    cond_in = onnx_str(body->input[1]->name);
    cond_out = onnx_str(body->output[0]->name);
    inner.g = body;
    inner.outer = sc;
    if (cond_out[0] && strcmp(cond_in, cond_out) != 0) {
        st = ctl_const_int(imp, &inner, cond_out, "the body's condition", &v, &found);
        if (!st && (!found || !v))
            st = onnx_error(PRT_ERR_UNSUPPORTED,
                            "%s: the body's condition output '%s' is %s: plugrt unrolls "
                            "a Loop only when it runs a constant number of times (a "
                            "constant M, and a condition the body passes on or keeps "
                            "true)",
                            L->label, cond_out, found ? "false" : "computed");
    }
    return st;
}

/* Copies of the flat body's nodes and initializers for iteration i, with
 * the names the body defines bound to "<loop>/<i>/<name>" (those already
 * bound, the body's inputs, keep their binding). */
static prt_status ctl_loop_copy(onnx_import *imp, const ctl_loop *L, const ctl_graph *fb,
                                ctl_binds *b, int64_t i, ctl_graph *out)
{
    prt_status st = PRT_OK;
    for (size_t k = 0; k < fb->n_init && !st; k++) {
        Onnx__TensorProto *t = onnx_keep(imp, sizeof *t);
        char *name = ctl_name(imp, "%s/%lld/%s", L->prefix, (long long)i,
                              onnx_str(fb->init[k]->name));
        if (!t || !name)
            return ctl_oom();
        *t = *fb->init[k];
        t->name = name;
        ctl_bind(b, onnx_str(fb->init[k]->name), name);
        st = ctl_push_init(out, t);
    }
    for (size_t k = 0; k < fb->n_node && !st; k++)
        for (size_t o = 0; o < fb->node[k]->n_output; o++) {
            const char *name = onnx_str(fb->node[k]->output[o]);
            char *to = name[0]
                           ? ctl_name(imp, "%s/%lld/%s", L->prefix, (long long)i, name)
                           : (char *)"";
            if (!to)
                return ctl_oom();
            ctl_bind(b, name, to);
        }
    for (size_t k = 0; k < fb->n_node && !st; k++) {
        const Onnx__NodeProto *src = fb->node[k];
        Onnx__NodeProto *n = onnx_keep(imp, sizeof *n);
        char **io = onnx_keep(imp, sizeof *io * (src->n_input + src->n_output + 1));
        if (!n || !io)
            return ctl_oom();
        *n = *src;
        for (size_t j = 0; j < src->n_input; j++)
            io[j] = ctl_bound(b, src->input[j]);
        for (size_t j = 0; j < src->n_output; j++)
            io[src->n_input + j] = ctl_bound(b, src->output[j]);
        n->input = io;
        n->output = io + src->n_input;
        n->name = onnx_str(src->name)[0]
                      ? ctl_name(imp, "%s/%lld/%s", L->prefix, (long long)i, src->name)
                      : src->name;
        st = onnx_str(src->name)[0] && !n->name ? ctl_oom() : ctl_push_node(out, n);
    }
    return st;
}

/* out_name = Concat over `axis` of parts[0..n), in Concats of at most
 * CTL_CONCAT_MAX inputs (scan output s's). parts is overwritten. */
static prt_status ctl_concat(onnx_import *imp, const ctl_loop *L, size_t s, char **parts,
                             size_t n, int64_t axis, char *out_name, ctl_graph *out)
{
    int level = 0;
    while (n > 0) {
        size_t groups = (n + CTL_CONCAT_MAX - 1) / CTL_CONCAT_MAX, m = 0;
        for (size_t g = 0; g < groups; g++) {
            size_t from = g * CTL_CONCAT_MAX, cnt = n - from;
            char *to = groups == 1 ? out_name
                                   : ctl_name(imp, "%s/scan%zu/cat%d.%zu", L->prefix, s,
                                              level, g);
            Onnx__NodeProto *c;
            prt_status st;
            if (cnt > CTL_CONCAT_MAX)
                cnt = CTL_CONCAT_MAX;
            c = to ? ctl_node(imp, "Concat", to, parts + from, cnt, &to, 1) : NULL;
            if (!c)
                return ctl_oom();
            st = ctl_attr_int(imp, c, "axis", axis, 0);
            if (!st)
                st = ctl_push_node(out, c);
            if (st)
                return st;
            parts[m++] = to;
        }
        if (groups == 1)
            return PRT_OK;
        n = m;
        level++;
    }
    return PRT_OK;
}

/* The axes {axis} of a Squeeze or Unsqueeze: from opset 13 an input, an
 * int64 initializer "<prefix>/axes" (k < 0) or "<prefix>/axes<k>" made here
 * (*axes); before, an attribute (*axes NULL, ctl_squeeze). */
static prt_status ctl_axes(onnx_import *imp, const char *prefix, long k, int64_t axis,
                           ctl_graph *out, char **axes)
{
    Onnx__TensorProto *t;
    char *name;
    *axes = NULL;
    if (imp->opset < 13)
        return PRT_OK;
    name =
        k < 0 ? ctl_name(imp, "%s/axes", prefix) : ctl_name(imp, "%s/axes%ld", prefix, k);
    t = name ? ctl_const(imp, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &axis, 1, 1)
             : NULL;
    *axes = name;
    return t ? ctl_push_init(out, t) : ctl_oom();
}

/* to = op(in) on one axis, op Squeeze or Unsqueeze, the node named `to`;
 * axes from ctl_axes (NULL: the attribute axes = {axis}). */
static prt_status ctl_squeeze(onnx_import *imp, const char *op, char *in, char *axes,
                              int64_t axis, char *to, ctl_graph *out)
{
    char *io[2] = {in, axes};
    Onnx__NodeProto *n = to ? ctl_node(imp, op, to, io, axes ? 2 : 1, &to, 1) : NULL;
    prt_status st = n ? PRT_OK : ctl_oom();
    if (!st && !axes)
        st = ctl_attr_int(imp, n, "axes", axis, 1);
    if (!st)
        st = ctl_push_node(out, n);
    return st;
}

/* The loop's outputs: each carried value the last iteration's, each scan
 * output the concatenation of scans[s][0..trips). */
static prt_status ctl_loop_outputs(onnx_import *imp, const ctl_loop *L, char **carried,
                                   char ***scans, ctl_graph *out)
{
    const Onnx__NodeProto *n = L->n;
    char *axes = NULL;
    prt_status st = PRT_OK;
    for (size_t j = 0; j < L->nc && !st; j++) {
        Onnx__NodeProto *id;
        if (!onnx_str(n->output[j])[0])
            continue;
        id = ctl_node(imp, "Identity", ctl_name(imp, "%s/out%zu", L->prefix, j),
                      &carried[j], 1, &n->output[j], 1);
        st = id && id->name ? ctl_push_node(out, id) : ctl_oom();
    }
    if (!st && L->ns)
        st = ctl_axes(imp, L->prefix, -1, 0, out, &axes);
    for (size_t s = 0; s < L->ns && !st; s++) {
        if (!onnx_str(n->output[L->nc + s])[0])
            continue;
        for (int64_t i = 0; i < L->trips && !st; i++) {
            char *u = ctl_name(imp, "%s/scan%zu/%lld", L->prefix, s, (long long)i);
            st = ctl_squeeze(imp, "Unsqueeze", scans[s][i], axes, 0, u, out);
            scans[s][i] = u;
        }
        if (!st)
            st = ctl_concat(imp, L, s, scans[s], (size_t)L->trips, 0,
                            n->output[L->nc + s], out);
    }
    return st;
}

/* Binds the body's inputs for iteration i: the iteration number (an int64
 * initializer), the condition (true) and the carried values. */
static prt_status ctl_loop_inputs(onnx_import *imp, const ctl_loop *L, ctl_binds *b,
                                  int64_t i, char *truth, char **carried, ctl_graph *out)
{
    const Onnx__GraphProto *body = L->body;
    const char *iter = onnx_str(body->input[0]->name);
    if (iter[0]) {
        char *name = ctl_name(imp, "%s/%lld/%s", L->prefix, (long long)i, iter);
        Onnx__TensorProto *t =
            name ? ctl_const(imp, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &i, 1, 0)
                 : NULL;
        prt_status st = t ? ctl_push_init(out, t) : ctl_oom();
        if (st)
            return st;
        ctl_bind(b, iter, name);
    }
    ctl_bind(b, onnx_str(body->input[1]->name), truth);
    for (size_t j = 0; j < L->nc; j++)
        ctl_bind(b, onnx_str(body->input[2 + j]->name), carried[j]);
    return PRT_OK;
}

/* The iterations, each after the last; carried[] and scans[][] follow. */
static prt_status ctl_loop_unroll(onnx_import *imp, const ctl_loop *L,
                                  const ctl_graph *fb, ctl_binds *b, char **carried,
                                  char ***scans, ctl_graph *out)
{
    const Onnx__GraphProto *body = L->body;
    const int64_t one = 1;
    char *truth = ctl_name(imp, "%s/true", L->prefix);
    Onnx__TensorProto *t =
        truth ? ctl_const(imp, truth, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, &one, 1, 0)
              : NULL;
    prt_status st = t ? ctl_push_init(out, t) : ctl_oom();
    for (int64_t i = 0; i < L->trips && !st; i++) {
        st = ctl_loop_inputs(imp, L, b, i, truth, carried, out);
        if (!st)
            st = ctl_loop_copy(imp, L, fb, b, i, out);
        for (size_t j = 0; j < L->nc && !st; j++)
            carried[j] = ctl_bound(b, body->output[1 + j]->name);
        for (size_t s = 0; s < L->ns && !st; s++)
            scans[s][i] = ctl_bound(b, body->output[1 + L->nc + s]->name);
        for (size_t j = 0; j < L->nc + L->ns && !st; j++) {
            const char *name = j < L->nc ? carried[j] : scans[j - L->nc][i];
            if (!name || !name[0])
                st = onnx_error(PRT_ERR_MALFORMED, "%s: body output %zu has no name",
                                L->label, j + 1);
        }
    }
    return st;
}

/* What unrolling a body (a Loop's or a Scan's) works with: the body
 * flattened once, a slot for every name it defines, the carried values of
 * the iteration being copied (nc), each scan output's value in every
 * iteration (ns x trips). */
typedef struct ctl_unrolling {
    ctl_graph fb;
    ctl_binds b;
    char **carried;
    char ***scans;
} ctl_unrolling;

static void ctl_unrolling_free(ctl_unrolling *u)
{
    ctl_graph_free(&u->fb);
    onnx_names_free(&u->b.index);
    prt_free(u->b.to);
}

/* Flattens L's body (its own control nodes) and makes u's slots and
 * arrays; `per_trip` nodes besides the body's are made each iteration
 * (for the early check of the node cap). */
static prt_status ctl_unroll_begin(onnx_import *imp, const ctl_scope *sc,
                                   const ctl_loop *L, size_t per_trip, ctl_unrolling *u)
{
    const Onnx__GraphProto *body = L->body;
    ctl_scope inner;
    prt_status st = PRT_OK;
    memset(u, 0, sizeof *u);
    if ((uint64_t)L->trips * (body->n_node + per_trip) > CTL_MAX_NODES)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: unrolling %lld iterations of %zu nodes is over plugrt's "
                          "%d nodes",
                          L->label, (long long)L->trips, body->n_node, CTL_MAX_NODES);
    onnx_info("%s: %lld iterations of a body of %zu nodes, unrolled", L->label,
              (long long)L->trips, body->n_node);
    inner.g = body;
    inner.outer = sc;
    st = ctl_flatten(imp, &inner, &u->fb);
    for (size_t k = 0; k < body->n_initializer && !st; k++)
        st = ctl_push_init(&u->fb, body->initializer[k]);
    /* Every name the body defines has a slot. */
    for (size_t k = 0; k < body->n_input && !st; k++)
        st = ctl_bind_add(&u->b, onnx_str(body->input[k]->name));
    for (size_t k = 0; k < u->fb.n_init && !st; k++)
        st = ctl_bind_add(&u->b, onnx_str(u->fb.init[k]->name));
    for (size_t k = 0; k < u->fb.n_node && !st; k++)
        for (size_t o = 0; o < u->fb.node[k]->n_output && !st; o++)
            st = ctl_bind_add(&u->b, onnx_str(u->fb.node[k]->output[o]));
    if (!st) {
        u->carried = onnx_keep(imp, sizeof *u->carried * (L->nc + 1));
        u->scans = onnx_keep(imp, sizeof *u->scans * (L->ns + 1));
        st = u->carried && u->scans ? PRT_OK : ctl_oom();
    }
    for (size_t s = 0; s < L->ns && !st; s++)
        if (!(u->scans[s] = onnx_keep(imp, sizeof **u->scans * ((size_t)L->trips + 1))))
            st = ctl_oom();
    return st;
}

static prt_status ctl_unroll(onnx_import *imp, const ctl_scope *sc,
                             const Onnx__NodeProto *n, const char *label, ctl_graph *out)
{
    ctl_loop L;
    ctl_unrolling u;
    prt_status st;
    memset(&L, 0, sizeof L);
    L.n = n;
    L.label = label;
    L.prefix = ctl_prefix(n);
    L.body = ctl_graph_attr(n, "body");
    if (!L.body)
        return onnx_error(PRT_ERR_MALFORMED, "%s: no body graph", label);
    st = ctl_loop_check(imp, sc, &L);
    if (st)
        return st;
    st = ctl_unroll_begin(imp, sc, &L, 2 * L.ns + 1, &u);
    for (size_t j = 0; j < L.nc && !st; j++)
        u.carried[j] = n->input[2 + j];
    if (!st)
        st = ctl_loop_unroll(imp, &L, &u.fb, &u.b, u.carried, u.scans, out);
    if (!st)
        st = ctl_loop_outputs(imp, &L, u.carried, u.scans, out);
    ctl_unrolling_free(&u);
    return st;
}

/* ---- Scan -------------------------------------------------------------------- */

/* A Scan's shape: N state variables (L.nc), M scan inputs, K scan outputs
 * (L.ns), its sequence length (L.trips), and the axis and direction of
 * each scan input and output. At opset 8 every input and output has a
 * leading batch dim, which must be 1: it is squeezed off the inputs and
 * put back on the outputs, and the scan axes are those after it (0). */
typedef struct ctl_scan_node {
    ctl_loop L;
    size_t nm;    /* scan inputs */
    size_t first; /* the node's first state input: 1 at opset 8 (sequence_lens) */
    int batch;    /* opset 8 */
    int64_t *in_axis, *in_rev, *out_axis, *out_rev;
} ctl_scan_node;

/* The list attribute `name` of `count` ints into *v, 0 each where it is
 * absent (or name is NULL: an opset without it); a direction (dir) must be
 * 0 or 1. */
static prt_status ctl_scan_ints(onnx_import *imp, const ctl_scan_node *S,
                                const char *name, size_t count, int dir, int64_t **v)
{
    const Onnx__AttributeProto *a = name ? onnx_node_attr(S->L.n, name) : NULL;
    *v = onnx_keep(imp, sizeof **v * (count + 1));
    if (!*v)
        return ctl_oom();
    memset(*v, 0, sizeof **v * (count + 1));
    if (!a)
        return PRT_OK;
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints != count)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: %s must be a list of %zu ints (one per %s)", S->L.label,
                          name, count,
                          strstr(name, "output") ? "scan output" : "scan input");
    for (size_t k = 0; k < count; k++) {
        if (dir && a->ints[k] != 0 && a->ints[k] != 1)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: %s[%zu] is %lld: a direction is 0 (forward) or 1 "
                              "(reverse)",
                              S->L.label, name, k, (long long)a->ints[k]);
        (*v)[k] = a->ints[k];
    }
    return PRT_OK;
}

/* The dims of `name` as ctl_declared_dims has them, or a Constant node's
 * value's; 0 when nothing states them. */
static int ctl_scan_dims(const ctl_scope *sc, const char *name, int32_t *rank, int64_t *d)
{
    const Onnx__NodeProto *p;
    const Onnx__AttributeProto *a;
    if (ctl_declared_dims(sc, name, rank, d))
        return 1;
    p = ctl_producer(sc, name);
    if (!p || !ctl_is(p, "Constant") || !(a = onnx_node_attr(p, "value")) || !a->t ||
        a->t->n_dims > CTL_VAL_MAX)
        return 0;
    *rank = (int32_t)a->t->n_dims;
    for (size_t k = 0; k < a->t->n_dims; k++)
        d[k] = a->t->dims[k];
    return 1;
}

/* The sequence length: the dim each scan input is scanned along, where
 * the graph fixes it (all that do must agree); at opset 8 the batch dims
 * the graph fixes, each 1. Scan input axes come out in [0, rank) where the
 * rank is known. */
static prt_status ctl_scan_length(const ctl_scope *sc, ctl_scan_node *S)
{
    ctl_loop *L = &S->L;
    const Onnx__NodeProto *n = L->n;
    const char *by = NULL;
    int batch = 0;
    L->trips = -1;
    for (size_t j = 0; j < L->nc + S->nm; j++) {
        const char *x = n->input[S->first + j];
        const int is_scan = j >= L->nc;
        int32_t rank;
        int64_t d[CTL_VAL_MAX], a;
        if (!ctl_scan_dims(sc, x, &rank, d))
            continue;
        if (S->batch) {
            if (rank < 1 + is_scan)
                return onnx_error(PRT_ERR_MALFORMED,
                                  "%s: '%s' has rank %d: an opset 8 Scan's %s has a "
                                  "batch dim%s",
                                  L->label, x, (int)rank,
                                  is_scan ? "scan input" : "state variable",
                                  is_scan ? " and a sequence dim" : "");
            if (d[0] >= 0 && d[0] != 1)
                return onnx_error(PRT_ERR_UNSUPPORTED,
                                  "%s: its batch is %lld ('%s'): plugrt unrolls Scan at "
                                  "import, and an opset 8 Scan only for a batch of 1",
                                  L->label, (long long)d[0], x);
            batch = batch || d[0] == 1;
        }
        if (!is_scan)
            continue;
        a = S->batch ? 1 : S->in_axis[j - L->nc];
        a = a < 0 ? a + rank : a;
        if (a < 0 || a >= rank)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: scan input '%s' has rank %d, no axis %lld", L->label,
                              x, (int)rank, (long long)S->in_axis[j - L->nc]);
        if (!S->batch)
            S->in_axis[j - L->nc] = a;
        if (d[a] < 0)
            continue;
        if (L->trips >= 0 && d[a] != L->trips)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: its scan inputs '%s' and '%s' are %lld and %lld long "
                              "along their scan axes",
                              L->label, by, x, (long long)L->trips, (long long)d[a]);
        L->trips = d[a];
        by = x;
    }
    if (S->batch && !batch)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: its batch dim is not a fixed 1 (no input's shape states "
                          "it): plugrt unrolls Scan at import, and an opset 8 Scan only "
                          "for a batch of 1",
                          L->label);
    if (L->trips < 0)
        return onnx_error(
            PRT_ERR_UNSUPPORTED,
            "%s: its sequence length is not a fixed dim; plugrt unrolls Scan "
            "at import, so the graph must fix the dim a scan input is "
            "scanned along (a graph input's or value_info's shape, an "
            "initializer, a Constant), which it does not for '%s'",
            L->label, n->input[S->first + L->nc]);
    if (L->trips > CTL_MAX_NODES)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: its sequence length %lld is over %d (plugrt unrolls Scan "
                          "at import)",
                          L->label, (long long)L->trips, CTL_MAX_NODES);
    if (L->ns && L->trips == 0)
        return onnx_error(
            PRT_ERR_UNSUPPORTED,
            "%s: its sequence length is 0, so its %zu scan outputs would be "
            "empty of unknown shape",
            L->label, L->ns);
    return PRT_OK;
}

static prt_status ctl_scan_check(onnx_import *imp, const ctl_scope *sc, ctl_scan_node *S)
{
    ctl_loop *L = &S->L;
    const Onnx__NodeProto *n = L->n;
    const Onnx__GraphProto *body = L->body;
    const Onnx__AttributeProto *m = onnx_node_attr(n, "num_scan_inputs");
    prt_status st;
    S->batch = imp->opset < 9;
    S->first = S->batch ? 1 : 0;
    if (n->n_input <= S->first || !m ||
        m->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT || m->i < 1 ||
        (uint64_t)m->i > n->n_input - S->first)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: num_scan_inputs must be given, from 1 to its %zu inputs",
                          L->label, n->n_input > S->first ? n->n_input - S->first : 0);
    S->nm = (size_t)m->i;
    L->nc = n->n_input - S->first - S->nm;
    if (body->n_input != L->nc + S->nm || body->n_output < L->nc ||
        n->n_output != body->n_output)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: %zu state variables, %zu scan inputs and %zu outputs, and "
                          "a body of %zu inputs and %zu outputs do not agree (the body "
                          "takes each state variable and an element of each scan input, "
                          "and gives each state variable and an element of each scan "
                          "output)",
                          L->label, L->nc, S->nm, n->n_output, body->n_input,
                          body->n_output);
    L->ns = body->n_output - L->nc;
    if (S->batch && onnx_str(n->input[0])[0])
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: its sequence_lens '%s' is given: plugrt unrolls Scan at "
                          "import, and an opset 8 Scan only where every sequence is of "
                          "the full length (no sequence_lens)",
                          L->label, n->input[0]);
    for (size_t j = 0; j < L->nc + S->nm; j++)
        if (!onnx_str(n->input[S->first + j])[0])
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: %s %zu is left out (an optional value plugrt does "
                              "not have)",
                              L->label, j < L->nc ? "state variable" : "scan input",
                              j < L->nc ? j : j - L->nc);
    st = ctl_scan_ints(imp, S, S->batch ? "directions" : "scan_input_directions", S->nm,
                       1, &S->in_rev);
    /* (opset 8 has neither axes nor output directions: after the batch dim
     * every input is scanned and every output stacked on axis 0, forward.) */
    if (!st)
        st = ctl_scan_ints(imp, S, S->batch ? NULL : "scan_output_directions", L->ns, 1,
                           &S->out_rev);
    if (!st)
        st = ctl_scan_ints(imp, S, S->batch ? NULL : "scan_input_axes", S->nm, 0,
                           &S->in_axis);
    if (!st)
        st = ctl_scan_ints(imp, S, S->batch ? NULL : "scan_output_axes", L->ns, 0,
                           &S->out_axis);
    if (!st)
        st = ctl_scan_length(sc, S);
    return st;
}

/* Iteration t's body inputs: the state variables, and each scan input's
 * element t (from the end where it is reversed), a Gather of one index. */
static prt_status ctl_scan_inputs(onnx_import *imp, const ctl_scan_node *S,
                                  ctl_unrolling *u, char **seq, char **idx, int64_t t,
                                  ctl_graph *out)
{
    const ctl_loop *L = &S->L;
    const Onnx__GraphProto *body = L->body;
    prt_status st = PRT_OK;
    for (size_t j = 0; j < L->nc; j++)
        ctl_bind(&u->b, onnx_str(body->input[j]->name), u->carried[j]);
    for (size_t j = 0; j < S->nm && !st; j++) {
        char *in[2] = {seq[j], idx[S->in_rev[j] ? L->trips - 1 - t : t]};
        char *to = ctl_name(imp, "%s/in%zu/%lld", L->prefix, j, (long long)t);
        Onnx__NodeProto *g = to ? ctl_node(imp, "Gather", to, in, 2, &to, 1) : NULL;
        if (!g)
            return ctl_oom();
        st = ctl_attr_int(imp, g, "axis", S->in_axis[j], 0);
        if (!st)
            st = ctl_push_node(out, g);
        ctl_bind(&u->b, onnx_str(body->input[L->nc + j]->name), to);
    }
    return st;
}

/* The iterations: the state variables threaded through u->carried, each
 * scan output's elements into u->scans. */
static prt_status ctl_scan_unroll(onnx_import *imp, const ctl_scan_node *S,
                                  ctl_unrolling *u, ctl_graph *out)
{
    const ctl_loop *L = &S->L;
    const Onnx__NodeProto *n = L->n;
    const Onnx__GraphProto *body = L->body;
    char **seq = onnx_keep(imp, sizeof *seq * (S->nm + 1));
    char **idx = onnx_keep(imp, sizeof *idx * ((size_t)L->trips + 1));
    prt_status st = seq && idx ? PRT_OK : ctl_oom();
    /* (The batch is opset 8's, where Squeeze's axes are an attribute.) */
    for (size_t j = 0; j < L->nc + S->nm && !st; j++) {
        char *x = n->input[S->first + j], *to = x;
        if (S->batch) {
            to = ctl_name(imp, "%s/%s%zu", L->prefix, j < L->nc ? "state" : "seq",
                          j < L->nc ? j : j - L->nc);
            st = ctl_squeeze(imp, "Squeeze", x, NULL, 0, to, out);
        }
        if (j < L->nc)
            u->carried[j] = to;
        else
            seq[j - L->nc] = to;
    }
    for (int64_t t = 0; t < L->trips && !st; t++) {
        Onnx__TensorProto *c;
        idx[t] = ctl_name(imp, "%s/idx%lld", L->prefix, (long long)t);
        c = idx[t]
                ? ctl_const(imp, idx[t], ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &t, 1, 0)
                : NULL;
        st = c ? ctl_push_init(out, c) : ctl_oom();
    }
    for (int64_t t = 0; t < L->trips && !st; t++) {
        st = ctl_scan_inputs(imp, S, u, seq, idx, t, out);
        if (!st)
            st = ctl_loop_copy(imp, L, &u->fb, &u->b, t, out);
        for (size_t j = 0; j < L->nc && !st; j++)
            u->carried[j] = ctl_bound(&u->b, body->output[j]->name);
        for (size_t s = 0; s < L->ns && !st; s++)
            u->scans[s][t] = ctl_bound(&u->b, body->output[L->nc + s]->name);
        for (size_t j = 0; j < L->nc + L->ns && !st; j++) {
            const char *name = j < L->nc ? u->carried[j] : u->scans[j - L->nc][t];
            if (!name || !name[0])
                st = onnx_error(PRT_ERR_MALFORMED, "%s: body output %zu has no name",
                                L->label, j);
        }
    }
    return st;
}

/* The Scan's outputs: each state variable the last iteration's; each scan
 * output its elements unsqueezed on its axis and concatenated, last first
 * where it is reversed; at opset 8 each with the batch dim put back (an
 * Unsqueeze whose axes are an attribute there). */
static prt_status ctl_scan_outputs(onnx_import *imp, const ctl_scan_node *S,
                                   ctl_unrolling *u, ctl_graph *out)
{
    const ctl_loop *L = &S->L;
    const Onnx__NodeProto *n = L->n;
    const int64_t T = L->trips;
    prt_status st = PRT_OK;
    for (size_t j = 0; j < L->nc && !st; j++) {
        Onnx__NodeProto *id;
        if (!onnx_str(n->output[j])[0])
            continue;
        if (S->batch) {
            st = ctl_squeeze(imp, "Unsqueeze", u->carried[j], NULL, 0, n->output[j], out);
            continue;
        }
        id = ctl_node(imp, "Identity", ctl_name(imp, "%s/out%zu", L->prefix, j),
                      &u->carried[j], 1, &n->output[j], 1);
        st = id && id->name ? ctl_push_node(out, id) : ctl_oom();
    }
    for (size_t s = 0; s < L->ns && !st; s++) {
        char **parts = u->scans[s], *axes = NULL, *cat = n->output[L->nc + s];
        if (!onnx_str(cat)[0])
            continue;
        if (S->batch)
            cat = ctl_name(imp, "%s/scan%zu", L->prefix, s);
        st = ctl_axes(imp, L->prefix, (long)s, S->out_axis[s], out, &axes);
        for (int64_t i = 0; i < T / 2 && !st && S->out_rev[s]; i++) {
            char *e = parts[i];
            parts[i] = parts[T - 1 - i];
            parts[T - 1 - i] = e;
        }
        for (int64_t i = 0; i < T && !st; i++) {
            char *to = ctl_name(imp, "%s/scan%zu/%lld", L->prefix, s, (long long)i);
            st = ctl_squeeze(imp, "Unsqueeze", parts[i], axes, S->out_axis[s], to, out);
            parts[i] = to;
        }
        if (!st)
            st = cat ? ctl_concat(imp, L, s, parts, (size_t)T, S->out_axis[s], cat, out)
                     : ctl_oom();
        if (!st && S->batch)
            st = ctl_squeeze(imp, "Unsqueeze", cat, NULL, 0, n->output[L->nc + s], out);
    }
    return st;
}

static prt_status ctl_scan(onnx_import *imp, const ctl_scope *sc,
                           const Onnx__NodeProto *n, const char *label, ctl_graph *out)
{
    ctl_scan_node S;
    ctl_unrolling u;
    prt_status st;
    memset(&S, 0, sizeof S);
    S.L.n = n;
    S.L.label = label;
    S.L.prefix = ctl_prefix(n);
    S.L.body = ctl_graph_attr(n, "body");
    if (!S.L.body)
        return onnx_error(PRT_ERR_MALFORMED, "%s: no body graph", label);
    st = ctl_scan_check(imp, sc, &S);
    if (st)
        return st;
    st = ctl_unroll_begin(imp, sc, &S.L, S.nm + 2 * S.L.ns + 1, &u);
    if (!st)
        st = ctl_scan_unroll(imp, &S, &u, out);
    if (!st)
        st = ctl_scan_outputs(imp, &S, &u, out);
    ctl_unrolling_free(&u);
    return st;
}

/* ---- graphs ------------------------------------------------------------------ */

/* Appends the nodes of sc->g to out, each If, Loop and Scan folded. */
static prt_status ctl_flatten(onnx_import *imp, const ctl_scope *sc, ctl_graph *out)
{
    prt_status st = PRT_OK;
    for (size_t i = 0; i < sc->g->n_node && !st; i++) {
        const Onnx__NodeProto *n = sc->g->node[i];
        char label[512];
        onnx_node_label(n, (int32_t)i, label, sizeof label);
        if (ctl_is(n, "If"))
            st = ctl_if(imp, sc, n, label, out);
        else if (ctl_is(n, "Loop"))
            st = ctl_unroll(imp, sc, n, label, out);
        else if (ctl_is(n, "Scan"))
            st = ctl_scan(imp, sc, n, label, out);
        else
            st = ctl_push_node(out, (Onnx__NodeProto *)n);
    }
    return st;
}

static int ctl_any(const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_node; i++)
        if (ctl_is(g->node[i], "If") || ctl_is(g->node[i], "Loop") ||
            ctl_is(g->node[i], "Scan"))
            return 1;
    return 0;
}

/* Moves c's arrays into the import's keeping, as g's nodes and
 * initializers. */
static prt_status ctl_done(onnx_import *imp, ctl_graph *c, Onnx__GraphProto *g)
{
    Onnx__NodeProto **nodes = onnx_keep(imp, sizeof *nodes * (c->n_node + 1));
    Onnx__TensorProto **inits = onnx_keep(imp, sizeof *inits * (c->n_init + 1));
    if (!nodes || !inits)
        return ctl_oom();
    /* (An empty array may be NULL, which memcpy must not be given.) */
    if (c->n_node)
        memcpy(nodes, c->node, sizeof *nodes * c->n_node);
    if (c->n_init)
        memcpy(inits, c->init, sizeof *inits * c->n_init);
    g->node = nodes;
    g->n_node = c->n_node;
    g->initializer = inits;
    g->n_initializer = c->n_init;
    return PRT_OK;
}

prt_status onnx_control_flatten(onnx_import *imp, const Onnx__GraphProto **g)
{
    const Onnx__GraphProto *src = *g;
    Onnx__GraphProto *flat;
    ctl_graph c = {0};
    ctl_scope sc = {src, NULL};
    prt_status st = PRT_OK;
    if (!ctl_any(src))
        return PRT_OK;
    flat = onnx_keep(imp, sizeof *flat);
    if (!flat)
        return ctl_oom();
    *flat = *src;
    for (size_t i = 0; i < src->n_initializer && !st; i++)
        st = ctl_push_init(&c, src->initializer[i]);
    if (!st)
        st = ctl_flatten(imp, &sc, &c);
    if (!st)
        st = ctl_done(imp, &c, flat);
    ctl_graph_free(&c);
    if (!st)
        *g = flat;
    return st;
}

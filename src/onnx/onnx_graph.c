/* The order in which nodes are imported. ONNX requires nodes to be listed in
 * topological order, but exporters get it wrong often enough that the
 * importer sorts instead of refusing; a cycle (no order exists) is an error
 * that names a node on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

void onnx_node_label(const Onnx__NodeProto *node, int32_t index, char *buf, size_t cap)
{
    const char *name = onnx_str(node->name);
    if (name[0])
        snprintf(buf, cap, "node '%s' (%s)", name, onnx_str(node->op_type));
    else
        snprintf(buf, cap, "node #%d (%s)", (int)index, onnx_str(node->op_type));
}

/* A binary min-heap of node indices: Kahn's algorithm that always takes the
 * earliest ready node keeps the file's order wherever it is valid. */
typedef struct heap {
    int32_t *v;
    int32_t n;
} heap;

static void heap_push(heap *h, int32_t x)
{
    int32_t i = h->n++;
    h->v[i] = x;
    while (i > 0 && h->v[(i - 1) / 2] > h->v[i]) {
        int32_t p = (i - 1) / 2, t = h->v[p];
        h->v[p] = h->v[i];
        h->v[i] = t;
        i = p;
    }
}

static int32_t heap_pop(heap *h)
{
    int32_t top = h->v[0], i = 0;
    h->v[0] = h->v[--h->n];
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < h->n && h->v[l] < h->v[m])
            m = l;
        if (r < h->n && h->v[r] < h->v[m])
            m = r;
        if (m == i)
            break;
        t = h->v[m];
        h->v[m] = h->v[i];
        h->v[i] = t;
        i = m;
    }
    return top;
}

/* The producer of a node's input k, -1 for a name known before any node or an
 * empty (omitted optional) input. */
static int32_t producer_of(const onnx_names *producers, const Onnx__NodeProto *node,
                           size_t k)
{
    int32_t p;
    const char *name = onnx_str(node->input[k]);
    if (!name[0] || onnx_names_get(producers, name, &p) != 0)
        return -1;
    return p;
}

/* Maps each name a node produces to that node. A name produced twice, or
 * one that redefines a graph input or initializer, is an error. */
static prt_status index_producers(const Onnx__GraphProto *graph, const onnx_names *known,
                                  onnx_names *producers)
{
    const int32_t n = (int32_t)graph->n_node;
    char label[512];
    prt_status st = PRT_OK;
    for (int32_t i = 0; i < n && !st; i++) {
        const Onnx__NodeProto *node = graph->node[i];
        for (size_t k = 0; k < node->n_output && !st; k++) {
            const char *name = onnx_str(node->output[k]);
            int32_t other;
            if (!name[0])
                continue; /* an optional output left out */
            if (onnx_names_get(known, name, &other) == 0) {
                onnx_node_label(node, i, label, sizeof label);
                st = onnx_error(PRT_ERR_MALFORMED,
                                "%s: output '%s' redefines a graph input or "
                                "initializer",
                                label, name);
            } else if (onnx_names_get(producers, name, &other) == 0) {
                char first_label[512];
                onnx_node_label(graph->node[other], other, first_label,
                                sizeof first_label);
                onnx_node_label(node, i, label, sizeof label);
                st = onnx_error(PRT_ERR_MALFORMED,
                                "%s: output '%s' is also produced by %s (names "
                                "must be assigned once)",
                                label, name, first_label);
            } else {
                st = onnx_names_put(producers, name, i);
            }
        }
    }
    return st;
}

/* Checks that every input has a source (an error names the first dangling
 * one) and counts the producer -> consumer edges. *out_sorted is cleared
 * when some node reads a later node's output. */
static prt_status check_inputs(const Onnx__GraphProto *graph, const onnx_names *known,
                               const onnx_names *producers, int32_t *out_edges,
                               int *out_sorted)
{
    const int32_t n = (int32_t)graph->n_node;
    char label[512];
    for (int32_t i = 0; i < n; i++) {
        const Onnx__NodeProto *node = graph->node[i];
        for (size_t k = 0; k < node->n_input; k++) {
            const char *name = onnx_str(node->input[k]);
            int32_t p;
            if (!name[0] || onnx_names_get(known, name, &p) == 0)
                continue;
            if (onnx_names_get(producers, name, &p) != 0) {
                onnx_node_label(node, i, label, sizeof label);
                return onnx_error(PRT_ERR_MALFORMED,
                                  "%s: input %zu '%s' is not a graph input, an "
                                  "initializer or the output of any node",
                                  label, k, name);
            }
            if (p >= i)
                *out_sorted = 0;
            (*out_edges)++;
        }
    }
    return PRT_OK;
}

/* Producer -> consumer edges in CSR form: the consumers of node p are
 * succ[first[p]] .. succ[first[p + 1] - 1]; indeg[i] counts the inputs of
 * node i that other nodes produce (an input read twice counts twice, and
 * so is an edge twice). */
typedef struct edges {
    int32_t *indeg;
    int32_t *first; /* n + 1 entries */
    int32_t *succ;  /* nb_edges entries */
} edges;

static void edges_free(edges *e)
{
    prt_free(e->indeg);
    prt_free(e->first);
    prt_free(e->succ);
}

static prt_status build_edges(const Onnx__GraphProto *graph, const onnx_names *producers,
                              int32_t nb_edges, edges *e)
{
    const int32_t n = (int32_t)graph->n_node;
    int32_t *fill;
    e->indeg = onnx_calloc((size_t)n, sizeof *e->indeg);
    e->first = onnx_calloc((size_t)n + 1, sizeof *e->first);
    e->succ = onnx_calloc((size_t)nb_edges + 1, sizeof *e->succ);
    if (!e->indeg || !e->first || !e->succ)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    for (int32_t i = 0; i < n; i++)
        for (size_t k = 0; k < graph->node[i]->n_input; k++) {
            int32_t p = producer_of(producers, graph->node[i], k);
            if (p >= 0) {
                e->first[p + 1]++;
                e->indeg[i]++;
            }
        }
    for (int32_t i = 0; i < n; i++)
        e->first[i + 1] += e->first[i];
    fill = onnx_calloc((size_t)n + 1, sizeof *fill);
    if (!fill)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    for (int32_t i = 0; i < n; i++)
        for (size_t k = 0; k < graph->node[i]->n_input; k++) {
            int32_t p = producer_of(producers, graph->node[i], k);
            if (p >= 0)
                e->succ[e->first[p] + fill[p]++] = i;
        }
    prt_free(fill);
    return PRT_OK;
}

/* Kahn's algorithm: writes the nodes it can order into order[] and marks
 * them in done[]; returns how many there are (fewer than n: a cycle). It
 * consumes e->indeg. */
static int32_t kahn_order(int32_t n, edges *e, heap *h, int32_t *done, int32_t *order)
{
    int32_t count = 0;
    for (int32_t i = 0; i < n; i++)
        if (e->indeg[i] == 0)
            heap_push(h, i);
    while (h->n > 0) {
        int32_t v = heap_pop(h);
        order[count++] = v;
        done[v] = 1;
        for (int32_t k = e->first[v]; k < e->first[v + 1]; k++)
            if (--e->indeg[e->succ[k]] == 0)
                heap_push(h, e->succ[k]);
    }
    return count;
}

/* The error for nodes that cannot be ordered, naming a node on a cycle.
 * Every node left has a producer that is left too; walking back through
 * such producers n times must end on a cycle. */
static prt_status report_cycle(const Onnx__GraphProto *graph, const onnx_names *producers,
                               const int32_t *done, int32_t count)
{
    const int32_t n = (int32_t)graph->n_node;
    char label[512];
    int32_t v = 0;
    while (done[v])
        v++;
    for (int32_t step = 0; step < n; step++) {
        const Onnx__NodeProto *node = graph->node[v];
        for (size_t k = 0; k < node->n_input; k++) {
            int32_t p = producer_of(producers, node, k);
            if (p >= 0 && !done[p]) {
                v = p;
                break;
            }
        }
    }
    onnx_node_label(graph->node[v], v, label, sizeof label);
    return onnx_error(PRT_ERR_MALFORMED,
                      "the graph has a cycle through %s (%d of %d nodes cannot "
                      "be ordered)",
                      label, (int)(n - count), (int)n);
}

prt_status onnx_graph_order(const Onnx__GraphProto *graph, const onnx_names *known,
                            int32_t *order)
{
    const int32_t n = (int32_t)graph->n_node;
    onnx_names producers = {0};
    edges e = {NULL, NULL, NULL};
    int32_t *done = NULL;
    heap h = {NULL, 0};
    int32_t nb_edges = 0, count;
    int sorted = 1;
    prt_status st = index_producers(graph, known, &producers);
    if (!st)
        st = check_inputs(graph, known, &producers, &nb_edges, &sorted);
    if (st || sorted) {
        /* The file's order is valid: most models, and no sorting cost. */
        for (int32_t i = 0; i < n && !st; i++)
            order[i] = i;
        onnx_names_free(&producers);
        return st;
    }
    st = build_edges(graph, &producers, nb_edges, &e);
    if (!st) {
        done = onnx_calloc((size_t)n, sizeof *done);
        h.v = onnx_calloc((size_t)n, sizeof *h.v);
        if (!done || !h.v)
            st = onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    }
    if (!st) {
        count = kahn_order(n, &e, &h, done, order);
        if (count < n)
            st = report_cycle(graph, &producers, done, count);
    }
    edges_free(&e);
    prt_free(done);
    prt_free(h.v);
    onnx_names_free(&producers);
    return st;
}

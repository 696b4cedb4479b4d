/* The order in which nodes are imported. ONNX requires nodes to be listed in
 * topological order, but exporters get it wrong often enough that the
 * importer sorts instead of refusing; a cycle (no order exists) is an error
 * that names a node on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

void onnx_node_label(const Onnx__NodeProto *node, int32_t index, char *buf,
                     size_t cap)
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

prt_status onnx_graph_order(const Onnx__GraphProto *graph, const onnx_names *known,
                            int32_t *order)
{
    const int32_t n = (int32_t)graph->n_node;
    onnx_names producers = {0};
    int32_t *indeg = NULL, *first = NULL, *succ = NULL, *done = NULL;
    heap h = {NULL, 0};
    int32_t nb_edges = 0, count = 0, sorted = 1;
    char label[512];
    prt_status st = PRT_OK;

    /* Who produces each name. */
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
            } else if (onnx_names_get(&producers, name, &other) == 0) {
                char first_label[512];
                onnx_node_label(graph->node[other], other, first_label,
                                sizeof first_label);
                onnx_node_label(node, i, label, sizeof label);
                st = onnx_error(PRT_ERR_MALFORMED,
                                "%s: output '%s' is also produced by %s (names "
                                "must be assigned once)",
                                label, name, first_label);
            } else {
                st = onnx_names_put(&producers, name, i);
            }
        }
    }

    /* Every input must have a source; count edges. */
    for (int32_t i = 0; i < n && !st; i++) {
        const Onnx__NodeProto *node = graph->node[i];
        for (size_t k = 0; k < node->n_input; k++) {
            const char *name = onnx_str(node->input[k]);
            int32_t p;
            if (!name[0] || onnx_names_get(known, name, &p) == 0)
                continue;
            if (onnx_names_get(&producers, name, &p) != 0) {
                onnx_node_label(node, i, label, sizeof label);
                st = onnx_error(PRT_ERR_MALFORMED,
                                "%s: input %zu '%s' is not a graph input, an "
                                "initializer or the output of any node",
                                label, k, name);
                break;
            }
            if (p >= i)
                sorted = 0;
            nb_edges++;
        }
    }
    if (st || sorted) {
        for (int32_t i = 0; i < n && !st; i++)
            order[i] = i;
        onnx_names_free(&producers);
        return st;
    }

    /* Kahn's algorithm over producer -> consumer edges (CSR by producer). */
    indeg = onnx_calloc((size_t)n, sizeof *indeg);
    first = onnx_calloc((size_t)n + 1, sizeof *first);
    succ = onnx_calloc((size_t)nb_edges + 1, sizeof *succ);
    done = onnx_calloc((size_t)n, sizeof *done);
    h.v = onnx_calloc((size_t)n, sizeof *h.v);
    if (!indeg || !first || !succ || !done || !h.v) {
        st = onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
        goto out;
    }
    for (int32_t i = 0; i < n; i++)
        for (size_t k = 0; k < graph->node[i]->n_input; k++) {
            int32_t p = producer_of(&producers, graph->node[i], k);
            if (p >= 0) {
                first[p + 1]++;
                indeg[i]++;
            }
        }
    for (int32_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    {
        int32_t *fill = onnx_calloc((size_t)n + 1, sizeof *fill);
        if (!fill) {
            st = onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
            goto out;
        }
        for (int32_t i = 0; i < n; i++)
            for (size_t k = 0; k < graph->node[i]->n_input; k++) {
                int32_t p = producer_of(&producers, graph->node[i], k);
                if (p >= 0)
                    succ[first[p] + fill[p]++] = i;
            }
        prt_free(fill);
    }
    for (int32_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            heap_push(&h, i);
    while (h.n > 0) {
        int32_t v = heap_pop(&h);
        order[count++] = v;
        done[v] = 1;
        for (int32_t e = first[v]; e < first[v + 1]; e++)
            if (--indeg[succ[e]] == 0)
                heap_push(&h, succ[e]);
    }
    if (count < n) {
        /* Every node left has a producer that is left too. Walking back
         * through such producers n times must end on a cycle. */
        int32_t v = 0;
        while (done[v])
            v++;
        for (int32_t step = 0; step < n; step++) {
            const Onnx__NodeProto *node = graph->node[v];
            for (size_t k = 0; k < node->n_input; k++) {
                int32_t p = producer_of(&producers, node, k);
                if (p >= 0 && !done[p]) {
                    v = p;
                    break;
                }
            }
        }
        onnx_node_label(graph->node[v], v, label, sizeof label);
        st = onnx_error(PRT_ERR_MALFORMED,
                        "the graph has a cycle through %s (%d of %d nodes cannot "
                        "be ordered)",
                        label, (int)(n - count), (int)n);
    }
out:
    prt_free(indeg);
    prt_free(first);
    prt_free(succ);
    prt_free(done);
    prt_free(h.v);
    onnx_names_free(&producers);
    return st;
}

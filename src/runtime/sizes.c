/*
 * Sizes that stay on the device (context_impl.h): the part of the shape
 * program that depends on size tensors, laid out for dev_ops.eval_sizes; a
 * launch after each layer that writes sizes; and the one wait that brings
 * them to the host when someone asks.
 */
#include <string.h>

#include "base/plugin_label.h"
#include "runtime/context_impl.h"

/* Operand code of node x (device.h): an earlier entry or a leaf. */
static int32_t code_of(const uint8_t *dd, const int32_t *slot, int32_t *leaf_of,
                       prt_context *c, int32_t x, int *too_many)
{
    if (dd[x])
        return slot[x];
    if (leaf_of[x] < 0) {
        if (c->nb_leaves == DEV_MAX_LEAVES) {
            *too_many = 1;
            return -1;
        }
        leaf_of[x] = c->nb_leaves;
        c->leaf_node[c->nb_leaves++] = x;
    }
    return -(leaf_of[x] + 1);
}

/* Lays out the plan on the host: nodes, dim slots, leaves. 0 when the
 * engine does not fit the launch's limits (then sizes go through the host). */
static int plan(prt_context *c, const uint8_t *dd, int32_t *slot, int32_t *leaf_of,
                dev_node *nodes, int32_t *dim_code, int32_t *nb_nodes, int32_t *nb_dims)
{
    const prt_engine *e = c->e;
    const expr_program *p = &e->exprs;
    int too_many = 0;
    int32_t n = 0, nd = 0;
    for (int32_t i = 0; i < p->nb_nodes; i++) {
        slot[i] = -1;
        leaf_of[i] = -1;
    }
    for (int32_t i = 0; i < p->nb_nodes && !too_many; i++) {
        const expr_node *x = &p->nodes[i];
        dev_node *dn;
        if (!dd[i])
            continue;
        dn = &nodes[n];
        memset(dn, 0, sizeof *dn);
        dn->kind = x->kind;
        if (x->kind == EXPR_SIZE) {
            dn->imm = x->imm;
            dn->b = code_of(dd, slot, leaf_of, c, x->b, &too_many);
        } else {
            dn->op = x->op;
            dn->a = code_of(dd, slot, leaf_of, c, x->a, &too_many);
            dn->b = code_of(dd, slot, leaf_of, c, x->b, &too_many);
        }
        slot[i] = n++;
    }
    for (int32_t t = 0; t < e->nb_tensors && !too_many; t++) {
        c->dims_off[t] = -1;
        if (c->dep_layer[t] < 0)
            continue;
        c->dims_off[t] = nd;
        for (int32_t d = 0; d < e->tensors[t].nb_dims; d++)
            dim_code[nd++] =
                code_of(dd, slot, leaf_of, c, e->tensors[t].dim_expr[d], &too_many);
    }
    /* A layer may write at most DEV_MAX_NEW_SIZES sizes per launch. */
    for (int32_t li = 0; li < e->nb_layers && !too_many; li++) {
        int32_t k = 0;
        for (int32_t o = 0; o < e->layers[li].nb_outputs; o++)
            k += e->tensors[e->layers[li].outputs[o]].size_id >= 0;
        too_many |= k > DEV_MAX_NEW_SIZES;
    }
    *nb_nodes = n;
    *nb_dims = nd;
    return !too_many;
}

/* Offsets of the plan's arrays in one device block. */
typedef struct ds_layout {
    size_t nodes, producer, size_values, node_values, dim_code, dims, total;
} ds_layout;

static size_t up8(size_t x)
{
    return (x + 7) / 8 * 8;
}

static ds_layout layout(int32_t nb_nodes, int32_t nb_sizes, int32_t nb_dims)
{
    ds_layout l;
    l.nodes = 0;
    l.producer = up8(l.nodes + sizeof(dev_node) * (size_t)nb_nodes);
    l.size_values = up8(l.producer + sizeof(int32_t) * (size_t)nb_sizes);
    l.node_values = up8(l.size_values + sizeof(int64_t) * (size_t)nb_sizes);
    l.dim_code = up8(l.node_values + sizeof(int64_t) * (size_t)nb_nodes);
    l.dims = up8(l.dim_code + sizeof(int32_t) * (size_t)nb_dims);
    l.total = up8(l.dims + sizeof(int64_t) * (size_t)nb_dims) + 8;
    return l;
}

/* Puts the host plan on the device: one block, one upload. */
static prt_status upload(prt_context *c, const dev_node *nodes, const int32_t *dim_code,
                         int32_t n, int32_t nd)
{
    const prt_engine *e = c->e;
    ds_layout l = layout(n, e->nb_sizes, nd);
    uint8_t *host = NULL, *dev = NULL;
    prt_status st = c->dev->alloc(l.total, (void **)&dev);
    if (!st)
        st = c->dev->alloc_host(l.total + sizeof(dev_size_status) +
                                    sizeof(int64_t) * (size_t)e->nb_sizes,
                                (void **)&host);
    if (st) {
        c->dev->free(dev);
        return base_error_prefix(st, "prt_context_create: memory for device-side sizes");
    }
    c->ds_block = dev;
    /* The pinned block stages the upload, then holds the status and the
     * sizes read back. */
    memset(host, 0, l.total);
    memcpy(host + l.nodes, nodes, sizeof(dev_node) * (size_t)n);
    memcpy(host + l.producer, c->size_layer, sizeof(int32_t) * (size_t)e->nb_sizes);
    memcpy(host + l.dim_code, dim_code, sizeof(int32_t) * (size_t)nd);
    st = c->dev->copy(dev, host, l.total, DEV_COPY_H2D, NULL);
    if (!st)
        st = c->dev->sync();
    c->ds_status = (dev_size_status *)(void *)(host + l.total);
    c->ds_host_sizes = (int64_t *)(void *)(host + l.total + sizeof(dev_size_status));
    memset(c->ds_status, 0, sizeof *c->ds_status);
    c->ds.nb_nodes = n;
    c->ds.nodes = (const dev_node *)(void *)(dev + l.nodes);
    c->ds.nb_sizes = e->nb_sizes;
    c->ds.producer = (const int32_t *)(void *)(dev + l.producer);
    c->ds.size_values = (int64_t *)(void *)(dev + l.size_values);
    c->ds.node_values = (int64_t *)(void *)(dev + l.node_values);
    c->ds.nb_dims = nd;
    c->ds.dim_code = (const int32_t *)(void *)(dev + l.dim_code);
    c->ds.dims = (int64_t *)(void *)(dev + l.dims);
    c->ds.status = c->ds_status;
    return st;
}

prt_status ctx_sizes_create(prt_context *c)
{
    const prt_engine *e = c->e;
    size_t nn = (size_t)e->exprs.nb_nodes + 1;
    uint8_t *dd;
    int32_t *slot, *leaf_of, *dim_code, n = 0, nd = 0, total_dims = 0;
    dev_node *nodes;
    prt_status st = PRT_OK;
    c->device_sizes = 0;
    for (int32_t t = 0; t < e->nb_tensors; t++)
        c->dims_off[t] = -1;
    if (e->nb_sizes == 0 || c->dev->host_visible || !c->dev->eval_sizes)
        return PRT_OK;
    for (int32_t t = 0; t < e->nb_tensors; t++)
        total_dims += e->tensors[t].nb_dims;
    dd = engine_size_deps(e);
    slot = base_malloc(sizeof(int32_t) * nn);
    leaf_of = base_malloc(sizeof(int32_t) * nn);
    dim_code = base_malloc(sizeof(int32_t) * ((size_t)total_dims + 1));
    nodes = base_malloc(sizeof(dev_node) * nn);
    if (!dd || !slot || !leaf_of || !dim_code || !nodes) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory");
    } else if (plan(c, dd, slot, leaf_of, nodes, dim_code, &n, &nd)) {
        c->first_dd_layer = e->nb_layers;
        for (int32_t s = 0; s < e->nb_sizes; s++)
            if (c->size_layer[s] < c->first_dd_layer)
                c->first_dd_layer = c->size_layer[s];
        st = upload(c, nodes, dim_code, n, nd);
        c->device_sizes = st == PRT_OK;
    } else {
        base_log(PRT_SEV_INFO,
                 "the engine's data-dependent shapes need more than a device "
                 "launch holds; sizes are read on the host after each layer that writes "
                 "them");
        c->nb_leaves = 0;
    }
    base_free(dd);
    base_free(slot);
    base_free(leaf_of);
    base_free(dim_code);
    base_free(nodes);
    return st;
}

void ctx_sizes_destroy(prt_context *c)
{
    if (c->ds_block)
        c->dev->free(c->ds_block);
    if (c->ds_status) /* the start of the pinned block is the staging area */
        c->dev->free_host((uint8_t *)c->ds_status -
                          layout(c->ds.nb_nodes, c->ds.nb_sizes, c->ds.nb_dims).total);
    c->ds_block = NULL;
    c->ds_status = NULL;
}

prt_status ctx_sizes_launch(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    dev_size_args *a = c->args;
    prt_status st;
    a->layer = li;
    a->first = li == c->first_dd_layer;
    a->nb_new = 0;
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        const eng_tensor *t = &e->tensors[l->outputs[o]];
        if (t->size_id < 0)
            continue;
        a->new_id[a->nb_new] = t->size_id;
        a->new_dtype[a->nb_new] = t->dtype;
        a->new_ptr[a->nb_new] = c->out_ptrs[o];
        a->nb_new++;
    }
    a->nb_leaves = c->nb_leaves;
    for (int32_t k = 0; k < c->nb_leaves; k++) {
        if (!c->known[c->leaf_node[k]])
            return base_error(PRT_ERR_INTERNAL,
                              "layer '%s': a dim its sizes need is "
                              "unknown",
                              l->name);
        a->leaves[k] = c->values[c->leaf_node[k]];
    }
    st = c->dev->eval_sizes(&c->ds, a, stream);
    return st ? base_error_prefix(st, "layer '%s'", l->name) : PRT_OK;
}

prt_status ctx_sizes_fetch(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    prt_status st =
        c->dev->copy(c->ds_host_sizes, c->ds.size_values,
                     sizeof(int64_t) * (size_t)e->nb_sizes, DEV_COPY_D2H, stream);
    if (!st)
        st = c->dev->stream_sync(stream);
    if (st)
        return base_error_prefix(st, "reading the sizes of the run");
    if (c->ds_status->failed == 2) {
        const dev_size_status *f = c->ds_status;
        const eng_layer *l = &e->layers[f->layer];
        return base_error(PRT_ERR_PLUGIN,
                          "layer '%s' (plugin %s) did not write its size tensor '%s': a "
                          "data-dependent output's true size must be written at every "
                          "enqueue",
                          l->name,
                          base_plugin_label(l->plugin_namespace, l->plugin_name).s,
                          e->tensors[c->size_tensor[f->size_id]].name);
    }
    if (c->ds_status->failed) {
        const dev_size_status *f = c->ds_status;
        const eng_layer *l = &e->layers[f->layer];
        return base_error(
            PRT_ERR_PLUGIN,
            "layer '%s' (plugin %s) wrote %lld to size tensor '%s', outside "
            "its declared bounds 0..%lld; its outputs may be corrupt",
            l->name, base_plugin_label(l->plugin_namespace, l->plugin_name).s,
            (long long)f->value, e->tensors[c->size_tensor[f->size_id]].name,
            (long long)f->upper);
    }
    for (int32_t s = 0; s < e->nb_sizes; s++)
        if (c->size_layer[s] < li) {
            c->size_values[s] = c->ds_host_sizes[s];
            c->size_known[s] = 1;
        }
    return ctx_eval_exact(c);
}

/*
 * Build phase 3a: layers whose output is a constant shape value become that
 * constant. Once shapes are known, a small integer tensor's values are
 * expressions (bld_tensor.values); where a built-in layer's only output has
 * values that are all numbers — Shape -> Gather of a static dim, then
 * Add/Div/Mul on it, as exporters write a channel split's Slice ends — the
 * layer computes at every run what the build already knows. Such a layer is
 * removed and its output becomes a network constant holding the values, so
 * the layers reading it read a constant, and the chain that fed it (the
 * Shape, the Gather) is read by nothing and skipped at run time (engine.c).
 *
 * Left as layers: outputs of the network (the user reads them as written),
 * outputs of user plugins (a plugin's enqueue may do more than its stated
 * values say), multi-output layers, and values that depend on an input's
 * dynamic dims or on data. The build log (PRT_SEV_INFO) gives the count.
 *
 * Like the DQ fold (fold.c), the result is a new network the build starts
 * again on: names and plugins are borrowed from b->net, the constants'
 * data owned by it (bld_constfold_free).
 */
#include <string.h>

#include "builder/builder.h"

typedef struct cf_net {
    prt_network n; /* first: the build sees a prt_network */
    void **consts;
    int32_t nb_consts;
} cf_net;

static int is_builtin(const prt_plugin *p)
{
    const char *ns = p->vt->core->plugin_namespace(p);
    return ns && strcmp(ns, PRT_BUILTIN_NAMESPACE) == 0;
}

/* The element count of tensor t when every dim is a number, else -1. */
static int64_t static_count(const bld *b, int32_t t)
{
    int64_t n = 1, v;
    for (int32_t d = 0; d < b->t[t].dims.nb_dims; d++) {
        if (!expr_is_const(b->pool, b->t[t].dims.d[d], &v) || v < 0)
            return -1;
        n *= v;
    }
    return n;
}

/* 1 when layer li's only output has values that are all numbers, is not an
 * output of the network, and li is a built-in op. */
static int foldable(const bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    const bld_tensor *t;
    int64_t v;
    if (l->nb_outputs != 1 || !is_builtin(l->plugin))
        return 0;
    t = &b->t[l->outputs[0]];
    if (b->net->tensors[l->outputs[0]].is_output || t->values.nb_dims < 0 ||
        (t->dtype != PRT_INT32 && t->dtype != PRT_INT64 && t->dtype != PRT_BOOL) ||
        static_count(b, l->outputs[0]) != t->values.nb_dims)
        return 0;
    for (int32_t i = 0; i < t->values.nb_dims; i++)
        if (!expr_is_const(b->pool, t->values.d[i], &v))
            return 0;
    return 1;
}

/* Tensor t's values as a constant's bytes (owned by the caller). */
static void *values_data(const bld *b, int32_t t, int64_t *bytes)
{
    const bld_tensor *bt = &b->t[t];
    const int32_t n = bt->values.nb_dims;
    const size_t es = prt_dtype_size(bt->dtype);
    uint8_t *p = base_malloc(es * (size_t)n + 1);
    for (int32_t i = 0; p && i < n; i++) {
        int64_t v = 0;
        expr_is_const(b->pool, bt->values.d[i], &v);
        if (bt->dtype == PRT_INT64)
            memcpy(p + 8 * (size_t)i, &v, 8);
        else if (bt->dtype == PRT_INT32) {
            int32_t w = (int32_t)v;
            memcpy(p + 4 * (size_t)i, &w, 4);
        } else
            p[i] = v != 0;
    }
    *bytes = (int64_t)es * n;
    return p;
}

void bld_constfold_free(prt_network *net)
{
    cf_net *cn = (cf_net *)net;
    if (!cn)
        return;
    for (int32_t i = 0; i < cn->nb_consts; i++)
        base_free(cn->consts[i]);
    base_free(cn->consts);
    /* The rest is laid out as a folded network's, cn at its address. */
    bld_fold_free(net);
}

/* The network with the layers of `gone` removed and their outputs
 * constants. */
static prt_status constfold_network(const bld *b, const uint8_t *gone, int32_t nb_gone,
                                    prt_network **out)
{
    const prt_network *net = b->net;
    cf_net *cn = base_calloc(1, sizeof *cn);
    int32_t *tmap = base_malloc(sizeof(int32_t) * (size_t)(net->nb_tensors + 1));
    int32_t *lmap = base_malloc(sizeof(int32_t) * (size_t)(net->nb_layers + 1));
    uint8_t *read = base_calloc((size_t)net->nb_tensors + 1, 1);
    int32_t nl = 0, nt = 0;
    prt_status st = PRT_OK;
    if (cn)
        cn->consts = base_calloc((size_t)nb_gone + 1, sizeof(void *));
    if (!cn || !cn->consts || !tmap || !lmap || !read) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        lmap[li] = gone[li] ? -1 : nl++;
        if (gone[li])
            continue;
        for (int32_t k = 0; k < l->nb_inputs; k++)
            read[l->inputs[k]] = 1;
        for (int32_t k = 0; k < l->nb_shape_inputs; k++)
            read[l->shape_inputs[k]] = 1;
    }
    /* Tensors: what a kept layer makes, the user gave, and constants (old
     * and new) a kept layer still reads. */
    for (int32_t t = 0; t < net->nb_tensors; t++) {
        const net_tensor *tt = &net->tensors[t];
        int made = tt->producer >= 0 && lmap[tt->producer] >= 0;
        int konst = tt->const_bytes >= 0 || (tt->producer >= 0 && gone[tt->producer]);
        int keep = tt->input_index >= 0 || tt->is_output || made || (konst && read[t]);
        tmap[t] = keep ? nt++ : -1;
    }
    st = bld_net_subset(net, lmap, nl, tmap, nt, &cn->n);
    /* The removed layers' outputs that stay: constants of their values. */
    for (int32_t t = 0; !st && t < net->nb_tensors; t++) {
        const net_tensor *tt = &net->tensors[t];
        net_tensor *c;
        void *data;
        if (tmap[t] < 0 || tt->producer < 0 || !gone[tt->producer])
            continue;
        c = &cn->n.tensors[tmap[t]];
        data = values_data(b, t, &c->const_bytes);
        if (!data) {
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
            break;
        }
        cn->consts[cn->nb_consts++] = data;
        c->const_data = data;
        c->producer = -1;
        c->producer_output = 0;
        c->dtype = b->t[t].dtype;
        c->dims.nb_dims = b->t[t].dims.nb_dims;
        for (int32_t d = 0; d < c->dims.nb_dims; d++)
            expr_is_const(b->pool, b->t[t].dims.d[d], &c->dims.d[d]);
    }
done:
    if (st && (!cn || !cn->consts))
        base_free(cn);
    else if (st)
        bld_constfold_free(&cn->n);
    else
        *out = &cn->n;
    base_free(tmap);
    base_free(lmap);
    base_free(read);
    return st;
}

prt_status bld_constfold(const bld *b, prt_network **out)
{
    const prt_network *net = b->net;
    uint8_t *gone;
    int32_t nb = 0;
    prt_status st = PRT_OK;
    *out = NULL;
    gone = base_calloc((size_t)net->nb_layers + 1, 1);
    if (!gone)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t li = 0; li < net->nb_layers; li++)
        if (foldable(b, li)) {
            gone[li] = 1;
            nb++;
        }
    if (nb) {
        base_log(PRT_SEV_INFO,
                 "build: %d layer(s) whose output is a constant shape value "
                 "became constants",
                 (int)nb);
        st = constfold_network(b, gone, nb, out);
    }
    base_free(gone);
    return st;
}

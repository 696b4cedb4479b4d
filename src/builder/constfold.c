/*
 * Build phase 3a: layers whose output the build can know become constants.
 * Two kinds:
 *  - values: once shapes are known, a small integer tensor's values are
 *    expressions (bld_tensor.values); where a built-in layer's only output
 *    has values that are all numbers — Shape -> Gather of a static dim,
 *    then Add/Div/Mul on it, as exporters write a channel split's Slice
 *    ends — the layer computes at every run what the build already knows;
 *  - evaluated: a built-in layer every input of which is a constant (of
 *    the network, or made by a layer folded before it) and whose output
 *    has static dims and at most CF_EVAL_MAX_BYTES (beyond a MiB, at most
 *    twice its inputs': no broadcast bloating the engine) — BERT's
 *    position ids Range(0, seq) at a pinned seq, the Gather of the
 *    position table by them, a mask's comparisons — is run once here, on
 *    the CPU, as a one-layer engine (bld_build_plain: no folds inside),
 *    and its output is what it wrote.
 * Such a layer is removed and its output becomes a network constant, so
 * the layers reading it read a constant, and a chain that fed only it (a
 * Shape, a Gather) is removed too or read by nothing and skipped at run
 * time (engine.c).
 *
 * Left as layers: outputs of the network (the user reads them as written),
 * outputs of user plugins (a plugin's enqueue may do more than its stated
 * values say), multi-output layers, quantized tensors and the quantization
 * ops (the DQ fold, fold.c, takes an integer weight with its scale into
 * the op that reads it; a float copy would undo that), values that depend
 * on an input's dynamic dims or on data, and a layer whose evaluation
 * fails (logged, verbose: it runs as before). The build log
 * (PRT_SEV_INFO) gives the counts.
 *
 * Like the DQ fold, the result is a new network the build starts again on:
 * names and plugins are borrowed from b->net, the constants' data owned by
 * it (bld_constfold_free).
 */
#include <stdio.h>
#include <string.h>

#include "builder/builder.h"

/* The largest output the build evaluates (position embeddings of a few
 * hundred rows; a weight's Transpose or Cast). */
#define CF_EVAL_MAX_BYTES ((int64_t)16 << 20)
/* Above this, an output at most twice its inputs' bytes. */
#define CF_EVAL_GROW_BYTES ((int64_t)1 << 20)

typedef struct cf_net {
    prt_network n; /* first: the build sees a prt_network */
    void **consts;
    int32_t nb_consts;
} cf_net;

/* What the fold knows about tensors: the data of every constant, the
 * network's own (borrowed) and those of folded layers (owned). */
typedef struct cf_state {
    const bld *b;
    const void **data; /* [tensor]: a constant's bytes, or NULL */
    void **owned;      /* [tensor]: data this fold made */
    uint8_t *gone;     /* [layer]: folded */
    int32_t nb_values, nb_eval;
} cf_state;

static int builtin_name(const prt_plugin *p, const char **name)
{
    const char *ns = p->vt->core->plugin_namespace(p);
    *name = p->vt->core->name(p);
    return ns && *name && strcmp(ns, PRT_BUILTIN_NAMESPACE) == 0;
}

/* The dims of tensor t when every one is a number (*count their product),
 * else 0. */
static int static_dims(const bld *b, int32_t t, prt_dims *d, int64_t *count)
{
    *count = 1;
    d->nb_dims = b->t[t].dims.nb_dims;
    for (int32_t k = 0; k < d->nb_dims; k++) {
        if (!expr_is_const(b->pool, b->t[t].dims.d[k], &d->d[k]) || d->d[k] < 0)
            return 0;
        *count *= d->d[k];
    }
    return 1;
}

/* 1 when layer li is a built-in op with one output, not an output of the
 * network, not quantized; *name its op. */
static int candidate(const bld *b, int32_t li, const char **name)
{
    const net_layer *l = &b->net->layers[li];
    const net_tensor *y;
    if (l->nb_outputs != 1 || !builtin_name(l->plugin, name))
        return 0;
    y = &b->net->tensors[l->outputs[0]];
    return !y->is_output && y->quant.d.kind == PRT_QUANT_NONE;
}

/* Layer li's output as values that are all numbers: its bytes (owned by
 * the caller), else NULL with *ok 1 when it has no such values. */
static void *values_data(const bld *b, int32_t li, int *ok)
{
    const int32_t t = b->net->layers[li].outputs[0];
    const bld_tensor *bt = &b->t[t];
    const int32_t n = bt->values.nb_dims;
    prt_dims d;
    int64_t count, v;
    uint8_t *p;
    size_t es;
    *ok = 1;
    if (n < 0 ||
        (bt->dtype != PRT_INT32 && bt->dtype != PRT_INT64 && bt->dtype != PRT_BOOL) ||
        !static_dims(b, t, &d, &count) || count != n)
        return NULL;
    for (int32_t i = 0; i < n; i++)
        if (!expr_is_const(b->pool, bt->values.d[i], &v))
            return NULL;
    es = prt_dtype_size(bt->dtype);
    p = base_malloc(es * (size_t)n + 1);
    if (!p) {
        *ok = 0;
        return NULL;
    }
    for (int32_t i = 0; i < n; i++) {
        expr_is_const(b->pool, bt->values.d[i], &v);
        if (bt->dtype == PRT_INT64)
            memcpy(p + 8 * (size_t)i, &v, 8);
        else if (bt->dtype == PRT_INT32) {
            int32_t w = (int32_t)v;
            memcpy(p + 4 * (size_t)i, &w, 4);
        } else
            p[i] = v != 0;
    }
    return p;
}

/* The quantization ops stay layers (see above). */
static int quant_op(const char *name)
{
    return strstr(name, "uantize") || strncmp(name, "QLinear", 7) == 0 ||
           strstr(name, "Integer") || strncmp(name, "Quant", 5) == 0;
}

/* Whether layer li can be evaluated: every input a constant of known
 * data and static dims, not quantized; the op runs on the CPU; the output
 * has static dims and at most CF_EVAL_MAX_BYTES. */
static int evaluable(const cf_state *s, int32_t li, const char *name)
{
    const bld *b = s->b;
    const net_layer *l = &b->net->layers[li];
    prt_dims d;
    int64_t count, in_bytes = 0, out_bytes;
    if (quant_op(name) ||
        !(l->plugin->vt->core->devices(l->plugin) & (1u << PRT_DEVICE_CPU)))
        return 0;
    for (int32_t k = 0; k < l->nb_inputs + l->nb_shape_inputs; k++) {
        int32_t t = k < l->nb_inputs ? l->inputs[k] : l->shape_inputs[k - l->nb_inputs];
        if (!s->data[t] || b->net->tensors[t].quant.d.kind != PRT_QUANT_NONE ||
            !static_dims(b, t, &d, &count))
            return 0;
        in_bytes += count * (int64_t)prt_dtype_size(b->t[t].dtype);
    }
    if (!static_dims(b, l->outputs[0], &d, &count))
        return 0;
    out_bytes = count * (int64_t)prt_dtype_size(b->t[l->outputs[0]].dtype);
    /* A broadcast that would grow the engine file by more than a MiB is
     * cheaper done at run time. */
    return out_bytes <= CF_EVAL_MAX_BYTES &&
           (out_bytes <= CF_EVAL_GROW_BYTES || out_bytes <= 2 * in_bytes);
}

/* Tensor t of b's network as a constant of n (once: *ids maps the ones
 * added, nb of them). */
static prt_status eval_input(const cf_state *s, prt_network *n, int32_t t, int32_t *map_t,
                             int32_t *map_id, int32_t *nb, int32_t *out)
{
    const bld *b = s->b;
    char name[32];
    prt_dims d;
    int64_t count;
    for (int32_t i = 0; i < *nb; i++)
        if (map_t[i] == t) {
            *out = map_id[i];
            return PRT_OK;
        }
    static_dims(b, t, &d, &count);
    snprintf(name, sizeof name, "c%d", (int)*nb);
    map_t[*nb] = t;
    prt_status st = prt_network_add_constant(n, name, b->t[t].dtype, &d, s->data[t], out);
    if (!st)
        map_id[(*nb)++] = *out;
    return st;
}

/* Runs layer li once on the CPU with its constant inputs; its output's
 * bytes in *out (owned by the caller). */
static prt_status evaluate(const cf_state *s, int32_t li, void **out)
{
    const bld *b = s->b;
    const net_layer *l = &b->net->layers[li];
    int32_t in[128], sin[128], map_t[256], map_id[256], nb = 0, layer, y;
    prt_network *n = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_plugin *p = NULL;
    prt_dims want, got;
    int64_t count;
    void *buf = NULL;
    prt_status st;
    *out = NULL;
    if (l->nb_inputs > 128 || l->nb_shape_inputs > 128)
        return PRT_ERR_UNSUPPORTED;
    static_dims(b, l->outputs[0], &want, &count);
    st = prt_network_create(&n);
    for (int32_t k = 0; !st && k < l->nb_inputs; k++)
        st = eval_input(s, n, l->inputs[k], map_t, map_id, &nb, &in[k]);
    for (int32_t k = 0; !st && k < l->nb_shape_inputs; k++)
        st = eval_input(s, n, l->shape_inputs[k], map_t, map_id, &nb, &sin[k]);
    if (!st) {
        p = l->plugin->vt->runtime->clone(l->plugin);
        st = p ? PRT_OK : base_error(PRT_ERR_PLUGIN, "the plugin's clone failed");
    }
    if (!st) {
        st = prt_network_add_plugin(n, in, l->nb_inputs, sin, l->nb_shape_inputs, p,
                                    &layer);
        if (st)
            network_destroy_plugin(p);
    }
    if (!st)
        st = prt_network_get_layer_output(n, layer, 0, &y);
    if (!st)
        st = prt_network_set_tensor_name(n, y, "y");
    if (!st)
        st = prt_network_mark_output(n, y);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = bld_build_plain(n, cfg, b->reg, &e);
    if (!st)
        st = prt_context_create(e, &ctx);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "y", &got);
    if (!st && (got.nb_dims != want.nb_dims ||
                memcmp(got.d, want.d, sizeof(int64_t) * (size_t)want.nb_dims) != 0))
        st = base_error(PRT_ERR_INTERNAL, "its output's dims differ from the build's");
    if (!st) {
        buf = base_malloc((size_t)count * prt_dtype_size(b->t[l->outputs[0]].dtype) + 1);
        st = buf ? PRT_OK : base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (!st)
        st = prt_context_set_tensor_address(ctx, "y", buf);
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(n);
    if (st)
        base_free(buf);
    else
        *out = buf;
    return st;
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

/* The network with the folded layers removed and their outputs constants
 * (the data moves from s->owned to the network). */
static prt_status constfold_network(cf_state *s, prt_network **out)
{
    const bld *b = s->b;
    const prt_network *net = b->net;
    cf_net *cn = base_calloc(1, sizeof *cn);
    int32_t *tmap = base_malloc(sizeof(int32_t) * (size_t)(net->nb_tensors + 1));
    int32_t *lmap = base_malloc(sizeof(int32_t) * (size_t)(net->nb_layers + 1));
    uint8_t *read = base_calloc((size_t)net->nb_tensors + 1, 1);
    int32_t nl = 0, nt = 0;
    prt_status st = PRT_OK;
    if (cn)
        cn->consts = base_calloc((size_t)(s->nb_values + s->nb_eval) + 1, sizeof(void *));
    if (!cn || !cn->consts || !tmap || !lmap || !read) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        lmap[li] = s->gone[li] ? -1 : nl++;
        if (s->gone[li])
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
        int konst = tt->const_bytes >= 0 || (tt->producer >= 0 && s->gone[tt->producer]);
        int keep = tt->input_index >= 0 || tt->is_output || made || (konst && read[t]);
        tmap[t] = keep ? nt++ : -1;
    }
    st = bld_net_subset(net, lmap, nl, tmap, nt, &cn->n);
    /* The folded layers' outputs that stay: constants of their data. */
    for (int32_t t = 0; !st && t < net->nb_tensors; t++) {
        const net_tensor *tt = &net->tensors[t];
        net_tensor *c;
        int64_t count;
        if (tmap[t] < 0 || tt->producer < 0 || !s->gone[tt->producer])
            continue;
        c = &cn->n.tensors[tmap[t]];
        static_dims(b, t, &c->dims, &count);
        c->dtype = b->t[t].dtype;
        c->const_bytes = count * (int64_t)prt_dtype_size(c->dtype);
        c->const_data = s->owned[t];
        cn->consts[cn->nb_consts++] = s->owned[t];
        s->owned[t] = NULL;
        c->producer = -1;
        c->producer_output = 0;
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
    cf_state s;
    prt_status st = PRT_OK;
    *out = NULL;
    memset(&s, 0, sizeof s);
    s.b = b;
    s.data = base_calloc((size_t)net->nb_tensors + 1, sizeof(void *));
    s.owned = base_calloc((size_t)net->nb_tensors + 1, sizeof(void *));
    s.gone = base_calloc((size_t)net->nb_layers + 1, 1);
    if (!s.data || !s.owned || !s.gone)
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t t = 0; !st && t < net->nb_tensors; t++)
        if (net->tensors[t].const_bytes >= 0)
            s.data[t] = net->tensors[t].const_data;
    for (int32_t li = 0; !st && li < net->nb_layers; li++) {
        const char *name;
        const int32_t y = net->layers[li].outputs[0];
        void *data;
        int ok;
        if (!candidate(b, li, &name))
            continue;
        data = values_data(b, li, &ok);
        if (!ok) {
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
            break;
        }
        if (data) {
            s.nb_values++;
        } else if (evaluable(&s, li, name)) {
            base_clear_error();
            if (evaluate(&s, li, &data) != PRT_OK) {
                base_log(PRT_SEV_VERBOSE,
                         "build: layer '%s' (%s) has constant inputs but stays a layer: "
                         "evaluating it failed: %s",
                         net->layers[li].name, name, prt_last_error());
                base_clear_error();
                continue;
            }
            s.nb_eval++;
        } else {
            continue;
        }
        s.gone[li] = 1;
        s.owned[y] = data;
        s.data[y] = data;
    }
    if (!st && s.nb_values + s.nb_eval > 0) {
        base_log(PRT_SEV_INFO,
                 "build: %d layer(s) whose output the build knows became constants "
                 "(%d shape values, %d evaluated on the CPU)",
                 (int)(s.nb_values + s.nb_eval), (int)s.nb_values, (int)s.nb_eval);
        st = constfold_network(&s, out);
    }
    for (int32_t t = 0; s.owned && t < net->nb_tensors; t++)
        base_free(s.owned[t]);
    base_free(s.owned);
    base_free(s.data);
    base_free(s.gone);
    return st;
}

/*
 * Build phase 3c: reduced precision (issue 24; TensorRT's kFP16/kBF16,
 * ONNX Runtime's float16 conversion). With PRT_PRECISION_FP16 or _BF16 in
 * the config, once dtypes and bounds are known (and after the DQ fold),
 * each layer is asked whether it runs with its float32 data tensors in the
 * 16-bit type L:
 *  - its plugin's get_output_dtypes, given L for every float32 input, must
 *    give L for every float32 output, or float32 again for one it keeps
 *    (SkipLayerNormalization's mean and inverse deviation, float32 in any
 *    precision) as long as one goes to L, and leave the others as they
 *    were;
 *  - supports_format_combination must accept every position so described;
 *  - configured so, its devices() must still list the target: a built-in
 *    op's device table says which dtypes its kernel takes there (op_device.h),
 *    a plugin answers for itself. This is the question the builder asks a
 *    plugin in phase 4, asked earlier: a plugin is offered L only through
 *    its own supports_format_combination.
 * A few built-ins stay float32 whatever their kernels take (prec_keep:
 * quantization, whose float inputs are scales; and those ONNX Runtime's
 * float16 converter blocks for accuracy: coordinates, ranges, running
 * sums). A layer with no float32 output (Shape, ArgMax of a float tensor)
 * reads L only when every float32 input already comes in L, so it never
 * costs a Cast.
 *
 * Then a new network is made: the original tensors keep their ids and
 * names, a 16-bit layer's float32 outputs become L (a network output
 * stays float32, written by a Cast after the layer from a "<name>/fp16"
 * tensor), and wherever a layer reads a tensor in the other type, a Cast
 * layer is inserted before it (once per tensor and type, shared by every
 * reader); a float32 constant read in L is converted once, here. Network
 * inputs and outputs, shape inputs and size tensors keep their dtypes.
 * Constants nothing reads any more are dropped. The build starts again on
 * that network, as after the fold (fold.c), so every later phase, the
 * engine and `plugrt inspect` see ordinary Cast layers and 16-bit tensors.
 * The log (PRT_SEV_INFO) counts the 16-bit layers and names every layer
 * kept in float32 with the reason.
 */
#include <stdio.h>
#include <string.h>

#include "base/fp16.h"
#include "builder/builder.h"

#define PREC_MAX_IO 128

/* The rewritten network and what it owns beyond what it borrows from the
 * original (names, constants and plugins of the original layers). */
typedef struct prec_net {
    prt_network n; /* first: the build sees a prt_network */
    char **names;
    int32_t nb_names;
    void **consts;
    int32_t nb_consts;
    prt_plugin **plugins;
    int32_t nb_plugins;
} prec_net;

/* Built-ins kept in float32 whatever their kernels take. */
static const char *const prec_keep[] = {
    "QuantizeLinear",
    "DequantizeLinear",
    "DynamicQuantizeLinear",
    "QLinearConv",
    "QLinearMatMul",
    "QLinearAdd",
    "QLinearMul",
    "NonMaxSuppression",
    "RoiAlign",
    "Range",
    "Resize",
    "CumSum",
};

static const char *low_name(int32_t L)
{
    return L == PRT_FLOAT16 ? "fp16" : "bf16";
}

static int is_builtin(const net_layer *l, const char **name)
{
    const prt_plugin_core *c = l->plugin->vt->core;
    const char *ns = c->plugin_namespace(l->plugin);
    *name = c->name(l->plugin);
    return ns && *name && strcmp(ns, PRT_BUILTIN_NAMESPACE) == 0;
}

/* 1 when tensor t is read as some layer's shape input, or is a size
 * tensor: its values are shapes, never rounded. */
static int is_shape_tensor(const bld *b, int32_t t)
{
    if (b->t[t].size_id >= 0)
        return 1;
    for (int32_t li = 0; li < b->net->nb_layers; li++)
        for (int32_t k = 0; k < b->net->layers[li].nb_shape_inputs; k++)
            if (b->net->layers[li].shape_inputs[k] == t)
                return 1;
    return 0;
}

/* Whether layer li runs in L: NULL when it does (or has nothing to run in
 * L: *touched 0), else why not. to_low[] marks the tensors that earlier
 * layers write in L; where layer li runs in L, this marks its own. */
static const char *prec_probe(const bld *b, int32_t li, int32_t L, uint8_t *to_low,
                              int *touched)
{
    const net_layer *l = &b->net->layers[li];
    const prt_plugin_build *bt = l->plugin->vt->build;
    prt_dynamic_tensor_desc d[PREC_MAX_IO];
    int32_t in_types[PREC_MAX_IO], out_types[PREC_MAX_IO];
    int32_t nio = l->nb_inputs + l->nb_outputs, nb_f32_out = 0, nb_low_out = 0,
            all_low_in = 1;
    const char *name;
    prt_status st;
    *touched = 0;
    if (nio > PREC_MAX_IO)
        return "more inputs and outputs than the precision pass describes";
    for (int32_t k = 0; k < l->nb_inputs; k++) {
        int32_t t = l->inputs[k];
        bld_desc(b, t, 0, &d[k]);
        if (d[k].desc.dtype == PRT_FLOAT32) {
            int32_t p = b->net->tensors[t].producer;
            d[k].desc.dtype = L;
            *touched = 1;
            all_low_in &= p >= 0 && to_low[t];
        }
        in_types[k] = d[k].desc.dtype;
    }
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        int32_t t = l->outputs[o];
        if (b->t[t].dtype != PRT_FLOAT32)
            continue;
        if (is_shape_tensor(b, t) || b->net->tensors[t].q_folded)
            return "an output is a shape tensor";
        nb_f32_out++;
        *touched = 1;
    }
    if (!*touched)
        return "no float32 data";
    if (is_builtin(l, &name))
        for (size_t i = 0; i < sizeof prec_keep / sizeof prec_keep[0]; i++)
            if (strcmp(name, prec_keep[i]) == 0)
                return "kept in float32 for accuracy";
    if (nb_f32_out == 0 && !all_low_in)
        return "reads float32 from float32 layers"; /* no Cast for nothing */
    base_clear_error();
    if (bt->get_output_dtypes(l->plugin, out_types, l->nb_outputs, in_types,
                              l->nb_inputs) != PRT_OK) {
        base_clear_error();
        return "its get_output_dtypes refuses 16-bit inputs";
    }
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        int32_t was = b->t[l->outputs[o]].dtype;
        if (out_types[o] != (was == PRT_FLOAT32 ? L : was) &&
            !(was == PRT_FLOAT32 && out_types[o] == PRT_FLOAT32))
            return "its outputs do not follow its inputs' dtype";
        nb_low_out += was == PRT_FLOAT32 && out_types[o] == L;
        bld_desc(b, l->outputs[o], 0, &d[l->nb_inputs + o]);
        d[l->nb_inputs + o].desc.dtype = out_types[o];
    }
    /* Float32 outputs, none in L (a Cast to float32): 16-bit inputs would
     * only round what it reads. */
    if (nb_f32_out > 0 && nb_low_out == 0)
        return "its outputs do not follow its inputs' dtype";
    for (int32_t pos = 0; pos < nio; pos++)
        if (!bt->supports_format_combination(l->plugin, pos, d, l->nb_inputs,
                                             l->nb_outputs))
            return "its supports_format_combination refuses 16-bit";
    /* Configured with these dtypes, a plugin (a built-in through its
     * device table) says whether its kernel on the target takes them. */
    st = PRT_OK;
    if (BUILD_ENTRY(l->plugin, set_target_device))
        st = BUILD_ENTRY(l->plugin, set_target_device)(l->plugin, b->cfg->device);
    if (!st && BUILD_ENTRY(l->plugin, configure))
        st = BUILD_ENTRY(l->plugin, configure)(l->plugin, d, l->nb_inputs,
                                               d + l->nb_inputs, l->nb_outputs);
    if (st) {
        base_clear_error();
        return "configure fails for 16-bit";
    }
    if (!(l->plugin->vt->core->devices(l->plugin) & (1u << b->cfg->device)))
        return b->cfg->device == PRT_DEVICE_CPU ? "no 16-bit kernel on the CPU"
                                                : "no 16-bit kernel on CUDA";
    for (int32_t o = 0; o < l->nb_outputs; o++)
        if (b->t[l->outputs[o]].dtype == PRT_FLOAT32 && out_types[o] == L)
            to_low[l->outputs[o]] = 1;
    return NULL;
}

void bld_precision_free(prt_network *net)
{
    prec_net *pn = (prec_net *)net;
    if (!pn)
        return;
    for (int32_t i = 0; i < pn->nb_plugins; i++)
        network_destroy_plugin(pn->plugins[i]);
    for (int32_t i = 0; i < pn->nb_names; i++)
        base_free(pn->names[i]);
    for (int32_t i = 0; i < pn->nb_consts; i++)
        base_free(pn->consts[i]);
    base_free(pn->plugins);
    base_free(pn->names);
    base_free(pn->consts);
    /* The rest is laid out as a folded network's, pn at its address. */
    bld_fold_free(net);
}

/* The rewrite in progress. */
typedef struct prec_rw {
    const bld *b;
    prec_net *pn;
    int32_t L;
    int32_t cap_t, cap_l;
    int32_t nb_casts;
} prec_rw;

/* An owned copy of "<base><suffix>", kept in pn->names. */
static char *rw_name(prec_rw *w, const char *base, const char *suffix)
{
    size_t n = strlen(base) + strlen(suffix) + 1;
    char *s = base_malloc(n);
    if (!s)
        return NULL;
    snprintf(s, n, "%s%s", base, suffix);
    w->pn->names[w->pn->nb_names++] = s;
    return s;
}

/* A new tensor like original tensor t (no producer yet). */
static int32_t rw_tensor(prec_rw *w, int32_t t, const char *suffix)
{
    prt_network *n = &w->pn->n;
    net_tensor *nt;
    char *name = rw_name(w, w->b->net->tensors[t].name, suffix);
    if (!name || n->nb_tensors >= w->cap_t)
        return -1;
    nt = &n->tensors[n->nb_tensors];
    memset(nt, 0, sizeof *nt);
    nt->name = name;
    nt->dtype = -1;
    nt->producer = -1;
    nt->input_index = -1;
    nt->const_bytes = -1;
    nt->expect_dtype = -1;
    nt->expect_dims.nb_dims = -1;
    return n->nb_tensors++;
}

/* A Cast layer from tensor `from` to tensor `to` (dtype `dtype`). */
static prt_status rw_cast(prec_rw *w, int32_t from, int32_t to, int32_t dtype)
{
    prt_network *n = &w->pn->n;
    const prt_plugin_creator *c;
    prt_field f = {"to", &dtype, PRT_FIELD_INT32, 1};
    prt_field_collection fc = {1, &f};
    net_layer *nl;
    char suffix[32];
    prt_status st = prt_builtin_find_creator("Cast", NULL, &c);
    if (st)
        return st;
    if (n->nb_layers >= w->cap_l)
        return base_error(PRT_ERR_INTERNAL, "precision: layer table too small");
    nl = &n->layers[n->nb_layers++]; /* counted now: a failure frees its arrays */
    memset(nl, 0, sizeof *nl);
    snprintf(suffix, sizeof suffix, "/prt_cast_%s", prt_dtype_name(dtype));
    nl->name = rw_name(w, n->tensors[from].name, suffix);
    nl->inputs = base_malloc(sizeof(int32_t));
    nl->outputs = base_malloc(sizeof(int32_t));
    nl->shape_inputs = base_malloc(sizeof(int32_t));
    if (!nl->name || !nl->inputs || !nl->outputs || !nl->shape_inputs)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    nl->nb_inputs = nl->nb_outputs = 1;
    nl->inputs[0] = from;
    nl->outputs[0] = to;
    st = c->create(c, nl->name, &fc, PRT_PHASE_BUILD, &nl->plugin);
    if (st)
        return base_error_prefix(st, "precision: a Cast layer");
    w->pn->plugins[w->pn->nb_plugins++] = nl->plugin;
    n->tensors[to].producer = n->nb_layers - 1;
    n->tensors[to].producer_output = 0;
    w->nb_casts++;
    return PRT_OK;
}

/* Float32 constant t's values in L, as a new constant tensor. */
static int32_t rw_const(prec_rw *w, int32_t t)
{
    const net_tensor *src = &w->b->net->tensors[t];
    int64_t count = src->const_bytes / 4;
    uint16_t *h;
    int32_t id = rw_tensor(w, t, w->L == PRT_FLOAT16 ? "/fp16" : "/bf16");
    if (id < 0)
        return -1;
    h = base_malloc((size_t)(count ? count : 1) * sizeof(uint16_t));
    if (!h)
        return -1;
    w->pn->consts[w->pn->nb_consts++] = h;
    for (int64_t i = 0; i < count; i++) {
        float v;
        memcpy(&v, (const char *)src->const_data + i * 4, 4);
        h[i] = w->L == PRT_FLOAT16 ? base_f2h(v) : base_f2bf(v);
    }
    w->pn->n.tensors[id].const_data = h;
    w->pn->n.tensors[id].const_bytes = count * 2;
    w->pn->n.tensors[id].dtype = w->L;
    w->pn->n.tensors[id].dims = src->dims;
    return id;
}

static int32_t *copy_ids(const int32_t *ids, int32_t n)
{
    int32_t *r = base_malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (r && n)
        memcpy(r, ids, sizeof(int32_t) * (size_t)n);
    return r;
}

/* Drops constants nothing reads any more (a float32 weight read only in
 * L), renumbering tensors. */
static prt_status rw_compact(prt_network *n)
{
    int32_t *map = base_malloc(sizeof(int32_t) * (size_t)(n->nb_tensors + 1));
    uint8_t *read = base_calloc((size_t)n->nb_tensors + 1, 1);
    int32_t k = 0;
    if (!map || !read) {
        base_free(map);
        base_free(read);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    for (int32_t li = 0; li < n->nb_layers; li++) {
        for (int32_t i = 0; i < n->layers[li].nb_inputs; i++)
            read[n->layers[li].inputs[i]] = 1;
        for (int32_t i = 0; i < n->layers[li].nb_shape_inputs; i++)
            read[n->layers[li].shape_inputs[i]] = 1;
    }
    for (int32_t t = 0; t < n->nb_tensors; t++) {
        const net_tensor *nt = &n->tensors[t];
        int drop =
            nt->const_bytes >= 0 && !read[t] && !nt->is_output && nt->input_index < 0;
        map[t] = drop ? -1 : k;
        if (drop)
            base_quant_free(&n->tensors[t].quant);
        else
            n->tensors[k++] = n->tensors[t];
    }
    n->nb_tensors = k;
    for (int32_t li = 0; li < n->nb_layers; li++) {
        net_layer *l = &n->layers[li];
        for (int32_t i = 0; i < l->nb_inputs; i++)
            l->inputs[i] = map[l->inputs[i]];
        for (int32_t i = 0; i < l->nb_shape_inputs; i++)
            l->shape_inputs[i] = map[l->shape_inputs[i]];
        for (int32_t i = 0; i < l->nb_outputs; i++)
            l->outputs[i] = map[l->outputs[i]];
    }
    for (int32_t i = 0; i < n->nb_inputs; i++)
        n->inputs[i] = map[n->inputs[i]];
    for (int32_t i = 0; i < n->nb_outputs; i++)
        n->outputs[i] = map[n->outputs[i]];
    base_free(map);
    base_free(read);
    return PRT_OK;
}

/* The network with the layers in low[] in L (their float32 outputs in
 * to_low[] written in L, the others kept) and Casts between. */
static prt_status prec_network(const bld *b, const uint8_t *low, const uint8_t *to_low,
                               int32_t L, prt_network **out, int32_t *nb_casts)
{
    const prt_network *net = b->net;
    prec_rw w;
    prt_network *n;
    int32_t nt0 = net->nb_tensors, reads = 0, *v16 = NULL, *v32 = NULL;
    prt_status st = PRT_OK;
    memset(&w, 0, sizeof w);
    w.b = b;
    w.L = L;
    for (int32_t li = 0; li < net->nb_layers; li++)
        reads += net->layers[li].nb_inputs;
    /* Each read adds at most one tensor (a Cast's or a constant's), each
     * network output one more; names: those, plus one per Cast layer. */
    w.cap_t = nt0 + reads + net->nb_outputs;
    w.cap_l = net->nb_layers + reads + net->nb_outputs;
    w.pn = base_calloc(1, sizeof *w.pn);
    if (!w.pn)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    n = &w.pn->n;
    n->tensors = base_calloc((size_t)w.cap_t + 1, sizeof(net_tensor));
    n->layers = base_calloc((size_t)w.cap_l + 1, sizeof(net_layer));
    n->inputs = copy_ids(net->inputs, net->nb_inputs);
    n->outputs = copy_ids(net->outputs, net->nb_outputs);
    w.pn->names = base_calloc((size_t)(w.cap_t + w.cap_l) + 1, sizeof(char *));
    w.pn->consts = base_calloc((size_t)reads + 1, sizeof(void *));
    w.pn->plugins = base_calloc((size_t)w.cap_l + 1, sizeof(prt_plugin *));
    v16 = base_malloc(sizeof(int32_t) * (size_t)(nt0 + 1));
    v32 = base_malloc(sizeof(int32_t) * (size_t)(nt0 + 1));
    if (!n->tensors || !n->layers || !n->inputs || !n->outputs || !w.pn->names ||
        !w.pn->consts || !w.pn->plugins || !v16 || !v32)
        goto oom;
    n->cap_tensors = w.cap_t;
    n->cap_layers = w.cap_l;
    n->nb_inputs = n->cap_inputs = net->nb_inputs;
    n->nb_outputs = n->cap_outputs = net->nb_outputs;
    n->strict = net->strict;
    n->nb_tensors = nt0;
    for (int32_t t = 0; t < nt0; t++) {
        net_tensor *nt = &n->tensors[t];
        int32_t p = net->tensors[t].producer;
        *nt = net->tensors[t];
        memset(&nt->quant, 0, sizeof nt->quant);
        st = base_quant_copy(&nt->quant, &net->tensors[t].quant);
        if (st)
            goto fail;
        v16[t] = v32[t] = -1;
        if (p >= 0 && to_low[t]) {
            /* The author's float32 expectation was for the float32 network. */
            if (nt->expect_dtype == PRT_FLOAT32)
                nt->expect_dtype = -1;
            if (!nt->is_output)
                v16[t] = t;
            else
                v32[t] = t; /* written by the Cast right after the layer */
        } else {
            v32[t] = t;
        }
    }
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        net_layer *nl;
        for (int32_t k = 0; k < l->nb_inputs; k++) {
            int32_t t = l->inputs[k];
            int32_t *have = low[li] ? v16 : v32, *other = low[li] ? v32 : v16;
            if (b->t[t].dtype != PRT_FLOAT32 || have[t] >= 0)
                continue;
            if (low[li] && net->tensors[t].const_bytes >= 0) {
                v16[t] = rw_const(&w, t);
                if (v16[t] < 0)
                    goto oom;
                continue;
            }
            have[t] = rw_tensor(
                &w, t, low[li] ? (L == PRT_FLOAT16 ? "/fp16" : "/bf16") : "/fp32");
            if (have[t] < 0)
                goto oom;
            st = rw_cast(&w, other[t], have[t], low[li] ? L : PRT_FLOAT32);
            if (st)
                goto fail;
        }
        nl = &n->layers[n->nb_layers++]; /* counted now: a failure frees its arrays */
        *nl = *l;
        nl->inputs = copy_ids(l->inputs, l->nb_inputs);
        nl->shape_inputs = copy_ids(l->shape_inputs, l->nb_shape_inputs);
        nl->outputs = copy_ids(l->outputs, l->nb_outputs);
        if (!nl->inputs || !nl->shape_inputs || !nl->outputs)
            goto oom;
        for (int32_t k = 0; k < l->nb_inputs; k++) {
            int32_t t = l->inputs[k];
            if (b->t[t].dtype == PRT_FLOAT32)
                nl->inputs[k] = low[li] ? v16[t] : v32[t];
        }
        for (int32_t o = 0; o < l->nb_outputs; o++) {
            int32_t t = l->outputs[o];
            n->tensors[t].producer = n->nb_layers - 1;
            if (!to_low[t] || !net->tensors[t].is_output)
                continue;
            /* A network output keeps float32: the layer writes L beside it. */
            v16[t] = rw_tensor(&w, t, L == PRT_FLOAT16 ? "/fp16" : "/bf16");
            if (v16[t] < 0)
                goto oom;
            n->tensors[v16[t]].producer = n->nb_layers - 1;
            n->tensors[v16[t]].producer_output = o;
            nl = &n->layers[n->nb_layers - 1];
            nl->outputs[o] = v16[t];
        }
        for (int32_t o = 0; o < l->nb_outputs; o++) {
            int32_t t = l->outputs[o];
            if (to_low[t] && net->tensors[t].is_output) {
                st = rw_cast(&w, v16[t], t, PRT_FLOAT32);
                if (st)
                    goto fail;
            }
        }
    }
    st = rw_compact(n);
    if (st)
        goto fail;
    base_free(v16);
    base_free(v32);
    *nb_casts = w.nb_casts;
    *out = n;
    return PRT_OK;
oom:
    st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
fail:
    base_free(v16);
    base_free(v32);
    bld_precision_free(n);
    return st;
}

prt_status bld_precision(const bld *b, prt_network **out)
{
    const prt_network *net = b->net;
    const uint32_t flags = b->cfg->precision;
    const int32_t L = (flags & PRT_PRECISION_FP16) ? PRT_FLOAT16 : PRT_BFLOAT16;
    uint8_t *low, *to_low;
    int32_t nb_low = 0, nb_kept = 0, nb_casts = 0;
    prt_status st = PRT_OK;
    *out = NULL;
    if (!(flags & (PRT_PRECISION_FP16 | PRT_PRECISION_BF16)))
        return PRT_OK;
    low = base_calloc((size_t)net->nb_layers + 1, 1);
    to_low = base_calloc((size_t)net->nb_tensors + 1, 1);
    if (!low || !to_low) {
        base_free(low);
        base_free(to_low);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    for (int32_t li = 0; li < net->nb_layers; li++) {
        int touched;
        const char *why = prec_probe(b, li, L, to_low, &touched);
        low[li] = why == NULL;
        nb_low += low[li];
        if (why && touched) {
            nb_kept++;
            base_log(PRT_SEV_INFO, "build: %s: layer '%s' (plugin %s) stays float32: %s",
                     low_name(L), net->layers[li].name,
                     bld_plugin_label(net->layers[li].plugin).s, why);
        }
    }
    if (nb_low)
        st = prec_network(b, low, to_low, L, out, &nb_casts);
    if (!st)
        base_log(PRT_SEV_INFO,
                 "build: %s: %d of %d layers run in %s, %d with float data stay "
                 "float32; %d Cast layers inserted",
                 low_name(L), (int)nb_low, (int)net->nb_layers, prt_dtype_name(L),
                 (int)nb_kept, (int)nb_casts);
    base_free(low);
    base_free(to_low);
    return st;
}

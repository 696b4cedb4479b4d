/*
 * Build phase 3b: DequantizeLinear layers folded into the plugins they feed
 * (issue 30). A DQ layer (built-in "DequantizeLinear": inputs x, x_scale,
 * x_zero_point (optional), field axis) whose
 *  - x is an int8/uint8 tensor with no quantization of its own, read by
 *    this layer alone,
 *  - scale is a constant float32 of one element (per tensor) or of x's dim
 *    `axis` (per channel), zero point absent or a constant of x's dtype and
 *    as many elements,
 *  - output is read by one layer only, at one input, and is not an output
 *    of the network,
 * is folded when that consumer accepts x itself there: its
 * supports_format_combination says yes with x's dtype and the quantization
 * set in the descriptor, and no without the quantization. The second
 * question keeps a plugin that takes int8 without reading `quant` (an
 * older plugin, a data-movement op) from being handed integers it would
 * treat as plain numbers. A consumer with several DQ inputs is asked for
 * all of them together first (QuantFC's w is taken only beside an integer
 * x), then for each alone.
 *
 * Likewise a QuantizeLinear (inputs y, y_scale, y_zero_point (optional))
 * whose float y is a layer output read by it alone and not a network
 * output, with constant scale and zero point and an int8/uint8 output z
 * that has no quantization of its own, folds into y's producer when that
 * plugin takes z's dtype at that output with the quantization and refuses
 * it without: the plugin then writes z's integers itself, in place of the
 * dtype get_output_dtypes gave (loading checks the same two answers,
 * check_layers.c).
 *
 * A fold gives a new network (the folded layers, the tensors between and
 * the constants nothing else reads removed, x or z carrying the
 * quantization), and the build starts again on it: every later phase sees
 * an ordinary network. The build log (PRT_SEV_INFO) names each fold and
 * each DQ or Q left as a layer, with the reason.
 */
#include <stdio.h>
#include <string.h>

#include "builder/builder.h"

#define FOLD_DQ_NAME "DequantizeLinear"
#define FOLD_Q_NAME "QuantizeLinear"
/* Inputs of a layer the probe can describe (the builder's own cap). */
#define FOLD_MAX_IO 128

typedef struct fold_cand {
    int32_t dq;       /* the DQ or Q layer */
    int is_q;         /* a QuantizeLinear */
    int32_t consumer; /* DQ: the layer reading its output; Q: y's producer */
    int32_t pos;      /* its position there (inputs, then outputs) */
    int32_t x;        /* DQ: its integer input; Q: its integer output z */
    int32_t y;        /* Q: its float input, which goes away */
    base_quant q;     /* what x will carry */
    int folded;
} fold_cand;

static int is_op(const net_layer *l, const char *op)
{
    const prt_plugin_core *c = l->plugin->vt->core;
    const char *ns = c->plugin_namespace(l->plugin), *name = c->name(l->plugin);
    return ns && name && strcmp(ns, PRT_BUILTIN_NAMESPACE) == 0 && strcmp(name, op) == 0;
}

static int is_dq(const net_layer *l)
{
    return is_op(l, FOLD_DQ_NAME);
}

static int is_q(const net_layer *l)
{
    return is_op(l, FOLD_Q_NAME);
}

/* Reads of tensor t as a layer input (each position counts) or shape
 * input; the last reader and position in *layer, *pos. */
static int32_t uses(const prt_network *net, int32_t t, int32_t *layer, int32_t *pos)
{
    int32_t n = 0;
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        for (int32_t k = 0; k < l->nb_inputs; k++)
            if (l->inputs[k] == t) {
                n++;
                *layer = li;
                *pos = k;
            }
        for (int32_t k = 0; k < l->nb_shape_inputs; k++)
            n += l->shape_inputs[k] == t;
    }
    return n;
}

/* The DQ's axis field (int32 or int64, default 1, as ONNX's); 0 when it has
 * a field that makes it blocked (block_size > 0), which does not fold. */
static int dq_axis(const net_layer *l, int64_t *axis)
{
    const prt_field_collection *fc =
        RUNTIME_ENTRY(l->plugin, get_fields_to_serialize)
            ? l->plugin->vt->runtime->get_fields_to_serialize(l->plugin)
            : NULL;
    *axis = 1;
    for (int32_t i = 0; fc && i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        int64_t v;
        if (!f->name || f->length != 1 || !f->data)
            continue;
        if (f->type == PRT_FIELD_INT32)
            v = *(const int32_t *)f->data;
        else if (f->type == PRT_FIELD_INT64)
            v = *(const int64_t *)f->data;
        else
            continue;
        if (strcmp(f->name, "axis") == 0)
            *axis = v;
        else if (strcmp(f->name, "block_size") == 0 && v > 0)
            return 0;
    }
    return 1;
}

/* The quantization a DQ or Q layer's constant scale and zero point (inputs
 * 1 and 2) give an integer tensor of `dtype` and `rank`, into *out; or the
 * reason there is none. */
static const char *const_quant(const bld *b, int32_t li, int32_t dtype, int32_t rank,
                               base_quant *out)
{
    const prt_network *net = b->net;
    const net_layer *l = &net->layers[li];
    const net_tensor *s = &net->tensors[l->inputs[1]], *z = NULL;
    int64_t axis, count;
    float scales[4096];
    int32_t zps[4096];
    prt_quant_desc q;
    char what[64];
    if (l->nb_inputs == 3)
        z = &net->tensors[l->inputs[2]];
    if (s->const_bytes < 0 || s->dtype != PRT_FLOAT32 || (z && z->const_bytes < 0))
        return "its scale or zero point is not a constant";
    count = s->const_bytes / 4;
    if (count < 1 || count > 4096 || s->dims.nb_dims > 1 ||
        (z && (z->dtype != dtype || z->const_bytes != count)))
        return "its scale or zero point has a shape or dtype it cannot fold with";
    if (!dq_axis(l, &axis))
        return "it is blocked (block_size)";
    if (axis < 0)
        axis += rank;
    if (count > 1 && (axis < 0 || axis >= rank))
        return "its axis is outside its input's rank";
    memcpy(scales, s->const_data, sizeof(float) * (size_t)count);
    for (int64_t i = 0; i < count; i++)
        zps[i] = !z                     ? 0
                 : z->dtype == PRT_INT8 ? ((const int8_t *)z->const_data)[i]
                                        : ((const uint8_t *)z->const_data)[i];
    memset(&q, 0, sizeof q);
    q.struct_size = sizeof q;
    q.kind = count == 1 ? PRT_QUANT_PER_TENSOR : PRT_QUANT_PER_CHANNEL;
    q.axis = count == 1 ? -1 : (int32_t)axis;
    q.count = count;
    q.scales = scales;
    q.zero_points = zps;
    snprintf(what, sizeof what, "folding layer %d", (int)li);
    if (base_quant_set(out, &q, what) != PRT_OK ||
        base_quant_check_tensor(out, dtype, rank, -1, what) != PRT_OK) {
        base_clear_error();
        base_quant_free(out);
        return "its scales or zero points are not valid as a quantization";
    }
    return NULL;
}

/* Whether DQ layer li can fold as far as the layer itself goes; fills the
 * candidate, or gives the reason it stays. */
static const char *dq_candidate(const bld *b, int32_t li, fold_cand *c)
{
    const prt_network *net = b->net;
    const net_layer *l = &net->layers[li];
    const net_tensor *x;
    int32_t dummy_l, dummy_p;
    const char *why;
    if (l->nb_inputs < 2 || l->nb_inputs > 3 || l->nb_outputs != 1)
        return "it is not x, scale[, zero point] -> y";
    c->x = l->inputs[0];
    x = &net->tensors[c->x];
    if (b->t[c->x].dtype != PRT_INT8 && b->t[c->x].dtype != PRT_UINT8)
        return "its input is not int8 or uint8";
    if (x->quant.d.kind != PRT_QUANT_NONE)
        return "its input already has a quantization";
    if (uses(net, c->x, &dummy_l, &dummy_p) != 1 || x->is_output)
        return "its input is read elsewhere too";
    why = const_quant(b, li, b->t[c->x].dtype, b->t[c->x].dims.nb_dims, &c->q);
    if (why)
        return why;
    if (uses(net, l->outputs[0], &c->consumer, &c->pos) != 1 ||
        net->tensors[l->outputs[0]].is_output)
        return "its output is read by more than one layer, or is a network output";
    return NULL;
}

/* The same for Q layer li: its float input made by a plugin layer for it
 * alone, its integer output with no quantization of its own. */
static const char *q_candidate(const bld *b, int32_t li, fold_cand *c)
{
    const prt_network *net = b->net;
    const net_layer *l = &net->layers[li];
    const net_tensor *y, *z;
    int32_t dummy_l, dummy_p, zt;
    if (l->nb_inputs < 2 || l->nb_inputs > 3 || l->nb_outputs != 1)
        return "it is not y, scale[, zero point] -> z";
    c->is_q = 1;
    c->y = l->inputs[0];
    c->x = l->outputs[0];
    y = &net->tensors[c->y];
    z = &net->tensors[c->x];
    zt = b->t[c->x].dtype;
    if (zt != PRT_INT8 && zt != PRT_UINT8)
        return "its output is not int8 or uint8";
    if (z->quant.d.kind != PRT_QUANT_NONE)
        return "its output already has a quantization";
    if (y->producer < 0 || is_dq(&net->layers[y->producer]) ||
        is_q(&net->layers[y->producer]))
        return "its input is not made by a plugin layer";
    if (uses(net, c->y, &dummy_l, &dummy_p) != 1 || y->is_output)
        return "its input is read elsewhere too";
    c->consumer = y->producer;
    c->pos = net->layers[y->producer].nb_inputs + y->producer_output;
    return const_quant(b, li, zt, b->t[c->y].dims.nb_dims, &c->q);
}

/* Does `consumer` accept its tensors with candidates `cs[0..n)` in place:
 * a DQ's input x for its output, a Q's integer dtype at the producer's
 * output (with the quantization when with_quant, else without)? Only the
 * layer's present formats (LINEAR before phase 4) are asked. */
static int probe(const bld *b, int32_t li, fold_cand *const *cs, int32_t n,
                 int with_quant)
{
    const net_layer *l = &b->net->layers[li];
    prt_dynamic_tensor_desc d[FOLD_MAX_IO];
    int32_t in_types[FOLD_MAX_IO], out_types[FOLD_MAX_IO];
    int32_t nio = l->nb_inputs + l->nb_outputs;
    if (nio > FOLD_MAX_IO)
        return 0;
    for (int32_t k = 0; k < l->nb_inputs; k++) {
        bld_desc(b, l->inputs[k], 0, &d[k]);
        for (int32_t i = 0; i < n; i++)
            if (cs[i]->pos == k) {
                bld_desc(b, cs[i]->x, 0, &d[k]);
                d[k].desc.reserved[0] =
                    with_quant ? (void *)(uintptr_t)base_quant_desc(&cs[i]->q) : NULL;
            }
        in_types[k] = d[k].desc.dtype;
    }
    base_clear_error();
    if (l->plugin->vt->build->get_output_dtypes(l->plugin, out_types, l->nb_outputs,
                                                in_types, l->nb_inputs) != PRT_OK) {
        base_clear_error();
        return 0;
    }
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        bld_desc(b, l->outputs[o], 0, &d[l->nb_inputs + o]);
        d[l->nb_inputs + o].desc.dtype = out_types[o];
        for (int32_t i = 0; i < n; i++)
            if (cs[i]->pos == l->nb_inputs + o) {
                d[l->nb_inputs + o].desc.dtype = b->t[cs[i]->x].dtype;
                d[l->nb_inputs + o].desc.reserved[0] =
                    with_quant ? (void *)(uintptr_t)base_quant_desc(&cs[i]->q) : NULL;
            }
    }
    for (int32_t pos = 0; pos < nio; pos++)
        if (!l->plugin->vt->build->supports_format_combination(
                l->plugin, pos, d, l->nb_inputs, l->nb_outputs))
            return 0;
    return 1;
}

/* Asks consumer li about its candidates: all together, then each alone. A
 * set folds when it is accepted with the quantization and each member is
 * refused without its own (the others kept). */
static void decide(const bld *b, int32_t li, fold_cand *cands, int32_t nb)
{
    fold_cand *set[FOLD_MAX_IO];
    int32_t n = 0, ok;
    for (int32_t i = 0; i < nb && n < FOLD_MAX_IO; i++)
        if (cands[i].consumer == li && cands[i].q.d.kind != PRT_QUANT_NONE)
            set[n++] = &cands[i];
    if (n == 0)
        return;
    ok = probe(b, li, set, n, 1);
    for (int32_t i = 0; ok && i < n; i++) {
        base_quant keep = set[i]->q;
        set[i]->q.d.kind = PRT_QUANT_NONE; /* this one without, the others with */
        ok = !probe(b, li, set, n, 1);
        set[i]->q = keep;
    }
    if (ok) {
        for (int32_t i = 0; i < n; i++)
            set[i]->folded = 1;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        fold_cand *one = set[i];
        one->folded = probe(b, li, &one, 1, 1) && !probe(b, li, &one, 1, 0);
    }
}

void bld_fold_free(prt_network *net)
{
    if (!net)
        return;
    for (int32_t i = 0; i < net->nb_tensors; i++)
        base_quant_free(&net->tensors[i].quant);
    for (int32_t i = 0; i < net->nb_layers; i++) {
        base_free(net->layers[i].inputs);
        base_free(net->layers[i].shape_inputs);
        base_free(net->layers[i].outputs);
    }
    base_free(net->tensors);
    base_free(net->layers);
    base_free(net->inputs);
    base_free(net->outputs);
    base_free(net);
}

static int32_t *remap_ids(const int32_t *ids, int32_t n, const int32_t *map)
{
    int32_t *r = base_malloc(sizeof(int32_t) * (size_t)(n + 1));
    for (int32_t i = 0; r && i < n; i++)
        r[i] = map[ids[i]];
    return r;
}

prt_status bld_net_subset(const prt_network *net, const int32_t *lmap, int32_t nb_layers,
                          const int32_t *tmap, int32_t nb_tensors, prt_network *n)
{
    n->nb_tensors = n->cap_tensors = nb_tensors;
    n->nb_layers = n->cap_layers = nb_layers;
    n->tensors = base_calloc((size_t)nb_tensors + 1, sizeof(net_tensor));
    n->layers = base_calloc((size_t)nb_layers + 1, sizeof(net_layer));
    n->inputs = remap_ids(net->inputs, net->nb_inputs, tmap);
    n->outputs = remap_ids(net->outputs, net->nb_outputs, tmap);
    if (!n->tensors || !n->layers || !n->inputs || !n->outputs)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    n->nb_inputs = n->cap_inputs = net->nb_inputs;
    n->nb_outputs = n->cap_outputs = net->nb_outputs;
    n->strict = net->strict;
    for (int32_t t = 0; t < net->nb_tensors; t++) {
        net_tensor *nt;
        prt_status st;
        if (tmap[t] < 0)
            continue;
        nt = &n->tensors[tmap[t]];
        *nt = net->tensors[t];
        memset(&nt->quant, 0, sizeof nt->quant);
        if (nt->producer >= 0)
            nt->producer = lmap[nt->producer];
        st = base_quant_copy(&nt->quant, &net->tensors[t].quant);
        if (st)
            return st;
    }
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        net_layer *nl;
        if (lmap[li] < 0)
            continue;
        nl = &n->layers[lmap[li]];
        *nl = *l;
        nl->inputs = remap_ids(l->inputs, l->nb_inputs, tmap);
        nl->shape_inputs = remap_ids(l->shape_inputs, l->nb_shape_inputs, tmap);
        nl->outputs = remap_ids(l->outputs, l->nb_outputs, tmap);
        if (!nl->inputs || !nl->shape_inputs || !nl->outputs)
            return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    return PRT_OK;
}

/* The network without the folded DQ layers: names, constants' data and
 * plugins borrowed from b->net (which outlives it); ids renumbered. */
static prt_status fold_network(const bld *b, const fold_cand *cands, int32_t nb,
                               prt_network **out)
{
    const prt_network *net = b->net;
    prt_network *n = base_calloc(1, sizeof *n);
    int32_t *tmap = base_malloc(sizeof(int32_t) * (size_t)(net->nb_tensors + 1));
    int32_t *lmap = base_malloc(sizeof(int32_t) * (size_t)(net->nb_layers + 1));
    uint8_t *read = base_calloc((size_t)net->nb_tensors + 1, 1);
    int32_t nl = 0, nt = 0;
    prt_status st = PRT_OK;
    if (!n || !tmap || !lmap || !read) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto fail;
    }
    for (int32_t li = 0; li < net->nb_layers; li++)
        lmap[li] = 0;
    for (int32_t i = 0; i < nb; i++)
        if (cands[i].folded)
            lmap[cands[i].dq] = -1;
    /* What the kept layers read, with each fold's input in its place. */
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        if (lmap[li] < 0)
            continue;
        for (int32_t k = 0; k < l->nb_inputs; k++)
            read[l->inputs[k]] = 1;
        for (int32_t k = 0; k < l->nb_shape_inputs; k++)
            read[l->shape_inputs[k]] = 1;
    }
    for (int32_t i = 0; i < nb; i++)
        if (cands[i].folded && !cands[i].is_q)
            read[cands[i].x] = 1;
    for (int32_t li = 0; li < net->nb_layers; li++)
        if (lmap[li] >= 0)
            lmap[li] = nl++;
    /* Tensors: those a kept layer makes, reads, or the user gave (inputs;
     * constants only when still read). */
    for (int32_t t = 0; t < net->nb_tensors; t++) {
        const net_tensor *tt = &net->tensors[t];
        int keep = tt->input_index >= 0 || tt->is_output ||
                   (tt->producer >= 0 && lmap[tt->producer] >= 0) ||
                   (tt->const_bytes >= 0 && read[t]);
        /* A folded Q's float input goes, its integer output stays (made
         * by the input's producer now). */
        for (int32_t i = 0; i < nb; i++)
            if (cands[i].folded && cands[i].is_q)
                keep = t == cands[i].y ? 0 : keep || t == cands[i].x;
        tmap[t] = keep ? nt++ : -1;
    }
    st = bld_net_subset(net, lmap, nl, tmap, nt, n);
    /* Each fold's integer tensor: its quantization; a Q's made by the
     * producer of the Q's input now. */
    for (int32_t i = 0; !st && i < nb; i++) {
        const fold_cand *c = &cands[i];
        net_tensor *x;
        if (!c->folded)
            continue;
        x = &n->tensors[tmap[c->x]];
        base_quant_free(&x->quant);
        st = base_quant_copy(&x->quant, &c->q);
        if (c->is_q) {
            x->producer = lmap[c->consumer];
            x->producer_output = net->tensors[c->y].producer_output;
            x->dtype = b->t[c->x].dtype;
            x->q_folded = 1;
            n->layers[lmap[c->consumer]]
                .outputs[c->pos - net->layers[c->consumer].nb_inputs] = tmap[c->x];
        } else {
            n->layers[lmap[c->consumer]].inputs[c->pos] = tmap[c->x];
        }
    }
    if (st)
        goto fail;
    base_free(tmap);
    base_free(lmap);
    base_free(read);
    *out = n;
    return PRT_OK;
fail:
    bld_fold_free(n);
    base_free(tmap);
    base_free(lmap);
    base_free(read);
    return st;
}

prt_status bld_fold(const bld *b, prt_network **out)
{
    const prt_network *net = b->net;
    fold_cand *cands;
    int32_t nb = 0, nb_folded = 0;
    prt_status st = PRT_OK;
    *out = NULL;
    for (int32_t li = 0; li < net->nb_layers; li++)
        nb += is_dq(&net->layers[li]) || is_q(&net->layers[li]);
    if (nb == 0)
        return PRT_OK;
    cands = base_calloc((size_t)nb, sizeof *cands);
    if (!cands)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    nb = 0;
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const char *why;
        int q = is_q(&net->layers[li]);
        if (!q && !is_dq(&net->layers[li]))
            continue;
        cands[nb].dq = li;
        why = q ? q_candidate(b, li, &cands[nb]) : dq_candidate(b, li, &cands[nb]);
        if (why) {
            base_quant_free(&cands[nb].q);
            base_log(PRT_SEV_INFO, "build: %s layer '%s' stays a separate layer: %s",
                     q ? FOLD_Q_NAME : FOLD_DQ_NAME, net->layers[li].name, why);
        }
        nb++;
    }
    for (int32_t li = 0; li < net->nb_layers; li++)
        if (!is_dq(&net->layers[li]) && !is_q(&net->layers[li]))
            decide(b, li, cands, nb);
    /* Q -> DQ of one tensor (a QDQ model's pair between two ops): both fold
     * only on one scale, the integers passing straight from one plugin to
     * the next; a requantization between them keeps the DQs of that
     * consumer (all of them: its answer was for the set). */
    for (int32_t i = 0; i < nb; i++)
        for (int32_t j = 0; j < nb; j++)
            if (cands[i].folded && !cands[i].is_q && cands[j].folded && cands[j].is_q &&
                cands[i].x == cands[j].x && !base_quant_equal(&cands[i].q, &cands[j].q))
                for (int32_t k = 0; k < nb; k++)
                    if (!cands[k].is_q && cands[k].consumer == cands[i].consumer)
                        cands[k].folded = 0;
    for (int32_t i = 0; i < nb; i++) {
        const fold_cand *c = &cands[i];
        if (c->q.d.kind == PRT_QUANT_NONE)
            continue; /* logged above */
        const int32_t nb_in = net->layers[c->consumer].nb_inputs;
        const char *kind =
            c->q.d.kind == PRT_QUANT_PER_TENSOR ? "per-tensor" : "per-channel";
        if (c->folded)
            nb_folded++;
        if (c->folded && !c->is_q)
            base_log(PRT_SEV_INFO,
                     "build: folded " FOLD_DQ_NAME " layer '%s' into layer '%s' (plugin "
                     "%s): input %d takes %s '%s' with its %s scale",
                     net->layers[c->dq].name, net->layers[c->consumer].name,
                     bld_plugin_label(net->layers[c->consumer].plugin).s, (int)c->pos,
                     prt_dtype_name(b->t[c->x].dtype), net->tensors[c->x].name, kind);
        else if (c->folded)
            base_log(PRT_SEV_INFO,
                     "build: folded " FOLD_Q_NAME " layer '%s' into layer '%s' (plugin "
                     "%s): output %d writes %s '%s' with its %s scale",
                     net->layers[c->dq].name, net->layers[c->consumer].name,
                     bld_plugin_label(net->layers[c->consumer].plugin).s,
                     (int)(c->pos - nb_in), prt_dtype_name(b->t[c->x].dtype),
                     net->tensors[c->x].name, kind);
        else
            base_log(
                PRT_SEV_INFO,
                "build: %s layer '%s' stays a separate layer: layer '%s' (plugin %s) "
                "does not %s %s with a %s scale at %s %d",
                c->is_q ? FOLD_Q_NAME : FOLD_DQ_NAME, net->layers[c->dq].name,
                net->layers[c->consumer].name,
                bld_plugin_label(net->layers[c->consumer].plugin).s,
                c->is_q ? "write" : "take", prt_dtype_name(b->t[c->x].dtype), kind,
                c->is_q ? "output" : "input", (int)(c->is_q ? c->pos - nb_in : c->pos));
    }
    if (nb_folded)
        st = fold_network(b, cands, nb, out);
    for (int32_t i = 0; i < nb; i++)
        base_quant_free(&cands[i].q);
    base_free(cands);
    return st;
}

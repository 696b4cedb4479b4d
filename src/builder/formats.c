/*
 * Build phase 4, per layer: negotiate dtypes and formats with the plugin,
 * configure it for every profile, size its workspace, list its tactics and,
 * when autotuning, time the candidates on the target device (tune.c).
 */
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "builder/builder.h"
#include "ops/op_const.h"
#include "ops/op_workspace.h"

/* ---- 4. formats, configure, workspace, tactics ---------------------------- */

#define MAX_COMBOS 16

typedef struct negotiation {
    int32_t nb_combos;
    int32_t formats[MAX_COMBOS][128]; /* per position */
    int32_t deepest;                  /* furthest position reached */
} negotiation;

/* Depth-first over positions in order; inputs keep their producer's dtype
 * and format, outputs the format bld_plan_formats gave their tensor, with
 * the dtype get_output_dtypes gave. Records up to MAX_COMBOS complete
 * combinations in the order found, which is the documented preference
 * order. */
static void negotiate(prt_plugin *p, prt_dynamic_tensor_desc *descs, int32_t pos,
                      int32_t nb_in, int32_t nb_out, negotiation *ng)
{
    int32_t n = nb_in + nb_out;
    int32_t f0 = descs[pos].desc.format;
    int32_t f1 = descs[pos].desc.format + 1;
    if (pos > ng->deepest)
        ng->deepest = pos;
    for (int32_t f = f0; f < f1 && ng->nb_combos < MAX_COMBOS; f++) {
        descs[pos].desc.format = f;
        if (!p->vt->build->supports_format_combination(p, pos, descs, nb_in, nb_out))
            continue;
        if (pos + 1 == n) {
            for (int32_t k = 0; k < n; k++)
                ng->formats[ng->nb_combos][k] = descs[k].desc.format;
            ng->nb_combos++;
        } else {
            negotiate(p, descs, pos + 1, nb_in, nb_out, ng);
        }
    }
}

/* The build-time descriptor of tensor `id` in profile p: dims that are
 * constants, -1 for the rest, and every dim's bounds from phase 3. */
void bld_desc(const bld *b, int32_t id, int32_t p, prt_dynamic_tensor_desc *out)
{
    const bld_tensor *t = &b->t[id];
    size_t o = (size_t)p * (size_t)b->nb_nodes;
    memset(out, 0, sizeof *out);
    out->desc.dtype = t->dtype;
    out->desc.format = t->format;
    base_quant_attach(&out->desc, &b->net->tensors[id].quant);
    out->desc.dims.nb_dims = out->min.nb_dims = out->opt.nb_dims = out->max.nb_dims =
        t->dims.nb_dims;
    for (int32_t d = 0; d < t->dims.nb_dims; d++) {
        int32_t node = expr_id(t->dims.d[d]);
        int64_t v;
        out->desc.dims.d[d] = expr_is_const(b->pool, t->dims.d[d], &v) ? v : -1;
        out->min.d[d] = b->lo[o + (size_t)node];
        out->opt.d[d] = b->opt[o + (size_t)node];
        out->max.d[d] = b->hi[o + (size_t)node];
    }
}

static prt_status bld_configure(bld *b, const net_layer *l,
                                prt_dynamic_tensor_desc *descs, int32_t profile)
{
    int32_t n = l->nb_inputs + l->nb_outputs;
    int32_t fmt[128];
    prt_status st;
    if (BUILD_ENTRY(l->plugin, set_target_device)) {
        st = BUILD_ENTRY(l->plugin, set_target_device)(l->plugin,
                                                       b->l[l - b->net->layers].device);
        if (st)
            return bld_plugin_fail(l, st, "set_target_device failed");
    }
    for (int32_t k = 0; k < n; k++)
        fmt[k] = descs[k].desc.format;
    for (int32_t k = 0; k < n; k++) {
        int32_t id = k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs];
        bld_desc(b, id, profile, &descs[k]);
        descs[k].desc.format = fmt[k];
    }
    if (!BUILD_ENTRY(l->plugin, configure))
        return PRT_OK;
    base_clear_error();
    st = BUILD_ENTRY(l->plugin, configure)(l->plugin, descs, l->nb_inputs,
                                           descs + l->nb_inputs, l->nb_outputs);
    return st ? bld_plugin_fail(l, st, "configure failed") : PRT_OK;
}

/* The layer's candidate tactics (plugin.h, get_valid_tactics): the ones the
 * plugin lists, in its order, each once; {0} when it lists none (or has no
 * set_tactic). Never a tactic it did not list: the first is what a build
 * without autotuning takes. */
static prt_status bld_tactics(const net_layer *l, int32_t **out, int32_t *out_n)
{
    int32_t count = 0, got = 0, n = 0;
    int32_t *list;
    prt_status st;
    if (BUILD_ENTRY(l->plugin, get_valid_tactics) &&
        RUNTIME_ENTRY(l->plugin, set_tactic)) {
        base_clear_error();
        st = BUILD_ENTRY(l->plugin, get_valid_tactics)(l->plugin, NULL, 0, &count);
        if (st)
            return bld_plugin_fail(l, st, "get_valid_tactics failed");
        if (count < 0 || count > 1024)
            return base_error(PRT_ERR_PLUGIN, "layer '%s': plugin lists %d tactics",
                              l->name, (int)count);
    }
    list = base_malloc(sizeof(int32_t) * (size_t)(count + 1));
    if (!list)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    if (count) {
        st = BUILD_ENTRY(l->plugin, get_valid_tactics)(l->plugin, list, count, &got);
        if (st) {
            base_free(list);
            return bld_plugin_fail(l, st, "get_valid_tactics failed");
        }
        if (got > count)
            got = count;
    }
    for (int32_t i = 0; i < got; i++) {
        int32_t k = 0;
        while (k < n && list[k] != list[i])
            k++;
        if (k == n)
            list[n++] = list[i];
    }
    if (n == 0)
        list[n++] = 0;
    *out = list;
    *out_n = n;
    return PRT_OK;
}

/* Configures the plugin for `descs` (formats chosen) at profile p and asks
 * for its workspace there. */
static prt_status bld_workspace(bld *b, const net_layer *l,
                                prt_dynamic_tensor_desc *descs, int32_t p, int64_t *out)
{
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs;
    int64_t ws = 0;
    prt_status st = bld_configure(b, l, descs, p);
    if (!st && BUILD_ENTRY(l->plugin, get_workspace_size)) {
        base_clear_error();
        st = BUILD_ENTRY(l->plugin, get_workspace_size)(l->plugin, descs, nb_in,
                                                        descs + nb_in, nb_out, &ws);
        if (st)
            st = bld_plugin_fail(l, st, "get_workspace_size failed");
        else if (ws < 0)
            st = base_error(PRT_ERR_PLUGIN, "layer '%s': negative workspace %lld",
                            l->name, (long long)ws);
    }
    if (!st && ws > b->cfg->workspace_limit)
        st = base_error(PRT_ERR_UNSUPPORTED,
                        "layer '%s' needs %lld bytes of workspace, over the limit of "
                        "%lld (prt_builder_config_set_workspace_limit)",
                        l->name, (long long)ws, (long long)b->cfg->workspace_limit);
    if (!st)
        *out = ws;
    return st;
}

/* The timing-cache key of a layer: what its best choice depends on. */
static prt_status cache_key(const bld *b, const net_layer *l, char *key, size_t cap)
{
    const prt_plugin *p = l->plugin;
    const prt_field_collection *fc = p->vt->runtime->get_fields_to_serialize(l->plugin);
    uint64_t h = BASE_FNV_SEED;
    size_t n;
    if (fc)
        for (int32_t i = 0; i < fc->nb_fields; i++) {
            const prt_field *f = &fc->fields[i];
            if (!f->name || (f->length && !f->data))
                continue;
            h = base_fnv1a64(f->name, strlen(f->name), h);
            h = base_fnv1a64(&f->type, sizeof f->type, h);
            h = base_fnv1a64(f->data, (size_t)f->length * base_field_type_size(f->type),
                             h);
        }
    n = (size_t)snprintf(key, cap, "%s|%s|%d.%d|%s::%s@%s|%016llx",
                         dev_name(b->cfg->device), b->dev_info.name,
                         (int)b->dev_info.cc_major, (int)b->dev_info.cc_minor,
                         p->vt->core->plugin_namespace(p), p->vt->core->name(p),
                         p->vt->core->version(p), (unsigned long long)h);
    /* TF32 changes what a float32 tactic runs (and the workspace it
     * needs). */
    if ((b->cfg->precision & PRT_PRECISION_TF32) && n < cap)
        n += (size_t)snprintf(key + n, cap - n, "|tf32");
    /* On the CPU the times depend on the threads the runs had. */
    if (b->dev->host_visible && n < cap)
        n += (size_t)snprintf(key + n, cap - n, "|threads %d",
                              (int)base_parallel_threads());
    for (int32_t k = 0; k < l->nb_inputs + l->nb_outputs && n < cap; k++) {
        prt_dynamic_tensor_desc d;
        char lo[128], opt[128], hi[128];
        bld_desc(b, k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs], 0,
                 &d);
        base_dims_str(&d.min, lo, sizeof lo);
        base_dims_str(&d.opt, opt, sizeof opt);
        base_dims_str(&d.max, hi, sizeof hi);
        n += (size_t)snprintf(key + n, cap - n, "|%s:%s/%s/%s",
                              prt_dtype_name(d.desc.dtype), lo, opt, hi);
    }
    if (n >= cap)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "layer '%s': its timing-cache key is too "
                          "long",
                          l->name);
    return PRT_OK;
}

/* A cached choice that still applies: its formats are one of the combinations
 * and its tactic one of the tactics. */
static int cached_choice(const bld *b, const char *key, const negotiation *ng, int32_t n,
                         const int32_t *tactics, int32_t nb_tactics, int32_t *combo,
                         int32_t *tactic)
{
    const tc_entry *e = tc_find(&b->cache, key);
    if (!e || e->nb_formats != n)
        return 0;
    for (int32_t c = 0; c < ng->nb_combos; c++) {
        if (memcmp(ng->formats[c], e->formats, sizeof(int32_t) * (size_t)n) != 0)
            continue;
        for (int32_t t = 0; t < nb_tactics; t++)
            if (tactics[t] == e->tactic) {
                *combo = c;
                *tactic = e->tactic;
                return 1;
            }
    }
    return 0;
}

static prt_status bld_set_tactic(const bld *b, const net_layer *l, int32_t tactic);

/* A built-in op's tactics whose workspace is over the config's limit (a
 * cuDNN FFT on large images) are not candidates: dropped with a verbose
 * line, unless none would be left (the build then fails naming the limit). */
static prt_status bld_drop_over_limit(bld *b, const net_layer *l,
                                      prt_dynamic_tensor_desc *descs, int32_t *tactics,
                                      int32_t *nb_tactics)
{
    int32_t n = 0;
    for (int32_t t = 0; t < *nb_tactics; t++) {
        int64_t ws = 0;
        prt_status st;
        if (!op_tactic_name(l->plugin, b->cfg->device, tactics[t])) {
            tactics[n++] = tactics[t];
            continue;
        }
        st = bld_set_tactic(b, l, tactics[t]);
        if (!st)
            st = bld_workspace(b, l, descs, 0, &ws);
        if (st == PRT_ERR_UNSUPPORTED && (n > 0 || t + 1 < *nb_tactics)) {
            base_log(PRT_SEV_VERBOSE, "layer '%s': tactic %d (%s) left out: %s", l->name,
                     (int)tactics[t],
                     op_tactic_name(l->plugin, b->cfg->device, tactics[t]),
                     prt_last_error());
            base_clear_error();
            continue;
        }
        if (st)
            return st;
        tactics[n++] = tactics[t];
    }
    *nb_tactics = n;
    return PRT_OK;
}

/* Tells a built-in op with tactics (op_device_tuning) the tactic, since
 * the workspace it needs depends on it; other plugins are told only by the
 * tuner, as before. */
static prt_status bld_set_tactic(const bld *b, const net_layer *l, int32_t tactic)
{
    prt_status st;
    if (!RUNTIME_ENTRY(l->plugin, set_tactic) ||
        !op_tactic_name(l->plugin, b->cfg->device, tactic))
        return PRT_OK;
    base_clear_error();
    st = RUNTIME_ENTRY(l->plugin, set_tactic)(l->plugin, tactic);
    return st ? bld_plugin_fail(l, st, "set_tactic failed") : PRT_OK;
}

/* The build log names what a built-in op's tactic is (Conv on CUDA: the
 * own kernel, cuBLAS or which cuDNN algorithm) and its time: info for
 * those, verbose for other plugins' numbered tactics. */
static void bld_log_choice(const bld *b, const net_layer *l, int32_t tactic, double ms,
                           int32_t nb_tactics)
{
    const char *name = op_tactic_name(l->plugin, b->cfg->device, tactic);
    char t[48] = "";
    if (ms >= 0)
        snprintf(t, sizeof t, ", %.3f us", ms * 1e3);
    if (name)
        base_log(PRT_SEV_INFO, "layer '%s': %s (tactic %d of %d timed%s)", l->name, name,
                 (int)tactic, (int)nb_tactics, t);
    else
        base_log(PRT_SEV_VERBOSE, "layer '%s': tactic %d chosen%s", l->name, (int)tactic,
                 t);
}

/* Times every (combination, tactic) candidate on the device and returns
 * the winner's combination and tactic. */
static prt_status bld_autotune(bld *b, const net_layer *l, const negotiation *ng,
                               const int32_t *tactics, int32_t nb_tactics,
                               int32_t *out_combo, int32_t *out_tactic)
{
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs, n = nb_in + nb_out;
    int32_t nc = ng->nb_combos * nb_tactics, best = 0;
    double best_ms = -1;
    uint32_t out_dd[64] = {0};
    int64_t ws_max = 0;
    prt_status st = PRT_OK;
    char key[4096];
    tune_candidate *cands = base_calloc((size_t)nc, sizeof *cands);
    prt_dynamic_tensor_desc *all =
        base_calloc((size_t)ng->nb_combos * (size_t)n, sizeof *all);
    if (!cands || !all)
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    /* Output dims that depend on data are tuned at their upper bound. */
    for (int32_t o = 0; o < nb_out && o < 64; o++) {
        const bld_tensor *t = &b->t[l->outputs[o]];
        for (int32_t d = 0; d < t->dims.nb_dims; d++)
            if (b->dd[expr_id(t->dims.d[d])])
                out_dd[o] |= 1u << d;
    }
    for (int32_t c = 0; c < ng->nb_combos && !st; c++) {
        prt_dynamic_tensor_desc *d = all + (size_t)c * (size_t)n;
        int64_t ws = 0;
        for (int32_t k = 0; k < n; k++)
            d[k].desc.format = ng->formats[c][k];
        /* A tactic may need workspace of its own (a built-in op's cuDNN
         * algorithm): the runs get the most any candidate needs. */
        for (int32_t t = 0; t < nb_tactics && !st; t++) {
            ws = 0;
            st = bld_set_tactic(b, l, tactics[t]);
            if (!st)
                st = bld_workspace(b, l, d, 0, &ws);
            if (ws > ws_max)
                ws_max = ws;
        }
        for (int32_t t = 0; t < nb_tactics; t++) {
            cands[c * nb_tactics + t].tactic = tactics[t];
            cands[c * nb_tactics + t].descs = d;
        }
    }
    if (!st && b->cfg->timing_cache) {
        st = cache_key(b, l, key, sizeof key);
        if (!st &&
            cached_choice(b, key, ng, n, tactics, nb_tactics, out_combo, out_tactic)) {
            const char *name = op_tactic_name(l->plugin, b->cfg->device, *out_tactic);
            base_log(name ? PRT_SEV_INFO : PRT_SEV_VERBOSE,
                     "layer '%s': tactic %d%s%s from the timing cache", l->name,
                     (int)*out_tactic, name ? ", " : "", name ? name : "");
            base_free(cands);
            base_free(all);
            return PRT_OK;
        }
    }
    if (!st) {
        /* Tactics with a kernel are timed as the kernel (kernel_tune.c). */
        int32_t li = (int32_t)(l - b->net->layers);
        prt_plugin *tp = NULL;
        st = bld_tune_plugin(b, li, &tp);
        if (!st)
            st = tune_layer(b->dev, tp, l->name, nb_in, nb_out, cands, nc, ws_max, out_dd,
                            b->cfg->precision, &best, &best_ms);
        bld_tune_plugin_destroy(b, li, tp);
    }
    if (!st) {
        *out_combo = best / nb_tactics;
        *out_tactic = tactics[best % nb_tactics];
        bld_log_choice(b, l, *out_tactic, best_ms, nb_tactics);
        if (b->cfg->timing_cache)
            st = tc_put(&b->cache, key, *out_tactic, n, ng->formats[*out_combo]);
    }
    base_free(cands);
    base_free(all);
    return st;
}

/* A plugin may leave a device out of devices() once configured, when its
 * kernel there does not take the dtypes (plugin.h): configured with the
 * first combination, it must still list the target, or the build fails
 * naming the layer, the plugin and the dtypes. */
int bld_can_fall_back(const bld *b, uint32_t devs)
{
    return b->cfg->cpu_fallback && b->cfg->device != PRT_DEVICE_CPU &&
           (devs & (1u << PRT_DEVICE_CPU));
}

const char *bld_fallback_hint(const bld *b, uint32_t devs)
{
    return b->cfg->device != PRT_DEVICE_CPU && !b->cfg->cpu_fallback &&
                   (devs & (1u << PRT_DEVICE_CPU))
               ? "; it runs on the CPU: --allow-cpu-fallback "
                 "(prt_builder_config_set_cpu_fallback) runs it there"
               : "";
}

static prt_status bld_device_dtypes(bld *b, const net_layer *l,
                                    prt_dynamic_tensor_desc *descs, const negotiation *ng)
{
    int32_t n = l->nb_inputs + l->nb_outputs;
    int32_t *device = &b->l[l - b->net->layers].device;
    char list[256];
    size_t pos = 0;
    uint32_t devs;
    prt_status st;
    for (int32_t k = 0; k < n; k++)
        descs[k].desc.format = ng->formats[0][k];
    st = bld_configure(b, l, descs, 0);
    if (st || (l->plugin->vt->core->devices(l->plugin) & (1u << *device)))
        return st;
    /* Configured, the plugin may still run on the CPU with these dtypes
     * (no CUDA kernel for integer MatMul): it does, when allowed. The
     * plugin is configured again for the CPU, which must then hold. */
    devs = l->plugin->vt->core->devices(l->plugin);
    if (bld_can_fall_back(b, devs)) {
        *device = PRT_DEVICE_CPU;
        st = bld_configure(b, l, descs, 0);
        if (st || (l->plugin->vt->core->devices(l->plugin) & (1u << *device)))
            return st;
    }
    list[0] = '\0';
    for (int32_t k = 0; k < n && pos < sizeof list; k++)
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s",
                                k == 0              ? (l->nb_inputs ? "(" : "() -> ")
                                : k == l->nb_inputs ? ") -> "
                                                    : ", ",
                                prt_dtype_name(descs[k].desc.dtype));
    return base_error(PRT_ERR_UNSUPPORTED,
                      "layer '%s': plugin %s does not run on %s with dtypes %s (its "
                      "kernel there does not take them)%s",
                      l->name, bld_plugin_label(l->plugin).s,
                      *device == PRT_DEVICE_CPU ? "the CPU" : "CUDA", list,
                      bld_fallback_hint(b, devs));
}

prt_status bld_layer_formats(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    bld_layer *bl = &b->l[li];
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs, n = nb_in + nb_out;
    negotiation *ng;
    int32_t *tactics = NULL, nb_tactics = 0, combo = 0;
    prt_status st = PRT_OK;
    char buf[128];

    if (n > 128)
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': too many tensors", l->name);
    bl->descs = base_calloc((size_t)n, sizeof(prt_dynamic_tensor_desc));
    ng = base_calloc(1, sizeof *ng);
    if (!bl->descs || !ng) {
        base_free(ng);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    for (int32_t k = 0; k < n; k++)
        bld_desc(b, k < nb_in ? l->inputs[k] : l->outputs[k - nb_in], 0, &bl->descs[k]);
    /* A built-in op lists, sizes and times its tactics under the engine's
     * precision (a cuDNN algorithm's workspace depends on TF32 being
     * allowed), as the engine will run them. */
    op_set_precision(l->plugin, b->cfg->precision);
    negotiate(l->plugin, bl->descs, 0, nb_in, nb_out, ng);
    if (ng->nb_combos == 0) {
        const prt_dynamic_tensor_desc *d = &bl->descs[ng->deepest];
        base_dims_str(&d->desc.dims, buf, sizeof buf);
        const prt_quant_desc *q = prt_tensor_desc_quant(&d->desc);
        int integer = d->desc.dtype == PRT_INT8 || d->desc.dtype == PRT_UINT8;
        st = base_error(PRT_ERR_UNSUPPORTED,
                        "layer '%s' (plugin %s) accepts no type/format combination: "
                        "it rejects %s %d (%s%s, dims %s)",
                        l->name, bld_plugin_label(l->plugin).s,
                        ng->deepest < nb_in ? "input" : "output",
                        (int)(ng->deepest < nb_in ? ng->deepest : ng->deepest - nb_in),
                        prt_dtype_name(d->desc.dtype),
                        !integer                          ? ""
                        : !q                              ? " without a scale"
                        : q->kind == PRT_QUANT_PER_TENSOR ? " with a per-tensor scale"
                                                          : " with per-channel scales",
                        buf);
        goto done;
    }
    st = bld_device_dtypes(b, l, bl->descs, ng);
    if (!st)
        st = bld_tactics(l, &tactics, &nb_tactics);
    if (!st)
        st = bld_drop_over_limit(b, l, bl->descs, tactics, &nb_tactics);
    if (!st)
        bl->tactic = tactics[0];
    /* A layer that falls back to the CPU is not timed: tuning times on
     * the target's device (and its plugin is not the engine's hot spot). */
    if (!st && b->cfg->autotune && bl->device == b->cfg->device &&
        (ng->nb_combos > 1 || nb_tactics > 1))
        st = bld_autotune(b, l, ng, tactics, nb_tactics, &combo, &bl->tactic);
    /* The chosen tactic is the one the workspace is sized for (tuning
     * left the plugin at its last candidate; without tuning it may still
     * be one that needs workspace, the first listed). */
    if (!st)
        st = bld_set_tactic(b, l, bl->tactic);
    if (st)
        goto done;

    /* The chosen combination: configure for every profile; the workspace is
     * the largest any profile asks for. */
    for (int32_t k = 0; k < n; k++)
        bl->descs[k].desc.format = ng->formats[combo][k];
    for (int32_t p = b->nb_profiles - 1; p >= 0 && !st; p--) {
        int64_t ws = 0;
        st = bld_workspace(b, l, bl->descs, p, &ws);
        if (ws > bl->workspace)
            bl->workspace = ws;
    }
    /* Outputs take the negotiated formats; consumers see them. */
    for (int32_t o = 0; !st && o < nb_out; o++)
        b->t[l->outputs[o]].format = bl->descs[nb_in + o].desc.format;
    if (!st)
        st = bld_layer_kernel(b, li);
    base_log(PRT_SEV_VERBOSE, "layer '%s': tactic %d, workspace %lld, %d combination(s)",
             l->name, (int)bl->tactic, (long long)bl->workspace, (int)ng->nb_combos);
done:
    base_free(tactics);
    base_free(ng);
    return st;
}

/* ---- the blocked format ---------------------------------------------------- */

/* The descriptors of layer li, every tensor in its format so far. */
static void bld_layer_descs(const bld *b, int32_t li, prt_dynamic_tensor_desc *d)
{
    const net_layer *l = &b->net->layers[li];
    for (int32_t k = 0; k < l->nb_inputs + l->nb_outputs; k++)
        bld_desc(b, k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs], 0,
                 &d[k]);
}

prt_status bld_plan_formats(bld *b)
{
    const prt_network *net = b->net;
    prt_dynamic_tensor_desc *d;
    negotiation *ng;
    uint8_t *blind;
    int32_t blocked = 0;
    if (b->cfg->device != PRT_DEVICE_CPU || !b->cfg->blocked_formats)
        return PRT_OK;
    d = base_calloc(128, sizeof *d);
    ng = base_calloc(1, sizeof *ng);
    blind = base_calloc((size_t)net->nb_layers + 1, 1);
    if (!d || !ng || !blind) {
        base_free(d);
        base_free(ng);
        base_free(blind);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    /* A layer whose plugin accepts a format that does not exist at some
     * position is not reading the format: its tensors stay LINEAR, so
     * that it never gets blocked data it would read as LINEAR. (So does a
     * layer of more tensors than negotiation takes.) */
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        int32_t n = l->nb_inputs + l->nb_outputs;
        blind[li] = n > 128;
        for (int32_t k = 0; k < n && !blind[li]; k++) {
            bld_layer_descs(b, li, d);
            d[k].desc.format = PRT_FORMAT_COUNT; /* the first that does not exist */
            base_clear_error();
            blind[li] = l->plugin->vt->build->supports_format_combination(
                            l->plugin, k, d, l->nb_inputs, l->nb_outputs) != 0;
        }
        if (blind[li])
            base_log(PRT_SEV_VERBOSE,
                     "layer '%s' (plugin %s) accepts any format value: its tensors stay "
                     "LINEAR",
                     l->name, bld_plugin_label(l->plugin).s);
    }
    /* Every float32 tensor of rank 3 or more inside the engine that a later
     * layer reads starts CHW8, unless a blind layer makes or reads it. */
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        for (int32_t o = 0; o < l->nb_outputs && !blind[li]; o++) {
            int32_t id = l->outputs[o], ok;
            bld_tensor *t = &b->t[id];
            ok = !bld_is_io(net, id) && t->dtype == PRT_FLOAT32 && t->dims.nb_dims >= 3 &&
                 t->size_id < 0 && t->values.nb_dims < 0 && t->last_use > li;
            for (int32_t c = li + 1; ok && c <= t->last_use; c++)
                for (int32_t q = 0; ok && q < net->layers[c].nb_inputs; q++)
                    ok = !(blind[c] && net->layers[c].inputs[q] == id);
            if (ok)
                t->format = PRT_FORMAT_CHW8;
        }
    }
    base_free(blind);
    /* Then, while some layer takes no combination of its tensors' formats,
     * the tensor at the position it refuses goes back to LINEAR (or, where
     * that one is LINEAR already, the last CHW8 one before it, which the
     * refusal may depend on), and the check goes on from that tensor's
     * producer. Each round turns one tensor LINEAR, so it ends. */
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        int32_t n = l->nb_inputs + l->nb_outputs, flip = -1;
        if (n == 0 || n > 128)
            continue; /* no CHW8 tensor (blind); bld_layer_formats fails it */
        bld_layer_descs(b, li, d);
        memset(ng, 0, sizeof *ng);
        base_clear_error();
        negotiate(l->plugin, d, 0, l->nb_inputs, l->nb_outputs, ng);
        if (ng->nb_combos)
            continue;
        for (int32_t k = ng->deepest; k >= 0 && flip < 0; k--) {
            int32_t id = k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs];
            if (b->t[id].format == PRT_FORMAT_CHW8)
                flip = id;
        }
        if (flip < 0)
            continue; /* not the format's doing: bld_layer_formats reports it */
        b->t[flip].format = PRT_FORMAT_LINEAR;
        /* Only the layers that touch the tensor see the change: its
         * producer, at or before this layer, and its consumers after it.
         * The check goes on from the producer. */
        while (li > 0) {
            const net_layer *lp = &net->layers[li];
            int makes = 0;
            for (int32_t o = 0; o < lp->nb_outputs && !makes; o++)
                makes = lp->outputs[o] == flip;
            if (makes)
                break;
            li--;
        }
        li--;
    }
    for (int32_t i = 0; i < net->nb_tensors; i++)
        blocked += b->t[i].format == PRT_FORMAT_CHW8;
    if (blocked)
        base_log(PRT_SEV_VERBOSE, "%d tensor(s) in the blocked format CHW8",
                 (int)blocked);
    base_clear_error();
    base_free(d);
    base_free(ng);
    return PRT_OK;
}

/* The last layer whose sizes dims d depend on (-1 if none), from each
 * node's owner (the last layer whose size it depends on). */
static int32_t size_layer_of(const int32_t *owner, const prt_dim_exprs *d)
{
    int32_t last = -1;
    for (int32_t k = 0; k < d->nb_dims; k++)
        if (owner[expr_id(d->d[k])] > last)
            last = owner[expr_id(d->d[k])];
    return last;
}

prt_status bld_host_dims(bld *b)
{
    const expr_program *prog = expr_pool_program(b->pool);
    int32_t *owner;
    if (b->dev->host_visible)
        return PRT_OK; /* sizes are read on the host after each layer anyway */
    owner = base_malloc(sizeof(int32_t) * ((size_t)prog->nb_nodes + 1));
    if (!owner)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t i = 0; i < prog->nb_nodes; i++) {
        const expr_node *x = &prog->nodes[i];
        int32_t oi;
        owner[i] = -1;
        if (x->kind == EXPR_SIZE)
            expr_pool_size_owner(b->pool, (int32_t)x->imm, &owner[i], &oi);
        else if (x->kind == EXPR_OP)
            owner[i] = owner[x->a] > owner[x->b] ? owner[x->a] : owner[x->b];
    }
    for (int32_t li = 0; li < b->net->nb_layers; li++) {
        const net_layer *l = &b->net->layers[li];
        int touches = 0;
        if (!BUILD_ENTRY(l->plugin, requires_host_dims) ||
            !BUILD_ENTRY(l->plugin, requires_host_dims)(l->plugin, b->l[li].device))
            continue;
        for (int32_t k = 0; k < l->nb_inputs && !touches; k++)
            touches = size_layer_of(owner, &b->t[l->inputs[k]].dims) >= 0;
        for (int32_t o = 0; o < l->nb_outputs && !touches; o++) {
            int32_t s = size_layer_of(owner, &b->t[l->outputs[o]].dims);
            touches = s >= 0 && s < li;
        }
        if (!touches)
            continue;
        b->l[li].host_dims = 1;
        base_log(PRT_SEV_INFO,
                 "layer '%s' (plugin %s) needs the true dims of "
                 "data-dependent tensors on the host: each run waits for the device "
                 "before it",
                 l->name, bld_plugin_label(l->plugin).s);
    }
    base_free(owner);
    return PRT_OK;
}

/*
 * What a loaded engine says of its layers, asked again of their plugins
 * (engine_check_layers).
 *
 * engine_validate checks what the file says against itself; some of it
 * only a layer's plugin can confirm: which dtypes and formats it takes,
 * and how much workspace it needs. A file that lowers every claim together
 * with META's total, or relabels a CHW8 tensor LINEAR, is consistent and
 * wrong, and the kernels then write past their blocks. So every layer is
 * asked the builder's questions again, on a plugin made for the build
 * phase from the layer's stored fields, with the engine's choices:
 *  - nb_outputs and get_output_dtypes: the layer's outputs are what the
 *    plugin makes from its inputs' dtypes;
 *  - supports_format_combination at every position with the engine's
 *    dtypes and formats (profile 0's bounds, as the builder asks), so each
 *    tensor's format is one its producer and every consumer accept;
 *  - a built-in op's tactic (set_tactic: one its kernels know, which may
 *    need workspace of its own), then
 *  - configure and get_workspace_size at every profile (from the last to
 *    the first, as the builder goes), the need being the largest answer,
 *    which is what the builder records. A built-in op's claim must equal
 *    it: less lets its kernels write past the block, more makes every
 *    context reserve memory nothing uses. Another plugin's claim must not
 *    be less; more is allowed, since a plugin's answer may depend on the
 *    machine (the standard plugins add their CUDA workspace where a GPU is).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/plugin_label.h"
#include "engine/engine_impl.h"
#include "network/network.h"
#include "ops/op_const.h"
#include "registry/registry.h"

static int builtin(const eng_layer *l)
{
    return strcmp(l->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0;
}

/* "op Conv" or "plugin ns::Name", for messages. */
static const char *layer_label(const eng_layer *l, char *buf, size_t cap)
{
    if (builtin(l))
        snprintf(buf, cap, "op %s", l->plugin_name);
    else
        snprintf(buf, cap, "plugin %s",
                 base_plugin_label(l->plugin_namespace, l->plugin_name).s);
    return buf;
}

static prt_status invalid(const eng_layer *l, int32_t li, const char *fmt, ...)
    BASE_PRINTF(3, 4);
static prt_status invalid(const eng_layer *l, int32_t li, const char *fmt, ...)
{
    char msg[768], who[340];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_error(PRT_ERR_MALFORMED, "invalid engine: layer %d ('%s', %s): %s",
                      (int)li, l->name, layer_label(l, who, sizeof who), msg);
}

/* A plugin entry that failed: its own message and status
 * (base_plugin_status), prefixed with the layer. */
static prt_status entry_failed(const eng_layer *l, int32_t li, prt_status st,
                               const char *what)
{
    char who[340];
    if (!prt_last_error()[0])
        base_error(st ? st : PRT_ERR_PLUGIN, "no message from the plugin");
    return base_error_prefix(base_plugin_status(st),
                             "layer %d ('%s', %s): checking the engine against its "
                             "plugin: %s",
                             (int)li, l->name, layer_label(l, who, sizeof who), what);
}

/* The descriptors the builder gave layer l at profile p (its bounds in
 * lo/opt/hi): engine dtypes and formats, static dims, -1 for the rest. */
static void layer_descs(const prt_engine *e, const eng_layer *l, const int64_t *lo,
                        const int64_t *opt, const int64_t *hi, prt_dynamic_tensor_desc *d)
{
    for (int32_t k = 0; k < l->nb_inputs + l->nb_outputs; k++) {
        const eng_tensor *t =
            &e->tensors[k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs]];
        memset(&d[k], 0, sizeof d[k]);
        d[k].desc.dtype = t->dtype;
        d[k].desc.format = t->format;
        base_quant_attach(&d[k].desc, &t->quant);
        d[k].desc.dims.nb_dims = d[k].min.nb_dims = d[k].opt.nb_dims = d[k].max.nb_dims =
            t->nb_dims;
        for (int32_t j = 0; j < t->nb_dims; j++) {
            const int32_t x = t->dim_expr[j];
            const expr_node *n = &e->exprs.nodes[x];
            d[k].desc.dims.d[j] = n->kind == EXPR_CONST ? n->imm : -1;
            d[k].min.d[j] = lo[x];
            d[k].opt.d[j] = opt[x];
            d[k].max.d[j] = hi[x];
        }
    }
}

/* The layer's creator, as engine_recreate_plugin found it. */
static prt_status find_creator(const prt_registry *reg, const eng_layer *l,
                               const prt_plugin_creator **out)
{
    if (builtin(l))
        return prt_builtin_find_creator(l->plugin_name, l->plugin_version, out);
    return prt_registry_find_creator(reg, l->plugin_namespace, l->plugin_name,
                                     l->plugin_version, out);
}

/* Scratch shared by every layer's check. */
typedef struct check_ctx {
    const prt_engine *e;
    const prt_registry *reg;
    int64_t *lo, *opt, *hi; /* [profile * nb_nodes + node] */
    prt_dynamic_tensor_desc *d;
    int32_t *types; /* inputs' dtypes, then the outputs' the plugin gives */
} check_ctx;

static const char *tensor_of(const check_ctx *c, const eng_layer *l, int32_t k)
{
    return c->e->tensors[k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs]]
        .name;
}

/* Whether output o may differ from the plugin's dtype `made`: a float
 * output into which the builder folded a QuantizeLinear (fold.c) is int8
 * or uint8 with a quantization; check_formats then asks the plugin that it
 * writes those integers (takes the dtype with the scale, not without). */
static int q_folded(const prt_engine *e, const eng_layer *l, int32_t o, int32_t made)
{
    const eng_tensor *t = &e->tensors[l->outputs[o]];
    return (made == PRT_FLOAT32 || made == PRT_FLOAT16 || made == PRT_BFLOAT16) &&
           (t->dtype == PRT_INT8 || t->dtype == PRT_UINT8) &&
           t->quant.d.kind != PRT_QUANT_NONE;
}

/* Outputs and their dtypes from the inputs' dtypes. */
static prt_status check_dtypes(const check_ctx *c, const eng_layer *l, int32_t li,
                               prt_plugin *p)
{
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs, n;
    int32_t *in = c->types, *out = c->types + nb_in;
    prt_status st;
    base_clear_error();
    n = p->vt->build->nb_outputs(p);
    if (n != nb_out)
        return invalid(l, li, "%d outputs, but its plugin makes %d", (int)nb_out, (int)n);
    for (int32_t k = 0; k < nb_in; k++)
        in[k] = c->e->tensors[l->inputs[k]].dtype;
    for (int32_t o = 0; o < nb_out; o++)
        out[o] = -1;
    base_clear_error();
    st = p->vt->build->get_output_dtypes(p, out, nb_out, in, nb_in);
    if (st)
        return entry_failed(l, li, st, "get_output_dtypes failed for the inputs' dtypes");
    for (int32_t o = 0; o < nb_out; o++)
        if (out[o] != c->e->tensors[l->outputs[o]].dtype && !q_folded(c->e, l, o, out[o]))
            return invalid(l, li,
                           "output %d ('%s') is %s, but the plugin makes %s from these "
                           "inputs",
                           (int)o, tensor_of(c, l, nb_in + o),
                           prt_dtype_name(c->e->tensors[l->outputs[o]].dtype),
                           prt_dtype_size(out[o]) ? prt_dtype_name(out[o]) : "no dtype");
    return PRT_OK;
}

/* An output in its input's memory under other dims (engine_validate lets
 * output 0 over input 0 through) only where the op is a view. */
static prt_status check_views(const check_ctx *c, const eng_layer *l, int32_t li,
                              const prt_plugin *p)
{
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        const eng_tensor *to, *ti;
        if (l->alias_input[o] < 0)
            continue;
        to = &c->e->tensors[l->outputs[o]];
        ti = &c->e->tensors[l->inputs[l->alias_input[o]]];
        if (!engine_same_dims(to, ti) && !op_is_view(p))
            return invalid(l, li,
                           "output %d ('%s') shares input %d's memory under other dims, "
                           "which only a built-in view (Reshape, Squeeze, Unsqueeze, "
                           "Flatten) may",
                           (int)o, to->name, (int)l->alias_input[o]);
    }
    return PRT_OK;
}

/* Every position's dtype and format, as the builder negotiated them. */
static prt_status check_formats(const check_ctx *c, const eng_layer *l, int32_t li,
                                prt_plugin *p)
{
    const int32_t nb_in = l->nb_inputs, n = l->nb_inputs + l->nb_outputs;
    layer_descs(c->e, l, c->lo, c->opt, c->hi, c->d); /* profile 0 */
    for (int32_t k = 0; k < n; k++) {
        const prt_tensor_desc *t = &c->d[k].desc;
        base_clear_error();
        if (!p->vt->build->supports_format_combination(p, k, c->d, nb_in, n - nb_in))
            return invalid(l, li,
                           "%s %d ('%s', %s, format %s) is not a type and format its %s "
                           "takes there",
                           k < nb_in ? "input" : "output",
                           (int)(k < nb_in ? k : k - nb_in), tensor_of(c, l, k),
                           prt_dtype_name(t->dtype),
                           t->format == PRT_FORMAT_CHW8 ? "CHW8" : "LINEAR",
                           builtin(l) ? "op" : "plugin");
    }
    /* A folded QuantizeLinear's output: a plugin that takes the integer
     * dtype without the scale too does not read it, and would write its
     * own dtype into memory sized for bytes. */
    for (int32_t o = 0; o < n - nb_in; o++) {
        prt_dynamic_tensor_desc *d = &c->d[nb_in + o];
        void *q = d->desc.reserved[0];
        int takes_plain;
        if (c->types[nb_in + o] == d->desc.dtype)
            continue;
        d->desc.reserved[0] = NULL;
        base_clear_error();
        takes_plain = p->vt->build->supports_format_combination(p, nb_in + o, c->d, nb_in,
                                                                n - nb_in);
        d->desc.reserved[0] = q;
        if (takes_plain)
            return invalid(
                l, li,
                "output %d ('%s') is %s with a scale where the plugin makes "
                "%s, but the plugin takes %s there without the scale too, so "
                "it does not write the integers",
                (int)o, tensor_of(c, l, nb_in + o), prt_dtype_name(d->desc.dtype),
                prt_dtype_name(c->types[nb_in + o]), prt_dtype_name(d->desc.dtype));
    }
    return PRT_OK;
}

/* configure and get_workspace_size at every profile; *need the largest. */
static prt_status ask_workspace(const check_ctx *c, const eng_layer *l, int32_t li,
                                prt_plugin *p, int64_t *need)
{
    const prt_engine *e = c->e;
    const size_t nodes = (size_t)e->exprs.nb_nodes;
    char what[96];
    *need = 0;
    for (int32_t pr = e->nb_profiles - 1; pr >= 0; pr--) {
        const size_t o = (size_t)pr * nodes;
        int64_t ws = 0;
        prt_status st;
        layer_descs(e, l, c->lo + o, c->opt + o, c->hi + o, c->d);
        if (BUILD_ENTRY(p, set_target_device)) {
            base_clear_error();
            st = BUILD_ENTRY(p, set_target_device)(p, l->device);
            if (st)
                return entry_failed(l, li, st, "set_target_device failed");
        }
        if (BUILD_ENTRY(p, configure)) {
            base_clear_error();
            st = BUILD_ENTRY(p, configure)(p, c->d, l->nb_inputs, c->d + l->nb_inputs,
                                           l->nb_outputs);
            if (st) {
                snprintf(what, sizeof what, "configure failed at profile %d", (int)pr);
                return entry_failed(l, li, st, what);
            }
        }
        if (!BUILD_ENTRY(p, get_workspace_size))
            continue;
        base_clear_error();
        st = BUILD_ENTRY(p, get_workspace_size)(p, c->d, l->nb_inputs,
                                                c->d + l->nb_inputs, l->nb_outputs, &ws);
        if (st) {
            snprintf(what, sizeof what, "get_workspace_size failed at profile %d",
                     (int)pr);
            return entry_failed(l, li, st, what);
        }
        if (ws < 0)
            return base_error(PRT_ERR_PLUGIN,
                              "layer %d ('%s'): its plugin asks for %lld bytes of "
                              "workspace at profile %d",
                              (int)li, l->name, (long long)ws, (int)pr);
        if (ws > *need)
            *need = ws;
    }
    return PRT_OK;
}

static prt_status check_layer(const check_ctx *c, int32_t li)
{
    const eng_layer *l = &c->e->layers[li];
    const prt_plugin_creator *cr = NULL;
    prt_field_collection fc;
    prt_plugin *p = NULL;
    int64_t need = 0;
    prt_status st = find_creator(engine_layer_registry(c->e, c->reg, l), l, &cr);
    if (st)
        return base_error_prefix(st, "layer %d ('%s')", (int)li, l->name);
    fc.nb_fields = l->nb_fields;
    fc.fields = l->fields;
    base_clear_error();
    st = cr->create(cr, l->name, &fc, PRT_PHASE_BUILD, &p);
    if (st || !p)
        return entry_failed(l, li, st ? st : PRT_ERR_PLUGIN,
                            "its creator made no plugin for the build phase, which "
                            "loading asks for the layer's formats and workspace");
    st = network_check_plugin(p, 1);
    if (st)
        st = entry_failed(l, li, st, "the build-phase plugin");
    if (!st)
        st = check_dtypes(c, l, li, p);
    if (!st)
        st = check_formats(c, l, li, p);
    if (!st)
        st = check_views(c, l, li, p);
    /* A built-in op's tactic may need workspace of its own (Conv's cuDNN
     * algorithms; a tactic no kernel knows is refused here). */
    if (!st && builtin(l) && l->tactic != 0 && RUNTIME_ENTRY(p, set_tactic)) {
        base_clear_error();
        if (RUNTIME_ENTRY(p, set_tactic)(p, l->tactic) != PRT_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", prt_last_error());
            st = invalid(l, li, "its tactic is not one its op has: %s", why);
        }
    }
    if (!st)
        st = ask_workspace(c, l, li, p, &need);
    if (!st && l->workspace < need)
        st = invalid(l, li,
                     "claims %lld bytes of workspace, less than the %lld its %s asks "
                     "for at the profiles' largest shapes",
                     (long long)l->workspace, (long long)need,
                     builtin(l) ? "op" : "plugin");
    if (!st && builtin(l) && l->workspace > need)
        st = invalid(l, li,
                     "claims %lld bytes of workspace, more than the %lld its op can need "
                     "at the profiles' largest shapes",
                     (long long)l->workspace, (long long)need);
    network_destroy_plugin(p);
    return st;
}

prt_status engine_check_layers(const prt_registry *reg, const prt_engine *e)
{
    const size_t nodes = (size_t)e->exprs.nb_nodes;
    const size_t all = nodes * (size_t)e->nb_profiles;
    size_t max_io = 1;
    check_ctx c;
    prt_status st = PRT_OK;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.reg = reg;
    for (int32_t li = 0; li < e->nb_layers; li++) {
        size_t n = (size_t)e->layers[li].nb_inputs + (size_t)e->layers[li].nb_outputs;
        max_io = n > max_io ? n : max_io;
    }
    c.lo = base_malloc(sizeof(int64_t) * 3 * (all ? all : 1));
    c.d = base_malloc(sizeof *c.d * max_io);
    c.types = base_malloc(sizeof *c.types * max_io);
    if (!c.lo || !c.d || !c.types) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "loading the engine: out of memory");
        goto done;
    }
    c.opt = c.lo + all;
    c.hi = c.opt + all;
    /* engine_validate evaluated the same bounds: they cannot fail now but
     * for memory. */
    for (int32_t p = 0; p < e->nb_profiles && !st; p++) {
        size_t k = (size_t)p * (size_t)e->nb_inputs, o = (size_t)p * nodes;
        expr_profile prof = {e->nb_inputs,    e->prof_min + k,  e->prof_opt + k,
                             e->prof_max + k, e->prof_vmin + k, e->prof_vopt + k,
                             e->prof_vmax + k};
        st = expr_program_bounds(&e->exprs, &prof, c.lo + o, c.opt + o, c.hi + o);
        if (st)
            st = base_error_prefix(st, "loading the engine: profile %d", (int)p);
    }
    /* A kernel layer has no plugin to ask: engine_validate checked its
     * kernel against the code it holds (kernel_validate). */
    for (int32_t li = 0; li < e->nb_layers && !st; li++)
        if (!e->layers[li].kernel)
            st = check_layer(&c, li);
done:
    base_free(c.lo);
    base_free(c.d);
    base_free(c.types);
    return st;
}

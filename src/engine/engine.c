/*
 * The engine object: making a valid engine ready to run, and the public
 * prt_engine_* API (serialize, deserialize with plugins recreated through a
 * registry, queries).
 *
 * The file format itself is in format.c, the invariant check that guards
 * engines read from bytes in validate.c, allocation and freeing in alloc.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/plugin_label.h"
#include "engine/engine_impl.h"
#include "kernel/kernel.h"
#include "ops/op_const.h"
#include "ops/op_workspace.h"
#include "network/network.h"
#include "registry/registry.h"

/* An entry a table's struct_size covers and that is set (plugin.h: tables
 * only grow; read an entry only when covered). */
#define HAS_ENTRY(table, type, member)                                                   \
    ((table) && (table)->struct_size >= BASE_END_OF(type, member) &&                     \
     (table)->member != NULL)

/* eng_layer.skipped, from the last layer back: a layer runs when an
 * output is an engine output or a size tensor (the runtime reads sizes), or
 * when a layer that runs takes one of its outputs; a layer without outputs
 * runs (whatever it is for, it is not for its results). */
static prt_status mark_skipped(prt_engine *e)
{
    uint8_t *read = base_calloc((size_t)e->nb_tensors + 1, 1);
    if (!read)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "loading the engine: out of memory");
    for (int32_t li = e->nb_layers - 1; li >= 0; li--) {
        eng_layer *l = &e->layers[li];
        int runs = l->nb_outputs == 0;
        for (int32_t o = 0; o < l->nb_outputs; o++) {
            const eng_tensor *t = &e->tensors[l->outputs[o]];
            runs |= read[l->outputs[o]] || t->output_index >= 0 || t->size_id >= 0;
        }
        l->skipped = !runs;
        if (runs)
            for (int32_t k = 0; k < l->nb_inputs; k++)
                read[l->inputs[k]] = 1;
    }
    base_free(read);
    return PRT_OK;
}

prt_status engine_derive(prt_engine *e)
{
    prt_status st;
    uint8_t *dep = engine_size_deps(e);
    if (!dep)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "loading the engine: out of memory");
    for (int32_t t = 0; t < e->nb_tensors; t++) {
        e->tensors[t].dd_mask = 0;
        for (int32_t k = 0; k < e->tensors[t].nb_dims; k++)
            if (dep[e->tensors[t].dim_expr[k]])
                e->tensors[t].dd_mask |= 1u << k;
    }
    base_free(dep);
    st = mark_skipped(e);
    return st ? st : engine_derive_fallback(e);
}

prt_status engine_prepare(prt_engine *e)
{
    const dev_ops *d;
    dev_info here;
    void *w = NULL;
    prt_status st = dev_get(e->device, &d);
    if (st)
        return base_error_prefix(st, "the engine targets %s", dev_name(e->device));
    st = engine_derive(e);
    if (st)
        return st;
    e->dev = d;
    e->device_index = 0;
    if (d->get_current && (st = d->get_current(&e->device_index)) != PRT_OK)
        return base_error_prefix(st, "the engine targets %s", dev_name(e->device));
    /* Tactics were timed on the device the engine was built on; another
     * GPU runs the engine correctly but maybe not at its best. */
    if (e->device != PRT_DEVICE_CPU && e->built_on.name[0] && d->info(&here) == PRT_OK &&
        (here.cc_major != e->built_on.cc_major || here.cc_minor != e->built_on.cc_minor ||
         strcmp(here.name, e->built_on.name) != 0))
        base_log(PRT_SEV_WARNING,
                 "the engine was built and tuned on %s (compute capability "
                 "%d.%d) and is loaded on %s (%d.%d): its tactics' timings may not hold",
                 e->built_on.name, (int)e->built_on.cc_major, (int)e->built_on.cc_minor,
                 here.name, (int)here.cc_major, (int)here.cc_minor);
    if (d->host_visible) {
        e->weights_dev = e->weights;
        return PRT_OK;
    }
    st = d->alloc((size_t)e->weights_size, &w);
    if (!st)
        st = d->copy(w, e->weights, (size_t)e->weights_size, DEV_COPY_H2D, NULL);
    if (!st)
        st = d->sync();
    if (st) {
        if (w)
            d->free(w);
        return base_error_prefix(st, "uploading %lld bytes of weights",
                                 (long long)e->weights_size);
    }
    e->weights_dev = w;
    return PRT_OK;
}

/* The runtime table of a plugin when its tables can be trusted to hold it. */
static const prt_plugin_runtime *plugin_runtime(const prt_plugin *p)
{
    if (!p || !p->vt || p->vt->struct_size < BASE_END_OF(prt_plugin_vtable, runtime))
        return NULL;
    return p->vt->runtime;
}

/* ------------------------------------------------------------------------ */
/* Serialize / deserialize                                                   */
/* ------------------------------------------------------------------------ */

prt_status prt_engine_serialize(const prt_engine *engine, void **out_bytes,
                                size_t *out_size)
{
    base_buf b = {0};
    prt_status st;
    if (!engine || !out_bytes || !out_size)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_serialize: NULL argument");
    st = engine_write(engine, &b);
    if (st) {
        base_buf_free(&b);
        return st;
    }
    /* base_buf grows with base_realloc, which is realloc: prt_free frees it. */
    *out_bytes = b.data;
    *out_size = b.size;
    return PRT_OK;
}

/* Recreates layer l's runtime plugin through the registry. */
prt_status engine_recreate_plugin(const prt_registry *reg, eng_layer *l, int32_t li)
{
    const prt_plugin_creator *c = NULL;
    const prt_plugin_runtime *rt;
    prt_field_collection fc;
    prt_plugin *p = NULL;
    const char *lib;
    uint64_t hash = 0;
    prt_status st;

    /* A kernel layer runs its kernel: no creator, no library. */
    if (l->kernel)
        return kernel_runner_create(l->kernel, l->name, l->nb_inputs, l->nb_outputs,
                                    &l->plugin);
    /* plugrt's own ops are served by plugrt, whatever the registry holds. */
    if (strcmp(l->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0) {
        if (prt_builtin_find_creator(l->plugin_name, l->plugin_version, &c) != PRT_OK)
            return base_error_prefix(PRT_ERR_NOT_FOUND, "layer %d ('%s')", (int)li,
                                     l->name);
    } else if (prt_registry_find_creator(reg, l->plugin_namespace, l->plugin_name,
                                         l->plugin_version, &c) != PRT_OK) {
        char libs[1024];
        char built[4200];
        registry_describe_libraries(reg, libs, sizeof libs);
        if (l->library[0])
            snprintf(built, sizeof built, "library %s (content hash %016llx)", l->library,
                     (unsigned long long)l->library_hash);
        else
            snprintf(built, sizeof built,
                     "a creator registered directly, "
                     "not from a library");
        return base_error(PRT_ERR_NOT_FOUND,
                          "layer %d ('%s'): plugin %s::%s version %s is not in "
                          "the registry; the engine was built with %s; %s",
                          (int)li, l->name, l->plugin_namespace, l->plugin_name,
                          l->plugin_version, built, libs);
    }
    lib = prt_registry_get_creator_library(reg, c, &hash);
    /* Hash 0 means unknown on either side: nothing to compare. */
    if (hash && l->library_hash && hash != l->library_hash)
        base_log(PRT_SEV_WARNING,
                 "layer '%s': plugin %s::%s version %s was built with library "
                 "%s (content hash %016llx) but is loaded from %s (content "
                 "hash %016llx); results may differ",
                 l->name, l->plugin_namespace, l->plugin_name, l->plugin_version,
                 l->library, (unsigned long long)l->library_hash, lib ? lib : "?",
                 (unsigned long long)hash);

    if (!HAS_ENTRY(c, prt_plugin_creator, create))
        return base_error(PRT_ERR_PLUGIN,
                          "layer '%s': the creator of %s::%s "
                          "has no create function",
                          l->name, l->plugin_namespace, l->plugin_name);
    fc.nb_fields = l->nb_fields;
    fc.fields = l->fields;
    base_clear_error();
    st = c->create(c, l->name, &fc, PRT_PHASE_RUNTIME, &p);
    if (st != PRT_OK || !p) {
        base_label who = base_plugin_label(l->plugin_namespace, l->plugin_name);
        if (prt_last_error()[0] == '\0')
            return base_error(base_plugin_status(st),
                              "layer '%s': creating plugin %s failed (%s, no message)",
                              l->name, who.s,
                              st ? prt_status_name(st) : "no plugin returned");
        return base_error_prefix(base_plugin_status(st), "layer '%s' (plugin %s)",
                                 l->name, who.s);
    }
    /* Owned by the engine from here: engine_free destroys it (when its
     * tables let it be destroyed at all). */
    l->plugin = p;
    /* A built-in op checks each run's need against the layer's claim. */
    op_bind_workspace(p, l->workspace);
    /* The same check the network makes, for the runtime phase: contexts
     * call the engine's plugin (attach_to_context) without checking again. */
    if (network_check_plugin(p, 0) != PRT_OK)
        return base_error_prefix(PRT_ERR_PLUGIN, "layer '%s'", l->name);
    rt = plugin_runtime(p);
    if (HAS_ENTRY(rt, prt_plugin_runtime, set_tactic)) {
        base_clear_error();
        st = rt->set_tactic(p, l->tactic);
        if (st != PRT_OK) {
            if (prt_last_error()[0] == '\0')
                return base_error(base_plugin_status(st),
                                  "layer '%s': set_tactic(%d) "
                                  "failed (%s)",
                                  l->name, (int)l->tactic, prt_status_name(st));
            return base_error_prefix(base_plugin_status(st), "layer '%s': set_tactic(%d)",
                                     l->name, (int)l->tactic);
        }
    } else if (l->tactic != 0) {
        return base_error(PRT_ERR_PLUGIN,
                          "layer '%s': the engine chose tactic "
                          "%d, but the plugin has no set_tactic",
                          l->name, (int)l->tactic);
    }
    return PRT_OK;
}

/* The dims of a tensor whose dims are all constants: 1 and *out set, else
 * 0. */
static int static_dims(const prt_engine *e, const eng_tensor *t, prt_dims *out)
{
    memset(out, 0, sizeof *out);
    out->nb_dims = t->nb_dims;
    for (int32_t k = 0; k < t->nb_dims; k++) {
        const expr_node *n = &e->exprs.nodes[t->dim_expr[k]];
        if (n->kind != EXPR_CONST)
            return 0;
        out->d[k] = n->imm;
    }
    return 1;
}

prt_status engine_bind_constants(prt_engine *e)
{
    if (e->device != PRT_DEVICE_CPU || e->weights_dev != e->weights)
        return PRT_OK;
    for (int32_t i = 0; i < e->nb_layers; i++) {
        const eng_layer *l = &e->layers[i];
        prt_tensor_desc in[OP_MAX_INPUTS], out[8];
        const void *data[OP_MAX_INPUTS];
        int32_t nb_out = l->nb_outputs < 8 ? l->nb_outputs : 8;
        int any = 0;
        prt_status st;
        if (l->device != PRT_DEVICE_CPU || !l->plugin ||
            strcmp(l->plugin_namespace, PRT_BUILTIN_NAMESPACE) != 0 ||
            l->nb_inputs > OP_MAX_INPUTS)
            continue;
        for (int32_t k = 0; k < l->nb_inputs; k++) {
            const eng_tensor *t = &e->tensors[l->inputs[k]];
            memset(&in[k], 0, sizeof in[k]);
            in[k].dtype = t->dtype;
            in[k].format = t->format;
            base_quant_attach(&in[k], &t->quant);
            data[k] = NULL;
            if (t->const_offset >= 0 && static_dims(e, t, &in[k].dims)) {
                data[k] = e->weights + t->const_offset;
                any = 1;
            }
        }
        if (!any)
            continue;
        /* The outputs' formats (their dims are not needed). */
        for (int32_t k = 0; k < nb_out; k++) {
            memset(&out[k], 0, sizeof out[k]);
            out[k].dtype = e->tensors[l->outputs[k]].dtype;
            out[k].format = e->tensors[l->outputs[k]].format;
        }
        st = op_bind_constants(l->plugin, in, l->nb_inputs, out, nb_out, data);
        if (st)
            return base_error_prefix(st, "layer '%s'", l->name);
    }
    return PRT_OK;
}

void engine_bind_precision(prt_engine *e)
{
    for (int32_t i = 0; i < e->nb_layers; i++)
        op_set_precision(e->layers[i].plugin, e->precision);
}

prt_status prt_engine_deserialize(const prt_registry *reg, const void *bytes, size_t size,
                                  prt_engine **out)
{
    return prt_engine_deserialize_with_options(reg, bytes, size, NULL, out);
}

prt_status prt_engine_deserialize_with_options(const prt_registry *reg, const void *bytes,
                                               size_t size,
                                               const prt_deserialize_options *options,
                                               prt_engine **out)
{
    prt_engine *e = NULL;
    prt_status st;
    uint32_t allow = 0;
    if (!bytes || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_deserialize: NULL %s",
                          !bytes ? "bytes" : "out");
    if (options) {
        if (options->struct_size < BASE_END_OF(prt_deserialize_options, allow_embedded))
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "prt_engine_deserialize_with_options: options.struct_size "
                              "%u, want sizeof(prt_deserialize_options) (%zu)",
                              (unsigned)options->struct_size,
                              sizeof(prt_deserialize_options));
        allow = options->allow_embedded;
    }
    st = engine_read(bytes, size, &e);
    if (st)
        return st;
    st = engine_prepare(e);
    /* Before any plugin is made: the layers' creators may live there. */
    if (!st)
        st = engine_load_libraries(e, reg, allow);
    if (st) {
        engine_free(e);
        return st;
    }
    /* Its contexts run its kernel layers without asking each (context.c). */
    e->kernels_allowed = (allow & PRT_EMBEDDED_KERNELS) != 0;
    /* A kernel layer needs no creator, so no registry either. */
    for (int32_t i = 0; !reg && i < e->nb_layers; i++)
        if (!e->layers[i].kernel &&
            strcmp(e->layers[i].plugin_namespace, PRT_BUILTIN_NAMESPACE) != 0 &&
            !engine_layer_registry(e, NULL, &e->layers[i])) {
            st = base_error(PRT_ERR_INVALID_ARGUMENT,
                            "prt_engine_deserialize: layer '%s' needs plugin "
                            "%s::%s, but no registry was given to recreate it",
                            e->layers[i].name, e->layers[i].plugin_namespace,
                            e->layers[i].plugin_name);
            engine_free(e);
            return st;
        }
    for (int32_t i = 0; i < e->nb_layers; i++) {
        st = engine_recreate_plugin(engine_layer_registry(e, reg, &e->layers[i]),
                                    &e->layers[i], i);
        if (st) {
            engine_free(e);
            return st;
        }
    }
    /* What only the plugins can confirm: formats and workspace claims. */
    st = engine_check_layers(reg, e);
    if (!st)
        st = engine_bind_constants(e);
    if (!st)
        engine_bind_precision(e);
    if (st) {
        engine_free(e);
        return st;
    }
    base_clear_error();
    *out = e;
    return PRT_OK;
}

void prt_engine_destroy(prt_engine *engine)
{
    engine_free(engine);
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

int32_t prt_engine_io_count(const prt_engine *engine)
{
    return engine ? engine->nb_inputs + engine->nb_outputs : 0;
}

static int32_t io_tensor(const prt_engine *e, int32_t index)
{
    return index < e->nb_inputs ? e->input_tensors[index]
                                : e->output_tensors[index - e->nb_inputs];
}

prt_status prt_engine_get_io(const prt_engine *engine, int32_t index, prt_io_info *out)
{
    const eng_tensor *t;
    const expr_program *p;
    prt_io_info info;
    prt_status st = base_query_check(out ? out->struct_size : 0, sizeof info, out,
                                     "prt_engine_get_io", "prt_io_info");
    if (st)
        return st;
    if (!engine)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_get_io: NULL engine");
    if (index < 0 || index >= prt_engine_io_count(engine))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_io: index %d outside 0..%d", (int)index,
                          (int)prt_engine_io_count(engine) - 1);
    t = &engine->tensors[io_tensor(engine, index)];
    p = &engine->exprs;
    memset(&info, 0, sizeof info);
    info.struct_size = out->struct_size;
    info.name = t->name;
    info.is_input = index < engine->nb_inputs;
    /* Shape inputs' values are read by the host; everything else lives where
     * the device computes. */
    info.is_shape_input =
        info.is_input && engine->prof_vmin[(size_t)t->input_index].nb_dims > 0;
    info.location = engine->device == PRT_DEVICE_CPU ||
                            engine_tensor_on_host(engine, io_tensor(engine, index))
                        ? PRT_LOCATION_HOST
                        : PRT_LOCATION_DEVICE;
    info.dtype = t->dtype;
    info.format = t->format;
    info.dims.nb_dims = t->nb_dims;
    for (int32_t d = 0; d < t->nb_dims; d++) {
        const expr_node *x = &p->nodes[t->dim_expr[d]];
        info.dims.d[d] = x->kind == EXPR_CONST ? x->imm : -1;
    }
    info.data_dependent_mask = t->dd_mask;
    info.is_size_tensor = t->size_id >= 0;
    *out = info;
    return PRT_OK;
}

uint8_t *engine_size_deps(const prt_engine *e)
{
    const expr_program *p = &e->exprs;
    uint8_t *dep = base_calloc((size_t)p->nb_nodes + 1, 1);
    if (!dep)
        return NULL;
    /* Operands come before their node, so one pass front to back settles
     * every node. */
    for (int32_t i = 0; i < p->nb_nodes; i++) {
        const expr_node *x = &p->nodes[i];
        if (x->kind == EXPR_SIZE)
            dep[i] = 1;
        else if (x->kind == EXPR_OP)
            dep[i] = dep[x->a] | dep[x->b];
    }
    return dep;
}

prt_status prt_engine_find_io(const prt_engine *engine, const char *name, int32_t *out)
{
    int32_t n;
    if (!engine || !name || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_find_io: NULL argument");
    n = prt_engine_io_count(engine);
    for (int32_t i = 0; i < n; i++)
        if (strcmp(engine->tensors[io_tensor(engine, i)].name, name) == 0) {
            *out = i;
            return PRT_OK;
        }
    return base_error(PRT_ERR_NOT_FOUND,
                      "the engine has no input or output "
                      "named '%s'",
                      name);
}

int64_t prt_engine_context_memory_size(const prt_engine *engine)
{
    return engine ? engine->arena_size + engine->workspace_size : 0;
}

int32_t prt_engine_profile_count(const prt_engine *engine)
{
    return engine ? engine->nb_profiles : 0;
}

prt_status prt_engine_get_profile_shape(const prt_engine *engine, int32_t profile,
                                        const char *input_name, prt_dims *out_min,
                                        prt_dims *out_opt, prt_dims *out_max)
{
    size_t k;
    if (!engine || !input_name)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_profile_shape: NULL argument");
    if (profile < 0 || profile >= engine->nb_profiles)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_profile_shape: profile %d does not exist "
                          "(the engine has %d)",
                          (int)profile, (int)engine->nb_profiles);
    for (int32_t i = 0; i < engine->nb_inputs; i++) {
        if (strcmp(engine->tensors[engine->input_tensors[i]].name, input_name) != 0)
            continue;
        k = (size_t)profile * (size_t)engine->nb_inputs + (size_t)i;
        if (out_min)
            *out_min = engine->prof_min[k];
        if (out_opt)
            *out_opt = engine->prof_opt[k];
        if (out_max)
            *out_max = engine->prof_max[k];
        return PRT_OK;
    }
    return base_error(PRT_ERR_NOT_FOUND, "the engine has no input named '%s'",
                      input_name);
}

int32_t prt_engine_layer_count(const prt_engine *engine)
{
    return engine ? engine->nb_layers : 0;
}

int32_t prt_engine_device(const prt_engine *engine)
{
    return engine ? engine->device : PRT_DEVICE_CPU;
}

int32_t prt_engine_get_device_index(const prt_engine *engine)
{
    return engine ? engine->device_index : 0;
}

prt_status prt_engine_get_build_device(const prt_engine *engine, prt_device_info *out)
{
    prt_device_info r;
    if (!engine || !out || out->struct_size < sizeof *out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_build_device: NULL "
                          "argument, or out->struct_size is not sizeof(prt_device_info)");
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.device = engine->device;
    if (engine->device == PRT_DEVICE_CPU)
        snprintf(r.name, sizeof r.name, "cpu");
    else
        memcpy(r.name, engine->built_on.name, sizeof r.name);
    r.cc_major = engine->built_on.cc_major;
    r.cc_minor = engine->built_on.cc_minor;
    r.multiprocessors = engine->built_on.multiprocessors;
    r.memory_bytes = engine->built_on.memory_bytes;
    *out = r;
    return PRT_OK;
}

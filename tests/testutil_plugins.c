/* Test helpers that need the registry and the runtime (a separate object, so
 * tests of lower layers link without it). */
#include <stdlib.h>

#include "testutil.h"

prt_registry *tu_registry_with_plugins(void)
{
    prt_registry *reg = NULL;
    /* PLUGRT_PLUGINS, as for the plugrt program, for a test run away from
     * its build tree (scripts/cuda_ops_gpu.sh's bundle). */
    const char *path = getenv("PLUGRT_PLUGINS");
    if (!path || !path[0])
        path = PRT_PLUGINS_PATH;
    if (prt_registry_create(&reg) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, "prt_registry_create");
        return NULL;
    }
    if (prt_registry_load_library(reg, path) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, path);
        prt_registry_destroy(reg);
        return NULL;
    }
    return reg;
}

const prt_plugin_creator *tu_find_creator(const prt_registry *reg, const char *ns,
                                          const char *name, const char *version)
{
    const prt_plugin_creator *c = NULL;
    if (prt_registry_find_creator(reg, ns, name, version, &c) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, "find creator");
        return NULL;
    }
    return c;
}

prt_plugin *tu_make_plugin(const prt_registry *reg, const char *ns, const char *name,
                           const char *version, const prt_field *fields,
                           int32_t nb_fields)
{
    const prt_plugin_creator *c = tu_find_creator(reg, ns, name, version);
    prt_field_collection fc;
    prt_plugin *p = NULL;
    if (!c)
        return NULL;
    fc.nb_fields = nb_fields;
    fc.fields = fields;
    if (c->create(c, name, &fc, PRT_PHASE_BUILD, &p) != PRT_OK || !p) {
        tu_fail(__FILE__, __LINE__, "create plugin");
        return NULL;
    }
    return p;
}

void tu_engine_destroy(tu_engine *e)
{
    prt_context_destroy(e->ctx);
    prt_engine_destroy(e->engine);
    prt_engine_destroy(e->built);
    e->ctx = NULL;
    e->engine = NULL;
    e->built = NULL;
}

/* Adds the inputs, the plugin layer and its named outputs. On success the
 * network owns the plugin and *plugin is set to NULL. */
static prt_status rt_define(prt_network *net, prt_plugin **plugin,
                            const tu_input_spec *in, int nb_in,
                            const char *const *out_names, int nb_out)
{
    int32_t ids[TU_MAX_IO], layer, t;
    prt_status st = PRT_OK;
    for (int i = 0; !st && i < nb_in; i++)
        st = prt_network_add_input(net, in[i].name, in[i].dtype, in[i].dims, &ids[i]);
    if (!st)
        st = prt_network_add_plugin(net, ids, nb_in, NULL, 0, *plugin, &layer);
    if (!st)
        *plugin = NULL;
    for (int i = 0; !st && i < nb_out; i++) {
        st = prt_network_get_layer_output(net, layer, i, &t);
        if (!st)
            st = prt_network_set_tensor_name(net, t, out_names[i]);
        if (!st)
            st = prt_network_mark_output(net, t);
    }
    return st;
}

/* Autotuning and, when any input has bounds, one profile holding them. */
static prt_status rt_configure(prt_builder_config *cfg, const tu_input_spec *in,
                               int nb_in, int autotune)
{
    int32_t prof = -1;
    prt_status st = prt_builder_config_set_autotune(cfg, autotune);
    for (int i = 0; !st && i < nb_in; i++) {
        if (!in[i].min)
            continue;
        if (prof < 0)
            st = prt_builder_config_add_profile(cfg, &prof);
        if (!st)
            st = prt_builder_config_set_profile_dims(cfg, prof, in[i].name, in[i].min,
                                                     in[i].opt, in[i].max);
    }
    return st;
}

prt_status tu_build_roundtrip(prt_registry *reg, prt_plugin *plugin,
                              const tu_input_spec *in, int nb_in,
                              const char *const *out_names, int nb_out, int autotune,
                              tu_engine *out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    void *bytes = NULL;
    size_t size = 0;
    prt_status st;
    out->built = NULL;
    out->engine = NULL;
    out->ctx = NULL;
    if (!plugin)
        return PRT_ERR_PLUGIN; /* tu_make_plugin recorded why */
    if (nb_in < 0 || nb_in > TU_MAX_IO || nb_out < 0 || nb_out > TU_MAX_IO) {
        tu_fail(__FILE__, __LINE__, "tu_build_roundtrip: too many inputs or outputs");
        plugin->vt->runtime->destroy(plugin);
        return PRT_ERR_INVALID_ARGUMENT;
    }
    st = prt_network_create(&net);
    if (!st)
        st = rt_define(net, &plugin, in, nb_in, out_names, nb_out);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = rt_configure(cfg, in, nb_in, autotune);
    if (!st)
        st = prt_engine_build(net, cfg, reg, &out->built);
    if (!st)
        st = prt_engine_serialize(out->built, &bytes, &size);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, &out->engine);
    if (!st)
        st = prt_context_create(out->engine, &out->ctx);
    if (st)
        tu_engine_destroy(out);
    if (plugin)
        plugin->vt->runtime->destroy(plugin);
    prt_free(bytes);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static void *capture_reallocate(void *user, const char *name, void *current,
                                uint64_t size, uint64_t alignment)
{
    tu_capture *c = user;
    (void)name;
    (void)alignment;
    c->reallocs++;
    if (current && size <= c->size)
        return current;
    free(c->mem);
    c->mem = malloc(size ? (size_t)size : 1);
    c->size = c->mem ? size : 0;
    return c->mem;
}

static void capture_notify(void *user, const char *name, const prt_dims *dims)
{
    tu_capture *c = user;
    (void)name;
    c->notified++;
    c->dims = *dims;
}

prt_output_allocator tu_capture_allocator(tu_capture *cap)
{
    prt_output_allocator a;
    memset(cap, 0, sizeof *cap);
    a.struct_size = sizeof a;
    a.abi_version = PRT_PLUGIN_ABI_VERSION;
    a.user = cap;
    a.reallocate = capture_reallocate;
    a.notify_shape = capture_notify;
    return a;
}

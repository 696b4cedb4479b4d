/*
 * How the build speaks of a plugin: its name in messages, and its failure
 * wrapped with the layer it serves. Every phase that calls into a plugin
 * (shapes, formats, tactics, assembly) reports through these.
 */
#include "builder/builder.h"

base_label bld_plugin_label(const prt_plugin *p)
{
    return base_plugin_label(p->vt->core->plugin_namespace(p), p->vt->core->name(p));
}

prt_status bld_plugin_fail(const net_layer *l, prt_status st, const char *what)
{
    if (!prt_last_error()[0])
        base_error(PRT_ERR_PLUGIN, "the plugin gave no message");
    return base_error_prefix(base_plugin_status(st), "layer '%s' (plugin %s): %s",
                             l->name, bld_plugin_label(l->plugin).s, what);
}

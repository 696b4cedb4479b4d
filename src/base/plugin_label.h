/*
 * How every subsystem that calls plugin entries (network, builder, engine
 * load, runtime) speaks of a plugin: its name in messages and the status
 * its failure is reported with, so build, load and run agree.
 */
#ifndef PLUGRT_BASE_PLUGIN_LABEL_H
#define PLUGRT_BASE_PLUGIN_LABEL_H

#include "plugrt/plugrt.h"

/* The status a failed plugin entry is reported with: the plugin's own code
 * when it is one of plugrt's (a plugin that says PRT_ERR_SHAPE means a
 * shape), else PRT_ERR_PLUGIN (PRT_OK with no result, or a code plugrt does
 * not know). */
prt_status base_plugin_status(prt_status st);
/* A plugin's name as messages give it: "ns::name", or "name" for the empty
 * namespace (TensorRT's default) and for a built-in op
 * (PRT_BUILTIN_NAMESPACE). In a struct so that a message can take
 * base_plugin_label(ns, name).s inline: C11 keeps the temporary alive to the
 * end of the full expression. */
typedef struct base_label {
    char s[320];
} base_label;
base_label base_plugin_label(const char *plugin_namespace, const char *name);

#endif /* PLUGRT_BASE_PLUGIN_LABEL_H */

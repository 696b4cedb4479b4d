/*
 * From a file to an engine: ONNX import, building with a profile, loading a
 * plan. Shared by `plugrt build` and `plugrt run`. Each function prints its
 * errors (with what to try next) and returns a CLI_ exit code.
 */
#ifndef PLUGRT_TOOLS_MODEL_H
#define PLUGRT_TOOLS_MODEL_H

#include "cli.h"
#include "options.h"

/* 1 if this program was built with the ONNX importer. */
int cli_have_onnx(void);

/* Parses an ONNX model; *out is the caller's. `ops` are --plugin-op
 * mappings (may be NULL). */
int cli_import_onnx(const char *path, const prt_registry *reg,
                    const cli_plugin_ops *ops, prt_network **out);

typedef struct cli_build_opts {
    /* Profile 0: for every name in any list, missing entries are taken from
     * the others (opt from max or min; min and max from opt). */
    const cli_shapes *min, *opt, *max;
    int32_t device;
    int64_t workspace; /* < 0: the builder's default */
    int autotune;
    /* What to tell the user about shapes when the build fails on one. */
    const char *shape_hint;
} cli_build_opts;

int cli_build_engine(const prt_network *net, const prt_registry *reg,
                     const cli_build_opts *o, prt_engine **out);

/* Reads and deserializes a plan file; *out_size (may be NULL) its bytes. */
int cli_load_plan(const char *path, const prt_registry *reg, prt_engine **out,
                  size_t *out_size);

/* Layers whose plugin is not built in. */
int32_t cli_plugin_layer_count(const prt_engine *engine);

#endif /* PLUGRT_TOOLS_MODEL_H */

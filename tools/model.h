/*
 * From a file to an engine: the model's arguments, ONNX import, building
 * with a profile, loading a plan. Shared by `plugrt build` and `plugrt run`.
 * Each function prints its errors (with what to try next) and returns a CLI_
 * exit code.
 */
#ifndef PLUGRT_TOOLS_MODEL_H
#define PLUGRT_TOOLS_MODEL_H

#include "cli.h"
#include "options.h"

/* ---- the arguments build and run share ---------------------------------- */

/* The model (the one positional argument), the options that say how to
 * read it: --plugins, --no-default-plugins, --plugin-op, --verbose,
 * --strict/--no-strict, and those that say how to build it from ONNX:
 * --fp16, --bf16, --tf32, --best, --allow-cpu-fallback. */
typedef struct cli_model_args {
    const char *model; /* argv storage */
    cli_plugin_opts plugins;
    cli_plugin_ops ops;
    int verbose;
    /* 1 (the default; --strict): a plugin output that disagrees with the
     * model's declaration fails the build; 0 (--no-strict): a warning. */
    int strict;
    /* trtexec's spellings the command takes (set before parsing; NULL:
     * none). */
    const cli_alias *aliases;
    /* PRT_PRECISION_*: --fp16, --bf16, --tf32; --best, trtexec's "every
     * precision", is --fp16 --tf32. */
    uint32_t precision;
    /* 1: a layer with no kernel on the device runs on the CPU
     * (--allow-cpu-fallback). */
    int cpu_fallback;
} cli_model_args;

/* Their ids in a subcommand's cli_opt table; its own ids follow, from
 * CLI_MODEL_OPT_END. */
enum {
    CLI_MODEL_OPT_PLUGINS = 1,
    CLI_MODEL_OPT_NO_DEFAULT,
    CLI_MODEL_OPT_PLUGIN_OP,
    CLI_MODEL_OPT_VERBOSE,
    CLI_MODEL_OPT_STRICT,
    CLI_MODEL_OPT_NO_STRICT,
    CLI_MODEL_OPT_FP16,
    CLI_MODEL_OPT_BF16,
    CLI_MODEL_OPT_TF32,
    CLI_MODEL_OPT_BEST,
    CLI_MODEL_OPT_CPU_FALLBACK,
    CLI_MODEL_OPT_NO_FUSE,
    CLI_MODEL_OPT_END
};

/* The precision options' entries, for a subcommand's cli_opt table, and
 * trtexec's spellings of them, for its cli_alias table (the same names:
 * listed so that its --help shows them). */
/* clang-format off */
#define CLI_MODEL_PRECISION_OPTS                                                         \
    {"--fp16", NULL, 0, CLI_MODEL_OPT_FP16},                                             \
    {"--bf16", NULL, 0, CLI_MODEL_OPT_BF16},                                             \
    {"--tf32", NULL, 0, CLI_MODEL_OPT_TF32},                                             \
    {"--best", NULL, 0, CLI_MODEL_OPT_BEST} /* trtexec's: every precision */
#define CLI_MODEL_PRECISION_ALIASES                                                      \
    {"--fp16", "--fp16", "allow float16 besides float32"},                               \
    {"--bf16", "--bf16", "allow bfloat16 besides float32"},                              \
    {"--best", "--best", "allow every precision: as --fp16 --tf32"}
/* clang-format on */

/* Scans argv[1..] with `opts` (whose entries for the shared options carry
 * the ids above): the model and those options go to *a, a subcommand's own
 * option to own(user, id, value), which returns CLI_OK to go on or the code
 * to stop with (its own usage error, or -1 after printing the help). After
 * the scan a missing model is a usage error, "missing " + `missing`.
 * Returns CLI_OK or the code that stopped it; *a holds what was taken
 * either way (free it with cli_model_args_free). */
int cli_model_args_parse(cli_model_args *a, int argc, char **argv, const cli_opt *opts,
                         int (*own)(void *user, int id, const char *value), void *user,
                         const char *missing);
void cli_model_args_free(cli_model_args *a);

/* 1 if this program was built with the ONNX importer. */
int cli_have_onnx(void);

/* Parses an ONNX model; *out is the caller's. `ops` are --plugin-op
 * mappings (may be NULL). */
int cli_import_onnx(const char *path, const prt_registry *reg, const cli_plugin_ops *ops,
                    int strict, prt_network **out);
/* Whether the imports that follow fuse node patterns into one layer
 * (prt_onnx_parser_set_fuse; default 1). --compare-layers turns it off, so
 * that every node's output is a layer output on both sides. */
void cli_set_onnx_fuse(int fuse);
/* The same without a word: the status, and prt_last_error() says why. When a
 * mapping itself is refused, *out_bad_op names it (else NULL). For callers
 * that try imports which may fail (--compare-layers' reference). */
prt_status cli_import_onnx_quiet(const char *path, const prt_registry *reg,
                                 const cli_plugin_ops *ops, int strict,
                                 const cli_plugin_op **out_bad_op, prt_network **out);

/* The values of a shape input (a 0-D or 1-D int32/int64 input whose values
 * a layer's shape depends on), fixed in profile 0: min = opt = max. */
typedef struct cli_shape_value {
    const char *name; /* borrowed */
    int64_t v[PRT_MAX_DIMS];
    int32_t count;
} cli_shape_value;

typedef struct cli_build_opts {
    /* Profile 0: for every name in any list, missing entries are taken from
     * the others (opt from max or min; min and max from opt). */
    const cli_shapes *min, *opt, *max;
    int32_t device;
    int64_t workspace; /* < 0: the builder's default */
    int autotune;
    const char *timing_cache; /* --timing-cache FILE, or NULL */
    /* What to tell the user about shapes when the build fails on one. */
    const char *shape_hint;
    /* Shape inputs' values for profile 0 (`plugrt run` takes them from the
     * input data); NULL with 0 for none. */
    const cli_shape_value *values;
    int nb_values;
    /* 1: an entry of min/opt/max for a shape input is the bounds of its
     * values (`plugrt build`), as trtexec reads shapes of shape tensors;
     * 0: its dims, like any input's. */
    int lists_give_values;
    /* Threads autotuning's timing runs use (--op-threads); 0: the
     * library's default. */
    int32_t threads;
    /* 1: every tensor LINEAR (--linear-formats), no blocked CHW8. */
    int linear_formats;
    /* 1: the engine carries its plugin libraries (--embed-plugins). */
    int embed_plugins;
    /* PRT_PRECISION_* (--fp16, --bf16, --tf32, --best). */
    uint32_t precision;
    /* 1: a layer with no kernel on the device runs on the CPU
     * (--allow-cpu-fallback). */
    int cpu_fallback;
} cli_build_opts;

/* Input `name`'s profile entry as the lists give it (it must be in one of
 * them; any list may be NULL): the entries a user left out filled in, opt
 * from max or min, min and max from opt. */
void cli_complete_profile(const cli_shapes *min, const cli_shapes *opt,
                          const cli_shapes *max, const char *name, prt_dims *mn,
                          prt_dims *op, prt_dims *mx);

int cli_build_engine(const prt_network *net, const prt_registry *reg,
                     const cli_build_opts *o, prt_engine **out);

/* Reads and deserializes a plan file; *out_size (may be NULL) its bytes.
 * `allow_embedded`: the PRT_EMBEDDED_* kinds of code the plan may carry
 * (prt_deserialize_options). */
int cli_load_plan(const char *path, const prt_registry *reg, uint32_t allow_embedded,
                  prt_engine **out, size_t *out_size);

/* Serializes the engine to `path`, written beside it and renamed over it
 * (a failed write never leaves half a plan where a good one was); *out_size
 * its bytes. `plugrt build` and `plugrt run --saveEngine` write the same
 * bytes for the same engine. */
int cli_write_plan(const char *path, const prt_engine *engine, size_t *out_size);

/* Layers whose plugin is not built in. */
int32_t cli_plugin_layer_count(const prt_engine *engine);

#endif /* PLUGRT_TOOLS_MODEL_H */

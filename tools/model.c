/* The model arguments, ONNX import, building with a profile, loading plans:
 * the way from a file to an engine, shared by `plugrt build` and
 * `plugrt run`. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#if PRT_HAVE_ONNX
#include "plugrt/onnx.h"
#endif

/* One result of the scanner, if the model or a shared option takes it:
 * CLI_OK, or the error's code; NOT_SHARED for the subcommand's own options. */
enum { NOT_SHARED = -100 };
static int take_model_arg(cli_model_args *a, int id, const char *value)
{
    switch (id) {
    case CLI_SCAN_ERROR:
        return CLI_USAGE;
    case CLI_SCAN_POSITIONAL:
        if (a->model)
            return cli_usage("one model at a time ('%s' and '%s' given)", a->model,
                             value);
        a->model = value;
        return CLI_OK;
    case CLI_MODEL_OPT_PLUGINS:
        return cli_plugin_opts_add(&a->plugins, value);
    case CLI_MODEL_OPT_NO_DEFAULT:
        a->plugins.no_default = 1;
        return CLI_OK;
    case CLI_MODEL_OPT_PLUGIN_OP:
        return cli_plugin_ops_parse(&a->ops, "--plugin-op", value);
    case CLI_MODEL_OPT_VERBOSE:
        a->verbose = 1;
        return CLI_OK;
    case CLI_MODEL_OPT_STRICT:
        a->strict = 1;
        return CLI_OK;
    case CLI_MODEL_OPT_NO_STRICT:
        a->strict = 0;
        return CLI_OK;
    case CLI_MODEL_OPT_FP16:
        a->precision |= PRT_PRECISION_FP16;
        return CLI_OK;
    case CLI_MODEL_OPT_BF16:
        a->precision |= PRT_PRECISION_BF16;
        return CLI_OK;
    case CLI_MODEL_OPT_TF32:
        a->precision |= PRT_PRECISION_TF32;
        return CLI_OK;
    case CLI_MODEL_OPT_BEST:
        a->precision |= PRT_PRECISION_FP16 | PRT_PRECISION_TF32;
        return CLI_OK;
    case CLI_MODEL_OPT_CPU_FALLBACK:
        a->cpu_fallback = 1;
        return CLI_OK;
    case CLI_MODEL_OPT_NO_FUSE:
        cli_set_onnx_fuse(0);
        return CLI_OK;
    default:
        return NOT_SHARED;
    }
}

int cli_model_args_parse(cli_model_args *a, int argc, char **argv, const cli_opt *opts,
                         int (*own)(void *user, int id, const char *value), void *user,
                         const char *missing)
{
    cli_scanner s;
    const char *v;
    int id, rc;
    /* Strict unless asked otherwise: a plugin whose output disagrees with
     * the model is the mistake whose warning scrolls by before the run reads
     * a tensor as the model declares it (the library's default stays
     * lenient: prt_onnx_parser_set_strict). */
    a->strict = 1;
    cli_scan_init(&s, argc, argv, opts);
    s.aliases = a->aliases;
    s.alias_program = "trtexec";
    while ((id = cli_scan_next(&s, &v)) != CLI_SCAN_END) {
        rc = take_model_arg(a, id, v);
        if (rc == NOT_SHARED)
            rc = own(user, id, v);
        if (rc != CLI_OK)
            return rc;
    }
    if (!a->model)
        return cli_usage("missing %s", missing);
    return CLI_OK;
}

void cli_model_args_free(cli_model_args *a)
{
    cli_plugin_opts_free(&a->plugins);
    cli_plugin_ops_free(&a->ops);
}

int cli_have_onnx(void)
{
    return PRT_HAVE_ONNX;
}

#if PRT_HAVE_ONNX
/* What to try next, chosen by what failed (the message says), not by the
 * status code alone: several causes share one code. */
static void cli_import_hint(const char *msg)
{
    if (strstr(msg, "not a valid onnx.ModelProto") || strstr(msg, "wire format"))
        fprintf(stderr, "  is it an ONNX model (a serialized ModelProto)?\n");
    else if (strstr(msg, "neither an importer nor") || strstr(msg, "no importer") ||
             strstr(msg, "is not in the registry") || strstr(msg, "no plugin creator"))
        fprintf(stderr,
                "  for a custom op, load the library that defines its plugin with "
                "--plugins lib.so,\n  or send the op to a plugin with --plugin-op "
                "Op=Plugin[@version][/namespace];\n  `plugrt plugins lib.so` lists "
                "what a library offers\n");
    else if (strstr(msg, "attribute") || strstr(msg, "field"))
        fprintf(stderr, "  check the node's attributes against the creator's fields "
                        "(`plugrt plugins lib.so` lists them)\n");
}
#endif

/* prt_onnx_parser_set_fuse for every import (cli_set_onnx_fuse). */
static int cli_fuse = 1;

void cli_set_onnx_fuse(int fuse)
{
    cli_fuse = fuse;
}

prt_status cli_import_onnx_quiet(const char *path, const prt_registry *reg,
                                 const cli_plugin_ops *ops, int strict,
                                 const cli_plugin_op **out_bad_op, prt_network **out)
{
#if PRT_HAVE_ONNX
    prt_onnx_parser *parser = NULL;
    prt_status st = prt_onnx_parser_create(reg, &parser);
    *out_bad_op = NULL;
    if (!st)
        st = prt_onnx_parser_set_strict(parser, strict);
    if (!st)
        st = prt_onnx_parser_set_fuse(parser, cli_fuse);
    for (int i = 0; !st && ops && i < ops->count; i++) {
        const cli_plugin_op *m = &ops->items[i];
        st = prt_onnx_parser_map_op(parser, m->op_type, m->plugin_namespace, m->name,
                                    m->version);
        if (st)
            *out_bad_op = m;
    }
    if (!st) {
        cli_progress("importing %s", path);
        st = prt_onnx_parser_parse_file(parser, path, out);
        cli_progress_clear();
    }
    prt_onnx_parser_destroy(parser);
    return st;
#else
    (void)path;
    (void)reg;
    (void)ops;
    (void)strict;
    (void)out;
    (void)cli_fuse;
    *out_bad_op = NULL;
    return PRT_ERR_UNSUPPORTED;
#endif
}

int cli_import_onnx(const char *path, const prt_registry *reg, const cli_plugin_ops *ops,
                    int strict, prt_network **out)
{
#if PRT_HAVE_ONNX
    const cli_plugin_op *m = NULL;
    prt_status st = cli_import_onnx_quiet(path, reg, ops, strict, &m, out);
    if (st == PRT_OK)
        return CLI_OK;
    if (m) {
        cli_error_api(st, "--plugin-op %s=%s@%s/%s", m->op_type, m->name, m->version,
                      m->plugin_namespace);
    } else {
        /* The importer's message names the file already (parse_file says
         * which model a node is in; a failed read names what it read). */
        if (strstr(prt_last_error(), path))
            cli_error_api(st, "cannot import");
        else
            cli_error_api(st, "cannot import %s", path);
        cli_import_hint(prt_last_error());
    }
    return CLI_FAIL;
#else
    (void)reg;
    (void)ops;
    (void)strict;
    (void)out;
    cli_error("cannot import %s: this plugrt was built without the ONNX importer "
              "(protobuf-c was missing at build time); install protoc-c, "
              "libprotobuf-c-dev and libonnx-dev (scripts/deps.sh) and rebuild, or "
              "pass a .plan built elsewhere",
              path);
    return CLI_FAIL;
#endif
}

void cli_complete_profile(const cli_shapes *min, const cli_shapes *opt,
                          const cli_shapes *max, const char *name, prt_dims *mn,
                          prt_dims *op, prt_dims *mx)
{
    const cli_shape *a = min ? cli_shapes_find(min, name) : NULL;
    const cli_shape *b = opt ? cli_shapes_find(opt, name) : NULL;
    const cli_shape *c = max ? cli_shapes_find(max, name) : NULL;
    *op = b ? b->dims : c ? c->dims : a->dims;
    *mn = a ? a->dims : *op;
    *mx = c ? c->dims : *op;
}

/* 1 if `name` is a network input whose values the build may need. */
static int is_shape_input(const prt_network *net, const char *name)
{
    int32_t t, in, yes = 0;
    if (prt_network_find_tensor(net, name, &t) != PRT_OK)
        return 0;
    for (int32_t i = 0; i < prt_network_input_count(net); i++)
        if (prt_network_get_input(net, i, &in) == PRT_OK && in == t)
            return prt_network_is_shape_input(net, t, &yes) == PRT_OK && yes;
    return 0;
}

/* A shape input's entry in the lists is the bounds of its values, as
 * trtexec reads --shapes for shape tensors; its dims are static. */
static int set_values(prt_builder_config *cfg, int32_t profile, const char *name,
                      const prt_dims *mn, const prt_dims *op, const prt_dims *mx)
{
    prt_status st;
    if (mn->nb_dims != op->nb_dims || mn->nb_dims != mx->nb_dims) {
        cli_error("shape input %s: --min-shapes, --opt-shapes and --max-shapes give "
                  "%d, %d and %d values; they bound the same values",
                  name, (int)mn->nb_dims, (int)op->nb_dims, (int)mx->nb_dims);
        return CLI_FAIL;
    }
    st = prt_builder_config_set_profile_shape_values(cfg, profile, name, mn->d, op->d,
                                                     mx->d, mn->nb_dims);
    if (st) {
        cli_error_api(st, "values of shape input %s (min, opt, max)", name);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int set_profile(prt_builder_config *cfg, const cli_build_opts *o,
                       const prt_network *net)
{
    const cli_shapes *lists[3] = {o->min, o->opt, o->max};
    int32_t profile = -1;
    for (int l = 0; l < 3; l++) {
        for (int i = 0; lists[l] && i < lists[l]->count; i++) {
            const char *name = lists[l]->items[i].name;
            prt_dims mn, op, mx;
            prt_status st;
            int seen = 0;
            /* Each name once, at its first list. */
            for (int k = 0; k < l && !seen; k++)
                seen = lists[k] && cli_shapes_find(lists[k], name) != NULL;
            if (seen)
                continue;
            if (profile < 0 && (st = prt_builder_config_add_profile(cfg, &profile))) {
                cli_error_api(st, "cannot add an optimization profile");
                return CLI_FAIL;
            }
            cli_complete_profile(o->min, o->opt, o->max, name, &mn, &op, &mx);
            if (o->lists_give_values && is_shape_input(net, name)) {
                if (set_values(cfg, profile, name, &mn, &op, &mx) != CLI_OK)
                    return CLI_FAIL;
                continue;
            }
            st = prt_builder_config_set_profile_dims(cfg, profile, name, &mn, &op, &mx);
            if (st) {
                char a[96], b[96], c[96];
                cli_error_api(st, "shapes of input %s (min %s, opt %s, max %s)", name,
                              cli_format_dims(&mn, a, sizeof a),
                              cli_format_dims(&op, b, sizeof b),
                              cli_format_dims(&mx, c, sizeof c));
                return CLI_FAIL;
            }
        }
    }
    for (int i = 0; i < o->nb_values; i++) {
        const cli_shape_value *v = &o->values[i];
        prt_status st;
        if (profile < 0 && (st = prt_builder_config_add_profile(cfg, &profile))) {
            cli_error_api(st, "cannot add an optimization profile");
            return CLI_FAIL;
        }
        st = prt_builder_config_set_profile_shape_values(cfg, profile, v->name, v->v,
                                                         v->v, v->v, v->count);
        if (st) {
            char en[CLI_ESC_CAP];
            cli_error_api(st, "values of shape input %s",
                          cli_escape(v->name, en, sizeof en));
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

static void cache_hint(const char *path)
{
    fprintf(stderr,
            "  is %s a timing cache written by `plugrt build --timing-cache`? "
            "delete it to start a new one\n",
            path);
}

int cli_build_engine(const prt_network *net, const prt_registry *reg,
                     const cli_build_opts *o, prt_engine **out)
{
    prt_builder_config *cfg = NULL;
    prt_status st = prt_builder_config_create(&cfg);
    int rc = CLI_FAIL;
    if (st) {
        cli_error_api(st, "cannot create a builder configuration");
        return CLI_FAIL;
    }
    if ((st = prt_builder_config_set_device(cfg, o->device))) {
        cli_error_api(st, "--device %s", cli_device_name(o->device));
        if (st == PRT_ERR_UNSUPPORTED)
            fprintf(stderr, "  `plugrt devices` says which devices this machine can use; "
                            "build for the CPU\n  instead (--device cpu, the default)\n");
        goto done;
    }
    if (o->workspace >= 0 &&
        (st = prt_builder_config_set_workspace_limit(cfg, o->workspace))) {
        cli_error_api(st, "--workspace");
        goto done;
    }
    if ((st = prt_builder_config_set_autotune(cfg, o->autotune))) {
        cli_error_api(st, "--autotune");
        goto done;
    }
    if (o->linear_formats && (st = prt_builder_config_set_blocked_formats(cfg, 0))) {
        cli_error_api(st, "--linear-formats");
        goto done;
    }
    if (o->embed_plugins && (st = prt_builder_config_set_embed_plugins(cfg, 1))) {
        cli_error_api(st, "--embed-plugins");
        goto done;
    }
    if ((st = prt_builder_config_set_precision_flags(cfg, o->precision))) {
        cli_error_api(st, "--fp16/--bf16/--tf32");
        goto done;
    }
    if (o->cpu_fallback && (st = prt_builder_config_set_cpu_fallback(cfg, 1))) {
        cli_error_api(st, "--allow-cpu-fallback");
        goto done;
    }
    if ((st = prt_builder_config_set_threads(cfg, o->threads))) {
        cli_error_api(st, "--op-threads");
        goto done;
    }
    if (o->timing_cache &&
        (st = prt_builder_config_set_timing_cache_file(cfg, o->timing_cache))) {
        cli_error_api(st, "--timing-cache %s", o->timing_cache);
        cache_hint(o->timing_cache);
        goto done;
    }
    if (set_profile(cfg, o, net) != CLI_OK)
        goto done;
    cli_progress("building the engine%s", o->autotune ? " (autotuning)" : "");
    st = prt_engine_build(net, cfg, reg, out);
    cli_progress_clear();
    if (st) {
        cli_error_api(st, "building the engine failed");
        /* A strict import's check (src/builder/build.c says it so): the
         * plugin disagrees with the model, which no --shapes fixes. */
        if (strstr(prt_last_error(), "but the model declares"))
            fprintf(
                stderr,
                "  the plugin's get_output_shapes or get_output_dtypes gives what the "
                "model does not\n  declare: fix the plugin (or the model's "
                "declaration of that output);\n  --no-strict builds anyway, with "
                "a warning, planning memory for what the plugin gives\n");
        else if (st == PRT_ERR_SHAPE && o->shape_hint)
            fprintf(stderr, "  %s\n", o->shape_hint);
        else if (st == PRT_ERR_NOT_FOUND)
            fprintf(stderr, "  load the library that defines the plugin with --plugins "
                            "lib.so\n");
        else if (o->timing_cache && strstr(prt_last_error(), o->timing_cache) &&
                 (st == PRT_ERR_MALFORMED || st == PRT_ERR_VERSION))
            cache_hint(o->timing_cache); /* not for a FIFO or a directory */
        else if (o->embed_plugins && st == PRT_ERR_UNSUPPORTED &&
                 strstr(prt_last_error(), "embed"))
            fprintf(stderr, "  load every plugin library by a path with --plugins "
                            "(e.g. ./libmine.so), or build\n  without "
                            "--embed-plugins\n");
        else if (!o->cpu_fallback && strstr(prt_last_error(), "--allow-cpu-fallback"))
            fprintf(stderr, "  add --allow-cpu-fallback to run such layers on the CPU, "
                            "with copies\n  between the device and the host around "
                            "them\n");
        else if (strstr(prt_last_error(), "workspace") &&
                 strstr(prt_last_error(), "limit"))
            fprintf(stderr, "  raise the limit with --workspace (e.g. --workspace 4G)\n");
        goto done;
    }
    rc = CLI_OK;
done:
    prt_builder_config_destroy(cfg);
    return rc;
}

int cli_write_plan(const char *path, const prt_engine *engine, size_t *out_size)
{
    void *bytes = NULL;
    size_t size = 0, n = strlen(path);
    char *tmp;
    int rc;
    prt_status st = prt_engine_serialize(engine, &bytes, &size);
    if (st) {
        cli_error_api(st, "cannot serialize the engine");
        return CLI_FAIL;
    }
    /* Write beside the target and rename: a failed build never leaves half
     * a plan where a good one was. */
    tmp = malloc(n + 8);
    if (!tmp) {
        prt_free(bytes);
        cli_error("out of memory for the name of the temporary file beside %s", path);
        return CLI_FAIL;
    }
    snprintf(tmp, n + 8, "%s.tmp", path);
    rc = cli_write_file(tmp, bytes, size);
    if (rc == CLI_OK && rename(tmp, path) != 0) {
        cli_error("cannot rename %s to %s", tmp, path);
        remove(tmp);
        rc = CLI_FAIL;
    }
    free(tmp);
    prt_free(bytes);
    *out_size = size;
    return rc;
}

int cli_load_plan(const char *path, const prt_registry *reg, uint32_t allow_embedded,
                  prt_engine **out, size_t *out_size)
{
    prt_deserialize_options opts = {.struct_size = sizeof opts,
                                    .allow_embedded = allow_embedded};
    void *bytes = NULL;
    size_t size = 0;
    prt_status st;
    if (cli_read_file(path, &bytes, &size) != CLI_OK)
        return CLI_FAIL;
    cli_progress("loading %s", path);
    st = prt_engine_deserialize_with_options(reg, bytes, size, &opts, out);
    cli_progress_clear();
    free(bytes);
    if (st == PRT_OK) {
        if (out_size)
            *out_size = size;
        return CLI_OK;
    }
    cli_error_api(st, "cannot load the plan %s", path);
    if (st == PRT_ERR_NOT_FOUND)
        fprintf(stderr, "  load the library that defines the plugin with --plugins "
                        "lib.so\n");
    else if (st == PRT_ERR_UNSUPPORTED && strstr(prt_last_error(), "allow_embedded"))
        fprintf(stderr,
                "  `plugrt inspect %s` lists what it carries; if you trust "
                "the plan, run it with\n  --allow-embedded-plugins\n",
                path);
    else if (st == PRT_ERR_MALFORMED || st == PRT_ERR_VERSION)
        fprintf(stderr, "  is it a plan written by `plugrt build` of this version? "
                        "rebuild it from the model\n");
    return CLI_FAIL;
}

int32_t cli_plugin_layer_count(const prt_engine *engine)
{
    int32_t n = 0, count = prt_engine_layer_count(engine);
    for (int32_t i = 0; i < count; i++) {
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        if (prt_engine_get_layer(engine, i, &li) == PRT_OK &&
            strcmp(li.plugin_namespace, PRT_BUILTIN_NAMESPACE) != 0)
            n++;
    }
    return n;
}

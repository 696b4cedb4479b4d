/*
 * plugrt build: ONNX model -> plan file.
 *
 * Import (with plugins from --plugins and the standard library), build for
 * one optimization profile (from --min/--opt/--max-shapes), serialize, write
 * atomically (a temporary file renamed over the target), then summarize.
 *
 * --fp16, --bf16 and --tf32 are the builder's precision flags
 * (prt_builder_config_set_precision_flags); --best, trtexec's "every
 * precision", is --fp16 --tf32. model.c takes them, and
 * --allow-cpu-fallback, for build and run alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "model.h"
#include "options.h"
#include "text.h"

enum {
    OPT_HELP = CLI_MODEL_OPT_END,
    OPT_OUTPUT,
    OPT_DEVICE,
    OPT_MIN,
    OPT_OPT,
    OPT_MAX,
    OPT_WORKSPACE,
    OPT_AUTOTUNE,
    OPT_TIMING_CACHE,
    OPT_OP_THREADS,
    OPT_LINEAR_FORMATS,
    OPT_EMBED_PLUGINS
};

static const cli_opt build_opts[] = {
    {"--help", "-h", 0, OPT_HELP},
    {"--output", "-o", 1, OPT_OUTPUT},
    {"--plugins", NULL, 1, CLI_MODEL_OPT_PLUGINS},
    {"--no-default-plugins", NULL, 0, CLI_MODEL_OPT_NO_DEFAULT},
    {"--device", NULL, 1, OPT_DEVICE},
    CLI_MODEL_PRECISION_OPTS,
    {"--min-shapes", NULL, 1, OPT_MIN},
    {"--opt-shapes", NULL, 1, OPT_OPT},
    {"--max-shapes", NULL, 1, OPT_MAX},
    {"--workspace", NULL, 1, OPT_WORKSPACE},
    {"--autotune", NULL, 0, OPT_AUTOTUNE},
    {"--timing-cache", NULL, 1, OPT_TIMING_CACHE},
    {"--op-threads", NULL, 1, OPT_OP_THREADS},
    {"--linear-formats", NULL, 0, OPT_LINEAR_FORMATS},
    {"--embed-plugins", NULL, 0, OPT_EMBED_PLUGINS},
    {"--allow-cpu-fallback", NULL, 0, CLI_MODEL_OPT_CPU_FALLBACK},
    {"--plugin-op", NULL, 1, CLI_MODEL_OPT_PLUGIN_OP},
    {"--verbose", "-v", 0, CLI_MODEL_OPT_VERBOSE},
    {"--strict", NULL, 0, CLI_MODEL_OPT_STRICT},
    {"--no-strict", NULL, 0, CLI_MODEL_OPT_NO_STRICT},
    {"--no-fuse", NULL, 0, CLI_MODEL_OPT_NO_FUSE},
    {NULL, NULL, 0, 0},
};

/* trtexec's run-only options: plugrt build builds, and runs nothing. */
#define BUILD_RUNS_NOTHING                                                               \
    "plugrt build writes the plan and runs nothing (trtexec runs after building); "      \
    "give it to `plugrt run PLAN`, which takes this option"

/* What a TensorRT user types to trtexec, as plugrt build takes it. */
static const cli_alias build_aliases[] = {
    {"--onnx", "", "FILE: the ONNX model to build"},
    {"--saveEngine", "--output", "FILE: the plan to write"},
    {"--loadEngine", NULL,
     "plugrt build builds from an ONNX model; a plan runs with `plugrt run "
     "--loadEngine=FILE`"},
    {"--minShapes", "--min-shapes", "the profile's smallest shapes"},
    {"--optShapes", "--opt-shapes", "the profile's shapes to tune for"},
    {"--maxShapes", "--max-shapes", "the profile's largest shapes"},
    {"--shapes", "--opt-shapes",
     "a profile fixed at these shapes (min = opt = max), as trtexec builds with "
     "--shapes alone"},
    {"--staticPlugins", "--plugins", "LIB.so: load a plugin library"},
    {"--dynamicPlugins", "--plugins",
     "LIB.so: load a plugin library (the plan records its path and hash)"},
    CLI_MODEL_PRECISION_ALIASES,
    {"--dumpProfile", NULL, BUILD_RUNS_NOTHING},
    {"--exportProfile", NULL, BUILD_RUNS_NOTHING},
    {"--loadInputs", NULL, BUILD_RUNS_NOTHING},
    {"--exportOutput", NULL, BUILD_RUNS_NOTHING},
    {"--useCudaGraph", NULL, BUILD_RUNS_NOTHING},
    {"--iterations", NULL, BUILD_RUNS_NOTHING},
    {"--warmUp", NULL, BUILD_RUNS_NOTHING},
    {"--avgRuns", NULL, BUILD_RUNS_NOTHING},
    {NULL, NULL, NULL},
};

static void build_help(void)
{
    printf(
        "Usage: plugrt build MODEL.onnx [-o MODEL.plan] [options]\n"
        "\n"
        "Imports an ONNX model, builds an engine and writes it as a plan file.\n"
        "\n"
        "Options:\n"
        "  -o, --output FILE        plan to write (default: MODEL with .plan for .onnx)\n"
        "  --plugins LIB.so         load a plugin library (repeatable)\n"
        "  --no-default-plugins     do not load the standard plugin library\n"
        "  --embed-plugins          store in the plan every plugin library its layers\n"
        "                           use (each once, with its content hash), so the\n"
        "                           plan is all a deployment needs; running it takes\n"
        "                           `plugrt run --allow-embedded-plugins`\n"
        "  --allow-cpu-fallback     with --device cuda, run a layer whose op or plugin\n"
        "                           has no CUDA kernel (for its dtypes) on the CPU,\n"
        "                           with copies around it (the build log names each\n"
        "                           and its bytes); such a plan cannot use\n"
        "                           --cuda-graph. Without it, such a layer fails the\n"
        "                           build\n"
        "  --plugin-op OP=PLUGIN[@VERSION][/NAMESPACE]\n"
        "                           import every OP node as that plugin (repeatable)\n"
        "  --no-strict              a plugin output that disagrees with the shape or\n"
        "                           dtype the model declares is a warning, not an\n"
        "                           error (--strict, the default: it fails the build)\n"
        "  --no-fuse                import every node as its own layer: no importer\n"
        "                           fusion (docs/DESIGN-NOTES.md lists them)\n"
        "  --device cpu|cuda        target device (default cpu)\n"
        "  --min-shapes NAME:DIMS[,NAME:DIMS...]\n"
        "  --opt-shapes NAME:DIMS[,...]\n"
        "  --max-shapes NAME:DIMS[,...]\n"
        "                           optimization profile of dynamic inputs, dims as\n"
        "                           1x3x224x224; a missing min or max takes opt, a\n"
        "                           missing opt takes max (or min). For a shape input\n"
        "                           (whose values size tensors: a Reshape's shape,\n"
        "                           Range's bounds) the bounds of its values instead,\n"
        "                           e.g. --opt-shapes shape:-1x64 for [-1, 64]\n"
        "  --workspace SIZE         cap on any layer's scratch memory (e.g. 512M, 1G)\n"
        "  --autotune               time every tactic and format and keep the fastest\n"
        "  --timing-cache FILE      reuse the tactic and format choices of earlier "
        "builds\n"
        "                           stored in FILE instead of timing again, and store\n"
        "                           this build's there, with the code NVRTC compiled\n"
        "                           from kernel source (FILE is created if missing)\n"
        "  --op-threads N           threads the timing runs of --autotune spread each\n"
        "                           layer over, as `plugrt run --op-threads` (default:\n"
        "                           the CPUs available; 1: none)\n"
        "  --linear-formats         keep every tensor LINEAR: no blocked CHW8 layout\n"
        "                           between the CPU's convolutions (inspect shows it)\n"
        "  --fp16, --bf16           run layers in float16 (bfloat16) where their "
        "kernels\n"
        "                           on the device take it; inputs and outputs keep\n"
        "                           their types, Casts are inserted between (-v lists\n"
        "                           the layers kept in float32 and why)\n"
        "  --tf32                   let float32 products and convolutions on CUDA use\n"
        "                           TF32 tensor cores (off: strict float32)\n"
        "  --best                   --fp16 --tf32 (trtexec's every precision)\n"
        "  -v, --verbose            print the library's log\n"
        "  -h, --help               this help\n"
        "\n");
    cli_print_aliases(build_aliases, "trtexec");
    printf(
        "\n"
        "Progress is shown when stderr is a terminal; a summary (layers, plugins,\n"
        "memory, time) is printed to stdout. Exit status: 0 built, 1 failed, 2 usage.\n");
}

typedef struct build_args {
    cli_model_args m;
    const char *output;
    cli_shapes min, opt, max;
    int32_t device;
    int64_t workspace;
    int autotune, linear_formats, embed_plugins;
    int64_t op_threads; /* 0: the library's default */
    const char *timing_cache;
    int64_t cache_before; /* its size before the build; -1: it did not exist */
} build_args;

/* build's own options (cli_model_args_parse takes the others). */
static int take_option(void *user, int id, const char *v)
{
    build_args *a = user;
    switch (id) {
    case OPT_HELP:
        build_help();
        return -1;
    case OPT_OUTPUT:
        a->output = v;
        break;
    case OPT_DEVICE:
        return cli_parse_device("--device", v, &a->device);
    case OPT_TIMING_CACHE:
        a->timing_cache = v;
        break;
    case OPT_MIN:
    case OPT_OPT:
    case OPT_MAX: {
        cli_shapes *l = id == OPT_MIN ? &a->min : id == OPT_OPT ? &a->opt : &a->max;
        return cli_shapes_parse_signed(l,
                                       id == OPT_MIN   ? "--min-shapes"
                                       : id == OPT_OPT ? "--opt-shapes"
                                                       : "--max-shapes",
                                       v);
    }
    case OPT_WORKSPACE:
        return cli_parse_size("--workspace", v, &a->workspace);
    case OPT_AUTOTUNE:
        a->autotune = 1;
        break;
    case OPT_OP_THREADS:
        return cli_parse_int("--op-threads", v, 1, 1024, &a->op_threads);
    case OPT_LINEAR_FORMATS:
        a->linear_formats = 1;
        break;
    case OPT_EMBED_PLUGINS:
        a->embed_plugins = 1;
        break;
    default:
        return cli_usage("internal: unhandled option");
    }
    return CLI_OK;
}

/* Plugins used by the engine: each key once, with its library and hash. */
static void print_plugins(const prt_engine *engine)
{
    int32_t n = prt_engine_layer_count(engine), shown = 0;
    for (int32_t i = 0; i < n; i++) {
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        char key[256], e1[CLI_ESC_CAP], e2[CLI_ESC_CAP];
        int seen = 0, uses = 0;
        if (prt_engine_get_layer(engine, i, &li) != PRT_OK || cli_is_builtin(&li))
            continue;
        for (int32_t j = 0; j < n; j++) {
            prt_layer_info lj = {.struct_size = sizeof(prt_layer_info)};
            if (prt_engine_get_layer(engine, j, &lj) != PRT_OK ||
                strcmp(lj.plugin_namespace, li.plugin_namespace) != 0 ||
                strcmp(lj.plugin_name, li.plugin_name) != 0 ||
                strcmp(lj.plugin_version, li.plugin_version) != 0)
                continue;
            seen |= j < i;
            uses++;
        }
        if (seen)
            continue;
        printf("  %-12s %s x%d from %s", shown++ ? "" : "plugins",
               cli_escape(cli_plugin_key(li.plugin_namespace, li.plugin_name,
                                         li.plugin_version, key, sizeof key),
                          e1, sizeof e1),
               uses,
               *li.library ? cli_escape(li.library, e2, sizeof e2)
                           : "(registered directly)");
        if (*li.library)
            printf(" (content hash %016llx)", (unsigned long long)li.library_hash);
        putchar('\n');
    }
    if (!shown)
        printf("  %-12s none\n", "plugins");
}

static int summarize(const build_args *a, const prt_engine *engine, size_t plan_size,
                     double t_import, double t_build, double t_write)
{
    int32_t layers = prt_engine_layer_count(engine);
    int32_t plugins = cli_plugin_layer_count(engine);
    char b1[32], b2[32];
    printf("Built %s from %s in %.3f s (import %.3f s, build %.3f s, write %.3f s)\n",
           a->output, a->m.model, t_import + t_build + t_write, t_import, t_build,
           t_write);
    printf("  %-12s %s", "device", cli_device_name(prt_engine_device(engine)));
    if (prt_engine_device(engine) != PRT_DEVICE_CPU) {
        prt_device_info di;
        char b[32], en[CLI_ESC_CAP];
        memset(&di, 0, sizeof di);
        di.struct_size = sizeof di;
        if (prt_engine_get_build_device(engine, &di) == PRT_OK && di.name[0])
            printf(", built on %s (compute capability %d.%d, %d multiprocessors, %s)",
                   cli_escape(di.name, en, sizeof en), (int)di.cc_major, (int)di.cc_minor,
                   (int)di.multiprocessors,
                   cli_format_bytes(di.memory_bytes, b, sizeof b));
    }
    putchar('\n');
    if (cli_print_io(stdout, engine, "  ") != CLI_OK)
        return CLI_FAIL;
    printf("  %-12s %d (%d built-in, %d plugin)\n", "layers", (int)layers,
           (int)(layers - plugins), (int)plugins);
    print_plugins(engine);
    if (prt_engine_embedded_library_count(engine) > 0) {
        int64_t bytes = 0;
        int32_t n = prt_engine_embedded_library_count(engine);
        for (int32_t i = 0; i < n; i++) {
            prt_embedded_library_info li = {.struct_size = sizeof li};
            if (prt_engine_get_embedded_library(engine, i, &li) == PRT_OK)
                bytes += li.size;
        }
        printf("  %-12s %d plugin librar%s, %s, in the plan\n", "embedded", (int)n,
               n == 1 ? "y" : "ies", cli_format_bytes(bytes, b1, sizeof b1));
    }
    printf("  %-12s %s per context (activations and workspace), plan %s\n", "memory",
           cli_format_bytes(prt_engine_context_memory_size(engine), b1, sizeof b1),
           cli_format_bytes((int64_t)plan_size, b2, sizeof b2));
    printf("  %-12s %d\n", "profiles", (int)prt_engine_profile_count(engine));
    if (a->timing_cache) {
        int64_t after = cli_file_size(a->timing_cache);
        char en[CLI_ESC_CAP];
        printf("  %-12s %s: ", "timing cache",
               cli_escape(a->timing_cache, en, sizeof en));
        if (a->cache_before < 0)
            printf("none before the build");
        else
            printf("%lld bytes before the build", (long long)a->cache_before);
        if (after >= 0)
            printf(", %lld after\n", (long long)after);
        else
            printf(", none after\n");
    }
    return CLI_OK;
}

int cmd_build(int argc, char **argv)
{
    build_args a;
    prt_registry *reg = NULL;
    prt_network *net = NULL;
    prt_engine *engine = NULL;
    char *default_out = NULL;
    size_t plan_size = 0;
    double t0, t1, t2, t3;
    int rc;
    memset(&a, 0, sizeof a);
    a.device = PRT_DEVICE_CPU;
    a.workspace = -1;
    a.m.aliases = build_aliases;
    rc = cli_model_args_parse(
        &a.m, argc, argv, build_opts, take_option, &a,
        "the model to build (plugrt build MODEL.onnx -o MODEL.plan)");
    if (rc != CLI_OK) {
        rc = rc < 0 ? CLI_OK : rc;
        goto done;
    }
    rc = CLI_FAIL;
    if (!a.output) {
        size_t n = strlen(a.m.model);
        default_out = malloc(n + 6);
        if (!default_out) {
            cli_error("out of memory for the name of the plan to write");
            goto done;
        }
        memcpy(default_out, a.m.model, n + 1);
        if (cli_is_onnx_path(a.m.model))
            default_out[n - 5] = '\0';
        strcat(default_out, ".plan");
        a.output = default_out;
    }
    if (strcmp(a.output, a.m.model) == 0) {
        rc = cli_usage("the plan would overwrite the model; choose another -o");
        goto done;
    }
    if (a.timing_cache && (strcmp(a.timing_cache, a.output) == 0 ||
                           strcmp(a.timing_cache, a.m.model) == 0)) {
        rc = cli_usage(
            "--timing-cache %s is also the %s; give the cache a file of its own",
            a.timing_cache, strcmp(a.timing_cache, a.output) == 0 ? "plan" : "model");
        goto done;
    }
    a.cache_before = a.timing_cache ? cli_file_size(a.timing_cache) : -1;
    cli_install_logger(a.m.verbose);
    t0 = cli_now();
    if (!(reg = cli_registry_create(&a.m.plugins)))
        goto done;
    if (cli_import_onnx(a.m.model, reg, &a.m.ops, a.m.strict, &net) != CLI_OK)
        goto done;
    t1 = cli_now();
    {
        cli_build_opts bo = {&a.min,
                             &a.opt,
                             &a.max,
                             a.device,
                             a.workspace,
                             a.autotune,
                             a.timing_cache,
                             "give the shapes of dynamic inputs with --min-shapes, "
                             "--opt-shapes and --max-shapes (e.g. --opt-shapes "
                             "input:1x3x224x224), and the values of a shape input "
                             "the same way (e.g. --opt-shapes shape:-1x64)",
                             NULL,
                             0,
                             1,
                             (int32_t)a.op_threads,
                             a.linear_formats,
                             a.embed_plugins,
                             a.m.precision,
                             a.m.cpu_fallback};
        if (cli_build_engine(net, reg, &bo, &engine) != CLI_OK)
            goto done;
    }
    t2 = cli_now();
    cli_progress("writing %s", a.output);
    rc = cli_write_plan(a.output, engine, &plan_size);
    cli_progress_clear();
    if (rc != CLI_OK)
        goto done;
    t3 = cli_now();
    rc = summarize(&a, engine, plan_size, t1 - t0, t2 - t1, t3 - t2);
done:
    prt_engine_destroy(engine);
    prt_network_destroy(net);
    prt_registry_destroy(reg);
    free(default_out);
    cli_model_args_free(&a.m);
    cli_shapes_free(&a.min);
    cli_shapes_free(&a.opt);
    cli_shapes_free(&a.max);
    return rc;
}

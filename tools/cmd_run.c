/*
 * plugrt run: run a plan (or an ONNX model, built in memory) on inputs from
 * .npy files or random data; write the outputs as .npy, time the runs and
 * compare the outputs with reference files.
 *
 * For an ONNX model the single optimization profile is min = opt = max =
 * the shape of each input: from --shapes, else from its data file; and a
 * shape input's values (a Reshape's shape) are fixed at its data's
 * (run_build.h). --threads N runs N execution contexts of the same engine
 * on N threads; the outputs of every thread must match thread 0's bit for
 * bit (run_outputs.h, which also writes and compares them).
 *
 * Devices: an ONNX model is built for --device (default cpu); a plan runs on
 * the device it was built for, which --device must name if given. Every
 * device takes the same path (run_io.h): inputs copied into memory of the
 * engine's device, outputs there at their upper-bound size, copied back at
 * their true size after the runs; on CUDA each context has its own stream,
 * and runs are timed with events as well (bench.h). --cuda-graph captures
 * one run per context and replays it (the library says when it cannot).
 *
 * --op-threads N gives each context N threads for one run's loops;
 * --profile-layers times every layer through the runtime's profiler
 * (profile_layers.h); --json prints one JSON document of the run on stdout
 * and sends the rest to stderr.
 *
 * --compare-layers runs the ONNX model once with every layer's outputs
 * exposed, beside a reference, and names the first layer that differs
 * (compare_layers.h).
 *
 * trtexec's spellings (run_aliases) mostly name plugrt's own options; those
 * that say more (--saveEngine, --minShapes/--maxShapes, --warmUp,
 * --avgRuns, --exportOutput) are done here and in run_trtexec.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "compare.h"
#include "compare_layers.h"
#include "model.h"
#include "options.h"
#include "profile_layers.h"
#include "run_build.h"
#include "run_outputs.h"
#include "run_trtexec.h"
#include "text.h"

enum {
    OPT_HELP = CLI_MODEL_OPT_END,
    OPT_INPUT,
    OPT_RANDOM,
    OPT_SEED,
    OPT_SHAPES,
    OPT_OUTPUT_DIR,
    OPT_ITERATIONS,
    OPT_WARMUP,
    OPT_THREADS,
    OPT_COMPARE,
    OPT_ATOL,
    OPT_RTOL,
    OPT_PROFILE,
    OPT_MEMORY_LIMIT,
    OPT_DEVICE,
    OPT_CUDA_GRAPH,
    OPT_ALLOW_KERNELS,
    OPT_COMPARE_LAYERS,
    OPT_REFERENCE,
    OPT_OP_THREADS,
    OPT_PROFILE_LAYERS,
    OPT_PROFILE_JSON,
    OPT_JSON,
    OPT_LINEAR_FORMATS,
    OPT_LOAD_INPUTS,
    OPT_EXPORT_PROFILE,
    OPT_SAVE_ENGINE,
    OPT_MIN_SHAPES,
    OPT_OPT_SHAPES,
    OPT_MAX_SHAPES,
    OPT_WARMUP_MS,
    OPT_AVG_RUNS,
    OPT_EXPORT_OUTPUT,
    OPT_ALLOW_EMBEDDED_PLUGINS,
    OPT_ALLOW_EMBEDDED_CODE
};

static const cli_opt run_opts[] = {
    {"--help", "-h", 0, OPT_HELP},
    /* trtexec's options whose values need translating (run_aliases). */
    CLI_MODEL_PRECISION_OPTS,
    {"--loadInputs", NULL, 1, OPT_LOAD_INPUTS},
    {"--exportProfile", NULL, 1, OPT_EXPORT_PROFILE},
    {"--saveEngine", NULL, 1, OPT_SAVE_ENGINE},
    {"--minShapes", NULL, 1, OPT_MIN_SHAPES},
    {"--optShapes", NULL, 1, OPT_OPT_SHAPES},
    {"--maxShapes", NULL, 1, OPT_MAX_SHAPES},
    {"--warmUp", NULL, 1, OPT_WARMUP_MS},
    {"--avgRuns", NULL, 1, OPT_AVG_RUNS},
    {"--exportOutput", NULL, 1, OPT_EXPORT_OUTPUT},
    {"--plugins", NULL, 1, CLI_MODEL_OPT_PLUGINS},
    {"--no-default-plugins", NULL, 0, CLI_MODEL_OPT_NO_DEFAULT},
    {"--allow-embedded-plugins", NULL, 0, OPT_ALLOW_EMBEDDED_PLUGINS},
    {"--allow-embedded-code", NULL, 0, OPT_ALLOW_EMBEDDED_CODE},
    {"--plugin-op", NULL, 1, CLI_MODEL_OPT_PLUGIN_OP},
    {"--input", "-i", 1, OPT_INPUT},
    {"--random-inputs", NULL, 0, OPT_RANDOM},
    {"--seed", NULL, 1, OPT_SEED},
    {"--shapes", NULL, 1, OPT_SHAPES},
    {"--output-dir", "-o", 1, OPT_OUTPUT_DIR},
    {"--iterations", "-n", 1, OPT_ITERATIONS},
    {"--warmup", NULL, 1, OPT_WARMUP},
    {"--threads", "-t", 1, OPT_THREADS},
    {"--op-threads", NULL, 1, OPT_OP_THREADS},
    {"--linear-formats", NULL, 0, OPT_LINEAR_FORMATS},
    {"--allow-cpu-fallback", NULL, 0, CLI_MODEL_OPT_CPU_FALLBACK},
    {"--profile-layers", NULL, 0, OPT_PROFILE_LAYERS},
    {"--profile-json", NULL, 1, OPT_PROFILE_JSON},
    {"--json", NULL, 0, OPT_JSON},
    {"--compare", NULL, 1, OPT_COMPARE},
    {"--atol", NULL, 1, OPT_ATOL},
    {"--rtol", NULL, 1, OPT_RTOL},
    {"--profile", NULL, 1, OPT_PROFILE},
    {"--memory-limit", NULL, 1, OPT_MEMORY_LIMIT},
    {"--device", NULL, 1, OPT_DEVICE},
    {"--cuda-graph", NULL, 0, OPT_CUDA_GRAPH},
    {"--allow-embedded-kernels", NULL, 0, OPT_ALLOW_KERNELS},
    {"--compare-layers", NULL, 0, OPT_COMPARE_LAYERS},
    {"--reference", NULL, 1, OPT_REFERENCE},
    {"--verbose", "-v", 0, CLI_MODEL_OPT_VERBOSE},
    {"--strict", NULL, 0, CLI_MODEL_OPT_STRICT},
    {"--no-strict", NULL, 0, CLI_MODEL_OPT_NO_STRICT},
    {"--no-fuse", NULL, 0, CLI_MODEL_OPT_NO_FUSE},
    {NULL, NULL, 0, 0},
};

/* What a TensorRT user types to trtexec, as plugrt run takes it. */
static const cli_alias run_aliases[] = {
    {"--onnx", "", "FILE: the ONNX model to build in memory and run"},
    {"--loadEngine", "", "FILE: the plan to run"},
    {"--saveEngine", "--saveEngine",
     "FILE: write the plan built from the ONNX model, the bytes `plugrt build` "
     "writes with the same options (a plan given is saved already: refused)"},
    {"--shapes", "--shapes", "the same option"},
    {"--minShapes", "--minShapes",
     "the range's smallest shapes: an ONNX model is built with the range as "
     "`plugrt build` builds it, and run at the opt shapes; a plan's profile "
     "must hold it"},
    {"--optShapes", "--optShapes",
     "the shapes to run at where --shapes and data give none; without "
     "--minShapes/--maxShapes, as --shapes"},
    {"--maxShapes", "--maxShapes", "the range's largest shapes (see --minShapes)"},
    {"--loadInputs", "--loadInputs",
     "NAME:FILE[,...]: --input NAME=FILE for each; .npy or ONNX TensorProto .pb "
     "files (trtexec's raw binary files are refused)"},
    {"--exportOutput", "--exportOutput",
     "FILE: the outputs as trtexec's JSON ([{\"name\", \"dimensions\": \"1x1000\", "
     "\"values\": [...]}]; null for NaN and infinities); --output-dir writes .npy"},
    {"--dumpProfile", "--profile-layers", "time every layer"},
    {"--exportProfile", "--exportProfile", "FILE: --profile-layers --profile-json FILE"},
    {"--useCudaGraph", "--cuda-graph", "capture one run as a CUDA graph, replay it"},
    {"--iterations", "--iterations", "the same option: timed runs per thread"},
    {"--warmUp", "--warmUp",
     "MS: untimed runs until MS milliseconds have passed, at least one (plugrt's "
     "--warmup N counts runs; give one of the two)"},
    {"--avgRuns", "--avgRuns",
     "N: also the means of windows of N consecutive timed runs (min, median, "
     "max, mean of them); at most --iterations"},
    {"--staticPlugins", "--plugins", "LIB.so: load a plugin library"},
    {"--dynamicPlugins", "--plugins", "LIB.so: load a plugin library"},
    CLI_MODEL_PRECISION_ALIASES,
    {NULL, NULL, NULL},
};

static void run_help(void)
{
    printf(
        "Usage: plugrt run MODEL.plan|MODEL.onnx [options]\n"
        "\n"
        "Runs a plan, or an ONNX model built in memory, writes its outputs, times it\n"
        "and optionally compares the outputs with reference files.\n"
        "\n"
        "Inputs (first that applies):\n"
        "  -i, --input NAME=FILE      data of input NAME from a .npy file or an ONNX\n"
        "                             TensorProto (.pb) (repeatable, once per input)\n"
        "  (with --compare DIR)       DIR/input_NAME.npy, or DIR/input_K.pb (ONNX's\n"
        "                             test data: the input its TensorProto names)\n"
        "  --random-inputs            random data: floats in [-1, 1), integers in\n"
        "                             [0, 16) (int8 in [-8, 8)), bools 0/1\n"
        "  --seed N                   seed of the random data (default 1)\n"
        "  --shapes NAME:DIMS[,...]   shapes of dynamic inputs (e.g. x:1x3x224x224);\n"
        "                             for an ONNX model also its profile; an input\n"
        "                             whose profile fixes its shape needs none\n"
        "  For an ONNX model the profile is fixed at each input's dims, and a shape\n"
        "  input's (a Reshape's shape, Range's bounds) at the values of its data.\n"
        "\n"
        "Outputs and checks:\n"
        "  -o, --output-dir DIR       write each output to DIR/output_NAME.npy\n"
        "  --compare DIR              check outputs against DIR/output_NAME.npy (or\n"
        "                             the DIR/output_K.pb that names the output, else\n"
        "                             output K):\n"
        "                             |got - ref| <= atol + rtol * |ref| per element;\n"
        "                             a missing reference is skipped with a note\n"
        "  --atol X                   absolute tolerance (default 1e-5; an engine\n"
        "                             built with --fp16 1e-2, --bf16 5e-2, --tf32 on\n"
        "                             CUDA 1e-3; the line before the results says\n"
        "                             which)\n"
        "  --rtol Y                   relative tolerance (default: as --atol)\n"
        "\n"
        "Layer by layer (ONNX models):\n"
        "  --compare-layers           run the model once with every layer's outputs\n"
        "                             exposed, beside a reference, compare each layer's\n"
        "                             outputs in order, and name the first layer that\n"
        "                             differs: its op or plugin key, its inputs' shapes\n"
        "                             and its worst element (exit status 1). A float\n"
        "                             element passes when |got - ref| <= atol + rtol x\n"
        "                             max|ref| of its tensor (defaults atol 0, rtol "
        "1e-4\n"
        "                             float32, 1e-2 float16, 5e-2 bfloat16; --atol and\n"
        "                             --rtol set them); integers exactly. Outputs are\n"
        "                             poisoned (NaN) first, so unwritten elements show.\n"
        "                             Inputs as above (--compare DIR gives only the\n"
        "                             inputs); one run, no timing\n"
        "  --reference cpu|onnxruntime\n"
        "                             cpu (default): plugrt on the CPU, with the\n"
        "                             model's ops that --plugin-op sends to a plugin\n"
        "                             imported as plugrt's own where plugrt has them;\n"
        "                             onnxruntime: ONNX Runtime's CPU run of every "
        "node,\n"
        "                             through python3 with onnxruntime and onnx\n"
        "                             (pip install onnxruntime; PLUGRT_PYTHON names\n"
        "                             another python)\n"
        "\n"
        "Timing:\n"
        "  -n, --iterations N         timed runs per thread (default 10)\n"
        "  --warmup N                 untimed runs first (default 2)\n"
        "  -t, --threads N            N contexts of the engine on N threads (default "
        "1),\n"
        "                             each on its own stream on CUDA\n"
        "  --allow-cpu-fallback       for an ONNX model on --device cuda, run a layer\n"
        "                             with no CUDA kernel on the CPU, with copies\n"
        "                             around it (not with --cuda-graph)\n"
        "  --linear-formats           for an ONNX model, keep every tensor LINEAR: no\n"
        "                             blocked CHW8 layout between the CPU's "
        "convolutions\n"
        "  --fp16, --bf16             for an ONNX model, run layers in float16\n"
        "                             (bfloat16) where their kernels take it; inputs\n"
        "                             and outputs keep their types (plugrt build)\n"
        "  --tf32                     for an ONNX model, let float32 products on CUDA\n"
        "                             use TF32 tensor cores (off: strict float32)\n"
        "  --best                     --fp16 --tf32 (trtexec's every precision)\n"
        "  --op-threads N             threads each context spreads one run's layers\n"
        "                             over (intra-op; the built-in ops and plugins\n"
        "                             that ask for threads); default: the CPUs\n"
        "                             available divided among the --threads contexts,\n"
        "                             at least 1; 1: none. Results do not depend on it\n"
        "  --profile-layers           time every layer of the timed runs and print each\n"
        "                             layer's median and mean time and its share of the\n"
        "                             sum, slowest first (on CUDA from events around\n"
        "                             each layer; every run then waits for the GPU)\n"
        "  --profile-json FILE        with --profile-layers, the same as JSON in FILE\n"
        "  --json                     print one JSON document on stdout (the rest goes\n"
        "                             to stderr): the model, device, thread counts,\n"
        "                             latency and throughput, and with --profile-layers\n"
        "                             the layer profile (as --profile-json writes it)\n"
        "  --cuda-graph               capture one run as a CUDA graph and replay it for\n"
        "                             every run (fails, saying why, when the engine or\n"
        "                             the device cannot be captured)\n"
        "\n"
        "Plugins and engine:\n"
        "  --allow-embedded-kernels   run the plan's kernel layers: GPU code that came\n"
        "                             with the plan file (`plugrt inspect` lists them);\n"
        "                             only for plans you trust\n"
        "  --plugins LIB.so           load a plugin library (repeatable)\n"
        "  --no-default-plugins       do not load the standard plugin library\n"
        "  --allow-embedded-plugins   (plan) load the plugin libraries the plan carries\n"
        "                             (`plugrt build --embed-plugins`): each is written\n"
        "                             to a private temporary file, checked, loaded and\n"
        "                             unlinked. This runs code from the plan: allow it\n"
        "                             only for plans you trust. A library --plugins\n"
        "                             loads with the same content hash is used instead\n"
        "  --allow-embedded-code      (plan) allow every kind of code a plan can carry\n"
        "                             (its plugin libraries, and GPU kernels)\n"
        "  --plugin-op OP=PLUGIN[@VERSION][/NAMESPACE]\n"
        "                             (ONNX) import every OP node as that plugin\n"
        "  --no-strict                (ONNX) a plugin output that disagrees with the\n"
        "                             model's declared shape or dtype is a warning, not\n"
        "                             an error (--strict, the default: it fails the\n"
        "                             build)\n"
        "  --no-fuse                  (ONNX) import every node as its own layer: no\n"
        "                             importer fusion (docs/DESIGN-NOTES.md lists them)\n"
        "  --device cpu|cuda          (ONNX) the device to build for (default cpu); for "
        "a\n"
        "                             plan, the plan's device, which it must name if "
        "given\n"
        "  --profile N                optimization profile to run (default 0)\n"
        "  --memory-limit SIZE        most scratch memory (activations and workspace)\n"
        "                             each context may take, in bytes or with K, M, G\n"
        "                             (KiB, MiB, GiB; multiples of 1024), e.g. 64M;\n"
        "                             an engine that needs more fails, saying how much\n"
        "                             it needs (default: no limit)\n"
        "  -v, --verbose              print the library's log\n"
        "  -h, --help                 this help\n"
        "\n");
    cli_print_aliases(run_aliases, "trtexec");
    printf("\n"
           "Prints latency (min, median, p90, p99, max, mean) and throughput to stdout;\n"
           "on CUDA, the GPU time of each run from CUDA events around its enqueue too.\n"
           "On CUDA, inputs are copied to device memory, outputs allocated there at\n"
           "their upper-bound size and copied back at their true size after the runs.\n"
           "Exit status: 0 success, 1 failure or mismatch, 2 usage.\n");
}

typedef struct run_args {
    cli_model_args m;
    const char *output_dir, *compare_dir;
    const char **inputs; /* "name=file", argv storage */
    int nb_inputs;
    cli_shapes shapes;
    int random_inputs;
    int32_t device; /* -1: not given */
    int cuda_graph;
    int compare_layers;
    int32_t reference; /* -1: not given */
    int64_t seed, iterations, warmup, threads, profile;
    int64_t op_threads; /* 0: not given */
    int linear_formats; /* --linear-formats */
    int profile_layers;
    const char *profile_json;
    int json;     /* --json */
    char **owned; /* --input values made from --loadInputs */
    int nb_owned;
    int64_t memory_limit; /* 0: none */
    double atol, rtol;
    int atol_given, rtol_given;
    /* trtexec's (run_trtexec.h) */
    run_range range;           /* --minShapes, --optShapes, --maxShapes */
    const char *save_engine;   /* --saveEngine */
    const char *export_output; /* --exportOutput */
    double warmup_ms;          /* --warmUp; < 0: not given */
    int warmup_given;          /* --warmup */
    int64_t avg_runs;          /* --avgRuns; 0: not given */
    /* PRT_EMBEDDED_* bits: --allow-embedded-plugins, --allow-embedded-code */
    uint32_t allow_embedded;
} run_args;

/* --input NAME=FILE (v borrowed: argv, or a->owned). */
static int add_input(run_args *a, const char *v)
{
    const char **l;
    const char *eq = strchr(v, '=');
    size_t n = eq ? (size_t)(eq - v) : 0;
    if (!eq || eq == v || eq[1] == '\0')
        return cli_usage("--input: '%s' is not NAME=FILE.npy", v);
    /* Two files for one input: whichever won, the other was a mistake. */
    for (int i = 0; i < a->nb_inputs; i++)
        if (strncmp(a->inputs[i], v, n + 1) == 0)
            return cli_usage("--input %.*s is given twice ('%s' and '%s')", (int)n, v,
                             a->inputs[i], v);
    l = realloc(a->inputs, sizeof *l * (size_t)(a->nb_inputs + 1));
    if (!l) {
        cli_error("out of memory for the list of --input options");
        return CLI_FAIL;
    }
    l[a->nb_inputs++] = v;
    a->inputs = l;
    return CLI_OK;
}

/* trtexec's --loadInputs NAME:FILE[,NAME:FILE...], a name with ':' in
 * single quotes ('Input:0':file): each becomes --input NAME=FILE. */
static int trtexec_load_inputs(run_args *a, const char *v)
{
    const char *p = v;
    while (*p) {
        const char *name = p, *name_end, *file, *end = strchr(p, ',');
        char **l;
        char *item;
        int rc;
        if (!end)
            end = p + strlen(p);
        if (*p == '\'') {
            name = p + 1;
            name_end = memchr(name, '\'', (size_t)(end - name));
            file = name_end && name_end + 1 < end && name_end[1] == ':' ? name_end + 2
                                                                        : NULL;
        } else {
            name_end = memchr(p, ':', (size_t)(end - p));
            file = name_end ? name_end + 1 : NULL;
        }
        if (!file || name_end == name || file == end)
            return cli_usage("--loadInputs: '%.*s' is not NAME:FILE (e.g. "
                             "input:x.npy; 'Input:0':x.npy for a name with ':')",
                             (int)(end - p), p);
        item = malloc((size_t)(name_end - name) + 1 + (size_t)(end - file) + 1);
        l = item ? realloc(a->owned, sizeof *l * (size_t)(a->nb_owned + 1)) : NULL;
        if (!l) {
            free(item);
            cli_error("out of memory for --loadInputs %s", v);
            return CLI_FAIL;
        }
        a->owned = l;
        sprintf(item, "%.*s=%.*s", (int)(name_end - name), name, (int)(end - file), file);
        a->owned[a->nb_owned++] = item;
        if ((rc = add_input(a, item)) != CLI_OK)
            return rc;
        p = *end ? end + 1 : end;
    }
    return CLI_OK;
}

/* run's own options (cli_model_args_parse takes the others). */
static int take_option(void *user, int id, const char *v)
{
    run_args *a = user;
    switch (id) {
    case OPT_HELP:
        run_help();
        return -1;
    case OPT_INPUT:
        return add_input(a, v);
    case OPT_LOAD_INPUTS:
        return trtexec_load_inputs(a, v);
    case OPT_EXPORT_PROFILE:
        a->profile_layers = 1;
        a->profile_json = v;
        break;
    case OPT_SAVE_ENGINE:
        a->save_engine = v;
        break;
    case OPT_MIN_SHAPES:
        return cli_shapes_parse_signed(&a->range.min, "--minShapes", v);
    case OPT_OPT_SHAPES:
        return cli_shapes_parse_signed(&a->range.opt, "--optShapes", v);
    case OPT_MAX_SHAPES:
        return cli_shapes_parse_signed(&a->range.max, "--maxShapes", v);
    case OPT_WARMUP_MS:
        return cli_parse_nonneg("--warmUp", v, &a->warmup_ms);
    case OPT_AVG_RUNS:
        return cli_parse_int("--avgRuns", v, 1, 1000000000, &a->avg_runs);
    case OPT_ALLOW_EMBEDDED_PLUGINS:
        a->allow_embedded |= PRT_EMBEDDED_PLUGIN_LIBRARIES;
        break;
    case OPT_ALLOW_EMBEDDED_CODE:
        a->allow_embedded |= PRT_EMBEDDED_CODE;
        break;
    case OPT_EXPORT_OUTPUT:
        a->export_output = v;
        break;
    case OPT_RANDOM:
        a->random_inputs = 1;
        break;
    case OPT_SEED:
        return cli_parse_int("--seed", v, 0, INT64_MAX, &a->seed);
    case OPT_SHAPES:
        return cli_shapes_parse(&a->shapes, "--shapes", v);
    case OPT_OUTPUT_DIR:
        a->output_dir = v;
        break;
    case OPT_ITERATIONS:
        return cli_parse_int("--iterations", v, 1, 1000000000, &a->iterations);
    case OPT_WARMUP:
        a->warmup_given = 1;
        return cli_parse_int("--warmup", v, 0, 1000000000, &a->warmup);
    case OPT_THREADS:
        return cli_parse_int("--threads", v, 1, 1024, &a->threads);
    case OPT_OP_THREADS:
        return cli_parse_int("--op-threads", v, 1, 1024, &a->op_threads);
    case OPT_LINEAR_FORMATS:
        a->linear_formats = 1;
        break;
    case OPT_PROFILE_LAYERS:
        a->profile_layers = 1;
        break;
    case OPT_PROFILE_JSON:
        a->profile_json = v;
        break;
    case OPT_JSON:
        a->json = 1;
        break;
    case OPT_COMPARE:
        a->compare_dir = v;
        break;
    case OPT_ATOL:
        a->atol_given = 1;
        return cli_parse_nonneg("--atol", v, &a->atol);
    case OPT_RTOL:
        a->rtol_given = 1;
        return cli_parse_nonneg("--rtol", v, &a->rtol);
    case OPT_PROFILE:
        return cli_parse_int("--profile", v, 0, INT32_MAX, &a->profile);
    case OPT_DEVICE:
        return cli_parse_device("--device", v, &a->device);
    case OPT_CUDA_GRAPH:
        a->cuda_graph = 1;
        break;
    case OPT_ALLOW_KERNELS:
        run_allow_embedded_kernels = 1;
        a->allow_embedded |= PRT_EMBEDDED_KERNELS;
        break;
    case OPT_COMPARE_LAYERS:
        a->compare_layers = 1;
        break;
    case OPT_REFERENCE:
        return cli_parse_reference("--reference", v, &a->reference);
    case OPT_MEMORY_LIMIT: {
        int rc = cli_parse_size("--memory-limit", v, &a->memory_limit);
        if (rc != CLI_OK)
            return rc;
        /* 0 bytes would read as "no limit" to the library: say so instead
         * of running unlimited behind a limit the user asked for. */
        if (a->memory_limit < 1)
            return cli_usage(
                "--memory-limit: '%s' is less than one byte (leave the option "
                "out for no limit)",
                v);
        break;
    }
    default:
        return cli_usage("internal: unhandled option");
    }
    return CLI_OK;
}

/* trtexec's options that say more than a new name: what they need of the
 * others, and --optShapes alone made --shapes (trtexec then builds min =
 * opt = max, as run does from --shapes). */
static int check_trtexec_args(run_args *a)
{
    int onnx = cli_is_onnx_path(a->m.model);
    if (a->save_engine && !onnx)
        return cli_usage("--saveEngine %s: %s is a plan, saved already (--saveEngine "
                         "writes the plan run builds from an ONNX model)",
                         a->save_engine, a->m.model);
    if (a->save_engine && strcmp(a->save_engine, a->m.model) == 0)
        return cli_usage("--saveEngine would overwrite the model; choose another file");
    if (a->warmup_ms >= 0 && a->warmup_given)
        return cli_usage(
            "--warmUp %g (trtexec's: milliseconds) and --warmup %lld (a count "
            "of runs) both say how long to warm up: give one",
            a->warmup_ms, (long long)a->warmup);
    if (a->warmup_ms >= 0)
        a->warmup = 1; /* a duration makes at least one run */
    if (a->avg_runs > a->iterations)
        return cli_usage("--avgRuns %lld: more than the %lld timed runs per thread "
                         "(--iterations); a window holds consecutive runs of one thread",
                         (long long)a->avg_runs, (long long)a->iterations);
    if (a->compare_layers && (a->save_engine || a->export_output || a->avg_runs ||
                              a->warmup_ms >= 0 || run_range_given(&a->range)))
        return cli_usage(
            "--compare-layers runs the model once, at one shape: leave out %s",
            a->save_engine      ? "--saveEngine"
            : a->export_output  ? "--exportOutput"
            : a->avg_runs       ? "--avgRuns"
            : a->warmup_ms >= 0 ? "--warmUp"
                                : "--minShapes/--maxShapes (use --shapes)");
    if (!run_range_given(&a->range)) {
        for (int i = 0; i < a->range.opt.count; i++)
            if (cli_shapes_set(&a->shapes, a->range.opt.items[i].name,
                               &a->range.opt.items[i].dims) != CLI_OK)
                return CLI_FAIL;
        cli_shapes_free(&a->range.opt);
    }
    return CLI_OK;
}

/* The defaults, then the command line: CLI_OK, an exit code, or < 0 after
 * --help. *a is the caller's to free, whatever it returns. */
static int parse_args(int argc, char **argv, run_args *a)
{
    int rc;
    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->iterations = 10;
    a->warmup = 2;
    a->threads = 1;
    a->atol = 1e-5;
    a->rtol = 1e-5;
    a->device = -1;
    a->reference = -1;
    a->warmup_ms = -1.0;
    a->m.aliases = run_aliases;
    rc = cli_model_args_parse(&a->m, argc, argv, run_opts, take_option, a,
                              "the model to run (plugrt run MODEL.plan or "
                              "MODEL.onnx)");
    if (rc != CLI_OK)
        return rc;
    if ((rc = check_trtexec_args(a)) != CLI_OK)
        return rc;
    /* trtexec ignores build flags beside --loadEngine; so do we, saying so. */
    if (a->m.precision && !cli_is_onnx_path(a->m.model))
        cli_warn("--fp16/--bf16/--tf32/--best: %s is a plan, which keeps the precision "
                 "it was built with (plugrt inspect shows it)",
                 a->m.model);
    if (a->iterations * a->threads > 100000000)
        return cli_usage("--iterations x --threads is more than 1e8 runs");
    if (!cli_is_onnx_path(a->m.model) && a->m.ops.count)
        return cli_usage("--plugin-op applies to ONNX models, not to a plan");
    if (a->reference >= 0 && !a->compare_layers)
        return cli_usage("--reference applies to --compare-layers");
    if (a->profile_json && !a->profile_layers)
        return cli_usage("--profile-json applies to --profile-layers");
    if (a->json && a->compare_layers)
        return cli_usage("--json describes timed runs: leave out --compare-layers");
    if (a->profile_layers && (a->cuda_graph || a->compare_layers))
        return cli_usage("--profile-layers times enqueued runs: leave out %s",
                         a->cuda_graph ? "--cuda-graph (a graph's replay reports no "
                                         "layers)"
                                       : "--compare-layers");
    if (a->compare_layers) {
        if (!cli_is_onnx_path(a->m.model))
            return cli_usage("--compare-layers needs the ONNX model: a plan's outputs "
                             "are fixed when it is built (run the .onnx it was built "
                             "from)");
        if (a->threads > 1 || a->cuda_graph || a->output_dir || a->profile > 0)
            return cli_usage("--compare-layers runs the model once, on its one "
                             "profile: leave out %s",
                             a->threads > 1  ? "--threads"
                             : a->cuda_graph ? "--cuda-graph"
                             : a->output_dir ? "--output-dir"
                                             : "--profile");
    }
    return CLI_OK;
}

static int load_inputs(const run_args *a, run_inputs *in)
{
    for (int i = 0; i < a->nb_inputs; i++) {
        const char *eq = strchr(a->inputs[i], '=');
        char *name = strndup(a->inputs[i], (size_t)(eq - a->inputs[i]));
        int rc;
        if (!name) {
            cli_error("out of memory for the name in --input %s", a->inputs[i]);
            return CLI_FAIL;
        }
        rc = run_inputs_add_file(in, name, eq + 1, 0);
        free(name);
        if (rc)
            return rc;
    }
    return a->compare_dir ? run_inputs_scan_dir(in, a->compare_dir) : CLI_OK;
}

/* An imported ONNX network (only read), built for `device` as run_build.h
 * says. */
static int build_network(const run_args *a, const prt_registry *reg, const run_inputs *in,
                         const prt_network *net, int32_t device, prt_engine **out)
{
    run_build_opts o = {&a->shapes,        device,         (int32_t)a->op_threads,
                        a->linear_formats, &a->range.min,  &a->range.opt,
                        &a->range.max,     a->m.precision, a->m.cpu_fallback};
    return run_build_network(net, reg, in, &o, out);
}

/* An ONNX model: import, build. */
static int build_from_onnx(const run_args *a, const prt_registry *reg,
                           const run_inputs *in, prt_engine **out)
{
    prt_network *net = NULL;
    int rc = cli_import_onnx(a->m.model, reg, &a->m.ops, a->m.strict, &net);
    if (rc == CLI_OK)
        rc = build_network(a, reg, in, net, a->device < 0 ? PRT_DEVICE_CPU : a->device,
                           out);
    prt_network_destroy(net);
    return rc;
}

/* --compare-layers builds its engines the way a run does. */
typedef struct layers_build {
    const run_args *a;
    const prt_registry *reg;
    const run_inputs *in;
} layers_build;

static int build_for_layers(void *user, const prt_network *net, int32_t device,
                            prt_engine **out)
{
    const layers_build *b = user;
    return build_network(b->a, b->reg, b->in, net, device, out);
}

static int run_compare_layers(const run_args *a, const prt_registry *reg, run_inputs *in)
{
    layers_build b = {a, reg, in};
    cli_layers_opts o = {&a->m,
                         reg,
                         a->device < 0 ? PRT_DEVICE_CPU : a->device,
                         a->reference < 0 ? CLI_REFERENCE_CPU : a->reference,
                         a->atol_given ? a->atol : -1.0,
                         a->rtol_given ? a->rtol : -1.0,
                         a->memory_limit,
                         in,
                         &a->shapes,
                         a->random_inputs,
                         (uint64_t)a->seed,
                         build_for_layers,
                         &b};
    return cli_compare_layers(&o);
}

/* `rc` is context 0, bound: a shape input has no device copy. */
static void print_inputs(const run_model *m, const run_inputs *in, const run_ctx *rc)
{
    printf("inputs:\n");
    for (int32_t i = 0; i < m->nb_inputs; i++) {
        const prt_io_info *io = &m->io[i];
        const run_input *r = run_inputs_match(in, io->name);
        char d[128], en[CLI_ESC_CAP], ep[CLI_ESC_CAP];
        if (!r)
            continue;
        printf("  %-16s %-8s %-14s %s%s\n", cli_escape(io->name, en, sizeof en),
               prt_dtype_name(io->dtype), cli_format_dims(&r->arr.dims, d, sizeof d),
               r->path ? cli_escape(r->path, ep, sizeof ep) : "random",
               rc->in_dev[i] ? "" : " (shape input: read on the host)");
    }
}

/* A plan runs on the device it was built for: --device, if given, must
 * name it. */
static int check_plan_device(const run_args *a, const prt_engine *engine)
{
    int32_t dev = prt_engine_device(engine);
    if (a->device < 0 || a->device == dev)
        return CLI_OK;
    return cli_usage(
        "--device %s: the plan %s was built for %s, and a plan runs on the "
        "device it was built for (rebuild it from the model with plugrt build "
        "--device %s, or leave --device out)",
        cli_device_name(a->device), a->m.model, cli_device_name(dev),
        cli_device_name(a->device));
}

/* Before importing a model for a device: whether it can be used here. */
static int check_device_usable(int32_t device)
{
    prt_status st = prt_device_check(device);
    if (st == PRT_OK)
        return CLI_OK;
    cli_error_api(st, "--device %s", cli_device_name(device));
    fprintf(stderr, "  `plugrt devices` lists the devices plugrt can use here\n");
    return CLI_FAIL;
}

/* --cuda-graph: one graph per context, captured on its stream. */
static int capture_graphs(run_ctx *ctxs, cli_bench_target *targets, int n)
{
    for (int t = 0; t < n; t++) {
        prt_status st = prt_context_capture_graph(ctxs[t].ctx, ctxs[t].stream);
        if (st) {
            if (n > 1)
                cli_error_api(st, "--cuda-graph: cannot capture the run of thread %d", t);
            else
                cli_error_api(st, "--cuda-graph: cannot capture the run");
            fprintf(stderr, "  run without --cuda-graph to enqueue each run instead\n");
            return CLI_FAIL;
        }
        targets[t].graph = 1;
    }
    return CLI_OK;
}

static void print_times(const char *what, const cli_bench_times *t)
{
    printf("%s: min %.4f, median %.4f, p90 %.4f, p99 %.4f, max %.4f, mean %.4f", what,
           t->min_ms, t->median_ms, t->p90_ms, t->p99_ms, t->max_ms, t->mean_ms);
}

static void print_stats(const run_args *a, const cli_bench_stats *stats,
                        int32_t op_threads)
{
    char runs[224], warm[64] = "";
    /* --warmUp: how many runs its duration made (the fewest of any thread). */
    if (a->warmup_ms >= 0)
        snprintf(warm, sizeof warm, " in %.3f ms (--warmUp %g)", stats->warmup_ms,
                 a->warmup_ms);
    snprintf(runs, sizeof runs,
             " (%lld runs: %lld x %lld thread%s, %d op thread%s each, after %lld "
             "warmup%s%s)\n",
             (long long)stats->samples, (long long)a->iterations, (long long)a->threads,
             a->threads > 1 ? "s" : "", (int)op_threads, op_threads > 1 ? "s" : "",
             (long long)stats->warmups, warm,
             a->cuda_graph ? "; CUDA graph replays" : "");
    if (!stats->has_device) {
        print_times("latency (ms)", &stats->wall);
        fputs(runs, stdout);
    } else {
        print_times("latency (ms, wall per run)", &stats->wall);
        fputs(runs, stdout);
        print_times(a->cuda_graph ? "GPU time (ms, CUDA events around each graph launch)"
                                  : "GPU time (ms, CUDA events around each enqueue)",
                    &stats->device);
        putchar('\n');
    }
    printf("throughput: %.2f inferences/s (wall %.4f s)\n", stats->throughput,
           stats->wall_s);
    run_print_windows(stats);
}

static void json_times(json_writer *w, const char *key, const cli_bench_times *t)
{
    json_begin_object(w, key);
    json_double(w, "min", t->min_ms);
    json_double(w, "median", t->median_ms);
    json_double(w, "p90", t->p90_ms);
    json_double(w, "p99", t->p99_ms);
    json_double(w, "max", t->max_ms);
    json_double(w, "mean", t->mean_ms);
    json_end_object(w);
}

/* --json: stdout becomes stderr, so that everything the run prints goes
 * there, and the document goes to the stdout of before (*out). */
static int json_open(FILE **out)
{
    int fd;
    fflush(stdout);
    fd = dup(STDOUT_FILENO);
    if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || !(*out = fdopen(fd, "w"))) {
        if (fd >= 0)
            close(fd);
        cli_error("--json: cannot set stdout aside (%s)", strerror(errno));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Everything one `plugrt run` holds, freed by run_state_free. */
typedef struct run_state {
    run_inputs in;
    run_model model;
    prt_registry *reg;
    prt_engine *engine;
    int onnx;         /* the model is an ONNX model, built here */
    size_t plan_size; /* bytes of a plan file */
    double load_s;    /* seconds to build or load the engine */
    run_ctx *ctxs;    /* [threads] */
    cli_bench_target *targets;
    cli_layer_recorder *recs; /* [threads] with --profile-layers */
    FILE *json;               /* --json: where the document goes */
} run_state;

/* --saveEngine: the plan built from the ONNX model. */
static int save_engine(const char *path, const prt_engine *engine)
{
    size_t size = 0;
    char ep[CLI_ESC_CAP];
    if (cli_write_plan(path, engine, &size) != CLI_OK)
        return CLI_FAIL;
    printf("plan written to %s (%zu bytes)\n", cli_escape(path, ep, sizeof ep), size);
    return CLI_OK;
}

/* The engine, built from the ONNX model or loaded from the plan, and its
 * I/O, checked against the options that concern it; the shapes to run at
 * completed from trtexec's lists. */
static int load_engine(run_args *a, run_state *s)
{
    double t0 = cli_now();
    int rc = s->onnx ? build_from_onnx(a, s->reg, &s->in, &s->engine)
                     : cli_load_plan(a->m.model, s->reg, a->allow_embedded, &s->engine,
                                     &s->plan_size);
    if (rc != CLI_OK)
        return rc;
    s->load_s = cli_now() - t0;
    if (!s->onnx && (rc = check_plan_device(a, s->engine)) != CLI_OK)
        return rc;
    if (a->profile >= prt_engine_profile_count(s->engine) && a->profile > 0) {
        cli_error("--profile %lld: the engine has %d profile(s)", (long long)a->profile,
                  (int)prt_engine_profile_count(s->engine));
        return CLI_FAIL;
    }
    if (a->save_engine && save_engine(a->save_engine, s->engine) != CLI_OK)
        return CLI_FAIL;
    if (run_model_init(&s->model, s->engine) != CLI_OK)
        return CLI_FAIL;
    if ((rc = run_model_check_shapes(&s->model, &a->shapes)) != CLI_OK)
        return rc;
    return run_trtexec_shapes(&a->range, &s->model, s->engine, (int32_t)a->profile,
                              !s->onnx, &s->in, &a->shapes);
}

/* One context per --threads, each with its recorder for --profile-layers,
 * and what the timed runs need of each. */
static int create_contexts(run_args *a, run_state *s)
{
    s->ctxs = calloc((size_t)a->threads, sizeof *s->ctxs);
    s->targets = calloc((size_t)a->threads, sizeof *s->targets);
    if (!s->ctxs || !s->targets) {
        cli_error("out of memory for %lld execution contexts", (long long)a->threads);
        return CLI_FAIL;
    }
    /* The CPUs are shared among the contexts unless --op-threads says. */
    if (!a->op_threads) {
        a->op_threads = prt_default_thread_count() / a->threads;
        a->op_threads = a->op_threads < 1 ? 1 : a->op_threads;
    }
    if (a->profile_layers && !(s->recs = calloc((size_t)a->threads, sizeof *s->recs))) {
        cli_error("out of memory for %lld profiles", (long long)a->threads);
        return CLI_FAIL;
    }
    for (int t = 0; t < (int)a->threads; t++) {
        if (run_ctx_create(&s->ctxs[t], s->engine, (int32_t)a->profile, a->memory_limit,
                           (int32_t)a->op_threads) != CLI_OK)
            return CLI_FAIL;
        /* A warm-up duration makes runs no one can count in advance. */
        if (s->recs && cli_layer_recorder_attach(&s->recs[t], s->ctxs[t].ctx, s->engine,
                                                 a->warmup_ms >= 0 ? -1 : a->warmup,
                                                 a->iterations) != CLI_OK)
            return CLI_FAIL;
        s->targets[t].ctx = s->ctxs[t].ctx;
        s->targets[t].device = s->ctxs[t].device;
        s->targets[t].stream = s->ctxs[t].stream;
    }
    return CLI_OK;
}

/* The inputs' data, checked against the engine (random data where allowed),
 * then copied into every context. Contexts come first: a context on the
 * profile tells which inputs the profile fixes, and those need no --shapes
 * for random data. */
static int bind_inputs(const run_args *a, run_state *s)
{
    const char *device = cli_device_name(prt_engine_device(s->engine));
    if (run_inputs_bind(&s->in, &s->model, s->ctxs[0].ctx, &a->shapes, a->random_inputs,
                        (uint64_t)a->seed) != CLI_OK)
        return CLI_FAIL;
    if (s->onnx)
        printf("model: %s, built in %.3f s for %s\n", a->m.model, s->load_s, device);
    else
        printf("model: %s, plan of %zu bytes for %s, loaded in %.3f s\n", a->m.model,
               s->plan_size, device, s->load_s);
    for (int t = 0; t < (int)a->threads; t++)
        if (run_ctx_bind(&s->ctxs[t], &s->model, &s->in) != CLI_OK)
            return CLI_FAIL;
    print_inputs(&s->model, &s->in, &s->ctxs[0]);
    return CLI_OK;
}

/* The warm-up and timed runs on every context, then their outputs fetched. */
static int timed_runs(const run_args *a, run_state *s, cli_bench_stats *stats)
{
    cli_bench_opts bo = {(int)a->warmup, a->warmup_ms > 0 ? a->warmup_ms : 0.0,
                         (int)a->iterations, (int)a->avg_runs};
    if (a->cuda_graph && capture_graphs(s->ctxs, s->targets, (int)a->threads) != CLI_OK)
        return CLI_FAIL;
    if (cli_bench_run(s->targets, (int)a->threads, &bo, stats) != CLI_OK)
        return CLI_FAIL;
    for (int t = 0; t < (int)a->threads; t++)
        if (run_ctx_fetch(&s->ctxs[t]) != CLI_OK)
            return CLI_FAIL;
    return CLI_OK;
}

/* --json: the document's members up to the layer profile. */
static void json_run(json_writer *jw, const run_args *a, const run_state *s,
                     const cli_bench_stats *stats, int32_t op_threads, int outputs_ok)
{
    json_begin_object(jw, NULL);
    json_string(jw, "model", a->m.model);
    json_string(jw, "device", cli_device_name(prt_engine_device(s->engine)));
    json_int(jw, "contexts", a->threads);
    json_int(jw, "op_threads", op_threads);
    json_int(jw, "warmup", stats->warmups);
    if (a->warmup_ms >= 0) {
        json_double(jw, "warmup_duration_ms", a->warmup_ms);
        json_double(jw, "warmup_took_ms", stats->warmup_ms);
    }
    json_int(jw, "runs", stats->samples);
    json_times(jw, "latency_ms", &stats->wall);
    if (stats->has_device)
        json_times(jw, "device_ms", &stats->device);
    run_json_windows(jw, stats);
    json_double(jw, "throughput_per_s", stats->throughput);
    json_bool(jw, "outputs_ok", outputs_ok);
}

/* The outputs, the timings, the layer profile; with --json the document. */
static int report(const run_args *a, const run_state *s, const cli_bench_stats *stats)
{
    run_output_opts oo = {a->output_dir, a->compare_dir, a->atol, a->rtol, NULL};
    char tol_for[64];
    int32_t op_threads = prt_context_get_threads(s->ctxs[0].ctx);
    json_writer jw;
    int rc;
    /* The engine's precision sets the defaults the user did not give. */
    if (!a->atol_given || !a->rtol_given) {
        double atol, rtol;
        const char *what;
        cli_precision_tolerance(prt_engine_get_precision_flags(s->engine),
                                prt_engine_device(s->engine), &atol, &rtol, &what);
        if (!a->atol_given)
            oo.atol = atol;
        if (!a->rtol_given)
            oo.rtol = rtol;
        snprintf(tol_for, sizeof tol_for, "the %s engine's defaults", what);
        oo.tol_for = tol_for;
    }
    rc = run_outputs_report(s->ctxs, (int)a->threads, &oo);
    if (a->export_output && run_export_output(&s->ctxs[0], a->export_output) != CLI_OK)
        rc = CLI_FAIL;
    print_stats(a, stats, op_threads);
    if (s->json) {
        json_init(&jw, s->json);
        json_run(&jw, a, s, stats, op_threads, rc == CLI_OK);
    }
    if (a->profile_layers &&
        cli_layer_profile_print(s->recs, (int)a->threads, s->engine,
                                stats->wall.median_ms, a->profile_json,
                                s->json ? &jw : NULL) != CLI_OK)
        rc = CLI_FAIL;
    if (s->json) {
        json_end_object(&jw);
        json_finish(&jw);
    }
    return rc;
}

/* The run after its options are parsed: its exit code. */
static int run(run_args *a, run_state *s)
{
    cli_bench_stats stats;
    int rc;
    if (a->json && json_open(&s->json) != CLI_OK)
        return CLI_FAIL;
    s->onnx = cli_is_onnx_path(a->m.model);
    cli_install_logger(a->m.verbose);
    if (s->onnx && a->device >= 0 && check_device_usable(a->device) != CLI_OK)
        return CLI_FAIL;
    if (!(s->reg = cli_registry_create(&a->m.plugins)) ||
        load_inputs(a, &s->in) != CLI_OK)
        return CLI_FAIL;
    if (a->compare_layers)
        return run_compare_layers(a, s->reg, &s->in);
    if ((rc = load_engine(a, s)) != CLI_OK)
        return rc;
    if (create_contexts(a, s) != CLI_OK || bind_inputs(a, s) != CLI_OK ||
        timed_runs(a, s, &stats) != CLI_OK)
        return CLI_FAIL;
    return report(a, s, &stats);
}

/* Closes the --json document's stream (a failed write fails a run that
 * succeeded) and frees everything; returns the exit code. */
static int run_state_free(run_state *s, int nb_ctx, int rc)
{
    if (s->json && (ferror(s->json) | (fclose(s->json) != 0)) && rc == CLI_OK) {
        cli_error("--json: writing the document failed");
        rc = CLI_FAIL;
    }
    for (int t = 0; s->ctxs && t < nb_ctx; t++)
        run_ctx_destroy(&s->ctxs[t]);
    free(s->ctxs);
    free(s->targets);
    for (int t = 0; s->recs && t < nb_ctx; t++)
        cli_layer_recorder_free(&s->recs[t]);
    free(s->recs);
    run_model_free(&s->model);
    prt_engine_destroy(s->engine);
    prt_registry_destroy(s->reg);
    run_inputs_free(&s->in);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_args a;
    run_state s;
    int rc;
    memset(&s, 0, sizeof s);
    rc = parse_args(argc, argv, &a);
    if (rc == CLI_OK)
        rc = run(&a, &s);
    else if (rc < 0)
        rc = CLI_OK; /* --help */
    rc = run_state_free(&s, (int)a.threads, rc);
    free(a.inputs);
    for (int i = 0; i < a.nb_owned; i++)
        free(a.owned[i]);
    free(a.owned);
    cli_model_args_free(&a.m);
    cli_shapes_free(&a.shapes);
    run_range_free(&a.range);
    return rc;
}

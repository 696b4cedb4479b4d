/*
 * plugrt inspect: what a plan holds. Its device (and for a GPU plan the
 * GPU it was built and tuned on), its inputs and outputs (dims, which
 * dims depend on data), each profile's min/opt/max shapes and each size
 * tensor's opt and bound there, its layers in execution order (tactic,
 * workspace, the dtype and format of each tensor), each plugin's key,
 * library, content hash and fields, the plugin libraries the plan carries
 * (name, size, content hash; never loaded here), and the memory plan
 * (arena, each activation's offset and size, workspace). As text, or as
 * JSON with --json.
 *
 * A plan describes itself: when its plugins cannot be made here (their
 * library is not loaded, or the plan's device is missing) it is read
 * without them (prt_engine_deserialize_unresolved) and shown all the same,
 * with the reason. An ONNX model is described by inspect_onnx.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "fields.h"
#include "json.h"
#include "model.h"
#include "options.h"
#include "text.h"

enum { OPT_HELP = 1, OPT_JSON, OPT_PLUGINS, OPT_NO_DEFAULT, OPT_VERBOSE };

static const cli_opt inspect_opts[] = {
    {"--help", "-h", 0, OPT_HELP},
    {"--json", NULL, 0, OPT_JSON},
    {"--plugins", NULL, 1, OPT_PLUGINS},
    {"--no-default-plugins", NULL, 0, OPT_NO_DEFAULT},
    {"--verbose", "-v", 0, OPT_VERBOSE},
    {NULL, NULL, 0, 0},
};

static void inspect_help(void)
{
    printf("Usage: plugrt inspect MODEL.plan|MODEL.onnx [--json] [options]\n"
           "\n"
           "Shows a plan's device (for a GPU plan, the GPU it was built and tuned on:\n"
           "name, compute capability), its inputs and outputs (with data-dependent\n"
           "dims), each profile's min/opt/max shapes and each size tensor's opt and\n"
           "bound, its layers in order (plugin key, library and content hash, fields,\n"
           "tactic, tensor dtypes and formats), the plugin libraries it carries\n"
           "(`plugrt build --embed-plugins`: name, size, content hash; inspect never\n"
           "loads them) and its memory plan (arena, activation offsets and sizes,\n"
           "workspace). A plan whose plugins cannot be loaded here is shown all the\n"
           "same from what it records, with the reason.\n"
           "\n"
           "For an ONNX model: its inputs and outputs (dtypes, shapes), initializers,\n"
           "and a count of its nodes by op type (with the plugin key of nodes that\n"
           "name one); --verbose lists every node.\n"
           "\n"
           "Options:\n"
           "  --json                  machine-readable output (one JSON document)\n"
           "  --plugins LIB.so        load a plugin library the plan needs (repeatable)\n"
           "  --no-default-plugins    do not load the standard plugin library\n"
           "  -v, --verbose           every ONNX node; the library's log\n"
           "  -h, --help              this help\n"
           "\n"
           "Exit status: 0 success, 1 the file cannot be read, 2 usage.\n");
}

/* Totals of the memory plan. */
typedef struct plan_totals {
    int64_t arena;     /* end of the furthest activation */
    int64_t workspace; /* the largest layer workspace */
    int64_t constants; /* bytes of weights */
    int32_t nb_activations, nb_constants;
} plan_totals;

static plan_totals totals(const prt_engine *e)
{
    plan_totals t;
    int32_t nt = prt_engine_tensor_count(e), nl = prt_engine_layer_count(e);
    memset(&t, 0, sizeof t);
    for (int32_t i = 0; i < nt; i++) {
        prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
        if (prt_engine_get_tensor(e, i, &ti) != PRT_OK)
            continue;
        if (ti.kind == PRT_TENSOR_ACTIVATION && ti.offset >= 0) {
            t.nb_activations++;
            if (ti.offset + ti.max_bytes > t.arena)
                t.arena = ti.offset + ti.max_bytes;
        } else if (ti.kind == PRT_TENSOR_CONSTANT) {
            t.nb_constants++;
            t.constants += ti.max_bytes;
        }
    }
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        if (prt_engine_get_layer(e, i, &li) == PRT_OK && li.workspace > t.workspace)
            t.workspace = li.workspace;
    }
    return t;
}

static const char *kind_name(int32_t kind)
{
    switch (kind) {
    case PRT_TENSOR_INPUT:
        return "input";
    case PRT_TENSOR_OUTPUT:
        return "output";
    case PRT_TENSOR_ACTIVATION:
        return "activation";
    case PRT_TENSOR_CONSTANT:
        return "constant";
    default:
        return "unknown";
    }
}

/* The device a plan was built and tuned on (prt_engine_get_build_device). */
static int build_device(const prt_engine *e, prt_device_info *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    return prt_engine_get_build_device(e, out) == PRT_OK;
}

/* How the plan was read: with its plugins made (it could run here), or
 * only described, and why. */
typedef struct plan_view {
    const char *path;
    size_t size;
    const prt_engine *e;
    const prt_registry *reg;
    char why[1024]; /* "" when loaded with its plugins */
} plan_view;

/* What loading did with a carried library. */
static const char *library_source(int32_t source)
{
    switch (source) {
    case PRT_EMBEDDED_LIBRARY_FROM_REGISTRY:
        return "registry";
    case PRT_EMBEDDED_LIBRARY_FROM_ENGINE:
        return "plan";
    default:
        return "not_loaded";
    }
}

/* The plugin libraries the plan carries, as text. */
static void print_libraries(const prt_engine *e)
{
    int32_t n = prt_engine_embedded_library_count(e);
    if (!n)
        return;
    printf("\nEmbedded plugin libraries: %d (never loaded by inspect; `plugrt run "
           "--allow-embedded-plugins` loads them)\n",
           (int)n);
    for (int32_t i = 0; i < n; i++) {
        prt_embedded_library_info li = {.struct_size = sizeof li};
        char e1[CLI_ESC_CAP], b[32];
        if (prt_engine_get_embedded_library(e, i, &li) != PRT_OK) {
            printf("  [%d] (cannot read: %s)\n", (int)i, prt_last_error());
            continue;
        }
        printf("  [%d] %s  %s (%lld bytes), content hash %016llx%s\n", (int)i,
               cli_escape(li.name, e1, sizeof e1), cli_format_bytes(li.size, b, sizeof b),
               (long long)li.size, (unsigned long long)li.hash,
               li.source == PRT_EMBEDDED_LIBRARY_FROM_REGISTRY
                   ? "; a loaded library of the same hash serves it"
                   : "");
    }
}

/* 1 if layer li's plugin can be made here: a built-in, or a key the
 * registry holds. */
/* The kernel layer index of layer `layer`, or -1. */
static int32_t kernel_of(const prt_engine *e, int32_t layer)
{
    for (int32_t k = 0; k < prt_engine_get_nb_kernel_layers(e); k++) {
        prt_kernel_layer_info ki = {.struct_size = sizeof ki};
        if (prt_engine_get_kernel_layer(e, k, &ki) == PRT_OK && ki.layer == layer)
            return k;
    }
    return -1;
}

static const char *code_kind_name(int32_t kind)
{
    return kind == PRT_KERNEL_PTX ? "PTX" : kind == PRT_KERNEL_CUBIN ? "cubin" : "?";
}

/* A kernel layer's code and launches, read from the plan: nothing is
 * loaded. */
static void print_kernel(const prt_engine *e, int32_t k)
{
    prt_kernel_layer_info ki = {.struct_size = sizeof ki};
    char line[2048], b1[32];
    if (prt_engine_get_kernel_layer(e, k, &ki) != PRT_OK)
        return;
    printf("      kernel layer: runs GPU code held in the plan (content hash %016llx); "
           "needs --allow-embedded-kernels to run\n",
           (unsigned long long)ki.hash);
    for (int32_t c = 0; c < ki.nb_code && c < PRT_KERNEL_INFO_MAX_CODE; c++)
        printf("      %s %s for sm_%d, %s\n",
               c ? "     " : "code:", code_kind_name(ki.code_kind[c]),
               (int)ki.code_arch[c], cli_format_bytes(ki.code_size[c], b1, sizeof b1));
    for (int32_t l = 0; l < ki.nb_launches; l++)
        if (prt_engine_describe_kernel_launch(e, k, l, line, sizeof line) == PRT_OK)
            printf("      launch %d: %s\n", (int)l, line);
}

static void json_kernel(json_writer *w, const prt_engine *e, int32_t k)
{
    prt_kernel_layer_info ki = {.struct_size = sizeof ki};
    char line[2048], hash[32];
    if (prt_engine_get_kernel_layer(e, k, &ki) != PRT_OK)
        return;
    json_begin_object(w, "kernel");
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)ki.hash);
    json_string(w, "hash", hash);
    json_begin_array(w, "code");
    for (int32_t c = 0; c < ki.nb_code && c < PRT_KERNEL_INFO_MAX_CODE; c++) {
        json_begin_object(w, NULL);
        json_string(w, "kind", code_kind_name(ki.code_kind[c]));
        json_int(w, "arch", ki.code_arch[c]);
        json_int(w, "bytes", ki.code_size[c]);
        json_end_object(w);
    }
    json_end_array(w);
    json_begin_array(w, "launches");
    for (int32_t l = 0; l < ki.nb_launches; l++)
        if (prt_engine_describe_kernel_launch(e, k, l, line, sizeof line) == PRT_OK)
            json_string(w, NULL, line);
    json_end_array(w);
    json_end_object(w);
}

static int layer_available(const plan_view *v, const prt_layer_info *li)
{
    const prt_plugin_creator *c;
    if (cli_is_builtin(li) || !prt_engine_is_unresolved(v->e))
        return 1;
    return v->reg &&
           prt_registry_find_creator(v->reg, li->plugin_namespace, li->plugin_name,
                                     li->plugin_version, &c) == PRT_OK;
}

/* Per profile: each input's min/opt/max, then each size tensor's opt and
 * bound, through the sink's calls (text or JSON). */
typedef struct profile_sink {
    void (*begin)(void *user, int32_t profile);
    void (*input)(void *user, const char *name, const prt_dims *mn, const prt_dims *opt,
                  const prt_dims *mx);
    void (*size)(void *user, const char *name, int64_t opt, int64_t bound);
    void (*end)(void *user);
    void *user;
} profile_sink;

static int walk_profiles(const prt_engine *e, const profile_sink *k)
{
    int32_t np = prt_engine_profile_count(e), nio = prt_engine_io_count(e),
            nt = prt_engine_tensor_count(e);
    for (int32_t p = 0; p < np; p++) {
        k->begin(k->user, p);
        for (int32_t i = 0; i < nio; i++) {
            prt_io_info io = {.struct_size = sizeof io};
            prt_dims mn, opt, mx;
            prt_status st = prt_engine_get_io(e, i, &io);
            if (!st && !io.is_input)
                continue;
            if (!st)
                st = prt_engine_get_profile_shape(e, p, io.name, &mn, &opt, &mx);
            if (st) {
                cli_error_api(st, "cannot read profile %d", (int)p);
                return CLI_FAIL;
            }
            k->input(k->user, io.name, &mn, &opt, &mx);
        }
        for (int32_t t = 0; t < nt; t++) {
            prt_tensor_info ti = {.struct_size = sizeof ti};
            int64_t opt = 0, bound = 0;
            prt_status st;
            if (prt_engine_get_tensor(e, t, &ti) != PRT_OK || ti.size_id < 0)
                continue;
            st = prt_engine_get_size_tensor_bounds(e, p, t, &opt, &bound);
            if (st) {
                cli_error_api(st, "cannot read the bounds of size tensor %s", ti.name);
                return CLI_FAIL;
            }
            k->size(k->user, ti.name, opt, bound);
        }
        k->end(k->user);
    }
    return CLI_OK;
}

/* ---- text ---------------------------------------------------------------- */

static void text_profile_begin(void *user, int32_t profile)
{
    (void)user;
    printf("  profile %d:\n", (int)profile);
}

static void text_profile_input(void *user, const char *name, const prt_dims *mn,
                               const prt_dims *opt, const prt_dims *mx)
{
    char a[128], b[128], c[128], en[CLI_ESC_CAP];
    (void)user;
    printf("    input %s  min %s  opt %s  max %s\n", cli_escape(name, en, sizeof en),
           cli_format_dims(mn, a, sizeof a), cli_format_dims(opt, b, sizeof b),
           cli_format_dims(mx, c, sizeof c));
}

static void text_profile_size(void *user, const char *name, int64_t opt, int64_t bound)
{
    char en[CLI_ESC_CAP];
    (void)user;
    printf("    size tensor %s  opt %lld  bound %lld\n", cli_escape(name, en, sizeof en),
           (long long)opt, (long long)bound);
}

static void text_profile_end(void *user)
{
    (void)user;
}

/* ", scale 0.05 zero point -3" (per tensor) or ", 64 scales along dim 0"
 * (per channel): what the tensor's integers stand for. */
static void print_quant(const prt_engine *e, int32_t index)
{
    prt_quant_desc q = {.struct_size = sizeof(prt_quant_desc)};
    if (prt_engine_get_tensor_quant(e, index, &q) != PRT_OK || q.kind == PRT_QUANT_NONE)
        return;
    if (q.kind == PRT_QUANT_PER_TENSOR)
        printf(", scale %g zero point %d", (double)q.scale, (int)q.zero_point);
    else
        printf(", %lld scales along dim %d", (long long)q.count, (int)q.axis);
}

static void print_tensor_ref(const prt_engine *e, int32_t index, const char *prefix)
{
    prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
    char d[128], m[64], b[32], en[CLI_ESC_CAP];
    if (prt_engine_get_tensor(e, index, &ti) != PRT_OK) {
        printf("%s#%d (unknown tensor)\n", prefix, (int)index);
        return;
    }
    printf("%s%s  %s %s %s  %s", prefix, cli_escape(ti.name, en, sizeof en),
           prt_dtype_name(ti.dtype), cli_format_name(ti.format),
           cli_format_dims(&ti.dims, d, sizeof d), kind_name(ti.kind));
    if (ti.kind == PRT_TENSOR_ACTIVATION && ti.offset >= 0)
        printf(" @%lld, %s", (long long)ti.offset,
               cli_format_bytes(ti.max_bytes, b, sizeof b));
    if (ti.data_dependent_mask)
        printf(", data-dependent %s", cli_mask_str(ti.data_dependent_mask, m, sizeof m));
    if (ti.size_id >= 0)
        printf(", size tensor");
    print_quant(e, index);
    putchar('\n');
}

static int print_text(const plan_view *v)
{
    const prt_engine *e = v->e;
    int32_t nl = prt_engine_layer_count(e), nt = prt_engine_tensor_count(e);
    plan_totals t = totals(e);
    profile_sink sink = {text_profile_begin, text_profile_input, text_profile_size,
                         text_profile_end, NULL};
    char b1[32], b2[32], b3[32], b4[32];
    printf("plan: %s (%zu bytes), device %s, %d profile(s), %d layers (%d plugin)\n",
           v->path, v->size, cli_device_name(prt_engine_device(e)),
           (int)prt_engine_profile_count(e), (int)nl, (int)cli_plugin_layer_count(e));
    if (v->why[0])
        printf("plugins: not loaded (%s); shown as the plan records them\n", v->why);
    if (prt_engine_get_precision_flags(e)) {
        uint32_t f = prt_engine_get_precision_flags(e);
        printf("precision flags:%s%s%s (each tensor's dtype below)\n",
               f & PRT_PRECISION_FP16 ? " fp16" : "",
               f & PRT_PRECISION_BF16 ? " bf16" : "",
               f & PRT_PRECISION_TF32 ? " tf32" : "");
    }
    if (prt_engine_device(e) != PRT_DEVICE_CPU) {
        prt_device_info di;
        char en[CLI_ESC_CAP];
        if (!build_device(e, &di))
            printf("built on: unknown (%s)\n", prt_last_error());
        else if (!di.name[0])
            printf("built on: unknown (the plan does not say)\n");
        else
            printf("built on: %s, compute capability %d.%d, %d multiprocessors, %s\n",
                   cli_escape(di.name, en, sizeof en), (int)di.cc_major, (int)di.cc_minor,
                   (int)di.multiprocessors,
                   cli_format_bytes(di.memory_bytes, b1, sizeof b1));
    }
    print_libraries(e);
    printf("\nI/O:\n");
    if (cli_print_io(stdout, e, "  ") != CLI_OK)
        return CLI_FAIL;
    printf("\nProfiles:\n");
    if (walk_profiles(e, &sink) != CLI_OK)
        return CLI_FAIL;
    printf("\nLayers:\n");
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        char key[256], e1[CLI_ESC_CAP], e2[CLI_ESC_CAP];
        if (prt_engine_get_layer(e, i, &li) != PRT_OK) {
            printf("  [%d] (cannot read: %s)\n", (int)i, prt_last_error());
            continue;
        }
        printf("  [%d] %s  %s%s  tactic %d%s%s%s, workspace %s\n", (int)i,
               cli_escape(li.name, e1, sizeof e1),
               cli_escape(cli_plugin_key(li.plugin_namespace, li.plugin_name,
                                         li.plugin_version, key, sizeof key),
                          e2, sizeof e2),
               cli_is_builtin(&li) ? " (built-in)" : "", (int)li.tactic,
               li.tactic_name[0] ? " (" : "", li.tactic_name,
               li.tactic_name[0] ? ")" : "",
               cli_format_bytes(li.workspace, b1, sizeof b1));
        if (li.skipped)
            printf("      not run: nothing reads its outputs (their values were "
                   "folded into shapes)\n");
        if (li.device != prt_engine_device(e))
            printf("      runs on the CPU (CPU fallback): copies %s from the device "
                   "before it, %s back after it (at the largest shapes)\n",
                   cli_format_bytes(li.copy_to_host_bytes, b1, sizeof b1),
                   cli_format_bytes(li.copy_to_device_bytes, b2, sizeof b2));
        if (!li.capture_safe)
            printf("      not capturable into a graph: its plugin says so "
                   "(capture_safe); --cuda-graph refuses this engine\n");
        if (!cli_is_builtin(&li))
            printf("      library: %s (content hash %016llx)%s\n",
                   *li.library ? cli_escape(li.library, e1, sizeof e1)
                               : "(registered directly)",
                   (unsigned long long)li.library_hash,
                   li.kernel                 ? ", not needed to run"
                   : layer_available(v, &li) ? ""
                                             : ", not loaded");
        if (li.kernel)
            print_kernel(e, kernel_of(e, i));
        for (int32_t k = 0; k < li.nb_fields; k++) {
            const prt_field *fd = &li.fields[k];
            printf("      %s %s %s[%lld] = ", k ? "       " : "fields:",
                   fd->name ? cli_escape(fd->name, e1, sizeof e1) : "?",
                   cli_field_type_name(fd->type), (long long)fd->length);
            cli_field_print(stdout, fd, 16);
            putchar('\n');
        }
        for (int32_t k = 0; k < li.nb_inputs; k++)
            print_tensor_ref(e, li.inputs[k], k ? "           " : "      in:  ");
        for (int32_t k = 0; k < li.nb_outputs; k++) {
            print_tensor_ref(e, li.outputs[k], k ? "           " : "      out: ");
            if (li.alias_input && li.alias_input[k] >= 0)
                printf("           (in place: shares the memory of input %d)\n",
                       (int)li.alias_input[k]);
        }
    }
    printf("\nMemory plan:\n");
    printf("  per context: %s = arena %s + workspace %s (largest layer's)\n",
           cli_format_bytes(prt_engine_context_memory_size(e), b1, sizeof b1),
           cli_format_bytes(t.arena, b2, sizeof b2),
           cli_format_bytes(t.workspace, b3, sizeof b3));
    printf("  constants: %d, %s in the plan\n", (int)t.nb_constants,
           cli_format_bytes(t.constants, b4, sizeof b4));
    if (t.nb_activations) {
        char e1[CLI_ESC_CAP];
        printf("  activations (offset in the arena, bytes at the largest shapes):\n");
        for (int32_t i = 0; i < nt; i++) {
            prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
            if (prt_engine_get_tensor(e, i, &ti) != PRT_OK ||
                ti.kind != PRT_TENSOR_ACTIVATION || ti.offset < 0)
                continue;
            printf("    %12lld %12lld  %s\n", (long long)ti.offset,
                   (long long)ti.max_bytes, cli_escape(ti.name, e1, sizeof e1));
        }
    }
    return CLI_OK;
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_mask(json_writer *w, const char *key, uint32_t mask)
{
    json_begin_array(w, key);
    for (int i = 0; i < 32; i++)
        if (mask & (1u << i))
            json_int(w, NULL, i);
    json_end_array(w);
}

static void json_tensor_names(json_writer *w, const char *key, const prt_engine *e,
                              const int32_t *idx, int32_t n)
{
    json_begin_array(w, key);
    for (int32_t k = 0; k < n; k++) {
        prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
        if (prt_engine_get_tensor(e, idx[k], &ti) == PRT_OK)
            json_string(w, NULL, ti.name);
        else
            json_null(w, NULL);
    }
    json_end_array(w);
}

/* The JSON sink's state: the inputs come first (walk_profiles' order), and
 * the first size tensor closes their array. */
typedef struct json_profiles {
    json_writer *w;
    int sizes_open;
} json_profiles;

static void json_profile_begin(void *user, int32_t profile)
{
    json_writer *w = ((json_profiles *)user)->w;
    json_begin_object(w, NULL);
    json_int(w, "profile", profile);
    json_begin_array(w, "inputs");
}

static void json_profile_input(void *user, const char *name, const prt_dims *mn,
                               const prt_dims *opt, const prt_dims *mx)
{
    json_writer *w = ((json_profiles *)user)->w;
    json_begin_object(w, NULL);
    json_string(w, "name", name);
    cli_json_dims(w, "min", mn);
    cli_json_dims(w, "opt", opt);
    cli_json_dims(w, "max", mx);
    json_end_object(w);
}

static void json_profile_size(void *user, const char *name, int64_t opt, int64_t bound)
{
    json_profiles *j = user;
    json_writer *w = j->w;
    if (!j->sizes_open) {
        json_end_array(w);
        json_begin_array(w, "size_tensors");
        j->sizes_open = 1;
    }
    json_begin_object(w, NULL);
    json_string(w, "name", name);
    json_int(w, "opt", opt);
    json_int(w, "bound", bound);
    json_end_object(w);
}

static void json_profile_end(void *user)
{
    json_profiles *j = user;
    json_writer *w = j->w;
    if (!j->sizes_open) {
        json_end_array(w);
        json_begin_array(w, "size_tensors");
    }
    j->sizes_open = 0;
    json_end_array(w);
    json_end_object(w);
}

static int print_json(const plan_view *v)
{
    const prt_engine *e = v->e;
    int32_t nl = prt_engine_layer_count(e), nt = prt_engine_tensor_count(e), nio;
    plan_totals t = totals(e);
    prt_io_info *ios;
    json_writer w;
    json_profiles jp = {&w, 0};
    profile_sink sink = {json_profile_begin, json_profile_input, json_profile_size,
                         json_profile_end, &jp};
    char hash[24];
    if (cli_engine_io(e, &ios, &nio) != CLI_OK)
        return CLI_FAIL;
    json_init(&w, stdout);
    json_begin_object(&w, NULL);
    json_string(&w, "plan", v->path);
    json_int(&w, "size_bytes", (int64_t)v->size);
    json_bool(&w, "plugins_loaded", !v->why[0]);
    if (v->why[0])
        json_string(&w, "load_error", v->why);
    else
        json_null(&w, "load_error");
    json_string(&w, "plugrt_version", prt_version_string());
    json_string(&w, "device", cli_device_name(prt_engine_device(e)));
    {
        prt_device_info di;
        json_begin_object(&w, "build_device");
        if (build_device(e, &di) && di.name[0]) {
            json_string(&w, "name", di.name);
            json_int(&w, "cc_major", di.cc_major);
            json_int(&w, "cc_minor", di.cc_minor);
            json_int(&w, "multiprocessors", di.multiprocessors);
            json_int(&w, "memory_bytes", di.memory_bytes);
        } else {
            json_null(&w, "name"); /* the plan does not say */
        }
        json_end_object(&w);
    }
    json_int(&w, "profiles", prt_engine_profile_count(e));
    json_begin_array(&w, "embedded_libraries");
    for (int32_t i = 0; i < prt_engine_embedded_library_count(e); i++) {
        prt_embedded_library_info li = {.struct_size = sizeof li};
        if (prt_engine_get_embedded_library(e, i, &li) != PRT_OK)
            continue;
        json_begin_object(&w, NULL);
        json_string(&w, "name", li.name);
        json_int(&w, "size_bytes", li.size);
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)li.hash);
        json_string(&w, "hash", hash);
        json_string(&w, "source", library_source(li.source));
        json_end_object(&w);
    }
    json_end_array(&w);
    json_begin_array(&w, "io");
    for (int32_t i = 0; i < nio; i++) {
        const prt_io_info *io = &ios[i];
        json_begin_object(&w, NULL);
        json_string(&w, "name", io->name);
        json_bool(&w, "is_input", io->is_input);
        json_string(&w, "dtype", prt_dtype_name(io->dtype));
        json_string(&w, "format", cli_format_name(io->format));
        cli_json_dims(&w, "dims", &io->dims);
        json_mask(&w, "data_dependent_dims", io->data_dependent_mask);
        json_bool(&w, "is_size_tensor", io->is_size_tensor);
        json_end_object(&w);
    }
    free(ios);
    json_end_array(&w);
    json_begin_array(&w, "profile_shapes");
    if (walk_profiles(e, &sink) != CLI_OK)
        return CLI_FAIL;
    json_end_array(&w);
    json_begin_array(&w, "layers");
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        char key[256];
        if (prt_engine_get_layer(e, i, &li) != PRT_OK)
            continue;
        json_begin_object(&w, NULL);
        json_int(&w, "index", i);
        json_string(&w, "name", li.name);
        json_string(&w, "key",
                    cli_plugin_key(li.plugin_namespace, li.plugin_name, li.plugin_version,
                                   key, sizeof key));
        json_string(&w, "namespace", li.plugin_namespace);
        json_string(&w, "plugin", li.plugin_name);
        json_string(&w, "version", li.plugin_version);
        json_bool(&w, "builtin", cli_is_builtin(&li));
        json_bool(&w, "loaded", layer_available(v, &li));
        json_string(&w, "library", li.library);
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)li.library_hash);
        json_string(&w, "library_hash", hash);
        json_int(&w, "tactic", li.tactic);
        json_string(&w, "tactic_name", li.tactic_name);
        json_int(&w, "workspace", li.workspace);
        json_bool(&w, "skipped", li.skipped);
        json_bool(&w, "capture_safe", li.capture_safe);
        json_string(&w, "device", cli_device_name(li.device));
        json_int(&w, "copy_to_host_bytes", li.copy_to_host_bytes);
        json_int(&w, "copy_to_device_bytes", li.copy_to_device_bytes);
        if (li.kernel)
            json_kernel(&w, e, kernel_of(e, i));
        json_tensor_names(&w, "inputs", e, li.inputs, li.nb_inputs);
        json_tensor_names(&w, "outputs", e, li.outputs, li.nb_outputs);
        json_begin_array(&w, "aliased_inputs");
        for (int32_t k = 0; k < li.nb_outputs; k++)
            json_int(&w, NULL, li.alias_input ? li.alias_input[k] : -1);
        json_end_array(&w);
        json_begin_array(&w, "fields");
        for (int32_t k = 0; k < li.nb_fields; k++)
            cli_field_json(&w, &li.fields[k]);
        json_end_array(&w);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_begin_array(&w, "tensors");
    for (int32_t i = 0; i < nt; i++) {
        prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
        if (prt_engine_get_tensor(e, i, &ti) != PRT_OK)
            continue;
        json_begin_object(&w, NULL);
        json_int(&w, "index", i);
        json_string(&w, "name", ti.name);
        json_string(&w, "kind", kind_name(ti.kind));
        json_string(&w, "dtype", prt_dtype_name(ti.dtype));
        json_string(&w, "format", cli_format_name(ti.format));
        cli_json_dims(&w, "dims", &ti.dims);
        json_mask(&w, "data_dependent_dims", ti.data_dependent_mask);
        json_bool(&w, "is_size_tensor", ti.size_id >= 0);
        json_int(&w, "producer", ti.producer);
        json_int(&w, "offset", ti.offset);
        json_int(&w, "max_bytes", ti.max_bytes);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_begin_object(&w, "memory");
    json_int(&w, "device_memory_bytes", prt_engine_context_memory_size(e));
    json_int(&w, "arena_bytes", t.arena);
    json_int(&w, "workspace_bytes", t.workspace);
    json_int(&w, "constant_bytes", t.constants);
    json_begin_array(&w, "activations");
    for (int32_t i = 0; i < nt; i++) {
        prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
        if (prt_engine_get_tensor(e, i, &ti) != PRT_OK ||
            ti.kind != PRT_TENSOR_ACTIVATION || ti.offset < 0)
            continue;
        json_begin_object(&w, NULL);
        json_string(&w, "name", ti.name);
        json_int(&w, "offset", ti.offset);
        json_int(&w, "bytes", ti.max_bytes);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    json_end_object(&w);
    json_finish(&w);
    return CLI_OK;
}

/* Reads the plan into v: with its plugins when they can be made here,
 * else described from what it records (v->why says what stopped the full
 * load). Bytes that are not a valid plan fail as `plugrt run` fails. */
static int load_plan(plan_view *v, prt_engine **out)
{
    void *bytes = NULL;
    size_t size = 0;
    prt_status st, st2;
    if (cli_read_file(v->path, &bytes, &size) != CLI_OK)
        return CLI_FAIL;
    v->size = size;
    st = prt_engine_deserialize(v->reg, bytes, size, out);
    /* A missing plugin or library, a plugin that fails to be made, a
     * device this machine lacks: the plan is fine, only not runnable here. */
    if (st == PRT_ERR_NOT_FOUND || st == PRT_ERR_PLUGIN || st == PRT_ERR_UNSUPPORTED) {
        snprintf(v->why, sizeof v->why, "%s", prt_last_error());
        st2 = prt_engine_deserialize_unresolved(bytes, size, out);
        if (st2 == PRT_OK && strstr(v->why, "allow_embedded")) {
            cli_note("the plan carries plugin libraries, which inspect never loads");
        } else if (st2 == PRT_OK) {
            cli_note("the plan's plugins cannot be made here: %s", v->why);
            cli_note("showing what the plan records; to run it, load the library that "
                     "defines them with --plugins LIB.so");
        } else {
            v->why[0] = '\0';
        }
    }
    free(bytes);
    if (*out)
        return CLI_OK;
    cli_error_api(st, "cannot load the plan %s", v->path);
    if (st == PRT_ERR_MALFORMED || st == PRT_ERR_VERSION)
        fprintf(stderr, "  is it a plan written by `plugrt build` of this version? "
                        "rebuild it from the model\n");
    return CLI_FAIL;
}

int cmd_inspect(int argc, char **argv)
{
    cli_plugin_opts plugins;
    cli_scanner s;
    const char *v, *model = NULL;
    prt_registry *reg = NULL;
    prt_engine *engine = NULL;
    plan_view view;
    int id, json = 0, verbose = 0, rc = CLI_OK;
    memset(&plugins, 0, sizeof plugins);
    cli_scan_init(&s, argc, argv, inspect_opts);
    while (rc == CLI_OK && (id = cli_scan_next(&s, &v)) != CLI_SCAN_END) {
        switch (id) {
        case CLI_SCAN_ERROR:
            rc = CLI_USAGE;
            break;
        case CLI_SCAN_POSITIONAL:
            if (model)
                rc = cli_usage("one file at a time ('%s' and '%s' given)", model, v);
            model = v;
            break;
        case OPT_HELP:
            inspect_help();
            cli_plugin_opts_free(&plugins);
            return CLI_OK;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_PLUGINS:
            rc = cli_plugin_opts_add(&plugins, v);
            break;
        case OPT_NO_DEFAULT:
            plugins.no_default = 1;
            break;
        case OPT_VERBOSE:
            verbose = 1;
            break;
        default:
            rc = cli_usage("internal: unhandled option");
            break;
        }
    }
    if (rc == CLI_OK && !model)
        rc = cli_usage("missing the plan or model to inspect (plugrt inspect "
                       "MODEL.plan|MODEL.onnx)");
    if (rc != CLI_OK)
        goto done;
    cli_install_logger(verbose);
    rc = CLI_FAIL;
    if (!(reg = cli_registry_create(&plugins)))
        goto done;
    if (cli_is_onnx_path(model)) {
        rc = cli_inspect_onnx(model, reg, json, verbose);
    } else {
        memset(&view, 0, sizeof view);
        view.path = model;
        view.reg = reg;
        if (load_plan(&view, &engine) != CLI_OK)
            goto done;
        view.e = engine;
        rc = json ? print_json(&view) : print_text(&view);
    }
    if (fflush(stdout) != 0)
        rc = CLI_FAIL;
done:
    prt_engine_destroy(engine);
    prt_registry_destroy(reg);
    cli_plugin_opts_free(&plugins);
    return rc;
}

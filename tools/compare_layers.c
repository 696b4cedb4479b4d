/* plugrt run --compare-layers: the device under test beside a reference,
 * layer by layer (compare_layers.h says how). */
#include "compare_layers.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "describe.h"
#include "npy.h"
#include "numeric.h"
#include "ort_reference_py.h" /* cli_ort_script: tools/ort_reference.py (CMake) */
#include "text.h"

extern char **environ;

/* Default rtol of float tensors, scaled by the reference tensor's largest
 * magnitude. float32: ~100x the worst plugrt's CPU shows against ONNX
 * Runtime in any layer of MobileNet-v3 (1.2e-6 of max|ref|); the 16-bit
 * floats: about 10 units in the last place of the largest element (half
 * 2^-10, bfloat16 2^-7). */
#define CL_RTOL_FLOAT32 1e-4
#define CL_RTOL_FLOAT16 1e-2
#define CL_RTOL_BFLOAT16 5e-2

/* Every byte of the device under test's output buffers before the run: NaN
 * in float32, float16 and bfloat16, -1 in the signed integers, so an element
 * a layer leaves unwritten differs from the reference. */
#define CL_POISON 0xFF

/* Exit codes of tools/ort_reference.py. */
enum { ORT_NO_ORT = 3, ORT_NO_ONNX = 4, ORT_FAILED = 5 };

#define ORT_HINT                                                                         \
    "--reference onnxruntime needs python3 with onnxruntime: pip install onnxruntime "   \
    "(and onnx); PLUGRT_PYTHON names another python"

int cli_parse_reference(const char *opt, const char *s, int32_t *out)
{
    if (strcmp(s, "cpu") == 0)
        *out = CLI_REFERENCE_CPU;
    else if (strcmp(s, "onnxruntime") == 0)
        *out = CLI_REFERENCE_ONNXRUNTIME;
    else
        return cli_usage("%s: '%s' is not a reference (cpu or onnxruntime)", opt, s);
    return CLI_OK;
}

/* ---- one engine run ------------------------------------------------------- */

typedef struct cl_side {
    prt_engine *engine;
    run_model model;
    run_ctx ctx;
} cl_side;

static void side_free(cl_side *s)
{
    if (s->ctx.ctx)
        run_ctx_destroy(&s->ctx);
    run_model_free(&s->model);
    prt_engine_destroy(s->engine);
    memset(s, 0, sizeof *s);
}

/* Runs s->engine once on the inputs; every output buffer filled with the
 * byte `fill` first. bind: the first engine binds the inputs (random data
 * made there, files checked), later ones reuse them. */
static int side_run(cl_side *s, const cli_layers_opts *o, int bind, int fill,
                    const char *what)
{
    prt_status st;
    if (run_model_init(&s->model, s->engine) != CLI_OK ||
        run_ctx_create(&s->ctx, s->engine, 0, o->memory_limit, 0) != CLI_OK)
        return CLI_FAIL;
    if (bind && run_inputs_bind(o->inputs, &s->model, s->ctx.ctx, o->shapes,
                                o->random_inputs, o->seed) != CLI_OK)
        return CLI_FAIL;
    if (run_ctx_bind(&s->ctx, &s->model, o->inputs) != CLI_OK)
        return CLI_FAIL;
    for (int i = 0; i < s->ctx.nb_slots; i++) {
        run_slot *sl = &s->ctx.slots[i];
        if ((st = prt_device_memset(s->ctx.device, sl->dev, fill, (size_t)sl->bytes,
                                    s->ctx.stream))) {
            cli_error_api(st, "filling the output buffers of %s", what);
            return CLI_FAIL;
        }
    }
    if ((st = prt_context_enqueue(s->ctx.ctx, s->ctx.stream))) {
        cli_error_api(st, "running %s", what);
        return CLI_FAIL;
    }
    return run_ctx_fetch(&s->ctx);
}

/* The slot of output `name`, or NULL. */
static const run_slot *side_slot(const cl_side *s, const char *name)
{
    for (int i = 0; i < s->ctx.nb_slots; i++)
        if (strcmp(s->ctx.slots[i].name, name) == 0)
            return &s->ctx.slots[i];
    return NULL;
}

/* Marks every layer output a network output. */
static int expose_all(prt_network *net)
{
    for (int32_t l = 0; l < prt_network_layer_count(net); l++)
        for (int32_t k = 0; k < prt_network_layer_output_count(net, l); k++) {
            int32_t t;
            prt_status st = prt_network_get_layer_output(net, l, k, &t);
            if (!st)
                st = prt_network_mark_output(net, t);
            if (st) {
                cli_error_api(st, "cannot expose output %d of layer %d", (int)k, (int)l);
                return CLI_FAIL;
            }
        }
    return CLI_OK;
}

/* ---- the reference's tensors ---------------------------------------------- */

typedef struct cl_tensor {
    const char *name;
    int32_t dtype;
    prt_dims dims;
    const void *data;
} cl_tensor;

typedef struct cl_ref {
    cl_tensor *items;
    int count;
    /* ONNX Runtime's: the arrays and names the items point into. */
    npy_array *arrays;
    char **names;
    char version[64];
} cl_ref;

static void ref_free(cl_ref *r)
{
    for (int i = 0; r->arrays && i < r->count; i++)
        npy_array_free(&r->arrays[i]);
    for (int i = 0; r->names && i < r->count; i++)
        free(r->names[i]);
    free(r->arrays);
    free(r->names);
    free(r->items);
    memset(r, 0, sizeof *r);
}

static const cl_tensor *ref_find(const cl_ref *r, const char *name)
{
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->items[i].name, name) == 0)
            return &r->items[i];
    return NULL;
}

/* The outputs of a plugrt run, borrowed from it. */
static int ref_from_side(cl_ref *r, const cl_side *s)
{
    r->items = calloc((size_t)(s->ctx.nb_slots + 1), sizeof *r->items);
    if (!r->items) {
        cli_error("out of memory for the reference's list of tensors");
        return CLI_FAIL;
    }
    for (int i = 0; i < s->ctx.nb_slots; i++) {
        const run_slot *sl = &s->ctx.slots[i];
        r->items[i] = (cl_tensor){sl->name, sl->dtype, sl->dims, sl->host};
    }
    r->count = s->ctx.nb_slots;
    return CLI_OK;
}

/* ---- ONNX Runtime (tools/ort_reference.py) --------------------------------- */

/* The names in the lists exchanged with the script are hex, so that any
 * bytes survive a line-based file. Returns a malloc'd string or NULL. */
static char *hex_encode(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(2 * n + 1);
    for (size_t i = 0; out && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", (unsigned char)s[i]);
    if (out)
        out[2 * n] = '\0';
    return out;
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* n hex digits to a malloc'd string; NULL if they are not hex or hold a NUL
 * byte. */
static char *hex_decode(const char *h, size_t n)
{
    char *out = n % 2 ? NULL : malloc(n / 2 + 1);
    for (size_t i = 0; out && i < n / 2; i++) {
        int a = hex_value(h[2 * i]), b = hex_value(h[2 * i + 1]);
        if (a < 0 || b < 0 || (a == 0 && b == 0)) {
            free(out);
            return NULL;
        }
        out[i] = (char)(a * 16 + b);
    }
    if (out)
        out[n / 2] = '\0';
    return out;
}

/* Removes the files of our temporary folder, then the folder. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    if (rmdir(dir) != 0)
        cli_warn("cannot remove the temporary folder %s: %s", dir, strerror(errno));
}

/* DIR/inputs.txt and DIR/iN.npy: the device under test's inputs. */
static int ort_write_inputs(const char *dir, const cli_layers_opts *o, const cl_side *dut)
{
    char path[4096], err[1024], en[CLI_ESC_CAP];
    FILE *f;
    int rc = CLI_OK;
    snprintf(path, sizeof path, "%s/inputs.txt", dir);
    if (!(f = fopen(path, "w"))) {
        cli_error("cannot write %s: %s", path, strerror(errno));
        return CLI_FAIL;
    }
    for (int32_t i = 0; rc == CLI_OK && i < dut->model.nb_inputs; i++) {
        const prt_io_info *io = &dut->model.io[i];
        const run_input *in = run_inputs_match(o->inputs, io->name);
        char *hex = hex_encode(io->name);
        snprintf(path, sizeof path, "%s/i%d.npy", dir, (int)i);
        if (!hex || !in) {
            cli_error("%s for input %s", hex ? "internal: no data" : "out of memory",
                      cli_escape(io->name, en, sizeof en));
            rc = CLI_FAIL;
        } else if (npy_write(path, in->arr.dtype, &in->arr.dims, in->arr.data, err,
                             sizeof err) != 0) {
            cli_error("input %s for onnxruntime: %s", cli_escape(io->name, en, sizeof en),
                      err);
            rc = CLI_FAIL;
        } else {
            fprintf(f, "i%d.npy %s\n", (int)i, hex);
        }
        free(hex);
    }
    if (fclose(f) != 0 && rc == CLI_OK) {
        cli_error("cannot write %s/inputs.txt: %s", dir, strerror(errno));
        rc = CLI_FAIL;
    }
    return rc;
}

/* Runs `python ort_reference.py MODEL DIR`; CLI_OK when it exits 0. The
 * script says what failed on stderr; we add what to do. */
static int ort_spawn(const char *dir, const char *model)
{
    const char *py = getenv("PLUGRT_PYTHON");
    char script[4096];
    char *argv[5];
    pid_t pid;
    int status, err;
    if (!py || !*py)
        py = "python3";
    snprintf(script, sizeof script, "%s/ort_reference.py", dir);
    argv[0] = (char *)py;
    argv[1] = script;
    argv[2] = (char *)model;
    argv[3] = (char *)dir;
    argv[4] = NULL;
    cli_progress("running the model on onnxruntime");
    err = posix_spawnp(&pid, py, NULL, NULL, argv, environ);
    while (!err && waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            err = errno;
            break;
        }
    cli_progress_clear();
    if (err || (WIFEXITED(status) && WEXITSTATUS(status) == 127)) {
        cli_error("--reference onnxruntime: cannot run %s%s%s", py, err ? ": " : "",
                  err ? strerror(err) : "");
        fprintf(stderr, "  %s\n", ORT_HINT);
        return CLI_FAIL;
    }
    if (!WIFEXITED(status)) {
        cli_error("--reference onnxruntime: %s died (signal %d) running the model", py,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return CLI_FAIL;
    }
    switch (WEXITSTATUS(status)) {
    case 0:
        return CLI_OK;
    case ORT_NO_ORT:
    case ORT_NO_ONNX:
        cli_error("--reference onnxruntime: %s cannot import %s", py,
                  WEXITSTATUS(status) == ORT_NO_ORT ? "onnxruntime" : "onnx or numpy");
        fprintf(stderr, "  %s\n", ORT_HINT);
        return CLI_FAIL;
    case ORT_FAILED:
        cli_error("--reference onnxruntime: onnxruntime cannot run %s (its message is "
                  "above)",
                  model);
        fprintf(stderr,
                "  onnxruntime runs the model's own nodes: a node only a plugin "
                "implements cannot run there;\n  compare with --reference cpu instead\n");
        return CLI_FAIL;
    default:
        cli_error("--reference onnxruntime: %s exited with status %d", py,
                  WEXITSTATUS(status));
        return CLI_FAIL;
    }
}

/* One line of DIR/outputs.txt: "oN.npy HEXNAME" (file names are only
 * ours: [a-z0-9.]) or "# onnxruntime VERSION". */
static int ort_read_line(cl_ref *r, const char *dir, const char *line, size_t n)
{
    const char *sp = memchr(line, ' ', n);
    char file[64], path[4096], err[1024];
    size_t fl = sp ? (size_t)(sp - line) : 0;
    int i = r->count;
    if (n > 14 && strncmp(line, "# onnxruntime ", 14) == 0) {
        snprintf(r->version, sizeof r->version, "%.*s", (int)(n - 14), line + 14);
        return CLI_OK;
    }
    if (!sp || fl == 0 || fl >= sizeof file ||
        strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789.") != fl) {
        cli_error("--reference onnxruntime: a malformed line in %s/outputs.txt", dir);
        return CLI_FAIL;
    }
    memcpy(file, line, fl);
    file[fl] = '\0';
    r->names[i] = hex_decode(sp + 1, n - fl - 1);
    if (!r->names[i]) {
        cli_error("--reference onnxruntime: a malformed name in %s/outputs.txt", dir);
        return CLI_FAIL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (npy_read(path, &r->arrays[i], err, sizeof err) != 0) {
        char en[CLI_ESC_CAP];
        /* A dtype numpy writes and plugrt does not read (float64, strings):
         * no plugrt tensor can match it anyway. */
        cli_note("onnxruntime's %s is not compared: %s",
                 cli_escape(r->names[i], en, sizeof en), err);
        free(r->names[i]);
        r->names[i] = NULL;
        return CLI_OK;
    }
    r->items[i] = (cl_tensor){r->names[i], r->arrays[i].dtype, r->arrays[i].dims,
                              r->arrays[i].data};
    r->count++;
    return CLI_OK;
}

static int ort_read_outputs(cl_ref *r, const char *dir)
{
    char path[4096];
    void *bytes = NULL;
    size_t size = 0, lines = 0;
    int rc = CLI_OK;
    snprintf(path, sizeof path, "%s/outputs.txt", dir);
    if (cli_read_file(path, &bytes, &size) != CLI_OK)
        return CLI_FAIL;
    for (size_t i = 0; i < size; i++)
        lines += ((char *)bytes)[i] == '\n';
    r->items = calloc(lines + 1, sizeof *r->items);
    r->arrays = calloc(lines + 1, sizeof *r->arrays);
    r->names = calloc(lines + 1, sizeof *r->names);
    if (!r->items || !r->arrays || !r->names) {
        cli_error("out of memory for onnxruntime's %zu tensors", lines);
        free(bytes);
        return CLI_FAIL;
    }
    for (size_t at = 0; rc == CLI_OK && at < size;) {
        const char *line = (const char *)bytes + at;
        const char *nl = memchr(line, '\n', size - at);
        size_t n = nl ? (size_t)(nl - line) : size - at;
        if (n)
            rc = ort_read_line(r, dir, line, n);
        at += n + 1;
    }
    free(bytes);
    return rc;
}

/* Every node output of the model as ONNX Runtime computes it on the inputs
 * of the device under test. */
static int ref_from_onnxruntime(cl_ref *r, const cli_layers_opts *o, const cl_side *dut)
{
    const char *tmp = getenv("TMPDIR");
    /* Short, so that every path inside fits the 4096 bytes of the others. */
    char dir[512], path[4096];
    int rc;
    if (snprintf(dir, sizeof dir, "%s/plugrt-compare-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp") >= (int)sizeof dir) {
        cli_error("TMPDIR is too long for a temporary folder (%zu bytes at most)",
                  sizeof dir - 24);
        return CLI_FAIL;
    }
    if (!mkdtemp(dir)) {
        cli_error("cannot make a temporary folder %s: %s", dir, strerror(errno));
        return CLI_FAIL;
    }
    snprintf(path, sizeof path, "%s/ort_reference.py", dir);
    rc = cli_write_file(path, cli_ort_script, strlen(cli_ort_script));
    if (rc == CLI_OK)
        rc = ort_write_inputs(dir, o, dut);
    if (rc == CLI_OK)
        rc = ort_spawn(dir, o->m->model);
    if (rc == CLI_OK)
        rc = ort_read_outputs(r, dir);
    remove_dir(dir);
    return rc;
}

/* ---- the CPU reference's network ------------------------------------------ */

/* Imports the model with the mappings whose keep[] is set; silent. */
static prt_status import_with(const cli_layers_opts *o, const int *keep,
                              prt_network **out)
{
    const cli_plugin_ops *all = &o->m->ops;
    cli_plugin_ops sub = {malloc(sizeof *sub.items * (size_t)(all->count + 1)), 0};
    const cli_plugin_op *bad;
    prt_status st;
    if (!sub.items)
        return PRT_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < all->count; i++)
        if (keep[i])
            sub.items[sub.count++] = all->items[i]; /* borrowed strings */
    st = cli_import_onnx_quiet(o->m->model, o->reg, &sub, o->m->strict, &bad, out);
    free(sub.items);
    return st;
}

/* The reference network for --reference cpu. --plugin-op sends an op to a
 * plugin on the device under test; the reference drops each mapping whose
 * op plugrt imports without it, so a plugin that stands in for a standard op
 * is checked against plugrt's own op, and keeps the others. keep[i] says
 * which were kept. *out is NULL when every mapping was kept: the reference
 * is then the device under test's network itself. */
static int import_reference(const cli_layers_opts *o, int *keep, prt_network **out)
{
    int n = o->m->ops.count;
    prt_network *net = NULL;
    *out = NULL;
    if (n == 0)
        return CLI_OK;
    for (int i = 0; i < n; i++)
        keep[i] = 0;
    if (import_with(o, keep, &net) == PRT_OK) {
        *out = net;
        return CLI_OK;
    }
    /* Some op needs its mapping: drop them one at a time. */
    for (int i = 0; i < n; i++)
        keep[i] = 1;
    for (int i = 0; i < n; i++) {
        prt_network *t = NULL;
        keep[i] = 0;
        if (import_with(o, keep, &t) == PRT_OK) {
            prt_network_destroy(net);
            net = t;
        } else {
            keep[i] = 1;
        }
    }
    prt_clear_error();
    *out = net;
    return CLI_OK;
}

static void print_reference(const cli_layers_opts *o, const int *keep, const cl_ref *r)
{
    char en[CLI_ESC_CAP];
    if (o->reference == CLI_REFERENCE_ONNXRUNTIME) {
        printf("reference: onnxruntime %s on the CPU (graph optimizations off), every "
               "node output exposed\n",
               r->version[0] ? r->version : "(version unknown)");
        return;
    }
    printf("reference: plugrt on cpu\n");
    for (int i = 0; i < o->m->ops.count; i++) {
        const cli_plugin_op *m = &o->m->ops.items[i];
        const char *op = cli_escape(m->op_type, en, sizeof en);
        if (keep[i])
            printf("  %s runs as the plugin of --plugin-op there too (plugrt has no op "
                   "%s of its own)\n",
                   op, op);
        else
            printf("  %s runs as plugrt's own op there (--plugin-op applies to the "
                   "device under test)\n",
                   op);
    }
}

/* ---- comparing -------------------------------------------------------------- */

/* The tolerance for a got/ref pair of dtypes: the looser dtype's. */
static void tolerance(const cli_layers_opts *o, int32_t a, int32_t b, double *atol,
                      double *rtol)
{
    int32_t d[2] = {a, b};
    double r = 0.0;
    for (int i = 0; i < 2; i++) {
        double x = d[i] == PRT_FLOAT16    ? CL_RTOL_FLOAT16
                   : d[i] == PRT_BFLOAT16 ? CL_RTOL_BFLOAT16
                                          : CL_RTOL_FLOAT32;
        if (x > r)
            r = x;
    }
    *rtol = o->rtol >= 0 ? o->rtol : r;
    *atol = o->atol >= 0 ? o->atol : 0.0;
}

typedef struct cl_check {
    cli_compare_result r;
    double max_ref; /* largest finite |ref| */
    double tol;     /* the bound every element had to meet */
    int exact;      /* integers or bools: compared exactly */
} cl_check;

/* 1 when the tensors agree, 0 when not. */
static int check_tensor(const cli_layers_opts *o, int32_t dtype, const prt_dims *dims,
                        const void *data, const cl_tensor *ref, cl_check *c)
{
    double atol, rtol;
    int64_t n = cli_volume(&ref->dims);
    memset(c, 0, sizeof *c);
    c->exact = cli_dtype_is_integer(dtype) && cli_dtype_is_integer(ref->dtype);
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(cli_element(ref->dtype, ref->data, i));
        if (isfinite(v) && v > c->max_ref)
            c->max_ref = v;
    }
    tolerance(o, dtype, ref->dtype, &atol, &rtol);
    c->tol = c->exact ? 0.0 : atol + rtol * c->max_ref;
    cli_compare(dtype, dims, data, ref->dtype, &ref->dims, ref->data, c->tol, 0.0, &c->r);
    return !c->r.shape_mismatch && c->r.mismatches == 0;
}

/* "conv (Conv)" for a built-in op, "relu (plugin test::BadRelu@1)" for a
 * plugin; escaped. */
static char *layer_title(const prt_layer_info *li, char *buf, size_t cap)
{
    char key[256], e1[CLI_ESC_CAP], e2[CLI_ESC_CAP];
    if (cli_is_builtin(li))
        snprintf(key, sizeof key, "%s", li->plugin_name);
    else
        cli_plugin_key(li->plugin_namespace, li->plugin_name, li->plugin_version, key,
                       sizeof key);
    snprintf(buf, cap, "%s (%s%s)", cli_escape(li->name, e1, sizeof e1),
             cli_is_builtin(li) ? "" : "plugin ", cli_escape(key, e2, sizeof e2));
    return buf;
}

static void print_worst(const cl_check *c, const prt_dims *dims, const char *indent)
{
    char idx[160];
    if (c->r.worst < 0)
        return;
    printf("%s%s at %s: got %.9g, expected %.9g, abs err %.6g, rel err %.6g\n", indent,
           c->r.mismatches ? "worst" : "largest error",
           cli_index_str(dims, c->r.worst, idx, sizeof idx), c->r.worst_got,
           c->r.worst_ref, c->r.worst_abs, c->r.worst_rel);
}

/* The verdict on one tensor, for the layer table and the report. */
static void print_check(const char *name, int32_t dtype, const prt_dims *dims,
                        const cl_tensor *ref, const cl_check *c, int detail)
{
    char d1[128], d2[128];
    if (c->r.shape_mismatch) {
        printf("%s: shape %s, the reference's %s\n", name,
               cli_format_dims(dims, d1, sizeof d1),
               cli_format_dims(&ref->dims, d2, sizeof d2));
        return;
    }
    if (c->r.mismatches)
        printf("%s: %lld of %lld elements differ", name, (long long)c->r.mismatches,
               (long long)c->r.count);
    else
        printf("%s: %lld elements agree", name, (long long)c->r.count);
    if (c->exact)
        printf(" (%s, exactly)\n", prt_dtype_name(dtype));
    else
        printf(" (%s; max abs err %.3g, tolerance %.3g = atol + rtol x max|ref| %.3g)\n",
               prt_dtype_name(dtype), c->r.max_abs, c->tol, c->max_ref);
    if (detail)
        print_worst(c, dims, "      ");
}

/* Where a layer input came from, as the report says it. */
static void print_layer_inputs(const cl_side *dut, const prt_layer_info *li,
                               const int *agrees)
{
    for (int32_t k = 0; k < li->nb_inputs; k++) {
        prt_tensor_info ti = {.struct_size = sizeof ti};
        char d[128], en[CLI_ESC_CAP];
        const run_slot *sl;
        prt_dims dims;
        const char *from;
        if (prt_engine_get_tensor(dut->engine, li->inputs[k], &ti) != PRT_OK)
            continue;
        dims = ti.dims;
        if (ti.kind == PRT_TENSOR_INPUT) {
            if (prt_context_get_tensor_shape(dut->ctx.ctx, ti.name, &dims) != PRT_OK)
                dims = ti.dims;
            from = "a network input";
        } else if (ti.kind == PRT_TENSOR_CONSTANT) {
            from = "a constant";
        } else if ((sl = side_slot(dut, ti.name)) != NULL) {
            dims = sl->dims;
            from = agrees[li->inputs[k]] > 0    ? "agrees with the reference"
                   : agrees[li->inputs[k]] == 0 ? "DIFFERS from the reference"
                                                : "not compared: no reference";
        } else {
            from = "not exposed";
        }
        printf("    input %d: %s %s %s (%s)\n", (int)k,
               cli_escape(ti.name, en, sizeof en), prt_dtype_name(ti.dtype),
               cli_format_dims(&dims, d, sizeof d), from);
    }
}

typedef struct cl_summary {
    int32_t layers, compared, differ, no_ref;
    int32_t first; /* the first layer that differs, or -1 */
} cl_summary;

/* Compares layer `l`'s outputs; prints its line of the table. agrees[t] for
 * each output tensor t: 1 agrees, 0 differs, -1 no reference. Returns 1 if
 * some output differs. */
static int compare_layer(const cli_layers_opts *o, const cl_side *dut, const cl_ref *ref,
                         int32_t l, const prt_layer_info *li, int *agrees,
                         cl_summary *sum)
{
    char title[700], en[CLI_ESC_CAP];
    int differs = 0, compared = 0;
    double worst_ratio = -1.0;
    cl_check worst;
    memset(&worst, 0, sizeof worst);
    for (int32_t k = 0; k < li->nb_outputs; k++) {
        prt_tensor_info ti = {.struct_size = sizeof ti};
        const run_slot *sl;
        const cl_tensor *rt;
        cl_check c;
        agrees[li->outputs[k]] = -1;
        if (prt_engine_get_tensor(dut->engine, li->outputs[k], &ti) != PRT_OK ||
            !(sl = side_slot(dut, ti.name)) || !(rt = ref_find(ref, ti.name)))
            continue;
        compared = 1;
        agrees[li->outputs[k]] = check_tensor(o, sl->dtype, &sl->dims, sl->host, rt, &c);
        if (!agrees[li->outputs[k]] && !differs) {
            differs = 1;
            printf("  [%d] DIFF %s  ", (int)l, layer_title(li, title, sizeof title));
            print_check(cli_escape(ti.name, en, sizeof en), sl->dtype, &sl->dims, rt, &c,
                        0);
        } else if (!c.exact && c.tol > 0 && c.r.max_abs / c.tol > worst_ratio) {
            worst_ratio = c.r.max_abs / c.tol;
            worst = c;
        }
    }
    if (!compared) {
        printf("  [%d] ---- %s  no reference for its outputs\n", (int)l,
               layer_title(li, title, sizeof title));
        sum->no_ref++;
    } else if (!differs) {
        printf("  [%d] ok   %s", (int)l, layer_title(li, title, sizeof title));
        if (worst_ratio >= 0)
            printf("  max abs err %.3g (%.2g of the tolerance)", worst.r.max_abs,
                   worst_ratio);
        putchar('\n');
    }
    sum->compared += compared;
    sum->differ += differs;
    return differs;
}

/* The report on the first layer that differs: every output, its inputs. */
static void report_layer(const cli_layers_opts *o, const cl_side *dut, const cl_ref *ref,
                         int32_t l, const prt_layer_info *li, const int *agrees)
{
    char title[700], en[CLI_ESC_CAP];
    int inputs_ok = 1;
    printf("\nfirst layer that differs: [%d] %s\n", (int)l,
           layer_title(li, title, sizeof title));
    print_layer_inputs(dut, li, agrees);
    for (int32_t k = 0; k < li->nb_outputs; k++) {
        prt_tensor_info ti = {.struct_size = sizeof ti};
        const run_slot *sl;
        const cl_tensor *rt;
        cl_check c;
        if (prt_engine_get_tensor(dut->engine, li->outputs[k], &ti) != PRT_OK ||
            !(sl = side_slot(dut, ti.name)) || !(rt = ref_find(ref, ti.name)))
            continue;
        check_tensor(o, sl->dtype, &sl->dims, sl->host, rt, &c);
        printf("    output %d ", (int)k);
        print_check(cli_escape(ti.name, en, sizeof en), sl->dtype, &sl->dims, rt, &c, 1);
    }
    for (int32_t k = 0; k < li->nb_inputs; k++)
        inputs_ok &= agrees[li->inputs[k]] != 0;
    if (inputs_ok)
        printf(
            "    its inputs agree with the reference (or are the model's own), so this "
            "layer computes differently\n");
}

/* ---- the whole comparison ---------------------------------------------------- */

static int compare_all(const cli_layers_opts *o, const cl_side *dut, const cl_ref *ref,
                       cl_summary *sum)
{
    int32_t nl = prt_engine_layer_count(dut->engine);
    int *agrees =
        malloc(sizeof *agrees * (size_t)(prt_engine_tensor_count(dut->engine) + 1));
    prt_layer_info first;
    if (!agrees) {
        cli_error("out of memory for the comparison");
        return CLI_FAIL;
    }
    /* Inputs and constants are the same on both sides. */
    for (int32_t t = 0; t < prt_engine_tensor_count(dut->engine); t++)
        agrees[t] = 1;
    memset(sum, 0, sizeof *sum);
    sum->first = -1;
    sum->layers = nl;
    printf("layers (in order; DIFF: outputs beyond tolerance):\n");
    for (int32_t l = 0; l < nl; l++) {
        prt_layer_info li = {.struct_size = sizeof li};
        prt_status st = prt_engine_get_layer(dut->engine, l, &li);
        if (st) {
            cli_error_api(st, "layer %d", (int)l);
            free(agrees);
            return CLI_FAIL;
        }
        if (compare_layer(o, dut, ref, l, &li, agrees, sum) && sum->first < 0) {
            sum->first = l;
            first = li;
        }
    }
    if (sum->first >= 0)
        report_layer(o, dut, ref, sum->first, &first, agrees);
    free(agrees);
    return CLI_OK;
}

static void print_tolerance(const cli_layers_opts *o)
{
    printf("tolerance: |got - ref| <= atol + rtol x max|ref| of each tensor; atol %g, ",
           o->atol >= 0 ? o->atol : 0.0);
    if (o->rtol >= 0)
        printf("rtol %g", o->rtol);
    else
        printf("rtol %g (float32), %g (float16), %g (bfloat16)", CL_RTOL_FLOAT32,
               CL_RTOL_FLOAT16, CL_RTOL_BFLOAT16);
    printf("; integers and bools exactly\n");
}

int cli_compare_layers(const cli_layers_opts *o)
{
    cl_side dut, cpu;
    cl_ref ref;
    cl_summary sum;
    prt_network *net = NULL, *ref_net = NULL;
    int *keep = calloc((size_t)o->m->ops.count + 1, sizeof *keep);
    int rc = CLI_FAIL;
    double t0 = cli_now();
    memset(&dut, 0, sizeof dut);
    memset(&cpu, 0, sizeof cpu);
    memset(&ref, 0, sizeof ref);
    if (!keep) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    /* One layer per node on both sides: a fused layer would hide the
     * outputs of all but its last node. */
    cli_set_onnx_fuse(0);
    if (cli_import_onnx(o->m->model, o->reg, &o->m->ops, o->m->strict, &net) != CLI_OK ||
        expose_all(net) != CLI_OK ||
        o->build(o->build_user, net, o->device, &dut.engine) != CLI_OK)
        goto done;
    printf("model: %s, %d layers built for %s with every layer's outputs exposed, in "
           "%.3f s\n",
           o->m->model, (int)prt_engine_layer_count(dut.engine),
           cli_device_name(o->device), cli_now() - t0);
    if (side_run(&dut, o, 1, CL_POISON, "the model") != CLI_OK)
        goto done;
    if (o->reference == CLI_REFERENCE_ONNXRUNTIME) {
        if (ref_from_onnxruntime(&ref, o, &dut) != CLI_OK)
            goto done;
    } else {
        if (import_reference(o, keep, &ref_net) != CLI_OK ||
            (ref_net && expose_all(ref_net) != CLI_OK) ||
            o->build(o->build_user, ref_net ? ref_net : net, PRT_DEVICE_CPU,
                     &cpu.engine) != CLI_OK ||
            side_run(&cpu, o, 0, 0, "the reference") != CLI_OK ||
            ref_from_side(&ref, &cpu) != CLI_OK)
            goto done;
        if (o->device == PRT_DEVICE_CPU && !ref_net)
            cli_note(
                "the reference is the same network on the same device: only a layer "
                "that leaves elements unwritten, or does not compute the same twice, "
                "can differ");
    }
    print_reference(o, keep, &ref);
    print_tolerance(o);
    if (compare_all(o, &dut, &ref, &sum) != CLI_OK)
        goto done;
    putchar('\n');
    if (sum.compared == 0) {
        cli_error("no layer output has a tensor of the same name in the reference");
        goto done;
    }
    if (sum.first >= 0) {
        prt_layer_info li = {.struct_size = sizeof li};
        char title[700];
        if (prt_engine_get_layer(dut.engine, sum.first, &li) != PRT_OK)
            li.name = li.plugin_name = li.plugin_namespace = li.plugin_version = "?";
        printf("FAILED: layer [%d] %s is the first whose outputs differ from the "
               "reference (%d of %d compared layers differ)\n",
               (int)sum.first, layer_title(&li, title, sizeof title), (int)sum.differ,
               (int)sum.compared);
    } else {
        printf("PASSED: all %d compared layers agree with the reference",
               (int)sum.compared);
        if (sum.no_ref)
            printf(" (%d of %d layers have no reference tensor)", (int)sum.no_ref,
                   (int)sum.layers);
        putchar('\n');
    }
    rc = sum.first < 0 ? CLI_OK : CLI_FAIL;
done:
    side_free(&cpu);
    side_free(&dut);
    ref_free(&ref);
    prt_network_destroy(ref_net);
    prt_network_destroy(net);
    free(keep);
    return rc;
}

/*
 * The ONNX node tests: every <data>/<test>/model.onnx, with each of its
 * test_data_set_<n> folders (input_<k>.pb), is imported, built for the CPU
 * with a profile fixed at the test's input shapes, run, and compared with
 * output_<k>.pb
 * (floats: |got - want| <= 1e-5 + 1e-3 * |want|, NaN matching NaN; integers
 * and bools exactly; shapes and dtypes must match).
 *
 * Each test is passed, failed, or skipped (its model has an op with neither
 * an importer nor a plugin creator). The standard plugin library is loaded;
 * Hardmax runs on the built-in op (tests/cli covers the CustomHardmax
 * plugin through --plugin-op).
 *
 * The number of passing tests is compared with the one recorded in the repo
 * (--expect FILE): fewer fails the run; more asks for the number to be
 * raised. Each test runs in a child process, so a crash or a hang in one
 * counts as its failure and the run goes on.
 *
 *   onnx_node_tests [--data DIR] [--expect FILE] [--filter SUBSTRING]
 *                   [--verbose] [--quiet] [--no-fork]
 *
 * --verbose prints each failure's whole reason (and the first mismatching
 * elements); --quiet prints only failures and the summary.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "plugrt/onnx.h"

#define RTOL 1e-3
#define ATOL 1e-5
#define REASON_CAP 4096
#define TEST_TIMEOUT_S 120

enum { RES_PASS = 0, RES_FAIL = 1, RES_SKIP = 2 };

typedef struct result {
    int status;
    char reason[REASON_CAP];
} result;

static int opt_verbose;

static void set_reason(result *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_reason(result *r, int status, const char *fmt, ...)
{
    va_list ap;
    r->status = status;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

/* ---- small helpers ------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names in dir that start with prefix; caller frees each and the
 * array. */
static char **list_dir(const char *dir, const char *prefix, int *out_n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    int n = 0, cap = 0;
    *out_n = 0;
    if (!d)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (n == cap) {
            char **g;
            cap = cap ? cap * 2 : 64;
            g = realloc(v, sizeof *v * (size_t)cap);
            if (!g)
                break;
            v = g;
        }
        v[n] = strdup(e->d_name);
        if (v[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(v, (size_t)n, sizeof *v, cmp_str);
    *out_n = n;
    return v;
}

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int64_t volume(const prt_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        v *= d->d[i];
    return v;
}

static void dims_str(const prt_dims *d, char *buf, size_t cap)
{
    size_t pos = 0;
    pos += (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < d->nb_dims && pos < cap; i++)
        pos += (size_t)snprintf(buf + pos, cap - pos, "%s%lld", i ? "," : "",
                                (long long)d->d[i]);
    if (pos < cap)
        snprintf(buf + pos, cap - pos, "]");
}

static int dims_equal(const prt_dims *a, const prt_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
             man = h & 0x3ffu, u;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    u = exp == 31 ? (sign | 0x7f800000u | (man << 13))
                  : (sign | ((exp + 112) << 23) | (man << 13));
    memcpy(&f, &u, sizeof f);
    return f;
}

static double elem_as_double(int32_t dtype, const void *p, int64_t i)
{
    uint32_t u;
    float f;
    switch (dtype) {
    case PRT_FLOAT32:
        return ((const float *)p)[i];
    case PRT_FLOAT16:
        return half_to_float(((const uint16_t *)p)[i]);
    case PRT_BFLOAT16:
        u = (uint32_t)((const uint16_t *)p)[i] << 16;
        memcpy(&f, &u, sizeof f);
        return f;
    case PRT_FLOAT64:
        return ((const double *)p)[i];
    default:
        return 0;
    }
}

static long long elem_as_i64(int32_t dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case PRT_INT8:
        return ((const int8_t *)p)[i];
    case PRT_UINT8:
    case PRT_BOOL:
    case PRT_FLOAT8E4M3FN: /* the bits: ONNX's conversions are exact */
    case PRT_FLOAT8E5M2:
        return ((const uint8_t *)p)[i];
    case PRT_INT32:
        return ((const int32_t *)p)[i];
    case PRT_INT16:
        return ((const int16_t *)p)[i];
    case PRT_UINT16:
        return ((const uint16_t *)p)[i];
    case PRT_UINT32:
        return ((const uint32_t *)p)[i];
    default: /* int64, and uint64's bits */
        return ((const int64_t *)p)[i];
    }
}

/* Compares one output; fills r and returns 0 on a mismatch. */
static int compare(const char *name, int32_t dtype, const void *got, const void *want,
                   int64_t n, result *r)
{
    int bad = 0;
    char detail[1024] = "";
    size_t pos = 0;
    int64_t first_bad = -1;
    if (dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16 ||
        dtype == PRT_FLOAT64) {
        for (int64_t i = 0; i < n; i++) {
            double g = elem_as_double(dtype, got, i), w = elem_as_double(dtype, want, i);
            int ok;
            if (isnan(w))
                ok = isnan(g);
            else if (isinf(w))
                ok = g == w;
            else
                ok = fabs(g - w) <= ATOL + RTOL * fabs(w);
            if (!ok) {
                if (first_bad < 0)
                    first_bad = i;
                if (bad < 8 && pos < sizeof detail)
                    pos += (size_t)snprintf(detail + pos, sizeof detail - pos,
                                            " [%lld] got %.9g want %.9g;", (long long)i,
                                            g, w);
                bad++;
            }
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            long long g = elem_as_i64(dtype, got, i), w = elem_as_i64(dtype, want, i);
            if (g == w)
                continue;
            if (first_bad < 0)
                first_bad = i;
            if (bad < 8 && pos < sizeof detail)
                pos +=
                    (size_t)snprintf(detail + pos, sizeof detail - pos,
                                     " [%lld] got %lld want %lld;", (long long)i, g, w);
            bad++;
        }
    }
    if (!bad)
        return 1;
    set_reason(r, RES_FAIL, "output '%s': %d of %lld elements differ (first at %lld)%s%s",
               name, bad, (long long)n, (long long)first_bad, opt_verbose ? ":" : "",
               opt_verbose ? detail : "");
    return 0;
}

/* ---- one test ------------------------------------------------------------- */

typedef struct tensor_file {
    char *name;
    int32_t dtype;
    prt_dims dims;
    void *data;
} tensor_file;

static void tensor_files_free(tensor_file *t, int n)
{
    for (int i = 0; i < n; i++) {
        prt_free(t[i].name);
        prt_free(t[i].data);
    }
    free(t);
}

/* Reads <dir>/<prefix>0.pb, 1, ... until one is missing. */
static int read_tensors(const char *dir, const char *prefix, tensor_file **out,
                        int *out_n, result *r)
{
    tensor_file *v = NULL;
    int n = 0;
    for (;;) {
        char path[4096];
        tensor_file *g;
        snprintf(path, sizeof path, "%s/%s%d.pb", dir, prefix, n);
        if (!file_exists(path))
            break;
        g = realloc(v, sizeof *v * (size_t)(n + 1));
        if (!g) {
            tensor_files_free(v, n);
            set_reason(r, RES_FAIL, "out of memory");
            return 0;
        }
        v = g;
        memset(&v[n], 0, sizeof v[n]);
        if (prt_onnx_read_tensor_file(path, &v[n].name, &v[n].dtype, &v[n].dims,
                                      &v[n].data) != PRT_OK) {
            set_reason(r, RES_FAIL, "reading %s: %s", path, prt_last_error());
            tensor_files_free(v, n);
            return 0;
        }
        n++;
    }
    *out = v;
    *out_n = n;
    return 1;
}

/* The graph inputs that are not initializers, in order: the input_<k>.pb
 * files are given in that order (their own names may be empty). */
static char **graph_inputs(const char *model_path, int *out_n)
{
    FILE *f = fopen(model_path, "rb");
    long size;
    uint8_t *buf;
    Onnx__ModelProto *m;
    char **names;
    int n = 0;
    *out_n = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(size > 0 ? (size_t)size : 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    m = onnx__model_proto__unpack(NULL, (size_t)size, buf);
    free(buf);
    if (!m || !m->graph) {
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return NULL;
    }
    names = calloc(m->graph->n_input + 1, sizeof *names);
    for (size_t i = 0; names && i < m->graph->n_input; i++) {
        const char *name = m->graph->input[i]->name ? m->graph->input[i]->name : "";
        int is_init = 0;
        for (size_t j = 0; j < m->graph->n_initializer; j++)
            if (m->graph->initializer[j]->name &&
                strcmp(m->graph->initializer[j]->name, name) == 0)
                is_init = 1;
        if (!is_init)
            names[n++] = strdup(name);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    *out_n = n;
    return names;
}

static void run_data_set(const prt_network *net, const prt_registry *reg, char **in_names,
                         int nb_in, const char *set_dir, result *r)
{
    tensor_file *ins = NULL, *outs = NULL;
    int n_ins = 0, n_outs = 0;
    prt_builder_config *cfg = NULL;
    prt_engine *engine = NULL;
    prt_context *ctx = NULL;
    void **out_bufs = NULL;
    int32_t prof, nb_io, first_out = -1;
    int ok = 0;

    if (!read_tensors(set_dir, "input_", &ins, &n_ins, r) ||
        !read_tensors(set_dir, "output_", &outs, &n_outs, r))
        goto out;
    if (n_ins != nb_in) {
        set_reason(r, RES_FAIL, "%s has %d inputs; the graph has %d", set_dir, n_ins,
                   nb_in);
        goto out;
    }
    if (prt_builder_config_create(&cfg) || prt_builder_config_add_profile(cfg, &prof)) {
        set_reason(r, RES_FAIL, "config: %s", prt_last_error());
        goto out;
    }
    for (int i = 0; i < nb_in; i++)
        if (prt_builder_config_set_profile_dims(cfg, prof, in_names[i], &ins[i].dims,
                                                &ins[i].dims, &ins[i].dims)) {
            set_reason(r, RES_FAIL, "profile for input '%s': %s", in_names[i],
                       prt_last_error());
            goto out;
        }
    /* Small integer inputs may be shape tensors (a Reshape's shape, Range's
     * bounds): the profile fixes their values to this test's data. */
    for (int i = 0; i < nb_in; i++) {
        int64_t vals[PRT_MAX_DIMS];
        int64_t n = 1;
        for (int32_t d = 0; d < ins[i].dims.nb_dims; d++)
            n *= ins[i].dims.d[d];
        int32_t t, shape_in = 0;
        if (ins[i].dtype == PRT_FLOAT32 &&
            prt_network_find_tensor(net, in_names[i], &t) == PRT_OK &&
            prt_network_is_shape_input(net, t, &shape_in) == PRT_OK && !shape_in)
            continue; /* float32: only Resize's scales known at run time */
        if ((ins[i].dtype != PRT_INT32 && ins[i].dtype != PRT_INT64 &&
             ins[i].dtype != PRT_FLOAT32) ||
            ins[i].dims.nb_dims > 1 || n < 1 || n > PRT_MAX_DIMS)
            continue;
        for (int64_t k = 0; k < n; k++)
            vals[k] = ins[i].dtype == PRT_INT32 ? ((const int32_t *)ins[i].data)[k]
                      : ins[i].dtype == PRT_INT64
                          ? ((const int64_t *)ins[i].data)[k]
                          : prt_float_shape_value(((const float *)ins[i].data)[k]);
        if (prt_builder_config_set_profile_shape_values(cfg, prof, in_names[i], vals,
                                                        vals, vals, (int32_t)n)) {
            set_reason(r, RES_FAIL, "shape values for input '%s': %s", in_names[i],
                       prt_last_error());
            goto out;
        }
    }
    if (prt_engine_build(net, cfg, reg, &engine)) {
        set_reason(r, RES_FAIL, "build: %s", prt_last_error());
        goto out;
    }
    nb_io = prt_engine_io_count(engine);
    for (int32_t i = 0; i < nb_io; i++) {
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        if (prt_engine_get_io(engine, i, &io) == PRT_OK && !io.is_input) {
            first_out = i;
            break;
        }
    }
    if (first_out < 0 || nb_io - first_out != n_outs) {
        set_reason(r, RES_FAIL, "the engine has %d outputs; the test expects %d",
                   first_out < 0 ? 0 : (int)(nb_io - first_out), n_outs);
        goto out;
    }
    if (prt_context_create(engine, &ctx)) {
        set_reason(r, RES_FAIL, "context: %s", prt_last_error());
        goto out;
    }
    for (int i = 0; i < nb_in; i++) {
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        int32_t idx;
        if (prt_engine_find_io(engine, in_names[i], &idx) ||
            prt_engine_get_io(engine, idx, &io)) {
            set_reason(r, RES_FAIL, "input '%s': %s", in_names[i], prt_last_error());
            goto out;
        }
        if (io.dtype == PRT_BFLOAT16 && ins[i].dtype == PRT_UINT16)
            ins[i].dtype = PRT_BFLOAT16; /* the test data's bfloat16 bits */
        if (io.dtype != ins[i].dtype) {
            set_reason(r, RES_FAIL, "input '%s' is %s in the engine, %s in the test",
                       in_names[i], prt_dtype_name(io.dtype),
                       prt_dtype_name(ins[i].dtype));
            goto out;
        }
        if (prt_context_set_input_shape(ctx, in_names[i], &ins[i].dims) ||
            prt_context_set_tensor_address(ctx, in_names[i], ins[i].data)) {
            set_reason(r, RES_FAIL, "input '%s': %s", in_names[i], prt_last_error());
            goto out;
        }
    }
    out_bufs = calloc((size_t)n_outs + 1, sizeof *out_bufs);
    if (!out_bufs) {
        set_reason(r, RES_FAIL, "out of memory");
        goto out;
    }
    for (int k = 0; k < n_outs; k++) {
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        prt_dims d;
        int64_t n;
        if (prt_engine_get_io(engine, first_out + k, &io) ||
            prt_context_get_tensor_shape(ctx, io.name, &d)) {
            set_reason(r, RES_FAIL, "output %d: %s", k, prt_last_error());
            goto out;
        }
        n = volume(&d);
        out_bufs[k] = calloc((size_t)(n > 0 ? n : 1), prt_dtype_size(io.dtype));
        if (!out_bufs[k] || prt_context_set_tensor_address(ctx, io.name, out_bufs[k])) {
            set_reason(r, RES_FAIL, "output '%s': %s", io.name, prt_last_error());
            goto out;
        }
    }
    if (prt_context_enqueue(ctx, NULL)) {
        set_reason(r, RES_FAIL, "run: %s", prt_last_error());
        goto out;
    }
    for (int k = 0; k < n_outs; k++) {
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        prt_dims d;
        char a[128], b[128];
        if (prt_engine_get_io(engine, first_out + k, &io) ||
            prt_context_get_tensor_shape(ctx, io.name, &d)) {
            set_reason(r, RES_FAIL, "output %d: %s", k, prt_last_error());
            goto out;
        }
        if (io.dtype == PRT_BFLOAT16 && outs[k].dtype == PRT_UINT16)
            outs[k].dtype = PRT_BFLOAT16;
        if (io.dtype != outs[k].dtype) {
            set_reason(r, RES_FAIL, "output '%s' is %s; the test expects %s", io.name,
                       prt_dtype_name(io.dtype), prt_dtype_name(outs[k].dtype));
            goto out;
        }
        if (!dims_equal(&d, &outs[k].dims)) {
            dims_str(&d, a, sizeof a);
            dims_str(&outs[k].dims, b, sizeof b);
            set_reason(r, RES_FAIL, "output '%s' has shape %s; the test expects %s",
                       io.name, a, b);
            goto out;
        }
        if (!compare(io.name, io.dtype, out_bufs[k], outs[k].data, volume(&d), r))
            goto out;
    }
    ok = 1;
out:
    if (ok)
        r->status = RES_PASS;
    if (out_bufs)
        for (int k = 0; k < n_outs; k++)
            free(out_bufs[k]);
    free(out_bufs);
    prt_context_destroy(ctx);
    prt_engine_destroy(engine);
    prt_builder_config_destroy(cfg);
    tensor_files_free(ins, n_ins);
    tensor_files_free(outs, n_outs);
}

static void run_test(const char *dir, const prt_registry *reg, result *r)
{
    char path[4096];
    prt_onnx_parser *parser = NULL;
    prt_network *net = NULL;
    char **in_names = NULL, **sets = NULL;
    int nb_in = 0, nb_sets = 0;
    prt_status st;

    r->status = RES_FAIL;
    r->reason[0] = '\0';
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (prt_onnx_parser_create(reg, &parser)) {
        set_reason(r, RES_FAIL, "parser: %s", prt_last_error());
        goto out;
    }
    st = prt_onnx_parser_parse_file(parser, path, &net);
    if (st) {
        /* Skipped: an op that nothing serves. Anything else is a failure. */
        int skip =
            st == PRT_ERR_UNSUPPORTED && strstr(prt_last_error(), "has no importer");
        set_reason(r, skip ? RES_SKIP : RES_FAIL, "import: %s", prt_last_error());
        goto out;
    }
    in_names = graph_inputs(path, &nb_in);
    if (!in_names) {
        set_reason(r, RES_FAIL, "cannot list the graph inputs of %s", path);
        goto out;
    }
    sets = list_dir(dir, "test_data_set_", &nb_sets);
    if (!nb_sets) {
        set_reason(r, RES_FAIL, "no test_data_set_* in %s", dir);
        goto out;
    }
    for (int s = 0; s < nb_sets; s++) {
        char set_dir[4096];
        snprintf(set_dir, sizeof set_dir, "%s/%s", dir, sets[s]);
        run_data_set(net, reg, in_names, nb_in, set_dir, r);
        if (r->status != RES_PASS) {
            if (nb_sets > 1) {
                char tmp[REASON_CAP];
                snprintf(tmp, sizeof tmp, "%s", r->reason);
                set_reason(r, r->status, "%s: %s", sets[s], tmp);
            }
            break;
        }
    }
out:
    free_list(in_names, nb_in);
    free_list(sets, nb_sets);
    prt_network_destroy(net);
    prt_onnx_parser_destroy(parser);
}

/* Runs one test in a child, so that a crash or a hang is that test's
 * failure. */
static void run_isolated(const char *dir, const prt_registry *reg, result *r,
                         int use_fork)
{
    int fds[2];
    pid_t pid;
    int wst;
    size_t got = 0;
    if (!use_fork) {
        run_test(dir, reg, r);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) != 0) {
        set_reason(r, RES_FAIL, "pipe: %s", strerror(errno));
        return;
    }
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        set_reason(r, RES_FAIL, "fork: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        result cr;
        size_t off = 0;
        close(fds[0]);
        alarm(TEST_TIMEOUT_S);
        run_test(dir, reg, &cr);
        while (off < sizeof cr) {
            ssize_t w = write(fds[1], (const char *)&cr + off, sizeof cr - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        close(fds[1]);
        /* exit, not _exit: under LeakSanitizer a leak fails the test. */
        exit(0);
    }
    close(fds[1]);
    while (got < sizeof *r) {
        ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    waitpid(pid, &wst, 0);
    if (got == sizeof *r && !(WIFEXITED(wst) && WEXITSTATUS(wst) == 0)) {
        /* The result came, then the process failed: a sanitizer's report at
         * exit (a leak), or a crash while cleaning up. */
        char tmp[REASON_CAP];
        snprintf(tmp, sizeof tmp, "%s", r->reason);
        set_reason(r, RES_FAIL, "%s%sthe test process then %s %d", tmp,
                   tmp[0] ? "; " : "",
                   WIFSIGNALED(wst) ? "died of signal" : "exited with status",
                   WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
    } else if (got != sizeof *r) {
        if (WIFSIGNALED(wst))
            set_reason(r, RES_FAIL, "crashed with signal %d%s", WTERMSIG(wst),
                       WTERMSIG(wst) == SIGALRM ? " (timed out)" : "");
        else
            set_reason(r, RES_FAIL, "the test process exited with status %d",
                       WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    }
    r->reason[sizeof r->reason - 1] = '\0';
}

/* The recorded count: the first integer in the file. */
static int read_expected(const char *path, long *out)
{
    FILE *f = fopen(path, "r");
    char line[256];
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char *end;
        long v;
        if (line[0] == '#')
            continue;
        v = strtol(line, &end, 10);
        if (end != line) {
            fclose(f);
            *out = v;
            return 1;
        }
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *data = "/usr/share/libonnx-testdata/data/node";
    const char *expect = NULL, *filter = NULL;
    int quiet = 0, use_fork = 1, nb_tests = 0;
    int counts[3] = {0, 0, 0};
    char **tests;
    prt_registry *reg = NULL;
    long expected = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
            expect = argv[++i];
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
            filter = argv[++i];
        else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0)
            opt_verbose = 1;
        else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--no-fork") == 0)
            use_fork = 0;
        else {
            fprintf(stderr,
                    "usage: %s [--data DIR] [--expect FILE] [--filter SUBSTRING] "
                    "[--verbose] [--quiet] [--no-fork]\n",
                    argv[0]);
            return 2;
        }
    }
    tests = list_dir(data, "test_", &nb_tests);
    if (!nb_tests) {
        printf("node tests: no tests in %s (install libonnx-testdata); skipped\n", data);
        return 77;
    }
    if (expect && !read_expected(expect, &expected)) {
        fprintf(stderr, "cannot read a count from %s\n", expect);
        free_list(tests, nb_tests);
        return 2;
    }
    if (prt_registry_create(&reg) || prt_registry_load_library(reg, PRT_PLUGINS_PATH)) {
        fprintf(stderr, "cannot load %s: %s\n", PRT_PLUGINS_PATH, prt_last_error());
        prt_registry_destroy(reg);
        free_list(tests, nb_tests);
        return 2;
    }
    for (int t = 0; t < nb_tests; t++) {
        static result r;
        char dir[4096];
        const char *tag[] = {"passed", "FAILED", "skipped"};
        if (filter && !strstr(tests[t], filter))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", data, tests[t]);
        run_isolated(dir, reg, &r, use_fork);
        counts[r.status]++;
        if (r.status == RES_PASS) {
            if (!quiet)
                printf("%-60s passed\n", tests[t]);
        } else if (r.status == RES_SKIP) {
            if (!quiet)
                printf("%-60s skipped: %.*s\n", tests[t], opt_verbose ? REASON_CAP : 150,
                       r.reason);
        } else {
            printf("%-60s %s: %.*s\n", tests[t], tag[r.status],
                   opt_verbose ? REASON_CAP : 300, r.reason);
        }
    }
    printf("node tests: %d passed, %d failed, %d skipped\n", counts[RES_PASS],
           counts[RES_FAIL], counts[RES_SKIP]);
    prt_registry_destroy(reg);
    free_list(tests, nb_tests);
    if (expected >= 0 && !filter) {
        if (counts[RES_PASS] < expected) {
            printf("node tests: %d passed, fewer than the %ld recorded in %s\n",
                   counts[RES_PASS], expected, expect);
            return 1;
        }
        if (counts[RES_PASS] > expected)
            printf(
                "note: %d passed, more than the %ld recorded: raise the number in %s\n",
                counts[RES_PASS], expected, expect);
    }
    return 0;
}

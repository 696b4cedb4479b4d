/* The benchmarks' shared harness (bench.h says what each part is for). */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void bench_cuda_check(cudaError_t err, const char *what, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what,
            cudaGetErrorString(err), cudaGetErrorName(err));
    fflush(stdout);
    exit(2);
}

void *bench_malloc(size_t bytes)
{
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        fprintf(stderr, "cudaMalloc(%zu bytes) failed: %s\n", bytes,
                cudaGetErrorString(err));
        exit(2);
    }
    return p;
}

void *bench_host_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "malloc(%zu bytes) failed\n", bytes);
        exit(2);
    }
    return p;
}

int64_t bench_dims(prt_dims *out, int32_t nb, const int64_t *d)
{
    int64_t v = 1;
    memset(out, 0, sizeof *out);
    out->nb_dims = nb;
    for (int32_t i = 0; i < nb; i++)
        v *= out->d[i] = d[i];
    return v;
}

const char *bench_dims_str(const prt_dims *d, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < d->nb_dims && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "x" : "",
                                (long long)d->d[i]);
    return buf;
}

/* ---- the device, the stream, the plugin library --------------------------- */

/* Escapes s for a JSON string (quotes, backslashes, control characters). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* PRT_BENCH_VERBOSE: the library's log, the tuner's timing of every
 * candidate tactic among it, on stdout. */
static void log_line(void *user, int32_t severity, const char *msg)
{
    (void)user;
    printf("  log[%d]: %s\n", (int)severity, msg);
}

int bench_init(bench_env *env, const char *program)
{
    const char *lib = getenv("PRT_BENCH_PLUGINS");
    const char *tune = getenv("PRT_BENCH_AUTOTUNE");
    int count = 0, l2 = 0, driver = 0, runtime = 0;
    cudaError_t err;
    memset(env, 0, sizeof *env);
    env->program = program;
    env->autotune = tune ? atoi(tune) != 0 : 1;
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach the log as they happen */
    if (getenv("PRT_BENCH_VERBOSE"))
        prt_set_logger(log_line, NULL, PRT_SEV_VERBOSE);

    err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        printf("%s: skipped: no usable GPU (%s)\n", program,
               err != cudaSuccess ? cudaGetErrorString(err) : "no device");
        return BENCH_SKIP;
    }
    if (prt_device_check(PRT_DEVICE_CUDA) != PRT_OK) {
        printf("%s: skipped: plugrt cannot use CUDA: %s\n", program, prt_last_error());
        return BENCH_SKIP;
    }
    env->device = 0;
    BENCH_CUDA(cudaSetDevice(env->device));
    BENCH_CUDA(cudaGetDeviceProperties(&env->prop, env->device));
    BENCH_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, env->device));
    BENCH_CUDA(cudaDriverGetVersion(&driver));
    BENCH_CUDA(cudaRuntimeGetVersion(&runtime));
    env->l2_bytes = l2 > 0 ? l2 : (int64_t)60 << 20;
    BENCH_CUDA(cudaStreamCreateWithFlags(&env->stream, cudaStreamNonBlocking));
    env->events =
        (cudaEvent_t *)bench_host_malloc(sizeof(cudaEvent_t) * (BENCH_MAX_ITERS + 1));
    for (int i = 0; i <= BENCH_MAX_ITERS; i++)
        BENCH_CUDA(cudaEventCreate(&env->events[i]));

    printf("%s: %s, cc %d.%d, %d SMs, L2 %.1f MiB, %.1f GiB, driver %d, runtime %d, "
           "plugrt %s, autotune %d\n",
           program, env->prop.name, env->prop.major, env->prop.minor,
           env->prop.multiProcessorCount, (double)env->l2_bytes / (1 << 20),
           (double)env->prop.totalGlobalMem / (1 << 30), driver, runtime,
           prt_version_string(), env->autotune);
    printf("@device {\"program\": ");
    json_str(stdout, program);
    printf(", \"name\": ");
    json_str(stdout, env->prop.name);
    printf(", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %lld, \"driver\": %d, "
           "\"runtime\": %d, \"plugrt\": ",
           env->prop.major, env->prop.minor, env->prop.multiProcessorCount,
           (long long)env->l2_bytes, driver, runtime);
    json_str(stdout, prt_version_string());
    printf(", \"autotune\": %d}\n", env->autotune);

    if (prt_registry_create(&env->reg) != PRT_OK ||
        prt_registry_load_library(env->reg, lib ? lib : PRT_PLUGINS_PATH) != PRT_OK) {
        printf("%s: cannot load the plugin library %s: %s\n", program,
               lib ? lib : PRT_PLUGINS_PATH, prt_last_error());
        return 1;
    }
    return 0;
}

int bench_selected(const char *case_id)
{
    const char *only = getenv("PRT_BENCH_ONLY");
    return !only || !*only || strstr(case_id, only) != NULL;
}

int bench_finish(bench_env *env)
{
    if (env->events) {
        for (int i = 0; i <= BENCH_MAX_ITERS; i++)
            cudaEventDestroy(env->events[i]);
        free(env->events);
    }
    if (env->stream)
        cudaStreamDestroy(env->stream);
    prt_registry_destroy(env->reg);
    printf("%s: %s (%d failure%s)\n", env->program, env->failures ? "FAILED" : "done",
           env->failures, env->failures == 1 ? "" : "s");
    return env->failures ? 1 : 0;
}

int bench_sets_for(const bench_env *env, int64_t bytes_per_set)
{
    int64_t want = BENCH_L2_FACTOR * env->l2_bytes;
    int64_t sets = bytes_per_set > 0 ? (want + bytes_per_set - 1) / bytes_per_set : 1;
    if (sets < 1)
        sets = 1;
    if (sets > BENCH_MAX_SETS)
        sets = BENCH_MAX_SETS;
    return (int)sets;
}

/* ---- timing ---------------------------------------------------------------- */

static double host_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int run_n(bench_run_fn fn, void *user, int sets, int n, int *next)
{
    for (int i = 0; i < n; i++) {
        if (fn(user, *next))
            return 1;
        *next = (*next + 1) % sets;
    }
    return 0;
}

int bench_time(bench_env *env, bench_run_fn fn, void *user, int sets, int method,
               bench_timing *out)
{
    cudaEvent_t *ev = env->events;
    int next = 0, iters, probe = sets > BENCH_WARMUP ? sets : BENCH_WARMUP;
    float ms = 0;
    double est_us, *v;
    memset(out, 0, sizeof *out);
    out->sets = sets;
    out->method = method;

    /* Warm-up: module load, lazy allocations and the first touch of every
     * set stay out of the numbers. */
    if (run_n(fn, user, sets, probe, &next))
        return 1;
    BENCH_CUDA(cudaStreamSynchronize(env->stream));

    /* Probe: how long a run takes, to pick the number of runs. */
    BENCH_CUDA(cudaEventRecord(ev[0], env->stream));
    if (run_n(fn, user, sets, probe, &next))
        return 1;
    BENCH_CUDA(cudaEventRecord(ev[1], env->stream));
    BENCH_CUDA(cudaEventSynchronize(ev[1]));
    BENCH_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    est_us = 1e3 * ms / probe;
    iters = est_us > 0 ? (int)ceil(BENCH_TARGET_MS * 1e3 / est_us) : BENCH_MAX_ITERS;
    if (iters < BENCH_MIN_ITERS)
        iters = BENCH_MIN_ITERS;
    if (iters > BENCH_MAX_ITERS)
        iters = BENCH_MAX_ITERS;
    /* Each isolated run waits for the stream: a few hundred are plenty. */
    if (method == BENCH_ISOLATED && iters > 200)
        iters = 200;
    out->iters = iters;

    if (method == BENCH_LOOP) {
        double t0, t1;
        BENCH_CUDA(cudaStreamSynchronize(env->stream));
        t0 = host_now_us();
        BENCH_CUDA(cudaEventRecord(ev[0], env->stream));
        if (run_n(fn, user, sets, iters, &next))
            return 1;
        BENCH_CUDA(cudaEventRecord(ev[1], env->stream));
        t1 = host_now_us();
        BENCH_CUDA(cudaEventSynchronize(ev[1]));
        BENCH_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        out->us = out->min_us = 1e3 * ms / iters;
        out->host_us = (t1 - t0) / iters;
        return 0;
    }

    v = (double *)bench_host_malloc(sizeof(double) * (size_t)iters);
    if (method == BENCH_ISOLATED) {
        for (int i = 0; i < iters; i++) {
            BENCH_CUDA(cudaStreamSynchronize(env->stream));
            BENCH_CUDA(cudaEventRecord(ev[0], env->stream));
            if (run_n(fn, user, sets, 1, &next)) {
                free(v);
                return 1;
            }
            BENCH_CUDA(cudaEventRecord(ev[1], env->stream));
            BENCH_CUDA(cudaEventSynchronize(ev[1]));
            BENCH_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1]));
            v[i] = 1e3 * ms;
        }
    } else {
        /* Runs back to back with an event between each pair: the stream never
         * drains, so an interval is one run's device time (plus any wait for
         * the host, when the host is the slower side). */
        BENCH_CUDA(cudaStreamSynchronize(env->stream));
        for (int i = 0; i < iters; i++) {
            BENCH_CUDA(cudaEventRecord(ev[i], env->stream));
            if (run_n(fn, user, sets, 1, &next)) {
                free(v);
                return 1;
            }
        }
        BENCH_CUDA(cudaEventRecord(ev[iters], env->stream));
        BENCH_CUDA(cudaEventSynchronize(ev[iters]));
        for (int i = 0; i < iters; i++) {
            BENCH_CUDA(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            v[i] = 1e3 * ms;
        }
    }
    out->us = median(v, iters); /* sorts v */
    out->min_us = v[0];
    free(v);
    return 0;
}

typedef struct copy_work {
    bench_env *env;
    char *src, *dst;
    size_t bytes, stride;
} copy_work;

static int copy_run(void *user, int set)
{
    copy_work *w = (copy_work *)user;
    BENCH_CUDA(cudaMemcpyAsync(w->dst + (size_t)set * w->stride,
                               w->src + (size_t)set * w->stride, w->bytes,
                               cudaMemcpyDeviceToDevice, w->env->stream));
    return 0;
}

int bench_time_copy(bench_env *env, int64_t moved_bytes, int sets, int method,
                    bench_timing *out)
{
    copy_work w;
    int rc;
    w.env = env;
    w.bytes = (size_t)(moved_bytes > 1 ? moved_bytes / 2 : 1);
    w.stride =
        (w.bytes + 255) / 256 * 256; /* every set 256-byte aligned, like cudaMalloc */
    w.src = (char *)bench_malloc(w.stride * (size_t)sets);
    w.dst = (char *)bench_malloc(w.stride * (size_t)sets);
    BENCH_CUDA(cudaMemsetAsync(w.src, 0x3c, w.stride * (size_t)sets, env->stream));
    BENCH_CUDA(cudaMemsetAsync(w.dst, 0, w.stride * (size_t)sets, env->stream));
    rc = bench_time(env, copy_run, &w, sets, method, out);
    BENCH_CUDA(cudaStreamSynchronize(env->stream));
    BENCH_CUDA(cudaFree(w.src));
    BENCH_CUDA(cudaFree(w.dst));
    return rc;
}

static const char *method_name(int m)
{
    return m == BENCH_LOOP ? "loop" : m == BENCH_ISOLATED ? "isolated" : "median";
}

void bench_result(const char *case_id, const char *impl, const char *status,
                  const bench_timing *t, const bench_timing *copy, int64_t bytes,
                  const char *note)
{
    int ok = t && strcmp(status, "ok") == 0;
    double tbps = ok && t->us > 0 ? (double)bytes / (t->us * 1e-6) / 1e12 : 0;
    char pct[32] = "";
    if (ok && copy && copy->us > 0 && t->us > 0)
        snprintf(pct, sizeof pct, " %5.1f%% of copy", 100.0 * copy->us / t->us);
    if (ok)
        printf(
            "  %-36s %-14s %10.2f us %7.3f TB/s%s  (%s of %d, min %.2f, %d set%s)%s%s\n",
            case_id, impl, t->us, tbps, pct, method_name(t->method), t->iters, t->min_us,
            t->sets, t->sets == 1 ? "" : "s", note ? "  " : "", note ? note : "");
    else
        printf("  %-36s %-14s %s%s%s\n", case_id, impl, status, note ? ": " : "",
               note ? note : "");
    if (ok && t->method == BENCH_LOOP)
        printf("  %-36s %-14s host %.2f us per call while queueing\n", "", "",
               t->host_us);
    printf("@result {\"case\": ");
    json_str(stdout, case_id);
    printf(", \"impl\": ");
    json_str(stdout, impl);
    printf(", \"status\": ");
    json_str(stdout, status);
    if (ok)
        printf(", \"us\": %.4f, \"min_us\": %.4f, \"host_us\": %.4f, \"method\": \"%s\", "
               "\"iters\": %d, \"sets\": %d, \"tbps\": %.4f",
               t->us, t->min_us, t->host_us, method_name(t->method), t->iters, t->sets,
               tbps);
    if (ok && copy)
        printf(", \"copy_us\": %.4f", copy->us);
    printf(", \"bytes\": %lld, \"note\": ", (long long)bytes);
    json_str(stdout, note ? note : "");
    printf("}\n");
}

/* ---- engines ---------------------------------------------------------------- */

void bench_engine_destroy(bench_engine *e)
{
    for (int i = 0; i < e->nb_ctx; i++)
        prt_context_destroy(e->ctx[i]);
    prt_engine_destroy(e->engine);
    memset(e, 0, sizeof *e);
    e->tactic = -1;
}

prt_status bench_engine_build(bench_env *env, const char *ns, const char *name,
                              const prt_field *fields, int32_t nb_fields, int32_t dtype,
                              const prt_dims *dims, const char *const *out_names,
                              int32_t nb_out, int nb_ctx, bench_engine *out)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection fc;
    prt_plugin *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int32_t x = -1, layer = -1, t = -1;
    prt_status st;
    memset(out, 0, sizeof *out);
    out->tactic = -1;
    if (nb_ctx < 1 || nb_ctx > BENCH_MAX_SETS)
        nb_ctx = 1;
    fc.nb_fields = nb_fields;
    fc.fields = fields;
    st = prt_registry_find_creator(env->reg, ns, name, "1", &c);
    if (!st)
        st = c->create(c, name, &fc, PRT_PHASE_BUILD, &p);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "x", dtype, dims, &x);
    if (!st)
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, p, &layer);
    if (!st)
        p = NULL; /* the network owns it now */
    for (int32_t i = 0; !st && i < nb_out; i++) {
        st = prt_network_get_layer_output(net, layer, i, &t);
        if (!st)
            st = prt_network_set_tensor_name(net, t, out_names[i]);
        if (!st)
            st = prt_network_mark_output(net, t);
    }
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA);
    if (!st)
        st = prt_builder_config_set_autotune(cfg, env->autotune);
    if (!st)
        st = prt_engine_build(net, cfg, env->reg, &out->engine);
    for (int32_t li = 0; !st && li < prt_engine_layer_count(out->engine); li++) {
        prt_layer_info info;
        if (prt_engine_get_layer(out->engine, li, &info) == PRT_OK && info.plugin_name &&
            strcmp(info.plugin_name, name) == 0)
            out->tactic = info.tactic;
    }
    for (int i = 0; !st && i < nb_ctx; i++) {
        /* The engine was built here: its kernel layers (NonZero's NVRTC
         * backend) are code this program made, so they may run. */
        prt_context_options opts;
        memset(&opts, 0, sizeof opts);
        opts.struct_size = sizeof opts;
        opts.allow_embedded_kernels = 1;
        st = prt_context_create_with_options(out->engine, &opts, &out->ctx[i]);
        if (!st)
            out->nb_ctx = i + 1;
    }
    if (p)
        p->vt->runtime->destroy(p);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    if (st) {
        /* Keep the message: destroying the engine may overwrite it. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", prt_last_error());
        bench_engine_destroy(out);
        fprintf(stderr, "%s: building a CUDA engine of %s failed: %s: %s\n", env->program,
                name, prt_status_name(st), msg);
        printf("  build %s failed: %s: %s\n", name, prt_status_name(st), msg);
    }
    return st;
}

int bench_enqueue(bench_env *env, prt_context *ctx)
{
    prt_status st = prt_context_enqueue(ctx, env->stream);
    if (st != PRT_OK) {
        printf("  prt_context_enqueue failed: %s: %s\n", prt_status_name(st),
               prt_last_error());
        return 1;
    }
    return 0;
}

/* ---- one input, one output ---------------------------------------------------- */

typedef struct case1_run {
    bench_env *env;
    bench_engine eng;
} case1_run;

static int case1_enqueue(void *user, int set)
{
    case1_run *r = (case1_run *)user;
    return bench_enqueue(r->env, r->eng.ctx[set]);
}

/* Downloads set s's output and checks it; reports a failure. */
static int case1_check(bench_env *env, const bench_case1 *c, float *const *y, int s,
                       const float *hx, float *hy, int64_t bytes)
{
    char why[256];
    BENCH_CUDA(cudaStreamSynchronize(env->stream));
    BENCH_CUDA(cudaMemcpy(hy, y[s], sizeof(float) * (size_t)c->out_elems,
                          cudaMemcpyDeviceToHost));
    if (c->check(c->spec, hx, hy, why, sizeof why) == 0)
        return 0;
    bench_result(c->id, "plugrt", "wrong", NULL, NULL, bytes, why);
    env->failures++;
    return 1;
}

void bench_run_case1(bench_env *env, const bench_case1 *c)
{
    static const char *const outs[1] = {"y"};
    int64_t n = 1, bytes;
    int sets;
    float *x[BENCH_MAX_SETS] = {NULL}, *y[BENCH_MAX_SETS] = {NULL}, *hx, *hy;
    char why[256], note[64];
    bench_timing t, copy;
    case1_run r;

    if (!bench_selected(c->id))
        return;
    for (int32_t i = 0; i < c->dims.nb_dims; i++)
        n *= c->dims.d[i];
    bytes = 4 * (n + c->out_elems);
    sets = bench_sets_for(env, bytes);
    printf("%s: %d buffer set%s\n", c->id, sets, sets == 1 ? "" : "s");
    for (int s = 0; s < sets; s++) {
        x[s] = (float *)bench_malloc(sizeof(float) * (size_t)n);
        y[s] = (float *)bench_malloc(sizeof(float) * (size_t)c->out_elems);
    }
    bench_fill_uniform(x[0], n, c->seed, -1.0f, 1.0f, env->stream);
    for (int s = 1; s < sets; s++)
        BENCH_CUDA(cudaMemcpyAsync(x[s], x[0], sizeof(float) * (size_t)n,
                                   cudaMemcpyDeviceToDevice, env->stream));
    hx = (float *)bench_host_malloc(sizeof(float) * (size_t)n);
    hy = (float *)bench_host_malloc(sizeof(float) * (size_t)c->out_elems);
    BENCH_CUDA(cudaStreamSynchronize(env->stream));
    BENCH_CUDA(cudaMemcpy(hx, x[0], sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost));

    if (bench_time_copy(env, bytes, sets, BENCH_MEDIAN, &copy) == 0)
        bench_result(c->id, "copy", "ok", &copy, NULL, bytes,
                     "cudaMemcpyAsync D2D of the same bytes");
    else
        env->failures++;

    memset(&r, 0, sizeof r);
    r.env = env;
    if (bench_engine_build(env, c->ns, c->name, c->fields, c->nb_fields, PRT_FLOAT32,
                           &c->dims, outs, 1, sets, &r.eng) != PRT_OK) {
        bench_result(c->id, "plugrt", "error", NULL, NULL, bytes,
                     "no engine (build failed, above)");
        env->failures++;
        goto done;
    }
    for (int s = 0; s < sets; s++) {
        if (prt_context_set_tensor_address(r.eng.ctx[s], "x", x[s]) != PRT_OK ||
            prt_context_set_tensor_address(r.eng.ctx[s], "y", y[s]) != PRT_OK) {
            snprintf(why, sizeof why, "binding buffers: %s", prt_last_error());
            bench_result(c->id, "plugrt", "error", NULL, NULL, bytes, why);
            env->failures++;
            goto done;
        }
    }
    BENCH_CUDA(
        cudaMemsetAsync(y[0], 0xff, sizeof(float) * (size_t)c->out_elems, env->stream));
    if (case1_enqueue(&r, 0)) {
        bench_result(c->id, "plugrt", "error", NULL, NULL, bytes,
                     "enqueue failed (above)");
        env->failures++;
        goto done;
    }
    if (case1_check(env, c, y, 0, hx, hy, bytes))
        goto done;
    if (bench_time(env, case1_enqueue, &r, sets, BENCH_MEDIAN, &t)) {
        bench_result(c->id, "plugrt", "error", NULL, NULL, bytes,
                     "a timed run failed (above)");
        env->failures++;
        goto done;
    }
    /* Every set ran while timing; the last one is checked again. */
    if (case1_check(env, c, y, sets - 1, hx, hy, bytes))
        goto done;
    snprintf(note, sizeof note, "tactic %d", (int)r.eng.tactic);
    bench_result(c->id, "plugrt", "ok", &t, &copy, bytes, note);

done:
    bench_engine_destroy(&r.eng);
    for (int s = 0; s < sets; s++) {
        BENCH_CUDA(cudaFree(x[s]));
        BENCH_CUDA(cudaFree(y[s]));
    }
    free(hx);
    free(hy);
}

/* ---- data ------------------------------------------------------------------- */

/* splitmix64's finalizer: a good 64-bit hash of a counter. */
__host__ __device__ static inline uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__global__ static void fill_uniform_kernel(float *d, int64_t n, uint64_t seed, float lo,
                                           float span)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t h = mix64(seed * 0xD1B54A32D192ED03ull + (uint64_t)i);
        d[i] = lo + span * ((float)(h >> 40) * (1.0f / 16777216.0f));
    }
}

__global__ static void fill_sparse_kernel(float *d, int64_t n, uint64_t seed,
                                          uint64_t threshold)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t h = mix64(seed * 0xD1B54A32D192ED03ull + (uint64_t)i);
        float v;
        if ((h >> 32) < threshold) {
            float mag =
                1e-3f + 99.999f * ((float)((h >> 8) & 0xFFFFFF) * (1.0f / 16777216.0f));
            v = (h & 1) ? -mag : mag;
        } else {
            v = (h & 2) ? -0.0f : 0.0f;
        }
        d[i] = v;
    }
}

static int fill_grid(void)
{
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return (sms > 0 ? sms : 1) * 8;
}

void bench_fill_uniform(float *d, int64_t n, uint64_t seed, float lo, float hi,
                        cudaStream_t stream)
{
    fill_uniform_kernel<<<fill_grid(), 256, 0, stream>>>(d, n, seed, lo, hi - lo);
    BENCH_CUDA(cudaGetLastError());
}

void bench_fill_sparse(float *d, int64_t n, uint64_t seed, double density,
                       cudaStream_t stream)
{
    /* Non-zero when the hash's top 32 bits fall under density * 2^32. */
    double t = density * 4294967296.0;
    uint64_t threshold = t <= 0 ? 0 : t >= 4294967296.0 ? (1ull << 32) : (uint64_t)t;
    fill_sparse_kernel<<<fill_grid(), 256, 0, stream>>>(d, n, seed, threshold);
    BENCH_CUDA(cudaGetLastError());
}

/* Threads, a start gate and latency percentiles. */
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start line: workers check in after their warmup and wait for `go`,
 * which the main thread gives once every started worker has checked in. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready, go;
};

/* Where a worker failed. */
enum { FAILED_START, FAILED_WARMUP, FAILED_TIMED };

typedef struct worker {
    const cli_bench_target *t;
    int index, warmup, iterations;
    double warmup_ms; /* > 0: warm up for this long (cli_bench_opts) */
    int64_t warmups;  /* warm-up runs made */
    double warmed_ms; /* how long they took */
    double *lat_ms;   /* iterations entries */
    double *dev_ms;   /* iterations entries; NULL without a stream */
    void *ev[2];      /* start and end events on the stream */
    struct gate *gate;
    prt_status status;
    int failed_in; /* FAILED_* */
    int failed_at; /* the run, counted from 0 in its phase */
    char error[1024];
} worker;

/* One run; its wall time and (with a stream) its time between events. */
static prt_status run_once(worker *w, double *wall_ms, double *dev_ms)
{
    const cli_bench_target *t = w->t;
    double t0 = cli_now();
    prt_status st = PRT_OK;
    if (t->stream)
        st = prt_event_record(t->device, w->ev[0], t->stream);
    if (!st)
        st = t->graph ? prt_context_launch_graph(t->ctx, t->stream)
                      : prt_context_enqueue(t->ctx, t->stream);
    if (t->stream) {
        if (!st)
            st = prt_event_record(t->device, w->ev[1], t->stream);
        if (!st)
            st = prt_event_synchronize(t->device, w->ev[1]);
    }
    if (wall_ms)
        *wall_ms = (cli_now() - t0) * 1e3;
    if (!st && t->stream && dev_ms)
        st = prt_event_elapsed_ms(t->device, w->ev[0], w->ev[1], dev_ms);
    return st;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    double t0 = cli_now();
    /* A duration counts from the first warm-up run. */
    for (int i = 0; !w->status && (i < w->warmup || w->warmed_ms < w->warmup_ms); i++) {
        w->status = run_once(w, NULL, NULL);
        w->failed_in = FAILED_WARMUP;
        w->failed_at = i;
        w->warmups = i + 1;
        w->warmed_ms = (cli_now() - t0) * 1e3;
    }
    if (w->status)
        snprintf(w->error, sizeof w->error, "%s", prt_last_error());
    /* Check in even after a failure, or the main thread would wait forever. */
    pthread_mutex_lock(&w->gate->lock);
    w->gate->ready++;
    pthread_cond_broadcast(&w->gate->cond);
    while (!w->gate->go)
        pthread_cond_wait(&w->gate->cond, &w->gate->lock);
    pthread_mutex_unlock(&w->gate->lock);
    for (int i = 0; i < w->iterations && !w->status; i++) {
        w->status = run_once(w, &w->lat_ms[i], w->dev_ms ? &w->dev_ms[i] : NULL);
        w->failed_in = FAILED_TIMED;
        w->failed_at = i;
        if (w->status)
            snprintf(w->error, sizeof w->error, "%s", prt_last_error());
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *v, int64_t n, double q)
{
    int64_t k = (int64_t)(q * (double)n + 0.999999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

/* Sorts v and summarizes it. */
static void summarize(double *v, int64_t n, cli_bench_times *out)
{
    double sum = 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    out->min_ms = v[0];
    out->max_ms = v[n - 1];
    out->median_ms = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    out->p90_ms = percentile(v, n, 0.90);
    out->p99_ms = percentile(v, n, 0.99);
    out->mean_ms = sum / (double)n;
}

/* The means of windows of `runs` consecutive runs in each thread's
 * segment of v (nb_threads segments of `iterations`), summarized; v is
 * left as it was. */
static int summarize_windows(const double *v, int nb_threads, int iterations,
                             int64_t runs, cli_bench_times *out)
{
    int64_t per = iterations / runs, n = per * nb_threads, k = 0;
    double *means = malloc(sizeof *means * (size_t)(n > 0 ? n : 1));
    if (!means) {
        cli_error("out of memory for the means of %lld windows of runs", (long long)n);
        return CLI_FAIL;
    }
    for (int t = 0; t < nb_threads; t++)
        for (int64_t w = 0; w < per; w++) {
            double sum = 0.0;
            for (int64_t i = 0; i < runs; i++)
                sum += v[(size_t)t * (size_t)iterations + (size_t)(w * runs + i)];
            means[k++] = sum / (double)runs;
        }
    summarize(means, n, out);
    free(means);
    return CLI_OK;
}

static void destroy_events(worker *w, int nb_threads)
{
    for (int t = 0; t < nb_threads; t++)
        for (int k = 0; k < 2; k++)
            if (w[t].ev[k])
                prt_event_destroy(w[t].t->device, w[t].ev[k]);
}

int cli_bench_run(const cli_bench_target *targets, int nb_threads,
                  const cli_bench_opts *o, cli_bench_stats *stats)
{
    int iterations = o->iterations;
    worker *w = calloc((size_t)nb_threads, sizeof *w);
    pthread_t *tid = calloc((size_t)nb_threads, sizeof *tid);
    int64_t n = (int64_t)nb_threads * iterations;
    int has_device = targets[0].stream != NULL;
    double *lat = calloc((size_t)n, sizeof *lat);
    double *dev = has_device ? calloc((size_t)n, sizeof *dev) : NULL;
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    int started = 0, rc = CLI_FAIL;
    double t0, t1;
    if (!w || !tid || !lat || (has_device && !dev)) {
        cli_error("out of memory for the state and latencies of %d threads", nb_threads);
        free(w);
        free(tid);
        free(lat);
        free(dev);
        return CLI_FAIL;
    }
    for (int t = 0; t < nb_threads; t++) {
        w[t].t = &targets[t];
        w[t].index = t;
        w[t].warmup = o->warmup;
        w[t].warmup_ms = o->warmup_ms;
        w[t].iterations = iterations;
        w[t].lat_ms = lat + (size_t)t * (size_t)iterations;
        w[t].dev_ms = dev ? dev + (size_t)t * (size_t)iterations : NULL;
        w[t].gate = &gate;
    }
    for (int t = 0; has_device && t < nb_threads; t++)
        for (int k = 0; k < 2; k++) {
            prt_status st = prt_event_create(targets[t].device, &w[t].ev[k]);
            if (st) {
                w[t].ev[k] = NULL;
                cli_error_api(st, "thread %d: cannot create an event to time its runs",
                              t);
                goto done;
            }
        }
    for (int t = 0; t < nb_threads; t++) {
        int err = pthread_create(&tid[t], NULL, worker_main, &w[t]);
        if (err != 0) {
            w[t].status = PRT_ERR_INTERNAL;
            w[t].failed_in = FAILED_START;
            /* EAGAIN: out of memory for the thread, or past a limit. */
            snprintf(w[t].error, sizeof w[t].error, "cannot start the thread: %s",
                     err == EAGAIN ? "out of memory or threads (EAGAIN)" : strerror(err));
            break;
        }
        started++;
    }
    if (nb_threads > 1 || o->warmup > 0 || o->warmup_ms > 0)
        cli_progress("running %d iteration(s) on %d thread(s)", iterations, nb_threads);
    pthread_mutex_lock(&gate.lock);
    while (gate.ready < started)
        pthread_cond_wait(&gate.cond, &gate.lock);
    /* The clock starts before the gate opens: a worker may run before this
     * thread is scheduled again. */
    t0 = cli_now();
    gate.go = 1;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    t1 = cli_now();
    cli_progress_clear();
    for (int t = 0; t < nb_threads; t++)
        if (w[t].status) {
            if (w[t].failed_in == FAILED_START)
                cli_error("thread %d: %s", t, w[t].error);
            else if (w[t].failed_in == FAILED_WARMUP)
                cli_error("thread %d, warmup run %d: %s [%s]", t, w[t].failed_at,
                          w[t].error, prt_status_name(w[t].status));
            else
                cli_error("thread %d, run %d: %s [%s]", t, w[t].failed_at, w[t].error,
                          prt_status_name(w[t].status));
            goto done;
        }
    stats->samples = n;
    stats->warmups = w[0].warmups;
    stats->warmup_ms = 0.0;
    for (int t = 0; t < nb_threads; t++) {
        stats->warmups = w[t].warmups < stats->warmups ? w[t].warmups : stats->warmups;
        stats->warmup_ms =
            w[t].warmed_ms > stats->warmup_ms ? w[t].warmed_ms : stats->warmup_ms;
    }
    memset(&stats->avg, 0, sizeof stats->avg);
    /* Before summarize sorts the runs out of their order. */
    if (o->avg_runs > 0 && iterations >= o->avg_runs) {
        stats->avg.runs = o->avg_runs;
        stats->avg.windows = (int64_t)(iterations / o->avg_runs) * nb_threads;
        if (summarize_windows(lat, nb_threads, iterations, o->avg_runs,
                              &stats->avg.wall) != CLI_OK ||
            (has_device && summarize_windows(dev, nb_threads, iterations, o->avg_runs,
                                             &stats->avg.device) != CLI_OK))
            goto done;
    }
    summarize(lat, n, &stats->wall);
    stats->has_device = has_device;
    if (has_device)
        summarize(dev, n, &stats->device);
    stats->wall_s = t1 - t0;
    stats->throughput = t1 > t0 ? (double)n / (t1 - t0) : 0.0;
    rc = CLI_OK;
done:
    destroy_events(w, nb_threads);
    free(w);
    free(tid);
    free(lat);
    free(dev);
    return rc;
}

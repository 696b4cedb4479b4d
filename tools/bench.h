/*
 * Timed runs for `plugrt run`: N execution contexts of one engine, each on
 * its own thread (and, on CUDA, its own stream), each running `warmup`
 * untimed and `iterations` timed runs. All threads start the timed part
 * together (a start gate), so the wall time measures them running
 * concurrently.
 *
 * On the CPU a run is timed by the clock around prt_context_enqueue, which
 * computes before it returns. On a device with streams a run is timed
 * twice: by events recorded on the stream around the enqueue (or graph
 * launch), which is the device's time, and by the clock from the enqueue
 * to the end event's completion, which is the wall time per run. A run
 * waits for the one before it, so these are latencies, not a pipeline.
 */
#ifndef PLUGRT_TOOLS_BENCH_H
#define PLUGRT_TOOLS_BENCH_H

#include "cli.h"

/* What one thread runs. */
typedef struct cli_bench_target {
    prt_context *ctx;
    int32_t device; /* prt_device of the engine */
    void *stream;   /* the context's stream; NULL on the CPU */
    int graph;      /* 1: replay the captured graph (prt_context_launch_graph) */
} cli_bench_target;

typedef struct cli_bench_times {
    double min_ms, median_ms, p90_ms, p99_ms, max_ms, mean_ms;
} cli_bench_times;

/* A summary of the means of consecutive windows of runs (trtexec's
 * --avgRuns): each thread's timed runs in order, cut into windows of
 * `runs`, a last partial window dropped; min, median, max and mean over the
 * windows' means (the percentiles of so few values say nothing). */
typedef struct cli_bench_windows {
    int64_t runs;    /* runs per window; 0: not asked for */
    int64_t windows; /* full windows, over all threads */
    cli_bench_times wall, device;
} cli_bench_windows;

typedef struct cli_bench_stats {
    int64_t samples;
    /* Warm-up runs made: the fewest of any thread (all make the same number
     * unless warm-up is a duration). */
    int64_t warmups;
    double warmup_ms; /* the longest any thread's warm-up took */
    cli_bench_windows avg;
    cli_bench_times wall;   /* per run, by the host's clock */
    int has_device;         /* 1: `device` holds event timings */
    cli_bench_times device; /* per run, between events on the stream */
    double wall_s;
    double throughput; /* inferences per second over all threads */
} cli_bench_stats;

/* How many runs. */
typedef struct cli_bench_opts {
    int warmup; /* untimed runs per thread first */
    /* > 0: untimed runs go on until this many milliseconds have passed
     * (trtexec's --warmUp), and at least `warmup` of them */
    double warmup_ms;
    int iterations; /* timed runs per thread */
    int avg_runs;   /* > 0: fill stats->avg with windows of this many runs */
} cli_bench_opts;

/* Runs the targets (each context fully set up: shapes, addresses, a graph
 * captured if `graph`). Prints the first failure (naming its thread) and
 * returns CLI_FAIL, else fills *stats. */
int cli_bench_run(const cli_bench_target *targets, int nb_threads,
                  const cli_bench_opts *o, cli_bench_stats *stats);

#endif /* PLUGRT_TOOLS_BENCH_H */

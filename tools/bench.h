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

typedef struct cli_bench_stats {
    int64_t samples;
    cli_bench_times wall;   /* per run, by the host's clock */
    int has_device;         /* 1: `device` holds event timings */
    cli_bench_times device; /* per run, between events on the stream */
    double wall_s;
    double throughput; /* inferences per second over all threads */
} cli_bench_stats;

/* Runs the targets (each context fully set up: shapes, addresses, a graph
 * captured if `graph`). Prints the first failure (naming its thread) and
 * returns CLI_FAIL, else fills *stats. */
int cli_bench_run(const cli_bench_target *targets, int nb_threads, int warmup,
                  int iterations, cli_bench_stats *stats);

#endif /* PLUGRT_TOOLS_BENCH_H */

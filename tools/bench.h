/*
 * Timed runs for `plugrt run`: N execution contexts of one engine, each on
 * its own thread, each running `warmup` untimed and `iterations` timed
 * enqueues. All threads start the timed part together (a start gate), so the
 * wall time measures them running concurrently.
 */
#ifndef PLUGRT_TOOLS_BENCH_H
#define PLUGRT_TOOLS_BENCH_H

#include "cli.h"

typedef struct cli_bench_stats {
    int64_t samples;
    double min_ms, median_ms, p90_ms, p99_ms, max_ms, mean_ms;
    double wall_s;
    double throughput; /* inferences per second over all threads */
} cli_bench_stats;

/* Runs the contexts (each fully set up: shapes, addresses). Prints the
 * first failure (naming its thread) and returns CLI_FAIL, else fills
 * *stats. */
int cli_bench_run(prt_context *const *contexts, int nb_threads, int warmup,
                  int iterations, cli_bench_stats *stats);

#endif /* PLUGRT_TOOLS_BENCH_H */

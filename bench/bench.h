/*
 * The harness the GPU benchmarks share (the bench_ programs): the device and its L2,
 * one timing stream, CUDA-event timing (median of per-run intervals, or an
 * average over a loop for latency cases), rotation among buffer sets so that
 * repeated runs do not measure the L2, the device-to-device copy every case
 * is compared with, one-layer plugrt engines built for CUDA, deterministic
 * test data, and the result lines bench/report.py reads.
 *
 * Every program prints, for each case and implementation, one human line
 * and one machine line:
 *     @result {"case": ..., "impl": "plugrt" | "cub" | "copy", "us": ...}
 * (fields below, bench_result). bench/report.py merges these with
 * bench/torch_peers.py's lines into the table of bench/RESULTS.md.
 *
 * The programs use only plugrt's public API (plugrt.h) and the CUDA runtime;
 * nothing here knows how the plugins' kernels work.
 */
#ifndef PLUGRT_BENCH_H
#define PLUGRT_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime.h>

#include "plugrt/plugrt.h"

/* Exit status for "no usable GPU here": the CTest convention (skipped). */
#define BENCH_SKIP 77

/* A failed CUDA call: prints the call, the place and the error, then exits
 * with status 2. CUDA errors from kernels are sticky (every later call fails),
 * so a program cannot go on to its next case; run_cuda.sh goes on to the
 * next program. */
#define BENCH_CUDA(call) bench_cuda_check((call), #call, __FILE__, __LINE__)
void bench_cuda_check(cudaError_t err, const char *what, const char *file, int line);

/* One pass over all buffer sets of a case touches at least this many times
 * the L2, so a run finds none of its data in the cache (PERF.md). */
#define BENCH_L2_FACTOR 4
/* Most buffer sets (and contexts) one case rotates among. */
#define BENCH_MAX_SETS 32
/* Timed runs per measurement: at least BENCH_MIN_ITERS (PERF.md asks for a
 * median of >= 30), at most BENCH_MAX_ITERS, else as many as fit in
 * BENCH_TARGET_MS of device time. */
#define BENCH_MIN_ITERS 30
#define BENCH_MAX_ITERS 2000
#define BENCH_TARGET_MS 60.0
/* Untimed runs before each measurement (at least one per buffer set). */
#define BENCH_WARMUP 5
/* Cases that move at least this many bytes per run are "large": PERF.md's
 * target of >= 80 % of the copy applies to them (bench/report.py). */
#define BENCH_LARGE_BYTES ((int64_t)64 << 20)

typedef struct bench_env {
    const char *program;
    int device;
    cudaDeviceProp prop;
    int64_t l2_bytes;
    cudaStream_t stream; /* every timed run goes here */
    prt_registry *reg;   /* the standard plugin library, loaded */
    int autotune;        /* builder autotuning (env PRT_BENCH_AUTOTUNE, default 1) */
    int failures;        /* wrong results and cases that could not run */
    cudaEvent_t *events; /* BENCH_MAX_ITERS + 1, for per-run intervals */
} bench_env;

/* Picks device 0, prints it (and an @device line), makes the stream and the
 * events, loads the plugin library (PRT_PLUGINS_PATH, or the environment's
 * PRT_BENCH_PLUGINS). Returns 0, or BENCH_SKIP when there is no usable GPU
 * (after saying why), or 1 when the plugin library does not load. */
int bench_init(bench_env *env, const char *program);
/* Frees what bench_init made; returns the exit status: 0 when every case
 * ran and was right, 1 otherwise. */
int bench_finish(bench_env *env);
/* Whether the case runs: PRT_BENCH_ONLY, when set, keeps only the cases
 * whose id contains it (for a profiler run over one case). */
int bench_selected(const char *case_id);

/* Number of buffer sets (1..BENCH_MAX_SETS) so that sets * bytes_per_set
 * >= BENCH_L2_FACTOR * L2. */
int bench_sets_for(const bench_env *env, int64_t bytes_per_set);

/* Queues one run of the work for buffer set `set` on env->stream. Returns 0,
 * or non-zero after printing why. */
typedef int (*bench_run_fn)(void *user, int set);

typedef enum bench_method {
    /* Events between consecutive runs queued back to back; the median of
     * the per-run intervals (the large cases). */
    BENCH_MEDIAN = 0,
    /* One event pair around many runs queued back to back; the average per
     * run. Per-run intervals below a few µs are under the events'
     * resolution, so latency cases use this (PERF.md: "time per replay with
     * events over many iterations"). */
    BENCH_LOOP = 1,
    /* The stream drained before each run; one event pair around it; the
     * median. What one call costs from idle (host submission included). */
    BENCH_ISOLATED = 2
} bench_method;

typedef struct bench_timing {
    double us;      /* the headline: median (MEDIAN, ISOLATED) or average (LOOP) */
    double min_us;  /* fastest run (MEDIAN, ISOLATED); = us for LOOP */
    double host_us; /* host time per call while queueing (LOOP only; else 0) */
    int iters;
    int sets;
    int method;
} bench_timing;

/* Warm-up, a probe to choose the number of runs, then the measurement.
 * Runs go to sets 0, 1, ..., sets-1, 0, ... Returns 0, or non-zero when a
 * run failed. */
int bench_time(bench_env *env, bench_run_fn fn, void *user, int sets, int method,
               bench_timing *out);

/* The reference: cudaMemcpyAsync device to device of moved_bytes / 2 per
 * run (so the copy moves as many bytes, read plus written, as the case),
 * over `sets` pairs of buffers, timed like the case with `method`. */
int bench_time_copy(bench_env *env, int64_t moved_bytes, int sets, int method,
                    bench_timing *out);

/* Prints a case's result: a human line and an @result line with
 *     case, impl, status ("ok", "wrong", "error"), us, min_us, host_us,
 *     method, iters, sets, bytes, tbps, copy_us, note.
 * t may be NULL (status not "ok": nothing was timed); copy (the same
 * case's bench_time_copy, for "% of copy") and note may be NULL. */
void bench_result(const char *case_id, const char *impl, const char *status,
                  const bench_timing *t, const bench_timing *copy, int64_t bytes,
                  const char *note);

/* A one-layer engine on CUDA: input "x" -> plugin -> outputs out_names[],
 * with one context per buffer set (each bound to its own buffers once, so
 * timed runs only enqueue). */
typedef struct bench_engine {
    prt_engine *engine;
    prt_context *ctx[BENCH_MAX_SETS];
    int nb_ctx;
    int32_t tactic; /* the builder's choice for the plugin layer */
} bench_engine;

/* Builds it (autotuned when env->autotune) and makes nb_ctx contexts.
 * On failure returns the status with prt_last_error() describing it, and
 * leaves *out empty (bench_engine_destroy is always safe). */
prt_status bench_engine_build(bench_env *env, const char *ns, const char *name,
                              const prt_field *fields, int32_t nb_fields, int32_t dtype,
                              const prt_dims *dims, const char *const *out_names,
                              int32_t nb_out, int nb_ctx, bench_engine *out);
void bench_engine_destroy(bench_engine *e);

/* prt_context_enqueue on env->stream, printing prt_last_error() when it
 * fails. */
int bench_enqueue(bench_env *env, prt_context *ctx);

/* Checks one run's output against a plain C reference on the host (x, y:
 * host copies): 0 when right, else non-zero with the first difference
 * written to why. */
typedef int (*bench_check_fn)(const void *spec, const float *x, const float *y, char *why,
                              size_t size);

/* A case of a plugin with one float32 input "x", uniform in [-1, 1), and
 * one float32 output "y" (CustomHardmax, circ_pad_plugin). */
typedef struct bench_case1 {
    const char *id;        /* its name in the table */
    const char *ns, *name; /* the plugin's creator (version "1") */
    const prt_field *fields;
    int32_t nb_fields;
    prt_dims dims;     /* of x */
    int64_t out_elems; /* of y */
    uint64_t seed;
    bench_check_fn check;
    const void *spec; /* passed to check */
} bench_case1;

/* Runs one such case: buffer sets for 4 x L2 (bytes moved: both tensors
 * once), the copy, an engine with a context per set, one run with y
 * poisoned (0xFF bytes) and checked, the timing (median), the last set
 * checked again, the report; frees what it made. Failures are counted in
 * env->failures. */
void bench_run_case1(bench_env *env, const bench_case1 *c);

/* Deterministic data, generated on the device from (seed, index) with
 * splitmix64, so every set, size and program is reproducible:
 *  - uniform: every element uniform in [lo, hi) (24 random bits);
 *  - sparse: each element non-zero with probability `density`; non-zeros
 *    are +-[1e-3, 100) (never 0), zeros are +0 or -0 at random (a -0 that
 *    counted as non-zero would be a bug). */
void bench_fill_uniform(float *d, int64_t n, uint64_t seed, float lo, float hi,
                        cudaStream_t stream);
void bench_fill_sparse(float *d, int64_t n, uint64_t seed, double density,
                       cudaStream_t stream);

/* cudaMalloc that prints the size and exits on failure. */
void *bench_malloc(size_t bytes);
/* Host malloc that prints the size and exits on failure. */
void *bench_host_malloc(size_t bytes);

/* Fills *out with nb dims from d; returns their volume (elements). */
int64_t bench_dims(prt_dims *out, int32_t nb, const int64_t *d);

/* Writes dims as "4096x4096" into buf and returns buf. */
const char *bench_dims_str(const prt_dims *d, char *buf, size_t size);

#endif /* PLUGRT_BENCH_H */

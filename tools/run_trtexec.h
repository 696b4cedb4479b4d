/*
 * What `plugrt run` does for trtexec's options that plugrt's own options do
 * not already say (cmd_run.c maps the others one to one):
 *
 *  - --minShapes/--optShapes/--maxShapes: an ONNX model is built with that
 *    range (run_build.h) and run at the opt shapes; a plan's profile must
 *    hold the range, and the run shapes must lie in it (run_trtexec_shapes).
 *  - --exportOutput=FILE: the outputs as trtexec writes them, a JSON array
 *    of {"name", "dimensions" ("1x1000"), "values" [...]}.
 *  - --avgRuns=N: the means of windows of N consecutive runs (bench.h),
 *    printed and in --json's document.
 */
#ifndef PLUGRT_TOOLS_RUN_TRTEXEC_H
#define PLUGRT_TOOLS_RUN_TRTEXEC_H

#include "bench.h"
#include "json.h"
#include "run_io.h"

/* trtexec's three shape lists (run_args holds them). */
typedef struct run_range {
    cli_shapes min, opt, max;
} run_range;

/* 1 if the lists give a range (a min or a max), not only opt shapes. */
int run_range_given(const run_range *r);
void run_range_free(run_range *r);

/* After the engine is built or loaded, before the inputs are bound: each
 * input the lists name (not a shape input, whose entries bound values)
 * runs at its opt shape (opt, else max, else min), added to *shapes where
 * neither --shapes nor a data file gives its shape; for a plan (`is_plan`),
 * each list's entry must lie in the plan's profile. Then every input's
 * shape to run at (its --shapes entry, else its data's dims) must lie in
 * `profile`. Prints what is wrong, naming the input, the shape and the
 * profile; CLI_USAGE for a list naming no input, CLI_FAIL otherwise. */
int run_trtexec_shapes(const run_range *r, const run_model *m, const prt_engine *engine,
                       int32_t profile, int is_plan, const run_inputs *in,
                       cli_shapes *shapes);

/* --exportOutput: context rc's outputs (fetched) to `path` as trtexec's
 * JSON: an array with an object per output, in the engine's order: "name",
 * "dimensions" (dims joined by 'x', "" for a scalar), "values" (C order;
 * float32 with the 9 significant digits that round-trip it, float16 and
 * bfloat16 as the float32 they widen to, integers and bools exact; a
 * non-finite value as null, since JSON has no NaN or infinity). CLI_FAIL
 * (printed) if the file cannot be written. */
int run_export_output(const run_ctx *rc, const char *path);

/* --avgRuns: the line of the window means (stdout), and with --json the
 * member "avg_runs". Nothing when stats->avg.runs is 0. */
void run_print_windows(const cli_bench_stats *stats);
void run_json_windows(json_writer *w, const cli_bench_stats *stats);

#endif /* PLUGRT_TOOLS_RUN_TRTEXEC_H */

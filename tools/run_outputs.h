/*
 * What `plugrt run` does with the outputs after the timed runs: lists each
 * output of context 0, writes it to DIR/output_<name>.npy (--output-dir),
 * checks that every other context computed the same bytes (--threads), and
 * compares it with a reference file (--compare DIR), element by element:
 * |got - ref| <= atol + rtol * |ref| (compare.h).
 */
#ifndef PLUGRT_TOOLS_RUN_OUTPUTS_H
#define PLUGRT_TOOLS_RUN_OUTPUTS_H

#include "run_io.h"

typedef struct run_output_opts {
    const char *output_dir;  /* --output-dir, or NULL */
    const char *compare_dir; /* --compare, or NULL */
    double atol, rtol;
    /* Whose tolerances: "the engine's fp16 defaults" (cli_precision_tolerance), or NULL
     * when --atol and --rtol gave them or the defaults are float32's. */
    const char *tol_for;
} run_output_opts;

/* The outputs of ctxs[0..nb_ctx) after run_ctx_fetch. Prints a line per
 * output and the verdict; CLI_FAIL if an output cannot be read or written,
 * a context's output differs from context 0's, or an output differs from
 * its reference (a missing reference is skipped with a note). */
int run_outputs_report(const run_ctx *ctxs, int nb_ctx, const run_output_opts *o);

#endif /* PLUGRT_TOOLS_RUN_OUTPUTS_H */

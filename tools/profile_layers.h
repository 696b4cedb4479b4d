/*
 * plugrt run --profile-layers: every layer's time in the timed runs, through
 * the runtime's profiler (prt_context_set_profiler), summarized as trtexec's
 * --dumpProfile does: per layer the median and mean time and the median's
 * share of the sum of medians, slowest first; and, with --profile-json FILE
 * or in plugrt run --json's document, the same as JSON for tools.
 *
 * One recorder per context: it skips the warm-up runs and keeps each layer's
 * time of every timed run; the summary pools the runs of every context.
 */
#ifndef PLUGRT_TOOLS_PROFILE_LAYERS_H
#define PLUGRT_TOOLS_PROFILE_LAYERS_H

#include "cli.h"
#include "json.h"

typedef struct cli_layer_recorder {
    int32_t nb_layers;
    int64_t warmup;     /* runs to skip; < 0: unknown (a warm-up duration), keep
                           the last `iterations` runs */
    int64_t iterations; /* runs to keep */
    int64_t run;        /* runs finished so far, warm-up included */
    int64_t *ns;        /* iterations x nb_layers */
} cli_layer_recorder;

/* Allocates the recorder for `engine`'s layers and installs it as the
 * context's profiler. CLI_FAIL (printed) on failure. */
int cli_layer_recorder_attach(cli_layer_recorder *r, prt_context *ctx,
                              const prt_engine *engine, int64_t warmup,
                              int64_t iterations);
void cli_layer_recorder_free(cli_layer_recorder *r);

/* Prints the table to stdout and, when json_path is set, writes the JSON
 * document there; when jw is set (plugrt run --json), the same document is
 * also its member "layer_profile". `run_median_ms` is the median latency
 * of a run, for the line that compares it with the layers' sum. CLI_FAIL
 * (printed) if the file cannot be written. */
int cli_layer_profile_print(const cli_layer_recorder *recs, int nb,
                            const prt_engine *engine, double run_median_ms,
                            const char *json_path, json_writer *jw);

#endif /* PLUGRT_TOOLS_PROFILE_LAYERS_H */

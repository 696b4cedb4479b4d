/*
 * How `plugrt run` builds the engine of an ONNX model: one optimization
 * profile fixed at the data it will run on. Each input's min = opt = max is
 * its --shapes entry, else the dims of its data file; a shape input's values
 * (a Reshape's shape, Range's bounds) are fixed at its data's, since random
 * values would size tensors at random. --compare-layers builds its engines
 * the same way (compare_layers.h).
 *
 * trtexec's --minShapes/--optShapes/--maxShapes with a min or a max give a
 * range instead, as `plugrt build` reads them (the same profile, so the same
 * plan): the inputs they name get that range (a shape input's entries bound
 * its values), the others are fixed at their --shapes entry or data as
 * above.
 */
#ifndef PLUGRT_TOOLS_RUN_BUILD_H
#define PLUGRT_TOOLS_RUN_BUILD_H

#include "run_io.h"

/* What of the run's options reaches the builder. */
typedef struct run_build_opts {
    const cli_shapes *shapes; /* --shapes: names must be network inputs */
    int32_t device;
    int32_t op_threads; /* --op-threads for autotuning; 0: the library's default */
    int linear_formats; /* --linear-formats */
    /* --minShapes, --optShapes, --maxShapes: NULL, or a range (min or max
     * not empty) */
    const cli_shapes *min, *opt, *max;
    uint32_t precision; /* PRT_PRECISION_*: --fp16, --bf16, --tf32 */
    int cpu_fallback;   /* --allow-cpu-fallback */
} run_build_opts;

/* Builds an imported network (only read) for o->device with the profile
 * above, taken from the inputs' data in `in`. Prints what is wrong and
 * returns the exit code: CLI_USAGE for a --shapes name that is no input of
 * the network. */
int run_build_network(const prt_network *net, const prt_registry *reg,
                      const run_inputs *in, const run_build_opts *o, prt_engine **out);

#endif /* PLUGRT_TOOLS_RUN_BUILD_H */

/*
 * `plugrt run --compare-layers`: every layer of an ONNX model run on the
 * device under test and, beside it, on a reference, compared tensor by
 * tensor in layer (topological) order; the first layer whose outputs differ
 * beyond tolerance is named with its op or plugin key, its inputs' shapes
 * and its worst element. This is how a user finds which plugin broke a
 * model.
 *
 * How (docs/DESIGN-NOTES.md, "The plugrt program", says why):
 *  - Every layer's outputs become network outputs on both sides
 *    (prt_network_layer_count, prt_network_mark_output), so each
 *    intermediate tensor lands in a buffer of its own that no later layer
 *    writes; tensors are matched by name.
 *  - The reference is plugrt on the CPU (the model imported again, without
 *    the --plugin-op mappings of ops plugrt imports itself, so a plugin that
 *    replaces a standard op is checked against plugrt's op), or ONNX
 *    Runtime through python3 and tools/ort_reference.py (carried inside
 *    the program), with every node output made a graph output.
 *  - Before the run every output buffer of the device under test is
 *    poisoned (bytes 0xFF: NaN in every float dtype), so an element a layer
 *    leaves unwritten differs.
 *  - A float element passes when |got - ref| <= atol + rtol * max|ref|,
 *    max|ref| being the largest finite magnitude in that reference tensor:
 *    activations change scale by orders of magnitude from layer to layer,
 *    so one absolute tolerance cannot serve them all. Integers and bools
 *    must match exactly.
 *  - Exposing a tensor does not change what an in-place layer (an output
 *    aliasing an input) does: the runtime copies the exposed input into the
 *    output's buffer and runs the layer in place there, so the plugin sees
 *    one buffer, as in the engine as built, and the input keeps its value.
 *    What exposing changes is only where tensors live: no arena is shared.
 */
#ifndef PLUGRT_TOOLS_COMPARE_LAYERS_H
#define PLUGRT_TOOLS_COMPARE_LAYERS_H

#include "model.h"
#include "run_io.h"

typedef enum cli_reference {
    CLI_REFERENCE_CPU = 0,
    CLI_REFERENCE_ONNXRUNTIME = 1
} cli_reference;

/* "cpu" or "onnxruntime"; a usage error otherwise. */
int cli_parse_reference(const char *opt, const char *s, int32_t *out);

/* Builds `net` (read only) for `device` with the profile `plugrt run` takes
 * from --shapes and the inputs; prints its errors. */
typedef int (*cli_layers_build_fn)(void *user, const prt_network *net, int32_t device,
                                   prt_engine **out);

typedef struct cli_layers_opts {
    const cli_model_args *m; /* the ONNX model, --plugin-op, --strict */
    const prt_registry *reg;
    int32_t device;    /* the device under test */
    int32_t reference; /* cli_reference */
    /* Tolerances for float tensors; < 0: the defaults per dtype. */
    double atol, rtol;
    int64_t memory_limit; /* per context; 0: none */
    /* Inputs: run_inputs_bind's arguments. */
    run_inputs *inputs;
    const cli_shapes *shapes;
    int random_inputs;
    uint64_t seed;
    cli_layers_build_fn build;
    void *build_user;
} cli_layers_opts;

/* Runs the comparison and prints the report. CLI_OK when every compared
 * layer agrees, CLI_FAIL when one differs or something fails (printed). */
int cli_compare_layers(const cli_layers_opts *o);

#endif /* PLUGRT_TOOLS_COMPARE_LAYERS_H */

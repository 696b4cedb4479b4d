/*
 * Inputs and outputs of `plugrt run`.
 *
 * Inputs come from, in order of precedence: --input name=file.npy; the
 * reference directory's input_<name>.npy (--compare DIR); random values
 * (--random-inputs). Outputs are bound per context to device memory of
 * their upper-bound size and copied to the host after the runs at their
 * true size (run_ctx below).
 */
#ifndef PLUGRT_TOOLS_RUN_IO_H
#define PLUGRT_TOOLS_RUN_IO_H

#include "cli.h"
#include "npy.h"
#include "options.h"

typedef struct run_input {
    char *name;    /* tensor name */
    char *path;    /* the .npy it came from; NULL for random data */
    int from_dir;  /* 1: found in the --compare directory */
    int used;      /* matched an engine input */
    npy_array arr; /* the data */
} run_input;

typedef struct run_inputs {
    run_input *items;
    int count;
} run_inputs;

/* Reads path as input `name` (replacing an earlier entry of that name).
 * Prints the error and returns CLI_FAIL on a bad file. */
int run_inputs_add_file(run_inputs *l, const char *name, const char *path, int from_dir);
/* Adds DIR/input_<name>.npy for every name not given yet. */
int run_inputs_scan_dir(run_inputs *l, const char *dir);
run_input *run_inputs_find(run_inputs *l, const char *name);
/* The entry for engine input `name`: by name, or a reference-directory
 * file named after the name made file-safe (cli_safe_name). */
run_input *run_inputs_match(const run_inputs *l, const char *name);
void run_inputs_free(run_inputs *l);
/* Prints the error for data of another dtype than input `name` takes. */
void run_input_dtype_error(const run_input *in, const char *name, int32_t want);

/* The engine's inputs and outputs as `plugrt run` needs them: read once
 * (cli_engine_io), so that every loop sees the same list. */
typedef struct run_model {
    prt_io_info *io; /* inputs first */
    int32_t nb_io, nb_inputs;
} run_model;

/* CLI_FAIL (printed) if the I/O cannot be read. */
int run_model_init(run_model *m, const prt_engine *engine);
void run_model_free(run_model *m);
/* Checks that every --shapes name is an input: a usage error naming the
 * first that is not (with the list of inputs). */
int run_model_check_shapes(const run_model *m, const cli_shapes *shapes);

/* Checks every input of the engine has data (making random data with the
 * seed when allowed), with the right dtype and a shape that fits the
 * engine's dims; notes files that match no input. The dims of random data
 * come from `shapes` (--shapes), else from `ctx` for an input whose profile
 * fixes its shape (min = max). Prints what is wrong and returns CLI_FAIL. */
int run_inputs_bind(run_inputs *l, const run_model *m, prt_context *ctx,
                    const cli_shapes *shapes, int random_allowed, uint64_t seed);

/* One output of one context: device memory of its upper-bound size (what
 * prt_context_get_tensor_shape gives before a run), and host memory the
 * result is copied to after the runs at its true size. */
typedef struct run_slot {
    const char *name; /* the engine's, borrowed */
    int32_t dtype;
    void *dev;      /* prt_device_malloc'd, bound to the context */
    void *host;     /* malloc'd, `bytes` long */
    uint64_t bytes; /* at the upper bound */
    prt_dims dims;  /* true dims, after run_ctx_fetch */
    int fetched;
} run_slot;

/* One execution context and its memory. Every device goes the same way: the
 * program owns device memory (prt_device_malloc, host memory on the CPU),
 * copies inputs into it on the context's stream and the results out of it,
 * so the path a GPU takes is the one every CPU test runs. */
typedef struct run_ctx {
    prt_context *ctx;
    int32_t device; /* the engine's */
    void *stream;   /* the context's own on CUDA; NULL on the CPU */
    void **in_dev;  /* per engine input: its device copy; NULL for a shape input */
    int32_t nb_in;
    run_slot *slots; /* one per engine output */
    int nb_slots;
} run_ctx;

/* A context of the engine on `profile`, its scratch memory bounded by
 * memory_limit bytes (0: no limit), with `threads` intra-op threads (0: the
 * library's default) and a stream of its own on a device that has
 * streams. */
int run_ctx_create(run_ctx *rc, const prt_engine *engine, int32_t profile,
                   int64_t memory_limit, int32_t threads);
/* 1: contexts may run the engine's kernel layers (--allow-embedded-kernels);
 * run_ctx_create passes it on. */
extern int run_allow_embedded_kernels;
/* Sets input shapes, copies each input's data into device memory on the
 * context's stream (a shape input, whose values the runtime reads on the
 * host, is bound to its host data instead) and binds every output to device
 * memory of its upper-bound size. The inputs must be bound. */
int run_ctx_bind(run_ctx *rc, const run_model *m, const run_inputs *inputs);
/* After the runs: each output's true dims (which waits for the stream) and
 * its data copied to host memory. */
int run_ctx_fetch(run_ctx *rc);
/* Waits for the stream, then frees everything. */
void run_ctx_destroy(run_ctx *rc);

/* After run_ctx_fetch: output i's true dims and host data. */
int run_ctx_output(const run_ctx *rc, int i, prt_dims *dims, const void **data);

#endif /* PLUGRT_TOOLS_RUN_IO_H */

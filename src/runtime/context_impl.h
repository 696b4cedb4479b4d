/*
 * The execution context (internal to src/runtime): context.c makes it and
 * answers its setters and queries, run.c runs it, shapes.c evaluates its
 * shapes, sizes.c keeps sizes on devices whose memory the host cannot read.
 *
 * Everything a run needs is allocated when the context is created (host
 * scratch in one block, the arena and workspace in one device allocation,
 * plugin clones), so enqueue allocates nothing. A run evaluates the engine's
 * shape program from the input shapes; sizes that depend on data are unknown
 * until their producer has run.
 *
 * Two ways to learn a size:
 *  - on a device whose memory is host memory (the CPU) the runtime reads it
 *    after its layer, checks it and evaluates the program again, so every
 *    later layer sees true dims;
 *  - elsewhere (CUDA) it stays on the device: a device kernel checks it and
 *    evaluates the size-dependent dims into device memory; later layers see
 *    upper bounds in `dims` and the true dims through `dims_device`, and the
 *    host learns them only when asked (prt_context_get_tensor_shape), or
 *    before a layer whose plugin needs true dims on the host.
 */
#ifndef PLUGRT_CONTEXT_IMPL_H
#define PLUGRT_CONTEXT_IMPL_H

#include "device/device.h"
#include "engine/engine_impl.h"
#include "network/network.h"

struct prt_context {
    const prt_engine *e;
    const dev_ops *dev; /* the engine's device */
    int32_t profile;
    int32_t nb_io;
    uint8_t *host_block;  /* every host array below, one allocation */
    prt_plugin **plugins; /* per layer, owned */

    prt_dims *input_dims;   /* per input */
    prt_dims *input_values; /* per input: a shape input's values */
    prt_dims *graph_values; /* per input: a shape input's values when the
                               graph was captured (nb_dims 0: none) */
    uint8_t *input_set;
    void **io_addr;                     /* per I/O index */
    const prt_output_allocator **alloc; /* per I/O index */
    void **alloc_mem;                   /* per I/O index: what the
                                           allocator last returned, passed
                                           back as `current` (plugrt.h) */
    void **staging;                     /* per I/O index: device memory for
                                           data-dependent outputs with an
                                           allocator */
    prt_dims *out_dims;                 /* per output: dims after a run */
    int ran;                            /* a run finished (or is queued) */
    int sizes_pending;                  /* out_dims of data-dependent
                                           outputs wait for the device */
    void *last_stream;                  /* the last run's stream */

    int external_memory;   /* the caller gives arena + workspace */
    uint8_t *device_block; /* arena then workspace, device memory (owned
                              unless external) */
    uint8_t *arena;
    uint8_t *workspace;
    void **tptr; /* per tensor: memory for this run */
    /* CPU fallback: the host copies of the tensors the engine's CPU layers
     * touch, then their workspace (e->host_size bytes, host memory; NULL
     * when the engine has no CPU layer). */
    uint8_t *host_mem;

    int64_t *values, *up_values, *size_values, *size_scratch;
    uint8_t *known, *up_known, *size_known, *known_scratch;
    int32_t *size_node;   /* per size id: its SIZE node */
    int32_t *size_tensor; /* per size id: the tensor holding it */
    int32_t *size_layer;  /* per size id: the layer writing it */
    int32_t *dep_layer;   /* per tensor: last layer whose size its dims
                             depend on, -1 if none */

    prt_tensor_desc *descs; /* scratch: one layer's inputs then outputs */
    const void **in_ptrs;
    void **out_ptrs;
    prt_tensor_desc *last; /* per layer, at last_off: shapes last told */
    int32_t *last_off;
    uint8_t *told; /* per layer: on_shape_change called once */

    /* What a run with the same shapes as the last one skips (shapes.c,
     * run.c; DESIGN-NOTES "The executor's per-layer cost"). seen_*: the
     * input dims, shape-input values and profile the last evaluation was
     * made from. same_shapes: this run's equal them. values_current: values/
     * known are the exact evaluation of them with no size known (only kept
     * for engines without sizes, whose runs never change values). Any
     * difference, prt_context_set_profile, or a failed evaluation clears
     * what depends on it. seen_sizes: the sizes the last run read on the
     * host; sizes_same: every size this run read so far equals it.
     * descs_current: a run of them queued every layer, so each steady
     * layer's `last` descriptors are what fill_descs would make now. A
     * steady layer (LAYER_STEADY) reads and writes only tensors whose dims
     * may depend on sizes of earlier layers, writes no size and runs on the
     * engine's device: its descriptors follow from the input shapes and,
     * when LAYER_SIZED (a tensor's dims depend on a size), from those
     * sizes, which the host knows before the layer only where it reads
     * them (not device_sizes). */
    prt_dims *seen_dims, *seen_values;
    int seen_valid, same_shapes, values_current, descs_current;
    uint8_t *layer_flags; /* per layer: LAYER_* */
    int64_t *seen_sizes;
    int sizes_same;

    /* Sizes on the device (sizes.c); device_sizes 0 when the device reads
     * them on the host. */
    int device_sizes;
    dev_sizes ds;               /* pointers into ds_block / ds_status */
    void *ds_block;             /* device memory */
    dev_size_status *ds_status; /* pinned host memory */
    int64_t *ds_host_sizes;     /* pinned host memory: sizes read back */
    int32_t *dims_off;          /* per tensor: its dims in ds.dims, or -1 */
    int32_t nb_leaves;
    int32_t *leaf_node;  /* per leaf: the node whose value it is */
    dev_size_args *args; /* scratch for one launch */
    int32_t first_dd_layer;

    /* A captured run (graphs): replayable while `gen` is what it was. */
    void *graph;
    uint64_t gen, graph_gen;
    int capturing;

    /* Intra-op threads: the pool installed for the enqueueing thread
     * during each run (NULL with one thread). */
    struct base_pool *pool;
    int32_t threads;
    /* The device (of the engine's kind) the context runs on: the engine's
     * (prt_engine_get_device_index). switch_device: the context makes it
     * current for each call and puts the caller's back, rather than fail
     * (prt_context_options.switch_device). */
    int32_t device_index;
    int32_t switch_device;

    /* prt_context_set_profiler; fn NULL: none. On a device with streams,
     * nb_layers + 1 events: before layer 0, then after each layer. */
    prt_profiler_fn profiler;
    void *profiler_user;
    void **prof_events;

    /* What its plugins get beside the device (resources.c), and the limit
     * their memory counts against with the arena and workspace
     * (prt_context_options.memory_limit; 0: none). */
    struct ctx_res *res;
    int64_t memory_limit;
};

/* context.layer_flags */
#define LAYER_STEADY 1u
#define LAYER_WRITES_SIZES 2u
#define LAYER_SIZED 4u

/* Size tensors are filled with this byte before their layer runs; still
 * reading so afterwards, the plugin did not write them. (Negative, so no
 * true size can be it.) */
#define RUN_SIZE_POISON 0x80
#define RUN_SIZE_UNWRITTEN32 0x80808080u
#define RUN_SIZE_UNWRITTEN64 0x8080808080808080ull

static inline int32_t ctx_io_tensor(const prt_engine *e, int32_t io)
{
    return io < e->nb_inputs ? e->input_tensors[io]
                             : e->output_tensors[io - e->nb_inputs];
}

/* shapes.c */
/* Current dims of tensor t from evaluated values: 1 and *out set, or 0
 * (*out untouched) if a dim is unknown. */
int ctx_tensor_dims(const prt_engine *e, int32_t t, const int64_t *values,
                    const uint8_t *known, prt_dims *out);
/* Shapes for a run: inputs set, sizes unknown, shape inputs read; the exact
 * dims, and with `upper` also every dim's upper bound. */
prt_status ctx_prepare_shapes(prt_context *c, int upper);
/* The program again from the sizes known now: exact values into
 * values/known, or with every unknown size at its upper bound into
 * up_values/up_known. */
/* PRT_ERR_STATE naming the input when a shape input's values (read from
 * its address now) are not those the graph was captured with: the graph
 * holds them as kernel arguments and the shapes made from them. */
prt_status ctx_check_graph_values(const prt_context *c);
/* 1 when a shape input's values (read from its address now) differ from
 * those the last evaluation read, or its address is unset: the shapes the
 * last run left are not this one's. */
int ctx_shape_values_changed(const prt_context *c);
prt_status ctx_eval_exact(prt_context *c);
prt_status ctx_eval_upper(prt_context *c);

/* context.c */
/* The engine's output dims after a run, from the known values; the sizes of
 * a device-side run are fetched first. */
prt_status ctx_resolve_outputs(prt_context *c);
/* Destroys the profiler's events, if any. */
void ctx_profiler_events_free(prt_context *c);

/* The context's device around one call (device_guard.c). Every call that
 * queues work or allocates on the device checks, once, that the calling
 * thread's current device is the context's: PRT_OK when it is (always on
 * a device kind of one device, the CPU); otherwise, with switch_device, it
 * makes the context's current and keeps the caller's in *saved for
 * ctx_device_leave, else fails with PRT_ERR_STATE naming both devices and
 * `what` (the call). *saved is -1 when nothing was switched. */
prt_status ctx_device_enter(const prt_context *c, const char *what, int32_t *saved);
/* Puts back the device ctx_device_enter (or ctx_device_check on d)
 * replaced (nothing for -1). */
void ctx_device_leave(const dev_ops *d, int32_t saved);
/* The same check for an engine and a context about to be made on it
 * (index: the engine's device). */
prt_status ctx_device_check(const dev_ops *d, int32_t index, int switch_device,
                            const char *what, int32_t *saved);

/* sizes.c */
/* Builds the device-side size plan when the engine has sizes and the
 * device keeps them (dev->eval_sizes); leaves device_sizes 0 otherwise. */
prt_status ctx_sizes_create(prt_context *c);
void ctx_sizes_destroy(prt_context *c);
/* After layer li enqueued: its sizes are checked and evaluated on the
 * device. */
prt_status ctx_sizes_launch(prt_context *c, int32_t li, void *stream);
/* Waits for the stream and brings every size written so far (layers < li;
 * all with li = nb_layers) to the host: size_values/size_known, then the
 * exact shapes. Reports a bound a plugin broke. */
prt_status ctx_sizes_fetch(prt_context *c, int32_t li, void *stream);

/* resources.c */
/* Makes the per-layer prt_plugin_resources (before attach_to_context) and
 * destroys them with everything plugins left in them: shared objects, then
 * memory (after every plugin of the context is destroyed). */
prt_status ctx_resources_create(prt_context *c);
void ctx_resources_destroy(prt_context *c);
/* What layer li's attach_to_context gets. */
prt_plugin_resources *ctx_resources_for(prt_context *c, int32_t li);
/* The error a plugin reported (report_error), as the calling thread's
 * error naming the layer, and cleared; PRT_OK when none. */
prt_status ctx_resources_take_error(prt_context *c);

#endif /* PLUGRT_CONTEXT_IMPL_H */

/*
 * The device interface (internal): everything the runtime, the builder's
 * tuner and the engine need from a device, as one table of functions per
 * device (in the spirit of ggml's backend buffer interface and IREE's HAL
 * device), chosen once from the engine's device with dev_get.
 *
 * Outside src/device/, no code allocates tensor memory or reads, writes,
 * copies or clears tensor data itself: it asks the engine's device. Ops and
 * plugins bring one kernel per device they support. Adding a device means
 * adding an implementation of this table (and kernels), not editing the
 * runtime or the builder.
 *
 * Memory. "Device memory" is where tensors live (on the CPU: host memory).
 * "Pinned host memory" is host memory the device copies to and from
 * asynchronously (on the CPU: plain host memory). Every dev alloc is aligned
 * to DEV_ALIGN bytes.
 *
 * Queues. A stream is the device's queue of work (a cudaStream_t on CUDA);
 * NULL is the device's default queue. Copies, memsets and event records are
 * ordered on their stream and may return before the work is done; they never
 * synchronize unless the name says so (stream_sync, event_sync, sync).
 * On the CPU every call completes before it returns.
 *
 * Errors. Functions returning prt_status set the calling thread's error
 * (base_error), naming the operation, the size and the device's reason.
 * Every function may be called from any thread; one stream must not be used
 * from two threads at once.
 */
#ifndef PLUGRT_DEVICE_H
#define PLUGRT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Alignment of every device allocation: enough for any vector access on
 * CPU and GPU, and the arena's tensor alignment (PLAN_ALIGN). */
#define DEV_ALIGN 256

/* Direction of a copy (the values of plugrt.h's prt_memcpy_kind). */
typedef enum dev_copy_kind {
    DEV_COPY_H2D = 0, /* host (pinned or not) to device */
    DEV_COPY_D2H = 1, /* device to host */
    DEV_COPY_D2D = 2  /* device to device */
} dev_copy_kind;

/* What a device is, for engines (built on, loaded on) and messages. */
typedef struct dev_info {
    char name[96];    /* "NVIDIA H200", "cpu" */
    int32_t cc_major; /* compute capability; 0 on the CPU */
    int32_t cc_minor;
    int32_t multiprocessors;
    int64_t memory_bytes;
} dev_info;

/* ---- sizes that stay on the device (dev_ops.eval_sizes) ----------------- */

/* The part of an engine's shape program that depends on size tensors, as a
 * device evaluates it after each layer that writes sizes, so that no value
 * goes to the host between layers. An operand code >= 0 is an earlier
 * entry of `nodes`; a code < 0 is leaf -(code + 1), a value the host knows
 * for the run (an input dim, a shape input's value, or anything computed
 * from them) and passes with each launch. */
typedef struct dev_node {
    int32_t kind; /* EXPR_CONST, EXPR_SIZE or EXPR_OP (expr.h values) */
    int32_t op;   /* prt_dim_op for EXPR_OP */
    int64_t imm;  /* the constant; the size id for EXPR_SIZE */
    int32_t a;    /* operand codes; for EXPR_SIZE, b is the upper bound */
    int32_t b;
} dev_node;

/* Leaves passed by value with each launch (a kernel parameter); engines
 * whose size-dependent dims need more fall back to host reads. */
#define DEV_MAX_LEAVES 192
/* Sizes one layer may write (a kernel parameter). */
#define DEV_MAX_NEW_SIZES 8

/* A violated bound, written by the device into pinned host memory and read
 * by the host when it next waits for the stream. */
typedef struct dev_size_status {
    int32_t failed; /* 0: every size was within its bounds; 1: one was not;
                       2: one was never written (it still holds the poison
                       the runtime filled it with, all bytes 0x80) */
    int32_t layer;
    int32_t size_id;
    int32_t pad;
    int64_t value;
    int64_t upper;
} dev_size_status;

/* Per context, in device memory unless said; made by the runtime. */
typedef struct dev_sizes {
    int32_t nb_nodes;
    const dev_node *nodes; /* [nb_nodes], in evaluation order */
    int32_t nb_sizes;
    const int32_t *producer; /* [nb_sizes]: the layer that writes each */
    int64_t *size_values;    /* [nb_sizes]: this run's values */
    int64_t *node_values;    /* [nb_nodes]: scratch */
    int32_t nb_dims;
    const int32_t *dim_code; /* [nb_dims]: operand code of each dim slot */
    int64_t *dims;           /* [nb_dims]: the dims_device arrays */
    dev_size_status *status; /* pinned host memory */
} dev_sizes;

/* One launch: layer `layer` has written sizes new_id[] at new_ptr[]. */
typedef struct dev_size_args {
    int32_t layer;
    int32_t first; /* 1 on the run's first launch: clears the status */
    int32_t nb_new;
    int32_t nb_leaves;
    int32_t new_id[DEV_MAX_NEW_SIZES];
    int32_t new_dtype[DEV_MAX_NEW_SIZES];
    const void *new_ptr[DEV_MAX_NEW_SIZES];
    int64_t leaves[DEV_MAX_LEAVES];
} dev_size_args;

typedef struct dev_ops {
    int32_t device;   /* prt_device */
    const char *name; /* "cpu", "cuda": for messages */
    /* 1 when device memory is host memory (the CPU): the host may read and
     * write it directly, so a host buffer (the engine's weights) serves as
     * device memory without a copy. */
    int32_t host_visible;

    /* Device memory of `bytes` (0 is valid), aligned to DEV_ALIGN, with
     * undefined contents. free accepts NULL. */
    prt_status (*alloc)(size_t bytes, void **out);
    void (*free)(void *p);
    /* Pinned host memory, aligned to DEV_ALIGN. free_host accepts NULL. */
    prt_status (*alloc_host)(size_t bytes, void **out);
    void (*free_host)(void *p);

    /* Copies `bytes` in the given direction, ordered on `stream`. The
     * buffers must not overlap. A D2H copy into memory that is not pinned
     * may complete before it returns. */
    prt_status (*copy)(void *dst, const void *src, size_t bytes, int32_t kind,
                       void *stream);
    /* Sets `bytes` bytes of device memory to `value`, ordered on `stream`. */
    prt_status (*memset)(void *dst, int32_t value, size_t bytes, void *stream);

    /* A new stream (never NULL on success) and its destruction (NULL ok). */
    prt_status (*stream_create)(void **out);
    void (*stream_destroy)(void *stream);
    /* Waits until all work queued on the stream is done. */
    prt_status (*stream_sync)(void *stream);

    /* Events mark a point in a stream, for timing. destroy accepts NULL. */
    prt_status (*event_create)(void **out);
    void (*event_destroy)(void *event);
    prt_status (*event_record)(void *event, void *stream);
    /* Waits until the work before the event's record is done. */
    prt_status (*event_sync)(void *event);
    /* Milliseconds between two recorded, completed events. */
    prt_status (*event_elapsed_ms)(void *start, void *end, double *out_ms);

    /* Waits until all work on the device is done. */
    prt_status (*sync)(void);

    /* The calling thread's current device (below). */
    prt_status (*info)(dev_info *out);

    /* ---- optional (NULL where the device has none) ----------------------- */

    /* Reads the new sizes of args->layer, checks each against its upper
     * bound (a violation is recorded in status and the value clamped, so
     * later kernels stay in bounds), and evaluates every node and dim slot,
     * with sizes not yet written at their upper bounds; ordered on
     * `stream`. NULL on a host-visible device, whose runtime reads sizes
     * directly. */
    prt_status (*eval_sizes)(const dev_sizes *s, const dev_size_args *args, void *stream);

    /* Graphs: records what is queued on `stream` between begin and end
     * (nothing runs) and instantiates it; launch replays it on a stream. */
    prt_status (*graph_begin)(void *stream);
    prt_status (*graph_end)(void *stream, void **out_graph);
    prt_status (*graph_launch)(void *graph, void *stream);
    void (*graph_destroy)(void *graph);

    /* Several devices of this kind (GPUs): how many there are, and which one
     * is the calling thread's current device, where every call above
     * allocates, copies and queues (CUDA: the runtime's current device). An
     * engine's weights and a context's memory stay on the device that was
     * current when they were made. NULL on a device kind with one device
     * (the CPU): count 1, index 0. set_current gets a valid index. */
    prt_status (*count)(int32_t *out);
    prt_status (*get_current)(int32_t *out);
    prt_status (*set_current)(int32_t index);
} dev_ops;

/* The implementation for a device (prt_device). PRT_ERR_UNSUPPORTED, naming
 * the device and what is missing (not built in, no driver, no GPU), when it
 * cannot be used on this machine; *out is then untouched. Implementations
 * have static storage. */
prt_status dev_get(int32_t device, const dev_ops **out);

/* "cpu", "cuda", or "device N" for an unknown value. Static storage. */
const char *dev_name(int32_t device);

/* Reads one int32 or int64 element (a size tensor's value) from device
 * memory into *out, waiting for `stream` first when the device's memory is
 * not host memory. On the CPU it is a load. */
prt_status dev_read_i64(const dev_ops *d, const void *src, int32_t dtype, int64_t *out,
                        void *stream);

/* The CPU implementation (cpu.c). */
extern const dev_ops dev_cpu_ops;
#ifdef PRT_HAVE_CUDA
/* The CUDA implementation (cuda.c): PRT_ERR_UNSUPPORTED naming the reason
 * (no driver, no GPU) when it cannot run here. */
prt_status dev_cuda_get(const dev_ops **out);
#endif

#endif /* PLUGRT_DEVICE_H */

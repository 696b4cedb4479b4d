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

/* Direction of a copy. */
typedef enum dev_copy_kind {
    DEV_COPY_H2D = 0, /* host (pinned or not) to device */
    DEV_COPY_D2H = 1, /* device to host */
    DEV_COPY_D2D = 2  /* device to device */
} dev_copy_kind;

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
prt_status dev_read_i64(const dev_ops *d, const void *src, int32_t dtype,
                        int64_t *out, void *stream);

/* The CPU implementation (cpu.c). */
extern const dev_ops dev_cpu_ops;

#endif /* PLUGRT_DEVICE_H */

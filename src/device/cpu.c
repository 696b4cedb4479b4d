/*
 * The CPU device: device memory is host memory, every operation completes
 * before it returns, and an event is the time at which it was recorded.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "device/device.h"

static prt_status cpu_alloc(size_t bytes, void **out)
{
    void *p = base_aligned_alloc(DEV_ALIGN, bytes);
    if (!p)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "cpu: out of memory allocating %zu bytes", bytes);
    *out = p;
    return PRT_OK;
}

static void cpu_free(void *p)
{
    base_aligned_free(p);
}

static prt_status cpu_copy(void *dst, const void *src, size_t bytes, int32_t kind,
                           void *stream)
{
    (void)kind, (void)stream;
    if (bytes)
        memcpy(dst, src, bytes);
    return PRT_OK;
}

static prt_status cpu_memset(void *dst, int32_t value, size_t bytes, void *stream)
{
    (void)stream;
    if (bytes)
        memset(dst, value, bytes);
    return PRT_OK;
}

/* The CPU has one queue, the calling thread; a stream is a token that is
 * never dereferenced. */
static char cpu_stream_token;

static prt_status cpu_stream_create(void **out)
{
    *out = &cpu_stream_token;
    return PRT_OK;
}

static void cpu_stream_destroy(void *stream)
{
    (void)stream;
}

static prt_status cpu_sync_stream(void *stream)
{
    (void)stream;
    return PRT_OK;
}

typedef struct cpu_event {
    struct timespec t;
} cpu_event;

static prt_status cpu_event_create(void **out)
{
    cpu_event *e = base_calloc(1, sizeof *e);
    if (!e)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "cpu: out of memory for an event");
    *out = e;
    return PRT_OK;
}

static void cpu_event_destroy(void *event)
{
    base_free(event);
}

static prt_status cpu_event_record(void *event, void *stream)
{
    (void)stream;
    clock_gettime(CLOCK_MONOTONIC, &((cpu_event *)event)->t);
    return PRT_OK;
}

static prt_status cpu_event_sync(void *event)
{
    (void)event;
    return PRT_OK;
}

static prt_status cpu_event_elapsed(void *start, void *end, double *out_ms)
{
    const struct timespec *a = &((const cpu_event *)start)->t;
    const struct timespec *b = &((const cpu_event *)end)->t;
    *out_ms =
        (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
    return PRT_OK;
}

static prt_status cpu_sync(void)
{
    return PRT_OK;
}

static prt_status cpu_info(dev_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "cpu");
    return PRT_OK;
}

const dev_ops dev_cpu_ops = {
    .device = PRT_DEVICE_CPU,
    .name = "cpu",
    .host_visible = 1,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .alloc_host = cpu_alloc,
    .free_host = cpu_free,
    .copy = cpu_copy,
    .memset = cpu_memset,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_sync = cpu_sync_stream,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_sync = cpu_event_sync,
    .event_elapsed_ms = cpu_event_elapsed,
    .sync = cpu_sync,
    .info = cpu_info,
};

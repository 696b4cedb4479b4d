/* The public device API (plugrt.h): thin, checked wrappers over dev_ops. */
#include <string.h>

#include "device/device.h"

/* The device's table, or an error naming the call. */
#define DEV_OR_FAIL(device, d, what)                                                     \
    do {                                                                                 \
        prt_status st_ = dev_get((device), &(d));                                        \
        if (st_)                                                                         \
            return base_error_prefix(st_, "%s", (what));                                 \
    } while (0)

/* For functions returning void: a device that is not usable has nothing to
 * free. */
static const dev_ops *dev_quiet(int32_t device)
{
    const dev_ops *d = NULL;
    return dev_get(device, &d) == PRT_OK ? d : NULL;
}

prt_status prt_device_check(int32_t device)
{
    const dev_ops *d;
    return dev_get(device, &d);
}

prt_status prt_device_count(int32_t device, int32_t *out)
{
    const dev_ops *d;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_device_count: out is NULL");
    DEV_OR_FAIL(device, d, "prt_device_count");
    if (!d->count) {
        *out = 1;
        return PRT_OK;
    }
    return d->count(out);
}

prt_status prt_device_get_current(int32_t device, int32_t *out)
{
    const dev_ops *d;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_device_get_current: out is NULL");
    DEV_OR_FAIL(device, d, "prt_device_get_current");
    if (!d->get_current) {
        *out = 0;
        return PRT_OK;
    }
    return d->get_current(out);
}

prt_status prt_device_set_current(int32_t device, int32_t index)
{
    const dev_ops *d;
    int32_t n = 1;
    prt_status st;
    DEV_OR_FAIL(device, d, "prt_device_set_current");
    if (d->count && (st = d->count(&n)))
        return st;
    if ((index < 0 || index >= n) && n == 1)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_device_set_current: %s has 1 device (index 0); there is "
                          "no device %d",
                          d->name, (int)index);
    if (index < 0 || index >= n)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_device_set_current: %s has %d devices (index 0 to %d); "
                          "there is no device %d",
                          d->name, (int)n, (int)(n - 1), (int)index);
    return d->set_current ? d->set_current(index) : PRT_OK;
}

prt_status prt_device_get_info(int32_t device, prt_device_info *out)
{
    const dev_ops *d;
    dev_info info;
    prt_device_info r;
    prt_status st;
    if (!out || out->struct_size < sizeof *out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_device_get_info: out is NULL or "
                          "its struct_size is not sizeof(prt_device_info)");
    DEV_OR_FAIL(device, d, "prt_device_get_info");
    st = d->info(&info);
    if (st)
        return st;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.device = device;
    memcpy(r.name, info.name, sizeof r.name);
    r.cc_major = info.cc_major;
    r.cc_minor = info.cc_minor;
    r.multiprocessors = info.multiprocessors;
    r.memory_bytes = info.memory_bytes;
    *out = r;
    return PRT_OK;
}

prt_status prt_device_malloc(int32_t device, size_t bytes, void **out)
{
    const dev_ops *d;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_device_malloc: out is NULL");
    DEV_OR_FAIL(device, d, "prt_device_malloc");
    return d->alloc(bytes, out);
}

void prt_device_free(int32_t device, void *p)
{
    const dev_ops *d = dev_quiet(device);
    if (d)
        d->free(p);
}

prt_status prt_device_malloc_host(int32_t device, size_t bytes, void **out)
{
    const dev_ops *d;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_device_malloc_host: out is NULL");
    DEV_OR_FAIL(device, d, "prt_device_malloc_host");
    return d->alloc_host(bytes, out);
}

void prt_device_free_host(int32_t device, void *p)
{
    const dev_ops *d = dev_quiet(device);
    if (d)
        d->free_host(p);
}

prt_status prt_device_memcpy(int32_t device, void *dst, const void *src, size_t bytes,
                             int32_t kind, void *stream)
{
    const dev_ops *d;
    if (kind < PRT_MEMCPY_HOST_TO_DEVICE || kind > PRT_MEMCPY_DEVICE_TO_DEVICE)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_device_memcpy: kind %d",
                          (int)kind);
    if (bytes && (!dst || !src))
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_device_memcpy: NULL buffer");
    DEV_OR_FAIL(device, d, "prt_device_memcpy");
    /* prt_memcpy_kind and dev_copy_kind share their values. */
    return d->copy(dst, src, bytes, kind, stream);
}

prt_status prt_device_memset(int32_t device, void *dst, int32_t value, size_t bytes,
                             void *stream)
{
    const dev_ops *d;
    if (bytes && !dst)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_device_memset: NULL buffer");
    DEV_OR_FAIL(device, d, "prt_device_memset");
    return d->memset(dst, value, bytes, stream);
}

prt_status prt_device_synchronize(int32_t device)
{
    const dev_ops *d;
    DEV_OR_FAIL(device, d, "prt_device_synchronize");
    return d->sync();
}

prt_status prt_stream_create(int32_t device, void **out)
{
    const dev_ops *d;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_stream_create: out is NULL");
    DEV_OR_FAIL(device, d, "prt_stream_create");
    return d->stream_create(out);
}

void prt_stream_destroy(int32_t device, void *stream)
{
    const dev_ops *d = dev_quiet(device);
    if (d)
        d->stream_destroy(stream);
}

prt_status prt_stream_synchronize(int32_t device, void *stream)
{
    const dev_ops *d;
    DEV_OR_FAIL(device, d, "prt_stream_synchronize");
    return d->stream_sync(stream);
}

prt_status prt_event_create(int32_t device, void **out)
{
    const dev_ops *d;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_event_create: out is NULL");
    DEV_OR_FAIL(device, d, "prt_event_create");
    return d->event_create(out);
}

void prt_event_destroy(int32_t device, void *event)
{
    const dev_ops *d = dev_quiet(device);
    if (d)
        d->event_destroy(event);
}

prt_status prt_event_record(int32_t device, void *event, void *stream)
{
    const dev_ops *d;
    if (!event)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_event_record: NULL event");
    DEV_OR_FAIL(device, d, "prt_event_record");
    return d->event_record(event, stream);
}

prt_status prt_event_synchronize(int32_t device, void *event)
{
    const dev_ops *d;
    if (!event)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_event_synchronize: NULL event");
    DEV_OR_FAIL(device, d, "prt_event_synchronize");
    return d->event_sync(event);
}

prt_status prt_event_elapsed_ms(int32_t device, void *start, void *end, double *out_ms)
{
    const dev_ops *d;
    if (!start || !end || !out_ms)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_event_elapsed_ms: NULL argument");
    DEV_OR_FAIL(device, d, "prt_event_elapsed_ms");
    return d->event_elapsed_ms(start, end, out_ms);
}

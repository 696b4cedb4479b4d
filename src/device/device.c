/* Choosing a device implementation; helpers over the table. */
#include <string.h>

#include "device/device.h"

const char *dev_name(int32_t device)
{
    switch (device) {
    case PRT_DEVICE_CPU:
        return "cpu";
    case PRT_DEVICE_CUDA:
        return "cuda";
    default:
        return "unknown device";
    }
}

prt_status dev_get(int32_t device, const dev_ops **out)
{
    switch (device) {
    case PRT_DEVICE_CPU:
        *out = &dev_cpu_ops;
        return PRT_OK;
    case PRT_DEVICE_CUDA:
#ifdef PRT_HAVE_CUDA
        return dev_cuda_get(out);
#else
        return base_error(PRT_ERR_UNSUPPORTED,
                          "device cuda: this build of plugrt has "
                          "no CUDA support (it was built without nvcc and the CUDA "
                          "toolkit)");
#endif
    default:
        return base_error(PRT_ERR_UNSUPPORTED, "device %d does not exist", (int)device);
    }
}

prt_status dev_read_i64(const dev_ops *d, const void *src, int32_t dtype, int64_t *out,
                        void *stream)
{
    union {
        int32_t i32;
        int64_t i64;
    } v;
    size_t n = dtype == PRT_INT32 ? sizeof v.i32 : sizeof v.i64;
    if (d->host_visible) {
        memcpy(&v, src, n);
    } else {
        prt_status st = d->copy(&v, src, n, DEV_COPY_D2H, stream);
        if (!st)
            st = d->stream_sync(stream);
        if (st)
            return st;
    }
    *out = dtype == PRT_INT32 ? (int64_t)v.i32 : v.i64;
    return PRT_OK;
}

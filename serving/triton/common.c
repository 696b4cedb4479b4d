/*
 * The helpers every part of the backend uses (common.h): errors, logging,
 * the clock, data types, shapes as text and the calling thread's GPU.
 */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

TRITONSERVER_Error *tp_error(TRITONSERVER_Error_Code code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return TRITONSERVER_ErrorNew(code, msg);
}

TRITONSERVER_Error *tp_prt_error(prt_status st, const char *what)
{
    TRITONSERVER_Error_Code code;
    switch (st) {
    case PRT_ERR_INVALID_ARGUMENT:
    case PRT_ERR_SHAPE:
    case PRT_ERR_MALFORMED:
        code = TRITONSERVER_ERROR_INVALID_ARG;
        break;
    case PRT_ERR_NOT_FOUND:
    case PRT_ERR_IO:
        code = TRITONSERVER_ERROR_NOT_FOUND;
        break;
    case PRT_ERR_UNSUPPORTED:
    case PRT_ERR_VERSION:
        code = TRITONSERVER_ERROR_UNSUPPORTED;
        break;
    case PRT_ERR_OUT_OF_MEMORY:
        code = TRITONSERVER_ERROR_UNAVAILABLE;
        break;
    case PRT_ERR_ALREADY_EXISTS:
        code = TRITONSERVER_ERROR_ALREADY_EXISTS;
        break;
    default:
        code = TRITONSERVER_ERROR_INTERNAL;
        break;
    }
    return tp_error(code, "%s: %s [%s]", what, prt_last_error(), prt_status_name(st));
}

void tp_log(TRITONSERVER_LogLevel level, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    TRITONSERVER_Error *err;
    if (!TRITONSERVER_LogIsEnabled(level))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    err = TRITONSERVER_LogMessage(level, __FILE__, __LINE__, msg);
    if (err)
        TRITONSERVER_ErrorDelete(err);
}

uint64_t tp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* plugrt dtype -> (Triton type, config name, protocol name). */
static const struct {
    int32_t prt, triton;
    const char *config, *protocol;
} tp_types[] = {
    {PRT_FLOAT32, TRITONSERVER_TYPE_FP32, "TYPE_FP32", "FP32"},
    {PRT_FLOAT16, TRITONSERVER_TYPE_FP16, "TYPE_FP16", "FP16"},
    {PRT_BFLOAT16, TRITONSERVER_TYPE_BF16, "TYPE_BF16", "BF16"},
    {PRT_INT8, TRITONSERVER_TYPE_INT8, "TYPE_INT8", "INT8"},
    {PRT_UINT8, TRITONSERVER_TYPE_UINT8, "TYPE_UINT8", "UINT8"},
    {PRT_INT32, TRITONSERVER_TYPE_INT32, "TYPE_INT32", "INT32"},
    {PRT_INT64, TRITONSERVER_TYPE_INT64, "TYPE_INT64", "INT64"},
    {PRT_BOOL, TRITONSERVER_TYPE_BOOL, "TYPE_BOOL", "BOOL"},
    {PRT_FLOAT64, TRITONSERVER_TYPE_FP64, "TYPE_FP64", "FP64"},
    {PRT_INT16, TRITONSERVER_TYPE_INT16, "TYPE_INT16", "INT16"},
    {PRT_UINT16, TRITONSERVER_TYPE_UINT16, "TYPE_UINT16", "UINT16"},
    {PRT_UINT32, TRITONSERVER_TYPE_UINT32, "TYPE_UINT32", "UINT32"},
    {PRT_UINT64, TRITONSERVER_TYPE_UINT64, "TYPE_UINT64", "UINT64"},
};
#define TP_NB_TYPES ((int)(sizeof tp_types / sizeof tp_types[0]))

int32_t tp_triton_dtype(int32_t dtype)
{
    for (int k = 0; k < TP_NB_TYPES; k++)
        if (tp_types[k].prt == dtype)
            return tp_types[k].triton;
    return TRITONSERVER_TYPE_INVALID;
}

int32_t tp_prt_dtype_of_config(const char *type_name)
{
    for (int k = 0; type_name && k < TP_NB_TYPES; k++)
        if (strcmp(tp_types[k].config, type_name) == 0)
            return tp_types[k].prt;
    return -1;
}

const char *tp_config_type_name(int32_t dtype)
{
    for (int k = 0; k < TP_NB_TYPES; k++)
        if (tp_types[k].prt == dtype)
            return tp_types[k].config;
    return "TYPE_INVALID";
}

const char *tp_triton_dtype_name(int32_t triton_dtype)
{
    static const char *const names[] = {"INVALID", "BOOL", "UINT8", "UINT16", "UINT32",
                                        "UINT64",  "INT8", "INT16", "INT32",  "INT64",
                                        "FP16",    "FP32", "FP64",  "BYTES",  "BF16"};
    if (triton_dtype < 0 || triton_dtype >= (int32_t)(sizeof names / sizeof names[0]))
        return "INVALID";
    return names[triton_dtype];
}

void tp_dims_str(const prt_dims *d, char *buf, size_t size)
{
    size_t o = 0;
    int n;
    buf[0] = 0;
    n = snprintf(buf, size, "[");
    o = n > 0 ? (size_t)n : 0;
    for (int32_t k = 0; k < d->nb_dims && o < size; k++) {
        n = snprintf(buf + o, size - o, "%s%lld", k ? ", " : "", (long long)d->d[k]);
        if (n < 0)
            break;
        o += (size_t)n;
    }
    if (o < size)
        snprintf(buf + o, size - o, "]");
}

TRITONSERVER_Error *tp_device_enter(int32_t device, int32_t index, int32_t *saved)
{
    prt_status st;
    char what[96];
    *saved = -1;
    if (device != PRT_DEVICE_CUDA)
        return NULL;
    if ((st = prt_device_get_current(device, saved))) {
        *saved = -1;
        return tp_prt_error(st, "reading the thread's current GPU");
    }
    if (*saved == index) {
        *saved = -1; /* nothing to put back */
        return NULL;
    }
    if ((st = prt_device_set_current(device, index))) {
        *saved = -1;
        snprintf(what, sizeof what, "making GPU %d current", (int)index);
        return tp_prt_error(st, what);
    }
    return NULL;
}

void tp_device_leave(int32_t device, int32_t saved)
{
    if (device == PRT_DEVICE_CUDA && saved >= 0 &&
        prt_device_set_current(device, saved) != PRT_OK)
        tp_log(TRITONSERVER_LOG_WARN, "cannot make GPU %d current again: %s", (int)saved,
               prt_last_error());
}

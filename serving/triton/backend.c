/*
 * The backend's entry points (what the server looks up in
 * libtriton_plugrt.so) and the helpers every part uses: errors, logging,
 * clocks and data types.
 */
#include "backend.h"

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

/* plugrt's log goes to the server's log. */
static void tp_prt_log(void *user, int32_t severity, const char *message)
{
    TRITONSERVER_LogLevel level = severity == PRT_SEV_ERROR     ? TRITONSERVER_LOG_ERROR
                                  : severity == PRT_SEV_WARNING ? TRITONSERVER_LOG_WARN
                                  : severity == PRT_SEV_INFO    ? TRITONSERVER_LOG_INFO
                                                             : TRITONSERVER_LOG_VERBOSE;
    (void)user;
    tp_log(level, "plugrt: %s", message);
}

/* ---- entry points ------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend)
{
    uint32_t major = 0, minor = 0;
    const char *name = "";
    TRITONSERVER_Error *err = TRITONBACKEND_ApiVersion(&major, &minor);
    if (err)
        return err;
    if ((err = TRITONBACKEND_BackendName(backend, &name)))
        return err;
    if (major != TP_TRITONBACKEND_API_MAJOR || minor < TP_TRITONBACKEND_API_MINOR)
        return tp_error(
            TRITONSERVER_ERROR_UNSUPPORTED,
            "backend '%s' (plugrt %s) needs Triton backend API %d.%d or a later "
            "1.x; this server speaks %u.%u",
            name, prt_version_string(), TP_TRITONBACKEND_API_MAJOR,
            TP_TRITONBACKEND_API_MINOR, major, minor);
    /* Once, before any model loads: prt_set_logger is not safe against
     * concurrent logging. */
    prt_set_logger(tp_prt_log, NULL,
                   TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE) ? PRT_SEV_VERBOSE
                                                                       : PRT_SEV_INFO);
    tp_log(TRITONSERVER_LOG_INFO, "backend '%s': plugrt %s, Triton backend API %u.%u",
           name, prt_version_string(), major, minor);
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend)
{
    (void)backend;
    prt_set_logger(NULL, NULL, PRT_SEV_ERROR);
    return NULL;
}

TRITONSERVER_Error *
TRITONBACKEND_GetBackendAttribute(TRITONBACKEND_Backend *backend,
                                  TRITONBACKEND_BackendAttribute *backend_attributes)
{
    (void)backend;
    /* A model that names no instance group runs on the CPU on every
     * machine, as plugrt builds for the CPU unless told otherwise (the
     * server would pick KIND_GPU where there is a GPU); KIND_GPU is asked
     * for in the configuration. */
    return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
        backend_attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 0, NULL, 0);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model)
{
    tp_model *m = NULL;
    TRITONSERVER_Error *err = tp_model_create(model, &m);
    if (err)
        return err;
    if ((err = TRITONBACKEND_ModelSetState(model, m)))
        tp_model_destroy(m);
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelState(model, &state);
    if (err)
        return err;
    tp_model_destroy(state);
    return NULL;
}

TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance *instance)
{
    TRITONBACKEND_Model *model = NULL;
    void *state = NULL;
    tp_instance *inst = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceModel(instance, &model);
    if (!err)
        err = TRITONBACKEND_ModelState(model, &state);
    if (!err)
        err = tp_instance_create(state, instance, &inst);
    if (!err && (err = TRITONBACKEND_ModelInstanceSetState(instance, inst)))
        tp_instance_destroy(inst);
    return err;
}

TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance *instance)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceState(instance, &state);
    if (err)
        return err;
    tp_instance_destroy(state);
    return NULL;
}

TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance *instance,
                                   TRITONBACKEND_Request **requests,
                                   const uint32_t request_count)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceState(instance, &state);
    /* An error here leaves the requests with the server, which answers
     * them; from here on every request is answered and released. */
    if (err)
        return err;
    tp_instance_execute(state, requests, request_count);
    return NULL;
}

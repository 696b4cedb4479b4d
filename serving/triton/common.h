/*
 * What the backend's parts share (common.c): errors and log messages in the
 * server's terms, its clock for statistics, the data types of plugrt and
 * Triton and their names, shapes as text, and the calling thread's GPU.
 *
 * GPUs: an engine and a context live on one GPU. A request's run needs no
 * bracketing: the instance's context makes its GPU current for each run
 * (prt_context_options.switch_device), and copies and waits on its stream
 * work from any current GPU. Loading a model and making or freeing an
 * instance allocate through the device API, which allocates on the calling
 * thread's current GPU: those make the GPU current first (tp_device_enter)
 * and restore the server's afterwards.
 */
#ifndef PLUGRT_TRITON_COMMON_H
#define PLUGRT_TRITON_COMMON_H

#include "plugrt/plugrt.h"
#include "triton_api.h"

/* A server error with a printf-style message (NULL when even that fails:
 * the server then reports success, so callers pass only real errors). */
TRITONSERVER_Error *tp_error(TRITONSERVER_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A server error for a failed plugrt call: "<what>: <prt_last_error()>". */
TRITONSERVER_Error *tp_prt_error(prt_status st, const char *what);
void tp_log(TRITONSERVER_LogLevel level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Steady-clock nanoseconds, as the statistics want them. */
uint64_t tp_now_ns(void);

/* Triton's data type for a plugrt dtype and back (INVALID / -1 if none);
 * config names ("TYPE_FP32") and protocol names ("FP32"). */
int32_t tp_triton_dtype(int32_t dtype);
int32_t tp_prt_dtype_of_config(const char *type_name);
const char *tp_config_type_name(int32_t dtype);
const char *tp_triton_dtype_name(int32_t triton_dtype);
void tp_dims_str(const prt_dims *d, char *buf, size_t size);

/* Makes GPU `index` the calling thread's current device when `device` is
 * CUDA (every allocation for an engine on that GPU needs it), keeping the
 * one it replaces in *saved; tp_device_leave puts that back, so the
 * server's threads keep their own. Nothing on the CPU. */
TRITONSERVER_Error *tp_device_enter(int32_t device, int32_t index, int32_t *saved);
void tp_device_leave(int32_t device, int32_t saved);

#endif /* PLUGRT_TRITON_COMMON_H */

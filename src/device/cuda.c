/*
 * The CUDA device: the CUDA runtime API (linked statically, so libplugrt
 * loads where there is no driver; the runtime opens the driver on first use).
 * Streams are cudaStream_t, events cudaEvent_t, graphs cudaGraphExec_t.
 * Device memory is cudaMalloc'd (aligned to at least 256 bytes), pinned host
 * memory cudaMallocHost'd (reachable from kernels through unified virtual
 * addressing). The device is the calling thread's current one
 * (cudaSetDevice; count, get_current, set_current).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "device/device.h"

/* Records a CUDA failure: "<what>: <CUDA's message> (<name>)". */
/* A failed runtime call also leaves its error as the thread's last error,
 * where the next kernel launch's check (cudaGetLastError) would find it and
 * blame that kernel: a GPU index that is not there, or an allocation that did
 * not fit, failed that call alone. Consumed here; a sticky error (the context
 * is lost) stays and is reported by every later call, as it must be. */
static prt_status cuda_fail(cudaError_t err, prt_status status, const char *what)
{
    (void)cudaGetLastError();
    return base_error(status, "cuda: %s: %s (%s)", what, cudaGetErrorString(err),
                      cudaGetErrorName(err));
}

#define CUDA_TRY(call, status, what)                                                     \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess)                                                         \
            return cuda_fail(err_, (status), (what));                                    \
    } while (0)

static prt_status cu_alloc(size_t bytes, void **out)
{
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        char what[64];
        snprintf(what, sizeof what, "allocating %zu bytes of device memory", bytes);
        return cuda_fail(err, PRT_ERR_OUT_OF_MEMORY, what);
    }
    *out = p;
    return PRT_OK;
}

static void cu_free(void *p)
{
    if (p)
        cudaFree(p);
}

static prt_status cu_alloc_host(size_t bytes, void **out)
{
    void *p = NULL;
    cudaError_t err = cudaMallocHost(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        char what[64];
        snprintf(what, sizeof what, "allocating %zu bytes of pinned memory", bytes);
        return cuda_fail(err, PRT_ERR_OUT_OF_MEMORY, what);
    }
    *out = p;
    return PRT_OK;
}

static void cu_free_host(void *p)
{
    if (p)
        cudaFreeHost(p);
}

static prt_status cu_copy(void *dst, const void *src, size_t bytes, int32_t kind,
                          void *stream)
{
    static const enum cudaMemcpyKind kinds[] = {
        cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice};
    if (kind < 0 || kind > DEV_COPY_D2D)
        return base_error(PRT_ERR_INTERNAL, "cuda: copy kind %d", (int)kind);
    if (!bytes)
        return PRT_OK;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kinds[kind], (cudaStream_t)stream),
             PRT_ERR_INTERNAL, "copy");
    return PRT_OK;
}

static prt_status cu_memset(void *dst, int32_t value, size_t bytes, void *stream)
{
    if (!bytes)
        return PRT_OK;
    CUDA_TRY(cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream), PRT_ERR_INTERNAL,
             "memset");
    return PRT_OK;
}

static prt_status cu_stream_create(void **out)
{
    cudaStream_t s;
    CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), PRT_ERR_INTERNAL,
             "creating a stream");
    *out = s;
    return PRT_OK;
}

static void cu_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

static prt_status cu_stream_sync(void *stream)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream), PRT_ERR_INTERNAL,
             "waiting for a stream");
    return PRT_OK;
}

static prt_status cu_event_create(void **out)
{
    cudaEvent_t e;
    CUDA_TRY(cudaEventCreate(&e), PRT_ERR_INTERNAL, "creating an event");
    *out = e;
    return PRT_OK;
}

static void cu_event_destroy(void *event)
{
    if (event)
        cudaEventDestroy((cudaEvent_t)event);
}

static prt_status cu_event_record(void *event, void *stream)
{
    CUDA_TRY(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), PRT_ERR_INTERNAL,
             "recording an event");
    return PRT_OK;
}

static prt_status cu_event_sync(void *event)
{
    CUDA_TRY(cudaEventSynchronize((cudaEvent_t)event), PRT_ERR_INTERNAL,
             "waiting for an event");
    return PRT_OK;
}

static prt_status cu_event_elapsed(void *start, void *end, double *out_ms)
{
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)end),
             PRT_ERR_INTERNAL, "timing events");
    *out_ms = ms;
    return PRT_OK;
}

static prt_status cu_sync(void)
{
    CUDA_TRY(cudaDeviceSynchronize(), PRT_ERR_INTERNAL, "waiting for the device");
    return PRT_OK;
}

static prt_status cu_info(dev_info *out)
{
    struct cudaDeviceProp prop;
    int dev = 0;
    CUDA_TRY(cudaGetDevice(&dev), PRT_ERR_UNSUPPORTED, "the current device");
    CUDA_TRY(cudaGetDeviceProperties(&prop, dev), PRT_ERR_UNSUPPORTED,
             "the device's properties");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%.95s", prop.name);
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->multiprocessors = prop.multiProcessorCount;
    out->memory_bytes = (int64_t)prop.totalGlobalMem;
    return PRT_OK;
}

static prt_status cu_graph_begin(void *stream)
{
    CUDA_TRY(
        cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal),
        PRT_ERR_STATE, "beginning a graph capture");
    return PRT_OK;
}

static prt_status cu_graph_end(void *stream, void **out_graph)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaError_t err = cudaStreamEndCapture((cudaStream_t)stream, &g);
    if (err != cudaSuccess)
        return cuda_fail(err, PRT_ERR_STATE, "ending a graph capture");
    err = cudaGraphInstantiate(&x, g, 0);
    cudaGraphDestroy(g);
    if (err != cudaSuccess)
        return cuda_fail(err, PRT_ERR_INTERNAL, "instantiating a graph");
    *out_graph = x;
    return PRT_OK;
}

static prt_status cu_graph_launch(void *graph, void *stream)
{
    CUDA_TRY(cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)stream),
             PRT_ERR_INTERNAL, "launching a graph");
    return PRT_OK;
}

static void cu_graph_destroy(void *graph)
{
    if (graph)
        cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

static int probe_count;

static prt_status cu_count(int32_t *out)
{
    *out = probe_count;
    return PRT_OK;
}

static prt_status cu_get_current(int32_t *out)
{
    int dev = 0;
    CUDA_TRY(cudaGetDevice(&dev), PRT_ERR_INTERNAL, "the current device");
    *out = dev;
    return PRT_OK;
}

static prt_status cu_set_current(int32_t index)
{
    char what[64];
    cudaError_t err = cudaSetDevice(index);
    if (err == cudaSuccess)
        return PRT_OK;
    snprintf(what, sizeof what, "making GPU %d the current device", (int)index);
    return cuda_fail(err, PRT_ERR_INTERNAL, what);
}

/* cuda_kernels.cu */
extern int dev_cuda_eval_sizes_launch(const dev_sizes *s, const dev_size_args *args,
                                      void *stream);

static prt_status cu_eval_sizes(const dev_sizes *s, const dev_size_args *args,
                                void *stream)
{
    CUDA_TRY((cudaError_t)dev_cuda_eval_sizes_launch(s, args, stream), PRT_ERR_INTERNAL,
             "evaluating sizes on the device");
    return PRT_OK;
}

static const dev_ops cuda_ops = {
    .device = PRT_DEVICE_CUDA,
    .name = "cuda",
    .host_visible = 0,
    .alloc = cu_alloc,
    .free = cu_free,
    .alloc_host = cu_alloc_host,
    .free_host = cu_free_host,
    .copy = cu_copy,
    .memset = cu_memset,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_sync = cu_stream_sync,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_sync = cu_event_sync,
    .event_elapsed_ms = cu_event_elapsed,
    .sync = cu_sync,
    .info = cu_info,
    .eval_sizes = cu_eval_sizes,
    .graph_begin = cu_graph_begin,
    .graph_end = cu_graph_end,
    .graph_launch = cu_graph_launch,
    .graph_destroy = cu_graph_destroy,
    .count = cu_count,
    .get_current = cu_get_current,
    .set_current = cu_set_current,
};

/* Whether CUDA works here is found once: the first call opens the driver. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static cudaError_t probe_err = cudaSuccess;

static void probe(void)
{
    probe_err = cudaGetDeviceCount(&probe_count);
    if (probe_err == cudaSuccess && probe_count == 0)
        probe_err = cudaErrorNoDevice;
}

prt_status dev_cuda_get(const dev_ops **out)
{
    pthread_once(&probe_once, probe);
    if (probe_err != cudaSuccess)
        return base_error(
            PRT_ERR_UNSUPPORTED, "device cuda is not usable here: %s (%s)%s",
            cudaGetErrorString(probe_err), cudaGetErrorName(probe_err),
            probe_err == cudaErrorInsufficientDriver || probe_err == cudaErrorNoDevice
                ? "; this machine has no NVIDIA GPU or driver it can use"
                : "");
    *out = &cuda_ops;
    return PRT_OK;
}

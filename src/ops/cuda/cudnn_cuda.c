/*
 * cuDNN's legacy convolution API for Conv on CUDA (cudnn.h), opened on
 * first use (dlopen) as cuBLAS is (blas_cuda.c), so libplugrt loads where
 * cuDNN is absent (DESIGN-NOTES, "Vendor libraries"): the builder then
 * lists no cuDNN tactic and the own kernels run.
 *
 * An object (a Conv of one context) owns a handle and its three
 * descriptors; they are set again only when the convolution's shapes
 * change, so a run at unchanged shapes makes host calls that allocate
 * nothing (cudnnSetStream, cudnnConvolutionForward), which graph capture
 * requires. The workspace is the layer's (declared to the planner through
 * the tactic, nn_cuda.c), never cuDNN's own.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "ops/cuda/cudnn.h"

typedef cudnnStatus_t (*create_fn)(cudnnHandle_t *);
typedef cudnnStatus_t (*destroy_fn)(cudnnHandle_t);
typedef cudnnStatus_t (*set_stream_fn)(cudnnHandle_t, cudaStream_t);
typedef const char *(*error_string_fn)(cudnnStatus_t);
typedef cudnnStatus_t (*create_tensor_fn)(cudnnTensorDescriptor_t *);
typedef cudnnStatus_t (*destroy_tensor_fn)(cudnnTensorDescriptor_t);
typedef cudnnStatus_t (*set_tensor_fn)(cudnnTensorDescriptor_t, cudnnDataType_t, int,
                                       const int[], const int[]);
typedef cudnnStatus_t (*create_filter_fn)(cudnnFilterDescriptor_t *);
typedef cudnnStatus_t (*destroy_filter_fn)(cudnnFilterDescriptor_t);
typedef cudnnStatus_t (*set_filter_fn)(cudnnFilterDescriptor_t, cudnnDataType_t,
                                       cudnnTensorFormat_t, int, const int[]);
typedef cudnnStatus_t (*create_conv_fn)(cudnnConvolutionDescriptor_t *);
typedef cudnnStatus_t (*destroy_conv_fn)(cudnnConvolutionDescriptor_t);
typedef cudnnStatus_t (*set_conv_fn)(cudnnConvolutionDescriptor_t, int, const int[],
                                     const int[], const int[], cudnnConvolutionMode_t,
                                     cudnnDataType_t);
typedef cudnnStatus_t (*set_groups_fn)(cudnnConvolutionDescriptor_t, int);
typedef cudnnStatus_t (*set_math_fn)(cudnnConvolutionDescriptor_t, cudnnMathType_t);
typedef cudnnStatus_t (*out_dim_fn)(const cudnnConvolutionDescriptor_t,
                                    const cudnnTensorDescriptor_t,
                                    const cudnnFilterDescriptor_t, int, int[]);
typedef cudnnStatus_t (*get_algo_fn)(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                     const cudnnFilterDescriptor_t,
                                     const cudnnConvolutionDescriptor_t,
                                     const cudnnTensorDescriptor_t, const int, int *,
                                     cudnnConvolutionFwdAlgoPerf_t *);
typedef cudnnStatus_t (*ws_size_fn)(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                    const cudnnFilterDescriptor_t,
                                    const cudnnConvolutionDescriptor_t,
                                    const cudnnTensorDescriptor_t,
                                    cudnnConvolutionFwdAlgo_t, size_t *);
typedef cudnnStatus_t (*forward_fn)(cudnnHandle_t, const void *,
                                    const cudnnTensorDescriptor_t, const void *,
                                    const cudnnFilterDescriptor_t, const void *,
                                    const cudnnConvolutionDescriptor_t,
                                    cudnnConvolutionFwdAlgo_t, void *, size_t,
                                    const void *, const cudnnTensorDescriptor_t, void *);

static struct {
    void *lib;
    char error[256];
    create_fn create;
    destroy_fn destroy;
    set_stream_fn set_stream;
    error_string_fn error_string;
    create_tensor_fn create_tensor;
    destroy_tensor_fn destroy_tensor;
    set_tensor_fn set_tensor;
    create_filter_fn create_filter;
    destroy_filter_fn destroy_filter;
    set_filter_fn set_filter;
    create_conv_fn create_conv;
    destroy_conv_fn destroy_conv;
    set_conv_fn set_conv;
    set_groups_fn set_groups;
    set_math_fn set_math;
    out_dim_fn out_dim;
    get_algo_fn get_algo;
    ws_size_fn ws_size;
    forward_fn forward;
} dnn;
static pthread_once_t dnn_once = PTHREAD_ONCE_INIT;

/* dlsym into a function pointer (POSIX lets void * convert); 0 if absent. */
#define DNN_SYM(field, name) (*(void **)&dnn.field = dlsym(dnn.lib, name)) != NULL

static void dnn_load(void)
{
    /* cuDNN 9's libcudnn.so.9 is the shim that exports the whole legacy
     * API and loads the sub-libraries (cnn, ops, engines) itself. */
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so",
                                        "/usr/local/cuda/lib64/libcudnn.so.9",
                                        "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"};
    int ok;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !dnn.lib; i++)
        dnn.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!dnn.lib) {
        snprintf(dnn.error, sizeof dnn.error,
                 "cuDNN is not installed or not on the library path (%s)", dlerror());
        return;
    }
    ok = DNN_SYM(create, "cudnnCreate") && DNN_SYM(destroy, "cudnnDestroy") &&
         DNN_SYM(set_stream, "cudnnSetStream") &&
         DNN_SYM(error_string, "cudnnGetErrorString") &&
         DNN_SYM(create_tensor, "cudnnCreateTensorDescriptor") &&
         DNN_SYM(destroy_tensor, "cudnnDestroyTensorDescriptor") &&
         DNN_SYM(set_tensor, "cudnnSetTensorNdDescriptor") &&
         DNN_SYM(create_filter, "cudnnCreateFilterDescriptor") &&
         DNN_SYM(destroy_filter, "cudnnDestroyFilterDescriptor") &&
         DNN_SYM(set_filter, "cudnnSetFilterNdDescriptor") &&
         DNN_SYM(create_conv, "cudnnCreateConvolutionDescriptor") &&
         DNN_SYM(destroy_conv, "cudnnDestroyConvolutionDescriptor") &&
         DNN_SYM(set_conv, "cudnnSetConvolutionNdDescriptor") &&
         DNN_SYM(set_groups, "cudnnSetConvolutionGroupCount") &&
         DNN_SYM(set_math, "cudnnSetConvolutionMathType") &&
         DNN_SYM(out_dim, "cudnnGetConvolutionNdForwardOutputDim") &&
         DNN_SYM(get_algo, "cudnnGetConvolutionForwardAlgorithm_v7") &&
         DNN_SYM(ws_size, "cudnnGetConvolutionForwardWorkspaceSize") &&
         DNN_SYM(forward, "cudnnConvolutionForward");
    if (!ok) {
        snprintf(dnn.error, sizeof dnn.error,
                 "the cuDNN found lacks the legacy convolution functions plugrt needs "
                 "(cuDNN 9 is)");
        dlclose(dnn.lib);
        dnn.lib = NULL;
    }
}

int opk_dnn_available(char *why, size_t cap)
{
    pthread_once(&dnn_once, dnn_load);
    if (!dnn.lib && why && cap)
        snprintf(why, cap, "%s", dnn.error);
    return dnn.lib != NULL;
}

const char *opk_dnn_algo_name(int32_t algo)
{
    static const char *const names[OPK_DNN_ALGOS] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    return algo >= 0 && algo < OPK_DNN_ALGOS ? names[algo] : NULL;
}

struct opk_dnn {
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    opk_dnn_conv set; /* what the descriptors describe */
    int have_set;
};

/* An error naming the cuDNN call and its status. */
static prt_status dnn_fail(const char *call, cudnnStatus_t s)
{
    return base_error(s == CUDNN_STATUS_NOT_SUPPORTED ? PRT_ERR_UNSUPPORTED
                                                      : PRT_ERR_INTERNAL,
                      "cuDNN %s: %s", call, dnn.error_string(s));
}

prt_status opk_dnn_open(opk_dnn **out)
{
    opk_dnn *h;
    cudnnStatus_t s;
    if (!opk_dnn_available(NULL, 0))
        return base_error(PRT_ERR_UNSUPPORTED, "cuDNN: %s", dnn.error);
    h = base_calloc(1, sizeof *h);
    if (!h)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "cuDNN: out of memory");
    s = dnn.create(&h->handle);
    if (s != CUDNN_STATUS_SUCCESS) {
        base_free(h);
        return dnn_fail("cudnnCreate", s);
    }
    /* Each descriptor is NULL until made, so close frees what was. */
    if ((s = dnn.create_tensor(&h->x)) != CUDNN_STATUS_SUCCESS ||
        (s = dnn.create_tensor(&h->y)) != CUDNN_STATUS_SUCCESS ||
        (s = dnn.create_filter(&h->w)) != CUDNN_STATUS_SUCCESS ||
        (s = dnn.create_conv(&h->conv)) != CUDNN_STATUS_SUCCESS) {
        prt_status st = dnn_fail("creating a descriptor", s);
        opk_dnn_close(h);
        return st;
    }
    *out = h;
    return PRT_OK;
}

void opk_dnn_close(opk_dnn *h)
{
    if (!h)
        return;
    if (h->conv)
        dnn.destroy_conv(h->conv);
    if (h->w)
        dnn.destroy_filter(h->w);
    if (h->y)
        dnn.destroy_tensor(h->y);
    if (h->x)
        dnn.destroy_tensor(h->x);
    dnn.destroy(h->handle);
    base_free(h);
}

/* Packed strides of n dims. */
static void packed(const int *dims, int n, int *strides)
{
    int s = 1;
    for (int i = n - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* Sets the descriptors for c unless they describe it already. */
static prt_status dnn_describe(opk_dnn *h, const opk_dnn_conv *c)
{
    /* cuDNN takes 4-D or 5-D tensors: a 1-D convolution is a 2-D one of
     * height 1 (kernel 1, stride 1, no padding there). */
    const int lead = c->ns == 1 ? 1 : 0, nsp = c->ns + lead, nd = nsp + 2;
    const cudnnDataType_t type =
        c->dtype == PRT_FLOAT32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
    int xd[5], yd[5], wd[5], xs[5], ys[5], pad[3], str[3], dil[3], got[5];
    cudnnMathType_t math;
    cudnnStatus_t s;
    if (h->have_set && memcmp(&h->set, c, sizeof *c) == 0)
        return PRT_OK;
    h->have_set = 0;
    if (c->ns < 1 || c->ns > 3 || c->G < 1 || c->C % c->G || c->M % c->G)
        return base_error(PRT_ERR_UNSUPPORTED, "cuDNN: %d spatial dims, %lld groups",
                          (int)c->ns, (long long)c->G);
    /* cuDNN's descriptors take int: every dim and element count. */
    if (c->N * c->C > INT32_MAX / 2 || c->N * c->M > INT32_MAX / 2)
        return base_error(PRT_ERR_UNSUPPORTED, "cuDNN: the tensors are too large");
    xd[0] = yd[0] = (int)c->N;
    xd[1] = (int)c->C;
    yd[1] = wd[0] = (int)c->M;
    wd[1] = (int)(c->C / c->G);
    for (int i = 0; i < nsp; i++) {
        const int j = i - lead; /* the Conv's spatial dim, -1 the added one */
        xd[2 + i] = j < 0 ? 1 : (int)c->in[j];
        yd[2 + i] = j < 0 ? 1 : (int)c->out[j];
        wd[2 + i] = j < 0 ? 1 : (int)c->k[j];
        pad[i] = j < 0 ? 0 : (int)c->p[j];
        str[i] = j < 0 ? 1 : (int)c->s[j];
        dil[i] = j < 0 ? 1 : (int)c->d[j];
    }
    packed(xd, nd, xs);
    packed(yd, nd, ys);
    /* Float32 compute for 16-bit data too (cuDNN's PSEUDO_HALF_CONFIG):
     * products accumulate in float32, as the CPU's kernel does. */
    if ((s = dnn.set_tensor(h->x, type, nd, xd, xs)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetTensorNdDescriptor (X)", s);
    if ((s = dnn.set_tensor(h->y, type, nd, yd, ys)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetTensorNdDescriptor (Y)", s);
    if ((s = dnn.set_filter(h->w, type, CUDNN_TENSOR_NCHW, nd, wd)) !=
        CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetFilterNdDescriptor (W)", s);
    /* ONNX's Conv is a cross-correlation (no kernel flip). */
    if ((s = dnn.set_conv(h->conv, nsp, pad, str, dil, CUDNN_CROSS_CORRELATION,
                          CUDNN_DATA_FLOAT)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetConvolutionNdDescriptor", s);
    if ((s = dnn.set_groups(h->conv, (int)c->G)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetConvolutionGroupCount", s);
    /* Float32 stays float32 (FMA kernels) unless TF32 is allowed; 16-bit
     * data may use tensor cores, whose products are exact and sums
     * float32. */
    math = c->dtype != PRT_FLOAT32   ? CUDNN_TENSOR_OP_MATH
           : c->math == OPK_DNN_TF32 ? CUDNN_DEFAULT_MATH
                                     : CUDNN_FMA_MATH;
    if ((s = dnn.set_math(h->conv, math)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetConvolutionMathType", s);
    /* The output dims cuDNN computes must be the Conv's (they are with
     * symmetric pads; anything else is a bug of the caller). */
    if ((s = dnn.out_dim(h->conv, h->x, h->w, nd, got)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnGetConvolutionNdForwardOutputDim", s);
    if (memcmp(got, yd, sizeof(int) * (size_t)nd) != 0)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuDNN computes other output dims for this convolution");
    h->set = *c;
    h->have_set = 1;
    return PRT_OK;
}

prt_status opk_dnn_algos(opk_dnn *h, const opk_dnn_conv *c, int32_t *algos, int64_t *ws,
                         int32_t cap, int32_t *n)
{
    cudnnConvolutionFwdAlgoPerf_t perf[OPK_DNN_ALGOS];
    int got = 0;
    cudnnStatus_t s;
    prt_status st = dnn_describe(h, c);
    *n = 0;
    if (st)
        return st;
    memset(perf, 0, sizeof perf);
    s = dnn.get_algo(h->handle, h->x, h->w, h->conv, h->y, OPK_DNN_ALGOS, &got, perf);
    if (s != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnGetConvolutionForwardAlgorithm_v7", s);
    for (int i = 0; i < got && i < OPK_DNN_ALGOS && *n < cap; i++) {
        size_t bytes = 0;
        int dup = 0;
        /* Unsupported ones come back with their status; an algorithm may
         * also be listed once per math type. */
        if (perf[i].status != CUDNN_STATUS_SUCCESS || (int)perf[i].algo < 0 ||
            (int)perf[i].algo >= OPK_DNN_ALGOS)
            continue;
        for (int32_t k = 0; k < *n; k++)
            dup |= algos[k] == (int32_t)perf[i].algo;
        /* The workspace as the run will ask for it (perf's memory may be
         * for another math type). */
        if (dup || dnn.ws_size(h->handle, h->x, h->w, h->conv, h->y, perf[i].algo,
                               &bytes) != CUDNN_STATUS_SUCCESS)
            continue;
        algos[*n] = (int32_t)perf[i].algo;
        ws[*n] = (int64_t)bytes;
        (*n)++;
    }
    return PRT_OK;
}

prt_status opk_dnn_forward(opk_dnn *h, const opk_dnn_conv *c, int32_t algo, const void *x,
                           const void *w, void *y, void *ws, int64_t ws_bytes,
                           void *stream)
{
    const float one = 1.0f, zero = 0.0f; /* float scalars: float32 compute */
    size_t need = 0;
    cudnnStatus_t s;
    prt_status st;
    if (algo < 0 || algo >= OPK_DNN_ALGOS)
        return base_error(PRT_ERR_UNSUPPORTED, "cuDNN: no algorithm %d", (int)algo);
    st = dnn_describe(h, c);
    if (st)
        return st;
    s = dnn.ws_size(h->handle, h->x, h->w, h->conv, h->y, (cudnnConvolutionFwdAlgo_t)algo,
                    &need);
    if (s != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnGetConvolutionForwardWorkspaceSize", s);
    if ((int64_t)need > ws_bytes || (need && !ws))
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuDNN's %s needs %lld bytes of workspace at these shapes, "
                          "the layer has %lld",
                          opk_dnn_algo_name(algo), (long long)need, (long long)ws_bytes);
    if ((s = dnn.set_stream(h->handle, (cudaStream_t)stream)) != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnSetStream", s);
    s = dnn.forward(h->handle, &one, h->x, x, h->w, w, h->conv,
                    (cudnnConvolutionFwdAlgo_t)algo, need ? ws : NULL, need, &zero, h->y,
                    y);
    if (s != CUDNN_STATUS_SUCCESS)
        return dnn_fail("cudnnConvolutionForward", s);
    return PRT_OK;
}

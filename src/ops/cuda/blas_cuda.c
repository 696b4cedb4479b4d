/*
 * cuBLAS for the built-in ops' matrix products on CUDA, opened on first use
 * (dlopen), so libplugrt loads where cuBLAS is absent (DESIGN-NOTES) and a
 * missing cuBLAS is a clear error at the first CUDA MatMul.
 *
 * Each user (a MatMul or Gemm object of one context) owns a handle and a
 * workspace of its own, made and freed by the CUDA table's attach and
 * detach (op_device.h): a handle's stream and workspace are per call
 * state, and contexts run concurrently on their own streams. The workspace
 * comes from the device (src/device/) and is set on every call, so cuBLAS
 * allocates nothing itself, which graph capture requires.
 *
 * Precision (issue 24). Every handle is set to CUBLAS_DEFAULT_MATH, so a
 * float32 product is strict float32 (cublasSgemmStridedBatched) unless the
 * engine was built with PRT_PRECISION_TF32: an object whose
 * op_object.precision has it (op_set_precision, op_const.h) gets a handle
 * that runs float32 through cublasGemmStridedBatchedEx with
 * CUBLAS_COMPUTE_32F_FAST_TF32. 16-bit inputs go to
 * cublasGemmStridedBatchedEx as they are (CUDA_R_16F / CUDA_R_16BF, tensor
 * cores) with CUBLAS_COMPUTE_32F: float32 sums, as the CPU's kernels.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "device/device.h"
#include "ops/cuda/blas.h"
#include "ops/cuda/lt.h"
#include "ops/cuda/ops.h"
#include "ops/op_device.h"

/* Enough for cuBLAS's single-precision kernels on Hopper. */
#define OPK_BLAS_WORKSPACE ((size_t)8 << 20)

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*destroy_fn)(cublasHandle_t);
typedef cublasStatus_t (*set_stream_fn)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*set_workspace_fn)(cublasHandle_t, void *, size_t);
typedef cublasStatus_t (*sgemm_batched_fn)(cublasHandle_t, cublasOperation_t,
                                           cublasOperation_t, int, int, int,
                                           const float *, const float *, int, long long,
                                           const float *, int, long long, const float *,
                                           float *, int, long long, int);
typedef cublasStatus_t (*gemm_ex_batched_fn)(cublasHandle_t, cublasOperation_t,
                                             cublasOperation_t, int, int, int,
                                             const void *, const void *, cudaDataType,
                                             int, long long, const void *, cudaDataType,
                                             int, long long, const void *, void *,
                                             cudaDataType, int, long long, int,
                                             cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*set_math_mode_fn)(cublasHandle_t, cublasMath_t);
typedef const char *(*status_string_fn)(cublasStatus_t);

static struct {
    void *lib;
    char error[256];
    create_fn create;
    destroy_fn destroy;
    set_stream_fn set_stream;
    set_workspace_fn set_workspace;
    sgemm_batched_fn sgemm_batched;
    gemm_ex_batched_fn gemm_ex_batched;
    set_math_mode_fn set_math_mode;
    status_string_fn status_string;
} blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_load(void)
{
    static const char *const names[] = {
        "libcublas.so.13", "libcublas.so.12", "libcublas.so",
        "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.lib; i++)
        blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) {
        snprintf(blas.error, sizeof blas.error,
                 "cuBLAS is not installed or not on the "
                 "library path (%s)",
                 dlerror());
        return;
    }
    /* dlsym returns void *; POSIX lets it convert to a function pointer. */
    *(void **)&blas.create = dlsym(blas.lib, "cublasCreate_v2");
    *(void **)&blas.destroy = dlsym(blas.lib, "cublasDestroy_v2");
    *(void **)&blas.set_stream = dlsym(blas.lib, "cublasSetStream_v2");
    *(void **)&blas.set_workspace = dlsym(blas.lib, "cublasSetWorkspace_v2");
    *(void **)&blas.sgemm_batched = dlsym(blas.lib, "cublasSgemmStridedBatched");
    *(void **)&blas.gemm_ex_batched = dlsym(blas.lib, "cublasGemmStridedBatchedEx");
    *(void **)&blas.set_math_mode = dlsym(blas.lib, "cublasSetMathMode");
    *(void **)&blas.status_string = dlsym(blas.lib, "cublasGetStatusString");
    if (!blas.create || !blas.destroy || !blas.set_stream || !blas.set_workspace ||
        !blas.sgemm_batched || !blas.gemm_ex_batched || !blas.set_math_mode) {
        snprintf(blas.error, sizeof blas.error,
                 "the cuBLAS found lacks the functions "
                 "plugrt needs");
        dlclose(blas.lib);
        blas.lib = NULL;
    }
}

static const char *status_name(cublasStatus_t s)
{
    return blas.status_string ? blas.status_string(s) : "cuBLAS error";
}

struct opk_blas {
    cublasHandle_t handle;
    void *workspace;
    size_t workspace_size; /* 0: none (cuBLAS then uses none either) */
    const dev_ops *dev;    /* which allocated the workspace */
    int tf32;              /* float32 products may use TF32 (PRT_PRECISION_TF32) */
    int lt16;   /* 16-bit products through cuBLASLt too (unless PRT_CUDA_LT16=0) */
    opk_lt *lt; /* cuBLASLt on the same workspace (products with a bias); NULL: none */
};

/* PRT_CUDA_BIAS_EPILOGUE=pass: no cuBLASLt epilogue (opk_blas_gemm_bias
 * refuses). */
static int bias_pass_asked(void)
{
    const char *env = getenv("PRT_CUDA_BIAS_EPILOGUE");
    return env && strcmp(env, "pass") == 0;
}

/* 16-bit products go through cuBLASLt's epilogue too (opk_blas_gemm_bias)
 * unless PRT_CUDA_LT16=0 (cuBLAS into float32 and a pass: the before of a
 * benchmark, in one run). */
static int lt16_asked(void)
{
    const char *env = getenv("PRT_CUDA_LT16");
    return !env || strcmp(env, "0") != 0;
}

prt_status opk_blas_open(opk_blas **out, int with_workspace)
{
    const dev_ops *dev;
    opk_blas *b;
    cublasStatus_t s;
    prt_status st;
    pthread_once(&blas_once, blas_load);
    if (!blas.lib)
        return base_error(PRT_ERR_UNSUPPORTED, "matrix products on CUDA need cuBLAS: %s",
                          blas.error);
    st = dev_get(PRT_DEVICE_CUDA, &dev);
    if (st)
        return st;
    b = base_calloc(1, sizeof *b);
    if (!b)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "cuBLAS: out of memory");
    s = blas.create(&b->handle);
    /* Explicitly: no TF32 unless the engine asked for it (b->tf32). */
    if (s == CUBLAS_STATUS_SUCCESS) {
        s = blas.set_math_mode(b->handle, CUBLAS_DEFAULT_MATH);
        if (s != CUBLAS_STATUS_SUCCESS)
            blas.destroy(b->handle);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        base_free(b);
        return base_error(PRT_ERR_INTERNAL, "cuBLAS: creating a handle: %s",
                          status_name(s));
    }
    /* Through the device, as every allocation of device memory. */
    st = with_workspace ? dev->alloc(OPK_BLAS_WORKSPACE, &b->workspace) : PRT_OK;
    if (st) {
        char why[256];
        snprintf(why, sizeof why, "%s", prt_last_error());
        blas.destroy(b->handle);
        base_free(b);
        return base_error(st, "cuBLAS: its workspace: %s", why);
    }
    b->workspace_size = with_workspace ? OPK_BLAS_WORKSPACE : 0;
    b->dev = dev;
    b->lt16 = lt16_asked();
    /* The bias epilogue's handle, where cuBLASLt is: without it the
     * products with a bias take cuBLAS and a pass of their own (as they
     * do with PRT_CUDA_BIAS_EPILOGUE=pass: benchmarks compare the two in
     * one run). */
    if (with_workspace && !opk_lt_unavailable() && !bias_pass_asked() &&
        opk_lt_open_shared(&b->lt, b->workspace, b->workspace_size) != PRT_OK) {
        b->lt = NULL;
        base_clear_error();
    }
    *out = b;
    return PRT_OK;
}

void opk_blas_close(opk_blas *b)
{
    if (!b)
        return;
    opk_lt_close(b->lt);
    blas.destroy(b->handle);
    if (b->workspace)
        b->dev->free(b->workspace);
    base_free(b);
}

int opk_blas_capturing(void *stream)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing((cudaStream_t)stream, &st) == cudaSuccess &&
           st != cudaStreamCaptureStatusNone;
}

void opk_blas_set_tf32(opk_blas *b, int on)
{
    if (b)
        b->tf32 = on != 0;
}

static cudaDataType cuda_type(int32_t dtype)
{
    return dtype == PRT_FLOAT16    ? CUDA_R_16F
           : dtype == PRT_BFLOAT16 ? CUDA_R_16BF
                                   : CUDA_R_32F;
}

prt_status opk_blas_gemm_ex(opk_blas *b, void *stream, int32_t ab_dtype, int32_t c_dtype,
                            int32_t trans_a, int32_t trans_b, int64_t M, int64_t N,
                            int64_t K, const void *A, int64_t lda, int64_t stride_a,
                            const void *B, int64_t ldb, int64_t stride_b, void *C,
                            int64_t ldc, int64_t stride_c, int64_t batch)
{
    const float one = 1.0f, zero = 0.0f;
    const size_t csize = prt_dtype_size(c_dtype);
    cublasStatus_t s;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || lda > INT32_MAX ||
        ldb > INT32_MAX || ldc > INT32_MAX || batch > INT32_MAX)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuBLAS: a matrix product of %lld x %lld x "
                          "%lld (batch %lld) is too large",
                          (long long)M, (long long)N, (long long)K, (long long)batch);
    if (M == 0 || N == 0 || batch == 0)
        return PRT_OK;
    if (K == 0) {
        /* An empty sum: zeros (cuBLAS refuses the leading dims 0 that
         * K = 0 gives A or B). */
        cudaError_t e = cudaSuccess;
        for (int64_t k = 0; k < batch && e == cudaSuccess; k++)
            for (int64_t i = 0; i < M && e == cudaSuccess; i += ldc == N ? M : 1)
                e = cudaMemsetAsync((char *)C + (size_t)(k * stride_c + i * ldc) * csize,
                                    0, csize * (size_t)(ldc == N ? M * N : N),
                                    (cudaStream_t)stream);
        return e == cudaSuccess
                   ? PRT_OK
                   : base_error(PRT_ERR_INTERNAL, "cuBLAS: zeroing an empty product: %s",
                                cudaGetErrorString(e));
    }
    s = blas.set_stream(b->handle, (cudaStream_t)stream);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = blas.set_workspace(b->handle, b->workspace, b->workspace_size);
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
    if (s == CUBLAS_STATUS_SUCCESS && ab_dtype == PRT_FLOAT32 && c_dtype == PRT_FLOAT32 &&
        !b->tf32)
        s = blas.sgemm_batched(b->handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                               trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M,
                               (int)K, &one, (const float *)B, (int)ldb, stride_b,
                               (const float *)A, (int)lda, stride_a, &zero, (float *)C,
                               (int)ldc, stride_c, (int)batch);
    else if (s == CUBLAS_STATUS_SUCCESS)
        s = blas.gemm_ex_batched(
            b->handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B,
            cuda_type(ab_dtype), (int)ldb, stride_b, A, cuda_type(ab_dtype), (int)lda,
            stride_a, &zero, C, cuda_type(c_dtype), (int)ldc, stride_c, (int)batch,
            ab_dtype == PRT_FLOAT32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        return base_error(
            PRT_ERR_INTERNAL, "cuBLAS gemm (%s, %lld x %lld x %lld, batch %lld%s): %s",
            prt_dtype_name(ab_dtype), (long long)M, (long long)N, (long long)K,
            (long long)batch, ab_dtype == PRT_FLOAT32 && b->tf32 ? ", TF32" : "",
            status_name(s));
    return PRT_OK;
}

prt_status opk_blas_gemm(opk_blas *b, void *stream, int32_t trans_a, int32_t trans_b,
                         int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         int64_t stride_a, const float *B, int64_t ldb, int64_t stride_b,
                         float *C, int64_t ldc, int64_t stride_c, int64_t batch)
{
    return opk_blas_gemm_ex(b, stream, PRT_FLOAT32, PRT_FLOAT32, trans_a, trans_b, M, N,
                            K, A, lda, stride_a, B, ldb, stride_b, C, ldc, stride_c,
                            batch);
}

prt_status opk_blas_gemm_bias(opk_blas *b, void *stream, int32_t dtype, int32_t trans_a,
                              int32_t trans_b, int64_t M, int64_t N, int64_t K,
                              float alpha, const void *A, int64_t lda, int64_t stride_a,
                              const void *B, int64_t ldb, int64_t stride_b,
                              const void *bias, int relu, void *Y, int64_t batch)
{
    if (!b || !b->lt)
        return base_error(PRT_ERR_UNSUPPORTED, "no cuBLASLt handle: %s",
                          b && opk_lt_unavailable() ? opk_lt_unavailable()
                                                    : "a handle without a workspace");
    if (dtype != PRT_FLOAT32 && !b->lt16)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "16-bit products through cuBLASLt are off (PRT_CUDA_LT16=0)");
    return opk_lt_gemm_float(b->lt, stream, dtype, b->tf32, trans_a, trans_b, M, N, K,
                             alpha, A, lda, stride_a, B, ldb, stride_b, bias, relu, Y,
                             batch);
}

prt_status opc_blas_attach(op_object *o, void *stream)
{
    if (o->kern[PRT_DEVICE_CUDA] && o->kern[PRT_DEVICE_CUDA]->resources == 3)
        return opc_conv_attach(o, stream);
    if (stream && opk_blas_capturing(stream))
        return base_error(PRT_ERR_STATE, "needs a cuBLAS handle, which cannot be made "
                                         "during a graph capture");
    if (o->kern[PRT_DEVICE_CUDA] && o->kern[PRT_DEVICE_CUDA]->resources == 4)
        return opc_qmm_attach(o);
    /* resources 2: a handle without a workspace (Conv's pointwise
     * products, one per Conv of a context: 8 MiB each would add up). */
    prt_status st = opk_blas_open((opk_blas **)&o->res[PRT_DEVICE_CUDA],
                                  !o->kern[PRT_DEVICE_CUDA] ||
                                      o->kern[PRT_DEVICE_CUDA]->resources != 2);
    if (!st)
        opk_blas_set_tf32(o->res[PRT_DEVICE_CUDA],
                          (o->precision & PRT_PRECISION_TF32) != 0);
    return st;
}

void opc_blas_detach(op_object *o)
{
    if (o->kern[PRT_DEVICE_CUDA] && o->kern[PRT_DEVICE_CUDA]->resources == 3) {
        opc_conv_detach(o);
        return;
    }
    if (o->kern[PRT_DEVICE_CUDA] && o->kern[PRT_DEVICE_CUDA]->resources == 4) {
        opc_qmm_detach(o);
        return;
    }
    opk_blas_close(o->res[PRT_DEVICE_CUDA]);
    o->res[PRT_DEVICE_CUDA] = NULL;
}

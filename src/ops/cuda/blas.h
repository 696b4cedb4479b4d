/*
 * cuBLAS for the built-in ops (blas_cuda.c; CUDA builds only): a handle
 * plus a workspace per user, opened on first use.
 */
#ifndef PLUGRT_OPS_CUDA_BLAS_H
#define PLUGRT_OPS_CUDA_BLAS_H

#include "base/base.h"

typedef struct opk_blas opk_blas;

/* Opens cuBLAS (first call) and makes a handle, with its workspace when
 * with_workspace (else cuBLAS is told to use none) and then, where
 * cuBLASLt loads, a cuBLASLt handle on the same workspace
 * (opk_blas_gemm_bias).
 * PRT_ERR_UNSUPPORTED naming the reason when cuBLAS cannot be loaded. Not
 * during a stream capture: it allocates device memory. */
prt_status opk_blas_open(opk_blas **out, int with_workspace);
void opk_blas_close(opk_blas *b);
/* 1 if `stream` is being captured into a graph. */
int opk_blas_capturing(void *stream);
/* 1: float32 products of this handle may use TF32 tensor cores
 * (CUBLAS_COMPUTE_32F_FAST_TF32); 0 (as opened): strict float32. The
 * attach of the CUDA table sets it from op_object.precision. */
void opk_blas_set_tf32(opk_blas *b, int on);
/* Row-major C[M x N] = op(A) op(B) for `batch` matrices at the given
 * element strides, on `stream`: A and B of ab_dtype (float32, float16 or
 * bfloat16), C of c_dtype (float32 or ab_dtype), float32 sums
 * (cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F; float32 with the
 * handle's TF32 as above); leading dims and strides in elements, as
 * BLAS's. */
prt_status opk_blas_gemm_ex(opk_blas *b, void *stream, int32_t ab_dtype, int32_t c_dtype,
                            int32_t trans_a, int32_t trans_b, int64_t M, int64_t N,
                            int64_t K, const void *A, int64_t lda, int64_t stride_a,
                            const void *B, int64_t ldb, int64_t stride_b, void *C,
                            int64_t ldc, int64_t stride_c, int64_t batch);
/* Row-major Y[M x N] = act(alpha op(A) op(B) + bias) with A, B, bias and
 * Y of dtype (float32, float16 or bfloat16) through cuBLASLt's epilogue on
 * the handle's workspace (lt.h's opk_lt_gemm_float: bias NULL or N values
 * per row, act ReLU where relu, float32 sums rounded once, the handle's
 * TF32 for float32), for `batch` products of A and B at their element
 * strides (0: one shared) and Y's M x N apart. PRT_ERR_UNSUPPORTED,
 * nothing launched, where the handle has no cuBLASLt (none installed, no
 * workspace) or cuBLASLt refuses the product, and for 16-bit dtypes where
 * PRT_CUDA_LT16=0 was set when the handle was opened: the caller then runs
 * cuBLAS and its own pass. */
prt_status opk_blas_gemm_bias(opk_blas *b, void *stream, int32_t dtype, int32_t trans_a,
                              int32_t trans_b, int64_t M, int64_t N, int64_t K,
                              float alpha, const void *A, int64_t lda, int64_t stride_a,
                              const void *B, int64_t ldb, int64_t stride_b,
                              const void *bias, int relu, void *Y, int64_t batch);
/* The same for float32 throughout. */
prt_status opk_blas_gemm(opk_blas *b, void *stream, int32_t trans_a, int32_t trans_b,
                         int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         int64_t stride_a, const float *B, int64_t ldb, int64_t stride_b,
                         float *C, int64_t ldc, int64_t stride_c, int64_t batch);

#endif /* PLUGRT_OPS_CUDA_BLAS_H */

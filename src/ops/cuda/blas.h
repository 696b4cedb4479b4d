/*
 * cuBLAS for the built-in ops (blas_cuda.c; CUDA builds only): a handle
 * plus a workspace per user, opened on first use.
 */
#ifndef PLUGRT_OPS_CUDA_BLAS_H
#define PLUGRT_OPS_CUDA_BLAS_H

#include "base/base.h"

typedef struct opk_blas opk_blas;

/* Opens cuBLAS (first call) and makes a handle, with its workspace when
 * with_workspace (else cuBLAS is told to use none).
 * PRT_ERR_UNSUPPORTED naming the reason when cuBLAS cannot be loaded. Not
 * during a stream capture: it allocates device memory. */
prt_status opk_blas_open(opk_blas **out, int with_workspace);
void opk_blas_close(opk_blas *b);
/* 1 if `stream` is being captured into a graph. */
int opk_blas_capturing(void *stream);
/* Row-major C[M x N] = op(A) op(B) for `batch` matrices at the given
 * element strides, on `stream` (float32; leading dims as BLAS's). */
prt_status opk_blas_gemm(opk_blas *b, void *stream, int32_t trans_a, int32_t trans_b,
                         int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         int64_t stride_a, const float *B, int64_t ldb, int64_t stride_b,
                         float *C, int64_t ldc, int64_t stride_c, int64_t batch);

#endif /* PLUGRT_OPS_CUDA_BLAS_H */

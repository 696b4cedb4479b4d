/*
 * cuBLASLt (lt_cuda.c; CUDA builds only) for the 8-bit products, INT8
 * (IMMA, int32 sums) and FP8 (E4M3, sm_89 and later), and for float32,
 * float16 and bfloat16 products with their bias (and ReLU) in cuBLASLt's
 * epilogue (MatMul's and Gemm's, through blas.h), opened on first use like
 * cuBLAS, so libplugrt loads where cuBLASLt is absent: the integer ops fall
 * back to plugrt's kernels, the float ones to cuBLAS and a separate pass.
 *
 * The 8-bit products are cuBLASLt's "TN" form, the only one its IMMA and
 * FP8 kernels take: in row-major terms C[M x N] = A[M x K] Bt[N x K]^T,
 * with A and the transposed B both K-contiguous. The callers lay B out
 * that way.
 */
#ifndef PLUGRT_OPS_CUDA_LT_H
#define PLUGRT_OPS_CUDA_LT_H

#include "base/base.h"

typedef struct opk_lt opk_lt;

/* Bytes of int32 scratch each handle owns, for the sums of a product the
 * caller then requantizes; a product with more rows runs in row blocks. */
#define OPK_LT_SCRATCH ((size_t)16 << 20)

/* NULL when cuBLASLt can be used in this process (it loads it on the first
 * call), else why not (static storage). */
const char *opk_lt_unavailable(void);
/* Opens cuBLASLt (first call) and makes a handle with its workspace and
 * OPK_LT_SCRATCH bytes of scratch. PRT_ERR_UNSUPPORTED naming the reason
 * when cuBLASLt cannot be loaded. Not during a stream capture: it
 * allocates device memory. */
prt_status opk_lt_open(opk_lt **out);
/* A handle without scratch that borrows `workspace` (bytes of device
 * memory, NULL: none) from its opener, who keeps it until opk_lt_close
 * and runs nothing else on it meanwhile on another stream: the float32
 * products of a cuBLAS user (blas.h) share its workspace. Makes no device
 * allocation. */
prt_status opk_lt_open_shared(opk_lt **out, void *workspace, size_t bytes);
void opk_lt_close(opk_lt *lt);
/* The handle's int32 scratch (OPK_LT_SCRATCH bytes, 256-byte aligned). */
int32_t *opk_lt_scratch(opk_lt *lt);

/* Diagnostics (tests, issue 30). cublasLtGetVersion() of the cuBLASLt
 * loaded (major * 10000 + minor * 100 + patch), 0 when none is or it lacks
 * the function. */
size_t opk_lt_version(void);
/* cublasLtLoggerSetLevel(level): cuBLASLt's own log on stdout (2 errors,
 * 3 hints why a heuristic found nothing, 5 every call), 0 off; as
 * CUBLASLT_LOG_LEVEL in the environment. 1 when set. */
int opk_lt_log_level(int level);
/* How many algorithms the handle's last heuristic query returned (0 when
 * it failed), -1 when its last product reused the kept plan. */
int opk_lt_last_found(const opk_lt *lt);

/* 1 if cuBLASLt's IMMA kernels take a product of N columns and depth K in
 * plain (column-major) layouts: N and K multiples of 4 (cuBLASLt's rule
 * for int8 "TN" products; the rows M are free). */
int opk_lt_s8_fits(int64_t N, int64_t K);
/* 1 if the FP8 kernels take it: N and K multiples of 16 (leading
 * dimensions of 16 bytes), and a device of compute capability 8.9 or
 * later (cc = major * 10 + minor). */
int opk_lt_fp8_fits(int32_t cc, int64_t N, int64_t K);

/* Both products fail with PRT_ERR_UNSUPPORTED when cuBLASLt refuses them
 * before launching anything (describing the product, its heuristic, or
 * cublasLtMatmul's checks): the message names the stage, the cuBLAS status
 * and the shape, and the first refusal of each kind of product is logged
 * (PRT_SEV_WARNING), so callers may fall back to their own kernel. Any
 * other failure is PRT_ERR_INTERNAL. */

/* C[M x N] int32 = A[M x K] Bt[N x K]^T, int8 operands, exact int32 sums
 * (CUBLAS_COMPUTE_32I), on `stream`. Pointers 16-byte aligned (the
 * callers' workspaces are 256). */
prt_status opk_lt_gemm_s8(opk_lt *lt, void *stream, int64_t M, int64_t N, int64_t K,
                          const int8_t *A, const int8_t *Bt, int32_t *C);
/* C[M x N] = a_scale b_scale A[M x K] Bt[N x K]^T of E4M3 operands with
 * float32 sums, C float32, float16, bfloat16 or E4M3 (c_dtype
 * PRT_FLOAT8E4M3FN: the result times d_scale, 1 / y_scale of the
 * QuantizeLinear it stands for, saturated). Scales are one float32 each in
 * device memory (CUBLASLT_MATMUL_DESC_*_SCALE_POINTER), read at run time,
 * so a captured graph sees new values; d_scale NULL unless C is E4M3. */
prt_status opk_lt_gemm_fp8(opk_lt *lt, void *stream, int64_t M, int64_t N, int64_t K,
                           const void *A, const void *Bt, const float *a_scale,
                           const float *b_scale, int32_t c_dtype, void *C,
                           const float *d_scale);

/* Row-major Y[M x N] = act(alpha op(A) op(B) + bias) for `batch` products
 * (A, B at their element strides, 0 for one shared; Y's M x N apart), on
 * `stream`, with A, B, bias and Y all of `dtype`: float32, float16 or
 * bfloat16. bias NULL or N values added to every row (cuBLASLt's BIAS
 * epilogue, once to the float32 sum, before the ReLU when relu); float32
 * sums (CUBLAS_COMPUTE_32F; TF32 where tf32 and dtype is float32), so a
 * 16-bit Y is rounded once, from the float32 sum plus the bias. Split-K
 * algorithms add their parts in float32 scratch (float32 operands) or are
 * not taken (16-bit operands: their kernels added parts in the 16-bit
 * type). Leading dims as BLAS's (of A and B as stored). Refusals as above:
 * the caller then runs its own product and epilogue. */
prt_status opk_lt_gemm_float(opk_lt *lt, void *stream, int32_t dtype, int tf32,
                             int32_t trans_a, int32_t trans_b, int64_t M, int64_t N,
                             int64_t K, float alpha, const void *A, int64_t lda,
                             int64_t stride_a, const void *B, int64_t ldb,
                             int64_t stride_b, const void *bias, int relu, void *Y,
                             int64_t batch);

#endif /* PLUGRT_OPS_CUDA_LT_H */

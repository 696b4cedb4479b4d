/*
 * CUDA kernels of the built-in ops (internal; built with CUDA only): plain
 * launchers the ops' C files call from their CUDA kernel slot
 * (op_class.run[PRT_DEVICE_CUDA]). Each queues its work on `stream` and
 * returns a cudaError_t as int (0: launched). Pointers are device memory;
 * counts are elements. The C side has checked shapes and dtypes.
 */
#ifndef PLUGRT_OPS_CUDA_H
#define PLUGRT_OPS_CUDA_H

#include <stdint.h>

#define OPK_MAX_RANK 8
#define OPK_MAX_SP 3       /* spatial dims of a convolution */
#define OPK_MAX_LETTERS 52 /* einsum letters */
#define OPK_MAX_OPERANDS 8

#ifdef __cplusplus
extern "C" {
#endif

/* y = x < 0 ? 0 : x (NaN and -0 kept), as the CPU kernel; dtype float32,
 * float16, bfloat16, int8, int32 or int64. */
int opk_relu(int32_t dtype, const void *x, void *y, int64_t n, void *stream);

/* y (dims out_dims, row-major) = x permuted: element at output coordinate
 * c reads x at sum_k c[k] * in_stride[k], where in_stride[k] is the stride
 * in x of the input dim that output dim k comes from. esize 1, 2, 4 or 8. */
int opk_transpose(int32_t esize, const void *x, void *y, int32_t rank,
                  const int64_t *out_dims, const int64_t *in_stride, int64_t n,
                  void *stream);

/* Einsum as a loop nest: letters 0..out_rank-1 are the output's (in output
 * order), the others are summed. stride[k][l] is operand k's element
 * stride for letter l (0 when it lacks it; a diagonal adds strides).
 * dtype float32 / float16 (summed in double) or int32 / int64 (in int64). */
typedef struct opk_einsum_args {
    int32_t dtype;
    int32_t nb_ops;
    int32_t nb_letters;
    int32_t out_rank;
    int64_t size[OPK_MAX_LETTERS];
    int64_t stride[OPK_MAX_OPERANDS][OPK_MAX_LETTERS];
    const void *x[OPK_MAX_OPERANDS];
    void *y;
    int64_t out_count;
    int64_t sum_count;
} opk_einsum_args;
int opk_einsum(const opk_einsum_args *a, void *stream);

/* A direct N-D convolution (NC + up to three spatial dims), groups,
 * strides, dilations, begin pads; b may be NULL. dtype float32 or float16
 * (float accumulation). */
typedef struct opk_conv_args {
    int32_t dtype;
    int32_t ns;
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[OPK_MAX_SP], k[OPK_MAX_SP], out[OPK_MAX_SP];
    int64_t s[OPK_MAX_SP], d[OPK_MAX_SP], pb[OPK_MAX_SP];
    int64_t ivol, kvol, ovol;
    const void *x, *w, *b;
    void *y;
    /* Fused activation: an OP_ACT_* kind (cpu_kernels.h) and its alpha and
     * beta, applied to each output before it is stored. */
    int32_t act;
    float act_alpha, act_beta;
} opk_conv_args;
int opk_conv(const opk_conv_args *a, void *stream);

/* y[r n + j] += bias[j] for rows x n floats; bias of dtype float32,
 * float16 or bfloat16 (MatMul's fused bias). */
int opk_bias_rows(int32_t dtype, const void *bias, float *y, int64_t rows, int64_t n,
                  void *stream);

/* Elementwise float16/bfloat16 <-> float32 conversions, for MatMul's
 * 16-bit path: to_f32 widens n elements, from_f32 narrows them. */
int opk_to_f32(int32_t dtype, const void *x, float *y, int64_t n, void *stream);
int opk_from_f32(int32_t dtype, const float *x, void *y, int64_t n, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_OPS_CUDA_H */

/*
 * The fused layers' CUDA kernels (internal; built with CUDA only): the
 * importer's SkipLayerNormalization (skip_layer_norm.c), ElementwiseChain
 * (ew_chain.c) and MatMul's bias and activation epilogue (matmul.c). Launchers as
 * launch.h's: each queues its work on `stream` and returns a cudaError_t as int (0:
 * launched).
 */
#ifndef PLUGRT_OPS_CUDA_FUSE_H
#define PLUGRT_OPS_CUDA_FUSE_H

#include <stdint.h>

#include "ops/cuda/gpu_args.h"
#include "ops/ew_chain_prog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPK_SLN_MAX_DIMS 8 /* PRT_MAX_DIMS */

/* SkipLayerNormalization over `rows` rows of h elements: the output's dims
 * d[0..rank) (the last h), x and skip read through element strides along
 * them (0: broadcast), bias (h values or NULL) added; gamma, beta and
 * bias hold ng, nbeta, nbias values (h, or 1 for all; beta may be NULL).
 * y and sum (may be NULL) in dtype, mean and inv_std (may be NULL) float32.
 * skip_layer_norm.c's semantics: float32 sums, statistics in double. */
typedef struct opk_skip_ln_args {
    int32_t dtype;
    int32_t rank;
    int64_t d[OPK_SLN_MAX_DIMS], sx[OPK_SLN_MAX_DIMS], ss[OPK_SLN_MAX_DIMS];
    int64_t rows, h, ng, nbeta, nbias;
    float epsilon;
    const void *x, *skip, *gamma, *beta, *bias;
    void *y, *sum;
    float *mean, *inv_std;
} opk_skip_ln_args;
int opk_skip_ln(const opk_skip_ln_args *a, void *stream);

/* y[r n + j] = act(y[r n + j] + bias[j]) for rows x n floats (bias of
 * dtype float32, float16 or bfloat16, or NULL: none); act an MM_ACT_*
 * (ops_nn.h): MatMul's bias and activation in one pass. */
int opk_bias_act_rows(int32_t dtype, const void *bias, int32_t act, float *y,
                      int64_t rows, int64_t n, void *stream);

/* ElementwiseChain (ew_chain.c) over n output elements: inputs x[0..b.nb)
 * read through b, acc = x[0]'s element, then each step (prog: 3 int32s per
 * step, ew_chain_prog.h's EC_* op, operand, index; consts the scalars),
 * stored in dtype. */
typedef struct opk_ew_chain_args {
    int32_t dtype, nb_steps;
    int64_t n;
    opk_bcast b;
    int32_t prog[EC_MAX_STEPS][3];
    float consts[EC_MAX_CONSTS];
    const void *x[OPK_MAX_IN];
    void *y;
} opk_ew_chain_args;
int opk_ew_chain(const opk_ew_chain_args *a, void *stream);

#ifndef __CUDACC__
#include "ops/cuda/ops.h"
/* The fused layers' kernels (fuse_cuda.c), in the CUDA table. */
OPC_KERNEL(opc_skip_layer_norm);
OPC_KERNEL(opc_ew_chain);
#endif

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_OPS_CUDA_FUSE_H */

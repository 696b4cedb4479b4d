/*
 * cuDNN's convolution forward for Conv on CUDA (cudnn_cuda.c; CUDA builds
 * only), opened at run time (dlopen) as cuBLAS is, so that libplugrt loads
 * where cuDNN is absent and a build there just uses plugrt's own kernels.
 */
#ifndef PLUGRT_OPS_CUDA_CUDNN_H
#define PLUGRT_OPS_CUDA_CUDNN_H

#include "base/base.h"

/* cuDNN's forward algorithms (cudnnConvolutionFwdAlgo_t's values). */
#define OPK_DNN_ALGOS 8

/* Which math a convolution may use: STRICT keeps float32 in float32 (FMA
 * kernels only, no TF32) and lets 16-bit floats use tensor cores with
 * float32 accumulation; TF32 lets float32 round its products' inputs to
 * TF32 (the builder's --tf32, when a layer is allowed it). */
enum opk_dnn_math { OPK_DNN_STRICT = 0, OPK_DNN_TF32 = 1 };

/* One convolution as cuDNN sees it: NCHW (NCDHW) packed tensors, W [M,
 * C/G, k...], symmetric pads p (the caller refuses asymmetric ones), 1 to 3
 * spatial dims (1-D runs as 2-D with a leading spatial dim of 1). */
typedef struct opk_dnn_conv {
    int32_t dtype; /* PRT_FLOAT32 or PRT_FLOAT16 */
    int32_t ns;
    int32_t math; /* opk_dnn_math */
    int64_t N, C, M, G;
    int64_t in[3], k[3], out[3], s[3], d[3], p[3];
} opk_dnn_conv;

typedef struct opk_dnn opk_dnn;

/* 1 if cuDNN could be loaded (the first call tries); else 0 and, when why
 * is not NULL, the reason in why. Thread-safe. */
int opk_dnn_available(char *why, size_t cap);
/* A handle and descriptors for one object's convolutions. Allocates on the
 * device (cudnnCreate): never during a graph capture. PRT_ERR_UNSUPPORTED
 * naming the reason when cuDNN cannot be loaded. */
prt_status opk_dnn_open(opk_dnn **out);
void opk_dnn_close(opk_dnn *h);
/* The algorithms cuDNN supports for c, in cuDNN's heuristic order:
 * algos[i] and the workspace bytes ws[i] each needs, at most cap (>=
 * OPK_DNN_ALGOS) of them, *n their count (0 when cuDNN supports none). */
prt_status opk_dnn_algos(opk_dnn *h, const opk_dnn_conv *c, int32_t *algos, int64_t *ws,
                         int32_t cap, int32_t *n);
/* y = conv(x, w) with `algo` on `stream`, its workspace from ws (ws_bytes
 * of it; more needed is PRT_ERR_UNSUPPORTED). No bias, no activation.
 * Allocates nothing and does not synchronize: safe in a graph capture. */
prt_status opk_dnn_forward(opk_dnn *h, const opk_dnn_conv *c, int32_t algo, const void *x,
                           const void *w, void *y, void *ws, int64_t ws_bytes,
                           void *stream);
/* cuDNN's name of an algorithm ("IMPLICIT_PRECOMP_GEMM"), or NULL. */
const char *opk_dnn_algo_name(int32_t algo);

#endif /* PLUGRT_OPS_CUDA_CUDNN_H */

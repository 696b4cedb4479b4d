/*
 * The CUDA kernels of the built-in ops (internal; built with CUDA only):
 * one op_kernel_fn per op or family of ops, each the op's CPU kernel's
 * semantics on device memory, queued on the run's stream. table.c lists
 * them by op name; the scaffold (op_common.c) calls them through that
 * table. They check what their launch relies on, and launch the kernels of
 * this folder's .cu files through launch.h.
 *
 *   elementwise_cuda.c  unary, math functions, binary arithmetic,
 *                       comparisons and logic, Clip, Cast, Where, Dropout
 *   data_cuda.c         reshaping copies, Transpose, Expand, Concat,
 *                       Gather, GatherElements, Slice, Shape, Size,
 *                       ConstantOfShape, Range
 *   move_cuda.c         Split, Tile, Pad, Trilu, DepthToSpace,
 *                       SpaceToDepth, EyeLike, OneHot, GatherND,
 *                       ScatterND, ScatterElements, NonZero,
 *                       Compress
 *   nn_cuda.c           Conv, MatMul, Gemm, Einsum, Softmax,
 *                       LayerNormalization, GlobalAveragePool
 *   nn2_cuda.c          the other pools, the Reduce ops, ArgMax, ArgMin,
 *                       CumSum, Hardmax, TopK, Pow, BatchNormalization,
 *                       InstanceNormalization, GroupNormalization,
 *                       LpNormalization
 *   loss_cuda.c         NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss,
 *                       MeanVarianceNormalization, Det
 */
#ifndef PLUGRT_OPS_CUDA_OPS_H
#define PLUGRT_OPS_CUDA_OPS_H

#include "ops/op_common.h"

/* A launcher's result (launch.h: 0, or a cudaError_t): PRT_OK, or
 * PRT_ERR_INTERNAL naming the error number. */
static inline prt_status opc_status(const op_object *o, int err)
{
    return err ? op_fail(o, PRT_ERR_INTERNAL, "CUDA kernel launch failed (error %d)", err)
               : PRT_OK;
}

/* Every kernel has op_kernel_fn's parameters. */
#define OPC_KERNEL(name)                                                                 \
    prt_status name(const op_object *o, int32_t dtype, const prt_tensor_desc *in,        \
                    int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,           \
                    const void *const *x, void *const *y, void *ws, void *stream)

/* elementwise_cuda.c */
OPC_KERNEL(opc_unary);      /* Relu, Identity, Abs, Neg, Sign */
OPC_KERNEL(opc_unary_math); /* unary_math.c's float functions */
OPC_KERNEL(opc_binary);     /* binary.c's ops */
OPC_KERNEL(opc_compare);    /* compare.c's ops */
OPC_KERNEL(opc_clip);
OPC_KERNEL(opc_cast);
OPC_KERNEL(opc_where);
OPC_KERNEL(opc_dropout);

/* data_cuda.c */
OPC_KERNEL(opc_copy); /* Reshape, Squeeze, Unsqueeze */
OPC_KERNEL(opc_flatten);
OPC_KERNEL(opc_transpose);
OPC_KERNEL(opc_expand);
OPC_KERNEL(opc_concat);
OPC_KERNEL(opc_gather);
OPC_KERNEL(opc_gather_elements);
OPC_KERNEL(opc_slice);
OPC_KERNEL(opc_shape);
OPC_KERNEL(opc_size);
OPC_KERNEL(opc_constant_of_shape);
OPC_KERNEL(opc_range);

/* move_cuda.c */
OPC_KERNEL(opc_split);
OPC_KERNEL(opc_tile);
OPC_KERNEL(opc_pad);
OPC_KERNEL(opc_trilu);
OPC_KERNEL(opc_depth_space); /* DepthToSpace, SpaceToDepth */
OPC_KERNEL(opc_eye_like);
OPC_KERNEL(opc_one_hot);
OPC_KERNEL(opc_gather_nd);
OPC_KERNEL(opc_scatter); /* ScatterND, ScatterElements */
OPC_KERNEL(opc_nonzero);
OPC_KERNEL(opc_compress);
OPC_KERNEL(opc_unique);

/* convt_cuda.c */
OPC_KERNEL(opc_conv_transpose);

/* qgemm_cuda.c: MatMulInteger, QLinearMatMul; ConvInteger, QLinearConv */
OPC_KERNEL(opc_qmatmul);
/* qgemm_cuda.c: DynamicQuantizeMatMul, MatMulIntegerToFloat */
OPC_KERNEL(opc_qmatmul_float);
OPC_KERNEL(opc_qconv);
/* misc_cuda.c */
OPC_KERNEL(opc_shrink);
OPC_KERNEL(opc_lrn);
OPC_KERNEL(opc_reverse_sequence);
OPC_KERNEL(opc_max_unpool);

/* signal_cuda.c */
OPC_KERNEL(opc_window); /* HannWindow, HammingWindow, BlackmanWindow */
OPC_KERNEL(opc_mel_weight);
OPC_KERNEL(opc_dft);
OPC_KERNEL(opc_stft);

/* loss_cuda.c */
OPC_KERNEL(opc_nll_loss);
OPC_KERNEL(opc_sce_loss);
OPC_KERNEL(opc_mvn);
OPC_KERNEL(opc_det);

/* rnn_cuda.c: LSTM, GRU, RNN */
OPC_KERNEL(opc_rnn);
/* quant_cuda.c */
OPC_KERNEL(opc_quantize_linear);
OPC_KERNEL(opc_dequantize_linear);
OPC_KERNEL(opc_dynamic_quantize_linear);
OPC_KERNEL(opc_qlinear);
OPC_KERNEL(opc_lookup_table8);

/* nms_cuda.c */
OPC_KERNEL(opc_nms);

/* resize_cuda.c */
OPC_KERNEL(opc_resize);

/* nn_cuda.c */
OPC_KERNEL(opc_conv);
OPC_KERNEL(opc_matmul); /* cuBLAS: o->res[PRT_DEVICE_CUDA] */
OPC_KERNEL(opc_gemm);   /* cuBLAS */
OPC_KERNEL(opc_einsum);
OPC_KERNEL(opc_softmax); /* Softmax, LogSoftmax */
OPC_KERNEL(opc_layer_norm);
OPC_KERNEL(opc_attention); /* attention_cuda.c */
OPC_KERNEL(opc_global_average_pool);

/* blas_cuda.c: the table's attach and detach, a cuBLAS handle and its
 * workspace per object (op_device.h); Conv's (resources 3) go to
 * opc_conv_attach and opc_conv_detach. */
prt_status opc_blas_attach(op_object *o, void *stream);
void opc_blas_detach(op_object *o);
/* nn_cuda.c: Conv's tactics (own kernel, cuBLAS, cuDNN's algorithms) and
 * its resources: a cuBLAS handle, and a cuDNN handle for a cuDNN tactic. */
extern const struct op_device_tuning opc_conv_tuning;
prt_status opc_conv_attach(op_object *o, void *stream);
void opc_conv_detach(op_object *o);
/* qgemm_cuda.c: MatMulInteger's and QLinearMatMul's resources (4): a
 * cuBLASLt handle, or none where cuBLASLt cannot be used (logged once; the
 * plain kernel runs). opc_qmm_lt_runs counts the products cuBLASLt ran in
 * this process, for tests that check which path a shape takes. */
prt_status opc_qmm_attach(op_object *o);
void opc_qmm_detach(op_object *o);
int64_t opc_qmm_lt_runs(void);
/* The ConvInteger and QLinearConv runs the tensor-core kernel took in
 * this process (opk_qconv_mma; tests check which path ran). */
int64_t opc_qconv_mma_runs(void);

/* nn2_cuda.c */
OPC_KERNEL(opc_pool);   /* MaxPool AveragePool LpPool GlobalMaxPool GlobalLpPool */
OPC_KERNEL(opc_reduce); /* reduce.c's ten ops */
OPC_KERNEL(opc_argmax); /* ArgMax, ArgMin */
OPC_KERNEL(opc_cumsum);
OPC_KERNEL(opc_hardmax);
OPC_KERNEL(opc_topk);
OPC_KERNEL(opc_pow);
OPC_KERNEL(opc_norm); /* norm.c's four */

/* sample_cuda.c */
OPC_KERNEL(opc_grid_sample);
OPC_KERNEL(opc_roi_align);

#endif /* PLUGRT_OPS_CUDA_OPS_H */

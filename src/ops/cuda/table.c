/*
 * The CUDA table (op_device.h): every built-in op with a CUDA kernel, by
 * name, its kernel (ops.h), the dtypes it takes where fewer than the op's,
 * and whether it needs a cuBLAS handle. An op missing here runs on the CPU
 * only; a CUDA build of a network that uses it fails naming the layer.
 * test_op_coverage requires a case for every op and dtype listed here and
 * runs it against the CPU's kernel.
 *
 * Compiled in every build: without CUDA the table is absent.
 */
#include "ops/op_device.h"

#ifdef PRT_HAVE_CUDA
#include "ops/cuda/ops.h"
#include "ops/cuda/fuse.h"
#include "ops/ops_ew.h"

/* 16- and 32-bit floats. */
#define F EW_DT_FLOATS

static const op_device_kernel kernels[] = {
    {"Abs", opc_unary, 0, 0},
    {"Acos", opc_unary_math, 0, 0},
    {"Acosh", opc_unary_math, 0, 0},
    {"Add", opc_binary, 0, 0},
    {"And", opc_compare, 0, 0},
    {"ArgMax", opc_argmax, 0, 0},
    {"ArgMin", opc_argmax, 0, 0},
    {"Asin", opc_unary_math, 0, 0},
    {"Asinh", opc_unary_math, 0, 0},
    {"Atan", opc_unary_math, 0, 0},
    {"Atanh", opc_unary_math, 0, 0},
    {"Attention", opc_attention, 0, 0},
    {"AveragePool", opc_pool, 0, 0},
    {"BatchNormalization", opc_norm, 0, 0},
    {"BitShift", opc_binary, 0, 0},
    {"BlackmanWindow", opc_window, 0, 0},
    {"Cast", opc_cast, 0, 0},
    {"CastLike", opc_cast, 0, 0},
    {"Ceil", opc_unary_math, 0, 0},
    {"Celu", opc_unary_math, 0, 0},
    {"Clip", opc_clip, 0, 0},
    {"Compress", opc_compress, 0, 0},
    {"Concat", opc_concat, 0, 0},
    {"ConstantOfShape", opc_constant_of_shape, 0, 0},
    /* Tactics (opc_conv_tuning): the own kernel, cuBLAS for pointwise
     * float32 convolutions (a handle without a workspace per object) or
     * cuDNN; resources 3: Conv's own (opc_conv_attach). */
    {"Conv", opc_conv, 0, 3},
    {"ConvInteger", opc_qconv, 0, 0},
    {"ConvTranspose", opc_conv_transpose, 0, 0},
    {"Cos", opc_unary_math, 0, 0},
    {"Cosh", opc_unary_math, 0, 0},
    {"CumSum", opc_cumsum, 0, 0},
    {"DFT", opc_dft, 0, 0},
    {"DepthToSpace", opc_depth_space, 0, 0},
    {"Det", opc_det, 0, 0},
    /* Integer division by zero fails the CPU's run; on CUDA it gives 0
     * (DESIGN-NOTES: what a kernel cannot refuse). */
    {"Div", opc_binary, 0, 0},
    {"Dropout", opc_dropout, 0, 0},
    {"Einsum", opc_einsum, 0, 0},
    {"Elu", opc_unary_math, 0, 0},
    {"Equal", opc_compare, 0, 0},
    {"Erf", opc_unary_math, 0, 0},
    {"Exp", opc_unary_math, 0, 0},
    {"Expand", opc_expand, 0, 0},
    {"EyeLike", opc_eye_like, 0, 0},
    {"Flatten", opc_flatten, 0, 0},
    {"Floor", opc_unary_math, 0, 0},
    /* LSTM, GRU and RNN: cuBLAS for the products, workspace-free handles
     * (the op's workspace holds the products). */
    {"GRU", opc_rnn, 0, 2},
    {"Gather", opc_gather, 0, 0},
    {"GatherElements", opc_gather_elements, 0, 0},
    {"GatherND", opc_gather_nd, 0, 0},
    {"Gelu", opc_unary_math, 0, 0},
    {"Gemm", opc_gemm, 0, 1},
    {"GlobalAveragePool", opc_global_average_pool, 0, 0},
    {"GlobalLpPool", opc_pool, 0, 0},
    {"GlobalMaxPool", opc_pool, 0, 0},
    {"Greater", opc_compare, 0, 0},
    {"GreaterOrEqual", opc_compare, 0, 0},
    {"GridSample", opc_grid_sample, 0, 0},
    {"GroupNormalization", opc_norm, 0, 0},
    {"HammingWindow", opc_window, 0, 0},
    {"HannWindow", opc_window, 0, 0},
    {"HardSigmoid", opc_unary_math, 0, 0},
    {"HardSwish", opc_unary_math, 0, 0},
    {"Hardmax", opc_hardmax, 0, 0},
    {"Identity", opc_unary, 0, 0},
    {"InstanceNormalization", opc_norm, 0, 0},
    {"IsInf", opc_compare, 0, 0},
    {"IsNaN", opc_compare, 0, 0},
    {"LRN", opc_lrn, 0, 0},
    {"LSTM", opc_rnn, 0, 2},
    {"LayerNormalization", opc_layer_norm, 0, 0},
    {"LeakyRelu", opc_unary_math, 0, 0},
    {"Less", opc_compare, 0, 0},
    {"LessOrEqual", opc_compare, 0, 0},
    {"Log", opc_unary_math, 0, 0},
    {"LogSoftmax", opc_softmax, 0, 0},
    {"LpNormalization", opc_norm, 0, 0},
    {"LpPool", opc_pool, 0, 0},
    /* cuBLAS serves the floats; integer products stay on the CPU. */
    {"MatMul", opc_matmul, F, 1},
    /* resources 4: a cuBLASLt handle (opc_qmm_attach) */
    {"MatMulInteger", opc_qmatmul, 0, 4},
    {"MatMulIntegerToFloat", opc_qmatmul_float, 0, 0},
    {"Max", opc_binary, 0, 0},
    {"MaxPool", opc_pool, 0, 0},
    {"MaxUnpool", opc_max_unpool, 0, 0},
    {"Mean", opc_binary, 0, 0},
    {"MeanVarianceNormalization", opc_mvn, 0, 0},
    {"MelWeightMatrix", opc_mel_weight, 0, 0},
    {"Min", opc_binary, 0, 0},
    {"Mish", opc_unary_math, 0, 0},
    {"Mod", opc_binary, 0, 0},
    {"Mul", opc_binary, 0, 0},
    {"Neg", opc_unary, 0, 0},
    /* A loss target outside [0, C) counts as ignored on CUDA, where the
     * CPU fails the run (DESIGN-NOTES: what a kernel cannot refuse). */
    {"NegativeLogLikelihoodLoss", opc_nll_loss, 0, 0},
    {"NonMaxSuppression", opc_nms, 0, 0},
    {"NonZero", opc_nonzero, 0, 0},
    {"Not", opc_compare, 0, 0},
    {"OneHot", opc_one_hot, 0, 0},
    {"Or", opc_compare, 0, 0},
    {"PRelu", opc_binary, 0, 0},
    {"Pad", opc_pad, 0, 0},
    /* Integer 0 to a negative power fails the CPU's run, which a kernel
     * cannot do: integer bases stay on the CPU. */
    {"Pow", opc_pow, F, 0},
    {"QLinearConv", opc_qconv, 0, 0},
    {"QLinearMatMul", opc_qmatmul, 0, 4},
    {"RNN", opc_rnn, 0, 2},
    {"Range", opc_range, 0, 0},
    {"Reciprocal", opc_unary_math, 0, 0},
    {"ReduceL1", opc_reduce, 0, 0},
    {"ReduceL2", opc_reduce, 0, 0},
    {"ReduceLogSum", opc_reduce, 0, 0},
    {"ReduceLogSumExp", opc_reduce, 0, 0},
    {"ReduceMax", opc_reduce, 0, 0},
    {"ReduceMean", opc_reduce, 0, 0},
    {"ReduceMin", opc_reduce, 0, 0},
    {"ReduceProd", opc_reduce, 0, 0},
    {"ReduceSum", opc_reduce, 0, 0},
    {"ReduceSumSquare", opc_reduce, 0, 0},
    {"Relu", opc_unary, 0, 0},
    {"Reshape", opc_copy, 0, 0},
    {"Resize", opc_resize, 0, 0},
    {"ReverseSequence", opc_reverse_sequence, 0, 0},
    {"RoiAlign", opc_roi_align, 0, 0},
    {"Round", opc_unary_math, 0, 0},
    {"STFT", opc_stft, 0, 0},
    {"ScatterElements", opc_scatter, 0, 0},
    {"ScatterND", opc_scatter, 0, 0},
    {"Selu", opc_unary_math, 0, 0},
    {"Shape", opc_shape, 0, 0},
    {"Shrink", opc_shrink, 0, 0},
    {"Sigmoid", opc_unary_math, 0, 0},
    {"Sign", opc_unary, 0, 0},
    {"Sin", opc_unary_math, 0, 0},
    {"Sinh", opc_unary_math, 0, 0},
    {"Size", opc_size, 0, 0},
    {"Slice", opc_slice, 0, 0},
    {"Softmax", opc_softmax, 0, 0},
    {"SoftmaxCrossEntropyLoss", opc_sce_loss, 0, 0},
    {"Softplus", opc_unary_math, 0, 0},
    {"Softsign", opc_unary_math, 0, 0},
    {"SpaceToDepth", opc_depth_space, 0, 0},
    {"Split", opc_split, 0, 0},
    {"Sqrt", opc_unary_math, 0, 0},
    {"Squeeze", opc_copy, 0, 0},
    {"Sub", opc_binary, 0, 0},
    {"Sum", opc_binary, 0, 0},
    {"Tan", opc_unary_math, 0, 0},
    {"Tanh", opc_unary_math, 0, 0},
    {"ThresholdedRelu", opc_unary_math, 0, 0},
    {"Tile", opc_tile, 0, 0},
    {"TopK", opc_topk, 0, 0},
    {"Transpose", opc_transpose, 0, 0},
    {"Trilu", opc_trilu, 0, 0},
    {"Unique", opc_unique, 0, 0},
    {"Unsqueeze", opc_copy, 0, 0},
    {"Where", opc_where, 0, 0},
    {"Xor", opc_compare, 0, 0},
    /* The quantization ops (issue 30; quant_cuda.c). */
    {"DequantizeLinear", opc_dequantize_linear, 0, 0},
    {"DynamicQuantizeLinear", opc_dynamic_quantize_linear, 0, 0},
    {"DynamicQuantizeMatMul", opc_qmatmul_float, 0, 0},
    {"QuantizeLinear", opc_quantize_linear, 0, 0},
    {"QLinearAdd", opc_qlinear, 0, 0},
    {"QLinearMul", opc_qlinear, 0, 0},
    {"LookupTable8", opc_lookup_table8, 0, 0}, /* quant_cuda.c */
    /* The importer's fused layers (fuse_cuda.c). */
    {"SkipLayerNormalization", opc_skip_layer_norm, 0, 0},
    {"ElementwiseChain", opc_ew_chain, 0, 0},
};

static const op_device_table table = {PRT_DEVICE_CUDA, "CUDA", kernels,
                                      (int32_t)(sizeof kernels / sizeof kernels[0]),
                                      opc_blas_attach, opc_blas_detach,
                                      /* the kernels with tactics the builder
                                       * times (op_device_tuning): Conv's */
                                      &opc_conv_tuning, 1};

const op_device_table *op_cuda_table(void)
{
    return &table;
}
#else
const op_device_table *op_cuda_table(void)
{
    return NULL;
}
#endif

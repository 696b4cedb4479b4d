/*
 * The kinds of unary_math.c's float functions, shared with their CUDA
 * kernels (ew_cuda.cu, which switch on the same values). No CUDA header is
 * needed to include this.
 */
#ifndef PLUGRT_OPS_EW_KINDS_H
#define PLUGRT_OPS_EW_KINDS_H

enum {
    UM_EXP,
    UM_LOG,
    UM_SQRT,
    UM_RECIPROCAL,
    UM_FLOOR,
    UM_CEIL,
    UM_ROUND,
    UM_SIN,
    UM_COS,
    UM_TAN,
    UM_ASIN,
    UM_ACOS,
    UM_ATAN,
    UM_SINH,
    UM_COSH,
    UM_ASINH,
    UM_ACOSH,
    UM_ATANH,
    UM_TANH,
    UM_ERF,
    UM_SIGMOID,
    UM_SOFTPLUS,
    UM_SOFTSIGN,
    UM_MISH,
    UM_GELU,
    UM_ELU,
    UM_SELU,
    UM_CELU,
    UM_LEAKY_RELU,
    UM_THRESHOLDED_RELU,
    UM_HARD_SIGMOID,
    UM_HARD_SWISH,
    UM_COUNT,
    /* Not an op: y = x / alpha (Mean's division by its count on CUDA). */
    UM_DIVIDE
};

#endif /* PLUGRT_OPS_EW_KINDS_H */

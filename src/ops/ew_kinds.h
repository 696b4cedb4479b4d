/*
 * The kinds (op_class.kind) of the elementwise ops, shared by their
 * definitions and every device's kernels, which switch on the same values
 * (src/ops/cuda/ew.cu on the UM_* values, reduce.cu on the RD_* ones). No
 * device header is needed to include this.
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

/* binary.c's ops. */
enum {
    BIN_ADD,
    BIN_SUB,
    BIN_MUL,
    BIN_DIV,
    BIN_MOD,
    BIN_MAX,
    BIN_MIN,
    BIN_SUM,
    BIN_MEAN,
    BIN_BITSHIFT,
    BIN_PRELU
};

/* What one row of binary.c computes (bin_row_kind, ops_ew.h): its op, or
 * for Mod and BitShift the variant the fields choose. */
enum {
    BIN_R_ADD,
    BIN_R_SUB,
    BIN_R_MUL,
    BIN_R_DIV,
    BIN_R_MOD,
    BIN_R_FMOD,
    BIN_R_MAX,
    BIN_R_MIN,
    BIN_R_SHL,
    BIN_R_SHR,
    BIN_R_PRELU
};

/* compare.c's ops. */
enum {
    CMP_EQUAL,
    CMP_LESS,
    CMP_LE,
    CMP_GREATER,
    CMP_GE,
    CMP_AND,
    CMP_OR,
    CMP_XOR,
    CMP_NOT,
    CMP_ISNAN,
    CMP_ISINF
};

/* unary.c's ops. */
enum { UNARY_RELU, UNARY_IDENTITY, UNARY_ABS, UNARY_NEG, UNARY_SIGN };

/* The Reduce ops (reduce.c). */
enum {
    RD_SUM,
    RD_MEAN,
    RD_MAX,
    RD_MIN,
    RD_PROD,
    RD_L1,
    RD_L2,
    RD_SUM_SQUARE,
    RD_LOG_SUM,
    RD_LOG_SUM_EXP,
    RD_LSE_SHIFTED /* LogSumExp's second pass: sum e^(x - shift) */
};

#endif /* PLUGRT_OPS_EW_KINDS_H */

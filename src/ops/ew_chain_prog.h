/*
 * ElementwiseChain's program, written once for everyone who reads or
 * writes one: the op codes and their ONNX names, the limits of a chain,
 * and one step's arithmetic. The CPU op (ew_chain.c) and the CUDA kernel
 * (cuda/fuse.cu) evaluate steps with ec_step; the importer (onnx_fuse.c)
 * plans chains within the limits and numbers ops by the same codes.
 *
 * Self-contained on purpose: it includes only the C library, so the
 * importer, which otherwise sees only include/ (DESIGN-NOTES.md, the ONNX
 * importer), can include it by its relative path without reaching any
 * other internal header; nvcc compiles ec_step as __host__ __device__
 * code (as op_elem.h's functions).
 */
#ifndef PLUGRT_OPS_EW_CHAIN_PROG_H
#define PLUGRT_OPS_EW_CHAIN_PROG_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define EC_HD static inline __host__ __device__
#else
#define EC_HD static inline
#endif

#define EC_MAX_STEPS 8  /* the longest chain */
#define EC_MAX_CONSTS 8 /* scalar operands */
#define EC_MAX_INPUTS 3 /* tensor inputs: one broadcast walk's (OP_WALK_MAX) */

/* The steps' ops as field ops names them, binary first (Pow the last of
 * them: its exponent is a constant), then unary. X(code suffix, name). */
#define EC_OPS(X)                                                                        \
    X(ADD, "Add")                                                                        \
    X(SUB, "Sub")                                                                        \
    X(MUL, "Mul")                                                                        \
    X(DIV, "Div")                                                                        \
    X(POW, "Pow")                                                                        \
    X(RELU, "Relu")                                                                      \
    X(SIGMOID, "Sigmoid")                                                                \
    X(TANH, "Tanh")                                                                      \
    X(ERF, "Erf")                                                                        \
    X(SQRT, "Sqrt")                                                                      \
    X(EXP, "Exp")                                                                        \
    X(LOG, "Log")                                                                        \
    X(NEG, "Neg")                                                                        \
    X(ABS, "Abs")                                                                        \
    X(RECIPROCAL, "Reciprocal")

#define EC_ENUM_(code, name) EC_##code,
enum { EC_OPS(EC_ENUM_) EC_COUNT };
#undef EC_ENUM_

/* A step's op takes an operand (Add to Pow) or not. */
#define EC_IS_BINARY(op) ((op) <= EC_POW)

/* The ONNX op name of an EC_* code (host only). */
static inline const char *ec_op_name(int32_t op)
{
#define EC_NAME_(code, name) name,
    static const char *const names[EC_COUNT] = {EC_OPS(EC_NAME_)};
#undef EC_NAME_
    return op >= 0 && op < EC_COUNT ? names[op] : "?";
}

/* The EC_* of an ONNX op name, -1 for an op a chain cannot hold (host
 * only). */
static inline int32_t ec_op_code(const char *op)
{
    for (int32_t k = 0; k < EC_COUNT; k++)
        if (strcmp(op, ec_op_name(k)) == 0)
            return k;
    return -1;
}

/* One step on float32 values: a op b (b unused by the unary ops), as the
 * op of that name computes one element (binary.c, unary_math.c, pow.c):
 * Pow's exponent 2 as a * a, 3 as a * a * a in double, others pow in
 * double; Sigmoid from e^-|a| (no overflow for either sign). */
EC_HD float ec_step(int32_t op, float a, float b)
{
    switch (op) {
    case EC_ADD:
        return a + b;
    case EC_SUB:
        return a - b;
    case EC_MUL:
        return a * b;
    case EC_DIV:
        return a / b;
    case EC_POW:
        return b == 2.0f   ? a * a
               : b == 3.0f ? (float)((double)a * a * a)
                           : (float)pow((double)a, (double)b);
    case EC_RELU:
        return a < 0.0f ? 0.0f : a;
    case EC_SIGMOID: {
        float e = expf(-fabsf(a));
        return (a >= 0.0f ? 1.0f : e) / (1.0f + e);
    }
    case EC_TANH:
        return tanhf(a);
    case EC_ERF:
        return erff(a);
    case EC_SQRT:
        return sqrtf(a);
    case EC_EXP:
        return expf(a);
    case EC_LOG:
        return logf(a);
    case EC_NEG:
        return -a;
    case EC_ABS:
        return fabsf(a);
    default: /* EC_RECIPROCAL */
        return 1.0f / a;
    }
}

#endif /* PLUGRT_OPS_EW_CHAIN_PROG_H */

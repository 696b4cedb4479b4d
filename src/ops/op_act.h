/*
 * Fused activations (internal to libplugrt): what an op that applies one to
 * its result as it stores it (Conv, the importer's Conv -> Relu and the
 * like) is told, shared by its definition and every device's kernels
 * (cpu_kernels.h's op_act_bias and vector forms, the CUDA convolution).
 */
#ifndef PLUGRT_OPS_OP_ACT_H
#define PLUGRT_OPS_OP_ACT_H

#include <stdint.h>

/* An activation applied to a kernel's result as it is stored: Conv's and
 * the importer's fusion of Conv -> Relu and the like. Each computes what the
 * op of that name computes (unary.c, unary_math.c, clip.c): comparisons let
 * NaN through, Relu keeps -0. Silu, which is no ONNX op, is what the graph
 * x * Sigmoid(x) computes (the importer's Conv -> Sigmoid -> Mul):
 * Sigmoid's result rounded to float, then the product. */
enum {
    OP_ACT_NONE,
    OP_ACT_RELU,         /* x < 0 ? 0 : x */
    OP_ACT_LEAKY_RELU,   /* x < 0 ? alpha x : x */
    OP_ACT_CLIP,         /* min(max(x, alpha), beta) */
    OP_ACT_HARD_SIGMOID, /* min(max(alpha x + beta, 0), 1) */
    OP_ACT_HARD_SWISH,   /* x hard_sigmoid(x), alpha 1/6, beta 1/2 */
    OP_ACT_SIGMOID,      /* 1 / (1 + e^-x) */
    OP_ACT_SILU,         /* x sigmoid(x) (SiLU, Swish) */
    OP_ACT_COUNT
};

typedef struct op_act {
    int32_t kind; /* OP_ACT_* */
    float alpha, beta;
} op_act;

/* The ONNX op name of an activation kind ("Relu", ...; "" for none), and
 * the kind of a name (-1 when it is none of them). */
const char *op_act_name(int32_t kind);
int32_t op_act_kind(const char *name);
/* How many parameters kind takes (alpha, beta) and their defaults. */
int32_t op_act_nb_params(int32_t kind);
void op_act_defaults(int32_t kind, float *alpha, float *beta);

#endif /* PLUGRT_OPS_OP_ACT_H */

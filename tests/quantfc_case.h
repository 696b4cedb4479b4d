/*
 * A QuantFC case (plugins/quant_fc.c) shared by the CPU test
 * (test_plugin_quantfc.c) and the CUDA one (cuda/test_cuda_quantfc.c):
 * random data, the network x -> QuantFC(w, bias) -> y with each tensor's
 * quantization set through prt_network_set_tensor_quant, and two
 * references: the real result from dequantized values in double, and the
 * kernel's own float arithmetic on the exact int32 dot (what an integer
 * path must give to the bit).
 */
#ifndef PLUGRT_TESTS_QUANTFC_CASE_H
#define PLUGRT_TESTS_QUANTFC_CASE_H

#include "testutil.h"

typedef struct qfc_case {
    /* set by the caller */
    int64_t m, k, n;
    int32_t x_dtype; /* PRT_FLOAT32, PRT_INT8 or PRT_UINT8 */
    int32_t y_dtype; /* PRT_FLOAT32, PRT_INT8 or PRT_UINT8 */
    int per_channel; /* w's scales per output channel (else one) */
    int bias, relu;
    /* made by qfc_case_fill */
    void *x;      /* m x k of x_dtype */
    void *w;      /* n x k: int8 with an integer x, float32 otherwise */
    float *b;     /* n */
    float sx, sy; /* x's and y's scales */
    int32_t zx, zy;
    float *sw; /* n (or 1) weight scales */
} qfc_case;

/* Calls fn(case, seed, user) over the grid: x int8, uint8, float32; y
 * float32, int8, uint8; each shape {m, k, n}; variants 0..nb_variants-1,
 * bit 0 per-channel w, bit 1 no bias; ReLU alternating. Seeds count from
 * 1. */
void qfc_case_grid(const int64_t (*shapes)[3], size_t nb_shapes, int nb_variants,
                   void (*fn)(qfc_case c, uint64_t seed, void *user), void *user);
/* Random data for the case's shape and dtypes; 0 on success. */
int qfc_case_fill(qfc_case *c, uint64_t seed);
void qfc_case_free(qfc_case *c);
/* The network: input "x" [m, k], constants "w" and "b", one QuantFC layer
 * (its fields relu and output_dtype) and output "y" [m, n]. */
prt_status qfc_case_network(const qfc_case *c, const prt_registry *reg,
                            prt_network **out);
/* real[m * n]: the float result from dequantized x and w, in double. */
void qfc_case_real(const qfc_case *c, double *real);
/* exact (m * n elements of y_dtype): the integer path's arithmetic (int32
 * dot, float scale, bias, ReLU, quantization) for an integer x; for a float
 * x, the float result of real rounded (then quantized). */
void qfc_case_exact(const qfc_case *c, const double *real, void *exact);

#endif /* PLUGRT_TESTS_QUANTFC_CASE_H */

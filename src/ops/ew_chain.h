/*
 * ElementwiseChain (ew_chain.c): the importer's fusion of a run of
 * elementwise nodes into one layer. Its ops, as the program field numbers
 * them, and what each device's kernel needs of it.
 */
#ifndef PLUGRT_OPS_EW_CHAIN_H
#define PLUGRT_OPS_EW_CHAIN_H

#include <stdint.h>

#include "ops/op_common.h"

/* The steps' ops (field ops names them): the binary first (EC_POW the
 * last of them), then the unary. */
enum {
    EC_ADD,
    EC_SUB,
    EC_MUL,
    EC_DIV,
    EC_POW,
    EC_RELU,
    EC_SIGMOID,
    EC_TANH,
    EC_ERF,
    EC_SQRT,
    EC_EXP,
    EC_LOG,
    EC_NEG,
    EC_ABS,
    EC_RECIPROCAL,
    EC_COUNT
};

/* The importer's onnx_fuse.c keeps its own copies (FC_CHAIN_*: it sees
 * only include/); a chain beyond them is refused naming the field. */
#define EC_MAX_STEPS 8  /* the longest chain */
#define EC_MAX_CONSTS 8 /* scalar operands */

extern const prt_plugin_creator op_ew_chain_creator;

/* The EC_* of an ONNX op name, -1 for an op a chain cannot hold. */
int32_t ec_op_code(const char *op);
/* One step on float32 values: a op b (b unused by the unary ops). */
float ec_step(int32_t op, float a, float b);
/* A chain layer's program (3 int32s per step) and constants, borrowed from
 * the object. */
void ec_program(const op_object *o, int32_t *nb_steps, const int32_t **prog,
                int32_t *nb_consts, const float **consts);

#endif /* PLUGRT_OPS_EW_CHAIN_H */

/*
 * ElementwiseChain (ew_chain.c): the importer's fusion of a run of
 * elementwise nodes into one layer: what each device's kernel needs of
 * it. Its ops, limits and step arithmetic are ew_chain_prog.h's.
 */
#ifndef PLUGRT_OPS_EW_CHAIN_H
#define PLUGRT_OPS_EW_CHAIN_H

#include <stdint.h>

#include "ops/ew_chain_prog.h"
#include "ops/op_common.h"

extern const prt_plugin_creator op_ew_chain_creator;

/* A chain layer's program (3 int32s per step) and constants, borrowed from
 * the object. */
void ec_program(const op_object *o, int32_t *nb_steps, const int32_t **prog,
                int32_t *nb_consts, const float **consts);

#endif /* PLUGRT_OPS_EW_CHAIN_H */

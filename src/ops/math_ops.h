/*
 * Creators of the math and logic built-ins (Erf, Tanh, Softmax,
 * LayerNormalization; later the comparisons, Where and GatherElements),
 * kept apart from op_common.h so that these ops and the scaffold can change
 * independently. Internal to libplugrt; builtins.c lists them.
 */
#ifndef PLUGRT_OPS_MATH_OPS_H
#define PLUGRT_OPS_MATH_OPS_H

#include "ops/op_common.h"

extern const prt_plugin_creator op_erf_creator;
extern const prt_plugin_creator op_tanh_creator;
extern const prt_plugin_creator op_softmax_creator;
extern const prt_plugin_creator op_layer_norm_creator;
extern const prt_plugin_creator op_skip_layer_norm_creator;
extern const prt_plugin_creator op_equal_creator;
extern const prt_plugin_creator op_greater_or_equal_creator;
extern const prt_plugin_creator op_and_creator;
extern const prt_plugin_creator op_is_nan_creator;
extern const prt_plugin_creator op_where_creator;
extern const prt_plugin_creator op_gather_elements_creator;

#endif /* PLUGRT_OPS_MATH_OPS_H */

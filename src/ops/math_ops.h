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
extern const prt_plugin_creator op_equal_creator;
extern const prt_plugin_creator op_greater_or_equal_creator;
extern const prt_plugin_creator op_and_creator;
extern const prt_plugin_creator op_is_nan_creator;
extern const prt_plugin_creator op_where_creator;
extern const prt_plugin_creator op_gather_elements_creator;

/* ---- broadcast walk (broadcast_walk.c) ------------------------------------ */

#define OP_WALK_MAX 3 /* inputs of one walk */

/* One row of a walk: y[j] from the inputs' elements p[k] + j * s[k] (in
 * elements of each input), j < n. */
typedef void (*op_row_fn)(const void *ctx, const uint8_t *const *p,
                          const int64_t *s, uint8_t *y, int64_t n);

/* Calls fn over the rows of `out`, nb (<= OP_WALK_MAX) inputs of dims in[k]
 * broadcast to it (numpy's rule; checked before), element sizes es[k] and
 * out_es. Size-1 dims are dropped and contiguous dims merged, so rows are
 * as long as the layout allows. */
void op_bcast_walk(const prt_dims *out, int32_t nb, const prt_dims *in,
                   const size_t *es, size_t out_es, const void *const *x,
                   void *y, op_row_fn fn, const void *ctx);

#endif /* PLUGRT_OPS_MATH_OPS_H */

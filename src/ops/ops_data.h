/*
 * Creators of the data-movement and data-dependent built-ins (issue 8):
 * Size (in shape.c, beside Shape), Split, GatherND, ScatterND,
 * ScatterElements, Tile, Pad, Trilu, OneHot, DepthToSpace, SpaceToDepth,
 * EyeLike, NonZero, Compress, Unique and Hardmax, with the few helpers
 * their files share (ops_data.c). Kept apart from
 * op_common.h and shape_ops.h so that these ops and the scaffold can change
 * independently. Internal to libplugrt; builtins.c lists them.
 *
 * The data-dependent ones (NonZero, Compress, Unique) declare a size
 * tensor as their LAST output (a 0-D int64 beside the ONNX outputs), so
 * the importer maps the node's outputs to the first ones by position and
 * the size stays internal. Its opt is half the upper bound (rounded up, so
 * that a one-element input tunes for 1, not 0).
 */
#ifndef PLUGRT_OPS_OPS_DATA_H
#define PLUGRT_OPS_OPS_DATA_H

#include "ops/op_common.h"

extern const prt_plugin_creator op_size_creator;
extern const prt_plugin_creator op_split_creator;
extern const prt_plugin_creator op_gather_nd_creator;
extern const prt_plugin_creator op_scatter_nd_creator;
extern const prt_plugin_creator op_scatter_elements_creator;
extern const prt_plugin_creator op_tile_creator;
extern const prt_plugin_creator op_pad_creator;
extern const prt_plugin_creator op_trilu_creator;
extern const prt_plugin_creator op_one_hot_creator;
extern const prt_plugin_creator op_depth_to_space_creator;
extern const prt_plugin_creator op_space_to_depth_creator;
extern const prt_plugin_creator op_eye_like_creator;
extern const prt_plugin_creator op_nonzero_creator;
extern const prt_plugin_creator op_compress_creator;
extern const prt_plugin_creator op_unique_creator;
extern const prt_plugin_creator op_hardmax_creator;

/* Element i of a tensor of any dtype as a double (halves converted; bool
 * and integers as numbers). */
double opd_get(const void *x, int32_t dtype, int64_t i);
/* Whether element i is non-zero: floats compare != 0 (NaN is non-zero,
 * -0 is zero, for halves too), integers and bool != 0. */
int opd_nonzero(const void *x, int32_t dtype, int64_t i);
/* Whether two concrete dims are the same. */
int opd_dims_eq(const prt_dims *a, const prt_dims *b);
/* Row-major strides (in elements) of dims d. */
void opd_strides(const prt_dims *d, int64_t *strides);
/* The size tensor of a data-dependent op: declares output `index` with
 * upper bound `upper` and opt CEIL_DIV(upper, 2); returns its symbol, or
 * NULL after setting the op's error. */
const prt_expr *opd_declare_size(op_object *o, prt_expr_builder *eb, int32_t index,
                                 const prt_expr *upper);
#endif /* PLUGRT_OPS_OPS_DATA_H */

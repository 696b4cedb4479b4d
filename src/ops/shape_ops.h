/*
 * Creators of the shape built-ins: the ops that compute, move or make
 * tensors from shapes (Shape, Gather, Reshape, Unsqueeze, Squeeze, Concat,
 * ConstantOfShape, Expand, Range, Slice, Cast). Most state the values of
 * their small integer outputs (op_class.values), so a chain such as
 * Shape -> Gather -> Unsqueeze -> Concat -> Reshape is worked out as
 * expressions at build time. Kept apart from op_common.h so that these ops
 * and the scaffold can change independently. Internal to libplugrt;
 * builtins.c lists them.
 */
#ifndef PLUGRT_OPS_SHAPE_OPS_H
#define PLUGRT_OPS_SHAPE_OPS_H

#include "ops/op_common.h"

extern const prt_plugin_creator op_shape_creator;
extern const prt_plugin_creator op_gather_creator;
extern const prt_plugin_creator op_reshape_creator;
extern const prt_plugin_creator op_unsqueeze_creator;
extern const prt_plugin_creator op_squeeze_creator;
extern const prt_plugin_creator op_concat_creator;
extern const prt_plugin_creator op_constant_of_shape_creator;
extern const prt_plugin_creator op_expand_creator;
extern const prt_plugin_creator op_range_creator;
extern const prt_plugin_creator op_slice_creator;
extern const prt_plugin_creator op_cast_creator;

#define OP_DT_INDEX (OP_DT(PRT_INT32) | OP_DT(PRT_INT64))

/* Shared by the reshaping ops (reshape.c): the output holds the input's
 * elements in order; checks that the volumes agree, then copies. */
prt_status op_copy_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                       int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                       const void *const *x, void *const *ys, void *ws, void *stream);

/* Tile's and Expand's CPU copy (tile_pad.c): y (dims od) from x (dims id,
 * of od's rank), every od[d] a multiple of id[d]: element k along dim d
 * reads x's k % id[d]. Each input run is copied once, then repeated by
 * doubling memcpy; elements of es bytes. */
void op_tile_copy(const prt_dims *id, const prt_dims *od, const void *x, void *y,
                  size_t es);

/* ---- what the ops' kernels on other devices read --------------------------
 *
 * The rules of each op's definition that a kernel applies, so that every
 * device's kernel computes what the CPU's does (src/ops/<device>/). */

/* The reshaping ops' check (reshape.c): the output holds the input's
 * elements. */
prt_status op_copy_check(const op_object *o, const prt_tensor_desc *in,
                         const prt_tensor_desc *out);
/* Expand's dims checked against each other (expand.c). */
prt_status expand_check(const op_object *o, const prt_dims *id, const prt_dims *od);
/* Transpose's permutation for an input of rank r (transpose.c). */
prt_status tp_perm(const op_object *o, int32_t r, int32_t *perm);
/* Concat's axis for inputs of rank r (concat.c). */
prt_status concat_axis(const op_object *o, int32_t r, int32_t *out);
/* Gather's axis for data of rank r and indices of rank q (gather.c). */
prt_status gather_axis(const op_object *o, int32_t r, int32_t q, int32_t *out);
/* GatherElements's axis for data of rank r and indices of rank ri
 * (gather_elements.c). */
prt_status ge_axis(const op_object *o, int32_t r, int32_t ri, int32_t *out);
/* The entries of Slice's starts/ends/axes/steps (slice.c). */
#define SLICE_MAX 8
/* Slice's start and step per data axis from its inputs' values in host
 * memory (x[1..nb_in-1]; its fields when nb_in is 1), checked against the
 * output's dims (slice.c). */
prt_status slice_host_params(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                             const void *const *x, const prt_tensor_desc *out,
                             int64_t *start, int64_t *step);
/* The dims [*b, *e) of a rank-r input that Shape writes (shape.c). */
void shape_range(const op_object *o, int32_t r, int32_t *b, int32_t *e);
/* ConstantOfShape's element in dtype, its bytes first (fill.c). */
void cos_element(const op_object *o, int32_t dtype, uint8_t one[8]);

#endif /* PLUGRT_OPS_SHAPE_OPS_H */

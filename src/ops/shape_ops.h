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

#ifdef PRT_HAVE_CUDA
/* op_copy_run on CUDA: one device-to-device copy. */
prt_status op_copy_run_cuda(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws,
                            void *stream);
#define OP_COPY_CUDA op_copy_run_cuda
#else
#define OP_COPY_CUDA NULL
#endif

#endif /* PLUGRT_OPS_SHAPE_OPS_H */

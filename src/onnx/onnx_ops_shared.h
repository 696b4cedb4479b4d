/*
 * What the op importers share: onnx_ops.c, whose op table names the custom
 * import functions of each op family, the files of those families, and the
 * one layer in which they all end (onnx_layer.c). The rest of the importer
 * needs none of it (onnx_internal.h is what all of it shares).
 *
 *   onnx_layer.c      a node as one plugin layer: attributes -> fields, data
 *                     and shape inputs, named outputs; which built-ins take
 *                     shape inputs
 *   onnx_ops_const.c  Constant, Identity of a constant, ConstantOfShape
 *   onnx_ops_data.c   Split, Pad, OneHot, EyeLike, Range, Hardmax,
 *                     NonMaxSuppression
 *   onnx_ops_math.c   Cast, Clip, Dropout, the reductions
 *   onnx_ops_nn.c     LayerNormalization, MaxPool and SoftmaxCrossEntropyLoss
 *                     (their optional outputs), Softmax and LogSoftmax,
 *                     Resize and Upsample
 *   onnx_ops_signal.c the window functions, MelWeightMatrix, DFT, STFT
 */
#ifndef PLUGRT_ONNX_OPS_SHARED_H
#define PLUGRT_ONNX_OPS_SHARED_H

#include "onnx_internal.h"

/* ---- a node as one plugin layer (onnx_layer.c) ---------------------------- */

/* The shape-input bits (onnx_choice.shape_inputs, shape_data) of built-in
 * op_type; 0 and 0 if it takes no shape input. */
void onnx_shape_bits(const char *op_type, uint32_t *shape_inputs, uint32_t *shape_data);
/* The node's inputs, names borrowed, into ins (at most cap) and their count
 * into *n; more is an error naming the node (`label`). */
prt_status onnx_node_inputs(const Onnx__NodeProto *node, const char *label,
                            const char **ins, size_t cap, size_t *n);

/* The functions below add one layer of creator c for `node`, named as the
 * node, its outputs named as the node's; `label` names the node in errors.
 * ONNX input k is a data input unless bit k of shape_inputs is set without
 * bit k of shape_data, and a shape input when bit k of shape_inputs is set.
 * Omitted trailing inputs are dropped; an omitted input before a given one
 * is an error (plugin layers take inputs by position). */

/* The generic path: the node's attributes as fields through c's schema. */
prt_status onnx_import_plugin(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *c,
                              uint32_t shape_inputs, uint32_t shape_data);
/* With the fields `fc` (which the caller keeps) instead of the node's
 * attributes. */
prt_status onnx_import_with_fields(onnx_import *imp, const Onnx__NodeProto *node,
                                   const char *label, const prt_plugin_creator *c,
                                   const prt_field_collection *fc, uint32_t shape_inputs,
                                   uint32_t shape_data);
/* With the node's attributes as fields plus `extra`: with `replace` an
 * extra field takes the place of an attribute of its name; without, both
 * are passed on. Input k with bit k of `skip` is no input of the layer (its
 * value went into the fields), and may be omitted. */
prt_status onnx_import_fields_extra(onnx_import *imp, const Onnx__NodeProto *node,
                                    const char *label, const prt_plugin_creator *c,
                                    const prt_field *extra, int32_t nb_extra, int replace,
                                    uint32_t shape_inputs, uint32_t shape_data,
                                    uint32_t skip);
/* onnx_import_fields_extra without replacing, with the node's inputs
 * replaced by ins[0..nb_ins) (names; "" for an omitted one). */
prt_status onnx_import_extra(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *c,
                             const prt_field *extra, int32_t nb_extra, const char **ins,
                             size_t nb_ins, uint32_t shape_inputs, uint32_t shape_data);

/* ---- the op families' import functions (onnx_ops_*.c) --------------------- */

/* The custom functions of the op table (onnx_choice.custom): each imports
 * one node of its ops, which the generic path cannot (an attribute or input
 * to rearrange, a constant to fold, a rule of an older opset), and says why
 * beside its code. `creator` is the table entry's built-in (NULL for
 * Constant, which needs none); `label` names the node in errors. */

/* onnx_ops_const.c */
prt_status onnx_import_constant(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_identity(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_constant_of_shape(onnx_import *imp, const Onnx__NodeProto *node,
                                         const char *label,
                                         const prt_plugin_creator *creator);

/* onnx_ops_data.c */
prt_status onnx_import_split(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_pad(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_one_hot(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_eye_like(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_range(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_hardmax(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_nms(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator);

/* onnx_ops_math.c */
prt_status onnx_import_cast(onnx_import *imp, const Onnx__NodeProto *node,
                            const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_clip(onnx_import *imp, const Onnx__NodeProto *node,
                            const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_dropout(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_reduce(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *creator);

/* onnx_ops_nn.c (onnx_import_nb_outputs: LayerNormalization, MaxPool,
 * SoftmaxCrossEntropyLoss) */
prt_status onnx_import_attention(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_nb_outputs(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_softmax(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_resize(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_roi_align(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_rnn(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator);

/* onnx_ops_signal.c (onnx_import_signal_dtype: the window functions and
 * MelWeightMatrix) */
prt_status onnx_import_signal_dtype(onnx_import *imp, const Onnx__NodeProto *node,
                                    const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_dft(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator);
prt_status onnx_import_stft(onnx_import *imp, const Onnx__NodeProto *node,
                            const char *label, const prt_plugin_creator *creator);

#endif /* PLUGRT_ONNX_OPS_SHARED_H */

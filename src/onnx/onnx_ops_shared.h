/*
 * What the op importers share: onnx_ops.c, whose op table names the custom
 * import functions of each op family, and the files that hold them, which
 * all end in one layer made by onnx_layer.c. The rest of the importer needs
 * none of it (onnx_internal.h is what all of it shares).
 *
 *   onnx_layer.c  a node as one plugin layer: attributes -> fields, data
 *                 and shape inputs, named outputs; which built-ins take
 *                 shape inputs
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

#endif /* PLUGRT_ONNX_OPS_SHARED_H */

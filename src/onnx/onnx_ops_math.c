/* The elementwise ops and reductions whose import rearranges the node:
 * Cast's ONNX element type made a prt_dtype, Clip with max but no min,
 * Dropout's ratio, training_mode and mask, and the reductions' empty axes. */
#include "onnx_ops_shared.h"

/* Cast's `to` is an ONNX TensorProto.DataType; the built-in takes a
 * prt_dtype. saturate (opset 19) passes as it is. */
prt_status onnx_import_cast(onnx_import *imp, const Onnx__NodeProto *node,
                            const char *label, const prt_plugin_creator *creator)
{
    const Onnx__AttributeProto *a = onnx_node_attr(node, "to");
    const Onnx__AttributeProto *sat = onnx_node_attr(node, "saturate");
    int32_t to, saturate = 1;
    prt_field f[2];
    prt_field_collection fc = {1, f};
    prt_status st;
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return onnx_error(PRT_ERR_MALFORMED, "%s: Cast needs an INT attribute 'to'",
                          label);
    if (sat && sat->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return onnx_error(PRT_ERR_MALFORMED, "%s: Cast's 'saturate' must be an INT",
                          label);
    if (sat && sat->i != 0 && sat->i != 1)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: Cast's saturate %lld is not supported (0 or 1)", label,
                          (long long)sat->i);
    if (node->n_attribute != 1u + (sat != NULL))
        onnx_warn("%s: attributes other than 'to' and 'saturate' are ignored", label);
    st = onnx_dtype_from_onnx((int32_t)a->i, label, &to);
    if (st)
        return st;
    f[0].name = "to";
    f[0].data = &to;
    f[0].type = PRT_FIELD_INT32;
    f[0].length = 1;
    if (sat) {
        saturate = (int32_t)sat->i;
        f[1].name = "saturate";
        f[1].data = &saturate;
        f[1].type = PRT_FIELD_INT32;
        f[1].length = 1;
        fc.nb_fields = 2;
    }
    return onnx_import_with_fields(imp, node, label, creator, &fc, 0, 0);
}

/* Clip(X, "", max): the built-in takes max second, with field max_only. */
prt_status onnx_import_clip(onnx_import *imp, const Onnx__NodeProto *node,
                            const char *label, const prt_plugin_creator *creator)
{
    const int32_t one = 1;
    prt_field f = {"max_only", &one, PRT_FIELD_INT32, 1};
    char *inputs[2];
    if (onnx_node_input(node, 1)[0] || !onnx_node_input(node, 2)[0])
        return onnx_import_plugin(imp, node, label, creator, 0, 0);
    inputs[0] = node->input[0];
    inputs[1] = node->input[2];
    return onnx_import_extra(imp, node, label, creator, &f, 1, (const char **)inputs, 2,
                             0, 0);
}

/* Dropout: data, the ratio if given (a data input, not read), then
 * training_mode if given (a shape input, which must be false); field mask
 * from the node's outputs (bool from opset 10, the data's dtype before). */
prt_status onnx_import_dropout(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator)
{
    int32_t mask = node->n_output > 1 && onnx_str(node->output[1])[0]
                       ? (imp->opset < 10 ? 2 : 1)
                       : 0;
    prt_field f = {"mask", &mask, PRT_FIELD_INT32, 1};
    char *inputs[3];
    size_t n = 0;
    uint32_t shape = 0;
    if (!onnx_node_input(node, 0)[0])
        return onnx_error(PRT_ERR_MALFORMED, "%s: Dropout needs its data input", label);
    inputs[n++] = node->input[0];
    if (onnx_node_input(node, 1)[0])
        inputs[n++] = node->input[1];
    if (onnx_node_input(node, 2)[0]) {
        const onnx_value *v = onnx_value_find(imp, node->input[2]);
        /* A graph input is known only at run time, and a bool one cannot
         * be a shape input: say why here rather than in the builder. */
        if (v && v->kind == ONNX_VALUE_INPUT)
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: training_mode is graph input '%s'; plugrt runs "
                              "Dropout for inference, so it must be a constant false",
                              label, node->input[2]);
        shape = 1u << n;
        inputs[n++] = node->input[2];
    }
    return onnx_import_extra(imp, node, label, creator, &f, 1, (const char **)inputs, n,
                             shape, 0);
}

/* Whether the value `name` is a graph input or a constant of dims [0]. */
static int value_is_empty_1d(onnx_import *imp, const char *name)
{
    const onnx_value *v = onnx_value_find(imp, name);
    prt_dims d;
    if (!v)
        return 0;
    if (v->init)
        return v->init->n_dims == 1 && v->init->dims[0] == 0;
    return v->tensor >= 0 &&
           prt_network_get_tensor(imp->net, v->tensor, NULL, NULL, &d) == PRT_OK &&
           d.nb_dims == 1 && d.d[0] == 0;
}

/* The reductions' axes (ONNX input 1) are a shape input; an empty one (a
 * graph input or constant of dims [0], whatever its values) is left out,
 * which means the same (no axes) and needs no values. */
prt_status onnx_import_reduce(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *creator)
{
    if (onnx_node_input(node, 1)[0] && node->n_input == 2 &&
        value_is_empty_1d(imp, node->input[1]))
        return onnx_import_extra(imp, node, label, creator, NULL, 0,
                                 (const char **)node->input, 1, 0, 0);
    return onnx_import_plugin(imp, node, label, creator, 0x2, 0);
}

/* The nodes the importer makes constants of, or reads a constant for:
 * Constant (a network constant under its output's name), Identity of a
 * constant (the same constant under a second name, no layer) and
 * ConstantOfShape (its one-element `value` tensor made the built-in's dtype
 * and value fields). */
#include <string.h>

#include "onnx_ops_shared.h"

/* Constant folds into a network constant named by its output. */
prt_status onnx_import_constant(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator)
{
    onnx_tensor t;
    const Onnx__AttributeProto *a;
    const char *out;
    prt_status st;
    (void)creator;
    if (node->n_output != 1 || node->n_attribute != 1)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: a Constant has one output and one attribute; this one "
                          "has %zu and %zu",
                          label, node->n_output, node->n_attribute);
    a = node->attribute[0];
    out = onnx_str(node->output[0]);
    memset(&t, 0, sizeof t);
    if (strcmp(onnx_str(a->name), "value") == 0 &&
        a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t) {
        /* Made on first use, like an initializer: an unused one of a type
         * plugrt lacks does no harm. */
        if (!out[0])
            return PRT_OK;
        return onnx_value_add(imp, out, ONNX_VALUE_CONSTANT, -1, a->t, label);
    } else if ((strcmp(onnx_str(a->name), "value_float") == 0 &&
                a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) ||
               (strcmp(onnx_str(a->name), "value_floats") == 0 &&
                a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) ||
               (strcmp(onnx_str(a->name), "value_int") == 0 &&
                a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) ||
               (strcmp(onnx_str(a->name), "value_ints") == 0 &&
                a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)) {
        st = onnx_tensor_from_attr(a, label, &t);
        if (st)
            return st;
    } else {
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: Constant attribute '%s' is not supported (value, "
                          "value_float(s) and value_int(s) are)",
                          label, onnx_str(a->name));
    }
    st = onnx_value_add_constant(imp, out, &t, label);
    onnx_tensor_free(&t);
    return st;
}

/* Identity of a constant (PyTorch's exporter writes one for every weight
 * it shares, e.g. a bias) is that constant under a second name: no layer,
 * no copy at each run, and the fusions see the value. Anything else, or
 * with fusions turned off (one layer per node), is the built-in layer. */
prt_status onnx_import_identity(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator)
{
    const char *in = onnx_node_input(node, 0);
    const onnx_value *v = onnx_value_find(imp, in);
    int32_t tensor;
    prt_status st;
    if (imp->parser->no_fuse || node->n_input != 1 || node->n_output != 1 ||
        !onnx_str(node->output[0])[0] || !v || v->kind != ONNX_VALUE_CONSTANT)
        return onnx_import_plugin(imp, node, label, creator, 0, 0);
    st = onnx_value_tensor(imp, in, &tensor);
    if (st)
        return onnx_error_wrap(st, "%s", label);
    return onnx_value_add(imp, onnx_str(node->output[0]), ONNX_VALUE_CONSTANT, tensor,
                          v->init, label);
}

/* ConstantOfShape's `value` is a one-element TENSOR: its dtype becomes the
 * field dtype and its element the field value (int64 for integer types and
 * bool, float64 for float32, the bits for half floats: all exact). Absent,
 * a float32 0. */
prt_status onnx_import_constant_of_shape(onnx_import *imp, const Onnx__NodeProto *node,
                                         const char *label,
                                         const prt_plugin_creator *creator)
{
    const Onnx__AttributeProto *a = onnx_node_attr(node, "value");
    onnx_tensor t;
    int32_t dtype = PRT_FLOAT32;
    int64_t iv = 0;
    double fv = 0.0;
    uint16_t hv = 0;
    prt_field f[2];
    prt_field_collection fc = {2, f};
    prt_status st;
    if (a) {
        if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t)
            return onnx_error(PRT_ERR_MALFORMED, "%s: attribute 'value' must be a TENSOR",
                              label);
        st = onnx_tensor_load(a->t, imp->base_dir, label, &t);
        if (st)
            return st;
        if (t.bytes != prt_dtype_size(t.dtype)) {
            onnx_tensor_free(&t);
            return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: attribute 'value' must hold one element", label);
        }
        dtype = t.dtype;
        if (dtype == PRT_FLOAT32)
            fv = onnx_tensor_float(&t, 0);
        else if (dtype == PRT_FLOAT64)
            memcpy(&fv, t.data, 8);
        else if (onnx_dtype_is_float(dtype))
            memcpy(&hv, t.data, 2);
        else
            iv = onnx_tensor_int(&t, 0);
        onnx_tensor_free(&t);
    }
    f[0].name = "dtype";
    f[0].data = &dtype;
    f[0].type = PRT_FIELD_INT32;
    f[0].length = 1;
    f[1].name = "value";
    f[1].length = 1;
    if (dtype == PRT_FLOAT32 || dtype == PRT_FLOAT64) {
        f[1].data = &fv;
        f[1].type = PRT_FIELD_FLOAT64;
    } else if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        f[1].data = &hv; /* the bits, as the field types carry them */
        f[1].type = dtype == PRT_FLOAT16 ? PRT_FIELD_FLOAT16 : PRT_FIELD_BFLOAT16;
    } else {
        f[1].data = &iv;
        f[1].type = PRT_FIELD_INT64;
    }
    return onnx_import_with_fields(imp, node, label, creator, &fc, 0x1, 0);
}

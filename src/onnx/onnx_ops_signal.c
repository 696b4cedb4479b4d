/* The signal ops' importers: HannWindow, HammingWindow, BlackmanWindow
 * and MelWeightMatrix (output_datatype, an ONNX element type, becomes the
 * built-in's prt_dtype field `dtype`), DFT (opset 17's axis attribute;
 * opset 20's axis input, a constant, becomes the field) and STFT (an omitted window
 * before a given frame_length is dropped: the built-in tells the two apart by its shape
 * inputs). Their size-like inputs are shape inputs that are also data inputs
 * (onnx_layer.c's table). */
#include <stdio.h>
#include <string.h>

#include "onnx_ops_shared.h"

#define SIG_MAX_ATTRS 8

prt_status onnx_import_signal_dtype(onnx_import *imp, const Onnx__NodeProto *node,
                                    const char *label, const prt_plugin_creator *creator)
{
    Onnx__NodeProto n2;
    Onnx__AttributeProto *attrs[SIG_MAX_ATTRS];
    int32_t dtype = PRT_FLOAT32;
    prt_field extra = {"dtype", &dtype, PRT_FIELD_INT32, 1};
    uint32_t si, sd;
    int found;
    prt_status st = onnx_take_dtype_attr(node, label, "output_datatype", attrs,
                                         SIG_MAX_ATTRS, &n2, &dtype, &found);
    if (st)
        return st;
    onnx_shape_bits(onnx_str(node->op_type), &si, &sd);
    return onnx_import_fields_extra(imp, &n2, label, creator, &extra, 1, 0, si, sd, 0);
}

prt_status onnx_import_dft(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator)
{
    uint32_t si, sd;
    const char *axis_in = node->n_input > 2 ? onnx_node_input(node, 2) : "";
    int64_t a = -2;
    int32_t axis, n = 0;
    prt_field extra = {"axis", &axis, PRT_FIELD_INT32, 1};
    prt_status st;
    onnx_shape_bits("DFT", &si, &sd);
    if (imp->opset < 20 && !axis_in[0])
        return onnx_import_plugin(imp, node, label, creator, si, sd);
    /* Opset 20: the axis is input 2 (default -2, counted over the whole
     * rank, comps dim included), which must be a constant; the field counts
     * a negative axis back from the comps dim, so -2 there is -1 here. */
    if (onnx_node_attr(node, "axis"))
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: DFT of opset %lld takes its axis as input 2, not an "
                          "attribute",
                          label, (long long)imp->opset);
    if (axis_in[0]) {
        st = onnx_value_const_ints(imp, axis_in, label, "axis (input 2)", &a, 1, &n);
        if (st)
            return st;
        if (n != 1)
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: DFT's axis (input 2) '%s' must be a constant of one "
                              "value (an initializer or a Constant node)",
                              label, axis_in);
    }
    if (a < -(int64_t)PRT_MAX_DIMS || a >= PRT_MAX_DIMS)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: DFT's axis %lld is out of range",
                          label, (long long)a);
    axis = (int32_t)(a < 0 ? a + 1 : a);
    if (a == -1)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: DFT's axis -1 is the dim of the real and imaginary parts, "
                          "not a signal dim",
                          label);
    return onnx_import_fields_extra(imp, node, label, creator, &extra, 1, 1, si, sd,
                                    0x4u);
}

prt_status onnx_import_stft(onnx_import *imp, const Onnx__NodeProto *node,
                            const char *label, const prt_plugin_creator *creator)
{
    const char *ins[4];
    size_t n = 0;
    uint32_t si, sd;
    if (onnx_node_inputs(node, label, ins, 4, &n))
        return PRT_ERR_INVALID_ARGUMENT;
    onnx_shape_bits("STFT", &si, &sd);
    if (n == 4 && !ins[2][0] && ins[3][0]) {
        /* signal, frame_step, frame_length: shape inputs 1 and 2. */
        ins[2] = ins[3];
        return onnx_import_extra(imp, node, label, creator, NULL, 0, ins, 3, 0x6, 0x6);
    }
    return onnx_import_extra(imp, node, label, creator, NULL, 0, ins, n, si, sd);
}

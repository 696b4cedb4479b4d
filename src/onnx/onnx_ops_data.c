/* The data-movement ops whose import rearranges the node: constant inputs
 * made fields so that they need no shape input (Split's split, Pad's pads
 * and axes, OneHot's depth), EyeLike's ONNX element type, Range over floats
 * folded into a constant, and Hardmax's rule before opset 13. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_ops_shared.h"

/* Split: the number of outputs is the node's (field outputs), and a
 * constant `split` input (opset 13 on) becomes field split, so that more
 * than 8 parts need no shape input. */
prt_status onnx_import_split(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *creator)
{
    int64_t split[64];
    int32_t outputs = (int32_t)(node->n_output < 64 ? node->n_output : 64), n;
    prt_field extra[2];
    const char *ins[2];
    size_t nb_ins = 0;
    uint32_t si, sd;
    prt_status st = onnx_node_inputs(node, label, ins, 2, &nb_ins);
    if (!st)
        st = onnx_value_const_ints(imp, onnx_node_input(node, 1), label, "split", split,
                                   64, &n);
    if (st)
        return st;
    onnx_shape_bits("Split", &si, &sd);
    extra[0] = (prt_field){"outputs", &outputs, PRT_FIELD_INT32, 1};
    extra[1] = (prt_field){"split", split, PRT_FIELD_INT64, n};
    if (n >= 0)
        nb_ins = 1;
    return onnx_import_extra(imp, node, label, creator, extra, n >= 0 ? 2 : 1, ins,
                             nb_ins, si, sd);
}

/* Pad: from opset 11 a constant `pads` input becomes field pads (so rank 5
 * and up pads need no shape input of more than 8 values), and the `axes`
 * input (opset 18), which must be a constant, field axes. constant_value
 * stays an input. */
prt_status onnx_import_pad(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator)
{
    int64_t pads[16], axes[8];
    int32_t np = -1, na = -1, nb_extra = 0;
    prt_field extra[2];
    const char *ins[4];
    size_t nb_ins = 0;
    uint32_t si, sd;
    prt_status st = onnx_node_inputs(node, label, ins, 4, &nb_ins);
    if (!st)
        st = onnx_value_const_ints(imp, onnx_node_input(node, 1), label, "pads", pads, 16,
                                   &np);
    if (!st)
        st = onnx_value_const_ints(imp, onnx_node_input(node, 3), label, "axes", axes, 8,
                                   &na);
    if (st)
        return st;
    if (onnx_node_input(node, 3)[0] && na < 0)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: Pad's axes input '%s' must be a constant (an initializer)",
                          label, onnx_node_input(node, 3));
    onnx_shape_bits("Pad", &si, &sd);
    nb_ins = 0;
    if (np >= 0) {
        extra[nb_extra++] = (prt_field){"pads", pads, PRT_FIELD_INT64, np};
        si = sd = 0;
    }
    if (na >= 0)
        extra[nb_extra++] = (prt_field){"axes", axes, PRT_FIELD_INT64, na};
    ins[nb_ins++] = onnx_node_input(node, 0);
    if (np < 0 && onnx_node_input(node, 1)[0])
        ins[nb_ins++] = onnx_node_input(node, 1);
    if (onnx_node_input(node, 2)[0])
        ins[nb_ins++] = onnx_node_input(node, 2);
    return onnx_import_extra(imp, node, label, creator, extra, nb_extra, ins, nb_ins, si,
                             sd);
}

/* OneHot: a constant `depth` (of any numeric type) becomes field depth;
 * otherwise it is a shape input: an integer, or a float32 one (field
 * depth_float; other float types are refused by the builder). */
prt_status onnx_import_one_hot(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator)
{
    int64_t depth;
    int32_t n;
    prt_field extra = {"depth", &depth, PRT_FIELD_INT64, 1};
    const char *ins[3];
    size_t nb_ins = 0;
    uint32_t si, sd;
    prt_status st = onnx_node_inputs(node, label, ins, 3, &nb_ins);
    if (!st)
        st = onnx_value_const_ints(imp, onnx_node_input(node, 1), label, "depth", &depth,
                                   1, &n);
    if (st)
        return st;
    onnx_shape_bits("OneHot", &si, &sd);
    if (n < 0 || nb_ins < 3) {
        int32_t t, dtype = -1, one = 1;
        prt_field fl = {"depth_float", &one, PRT_FIELD_INT32, 1};
        if (nb_ins > 1 &&
            (onnx_value_tensor(imp, ins[1], &t) != PRT_OK ||
             prt_network_get_tensor(imp->net, t, NULL, &dtype, NULL) != PRT_OK))
            dtype = -1; /* the import below names what is wrong */
        return onnx_import_extra(imp, node, label, creator, &fl, dtype == PRT_FLOAT32,
                                 ins, nb_ins, si, sd);
    }
    ins[1] = ins[2];
    return onnx_import_extra(imp, node, label, creator, &extra, 1, ins, 2, 0, 0);
}

/* EyeLike's dtype is an ONNX element type; the built-in takes a prt_dtype. */
prt_status onnx_import_eye_like(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator)
{
    Onnx__NodeProto n2;
    Onnx__AttributeProto *attrs[8];
    int32_t dtype = PRT_FLOAT32;
    prt_field extra = {"dtype", &dtype, PRT_FIELD_INT32, 1};
    const char *ins[1];
    size_t nb_ins = 0;
    int found;
    prt_status st;
    if (onnx_node_inputs(node, label, ins, 1, &nb_ins))
        return PRT_ERR_INVALID_ARGUMENT;
    /* The other attributes go through the schema. */
    st = onnx_take_dtype_attr(node, label, "dtype", attrs, 8, &n2, &dtype, &found);
    if (st)
        return st;
    return onnx_import_extra(imp, &n2, label, creator, &extra, found ? 1 : 0, ins, nb_ins,
                             0, 0);
}

/* Range over floats: its length is no expression of integer values, so
 * start, limit and delta must be constants and the importer makes the
 * output a constant, accumulating in the dtype (ONNX's definition:
 * y[i] = y[i-1] + delta). Integer bounds go to the built-in (shape
 * inputs). */
prt_status onnx_import_range(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *creator)
{
    onnx_tensor in[3], t;
    double v[3];
    int32_t dtype = -1, nb_const = 0;
    const char *out = node->n_output ? onnx_str(node->output[0]) : "";
    uint32_t si, sd;
    prt_status st = PRT_OK;
    memset(in, 0, sizeof in);
    for (int k = 0; k < 3 && !st; k++) {
        const char *name = onnx_node_input(node, (size_t)k);
        const onnx_value *val = onnx_value_find(imp, name);
        int32_t tensor, dt = -1;
        if (val && val->kind == ONNX_VALUE_CONSTANT && val->init) {
            st = onnx_tensor_load(val->init, imp->base_dir, label, &in[k]);
            if (!st && in[k].bytes != prt_dtype_size(in[k].dtype))
                st = onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: input %d must be a scalar",
                                label, k);
            nb_const += !st;
            dt = st ? -1 : in[k].dtype;
        } else if (name[0] && !onnx_value_tensor(imp, name, &tensor) &&
                   prt_network_get_tensor(imp->net, tensor, NULL, &dt, NULL) != PRT_OK) {
            dt = -1;
        }
        if (onnx_dtype_is_float(dt))
            dtype = dt;
    }
    if (!st && dtype >= 0 && nb_const < 3)
        st = onnx_error(PRT_ERR_UNSUPPORTED,
                        "%s: Range over %s needs start, limit and delta given as "
                        "initializers (or Constant nodes' 'value'): its length depends "
                        "on their values, and plugrt's shapes are integer expressions",
                        label, prt_dtype_name(dtype));
    for (int k = 0; k < 3 && !st && dtype >= 0; k++) {
        if (in[k].dtype != dtype)
            st = onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: inputs of differing dtypes",
                            label);
        else
            v[k] = onnx_tensor_float(&in[k], 0);
    }
    for (int k = 0; k < 3; k++)
        if (in[k].data)
            onnx_tensor_free(&in[k]);
    if (st)
        return st;
    if (dtype < 0) {
        onnx_shape_bits("Range", &si, &sd);
        return onnx_import_with_fields(imp, node, label, creator, NULL, si, sd);
    }
    {
        /* The difference in float, then a double quotient: ONNX Runtime's
         * count (it matters where the quotient is an integer but for
         * rounding). */
        double q = ceil((double)((float)v[1] - (float)v[0]) / v[2]);
        int64_t n = q > 0 ? (int64_t)q : 0;
        float acc = (float)v[0];
        if (v[2] == 0 || q != q || q > (double)(1 << 24))
            return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: start %g, limit %g and delta %g give no usable length",
                              label, v[0], v[1], v[2]);
        memset(&t, 0, sizeof t);
        t.dtype = dtype;
        t.dims.nb_dims = 1;
        t.dims.d[0] = n;
        t.bytes = (size_t)n * prt_dtype_size(dtype);
        t.data = prt_malloc(t.bytes ? t.bytes : 1);
        if (!t.data)
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", label);
        for (int64_t i = 0; i < n; i++) {
            if (dtype == PRT_FLOAT32) {
                ((float *)t.data)[i] = acc;
                acc += (float)v[2];
            } else {
                uint16_t hb = dtype == PRT_FLOAT16 ? prt_float_to_half(acc)
                                                   : prt_float_to_bf16(acc);
                ((uint16_t *)t.data)[i] = hb;
                acc = (dtype == PRT_FLOAT16 ? prt_half_to_float(hb)
                                            : prt_bf16_to_float(hb)) +
                      (float)v[2];
            }
        }
    }
    st = onnx_value_add_constant(imp, out, &t, label);
    onnx_tensor_free(&t);
    return st;
}

/* Hardmax before opset 13 views the input as 2-D. */
prt_status onnx_import_hardmax(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator)
{
    int32_t coerce = imp->opset < 13;
    prt_field extra = {"coerce_2d", &coerce, PRT_FIELD_INT32, 1};
    const char *ins[1];
    size_t nb_ins = 0;
    if (onnx_node_inputs(node, label, ins, 1, &nb_ins))
        return PRT_ERR_INVALID_ARGUMENT;
    return onnx_import_extra(imp, node, label, creator, &extra, 1, ins, nb_ins, 0, 0);
}

/* NonMaxSuppression: its optional inputs (max_output_boxes_per_class,
 * iou_threshold, score_threshold) that are constants become fields, so
 * that a constant max_output_boxes_per_class bounds the output rows and
 * the layer has fewer inputs. The layer keeps ONNX's positions: inputs up
 * to the last one computed at run time stay inputs (constants among them
 * too), and an omitted one before it is an error naming it. An empty
 * constant counts as omitted. max_output_boxes_per_class is clamped to
 * int32's range (the field's; no batch has that many boxes). */
prt_status onnx_import_nms(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator)
{
    static const char *const names[3] = {"max_output_boxes_per_class", "iou_threshold",
                                         "score_threshold"};
    int32_t max_out = 0, nb_extra = 0;
    float iou = 0.0f, th = 0.0f;
    prt_field extra[3];
    const char *ins[5];
    size_t nb_ins = 0, last = 1;
    prt_status st = onnx_node_inputs(node, label, ins, 5, &nb_ins);
    if (st)
        return st;
    for (size_t k = 2; k < nb_ins; k++) {
        const onnx_value *v = ins[k][0] ? onnx_value_find(imp, ins[k]) : NULL;
        if (v && !v->init)
            last = k; /* a graph input or a node's output: known at run time */
    }
    for (size_t k = 2; k < nb_ins; k++) {
        onnx_tensor t;
        int found = 0;
        char where[256];
        if (k <= last) {
            if (!ins[k][0])
                return onnx_error(PRT_ERR_UNSUPPORTED,
                                  "%s: NonMaxSuppression's %s is omitted while a later "
                                  "optional input is computed at run time; give it",
                                  label, names[k - 2]);
            continue;
        }
        if (!ins[k][0])
            continue;
        snprintf(where, sizeof where, "%s: %s input '%s'", label, names[k - 2], ins[k]);
        st = onnx_value_const_tensor(imp, ins[k], where, &t, &found);
        if (st)
            return st;
        if (!found)
            return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s is not a constant", where);
        if (t.bytes >= prt_dtype_size(t.dtype)) {
            if (k == 2) {
                int64_t m = onnx_dtype_is_float(t.dtype) ? 0 : onnx_tensor_int(&t, 0);
                max_out = m > INT32_MAX ? INT32_MAX : m < 0 ? 0 : (int32_t)m;
                extra[nb_extra++] = (prt_field){names[0], &max_out, PRT_FIELD_INT32, 1};
            } else if (onnx_dtype_is_float(t.dtype)) {
                float *dst = k == 3 ? &iou : &th;
                *dst = onnx_tensor_float(&t, 0);
                extra[nb_extra++] = (prt_field){names[k - 2], dst, PRT_FIELD_FLOAT32, 1};
            }
        }
        onnx_tensor_free(&t);
    }
    return onnx_import_extra(imp, node, label, creator, extra, nb_extra, ins, last + 1, 0,
                             0);
}

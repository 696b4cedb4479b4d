/* The normalization and spatial ops whose import rearranges the node:
 * LayerNormalization's, MaxPool's and SoftmaxCrossEntropyLoss's optional
 * outputs, Softmax and LogSoftmax before opset 13, and Resize and Upsample
 * (constant roi and scales made fields, each opset's coordinate rules). */
#include <stdio.h>
#include <string.h>

#include "onnx_ops_shared.h"

/* LayerNormalization's Mean and InvStdDev, MaxPool's Indices,
 * SoftmaxCrossEntropyLoss's log_prob: the plugin makes as many outputs as
 * the node names (up to the last named one), so that outputs nobody asked
 * for are not computed. */
prt_status onnx_import_nb_outputs(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator)
{
    int32_t nb = (int32_t)node->n_output;
    prt_field f = {"nb_outputs", &nb, PRT_FIELD_INT32, 1};
    while (nb > 1 && !onnx_str(node->output[nb - 1])[0])
        nb--;
    return onnx_import_fields_extra(imp, node, label, creator, &f, nb > 1 ? 1 : 0, 1, 0,
                                    0, 0);
}

/* Attention without the KV cache: past_key, past_value and
 * nonpad_kv_seqlen (inputs 4 to 6) and the outputs past Y (present_key,
 * present_value, qk_matmul_output) are refused by name; an omitted
 * attn_mask is no input of the layer. */
prt_status onnx_import_attention(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator)
{
    static const char *const ins_names[] = {"past_key", "past_value", "nonpad_kv_seqlen"};
    static const char *const outs_names[] = {"present_key", "present_value",
                                             "qk_matmul_output"};
    const char *ins[4];
    size_t nb = node->n_input < 4 ? node->n_input : 4;
    for (size_t k = 4; k < node->n_input && k < 7; k++)
        if (onnx_node_input(node, k)[0])
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: Attention's %s input is not supported (plugrt's "
                              "Attention has no KV cache)",
                              label, ins_names[k - 4]);
    for (size_t k = 1; k < node->n_output && k < 4; k++)
        if (onnx_str(node->output[k])[0])
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: Attention's %s output is not supported (plugrt's "
                              "Attention computes Y alone)",
                              label, outs_names[k - 1]);
    if (node->n_input > 7 || node->n_output > 4)
        return onnx_error(
            PRT_ERR_INVALID_ARGUMENT,
            "%s: Attention has %zu inputs and %zu outputs; it takes at most "
            "7 and 4",
            label, node->n_input, node->n_output);
    for (size_t k = 0; k < nb; k++)
        ins[k] = onnx_node_input(node, k);
    if (nb == 4 && !ins[3][0])
        nb = 3;
    return onnx_import_extra(imp, node, label, creator, NULL, 0, ins, nb, 0, 0);
}

/* Softmax and LogSoftmax before opset 13 work on X coerced to 2-D at
 * `axis`, which defaults to 1 there. */
prt_status onnx_import_softmax(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator)
{
    int32_t one = 1;
    prt_field f[2] = {{"coerce_2d", &one, PRT_FIELD_INT32, 1},
                      {"axis", &one, PRT_FIELD_INT32, 1}};
    if (imp->opset >= 13)
        return onnx_import_fields_extra(imp, node, label, creator, NULL, 0, 1, 0, 0, 0);
    return onnx_import_fields_extra(imp, node, label, creator, f,
                                    onnx_node_attr(node, "axis") ? 1 : 2, 1, 0, 0, 0);
}

#define RESIZE_MAX_VALUES (2 * PRT_MAX_DIMS) /* roi: begins and ends */

/* Resize's (or Upsample's) float input k as values for a field: absent
 * (*n = -1) when the input is omitted or empty; an error naming it when it
 * is not a constant, unless `runtime` is given: then a float32 value known
 * only at run time sets *runtime (scales as a float32 shape input). */
static prt_status import_resize_floats(onnx_import *imp, const Onnx__NodeProto *node,
                                       const char *label, size_t k, const char *what,
                                       float *dst, int32_t *n, int *runtime)
{
    const char *name = onnx_node_input(node, k);
    char where[600];
    onnx_tensor t;
    int found;
    size_t count;
    prt_status st;
    *n = -1;
    if (!name[0])
        return PRT_OK;
    snprintf(where, sizeof where, "%s: %s input '%s'", label, what, name);
    st = onnx_value_const_tensor(imp, name, where, &t, &found);
    if (st)
        return st;
    if (!found && runtime) {
        int32_t tensor, dtype;
        st = onnx_value_tensor(imp, name, &tensor);
        if (!st)
            st = prt_network_get_tensor(imp->net, tensor, NULL, &dtype, NULL);
        if (st)
            return onnx_error(st, "%s: %s", where, prt_last_error());
        if (dtype != PRT_FLOAT32)
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s is %s and known only at run time; such scales must be "
                              "float32 (a float32 shape input)",
                              where, prt_dtype_name(dtype));
        *runtime = 1;
        return PRT_OK;
    }
    if (!found)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s must be a constant (an initializer or a Constant node): "
                          "plugrt fixes output shapes when it builds the network",
                          where);
    count = t.bytes / prt_dtype_size(t.dtype);
    if (t.dtype != PRT_FLOAT32 && t.dtype != PRT_FLOAT16) {
        onnx_tensor_free(&t);
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s is %s; float32 or float16 is supported", where,
                          prt_dtype_name(t.dtype));
    }
    if (count > RESIZE_MAX_VALUES) {
        onnx_tensor_free(&t);
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s has %zu values; at most %d",
                          where, count, RESIZE_MAX_VALUES);
    }
    for (size_t i = 0; i < count; i++)
        dst[i] = onnx_tensor_float(&t, i);
    onnx_tensor_free(&t);
    *n = count ? (int32_t)count : -1;
    return PRT_OK;
}

/* Resize at every opset, and Upsample (opsets 7-9: Resize's asymmetric
 * coordinates with nearest rounding down, scales >= 1). roi and constant
 * scales become fields; scales known only at run time (a float32 graph
 * input) are a float32 shape input and a data input both (field
 * scales_input), so the output's dims are floor(D * scale) of the values
 * the profile bounds; sizes is a shape input (a constant, a network input
 * with known values, or computed from shapes), and a data input as well
 * when keep_aspect_ratio_policy needs its values at run time. Resize 10 and Upsample
 * round nearest as ONNX Runtime does there: down when upsampling, up when downsampling.
 */
prt_status onnx_import_resize(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *creator)
{
    int upsample = strcmp(onnx_str(node->op_type), "Upsample") == 0;
    int legacy = upsample || imp->opset < 11; /* X, scales */
    float scales[RESIZE_MAX_VALUES], roi[RESIZE_MAX_VALUES];
    int32_t nb_scales = -1, nb_roi = -1, nb = 0, one = 1;
    int runtime = 0;
    prt_field f[5];
    char mode[32] = "", ctm[32] = "", keep[32] = "";
    const Onnx__AttributeProto *a;
    prt_status st;
    if ((a = onnx_node_attr(node, "mode")) != NULL)
        onnx_attr_string(a, mode, sizeof mode);
    if ((a = onnx_node_attr(node, "coordinate_transformation_mode")) != NULL)
        onnx_attr_string(a, ctm, sizeof ctm);
    if ((a = onnx_node_attr(node, "keep_aspect_ratio_policy")) != NULL)
        onnx_attr_string(a, keep, sizeof keep);
    if (legacy) {
        int up = 0, down = 0;
        st = PRT_OK;
        if (!upsample || imp->opset >= 9)
            st = import_resize_floats(imp, node, label, 1, "scales", scales, &nb_scales,
                                      &runtime);
        else if ((a = onnx_node_attr(node, "scales")) != NULL &&
                 a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS &&
                 a->n_floats <= RESIZE_MAX_VALUES) {
            nb_scales = (int32_t)a->n_floats;
            for (size_t i = 0; i < a->n_floats; i++)
                scales[i] = a->floats[i];
        }
        if (st)
            return st;
        for (int32_t i = 0; i < nb_scales; i++) {
            if (upsample && !(scales[i] >= 1.0f))
                return onnx_error(PRT_ERR_UNSUPPORTED,
                                  "%s: Upsample's scales[%d] is %g; it takes scales "
                                  ">= 1 (Resize downsamples)",
                                  label, (int)i, (double)scales[i]);
            up |= scales[i] > 1.0f;
            down |= scales[i] < 1.0f;
        }
        if (up && down && strcmp(mode, "linear") != 0)
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: nearest Resize %lld both up- and downsamples, which "
                              "rounds differently per axis before opset 11; not "
                              "supported",
                              label, (long long)imp->opset);
        f[nb++] = (prt_field){"coordinate_transformation_mode", "asymmetric",
                              PRT_FIELD_CHAR, 11};
        f[nb++] = (prt_field){"nearest_mode", down ? "ceil" : "floor", PRT_FIELD_CHAR,
                              down ? 5 : 6};
        if (nb_scales >= 0)
            f[nb++] = (prt_field){"scales", scales, PRT_FIELD_FLOAT32, nb_scales};
        if (runtime) {
            f[nb++] = (prt_field){"scales_input", &one, PRT_FIELD_INT32, 1};
            return onnx_import_fields_extra(imp, node, label, creator, f, nb, 1, 0x2, 0x2,
                                            0);
        }
        return onnx_import_fields_extra(imp, node, label, creator, f, nb, 1, 0, 0, 0x2);
    }
    st =
        import_resize_floats(imp, node, label, 2, "scales", scales, &nb_scales, &runtime);
    /* roi matters only to tf_crop_and_resize. */
    if (!st && strcmp(ctm, "tf_crop_and_resize") == 0)
        st = import_resize_floats(imp, node, label, 1, "roi", roi, &nb_roi, NULL);
    if (st)
        return st;
    if (nb_scales >= 0)
        f[nb++] = (prt_field){"scales", scales, PRT_FIELD_FLOAT32, nb_scales};
    if (nb_roi >= 0)
        f[nb++] = (prt_field){"roi", roi, PRT_FIELD_FLOAT32, nb_roi};
    if (runtime) {
        if (onnx_node_input(node, 3)[0] != '\0')
            return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: both scales and sizes are given; give one", label);
        f[nb++] = (prt_field){"scales_input", &one, PRT_FIELD_INT32, 1};
        return onnx_import_fields_extra(imp, node, label, creator, f, nb, 1, 0x4, 0x4,
                                        0x2);
    }
    {
        int has_sizes = onnx_node_input(node, 3)[0] != '\0';
        int keep_data = has_sizes && keep[0] && strcmp(keep, "stretch") != 0;
        return onnx_import_fields_extra(imp, node, label, creator, f, nb, 1,
                                        has_sizes ? 0x8 : 0, keep_data ? 0x8 : 0, 0x6);
    }
}

/* RoiAlign below opset 16 had no coordinate_transformation_mode and computed
 * what output_half_pixel names now (no half-pixel shift, regions at least
 * 1 x 1); the built-in's default is opset 16's half_pixel, so an older node
 * is told. A node that names the attribute keeps it. */
prt_status onnx_import_roi_align(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator)
{
    static const char legacy[] = "output_half_pixel";
    prt_field f = {"coordinate_transformation_mode", legacy, PRT_FIELD_CHAR,
                   (int64_t)(sizeof legacy - 1)};
    if (imp->opset >= 16 || onnx_node_attr(node, "coordinate_transformation_mode"))
        return onnx_import_fields_extra(imp, node, label, creator, NULL, 0, 1, 0, 0, 0);
    return onnx_import_fields_extra(imp, node, label, creator, &f, 1, 1, 0, 0, 0);
}

/* LSTM, GRU and RNN (opset 7 on; 14 added layout): the optional inputs
 * the node omits are left out of the layer and the field "inputs" says
 * which it gives (ONNX models omit B or sequence_lens while giving
 * initial_h, a gap plugin layers cannot hold), and the layer makes the
 * outputs up to the last the node names. */
prt_status onnx_import_rnn(onnx_import *imp, const Onnx__NodeProto *node,
                           const char *label, const prt_plugin_creator *creator)
{
    const char *ins[8];
    size_t nb_ins = 0;
    int32_t mask = 0, nb_out = (int32_t)node->n_output;
    Onnx__NodeProto n2 = *node;
    prt_field f[2] = {{"inputs", &mask, PRT_FIELD_INT32, 1},
                      {"nb_outputs", &nb_out, PRT_FIELD_INT32, 1}};
    if (node->n_input > 8 || node->n_input < 3)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: the node has %zu inputs; %s takes 3 to 8", label,
                          node->n_input, onnx_str(node->op_type));
    for (size_t k = 0; k < node->n_input; k++) {
        const char *name = onnx_str(node->input[k]);
        if (k >= 3 && !name[0])
            continue;
        if (k >= 3)
            mask |= 1 << (k - 3);
        ins[nb_ins++] = name;
    }
    while (nb_out > 1 && !onnx_str(node->output[nb_out - 1])[0])
        nb_out--;
    if (nb_out < 1)
        nb_out = 1;
    n2.n_output = (size_t)nb_out < node->n_output ? (size_t)nb_out : node->n_output;
    return onnx_import_extra(imp, &n2, label, creator, f, 2, ins, nb_ins, 0, 0);
}

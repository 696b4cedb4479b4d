/* A node as one plugin layer: its attributes made fields through the
 * creator's schema (with any extra fields an op importer adds), its inputs
 * split into data and shape inputs, its outputs named as the node names
 * them. Every op of the table without a custom function takes the generic
 * path (onnx_import_plugin); the table's custom import functions end here
 * once they have rearranged the node, and so do the fusions. Also which
 * built-ins take shape inputs. */
#include <string.h>

#include "onnx_ops_shared.h"

/* Built-ins with shape inputs (onnx_choice.shape_inputs, shape_data): bit
 * k for ONNX input k. Range's and Slice's are data inputs too (the run
 * reads them), as are the signal ops' sizes (their ranks are checked); the others' values
 * matter only to the output dims (CumSum's axis, TopK's K; the reductions' axes are
 * onnx_import_reduce's). */
typedef struct onnx_shape_op {
    const char *op_type;
    uint32_t shape_inputs;
    uint32_t shape_data;
} onnx_shape_op;

static const onnx_shape_op shape_op_table[] = {
    {"BlackmanWindow", 0x1, 0x1},
    {"ConstantOfShape", 0x1, 0},
    {"CumSum", 0x2, 0},
    {"DFT", 0x2, 0x2},
    {"HammingWindow", 0x1, 0x1},
    {"HannWindow", 0x1, 0x1},
    {"MaxUnpool", 0x4, 0},
    {"MelWeightMatrix", 0x3, 0x3},
    {"Expand", 0x2, 0},
    {"OneHot", 0x2, 0},
    {"Pad", 0x2, 0x2},
    {"Range", 0x7, 0x7},
    {"Reshape", 0x2, 0},
    {"Slice", 0x1e, 0x1e},
    {"Split", 0x2, 0x2},
    {"STFT", 0xa, 0xa},
    {"Squeeze", 0x2, 0},
    {"Tile", 0x2, 0},
    {"TopK", 0x2, 0},
    {"Unsqueeze", 0x2, 0},
};

void onnx_shape_bits(const char *op_type, uint32_t *shape_inputs, uint32_t *shape_data)
{
    *shape_inputs = *shape_data = 0;
    for (size_t k = 0; k < sizeof shape_op_table / sizeof shape_op_table[0]; k++)
        if (strcmp(shape_op_table[k].op_type, op_type) == 0) {
            *shape_inputs = shape_op_table[k].shape_inputs;
            *shape_data = shape_op_table[k].shape_data;
        }
}

prt_status onnx_node_inputs(const Onnx__NodeProto *node, const char *label,
                            const char **ins, size_t cap, size_t *n)
{
    if (node->n_input > cap)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: %s takes at most %zu inputs, not %zu", label,
                          onnx_str(node->op_type), cap, node->n_input);
    for (size_t k = 0; k < node->n_input; k++)
        ins[k] = onnx_str(node->input[k]);
    *n = node->n_input;
    return PRT_OK;
}

/* ---- one layer ---------------------------------------------------------------- */

/* Names tensor `t` with an ONNX name. */
static prt_status name_tensor(onnx_import *imp, int32_t t, const char *name,
                              const char *label)
{
    prt_status st = prt_network_set_tensor_name(imp->net, t, name);
    if (st == PRT_ERR_ALREADY_EXISTS) {
        st = onnx_claim_name(imp, name);
        if (!st)
            st = prt_network_set_tensor_name(imp->net, t, name);
    }
    if (st)
        return onnx_error_wrap(st, "%s: cannot name output '%s'", label, name);
    return PRT_OK;
}

/* Makes the plugin from `fc` and adds its layer. ONNX input k is a data
 * input unless bit k of shape_inputs is set without bit k of shape_data,
 * and a shape input when bit k of shape_inputs is set; with bit k of `skip`
 * it is neither (its value went into the fields), and it may be omitted. */
static prt_status import_with_inputs(onnx_import *imp, const Onnx__NodeProto *node,
                                     const char *label, const prt_plugin_creator *c,
                                     const prt_field_collection *fc,
                                     uint32_t shape_inputs, uint32_t shape_data,
                                     uint32_t skip)
{
    prt_plugin *plugin = NULL;
    int32_t *inputs = NULL, *shapes;
    int32_t nb_in = (int32_t)node->n_input, nb_data = 0, nb_shape = 0, layer, nb_out;
    const char *layer_name =
        node->name && node->name[0] ? node->name : onnx_str(node->op_type);
    prt_status st;

    if (!c->create)
        return onnx_error(PRT_ERR_PLUGIN, "%s: creator '%s' has no create function",
                          label, onnx_str(c->name));
    /* Omitted optional inputs are empty names; trailing ones are dropped.
     * A plugin takes inputs by position, so a gap cannot be expressed. */
    while (nb_in > 0 && (!onnx_str(node->input[nb_in - 1])[0] ||
                         (nb_in <= 32 && (skip >> (nb_in - 1)) & 1u)))
        nb_in--;
    inputs = prt_malloc(sizeof *inputs * (size_t)(2 * nb_in + 1));
    if (!inputs)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", label);
    shapes = inputs + nb_in;
    for (int32_t k = 0; k < nb_in; k++) {
        const char *name = onnx_str(node->input[k]);
        uint32_t bit = k < 32 ? 1u << k : 0;
        int32_t t;
        if (skip & bit)
            continue;
        if (!name[0]) {
            prt_free(inputs);
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "%s: optional input %d is omitted but a later input "
                              "is given; plugin layers take inputs by position",
                              label, (int)k);
        }
        st = onnx_value_tensor(imp, name, &t);
        if (st) {
            prt_free(inputs);
            return onnx_error_wrap(st, "%s: input %d '%s'", label, (int)k, name);
        }
        if (!(shape_inputs & bit) || (shape_data & bit))
            inputs[nb_data++] = t;
        if (shape_inputs & bit)
            shapes[nb_shape++] = t;
    }

    st = c->create(c, layer_name, fc, PRT_PHASE_BUILD, &plugin);
    if (st || !plugin) {
        prt_free(inputs);
        return onnx_error_wrap(st ? st : PRT_ERR_PLUGIN,
                               "%s: plugin '%s%s%s' version '%s' refused the node's "
                               "fields",
                               label, c->plugin_namespace,
                               c->plugin_namespace[0] ? "::" : "", c->name, c->version);
    }
    st = prt_network_add_plugin(imp->net, inputs, nb_data, shapes, nb_shape, plugin,
                                &layer);
    prt_free(inputs);
    if (st) {
        if (plugin->vt && plugin->vt->runtime && plugin->vt->runtime->destroy)
            plugin->vt->runtime->destroy(plugin);
        return onnx_error_wrap(st, "%s", label);
    }
    if (node->name && node->name[0]) {
        st = prt_network_set_layer_name(imp->net, layer, node->name);
        if (st)
            return onnx_error_wrap(st, "%s", label);
    }
    nb_out = prt_network_layer_output_count(imp->net, layer);
    if ((int32_t)node->n_output > nb_out)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: the node has %zu outputs; plugin %s%s%s makes %d", label,
                          node->n_output, c->plugin_namespace,
                          c->plugin_namespace[0] ? "::" : "", c->name, (int)nb_out);
    /* Legal ONNX (trailing outputs may be left off), so not an error; but a
     * node written for another plugin, or against an older version of this
     * one, reads the wrong outputs without a word. */
    if ((int32_t)node->n_output < nb_out)
        onnx_warn("%s: the node declares %zu output%s; plugin %s%s%s makes %d (the "
                  "rest go unused)",
                  label, node->n_output, node->n_output == 1 ? "" : "s",
                  c->plugin_namespace, c->plugin_namespace[0] ? "::" : "", c->name,
                  (int)nb_out);
    for (int32_t k = 0; k < (int32_t)node->n_output; k++) {
        const char *name = onnx_str(node->output[k]);
        int32_t t;
        if (!name[0])
            continue;
        st = prt_network_get_layer_output(imp->net, layer, k, &t);
        if (!st)
            st = name_tensor(imp, t, name, label);
        if (!st)
            st = onnx_value_add(imp, name, ONNX_VALUE_NODE, t, NULL, label);
        if (st)
            return st;
    }
    return PRT_OK;
}

prt_status onnx_import_with_fields(onnx_import *imp, const Onnx__NodeProto *node,
                                   const char *label, const prt_plugin_creator *c,
                                   const prt_field_collection *fc, uint32_t shape_inputs,
                                   uint32_t shape_data)
{
    return import_with_inputs(imp, node, label, c, fc, shape_inputs, shape_data, 0);
}

prt_status onnx_import_plugin(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *c,
                              uint32_t shape_inputs, uint32_t shape_data)
{
    onnx_fields fields;
    prt_field_collection fc;
    prt_status st = onnx_fields_from_node(node, label, c, imp->base_dir, &fields);
    if (st)
        return st;
    fc.nb_fields = fields.nb_fields;
    fc.fields = fields.fields;
    st = onnx_import_with_fields(imp, node, label, c, &fc, shape_inputs, shape_data);
    onnx_fields_free(&fields);
    return st;
}

prt_status onnx_import_fields_extra(onnx_import *imp, const Onnx__NodeProto *node,
                                    const char *label, const prt_plugin_creator *c,
                                    const prt_field *extra, int32_t nb_extra, int replace,
                                    uint32_t shape_inputs, uint32_t shape_data,
                                    uint32_t skip)
{
    onnx_fields fields;
    prt_field_collection fc;
    prt_field *all;
    int32_t n = 0;
    prt_status st = onnx_fields_from_node(node, label, c, imp->base_dir, &fields);
    if (st)
        return st;
    all = onnx_calloc((size_t)(fields.nb_fields + nb_extra) + 1, sizeof *all);
    if (!all) {
        onnx_fields_free(&fields);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", label);
    }
    for (int32_t i = 0; i < fields.nb_fields; i++) {
        int replaced = 0;
        for (int32_t k = 0; replace && k < nb_extra; k++)
            replaced |= strcmp(fields.fields[i].name, extra[k].name) == 0;
        if (!replaced)
            all[n++] = fields.fields[i];
    }
    for (int32_t k = 0; k < nb_extra; k++)
        all[n++] = extra[k];
    fc.nb_fields = n;
    fc.fields = all;
    st = import_with_inputs(imp, node, label, c, &fc, shape_inputs, shape_data, skip);
    prt_free(all);
    onnx_fields_free(&fields);
    return st;
}

prt_status onnx_import_extra(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *c,
                             const prt_field *extra, int32_t nb_extra, const char **ins,
                             size_t nb_ins, uint32_t shape_inputs, uint32_t shape_data)
{
    Onnx__NodeProto n2 = *node;
    n2.input = (char **)ins;
    n2.n_input = nb_ins;
    return onnx_import_fields_extra(imp, &n2, label, c, extra, nb_extra, 0, shape_inputs,
                                    shape_data, 0);
}

prt_status onnx_import_fused(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *c,
                             const prt_field *extra, int32_t nb_extra, const char **ins,
                             size_t nb_ins, const char **outs, size_t nb_outs)
{
    Onnx__NodeProto n2 = *node;
    n2.output = (char **)outs;
    n2.n_output = nb_outs;
    return onnx_import_extra(imp, &n2, label, c, extra, nb_extra, ins, nb_ins, 0, 0);
}

/* The importer table, and how a node finds what computes it.
 *
 * A node becomes a plugin layer. Which plugin is decided in this order:
 *  1. prt_onnx_parser_map_op for its op_type: that plugin, whatever else holds.
 *  2. A node without plugin_namespace, in the default domain, whose op has an
 *     entry in the table below: the entry's built-in creator (namespace
 *     PRT_BUILTIN_NAMESPACE, served by libplugrt) or its custom function.
 *  3. Otherwise, and when the built-in is missing from this libplugrt: the
 *     registry's creator for (op_type, plugin_version or "1",
 *     plugin_namespace or ""), TensorRT's key for plugin nodes.
 *  4. Nothing: PRT_ERR_UNSUPPORTED naming the op, the node and the libraries
 *     the registry searched.
 * Attributes become fields through the creator's schema (onnx_fields.c), so
 * a built-in whose fields carry the ONNX attribute names needs no code here;
 * a custom function handles what does not fit that mould.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_ops_shared.h"

typedef prt_status (*onnx_custom_fn)(onnx_import *imp, const Onnx__NodeProto *node,
                                     const char *label,
                                     const prt_plugin_creator *creator);

typedef struct onnx_op {
    const char *op_type;
    /* Creator name in PRT_BUILTIN_NAMESPACE, version "1"; NULL when the
     * custom function does all the work. */
    const char *builtin;
    /* First default-domain opset with the semantics the built-in has. */
    int32_t min_opset;
    /* NULL: attributes -> fields through the schema, inputs by position. */
    onnx_custom_fn custom;
} onnx_op;

static prt_status import_constant(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator);
static prt_status import_cast(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *creator);
static prt_status import_constant_of_shape(onnx_import *imp, const Onnx__NodeProto *node,
                                           const char *label,
                                           const prt_plugin_creator *creator);
static prt_status import_eye_like(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator);
static prt_status import_hardmax(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator);
static prt_status import_one_hot(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator);
static prt_status import_pad(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *creator);
static prt_status import_split(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator);
static prt_status import_range(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator);
static prt_status import_clip(onnx_import *imp, const Onnx__NodeProto *node,
                              const char *label, const prt_plugin_creator *creator);
static prt_status import_dropout(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator);
static prt_status import_reduce(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator);
/* Normalization, linear and spatial ops: opset rules and constant inputs. */
static prt_status import_nb_outputs(onnx_import *imp, const Onnx__NodeProto *node,
                                    const char *label, const prt_plugin_creator *creator);
static prt_status import_softmax(onnx_import *imp, const Onnx__NodeProto *node,
                                 const char *label, const prt_plugin_creator *creator);
static prt_status import_resize(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator);
static prt_status import_identity(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator);

/* Sorted by op_type. Opset notes: Add/Sub/Mul/Div before 7 broadcast only
 * with an explicit attribute; Relu and HardSigmoid before 6 had
 * consumed_inputs. Einsum came in 12, HardSwish in 14. Gemm before 7 had a
 * broadcast attribute; its C became optional in 11 (the built-in takes it
 * optional for 7 to 10 too). Flatten's negative axis came in 11 (the
 * built-in accepts it at every opset). Erf came in 9, LayerNormalization in
 * 17; Softmax took one axis (not a flattened 2-D view) from 13; Tanh before
 * 6 had consumed_inputs. Equal and And broadcast from 7; GreaterOrEqual came
 * in 12, IsNaN and Where in 9, GatherElements in 11.
 * Shape ops: Reshape's shape became an input in 5 (allowzero came in 14);
 * Unsqueeze's and Squeeze's axes an input in 13 (an attribute before: the
 * built-in takes both); Slice's starts..steps inputs in 10; Concat's axis
 * was optional before 4; Cast's `to` a string before 6. Expand came in 8,
 * ConstantOfShape in 9, Range in 11; Shape's start/end in 15.
 * Data movement: Slice's starts/ends/axes were attributes before 10 (the
 * built-in takes both); Split's split an attribute before 13, num_outputs
 * came in 18; Pad's pads and value attributes before 11, its axes input
 * in 18, mode wrap in 19; Tile's repeats an input from 6; DepthToSpace's
 * mode came in 11; Scatter (9, 10) is ScatterElements without reduction
 * (reduction came in 16, max/min in 18, for ScatterND too); GatherND came
 * in 11 (batch_dims in 12), Trilu in 14; Compress, EyeLike, NonZero and
 * OneHot in 9, Unique in 11. Hardmax's opsets 1 to 12 view the input as
 * 2-D (the built-in takes both rules). Range over floats is folded into a
 * constant (import_range).
 * Elementwise, unary, reductions (issue 8): the unary ops before 6 had
 * consumed_inputs (Not, Softplus and Softsign never did); Max, Min, Sum and
 * Mean broadcast from 8 (6 and 7 are the equal-shape case of it); Pow,
 * PRelu, Less, Greater, Or and Xor broadcast from 7. Sin..Atan came in 7,
 * Sign, Sinh..Atanh in 9, IsInf and Mod and ThresholdedRelu's current form
 * in 10, BitShift, Round and CumSum in 11, Celu and LessOrEqual in 12,
 * CastLike in 15, Mish in 18, Gelu in 20. Clip's bounds became inputs in 11
 * (attributes before: the built-in takes both), TopK's K in 10, the
 * reductions' axes in 13 (ReduceSum) and 18 (the others); Dropout's ratio
 * and training_mode became inputs in 12, its mask bool in 10.
 * Normalization and spatial ops: the pools' later attributes (AveragePool's
 * count_include_pad from 7, ceil_mode from 10, dilations from 19; MaxPool's
 * Indices and storage_order from 8, ceil_mode and dilations from 10) are
 * taken at every opset; LpPool's p became an integer in 2;
 * BatchNormalization dropped spatial in 9 and added training_mode in 14
 * (inference only); InstanceNormalization had consumed_inputs before 6;
 * GroupNormalization came in 18, Resize in 10 (roi, sizes and the
 * coordinate modes in 11); Upsample (7-9) is Resize with asymmetric
 * coordinates. Softmax and LogSoftmax coerce X to 2-D before 13. */
static const onnx_op op_table[] = {
    {"Abs", "Abs", 6, NULL},
    {"Acos", "Acos", 7, NULL},
    {"Acosh", "Acosh", 9, NULL},
    {"Add", "Add", 7, NULL},
    {"And", "And", 7, NULL},
    {"ArgMax", "ArgMax", 1, NULL},
    {"ArgMin", "ArgMin", 1, NULL},
    {"Asin", "Asin", 7, NULL},
    {"Asinh", "Asinh", 9, NULL},
    {"Atan", "Atan", 7, NULL},
    {"Atanh", "Atanh", 9, NULL},
    {"AveragePool", "AveragePool", 1, NULL},
    {"BatchNormalization", "BatchNormalization", 7, NULL},
    {"BitShift", "BitShift", 11, NULL},
    {"Cast", "Cast", 6, import_cast},
    {"CastLike", "CastLike", 15, NULL},
    {"Ceil", "Ceil", 6, NULL},
    {"Celu", "Celu", 12, NULL},
    {"Clip", "Clip", 6, import_clip},
    {"Compress", "Compress", 9, NULL},
    {"Concat", "Concat", 4, NULL},
    {"Constant", NULL, 1, import_constant},
    {"ConstantOfShape", "ConstantOfShape", 9, import_constant_of_shape},
    {"Conv", "Conv", 1, NULL},
    {"ConvTranspose", "ConvTranspose", 1, NULL},
    {"Cos", "Cos", 7, NULL},
    {"Cosh", "Cosh", 9, NULL},
    {"CumSum", "CumSum", 11, NULL},
    {"DepthToSpace", "DepthToSpace", 1, NULL},
    {"Div", "Div", 7, NULL},
    {"Dropout", "Dropout", 7, import_dropout},
    {"Einsum", "Einsum", 12, NULL},
    {"Elu", "Elu", 6, NULL},
    {"Equal", "Equal", 7, NULL},
    {"Erf", "Erf", 9, NULL},
    {"Exp", "Exp", 6, NULL},
    {"Expand", "Expand", 8, NULL},
    {"EyeLike", "EyeLike", 9, import_eye_like},
    {"Flatten", "Flatten", 1, NULL},
    {"Floor", "Floor", 6, NULL},
    {"Gather", "Gather", 1, NULL},
    {"GatherElements", "GatherElements", 11, NULL},
    {"GatherND", "GatherND", 11, NULL},
    {"Gelu", "Gelu", 20, NULL},
    {"Gemm", "Gemm", 7, NULL},
    {"GlobalAveragePool", "GlobalAveragePool", 1, NULL},
    {"GlobalLpPool", "GlobalLpPool", 2, NULL},
    {"GlobalMaxPool", "GlobalMaxPool", 1, NULL},
    {"Greater", "Greater", 7, NULL},
    {"GreaterOrEqual", "GreaterOrEqual", 12, NULL},
    {"GroupNormalization", "GroupNormalization", 18, NULL},
    {"HardSigmoid", "HardSigmoid", 6, NULL},
    {"HardSwish", "HardSwish", 14, NULL},
    {"Hardmax", "Hardmax", 1, import_hardmax},
    {"Identity", "Identity", 1, import_identity},
    {"InstanceNormalization", "InstanceNormalization", 6, NULL},
    {"IsInf", "IsInf", 10, NULL},
    {"IsNaN", "IsNaN", 9, NULL},
    {"LayerNormalization", "LayerNormalization", 17, import_nb_outputs},
    {"LeakyRelu", "LeakyRelu", 6, NULL},
    {"Less", "Less", 7, NULL},
    {"LessOrEqual", "LessOrEqual", 12, NULL},
    {"Log", "Log", 6, NULL},
    {"LogSoftmax", "LogSoftmax", 1, import_softmax},
    {"LpNormalization", "LpNormalization", 1, NULL},
    {"LpPool", "LpPool", 2, NULL},
    {"MatMul", "MatMul", 1, NULL},
    {"Max", "Max", 6, NULL},
    {"MaxPool", "MaxPool", 1, import_nb_outputs},
    {"Mean", "Mean", 6, NULL},
    {"Min", "Min", 6, NULL},
    {"Mish", "Mish", 18, NULL},
    {"Mod", "Mod", 10, NULL},
    {"Mul", "Mul", 7, NULL},
    {"Neg", "Neg", 6, NULL},
    {"NonZero", "NonZero", 9, NULL},
    {"Not", "Not", 1, NULL},
    {"OneHot", "OneHot", 9, import_one_hot},
    {"Or", "Or", 7, NULL},
    {"PRelu", "PRelu", 7, NULL},
    {"Pad", "Pad", 2, import_pad},
    {"Pow", "Pow", 7, NULL},
    {"Range", "Range", 11, import_range},
    {"Reciprocal", "Reciprocal", 6, NULL},
    {"ReduceL1", "ReduceL1", 1, import_reduce},
    {"ReduceL2", "ReduceL2", 1, import_reduce},
    {"ReduceLogSum", "ReduceLogSum", 1, import_reduce},
    {"ReduceLogSumExp", "ReduceLogSumExp", 1, import_reduce},
    {"ReduceMax", "ReduceMax", 1, import_reduce},
    {"ReduceMean", "ReduceMean", 1, import_reduce},
    {"ReduceMin", "ReduceMin", 1, import_reduce},
    {"ReduceProd", "ReduceProd", 1, import_reduce},
    {"ReduceSum", "ReduceSum", 1, import_reduce},
    {"ReduceSumSquare", "ReduceSumSquare", 1, import_reduce},
    {"Relu", "Relu", 6, NULL},
    {"Reshape", "Reshape", 5, NULL},
    {"Resize", "Resize", 10, import_resize},
    {"Round", "Round", 11, NULL},
    {"Scatter", "ScatterElements", 9, NULL},
    {"ScatterElements", "ScatterElements", 11, NULL},
    {"ScatterND", "ScatterND", 11, NULL},
    {"Selu", "Selu", 6, NULL},
    {"Shape", "Shape", 1, NULL},
    {"Sigmoid", "Sigmoid", 6, NULL},
    {"Sign", "Sign", 9, NULL},
    {"Sin", "Sin", 7, NULL},
    {"Sinh", "Sinh", 9, NULL},
    {"Size", "Size", 1, NULL},
    {"Slice", "Slice", 1, NULL},
    {"Softmax", "Softmax", 1, import_softmax},
    {"Softplus", "Softplus", 1, NULL},
    {"Softsign", "Softsign", 1, NULL},
    {"SpaceToDepth", "SpaceToDepth", 1, NULL},
    {"Split", "Split", 2, import_split},
    {"Sqrt", "Sqrt", 6, NULL},
    {"Squeeze", "Squeeze", 1, NULL},
    {"Sub", "Sub", 7, NULL},
    {"Sum", "Sum", 6, NULL},
    {"Tan", "Tan", 7, NULL},
    {"Tanh", "Tanh", 6, NULL},
    {"ThresholdedRelu", "ThresholdedRelu", 10, NULL},
    {"Tile", "Tile", 6, NULL},
    {"TopK", "TopK", 1, NULL},
    {"Transpose", "Transpose", 1, NULL},
    {"Trilu", "Trilu", 14, NULL},
    {"Unique", "Unique", 11, NULL},
    {"Unsqueeze", "Unsqueeze", 1, NULL},
    {"Upsample", "Resize", 7, import_resize},
    {"Where", "Where", 9, NULL},
    {"Xor", "Xor", 7, NULL},
};

static const size_t op_table_size = sizeof op_table / sizeof op_table[0];

/* "; did you mean ..." naming the ONNX op or plugin key nearest to an op
 * nothing serves (a case typo, a letter off), or "" when none is near. */
static void near_miss(const prt_registry *reg, const char *op_type, char *out, size_t cap)
{
    const char *best = NULL, *best_ns = NULL, *best_ver = NULL;
    int best_d = 3 + (int)(strlen(op_type) > 12);
    out[0] = '\0';
    for (size_t i = 0; i < op_table_size; i++) {
        int d = onnx_name_distance(op_type, op_table[i].op_type);
        if (d < best_d) {
            best_d = d;
            best = op_table[i].op_type;
            best_ns = NULL;
        }
    }
    for (int32_t i = 0; reg && i < prt_registry_creator_count(reg); i++) {
        const prt_plugin_creator *c = prt_registry_get_creator(reg, i);
        int d = c && c->name ? onnx_name_distance(op_type, c->name) : 9;
        if (d < best_d) {
            best_d = d;
            best = c->name;
            best_ns = c->plugin_namespace ? c->plugin_namespace : "";
            best_ver = c->version ? c->version : "1";
        }
    }
    if (best && best_ns)
        snprintf(out, cap, "; did you mean the plugin %s::%s@%s (plugin_namespace '%s')?",
                 best_ns, best, best_ver, best_ns);
    else if (best)
        snprintf(out, cap, "; did you mean the ONNX op '%s'?", best);
}

static const onnx_op *op_find(const char *op_type)
{
    size_t lo = 0, hi = op_table_size;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(op_type, op_table[mid].op_type);
        if (c == 0)
            return &op_table[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static prt_status builtin_find(const char *name, const prt_plugin_creator **out)
{
    return prt_builtin_find_creator(name, "1", out);
}

static const onnx_mapping *mapping_find(const prt_onnx_parser *p, const char *op_type)
{
    for (int32_t i = 0; i < p->nb_maps; i++)
        if (strcmp(p->maps[i].op_type, op_type) == 0)
            return &p->maps[i];
    return NULL;
}

/* ---- Cast, ConstantOfShape: ONNX element types -> prt_dtype --------------------- */

/* Cast's `to` is an ONNX TensorProto.DataType; the built-in takes a
 * prt_dtype. saturate (opset 19) passes as it is. */
static prt_status import_cast(onnx_import *imp, const Onnx__NodeProto *node,
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

/* ConstantOfShape's `value` is a one-element TENSOR: its dtype becomes the
 * field dtype and its element the field value (int64 for integer types and
 * bool, float64 for float32, the bits for half floats: all exact). Absent,
 * a float32 0. */
static prt_status import_constant_of_shape(onnx_import *imp, const Onnx__NodeProto *node,
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
    if (dtype == PRT_FLOAT32) {
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

/* ---- data movement: attributes and constant inputs made fields -------------- */

/* Split: the number of outputs is the node's (field outputs), and a
 * constant `split` input (opset 13 on) becomes field split, so that more
 * than 8 parts need no shape input. */
static prt_status import_split(onnx_import *imp, const Onnx__NodeProto *node,
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
static prt_status import_pad(onnx_import *imp, const Onnx__NodeProto *node,
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
 * otherwise it is a shape input, which must then be an integer. */
static prt_status import_one_hot(onnx_import *imp, const Onnx__NodeProto *node,
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
    if (n < 0 || nb_ins < 3)
        return onnx_import_extra(imp, node, label, creator, NULL, 0, ins, nb_ins, si, sd);
    ins[1] = ins[2];
    return onnx_import_extra(imp, node, label, creator, &extra, 1, ins, 2, 0, 0);
}

/* EyeLike's dtype is an ONNX element type; the built-in takes a prt_dtype. */
static prt_status import_eye_like(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator)
{
    const Onnx__AttributeProto *a = onnx_node_attr(node, "dtype");
    Onnx__NodeProto n2 = *node;
    Onnx__AttributeProto *attrs[8];
    int32_t dtype;
    prt_field extra = {"dtype", &dtype, PRT_FIELD_INT32, 1};
    const char *ins[1];
    size_t nb_ins = 0, k = 0;
    if (onnx_node_inputs(node, label, ins, 1, &nb_ins))
        return PRT_ERR_INVALID_ARGUMENT;
    if (node->n_attribute > 8)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: EyeLike has %zu attributes",
                          label, node->n_attribute);
    if (a) {
        char what[600];
        if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
            return onnx_error(PRT_ERR_MALFORMED, "%s: attribute 'dtype' must be an INT",
                              label);
        snprintf(what, sizeof what, "%s: attribute 'dtype'", label);
        if (onnx_dtype_from_onnx((int32_t)a->i, what, &dtype))
            return PRT_ERR_UNSUPPORTED;
        /* The other attributes go through the schema. */
        for (size_t i = 0; i < node->n_attribute; i++)
            if (node->attribute[i] != a)
                attrs[k++] = node->attribute[i];
        n2.attribute = attrs;
        n2.n_attribute = k;
    }
    return onnx_import_extra(imp, &n2, label, creator, &extra, a ? 1 : 0, ins, nb_ins, 0,
                             0);
}

/* Range over floats: its length is no expression of integer values, so
 * start, limit and delta must be constants and the importer makes the
 * output a constant, accumulating in the dtype (ONNX's definition:
 * y[i] = y[i-1] + delta). Integer bounds go to the built-in (shape
 * inputs). */
static prt_status import_range(onnx_import *imp, const Onnx__NodeProto *node,
                               const char *label, const prt_plugin_creator *creator)
{
    onnx_tensor in[3], t;
    double v[3];
    int32_t dtype = -1, nb_const = 0, id;
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
    if (!out[0]) {
        onnx_tensor_free(&t);
        return PRT_OK;
    }
    st = onnx_add_constant(imp, out, &t, &id);
    onnx_tensor_free(&t);
    if (st)
        return onnx_error_wrap(st, "%s", label);
    return onnx_value_add(imp, out, ONNX_VALUE_CONSTANT, id, NULL, label);
}

/* Hardmax before opset 13 views the input as 2-D. */
static prt_status import_hardmax(onnx_import *imp, const Onnx__NodeProto *node,
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

/* ---- Clip, Dropout, the reductions: inputs rearranged (onnx_import_extra) ---------- */

/* Clip(X, "", max): the built-in takes max second, with field max_only. */
static prt_status import_clip(onnx_import *imp, const Onnx__NodeProto *node,
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
static prt_status import_dropout(onnx_import *imp, const Onnx__NodeProto *node,
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
static prt_status import_reduce(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator)
{
    if (onnx_node_input(node, 1)[0] && node->n_input == 2 &&
        value_is_empty_1d(imp, node->input[1]))
        return onnx_import_extra(imp, node, label, creator, NULL, 0,
                                 (const char **)node->input, 1, 0, 0);
    return onnx_import_plugin(imp, node, label, creator, 0x2, 0);
}

/* ---- normalization, linear and spatial ops ---------------------------------------- */

/* LayerNormalization's Mean and InvStdDev, MaxPool's Indices: the plugin
 * makes as many outputs as the node names (up to the last named one), so
 * that outputs nobody asked for are not computed. */
static prt_status import_nb_outputs(onnx_import *imp, const Onnx__NodeProto *node,
                                    const char *label, const prt_plugin_creator *creator)
{
    int32_t nb = (int32_t)node->n_output;
    prt_field f = {"nb_outputs", &nb, PRT_FIELD_INT32, 1};
    while (nb > 1 && !onnx_str(node->output[nb - 1])[0])
        nb--;
    return onnx_import_fields_extra(imp, node, label, creator, &f, nb > 1 ? 1 : 0, 1, 0,
                                    0, 0);
}

/* Softmax and LogSoftmax before opset 13 work on X coerced to 2-D at
 * `axis`, which defaults to 1 there. */
static prt_status import_softmax(onnx_import *imp, const Onnx__NodeProto *node,
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
 * is not a constant. */
static prt_status import_resize_floats(onnx_import *imp, const Onnx__NodeProto *node,
                                       const char *label, size_t k, const char *what,
                                       float *dst, int32_t *n)
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
    if (!found)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s must be a constant (an initializer or a Constant node): "
                          "plugrt fixes output shapes when it builds the network%s",
                          where,
                          strcmp(what, "scales") == 0
                              ? "; give sizes instead, which may be computed"
                              : "");
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
 * coordinates with nearest rounding down, scales >= 1). roi and scales
 * become fields, so they must be constants (ONNX Runtime's and TensorRT's
 * rule too: the output shape is fixed when the network is built); sizes is a
 * shape input (a constant, a network input with known values, or computed
 * from shapes), and a data input as well when keep_aspect_ratio_policy needs
 * its values at run time. Resize 10 and Upsample round nearest as ONNX
 * Runtime does there: down when upsampling, up when downsampling. */
static prt_status import_resize(onnx_import *imp, const Onnx__NodeProto *node,
                                const char *label, const prt_plugin_creator *creator)
{
    int upsample = strcmp(onnx_str(node->op_type), "Upsample") == 0;
    int legacy = upsample || imp->opset < 11; /* X, scales */
    float scales[RESIZE_MAX_VALUES], roi[RESIZE_MAX_VALUES];
    int32_t nb_scales = -1, nb_roi = -1, nb = 0;
    prt_field f[4];
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
            st = import_resize_floats(imp, node, label, 1, "scales", scales, &nb_scales);
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
        return onnx_import_fields_extra(imp, node, label, creator, f, nb, 1, 0, 0, 0x2);
    }
    st = import_resize_floats(imp, node, label, 2, "scales", scales, &nb_scales);
    /* roi matters only to tf_crop_and_resize. */
    if (!st && strcmp(ctm, "tf_crop_and_resize") == 0)
        st = import_resize_floats(imp, node, label, 1, "roi", roi, &nb_roi);
    if (st)
        return st;
    if (nb_scales >= 0)
        f[nb++] = (prt_field){"scales", scales, PRT_FIELD_FLOAT32, nb_scales};
    if (nb_roi >= 0)
        f[nb++] = (prt_field){"roi", roi, PRT_FIELD_FLOAT32, nb_roi};
    {
        int has_sizes = onnx_node_input(node, 3)[0] != '\0';
        int keep_data = has_sizes && keep[0] && strcmp(keep, "stretch") != 0;
        return onnx_import_fields_extra(imp, node, label, creator, f, nb, 1,
                                        has_sizes ? 0x8 : 0, keep_data ? 0x8 : 0, 0x6);
    }
}

/* ---- Constant ---------------------------------------------------------------- */

/* Constant folds into a network constant named by its output. */
static prt_status import_constant(onnx_import *imp, const Onnx__NodeProto *node,
                                  const char *label, const prt_plugin_creator *creator)
{
    onnx_tensor t;
    const Onnx__AttributeProto *a;
    const char *out;
    int32_t id;
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
    if (!out[0]) {
        onnx_tensor_free(&t);
        return PRT_OK; /* nobody can refer to it */
    }
    st = onnx_add_constant(imp, out, &t, &id);
    onnx_tensor_free(&t);
    if (st)
        return onnx_error_wrap(st, "%s", label);
    return onnx_value_add(imp, out, ONNX_VALUE_CONSTANT, id, NULL, label);
}

/* Identity of a constant (PyTorch's exporter writes one for every weight
 * it shares, e.g. a bias) is that constant under a second name: no layer,
 * no copy at each run, and the fusions see the value. Anything else, or
 * with fusions turned off (one layer per node), is the built-in layer. */
static prt_status import_identity(onnx_import *imp, const Onnx__NodeProto *node,
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

/* ---- choosing ------------------------------------------------------------------ */

static int is_default_domain(const char *domain)
{
    return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

/* Rule 1: the plugin prt_onnx_parser_map_op named for the node's op. */
static prt_status choose_mapped(const prt_registry *reg, const onnx_mapping *map,
                                const char *label, const char *op_type, onnx_choice *out)
{
    const prt_plugin_creator *c = NULL;
    prt_status st = PRT_ERR_NOT_FOUND;
    if (reg)
        st = prt_registry_find_creator(reg, map->plugin_namespace, map->plugin_name,
                                       map->plugin_version, &c);
    if (st && strcmp(map->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0)
        st = builtin_find(map->plugin_name, &c);
    if (st) {
        if (!reg)
            onnx_error(st, "no registry was given to the parser");
        return onnx_error_wrap(PRT_ERR_UNSUPPORTED,
                               "%s: op '%s' is mapped to plugin '%s%s%s' version "
                               "'%s', which was not found",
                               label, op_type, map->plugin_namespace,
                               map->plugin_namespace[0] ? "::" : "", map->plugin_name,
                               map->plugin_version);
    }
    out->creator = c;
    return PRT_OK;
}

/* The node's own plugin key: its plugin_namespace attribute into ns ("" if
 * absent; *has_ns says whether it is there) and plugin_version into ver
 * ("1" if absent). Either must be a STRING. */
static prt_status plugin_key(const Onnx__NodeProto *node, const char *label, char *ns,
                             size_t ns_cap, char *ver, size_t ver_cap, int *has_ns)
{
    const Onnx__AttributeProto *ns_attr = onnx_node_attr(node, "plugin_namespace");
    const Onnx__AttributeProto *ver_attr = onnx_node_attr(node, "plugin_version");
    *has_ns = ns_attr != NULL;
    ns[0] = '\0';
    snprintf(ver, ver_cap, "1");
    if (ns_attr && onnx_attr_string(ns_attr, ns, ns_cap) != 0)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: attribute 'plugin_namespace' must be a STRING", label);
    if (ver_attr && onnx_attr_string(ver_attr, ver, ver_cap) != 0)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: attribute 'plugin_version' must be a STRING", label);
    return PRT_OK;
}

/* Rule 2: the op table's entry `op`, once the model's opset allows it.
 * *served is 0 when the entry's built-in is missing from this libplugrt:
 * a registered plugin may still serve the op. */
static prt_status choose_table(const onnx_import *imp, const onnx_op *op,
                               const char *label, const char *op_type, onnx_choice *out,
                               int *served)
{
    const prt_plugin_creator *c = NULL;
    *served = 0;
    if (imp->opset == 0)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: an op of the default ONNX domain, but the model "
                          "imports no opset of that domain",
                          label);
    if (imp->opset < op->min_opset)
        return onnx_error(PRT_ERR_VERSION,
                          "%s: plugrt imports %s from opset %d; the model "
                          "imports opset %lld",
                          label, op_type, (int)op->min_opset, (long long)imp->opset);
    if (!op->builtin) {
        out->custom = op->custom;
        *served = 1;
        return PRT_OK;
    }
    if (builtin_find(op->builtin, &c) == PRT_OK) {
        out->creator = c;
        out->custom = op->custom;
        onnx_shape_bits(op_type, &out->shape_inputs, &out->shape_data);
        *served = 1;
    }
    return PRT_OK;
}

/* Rule 4: nothing serves the node. The error names the op, its domain, the
 * nearest name that something serves, and (as the cause) why the registry
 * had no plugin under the node's key ns::op_type@ver. `in_table`: the op
 * has a table entry whose built-in this libplugrt lacks. */
static prt_status unserved(const prt_registry *reg, const Onnx__NodeProto *node,
                           const char *label, const char *op_type, const char *ns,
                           const char *ver, int in_table)
{
    int dflt = is_default_domain(node->domain);
    char hint[320];
    if (!reg)
        onnx_error(PRT_ERR_NOT_FOUND,
                   "no plugin creator '%s%s%s' version '%s': no registry was given "
                   "to the parser",
                   ns, ns[0] ? "::" : "", op_type, ver);
    near_miss(reg, op_type, hint, sizeof hint);
    return onnx_error_wrap(
        PRT_ERR_UNSUPPORTED, "%s: op '%s'%s%s has no importer%s and no plugin creator%s",
        label, op_type, dflt ? "" : " of domain ", dflt ? "" : node->domain,
        in_table ? " available in this libplugrt" : "", hint);
}

prt_status onnx_choose(onnx_import *imp, const Onnx__NodeProto *node, int32_t index,
                       onnx_choice *out)
{
    const prt_registry *reg = imp->parser->reg;
    const char *op_type = onnx_str(node->op_type);
    const onnx_mapping *map;
    const prt_plugin_creator *c = NULL;
    const onnx_op *op = NULL;
    char label[512], ns[256], ver[64];
    int has_ns, served;
    prt_status st;

    onnx_node_label(node, index, label, sizeof label);
    out->creator = NULL;
    out->custom = NULL;
    out->shape_inputs = out->shape_data = 0;
    if (!op_type[0])
        return onnx_error(PRT_ERR_MALFORMED, "%s: the node has no op_type", label);

    /* 1. An explicit mapping beats everything. */
    map = mapping_find(imp->parser, op_type);
    if (map)
        return choose_mapped(reg, map, label, op_type, out);

    st = plugin_key(node, label, ns, sizeof ns, ver, sizeof ver, &has_ns);
    if (st)
        return st;

    /* 2. The importer table, for the default domain's ops (a node that
     * names a plugin_namespace asks for a plugin). */
    if (!has_ns && is_default_domain(node->domain))
        op = op_find(op_type);
    if (op) {
        st = choose_table(imp, op, label, op_type, out, &served);
        if (st || served)
            return st;
    }

    /* 3. A plugin by the node's own key. */
    if (reg && prt_registry_find_creator(reg, ns, op_type, ver, &c) == PRT_OK) {
        out->creator = c;
        return PRT_OK;
    }

    /* 4. Nothing serves it. */
    return unserved(reg, node, label, op_type, ns, ver, op != NULL);
}

prt_status onnx_import_node(onnx_import *imp, const Onnx__NodeProto *node, int32_t index,
                            const onnx_choice *choice)
{
    char label[512];
    onnx_node_label(node, index, label, sizeof label);
    if (choice->custom)
        return choice->custom(imp, node, label, choice->creator);
    return onnx_import_plugin(imp, node, label, choice->creator, choice->shape_inputs,
                              choice->shape_data);
}

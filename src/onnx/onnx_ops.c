/* The importer table, and how a node finds what computes it.
 *
 * A node becomes a plugin layer. Which plugin is decided in this order:
 *  1. prt_onnx_parser_map_op for its op_type: that plugin, whatever else holds.
 *  2. A node without plugin_namespace, in the default domain, whose op has an
 *     entry in the table below: the entry's built-in creator (namespace
 *     PRT_BUILTIN_NAMESPACE, served by libplugrt) or its custom function;
 *     likewise a node of domain com.microsoft whose op is in ms_table.
 *  3. Otherwise, and when the built-in is missing from this libplugrt: the
 *     registry's creator for (op_type, plugin_version or "1",
 *     plugin_namespace or ""), TensorRT's key for plugin nodes.
 *  4. Nothing: PRT_ERR_UNSUPPORTED naming the op, the node and the libraries
 *     the registry searched.
 * Attributes become fields through the creator's schema (onnx_fields.c), so
 * a built-in whose fields carry the ONNX attribute names needs no code here;
 * a custom function handles what does not fit that mould, in the file of
 * its op family (onnx_ops_const.c, _data.c, _math.c, _nn.c). Every node
 * ends as one layer made by onnx_layer.c.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_ops_shared.h"

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
 * constant (onnx_import_range).
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
 * coordinates. Softmax and LogSoftmax coerce X to 2-D before 13.
 * MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv came in 10.
 * Attention came in 23, past the newest opset the importer accepts: the
 * entry takes it at any opset (the fusion of onnx_fuse.c makes the same
 * layer from the nodes PyTorch exports).
 * LRN came in 1, Shrink and MaxUnpool in 9 (11 only relaxed MaxUnpool's
 * docs), ReverseSequence in 10; MaxUnpool's output_shape is a shape input;
 * GridSample came in 16 (2-D; N-D and the names linear and cubic in 20:
 * the built-in takes both); RoiAlign in 10 (coordinate_transformation_mode
 * in 16: onnx_import_roi_align). NonMaxSuppression came in 10 (11 changed
 * only its docs); its constant optional inputs become fields
 * (onnx_import_nms). LSTM, GRU and RNN take their opset 7
 * form (1 had LSTM's output_sequence; 14 added layout, which the built-ins
 * take at every opset); onnx_import_rnn drops the omitted optional inputs.
 * Quantization (issue 30): QuantizeLinear and DequantizeLinear came in 10
 * (per tensor; axis in 13, half-float scales and saturate in 19: the
 * built-ins take them at every opset), DynamicQuantizeLinear in 11.
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss came in 12 (13 and
 * 22 only widened their types; SoftmaxCrossEntropyLoss's log_prob output
 * sets nb_outputs), MeanVarianceNormalization's function form in 9 (the
 * experimental op of 1 had other attributes), Det in 11; their attributes
 * are fields as named, so they need no custom function. */
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
    {"Attention", "Attention", 1, onnx_import_attention},
    {"AveragePool", "AveragePool", 1, NULL},
    {"BatchNormalization", "BatchNormalization", 7, NULL},
    {"BitShift", "BitShift", 11, NULL},
    {"BlackmanWindow", "BlackmanWindow", 17, onnx_import_signal_dtype},
    {"Cast", "Cast", 6, onnx_import_cast},
    {"CastLike", "CastLike", 15, NULL},
    {"Ceil", "Ceil", 6, NULL},
    {"Celu", "Celu", 12, NULL},
    {"Clip", "Clip", 6, onnx_import_clip},
    {"Compress", "Compress", 9, NULL},
    {"Concat", "Concat", 4, NULL},
    {"Constant", NULL, 1, onnx_import_constant},
    {"ConstantOfShape", "ConstantOfShape", 9, onnx_import_constant_of_shape},
    {"Conv", "Conv", 1, NULL},
    {"ConvInteger", "ConvInteger", 10, NULL},
    {"ConvTranspose", "ConvTranspose", 1, NULL},
    {"Cos", "Cos", 7, NULL},
    {"Cosh", "Cosh", 9, NULL},
    {"CumSum", "CumSum", 11, NULL},
    {"DFT", "DFT", 17, onnx_import_dft},
    {"DepthToSpace", "DepthToSpace", 1, NULL},
    {"DequantizeLinear", "DequantizeLinear", 10, NULL},
    {"Det", "Det", 11, NULL},
    {"Div", "Div", 7, NULL},
    {"Dropout", "Dropout", 7, onnx_import_dropout},
    {"DynamicQuantizeLinear", "DynamicQuantizeLinear", 11, NULL},
    {"Einsum", "Einsum", 12, NULL},
    {"Elu", "Elu", 6, NULL},
    {"Equal", "Equal", 7, NULL},
    {"Erf", "Erf", 9, NULL},
    {"Exp", "Exp", 6, NULL},
    {"Expand", "Expand", 8, NULL},
    {"EyeLike", "EyeLike", 9, onnx_import_eye_like},
    {"Flatten", "Flatten", 1, NULL},
    {"Floor", "Floor", 6, NULL},
    {"GRU", "GRU", 7, onnx_import_rnn},
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
    {"GridSample", "GridSample", 16, NULL},
    {"GroupNormalization", "GroupNormalization", 18, NULL},
    {"HammingWindow", "HammingWindow", 17, onnx_import_signal_dtype},
    {"HannWindow", "HannWindow", 17, onnx_import_signal_dtype},
    {"HardSigmoid", "HardSigmoid", 6, NULL},
    {"HardSwish", "HardSwish", 14, NULL},
    {"Hardmax", "Hardmax", 1, onnx_import_hardmax},
    {"Identity", "Identity", 1, onnx_import_identity},
    {"InstanceNormalization", "InstanceNormalization", 6, NULL},
    {"IsInf", "IsInf", 10, NULL},
    {"IsNaN", "IsNaN", 9, NULL},
    {"LRN", "LRN", 1, NULL},
    {"LSTM", "LSTM", 7, onnx_import_rnn},
    {"LayerNormalization", "LayerNormalization", 17, onnx_import_nb_outputs},
    {"LeakyRelu", "LeakyRelu", 6, NULL},
    {"Less", "Less", 7, NULL},
    {"LessOrEqual", "LessOrEqual", 12, NULL},
    {"Log", "Log", 6, NULL},
    {"LogSoftmax", "LogSoftmax", 1, onnx_import_softmax},
    {"LpNormalization", "LpNormalization", 1, NULL},
    {"LpPool", "LpPool", 2, NULL},
    {"MatMul", "MatMul", 1, NULL},
    {"MatMulInteger", "MatMulInteger", 10, NULL},
    {"Max", "Max", 6, NULL},
    {"MaxPool", "MaxPool", 1, onnx_import_nb_outputs},
    {"MaxUnpool", "MaxUnpool", 9, NULL},
    {"Mean", "Mean", 6, NULL},
    {"MeanVarianceNormalization", "MeanVarianceNormalization", 9, NULL},
    {"MelWeightMatrix", "MelWeightMatrix", 17, onnx_import_signal_dtype},
    {"Min", "Min", 6, NULL},
    {"Mish", "Mish", 18, NULL},
    {"Mod", "Mod", 10, NULL},
    {"Mul", "Mul", 7, NULL},
    {"Neg", "Neg", 6, NULL},
    {"NegativeLogLikelihoodLoss", "NegativeLogLikelihoodLoss", 12, NULL},
    {"NonMaxSuppression", "NonMaxSuppression", 10, onnx_import_nms},
    {"NonZero", "NonZero", 9, NULL},
    {"Not", "Not", 1, NULL},
    {"OneHot", "OneHot", 9, onnx_import_one_hot},
    {"Or", "Or", 7, NULL},
    {"PRelu", "PRelu", 7, NULL},
    {"Pad", "Pad", 2, onnx_import_pad},
    {"Pow", "Pow", 7, NULL},
    {"QLinearConv", "QLinearConv", 10, NULL},
    {"QLinearMatMul", "QLinearMatMul", 10, NULL},
    {"QuantizeLinear", "QuantizeLinear", 10, NULL},
    {"RNN", "RNN", 7, onnx_import_rnn},
    {"Range", "Range", 11, onnx_import_range},
    {"Reciprocal", "Reciprocal", 6, NULL},
    {"ReduceL1", "ReduceL1", 1, onnx_import_reduce},
    {"ReduceL2", "ReduceL2", 1, onnx_import_reduce},
    {"ReduceLogSum", "ReduceLogSum", 1, onnx_import_reduce},
    {"ReduceLogSumExp", "ReduceLogSumExp", 1, onnx_import_reduce},
    {"ReduceMax", "ReduceMax", 1, onnx_import_reduce},
    {"ReduceMean", "ReduceMean", 1, onnx_import_reduce},
    {"ReduceMin", "ReduceMin", 1, onnx_import_reduce},
    {"ReduceProd", "ReduceProd", 1, onnx_import_reduce},
    {"ReduceSum", "ReduceSum", 1, onnx_import_reduce},
    {"ReduceSumSquare", "ReduceSumSquare", 1, onnx_import_reduce},
    {"Relu", "Relu", 6, NULL},
    {"Reshape", "Reshape", 5, NULL},
    {"Resize", "Resize", 10, onnx_import_resize},
    {"ReverseSequence", "ReverseSequence", 10, NULL},
    {"RoiAlign", "RoiAlign", 10, onnx_import_roi_align},
    {"Round", "Round", 11, NULL},
    {"STFT", "STFT", 17, onnx_import_stft},
    {"Scatter", "ScatterElements", 9, NULL},
    {"ScatterElements", "ScatterElements", 11, NULL},
    {"ScatterND", "ScatterND", 11, NULL},
    {"Selu", "Selu", 6, NULL},
    {"Shape", "Shape", 1, NULL},
    {"Shrink", "Shrink", 9, NULL},
    {"Sigmoid", "Sigmoid", 6, NULL},
    {"Sign", "Sign", 9, NULL},
    {"Sin", "Sin", 7, NULL},
    {"Sinh", "Sinh", 9, NULL},
    {"Size", "Size", 1, NULL},
    {"Slice", "Slice", 1, NULL},
    {"Softmax", "Softmax", 1, onnx_import_softmax},
    {"SoftmaxCrossEntropyLoss", "SoftmaxCrossEntropyLoss", 12, onnx_import_nb_outputs},
    {"Softplus", "Softplus", 1, NULL},
    {"Softsign", "Softsign", 1, NULL},
    {"SpaceToDepth", "SpaceToDepth", 1, NULL},
    {"Split", "Split", 2, onnx_import_split},
    {"Sqrt", "Sqrt", 6, NULL},
    {"Squeeze", "Squeeze", 1, NULL},
    {"Sub", "Sub", 7, NULL},
    {"Sum", "Sum", 6, NULL},
    {"Tan", "Tan", 7, NULL},
    {"Tanh", "Tanh", 6, NULL},
    {"TfIdfVectorizer", "TfIdfVectorizer", 9, NULL},
    {"ThresholdedRelu", "ThresholdedRelu", 10, NULL},
    {"Tile", "Tile", 6, NULL},
    {"TopK", "TopK", 1, NULL},
    {"Transpose", "Transpose", 1, NULL},
    {"Trilu", "Trilu", 14, NULL},
    {"Unique", "Unique", 11, NULL},
    {"Unsqueeze", "Unsqueeze", 1, NULL},
    {"Upsample", "Resize", 7, onnx_import_resize},
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

/* The ops of ONNX Runtime's domain com.microsoft that plugrt imports: the
 * elementwise ops of its QOperator models (issue 30), and the
 * SkipLayerNormalization of its transformer optimizer. Only these: any other
 * op of that domain is served by a plugin or not at all. The domain's opset
 * is not checked (min_opset 0): these ops have had one form since 1. */
static const onnx_op ms_table[] = {
    {"QLinearAdd", "QLinearAdd", 0, NULL},
    {"QLinearMul", "QLinearMul", 0, NULL},
    {"SkipLayerNormalization", "SkipLayerNormalization", 0, onnx_import_nb_outputs},
};

static int is_ms_domain(const char *domain)
{
    return domain && strcmp(domain, "com.microsoft") == 0;
}

static const onnx_op *ms_find(const char *op_type)
{
    for (size_t i = 0; i < sizeof ms_table / sizeof ms_table[0]; i++)
        if (strcmp(op_type, ms_table[i].op_type) == 0)
            return &ms_table[i];
    return NULL;
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
    if (imp->opset == 0 && op->min_opset > 0)
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

/* The registry's lookup (the cause the error below wraps) guesses a near
 * plugin name too, from plugins alone; near_miss's guess, from ONNX ops and
 * plugins, is the one the message keeps, so "did you mean" is said once. */
static void drop_registry_guess(void)
{
    char cause[2048];
    const char *end;
    char *at;
    snprintf(cause, sizeof cause, "%s", prt_last_error());
    at = strstr(cause, "; did you mean ");
    if (!at || !(end = strchr(at, '?')))
        return;
    memmove(at, end + 1, strlen(end + 1) + 1);
    /* Text already escaped stays as it is when set again. */
    onnx_error(PRT_ERR_NOT_FOUND, "%s", cause);
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
    if (hint[0])
        drop_registry_guess();
    return onnx_error_wrap(
        PRT_ERR_UNSUPPORTED, "%s: op '%s'%s%s has no importer%s and no plugin creator%s",
        label, op_type, dflt ? "" : " of domain ", dflt ? "" : node->domain,
        in_table ? " available in this libplugrt" : "", hint);
}

int onnx_has_importer(const char *op_type, const char *domain)
{
    return is_default_domain(domain) ? op_find(op_type) != NULL
                                     : is_ms_domain(domain) && ms_find(op_type) != NULL;
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

    /* 2. The importer table, for the default domain's ops and
     * com.microsoft's few (a node that names a plugin_namespace asks for a
     * plugin). */
    if (!has_ns && is_default_domain(node->domain))
        op = op_find(op_type);
    else if (!has_ns && is_ms_domain(node->domain))
        op = ms_find(op_type);
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

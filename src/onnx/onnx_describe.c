/*
 * A model read only to be described (prt_onnx_model, onnx.h): the graph's
 * inputs, outputs and nodes as the file declares them, for `plugrt inspect
 * model.onnx`. Unlike an import nothing here must be servable, so a model
 * that does not import (an op without a plugin, a dtype plugrt lacks)
 * still shows what it holds.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* A node's plugin key attributes, copied out of the message. */
typedef struct describe_key {
    char ns[256];
    char ver[64];
    int has_ns;
} describe_key;

struct prt_onnx_model {
    ProtobufCMessage *msg;
    const Onnx__ModelProto *m;
    const Onnx__GraphProto *g; /* never NULL: an empty graph stands in */
    int64_t opset;
    int32_t nb_inputs;
    int32_t *inputs;    /* graph->input indices that are not initializers */
    describe_key *keys; /* per node */
};

static const Onnx__GraphProto empty_graph = ONNX__GRAPH_PROTO__INIT;

void prt_onnx_model_destroy(prt_onnx_model *model)
{
    if (!model)
        return;
    onnx_message_free(model->msg);
    prt_free(model->inputs);
    prt_free(model->keys);
    prt_free(model);
}

static int is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (strcmp(onnx_str(g->initializer[i]->name), name) == 0)
            return 1;
    return 0;
}

static prt_status describe_init(prt_onnx_model *d)
{
    const Onnx__GraphProto *g = d->g;
    for (size_t i = 0; i < d->m->n_opset_import; i++) {
        const char *dom = onnx_str(d->m->opset_import[i]->domain);
        if (!dom[0] || strcmp(dom, "ai.onnx") == 0)
            d->opset = d->m->opset_import[i]->version;
    }
    d->inputs = onnx_calloc(g->n_input ? g->n_input : 1, sizeof *d->inputs);
    d->keys = onnx_calloc(g->n_node ? g->n_node : 1, sizeof *d->keys);
    if (!d->inputs || !d->keys)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY,
                          "describing an ONNX model: out of memory");
    /* Quadratic in the worst case; a graph's inputs are few. */
    for (size_t i = 0; i < g->n_input; i++)
        if (!is_initializer(g, onnx_str(g->input[i]->name)))
            d->inputs[d->nb_inputs++] = (int32_t)i;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__AttributeProto *ns = onnx_node_attr(g->node[i], "plugin_namespace");
        const Onnx__AttributeProto *ver = onnx_node_attr(g->node[i], "plugin_version");
        describe_key *k = &d->keys[i];
        snprintf(k->ver, sizeof k->ver, "1");
        k->has_ns = ns != NULL;
        /* A key attribute that is not a STRING is the import's error to
         * report; described, it reads as absent. */
        if (ns && onnx_attr_string(ns, k->ns, sizeof k->ns) != 0)
            k->ns[0] = '\0';
        if (ver && onnx_attr_string(ver, k->ver, sizeof k->ver) != 0)
            snprintf(k->ver, sizeof k->ver, "1");
    }
    return PRT_OK;
}

prt_status prt_onnx_model_read_file(const char *path, prt_onnx_model **out)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    prt_onnx_model *d;
    prt_status st;
    if (!path || !out)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_model_read_file: NULL argument");
    st = onnx_read_file(path, "ONNX model", &bytes, &size);
    if (st)
        return st;
    d = onnx_calloc(1, sizeof *d);
    if (!d) {
        prt_free(bytes);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    st = onnx_unpack(&onnx__model_proto__descriptor, bytes, size, "ONNX model", &d->msg);
    prt_free(bytes);
    if (!st) {
        d->m = (const Onnx__ModelProto *)d->msg;
        d->g = d->m->graph ? d->m->graph : &empty_graph;
        st = describe_init(d);
    }
    if (st) {
        prt_onnx_model_destroy(d);
        return onnx_error_wrap(st, "%s", path);
    }
    *out = d;
    return PRT_OK;
}

/* The query structs open with struct_size, as plugrt.h's do. */
static prt_status query_check(const void *model, uint32_t have, size_t need,
                              const char *fn)
{
    if (!model)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: NULL model", fn);
    if (have < need)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: out->struct_size %u is smaller than this header's %zu", fn,
                          (unsigned)have, need);
    return PRT_OK;
}

prt_status prt_onnx_model_get_info(const prt_onnx_model *model, prt_onnx_model_info *out)
{
    prt_onnx_model_info r;
    prt_status st = query_check(model, out ? out->struct_size : 0, sizeof r,
                                "prt_onnx_model_get_info");
    if (st)
        return st;
    memset(&r, 0, sizeof r);
    r.struct_size = out->struct_size;
    r.ir_version = model->m->ir_version;
    r.opset = model->opset;
    r.producer_name = onnx_str(model->m->producer_name);
    r.producer_version = onnx_str(model->m->producer_version);
    r.graph_name = onnx_str(model->g->name);
    r.nb_inputs = model->nb_inputs;
    r.nb_outputs = (int32_t)model->g->n_output;
    r.nb_nodes = (int32_t)model->g->n_node;
    r.nb_initializers = (int32_t)model->g->n_initializer;
    *out = r;
    return PRT_OK;
}

static void value_info(const Onnx__ValueInfoProto *vi, prt_onnx_value_info *out)
{
    const Onnx__TypeProto__Tensor *tt = NULL;
    uint32_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    out->name = onnx_str(vi->name);
    out->dtype = -1;
    out->elem_type = "";
    out->rank = -1;
    for (int k = 0; k < PRT_MAX_DIMS; k++)
        out->dim_params[k] = "";
    if (vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        tt = vi->type->tensor_type;
    if (!tt)
        return;
    if (tt->has_elem_type) {
        out->elem_type = onnx_elem_type_name(tt->elem_type);
        if (onnx_dtype_from_onnx(tt->elem_type, out->name, &out->dtype) != PRT_OK) {
            prt_clear_error();
            out->dtype = -1;
        }
    }
    if (!tt->shape)
        return;
    out->rank = (int32_t)tt->shape->n_dim;
    out->dims.nb_dims = out->rank < PRT_MAX_DIMS ? out->rank : PRT_MAX_DIMS;
    for (int32_t k = 0; k < out->dims.nb_dims; k++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
        int has_value =
            d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        out->dims.d[k] = has_value && d->dim_value >= 0 ? d->dim_value : -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
            out->dim_params[k] = onnx_str(d->dim_param);
    }
}

static prt_status value_query(const prt_onnx_model *model, int32_t index, int input,
                              prt_onnx_value_info *out)
{
    const char *fn = input ? "prt_onnx_model_get_input" : "prt_onnx_model_get_output";
    int32_t count;
    prt_status st = query_check(model, out ? out->struct_size : 0, sizeof *out, fn);
    if (st)
        return st;
    count = input ? model->nb_inputs : (int32_t)model->g->n_output;
    if (index < 0 || index >= count)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: index %d outside 0..%d", fn,
                          (int)index, (int)count - 1);
    value_info(input ? model->g->input[model->inputs[index]] : model->g->output[index],
               out);
    return PRT_OK;
}

prt_status prt_onnx_model_get_input(const prt_onnx_model *model, int32_t index,
                                    prt_onnx_value_info *out)
{
    return value_query(model, index, 1, out);
}

prt_status prt_onnx_model_get_output(const prt_onnx_model *model, int32_t index,
                                     prt_onnx_value_info *out)
{
    return value_query(model, index, 0, out);
}

prt_status prt_onnx_model_get_node(const prt_onnx_model *model, int32_t index,
                                   prt_onnx_node_info *out)
{
    const Onnx__NodeProto *n;
    const describe_key *k;
    prt_onnx_node_info r;
    prt_status st = query_check(model, out ? out->struct_size : 0, sizeof r,
                                "prt_onnx_model_get_node");
    if (st)
        return st;
    if (index < 0 || (size_t)index >= model->g->n_node)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_model_get_node: index %d outside 0..%d", (int)index,
                          (int)model->g->n_node - 1);
    n = model->g->node[index];
    k = &model->keys[index];
    memset(&r, 0, sizeof r);
    r.struct_size = out->struct_size;
    r.name = onnx_str(n->name);
    r.op_type = onnx_str(n->op_type);
    r.domain = onnx_str(n->domain);
    /* Rule 2 of onnx_choose: a node naming a plugin_namespace asks for a
     * plugin even where the importer knows its op. */
    r.has_importer = !k->has_ns && onnx_has_importer(r.op_type, n->domain);
    r.plugin_namespace = k->ns;
    r.plugin_version = k->ver;
    r.nb_inputs = (int32_t)n->n_input;
    r.inputs = (const char *const *)n->input;
    r.nb_outputs = (int32_t)n->n_output;
    r.outputs = (const char *const *)n->output;
    r.nb_attributes = (int32_t)n->n_attribute;
    *out = r;
    return PRT_OK;
}

/* The parser object and the walk over a model: version checks, graph inputs,
 * initializers (made into constants when first used), nodes in topological
 * order, graph outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* The default-domain opsets the importer accepts: all, up to the newest the
 * op table covers (set by src/onnx/CMakeLists.txt). Semantics
 * that changed before opset 7 (consumed_inputs, the broadcast attributes,
 * Cast's string `to`, Reshape's shape attribute, ...) are guarded by each
 * op's own first opset in the op table (onnx_ops.c): an older node is an
 * error naming it. */
#define MIN_OPSET 1
#ifndef PRT_ONNX_MAX_OPSET
#define PRT_ONNX_MAX_OPSET 20
#endif
/* IR version 3 added opset_import to ModelProto. */
#define MIN_IR_VERSION 3

prt_status prt_onnx_parser_create(const prt_registry *reg, prt_onnx_parser **out)
{
    prt_onnx_parser *p;
    if (!out)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_parser_create: out is NULL");
    p = onnx_calloc(1, sizeof *p);
    if (!p)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "prt_onnx_parser_create: out of memory");
    p->reg = reg;
    *out = p;
    return PRT_OK;
}

static void mapping_free(onnx_mapping *m)
{
    prt_free(m->op_type);
    prt_free(m->plugin_namespace);
    prt_free(m->plugin_name);
    prt_free(m->plugin_version);
}

void prt_onnx_parser_destroy(prt_onnx_parser *parser)
{
    if (!parser)
        return;
    for (int32_t i = 0; i < parser->nb_maps; i++)
        mapping_free(&parser->maps[i]);
    prt_free(parser->maps);
    prt_free(parser);
}

prt_status prt_onnx_parser_map_op(prt_onnx_parser *parser, const char *op_type,
                                  const char *plugin_namespace, const char *plugin_name,
                                  const char *plugin_version)
{
    onnx_mapping m;
    int32_t i;
    if (!parser || !op_type || !op_type[0] || !plugin_name || !plugin_name[0])
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_parser_map_op: parser, op_type and plugin_name are "
                          "required");
    m.op_type = onnx_strdup(op_type);
    m.plugin_namespace = onnx_strdup(plugin_namespace ? plugin_namespace : "");
    m.plugin_name = onnx_strdup(plugin_name);
    m.plugin_version =
        onnx_strdup(plugin_version && plugin_version[0] ? plugin_version : "1");
    if (!m.op_type || !m.plugin_namespace || !m.plugin_name || !m.plugin_version) {
        mapping_free(&m);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "prt_onnx_parser_map_op: out of memory");
    }
    for (i = 0; i < parser->nb_maps; i++)
        if (strcmp(parser->maps[i].op_type, op_type) == 0)
            break;
    if (i == parser->nb_maps) {
        if (parser->nb_maps == parser->cap_maps) {
            int32_t cap = parser->cap_maps ? parser->cap_maps * 2 : 8;
            onnx_mapping *grown =
                onnx_resize(parser->maps, sizeof *grown * (size_t)parser->cap_maps,
                            sizeof *grown * (size_t)cap);
            if (!grown) {
                mapping_free(&m);
                return onnx_error(PRT_ERR_OUT_OF_MEMORY,
                                  "prt_onnx_parser_map_op: out of memory");
            }
            parser->maps = grown;
            parser->cap_maps = cap;
        }
        parser->nb_maps++;
    } else {
        mapping_free(&parser->maps[i]);
    }
    parser->maps[i] = m;
    return PRT_OK;
}

/* ---- the model ------------------------------------------------------------------- */

/* A declared shape of at most PRT_MAX_DIMS dims as dims: a dim_param, no
 * value or a negative value is -1, known only at run time. */
static void shape_dims(const Onnx__TensorShapeProto *shape, prt_dims *out)
{
    out->nb_dims = (int32_t)shape->n_dim;
    for (size_t i = 0; i < shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
        out->d[i] =
            d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                    d->dim_value >= 0
                ? d->dim_value
                : -1;
    }
}

/* Names a graph input before any tensor is made, so that nodes can be
 * ordered and chosen first (an op nothing serves is reported before an input
 * of an unsupported type). An input that is also an initializer is a
 * constant with a default value; plugrt treats it as the constant, as
 * TensorRT does. */
static prt_status register_graph_input(onnx_import *imp, const Onnx__ValueInfoProto *vi)
{
    const char *name = onnx_str(vi->name);
    const onnx_value *v;
    if (!name[0])
        return onnx_error(PRT_ERR_MALFORMED, "a graph input has no name");
    if ((v = onnx_value_find(imp, name)) != NULL) {
        if (v->init)
            return PRT_OK;
        return onnx_error(PRT_ERR_MALFORMED, "graph input '%s' is listed twice", name);
    }
    return onnx_value_add(imp, name, ONNX_VALUE_INPUT, -1, NULL, "graph inputs");
}

static prt_status add_graph_input(onnx_import *imp, const Onnx__ValueInfoProto *vi)
{
    const char *name = onnx_str(vi->name);
    const Onnx__TypeProto__Tensor *tt;
    onnx_value *v = onnx_value_find(imp, name);
    prt_dims dims;
    int32_t dtype;
    char what[512];
    prt_status st;
    snprintf(what, sizeof what, "graph input '%s'", name);
    if (!v || v->kind != ONNX_VALUE_INPUT)
        return PRT_OK; /* an initializer */
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return onnx_error(PRT_ERR_UNSUPPORTED, "%s: only tensor inputs are supported%s",
                          what, vi->type ? " (not sequences, maps or optionals)" : "");
    tt = vi->type->tensor_type;
    if (!tt || !tt->has_elem_type)
        return onnx_error(PRT_ERR_MALFORMED, "%s has no element type", what);
    st = onnx_dtype_from_onnx(tt->elem_type, what, &dtype);
    if (st)
        return st;
    if (!tt->shape)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s has no shape; plugrt needs at least its rank", what);
    if (tt->shape->n_dim > PRT_MAX_DIMS)
        return onnx_error(PRT_ERR_UNSUPPORTED, "%s: rank %zu is over plugrt's %d", what,
                          tt->shape->n_dim, PRT_MAX_DIMS);
    shape_dims(tt->shape, &dims);
    st = prt_network_add_input(imp->net, name, dtype, &dims, &v->tensor);
    if (st)
        return onnx_error_wrap(st, "%s", what);
    return PRT_OK;
}

/* Chooses every node's creator. When an op has none, the error names the
 * first such node and lists the other ops that lack one too, so a user sees
 * at once everything a model needs. */
static prt_status choose_all(onnx_import *imp, const int32_t *order, onnx_choice *choices)
{
    enum { MAX_LISTED = 32 };
    const Onnx__GraphProto *g = imp->graph;
    const char *listed[MAX_LISTED];
    char first[2048], others[1024];
    size_t pos = 0;
    int nb_listed = 0;
    prt_status st = PRT_OK;
    others[0] = '\0';
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[order[i]];
        const char *op = onnx_str(node->op_type);
        int seen = 0;
        prt_status s = onnx_choose(imp, node, order[i], &choices[i]);
        if (!s)
            continue;
        if (!st && s != PRT_ERR_UNSUPPORTED)
            return s;
        if (s != PRT_ERR_UNSUPPORTED)
            continue; /* already failing; only unserved ops are listed */
        if (!st) {
            st = s;
            snprintf(first, sizeof first, "%s", prt_last_error());
        }
        for (int k = 0; k < nb_listed; k++)
            seen |= strcmp(listed[k], op) == 0;
        if (seen || nb_listed == MAX_LISTED)
            continue;
        if (nb_listed > 0 && pos < sizeof others)
            pos += (size_t)snprintf(others + pos, sizeof others - pos, "%s%s",
                                    nb_listed > 1 ? ", " : "", op);
        listed[nb_listed++] = op;
    }
    if (!st)
        return PRT_OK;
    if (nb_listed > 1)
        return onnx_error(st, "%s (other ops that nothing serves: %s%s)", first, others,
                          nb_listed == MAX_LISTED ? ", ..." : "");
    return onnx_error(st, "%s", first);
}

/* Makes a graph output of constant tensor `src`, which the network cannot
 * mark: a built-in Identity copies it into a tensor named `name` (the
 * constant is renamed). */
static prt_status output_constant(onnx_import *imp, const char *name, int32_t src,
                                  int32_t *out_tensor)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection none = {0, NULL};
    prt_plugin *plugin = NULL;
    char alt[512];
    int32_t layer, t;
    prt_status st;
    if (prt_builtin_find_creator("Identity", "1", &c) != PRT_OK)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "graph output '%s' is a constant, which needs the built-in "
                          "Identity to be an output",
                          name);
    /* The output takes the name; the constant gets another one. */
    for (int k = 0;; k++) {
        snprintf(alt, sizeof alt, k ? "%s:constant.%d" : "%s:constant", name, k);
        st = prt_network_set_tensor_name(imp->net, src, alt);
        if (st != PRT_ERR_ALREADY_EXISTS || k > 1000)
            break;
    }
    if (!st)
        st = c->create(c, name, &none, PRT_PHASE_BUILD, &plugin);
    if (!st && !plugin)
        st = PRT_ERR_PLUGIN;
    if (!st) {
        st = prt_network_add_plugin(imp->net, &src, 1, NULL, 0, plugin, &layer);
        if (st)
            plugin->vt->runtime->destroy(plugin);
    }
    if (!st)
        st = prt_network_get_layer_output(imp->net, layer, 0, &t);
    if (!st)
        st = onnx_claim_name(imp, name);
    if (!st)
        st = prt_network_set_tensor_name(imp->net, t, name);
    if (st)
        return onnx_error_wrap(st, "graph output '%s' (a constant)", name);
    *out_tensor = t;
    return PRT_OK;
}

static prt_status import_graph(onnx_import *imp)
{
    const Onnx__GraphProto *g = imp->graph;
    int32_t *order = NULL;
    onnx_choice *choices = NULL;
    onnx_fusions *fuse = NULL;
    onnx_qluts *qlut = NULL;
    prt_status st = onnx_control_flatten(imp, &g);

    if (st)
        return st;
    imp->graph = g; /* If and Loop folded (onnx_control.c) */

    if (g->n_sparse_initializer)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "sparse initializers are not supported ('%s')",
                          onnx_str(g->sparse_initializer[0]->values
                                       ? g->sparse_initializer[0]->values->name
                                       : NULL));
    for (size_t i = 0; i < g->n_initializer && !st; i++) {
        const char *name = onnx_str(g->initializer[i]->name);
        if (!name[0])
            return onnx_error(PRT_ERR_MALFORMED, "initializer %zu has no name", i);
        st = onnx_value_add(imp, name, ONNX_VALUE_CONSTANT, -1, g->initializer[i],
                            "initializers");
    }
    for (size_t i = 0; i < g->n_input && !st; i++)
        st = register_graph_input(imp, g->input[i]);
    if (st)
        return st;
    if (g->n_node > (size_t)INT32_MAX / 2)
        return onnx_error(PRT_ERR_UNSUPPORTED, "the graph has too many nodes");

    order = prt_malloc(sizeof *order * (g->n_node + 1));
    choices = prt_malloc(sizeof *choices * (g->n_node + 1));
    if (!order || !choices) {
        prt_free(order);
        prt_free(choices);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    }
    st = onnx_graph_order(g, &imp->names, order);
    if (!st)
        st = choose_all(imp, order, choices);
    /* 8-bit chains first: their nodes leave choices[] (onnx_qlut.c). */
    if (!st && !imp->parser->no_fuse)
        st = onnx_qlut_plan(imp, order, choices, &qlut);
    if (!st && !imp->parser->no_fuse)
        st = onnx_fuse_plan(imp, order, choices, &fuse);
    for (size_t i = 0; i < g->n_input && !st; i++)
        st = add_graph_input(imp, g->input[i]);
    for (size_t i = 0; i < g->n_node && !st; i++) {
        int32_t lut = onnx_qlut_role(qlut, (int32_t)i);
        int32_t role = lut == -1 ? onnx_fuse_role(fuse, (int32_t)i) : -2;
        if (lut >= 0)
            st = onnx_qlut_import(imp, qlut, (int32_t)i, order);
        else if (role == -1)
            st = onnx_import_node(imp, g->node[order[i]], order[i], &choices[i]);
        else if (role >= 0)
            st = onnx_fuse_import(imp, fuse, (int32_t)i, order);
    }
    onnx_fuse_free(fuse);
    onnx_qlut_free(qlut);
    prt_free(order);
    prt_free(choices);
    if (st)
        return st;

    if (g->n_output == 0)
        return onnx_error(PRT_ERR_MALFORMED, "the graph has no outputs");
    for (size_t i = 0; i < g->n_output; i++) {
        const char *name = onnx_str(g->output[i]->name);
        onnx_value *v = onnx_value_find(imp, name);
        int32_t t;
        if (!v)
            return onnx_error(PRT_ERR_MALFORMED,
                              "graph output '%s' is not produced by any node", name);
        if (v->kind == ONNX_VALUE_INPUT)
            return onnx_error(PRT_ERR_UNSUPPORTED,
                              "graph output '%s' is also a graph input; engine inputs "
                              "and outputs need distinct names",
                              name);
        st = onnx_value_tensor(imp, name, &t);
        if (!st && v->kind == ONNX_VALUE_CONSTANT) {
            /* Once per name: a later mention finds the copy. */
            st = output_constant(imp, name, t, &t);
            if (!st) {
                v->kind = ONNX_VALUE_NODE;
                v->tensor = t;
            }
        }
        if (!st)
            st = prt_network_mark_output(imp->net, t);
        if (st)
            return onnx_error_wrap(st, "graph output '%s'", name);
    }
    return PRT_OK;
}

static prt_status check_versions(const Onnx__ModelProto *m, int64_t *out_opset)
{
    int found = 0;
    int64_t opset = 0;
    if (!m->has_ir_version || m->ir_version < MIN_IR_VERSION)
        return onnx_error(PRT_ERR_VERSION,
                          "the model's IR version is %lld; plugrt reads IR version "
                          "%d and later",
                          (long long)m->ir_version, MIN_IR_VERSION);
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *d = onnx_str(m->opset_import[i]->domain);
        if (!d[0] || strcmp(d, "ai.onnx") == 0) {
            if (found && m->opset_import[i]->version != opset)
                return onnx_error(PRT_ERR_MALFORMED,
                                  "the model imports the default domain twice, as "
                                  "opsets %lld and %lld",
                                  (long long)opset,
                                  (long long)m->opset_import[i]->version);
            found = 1;
            opset = m->opset_import[i]->version;
        }
    }
    /* A model of custom-domain ops alone need not import the default
     * domain; then opset stays 0 and the importer table is not used. */
    if (found && (opset < MIN_OPSET || opset > PRT_ONNX_MAX_OPSET))
        return onnx_error(PRT_ERR_VERSION,
                          "the model imports default-domain opset %lld; plugrt "
                          "supports opsets %d to %d",
                          (long long)opset, MIN_OPSET, PRT_ONNX_MAX_OPSET);
    *out_opset = opset;
    return PRT_OK;
}

prt_status prt_onnx_parser_set_strict(prt_onnx_parser *parser, int32_t strict)
{
    if (!parser)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_parser_set_strict: NULL parser");
    parser->strict = strict != 0;
    return PRT_OK;
}

prt_status prt_onnx_parser_set_fuse(prt_onnx_parser *parser, int32_t fuse)
{
    if (!parser)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_parser_set_fuse: NULL parser");
    parser->no_fuse = fuse == 0;
    return PRT_OK;
}

/* What the model declares for a value (a graph output or value_info) goes
 * to the network, whose builder holds plugin layers' outputs to it. A
 * declaration plugrt cannot read (no tensor type, an unknown dtype) is
 * skipped: it is advice, not a rule of the model. */
static prt_status declare_value(onnx_import *imp, const Onnx__ValueInfoProto *vi)
{
    const char *name = onnx_str(vi->name);
    const Onnx__TypeProto__Tensor *tt;
    const onnx_value *v = onnx_value_find(imp, name);
    prt_dims dims;
    int32_t dtype = -1;
    prt_status st;
    if (!v || v->kind != ONNX_VALUE_NODE || v->tensor < 0 || !vi->type ||
        vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !(tt = vi->type->tensor_type))
        return PRT_OK;
    if (tt->has_elem_type &&
        onnx_dtype_from_onnx(tt->elem_type, name, &dtype) != PRT_OK) {
        prt_clear_error();
        dtype = -1;
    }
    dims.nb_dims = -1;
    if (tt->shape && tt->shape->n_dim <= PRT_MAX_DIMS)
        shape_dims(tt->shape, &dims);
    st = prt_network_expect_tensor(imp->net, v->tensor, dtype, &dims);
    return st ? onnx_error_wrap(st, "the declared type of '%s'", name) : PRT_OK;
}

prt_status prt_onnx_parser_parse_bytes(prt_onnx_parser *parser, const void *bytes,
                                       size_t size, const char *base_dir,
                                       prt_network **out)
{
    ProtobufCMessage *msg = NULL;
    const Onnx__ModelProto *model;
    onnx_import imp;
    prt_status st;
    if (!parser || (!bytes && size) || !out)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_parser_parse_bytes: NULL argument");
    st = onnx_unpack(&onnx__model_proto__descriptor, bytes, size, "ONNX model", &msg);
    if (st)
        return st;
    model = (const Onnx__ModelProto *)msg;
    memset(&imp, 0, sizeof imp);
    imp.parser = parser;
    imp.base_dir = base_dir;
    imp.graph = model->graph;
    st = check_versions(model, &imp.opset);
    if (!st && !model->graph)
        st = onnx_error(PRT_ERR_MALFORMED, "the model has no graph");
    if (!st) {
        st = prt_network_create(&imp.net);
        if (st)
            st = onnx_error_wrap(st, "ONNX import");
    }
    if (!st)
        st = import_graph(&imp);
    for (size_t i = 0; !st && i < imp.graph->n_output; i++)
        st = declare_value(&imp, imp.graph->output[i]);
    for (size_t i = 0; !st && i < imp.graph->n_value_info; i++)
        st = declare_value(&imp, imp.graph->value_info[i]);
    if (!st)
        st = prt_network_set_strict(imp.net, parser->strict);
    if (st) {
        prt_network_destroy(imp.net);
        imp.net = NULL;
    }
    prt_free(imp.values);
    onnx_names_free(&imp.names);
    for (int32_t i = 0; i < imp.nb_made; i++)
        prt_free(imp.made[i]);
    prt_free(imp.made);
    onnx_message_free(msg);
    if (!st)
        *out = imp.net;
    return st;
}

prt_status prt_onnx_parser_parse_file(prt_onnx_parser *parser, const char *path,
                                      prt_network **out)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    char *dir;
    const char *slash;
    prt_status st;
    if (!parser || !path || !out)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_parser_parse_file: NULL argument");
    st = onnx_read_file(path, "ONNX model", &bytes, &size);
    if (st)
        return st;
    /* External data lives next to the model. */
    slash = strrchr(path, '/');
    if (!slash)
        dir = onnx_strdup(".");
    else if (slash == path)
        dir = onnx_strdup("/");
    else {
        dir = prt_malloc((size_t)(slash - path) + 1);
        if (dir) {
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = '\0';
        }
    }
    if (!dir) {
        prt_free(bytes);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_onnx_parser_parse_file: out of memory");
    }
    st = prt_onnx_parser_parse_bytes(parser, bytes, size, dir, out);
    if (st)
        st = onnx_error_wrap(st, "%s", path);
    prt_free(dir);
    prt_free(bytes);
    return st;
}

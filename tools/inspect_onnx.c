/*
 * plugrt inspect MODEL.onnx: what an ONNX model declares, read without
 * importing it (prt_onnx_model, onnx.h), so a model that does not import
 * yet (a plugin not loaded, an op plugrt lacks) is described all the same:
 * its inputs and outputs with dtypes and shapes, a count of its nodes by op
 * (the plugin key of nodes a plugin serves, and whether the registry holds
 * it), and each node with --verbose or when there are few.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "fields.h"
#include "json.h"
#include "model.h"
#include "text.h"

#if PRT_HAVE_ONNX
#include "plugrt/onnx.h"

/* Models with at most this many nodes list them without --verbose. */
#define FEW_NODES 32

/* One op of the summary: the nodes of one (domain, op_type, plugin key). */
typedef struct op_count {
    const prt_onnx_node_info *first; /* borrowed from the node table */
    int32_t count;
} op_count;

/* "N x 3 x 224 x 224" with symbolic dims by name: "Nx3x224x224"; "?" for
 * a dim the model leaves unknown, "(no shape)" without a shape. */
static char *value_dims(const prt_onnx_value_info *v, char *buf, size_t cap)
{
    size_t n = 0;
    if (v->rank < 0)
        snprintf(buf, cap, "(no shape)");
    else if (v->rank == 0)
        snprintf(buf, cap, "scalar");
    else
        buf[0] = '\0';
    for (int32_t k = 0; k < v->dims.nb_dims && n < cap; k++) {
        char en[CLI_ESC_CAP];
        if (v->dim_params[k][0])
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? "x" : "",
                                  cli_escape(v->dim_params[k], en, sizeof en));
        else if (v->dims.d[k] >= 0)
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? "x" : "",
                                  (long long)v->dims.d[k]);
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s?", k ? "x" : "");
    }
    if (v->rank > v->dims.nb_dims && n < cap)
        snprintf(buf + n, cap - n, "x... (rank %d)", (int)v->rank);
    return buf;
}

static const char *value_dtype(const prt_onnx_value_info *v)
{
    if (v->dtype >= 0)
        return prt_dtype_name(v->dtype);
    return v->elem_type[0] ? v->elem_type : "?";
}

/* The plugin key a node asks for, or NULL when the importer serves it. */
static const char *node_key(const prt_onnx_node_info *n, char *buf, size_t cap)
{
    if (n->has_importer)
        return NULL;
    return cli_plugin_key(n->plugin_namespace, n->op_type, n->plugin_version, buf, cap);
}

static int node_available(const prt_registry *reg, const prt_onnx_node_info *n)
{
    const prt_plugin_creator *c;
    return n->has_importer ||
           (reg && prt_registry_find_creator(reg, n->plugin_namespace, n->op_type,
                                             n->plugin_version, &c) == PRT_OK);
}

static int same_op(const prt_onnx_node_info *a, const prt_onnx_node_info *b)
{
    return strcmp(a->op_type, b->op_type) == 0 && strcmp(a->domain, b->domain) == 0 &&
           a->has_importer == b->has_importer &&
           (a->has_importer || (strcmp(a->plugin_namespace, b->plugin_namespace) == 0 &&
                                strcmp(a->plugin_version, b->plugin_version) == 0));
}

/* The model's parts, read once for either output. */
typedef struct onnx_view {
    const char *path;
    const prt_registry *reg;
    prt_onnx_model_info info;
    prt_onnx_value_info *values; /* inputs, then outputs */
    prt_onnx_node_info *nodes;
    op_count *ops;
    int32_t nb_ops;
} onnx_view;

static void view_free(onnx_view *v)
{
    free(v->values);
    free(v->nodes);
    free(v->ops);
}

static int view_read(onnx_view *v, const prt_onnx_model *m)
{
    prt_status st;
    int32_t nv;
    v->info.struct_size = sizeof v->info;
    if ((st = prt_onnx_model_get_info(m, &v->info)) != PRT_OK) {
        cli_error_api(st, "cannot describe %s", v->path);
        return CLI_FAIL;
    }
    nv = v->info.nb_inputs + v->info.nb_outputs;
    v->values = calloc((size_t)(nv > 0 ? nv : 1), sizeof *v->values);
    v->nodes =
        calloc((size_t)(v->info.nb_nodes > 0 ? v->info.nb_nodes : 1), sizeof *v->nodes);
    v->ops =
        calloc((size_t)(v->info.nb_nodes > 0 ? v->info.nb_nodes : 1), sizeof *v->ops);
    if (!v->values || !v->nodes || !v->ops) {
        cli_error("out of memory describing the %d nodes of %s", (int)v->info.nb_nodes,
                  v->path);
        return CLI_FAIL;
    }
    for (int32_t i = 0; i < nv && !st; i++) {
        v->values[i].struct_size = sizeof v->values[i];
        st = i < v->info.nb_inputs
                 ? prt_onnx_model_get_input(m, i, &v->values[i])
                 : prt_onnx_model_get_output(m, i - v->info.nb_inputs, &v->values[i]);
    }
    for (int32_t i = 0; i < v->info.nb_nodes && !st; i++) {
        int32_t k = 0;
        v->nodes[i].struct_size = sizeof v->nodes[i];
        st = prt_onnx_model_get_node(m, i, &v->nodes[i]);
        while (!st && k < v->nb_ops && !same_op(v->ops[k].first, &v->nodes[i]))
            k++;
        if (!st && k == v->nb_ops)
            v->ops[v->nb_ops++].first = &v->nodes[i];
        if (!st)
            v->ops[k].count++;
    }
    if (st) {
        cli_error_api(st, "cannot describe %s", v->path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* ---- text ---------------------------------------------------------------- */

static void print_values(const onnx_view *v, int inputs)
{
    int32_t from = inputs ? 0 : v->info.nb_inputs;
    int32_t to = inputs ? v->info.nb_inputs : v->info.nb_inputs + v->info.nb_outputs;
    for (int32_t i = from; i < to; i++) {
        char en[CLI_ESC_CAP], d[256];
        printf("  %-6s %s  %s %s\n", inputs ? "input" : "output",
               cli_escape(v->values[i].name, en, sizeof en), value_dtype(&v->values[i]),
               value_dims(&v->values[i], d, sizeof d));
    }
}

static void print_op(const onnx_view *v, const prt_onnx_node_info *n)
{
    char key[512], e1[CLI_ESC_CAP], e2[CLI_ESC_CAP];
    const char *k = node_key(n, key, sizeof key);
    printf("%s", cli_escape(n->op_type, e1, sizeof e1));
    if (n->domain[0])
        printf(" (domain %s)", cli_escape(n->domain, e2, sizeof e2));
    if (k)
        printf("  plugin %s%s", cli_escape(k, e2, sizeof e2),
               node_available(v->reg, n) ? "" : ", not loaded");
}

static void print_names(const char *const *names, int32_t n)
{
    for (int32_t k = 0; k < n; k++) {
        char en[CLI_ESC_CAP];
        printf("%s%s", k ? ", " : "",
               names[k][0] ? cli_escape(names[k], en, sizeof en) : "(none)");
    }
}

static void print_onnx_text(const onnx_view *v, int verbose)
{
    char en[CLI_ESC_CAP], e2[CLI_ESC_CAP];
    int32_t missing = 0;
    printf("model: %s, IR version %lld, opset %lld, %d nodes, %d initializers\n", v->path,
           (long long)v->info.ir_version, (long long)v->info.opset, (int)v->info.nb_nodes,
           (int)v->info.nb_initializers);
    if (v->info.producer_name[0])
        printf("producer: %s %s\n", cli_escape(v->info.producer_name, en, sizeof en),
               cli_escape(v->info.producer_version, e2, sizeof e2));
    printf("\nI/O:\n");
    print_values(v, 1);
    print_values(v, 0);
    printf("\nOps (nodes per op):\n");
    for (int32_t i = 0; i < v->nb_ops; i++) {
        printf("  %6d  ", (int)v->ops[i].count);
        print_op(v, v->ops[i].first);
        putchar('\n');
        missing += !node_available(v->reg, v->ops[i].first);
    }
    if (missing)
        printf("  (%d plugin op(s) not loaded: load their library with --plugins "
               "LIB.so to build or run the model)\n",
               (int)missing);
    if (!verbose && v->info.nb_nodes > FEW_NODES) {
        printf("\nNodes: %d (--verbose lists each)\n", (int)v->info.nb_nodes);
        return;
    }
    printf("\nNodes:\n");
    for (int32_t i = 0; i < v->info.nb_nodes; i++) {
        const prt_onnx_node_info *n = &v->nodes[i];
        printf("  [%d] %s  ", (int)i,
               n->name[0] ? cli_escape(n->name, en, sizeof en) : "(unnamed)");
        print_op(v, n);
        printf("\n      in:  ");
        print_names(n->inputs, n->nb_inputs);
        printf("\n      out: ");
        print_names(n->outputs, n->nb_outputs);
        putchar('\n');
    }
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_value(json_writer *w, const prt_onnx_value_info *v)
{
    json_begin_object(w, NULL);
    json_string(w, "name", v->name);
    json_string(w, "dtype", value_dtype(v));
    if (v->rank < 0) {
        json_null(w, "dims");
    } else {
        cli_json_dims(w, "dims", &v->dims);
        json_begin_array(w, "dim_params");
        for (int32_t k = 0; k < v->dims.nb_dims; k++)
            json_string(w, NULL, v->dim_params[k]);
        json_end_array(w);
    }
    json_end_object(w);
}

static void json_op(json_writer *w, const onnx_view *v, const prt_onnx_node_info *n)
{
    char key[512];
    const char *k = node_key(n, key, sizeof key);
    json_string(w, "op_type", n->op_type);
    json_string(w, "domain", n->domain);
    if (k)
        json_string(w, "plugin", k);
    else
        json_null(w, "plugin");
    json_bool(w, "available", node_available(v->reg, n));
}

static void json_names(json_writer *w, const char *key, const char *const *names,
                       int32_t n)
{
    json_begin_array(w, key);
    for (int32_t k = 0; k < n; k++)
        json_string(w, NULL, names[k]);
    json_end_array(w);
}

static void print_onnx_json(const onnx_view *v)
{
    json_writer w;
    json_init(&w, stdout);
    json_begin_object(&w, NULL);
    json_string(&w, "model", v->path);
    json_int(&w, "ir_version", v->info.ir_version);
    json_int(&w, "opset", v->info.opset);
    json_string(&w, "producer", v->info.producer_name);
    json_string(&w, "producer_version", v->info.producer_version);
    json_int(&w, "initializers", v->info.nb_initializers);
    json_begin_array(&w, "inputs");
    for (int32_t i = 0; i < v->info.nb_inputs; i++)
        json_value(&w, &v->values[i]);
    json_end_array(&w);
    json_begin_array(&w, "outputs");
    for (int32_t i = 0; i < v->info.nb_outputs; i++)
        json_value(&w, &v->values[v->info.nb_inputs + i]);
    json_end_array(&w);
    json_begin_array(&w, "ops");
    for (int32_t i = 0; i < v->nb_ops; i++) {
        json_begin_object(&w, NULL);
        json_op(&w, v, v->ops[i].first);
        json_int(&w, "count", v->ops[i].count);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_begin_array(&w, "nodes");
    for (int32_t i = 0; i < v->info.nb_nodes; i++) {
        const prt_onnx_node_info *n = &v->nodes[i];
        json_begin_object(&w, NULL);
        json_string(&w, "name", n->name);
        json_op(&w, v, n);
        json_names(&w, "inputs", n->inputs, n->nb_inputs);
        json_names(&w, "outputs", n->outputs, n->nb_outputs);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    json_finish(&w);
}

int cli_inspect_onnx(const char *path, const prt_registry *reg, int json, int verbose)
{
    prt_onnx_model *m = NULL;
    onnx_view v;
    prt_status st = prt_onnx_model_read_file(path, &m);
    int rc;
    if (st) {
        cli_error_api(st, "cannot read the ONNX model");
        return CLI_FAIL;
    }
    memset(&v, 0, sizeof v);
    v.path = path;
    v.reg = reg;
    rc = view_read(&v, m);
    if (rc == CLI_OK) {
        if (json)
            print_onnx_json(&v);
        else
            print_onnx_text(&v, verbose);
    }
    view_free(&v);
    prt_onnx_model_destroy(m);
    return rc;
}

#else

int cli_inspect_onnx(const char *path, const prt_registry *reg, int json, int verbose)
{
    (void)reg;
    (void)json;
    (void)verbose;
    cli_error("%s: this plugrt was built without the ONNX importer; it inspects plans "
              "only",
              path);
    return CLI_FAIL;
}

#endif

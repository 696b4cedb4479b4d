/* The values of one import, by ONNX name: what defines each name (a graph
 * input, an initializer or Constant, a node's output) and which network
 * tensor holds it, and the values of the constants among them where an op
 * importer needs them at import time. The parser fills the table with the
 * graph's inputs and initializers, the op importers with the nodes'
 * outputs, and both read it; it sits below them so that neither calls back
 * up into the other. */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

prt_status onnx_value_add(onnx_import *imp, const char *name, int32_t kind,
                          int32_t tensor, const Onnx__TensorProto *init, const char *who)
{
    int32_t idx;
    if (onnx_names_get(&imp->names, name, &idx) == 0)
        return onnx_error(PRT_ERR_MALFORMED, "%s: the name '%s' is defined twice", who,
                          name);
    if (imp->nb_values == imp->cap_values) {
        int32_t cap = imp->cap_values ? imp->cap_values * 2 : 64;
        onnx_value *grown =
            onnx_resize(imp->values, sizeof *grown * (size_t)imp->cap_values,
                        sizeof *grown * (size_t)cap);
        if (!grown)
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
        imp->values = grown;
        imp->cap_values = cap;
    }
    imp->values[imp->nb_values].name = name;
    imp->values[imp->nb_values].kind = kind;
    imp->values[imp->nb_values].tensor = tensor;
    imp->values[imp->nb_values].init = init;
    if (onnx_names_put(&imp->names, name, imp->nb_values))
        return PRT_ERR_OUT_OF_MEMORY;
    imp->nb_values++;
    return PRT_OK;
}

void *onnx_keep(onnx_import *imp, size_t bytes)
{
    char **grown = onnx_resize(imp->made, sizeof *grown * (size_t)imp->nb_made,
                               sizeof *grown * ((size_t)imp->nb_made + 1));
    char *p;
    if (!grown)
        return NULL;
    imp->made = grown;
    p = onnx_calloc(1, bytes ? bytes : 1);
    if (p)
        imp->made[imp->nb_made++] = p;
    return p;
}

const char *onnx_value_name(onnx_import *imp, const char *base, const char *suffix)
{
    size_t nb = strlen(base), ns = strlen(suffix);
    char *name = onnx_keep(imp, nb + ns + 1);
    if (!name)
        return NULL;
    memcpy(name, base, nb);
    memcpy(name + nb, suffix, ns + 1);
    return name;
}

onnx_value *onnx_value_find(const onnx_import *imp, const char *name)
{
    int32_t idx;
    return onnx_names_get(&imp->names, name, &idx) == 0 ? &imp->values[idx] : NULL;
}

/* prt_network_add_constant under an ONNX name (claimed if need be). The
 * error is the network's. */
static prt_status add_constant(onnx_import *imp, const char *name, const onnx_tensor *t,
                               int32_t *out_tensor)
{
    prt_status st =
        prt_network_add_constant(imp->net, name, t->dtype, &t->dims, t->data, out_tensor);
    if (st == PRT_ERR_ALREADY_EXISTS) {
        st = onnx_claim_name(imp, name);
        if (!st)
            st = prt_network_add_constant(imp->net, name, t->dtype, &t->dims, t->data,
                                          out_tensor);
    }
    return st;
}

prt_status onnx_value_tensor(onnx_import *imp, const char *name, int32_t *out_tensor)
{
    onnx_value *v = onnx_value_find(imp, name);
    if (!v)
        return onnx_error(PRT_ERR_NOT_FOUND, "nothing in the graph is named '%s'", name);
    if (v->tensor < 0 && v->init) {
        /* An initializer (or a Constant's tensor) becomes a constant on
         * first use, so an unused one of a type plugrt lacks does not stop
         * the import. */
        onnx_tensor t;
        char what[512];
        prt_status st;
        snprintf(what, sizeof what, "constant '%s'", name);
        st = onnx_tensor_load(v->init, imp->base_dir, what, &t);
        if (st)
            return st;
        st = add_constant(imp, name, &t, &v->tensor);
        onnx_tensor_free(&t);
        if (st) {
            v->tensor = -1;
            return onnx_error_wrap(st, "%s", what);
        }
    }
    if (v->tensor < 0)
        return onnx_error(PRT_ERR_INTERNAL, "'%s' is used before it is made", name);
    *out_tensor = v->tensor;
    return PRT_OK;
}

prt_status onnx_claim_name(onnx_import *imp, const char *name)
{
    const onnx_value *v;
    int32_t other;
    char alt[600];
    if (prt_network_find_tensor(imp->net, name, &other) != PRT_OK)
        return PRT_OK;
    v = onnx_value_find(imp, name);
    if (v && v->tensor == other)
        return onnx_error(PRT_ERR_ALREADY_EXISTS, "the name '%s' is defined twice", name);
    for (int k = 0; k < 1000; k++) {
        prt_status st;
        snprintf(alt, sizeof alt, "%s~%d", name, k);
        st = prt_network_set_tensor_name(imp->net, other, alt);
        /* Only a taken name is worth another try; out of memory is not. */
        if (st != PRT_ERR_ALREADY_EXISTS)
            return st ? onnx_error_wrap(st, "renaming tensor '%s' out of the way", name)
                      : PRT_OK;
    }
    return onnx_error(PRT_ERR_INTERNAL, "cannot rename tensor '%s' out of the way", name);
}

prt_status onnx_value_add_constant(onnx_import *imp, const char *name,
                                   const onnx_tensor *t, const char *label)
{
    int32_t id;
    prt_status st;
    if (!name[0])
        return PRT_OK; /* nobody can refer to it */
    st = add_constant(imp, name, t, &id);
    if (st)
        return onnx_error_wrap(st, "%s", label);
    return onnx_value_add(imp, name, ONNX_VALUE_CONSTANT, id, NULL, label);
}

/* ---- constants read at import --------------------------------------------- */

prt_status onnx_value_const_ints(onnx_import *imp, const char *name, const char *label,
                                 const char *what, int64_t *v, int32_t cap, int32_t *n)
{
    const onnx_value *val;
    onnx_tensor t;
    char where[600];
    size_t count;
    prt_status st;
    *n = -1;
    if (!name[0] || (val = onnx_value_find(imp, name)) == NULL)
        return PRT_OK;
    if (val->kind != ONNX_VALUE_CONSTANT || !val->init)
        return PRT_OK;
    snprintf(where, sizeof where, "%s: input '%s' (%s)", label, name, what);
    st = onnx_tensor_load(val->init, imp->base_dir, where, &t);
    if (st)
        return st;
    count = t.bytes / prt_dtype_size(t.dtype);
    if (count > (size_t)cap) {
        onnx_tensor_free(&t);
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s holds %zu values; at most %d are allowed", where, count,
                          (int)cap);
    }
    for (size_t i = 0; i < count; i++) {
        double f;
        if (!onnx_dtype_is_float(t.dtype)) {
            v[i] = onnx_tensor_int(&t, i);
            continue;
        }
        f = onnx_tensor_float(&t, i);
        if (!(f > -9.2e18 && f < 9.2e18)) {
            onnx_tensor_free(&t);
            return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: value %zu (%g) is not a usable integer", where, i, f);
        }
        v[i] = (int64_t)f;
    }
    onnx_tensor_free(&t);
    *n = (int32_t)count;
    return PRT_OK;
}

prt_status onnx_value_const_tensor(onnx_import *imp, const char *name, const char *what,
                                   onnx_tensor *out, int *found)
{
    const onnx_value *v = onnx_value_find(imp, name);
    *found = 0;
    memset(out, 0, sizeof *out);
    if (!v)
        return onnx_error(PRT_ERR_NOT_FOUND, "%s: nothing in the graph is named '%s'",
                          what, name);
    if (v->init) {
        *found = 1;
        return onnx_tensor_load(v->init, imp->base_dir, what, out);
    }
    if (v->kind != ONNX_VALUE_CONSTANT)
        return PRT_OK;
    for (size_t i = 0; i < imp->graph->n_node; i++) {
        const Onnx__NodeProto *n = imp->graph->node[i];
        const Onnx__AttributeProto *a;
        prt_status st;
        if (strcmp(onnx_str(n->op_type), "Constant") != 0 || n->n_output != 1 ||
            strcmp(onnx_str(n->output[0]), name) != 0 || n->n_attribute != 1)
            continue;
        a = n->attribute[0];
        if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT &&
            a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS &&
            a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
            a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
            return PRT_OK;
        st = onnx_tensor_from_attr(a, what, out);
        *found = st == PRT_OK;
        return st;
    }
    return PRT_OK;
}

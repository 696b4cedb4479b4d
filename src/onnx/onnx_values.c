/* The values of one import, by ONNX name: what defines each name (a graph
 * input, an initializer or Constant, a node's output) and which network
 * tensor holds it. The parser fills it with the graph's inputs and
 * initializers, the op importers with the nodes' outputs, and both read it;
 * it sits below them so that neither calls back up into the other. */
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

onnx_value *onnx_value_find(const onnx_import *imp, const char *name)
{
    int32_t idx;
    return onnx_names_get(&imp->names, name, &idx) == 0 ? &imp->values[idx] : NULL;
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
        st = onnx_add_constant(imp, name, &t, &v->tensor);
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

prt_status onnx_add_constant(onnx_import *imp, const char *name, const onnx_tensor *t,
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

/* Engine inspection: every tensor and layer as `plugrt inspect` shows them. */
#include <string.h>

#include "engine/engine_impl.h"

int32_t prt_engine_tensor_count(const prt_engine *engine)
{
    return engine ? engine->nb_tensors : 0;
}

prt_status prt_engine_get_tensor(const prt_engine *engine, int32_t index,
                                 prt_tensor_info *out)
{
    const eng_tensor *t;
    prt_tensor_info info;
    prt_status st = base_query_check(out ? out->struct_size : 0, sizeof info, out,
                                     "prt_engine_get_tensor", "prt_tensor_info");
    if (st)
        return st;
    if (!engine)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_get_tensor: NULL engine");
    if (index < 0 || index >= engine->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_tensor: index %d "
                          "outside 0..%d",
                          (int)index, (int)engine->nb_tensors - 1);
    t = &engine->tensors[index];
    memset(&info, 0, sizeof info);
    info.struct_size = out->struct_size;
    info.name = t->name;
    info.kind = t->input_index >= 0    ? PRT_TENSOR_INPUT
                : t->output_index >= 0 ? PRT_TENSOR_OUTPUT
                : t->const_offset >= 0 ? PRT_TENSOR_CONSTANT
                                       : PRT_TENSOR_ACTIVATION;
    info.dtype = t->dtype;
    info.format = t->format;
    info.dims.nb_dims = t->nb_dims;
    for (int32_t d = 0; d < t->nb_dims; d++) {
        const expr_node *x = &engine->exprs.nodes[t->dim_expr[d]];
        info.dims.d[d] = x->kind == EXPR_CONST ? x->imm : -1;
    }
    info.data_dependent_mask = t->dd_mask;
    info.size_id = t->size_id;
    info.producer = t->producer;
    info.offset = t->offset;
    info.max_bytes = t->max_bytes;
    *out = info;
    return PRT_OK;
}

prt_status prt_engine_get_layer(const prt_engine *engine, int32_t index,
                                prt_layer_info *out)
{
    const eng_layer *l;
    uint32_t size;
    prt_status st = base_query_check(out ? out->struct_size : 0, sizeof *out, out,
                                     "prt_engine_get_layer", "prt_layer_info");
    if (st)
        return st;
    if (!engine)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_get_layer: NULL engine");
    if (index < 0 || index >= engine->nb_layers)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_layer: index %d "
                          "outside 0..%d",
                          (int)index, (int)engine->nb_layers - 1);
    l = &engine->layers[index];
    size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    out->name = l->name;
    out->plugin_namespace = l->plugin_namespace;
    out->plugin_name = l->plugin_name;
    out->plugin_version = l->plugin_version;
    out->library = l->library;
    out->library_hash = l->library_hash;
    out->tactic = l->tactic;
    out->workspace = l->workspace;
    out->nb_inputs = l->nb_inputs;
    out->inputs = l->inputs;
    out->nb_outputs = l->nb_outputs;
    out->outputs = l->outputs;
    out->alias_input = l->alias_input;
    out->nb_fields = l->nb_fields;
    out->fields = l->fields;
    out->skipped = l->skipped;
    return PRT_OK;
}

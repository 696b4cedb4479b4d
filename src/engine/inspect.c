/* Engine inspection: every tensor and layer as `plugrt inspect` shows them. */
#include <string.h>

#include "engine/engine_impl.h"

int32_t prt_engine_tensor_count(const prt_engine *engine)
{
    return engine ? engine->nb_tensors : 0;
}

prt_status prt_engine_get_tensor_quant(const prt_engine *engine, int32_t index,
                                       prt_quant_desc *out)
{
    prt_status st = base_query_check(out ? out->struct_size : 0, sizeof *out, out,
                                     "prt_engine_get_tensor_quant", "prt_quant_desc");
    if (st)
        return st;
    if (!engine || index < 0 || index >= engine->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_tensor_quant: no tensor %d", (int)index);
    *out = engine->tensors[index].quant.d;
    out->struct_size = sizeof *out;
    out->abi_version = PRT_PLUGIN_ABI_VERSION;
    return PRT_OK;
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

prt_status prt_engine_get_size_tensor_bounds(const prt_engine *engine, int32_t profile,
                                             int32_t tensor, int64_t *out_opt,
                                             int64_t *out_max)
{
    const char *fn = "prt_engine_get_size_tensor_bounds";
    int32_t node = -1, size_id;
    size_t n, k;
    int64_t *lo;
    prt_status st;
    if (!engine)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "%s: NULL engine", fn);
    if (tensor < 0 || tensor >= engine->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "%s: tensor %d outside 0..%d", fn,
                          (int)tensor, (int)engine->nb_tensors - 1);
    if (profile < 0 || profile >= engine->nb_profiles)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: profile %d does not exist (the engine has %d)", fn,
                          (int)profile, (int)engine->nb_profiles);
    size_id = engine->tensors[tensor].size_id;
    if (size_id < 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: tensor '%s' is not a size tensor", fn,
                          engine->tensors[tensor].name);
    /* The size symbol's node: its bounds are the opt and upper nodes' it
     * was declared with (expr.h, EXPR_SIZE). */
    for (int32_t i = 0; i < engine->exprs.nb_nodes && node < 0; i++)
        if (engine->exprs.nodes[i].kind == EXPR_SIZE &&
            engine->exprs.nodes[i].imm == size_id)
            node = i;
    if (node < 0)
        return base_error(PRT_ERR_NOT_FOUND,
                          "%s: size tensor '%s' (size %d) has no symbol in the engine's "
                          "shape program",
                          fn, engine->tensors[tensor].name, (int)size_id);
    n = (size_t)engine->exprs.nb_nodes;
    lo = base_malloc(sizeof(int64_t) * 3 * n);
    if (!lo)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    k = (size_t)profile * (size_t)engine->nb_inputs;
    {
        expr_profile prof = {engine->nb_inputs,     engine->prof_min + k,
                             engine->prof_opt + k,  engine->prof_max + k,
                             engine->prof_vmin + k, engine->prof_vopt + k,
                             engine->prof_vmax + k};
        /* The same bounds engine_validate computed: they fail only for
         * memory. */
        st = expr_program_bounds(&engine->exprs, &prof, lo, lo + n, lo + 2 * n);
    }
    if (!st) {
        if (out_opt)
            *out_opt = lo[n + (size_t)node];
        if (out_max)
            *out_max = lo[2 * n + (size_t)node];
    } else {
        st = base_error_prefix(st, "%s: profile %d", fn, (int)profile);
    }
    base_free(lo);
    return st;
}

prt_status prt_engine_deserialize_unresolved(const void *bytes, size_t size,
                                             prt_engine **out)
{
    prt_engine *e = NULL;
    prt_status st;
    if (!bytes || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_deserialize_unresolved: NULL %s",
                          !bytes ? "bytes" : "out");
    st = engine_read(bytes, size, &e);
    if (!st)
        st = engine_derive(e);
    if (st) {
        engine_free(e);
        return st;
    }
    e->unresolved = 1;
    base_clear_error();
    *out = e;
    return PRT_OK;
}

int32_t prt_engine_is_unresolved(const prt_engine *engine)
{
    return engine ? engine->unresolved : 0;
}

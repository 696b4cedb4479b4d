/* Engine inspection: every tensor and layer as `plugrt inspect` shows them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "kernel/kernel.h"
#include "ops/op_workspace.h"

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
    /* Callers built before `kernel` was appended pass a struct that ends at
     * `skipped`. */
    prt_status st =
        base_query_check(out ? out->struct_size : 0, BASE_END_OF(prt_layer_info, skipped),
                         out, "prt_engine_get_layer", "prt_layer_info");
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
    memset(out, 0, size < sizeof *out ? size : sizeof *out);
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
    out->capture_safe = !l->no_capture;
    if (out->struct_size >= BASE_END_OF(prt_layer_info, kernel))
        out->kernel = l->kernel != NULL;
    if (out->struct_size >= BASE_END_OF(prt_layer_info, copy_to_device_bytes)) {
        out->device = l->device;
        engine_fallback_bytes(engine, l, &out->copy_to_host_bytes,
                              &out->copy_to_device_bytes);
    }
    if (out->struct_size >= BASE_END_OF(prt_layer_info, tactic_name)) {
        const char *t = op_tactic_name(l->plugin, l->device, l->tactic);
        out->tactic_name = t ? t : "";
    }
    return PRT_OK;
}

uint32_t prt_engine_get_precision_flags(const prt_engine *engine)
{
    return engine ? engine->precision : 0;
}

int32_t prt_engine_get_nb_kernel_layers(const prt_engine *engine)
{
    return engine ? engine->nb_kernels : 0;
}

static prt_status kernel_index(const prt_engine *engine, int32_t index, const char *fn)
{
    if (!engine)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "%s: NULL engine", fn);
    if (index < 0 || index >= engine->nb_kernels)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: kernel layer %d does not exist (the engine has %d)", fn,
                          (int)index, (int)engine->nb_kernels);
    return PRT_OK;
}

prt_status prt_engine_get_kernel_layer(const prt_engine *engine, int32_t index,
                                       prt_kernel_layer_info *out)
{
    const eng_kernel *k;
    prt_kernel_layer_info info;
    prt_status st =
        base_query_check(out ? out->struct_size : 0, sizeof info, out,
                         "prt_engine_get_kernel_layer", "prt_kernel_layer_info");
    if (!st)
        st = kernel_index(engine, index, "prt_engine_get_kernel_layer");
    if (st)
        return st;
    k = &engine->kernels[index];
    memset(&info, 0, sizeof info);
    info.struct_size = out->struct_size;
    info.layer = k->layer;
    info.hash = k->hash;
    info.nb_code = k->nb_code;
    for (int32_t c = 0; c < k->nb_code && c < PRT_KERNEL_INFO_MAX_CODE; c++) {
        info.code_kind[c] = k->code[c].kind;
        info.code_arch[c] = k->code[c].arch;
        info.code_size[c] = k->code[c].size;
    }
    info.nb_launches = k->nb_launches;
    *out = info;
    return PRT_OK;
}

typedef struct text_buf {
    char *p;
    size_t cap, len;
} text_buf;

static void put(text_buf *t, const char *fmt, ...) BASE_PRINTF(2, 3);
static void put(text_buf *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (t->len + 1 >= t->cap)
        return;
    va_start(ap, fmt);
    n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len = t->len + (size_t)n < t->cap ? t->len + (size_t)n : t->cap - 1;
}

/* Node i of a kernel's program as an infix expression (validated: operands
 * come before their node, so the recursion ends). */
static void put_node(text_buf *t, const eng_kernel *k, const int32_t *ranks_in, int32_t i,
                     int depth)
{
    static const char *const ops[] = {"+",  "*", "max",      "min",    "-",
                                      "==", "<", "floordiv", "ceildiv"};
    const expr_node *n;
    if (i < 0) {
        put(t, "0");
        return;
    }
    n = &k->exprs.nodes[i];
    if (depth > 64) {
        put(t, "...");
    } else if (n->kind == EXPR_CONST) {
        put(t, "%lld", (long long)n->imm);
    } else if (n->kind == EXPR_INPUT_DIM) {
        int32_t nb_in = ranks_in[0];
        put(t, "%s%d.d%d", n->a < nb_in ? "in" : "out",
            (int)(n->a < nb_in ? n->a : n->a - nb_in), (int)n->b);
    } else if (n->op >= 0 && n->op < 9 && (n->op == 2 || n->op == 3 || n->op >= 7)) {
        put(t, "%s(", ops[n->op]);
        put_node(t, k, ranks_in, n->a, depth + 1);
        put(t, ", ");
        put_node(t, k, ranks_in, n->b, depth + 1);
        put(t, ")");
    } else if (n->op >= 0 && n->op < 9) {
        put(t, "(");
        put_node(t, k, ranks_in, n->a, depth + 1);
        put(t, " %s ", ops[n->op]);
        put_node(t, k, ranks_in, n->b, depth + 1);
        put(t, ")");
    }
}

prt_status prt_engine_describe_kernel_launch(const prt_engine *engine, int32_t index,
                                             int32_t launch, char *buf, size_t cap)
{
    static const char *const kinds[PRT_KARG_COUNT] = {
        "in", "out", "workspace", "null", "int32", "int64", "float32", "float64", "dims"};
    const eng_kernel *k;
    const eng_kernel_launch *l;
    text_buf t = {buf, cap, 0};
    int32_t nb_in[1];
    prt_status st = kernel_index(engine, index, "prt_engine_describe_kernel_launch");
    if (st)
        return st;
    if (!buf || cap == 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_describe_kernel_launch: no buffer");
    k = &engine->kernels[index];
    if (launch < 0 || launch >= k->nb_launches)
        return base_error(
            PRT_ERR_INVALID_ARGUMENT,
            "prt_engine_describe_kernel_launch: launch %d does not exist (the "
            "kernel has %d)",
            (int)launch, (int)k->nb_launches);
    l = &k->launches[launch];
    nb_in[0] = engine->layers[k->layer].nb_inputs;
    buf[0] = '\0';
    put(&t, "%s grid (", l->entry);
    for (int d = 0; d < 3; d++) {
        put_node(&t, k, nb_in, l->grid[d], 0);
        put(&t, d < 2 ? ", " : ") block (");
    }
    for (int d = 0; d < 3; d++) {
        put_node(&t, k, nb_in, l->block[d], 0);
        put(&t, d < 2 ? ", " : ")");
    }
    put(&t, " shared ");
    put_node(&t, k, nb_in, l->shared_bytes, 0);
    put(&t, " args (");
    for (int32_t a = 0; a < l->nb_args; a++) {
        const eng_kernel_arg *g = &l->args[a];
        const char *kind =
            g->kind >= 0 && g->kind < PRT_KARG_COUNT ? kinds[g->kind] : "?";
        if (a)
            put(&t, ", ");
        if (g->kind == PRT_KARG_INPUT || g->kind == PRT_KARG_OUTPUT ||
            g->kind == PRT_KARG_DIMS) {
            put(&t, "%s%d", kind, (int)g->index);
        } else if (g->kind == PRT_KARG_NULL) {
            put(&t, "null");
        } else if (g->node >= 0) {
            put(&t, "%s ", kind);
            put_node(&t, k, nb_in, g->node, 0);
        } else if (g->kind == PRT_KARG_WORKSPACE) {
            put(&t, "workspace");
        } else {
            put(&t, "%s %.9g", kind, g->fvalue);
        }
    }
    put(&t, ")");
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

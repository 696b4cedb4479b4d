/*
 * Build phase 5: in-place aliasing, the memory plan and the engine itself.
 */
#include <string.h>

#include "builder/builder.h"
#include "kernel/kernel.h"
#include "ops/op_const.h"
#include "registry/registry.h"

/* ---- 5. aliasing, memory plan, assembly ---------------------------------- */

/* Layer li, a built-in view (op_is_view: output 0 is input 0's bytes under
 * other dims): output 0 takes input 0's memory where nothing else can see
 * it change, as an in-place output does below, and where both are LINEAR
 * of one dtype (CHW8 blocks of other dims are other bytes). The memory
 * item is sized for the larger of the two (assemble_tensors). Else the run
 * copies, as without it. */
static void bld_alias_view(bld *b, int32_t li)
{
    const prt_network *net = b->net;
    const net_layer *l = &net->layers[li];
    int32_t tin = l->inputs[0], tout = l->outputs[0], uses = 0;
    for (int32_t k = 0; k < l->nb_inputs; k++)
        uses += l->inputs[k] == tin;
    if (b->t[tin].dtype != b->t[tout].dtype || b->t[tin].format != PRT_FORMAT_LINEAR ||
        b->t[tout].format != PRT_FORMAT_LINEAR || bld_is_io(net, tin) ||
        bld_is_io(net, tout) || b->t[tin].last_use != li || uses != 1)
        return;
    b->l[li].alias_input[0] = 0;
    b->t[tout].root = b->t[tin].root;
}

prt_status bld_alias(bld *b)
{
    const prt_network *net = b->net;
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        bld_layer *bl = &b->l[li];
        bl->alias_input = base_malloc(sizeof(int32_t) * (size_t)l->nb_outputs);
        bl->alias_copy = base_calloc((size_t)l->nb_outputs, 1);
        if (!bl->alias_input || !bl->alias_copy)
            return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        for (int32_t o = 0; o < l->nb_outputs; o++) {
            int32_t in = BUILD_ENTRY(l->plugin, get_aliased_input)
                             ? BUILD_ENTRY(l->plugin, get_aliased_input)(l->plugin, o)
                             : -1;
            int32_t tin, tout = l->outputs[o], uses = 0;
            bl->alias_input[o] = -1;
            if (in < 0 && o == 0 && op_is_view(l->plugin)) {
                bld_alias_view(b, li);
                continue;
            }
            if (in < 0)
                continue;
            if (in >= l->nb_inputs)
                return base_error(PRT_ERR_PLUGIN,
                                  "layer '%s': output %d aliases input %d, but there "
                                  "are %d inputs",
                                  l->name, (int)o, (int)in, (int)l->nb_inputs);
            tin = l->inputs[in];
            if (b->t[tin].dtype != b->t[tout].dtype ||
                b->t[tin].format != b->t[tout].format ||
                b->t[tin].dims.nb_dims != b->t[tout].dims.nb_dims ||
                memcmp(b->t[tin].dims.d, b->t[tout].dims.d,
                       sizeof(prt_expr *) * (size_t)b->t[tin].dims.nb_dims) != 0)
                return base_error(PRT_ERR_PLUGIN,
                                  "layer '%s': output %d aliases input %d, but their "
                                  "dtypes, formats or shapes differ",
                                  l->name, (int)o, (int)in);
            for (int32_t k = 0; k < l->nb_inputs; k++)
                uses += l->inputs[k] == tin;
            /* An earlier output of this layer that already took the input's
             * memory counts as a use: two outputs in one buffer would
             * overwrite each other. */
            for (int32_t k = 0; k < o; k++)
                uses += bl->alias_input[k] == in && !bl->alias_copy[k];
            bl->alias_input[o] = in;
            /* Share memory only when nobody can see the input change: both
             * live in the arena, the input dies here and is read once. Else
             * the runtime copies the input into the output first. */
            if (!bld_is_io(net, tin) && !bld_is_io(net, tout) &&
                b->t[tin].last_use == li && uses == 1)
                b->t[tout].root = b->t[tin].root;
            else
                bl->alias_copy[o] = 1;
        }
    }
    return PRT_OK;
}

static prt_status tensor_max_bytes(const bld *b, int32_t id, int64_t *out)
{
    const bld_tensor *t = &b->t[id];
    int64_t best = 0;
    for (int32_t p = 0; p < b->nb_profiles; p++) {
        int64_t v = (int64_t)prt_dtype_size(t->dtype);
        for (int32_t d = 0; d < t->dims.nb_dims; d++) {
            int64_t hi =
                b->hi[(size_t)p * (size_t)b->nb_nodes + (size_t)expr_id(t->dims.d[d])];
            /* CHW8 (plugin.h): channels in whole blocks of eight. */
            if (t->format == PRT_FORMAT_CHW8 && d == 1 && hi >= 0)
                hi = (hi + 7) / 8 * 8;
            if (!base_mul_i64(v, hi, &v))
                return base_error(PRT_ERR_SHAPE, "tensor '%s' is too large to address",
                                  b->net->tensors[id].name);
        }
        if (v > best)
            best = v;
    }
    *out = best;
    return PRT_OK;
}

static prt_status bld_copy_fields(const net_layer *l, eng_layer *el)
{
    const prt_field_collection *fc;
    size_t total = 0, off = 0;
    base_clear_error();
    fc = l->plugin->vt->runtime->get_fields_to_serialize(l->plugin);
    if (!fc)
        return bld_plugin_fail(l, PRT_ERR_PLUGIN,
                               "get_fields_to_serialize returned NULL");
    if (fc->nb_fields < 0 || fc->nb_fields > 4096 || (fc->nb_fields && !fc->fields))
        return base_error(PRT_ERR_PLUGIN, "layer '%s': bad field collection", l->name);
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        size_t es = base_field_type_size(f->type);
        if (!f->name || es == 0 || f->length < 0 || f->length > ((int64_t)1 << 40) ||
            (f->length && !f->data))
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': serialized field %d is malformed", l->name,
                              (int)i);
        total += (strlen(f->name) + 1 + 7) / 8 * 8 + ((size_t)f->length * es + 7) / 8 * 8;
    }
    el->nb_fields = fc->nb_fields;
    el->fields = base_calloc((size_t)fc->nb_fields + 1, sizeof(prt_field));
    el->field_blob = base_calloc(total + 8, 1);
    el->field_blob_size = (int64_t)total;
    if (!el->fields || !el->field_blob)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        size_t es = base_field_type_size(f->type);
        size_t nl = strlen(f->name) + 1, nb = (size_t)f->length * es;
        memcpy(el->field_blob + off, f->name, nl);
        el->fields[i].name = (const char *)el->field_blob + off;
        off += (nl + 7) / 8 * 8;
        if (f->type == PRT_FIELD_DIMS) {
            /* Member by member, so padding bytes stay zero in the file. */
            const prt_dims *src = f->data;
            prt_dims *dst = (prt_dims *)(void *)(el->field_blob + off);
            for (int64_t k = 0; k < f->length; k++) {
                dst[k].nb_dims = src[k].nb_dims;
                memcpy(dst[k].d, src[k].d, sizeof dst[k].d);
            }
        } else if (nb) {
            memcpy(el->field_blob + off, f->data, nb);
        }
        el->fields[i].data = el->field_blob + off;
        el->fields[i].type = f->type;
        el->fields[i].length = f->length;
        off += (nb + 7) / 8 * 8;
    }
    return PRT_OK;
}

static char *dup_or_empty(const char *s)
{
    return base_strdup(s ? s : "");
}

/* The engine's arrays, I/O lists, profiles and expression program. */
static prt_status assemble_header(const bld *b, prt_engine *e)
{
    const prt_network *net = b->net;
    size_t np = (size_t)b->nb_profiles * (size_t)net->nb_inputs;
    e->device = b->cfg->device;
    e->precision = b->cfg->precision;
    if (b->dev->info(&e->built_on) != PRT_OK)
        return base_error_prefix(PRT_ERR_UNSUPPORTED, "build");
    e->tensors = base_calloc((size_t)net->nb_tensors, sizeof(eng_tensor));
    e->layers = base_calloc((size_t)net->nb_layers + 1, sizeof(eng_layer));
    /* engine_free walks the counted arrays: count only what exists. */
    e->nb_tensors = e->tensors ? net->nb_tensors : 0;
    e->nb_layers = e->layers ? net->nb_layers : 0;
    e->nb_inputs = net->nb_inputs;
    e->input_tensors = base_malloc(sizeof(int32_t) * (size_t)(net->nb_inputs + 1));
    e->nb_outputs = net->nb_outputs;
    e->output_tensors = base_malloc(sizeof(int32_t) * (size_t)(net->nb_outputs + 1));
    e->nb_profiles = b->nb_profiles;
    /* Zeroed, padding too: profiles are written to the file. */
    e->prof_min = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_opt = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_max = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_vmin = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_vopt = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_vmax = base_calloc(np + 1, sizeof(prt_dims));
    if (!e->tensors || !e->layers || !e->input_tensors || !e->output_tensors ||
        !e->prof_min || !e->prof_opt || !e->prof_max || !e->prof_vmin || !e->prof_vopt ||
        !e->prof_vmax)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    if (net->nb_inputs)
        memcpy(e->input_tensors, net->inputs, sizeof(int32_t) * (size_t)net->nb_inputs);
    memcpy(e->output_tensors, net->outputs, sizeof(int32_t) * (size_t)net->nb_outputs);
    for (size_t k = 0; k < np; k++) {
        e->prof_min[k].nb_dims = b->pmin[k].nb_dims;
        e->prof_opt[k].nb_dims = b->popt[k].nb_dims;
        e->prof_max[k].nb_dims = b->pmax[k].nb_dims;
        memcpy(e->prof_min[k].d, b->pmin[k].d, sizeof b->pmin[k].d);
        memcpy(e->prof_opt[k].d, b->popt[k].d, sizeof b->popt[k].d);
        memcpy(e->prof_max[k].d, b->pmax[k].d, sizeof b->pmax[k].d);
        /* Unused value slots are zero in b (calloc): copy whole. */
        e->prof_vmin[k] = b->pvmin[k];
        e->prof_vopt[k] = b->pvopt[k];
        e->prof_vmax[k] = b->pvmax[k];
    }
    e->nb_sizes = expr_pool_size_count(b->pool);
    return expr_program_copy(expr_pool_program(b->pool), &e->exprs);
}

/* Constants, each ENG_WEIGHTS_ALIGN-aligned in one weights block. */
static prt_status assemble_weights(const bld *b, prt_engine *e)
{
    const prt_network *net = b->net;
    int64_t used = 0;
    for (int32_t i = 0; i < net->nb_tensors; i++)
        if (net->tensors[i].const_bytes >= 0)
            e->weights_size += (net->tensors[i].const_bytes + ENG_WEIGHTS_ALIGN - 1) /
                               ENG_WEIGHTS_ALIGN * ENG_WEIGHTS_ALIGN;
    e->weights = base_aligned_alloc(ENG_ARENA_ALIGN, (size_t)e->weights_size + 1);
    if (e->weights)
        memset(e->weights, 0, (size_t)e->weights_size + 1);
    if (!e->weights)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "build: out of memory for %lld bytes of "
                          "constants",
                          (long long)e->weights_size);
    for (int32_t i = 0; i < net->nb_tensors; i++) {
        const net_tensor *nt = &net->tensors[i];
        if (nt->const_bytes < 0)
            continue;
        e->tensors[i].const_offset = used;
        if (nt->const_bytes)
            memcpy(e->weights + used, nt->const_data, (size_t)nt->const_bytes);
        used += (nt->const_bytes + ENG_WEIGHTS_ALIGN - 1) / ENG_WEIGHTS_ALIGN *
                ENG_WEIGHTS_ALIGN;
    }
    return PRT_OK;
}

/* Every tensor's record; the arena plan places one item per memory root
 * (tensors that share memory in place are one item). */
static prt_status assemble_tensors(const bld *b, prt_engine *e)
{
    const prt_network *net = b->net;
    plan_item *items = base_calloc((size_t)net->nb_tensors + 1, sizeof *items);
    int32_t *item_of = base_malloc(sizeof(int32_t) * ((size_t)net->nb_tensors + 1));
    int32_t nb_items = 0;
    prt_status st = PRT_OK;
    if (!items || !item_of)
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t i = 0; !st && i < net->nb_tensors; i++)
        item_of[i] = -1;
    for (int32_t i = 0; !st && i < net->nb_tensors; i++) {
        const net_tensor *nt = &net->tensors[i];
        const bld_tensor *t = &b->t[i];
        eng_tensor *et = &e->tensors[i];
        et->name = base_strdup(nt->name);
        if (!et->name) {
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
            break;
        }
        et->dtype = t->dtype;
        et->format = t->format;
        st = base_quant_copy(&et->quant, &nt->quant);
        if (st)
            break;
        et->nb_dims = t->dims.nb_dims;
        for (int32_t d = 0; d < t->dims.nb_dims; d++)
            et->dim_expr[d] = expr_id(t->dims.d[d]);
        et->input_index = nt->input_index;
        et->output_index = -1;
        for (int32_t k = 0; k < net->nb_outputs; k++)
            if (net->outputs[k] == i)
                et->output_index = k;
        et->size_id = t->size_id;
        et->producer = nt->producer;
        et->offset = -1;
        et->const_offset = -1;
        st = tensor_max_bytes(b, i, &et->max_bytes);
        if (!st && !bld_is_io(net, i)) {
            int32_t r = t->root;
            plan_item *it;
            if (item_of[r] < 0) {
                item_of[r] = nb_items++;
                items[item_of[r]].first = nt->producer;
                items[item_of[r]].last = nt->producer;
            }
            it = &items[item_of[r]];
            if (et->max_bytes > it->bytes)
                it->bytes = et->max_bytes;
            if (nt->producer < it->first)
                it->first = nt->producer;
            if (t->last_use > it->last)
                it->last = t->last_use;
            if (nt->producer > it->last)
                it->last = nt->producer;
        }
    }
    if (!st) {
        e->arena_size = plan_arena(items, nb_items);
        if (e->arena_size < 0)
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: memory plan failed");
    }
    for (int32_t i = 0; !st && i < net->nb_tensors; i++)
        if (!bld_is_io(net, i))
            e->tensors[i].offset = items[item_of[b->t[i].root]].offset;
    base_free(items);
    base_free(item_of);
    return st;
}

/* Layer li: identity, library, wiring, tactic, fields, and the engine's own
 * plugin (a clone of the built one, at its tactic). */
static prt_status assemble_layer(const bld *b, prt_engine *e, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    const bld_layer *bl = &b->l[li];
    eng_layer *el = &e->layers[li];
    const prt_plugin_creator *c = NULL;
    const char *lib = NULL;
    uint64_t hash = 0;
    const prt_plugin *p = l->plugin;
    prt_status st;
    if (b->reg && prt_registry_find_creator(b->reg, p->vt->core->plugin_namespace(p),
                                            p->vt->core->name(p), p->vt->core->version(p),
                                            &c) == PRT_OK)
        lib = prt_registry_get_creator_library(b->reg, c, &hash);
    base_clear_error();
    el->name = base_strdup(l->name);
    el->plugin_namespace = dup_or_empty(p->vt->core->plugin_namespace(p));
    el->plugin_name = dup_or_empty(p->vt->core->name(p));
    el->plugin_version = dup_or_empty(p->vt->core->version(p));
    el->library = dup_or_empty(lib);
    el->library_hash = hash;
    el->plugin_abi = c ? c->abi_version : p->vt->abi_version;
    el->device = bl->device;
    el->nb_inputs = l->nb_inputs;
    el->inputs = base_malloc(sizeof(int32_t) * (size_t)(l->nb_inputs + 1));
    el->nb_outputs = l->nb_outputs;
    el->outputs = base_malloc(sizeof(int32_t) * (size_t)l->nb_outputs);
    el->alias_input = base_malloc(sizeof(int32_t) * (size_t)l->nb_outputs);
    el->alias_copy = base_malloc((size_t)l->nb_outputs);
    el->tactic = bl->tactic;
    el->workspace = bl->workspace;
    el->host_dims = bl->host_dims;
    /* Asked once the layer's formats and tactic are chosen (plugin.h). */
    el->no_capture =
        BUILD_ENTRY(p, capture_safe) && !BUILD_ENTRY(p, capture_safe)(p, el->device);
    if (el->no_capture)
        base_log(PRT_SEV_INFO,
                 "layer '%s' (plugin %s) says its enqueue cannot be captured into a "
                 "graph: contexts of this engine run without one",
                 l->name, bld_plugin_label(p).s);
    if (!el->name || !el->plugin_namespace || !el->plugin_name || !el->plugin_version ||
        !el->library || !el->inputs || !el->outputs || !el->alias_input ||
        !el->alias_copy)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    memcpy(el->inputs, l->inputs, sizeof(int32_t) * (size_t)l->nb_inputs);
    memcpy(el->outputs, l->outputs, sizeof(int32_t) * (size_t)l->nb_outputs);
    memcpy(el->alias_input, bl->alias_input, sizeof(int32_t) * (size_t)l->nb_outputs);
    memcpy(el->alias_copy, bl->alias_copy, (size_t)l->nb_outputs);
    if (el->workspace > e->workspace_size)
        e->workspace_size = el->workspace;
    st = bld_copy_fields(l, el);
    if (st)
        return st;
    /* A kernel layer runs its kernel (moved into the engine by
     * bld_assemble), as a loader will run it: with no creator. */
    for (int32_t k = 0; k < e->nb_kernels; k++)
        if (e->kernels[k].layer == li)
            el->kernel = &e->kernels[k];
    if (el->kernel)
        return kernel_runner_create(el->kernel, el->name, el->nb_inputs, el->nb_outputs,
                                    &el->plugin);
    /* The engine's plugin comes back the way a loader will bring it back:
     * from the creator its key names and the fields it serialized. A key
     * that is not its creator's, or fields that do not recreate it, fail
     * here, at build, not when the saved engine is loaded. Without a
     * registry only built-ins can be looked up; others are cloned. */
    if (strcmp(el->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0 || b->reg) {
        if (strcmp(el->plugin_namespace, PRT_BUILTIN_NAMESPACE) != 0 && !c)
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': its plugin says it is %s::%s version %s, but "
                              "no creator in the registry has that key: a plugin's "
                              "name(), version() and plugin_namespace() must be its "
                              "creator's, since loading the engine looks the creator "
                              "up by them",
                              l->name, el->plugin_namespace, el->plugin_name,
                              el->plugin_version);
        st = engine_recreate_plugin(b->reg, el, li);
        /* PRT_ERR_PLUGIN whatever the creator said: the plugin contradicts
         * itself (its own fields do not make it), a bug of the plugin. */
        return st ? base_error_prefix(PRT_ERR_PLUGIN,
                                      "layer '%s': the plugin cannot be created again "
                                      "from the fields it serializes, as loading the "
                                      "engine will",
                                      l->name)
                  : PRT_OK;
    }
    el->plugin = p->vt->runtime->clone(p);
    if (!el->plugin)
        return bld_plugin_fail(l, PRT_ERR_PLUGIN, "clone failed");
    st = RUNTIME_ENTRY(el->plugin, set_tactic)
             ? RUNTIME_ENTRY(el->plugin, set_tactic)(el->plugin, el->tactic)
             : PRT_OK;
    return st ? bld_plugin_fail(l, st, "set_tactic failed") : PRT_OK;
}

/* The kernels of kernel layers move from the build into the engine. */
static prt_status assemble_kernels(bld *b, prt_engine *e)
{
    int32_t n = 0;
    for (int32_t li = 0; li < b->net->nb_layers; li++)
        n += b->l[li].kernel != NULL;
    if (!n)
        return PRT_OK;
    e->kernels = base_calloc((size_t)n, sizeof *e->kernels);
    if (!e->kernels)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t li = 0; li < b->net->nb_layers; li++)
        if (b->l[li].kernel) {
            e->kernels[e->nb_kernels++] = *b->l[li].kernel;
            memset(b->l[li].kernel, 0, sizeof *b->l[li].kernel);
        }
    return PRT_OK;
}

prt_status bld_assemble(bld *b, prt_engine **out)
{
    prt_engine *e = engine_alloc();
    prt_status st;
    if (!e)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    st = assemble_header(b, e);
    if (!st)
        st = assemble_tensors(b, e);
    if (!st)
        st = assemble_weights(b, e);
    if (!st)
        st = assemble_kernels(b, e);
    for (int32_t li = 0; !st && li < b->net->nb_layers; li++)
        st = assemble_layer(b, e, li);
    if (!st && b->cfg->embed_plugins)
        st = engine_embed_libraries(e);
    if (!st && (st = engine_validate(e)) != PRT_OK)
        st = base_error_prefix(PRT_ERR_INTERNAL, "the built engine is inconsistent");
    if (!st)
        st = engine_prepare(e);
    if (!st)
        engine_log_fallback(e);
    if (!st)
        st = engine_bind_constants(e);
    if (!st)
        engine_bind_precision(e);
    if (st) {
        engine_free(e);
        return st;
    }
    *out = e;
    return PRT_OK;
}

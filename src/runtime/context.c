/*
 * Execution contexts: creation, the setters and the shape queries. How a
 * run goes is in run.c, how shapes are evaluated in shapes.c;
 * context_impl.h says what a context holds.
 */
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "base/plugin_label.h"
#include "kernel/kernel.h"
#include "runtime/context_impl.h"

static int32_t find_io(const prt_context *c, const char *name)
{
    if (!name)
        return -1;
    for (int32_t i = 0; i < c->nb_io; i++)
        if (strcmp(c->e->tensors[ctx_io_tensor(c->e, i)].name, name) == 0)
            return i;
    return -1;
}

static prt_status no_such_io(const prt_context *c, const char *name, const char *what)
{
    (void)c;
    return base_error(PRT_ERR_NOT_FOUND,
                      "%s: the engine has no input or output named '%s'", what,
                      name ? name : "(null)");
}

void prt_context_destroy(prt_context *c)
{
    int32_t saved = -1;
    if (!c)
        return;
    /* From any thread: its handles and memory are freed on its device (a
     * device that cannot be made current leaves the calling thread's). */
    if (ctx_device_check(c->dev, c->device_index, 1, "prt_context_destroy", &saved))
        base_log(PRT_SEV_WARNING, "%s", prt_last_error());
    if (c->plugins)
        for (int32_t i = 0; i < c->e->nb_layers; i++)
            network_destroy_plugin(c->plugins[i]);
    ctx_resources_destroy(c);
    if (c->staging)
        for (int32_t i = 0; i < c->nb_io; i++)
            c->dev->free(c->staging[i]);
    if (c->graph && c->dev->graph_destroy)
        c->dev->graph_destroy(c->graph);
    ctx_profiler_events_free(c);
    base_pool_destroy(c->pool);
    ctx_sizes_destroy(c);
    if (!c->external_memory)
        c->dev->free(c->device_block);
    ctx_device_leave(c->dev, saved);
    base_aligned_free(c->host_mem);
    base_free(c->host_block);
    base_free(c);
}

/* Inputs whose profile fixes their shape need no set_input_shape. */
static void preset_static_inputs(prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        size_t k = (size_t)c->profile * (size_t)e->nb_inputs + (size_t)i;
        c->input_set[i] = memcmp(&e->prof_min[k], &e->prof_max[k], sizeof(prt_dims)) == 0;
        c->input_dims[i] = e->prof_max[k];
    }
    c->ran = 0;
}

/* The next `count` elements of `elem` bytes in the host block: a pointer
 * into `base`, or NULL while only measuring (base NULL). */
static void *carve(uint8_t *base, size_t *off, size_t count, size_t elem)
{
    const size_t align =
        sizeof(int64_t) > sizeof(void *) ? sizeof(int64_t) : sizeof(void *);
    size_t at = (*off + align - 1) / align * align;
    *off = at + (count + 1) * elem; /* +1: no array is empty */
    return base ? base + at : NULL;
}

/* Lays out every per-context host array in one block: measures it (base
 * NULL) or points the context's arrays into it. Returns the block's size. */
static size_t layout_host(prt_context *c, uint8_t *base)
{
    const prt_engine *e = c->e;
    size_t off = 0, nn = (size_t)e->exprs.nb_nodes, ns = (size_t)e->nb_sizes;
    size_t nl = (size_t)e->nb_layers, nio = (size_t)c->nb_io, nt = (size_t)e->nb_tensors;
    size_t max_io = 0, total_desc = 0;
    for (int32_t i = 0; i < e->nb_layers; i++) {
        size_t n = (size_t)e->layers[i].nb_inputs + (size_t)e->layers[i].nb_outputs;
        max_io = n > max_io ? n : max_io;
        total_desc += n;
    }
    c->plugins = carve(base, &off, nl, sizeof(prt_plugin *));
    c->input_dims = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->input_values = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->graph_values = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->input_set = carve(base, &off, (size_t)e->nb_inputs, 1);
    c->io_addr = carve(base, &off, nio, sizeof(void *));
    c->alloc = carve(base, &off, nio, sizeof(prt_output_allocator *));
    c->alloc_mem = carve(base, &off, nio, sizeof(void *));
    c->staging = carve(base, &off, nio, sizeof(void *));
    c->out_dims = carve(base, &off, (size_t)e->nb_outputs, sizeof(prt_dims));
    c->tptr = carve(base, &off, nt, sizeof(void *));
    c->values = carve(base, &off, nn, sizeof(int64_t));
    c->up_values = carve(base, &off, nn, sizeof(int64_t));
    c->known = carve(base, &off, nn, 1);
    c->up_known = carve(base, &off, nn, 1);
    c->size_values = carve(base, &off, ns, sizeof(int64_t));
    c->size_scratch = carve(base, &off, ns, sizeof(int64_t));
    c->size_known = carve(base, &off, ns, 1);
    c->known_scratch = carve(base, &off, ns, 1);
    c->size_node = carve(base, &off, ns, sizeof(int32_t));
    c->size_tensor = carve(base, &off, ns, sizeof(int32_t));
    c->size_layer = carve(base, &off, ns, sizeof(int32_t));
    c->dep_layer = carve(base, &off, nt, sizeof(int32_t));
    c->dims_off = carve(base, &off, nt, sizeof(int32_t));
    c->leaf_node = carve(base, &off, DEV_MAX_LEAVES, sizeof(int32_t));
    c->args = carve(base, &off, 1, sizeof(dev_size_args));
    c->descs = carve(base, &off, max_io, sizeof(prt_tensor_desc));
    c->in_ptrs = carve(base, &off, max_io, sizeof(void *));
    c->out_ptrs = carve(base, &off, max_io, sizeof(void *));
    c->last = carve(base, &off, total_desc, sizeof(prt_tensor_desc));
    c->last_off = carve(base, &off, nl, sizeof(int32_t));
    c->told = carve(base, &off, nl, 1);
    c->seen_dims = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->seen_values = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->layer_flags = carve(base, &off, nl, 1);
    c->seen_sizes = carve(base, &off, ns, sizeof(int64_t));
    return off;
}

/* Which layer's sizes each tensor's dims depend on (the last such layer),
 * and where each size lives. */
static prt_status map_sizes(prt_context *c)
{
    const prt_engine *e = c->e;
    const expr_program *p = &e->exprs;
    int32_t *node_layer = base_malloc(sizeof(int32_t) * ((size_t)p->nb_nodes + 1));
    if (!node_layer)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory");
    for (int32_t t = 0; t < e->nb_tensors; t++)
        if (e->tensors[t].size_id >= 0) {
            c->size_tensor[e->tensors[t].size_id] = t;
            c->size_layer[e->tensors[t].size_id] = e->tensors[t].producer;
        }
    for (int32_t i = 0; i < p->nb_nodes; i++) {
        const expr_node *x = &p->nodes[i];
        node_layer[i] = -1;
        if (x->kind == EXPR_SIZE) {
            c->size_node[x->imm] = i;
            node_layer[i] = c->size_layer[x->imm];
        } else if (x->kind == EXPR_OP) {
            int32_t a = node_layer[x->a], b = node_layer[x->b];
            node_layer[i] = a > b ? a : b;
        }
    }
    for (int32_t t = 0; t < e->nb_tensors; t++) {
        c->dep_layer[t] = -1;
        for (int32_t d = 0; d < e->tensors[t].nb_dims; d++)
            if (node_layer[e->tensors[t].dim_expr[d]] > c->dep_layer[t])
                c->dep_layer[t] = node_layer[e->tensors[t].dim_expr[d]];
    }
    base_free(node_layer);
    for (int32_t li = 0; li < e->nb_layers; li++) {
        const eng_layer *l = &e->layers[li];
        uint8_t f = engine_layer_on_host(e, l) ? 0 : LAYER_STEADY;
        for (int32_t k = 0; k < l->nb_inputs; k++)
            if (c->dep_layer[l->inputs[k]] >= 0)
                f |= LAYER_SIZED;
        for (int32_t o = 0; o < l->nb_outputs; o++) {
            if (c->dep_layer[l->outputs[o]] >= 0)
                f |= LAYER_SIZED;
            if (e->tensors[l->outputs[o]].size_id >= 0)
                f = (f & (uint8_t)~LAYER_STEADY) | LAYER_WRITES_SIZES;
        }
        c->layer_flags[li] = f;
    }
    return PRT_OK;
}

/* Points arena tensors into the arena (and constants at the weights). */
static void point_tensors(prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_tensors; i++) {
        if (e->tensors[i].offset >= 0)
            c->tptr[i] = c->arena ? c->arena + e->tensors[i].offset : NULL;
        else if (e->tensors[i].const_offset >= 0)
            c->tptr[i] = e->weights_dev + e->tensors[i].const_offset;
    }
}

static size_t workspace_offset(const prt_engine *e)
{
    return ((size_t)e->arena_size + DEV_ALIGN - 1) / DEV_ALIGN * DEV_ALIGN;
}

/* Host scratch (one block) and, unless the caller gives it, device memory
 * (arena + workspace, one allocation on the engine's device). */
static prt_status alloc_memory(prt_context *c)
{
    const prt_engine *e = c->e;
    size_t host = layout_host(c, NULL);
    prt_status st;
    c->host_block = base_calloc(1, host);
    if (!c->host_block)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_context_create: out of memory "
                          "(%zu bytes of host scratch)",
                          host);
    layout_host(c, c->host_block);
    if (!c->external_memory) {
        st = c->dev->alloc(workspace_offset(e) + (size_t)e->workspace_size,
                           (void **)&c->device_block);
        if (st)
            return base_error_prefix(PRT_ERR_OUT_OF_MEMORY,
                                     "prt_context_create: arena %lld "
                                     "bytes, workspace %lld",
                                     (long long)e->arena_size,
                                     (long long)e->workspace_size);
        c->arena = c->device_block;
        c->workspace = c->device_block + workspace_offset(e);
    }
    if (e->host_size > 0) {
        c->host_mem = base_aligned_alloc(ENG_ARENA_ALIGN, (size_t)e->host_size);
        if (!c->host_mem)
            return base_error(PRT_ERR_OUT_OF_MEMORY,
                              "prt_context_create: out of memory (%lld bytes of host "
                              "memory for the layers on the CPU)",
                              (long long)e->host_size);
    }
    for (int32_t i = 0, off = 0; i < e->nb_layers; i++) {
        c->last_off[i] = off;
        off += e->layers[i].nb_inputs + e->layers[i].nb_outputs;
    }
    point_tensors(c);
    return map_sizes(c);
}

/* One plugin clone per layer (attach_to_context), at the engine's tactic. */
static prt_status attach_plugins(prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_layers; i++) {
        const eng_layer *l = &e->layers[i];
        prt_status st;
        if (!l->plugin)
            return base_error(PRT_ERR_STATE, "layer '%s' has no plugin", l->name);
        base_clear_error();
        /* The engine's plugin is shared by every context of the engine,
         * which threads may create at once; the lock keeps plugin.h's
         * promise that one object is never called concurrently. */
        pthread_mutex_lock(e->plugin_lock);
        c->plugins[i] =
            l->plugin->vt->runtime->attach_to_context(l->plugin, ctx_resources_for(c, i));
        pthread_mutex_unlock(e->plugin_lock);
        st = c->plugins[i] ? network_check_plugin(c->plugins[i], 0) : PRT_ERR_PLUGIN;
        if (st == PRT_OK && RUNTIME_ENTRY(c->plugins[i], set_tactic))
            st = RUNTIME_ENTRY(c->plugins[i], set_tactic)(c->plugins[i], l->tactic);
        else if (st == PRT_OK && l->tactic != 0)
            st = base_error(PRT_ERR_PLUGIN,
                            "the plugin has no set_tactic but the "
                            "engine chose tactic %d",
                            (int)l->tactic);
        if (st) {
            if (!prt_last_error()[0])
                base_error(PRT_ERR_PLUGIN, "no message from the plugin");
            return base_error_prefix(
                base_plugin_status(st),
                "layer '%s' (plugin %s): attach_to_context failed", l->name,
                base_plugin_label(l->plugin_namespace, l->plugin_name).s);
        }
    }
    return PRT_OK;
}

prt_status prt_context_create(const prt_engine *e, prt_context **out)
{
    return prt_context_create_with_options(e, NULL, out);
}

prt_status prt_context_create_with_options(const prt_engine *e,
                                           const prt_context_options *opts,
                                           prt_context **out)
{
    prt_context *c;
    int64_t limit = 0, need;
    int32_t threads = 0, switch_device = 0, saved = -1;
    prt_status st;
    if (!e || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_create: NULL argument");
    if (opts && opts->struct_size < BASE_END_OF(prt_context_options, external_memory))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_create_with_options: "
                          "options.struct_size %u is too small",
                          (unsigned)opts->struct_size);
    if (opts)
        limit = opts->memory_limit;
    /* Fields appended later are read only when the caller's struct has
     * them (plugrt.h). */
    if (opts && opts->struct_size >= BASE_END_OF(prt_context_options, threads))
        threads = opts->threads;
    if (opts && opts->struct_size >= BASE_END_OF(prt_context_options, switch_device))
        switch_device = opts->switch_device != 0;
    if (threads < 0 || threads > BASE_MAX_THREADS)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_create_with_options: threads is %d, not in "
                          "0..%d (0: the default, %d here)",
                          (int)threads, BASE_MAX_THREADS, (int)base_cpu_count());
    if (limit < 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_create_with_options: "
                          "negative memory limit %lld",
                          (long long)limit);
    need = prt_engine_context_memory_size(e);
    if (limit > 0 && need > limit && !(opts && opts->external_memory))
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "the engine needs %lld bytes of context "
                          "memory (arena %lld, workspace %lld), over the limit of %lld",
                          (long long)need, (long long)e->arena_size,
                          (long long)e->workspace_size, (long long)limit);
    if (e->unresolved)
        return base_error(PRT_ERR_STATE,
                          "prt_context_create: the engine was loaded for inspection "
                          "only (prt_engine_deserialize_unresolved): it has no plugins "
                          "to run; load it with prt_engine_deserialize");
    if (!e->dev)
        return base_error(PRT_ERR_STATE, "prt_context_create: the engine has no device");
    if (e->nb_kernels > 0 && !e->kernels_allowed &&
        !(opts &&
          opts->struct_size >= BASE_END_OF(prt_context_options, allow_embedded_kernels) &&
          opts->allow_embedded_kernels)) {
        const eng_layer *l = &e->layers[e->kernels[0].layer];
        return base_error(PRT_ERR_UNSUPPORTED,
                          "prt_context_create: the engine holds %d kernel layer%s (the "
                          "first: '%s', from plugin %s), GPU code that came with the "
                          "engine file and runs as it is; allow it only for engines you "
                          "trust (prt_context_options.allow_embedded_kernels, "
                          "PRT_EMBEDDED_KERNELS when loading it, plugrt run "
                          "--allow-embedded-kernels)",
                          (int)e->nb_kernels, e->nb_kernels == 1 ? "" : "s", l->name,
                          base_plugin_label(l->plugin_namespace, l->plugin_name).s);
    }
    /* Its memory goes where the engine's is. */
    st = ctx_device_check(e->dev, e->device_index, switch_device, "prt_context_create",
                          &saved);
    if (st)
        return st;
    c = base_calloc(1, sizeof *c);
    if (!c) {
        ctx_device_leave(e->dev, saved);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory");
    }
    c->e = e;
    c->dev = e->dev;
    c->device_index = e->device_index;
    c->switch_device = switch_device;
    c->nb_io = e->nb_inputs + e->nb_outputs;
    c->external_memory = opts && opts->external_memory;
    c->memory_limit = limit;
    /* A device with streams runs the layers' work itself: its contexts
     * get no worker threads unless asked for. */
    c->threads = threads ? threads : e->dev->host_visible ? base_cpu_count() : 1;
    st = alloc_memory(c);
    if (!st && c->threads > 1) {
        st = base_pool_create(c->threads, &c->pool);
        if (st)
            base_error_prefix(st, "prt_context_create");
        else
            c->threads = base_pool_threads(c->pool);
    }
    if (!st)
        st = ctx_sizes_create(c);
    if (!st)
        st = ctx_resources_create(c);
    if (!st)
        st = attach_plugins(c);
    if (st) {
        prt_context_destroy(c);
        ctx_device_leave(e->dev, saved);
        return st;
    }
    preset_static_inputs(c);
    ctx_device_leave(e->dev, saved);
    *out = c;
    return PRT_OK;
}

int32_t prt_default_thread_count(void)
{
    return base_cpu_count();
}

int32_t prt_context_get_threads(const prt_context *c)
{
    return c ? c->threads : 0;
}

void ctx_profiler_events_free(prt_context *c)
{
    if (!c->prof_events)
        return;
    for (int32_t i = 0; i <= c->e->nb_layers; i++)
        if (c->prof_events[i])
            c->dev->event_destroy(c->prof_events[i]);
    base_free(c->prof_events);
    c->prof_events = NULL;
}

prt_status prt_context_set_profiler(prt_context *c, prt_profiler_fn fn, void *user)
{
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_profiler: NULL context");
    /* A device with streams is timed by events around each layer; they
     * are made here so that enqueue allocates nothing. */
    if (fn && !c->dev->host_visible && !c->prof_events) {
        int32_t n = c->e->nb_layers + 1;
        c->prof_events = base_calloc((size_t)n, sizeof *c->prof_events);
        if (!c->prof_events)
            return base_error(PRT_ERR_OUT_OF_MEMORY,
                              "prt_context_set_profiler: out of memory");
        for (int32_t i = 0; i < n; i++) {
            prt_status st = c->dev->event_create(&c->prof_events[i]);
            if (st) {
                c->prof_events[i] = NULL;
                ctx_profiler_events_free(c);
                return base_error_prefix(st, "prt_context_set_profiler: events");
            }
        }
    }
    if (!fn)
        ctx_profiler_events_free(c);
    c->profiler = fn;
    c->profiler_user = fn ? user : NULL;
    return PRT_OK;
}

prt_status prt_context_set_memory(prt_context *c, void *memory, int64_t size)
{
    const prt_engine *e;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_memory: NULL context");
    e = c->e;
    if (!c->external_memory)
        return base_error(PRT_ERR_STATE,
                          "prt_context_set_memory: the context allocated "
                          "its own memory (create it with options.external_memory = 1)");
    if (!memory || size < prt_engine_context_memory_size(e))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_memory: %lld bytes "
                          "at %p; the engine needs %lld (prt_engine_context_memory_size)",
                          (long long)size, memory,
                          (long long)prt_engine_context_memory_size(e));
    if ((uintptr_t)memory % DEV_ALIGN)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_memory: %p is not "
                          "aligned to %d bytes",
                          memory, DEV_ALIGN);
    c->device_block = memory;
    c->arena = memory;
    c->workspace = c->device_block + workspace_offset(e);
    point_tensors(c);
    c->gen++;
    return PRT_OK;
}

prt_status prt_context_set_profile(prt_context *c, int32_t profile)
{
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_profile: NULL context");
    if (profile < 0 || profile >= c->e->nb_profiles)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "profile %d does not exist (the engine "
                          "has %d)",
                          (int)profile, (int)c->e->nb_profiles);
    c->profile = profile;
    preset_static_inputs(c);
    c->seen_valid = 0;
    c->gen++;
    return PRT_OK;
}

prt_status prt_context_set_input_shape(prt_context *c, const char *name,
                                       const prt_dims *dims)
{
    const prt_engine *e;
    int32_t io;
    size_t k;
    char got[160], lo[160], hi[160];
    if (!c || !dims)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_input_shape: NULL argument");
    e = c->e;
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "set_input_shape");
    if (io >= e->nb_inputs)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "set_input_shape: '%s' is an output, not an input", name);
    k = (size_t)c->profile * (size_t)e->nb_inputs + (size_t)io;
    base_dims_str(dims, got, sizeof got);
    base_dims_str(&e->prof_min[k], lo, sizeof lo);
    base_dims_str(&e->prof_max[k], hi, sizeof hi);
    if (dims->nb_dims != e->prof_min[k].nb_dims)
        return base_error(PRT_ERR_SHAPE,
                          "input '%s': shape %s has rank %d, the input has "
                          "rank %d",
                          name, got, (int)dims->nb_dims, (int)e->prof_min[k].nb_dims);
    for (int32_t d = 0; d < dims->nb_dims; d++)
        if (dims->d[d] < e->prof_min[k].d[d] || dims->d[d] > e->prof_max[k].d[d])
            return base_error(
                PRT_ERR_SHAPE,
                "input '%s': shape %s is outside profile %d (min %s, max %s): "
                "dim %d is %lld, allowed %lld..%lld",
                name, got, (int)c->profile, lo, hi, (int)d, (long long)dims->d[d],
                (long long)e->prof_min[k].d[d], (long long)e->prof_max[k].d[d]);
    c->input_dims[io] = *dims;
    c->input_set[io] = 1;
    c->ran = 0;
    c->gen++;
    return PRT_OK;
}

prt_status prt_context_set_tensor_address(prt_context *c, const char *name, void *address)
{
    int32_t io;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_tensor_address: NULL context");
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "set_tensor_address");
    c->io_addr[io] = address;
    c->gen++;
    return PRT_OK;
}

prt_status prt_context_set_output_allocator(prt_context *c, const char *name,
                                            const prt_output_allocator *alloc)
{
    int32_t io;
    const eng_tensor *t;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_set_output_allocator: NULL context");
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "set_output_allocator");
    if (io < c->e->nb_inputs)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "set_output_allocator: '%s' is an input", name);
    if (alloc && (alloc->struct_size < sizeof *alloc || !alloc->reallocate))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "set_output_allocator: '%s': allocator lacks reallocate", name);
    t = &c->e->tensors[ctx_io_tensor(c->e, io)];
    /* Data-dependent outputs are written to staging memory of the upper-bound
     * size, then handed to the allocator at the final size. */
    if (alloc && !c->staging[io] && c->dep_layer[ctx_io_tensor(c->e, io)] >= 0 &&
        c->dev->alloc((size_t)t->max_bytes, &c->staging[io]) != PRT_OK)
        return base_error_prefix(PRT_ERR_OUT_OF_MEMORY, "set_output_allocator: '%s'",
                                 name);
    /* `current` is memory this allocator handed out; another allocator
     * starts with none. */
    if (alloc != c->alloc[io])
        c->alloc_mem[io] = NULL;
    c->alloc[io] = alloc;
    c->gen++;
    return PRT_OK;
}

prt_status ctx_resolve_outputs(prt_context *c)
{
    const prt_engine *e = c->e;
    if (c->sizes_pending) {
        prt_status st = ctx_sizes_fetch(c, e->nb_layers, c->last_stream);
        if (st)
            return st;
        c->sizes_pending = 0;
    }
    for (int32_t o = 0; o < e->nb_outputs; o++)
        if (!ctx_tensor_dims(e, e->output_tensors[o], c->values, c->known,
                             &c->out_dims[o]))
            return base_error(PRT_ERR_INTERNAL,
                              "output '%s': shape unknown after the run",
                              e->tensors[e->output_tensors[o]].name);
    return PRT_OK;
}

prt_status prt_context_get_tensor_shape(prt_context *c, const char *name, prt_dims *out)
{
    int32_t io;
    prt_status st;
    if (!c || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_get_tensor_shape: NULL argument");
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "get_tensor_shape");
    if (io < c->e->nb_inputs) {
        if (!c->input_set[io])
            return base_error(PRT_ERR_STATE, "input '%s' has no shape yet", name);
        *out = c->input_dims[io];
        return PRT_OK;
    }
    /* The last run's shapes, unless a shape input holds other values now
     * (its caller wrote new ones, with no new input shape). */
    if (c->ran && !ctx_shape_values_changed(c)) {
        /* After a device-side run the sizes are on the device: wait for the
         * run's stream and read them (plugrt.h). */
        if (c->sizes_pending) {
            st = ctx_resolve_outputs(c);
            if (st)
                return st;
        }
        *out = c->out_dims[io - c->e->nb_inputs];
        return PRT_OK;
    }
    st = ctx_prepare_shapes(c, 1);
    if (st)
        return st;
    if (!ctx_tensor_dims(c->e, ctx_io_tensor(c->e, io), c->up_values, c->up_known, out))
        return base_error(PRT_ERR_INTERNAL, "output '%s': shape cannot be bounded", name);
    return PRT_OK;
}

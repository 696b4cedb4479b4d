/*
 * Execution contexts on the CPU.
 *
 * Everything a run needs is allocated when the context is created (the arena
 * at the largest profile, the workspace, plugin clones, expression scratch),
 * so enqueue allocates nothing. A run evaluates the engine's shape program
 * from the input shapes; sizes that depend on data are unknown until their
 * producer has run, so outputs with such dims get their upper bound, and the
 * program is evaluated again as each size tensor is read.
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "network/network.h"

struct prt_context {
    const prt_engine *e;
    const dev_ops *dev; /* the engine's device */
    int32_t profile;
    int32_t nb_io;
    uint8_t *host_block; /* every host array below, one allocation */
    prt_plugin **plugins; /* per layer, owned */

    prt_dims *input_dims;   /* per input */
    prt_dims *input_values; /* per input: a shape input's values */
    uint8_t *input_set;
    void **io_addr;                       /* per I/O index */
    const prt_output_allocator **alloc;   /* per I/O index */
    void **alloc_mem;                     /* per I/O index: what the
                                             allocator last returned, passed
                                             back as `current` (plugrt.h) */
    void **staging;                       /* per I/O index: device memory for
                                             data-dependent outputs with an
                                             allocator */
    prt_dims *out_dims;                   /* per output: dims after a run */
    int ran;                              /* out_dims valid for the shapes */

    uint8_t *device_block; /* arena then workspace, device memory */
    uint8_t *arena;
    uint8_t *workspace;
    void **tptr; /* per tensor: memory for this run */

    int64_t *values, *up_values, *size_values, *size_scratch;
    uint8_t *known, *up_known, *size_known, *known_scratch;
    int32_t *size_node; /* per size id: its SIZE node */

    prt_tensor_desc *descs;  /* scratch: one layer's inputs then outputs */
    const void **in_ptrs;
    void **out_ptrs;
    prt_tensor_desc *last;   /* per layer, at last_off: shapes last told */
    int32_t *last_off;
    uint8_t *told;           /* per layer: on_shape_change called once */
};

static int32_t io_tensor(const prt_engine *e, int32_t io)
{
    return io < e->nb_inputs ? e->input_tensors[io] : e->output_tensors[io - e->nb_inputs];
}

static int32_t find_io(const prt_context *c, const char *name)
{
    if (!name)
        return -1;
    for (int32_t i = 0; i < c->nb_io; i++)
        if (strcmp(c->e->tensors[io_tensor(c->e, i)].name, name) == 0)
            return i;
    return -1;
}

static prt_status no_such_io(const prt_context *c, const char *name, const char *what)
{
    return base_error(PRT_ERR_NOT_FOUND, "%s: the engine has no input or output named '%s'",
                      what, name ? name : "(null)");
}

void prt_context_destroy(prt_context *c)
{
    if (!c)
        return;
    if (c->plugins)
        for (int32_t i = 0; i < c->e->nb_layers; i++)
            if (c->plugins[i])
                c->plugins[i]->vt->runtime->destroy(c->plugins[i]);
    if (c->staging)
        for (int32_t i = 0; i < c->nb_io; i++)
            c->dev->free(c->staging[i]);
    c->dev->free(c->device_block);
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
    const size_t align = sizeof(int64_t) > sizeof(void *) ? sizeof(int64_t) : sizeof(void *);
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
    size_t nl = (size_t)e->nb_layers, nio = (size_t)c->nb_io;
    size_t max_io = 0, total_desc = 0;
    for (int32_t i = 0; i < e->nb_layers; i++) {
        size_t n = (size_t)e->layers[i].nb_inputs + (size_t)e->layers[i].nb_outputs;
        max_io = n > max_io ? n : max_io;
        total_desc += n;
    }
    c->plugins = carve(base, &off, nl, sizeof(prt_plugin *));
    c->input_dims = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->input_values = carve(base, &off, (size_t)e->nb_inputs, sizeof(prt_dims));
    c->input_set = carve(base, &off, (size_t)e->nb_inputs, 1);
    c->io_addr = carve(base, &off, nio, sizeof(void *));
    c->alloc = carve(base, &off, nio, sizeof(prt_output_allocator *));
    c->alloc_mem = carve(base, &off, nio, sizeof(void *));
    c->staging = carve(base, &off, nio, sizeof(void *));
    c->out_dims = carve(base, &off, (size_t)e->nb_outputs, sizeof(prt_dims));
    c->tptr = carve(base, &off, (size_t)e->nb_tensors, sizeof(void *));
    c->values = carve(base, &off, nn, sizeof(int64_t));
    c->up_values = carve(base, &off, nn, sizeof(int64_t));
    c->known = carve(base, &off, nn, 1);
    c->up_known = carve(base, &off, nn, 1);
    c->size_values = carve(base, &off, ns, sizeof(int64_t));
    c->size_scratch = carve(base, &off, ns, sizeof(int64_t));
    c->size_known = carve(base, &off, ns, 1);
    c->known_scratch = carve(base, &off, ns, 1);
    c->size_node = carve(base, &off, ns, sizeof(int32_t));
    c->descs = carve(base, &off, max_io, sizeof(prt_tensor_desc));
    c->in_ptrs = carve(base, &off, max_io, sizeof(void *));
    c->out_ptrs = carve(base, &off, max_io, sizeof(void *));
    c->last = carve(base, &off, total_desc, sizeof(prt_tensor_desc));
    c->last_off = carve(base, &off, nl, sizeof(int32_t));
    c->told = carve(base, &off, nl, 1);
    return off;
}

/* Host scratch (one block) and device memory (arena + workspace, one
 * allocation on the engine's device); tensors point into them. */
static prt_status alloc_memory(prt_context *c)
{
    const prt_engine *e = c->e;
    size_t host = layout_host(c, NULL);
    size_t ws_off = ((size_t)e->arena_size + DEV_ALIGN - 1) / DEV_ALIGN * DEV_ALIGN;
    prt_status st;
    c->host_block = base_calloc(1, host);
    if (!c->host_block)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory "
                          "(%zu bytes of host scratch)", host);
    layout_host(c, c->host_block);
    st = c->dev->alloc(ws_off + (size_t)e->workspace_size, (void **)&c->device_block);
    if (st)
        return base_error_prefix(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: arena %lld "
                                 "bytes, workspace %lld", (long long)e->arena_size,
                                 (long long)e->workspace_size);
    c->arena = c->device_block;
    c->workspace = c->device_block + ws_off;
    for (int32_t i = 0, off = 0; i < e->nb_layers; i++) {
        c->last_off[i] = off;
        off += e->layers[i].nb_inputs + e->layers[i].nb_outputs;
    }
    for (int32_t i = 0; i < e->exprs.nb_nodes; i++)
        if (e->exprs.nodes[i].kind == EXPR_SIZE)
            c->size_node[e->exprs.nodes[i].imm] = i;
    for (int32_t i = 0; i < e->nb_tensors; i++) {
        if (e->tensors[i].offset >= 0)
            c->tptr[i] = c->arena + e->tensors[i].offset;
        else if (e->tensors[i].const_offset >= 0)
            c->tptr[i] = e->weights_dev + e->tensors[i].const_offset;
    }
    return PRT_OK;
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
        c->plugins[i] = l->plugin->vt->runtime->attach_to_context(l->plugin, NULL);
        pthread_mutex_unlock(e->plugin_lock);
        st = c->plugins[i] ? network_check_plugin(c->plugins[i], 0) : PRT_ERR_PLUGIN;
        if (st == PRT_OK && RUNTIME_ENTRY(c->plugins[i], set_tactic))
            st = RUNTIME_ENTRY(c->plugins[i], set_tactic)(c->plugins[i], l->tactic);
        else if (st == PRT_OK && l->tactic != 0)
            st = base_error(PRT_ERR_PLUGIN, "the plugin has no set_tactic but the "
                            "engine chose tactic %d", (int)l->tactic);
        if (st) {
            if (!prt_last_error()[0])
                base_error(PRT_ERR_PLUGIN, "no message from the plugin");
            return base_error_prefix(PRT_ERR_PLUGIN, "layer '%s': attach_to_context failed",
                                     l->name);
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
    prt_status st;
    if (!e || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_create: NULL argument");
    if (opts && opts->struct_size < BASE_END_OF(prt_context_options, memory_limit))
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_create_with_options: "
                          "options.struct_size %u is too small", (unsigned)opts->struct_size);
    if (opts)
        limit = opts->memory_limit;
    if (limit < 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_create_with_options: "
                          "negative memory limit %lld", (long long)limit);
    need = prt_engine_context_memory_size(e);
    if (limit > 0 && need > limit)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "the engine needs %lld bytes of context "
                          "memory (arena %lld, workspace %lld), over the limit of %lld",
                          (long long)need, (long long)e->arena_size,
                          (long long)e->workspace_size, (long long)limit);
    if (!e->dev)
        return base_error(PRT_ERR_STATE, "prt_context_create: the engine has no device");
    c = base_calloc(1, sizeof *c);
    if (!c)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory");
    c->e = e;
    c->dev = e->dev;
    c->nb_io = e->nb_inputs + e->nb_outputs;
    st = alloc_memory(c);
    if (!st)
        st = attach_plugins(c);
    if (st) {
        prt_context_destroy(c);
        return st;
    }
    preset_static_inputs(c);
    *out = c;
    return PRT_OK;
}

prt_status prt_context_set_profile(prt_context *c, int32_t profile)
{
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_set_profile: NULL context");
    if (profile < 0 || profile >= c->e->nb_profiles)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "profile %d does not exist (the engine "
                          "has %d)", (int)profile, (int)c->e->nb_profiles);
    c->profile = profile;
    preset_static_inputs(c);
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
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_set_input_shape: NULL argument");
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
        return base_error(PRT_ERR_SHAPE, "input '%s': shape %s has rank %d, the input has "
                          "rank %d", name, got, (int)dims->nb_dims,
                          (int)e->prof_min[k].nb_dims);
    for (int32_t d = 0; d < dims->nb_dims; d++)
        if (dims->d[d] < e->prof_min[k].d[d] || dims->d[d] > e->prof_max[k].d[d])
            return base_error(PRT_ERR_SHAPE,
                              "input '%s': shape %s is outside profile %d (min %s, max %s): "
                              "dim %d is %lld, allowed %lld..%lld", name, got,
                              (int)c->profile, lo, hi, (int)d, (long long)dims->d[d],
                              (long long)e->prof_min[k].d[d],
                              (long long)e->prof_max[k].d[d]);
    c->input_dims[io] = *dims;
    c->input_set[io] = 1;
    c->ran = 0;
    return PRT_OK;
}

prt_status prt_context_set_tensor_address(prt_context *c, const char *name, void *address)
{
    int32_t io;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_set_tensor_address: NULL context");
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "set_tensor_address");
    c->io_addr[io] = address;
    return PRT_OK;
}

prt_status prt_context_set_output_allocator(prt_context *c, const char *name,
                                            const prt_output_allocator *alloc)
{
    int32_t io;
    const eng_tensor *t;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_set_output_allocator: NULL context");
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "set_output_allocator");
    if (io < c->e->nb_inputs)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "set_output_allocator: '%s' is an input", name);
    if (alloc && (alloc->struct_size < sizeof *alloc || !alloc->reallocate))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "set_output_allocator: '%s': allocator lacks reallocate", name);
    t = &c->e->tensors[io_tensor(c->e, io)];
    /* Data-dependent outputs are written to staging memory of the upper-bound
     * size, then handed to the allocator at the final size. */
    if (alloc && !c->staging[io]) {
        int dd = 0;
        for (int32_t d = 0; d < t->nb_dims; d++)
            for (int32_t i = 0; i <= t->dim_expr[d]; i++)
                dd |= c->e->exprs.nodes[i].kind == EXPR_SIZE;
        if (dd && c->dev->alloc((size_t)t->max_bytes, &c->staging[io]) != PRT_OK)
            return base_error_prefix(PRT_ERR_OUT_OF_MEMORY,
                                     "set_output_allocator: '%s'", name);
    }
    /* `current` is memory this allocator handed out; another allocator
     * starts with none. */
    if (alloc != c->alloc[io])
        c->alloc_mem[io] = NULL;
    c->alloc[io] = alloc;
    return PRT_OK;
}

/* Current dims of tensor t from evaluated values: 1 and *out set, or 0
 * (*out untouched) if a dim is unknown. */
static int tensor_dims(const prt_engine *e, int32_t t, const int64_t *values,
                       const uint8_t *known, prt_dims *out)
{
    const eng_tensor *et = &e->tensors[t];
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb_dims = et->nb_dims;
    for (int32_t k = 0; k < et->nb_dims; k++) {
        if (!known[et->dim_expr[k]])
            return 0;
        d.d[k] = values[et->dim_expr[k]];
    }
    *out = d;
    return 1;
}

static prt_status check_inputs_set(const prt_context *c)
{
    for (int32_t i = 0; i < c->e->nb_inputs; i++)
        if (!c->input_set[i])
            return base_error(PRT_ERR_STATE, "input '%s' is dynamic and has no shape "
                              "(prt_context_set_input_shape)",
                              c->e->tensors[c->e->input_tensors[i]].name);
    return PRT_OK;
}

/* Reads shape inputs' values from their (host) memory and checks them
 * against the profile. */
static prt_status load_shape_values(prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        size_t k = (size_t)c->profile * (size_t)e->nb_inputs + (size_t)i;
        const prt_dims *mn = &e->prof_vmin[k], *mx = &e->prof_vmax[k];
        const eng_tensor *t = &e->tensors[e->input_tensors[i]];
        prt_dims *v = &c->input_values[i];
        v->nb_dims = mn->nb_dims;
        if (mn->nb_dims == 0)
            continue;
        if (!c->io_addr[i])
            return base_error(PRT_ERR_STATE, "shape input '%s' has no address: its "
                              "values are needed to compute shapes "
                              "(prt_context_set_tensor_address)", t->name);
        for (int32_t j = 0; j < mn->nb_dims; j++) {
            v->d[j] = t->dtype == PRT_INT32 ? ((const int32_t *)c->io_addr[i])[j]
                                            : ((const int64_t *)c->io_addr[i])[j];
            if (v->d[j] < mn->d[j] || v->d[j] > mx->d[j])
                return base_error(PRT_ERR_SHAPE, "shape input '%s': value %d is %lld, "
                                  "outside profile %d's %lld..%lld", t->name, (int)j,
                                  (long long)v->d[j], (int)c->profile,
                                  (long long)mn->d[j], (long long)mx->d[j]);
        }
    }
    return PRT_OK;
}

static prt_status eval_exact(prt_context *c)
{
    expr_env env = {c->e->nb_inputs, c->input_dims, c->e->nb_sizes, c->size_values,
                    c->size_known, c->input_values};
    return expr_program_eval(&c->e->exprs, &env, c->values, c->known);
}

static prt_status eval_upper(prt_context *c)
{
    expr_env env = {c->e->nb_inputs, c->input_dims, c->e->nb_sizes, c->size_values,
                    c->size_known, c->input_values};
    return expr_program_eval_upper(&c->e->exprs, &env, c->size_scratch, c->known_scratch,
                                   c->up_values, c->up_known);
}

/* The prologue of every shape computation: inputs set, sizes unknown,
 * shape inputs read; then the exact dims (sizes unknown) or, with `upper`,
 * every dim's upper bound. */
static prt_status prepare_shapes(prt_context *c, int upper)
{
    prt_status st = check_inputs_set(c);
    if (st)
        return st;
    memset(c->size_known, 0, (size_t)c->e->nb_sizes + 1);
    st = load_shape_values(c);
    if (st)
        return st;
    return upper ? eval_upper(c) : eval_exact(c);
}

prt_status prt_context_get_tensor_shape(prt_context *c, const char *name,
                                        prt_dims *out)
{
    int32_t io;
    prt_status st;
    if (!c || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_get_tensor_shape: NULL argument");
    io = find_io(c, name);
    if (io < 0)
        return no_such_io(c, name, "get_tensor_shape");
    if (io < c->e->nb_inputs) {
        if (!c->input_set[io])
            return base_error(PRT_ERR_STATE, "input '%s' has no shape yet", name);
        *out = c->input_dims[io];
        return PRT_OK;
    }
    if (c->ran) {
        *out = c->out_dims[io - c->e->nb_inputs];
        return PRT_OK;
    }
    st = prepare_shapes(c, 1);
    if (st)
        return st;
    if (!tensor_dims(c->e, io_tensor(c->e, io), c->up_values, c->up_known, out))
        return base_error(PRT_ERR_INTERNAL, "output '%s': shape cannot be bounded", name);
    return PRT_OK;
}

/* ---- enqueue ----------------------------------------------------------- */

static int has_unknown_dim(const prt_engine *e, int32_t t, const uint8_t *known)
{
    for (int32_t d = 0; d < e->tensors[t].nb_dims; d++)
        if (!known[e->tensors[t].dim_expr[d]])
            return 1;
    return 0;
}

static int64_t bytes_of(const prt_tensor_desc *d)
{
    return base_volume(&d->dims) * (int64_t)prt_dtype_size(d->dtype);
}

/* Points every I/O tensor at its memory; asks allocators for outputs whose
 * size is known before the run. */
static prt_status bind_io(prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t io = 0; io < c->nb_io; io++) {
        int32_t t = io_tensor(e, io);
        const char *name = e->tensors[t].name;
        if (c->io_addr[io]) {
            c->tptr[t] = c->io_addr[io];
            continue;
        }
        if (io < e->nb_inputs || !c->alloc[io]) {
            prt_dims d;
            if (tensor_dims(e, t, c->values, c->known, &d) && base_volume(&d) == 0) {
                /* An empty tensor is never read or written; plugins still
                 * get a non-NULL pointer. */
                c->tptr[t] = c->arena;
                continue;
            }
            return base_error(PRT_ERR_STATE, "%s '%s' has no address "
                              "(prt_context_set_tensor_address%s)",
                              io < e->nb_inputs ? "input" : "output", name,
                              io < e->nb_inputs ? "" : " or an output allocator");
        }
        if (c->staging[io]) {
            c->tptr[t] = c->staging[io];
        } else {
            prt_dims d;
            int64_t bytes;
            const prt_output_allocator *a = c->alloc[io];
            tensor_dims(e, t, c->values, c->known, &d);
            bytes = base_volume(&d) * (int64_t)prt_dtype_size(e->tensors[t].dtype);
            /* plugrt.h: the allocator gets back what it gave last time and
             * returns it when it is big enough, so a steady run allocates
             * nothing. */
            c->tptr[t] = a->reallocate(a->user, name, c->alloc_mem[io], (uint64_t)bytes, 256);
            if (c->tptr[t])
                c->alloc_mem[io] = c->tptr[t];
            else if (bytes == 0)
                c->tptr[t] = c->arena; /* empty: never touched, but not NULL */
            else
                return base_error(PRT_ERR_OUT_OF_MEMORY, "output allocator gave no memory "
                                  "for '%s' (%lld bytes)", name, (long long)bytes);
        }
    }
    return PRT_OK;
}

static int desc_changed(const prt_tensor_desc *a, const prt_tensor_desc *b, int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        if (a[k].dtype != b[k].dtype || a[k].format != b[k].format ||
            a[k].dims.nb_dims != b[k].dims.nb_dims ||
            memcmp(a[k].dims.d, b[k].dims.d, sizeof(int64_t) * (size_t)a[k].dims.nb_dims))
            return 1;
    return 0;
}

static prt_status layer_fail(const eng_layer *l, prt_status st, const char *what)
{
    if (!prt_last_error()[0])
        base_error(PRT_ERR_PLUGIN, "no message from the plugin");
    (void)st;
    return base_error_prefix(PRT_ERR_PLUGIN, "layer '%s' (plugin %s): %s", l->name,
                             l->plugin_name, what);
}

static prt_status run_layer(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    prt_plugin *p = c->plugins[li];
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs;
    prt_tensor_desc *in = c->descs, *out = c->descs + nb_in;
    int need_upper = 0;
    prt_status st;

    for (int32_t k = 0; k < nb_in; k++) {
        int32_t t = l->inputs[k];
        memset(&in[k], 0, sizeof in[k]);
        in[k].dtype = e->tensors[t].dtype;
        in[k].format = e->tensors[t].format;
        if (!tensor_dims(e, t, c->values, c->known, &in[k].dims))
            return base_error(PRT_ERR_INTERNAL, "layer '%s': input %d shape unknown",
                              l->name, (int)k);
        c->in_ptrs[k] = c->tptr[t];
    }
    /* Upper-bound values are needed for outputs with a dim not known yet,
     * and for a size tensor's own bound, checked below after the run: a
     * layer whose only data-dependent output is a 0-D size tensor has no
     * unknown dim, yet its bound must be evaluated now (up_values would
     * otherwise hold zeros or an earlier layer's or run's values), and the
     * exact shapes must be evaluated again once its size is known. */
    for (int32_t o = 0; o < nb_out; o++)
        need_upper |= has_unknown_dim(e, l->outputs[o], c->known) ||
                      e->tensors[l->outputs[o]].size_id >= 0;
    if (need_upper) {
        st = eval_upper(c);
        if (st)
            return st;
    }
    for (int32_t o = 0; o < nb_out; o++) {
        int32_t t = l->outputs[o];
        memset(&out[o], 0, sizeof out[o]);
        out[o].dtype = e->tensors[t].dtype;
        out[o].format = e->tensors[t].format;
        if (!tensor_dims(e, t, c->values, c->known, &out[o].dims) &&
            !tensor_dims(e, t, c->up_values, c->up_known, &out[o].dims))
            return base_error(PRT_ERR_INTERNAL, "layer '%s': output %d cannot be bounded",
                              l->name, (int)o);
        c->out_ptrs[o] = c->tptr[t];
    }
    if (!c->told[li] || desc_changed(c->descs, c->last + c->last_off[li], nb_in + nb_out)) {
        if (RUNTIME_ENTRY(p, on_shape_change)) {
            base_clear_error();
            st = RUNTIME_ENTRY(p, on_shape_change)(p, in, nb_in, out, nb_out);
            if (st)
                return layer_fail(l, st, "on_shape_change failed");
        }
        memcpy(c->last + c->last_off[li], c->descs, sizeof(prt_tensor_desc) *
                                                        (size_t)(nb_in + nb_out));
        c->told[li] = 1;
    }
    /* In place: the output's memory must hold the input's values first. */
    for (int32_t o = 0; o < nb_out; o++) {
        int32_t k = l->alias_input[o];
        if (k < 0)
            continue;
        if (l->alias_copy[o] && c->out_ptrs[o] != c->in_ptrs[k]) {
            st = c->dev->copy(c->out_ptrs[o], c->in_ptrs[k], (size_t)bytes_of(&in[k]),
                              DEV_COPY_D2D, stream);
            if (st)
                return base_error_prefix(st, "layer '%s': copying input %d for output %d "
                                         "in place", l->name, (int)k, (int)o);
        }
        c->in_ptrs[k] = c->out_ptrs[o];
    }
    base_clear_error();
    st = p->vt->runtime->enqueue(p, in, out, c->in_ptrs, c->out_ptrs,
                                 l->workspace ? c->workspace : NULL, c->dev->device, stream);
    if (st)
        return layer_fail(l, st, "enqueue failed");
    /* Size tensors: read, check against the bound, and re-evaluate shapes. */
    for (int32_t o = 0; o < nb_out; o++) {
        const eng_tensor *t = &e->tensors[l->outputs[o]];
        int32_t s = t->size_id;
        int64_t v, upper;
        if (s < 0)
            continue;
        st = dev_read_i64(c->dev, c->out_ptrs[o], t->dtype, &v, stream);
        if (st)
            return base_error_prefix(st, "layer '%s': reading size tensor '%s'", l->name,
                                     t->name);
        upper = c->up_values[e->exprs.nodes[c->size_node[s]].b];
        if (v < 0 || v > upper)
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s' (plugin %s) wrote %lld to size tensor '%s', "
                              "outside its declared bounds 0..%lld; its outputs may be "
                              "corrupt", l->name, l->plugin_name, (long long)v, t->name,
                              (long long)upper);
        c->size_values[s] = v;
        c->size_known[s] = 1;
    }
    if (need_upper)
        return eval_exact(c);
    return PRT_OK;
}

/* After the run: final shapes; allocators get data-dependent outputs. */
static prt_status finish_outputs(prt_context *c, void *stream)
{
    const prt_engine *e = c->e;
    for (int32_t o = 0; o < e->nb_outputs; o++) {
        int32_t io = e->nb_inputs + o, t = e->output_tensors[o];
        const prt_output_allocator *a = c->alloc[io];
        const char *name = e->tensors[t].name;
        if (!tensor_dims(e, t, c->values, c->known, &c->out_dims[o]))
            return base_error(PRT_ERR_INTERNAL, "output '%s': shape unknown after the run",
                              name);
        if (c->io_addr[io] || !a)
            continue;
        if (c->staging[io]) {
            int64_t bytes = base_volume(&c->out_dims[o]) *
                            (int64_t)prt_dtype_size(e->tensors[t].dtype);
            void *dst = a->reallocate(a->user, name, c->alloc_mem[io], (uint64_t)bytes, 256);
            if (dst)
                c->alloc_mem[io] = dst;
            if (!dst && bytes > 0)
                return base_error(PRT_ERR_OUT_OF_MEMORY, "output allocator gave no memory "
                                  "for '%s' (%lld bytes)", name, (long long)bytes);
            if (bytes > 0) {
                prt_status st = c->dev->copy(dst, c->staging[io], (size_t)bytes,
                                             DEV_COPY_D2D, stream);
                if (st)
                    return base_error_prefix(st, "output '%s'", name);
            }
        }
        if (a->notify_shape)
            a->notify_shape(a->user, name, &c->out_dims[o]);
    }
    return PRT_OK;
}

prt_status prt_context_enqueue(prt_context *c, void *stream)
{
    prt_status st;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_enqueue: NULL context");
    c->ran = 0;
    st = prepare_shapes(c, 0);
    if (!st)
        st = bind_io(c);
    for (int32_t li = 0; !st && li < c->e->nb_layers; li++)
        st = run_layer(c, li, stream);
    if (!st)
        st = finish_outputs(c, stream);
    c->ran = st == PRT_OK;
    return st;
}

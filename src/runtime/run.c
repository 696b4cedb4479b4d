/*
 * A run of an execution context: bind the I/O, run every layer in order on
 * the stream, learn the sizes that depend on data (on the host or on the
 * device, context_impl.h), finish the outputs; and graphs, which record one
 * run and replay it.
 */
#include <string.h>
#include <time.h>

#include "base/parallel.h"
#include "base/plugin_label.h"
#include "runtime/context_impl.h"

static int has_unknown_dim(const prt_engine *e, int32_t t, const uint8_t *known)
{
    for (int32_t d = 0; d < e->tensors[t].nb_dims; d++)
        if (!known[e->tensors[t].dim_expr[d]])
            return 1;
    return 0;
}

static int64_t bytes_of(const prt_tensor_desc *d)
{
    return prt_format_volume(d->format, &d->dims) * (int64_t)prt_dtype_size(d->dtype);
}

/* Points every I/O tensor at its memory; asks allocators for outputs whose
 * size is known before the run. */
static prt_status bind_io(prt_context *c)
{
    const prt_engine *e = c->e;
    if (!c->arena && e->arena_size + e->workspace_size > 0)
        return base_error(PRT_ERR_STATE, "the context has no memory yet "
                                         "(prt_context_set_memory)");
    for (int32_t io = 0; io < c->nb_io; io++) {
        int32_t t = ctx_io_tensor(e, io);
        const char *name = e->tensors[t].name;
        if (c->io_addr[io]) {
            c->tptr[t] = c->io_addr[io];
            continue;
        }
        if (io < e->nb_inputs || !c->alloc[io]) {
            prt_dims d;
            if (ctx_tensor_dims(e, t, c->values, c->known, &d) && base_volume(&d) == 0) {
                /* An empty tensor is never read or written; plugins still
                 * get a non-NULL pointer. */
                c->tptr[t] = c->arena ? (void *)c->arena : (void *)c;
                continue;
            }
            return base_error(PRT_ERR_STATE,
                              "%s '%s' has no address "
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
            ctx_tensor_dims(e, t, c->values, c->known, &d);
            bytes = base_volume(&d) * (int64_t)prt_dtype_size(e->tensors[t].dtype);
            /* plugrt.h: the allocator gets back what it gave last time and
             * returns it when it is big enough, so a steady run allocates
             * nothing. */
            c->tptr[t] =
                a->reallocate(a->user, name, c->alloc_mem[io], (uint64_t)bytes, 256);
            if (c->tptr[t])
                c->alloc_mem[io] = c->tptr[t];
            else if (bytes == 0)
                c->tptr[t] = c->arena ? (void *)c->arena : (void *)c; /* never touched */
            else
                return base_error(PRT_ERR_OUT_OF_MEMORY,
                                  "output allocator gave no memory "
                                  "for '%s' (%lld bytes)",
                                  name, (long long)bytes);
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

/* A plugin entry that failed at run time: the plugin's own status and
 * message (base_plugin_status), prefixed with the layer and the plugin. */
static prt_status layer_fail(const eng_layer *l, prt_status st, const char *what)
{
    if (!prt_last_error()[0])
        base_error(PRT_ERR_PLUGIN, "no message from the plugin");
    return base_error_prefix(
        base_plugin_status(st), "layer '%s' (plugin %s): %s", l->name,
        base_plugin_label(l->plugin_namespace, l->plugin_name).s, what);
}

/* Whether layer li reads or writes a tensor whose dims depend on sizes
 * written by earlier layers. */
static int touches_earlier_sizes(const prt_context *c, const eng_layer *l, int32_t li)
{
    for (int32_t k = 0; k < l->nb_inputs; k++)
        if (c->dep_layer[l->inputs[k]] >= 0)
            return 1;
    for (int32_t o = 0; o < l->nb_outputs; o++)
        if (c->dep_layer[l->outputs[o]] >= 0 && c->dep_layer[l->outputs[o]] < li)
            return 1;
    return 0;
}

/* The layer's tensors' memory for this run into in_ptrs/out_ptrs. */
static void point_layer(prt_context *c, const eng_layer *l)
{
    for (int32_t k = 0; k < l->nb_inputs; k++)
        c->in_ptrs[k] = c->tptr[l->inputs[k]];
    for (int32_t o = 0; o < l->nb_outputs; o++)
        c->out_ptrs[o] = c->tptr[l->outputs[o]];
}

/* The layer's descriptors: true dims where known, else upper bounds; on a
 * device that keeps sizes, a pointer to the true dims of tensors whose
 * sizes earlier layers wrote; on a device, which inputs lie in host memory
 * (prt_tensor_desc_on_host), so the kernel need not ask the pointer. */
static prt_status fill_descs(prt_context *c, int32_t li)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    prt_tensor_desc *in = c->descs, *out = c->descs + l->nb_inputs;
    const int host = engine_layer_on_host(e, l);
    for (int32_t k = 0; k < l->nb_inputs + l->nb_outputs; k++) {
        int is_in = k < l->nb_inputs;
        int32_t t = is_in ? l->inputs[k] : l->outputs[k - l->nb_inputs];
        prt_tensor_desc *d = is_in ? &in[k] : &out[k - l->nb_inputs];
        memset(d, 0, sizeof *d);
        d->dtype = e->tensors[t].dtype;
        d->format = e->tensors[t].format;
        base_quant_attach(d, &e->tensors[t].quant);
        if (!ctx_tensor_dims(e, t, c->values, c->known, &d->dims) &&
            !ctx_tensor_dims(e, t, c->up_values, c->up_known, &d->dims))
            return base_error(PRT_ERR_INTERNAL, "layer '%s': %s %d cannot be bounded",
                              l->name, is_in ? "input" : "output",
                              (int)(is_in ? k : k - l->nb_inputs));
        if (c->device_sizes && c->dims_off[t] >= 0 && c->dep_layer[t] >= 0 &&
            (is_in || c->dep_layer[t] < li))
            d->dims_device = c->ds.dims + c->dims_off[t];
        if (is_in && !host && engine_tensor_on_host(e, t))
            d->reserved[1] = (void *)(uintptr_t)1;
    }
    point_layer(c, l);
    return PRT_OK;
}

/* On the host: reads the sizes layer li wrote, checks them against their
 * bounds, and evaluates the shapes again. */
static prt_status read_sizes(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        const eng_tensor *t = &e->tensors[l->outputs[o]];
        int32_t s = t->size_id;
        int64_t v, upper;
        prt_status st;
        if (s < 0)
            continue;
        st = dev_read_i64(c->dev, c->out_ptrs[o], t->dtype, &v, stream);
        if (st)
            return base_error_prefix(st, "layer '%s': reading size tensor '%s'", l->name,
                                     t->name);
        upper = c->up_values[e->exprs.nodes[c->size_node[s]].b];
        if (v == (t->dtype == PRT_INT32 ? (int64_t)(int32_t)RUN_SIZE_UNWRITTEN32
                                        : (int64_t)RUN_SIZE_UNWRITTEN64))
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s' (plugin %s) did not write its size tensor '%s' "
                              "(output %d): a data-dependent output's true size must be "
                              "written at every enqueue",
                              l->name,
                              base_plugin_label(l->plugin_namespace, l->plugin_name).s,
                              t->name, (int)o);
        if (v < 0 || v > upper)
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s' (plugin %s) wrote %lld to size tensor '%s', "
                              "outside its declared bounds 0..%lld; its outputs may be "
                              "corrupt",
                              l->name,
                              base_plugin_label(l->plugin_namespace, l->plugin_name).s,
                              (long long)v, t->name, (long long)upper);
        c->size_values[s] = v;
        c->size_known[s] = 1;
        c->sizes_same &= c->seen_sizes[s] == v;
        c->seen_sizes[s] = v;
    }
    return ctx_eval_exact(c);
}

/* CPU fallback: layer li runs on the host in an engine for a device
 * (engine_layer_on_host). Points its pointers at the tensors' host copies
 * (constants: the engine's host weights), copies in what came from the
 * device (eng_layer.fetch) and waits for the stream, so the copies and
 * every earlier layer are done when the CPU kernel starts. */
static prt_status host_layer_begin(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    const prt_tensor_desc *in = c->descs;
    int fetched = 0;
    for (int32_t k = 0; k < l->nb_inputs + l->nb_outputs; k++) {
        int is_in = k < l->nb_inputs;
        /* The host kernel reads `dims`, exact here (the sizes were
         * fetched); a device pointer is nothing it may read. */
        c->descs[k].dims_device = NULL;
        const eng_tensor *t =
            &e->tensors[is_in ? l->inputs[k] : l->outputs[k - l->nb_inputs]];
        void *h = t->const_offset >= 0 ? (void *)(e->weights + t->const_offset)
                                       : (void *)(c->host_mem + t->host_offset);
        if (!is_in) {
            c->out_ptrs[k - l->nb_inputs] = h;
            continue;
        }
        if (l->fetch[k] && bytes_of(&in[k]) > 0) {
            prt_status st = c->dev->copy(h, c->in_ptrs[k], (size_t)bytes_of(&in[k]),
                                         DEV_COPY_D2H, stream);
            if (st)
                return base_error_prefix(st,
                                         "layer '%s' (on the CPU): copying input '%s' "
                                         "to the host",
                                         l->name, t->name);
            fetched = 1;
        }
        c->in_ptrs[k] = h;
    }
    if (fetched && c->dev->stream_sync) {
        prt_status st = c->dev->stream_sync(stream);
        if (st)
            return base_error_prefix(
                st, "layer '%s' (on the CPU): waiting for its inputs", l->name);
    }
    return PRT_OK;
}

/* After a CPU layer: its outputs that the device reads (eng_layer.push)
 * go back to their device memory, on the stream, before any later layer.
 * A data-dependent output is copied at its upper bound. */
static prt_status host_layer_end(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    const prt_tensor_desc *out = c->descs + l->nb_inputs;
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        int32_t t = l->outputs[o];
        prt_status st;
        if (!l->push[o] || bytes_of(&out[o]) == 0)
            continue;
        st = c->dev->copy(c->tptr[t], c->out_ptrs[o], (size_t)bytes_of(&out[o]),
                          DEV_COPY_H2D, stream);
        if (st)
            return base_error_prefix(st,
                                     "layer '%s' (on the CPU): copying output '%s' "
                                     "to the device",
                                     l->name, e->tensors[t].name);
        /* The size check on the device reads the device's copy. */
        c->out_ptrs[o] = c->tptr[t];
    }
    return PRT_OK;
}

/* Everything before the layer's enqueue that depends on shapes: sizes
 * fetched or bounds evaluated as the layer needs them, its descriptors in
 * c->descs and its plugin told of changed ones. */
static prt_status shape_layer(prt_context *c, int32_t li, int host, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    prt_plugin *p = c->plugins[li];
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs;
    const prt_tensor_desc *in = c->descs, *out = c->descs + nb_in;
    int need_upper = 0;
    prt_status st;

    /* A plugin that needs true dims on the host waits for the sizes. */
    /* So does a layer on the CPU: its kernel reads `dims` only. */
    if (c->device_sizes && (l->host_dims || host) && touches_earlier_sizes(c, l, li)) {
        st = ctx_sizes_fetch(c, li, stream);
        if (st)
            return st;
    }
    /* On the host, upper bounds are needed for outputs with a dim not
     * known yet, and for a size tensor's own bound, checked after the run:
     * a layer whose only data-dependent output is a 0-D size tensor has no
     * unknown dim, yet its bound must be evaluated now. (A device that keeps
     * sizes bounds every dim once, before the run.) */
    if (!c->device_sizes) {
        for (int32_t o = 0; o < nb_out; o++)
            need_upper |= has_unknown_dim(e, l->outputs[o], c->known) ||
                          e->tensors[l->outputs[o]].size_id >= 0;
        if (need_upper && (st = ctx_eval_upper(c)) != PRT_OK)
            return st;
    }
    st = fill_descs(c, li);
    if (!st && host)
        st = host_layer_begin(c, li, stream);
    if (st)
        return st;
    if (!c->told[li] ||
        desc_changed(c->descs, c->last + c->last_off[li], nb_in + nb_out)) {
        if (RUNTIME_ENTRY(p, on_shape_change)) {
            base_clear_error();
            st = RUNTIME_ENTRY(p, on_shape_change)(p, in, nb_in, out, nb_out);
            if (st)
                return layer_fail(l, st, "on_shape_change failed");
        }
        memcpy(c->last + c->last_off[li], c->descs,
               sizeof(prt_tensor_desc) * (size_t)(nb_in + nb_out));
        c->told[li] = 1;
    }
    return PRT_OK;
}

static prt_status run_layer(prt_context *c, int32_t li, void *stream)
{
    const prt_engine *e = c->e;
    const eng_layer *l = &e->layers[li];
    prt_plugin *p = c->plugins[li];
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs;
    uint8_t f = c->layer_flags[li];
    int writes_sizes = (f & LAYER_WRITES_SIZES) != 0;
    int host = engine_layer_on_host(e, l);
    const prt_tensor_desc *in = c->descs, *out;
    prt_status st;

    if ((f & LAYER_STEADY) && c->descs_current && c->told[li] &&
        (!(f & LAYER_SIZED) || (c->sizes_same && !c->device_sizes))) {
        /* The shapes of the run that last told this layer: its descriptors
         * stand as told (context_impl.h, descs_current). */
        in = c->last + c->last_off[li];
        point_layer(c, l);
    } else if ((st = shape_layer(c, li, host, stream)) != PRT_OK) {
        return st;
    }
    out = in + nb_in;
    /* In place: the output's memory must hold the input's values first. */
    for (int32_t o = 0; o < nb_out; o++) {
        int32_t k = l->alias_input[o];
        if (k < 0)
            continue;
        /* A view's dims differ from its input's (engine_validate): its
         * bytes must not. */
        if (bytes_of(&out[o]) != bytes_of(&in[k]))
            return base_error(
                PRT_ERR_SHAPE,
                "layer '%s': output %d (%lld bytes) shares input %d's memory "
                "(%lld bytes), but their sizes differ",
                l->name, (int)o, (long long)bytes_of(&out[o]), (int)k,
                (long long)bytes_of(&in[k]));
        /* On the host the output's copy is the input's only when they are
         * one tensor, so it is always filled first. */
        if (host && c->out_ptrs[o] != c->in_ptrs[k]) {
            memcpy(c->out_ptrs[o], c->in_ptrs[k], (size_t)bytes_of(&in[k]));
        } else if (l->alias_copy[o] && c->out_ptrs[o] != c->in_ptrs[k]) {
            st = c->dev->copy(c->out_ptrs[o], c->in_ptrs[k], (size_t)bytes_of(&in[k]),
                              DEV_COPY_D2D, stream);
            if (st)
                return base_error_prefix(st,
                                         "layer '%s': copying input %d for output %d "
                                         "in place",
                                         l->name, (int)k, (int)o);
        }
        c->in_ptrs[k] = c->out_ptrs[o];
    }
    /* A size the plugin never writes must not be read from leftover memory:
     * each starts as a value no size can be (RUN_SIZE_UNWRITTEN). */
    for (int32_t o = 0; writes_sizes && o < nb_out; o++)
        if (host && e->tensors[l->outputs[o]].size_id >= 0)
            memset(c->out_ptrs[o], RUN_SIZE_POISON,
                   prt_dtype_size(e->tensors[l->outputs[o]].dtype));
        else if (e->tensors[l->outputs[o]].size_id >= 0 &&
                 (st = c->dev->memset(c->out_ptrs[o], RUN_SIZE_POISON,
                                      prt_dtype_size(e->tensors[l->outputs[o]].dtype),
                                      stream)))
            return base_error_prefix(st, "layer '%s'", l->name);
    base_clear_error();
    if (host)
        st = p->vt->runtime->enqueue(p, in, out, c->in_ptrs, c->out_ptrs,
                                     l->workspace ? c->host_mem + e->host_workspace_offset
                                                  : NULL,
                                     PRT_DEVICE_CPU, NULL);
    else
        st = p->vt->runtime->enqueue(p, in, out, c->in_ptrs, c->out_ptrs,
                                     l->workspace ? c->workspace : NULL, c->dev->device,
                                     stream);
    if (st)
        return layer_fail(l, st, "enqueue failed");
    if (host && (st = host_layer_end(c, li, stream)) != PRT_OK)
        return st;
    if (!writes_sizes)
        return PRT_OK;
    if (c->device_sizes)
        return ctx_sizes_launch(c, li, stream);
    return read_sizes(c, li, stream);
}

/* After the run: final shapes; allocators get data-dependent outputs. */
static prt_status finish_outputs(prt_context *c, void *stream)
{
    const prt_engine *e = c->e;
    int dd_alloc = 0;
    for (int32_t o = 0; o < e->nb_outputs; o++) {
        int32_t io = e->nb_inputs + o;
        dd_alloc |= !c->io_addr[io] && c->alloc[io] && c->staging[io];
    }
    /* A device that keeps sizes is waited for only when an allocator must
     * be told a size now; otherwise the host learns the sizes when asked. */
    c->last_stream = stream;
    c->sizes_pending = c->device_sizes && e->nb_sizes > 0;
    if (c->sizes_pending && !dd_alloc) {
        for (int32_t o = 0; o < e->nb_outputs; o++)
            if (c->dep_layer[e->output_tensors[o]] < 0)
                ctx_tensor_dims(e, e->output_tensors[o], c->values, c->known,
                                &c->out_dims[o]);
    } else {
        prt_status st = ctx_resolve_outputs(c);
        if (st)
            return st;
    }
    for (int32_t o = 0; o < e->nb_outputs; o++) {
        int32_t io = e->nb_inputs + o, t = e->output_tensors[o];
        const prt_output_allocator *a = c->alloc[io];
        const char *name = e->tensors[t].name;
        if (c->io_addr[io] || !a)
            continue;
        if (c->staging[io]) {
            int64_t bytes = base_volume(&c->out_dims[o]) *
                            (int64_t)prt_dtype_size(e->tensors[t].dtype);
            void *dst =
                a->reallocate(a->user, name, c->alloc_mem[io], (uint64_t)bytes, 256);
            if (dst)
                c->alloc_mem[io] = dst;
            if (!dst && bytes > 0)
                return base_error(PRT_ERR_OUT_OF_MEMORY,
                                  "output allocator gave no memory "
                                  "for '%s' (%lld bytes)",
                                  name, (long long)bytes);
            if (bytes > 0) {
                prt_status st = c->dev->copy(dst, c->staging[io], (size_t)bytes,
                                             DEV_COPY_D2D, stream);
                if (st)
                    return base_error_prefix(st, "output '%s'", name);
            }
        }
        if (a->notify_shape && (!c->sizes_pending || c->dep_layer[t] < 0))
            a->notify_shape(a->user, name, &c->out_dims[o]);
    }
    return PRT_OK;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A profiled run on a device with streams: every layer's time between its
 * events, once the stream has passed the last one. */
static prt_status report_device_times(prt_context *c)
{
    const prt_engine *e = c->e;
    prt_status st = c->dev->event_sync(c->prof_events[e->nb_layers]);
    for (int32_t li = 0; !st && li < e->nb_layers; li++) {
        double ms = 0;
        if (!e->layers[li].skipped)
            st =
                c->dev->event_elapsed_ms(c->prof_events[li], c->prof_events[li + 1], &ms);
        if (!st)
            c->profiler(c->profiler_user, li, e->layers[li].name, (int64_t)(ms * 1e6));
    }
    return st ? base_error_prefix(st, "profiling the run") : PRT_OK;
}

/* The layers in order, each timed when a profiler is set (prt_profiler_fn:
 * host clock on the CPU, events on the stream elsewhere). */
static prt_status run_layers(prt_context *c, void *stream)
{
    const prt_engine *e = c->e;
    void **ev = c->prof_events;
    prt_status st = PRT_OK;
    if (!c->profiler || c->capturing) {
        for (int32_t li = 0; !st && li < e->nb_layers; li++)
            if (!e->layers[li].skipped)
                st = run_layer(c, li, stream);
        return st;
    }
    if (ev)
        st = c->dev->event_record(ev[0], stream);
    for (int32_t li = 0; !st && li < e->nb_layers; li++) {
        int64_t t0 = ev ? 0 : now_ns();
        /* A skipped layer is reported, at no time (prt_profiler_fn). */
        if (!e->layers[li].skipped)
            st = run_layer(c, li, stream);
        if (st)
            break;
        if (ev)
            st = c->dev->event_record(ev[li + 1], stream);
        else
            c->profiler(c->profiler_user, li, e->layers[li].name,
                        e->layers[li].skipped ? 0 : now_ns() - t0);
    }
    if (!st && ev)
        st = report_device_times(c);
    return st;
}

/* The run itself, on the context's device (prt_context_enqueue). */
static prt_status enqueue_run(prt_context *c, void *stream)
{
    prt_status st;
    base_pool *outer;
    /* The context's threads serve this run's loops (base/parallel.h), and
     * only this run's: whatever the thread had before comes back. */
    outer = base_parallel_set_current(c->pool);
    c->ran = 0;
    c->sizes_pending = 0;
    c->sizes_same = 1;
    /* An error a plugin reported since the last run fails this one before
     * it starts; one reported while it runs fails it when the layers are
     * queued (plugin.h, report_error). */
    st = ctx_resources_take_error(c);
    /* A device that keeps sizes bounds every dim once; the host path bounds
     * as it goes. */
    if (!st)
        st = ctx_prepare_shapes(c, c->device_sizes);
    if (!st)
        st = bind_io(c);
    if (!st)
        st = run_layers(c, stream);
    /* Every layer was told this run's shapes (context_impl.h). */
    c->descs_current = st == PRT_OK;
    if (!st)
        st = ctx_resources_take_error(c);
    if (!st)
        st = finish_outputs(c, stream);
    c->ran = st == PRT_OK;
    base_parallel_set_current(outer);
    return st;
}

prt_status prt_context_enqueue(prt_context *c, void *stream)
{
    int32_t saved;
    prt_status st;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_context_enqueue: NULL context");
    st = ctx_device_enter(c, "prt_context_enqueue", &saved);
    if (st)
        return st;
    st = enqueue_run(c, stream);
    ctx_device_leave(c->dev, saved);
    return st;
}

/* ---- graphs -------------------------------------------------------------- */

/* A layer a graph cannot hold: PRT_ERR_UNSUPPORTED naming it and `why`. */
static prt_status layer_not_capturable(const eng_layer *l, const char *why)
{
    return base_error(PRT_ERR_UNSUPPORTED, "graphs: layer '%s' (plugin %s) %s", l->name,
                      base_plugin_label(l->plugin_namespace, l->plugin_name).s, why);
}

/* What a graph cannot hold: a plugin that says so, a wait for the host in
 * the middle of the run. */
static prt_status check_capturable(const prt_context *c)
{
    const prt_engine *e = c->e;
    /* First, and on every device: what the plugin says of itself holds
     * wherever the engine runs, and names the layer a user must change. */
    for (int32_t li = 0; li < e->nb_layers; li++)
        if (e->layers[li].no_capture && !e->layers[li].skipped)
            return layer_not_capturable(
                &e->layers[li], "says its enqueue cannot be captured into a graph "
                                "(prt_plugin_build.capture_safe); run this engine "
                                "without a graph");
    for (int32_t li = 0; li < e->nb_layers; li++)
        if (engine_layer_on_host(e, &e->layers[li]) && !e->layers[li].skipped)
            return layer_not_capturable(
                &e->layers[li], "runs on the CPU (CPU fallback): each run waits for the "
                                "device before it, which a graph cannot hold; run this "
                                "engine without a graph, or give the layer a kernel on "
                                "the device");
    if (!c->dev->graph_begin)
        return base_error(PRT_ERR_UNSUPPORTED, "graphs: device %s has none",
                          c->dev->name);
    if (e->nb_sizes > 0 && !c->device_sizes)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "graphs: this engine's sizes are read on "
                          "the host between layers, which a graph cannot wait for");
    for (int32_t li = 0; li < e->nb_layers; li++)
        if (e->layers[li].host_dims && touches_earlier_sizes(c, &e->layers[li], li))
            return layer_not_capturable(&e->layers[li],
                                        "needs the true dims of data-dependent tensors "
                                        "on the host, which a graph cannot wait for");
    for (int32_t o = 0; o < e->nb_outputs; o++)
        if (!c->io_addr[e->nb_inputs + o] && c->alloc[e->nb_inputs + o])
            return base_error(PRT_ERR_UNSUPPORTED,
                              "graphs: output '%s' has an output "
                              "allocator; give it an address instead",
                              e->tensors[e->output_tensors[o]].name);
    return PRT_OK;
}

/* The capture itself, on the context's device. */
static prt_status capture(prt_context *c, void *stream, void **out)
{
    void *g = NULL;
    prt_status st, st2;
    if (c->graph) {
        c->dev->graph_destroy(c->graph);
        c->graph = NULL;
    }
    st = c->dev->graph_begin(stream);
    if (st)
        return st;
    c->capturing = 1;
    st = enqueue_run(c, stream);
    c->capturing = 0;
    /* The capture must end whatever happened, or the stream stays in it. */
    st2 = c->dev->graph_end(stream, &g);
    c->ran = 0;
    if (st) {
        if (!st2)
            c->dev->graph_destroy(g);
        return base_error_prefix(st, "capturing a graph");
    }
    if (st2)
        return st2;
    *out = g;
    return PRT_OK;
}

prt_status prt_context_capture_graph(prt_context *c, void *stream)
{
    void *g = NULL;
    int32_t saved;
    prt_status st;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_capture_graph: NULL context");
    st = check_capturable(c);
    if (st)
        return st;
    st = ctx_device_enter(c, "prt_context_capture_graph", &saved);
    if (st)
        return st;
    st = capture(c, stream, &g);
    ctx_device_leave(c->dev, saved);
    if (st)
        return st;
    c->graph = g;
    c->graph_gen = c->gen;
    memcpy(c->graph_values, c->input_values, sizeof(prt_dims) * (size_t)c->e->nb_inputs);
    return PRT_OK;
}

prt_status prt_context_launch_graph(prt_context *c, void *stream)
{
    int32_t saved;
    prt_status st;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_context_launch_graph: NULL context");
    if (!c->graph)
        return base_error(PRT_ERR_STATE,
                          "prt_context_launch_graph: no graph was captured "
                          "(prt_context_capture_graph)");
    if (c->gen != c->graph_gen)
        return base_error(
            PRT_ERR_STATE,
            "prt_context_launch_graph: shapes, addresses or "
            "memory changed since the graph was captured; capture it again");
    /* Values changed in place at the same address: no setter saw them. */
    st = ctx_check_graph_values(c);
    if (st)
        return st;
    c->ran = 0;
    st = ctx_resources_take_error(c);
    if (st)
        return st;
    st = ctx_device_enter(c, "prt_context_launch_graph", &saved);
    if (st)
        return st;
    st = c->dev->graph_launch(c->graph, stream);
    ctx_device_leave(c->dev, saved);
    if (st)
        return st;
    /* The replay computes what the captured run did: shapes known then stay
     * known; sizes come from the device when asked. */
    c->last_stream = stream;
    c->sizes_pending = c->device_sizes && c->e->nb_sizes > 0;
    c->ran = 1;
    return PRT_OK;
}

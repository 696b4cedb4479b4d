/*
 * CPU fallback inside an engine for another device (the builder's
 * prt_builder_config_set_cpu_fallback): which tensors a CPU layer needs in
 * host memory and which copies move them.
 *
 * The plan is derived from what the file already says, each layer's
 * device, so it needs no bytes of its own and no check beyond the
 * layers': every tensor keeps its place in the device's memory (arena,
 * user memory, weights), as in any engine, and a tensor a CPU layer
 * touches also gets a host copy in the context's host block. A copy is
 * made only where the two differ: into host memory when a CPU layer reads
 * a tensor that came from the device (the first such layer only: the
 * host copy stays valid), back to the device when a device layer, the
 * caller (an engine output) or the size machinery (a size tensor, checked
 * on the device) reads what a CPU layer wrote. Consecutive CPU layers
 * share host copies with no copy between. Constants need none: the
 * engine's weights are in host memory already.
 *
 * The host copies are not reused between tensors: fallback layers are few
 * and their tensors usually small (detection post-processing), and a
 * second lifetime plan for them is not worth its code yet.
 */
#include "engine/engine_impl.h"

static int64_t round_up(int64_t v)
{
    return (v + ENG_ARENA_ALIGN - 1) / ENG_ARENA_ALIGN * ENG_ARENA_ALIGN;
}

static int on_host_producer(const prt_engine *e, int32_t t)
{
    int32_t p = e->tensors[t].producer;
    return p >= 0 && engine_layer_on_host(e, &e->layers[p]);
}

/* Whether a running layer on the device, the caller or the device's size
 * check reads tensor t. */
static int read_on_device(const prt_engine *e, int32_t t)
{
    if (e->tensors[t].output_index >= 0 || e->tensors[t].size_id >= 0)
        return 1;
    for (int32_t li = e->tensors[t].producer + 1; li < e->nb_layers; li++) {
        const eng_layer *l = &e->layers[li];
        if (l->skipped || engine_layer_on_host(e, l))
            continue;
        for (int32_t k = 0; k < l->nb_inputs; k++)
            if (l->inputs[k] == t)
                return 1;
    }
    return 0;
}

prt_status engine_derive_fallback(prt_engine *e)
{
    uint8_t *fetched;
    int64_t size = 0, ws = 0;
    e->nb_host_layers = 0;
    e->host_size = e->host_workspace_offset = 0;
    for (int32_t t = 0; t < e->nb_tensors; t++)
        e->tensors[t].host_offset = -1;
    for (int32_t li = 0; li < e->nb_layers; li++) {
        base_free(e->layers[li].fetch);
        base_free(e->layers[li].push);
        e->layers[li].fetch = e->layers[li].push = NULL;
    }
    if (e->device == PRT_DEVICE_CPU)
        return PRT_OK;
    fetched = base_calloc((size_t)e->nb_tensors + 1, 1);
    if (!fetched)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "loading the engine: out of memory");
    for (int32_t li = 0; li < e->nb_layers; li++) {
        eng_layer *l = &e->layers[li];
        if (l->skipped || !engine_layer_on_host(e, l))
            continue;
        l->fetch = base_calloc((size_t)l->nb_inputs + 1, 1);
        l->push = base_calloc((size_t)l->nb_outputs + 1, 1);
        if (!l->fetch || !l->push) {
            base_free(fetched);
            return base_error(PRT_ERR_OUT_OF_MEMORY, "loading the engine: out of memory");
        }
        e->nb_host_layers++;
        if (l->workspace > ws)
            ws = l->workspace;
        for (int32_t k = 0; k < l->nb_inputs + l->nb_outputs; k++) {
            int is_in = k < l->nb_inputs;
            int32_t t = is_in ? l->inputs[k] : l->outputs[k - l->nb_inputs];
            eng_tensor *x = &e->tensors[t];
            if (x->const_offset >= 0)
                continue; /* read from the host weights */
            if (x->host_offset < 0) {
                x->host_offset = size;
                size += round_up(x->max_bytes);
            }
            if (is_in && !on_host_producer(e, t) && !fetched[t]) {
                l->fetch[k] = 1;
                fetched[t] = 1;
            }
            if (!is_in)
                l->push[k - l->nb_inputs] = (uint8_t)read_on_device(e, t);
        }
    }
    base_free(fetched);
    e->host_workspace_offset = size;
    e->host_size = size + ws;
    return PRT_OK;
}

void engine_fallback_bytes(const prt_engine *e, const eng_layer *l, int64_t *in,
                           int64_t *out)
{
    *in = *out = 0;
    for (int32_t k = 0; l->fetch && k < l->nb_inputs; k++)
        if (l->fetch[k])
            *in += e->tensors[l->inputs[k]].max_bytes;
    for (int32_t o = 0; l->push && o < l->nb_outputs; o++)
        if (l->push[o])
            *out += e->tensors[l->outputs[o]].max_bytes;
}

void engine_log_fallback(const prt_engine *e)
{
    int64_t total = 0;
    if (e->nb_host_layers == 0)
        return;
    for (int32_t li = 0; li < e->nb_layers; li++) {
        const eng_layer *l = &e->layers[li];
        int64_t in, out;
        if (!l->fetch)
            continue;
        engine_fallback_bytes(e, l, &in, &out);
        total += in + out;
        /* A warning: the layer is the engine's slow path, which a user
         * wants to see without asking for every message. */
        base_log(PRT_SEV_WARNING,
                 "layer '%s' (%s) runs on the CPU (CPU fallback): %lld bytes copied "
                 "from the device before it, %lld back after it, at the largest shapes",
                 l->name, l->plugin_name, (long long)in, (long long)out);
        for (int32_t k = 0; k < l->nb_inputs; k++)
            if (l->fetch[k])
                base_log(PRT_SEV_INFO, "  copy device -> host: '%s', %lld bytes",
                         e->tensors[l->inputs[k]].name,
                         (long long)e->tensors[l->inputs[k]].max_bytes);
        for (int32_t o = 0; o < l->nb_outputs; o++)
            if (l->push[o])
                base_log(PRT_SEV_INFO, "  copy host -> device: '%s', %lld bytes",
                         e->tensors[l->outputs[o]].name,
                         (long long)e->tensors[l->outputs[o]].max_bytes);
    }
    base_log(PRT_SEV_INFO,
             "CPU fallback: %d layer(s) on the CPU, %lld bytes of copies per run at the "
             "largest shapes, %lld bytes of host memory per context; each waits for "
             "the stream, so the engine cannot be captured into a graph",
             (int)e->nb_host_layers, (long long)total, (long long)e->host_size);
}

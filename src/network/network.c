/* Network definition: inputs, plugin layers, names, outputs. */
#include <stdio.h>
#include <string.h>

#include "base/plugin_label.h"
#include "network/network.h"

/* Grows *arr (of elem-size entries) so index *count fits. */
static int grow(void **arr, int32_t *cap, int32_t count, size_t elem)
{
    void *p;
    int32_t n;
    if (count < *cap)
        return 1;
    n = *cap ? *cap * 2 : 8;
    p = base_realloc(*arr, (size_t)n * elem);
    if (!p)
        return 0;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *arr = p;
    *cap = n;
    return 1;
}

prt_status prt_network_create(prt_network **out)
{
    prt_network *n;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_network_create: out is NULL");
    n = base_calloc(1, sizeof *n);
    if (!n)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_network_create: out of memory");
    *out = n;
    return PRT_OK;
}

void prt_network_destroy(prt_network *net)
{
    if (!net)
        return;
    for (int32_t i = 0; i < net->nb_tensors; i++) {
        base_free(net->tensors[i].name);
        base_free(net->tensors[i].const_data);
        base_quant_free(&net->tensors[i].quant);
    }
    for (int32_t i = 0; i < net->nb_layers; i++) {
        net_layer *l = &net->layers[i];
        base_free(l->name);
        base_free(l->inputs);
        base_free(l->shape_inputs);
        base_free(l->outputs);
        if (l->plugin)
            l->plugin->vt->runtime->destroy(l->plugin);
    }
    base_free(net->tensors);
    base_free(net->layers);
    base_free(net->inputs);
    base_free(net->outputs);
    base_free(net);
}

static int name_taken(const prt_network *net, const char *name, int32_t except)
{
    for (int32_t i = 0; i < net->nb_tensors; i++)
        if (i != except && net->tensors[i].name &&
            strcmp(net->tensors[i].name, name) == 0)
            return 1;
    return 0;
}

/* Appends a tensor with a copy of `name`; returns its id or -1 (OOM). */
static int32_t add_tensor(prt_network *net, const char *name)
{
    net_tensor *t;
    char *copy;
    if (!grow((void **)&net->tensors, &net->cap_tensors, net->nb_tensors,
              sizeof *net->tensors))
        return -1;
    copy = base_strdup(name);
    if (!copy)
        return -1;
    t = &net->tensors[net->nb_tensors];
    memset(t, 0, sizeof *t);
    t->name = copy;
    t->producer = -1;
    t->input_index = -1;
    t->const_bytes = -1;
    return net->nb_tensors++;
}

prt_status prt_network_add_input(prt_network *net, const char *name, int32_t dtype,
                                 const prt_dims *dims, int32_t *out_tensor)
{
    int32_t id;
    if (!net || !name || !dims || !out_tensor)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_add_input: NULL argument");
    if (!name[0])
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_add_input: empty input name");
    if (prt_dtype_size(dtype) == 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "input '%s': invalid dtype %d", name,
                          (int)dtype);
    if (dims->nb_dims < 0 || dims->nb_dims > PRT_MAX_DIMS)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "input '%s': rank %d is outside 0..%d", name,
                          (int)dims->nb_dims, PRT_MAX_DIMS);
    for (int32_t i = 0; i < dims->nb_dims; i++)
        if (dims->d[i] < -1)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "input '%s': dim %d is %lld (use -1 for dynamic)", name,
                              (int)i, (long long)dims->d[i]);
    if (name_taken(net, name, -1))
        return base_error(PRT_ERR_ALREADY_EXISTS,
                          "input '%s': a tensor of that name exists", name);
    if (!grow((void **)&net->inputs, &net->cap_inputs, net->nb_inputs,
              sizeof *net->inputs))
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_network_add_input: out of memory");
    id = add_tensor(net, name);
    if (id < 0)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_network_add_input: out of memory");
    net->tensors[id].dtype = dtype;
    net->tensors[id].dims = *dims;
    net->tensors[id].input_index = net->nb_inputs;
    net->inputs[net->nb_inputs++] = id;
    *out_tensor = id;
    return PRT_OK;
}

prt_status prt_network_add_constant(prt_network *net, const char *name, int32_t dtype,
                                    const prt_dims *dims, const void *data,
                                    int32_t *out_tensor)
{
    int64_t n;
    void *copy;
    int32_t id;
    if (!net || !name || !dims || !out_tensor || !name[0])
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_add_constant: NULL argument or empty name");
    if (prt_dtype_size(dtype) == 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "constant '%s': invalid dtype %d",
                          name, (int)dtype);
    n = base_volume(dims);
    if (n < 0 || dims->nb_dims > PRT_MAX_DIMS ||
        !base_mul_i64(n, (int64_t)prt_dtype_size(dtype), &n))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "constant '%s': dims must be static, rank 0..%d", name,
                          PRT_MAX_DIMS);
    if (n > 0 && !data)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "constant '%s': data is NULL", name);
    if (name_taken(net, name, -1))
        return base_error(PRT_ERR_ALREADY_EXISTS,
                          "constant '%s': a tensor of that name exists", name);
    copy = base_malloc((size_t)n);
    if (!copy)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "constant '%s': out of memory (%lld bytes)", name,
                          (long long)n);
    if (n)
        memcpy(copy, data, (size_t)n);
    id = add_tensor(net, name);
    if (id < 0) {
        base_free(copy);
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_network_add_constant: out of memory");
    }
    net->tensors[id].dtype = dtype;
    net->tensors[id].dims = *dims;
    net->tensors[id].const_data = copy;
    net->tensors[id].const_bytes = n;
    *out_tensor = id;
    return PRT_OK;
}

/* "ns::name" (base_plugin_label); only called once the core table is known
 * to be complete. */
static base_label plugin_name(const prt_plugin *p)
{
    return base_plugin_label(p->vt->core->plugin_namespace(p), p->vt->core->name(p));
}

/* The first required entry a table lacks: not covered by its struct_size,
 * or NULL. "" when it has them all. */
#define MISSING(tbl, type, member)                                                       \
    (((tbl)->struct_size < BASE_END_OF(type, member) || !(tbl)->member) ? #member : "")

static const char *first_missing(const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (names[i][0])
            return names[i];
    return "";
}

prt_status network_check_plugin(const prt_plugin *p, int need_build)
{
    const prt_plugin_vtable *vt;
    const char *miss;
    if (!p || !p->vt)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "plugin is NULL or has no vtable");
    vt = p->vt;
    if (vt->struct_size < sizeof(prt_plugin_vtable) || !vt->core || !vt->runtime)
        return base_error(PRT_ERR_PLUGIN,
                          "plugin vtable is too small (struct_size %u) or "
                          "lacks its %s table",
                          (unsigned)vt->struct_size,
                          !vt->core      ? "core"
                          : !vt->runtime ? "runtime"
                                         : "core or runtime");
    if (vt->abi_version > PRT_PLUGIN_ABI_VERSION)
        return base_error(PRT_ERR_VERSION, "plugin speaks ABI %u, this plugrt speaks %u",
                          vt->abi_version, PRT_PLUGIN_ABI_VERSION);
    {
        const char *names[] = {MISSING(vt->core, prt_plugin_core, name),
                               MISSING(vt->core, prt_plugin_core, version),
                               MISSING(vt->core, prt_plugin_core, plugin_namespace),
                               MISSING(vt->core, prt_plugin_core, devices)};
        miss = first_missing(names, 4);
        if (miss[0])
            return base_error(PRT_ERR_PLUGIN,
                              "plugin core table is incomplete: it lacks "
                              "the required entry '%s' (struct_size %u)",
                              miss, (unsigned)vt->core->struct_size);
    }
    {
        const char *names[] = {
            MISSING(vt->runtime, prt_plugin_runtime, enqueue),
            MISSING(vt->runtime, prt_plugin_runtime, attach_to_context),
            MISSING(vt->runtime, prt_plugin_runtime, get_fields_to_serialize),
            MISSING(vt->runtime, prt_plugin_runtime, clone),
            MISSING(vt->runtime, prt_plugin_runtime, destroy)};
        miss = first_missing(names, 5);
        if (miss[0])
            return base_error(PRT_ERR_PLUGIN,
                              "plugin '%s': runtime table is incomplete: it "
                              "lacks the required entry '%s' (struct_size %u)",
                              plugin_name(p).s, miss, (unsigned)vt->runtime->struct_size);
    }
    if (need_build) {
        const prt_plugin_build *b = vt->build;
        const char *names[4];
        if (!b)
            return base_error(PRT_ERR_PLUGIN,
                              "plugin '%s': build table is missing (was it "
                              "created for the runtime phase?)",
                              plugin_name(p).s);
        names[0] = MISSING(b, prt_plugin_build, nb_outputs);
        names[1] = MISSING(b, prt_plugin_build, get_output_dtypes);
        names[2] = MISSING(b, prt_plugin_build, get_output_shapes);
        names[3] = MISSING(b, prt_plugin_build, supports_format_combination);
        miss = first_missing(names, 4);
        if (miss[0])
            return base_error(PRT_ERR_PLUGIN,
                              "plugin '%s': build table is incomplete: it "
                              "lacks the required entry '%s' (struct_size %u)",
                              plugin_name(p).s, miss, (unsigned)b->struct_size);
    }
    return PRT_OK;
}

void network_destroy_plugin(prt_plugin *p)
{
    const prt_plugin_runtime *rt;
    if (!p || !p->vt || p->vt->struct_size < BASE_END_OF(prt_plugin_vtable, runtime))
        return;
    rt = p->vt->runtime;
    if (rt && rt->struct_size >= BASE_END_OF(prt_plugin_runtime, destroy) && rt->destroy)
        rt->destroy(p);
}

prt_status prt_network_add_plugin(prt_network *net, const int32_t *inputs,
                                  int32_t nb_inputs, const int32_t *shape_inputs,
                                  int32_t nb_shape_inputs, prt_plugin *plugin,
                                  int32_t *out_layer)
{
    prt_status st;
    net_layer *l;
    int32_t nb_out, id, first_tensor;
    char buf[256];
    if (!net || !plugin || !out_layer || nb_inputs < 0 || nb_shape_inputs < 0 ||
        (nb_inputs && !inputs) || (nb_shape_inputs && !shape_inputs))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_add_plugin: bad argument");
    st = network_check_plugin(plugin, 1);
    if (st)
        return st;
    /* The network owns its plugins: the same object twice would be
     * destroyed twice. */
    for (int32_t i = 0; i < net->nb_layers; i++)
        if (net->layers[i].plugin == plugin)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "plugin '%s' is already layer '%s' of this network; "
                              "clone it for another layer",
                              plugin_name(plugin).s, net->layers[i].name);
    for (int32_t i = 0; i < nb_inputs; i++)
        if (inputs[i] < 0 || inputs[i] >= net->nb_tensors)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "plugin '%s': input %d is tensor id %d, which does "
                              "not exist",
                              plugin_name(plugin).s, (int)i, (int)inputs[i]);
    for (int32_t i = 0; i < nb_shape_inputs; i++)
        if (shape_inputs[i] < 0 || shape_inputs[i] >= net->nb_tensors)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "plugin '%s': shape input %d is tensor id %d, which "
                              "does not exist",
                              plugin_name(plugin).s, (int)i, (int)shape_inputs[i]);
    nb_out = plugin->vt->build->nb_outputs(plugin);
    if (nb_out < 1 || nb_out > 64)
        return base_error(PRT_ERR_PLUGIN,
                          "plugin '%s' reports %d outputs (1..64 allowed)",
                          plugin_name(plugin).s, (int)nb_out);
    if (!grow((void **)&net->layers, &net->cap_layers, net->nb_layers,
              sizeof *net->layers))
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_network_add_plugin: out of memory");
    id = net->nb_layers;
    l = &net->layers[id];
    memset(l, 0, sizeof *l);
    snprintf(buf, sizeof buf, "%s_%d",
             plugin->vt->core->name(plugin) ? plugin->vt->core->name(plugin)
                                            : "(unnamed plugin)",
             (int)id);
    l->name = base_strdup(buf);
    l->inputs = base_malloc(sizeof(int32_t) * (size_t)(nb_inputs + 1));
    l->shape_inputs = base_malloc(sizeof(int32_t) * (size_t)(nb_shape_inputs + 1));
    l->outputs = base_malloc(sizeof(int32_t) * (size_t)nb_out);
    first_tensor = net->nb_tensors;
    if (!l->name || !l->inputs || !l->shape_inputs || !l->outputs)
        goto oom;
    for (int32_t o = 0; o < nb_out; o++) {
        int32_t t;
        snprintf(buf, sizeof buf, "%s:%d", l->name, (int)o);
        /* A default name that clashes with a user's name gets a suffix. */
        for (int k = 1; name_taken(net, buf, -1); k++)
            snprintf(buf, sizeof buf, "%s:%d.%d", l->name, (int)o, k);
        t = add_tensor(net, buf);
        if (t < 0)
            goto oom;
        net->tensors[t].producer = id;
        net->tensors[t].producer_output = o;
        l->outputs[o] = t;
    }
    if (nb_inputs)
        memcpy(l->inputs, inputs, sizeof(int32_t) * (size_t)nb_inputs);
    if (nb_shape_inputs)
        memcpy(l->shape_inputs, shape_inputs, sizeof(int32_t) * (size_t)nb_shape_inputs);
    l->nb_inputs = nb_inputs;
    l->nb_shape_inputs = nb_shape_inputs;
    l->nb_outputs = nb_out;
    l->plugin = plugin;
    net->nb_layers++;
    *out_layer = id;
    return PRT_OK;
oom:
    /* Roll back: the caller keeps the plugin. */
    for (int32_t t = first_tensor; t < net->nb_tensors; t++)
        base_free(net->tensors[t].name);
    net->nb_tensors = first_tensor;
    base_free(l->name);
    base_free(l->inputs);
    base_free(l->shape_inputs);
    base_free(l->outputs);
    memset(l, 0, sizeof *l);
    return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_network_add_plugin: out of memory");
}

int32_t prt_network_layer_count(const prt_network *net)
{
    return net ? net->nb_layers : 0;
}

int net_is_direct_shape_input(const prt_network *net, int32_t tensor)
{
    for (int32_t l = 0; l < net->nb_layers; l++)
        for (int32_t k = 0; k < net->layers[l].nb_shape_inputs; k++)
            if (net->layers[l].shape_inputs[k] == tensor)
                return 1;
    return 0;
}

prt_status prt_network_is_shape_input(const prt_network *net, int32_t tensor,
                                      int32_t *out)
{
    unsigned char *needed;
    if (!net || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_is_shape_input: NULL argument");
    if (tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_is_shape_input: tensor %d outside 0..%d",
                          (int)tensor, (int)net->nb_tensors - 1);
    needed = base_calloc((size_t)net->nb_tensors, 1);
    if (!needed)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_network_is_shape_input: out of memory");
    /* Consumers come after producers, so one backward pass carries the
     * need from each shape input to the inputs of the layers that state
     * its values. */
    for (int32_t i = net->nb_layers - 1; i >= 0; i--) {
        const net_layer *l = &net->layers[i];
        int carries = 0;
        for (int32_t k = 0; k < l->nb_shape_inputs; k++)
            needed[l->shape_inputs[k]] = 1;
        if (l->plugin->vt->build && BUILD_ENTRY(l->plugin, get_output_values))
            for (int32_t k = 0; k < l->nb_outputs && !carries; k++)
                carries = needed[l->outputs[k]];
        for (int32_t k = 0; carries && k < l->nb_inputs; k++)
            needed[l->inputs[k]] = 1;
    }
    *out = needed[tensor];
    base_free(needed);
    /* An input or a constant is known: only a short int32/int64 vector
     * can carry values (the builder's rule), so a float tensor that feeds
     * a Shape is no shape input; a float32 network input is one where a
     * layer takes it as a shape input itself (Resize's scales). */
    if (*out && net->tensors[tensor].producer < 0) {
        const net_tensor *t = &net->tensors[tensor];
        int64_t n = t->dims.nb_dims == 0 ? 1 : t->dims.d[0];
        int ok = t->dtype == PRT_INT32 || t->dtype == PRT_INT64;
        if (t->dtype == PRT_FLOAT32 && t->input_index >= 0)
            ok = net_is_direct_shape_input(net, tensor);
        /* A dynamic length is the profile's to pin (the builder checks). */
        if (!ok || t->dims.nb_dims > 1 || n == 0 || n > PRT_MAX_DIMS)
            *out = 0;
    }
    return PRT_OK;
}

int32_t prt_network_layer_output_count(const prt_network *net, int32_t layer)
{
    if (!net || layer < 0 || layer >= net->nb_layers)
        return 0;
    return net->layers[layer].nb_outputs;
}

prt_status prt_network_get_layer_output(const prt_network *net, int32_t layer,
                                        int32_t index, int32_t *out_tensor)
{
    if (!net || !out_tensor || layer < 0 || layer >= net->nb_layers)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_get_layer_output: no layer %d", (int)layer);
    if (index < 0 || index >= net->layers[layer].nb_outputs)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "layer '%s' has %d outputs; %d asked",
                          net->layers[layer].name, (int)net->layers[layer].nb_outputs,
                          (int)index);
    *out_tensor = net->layers[layer].outputs[index];
    return PRT_OK;
}

prt_status prt_network_set_tensor_name(prt_network *net, int32_t tensor, const char *name)
{
    char *copy;
    if (!net || !name || tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_set_tensor_name: no tensor %d", (int)tensor);
    if (!name[0])
        return base_error(PRT_ERR_INVALID_ARGUMENT, "tensor names may not be empty");
    if (name_taken(net, name, tensor))
        return base_error(PRT_ERR_ALREADY_EXISTS, "a tensor named '%s' already exists",
                          name);
    copy = base_strdup(name);
    if (!copy)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    base_free(net->tensors[tensor].name);
    net->tensors[tensor].name = copy;
    return PRT_OK;
}

prt_status prt_network_set_layer_name(prt_network *net, int32_t layer, const char *name)
{
    char *copy;
    if (!net || !name || !name[0] || layer < 0 || layer >= net->nb_layers)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_set_layer_name: bad layer or name");
    copy = base_strdup(name);
    if (!copy)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    base_free(net->layers[layer].name);
    net->layers[layer].name = copy;
    return PRT_OK;
}

prt_status prt_network_mark_output(prt_network *net, int32_t tensor)
{
    if (!net || tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_mark_output: no tensor %d", (int)tensor);
    if (net->tensors[tensor].is_output)
        return PRT_OK;
    if (net->tensors[tensor].input_index >= 0 || net->tensors[tensor].const_bytes >= 0)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "tensor '%s' is a network input or a constant and cannot "
                          "also be an output",
                          net->tensors[tensor].name);
    if (!grow((void **)&net->outputs, &net->cap_outputs, net->nb_outputs,
              sizeof *net->outputs))
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    net->outputs[net->nb_outputs++] = tensor;
    net->tensors[tensor].is_output = 1;
    return PRT_OK;
}

prt_status prt_network_find_tensor(const prt_network *net, const char *name,
                                   int32_t *out_tensor)
{
    if (!net || !name || !out_tensor)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_find_tensor: NULL argument");
    for (int32_t i = 0; i < net->nb_tensors; i++)
        if (strcmp(net->tensors[i].name, name) == 0) {
            *out_tensor = i;
            return PRT_OK;
        }
    return base_error(PRT_ERR_NOT_FOUND, "no tensor named '%s' in the network", name);
}

int32_t prt_network_input_count(const prt_network *net)
{
    return net ? net->nb_inputs : 0;
}

int32_t prt_network_output_count(const prt_network *net)
{
    return net ? net->nb_outputs : 0;
}

prt_status prt_network_get_input(const prt_network *net, int32_t index,
                                 int32_t *out_tensor)
{
    if (!net || !out_tensor || index < 0 || index >= net->nb_inputs)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_network_get_input: no input %d",
                          (int)index);
    *out_tensor = net->inputs[index];
    return PRT_OK;
}

prt_status prt_network_get_output(const prt_network *net, int32_t index,
                                  int32_t *out_tensor)
{
    if (!net || !out_tensor || index < 0 || index >= net->nb_outputs)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_get_output: no output %d", (int)index);
    *out_tensor = net->outputs[index];
    return PRT_OK;
}

prt_status prt_network_get_tensor(const prt_network *net, int32_t tensor,
                                  const char **out_name, int32_t *out_dtype,
                                  prt_dims *out_dims)
{
    const net_tensor *t;
    if (!net || tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_get_tensor: no tensor %d", (int)tensor);
    t = &net->tensors[tensor];
    if (out_name)
        *out_name = t->name;
    if (out_dtype)
        *out_dtype = t->producer >= 0 ? -1 : t->dtype;
    if (out_dims) {
        if (t->producer >= 0) {
            memset(out_dims, 0, sizeof *out_dims);
            out_dims->nb_dims = -1;
        } else {
            *out_dims = t->dims;
        }
    }
    return PRT_OK;
}

prt_status prt_network_expect_tensor(prt_network *net, int32_t tensor, int32_t dtype,
                                     const prt_dims *dims)
{
    net_tensor *t;
    if (!net || tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_expect_tensor: no tensor %d", (int)tensor);
    if (dtype != -1 && prt_dtype_size(dtype) == 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_expect_tensor: invalid dtype %d", (int)dtype);
    if (dims && (dims->nb_dims < -1 || dims->nb_dims > PRT_MAX_DIMS))
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_network_expect_tensor: rank %d",
                          (int)dims->nb_dims);
    t = &net->tensors[tensor];
    t->has_expect = 1;
    t->expect_dtype = dtype;
    if (dims)
        t->expect_dims = *dims;
    else
        t->expect_dims.nb_dims = -1;
    return PRT_OK;
}

prt_status prt_network_set_strict(prt_network *net, int32_t strict)
{
    if (!net)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_set_strict: NULL network");
    net->strict = strict != 0;
    return PRT_OK;
}

prt_status prt_network_set_tensor_quant(prt_network *net, int32_t tensor,
                                        const prt_quant_desc *quant)
{
    char what[160];
    if (!net || tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_set_tensor_quant: no tensor %d", (int)tensor);
    snprintf(what, sizeof what, "prt_network_set_tensor_quant: tensor '%s'",
             net->tensors[tensor].name ? net->tensors[tensor].name : "?");
    return base_quant_set(&net->tensors[tensor].quant, quant, what);
}

prt_status prt_network_get_tensor_quant(const prt_network *net, int32_t tensor,
                                        prt_quant_desc *out)
{
    prt_status st = base_query_check(out ? out->struct_size : 0, sizeof *out, out,
                                     "prt_network_get_tensor_quant", "prt_quant_desc");
    if (st)
        return st;
    if (!net || tensor < 0 || tensor >= net->nb_tensors)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_network_get_tensor_quant: no tensor %d", (int)tensor);
    *out = net->tensors[tensor].quant.d;
    out->struct_size = sizeof *out;
    out->abi_version = PRT_PLUGIN_ABI_VERSION;
    return PRT_OK;
}

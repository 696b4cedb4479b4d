/*
 * A plugin library for the Triton tests, written against plugin.h only, as
 * a third party's would be. Its one creator has the key the standard
 * library's CustomHardmax has ("", CustomHardmax, 1) but marks the
 * smallest element of each row instead of the largest, so a test can tell
 * which library a model's registry used: two models loading the two
 * libraries serve side by side and answer differently.
 *
 * Float32, linear, on the CPU; the hardmax axis (field "axis", default -1)
 * must be the last one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"

static const prt_host_services *host;

static prt_status fail(prt_status st, const char *msg)
{
    if (host && host->struct_size >= sizeof *host && host->set_error)
        host->set_error(host->host, st, msg);
    return st;
}

typedef struct argmin_plugin {
    prt_plugin base;
    int32_t axis;
    prt_field field;
    prt_field_collection fields;
} argmin_plugin;

static prt_plugin *argmin_new(int32_t axis);

static const char *am_name(const prt_plugin *self)
{
    return "CustomHardmax";
}
static const char *am_version(const prt_plugin *self)
{
    return "1";
}
static const char *am_namespace(const prt_plugin *self)
{
    return "";
}
static uint32_t am_devices(const prt_plugin *self)
{
    return 1u << PRT_DEVICE_CPU;
}

static int32_t am_nb_outputs(const prt_plugin *self)
{
    return 1;
}

static prt_status am_dtypes(prt_plugin *self, int32_t *out_types, int32_t nb_outputs,
                            const int32_t *in_types, int32_t nb_inputs)
{
    if (nb_inputs != 1 || nb_outputs != 1)
        return fail(PRT_ERR_INVALID_ARGUMENT, "argmin CustomHardmax takes one input");
    out_types[0] = in_types[0];
    return PRT_OK;
}

static prt_status am_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                            int32_t nb_inputs, const prt_dim_exprs *shape_inputs,
                            int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                            int32_t nb_outputs, prt_expr_builder *exprs)
{
    outputs[0] = inputs[0];
    return PRT_OK;
}

static int32_t am_formats(prt_plugin *self, int32_t pos,
                          const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                          int32_t nb_outputs)
{
    return in_out[pos].desc.dtype == PRT_FLOAT32 &&
           in_out[pos].desc.format == PRT_FORMAT_LINEAR;
}

static prt_status am_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, int32_t device,
                             void *stream)
{
    const argmin_plugin *p = (const argmin_plugin *)self;
    const prt_dims *d = &in_desc[0].dims;
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t rows = 1, n;
    int32_t axis = p->axis < 0 ? p->axis + d->nb_dims : p->axis;
    if (d->nb_dims < 1 || axis != d->nb_dims - 1)
        return fail(PRT_ERR_UNSUPPORTED, "argmin CustomHardmax: only the last axis");
    n = d->d[axis];
    for (int32_t k = 0; k < axis; k++)
        rows *= d->d[k];
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * n;
        int64_t best = 0;
        for (int64_t j = 1; j < n; j++)
            if (row[j] < row[best])
                best = j;
        for (int64_t j = 0; j < n; j++)
            y[r * n + j] = j == best ? 1.0f : 0.0f;
    }
    return PRT_OK;
}

static prt_plugin *am_clone(const prt_plugin *self)
{
    return argmin_new(((const argmin_plugin *)self)->axis);
}

static prt_plugin *am_attach(prt_plugin *self, prt_plugin_resources *resources)
{
    return am_clone(self);
}

static const prt_field_collection *am_fields(prt_plugin *self)
{
    return &((argmin_plugin *)self)->fields;
}

static void am_destroy(prt_plugin *self)
{
    free(self);
}

static const prt_plugin_core am_core = {sizeof(prt_plugin_core),
                                        PRT_PLUGIN_ABI_VERSION,
                                        am_name,
                                        am_version,
                                        am_namespace,
                                        am_devices};
static const prt_plugin_build am_build = {sizeof(prt_plugin_build),
                                          PRT_PLUGIN_ABI_VERSION,
                                          am_nb_outputs,
                                          am_dtypes,
                                          am_shapes,
                                          am_formats,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime am_runtime = {sizeof(prt_plugin_runtime),
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              NULL,
                                              am_enqueue,
                                              am_attach,
                                              am_fields,
                                              am_clone,
                                              am_destroy};
static const prt_plugin_vtable am_vtable = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &am_core, &am_build, &am_runtime};

static prt_plugin *argmin_new(int32_t axis)
{
    argmin_plugin *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->base.vt = &am_vtable;
    p->axis = axis;
    p->field.name = "axis";
    p->field.data = &p->axis;
    p->field.type = PRT_FIELD_INT32;
    p->field.length = 1;
    p->fields.nb_fields = 1;
    p->fields.fields = &p->field;
    return &p->base;
}

static prt_status am_create(const prt_plugin_creator *self, const char *layer_name,
                            const prt_field_collection *fields, int32_t phase,
                            prt_plugin **out)
{
    int32_t axis = -1;
    prt_plugin *p;
    for (int32_t k = 0; fields && k < fields->nb_fields; k++) {
        const prt_field *f = &fields->fields[k];
        if (!f->name || strcmp(f->name, "axis") != 0)
            continue;
        if (f->type != PRT_FIELD_INT32 || f->length != 1 || !f->data)
            return fail(PRT_ERR_INVALID_ARGUMENT,
                        "argmin CustomHardmax: axis is one int32");
        memcpy(&axis, f->data, sizeof axis);
    }
    if (!(p = argmin_new(axis)))
        return fail(PRT_ERR_OUT_OF_MEMORY, "argmin CustomHardmax: out of memory");
    *out = p;
    return PRT_OK;
}

static const prt_field_schema am_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis (must be the last)"},
};

static const prt_plugin_creator am_creator = {sizeof(prt_plugin_creator),
                                              PRT_PLUGIN_ABI_VERSION,
                                              "CustomHardmax",
                                              "1",
                                              "",
                                              1,
                                              am_schema,
                                              am_create,
                                              NULL};

static const prt_plugin_creator *const creators[] = {&am_creator};

static const prt_plugin_library library = {sizeof(prt_plugin_library),
                                           PRT_PLUGIN_ABI_VERSION,
                                           "testlib_argmin",
                                           "1",
                                           1,
                                           creators};

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    if (host_abi_version < PRT_PLUGIN_ABI_VERSION)
        return NULL;
    host = services;
    return &library;
}

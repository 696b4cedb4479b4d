/*
 * Plugins for compare_layers.sh: Relu on float32, right and wrong on
 * purpose, so that `plugrt run --compare-layers` has a layer to find.
 * Built against plugin.h alone, as any third party's library.
 *
 *   test::GoodRelu@1         max(x, 0)
 *   test::OffByOneRelu@1     max(x, 0), but the last element one too large
 *   test::LazyRelu@1         max(x, 0), but the last element left unwritten
 *   test::InPlaceGoodRelu@1  max(x, 0) in place (output 0 aliases input 0)
 *   test::InPlaceRelu@1      in place, and reads input element 0 again after
 *                            writing the output: right on a copy, wrong
 *                            when the input and output are one buffer (the
 *                            last element gains relu(x0) - x0)
 */
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"

enum { GOOD, OFF_BY_ONE, LAZY, INPLACE_GOOD, INPLACE_BAD };

typedef struct relu {
    prt_plugin base;
    int mode;
    const char *name; /* the creator's, static */
} relu;

static const prt_field_collection no_fields = {0, NULL};
static const prt_plugin_vtable relu_vtable;

static const char *relu_name(const prt_plugin *p)
{
    return ((const relu *)p)->name;
}

static const char *relu_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}

static const char *relu_namespace(const prt_plugin *p)
{
    (void)p;
    return "test";
}

static uint32_t relu_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CPU;
}

static int32_t relu_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 1;
}

static prt_status relu_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                              const int32_t *in, int32_t nb_in)
{
    (void)p;
    (void)nb_out;
    if (nb_in != 1)
        return PRT_ERR_INVALID_ARGUMENT;
    out[0] = in[0];
    return PRT_OK;
}

static prt_status relu_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                              prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *eb)
{
    (void)p;
    (void)nb_in;
    (void)shape_in;
    (void)nb_shape_in;
    (void)nb_out;
    (void)eb;
    out[0] = in[0];
    return PRT_OK;
}

static int32_t relu_formats(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                            int32_t nb_in, int32_t nb_out)
{
    (void)p;
    (void)nb_in;
    (void)nb_out;
    return io[pos].desc.dtype == PRT_FLOAT32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}

static int32_t relu_aliased(const prt_plugin *p, int32_t output)
{
    int mode = ((const relu *)p)->mode;
    return output == 0 && (mode == INPLACE_GOOD || mode == INPLACE_BAD) ? 0 : -1;
}

static prt_status relu_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                               const prt_tensor_desc *out_desc, const void *const *inputs,
                               void *const *outputs, void *workspace, int32_t device,
                               void *stream)
{
    int mode = ((relu *)p)->mode;
    const float *x = inputs[0];
    float *y = outputs[0], x0;
    int64_t n = 1;
    (void)out_desc;
    (void)workspace;
    (void)device;
    (void)stream;
    for (int32_t d = 0; d < in_desc[0].dims.nb_dims; d++)
        n *= in_desc[0].dims.d[d];
    if (n == 0)
        return PRT_OK;
    x0 = x[0];
    for (int64_t i = 0; i < (mode == LAZY ? n - 1 : n); i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    if (mode == OFF_BY_ONE)
        y[n - 1] += 1.0f;
    if (mode == INPLACE_BAD)
        y[n - 1] += x[0] - x0; /* 0 unless x is y */
    return PRT_OK;
}

static prt_plugin *relu_clone(const prt_plugin *p)
{
    relu *c = malloc(sizeof *c);
    if (c)
        memcpy(c, p, sizeof *c);
    return c ? &c->base : NULL;
}

static prt_plugin *relu_attach(prt_plugin *p, prt_plugin_resources *res)
{
    (void)res;
    return relu_clone(p);
}

static const prt_field_collection *relu_fields(prt_plugin *p)
{
    (void)p;
    return &no_fields;
}

static void relu_destroy(prt_plugin *p)
{
    free(p);
}

static const prt_plugin_core relu_core = {sizeof relu_core, PRT_PLUGIN_ABI_VERSION,
                                          relu_name,        relu_version,
                                          relu_namespace,   relu_devices};

static const prt_plugin_build relu_build = {
    .struct_size = sizeof relu_build,
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .nb_outputs = relu_nb_outputs,
    .get_output_dtypes = relu_dtypes,
    .get_output_shapes = relu_shapes,
    .supports_format_combination = relu_formats,
    .get_aliased_input = relu_aliased,
};

static const prt_plugin_runtime relu_runtime = {
    .struct_size = sizeof relu_runtime,
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .enqueue = relu_enqueue,
    .attach_to_context = relu_attach,
    .get_fields_to_serialize = relu_fields,
    .clone = relu_clone,
    .destroy = relu_destroy,
};

static const prt_plugin_vtable relu_vtable = {sizeof relu_vtable, PRT_PLUGIN_ABI_VERSION,
                                              &relu_core, &relu_build, &relu_runtime};

static prt_status relu_create(const prt_plugin_creator *self, const char *layer_name,
                              const prt_field_collection *fields, int32_t phase,
                              prt_plugin **out)
{
    relu *r = calloc(1, sizeof *r);
    (void)layer_name;
    (void)fields;
    (void)phase;
    if (!r)
        return PRT_ERR_OUT_OF_MEMORY;
    r->base.vt = &relu_vtable;
    r->mode = *(const int *)self->user;
    r->name = self->name;
    *out = &r->base;
    return PRT_OK;
}

static const int modes[] = {GOOD, OFF_BY_ONE, LAZY, INPLACE_GOOD, INPLACE_BAD};

#define CREATOR(m, name)                                                                 \
    {                                                                                    \
        sizeof(prt_plugin_creator), PRT_PLUGIN_ABI_VERSION, name, "1", "test", 0, NULL,  \
            relu_create, (void *)&modes[m]                                               \
    }

static const prt_plugin_creator creator_list[] = {
    CREATOR(GOOD, "GoodRelu"), CREATOR(OFF_BY_ONE, "OffByOneRelu"),
    CREATOR(LAZY, "LazyRelu"), CREATOR(INPLACE_GOOD, "InPlaceGoodRelu"),
    CREATOR(INPLACE_BAD, "InPlaceRelu")};
static const prt_plugin_creator *const creators[] = {&creator_list[0], &creator_list[1],
                                                     &creator_list[2], &creator_list[3],
                                                     &creator_list[4]};

static const prt_plugin_library library = {sizeof(prt_plugin_library),
                                           PRT_PLUGIN_ABI_VERSION,
                                           "compare_layers_plugin",
                                           "1",
                                           5,
                                           creators};

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    (void)services;
    if (host_abi_version < PRT_PLUGIN_ABI_VERSION)
        return NULL;
    return &library;
}

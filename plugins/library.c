/*
 * The entry point of the standard plugin library, libplugrt_plugins.
 *
 * The library is built with hidden visibility; prt_plugin_library_open is
 * its only exported symbol. The registry loads it with dlopen exactly as it
 * would load a third party's library.
 *
 * Plugins (namespace, name, version):
 *   ("",        "NonZeroPlugin",   "1")  plugins/nonzero.c
 *   ("",        "CustomHardmax",   "1")  plugins/hardmax.c
 *   ("example", "circ_pad_plugin", "1")  plugins/circ_pad.c
 *   ("example", "AddInPlace",      "1")  plugins/add_in_place.c
 *   ("example", "QuantFC",         "1")  plugins/quant_fc.c
 *
 * Conventions shared by all of them:
 *  - Devices: the CPU, and CUDA when the library is built with its kernels
 *    (PRT_PLUGINS_CUDA; plugins/<name>_cuda.cu, launched through cuda_launch.h)
 *    and the machine has a GPU. Enqueue on another device is
 *    PRT_ERR_UNSUPPORTED. On CUDA, work is queued on the stream only (no
 *    synchronization, allocation or default-stream call, so an enqueue can
 *    be captured in a graph), and inputs whose dims depend on data are read
 *    through dims_device.
 *  - Phases: a build-phase plugin carries core, build and runtime tables; a
 *    runtime-phase plugin (recreated from an engine) has vt->build == NULL,
 *    as plugin.h describes. Both are the same object otherwise.
 *  - Fields: unknown names are ignored; a known name with the wrong type or
 *    length, or given twice, is PRT_ERR_INVALID_ARGUMENT naming the plugin,
 *    the field and the expected and actual type; absent fields take their
 *    defaults. get_fields_to_serialize returns every parameter explicitly.
 *  - Tactics: the default (0) everywhere; NonZeroPlugin and CustomHardmax
 *    list CUDA alternatives (cuda_launch.h) in builds with the kernels.
 */
#include "common.h"

#include "plugrt/version.h"

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);

static const prt_plugin_creator *const library_creators[] = {
    &plg_nonzero_creator,      &plg_hardmax_creator,  &plg_circ_pad_creator,
    &plg_add_in_place_creator, &plg_quant_fc_creator,
};

static const prt_plugin_library library = {
    sizeof(prt_plugin_library),
    PRT_PLUGIN_ABI_VERSION,
    "plugrt_plugins",
    PRT_VERSION,
    (int32_t)(sizeof library_creators / sizeof library_creators[0]),
    library_creators,
};

/* Serves every host whose ABI is at least the one this library was built
 * against: tables only grow, so a newer host reads ours through their
 * struct_size. An older host could not read our tables; refuse it. */
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    if (host_abi_version < PRT_PLUGIN_ABI_VERSION)
        return NULL;
    plg_host_set(services);
    return &library;
}

/* A plugin library from the future: it answers with a description whose
 * abi_version is one above this header's, which the host must refuse. */
#include "plugrt/plugin.h"

static prt_status future_create(const prt_plugin_creator *self, const char *layer_name,
                                const prt_field_collection *fields, int32_t phase,
                                prt_plugin **out)
{
    return PRT_ERR_UNSUPPORTED;
}

static const prt_plugin_creator future_creator = {sizeof(prt_plugin_creator),
                                                  PRT_PLUGIN_ABI_VERSION + 1,
                                                  "Future",
                                                  "1",
                                                  "test",
                                                  0,
                                                  NULL,
                                                  future_create,
                                                  NULL};

static const prt_plugin_creator *const creators[] = {&future_creator};

static const prt_plugin_library library = {sizeof(prt_plugin_library),
                                           PRT_PLUGIN_ABI_VERSION + 1,
                                           "testlib_future",
                                           "1",
                                           1,
                                           creators};

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    /* Deliberately ignores host_abi_version, as a broken library might. */
    return &library;
}

/* A plugin library that offers the same key, test::Dup@1, twice. Loading it
 * must fail and leave the registry as it was. */
#include "plugrt/plugin.h"

static prt_status dup_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    return PRT_ERR_UNSUPPORTED;
}

static const prt_plugin_creator unique_creator = {sizeof(prt_plugin_creator),
                                                  PRT_PLUGIN_ABI_VERSION,
                                                  "Unique",
                                                  "1",
                                                  "test",
                                                  0,
                                                  NULL,
                                                  dup_create,
                                                  NULL};
static const prt_plugin_creator dup_first = {sizeof(prt_plugin_creator),
                                             PRT_PLUGIN_ABI_VERSION,
                                             "Dup",
                                             "1",
                                             "test",
                                             0,
                                             NULL,
                                             dup_create,
                                             NULL};
static const prt_plugin_creator dup_second = {sizeof(prt_plugin_creator),
                                              PRT_PLUGIN_ABI_VERSION,
                                              "Dup",
                                              "1",
                                              "test",
                                              0,
                                              NULL,
                                              dup_create,
                                              NULL};

static const prt_plugin_creator *const creators[] = {&unique_creator, &dup_first,
                                                     &dup_second};

static const prt_plugin_library library = {
    sizeof(prt_plugin_library), PRT_PLUGIN_ABI_VERSION, "testlib_dup", "1", 3, creators};

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    return host_abi_version >= PRT_PLUGIN_ABI_VERSION ? &library : NULL;
}

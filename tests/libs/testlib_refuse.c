/* A plugin library that cannot serve the host's ABI: its entry point says
 * why through set_error and returns NULL. */
#include "plugrt/plugin.h"

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    if (services && services->struct_size >= sizeof *services && services->set_error)
        services->set_error(services->host, PRT_ERR_VERSION,
                            "testlib_refuse serves no ABI at all");
    return NULL;
}

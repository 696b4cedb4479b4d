/* Placeholder: the plugins helper replaces this file with the library's
 * entry point. */
#include "plugrt/plugin.h"

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version,
                        const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version,
                        const prt_host_services *services)
{
    (void)host_abi_version;
    (void)services;
    return NULL;
}

/*
 * What every one-file test plugin library of tests/check needs alike, in
 * the library itself (each .so stands alone, as a third party's would):
 * the host services kept from the entry point and an error helper, the
 * identity entries of the core table, and the entry point over one
 * creator. Include it once, from the plugin's one .c file.
 */
#ifndef PLUGRT_TESTS_CHECK_SCAFFOLD_H
#define PLUGRT_TESTS_CHECK_SCAFFOLD_H

#include "plugrt/plugin.h"

static const prt_host_services *host;

/* set_error with the message, and the status back. */
static prt_status fail(prt_status st, const char *msg)
{
    if (host && host->set_error)
        host->set_error(host->host, st, msg);
    return st;
}

/* The core table `core`: name NAME (an expression), version "1",
 * namespace "check", devices DEVICES (an expression). */
#define SCAFFOLD_CORE(NAME, DEVICES)                                                     \
    static const char *core_name(const prt_plugin *self)                                 \
    {                                                                                    \
        (void)self;                                                                      \
        return NAME;                                                                     \
    }                                                                                    \
    static const char *core_version(const prt_plugin *self)                              \
    {                                                                                    \
        (void)self;                                                                      \
        return "1";                                                                      \
    }                                                                                    \
    static const char *core_namespace(const prt_plugin *self)                            \
    {                                                                                    \
        (void)self;                                                                      \
        return "check";                                                                  \
    }                                                                                    \
    static uint32_t core_devices(const prt_plugin *self)                                 \
    {                                                                                    \
        (void)self;                                                                      \
        return DEVICES;                                                                  \
    }                                                                                    \
    static const prt_plugin_core core = {sizeof core,    PRT_PLUGIN_ABI_VERSION,         \
                                         core_name,      core_version,                   \
                                         core_namespace, core_devices}

/* The library LIBNAME with the one creator CREATOR, and its entry point,
 * which keeps the host services. */
#define SCAFFOLD_LIBRARY(LIBNAME, CREATOR)                                               \
    static const prt_plugin_creator *const creators[] = {&(CREATOR)};                    \
    static const prt_plugin_library library = {                                          \
        sizeof library, PRT_PLUGIN_ABI_VERSION, LIBNAME, "1", 1, creators};              \
    PRT_PLUGIN_EXPORT const prt_plugin_library *prt_plugin_library_open(                 \
        uint32_t host_abi_version, const prt_host_services *services);                   \
    PRT_PLUGIN_EXPORT const prt_plugin_library *prt_plugin_library_open(                 \
        uint32_t host_abi_version, const prt_host_services *services)                    \
    {                                                                                    \
        if (host_abi_version < PRT_PLUGIN_ABI_VERSION)                                   \
            return NULL;                                                                 \
        host = services;                                                                 \
        return &library;                                                                 \
    }

#endif /* PLUGRT_TESTS_CHECK_SCAFFOLD_H */

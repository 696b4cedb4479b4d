/* A test plugin library with one creator, test::Foo@1. testlib_foo_b.c
 * offers the same key; the two are told apart by their field schema
 * ("alpha" here, "beta" there) and their user data (the string "a" / "b"),
 * so tests can see which library a registry found. */
#include "plugrt/plugin.h"

static const prt_host_services *host;

static prt_status foo_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    if (host && host->struct_size >= sizeof *host && host->set_error)
        host->set_error(host->host, PRT_ERR_UNSUPPORTED,
                        "test::Foo (a) only exists to be found");
    return PRT_ERR_UNSUPPORTED;
}

static const prt_field_schema foo_fields[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, "a scale"},
};

static const prt_plugin_creator foo_creator = {sizeof(prt_plugin_creator),
                                               PRT_PLUGIN_ABI_VERSION,
                                               "Foo",
                                               "1",
                                               "test",
                                               1,
                                               foo_fields,
                                               foo_create,
                                               (void *)"a"};

static const prt_plugin_creator *const creators[] = {&foo_creator};

static const prt_plugin_library library = {sizeof(prt_plugin_library),
                                           PRT_PLUGIN_ABI_VERSION,
                                           "testlib_foo_a",
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

/* A test plugin library with one creator, test::Foo@1: the same key as
 * testlib_foo_a.c, told apart by its field schema ("beta", not "alpha") and
 * its user data (the string "b", not "a"). */
#include "plugrt/plugin.h"

static const prt_host_services *host;

static prt_status foo_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    if (host && host->struct_size >= sizeof *host && host->set_error)
        host->set_error(host->host, PRT_ERR_UNSUPPORTED,
                        "test::Foo (b) only exists to be found");
    return PRT_ERR_UNSUPPORTED;
}

static const prt_field_schema foo_fields[] = {
    {"beta", PRT_FIELD_INT32, -1, "some counts"},
};

static const prt_plugin_creator foo_creator = {sizeof(prt_plugin_creator),
                                               PRT_PLUGIN_ABI_VERSION,
                                               "Foo",
                                               "1",
                                               "test",
                                               1,
                                               foo_fields,
                                               foo_create,
                                               (void *)"b"};

static const prt_plugin_creator *const creators[] = {&foo_creator};

static const prt_plugin_library library = {sizeof(prt_plugin_library),
                                           PRT_PLUGIN_ABI_VERSION,
                                           "testlib_foo_b",
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

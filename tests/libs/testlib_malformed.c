/* A plugin library that answers with a broken description, chosen by the
 * environment variable PRT_TESTLIB_FLAW (read at each call of the entry
 * point), so one library covers every flaw the host must catch:
 *   small_struct    description struct_size too small for `creators`
 *   null_creators   nb_creators 1, creators NULL
 *   negative_count  nb_creators -1
 *   null_creator    creators[0] NULL
 *   no_create       a creator without a create function
 *   null_name       a creator whose name is NULL
 *   bad_field       a creator whose field schema has an unknown type
 *   zero_abi        description abi_version 0
 * Anything else: a valid library with one creator, test::Malformed@1. */
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"

static prt_status mal_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    return PRT_ERR_UNSUPPORTED;
}

static const prt_field_schema bad_fields[] = {
    {"weird", 99, 1, NULL},
};

static prt_plugin_creator creator;
static const prt_plugin_creator *creators[1];
static prt_plugin_library library;

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    const char *flaw = getenv("PRT_TESTLIB_FLAW");
    if (!flaw)
        flaw = "";

    memset(&creator, 0, sizeof creator);
    creator.struct_size = sizeof creator;
    creator.abi_version = PRT_PLUGIN_ABI_VERSION;
    creator.name = "Malformed";
    creator.version = "1";
    creator.plugin_namespace = "test";
    creator.create = mal_create;
    creators[0] = &creator;

    memset(&library, 0, sizeof library);
    library.struct_size = sizeof library;
    library.abi_version = PRT_PLUGIN_ABI_VERSION;
    library.name = "testlib_malformed";
    library.version = "1";
    library.nb_creators = 1;
    library.creators = creators;

    if (strcmp(flaw, "small_struct") == 0)
        library.struct_size = 8;
    else if (strcmp(flaw, "null_creators") == 0)
        library.creators = NULL;
    else if (strcmp(flaw, "negative_count") == 0)
        library.nb_creators = -1;
    else if (strcmp(flaw, "null_creator") == 0)
        creators[0] = NULL;
    else if (strcmp(flaw, "no_create") == 0)
        creator.create = NULL;
    else if (strcmp(flaw, "null_name") == 0)
        creator.name = NULL;
    else if (strcmp(flaw, "bad_field") == 0) {
        creator.nb_fields = 1;
        creator.fields = bad_fields;
    } else if (strcmp(flaw, "zero_abi") == 0)
        library.abi_version = 0;
    return &library;
}

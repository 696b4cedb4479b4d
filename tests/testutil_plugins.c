/* Test helpers that need the registry (a separate object, so tests of
 * lower layers link without it). */
#include "testutil.h"

prt_registry *tu_registry_with_plugins(void)
{
    prt_registry *reg = NULL;
    if (prt_registry_create(&reg) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, "prt_registry_create");
        return NULL;
    }
    if (prt_registry_load_library(reg, PRT_PLUGINS_PATH) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, "load " PRT_PLUGINS_PATH);
        prt_registry_destroy(reg);
        return NULL;
    }
    return reg;
}

prt_plugin *tu_make_plugin(const prt_registry *reg, const char *ns,
                           const char *name, const char *version,
                           const prt_field *fields, int32_t nb_fields)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection fc;
    prt_plugin *p = NULL;
    if (prt_registry_find_creator(reg, ns, name, version, &c) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, "find creator");
        return NULL;
    }
    fc.nb_fields = nb_fields;
    fc.fields = fields;
    if (c->create(c, name, &fc, PRT_PHASE_BUILD, &p) != PRT_OK || !p) {
        tu_fail(__FILE__, __LINE__, "create plugin");
        return NULL;
    }
    return p;
}

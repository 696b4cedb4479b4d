/* A library the dynamic loader refuses: it calls a function nothing
 * defines, and RTLD_NOW resolves every symbol at load. */
#include "plugrt/plugin.h"

int32_t testlib_unresolved_missing(void);

PRT_PLUGIN_EXPORT int32_t testlib_unresolved_answer(void);
PRT_PLUGIN_EXPORT int32_t testlib_unresolved_answer(void)
{
    return testlib_unresolved_missing();
}

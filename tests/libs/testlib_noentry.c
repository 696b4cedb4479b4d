/* A shared library that is not a plugin library: it exports a function, but
 * not PRT_PLUGIN_ENTRY_SYMBOL. */
#include "plugrt/plugin.h"

PRT_PLUGIN_EXPORT int32_t testlib_noentry_answer(void);
PRT_PLUGIN_EXPORT int32_t testlib_noentry_answer(void)
{
    return 42;
}

/* Compiled with -std=c11 -Wall -Wextra -pedantic -Werror and only
 * include/ on the path: plugin.h must stand alone. */
#include "plugrt/plugin.h"

int plugin_h_alone_size(void);
int plugin_h_alone_size(void)
{
    return (int)sizeof(prt_plugin_creator);
}

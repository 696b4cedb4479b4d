/* Engine descriptions for people, shared by build and inspect. */
#include "describe.h"

#include <string.h>

char *cli_plugin_key(const char *plugin_namespace, const char *name, const char *version,
                     char *buf, size_t cap)
{
    if (plugin_namespace && *plugin_namespace)
        snprintf(buf, cap, "%s::%s@%s", plugin_namespace, name, version);
    else
        snprintf(buf, cap, "%s@%s", name, version);
    return buf;
}

char *cli_mask_str(uint32_t mask, char *buf, size_t cap)
{
    size_t n = 0;
    int first = 1;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; i < 32 && n < cap; i++) {
        if (!(mask & (1u << i)))
            continue;
        n += (size_t)snprintf(buf + n, cap - n, "%s%d", first ? "dim " : ", ", i);
        first = 0;
    }
    return buf;
}

int cli_is_builtin(const prt_layer_info *li)
{
    return strcmp(li->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0;
}

void cli_print_io(FILE *f, const prt_engine *engine, const char *indent)
{
    int32_t n = prt_engine_io_count(engine);
    size_t w = 4;
    for (int32_t i = 0; i < n; i++) {
        prt_io_info io;
        if (prt_engine_get_io(engine, i, &io) == PRT_OK && strlen(io.name) > w)
            w = strlen(io.name);
    }
    for (int32_t i = 0; i < n; i++) {
        prt_io_info io;
        char dims[128], mask[64];
        if (prt_engine_get_io(engine, i, &io) != PRT_OK)
            continue;
        char line[512];
        size_t len;
        int k = snprintf(line, sizeof line, "%s%-6s %-*s %-8s %-14s", indent,
                         io.is_input ? "input" : "output", (int)w, io.name,
                         prt_dtype_name(io.dtype), cli_format_dims(&io.dims, dims, sizeof dims));
        len = k < 0 ? 0 : (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
        if (io.is_size_tensor)
            len += (size_t)snprintf(line + len, sizeof line - len, " size tensor");
        if (len < sizeof line && io.data_dependent_mask)
            len += (size_t)snprintf(line + len, sizeof line - len, " data-dependent %s",
                                    cli_mask_str(io.data_dependent_mask, mask, sizeof mask));
        /* The padded columns leave trailing blanks when nothing follows. */
        if (len >= sizeof line)
            len = sizeof line - 1;
        while (len > 0 && line[len - 1] == ' ')
            line[--len] = '\0';
        fputs(line, f);
        fputc('\n', f);
    }
}

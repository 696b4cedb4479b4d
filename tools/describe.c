/* Engine descriptions for people, shared by build, inspect and run. */
#include "describe.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

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

int cli_engine_io(const prt_engine *engine, prt_io_info **out, int32_t *count)
{
    int32_t n = prt_engine_io_count(engine);
    prt_io_info *io = calloc((size_t)(n > 0 ? n : 1), sizeof *io);
    *out = NULL;
    *count = 0;
    if (!io) {
        cli_error("out of memory for the list of the engine's %d inputs and outputs",
                  (int)n);
        return CLI_FAIL;
    }
    for (int32_t i = 0; i < n; i++) {
        prt_status st;
        io[i].struct_size = sizeof io[i];
        st = prt_engine_get_io(engine, i, &io[i]);
        if (st) {
            cli_error_api(st, "cannot read input/output %d of the engine", (int)i);
            free(io);
            return CLI_FAIL;
        }
    }
    *out = io;
    *count = n;
    return CLI_OK;
}

int cli_print_io(FILE *f, const prt_engine *engine, const char *indent)
{
    prt_io_info *io;
    int32_t n;
    size_t w = 4;
    if (cli_engine_io(engine, &io, &n) != CLI_OK)
        return CLI_FAIL;
    for (int32_t i = 0; i < n; i++) {
        char en[CLI_ESC_CAP];
        size_t len = strlen(cli_escape(io[i].name, en, sizeof en));
        if (len > w)
            w = len;
    }
    for (int32_t i = 0; i < n; i++) {
        char dims[128], mask[64], en[CLI_ESC_CAP], line[512];
        size_t len;
        int k =
            snprintf(line, sizeof line, "%s%-6s %-*s %-8s %-14s", indent,
                     io[i].is_input ? "input" : "output", (int)w,
                     cli_escape(io[i].name, en, sizeof en), prt_dtype_name(io[i].dtype),
                     cli_format_dims(&io[i].dims, dims, sizeof dims));
        len = k < 0 ? 0 : (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
        if (io[i].is_size_tensor)
            len += (size_t)snprintf(line + len, sizeof line - len, " size tensor");
        if (len < sizeof line && io[i].data_dependent_mask)
            len += (size_t)snprintf(
                line + len, sizeof line - len, " data-dependent %s",
                cli_mask_str(io[i].data_dependent_mask, mask, sizeof mask));
        /* The padded columns leave trailing blanks when nothing follows. */
        if (len >= sizeof line)
            len = sizeof line - 1;
        while (len > 0 && line[len - 1] == ' ')
            line[--len] = '\0';
        fputs(line, f);
        fputc('\n', f);
    }
    free(io);
    return CLI_OK;
}

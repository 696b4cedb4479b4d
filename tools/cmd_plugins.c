/*
 * plugrt plugins: the creators plugin libraries offer, with their field
 * schemas (name, type, length, doc). Each library is loaded into a registry
 * of its own, so two libraries that define the same key can both be
 * listed. Without arguments, the standard plugin library is listed.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "describe.h"
#include "fields.h"
#include "json.h"
#include "options.h"
#include "text.h"

enum { OPT_HELP = 1, OPT_JSON, OPT_BUILTINS, OPT_VERBOSE };

static const cli_opt plugins_opts[] = {
    {"--help", "-h", 0, OPT_HELP},
    {"--json", NULL, 0, OPT_JSON},
    {"--builtins", NULL, 0, OPT_BUILTINS},
    {"--verbose", "-v", 0, OPT_VERBOSE},
    {NULL, NULL, 0, 0},
};

static void plugins_help(void)
{
    printf("Usage: plugrt plugins [LIB.so...] [--builtins] [--json]\n"
           "\n"
           "Lists the plugin creators each library offers (namespace, name, version)\n"
           "with their fields (name, type, length, doc). Without a library, lists the\n"
           "standard plugin library (PLUGRT_PLUGINS overrides its path).\n"
           "\n"
           "Options:\n"
           "  --builtins       also list plugrt's built-in ops, with the devices each\n"
           "                   runs on and the dtypes its kernel there takes (of\n"
           "                   input 0; Where's X; the output without inputs)\n"
           "  --json           machine-readable output (one JSON document)\n"
           "  -v, --verbose    print the library's log\n"
           "  -h, --help       this help\n"
           "\n"
           "Exit status: 0 success, 1 a library could not be loaded, 2 usage.\n");
}

/* A library's creators and their schemas are its author's text: escaped
 * like names from a plan. */
static void print_creator(const prt_plugin_creator *c)
{
    char key[256], e1[CLI_ESC_CAP], e2[CLI_ESC_CAP];
    size_t w = 4;
    printf("  %s\n", cli_escape(cli_plugin_key(c->plugin_namespace, c->name, c->version,
                                               key, sizeof key),
                                e1, sizeof e1));
    if (c->nb_fields <= 0 || !c->fields) {
        printf("    (no fields)\n");
        return;
    }
    for (int32_t i = 0; i < c->nb_fields; i++) {
        size_t len =
            c->fields[i].name ? strlen(cli_escape(c->fields[i].name, e1, sizeof e1)) : 1;
        if (len > w)
            w = len;
    }
    for (int32_t i = 0; i < c->nb_fields; i++) {
        const prt_field_schema *f = &c->fields[i];
        char type[48];
        if (f->length < 0)
            snprintf(type, sizeof type, "%s[*]", cli_field_type_name(f->type));
        else
            snprintf(type, sizeof type, "%s[%lld]", cli_field_type_name(f->type),
                     (long long)f->length);
        printf("    %-*s  %-12s %s\n", (int)w,
               f->name ? cli_escape(f->name, e1, sizeof e1) : "?", type,
               f->doc ? cli_escape(f->doc, e2, sizeof e2) : "");
    }
}

static void builtin_devices(int32_t i, json_writer *w);

/* builtin: the creator's index among the built-ins (its devices are
 * listed), -1 for a library's. */
static void json_creator(json_writer *w, const prt_plugin_creator *c, int32_t builtin)
{
    char key[256];
    json_begin_object(w, NULL);
    json_string(
        w, "key",
        cli_plugin_key(c->plugin_namespace, c->name, c->version, key, sizeof key));
    json_string(w, "namespace", c->plugin_namespace);
    json_string(w, "name", c->name);
    json_string(w, "version", c->version);
    json_begin_array(w, "fields");
    for (int32_t i = 0; c->fields && i < c->nb_fields; i++) {
        const prt_field_schema *f = &c->fields[i];
        json_begin_object(w, NULL);
        json_string(w, "name", f->name);
        json_string(w, "type", cli_field_type_name(f->type));
        json_int(w, "length", f->length);
        json_string(w, "doc", f->doc);
        json_end_object(w);
    }
    json_end_array(w);
    if (builtin >= 0)
        builtin_devices(builtin, w);
    json_end_object(w);
}

/* Lists one library; CLI_FAIL if it does not load. */
static int list_library(const char *path, json_writer *w)
{
    prt_registry *reg = NULL;
    prt_status st = prt_registry_create(&reg);
    char buf[PATH_MAX];
    int32_t n;
    uint64_t hash = 0;
    if (st == PRT_OK)
        st = prt_registry_load_library(reg, cli_library_path(path, buf, sizeof buf));
    if (st) {
        /* The message names the library (prt_registry_load_library). */
        cli_error("%s [%s]", prt_last_error(), prt_status_name(st));
        prt_registry_destroy(reg);
        return CLI_FAIL;
    }
    n = prt_registry_creator_count(reg);
    if (n > 0)
        prt_registry_get_creator_library(reg, prt_registry_get_creator(reg, 0), &hash);
    if (w) {
        char h[24];
        snprintf(h, sizeof h, "%016llx", (unsigned long long)hash);
        json_begin_object(w, NULL);
        json_string(w, "path", path);
        json_string(w, "content_hash", h);
        json_begin_array(w, "creators");
        for (int32_t i = 0; i < n; i++)
            json_creator(w, prt_registry_get_creator(reg, i), -1);
        json_end_array(w);
        json_end_object(w);
    } else {
        printf("%s (content hash %016llx): %d creator%s\n", path,
               (unsigned long long)hash, (int)n, n == 1 ? "" : "s");
        for (int32_t i = 0; i < n; i++)
            print_creator(prt_registry_get_creator(reg, i));
    }
    prt_registry_destroy(reg);
    return CLI_OK;
}

/* "float32 float16" for a dtype mask (prt_builtin_get_dtypes). */
static const char *dtype_list(uint32_t mask, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int32_t t = 0; t < PRT_DTYPE_COUNT && n < cap; t++)
        if ((mask >> t) & 1u)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " " : "",
                                  prt_dtype_name(t));
    return buf;
}

/* Built-in op i's devices and the dtypes of its key input on each (the
 * CPU always; another device where this build has its kernel). */
static void builtin_devices(int32_t i, json_writer *w)
{
    char list[160];
    if (w)
        json_begin_object(w, "devices");
    else
        printf("    runs on:");
    for (int32_t d = 0, first = 1; d < PRT_DEVICE_COUNT; d++) {
        uint32_t mask = 0;
        if (prt_builtin_get_dtypes(i, d, &mask) != PRT_OK || !mask)
            continue;
        if (w) {
            json_begin_array(w, cli_device_name(d));
            for (int32_t t = 0; t < PRT_DTYPE_COUNT; t++)
                if ((mask >> t) & 1u)
                    json_string(w, NULL, prt_dtype_name(t));
            json_end_array(w);
        } else {
            printf("%s %s (%s)", first ? "" : ";", cli_device_name(d),
                   dtype_list(mask, list, sizeof list));
        }
        first = 0;
    }
    if (w)
        json_end_object(w);
    else
        printf("\n");
}

static void list_builtins(json_writer *w)
{
    int32_t n = prt_builtin_creator_count();
    if (w) {
        json_begin_array(w, "builtins");
        for (int32_t i = 0; i < n; i++)
            json_creator(w, prt_builtin_get_creator(i), i);
        json_end_array(w);
        return;
    }
    printf("built-in ops (namespace %s): %d\n", PRT_BUILTIN_NAMESPACE, (int)n);
    for (int32_t i = 0; i < n; i++) {
        print_creator(prt_builtin_get_creator(i));
        builtin_devices(i, NULL);
    }
}

int cmd_plugins(int argc, char **argv)
{
    cli_scanner s;
    const char *v;
    const char *libs[256];
    int nb_libs = 0, id, json = 0, builtins = 0, verbose = 0, rc = CLI_OK;
    json_writer w;
    cli_scan_init(&s, argc, argv, plugins_opts);
    while ((id = cli_scan_next(&s, &v)) != CLI_SCAN_END) {
        switch (id) {
        case CLI_SCAN_ERROR:
            return CLI_USAGE;
        case CLI_SCAN_POSITIONAL:
            if (nb_libs == (int)(sizeof libs / sizeof libs[0]))
                return cli_usage("too many libraries (at most %d)", nb_libs);
            libs[nb_libs++] = v;
            break;
        case OPT_HELP:
            plugins_help();
            return CLI_OK;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_BUILTINS:
            builtins = 1;
            break;
        case OPT_VERBOSE:
            verbose = 1;
            break;
        default:
            return cli_usage("internal: unhandled option");
        }
    }
    cli_install_logger(verbose);
    if (nb_libs == 0 && !builtins) {
        const char *def = cli_default_plugins_path();
        if (!def) {
            cli_error("no standard plugin library found; name a library (plugrt plugins "
                      "LIB.so) or set PLUGRT_PLUGINS");
            return CLI_FAIL;
        }
        libs[nb_libs++] = def;
    }
    if (json) {
        json_init(&w, stdout);
        json_begin_object(&w, NULL);
        json_begin_array(&w, "libraries");
    }
    for (int i = 0; i < nb_libs; i++) {
        if (!json && i)
            putchar('\n');
        if (list_library(libs[i], json ? &w : NULL) != CLI_OK)
            rc = CLI_FAIL;
    }
    if (json)
        json_end_array(&w);
    if (builtins) {
        if (!json && nb_libs)
            putchar('\n');
        list_builtins(json ? &w : NULL);
    }
    if (json) {
        json_end_object(&w);
        json_finish(&w);
    }
    return rc;
}

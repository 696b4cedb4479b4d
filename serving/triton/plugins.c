/*
 * A model's plugin registry: the `plugins` parameter, and where the
 * standard plugin library (libplugrt_plugins.so: NonZero, CustomHardmax,
 * circular padding, AddInPlace) is.
 *
 * Without the parameter a model's registry holds the standard library, as
 * `plugrt run` loads it by default. With it, the registry holds exactly the
 * libraries it lists: the list replaces the default, it does not add to it.
 * So what a model may call is what its configuration says; a library that
 * defines a key the standard one defines too (a CustomHardmax@1 of one's
 * own) serves without a switch to leave the default out, and two listed
 * libraries that clash are refused naming both, nothing skipped in silence.
 * The name `standard` in the list stands for the standard library:
 * `plugins: "standard,lib/mine.so"` adds a library to it.
 *
 * The standard library is looked for once, when the backend is initialized:
 *   1. $PLUGRT_PLUGINS, as for the plugrt program (set but empty: none);
 *   2. libplugrt_plugins.so beside this backend library (a backend
 *      directory with libplugrt copied in, as the README installs it);
 *   3. libplugrt_plugins.so beside libplugrt (a build tree, an installed
 *      prefix: where the Python package finds it too).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "model.h"

#define TP_PATH_MAX 4096
#define TP_STD_NAME "libplugrt_plugins.so"

/* Written once by tp_standard_plugins_find (TRITONBACKEND_Initialize, before
 * any model loads), read only after. */
static char std_path[TP_PATH_MAX];
static char std_why[2 * TP_PATH_MAX];

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* TP_STD_NAME in the directory of the shared object holding `addr`: 1 when
 * that file exists (std_path), else 0 with the path tried added to
 * `tried`. */
static int beside(const void *addr, const char *whose, char *tried, size_t tried_size)
{
    Dl_info info;
    const char *slash;
    size_t o = strlen(tried);
    if (!dladdr(addr, &info) || !info.dli_fname ||
        !(slash = strrchr(info.dli_fname, '/')))
        return 0;
    snprintf(std_path, sizeof std_path, "%.*s/" TP_STD_NAME,
             (int)(slash - info.dli_fname), info.dli_fname);
    if (is_file(std_path))
        return 1;
    if (!strstr(tried, std_path)) /* the backend may sit beside libplugrt */
        snprintf(tried + o, tried_size - o, "%s%s (beside %s)", o ? " or " : "", std_path,
                 whose);
    std_path[0] = 0;
    return 0;
}

void tp_standard_plugins_find(void)
{
    static const char anchor = 0; /* an address in this library */
    const char *env = getenv("PLUGRT_PLUGINS");
    char tried[sizeof std_why - 128] = "";
    std_path[0] = std_why[0] = 0;
    if (env) {
        if (!env[0])
            snprintf(std_why, sizeof std_why, "PLUGRT_PLUGINS is set and empty");
        else if (is_file(env))
            snprintf(std_path, sizeof std_path, "%s", env);
        else
            snprintf(std_why, sizeof std_why, "PLUGRT_PLUGINS is %s, which is no file",
                     env);
        return;
    }
    if (!beside(&anchor, "the backend", tried, sizeof tried) &&
        !beside((const void *)prt_registry_create, "libplugrt", tried, sizeof tried))
        snprintf(std_why, sizeof std_why,
                 "not found at %s; set PLUGRT_PLUGINS to its path",
                 tried[0] ? tried : "the backend's or libplugrt's directory");
}

const char *tp_standard_plugins(void)
{
    return std_path[0] ? std_path : NULL;
}

/* Loads a library into the model's registry; `item` is what the plugins
 * parameter called it (NULL: the default). */
static TRITONSERVER_Error *load(tp_model *m, const char *path, const char *item)
{
    prt_status st = prt_registry_load_library(m->reg, path);
    if (st) {
        /* plugrt's message names the library, and on a clash both. */
        char what[TP_PATH_MAX + 192];
        if (item)
            snprintf(what, sizeof what, "model '%s': parameter plugins: '%s'", m->name,
                     item);
        else
            snprintf(what, sizeof what, "model '%s': the standard plugin library",
                     m->name);
        return tp_prt_error(st, what);
    }
    return NULL;
}

/* One item of the plugins parameter: `standard`, or a library's path
 * (relative to the model's directory). */
static TRITONSERVER_Error *load_item(tp_model *m, char *item, void *ctx)
{
    const char *dir = ctx;
    char path[TP_PATH_MAX];
    if (strcmp(item, "standard") == 0) {
        if (!tp_standard_plugins())
            return tp_error(TRITONSERVER_ERROR_NOT_FOUND,
                            "model '%s': parameter plugins names the standard plugin "
                            "library, which is not here: %s",
                            m->name, std_why);
        return load(m, tp_standard_plugins(), item);
    }
    if (item[0] == '/')
        snprintf(path, sizeof path, "%s", item);
    else
        snprintf(path, sizeof path, "%s/%s", dir, item);
    return load(m, path, item);
}

TRITONSERVER_Error *tp_model_load_plugins(tp_model *m, const char *list, const char *dir)
{
    if (list)
        return tp_each_item(m, list, load_item, (void *)(uintptr_t)dir);
    if (!tp_standard_plugins()) {
        /* A model without plugins still serves; one that needs them is
         * refused by plugrt naming the plugin, and the log says why the
         * standard library is missing. */
        tp_log(TRITONSERVER_LOG_WARN,
               "model '%s': no standard plugin library for its registry: %s", m->name,
               std_why);
        m->no_standard = std_why;
        return NULL;
    }
    return load(m, tp_standard_plugins(), NULL);
}

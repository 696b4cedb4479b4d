/* Messages, progress, the log route, files and plugin libraries: what every
 * subcommand of the plugrt program shares. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---- messages ------------------------------------------------------------ */

static const char *command = "";
/* The log callback may run on the benchmark's threads. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress_shown;
static int tty = -1;

void cli_set_command(const char *name)
{
    command = name ? name : "";
}
const char *cli_command(void)
{
    return command;
}

int cli_is_tty(void)
{
    if (tty < 0)
        tty = isatty(STDERR_FILENO) ? 1 : 0;
    return tty;
}

/* Caller holds out_lock. */
static void clear_locked(void)
{
    if (progress_shown) {
        fputs("\r\033[K", stderr);
        progress_shown = 0;
    }
}

static void vmessage(const char *kind, const char *fmt, va_list ap, const char *tail)
{
    pthread_mutex_lock(&out_lock);
    clear_locked();
    fprintf(stderr, "plugrt%s%s: %s", *command ? " " : "", command, kind);
    vfprintf(stderr, fmt, ap);
    if (tail)
        fputs(tail, stderr);
    fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(&out_lock);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("error: ", fmt, ap, NULL);
    va_end(ap);
}

void cli_error_api(prt_status st, const char *fmt, ...)
{
    char tail[2600];
    const char *msg = prt_last_error();
    va_list ap;
    snprintf(tail, sizeof tail, ": %s [%s]", *msg ? msg : "(no message)",
             prt_status_name(st));
    va_start(ap, fmt);
    vmessage("error: ", fmt, ap, tail);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("warning: ", fmt, ap, NULL);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("note: ", fmt, ap, NULL);
    va_end(ap);
}

int cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("", fmt, ap, NULL);
    va_end(ap);
    fprintf(stderr, "Try 'plugrt%s%s --help'.\n", *command ? " " : "", command);
    return CLI_USAGE;
}

void cli_progress(const char *fmt, ...)
{
    char line[160];
    va_list ap;
    if (!cli_is_tty())
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&out_lock);
    /* One terminal line: a long message is cut rather than wrapped. */
    line[78] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    progress_shown = 1;
    pthread_mutex_unlock(&out_lock);
}

void cli_progress_clear(void)
{
    pthread_mutex_lock(&out_lock);
    clear_locked();
    fflush(stderr);
    pthread_mutex_unlock(&out_lock);
}

static int log_verbose;

static void log_to_stderr(void *user, int32_t severity, const char *message)
{
    static const char *const kinds[] = {
        "log: error: ", "warning: ", "info: ", "verbose: "};
    (void)user;
    if (severity > PRT_SEV_WARNING && !log_verbose) {
        cli_progress("%s", message);
        return;
    }
    if (severity == PRT_SEV_ERROR && !log_verbose)
        return;
    pthread_mutex_lock(&out_lock);
    clear_locked();
    fprintf(stderr, "plugrt%s%s: %s%s\n", *command ? " " : "", command,
            kinds[severity < 0   ? 0
                  : severity > 3 ? 3
                                 : severity],
            message);
    fflush(stderr);
    pthread_mutex_unlock(&out_lock);
}

void cli_install_logger(int verbose)
{
    int32_t max = PRT_SEV_WARNING;
    log_verbose = verbose;
    if (verbose || cli_is_tty())
        max = PRT_SEV_VERBOSE;
    prt_set_logger(log_to_stderr, NULL, max);
}

/* ---- small helpers ------------------------------------------------------- */

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *cli_format_bytes(int64_t bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = -1;
    if (bytes < 1024) {
        snprintf(buf, cap, "%lld B", (long long)bytes);
        return buf;
    }
    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

char *cli_format_dims(const prt_dims *dims, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap)
        buf[0] = '\0';
    if (dims->nb_dims == 0) {
        snprintf(buf, cap, "scalar");
        return buf;
    }
    for (int32_t i = 0; i < dims->nb_dims && i < PRT_MAX_DIMS && n < cap; i++) {
        if (dims->d[i] < 0)
            n += (size_t)snprintf(buf + n, cap - n, "%s?", i ? "x" : "");
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "x" : "",
                                  (long long)dims->d[i]);
    }
    return buf;
}

const char *cli_format_name(int32_t format)
{
    return format == PRT_FORMAT_LINEAR ? "linear"
           : format == PRT_FORMAT_CHW8 ? "chw8"
                                       : "unknown";
}

const char *cli_device_name(int32_t device)
{
    return device == PRT_DEVICE_CPU    ? "cpu"
           : device == PRT_DEVICE_CUDA ? "cuda"
                                       : "unknown";
}

int64_t cli_volume(const prt_dims *dims)
{
    int64_t v = 1;
    if (dims->nb_dims < 0 || dims->nb_dims > PRT_MAX_DIMS)
        return -1;
    for (int32_t i = 0; i < dims->nb_dims; i++) {
        if (dims->d[i] < 0 || (dims->d[i] && v > INT64_MAX / dims->d[i]))
            return -1;
        v *= dims->d[i];
    }
    return v;
}

int cli_read_file(const char *path, void **out, size_t *size)
{
    FILE *f = fopen(path, "rb");
    long end;
    void *buf;
    if (!f) {
        cli_error("cannot open %s: %s", path, strerror(errno));
        return CLI_FAIL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        cli_error("cannot read %s (not a regular file?)", path);
        fclose(f);
        return CLI_FAIL;
    }
    buf = malloc(end ? (size_t)end : 1);
    if (!buf || fread(buf, 1, (size_t)end, f) != (size_t)end) {
        cli_error("%s %s", buf ? "read error in" : "out of memory reading", path);
        free(buf);
        fclose(f);
        return CLI_FAIL;
    }
    fclose(f);
    *out = buf;
    *size = (size_t)end;
    return CLI_OK;
}

static int write_file_mode(const char *path, const char *mode, const void *data,
                           size_t size)
{
    FILE *f = fopen(path, mode);
    int ok;
    if (!f && errno == EEXIST) {
        cli_error("%s already exists; nothing was overwritten", path);
        return CLI_FAIL;
    }
    if (!f) {
        cli_error("cannot create %s: %s", path, strerror(errno));
        return CLI_FAIL;
    }
    ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok) {
        cli_error("writing %s failed: %s", path, strerror(errno));
        remove(path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_write_file(const char *path, const void *data, size_t size)
{
    return write_file_mode(path, "wb", data, size);
}

int cli_write_new_file(const char *path, const void *data, size_t size)
{
    return write_file_mode(path, "wbx", data, size);
}

int64_t cli_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
}

int cli_make_dirs(const char *path)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    struct stat st;
    if (n == 0 || n >= sizeof buf) {
        cli_error("invalid directory name '%s'", path);
        return CLI_FAIL;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            cli_error("cannot create directory %s: %s", buf, strerror(errno));
            return CLI_FAIL;
        }
        buf[i] = path[i];
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cli_error("%s is not a directory", path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_is_onnx_path(const char *path)
{
    size_t n = strlen(path);
    const char *ext = ".onnx";
    if (n < 5)
        return 0;
    for (size_t i = 0; i < 5; i++) {
        char c = path[n - 5 + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != ext[i])
            return 0;
    }
    return 1;
}

char *cli_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

void cli_safe_name(const char *name, char *buf, size_t cap)
{
    size_t i = 0;
    for (; name[i] && i + 1 < cap; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        buf[i] = ok ? c : '_';
    }
    if (cap)
        buf[i < cap ? i : cap - 1] = '\0';
}

/* ---- plugin libraries ---------------------------------------------------- */

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *cli_default_plugins_path(void)
{
    static char beside[PATH_MAX + 64];
    const char *env = getenv("PLUGRT_PLUGINS");
    char exe[PATH_MAX];
    ssize_t n;
    if (env)
        return *env ? env : NULL;
    /* An installed program finds the library next to it or in the lib
     * directory it was installed with (PRT_PLUGINS_FROM_BIN, relative to the
     * program's directory); a program in its build tree, where neither is,
     * uses the library built beside it. */
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        char *slash;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(beside, sizeof beside, "%s/libplugrt_plugins.so", exe);
            if (file_exists(beside))
                return beside;
#ifdef PRT_PLUGINS_FROM_BIN
            snprintf(beside, sizeof beside,
                     "%s/" PRT_PLUGINS_FROM_BIN "/libplugrt_plugins.so", exe);
            if (file_exists(beside))
                return beside;
#endif
        }
    }
#ifdef PRT_DEFAULT_PLUGINS
    if (file_exists(PRT_DEFAULT_PLUGINS))
        return PRT_DEFAULT_PLUGINS;
#endif
    return NULL;
}

const char *cli_library_path(const char *arg, char *buf, size_t cap)
{
    /* dlopen searches the system's paths for a name without a slash; a
     * user naming a file in the current directory means that file. */
    if (strchr(arg, '/') || !file_exists(arg) ||
        (size_t)snprintf(buf, cap, "./%s", arg) >= cap)
        return arg;
    return buf;
}

int cli_plugin_opts_add(cli_plugin_opts *o, const char *path)
{
    const char **libs = realloc(o->libs, sizeof *libs * (size_t)(o->nb_libs + 1));
    if (!libs) {
        cli_error("out of memory for the list of --plugins libraries");
        return CLI_FAIL;
    }
    libs[o->nb_libs++] = path;
    o->libs = libs;
    return CLI_OK;
}

void cli_plugin_opts_free(cli_plugin_opts *o)
{
    free(o->libs);
    o->libs = NULL;
    o->nb_libs = 0;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

prt_registry *cli_registry_create(const cli_plugin_opts *o)
{
    prt_registry *reg = NULL;
    const char *def = o->no_default ? NULL : cli_default_plugins_path();
    prt_status st = prt_registry_create(&reg);
    if (st) {
        cli_error_api(st, "cannot create a plugin registry");
        return NULL;
    }
    /* Libraries given by the user come first, so that on a key clash theirs
     * is the one loaded. */
    for (int i = 0; i < o->nb_libs; i++) {
        char buf[PATH_MAX];
        st =
            prt_registry_load_library(reg, cli_library_path(o->libs[i], buf, sizeof buf));
        if (st == PRT_OK)
            continue;
        /* The message names the library (prt_registry_load_library). */
        cli_error("%s [%s]", prt_last_error(), prt_status_name(st));
        if (st == PRT_ERR_IO)
            fprintf(stderr, "  check the path; it must be a shared library (.so)\n");
        else if (st == PRT_ERR_NOT_FOUND)
            fprintf(stderr, "  a plugin library exports %s (see plugrt/plugin.h)\n",
                    PRT_PLUGIN_ENTRY_SYMBOL);
        else if (st == PRT_ERR_ALREADY_EXISTS)
            fprintf(stderr, "  two libraries define the same plugin; load only one "
                            "of them\n");
        prt_registry_destroy(reg);
        return NULL;
    }
    if (!def)
        return reg;
    for (int i = 0; i < o->nb_libs; i++)
        if (same_file(o->libs[i], def))
            return reg;
    st = prt_registry_load_library(reg, def);
    if (st == PRT_ERR_ALREADY_EXISTS)
        cli_warn("the standard plugin library was not loaded: %s (a library given "
                 "with --plugins defines the same plugin; --no-default-plugins "
                 "silences this)",
                 prt_last_error());
    else if (st)
        cli_warn("the standard plugin library was not loaded: %s [%s] (set "
                 "PLUGRT_PLUGINS to its path, or pass --no-default-plugins)",
                 prt_last_error(), prt_status_name(st));
    return reg;
}

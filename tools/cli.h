/*
 * The plugrt command-line program: what the subcommands share.
 *
 * The program uses only the public API (plugrt.h, onnx.h). Each subcommand
 * lives in its own file (cmd_*.c) and returns an exit code:
 *   0 success, 1 the job failed, 2 wrong usage.
 * Messages go to stderr as "plugrt <cmd>: error: ...", and every error says
 * what to try next where there is something to try.
 */
#ifndef PLUGRT_TOOLS_CLI_H
#define PLUGRT_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugrt.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))

int cmd_build(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_plugins(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_new_plugin(int argc, char **argv);
int cmd_check(int argc, char **argv);

/* ---- messages (common.c) ------------------------------------------------- */

/* Names the running subcommand in messages ("build"). Static string. */
void cli_set_command(const char *name);
const char *cli_command(void);
/* "plugrt <cmd>: error: <msg>". */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* The same, followed by ": <prt_last_error()> [<status name>]". */
void cli_error_api(prt_status st, const char *fmt, ...) CLI_PRINTF(2, 3);
void cli_warn(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_note(const char *fmt, ...) CLI_PRINTF(1, 2);
/* A usage error: the message, then "Try 'plugrt <cmd> --help'." Returns
 * CLI_USAGE. */
int cli_usage(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Progress on a terminal: a transient status line on stderr, shown only
 * when stderr is a TTY. cli_progress_clear erases it. */
int cli_is_tty(void);
void cli_progress(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_progress_clear(void);

/* Routes plugrt's log to stderr: warnings always; with verbose, everything;
 * on a terminal, verbose messages (per-layer build steps) as progress.
 * Error-severity messages duplicate the statuses we print and appear only
 * with verbose. Thread-safe. */
void cli_install_logger(int verbose);

/* ---- small helpers (common.c) -------------------------------------------- */

double cli_now(void); /* monotonic seconds */
/* "12.5 MiB" into buf (at least 32 bytes); returns buf. */
char *cli_format_bytes(int64_t bytes, char *buf, size_t cap);
/* "1x3x224x224", "?" for -1, "scalar" for rank 0; returns buf. */
char *cli_format_dims(const prt_dims *dims, char *buf, size_t cap);
const char *cli_format_name(int32_t format);
const char *cli_device_name(int32_t device);
/* Volume of concrete dims; -1 if any dim is negative or it overflows. */
int64_t cli_volume(const prt_dims *dims);

/* Reads a whole file; *out (free with free()) and *size. Prints the error
 * and returns CLI_FAIL on failure. */
int cli_read_file(const char *path, void **out, size_t *size);
int cli_write_file(const char *path, const void *data, size_t size);
/* The same for a file that must not exist yet (never overwrites: an
 * existing file is an error naming it). */
int cli_write_new_file(const char *path, const void *data, size_t size);
/* Size of a regular file; -1 if there is none at path. */
int64_t cli_file_size(const char *path);
/* mkdir -p; prints the error on failure. */
int cli_make_dirs(const char *path);
/* 1 if path ends with ".onnx" (any case). */
int cli_is_onnx_path(const char *path);
/* A copy of s (free with free()); exits nowhere: NULL on OOM. */
char *cli_strdup(const char *s);
/* Tensor name made safe for a file name: [A-Za-z0-9._-] kept, others '_'. */
void cli_safe_name(const char *name, char *buf, size_t cap);

/* ---- plugin libraries (common.c) ----------------------------------------- */

typedef struct cli_plugin_opts {
    const char **libs; /* --plugins, in order */
    int nb_libs;
    int no_default; /* --no-default-plugins */
} cli_plugin_opts;

/* The standard library to load by default: $PLUGRT_PLUGINS if set (empty
 * means none), else the path CMake compiled in. May be NULL. */
const char *cli_default_plugins_path(void);
/* A registry holding the --plugins libraries, then the default library
 * (unless disabled or the same file as one given). Prints errors; NULL on
 * failure. */
prt_registry *cli_registry_create(const cli_plugin_opts *o);
/* The path to load for a --plugins argument: a bare name of a file in the
 * current directory becomes ./name (dlopen would search the system's
 * paths instead); anything else is returned as given. */
const char *cli_library_path(const char *arg, char *buf, size_t cap);
/* Appends `path` to o->libs (argv storage, borrowed). CLI_FAIL on OOM. */
int cli_plugin_opts_add(cli_plugin_opts *o, const char *path);
void cli_plugin_opts_free(cli_plugin_opts *o);

#endif /* PLUGRT_TOOLS_CLI_H */

/*
 * The checker for plugins that have no library file: Python plugins, whose
 * creators the plugrt package builds in its own process (ctypes structs
 * behind plugin.h's tables).
 *
 * libplugrt_check.so holds the checker (tools/CMakeLists.txt) and exports
 * prt_check_main: `python -m plugrt.check MODULE` (python/src/plugrt/
 * check.py) imports the module, makes an entry point that answers with
 * the creators it registered, and calls prt_check_main with it. The
 * checker then runs as `plugrt check` does, each check in a forked child;
 * the child calls the entry point instead of dlopen (chk_library_open),
 * so the plugin runs in a copy of the Python process that made it.
 * ctypes releases the GIL around prt_check_main, so a child's calls into
 * Python take it as any foreign thread's would.
 *
 * `plugrt check --python MODULE` runs that same command: the program
 * cannot make Python plugins itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define PYTHON_OPT "--python"
#define PYTHON_OPT_LEN (sizeof PYTHON_OPT - 1)

/* "--python" or "--python=..." (the scanner's forms of an option with a
 * value); args after "--" are positionals. */
static int is_python_opt(const char *arg)
{
    return strncmp(arg, PYTHON_OPT, PYTHON_OPT_LEN) == 0 &&
           (arg[PYTHON_OPT_LEN] == '\0' || arg[PYTHON_OPT_LEN] == '=');
}

int chk_python_asked(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (is_python_opt(argv[i]))
            return 1;
    return 0;
}

int chk_python_exec(int argc, char **argv)
{
    const char *python = getenv("PLUGRT_PYTHON");
    const char *module = NULL;
    char **args;
    int n = 0;
    if (chk_library_is_given())
        return cli_usage("--python is the plugrt program's: here the plugins are "
                         "already Python's");
    if (!python || !python[0])
        python = "python3";
    /* python -m plugrt.check MODULE, then every other argument in order. */
    args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    args[n++] = (char *)python;
    args[n++] = "-m";
    args[n++] = "plugrt.check";
    n++; /* the module, below */
    for (int i = 1; i < argc; i++) {
        if (module || !is_python_opt(argv[i])) {
            args[n++] = argv[i];
            continue;
        }
        if (argv[i][PYTHON_OPT_LEN] == '=')
            module = argv[i] + PYTHON_OPT_LEN + 1;
        else if (i + 1 < argc)
            module = argv[++i];
        else
            module = "";
    }
    if (!module || !module[0]) {
        free(args);
        return cli_usage("--python needs a module: --python MODULE[:NAME]");
    }
    args[3] = (char *)module;
    args[n] = NULL;
    fflush(NULL);
    execvp(python, args);
    cli_error("cannot run %s (%s): `plugrt check --python` runs `%s -m plugrt.check`, "
              "so it needs a Python with the plugrt package; PLUGRT_PYTHON names one",
              python, strerror(errno), python);
    free(args);
    return CLI_FAIL;
}

PRT_API int prt_check_main(int argc, char **argv, prt_plugin_entry_fn entry)
{
    int rc;
    if (argc < 2 || !argv || !entry) {
        fprintf(stderr, "prt_check_main: needs argv[0], argv[1] naming the library and "
                        "an entry point\n");
        return CLI_USAGE;
    }
    cli_set_command("check");
    chk_library_give_entry(entry);
    rc = cmd_check(argc, argv);
    chk_library_give_entry(NULL);
    /* The report is C's stdout, which the caller (Python) does not flush. */
    fflush(NULL);
    return rc;
}

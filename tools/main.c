/*
 * plugrt: build, run and inspect plugrt engines from the command line, in
 * the spirit of TensorRT's trtexec but with subcommands.
 *
 *   plugrt build model.onnx -o model.plan [options]
 *   plugrt run model.plan|model.onnx [options]
 *   plugrt inspect model.plan|model.onnx [--json]
 *   plugrt plugins [lib.so...]
 *   plugrt devices [--json]
 *   plugrt check lib.so [--plugin KEY] [--fields FILE.json] [--json]
 *   plugrt new-plugin NAME [--dir DIR]
 *
 * Exit codes: 0 success, 1 the job failed, 2 wrong usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"build", cmd_build, "import an ONNX model and build a plan (engine file)"},
    {"run", cmd_run, "run a plan or an ONNX model: outputs, latency, comparison"},
    {"inspect", cmd_inspect,
     "show a plan's I/O, profiles, layers, plugins and memory plan, or an ONNX "
     "model's I/O and nodes"},
    {"plugins", cmd_plugins, "list the plugin creators of libraries and their fields"},
    {"devices", cmd_devices, "list the devices plugrt can use here, or why it cannot"},
    {"check", cmd_check, "check a plugin library against the plugin contract"},
    {"new-plugin", cmd_new_plugin,
     "write a minimal, working plugin project to start from"},
};
#define NB_COMMANDS (int)(sizeof commands / sizeof commands[0])

/* "unknown command 'biuld'; did you mean 'build'?" and the list. */
static int unknown_command(const char *cmd)
{
    const char *names[NB_COMMANDS], *near;
    for (int i = 0; i < NB_COMMANDS; i++)
        names[i] = commands[i].name;
    near = cmd[0] == '-' ? NULL : cli_nearest(cmd, names, NB_COMMANDS);
    fprintf(stderr, "plugrt: unknown %s '%s'", cmd[0] == '-' ? "option" : "command", cmd);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, " (commands:");
    for (int i = 0; i < NB_COMMANDS; i++)
        fprintf(stderr, " %s", commands[i].name);
    fprintf(stderr, ")\nTry 'plugrt --help'.\n");
    return CLI_USAGE;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: plugrt <command> [options]\n\nCommands:\n");
    for (int i = 0; i < NB_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n"
               "Run 'plugrt <command> --help' for the options of a command.\n"
               "Exit status: 0 success, 1 the job failed, 2 wrong usage.\n"
               "Environment: PLUGRT_PLUGINS=path overrides the standard plugin library\n"
               "loaded by default (empty: none).\n");
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    /* For tests/limits: says that the program got as far as main, past the
     * loader and every library's initializer (libplugrt's static CUDA
     * runtime has some, which cannot fail cleanly in a tiny address space). */
    if (getenv("PLUGRT_MARK_MAIN"))
        fputs("plugrt: main reached\n", stderr);
    if (!cmd) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        if (strcmp(cmd, "help") == 0 && argc > 2) {
            for (int i = 0; i < NB_COMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0) {
                    char help[] = "--help";
                    char *args[3] = {argv[2], help, NULL};
                    cli_set_command(commands[i].name);
                    return commands[i].fn(2, args);
                }
            return unknown_command(argv[2]);
        }
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("plugrt %s (plugin ABI %u)\n", prt_version_string(),
               (unsigned)PRT_PLUGIN_ABI_VERSION);
        return CLI_OK;
    }
    for (int i = 0; i < NB_COMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            cli_set_command(commands[i].name);
            return commands[i].fn(argc - 1, argv + 1);
        }
    return unknown_command(cmd);
}

/*
 * Command-line parsing for the plugrt program: a small option scanner and
 * the parsers of option values (numbers, sizes, shapes, plugin mappings).
 *
 * Every function here that fails prints a usage error (cli_usage) and
 * returns CLI_USAGE, so callers just pass the code on.
 */
#ifndef PLUGRT_TOOLS_OPTIONS_H
#define PLUGRT_TOOLS_OPTIONS_H

#include <stdint.h>

#include "cli.h"

/* One option a subcommand accepts. `name` is the long form ("--iterations"),
 * `alias` a short one ("-o") or NULL; `id` is returned by the scanner and
 * must be > 0. */
typedef struct cli_opt {
    const char *name;
    const char *alias;
    int has_arg;
    int id;
} cli_opt;

/* Another program's spelling of an option (trtexec's, which a TensorRT
 * user types): the scanner takes it as `target`, plugrt's option with the
 * same meaning, which must be in the command's cli_opt table; "" is the
 * model argument (trtexec's --onnx=FILE, --loadEngine=FILE). NULL: this
 * command has no equivalent, and the alias is a usage error saying `note`
 * (why, and what to use instead); never silently ignored. A command whose
 * alias needs its value translated lists it in its cli_opt table under its
 * own id and here with target equal to the name, for the help table. */
typedef struct cli_alias {
    const char *name;
    const char *target;
    const char *note; /* shown in the help table; the error of a NULL target */
} cli_alias;

/* Scans argv[1..]: "--name value", "--name=value", "-o value", "--" ends
 * options. Options and positionals may be mixed. An unknown option is a
 * usage error that suggests the nearest known name. */
typedef struct cli_scanner {
    int argc;
    char **argv;
    int next;
    int only_positional;
    const cli_opt *opts;       /* terminated by an entry with name NULL */
    const cli_alias *aliases;  /* NULL, or terminated by a NULL name */
    const char *alias_program; /* whose spelling they are ("trtexec") */
} cli_scanner;

enum {
    CLI_SCAN_END = -1,   /* no more arguments */
    CLI_SCAN_ERROR = -2, /* a usage error was printed */
    CLI_SCAN_POSITIONAL = 0
};

void cli_scan_init(cli_scanner *s, int argc, char **argv, const cli_opt *opts);
/* The next option's id (value in *value when it takes one), a positional
 * (CLI_SCAN_POSITIONAL, the argument in *value), CLI_SCAN_END or
 * CLI_SCAN_ERROR. */
int cli_scan_next(cli_scanner *s, const char **value);

/* Prints the alias table of a command's --help: each alias and what it
 * means here. */
void cli_print_aliases(const cli_alias *aliases, const char *program);

/* Edit distance between a and b (insertions, deletions, substitutions and
 * swaps of adjacent letters), ASCII case ignored, capped at `cap` (a
 * larger distance returns cap). */
int cli_edit_distance(const char *a, const char *b, int cap);
/* The first of the n candidates nearest to `word`, if near enough to be
 * a typo (at most 3 edits and a third of its length, at least 1), else
 * NULL. */
const char *cli_nearest(const char *word, const char *const *cands, int n);

/* ---- values -------------------------------------------------------------- */

int cli_parse_int(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite, non-negative real number. */
int cli_parse_nonneg(const char *opt, const char *s, double *out);
/* Bytes: "1048576", "512K", "64M", "1G", "1.5GiB" (binary multiples; the
 * number in decimal digits and an optional fraction). */
int cli_parse_size(const char *opt, const char *s, int64_t *out);
/* "cpu" or "cuda" (prt_device). */
int cli_parse_device(const char *opt, const char *s, int32_t *out);
/* "1x3x224x224"; "" or "scalar" is rank 0. Dims are >= 0. Returns 0, or -1
 * without printing (callers say which option). */
int cli_parse_dims(const char *s, prt_dims *out);

/* Shapes by tensor name, as "--shapes a:1x3,b:2x4" gives them. */
typedef struct cli_shape {
    char *name;
    prt_dims dims;
} cli_shape;

typedef struct cli_shapes {
    cli_shape *items;
    int count;
} cli_shapes;

/* Adds the entries of "name:dims,name:dims"; a name given again replaces
 * the earlier entry. Names may contain ':' (the last one separates). */
int cli_shapes_parse(cli_shapes *list, const char *opt, const char *s);
/* The same, with negative numbers allowed ("-1x6"): `plugrt build`'s
 * profile lists, which give a shape input's values (a Reshape's -1). */
int cli_shapes_parse_signed(cli_shapes *list, const char *opt, const char *s);
/* Adds or replaces one entry. CLI_FAIL on OOM. */
int cli_shapes_set(cli_shapes *list, const char *name, const prt_dims *dims);
const cli_shape *cli_shapes_find(const cli_shapes *list, const char *name);
void cli_shapes_free(cli_shapes *list);

/* --plugin-op Op=Plugin[@version][/namespace] */
typedef struct cli_plugin_op {
    char *op_type;
    char *name;
    char *version;          /* "1" unless given */
    char *plugin_namespace; /* "" unless given */
} cli_plugin_op;

typedef struct cli_plugin_ops {
    cli_plugin_op *items;
    int count;
} cli_plugin_ops;

int cli_plugin_ops_parse(cli_plugin_ops *list, const char *opt, const char *s);
void cli_plugin_ops_free(cli_plugin_ops *list);

#endif /* PLUGRT_TOOLS_OPTIONS_H */

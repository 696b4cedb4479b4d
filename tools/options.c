/* The option scanner and value parsers of the plugrt program. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_scan_init(cli_scanner *s, int argc, char **argv, const cli_opt *opts)
{
    s->argc = argc;
    s->argv = argv;
    s->next = 1;
    s->only_positional = 0;
    s->opts = opts;
    s->aliases = NULL;
    s->alias_program = NULL;
}

int cli_edit_distance(const char *a, const char *b, int cap)
{
    /* Optimal string alignment: Levenshtein plus the swap of two adjacent
     * letters as one edit, the commonest typo ("biuld"). Three rows of the
     * table; option and command names are short, and longer words are
     * never near anyway. */
    enum { MAXLEN = 64 };
    int rows[3][MAXLEN + 1];
    int *pp = rows[0], *prev = rows[1], *cur = rows[2];
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN || lb > MAXLEN)
        return cap;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int best = (int)i, *t;
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]),
                cb = tolower((unsigned char)b[j - 1]);
            int sub = prev[j - 1] + (ca != cb), del = prev[j] + 1, ins = cur[j - 1] + 1;
            int d = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            cur[j] = d;
            if (d < best)
                best = d;
        }
        if (best >= cap)
            return cap;
        t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb] < cap ? prev[lb] : cap;
}

const char *cli_nearest(const char *word, const char *const *cands, int n)
{
    int limit = (int)strlen(word) / 3, best_d;
    const char *best = NULL;
    if (limit > 3)
        limit = 3;
    if (limit < 1)
        limit = 1;
    best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        int d = cli_edit_distance(word, cands[i], best_d);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}

/* The unknown option `arg` (its first len bytes) as a usage error, with
 * the nearest name the command takes. */
static int unknown_option(const cli_scanner *s, const char *arg, size_t len)
{
    const char *names[128], *near;
    char word[96];
    int n = 0;
    snprintf(word, sizeof word, "%.*s", (int)len, arg);
    for (const cli_opt *o = s->opts; o->name && n < 128; o++)
        names[n++] = o->name;
    for (const cli_alias *a = s->aliases; a && a->name && n < 128; a++)
        names[n++] = a->name;
    near = cli_nearest(word, names, n);
    if (near)
        return cli_usage("unknown option '%s'; did you mean '%s'?", word, near);
    return cli_usage("unknown option '%s'", word);
}

/* An alias of another program's option: the cli_opt it means (NULL with
 * *refused set when it has none here, the error printed), or NULL for the
 * model argument (*positional set). */
static const cli_opt *resolve_alias(const cli_scanner *s, const cli_alias *a,
                                    int *positional, int *refused)
{
    *positional = *refused = 0;
    if (!a->target) {
        cli_usage("%s (%s's option) has no equivalent in plugrt %s: %s", a->name,
                  s->alias_program ? s->alias_program : "another program", cli_command(),
                  a->note);
        *refused = 1;
        return NULL;
    }
    if (!a->target[0]) {
        *positional = 1;
        return NULL;
    }
    for (const cli_opt *o = s->opts; o->name; o++)
        if (strcmp(o->name, a->target) == 0)
            return o;
    cli_usage("internal: alias %s names %s, which plugrt %s does not take", a->name,
              a->target, cli_command());
    *refused = 1;
    return NULL;
}

void cli_print_aliases(const cli_alias *aliases, const char *program)
{
    /* Notes wrap at the 79th column, under their own column. */
    enum { NOTE_COL = 40, WIDTH = 79 };
    printf("%s's spellings (as its users type them), and what they mean here:\n",
           program);
    for (const cli_alias *a = aliases; a->name; a++) {
        const char *what = !a->target                        ? "no equivalent"
                           : !a->target[0]                   ? "(the model)"
                           : strcmp(a->target, a->name) == 0 ? ""
                                                             : a->target;
        const char *p = a->note;
        int col = printf("  %-18s %-18s", a->name, what);
        while (*p) {
            size_t n = strlen(p),
                   room = (size_t)(WIDTH - (col > NOTE_COL ? col : NOTE_COL));
            if (n > room) {
                /* The last blank that fits; a word longer than the room is
                 * printed whole. */
                size_t k = room;
                while (k > 0 && p[k] != ' ')
                    k--;
                n = k ? k : strcspn(p, " ");
            }
            printf("%*s%.*s\n", col < NOTE_COL ? NOTE_COL - col : 1, "", (int)n, p);
            p += n;
            while (*p == ' ')
                p++;
            col = 0;
        }
        if (!*a->note)
            putchar('\n');
    }
}

static int take_option(cli_scanner *s, const cli_opt *o, const char *arg, const char *eq,
                       const char **value);

int cli_scan_next(cli_scanner *s, const char **value)
{
    const char *arg, *eq;
    size_t len;
    *value = NULL;
    if (s->next >= s->argc)
        return CLI_SCAN_END;
    arg = s->argv[s->next++];
    if (s->only_positional || arg[0] != '-' || arg[1] == '\0') {
        *value = arg;
        return CLI_SCAN_POSITIONAL;
    }
    if (strcmp(arg, "--") == 0) {
        s->only_positional = 1;
        return cli_scan_next(s, value);
    }
    eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
    len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (const cli_opt *o = s->opts; o->name; o++) {
        int match = (strlen(o->name) == len && strncmp(o->name, arg, len) == 0) ||
                    (o->alias && !eq && strcmp(o->alias, arg) == 0);
        if (match)
            return take_option(s, o, arg, eq, value);
    }
    for (const cli_alias *a = s->aliases; a && a->name; a++) {
        const cli_opt *o;
        int positional, refused;
        if (strlen(a->name) != len || strncmp(a->name, arg, len) != 0)
            continue;
        o = resolve_alias(s, a, &positional, &refused);
        if (refused)
            return CLI_SCAN_ERROR;
        if (!positional)
            return take_option(s, o, arg, eq, value);
        /* The model as an option's value: --onnx=FILE or --onnx FILE. */
        if (eq)
            *value = eq + 1;
        else if (s->next < s->argc)
            *value = s->argv[s->next++];
        else {
            cli_usage("option %s needs a value", a->name);
            return CLI_SCAN_ERROR;
        }
        return CLI_SCAN_POSITIONAL;
    }
    unknown_option(s, arg, len);
    return CLI_SCAN_ERROR;
}

/* Option o, found as `arg` (its "=value" at eq, or NULL): its id, with its
 * value taken from eq or the next argument. */
static int take_option(cli_scanner *s, const cli_opt *o, const char *arg, const char *eq,
                       const char **value)
{
    /* Messages name the option as typed: an alias by its own spelling. */
    int len = eq ? (int)(eq - arg) : (int)strlen(arg);
    if (!o->has_arg) {
        if (eq) {
            cli_usage("option %.*s takes no value", len, arg);
            return CLI_SCAN_ERROR;
        }
        return o->id;
    }
    if (eq) {
        *value = eq + 1;
        return o->id;
    }
    if (s->next >= s->argc) {
        cli_usage("option %.*s needs a value", len, arg);
        return CLI_SCAN_ERROR;
    }
    *value = s->argv[s->next++];
    return o->id;
}

/* ---- values -------------------------------------------------------------- */

int cli_parse_int(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0')
        return cli_usage("%s: '%s' is not an integer", opt, s);
    if (v < min || v > max)
        return cli_usage("%s: %lld is out of range [%lld, %lld]", opt, v, (long long)min,
                         (long long)max);
    *out = v;
    return CLI_OK;
}

int cli_parse_nonneg(const char *opt, const char *s, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || v < 0)
        return cli_usage("%s: '%s' is not a non-negative number", opt, s);
    *out = v;
    return CLI_OK;
}

int cli_parse_size(const char *opt, const char *s, int64_t *out)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {{"", 1.0},
                 {"B", 1.0},
                 {"K", 1024.0},
                 {"KB", 1024.0},
                 {"KiB", 1024.0},
                 {"M", 1048576.0},
                 {"MB", 1048576.0},
                 {"MiB", 1048576.0},
                 {"G", 1073741824.0},
                 {"GB", 1073741824.0},
                 {"GiB", 1073741824.0},
                 {"T", 1099511627776.0},
                 {"TB", 1099511627776.0},
                 {"TiB", 1099511627776.0}};
    char *end;
    double v;
    size_t digits = strspn(s, "0123456789.");
    errno = 0;
    v = strtod(s, &end);
    /* Decimal digits only: strtod would also take " 1", "1e3", "0x10" and
     * "-0", none of which is a size anyone means. */
    if (errno || end == s || (size_t)(end - s) != digits || !isfinite(v))
        return cli_usage("%s: '%s' is not a size (e.g. 512M, 1G, 1048576)", opt, s);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suffix) != 0)
            continue;
        v *= units[i].mult;
        if (v >= 9.2e18)
            return cli_usage("%s: '%s' is too large", opt, s);
        *out = (int64_t)v;
        return CLI_OK;
    }
    return cli_usage("%s: '%s' has an unknown unit (use K, M, G or T)", opt, s);
}

int cli_parse_device(const char *opt, const char *s, int32_t *out)
{
    if (strcmp(s, "cpu") == 0)
        *out = PRT_DEVICE_CPU;
    else if (strcmp(s, "cuda") == 0)
        *out = PRT_DEVICE_CUDA;
    else
        return cli_usage("%s: '%s' is not cpu or cuda", opt, s);
    return CLI_OK;
}

/* allow_negative: components may carry a '-' (a shape input's values). */
static int parse_dims(const char *s, prt_dims *out, int allow_negative)
{
    prt_dims d;
    d.nb_dims = 0;
    if (*s == '\0' || strcmp(s, "scalar") == 0) {
        *out = d;
        return 0;
    }
    for (;;) {
        char *end;
        long long v;
        int neg = allow_negative && *s == '-';
        if (s[neg] < '0' || s[neg] > '9' || d.nb_dims >= PRT_MAX_DIMS)
            return -1;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno || (v < 0 && !neg))
            return -1;
        d.d[d.nb_dims++] = v;
        s = end;
        if (*s == '\0')
            break;
        if (*s != 'x' && *s != 'X' && *s != '*')
            return -1;
        s++;
    }
    *out = d;
    return 0;
}

int cli_parse_dims(const char *s, prt_dims *out)
{
    return parse_dims(s, out, 0);
}

int cli_shapes_set(cli_shapes *list, const char *name, const prt_dims *dims)
{
    cli_shape *items;
    char *copy;
    for (int i = 0; i < list->count; i++)
        if (strcmp(list->items[i].name, name) == 0) {
            list->items[i].dims = *dims;
            return CLI_OK;
        }
    copy = cli_strdup(name);
    items = copy ? realloc(list->items, sizeof *items * (size_t)(list->count + 1)) : NULL;
    if (!items) {
        free(copy);
        cli_error("out of memory for the shape of %s", name);
        return CLI_FAIL;
    }
    items[list->count].name = copy;
    items[list->count].dims = *dims;
    list->items = items;
    list->count++;
    return CLI_OK;
}

static int shapes_parse(cli_shapes *list, const char *opt, const char *s,
                        int allow_negative)
{
    char *buf = cli_strdup(s), *save = NULL, *item;
    int rc = CLI_OK;
    if (!buf) {
        cli_error("out of memory for a copy of %s", opt);
        return CLI_FAIL;
    }
    if (*s == '\0')
        rc = cli_usage("%s: empty value; expected name:dims[,name:dims...] such as "
                       "input:1x3x224x224",
                       opt);
    for (item = strtok_r(buf, ",", &save); item && rc == CLI_OK;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(item, ':');
        prt_dims d;
        if (!colon || colon == item) {
            rc = cli_usage("%s: '%s' is not name:dims (e.g. input:1x3x224x224)", opt,
                           item);
            break;
        }
        *colon = '\0';
        /* trtexec's spelling quotes names that hold ':' ('Input:0':1x3). */
        if (item[0] == '\'' && colon - item >= 2 && colon[-1] == '\'') {
            colon[-1] = '\0';
            item++;
        }
        if (parse_dims(colon + 1, &d, allow_negative) != 0) {
            rc = cli_usage("%s: '%s' for %s is not a shape (dims joined by 'x', at most "
                           "%d, e.g. 1x3x224x224)",
                           opt, colon + 1, item, PRT_MAX_DIMS);
            break;
        }
        rc = cli_shapes_set(list, item, &d);
    }
    free(buf);
    return rc;
}

int cli_shapes_parse(cli_shapes *list, const char *opt, const char *s)
{
    return shapes_parse(list, opt, s, 0);
}

int cli_shapes_parse_signed(cli_shapes *list, const char *opt, const char *s)
{
    return shapes_parse(list, opt, s, 1);
}

const cli_shape *cli_shapes_find(const cli_shapes *list, const char *name)
{
    for (int i = 0; i < list->count; i++)
        if (strcmp(list->items[i].name, name) == 0)
            return &list->items[i];
    return NULL;
}

void cli_shapes_free(cli_shapes *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->items[i].name);
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

int cli_plugin_ops_parse(cli_plugin_ops *list, const char *opt, const char *s)
{
    const char *eq = strchr(s, '=');
    const char *name, *at, *slash, *name_end;
    cli_plugin_op op;
    cli_plugin_op *items;
    if (!eq || eq == s || eq[1] == '\0')
        return cli_usage("%s: '%s' is not Op=Plugin[@version][/namespace] (e.g. "
                         "Hardmax=CustomHardmax@1)",
                         opt, s);
    name = eq + 1;
    slash = strchr(name, '/');
    at = strchr(name, '@');
    if (at && slash && at > slash)
        at = NULL; /* an '@' inside the namespace */
    name_end = at ? at : slash ? slash : name + strlen(name);
    memset(&op, 0, sizeof op);
    op.op_type = strndup(s, (size_t)(eq - s));
    op.name = strndup(name, (size_t)(name_end - name));
    op.version = at ? strndup(at + 1, slash ? (size_t)(slash - at - 1) : strlen(at + 1))
                    : cli_strdup("1");
    op.plugin_namespace = cli_strdup(slash ? slash + 1 : "");
    if (op.name && op.version && (!*op.name || !*op.version)) {
        free(op.op_type);
        free(op.name);
        free(op.version);
        free(op.plugin_namespace);
        return cli_usage("%s: '%s': empty plugin name or version", opt, s);
    }
    items = realloc(list->items, sizeof *items * (size_t)(list->count + 1));
    if (!op.op_type || !op.name || !op.version || !op.plugin_namespace || !items) {
        free(op.op_type);
        free(op.name);
        free(op.version);
        free(op.plugin_namespace);
        if (items)
            list->items = items;
        cli_error("out of memory for %s %s", opt, s);
        return CLI_FAIL;
    }
    items[list->count++] = op;
    list->items = items;
    return CLI_OK;
}

void cli_plugin_ops_free(cli_plugin_ops *list)
{
    for (int i = 0; i < list->count; i++) {
        free(list->items[i].op_type);
        free(list->items[i].name);
        free(list->items[i].version);
        free(list->items[i].plugin_namespace);
    }
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

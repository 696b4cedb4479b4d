/*
 * plugrt check LIB.so: checks a plugin library against the plugin
 * contract of plugin.h, creator by creator, and reports one line per check
 * (check.h says how; check_report.h what is printed). Exit status 1 when
 * any check fails, CHK_EXIT_UNTESTED when none failed but a creator is
 * untested. Python plugins have no library: --python runs the Python
 * package's checker, which calls this with their entry point
 * (check_python.c).
 *
 * Order per creator: abi, then outputs (which also finds the inputs,
 * dtypes, ranks and shape inputs the plugin accepts), then every check of
 * `checks` on those; a check that needs something outputs did not find,
 * or a device that --device or the plugin's devices() lacks, is skipped
 * with the reason. errors reports the failures without a message that any
 * check saw.
 *
 * Nothing run is not a pass: a creator that can be created but of which no
 * check ran the plugin (no input signature was found or ran, its default
 * fields were refused, its device is not here) is "untested", and the
 * command exits CHK_EXIT_UNTESTED unless --allow-untested. An input spec
 * (--inputs, or "@inputs" per plugin key in the fields file) replaces
 * discovery for what it cannot guess (check_spec.h).
 *
 * --device picks where the checks that run the plugin run it. The parent
 * never starts a device runtime: a CUDA context does not survive fork, so
 * whether CUDA is usable is asked in a child too (chk_probe_device), and
 * where it is not, the command says why and checks nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_fields.h"
#include "check_report.h"
#include "check_spec.h"
#include "options.h"

enum {
    OPT_HELP = 1,
    OPT_PLUGIN,
    OPT_DEVICE,
    OPT_FIELDS,
    OPT_SEED,
    OPT_ITERATIONS,
    OPT_TIMEOUT,
    OPT_JSON,
    OPT_VERBOSE,
    OPT_INPUTS,
    OPT_ALLOW_UNTESTED
};

static const cli_opt check_opts[] = {
    {"--help", "-h", 0, OPT_HELP},
    {"--plugin", NULL, 1, OPT_PLUGIN},
    {"--device", NULL, 1, OPT_DEVICE},
    {"--fields", NULL, 1, OPT_FIELDS},
    {"--seed", NULL, 1, OPT_SEED},
    {"--iterations", NULL, 1, OPT_ITERATIONS},
    {"--timeout", NULL, 1, OPT_TIMEOUT},
    {"--json", NULL, 0, OPT_JSON},
    {"--verbose", "-v", 0, OPT_VERBOSE},
    {"--inputs", NULL, 1, OPT_INPUTS},
    {"--allow-untested", NULL, 0, OPT_ALLOW_UNTESTED},
    {NULL, NULL, 0, 0},
};

#define DEFAULT_ITERATIONS 3
#define DEFAULT_TIMEOUT 120 /* seconds a check may take before it counts as hung */

/* What a check needs of the device (--device) and of the plugin's
 * devices(). */
enum {
    NEEDS_NOTHING = 0, /* it does not run the plugin */
    NEEDS_RUN,         /* it runs the plugin on the device */
    NEEDS_CUDA,        /* it runs the plugin on CUDA (--device cuda) */
    NEEDS_BOTH         /* it runs the plugin on CUDA and on the CPU */
};

/* The checks that run on what outputs found, in order. */
static const struct {
    const char *name;
    chk_fn fn;
    int needs;
    const char *about;
} checks[] = {
    {"shapes", chk_check_shapes, NEEDS_NOTHING,
     "output dims valid over random shapes; the same from constant input dims"},
    {"size-tensors", chk_check_size_tensors, NEEDS_RUN,
     "size tensors 0-D int32/int64, 0 <= opt <= upper bound, values within it"},
    {"formats", chk_check_formats, NEEDS_NOTHING,
     "supports_format_combination reads only positions <= pos"},
    {"workspace", chk_check_workspace, NEEDS_NOTHING,
     "workspace never shrinks as a profile grows"},
    {"values", chk_check_values, NEEDS_RUN, "get_output_values agrees with enqueue"},
    {"coverage", chk_check_coverage, NEEDS_RUN,
     "every output element written (up to the true size); one that aliases an input "
     "starts as its copy"},
    {"bounds", chk_check_bounds, NEEDS_RUN,
     "nothing written past a buffer, a size bound or into an input"},
    {"repeat", chk_check_repeat, NEEDS_RUN,
     "the same result on every run of an input, shapes held and varied"},
    {"alias", chk_check_alias, NEEDS_RUN,
     "an output in place over its input agrees with apart (over a copy of it)"},
    {"clone", chk_check_clone, NEEDS_RUN,
     "clones agree and share nothing with their original"},
    {"attach", chk_check_attach, NEEDS_RUN,
     "attach_to_context plugins agree and stand alone"},
    {"serialize", chk_check_serialize, NEEDS_RUN,
     "get_fields_to_serialize -> create(runtime phase) agrees"},
    {"contexts", chk_check_contexts, NEEDS_RUN, "two contexts used alternately agree"},
    {"threads", chk_check_threads, NEEDS_RUN,
     "two contexts run in lockstep on two threads agree with runs alone"},
    {"empty-inputs", chk_check_empty, NEEDS_RUN,
     "zero-size inputs handled or rejected with an error"},
    {"tactics", chk_check_tactics, NEEDS_RUN, "every tactic agrees with tactic 0"},
    {"stream", chk_check_stream, NEEDS_CUDA,
     "(CUDA) the work is queued on the stream enqueue is given"},
    {"reference", chk_check_reference, NEEDS_BOTH,
     "(CUDA) CUDA agrees with the CPU, within a tolerance per dtype"},
    {"errors", chk_check_errors, NEEDS_NOTHING, "every failure comes with a message"},
};
#define NB_CHECKS (int32_t)(sizeof checks / sizeof checks[0])

static void check_help(void)
{
    printf("Usage: plugrt check LIB.so [--plugin ns::name@version] [--device cpu|cuda]\n"
           "                           [--fields FILE.json] [--inputs SPEC] [--seed N]\n"
           "                           [--iterations N] [--timeout S] [--json]\n"
           "                           [--allow-untested]\n"
           "       plugrt check --python MODULE[:NAME] [options as above]\n"
           "       python -m plugrt.check MODULE[:NAME] [options as above]\n"
           "\n"
           "Checks every plugin creator of a library (or the one named) against the\n"
           "plugin contract of plugin.h, driving its entries as the builder and the\n"
           "runtime would, on random shapes and random data, each check in a process\n"
           "group of its own (a plugin that crashes, hangs or leaves processes behind\n"
           "fails that check, and they are killed). Every array handed to a plugin\n"
           "(outputs, descriptors, fields) ends where guard bytes begin: an entry that\n"
           "writes past one fails the check that called it. Checks:\n"
           "  abi           entry point, table sizes and versions, names, field schema;\n"
           "                plugins report their creator's name, version, namespace\n"
           "  outputs       output count and dtypes; finds the inputs the plugin\n"
           "                accepts, which the later checks test: dtypes asked of\n"
           "                supports_format_combination position by position, ranks,\n"
           "                shape inputs, and dims drawn independent, tied by trailing\n"
           "                dims, tied by leading dims or broadcast, in turn until\n"
           "                configure accepts them (or the --inputs spec)\n");
    for (int32_t i = 0; i < NB_CHECKS; i++)
        printf("  %-13s %s\n", checks[i].name, checks[i].about);
    printf(
        "\n"
        "With --device cuda the checks that run the plugin run it on the GPU, every\n"
        "buffer guarded and poisoned on the device; where CUDA is not usable the\n"
        "command says why and exits 1.\n"
        "\n"
        "Options:\n"
        "  --python MODULE[:NAME]\n"
        "                     check the Python plugins (plugrt.plugin decorator and\n"
        "                     class plugins) that importing MODULE registers, or the\n"
        "                     one NAME (name, ns::name or ns::name@version): runs\n"
        "                     'python3 -m plugrt.check MODULE[:NAME] ...', the Python\n"
        "                     named by PLUGRT_PYTHON or python3 on the PATH\n"
        "  --plugin KEY       check one creator: ns::name@version as 'plugrt plugins'\n"
        "                     prints it (without @version: every version)\n"
        "  --device D         where the plugins run: cpu (default) or cuda\n"
        "  --fields FILE      example field values, per plugin key:\n"
        "                     {\"ext::RowTopK@1\": {\"k\": 3, \"axes\": [0, 1]}}; "
        "numbers,\n"
        "                     lists, strings for char fields, lists of lists for dims;\n"
        "                     a creator not named takes its defaults. The key\n"
        "                     \"@inputs\" holds that plugin's input spec (as --inputs)\n"
        "  --inputs SPEC      what the plugins take, instead of discovering it:\n"
        "                     'data:float32:Nx8,ids:int32:N,N=1..512': NAME:DTYPE:DIMS\n"
        "                     per input, dims separated by x, each a number or a\n"
        "                     symbol shared by name across inputs; SYMBOL=LO..HI\n"
        "                     bounds a symbol; empty DIMS is 0-D. For every creator\n"
        "                     checked (use --plugin); \"@inputs\" in --fields wins\n"
        "  --allow-untested   a creator of which nothing ran is a skip, not exit 3\n"
        "                     (helper creators that take no inputs alone)\n"
        "  --seed N           seed of the random shapes and data (default 1)\n"
        "  --iterations N     random cases per input signature and check (default %d)\n"
        "  --timeout S        seconds a check may run before it fails as hung\n"
        "                     (default %d)\n"
        "  --json             machine-readable output (one JSON document)\n"
        "  -v, --verbose      print the plugins' log\n"
        "  -h, --help         this help\n"
        "\n"
        "The summary says how many profiles configure accepted and how many runs of\n"
        "enqueue each check made. A creator that can be created but of which nothing\n"
        "ran (no inputs it accepts were found or ran, it refuses its default fields,\n"
        "it does not run on the device) is untested: a line says why.\n"
        "\n"
        "Exit status: 0 every check passed or was skipped and every creator was\n"
        "tested, 1 a check failed (or the library, the fields file or the input spec\n"
        "could not be read, or the device cannot be used), 2 usage, 3 nothing failed\n"
        "but a creator is untested (0 with --allow-untested).\n",
        DEFAULT_ITERATIONS, DEFAULT_TIMEOUT);
}

typedef struct check_args {
    const char *lib;
    const char *plugin;
    const char *fields;
    const char *inputs;
    int allow_untested;
    int32_t device;
    uint64_t seed;
    int32_t iterations;
    int32_t timeout;
    int json;
    int verbose;
} check_args;

static int parse_args(int argc, char **argv, check_args *a)
{
    cli_scanner s;
    const char *v;
    int id;
    int64_t n;
    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->iterations = DEFAULT_ITERATIONS;
    a->timeout = DEFAULT_TIMEOUT;
    cli_scan_init(&s, argc, argv, check_opts);
    while ((id = cli_scan_next(&s, &v)) != CLI_SCAN_END) {
        switch (id) {
        case CLI_SCAN_ERROR:
            return CLI_USAGE;
        case CLI_SCAN_POSITIONAL:
            if (a->lib)
                return cli_usage("one library at a time (got '%s' and '%s')", a->lib, v);
            a->lib = v;
            break;
        case OPT_HELP:
            check_help();
            return -1;
        case OPT_PLUGIN:
            a->plugin = v;
            break;
        case OPT_DEVICE:
            if (cli_parse_device("--device", v, &a->device) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_FIELDS:
            a->fields = v;
            break;
        case OPT_SEED:
            if (cli_parse_int("--seed", v, 0, INT64_MAX, &n) != CLI_OK)
                return CLI_USAGE;
            a->seed = (uint64_t)n;
            break;
        case OPT_ITERATIONS:
            if (cli_parse_int("--iterations", v, 1, 1000, &n) != CLI_OK)
                return CLI_USAGE;
            a->iterations = (int32_t)n;
            break;
        case OPT_TIMEOUT:
            if (cli_parse_int("--timeout", v, 1, 86400, &n) != CLI_OK)
                return CLI_USAGE;
            a->timeout = (int32_t)n;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_VERBOSE:
            a->verbose = 1;
            break;
        case OPT_INPUTS:
            a->inputs = v;
            break;
        case OPT_ALLOW_UNTESTED:
            a->allow_untested = 1;
            break;
        default:
            return cli_usage("internal: unhandled option");
        }
    }
    if (!a->lib)
        return cli_usage("name the plugin library to check (plugrt check LIB.so)");
    return CLI_OK;
}

/* ---- example fields ------------------------------------------------------------ */

#define SPEC_KEY "@inputs" /* a field name cannot start with '@' */

/* Takes the input spec out of one plugin's object into *spec (parsed),
 * moving the key to the end of the object and hiding it (count - 1; the
 * caller restores the count). 1 when there was one, 0 when not, -1 on a
 * bad spec. */
static int take_spec(chk_json *obj, chk_sig **spec, char *why, size_t cap)
{
    int32_t j = 0;
    chk_json item;
    char *key;
    if (obj->type != CHK_JSON_OBJECT)
        return 0;
    while (j < obj->count && strcmp(obj->keys[j], SPEC_KEY) != 0)
        j++;
    if (j == obj->count)
        return 0;
    item = obj->items[j];
    key = obj->keys[j];
    memmove(&obj->items[j], &obj->items[j + 1],
            sizeof item * (size_t)(obj->count - j - 1));
    memmove(&obj->keys[j], &obj->keys[j + 1], sizeof key * (size_t)(obj->count - j - 1));
    obj->items[obj->count - 1] = item;
    obj->keys[obj->count - 1] = key;
    obj->count--;
    if (item.type != CHK_JSON_STRING)
        return chk_say(why, cap, "%s must be a string ('data:float32:Nx8,ids:int32:N')",
                       SPEC_KEY);
    free(*spec);
    *spec = calloc(1, sizeof **spec);
    if (!*spec)
        return chk_say(why, cap, "out of memory");
    if (chk_spec_parse(item.text, *spec, why, cap) != 0)
        return -1;
    return 1;
}

/* Per creator, the example values of the fields file (NULL: none) and
 * the input spec of its "@inputs" (NULL: none). */
static int load_fields(const char *path, const chk_library_info *info,
                       prt_field_collection **out, chk_sig **specs)
{
    void *text = NULL;
    size_t size = 0;
    chk_json *doc = NULL;
    char why[CHK_MSG];
    int rc = CLI_OK;
    if (cli_read_file(path, &text, &size) != CLI_OK)
        return CLI_FAIL;
    if (chk_json_parse(text, size, &doc, why, sizeof why) != 0) {
        cli_error("%s is not JSON: %s", path, why);
        free(text);
        return CLI_FAIL;
    }
    free(text);
    if (doc->type != CHK_JSON_OBJECT) {
        cli_error("%s must hold an object of plugin keys", path);
        rc = CLI_FAIL;
    }
    for (int32_t k = 0; rc == CLI_OK && k < doc->count; k++) {
        int found = 0, spec = 0;
        for (int32_t i = 0; rc == CLI_OK && i < info->nb_creators; i++) {
            const chk_creator_info *ci = &info->creators[i];
            if (!chk_key_matches(doc->keys[k], ci->ns, ci->name, ci->version))
                continue;
            found = 1;
            chk_fields_free(out[i]);
            out[i] = NULL;
            spec = take_spec(&doc->items[k], &specs[i], why, sizeof why);
            if (spec < 0 ||
                chk_fields_from_json(&doc->items[k], ci, &out[i], why, sizeof why)) {
                cli_error("%s: %s: %s", path, doc->keys[k], why);
                rc = CLI_FAIL;
            }
            doc->items[k].count += spec != 0;
        }
        if (!found)
            cli_warn("%s names %s, which the library does not provide", path,
                     doc->keys[k]);
    }
    chk_json_free(doc);
    return rc;
}

/* ---- running the checks --------------------------------------------------------- */

typedef struct run_state {
    chk_ctx c;
    chk_report rp;
    check_args a;
    /* Failures without a message seen by the checks of this creator. */
    char silent[CHK_MSG + 64];
    int32_t nb_silent;
} run_state;

static void note_silent(run_state *s, const char *check)
{
    if (s->c.sh->nb_silent == 0)
        return;
    if (s->nb_silent == 0)
        snprintf(s->silent, sizeof s->silent, "%s (seen by %s)", s->c.sh->silent, check);
    s->nb_silent += s->c.sh->nb_silent;
}

static void skip_result(chk_result *r, const char *fmt, const char *arg)
{
    memset(r, 0, sizeof *r);
    r->verdict = CHK_SKIP;
    r->tactic = -1;
    r->element = -1;
    snprintf(r->message, sizeof r->message, fmt, arg);
}

/* 1 (and the skip in *r) when a check cannot run for want of a device:
 * --device is not CUDA, or the plugin's devices() lack one it needs. */
static int device_skip(const run_state *s, int needs, uint32_t devices, chk_result *r)
{
    int cuda = s->a.device == PRT_DEVICE_CUDA;
    if (needs == NEEDS_NOTHING)
        return 0;
    if ((needs == NEEDS_CUDA || needs == NEEDS_BOTH) && !cuda) {
        skip_result(r, "%s",
                    needs == NEEDS_CUDA ? "CUDA only (--device cuda)"
                                        : "compares CUDA with the CPU (--device cuda)");
        return 1;
    }
    if (!(devices & (1u << s->a.device))) {
        skip_result(r, "the plugin does not run on %s (devices())",
                    cuda ? "CUDA" : "the CPU");
        return 1;
    }
    if (needs == NEEDS_BOTH && !(devices & (1u << PRT_DEVICE_CPU))) {
        skip_result(r, "%s", "the plugin does not run on the CPU (devices())");
        return 1;
    }
    return 0;
}

/* Runs one check in a child, seeded for (creator, check). */
static int run_one(run_state *s, int32_t check_id, chk_fn fn)
{
    chk_rng_init(&s->c.rng, s->a.seed,
                 (uint64_t)(s->c.creator_index + 1) * 1000 + (uint64_t)check_id);
    s->c.sh->profiles = s->c.sh->runs = 0;
    return chk_sandbox_run(&s->c, fn, 1, s->a.timeout);
}

/* Reports a check's verdict with what its child counted. */
static void report(run_state *s, const char *check, const chk_result *r, int ran)
{
    chk_report_check(&s->rp, check, r, ran ? s->c.sh->profiles : 0,
                     ran ? s->c.sh->runs : 0);
}

static void check_creator(run_state *s, int32_t index, const prt_field_collection *fields)
{
    static const prt_field_collection none = {0, NULL};
    chk_shared *sh;
    chk_plan plan;
    chk_result r;
    int crashed;
    int32_t failed_before = s->rp.failed;
    int64_t runs = 0;
    char first_skip[CHK_MSG] = "";

    memset(&plan, 0, sizeof plan);
    s->c.creator_index = index;
    s->c.fields = fields ? fields : &none;
    s->nb_silent = 0;
    sh = s->c.sh;
    chk_report_plugin_begin(&s->rp, &sh->lib.creators[index]);
    sh->creator_ok = sh->tables_ok = 0;
    crashed = run_one(s, 0, chk_check_abi);
    note_silent(s, "abi");
    report(s, "abi", &sh->result, 1);
    memset(&sh->plan, 0, sizeof sh->plan);
    if (!sh->creator_ok ||
        (!sh->tables_ok && (crashed || sh->result.verdict == CHK_FAIL))) {
        /* Calling into it would only crash: what abi found is the report. */
        skip_result(&r, "%s", "its creator or plugin tables are broken (see abi)");
        report(s, "outputs", &r, 0);
        snprintf(plan.why, sizeof plan.why, "%s", r.message);
    } else {
        crashed = run_one(s, 1, chk_check_outputs);
        note_silent(s, "outputs");
        /* A plan the outputs check finished holds, even if the plugin
         * crashed after it (destroying what it shares). */
        plan = sh->plan;
        if (!plan.done) {
            plan.nb_sigs = 0;
            snprintf(plan.why, sizeof plan.why, "outputs did not finish%s",
                     crashed ? " (the plugin crashed)" : "");
        }
        report(s, "outputs", &sh->result, 1);
    }
    if (plan.nb_sigs == 0 && !plan.why[0])
        snprintf(plan.why, sizeof plan.why, "see outputs");
    s->c.plan = &plan;
    for (int32_t i = 0; i < NB_CHECKS; i++) {
        int is_errors = checks[i].fn == chk_check_errors;
        if (plan.nb_sigs == 0 && (!is_errors || !sh->creator_ok)) {
            skip_result(&r, "nothing to test: %.900s", plan.why);
            report(s, checks[i].name, &r, 0);
            continue;
        }
        if (device_skip(s, checks[i].needs, plan.devices, &r)) {
            if (checks[i].needs == NEEDS_RUN && !first_skip[0])
                snprintf(first_skip, sizeof first_skip, "%s", r.message);
            report(s, checks[i].name, &r, 0);
            continue;
        }
        run_one(s, 2 + i, checks[i].fn);
        r = sh->result;
        runs += sh->runs;
        if (checks[i].needs == NEEDS_RUN && r.verdict == CHK_SKIP && !first_skip[0])
            snprintf(first_skip, sizeof first_skip, "%s: %.900s", checks[i].name,
                     r.message);
        note_silent(s, checks[i].name);
        if (is_errors && s->nb_silent) {
            /* The first failure without a message of any check. */
            memset(&r, 0, sizeof r);
            r.tactic = -1;
            r.element = -1;
            r.verdict = CHK_FAIL;
            snprintf(r.message, sizeof r.message,
                     "%.900s; %d failure%s without a message in all", s->silent,
                     (int)s->nb_silent, s->nb_silent == 1 ? "" : "s");
        }
        report(s, checks[i].name, &r, 1);
    }
    /* Nothing of a sane creator ran, and nothing failed: not a pass. */
    if (sh->creator_ok && runs == 0 && s->rp.failed == failed_before) {
        char why[CHK_MSG + 64];
        if (plan.nb_sigs == 0)
            snprintf(why, sizeof why, "no input signature ran: %.900s", plan.why);
        else
            snprintf(why, sizeof why, "no check ran the plugin: %.900s",
                     first_skip[0] ? first_skip : "every run-time check was skipped");
        chk_report_untested(&s->rp, why, s->a.allow_untested);
    }
    chk_report_plugin_end(&s->rp);
}

int cmd_check(int argc, char **argv)
{
    static prt_field_collection *fields[CHK_MAX_CREATORS];
    static chk_sig *specs[CHK_MAX_CREATORS];
    static chk_sig spec;
    run_state s;
    char path[4096], device[CHK_MSG + 16];
    int rc, selected = 0;
    if (chk_python_asked(argc, argv))
        return chk_python_exec(argc, argv); /* check_python.c */
    rc = parse_args(argc, argv, &s.a);
    if (rc < 0)
        return CLI_OK; /* --help */
    if (rc != CLI_OK)
        return rc;
    if (s.a.inputs) {
        char why[CHK_MSG];
        if (chk_spec_parse(s.a.inputs, &spec, why, sizeof why) != 0) {
            cli_error("--inputs: %s", why);
            return CLI_FAIL;
        }
    }
    memset(&s.c, 0, sizeof s.c);
    s.c.lib_path = cli_library_path(s.a.lib, path, sizeof path);
    s.c.seed = s.a.seed;
    s.c.iterations = s.a.iterations;
    s.c.verbose = s.a.verbose;
    s.c.creator_index = -1;
    s.c.device = s.a.device;
    s.c.device_sync = 1;
    s.c.sh = chk_shared_create();
    if (!s.c.sh) {
        cli_error("cannot map memory to share with the checks");
        return CLI_FAIL;
    }
    snprintf(device, sizeof device, "%s", cli_device_name(s.a.device));
    if (s.a.device != PRT_DEVICE_CPU) {
        /* Asked in a child: CUDA started here would not work in the
         * children forked after it. */
        chk_sandbox_run(&s.c, chk_probe_device, 0, s.a.timeout);
        if (s.c.sh->result.verdict != CHK_PASS) {
            cli_error("--device %s: %s", cli_device_name(s.a.device),
                      s.c.sh->result.message);
            fprintf(stderr, "  `plugrt devices` lists the devices plugrt can use here; "
                            "without --device the plugins are checked on the CPU\n");
            chk_shared_destroy(s.c.sh);
            return CLI_FAIL;
        }
        snprintf(device, sizeof device, "%s: %s", cli_device_name(s.a.device),
                 s.c.sh->result.message);
    }
    memset(&s.c.sh->lib, 0, sizeof s.c.sh->lib);
    chk_sandbox_run(&s.c, chk_check_library, 0, s.a.timeout);
    if (s.a.fields && load_fields(s.a.fields, &s.c.sh->lib, fields, specs) != CLI_OK) {
        rc = CLI_FAIL;
        goto done;
    }
    for (int32_t i = 0; i < s.c.sh->lib.nb_creators; i++) {
        const chk_creator_info *ci = &s.c.sh->lib.creators[i];
        selected +=
            !s.a.plugin || chk_key_matches(s.a.plugin, ci->ns, ci->name, ci->version);
    }
    if (s.a.plugin && selected == 0 && s.c.sh->result.verdict == CHK_PASS) {
        cli_error("%s has no creator %s (see 'plugrt plugins %s')", s.a.lib, s.a.plugin,
                  s.a.lib);
        rc = CLI_FAIL;
        goto done;
    }
    chk_report_begin(&s.rp, s.a.json, s.a.lib, s.c.sh->lib.total, s.a.seed,
                     s.a.iterations, s.a.device, device);
    chk_report_library(&s.rp, &s.c.sh->result);
    if (s.c.sh->lib.total > s.c.sh->lib.nb_creators)
        cli_warn("the library has %d creators; the first %d are checked",
                 (int)s.c.sh->lib.total, CHK_MAX_CREATORS);
    for (int32_t i = 0; i < s.c.sh->lib.nb_creators; i++) {
        const chk_creator_info *ci = &s.c.sh->lib.creators[i];
        if (!s.a.plugin || chk_key_matches(s.a.plugin, ci->ns, ci->name, ci->version)) {
            s.c.spec = specs[i] ? specs[i] : s.a.inputs ? &spec : NULL;
            check_creator(&s, i, fields[i]);
        }
    }
    rc = chk_report_end(&s.rp);
done:
    for (int32_t i = 0; i < CHK_MAX_CREATORS; i++) {
        chk_fields_free(fields[i]);
        fields[i] = NULL;
        free(specs[i]);
        specs[i] = NULL;
    }
    chk_shared_destroy(s.c.sh);
    return rc;
}

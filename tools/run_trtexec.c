/* trtexec's options of `plugrt run` that need more than a new name
 * (run_trtexec.h). */
#include "run_trtexec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "numeric.h"
#include "text.h"

int run_range_given(const run_range *r)
{
    return r->min.count > 0 || r->max.count > 0;
}

void run_range_free(run_range *r)
{
    cli_shapes_free(&r->min);
    cli_shapes_free(&r->opt);
    cli_shapes_free(&r->max);
}

/* ---- shapes -------------------------------------------------------------- */

static int dims_within(const prt_dims *d, const prt_dims *mn, const prt_dims *mx)
{
    if (d->nb_dims != mn->nb_dims || d->nb_dims != mx->nb_dims)
        return 0;
    for (int32_t i = 0; i < d->nb_dims; i++)
        if (d->d[i] < mn->d[i] || d->d[i] > mx->d[i])
            return 0;
    return 1;
}

static const prt_io_info *find_input(const run_model *m, const char *name)
{
    for (int32_t k = 0; k < m->nb_inputs; k++)
        if (strcmp(m->io[k].name, name) == 0)
            return &m->io[k];
    return NULL;
}

/* Says that `what` (dims d) of input io lies outside the profile's range. */
static void outside_profile(const prt_io_info *io, const char *what, const prt_dims *d,
                            int32_t profile, const prt_dims *mn, const prt_dims *op,
                            const prt_dims *mx, int is_plan)
{
    char a[128], b[128], c[128], e[128], en[CLI_ESC_CAP];
    cli_error("input %s: %s %s is outside profile %d of the %s (min %s, opt %s, max "
              "%s)",
              cli_escape(io->name, en, sizeof en), what, cli_format_dims(d, a, sizeof a),
              (int)profile, is_plan ? "plan" : "engine built from the model",
              cli_format_dims(mn, b, sizeof b), cli_format_dims(op, c, sizeof c),
              cli_format_dims(mx, e, sizeof e));
    if (is_plan)
        fprintf(stderr, "  a plan's profile is fixed when it is built: run at shapes "
                        "within it, or build\n  a plan whose profile holds them (plugrt "
                        "build --minShapes=... --maxShapes=...)\n");
    else
        fprintf(stderr, "  give shapes to run at within --minShapes and --maxShapes, or "
                        "widen them\n");
}

/* For a plan: the lists' entries of input io must lie in its profile. */
static int check_lists_in_plan(const run_range *r, const prt_io_info *io,
                               const prt_dims *mn, const prt_dims *op, const prt_dims *mx,
                               int32_t profile)
{
    const cli_shapes *lists[3] = {&r->min, &r->opt, &r->max};
    static const char *const names[3] = {"its --minShapes entry", "its --optShapes entry",
                                         "its --maxShapes entry"};
    for (int l = 0; l < 3; l++) {
        const cli_shape *s = cli_shapes_find(lists[l], io->name);
        if (s && !dims_within(&s->dims, mn, mx)) {
            outside_profile(io, names[l], &s->dims, profile, mn, op, mx, 1);
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

int run_trtexec_shapes(const run_range *r, const run_model *m, const prt_engine *engine,
                       int32_t profile, int is_plan, const run_inputs *in,
                       cli_shapes *shapes)
{
    const cli_shapes *lists[3] = {&r->min, &r->opt, &r->max};
    static const char *const opts[3] = {"--minShapes", "--optShapes", "--maxShapes"};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < lists[l]->count; i++) {
            char en[CLI_ESC_CAP];
            if (!find_input(m, lists[l]->items[i].name))
                return cli_usage("%s %s: the model has no input of that name", opts[l],
                                 cli_escape(lists[l]->items[i].name, en, sizeof en));
        }
    for (int32_t k = 0; k < m->nb_inputs; k++) {
        const prt_io_info *io = &m->io[k];
        const cli_shape *sh = cli_shapes_find(shapes, io->name);
        const run_input *data = run_inputs_match(in, io->name);
        prt_dims mn, op, mx, run, lmin, lopt, lmax;
        const char *what = "its --shapes entry";
        int listed = cli_shapes_find(&r->min, io->name) ||
                     cli_shapes_find(&r->opt, io->name) ||
                     cli_shapes_find(&r->max, io->name);
        char ep[CLI_ESC_CAP], whatbuf[CLI_ESC_CAP + 32];
        /* A shape input's entries bound its values, which the runtime
         * checks against the profile itself. */
        if (io->is_shape_input || prt_engine_get_profile_shape(engine, profile, io->name,
                                                               &mn, &op, &mx) != PRT_OK)
            continue;
        if (listed && is_plan &&
            check_lists_in_plan(r, io, &mn, &op, &mx, profile) != CLI_OK)
            return CLI_FAIL;
        if (sh) {
            run = sh->dims;
        } else if (data) {
            run = data->arr.dims;
            snprintf(whatbuf, sizeof whatbuf, "the shape of %s",
                     data->path ? cli_escape(data->path, ep, sizeof ep) : "its data");
            what = whatbuf;
        } else if (listed) {
            /* trtexec runs at the opt shapes. */
            cli_complete_profile(&r->min, &r->opt, &r->max, io->name, &lmin, &lopt,
                                 &lmax);
            if (cli_shapes_set(shapes, io->name, &lopt) != CLI_OK)
                return CLI_FAIL;
            run = lopt;
            what = "its opt shape";
        } else {
            continue; /* random data, at the shape a fixed profile gives */
        }
        /* Another rank is for run_inputs_bind to say, with the input's dims. */
        if (run.nb_dims == mn.nb_dims && !dims_within(&run, &mn, &mx)) {
            outside_profile(io, what, &run, profile, &mn, &op, &mx, is_plan);
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

/* ---- --exportOutput ------------------------------------------------------ */

/* One element as a JSON number (null where JSON has none). */
static void put_value(FILE *f, int32_t dtype, const void *data, int64_t i)
{
    double v;
    if (cli_dtype_is_integer(dtype)) {
        fprintf(f, "%lld", (long long)cli_element_i64(dtype, data, i));
        return;
    }
    v = cli_element(dtype, data, i);
    if (!isfinite(v))
        fputs("null", f);
    else if (dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16)
        /* Each is exactly a float32, which 9 significant digits give back. */
        fprintf(f, "%.9g", v);
    else
        fprintf(f, "%.17g", v);
}

int run_export_output(const run_ctx *rc, const char *path)
{
    FILE *f = fopen(path, "w");
    json_writer jw;
    char ep[CLI_ESC_CAP];
    int failed;
    if (!f) {
        cli_error("--exportOutput: cannot create %s: %s", cli_escape(path, ep, sizeof ep),
                  strerror(errno));
        return CLI_FAIL;
    }
    /* trtexec's layout: an object per output, its values on one line. The
     * writer (at depth 0, where it adds no separator) escapes the name. */
    json_init(&jw, f);
    fputs("[\n", f);
    for (int i = 0; i < rc->nb_slots; i++) {
        const run_slot *s = &rc->slots[i];
        prt_dims dims;
        const void *data;
        int64_t n;
        if (run_ctx_output(rc, i, &dims, &data) != CLI_OK) {
            fclose(f);
            return CLI_FAIL;
        }
        fputs(i ? ", { \"name\" : " : "  { \"name\" : ", f);
        json_string(&jw, NULL, s->name);
        fputs("\n  , \"dimensions\" : \"", f);
        for (int32_t d = 0; d < dims.nb_dims; d++)
            fprintf(f, "%s%lld", d ? "x" : "", (long long)dims.d[d]);
        fputs("\"\n  , \"values\" : [ ", f);
        n = cli_volume(&dims);
        for (int64_t k = 0; k < n; k++) {
            if (k)
                fputs(", ", f);
            put_value(f, s->dtype, data, k);
        }
        fputs(" ]\n  }\n", f);
    }
    fputs("]\n", f);
    failed = ferror(f) | (fclose(f) != 0);
    if (failed) {
        cli_error("--exportOutput: writing %s failed", cli_escape(path, ep, sizeof ep));
        return CLI_FAIL;
    }
    printf("outputs written to %s (trtexec's JSON)\n", cli_escape(path, ep, sizeof ep));
    return CLI_OK;
}

/* ---- --avgRuns ----------------------------------------------------------- */

static void print_window_times(const char *what, const cli_bench_times *t)
{
    printf("  %s: min %.4f, median %.4f, max %.4f, mean %.4f\n", what, t->min_ms,
           t->median_ms, t->max_ms, t->mean_ms);
}

void run_print_windows(const cli_bench_stats *stats)
{
    if (!stats->avg.runs)
        return;
    printf(
        "averages of %lld consecutive runs (%lld windows; trtexec's --avgRuns), of the "
        "windows' means:\n",
        (long long)stats->avg.runs, (long long)stats->avg.windows);
    print_window_times(stats->has_device ? "latency (ms, wall per run)" : "latency (ms)",
                       &stats->avg.wall);
    if (stats->has_device)
        print_window_times("GPU time (ms)", &stats->avg.device);
}

static void json_window_times(json_writer *w, const char *key, const cli_bench_times *t)
{
    json_begin_object(w, key);
    json_double(w, "min", t->min_ms);
    json_double(w, "median", t->median_ms);
    json_double(w, "max", t->max_ms);
    json_double(w, "mean", t->mean_ms);
    json_end_object(w);
}

void run_json_windows(json_writer *w, const cli_bench_stats *stats)
{
    if (!stats->avg.runs)
        return;
    json_begin_object(w, "avg_runs");
    json_int(w, "runs", stats->avg.runs);
    json_int(w, "windows", stats->avg.windows);
    json_window_times(w, "latency_ms", &stats->avg.wall);
    if (stats->has_device)
        json_window_times(w, "device_ms", &stats->avg.device);
    json_end_object(w);
}

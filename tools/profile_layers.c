/* Per-layer times of `plugrt run --profile-layers` (profile_layers.h). */
#include "profile_layers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "json.h"
#include "text.h"

/* prt_profiler_fn: layers arrive in order, once per run, so the last layer
 * closes a run. */
static void record(void *user, int32_t layer, const char *layer_name, int64_t elapsed_ns)
{
    cli_layer_recorder *r = user;
    /* Unknown warm-up: the runs go round the rows, so that the last
     * `iterations` runs, the timed ones, are what stays. */
    int64_t k = r->warmup < 0 ? r->run % r->iterations : r->run - r->warmup;
    (void)layer_name;
    if (layer < 0 || layer >= r->nb_layers)
        return;
    if (k >= 0 && k < r->iterations)
        r->ns[k * r->nb_layers + layer] = elapsed_ns;
    if (layer == r->nb_layers - 1)
        r->run++;
}

int cli_layer_recorder_attach(cli_layer_recorder *r, prt_context *ctx,
                              const prt_engine *engine, int64_t warmup,
                              int64_t iterations)
{
    prt_status st;
    memset(r, 0, sizeof *r);
    r->nb_layers = prt_engine_layer_count(engine);
    r->warmup = warmup;
    r->iterations = iterations;
    r->ns = calloc((size_t)iterations * (size_t)(r->nb_layers > 0 ? r->nb_layers : 1),
                   sizeof *r->ns);
    if (!r->ns) {
        cli_error("--profile-layers: out of memory for %lld runs x %d layers",
                  (long long)iterations, (int)r->nb_layers);
        return CLI_FAIL;
    }
    st = prt_context_set_profiler(ctx, record, r);
    if (st) {
        cli_error_api(st, "--profile-layers");
        return CLI_FAIL;
    }
    return CLI_OK;
}

void cli_layer_recorder_free(cli_layer_recorder *r)
{
    free(r->ns);
    r->ns = NULL;
}

/* Timed runs the recorder holds. */
static int64_t kept_runs(const cli_layer_recorder *r)
{
    int64_t k = r->warmup < 0 ? r->run : r->run - r->warmup;
    return k < 0 ? 0 : k > r->iterations ? r->iterations : k;
}

typedef struct layer_row {
    int32_t index;
    double median_ms, mean_ms, min_ms, max_ms;
} layer_row;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Slowest first; equal medians in layer order, so the table is stable. */
static int cmp_row(const void *a, const void *b)
{
    const layer_row *x = a, *y = b;
    if (x->median_ms != y->median_ms)
        return x->median_ms < y->median_ms ? 1 : -1;
    return x->index - y->index;
}

/* The op column: a built-in's name ("Conv"), a plugin's full key. */
static const char *op_label(const prt_layer_info *li, char *buf, size_t cap)
{
    if (cli_is_builtin(li)) {
        snprintf(buf, cap, "%s", li->plugin_name);
        return buf;
    }
    return cli_plugin_key(li->plugin_namespace, li->plugin_name, li->plugin_version, buf,
                          cap);
}

/* Layers the runs skip (prt_layer_info.skipped): left out of the profile. */
static int32_t skipped_count(const prt_engine *engine, int32_t nl)
{
    int32_t n = 0;
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof li};
        n += prt_engine_get_layer(engine, i, &li) == PRT_OK && li.skipped;
    }
    return n;
}

/* The profile as a JSON object (member `key` of the enclosing object, or
 * the document when key is NULL). */
static void profile_object(json_writer *w, const char *key, const layer_row *rows,
                           int32_t nl, int64_t runs, double total_ms,
                           double run_median_ms, const prt_engine *engine)
{
    json_begin_object(w, key);
    json_int(w, "runs", runs);
    json_double(w, "run_median_ms", run_median_ms);
    json_double(w, "layers_median_sum_ms", total_ms);
    json_int(w, "skipped_layers", skipped_count(engine, nl));
    json_begin_array(w, "layers");
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof li};
        char key2[512];
        if (prt_engine_get_layer(engine, rows[i].index, &li) != PRT_OK || li.skipped)
            continue;
        json_begin_object(w, NULL);
        json_int(w, "index", rows[i].index);
        json_string(w, "name", li.name);
        json_string(w, "op", op_label(&li, key2, sizeof key2));
        json_string(w, "device", cli_device_name(li.device));
        json_double(w, "median_ms", rows[i].median_ms);
        json_double(w, "mean_ms", rows[i].mean_ms);
        json_double(w, "min_ms", rows[i].min_ms);
        json_double(w, "max_ms", rows[i].max_ms);
        json_double(w, "share", total_ms > 0 ? rows[i].median_ms / total_ms : 0.0);
        json_end_object(w);
    }
    json_end_array(w);
    json_end_object(w);
}

static int write_json(const char *path, const layer_row *rows, int32_t nl, int64_t runs,
                      double total_ms, double run_median_ms, const prt_engine *engine)
{
    json_writer w;
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("--profile-json %s: cannot write it", path);
        return CLI_FAIL;
    }
    json_init(&w, f);
    profile_object(&w, NULL, rows, nl, runs, total_ms, run_median_ms, engine);
    json_finish(&w);
    if (ferror(f) | (fclose(f) != 0)) {
        cli_error("--profile-json %s: writing failed", path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_layer_profile_print(const cli_layer_recorder *recs, int nb,
                            const prt_engine *engine, double run_median_ms,
                            const char *json_path, json_writer *jw)
{
    int32_t nl = nb > 0 ? recs[0].nb_layers : 0;
    int64_t runs = 0;
    double total = 0;
    layer_row *rows;
    int64_t *v;
    int rc = CLI_OK;
    int32_t skipped;
    for (int c = 0; c < nb; c++)
        runs += kept_runs(&recs[c]);
    rows = calloc((size_t)(nl > 0 ? nl : 1), sizeof *rows);
    v = calloc((size_t)(runs > 0 ? runs : 1), sizeof *v);
    if (!rows || !v) {
        free(rows);
        free(v);
        cli_error("--profile-layers: out of memory for the summary");
        return CLI_FAIL;
    }
    for (int32_t l = 0; l < nl; l++) {
        int64_t n = 0;
        double sum = 0;
        for (int c = 0; c < nb; c++)
            for (int64_t k = 0; k < kept_runs(&recs[c]); k++)
                v[n++] = recs[c].ns[k * nl + l];
        rows[l].index = l;
        if (n == 0)
            continue;
        qsort(v, (size_t)n, sizeof *v, cmp_i64);
        for (int64_t k = 0; k < n; k++)
            sum += (double)v[k];
        rows[l].median_ms =
            (n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2])) *
            1e-6;
        rows[l].mean_ms = sum / (double)n * 1e-6;
        rows[l].min_ms = (double)v[0] * 1e-6;
        rows[l].max_ms = (double)v[n - 1] * 1e-6;
        total += rows[l].median_ms;
    }
    qsort(rows, (size_t)nl, sizeof *rows, cmp_row);
    printf("layer profile (%lld run%s per layer%s; slowest first):\n", (long long)runs,
           runs == 1 ? "" : "s", nb > 1 ? ", every thread's runs" : "");
    printf("  %10s %10s %7s  %s\n", "median ms", "mean ms", "share", "layer (op)");
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof li};
        char key[512], en[CLI_ESC_CAP], ek[CLI_ESC_CAP];
        if (prt_engine_get_layer(engine, rows[i].index, &li) != PRT_OK || li.skipped)
            continue;
        /* A CPU layer of a CUDA engine (CPU fallback): its time holds its
         * copies and the wait for the device before it. */
        printf("  %10.4f %10.4f %6.1f%%  %s (%s)%s\n", rows[i].median_ms, rows[i].mean_ms,
               total > 0 ? 100.0 * rows[i].median_ms / total : 0.0,
               cli_escape(li.name, en, sizeof en),
               cli_escape(op_label(&li, key, sizeof key), ek, sizeof ek),
               li.device != prt_engine_device(engine)
                   ? " on the CPU, with its copies and the wait for the device"
                   : "");
    }
    printf("  sum of the layers' medians %.4f ms; median run %.4f ms\n", total,
           run_median_ms);
    if ((skipped = skipped_count(engine, nl)) > 0)
        printf("  (%d layers not run: nothing reads their outputs; plugrt inspect "
               "names them)\n",
               (int)skipped);
    if (jw)
        profile_object(jw, "layer_profile", rows, nl, runs, total, run_median_ms, engine);
    if (json_path)
        rc = write_json(json_path, rows, nl, runs, total, run_median_ms, engine);
    free(rows);
    free(v);
    return rc;
}

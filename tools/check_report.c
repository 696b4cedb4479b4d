/* The report of `plugrt check` (check_report.h). Names and messages come
 * from a plugin library, so text escapes them (cli_escape) and JSON has
 * its own escaping. */
#include "check_report.h"

#include <stdio.h>
#include <string.h>

#include "describe.h"
#include "text.h"

static const char *verdict_name(int32_t v, int json)
{
    switch (v) {
    case CHK_PASS:
        return "pass";
    case CHK_SKIP:
        return "skip";
    default:
        return json ? "fail" : "FAIL";
    }
}

void chk_report_begin(chk_report *rp, int json, const char *lib, int32_t nb_creators,
                      uint64_t seed, int32_t iterations, int32_t device,
                      const char *about)
{
    char e[CLI_ESC_CAP], e2[CLI_ESC_CAP];
    memset(rp, 0, sizeof *rp);
    rp->json = json;
    if (!json) {
        printf("plugrt check %s: %d creator%s (seed %llu, %d cases per input signature, "
               "%s)\n",
               cli_escape(lib, e, sizeof e), (int)nb_creators,
               nb_creators == 1 ? "" : "s", (unsigned long long)seed, (int)iterations,
               cli_escape(about, e2, sizeof e2));
        return;
    }
    json_init(&rp->w, stdout);
    json_begin_object(&rp->w, NULL);
    json_string(&rp->w, "library", lib);
    json_int(&rp->w, "seed", (int64_t)seed);
    json_int(&rp->w, "iterations", iterations);
    json_string(&rp->w, "device", cli_device_name(device));
    json_string(&rp->w, "device_about", about);
}

static void count(chk_report *rp, const chk_result *r)
{
    if (r->verdict == CHK_PASS)
        rp->passed++;
    else if (r->verdict == CHK_SKIP)
        rp->skipped++;
    else
        rp->failed++;
}

/* Adds a check's counts to the summary's. */
static void tally(chk_report *rp, const char *check, int64_t profiles, int64_t runs)
{
    int32_t i = 0;
    while (i < rp->nb_counted && strcmp(rp->counted[i], check) != 0)
        i++;
    if (i == rp->nb_counted) {
        if (i == CHK_REPORT_CHECKS)
            return;
        rp->counted[rp->nb_counted++] = check;
    }
    rp->profiles[i] += profiles;
    rp->runs[i] += runs;
}

static void json_check(chk_report *rp, const char *check, const chk_result *r,
                       int64_t profiles, int64_t runs)
{
    json_writer *w = &rp->w;
    json_begin_object(w, NULL);
    json_string(w, "check", check);
    json_string(w, "status", verdict_name(r->verdict, 1));
    json_string(w, "message", r->message);
    if (r->verdict == CHK_FAIL && r->shape[0])
        json_string(w, "shape", r->shape);
    else
        json_null(w, "shape");
    if (r->verdict == CHK_FAIL && r->tactic >= 0)
        json_int(w, "tactic", r->tactic);
    else
        json_null(w, "tactic");
    if (r->verdict == CHK_FAIL && r->tensor[0])
        json_string(w, "tensor", r->tensor);
    else
        json_null(w, "tensor");
    if (r->verdict == CHK_FAIL && r->element >= 0)
        json_int(w, "element", r->element);
    else
        json_null(w, "element");
    json_int(w, "profiles", profiles);
    json_int(w, "runs", runs);
    json_end_object(w);
}

static void text_check(const char *check, const chk_result *r)
{
    char msg[2 * CHK_MSG], at[1024];
    size_t n = 0;
    at[0] = '\0';
    if (r->verdict == CHK_FAIL && (r->shape[0] || r->tactic >= 0 || r->tensor[0])) {
        n += (size_t)snprintf(at, sizeof at, " [%s", r->shape[0] ? r->shape : "");
        if (r->tactic >= 0 && n < sizeof at)
            n += (size_t)snprintf(at + n, sizeof at - n, "%stactic %d",
                                  r->shape[0] ? "; " : "", (int)r->tactic);
        if (r->tensor[0] && n < sizeof at)
            n += (size_t)snprintf(at + n, sizeof at - n, "; %s", r->tensor);
        if (r->tensor[0] && r->element >= 0 && n < sizeof at)
            n += (size_t)snprintf(at + n, sizeof at - n, " element %lld",
                                  (long long)r->element);
        if (n < sizeof at)
            snprintf(at + n, sizeof at - n, "]");
    }
    printf("  %-4s  %-13s %s%s\n", verdict_name(r->verdict, 0), check,
           cli_escape(r->message, msg, sizeof msg), at);
    fflush(stdout);
}

void chk_report_library(chk_report *rp, const chk_result *r)
{
    count(rp, r);
    if (rp->json) {
        json_begin_array(&rp->w, "library_checks");
        json_check(rp, "abi", r, 0, 0);
        json_end_array(&rp->w);
        json_begin_array(&rp->w, "plugins");
        return;
    }
    printf("library\n");
    text_check("abi", r);
}

void chk_report_plugin_begin(chk_report *rp, const chk_creator_info *info)
{
    char key[3 * CHK_NAME_MAX + 8], e[CLI_ESC_CAP];
    cli_plugin_key(info->ns, info->name, info->version, key, sizeof key);
    rp->plugins++;
    rp->untested_why[0] = '\0';
    if (!rp->json) {
        printf("%s\n", cli_escape(key, e, sizeof e));
        return;
    }
    json_begin_object(&rp->w, NULL);
    json_string(&rp->w, "key", key);
    json_string(&rp->w, "namespace", info->ns);
    json_string(&rp->w, "name", info->name);
    json_string(&rp->w, "version", info->version);
    json_begin_array(&rp->w, "checks");
}

void chk_report_check(chk_report *rp, const char *check, const chk_result *r,
                      int64_t profiles, int64_t runs)
{
    count(rp, r);
    tally(rp, check, profiles, runs);
    if (rp->json)
        json_check(rp, check, r, profiles, runs);
    else
        text_check(check, r);
}

void chk_report_untested(chk_report *rp, const char *why, int allowed)
{
    char msg[2 * CHK_MSG];
    rp->untested++;
    rp->untested_allowed += allowed != 0;
    snprintf(rp->untested_why, sizeof rp->untested_why, "%s", why);
    if (!rp->json) {
        printf("    UNTESTED  %s%s\n", cli_escape(why, msg, sizeof msg),
               allowed ? " (allowed by --allow-untested)" : "");
        fflush(stdout);
    }
}

void chk_report_plugin_end(chk_report *rp)
{
    if (rp->json) {
        json_end_array(&rp->w);
        if (rp->untested_why[0])
            json_string(&rp->w, "untested", rp->untested_why);
        else
            json_null(&rp->w, "untested");
        json_end_object(&rp->w);
    }
}

/* "profiles configured: outputs 40, shapes 9" (the checks that count it). */
static void text_counts(const chk_report *rp, const char *what, const int64_t *n)
{
    const char *sep = "";
    printf("%s:", what);
    for (int32_t i = 0; i < rp->nb_counted; i++)
        if (strcmp(rp->counted[i], "abi") != 0 && strcmp(rp->counted[i], "errors") != 0) {
            printf("%s %s %lld", sep, rp->counted[i], (long long)n[i]);
            sep = ",";
        }
    printf("\n");
}

int chk_report_end(chk_report *rp)
{
    int32_t total = rp->passed + rp->failed + rp->skipped;
    if (rp->json) {
        json_end_array(&rp->w);
        json_begin_object(&rp->w, "summary");
        json_int(&rp->w, "plugins", rp->plugins);
        json_int(&rp->w, "checks", total);
        json_int(&rp->w, "passed", rp->passed);
        json_int(&rp->w, "failed", rp->failed);
        json_int(&rp->w, "skipped", rp->skipped);
        json_int(&rp->w, "untested", rp->untested);
        json_begin_object(&rp->w, "cases");
        for (int32_t i = 0; i < rp->nb_counted; i++) {
            json_begin_object(&rp->w, rp->counted[i]);
            json_int(&rp->w, "profiles", rp->profiles[i]);
            json_int(&rp->w, "runs", rp->runs[i]);
            json_end_object(&rp->w);
        }
        json_end_object(&rp->w);
        json_end_object(&rp->w);
        json_end_object(&rp->w);
        json_finish(&rp->w);
    } else {
        printf("summary: %d plugin%s, %d checks: %d passed, %d failed, %d skipped",
               (int)rp->plugins, rp->plugins == 1 ? "" : "s", (int)total, (int)rp->passed,
               (int)rp->failed, (int)rp->skipped);
        if (rp->untested)
            printf("; %d plugin%s untested%s", (int)rp->untested,
                   rp->untested == 1 ? "" : "s",
                   rp->untested == rp->untested_allowed ? " (allowed)" : "");
        printf("\n");
        text_counts(rp, "profiles configured", rp->profiles);
        text_counts(rp, "enqueue runs", rp->runs);
    }
    fflush(stdout);
    if (rp->failed)
        return CLI_FAIL;
    return rp->untested > rp->untested_allowed ? CHK_EXIT_UNTESTED : CLI_OK;
}

/*
 * What `plugrt check` prints: one line per check as it ends (text), or one
 * JSON document at the end (--json), then a summary. Text:
 *
 *   plugrt check ./libx.so: 2 creators (seed 1, 3 cases per signature, cpu)
 *   library
 *     pass  abi           the entry point answers ABI 1 with 2 creators; ...
 *   ext::RowTopK@1
 *     pass  abi           creator, schema (1 fields) and plugin tables sane; ...
 *     FAIL  coverage      out0 element 5 of 12 was not written (...)
 *                         [in0 float32 3x4; tactic 0; out0 element 5]
 *     skip  values        the plugin states no output values (...)
 *   summary: 2 plugins, 38 checks: 35 passed, 1 failed, 2 skipped
 *   profiles configured: outputs 40, shapes 9, formats 3, ...
 *   enqueue runs: size-tensors 12, values 0, coverage 9, ...
 *
 * (the bracket ends the same line). A creator of which nothing ran ends
 * its block with
 *
 *     UNTESTED  no input signature ran: ...
 *
 * and the summary line then adds "; 1 plugin untested". JSON: {"library", "seed",
 * "iterations", "device", "device_about", "library_checks": [check...], "plugins":
 * [{"key", "namespace", "name", "version", "checks": [check...], "untested":
 * why or null}], "summary": {"plugins", "checks", "passed", "failed",
 * "skipped", "untested", "cases": {check: {"profiles", "runs"}}}}, each
 * check {"check", "status": "pass"|"fail"|"skip", "message", "shape",
 * "tactic", "tensor", "element", "profiles", "runs"}, shape to element null
 * where they do not apply. profiles: profiles configure accepted; runs:
 * runs of enqueue that returned PRT_OK (summed over plugins in "cases").
 */
#ifndef PLUGRT_TOOLS_CHECK_REPORT_H
#define PLUGRT_TOOLS_CHECK_REPORT_H

#include "check.h"
#include "json.h"

#define CHK_REPORT_CHECKS 32 /* distinct check names counted in the summary */

typedef struct chk_report {
    int json;
    json_writer w;
    int32_t plugins, passed, failed, skipped;
    int32_t untested, untested_allowed;
    char untested_why[CHK_MSG + 64]; /* of the plugin being reported */
    int32_t nb_counted;
    const char *counted[CHK_REPORT_CHECKS]; /* borrowed names */
    int64_t profiles[CHK_REPORT_CHECKS], runs[CHK_REPORT_CHECKS];
} chk_report;

/* `about`: the device as the header names it ("cpu", "cuda: NVIDIA H200,
 * compute capability 9.0"). */
void chk_report_begin(chk_report *rp, int json, const char *lib, int32_t nb_creators,
                      uint64_t seed, int32_t iterations, int32_t device,
                      const char *about);
/* The library's own checks come first, then each plugin's. */
void chk_report_library(chk_report *rp, const chk_result *r);
void chk_report_plugin_begin(chk_report *rp, const chk_creator_info *info);
/* A check's verdict, with the profiles its child configured and the runs
 * of enqueue it made (0 for a check that did not run). */
void chk_report_check(chk_report *rp, const char *check, const chk_result *r,
                      int64_t profiles, int64_t runs);
/* The plugin being reported is untested (nothing of it ran): says why;
 * `allowed` (--allow-untested) makes it no reason for a non-zero exit. */
void chk_report_untested(chk_report *rp, const char *why, int allowed);
void chk_report_plugin_end(chk_report *rp);
/* The summary; CLI_FAIL if any check failed, else CHK_EXIT_UNTESTED if a
 * plugin is untested and that was not allowed, else CLI_OK. */
int chk_report_end(chk_report *rp);

#endif /* PLUGRT_TOOLS_CHECK_REPORT_H */

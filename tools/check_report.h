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
 *
 * (the bracket ends the same line). JSON: {"library", "seed",
 * "iterations", "device", "device_about", "library_checks": [check...], "plugins":
 * [{"key", "namespace", "name", "version", "checks": [check...]}], "summary":
 * {"plugins", "checks", "passed", "failed", "skipped"}}, each check
 * {"check", "status": "pass"|"fail"|"skip", "message", "shape", "tactic",
 * "tensor", "element"}, the last four null where they do not apply.
 */
#ifndef PLUGRT_TOOLS_CHECK_REPORT_H
#define PLUGRT_TOOLS_CHECK_REPORT_H

#include "check.h"
#include "json.h"

typedef struct chk_report {
    int json;
    json_writer w;
    int32_t plugins, passed, failed, skipped;
} chk_report;

/* `about`: the device as the header names it ("cpu", "cuda: NVIDIA H200,
 * compute capability 9.0"). */
void chk_report_begin(chk_report *rp, int json, const char *lib, int32_t nb_creators,
                      uint64_t seed, int32_t iterations, int32_t device,
                      const char *about);
/* The library's own checks come first, then each plugin's. */
void chk_report_library(chk_report *rp, const chk_result *r);
void chk_report_plugin_begin(chk_report *rp, const chk_creator_info *info);
void chk_report_check(chk_report *rp, const char *check, const chk_result *r);
void chk_report_plugin_end(chk_report *rp);
/* The summary; CLI_FAIL if any check failed, else CLI_OK. */
int chk_report_end(chk_report *rp);

#endif /* PLUGRT_TOOLS_CHECK_REPORT_H */

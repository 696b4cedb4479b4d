#!/usr/bin/env bash
# `plugrt check` on check::Positives (positives.c) built with one defect at
# a time: the plugin without a defect passes every check; each defect
# fails the check that names it, with what was wrong and where, and the
# checker survives the plugin that crashes in enqueue (its later checks
# and the summary are still reported, exit status 1).
. "$COMMON"

# expect_fail DEFECT CHECK REGEX [ARGS...]: the check fails, its line
# matching REGEX; the run ends with a summary and exit status 1.
expect_fail() {
  local defect=$1 check=$2 regex=$3
  shift 3
  expect_rc 1 "$defect" "$PLUGRT" check "$LIBS/positives_$defect.so" "$@" || return
  expect_grep "^  FAIL  $check +$regex" "$defect.out" "$defect: the $check check"
  expect_grep "^summary: 1 plugin, 22 checks: " "$defect.out" "$defect: the summary"
}

# Without a defect: every check passes but alias (nothing aliases) and the
# two of CUDA.
expect_rc 0 none "$PLUGRT" check "$LIBS/positives_none.so" && {
  expect_grep "^summary: 1 plugin, 22 checks: 19 passed, 0 failed, 3 skipped$" none.out
  expect_grep "^  skip  alias +no output aliases an input$" none.out
  expect_grep "^  pass  values +[1-9][0-9]* stated values agree" none.out
  expect_grep "^  pass  tactics +1 listed tactic agrees with tactic 0" none.out
}

# A plugin that needs constant input dims is tested with them.
echo '{"check::Positives@1": {"constant_dims": 1, "threshold": -0.5}}' > constant.json
expect_rc 0 constant "$PLUGRT" check "$LIBS/positives_none.so" --fields constant.json && {
  expect_grep "^  pass  outputs +.*rank 1\|2\|8 \(constant dims only\)$" constant.out
  expect_grep "^summary: 1 plugin, 22 checks: 19 passed, 0 failed, 3 skipped$" constant.out
}

# The four defects the checker must catch, with the shape, tactic and
# element where they showed.
expect_fail size_bound size-tensors "out1, a size tensor, holds [0-9]+, above its upper bound [0-9]+ \[in0 float32 [0-9x]+; tactic 0; out1 element 0\]$"
expect_grep "^  FAIL  bounds +first run: out0: byte [0-9]+ was written, past its [0-9]+ bytes \[in0 float32 [0-9x]+; tactic 0; out0 element [0-9]+\]$" \
  size_bound.out "size_bound: the bounds check"
expect_fail clone_share clone "the original's run, after its clone ran other shapes (fails where the reference ran|differs)"
expect_fail unwritten coverage "out0 element [0-9]+ of [0-9]+ was not written .*\[in0 float32 [0-9x]+; tactic 0; out0 element [0-9]+\]$"
expect_fail format_read formats "supports_format_combination\(pos 0, float32\) answers [01], then [01] once positions above 0 change: it reads entries above pos"

# A crash in enqueue fails the checks that run the plugin, and the checker
# goes on: the checks that do not run it still pass.
expect_fail crash_enqueue coverage "(crashed: SIG[A-Z]+ \(.*\)|the process exited with status [0-9]+) in enqueue \(in0 float32 [0-9x]+, tactic 0\)"
expect_grep "^  pass  formats " crash_enqueue.out "crash_enqueue: formats, after the crash"
expect_grep "^  FAIL  tactics +.* in enqueue" crash_enqueue.out "crash_enqueue: tactics, after the crash"

# The others, each caught by its own check.
expect_fail silent_error errors "get_output_shapes \(1 input: float32 rank 8\) failed \(PRT_ERR_SHAPE\) without a message: set_error was not called \(seen by outputs\)"
expect_fail identity abi "build-phase plugin: the plugin reports name \"Positive\", its creator \"Positives\""
echo '{"check::Positives@1": {"threshold": 0.5}}' > threshold.json
expect_fail serialize serialize "the plugin recreated from its fields differs: " --fields threshold.json
expect_rc 0 serialize_default "$PLUGRT" check "$LIBS/positives_serialize.so" --plugin check::Positives
expect_fail tactic tactics "tactic 1 \(against tactic 0\) differs: out0 has dims [0-9]+, before [0-9]+ \[in0 float32 [0-9x]+; tactic 1; out0\]$"
expect_fail workspace workspace "get_workspace_size asks [0-9]+ bytes for a profile with these maxima but [0-9]+ for one with smaller maxima"
expect_fail input_write bounds "first run: in0, an input no output aliases, was written \(element 0\)"
expect_fail empty_crash empty-inputs "(crashed: SIGFPE|the process exited with status [0-9]+) .*in enqueue"
expect_grep "^  pass  coverage " empty_crash.out "empty_crash: only zero-size inputs crash it"
expect_fail empty_hang empty-inputs "timed out after 2 s in enqueue \(in0 float32 0, tactic 0\)" --timeout 2
expect_grep "^  pass  tactics " empty_hang.out "empty_hang: the checks after the hang"
expect_fail values values "get_output_values states out2 value 0 = [0-9]+, enqueue writes [0-9]+"
# Scratch shared by every object: one run at a time (contexts) is fine, two
# at once from two threads are not.
expect_fail shared_scratch threads "context [12]'s run [0-9]+ on a thread of its own, while context [12] ran on another, differs: out0 "
expect_grep "^  pass  contexts " shared_scratch.out "shared_scratch: contexts used one after the other"

# JSON names the same failure, with where it was.
expect_rc 1 unwritten_json "$PLUGRT" check "$LIBS/positives_unwritten.so" --json &&
  expect_rc 0 unwritten_json_parse "$PYTHON" - unwritten_json.out <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
[p] = doc["plugins"]
assert p["key"] == "check::Positives@1", p
c = {c["check"]: c for c in p["checks"]}
cov = c["coverage"]
assert cov["status"] == "fail" and cov["tensor"] == "out0", cov
assert cov["tactic"] == 0 and cov["element"] >= 0 and cov["shape"].startswith("in0 float32 "), cov
assert c["formats"]["status"] == "pass" and c["alias"]["status"] == "skip", c
assert doc["summary"]["failed"] >= 1, doc["summary"]
PY
finish

#!/usr/bin/env bash
# `plugrt check --device cuda` on the GPU (label cuda; skipped, saying why,
# where CUDA is not usable): the standard plugin library passes every
# check on CUDA, in text and (one plugin) in JSON, its reference check
# comparing CUDA with the CPU and its stream check queuing each run behind
# busy work; check::Positives with its kernel (positives_cuda.cu) passes
# every check on both devices, and each CUDA defect fails, on CUDA only,
# the check that names it.
. "$COMMON"

"$PLUGRT" devices | grep -q "^  cuda  usable" ||
  skip "CUDA is not usable here: $("$PLUGRT" devices | sed -n 's/^  cuda  not usable: //p')"
[ -f "$LIBS/positives_cuda_none.so" ] || skip "this build has no CUDA test plugins"

checks="abi outputs shapes size-tensors formats workspace values coverage bounds repeat
alias clone attach serialize contexts threads empty-inputs tactics stream reference errors"

expect_rc 0 standard "$PLUGRT" check "$PLUGINS_LIB" --device cuda && {
  expect_grep "^plugrt check .*: 5 creators \(seed 1, 3 cases per input signature, cuda: .+, compute capability [0-9]+\.[0-9]+\)$" \
    standard.out "the header names the GPU"
  expect_grep "^summary: 5 plugins, 106 checks: [0-9]+ passed, 0 failed, [0-9]+ skipped$" standard.out
  grep -q "FAIL" standard.out && fail "a check fails on CUDA on the standard library"
  for key in NonZeroPlugin@1 CustomHardmax@1 example::circ_pad_plugin@1 example::AddInPlace@1 \
    example::QuantFC@1; do
    block=$(sed -n "/^$key\$/,/^[^ ]/p" standard.out)
    for c in $checks; do
      echo "$block" | grep -Eq "^  (pass|skip)  $c " || fail "$key: no pass or skip line for $c"
    done
    # What runs the plugin runs on CUDA, not skipped for want of it.
    for c in coverage bounds repeat clone attach serialize contexts threads empty-inputs \
      tactics stream reference; do
      echo "$block" | grep -Eq "^  pass  $c " || fail "$key: $c does not pass on CUDA"
    done
  done
  expect_grep "^  pass  size-tensors +1 size tensor" standard.out "NonZero's size tensor on CUDA"
  expect_grep "^  pass  alias +in place and apart agree" standard.out "AddInPlace in place on CUDA"
  # NonZero lists tactics 1..4 and 6 (nonzero.c); each must be compared on CUDA.
  sed -n "/^NonZeroPlugin@1\$/,/^[^ ]/p" standard.out >nonzero-block.out
  expect_grep "^  pass  tactics +5 listed tactics agree with tactic 0" nonzero-block.out \
    "NonZero's tactics on CUDA"
  expect_grep "^  pass  reference +CUDA agrees with the CPU in [1-9][0-9]* cases \([0-9]+ elements; integers exactly; float32 within 1e-05 \+ 0\.0001\|x\|; float16 within 0\.001 \+ 0\.01\|x\|\)$" \
    standard.out "the reference check names its tolerances"
}

expect_rc 0 standard_json "$PLUGRT" check "$PLUGINS_LIB" --device cuda --json \
  --plugin CustomHardmax@1 &&
  expect_rc 0 standard_json_parse "$PYTHON" - standard_json.out <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["device"] == "cuda" and "compute capability" in doc["device_about"], doc
assert [p["key"] for p in doc["plugins"]] == ["CustomHardmax@1"], doc["plugins"]
for p in doc["plugins"]:
    c = {c["check"]: c for c in p["checks"]}
    assert c["reference"]["status"] == "pass", (p["key"], c["reference"])
    assert c["stream"]["status"] == "pass", (p["key"], c["stream"])
assert doc["summary"]["failed"] == 0, doc["summary"]
PY

# Positives with its kernel: everything passes on both devices (alias has
# nothing to alias; on the CPU, stream and reference are CUDA's).
expect_rc 0 none_cuda "$PLUGRT" check "$LIBS/positives_cuda_none.so" --device cuda &&
  expect_grep "^summary: 1 plugin, 22 checks: 21 passed, 0 failed, 1 skipped$" none_cuda.out
expect_rc 0 none_cpu "$PLUGRT" check "$LIBS/positives_cuda_none.so" &&
  expect_grep "^summary: 1 plugin, 22 checks: 19 passed, 0 failed, 3 skipped$" none_cpu.out

# expect_cuda_fail DEFECT CHECK REGEX: right on the CPU; on CUDA the check
# fails, its line matching REGEX.
expect_cuda_fail() {
  local defect=$1 check=$2 regex=$3
  expect_rc 0 "${defect}_cpu" "$PLUGRT" check "$LIBS/positives_cuda_$defect.so" ||
    fail "$defect: the CPU, which has no defect, fails"
  expect_rc 1 "$defect" "$PLUGRT" check "$LIBS/positives_cuda_$defect.so" --device cuda ||
    return
  expect_grep "^  FAIL  $check +$regex" "$defect.out" "$defect: the $check check"
  expect_grep "^summary: 1 plugin, 22 checks: " "$defect.out" "$defect: the summary"
}

expect_cuda_fail size_bound size-tensors "out1, a size tensor, holds [0-9]+, above its upper bound [0-9]+ \[in0 float32 [0-9x]+; tactic 0; out1 element 0\]$"
expect_grep "^  FAIL  bounds +first run: out0: byte [0-9]+ was written, past its [0-9]+ bytes \[in0 float32 [0-9x]+; tactic 0; out0 element [0-9]+\]$" \
  size_bound.out "size_bound: the bounds check, on the device's guard bytes"
expect_cuda_fail unwritten coverage "out0 element [0-9]+ of [0-9]+ was not written .*\[in0 float32 [0-9x]+; tactic 0; out0 element [0-9]+\]$"
expect_cuda_fail disagree reference "CUDA and the CPU disagree: out0 element [0-9]+ is [-0-9.e]+ on CUDA, [-0-9.e]+ on the CPU \[in0 float32 [0-9x]+; tactic 0; out0 element [0-9]+\]$"
expect_grep "^  pass  tactics " disagree.out "disagree: consistent on CUDA itself"
expect_cuda_fail stream stream "a run queued behind earlier work on its stream differs: .*is it launched on another stream"
# The other checks wait for the whole device after each run, so those that
# run one context at a time pass (threads waits only for each thread's own
# stream, as a user of two contexts would, and may catch it too).
for c in coverage repeat contexts; do
  expect_grep "^  pass  $c " stream.out "stream: $c waits for the whole device, so it passes"
done
finish

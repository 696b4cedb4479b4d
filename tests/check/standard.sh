#!/usr/bin/env bash
# `plugrt check` on the standard plugin library: every check passes or is
# skipped with a reason, in text and in JSON, and the two agree; fields
# given as example values (a JSON file) reach the creators.
. "$COMMON"

# The checks every creator gets, in order (cmd_check.c).
checks="abi outputs shapes size-tensors formats workspace values coverage bounds repeat
alias clone attach serialize contexts threads empty-inputs tactics stream reference errors"

expect_rc 0 text "$PLUGRT" check "$PLUGINS_LIB" && {
  expect_grep "^plugrt check .*: 5 creators \(seed 1, 3 cases per input signature, cpu\)$" text.out
  expect_grep "^  pass  abi +the entry point answers ABI 1 with 5 creators" text.out
  expect_grep "^summary: 5 plugins, 106 checks: [0-9]+ passed, 0 failed, [0-9]+ skipped$" text.out
  grep -q "FAIL" text.out && fail "a check fails on the standard library"
  for key in NonZeroPlugin@1 CustomHardmax@1 example::circ_pad_plugin@1 example::AddInPlace@1 \
    example::QuantFC@1; do
    block=$(sed -n "/^$key\$/,/^[^ ]/p" text.out)
    for c in $checks; do
      echo "$block" | grep -Eq "^  (pass|skip)  $c " || fail "$key: no pass or skip line for $c"
    done
  done
  # What the standard plugins have is tested, not skipped.
  expect_grep "^  pass  size-tensors +1 size tensor" text.out "NonZero's size tensor is checked"
  expect_grep "^  pass  alias +in place and apart agree" text.out "AddInPlace's alias is checked"
  expect_grep "^  pass  coverage +every output element written in [1-9][0-9]* cases" text.out
  # AddInPlace's output aliases a: it starts as a's copy, not as a gap.
  expect_grep "^  pass  coverage +every output aliases an input: in [1-9][0-9]* cases their [1-9][0-9]* elements hold the input's copy" \
    text.out "AddInPlace's coverage names its aliased output"
  [ "$(grep -Ec "^  pass  threads +two contexts run at once from two threads agree with runs alone \([1-9][0-9]* cases" text.out)" = 5 ] ||
    fail "every standard plugin passes the threads check"
  # On the CPU the CUDA checks say what they need.
  [ "$(grep -Ec "^  skip  stream +CUDA only \(--device cuda\)$" text.out)" = 5 ] ||
    fail "stream is skipped on the CPU, saying why"
  [ "$(grep -Ec "^  skip  reference +compares CUDA with the CPU \(--device cuda\)$" text.out)" = 5 ] ||
    fail "reference is skipped on the CPU, saying why"
}

expect_rc 0 json "$PLUGRT" check "$PLUGINS_LIB" --json &&
  expect_rc 0 json_parse "$PYTHON" - json.out text.out <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert doc["seed"] == 1 and doc["iterations"] == 3 and doc["device"] == "cpu", doc
assert doc["device_about"] == "cpu", doc
assert [c["status"] for c in doc["library_checks"]] == ["pass"], doc["library_checks"]
keys = [p["key"] for p in doc["plugins"]]
assert keys == ["NonZeroPlugin@1", "CustomHardmax@1", "example::circ_pad_plugin@1",
                "example::AddInPlace@1", "example::QuantFC@1"], keys
n = 1
for p in doc["plugins"]:
    for c in p["checks"]:
        n += 1
        assert c["status"] in ("pass", "skip"), (p["key"], c)
        assert c["message"], (p["key"], c)
        assert c["shape"] is None and c["tactic"] is None and c["element"] is None, c
        # The same verdict and message as the text line.
        line = "  %s  %-13s %s" % (c["status"], c["check"], c["message"])
        assert line in text, line
s = doc["summary"]
assert s["plugins"] == 5 and s["checks"] == n and s["failed"] == 0, s
assert s["passed"] + s["skipped"] == n, s
PY

# Example fields: each plugin checked with other values than its defaults.
cat > fields.json <<'JSON'
{"NonZeroPlugin@1": {"rowOrder": 0, "backend": "cpu"},
 "CustomHardmax@1": {"axis": 0},
 "example::circ_pad_plugin@1": {"pads": [1, 2, 0, 1]}}
JSON
expect_rc 0 fields "$PLUGRT" check "$PLUGINS_LIB" --fields fields.json --seed 7 && {
  expect_grep "^summary: 5 plugins, 106 checks: [0-9]+ passed, 0 failed" fields.out
  # pads [1, 2, 0, 1] pad the last two dims: rank 2 and up.
  expect_grep "^  pass  outputs +1 output \(float32\); testing 1 input: in0 float32\|float16, rank 2\|" \
    fields.out "circ_pad's pads reach the creator"
}
expect_rc 0 one "$PLUGRT" check "$PLUGINS_LIB" --plugin example::AddInPlace@1 && {
  expect_grep "^summary: 1 plugin, 22 checks: [0-9]+ passed, 0 failed" one.out
  grep -q "NonZeroPlugin" one.out && fail "--plugin checks only the plugin named"
}

# Wrong use and bad files: usage errors are 2, bad inputs 1, never a crash.
expect_rc 2 no_lib "$PLUGRT" check
expect_rc 2 bad_device "$PLUGRT" check "$PLUGINS_LIB" --device tpu
expect_rc 1 no_plugin "$PLUGRT" check "$PLUGINS_LIB" --plugin nosuch@1 &&
  expect_grep "has no creator nosuch@1" no_plugin.err
echo '{"CustomHardmax@1": {"axis": "last"}}' > bad_type.json
expect_rc 1 bad_type "$PLUGRT" check "$PLUGINS_LIB" --fields bad_type.json &&
  expect_grep "axis.*is int32, so its value must be an integer" bad_type.err
echo '{"CustomHardmax@1": {"axis": 1,}}' > bad_json.json
expect_rc 1 bad_json "$PLUGRT" check "$PLUGINS_LIB" --fields bad_json.json &&
  expect_grep "is not JSON: line 1" bad_json.err
echo '{"CustomHardmax@1": {"axes": 1}}' > bad_field.json
expect_rc 1 bad_field "$PLUGRT" check "$PLUGINS_LIB" --fields bad_field.json &&
  expect_grep "field 'axes' is not in the creator's schema" bad_field.err
expect_rc 1 not_a_lib "$PLUGRT" check "$COMMON" &&
  expect_grep "^  FAIL  abi +cannot open the library|^  FAIL  abi +dlopen fails" not_a_lib.out

# --device cuda where CUDA is not usable: it says why (the reason
# `plugrt devices` gives) and exits 1, checking nothing; on a GPU, cuda.sh.
if ! "$PLUGRT" devices | grep -q "^  cuda  usable"; then
  reason=$("$PLUGRT" devices | sed -n 's/^  cuda  not usable: \(.*\)$/\1/p')
  expect_rc 1 cuda "$PLUGRT" check "$PLUGINS_LIB" --device cuda --plugin CustomHardmax@1 && {
    expect_grep "^plugrt check: error: --device cuda: .+ \[PRT_ERR_UNSUPPORTED\]$" cuda.err
    grep -qF -- "$reason" cuda.err || fail "check --device cuda does not say '$reason'"
    expect_grep "plugrt devices" cuda.err "cuda: the hint"
    [ -s cuda.out ] && fail "check --device cuda reports checks where CUDA is not usable"
  }
fi
finish

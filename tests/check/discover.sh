#!/usr/bin/env bash
# `plugrt check` finds what a plugin takes as the builder negotiates it,
# takes an input spec for what it cannot guess, and passes nothing it did
# not run:
#   select.c    float32 data + bool mask -> selected values + a size tensor;
#               any dtypes in get_output_dtypes, filtered in
#               supports_format_combination
#   segsum.c    data [N, D] and ids [N]: inputs sharing their leading dim
#   bias.c      x [N, C] and b [1, C]: a broadcast
#   required.c  a creator with a required field
# Each broken twin is caught by the check that names its defect on every
# one of 20 seeds; each fixed twin passes on every seed with every check
# that runs the plugin run (not skipped).
. "$COMMON"

SEEDS=$(seq 1 20)
# The checks that run the plugin, which the fixed twins must all run (alias,
# values and size-tensors apply only to plugins that alias, state values or
# declare size tensors; stream and reference only on CUDA).
run_checks="coverage bounds repeat clone attach serialize contexts threads empty-inputs
tactics"

# all_ran NAME: every check of run_checks (and size-tensors for Select)
# passed in NAME.out, with runs.
all_ran() {
  local out=$1.out c extra=
  case $1 in select*) extra=size-tensors ;; esac
  for c in $run_checks $extra; do
    grep -Eq "^  pass  $c " "$out" || fail "$1: $c did not pass: $(grep -E "^  [a-zA-Z]+ +$c " "$out")"
    grep -Eq "^enqueue runs:.* $c [1-9][0-9]*(,|$)" "$out" || fail "$1: $c made no run"
  done
  grep -q "UNTESTED" "$out" && fail "$1: untested"
}

# passes LIB [ARGS...]: 20 of 20 seeds pass, every run-time check run.
passes() {
  local lib=$1 s
  shift
  for s in $SEEDS; do
    expect_rc 0 "${lib}_$s" "$PLUGRT" check "$LIBS/$lib.so" --seed "$s" "$@" || continue
    expect_grep "^summary: 1 plugin, 22 checks: [0-9]+ passed, 0 failed, [0-9]+ skipped$" "${lib}_$s.out"
    all_ran "${lib}_$s"
  done
}

# caught LIB CHECK REGEX [ARGS...]: 20 of 20 seeds fail CHECK.
caught() {
  local lib=$1 check=$2 regex=$3 s
  shift 3
  for s in $SEEDS; do
    expect_rc 1 "${lib}_$s" "$PLUGRT" check "$LIBS/$lib.so" --seed "$s" "$@" || continue
    expect_grep "^  FAIL  $check +$regex" "${lib}_$s.out" "$lib seed $s: the $check check"
  done
}

# Mixed dtypes found through supports_format_combination.
passes select_none
expect_grep "^  pass  outputs +2 outputs \(float32, int32\); testing 2 inputs: in0 float32, rank 1; in1 bool, rank 1; dims tied by trailing dims$" select_none_1.out
caught select_overrun size-tensors "out1, a size tensor, holds [0-9]+, above its upper bound [0-9]+"
caught select_overrun bounds ".*out0: byte [0-9]+ was written, past its [0-9]+ bytes"

# Leading dims tied, configure refusing the rest.
passes segsum_none
expect_grep "^  pass  outputs +1 output \(float32\); testing 2 inputs: in0 float32, rank 2; in1 int32, rank 1; dims tied by leading dims$" segsum_none_1.out
caught segsum_overrun bounds ".*out0: byte [0-9]+ was written, past its [0-9]+ bytes"

# A bias [1, C] beside x [N, C]: found by broadcasting.
passes bias_none
expect_grep "^  pass  outputs +1 output \(float32\); testing 2 inputs: in0 float32, rank 2; in1 float32, rank 2; dims broadcast$" bias_none_1.out

# Nothing found: untested, quoting the refusal of the candidate that got
# furthest (configure's), not the last candidate tried.
expect_rc 3 refuse_all "$PLUGRT" check "$LIBS/segsum_refuse_all.so" &&
  expect_grep "^    UNTESTED  no input signature ran: no inputs the plugin accepts were found \(.*; the furthest refusal: 2 inputs: float32 rank 2, int32 rank 1, dims independent: configure refuses the profile: SegmentSum: no profile suits it\); describe the inputs with --inputs$" refuse_all.out

# An input spec replaces discovery, on the command line or in the fields
# file; one the plugin refuses is a failure quoting its refusal.
passes segsum_none --inputs 'data:float32:Nx8,ids:int32:N,N=0..300'
# A range above 0 and literal dims: no input can be empty, and the check
# says so rather than counting cases that were not empty.
expect_rc 0 nonempty_spec "$PLUGRT" check "$LIBS/segsum_none.so" --inputs 'data:float32:Nx8,ids:int32:N,N=1..300' &&
  expect_grep "^  skip  empty-inputs +no input has a dim that could be 0$" nonempty_spec.out
expect_grep "^  pass  outputs .*testing 2 inputs: in0 float32, rank 2; in1 int32, rank 1; dims as the input spec says$" segsum_none_1.out
echo '{"check::SegmentSum@1": {"segments": 3, "@inputs": "data:float32:NxD,ids:int32:N"}}' >spec.json
passes segsum_none --fields spec.json
caught segsum_overrun bounds ".*out0: byte [0-9]+ was written" --fields spec.json
expect_rc 1 refused_spec "$PLUGRT" check "$LIBS/segsum_none.so" --inputs 'data:float32:Nx8,ids:int32:M,M=40..50,N=1..30' &&
  expect_grep "^  FAIL  outputs +the plugin refuses the input spec \(2 inputs: float32 rank 2, int32 rank 1\): .*configure refuses the profile: SegmentSum: data \[N, D\] and ids \[N\] must share N" refused_spec.out
expect_rc 1 bad_spec "$PLUGRT" check "$LIBS/segsum_none.so" --inputs 'data:float32:Nx8,ids:int31:N' &&
  expect_grep "^plugrt check: error: --inputs: 'ids:int31:N': unknown dtype 'int31'" bad_spec.err

# A required field not given: untested, a status of its own, saying why;
# --allow-untested makes it a skip; given with --fields, it passes.
for s in $SEEDS; do
  expect_rc 3 "required_$s" "$PLUGRT" check "$LIBS/required_none.so" --seed "$s" || continue
  expect_grep "^    UNTESTED  no input signature ran: the creator refuses its default fields \(give example values with --fields\): Scale: the field k is required$" "required_$s.out"
  expect_grep "^summary: 1 plugin, 22 checks: 3 passed, 0 failed, 19 skipped; 1 plugin untested$" "required_$s.out"
done
expect_rc 0 required_allowed "$PLUGRT" check "$LIBS/required_none.so" --allow-untested &&
  expect_grep "; 1 plugin untested \(allowed\)$" required_allowed.out
echo '{"check::Scale@1": {"k": 3}}' >k.json
passes required_none --fields k.json
expect_rc 3 required_json "$PLUGRT" check "$LIBS/required_none.so" --json &&
  expect_rc 0 required_json_parse "$PYTHON" - required_json.out <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
[p] = doc["plugins"]
assert p["untested"].startswith("no input signature ran: "), p["untested"]
s = doc["summary"]
assert s["untested"] == 1 and s["failed"] == 0, s
assert all(c["runs"] == 0 for c in s["cases"].values()), s["cases"]
PY

# A creator returning PRT_OK and no plugin fails abi.
caught required_null_plugin abi "create\(build phase, 0 fields\): create returned PRT_OK but no plugin"

# The counts in JSON are the text's.
expect_rc 0 select_json "$PLUGRT" check "$LIBS/select_none.so" --json &&
  expect_rc 0 select_json_parse "$PYTHON" - select_json.out select_none_1.out <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
runs = dict(re.findall(r"([a-z-]+) ([0-9]+)", re.search(r"^enqueue runs:(.*)$", text, re.M).group(1)))
cases = doc["summary"]["cases"]
for check, n in runs.items():
    assert cases[check]["runs"] == int(n), (check, cases[check], n)
[p] = doc["plugins"]
assert p["untested"] is None
for c in p["checks"]:
    assert cases[c["check"]]["runs"] == c["runs"], c
PY

[ "$failures" = 0 ] || exit 1
echo "discover.sh: all passed"

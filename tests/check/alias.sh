#!/usr/bin/env bash
# `plugrt check` on check::Accumulate (accumulate.c) over seeds 1..20: an
# output that aliases an input holds that input's data at enqueue
# (plugin.h), so a plugin computing out += b is right, and the checker
# copies the input into the output before every run apart, as the runtime
# does where it cannot share memory.
#   none    passes every check on every seed, every run-time check run;
#           coverage says the aliased output's elements hold the copy
#   hazard  writes the aliased output before reading its input: right
#           apart, wrong in place; alias fails it on every seed
#   through_input  adds into the input it aliases: bounds names the
#           output that aliases it, alias fails too
. "$COMMON"

SEEDS=$(seq 1 20)
RUN_TIME="coverage bounds repeat alias clone attach serialize contexts threads empty-inputs"

for seed in $SEEDS; do
  expect_rc 0 "none.$seed" "$PLUGRT" check "$LIBS/accumulate_none.so" --seed "$seed" ||
    continue
  grep -q "FAIL" "none.$seed.out" && fail "none, seed $seed: a check fails"
  for c in $RUN_TIME; do
    expect_grep "^  pass  $c " "none.$seed.out" "none, seed $seed: $c"
  done
  expect_grep "^  pass  coverage +every output aliases an input: in [1-9][0-9]* cases their [1-9][0-9]* elements hold the input's copy where not written, as at run time$" \
    "none.$seed.out" "none, seed $seed: coverage names the aliased output"
  expect_grep "^  pass  alias +in place and apart agree \([1-9][0-9]* cases\)$" \
    "none.$seed.out" "none, seed $seed: alias"
done

caught=0
for seed in $SEEDS; do
  run_cmd "hazard.$seed" "$PLUGRT" check "$LIBS/accumulate_hazard.so" --seed "$seed"
  if [ "$rc" = 1 ] &&
    grep -Eq "^  FAIL  alias +.*the run in place \(an output over its aliased input\) differs: out0 element [0-9]+ is " "hazard.$seed.out" &&
    grep -Eq "^  pass  coverage " "hazard.$seed.out" &&
    grep -Eq "^  pass  repeat " "hazard.$seed.out"; then
    caught=$((caught + 1))
  else
    fail "hazard, seed $seed: exit $rc, and not alias failing alone"
    grep -E "^  [A-Za-z]+  (alias|coverage|repeat) " "hazard.$seed.out" | sed 's/^/    /' >&2
  fi
done
[ "$caught" = 20 ] || fail "hazard: alias caught it on $caught of 20 seeds"

# Writing the aliased input apart is writing an input; the failure names
# the output that aliases it. (Apart its output is a unchanged, so alias
# fails it too.)
expect_rc 1 through_input "$PLUGRT" check "$LIBS/accumulate_through_input.so" &&
  expect_grep "^  FAIL  bounds +first run: in0 was written \(element 0\): out0 aliases it, but in a run apart \(as the builder's timing runs are\) the input is read-only and out0 holds its copy " \
    through_input.out && expect_grep "^  FAIL  alias " through_input.out

# Two tactics, one relying on the copy (out += b) and one reading a (out =
# a + b): the checker finds them agreeing, and so does the builder's tuning,
# whose timing runs give the aliased output a's data too (they gave zeros,
# and tactic 1 was rejected as disagreeing with tactic 0's 0 + b).
expect_rc 0 tactics "$PLUGRT" check "$LIBS/accumulate_tactics.so" &&
  expect_grep "^  pass  tactics +1 listed tactic agrees with tactic 0" tactics.out
expect_rc 0 tactics_model "$PYTHON" - <<'EOF2' && {
import numpy as np
import onnx
from onnx import TensorProto as T, helper as H
node = H.make_node("Accumulate", ["a", "b"], ["y"], name="acc", plugin_namespace="check")
g = H.make_graph([node], "acc",
                 [H.make_tensor_value_info(n, T.FLOAT, [4, 64]) for n in ("a", "b")],
                 [H.make_tensor_value_info("y", T.FLOAT, [4, 64])])
m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "acc.onnx")
rng = np.random.default_rng(3)
a = rng.standard_normal((4, 64)).astype(np.float32)
b = rng.standard_normal((4, 64)).astype(np.float32)
import os
os.makedirs("acc.data", exist_ok=True)
np.save("acc.data/input_a.npy", a)
np.save("acc.data/input_b.npy", b)
np.save("acc.data/output_y.npy", a + b)
EOF2
  expect_rc 0 tactics_build "$PLUGRT" build acc.onnx --plugins "$LIBS/accumulate_tactics.so" \
    --autotune -o acc.plan -v &&
    { ! grep -q "disagrees" tactics_build.out tactics_build.err ||
      { fail "tuning: a tactic disagrees"; grep "disagrees" tactics_build.err >&2; }; } &&
    expect_rc 0 tactics_run "$PLUGRT" run acc.plan --plugins "$LIBS/accumulate_tactics.so" \
      --compare acc.data --rtol 0 --atol 0
}
finish

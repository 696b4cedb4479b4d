#!/usr/bin/env bash
# `plugrt check` on check::Positives (positives.c) over seeds 1..20: each
# defect below is caught by the check that names it on every seed, not
# with luck, and the plugin without a defect passes on every seed.
#   FORK_ORPHAN     processes left behind fail the check; the checker
#                   ends (its stdout read through a pipe reaches EOF) and
#                   leaves no process of the plugin's running
#   SHAPES_OVERRUN  a write past the outputs array get_output_shapes is
#                   given fails outputs, naming the entry, array and byte
#   RANDOM_OUTPUT   other bits on every third call fail repeat
#   CLONE_SHARE     contexts sharing state fail threads (two contexts of
#   SHARED_SCRATCH  one engine, run in lockstep on two threads)
. "$COMMON"

SEEDS=$(seq 1 20)

# every_seed DEFECT CHECK REGEX: on every seed the check fails, its line
# matching REGEX, and the run exits 1.
every_seed() {
  local defect=$1 check=$2 regex=$3 caught=0 seed
  for seed in $SEEDS; do
    run_cmd "$defect.$seed" "$PLUGRT" check "$LIBS/positives_$defect.so" --seed "$seed"
    if [ "$rc" = 1 ] && grep -Eq "^  FAIL  $check +$regex" "$defect.$seed.out"; then
      caught=$((caught + 1))
    else
      fail "$defect, seed $seed: exit $rc, and no '$check' failure matching '$regex'"
      grep -E "^  [A-Za-z]+  $check " "$defect.$seed.out" | sed 's/^/    /' >&2
    fi
  done
  [ "$caught" = 20 ] || fail "$defect: $check caught it on $caught of 20 seeds"
}

# The fixed twin: every seed passes, repeat and threads saying how many
# runs they made.
for seed in $SEEDS; do
  if expect_rc 0 "none.$seed" "$PLUGRT" check "$LIBS/positives_none.so" --seed "$seed"; then
    grep -q "FAIL" "none.$seed.out" && fail "none, seed $seed: a check fails"
    expect_grep "^  pass  repeat +the same result on every run of the same inputs, shapes held and varied \([1-9][0-9]* cases, [1-9][0-9]* runs\)$" \
      "none.$seed.out" "none, seed $seed: repeat"
    expect_grep "^  pass  threads +two contexts run at once from two threads agree with runs alone \([1-9][0-9]* cases, [1-9][0-9]* runs in lockstep\)$" \
      "none.$seed.out" "none, seed $seed: threads"
  fi
done

every_seed shapes_overrun outputs "get_output_shapes \(1 input: float32 rank [0-9]\) wrote byte 0 past the end of its outputs array \(3 elements of [0-9]+ bytes\): element 3, byte 0 of it$"
every_seed random_output repeat "run [0-9]+ of 12 on the same inputs \((shapes held|after other shapes)\) differs: out0 element [0-9]+ is "
every_seed clone_share threads "context [12]'s run [0-9]+ on a thread of its own, while context [12] ran on another, (differs|fails where the reference ran): "
every_seed shared_scratch threads "context [12]'s run [0-9]+ on a thread of its own, while context [12] ran on another, differs: out0 "

# A plugin that forks a process that never exits, holding the checker's
# stdout and stderr: read through a pipe, as CI reads it, the output ends
# (a `timeout` far beyond a run's time ends a hang, exit 124); the checks
# that run the plugin fail saying how many processes were left; none of
# them is running afterwards (found by a marker in their environment).
marker="plugrt-check-orphan-$$-$RANDOM"
caught=0
for seed in $SEEDS; do
  env CHECK_ORPHAN_MARKER="$marker" timeout 60 "$PLUGRT" check \
    "$LIBS/positives_fork_orphan.so" --seed "$seed" 2>&1 | cat >"fork.$seed.out"
  rc=${PIPESTATUS[0]}
  left=$(grep -lsxF "CHECK_ORPHAN_MARKER=$marker" --null-data /proc/[0-9]*/environ | wc -l)
  if [ "$rc" != 1 ]; then
    fail "fork_orphan, seed $seed: exit status $rc, expected 1"
  elif [ "$left" != 0 ]; then
    fail "fork_orphan, seed $seed: $left of the plugin's processes still run"
  elif ! grep -Eq "^  FAIL  coverage +the plugin left [1-9][0-9]* process(es)? behind \(\"[^\"]+\"\), killed as a group" "fork.$seed.out"; then
    fail "fork_orphan, seed $seed: coverage does not fail naming the processes left"
    grep -E "^  [A-Za-z]+  coverage " "fork.$seed.out" | sed 's/^/    /' >&2
  elif grep -Eq "^  pass  (coverage|bounds|repeat|clone|attach|serialize|contexts|threads|tactics) " "fork.$seed.out"; then
    fail "fork_orphan, seed $seed: a check that runs the plugin passes"
  else
    caught=$((caught + 1))
  fi
done
[ "$caught" = 20 ] || fail "fork_orphan: caught on $caught of 20 seeds"
# Kill what a failure above left, so that it does not outlive the test.
for f in $(grep -lsxF "CHECK_ORPHAN_MARKER=$marker" --null-data /proc/[0-9]*/environ); do
  pid=${f#/proc/}
  kill -9 "${pid%/environ}" 2>/dev/null
done
finish

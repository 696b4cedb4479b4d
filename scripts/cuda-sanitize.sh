#!/usr/bin/env bash
# Runs the CUDA suite under compute-sanitizer's memcheck, racecheck and
# synccheck (on a machine with an NVIDIA GPU). Usage:
#   bash scripts/cuda-sanitize.sh [BUILD_DIR]     (default build-cuda)
# PRT_SANITIZE_TOOLS picks tools, PRT_SANITIZE_TESTS tests (default: all of
# the CUDA label), PRT_SANITIZE_TIMEOUT the seconds one tool has a test.
# Each tool runs every test of `ctest -L cuda` in BUILD_DIR; the script fails
# if any tool reports an error. Logs go to $OUT (when set) or BUILD_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
logs=${OUT:-$build}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$san" ] || { echo "compute-sanitizer not found"; exit 1; }
tests=${PRT_SANITIZE_TESTS:-$(ctest --test-dir "$build" -L cuda -N | awk '/Test +#/ {print $3}')}
[ -n "$tests" ] || { echo "no CUDA tests in $build"; exit 1; }
fail=0
for tool in ${PRT_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
  for t in $tests; do
    exe=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -1)
    [ -n "$exe" ] || continue
    log="$logs/sanitize-$tool-$t.log"
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    # The suite's timing sections are skipped (PRT_CUDA_TEST_QUICK); each
    # tool gets PRT_SANITIZE_TIMEOUT seconds a test (racecheck is slow).
    PRT_CUDA_TEST_QUICK=1 timeout "${PRT_SANITIZE_TIMEOUT:-300}" \
      "$san" --tool "$tool" --error-exitcode 99 "${extra[@]}" "$exe" >"$log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "$tool $t: timed out after ${PRT_SANITIZE_TIMEOUT:-300} s"
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    echo "$tool $t: rc=$rc ${summary:-}"
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then fail=1; tail -30 "$log"; fi
  done
done
exit $fail

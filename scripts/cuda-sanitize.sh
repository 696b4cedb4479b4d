#!/usr/bin/env bash
# Runs the CUDA suite under compute-sanitizer's memcheck, racecheck and
# synccheck (on a machine with an NVIDIA GPU). Usage:
#   bash scripts/cuda-sanitize.sh [BUILD_DIR]     (default build-cuda)
# PRT_SANITIZE_TOOLS picks tools, PRT_SANITIZE_TESTS tests (default: all of
# the CUDA label), PRT_SANITIZE_TIMEOUT the seconds one job has (default
# 400), PRT_SANITIZE_JOBS how many jobs run at once (default: the cores).
#
# A job is one tool over one test program; test_cuda_plugins, the longest
# under racecheck, is cut into one job per section (PRT_CUDA_TEST_ONLY, see
# the test), so the tools' CPU-side work spreads over the cores. The script
# fails if any tool reports an error or a job does not finish. Logs go to
# $OUT (when set) or BUILD_DIR: sanitize-TOOL-TEST[-SECTION].log, and
# sanitize-summary.txt with one line per job.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
logs=${OUT:-$build}
mkdir -p "$logs"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$san" ] || { echo "compute-sanitizer not found"; exit 1; }
tests=${PRT_SANITIZE_TESTS:-$(ctest --test-dir "$build" -L cuda -N | awk '/Test +#/ {print $3}')}
[ -n "$tests" ] || { echo "no CUDA tests in $build"; exit 1; }
plugin_sections="devices nonzero hardmax circpad addinplace graphs engines ddengines"

# One job: TOOL EXE NAME [SECTION]; prints its summary line.
job() {
  local tool=$1 exe=$2 name=$3 sec=${4:-} log extra=()
  log="$logs/sanitize-$tool-$name${sec:+-$sec}.log"
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  # Timing sections are skipped (PRT_CUDA_TEST_QUICK); racecheck, which
  # checks shared memory only, skips the largest NonZero input
  # (PRT_CUDA_TEST_SMALL): the smaller ones use shared memory the same way.
  local small=
  [ "$tool" = racecheck ] && small=1
  PRT_CUDA_TEST_SMALL=$small PRT_CUDA_TEST_QUICK=1 PRT_CUDA_TEST_ONLY=$sec timeout "${PRT_SANITIZE_TIMEOUT:-400}" \
    "$san" --tool "$tool" --error-exitcode 99 "${extra[@]}" "$exe" >"$log" 2>&1
  local rc=$? summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  [ "$rc" = 124 ] && summary="timed out after ${PRT_SANITIZE_TIMEOUT:-400} s"
  echo "$tool $name${sec:+ [$sec]}: rc=$rc ${summary:-}"
}
export -f job
export san logs

list=$(mktemp)
for tool in ${PRT_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
  for t in $tests; do
    exe=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -1)
    if [ -z "$exe" ]; then
      # A CUDA test that is a script (the CLI on the shared models) runs
      # kernels in child processes; the tools follow them there.
      continue
    fi
    if [ "$t" = test_cuda_plugins ]; then
      for sec in $plugin_sections; do echo "$tool $exe $t $sec"; done
    else
      echo "$tool $exe $t"
    fi
  done
done >"$list"
started=$(date +%s)
# The longest job (racecheck over NonZero's section, about 150 s alone on
# an H200) starts first, so it does not begin last and run past its time.
long='^racecheck .* nonzero$'
{ grep -E "$long" "$list"; grep -vE "$long" "$list"; } |
  xargs -P "${PRT_SANITIZE_JOBS:-$(nproc)}" -L 1 bash -c 'job "$@"' _ |
  sort | tee "$logs/sanitize-summary.txt"
rm -f "$list"
echo "$(wc -l <"$logs/sanitize-summary.txt") jobs in $(($(date +%s) - started)) s"
fail=0
while read -r line; do
  # rc 77: the test skipped itself (no usable GPU).
  [[ $line =~ :\ rc=(0|77)(\ |$) ]] || { fail=1; echo "FAILED: $line"; }
done <"$logs/sanitize-summary.txt"
exit $fail

#!/usr/bin/env bash
# `plugrt check` on the GPU machine, in one command, from a bundle built
# elsewhere (no build here):
#
#     bash tests/check/gpu_run.sh [BUNDLE]      (default build-gpu/check-gpu)
#
# BUNDLE is what `cmake --build BUILD --target check_gpu_bundle` makes in
# BUILD/check-gpu (a build with CUDA): the plugrt program, libplugrt, the
# standard plugin library and its CUDA kernels, the test plugin libraries,
# as plain files. Steps, each under a time limit:
#   1. plugrt devices (the GPU it sees)
#   2. tests/check/cuda.sh: plugrt check --device cuda on the standard
#      plugin library (its header and summary go to summary.txt), in JSON,
#      check::Positives with its kernel on both devices, each CUDA defect
#      failing the check that names it
#   3. the CPU tests of the checker (standard.sh, broken.sh, shapes.sh)
#   4. compute-sanitizer memcheck over plugrt check --device cuda, one
#      plugin of the standard library at a time (every child process), as
#      long as the time budget lasts (PRT_CHECK_GPU_BUDGET seconds in all,
#      default 540)
# Logs go to $OUT when set (else BUNDLE/logs), brought up to date after
# every step, so a run cut short still leaves them: summary.txt, and every
# log in check-gpu-logs.tar.gz. Exit status 0 when every step passed.
set -u -o pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
bundle=$(cd "${1:-build-gpu/check-gpu}" 2>/dev/null && pwd) || {
  echo "gpu_run: no bundle at ${1:-build-gpu/check-gpu} (cmake --build BUILD --target check_gpu_bundle)" >&2
  exit 1
}
out=${OUT:-$bundle/logs}
mkdir -p "$out" || exit 1
logs=$(mktemp -d "${TMPDIR:-/tmp}/plugrt-check-gpu.XXXXXX")
summary=$out/summary.txt
: >"$summary"
status=0
started=$(date +%s)
budget=${PRT_CHECK_GPU_BUDGET:-540}
left() { echo $((budget - ($(date +%s) - started))); }

export LD_LIBRARY_PATH="$bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PLUGRT="$bundle/plugrt" PLUGINS_LIB="$bundle/libplugrt_plugins.so"
export PLUGRT_PLUGINS="$PLUGINS_LIB" LIBS="$bundle/libs" COMMON="$root/tests/cli/common.sh"
export PYTHON=${PYTHON:-python3}

say() { echo "gpu_run: $*" | tee -a "$summary"; }

# step NAME LIMIT CMD...: runs CMD with its output in NAME.log; notes the
# result (77: skipped) in the summary.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local took=$(($(date +%s) - t0))
  case $rc in
  0) say "$name: passed (${took} s)" ;;
  77) say "$name: skipped (${took} s): $(tail -1 "$logs/$name.log")" ;;
  124) say "$name: TIMED OUT after $limit s"; status=1 ;;
  *) say "$name: FAILED, exit status $rc (${took} s); its end:"
     tail -25 "$logs/$name.log" | sed 's/^/    /' | tee -a "$summary"
     status=1 ;;
  esac
  tar -czf "$out/check-gpu-logs.tar.gz" -C "$logs" . 2>/dev/null
  return $rc
}

say "bundle $bundle, logs $out"
command -v nvidia-smi >/dev/null 2>&1 &&
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$logs/nvidia-smi.log" 2>&1
step devices 60 "$PLUGRT" devices

# The test scripts, each in a scratch folder of its own; cuda.sh's run of
# the standard library on CUDA is the report of step 2.
WORK="$logs/work-cuda" step test-cuda 360 bash "$root/tests/check/cuda.sh"
# This script is for the GPU machine: the GPU half skipped is a failure.
[ $? = 77 ] && { say "test-cuda did not run on the GPU: that is a failure here"; status=1; }
for t in standard broken shapes; do
  WORK="$logs/work-$t" step "test-$t" 120 bash "$root/tests/check/$t.sh"
done
[ -f "$logs/work-cuda/standard.out" ] &&
  grep -E "^(plugrt check|summary)|FAIL" "$logs/work-cuda/standard.out" | sed 's/^/    /' >>"$summary"

# memcheck over every process of a check run (the checks are children).
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$san" ]; then
  for key in NonZeroPlugin@1 CustomHardmax@1 example::circ_pad_plugin@1 example::AddInPlace@1 \
    example::QuantFC@1; do
    name=memcheck-${key//[^A-Za-z0-9]/_}
    limit=$(($(left) - 15))
    [ "$limit" -gt 300 ] && limit=300
    if [ "$limit" -lt 45 ]; then
      say "$name: skipped, the time budget is spent"
      continue
    fi
    step "$name" "$limit" "$san" --tool memcheck --target-processes all --error-exitcode 99 \
      "$PLUGRT" check "$PLUGINS_LIB" --device cuda --plugin "$key" --iterations 1 \
      --timeout 240
    errors=$(grep -E "ERROR SUMMARY: [0-9]+ error" "$logs/$name.log" | grep -vc "ERROR SUMMARY: 0 errors")
    say "$name: $(grep -c "ERROR SUMMARY" "$logs/$name.log") processes summarized, $errors with errors"
    [ "$errors" = 0 ] || status=1
  done
else
  say "memcheck: compute-sanitizer not found; skipped"
fi

say "done in $(($(date +%s) - started)) s, exit status $status"
tar -czf "$out/check-gpu-logs.tar.gz" -C "$logs" .
rm -rf "$logs"
exit $status

#!/usr/bin/env bash
# The GPU half of the CPU-operator work (issue 8), in one command on the GPU
# machine, from a bundle built elsewhere (no build there):
#
#     bash scripts/cuda_ops_gpu.sh [BUNDLE]      (default build/cuda-ops)
#
# BUNDLE is what `cmake --build BUILD --target cuda_ops_bundle` makes in
# BUILD/cuda-ops (a build with CUDA). Steps, each under a time limit:
#   1. plugrt devices (the GPU it sees)
#   2. test_op_coverage: every (op, device, dtype) cell plugrt declares,
#      CUDA's included, against the CPU's reference, and every dtype the
#      CUDA kernels refuse refused by name; test_cuda_ops: every built-in op
#      with a CUDA kernel against its CPU kernel (every dtype, broadcasts,
#      axes, shape inputs), Conv with each fused activation and MatMul with
#      a bias among them
#   3. test_cuda_runtime (a context used with another GPU current among
#      its checks), test_cuda_plugins, test_cuda_quantfc (QuantFC on CUDA
#      against the CPU: the INT8 path bit for bit), test_cuda_lt
#      (cuBLASLt's INT8 products bit for bit, its FP8 products within a
#      stated tolerance), test_cuda_shape_params (Slice, Pad, Range with
#      parameters from a shape computation and from shape inputs in host
#      memory, eager and captured, against the CPU engine),
#      test_cuda_qconv (ConvInteger and QLinearConv on the int8 tensor
#      cores and the plain kernel, bit for bit against the CPU)
#   4. mobilenet_v3_small and bert_small on CUDA against their references
#      (ONNX Runtime's), through the importer's fusions (Conv + activation,
#      MatMul + bias, GELU), with --op-threads 1 and 4, and as CUDA graph
#      replays on two contexts at once (--cuda-graph --threads 2): the
#      same bits each time
#   5. --compare-layers on CUDA against plugrt on the CPU (fusions off, so
#      the unfused ops run too): every layer of both models, the first that
#      differs named
#   6. --profile-layers --json on CUDA: every layer timed from events, in
#      one JSON document
# Logs go to $OUT when set (else BUNDLE/logs): summary.txt and every log in
# cuda-ops-logs.tar.gz, brought up to date after each step. Exit status 0
# when every step passed; a step skipped for want of a GPU fails the run.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "${1:-$root/build/cuda-ops}" 2>/dev/null && pwd) || {
  echo "cuda_ops_gpu: no bundle at ${1:-build/cuda-ops} (cmake --build BUILD --target cuda_ops_bundle)" >&2
  exit 1
}
out=${OUT:-$bundle/logs}
mkdir -p "$out" || exit 1
logs=$(mktemp -d "${TMPDIR:-/tmp}/plugrt-cuda-ops.XXXXXX")
summary=$out/summary.txt
: >"$summary"
status=0
export LD_LIBRARY_PATH="$bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PLUGRT_PLUGINS="$bundle/libplugrt_plugins.so"
export P="$bundle/plugrt" M="$bundle/models" PY=${PYTHON:-python3} logs

say() { echo "cuda_ops_gpu: $*" | tee -a "$summary"; }
pack() { tar -czf "$out/cuda-ops-logs.tar.gz" -C "$logs" . 2>/dev/null; }

# step NAME LIMIT CMD...: CMD's output in NAME.log; 77 (skipped) fails too.
step() {
  local name=$1 limit=$2 t0 rc
  shift 2
  t0=$(date +%s)
  if [ "$(type -t "$1")" = function ]; then
    # A function of this script: in a shell of its own, under the limit.
    timeout "$limit" bash -c "$(declare -f "$1"); $*" >"$logs/$name.log" 2>&1
  else
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  fi
  rc=$?
  case $rc in
  0) say "$name: passed ($(($(date +%s) - t0)) s)" ;;
  77) say "$name: SKIPPED: $(tail -1 "$logs/$name.log")"; status=1 ;;
  124) say "$name: TIMED OUT after $limit s"; status=1 ;;
  *) say "$name: FAILED (exit $rc); last lines:"; tail -15 "$logs/$name.log" | tee -a "$summary"; status=1 ;;
  esac
  pack
}

# model NAME SHAPES: runs on CUDA against the references at atol 1e-4 of
# the largest reference magnitude (MobileNet's logits are ~1e-9), at 1 and 4
# op threads and as graph replays on two contexts, and the runs' outputs
# must be the same bytes.
model() {
  local name=$1 atol
  atol=$("$PY" -c "import numpy as np, glob; print(1e-4 * min(float(np.abs(np.load(f)).max()) for f in glob.glob('$M/$name.data/output_*.npy')))") || return 1
  for t in 1 4; do
    "$P" run "$M/$name.onnx" --device cuda --compare "$M/$name.data" --rtol 1e-4 --atol "$atol" \
      -n 3 --warmup 1 --op-threads "$t" -o "$logs/$name.out$t" || return 1
  done
  "$P" run "$M/$name.onnx" --device cuda --compare "$M/$name.data" --rtol 1e-4 --atol "$atol" \
    -n 3 --warmup 1 --cuda-graph --threads 2 -o "$logs/$name.graph" || return 1
  for f in "$logs/$name.out1"/*.npy; do
    cmp "$f" "$logs/$name.out4/$(basename "$f")" || { echo "$f: 4 op threads differ"; return 1; }
    cmp "$f" "$logs/$name.graph/$(basename "$f")" || { echo "$f: graph replays differ"; return 1; }
  done
}

# layers NAME INPUT...: every layer's outputs on CUDA against the CPU's.
layers() {
  local name=$1 args=() f
  for f in "$M/$name.data"/input_*.npy; do
    f=$(basename "$f" .npy)
    args+=(--input "${f#input_}=$M/$name.data/$f.npy")
  done
  "$P" run "$M/$name.onnx" --device cuda --compare-layers --reference cpu "${args[@]}"
}

profile() {
  "$P" run "$M/mobilenet_v3_small.onnx" --device cuda --random-inputs --shapes image:1x3x224x224 \
    -n 5 --profile-layers \
    --json >"$logs/profile.json" || return 1
  "$PY" - "$logs/profile.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"] == "cuda", d["device"]
p = d["layer_profile"]
assert p["runs"] == 5 and len(p["layers"]) > 50, (p["runs"], len(p["layers"]))
assert all(l["min_ms"] >= 0 and l["median_ms"] <= l["max_ms"] for l in p["layers"])
assert sorted(l["index"] for l in p["layers"]) == list(range(len(p["layers"])))
print("layers:", len(p["layers"]), "sum of medians %.3f ms, run median %.3f ms" % (
    p["layers_median_sum_ms"], p["run_median_ms"]))
PYEOF
}

# `cuda_ops_gpu.sh BUNDLE sanitize`: the bundle's CUDA tests under
# compute-sanitizer's memcheck (with leak checks), racecheck and synccheck,
# one job per tool and test, all at once; each must report no error.
if [ "${2:-}" = sanitize ]; then
  san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  sanitize() {
    local tool=$1 t=$2 sec=${3:-} extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    PRT_CUDA_TEST_SMALL=1 PRT_CUDA_TEST_QUICK=1 PRT_CUDA_TEST_ONLY=$sec timeout 500 \
      "$san" --tool "$tool" --error-exitcode 99 "${extra[@]}" "$bundle/$t" \
      >"$logs/san-$tool-$t${sec:+-$sec}.log" 2>&1
    echo "$tool $t${sec:+ [$sec]}: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
      "$logs/san-$tool-$t${sec:+-$sec}.log" | tail -1)"
  }
  export -f sanitize
  export san bundle logs
  # PRT_SAN_PLUGINS=1 adds the standard plugins' sections (their kernels
  # are not the built-in ops').
  for tool in memcheck racecheck synccheck; do
    for t in test_op_coverage test_cuda_ops test_cuda_runtime test_cuda_attention test_cuda_lt test_cuda_qconv \
        test_cuda_shape_params; do
      echo "$tool $t"
    done
    [ "${PRT_SAN_PLUGINS:-0}" = 1 ] || continue
    for sec in devices nonzero hardmax circpad addinplace graphs engines ddengines; do
      echo "$tool test_cuda_plugins $sec"
    done
    echo "$tool test_cuda_quantfc"
  done | xargs -P "$(nproc)" -L 1 bash -c 'sanitize "$@"' _ | sort | tee -a "$summary"
  grep -vqE ': rc=0 ' "$summary" && status=1
  pack
  say "$([ $status = 0 ] && echo "sanitizers: no errors" || echo "sanitizers: errors")"
  exit $status
fi

step devices 60 "$P" devices
step test_op_coverage 300 "$bundle/test_op_coverage"
step test_cuda_ops 300 "$bundle/test_cuda_ops"
step test_cuda_runtime 300 "$bundle/test_cuda_runtime"
step test_cuda_plugins 300 "$bundle/test_cuda_plugins"
step test_cuda_quantfc 300 "$bundle/test_cuda_quantfc"
step test_cuda_attention 300 "$bundle/test_cuda_attention"
step test_cuda_precision 120 "$bundle/test_cuda_precision"
step test_cuda_lt 300 "$bundle/test_cuda_lt"
step test_cuda_shape_params 120 "$bundle/test_cuda_shape_params"
step test_cuda_qconv 300 "$bundle/test_cuda_qconv"
step mobilenet_cuda 180 model mobilenet_v3_small
step bert_cuda 180 model bert_small
step mobilenet_layers_cuda 120 layers mobilenet_v3_small
step bert_layers_cuda 120 layers bert_small
step profile_cuda 120 profile
cat "$logs/devices.log" >>"$summary"
pack
say "$([ $status = 0 ] && echo "all steps passed" || echo "some steps failed")"
exit $status

#!/usr/bin/env bash
# The Triton backend's GPU checks in one command, on a machine with an NVIDIA
# GPU, no tritonserver and no network (the H200), from what pack_gpu.sh put
# in .tritonpkg/ (carried there): nothing is built or installed.
#
#     bash serving/triton/tests/gpu_run.sh
#
# Steps, each under its own time limit (about 3 minutes in all):
#   1. unpack the server into /tmp; nvidia-smi; plugrt devices
#   2. test_triton.py --gpu: the four models as KIND_GPU instances (bert's
#      two through the dynamic batcher), checked against their .data
#      references, plus GPU memory (CUDA shared memory), refused kinds and
#      plans, and with two GPUs one model on both
#   3. test_triton.py: the CPU suite, on this GPU machine
#   4. bench/triton_load.py --kind gpu: a short load (2000 requests, 8
#      clients) on circ_pad_conv and on bert_small (built-in ops only, on
#      their CUDA kernels), each next to plugrt run --device cuda
# With $OUT set its files go there (else to a folder it names at the end):
#     gpu_run.txt          everything printed, step by step
#     server-gpu.log       the server's log of step 2
#     server-cpu.log       the server's log of step 3
# Exit status: 0 when every step passed, 1 when one failed (the GPU test's
# 77, no usable GPU, counts as failed here: this script is for GPU machines).
set -u -o pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root" || exit 1
pkg=$root/.tritonpkg
b=$pkg/build
models=${PRT_MODELS:-$pkg/models}
py=${PYTHON:-python3}
out=${OUT:-}
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/plugrt-tritongpu-out.XXXXXX")
mkdir -p "$out"
log=$out/gpu_run.txt
: >"$log"
status=0
started=$(date +%s)
export PYTHONUNBUFFERED=1

say() { echo "gpu_run: $*" | tee -a "$log"; }

# step NAME LIMIT COMMAND...: runs it, its output into the log, and notes a
# failure (124: the time limit).
step() {
  local name=$1 limit=$2 rc
  shift 2
  say "---- $name ($(($(date +%s) - started)) s so far)"
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    say "$name: FAILED with status $rc$([ "$rc" -eq 124 ] && echo ' (time limit)')"
    status=1
  else
    say "$name: ok"
  fi
}

for f in "$pkg/tritonserver-2.51.0.tar.xz" "$b/tools/plugrt" "$b/libplugrt.so.0.1" \
  "$b/serving/triton/backends/plugrt/libtriton_plugrt.so" "$models/bert_small.onnx"; do
  [ -e "$f" ] || { say "missing $f: run serving/triton/tests/pack_gpu.sh and carry .tritonpkg"; exit 1; }
done

tmp=$(mktemp -d /tmp/plugrt-tritonserver.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
say "unpacking the server into $tmp"
tar -C "$tmp" -xJf "$pkg/tritonserver-2.51.0.tar.xz" || { say "cannot unpack the server"; exit 1; }
export TRITONSERVER=$tmp/tritonserver/bin/tritonserver
# The staged files carry this machine's build paths in their run paths: the
# backend and the program find libplugrt here.
export LD_LIBRARY_PATH=$b${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# What the machine has (a note, not a check).
{ nvidia-smi -L || echo "(no nvidia-smi)"; } 2>&1 | tee -a "$log"
step "plugrt devices" 60 "$b/tools/plugrt" devices
common=(--backend-dir "$b/serving/triton/backends" --plugrt "$b/tools/plugrt"
  --plugins "$b/libplugrt_plugins.so" --testlib "$b/serving/triton/testlibs/testlib_argmin.so"
  --meetlib "$b/serving/triton/testlibs/testlib_meet.so" --models "$models")
step "test_triton.py --gpu (KIND_GPU)" 200 \
  "$py" serving/triton/tests/test_triton.py --gpu "${common[@]}" --server-log "$out/server-gpu.log"
step "test_triton.py (KIND_CPU, on this GPU machine)" 120 \
  "$py" serving/triton/tests/test_triton.py "${common[@]}" --server-log "$out/server-cpu.log"
step "bench/triton_load.py --kind gpu" 150 \
  "$py" bench/triton_load.py --build "$b" --models "$models" --model circ_pad_conv --kind gpu \
  --instances 2 --requests 2000 --clients 8 --deadline 60
step "bench/triton_load.py --kind gpu --model bert_small" 150 \
  "$py" bench/triton_load.py --build "$b" --models "$models" --model bert_small --kind gpu \
  --instances 2 --requests 2000 --clients 8 --deadline 60

say "done in $(($(date +%s) - started)) s: $([ "$status" = 0 ] && echo 'all steps passed' || echo 'a step FAILED')"
[ -n "${OUT:-}" ] || say "logs in $out"
exit "$status"

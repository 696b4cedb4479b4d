#!/usr/bin/env bash
# The Python package on a GPU machine, in one command from the repository
# root: builds the CUDA-enabled wheel from this tree (pip wheel
# --no-build-isolation over the machine's scikit-build-core, cmake, ninja and
# nvcc; PRT_WITH_CUDA=ON, so a missing toolkit fails the build), unpacks it
# into build-gpu/site (no pip install: nothing touches the system's Python),
# runs the whole pytest suite of python/tests against it (the CUDA tests
# included; the examples' GPU cases are run directly below instead of twice),
# runs the examples with their GPU backends (non_zero_plugin.py --backend
# torch|cuda, circ_pad_plugin.py --device cuda with its torch and Triton
# tactics, in_place_add.py --device cuda, onnx_custom_plugin.py --device
# cuda, circ_pad_aot.py and torch_triton_op_aot.py through plugrt run), and
# bench/python_plugin_overhead.py on CUDA and on the CPU.
#
#   bash python/tests/gpu_run.sh             # on the GPU machine; logs in $OUT
#   bash python/tests/gpu_run.sh --prepare   # here first: copies the two seed models
#                                            # the tests read into build-gpu/models
#
# The ONNX example and the tests that read seed models use ../shared/models
# (relative to the repository), or build-gpu/models when that is missing
# (carry build-gpu/models). Logs, six files, go to $OUT (else
# build-gpu/logs): summary.txt (each step's verdict and time, versions, the
# examples' result lines, the benchmark), build.log, pytest.log, pytest.xml,
# examples.log, bench.txt. Exit status 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=$ROOT/build-gpu
PY=${PYTHON:-python3}

if [ "${1:-}" = "--example" ]; then  # (used by the steps below)
  shift
  tmp=$(mktemp)
  (cd "$ROOT/examples/python" && $PY "$@") >"$tmp"  # stderr: to the step's log
  rc=$?
  cat "$tmp"
  last=$(tail -1 "$tmp")
  rm -f "$tmp"
  [ $rc -eq 0 ] && [ "$last" = "Inference result correct!" ]
  exit $?
fi

if [ "${1:-}" = "--prepare" ]; then
  src=${PLUGRT_MODELS:-$ROOT/../shared/models}
  mkdir -p "$B/models"
  cp -r "$src"/qa_custom_hardmax.* "$src"/nonzero_plugin.* "$B/models/"
  echo "copied qa_custom_hardmax and nonzero_plugin into $B/models ($(du -sh "$B/models" | cut -f1)); carry build-gpu/models"
  exit 0
fi

LOG=${OUT:-$B/logs}
mkdir -p "$LOG" "$B"
SUM=$LOG/summary.txt
: >"$SUM"
status=0
note() { echo "$*" | tee -a "$SUM"; }
step() {  # step NAME TIMEOUT LOGFILE COMMAND...: runs, notes PASS/FAIL and time
  local name=$1 limit=$2 log=$3 t0 rc
  shift 3
  t0=$(date +%s)
  echo "==== $name: $*" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    note "PASS  $name ($(($(date +%s) - t0)) s)"
  else
    note "FAIL  $name (exit $rc$([ $rc -eq 124 ] && echo ', timed out'), $(($(date +%s) - t0)) s; see $(basename "$log"))"
    status=1
  fi
  return $rc
}

note "plugrt Python package on the GPU: $(date -u +%FT%TZ), $(nproc) cores"
nvidia-smi -L 2>/dev/null | sed 's/^/  /' | tee -a "$SUM"
$PY - <<'EOF' 2>&1 | sed 's/^/  /' | tee -a "$SUM"
import importlib, sys
print("python", sys.version.split()[0])
for m in ("numpy", "torch", "cupy", "triton", "cuda", "onnx", "pytest", "scikit_build_core"):
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", "(no version)"))
    except Exception as e:
        print(m, "MISSING:", type(e).__name__, e)
EOF

# ---- build the wheel and unpack it ----------------------------------------
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
rm -rf "$B/site"
# A wheel built on another machine (PRT_PY_WHEEL, e.g. carried in
# build-gpu/wheel): the GPU machine may lack the ONNX importer's build
# dependencies (protobuf-c, onnx.proto).
if [ -n "${PRT_PY_WHEEL:-}" ] && [ -f "$PRT_PY_WHEEL" ]; then
  note "using the prebuilt wheel $PRT_PY_WHEEL"
  $PY -m zipfile -e "$PRT_PY_WHEEL" "$B/site" >>"$LOG/build.log" 2>&1
  export PYTHONPATH=$B/site
  unset PLUGRT_LIBRARY_DIR
elif rm -rf "$B/dist" && step "build the CUDA wheel" 420 "$LOG/build.log" \
    $PY -m pip wheel -v --no-deps --no-build-isolation ./python -w "$B/dist" \
    --config-settings=build-dir="$B/cmake" \
    --config-settings=cmake.define.PRT_WITH_CUDA=ON; then
  $PY -m zipfile -e "$B"/dist/plugrt-*.whl "$B/site" >>"$LOG/build.log" 2>&1
  export PYTHONPATH=$B/site
  unset PLUGRT_LIBRARY_DIR
else
  # Without pip's build: the libraries with CMake, the package from the tree.
  step "build with CMake instead" 420 "$LOG/build.log" bash -c "
    cmake -S . -B '$B/cmake-direct' -G Ninja -DCMAKE_BUILD_TYPE=Release -DPRT_PYTHON=ON \
      -DBUILD_TESTING=OFF -DPRT_WITH_ONNX=ON -DPRT_WITH_CUDA=ON &&
    cmake --build '$B/cmake-direct' --target plugrt plugrt_plugins plugrt_onnx_shared" || {
      note "no build: stopping"; exit 1; }
  export PYTHONPATH=$ROOT/python/src PLUGRT_LIBRARY_DIR=$B/cmake-direct
fi
(cd / && $PY -c "
import plugrt as trt
print('plugrt', trt.__version__, 'from', trt.__file__)
trt.check_device('cuda')
print('CUDA device:', trt.get_device_info('cuda'))") 2>&1 | sed 's/^/  /' | tee -a "$SUM"

export TRITON_CACHE_DIR=$B/triton-cache CUPY_CACHE_DIR=$B/cupy-cache

MODELS=$ROOT/../shared/models
[ -d "$MODELS" ] || MODELS=$B/models
export PLUGRT_MODELS=$MODELS

# The plugrt program, for the tests and the example that run engines with
# kernel layers in a process of their own (PLUGRT_CLI, else the CMake build's).
CLI=${PLUGRT_CLI:-$(ls "$B"/cmake/tools/plugrt "$B"/cmake-direct/tools/plugrt 2>/dev/null | head -1)}
[ -n "$CLI" ] && export PLUGRT_CLI=$CLI

# ---- pytest (CPU and CUDA tests) ------------------------------------------
pushd python >/dev/null
step "pytest python/tests" 480 "$LOG/pytest.log" \
  $PY -m pytest -q -rs -p no:cacheprovider tests -k "not on_the_gpu" \
  --junitxml="$LOG/pytest.xml"
popd >/dev/null
grep -E "^[0-9]+ (passed|failed)|(passed|failed|error).* in [0-9.]+s" "$LOG/pytest.log" \
  | tail -1 | sed 's/^/  pytest: /' | tee -a "$SUM"
grep -E "^(FAILED|ERROR) " "$LOG/pytest.log" | head -20 | sed 's/^/  /' | tee -a "$SUM"
grep -cE "^SKIPPED" "$LOG/pytest.log" | sed 's/^/  skip lines: /' | tee -a "$SUM"
grep -E "^SKIPPED" "$LOG/pytest.log" | head -8 | sed 's/^/  /' | tee -a "$SUM"

# ---- the examples with GPU backends ----------------------------------------
ex() {  # ex NAME SCRIPT ARGS...: runs an example; passes on exit 0 and its verdict line
  local name=$1
  shift
  step "$name" 300 "$LOG/examples.log" "$ROOT/python/tests/gpu_run.sh" --example "$@"
}
for backend in torch cuda; do
  for net in network onnx; do
    for prec in fp32 fp16; do
      ex "non_zero_plugin.py --backend $backend --net-type $net --precision $prec" \
        non_zero_plugin.py --backend $backend --net-type $net --precision $prec
    done
  done
done
ex "circ_pad_plugin.py --device cuda (torch and Triton tactics)" circ_pad_plugin.py --device cuda
ex "in_place_add.py --device cuda" in_place_add.py --device cuda
# The Triton AOT plugin: its engine run by plugrt run (no Python).
if [ -n "$CLI" ]; then
  ex "circ_pad_aot.py (Triton aot_impl, run by plugrt run)" circ_pad_aot.py --plugrt "$CLI"
  ex "torch_triton_op_aot.py (from_torch_op's aot_impl, run by plugrt run)" \
    torch_triton_op_aot.py --plugrt "$CLI"
else
  note "FAIL  circ_pad_aot.py: no plugrt program (set PLUGRT_CLI)"
  status=1
fi
if [ -f "$MODELS/qa_custom_hardmax.onnx" ]; then
  ex "onnx_custom_plugin.py --device cuda" onnx_custom_plugin.py --device cuda --models "$MODELS"
else
  note "FAIL  onnx_custom_plugin.py --device cuda: no qa_custom_hardmax.onnx in ../shared/models or build-gpu/models (run --prepare here and carry build-gpu/models)"
  status=1
fi
grep -E "tactic|cases|shares|copied|bound|model output|batch" "$LOG/examples.log" \
  | grep -v "^====" | sed 's/^/  /' >>"$SUM"

# ---- per-call overhead of Python plugins ----------------------------------
: >"$LOG/bench.txt"
step "bench python_plugin_overhead --device cuda" 240 "$LOG/bench.txt" \
  $PY bench/python_plugin_overhead.py --device cuda --runs 200 --repeats 5
step "bench python_plugin_overhead --device cpu" 180 "$LOG/bench.txt" \
  $PY bench/python_plugin_overhead.py --device cpu --runs 200 --repeats 5
grep -v "^====" "$LOG/bench.txt" | sed 's/^/  /' >>"$SUM"

note "$([ $status -eq 0 ] && echo 'ALL PASSED' || echo 'SOME STEPS FAILED')"
exit $status

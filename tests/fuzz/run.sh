#!/usr/bin/env bash
# Makes seed corpora and runs the fuzzers of a PRT_FUZZ build:
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS [FUZZER...]]
#
# Corpora and findings go to BUILD_DIR/fuzz/{corpus,artifacts}/<name>/.
# SECONDS (default 300) is each fuzzer's -max_total_time. FUZZER defaults to
# engine onnx npy. Seeds: engines built by fuzz_make_seeds, the small models
# of ../shared/models (not the big ones: they slow every iteration), and
# .npy files written by numpy.
set -euo pipefail
build=$(cd "$1" && pwd)
secs=${2:-300}
shift $(($# < 2 ? $# : 2))
fuzzers=(engine onnx npy)
[ $# -eq 0 ] || fuzzers=("$@")
here=$(cd "$(dirname "$0")" && pwd)
models=${MODELS:-$here/../../../shared/models}
python=${PYTHON:-/usr/bin/python3}
bin=$build/tests/fuzz
out=$build/fuzz
seed_models=()
for m in nonzero_plugin qa_custom_hardmax circ_pad_conv; do
  [ -f "$models/$m.onnx" ] && seed_models+=("$models/$m.onnx")
done

mkdir -p "$out"/corpus/{engine,onnx,npy} "$out"/artifacts/{engine,onnx,npy}
"$bin/fuzz_make_seeds" "$out/corpus/engine" "${seed_models[@]}"
for m in "${seed_models[@]}"; do cp -f "$m" "$out/corpus/onnx/"; done
chmod u+w "$out"/corpus/onnx/*
(cd "$out/corpus/npy" && "$python" - <<'PY'
import numpy as np
arrays = {
    "f4": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f2": np.arange(4, dtype=np.float16),
    "i1": np.array([-1, 2, 3], dtype=np.int8),
    "u1": np.zeros((2, 2, 2), dtype=np.uint8),
    "i4": np.array(7, dtype=np.int32),
    "i8": np.arange(3, dtype=np.int64),
    "b1": np.array([True, False]),
    "fortran": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
    "bigend": np.arange(3, dtype=">i4"),
    "empty": np.zeros((0, 3), dtype=np.float32),
}
for name, a in arrays.items():
    np.save(name + ".npy", a)
np.lib.format.write_array(open("v2.npy", "wb"), arrays["f4"], version=(2, 0))
PY
)

# As CI runs: a malloc that fails returns NULL. An engine may ask for a
# large arena; ASan refuses anything over 2000 MB (it returns NULL, so the
# loader's out-of-memory path runs) before libFuzzer's -malloc_limit_mb would
# call a successful large allocation a finding.
asan=allocator_may_return_null=1:max_allocation_size_mb=2000:detect_leaks=1
rc=0
for f in "${fuzzers[@]}"; do
  echo "== fuzz_$f: ${secs}s" >&2
  # A finding stops the fuzzer with a non-zero status and an artifact
  # (crash-*, leak-*, timeout-*, oom-*) in artifacts/<name>/.
  ASAN_OPTIONS=${ASAN_OPTIONS:-$asan} \
    "$bin/fuzz_$f" "$out/corpus/$f" -max_total_time="$secs" \
    -rss_limit_mb=4096 -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$f/" > "$out/fuzz_$f.log" 2>&1 || rc=1
  grep -E "^#[0-9]+.*DONE|ERROR|SUMMARY|stat::" "$out/fuzz_$f.log" >&2 || true
done
exit $rc

#!/usr/bin/env bash
# The plugrt program on CUDA (ctest -L cuda), on the shared models that end
# in plugins: `run MODEL.onnx --device cuda --compare DIR`, enqueued, as CUDA
# graph replays (--cuda-graph) and on two streams (--threads 2); on
# MobileNet and BERT, built-in ops only, enqueued and as graph replays on
# two streams; then a round trip build -> plan -> inspect -> run on CUDA,
# with a timing cache that the second build reuses.
#
# Skipped (exit 77, saying why) where `plugrt devices` says CUDA is not
# usable: a machine without an NVIDIA GPU or driver, or a build without CUDA.
. "$(dirname "$0")/common.sh"

expect_rc 0 devices "$PLUGRT" devices || finish
if ! grep -q "^  cuda  usable: " devices.out; then
  skip "CUDA is not usable here: $(sed -n 's/^  cuda  not usable: //p' devices.out)"
fi
have_onnx || skip "plugrt was built without the ONNX importer"
gpu=$(sed -n 's/^  cuda  usable: \([^,]*\), compute capability.*/\1/p' devices.out)
cc=$(sed -n 's/^  cuda  usable: .*, compute capability \([0-9]*\.[0-9]*\),.*/\1/p' devices.out)
echo "GPU: $gpu (compute capability $cc)"

# The GPU sums in another order than ONNX Runtime on the CPU did for the
# references: floats compare at 1e-4 (qa_custom_hardmax's answer reaches 83,
# where rtol governs; circ_pad_conv's outputs are below 4), integers (the
# NonZero indices) exactly.
tol=(--atol 1e-4 --rtol 1e-4)

# cuda_run NAME TAG [ARGS...]: runs NAME.onnx on CUDA against its references.
cuda_run() {
  local name=$1 tag=$2
  shift 2
  expect_rc 0 "$tag" "$PLUGRT" run "$MODELS/$name.onnx" --device cuda \
    --compare "$MODELS/$name.data" --output-dir "out_$tag" -n 5 --warmup 1 "${tol[@]}" "$@" ||
    return 1
  expect_grep "^model: .*, built in [0-9.]+ s for cuda$" "$tag.out" "$tag: built for cuda"
  expect_grep "^PASSED" "$tag.out" "$tag: outputs match"
  expect_grep "^latency \(ms, wall per run\): min [0-9.]+, median [0-9.]+, p90 [0-9.]+, p99 [0-9.]+" \
    "$tag.out" "$tag: wall time per run"
  expect_grep "^GPU time \(ms, CUDA events around each (enqueue|graph launch)\): min [0-9.]+, median [0-9.]+, p90 [0-9.]+, p99 [0-9.]+" \
    "$tag.out" "$tag: GPU time"
  for f in "$MODELS/$name.data"/output_*.npy; do
    [ -f "out_$tag/$(basename "$f")" ] || fail "$tag did not write out_$tag/$(basename "$f")"
  done
}

for name in nonzero_plugin qa_custom_hardmax circ_pad_conv; do
  if [ ! -f "$MODELS/$name.onnx" ] || [ ! -d "$MODELS/$name.data" ]; then
    fail "$MODELS/$name.onnx or its .data directory is missing"
    continue
  fi
  cuda_run "$name" "${name}_enqueue" &&
    expect_grep "^GPU time \(ms, CUDA events around each enqueue\)" "${name}_enqueue.out"
  # None of the three waits for the host in the middle of a run (NonZero's
  # count stays on the device), so each can be captured.
  cuda_run "$name" "${name}_graph" --cuda-graph &&
    expect_grep "CUDA graph replays\)$" "${name}_graph.out" &&
    expect_grep "^GPU time \(ms, CUDA events around each graph launch\)" "${name}_graph.out"
  cuda_run "$name" "${name}_threads" --threads 2 &&
    expect_grep "\(10 runs: 5 x 2 threads" "${name}_threads.out"
  cuda_run "$name" "${name}_graph_threads" --threads 2 --cuda-graph
done

# The real models, whose every layer is a built-in op: enqueued, as graph
# replays (no layer waits for the host, so the whole engine is captured)
# and on two contexts, each against ONNX Runtime's references at atol 1e-4
# of the largest reference magnitude (MobileNet's logits are ~1e-9, so a
# fixed atol would accept anything there).
for name in mobilenet_v3_small bert_small; do
  if [ ! -f "$MODELS/$name.onnx" ] || [ ! -d "$MODELS/$name.data" ]; then
    fail "$MODELS/$name.onnx or its .data directory is missing"
    continue
  fi
  atol=$("$PYTHON" -c "import numpy as np, glob; print(1e-4 * min(float(np.abs(np.load(f)).max()) for f in glob.glob('$MODELS/$name.data/output_*.npy')))") || {
    fail "$name: cannot read its references"
    continue
  }
  tol=(--atol "$atol" --rtol 1e-4)
  cuda_run "$name" "${name}_enqueue"
  cuda_run "$name" "${name}_graph_threads" --cuda-graph --threads 2
  for f in "out_${name}_enqueue"/*.npy; do
    cmp -s "$f" "out_${name}_graph_threads/$(basename "$f")" ||
      fail "$name: the graph replays' $(basename "$f") differs from the enqueued run's"
  done
done
tol=(--atol 1e-4 --rtol 1e-4)

# Round trip: build for CUDA with a timing cache, twice; inspect; run the plan.
nz=$MODELS/nonzero_plugin
profile=(--min-shapes X:1x1 --opt-shapes X:128x128 --max-shapes X:256x256)
rm -f tc.cache
expect_rc 0 build1 "$PLUGRT" build "$nz.onnx" -o nz1.plan --device cuda --autotune \
  --timing-cache tc.cache "${profile[@]}" && {
  expect_grep "^  device       cuda, built on $gpu \(compute capability $cc, [0-9]+ multiprocessors" \
    build1.out "build: the GPU it was built on"
  expect_grep "^  timing cache tc.cache: none before the build, [0-9]+ after$" build1.out
}
if [ -s tc.cache ]; then
  cp tc.cache tc.first
  size=$(stat -c %s tc.cache)
  expect_rc 0 build2 "$PLUGRT" build "$nz.onnx" -o nz2.plan --device cuda --autotune \
    --timing-cache tc.cache "${profile[@]}" &&
    expect_grep "^  timing cache tc.cache: $size bytes before the build, [0-9]+ after$" build2.out
  # Reused, not timed again: nothing new to store, so the cache written back
  # holds what it held, and the plan has the first one's tactics.
  cmp -s tc.cache tc.first || fail "the second build changed tc.cache: it timed again"
else
  fail "the first build did not write tc.cache"
fi

expect_rc 0 inspect "$PLUGRT" inspect nz1.plan && {
  expect_grep "^plan: nz1\.plan \([0-9]+ bytes\), device cuda," inspect.out
  expect_grep "^built on: $gpu, compute capability $cc, [0-9]+ multiprocessors, " inspect.out
  expect_grep "NonZeroPlugin@1  tactic [0-9]+, workspace" inspect.out "the plugin's tactic"
}
expect_rc 0 inspect1_json "$PLUGRT" inspect nz1.plan --json &&
  expect_rc 0 inspect2_json "$PLUGRT" inspect nz2.plan --json &&
  expect_rc 0 devices_json "$PLUGRT" devices --json &&
  expect_rc 0 inspect_check "$PYTHON" - inspect1_json.out inspect2_json.out devices_json.out <<'PY'
import json, sys
a, b, devs = (json.load(open(p)) for p in sys.argv[1:4])
cuda = [d for d in devs["devices"] if d["device"] == "cuda"][0]
for plan in (a, b):
    assert plan["device"] == "cuda", plan["device"]
    bd = plan["build_device"]
    assert bd["name"] == cuda["name"], (bd, cuda)
    assert (bd["cc_major"], bd["cc_minor"]) == (cuda["cc_major"], cuda["cc_minor"]), (bd, cuda)
ta = [(l["name"], l["tactic"]) for l in a["layers"]]
tb = [(l["name"], l["tactic"]) for l in b["layers"]]
assert ta == tb, ("the build from the timing cache chose other tactics", ta, tb)
PY

# The plan runs on its own device: no --device needed; --device cpu is a
# usage error naming both.
expect_rc 0 run_plan "$PLUGRT" run nz1.plan --compare "$nz.data" -n 5 --warmup 1 && {
  expect_grep "^model: nz1\.plan, plan of [0-9]+ bytes for cuda" run_plan.out
  expect_grep "^PASSED" run_plan.out
}
expect_rc 0 run_plan_graph "$PLUGRT" run nz1.plan --device cuda --cuda-graph \
  --compare "$nz.data" -n 5 --warmup 1 && expect_grep "^PASSED" run_plan_graph.out
# Random inputs of another shape inside the profile, against the CPU's
# outputs of the same data (seeded, so both runs see the same values).
expect_rc 0 cpu_ref "$PLUGRT" run "$nz.onnx" --random-inputs --shapes X:200x37 -o ref_cpu -n 1 \
  --warmup 0 &&
  expect_rc 0 run_random "$PLUGRT" run nz1.plan --random-inputs --shapes X:200x37 \
    --compare ref_cpu -n 2 --warmup 0 && expect_grep "^PASSED" run_random.out
expect_rc 2 run_plan_cpu "$PLUGRT" run nz1.plan --device cpu --compare "$nz.data" &&
  expect_grep "\-\-device cpu: the plan nz1\.plan was built for cuda" run_plan_cpu.err

finish

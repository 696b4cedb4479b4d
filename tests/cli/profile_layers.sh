#!/usr/bin/env bash
# `plugrt run --profile-layers` prints every layer once with its median,
# mean and share, slowest first, and --profile-json writes the same for
# tools, as --json prints it on stdout inside the run's document; `--op-threads N` gives each context N threads without changing a
# bit of the outputs; both flags' misuse is a usage error; `plugrt build
# --op-threads` times autotuning's runs on N threads.
. "$(dirname "$0")/common.sh"

# x (float32 1x4) -> Relu -> Relu -> y
expect_rc 0 make_small "$MAKE_PLAN" small.plan 4 || finish

expect_rc 0 profile "$PLUGRT" run small.plan --random-inputs -n 5 --warmup 1 \
  --profile-layers --profile-json p.json && {
  expect_grep "^layer profile \(5 runs per layer; slowest first\):$" profile.out
  expect_grep "^ +median ms +mean ms +share +layer \(op\)$" profile.out
  [ "$(grep -Ec "^ +[0-9]+\.[0-9]{4} +[0-9]+\.[0-9]{4} +[0-9]+\.[0-9]%  relu_[12] \(Relu\)$" \
    profile.out)" = 2 ] || fail "profile: not one line for each of the two layers"
  expect_grep "^  sum of the layers' medians [0-9.]+ ms; median run [0-9.]+ ms$" profile.out
  expect_grep "^latency \(ms\): .*\(5 runs: 5 x 1 thread, [0-9]+ op threads? each, after 1 warmup\)" \
    profile.out
  "$PLUGRT" inspect small.plan --json >inspect.json
  "$PYTHON" - p.json inspect.json <<'EOF' || fail "profile JSON does not hold what it should"
import json, sys
p = json.load(open(sys.argv[1]))
names = [l["name"] for l in json.load(open(sys.argv[2]))["layers"]]
assert p["runs"] == 5, p["runs"]
rows = p["layers"]
assert sorted(r["index"] for r in rows) == list(range(len(names))), rows
for r in rows:
    assert r["name"] == names[r["index"]], (r, names)
    assert r["op"] == "Relu"
    assert 0 <= r["min_ms"] <= r["median_ms"] <= r["max_ms"], r
    assert r["min_ms"] <= r["mean_ms"] <= r["max_ms"], r
meds = [r["median_ms"] for r in rows]
assert meds == sorted(meds, reverse=True), meds
total = sum(meds)
assert abs(total - p["layers_median_sum_ms"]) <= 1e-9 * max(1.0, total), p
assert total == 0 or abs(sum(r["share"] for r in rows) - 1) < 1e-9, rows
assert p["run_median_ms"] > 0
EOF
}

# --json: one document on stdout (the text goes to stderr), the profile
# inside it.
expect_rc 0 json_doc "$PLUGRT" run small.plan --random-inputs -n 3 --warmup 1 \
  --profile-layers --json --op-threads 2 && {
  expect_grep "^layer profile \(3 runs per layer; slowest first\):$" json_doc.err
  "$PYTHON" - json_doc.out <<'EOF' || fail "--json: the document does not hold what it should"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"] == "cpu" and d["contexts"] == 1 and d["op_threads"] == 2, d
assert d["runs"] == 3 and d["warmup"] == 1, d
t = d["latency_ms"]
assert 0 < t["min"] <= t["median"] <= t["p90"] <= t["p99"] <= t["max"], t
assert t["min"] <= t["mean"] <= t["max"] and d["throughput_per_s"] > 0, d
assert d["outputs_ok"] is True
p = d["layer_profile"]
assert p["runs"] == 3 and sorted(l["op"] for l in p["layers"]) == ["Relu", "Relu"], p
EOF
}
expect_rc 0 json_plain "$PLUGRT" run small.plan --random-inputs -n 2 --json &&
  "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert "layer_profile" not in d and d["runs"] == 2' \
    json_plain.out || fail "--json without --profile-layers"
expect_rc 2 json_layers "$PLUGRT" run small.plan --random-inputs --json --compare-layers &&
  expect_grep "\-\-json describes timed runs" json_layers.err

# Every thread's runs count.
expect_rc 0 profile_threads "$PLUGRT" run small.plan --random-inputs -n 4 --threads 3 \
  --op-threads 1 --profile-layers && {
  expect_grep "^layer profile \(12 runs per layer, every thread's runs; slowest first\):$" \
    profile_threads.out
  expect_grep "\(12 runs: 4 x 3 threads, 1 op thread each" profile_threads.out
}

# --op-threads: the context's count, printed; misuse is a usage error.
expect_rc 0 op_threads "$PLUGRT" run small.plan --random-inputs -n 1 --op-threads 3 &&
  expect_grep "1 thread, 3 op threads each" op_threads.out
for v in 0 -1 1025 two ""; do
  expect_rc 2 "op_threads_bad_$v" "$PLUGRT" run small.plan --random-inputs \
    --op-threads "$v" && expect_grep "\-\-op-threads" "op_threads_bad_$v.err"
done
expect_rc 2 json_alone "$PLUGRT" run small.plan --random-inputs --profile-json x.json &&
  expect_grep "\-\-profile-json applies to \-\-profile-layers" json_alone.err
expect_rc 2 profile_graph "$PLUGRT" run small.plan --random-inputs --profile-layers \
  --cuda-graph && expect_grep "leave out \-\-cuda-graph" profile_graph.err
expect_rc 1 json_unwritable "$PLUGRT" run small.plan --random-inputs -n 1 --profile-layers \
  --profile-json no/such/dir/p.json && expect_grep "cannot write it" json_unwritable.err
expect_rc 0 help "$PLUGRT" run --help && {
  expect_grep "^  --op-threads N" help.out
  expect_grep "^  --profile-layers" help.out
  expect_grep "^  --profile-json FILE" help.out
  expect_grep "^  --json " help.out
}

# A real network: the outputs on 1 and on 3 threads are the same bytes, and
# the profile names its convolutions.
mb="$MODELS/mobilenet_v3_small"
if [ -f "$mb.onnx" ]; then
  for t in 1 3; do
    expect_rc 0 "mobilenet_$t" "$PLUGRT" run "$mb.onnx" --compare "$mb.data" --rtol 1e-4 \
      --atol 1e-4 -n 1 --warmup 0 --op-threads "$t" -o "out_$t" --profile-layers
  done
  cmp -s out_1/output_logits.npy out_3/output_logits.npy ||
    fail "mobilenet: the logits on 3 op threads differ from those on 1"
  expect_grep "^ +[0-9.]+ +[0-9.]+ +[0-9.]+%  .*Conv \(Conv\)$" mobilenet_3.out
fi

# build --op-threads: autotuning on 2 threads; misuse is a usage error.
if [ -f "$MODELS/circ_pad_conv.onnx" ]; then
  expect_rc 0 build_threads "$PLUGRT" build "$MODELS/circ_pad_conv.onnx" -o cp.plan \
    --autotune --op-threads 2 &&
    expect_rc 0 build_threads_run "$PLUGRT" run cp.plan --compare "$MODELS/circ_pad_conv.data" \
      -n 1
  expect_rc 2 build_threads_bad "$PLUGRT" build "$MODELS/circ_pad_conv.onnx" -o cp2.plan \
    --op-threads 0 && expect_grep "\-\-op-threads" build_threads_bad.err
  expect_rc 0 build_help "$PLUGRT" build --help && expect_grep "^  --op-threads N" build_help.out
fi

finish

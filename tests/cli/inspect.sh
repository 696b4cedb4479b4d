#!/usr/bin/env bash
# `plugrt inspect` on a built plan: its device, the plugin's key, library
# and fields, each layer's tactic, the data-dependent output, the memory
# plan; --json parses and says the same.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model || finish
expect_rc 0 build "$PLUGRT" build model/model.onnx -o model.plan \
  --min-shapes X:1x1 --opt-shapes X:8x8 --max-shapes X:16x16 || finish

expect_rc 0 inspect "$PLUGRT" inspect model.plan && {
  expect_grep "^plan: model\.plan \([0-9]+ bytes\), device cpu, 1 profile\(s\), 1 layers \(1 plugin\)$" \
    inspect.out "the plan's device"
  # A CPU plan names no GPU it was built on.
  grep -q "^built on:" inspect.out && fail "a CPU plan says which GPU it was built on"
  # The workspace is 0 B without a usable GPU, else the plugin's CUDA scratch.
  expect_grep "^  \[0\] nonzero  NonZeroPlugin@1  tactic 0, workspace [0-9.]+ (B|KiB)$" \
    inspect.out "the plugin layer's tactic"
  expect_grep "NonZeroPlugin@1" inspect.out "plugin key"
  expect_grep "library: .*libplugrt_plugins.*content hash [0-9a-f]{16}" inspect.out "library"
  expect_grep "rowOrder int32\[1\] = 1" inspect.out "rowOrder field"
  expect_grep "output Y +int32 +\?x2 +data-dependent dim 0" inspect.out "Y's data-dependent dim"
  expect_grep "output K +int64 +scalar" inspect.out "size tensor K"
  expect_grep "Memory plan" inspect.out
}

expect_rc 0 inspect_json "$PLUGRT" inspect model.plan --json &&
  expect_rc 0 json_parse "$PYTHON" - inspect_json.out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
layers = d["layers"]
nz = [l for l in layers if l["plugin"] == "NonZeroPlugin"]
assert len(nz) == 1, layers
nz = nz[0]
assert d["device"] == "cpu", d["device"]
assert d["build_device"] == {"name": "cpu", "cc_major": 0, "cc_minor": 0,
                             "multiprocessors": 0, "memory_bytes": 0}, d["build_device"]
assert all(isinstance(l["tactic"], int) and l["tactic"] >= 0 for l in layers), layers
assert nz["key"] == "NonZeroPlugin@1" and nz["namespace"] == "" and nz["version"] == "1", nz
assert "libplugrt_plugins" in nz["library"], nz
assert len(nz["library_hash"]) == 16, nz
fields = {f["name"]: f for f in nz["fields"]}
assert fields["rowOrder"]["type"] == "int32" and fields["rowOrder"]["value"] == [1], fields
io = {t["name"]: t for t in d["io"]}
assert io["X"]["is_input"] and io["X"]["dims"] == [-1, -1], io
assert io["Y"]["data_dependent_dims"] == [0] and io["Y"]["dims"][1] == 2, io
assert io["K"]["dims"] == [], io
mem = d["memory"]
assert mem["device_memory_bytes"] >= mem["arena_bytes"] >= 0, mem
for a in mem["activations"]:
    assert a["offset"] >= 0 and a["offset"] + a["bytes"] <= mem["arena_bytes"], a
EOF

# Built-in layers have a tactic too.
expect_rc 0 make_plan "$MAKE_PLAN" relu.plan 4 &&
  expect_rc 0 inspect_relu "$PLUGRT" inspect relu.plan &&
  expect_grep "^  \[1\] relu_2  plugrt::Relu@1 \(built-in\)  tactic 0, workspace 0 B$" \
    inspect_relu.out "the built-in layer's tactic"

# A plan whose plugin library is not loaded names the plugin and says what
# to do.
expect_rc 1 no_lib "$PLUGRT" inspect model.plan --no-default-plugins &&
  expect_grep "NonZeroPlugin" no_lib.err && expect_grep "\-\-plugins" no_lib.err

finish

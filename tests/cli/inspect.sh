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

# Each profile's min/opt/max, and the size tensor's opt and bound there:
# NonZeroPlugin declares K with opt ceil(R*C/2) and bound R*C, so 32 at
# the opt shapes 8x8 and 256 at the max 16x16.
expect_grep "^Profiles:$" inspect.out
expect_grep "^  profile 0:$" inspect.out
expect_grep "^    input X  min 1x1  opt 8x8  max 16x16$" inspect.out "X's profile"
expect_grep "^    size tensor K  opt 32  bound 256$" inspect.out "K's opt and bound"
expect_rc 0 json_profiles "$PYTHON" - inspect_json.out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["plugins_loaded"] is True and d["load_error"] is None, d
p = d["profile_shapes"]
assert len(p) == d["profiles"] == 1, p
assert p[0]["inputs"] == [{"name": "X", "min": [1, 1], "opt": [8, 8], "max": [16, 16]}], p
assert p[0]["size_tensors"] == [{"name": "K", "opt": 32, "bound": 256}], p
assert all(l["loaded"] for l in d["layers"]), d["layers"]
EOF
# Without size tensors the list is there, empty; a static input has min =
# opt = max.
expect_rc 0 inspect_relu_json "$PLUGRT" inspect relu.plan --json &&
  expect_rc 0 relu_profiles "$PYTHON" - inspect_relu_json.out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profile_shapes"][0]
assert p["size_tensors"] == [], p
for i in p["inputs"]:
    assert i["min"] == i["opt"] == i["max"], i
EOF

# A plan describes itself: without the library its plugin needs, inspect
# still shows every layer's plugin key, library, hash and fields, says the
# plugins are not loaded and why, and exits 0.
expect_rc 0 no_lib "$PLUGRT" inspect model.plan --no-default-plugins && {
  expect_grep "^plugins: not loaded \(.*NonZeroPlugin.*\)" no_lib.out "the reason"
  expect_grep "^  \[0\] nonzero  NonZeroPlugin@1  tactic 0" no_lib.out "the plugin key"
  expect_grep "library: .*libplugrt_plugins.*content hash [0-9a-f]{16}\), not loaded$" \
    no_lib.out "the library, not loaded"
  expect_grep "rowOrder int32\[1\] = 1" no_lib.out "the fields"
  expect_grep "size tensor K  opt 32  bound 256" no_lib.out "the profile"
  expect_grep "\-\-plugins" no_lib.err "what to do"
}
expect_rc 0 no_lib_json "$PLUGRT" inspect model.plan --no-default-plugins --json &&
  expect_rc 0 no_lib_json_parse "$PYTHON" - no_lib_json.out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["plugins_loaded"] is False and "NonZeroPlugin" in d["load_error"], d
nz = [l for l in d["layers"] if l["plugin"] == "NonZeroPlugin"]
assert len(nz) == 1 and nz[0]["loaded"] is False, d["layers"]
assert {f["name"]: f["value"] for f in nz[0]["fields"]}["rowOrder"] == [1], nz
EOF
# Running it still needs the plugin.
expect_rc 1 no_lib_run "$PLUGRT" run model.plan --no-default-plugins --random-inputs \
  --shapes X:4x4 && expect_grep "NonZeroPlugin" no_lib_run.err
# Bytes that are not a plan are still an error.
printf 'PLUGRTEN garbage' >bad.plan
expect_rc 1 bad_plan "$PLUGRT" inspect bad.plan --no-default-plugins

# An ONNX model, read without importing it: inputs and outputs with their
# dtypes and declared shapes (symbolic dims by name), ops counted, and the
# plugin key of a node that asks for a plugin.
expect_rc 0 onnx "$PLUGRT" inspect model/model.onnx && {
  expect_grep "^model: model/model\.onnx, IR version 8, opset 17, 1 nodes, 0 initializers$" \
    onnx.out "the model line"
  expect_grep "^  input  X  float32 RxC$" onnx.out "input X"
  expect_grep "^  output Y  int32 Kx2$" onnx.out "output Y"
  expect_grep "^  output K  int64 scalar$" onnx.out "output K"
  expect_grep "^       1  NonZeroPlugin  plugin NonZeroPlugin@1$" onnx.out "the op count"
  expect_grep "^  \[0\] nonzero  NonZeroPlugin  plugin NonZeroPlugin@1$" onnx.out "the node"
  expect_grep "^      in:  X$" onnx.out && expect_grep "^      out: Y, K$" onnx.out
}
# Its plugin's library not loaded: described all the same, and said.
expect_rc 0 onnx_no_lib "$PLUGRT" inspect model/model.onnx --no-default-plugins &&
  expect_grep "plugin NonZeroPlugin@1, not loaded" onnx_no_lib.out &&
  expect_grep "1 plugin op\(s\) not loaded" onnx_no_lib.out
# A larger model: built-in ops counted, a node of an op nothing serves
# (FindNonZero, no plugin by that key), nodes listed only with --verbose.
expect_rc 0 make_chain "$PYTHON" - chain.onnx <<'EOF'
import sys
import onnx
from onnx import TensorProto, helper
nodes, prev = [], "x"
for i in range(40):
    nodes.append(helper.make_node("Relu", [prev], ["r%d" % i], name="relu%d" % i))
    prev = "r%d" % i
nodes.append(helper.make_node("Add", [prev, "bias"], ["sum"], name="add"))
nodes.append(helper.make_node("FindNonZero", ["sum"], ["idx", "n"], name="find"))
bias = helper.make_tensor("bias", TensorProto.FLOAT, [4], [1, 2, 3, 4])
graph = helper.make_graph(
    nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
    [helper.make_tensor_value_info("idx", TensorProto.INT32, None),
     helper.make_tensor_value_info("n", TensorProto.INT64, [])], [bias])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
EOF
expect_rc 0 chain "$PLUGRT" inspect chain.onnx && {
  expect_grep "42 nodes, 1 initializers$" chain.out
  expect_grep "^      40  Relu$" chain.out "Relu's count"
  expect_grep "^       1  Add$" chain.out "Add's count"
  expect_grep "^       1  FindNonZero  plugin FindNonZero@1, not loaded$" chain.out
  expect_grep "^  output idx  int32 \(no shape\)$" chain.out "an output without a shape"
  expect_grep "^Nodes: 42 \(--verbose lists each\)$" chain.out "the node summary"
  grep -q "^  \[0\]" chain.out && fail "nodes listed without --verbose"
}
expect_rc 0 chain_verbose "$PLUGRT" inspect chain.onnx --verbose &&
  expect_grep "^  \[41\] find  FindNonZero  plugin FindNonZero@1, not loaded$" \
    chain_verbose.out "the last node"
expect_rc 0 chain_json "$PLUGRT" inspect chain.onnx --json &&
  expect_rc 0 chain_json_parse "$PYTHON" - chain_json.out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert [i["name"] for i in d["inputs"]] == ["x"], d["inputs"]
assert d["inputs"][0]["dims"] == [-1, 4] and d["inputs"][0]["dim_params"] == ["N", ""], d
assert d["outputs"][0]["dims"] is None and d["outputs"][1]["dims"] == [], d["outputs"]
ops = {o["op_type"]: o for o in d["ops"]}
assert ops["Relu"]["count"] == 40 and ops["Relu"]["plugin"] is None, ops
assert ops["FindNonZero"]["plugin"] == "FindNonZero@1", ops
assert ops["FindNonZero"]["available"] is False, ops
assert len(d["nodes"]) == 42 and d["nodes"][41]["outputs"] == ["idx", "n"], d["nodes"][41]
EOF
expect_rc 1 onnx_missing "$PLUGRT" inspect missing.onnx && expect_grep "missing.onnx" onnx_missing.err

finish

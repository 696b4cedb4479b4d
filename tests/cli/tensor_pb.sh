#!/usr/bin/env bash
# `plugrt run` reads ONNX TensorProto files (.pb) as well as .npy: with
# --input NAME=FILE.pb, and in a --compare folder laid out as ONNX's test
# data (input_K.pb, output_K.pb, each naming its tensor), so
# `plugrt run model.onnx --compare test_data_set_0` runs a model's own test
# data. An output_K.pb without a name is output K; an input_K.pb without
# one is ignored with a note (--input may give it); a dtype plugrt lacks and
# a file that is no TensorProto are errors naming the file.
. "$(dirname "$0")/common.sh"
have_onnx || skip "plugrt was built without the ONNX importer"

# y = Relu(x); w = Reshape(x, s), s a shape input (its values from a .pb).
expect_rc 0 make "$PYTHON" - <<'PY' || finish
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper as nh
g = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Reshape", ["x", "s"], ["w"])],
    "pb", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
           helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("w", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "model.onnx")
x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
s = np.array([3, 2], np.int64)
def pb(path, a, name):
    open(path, "wb").write(nh.from_array(a, name).SerializeToString())
for d in ("named", "unnamed_out", "wrong", "unnamed_in", "double"):
    os.makedirs(d, exist_ok=True)
    pb(f"{d}/input_0.pb", x, "" if d == "unnamed_in" else "x")
    pb(f"{d}/input_1.pb", s.astype(np.float64) if d == "double" else s, "s")
    pb(f"{d}/output_0.pb", np.maximum(x, 0) + (d == "wrong"), "" if d == "unnamed_out" else "y")
    pb(f"{d}/output_1.pb", x.reshape(3, 2), "w")
pb("x.pb", x, "x")
pb("s.pb", s, "s")
open("garbage.pb", "wb").write(b"\xff\xff\xff\xff not a tensor")
PY

expect_rc 0 named "$PLUGRT" run model.onnx --compare named -n 1 --warmup 0 &&
  expect_grep "^PASSED: 2 output\(s\) match$" named.out &&
  expect_grep "^  x +float32 +2x3 +named/input_0\.pb$" named.out
expect_rc 0 unnamed_out "$PLUGRT" run model.onnx --compare unnamed_out -n 1 --warmup 0 &&
  expect_grep "^PASSED: 2 output\(s\) match$" unnamed_out.out
expect_rc 1 wrong "$PLUGRT" run model.onnx --compare wrong -n 1 --warmup 0 &&
  expect_grep "^  y +FAIL" wrong.out
# --input takes .pb files; they override the folder's.
expect_rc 0 input "$PLUGRT" run model.onnx -i x=x.pb -i s=s.pb -o out -n 1 --warmup 0 &&
  expect_grep "^  w +float32 +3x2 " input.out
expect_rc 0 override "$PLUGRT" run model.onnx --compare unnamed_in -i x=x.pb -n 1 --warmup 0
expect_rc 1 unnamed_in "$PLUGRT" run model.onnx --compare unnamed_in -n 1 &&
  expect_grep "ignoring unnamed_in/input_0\.pb: it holds a tensor without a name" \
    unnamed_in.err && expect_grep "no data for input x" unnamed_in.err
expect_rc 1 double "$PLUGRT" run model.onnx --compare double -n 1 &&
  expect_grep "double/input_1\.pb holds float64, the model takes int64" double.err
expect_rc 1 garbage "$PLUGRT" run model.onnx -i x=garbage.pb -i s=s.pb -n 1 &&
  expect_grep "garbage\.pb" garbage.err
expect_rc 1 missing "$PLUGRT" run model.onnx -i x=nosuch.pb -i s=s.pb -n 1 &&
  expect_grep "nosuch\.pb" missing.err

# A plan reads them too: x (float32 1x4) -> Relu -> Relu -> y.
expect_rc 0 make_plan "$MAKE_PLAN" small.plan 4 || finish
"$PYTHON" -c 'from onnx import numpy_helper as nh; import numpy as np
open("x4.pb", "wb").write(nh.from_array(np.array([[-1, 1, -2, 2]], np.float32), "x").SerializeToString())'
expect_rc 0 plan "$PLUGRT" run small.plan -i x=x4.pb -o plan_out -n 1 &&
  expect_rc 0 plan_check "$PYTHON" -c 'import numpy as np
y = np.load("plan_out/output_y.npy"); assert (y == [[0, 1, 0, 2]]).all(), y'

finish

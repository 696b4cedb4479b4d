#!/usr/bin/env bash
# `plugrt run MODEL.onnx` with the data of a shape input (a Reshape's
# shape, an Expand's shape, Range's bounds): the profile takes its values
# from the data (min = opt = max), as it takes the dims of every input, so
# no flag beyond --input (or the --compare directory) is needed. A shape
# input without data is an error that says so. `plugrt build` takes a shape
# input's value bounds from --min/--opt/--max-shapes.
. "$(dirname "$0")/common.sh"
have_onnx || skip "plugrt was built without the ONNX importer"

# y = Reshape(x, s); z = Expand(x, Concat(e, [1])) (e reaches the Expand
# through a Concat, whose values the builder works out); r = Range(0, n, 1)
# with n a 0-D input.
expect_rc 0 make_model "$PYTHON" - <<'PY' || finish
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
g = helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["y"]),
     helper.make_node("Concat", ["e", "one"], ["es"], axis=0),
     helper.make_node("Expand", ["x", "es"], ["z"]),
     helper.make_node("Range", ["zero", "n", "step"], ["r"])],
    "shape_inputs",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6]),
     helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
     helper.make_tensor_value_info("e", TensorProto.INT64, [2]),
     helper.make_tensor_value_info("n", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("r", TensorProto.INT64, None)],
    [numpy_helper.from_array(np.array([1], np.int64), "one"),
     numpy_helper.from_array(np.array(0, np.int64), "zero"),
     numpy_helper.from_array(np.array(1, np.int64), "step")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "model.onnx")
x = np.arange(6, dtype=np.float32).reshape(1, 6)
for d, s, e, n in [("ref_a", (3, 2), (2, 4), 5), ("ref_b", (2, 3), (3, 1), 2)]:
    os.makedirs(d, exist_ok=True)
    np.save(f"{d}/input_x.npy", x)
    np.save(f"{d}/input_s.npy", np.array(s, np.int64))
    np.save(f"{d}/input_e.npy", np.array(e, np.int64))
    np.save(f"{d}/input_n.npy", np.array(n, np.int64))
    np.save(f"{d}/output_y.npy", x.reshape(s))
    np.save(f"{d}/output_z.npy", x * np.ones(e + (1,), np.float32))
    np.save(f"{d}/output_r.npy", np.arange(n, dtype=np.int64))
PY

# From the --compare directory, at two sets of values (each its own build).
for d in ref_a ref_b; do
  expect_rc 0 "run_$d" "$PLUGRT" run model.onnx --compare "$d" -n 1 --warmup 0 &&
    expect_grep "^PASSED: 3 output\(s\) match" "run_$d.out" &&
    expect_grep "^  s +int64 +2 .*\(shape input: read on the host\)$" "run_$d.out"
done
# From --input, on two threads; outputs at their true shapes.
expect_rc 0 run_inputs "$PLUGRT" run model.onnx -i x=ref_a/input_x.npy -i s=ref_a/input_s.npy \
  -i e=ref_a/input_e.npy -i n=ref_a/input_n.npy --threads 2 -n 2 -o out &&
  expect_grep "^  y +float32 +3x2 " run_inputs.out &&
  expect_grep "^  z +float32 +2x4x6 " run_inputs.out &&
  expect_grep "^  r +int64 +5 " run_inputs.out
# Layer by layer, against plugrt and against ONNX Runtime (skipped there
# when it is not installed).
expect_rc 0 layers "$PLUGRT" run model.onnx --compare ref_b --compare-layers &&
  expect_grep "^PASSED" layers.out
if "$PYTHON" -c 'import onnxruntime' 2>/dev/null; then
  expect_rc 0 layers_ort env PLUGRT_PYTHON="$PYTHON" "$PLUGRT" run model.onnx --compare ref_b \
    --compare-layers --reference onnxruntime && expect_grep "^PASSED" layers_ort.out
fi

# Random data cannot stand in for a shape input: the error names it and
# says what to give.
expect_rc 1 random "$PLUGRT" run model.onnx -i x=ref_a/input_x.npy -i e=ref_a/input_e.npy \
  -i n=ref_a/input_n.npy --random-inputs &&
  expect_grep "input s is a shape input .* needs data: give --input s=FILE\.npy" random.err
# Data of the wrong dtype is the usual input error, not a build failure.
"$PYTHON" -c 'import numpy as np; np.save("s32.npy", np.array([3, 2], np.int32))'
expect_rc 1 wrong_dtype "$PLUGRT" run model.onnx --compare ref_a -i s=s32.npy &&
  expect_grep "input s: s32\.npy holds int32, the model takes int64" wrong_dtype.err

# plugrt build: for a shape input, --min/--opt/--max-shapes give the bounds
# of its values (as trtexec's shapes do for shape tensors), negative ones
# included; one plan then serves both sets of values, and values outside
# the bounds are the runtime's error.
expect_rc 1 build_none "$PLUGRT" build model.onnx -o none.plan &&
  expect_grep "shape input 's' \(2 values\) needs the bounds of its values" build_none.err &&
  expect_grep "values of a shape input the same way" build_none.err
expect_rc 0 build_range "$PLUGRT" build model.onnx -o range.plan \
  --min-shapes s:1x1,e:1x1,n:1 --opt-shapes s:3x2,e:2x4,n:5 --max-shapes s:6x6,e:8x8,n:16 &&
  for d in ref_a ref_b; do
    expect_rc 0 "plan_$d" "$PLUGRT" run range.plan --compare "$d" -n 1 --warmup 0 &&
      expect_grep "^PASSED: 3 output\(s\) match" "plan_$d.out"
  done
"$PYTHON" -c 'import numpy as np
np.save("s_big.npy", np.array([1, 7], np.int64)); np.save("s_m1.npy", np.array([-1, 3], np.int64))'
expect_rc 1 plan_outside "$PLUGRT" run range.plan --compare ref_a -i s=s_big.npy -n 1 &&
  expect_grep "shape input 's': value 1 is 7, outside profile 0's 1\.\.6" plan_outside.err
expect_rc 0 build_m1 "$PLUGRT" build model.onnx -o m1.plan --opt-shapes s:-1x3,e:2x4,n:5 &&
  expect_rc 0 plan_m1 "$PLUGRT" run m1.plan -i x=ref_a/input_x.npy -i s=s_m1.npy \
    -i e=ref_a/input_e.npy -i n=ref_a/input_n.npy -n 1 &&
  expect_grep "^  y +float32 +2x3$" plan_m1.out
expect_rc 1 build_count "$PLUGRT" build model.onnx -o x.plan --opt-shapes s:3x2x1,e:2x4,n:5 &&
  expect_grep "shape input 's' \(2 values\)" build_count.err
expect_rc 1 build_counts "$PLUGRT" build model.onnx -o x.plan --min-shapes s:1 \
  --opt-shapes s:3x2,e:2x4,n:5 &&
  expect_grep "shape input s: .* give 1, 2 and 2 values" build_counts.err
# Negative numbers are values, never dims.
expect_rc 1 build_neg_dim "$PLUGRT" build model.onnx -o x.plan --opt-shapes x:-1x6,s:3x2,e:2x4,n:5 &&
  expect_grep "need 0 <= min" build_neg_dim.err
expect_rc 2 run_neg_dim "$PLUGRT" run model.onnx --compare ref_a --shapes x:-1x6 &&
  expect_grep "not a shape" run_neg_dim.err

finish

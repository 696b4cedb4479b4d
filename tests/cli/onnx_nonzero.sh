#!/usr/bin/env bash
# The seed's ONNX flow: a model with one NonZeroPlugin node (attributes
# backend, plugin_namespace "", rowOrder) made with onnx.helper, run by
# `plugrt run model.onnx --input X=x.npy --output-dir D`, checked against
# numpy's argwhere. Also the plan route and several threads.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model 13 11 || finish

verify() { # verify DIR: DIR/output_Y.npy is argwhere(x), output_K.npy the count
  expect_rc 0 "verify_$1" "$PYTHON" - model/x.npy "$1" <<'EOF'
import sys
import numpy as np
x = np.load(sys.argv[1])
y = np.load(sys.argv[2] + "/output_Y.npy")
k = np.load(sys.argv[2] + "/output_K.npy")
want = np.argwhere(x)
assert y.dtype == np.int32, y.dtype
assert y.shape == want.shape, (y.shape, want.shape)
assert np.array_equal(y, want), "indices differ from np.argwhere"
assert k.dtype == np.int64 and k.shape == (), (k.dtype, k.shape)
assert int(k) == len(want), (int(k), len(want))
EOF
}

expect_rc 0 run_onnx "$PLUGRT" run model/model.onnx --input X=model/x.npy --output-dir out_onnx &&
  verify out_onnx
expect_grep "latency \(ms\): min [0-9.]+, median [0-9.]+, p90 [0-9.]+, p99 [0-9.]+" run_onnx.out
expect_grep "throughput: [0-9.]+ inferences/s" run_onnx.out

# Build a plan with a profile, run it on the same input with two threads.
expect_rc 0 build "$PLUGRT" build model/model.onnx -o model.plan \
  --min-shapes X:1x1 --opt-shapes X:13x11 --max-shapes X:32x32 &&
  expect_grep "NonZeroPlugin@1" build.out "build summary"
expect_rc 0 run_plan "$PLUGRT" run model.plan --input X=model/x.npy --output-dir out_plan \
  --threads 2 --iterations 3 && verify out_plan

# Its own outputs as references: the comparison passes; a changed one fails
# with the worst element named, and exit status 1.
cp model/x.npy out_plan/input_X.npy
expect_rc 0 compare_self "$PLUGRT" run model.plan --compare out_plan &&
  expect_grep "PASSED" compare_self.out
"$PYTHON" -c '
import numpy as np, sys
y = np.load(sys.argv[1]); y[2, 1] += 3; np.save(sys.argv[1], y)' out_plan/output_Y.npy
expect_rc 1 compare_bad "$PLUGRT" run model.plan --compare out_plan &&
  expect_grep "Y +FAIL +1 of [0-9]+ elements differ.*worst at \[2, 1\]" compare_bad.out
# An op under another name reaches the plugin through --plugin-op; without
# the mapping the error says what to do.
expect_rc 0 make_mapped "$PYTHON" "$SRC/make_nonzero_model.py" mapped 13 11 FindNonZero
expect_rc 1 unmapped "$PLUGRT" run mapped/model.onnx --input X=model/x.npy &&
  expect_grep "FindNonZero" unmapped.err && expect_grep "\-\-plugin-op" unmapped.err
expect_rc 0 mapped "$PLUGRT" run mapped/model.onnx --input X=model/x.npy --output-dir out_mapped \
  --plugin-op FindNonZero=NonZeroPlugin@1 && verify out_mapped
expect_rc 2 mapped_plan "$PLUGRT" run model.plan --plugin-op FindNonZero=NonZeroPlugin

# Shapes outside the profile are refused with the bounds.
expect_rc 1 outside "$PLUGRT" run model.plan --random-inputs --shapes X:40x4 &&
  expect_grep "X" outside.err

# An ONNX model run from a reference directory alone: the profile of a
# dynamic input comes from DIR/input_<name>.npy, found by the file-safe name
# ('x:0' -> input_x_0.npy) as the binding finds it; a file naming a tensor
# that is not an input (input_T.npy for an intermediate) is noted, not put
# into the profile.
expect_rc 0 make_refdir "$PYTHON" - refdir <<'EOF'
import sys, os
import numpy as np, onnx
from onnx import helper as H, TensorProto as T
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
g = H.make_graph([H.make_node("Relu", ["x:0"], ["T"]), H.make_node("Relu", ["T"], ["Y"])],
                 "g", [H.make_tensor_value_info("x:0", T.FLOAT, ["N", 3])],
                 [H.make_tensor_value_info("Y", T.FLOAT, None)])
m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, d + "/m.onnx")
x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
np.save(d + "/input_x_0.npy", x)
np.save(d + "/input_T.npy", x)
np.save(d + "/output_Y.npy", np.maximum(x, 0))
EOF
expect_rc 0 refdir_run "$PLUGRT" run refdir/m.onnx --compare refdir -n 1 &&
  expect_grep "PASSED" refdir_run.out && expect_grep "ignoring .*input_T.npy" refdir_run.err

# Integers compare exactly: 1000001 against 1000000 is within the default
# rtol (1e-5 * 1e6 = 10) but is a different index, count or id.
expect_rc 0 make_intdir "$PYTHON" - intdir <<'EOF'
import sys, os
import numpy as np, onnx
from onnx import helper as H, TensorProto as T
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
g = H.make_graph([H.make_node("Identity", ["X"], ["Y"])], "g",
                 [H.make_tensor_value_info("X", T.INT64, [2])],
                 [H.make_tensor_value_info("Y", T.INT64, None)])
m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, d + "/m.onnx")
np.save(d + "/input_X.npy", np.array([1000001, 5], dtype=np.int64))
np.save(d + "/output_Y.npy", np.array([1000000, 5], dtype=np.int64))
EOF
expect_rc 1 int_exact "$PLUGRT" run intdir/m.onnx --compare intdir -n 1 &&
  expect_grep "Y +FAIL" int_exact.out

finish

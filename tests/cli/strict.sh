#!/usr/bin/env bash
# The engine's guard for a plugin whose output disagrees with the model, and
# the messages a plugin author reads:
#  - a plugin node (the standard library's example::circ_pad_plugin, pads
#    [1, 1]: [2, 3] -> [2, 5]) whose output the model declares [2, 3]:
#    `build` and `run` fail by default, naming the layer, the plugin with its
#    namespace, both shapes, and what to fix in the plugin, not --shapes;
#    with --no-strict a warning, and the run's outputs are the plugin's
#    shape and values (numpy's wrap padding; the ASan stage runs this too,
#    so an engine that sized memory by the declaration would be caught);
#  - the same model declaring [2, 5] builds by default, without a word;
#  - a NonZeroPlugin node that names one of the plugin's two outputs: a
#    warning with both counts, and a correct run;
#  - an op a letter off a plugin's name: "did you mean" once, and an import
#    error names the model's path once.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"

expect_rc 0 make_models "$PYTHON" - <<'EOF' || finish
import numpy as np
import onnx
from onnx import TensorProto as T, helper as H


def save(name, nodes, inputs, outputs, value_info=()):
    g = H.make_graph(nodes, name, inputs, outputs, value_info=list(value_info))
    m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, name + ".onnx")


pad = H.make_node("circ_pad_plugin", ["X"], ["P"], name="pad",
                  plugin_namespace="example", pads=[1, 1])
relu = H.make_node("Relu", ["P"], ["Y"], name="relu")
x_in = H.make_tensor_value_info("X", T.FLOAT, [2, 3])
for name, dims in (("wrong", [2, 3]), ("right", [2, 5])):
    save(name, [pad, relu], [x_in],
         [H.make_tensor_value_info("P", T.FLOAT, dims),
          H.make_tensor_value_info("Y", T.FLOAT, None)])
np.save("x.npy", np.arange(-3, 3, dtype=np.float32).reshape(2, 3))

# One output named where the plugin makes two (indices, count).
nz = H.make_node("NonZeroPlugin", ["X"], ["I"], name="nonzero", rowOrder=1)
save("fewer", [nz], [H.make_tensor_value_info("X", T.FLOAT, [4, 5])],
     [H.make_tensor_value_info("I", T.INT32, None)])
z = np.zeros((4, 5), np.float32)
z[0, 1], z[2, 3], z[3, 0] = 1, -2, 5
np.save("z.npy", z)

# NonZeroPlugn: a letter off the standard library's NonZeroPlugin.
typo = H.make_node("NonZeroPlugn", ["X"], ["I"], name="typo")
save("typo", [typo], [H.make_tensor_value_info("X", T.FLOAT, [4, 5])],
     [H.make_tensor_value_info("I", T.INT32, None)])
EOF

# Strict by default, for build and run alike.
mismatch() { # mismatch NAME: NAME.err says what, where, and what to fix
  expect_grep "layer 'pad' \(plugin example::circ_pad_plugin\): output 0 \('P'\) is float32 \[2, 5\], but the model declares float32 \[2, 3\]" \
    "$1.err" &&
    expect_grep "PRT_ERR_SHAPE" "$1.err" &&
    expect_grep "fix the plugin" "$1.err" &&
    expect_grep "\-\-no-strict" "$1.err"
  if grep -q -- "--shapes" "$1.err"; then
    fail "$1: the hint is about --shapes, not the plugin"
  fi
}
rm -f wrong.plan
expect_rc 1 build_default "$PLUGRT" build wrong.onnx -o wrong.plan && mismatch build_default
[ -e wrong.plan ] && fail "build_default: a plan was written"
expect_rc 1 run_default "$PLUGRT" run wrong.onnx --input X=x.npy && mismatch run_default
expect_rc 1 run_strict "$PLUGRT" run wrong.onnx --input X=x.npy --strict && mismatch run_strict

# --no-strict: a warning, and the plugin's shape and values.
expect_rc 0 build_lenient "$PLUGRT" build wrong.onnx -o wrong.plan --no-strict &&
  expect_grep "warning: .*layer 'pad' \(plugin example::circ_pad_plugin\): output 0 \('P'\) is float32 \[2, 5\], but the model declares float32 \[2, 3\]" \
    build_lenient.err
expect_rc 0 run_lenient "$PLUGRT" run wrong.onnx --input X=x.npy --no-strict \
  --output-dir out_lenient -n 2 --warmup 1 &&
  expect_grep "warning: .*but the model declares float32 \[2, 3\]" run_lenient.err
expect_rc 0 run_plan "$PLUGRT" run wrong.plan --input X=x.npy --output-dir out_plan -n 2
for d in out_lenient out_plan; do
  expect_rc 0 "verify_$d" "$PYTHON" - "$d" <<'EOF'
import sys
import numpy as np
x = np.load("x.npy")
want = np.pad(x, ((0, 0), (1, 1)), mode="wrap")
p = np.load(sys.argv[1] + "/output_P.npy")
y = np.load(sys.argv[1] + "/output_Y.npy")
assert p.shape == (2, 5) and np.array_equal(p, want), p
assert y.shape == (2, 5) and np.array_equal(y, np.maximum(want, 0)), y
EOF
done

# A declaration that agrees: no error, no warning.
expect_rc 0 build_right "$PLUGRT" build right.onnx -o right.plan
if grep -q "declares" build_right.err; then
  fail "build_right: warned about a declaration that agrees"
fi

# A node naming fewer outputs than its plugin makes: a warning with both
# counts; the run is still right.
expect_rc 0 run_fewer "$PLUGRT" run fewer.onnx --input X=z.npy --output-dir out_fewer -n 1 &&
  expect_grep "warning: .*nonzero.*declares 1 output; plugin NonZeroPlugin makes 2" run_fewer.err &&
  expect_rc 0 verify_fewer "$PYTHON" -c '
import numpy as np
i = np.load("out_fewer/output_I.npy")
assert np.array_equal(i, np.argwhere(np.load("z.npy"))), i'

# "did you mean" once; the model's path once.
expect_rc 1 typo "$PLUGRT" build typo.onnx -o typo.plan &&
  expect_grep "did you mean the plugin ::NonZeroPlugin@1" typo.err
n=$(grep -o "did you mean" typo.err | wc -l)
[ "$n" = 1 ] || fail "typo: 'did you mean' said $n times"
n=$(grep -o "typo\.onnx" typo.err | wc -l)
[ "$n" = 1 ] || fail "typo: the path said $n times"
expect_rc 1 missing "$PLUGRT" build nosuch.onnx -o nosuch.plan
n=$(grep -o "nosuch\.onnx" missing.err | wc -l)
[ "$n" = 1 ] || fail "missing: the path said $n times"

finish

#!/usr/bin/env bash
# DequantizeLinear of constants becomes a float constant at import
# (src/onnx/onnx_qdq.c): the engine of each model of make_dq_models.py has
# no DequantizeLinear layer on a constant, and its outputs equal bit for bit
# those of the same model with the integers as graph inputs (the DQ then a
# layer), and NumPy's (x - zp) * scale in float32; a QDQ Conv becomes one
# QLinearConv within one quantum of the unfused DQ -> Conv -> Q.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_models "$PYTHON" "$SRC/make_dq_models.py" m || finish

# run_model NAME: runs m/NAME/model.onnx on its inputs into out_NAME/ and
# inspects its plan into inspect_NAME.out.
run_model() {
  local name=$1 args=() f n
  for f in m/"$name"/input_*.npy; do
    n=$(basename "$f" .npy)
    args+=(-i "${n#input_}=$f")
  done
  expect_rc 0 "run_$name" "$PLUGRT" run "m/$name/model.onnx" "${args[@]}" -o "out_$name" &&
    expect_rc 0 "build_$name" "$PLUGRT" build "m/$name/model.onnx" -o "$name.plan" &&
    expect_rc 0 "inspect_$name" "$PLUGRT" inspect "$name.plan"
}

# dq_layers NAME: the DequantizeLinear layers of NAME's plan.
dq_layers() {
  grep -c 'plugrt::DequantizeLinear@' "inspect_$1.out"
}

for m in dq_add qdq_conv dq_out; do
  run_model "$m"
  run_model "${m}_in"
done
# dq_add: both DQs folded; qdq_conv: DQ -> Conv -> Q is one QLinearConv,
# the output's DQ left (qdq_conv_in, its weight an input, stays unfused,
# saying why); dq_out: the DQ is also a graph output, so it stays.
[ "$(dq_layers dq_add)" = 0 ] || fail "dq_add: $(dq_layers dq_add) DequantizeLinear layers left"
[ "$(dq_layers dq_add_in)" = 2 ] || fail "dq_add_in: $(dq_layers dq_add_in) DQ layers, not 2"
[ "$(dq_layers qdq_conv)" = 1 ] || fail "qdq_conv: $(dq_layers qdq_conv) DQ layers, not 1"
expect_grep 'plugrt::QLinearConv@1' inspect_qdq_conv.out
[ "$(dq_layers qdq_conv_in)" = 4 ] || fail "qdq_conv_in: $(dq_layers qdq_conv_in) DQ layers, not 4"
[ "$(dq_layers dq_out)" = 1 ] || fail "dq_out: $(dq_layers dq_out) DQ layers, not 1"
if grep -A3 'plugrt::DequantizeLinear@' inspect_qdq_conv.out | grep -Eq 'in: +[wb] '; then
  fail "qdq_conv: a DequantizeLinear layer reads the constant w or b"
fi

cat >check.py <<'PY'
import sys

import numpy as np

bad = 0
for m, outs in (("dq_add", "yz"), ("dq_out", ("y", "wf"))):
    for o in outs:
        a = np.load("out_%s/output_%s.npy" % (m, o))
        b = np.load("out_%s_in/output_%s.npy" % (m, o))
        if a.shape != b.shape or not np.array_equal(a.view(np.uint32), b.view(np.uint32)):
            print("%s: output %s differs from the unfolded model's" % (m, o))
            bad += 1
# The integer QLinearConv against the float Conv between DQ and Q: ONNX
# Runtime's fused QLinearConv differs from its unfused model by at most one
# quantum (y_scale 0.05) where the float sum lands near a rounding tie.
a, b = np.load("out_qdq_conv/output_y.npy"), np.load("out_qdq_conv_in/output_y.npy")
if np.abs(a - b).max() > 0.05 * 1.001 or np.mean(a != b) > 0.05:
    print("qdq_conv: QLinearConv differs from DQ -> Conv -> Q by %g" % np.abs(a - b).max())
    bad += 1
# NumPy's DequantizeLinear, one float32 product per element.
d = "m/dq_add_in/"
x, w, b = (np.load(d + "input_%s.npy" % k) for k in "xwb")
import onnx
from onnx import numpy_helper

inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(d + "model.onnx").graph.initializer}
wf = (w.astype(np.int32) - inits["wz"].reshape(1, 4, 1, 1)).astype(np.float32) * inits["ws"].reshape(1, 4, 1, 1)
bf = b.astype(np.float32) * inits["bs"].reshape(4, 1, 1)
for o, ref in (("y", x + wf), ("z", x + bf)):
    got = np.load("out_dq_add/output_%s.npy" % o)
    if not np.array_equal(got.view(np.uint32), ref.astype(np.float32).view(np.uint32)):
        print("dq_add: output %s differs from NumPy's by up to %g" % (o, np.abs(got - ref).max()))
        bad += 1
sys.exit(1 if bad else 0)
PY
expect_rc 0 compare "$PYTHON" check.py
finish

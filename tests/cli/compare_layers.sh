#!/usr/bin/env bash
# `plugrt run --compare-layers`: a model conv -> relu -> scale -> squash
# whose relu is made wrong on purpose, through --plugin-op and the Relus of
# compare_layers_plugin.c, must be named as the first layer that differs,
# with its plugin key, its input's shape and the worst element (whose
# values are checked against NumPy); the right plugin, and real models
# against ONNX Runtime, must agree everywhere. Also the errors.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
[ -n "${COMPARE_PLUGIN:-}" ] || skip "COMPARE_PLUGIN (the test plugin library) is not set"
export PLUGRT_PYTHON=$PYTHON
expect_rc 0 make_model "$PYTHON" "$SRC/make_compare_model.py" m || finish
expect_rc 0 make_like "$PYTHON" "$SRC/make_compare_model.py" like ReluLike || finish

cmp_layers() { # cmp_layers NAME WANT_RC RELU_PLUGIN [ARGS...]: m/model.onnx, relu as that plugin
  local name=$1 want=$2 plugin=$3
  shift 3
  expect_rc "$want" "$name" "$PLUGRT" run m/model.onnx --compare m --plugins "$COMPARE_PLUGIN" \
    --compare-layers --plugin-op "Relu=$plugin/test" "$@"
}

# The right plugin agrees with plugrt's own Relu, which the reference runs.
cmp_layers good 0 GoodRelu &&
  expect_grep "^PASSED: all [4-9] compared layers agree" good.out &&
  expect_grep "Relu runs as plugrt's own op there" good.out &&
  expect_grep "\] ok +relu \(plugin test::GoodRelu@1\)" good.out

# checks_worst FILE WANT_GOT_MINUS_EXPECTED: the report's worst element is
# relu's last one, expected as NumPy computes it, got off by the amount
# (nan: unwritten).
checks_worst() {
  expect_rc 0 "worst_$1" "$PYTHON" - "$1" "$2" m/expect.txt <<'EOF'
import math, re, sys
text = open(sys.argv[1]).read()
off = float(sys.argv[2])
r_last = float(open(sys.argv[3]).read().split()[1])
m = re.search(r"first layer that differs: .*\n(?:    input.*\n)+    output 0 r: 1 of 144 "
              r"elements differ.*\n +worst at \[0, 3, 5, 5\]: got (\S+), expected (\S+),", text)
assert m, "no worst element of r at [0, 3, 5, 5] in the report"
got, expected = float(m.group(1)), float(m.group(2))
assert abs(expected - r_last) <= 1e-6 * max(1.0, abs(r_last)), (expected, r_last)
if math.isnan(off):
    assert math.isnan(got), got
else:
    assert abs(got - expected - off) <= 1e-5, (got, expected, off)
EOF
}

# One element off by one: relu is named, with its key, its input's shape,
# the worst element and its values; conv before it agrees.
cmp_layers off 1 OffByOneRelu &&
  expect_grep "^FAILED: layer \[1\] relu \(plugin test::OffByOneRelu@1\) is the first whose outputs differ" off.out &&
  expect_grep "\[0\] ok +conv \(Conv\)" off.out &&
  expect_grep "^first layer that differs: \[1\] relu \(plugin test::OffByOneRelu@1\)" off.out &&
  expect_grep "^    input 0: c float32 1x4x6x6 \(agrees with the reference\)" off.out &&
  expect_grep "so this layer computes differently" off.out &&
  checks_worst off.out 1
# The same with ONNX Runtime as the reference: it runs the model's Relu.
cmp_layers off_ort 1 OffByOneRelu --reference onnxruntime &&
  expect_grep "^reference: onnxruntime [0-9]" off_ort.out &&
  expect_grep "^FAILED: layer \[1\] relu \(plugin test::OffByOneRelu@1\)" off_ort.out &&
  checks_worst off_ort.out 1
# Tolerances are the user's to set: a huge rtol accepts the error.
cmp_layers off_loose 0 OffByOneRelu --rtol 10 && expect_grep "^PASSED" off_loose.out

# An element left unwritten is NaN (the outputs are poisoned first).
cmp_layers lazy 1 LazyRelu &&
  expect_grep "^FAILED: layer \[1\] relu \(plugin test::LazyRelu@1\)" lazy.out &&
  checks_worst lazy.out nan

# Exposed, an in-place layer still runs in place (the runtime copies its
# input into its output's buffer first), so a plugin that reads its input
# after writing its output in place is caught: its last element gains
# relu(c0) - c0 = -c0, c0 being the conv's first element (negative).
cmp_layers inplace_good 0 InPlaceGoodRelu && expect_grep "^PASSED" inplace_good.out
neg_c0=$("$PYTHON" -c 'import sys; print(-float(open(sys.argv[1]).read().split()[0]))' m/expect.txt)
cmp_layers inplace 1 InPlaceRelu &&
  expect_grep "^FAILED: layer \[1\] relu \(plugin test::InPlaceRelu@1\)" inplace.out &&
  checks_worst inplace.out "$neg_c0"

# An op plugrt cannot import keeps its mapping in the reference, which then
# runs the same plugin; an unwritten element still shows.
expect_rc 1 like_lazy "$PLUGRT" run like/model.onnx --compare like --plugins "$COMPARE_PLUGIN" \
  --compare-layers --plugin-op ReluLike=LazyRelu/test &&
  expect_grep "ReluLike runs as the plugin of --plugin-op there too" like_lazy.out &&
  expect_grep "^FAILED: layer \[1\] relu \(plugin test::LazyRelu@1\)" like_lazy.out
expect_rc 0 like_good "$PLUGRT" run like/model.onnx --compare like --plugins "$COMPARE_PLUGIN" \
  --compare-layers --plugin-op ReluLike=GoodRelu/test &&
  expect_grep "^PASSED" like_good.out

# Built-in ops only, against ONNX Runtime: every layer agrees.
expect_rc 0 ort_builtin "$PLUGRT" run m/model.onnx --compare m --compare-layers \
  --reference onnxruntime && expect_grep "^PASSED: all [4-9] compared layers agree" ort_builtin.out
if [ -f "$MODELS/mobilenet_v3_small.onnx" ]; then
  expect_rc 0 ort_mobilenet "$PLUGRT" run "$MODELS/mobilenet_v3_small.onnx" \
    --compare "$MODELS/mobilenet_v3_small.data" --compare-layers --reference onnxruntime &&
    expect_grep "^PASSED: all 1[0-9][0-9] compared layers agree" ort_mobilenet.out
fi

# Errors: clear messages and exit status, never a crash.
expect_rc 1 no_python env PLUGRT_PYTHON=/nonexistent/python3 "$PLUGRT" run m/model.onnx \
  --compare m --compare-layers --reference onnxruntime &&
  expect_grep "needs python3 with onnxruntime: pip install onnxruntime" no_python.err
printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$PYTHON" >bare_python
chmod +x bare_python # -S: no site packages, so no onnxruntime
expect_rc 1 no_ort env PLUGRT_PYTHON=./bare_python "$PLUGRT" run m/model.onnx --compare m \
  --compare-layers --reference onnxruntime &&
  expect_grep "cannot import onnxruntime" no_ort.err &&
  expect_grep "pip install onnxruntime" no_ort.err
expect_rc 1 ort_plugin_node "$PLUGRT" run like/model.onnx --compare like --plugins "$COMPARE_PLUGIN" \
  --compare-layers --plugin-op ReluLike=GoodRelu/test --reference onnxruntime &&
  expect_grep "onnxruntime cannot run" ort_plugin_node.err &&
  expect_grep "reference cpu" ort_plugin_node.err
echo "not a model" >bad.onnx
expect_rc 1 not_onnx "$PLUGRT" run bad.onnx --random-inputs --compare-layers &&
  expect_grep "is it an ONNX model" not_onnx.err
expect_rc 0 plan "$PLUGRT" build m/model.onnx -o m.plan
expect_rc 2 on_plan "$PLUGRT" run m.plan --compare m --compare-layers &&
  expect_grep "needs the ONNX model" on_plan.err
expect_rc 2 ref_alone "$PLUGRT" run m/model.onnx --compare m --reference cpu
expect_rc 2 ref_bad "$PLUGRT" run m/model.onnx --compare m --compare-layers --reference gpu &&
  expect_grep "cpu or onnxruntime" ref_bad.err
expect_rc 2 threads "$PLUGRT" run m/model.onnx --compare m --compare-layers --threads 2
finish

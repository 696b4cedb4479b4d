#!/usr/bin/env bash
# Names from a file are shown, never obeyed: a plan whose tensor and layer
# names hold terminal escape sequences, C1 controls and bytes that are not
# UTF-8 (tests/cli/make_plan.c) goes through inspect, inspect --json and run
# (with the errors run composes about inputs), and an ONNX model with such
# names through build and run. No output may hold a raw control character
# or invalid UTF-8; the text shows each byte escaped (\x1b), the JSON
# decodes to the names.
. "$(dirname "$0")/common.sh"

expect_rc 0 make_plan "$MAKE_PLAN" hostile.plan 6 hostile || finish

expect_rc 0 inspect "$PLUGRT" inspect hostile.plan
expect_rc 0 inspect_json "$PLUGRT" inspect hostile.plan --json
expect_rc 0 run "$PLUGRT" run hostile.plan --random-inputs -o out -n 1 --warmup 0
expect_rc 1 run_no_data "$PLUGRT" run hostile.plan &&
  expect_grep 'no data for input in\\x1b\[31m\\xff' run_no_data.err
expect_rc 1 run_unknown_input "$PLUGRT" run hostile.plan -i nosuch=x.npy --random-inputs
expect_rc 2 run_unknown_shape "$PLUGRT" run hostile.plan --random-inputs --shapes nosuch:1x6 &&
  expect_grep 'inputs: in\\x1b\[31m\\xff' run_unknown_shape.err

# Each name once, escaped, in the text.
expect_grep '^  input  in\\x1b\[31m\\xff +float32 +1x6$' inspect.out "input, escaped"
expect_grep 'relu\\x1b\]0;pwned\\x07 ' inspect.out "OSC in a layer name"
expect_grep 'relu\\\\x1b\\xc0\\xaf(\\x1b)+\.\.\. ' inspect.out "backslash, overlong, cut"
expect_grep 'mid\\xc2\\x9b2J' inspect.out "C1 CSI"
expect_grep 'out\\x1b\[2J\\xfe\\x0d\\x7f' inspect.out "output, escaped"
expect_grep '^  in\\x1b\[31m\\xff +float32 +1x6 +random$' run.out "run's inputs"
expect_grep '^  out\\x1b\[2J\\xfe\\x0d\\x7f +float32 +1x6' run.out "run's outputs"

if have_onnx; then
  expect_rc 0 make_onnx "$PYTHON" - hostile.onnx <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
x, y = "in\x1b[31m\x07", "out\u009b2J\x7f"
g = helper.make_graph([helper.make_node("Relu", [x], [y], name="relu\x1b]0;t\x07")],
                      "hostile", [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info(y, TensorProto.FLOAT, [2, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
PY
  expect_rc 0 build "$PLUGRT" build hostile.onnx -o hostile_onnx.plan &&
    expect_grep 'input  in\\x1b\[31m\\x07 ' build.out "build's summary"
  expect_rc 0 run_onnx "$PLUGRT" run hostile.onnx --random-inputs -n 1 --warmup 0
  expect_rc 2 run_onnx_shape "$PLUGRT" run hostile.onnx --random-inputs --shapes nosuch:2x3
fi

# No raw control character (but newline) nor invalid UTF-8 anywhere.
expect_rc 0 clean "$PYTHON" - ./*.out ./*.err <<'PY'
import sys
bad = []
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad.append(f"{path}: not UTF-8: {e}")
        continue
    for i, ch in enumerate(text):
        cp = ord(ch)
        if (cp < 0x20 and ch != "\n") or 0x7f <= cp <= 0x9f:
            bad.append(f"{path}: raw U+{cp:04X} at {i}: {text[max(0, i - 20):i + 10]!r}")
            break
assert not bad, "\n".join(bad)
PY

# JSON is valid and says the names exactly; a byte that is not UTF-8 reads
# as its Latin-1 code point.
expect_rc 0 json "$PYTHON" - inspect_json.out <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
io = [t["name"] for t in d["io"]]
assert io == ["in\x1b[31m\u00ff", "out\x1b[2J\u00fe\r\x7f"], io
layers = [l["name"] for l in d["layers"]]
assert layers[0] == "relu\x1b]0;pwned\x07", layers
assert layers[1] == "relu\\x1b\u00c0\u00af" + "\x1b" * 200, layers
tensors = [t["name"] for t in d["tensors"]]
assert "mid\u009b2J" in tensors, tensors
PY

finish

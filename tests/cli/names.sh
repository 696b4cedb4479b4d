#!/usr/bin/env bash
# Names from a file are shown, never obeyed: a plan whose tensor and layer
# names hold terminal escape sequences, C1 controls and bytes that are not
# UTF-8 (tests/cli/make_plan.c) goes through inspect, inspect --json and run
# (with the errors run composes about inputs), and ONNX models with such
# names (and damaged copies of one) through build and run, their errors
# from the importer and the builder included. No output may hold a raw control character
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

  # Names no ONNX writer makes: bytes that are not UTF-8, overlong forms,
  # C1 controls in UTF-8 (U+009B, U+0085), written into the protobuf
  # directly (onnx's Python API only takes valid text). Each reaches an
  # error message of the library: an op nothing serves, a shape input of
  # the wrong dtype, an output no node makes.
  expect_rc 0 make_bytes "$PYTHON" - <<'PY'
import onnx
from onnx import TensorProto, helper
# Placeholders of one length, replaced by the hostile bytes after
# serializing (so the protobuf lengths stay right).
X, Y, N, OP, S = "XXXXXXXXXXXA", "YYYYYYYYYYYB", "NNNNNNNNNNNC", "Reluuuuuuuuu", "SSSSSSSSSSSD"
raw = {X: b"in\xff\x1b[31m\xc2\x9b", Y: b"ou\xfe\x07\xc0\xaf\x7f\r\n", N: b"no\x1b]0;t\x07\xe0\x80",
       OP: b"Rel\xff\x1b[2J", S: b"sh\xff\x1b[1m\xc2\x85"}
def save(path, nodes, inputs, outputs):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    b = m.SerializeToString()
    for k, v in raw.items():
        b = b.replace(k.encode(), v.ljust(len(k), b"z"))
    open(path, "wb").write(b)
f = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
save("bytes_relu.onnx", [helper.make_node("Relu", [X], [Y], name=N)], [f(X, [2, 3])], [f(Y, [2, 3])])
save("bytes_op.onnx", [helper.make_node(OP, [X], [Y], name=N)], [f(X, [2, 3])], [f(Y, [2, 3])])
save("bytes_shape.onnx", [helper.make_node("Reshape", [X, S], [Y], name=N)],
     [f(X, [2, 3]), f(S, [2])], [f(Y, [3, 2])])
save("bytes_dangling.onnx", [helper.make_node("Relu", [X], [Y], name=N)], [f(X, [2, 3])], [f(S, [2, 3])])
PY
  expect_rc 0 bytes_build "$PLUGRT" build bytes_relu.onnx -o bytes.plan &&
    expect_grep 'input  in\\xff\\x1b\[31m\\xc2\\x9b' bytes_build.out "build's summary, bytes"
  expect_rc 0 bytes_run "$PLUGRT" run bytes_relu.onnx --random-inputs -n 1 --warmup 0 -v
  expect_rc 0 bytes_layers "$PLUGRT" run bytes_relu.onnx --random-inputs --compare-layers &&
    expect_grep 'no\\x1b\]0;t\\x07\\xe0\\x80' bytes_layers.out "compare-layers' layer name"
  if "$PYTHON" -c 'import onnxruntime' 2>/dev/null; then
    expect_rc 1 bytes_layers_ort env PLUGRT_PYTHON="$PYTHON" "$PLUGRT" run bytes_relu.onnx \
      --random-inputs --compare-layers --reference onnxruntime &&
      expect_grep "tensor name b'in\\\\xff.*is not UTF-8" bytes_layers_ort.err
  fi
  expect_rc 1 bytes_op "$PLUGRT" build bytes_op.onnx -o x.plan &&
    expect_grep "op 'Rel\\\\xff\\\\x1b\\[2J" bytes_op.err "op type, escaped"
  expect_rc 1 bytes_run_op "$PLUGRT" run bytes_op.onnx --random-inputs
  expect_rc 1 bytes_shape "$PLUGRT" run bytes_shape.onnx --random-inputs &&
    expect_grep "sh\\\\xff\\\\x1b\\[1m\\\\xc2\\\\x85" bytes_shape.err "shape input, escaped"
  expect_rc 1 bytes_dangling "$PLUGRT" build bytes_dangling.onnx -o x.plan
  # Damaged files: bytes of a model with hostile names flipped at random
  # (seeded), each a clean error or a clean build.
  expect_rc 0 mutate "$PYTHON" - <<'PY'
import random
b = open("bytes_shape.onnx", "rb").read()
r = random.Random(7)
for i in range(60):
    m = bytearray(b)
    for _ in range(r.randint(1, 4)):
        m[r.randrange(len(m))] = r.randrange(256)
    open(f"mut_{i}.onnx", "wb").write(bytes(m))
PY
  for i in $(seq 0 59); do
    run_cmd "mut_$i" "$PLUGRT" build "mut_$i.onnx" -o mut.plan
    [ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "mut_$i.onnx: exit status $rc"
  done
fi

# .npy files whose headers hold such bytes (a dtype, a key), and a file of
# the --compare folder whose name does: the errors quote them escaped.
expect_rc 0 make_npy "$PYTHON" - <<'PY'
import os, struct
def npy(path, header):
    header += b" " * ((64 - (10 + len(header) + 1) % 64) % 64) + b"\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header +
                           b"\0" * 24)
npy("bad_descr.npy", b"{'descr': '<\xff\x1b[31m\xc2\x9b', 'fortran_order': False, 'shape': (1, 6), }")
npy("bad_key.npy", b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 6), 'k\xfe\x1b]0;t\x07': 1}")
os.makedirs("hostile_dir", exist_ok=True)
npy(b"hostile_dir/input_in\x1b[31m\xff.npy", b"{'descr': '<f4', 'fortran_order': \x1b[2J, 'shape': (1, 6), }")
PY
expect_rc 1 npy_descr "$PLUGRT" run hostile.plan -i "$(printf 'in\033[31m\377')=bad_descr.npy" &&
  expect_grep "unsupported dtype '<\\\\xff\\\\x1b\\[31m\\\\xc2\\\\x9b'" npy_descr.err
expect_rc 1 npy_key "$PLUGRT" run hostile.plan -i "$(printf 'in\033[31m\377')=bad_key.npy" &&
  expect_grep "key 'k\\\\xfe\\\\x1b\\]0;t\\\\x07'" npy_key.err
expect_rc 1 npy_dir "$PLUGRT" run hostile.plan --compare hostile_dir &&
  expect_grep 'hostile_dir/input_in\\x1b\[31m\\xff\.npy' npy_dir.err

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

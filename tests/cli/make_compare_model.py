"""Writes the model of compare_layers.sh and what its layers must compute.

    make_compare_model.py OUT_DIR [RELU_OP]

OUT_DIR/model.onnx: x (float32 1x3x6x6) -> Conv "conv" (4 filters 3x3,
pads 1) -> c -> RELU_OP "relu" -> r -> Mul "scale" (per channel) -> m ->
Tanh "squash" -> y. RELU_OP is Relu by default; another name (ReluLike)
makes an op plugrt has no importer for, which only --plugin-op can place.
OUT_DIR/input_x.npy: the input.
OUT_DIR/expect.txt: "c0 r_last": the conv's first element (negative, so a
plugin that reads its input after writing it in place sees a change) and
relu's last element, as NumPy computes them.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(x, w, b):
    n, ci, h, wd = x.shape
    co = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, co, h, wd), dtype=np.float64)
    for i in range(3):
        for j in range(3):
            patch = xp[:, :, i:i + h, j:j + wd]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return (y + b.reshape(1, co, 1, 1)).astype(np.float32)


def main():
    out = sys.argv[1]
    relu_op = sys.argv[2] if len(sys.argv) > 2 else "Relu"
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, size=(1, 3, 6, 6)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, size=(4, 3, 3, 3)).astype(np.float32)
    b = np.array([-3.0, 0.5, -0.25, 4.0], dtype=np.float32)
    s = np.array([0.5, 2.0, -1.0, 0.25], dtype=np.float32).reshape(1, 4, 1, 1)
    c = conv(x.astype(np.float64), w.astype(np.float64), b)
    r = np.maximum(c, 0)
    assert c.flat[0] < 0 and r.flat[-1] > 0, (c.flat[0], r.flat[-1])
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node(relu_op, ["c"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "S"], ["m"], name="scale"),
        helper.make_node("Tanh", ["m"], ["y"], name="squash"),
    ]
    graph = helper.make_graph(
        nodes, "compare_layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
         numpy_helper.from_array(s, "S")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "input_x.npy"), x)
    with open(os.path.join(out, "expect.txt"), "w") as f:
        f.write("%.9g %.9g\n" % (c.flat[0], r.flat[-1]))


if __name__ == "__main__":
    main()

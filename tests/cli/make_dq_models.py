"""Writes the models of dq_fold.sh, each twice: DIR/NAME/ with the quantized
weights as initializers (the importer folds their DequantizeLinear into a
float constant) and DIR/NAME_in/ with the same integers as graph inputs
(input_<name>.npy), so that the DequantizeLinear runs as a layer.

    make_dq_models.py OUT_DIR

  dq_add    y = x + DQ(w), w int8 2x4x3x3 per channel along axis 1 with
            zero points; z = x + DQ(b), b int32 4x3x3 per channel along
            axis 0 with the zero zero points ORT writes for a bias: the
            folded constants enter an Add, whose arithmetic does not
            depend on them being constants, so y and z agree bit for bit
  qdq_conv  x -> Q -> DQ -> Conv(DQ(w int8 per channel), DQ(bias int32))
            -> Q -> DQ -> y, as ONNX Runtime's quantize_static writes a
            QDQ Conv
  dq_out    DQ(w) is also a graph output: it stays a layer
Each DIR/NAME/ holds input_x.npy (and the _in variant the integers).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(11)
F = TensorProto.FLOAT


def save(out, name, graph, inputs, consts, as_inputs):
    """Writes NAME (consts as initializers) and NAME_in (as inputs)."""
    for variant, make_inputs in ((name, False), (name + "_in", True)):
        d = os.path.join(out, variant)
        os.makedirs(d, exist_ok=True)
        g = onnx.GraphProto()
        g.CopyFrom(graph)
        feeds = dict(inputs)
        for k, v in consts.items():
            if make_inputs and k in as_inputs:
                g.input.append(helper.make_tensor_value_info(
                    k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape))
                feeds[k] = v
            else:
                g.initializer.append(numpy_helper.from_array(v, k))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for k, v in feeds.items():
            np.save(os.path.join(d, "input_%s.npy" % k), v)


def dq_add(out):
    x = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
    consts = {
        "w": RNG.integers(-128, 128, (2, 4, 3, 3)).astype(np.int8),
        "ws": (RNG.random(4) * 0.1 + 0.01).astype(np.float32),
        "wz": RNG.integers(-5, 5, 4).astype(np.int8),
        "b": RNG.integers(-100000, 100000, (4, 3, 3)).astype(np.int32),
        "bs": (RNG.random(4) * 1e-4).astype(np.float32),
        "bz": np.zeros(4, np.int32),
    }
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
        helper.make_node("Add", ["x", "wf"], ["y"]),
        helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0),
        helper.make_node("Add", ["x", "bf"], ["z"]),
    ]
    g = helper.make_graph(nodes, "dq_add",
                          [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, x.shape),
                           helper.make_tensor_value_info("z", F, x.shape)])
    save(out, "dq_add", g, {"x": x}, consts, ("w", "b"))


def qdq_conv(out):
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    consts = {
        "xs": np.float32(0.02), "xz": np.uint8(128),
        "w": RNG.integers(-127, 128, (5, 3, 3, 3)).astype(np.int8),
        "ws": (RNG.random(5) * 0.02 + 0.005).astype(np.float32),
        "wz": np.zeros(5, np.int8),
        "ys": np.float32(0.05), "yz": np.uint8(120),
    }
    consts["b"] = RNG.integers(-2000, 2000, 5).astype(np.int32)
    consts["bs"] = (consts["xs"] * consts["ws"]).astype(np.float32)
    consts["bz"] = np.zeros(5, np.int32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"]),
        helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qdq_conv",
                          [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, (1, 5, 8, 8))])
    save(out, "qdq_conv", g, {"x": x}, consts, ("w", "b"))


def dq_out(out):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    consts = {"w": RNG.integers(0, 256, (3, 4)).astype(np.uint8),
              "ws": np.float32(0.1), "wz": np.uint8(7)}
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"]),
        helper.make_node("Add", ["x", "wf"], ["y"]),
    ]
    g = helper.make_graph(nodes, "dq_out",
                          [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, x.shape),
                           helper.make_tensor_value_info("wf", F, x.shape)])
    save(out, "dq_out", g, {"x": x}, consts, ("w",))


def main():
    out = sys.argv[1]
    dq_add(out)
    qdq_conv(out)
    dq_out(out)


if __name__ == "__main__":
    main()

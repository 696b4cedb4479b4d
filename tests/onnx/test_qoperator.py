#!/usr/bin/env python3
"""A QOperator model and a QDQ model through `plugrt run`, against ONNX Runtime.

The QOperator model is ONNX Runtime's format for quantized elementwise ops:
QuantizeLinear, then QLinearAdd and QLinearMul of domain com.microsoft
(broadcasting a per-tensor int8/uint8 operand), then DequantizeLinear. The QDQ
model quantizes per axis and dequantizes back. Both are built with
onnx.helper, run by ONNX Runtime for the reference outputs (written as
TensorProtos beside the inputs, as ONNX's test data), and by
`plugrt run -o`, the outputs compared here.

Tolerances: the QDQ model's outputs and QLinearMul's must be ORT's exactly.
QLinearAdd's integers may differ by one: ORT's x86 kernel computes it in
fixed point and rounds ties upward, plugrt by the op's float definition
with ties to even (src/ops/qlinear.c), so sums that land on a tie (often,
with these scale ratios of 1/2 and 3/4) differ by one quantum, as does the
dequantized sum (a quantum is 0.04 there).

    test_qoperator.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import sys
import tempfile

from ort_compare import np, helper, TensorProto, run_vs_ort

OUT_SCALE = 0.05  # QLinearMul's output scale


def qoperator_model(dt):
    """x, y float [2, 3, 4] and [3, 1] -> quantized -> QLinearAdd and
    QLinearMul of the two (each on its own, so that an element one off in
    one does not feed the other) -> the integers, and the sum dequantized."""
    t = TensorProto.INT8 if dt == np.int8 else TensorProto.UINT8
    z = 0 if dt == np.int8 else 128
    inits = [
        helper.make_tensor("xs", TensorProto.FLOAT, [], [0.02]),
        helper.make_tensor("xz", t, [], [z + 3]),
        helper.make_tensor("ys", TensorProto.FLOAT, [], [0.03]),
        helper.make_tensor("yz", t, [], [z - 5]),
        helper.make_tensor("as", TensorProto.FLOAT, [], [0.04]),
        helper.make_tensor("az", t, [], [z + 1]),
        helper.make_tensor("ms", TensorProto.FLOAT, [], [OUT_SCALE]),
        helper.make_tensor("mz", t, [], [z - 2]),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
        helper.make_node("QLinearAdd", ["xq", "xs", "xz", "yq", "ys", "yz", "as", "az"],
                         ["aq"], domain="com.microsoft"),
        helper.make_node("QLinearMul", ["xq", "xs", "xz", "yq", "ys", "yz", "ms", "mz"],
                         ["mq"], domain="com.microsoft"),
        helper.make_node("DequantizeLinear", ["aq", "as", "az"], ["out"]),
    ]
    g = helper.make_graph(
        nodes, "qoperator",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("aq", t, [2, 3, 4]),
         helper.make_tensor_value_info("mq", t, [2, 3, 4])],
        inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


def qdq_model():
    """x [2, 3, 5] quantized per axis 1 to int8, dequantized, and
    DynamicQuantizeLinear of x."""
    inits = [
        helper.make_tensor("s", TensorProto.FLOAT, [3], [0.01, 0.02, 0.005]),
        helper.make_tensor("z", TensorProto.INT8, [3], [0, -3, 7]),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], axis=1),
        helper.make_node("DynamicQuantizeLinear", ["x"], ["dq", "dqs", "dqz"]),
    ]
    g = helper.make_graph(
        nodes, "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5])],
        [helper.make_tensor_value_info("q", TensorProto.INT8, [2, 3, 5]),
         helper.make_tensor_value_info("d", TensorProto.FLOAT, [2, 3, 5]),
         helper.make_tensor_value_info("dq", TensorProto.UINT8, [2, 3, 5]),
         helper.make_tensor_value_info("dqs", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("dqz", TensorProto.UINT8, [])],
        inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(30)
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for dt in (np.int8, np.uint8):
            feeds = {"x": rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32),
                     "y": rng.uniform(-3, 3, (3, 1)).astype(np.float32)}
            # Half the products exact ties of the input scale.
            feeds["x"].flat[::3] = (rng.integers(-60, 60, 8) + 0.5) * 0.02
            fails += run_vs_ort(a.plugrt, work, f"qoperator_{dt.__name__}",
                              qoperator_model(dt), feeds, {"aq": 1.0, "out": 0.0401})
        x = rng.uniform(-1.5, 1.5, (2, 3, 5)).astype(np.float32)
        x.flat[::4] = (rng.integers(-100, 100, 8) + 0.5) * 0.01
        fails += run_vs_ort(a.plugrt, work, "qdq_per_axis", qdq_model(), {"x": x}, {})
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

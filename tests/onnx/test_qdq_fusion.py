#!/usr/bin/env python3
"""QDQ fusions and 8-bit float quantization through `plugrt run`, against
ONNX Runtime (issue 30).

- DQ -> Conv -> Relu | Clip -> Q, as a QDQ model writes a Conv with its
  activation: where the activation is idle before the Q (a Relu before a
  Q whose zero point is the least integer; a Clip whose bounds quantize
  past the integers' range) plugrt makes one QLinearConv, as ONNX Runtime
  does (ReluQuantFusion / ClipQuantFusion, then its QDQ Conv fusion): the
  integers must be ORT's (default optimizations) exactly, and plugrt's
  log must not say the pattern was left unfused. Where it is not idle
  (zero point inside the range) both leave it dequantized, and the
  integers may differ by one where a float sum lands on a rounding tie.
- DQ -> MatMul -> Q with a constant 8-bit weight per tensor and per column:
  one QLinearMatMul, ORT's integers exactly.
- DQ -> depthwise Conv -> Q (group = channels, stride 1 and 2): one
  QLinearConv (its depthwise kernel), ORT's integers exactly.
- DQ -> grouped Conv -> Q (2 to 32 groups, W per channel and per tensor,
  strides and dilations): one QLinearConv (the channel-last tiles group
  by group), ORT's integers exactly.
- DQ, DQ -> Add -> (idle Relu | Clip) -> Q: one QLinearAdd, the bytes of
  the float nodes exactly (a float32 reference here) and within 1 of
  ORT's fixed-point QLinearAdd.
- DQ -> MaxPool -> Q on one scale and zero point: MaxPool of the 8-bit
  tensor itself, no DQ left, ORT's integers exactly.
- 8-bit floats (opset 19): QuantizeLinear to FLOAT8E4M3FN and FLOAT8E5M2
  per tensor and per axis with saturate 1 and 0, DequantizeLinear back,
  Cast to and from them, and a DequantizeLinear of all 256 codes of each
  (an initializer): the float outputs must be ORT's exactly (NaN equal).

On an x86 CPU without VNNI, ORT's own 8-bit products are not exact (its
AVX2 kernels add product pairs in saturating 16-bit lanes;
ort_compare.ort_int8_exact): there the fused models are compared with ORT
unoptimized, integers within 1.

    test_qdq_fusion.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import sys
import tempfile

from ort_compare import np, helper, numpy_helper, TensorProto, run_vs_ort

FLOAT8E4M3FN, FLOAT8E5M2 = 17, 19  # TensorProto codes (onnx 1.12 lacks the names)


def conv_act_model(rng, act, qtype, out_zp, out_scale):
    """x [1, 4, 6, 6] float -> Q/DQ (uint8) -> Conv 3x3 (int8 weight per
    output channel, int32 bias) -> act -> Q (qtype, out_zp) as the output."""
    c_in, c_out = 4, 5
    xs, xz = 0.02, 128
    w = rng.integers(-100, 100, (c_out, c_in, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, c_out) * 0.004).astype(np.float32)
    bs = (np.float32(xs) * ws).astype(np.float32)
    b = rng.integers(-3000, 3000, c_out).astype(np.int32)
    inits = [
        helper.make_tensor("xs", TensorProto.FLOAT, [], [xs]),
        helper.make_tensor("xz", TensorProto.UINT8, [], [xz]),
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(ws, "ws"),
        numpy_helper.from_array(np.zeros(c_out, np.int8), "wz"),
        numpy_helper.from_array(b, "b"),
        numpy_helper.from_array(bs, "bs"),
        helper.make_tensor("ys", TensorProto.FLOAT, [], [out_scale]),
        helper.make_tensor("yz", qtype, [], [out_zp]),
    ]
    if act == "Clip":
        inits += [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
                  helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
    ]
    if act == "Relu":
        nodes.append(helper.make_node("Relu", ["c"], ["a"]))
    else:
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["a"]))
    nodes.append(helper.make_node("QuantizeLinear", ["a", "ys", "yz"], ["y"]))
    g = helper.make_graph(
        nodes, "conv_act_q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, 6, 6])],
        [helper.make_tensor_value_info("y", qtype, [1, c_out, 6, 6])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def shared_dq_model(rng, add):
    """As ResNet's blocks: one DQ of x read by two QDQ Convs (1x1 and 3x3,
    each to its own Q, both outputs) and, with `add`, by an Add too (its
    float sum a third output). Both Convs fuse: the DQ stays for the Add,
    or goes with nothing else reading it."""
    c_in, c_out = 3, 4
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.02]),
             helper.make_tensor("xz", TensorProto.UINT8, [], [128]),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [0.04]),
             helper.make_tensor("yz", TensorProto.UINT8, [], [100])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"])]
    outs = []
    for k, ks in enumerate((1, 3)):
        w = rng.integers(-100, 100, (c_out, c_in, ks, ks)).astype(np.int8)
        ws = (rng.uniform(0.5, 1.5, c_out) * 0.005).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(ws, f"ws{k}"),
                  numpy_helper.from_array(np.zeros(c_out, np.int8), f"wz{k}")]
        nodes += [
            helper.make_node("DequantizeLinear", [f"w{k}", f"ws{k}", f"wz{k}"], [f"wd{k}"],
                             axis=0),
            helper.make_node("Conv", ["xd", f"wd{k}"], [f"c{k}"], pads=[ks // 2] * 4),
            helper.make_node("QuantizeLinear", [f"c{k}", "ys", "yz"], [f"y{k}"]),
        ]
        outs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.UINT8,
                                                  [1, c_out, 5, 5]))
    if add:
        nodes.append(helper.make_node("Add", ["xd", "xd"], ["sum"]))
        outs.append(helper.make_tensor_value_info("sum", TensorProto.FLOAT, [1, c_in, 5, 5]))
    g = helper.make_graph(
        nodes, "shared_dq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, 5, 5])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def depthwise_model(rng, stride, qtype):
    """x [1, 6, 9, 9] -> Q/DQ (qtype) -> depthwise Conv 3x3 (group 6, int8
    weight per channel, int32 bias, pads 1) -> Q (uint8) as the output."""
    c = 6
    xz = 128 if qtype == TensorProto.UINT8 else -3
    w = rng.integers(-127, 127, (c, 1, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, c) * 0.01).astype(np.float32)
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.02]),
             helper.make_tensor("xz", qtype, [], [xz]),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(c, np.int8), "wz"),
             numpy_helper.from_array(rng.integers(-500, 500, c).astype(np.int32), "b"),
             numpy_helper.from_array((np.float32(0.02) * ws).astype(np.float32), "bs"),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [0.05]),
             helper.make_tensor("yz", TensorProto.UINT8, [], [110])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["cv"], group=c, pads=[1] * 4,
                              strides=[stride] * 2),
             helper.make_node("QuantizeLinear", ["cv", "ys", "yz"], ["y"])]
    o = (9 + 2 - 3) // stride + 1
    g = helper.make_graph(
        nodes, "depthwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                           [1, c, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, c, o, o])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def grouped_model(rng, group, cg, mg, stride, dil, per_channel, qtype):
    """x [1, group cg, 11, 11] -> Q/DQ (qtype) -> grouped Conv 3x3 (int8
    weight per output channel or per tensor, int32 bias, pads 1) -> Q
    (uint8) as the output."""
    c, m = group * cg, group * mg
    xz = 128 if qtype == TensorProto.UINT8 else -3
    w = rng.integers(-127, 127, (m, cg, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, m if per_channel else 1) * 0.01).astype(np.float32)
    bs = (np.float32(0.02) * ws).astype(np.float32)
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.02]),
             helper.make_tensor("xz", qtype, [], [xz]),
             numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(ws if per_channel else ws.reshape(()), "ws"),
             numpy_helper.from_array(np.zeros(m, np.int8) if per_channel else np.int8(0),
                                     "wz"),
             numpy_helper.from_array(rng.integers(-500, 500, m).astype(np.int32), "b"),
             numpy_helper.from_array(bs if per_channel else bs.reshape(()), "bs"),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [0.1]),
             helper.make_tensor("yz", TensorProto.UINT8, [], [110])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["cv"], group=group, pads=[1] * 4,
                              strides=[stride] * 2, dilations=[dil] * 2),
             helper.make_node("QuantizeLinear", ["cv", "ys", "yz"], ["y"])]
    o = (11 + 2 - dil * 2 - 1) // stride + 1
    g = helper.make_graph(
        nodes, "grouped", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [1, c, 11, 11])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, m, o, o])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


ADD_PARAMS = ((0.02, 0.03, 0.04), (128, 120, 0), (-3, 5, -128))  # scales; u8, i8 zps


def add_model(act, qtype):
    """a, b [2, 8, 7, 9] float -> Q/DQ each (their own scales and zero
    points, qtype) -> Add -> act (None, Relu or Clip 0..20) -> Q (qtype, the
    least zero point and 20 past its range: the activation idle) as the
    output."""
    (sa, sb, sc), zps = ADD_PARAMS[0], ADD_PARAMS[1 if qtype == TensorProto.UINT8 else 2]
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in
             (("sa", sa), ("sb", sb), ("sc", sc))]
    inits += [helper.make_tensor(n, qtype, [], [z]) for n, z in zip(("za", "zb", "zc"), zps)]
    nodes = [helper.make_node("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["ad"]),
             helper.make_node("QuantizeLinear", ["b", "sb", "zb"], ["bq"]),
             helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["bd"]),
             helper.make_node("Add", ["ad", "bd"], ["s" if act else "r"])]
    if act == "Relu":
        nodes.append(helper.make_node("Relu", ["s"], ["r"]))
    elif act == "Clip":
        inits += [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
                  helper.make_tensor("hi", TensorProto.FLOAT, [], [20.0])]
        nodes.append(helper.make_node("Clip", ["s", "lo", "hi"], ["r"]))
    nodes.append(helper.make_node("QuantizeLinear", ["r", "sc", "zc"], ["y"]))
    shape = [2, 8, 7, 9]
    g = helper.make_graph(
        nodes, "qadd", [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
                        for n in ("a", "b")],
        [helper.make_tensor_value_info("y", qtype, shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def add_reference(a, b, act, qtype):
    """add_model's bytes by its nodes' float32 operations, each rounded
    apart (Q: x / scale, half to even, saturated)."""
    (sa, sb, sc), zps = ADD_PARAMS[0], ADD_PARAMS[1 if qtype == TensorProto.UINT8 else 2]
    lo, hi = (0, 255) if qtype == TensorProto.UINT8 else (-128, 127)
    f32 = np.float32

    def q(x, s, z):
        return np.clip(np.rint(x / f32(s)) + z, lo, hi)

    def dq(v, s, z):
        return (v - z).astype(np.float32) * f32(s)

    r = dq(q(a, sa, zps[0]), sa, zps[0]) + dq(q(b, sb, zps[1]), sb, zps[1])
    if act:
        r = np.clip(r, f32(0), f32(20) if act == "Clip" else None)
    return q(r, sc, zps[2]).astype(np.uint8 if qtype == TensorProto.UINT8 else np.int8)


def maxpool_model(qtype):
    """x [1, 3, 20, 40] -> Q -> DQ -> MaxPool 3x3 stride 2 pads 1 -> Q on
    the same scale and zero point, as the output."""
    z = 100 if qtype == TensorProto.UINT8 else -7
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.02]),
             helper.make_tensor("z", qtype, [], [z])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("MaxPool", ["xd"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1] * 4),
             helper.make_node("QuantizeLinear", ["p", "s", "z"], ["y"])]
    g = helper.make_graph(
        nodes, "maxpool", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [1, 3, 20, 40])],
        [helper.make_tensor_value_info("y", qtype, [1, 3, 10, 20])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def matmul_model(rng, per_column, qtype):
    """x [2, 3, 8] -> Q/DQ (uint8) -> MatMul by an int8 [8, 6] weight (per
    tensor or per column) -> Q (qtype) as the output."""
    k, n = 8, 6
    w = rng.integers(-127, 127, (k, n)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, n if per_column else 1) * 0.01).astype(np.float32)
    zp = 3 if qtype == TensorProto.UINT8 else -7
    inits = [
        helper.make_tensor("xs", TensorProto.FLOAT, [], [0.03]),
        helper.make_tensor("xz", TensorProto.UINT8, [], [120]),
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(ws if per_column else ws.reshape(()), "ws"),
        numpy_helper.from_array(np.zeros(n, np.int8) if per_column else np.int8(0), "wz"),
        helper.make_tensor("ys", TensorProto.FLOAT, [], [0.05]),
        helper.make_tensor("yz", qtype, [], [zp]),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["m"]),
        helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "matmul_q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, k])],
        [helper.make_tensor_value_info("y", qtype, [2, 3, n])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def raw_tensor(name, t, dims, raw):
    """A TensorProto of raw bytes (onnx 1.12's make_tensor lacks float8)."""
    p = TensorProto()
    p.name = name
    p.data_type = t
    p.dims.extend(dims)
    p.raw_data = raw
    return p


def fp8_model(t):
    """x [2, 3, 4] float -> QuantizeLinear to t per tensor and per axis 1
    (saturate 1 and 0) -> DequantizeLinear; Cast to t and back (saturate 1
    and 0); DequantizeLinear of every code of t."""
    inits = [
        helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
        helper.make_tensor("sa", TensorProto.FLOAT, [3], [0.25, 3.0, 0.0078125]),
        raw_tensor("z", t, [], b"\x00"),
        raw_tensor("za", t, [3], b"\x00\x80\x00"),  # -0 is a zero too
        raw_tensor("codes", t, [256], bytes(range(256))),
    ]
    nodes, outs = [], []
    for sat in (1, 0):
        nodes += [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], [f"q{sat}"], saturate=sat),
            helper.make_node("DequantizeLinear", [f"q{sat}", "s", "z"], [f"dq{sat}"]),
            helper.make_node("QuantizeLinear", ["x", "sa", "za"], [f"qa{sat}"], axis=1,
                             saturate=sat),
            helper.make_node("DequantizeLinear", [f"qa{sat}", "sa"], [f"dqa{sat}"], axis=1),
            helper.make_node("Cast", ["x"], [f"c{sat}"], to=t, saturate=sat),
            helper.make_node("Cast", [f"c{sat}"], [f"cb{sat}"], to=TensorProto.FLOAT),
        ]
        outs += [f"dq{sat}", f"dqa{sat}", f"cb{sat}"]
    nodes.append(helper.make_node("DequantizeLinear", ["codes", "s"], ["all"]))
    g = helper.make_graph(
        nodes, "fp8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, 3, 4]) for o in outs] +
        [helper.make_tensor_value_info("all", TensorProto.FLOAT, [256])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(30)
    fails = 0
    u8, i8 = TensorProto.UINT8, TensorProto.INT8
    with tempfile.TemporaryDirectory() as work:
        x = rng.uniform(-2.5, 2.5, (1, 4, 6, 6)).astype(np.float32)
        # idle activations: one QLinearConv, ORT's integers exactly
        for name, act, qt, zp, sc in (("relu_u8", "Relu", u8, 0, 0.03),
                                      ("relu_i8", "Relu", i8, -128, 0.03),
                                      ("clip_u8", "Clip", u8, 0, 0.02)):
            fails += run_vs_ort(a.plugrt, work, "conv_" + name,
                              conv_act_model(rng, act, qt, zp, sc), {"x": x},
                              fused="Conv -> activation -> QuantizeLinear", int8=True)
        # not idle (zero point 20, Clip's 6 inside 0.03 * 235): both run it
        # dequantized; a tie may round the other way in a float sum
        for name, act, qt, zp, sc in (("relu_zp20", "Relu", u8, 20, 0.03),
                                      ("clip_inside", "Clip", u8, 0, 0.03)):
            fails += run_vs_ort(a.plugrt, work, "conv_" + name,
                              conv_act_model(rng, act, qt, zp, sc), {"x": x}, tol=1.0,
                              int8=True)
        xs = rng.uniform(-2.5, 2.5, (1, 3, 5, 5)).astype(np.float32)
        for add in (False, True):
            fails += run_vs_ort(a.plugrt, work, f"shared_dq{'_add' if add else ''}",
                              shared_dq_model(rng, add), {"x": xs}, fused="Conv",
                              layers={"QLinearConv": 2, "DequantizeLinear": int(add)},
                              int8=True)
        xm = rng.uniform(-3, 3, (2, 3, 8)).astype(np.float32)
        for per_column in (False, True):
            for qt in (u8, i8):
                fails += run_vs_ort(a.plugrt, work,
                                  f"matmul_{'col' if per_column else 'tensor'}_{qt}",
                                  matmul_model(rng, per_column, qt), {"x": xm},
                                  fused="MatMul", int8=True)
        xd = rng.uniform(-2.5, 2.5, (1, 6, 9, 9)).astype(np.float32)
        for stride in (1, 2):
            for qt in (u8, i8):
                fails += run_vs_ort(a.plugrt, work, f"depthwise_s{stride}_{qt}",
                                    depthwise_model(rng, stride, qt), {"x": xd}, fused="Conv",
                                    layers={"QLinearConv": 1}, int8=True)
        # grouped (not depthwise): groups 2 to 32, channels a group odd and
        # even, per channel and per tensor W, strides and dilations
        for group, cg, mg, stride, dil, per_ch, qt in ((2, 3, 5, 1, 1, True, u8),
                                                       (4, 4, 4, 2, 1, False, i8),
                                                       (8, 4, 4, 1, 2, True, u8),
                                                       (8, 8, 8, 2, 1, True, i8),
                                                       (32, 1, 2, 1, 1, False, u8),
                                                       (4, 17, 9, 1, 1, True, i8)):
            xg = rng.uniform(-2.5, 2.5, (1, group * cg, 11, 11)).astype(np.float32)
            fails += run_vs_ort(a.plugrt, work,
                                f"grouped_g{group}_{cg}x{mg}_s{stride}_d{dil}_{qt}",
                                grouped_model(rng, group, cg, mg, stride, dil, per_ch, qt),
                                {"x": xg}, fused="Conv", layers={"QLinearConv": 1}, int8=True)
        # DQ, DQ -> Add -> [idle Relu | Clip] -> Q: one QLinearAdd, the float
        # nodes' bytes exactly (ORT's QLinearAdd is fixed point: within 1)
        for act in (None, "Relu", "Clip"):
            for qt in (u8, i8):
                xa = rng.uniform(-3, 3, (2, 8, 7, 9)).astype(np.float32)
                xb = rng.uniform(-3, 3, (2, 8, 7, 9)).astype(np.float32)
                name = f"add_{act}_{qt}"
                fails += run_vs_ort(a.plugrt, work, name, add_model(act, qt),
                                    {"a": xa, "b": xb}, tol=1.0,
                                    layers={"QLinearAdd": 1, "DequantizeLinear": 0})
                got = np.load(f"{work}/{name}/output_y.npy")
                want = add_reference(xa, xb, act, qt)
                differ = int((got != want).sum())
                print(f"{'ok' if not differ else 'FAIL'} {name}: {differ} of {want.size} "
                      "bytes differ from the float nodes' own")
                fails += differ != 0
        xp = rng.uniform(-2.5, 2.5, (1, 3, 20, 40)).astype(np.float32)
        for qt in (u8, i8):
            fails += run_vs_ort(a.plugrt, work, f"maxpool_{qt}", maxpool_model(qt), {"x": xp},
                                layers={"MaxPool": 1, "DequantizeLinear": 0})
        xf = rng.uniform(-3, 3, (2, 3, 4)).astype(np.float32)
        # ties, values past both formats' ranges, infinities and NaN
        xf.flat[:8] = [1e5, -1e9, np.inf, -np.inf, np.nan, 232.0, -240.0, 0.0]
        for t, name in ((FLOAT8E4M3FN, "e4m3fn"), (FLOAT8E5M2, "e5m2")):
            fails += run_vs_ort(a.plugrt, work, "fp8_" + name, fp8_model(t), {"x": xf})
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

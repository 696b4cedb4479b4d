#!/usr/bin/env python3
"""8-bit elementwise chains folded into one LookupTable8 (issue 30;
src/onnx/onnx_qlut.c), through `plugrt run` and `plugrt build`.

For each model, an 8-bit x goes through DQ -> float elementwise ops ->
Q (a QuantizeLinear of a float input makes x where the model's input is
float):
- the folded output must equal, bit for bit, plugrt's output with
  --no-fuse (every node its own layer): the table is made by those very
  layers, so anything else is a bug;
- it must be within one quantization step of ONNX Runtime's (ORT's own
  QDQ transforms may round a tie the other way);
- plugrt's log (-v) must name each fold with its nodes, and the plan must
  hold one LookupTable8 a fold and (nodes - 1) fewer layers than the
  unfused plan;
- a chain whose intermediate value has a second reader, or whose DQ is
  per axis, must not fold: the same layers as unfused, no LookupTable8
  (per axis: an info line says why).

    test_qlut_fold.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import re
import sys
import tempfile

from ort_compare import np, onnx, ort, helper, TensorProto, run_fused_or_not

U8, I8, F = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT
DQ, Q = "DequantizeLinear", "QuantizeLinear"


def scalar(name, t, v):
    return helper.make_tensor(name, t, [], [v])


class Chain:
    """A model: x [2, 3, 8, 8] (float, quantized by a Q outside the chain,
    or already 8-bit) -> the chain's nodes -> y, named after `op`s."""

    def __init__(self, xq=U8, x_float=True, xs=0.04, xz=None):
        self.inits = []
        self.nodes = []
        self.x_float = x_float
        self.xq = xq
        xz = (128 if xq == U8 else 0) if xz is None else xz
        self.inits.append(scalar("xs", F, xs))
        if x_float:
            self.inits.append(scalar("xz", xq, xz))
            self.nodes.append(helper.make_node(Q, ["x", "xs", "xz"], ["xq"]))
        self.k = 0

    def add(self, op, ins, **attrs):
        self.k += 1
        out = f"v{self.k}"
        self.nodes.append(helper.make_node(op, ins, [out], name=f"{op}_{self.k}", **attrs))
        return out

    def const(self, v, t=F):
        name = f"c{len(self.inits)}"
        self.inits.append(scalar(name, t, v))
        return name

    def q(self, v, s, z, t):
        return self.add(Q, [v, self.const(s), self.const(z, t)])

    def dq(self, v, s, z, t):
        return self.add(DQ, [v, self.const(s), self.const(z, t)])

    def model(self, y, y_type, extra_outputs=()):
        x_in = "x" if self.x_float else "xq"
        g = helper.make_graph(
            self.nodes, "chain",
            [helper.make_tensor_value_info(x_in, F if self.x_float else self.xq, [2, 3, 8, 8])],
            [helper.make_tensor_value_info(y, y_type, [2, 3, 8, 8])] +
            [helper.make_tensor_value_info(o, F, [2, 3, 8, 8]) for o in extra_outputs],
            self.inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])


def silu(qt):
    """quantize_static's SiLU: a = DQ(x); Q(Mul(a, DQ(Q(Sigmoid(a)))))."""
    c = Chain(qt)
    z = 0 if qt == I8 else 128
    a = c.add(DQ, ["xq", "xs", "xz"])
    s = c.q(c.add("Sigmoid", [a]), 1 / 256, -128 if qt == I8 else 0, qt)
    m = c.add("Mul", [a, c.dq(s, 1 / 256, -128 if qt == I8 else 0, qt)])
    return c.model(c.q(m, 0.03, z, qt), qt), 1, 6


def hardswish():
    """x already uint8 (a graph input), DQ without a zero point."""
    c = Chain(U8, x_float=False, xs=0.05)
    a = c.add(DQ, ["xq", "xs"])
    return c.model(c.q(c.add("HardSwish", [a]), 0.03, 20, U8), U8), 1, 3


def relu_clip():
    """DQ -> Relu -> Clip(0.5, 3) -> Q, int8 in, uint8 out."""
    c = Chain(I8)
    a = c.add(DQ, ["xq", "xs", "xz"])
    r = c.add("Clip", [c.add("Relu", [a]), c.const(0.5), c.const(3.0)])
    return c.model(c.q(r, 0.02, 0, U8), U8), 1, 4


def gelu_tanh_gate():
    """sigmoid-like gate with an inner Q/DQ and constants on either side:
    g = Q(Add(Tanh(Mul(a, 0.5)), 1)); y = Q(Div(Mul(DQ(g), a), 2))."""
    c = Chain(U8)
    a = c.add(DQ, ["xq", "xs", "xz"])
    t = c.add("Add", [c.const(1.0), c.add("Tanh", [c.add("Mul", [a, c.const(0.5)])])])
    g = c.dq(c.q(t, 2 / 255, 0, U8), 2 / 255, 0, U8)
    y = c.add("Div", [c.add("Mul", [g, a]), c.const(2.0)])
    return c.model(c.q(y, 0.025, 100, U8), U8), 1, 9


def leaky_exp():
    """DQ -> LeakyRelu(0.1) -> Sub(0.5) -> Exp -> HardSigmoid -> Q."""
    c = Chain(U8)
    a = c.add(DQ, ["xq", "xs", "xz"])
    e = c.add("Exp", [c.add("Sub", [c.add("LeakyRelu", [a], alpha=0.1), c.const(0.5)])])
    h = c.add("HardSigmoid", [e], alpha=0.3, beta=0.4)
    return c.model(c.q(h, 1 / 250, -100, I8), I8), 1, 6


def two_tables_one():
    """DQ -> Relu -> Q -> DQ -> Sigmoid -> Q: one table (the longest chain)."""
    c = Chain(U8)
    a = c.add(DQ, ["xq", "xs", "xz"])
    r = c.dq(c.q(c.add("Relu", [a]), 0.02, 0, U8), 0.02, 0, U8)
    return c.model(c.q(c.add("Sigmoid", [r]), 1 / 256, 0, U8), U8), 1, 6


def second_reader():
    """The SiLU with its Sigmoid's output also a graph output: no fold."""
    c = Chain(U8)
    a = c.add(DQ, ["xq", "xs", "xz"])
    sg = c.add("Sigmoid", [a])
    s = c.q(sg, 1 / 256, 0, U8)
    m = c.add("Mul", [a, c.dq(s, 1 / 256, 0, U8)])
    return c.model(c.q(m, 0.03, 128, U8), U8, extra_outputs=[sg]), 0, 0


def per_axis():
    """DQ with per-channel scales and zero points (axis 1) -> Tanh -> Q:
    each channel its own function, no fold. (Not Sigmoid: ORT 1.2x's
    QLinearSigmoid fusion fails on a per-axis DQ.)"""
    c = Chain(U8)
    c.inits += [helper.make_tensor("pas", F, [3], [0.03, 0.05, 0.02]),
                helper.make_tensor("paz", U8, [3], [120, 128, 140])]
    a = c.add(DQ, ["xq", "pas", "paz"], axis=1)
    return c.model(c.q(c.add("Tanh", [a]), 1 / 128, 128, U8), U8), 0, 0


def plugrt_run(plugrt, d, path, feeds, tag, no_fuse):
    out, log, plan = run_fused_or_not(plugrt, d, path, feeds, tag, no_fuse)
    layers = int(re.search(r"(\d+) layers", plan).group(1))
    return out, log, layers, plan.count("plugrt::LookupTable8@")



def check(plugrt, work, name, made, feeds):
    model, folds, nodes = made
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    fused, log, n_fused, luts = plugrt_run(plugrt, d, path, feeds, "fused", False)
    apart, _, n_apart, _ = plugrt_run(plugrt, d, path, feeds, "apart", True)
    fails = []
    said = re.findall(r"info: .*?: (DequantizeLinear -> .*?) \((\d+) nodes\) fused into one "
                      r"LookupTable8", log)
    ops = " -> ".join(n.op_type for n in model.graph.node if n.op_type != "Constant")
    ops = ops[ops.index(DQ):] if folds else ""
    if len(said) != folds or (folds and (said[0][0] != ops or int(said[0][1]) != nodes)):
        fails.append(f"the log names folds {said}, want {folds} of {ops!r} ({nodes} nodes)")
    if luts != folds or n_fused != n_apart - folds * (nodes - 1):
        fails.append(f"{n_fused} layers ({luts} LookupTable8) folded, {n_apart} unfused; want "
                     f"{folds} LookupTable8 and {n_apart - folds * (nodes - 1)} layers")
    if name == "per_axis" and "per-axis scales" not in log:
        fails.append("no info line says the per-axis DQ is not folded")
    for n, ref in want.items():
        got = np.load(os.path.join(fused, f"output_{n}.npy"))
        ref_pl = np.load(os.path.join(apart, f"output_{n}.npy"))
        if got.dtype != ref_pl.dtype or got.shape != ref_pl.shape or \
                not np.array_equal(got.view(np.uint8), ref_pl.view(np.uint8)):
            fails.append(f"{n}: {int((got != ref_pl).sum())} elements differ from the "
                         "unfused layers'")
        diff = np.abs(got.astype(np.float64) - np.asarray(ref).astype(np.float64))
        tol = 1.0 if ref.dtype.kind in "iu" else 1e-6
        if got.dtype != ref.dtype or got.shape != ref.shape or (diff > tol).any():
            fails.append(f"{n}: max {diff.max()} off ORT (allowed {tol})")
        print(f"   {name} {n}: {int((diff != 0).sum())} of {diff.size} elements off ORT by "
              f"{diff.max()}, bit-equal to --no-fuse: {np.array_equal(got, ref_pl)}")
    print(f"{'FAIL' if fails else 'ok'} {name}: {folds} fold(s), {n_fused} layers vs "
          f"{n_apart} unfused" + "".join("\n  " + f for f in fails))
    return len(fails) > 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(37)
    # every byte of x at least once: the whole table is checked
    xf = rng.uniform(-6, 6, (2, 3, 8, 8)).astype(np.float32)
    xf.flat[:256] = (np.arange(256) - 128) * 0.04 + rng.uniform(-0.01, 0.01, 256)
    xb = rng.permutation(np.arange(384) % 256).astype(np.uint8).reshape(2, 3, 8, 8)
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, made, feeds in (
                ("silu_u8", silu(U8), {"x": xf}),
                ("silu_i8", silu(I8), {"x": xf}),
                ("hardswish", hardswish(), {"xq": xb}),
                ("relu_clip", relu_clip(), {"x": xf}),
                ("tanh_gate", gelu_tanh_gate(), {"x": xf}),
                ("leaky_exp", leaky_exp(), {"x": xf}),
                ("two_tables_one", two_tables_one(), {"x": xf}),
                ("second_reader", second_reader(), {"x": xf}),
                ("per_axis", per_axis(), {"x": xf})):
            fails += check(a.plugrt, work, name, made, feeds)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

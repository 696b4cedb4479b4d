#!/usr/bin/env python3
"""Dynamically quantized products folded into one layer (src/onnx/onnx_dynq.c;
ops/qmatmul_float.c), through `plugrt run` and `plugrt build`.

Models are products written as ONNX Runtime's quantize_dynamic writes them
(int8 and uint8 weights, per tensor and per column, odd K and N; built here:
its module needs ml_dtypes, which the test machines lack), each
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(scale product)
[-> Add(bias)]:
- one DynamicQuantizeLinear read by one chain: one DynamicQuantizeMatMul
  (a Relu or BERT's erf GELU after the bias joins it as its activation);
  read by three (Q, K, V from one input): the DynamicQuantizeLinear stays
  and each chain is one MatMulIntegerToFloat;
- plugrt's log (-v) must name each fold, and the plan must hold as many
  fewer layers as the folds took nodes;
- the folded outputs must be the unfused layers' (--no-fuse) within
  FUSED_RTOL (the integer sums are the same; the fused epilogue is one
  multiply-add where the layers round a Mul and an Add apart) and within
  1e-4 of ONNX Runtime's largest magnitude (its optimizations off: the
  same nodes);
- a chain whose MatMulInteger output is also a graph output, or whose
  scale product has a second reader, must not fold.
ONNX Runtime's own MatMulInteger saturates on CPUs without VNNI
(tests/models/run_quantized.py says why), so its reference runs each
MatMulInteger exactly in double (run_quantized.exact_matmul_integer).

    test_dynq_fold.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import re
import sys
import tempfile

from ort_compare import np, onnx, ort, helper, numpy_helper, TensorProto, run_fused_or_not

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
from run_quantized import exact_matmul_integer  # noqa: E402

F = TensorProto.FLOAT
FUSED_RTOL = 1e-5
ORT_RTOL = 1e-4


def dynq_model(rng, k, ns, shared, per_column, wtype, bias=True, act=None):
    """x [B, S, k] -> a product by W_i [k, n_i] (+ b_i) for each n_i in ns, one
    output each, written as ONNX Runtime's quantize_dynamic writes it:
    DynamicQuantizeLinear -> MatMulInteger(., W_q, ., w_zp) -> Cast(float)
    -> Mul(., Mul(x_scale, w_scale)) [-> Add(., b)], W_q int8 (zero point 0)
    or uint8 (zero point where W's range puts it), its scale per tensor or
    per column. shared: every product reads one DynamicQuantizeLinear of x
    (BERT's Q, K, V); else each its own, of Relu(x) or Sigmoid(x)."""
    nodes, inits, outs = [], [], []
    u8 = wtype == "u8"

    def dql(src, tag):
        names = [f"{tag}_q", f"{tag}_s", f"{tag}_z"]
        nodes.append(helper.make_node("DynamicQuantizeLinear", [src], names, name=f"{tag}_dql"))
        return names

    if shared:
        qx = dql("x", "x")
    for i, n in enumerate(ns):
        w = rng.standard_normal((k, n)).astype(np.float32) / np.sqrt(k)
        lo = np.minimum(w.min(axis=0 if per_column else None), 0)
        hi = np.maximum(w.max(axis=0 if per_column else None), 0)
        if u8:
            sc = ((hi - lo) / 255).astype(np.float32)
            zp = np.clip(np.rint(-lo / sc), 0, 255).astype(np.uint8)
            wq = np.clip(np.rint(w / sc) + zp, 0, 255).astype(np.uint8)
        else:
            sc = (np.maximum(-lo, hi) / 127).astype(np.float32)
            zp = np.zeros_like(sc, dtype=np.int8)
            wq = np.clip(np.rint(w / sc), -127, 127).astype(np.int8)
        inits += [numpy_helper.from_array(wq, f"w{i}_q"),
                  numpy_helper.from_array(np.asarray(sc, np.float32), f"w{i}_s"),
                  numpy_helper.from_array(np.asarray(zp), f"w{i}_z")]
        if not shared:
            src = f"r{i}"
            nodes.append(helper.make_node("Relu" if i % 2 else "Sigmoid", ["x"], [src],
                                          name=f"act{i}"))
            qx = dql(src, f"x{i}")
        nodes += [
            helper.make_node("MatMulInteger", [qx[0], f"w{i}_q", qx[2], f"w{i}_z"],
                             [f"mmi{i}"], name=f"mm{i}_quant"),
            helper.make_node("Cast", [f"mmi{i}"], [f"c{i}"], name=f"cast{i}", to=F),
            helper.make_node("Mul", [qx[1], f"w{i}_s"], [f"s{i}"], name=f"scales{i}"),
        ]
        y = f"y{i}"
        if bias:
            b = numpy_helper.from_array(rng.uniform(-0.5, 0.5, n).astype(np.float32), f"b{i}")
            inits.append(b)
            nodes.append(helper.make_node("Mul", [f"c{i}", f"s{i}"], [f"m{i}"], name=f"out{i}"))
            nodes.append(helper.make_node("Add", [b.name, f"m{i}"], [y], name=f"add{i}"))
            if act == "Relu":
                nodes.append(helper.make_node("Relu", [y], [y + "_r"], name=f"relu{i}"))
                y += "_r"
            elif act == "Gelu":
                # BERT's x / 2 (1 + erf(x / sqrt 2)) as PyTorch exports it
                inits += [numpy_helper.from_array(np.array(1.4142135, np.float32), "sqrt2"),
                          numpy_helper.from_array(np.array(1.0, np.float32), "one"),
                          numpy_helper.from_array(np.array(0.5, np.float32), "half")]
                nodes += [helper.make_node("Div", [y, "sqrt2"], [y + "_d"], name=f"div{i}"),
                          helper.make_node("Erf", [y + "_d"], [y + "_e"], name=f"erf{i}"),
                          helper.make_node("Add", [y + "_e", "one"], [y + "_a"],
                                           name=f"add1{i}"),
                          helper.make_node("Mul", [y, y + "_a"], [y + "_m"], name=f"mul{i}"),
                          helper.make_node("Mul", [y + "_m", "half"], [y + "_g"],
                                           name=f"mul2{i}")]
                y += "_g"
        else:
            nodes.append(helper.make_node("Mul", [f"c{i}", f"s{i}"], [y], name=f"out{i}"))
        outs.append(helper.make_tensor_value_info(y, F, None))
    g = helper.make_graph(nodes, "dynq", [helper.make_tensor_value_info("x", F, ["b", "s", k])],
                          outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def with_extra_reader(model, what):
    """The quantized model with one chain's MatMulInteger output ("mmi") or
    scale product ("scale") made a graph output too: that chain stays."""
    g = model.graph
    for n in g.node:
        if n.op_type == "MatMulInteger" and what == "mmi":
            g.output.append(helper.make_tensor_value_info(n.output[0], TensorProto.INT32, None))
            return model
        if (n.op_type == "Mul" and what == "scale" and
                any(p.op_type == "DynamicQuantizeLinear" and p.output[1] in n.input
                    for p in g.node)):
            g.output.append(helper.make_tensor_value_info(n.output[0], F, None))
            return model
    raise RuntimeError("no node to give a second reader")


def plugrt_run(plugrt, d, path, feeds, tag, no_fuse):
    shape = "x:" + "x".join(str(v) for v in feeds["x"].shape)
    out, log, plan = run_fused_or_not(plugrt, d, path, feeds, tag, no_fuse,
                                      ["--opt-shapes", shape])
    return out, log, int(re.search(r"(\d+) layers", plan).group(1))


def check(plugrt, work, name, model, feeds, dyn, to_float, nodes_each):
    """dyn / to_float: folds into DynamicQuantizeMatMul / MatMulIntegerToFloat
    expected; nodes_each: nodes one fold takes beyond the layer it makes."""
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(exact_matmul_integer(path), so,
                                providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    fused, log, n_fused = plugrt_run(plugrt, d, path, feeds, "fused", False)
    apart, _, n_apart = plugrt_run(plugrt, d, path, feeds, "apart", True)
    fails = []
    said_dyn = len(re.findall(r"folded into one DynamicQuantizeMatMul", log))
    said_int = len(re.findall(r"folded into one MatMulIntegerToFloat", log))
    if (said_dyn, said_int) != (dyn, to_float):
        fails.append(f"the log names {said_dyn} DynamicQuantizeMatMul and {said_int} "
                     f"MatMulIntegerToFloat folds, want {dyn} and {to_float}")
    # Without a fold of its own a chain may still meet the other fusions
    # (its Mul and Add an ElementwiseChain): counted only where it folds.
    taken = dyn * nodes_each[0] + to_float * nodes_each[1]
    if (dyn or to_float) and n_fused != n_apart - taken:
        fails.append(f"{n_fused} layers folded, {n_apart} unfused; want {n_apart - taken}")
    for n, ref in want.items():
        got = np.load(os.path.join(fused, f"output_{n}.npy"))
        ref_pl = np.load(os.path.join(apart, f"output_{n}.npy"))
        big = max(float(np.max(np.abs(ref))), 1.0) if ref.size else 1.0
        if got.shape != ref_pl.shape or got.dtype != ref_pl.dtype:
            fails.append(f"{n}: {got.dtype}{got.shape}, unfused {ref_pl.dtype}{ref_pl.shape}")
            continue
        d_pl = np.abs(got.astype(np.float64) - ref_pl.astype(np.float64))
        if (d_pl > FUSED_RTOL * big).any():
            fails.append(f"{n}: max {d_pl.max()} off the unfused layers' (max |ref| {big})")
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        if got.shape != ref.shape or (diff > ORT_RTOL * big).any():
            fails.append(f"{n}: max {diff.max()} off ORT (max |ref| {big})")
    print(f"{'FAIL' if fails else 'ok'} {name}: {said_dyn}+{said_int} fold(s), {n_fused} "
          f"layers vs {n_apart} unfused" + "".join("\n  " + f for f in fails))
    return len(fails) > 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(38)
    fails = 0
    # (DQL, MMI, Cast, scale Mul, Mul, Add) -> 1 layer: 5 nodes taken; without
    # the DQL (it stays, shared): 4; without a bias one less each.
    with tempfile.TemporaryDirectory() as work:
        cases = []
        for k, ns in ((64, (48,)), (37, (19, 70)), (130, (33,))):
            for pc in (False, True):
                for wt in ("s8", "u8"):
                    name = f"own_k{k}_{'col' if pc else 'tensor'}_{wt}"
                    m = dynq_model(rng, k, ns, False, pc, wt)
                    cases.append((name, m, k, len(ns), 0, (5, 4)))
        cases.append(("qkv_shared", dynq_model(rng, 40, (40, 40, 40), True, True, "s8"), 40,
                      0, 3, (5, 4)))
        cases.append(("no_bias", dynq_model(rng, 24, (17,), False, False, "u8", bias=False),
                      24, 1, 0, (4, 3)))
        # an activation after the bias joins: Relu one node more, GELU five
        cases.append(("relu", dynq_model(rng, 48, (33,), False, True, "s8", act="Relu"), 48,
                      1, 0, (6, 5)))
        cases.append(("gelu", dynq_model(rng, 64, (100,), False, False, "u8", act="Gelu"),
                      64, 1, 0, (10, 9)))
        m = dynq_model(rng, 24, (17,), False, False, "s8")
        cases.append(("mmi_read_twice", with_extra_reader(m, "mmi"), 24, 0, 0, (5, 4)))
        m = dynq_model(rng, 24, (17,), False, False, "s8")
        cases.append(("scale_read_twice", with_extra_reader(m, "scale"), 24, 0, 0, (5, 4)))
        for name, m, k, dyn, to_float, each in cases:
            x = rng.standard_normal((2, 5, k)).astype(np.float32)
            fails += check(a.plugrt, work, name, m, {"x": x}, dyn, to_float, each)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Activations folded into the normalization before them
(src/onnx/onnx_fuse.c, fc_conv_act and fc_conv_silu on a norm;
ops/norm.c's fields activation and activation_params), through
`plugrt run` and `plugrt build`.

Each model is X -> a normalization -> an activation -> Y:
BatchNormalization -> Relu (DenseNet's, after a Concat), -> LeakyRelu,
-> Clip with constant bounds, InstanceNormalization -> Sigmoid -> Mul
(SiLU), GroupNormalization -> SiLU (a U-Net's block), LpNormalization ->
Sigmoid; and two that must not fold: a norm whose output has a second
reader, a Clip whose bound is a graph input.
- the folded output must equal, bit for bit, plugrt's output with
  --no-fuse (every node its own layer): the norm stores its value and the
  activation is the same float function of it;
- it must be within 1e-5 (relative to 1 + |value|) of ONNX Runtime's;
- the plan must hold one layer per folded pair (two for the SiLU's
  three nodes) fewer than the unfused plan, and inspect must show the
  norm's activation field.

    test_norm_act_fold.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import re
import sys
import tempfile

from ort_compare import (np, onnx, ort, helper, numpy_helper, TensorProto, run_fused_or_not,
                         compare_folded)

F = TensorProto.FLOAT
C = 8


def params(rng, names, n):
    """scale, B (and mean, var) initializers of n values."""
    out = []
    for k in names:
        v = rng.uniform(0.5, 1.5, n) if k in ("scale", "var") else rng.uniform(-0.5, 0.5, n)
        out.append(numpy_helper.from_array(v.astype(np.float32), k))
    return out


def model(rng, norm, act, second_reader=False, clip_input=False):
    """(model, layers the fold saves)."""
    inits, nodes, inputs = [], [], [helper.make_tensor_value_info("x", F, [2, C, 6, 7])]
    if norm == "BatchNormalization":
        inits += params(rng, ("scale", "B", "mean", "var"), C)
        nodes.append(helper.make_node(norm, ["x", "scale", "B", "mean", "var"], ["n"]))
    elif norm == "InstanceNormalization":
        inits += params(rng, ("scale", "B"), C)
        nodes.append(helper.make_node(norm, ["x", "scale", "B"], ["n"]))
    elif norm == "GroupNormalization":
        inits += params(rng, ("scale", "B"), 4)  # opset 18: one per group
        nodes.append(helper.make_node(norm, ["x", "scale", "B"], ["n"], num_groups=4))
    else:
        nodes.append(helper.make_node(norm, ["x"], ["n"], axis=1, p=2))
    saved = 1
    if act == "Silu":
        nodes += [helper.make_node("Sigmoid", ["n"], ["s"]),
                  helper.make_node("Mul", ["s", "n"], ["y"])]
        saved = 2
    elif act == "Clip":
        if clip_input:
            inputs.append(helper.make_tensor_value_info("lo", F, []))
        else:
            inits.append(numpy_helper.from_array(np.array(-0.25, np.float32), "lo"))
        inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "hi"))
        nodes.append(helper.make_node("Clip", ["n", "lo", "hi"], ["y"]))
    else:
        attrs = {"alpha": 0.3} if act in ("LeakyRelu", "HardSigmoid") else {}
        nodes.append(helper.make_node(act, ["n"], ["y"], **attrs))
    outputs = [helper.make_tensor_value_info("y", F, None)]
    if second_reader:
        outputs.append(helper.make_tensor_value_info("n", F, None))
    if second_reader or clip_input:
        saved = 0
    opset = 18 if norm == "GroupNormalization" else 13
    g = helper.make_graph(nodes, norm, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m, saved


def layers(plan):
    return int(re.search(r"(\d+) layers", plan).group(1))


def check(plugrt, work, name, made, feeds, act):
    m, saved = made
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    fused, _, plan_f = run_fused_or_not(plugrt, d, path, feeds, "fused", False)
    apart, _, plan_a = run_fused_or_not(plugrt, d, path, feeds, "apart", True)
    fails = []
    if layers(plan_f) != layers(plan_a) - saved:
        fails.append(f"{layers(plan_f)} layers folded, {layers(plan_a)} unfused; "
                     f"want {saved} fewer")
    if saved and not re.search(r'activation char\[\d+\] = "%s"' % act, plan_f):
        fails.append(f"inspect does not show activation {act}:\n{plan_f}")
    fails += compare_folded(fused, apart, want, 1e-5)
    print(f"{'FAIL' if fails else 'ok'} {name}: {layers(plan_f)} layers vs "
          f"{layers(plan_a)} unfused" + "".join("\n  " + f for f in fails))
    return len(fails) > 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(25)
    x = (rng.standard_normal((2, C, 6, 7)) * 2).astype(np.float32)
    fails = 0
    cases = (("bn_relu", "BatchNormalization", "Relu", {}),
             ("bn_leaky", "BatchNormalization", "LeakyRelu", {}),
             ("bn_clip", "BatchNormalization", "Clip", {}),
             ("instance_silu", "InstanceNormalization", "Silu", {}),
             ("group_silu", "GroupNormalization", "Silu", {}),
             ("lp_sigmoid", "LpNormalization", "Sigmoid", {}),
             ("bn_second_reader", "BatchNormalization", "Relu", {"second_reader": True}),
             ("bn_clip_input", "BatchNormalization", "Clip", {"clip_input": True}))
    with tempfile.TemporaryDirectory() as work:
        for name, norm, act, kw in cases:
            feeds = {"x": x}
            if kw.get("clip_input"):
                feeds["lo"] = np.array(-0.25, np.float32)
            fails += check(a.plugrt, work, name, model(rng, norm, act, **kw), feeds, act)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

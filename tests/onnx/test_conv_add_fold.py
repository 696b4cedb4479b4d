#!/usr/bin/env python3
"""Residual Adds folded into their Conv (src/onnx/onnx_fuse.c, fc_conv_add;
ops/conv.c's field residual), through `plugrt run` and `plugrt build`.

Each model is a residual block, Conv -> Relu -> Conv -> Add(., skip) ->
Relu | Clip | nothing, with the Add's operands in either order:
- the folded output must equal, bit for bit, plugrt's output with
  --no-fuse (every node its own layer): the fused Conv does the same float
  operations in the same order (conv + bias, + z, the activation);
- it must be within 1e-4 (relative to 1 + |value|) of ONNX Runtime's;
- plugrt's log (-v) must name each fold, and the plan must hold as many
  fewer layers as the folds took nodes;
- a skip that broadcasts (a pooled [N, C, 1, 1]), or a Conv output with a
  second reader, must not fold.

    test_conv_add_fold.py --plugrt PATH

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


def conv(nodes, inits, rng, name, x, cin, cout, k, stride=1, bias=True):
    w = numpy_helper.from_array(
        (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32),
        name + "_w")
    ins = [x, w.name]
    inits.append(w)
    if bias:
        b = numpy_helper.from_array(rng.uniform(-0.5, 0.5, cout).astype(np.float32),
                                    name + "_b")
        inits.append(b)
        ins.append(b.name)
    nodes.append(helper.make_node("Conv", ins, [name], name=name, kernel_shape=[k, k],
                                  pads=[k // 2] * 4, strides=[stride, stride]))
    return name


def block(rng, skip_first, act, downsample=False, bias=True):
    """x [N, 8, 10, 10] -> residual block -> y. Returns (model, folds, nodes
    a fold takes)."""
    nodes, inits = [], []
    s = 2 if downsample else 1
    a = conv(nodes, inits, rng, "c1", "x", C, C, 3, s)
    nodes.append(helper.make_node("Relu", [a], ["r1"], name="r1"))
    b = conv(nodes, inits, rng, "c2", "r1", C, C, 3, 1, bias)
    skip = conv(nodes, inits, rng, "ds", "x", C, C, 1, 2) if downsample else "x"
    nodes.append(helper.make_node("Add", [skip, b] if skip_first else [b, skip], ["sum"],
                                  name="add"))
    out = "sum"
    if act == "Relu":
        nodes.append(helper.make_node("Relu", ["sum"], ["y"], name="relu"))
        out = "y"
    elif act == "Clip":
        inits += [numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
                  numpy_helper.from_array(np.array(0.75, np.float32), "hi")]
        nodes.append(helper.make_node("Clip", ["sum", "lo", "hi"], ["y"], name="clip"))
        out = "y"
    g = helper.make_graph(nodes, "block",
                          [helper.make_tensor_value_info("x", F, ["batch", C, 10, 10])],
                          [helper.make_tensor_value_info(out, F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, 1, 3 if act else 2, 1


def broadcast_skip(rng):
    """Add(Conv(x), GlobalAveragePool(x)): [N, 8, 10, 10] + [N, 8, 1, 1] stays
    an Add."""
    nodes, inits = [], []
    a = conv(nodes, inits, rng, "c1", "x", C, C, 3)
    nodes.append(helper.make_node("GlobalAveragePool", ["x"], ["p"], name="gap"))
    nodes.append(helper.make_node("Add", [a, "p"], ["y"], name="add"))
    g = helper.make_graph(nodes, "bcast",
                          [helper.make_tensor_value_info("x", F, ["batch", C, 10, 10])],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, 0, 0, 0


def second_reader(rng):
    """The Conv's output is a graph output too: no fold."""
    nodes, inits = [], []
    a = conv(nodes, inits, rng, "c1", "x", C, C, 3)
    nodes.append(helper.make_node("Add", [a, "x"], ["y"], name="add"))
    g = helper.make_graph(nodes, "second",
                          [helper.make_tensor_value_info("x", F, ["batch", C, 10, 10])],
                          [helper.make_tensor_value_info("y", F, None),
                           helper.make_tensor_value_info("c1", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, 0, 0, 0


def plugrt_run(plugrt, d, path, feeds, tag, no_fuse):
    shape = "x:" + "x".join(str(v) for v in feeds["x"].shape)
    out, log, plan = run_fused_or_not(plugrt, d, path, feeds, tag, no_fuse,
                                      ["--opt-shapes", shape])
    return out, log, int(re.search(r"(\d+) layers", plan).group(1))



def check(plugrt, work, name, made, feeds):
    model, folds, nodes, relus = made
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    fused, log, n_fused = plugrt_run(plugrt, d, path, feeds, "fused", False)
    apart, _, n_apart = plugrt_run(plugrt, d, path, feeds, "apart", True)
    fails = []
    said = re.findall(r"info: .*?: Conv -> Add.*? folded into one Conv with residual input",
                      log)
    if len(said) != folds:
        fails.append(f"the log names {len(said)} folds, want {folds}")
    # --no-fuse also keeps the first Conv's Relu a layer (relus).
    want_layers = n_apart - relus - folds * (nodes - 1)
    if n_fused != want_layers:
        fails.append(f"{n_fused} layers folded, {n_apart} unfused; want {want_layers}")
    fails += compare_folded(fused, apart, want, 1e-4)
    print(f"{'FAIL' if fails else 'ok'} {name}: {folds} fold(s), {n_fused} layers vs "
          f"{n_apart} unfused" + "".join("\n  " + f for f in fails))
    return len(fails) > 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(24)
    x = rng.standard_normal((2, C, 10, 10)).astype(np.float32)
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, made in (
                ("conv_first_relu", block(rng, False, "Relu")),
                ("skip_first_relu", block(rng, True, "Relu")),
                ("conv_first_none", block(rng, False, None)),
                ("skip_first_clip", block(rng, True, "Clip")),
                ("no_bias_relu", block(rng, True, "Relu", bias=False)),
                ("downsample_relu", block(rng, False, "Relu", downsample=True)),
                ("broadcast_skip", broadcast_skip(rng)),
                ("second_reader", second_reader(rng))):
            fails += check(a.plugrt, work, name, made, {"x": x})
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

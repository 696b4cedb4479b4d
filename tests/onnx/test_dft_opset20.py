#!/usr/bin/env python3
"""DFT of opset 20 (its axis an input, default -2 over the whole rank)
through `plugrt run` against ONNX Runtime: real and complex input, axis as
a constant (positive and negative) and omitted, dft_length, inverse,
onesided. Refused, each naming the node: an axis that is a graph input, the
axis of the real and imaginary parts (-1).

    test_dft_opset20.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from ort_compare import np, onnx, helper, TensorProto, run_vs_ort

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(x_shape, axis=None, length=None, axis_input=False, name="dft", **attrs):
    ins = ["x", "n" if length is not None else ""]
    inits = []
    inputs = [helper.make_tensor_value_info("x", F, list(x_shape))]
    if length is not None:
        inits.append(helper.make_tensor("n", I64, [], [length]))
    if axis is not None or axis_input:
        ins.append("a")
        if axis_input:
            inputs.append(helper.make_tensor_value_info("a", I64, []))
        else:
            inits.append(helper.make_tensor("a", I64, [], [axis]))
    while ins and not ins[-1]:
        ins.pop()
    g = helper.make_graph([helper.make_node("DFT", ins, ["y"], name=name, **attrs)], "g",
                          inputs, [helper.make_tensor_value_info("y", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    args = ap.parse_args()
    r = np.random.default_rng(20)
    real = r.uniform(-1, 1, (2, 6, 5, 1)).astype(np.float32)
    cplx = r.uniform(-1, 1, (2, 6, 8, 2)).astype(np.float32)
    cases = [
        ("default_axis", model(real.shape), real),  # -2: the last signal dim (5)
        ("axis1", model(real.shape, axis=1), real),
        ("axis_minus3", model(real.shape, axis=-3), real),
        ("complex_inverse", model(cplx.shape, axis=2, inverse=1), cplx),
        ("onesided_length", model(real.shape, axis=1, length=9, onesided=1), real),
        ("truncated", model(cplx.shape, axis=-2, length=4), cplx),
    ]
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, m, x in cases:
            scale = float(np.abs(x).sum())  # bounds every bin's magnitude
            f = run_vs_ort(args.plugrt, work, name, m, {"x": x}, tol=2e-7 * scale)
            print(f"{'FAIL' if f else 'ok  '} {name}")
            fails += f
        for name, m, feeds, words in (
                ("axis_input", model(real.shape, axis_input=True, name="d1"),
                 {"x": real, "a": np.array(1, np.int64)}, ["d1", "axis (input 2)"]),
                ("axis_comps", model(real.shape, axis=-1, name="d2"), {"x": real},
                 ["d2", "real and imaginary parts"])):
            d = os.path.join(work, name)
            os.makedirs(d)
            path = os.path.join(d, "model.onnx")
            onnx.save(m, path)
            cmd = [args.plugrt, "run", path, "-n", "1"]
            for k, v in feeds.items():
                np.save(os.path.join(d, k + ".npy"), v)
                cmd += ["-i", f"{k}={os.path.join(d, k + '.npy')}"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            ok = p.returncode != 0 and all(w in p.stderr for w in words)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {p.stderr.strip()[-200:]}")
            fails += not ok
    print(f"test_dft_opset20: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""plugrt's integer products against ONNX Runtime on the CPU, one op each.

QLinearMatMul of a [128, 768] uint8 activation times a constant [768, 768]
int8 weight (per-tensor scales), QLinearConv 3x3 64 -> 64 over a
[1, 64, 56, 56] uint8 image (pads 1, int8 weights with per-channel
scales, int32 bias), and MatMulInteger / ConvInteger of the same shapes
(int32 out). Each is one-node ONNX model made here with onnx.helper
(seeded numpy data), run by both engines in this process through their
Python bindings, on one thread each (ORT's intra_op_num_threads 1,
plugrt's context of 1 thread); outputs are compared (the number of
elements that differ, and by how much), then each engine's median over
alternating blocks of runs is printed with the ratio ORT / plugrt (above
1: plugrt is faster).

    taskset -c 0 /usr/bin/python3 bench/quant_ops.py

Environment: PLUGRT_LIBRARY_DIR (default build/ when it holds
libplugrt.so) selects the libraries the Python package loads.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.path.join(REPO, "build")
if "PLUGRT_LIBRARY_DIR" not in os.environ and os.path.exists(
        os.path.join(BUILD, "libplugrt.so")):
    os.environ["PLUGRT_LIBRARY_DIR"] = BUILD
try:
    import plugrt
except ImportError:
    sys.path.insert(0, os.path.join(REPO, "python", "src"))
    import plugrt  # noqa: E402
import onnxruntime as ort  # noqa: E402


def cases(rng):
    M, K, N = 128, 768, 768
    a = rng.integers(0, 256, (M, K), dtype=np.uint8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    x = rng.integers(0, 256, (1, 64, 56, 56), dtype=np.uint8)
    w = rng.integers(-128, 128, (64, 64, 3, 3), dtype=np.int8)
    bias = rng.integers(-20000, 20000, (64,), dtype=np.int32)
    u8 = TensorProto.UINT8
    conv = {"pads": [1, 1, 1, 1]}
    yield ("QLinearMatMul 128x768x768", qlinear_mm(a, b), {"a": a})
    yield ("MatMulInteger 128x768x768",
           node_model("MatMulInteger", ["a", "b", "a_zp", "b_zp"], [("a", u8, [M, K])],
                      {"b": b, "a_zp": np.array(3, np.uint8),
                       "b_zp": np.array(0, np.int8)}, TensorProto.INT32, [M, N]),
           {"a": a})
    yield ("QLinearConv 3x3 64->64 56x56", qlinear_conv(x, w, bias, conv), {"x": x})
    yield ("ConvInteger 3x3 64->64 56x56",
           node_model("ConvInteger", ["x", "w", "x_zp", "w_zp"],
                      [("x", u8, [1, 64, 56, 56])],
                      {"w": w, "x_zp": np.array(5, np.uint8),
                       "w_zp": np.array(0, np.int8)}, TensorProto.INT32, [1, 64, 56, 56],
                      conv), {"x": x})


def node_model(op, order, graph_in, inits, out_type, out_shape, attrs=None):
    node = helper.make_node(op, order, ["y"], **(attrs or {}))
    g = helper.make_graph(
        [node], op, [helper.make_tensor_value_info(n, t, s) for n, t, s in graph_in],
        [helper.make_tensor_value_info("y", out_type, out_shape)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def qlinear_mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    inits = {"a_scale": np.array(0.02, np.float32), "a_zp": np.array(128, np.uint8),
             "b": b, "b_scale": np.array(0.004, np.float32),
             "b_zp": np.array(0, np.int8), "y_scale": np.array(2.5, np.float32),
             "y_zp": np.array(120, np.uint8)}
    return node_model("QLinearMatMul",
                      ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"],
                      [("a", TensorProto.UINT8, [M, K])], inits, TensorProto.UINT8, [M, N])


def qlinear_conv(x, w, bias, attrs):
    rng = np.random.default_rng(1)
    inits = {"x_scale": np.array(0.02, np.float32), "x_zp": np.array(100, np.uint8),
             "w": w, "w_scale": rng.uniform(0.002, 0.006, w.shape[0]).astype(np.float32),
             "w_zp": np.zeros(w.shape[0], np.int8), "y_scale": np.array(4.0, np.float32),
             "y_zp": np.array(128, np.uint8), "B": bias}
    return node_model("QLinearConv",
                      ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp",
                       "B"],
                      [("x", TensorProto.UINT8, list(x.shape))], inits, TensorProto.UINT8,
                      list(x.shape[:1]) + [w.shape[0]] + list(x.shape[2:]), attrs)


def timed(fn, n, out):
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) * 1e-6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(30)
    print("plugrt %s, onnxruntime %s, %d thread(s), CPUs %s" % (
        plugrt.__version__, ort.__version__, args.threads,
        sorted(os.sched_getaffinity(0))))
    print("%-30s %10s %10s %8s  %s" % ("op", "ORT ms", "plugrt ms", "ORT/prt",
                                       "outputs"))
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, feeds in cases(rng):
            path = os.path.join(tmp, "m.onnx")
            onnx.save(m, path)
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            want = sess.run(None, feeds)[0]
            engine = plugrt.build(path)
            ctx = engine.create_execution_context(threads=args.threads)
            for k, v in feeds.items():
                ctx.set_tensor_address(k, v)
            got = np.empty(want.shape, want.dtype)
            ctx.set_tensor_address("y", got)
            ctx.execute_async_v3(0)
            diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
            agree = ("identical" if not diff.any() else
                     "%d differ (at most %d)" % (int((diff > 0).sum()), int(diff.max())))

            def run_ort():
                sess.run(None, feeds)

            def run_prt():
                ctx.execute_async_v3(0)

            t0 = time.perf_counter()
            run_ort()
            run_prt()
            k = max(2, min(100, int(0.1 / max(time.perf_counter() - t0, 1e-5))))
            to, tp = [], []
            for r in range(args.rounds):
                pair = ((run_ort, to), (run_prt, tp))
                for run, times in (pair if r % 2 == 0 else pair[::-1]):
                    run()
                    timed(run, k, times)
            mo, mp = statistics.median(to), statistics.median(tp)
            print("%-30s %10.3f %10.3f %8.2f  %s" % (name, mo, mp, mo / mp, agree))


if __name__ == "__main__":
    main()

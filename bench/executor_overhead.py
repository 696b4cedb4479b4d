#!/usr/bin/env python3
"""The CPU executor's cost per layer (issue 25): chains of N tiny layers.

Two chains of layers on 16 floats (Max with the chain's head and Add
of a constant in turn), built as ONNX models in a temporary
folder and run through the Python package (one context, addresses bound
once, one thread), each at N = 0 and N layers:

  static  x [16] -> (Max head, Add c) x N/2 -> y
  dd      x [16] -> NonZero -> Gather (a data-dependent length, <= 16)
                 -> (Max head, Add c) x N/2 -> y : every Add's dims depend on a size
                    written during the run (detect_post's layers after its
                    NonMaxSuppression are such)

The figure is (median run at N) - (median run at 0), divided by N: the
executor's time per layer plus a kernel's on 16 floats (a few ns).
The runs of the two lengths alternate in rounds so a change of the
machine's load hits both.

    /usr/bin/python3 bench/executor_overhead.py [--layers 200] [--rounds 5]

Environment: PLUGRT_LIBRARY_DIR (default build/) as bench/cpu_vs_ort.py.
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
if "PLUGRT_LIBRARY_DIR" not in os.environ and os.path.exists(
        os.path.join(REPO, "build", "libplugrt.so")):
    os.environ["PLUGRT_LIBRARY_DIR"] = os.path.join(REPO, "build")
sys.path.insert(0, os.path.join(REPO, "python", "src"))
import plugrt  # noqa: E402


def chain(kind, n, path):
    """An ONNX model of n layers after the chain's head (see the docstring)."""
    nodes, inits = [], []
    cur = "x"
    head = cur
    if kind == "dd":
        nodes.append(helper.make_node("NonZero", ["x"], ["nz"]))
        nodes.append(helper.make_node("Gather", ["x", "nz"], ["g2"], axis=0))
        inits.append(numpy_helper.from_array(np.array([-1], np.int64), "flat"))
        nodes.append(helper.make_node("Reshape", ["g2", "flat"], ["g"]))
        cur = "g"
    head = cur
    for i in range(n):
        c = "c%d" % i
        if i % 2:
            inits.append(numpy_helper.from_array(
                np.full([1], 1.0 + i / 1024.0, np.float32), c))
        # Every other node is a Max with the head's tensor: the importer
        # fuses runs of Adds (ew_chain), which would leave fewer layers
        # than nodes; Max stays a layer of its own.
        if i % 2:
            nodes.append(helper.make_node("Add", [cur, c], ["t%d" % i]))
        else:
            nodes.append(helper.make_node("Max", [cur, head], ["t%d" % i]))
        cur = "t%d" % i
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    g = helper.make_graph(
        nodes, kind,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


class Runner:
    def __init__(self, path, x):
        self.engine = plugrt.build(path)
        self.ctx = self.engine.create_execution_context(threads=1)
        self.ctx.set_tensor_address("x", x)
        self.y = np.empty([16], np.float32)
        self.ctx.set_tensor_address("y", self.y)

    def time(self, reps):
        out = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            self.ctx.execute_async_v3(0)
            out.append(time.perf_counter_ns() - t0)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=400, help="runs a block")
    a = ap.parse_args()
    x = np.arange(16, dtype=np.float32) % 3  # 11 nonzero of 16
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("static", "dd"):
            runs = {}
            for n in (0, a.layers):
                p = os.path.join(tmp, "%s_%d.onnx" % (kind, n))
                chain(kind, n, p)
                runs[n] = Runner(p, x)
                runs[n].ctx.execute_async_v3(0)
            # The result is checked once, against the same Adds in numpy.
            head = (x[x != 0] if kind == "dd" else x).astype(np.float32)
            want = head
            for i in range(a.layers):
                want = (want + np.float32(1.0 + i / 1024.0) if i % 2
                        else np.maximum(want, head))
            got = runs[a.layers].y[:want.size]
            if not np.array_equal(got, want):
                sys.exit("%s: wrong result" % kind)
            t = {0: [], a.layers: []}
            for r in range(a.rounds):
                order = (0, a.layers) if r % 2 == 0 else (a.layers, 0)
                for n in order:
                    runs[n].time(20)
                    t[n] += runs[n].time(a.reps)
            m0 = statistics.median(t[0])
            mn = statistics.median(t[a.layers])
            nl = runs[a.layers].engine.num_layers - runs[0].engine.num_layers
            print("%-6s N=%d: run %.1f us (N=0: %.1f us), %.0f ns a layer "
                  "(%d more layers in the engine)"
                  % (kind, a.layers, mn / 1e3, m0 / 1e3, (mn - m0) / nl, nl))


if __name__ == "__main__":
    main()

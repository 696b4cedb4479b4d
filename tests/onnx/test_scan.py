#!/usr/bin/env python3
"""ONNX Scan unrolled at import (issue 25, "Control flow";
src/onnx/onnx_control.c), through `plugrt run` against ONNX Runtime.

Models that unroll, each output within 1e-6 of ORT's (the unrolled graph
does the same float operations in the same order):
- opset 11 and 16: 2 state variables and 2 scan inputs, one scanned
  forward on axis 0 and one in reverse on axis 1; 2 scan outputs, one
  appended on axis 0 and one prepended on axis 1; a body reading an
  initializer of the main graph;
- a sequence of 11 (more than one Concat's 8 inputs), scan output axis -1;
- a state passed through unchanged and a scan output that is a scan
  input's element as it is (body outputs that are body inputs), a scan
  input that is an initializer (its length from its dims) and one a
  Constant node makes. ONNX Runtime 1.30 returns zeros or garbage for such
  body outputs, so its reference there is the same model with an Identity
  before each;
- a scan input computed in the graph whose shape value_info states;
- a Scan in a Loop's body, and a Loop in a Scan's body;
- opset 9 (the first with axes) and opset 8 with its batch of 1.

Models that are not unrolled fail `plugrt run` (an exit status, no crash)
with a message naming the node and the reason: a sequence length that is a
symbolic dim, a computed scan input of no stated shape, opset 8 with a
batch of 2, opset 8 with sequence_lens.

    test_scan.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import sys
import tempfile

from ort_compare import np, helper, TensorProto, run_vs_ort
from test_control_flow import check_refused, const, vi
from test_control_flow import model as cf_model

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
TOL = 1e-6


def model(nodes, inputs, outputs, inits=(), opset=16, value_info=()):
    return cf_model(nodes, inputs, outputs, inits, opset, value_info)


def two_by_two_body():
    """(s1, s2, a, b) -> (s1 + a * w, s2 * half + b, [s1'], [s2' - a]);
    w is the main graph's initializer, half the body's own."""
    nodes = [helper.make_node("Mul", ["a", "w"], ["aw"]),
             helper.make_node("Add", ["s1", "aw"], ["s1n"]),
             helper.make_node("Mul", ["s2", "half"], ["s2h"]),
             helper.make_node("Add", ["s2h", "b"], ["s2n"]),
             helper.make_node("Sub", ["s2n", "a"], ["d"]),
             helper.make_node("Identity", ["s1n"], ["o1"])]
    return helper.make_graph(
        nodes, "body", [vi("s1", F, [3]), vi("s2", F, [3]), vi("a", F, [3]), vi("b", F, [3])],
        [vi("s1n", F, [3]), vi("s2n", F, [3]), vi("o1", F, [3]), vi("d", F, [3])],
        [const("half", F, [], [0.5])])


def two_by_two(opset, t, out_axis1=1):
    """Scan of 2 states and 2 scan inputs: x [t, 3] forward on axis 0, y
    [3, t] reversed on axis 1; o1 appended on axis 0, o2 prepended on
    out_axis1."""
    scan = helper.make_node("Scan", ["s1_0", "s2_0", "x", "y"], ["s1", "s2", "o1", "o2"],
                            name="scan22", body=two_by_two_body(), num_scan_inputs=2,
                            scan_input_axes=[0, 1], scan_input_directions=[0, 1],
                            scan_output_axes=[0, out_axis1], scan_output_directions=[0, 1])
    m = model([scan], [vi("s1_0", F, [3]), vi("s2_0", F, [3]), vi("x", F, [t, 3]),
                       vi("y", F, [3, t])],
              [vi("s1"), vi("s2"), vi("o1"), vi("o2")],
              [const("w", F, [3], [1.0, -2.0, 0.25])], opset=opset)
    feeds = {"s1_0": np.array([0.5, -1.0, 2.0], np.float32),
             "s2_0": np.array([1.0, 0.0, -3.0], np.float32),
             "x": np.linspace(-1, 1, 3 * t, dtype=np.float32).reshape(t, 3),
             "y": np.linspace(2, -1, 3 * t, dtype=np.float32).reshape(3, t)}
    return m, feeds


def sum_body(rank=1, width=2):
    """(acc, e) -> (acc + e, [acc + e])"""
    shape = [width] * rank
    return helper.make_graph(
        [helper.make_node("Add", ["acc", "e"], ["acc2"]),
         helper.make_node("Identity", ["acc2"], ["out"])],
        "sum", [vi("acc", F, shape), vi("e", F, shape)], [vi("acc2", F, shape), vi("out", F, shape)])


def scan_models():
    cases = []
    for opset in (11, 16):
        m, feeds = two_by_two(opset, 4)
        cases.append((f"scan_2x2_opset{opset}", m, feeds))
    m, feeds = two_by_two(16, 11, out_axis1=-1)
    cases.append(("scan_2x2_len11_axis_neg1", m, feeds))

    return cases


def passthrough_models():
    """A state passed through, a scan output that is the element as it is,
    scan inputs an initializer and a Constant node (lengths from their
    dims), the body reading the graph input x: (name, model, the model
    ORT runs for the reference, feeds)."""
    def build(identities):
        nodes = [helper.make_node("Mul", ["e1", "x"], ["p"]),
                 helper.make_node("Add", ["acc", "p"], ["acc2"]),
                 helper.make_node("Add", ["acc2", "e2"], ["acc3"])]
        outs = ["acc3", "keep", "e1"]
        if identities:
            nodes += [helper.make_node("Identity", ["keep"], ["keep_i"]),
                      helper.make_node("Identity", ["e1"], ["e1_i"])]
            outs = ["acc3", "keep_i", "e1_i"]
        body = helper.make_graph(
            nodes, "body",
            [vi("acc", F, [2]), vi("keep", F, [2]), vi("e1", F, [2]), vi("e2", F, [2])],
            [vi(o, F, [2]) for o in outs])
        return model([helper.make_node("Constant", [], ["c"],
                                       value=const("cv", F, [2, 5],
                                                   [float(k) for k in range(10)])),
                      helper.make_node("Scan", ["zero", "x", "seq", "c"],
                                       ["acc", "kept", "els"], name="consts", body=body,
                                       num_scan_inputs=2, scan_input_axes=[0, 1],
                                       scan_input_directions=[1, 0])],
                     [vi("x", F, [2])], [vi("acc"), vi("kept"), vi("els")],
                     [const("zero", F, [2], [0.0, 0.0]),
                      const("seq", F, [5, 2], [0.5 * k for k in range(10)])])
    feeds = {"x": np.array([1.5, -2.0], np.float32)}
    return [("scan_consts_passthrough", build(False), build(True), feeds)]


def more_models():
    cases = []

    # A computed scan input whose shape value_info states.
    m = model([helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
               helper.make_node("Scan", ["init", "xt"], ["acc", "out"], name="on_xt",
                                body=sum_body(), num_scan_inputs=1)],
              [vi("init", F, [2]), vi("x", F, [2, 6])], [vi("acc"), vi("out")],
              value_info=[vi("xt", F, [6, 2])])
    cases.append(("scan_value_info_length", m,
                  {"init": np.array([1.0, -1.0], np.float32),
                   "x": np.linspace(-3, 3, 12, dtype=np.float32).reshape(2, 6)}))

    # A Scan in a Loop's body (over the graph input x, an outer value
    # there), 3 iterations, and a Loop of 2 iterations in a Scan's body.
    loop_body = helper.make_graph(
        [helper.make_node("Scan", ["acc", "x"], ["acc2", "rows"], name="inner_scan",
                          body=sum_body(), num_scan_inputs=1),
         helper.make_node("ReduceSum", ["rows"], ["tot"], keepdims=0, axes=[0])],
        "lbody", [vi("i", I64, []), vi("cond", B, []), vi("acc", F, [2])],
        [vi("cond", B, []), vi("acc2", F, [2]), vi("tot", F, [2])])
    m = model([helper.make_node("Loop", ["M", "", "init"], ["acc", "tots"], name="outer_loop",
                                body=loop_body)],
              [vi("init", F, [2]), vi("x", F, [4, 2])], [vi("acc"), vi("tots")],
              [const("M", I64, [], [3])], opset=11)
    feeds = {"init": np.array([0.5, -0.5], np.float32),
             "x": np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)}
    cases.append(("scan_in_loop", m, feeds))
    inner_loop = helper.make_graph(
        [helper.make_node("Add", ["v", "e"], ["v2"])], "ilbody",
        [vi("j", I64, []), vi("c", B, []), vi("v", F, [2])], [vi("c", B, []), vi("v2", F, [2])])
    scan_body = helper.make_graph(
        [helper.make_node("Loop", ["two", "", "acc"], ["acc2"], name="inner_loop",
                          body=inner_loop),
         helper.make_node("Neg", ["acc2"], ["n"])],
        "sbody", [vi("acc", F, [2]), vi("e", F, [2])], [vi("acc2", F, [2]), vi("n", F, [2])],
        [const("two", I64, [], [2])])
    m = model([helper.make_node("Scan", ["init", "x"], ["acc", "negs"], name="outer_scan",
                                body=scan_body, num_scan_inputs=1)],
              [vi("init", F, [2]), vi("x", F, [4, 2])], [vi("acc"), vi("negs")], opset=11)
    cases.append(("loop_in_scan", m, feeds))

    # Opset 9, and opset 8 with its batch of 1 (no sequence_lens).
    m = model([helper.make_node("Scan", ["init", "x"], ["acc", "out"], name="s9",
                                body=sum_body(), num_scan_inputs=1,
                                scan_input_directions=[1], scan_output_directions=[1])],
              [vi("init", F, [2]), vi("x", F, [5, 2])], [vi("acc"), vi("out")], opset=9)
    cases.append(("scan_opset9_reverse", m,
                  {"init": np.array([1.0, 2.0], np.float32),
                   "x": np.linspace(-2, 2, 10, dtype=np.float32).reshape(5, 2)}))
    m = model([helper.make_node("Scan", ["", "init", "x"], ["acc", "out"], name="s8",
                                body=sum_body(), num_scan_inputs=1, directions=[1])],
              [vi("init", F, [1, 2]), vi("x", F, [1, 5, 2])], [vi("acc"), vi("out")],
              opset=8)
    cases.append(("scan_opset8_batch1", m,
                  {"init": np.array([[1.0, 2.0]], np.float32),
                   "x": np.linspace(-2, 2, 10, dtype=np.float32).reshape(1, 5, 2)}))
    return cases


def refused():
    """Models that must fail: (name, model, feeds, what the message names)."""
    x = np.ones((4, 2), np.float32)
    init = np.zeros(2, np.float32)
    scan = helper.make_node("Scan", ["init", "x"], ["acc", "out"], name="dyn",
                            body=sum_body(), num_scan_inputs=1)
    cases = [("scan_symbolic_length",
              model([scan], [vi("init", F, [2]), vi("x", F, ["T", 2])], [vi("acc"), vi("out")]),
              {"init": init, "x": x},
              ["dyn", "its sequence length is not a fixed dim",
               "plugrt unrolls Scan at import", "'x'"])]
    cases.append(("scan_computed_input",
                  model([helper.make_node("Relu", ["x"], ["r"]),
                         helper.make_node("Scan", ["init", "r"], ["acc", "out"], name="on_relu",
                                          body=sum_body(), num_scan_inputs=1)],
                        [vi("init", F, [2]), vi("x", F, [4, 2])], [vi("acc"), vi("out")]),
                  {"init": init, "x": x},
                  ["on_relu", "its sequence length is not a fixed dim", "'r'"]))
    cases.append(("scan_opset8_batch2",
                  model([helper.make_node("Scan", ["", "init", "x"], ["acc", "out"], name="b2",
                                          body=sum_body(), num_scan_inputs=1)],
                        [vi("init", F, [2, 2]), vi("x", F, [2, 4, 2])], [vi("acc"), vi("out")],
                        opset=8),
                  {"init": np.zeros((2, 2), np.float32), "x": np.ones((2, 4, 2), np.float32)},
                  ["b2", "its batch is 2", "batch of 1"]))
    cases.append(("scan_opset8_sequence_lens",
                  model([helper.make_node("Scan", ["lens", "init", "x"], ["acc", "out"],
                                          name="sl", body=sum_body(), num_scan_inputs=1)],
                        [vi("lens", TensorProto.INT32, [1]), vi("init", F, [1, 2]),
                         vi("x", F, [1, 4, 2])], [vi("acc"), vi("out")], opset=8),
                  {"lens": np.array([4], np.int32), "init": np.zeros((1, 2), np.float32),
                   "x": np.ones((1, 4, 2), np.float32)},
                  ["sl", "sequence_lens 'lens' is given"]))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    args = ap.parse_args()
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, m, ref, feeds in passthrough_models():
            f = run_vs_ort(args.plugrt, work, name, m, feeds, tol=TOL, ref=ref)
            print(f"{'FAIL' if f else 'ok  '} {name}")
            fails += f
        for name, m, feeds in scan_models() + more_models():
            f = run_vs_ort(args.plugrt, work, name, m, feeds, tol=TOL)
            print(f"{'FAIL' if f else 'ok  '} {name}")
            fails += f
        for name, m, feeds, words in refused():
            fails += check_refused(args.plugrt, work, name, m, feeds, words)
    print(f"test_scan: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

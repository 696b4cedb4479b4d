#!/usr/bin/env python3
"""ONNX If and Loop folded at import (issue 25, "Control flow";
src/onnx/onnx_control.c), through `plugrt run` against ONNX Runtime.

Models that fold, each output within 1e-6 of ORT's (the folded graph does
the same float operations in the same order):
- If on an initializer and on a Constant node, true and false, a branch
  with its own initializer, a branch reading an outer value, an If nested
  in a branch;
- Loop with a constant trip count: carried values (one passed through
  unchanged), a scan output over 11 iterations (more than one Concat's 8
  inputs), the iteration number used in the body, an If on a constant
  inside the body, a Loop nested in a body, a condition that the body
  keeps true by a Constant, a constant false condition (no iteration), a
  model at opset 11 (Unsqueeze's axes an attribute) and 13 (an input).

Conditions and trip counts that the graph's shapes decide fold too: the
rank of an input whose dims are symbols, a fixed dim through Gather, Cast
and Not, a trip count from Slice and ReduceProd of a Shape.

Models that do not fold fail `plugrt run` with a message naming the node
and what is not constant: an If on a graph input, a Loop whose trip count
is a graph input, an If on a symbolic dim, a Loop whose body computes its
condition, a Loop of no iterations with a scan output.

    test_control_flow.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from ort_compare import np, onnx, helper, TensorProto, run_vs_ort

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
TOL = 1e-6


def vi(name, t=F, shape=None):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, t, dims, vals):
    return helper.make_tensor(name, t, dims, vals)


def model(nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset > 8 else 4
    return m


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], outputs, list(inits))


def if_models():
    """If models that fold: (name, model, feeds)."""
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    feeds = {"x": x}
    out = [vi("y", F, [3, 4])]
    then_b = branch("then", [helper.make_node("Mul", ["x", "two"], ["t"])], [vi("t")],
                    [const("two", F, [], [2.0])])
    else_b = branch("else", [helper.make_node("Neg", ["x"], ["e"])], [vi("e")])
    cases = []
    for cond in (True, False):
        # Condition an initializer.
        m = model([helper.make_node("If", ["c"], ["y"], then_branch=then_b,
                                    else_branch=else_b)],
                  [vi("x", F, [3, 4])], out, [const("c", B, [], [cond])])
        cases.append((f"if_init_{cond}", m, feeds))
        # Condition a Constant node's value.
        m = model([helper.make_node("Constant", [], ["c"], value=const("v", B, [], [cond])),
                   helper.make_node("If", ["c"], ["y"], then_branch=then_b,
                                    else_branch=else_b)],
                  [vi("x", F, [3, 4])], out)
        cases.append((f"if_constant_{cond}", m, feeds))
    # A branch reading an outer value (ORT wants it through an Identity),
    # and a nested If in the other one.
    inner = helper.make_node("If", ["c2"], ["n"], name="inner",
                             then_branch=branch("t2", [helper.make_node(
                                 "Add", ["a", "x"], ["s"])], [vi("s")]),
                             else_branch=branch("e2", [helper.make_node(
                                 "Sub", ["a", "x"], ["d"])], [vi("d")]))
    m = model([helper.make_node("Abs", ["x"], ["a"]),
               helper.make_node("If", ["c"], ["r"], name="outer",
                                then_branch=branch("t1", [inner], [vi("n")],
                                                   [const("c2", B, [], [False])]),
                                else_branch=branch("e1", [helper.make_node(
                                    "Identity", ["a"], ["ai"])], [vi("ai")])),
               helper.make_node("Mul", ["r", "x"], ["y"])],
              [vi("x", F, [3, 4])], out, [const("c", B, [], [True])])
    cases.append(("if_nested_outer_value", m, feeds))
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    m2.graph.initializer[0].CopyFrom(const("c", B, [], [False]))
    cases.append(("if_reads_outer_value", m2, feeds))
    return cases


def loop_body(scan=True, with_if=False, cond_const=False):
    """A body: (i, cond, acc, keep) -> (cond, acc + x * i, keep, [acc])."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Mul", ["x", "fi"], ["xi"]),
             helper.make_node("Add", ["acc", "xi"], ["acc2"])]
    outs = ["cond", "acc2", "keep"]
    inits = []
    if with_if:
        nodes.append(helper.make_node(
            "If", ["bc"], ["sc"],
            then_branch=branch("bt", [helper.make_node("Mul", ["acc2", "k"], ["m"])],
                               [vi("m")], [const("k", F, [], [0.5])]),
            else_branch=branch("be", [helper.make_node("Neg", ["acc2"], ["q"])],
                               [vi("q")])))
        inits.append(const("bc", B, [], [True]))
        scan_name = "sc"
    else:
        scan_name = "acc2"
    if cond_const:
        nodes.append(helper.make_node("Constant", [], ["cout"],
                                      value=const("t", B, [], [True])))
        outs[0] = "cout"
    if scan:
        outs.append(scan_name)
    inputs = [vi("i", I64, []), vi("cond", B, []), vi("acc"), vi("keep")]
    return helper.make_graph(nodes, "body", inputs, [vi(o) for o in outs], inits)


def loop_models():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    feeds = {"x": x}
    cases = []
    zero = const("zero", F, [2, 3], [0.0] * 6)
    for opset in (11, 13):
        for trips in (1, 3, 11):
            m = model([helper.make_node("Loop", ["M", "", "zero", "x"], ["acc", "kept", "scan"],
                                        name="loop", body=loop_body())],
                      [vi("x", F, [2, 3])], [vi("acc"), vi("kept"), vi("scan")],
                      [const("M", I64, [], [trips]), zero], opset=opset)
            cases.append((f"loop_{trips}_opset{opset}", m, feeds))
    # An If in the body, a Constant keeping the condition true, a condition
    # input given as a constant.
    m = model([helper.make_node("Loop", ["M", "c", "zero", "x"], ["acc", "kept", "scan"],
                                body=loop_body(with_if=True, cond_const=True))],
              [vi("x", F, [2, 3])], [vi("acc"), vi("kept"), vi("scan")],
              [const("M", I64, [], [4]), const("c", B, [], [True]), zero])
    cases.append(("loop_if_in_body", m, feeds))
    # No iteration (a false condition): the carried values are the
    # initial ones.
    m = model([helper.make_node("Loop", ["M", "c", "zero", "x"], ["acc", "kept"],
                                body=loop_body(scan=False)),
               helper.make_node("Add", ["acc", "kept"], ["y"])],
              [vi("x", F, [2, 3])], [vi("y")],
              [const("M", I64, [], [5]), const("c", B, [], [False]), zero])
    cases.append(("loop_none", m, feeds))
    # A Loop nested in a Loop's body: the outer runs 3 times an inner Loop
    # of 2 iterations on its carried value.
    inner = helper.make_node("Loop", ["M2", "", "acc", "x"], ["acc_in", "kept_in"],
                             name="inner", body=loop_body(scan=False))
    outer_body = helper.make_graph(
        [inner, helper.make_node("Add", ["acc_in", "one"], ["acc2"])], "outer",
        [vi("j", I64, []), vi("cond", B, []), vi("acc")],
        [vi("cond", B, []), vi("acc2"), vi("acc2")],
        [const("M2", I64, [], [2]), const("one", F, [], [1.0])])
    m = model([helper.make_node("Loop", ["M", "", "zero"], ["acc", "scan"],
                                name="outer", body=outer_body)],
              [vi("x", F, [2, 3])], [vi("acc"), vi("scan")],
              [const("M", I64, [], [3]), zero])
    cases.append(("loop_nested", m, feeds))
    return cases


def shape_models():
    """Conditions and trip counts computed from shapes the graph fixes: the
    rank of an input with symbolic dims, a fixed dim, a Constant vector
    gathered, Slice, Cast, Not, arithmetic. Feeds at two batch sizes where
    dim 0 is symbolic."""
    then_b = branch("then", [helper.make_node("Mul", ["x", "two"], ["t"])], [vi("t")],
                    [const("two", F, [], [2.0])])
    else_b = branch("else", [helper.make_node("Neg", ["x"], ["e"])], [vi("e")])
    cases = []
    sym = [vi("x", F, ["batch", 4])]
    for b in (1, 3):
        feeds = {"x": np.linspace(-2, 2, 4 * b, dtype=np.float32).reshape(b, 4)}
        # rank: Size(Shape(x)) == 2 (true) with dim 0 a symbol
        m = model([helper.make_node("Shape", ["x"], ["s"]),
                   helper.make_node("Size", ["s"], ["r"]),
                   helper.make_node("Equal", ["r", "two_i"], ["c"]),
                   helper.make_node("If", ["c"], ["y"], name="by_rank", then_branch=then_b,
                                    else_branch=else_b)],
                  sym, [vi("y")], [const("two_i", I64, [], [2])])
        cases.append((f"if_rank_b{b}", m, feeds))
        # a fixed dim: Shape(x)[1] > 5 (false), through Gather, Cast and Not
        m = model([helper.make_node("Shape", ["x"], ["s"]),
                   helper.make_node("Gather", ["s", "one"], ["d1"], axis=0),
                   helper.make_node("Cast", ["d1"], ["d1i"], to=TensorProto.INT32),
                   helper.make_node("Cast", ["five"], ["fivei"], to=TensorProto.INT32),
                   helper.make_node("Greater", ["d1i", "fivei"], ["g"]),
                   helper.make_node("Not", ["g"], ["c"]),
                   helper.make_node("If", ["c"], ["y"], name="by_dim", then_branch=then_b,
                                    else_branch=else_b)],
                  sym, [vi("y")], [const("one", I64, [], [1]), const("five", I64, [], [5])])
        cases.append((f"if_dim_b{b}", m, feeds))
    # a Loop whose trip count is the product of the fixed dims 1.. (Slice,
    # ReduceProd), minus 1: 4 * 3 - 1 = 11 iterations
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 4, 3)
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               helper.make_node("Slice", ["s", "st", "en"], ["tail"]),
               helper.make_node("ReduceProd", ["tail"], ["p"], keepdims=0),
               helper.make_node("Sub", ["p", "one"], ["M"]),
               helper.make_node("Loop", ["M", "", "zero"], ["acc"], name="by_shape",
                                body=helper.make_graph(
                                    [helper.make_node("Add", ["acc_in", "x"], ["acc2"])],
                                    "body", [vi("i", I64, []), vi("cond", B, []),
                                             vi("acc_in")],
                                    [vi("cond", B, []), vi("acc2")]))],
              [vi("x", F, ["n", 4, 3])], [vi("acc")],
              [const("st", I64, [1], [1]), const("en", I64, [1], [3]),
               const("one", I64, [], [1]), const("zero", F, [], [0.0])])
    cases.append(("loop_trips_from_shape", m, {"x": x}))
    return cases


def refused():
    """Models that must fail: (name, model, feeds, what the message names)."""
    x = np.ones((2, 3), np.float32)
    then_b = branch("then", [helper.make_node("Neg", ["x"], ["t"])], [vi("t")])
    else_b = branch("else", [helper.make_node("Abs", ["x"], ["e"])], [vi("e")])
    zero = const("zero", F, [2, 3], [0.0] * 6)
    cases = [
        ("if_input", model([helper.make_node("If", ["c"], ["y"], name="choose",
                                             then_branch=then_b, else_branch=else_b)],
                           [vi("x", F, [2, 3]), vi("c", B, [])], [vi("y")]),
         {"x": x, "c": np.array(True)}, ["choose", "condition 'c' is not a constant"]),
        ("loop_trips_input",
         model([helper.make_node("Loop", ["M", "", "zero", "x"], ["acc", "kept", "scan"],
                                 name="lp", body=loop_body())],
               [vi("x", F, [2, 3]), vi("M", I64, [])], [vi("acc"), vi("kept"), vi("scan")],
               [zero]),
         {"x": x, "M": np.array(3, np.int64)}, ["lp", "trip count M 'M' is not a constant"]),
    ]
    # A condition on a symbolic dim: the graph does not decide it.
    cases.append(("if_symbolic_dim",
                  model([helper.make_node("Shape", ["x"], ["s"]),
                         helper.make_node("Gather", ["s", "zero_i"], ["d0"], axis=0),
                         helper.make_node("Equal", ["d0", "one_i"], ["c"]),
                         helper.make_node("If", ["c"], ["y"], name="by_batch",
                                          then_branch=then_b, else_branch=else_b)],
                        [vi("x", F, ["batch", 3])], [vi("y")],
                        [const("zero_i", I64, [], [0]), const("one_i", I64, [], [1])]),
                  {"x": x}, ["by_batch", "condition 'c' is not a constant",
                             "fixed dims the graph states"]))
    body = loop_body(scan=False)
    body.node.append(helper.make_node("Identity", ["cond"], ["c3"]))
    body.output[0].name = "c3"
    cases.append(("loop_computed_cond",
                  model([helper.make_node("Loop", ["M", "", "zero", "x"], ["acc", "kept"],
                                          name="lc", body=body)],
                        [vi("x", F, [2, 3])], [vi("acc"), vi("kept")],
                        [const("M", I64, [], [2]), zero]),
                  {"x": x}, ["lc", "condition output 'c3' is computed"]))
    cases.append(("loop_empty_scan",
                  model([helper.make_node("Loop", ["M", "", "zero", "x"],
                                          ["acc", "kept", "scan"], name="le",
                                          body=loop_body())],
                        [vi("x", F, [2, 3])], [vi("acc"), vi("kept"), vi("scan")],
                        [const("M", I64, [], [0]), zero]),
                  {"x": x}, ["le", "no iteration"]))
    return cases


def check_refused(plugrt, work, name, m, feeds, words):
    """plugrt run fails with an exit status (not a signal) and a message
    holding every one of words."""
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    args = [plugrt, "run", path, "-n", "1", "--warmup", "0"]
    for n, v in feeds.items():
        np.save(os.path.join(d, f"in_{n}.npy"), v)
        args += ["-i", f"{n}={os.path.join(d, f'in_{n}.npy')}"]
    r = subprocess.run(args, capture_output=True, text=True)
    text = r.stdout + r.stderr
    if r.returncode <= 0 or r.returncode >= 128 or any(w not in text for w in words):
        print(f"FAIL {name}: expected a refusal naming {words}; exit {r.returncode}:\n{text}")
        return 1
    print(f"ok   {name}: refused: {text.strip().splitlines()[-1]}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    args = ap.parse_args()
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, m, feeds in if_models() + loop_models() + shape_models():
            f = run_vs_ort(args.plugrt, work, name, m, feeds, tol=TOL)
            print(f"{'FAIL' if f else 'ok  '} {name}")
            fails += f
        for name, m, feeds, words in refused():
            fails += check_refused(args.plugrt, work, name, m, feeds, words)
    print(f"test_control_flow: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

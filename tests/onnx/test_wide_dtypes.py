#!/usr/bin/env python3
"""The wide element types (float64, int16, uint16, uint32, uint64) through
`plugrt run` against ONNX Runtime (issue 25, "the element types ONNX Runtime
serves"): graph inputs and outputs as .npy files, initializers from raw_data
and from the typed fields (double_data, uint64_data, int32_data), the ops
that take them on the CPU. Where ORT has no kernel for a type (it serves
fewer types than ONNX defines), numpy's result is the reference, and the
test says so.

Exact: integer results (wrapping, as numpy and ORT) and float64 results of
one IEEE operation (Add, Mul, Div, Cast, Max, comparisons). Within 1e-12
relative: float64 results of libm functions and of sums whose order may
differ (Exp, Tanh, ReduceLogSumExp, Einsum, CumSum).

Refused: a wide type on an op whose kernels do not take it (Conv of
float64) fails the build naming the layer and the dtype; a .npy of
complex64 fails naming the file.

    test_wide_dtypes.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from ort_compare import np, onnx, helper, TensorProto, ort

D, F, I64 = TensorProto.DOUBLE, TensorProto.FLOAT, TensorProto.INT64
I16, U16, U32, U64 = TensorProto.INT16, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64
NP = {D: np.float64, F: np.float32, I64: np.int64, I16: np.int16, U16: np.uint16,
      U32: np.uint32, U64: np.uint64, TensorProto.BOOL: np.bool_}


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def one(op, t, feeds, out_t=None, attrs=None, nin=None, ref=None, tol=0.0, opset=17):
    """A model of one node over inputs a, b, ... of type t, output y."""
    names = list(feeds)[:nin] if nin else list(feeds)
    ins = [vi(n, t, list(feeds[n].shape)) for n in names]
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    return model([node], ins, [vi("y", out_t or t, None)], opset=opset), feeds, ref, tol


def rng_vals(r, dt, shape, lo=-50, hi=50):
    if np.dtype(dt).kind == "f":
        return r.uniform(-3, 3, shape).astype(dt)
    info = np.iinfo(dt)
    return r.integers(max(lo, info.min), min(hi, info.max) + 1, shape).astype(dt)


def cases():
    r = np.random.default_rng(20261207)
    c = {}
    a64 = r.uniform(-3, 3, (3, 4))
    b64 = r.uniform(-3, 3, (4,))
    # float64: one IEEE operation each, exact.
    for op in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
        c[f"f64_{op}"] = one(op, D, {"a": a64, "b": b64})
    c["f64_Pow"] = one("Pow", D, {"a": np.abs(a64) + 0.5, "b": b64}, tol=1e-12)
    c["f64_Mod_fmod"] = one("Mod", D, {"a": a64, "b": b64}, attrs={"fmod": 1})
    for op in ("Neg", "Abs", "Relu", "Sign", "Floor", "Ceil", "Sqrt", "Reciprocal"):
        c[f"f64_{op}"] = one(op, D, {"a": np.abs(a64) if op == "Sqrt" else a64})
    import math
    funcs = {"Exp": np.exp, "Log": np.log, "Tanh": np.tanh, "Sin": np.sin,
             "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
             "Erf": np.vectorize(math.erf), "Softplus": lambda x: np.log1p(np.exp(x))}
    for op, fn in funcs.items():
        c[f"f64_{op}"] = one(op, D, {"a": np.abs(a64) + 0.1 if op == "Log" else a64},
                             tol=1e-12, ref=lambda f, fn=fn: fn(f["a"]))
    for op in ("Equal", "Less", "GreaterOrEqual"):
        b = b64.copy()
        b[1] = a64[0, 1]
        c[f"f64_{op}"] = one(op, D, {"a": a64, "b": b}, out_t=TensorProto.BOOL)
    nan = a64.copy()
    nan[1, 2] = np.nan
    c["f64_IsNaN"] = one("IsNaN", D, {"a": nan}, out_t=TensorProto.BOOL)
    for op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceLogSumExp", "ReduceL2"):
        c[f"f64_{op}"] = one(op, D, {"a": a64}, attrs={"axes": [1]}, tol=1e-12, opset=13
                             if op != "ReduceSum" else 11)
    m = model([helper.make_node("CumSum", ["a", "ax"], ["y"])],
              [vi("a", D, [3, 4])], [vi("y", D, None)],
              [helper.make_tensor("ax", I64, [], [1])])
    c["f64_CumSum"] = (m, {"a": a64}, None, 1e-12)
    c["f64_Einsum"] = one("Einsum", D, {"a": a64, "b": r.uniform(-1, 1, (4, 5))},
                          attrs={"equation": "ij,jk->ik"}, tol=1e-12)
    for op in ("Softmax", "LogSoftmax"):
        c[f"f64_{op}"] = one(op, D, {"a": a64 * 100}, attrs={"axis": 1}, tol=1e-12)
    for op in ("ArgMax", "ArgMin"):
        c[f"f64_{op}"] = one(op, D, {"a": a64}, out_t=I64, attrs={"axis": 1})
    m = model([helper.make_node("Clip", ["a", "lo", "hi"], ["y"])], [vi("a", D, [3, 4])],
              [vi("y", D, None)], [helper.make_tensor("lo", D, [], [-1.25]),
                                   helper.make_tensor("hi", D, [], [2.0 ** 0.5])])
    c["f64_Clip"] = (m, {"a": a64}, None, 0.0)
    c["f64_Clip_unbounded"] = one("Clip", D, {"a": a64 * 1e300})
    c["f64_MatMul"] = one("MatMul", D, {"a": r.uniform(-1, 1, (2, 3, 5)),
                                        "b": r.uniform(-1, 1, (5, 4))}, tol=1e-13)
    c["uint32_MatMul"] = one("MatMul", U32, {"a": r.integers(0, 2 ** 20, (3, 5)).astype(np.uint32),
                                             "b": r.integers(0, 2 ** 20, (5, 2)).astype(np.uint32)},
                             ref=lambda f: (f["a"].astype(np.uint64) @ f["b"].astype(np.uint64))
                             .astype(np.uint32))
    c["f64_Cast_to_f32"] = one("Cast", D, {"a": a64}, out_t=F, attrs={"to": F})
    c["f32_Cast_to_f64"] = one("Cast", F, {"a": a64.astype(np.float32)}, out_t=D,
                               attrs={"to": D})
    big = np.array([-2.5, 1e19, 2e19, np.nan, 3.9, -0.0])
    c["f64_Cast_to_i64"] = one("Cast", D, {"a": big[[0, 4, 5]]}, out_t=I64, attrs={"to": I64})
    # Byte movers and a double constant built from typed fields (double_data).
    m = model([helper.make_node("Transpose", ["a"], ["t"], perm=[1, 0]),
               helper.make_node("Concat", ["t", "k"], ["c"], axis=0),
               helper.make_node("Gather", ["c", "i"], ["g"], axis=0),
               helper.make_node("Reshape", ["g", "s"], ["y"])],
              [vi("a", D, [3, 4])], [vi("y", D, None)],
              [helper.make_tensor("k", D, [1, 3], [0.1, 1e-300, 2.0 ** 60 + 1.0]),
               helper.make_tensor("i", I64, [3], [4, 0, 2]),
               helper.make_tensor("s", I64, [1], [-1])])
    c["f64_movers_typed_init"] = (m, {"a": a64}, None, 0.0)
    m = model([helper.make_node("ConstantOfShape", ["s"], ["y"],
                                value=helper.make_tensor("v", D, [1], [0.1]))],
              [], [vi("y", D, None)], [helper.make_tensor("s", I64, [2], [2, 3])])
    c["f64_ConstantOfShape"] = (m, {}, None, 0.0)
    m = model([helper.make_node("Where", ["cond", "a", "b"], ["y"])],
              [vi("cond", TensorProto.BOOL, [3, 4]), vi("a", D, [3, 4]), vi("b", D, [4])],
              [vi("y", D, None)])
    c["f64_Where"] = (m, {"cond": a64 > 0, "a": a64, "b": b64}, None, 0.0)

    # The integer types: wrapping arithmetic, shifts, comparisons, casts.
    for t in (I16, U16, U32, U64):
        dt = NP[t]
        tag = np.dtype(dt).name
        info = np.iinfo(dt)
        a = rng_vals(r, dt, (3, 4), 0 if info.min == 0 else -50)
        b = rng_vals(r, dt, (4,), 1, 50)
        a[0, 0], a[0, 1] = info.max, info.min  # wrap
        for op in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
            ref = None
            if op == "Div":
                ref = lambda f, dt=dt: (np.trunc(f["a"].astype(np.float64) / f["b"])
                                        .astype(np.int64).astype(dt))
            elif op in ("Max", "Min"):
                ref = lambda f, fn=np.maximum if op == "Max" else np.minimum: fn(f["a"], f["b"])
            c[f"{tag}_{op}"] = one(op, t, {"a": a, "b": b}, ref=ref)
        c[f"{tag}_Mod"] = one("Mod", t, {"a": a, "b": b})
        if t != U64:
            c[f"{tag}_ArgMax"] = one("ArgMax", t, {"a": a}, out_t=I64, attrs={"axis": 0},
                                     ref=lambda f: np.argmax(f["a"], axis=0,
                                                             keepdims=True).astype(np.int64))
        m = model([helper.make_node("Clip", ["a", "lo", "hi"], ["y"])], [vi("a", t, [3, 4])],
                  [vi("y", t, None)], [helper.make_tensor("lo", t, [], [3]),
                                       helper.make_tensor("hi", t, [], [40])])
        c[f"{tag}_Clip"] = (m, {"a": a}, lambda f: np.clip(f["a"], 3, 40).astype(f["a"].dtype),
                            0.0)
        c[f"{tag}_Less"] = one("Less", t, {"a": a, "b": b}, out_t=TensorProto.BOOL)
        c[f"{tag}_Cast_to_f64"] = one("Cast", t, {"a": a}, out_t=D, attrs={"to": D})
        c[f"{tag}_Cast_from_f64"] = one(
            "Cast", D, {"a": np.array([0.0, 7.9, 100.5, 3.0, -0.0])}, out_t=t,
            attrs={"to": t})
        # Out of the type's range ONNX leaves the result undefined (ORT's C
        # casts wrap or give 0); plugrt saturates, NaN 0 (cast.c).
        c[f"{tag}_Cast_from_f64_saturating"] = one(
            "Cast", D, {"a": np.array([-1.5, np.nan, 7.9, 70000.5, 5e9, 1e20, -1e20])},
            out_t=t, attrs={"to": t},
            ref=("own", lambda f, info=info, dt=dt: np.array(
                [0 if info.min == 0 else -1, 0, 7, min(70000, info.max),
                 min(5000000000, info.max), info.max, info.min], dtype=dt)))
        if info.min == 0:
            sh = (np.arange(4) * (info.bits // 3)).astype(dt)
            sh[3] = info.bits  # a shift by the width gives 0
            for d in ("LEFT", "RIGHT"):
                c[f"{tag}_BitShift_{d}"] = one(
                    "BitShift", t, {"a": a, "b": sh}, attrs={"direction": d},
                    ref=lambda f, d=d, bits=info.bits, dt=dt: np.where(
                        f["b"] >= bits, 0,
                        (np.left_shift if d == "LEFT" else np.right_shift)(
                            f["a"], np.minimum(f["b"], bits - 1))).astype(dt))
        else:
            c[f"{tag}_Neg_Abs"] = (model([helper.make_node("Neg", ["a"], ["n"]),
                                         helper.make_node("Abs", ["n"], ["y"])],
                                        [vi("a", t, [3, 4])], [vi("y", t, None)]),
                                  {"a": a}, None, 0.0)
        # A constant from the typed field ONNX keeps this type in.
        k = rng_vals(r, dt, (4,), 0, 9)
        m = model([helper.make_node("Add", ["a", "k"], ["y"])], [vi("a", t, [3, 4])],
                  [vi("y", t, None)], [helper.make_tensor("k", t, [4], k.tolist())])
        c[f"{tag}_typed_init"] = (m, {"a": a}, None, 0.0)
    u = np.array([[1, 2, 3, 4], [2 ** 32 - 1, 1, 0, 5]], np.uint32)
    for t, arr in ((U32, u), (U64, u.astype(np.uint64) * np.uint64(2 ** 31))):
        tag = np.dtype(NP[t]).name
        m = model([helper.make_node("CumSum", ["a", "ax"], ["y"])], [vi("a", t, [2, 4])],
                  [vi("y", t, None)], [helper.make_tensor("ax", I64, [], [1])])
        c[f"{tag}_CumSum"] = (m, {"a": arr}, lambda f: np.cumsum(f["a"], axis=1,
                                                                dtype=f["a"].dtype), 0.0)
    c["uint32_ReduceSum"] = one("ReduceSum", U32, {"a": u}, attrs={"axes": [1]}, opset=11,
                                ref=lambda f: f["a"].sum(axis=1, keepdims=True,
                                                         dtype=np.uint32))
    return c


def run_ref(path, feeds, ref):
    """ORT's outputs; where ORT has no kernel for the type, the case's own
    numpy reference (ref); (outputs, which)."""
    if isinstance(ref, tuple):
        return {"y": ref[1](feeds)}, "plugrt's rule where ONNX has none"
    try:
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds))), "ORT"
    except Exception as e:  # ORT serves fewer types than ONNX defines
        why = str(e).splitlines()[0]
        why = why[why.find("Could not find"):][:70] if "Could not find" in why else why[:70]
        if ref is None:
            raise
        return {"y": ref(feeds)}, "numpy (ORT: %s)" % why


def check(plugrt, work, name, m, feeds, ref, tol):
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    want, which = run_ref(path, feeds, ref)
    args = [plugrt, "run", path, "-o", d, "-n", "1", "--warmup", "0"]
    for n, v in feeds.items():
        np.save(os.path.join(d, f"in_{n}.npy"), v)
        args += ["-i", f"{n}={os.path.join(d, f'in_{n}.npy')}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL {name}: plugrt run failed:\n{p.stdout}\n{p.stderr}")
        return 1
    fails = 0
    for n, w in want.items():
        got = np.load(os.path.join(d, f"output_{n}.npy"))
        w = np.asarray(w)
        if got.dtype != w.dtype or got.shape != w.shape:
            print(f"FAIL {name}: {n} is {got.dtype}{got.shape}, {which} {w.dtype}{w.shape}")
            fails += 1
            continue
        if w.dtype.kind == "f":
            both_nan = np.isnan(got) & np.isnan(w)
            with np.errstate(invalid="ignore"):
                err = np.where(both_nan | (got == w), 0.0,
                               np.abs(got - w) / np.maximum(np.abs(w), 1e-300))
            ok = bool((err <= tol).all())
        else:
            ok = bool((got == w).all())
        print(f"{'ok  ' if ok else 'FAIL'} {name} {n}: against {which}")
        if not ok:
            print(f"  got  {got.ravel()[:12]}\n  want {w.ravel()[:12]}")
        fails += not ok
    return fails


def refusals(plugrt, work):
    """Wide types where no kernel takes them, and a .npy plugrt cannot read."""
    fails = 0
    d = os.path.join(work, "refused")
    os.makedirs(d)
    m = model([helper.make_node("Conv", ["a", "w"], ["y"], name="conv")],
              [vi("a", D, [1, 2, 5, 5]), vi("w", D, [3, 2, 3, 3])], [vi("y", D, None)])
    path = os.path.join(d, "conv.onnx")
    onnx.save(m, path)
    p = subprocess.run([plugrt, "run", path, "--random-inputs", "-n", "1"],
                       capture_output=True, text=True)
    words = ("conv", "float64")
    if p.returncode == 0 or not all(w in p.stderr for w in words):
        print(f"FAIL refused Conv float64: rc {p.returncode}, wanted {words} in:\n{p.stderr}")
        fails += 1
    else:
        print("ok   refused Conv float64: " + p.stderr.strip().splitlines()[-1][:160])
    m = model([helper.make_node("Neg", ["a"], ["y"])], [vi("a", D, [3])], [vi("y", D, None)])
    path = os.path.join(d, "neg.onnx")
    onnx.save(m, path)
    np.save(os.path.join(d, "c.npy"), np.zeros(3, np.complex64))
    p = subprocess.run([plugrt, "run", path, "-i", "a=" + os.path.join(d, "c.npy")],
                       capture_output=True, text=True)
    if p.returncode == 0 or "c.npy" not in p.stderr or "<c8" not in p.stderr:
        print(f"FAIL refused complex64 .npy: rc {p.returncode}:\n{p.stderr}")
        fails += 1
    else:
        print("ok   refused complex64 .npy: " + p.stderr.strip().splitlines()[-1][:160])
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    args = ap.parse_args()
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, (m, feeds, ref, tol) in cases().items():
            fails += check(args.plugrt, work, name, m, feeds, ref, tol)
        fails += refusals(args.plugrt, work)
    print(f"test_wide_dtypes: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

"""What the ONNX tests that compare `plugrt run` with ONNX Runtime share
(test_qdq_fusion.py, test_qoperator.py, test_qlut_fold.py,
test_conv_add_fold.py): their imports, skipped (exit 77) when onnx, numpy
or onnxruntime is missing; run_vs_ort, which runs one model on both and
compares every output; run_fused_or_not, which runs a model fused or
with --no-fuse and inspects its plan; and ort_int8_exact, whether ORT's
8-bit products are exact on this CPU; compare_folded, a folded run's
outputs against the unfused run's bits and ORT's values."""
import os
import platform
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto  # noqa: F401 (re-exported)
    import onnxruntime as ort
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)


def ort_int8_exact():
    """Whether ONNX Runtime's 8-bit products (QLinearConv, QLinearMatMul,
    MatMulInteger, what its optimizer makes of DQ -> Conv -> Q) are exact
    here. On an x86 CPU without VNNI its u8 x s8 kernels add pairs of
    products in saturating 16-bit lanes (vpmaddubsw), so they are not:
    on a 2-core AMD EPYC with AVX2 alone, QLinearConvs came out up to 106
    steps off. plugrt's integer sums are exact on every CPU."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        return True
    return bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})


def run_vs_ort(plugrt, work, name, model, feeds, tol=0.0, fused=None, layers=None,
               int8=False, ref=None):
    """Runs model on ORT (CPU, default optimizations) and on plugrt (`run
    -o`, in work/name); every output within tol of ORT's, NaN equal to NaN.
    tol: one tolerance for all outputs, or {output: tolerance} (absent:
    exact). fused: a pattern name that plugrt's log (-v) must not report as
    left unfused; layers: {op: n}, the plan must hold n layers of each of
    those built-ins. int8: the model has 8-bit products; where ORT's are
    not exact (ort_int8_exact), the reference is ORT with its optimizations
    off (DequantizeLinear, the float op, QuantizeLinear: exact up to float
    rounding) and integer outputs may be 1 step off. ref: a model ORT runs
    in model's place (the same computation, written so that ORT gets it
    right). Returns the number of failures."""
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    so = ort.SessionOptions()
    if int8 and not ort_int8_exact():
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        base = tol
        tol = {}
        for o in sess_outputs(path):
            t = base.get(o.name, 0.0) if isinstance(base, dict) else base
            integer = o.type.tensor_type.elem_type in (TensorProto.UINT8, TensorProto.INT8)
            tol[o.name] = max(t, 1.0) if integer else t
        print(f"note {name}: ORT's 8-bit products are not exact on this CPU (no VNNI): "
              f"the reference is ORT unoptimized, integer outputs within 1")
    ref_path = path
    if ref is not None:
        ref_path = os.path.join(d, "ref.onnx")
        onnx.save(ref, ref_path)
    sess = ort.InferenceSession(ref_path, so, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    args = [plugrt, "run", path, "-o", d, "-n", "1", "--warmup", "0"]
    if fused:
        args.append("-v")
    for n, v in feeds.items():
        np.save(os.path.join(d, f"in_{n}.npy"), v)
        args += ["-i", f"{n}={os.path.join(d, f'in_{n}.npy')}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL {name}: plugrt run failed:\n{r.stdout}\n{r.stderr}")
        return 1
    fails = 0
    if fused and "left unfused" in r.stdout + r.stderr:
        print(f"FAIL {name}: {fused} was left unfused:\n{r.stdout}{r.stderr}")
        fails += 1
    if layers:
        plan = os.path.join(d, "model.plan")
        b = subprocess.run([plugrt, "build", path, "-o", plan], capture_output=True, text=True)
        i = subprocess.run([plugrt, "inspect", plan], capture_output=True, text=True)
        have = {op: i.stdout.count("plugrt::%s@" % op) for op in layers}
        if b.returncode or i.returncode or have != layers:
            print(f"FAIL {name}: layers {have}, want {layers}:\n{b.stderr}{i.stdout}")
            fails += 1
    for n, ref in want.items():
        got = np.load(os.path.join(d, f"output_{n}.npy"))
        ref = np.asarray(ref)
        t = tol.get(n, 0.0) if isinstance(tol, dict) else tol
        same = got == ref  # infinities too
        if ref.dtype.kind == "f":
            same |= np.isnan(got) & np.isnan(ref)
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(got.astype(np.float64) - ref.astype(np.float64)))
        diff = np.nan_to_num(diff, nan=np.inf)
        ok = got.dtype == ref.dtype and got.shape == ref.shape and bool((diff <= t).all())
        print(f"{'ok' if ok else 'FAIL'} {name} {n}: {int((diff != 0).sum())} of {diff.size} "
              f"elements differ from ORT, max {diff.max() if diff.size else 0} (allowed {t})")
        fails += not ok
    return fails


def sess_outputs(path):
    """The graph outputs of the model at path (ValueInfoProto)."""
    return list(onnx.load(path, load_external_data=False).graph.output)


def run_fused_or_not(plugrt, d, path, feeds, tag, no_fuse, build_args=()):
    """Runs the model once with `plugrt run -v` (with --no-fuse when asked:
    every node its own layer, the unfused reference), its outputs as .npy
    into d/tag, and builds and inspects its plan; returns (output folder,
    the run's log, inspect's text). Raises RuntimeError with plugrt's
    messages when a step fails."""
    out = os.path.join(d, tag)
    os.makedirs(out)
    nf = ["--no-fuse"] if no_fuse else []
    args = [plugrt, "run", path, "-o", out, "-n", "1", "--warmup", "0", "-v"] + nf
    for n, v in feeds.items():
        f = os.path.join(d, f"in_{n}.npy")
        np.save(f, v)
        args += ["-i", f"{n}={f}"]
    r = subprocess.run(args, capture_output=True, text=True)
    plan = os.path.join(d, tag + ".plan")
    b = subprocess.run([plugrt, "build", path, "-o", plan] + list(build_args) + nf,
                       capture_output=True, text=True)
    i = subprocess.run([plugrt, "inspect", plan], capture_output=True, text=True)
    if r.returncode or b.returncode or i.returncode:
        raise RuntimeError(f"plugrt failed:\n{r.stderr}{b.stderr}{i.stderr}")
    return out, r.stdout + r.stderr, i.stdout


def compare_folded(fused, apart, want, tol):
    """The failures (strings) of a folded run's outputs (.npy in folder
    fused) against the unfused run's in apart, bit for bit, and against
    ORT's outputs `want` within tol * (1 + |value|)."""
    fails = []
    for n, ref in want.items():
        got = np.load(os.path.join(fused, f"output_{n}.npy"))
        ref_pl = np.load(os.path.join(apart, f"output_{n}.npy"))
        if got.shape != ref_pl.shape or not np.array_equal(got.view(np.uint32),
                                                           ref_pl.view(np.uint32)):
            fails.append(f"{n}: {int((got != ref_pl).sum())} elements differ from the "
                         "unfused layers'")
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        if got.shape != ref.shape or (diff > tol * (1 + np.abs(ref))).any():
            fails.append(f"{n}: max {diff.max()} off ORT")
    return fails

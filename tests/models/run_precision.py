#!/usr/bin/env python3
"""Reduced precision on the zoo (issue 24), on the CPU, against plugrt's own
float32 engine.

    run_precision.py --plugrt PATH --model NAME [--models-dir DIR]
                     [--shared DIR] [--work DIR]

At the model's first shape (run_models.py's list), seeded random inputs run
through the float32 engine (`plugrt run MODEL -o DIR`), whose outputs are
the reference. Then

    plugrt run MODEL --fp16 --compare DIR --rtol T --atol T * S
    plugrt run MODEL --bf16 --compare DIR --rtol T --atol T * S

must pass, S the largest reference magnitude (the smallest such over the
outputs, as run_models.py), T 2e-2 for float16 (11-bit mantissas rounded at
every layer's output, over up to ~70 layers) and 1e-1 for bfloat16 (8
bits); -v's log must say that some layers ran in 16 bits.

detect_post is not among the models: its NonMaxSuppression selects boxes
by score order, and scores rounded to 16 bits reorder near-ties, so other
boxes are selected (a different answer, not a tolerance).

A model whose float32 values leave float16's range (MobileNet's logits are
~1e-9 with its random weights, below float16's smallest subnormal 6e-8)
cannot pass in float16 whatever the kernels do; FP16_SKIP lists those, with
the reason, and they are checked in bfloat16 only.

Strongly typed float16 (--typed): the model's float32 initializers, inputs
and outputs converted to float16 with onnx's helpers (no Cast at the
boundary: the network is float16 throughout) builds and runs as typed, with
float16 outputs, within T of the float32 engine's outputs (the inputs
rounded to float16; the references kept in float32).

Exit status 0 pass, 1 a mismatch or an error, 77 (skipped) when the model
or onnx is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

import run_models as rm

SKIP = 77
TOL = {"fp16": 2e-2, "bf16": 1e-1}
# Models whose float32 values leave float16's range (see above).
FP16_SKIP = {
    "mobilenet_v3_small": "its logits are ~1e-9 with random weights, below float16's "
                          "smallest subnormal",
}

failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


def plugrt(args, cmd, what):
    p = subprocess.run([args.plugrt] + cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600)
    text = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        fail("%s: exit status %d: plugrt %s\n%s" % (what, p.returncode, " ".join(cmd),
                                                   "\n".join("    | " + l for l in
                                                             text.splitlines()[-25:])))
        return None
    return text


def scale(d):
    refs = [np.load(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("output_")]
    return min(float(np.max(np.abs(r.astype(np.float64)))) for r in refs)


def check(args, model, d, prec, what):
    tol = TOL[prec]
    atol = tol * scale(d)
    text = plugrt(args, ["run", model, "--" + prec, "-v", "--compare", d, "-n", "1",
                         "--warmup", "0", "--rtol", repr(tol), "--atol", repr(atol)], what)
    if text is None:
        return
    m = re.search(r"(\d+) of (\d+) layers run in (float16|bfloat16)", text)
    if not m or int(m.group(1)) == 0:
        fail("%s: the log says no layer ran in 16 bits" % what)
    lines = [l.strip() for l in text.splitlines() if " PASS " in l or " FAIL " in l]
    if "PASSED:" not in text:
        fail("%s: %s" % (what, "; ".join(lines)))
    else:
        print("ok   %-44s %s of %s layers in 16 bits; tolerance %g of %.3g  %s" % (
            what, m.group(1), m.group(2), tol, scale(d), "; ".join(
                w.split("; ")[0] for w in lines)))


def to_float16(path, out):
    """The model with every float32 initializer, input, output and value
    info in float16 (onnx.numpy_helper, onnx.helper)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    for i, t in enumerate(m.graph.initializer):
        if t.data_type == onnx.TensorProto.FLOAT:
            a = numpy_helper.to_array(t).astype(np.float16)
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
    for v in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            v.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and \
                    a.t.data_type == onnx.TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            elif a.type == onnx.AttributeProto.TENSOR and \
                    a.t.data_type == onnx.TensorProto.FLOAT:
                raise ValueError("%s: %s's float tensor attribute %s" % (path, n.op_type,
                                                                          a.name))
        if n.op_type in ("Cast", "CastLike", "RandomNormal"):
            raise ValueError("%s: a %s node would need converting too" % (path, n.op_type))
    onnx.save(m, out)


def check_typed(args, path, d, work):
    f16 = os.path.join(work, args.model + "_fp16.onnx")
    to_float16(path, f16)
    d16 = os.path.join(work, "typed")
    os.makedirs(d16)
    for f in os.listdir(d):
        a = np.load(os.path.join(d, f))
        # Inputs in float16; the references stay the float32 engine's.
        if f.startswith("input_") and a.dtype == np.float32:
            a = a.astype(np.float16)
        np.save(os.path.join(d16, f), a)
    o = os.path.join(work, "typed_out")
    tol = TOL["fp16"]
    what = "%s as float16 (strongly typed)" % args.model
    text = plugrt(args, ["run", f16, "--compare", d16, "-n", "1", "--warmup", "0",
                         "--rtol", repr(tol), "--atol", repr(tol * scale(d)), "-o", o], what)
    if text is None:
        return
    outs = [np.load(os.path.join(o, f)) for f in sorted(os.listdir(o))]
    if not outs or any(a.dtype != np.float16 for a in outs):
        fail("%s: outputs are %s, not float16" % (what, [a.dtype for a in outs]))
    elif "PASSED:" not in text:
        fail("%s: %s" % (what, "; ".join(l.strip() for l in text.splitlines()
                                         if " FAIL " in l)))
    else:
        print("ok   %-44s float16 outputs within %g of the float32 engine" % (what, tol))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--model", required=True, choices=sorted(rm.MODELS))
    ap.add_argument("--models-dir", default=here)
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "..", "shared",
                                                     "models"))
    ap.add_argument("--work", default="work_precision")
    ap.add_argument("--typed", action="store_true",
                    help="also the model converted to float16 throughout")
    args = ap.parse_args()
    where, shapes, make, _, _, _ = rm.MODELS[args.model]
    path = os.path.join(args.shared if where == "shared" else args.models_dir,
                        args.model + ".onnx")
    if not os.path.isfile(path):
        print("SKIP: %s not found" % path)
        return SKIP
    work = os.path.join(args.work, args.model)
    shutil.rmtree(work, ignore_errors=True)
    d = os.path.join(work, "ref")
    os.makedirs(d)
    for n, a in make(shapes[0], np.random.default_rng(2400)).items():
        np.save(os.path.join(d, "input_%s.npy" % n), a)
    # The float32 engine writes the reference beside the inputs.
    if plugrt(args, ["run", path, "--compare", d, "-n", "1", "--warmup", "0", "-o", d],
              "%s: the float32 reference" % args.model) is None:
        return 1
    for prec in ("fp16", "bf16"):
        if prec == "fp16" and args.model in FP16_SKIP:
            print("skip %-44s %s" % ("%s in fp16" % args.model, FP16_SKIP[args.model]))
            continue
        check(args, path, d, prec, "%s in %s" % (args.model, prec))
    if args.typed and args.model in FP16_SKIP:
        print("skip %-44s %s" % ("%s as float16" % args.model, FP16_SKIP[args.model]))
    elif args.typed:
        try:
            import onnx  # noqa: F401
        except ImportError:
            print("SKIP: onnx is not installed for %s" % sys.executable)
            return SKIP
        check_typed(args, path, d, work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The quantized zoo (make_quantized.py) through the plugrt program, against
ONNX Runtime running the same quantized model.

    run_quantized.py --plugrt PATH --model NAME [--models-dir DIR]
                     [--work DIR] [--device cpu|cuda]

For each shape, seeded random inputs (as run_models.py makes them) go to
`plugrt run MODEL -i ... -o OUT --op-threads 1` and to two ONNX Runtime
(CPU) sessions of the same quantized model, and the outputs are compared
here; at the first shape 1 and 3 op threads must give the same bits.

plugrt runs a quantized graph as it is written: a QDQ model's Conv is
DequantizeLinear, float Conv, QuantizeLinear (the builder folds DQ/Q only
into plugins that take int8, src/builder/fold.c), and a dynamic model's
DynamicQuantizeLinear and MatMulInteger are its integer ops, exact in
int32. So the two references and their tolerances:

- ONNX Runtime with its graph optimizations off runs the same nodes the
  same way, but its float sums run in another order, and a sum that lands
  within rounding of a .5 boundary before a QuantizeLinear or inside
  DynamicQuantizeLinear rounds to the other integer now and then (seen at
  batch 8 only). A QDQ model's output, DequantizeLinear of uint8, may
  differ by one quantum (its scale) in at most NOOPT_MAX_FRACTION of the
  elements; a dynamic model's outputs must be within rtol 1e-4, atol 1e-4
  of the largest reference magnitude (as run_models.py asks of float
  models) in all but DYN_NOOPT_MAX_FRACTION of the elements, and every
  element within DYN_ATOL_REL of it (bert_small_dynq at 8x128: 47 of
  131072 elements outside 1e-4, by up to 2.5e-4 of the largest).
- ONNX Runtime with its default optimizations (what a user of the
  quantized model gets) fuses DQ -> Conv -> Q into QLinearConv (int32
  accumulation, requantized by one float multiplier) and
  DynamicQuantizeLinear -> MatMulInteger -> Mul into
  DynamicQuantizeMatMul. Those compute the same real numbers through
  other float roundings, so a value near a .5 boundary rounds to the next
  integer and the quantum propagates: ONNX Runtime against itself with
  optimizations off differs by 1 quantum in up to 17% of resnet18_w8_qdq's
  logits at batch 2, and by 0.5% of the largest magnitude in
  bert_small_dynq's pooler output. The test allows QDQ_MAX_QUANTA quanta
  and at most QDQ_MAX_FRACTION of the elements off by one or more; for
  dynamic models, every element within DYN_ATOL_REL of the largest
  reference magnitude.

A QDQ model's Convs (grouped ones too) and MatMuls now become QLinearConv
and QLinearMatMul at import as ONNX Runtime's optimizer makes them
(src/onnx/onnx_fuse.c), so for QDQ models the two references swap roles:
the optimized one is held to 1 quantum in NOOPT_MAX_FRACTION of the
elements (resnet18_w8_qdq matches it exactly), the unoptimized one gets
QDQ_MAX_QUANTA and QDQ_MAX_FRACTION (ORT's own 17% at batch 2).

On an x86 CPU without VNNI, ONNX Runtime's fused 8-bit products are not
exact (its AVX2 kernels add product pairs in saturating 16-bit lanes:
resnet18_w8_qdq's logits up to 7 quanta off in 27% of the elements on a
2-core AMD EPYC with AVX2 alone; tests/onnx/ort_compare.py,
ort_int8_exact), so there the QDQ models' comparison with the optimized
reference is printed, not judged, and the unoptimized one decides.

The dynamic models' MatMulInteger is ORT's u8 x s8 kernel too, unfused or
fused: on a Zen 3 EPYC [255]*4 . [127]*4 gives 65534, not 129540, and
quantize_dynamic's weights use the whole int8 range, so a few sums of
gpt2_tiny_dynq came out thousands too low (session 38: 0.02 of max
|logit| off at 1x1, failing model_gpt2_tiny_dynq at main's build as
well). There (ort_int8_exact false) both of a dynamic model's references
are ONNX Runtime running the model with each MatMulInteger rewritten to
exact double arithmetic (exact_matmul_integer), and a note line says so.

Exit status 0 pass, 1 a mismatch or an error, 77 (skipped) when the model
or onnxruntime is missing.
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx"))
import run_models  # noqa: E402 - the input makers and shapes are shared
from ort_compare import ort_int8_exact  # noqa: E402

SKIP = 77
RTOL = run_models.RTOL  # against the unoptimized reference
NOOPT_MAX_FRACTION = 0.05  # QDQ: off by one quantum
DYN_NOOPT_MAX_FRACTION = 0.01  # dynamic: outside rtol/atol RTOL
QDQ_MAX_QUANTA = 2  # against the fused reference
QDQ_MAX_FRACTION = 0.25
DYN_ATOL_REL = 1e-2
# Models whose float layers between the QDQ pairs (densenet_w8_qdq's
# BatchNormalization, Concat and AveragePool) ORT's optimizer rewrites too:
# ORT optimized against ORT unoptimized differs by 1 quantum in 10%, 16%
# and 15% of densenet_w8_qdq's logits at batch 1, 2 and 8, so plugrt,
# which runs its Convs as the one and the rest as the other, gets that
# fraction (and ORT's own 1 quantum) against either.
FUSED_MAX_FRACTION = {"densenet_w8_qdq": 0.2}

IMAGE = (run_models.IMAGE_BATCHES, lambda b, rng: run_models.image_inputs(b, rng))
# name: (shapes, input maker, kind)
MODELS = {
    "resnet18_w8_qdq": IMAGE + ("qdq",),
    "efficientnet_b0_w25_qdq": IMAGE + ("qdq",),
    "resnext_w8_qdq": IMAGE + ("qdq",),
    "densenet_w8_qdq": IMAGE + ("qdq",),
    "deeplab_w8_qdq": (run_models.IMAGE_BATCHES, run_models.image128_inputs, "qdq"),
    "gpt2_tiny_dynq": (run_models.GPT2_SHAPES, run_models.token_inputs(512), "dynamic"),
    "bert_small_dynq": (run_models.BERT_SHAPES, run_models.token_inputs(2000), "dynamic"),
}

fail = run_models.fail
plugrt = run_models.plugrt


def output_scales(path):
    """The scale of the DequantizeLinear that makes each graph output, for
    the outputs that come from one with a constant per-tensor scale."""
    import onnx  # noqa: PLC0415 - only where it runs
    import onnx.numpy_helper  # noqa: PLC0415

    g = onnx.load(path).graph
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in g.initializer}
    scales = {}
    for o in g.output:
        for n in g.node:
            if o.name in n.output and n.op_type == "DequantizeLinear" and n.input[1] in inits:
                s = inits[n.input[1]]
                if s.size == 1:
                    scales[o.name] = float(s.reshape(()))
    return scales


def exact_matmul_integer(path):
    """The model at path with every MatMulInteger(A, B, a_zp?, b_zp?) as
    Cast(MatMul(Cast(A) - Cast(a_zp), Cast(B) - Cast(b_zp)), int32) in
    double: every product and partial sum an integer below 2^53, so exact
    (ONNX's definition), whatever the CPU. Returns the serialized model."""
    import onnx  # noqa: PLC0415
    from onnx import TensorProto, helper  # noqa: PLC0415
    m = onnx.load(path)
    nodes = []
    for n in m.graph.node:
        if n.op_type != "MatMulInteger":
            nodes.append(n)
            continue
        sides = []
        for k in (0, 1):
            v = n.output[0] + "_exact%d" % k
            nodes.append(helper.make_node("Cast", [n.input[k]], [v], to=TensorProto.DOUBLE))
            if len(n.input) > k + 2 and n.input[k + 2]:
                z = v + "_zp"
                nodes.append(helper.make_node("Cast", [n.input[k + 2]], [z],
                                              to=TensorProto.DOUBLE))
                nodes.append(helper.make_node("Sub", [v, z], [v + "_less"]))
                v += "_less"
            sides.append(v)
        nodes.append(helper.make_node("MatMul", sides, [n.output[0] + "_exactf"]))
        nodes.append(helper.make_node("Cast", [n.output[0] + "_exactf"], [n.output[0]],
                                      to=TensorProto.INT32, name=n.name))
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m.SerializeToString()


def run_plugrt(args, path, d, feeds, out, what, threads=1):
    cmd = ["run", path, "-n", "1", "--warmup", "0", "-o", out]
    for n in feeds:
        cmd += ["-i", "%s=%s" % (n, os.path.join(d, "input_%s.npy" % n))]
    cmd += ["--op-threads", str(threads)]
    if plugrt(args, cmd, what) is None:
        return None
    # -o writes output_<name>.npy.
    return {n[7:-4]: np.load(os.path.join(out, n)) for n in os.listdir(out)
            if n.startswith("output_") and n.endswith(".npy")}


def compare(kind, scales, refs, got, fused, what, model="", judge=True):
    """fused: refs are ONNX Runtime's with its optimizations (the loose
    tolerances); otherwise its unoptimized run of the same nodes. judge
    False: differences are printed, not failures."""
    for name, ref in refs.items():
        if name not in got:
            fail("%s: plugrt wrote no output %s" % (what, name))
            continue
        g = got[name]
        if g.shape != ref.shape:
            fail("%s: %s has shape %s, ONNX Runtime's %s" % (what, name, g.shape, ref.shape))
            continue
        diff = np.abs(g.astype(np.float64) - ref.astype(np.float64))
        big = float(np.max(np.abs(ref))) if ref.size else 0.0
        if kind == "qdq" and name in scales:
            quanta = np.rint(diff / scales[name])
            worst, frac = float(quanta.max()), float(np.mean(quanta >= 1))
            # plugrt's QDQ Convs run as ORT's optimized ones (above)
            most, most_frac = (1, FUSED_MAX_FRACTION.get(model, NOOPT_MAX_FRACTION)) if (
                fused) else (QDQ_MAX_QUANTA, QDQ_MAX_FRACTION)
            line = "%s: %s max %d quanta (scale %.4g), %.2f%% off by >= 1" % (
                what, name, worst, scales[name], 100 * frac)
            if (worst > most or frac > most_frac) and not judge:
                print("info " + line + " (ORT's 8-bit products are not exact on this CPU)")
            elif worst > most or frac > most_frac:
                fail(line + " (allowed %d quanta, %.0f%%)" % (most, 100 * most_frac))
            else:
                print("ok   " + line)
        else:
            loose = diff > DYN_ATOL_REL * big
            tight = diff > RTOL * big + RTOL * np.abs(ref.astype(np.float64))
            line = "%s: %s max |diff| %.3g, max |ref| %.3g, %d of %d outside rtol/atol %g" % (
                what, name, float(diff.max()) if diff.size else 0.0, big, int(tight.sum()),
                diff.size, RTOL)
            if loose.any():
                fail(line + "; %d beyond %g of max |ref|" % (int(loose.sum()), DYN_ATOL_REL))
            elif not fused and tight.mean() > DYN_NOOPT_MAX_FRACTION:
                fail(line + " (allowed: %.0f%%)" % (100 * DYN_NOOPT_MAX_FRACTION))
            else:
                print("ok   " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--models-dir", default=here)
    ap.add_argument("--work", default="work_quantized")
    ap.add_argument("--device", default="cpu", help="where plugrt runs the model: cpu "
                    "(CI) or cuda (the GPU machine); the references are ONNX Runtime's CPU")
    args = ap.parse_args()
    shapes, make, kind = MODELS[args.model]
    path = os.path.join(args.models_dir, args.model + ".onnx")
    if not os.path.isfile(path):
        print("SKIP: %s not found (tests/models/make_quantized.py makes it)" % path)
        return SKIP
    try:
        import onnxruntime as ort  # noqa: PLC0415
    except ImportError:
        print("SKIP: onnxruntime is not installed for %s (scripts/deps.sh)" % sys.executable)
        return SKIP
    work = os.path.join(args.work, args.model)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    scales = output_scales(path) if kind == "qdq" else {}

    exact = ort_int8_exact()
    sessions = []
    source = path
    if kind == "dynamic" and not exact:
        print("note: this CPU's ONNX Runtime saturates MatMulInteger's uint8 x int8 sums "
              "(no VNNI): the references run each MatMulInteger exactly in double")
        source = exact_matmul_integer(path)
    for fused in (False, True):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        if not fused:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sessions.append((fused, ort.InferenceSession(source, so,
                                                     providers=["CPUExecutionProvider"])))
    names = [o.name for o in sessions[0][1].get_outputs()]
    first = None
    for k, shape in enumerate(shapes):
        feeds = make(shape, np.random.default_rng(1000 + k))
        label = "x".join(str(v) for v in (shape if isinstance(shape, tuple) else (shape,)))
        d = os.path.join(work, label)
        os.makedirs(d)
        for n, a in feeds.items():
            np.save(os.path.join(d, "input_%s.npy" % n), a)
        what = "%s at %s" % (args.model, label)
        got = run_plugrt(args, path, d, feeds, os.path.join(d, "plugrt"), what)
        if got is not None:
            for fused, sess in sessions:
                refs = dict(zip(names, sess.run(None, feeds)))
                compare(kind, scales, refs, got, fused, "%s, ORT %s" % (
                    what, "optimized" if fused else "unoptimized"), args.model,
                    judge=not (fused and kind == "qdq" and not exact))
            if first is None:
                first = (label, d, feeds, got)

    # Intra-op threads change nothing, quantized or not (base/parallel.h).
    if first is not None:
        label, d, feeds, got1 = first
        got3 = run_plugrt(args, path, d, feeds, os.path.join(d, "threads3"),
                          "%s at %s, 3 op threads" % (args.model, label), threads=3)
        if got3 is not None:
            differ = sorted(n for n in got1 if n not in got3 or not np.array_equal(
                got1[n], got3[n], equal_nan=True))
            if differ:
                fail("%s at %s: 3 op threads give other outputs than 1 (%s differ)" % (
                    args.model, label, ", ".join(differ)))
            else:
                print("ok   %s at %s: 1 and 3 op threads, the same bits" % (args.model, label))
    if run_models.failures:
        print("%d check(s) failed" % run_models.failures)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

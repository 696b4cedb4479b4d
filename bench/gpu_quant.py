#!/usr/bin/env python3
"""The quantized zoo on the GPU (issue 30, "Benchmarks", GPU): plugrt INT8
and FP8 against plugrt fp16 on the fp32 model and against PyTorch fp16
with a CUDA graph, in one run on one GPU.

    python3 bench/gpu_quant.py PLUGRT [--models a,b] [--batches 1,8]
        [--seq 128] [--runs 100] [--work DIR] [--no-torch] [--out FILE]
        [--dry-run]

Rows: each quantized model of tests/models (make_quantized.py: QDQ
resnet18_w8_qdq, efficientnet_b0_w25_qdq, resnext_w8_qdq; dynamic
gpt2_tiny_dynq, bert_small_dynq) beside the fp32 model it was made from,
and bert_small_fp8: bert_small with every MatMul of a constant weight fed
through QuantizeLinear/DequantizeLinear to FLOAT8E4M3FN on both inputs
(weights per tensor at amax / 448, activations at a fixed scale: a speed
row, its accuracy is not the point; opset raised to 19, the first with
8-bit floats), written into --work at the start.

Columns, all CUDA-graph timings (plugrt run --cuda-graph; torch.cuda.
CUDAGraph), median µs over --runs runs after 10 warm-up runs, between CUDA
events around each run (bench/gpu_models.py's helpers, imported, do the
building, running and timing on both sides): plugrt on the quantized model
(its float parts in fp32, built without --fp16, so the 8-bit ops are what
differs), plugrt --fp16 on the fp32 model, PyTorch fp16 on the fp32 model
(bench/onnx_torch.py's module), then quantized / plugrt fp16 and quantized
/ torch fp16 (below 1: the quantized model is faster).

Which products take cuBLASLt (docs/DESIGN-NOTES.md, "cuBLASLt"): a
QLinearMatMul or MatMulInteger whose B is one matrix with N and K
multiples of 4. QLinearConv and ConvInteger take the int8 tensor-core
convolution (DESIGN-NOTES, "INT8 convolution on CUDA") unless depthwise
or of groups under 4 channels. Set PRT_CUDA_QGEMM=kernel to time plugrt's
plain kernels instead of both (--env PRT_CUDA_QGEMM=kernel adds that as
a second quantized column).

--dry-run checks the arguments and prints the rows and the commands
without running anything (no GPU, torch or built models needed). Exit
status 77 without torch or a GPU (unless --no-torch).
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_models as gm  # noqa: E402  (the helpers of the fp32/fp16 benchmark)

# quantized model -> (fp32 model, kind as gpu_models.ZOO's)
QZOO = {
    "resnet18_w8_qdq": ("resnet18_w8", "image"),
    "efficientnet_b0_w25_qdq": ("efficientnet_b0_w25", "image"),
    "resnext_w8_qdq": ("resnext_w8", "image"),
    "gpt2_tiny_dynq": ("gpt2_tiny", "text"),
    "bert_small_dynq": ("bert_small", "text"),
    "bert_small_fp8": ("bert_small", "text"),
}
FP8 = {"bert_small_fp8"}
FLOAT8E4M3FN = 17  # TensorProto's, spelled as a number for onnx < 1.14
FP8_ACT_SCALE = 8.0 / 448.0  # activations assumed within +-8


def make_fp8(src, dst):
    """src's MatMuls with a constant B behind Q/DQ to E4M3 on A and B."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes = []

    done = {}

    def qdq(name, scale):
        """name's Q/DQ pair (one per tensor, however many MatMuls read it)."""
        if name in done:
            return done[name]
        s, z = name + "_fp8_scale", name + "_fp8_zp"
        g.initializer.append(numpy_helper.from_array(np.array(scale, np.float32), s))
        zp = onnx.TensorProto()
        zp.name, zp.data_type, zp.raw_data = z, FLOAT8E4M3FN, b"\x00"
        g.initializer.append(zp)
        q, d = name + "_fp8", name + "_fp8_dq"
        nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [q]))
        nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [d]))
        done[name] = d
        return d

    count = 0
    for n in list(g.node):
        if n.op_type == "MatMul" and n.input[1] in inits:
            w = numpy_helper.to_array(inits[n.input[1]])
            amax = float(np.abs(w).max()) or 1.0
            a = qdq(n.input[0], FP8_ACT_SCALE)
            b = qdq(n.input[1], amax / 448.0)
            n.input[0], n.input[1] = a, b
            count += 1
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = max(o.version, 19)
    onnx.save(m, dst)
    return count


def row_shapes(model, path, batches, seq):
    rows, _ = gm.rows_of(model, path, batches, [seq])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plugrt", help="the plugrt program")
    ap.add_argument("--models", default=",".join(QZOO))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--seq", type=int, default=128, help="sequence length of the transformers")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--work", default=None, help="plans and the fp8 model (default: a temp dir)")
    ap.add_argument("--env", action="append", default=[],
                    help="VAR=VALUE: a second quantized column run with this set")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--out", default=None, help="append @result lines and the table here")
    ap.add_argument("--dry-run", action="store_true",
                    help="check arguments, print rows and commands, run nothing")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    models = [m for m in a.models.split(",") if m]
    for m in models:
        if m not in QZOO:
            ap.error("unknown model %r (known: %s)" % (m, ", ".join(QZOO)))
    try:
        batches = [int(b) for b in a.batches.split(",") if b]
    except ValueError:
        ap.error("--batches takes integers: %r" % a.batches)
    if not batches or min(batches) < 1 or a.seq < 1 or a.runs < 1:
        ap.error("batches, --seq and --runs must be positive")
    envs = []
    for e in a.env:
        if "=" not in e:
            ap.error("--env takes VAR=VALUE, not %r" % e)
        envs.append(tuple(e.split("=", 1)))
    # gpu_models' shape helpers look a model's kind up in its ZOO.
    for q, (fp32, kind) in QZOO.items():
        gm.ZOO.setdefault(q, (gm.TESTS, kind))
    work = a.work or ("WORK" if a.dry_run else tempfile.mkdtemp(prefix="gpu_quant."))
    if not a.dry_run:
        os.makedirs(work, exist_ok=True)
    torch = None
    if not a.dry_run and not a.no_torch:
        torch = gm.cuda_torch("gpu_quant")
        if torch is None:
            return 77
    flags = gm.precision_flags(a.plugrt) if not a.dry_run else {"fp32": [], "fp16": ["--fp16"]}
    res = gm.Results(a.out)
    gpu = torch.cuda.get_device_name(0) if torch else "(dry run)" if a.dry_run else "(no torch)"
    res.text("GPU: %s | torch %s | CUDA graphs, median µs over %d runs" %
             (gpu, torch.__version__ if torch else "-", a.runs))
    cols = ["quantized"] + ["quantized %s=%s" % e for e in envs]
    head = ("| model | batch | " + " | ".join("plugrt %s µs" % c for c in cols) +
            " | plugrt fp16 µs | torch fp16 µs | q / plugrt fp16 | q / torch fp16 |")
    table = [head, "|---" * (head.count("|") - 1) + "|"]
    for model in models:
        fp32, _ = QZOO[model]
        fpath = gm.model_path(fp32)
        qpath = os.path.join(work, model + ".onnx") if model in FP8 else gm.model_path(model)
        if model in FP8:
            if a.dry_run:
                print("# %s: written from %s by make_fp8" % (qpath, fpath))
            elif not os.path.exists(qpath):
                try:
                    res.text("%s: %d MatMuls behind FP8 Q/DQ" % (model, make_fp8(fpath, qpath)))
                except Exception as e:  # an onnx too old for it: say so, go on
                    res.text("%s: not made: %s" % (model, e))
                    continue
        elif not os.path.exists(qpath):
            res.text("%s: missing (%s; tests/models/make_quantized.py makes it)" % (model, qpath))
            continue
        if not os.path.exists(fpath):
            res.text("%s: missing its fp32 model %s" % (model, fpath))
            continue
        rows = row_shapes(fp32, fpath, batches, a.seq)
        # The FP8 model's inputs are the fp32 model's: read them there when
        # it is not written yet (--dry-run).
        io = {qpath: qpath if os.path.exists(qpath) else fpath, fpath: fpath}

        def cmd_for(fn, path, *args):
            cmd = fn(a.plugrt, *args[:1], io[path], *args[1:]) if fn is gm.run_cmd else \
                fn(a.plugrt, io[path], *args)
            return [path if c == io[path] else c for c in cmd]

        plans = {}
        for tag, path, fl in (("q", qpath, flags["fp32"]), ("fp16", fpath, flags.get("fp16"))):
            plan = os.path.join(work, "%s.%s.plan" % (model, tag))
            if fl is None:
                plans[tag] = (plan, "n/a (no --fp16)")
                continue
            # A plan per model: profile spanning the rows' shapes, as gpu_models.
            cmd = cmd_for(gm.build_cmd, path, plan, rows, fl, False)
            if a.dry_run:
                print("$ " + " ".join(cmd))
                plans[tag] = (plan, None)
                continue
            why = gm.build_plan(cmd, "")
            plans[tag] = (plan, why and "build fail: " + why[:100])
        for b, s, shapes in rows:
            base = {"model": model, "batch": b, "seq": s, "gpu": gpu}
            got = {}
            runs = [("quantized", "q", qpath, {})] + \
                [("quantized %s=%s" % e, "q", qpath, {e[0]: e[1]}) for e in envs] + \
                [("fp16", "fp16", fpath, {})]
            for col, tag, path, extra in runs:
                plan, why = plans[tag]
                cmd = cmd_for(gm.run_cmd, path, plan, shapes, a.runs, True)
                if a.dry_run:
                    print("$ " + " ".join("%s=%s" % kv for kv in extra.items()) +
                          (" " if extra else "") + " ".join(cmd))
                    continue
                if why:
                    got[col] = (None, why)
                else:
                    # One process, with the column's variables set.
                    us, err = gm.run_plugrt(cmd, "", extra)
                    got[col] = (us, err and "fail: " + err[:100])
                res.add(dict(base, impl="plugrt", precision=col, mode="graph",
                             us=got[col][0], note=got[col][1]))
            if a.dry_run:
                print("torch fp16 graph %s %s" % (fp32, gm.shapes_arg(shapes)))
                table.append("| %s | %d | %s |" % (model, b, " | ".join(["-"] * (len(cols) + 4))))
                continue
            if torch is not None:
                try:
                    tr = gm.torch_row(torch, fpath, shapes, "fp16", a.runs, ["graph"], a.seed)
                    got["torch"] = tr.get("graph", (None, "n/a"))
                except Exception as e:  # the module failed: the row says so
                    got["torch"] = (None, gm.fail_note(e, 100))
                res.add(dict(base, impl="torch", precision="fp16", mode="graph",
                             us=got["torch"][0], note=got["torch"][1]))
            else:
                got["torch"] = (None, "-")

            def fmt(k):
                return gm.fmt_us(*got.get(k, (None, "-")))

            def ratio(k):
                return gm.ratio(got["quantized"][0], got.get(k, (None, None))[0])

            table.append("| %s | %d%s | %s | %s | %s | %s | %s |" % (
                model, b, "" if s is None else " x %d" % s, " | ".join(fmt(c) for c in cols),
                fmt("fp16"), fmt("torch"), ratio("fp16"), ratio("torch")))
    res.text("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())

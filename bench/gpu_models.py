#!/usr/bin/env python3
"""Whole models on the GPU: plugrt beside PyTorch on the same weights, in
one run (issue 24, "Benchmark").

    python3 bench/gpu_models.py PLUGRT [--libs NAME=DIR[,VAR=VALUE...] ...] [--models a,b]
        [--batches 1,8,64] [--seqs 128,512] [--precisions fp32,fp16,bf16 (default; tf32 when named)]
        [--runs 100] [--budget-s S] [--out FILE] [--modes eager,graph,compile]
        [--max-autotune] [--autotune] [--no-torch] [--work DIR] [--dry-run]
    python3 bench/gpu_models.py --verify      # no GPU needed, only torch

Models: every fp32 model of ../shared/models and tests/models (ZOO below;
the quantized *_qdq/*_dynq ones are out of scope), at each batch, and the
transformers at each sequence length their position table holds
(bert_small's and gpt2_tiny's hold 128 positions, so 512 is left out and
said so). The plugin models run with the standard plugin library on the
plugrt side and as torch code (bench/onnx_torch.py) on the other.

plugrt: `plugrt build MODEL --device cuda` once per model, precision
(--fp16/--bf16/--tf32 when `plugrt build --help` offers them as real
flags, else the column says "n/a (no flag)") and plugrt library, with one profile
spanning the shapes of the run (opt: the middle batch, the longest
sequence); then `plugrt run PLAN --shapes ... --random-inputs --json` per
shape, eager and with --cuda-graph.

PyTorch: bench/onnx_torch.py's module of the same ONNX file (the same
initializers, so the same function: --verify checks it against ONNX
Runtime on the CPU within 1e-4 of each output's largest magnitude; the
plugin models against their stored reference outputs; and that a bfloat16
module gives bfloat16 outputs), built for each
shape, in each precision (float buffers and inputs cast; integer inputs
stay integer; TF32 allowed for cuDNN and matmuls in the tf32 rows only,
so fp32 is strict float32 on both sides), eager, captured as a torch.cuda.CUDAGraph, and through
torch.compile (default mode; --max-autotune adds mode="max-autotune").
Models whose output size depends on the data (NonZero, NonMaxSuppression)
cannot be captured: their graph and compile cells say "n/a".

Timing, the same on both sides: per run, a CUDA event before the run's
launch and one after, then a wait for the second; the figure is the median
over --runs runs after 10 warm-up runs of the time between the two events
(plugrt run --json's device_ms; the eager figure thus includes the GPU's
idle time while the host launches). Throughput is batch / median time
(samples/s). Ratios are plugrt's time over PyTorch's (below 1: plugrt is
faster): eager over eager, graph over graph, graph over torch.compile.

Output: one table per precision (the GPU's name from
torch.cuda.get_device_name() in the header; compare figures only within
one run), one "@result {json}" line per figure, and with --out FILE the
same lines appended as they are measured (a killed run keeps what it
measured) and the tables at the end. --budget-s stops starting new rows
once that many seconds have passed and still prints the tables.
--dry-run prints the commands and rows without running anything (no torch
or GPU needed). Exit status 77 without torch or a GPU.

Cost: each plugrt figure is one `plugrt run` process (CUDA start, plan
load, warm-up: about a second); each torch.compile tens of seconds per
model, shape and precision. With little device time, narrow --models,
--batches or --modes (e.g. compile only at batch 8 in a second run) and
set --budget-s.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "models"))
TESTS = os.path.normpath(os.path.join(HERE, "..", "tests", "models"))

# name -> (folder, kind). kind "text": inputs [batch, seq], run at each
# sequence; "fixed": the stored .data inputs' shapes; else the batch dim.
ZOO = {
    "mobilenet_v3_small": (SHARED, "image"),
    "resnet18_w8": (TESTS, "image"),
    "shufflenet_v2_x0_5": (TESTS, "image"),
    "efficientnet_b0_w25": (TESTS, "image"),
    "resnext_w8": (TESTS, "image"),
    "densenet_w8": (TESTS, "image"),
    "vit_tiny": (TESTS, "image"),
    "deeplab_w8": (TESTS, "image"),
    "detect_post": (TESTS, "image"),
    "lstm_seq": (TESTS, "text"),
    "bert_small": (SHARED, "text"),
    "gpt2_tiny": (TESTS, "text"),
    "gpt2_tiny_dynamo": (TESTS, "text"),
    "qa_custom_hardmax": (SHARED, "image"),
    "circ_pad_conv": (SHARED, "fixed"),
    "nonzero_plugin": (SHARED, "rows"),
}
# Rows of nonzero_plugin's input per batch: a batch of 128 x 128 blocks.
NONZERO_ROWS = 128
# tf32: float32 data, plugrt built with --tf32 beside PyTorch with TF32
# allowed for cuDNN and matmuls; fp32 is strict float32 on both sides
# (PyTorch's cuDNN convolutions default to TF32: turned off for fp32 rows).
PRECISIONS = ("fp32", "fp16", "bf16", "tf32")
DEFAULT_PRECISIONS = ("fp32", "fp16", "bf16")  # tf32 when asked for
VERIFY_RTOL = 1e-4  # of each output's largest magnitude
# Integer outputs that may differ from ONNX Runtime's where scores tie:
# NonMaxSuppression's order among equal scores is unspecified (ORT's heap
# picks one of two identical boxes, torch's sort the other). Their rows are
# checked through the float outputs they select, which must still match.
TIE_OUTPUTS = {("detect_post", "selected_indices")}
WARMUP = 10


def model_path(name, models_dir=None):
    for d in ([models_dir] if models_dir else []) + [ZOO[name][0], SHARED, TESTS]:
        p = os.path.join(d, name + ".onnx")
        if os.path.exists(p):
            return p
    return os.path.join(ZOO[name][0], name + ".onnx")


def graph_inputs(path):
    """[(name, ONNX elem type, dims with None for a symbolic one)]."""
    import onnx

    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    out = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in i.type.tensor_type.shape.dim]
        out.append((i.name, i.type.tensor_type.elem_type, dims))
    return out, m


def max_positions(m):
    """Rows of a transformer's position table (its longest sequence)."""
    for t in m.graph.initializer:
        if "position_embeddings" in t.name or t.name.endswith("wpe.weight"):
            return t.dims[0]
    return None


def shapes_for(name, path, batch, seq):
    """{input: dims} of one row, or None where the model has no such row."""
    ins, _ = graph_inputs(path)
    kind = ZOO[name][1]
    if kind == "fixed":
        return {n: tuple(d) for n, _, d in ins} if all(None not in d for _, _, d in ins) else None
    out = {}
    for n, _, dims in ins:
        if kind == "rows":
            dims = [batch * NONZERO_ROWS if k == 0 and d is None else
                    NONZERO_ROWS if d is None else d for k, d in enumerate(dims)]
        else:
            dims = [batch if k == 0 and d is None else seq if d is None else d
                    for k, d in enumerate(dims)]
        out[n] = tuple(dims)
    return out


def rows_of(name, path, batches, seqs):
    """[(batch, seq or None, shapes)] and a note on left-out rows."""
    _, m = graph_inputs(path)
    kind, note = ZOO[name][1], None
    if kind == "fixed":
        s = shapes_for(name, path, 0, 0)
        return [(list(s.values())[0][0], None, s)], "fixed shapes: one row"
    if kind != "text":
        return [(b, None, shapes_for(name, path, b, None)) for b in batches], None
    limit = max_positions(m)
    ok = [s for s in seqs if limit is None or s <= limit]
    if len(ok) < len(seqs):
        note = "sequence %s left out: the position table holds %d" % (
            ",".join(str(s) for s in seqs if s not in ok), limit)
    return [(b, s, shapes_for(name, path, b, s)) for b in batches for s in ok], note


def make_inputs(path, shapes, seed):
    """Inputs as plugrt run --random-inputs draws them: floats uniform in
    [-1, 1), integers in [0, 16); an attention_mask all ones."""
    import numpy as np
    import onnx

    def np_type(et):  # onnx.mapping is gone from newer onnx; helper's is 1.13+
        if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
            return onnx.helper.tensor_dtype_to_np_dtype(et)
        return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[et]

    rng = np.random.default_rng(seed)
    ins, _ = graph_inputs(path)
    out = {}
    for n, et, _ in ins:
        shape = shapes[n]
        dt = np.dtype(np_type(et))
        if np.issubdtype(dt, np.floating):
            out[n] = rng.uniform(-1, 1, size=shape).astype(dt)
        elif "mask" in n:
            out[n] = np.ones(shape, dtype=dt)
        else:
            out[n] = rng.integers(0, 16, size=shape).astype(dt)
    return out


def dims_str(d):
    return "x".join(str(x) for x in d)


def shapes_arg(shapes):
    return ",".join("%s:%s" % (n, dims_str(d)) for n, d in shapes.items())


# ---- plugrt --------------------------------------------------------------


def precision_flags(plugrt):
    """{precision: build flag list, or None where plugrt has no such flag}.
    plugrt's --fp16 was for a while a trtexec-compatible no-op whose help
    says so; that does not count."""
    out = subprocess.run([plugrt, "build", "--help"], capture_output=True, text=True)
    text = " ".join((out.stdout + out.stderr).split())  # one line: no wrapped phrase
    noop = "no reduced-precision mode" in text or "no reduced precision" in text
    flags = {"fp32": []}
    for p in ("fp16", "bf16"):
        flags[p] = ["--" + p] if ("--" + p) in text and not noop else None
    flags["tf32"] = ["--tf32"] if "--tf32" in text else None
    return flags


def build_cmd(plugrt, path, plan, rows, flags, autotune):
    """`plugrt build` with a profile spanning the rows' shapes."""
    cmd = [plugrt, "build", path, "-o", plan, "--device", "cuda"] + flags
    ins, _ = graph_inputs(path)
    dynamic = [n for n, _, d in ins if None in d]
    if dynamic:
        all_shapes = [r[2] for r in rows]
        lo = {n: min(all_shapes, key=lambda s: s[n])[n] for n in dynamic}
        hi = {n: max(all_shapes, key=lambda s: s[n])[n] for n in dynamic}
        opt = {n: sorted(all_shapes, key=lambda s: s[n])[len(all_shapes) // 2][n]
               for n in dynamic}
        # The longest sequence is the one worth tuning for.
        opt = {n: tuple(hi[n][1] if k == 1 and ZOO[os.path.basename(path)[:-5]][1] == "text"
                        else v for k, v in enumerate(opt[n])) for n in dynamic}
        cmd += ["--min-shapes", shapes_arg(lo), "--opt-shapes", shapes_arg(opt),
                "--max-shapes", shapes_arg(hi)]
    if autotune:
        cmd.append("--autotune")
    return cmd


def run_cmd(plugrt, plan, path, shapes, runs, graph):
    ins, _ = graph_inputs(path)
    dyn = {n: shapes[n] for n, _, d in ins if None in d}
    cmd = [plugrt, "run", plan, "--random-inputs", "-n", str(runs), "--warmup", str(WARMUP),
           "--json"]
    if dyn:
        cmd += ["--shapes", shapes_arg(dyn)]
    if graph:
        cmd.append("--cuda-graph")
    return cmd


def first_error(text, code):
    """The line of plugrt's stderr that says what failed."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return lines[0] if lines else "exit %d" % code


def parse_lib(arg):
    """--libs' NAME=DIR[,VAR=VALUE...]: (name, dir, {VAR: VALUE})."""
    name, rest = arg.split("=", 1)
    parts = rest.split(",")
    return name, parts[0], dict(p.split("=", 1) for p in parts[1:] if "=" in p)


def lib_env(libdir, extra=None):
    """The environment of a plugrt process: libdir first on the library
    path, and the variables of `extra` set."""
    env = dict(os.environ, **(extra or {}))
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + ":" + env.get("LD_LIBRARY_PATH", "")
    return env


def build_plan(cmd, libdir, extra=None):
    """Runs a `plugrt build` command: None, or the line saying why it
    failed."""
    out = subprocess.run(cmd, env=lib_env(libdir, extra), capture_output=True, text=True)
    return None if out.returncode == 0 else first_error(out.stderr, out.returncode)


def run_plugrt(cmd, libdir, extra=None):
    """(median GPU µs, None) or (None, why it failed)."""
    out = subprocess.run(cmd, env=lib_env(libdir, extra), capture_output=True, text=True)
    if out.returncode != 0:
        return None, first_error(out.stderr, out.returncode)
    doc = json.loads(out.stdout)
    if "device_ms" not in doc:
        return None, "no device_ms in plugrt run --json (not a CUDA run?)"
    return doc["device_ms"]["median"] * 1000.0, None


# ---- PyTorch ---------------------------------------------------------------


def cuda_torch(who):
    """torch where it and a GPU are there; else None, the reason printed
    (the caller exits 77, skipped)."""
    try:
        import torch
    except ImportError as e:
        print("%s: skipped: no torch (%s)" % (who, e))
        return None
    if not torch.cuda.is_available():
        print("%s: skipped: no GPU" % who)
        return None
    return torch


def torch_dtype(torch, prec):
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
            "tf32": torch.float32}[prec]


def torch_tf32(torch, on):
    """TF32 for PyTorch's cuDNN convolutions and matmuls: on only for the
    tf32 rows (cuDNN's default is on, which would compare TF32 against
    plugrt's strict float32)."""
    torch.backends.cudnn.allow_tf32 = on
    torch.backends.cuda.matmul.allow_tf32 = on


def event_median(torch, fn, runs):
    """Median µs between CUDA events around one call, each run waited
    for (plugrt run's device_ms is measured so)."""
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        t.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(t)


def torch_row(torch, path, shapes, prec, runs, modes, seed):
    """{mode: (µs or None, note)} for PyTorch on one shape and precision."""
    import onnx
    from onnx_torch import OnnxModule

    dtype = torch_dtype(torch, prec)
    torch_tf32(torch, prec == "tf32")
    feeds = make_inputs(path, shapes, seed)
    xs = {n: torch.from_numpy(v).cuda() for n, v in feeds.items()}
    res = {}
    with torch.inference_mode():
        mod = OnnxModule(onnx.load(path), xs, "cuda").to_precision(dtype).eval()
        args = [xs[n].to(dtype) if xs[n].is_floating_point() else xs[n]
                for n in mod.input_names]
        res["eager"] = (event_median(torch, lambda: mod(*args), runs), None)
        for m in modes:
            if m == "eager":
                continue
            if mod.data_dependent:
                res[m] = (None, "n/a (data-dependent)")
                continue
            try:
                if m == "graph":
                    s = torch.cuda.Stream()
                    s.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(s):
                        for _ in range(3):
                            mod(*args)
                    torch.cuda.current_stream().wait_stream(s)
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        mod(*args)
                    res[m] = (event_median(torch, g.replay, runs), None)
                else:
                    if not hasattr(torch, "compile"):
                        res[m] = (None, "n/a (no torch.compile)")
                        continue
                    # One code object (OnnxModule.forward) for every
                    # model: without a reset dynamo's cache limit would
                    # silently run the later ones eager.
                    torch._dynamo.reset()
                    t0 = time.time()
                    cm = torch.compile(mod, mode=None if m == "compile" else "max-autotune")
                    cm(*args)
                    took = time.time() - t0
                    res[m] = (event_median(torch, lambda: cm(*args), runs),
                              "compiled in %.0f s" % took)
            except Exception as e:  # one mode failing keeps the row
                res[m] = (None, "fail: %s" % str(e).splitlines()[0][:120] if str(e) else
                          "fail: %s" % type(e).__name__)
    return res


# ---- verify ----------------------------------------------------------------


def verify(models, seed):
    """The converted module against ONNX Runtime on the CPU at batch 1 (the
    plugin models, which ONNX Runtime cannot run, against their stored
    reference outputs). Returns the number of failures."""
    import numpy as np
    import onnx
    import torch
    from onnx_torch import OnnxModule

    fails = 0
    for name in models:
        try:
            ok = _verify_one(name, seed, np, onnx, torch, OnnxModule)
        except Exception as e:  # a model the converter cannot run: say which and why
            ok = False
            print("verify %s: FAIL: %s: %s" % (name, type(e).__name__, e))
        fails += not ok
    return fails


def _verify_one(name, seed, np, onnx, torch, OnnxModule):
    """verify() for one model: prints the result, returns whether it passed."""
    path = model_path(name)
    data = os.path.join(os.path.dirname(path), name + ".data")
    ins, m = graph_inputs(path)
    if os.path.isdir(data) and ZOO[name][0] == SHARED and name in (
            "circ_pad_conv", "nonzero_plugin", "qa_custom_hardmax"):
        feeds = {n: np.load(os.path.join(data, "input_%s.npy" % n)) for n, _, _ in ins}
        refs = [np.load(os.path.join(data, "output_%s.npy" % o.name)) for o in m.graph.output]
        against = "stored outputs"
    else:
        import onnxruntime as ort

        rows, _ = rows_of(name, path, [1], [16])
        feeds = make_inputs(path, rows[0][2], seed)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        refs = sess.run(None, feeds)
        against = "ONNX Runtime"
    with torch.no_grad():
        xs = {n: torch.from_numpy(v) for n, v in feeds.items()}
        mod = OnnxModule(onnx.load(path), xs, "cpu")
        got = [t.numpy() for t in mod(*[xs[n] for n in mod.input_names])]
    worst, ok = 0.0, True
    for o, g, r in zip(m.graph.output, got, refs):
        if g.shape != r.shape:
            ok = False
            print("  %s %s: shape %s, expected %s" % (name, o.name, g.shape, r.shape))
            continue
        if not np.issubdtype(r.dtype, np.floating):
            if not np.array_equal(g, r):
                tie = (name, o.name) in TIE_OUTPUTS
                ok = ok and tie
                print("  %s %s: %d of %d integer rows differ%s" % (
                    name, o.name, int((g != r).reshape(len(r), -1).any(1).sum()), len(r),
                    " (tied scores; the outputs they select are checked)" if tie else ""))
            continue
        scale = float(np.abs(r).max()) if r.size else 0.0
        err = float(np.abs(g.astype(np.float64) - r).max()) if r.size else 0.0
        worst = max(worst, err / scale if scale else err)
        if err > VERIFY_RTOL * scale:
            ok = False
            print("  %s %s: max |torch - ref| %.3g > %.0e x max|ref| %.3g"
                  % (name, o.name, err, VERIFY_RTOL, scale))
    # Lower precision: every float output in bfloat16 (a float32 leaking
    # through, such as an aliased weight left uncast, would promote the
    # rest of the model back to float32).
    with torch.no_grad():
        mod.to_precision(torch.bfloat16)
        low = mod(*[xs[n].to(torch.bfloat16) if xs[n].is_floating_point() else xs[n]
                    for n in mod.input_names])
    for o, t in zip(m.graph.output, low):
        if t.is_floating_point() and t.dtype != torch.bfloat16:
            ok = False
            print("  %s %s: %s in a bfloat16 run" % (name, o.name, t.dtype))
    print("verify %s: %s against %s (worst %.2g of max|ref|; %s)" % (
        name, "ok" if ok else "FAIL", against, worst,
        "data-dependent" if mod.data_dependent else "capturable"))
    return ok


# ---- the run ---------------------------------------------------------------


class Results:
    def __init__(self, out):
        self.rows = []
        self.out = open(out, "a") if out else None

    def add(self, rec):
        line = "@result " + json.dumps(rec)
        print(line, flush=True)
        self.rows.append(rec)
        if self.out:
            self.out.write(line + "\n")
            self.out.flush()

    def text(self, s):
        print(s, flush=True)
        if self.out:
            self.out.write(s + "\n")
            self.out.flush()


def fail_note(e, width):
    """A failed torch module or mode, as its cell says it."""
    return "fail: %s" % (str(e).splitlines() or [type(e).__name__])[0][:width]


def fmt_us(us, note):
    """A table cell: the time in µs, else why there is none."""
    return "%.0f" % us if us is not None else (note or "-")


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def cell(rec):
    if rec is None:
        return "-"
    return fmt_us(rec.get("us"), rec.get("note", "-"))


def tables(res, libs, header, modes):
    """One markdown table per precision from the @result records."""
    out = []
    by = {}
    for r in res.rows:
        by[(r["model"], r["batch"], r["seq"], r["precision"], r["impl"], r["mode"])] = r
    keys = []
    for r in res.rows:
        k = (r["model"], r["batch"], r["seq"])
        if k not in keys:
            keys.append(k)
    first = libs[0][0]
    tmodes = [m for m in modes if m != "eager"]
    for prec in PRECISIONS:
        if not any(r["precision"] == prec for r in res.rows):
            continue
        out.append("")
        out.append("%s, %s: median GPU time per run from CUDA events, µs" % (header, prec))
        head = ["model", "batch", "seq"]
        head += ["%s %s" % (lib[0], m) for lib in libs for m in ("eager", "graph")]
        head += ["torch eager"] + ["torch " + m for m in tmodes]
        head += ["%s graph samples/s" % first, "torch best samples/s",
                 "eager ratio", "graph ratio", "graph/compile ratio"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for model, b, s in keys:
            g = lambda impl, mode: by.get((model, b, s, prec, impl, mode))
            row = [model, str(b), str(s) if s else "-"]
            row += [cell(g(lib[0], m)) for lib in libs for m in ("eager", "graph")]
            row += [cell(g("torch", "eager"))] + [cell(g("torch", m)) for m in tmodes]

            def us(impl, mode):
                r = g(impl, mode)
                return r["us"] if r and r.get("us") else None

            pg = us(first, "graph")
            tbest = min([v for v in (us("torch", m) for m in modes) if v] or [0]) or None
            row.append("%.0f" % (b * 1e6 / pg) if pg else "-")
            row.append("%.0f" % (b * 1e6 / tbest) if tbest else "-")
            for a, t in ((us(first, "eager"), us("torch", "eager")),
                         (pg, us("torch", "graph")), (pg, us("torch", "compile"))):
                row.append(ratio(a, t))
            out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append("Ratios: %s's time over PyTorch's (below 1: %s faster): eager/eager, "
               "graph/graph, graph/torch.compile. samples/s = batch / median time."
               % (first, first))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plugrt", nargs="?", help="the plugrt program")
    ap.add_argument("--libs", nargs="*", default=[],
                    help="NAME=DIR of a libplugrt, then ,VAR=VALUE for each environment "
                         "variable of its processes (one library under two settings "
                         "in one run: main=DIR pass=DIR,PRT_CUDA_BIAS_EPILOGUE=pass)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--batches", default="1,8,64")
    ap.add_argument("--seqs", default="128,512", help="sequence lengths of the transformers")
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--precisions", default=",".join(DEFAULT_PRECISIONS))
    ap.add_argument("--models-dir", default=None, help="look for MODEL.onnx here first")
    ap.add_argument("--work", default=None, help="where the plans go (default: a temp dir)")
    ap.add_argument("--budget-s", type=float, default=0, help="start no row after this long")
    ap.add_argument("--out", default=None, help="append @result lines and tables here")
    ap.add_argument("--modes", default="eager,graph,compile",
                    help="PyTorch's modes (eager always runs; compile costs "
                         "tens of seconds per model, shape and precision)")
    ap.add_argument("--compile-batches", default="64",
                    help="the batches at which torch.compile runs (the target "
                         "compares at batch 64; each compile costs tens of seconds)")
    ap.add_argument("--max-autotune", action="store_true",
                    help="also torch.compile(mode='max-autotune')")
    ap.add_argument("--autotune", action="store_true", help="plugrt build --autotune")
    ap.add_argument("--no-torch", action="store_true", help="only the plugrt columns")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the commands and rows, run nothing")
    ap.add_argument("--verify", action="store_true",
                    help="check the torch modules against ONNX Runtime on the CPU")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    models = [m for m in a.models.split(",") if m]
    for m in models:
        if m not in ZOO:
            ap.error("unknown model %r (known: %s)" % (m, ", ".join(ZOO)))
    precs = [p for p in a.precisions.split(",") if p]
    compile_batches = {int(x) for x in a.compile_batches.split(",") if x}
    for p in precs:
        if p not in PRECISIONS:
            ap.error("unknown precision %r (known: %s)" % (p, ", ".join(PRECISIONS)))
    sys.path.insert(0, HERE)
    if a.verify:
        try:
            import torch  # noqa: F401
        except ImportError as e:
            print("gpu_models: --verify skipped: no torch (%s)" % e)
            return 77
        return 1 if verify(models, a.seed) else 0
    if not a.plugrt:
        ap.error("give the plugrt program (or --verify)")
    batches = [int(b) for b in a.batches.split(",")]
    seqs = [int(s) for s in a.seqs.split(",")]
    modes = ["eager"] + [m for m in a.modes.split(",") if m in ("graph", "compile")]
    modes += ["max-autotune"] if a.max_autotune else []
    torch = None
    if not a.dry_run and not a.no_torch:
        torch = cuda_torch("gpu_models")
        if torch is None:
            return 77
    gpu = torch.cuda.get_device_name(0) if torch else ("(dry run)" if a.dry_run else "(no torch)")
    libs = [parse_lib(x) for x in a.libs] or [("plugrt", "", {})]
    flags = precision_flags(a.plugrt)
    work = a.work
    if not work:
        import tempfile

        work = tempfile.mkdtemp(prefix="gpu_models.")
    os.makedirs(work, exist_ok=True)
    res = Results(a.out)
    header = "GPU: %s | torch %s" % (gpu, torch.__version__ if torch else "-")
    res.text(header)
    t_start = time.time()
    plans = {}
    stopped = None
    for model in models:
        path = model_path(model, a.models_dir)
        rows, note = rows_of(model, path, batches, seqs)
        if note:
            res.text("%s: %s" % (model, note))
        for b, s, shapes in rows:
            if a.budget_s and time.time() - t_start > a.budget_s:
                stopped = "budget of %.0f s spent before %s batch %d" % (a.budget_s, model, b)
                break
            base = {"model": model, "batch": b, "seq": s, "gpu": gpu}
            for prec in precs:
                for name, libdir, extra in libs:
                    rec = dict(base, precision=prec, impl=name)
                    if flags[prec] is None:
                        for m in ("eager", "graph"):
                            res.add(dict(rec, mode=m, us=None, note="n/a (no flag)"))
                        continue
                    plan = os.path.join(work, "%s.%s.%s.plan" % (model, prec, name))
                    if (plan, libdir) not in plans:
                        cmd = build_cmd(a.plugrt, path, plan, rows, flags[prec], a.autotune)
                        if a.dry_run:
                            print("$ " + " ".join(cmd))
                            plans[(plan, libdir)] = None
                        else:
                            plans[(plan, libdir)] = build_plan(cmd, libdir, extra)
                    for m in ("eager", "graph"):
                        cmd = run_cmd(a.plugrt, plan, path, shapes, a.runs, m == "graph")
                        if a.dry_run:
                            print("$ " + " ".join(cmd))
                            continue
                        if plans[(plan, libdir)]:
                            res.add(dict(rec, mode=m, us=None,
                                         note="build fail: " + plans[(plan, libdir)][:120]))
                            continue
                        us, why = run_plugrt(cmd, libdir, extra)
                        res.add(dict(rec, mode=m, us=us, note=why and "fail: " + why[:120]))
                if a.no_torch:
                    continue
                if a.dry_run:
                    print("torch %s %s %s: %s" % (prec, model, shapes_arg(shapes),
                                                  " ".join(m for m in modes if m in ("eager", "graph")
                                                           or b in compile_batches)))
                    continue
                row_modes = [m for m in modes if m in ("eager", "graph") or b in compile_batches]
                try:
                    tr = torch_row(torch, path, shapes, prec, a.runs, row_modes, a.seed)
                except Exception as e:  # the module itself failed: say so
                    tr = {m: (None, fail_note(e, 120)) for m in modes}
                for m in modes:
                    us, note = tr.get(m, (None, "-"))
                    res.add(dict(base, precision=prec, impl="torch", mode=m, us=us, note=note))
        if stopped:
            break
    if stopped:
        res.text("stopped: " + stopped)
    res.text(tables(res, libs, header, modes))
    return 0


if __name__ == "__main__":
    sys.exit(main())

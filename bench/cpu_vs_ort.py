#!/usr/bin/env python3
"""plugrt against ONNX Runtime on the CPU, in one process, on the same inputs.

For mobilenet_v3_small (image [B, 3, 224, 224]) and bert_small (input_ids and
attention_mask [B, 32]) from ../shared/models, at batch 1 and 8, with 1 and 2
threads on each side (ONNX Runtime's intra_op_num_threads, plugrt's
per-context thread count; one request at a time), prints the median latency
of each and the ratio ONNX Runtime / plugrt (above 1: plugrt is faster),
and beside them each engine's best run. --models takes any model of
../shared/models or tests/models (the zoo: resnext_w8, densenet_w8,
vit_tiny, deeplab_w8, detect_post, ...); one without a .data folder gets
seeded inputs made from its graph's inputs (the batch for the first
symbolic dim, 32 for any other). A data-dependent output (detect_post's
NonMaxSuppression rows) is compared at the length the run gave.

Method. Both engines run in this process through their Python bindings
(plugrt: the package in python/, ctypes over libplugrt; ORT: onnxruntime).
Inputs are the models' .data inputs (batch 2) repeated or cut to the batch,
bound once: ORT through an IOBinding with preallocated outputs, plugrt with
set_tensor_address, so a timed call is one run and nothing is allocated or
copied around it on either side. Each row alternates the two engines in
rounds (a few runs of one, then of the other, each going first in every
other round) so that a change of the machine's load hits both alike;
before each block the process sleeps 30 ms
(both engines' idle threads spin a while after a run and would take CPUs
from the other's block) and makes one untimed run. The figure is the median
of every timed run. Beside it, the ratio by round: each round's ORT median
over its plugrt median, the median of those; on a machine whose speed
shifts for seconds at a time, this pairs runs made under the same
conditions.
Outputs are compared once per row (they must agree to 1e-3 of the largest
magnitude). ORT runs with its default graph optimizations, sequential
execution and one inter-op thread. Each thread count runs in a child
process of its own, both engines in it, with OPENBLAS_NUM_THREADS=1:
plugrt spreads its products over the context's threads itself and sets
OpenBLAS to one thread when it loads it (src/ops/blas.c); the variable
keeps OpenBLAS from starting server threads at all.

On a machine shared with other work, --repeats N runs every thread count's
child N times (interleaved) and reports per row the median over the
repeats of each engine's median, and the range of the ratio; the load
average is printed before and after.

With --profile, each row where plugrt is slower gets its per-layer profile
(`plugrt run --profile-layers --profile-json`, same shapes and thread
count) summed by op, slowest first, beside ONNX Runtime's own profile of
the same row (enable_profiling: each node's kernel time) summed by its op
types, and, for a model with convolutions, both engines' time in them by
kind (pointwise, depthwise by kernel and stride, the rest), ORT's fused
and NCHWc-blocked nodes traced back to the ONNX Conv they compute (a node
named after its output, `<tensor>_nchwc`, is the Conv producing that
tensor or the one feeding the activation that does).

    /usr/bin/python3 bench/cpu_vs_ort.py                    # the table
    /usr/bin/python3 bench/cpu_vs_ort.py --repeats 3 --profile --markdown
    /usr/bin/python3 bench/cpu_vs_ort.py --models vit_tiny,deeplab_w8,detect_post

Environment: PLUGRT_LIBRARY_DIR (default build/ when it holds libplugrt.so)
selects the libraries the package loads; PLUGRT the CLI for --profile
(default build/tools/plugrt).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODELS = os.path.join(REPO, "..", "shared", "models")
LOCAL = os.path.join(REPO, "tests", "models")
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

SEQ = 32


def model_path(model):
    """A model of ../shared/models, else of tests/models (the zoo)."""
    shared = os.path.join(MODELS, model + ".onnx")
    return shared if os.path.exists(shared) else os.path.join(LOCAL, model + ".onnx")


def seeded_inputs(model, batch):
    """Inputs of a model without a .data folder, from its graph's inputs:
    the batch for the first symbolic dim, SEQ for any other; floats normal,
    integers 0..15 (token ids, masks of ones where named so), seeded."""
    import onnx
    m = onnx.load(model_path(model), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(7)
    feeds = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (batch if k == 0 else SEQ)
                for k, d in enumerate(t.shape.dim)]
        if i.name == "class_logits":
            # detect_post: distinct, spread scores, so both engines sort
            # them alike (run_models.py's distinct_logits).
            per = int(np.prod(dims[1:]))
            grid = np.linspace(-3.0, 3.0, per, dtype=np.float32)
            feeds[i.name] = np.stack([rng.permutation(grid).reshape(dims[1:])
                                      for _ in range(dims[0])])
        elif t.elem_type == onnx.TensorProto.FLOAT:
            feeds[i.name] = rng.standard_normal(dims).astype(np.float32)
        elif "mask" in i.name:
            feeds[i.name] = np.ones(dims, np.int64)
        else:
            feeds[i.name] = rng.integers(0, 16, dims, dtype=np.int64)
    return feeds


def inputs_for(model, batch):
    """The model's reference inputs (batch 2), repeated or cut to `batch`;
    for a model of the zoo without them, seeded_inputs."""
    data = os.path.join(os.path.dirname(model_path(model)), model + ".data")
    if not os.path.isdir(data):
        return seeded_inputs(model, batch)
    feeds = {}
    for f in sorted(os.listdir(data)):
        if f.startswith("input_") and f.endswith(".npy"):
            a = np.load(os.path.join(data, f))
            reps = -(-batch // a.shape[0])
            a = np.concatenate([a] * reps)[:batch]
            feeds[f[len("input_"):-len(".npy")]] = np.ascontiguousarray(a)
    return feeds


class Ort:
    def __init__(self, path, feeds, threads):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        first = self.sess.run(None, feeds)
        self.outputs = {o.name: np.empty_like(v)
                        for o, v in zip(self.sess.get_outputs(), first)}
        self.io = self.sess.io_binding()
        for name, a in feeds.items():
            self.io.bind_cpu_input(name, a)
        for name, a in self.outputs.items():
            self.io.bind_output(name, "cpu", 0, a.dtype, a.shape, a.ctypes.data)

    def run(self):
        self.sess.run_with_iobinding(self.io)


class Plugrt:
    def __init__(self, engine, feeds, threads):
        self.ctx = engine.create_execution_context(threads=threads)
        self.feeds = feeds
        self.outputs = {}
        for name in engine.io_tensors:
            if name in feeds:
                self.ctx.set_tensor_address(name, feeds[name])
        for name in engine.io_tensors:
            if name not in feeds:
                shape = tuple(self.ctx.get_tensor_shape(name))
                dt = plugrt.nptype(engine.get_tensor_dtype(name))
                self.outputs[name] = np.empty(shape, dt)
                self.ctx.set_tensor_address(name, self.outputs[name])

    def run(self):
        self.ctx.execute_async_v3(0)

    def results(self):
        """The outputs at their dims after the run (a data-dependent output's
        buffer holds its upper bound)."""
        return {n: a[tuple(slice(0, d) for d in self.ctx.get_tensor_shape(n))]
                for n, a in self.outputs.items()}


def timed(fn, n, out):
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) * 1e-6)


def agree(a, b):
    worst = 0.0
    for name, x in a.items():
        y = b[name]
        scale = max(float(np.max(np.abs(y))), 1e-30)
        worst = max(worst, float(np.max(np.abs(x.astype(np.float64) - y))) / scale)
    return worst


def profile(model, batch, threads, iters):
    """plugrt's time by op (ms, sum of the layers' medians), from the CLI."""
    cli = os.environ.get("PLUGRT") or os.path.join(BUILD, "tools", "plugrt")
    shapes = ",".join("%s:%s" % (n, "x".join(str(v) for v in a.shape))
                      for n, a in inputs_for(model, batch).items())
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.json")
        subprocess.run([cli, "run", model_path(model), "--random-inputs",
                        "--shapes", shapes, "--op-threads", str(threads), "-n", str(iters),
                        "--profile-layers", "--profile-json", out],
                       check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        with open(out) as f:
            p = json.load(f)
    by_op = {}
    for layer in p["layers"]:
        by_op[layer["op"]] = by_op.get(layer["op"], 0.0) + layer["median_ms"]
    layers = {layer["name"]: layer["median_ms"] for layer in p["layers"]}
    return p["layers_median_sum_ms"], sorted(by_op.items(), key=lambda kv: -kv[1]), layers


def ort_profile(model, batch, threads, iters):
    """ONNX Runtime's time by op type (ms, sum over nodes of each node's
    median kernel time), from its own profiler, same inputs and threads."""
    path = model_path(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    with tempfile.TemporaryDirectory() as tmp:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feeds = inputs_for(model, batch)
        for _ in range(iters + 3):
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    per_node = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node.setdefault((e["name"], e["args"].get("op_name", "?")), []).append(e["dur"])
    by_op = {}
    nodes = {}
    for (name, op), durs in per_node.items():
        by_op[op] = by_op.get(op, 0.0) + statistics.median(durs) * 1e-3
        nodes[name[:-len("_kernel_time")]] = statistics.median(durs) * 1e-3
    return sum(by_op.values()), sorted(by_op.items(), key=lambda kv: -kv[1]), nodes


def conv_kinds(model):
    """{Conv node name: kind} of the model, and a function from ORT's
    profiled node names to the Conv node each computes (or None)."""
    import onnx
    m = onnx.load(model_path(model), load_external_data=False)
    weights = {i.name: list(i.dims) for i in m.graph.initializer}
    kinds, producer = {}, {}
    for n in m.graph.node:
        for o in n.output:
            producer[o] = n
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        k = list(a.get("kernel_shape", weights.get(n.input[1], [0, 0, 0, 0])[2:]))
        s = list(a.get("strides", [1] * len(k)))
        if a.get("group", 1) > 1:
            kinds[n.name] = "depthwise %s s%d" % ("x".join(map(str, k)), s[0])
        elif all(d == 1 for d in k):
            kinds[n.name] = "pointwise"
        else:
            kinds[n.name] = "full %s s%d" % ("x".join(map(str, k)), s[0])

    def conv_of(ort_name):
        if ort_name in kinds:
            return ort_name
        if not ort_name.endswith("_nchwc"):
            return None
        n = producer.get(ort_name[:-len("_nchwc")])
        if n is not None and n.op_type != "Conv" and n.input:
            n = producer.get(n.input[0])  # an activation fused into the Conv
        return n.name if n is not None and n.op_type == "Conv" else None

    return kinds, conv_of


def print_conv_kinds(model, layers, nodes):
    """Both engines' convolution time by kind (ms, sums of medians)."""
    kinds, conv_of = conv_kinds(model)
    if not kinds:
        return
    ort_conv = {}
    for name, ms in nodes.items():
        c = conv_of(name)
        if c is not None:
            ort_conv[c] = ort_conv.get(c, 0.0) + ms
    by = {}
    for name, kind in kinds.items():
        b = by.setdefault(kind, [0, 0.0, 0.0])
        b[0] += 1
        b[1] += layers.get(name, 0.0)
        b[2] += ort_conv.get(name, 0.0)
    print("  convolutions by kind (ORT's reorders between layouts not counted):")
    for kind, (count, mine, theirs) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print("    %-18s %3d layers  plugrt %7.3f ms  ORT %7.3f ms  ORT / plugrt %.2f" % (
            kind, count, mine, theirs, theirs / mine if mine > 0 else float("nan")))


def measure(args, threads):
    """The rows of one thread count (in this process)."""
    rows = []
    for model in args.models.split(","):
        path = model_path(model)
        for batch in [int(b) for b in args.batches.split(",")]:
            feeds = inputs_for(model, batch)
            profiles = [{n: (a.shape, a.shape, a.shape) for n, a in feeds.items()}]
            engine = plugrt.build(path, profiles=profiles)
            o, p = Ort(path, feeds, threads), Plugrt(engine, feeds, threads)
            o.run()
            p.run()
            err = agree(p.results(), o.outputs)
            if err > 1e-3:
                raise SystemExit("%s batch %d: plugrt and ONNX Runtime disagree "
                                 "(%.3g of the largest magnitude)" % (model, batch, err))
            # Warm-up, and the number of runs per round (~50 ms each side).
            t0 = time.perf_counter()
            for _ in range(3):
                o.run()
                p.run()
            one = (time.perf_counter() - t0) / 6
            k = args.per_round or max(2, min(200, int(0.05 / max(one, 1e-5))))
            to, tp, paired = [], [], []
            for r in range(args.rounds):
                # Each engine goes first in every other round, so neither
                # always runs just after the other.
                pair = ((o.run, to), (p.run, tp))
                for run, times in (pair if r % 2 == 0 else pair[::-1]):
                    # The other engine's threads spin a while after its
                    # runs, on CPUs this one needs: let them park first,
                    # then wake this engine's own with an untimed run.
                    time.sleep(0.03)
                    run()
                    timed(run, k, times)
                # This round's pair of blocks ran within ~0.1 s of each other.
                paired.append(statistics.median(to[-k:]) / statistics.median(tp[-k:]))
            mo, mp = statistics.median(to), statistics.median(tp)
            rows.append([model, batch, threads, mo, mp, mo / mp, len(to), err, min(to),
                         min(tp), paired])
            print("  %-20s batch %d threads %d: ORT %8.3f ms, plugrt %8.3f ms, "
                  "ORT/plugrt %.2f  (%d runs each)" % (model, batch, threads, mo, mp,
                                                       mo / mp, len(to)),
                  file=sys.stderr, flush=True)
            del o, p
            engine.close()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mobilenet_v3_small,bert_small")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=10, help="alternations per row")
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs of the whole measurement; rows report the median")
    ap.add_argument("--per-round", type=int, default=0,
                    help="runs of each engine per round (default: about 50 ms of work)")
    ap.add_argument("--profile", action="store_true",
                    help="per-op profile of plugrt for rows where it is slower")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        json.dump(measure(args, args.child), sys.stdout)
        return

    load0 = os.getloadavg()
    print("plugrt %s (%s), onnxruntime %s, %d CPUs (plugrt's default: %d threads), "
          "load average %.2f %.2f %.2f" % (
              plugrt.__version__, os.environ.get("PLUGRT_LIBRARY_DIR", "package"),
              ort.__version__, os.cpu_count(), plugrt._capi.fn.default_thread_count(),
              *load0))
    runs = {}
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    for rep in range(args.repeats):
        for threads in [int(t) for t in args.threads.split(",")]:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", str(threads),
                   "--models", args.models, "--batches", args.batches, "--rounds",
                   str(args.rounds), "--per-round", str(args.per_round)]
            out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE).stdout
            for r in json.loads(out):
                runs.setdefault((r[0], r[1], r[2]), []).append(r)
    rows = []
    for (model, batch, threads), rs in runs.items():
        mo = statistics.median(r[3] for r in rs)
        mp = statistics.median(r[4] for r in rs)
        ratios = [r[5] for r in rs]
        bo, bp = min(r[8] for r in rs), min(r[9] for r in rs)
        paired = statistics.median(x for r in rs for x in r[10])
        rows.append([model, batch, threads, mo, mp, mo / mp, min(ratios), max(ratios), bo,
                     bp, paired])
    rows.sort(key=lambda r: (r[2], args.models.split(",").index(r[0]), r[1]))
    load1 = os.getloadavg()
    print("load average after: %.2f %.2f %.2f" % load1)
    if args.repeats > 1:
        print("\nover %d repeats (median of each engine's medians; ratio range):" %
              args.repeats)
        for model, batch, threads, mo, mp, r, lo, hi, _, _, pr in rows:
            print("  %-20s batch %d threads %d: ORT %8.3f ms, plugrt %8.3f ms, "
                  "ORT/plugrt %.2f (%.2f .. %.2f), by round %.2f" % (
                      model, batch, threads, mo, mp, r, lo, hi, pr))
    if args.markdown:
        # The medians are the figures; the best runs show what the engines do
        # when the machine's other work leaves them alone.
        # The ratio by round is the median over rounds of each round's two
        # medians' ratio: a slow spell of the machine, which lasts seconds,
        # falls on both blocks of a round alike.
        print("\n| model | batch | threads | ONNX Runtime | plugrt | ORT / plugrt "
              "| best ORT | best plugrt | best ORT / plugrt | ORT / plugrt by round |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for model, batch, threads, mo, mp, r, _, _, bo, bp, pr in rows:
            name = model + (" (seq %d)" % SEQ if model.startswith("bert") else "")
            print("| %s | %d | %d | %.2f ms | %.2f ms | %.2f | %.2f ms | %.2f ms | %.2f "
                  "| %.2f |" % (name, batch, threads, mo, mp, r, bo, bp, bo / bp, pr))
    if args.profile:
        for model, batch, threads, mo, mp, r, _, _, _, _, _ in rows:
            if r >= 1.0:
                continue
            iters = 20 if batch > 1 else 50
            total, ops, layers = profile(model, batch, threads, iters)
            ototal, oops, nodes = ort_profile(model, batch, threads, iters)
            print("\n%s batch %d, %d thread(s): by op, sum of the layers' medians "
                  "(plugrt %.2f ms; ORT's profiler %.2f ms, its nodes fused its own way):" % (
                      model, batch, threads, total, ototal))
            for k in range(max(min(len(ops), 8), min(len(oops), 8))):
                a = ("%-18s %7.3f ms %5.1f%%" % (ops[k][0], ops[k][1], 100 * ops[k][1] / total)
                     if k < len(ops) else "")
                b = ("%-18s %7.3f ms %5.1f%%" % (oops[k][0], oops[k][1],
                                                 100 * oops[k][1] / ototal)
                     if k < len(oops) else "")
                print("  plugrt %-38s | ORT %s" % (a, b))
            print_conv_kinds(model, layers, nodes)


if __name__ == "__main__":
    main()

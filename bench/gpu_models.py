#!/usr/bin/env python3
"""Whole models on the GPU: plugrt beside PyTorch, in one run.

For each model and batch: `plugrt run MODEL --device cuda --random-inputs`
(eager, then --cuda-graph), once per plugrt library folder given (the
same program over another libplugrt: a baseline and a change, on one
machine in one run), and PyTorch's own model of the same architecture with
random weights, eager and as a CUDA graph. Every figure is the median of
the per-run latency measured the same way on both sides: the host's clock
around one run and the wait for its result (plugrt run's latency; for
PyTorch, the forward pass and torch.cuda.synchronize()), after warm-up.

    python3 bench/gpu_models.py PLUGRT [--libs NAME=DIR ...] [--runs 100]
        [--batches 1,8,64] [--models mobilenet_v3_small] [--models-dir DIR]

Models: mobilenet_v3_small (../shared/models, torchvision's architecture).
Prints a table and one "@result {json}" line per figure. Exit status 77
without torch or a GPU.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "models")
MODELS = {"mobilenet_v3_small": ("image", (3, 224, 224))}


def plugrt_median(plugrt, libdir, models_dir, model, inp, shape, runs, graph):
    env = dict(os.environ)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + ":" + env.get("LD_LIBRARY_PATH", "")
    cmd = [plugrt, "run", os.path.join(models_dir, model + ".onnx"), "--device", "cuda",
           "--shapes", "%s:%s" % (inp, "x".join(map(str, shape))), "--random-inputs",
           "-n", str(runs), "--warmup", "10", "--json"]
    if graph:
        cmd.append("--cuda-graph")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("plugrt failed: %s\n%s" % (" ".join(cmd), out.stderr[-2000:]))
    return json.loads(out.stdout)["latency_ms"]["median"] * 1000.0


def torch_medians(torch, model, shape, runs):
    import torchvision

    net = getattr(torchvision.models, model)(weights=None).cuda().eval()
    x = torch.randn(*shape, device="cuda")
    times = {}
    with torch.inference_mode():
        for _ in range(10):
            net(x)
        torch.cuda.synchronize()
        t = []
        for _ in range(runs):
            s = time.perf_counter()
            net(x)
            torch.cuda.synchronize()
            t.append(time.perf_counter() - s)
        times["eager"] = statistics.median(t) * 1e6
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                net(x)
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            net(x)
        for _ in range(10):
            g.replay()
        torch.cuda.synchronize()
        t = []
        for _ in range(runs):
            s = time.perf_counter()
            g.replay()
            torch.cuda.synchronize()
            t.append(time.perf_counter() - s)
        times["graph"] = statistics.median(t) * 1e6
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plugrt")
    ap.add_argument("--libs", nargs="*", default=[], help="NAME=DIR of a libplugrt")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--batches", default="1,8,64")
    ap.add_argument("--models", default="mobilenet_v3_small")
    ap.add_argument("--models-dir", default=SHARED, help="where MODEL.onnx is")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print("gpu_models: skipped: no torch (%s)" % e)
        return 77
    if not torch.cuda.is_available():
        print("gpu_models: skipped: no GPU")
        return 77
    libs = [tuple(x.split("=", 1)) for x in a.libs] or [("plugrt", "")]
    print("GPU:", torch.cuda.get_device_name(0), "| median latency per run, µs")
    head = ["model", "batch"] + ["%s %s" % (n, m) for n, _ in libs for m in ("eager", "graph")]
    print(" | ".join(head + ["torch eager", "torch graph"]))
    for model in a.models.split(","):
        inp, chw = MODELS[model]
        for b in map(int, a.batches.split(",")):
            shape = (b,) + chw
            row = [model, str(b)]
            for name, d in libs:
                for graph in (0, 1):
                    us = plugrt_median(a.plugrt, d, a.models_dir, model, inp, shape, a.runs, graph)
                    row.append("%.0f" % us)
                    print("@result " + json.dumps({"model": model, "batch": b, "impl": name,
                                                   "graph": graph, "us": us}))
            tt = torch_medians(torch, model, shape, a.runs)
            row += ["%.0f" % tt["eager"], "%.0f" % tt["graph"]]
            for k, v in tt.items():
                print("@result " + json.dumps({"model": model, "batch": b, "impl": "torch",
                                               "graph": int(k == "graph"), "us": v}))
            print(" | ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())

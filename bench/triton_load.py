"""Load test of the plugrt Triton backend, next to `plugrt run --threads` on
the same engine.

Starts tritonserver on 127.0.0.1 with one model (bert_small from
../shared/models, or circ_pad_conv), sends a fixed number of batch-1
requests from several client threads over keep-alive HTTP connections
(binary tensors), checks every answer against the model's reference, and
reports throughput and latency (p50, p99) with the server's own count of
executions; then times `plugrt run` on the same model with one context and
with as many as the server has instances (--threads), at batch 1 and at the
batch size the server's batcher reached. Every loop is bounded in requests and in time:
the test stops by itself, and a request not answered right by the deadline
counts as lost.

    /opt/plugrt-triton/bin/python bench/triton_load.py [--build build]
        [--model bert_small|circ_pad_conv] [--requests 4000] [--clients 8]
        [--instances 2] [--kind cpu|gpu] [--deadline 300]

Run from the repository root after a build; scripts/deps.sh installs the
server (or TRITONSERVER names one). --kind gpu serves KIND_GPU instances
(the model built on load for CUDA) and times `plugrt run --device cuda`
(serving/triton/tests/gpu_run.sh runs it on a GPU machine). Needs only
numpy and the standard library (no tritonclient). Prints a Markdown table
for bench/RESULTS.md.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "serving", "triton", "tests"))
import triton_client as tc  # noqa: E402

MODELS = {
    # name: (ONNX file, rows of the reference to send, profile parameters)
    "bert_small": ("bert_small.onnx",
                   'parameters: { key: "min_shapes" value: { string_value: "input_ids:1x32,attention_mask:1x32" } }\n'
                   'parameters: { key: "max_shapes" value: { string_value: "input_ids:8x32,attention_mask:8x32" } }\n'
                   'parameters: { key: "opt_shapes" value: { string_value: "input_ids:8x32,attention_mask:8x32" } }\n',
                   8),
    "circ_pad_conv": ("circ_pad_conv.onnx", "", 0),
}


def load_data(models, name):
    d = os.path.join(models, name + ".data")
    ins = {f[6:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("input_")}
    outs = {f[7:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("output_")}
    return ins, outs


def close(got, ref):
    return got.shape == ref.shape and bool(np.all(np.abs(got - ref) <= 1e-4 + 1e-4 * np.abs(ref)))


def plugrt_run(plugrt, model_path, plugins, inputs_dir, threads, iterations, device, extra):
    args = [plugrt, "run", model_path, "--no-default-plugins", "--plugins", plugins,
            "--device", device,
            "--threads", str(threads), "--iterations", str(iterations), "--warmup", "20"]
    for name in sorted(os.listdir(inputs_dir)):
        args += ["--input", "%s=%s" % (name[6:-4], os.path.join(inputs_dir, name))]
    out = subprocess.run(args + extra, check=True, capture_output=True, text=True).stdout
    lat = re.search(r"latency \(ms\): min ([\d.]+), median ([\d.]+), p90 ([\d.]+), p99 ([\d.]+)", out)
    thr = re.search(r"throughput: ([\d.]+) inferences/s", out)
    return float(thr.group(1)), float(lat.group(2)), float(lat.group(4))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--models", default=os.path.join(HERE, "..", "..", "shared", "models"))
    p.add_argument("--model", default="bert_small", choices=sorted(MODELS))
    p.add_argument("--requests", type=int, default=4000)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--instances", type=int, default=2)
    p.add_argument("--kind", default="cpu", choices=["cpu", "gpu"],
                   help="KIND_CPU or KIND_GPU instances (and plugrt run's device)")
    p.add_argument("--queue-delay-us", type=int, default=500)
    p.add_argument("--deadline", type=float, default=300.0, help="seconds for the whole load")
    a = p.parse_args()
    build = os.path.abspath(a.build)
    plugrt = os.path.join(build, "tools", "plugrt")
    plugins = os.path.join(build, "libplugrt_plugins.so")
    backend_dir = os.path.join(build, "serving", "triton", "backends")
    binary = tc.find_tritonserver()
    if binary is None:
        sys.exit("no tritonserver: run scripts/deps.sh and use /opt/plugrt-triton/bin/python")
    onnx_file, profile, max_batch = MODELS[a.model]
    ins, refs = load_data(a.models, a.model)
    work = tempfile.mkdtemp(prefix="plugrt-triton-load-")
    repo = os.path.join(work, "repo")
    os.makedirs(os.path.join(repo, "m", "1"))
    os.symlink(os.path.join(os.path.abspath(a.models), onnx_file),
               os.path.join(repo, "m", "1", "model.onnx"))
    cfg = 'backend: "plugrt"\n'
    cfg += 'parameters: { key: "plugins" value: { string_value: "%s" } }\n' % plugins
    cfg += "instance_group [ { count: %d kind: KIND_%s } ]\n" % (a.instances, a.kind.upper())
    if max_batch:
        cfg += "max_batch_size: %d\n" % max_batch
        cfg += "dynamic_batching { max_queue_delay_microseconds: %d }\n" % a.queue_delay_us
    cfg += profile
    with open(os.path.join(repo, "m", "config.pbtxt"), "w") as f:
        f.write(cfg)

    # One request per reference row (batch 1) when the model batches, else
    # the whole reference input.
    rows = ins[next(iter(ins))].shape[0] if max_batch else 1
    if max_batch:
        reqs = [({k: v[r : r + 1] for k, v in ins.items()},
                 {k: v[r : r + 1] for k, v in refs.items()}) for r in range(rows)]
    else:
        reqs = [(ins, refs)]

    srv = tc.Server(binary, repo, backend_dir, os.path.join(work, "server.log"))
    try:
        if not srv.wait_ready():
            sys.exit("the server did not start:\n" + srv.log_text()[-3000:])
        state = srv.repository_index().get("m", {})
        if state.get("state") != "READY":
            sys.exit("the model did not load: %s" % state.get("reason", state))
        conn = srv.connection()
        for _ in range(50):  # warm-up
            tc.infer(conn, "m", reqs[0][0])
        conn.close()
        inf0, exe0 = srv.stats("m")
        per_client = [a.requests // a.clients + (i < a.requests % a.clients)
                      for i in range(a.clients)]
        lat = [[] for _ in range(a.clients)]
        wrong = [0] * a.clients
        deadline = time.monotonic() + a.deadline

        def client(i):
            c = srv.connection()
            for n in range(per_client[i]):
                if time.monotonic() > deadline:
                    break
                x, want = reqs[(i + n) % len(reqs)]
                t0 = time.perf_counter()
                try:
                    out, err = tc.infer(c, "m", x)
                except OSError:
                    out, err = None, "connection"
                    c.close()
                    c = srv.connection()
                lat[i].append(time.perf_counter() - t0)
                if err is not None or not all(close(out[k], want[k]) for k in want):
                    wrong[i] += 1
            c.close()

        ts = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        wall = time.perf_counter() - t0
        inf1, exe1 = srv.stats("m")
    finally:
        srv.stop()
    all_lat = np.array(sum(lat, [])) * 1e3
    answered = len(all_lat) - sum(wrong)
    lost = a.requests - answered
    batch = (inf1 - inf0) / max(1, exe1 - exe0)
    print("triton: %d requests from %d clients, %d answered right, %d lost; %.1f s" %
          (a.requests, a.clients, answered, lost, wall))
    print("triton: %.0f inferences/s; latency p50 %.2f ms, p99 %.2f ms; %d executions "
          "(%.2f requests per execution)" %
          (answered / wall, np.percentile(all_lat, 50), np.percentile(all_lat, 99),
           exe1 - exe0, batch))

    # plugrt run on the same engine: as many contexts as instances, at batch
    # 1 and at the batch the server reached (rounded).
    rows_run = [1]
    if max_batch and round(batch) > 1:
        rows_run.append(int(round(batch)))
    results = []
    for b, nthreads in [(b, t) for t in sorted({1, a.instances}) for b in rows_run]:
        d = os.path.join(work, "in%d" % b)
        os.makedirs(d, exist_ok=True)
        for k, v in ins.items():
            np.save(os.path.join(d, "input_%s.npy" % k),
                    np.concatenate([v] * ((b + v.shape[0] - 1) // v.shape[0]))[:b] if max_batch else v)
        shapes = ",".join("%s:%s" % (k, "x".join(map(str, (b,) + v.shape[1:])))
                          for k, v in ins.items()) if max_batch else ""
        thr, med, p99 = plugrt_run(plugrt, os.path.join(os.path.abspath(a.models), onnx_file),
                                   plugins, d, nthreads, 1000 // b,
                                   "cuda" if a.kind == "gpu" else "cpu",
                                   ["--shapes", shapes] if shapes else [])
        results.append((b, nthreads, thr * b, med, p99))
        print("plugrt run --device %s --threads %d, batch %d: %.0f inferences/s "
              "(%.0f runs/s); latency median %.2f ms, p99 %.2f ms"
              % ("cuda" if a.kind == "gpu" else "cpu", nthreads, b, thr * b, thr, med, p99))
    print()
    print("| model | path | clients / threads | batch | inferences/s | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|")
    print("| %s | Triton HTTP, %d %s instances | %d clients | 1 per request (%.2f per execution) | %.0f | %.2f | %.2f |" %
          (a.model, a.instances, "KIND_" + a.kind.upper(), a.clients, batch, answered / wall,
           np.percentile(all_lat, 50), np.percentile(all_lat, 99)))
    for b, nthreads, thr, med, p99 in results:
        print("| %s | plugrt run --device %s --threads %d | %d threads | %d | %.0f | %.2f | %.2f |" %
              (a.model, "cuda" if a.kind == "gpu" else "cpu", nthreads, nthreads, b, thr,
               med, p99))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gpu_models.py --dry-run: the commands it would run, checked against the
models and plugrt itself (CTest bench_gpu_models_dry; no GPU or torch).

    python3 test_gpu_models.py --plugrt PLUGRT --work DIR

- one `plugrt build` per model and precision that plugrt has a flag for,
  with a profile whose min and max are the smallest and largest shapes of
  the rows (from the model's own input dims), and every `plugrt run` shape
  inside it; precisions without a flag are reported "n/a (no flag)";
- bert_small's rows stop at its 128 positions and say why;
- one build and one run line actually run through the CPU build of plugrt
  (--device cpu for cuda), so the options are ones plugrt takes.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))


def opt(cmd, name):
    return cmd[cmd.index(name) + 1] if name in cmd else None


def parse_shapes(s):
    return {kv.split(":")[0]: tuple(int(d) for d in kv.split(":")[1].split("x"))
            for kv in s.split(",")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    models, batches = ["resnext_w8", "bert_small", "circ_pad_conv"], [1, 8]
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "gpu_models.py"), a.plugrt, "--dry-run",
         "--models", ",".join(models), "--batches", ",".join(map(str, batches)),
         "--work", a.work], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stdout, out.stderr)
        return 1
    lines = out.stdout.splitlines()
    cmds = [shlex.split(line[2:]) for line in lines if line.startswith("$ ")]
    builds = [c for c in cmds if c[1] == "build"]
    runs = [c for c in cmds if c[1] == "run"]
    h = subprocess.run([a.plugrt, "build", "--help"], capture_output=True, text=True)
    help_text = " ".join((h.stdout + h.stderr).split())
    real = "no reduced-precision mode" not in help_text
    precs = ["fp32"] + [p for p in ("fp16", "bf16") if real and "--" + p in help_text]
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    # bert_small: only sequence 128 (its position table), so 2 rows.
    rows = {"resnext_w8": len(batches), "bert_small": len(batches), "circ_pad_conv": 1}
    check("bert_small: sequence 512 left out: the position table holds 128" in lines,
          "bert_small's note on sequence 512")
    for model in models:
        path = [c[2] for c in builds if os.path.basename(c[2]) == model + ".onnx"]
        check(len(path) == len(precs), "%s: %d builds for precisions %s" % (model, len(path), precs))
        if not path:
            continue
        m = onnx.load(path[0], load_external_data=False)
        dyn = {i.name: [d.dim_value if d.HasField("dim_value") else None
                        for d in i.type.tensor_type.shape.dim]
               for i in m.graph.input}
        dyn = {n: d for n, d in dyn.items() if None in d}
        for prec in precs:
            b = [c for c in builds if c[2] == path[0] and (prec == "fp32" and not any(
                f in c for f in ("--fp16", "--bf16")) or "--" + prec in c)]
            check(len(b) == 1, "%s %s: one build" % (model, prec))
            if len(b) != 1:
                continue
            b = b[0]
            plan = opt(b, "-o")
            check(opt(b, "--device") == "cuda", "%s: built for cuda" % model)
            mine = [r for r in runs if r[2] == plan]
            check(len(mine) == 2 * rows[model],
                  "%s %s: %d runs, expected eager and graph per row" % (model, prec, len(mine)))
            check(sum("--cuda-graph" in r for r in mine) == rows[model], "%s: graph runs" % model)
            if not dyn:
                check(opt(b, "--min-shapes") is None, "%s: no profile for fixed shapes" % model)
                continue
            lo, hi = parse_shapes(opt(b, "--min-shapes")), parse_shapes(opt(b, "--max-shapes"))
            check(set(lo) == set(dyn), "%s: the profile names the dynamic inputs" % model)
            for n in dyn:
                check(lo[n][0] == min(batches) and hi[n][0] == max(batches),
                      "%s: profile batch %s..%s" % (model, lo[n], hi[n]))
                for k, d in enumerate(dyn[n]):
                    if d is not None:
                        check(lo[n][k] == d == hi[n][k], "%s: fixed dim %d kept" % (model, k))
            for r in mine:
                for n, s in parse_shapes(opt(r, "--shapes")).items():
                    check(all(lo[n][k] <= s[k] <= hi[n][k] for k in range(len(s))),
                          "%s: run shape %s outside the profile" % (model, s))
    for prec in ("fp16", "bf16"):
        if prec not in precs:
            check(any('"precision": "%s"' % prec in line and "n/a (no flag)" in line
                      for line in lines), "%s reported n/a without a flag" % prec)
    torch_lines = [line for line in lines if line.startswith("torch ")]
    check(len(torch_lines) == sum(rows.values()) * 3, "one torch line per row and precision")
    # The options are plugrt's: one build and one run on the CPU.
    b = [c for c in builds if c[2].endswith("resnext_w8.onnx") and "--fp16" not in c
         and "--bf16" not in c][0]
    b[b.index("--device") + 1] = "cpu"
    r = [c for c in runs if c[2] == opt(b, "-o") and "--cuda-graph" not in c][0]
    r[r.index("-n") + 1] = "2"
    r[r.index("--warmup") + 1] = "0"
    for cmd in (b, r):
        p = subprocess.run(cmd, capture_output=True, text=True)
        check(p.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-500:]))
        if p.returncode == 0 and cmd is r:
            check(json.loads(p.stdout)["runs"] == 2, "the run's JSON counts 2 runs")
    for e in errors:
        print("FAIL:", e)
    print("gpu_models --dry-run: %d builds, %d runs checked; %s" % (
        len(builds), len(runs), "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

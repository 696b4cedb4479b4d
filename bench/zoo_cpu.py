#!/usr/bin/env python3
"""Every model of the zoo on the CPU: one or two plugrt programs against ONNX
Runtime, in one run.

    python3 bench/zoo_cpu.py PLUGRT [PLUGRT_BASELINE] [--threads T] [--runs N]
                             [--rounds R] [--models a,b]

Models: ../shared/models (mobilenet_v3_small, bert_small) and tests/models
(resnet18_w8, shufflenet_v2_x0_5, efficientnet_b0_w25, resnext_w8,
densenet_w8, lstm_seq, gpt2_tiny, gpt2_tiny_dynamo), at batch 1 and 8 (sequences of 32 tokens). plugrt runs
as `plugrt run MODEL --random-inputs --shapes ... -n N --op-threads T
--json` (its median latency of N timed runs after its warmup); ONNX Runtime
in this process with T intra-op threads, sequential execution, the same
shapes and random data of the same kinds (integers 0..15 as plugrt's), the
median of N timed runs after two untimed. Each row runs R rounds, the
engines in turn and each going first in every other round, so a change of
the machine's load hits them alike; the figure is the median over rounds.
With --quantized, the quantized zoo (tests/models/make_quantized.py)
against ONNX Runtime on the same quantized models, and plugrt on the fp32
model each was made from in place of a baseline program.
Prints a markdown table: milliseconds, ORT / plugrt (above 1: plugrt is
faster) and, with a baseline program, baseline / plugrt (above 1: faster
than the baseline). `plugrt run` builds the engine before it times, so its
build is not in the figure.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SHARED = os.path.join(ROOT, "..", "shared", "models")
LOCAL = os.path.join(ROOT, "tests", "models")
IMAGE = ("image", "image:{b}x3x224x224")
IMAGE128 = ("image128", "image:{b}x3x128x128")
TOKENS = ("tokens", "input_ids:{b}x32,attention_mask:{b}x32")
IDS = ("tokens", "input_ids:{b}x32")
ZOO = [("mobilenet_v3_small", SHARED, IMAGE), ("bert_small", SHARED, TOKENS),
       ("resnet18_w8", LOCAL, IMAGE), ("shufflenet_v2_x0_5", LOCAL, IMAGE),
       ("efficientnet_b0_w25", LOCAL, IMAGE), ("resnext_w8", LOCAL, IMAGE),
       ("densenet_w8", LOCAL, IMAGE), ("lstm_seq", LOCAL, IDS), ("gpt2_tiny", LOCAL, TOKENS),
       ("gpt2_tiny_dynamo", LOCAL, TOKENS)]
# --quantized: tests/models/make_quantized.py's models, each beside the fp32
# model it was made from (plugrt's fp32 on that is the last column).
QZOO = [("resnet18_w8_qdq", LOCAL, IMAGE, os.path.join(LOCAL, "resnet18_w8")),
        ("efficientnet_b0_w25_qdq", LOCAL, IMAGE, os.path.join(LOCAL, "efficientnet_b0_w25")),
        ("resnext_w8_qdq", LOCAL, IMAGE, os.path.join(LOCAL, "resnext_w8")),
        ("densenet_w8_qdq", LOCAL, IMAGE, os.path.join(LOCAL, "densenet_w8")),
        ("deeplab_w8_qdq", LOCAL, IMAGE128, os.path.join(LOCAL, "deeplab_w8")),
        ("gpt2_tiny_dynq", LOCAL, TOKENS, os.path.join(LOCAL, "gpt2_tiny")),
        ("bert_small_dynq", LOCAL, TOKENS, os.path.join(SHARED, "bert_small"))]


def plugrt_ms(prog, path, shapes, threads, runs):
    out = subprocess.run([prog, "run", path, "--random-inputs", "--shapes", shapes,
                          "-n", str(runs), "--op-threads", str(threads), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["median"]


def ort_session(path, threads):
    import onnxruntime as ort  # noqa: PLC0415 - only where it runs
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_inputs(sess, kind, batch, rng):
    feeds = {}
    for i in sess.get_inputs():
        if kind.startswith("image"):
            hw = 128 if kind == "image128" else 224
            feeds[i.name] = rng.uniform(-1, 1, (batch, 3, hw, hw)).astype(np.float32)
        else:
            feeds[i.name] = rng.integers(0, 16, (batch, 32), dtype=np.int64)
    return feeds


def ort_ms(sess, feeds, runs):
    for _ in range(2):
        sess.run(None, feeds)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plugrt")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default="")
    ap.add_argument("--quantized", action="store_true",
                    help="the quantized zoo; the baseline column is plugrt on the fp32 model")
    a = ap.parse_args()
    pick = set(a.models.split(",")) if a.models else None
    rng = np.random.default_rng(1)
    head = "| model | batch | plugrt ms | ORT ms | ORT / plugrt |"
    if a.quantized:
        head += " plugrt fp32 ms | fp32 / int8 |"
    elif a.baseline:
        head += " baseline ms | baseline / plugrt |"
    print("threads %d, %d runs a figure, %d rounds, load %s" %
          (a.threads, a.runs, a.rounds, " ".join("%.2f" % x for x in os.getloadavg())))
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for name, folder, (kind, shape), *fp32 in (QZOO if a.quantized else ZOO):
        if pick and name not in pick:
            continue
        path = os.path.join(folder, name + ".onnx")
        if not os.path.exists(path):
            print("| %s | - | missing | | |" % name)
            continue
        sess = ort_session(path, a.threads)
        for batch in (1, 8):
            shapes = shape.format(b=batch)
            feeds = ort_inputs(sess, kind, batch, rng)
            got = {"new": [], "ort": [], "base": []}
            for r in range(a.rounds):
                order = ["new", "ort", "base"] if r % 2 == 0 else ["base", "ort", "new"]
                for who in order:
                    if who == "ort":
                        got[who].append(ort_ms(sess, feeds, a.runs))
                    elif who == "new":
                        got[who].append(plugrt_ms(a.plugrt, path, shapes, a.threads, a.runs))
                    elif fp32:
                        got[who].append(plugrt_ms(a.plugrt, fp32[0] + ".onnx", shapes,
                                                  a.threads, a.runs))
                    elif a.baseline:
                        got[who].append(plugrt_ms(a.baseline, path, shapes, a.threads,
                                                  a.runs))
            new, ort = statistics.median(got["new"]), statistics.median(got["ort"])
            row = "| %s | %d | %.3f | %.3f | %.2f |" % (name, batch, new, ort, ort / new)
            if a.baseline or fp32:
                base = statistics.median(got["base"])
                row += " %.3f | %.2f |" % (base, base / new)
            print(row, flush=True)
    print("load after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Real models through the plugrt program, against ONNX Runtime.

    run_models.py --plugrt PATH --model NAME [--models-dir DIR]
                  [--shared DIR] [--work DIR] [--device cpu|cuda]

For each shape of the model's list (below), seeded random inputs go to ONNX
Runtime (CPU) for the reference outputs, both are written as
input_<name>.npy / output_<name>.npy, and

    plugrt run MODEL.onnx --compare DIR --rtol 1e-4 --atol A

must pass, A being 1e-4 of the largest reference magnitude (the smallest
such over the outputs): every element within 1e-4 of its own value or of
its tensor's scale. MobileNet's logits are ~1e-9 with random weights, so a
fixed atol would accept anything there; a purely element-wise rtol fails
wherever sums cancel near zero. The same shapes also run through one plan
built with a profile spanning all of them (`plugrt build` with
--min/--opt/--max-shapes), so one engine serves every shape; and at two
shapes the outputs with --op-threads 1 and 3 must be the same bits. For the
models in ../shared/models, their .data/ folder (made by ONNX Runtime 1.30)
is checked the same way first.

Exit status 0 pass, 1 a mismatch or an error, 77 (skipped) when the model
or onnxruntime is missing. Needs numpy and onnxruntime (scripts/deps.sh
installs both for /usr/bin/python3).
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

RTOL = 1e-4
SKIP = 77

IMAGE_BATCHES = [1, 2, 8]
# Transformer shapes: (batch, sequence). Positions end at 128.
BERT_SHAPES = [(1, 1), (1, 7), (1, 128), (8, 1), (8, 7), (8, 128), (2, 32)]
GPT2_SHAPES = [(1, 1), (1, 7), (1, 128), (8, 1), (8, 7), (8, 128), (2, 16)]


def image_inputs(batch, rng):
    return {"image": rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)}


def image128_inputs(batch, rng):
    return {"image": rng.standard_normal((batch, 3, 128, 128)).astype(np.float32)}


def distinct_logits(shape, rng):
    """Logits of one batch all distinct and spread (a shuffled grid over
    [-3, 3]): Sigmoid's last bit differs between engines, so scores closer
    than that could sort either way and select other boxes."""
    per = int(np.prod(shape[1:]))
    grid = np.linspace(-3.0, 3.0, per, dtype=np.float32)
    return np.stack([rng.permutation(grid).reshape(shape[1:]) for _ in range(shape[0])])


def detect_inputs(batch, rng):
    return {"regression": rng.standard_normal((batch, 2000, 4)).astype(np.float32),
            "class_logits": distinct_logits((batch, 2000, 20), rng)}


def token_inputs(vocab):
    def make(shape, rng):
        b, s = shape
        ids = rng.integers(0, vocab, (b, s), dtype=np.int64)
        # Padding at the end of every other row (at least one real token),
        # so the attention mask is exercised.
        mask = np.ones((b, s), np.int64)
        for r in range(1, b, 2):
            mask[r, max(1, s - 1 - r * s // (2 * b)):] = 0
        return {"input_ids": ids, "attention_mask": mask}
    return make


def id_inputs(vocab):
    def make(shape, rng):
        b, s = shape
        return {"input_ids": rng.integers(0, vocab, (b, s), dtype=np.int64)}
    return make


# LSTM sequence shapes: (batch, sequence).
SEQ_SHAPES = [(1, 1), (1, 32), (8, 32), (8, 5), (2, 64)]

# name: (file's folder, shapes, input maker, profile min/opt/max, label of a shape)
MODELS = {
    "mobilenet_v3_small": ("shared", IMAGE_BATCHES[:1] + IMAGE_BATCHES[2:],
                           lambda b, rng: image_inputs(b, rng),
                           "image:1x3x224x224", "image:2x3x224x224",
                           "image:8x3x224x224"),
    "bert_small": ("shared", BERT_SHAPES, token_inputs(2000),
                   "input_ids:1x1,attention_mask:1x1",
                   "input_ids:2x32,attention_mask:2x32",
                   "input_ids:8x128,attention_mask:8x128"),
    "resnet18_w8": ("models", IMAGE_BATCHES, lambda b, rng: image_inputs(b, rng),
                    "image:1x3x224x224", "image:2x3x224x224", "image:8x3x224x224"),
    "shufflenet_v2_x0_5": ("models", IMAGE_BATCHES, lambda b, rng: image_inputs(b, rng),
                           "image:1x3x224x224", "image:2x3x224x224",
                           "image:8x3x224x224"),
    "efficientnet_b0_w25": ("models", IMAGE_BATCHES, lambda b, rng: image_inputs(b, rng),
                            "image:1x3x224x224", "image:2x3x224x224",
                            "image:8x3x224x224"),
    # make_graphs.py: grouped convolutions, and dense concatenation.
    "resnext_w8": ("models", IMAGE_BATCHES, lambda b, rng: image_inputs(b, rng),
                   "image:1x3x224x224", "image:2x3x224x224", "image:8x3x224x224"),
    "densenet_w8": ("models", IMAGE_BATCHES, lambda b, rng: image_inputs(b, rng),
                    "image:1x3x224x224", "image:2x3x224x224", "image:8x3x224x224"),
    # make_graphs.py: a small ViT, a segmentation head (dilated convs,
    # bilinear Resize), detection post-processing (NonMaxSuppression).
    "vit_tiny": ("models", IMAGE_BATCHES, image128_inputs, "image:1x3x128x128",
                 "image:2x3x128x128", "image:8x3x128x128"),
    "deeplab_w8": ("models", IMAGE_BATCHES, image128_inputs, "image:1x3x128x128",
                   "image:2x3x128x128", "image:8x3x128x128"),
    "detect_post": ("models", IMAGE_BATCHES, detect_inputs,
                    "regression:1x2000x4,class_logits:1x2000x20",
                    "regression:2x2000x4,class_logits:2x2000x20",
                    "regression:8x2000x4,class_logits:8x2000x20"),
    # make_graphs.py: embedding, bidirectional LSTM, LSTM, classifier.
    "lstm_seq": ("models", SEQ_SHAPES, id_inputs(64), "input_ids:1x1", "input_ids:2x32",
                 "input_ids:8x64"),
    "gpt2_tiny": ("models", GPT2_SHAPES, token_inputs(512),
                  "input_ids:1x1,attention_mask:1x1",
                  "input_ids:2x16,attention_mask:2x16",
                  "input_ids:8x128,attention_mask:8x128"),
    # torch's default exporter: opset 20, weights in gpt2_tiny_dynamo.onnx.data.
    "gpt2_tiny_dynamo": ("models", GPT2_SHAPES, token_inputs(512),
                         "input_ids:1x1,attention_mask:1x1",
                         "input_ids:2x16,attention_mask:2x16",
                         "input_ids:8x128,attention_mask:8x128"),
}

# Models with a layer that has no CUDA kernel (detect_post's
# NonMaxSuppression): on a GPU they build with --allow-cpu-fallback, which
# runs that layer on the CPU, so the whole model still runs.
CPU_FALLBACK = {"detect_post"}

failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


def atol_for(outputs):
    return RTOL * min(float(np.max(np.abs(o))) for o in outputs.values())


def plugrt(args, cmd, what):
    if args.device != "cpu" and cmd[0] in ("run", "build"):
        cmd = cmd[:2] + ["--device", args.device] + cmd[2:]
        if args.model in CPU_FALLBACK:
            cmd = cmd[:2] + ["--allow-cpu-fallback"] + cmd[2:]
    p = subprocess.run([args.plugrt] + cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600)
    text = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        fail("%s: exit status %d: plugrt %s\n%s" % (what, p.returncode, " ".join(cmd),
                                                   "\n".join("    | " + l for l in
                                                             text.splitlines()[-25:])))
        return None
    return text


def check_dir(args, model_or_plan, d, atol, what):
    text = plugrt(args, ["run", model_or_plan, "--compare", d, "-n", "1", "--warmup", "0",
                         "--rtol", repr(RTOL), "--atol", repr(atol)], what)
    if text is None:
        return
    worst = [l.strip() for l in text.splitlines() if " PASS " in l or " FAIL " in l]
    if "PASSED:" not in text:
        fail("%s: %s" % (what, "; ".join(worst)))
    else:
        print("ok   %-40s atol %.3g  %s" % (what, atol, "; ".join(
            w.split("; ")[0] + "; " + w.split("; ")[1] for w in worst if "; " in w)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--models-dir", default=here)
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "..", "shared",
                                                     "models"))
    ap.add_argument("--work", default="work_models")
    ap.add_argument("--device", default="cpu", help="where plugrt runs the model: cpu "
                    "(CI) or cuda (the GPU machine); the references are ONNX Runtime's CPU")
    args = ap.parse_args()
    where, shapes, make, pmin, popt, pmax = MODELS[args.model]
    path = os.path.join(args.shared if where == "shared" else args.models_dir,
                        args.model + ".onnx")
    if not os.path.isfile(path):
        print("SKIP: %s not found" % path)
        return SKIP
    try:
        import onnxruntime as ort
    except ImportError:
        print("SKIP: onnxruntime is not installed for %s (scripts/deps.sh)" % sys.executable)
        return SKIP
    work = os.path.join(args.work, args.model)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # The shared model's own data, made by ONNX Runtime 1.30.
    data = os.path.join(os.path.dirname(path), args.model + ".data")
    if os.path.isdir(data):
        refs = {f[7:-4]: np.load(os.path.join(data, f)) for f in os.listdir(data)
                if f.startswith("output_")}
        check_dir(args, path, data, atol_for(refs), "%s.data" % args.model)

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    dirs = []
    for k, shape in enumerate(shapes):
        rng = np.random.default_rng(1000 + k)
        feeds = make(shape, rng)
        outs = dict(zip(names, sess.run(None, feeds)))
        label = "x".join(str(v) for v in (shape if isinstance(shape, tuple) else (shape,)))
        d = os.path.join(work, label)
        os.makedirs(d)
        for n, a in feeds.items():
            np.save(os.path.join(d, "input_%s.npy" % n), a)
        for n, a in outs.items():
            np.save(os.path.join(d, "output_%s.npy" % n), a)
        dirs.append((label, d, atol_for(outs)))
        check_dir(args, path, d, atol_for(outs), "%s at %s" % (args.model, label))

    # Intra-op threads change nothing: 1 and 3 threads give the same bits
    # (every op computes each element the same way however its loops are
    # split; base/parallel.h), at the first shape and the largest.
    largest = max(dirs, key=lambda t: np.prod([int(v) for v in t[0].split("x")]))
    for label, d, atol in [dirs[0]] + ([largest] if largest is not dirs[0] else []):
        got = []
        for threads in (1, 3):
            o = os.path.join(work, "%s.threads%d" % (label, threads))
            if plugrt(args, ["run", path, "--compare", d, "-n", "1", "--warmup", "0",
                             "--rtol", repr(RTOL), "--atol", repr(atol), "--op-threads",
                             str(threads), "-o", o],
                      "%s at %s, %d op threads" % (args.model, label, threads)) is None:
                break
            got.append({n: np.load(os.path.join(o, n)) for n in sorted(os.listdir(o))})
        if len(got) == 2:
            same = [n for n in got[0] if np.array_equal(got[0][n], got[1][n], equal_nan=True)
                    and got[0][n].dtype == got[1][n].dtype]
            if len(same) != len(got[0]) or set(got[0]) != set(got[1]):
                fail("%s at %s: 3 op threads give other outputs than 1 (%s differ)" % (
                    args.model, label, ", ".join(sorted(set(got[0]) - set(same)))))
            else:
                print("ok   %-40s 1 and 3 op threads: the same bits" % (
                    "%s at %s" % (args.model, label)))

    # One plan for every shape.
    plan = os.path.join(work, args.model + ".plan")
    if plugrt(args, ["build", path, "-o", plan, "--min-shapes", pmin, "--opt-shapes", popt,
                     "--max-shapes", pmax], "%s: build" % args.model) is not None:
        for label, d, atol in dirs:
            check_dir(args, plan, d, atol, "%s.plan at %s" % (args.model, label))
    # A plan whose profile fixes the shape (only --opt-shapes: min = opt =
    # max) runs on random data with no --shapes.
    if args.model == "mobilenet_v3_small":
        fixed = os.path.join(work, "fixed.plan")
        if plugrt(args, ["build", path, "-o", fixed, "--opt-shapes", "image:1x3x224x224"],
                  "build with --opt-shapes only") is not None:
            text = plugrt(args, ["run", fixed, "--random-inputs", "-n", "1", "--warmup", "0"],
                          "run a fixed profile on random data")
            if text is not None and "image            float32  1x3x224x224    random" not in text:
                fail("random data of the fixed shape: not in the output\n" + text)
    if failures:
        print("%d check(s) failed" % failures)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

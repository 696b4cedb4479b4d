#!/usr/bin/env python3
"""plugrt's convolutions against oneDNN's and XNNPACK's, layer by layer.

For every Conv of a model (default ../shared/models/mobilenet_v3_small.onnx
at batch 1), on one thread:

  plugrt       the layer alone: a one-node model of the same Conv (random
               weights) run by `plugrt run --json` in a loop, as the
               libraries run theirs (warm caches; one run's overhead of
               about a microsecond included)
  in model     the layer's time inside the whole model (`plugrt run
               --profile-layers --json`, the best of the timed runs; its
               fused activation included): weights and activations come
               from farther away than in a loop
  dnnl nchw    oneDNN 2.6 (libdnnl-dev) with plain NCHW source and
               destination, the layout plugrt's engine passes between
               layers (weights reordered once, in the library's layout)
  dnnl blocked the same with the layouts oneDNN picks (nChw8c on AVX2): what
               it would take if every tensor between convolutions stayed
               blocked, reorders not counted
  xnnpack      XNNPACK (libxnnpack-dev) in NHWC, its only layout, reorders
               not counted

bench/conv_libs.c does the libraries' timing; this script compiles it with
cc against whichever of the two is installed (scripts/deps.sh does not
install them: plugrt does not use them; `apt-get install libdnnl-dev
libxnnpack-dev` to measure), runs it and plugrt, and prints the layers by
kind with totals. Figures and the decision they support: bench/RESULTS.md
("CPU kernels") and docs/DESIGN-NOTES.md.

    /usr/bin/python3 bench/conv_libs.py [--model M.onnx] [--batch B] [--per-layer]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def convs(path, batch):
    m = shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input):
        shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else batch
                           for d in vi.type.tensor_type.shape.dim]
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    out = []
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        x, w = shapes[n.input[0]], inits[n.input[1]]
        s, p, g = a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]), a.get("group", 1)
        if len(x) != 4 or p[0] != p[2] or p[1] != p[3]:
            continue
        x[0] = batch
        out.append((n.name, [x[0], x[1], x[2], x[3], w[0], w[2], w[3], s[0], s[1], p[0], p[1],
                             g]))
    return out


def one_conv(path, c):
    """A model of one Conv with c's shapes (random weights, a bias)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    n, cin, h, w, m, kh, kw, sh, sw, ph, pw, g = c
    rng = np.random.default_rng(0)
    wt = rng.uniform(-0.1, 0.1, (m, cin // g, kh, kw)).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, (m,)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], group=g, strides=[sh, sw],
                            pads=[ph, pw, ph, pw], kernel_shape=[kh, kw])
    graph = helper.make_graph([node], "conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             [n, cin, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(wt, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def kind(c):
    n, cin, h, w, m, kh, kw, sh, sw, ph, pw, g = c
    if g == cin == m and g > 1:
        return "depthwise %dx%d s%d" % (kh, kw, sh)
    if kh == kw == 1:
        return "pointwise 1x1" + (" (SE, 1x1 input)" if h == w == 1 else "")
    return "full %dx%d s%d" % (kh, kw, sh)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(REPO, "..", "shared", "models",
                                                    "mobilenet_v3_small.onnx"))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--per-layer", action="store_true")
    args = ap.parse_args()
    cli = os.environ.get("PLUGRT") or os.path.join(REPO, "build", "tools", "plugrt")
    layers = convs(args.model, args.batch)

    flags = []
    libs = []
    if os.path.exists("/usr/include/oneapi/dnnl/dnnl.h"):
        flags.append("-DHAVE_DNNL")
        libs.append("-ldnnl")
    if os.path.exists("/usr/include/xnnpack.h") and os.path.exists("/usr/include/pthreadpool.h"):
        flags.append("-DHAVE_XNNPACK")
        libs.append("-lXNNPACK")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "conv_libs")
        subprocess.run(["cc", "-O2", "-std=c11"] + flags +
                       [os.path.join(HERE, "conv_libs.c"), "-o", exe] + libs, check=True)
        text = "".join("%s %s\n" % (" ".join(str(v) for v in c), name) for name, c in layers)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        lib = subprocess.run([exe, str(args.reps)], input=text.encode(), env=env, check=True,
                             stdout=subprocess.PIPE).stdout.decode().split("\n")
        x = next(i for i in onnx.load(args.model).graph.input)
        shape = "%s:%dx%s" % (x.name, args.batch, "x".join(
            str(d.dim_value) for d in x.type.tensor_type.shape.dim[1:]))
        run = subprocess.run([cli, "run", args.model, "--random-inputs", "--shapes", shape,
                              "--op-threads", "1", "-n", str(args.reps), "--profile-layers",
                              "--json"], env=env, check=True, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL).stdout
        alone = {}
        for k, (name, c) in enumerate(layers):
            one = os.path.join(tmp, "conv%d.onnx" % k)
            one_conv(one, c)
            doc = subprocess.run([cli, "run", one, "--random-inputs", "--op-threads", "1", "-n",
                                  str(args.reps), "--json"], env=env, check=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
            alone[name] = json.loads(doc)["latency_ms"]["min"]
    prof = {l["name"]: l["min_ms"] for l in json.loads(run)["layer_profile"]["layers"]}
    times = {}
    for line in lib:
        if line.strip():
            name, a, b, c = line.split()
            times[name] = (float(a), float(b), float(c))
    load = os.getloadavg()
    print("%s at batch %d, one thread; load average %.2f %.2f %.2f; best of %d runs (ms)" % (
        os.path.basename(args.model), args.batch, load[0], load[1], load[2], args.reps))
    cols = ("plugrt", "dnnl nchw", "dnnl blocked", "xnnpack", "plugrt in model")
    groups = {}
    for name, c in layers:
        t = (alone.get(name, -1),) + times.get(name, (-1, -1, -1)) + (prof.get(name, -1),)
        groups.setdefault(kind(c), []).append((name, c, t))
        if args.per_layer:
            print("  %-58s %s" % (name[-58:], " ".join("%8.4f" % v for v in t)))
    print("\n| layers | count | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    total = [0.0] * len(cols)
    for k in sorted(groups):
        sums = [sum(t[i] for _, _, t in groups[k]) if all(t[i] >= 0 for _, _, t in groups[k])
                else -1 for i in range(len(cols))]
        for i, v in enumerate(sums):
            total[i] = total[i] + v if v >= 0 and total[i] >= 0 else -1
        print("| %s | %d | %s |" % (k, len(groups[k]), " | ".join(
            "%.3f" % v if v >= 0 else "-" for v in sums)))
    print("| all convolutions | %d | %s |" % (len(layers), " | ".join(
        "%.3f" % v if v >= 0 else "-" for v in total)))


if __name__ == "__main__":
    sys.exit(main())

"""Writes the models of fuse.sh and what they must compute.

    make_fuse_models.py OUT_DIR

Each OUT_DIR/NAME/ holds model.onnx, input_x.npy and output_y.npy (NumPy's
result in double, rounded to float32):
  conv_<act>       x (1x6x9x9) -> depthwise Conv 3x3, stride 2, pads 1 -> the
                   activation -> y: Relu, LeakyRelu (alpha 0.3), HardSigmoid
                   (alpha 0.3, beta 0.4), HardSwish, Clip (min, max
                   initializers; opset 17), clip10 (Clip with attributes,
                   opset 10), clip_const (min a Constant node, max omitted)
  conv_shared      Conv -> Relu where the Conv's output is also a graph
                   output: nothing may fuse
  conv_sigmoid     Conv -> Sigmoid
  conv_silu        Conv -> Sigmoid -> Mul(c, s): SiLU as PyTorch exports it
  conv_silu_swapped  the same with Mul(s, c)
  conv_silu_sshared  the Sigmoid's output is also a graph output: nothing
                   may fuse
  conv_silu_cshared  the Conv's output is also a graph output: nothing may
                   fuse
  conv_silu_other  Mul(s, s): only Conv -> Sigmoid fuses
  pointwise_relu   a 1x1 Conv (5 -> 7 channels, bias) -> Relu
  gelu_a, gelu_b   MatMul + Add (bias) -> GELU as PyTorch exports it (one
                   MatMul with activation Gelu):
                   (x * (1 + erf(x / sqrt 2))) * 0.5, and (x * 0.5) *
                   (1 + erf(x / sqrt 2)) with its constants in Constant nodes
  gelu_alone       GELU of the input (no MatMul before it): one Gelu layer
  gelu_wrong       the same pattern with 0.6 for 0.5: must not become Gelu
  mm_bias          MatMul (x 2x3x16, W 16x24) -> Add(b) -> y: one MatMul
  mm_bias_first    the same as Add(b, mm), b through an Identity (as
                   PyTorch exports a shared bias): one MatMul, no Identity
  mm_bias_shared   the product is also a graph output: nothing may fuse
  mm_bias_matrix   a bias of 3x24 (a matrix, not a vector): nothing may fuse
  mm_relu          MatMul -> Add(b) -> Relu: one MatMul with activation Relu
  mm_gelu          MatMul (no bias) -> Gelu (opset 20): one MatMul, activation
                   Gelu
  mm_relu_shared   MatMul -> Add(b) -> Relu with the sum also a graph output:
                   MatMul + Add fuse, the Relu stays apart
  skipln           x (2x5x16) + r (5x16, broadcast) -> LayerNormalization:
                   one SkipLayerNormalization
  skipln_rowbcast  the same with r of 2x1x16 (broadcast along the rows)
  skipln_pre       s = Add(r, x) -> LayerNormalization -> Add(s, ln): pre-LN
                   GPT-2's shape; the fused layer writes s for the last Add
  skipln_sumout    the sum is also a graph output (y and s)
  skipln_late      the sum is read before LayerNormalization's Scale is
                   computed (a ReduceMean of x): may fuse only where the
                   order allows; the output must match either way
  skipln_axis      LayerNormalization over the last two axes: nothing fuses
  skipln_ms        com.microsoft SkipLayerNormalization (with bias, the sum
                   as a second output): imported as the built-in
  chain_gelu_tanh  GPT-2's tanh GELU, 0.5 x (1 + tanh(0.79788 (x + 0.044715
                   x^3))) as PyTorch exports it: one Gelu, approximate
                   "tanh" (it was two ElementwiseChain layers, x * 0.5 with
                   the last Mul, and Pow .. Add(1))
  chain_mask       (1 - x) * -10000 + s (s a 1x16 initializer): one chain
  chain_shared     the same with 1 - x also a graph output: Sub alone, then
                   Mul -> Add one chain
  chain_nofloat    Tanh -> Sigmoid -> Relu: no float constant says the dtype,
                   so the nodes stay apart
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)


def conv(x, w, b, stride, pad, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, i, j])
    return y + b.reshape(1, m, 1, 1)


def save(out, name, nodes, inits, x, y, opset=17, outputs=("y",), ms=False):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              outs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    imports = [helper.make_opsetid("", opset)]
    if ms:
        imports.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "input_x.npy"), x.astype(np.float32))
    np.save(os.path.join(d, "output_y.npy"), y.astype(np.float32))


def hard_sigmoid(v, a, b):
    return np.clip(a * v + b, 0, 1)


def conv_models(out):
    x = RNG.uniform(-2, 2, size=(1, 6, 9, 9)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(6, 1, 3, 3)).astype(np.float32)
    b = RNG.uniform(-0.5, 0.5, size=(6,)).astype(np.float32)
    c = conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 2, 1, 6)
    inits = {"W": w, "B": b}
    cnode = helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", group=6,
                             pads=[1, 1, 1, 1], strides=[2, 2])
    acts = {
        "relu": (helper.make_node("Relu", ["c"], ["y"], name="act"), np.maximum(c, 0)),
        "leaky": (helper.make_node("LeakyRelu", ["c"], ["y"], name="act", alpha=0.3),
                  np.where(c < 0, 0.3 * c, c)),
        "hardsigmoid": (helper.make_node("HardSigmoid", ["c"], ["y"], name="act", alpha=0.3,
                                         beta=0.4), hard_sigmoid(c, 0.3, 0.4)),
        "hardswish": (helper.make_node("HardSwish", ["c"], ["y"], name="act"),
                      c * hard_sigmoid(c, 1 / 6, 0.5)),
    }
    for name, (node, y) in acts.items():
        save(out, "conv_" + name, [cnode, node], inits, x, y)
    clip_inits = dict(inits, lo=np.array(-0.5, np.float32), hi=np.array(0.75, np.float32))
    save(out, "conv_clip", [cnode, helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="act")],
         clip_inits, x, np.clip(c, -0.5, 0.75))
    save(out, "conv_clip10",
         [cnode, helper.make_node("Clip", ["c"], ["y"], name="act", min=-0.25, max=0.5)], inits, x,
         np.clip(c, -0.25, 0.5), opset=10)
    lo = helper.make_node("Constant", [], ["lo"], name="lo",
                          value=numpy_helper.from_array(np.array(0.1, np.float32)))
    save(out, "conv_clip_const", [lo, cnode, helper.make_node("Clip", ["c", "lo"], ["y"], name="act")],
         inits, x, np.maximum(c, np.float32(0.1)))
    save(out, "conv_shared", [cnode, helper.make_node("Relu", ["c"], ["y"], name="act")], inits, x,
         np.maximum(c, 0), outputs=("y", "c"))
    np.save(os.path.join(out, "conv_shared", "output_c.npy"), c.astype(np.float32))
    # Sigmoid and SiLU (x * sigmoid(x)); the sigmoid rounded to float32
    # first, as the graph computes it.
    sg = (1 / (1 + np.exp(-c))).astype(np.float32).astype(np.float64)
    sig = helper.make_node("Sigmoid", ["c"], ["s"], name="sig")
    save(out, "conv_sigmoid", [cnode, helper.make_node("Sigmoid", ["c"], ["y"], name="act")],
         inits, x, sg)
    save(out, "conv_silu", [cnode, sig, helper.make_node("Mul", ["c", "s"], ["y"], name="mul")],
         inits, x, c * sg)
    save(out, "conv_silu_swapped",
         [cnode, sig, helper.make_node("Mul", ["s", "c"], ["y"], name="mul")], inits, x, c * sg)
    for name, extra in (("sshared", ("s", sg)), ("cshared", ("c", c))):
        d = "conv_silu_" + name
        save(out, d, [cnode, sig, helper.make_node("Mul", ["c", "s"], ["y"], name="mul")],
             inits, x, c * sg, outputs=("y", extra[0]))
        np.save(os.path.join(out, d, "output_%s.npy" % extra[0]), extra[1].astype(np.float32))
    save(out, "conv_silu_other",
         [cnode, sig, helper.make_node("Mul", ["s", "s"], ["y"], name="mul")], inits, x, sg * sg)
    # pointwise
    w1 = RNG.uniform(-1, 1, size=(7, 5, 1, 1)).astype(np.float32)
    b1 = RNG.uniform(-0.5, 0.5, size=(7,)).astype(np.float32)
    x1 = RNG.uniform(-2, 2, size=(2, 5, 6, 7)).astype(np.float32)
    c1 = conv(x1.astype(np.float64), w1.astype(np.float64), b1.astype(np.float64), 1, 0, 1)
    save(out, "pointwise_relu",
         [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv"),
          helper.make_node("Relu", ["c"], ["y"], name="act")], {"W": w1, "B": b1}, x1,
         np.maximum(c1, 0))


def gelu_models(out):
    x = RNG.uniform(-5, 5, size=(2, 3, 16)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(16, 24)).astype(np.float32)
    b = RNG.uniform(-0.5, 0.5, size=(24,)).astype(np.float32)
    h = x.astype(np.float64) @ w.astype(np.float64) + b
    erf = np.vectorize(math.erf)
    g = 0.5 * h * (1 + erf(h / math.sqrt(2)))
    consts = {"W": w, "b": b, "sqrt2": np.array(math.sqrt(2), np.float32),
              "one": np.array(1, np.float32), "half": np.array(0.5, np.float32)}
    head = [helper.make_node("MatMul", ["x", "W"], ["mm"], name="mm"),
            helper.make_node("Add", ["mm", "b"], ["h"], name="bias"),
            helper.make_node("Div", ["h", "sqrt2"], ["d"], name="div"),
            helper.make_node("Erf", ["d"], ["e"], name="erf"),
            helper.make_node("Add", ["e", "one"], ["a"], name="add1")]
    save(out, "gelu_a", head + [helper.make_node("Mul", ["h", "a"], ["m"], name="mul"),
                                helper.make_node("Mul", ["m", "half"], ["y"], name="half")],
         consts, x, g)
    as_nodes = [helper.make_node("Constant", [], [n], name="c_" + n,
                                 value=numpy_helper.from_array(consts[n]))
                for n in ("sqrt2", "one", "half")]
    save(out, "gelu_b", as_nodes + head[:2] +
         [helper.make_node("Mul", ["h", "half"], ["hh"], name="mulhalf")] + head[2:] +
         [helper.make_node("Mul", ["a", "hh"], ["y"], name="mul")],
         {"W": w, "b": b}, x, g)
    xd = x.astype(np.float64)
    save(out, "gelu_alone",
         [helper.make_node("Div", ["x", "sqrt2"], ["d"], name="div")] + head[3:] +
         [helper.make_node("Mul", ["x", "a"], ["m"], name="mul"),
          helper.make_node("Mul", ["m", "half"], ["y"], name="half")],
         {k: v for k, v in consts.items() if k not in ("W", "b")}, x,
         0.5 * xd * (1 + erf(xd / math.sqrt(2))))
    wrong = dict(consts, half=np.array(0.6, np.float32))
    save(out, "gelu_wrong", head + [helper.make_node("Mul", ["h", "a"], ["m"], name="mul"),
                                    helper.make_node("Mul", ["m", "half"], ["y"], name="half")],
         wrong, x, g * 1.2)


def matmul_models(out):
    x = RNG.uniform(-2, 2, size=(2, 3, 16)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(16, 24)).astype(np.float32)
    b = RNG.uniform(-0.5, 0.5, size=(24,)).astype(np.float32)
    bm = RNG.uniform(-0.5, 0.5, size=(3, 24)).astype(np.float32)
    mm = x.astype(np.float64) @ w.astype(np.float64)
    matmul = helper.make_node("MatMul", ["x", "W"], ["mm"], name="mm")
    save(out, "mm_bias", [matmul, helper.make_node("Add", ["mm", "b"], ["y"], name="bias")],
         {"W": w, "b": b}, x, mm + b)
    save(out, "mm_bias_first",
         [helper.make_node("Identity", ["b0"], ["b"], name="id"), matmul,
          helper.make_node("Add", ["b", "mm"], ["y"], name="bias")], {"W": w, "b0": b}, x,
         mm + b)
    save(out, "mm_bias_shared", [matmul, helper.make_node("Add", ["mm", "b"], ["y"], name="bias")],
         {"W": w, "b": b}, x, mm + b, outputs=("y", "mm"))
    np.save(os.path.join(out, "mm_bias_shared", "output_mm.npy"), mm.astype(np.float32))
    save(out, "mm_bias_matrix", [matmul, helper.make_node("Add", ["mm", "b"], ["y"], name="bias")],
         {"W": w, "b": bm}, x, mm + bm)


def act_models(out):
    x = RNG.uniform(-2, 2, size=(2, 3, 16)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(16, 24)).astype(np.float32)
    b = RNG.uniform(-0.5, 0.5, size=(24,)).astype(np.float32)
    mm = x.astype(np.float64) @ w.astype(np.float64)
    erf = np.vectorize(math.erf)
    matmul = helper.make_node("MatMul", ["x", "W"], ["mm"], name="mm")
    bias = helper.make_node("Add", ["mm", "b"], ["h"], name="bias")
    save(out, "mm_relu", [matmul, bias, helper.make_node("Relu", ["h"], ["y"], name="relu")],
         {"W": w, "b": b}, x, np.maximum(mm + b, 0))
    save(out, "mm_gelu", [matmul, helper.make_node("Gelu", ["mm"], ["y"], name="gelu")],
         {"W": w}, x, 0.5 * mm * (1 + erf(mm / math.sqrt(2))), opset=20)
    save(out, "mm_relu_shared", [matmul, bias, helper.make_node("Relu", ["h"], ["y"], name="relu")],
         {"W": w, "b": b}, x, np.maximum(mm + b, 0), outputs=("y", "h"))
    np.save(os.path.join(out, "mm_relu_shared", "output_h.npy"), (mm + b).astype(np.float32))


def layer_norm(v, g, b, eps, axes=(-1,)):
    mean = v.mean(axis=axes, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=axes, keepdims=True)
    return (v - mean) / np.sqrt(var + eps) * g + b


def skipln_models(out):
    x = RNG.uniform(-2, 2, size=(2, 5, 16)).astype(np.float32)
    r = RNG.uniform(-2, 2, size=(5, 16)).astype(np.float32)
    r2 = RNG.uniform(-2, 2, size=(2, 1, 16)).astype(np.float32)
    g = RNG.uniform(0.5, 1.5, size=(16,)).astype(np.float32)
    b = RNG.uniform(-0.5, 0.5, size=(16,)).astype(np.float32)
    g2 = RNG.uniform(0.5, 1.5, size=(5, 16)).astype(np.float32)
    b2 = RNG.uniform(-0.5, 0.5, size=(5, 16)).astype(np.float32)
    x64 = x.astype(np.float64)
    s = x64 + r
    inits = {"r": r, "g": g, "b": b}
    add = helper.make_node("Add", ["x", "r"], ["s"], name="add")
    ln = helper.make_node("LayerNormalization", ["s", "g", "b"], ["l"], name="ln", axis=-1,
                          epsilon=1e-5)
    lny = helper.make_node("LayerNormalization", ["s", "g", "b"], ["y"], name="ln", axis=-1,
                           epsilon=1e-5)
    save(out, "skipln", [add, lny], inits, x, layer_norm(s, g, b, 1e-5))
    save(out, "skipln_rowbcast", [helper.make_node("Add", ["x", "r2"], ["s"], name="add"), lny],
         {"r2": r2, "g": g, "b": b}, x, layer_norm(x64 + r2, g, b, 1e-5))
    save(out, "skipln_pre", [helper.make_node("Add", ["r", "x"], ["s"], name="add"), ln,
                             helper.make_node("Add", ["s", "l"], ["y"], name="res")],
         inits, x, s + layer_norm(s, g, b, 1e-5))
    save(out, "skipln_sumout", [add, lny], inits, x, layer_norm(s, g, b, 1e-5),
         outputs=("y", "s"))
    np.save(os.path.join(out, "skipln_sumout", "output_s.npy"), s.astype(np.float32))
    gm = x64.mean(axis=(0, 1))
    save(out, "skipln_late",
         [add, helper.make_node("Mul", ["s", "s"], ["t"], name="sq"),
          helper.make_node("ReduceMean", ["x"], ["gm"], name="gmean", axes=[0, 1], keepdims=0),
          helper.make_node("LayerNormalization", ["s", "gm", "b"], ["l"], name="ln", axis=-1,
                           epsilon=1e-5),
          helper.make_node("Add", ["t", "l"], ["y"], name="res")],
         inits, x, s * s + layer_norm(s, gm, b, 1e-5))
    # ONNX Runtime's own op, as its transformer optimizer writes it: input,
    # skip, gamma, beta, bias; output, (mean, inv_std_var unnamed), sum.
    bias = RNG.uniform(-0.5, 0.5, size=(16,)).astype(np.float32)
    sb = s + bias
    save(out, "skipln_ms",
         [helper.make_node("SkipLayerNormalization", ["x", "r", "g", "b", "bias"],
                           ["y", "", "", "sum"], name="sln", domain="com.microsoft",
                           epsilon=1e-5)],
         dict(inits, bias=bias), x, layer_norm(sb, g, b, 1e-5), outputs=("y", "sum"), ms=True)
    np.save(os.path.join(out, "skipln_ms", "output_sum.npy"), sb.astype(np.float32))
    save(out, "skipln_axis",
         [add, helper.make_node("LayerNormalization", ["s", "g2", "b2"], ["y"], name="ln",
                                axis=-2, epsilon=1e-5)],
         {"r": r, "g2": g2, "b2": b2}, x, layer_norm(s, g2, b2, 1e-5, axes=(-2, -1)))


def chain_models(out):
    x = RNG.uniform(-3, 3, size=(2, 5, 16)).astype(np.float32)
    x64 = x.astype(np.float64)
    sc = RNG.uniform(-1, 1, size=(1, 16)).astype(np.float32)
    c = {"half": np.array(0.5, np.float32), "three": np.array(3.0, np.float32),
         "k": np.array(0.044715, np.float32), "r": np.array(0.7978845608, np.float32),
         "one": np.array(1.0, np.float32), "big": np.array(-10000.0, np.float32), "s": sc}
    nodes = [helper.make_node("Mul", ["x", "half"], ["a"], name="mul0"),
             helper.make_node("Pow", ["x", "three"], ["p"], name="pow"),
             helper.make_node("Mul", ["p", "k"], ["q"], name="mul1"),
             helper.make_node("Add", ["x", "q"], ["u"], name="add0"),
             helper.make_node("Mul", ["u", "r"], ["w"], name="mul2"),
             helper.make_node("Tanh", ["w"], ["t"], name="tanh"),
             helper.make_node("Add", ["t", "one"], ["o"], name="add1"),
             helper.make_node("Mul", ["a", "o"], ["y"], name="mul3")]
    g = 0.5 * x64 * (1 + np.tanh(0.7978845608 * (x64 + 0.044715 * x64 ** 3)))
    save(out, "chain_gelu_tanh", nodes, c, x, g)
    mask = [helper.make_node("Sub", ["one", "x"], ["m"], name="sub"),
            helper.make_node("Mul", ["m", "big"], ["b"], name="mul"),
            helper.make_node("Add", ["b", "s"], ["y"], name="add")]
    ym = (1 - x64) * -10000.0 + sc
    save(out, "chain_mask", mask, c, x, ym)
    save(out, "chain_shared", mask, c, x, ym, outputs=("y", "m"))
    np.save(os.path.join(out, "chain_shared", "output_m.npy"), (1 - x64).astype(np.float32))
    sig = 1 / (1 + np.exp(-np.tanh(x64)))
    save(out, "chain_nofloat",
         [helper.make_node("Tanh", ["x"], ["t"], name="tanh"),
          helper.make_node("Sigmoid", ["t"], ["g"], name="sig"),
          helper.make_node("Relu", ["g"], ["y"], name="relu")], {}, x, np.maximum(sig, 0))


def main():
    out = sys.argv[1]
    conv_models(out)
    gelu_models(out)
    matmul_models(out)
    act_models(out)
    skipln_models(out)
    chain_models(out)


if __name__ == "__main__":
    main()

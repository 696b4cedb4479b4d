#!/usr/bin/env python3
"""Writes the zoo's architectures that need no framework, as ONNX graphs
made with onnx.helper and seeded random weights (numpy), into tests/models/
(or OUT_DIR). Not run in CI: the files are kept; run_models.py computes the
references with ONNX Runtime when the test runs.

    /usr/bin/python3 tests/models/make_graphs.py [OUT_DIR]

    resnext_w8.onnx    ResNeXt-style: a 3x3 stem at stride 2, max pool, two
                       stages of two bottleneck blocks (1x1 down, grouped
                       3x3 with 8 groups, 1x1 up, the residual added; the
                       second stage at stride 2 with a 1x1 projection),
                       global average pool, fc to 100 classes
    densenet_w8.onnx   DenseNet-style: a 3x3 stem at stride 2, two dense
                       blocks of three layers (BatchNormalization, Relu, a
                       3x3 conv of growth 8, concatenated to the block's
                       input), a transition between them (BatchNormalization,
                       Relu, 1x1 conv, 2x2 average pool), global average
                       pool, fc to 100 classes
    lstm_seq.onnx      an LSTM sequence classifier: input_ids (batch x seq,
                       int64, both dynamic; vocabulary 64) through an
                       embedding Gather (width 32), Transpose to time
                       major, a bidirectional LSTM (hidden 32, B given),
                       its Y as [seq, batch, 64], a forward LSTM (hidden 32,
                       initial_h given), its Y_h through MatMul + Add to 10
                       classes

    vit_tiny.onnx      a small ViT: 16x16 patches by a stride-16 Conv of 64
                       channels, reshaped and transposed to tokens, a class
                       token (Expand to the batch, Concat), position
                       embeddings added, 4 pre-norm encoder blocks
                       (LayerNormalization, one MatMul for Q, K and V, 4
                       heads of Softmax attention, the projection, an MLP
                       of 128 with Erf GELU, both residuals), the final
                       LayerNormalization, the class token's Gather, fc to
                       100 classes; image batch x 3 x 128 x 128
    deeplab_w8.onnx    a DeepLabv3+-style segmentation head: three strided
                       3x3 convs to 1/8 (32, 48, 64 channels), ASPP (a 1x1
                       branch and 3x3 branches at dilation 2, 4 and 6,
                       concatenated, a 1x1 fuse), bilinear Resize x2 with
                       align_corners, concatenated with the 1/4 features,
                       a 3x3 conv, a 1x1 classifier of 21 classes and
                       bilinear Resize x4 (half_pixel) back to the input;
                       image batch x 3 x 128 x 128
    detect_post.onnx   detection post-processing: regression [batch, 2000,
                       4] decoded against constant anchors (Slice, Exp, Mul,
                       Add, Concat to corners), class_logits [batch, 2000,
                       20] through Sigmoid, TopK pre-selection of 300
                       anchors by their best class (ReduceMax, TopK,
                       GatherElements), NonMaxSuppression per class (20 a
                       class, IoU 0.5, score 0.3), then GatherND of the
                       selected boxes and scores

resnext_w8 and densenet_w8 take image: batch x 3 x 224 x 224; every graph
has a dynamic batch, opset 17.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as H
from onnx import numpy_helper as NH


class Graph:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def weight(self, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        w = self.rng.standard_normal(shape).astype(np.float32)
        w *= scale if scale is not None else np.sqrt(2.0 / max(fan_in, 1))
        n = self.name("w")
        self.inits.append(NH.from_array(w, n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(H.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=True):
        ins = [x, self.weight((cout, cin // group, k, k))]
        if bias:
            ins.append(self.weight((cout,), 0.1))
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2] * 4, group=group)

    def bn(self, x, c):
        scale = self.name("bn_scale")
        bias = self.name("bn_bias")
        mean = self.name("bn_mean")
        var = self.name("bn_var")
        self.inits += [
            NH.from_array((1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32), scale),
            NH.from_array((0.1 * self.rng.standard_normal(c)).astype(np.float32), bias),
            NH.from_array((0.1 * self.rng.standard_normal(c)).astype(np.float32), mean),
            NH.from_array((1.0 + 0.2 * self.rng.random(c)).astype(np.float32), var),
        ]
        return self.node("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)

    def relu(self, x):
        return self.node("Relu", [x])

    def head(self, x, c, classes=100):
        x = self.node("GlobalAveragePool", [x])
        x = self.node("Flatten", [x], axis=1)
        return self.node("Gemm", [x, self.weight((classes, c)), self.weight((classes,), 0.1)],
                         transB=1)

    def const(self, a, base="c"):
        n = self.name(base)
        self.inits.append(NH.from_array(np.asarray(a), n))
        return n

    def save(self, out, path, inputs=None, outputs=None, classes=100):
        if outputs is None:
            self.nodes[-1].output[0] = "logits"
        g = H.make_graph(
            self.nodes, os.path.basename(path)[:-5],
            inputs or [H.make_tensor_value_info("image", T.FLOAT, ["batch", 3, 224, 224])],
            outputs or [H.make_tensor_value_info("logits", T.FLOAT, ["batch", classes])],
            self.inits)
        m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)],
                         producer_name="plugrt make_graphs.py")
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, path)


def resnext(path):
    g = Graph(11)
    x = g.relu(g.conv("image", 3, 16, 3, stride=2))
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 16
    for stage, (width, out, stride) in enumerate(((32, 32, 1), (64, 64, 2))):
        for block in range(2):
            s = stride if block == 0 else 1
            y = g.relu(g.conv(x, c, width, 1))
            y = g.relu(g.conv(y, width, width, 3, stride=s, group=8))
            y = g.conv(y, width, out, 1)
            short = x if (s == 1 and c == out) else g.conv(x, c, out, 1, stride=s)
            x = g.relu(g.node("Add", [y, short]))
            c = out
    g.head(x, c)
    g.save(None, path)


def densenet(path):
    g = Graph(12)
    x = g.relu(g.conv("image", 3, 16, 3, stride=2))
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c, growth = 16, 8
    for block in range(2):
        for layer in range(3):
            y = g.conv(g.relu(g.bn(x, c)), c, growth, 3, bias=False)
            x = g.node("Concat", [x, y], axis=1)
            c += growth
        if block == 0:
            x = g.conv(g.relu(g.bn(x, c)), c, c // 2, 1, bias=False)
            c //= 2
            x = g.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
    g.head(g.relu(g.bn(x, c)), c)
    g.save(None, path)


def image128():
    return [H.make_tensor_value_info("image", T.FLOAT, ["batch", 3, 128, 128])]


def vit(path):
    g = Graph(13)
    dim, heads, mlp, tokens = 64, 4, 128, 65
    hd = dim // heads
    x = g.node("Conv", ["image", g.weight((dim, 3, 16, 16)), g.weight((dim,), 0.1)],
               kernel_shape=[16, 16], strides=[16, 16])
    x = g.node("Reshape", [x, g.const(np.array([0, dim, -1], np.int64))])
    x = g.node("Transpose", [x], perm=[0, 2, 1])
    # The class token expanded to the batch, as exporters write it.
    batch = g.node("Gather", [g.node("Shape", [x]), g.const(np.array([0], np.int64))],
                   axis=0)
    shape = g.node("Concat", [batch, g.const(np.array([1, dim], np.int64))], axis=0)
    cls = g.node("Expand", [g.weight((1, 1, dim), 0.02), shape])
    x = g.node("Concat", [cls, x], axis=1)
    x = g.node("Add", [x, g.weight((1, tokens, dim), 0.02)])

    def ln(v):
        return g.node("LayerNormalization", [v, g.const(
            (1 + 0.1 * g.rng.standard_normal(dim)).astype(np.float32)),
            g.weight((dim,), 0.1)], axis=-1, epsilon=1e-6)

    def linear(v, cin, cout):
        return g.node("Add", [g.node("MatMul", [v, g.weight((cin, cout))]),
                              g.weight((cout,), 0.1)])

    for _ in range(4):
        y = linear(ln(x), dim, 3 * dim)
        y = g.node("Reshape", [y, g.const(np.array([0, 0, 3, heads, hd], np.int64))])
        y = g.node("Transpose", [y], perm=[2, 0, 3, 1, 4])
        q, k, v = (g.node("Gather", [y, g.const(np.array(i, np.int64))], axis=0)
                   for i in range(3))
        a = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
        a = g.node("Softmax", [g.node("Mul", [a, g.const(np.float32(hd ** -0.5))])],
                   axis=-1)
        y = g.node("Transpose", [g.node("MatMul", [a, v])], perm=[0, 2, 1, 3])
        y = g.node("Reshape", [y, g.const(np.array([0, 0, dim], np.int64))])
        x = g.node("Add", [x, linear(y, dim, dim)])
        y = linear(ln(x), dim, mlp)
        erf = g.node("Erf", [g.node("Div", [y, g.const(np.float32(np.sqrt(2.0)))])])
        y = g.node("Mul", [g.node("Mul", [y, g.node("Add", [erf, g.const(np.float32(1))])]),
                           g.const(np.float32(0.5))])
        x = g.node("Add", [x, linear(y, mlp, dim)])
    x = g.node("Gather", [ln(x), g.const(np.array(0, np.int64))], axis=1)
    g.node("Gemm", [x, g.weight((100, dim)), g.weight((100,), 0.1)], transB=1)
    g.save(None, path, image128())


def deeplab(path):
    g = Graph(14)

    def cbr(v, cin, cout, k=3, stride=1, dil=1):
        ins = [v, g.weight((cout, cin, k, k)), g.weight((cout,), 0.1)]
        return g.relu(g.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                             dilations=[dil, dil], pads=[dil * (k // 2)] * 4))

    def resize(v, scale, mode):
        return g.node("Resize", [v, "", g.const(np.array([1, 1, scale, scale],
                                                         np.float32))],
                      mode="linear", coordinate_transformation_mode=mode)

    x = cbr("image", 3, 32, stride=2)
    low = cbr(x, 32, 48, stride=2)
    x = cbr(low, 48, 64, stride=2)
    branches = [cbr(x, 64, 32, k=1)] + [cbr(x, 64, 32, dil=d) for d in (2, 4, 6)]
    x = cbr(g.node("Concat", branches, axis=1), 128, 32, k=1)
    x = resize(x, 2, "align_corners")
    x = g.node("Concat", [x, cbr(low, 48, 16, k=1)], axis=1)
    x = cbr(x, 48, 32)
    x = g.node("Conv", [x, g.weight((21, 32, 1, 1)), g.weight((21,), 0.1)],
               kernel_shape=[1, 1])
    resize(x, 4, "half_pixel")
    g.nodes[-1].output[0] = "logits"
    g.save(None, path, image128(),
           [H.make_tensor_value_info("logits", T.FLOAT, ["batch", 21, 128, 128])])


def detect(path):
    g = Graph(15)
    anchors, classes, pre = 2000, 20, 300
    # Anchors (cy, cx, h, w) on a 0..1 image.
    a = np.concatenate([g.rng.random((anchors, 2)), 0.05 + 0.25 * g.rng.random((anchors, 2))],
                       axis=1).astype(np.float32)

    def part(v, lo, hi):
        return g.node("Slice", [v, g.const(np.array([lo], np.int64)),
                                g.const(np.array([hi], np.int64)),
                                g.const(np.array([-1], np.int64))])

    reg = "regression"
    anchor = g.const(a, "anchors")
    size = part(anchor, 2, 4)
    center = g.node("Add", [g.node("Mul", [g.node("Mul", [part(reg, 0, 2),
                                                          g.const(np.float32(0.1))]), size]),
                            part(anchor, 0, 2)])
    half = g.node("Mul", [g.node("Mul", [g.node("Exp", [
        g.node("Mul", [part(reg, 2, 4), g.const(np.float32(0.2))])]), size]),
        g.const(np.float32(0.5))])
    boxes = g.node("Concat", [g.node("Sub", [center, half]), g.node("Add", [center, half])],
                   axis=-1)
    scores = g.node("Sigmoid", ["class_logits"])
    best = g.node("ReduceMax", [scores], axes=[2], keepdims=0)
    topi = g.name("topk_indices")
    g.nodes.append(H.make_node("TopK", [best, g.const(np.array([pre], np.int64))],
                               [g.name("topk_values"), topi], axis=1, name=topi))
    idx = g.node("Unsqueeze", [topi, g.const(np.array([2], np.int64))])
    boxes = g.node("GatherElements", [boxes, g.node("Tile", [
        idx, g.const(np.array([1, 1, 4], np.int64))])], axis=1)
    scores = g.node("GatherElements", [scores, g.node("Tile", [
        idx, g.const(np.array([1, 1, classes], np.int64))])], axis=1)
    scores = g.node("Transpose", [scores], perm=[0, 2, 1])
    g.nodes.append(H.make_node(
        "NonMaxSuppression", [boxes, scores, g.const(np.array([20], np.int64)),
                              g.const(np.array([0.5], np.float32)),
                              g.const(np.array([0.3], np.float32))],
        ["selected_indices"], name="nms"))
    which = g.node("Gather", ["selected_indices", g.const(np.array([0, 2], np.int64))],
                   axis=1)
    det = g.node("GatherND", [boxes, which])
    det_scores = g.node("GatherND", [scores, "selected_indices"])
    g.nodes[-2].output[0] = "detections"
    g.nodes[-1].output[0] = "detection_scores"
    g.save(None, path, [
        H.make_tensor_value_info("regression", T.FLOAT, ["batch", anchors, 4]),
        H.make_tensor_value_info("class_logits", T.FLOAT, ["batch", anchors, classes])], [
        H.make_tensor_value_info("selected_indices", T.INT64, ["selected", 3]),
        H.make_tensor_value_info("detections", T.FLOAT, ["selected", 4]),
        H.make_tensor_value_info("detection_scores", T.FLOAT, ["selected"])])


def lstm_seq(path):
    g = Graph(13)
    vocab, emb, hid = 64, 32, 32

    def lstm(x, width, direction, extra):
        d = 2 if direction == "bidirectional" else 1
        w = g.weight((d, 4 * hid, width), 1.0 / np.sqrt(width))
        r = g.weight((d, 4 * hid, hid), 1.0 / np.sqrt(hid))
        b = g.weight((d, 8 * hid), 0.1)
        out = g.name("lstm")
        outs = [out + "_y", out + "_yh"]
        g.nodes.append(H.make_node("LSTM", [x, w, r, b] + extra, outs, name=out,
                                   hidden_size=hid, direction=direction))
        return outs

    def const(values, dtype):
        n = g.name("c")
        g.inits.append(NH.from_array(np.array(values, dtype), n))
        return n

    x = g.node("Gather", [g.weight((vocab, emb), 1.0), "input_ids"], axis=0)
    x = g.node("Transpose", [x], perm=[1, 0, 2])  # [seq, batch, emb]
    y, _ = lstm(x, emb, "bidirectional", [])
    y = g.node("Transpose", [y], perm=[0, 2, 1, 3])  # [seq, batch, 2, hid]
    y = g.node("Reshape", [y, const([0, 0, 2 * hid], np.int64)])
    # initial_h: one learned state, broadcast over the batch by Expand
    batch = g.node("Gather", [g.node("Shape", [x]), const([1], np.int64)], axis=0)
    h0_shape = g.node("Concat", [const([1], np.int64), batch, const([hid], np.int64)],
                      axis=0)
    h0 = g.node("Expand", [g.weight((1, 1, hid), 0.5), h0_shape])
    _, yh = lstm(y, 2 * hid, "forward", ["", h0])
    yh = g.node("Squeeze", [yh, const([0], np.int64)])  # [batch, hid]
    y = g.node("MatMul", [yh, g.weight((hid, 10), 1.0 / np.sqrt(hid))])
    g.node("Add", [y, g.weight((10,), 0.1)])
    g.save(None, path, [H.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"])],
           classes=10)


def main():
    import onnxruntime as ort
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(0)
    resnext(os.path.join(out, "resnext_w8.onnx"))
    densenet(os.path.join(out, "densenet_w8.onnx"))
    lstm_seq(os.path.join(out, "lstm_seq.onnx"))
    vit(os.path.join(out, "vit_tiny.onnx"))
    deeplab(os.path.join(out, "deeplab_w8.onnx"))
    detect(os.path.join(out, "detect_post.onnx"))
    for name, feeds in (
            ("resnext_w8", {"image": np.ones((2, 3, 224, 224), np.float32)}),
            ("densenet_w8", {"image": np.ones((2, 3, 224, 224), np.float32)}),
            ("vit_tiny", {"image": np.ones((2, 3, 128, 128), np.float32)}),
            ("deeplab_w8", {"image": np.ones((2, 3, 128, 128), np.float32)}),
            ("detect_post", {
                "regression": rng.standard_normal((2, 2000, 4)).astype(np.float32),
                "class_logits": rng.standard_normal((2, 2000, 20)).astype(np.float32)})):
        s = ort.InferenceSession(os.path.join(out, name + ".onnx"))
        y = s.run(None, feeds)
        print(name, [v.shape for v in y], float(np.abs(y[-1]).max()))
    s = ort.InferenceSession(os.path.join(out, "lstm_seq.onnx"))
    y = s.run(None, {"input_ids": np.arange(2 * 7).reshape(2, 7) % 64})[0]
    print("lstm_seq", y.shape, float(np.abs(y).max()))


if __name__ == "__main__":
    main()

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

The image models take image: batch x 3 x 224 x 224 (batch dynamic), opset 17.
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

    def save(self, out, path, inputs=None, classes=100):
        """The last node's output becomes logits [batch, classes]; inputs:
        the graph's (default: image)."""
        self.nodes[-1].output[0] = "logits"
        g = H.make_graph(
            self.nodes, os.path.basename(path)[:-5],
            inputs or [H.make_tensor_value_info("image", T.FLOAT, ["batch", 3, 224, 224])],
            [H.make_tensor_value_info("logits", T.FLOAT, ["batch", classes])], self.inits)
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
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    resnext(os.path.join(out, "resnext_w8.onnx"))
    densenet(os.path.join(out, "densenet_w8.onnx"))
    lstm_seq(os.path.join(out, "lstm_seq.onnx"))
    import onnxruntime as ort
    for name in ("resnext_w8", "densenet_w8"):
        s = ort.InferenceSession(os.path.join(out, name + ".onnx"))
        y = s.run(None, {"image": np.ones((2, 3, 224, 224), np.float32)})[0]
        print(name, y.shape, float(np.abs(y).max()))
    s = ort.InferenceSession(os.path.join(out, "lstm_seq.onnx"))
    y = s.run(None, {"input_ids": np.arange(2 * 7).reshape(2, 7) % 64})[0]
    print("lstm_seq", y.shape, float(np.abs(y).max()))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""An ONNX model as a torch module, for one fixed set of input shapes, with
the model's own weights (bench/gpu_models.py runs it beside plugrt).

    module = OnnxModule(onnx_model, {"image": (8, 3, 224, 224)}, device)
    module.to_precision(torch.float16)   # float buffers and Casts to float
    outputs = module(*inputs)            # a tuple in the graph's output order

Why not torch.onnx's importers or onnx2torch: none is on the GPU machine,
and the benchmark needs a module torch can capture as a CUDA graph and give
to torch.compile. So construction does the work that depends only on the
shapes and constants:

- The graph is walked once at construction on the given shapes, with real
  inputs. A value is *static* when it comes from initializers, Constant
  nodes and Shape (shapes are fixed) alone: Shape, Gather/Concat/Unsqueeze
  on shapes, ConstantOfShape, Range, masks built from them, a Transpose of
  a weight. Static nodes run there, on the CPU, and their results become
  buffers; forward() runs only the other nodes. So forward() has no host
  round trip (a Reshape's shape, a Slice's bounds, TopK's k are Python
  lists captured at construction) and no data-dependent Python control flow.
  The folding runs each op through the same torch code as forward(), so
  the folded and the live values cannot disagree (plain numpy would be a
  second implementation of each op).
- Ops whose output size depends on the data (NonZeroPlugin,
  NonMaxSuppression) run in forward() and make the module data-dependent
  (`module.data_dependent`): it cannot be captured as a CUDA graph, and a
  Shape of their results is computed live.
- Weights: the initializers as buffers (float32 as stored), so the module
  and plugrt compute the same function (gpu_models.py --verify checks it
  against ONNX Runtime). to_precision() casts every float buffer, clamped
  to the type's finite range (float32's lowest, HF's attention mask
  value, would be -inf in float16 and 0 * -inf a NaN), and every Cast to
  float then casts to that type: integer inputs and index math stay
  integer.

Ops: those the fp32 models of ../shared/models and tests/models use (OPS
below; `python3 onnx_torch.py --ops MODEL.onnx ...` lists a model's ops and
says which are missing), with the standard plugin library's CustomHardmax,
circ_pad_plugin and NonZeroPlugin as torch code. An op outside OPS, or an
attribute value the code does not handle, raises NotImplementedError naming
the node and what is missing.
"""

import argparse
import math
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

# Ops whose output shape depends on their input's values.
DATA_DEPENDENT = {"NonZero", "NonZeroPlugin", "NonMaxSuppression"}

# Static inputs of at most this many elements are also given to the ops as
# Python lists (shapes, axes, bounds); larger ones (weights) only as tensors.
_LIST_MAX = 4096

_ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: torch.float32,
    onnx.TensorProto.DOUBLE: torch.float64,
    onnx.TensorProto.FLOAT16: torch.float16,
    onnx.TensorProto.BFLOAT16: torch.bfloat16,
    onnx.TensorProto.INT64: torch.int64,
    onnx.TensorProto.INT32: torch.int32,
    onnx.TensorProto.INT16: torch.int16,
    onnx.TensorProto.INT8: torch.int8,
    onnx.TensorProto.UINT8: torch.uint8,
    onnx.TensorProto.BOOL: torch.bool,
}


def _tensor(arr):
    """A numpy array as a torch tensor (a copy: onnx's arrays may be
    read-only)."""
    return torch.from_numpy(np.array(arr, copy=True))


class Node:
    """What one op needs at run time: its attributes, the Python lists of
    its small static inputs, the module's float type, and where it runs."""

    def __init__(self, proto, module):
        self.proto = proto
        self.op = proto.op_type
        self.name = proto.name or proto.output[0]
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in proto.attribute}
        self.lists = {}  # input index -> Python list of a static input
        self.present = {i for i, name in enumerate(proto.input) if name}
        self.module = module
        self.cache = {}  # what an op makes once, e.g. device copies of static lists

    def attr(self, name, default=None):
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def scalar(self, i, what, default):
        """Optional static input i as one Python number."""
        v = self.const(i, what) if i in self.present else default
        while isinstance(v, list):
            v = v[0]
        return v

    def const(self, i, what):
        """Static input i as a Python list; a missing one is an error
        naming the node and what the op needed it for."""
        if i not in self.lists:
            raise NotImplementedError(
                "%s node %r: its %s (input %d) is not known at construction; "
                "the converter needs it static" % (self.op, self.name, what, i))
        return self.lists[i]

    def fail(self, why):
        raise NotImplementedError("%s node %r: %s" % (self.op, self.name, why))


# ---- the ops ------------------------------------------------------------
# Each takes (node, inputs) and returns a tensor or a tuple of tensors.
# inputs[i] is None for an omitted optional input.


def _binary(fn):
    return lambda n, x: fn(x[0], x[1])


def _div(n, x):
    a, b = x
    if not a.is_floating_point() and not b.is_floating_point():
        return torch.div(a, b, rounding_mode="trunc")  # ONNX: C's division
    return a / b


def _pow(n, x):
    a, b = x
    if 1 in n.lists and not isinstance(n.lists[1], list):
        return a.pow(n.lists[1])  # a Python exponent keeps a's dtype
    return torch.pow(a, b.to(a.dtype) if a.is_floating_point() else b)


def _max(n, x):
    y = x[0]
    for t in x[1:]:
        y = torch.maximum(y, t)
    return y


def _cast(n, x):
    to = n.attr("to")
    if to == onnx.TensorProto.FLOAT:
        return x[0].to(n.module.float_dtype)
    if to not in _ONNX_DTYPES:
        n.fail("cast to ONNX type %d is not handled" % to)
    return x[0].to(_ONNX_DTYPES[to])


def _constant(n, x):
    a = n.attrs
    if "value" in a:
        return _tensor(numpy_helper.to_array(a["value"]))
    if "value_float" in a:
        return torch.tensor(a["value_float"], dtype=torch.float32)
    if "value_floats" in a:
        return torch.tensor(list(a["value_floats"]), dtype=torch.float32)
    if "value_int" in a:
        return torch.tensor(a["value_int"], dtype=torch.int64)
    if "value_ints" in a:
        return torch.tensor(list(a["value_ints"]), dtype=torch.int64)
    n.fail("no value, value_float(s) or value_int(s) attribute")


def _constant_of_shape(n, x):
    shape = n.const(0, "shape")
    if "value" in n.attrs:
        v = numpy_helper.to_array(n.attrs["value"]).reshape(-1)
        return torch.full(shape, v[0].item(), dtype=_tensor(v).dtype)
    return torch.zeros(shape, dtype=torch.float32)


def _shape(n, x):
    s = list(x[0].shape)
    start, end = n.attr("start", 0), n.attr("end", None)
    return torch.tensor(s[start:end] if end is not None else s[start:], dtype=torch.int64)


def _norm_axis(a, rank):
    return a + rank if a < 0 else a


def _gather(n, x):
    data, idx = x
    axis = _norm_axis(n.attr("axis", 0), data.dim())
    if 1 in n.lists:  # static indices: normalize negatives here, once
        lst = n.lists[1]
        if not isinstance(lst, list):
            i = lst + data.shape[axis] if lst < 0 else lst
            return data.select(axis, i)
        # Made on the device once per (device, axis length): a copy from
        # the host in forward() could not be captured into a CUDA graph.
        key = ("gather", str(data.device), data.shape[axis])
        cache = n.cache
        if key not in cache:
            arr = np.array(lst, dtype=np.int64)
            arr = np.where(arr < 0, arr + data.shape[axis], arr)
            cache[key] = torch.from_numpy(arr).to(data.device)
        idx = cache[key]
    flat = torch.index_select(data, axis, idx.reshape(-1))
    return flat.reshape(data.shape[:axis] + idx.shape + data.shape[axis + 1:])


def _gather_elements(n, x):
    data, idx = x
    axis = _norm_axis(n.attr("axis", 0), data.dim())
    idx = torch.where(idx < 0, idx + data.shape[axis], idx)
    return torch.gather(data, axis, idx)


def _gather_nd(n, x):
    data, idx = x
    if n.attr("batch_dims", 0) != 0:
        n.fail("batch_dims %d is not handled (only 0)" % n.attr("batch_dims"))
    return data[tuple(idx.long().unbind(-1))]


def _concat(n, x):
    ts = [t for t in x if t is not None]
    return torch.cat(ts, dim=n.attr("axis"))


def _unsqueeze(n, x):
    axes = n.attrs.get("axes") or n.const(1, "axes")
    rank = x[0].dim() + len(axes)
    y = x[0]
    for a in sorted(_norm_axis(a, rank) for a in axes):
        y = y.unsqueeze(a)
    return y


def _squeeze(n, x):
    if "axes" in n.attrs:
        axes = n.attrs["axes"]
    elif len(x) > 1 and x[1] is not None:
        axes = n.const(1, "axes")
    else:
        return x[0].squeeze()
    y = x[0]
    for a in sorted((_norm_axis(a, y.dim()) for a in axes), reverse=True):
        y = y.squeeze(a)
    return y


def _reshape(n, x):
    shape = list(n.const(1, "shape"))
    if not n.attr("allowzero", 0):
        shape = [x[0].shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x[0].reshape(shape)


def _flatten(n, x):
    axis = _norm_axis(n.attr("axis", 1), x[0].dim())
    outer = int(np.prod(x[0].shape[:axis], dtype=np.int64))
    return x[0].reshape(outer, -1)


def _transpose(n, x):
    perm = n.attr("perm") or list(range(x[0].dim() - 1, -1, -1))
    return x[0].permute(*perm)


def _expand(n, x):
    shape = torch.broadcast_shapes(x[0].shape, tuple(n.const(1, "shape")))
    return x[0].expand(shape)


def _slice(n, x):
    data = x[0]
    starts, ends = n.const(1, "starts"), n.const(2, "ends")
    axes = n.const(3, "axes") if len(x) > 3 and x[3] is not None else range(len(starts))
    steps = n.const(4, "steps") if len(x) > 4 and x[4] is not None else [1] * len(starts)
    idx = [slice(None)] * data.dim()
    for s, e, a, st in zip(starts, ends, axes, steps):
        if st <= 0:
            n.fail("step %d is not handled (only positive steps)" % st)
        dim = data.shape[_norm_axis(a, data.dim())]
        s = max(0, min(dim, s + dim if s < 0 else s))
        e = max(0, min(dim, e + dim if e < 0 else e))
        idx[_norm_axis(a, data.dim())] = slice(s, e, st)
    return data[tuple(idx)]


def _split(n, x):
    axis = _norm_axis(n.attr("axis", 0), x[0].dim())
    if "split" in n.attrs:
        sizes = list(n.attrs["split"])
    elif len(x) > 1 and x[1] is not None:
        sizes = n.const(1, "split")
    else:
        parts = len(n.proto.output)
        each = -(-x[0].shape[axis] // parts)  # ONNX: the last part may be smaller
        sizes = each
    return tuple(torch.split(x[0], sizes, dim=axis))


def _range(n, x):
    start, limit, delta = (n.const(i, what) for i, what in enumerate(("start", "limit", "delta")))
    return torch.arange(start, limit, delta, dtype=x[0].dtype)


def _tile(n, x):
    return x[0].repeat(*n.const(1, "repeats"))


def _gemm(n, x):
    a, b = x[0], x[1]
    c = x[2] if len(x) > 2 else None
    if n.attr("transA", 0):
        a = a.t()
    alpha, beta = n.attr("alpha", 1.0), n.attr("beta", 1.0)
    w = b if n.attr("transB", 0) else b.t()  # F.linear takes [N, K]
    if alpha == 1.0 and beta == 1.0:
        return F.linear(a, w, c)
    y = F.linear(a, w) * alpha
    return y + beta * c if c is not None else y


def _sym_pads(n, pads, rank):
    """ONNX pads [b1, b2, ..., e1, e2, ...] as torch's per-dim padding when
    symmetric; else None and the F.pad list (last dim first)."""
    pads = list(pads or [0] * (2 * rank))
    begin, end = pads[:rank], pads[rank:]
    if begin == end:
        return begin, None
    fpad = []
    for b, e in zip(reversed(begin), reversed(end)):
        fpad += [b, e]
    return [0] * rank, fpad


def _check_auto_pad(n):
    if n.attr("auto_pad", "NOTSET") not in ("NOTSET", ""):
        n.fail("auto_pad %s is not handled (only explicit pads)" % n.attr("auto_pad"))


def _conv(n, x):
    _check_auto_pad(n)
    w = x[1]
    rank = w.dim() - 2
    pad, fpad = _sym_pads(n, n.attr("pads"), rank)
    inp = F.pad(x[0], fpad) if fpad else x[0]
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]
    return fn(inp, w, x[2] if len(x) > 2 else None, stride=n.attr("strides") or 1,
              padding=pad, dilation=n.attr("dilations") or 1, groups=n.attr("group", 1))


def _batch_norm(n, x):
    return F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0, n.attr("epsilon", 1e-5))


def _layer_norm(n, x):
    axis = _norm_axis(n.attr("axis", -1), x[0].dim())
    return F.layer_norm(x[0], x[0].shape[axis:], x[1], x[2] if len(x) > 2 else None,
                        n.attr("epsilon", 1e-5))


def _pool(n, x, kind):
    _check_auto_pad(n)
    k = n.attr("kernel_shape")
    rank = len(k)
    if rank != 2:
        n.fail("%d-D pooling is not handled (only 2-D)" % rank)
    pad, fpad = _sym_pads(n, n.attr("pads"), rank)
    ceil = bool(n.attr("ceil_mode", 0))
    strides = n.attr("strides") or [1] * rank
    if kind == "max":
        inp = F.pad(x[0], fpad, value=-math.inf) if fpad else x[0]
        return F.max_pool2d(inp, k, strides, pad, n.attr("dilations") or 1, ceil)
    if fpad:
        n.fail("asymmetric pads are not handled for AveragePool")
    return F.avg_pool2d(x[0], k, strides, pad, ceil, bool(n.attr("count_include_pad", 0)))


def _reduce(n, x, fn):
    if "axes" in n.attrs:
        axes = list(n.attrs["axes"])
    elif len(x) > 1 and x[1] is not None:
        axes = n.const(1, "axes")
    else:
        axes = list(range(x[0].dim()))
    keep = bool(n.attr("keepdims", 1))
    if fn == "mean":
        return x[0].mean(dim=axes, keepdim=keep)
    y = x[0]
    for a in sorted((_norm_axis(a, y.dim()) for a in axes), reverse=True):
        y = y.amax(dim=a, keepdim=keep)
    return y


def _resize(n, x):
    mode, ctm = n.attr("mode", "nearest"), n.attr("coordinate_transformation_mode", "half_pixel")
    if mode != "linear" or x[0].dim() != 4:
        n.fail("mode %s on a %d-D input is not handled (only 4-D linear)" % (mode, x[0].dim()))
    if ctm not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
        n.fail("coordinate_transformation_mode %s is not handled" % ctm)
    if len(x) > 3 and x[3] is not None:
        size = n.const(3, "sizes")[2:]
    else:
        scales = n.const(2, "scales")
        if scales[:2] != [1.0, 1.0]:
            n.fail("scaling the batch or channel dim is not handled")
        size = [int(math.floor(d * s)) for d, s in zip(x[0].shape[2:], scales[2:])]
    return F.interpolate(x[0], size=size, mode="bilinear", align_corners=ctm == "align_corners")


def _topk(n, x):
    k = n.const(1, "k")[0]
    v, i = torch.topk(x[0], k, dim=n.attr("axis", -1), largest=bool(n.attr("largest", 1)),
                      sorted=bool(n.attr("sorted", 1)))
    return v, i


def _einsum(n, x):
    return torch.einsum(n.attr("equation"), *x)


def _hard_sigmoid(n, x):
    return torch.clamp(x[0] * n.attr("alpha", 0.2) + n.attr("beta", 0.5), 0.0, 1.0)


def _softmax(n, x):
    return F.softmax(x[0], dim=n.attr("axis", -1))


def _lstm(n, x):
    """ONNX LSTM through the LSTM submodule made at construction (torch's
    gate order i, f, g, o; ONNX's i, o, f, c)."""
    return n.module.lstms[n.lstm_key](x)


def _custom_hardmax(n, x):
    # The plugin: 1 at the first maximum along axis, 0 elsewhere.
    axis = _norm_axis(n.attr("axis", -1), x[0].dim())
    i = torch.argmax(x[0], dim=axis, keepdim=True)
    return torch.zeros_like(x[0]).scatter_(axis, i, 1.0)


def _circ_pad(n, x):
    # The plugin's pads are torch's order (last dim first), as F.pad's.
    return F.pad(x[0], list(n.attr("pads")), mode="circular")


def _nonzero_plugin(n, x):
    idx = torch.nonzero(x[0]).to(torch.int32)
    if not n.attr("rowOrder", 1):
        idx = idx.t().contiguous()
    return idx, torch.tensor(idx.shape[0] if n.attr("rowOrder", 1) else idx.shape[1],
                             dtype=torch.int64, device=idx.device)


def _nms(n, x):
    """ONNX NonMaxSuppression, vectorized over batches and classes: the
    greedy loop runs over the score-sorted boxes with tensor ops (no
    per-box host decision); its output length depends on the data."""
    boxes, scores = x[0], x[1]
    max_out = n.scalar(2, "max_output_boxes_per_class", 0)
    iou_thr = n.scalar(3, "iou_threshold", 0.0)
    score_thr = n.scalar(4, "score_threshold", None)
    B, C, N = scores.shape
    if max_out <= 0 or N == 0:
        return torch.zeros((0, 3), dtype=torch.int64, device=scores.device)
    if n.attr("center_point_box", 0):
        cx, cy, w, h = boxes.unbind(-1)
        y1, x1, y2, x2 = cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2
    else:
        a, b, c, d = boxes.unbind(-1)
        y1, x1, y2, x2 = torch.minimum(a, c), torch.minimum(b, d), torch.maximum(a, c), torch.maximum(b, d)
    order = torch.argsort(scores, dim=-1, descending=True)  # [B, C, N]
    s = torch.gather(scores, 2, order)

    def pick(t):  # [B, N] -> [B, C, N] in each class's score order
        return torch.gather(t.unsqueeze(1).expand(B, C, N), 2, order)

    y1, x1, y2, x2 = pick(y1), pick(x1), pick(y2), pick(x2)
    area = (y2 - y1) * (x2 - x1)
    ih = (torch.minimum(y2.unsqueeze(-1), y2.unsqueeze(-2)) -
          torch.maximum(y1.unsqueeze(-1), y1.unsqueeze(-2))).clamp(min=0)
    iw = (torch.minimum(x2.unsqueeze(-1), x2.unsqueeze(-2)) -
          torch.maximum(x1.unsqueeze(-1), x1.unsqueeze(-2))).clamp(min=0)
    inter = ih * iw
    union = area.unsqueeze(-1) + area.unsqueeze(-2) - inter
    iou = torch.where(union > 0, inter / union, torch.zeros_like(inter))
    suppressed = torch.zeros_like(s, dtype=torch.bool) if score_thr is None else ~(s > score_thr)
    keep = torch.zeros_like(suppressed)
    for i in range(N):
        k = ~suppressed[..., i]
        keep[..., i] = k
        suppressed = suppressed | (k.unsqueeze(-1) & (iou[..., i, :] > iou_thr))
    keep = keep & (torch.cumsum(keep.to(torch.int64), dim=-1) <= max_out)
    b, c, p = torch.nonzero(keep, as_tuple=True)  # batch, class, then score order
    return torch.stack([b, c, order[b, c, p]], dim=1)


OPS = {
    "Add": _binary(torch.add), "Sub": _binary(torch.sub), "Mul": _binary(torch.mul),
    "Div": _div, "Pow": _pow, "Max": _max,
    "And": _binary(torch.logical_and), "Equal": _binary(torch.eq),
    "LessOrEqual": _binary(torch.le), "GreaterOrEqual": _binary(torch.ge),
    "Where": lambda n, x: torch.where(x[0], x[1], x[2]),
    "IsNaN": lambda n, x: torch.isnan(x[0]),
    "Erf": lambda n, x: torch.erf(x[0]), "Exp": lambda n, x: torch.exp(x[0]),
    "Tanh": lambda n, x: torch.tanh(x[0]), "Sigmoid": lambda n, x: torch.sigmoid(x[0]),
    "Relu": lambda n, x: F.relu(x[0]), "HardSwish": lambda n, x: F.hardswish(x[0]),
    "HardSigmoid": _hard_sigmoid, "Identity": lambda n, x: x[0],
    "Cast": _cast, "Constant": _constant, "ConstantOfShape": _constant_of_shape,
    "Shape": _shape, "Gather": _gather, "GatherElements": _gather_elements,
    "GatherND": _gather_nd, "Concat": _concat, "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze, "Reshape": _reshape, "Flatten": _flatten,
    "Transpose": _transpose, "Expand": _expand, "Slice": _slice, "Split": _split,
    "Range": _range, "Tile": _tile, "Gemm": _gemm,
    "MatMul": lambda n, x: torch.matmul(x[0], x[1]),
    "Conv": _conv, "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm,
    "Softmax": _softmax,
    "GlobalAveragePool": lambda n, x: x[0].mean(dim=tuple(range(2, x[0].dim())), keepdim=True),
    "MaxPool": lambda n, x: _pool(n, x, "max"), "AveragePool": lambda n, x: _pool(n, x, "avg"),
    "ReduceMean": lambda n, x: _reduce(n, x, "mean"), "ReduceMax": lambda n, x: _reduce(n, x, "max"),
    "Resize": _resize, "TopK": _topk, "Einsum": _einsum, "LSTM": _lstm,
    "NonMaxSuppression": _nms,
    "NonZero": lambda n, x: torch.nonzero(x[0]).t(),
    # The standard plugin library's ops (plugins/).
    "CustomHardmax": _custom_hardmax, "circ_pad_plugin": _circ_pad,
    "NonZeroPlugin": _nonzero_plugin,
}


class _Lstm(torch.nn.Module):
    """An ONNX LSTM node (no sequence_lens, no peepholes, default
    activations) as torch.nn.LSTM with the node's weights."""

    def __init__(self, node, consts):
        super().__init__()
        a = node.attrs
        if "activations" in a or "clip" in a or a.get("input_forget", 0):
            node.fail("activations, clip and input_forget are not handled")
        direction = node.attr("direction", "forward")
        if direction == "reverse":
            node.fail("direction reverse is not handled")
        ins = list(node.proto.input) + [""] * (8 - len(node.proto.input))
        if ins[4] or ins[7]:
            node.fail("sequence_lens and peepholes are not handled")
        for i in (1, 2):
            if ins[i] not in consts:
                node.fail("its weights (input %d) are not constant" % i)
        W, R = consts[ins[1]].float(), consts[ins[2]].float()
        dirs, hidden = W.shape[0], node.attr("hidden_size")
        B = consts[ins[3]].float() if ins[3] else torch.zeros(dirs, 8 * hidden)
        self.lstm = torch.nn.LSTM(W.shape[2], hidden, bidirectional=dirs == 2)
        perm = torch.cat([torch.arange(k * hidden, (k + 1) * hidden) for k in (0, 2, 3, 1)])
        with torch.no_grad():
            for d in range(dirs):
                sfx = "_reverse" if d else ""
                getattr(self.lstm, "weight_ih_l0" + sfx).copy_(W[d][perm])
                getattr(self.lstm, "weight_hh_l0" + sfx).copy_(R[d][perm])
                getattr(self.lstm, "bias_ih_l0" + sfx).copy_(B[d, :4 * hidden][perm])
                getattr(self.lstm, "bias_hh_l0" + sfx).copy_(B[d, 4 * hidden:][perm])
        self.dirs, self.hidden = dirs, hidden
        self.has_h, self.has_c = bool(ins[5]), bool(ins[6])

    def forward(self, x):
        seq, batch = x[0].shape[0], x[0].shape[1]
        zeros = x[0].new_zeros(self.dirs, batch, self.hidden)
        h0 = x[5] if self.has_h else zeros
        c0 = x[6] if self.has_c else zeros
        y, (h, c) = self.lstm(x[0], (h0.to(x[0].dtype), c0.to(x[0].dtype)))
        y = y.view(seq, batch, self.dirs, self.hidden).transpose(1, 2)
        return y, h, c


def _sanitize(name, used):
    base = "c_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    out, k = base, 1
    while out in used:
        out, k = "%s_%d" % (base, k), k + 1
    used.add(out)
    return out


class OnnxModule(torch.nn.Module):
    """The ONNX model `model` (a ModelProto) for inputs of the shapes the
    example `inputs` have (a dict name -> tensor, on `device`); module's
    docstring says what construction folds. The examples are run once."""

    def __init__(self, model, inputs, device="cpu"):
        super().__init__()
        g = model.graph
        self.float_dtype = torch.float32
        self.input_names = [i.name for i in g.input if i.name in inputs]
        self.output_names = [o.name for o in g.output]
        self.data_dependent = False
        self.lstms = torch.nn.ModuleDict()
        missing = sorted({n.op_type for n in g.node if n.op_type not in OPS})
        if missing:
            raise NotImplementedError("ops not handled by onnx_torch: " + ", ".join(missing))
        for i in g.input:
            if i.name not in inputs and i.name not in {t.name for t in g.initializer}:
                raise ValueError("no example given for graph input %r" % i.name)
        consts = {t.name: _tensor(numpy_helper.to_array(t)) for t in g.initializer}
        static = dict(consts)  # name -> CPU tensor of every static value
        live = {k: v.to(device) for k, v in inputs.items()}  # example values
        tainted = set()  # values whose shape depends on data
        last_use = {}
        for k, node in enumerate(g.node):
            for name in node.input:
                last_use[name] = k
        for name in self.output_names:
            last_use[name] = len(g.node)
        plan, used_buffers = [], {}
        for k, proto in enumerate(g.node):
            node = Node(proto, self)
            ins = list(proto.input)
            if proto.op_type == "LSTM":
                node.lstm_key = "lstm%d" % len(self.lstms)
                self.lstms[node.lstm_key] = _Lstm(node, consts).to(device)
            is_static = all(not i or i in static for i in ins)
            if proto.op_type == "Shape" and ins[0] in live and ins[0] not in tainted:
                is_static = True  # the shape is fixed, the data is not needed
            if proto.op_type in DATA_DEPENDENT:
                is_static = False
            for j, name in enumerate(ins):
                if name in static and static[name].numel() <= _LIST_MAX:
                    node.lists[j] = static[name].tolist()
            if is_static:
                args = [static[i] if i in static else live[i] if i else None for i in ins]
                outs = self._call(node, args)
                for name, v in zip(proto.output, outs):
                    if name:
                        static[name] = v.cpu()
            else:
                args = [(static[i].to(device) if i in static else live[i]) if i else None
                        for i in ins]
                outs = self._call(node, args)
                for name, v in zip(proto.output, outs):
                    if name:
                        live[name] = v
                if proto.op_type in DATA_DEPENDENT or any(i in tainted for i in ins):
                    tainted.update(o for o in proto.output if o)
                    self.data_dependent = True
                for name in ins:
                    if name in static and name not in used_buffers:
                        used_buffers[name] = None
                plan.append((k, node, ins, list(proto.output)))
            for name in ins:  # free example values after their last reader
                if name in live and last_use.get(name, -1) <= k and name not in inputs:
                    del live[name]
        # The static values forward() reads: buffers on the device.
        names = set()
        self.buffer_of = {}
        for name in list(used_buffers) + [o for o in self.output_names if o in static]:
            if name in self.buffer_of:
                continue
            attr = _sanitize(name, names)
            self.register_buffer(attr, static[name].to(device))
            self.buffer_of[name] = attr
        self.plan = [(node, ins, outs) for _, node, ins, outs in plan]
        # Per step, the values whose last reader it is: forward() drops them.
        self.frees = [[i for i in set(ins) if i and last_use.get(i) == k and
                       i not in self.output_names] for k, _, ins, _ in plan]

    def _call(self, node, args):
        with torch.no_grad():
            out = OPS[node.op](node, args)
        return out if isinstance(out, tuple) else (out,)

    def to_precision(self, dtype):
        """Runs the module in dtype: float buffers cast (clamped to its
        finite range), Casts to float cast to dtype; returns self."""
        fi = torch.finfo(dtype)
        # Every buffer by name: named_buffers() skips a tensor seen under
        # another name (an Identity of a weight), which would stay float32.
        for name, b in list(self._buffers.items()):
            if b is not None and b.is_floating_point():
                self._buffers[name] = b.clamp(fi.min, fi.max).to(dtype)
        for lstm in self.lstms.values():
            lstm.to(dtype)
        self.float_dtype = dtype
        return self

    def forward(self, *xs):
        env = dict(zip(self.input_names, xs))
        for name, attr in self.buffer_of.items():
            env[name] = getattr(self, attr)
        for (node, ins, outs), frees in zip(self.plan, self.frees):
            res = OPS[node.op](node, [env[i] if i else None for i in ins])
            if not isinstance(res, tuple):
                res = (res,)
            for name, v in zip(outs, res):
                if name:
                    env[name] = v
            for name in frees:
                env.pop(name, None)
        return tuple(env[o] for o in self.output_names)


def model_ops(path):
    """The (domain, op type) pairs of an ONNX model's nodes, sorted."""
    m = onnx.load(path, load_external_data=False)
    return sorted({(n.domain, n.op_type) for n in m.graph.node})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", nargs="+", metavar="MODEL.onnx",
                    help="print each model's op types, '!' before those not handled")
    a = ap.parse_args()
    if not a.ops:
        ap.error("give --ops MODEL.onnx ... (gpu_models.py --verify checks the conversion)")
    union = set()
    for path in a.ops:
        ops = model_ops(path)
        union.update(op for _, op in ops)
        print("%s: %s" % (path, " ".join(("" if op in OPS else "!") + op for _, op in ops)))
    missing = sorted(op for op in union if op not in OPS)
    print("all %d op types: %s" % (len(union), " ".join(sorted(union))))
    print("not handled: %s" % (" ".join(missing) or "none"))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Circular padding as a decorator plugin (plugrt.plugin, after
tensorrt.plugin): register gives the output shape, impl computes it with one
of two tactics, autotune offers float32 and float16 and both tactics, which
the builder times and checks against a reference. On the CPU the tactics
are numpy's wrap indexing (np.take) and slicing, and a pad may be larger
than the dim it pads (it wraps more than once, as ONNX Pad's mode "wrap"
does); on CUDA (--device cuda) they are
torch's circular pad and a Triton kernel, checked against the CPU impl.
Built through the network API and from an ONNX node carrying
plugin_namespace, for each precision; each result is compared with
np.pad(mode="wrap").

    python3 circ_pad_plugin.py [--precision fp32|fp16|both] [--device cpu|cuda]

Prints "Inference result correct!" and exits 0 when every result matches.
"""

import argparse
import sys
from typing import List, Tuple

import numpy as np
import numpy.typing as npt

import plugrt as trt
import plugrt.plugin as trtp


@trtp.register("sample::circ_pad_plugin")
def circ_pad_plugin_desc(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
    ndim = inp0.ndim
    out_desc = inp0.like()
    for i in range(np.size(pads) // 2):
        out_desc.shape_expr[ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
    return out_desc


def _pad_width(ndim, pads):
    # torch order: [last_before, last_after, second_last_before, ...]
    width = [(0, 0)] * ndim
    for i in range(len(pads) // 2):
        width[ndim - i - 1] = (int(pads[2 * i]), int(pads[2 * i + 1]))
    return width


def pad_by_numpy(x, pads, out):
    # numpy's wrap indexing, one padded dim at a time: element i of a dim
    # of n padded by `before` is x's element (i - before) mod n, which is
    # circular padding (ONNX Pad's mode "wrap", np.pad's mode="wrap") also
    # where a pad is larger than n. np.pad itself agrees only where each
    # pad is at most its dim before numpy 1.25 (numpy/numpy#22464).
    y = x
    for d, (before, after) in enumerate(_pad_width(x.ndim, pads)):
        if before or after:
            y = np.take(y, np.arange(-before, x.shape[d] + after), axis=d, mode="wrap")
    np.copyto(out, y)


def pad_by_slicing(x, pads, out):
    # The middle first, then each padded dim's wrapped edges, last dim first.
    # Along a padded dim the output repeats with period n (numpy's "wrap",
    # ONNX Pad's mode "wrap"), so each edge is copied from n elements
    # further in, at most n at a time: a pad larger than n wraps more than
    # once and reads what the copy before it wrote.
    width = _pad_width(x.ndim, pads)
    out[tuple(slice(b, b + n) for (b, _), n in zip(width, x.shape))] = x
    for d in reversed(range(x.ndim)):
        before, after = width[d]
        n = x.shape[d]
        if n == 0 and (before or after):
            raise ValueError("dim %d is empty and cannot be padded circularly" % d)
        dst = [slice(None)] * x.ndim
        src = [slice(None)] * x.ndim
        end = before  # before: right to left, from the middle out
        while end > 0:
            start = max(0, end - n)
            dst[d], src[d] = slice(start, end), slice(start + n, end + n)
            out[tuple(dst)] = out[tuple(src)]
            end = start
        start = before + n  # after: left to right
        while start < before + n + after:
            end = min(before + n + after, start + n)
            dst[d], src[d] = slice(start, end), slice(start - n, end - n)
            out[tuple(dst)] = out[tuple(src)]
            start = end


@trtp.impl("sample::circ_pad_plugin")
def circ_pad_plugin_impl(inp0: trtp.Tensor, pads: npt.NDArray[np.int32],
                         outputs: Tuple[trtp.Tensor], stream: int, tactic: int) -> None:
    x = np.asarray(inp0)
    y = np.asarray(outputs[0])
    if tactic == 2:
        pad_by_slicing(x, pads, y)
    else:  # 1, and 0 (the default)
        pad_by_numpy(x, pads, y)


# On CUDA: tactic 1 is torch's circular pad, tactic 2 a Triton kernel. Both
# take the plugin's stream (the engine's), through torch's current stream.

def _torch_stream(stream):
    import torch
    return torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()


try:  # Triton is for the GPU tactic only: the CPU needs none
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:
    @triton.jit
    def circ_pad_kernel(x_ptr, y_ptr, n, I0, I1, I2, I3, O1, O2, O3, B0, B1, B2, B3,
                        BLOCK: tl.constexpr):
        # Every output element reads the input element its index wraps to
        # (4-D, row-major; B: the pads before each dim).
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        o3 = offs % O3
        t = offs // O3
        o2 = t % O2
        t = t // O2
        o1 = t % O1
        o0 = t // O1
        i0 = ((o0 - B0) % I0 + I0) % I0
        i1 = ((o1 - B1) % I1 + I1) % I1
        i2 = ((o2 - B2) % I2 + I2) % I2
        i3 = ((o3 - B3) % I3 + I3) % I3
        src = ((i0 * I1 + i1) * I2 + i2) * I3 + i3
        tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=mask), mask=mask)


def pad_by_triton(x, pads, y):
    """x, y: torch CUDA tensors. The padded dims (the last len(pads)//2)
    with the others merged in front, as four dims."""
    if triton is None:
        raise RuntimeError("the Triton tactic needs triton (pip install triton)")
    width = _pad_width(x.dim(), pads)
    p = len(pads) // 2
    lead = x.dim() - p
    if p > 3 and not (p == 4 and lead == 0):
        raise ValueError("the Triton tactic pads at most 3 dims (or 4 of a 4-D tensor)")
    w = width[lead:]  # (before, after) of each padded dim
    if p <= 3:
        n_lead = int(np.prod(x.shape[:lead])) if lead else 1
        dims = [n_lead] + [1] * (3 - p) + list(x.shape[lead:])
        w = [(0, 0)] * (4 - p) + w
    else:
        dims = list(x.shape)
    before = [b for b, _ in w]
    out_dims = [d + b + a for d, (b, a) in zip(dims, w)]
    n = y.numel()
    if n == 0:
        return
    block = 1024
    circ_pad_kernel[(triton.cdiv(n, block),)](
        x, y, n, dims[0], dims[1], dims[2], dims[3], out_dims[1], out_dims[2], out_dims[3],
        before[0], before[1], before[2], before[3], BLOCK=block)


@trtp.impl("sample::circ_pad_plugin", device="cuda")
def circ_pad_plugin_cuda(inp0: trtp.Tensor, pads: npt.NDArray[np.int32],
                         outputs: Tuple[trtp.Tensor], stream: int, tactic: int) -> None:
    import torch
    import torch.nn.functional as F
    x = torch.as_tensor(inp0, device="cuda")  # no copy: __cuda_array_interface__
    y = torch.from_dlpack(outputs[0])          # no copy either: DLPack
    with torch.cuda.stream(_torch_stream(stream)):
        if tactic == 2:
            pad_by_triton(x, pads, y)
        else:  # 1, and 0 (the default)
            y.copy_(F.pad(x, [int(v) for v in pads], mode="circular"))


@trtp.autotune("sample::circ_pad_plugin")
def circ_pad_plugin_autotune(inp0: trtp.TensorDesc,
                             outputs: Tuple[trtp.TensorDesc]) -> List[trtp.AutoTuneCombination]:
    return [trtp.AutoTuneCombination("FP32|FP16, FP32|FP16", "LINEAR", [1, 2])]


PADS = np.array([1, 1, 2, 2], dtype=np.int32)
SHAPE = (2, 3, 8, 8)


def onnx_model(dtype):
    from onnx import TensorProto, helper
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    node = helper.make_node("circ_pad_plugin", ["x"], ["y"], name="pad",
                            pads=[int(v) for v in PADS], plugin_namespace="sample")
    graph = helper.make_graph([node], "circ_pad",
                              [helper.make_tensor_value_info("x", elem, ["N", 3, 8, 8])],
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def build(net_type, dtype, logger, device):
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    if net_type == "onnx":
        trt.OnnxParser(network, logger).parse(onnx_model(dtype))
    else:
        x = network.add_input("x", trt.float16 if dtype == np.float16 else trt.float32,
                              (-1,) + SHAPE[1:])
        layer = network.add_plugin(trtp.op.sample.circ_pad_plugin(x, pads=PADS))
        layer.get_output(0).name = "y"
        network.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    config.device = device
    config.autotune = True  # the default: time both tactics (checked against the first)
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1,) + SHAPE[1:], SHAPE, (4,) + SHAPE[1:])
    config.add_optimization_profile(profile)
    return trt.Runtime(logger).deserialize_cuda_engine(
        builder.build_serialized_network(network, config))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precision", choices=["fp32", "fp16", "both"], default="both")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args(argv)
    why = args.device == "cuda" and trt.device_unavailable("cuda")
    if why:
        print("--device cuda needs a CUDA device: %s" % why)
        return 2
    logger = trt.Logger(trt.Logger.WARNING)
    rng = np.random.default_rng(0)
    ok = True

    # The two tactics agree with np.pad on their own first.
    x = rng.standard_normal(SHAPE).astype(np.float32)
    ref = np.pad(x, _pad_width(x.ndim, PADS), mode="wrap")
    if args.device == "cpu":
        for f in (pad_by_numpy, pad_by_slicing):
            y = np.empty_like(ref)
            f(x, PADS, y)
            ok &= bool(np.array_equal(y, ref))
    else:
        import torch
        y = torch.empty(ref.shape, device="cuda")
        pad_by_triton(torch.from_numpy(x).cuda(), PADS, y)
        ok &= bool(np.array_equal(y.cpu().numpy(), ref))
    if args.device == "cpu":
        # Pads larger than their dims (2 > 1 and 3 > 2, the last dims) wrap
        # more than once: the tactics agree element for element.
        small, pads = x[:1, :1, :1, :2], np.array([3, 1, 2, 0], dtype=np.int32)
        got = [np.empty((1, 1, 3, 6), np.float32) for _ in range(2)]
        pad_by_numpy(small, pads, got[0])
        pad_by_slicing(small, pads, got[1])
        ok &= bool(np.array_equal(got[0], got[1])) and got[0][0, 0, 0, 0] == small[0, 0, 0, 1]

    precisions = ["fp32", "fp16"] if args.precision == "both" else [args.precision]
    for prec in precisions:
        dtype = np.float16 if prec == "fp16" else np.float32
        for net_type in ("network", "onnx"):
            engine = build(net_type, dtype, logger, args.device)
            tactic = engine.get_layer_info(0)["tactic"]
            ctx = engine.create_execution_context()
            good = True
            for n in (1, 2, 4):
                x = rng.standard_normal((n,) + SHAPE[1:]).astype(dtype)
                if args.device == "cuda":
                    import torch
                    y = ctx.run({"x": torch.from_numpy(x).cuda()})["y"]  # torch in, torch out
                    good &= y.is_cuda
                    y = y.cpu().numpy()
                else:
                    y = ctx.run({"x": x})["y"]
                good &= y.dtype == dtype and np.array_equal(
                    y, np.pad(x, _pad_width(x.ndim, PADS), mode="wrap"))
            ok &= bool(good)
            print("%s %s on %s: tactic %d, %s" % (net_type, prec, args.device, tactic,
                                                  "ok" if good else "WRONG"))
    if ok:
        print("Inference result correct!")
        return 0
    print("Inference result incorrect")
    return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""An in-place add as a decorator plugin: the output is `a.aliased()`, so it
shares the memory of input a, and impl adds b into it.

Shown three ways:
  1. a is an intermediate tensor (x -> double -> a): the output is a's
     memory (impl sees outputs[0].data_ptr == a.data_ptr);
  2. a is a network input: the runtime never writes a network input, so it
     copies x into the output's memory first and hands the plugin that copy
     as a (the same pointer as the output, not x's buffer; x unchanged);
  3. the caller binds the output to the input's own buffer: then the add
     happens in the caller's memory, with no copy.

    python3 in_place_add.py [--device cpu|cuda]

On CUDA (--device cuda) the impls are torch's, on the engine's stream, and
the tensors torch CUDA tensors. Prints "Inference result correct!" and exits
0 when all three hold.
"""

import argparse
import sys
from typing import Tuple

import numpy as np

import plugrt as trt
import plugrt.plugin as trtp

SEEN = []  # (output pointer, a's pointer) per impl call


@trtp.register("sample::add_in_place")
def add_in_place_desc(a: trtp.TensorDesc, b: trtp.TensorDesc) -> trtp.TensorDesc:
    return a.aliased()


@trtp.impl("sample::add_in_place")
def add_in_place_impl(a: trtp.Tensor, b: trtp.Tensor, outputs: Tuple[trtp.Tensor],
                      stream: int) -> None:
    SEEN.append((outputs[0].data_ptr, a.data_ptr))
    out = np.asarray(outputs[0])  # holds a's values, in a's memory or a copy
    np.add(out, np.asarray(b), out=out)


@trtp.impl("sample::add_in_place", device="cuda")
def add_in_place_cuda(a: trtp.Tensor, b: trtp.Tensor, outputs: Tuple[trtp.Tensor],
                      stream: int) -> None:
    import torch
    SEEN.append((outputs[0].data_ptr, a.data_ptr))
    out = torch.as_tensor(outputs[0], device="cuda")
    with torch.cuda.stream(torch.cuda.ExternalStream(stream) if stream
                           else torch.cuda.default_stream()):
        out.add_(torch.as_tensor(b, device="cuda"))


@trtp.register("sample::double")
def double_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("sample::double")
def double_impl(x: trtp.Tensor, outputs: Tuple[trtp.Tensor], stream: int) -> None:
    np.multiply(np.asarray(x), 2, out=np.asarray(outputs[0]))


@trtp.impl("sample::double", device="cuda")
def double_cuda(x: trtp.Tensor, outputs: Tuple[trtp.Tensor], stream: int) -> None:
    import torch
    with torch.cuda.stream(torch.cuda.ExternalStream(stream) if stream
                           else torch.cuda.default_stream()):
        torch.mul(torch.from_dlpack(x), 2, out=torch.from_dlpack(outputs[0]))


def build(intermediate, device):
    builder = trt.Builder(trt.Logger())
    network = builder.create_network()
    x = network.add_input("x", trt.float32, (4, 8))
    b = network.add_input("b", trt.float32, (4, 8))
    a = network.add_plugin(trtp.op.sample.double(x)).get_output(0) if intermediate else x
    layer = network.add_plugin(trtp.op.sample.add_in_place(a, b))
    layer.get_output(0).name = "z"
    network.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    config.device = device
    return builder.build_engine_with_config(network, config)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args(argv)
    why = args.device == "cuda" and trt.device_unavailable("cuda")
    if why:
        print("--device cuda needs a CUDA device: %s" % why)
        return 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    if args.device == "cuda":
        import torch
        torch.cuda.init()
        # torch CUDA tensors in, torch CUDA tensors out; plain arrays to check.
        dev = lambda a: torch.from_numpy(a).cuda()  # noqa: E731
        host = lambda t: t.cpu().numpy()  # noqa: E731
        ptr = lambda t: t.data_ptr()  # noqa: E731
        copy = lambda t: t.clone()  # noqa: E731
        sync = torch.cuda.synchronize
    else:
        dev = host = copy = lambda a: a.copy()  # noqa: E731
        ptr = lambda a: a.ctypes.data  # noqa: E731
        sync = lambda: None  # noqa: E731
    ok = True
    xd, bd = dev(x), dev(b)

    # 1. An intermediate input: the output is its memory.
    engine = build(intermediate=True, device=args.device)
    SEEN.clear()
    z = host(engine.create_execution_context().run({"x": xd, "b": bd})["z"])
    shared = SEEN[-1][0] == SEEN[-1][1]
    print("1. a = double(x): output shares a's memory: %s" % shared)
    ok &= shared and np.array_equal(z, 2 * x + b)

    # 2. A network input: copied into the output, never written.
    engine = build(intermediate=False, device=args.device)
    SEEN.clear()
    z = host(engine.create_execution_context().run({"x": xd, "b": bd})["z"])
    copied = SEEN[-1][0] == SEEN[-1][1] != ptr(xd)
    unchanged = np.array_equal(host(xd), x)
    print("2. a = x, a network input: copied first, x unchanged: %s" % (copied and unchanged))
    ok &= copied and unchanged and np.array_equal(z, x + b)

    # 3. The caller binds z to x's buffer: in place in the caller's memory.
    buf = copy(xd)
    ctx = engine.create_execution_context()
    ctx.set_tensor_address("x", buf)
    ctx.set_tensor_address("b", bd)
    ctx.set_tensor_address("z", buf)
    SEEN.clear()
    sync()
    ctx.execute_async_v3(0)
    sync()
    in_place = SEEN[-1][0] == SEEN[-1][1] == ptr(buf)
    print("3. z bound to x's buffer: added in place there: %s" % in_place)
    ok &= in_place and np.array_equal(host(buf), x + b)

    if ok:
        print("Inference result correct!")
        return 0
    print("Inference result incorrect")
    return 1


if __name__ == "__main__":
    sys.exit(main())

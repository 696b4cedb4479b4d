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

    python3 in_place_add.py

Prints "Inference result correct!" and exits 0 when all three hold.
"""

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


@trtp.register("sample::double")
def double_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("sample::double")
def double_impl(x: trtp.Tensor, outputs: Tuple[trtp.Tensor], stream: int) -> None:
    np.multiply(np.asarray(x), 2, out=np.asarray(outputs[0]))


def build(intermediate):
    builder = trt.Builder(trt.Logger())
    network = builder.create_network()
    x = network.add_input("x", trt.float32, (4, 8))
    b = network.add_input("b", trt.float32, (4, 8))
    a = network.add_plugin(trtp.op.sample.double(x)).get_output(0) if intermediate else x
    layer = network.add_plugin(trtp.op.sample.add_in_place(a, b))
    layer.get_output(0).name = "z"
    network.mark_output(layer.get_output(0))
    return builder.build_engine_with_config(network, builder.create_builder_config())


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    ok = True

    # 1. An intermediate input: the output is its memory.
    engine = build(intermediate=True)
    SEEN.clear()
    z = engine.create_execution_context().run({"x": x, "b": b})["z"]
    shared = SEEN[-1][0] == SEEN[-1][1]
    print("1. a = double(x): output shares a's memory: %s" % shared)
    ok &= shared and np.array_equal(z, 2 * x + b)

    # 2. A network input: copied into the output, never written.
    engine = build(intermediate=False)
    x_before = x.copy()
    SEEN.clear()
    z = engine.create_execution_context().run({"x": x, "b": b})["z"]
    copied = SEEN[-1][0] == SEEN[-1][1] != x.ctypes.data
    print("2. a = x, a network input: copied first, x unchanged: %s" % (
        copied and np.array_equal(x, x_before)))
    ok &= copied and np.array_equal(x, x_before) and np.array_equal(z, x + b)

    # 3. The caller binds z to x's buffer: in place in the caller's memory.
    buf = x.copy()
    ctx = engine.create_execution_context()
    ctx.set_tensor_address("x", buf)
    ctx.set_tensor_address("b", b)
    ctx.set_tensor_address("z", buf)
    SEEN.clear()
    ctx.execute_async_v3(0)
    in_place = SEEN[-1][0] == SEEN[-1][1] == buf.ctypes.data
    print("3. z bound to x's buffer: added in place there: %s" % in_place)
    ok &= in_place and np.array_equal(buf, x + b)

    if ok:
        print("Inference result correct!")
        return 0
    print("Inference result incorrect")
    return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Per-call cost of a plugin written in Python against the same op in C.

The op is a copy of a small tensor (64 float32), so what is measured is the
cost of calling the plugin, not of the work: an engine is a chain of LAYERS
copy layers, run with execute_async_v3 on the CPU, and the cost per layer
call is (time per run) / LAYERS. The variants:

  c           plugrt's built-in Identity (a C plugin)
  class       a Python class plugin (IPluginV3 capabilities) whose enqueue
              copies with ctypes.memmove (the bridge's own cost, nothing else)
  class-numpy the same class plugin copying through trt.host_array views
  decorator   a plugrt.plugin decorator plugin: impl does
              np.copyto(np.asarray(out), np.asarray(x))
  decorator-view  the same with Tensor.numpy(), a view kept between runs

    python3 bench/python_plugin_overhead.py [--layers 64] [--runs 300] [--size 64]

Prints one line per variant (median over repeats) and the Python overhead
over C per call.
"""

import argparse
import ctypes
import statistics
import sys
import time

import numpy as np

import plugrt as trt
import plugrt.plugin as trtp


class CopyPlugin(trt.Plugin):
    plugin_name = "BenchCopy"
    plugin_namespace = "bench"

    def __init__(self, use_numpy=False):
        super().__init__()
        self.use_numpy = use_numpy
        self.nbytes = 0

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return in_out[pos].desc.type == trt.float32

    def on_shape_change(self, inp, out):
        self.nbytes = int(np.prod(inp[0].dims)) * 4

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        if self.use_numpy:
            np.copyto(trt.host_array(outputs[0], output_desc[0]),
                      trt.host_array(inputs[0], input_desc[0]))
        else:
            ctypes.memmove(outputs[0], inputs[0], self.nbytes)

    def get_fields_to_serialize(self):
        return [trt.PluginField("numpy", np.array([int(self.use_numpy)], np.int32),
                                trt.PluginFieldType.INT32)]


class CopyCreator(trt.PluginCreator):
    name, plugin_namespace, plugin_version = "BenchCopy", "bench", "1"
    field_names = [trt.PluginField("numpy", None, trt.PluginFieldType.INT32)]

    def create_plugin(self, name, fc, phase):
        return CopyPlugin(bool(fc[0].data[0]) if len(fc) else False)


@trtp.register("bench::copy")
def copy_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("bench::copy")
def copy_impl(x: trtp.Tensor, outputs, stream) -> None:
    np.copyto(np.asarray(outputs[0]), np.asarray(x))


@trtp.register("bench::copy_view")
def copy_view_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("bench::copy_view")
def copy_view_impl(x: trtp.Tensor, outputs, stream) -> None:
    np.copyto(outputs[0].numpy(), x.numpy())


def engine(variant, layers, size):
    reg = trt.get_plugin_registry()
    b = trt.Builder()
    net = b.create_network()
    t = net.add_input("x", trt.float32, (size,))
    for i in range(layers):
        if variant == "c":
            p = reg.get_creator("Identity", "1", "plugrt").create_plugin("id%d" % i)
            t = net.add_plugin_v3([t], [], p).get_output(0)
        elif variant == "decorator":
            t = net.add_plugin(trtp.op.bench.copy(t)).get_output(0)
        elif variant == "decorator-view":
            t = net.add_plugin(trtp.op.bench.copy_view(t)).get_output(0)
        else:
            t = net.add_plugin_v3([t], [], CopyPlugin(variant == "class-numpy")).get_output(0)
    t.name = "y"
    net.mark_output(t)
    return b.build_engine_with_config(net)


def measure(variant, layers, size, runs, repeats):
    e = engine(variant, layers, size)
    ctx = e.create_execution_context()
    x = np.arange(size, dtype=np.float32)
    y = np.zeros(size, np.float32)
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y)
    for _ in range(20):
        ctx.execute_async_v3(0)
    assert np.array_equal(x, y), variant
    per = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(runs):
            ctx.execute_async_v3(0)
        per.append((time.perf_counter() - t0) / runs / layers)
    return statistics.median(per), min(per)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=64)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--size", type=int, default=64)
    args = ap.parse_args(argv)
    trt.get_plugin_registry().register_creator(CopyCreator())
    res = {}
    print("per layer call, %d layers of a %d-float copy, median (min) of %d x %d runs:" % (
        args.layers, args.size, args.repeats, args.runs))
    for v in ("c", "class", "class-numpy", "decorator", "decorator-view"):
        med, mn = measure(v, args.layers, args.size, args.runs, args.repeats)
        res[v] = med
        print("  %-14s %8.2f us  (%.2f)" % (v, med * 1e6, mn * 1e6))
    for v in ("class", "class-numpy", "decorator", "decorator-view"):
        print("  %-14s +%.2f us per call over C (%.0fx)" % (
            v, (res[v] - res["c"]) * 1e6, res[v] / res["c"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

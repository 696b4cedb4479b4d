#!/usr/bin/env python3
"""Per-call cost of a plugin written in Python against the same op in C.

The op is a copy of a small tensor (64 float32), so what is measured is the
cost of calling the plugin, not of the work: an engine is a chain of LAYERS
copy layers, run with execute_async_v3, and the cost per layer call is
(time per run) / LAYERS. On the CPU (--device cpu, the default) the
variants are:

  c           plugrt's built-in Identity (a C plugin)
  class       a Python class plugin (IPluginV3 capabilities) whose enqueue
              copies with ctypes.memmove (the bridge's own cost, nothing else)
  class-numpy the same class plugin copying through trt.host_array views
  decorator   a plugrt.plugin decorator plugin: impl does
              np.copyto(np.asarray(out), np.asarray(x))
  decorator-view  the same with Tensor.numpy(), a view kept between runs

On CUDA (--device cuda) the engines are CUDA engines run on a stream, timed
on the host from the first enqueue to the stream's end:

  c             the built-in Identity's CUDA copy (a C plugin)
  class         a class plugin whose enqueue queues cudaMemcpyAsync on the
                stream (through libplugrt's prt_device_memcpy): the bridge
  class-torch   the class plugin copying with torch: torch.as_tensor of
                plugrt.device_tensor views, copy_ on the engine's stream
  decorator     a decorator plugin (impl device "cuda"): torch.as_tensor(x)
                (__cuda_array_interface__), copy_ on the stream
  decorator-dlpack  the same through torch.from_dlpack
  decorator-cupy    the same with cupy (cupy.from_dlpack, copy on the stream)

    python3 bench/python_plugin_overhead.py [--device cpu|cuda] [--layers 64] [--runs 300]

Prints one line per variant (median over repeats) and the Python overhead
over C per call; variants whose library is missing are skipped with a note.
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

    def __init__(self, use_numpy=False, cuda=False):
        super().__init__()
        self.use_numpy = use_numpy  # on CUDA: torch
        self.cuda = cuda
        self.devices = [trt.Device.CUDA if cuda else trt.Device.CPU]
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
        if self.cuda:
            if self.use_numpy:
                import torch
                with torch.cuda.stream(_torch_stream(stream)):
                    torch.as_tensor(trt.device_tensor(outputs[0], output_desc[0], stream=stream),
                                    device="cuda").copy_(torch.as_tensor(trt.device_tensor(
                                        inputs[0], input_desc[0], stream=stream), device="cuda"))
            elif _memcpy(1, outputs[0], inputs[0], self.nbytes, 2, stream or None):
                raise RuntimeError("prt_device_memcpy: %s" % trt._capi.last_error())
            return
        if self.use_numpy:
            np.copyto(trt.host_array(outputs[0], output_desc[0]),
                      trt.host_array(inputs[0], input_desc[0]))
        else:
            ctypes.memmove(outputs[0], inputs[0], self.nbytes)

    def get_fields_to_serialize(self):
        return [trt.PluginField("numpy", np.array([int(self.use_numpy)], np.int32),
                                trt.PluginFieldType.INT32),
                trt.PluginField("cuda", np.array([int(self.cuda)], np.int32),
                                trt.PluginFieldType.INT32)]


class CopyCreator(trt.PluginCreator):
    name, plugin_namespace, plugin_version = "BenchCopy", "bench", "1"
    field_names = [trt.PluginField("numpy", None, trt.PluginFieldType.INT32),
                   trt.PluginField("cuda", None, trt.PluginFieldType.INT32)]

    def create_plugin(self, name, fc, phase):
        f = {x.name: bool(x.data[0]) for x in fc}
        return CopyPlugin(f.get("numpy", False), f.get("cuda", False))


# libplugrt's prt_device_memcpy(device, dst, src, bytes, kind, stream), as
# the ctypes function the package declares (a C call and nothing more).
_memcpy = trt._capi.fn.device_memcpy


def _torch_stream(stream):
    import torch
    return torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()


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


@trtp.impl("bench::copy", device="cuda")
def copy_cuda_impl(x: trtp.Tensor, outputs, stream) -> None:
    import torch
    with torch.cuda.stream(_torch_stream(stream)):
        torch.as_tensor(outputs[0], device="cuda").copy_(torch.as_tensor(x, device="cuda"))


@trtp.register("bench::copy_dlpack")
def copy_dlpack_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("bench::copy_dlpack", device="cuda")
def copy_dlpack_impl(x: trtp.Tensor, outputs, stream) -> None:
    import torch
    with torch.cuda.stream(_torch_stream(stream)):
        torch.from_dlpack(outputs[0]).copy_(torch.from_dlpack(x))


@trtp.register("bench::copy_cupy")
def copy_cupy_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("bench::copy_cupy", device="cuda")
def copy_cupy_impl(x: trtp.Tensor, outputs, stream) -> None:
    import cupy
    with cupy.cuda.ExternalStream(stream) if stream else cupy.cuda.Stream.null:
        cupy.from_dlpack(outputs[0])[...] = cupy.from_dlpack(x)


CPU_VARIANTS = ("c", "class", "class-numpy", "decorator", "decorator-view")
CUDA_VARIANTS = ("c", "class", "class-torch", "decorator", "decorator-dlpack", "decorator-cupy")
NEEDS = {"class-torch": "torch", "decorator": "torch", "decorator-dlpack": "torch",
         "decorator-cupy": "cupy"}


def engine(variant, layers, size, device):
    reg = trt.get_plugin_registry()
    b = trt.Builder()
    net = b.create_network()
    t = net.add_input("x", trt.float32, (size,))
    cuda = device == "cuda"
    for i in range(layers):
        if variant == "c":
            p = reg.get_creator("Identity", "1", "plugrt").create_plugin("id%d" % i)
            t = net.add_plugin_v3([t], [], p).get_output(0)
        elif variant == "decorator":
            t = net.add_plugin(trtp.op.bench.copy(t)).get_output(0)
        elif variant == "decorator-view":
            t = net.add_plugin(trtp.op.bench.copy_view(t)).get_output(0)
        elif variant == "decorator-dlpack":
            t = net.add_plugin(trtp.op.bench.copy_dlpack(t)).get_output(0)
        elif variant == "decorator-cupy":
            t = net.add_plugin(trtp.op.bench.copy_cupy(t)).get_output(0)
        else:
            p = CopyPlugin(variant in ("class-numpy", "class-torch"), cuda)
            t = net.add_plugin_v3([t], [], p).get_output(0)
    t.name = "y"
    net.mark_output(t)
    cfg = b.create_builder_config()
    cfg.device = device
    return b.build_engine_with_config(net, cfg)


def measure(variant, layers, size, runs, repeats, device):
    e = engine(variant, layers, size, device)
    ctx = e.create_execution_context()
    x = np.arange(size, dtype=np.float32)
    y = np.zeros(size, np.float32)
    if device == "cuda":
        xd, yd = trt.DeviceBuffer(x.nbytes), trt.DeviceBuffer(y.nbytes)
        xd.copy_from_host(x)
        yd.copy_from_host(y)
        ctx.set_tensor_address("x", xd)
        ctx.set_tensor_address("y", yd)
        stream = trt.Stream()
        s = stream.handle
        sync = stream.synchronize
    else:
        ctx.set_tensor_address("x", x)
        ctx.set_tensor_address("y", y)
        s = 0

        def sync():
            pass
    for _ in range(20):
        ctx.execute_async_v3(s)
    sync()
    if device == "cuda":
        yd.copy_to_host(y, s)
    assert np.array_equal(x, y), variant
    per = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        for _ in range(runs):
            ctx.execute_async_v3(s)
        sync()
        per.append((time.perf_counter() - t0) / runs / layers)
    return statistics.median(per), min(per)


def available(variant, device):
    lib = NEEDS.get(variant) if device == "cuda" else None
    if lib is None:
        return None
    try:
        __import__(lib)
    except ImportError:
        return "%s is not installed" % lib
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=64)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args(argv)
    why = args.device == "cuda" and trt.device_unavailable("cuda")
    if why:
        print("--device cuda needs a CUDA device: %s" % why)
        return 2
    trt.get_plugin_registry().register_creator(CopyCreator())
    res = {}
    print("on %s, per layer call, %d layers of a %d-float copy, median (min) of %d x %d runs:"
          % (args.device, args.layers, args.size, args.repeats, args.runs))
    variants = CUDA_VARIANTS if args.device == "cuda" else CPU_VARIANTS
    for v in variants:
        why = available(v, args.device)
        if why:
            print("  %-16s skipped: %s" % (v, why))
            continue
        med, mn = measure(v, args.layers, args.size, args.runs, args.repeats, args.device)
        res[v] = med
        print("  %-16s %8.2f us  (%.2f)" % (v, med * 1e6, mn * 1e6))
    for v in variants[1:]:
        if v in res:
            print("  %-16s +%.2f us per call over C (%.1fx)" % (
                v, (res[v] - res["c"]) * 1e6, res[v] / res["c"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

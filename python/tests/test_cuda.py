"""CUDA engines from Python, on a GPU: the standard plugins' CUDA kernels
through run() (numpy, torch and cupy arrays in and out), execute_async_v3
with device pointers and streams of every kind, output allocators with
device memory; Python plugins on CUDA (class and decorator, torch and cupy,
DLPack and __cuda_array_interface__, size tensors, true dims after a
data-dependent layer, tactics checked against the CPU impl, errors, engines
saved and loaded). Every test skips without a usable CUDA device (and those
needing torch or cupy without them), saying why."""

import os
import subprocess
import sys
from typing import List, Tuple

import numpy as np
import pytest

import plugrt as trt
import plugrt.plugin as trtp

import plugins_for_tests  # noqa: F401 - tests::twice, with a CUDA impl
from conftest import HERE

pytestmark = pytest.mark.cuda

CUDA = trt.Device.CUDA


def random_zeros(rng, shape, dtype=np.float32):
    a = rng.random(shape).astype(dtype)
    a[rng.random(shape) < 0.5] = 0
    return a


def nonzero_ref(a):
    return np.stack(np.nonzero(a), axis=1).astype(np.int32)


def nonzero_engine(reg, dtype=trt.float32):
    b = trt.Builder(trt.Logger(), reg)
    net = b.create_network()
    x = net.add_input("X", dtype, (-1, -1))
    plugin = reg.get_creator("NonZeroPlugin", "1", "").create_plugin("nz")
    y = net.add_plugin_v3([x], [], plugin).get_output(0)
    y.name = "Y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    cfg.device = "cuda"
    p = b.create_optimization_profile()
    p.set_shape("X", (1, 1), (16, 16), (64, 64))
    cfg.add_optimization_profile(p)
    return b.build_engine_with_config(net, cfg)


def build(make_net, autotune=False, profile=None, reg=None):
    """A CUDA engine of the network make_net(network) fills."""
    b = trt.Builder(trt.Logger(), reg)
    net = b.create_network()
    make_net(net)
    cfg = b.create_builder_config()
    cfg.device = CUDA
    cfg.autotune = autotune
    for name, triple in (profile or {}).items():
        p = b.create_optimization_profile()
        p.set_shape(name, *triple)
        cfg.add_optimization_profile(p)
    return b.build_engine_with_config(net, cfg)


def one_op(op, dtype=trt.float32, shape=(-1, 4), profile=((1, 4), (4, 4), (16, 4)),
           autotune=False):
    def make(net):
        x = net.add_input("x", dtype, shape)
        layer = net.add_plugin(op(x))
        for i in range(layer.num_outputs):
            layer.get_output(i).name = "y%d" % i
            net.mark_output(layer.get_output(i))
    return build(make, autotune, {"x": profile} if -1 in shape else None)


def torch_stream(torch, stream):
    return torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()


# ---------------------------------------------------------------------------
# CUDA engines of C plugins from Python
# ---------------------------------------------------------------------------

def test_the_package_ships_the_cuda_kernels_of_the_standard_plugins():
    if os.environ.get("PLUGRT_LIBRARY_DIR"):
        pytest.skip("PLUGRT_LIBRARY_DIR points elsewhere")
    libs = os.path.join(os.path.dirname(trt.__file__), "_libs")
    assert "libplugrt_plugins_cuda.so" in os.listdir(libs)


def test_cuda_engine_queries(std_registry):
    e = nonzero_engine(std_registry)
    assert e.device == CUDA and "cuda" in repr(e)
    assert e.get_tensor_location("X") == trt.TensorLocation.DEVICE
    assert e.get_tensor_shape("Y") == (-1, 2) and e.is_data_dependent("Y")
    info = trt.get_device_info("cuda")
    assert info["name"] and info["cc_major"] >= 1 and info["memory_bytes"] > 0
    # Saved and loaded, still a CUDA engine.
    e2 = trt.Runtime(trt.Logger(), std_registry).deserialize_cuda_engine(e.serialize())
    assert e2.device == CUDA


def test_run_with_numpy_arrays(std_registry, rng):
    ctx = nonzero_engine(std_registry).create_execution_context()
    for shape in [(16, 16), (64, 64), (1, 3), (5, 1), (7, 9)]:
        a = random_zeros(rng, shape)
        y = ctx.run({"X": a})["Y"]
        assert isinstance(y, np.ndarray) and y.dtype == np.int32
        assert np.array_equal(y, nonzero_ref(a)), shape
    y = ctx.run({"X": np.zeros((4, 4), np.float32)})["Y"]
    assert y.shape == (0, 2)
    with pytest.raises(trt.InvalidArgumentError, match="float64"):
        ctx.run({"X": np.zeros((4, 4))})
    with pytest.raises(trt.ShapeError):
        ctx.run({"X": np.zeros((65, 4), np.float32)})


def test_run_with_torch_tensors(std_registry, rng, torch):
    ctx = nonzero_engine(std_registry).create_execution_context()
    a = random_zeros(rng, (16, 16))
    x = torch.from_numpy(a).cuda()
    y = ctx.run({"X": x})["Y"]
    assert isinstance(y, torch.Tensor) and y.is_cuda and y.dtype == torch.int32
    assert np.array_equal(y.cpu().numpy(), nonzero_ref(a))
    # A strided tensor is made contiguous first.
    y = ctx.run({"X": x.t()})["Y"]
    assert np.array_equal(y.cpu().numpy(), nonzero_ref(a.T))
    # torch's current stream, or the one given.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x2 = torch.from_numpy(a[:5]).cuda()
        y = ctx.run({"X": x2})["Y"]
    s.synchronize()
    assert np.array_equal(y.cpu().numpy(), nonzero_ref(a[:5]))
    s2 = torch.cuda.Stream()
    s2.wait_stream(torch.cuda.current_stream())
    y = ctx.run({"X": x}, stream=s2)["Y"]
    s2.synchronize()
    assert np.array_equal(y.cpu().numpy(), nonzero_ref(a))
    # A torch CPU tensor is copied in; the result is a torch CUDA tensor.
    y = ctx.run({"X": torch.from_numpy(a)})["Y"]
    assert y.is_cuda and np.array_equal(y.cpu().numpy(), nonzero_ref(a))
    with pytest.raises(trt.InvalidArgumentError, match="float16"):
        ctx.run({"X": x.half()})


def test_run_with_cupy_arrays(std_registry, rng, cupy):
    ctx = nonzero_engine(std_registry).create_execution_context()
    a = random_zeros(rng, (32, 8))
    y = ctx.run({"X": cupy.asarray(a)})["Y"]
    assert isinstance(y, cupy.ndarray) and y.dtype == np.int32
    assert np.array_equal(cupy.asnumpy(y), nonzero_ref(a))
    y = ctx.run({"X": cupy.asarray(a)[:, ::2]})["Y"]  # strided: copied contiguous
    assert np.array_equal(cupy.asnumpy(y), nonzero_ref(a[:, ::2]))


def test_run_with_other_cuda_arrays(std_registry, rng, torch):
    """Objects with only __cuda_array_interface__, or only DLPack."""
    ctx = nonzero_engine(std_registry).create_execution_context()
    a = random_zeros(rng, (8, 8))
    x = torch.from_numpy(a).cuda()
    torch.cuda.synchronize()

    class CAIOnly:
        __cuda_array_interface__ = x.__cuda_array_interface__

    class DLPackOnly:
        def __dlpack__(self, **kw):
            return x.__dlpack__(**kw)

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    for obj in (CAIOnly(), DLPackOnly()):
        y = ctx.run({"X": obj})["Y"]
        assert isinstance(y, np.ndarray) and np.array_equal(y, nonzero_ref(a))


def test_execute_async_v3_with_pointers_streams_and_an_allocator(std_registry, rng, torch):
    e = nonzero_engine(std_registry)
    ctx = e.create_execution_context()
    a = random_zeros(rng, (16, 16))
    x = torch.from_numpy(a).cuda()
    k = int(np.count_nonzero(a))

    class TorchAllocator(trt.IOutputAllocator):
        def __init__(self):
            super().__init__()
            self.bufs, self.shapes, self.streams = {}, {}, []

        def reallocate_output_async(self, name, memory, size, alignment, stream):
            self.streams.append(stream)
            self.bufs[name] = torch.empty(max(1, size), dtype=torch.uint8, device="cuda")
            return self.bufs[name]  # an object: kept alive by plugrt

        def notify_shape(self, name, shape):
            self.shapes[name] = tuple(shape)

    alloc = TorchAllocator()
    ctx.set_input_shape("X", a.shape)
    assert ctx.get_tensor_shape("Y") == (256, 2)  # the upper bound before a run
    ctx.set_tensor_address("X", x.data_ptr())  # an int, as TensorRT's users do
    ctx.set_output_allocator("Y", alloc)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    ctx.execute_async_v3(s)  # a torch.cuda.Stream object
    s.synchronize()
    assert alloc.shapes["Y"] == (k, 2) and alloc.streams == [s.cuda_stream]
    got = alloc.bufs["Y"][:k * 8].cpu().numpy().view(np.int32).reshape(k, 2)
    assert np.array_equal(got, nonzero_ref(a))
    assert ctx.get_tensor_shape("Y") == (k, 2)

    # An upper-bound buffer bound as the address; the true shape after.
    ctx2 = e.create_execution_context()
    ctx2.set_input_shape("X", a.shape)
    out = torch.full((256, 2), -1, dtype=torch.int32, device="cuda")
    ctx2.set_tensor_address("X", x)
    ctx2.set_tensor_address("Y", out)
    ctx2.execute_async_v3(torch.cuda.current_stream().cuda_stream)
    assert ctx2.get_tensor_shape("Y") == (k, 2)  # waits for the run
    assert np.array_equal(out.view(-1)[:2 * k].view(k, 2).cpu().numpy(), nonzero_ref(a))
    # Host memory for a device tensor is refused, naming both.
    with pytest.raises(trt.InvalidArgumentError, match="host memory.*CUDA memory"):
        ctx2.set_tensor_address("X", a)
    with pytest.raises(trt.InvalidArgumentError, match="float16"):
        ctx2.set_tensor_address("X", x.half())


def test_device_buffers_and_streams_of_plugrt(std_registry, rng):
    """Without torch or cupy: plugrt.DeviceBuffer and plugrt.Stream."""
    e = nonzero_engine(std_registry)
    ctx = e.create_execution_context()
    a = random_zeros(rng, (20, 12))
    k = int(np.count_nonzero(a))
    s = trt.Stream()
    x = trt.DeviceBuffer(a.nbytes)
    y = trt.DeviceBuffer(a.size * 2 * 4)
    x.copy_from_host(a, s)
    ctx.set_input_shape("X", a.shape)
    ctx.set_tensor_address("X", x)
    ctx.set_tensor_address("Y", y)
    ctx.execute_async_v3(s)
    assert ctx.get_tensor_shape("Y") == (k, 2)
    got = y.copy_to_host(np.empty(2 * k, np.int32), s).reshape(k, 2)
    assert np.array_equal(got, nonzero_ref(a))
    s.synchronize()


# ---------------------------------------------------------------------------
# Python class plugins on CUDA
# ---------------------------------------------------------------------------

class TorchScale(trt.Plugin):
    """y = x * scale with torch on the engine's stream; notes what enqueue
    was given."""
    plugin_name = "CudaScale"
    plugin_namespace = "tcuda"
    devices = [trt.Device.CUDA]
    seen = []

    def __init__(self, scale=2.0):
        super().__init__()
        self.scale = float(scale)

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return in_out[pos].desc.type in (trt.float32, trt.float16)

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        import torch
        TorchScale.seen.append((inputs[0], outputs[0], stream, tuple(input_desc[0].dims)))
        x = torch.as_tensor(trt.device_tensor(inputs[0], input_desc[0], stream=stream),
                            device="cuda")
        y = torch.as_tensor(trt.device_tensor(outputs[0], output_desc[0], stream=stream),
                            device="cuda")
        assert x.data_ptr() == inputs[0] and y.data_ptr() == outputs[0]  # no copies
        with torch.cuda.stream(torch_stream(torch, stream)):
            torch.mul(x, self.scale, out=y)

    def get_fields_to_serialize(self):
        return [trt.PluginField("scale", np.array([self.scale], np.float32),
                                trt.PluginFieldType.FLOAT32)]


class TorchScaleCreator(trt.PluginCreator):
    name, plugin_namespace, plugin_version = "CudaScale", "tcuda", "1"
    field_names = [trt.PluginField("scale", None, trt.PluginFieldType.FLOAT32)]

    def create_plugin(self, name, fc, phase):
        return TorchScale(float(fc["scale"].data[0]) if len(fc) else 2.0)


trt.get_plugin_registry().register_creator(TorchScaleCreator())


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_class_plugin_on_cuda(torch, rng, dtype):
    tdt = getattr(torch, dtype)

    def make(net):
        x = net.add_input("x", trt.float16 if dtype == "float16" else trt.float32, (-1, 8))
        y = net.add_plugin_v3([x], [], TorchScale(2.5)).get_output(0)
        y.name = "y"
        net.mark_output(y)
    e = build(make, profile={"x": ((1, 8), (4, 8), (32, 8))})
    x = torch.randn(5, 8, device="cuda", dtype=tdt)
    TorchScale.seen.clear()
    y = e.create_execution_context().run({"x": x})["y"]
    assert y.dtype == tdt and torch.equal(y, x * 2.5)
    inp, out, stream, dims = TorchScale.seen[-1]
    assert inp == x.data_ptr() and out == y.data_ptr() and dims == (5, 8)
    assert stream == torch.cuda.current_stream().cuda_stream
    # On a stream of its own, and loaded back from the engine's bytes.
    e2 = trt.Runtime().deserialize_cuda_engine(e.serialize())
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = e2.create_execution_context().run({"x": x})["y"]
    s.synchronize()
    assert torch.equal(y, x * 2.5) and TorchScale.seen[-1][2] == s.cuda_stream


# ---------------------------------------------------------------------------
# Decorator plugins on CUDA
# ---------------------------------------------------------------------------

SEEN = {}


@trtp.register("tcuda::scale")
def scale_desc(x: trtp.TensorDesc, factor: float = 3.0) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::scale", device="cuda")
def scale_cuda(x: trtp.Tensor, factor: float, outputs, stream) -> None:
    import torch
    cai = x.__cuda_array_interface__
    xt = torch.as_tensor(x, device="cuda")          # __cuda_array_interface__
    yt = torch.from_dlpack(outputs[0])              # DLPack
    SEEN["scale"] = dict(device=x.device, stream=stream, tensor_stream=x.stream,
                         cai_stream=cai["stream"], shape=tuple(x.shape),
                         no_copy=(xt.data_ptr() == x.data_ptr and
                                  yt.data_ptr() == outputs[0].data_ptr),
                         dl_device=x.__dlpack_device__())
    with torch.cuda.stream(torch_stream(torch, stream)):
        torch.mul(xt, factor, out=yt)


def test_decorator_plugin_on_cuda(torch):
    e = one_op(lambda x: trtp.op.tcuda.scale(x, factor=4.0))
    x = torch.randn(3, 4, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    y = e.create_execution_context().run({"x": x}, stream=s)["y0"]
    s.synchronize()
    assert torch.equal(y, x * 4.0)
    seen = SEEN["scale"]
    assert seen["device"] == CUDA and seen["shape"] == (3, 4) and seen["no_copy"]
    assert seen["stream"] == seen["tensor_stream"] == seen["cai_stream"] == s.cuda_stream
    assert seen["dl_device"] == (2, torch.cuda.current_device())


@trtp.register("tcuda::cupy_add1")
def cupy_add1_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::cupy_add1", device="cuda")
def cupy_add1_cuda(x: trtp.Tensor, outputs, stream) -> None:
    import cupy
    with cupy.cuda.ExternalStream(stream) if stream else cupy.cuda.Stream.null:
        xs = cupy.from_dlpack(x)         # ordered on the plugin's stream
        ys = cupy.asarray(outputs[0])    # __cuda_array_interface__ (cupy syncs on it)
        SEEN["cupy"] = (xs.data.ptr == x.data_ptr, ys.data.ptr == outputs[0].data_ptr)
        cupy.add(xs, 1, out=ys)


def test_decorator_plugin_with_cupy(cupy):
    e = one_op(trtp.op.tcuda.cupy_add1, dtype=trt.int32)
    x = cupy.arange(12, dtype=cupy.int32).reshape(3, 4)
    y = e.create_execution_context().run({"x": x})["y0"]
    assert isinstance(y, cupy.ndarray) and cupy.array_equal(y, x + 1)
    assert SEEN["cupy"] == (True, True)


@trtp.register("tcuda::nonzero")
def nonzero_desc(x: trtp.TensorDesc) -> Tuple[trtp.TensorDesc, trtp.TensorDesc]:
    k = trtp.size_tensor(x.shape_expr[0] * x.shape_expr[1] // 2,
                         x.shape_expr[0] * x.shape_expr[1])
    return trtp.from_shape_expr((k.expr(), 2), dtype=trt.int32), k


@trtp.impl("tcuda::nonzero", device="cuda")
def nonzero_cuda(x: trtp.Tensor, outputs, stream) -> None:
    import torch
    with torch.cuda.stream(torch_stream(torch, stream)):
        idx = torch.nonzero(torch.as_tensor(x, device="cuda")).to(torch.int32)
        out = torch.as_tensor(outputs[0], device="cuda")  # upper-bound rows
        out.view(-1)[:idx.numel()].copy_(idx.reshape(-1))  # nonzero may be strided
        torch.as_tensor(outputs[1], device="cuda").fill_(idx.shape[0])


def test_decorator_size_tensor_on_cuda(torch, rng):
    e = one_op(trtp.op.tcuda.nonzero, shape=(-1, -1), profile=((1, 1), (8, 8), (32, 32)))
    assert e.get_tensor_shape("y0") == (-1, 2)
    ctx = e.create_execution_context()
    for shape in [(8, 8), (32, 32), (1, 5), (3, 3)]:
        a = random_zeros(rng, shape)
        out = ctx.run({"x": torch.from_numpy(a).cuda()})
        assert out["y0"].shape == (int(np.count_nonzero(a)), 2)
        assert np.array_equal(out["y0"].cpu().numpy(), nonzero_ref(a))
        assert int(out["y1"].item()) == np.count_nonzero(a)


@trtp.register("tcuda::rows")
def rows_desc(y: trtp.TensorDesc) -> trtp.TensorDesc:
    return trtp.from_shape_expr((y.shape_expr[0],), dtype=trt.int32)


@trtp.impl("tcuda::rows", device="cuda")
def rows_cuda(y: trtp.Tensor, outputs, stream) -> None:
    import torch
    SEEN["rows_shape"] = tuple(y.shape)
    with torch.cuda.stream(torch_stream(torch, stream)):
        torch.sum(torch.as_tensor(y, device="cuda"), dim=1, dtype=torch.int32,
                  out=torch.as_tensor(outputs[0], device="cuda"))


def test_python_layer_after_a_data_dependent_layer_sees_true_dims(std_registry, rng, torch):
    # NonZero's K x 2 on the device; the Python layer after it gets K on the
    # host (requires_host_dims), not K's upper bound. Both plugins' creators
    # in one registry: the library's and the decorator plugin's.
    try:
        std_registry.register_creator(trtp.get_plugin("tcuda::rows").creator)
    except trt.AlreadyExistsError:
        pass

    def make(net):
        x = net.add_input("X", trt.float32, (-1, -1))
        p = std_registry.get_creator("NonZeroPlugin", "1", "").create_plugin("nz")
        y = net.add_plugin_v3([x], [], p).get_output(0)
        z = net.add_plugin(trtp.op.tcuda.rows(y)).get_output(0)
        z.name = "Z"
        net.mark_output(z)
    e = build(make, profile={"X": ((1, 1), (8, 8), (16, 16))}, reg=std_registry)
    ctx = e.create_execution_context()
    for shape in [(8, 8), (16, 16), (2, 3)]:
        a = random_zeros(rng, shape)
        ref = nonzero_ref(a)
        z = ctx.run({"X": torch.from_numpy(a).cuda()})["Z"]
        assert SEEN["rows_shape"] == (len(ref), 2)
        assert np.array_equal(z.cpu().numpy(), ref.sum(axis=1))


TUNED = []


@trtp.register("tcuda::tuned")
def tuned_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::tuned")
def tuned_cpu(x: trtp.Tensor, outputs, tactic) -> None:
    TUNED.append(("cpu", tactic))
    np.multiply(np.asarray(x), 2, out=np.asarray(outputs[0]))


@trtp.impl("tcuda::tuned", device="cuda")
def tuned_cuda(x: trtp.Tensor, outputs, stream, tactic) -> None:
    import torch
    TUNED.append(("cuda", tactic))
    with torch.cuda.stream(torch_stream(torch, stream)):
        y = torch.as_tensor(x, device="cuda") * 2
        if tactic == 2:
            y += 1  # a fast wrong tactic
        torch.as_tensor(outputs[0], device="cuda").copy_(y)


@trtp.autotune("tcuda::tuned")
def tuned_autotune(x: trtp.TensorDesc, outputs) -> List[trtp.AutoTuneCombination]:
    return [trtp.AutoTuneCombination("FP32, FP32", "LINEAR", [1, 2])]


def test_gpu_tactics_are_checked_against_the_cpu_impl(torch):
    TUNED.clear()
    e = one_op(trtp.op.tcuda.tuned, autotune=True)
    # The reference is candidate 0, the first listed tactic, run on the CPU.
    assert ("cpu", 1) in TUNED
    assert {("cuda", 1), ("cuda", 2)} <= set(TUNED)
    assert e.get_layer_info(0)["tactic"] in (0, 1)  # never the wrong one
    x = torch.randn(4, 4, device="cuda")
    assert torch.equal(e.create_execution_context().run({"x": x})["y0"], x * 2)


@trtp.register("tcuda::faulty")
def faulty_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::faulty", device="cuda")
def faulty_cuda(x: trtp.Tensor, outputs, stream) -> None:
    raise KeyError("no such kernel")


def test_errors_in_a_cuda_impl():
    e = one_op(trtp.op.tcuda.faulty)
    with pytest.raises(trt.PluginError) as ei:
        e.create_execution_context().run({"x": np.ones((2, 4), np.float32)})
    msg = str(ei.value)
    assert "tcuda::faulty" in msg and "faulty_cuda" in msg and "no such kernel" in msg
    assert isinstance(ei.value.__cause__, KeyError)


@trtp.register("tcuda::bf16")
def bf16_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::bf16", device="cuda")
def bf16_cuda(x: trtp.Tensor, outputs, stream) -> None:
    import torch
    # bfloat16 has no __cuda_array_interface__ typestr; DLPack carries it.
    with torch.cuda.stream(torch_stream(torch, stream)):
        torch.neg(torch.from_dlpack(x), out=torch.from_dlpack(outputs[0]))


def test_bfloat16_through_dlpack(torch):
    e = one_op(trtp.op.tcuda.bf16, dtype=trt.bfloat16)
    x = torch.randn(3, 4, device="cuda", dtype=torch.bfloat16)
    y = e.create_execution_context().run({"x": x})["y0"]
    assert y.dtype == torch.bfloat16 and torch.equal(y, -x)


@trtp.register("tcuda::other_stream")
def other_stream_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::other_stream", device="cuda")
def other_stream_cuda(x: trtp.Tensor, outputs, stream) -> None:
    import torch
    # Works on torch's default stream, not the plugin's: torch.from_dlpack
    # passes its stream, which __dlpack__ orders after the plugin's (an
    # event); the plugin then orders its stream after torch's.
    xt = torch.from_dlpack(x)
    yt = torch.from_dlpack(outputs[0])
    torch.cuda._sleep(1000000)  # the stream is busy when the plugin returns
    torch.add(xt, 7, out=yt)
    torch_stream(torch, stream).wait_stream(torch.cuda.current_stream())


def test_dlpack_orders_streams(torch):
    e = one_op(trtp.op.tcuda.other_stream)
    s = torch.cuda.Stream()
    x = torch.randn(16, 4, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    y = e.create_execution_context().run({"x": x}, stream=s)["y0"]
    s.synchronize()
    assert torch.equal(y, x + 7)


def test_engine_with_a_cuda_python_plugin_in_a_fresh_process(tmp_path, torch):
    path = tmp_path / "twice_cuda.plan"
    one_op(lambda x: trtp.op.tests.twice(x, factor=5.0)).save(str(path))
    code = ("import sys, torch, plugrt\nsys.path.insert(0, %r)\n"
            "try:\n    plugrt.load(sys.argv[1])\nexcept plugrt.NotFoundError as e:\n    print(e)\n"
            "import plugins_for_tests\n"
            "e = plugrt.load(sys.argv[1])\n"
            "print(e.device.name)\n"
            "y = e.create_execution_context().run({'x': torch.ones(2, 4, device='cuda')})['y0']\n"
            "print(y.is_cuda, float(y.sum()))" % HERE)
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       cwd=os.path.dirname(HERE))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert "tests::twice version 1" in lines[0] and "plugins_for_tests" in lines[0]
    assert lines[1] == "CUDA" and lines[2] == "True 40.0"


def test_python_plugin_on_a_cuda_engine_needs_a_cuda_impl():
    with pytest.raises(trt.UnsupportedError) as ei:
        one_op(_cpu_only_op)
    assert "device='cuda'" in str(ei.value)


@trtp.register("tcuda::cpu_only")
def cpu_only_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tcuda::cpu_only")
def cpu_only_impl(x, outputs) -> None:
    np.copyto(np.asarray(outputs[0]), np.asarray(x))


def _cpu_only_op(x):
    return trtp.op.tcuda.cpu_only(x)

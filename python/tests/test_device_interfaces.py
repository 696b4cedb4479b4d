"""The CUDA side of the package that runs without a GPU: Tensor's
__cuda_array_interface__ and DLPack (read back through the package's own
DLPack reader and numpy/torch on the CPU), stream handles, other libraries'
arrays seen as memory (fake __cuda_array_interface__ objects), stream
ordering (a fake driver records the calls), devices of Python plugins and
the errors that name them, output allocators returning objects."""

import ctypes
import gc

import numpy as np
import pytest

import plugrt as trt
import plugrt.plugin as trtp
from plugrt import _capi, _cuda
from plugrt import _dlpack as DL
from plugrt._plugin import _RUNTIME, _BUILD


class FakeDriver:
    """Stands in for libcuda: records stream_wait(consumer, producer)."""

    def __init__(self):
        self.waits = []

    def stream_wait(self, consumer, producer):
        self.waits.append((consumer, producer))

    def pointer_device(self, ptr):
        return 3


@pytest.fixture
def fake_driver():
    d = FakeDriver()
    old = _cuda._driver[0]
    _cuda._driver[0] = d
    yield d
    _cuda._driver[0] = old


class CAI:
    """An object with only __cuda_array_interface__ (as numba's arrays)."""

    def __init__(self, **iface):
        self.__cuda_array_interface__ = dict({"version": 3, "strides": None}, **iface)


# ---------------------------------------------------------------------------
# Tensor on CUDA
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,typestr", [
    (trt.float32, "<f4"), (trt.float16, "<f2"), (trt.int8, "|i1"), (trt.uint8, "|u1"),
    (trt.int32, "<i4"), (trt.int64, "<i8"), (trt.bool, "|b1")])
def test_cuda_tensor_interface(dtype, typestr):
    t = trtp.Tensor((2, 3), dtype, 0x7000_0000_0000, readonly=True, device=trt.Device.CUDA,
                    stream=0x1234)
    assert t.device == trt.Device.CUDA and t.stream == 0x1234
    cai = t.__cuda_array_interface__
    assert cai == {"shape": (2, 3), "typestr": typestr, "data": (0x7000_0000_0000, False),
                   "strides": None, "version": 3, "stream": 0x1234}
    assert t.__cuda_array_interface__ is cai  # kept while address and stream stay
    t._stream = 0  # the default stream is 1 in the interface (0 is not allowed there)
    assert t.__cuda_array_interface__["stream"] == 1
    assert not hasattr(t, "__array_interface__")
    with pytest.raises(TypeError, match="CUDA memory"):
        np.asarray(t)
    with pytest.raises(TypeError, match="CUDA memory"):
        t.numpy()
    assert t.nbytes == 6 * dtype.itemsize and "CUDA" in repr(t)


def test_host_tensor_has_no_cuda_interface():
    a = np.zeros(3, np.float32)
    t = trtp.Tensor((3,), trt.float32, a.ctypes.data)
    assert t.device == trt.Device.CPU and t.stream == 0
    assert not hasattr(t, "__cuda_array_interface__")
    assert np.asarray(t).ctypes.data == a.ctypes.data
    assert np.array(t, dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("dtype", list(trt.DataType))
def test_cuda_dlpack_capsule_reads_back(versioned, dtype, fake_driver):
    t = trtp.Tensor((4, 1, 5), dtype, 0x7000_0000_1000, device="cuda", stream=77)
    assert t.__dlpack_device__() == (DL.KDL_CUDA, 3)  # the pointer's GPU (fake driver)
    cap = t.__dlpack__(stream=77, max_version=(1, 0) if versioned else None)
    assert fake_driver.waits == []  # the consumer's stream is the plugin's
    im = DL.read_capsule(cap)
    assert (im.ptr, im.shape, im.dtype, im.device_type, im.device_id) == (
        0x7000_0000_1000, (4, 1, 5), dtype, DL.KDL_CUDA, 3)
    assert im.contiguous and not im.readonly
    assert (b"dltensor_versioned" if versioned else b"dltensor") in repr(cap).encode()


def test_dlpack_orders_the_consumers_stream_after_the_plugins(fake_driver):
    t = trtp.Tensor((8,), trt.float32, 0x7000_0000_2000, device="cuda", stream=0x55)
    t.__dlpack__(stream=0x66)
    t.__dlpack__(stream=None)  # the consumer on the legacy default stream (1)
    t.__dlpack__(stream=-1)    # the consumer asks for no ordering
    t.__dlpack__(stream=0x55)  # the same stream: nothing to do
    assert fake_driver.waits == [(0x66, 0x55), (1, 0x55)]
    t._stream = 0
    t.__dlpack__(stream=1)     # both the default stream
    t.__dlpack__(stream=2)     # per-thread default stream vs legacy
    assert fake_driver.waits[2:] == [(2, 1)]


def test_dlpack_refusals():
    t = trtp.Tensor((2,), trt.float32, 0x1000, device="cuda")
    with pytest.raises(BufferError, match="copy"):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="DLPack device"):
        t.__dlpack__(dl_device=(DL.KDL_CPU, 0))
    h = trtp.Tensor((2,), trt.float32, 0x1000)
    with pytest.raises(BufferError, match="no stream"):
        h.__dlpack__(stream=5)


def test_host_dlpack_with_numpy_and_torch():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = trtp.Tensor((3, 4), trt.float32, a.ctypes.data)
    assert t.__dlpack_device__() == (DL.KDL_CPU, 0)
    b = np.from_dlpack(t)
    assert b.ctypes.data == a.ctypes.data and np.array_equal(b, a)
    ro = trtp.Tensor((3, 4), trt.float32, a.ctypes.data, readonly=True)
    im = DL.read_capsule(ro.__dlpack__(max_version=(1, 0)))
    assert im.readonly and im.ptr == a.ctypes.data
    try:
        import torch
    except ImportError:
        return
    if tuple(int(v) for v in torch.__version__.split(".")[:2] if v.isdigit()) < (2, 1):
        return  # older torch reads no DLPack bool (kDLBool) and aborts on it
    x = torch.from_dlpack(t)
    x[2, 3] = -7
    assert a[2, 3] == -7 and x.data_ptr() == a.ctypes.data
    for dt in (trt.float16, trt.bfloat16, trt.int8, trt.int64, trt.bool):
        y = torch.from_dlpack(trtp.Tensor((3,), dt, a.ctypes.data))
        assert y.data_ptr() == a.ctypes.data and y.element_size() == dt.itemsize


def test_unconsumed_capsules_are_freed():
    # The capsule's destructor frees the block (prt_free): many exports
    # dropped unconsumed leave nothing behind (and do not crash).
    t = trtp.Tensor((16,), trt.float32, 0x1000)
    for _ in range(2000):
        t.__dlpack__()
    gc.collect()


def test_device_tensor_helper():
    d = trt.PluginTensorDesc(trt.float16, trt.TensorFormat.LINEAR, (2, 8))
    t = trt.device_tensor(0x9000, d, stream=3)
    assert (t.shape, t.dtype, t.device, t.stream, t.data_ptr) == (
        (2, 8), trt.float16, trt.Device.CUDA, 3, 0x9000)
    t = trt.device_tensor(0x9000, (5,), "int32")
    assert t.__cuda_array_interface__["typestr"] == "<i4"
    a = np.ones(4, np.float32)
    assert np.asarray(trt.device_tensor(a.ctypes.data, (4,), trt.float32, device="cpu")).sum() == 4
    with pytest.raises(TypeError, match="dtype"):
        trt.device_tensor(0x9000, (5,))


# ---------------------------------------------------------------------------
# Streams and other libraries' memory
# ---------------------------------------------------------------------------

def test_stream_handles():
    class TorchLike:
        cuda_stream = 0xAB

    class CupyLike:
        ptr = 0xCD

    class CudaPython:
        def getPtr(self):  # noqa: N802 - cuda-python's name
            return 0xEF

    class IntLike:
        def __int__(self):
            return 0x12

    sh = _cuda.stream_handle
    assert [sh(None), sh(0), sh(7), sh(np.uint64(9)), sh(ctypes.c_void_p(0x34)),
            sh(ctypes.c_void_p()), sh(TorchLike()), sh(CupyLike()), sh(CudaPython()),
            sh(IntLike())] == [0, 0, 7, 9, 0x34, 0, 0xAB, 0xCD, 0xEF, 0x12]
    s = trt.Stream("cpu")
    assert sh(s) == s.handle == int(s) != 0
    for bad, exc in ((True, TypeError), (-1, ValueError), ("s", TypeError), ({}, TypeError)):
        with pytest.raises(exc):
            sh(bad)


def test_views_of_fake_cuda_arrays(fake_driver):
    v = _cuda.view(CAI(shape=(2, 3), typestr="<f2", data=(0x5000, False), stream=9), stream=9)
    assert (v.ptr, v.shape, v.dtype, v.device, v.contiguous, v.nbytes, v.lib) == (
        0x5000, (2, 3), trt.float16, trt.Device.CUDA, True, 12, "cai")
    assert fake_driver.waits == []
    # The producer's stream differs from the reader's: the reader waits.
    _cuda.view(CAI(shape=(4,), typestr="<i8", data=(0x6000, False), stream=4), stream=0)
    assert fake_driver.waits == [(1, 4)]
    # Strides in bytes: row-major dense, or not.
    dense = CAI(shape=(2, 3), typestr="<f4", data=(0x7000, False), strides=(12, 4))
    strided = CAI(shape=(2, 3), typestr="<f4", data=(0x7000, False), strides=(4, 8))
    assert _cuda.view(dense).contiguous and not _cuda.view(strided).contiguous
    v = _cuda.view(CAI(shape=(3,), typestr="<f8", data=(0x7000, False)))
    assert v.dtype == trt.float64 and v.nbytes == 24
    v = _cuda.view(CAI(shape=(3,), typestr="<c8", data=(0x7000, False)))
    assert v.dtype is None and v.dtype_name == "<c8"
    with pytest.raises(TypeError, match="masked"):
        _cuda.view(CAI(shape=(3,), typestr="<f4", data=(1, False), mask=object()))


def test_views_of_host_arrays():
    a = np.zeros((3, 4), np.int32)
    v = _cuda.view(a)
    assert (v.ptr, v.shape, v.dtype, v.device, v.contiguous, v.lib) == (
        a.ctypes.data, (3, 4), trt.int32, trt.Device.CPU, True, "numpy")
    assert not _cuda.view(a[:, ::2]).contiguous
    v = _cuda.view([1.0, 2.0])  # anything np.asarray takes
    assert v.dtype == trt.float64
    v = _cuda.view([1j, 2.0])  # a type plugrt lacks
    assert v.dtype is None and v.dtype_name == "complex128"

    class DL_only:  # an object with DLPack only (a numpy array behind it)
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, stream=None, **kw):
            return self.arr.__dlpack__()

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    v = _cuda.view(DL_only(a))
    assert (v.ptr, v.shape, v.dtype, v.device, v.lib) == (
        a.ctypes.data, (3, 4), trt.int32, trt.Device.CPU, "dlpack")
    b = trt.DeviceBuffer(64, "cpu")
    v = _cuda.view(b)
    assert (v.ptr, v.nbytes, v.device, v.lib) == (b.ptr, 64, trt.Device.CPU, "buffer")


def test_device_buffer_on_the_cpu_device():
    b = trt.DeviceBuffer(40, "cpu")
    x = np.arange(10, dtype=np.float32)
    b.copy_from_host(x)
    assert np.array_equal(b.copy_to_host(np.empty(10, np.float32)), x)
    with pytest.raises(trt.InvalidArgumentError, match="do not fit"):
        b.copy_from_host(np.zeros(11, np.float32))
    with pytest.raises(AttributeError):
        b.__cuda_array_interface__
    b.free()
    with pytest.raises(trt.StateError):
        b.copy_from_host(x[:1])


def test_device_checks_and_info():
    trt.check_device("cpu")
    assert trt.device_available("cpu")
    info = trt.get_device_info("cpu")
    assert info["name"] == "cpu" and info["device"] == trt.Device.CPU
    if not trt.device_available("cuda"):
        with pytest.raises(trt.UnsupportedError, match="cuda"):
            trt.check_device("cuda")


# ---------------------------------------------------------------------------
# Devices of Python plugins
# ---------------------------------------------------------------------------

class Copy(trt.Plugin):
    plugin_name = "DevCopy"
    plugin_namespace = "tdev"
    seen = []

    def get_output_data_types(self, t):
        return [t[0]]

    def get_output_shapes(self, i, s, e):
        return [i[0]]

    def supports_format_combination(self, pos, io, n):
        return io[pos].desc.type == trt.float32

    def get_fields_to_serialize(self):
        return []


class CpuCopy(Copy):
    plugin_name = "DevCpuCopy"

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        ctypes.memmove(outputs[0], inputs[0], 16)


class CudaOnly(CpuCopy):
    plugin_name = "DevCudaOnly"
    devices = [trt.Device.CUDA]


class BothNoDevice(CpuCopy):
    plugin_name = "DevBoth"
    devices = ["cpu", "cuda"]


class BothWithDevice(Copy):
    plugin_name = "DevBothOk"
    devices = ("CPU", trt.Device.CUDA)

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream, device):
        Copy.seen.append(device)
        ctypes.memmove(outputs[0], inputs[0], 16)


def _creator_of(cls):
    class Creator(trt.PluginCreator):
        name, plugin_namespace, plugin_version = cls.plugin_name, cls.plugin_namespace, "1"
        field_names = []

        def create_plugin(self, name, fc, phase):
            return cls()
    trt.get_plugin_registry().register_creator(Creator())
    return cls


for _cls in (CpuCopy, CudaOnly, BothNoDevice, BothWithDevice):
    _creator_of(_cls)


def one_layer(plugin, device="cpu"):
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (4,))
    layer = net.add_plugin_v3([x], [], plugin) if not isinstance(plugin, tuple) \
        else net.add_plugin(plugin)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    cfg = b.create_builder_config()
    if device != "cpu":
        cfg.device = device
    return b.build_engine_with_config(net, cfg)


def test_class_plugin_devices():
    x = np.arange(4, dtype=np.float32)
    assert np.array_equal(one_layer(CpuCopy()).create_execution_context().run({"x": x})["y"], x)
    with pytest.raises(trt.UnsupportedError) as ei:
        one_layer(CudaOnly())
    msg = str(ei.value)
    assert "does not run on the CPU" in msg and "tdev::DevCudaOnly" in msg and "devices" in msg
    with pytest.raises(TypeError, match="`device` argument"):
        one_layer(BothNoDevice())
    Copy.seen.clear()
    assert np.array_equal(
        one_layer(BothWithDevice()).create_execution_context().run({"x": x})["y"], x)
    assert Copy.seen == [trt.Device.CPU]

    class Bad(CpuCopy):
        plugin_name = "DevBad"
        devices = ["tpu"]
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        one_layer(Bad())
    # A loaded engine recreates the plugin through its creator: the same
    # devices, and `device` still given.
    e = trt.Runtime().deserialize_cuda_engine(one_layer(BothWithDevice()).serialize())
    Copy.seen.clear()
    assert np.array_equal(e.create_execution_context().run({"x": x})["y"], x)
    assert Copy.seen == [trt.Device.CPU]


@trtp.register("tdev::gpu_only")
def gpu_only_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tdev::gpu_only", device="cuda")
def gpu_only_impl(x, outputs, stream):
    raise AssertionError("not on this machine")


@trtp.register("tdev::both")
def both_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


BOTH = []


@trtp.impl("tdev::both", device=["cpu", "cuda"])
def both_impl(x, outputs, stream):
    BOTH.append((x.device, outputs[0].device, stream))
    if x.device == trt.Device.CPU:
        np.copyto(np.asarray(outputs[0]), np.asarray(x))


@trtp.register("tdev::split")
def split_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tdev::split")
def split_cpu(x, outputs):
    np.multiply(np.asarray(x), 3, out=np.asarray(outputs[0]))


@trtp.impl("tdev::split", device="cuda")
def split_cuda(x, outputs, stream):
    raise AssertionError("not on this machine")


def test_decorator_plugin_devices():
    assert trtp.get_plugin("tdev::gpu_only").device_mask == 1 << int(trt.Device.CUDA)
    assert trtp.get_plugin("tdev::both").device_mask == 3
    assert trtp.get_plugin("tdev::split").device_mask == 3
    assert trtp.get_plugin("tdev::split").impl_fn is split_cpu
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (4,))
    net.mark_output(net.add_plugin(trtp.op.tdev.gpu_only(x)).get_output(0))
    with pytest.raises(trt.UnsupportedError) as ei:
        b.build_engine_with_config(net)
    msg = str(ei.value)
    assert "does not run on the CPU" in msg and "impl('tdev::gpu_only', device='cpu')" in msg
    xs = np.arange(4, dtype=np.float32)
    BOTH.clear()
    b = trt.Builder()
    for op, want in ((trtp.op.tdev.both, xs), (trtp.op.tdev.split, 3 * xs)):
        net = b.create_network()
        x = net.add_input("x", trt.float32, (4,))
        y = net.add_plugin(op(x)).get_output(0)
        y.name = "y"
        net.mark_output(y)
        got = b.build_engine_with_config(net).create_execution_context().run({"x": xs})["y"]
        assert np.array_equal(got, want)
    assert BOTH == [(trt.Device.CPU, trt.Device.CPU, 0)]
    with pytest.raises(ValueError, match="not 'cpu' or 'cuda'"):
        trtp.impl("tdev::both", device="gpu")(both_impl)


def test_python_plugins_need_host_dims_on_cuda_only():
    # Python sizes its work from shapes on the host: on CUDA the runtime
    # gives the true dims there (the build table's requires_host_dims).
    f = _BUILD.requires_host_dims
    assert f(0, _capi.PRT_DEVICE_CUDA) == 1 and f(0, _capi.PRT_DEVICE_CPU) == 0
    assert _RUNTIME.enqueue  # the table is complete


# ---------------------------------------------------------------------------
# Addresses and output allocators with objects
# ---------------------------------------------------------------------------

def test_set_tensor_address_checks_the_memory(fake_driver):
    e = one_layer(CpuCopy())
    ctx = e.create_execution_context()
    dev = CAI(shape=(4,), typestr="<f4", data=(0x7000, False))
    with pytest.raises(trt.InvalidArgumentError, match="CUDA memory.*lives in host memory"):
        ctx.set_tensor_address("x", dev)
    with pytest.raises(trt.InvalidArgumentError, match="C-contiguous"):
        ctx.set_tensor_address("x", np.zeros(8, np.float32)[::2])
    with pytest.raises(trt.InvalidArgumentError, match="float64"):
        ctx.set_tensor_address("x", np.zeros(4))
    x = np.arange(4, dtype=np.float32)
    y = trt.DeviceBuffer(16, "cpu")
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y)  # raw bytes: any dtype
    assert ctx.get_tensor_address("y") == y.ptr
    ctx.execute_async_v3(trt.Stream("cpu"))
    assert np.array_equal(y.copy_to_host(np.empty(4, np.float32)), x)


class ObjectAllocator(trt.IOutputAllocator):
    """Returns objects owning memory rather than addresses."""

    def __init__(self, make):
        super().__init__()
        self.make, self.shapes, self.given, self.streams = make, {}, {}, []

    def reallocate_output_async(self, name, memory, size, alignment, stream):
        self.streams.append(stream)
        self.given[name] = self.make(size)
        return self.given[name]

    def notify_shape(self, name, shape):
        self.shapes[name] = tuple(shape)


@pytest.mark.parametrize("make", [lambda n: trt.DeviceBuffer(n, "cpu"),
                                  lambda n: np.empty(n, np.uint8)])
def test_output_allocator_returning_objects(make, std_registry, rng):
    b = trt.Builder(trt.Logger(), std_registry)
    net = b.create_network()
    x = net.add_input("X", trt.float32, (8, 8))
    p = std_registry.get_creator("NonZeroPlugin", "1", "").create_plugin("nz")
    y = net.add_plugin_v3([x], [], p).get_output(0)
    y.name = "Y"
    net.mark_output(y)
    e = b.build_engine_with_config(net)
    ctx = e.create_execution_context()
    a = rng.random((8, 8)).astype(np.float32)
    a[a < 0.5] = 0
    alloc = ObjectAllocator(make)
    ctx.set_tensor_address("X", a)
    ctx.set_output_allocator("Y", alloc)
    s = trt.Stream("cpu")
    ctx.execute_async_v3(s)
    k = np.count_nonzero(a)
    assert alloc.shapes["Y"] == (k, 2) and alloc.streams == [s.handle]
    got = alloc.given["Y"]
    flat = got.copy_to_host(np.empty(k * 8, np.uint8)) if isinstance(got, trt.DeviceBuffer) \
        else got[:k * 8]
    assert np.array_equal(flat.view(np.int32).reshape(k, 2), np.stack(np.nonzero(a), axis=1))

    class Small(ObjectAllocator):
        pass
    ctx.set_output_allocator("Y", Small(lambda n: np.empty(max(0, n - 1), np.uint8)))
    with pytest.raises(trt.PluginError, match="bytes; .* needed"):
        ctx.execute_async_v3(0)
    ctx.set_output_allocator("Y", Small(lambda n: CAI(shape=(n,), typestr="|u1",
                                                      data=(0x7000, False))))
    with pytest.raises(trt.PluginError, match="CUDA memory"):
        ctx.execute_async_v3(0)


def test_run_on_the_cpu_takes_what_numpy_takes():
    e = one_layer(CpuCopy())
    got = e.create_execution_context().run({"x": memoryview(np.array([1, 2, 3, 4], np.float32))})
    assert np.array_equal(got["y"], [1, 2, 3, 4])
    with pytest.raises(trt.InvalidArgumentError, match="float64"):
        e.create_execution_context().run({"x": [1.0, 2.0, 3.0, 4.0]})


def nonzero_posing_as_cuda(reg):
    """A CPU engine of the C NonZero plugin whose I/O say they are device
    memory: what run()'s CUDA path sees, on memory this machine has."""
    b = trt.Builder(trt.Logger(), reg)
    net = b.create_network()
    x = net.add_input("X", trt.float32, (-1, -1))
    p = reg.get_creator("NonZeroPlugin", "1", "").create_plugin("nz")
    y = net.add_plugin_v3([x], [], p).get_output(0)
    y.name = "Y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    prof.set_shape("X", (1, 1), (8, 8), (16, 16))
    cfg.add_optimization_profile(prof)
    e = b.build_engine_with_config(net, cfg)
    for io in e._io:
        io.location = trt.TensorLocation.DEVICE
    return e


def test_the_cuda_run_path_on_a_cpu_engine(std_registry, rng, fake_driver):
    """run()'s CUDA path goes through the engine's device for memory, copies
    and streams, so a CPU engine whose inputs are marked device-resident
    drives it here: host arrays copied in, 'device' arrays (host memory
    behind __cuda_array_interface__ or DLPack) bound in place, data-dependent
    outputs copied back at their true shape."""
    e = nonzero_posing_as_cuda(std_registry)
    ctx = e.create_execution_context()

    class CAIOf:  # host memory posing as device memory, on stream 5
        def __init__(self, a):
            self.a = a
            self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str,
                                             "data": (a.ctypes.data, False), "version": 3,
                                             "strides": None, "stream": 5}

    class DLPackOf:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    for shape in [(8, 8), (16, 16), (3, 5), (1, 1)]:
        a = rng.random(shape).astype(np.float32)
        a[a < 0.5] = 0
        ref = np.stack(np.nonzero(a), axis=1).astype(np.int32)
        for feed in (a, a.T.copy().T, CAIOf(a), DLPackOf(a)):
            got = ctx._run_cuda({"X": feed}, None)["Y"]
            assert isinstance(got, np.ndarray) and np.array_equal(got, ref), (shape, feed)
    own = ctx._res["stream"].handle
    assert fake_driver.waits and all(w == (own, 5) for w in fake_driver.waits)
    with pytest.raises(trt.InvalidArgumentError, match="not C-contiguous"):
        strided = CAIOf(np.zeros((4, 4), np.float32))
        strided.__cuda_array_interface__["strides"] = (4, 16)
        ctx._run_cuda({"X": strided}, None)
    # The run's own device buffers grow and are reused.
    assert set(ctx._res["buffers"]) == {"X", "Y"}
    # An output that lives in host memory comes back as numpy as it is.
    e._by_name["Y"].location = trt.TensorLocation.HOST
    a = np.eye(4, dtype=np.float32)
    ctx._last_key = None
    got = ctx._run_cuda({"X": a}, None)["Y"]
    assert np.array_equal(got, [[0, 0], [1, 1], [2, 2], [3, 3]])
    ctx.close()
    assert ctx._res == {}


def test_the_cuda_run_path_with_torch_on_a_cpu_engine(std_registry, rng):
    """The same with torch tensors (CPU ones here): torch tensors come back,
    data-dependent ones at their true shape."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    e = nonzero_posing_as_cuda(std_registry)
    ctx = e.create_execution_context()
    for shape in [(8, 8), (16, 16), (3, 5)]:
        a = rng.random(shape).astype(np.float32)
        a[a < 0.5] = 0
        ref = np.stack(np.nonzero(a), axis=1).astype(np.int32)
        for feed in (torch.from_numpy(a), torch.from_numpy(a.T.copy()).t()):
            got = ctx._run_cuda({"X": feed}, None)["Y"]
            assert isinstance(got, torch.Tensor) and got.dtype == torch.int32
            assert np.array_equal(got.numpy(), ref), shape
    with pytest.raises(trt.InvalidArgumentError, match="float64"):
        ctx._run_cuda({"X": torch.zeros(4, 4, dtype=torch.float64)}, None)


@trtp.register("tdev::probe")
def probe_desc(x: trtp.TensorDesc, k: int = 1) -> trtp.TensorDesc:
    return x.like()


PROBED = []


@trtp.impl("tdev::probe")
def probe_cpu(x, k: int, outputs, tactic):
    PROBED.append(("cpu", k, tactic, x.device, outputs[0].device, x.data_ptr))


@trtp.impl("tdev::probe", device="cuda")
def probe_cuda(x, outputs, stream):
    PROBED.append(("cuda", stream, x.device, x.stream, outputs[0].stream,
                   x.__cuda_array_interface__["stream"], x.data_ptr))


def test_decorator_bridge_picks_the_impl_of_the_device():
    pdef = trtp.get_plugin("tdev::probe")
    br = trtp.DecoratorPlugin(pdef, pdef.attr_values({"k": 4}))._bridge()
    assert br.devices == 3
    br.aliases = {}
    d = trt.PluginTensorDesc(trt.float32, trt.TensorFormat.LINEAR, (2, 2))
    br.shape_change([d], [d])
    PROBED.clear()
    br.set_tactic(2)
    br.run([0x100], [0x200], 0, 1, 0x77)   # CUDA, stream 0x77
    br.run([0x101], [0x201], 0, 1, 0x78)   # the stream changes
    br.run([0x102], [0x202], 0, 0, 0)      # the CPU reference (as tuning does)
    br.run([0x103], [0x203], 0, 1, 0)      # back on CUDA, default stream
    assert PROBED == [
        ("cuda", 0x77, trt.Device.CUDA, 0x77, 0x77, 0x77, 0x100),
        ("cuda", 0x78, trt.Device.CUDA, 0x78, 0x78, 0x78, 0x101),
        ("cpu", 4, 2, trt.Device.CPU, trt.Device.CPU, 0x102),
        ("cuda", 0, trt.Device.CUDA, 0, 0, 1, 0x103)]
    assert "probe_cuda" in br.describe("enqueue")
    # A device without an impl is an error naming the way to give one.
    cpu_only = trtp.DecoratorPlugin(trtp.get_plugin("tdev::host_only"), {})._bridge()
    cpu_only.aliases = {}
    cpu_only.shape_change([d], [d])
    with pytest.raises(RuntimeError, match="no impl for CUDA.*device='cuda'"):
        cpu_only.run([0x1], [0x2], 0, 1, 0)


@trtp.register("tdev::host_only")
def host_only_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tdev::host_only")
def host_only_impl(x, outputs):
    pass


STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"


def test_the_driver_says_why_it_cannot_work(monkeypatch):
    monkeypatch.setenv("PLUGRT_LIBCUDA", "/nonexistent/libcuda.so.1")
    with pytest.raises(trt.UnsupportedError, match="cannot be loaded"):
        _cuda.Driver()
    import os
    if not os.path.exists(STUB):
        pytest.skip("no CUDA stub library at %s" % STUB)
    if trt.device_available("cuda"):
        pytest.skip("a real CUDA driver is loaded here; the stub is for machines without")
    # The toolkit's stub has every entry the package declares; it fails
    # cuInit with its own code, which the error names.
    monkeypatch.setenv("PLUGRT_LIBCUDA", STUB)
    with pytest.raises(trt.UnsupportedError, match=r"cuInit failed: .*\(34\)"):
        _cuda.Driver()


def test_device_selection_on_the_cpu():
    # The CPU is one device, index 0; asking for another names the count.
    assert trt.device_count("cpu") == 1
    assert trt.get_current_device("cpu") == 0
    trt.set_current_device(0, "cpu")
    with pytest.raises(trt.InvalidArgumentError, match="1"):
        trt.set_current_device(3, "cpu")


def test_device_selection_on_cuda():
    why = trt.device_unavailable("cuda")
    if why is not None:
        # No usable GPU: the count says why instead of answering 0.
        with pytest.raises(trt.UnsupportedError):
            trt.device_count("cuda")
        return
    n = trt.device_count("cuda")
    assert n >= 1
    cur = trt.get_current_device("cuda")
    assert 0 <= cur < n
    trt.set_current_device(cur, "cuda")
    assert trt.get_current_device("cuda") == cur
    with pytest.raises(trt.InvalidArgumentError, match=str(n)):
        trt.set_current_device(n, "cuda")

"""CUDA on the Python side: stream handles, device memory, other libraries'
arrays seen as memory (torch, cupy, numpy, __cuda_array_interface__,
DLPack), and the few CUDA driver calls the package makes itself.

Nothing here imports torch or cupy: an object is recognized as theirs only
when its module is already loaded. The CUDA driver (libcuda.so.1, through
ctypes) is loaded on first use only, by a DLPack export that must order two
streams or name its device; libplugrt does the rest (memory, copies,
streams) through its public device API.
"""

import ctypes
import os
import sys
import threading
import weakref
from ctypes import c_int32, byref, c_int, c_uint, c_uint64, c_void_p
from typing import Any, List, Optional

import numpy as np

from . import _capi as C
from . import _dlpack as DL
from . import _errors as E
from ._types import DataType, Device, DeviceLike, nptype, to_device, to_dtype

# ---------------------------------------------------------------------------
# Streams
# ---------------------------------------------------------------------------


def stream_handle(stream) -> int:
    """A cudaStream_t as an int: from an int (0 or None: the default stream),
    a torch.cuda.Stream or ExternalStream, a cupy Stream, a cuda-python
    CUstream / cudaStream_t, a ctypes c_void_p, or anything int() takes."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("a stream is a handle, not a bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError("a stream handle is not negative, got %d" % stream)
        return stream
    if isinstance(stream, c_void_p):
        return stream.value or 0
    for attr in ("cuda_stream", "ptr"):  # torch, cupy
        v = getattr(stream, attr, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    get = getattr(stream, "getPtr", None)  # cuda-python
    if callable(get):
        return int(get())
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise TypeError("not a CUDA stream: %r (give a cudaStream_t as an int, a "
                        "torch.cuda.Stream, a cupy Stream or a cuda-python CUstream)"
                        % (stream,)) from None


def interface_stream(stream: int) -> int:
    """The stream as __cuda_array_interface__ and DLPack spell it: the
    legacy default stream is 1 there (0 is not allowed)."""
    return stream or 1


# ---------------------------------------------------------------------------
# The CUDA driver, for what libplugrt's public API does not offer
# ---------------------------------------------------------------------------

_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
_CU_EVENT_DISABLE_TIMING = 2


class Driver:
    """libcuda.so.1 through ctypes (PLUGRT_LIBCUDA names another file)."""

    def __init__(self):
        name = os.environ.get("PLUGRT_LIBCUDA") or "libcuda.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            raise E.UnsupportedError("the CUDA driver library %s cannot be loaded: %s"
                                     % (name, exc)) from None
        self.name = name

        def f(fname, *argtypes):
            fn = getattr(lib, fname)
            fn.restype = c_int
            fn.argtypes = list(argtypes)
            return fn
        self.cuGetErrorName = f("cuGetErrorName", c_int, ctypes.POINTER(ctypes.c_char_p))
        self.cuInit = f("cuInit", c_uint)
        self.cuCtxGetCurrent = f("cuCtxGetCurrent", ctypes.POINTER(c_void_p))
        self.cuCtxSetCurrent = f("cuCtxSetCurrent", c_void_p)
        self.cuDeviceGet = f("cuDeviceGet", ctypes.POINTER(c_int), c_int)
        self.cuDevicePrimaryCtxRetain = f("cuDevicePrimaryCtxRetain",
                                          ctypes.POINTER(c_void_p), c_int)
        self.cuEventCreate = f("cuEventCreate", ctypes.POINTER(c_void_p), c_uint)
        self.cuEventRecord = f("cuEventRecord", c_void_p, c_void_p)
        self.cuStreamWaitEvent = f("cuStreamWaitEvent", c_void_p, c_void_p, c_uint)
        self.cuPointerGetAttribute = f("cuPointerGetAttribute", c_void_p, c_int, c_uint64)
        self._lock = threading.Lock()
        self._event = None
        self.check(self.cuInit(0), "cuInit")

    def check(self, r, what):
        if r:
            s = ctypes.c_char_p()
            name = s.value.decode() if not self.cuGetErrorName(r, byref(s)) and s.value else ""
            raise E.UnsupportedError("CUDA driver (%s): %s failed: %s (%d)" % (
                self.name, what, name or "error", r))

    def ensure_context(self):
        """The thread's current context, or device 0's primary context (the
        one the CUDA runtime, libplugrt's and torch's, uses)."""
        ctx = c_void_p()
        self.check(self.cuCtxGetCurrent(byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            dev = c_int()
            self.check(self.cuDeviceGet(byref(dev), 0), "cuDeviceGet")
            self.check(self.cuDevicePrimaryCtxRetain(byref(ctx), dev.value),
                       "cuDevicePrimaryCtxRetain")
            self.check(self.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    def pointer_device(self, ptr: int) -> int:
        v = c_int()
        self.check(self.cuPointerGetAttribute(byref(v), _CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                              c_uint64(ptr)), "cuPointerGetAttribute")
        return v.value

    def stream_wait(self, consumer: int, producer: int) -> None:
        """Work queued on `consumer` from now on waits for what is queued on
        `producer` so far (an event; the host does not wait)."""
        with self._lock:
            self.ensure_context()
            if self._event is None:
                ev = c_void_p()
                self.check(self.cuEventCreate(byref(ev), _CU_EVENT_DISABLE_TIMING),
                           "cuEventCreate")
                self._event = ev
            self.check(self.cuEventRecord(self._event, c_void_p(producer or None)),
                       "cuEventRecord")
            self.check(self.cuStreamWaitEvent(c_void_p(consumer or None), self._event, 0),
                       "cuStreamWaitEvent")


_driver: List[Optional["Driver"]] = [None]
_driver_lock = threading.Lock()


def driver() -> Driver:
    with _driver_lock:
        d = _driver[0]
        if d is None:
            d = _driver[0] = Driver()
        return d


def order_streams(consumer: int, producer: int) -> None:
    """Makes `consumer` wait for `producer` unless they are the same stream
    (both as __cuda_array_interface__ spells them)."""
    if consumer != producer and consumer != -1:
        driver().stream_wait(consumer, producer)


def pointer_device(ptr: int) -> int:
    """The GPU a device pointer belongs to (0 when it cannot be told: no
    pointer, or no driver)."""
    if not ptr:
        return 0
    try:
        return driver().pointer_device(ptr)
    except E.Error:
        return 0


# ---------------------------------------------------------------------------
# Devices and device memory
# ---------------------------------------------------------------------------


def check_device(device: DeviceLike = "cuda") -> None:
    """Returns when this build and machine can run engines on `device`;
    else raises UnsupportedError saying why (no CUDA in this build, no
    driver, no GPU)."""
    E.call(C.fn.device_check, int(to_device(device)))


def device_unavailable(device: DeviceLike = "cuda") -> Optional[str]:
    """None when engines can run on `device` here; else why not (a str)."""
    try:
        check_device(device)
        return None
    except E.Error as e:
        return str(e)


def device_available(device: DeviceLike = "cuda") -> bool:
    return device_unavailable(device) is None


def get_device_info(device: DeviceLike = "cuda") -> dict:
    """name, compute capability (cc_major, cc_minor), multiprocessors and
    memory_bytes of the device engines run on."""
    info = C.struct_of(C.prt_device_info)
    E.call(C.fn.device_get_info, int(to_device(device)), byref(info))
    return {"device": Device(info.device), "name": info.name.decode("utf-8", "replace"),
            "cc_major": info.cc_major, "cc_minor": info.cc_minor,
            "multiprocessors": info.multiprocessors, "memory_bytes": info.memory_bytes}


def device_count(device: DeviceLike = "cuda") -> int:
    """How many devices of this kind engines can use here (the CPU is one);
    UnsupportedError saying why where the kind is not usable."""
    n = c_int32()
    E.call(C.fn.device_count, int(to_device(device)), byref(n))
    return n.value


def get_current_device(device: DeviceLike = "cuda") -> int:
    """The calling thread's current device of this kind (CUDA: the CUDA
    runtime's current device): engines built or loaded and contexts made on
    this thread use it."""
    n = c_int32()
    E.call(C.fn.device_get_current, int(to_device(device)), byref(n))
    return n.value


def set_current_device(index: int, device: DeviceLike = "cuda") -> None:
    """Makes GPU `index` current on the calling thread (CUDA: cudaSetDevice),
    for the engines and contexts made after it; an engine's memory stays on
    the device it was made on, so load an engine once per GPU to run it on
    several. InvalidArgumentError names the count when out of range."""
    E.call(C.fn.device_set_current, int(to_device(device)), int(index))


H2D, D2H, D2D = 0, 1, 2


def memcpy(dst, src, nbytes, kind, stream=0, device=Device.CUDA):
    if nbytes:
        E.call(C.fn.device_memcpy, int(device), dst, src, nbytes, kind, stream or None)


def synchronize(stream=0, device=Device.CUDA):
    E.call(C.fn.stream_synchronize, int(device), stream or None)


class Stream:
    """A stream of libplugrt's (a cudaStream_t on CUDA, a token on the CPU):
    give it to execute_async_v3 or run(stream=...); int(stream) is the
    handle; synchronize() waits for its work; destroyed by destroy() or when
    collected. For programs that have neither torch nor cupy."""

    def __init__(self, device: DeviceLike = Device.CUDA):
        self.device = to_device(device)
        out = c_void_p()
        E.call(C.fn.stream_create, int(self.device), byref(out))
        self.handle = out.value or 0
        self._finalizer = weakref.finalize(self, C.fn.stream_destroy, int(self.device),
                                           out.value)

    def __int__(self):
        return self.handle

    def synchronize(self) -> None:
        if not self._finalizer.alive:
            raise E.StateError("the stream was destroyed")
        synchronize(self.handle, self.device)

    def destroy(self) -> None:
        self._finalizer()
        self.handle = 0

    def __repr__(self):
        return "<plugrt.Stream 0x%x on %s>" % (self.handle, self.device.name)


class DeviceBuffer:
    """`nbytes` of device memory from libplugrt (cudaMalloc'd on CUDA):
    `.ptr` and `.nbytes`, freed by free() or when collected. Its
    __cuda_array_interface__ is a 1-D uint8 view (cupy.asarray(buf),
    torch.as_tensor(buf, device="cuda")). For output allocators, and for
    programs that have neither torch nor cupy."""

    def __init__(self, nbytes: int, device: DeviceLike = Device.CUDA):
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError("a buffer of %d bytes" % nbytes)
        self.device = to_device(device)
        out = c_void_p()
        E.call(C.fn.device_malloc, int(self.device), max(1, nbytes), byref(out))
        self.ptr = out.value
        self.nbytes = nbytes
        self._finalizer = weakref.finalize(self, C.fn.device_free, int(self.device), self.ptr)

    def free(self) -> None:
        self._finalizer()
        self.ptr = 0

    def _need(self, n):
        if not self._finalizer.alive:
            raise E.StateError("the device buffer was freed")
        if n > self.nbytes:
            raise E.InvalidArgumentError("%d bytes do not fit a device buffer of %d"
                                         % (n, self.nbytes))

    def copy_from_host(self, array: Any, stream: Any = 0) -> None:
        """Queues a copy of a host array into the buffer (from its start)."""
        a = np.ascontiguousarray(array)
        self._need(a.nbytes)
        memcpy(self.ptr, a.ctypes.data, a.nbytes, H2D, stream_handle(stream), self.device)

    def copy_to_host(self, array: np.ndarray, stream: Any = 0) -> np.ndarray:
        """Copies the buffer's first array.nbytes bytes into `array` (C-
        contiguous) and waits for the copy."""
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous \
                or not array.flags.writeable:
            raise E.InvalidArgumentError("copy_to_host needs a writable C-contiguous numpy "
                                         "array")
        self._need(array.nbytes)
        s = stream_handle(stream)
        memcpy(array.ctypes.data, self.ptr, array.nbytes, D2H, s, self.device)
        synchronize(s, self.device)
        return array

    @property
    def __cuda_array_interface__(self):
        if self.device != Device.CUDA:
            raise AttributeError("a CPU buffer has no __cuda_array_interface__")
        return {"shape": (self.nbytes,), "typestr": "|u1", "data": (self.ptr, False),
                "strides": None, "version": 3, "stream": None}

    def __repr__(self):
        return "<plugrt.DeviceBuffer %d bytes at 0x%x on %s>" % (
            self.nbytes, self.ptr or 0, self.device.name)


# ---------------------------------------------------------------------------
# Other libraries' arrays as memory
# ---------------------------------------------------------------------------

#: torch dtype names -> DataType
TORCH_TYPES = {"float32": DataType.FLOAT, "float16": DataType.HALF, "bfloat16": DataType.BF16,
               "int8": DataType.INT8, "uint8": DataType.UINT8, "int32": DataType.INT32,
               "int64": DataType.INT64, "bool": DataType.BOOL, "float64": DataType.DOUBLE,
               "int16": DataType.INT16, "uint16": DataType.UINT16, "uint32": DataType.UINT32,
               "uint64": DataType.UINT64}
TORCH_NAMES = {v: k for k, v in TORCH_TYPES.items()}

_TYPESTRS = {"f4": DataType.FLOAT, "f2": DataType.HALF, "i1": DataType.INT8,
             "u1": DataType.UINT8, "i4": DataType.INT32, "i8": DataType.INT64,
             "b1": DataType.BOOL, "f8": DataType.DOUBLE, "i2": DataType.INT16,
             "u2": DataType.UINT16, "u4": DataType.UINT32, "u8": DataType.UINT64}


def library_of(x):
    """"torch" for a torch.Tensor, "cupy" for a cupy.ndarray, else None."""
    m = type(x).__module__
    if m.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            return "torch"
    elif m.startswith("cupy"):
        cupy = sys.modules.get("cupy")
        if cupy is not None and isinstance(x, cupy.ndarray):
            return "cupy"
    return None


class View:
    """An array of some library seen as memory: ptr, shape, dtype (a
    DataType, or None with dtype_name), device, contiguous (row-major,
    dense), nbytes, `keep` (what keeps the memory alive) and lib ("torch",
    "cupy", "numpy", "cai", "dlpack", "buffer")."""
    __slots__ = ("ptr", "shape", "dtype", "dtype_name", "device", "contiguous", "nbytes",
                 "keep", "lib")

    def __init__(self, ptr, shape, dtype, dtype_name, device, contiguous, nbytes, keep, lib):
        self.ptr, self.shape, self.dtype, self.dtype_name = ptr, tuple(shape), dtype, dtype_name
        self.device, self.contiguous, self.nbytes = device, contiguous, nbytes
        self.keep, self.lib = keep, lib


def _np_type(dt):
    try:
        return to_dtype(np.dtype(dt)), str(np.dtype(dt))
    except TypeError:
        return None, str(dt)


def _dense(shape, strides, itemsize):
    if strides is None or 0 in shape:
        return True
    acc = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != acc:
            return False
        acc *= d
    return True


def _from_cai(obj, iface, stream):
    if not isinstance(iface, dict) or "data" not in iface or "shape" not in iface:
        raise TypeError("__cuda_array_interface__ of %s is not a dict with data and shape"
                        % type(obj).__name__)
    if iface.get("mask") is not None:
        raise TypeError("masked __cuda_array_interface__ arrays are not supported")
    ts = str(iface.get("typestr", ""))
    dt = _TYPESTRS.get(ts[1:]) if len(ts) == 3 and ts[0] in "<|=" else None
    shape = tuple(int(v) for v in iface["shape"])
    ptr = int(iface["data"][0] or 0)
    itemsize = int(ts[2:]) if ts[2:].isdigit() else 1
    contiguous = _dense(shape, iface.get("strides"), itemsize)
    their = iface.get("stream")
    if their is not None and stream is not None and ptr:
        order_streams(interface_stream(stream), int(their))
    n = itemsize
    for d in shape:
        n *= d
    return View(ptr, shape, dt, ts, Device.CUDA, contiguous, n, obj, "cai")


def _from_dlpack(obj, stream):
    dev = obj.__dlpack_device__()
    dev_type = int(dev[0])
    if dev_type in (DL.KDL_CUDA, DL.KDL_CUDA_MANAGED):
        cap = obj.__dlpack__(stream=interface_stream(stream or 0))
        device = Device.CUDA
    elif dev_type in (DL.KDL_CPU, DL.KDL_CUDA_HOST):
        cap = obj.__dlpack__()
        device = Device.CPU
    else:
        raise TypeError("%s is on DLPack device type %d; plugrt reads CPU and CUDA memory"
                        % (type(obj).__name__, dev_type))
    im = DL.read_capsule(cap)
    return View(im.ptr, im.shape, im.dtype, im.dtype.name.lower(), device, im.contiguous,
                im.nbytes, (obj, cap), "dlpack")


def view(obj, stream=None) -> View:
    """The memory of a torch tensor, cupy array, numpy array, DeviceBuffer,
    plugrt Tensor, or any object with __cuda_array_interface__ or
    __dlpack__. `stream`: the stream that will read it (device arrays that
    say theirs are ordered before it)."""
    lib = library_of(obj)
    if lib == "torch":
        t = obj.detach() if obj.requires_grad else obj
        if t.is_cuda:
            device = Device.CUDA
        elif t.device.type == "cpu":
            device = Device.CPU
        else:
            raise TypeError("a torch tensor on %s: plugrt reads CPU and CUDA memory" % t.device)
        name = str(t.dtype).replace("torch.", "")
        return View(t.data_ptr(), tuple(t.shape), TORCH_TYPES.get(name), name, device,
                    t.is_contiguous(), t.numel() * t.element_size(), t, "torch")
    if lib == "cupy":
        dt, name = _np_type(obj.dtype)
        return View(obj.data.ptr, obj.shape, dt, name, Device.CUDA, obj.flags.c_contiguous,
                    obj.nbytes, obj, "cupy")
    if isinstance(obj, np.ndarray):
        dt, name = _np_type(obj.dtype)
        return View(obj.ctypes.data, obj.shape, dt, name, Device.CPU, obj.flags.c_contiguous,
                    obj.nbytes, obj, "numpy")
    if isinstance(obj, DeviceBuffer):
        return View(obj.ptr, (obj.nbytes,), DataType.UINT8, "uint8", obj.device, True,
                    obj.nbytes, obj, "buffer")
    try:
        iface = obj.__cuda_array_interface__
    except AttributeError:
        iface = None
    if iface is not None:
        return _from_cai(obj, iface, stream)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj, stream)
    a = np.asarray(obj)
    dt, name = _np_type(a.dtype)
    return View(a.ctypes.data, a.shape, dt, name, Device.CPU, a.flags.c_contiguous, a.nbytes,
                a, "numpy")


def torch_dtype(dtype):
    torch = sys.modules["torch"]
    return getattr(torch, TORCH_NAMES[DataType(dtype)])


def host_dtype(dtype):
    """numpy type of a DataType (raw uint16 for bfloat16)."""
    try:
        return nptype(dtype)
    except TypeError:
        return np.uint16


__all__ = ["stream_handle", "interface_stream", "check_device", "device_available",
           "device_unavailable",
           "get_device_info", "driver", "order_streams", "pointer_device",
           "Stream", "DeviceBuffer", "view", "View", "library_of", "memcpy", "synchronize",
           "TORCH_TYPES", "torch_dtype", "host_dtype"]

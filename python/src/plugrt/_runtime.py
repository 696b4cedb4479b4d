"""Engines, execution contexts, output allocators and the runtime."""

import ctypes
import os
import re
import sys
import threading
import weakref
from ctypes import addressof, byref, c_size_t, c_void_p, sizeof
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _capi as C
from . import _cuda
from . import _errors as E
from ._lifetime import Closable
from ._network import HostMemory
from ._plugin import MODULE_FIELD, CREATORS, CreatorBridge, IPluginCreatorV3One
from ._registry import Registry, _WithRegistry, get_plugin_registry
from ._types import (DataType, Device, Dims, TensorFormat, TensorIOMode, TensorLocation,
                     nptype, read_fields, volume)


class _IO:
    __slots__ = ("index", "name", "bname", "mode", "dtype", "format", "dims", "location",
                 "dd_mask", "is_size_tensor", "is_shape_input", "np")

    def __init__(self, index, info):
        self.index = index
        self.name = C.s(info.name)
        self.bname = info.name
        self.mode = TensorIOMode.INPUT if info.is_input else TensorIOMode.OUTPUT
        self.dtype = DataType(info.dtype)
        self.format = TensorFormat(info.format)
        self.dims = Dims(info.dims.totuple())
        self.location = TensorLocation(info.location)
        self.dd_mask = int(info.data_dependent_mask)
        self.is_size_tensor = bool(info.is_size_tensor)
        self.is_shape_input = bool(info.is_shape_input)
        try:
            self.np = np.dtype(nptype(self.dtype))
        except TypeError:
            self.np = np.dtype(np.uint16)  # bfloat16: raw 2-byte values


def _destroy_engine(h, keep):
    C.fn.engine_destroy(h)


class ICudaEngine(Closable):
    """A built or loaded engine, for any device (the name is TensorRT's).
    Immutable and shareable by threads; contexts run it."""
    _what = "engine"

    def __init__(self, handle: int, registry: Registry):
        self._h = handle
        self.registry = registry
        self._contexts: "weakref.WeakSet[IExecutionContext]" = weakref.WeakSet()
        self._finalizer = weakref.finalize(self, _destroy_engine, handle, registry)
        n = C.fn.engine_io_count(handle)
        self._io = []
        for i in range(n):
            info = C.struct_of(C.prt_io_info)
            E.call(C.fn.engine_get_io, handle, i, byref(info))
            self._io.append(_IO(i, info))
        self._by_name = {io.name: io for io in self._io}

    def close(self) -> None:
        """Destroys the engine, and first every context still open on it
        (`with` does at the block's end)."""
        for c in list(self._contexts):
            c.close()
        self._finalizer()

    def _get(self, name) -> _IO:
        io = self._by_name.get(name)
        if io is None:
            raise E.NotFoundError("the engine has no input or output named %r (it has %s)"
                                  % (name, ", ".join(repr(i.name) for i in self._io)))
        return io

    # -- I/O ----------------------------------------------------------------
    @property
    def num_io_tensors(self) -> int:
        return len(self._io)

    def get_tensor_name(self, index: int) -> str:
        """Inputs first, in network order, then outputs in marking order."""
        return self._io[index].name

    def get_tensor_mode(self, name: str) -> TensorIOMode:
        io = self._by_name.get(name)
        return io.mode if io is not None else TensorIOMode.NONE

    def get_tensor_dtype(self, name: str) -> DataType:
        return self._get(name).dtype

    def get_tensor_shape(self, name: str) -> Dims:
        """Dims, -1 where dynamic or data-dependent."""
        return self._get(name).dims

    def get_tensor_format(self, name: str) -> TensorFormat:
        return self._get(name).format

    def get_tensor_location(self, name: str) -> TensorLocation:
        return self._get(name).location

    def is_shape_inference_io(self, name: str) -> bool:
        """True for a shape input (its values are read from host memory)."""
        return self._get(name).is_shape_input

    def is_data_dependent(self, name: str) -> bool:
        """True for an output whose dims depend on data (known after a run)."""
        return bool(self._get(name).dd_mask)

    @property
    def io_tensors(self) -> List[str]:
        return [io.name for io in self._io]

    # -- the rest -----------------------------------------------------------
    @property
    def num_layers(self) -> int:
        return C.fn.engine_layer_count(self.handle)

    @property
    def num_optimization_profiles(self) -> int:
        return C.fn.engine_profile_count(self.handle)

    @property
    def device_memory_size(self) -> int:
        return int(C.fn.engine_context_memory_size(self.handle))

    @property
    def device(self) -> Device:
        return Device(C.fn.engine_device(self.handle))

    def get_layer_info(self, index: int) -> dict:
        """What `plugrt inspect` shows of a layer: name, plugin key, library,
        tactic, workspace, its serialized fields, whether runs skip it
        (nothing reads its outputs), and whether its plugin lets a graph
        capture it (capture_safe)."""
        li = C.struct_of(C.prt_layer_info)
        E.call(C.fn.engine_get_layer, self.handle, int(index), byref(li))
        fc = C.prt_field_collection(li.nb_fields, li.fields)
        return {"name": C.s(li.name), "plugin_namespace": C.s(li.plugin_namespace),
                "plugin_name": C.s(li.plugin_name), "plugin_version": C.s(li.plugin_version),
                "library": C.s(li.library), "tactic": li.tactic, "workspace": li.workspace,
                "fields": read_fields(addressof(fc)), "skipped": bool(li.skipped),
                "capture_safe": bool(li.capture_safe)}

    def serialize(self) -> HostMemory:
        ptr, size = c_void_p(), c_size_t()
        E.call(C.fn.engine_serialize, self.handle, byref(ptr), byref(size))
        try:
            return HostMemory(ctypes.string_at(ptr, size.value))
        finally:
            C.fn.free(ptr)

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the engine file (the bytes serialize() gives)."""
        data = self.serialize()
        tmp = os.fspath(path) + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def create_execution_context(self, memory_limit: int = 0, threads: int = 0,
                                 allow_embedded_kernels: bool = False
                                 ) -> "IExecutionContext":
        """A context: per-thread state for runs (one per thread). `threads`:
        the intra-op threads one run may use (0: the CPUs available; 1:
        none). `allow_embedded_kernels`: run the engine's kernel layers, GPU
        code that came with the engine file (only for files you trust)."""
        return IExecutionContext(self, memory_limit, threads, allow_embedded_kernels)

    def _describe(self) -> str:
        return "on %s: %s" % (self.device.name.lower(), ", ".join(
            "%s %s %s %s" % (io.mode.name.lower(), io.name, io.dtype.name, tuple(io.dims))
            for io in self._io))


# ---------------------------------------------------------------------------
# Output allocators
# ---------------------------------------------------------------------------


class IOutputAllocator:
    """TensorRT's IOutputAllocator: after a run, for an output bound to it
    (IExecutionContext.set_output_allocator) and with no address set,
    reallocate_output(tensor_name, memory, size, alignment) returns memory of
    at least `size` bytes, the result is written there, and
    notify_shape(tensor_name, shape) tells its final shape.

    The memory is the engine's device's: host memory for CPU engines, device
    memory for CUDA ones. Return an int address, or an object that owns the
    memory (kept alive until the allocator's next answer for that output):
    a numpy array on the CPU; a torch CUDA tensor, a cupy array, a
    plugrt.DeviceBuffer or anything with __cuda_array_interface__ on CUDA.
    reallocate_output_async, if defined instead, also gets the stream of
    the run (an int)."""

    def __init__(self):
        pass

    def reallocate_output(self, tensor_name: str, memory: int, size: int,
                          alignment: int) -> Any:
        raise NotImplementedError

    def reallocate_output_async(self, tensor_name: str, memory: int, size: int, alignment: int,
                                stream: int) -> Any:
        return self.reallocate_output(tensor_name, memory, size, alignment)

    def notify_shape(self, tensor_name: str, shape: Dims) -> None:
        pass


_ALLOCS: Dict[int, "_AllocBridge"] = {}  # key -> _AllocBridge
_alloc_ids = iter(range(1, 1 << 62))
_alloc_lock = threading.Lock()


class _AllocBridge:
    def __init__(self, allocator):
        self.allocator = allocator
        with _alloc_lock:
            self.key = next(_alloc_ids)
        self.struct = C.prt_output_allocator(sizeof(C.prt_output_allocator),
                                             C.PRT_PLUGIN_ABI_VERSION, self.key,
                                             _REALLOC, _NOTIFY)
        self.keep = {}
        self.stream = 0
        self.device = Device.CPU
        _ALLOCS[self.key] = self

    def release(self):
        _ALLOCS.pop(self.key, None)


def _realloc_py(user, name, current, size, alignment):
    br = _ALLOCS.get(user)
    try:
        n = C.s(name)
        a = br.allocator
        r = a.reallocate_output_async(n, current or 0, size, alignment, br.stream) \
            if type(a).reallocate_output_async is not IOutputAllocator.reallocate_output_async \
            else a.reallocate_output(n, current or 0, size, alignment)
        if r is None or isinstance(r, (int, np.integer)):
            return int(r) or None
        if isinstance(r, c_void_p):
            return r.value
        v = _cuda.view(r)
        if v.device != br.device:
            raise ValueError("returned %s memory (%s); this engine's outputs live in %s memory"
                             % (v.device.name, type(r).__name__, br.device.name))
        if v.nbytes < size:
            raise ValueError("the %s has %d bytes; %d needed" % (type(r).__name__, v.nbytes,
                                                                 size))
        if not v.contiguous:
            raise ValueError("the %s is not contiguous" % type(r).__name__)
        br.keep[n] = v.keep
        return v.ptr or None
    except BaseException as exc:  # noqa: BLE001
        E.report(exc, "Python output allocator %s.reallocate_output(%r) raised %s: %s" % (
            type(br.allocator).__qualname__ if br else "?", C.s(name),
            type(exc).__name__, exc), C.PRT_ERR_PLUGIN)
        return None


def _notify_py(user, name, dims):
    br = _ALLOCS.get(user)
    try:
        br.allocator.notify_shape(C.s(name), Dims(dims.contents.totuple()))
    except BaseException as exc:  # noqa: BLE001
        E.report(exc, "Python output allocator %s.notify_shape(%r) raised %s: %s" % (
            type(br.allocator).__qualname__ if br else "?", C.s(name),
            type(exc).__name__, exc))


_REALLOC = C.REALLOCATE_FN(_realloc_py)
_NOTIFY = C.NOTIFY_SHAPE_FN(_notify_py)


# ---------------------------------------------------------------------------
# Contexts
# ---------------------------------------------------------------------------

def _destroy_context(h, engine, allocs, res):
    C.fn.context_destroy(h)
    for a in allocs.values():
        a.release()
    for b in res.pop("buffers", {}).values():
        b.free()
    st = res.pop("stream", None)
    if st is not None:
        st.destroy()


def _busy():
    return E.StateError("this context is running on another thread; use one context per "
                        "thread")


class IExecutionContext(Closable):
    """Runs an engine: per-thread state (plugin clones, scratch memory,
    shapes, addresses). `run` is the short path; set_input_shape,
    set_tensor_address and execute_async_v3 TensorRT's."""
    _what = "execution context"

    def __init__(self, engine: ICudaEngine, memory_limit: int = 0, threads: int = 0,
                 allow_embedded_kernels: bool = False):
        h = c_void_p()
        if memory_limit or threads or allow_embedded_kernels:
            opts = C.struct_of(C.prt_context_options)
            opts.memory_limit = int(memory_limit)
            opts.threads = int(threads)
            # GPU code that came with the engine file runs only when asked.
            opts.allow_embedded_kernels = 1 if allow_embedded_kernels else 0
            E.call(C.fn.context_create_with_options, engine.handle, byref(opts), byref(h))
        else:
            E.call(C.fn.context_create, engine.handle, byref(h))
        self._h = h.value
        self.engine = engine
        self._allocs: Dict[str, Any] = {}
        self._bound: Dict[str, Any] = {}
        self._lock = threading.Lock()
        self._profile = 0
        self._last_key = None
        self._last_out = None
        self._stream = 0
        # run()'s own device resources on CUDA: a stream and buffers by name.
        self._res: Dict[str, Any] = {"buffers": {}}
        self._finalizer = weakref.finalize(self, _destroy_context, self._h, engine,
                                           self._allocs, self._res)
        engine._contexts.add(self)

    def _describe(self) -> str:
        shapes = []
        for io in self.engine._io:
            if io.mode == TensorIOMode.INPUT:
                try:
                    shapes.append("%s %s" % (io.name, tuple(self.get_tensor_shape(io.name))))
                except E.Error:
                    shapes.append("%s (unset)" % io.name)
        return "on %s, profile %d%s" % (self.engine.device.name.lower(), self._profile,
                                       ": " + ", ".join(shapes) if shapes else "")

    # -- TensorRT's calls ---------------------------------------------------
    def set_optimization_profile_async(self, profile_index: int, stream_handle: Any = 0) -> bool:
        E.call(C.fn.context_set_profile, self.handle, int(profile_index))
        self._profile = int(profile_index)
        self._last_key = None
        return True

    @property
    def active_optimization_profile(self) -> int:
        return self._profile

    def set_input_shape(self, name: str, shape: Sequence[int]) -> bool:
        """ShapeError naming the input, the shape and the profile's bounds if
        it is outside them."""
        E.call(C.fn.context_set_input_shape, self.handle, C.b(name),
               byref(C.prt_dims.of(shape)))
        self._last_key = None
        return True

    def get_tensor_shape(self, name: str) -> Dims:
        """Before a run, data-dependent dims hold their upper bound; after
        one, their true values (on CUDA this waits for the run)."""
        d = C.prt_dims()
        E.call(C.fn.context_get_tensor_shape, self.handle, C.b(name), byref(d))
        return Dims(d.totuple())

    def set_tensor_address(self, name: str, memory: Any) -> bool:
        """An address (int), or an object owning the memory, kept alive while
        bound: a numpy array (host memory: CPU engines, and shape inputs),
        a torch tensor, a cupy array, a plugrt.DeviceBuffer, or anything with
        __cuda_array_interface__ or DLPack (device memory: CUDA engines). The
        object must be C-contiguous and on the device the tensor lives on."""
        if memory is None or isinstance(memory, (int, np.integer)):
            addr, keep = (int(memory) if memory else None), None
        elif isinstance(memory, c_void_p):
            addr, keep = memory.value, None
        else:
            addr, keep = self._memory_of(name, memory)
        E.call(C.fn.context_set_tensor_address, self.handle, C.b(name), addr)
        self._bound[name] = (addr or 0, keep)
        return True

    def _memory_of(self, name, memory):
        io = self.engine._by_name.get(name)
        v = _cuda.view(memory, self._stream)
        where = v.device if io is None else Device.CPU \
            if io.location == TensorLocation.HOST else self.engine.device
        if v.device != where:
            raise E.InvalidArgumentError(
                "%s: a %s in %s memory, but this engine's %r lives in %s memory%s" % (
                    name, type(memory).__name__, _MEM[v.device], name, _MEM[where],
                    "" if where == Device.CPU else ": give a device pointer, a torch or "
                    "cupy CUDA tensor, or a plugrt.DeviceBuffer"))
        if not v.contiguous:
            raise E.InvalidArgumentError("%s: the %s must be C-contiguous" % (
                name, type(memory).__name__))
        if io is not None and v.lib != "buffer" and v.dtype != io.dtype and not (
                io.dtype == DataType.BF16 and str(v.dtype_name) in _RAW_BF16):
            raise E.InvalidArgumentError(
                "%s: the %s is %s; the engine's tensor is %s (a plugrt.DeviceBuffer or an "
                "address takes any type)" % (name, type(memory).__name__, v.dtype_name,
                                             io.dtype.name.lower()))
        return v.ptr or None, v.keep

    def get_tensor_address(self, name: str) -> int:
        return self._bound.get(name, (0, None))[0]

    def set_output_allocator(self, name: str, output_allocator: Optional[IOutputAllocator]) -> bool:
        old = self._allocs.pop(name, None)
        if output_allocator is None:
            E.call(C.fn.context_set_output_allocator, self.handle, C.b(name), None)
        else:
            br = _AllocBridge(output_allocator)
            br.device, br.stream = self.engine.device, self._stream
            try:
                E.call(C.fn.context_set_output_allocator, self.handle, C.b(name),
                       byref(br.struct))
            except BaseException:
                br.release()
                raise
            self._allocs[name] = br
        if old is not None:
            old.release()
        return True

    def get_output_allocator(self, name: str) -> Optional[IOutputAllocator]:
        br = self._allocs.get(name)
        return br.allocator if br else None

    @property
    def threads(self) -> int:
        """The intra-op threads this context runs with."""
        return int(C.fn.context_get_threads(self.handle))

    @property
    def memory_size(self) -> int:
        """Bytes of device memory the context holds: its arena and workspace
        plus what its plugins allocated through their resources."""
        return int(C.fn.context_get_memory_size(self.handle))

    def _use_stream(self, s):
        if s != self._stream:
            self._stream = s
            for a in self._allocs.values():
                a.stream = s

    def execute_async_v3(self, stream_handle: Any = 0) -> bool:
        """Runs the engine: on the CPU before it returns; on CUDA it queues the
        work on the stream and returns. The stream: a cudaStream_t as an int
        (0: the default stream), a torch.cuda.Stream, a cupy Stream or a
        cuda-python CUstream."""
        s = _cuda.stream_handle(stream_handle)
        if not self._lock.acquire(blocking=False):
            raise _busy()
        try:
            self._use_stream(s)
            E.call(C.fn.context_enqueue, self.handle, s or None)
        finally:
            self._lock.release()
        return True

    # -- the short path -----------------------------------------------------
    def run(self, feeds: Mapping[str, Any], stream: Any = None) -> Dict[str, Any]:
        """Runs on arrays: sets input shapes, allocates outputs, and returns
        {output name: array}, data-dependent outputs at their true shape.
        Inputs must have the engine's dtypes.

        CPU engines take numpy arrays (or what np.asarray takes) and return
        numpy arrays. CUDA engines take torch and cupy CUDA tensors (in
        place), objects with __cuda_array_interface__ or DLPack, and numpy
        arrays (copied to the device), and return torch CUDA tensors if an
        input was a torch tensor, else cupy arrays if one was a cupy array,
        else numpy arrays. The run goes on `stream` if given, else on
        torch's (cupy's) current stream for torch (cupy) results, which are
        returned without waiting unless an output is data-dependent; numpy
        results are copied back, the run waited for."""
        eng = self.engine
        unknown = set(feeds) - {io.name for io in eng._io if io.mode == TensorIOMode.INPUT}
        if unknown:
            raise E.InvalidArgumentError("run(): %s not an input of the engine (inputs: %s)" % (
                ", ".join(repr(u) for u in sorted(unknown)), ", ".join(
                    repr(io.name) for io in eng._io if io.mode == TensorIOMode.INPUT)))
        for io in eng._io:
            if io.mode == TensorIOMode.INPUT and io.name not in feeds:
                raise E.InvalidArgumentError("run(): input %r is missing" % io.name)
        if not self._lock.acquire(blocking=False):
            raise _busy()
        try:
            if eng.device == Device.CPU:
                return self._run_host(feeds)
            return self._run_cuda(feeds, stream)
        finally:
            self._lock.release()

    def _check_input(self, io, shape, dtype, dtype_name, key):
        # bfloat16: numpy has none; its raw values as uint16 are accepted.
        if dtype != io.dtype and not (io.dtype == DataType.BF16 and str(dtype_name) == "uint16"):
            raise E.InvalidArgumentError("run(): input %r is %s; the engine takes %s" % (
                io.name, dtype_name, io.np if io.dtype != DataType.BF16
                else "bfloat16 (or its raw values as uint16)"))
        if -1 in io.dims:
            key.append(shape)
        elif shape != tuple(io.dims):
            raise E.ShapeError("run(): input %r has shape %s; the engine takes %s" % (
                io.name, shape, tuple(io.dims)))

    def _shapes(self, key, shapes):
        """Sets dynamic input shapes and learns output shapes (upper bounds
        for data-dependent dims) when they changed since the last run."""
        h = self.handle
        key = tuple(key)
        if key != self._last_key:
            for io in self.engine._io:
                if io.mode == TensorIOMode.INPUT and -1 in io.dims:
                    E.call(C.fn.context_set_input_shape, h, io.bname,
                           byref(C.prt_dims.of(shapes[io.index])))
            outs = []
            for io in self.engine._io:
                if io.mode == TensorIOMode.OUTPUT:
                    d = C.prt_dims()
                    E.call(C.fn.context_get_tensor_shape, h, io.bname, byref(d))
                    outs.append((io, d.totuple()))
            self._last_key, self._last_out = key, outs
        return self._last_out

    def _true_shape(self, io, shape):
        if not io.dd_mask:
            return shape
        d = C.prt_dims()
        E.call(C.fn.context_get_tensor_shape, self.handle, io.bname, byref(d))
        return d.totuple()

    def _run_host(self, feeds):
        h = self.handle
        keep, key, shapes = [], [], {}
        for io in self.engine._io:
            if io.mode != TensorIOMode.INPUT:
                continue
            a = np.asarray(feeds[io.name])
            dt = _FROM_NP.get(a.dtype)
            self._check_input(io, a.shape, dt, a.dtype, key)
            a = np.ascontiguousarray(a)
            keep.append(a)
            shapes[io.index] = a.shape
            if io.is_shape_input:
                key.append(a.tobytes())
            E.call(C.fn.context_set_tensor_address, h, io.bname, a.ctypes.data)
        results = []
        for io, shape in self._shapes(key, shapes):
            buf = np.empty(shape, io.np)
            results.append((io, buf))
            E.call(C.fn.context_set_tensor_address, h, io.bname, buf.ctypes.data)
        E.call(C.fn.context_enqueue, h, None)
        out = {}
        for io, buf in results:
            if io.dd_mask:
                true = self._true_shape(io, buf.shape)
                n = volume(true)
                flat = buf.reshape(-1)[:n]
                buf = (flat.copy() if 2 * n < buf.size else flat).reshape(true)
            out[io.name] = buf
        return out

    def _own_stream(self):
        st = self._res.get("stream")
        if st is None:
            st = self._res["stream"] = _cuda.Stream(self.engine.device)
        return st.handle

    def _buffer(self, name, nbytes):
        """A device buffer of run()'s for `name`, of at least nbytes (kept
        between runs, grown when needed)."""
        bufs = self._res["buffers"]
        b = bufs.get(name)
        if b is None or b.nbytes < nbytes:
            if b is not None:
                b.free()
            b = bufs[name] = _cuda.DeviceBuffer(nbytes, self.engine.device)
        return b

    def _run_cuda(self, feeds, stream):
        # Written for CUDA; everything it does goes through the engine's
        # device, so the tests drive it with a CPU engine too.
        h = self.handle
        dev = self.engine.device
        libs = {_cuda.library_of(v) for v in feeds.values()}
        kind = "torch" if "torch" in libs else "cupy" if "cupy" in libs else "numpy"
        torch = sys.modules.get("torch") if kind == "torch" else None
        cupy = sys.modules.get("cupy") if kind == "cupy" else None
        on_gpu = dev == Device.CUDA
        tdev = None
        if torch is not None:
            tdev = next((v.device for v in feeds.values()
                         if _cuda.library_of(v) == "torch" and v.is_cuda), None)
            tdev = tdev or (torch.device("cuda", torch.cuda.current_device()) if on_gpu
                            else torch.device("cpu"))
        lib_stream = None  # the current stream of torch or cupy, where they allocate
        if torch is not None and on_gpu:
            lib_stream = torch.cuda.current_stream(tdev).cuda_stream
        elif cupy is not None and on_gpu:
            lib_stream = cupy.cuda.get_current_stream().ptr
        if stream is not None:
            s = _cuda.stream_handle(stream)
        elif lib_stream is not None:
            s = lib_stream
        else:
            s = self._own_stream()
        self._use_stream(s)
        temps = False  # device arrays made here for inputs

        def device_array(io, shape, nbytes):
            if torch is not None:
                return torch.empty(shape, dtype=_cuda.torch_dtype(io.dtype), device=tdev)
            if cupy is not None:
                return cupy.empty(shape, dtype=io.np)
            return self._buffer(io.name, nbytes)

        keep, key, shapes = [], [], {}
        for io in self.engine._io:
            if io.mode != TensorIOMode.INPUT:
                continue
            x = feeds[io.name]
            v = _cuda.view(x, s)
            self._check_input(io, v.shape, v.dtype, v.dtype_name, key)
            shapes[io.index] = v.shape
            if io.location == TensorLocation.HOST:
                # A shape input: its values are read from host memory.
                if v.device != Device.CPU:
                    v = _cuda.view(_to_host(x))
                elif not v.contiguous:
                    v = _cuda.view(np.ascontiguousarray(np.asarray(x)))
                key.append(ctypes.string_at(v.ptr, v.nbytes) if v.nbytes else b"")
            elif v.device == Device.CPU:
                # Host data: copied into device memory on the run's stream.
                if not v.contiguous:
                    v = _cuda.view(x.contiguous() if v.lib == "torch"
                                   else np.ascontiguousarray(np.asarray(x)))
                d = device_array(io, v.shape, v.nbytes)
                temps = True
                keep.append(v.keep)
                dv = _cuda.view(d)
                _cuda.memcpy(dv.ptr, v.ptr, v.nbytes, _cuda.H2D, s, dev)
                v = dv
            elif not v.contiguous:
                v = _contiguous_on_device(io, x, v, s)
                temps = True
            keep.append(v.keep)
            E.call(C.fn.context_set_tensor_address, h, io.bname, v.ptr or None)
        results = []
        for io, shape in self._shapes(key, shapes):
            if io.location == TensorLocation.HOST:
                d = np.empty(shape, io.np)
            else:
                d = device_array(io, shape, volume(shape) * io.dtype.itemsize)
            results.append((io, shape, d))
            E.call(C.fn.context_set_tensor_address, h, io.bname, _cuda.view(d).ptr or None)
        E.call(C.fn.context_enqueue, h, s or None)
        out = {}
        for io, shape, d in results:
            true = self._true_shape(io, shape)  # waits for the run if data-dependent
            if isinstance(d, np.ndarray):  # a host-resident output
                _cuda.synchronize(s, dev)
                out[io.name] = d.reshape(-1)[:volume(true)].reshape(true)
            elif kind == "numpy":
                a = np.empty(true, io.np)
                _cuda.memcpy(a.ctypes.data, d.ptr, a.nbytes, _cuda.D2H, s, dev)
                out[io.name] = a
            elif true != shape:
                n = volume(true)
                flat = d.reshape(-1)[:n]
                if 2 * n < volume(shape):
                    flat = flat.clone() if torch is not None else flat.copy()
                out[io.name] = flat.reshape(true)
            else:
                out[io.name] = d
        if kind == "numpy" or (temps and kind != "numpy" and s != lib_stream):
            # numpy results are on the host; and inputs copied here into
            # torch's (cupy's) memory on another stream than theirs must
            # not be freed for reuse before the run has read them.
            _cuda.synchronize(s, dev)
        return out


def _to_host(x):
    """A device array's values in host memory (waits for them)."""
    lib = _cuda.library_of(x)
    if lib == "torch":
        return x.detach().cpu().contiguous()
    if lib == "cupy":
        return x.get()
    raise E.InvalidArgumentError("a shape input is read on the host: give it as a numpy array, "
                                 "not a %s in device memory" % type(x).__name__)


def _contiguous_on_device(io, x, v, s):
    """A C-contiguous copy of a strided device array, ordered before the
    run's stream."""
    lib = v.lib
    if lib == "torch":
        y, made_on = x.contiguous(), sys.modules["torch"].cuda.current_stream(x.device).cuda_stream
    elif lib == "cupy":
        cupy = sys.modules["cupy"]
        y, made_on = cupy.ascontiguousarray(x), cupy.cuda.get_current_stream().ptr
    else:
        raise E.InvalidArgumentError("run(): input %r: the %s is not C-contiguous" % (
            io.name, type(x).__name__))
    if made_on != s:
        _cuda.order_streams(_cuda.interface_stream(s), _cuda.interface_stream(made_on))
    return _cuda.view(y, s)


_MEM = {Device.CPU: "host", Device.CUDA: "CUDA"}
_RAW_BF16 = ("uint16", "int16", "<u2", "<i2")  # bfloat16's raw values
_FROM_NP: Dict[np.dtype, DataType] = {np.dtype(nptype(d)): d for d in DataType
                                      if d not in (DataType.BF16, DataType.FP8,
                                                   DataType.FP8E5M2)}


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_MISSING = re.compile(r"plugin (?P<ns>.*?)::(?P<name>.*?) version (?P<ver>\S+) is not in "
                      r"the registry")


class _Probe(IPluginCreatorV3One):
    """Stands in for a missing plugin to read the module its fields name."""

    def __init__(self, name, version, ns):
        self.name, self.plugin_version, self.plugin_namespace = name, version, ns
        self.field_names = []
        self.module = None

    def create_plugin(self, name, fc, phase):
        raise LookupError("probe")


def _missing_python_module(reg: Registry, data: bytes, message: str):
    """(key, module) when the engine's missing plugin is a Python one that
    serialized the module defining it; else None."""
    m = _MISSING.search(message)
    if not m:
        return None
    ns, name, ver = m.group("ns"), m.group("name"), m.group("ver")
    probe = _Probe(name, ver, ns)
    seen = {}

    class _Bridge(CreatorBridge):
        def make(self, layer_name, fields, phase):
            raise LookupError("probe")

    # A scratch registry with every creator of `reg` (borrowed) and the probe.
    tmp = Registry()
    try:
        for i in range(C.fn.registry_creator_count(reg.handle)):
            E.call(C.fn.registry_add_creator, tmp.handle,
                   C.fn.registry_get_creator(reg.handle, i))
        cb = _Bridge(probe)

        def create(cp, layer, fields, phase, out, _orig=cb):
            for f in read_fields(fields):
                if f.name == MODULE_FIELD:
                    seen["module"] = f.to_str()
            C.host_set_error(C.PRT_ERR_NOT_FOUND, "probe")
            return C.PRT_ERR_NOT_FOUND
        thunk = C.CREATE_FN(create)
        cb.struct.create = thunk
        E.call(C.fn.registry_add_creator, tmp.handle, addressof(cb.struct))
        h = c_void_p()
        st = C.fn.engine_deserialize(tmp.handle, data, len(data), byref(h))
        if st == 0 and h.value:
            C.fn.engine_destroy(h.value)
        CREATORS.pop(cb.addr, None)
    finally:
        tmp.close()
    mod = seen.get("module")
    if not mod:
        return None
    return "%s::%s version %s" % (ns, name, ver), mod


def deserialize(data, registry: Optional[Registry] = None,
                allow_embedded_code: bool = False) -> ICudaEngine:
    """An engine from its bytes. allow_embedded_code: load the plugin
    libraries (and any other code) the engine carries; without it such an
    engine is UnsupportedError naming them, unless the registry already
    holds libraries of the same content hashes."""
    reg = registry or get_plugin_registry()
    data = bytes(data)
    h = c_void_p()
    opts = C.prt_deserialize_options(sizeof(C.prt_deserialize_options),
                                     C.PRT_EMBEDDED_CODE if allow_embedded_code else 0)
    try:
        E.call(C.fn.engine_deserialize_with_options, reg.handle, data, len(data),
               byref(opts), byref(h))
    except E.NotFoundError as e:
        found = _missing_python_module(reg, data, str(e))
        if found is None:
            raise
        key, mod = found
        where = "the script that defines it" if mod == "__main__" else "module %r" % mod
        raise E.NotFoundError(
            "%s. %s is a Python plugin: import %s (which registers it) before loading "
            "the engine" % (str(e), key, where)) from None
    return ICudaEngine(h.value or 0, reg)  # E.call raised where there is none


class Runtime(_WithRegistry):
    """Loads engines (TensorRT's Runtime; CPU engines too); Runtime(logger,
    registry=None)."""

    engine_host_code_allowed = False
    """True (TensorRT's IRuntime.engine_host_code_allowed): engines may
    bring code of their own (plugin libraries built in with
    IBuilderConfig.embed_plugins), which loading then runs. False (default):
    such an engine is refused unless the registry already holds those
    libraries."""

    def deserialize_cuda_engine(self, serialized_engine: Any) -> ICudaEngine:
        """An engine from its bytes. Plugins are recreated through the
        registry; a missing one is NotFoundError naming its key (and, for a
        Python plugin, the module to import)."""
        return deserialize(serialized_engine, self.get_plugin_registry(),
                           bool(self.engine_host_code_allowed))


def load(path: Union[str, os.PathLike], registry: Optional[Registry] = None,
         plugins: Sequence = (), allow_embedded_code: bool = False) -> ICudaEngine:
    """Loads an engine file (Engine.save's). allow_embedded_code: as
    deserialize's (the plugin libraries an engine built with
    IBuilderConfig.embed_plugins carries)."""
    from . import _short  # noqa: PLC0415
    reg = _short.prepare_registry(registry, plugins)
    with open(path, "rb") as f:
        data = f.read()
    return deserialize(data, reg, allow_embedded_code)


__all__ = ["ICudaEngine", "IExecutionContext", "IOutputAllocator", "Runtime", "load",
           "deserialize"]

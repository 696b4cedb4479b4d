"""Plugins in Python behind plugin.h's C tables, and C plugins seen from
Python.

A Python plugin object that C holds is a Bridge: a ctypes prt_plugin struct
(its address is what C sees) and the Python object that serves it. One set
of C tables and callbacks (module globals, never freed, like a C plugin's
static tables) serves every bridge; each callback finds its bridge by the
plugin's address in LIVE, where a bridge stays from the moment it is handed
to C until C calls destroy() on it.

Two kinds of bridge: ClassBridge serves an object of the TensorRT-style
classes (IPluginV3 with IPluginV3OneCore/Build/Runtime, or plugrt.Plugin);
plugrt.plugin's decorator plugins have theirs (plugin/_bridge.py).

A callback never lets an exception through C: it reports it with the host's
set_error (naming the plugin, the method and the exception), records it for
the Python caller of the C function (_errors.record), and returns a failing
status (or NULL, 0, -1, as the entry's contract says).

Per enqueue, a bridge reads the input and output pointers and calls the
Python method; descriptors are made in on_shape_change (which the runtime
calls whenever shapes change) and reused, and fields are parsed once, at
creation.
"""

import copy
import ctypes
import inspect
import itertools
import operator
import traceback
from ctypes import addressof, c_int32, c_int64, c_uint64, c_void_p, sizeof
from typing import Any, Dict, List, Optional

from . import _capi as C
from . import _errors as E
from ._exprs import IExprBuilder, read_dim_exprs
from ._types import (DataType, Device, DeviceLike, DynamicPluginTensorDesc, FieldSet,
                     PluginCapabilityType, PluginField, PluginFieldCollection,
                     PluginFieldType, PluginTensorDesc, TensorRTPhase, dynamic_descs,
                     fields_of, read_fields, tensor_descs, to_device)

#: The field a Python plugin adds to what it serializes: the module that
#: defines it, so that loading an engine without it can say what to import.
#: Creators never see it.
MODULE_FIELD = "__python_module__"

# ---------------------------------------------------------------------------
# TensorRT's Python plugin interfaces
# ---------------------------------------------------------------------------


class IPluginV3:
    """A plugin (TensorRT's IPluginV3): subclass it together with
    IPluginV3OneCore, IPluginV3OneBuild and IPluginV3OneRuntime, and return
    the object serving each capability from get_capability_interface (self,
    usually). See plugrt.Plugin for one base class with defaults."""

    def __init__(self):
        pass

    def get_capability_interface(self, type: PluginCapabilityType) -> Any:
        return self

    def clone(self) -> "IPluginV3":
        """A deep copy (the default copies every attribute deeply)."""
        return copy.deepcopy(self)


class IPluginV3OneCore:
    """Identity: plugin_name, plugin_version, plugin_namespace; optionally
    `devices`, the devices its enqueue runs on (default [Device.CPU]; e.g.
    [Device.CUDA], or ["cpu", "cuda"] with an enqueue that takes `device`)."""
    plugin_name = ""
    plugin_version = "1"
    plugin_namespace = ""

    def __init__(self):
        pass

    def __repr__(self) -> str:
        return "<Python plugin %s::%s version %s (%s)>" % (
            self.plugin_namespace, self.plugin_name, self.plugin_version,
            type(self).__qualname__)


class IPluginV3OneBuild:
    """Build capability: num_outputs, get_output_data_types, get_output_shapes,
    supports_format_combination; optionally configure_plugin,
    get_workspace_size, get_valid_tactics, get_aliased_input; and
    capture_safe = False when enqueue must not be captured into a CUDA graph
    (graph capture then refuses the engine, naming the layer)."""
    num_outputs = 1
    capture_safe = True

    def __init__(self):
        pass

    def configure_plugin(self, inp: List[DynamicPluginTensorDesc],
                         out: List[DynamicPluginTensorDesc]) -> None:
        pass

    def get_workspace_size(self, inp: List[DynamicPluginTensorDesc],
                           out: List[DynamicPluginTensorDesc]) -> int:
        return 0

    def get_valid_tactics(self) -> List[int]:
        return []

    def get_aliased_input(self, output_index: int) -> int:
        return -1


class IPluginV3OneRuntime:
    """Runtime capability: enqueue, get_fields_to_serialize; optionally
    set_tactic, on_shape_change, attach_to_context (default: clone()).

    enqueue(input_desc, output_desc, inputs, outputs, workspace, stream)
    gets addresses as ints: host memory on the CPU (plugrt.host_array views
    it), device memory on CUDA (plugrt.device_tensor wraps it for
    torch.as_tensor / cupy.asarray), and the cudaStream_t as an int (0 on
    the CPU). A plugin that lists several devices takes a `device` argument
    too (a plugrt.Device)."""

    def __init__(self):
        pass

    def set_tactic(self, tactic: int) -> None:
        pass

    def on_shape_change(self, inp: List[PluginTensorDesc], out: List[PluginTensorDesc]) -> None:
        pass

    def attach_to_context(self, context: "PluginResourceContext") -> Any:
        return self.clone()  # type: ignore[attr-defined] # IPluginV3's, beside this

    def get_fields_to_serialize(self) -> PluginFieldCollection:
        return PluginFieldCollection()


class Plugin(IPluginV3, IPluginV3OneCore, IPluginV3OneBuild, IPluginV3OneRuntime):
    """One base class for a Python plugin: set plugin_name (and
    plugin_version, plugin_namespace, num_outputs) and define
    get_output_data_types, get_output_shapes, supports_format_combination,
    enqueue and get_fields_to_serialize."""

    def __init__(self):
        IPluginV3.__init__(self)


class IPluginCreatorV3One:
    """A creator (TensorRT's IPluginCreatorV3One): name, plugin_version,
    plugin_namespace, field_names (a PluginFieldCollection whose fields give
    names and types) and create_plugin(name, fc, phase)."""
    name = ""
    plugin_version = "1"
    plugin_namespace = ""
    field_names = PluginFieldCollection()

    def __init__(self):
        pass

    def create_plugin(self, name: str, fc: PluginFieldCollection, phase: TensorRTPhase) -> Any:
        raise NotImplementedError("create_plugin")

    def __repr__(self) -> str:
        return "<Python plugin creator %s::%s version %s (%s)>" % (
            self.plugin_namespace, self.name, self.plugin_version, type(self).__qualname__)


PluginCreator = IPluginCreatorV3One


class PluginResourceContext:
    """What attach_to_context receives (TensorRT's IPluginResourceContext):
    the context's device and, from a context (not from `plugrt check`,
    which gives the device only), its objects shared by name among its
    layers (acquire), its memory (alloc, free) and its error reporting
    (report_error). Keep it in the clone attach_to_context returns: it
    serves until the context is destroyed. plugin.h's prt_plugin_resources
    says the rules."""
    __slots__ = ("device", "_res")

    def __init__(self, device: DeviceLike, resources: Optional[int] = None):
        self.device = to_device(device)
        self._res = None
        if resources:
            r = C.prt_plugin_resources()
            n = min(C.prt_plugin_resources.from_address(resources).struct_size, sizeof(r))
            ctypes.memmove(addressof(r), resources, n)
            r.struct_size = n  # what it covered; entries past it read as absent
            self._res = r

    def _entry(self, name):
        r = self._res
        if r is None or r.struct_size < getattr(C.prt_plugin_resources, name).offset + \
                sizeof(c_void_p) or not getattr(r, name):
            raise E.StateError("this attach gives no %s (plugrt check attaches with the "
                               "device only)" % name)
        return getattr(r, name)

    def _context(self) -> Any:
        """The context handle the entries take (there once _entry passed)."""
        assert self._res is not None
        return self._res.context

    def acquire(self, name: str, factory: Any, release: Any = None) -> Any:
        """The context's object called `name`: factory() makes it the first
        time a Python plugin of the context asks, and every later call with
        that name in the context returns the same object (a cuBLAS handle, a
        compiled module). release(object), when given by that first caller,
        runs when the context is destroyed, after its plugins. Names are
        those of Python plugins only (C plugins' objects are not Python's)."""
        f = self._entry("acquire")
        token = next(_ACQ_TOKENS)
        _ACQ_CALLS[token] = (factory, release)
        out = c_void_p()
        try:
            st = f(self._context(), ("python:" + name).encode(), _res_create,
                   _res_destroy, token, ctypes.byref(out))
        finally:
            del _ACQ_CALLS[token]
        E.check(st)
        return _SHARED[out.value or 0][0]

    def alloc(self, nbytes: int) -> int:
        """The address of `nbytes` of the context's device memory (host
        memory on the CPU), counted in its memory and its limit; freed by
        free() or with the context."""
        out = c_void_p()
        E.check(self._entry("alloc")(self._context(), int(nbytes), ctypes.byref(out)))
        return out.value or 0

    def free(self, address: int) -> None:
        """Returns memory alloc() gave."""
        self._entry("free")(self._context(), address or None)

    def report_error(self, message: str, status: int = C.PRT_ERR_PLUGIN) -> None:
        """An error the context's next run (or the one going) returns, naming
        the layer: for failures learned outside a call (a callback, a thread)."""
        self._entry("report_error")(self._context(), int(status), message.encode())

    def __repr__(self) -> str:
        return "PluginResourceContext(device=%s)" % self.device.name


# Shared objects of Python plugins: C holds a token per object, mapped here
# to (object, release) from its creation to its context's destruction.
_SHARED: Dict[int, Any] = {}
_ACQ_CALLS: Dict[int, Any] = {}  # per acquire in progress: (factory, release)
_ACQ_TOKENS = itertools.count(1)


@C.RES_CREATE_FN
def _res_create(user, device, out):
    try:
        factory, release = _ACQ_CALLS[user]
        obj = factory()
        token = next(_ACQ_TOKENS)
        _SHARED[token] = (obj, release)
        c_void_p.from_address(out).value = token
        return C.PRT_OK
    except BaseException as exc:  # noqa: BLE001 - reported, never lost
        E.report(exc, "shared object factory raised %s: %s" % (type(exc).__name__, exc),
                 C.PRT_ERR_PLUGIN)
        return C.PRT_ERR_PLUGIN


@C.RES_DESTROY_FN
def _res_destroy(user, obj):
    got = _SHARED.pop(obj, None)
    if got is not None and got[1] is not None:
        try:
            got[1](got[0])
        except BaseException:  # noqa: BLE001 - nowhere to report it: print it
            traceback.print_exc()


# ---------------------------------------------------------------------------
# Bridges
# ---------------------------------------------------------------------------

LIVE: Dict[int, "Bridge"] = {}  # address of the C object -> its Bridge, while C holds it


class _Struct(ctypes.Structure):
    _fields_ = [("base", C.prt_plugin)]


def _cstr(v, what):
    if not isinstance(v, str):
        raise TypeError("%s must be a str, got %r" % (what, v))
    return ctypes.create_string_buffer(v.encode())


class Bridge:
    """A C plugin object served by Python (base of both kinds)."""

    def __init__(self, name, version, namespace, devices):
        self.cstruct = _Struct()
        self.cstruct.base.vt = _VT_PTR
        self.addr = addressof(self.cstruct)
        self.name, self.version, self.namespace = name, version, namespace
        self._strs = (_cstr(name, "plugin_name"), _cstr(version, "plugin_version"),
                      _cstr(namespace, "plugin_namespace"))
        self._devices = devices
        self.nb_in = None
        self.nb_out = None
        self._ptr_cache = [None, None]
        self._fieldset = None
        # Whether enqueue may be captured into a graph (capture_safe in
        # plugin.h): a class plugin's `capture_safe` attribute, a decorator
        # plugin's register(..., capture_safe=).
        self.capture_safe = True
        self.target = None  # the build's device (set_target_device), None until told

    @property
    def key(self):
        return "%s::%s version %s" % (self.namespace, self.name, self.version)

    @property
    def devices(self):
        """Mask of (1 << prt_device) the plugin runs on."""
        return self._devices

    def describe(self, entry):
        return "Python plugin %s::%s (%s)" % (self.namespace, self.name, entry)

    def publish(self):
        """Hands the object to C: its address, live until C destroys it."""
        LIVE[self.addr] = self
        return self.addr

    def ptrs(self, addr, n, slot):
        if not n:
            return []
        c = self._ptr_cache[slot]
        if c is None or c[0] != addr:
            c = self._ptr_cache[slot] = (addr, (c_uint64 * n).from_address(addr))
        return c[1][:]

    def kernel(self, tactic, in_types, out_types, in_dims, out_dims, eb):
        """get_kernel (plugin.h): (anything to keep alive, the filled
        prt_kernel_desc), or None when this plugin has no kernel (enqueue
        runs). Only decorator plugins with an aot_impl have one."""
        return None

    def serialize(self, fields, module):
        fields = list(fields)
        if module:
            fields.append(PluginField(MODULE_FIELD, module.encode(), PluginFieldType.CHAR))
        self._fieldset = FieldSet(fields)  # valid until the next call or destroy
        return self._fieldset.address


def _device_mask(devices, who):
    """A device mask from a Device, "cpu"/"cuda", or a list of them."""
    if isinstance(devices, (str, int, Device)):
        devices = [devices]
    m = 0
    for d in devices:
        try:
            m |= 1 << int(to_device(d))
        except (ValueError, TypeError):
            raise ValueError("%s: unknown device %r in devices (trt.Device.CPU, "
                             "trt.Device.CUDA, 'cpu' or 'cuda')" % (who, d)) from None
    if not m:
        raise ValueError("%s: devices is empty" % who)
    return m


_TAKES_DEVICE: Dict[Any, bool] = {}  # enqueue function -> whether it takes `device`


def _takes_device(f):
    key = getattr(f, "__func__", f)
    got = _TAKES_DEVICE.get(key)
    if got is None:
        try:
            ps = inspect.signature(f).parameters
        except (TypeError, ValueError):
            ps = {}
        got = _TAKES_DEVICE[key] = "device" in ps or any(
            p.kind == p.VAR_KEYWORD for p in ps.values())
    return got


class ClassBridge(Bridge):
    """Serves a TensorRT-style plugin object."""

    def __init__(self, plugin, module=None):
        core = plugin.get_capability_interface(PluginCapabilityType.CORE) or plugin
        devices = getattr(core, "devices", None)
        super().__init__(core.plugin_name, core.plugin_version, core.plugin_namespace,
                         _device_mask(devices if devices is not None else [Device.CPU],
                                      "plugin %s" % core.plugin_name))
        self.plugin = plugin
        self.core = core
        self.build = plugin.get_capability_interface(PluginCapabilityType.BUILD)
        self.runtime = plugin.get_capability_interface(PluginCapabilityType.RUNTIME)
        if self.runtime is None:
            raise TypeError("%s: get_capability_interface(RUNTIME) returned None; "
                            "every plugin needs the runtime capability" % self.key)
        self.module = module or type(plugin).__module__
        self.capture_safe = bool(getattr(self.build if self.build is not None else plugin,
                                         "capture_safe", getattr(core, "capture_safe", True)))
        self.in_descs = self.out_descs = None
        self._enqueue = self.runtime.enqueue
        self._takes_device = _takes_device(self._enqueue)
        if self._devices & (self._devices - 1) and not self._takes_device:
            # The builder runs a plugin that lists the CPU on host memory
            # too (the reference for GPU tactics): it must know which.
            raise TypeError(
                "plugin %s lists several devices (%s), so its enqueue must take a "
                "`device` argument to know which memory it is given" % (
                    self.key, ", ".join(d.name for d in Device
                                        if self._devices >> int(d) & 1)))
        self._tactics = None

    def describe(self, entry):
        return "Python plugin %s::%s (class %s), method %s" % (
            self.namespace, self.name, type(self.plugin).__qualname__, entry)

    def need_build(self):
        if self.build is None:
            raise E.StateError("the plugin has no build capability "
                               "(get_capability_interface(BUILD) returned None)")
        return self.build

    def copy_of(self, p):
        if p is None:
            raise ValueError("returned None instead of a plugin")
        if isinstance(p, Bridge):
            return p
        b = ClassBridge(p, self.module)
        b.nb_in, b.nb_out = self.nb_in, self.nb_out
        return b


# ---------------------------------------------------------------------------
# The callbacks
# ---------------------------------------------------------------------------

def _fail(p, entry, exc):
    br = LIVE.get(p)
    who = br.describe(entry) if br is not None else "Python plugin (entry %s)" % entry
    E.report(exc, "%s raised %s: %s" % (who, type(exc).__name__, exc), C.PRT_ERR_PLUGIN)
    if getattr(exc, "__traceback__", None) is not None and _TRACE:
        traceback.print_exception(type(exc), exc, exc.__traceback__)


_TRACE = False  # plugrt.set_plugin_tracebacks(True) prints them as they happen


def _guard(entry, fail):
    def wrap(f):
        def inner(p, *args):
            try:
                return f(LIVE[p], *args)
            except BaseException as exc:  # noqa: BLE001 - reported, never lost
                _fail(p, entry, exc)
                return fail
        inner.__name__ = f.__name__
        return inner
    return wrap


@C.CORE_STR_FN
def _core_name(p):
    return addressof(LIVE[p]._strs[0])


@C.CORE_STR_FN
def _core_version(p):
    return addressof(LIVE[p]._strs[1])


@C.CORE_STR_FN
def _core_namespace(p):
    return addressof(LIVE[p]._strs[2])


@C.CORE_DEVICES_FN
def _core_devices(p):
    return LIVE[p].devices


@C.NB_OUTPUTS_FN
@_guard("num_outputs", -1)
def _b_nb_outputs(br):
    return br.nb_outputs()


@C.GET_OUTPUT_DTYPES_FN
@_guard("get_output_data_types", C.PRT_ERR_PLUGIN)
def _b_dtypes(br, out_types, nb_out, in_types, nb_in):
    ins = [DataType(v) for v in (c_int32 * nb_in).from_address(in_types)] if nb_in else []
    got = list(br.output_dtypes(ins))
    if len(got) != nb_out:
        raise ValueError("returned %d types for %d outputs" % (len(got), nb_out))
    arr = (c_int32 * nb_out).from_address(out_types)
    for i, t in enumerate(got):
        arr[i] = int(DataType(t))
    return C.PRT_OK


@C.GET_OUTPUT_SHAPES_FN
@_guard("get_output_shapes", C.PRT_ERR_PLUGIN)
def _b_shapes(br, inputs, nb_in, shape_inputs, nb_si, outputs, nb_out, ebp):
    eb = IExprBuilder(ebp)
    try:
        ins = read_dim_exprs(inputs, nb_in, eb)
        sis = read_dim_exprs(shape_inputs, nb_si, eb)
        got = br.output_shapes(ins, sis, eb)
        if len(got) != nb_out:
            raise ValueError("returned %d shapes for %d outputs" % (len(got), nb_out))
        arr = (C.prt_dim_exprs * nb_out).from_address(outputs)
        for i, dims in enumerate(got):
            if dims is None:
                raise ValueError("output %d: no shape" % i)
            dims = list(dims)
            if len(dims) > C.PRT_MAX_DIMS:
                raise ValueError("output %d has %d dims; at most %d" % (
                    i, len(dims), C.PRT_MAX_DIMS))
            arr[i].nb_dims = len(dims)
            for k, e in enumerate(dims):
                if e is None:
                    raise ValueError("output %d dim %d was not set" % (i, k))
                arr[i].d[k] = eb._expr(e)
    finally:
        eb._end()
    return C.PRT_OK


@C.SUPPORTS_FN
@_guard("supports_format_combination", 0)
def _b_supports(br, pos, in_out, nb_in, nb_out):
    return 1 if br.supports(pos, in_out, nb_in, nb_out) else 0


@C.CONFIGURE_FN
@_guard("configure_plugin", C.PRT_ERR_PLUGIN)
def _b_configure(br, ins, nb_in, outs, nb_out):
    br.nb_in, br.nb_out = nb_in, nb_out
    br.configure(dynamic_descs(ins, nb_in), dynamic_descs(outs, nb_out))
    return C.PRT_OK


_INT64_MAX = 2**63 - 1


@C.WORKSPACE_FN
@_guard("get_workspace_size", C.PRT_ERR_PLUGIN)
def _b_workspace(br, ins, nb_in, outs, nb_out, out_bytes):
    got = br.workspace(dynamic_descs(ins, nb_in), dynamic_descs(outs, nb_out))
    n = operator.index(got) if got is not None else 0
    # ctypes would wrap anything outside int64_t silently (2**64 + 64 became
    # a workspace of 64 bytes).
    if not 0 <= n <= _INT64_MAX:
        raise ValueError("returned %d; a workspace size is 0 to 2**63-1 bytes (int64)" % n)
    c_int64.from_address(out_bytes).value = n
    return C.PRT_OK


@C.TACTICS_FN
@_guard("get_valid_tactics", C.PRT_ERR_PLUGIN)
def _b_tactics(br, tactics, capacity, out_count):
    # Called to count (capacity 0), then to fill: the list is asked for once.
    if capacity == 0 or br._tactics is None:
        got = [int(t) for t in (br.tactics() or [])]
        if any(t <= 0 for t in got):
            raise ValueError("tactics must be positive, as TensorRT's (0 is the tactic "
                             "of a plugin that declares none): %r" % (got,))
        br._tactics = got
    got = br._tactics
    if capacity:
        arr = (c_int32 * capacity).from_address(tactics)
        for i, t in enumerate(got[:capacity]):
            arr[i] = t
        br._tactics = None
    c_int32.from_address(out_count).value = len(got)
    return C.PRT_OK


@C.ALIASED_FN
@_guard("get_aliased_input", -1)
def _b_aliased(br, index):
    return int(br.aliased_input(index))


@C.SET_TARGET_DEVICE_FN
@_guard("set_target_device", C.PRT_ERR_PLUGIN)
def _b_set_target_device(br, device):
    br.target = device  # a decorator plugin's aot_impl sizes its workspace for CUDA only
    return C.PRT_OK


@C.GET_KERNEL_FN
@_guard("get_kernel", C.PRT_ERR_PLUGIN)
def _b_get_kernel(br, tactic, ins, nb_in, outs, nb_out, in_dims, out_dims, ebp, kernel):
    eb = IExprBuilder(ebp)
    try:
        in_types = [d.desc.type for d in dynamic_descs(ins, nb_in)]
        out_types = [d.desc.type for d in dynamic_descs(outs, nb_out)]
        got = br.kernel(tactic, in_types, out_types, read_dim_exprs(in_dims, nb_in, eb),
                        read_dim_exprs(out_dims, nb_out, eb), eb)
    finally:
        eb._end()
    if got is None:
        return C.PRT_ERR_UNSUPPORTED  # no kernel for this tactic: enqueue runs
    # The builder set struct_size; what it reads of the rest stays alive in
    # the bridge until the next get_kernel (it copies it after we return).
    k = C.prt_kernel_desc.from_address(kernel)
    size = k.struct_size
    ctypes.memmove(kernel, addressof(got[1]), min(size, sizeof(C.prt_kernel_desc)))
    k.struct_size = size
    return C.PRT_OK


@C.SET_TACTIC_FN
@_guard("set_tactic", C.PRT_ERR_PLUGIN)
def _r_set_tactic(br, tactic):
    br.set_tactic(tactic)
    return C.PRT_OK


@C.ON_SHAPE_CHANGE_FN
@_guard("on_shape_change", C.PRT_ERR_PLUGIN)
def _r_on_shape_change(br, ins, nb_in, outs, nb_out):
    # enqueue is not told how many inputs and outputs there are: learn it
    # here (the runtime calls this before a plugin object's first enqueue).
    br.nb_in, br.nb_out = nb_in, nb_out
    br.shape_change(tensor_descs(ins, nb_in), tensor_descs(outs, nb_out))
    return C.PRT_OK


def _r_enqueue_py(p, in_desc, out_desc, inputs, outputs, workspace, device, stream):
    # Written out, not through _guard: this is the per-run path.
    try:
        br = LIVE[p]
        if br.nb_in is None:
            raise RuntimeError("enqueue before on_shape_change")
        if not (br.devices >> device) & 1:
            raise RuntimeError("enqueue on device %d, which this plugin does not list"
                               % device)
        r = br.run(br.ptrs(inputs, br.nb_in, 0), br.ptrs(outputs, br.nb_out, 1),
                   workspace or 0, device, stream or 0)
        if r:
            raise RuntimeError("enqueue returned %r (None or 0 is success)" % (r,))
        return 0
    except BaseException as exc:  # noqa: BLE001
        _fail(p, "enqueue", exc)
        return C.PRT_ERR_PLUGIN


_r_enqueue = C.ENQUEUE_FN(_r_enqueue_py)


@C.REQUIRES_HOST_DIMS_FN
def _b_requires_host_dims(p, device):
    # Python code sizes its work from shapes on the host (torch, cupy and
    # numpy read them there), never from dims_device: on CUDA the runtime
    # then gives true dims in `dims` (waiting for the device first when an
    # earlier layer's size is involved).
    return 1 if device == C.PRT_DEVICE_CUDA else 0


@C.CAPTURE_SAFE_FN
def _b_capture_safe(p, device):
    br = LIVE.get(p)
    return 1 if br is None or br.capture_safe else 0


@C.ATTACH_FN
@_guard("attach_to_context", None)
def _r_attach(br, resources):
    dev = C.prt_plugin_resources.from_address(resources).device if resources else 0
    return br.attach(PluginResourceContext(dev, resources)).publish()


@C.CLONE_FN
@_guard("clone", None)
def _r_clone(br):
    return br.clone().publish()


@C.GET_FIELDS_FN
@_guard("get_fields_to_serialize", None)
def _r_fields(br):
    return br.fields_address()


@C.DESTROY_FN
def _r_destroy(p):
    LIVE.pop(p, None)


# Bridge methods the callbacks use, for class plugins.

def _cb_nb_outputs(self):
    return int(self.need_build().num_outputs)


def _cb_output_dtypes(self, ins):
    return self.need_build().get_output_data_types(ins)


def _cb_output_shapes(self, ins, sis, eb):
    return self.need_build().get_output_shapes(ins, sis, eb)


def _cb_supports(self, pos, in_out, nb_in, nb_out):
    # plugin.h: entries above pos may hold anything (the builder has not
    # chosen them; plugrt check fills them with garbage). A plugin reads
    # none of them, so one that no type or format describes is None here
    # rather than an exception that would refuse a combination the plugin
    # never looked at.
    descs: List[Optional[DynamicPluginTensorDesc]] = dynamic_descs(in_out, pos + 1)
    later = (C.prt_dynamic_tensor_desc * (nb_in + nb_out)).from_address(in_out)
    for k in range(pos + 1, nb_in + nb_out):
        try:
            descs.append(DynamicPluginTensorDesc._of(later[k]))
        except ValueError:
            descs.append(None)
    return self.need_build().supports_format_combination(pos, descs, nb_in)


def _cb_configure(self, ins, outs):
    f = getattr(self.need_build(), "configure_plugin", None)
    if f is not None:
        f(ins, outs)


def _cb_workspace(self, ins, outs):
    f = getattr(self.need_build(), "get_workspace_size", None)
    return f(ins, outs) if f is not None else 0


def _cb_tactics(self):
    f = getattr(self.need_build(), "get_valid_tactics", None)
    return f() if f is not None else []


def _cb_aliased(self, i):
    f = getattr(self.need_build(), "get_aliased_input", None)
    return f(i) if f is not None else -1


def _cb_set_tactic(self, t):
    f = getattr(self.runtime, "set_tactic", None)
    if f is not None:
        f(t)


def _cb_shape_change(self, ins, outs):
    self.in_descs, self.out_descs = ins, outs
    f = getattr(self.runtime, "on_shape_change", None)
    if f is not None:
        f(ins, outs)


def _cb_run(self, ins, outs, workspace, device, stream):
    if self._takes_device:
        return self._enqueue(self.in_descs, self.out_descs, ins, outs, workspace, stream,
                             device=_DEVICES[device])
    return self._enqueue(self.in_descs, self.out_descs, ins, outs, workspace, stream)


_DEVICES = (Device.CPU, Device.CUDA)


def _cb_attach(self, ctx):
    f = getattr(self.runtime, "attach_to_context", None)
    return self.copy_of(f(ctx) if f is not None else self._clone_obj())


def _cb_clone(self):
    return self.copy_of(self._clone_obj())


def _clone_obj(self):
    for o in (self.plugin, self.runtime, self.core):
        f = getattr(o, "clone", None)
        if f is not None:
            return f()
    return copy.deepcopy(self.plugin)


def _cb_fields_address(self):
    fc = self.runtime.get_fields_to_serialize()
    return self.serialize(fields_of(fc), self.module)


for _n, _f in (("nb_outputs", _cb_nb_outputs), ("output_dtypes", _cb_output_dtypes),
               ("output_shapes", _cb_output_shapes), ("supports", _cb_supports),
               ("configure", _cb_configure), ("workspace", _cb_workspace),
               ("tactics", _cb_tactics), ("aliased_input", _cb_aliased),
               ("set_tactic", _cb_set_tactic), ("shape_change", _cb_shape_change),
               ("run", _cb_run), ("attach", _cb_attach), ("clone", _cb_clone),
               ("_clone_obj", _clone_obj), ("fields_address", _cb_fields_address)):
    setattr(ClassBridge, _n, _f)

# One set of tables for every bridge (get_kernel answers PRT_ERR_UNSUPPORTED
# for plugins without an aot_impl). get_output_values stays NULL (no values
# are known).
_CORE = C.prt_plugin_core(sizeof(C.prt_plugin_core), C.PRT_PLUGIN_ABI_VERSION,
                          _core_name, _core_version, _core_namespace, _core_devices)
_BUILD = C.prt_plugin_build(sizeof(C.prt_plugin_build), C.PRT_PLUGIN_ABI_VERSION,
                            _b_nb_outputs, _b_dtypes, _b_shapes, _b_supports,
                            _b_configure, _b_workspace, _b_tactics, _b_aliased,
                            C.OUTPUT_VALUES_FN(), _b_requires_host_dims,
                            _b_set_target_device, _b_capture_safe, _b_get_kernel)
_RUNTIME = C.prt_plugin_runtime(sizeof(C.prt_plugin_runtime), C.PRT_PLUGIN_ABI_VERSION,
                                _r_set_tactic, _r_on_shape_change, _r_enqueue, _r_attach,
                                _r_fields, _r_clone, _r_destroy)
_VT = C.prt_plugin_vtable(sizeof(C.prt_plugin_vtable), C.PRT_PLUGIN_ABI_VERSION,
                          ctypes.pointer(_CORE), ctypes.pointer(_BUILD),
                          ctypes.pointer(_RUNTIME))
_VT_PTR = ctypes.pointer(_VT)


# ---------------------------------------------------------------------------
# C plugins and creators seen from Python
# ---------------------------------------------------------------------------

def _call_str(f, addr):
    r = f(addr)
    return ctypes.string_at(r).decode("utf-8", "replace") if r else ""


class CPlugin:
    """A plugin made by a creator that is not Python's (a plugin library's,
    or a built-in op's). Owned by Python until a network takes it
    (add_plugin_v3); destroyed when collected or by destroy()."""

    def __init__(self, addr: int, keep: Any = ()):
        self._addr: Optional[int] = addr
        self._keep = keep  # the registry whose library made it, kept loaded
        vt = C.prt_plugin.from_address(addr).vt.contents
        core = vt.core.contents
        self.plugin_name = _call_str(core.name, addr)
        self.plugin_version = _call_str(core.version, addr)
        self.plugin_namespace = _call_str(core.plugin_namespace, addr)
        self._runtime = vt.runtime.contents

    @property
    def num_outputs(self) -> int:
        vt = C.prt_plugin.from_address(self._need()).vt.contents
        return int(vt.build.contents.nb_outputs(self._addr)) if vt.build else -1

    def _need(self):
        if not self._addr:
            raise E.StateError("plugin %s was handed to a network or destroyed"
                               % self.plugin_name)
        return self._addr

    def clone(self) -> "CPlugin":
        p = self._runtime.clone(self._need())
        if not p:
            raise E.PluginError(C.last_error() or "%s: clone failed" % self.plugin_name)
        return CPlugin(p, self._keep)

    def _take(self):
        """Ownership to C: the address, and Python forgets it."""
        a = self._need()
        self._addr = None
        return a

    def destroy(self) -> None:
        if self._addr:
            a, self._addr = self._addr, None
            self._runtime.destroy(a)

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __repr__(self):
        return "<CPlugin %s::%s v%s>" % (self.plugin_namespace, self.plugin_name,
                                         self.plugin_version)


class CCreator:
    """A creator served by C (a plugin library's, a built-in op's), with
    TensorRT's attributes."""

    def __init__(self, addr: int, keep: Any = ()):
        self._addr = addr
        self._keep = keep
        c = C.prt_plugin_creator.from_address(addr)
        self._c = c
        self.name = C.s(c.name)
        self.plugin_version = C.s(c.version)
        self.plugin_namespace = C.s(c.plugin_namespace) or ""
        fl = []
        for i in range(c.nb_fields):
            f = c.fields[i]
            try:
                ft = PluginFieldType(f.type)
            except ValueError:
                continue
            pf = PluginField(C.s(f.name), None, ft)
            fl.append(pf)
        self.field_names = PluginFieldCollection(fl)
        self.field_docs = {C.s(c.fields[i].name): C.s(c.fields[i].doc) or ""
                           for i in range(c.nb_fields)}
        self.field_lengths = {C.s(c.fields[i].name): int(c.fields[i].length)
                              for i in range(c.nb_fields)}

    def create_plugin(self, name: str, fc: Any = None,
                      phase: TensorRTPhase = TensorRTPhase.BUILD) -> CPlugin:
        fs = FieldSet(fields_of(fc))
        out = c_void_p()
        E.call(self._c.create, self._addr, C.b(name or ""), fs.address, int(phase),
               ctypes.addressof(out))
        if not out.value:
            raise E.PluginError("%s: create returned no plugin" % self.name)
        return CPlugin(out.value, self._keep)

    def __repr__(self):
        return "<CCreator %s::%s v%s>" % (self.plugin_namespace, self.name,
                                          self.plugin_version)


# ---------------------------------------------------------------------------
# Python creators behind prt_plugin_creator
# ---------------------------------------------------------------------------

CREATORS: Dict[int, "CreatorBridge"] = {}  # address of the C creator -> its bridge


class CreatorBridge:
    """A prt_plugin_creator whose create() calls a Python creator."""

    def __init__(self, creator, namespace=None):
        self.creator = creator
        name = creator.name
        version = getattr(creator, "plugin_version", "1") or "1"
        ns = namespace if namespace is not None else (
            getattr(creator, "plugin_namespace", "") or "")
        for what, v in (("name", name), ("plugin_version", version),
                        ("plugin_namespace", ns)):
            if not isinstance(v, str):
                raise TypeError("creator %s must be a str, got %r" % (what, v))
        if not name:
            raise ValueError("a creator needs a name")
        self.name, self.version, self.namespace = name, version, ns
        self.module = getattr(creator, "_plugrt_module", None) or type(creator).__module__
        schema = self.schema()
        self._keep = [C.b(name), C.b(version), C.b(ns)]
        self._schema = (C.prt_field_schema * max(1, len(schema)))()
        for i, (fname, ftype, length, doc) in enumerate(schema):
            self._keep += [C.b(fname), C.b(doc)]
            self._schema[i] = C.prt_field_schema(C.b(fname), int(ftype), length, C.b(doc))
        self.struct = C.prt_plugin_creator(
            sizeof(C.prt_plugin_creator), C.PRT_PLUGIN_ABI_VERSION, self._keep[0],
            self._keep[1], self._keep[2], len(schema), self._schema, _CREATE, None)
        self.addr = addressof(self.struct)
        CREATORS[self.addr] = self

    @property
    def key(self):
        return "%s::%s version %s" % (self.namespace, self.name, self.version)

    def schema(self):
        out = []
        for f in fields_of(getattr(self.creator, "field_names", None)):
            n = len(f.data) if f.data is not None else 0
            out.append((f.name, f.type, n if n else -1, ""))
        return out

    def make(self, layer_name, fields, phase):
        plugin = self.creator.create_plugin(layer_name, fields, TensorRTPhase(phase))
        if plugin is None:
            raise ValueError("create_plugin returned None")
        if isinstance(plugin, Bridge):
            return plugin
        from .plugin._bridge import DecoratorPlugin  # noqa: PLC0415 - cycle
        if isinstance(plugin, DecoratorPlugin):
            return plugin._bridge()
        if isinstance(plugin, CPlugin):
            raise TypeError("create_plugin returned a C plugin; return a Python one")
        return ClassBridge(plugin, self.module)


def _create_py(cp, layer_name, fields, phase, out):
    cb = CREATORS.get(cp)
    try:
        fc = read_fields(fields)
        module = None
        for f in list(fc):
            if f.name == MODULE_FIELD:
                fc.remove(f)
                module = f.to_str()
        br = cb.make(C.s(layer_name) or "", fc, phase)
        if module and getattr(br, "module", None) is None:
            br.module = module
        c_void_p.from_address(out).value = br.publish()
        return C.PRT_OK
    except BaseException as exc:  # noqa: BLE001
        who = "Python plugin creator %s (%s.create_plugin)" % (
            cb.key if cb else "?", type(cb.creator).__qualname__ if cb else "?")
        # A plugrt.Error names its own status (InvalidArgumentError for a
        # bad field, as a C creator returns PRT_ERR_INVALID_ARGUMENT); any
        # other exception is the plugin's failure.
        st = exc.status if isinstance(exc, E.Error) and exc.status else C.PRT_ERR_PLUGIN
        E.report(exc, "%s raised %s: %s" % (who, type(exc).__name__, exc), st)
        return st


_CREATE = C.CREATE_FN(_create_py)


def set_plugin_tracebacks(on: bool) -> None:
    """Print the traceback of every exception a Python plugin raises, as it
    happens (they are always raised again to the caller of the C function,
    chained to the plugrt.Error)."""
    global _TRACE
    _TRACE = bool(on)


def plugin_address(plugin, module=None):
    """The prt_plugin * for a plugin handed to a network: (address, owner
    note). CPlugins give theirs up (C owns them from then on); Python
    plugins get a new bridge."""
    from .plugin._bridge import DecoratorPlugin  # noqa: PLC0415 - cycle
    if isinstance(plugin, CPlugin):
        if not plugin._addr:
            raise E.StateError("plugin %s was already handed to a network; clone() it "
                               "to use it twice" % plugin.plugin_name)
        return plugin
    if isinstance(plugin, DecoratorPlugin):
        return plugin._bridge()
    if isinstance(plugin, Bridge):
        return plugin
    if hasattr(plugin, "get_capability_interface") or hasattr(plugin, "plugin_name"):
        return ClassBridge(plugin, module)
    raise TypeError("not a plugin: %r" % (plugin,))


__all__ = ["IPluginV3", "IPluginV3OneCore", "IPluginV3OneBuild", "IPluginV3OneRuntime",
           "IPluginCreatorV3One", "Plugin", "PluginCreator", "PluginResourceContext",
           "CPlugin", "CCreator", "set_plugin_tracebacks", "MODULE_FIELD"]

"""Decorator plugins behind the C tables: definitions, attributes, the bridge
that serves each plugin object, and its creator."""

import inspect
import threading
import typing
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from .. import _capi as C
from .. import _errors as E
from .._plugin import Bridge, CreatorBridge, IPluginCreatorV3One
from .._types import (DataType, Device, DeviceLike, PluginField, PluginFieldCollection,
                      PluginFieldType, TensorFormat, to_device)
from . import _aot
from ._autotune import AutoTuneCombination
from ._shape import ShapeExpr, ShapeExprs, SizeTensorDesc, Tensor, TensorDesc

F = TypeVar("F", bound=Callable[..., Any])  # a decorated function, returned as it is

# ---------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------

_ARRAY_TYPES = {np.dtype(np.int8): PluginFieldType.INT8, np.dtype(np.int16): PluginFieldType.INT16,
                np.dtype(np.int32): PluginFieldType.INT32, np.dtype(np.int64): PluginFieldType.INT64,
                np.dtype(np.float16): PluginFieldType.FLOAT16,
                np.dtype(np.float32): PluginFieldType.FLOAT32,
                np.dtype(np.float64): PluginFieldType.FLOAT64,
                np.dtype(np.bool_): PluginFieldType.INT8}


class _Attr:
    """An attribute of a decorator plugin: its Python kind and field type."""
    __slots__ = ("name", "kind", "np", "ftype", "default", "has_default")

    def __init__(self, name, annotation, default):
        self.name = name
        self.has_default = default is not inspect.Parameter.empty
        self.default = default
        self.np = None
        if annotation in (int, float, str, bool, bytes):
            self.kind = annotation.__name__
            self.ftype = {"int": PluginFieldType.INT64, "float": PluginFieldType.FLOAT64,
                          "str": PluginFieldType.CHAR, "bool": PluginFieldType.INT32,
                          "bytes": PluginFieldType.BYTES}[self.kind]
            return
        dt = _ndarray_dtype(annotation)
        if dt is None:
            raise TypeError("attribute %r: annotate it as int, float, str, bool, bytes or a "
                            "1-D numpy array (numpy.typing.NDArray[np.int32], ...); got %r"
                            % (name, annotation))
        self.kind = "array"
        self.np = dt
        self.ftype = _ARRAY_TYPES[dt]

    @property
    def length(self):
        return 1 if self.kind in ("int", "float", "bool") else -1

    def coerce(self, v):
        """A user's value -> the attribute's Python value."""
        k = self.kind
        if k == "int":
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError("attribute %r must be an int, got %r" % (self.name, v))
            return int(v)
        if k == "float":
            if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
                raise TypeError("attribute %r must be a float, got %r" % (self.name, v))
            return float(v)
        if k == "bool":
            if not isinstance(v, (bool, np.bool_, int, np.integer)):
                raise TypeError("attribute %r must be a bool, got %r" % (self.name, v))
            return bool(v)
        if k == "str":
            if not isinstance(v, str):
                raise TypeError("attribute %r must be a str, got %r" % (self.name, v))
            return v
        if k == "bytes":
            if not isinstance(v, (bytes, bytearray)):
                raise TypeError("attribute %r must be bytes, got %r" % (self.name, v))
            return bytes(v)
        a = np.asarray(v)
        if a.ndim != 1:
            a = a.reshape(-1) if a.ndim == 0 else a
            if a.ndim != 1:
                raise TypeError("attribute %r must be a 1-D array, got shape %s" % (
                    self.name, a.shape))
        if a.size and a.dtype != self.np:
            if not np.can_cast(a.dtype, self.np, "same_kind") and not (
                    a.dtype.kind in "iub" and self.np.kind in "iu"):
                raise TypeError("attribute %r must be an array of %s, got %s" % (
                    self.name, self.np, a.dtype))
            b = a.astype(self.np)
            if a.dtype.kind in "iu" and not np.array_equal(b.astype(a.dtype), a):
                raise ValueError("attribute %r: values do not fit %s" % (self.name, self.np))
            a = b
        return np.ascontiguousarray(a, self.np)

    def to_field(self, v) -> PluginField:
        k = self.kind
        if k == "int":
            return PluginField(self.name, np.array([v], np.int64), PluginFieldType.INT64)
        if k == "float":
            return PluginField(self.name, np.array([v], np.float64), PluginFieldType.FLOAT64)
        if k == "bool":
            return PluginField(self.name, np.array([1 if v else 0], np.int32),
                               PluginFieldType.INT32)
        if k == "str":
            return PluginField(self.name, v.encode(), PluginFieldType.CHAR)
        if k == "bytes":
            return PluginField(self.name, v, PluginFieldType.BYTES)
        data = v.astype(np.int8) if self.np == np.bool_ else v
        return PluginField(self.name, data, self.ftype)

    def from_field(self, f: PluginField):
        """A field (from an engine, ONNX or a creator call) -> the value."""
        k = self.kind
        ft = f.type
        data = f.data
        if k == "str":
            if ft != PluginFieldType.CHAR:
                raise TypeError("field %r: a str attribute needs a CHAR field, got %s" % (
                    self.name, PluginFieldType(ft).name))
            return f.to_str()
        if k == "bytes":
            if ft not in (PluginFieldType.BYTES, PluginFieldType.CHAR, PluginFieldType.INT8):
                raise TypeError("field %r: a bytes attribute needs a BYTES field, got %s" % (
                    self.name, PluginFieldType(ft).name))
            return np.asarray(data).tobytes()
        if ft in (PluginFieldType.CHAR, PluginFieldType.BYTES, PluginFieldType.DIMS,
                  PluginFieldType.BF16):
            raise TypeError("field %r: a %s attribute cannot come from a %s field" % (
                self.name, k, PluginFieldType(ft).name))
        arr = np.asarray(data)
        if k in ("int", "float", "bool"):
            if arr.size != 1:
                raise ValueError("field %r: expected one value, got %d" % (self.name, arr.size))
            x = arr.reshape(-1)[0]
            if k == "int":
                if arr.dtype.kind == "f" and float(x) != int(x):
                    raise TypeError("field %r: %r is not an integer" % (self.name, x))
                return int(x)
            if k == "bool":
                return bool(x)
            return float(x)
        if self.np == np.bool_:
            return arr.astype(bool)
        if arr.dtype.kind == "f" and self.np.kind in "iu":
            raise TypeError("field %r: an array of %s cannot come from %s values" % (
                self.name, self.np, arr.dtype))
        return np.ascontiguousarray(arr.astype(self.np))


def _ndarray_dtype(ann):
    """np.dtype of numpy.typing.NDArray[X] (or np.ndarray[Any, np.dtype[X]])."""
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is not np.ndarray and getattr(origin, "__value__", None) is not None:
        # numpy >= 2.3 spells NDArray as a type alias (PEP 695), so
        # NDArray[X] is the alias with the one argument X.
        if len(args) != 1:
            return None
        scalar = args[0]
    elif origin is np.ndarray and len(args) == 2:
        dt_args = typing.get_args(args[1])
        if not dt_args:
            return None
        scalar = dt_args[0]
    else:
        return None
    try:
        d = np.dtype(scalar)
    except TypeError:
        return None
    return d if d in _ARRAY_TYPES else None


# ---------------------------------------------------------------------------
# Definitions
# ---------------------------------------------------------------------------

_DEFS: Dict[str, "PluginDef"] = {}
_defs_lock = threading.Lock()


def _is_tensor_desc(ann):
    return ann is TensorDesc or ann == "TensorDesc" or (
        isinstance(ann, str) and ann.endswith(".TensorDesc"))


def _hints(fn):
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - fall back to raw annotations
        return dict(getattr(fn, "__annotations__", {}))


def _outputs_from_annotation(ret):
    if ret is None or ret is inspect.Signature.empty:
        return None
    if ret is TensorDesc or ret is SizeTensorDesc:
        return 1
    if typing.get_origin(ret) in (tuple, Tuple):
        args = typing.get_args(ret)
        if args and args[-1] is not Ellipsis:
            return len(args)
    return None


class PluginDef:
    """A decorator plugin: its register function (shapes and types), impl
    (the computation), optional autotune (combinations and tactics) and
    attributes."""

    def __init__(self, plugin_id: str, fn: Callable[..., Any]):
        if not isinstance(plugin_id, str) or "::" not in plugin_id:
            raise ValueError("a plugin id is 'namespace::name', got %r" % (plugin_id,))
        ns, name = plugin_id.rsplit("::", 1)
        if not name:
            raise ValueError("plugin id %r has no name" % plugin_id)
        self.id, self.namespace, self.name, self.version = plugin_id, ns, name, "1"
        self.register_fn = fn
        self.module = getattr(fn, "__module__", None) or "__main__"
        hints = _hints(fn)
        sig = inspect.signature(fn)
        self.inputs = []
        self.attrs: Dict[str, _Attr] = {}
        for p in sig.parameters.values():
            ann = hints.get(p.name, p.annotation)
            if _is_tensor_desc(ann):
                if self.attrs:
                    raise TypeError("%s: tensor inputs come before attributes (%r)" % (
                        plugin_id, p.name))
                self.inputs.append(p.name)
            elif p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError("%s: *args and **kwargs are not supported" % plugin_id)
            else:
                self.attrs[p.name] = _Attr(p.name, ann, p.default)
        self.nb_outputs_hint = _outputs_from_annotation(hints.get("return", sig.return_annotation))
        # prt_device -> (impl function, its (attrs, extras))
        self.impls: Dict[int, Tuple[Callable[..., Any], Any]] = {}
        self.aot_fn: Optional[Callable[..., Any]] = None
        self.aot_args: Any = None
        self.autotune_fn: Optional[Callable[..., Any]] = None
        self.autotune_args: Any = None
        self.capture_safe = True  # register(..., capture_safe=)
        self.creator = _DecoratorCreator(self)

    def _params(self, fn, what, extra):
        sig = inspect.signature(fn)
        names = list(sig.parameters)
        has_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        if len(names) < len(self.inputs):
            raise TypeError("%s: the %s function takes the %d inputs first (%s)" % (
                self.id, what, len(self.inputs), ", ".join(self.inputs)))
        rest = names[len(self.inputs):]
        for n in rest:
            if n not in self.attrs and n not in extra:
                raise TypeError("%s: %s parameter %r is neither an attribute (%s) nor one of "
                                "%s" % (self.id, what, n, ", ".join(self.attrs) or "none",
                                        ", ".join(extra)))
        return set(self.attrs) if has_kw else {n for n in rest if n in self.attrs}, \
            {n for n in extra if n in rest or has_kw}

    def set_impl(self, fn: Callable[..., Any],
                 devices: Union[DeviceLike, Sequence[DeviceLike]] = ("cpu",)) -> None:
        args = self._params(fn, "impl", ("outputs", "stream", "tactic"))
        if "outputs" not in args[1]:
            raise TypeError("%s: impl needs an 'outputs' parameter" % self.id)
        if isinstance(devices, (str, int)):
            devices = [devices]
        ds = []
        for d in devices:
            try:
                ds.append(int(to_device(d)))
            except (ValueError, TypeError):
                raise ValueError("%s: impl device %r is not 'cpu' or 'cuda'" % (
                    self.id, d)) from None
        if not ds:
            raise ValueError("%s: impl for no device" % self.id)
        for d in ds:
            self.impls[d] = (fn, args)

    @property
    def device_mask(self) -> int:
        """The devices impl functions run on, and CUDA with an aot_impl (the
        CPU alone for a plugin with neither yet)."""
        m = sum(1 << d for d in self.impls)
        if self.aot_fn is not None:
            m |= 1 << Device.CUDA
        return m or 1 << Device.CPU

    def set_aot_impl(self, fn: Callable[..., Any]) -> None:
        self.aot_args = self._params(fn, "aot_impl", ("outputs", "tactic"))
        self.aot_fn = fn

    @property
    def has_jit_cuda(self) -> bool:
        return int(Device.CUDA) in self.impls

    @property
    def impl_fn(self) -> Optional[Callable[..., Any]]:
        """The impl function (the CPU's, or the first device's)."""
        got = self.impls.get(int(Device.CPU)) or next(iter(self.impls.values()), None)
        return got[0] if got else None

    def set_autotune(self, fn: Callable[..., Any]) -> None:
        self.autotune_fn = fn
        self.autotune_args = self._params(fn, "autotune", ("outputs",))

    def __repr__(self) -> str:
        return "<plugrt.plugin.PluginDef %s(%s) on %s%s>" % (
            self.id, ", ".join(self.inputs + [a.name + ("=%r" % (a.default,) if a.has_default
                                                        else "") for a in self.attrs.values()]),
            "+".join(Device(d).name.lower() for d in sorted(self.impls)) or "no device",
            ", autotune" if self.autotune_fn else "")

    def attr_values(self, given: Dict[str, Any]) -> Dict[str, Any]:
        out = {}
        for n in given:
            if n not in self.attrs:
                raise TypeError("%s has no attribute %r (it has %s)" % (
                    self.id, n, ", ".join(self.attrs) or "none"))
        for n, a in self.attrs.items():
            if n in given:
                out[n] = a.coerce(given[n])
            elif a.has_default:
                out[n] = a.coerce(a.default) if a.default is not None else None
            else:
                raise TypeError("%s: attribute %r is required" % (self.id, n))
        return out

    def call_register(self, descs: Sequence[TensorDesc],
                      attrs: Dict[str, Any]) -> Tuple[TensorDesc, ...]:
        got = self.register_fn(*descs, **attrs)
        if isinstance(got, TensorDesc):
            got = (got,)
        got = tuple(got)
        for i, d in enumerate(got):
            if not isinstance(d, TensorDesc):
                raise TypeError("the register function returned %r as output %d; "
                                "expected TensorDesc" % (d, i))
        return got


# ---------------------------------------------------------------------------
# The plugin object users hold, and the C-side bridge
# ---------------------------------------------------------------------------


class DecoratorPlugin:
    """An instance of a decorator plugin with its attribute values
    (what plugrt.plugin.op.<ns>.<name>(...) puts in a network)."""
    __slots__ = ("pdef", "attrs", "hints", "aot")

    def __init__(self, pdef: PluginDef, attrs: Dict[str, Any], hints: Any = None,
                 aot: Optional[bool] = None):
        self.pdef = pdef
        self.attrs = attrs
        self.hints = hints
        # True/False: this layer runs aot_impl's kernel / impl on CUDA
        # (network.add_plugin(..., aot=), an ONNX node's `aot`); None: the
        # builder flags or what the plugin has decide (_use_aot).
        self.aot = aot

    @property
    def plugin_name(self) -> str:
        return self.pdef.name

    @property
    def plugin_namespace(self) -> str:
        return self.pdef.namespace

    @property
    def plugin_version(self) -> str:
        return self.pdef.version

    def _bridge(self):
        b = DecoratorBridge(self.pdef, self.attrs, self.hints)
        b.aot = self.aot
        return b

    def __repr__(self):
        return "<decorator plugin %s %r>" % (self.pdef.id, self.attrs)


def _fake_desc(dtype, rank, index=None):
    d = TensorDesc(ShapeExprs(rank), dtype)
    d._index = index
    return d


class DecoratorBridge(Bridge):
    """Serves one decorator plugin object for C."""

    def __init__(self, pdef: PluginDef, attrs, hints=None):
        super().__init__(pdef.name, pdef.version, pdef.namespace, 0)
        self.pdef = pdef
        self.attrs = attrs
        self.module = pdef.module
        self.capture_safe = pdef.capture_safe
        self.hints = hints  # [(dtype or None, rank or None)] per input, from the network
        self.in_dtypes = None
        self.out_dtypes = None
        self.in_ranks = None
        self.out_ranks = None
        self.aliases = None  # output -> input it shares memory with (None: not known yet)
        self.combos = None
        self.tactic = 0
        self._tactics = None
        self._count = None
        self.in_tensors = ()
        self.out_tensors = ()
        self.kwargs = None
        self._stream = None
        self._dev = None  # the device in_tensors, out_tensors and kwargs are set up for
        self._fn = None
        self._fields = None
        self._dtype_cache: Dict[Tuple[Any, ...], List[Any]] = {}
        self.aot: Optional[bool] = None
        self._kernel_keep = None  # the last get_kernel's desc, read by the builder

    @property
    def devices(self):
        return self.pdef.device_mask

    def describe(self, entry):
        impl = self.pdef.impls.get(self._dev)
        fn = {"enqueue": impl[0] if impl else self.pdef.impl_fn,
              "supports_format_combination": self.pdef.autotune_fn,
              "get_valid_tactics": self.pdef.autotune_fn}.get(entry, self.pdef.register_fn)
        what = {"enqueue": "impl", "supports_format_combination": "autotune",
                "get_valid_tactics": "autotune"}.get(entry, "register")
        if entry == "get_kernel":
            fn, what = self.pdef.aot_fn, "aot_impl"
        return "Python plugin %s (%s function %s, while plugrt asked for %s)" % (
            self.pdef.id, what, getattr(fn, "__qualname__", "?"), entry)

    def _register_attrs(self):
        return self.attrs

    # -- learning outputs from placeholder descriptors ------------------------
    def _probe(self, dtypes):
        """Calls the register function with placeholder shapes (the rank the
        network told, else ranks 1..8 until one works)."""
        n = len(self.pdef.inputs)
        ranks = []
        if self.in_ranks is not None:
            ranks.append(tuple(self.in_ranks))
        if self.hints and all(h[1] is not None for h in self.hints):
            ranks.append(tuple(h[1] for h in self.hints))
        ranks += [(r,) * n for r in range(1, 9)] + [(0,) * n]
        first = None
        for rk in ranks:
            try:
                return self.pdef.call_register(
                    [_fake_desc(dt, r, i) for i, (dt, r) in enumerate(zip(dtypes, rk))],
                    self.attrs)
            except Exception as exc:  # noqa: BLE001 - try the next rank
                if first is None:
                    first = exc
        raise first

    def nb_outputs(self):
        if self._count is None:
            hint = self.pdef.nb_outputs_hint
            if hint is None:
                dts = [(h[0] if self.hints and h[0] is not None else DataType.FLOAT)
                       for h in (self.hints or [(None, None)] * len(self.pdef.inputs))]
                hint = len(self._probe(dts))
            self._count = hint
        return self._count

    def output_dtypes(self, ins):
        if len(ins) != len(self.pdef.inputs):
            raise ValueError("%s takes %d inputs (%s); the layer has %d" % (
                self.pdef.id, len(self.pdef.inputs), ", ".join(self.pdef.inputs), len(ins)))
        self.in_dtypes = list(ins)
        key = tuple(ins)
        got = self._dtype_cache.get(key)
        if got is None:
            got = self._dtype_cache[key] = [d.dtype for d in self._probe(ins)]
        for i, d in enumerate(got):
            if d is None:
                raise ValueError("output %d has no dtype" % i)
        self.out_dtypes = list(got)
        return got

    def output_shapes(self, ins, sis, eb):
        dts = self.in_dtypes or [DataType.FLOAT] * len(ins)
        descs = []
        for i, (dims, dt) in enumerate(zip(ins, dts)):
            d = TensorDesc(ShapeExprs([ShapeExpr._leaf(e) for e in dims]), dt)
            d._index = i
            descs.append(d)
        self.in_ranks = [len(d) for d in ins]
        outs = self.pdef.call_register(descs, self.attrs)
        sizes, memo = {}, {}
        for i, d in enumerate(outs):
            if isinstance(d, SizeTensorDesc):
                sizes[id(d)] = eb.declare_size_tensor(i, d.opt._lower(eb, sizes, memo),
                                                      d.upper_bound._lower(eb, sizes, memo))
        result, self.aliases = [], {}
        for i, d in enumerate(outs):
            if isinstance(d, SizeTensorDesc):
                result.append([])
                continue
            if d.shape_expr is None:
                raise ValueError("output %d has no shape_expr" % i)
            result.append([e._lower(eb, sizes, memo) for e in d.shape_expr])
            a = d.get_aliased()
            if a is not None:
                if a._index is None:
                    raise ValueError("output %d is aliased to a TensorDesc that is not an "
                                     "input of this call" % i)
                self.aliases[i] = a._index
        self.out_ranks = [len(r) for r in result]
        self.combos = None
        return result

    # -- formats and tactics --------------------------------------------------
    def _combos(self, nb_in, nb_out):
        if self.combos is None:
            if self.pdef.autotune_fn is None:
                self.combos = []
            else:
                in_r = self.in_ranks or [0] * nb_in
                out_r = self.out_ranks or [0] * nb_out
                ins = [_fake_desc(dt, r) for dt, r in zip(self.in_dtypes or [None] * nb_in, in_r)]
                outs = tuple(_fake_desc(dt, r) for dt, r in zip(
                    self.out_dtypes or [None] * nb_out, out_r))
                attrs_used, extra = self.pdef.autotune_args
                kw = {n: self.attrs[n] for n in attrs_used}
                if "outputs" in extra:
                    kw["outputs"] = outs
                got = self.pdef.autotune_fn(*ins, **kw)
                if isinstance(got, AutoTuneCombination):
                    got = [got]
                combos = []
                for c in got:
                    if not isinstance(c, AutoTuneCombination):
                        raise TypeError("autotune returned %r; expected AutoTuneCombination" % (c,))
                    for types, formats in c._combinations(nb_in + nb_out):
                        combos.append((types, formats, c._tactics))
                self.combos = combos
        return self.combos

    def supports(self, pos, in_out, nb_in, nb_out):
        arr = (C.prt_dynamic_tensor_desc * (pos + 1)).from_address(in_out)
        got = [(arr[k].desc.dtype, arr[k].desc.format) for k in range(pos + 1)]
        combos = self._combos(nb_in, nb_out)
        if not combos:
            dt, fmt = got[pos]
            if fmt != TensorFormat.LINEAR:
                return False
            if pos >= nb_in and self.out_dtypes is not None:
                return dt == self.out_dtypes[pos - nb_in]
            return True
        for types, formats, _ in combos:
            if all((types[k] is None or types[k] == got[k][0]) and formats[k] == got[k][1]
                   for k in range(pos + 1)):
                return True
        return False

    def configure(self, ins, outs):
        pass

    def workspace(self, ins, outs):
        """The global scratch an aot_impl kernel asks for, at the profile's
        largest shapes: aot_impl called with those shapes as constants."""
        if not self.pdef.aot_fn or self.target != Device.CUDA or not self._use_aot():
            return 0
        ind = [TensorDesc(ShapeExprs(list(d.max)), d.desc.type) for d in ins]
        outd = [TensorDesc(ShapeExprs(list(d.max)), d.desc.type) for d in outs]
        kd = _aot.describe(self._call_aot(ind, outd), len(ins), len(outs),
                           self._aot_who())
        if kd.workspace is None:
            return 0
        if not kd.workspace.is_constant:
            raise ValueError("the global scratch size is not a constant at the largest "
                             "shapes")
        return kd.workspace.constant_value

    # -- the AOT kernel ---------------------------------------------------------
    def _aot_who(self):
        return "aot_impl of %s (%s)" % (self.pdef.id,
                                        getattr(self.pdef.aot_fn, "__qualname__", "?"))

    def _use_aot(self) -> bool:
        """Whether this layer runs aot_impl's kernel on CUDA, as TensorRT
        chooses: the layer's aot (add_plugin(..., aot=), an ONNX node's
        attribute), else the builder flags PREFER_AOT_PYTHON_PLUGINS /
        PREFER_JIT_PYTHON_PLUGINS, else the one implementation there is;
        with both and nothing choosing, the build fails saying how to."""
        p = self.pdef
        if p.aot_fn is None:
            if self.aot:
                raise ValueError("%s: the layer asks for its AOT implementation (aot=True) "
                                 "but the plugin has no @plugrt.plugin.aot_impl" % p.id)
            return False
        if self.aot is not None:
            if not self.aot and not p.has_jit_cuda:
                raise ValueError("%s: the layer asks for its JIT implementation (aot=False) "
                                 "but the plugin has no @plugrt.plugin.impl(%r, "
                                 "device='cuda')" % (p.id, p.id))
            return bool(self.aot)
        prefer_aot, prefer_jit = _current_preference()
        if prefer_aot and prefer_jit:
            raise ValueError("both PREFER_AOT_PYTHON_PLUGINS and PREFER_JIT_PYTHON_PLUGINS "
                             "are set; set one")
        if prefer_aot or not p.has_jit_cuda:
            return True
        if prefer_jit:
            return False
        raise ValueError(
            "%s has both an impl and an aot_impl for CUDA: choose with "
            "network.add_plugin(..., aot=True/False), the builder flag "
            "PREFER_AOT_PYTHON_PLUGINS or PREFER_JIT_PYTHON_PLUGINS, or an ONNX node "
            "attribute aot" % p.id)

    def _call_aot(self, ins, outs):
        for i, d in enumerate(ins):
            d._index = i
        attrs_used, extra = self.pdef.aot_args
        kw = {n: self.attrs[n] for n in attrs_used}
        if "outputs" in extra:
            kw["outputs"] = tuple(outs)
        if "tactic" in extra:
            kw["tactic"] = self.tactic
        return self.pdef.aot_fn(*ins, **kw)

    def kernel(self, tactic, in_types, out_types, in_dims, out_dims, eb):
        """get_kernel: the prt_kernel_desc of aot_impl's kernel for `tactic`,
        or None when this layer runs impl (the JIT path)."""
        self._kernel_keep = None
        if not self._use_aot():
            return None
        self.tactic = int(tactic)
        ins = [TensorDesc(_aot.shape_exprs(d), t) for d, t in zip(in_dims, in_types)]
        outs = [TensorDesc(_aot.shape_exprs(d), t) for d, t in zip(out_dims, out_types)]
        kd = _aot.describe(self._call_aot(ins, outs), len(ins), len(outs),
                           self._aot_who())
        desc = _aot.lower(kd, eb)
        self._kernel_keep = kd  # the builder copies it after get_kernel returns
        return kd, desc

    def tactics(self):
        """The tactics declared for this layer's types, in declaration order:
        the builder runs no other (the first without autotuning). Types are
        fixed per layer (inputs keep their producers', outputs take
        output_dtypes'), so only combinations of those types count; their
        formats may still differ, and the C ABI has one list per plugin."""
        combos = self._combos(self.nb_in or len(self.pdef.inputs),
                              self.nb_out or self.nb_outputs())
        types = list(self.in_dtypes or []) + list(self.out_dtypes or [])
        fit = [tl for tt, _, tl in combos if len(tt) == len(types) and all(
            t is None or t == d for t, d in zip(tt, types))]
        got = list(dict.fromkeys(t for tl in (fit or [tl for _, _, tl in combos])
                                 for t in tl))
        if not self.pdef.impls:
            # An aot_impl alone has nothing the builder can time (it times
            # enqueue, which is impl): the first declared tactic is the one.
            return got[:1]
        return got

    def aliased_input(self, i):
        return (self.aliases or {}).get(i, -1)

    def _learn_aliases(self, ins):
        """For a plugin that never saw get_output_shapes (recreated from an
        engine): which outputs are aliased, from placeholder descriptors."""
        self.in_ranks = [len(d.dims) for d in ins]
        outs = self._probe([d.type for d in ins])
        self.aliases = {i: d.get_aliased()._index for i, d in enumerate(outs)
                        if d.get_aliased() is not None and d.get_aliased()._index is not None}

    def set_tactic(self, t):
        self.tactic = int(t)
        if self.kwargs is not None and "tactic" in self.kwargs:
            self.kwargs["tactic"] = self.tactic

    # -- running --------------------------------------------------------------
    def shape_change(self, ins, outs):
        if self.aliases is None:
            self._learn_aliases(ins)
        self.in_tensors = tuple(Tensor(d.dims, d.type, readonly=True) for d in ins)
        outs_t = tuple(Tensor(d.dims, d.type) for d in outs)
        for t, d in zip(self.in_tensors + outs_t, list(ins) + list(outs)):
            t._quant = d.quantization
        for i, j in self.aliases.items():
            if i < len(outs_t) and j < len(self.in_tensors):
                outs_t[i]._aliased = self.in_tensors[j]
        self.out_tensors = outs_t
        self._dev = None  # the next run sets the tensors' device and the arguments

    def _set_device(self, device, stream):
        """Points the tensors and the arguments at `device`'s impl."""
        impl = self.pdef.impls.get(device)
        if impl is None:
            raise RuntimeError("%s has no impl for %s (@plugrt.plugin.impl(%r, device=%r))"
                               % (self.pdef.id, Device(device).name, self.pdef.id,
                                  Device(device).name.lower()))
        fn, (attrs_used, extra) = impl
        for t in self.in_tensors + self.out_tensors:
            t._device, t._stream = device, stream
        kw = {n: self.attrs[n] for n in attrs_used}
        kw["outputs"] = self.out_tensors
        if "stream" in extra:
            kw["stream"] = stream
        if "tactic" in extra:
            kw["tactic"] = self.tactic
        self.kwargs, self._fn, self._dev, self._stream = kw, fn, device, stream

    def run(self, ins, outs, workspace, device, stream):
        if device != self._dev:
            self._set_device(device, stream)
        elif stream != self._stream:
            for t in self.in_tensors + self.out_tensors:
                t._stream = stream
            if "stream" in self.kwargs:
                self.kwargs["stream"] = stream
            self._stream = stream
        for t, p in zip(self.in_tensors, ins):
            t._ptr = p
        for t, p in zip(self.out_tensors, outs):
            t._ptr = p
        return self._fn(*self.in_tensors, **self.kwargs)

    def _copy(self):
        b = DecoratorBridge(self.pdef, self.attrs, self.hints)
        b.nb_in, b.nb_out = self.nb_in, self.nb_out
        b.in_dtypes, b.out_dtypes = self.in_dtypes, self.out_dtypes
        b.in_ranks, b.out_ranks = self.in_ranks, self.out_ranks
        b.aliases = dict(self.aliases) if self.aliases is not None else None
        b.tactic = self.tactic
        b.aot = self.aot
        b._count = self._count
        b._fields = self._fields
        return b

    def attach(self, ctx):
        if not self.pdef.impls:
            raise E.StateError("%s has no impl function (@plugrt.plugin.impl(%r))%s" % (
                self.pdef.id, self.pdef.id,
                "; its aot_impl runs only as a kernel layer of an engine built for CUDA"
                if self.pdef.aot_fn else ""))
        return self._copy()

    def clone(self):
        return self._copy()

    def fields_address(self):
        if self._fields is None:
            self._fields = [self.pdef.attrs[n].to_field(v) for n, v in self.attrs.items()
                            if v is not None]
        return self.serialize(self._fields, self.module)


class _DecoratorCreator(IPluginCreatorV3One):
    """The creator of a decorator plugin: fields -> attribute values."""

    def __init__(self, pdef: PluginDef):
        self.pdef = pdef
        self.name = pdef.name
        self.plugin_version = pdef.version
        self.plugin_namespace = pdef.namespace
        self._plugrt_module = pdef.module
        self.field_names = PluginFieldCollection(
            [PluginField(a.name, None, a.ftype) for a in pdef.attrs.values()])
        self._plugrt_creator_bridge = _DecoratorCreatorBridge(self)

    def create_plugin(self, name, fc, phase):
        given = {}
        aot = None
        for f in fc or []:
            a = self.pdef.attrs.get(f.name)
            if a is None:
                if f.name == "aot" and f.type != PluginFieldType.CHAR:
                    # An ONNX node's `aot` attribute chooses the AOT or JIT
                    # implementation, as TensorRT's parser takes it.
                    aot = bool(np.asarray(f.data).reshape(-1)[0])
                continue  # unknown fields are ignored, as the C plugins do
            given[f.name] = a.from_field(f)
        return DecoratorPlugin(self.pdef, self.pdef.attr_values(given), aot=aot)


class _DecoratorCreatorBridge(CreatorBridge):
    def schema(self):
        return [(a.name, a.ftype, a.length, "%s attribute of %s" % (a.kind, self.creator.pdef.id))
                for a in self.creator.pdef.attrs.values()]


# ---------------------------------------------------------------------------
# The public decorators
# ---------------------------------------------------------------------------


def register(plugin_id: str, lazy_register: bool = False,
             capture_safe: bool = True) -> Callable[[F], F]:
    """Registers a plugin 'namespace::name' (version "1") whose shapes and
    types the decorated function gives: its parameters are the inputs
    (annotated TensorDesc), then the attributes (annotated int, float, str,
    bool, bytes or numpy.typing.NDArray[...]; defaults allowed); it returns
    the outputs' TensorDescs (a tuple for several).

    The function may be called more than once, also with placeholder shapes
    (to learn how many outputs there are and their types before shapes are
    known), so it must be pure: no side effects, the same answer each time.

    The plugin's creator joins the default registry (trt.get_plugin_registry()),
    so ONNX nodes with its op type and plugin_namespace, and engines holding
    it, find it once the module defining it is imported.

    capture_safe=False says the impl must not be captured into a CUDA graph
    (it synchronizes, allocates, or decides on the host from this run's
    values): the engine records it, and graph capture of a context of it
    fails naming the layer instead of inside the driver."""
    def deco(fn):
        pdef = PluginDef(plugin_id, fn)
        pdef.capture_safe = bool(capture_safe)
        with _defs_lock:
            if plugin_id in _DEFS:
                raise ValueError("plugin %s is already registered (by %s)" % (
                    plugin_id, _DEFS[plugin_id].register_fn.__qualname__))
            from .._registry import get_plugin_registry  # noqa: PLC0415
            get_plugin_registry().register_creator(pdef.creator)
            _DEFS[plugin_id] = pdef
        return fn
    return deco


def _get(plugin_id, what):
    pdef = _DEFS.get(plugin_id)
    if pdef is None:
        raise ValueError("@%s(%r): register the plugin first (@plugrt.plugin.register)" % (
            what, plugin_id))
    return pdef


def impl(plugin_id: str,
         device: Union[DeviceLike, Sequence[DeviceLike]] = "cpu") -> Callable[[F], F]:
    """The computation: the decorated function takes the input Tensors, the
    attributes it names, `outputs` (a tuple of Tensors to write), and
    optionally `stream` (the cudaStream_t as an int; 0 on the CPU) and
    `tactic`.

    `device` says where it runs: "cpu" (the default; Tensors with
    __array_interface__), "cuda" (Tensors with __cuda_array_interface__ and
    DLPack: torch, cupy, Triton), or a list for one function serving both
    (Tensor.device tells which). A plugin may have one impl per device; it
    runs on the devices that have one. TensorRT's impl is CUDA's: write
    @impl(id, device="cuda") for what tensorrt.plugin's @impl(id) does."""
    def deco(fn):
        _get(plugin_id, "impl").set_impl(fn, device)
        return fn
    return deco


def autotune(plugin_id: str) -> Callable[[F], F]:
    """The combinations offered: the decorated function takes the input
    TensorDescs, the attributes it names and `outputs` (their TensorDescs) and
    returns a list of AutoTuneCombination.

    As in TensorRT, every build times the declared tactics (and accepted
    combinations): the builder runs impl on random data at the profile's
    opt shapes, once per candidate, and keeps the fastest whose outputs agree
    with the first declared tactic's. impl is only ever called with a
    declared tactic; with IBuilderConfig.autotune = False, the first one."""
    def deco(fn):
        _get(plugin_id, "autotune").set_autotune(fn)
        return fn
    return deco


def aot_impl(plugin_id: str) -> Callable[[F], F]:
    """An ahead-of-time implementation (tensorrt.plugin's aot_impl): the
    decorated function takes the input TensorDescs, the attributes it
    names, `outputs` (their TensorDescs) and `tactic`, and returns
    (kernel_name, compiled_kernel, KernelLaunchParams, extra_args).

    compiled_kernel is PTX (str or bytes) or a cubin (bytes, told by its
    ELF magic), or a list of them (cubins for several capabilities beside
    PTX). The launch sizes and extra_args (SymExprs of SymInt32, SymInt64,
    SymFloat32, SymFloat64, or plain ints/floats) are expressions over the
    TensorDescs' shape_expr. The kernel's parameters are the input
    pointers, then extra_args, then the output pointers (as TensorRT passes
    them), or the order KernelLaunchParams.arg_order gives (plugrt's);
    trailing parameters the code declares beyond those (Triton's scratch
    pointers) are passed NULL, or the workspace for global scratch
    (KernelLaunchParams.global_scratch).

    A CUDA build embeds the kernel in the engine (a kernel layer: it runs
    with no Python, given allow_embedded_kernels); attribute values it
    uses become constants there. With both impl (on CUDA) and aot_impl, the
    layer's aot, the builder flags PREFER_AOT_PYTHON_PLUGINS /
    PREFER_JIT_PYTHON_PLUGINS or an ONNX node's `aot` attribute choose."""
    def deco(fn):
        _get(plugin_id, "aot_impl").set_aot_impl(fn)
        return fn
    return deco


# The builder flags of the build under way on this thread: (prefer AOT,
# prefer JIT), set by Builder.build_engine_with_config around the C build
# (which calls the plugins on the building thread).
_BUILD_STATE = threading.local()


def _current_preference() -> Tuple[bool, bool]:
    return getattr(_BUILD_STATE, "prefer", (False, False))


class building:
    """with building(prefer_aot, prefer_jit): the thread's build flags."""

    def __init__(self, prefer_aot: bool, prefer_jit: bool):
        self.prefer = (bool(prefer_aot), bool(prefer_jit))

    def __enter__(self):
        self.saved = getattr(_BUILD_STATE, "prefer", (False, False))
        _BUILD_STATE.prefer = self.prefer
        return self

    def __exit__(self, *exc):
        _BUILD_STATE.prefer = self.saved
        return False


def get_plugin(plugin_id: str) -> PluginDef:
    return _get(plugin_id, "get_plugin")


class _OpName:
    def __init__(self, ns, name):
        self._id = "%s::%s" % (ns, name)

    def __call__(self, *tensors, **attrs):
        pdef = _DEFS.get(self._id)
        if pdef is None:
            raise AttributeError("no decorator plugin %s is registered" % self._id)
        if len(tensors) != len(pdef.inputs):
            raise TypeError("%s takes %d tensors (%s), got %d" % (
                self._id, len(pdef.inputs), ", ".join(pdef.inputs), len(tensors)))
        hints = []
        for t in tensors:
            try:
                shape, dt = t.shape, t.dtype
            except Exception:  # noqa: BLE001
                shape, dt = None, None
            hints.append((dt, len(shape) if shape is not None else None))
        return (list(tensors), [], DecoratorPlugin(pdef, pdef.attr_values(attrs), hints))


class _OpNamespace:
    def __init__(self, ns):
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _OpName(self._ns, name)


class _Op:
    """plugrt.plugin.op.<namespace>.<name>(tensors..., **attrs) -> what
    INetworkDefinition.add_plugin takes."""

    def __getattr__(self, ns):
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _OpNamespace(ns)


op = _Op()

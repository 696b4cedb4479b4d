"""Networks, the builder, its config and profiles, and the ONNX parser."""

import ctypes
import enum
import os
import re
import weakref
from ctypes import byref, c_char_p, c_int32, c_int64, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _capi as C
from . import _errors as E
from ._lifetime import Closable
from ._plugin import LIVE, Bridge, plugin_address
from ._registry import ILogger, Registry, _WithRegistry, get_plugin_registry, use_logger
from ._types import (DataType, Device, DeviceLike, Dims, DTypeLike, MemoryPoolType, Quantization,
                     to_device, to_dtype, volume)

if TYPE_CHECKING:  # the runtime imports this module
    from ._runtime import ICudaEngine


def _destroy_box(fn, box, keep):
    if box[0]:
        h, box[0] = box[0], None
        fn(h)


def _destroy_parser(f, h, keep):
    f(h)


class ITensor:
    """A tensor of a network (an id in it)."""
    __slots__ = ("_net", "_id", "__weakref__")

    def __init__(self, net: "INetworkDefinition", tid: int):
        self._net = net
        self._id = tid

    def _info(self):
        name = c_char_p()
        dtype = c_int32()
        dims = C.prt_dims()
        E.call(C.fn.network_get_tensor, self._net.handle, self._id, byref(name), byref(dtype),
               byref(dims))
        return C.s(name.value), dtype.value, dims

    @property
    def name(self) -> str:
        return self._info()[0]

    @name.setter
    def name(self, value: str) -> None:
        E.call(C.fn.network_set_tensor_name, self._net.handle, self._id, C.b(value))

    @property
    def dtype(self) -> Optional[DataType]:
        """The type of an input or constant; None for layer outputs before a
        build."""
        d = self._info()[1]
        return DataType(d) if d >= 0 else None

    @property
    def shape(self) -> Optional[Dims]:
        dims = self._info()[2]
        return Dims(dims.totuple()) if dims.nb_dims >= 0 else None

    @property
    def quantization(self) -> Optional[Quantization]:
        """What its integers stand for (set_quantization), or None."""
        q = C.prt_quant_desc()
        q.struct_size = ctypes.sizeof(q)
        E.call(C.fn.network_get_tensor_quant, self._net.handle, self._id, byref(q))
        return Quantization._of(ctypes.pointer(q))

    def set_quantization(self, scale: Union[float, Sequence[float], None],
                         zero_point: Union[int, Sequence[int]] = 0,
                         axis: Optional[int] = None) -> None:
        """Marks an int8/uint8 tensor as quantized: real = (q - zero_point) *
        scale, per tensor (a number), or per channel along `axis` (sequences,
        one per index of that dim). Plugins see it in their descriptors
        (PluginTensorDesc.scale, plugrt.plugin.Tensor.scale). None clears it.
        The build checks it against the tensor's dtype and shape."""
        q = C.prt_quant_desc()
        q.struct_size = ctypes.sizeof(q)
        if scale is None:
            E.call(C.fn.network_set_tensor_quant, self._net.handle, self._id, None)
            return
        scales = [float(scale)] if axis is None else [float(v) for v in scale]  # type: ignore
        zps = [int(zero_point)] * len(scales) if isinstance(zero_point, int) else [
            int(v) for v in zero_point]
        if len(zps) != len(scales):
            raise ValueError("%d zero points for %d scales" % (len(zps), len(scales)))
        sa = (ctypes.c_float * len(scales))(*scales)
        za = (ctypes.c_int32 * len(zps))(*zps)
        q.kind = C.PRT_QUANT_PER_TENSOR if axis is None else C.PRT_QUANT_PER_CHANNEL
        q.axis = -1 if axis is None else int(axis)
        q.count = len(scales)
        q.scales = sa
        q.zero_points = za
        E.call(C.fn.network_set_tensor_quant, self._net.handle, self._id, byref(q))

    @property
    def is_network_input(self) -> bool:
        return any(t._id == self._id for t in self._net._inputs())

    @property
    def is_network_output(self) -> bool:
        return any(t._id == self._id for t in self._net._outputs())

    def __eq__(self, other):
        return isinstance(other, ITensor) and other._net is self._net and other._id == self._id

    def __hash__(self):
        return hash((id(self._net), self._id))

    def __repr__(self):
        return "<ITensor %r>" % self.name


class ILayer:
    """A layer: a plugin (IPluginV3Layer) or a constant."""

    def __init__(self, net: "INetworkDefinition", lid: int, name: str,
                 inputs: Sequence[ITensor], plugin: Any = None,
                 nb_outputs: Optional[int] = None):
        self._net = net
        self._id = lid
        self._name = name
        self._inputs = list(inputs)
        self.plugin = plugin
        self._nb_outputs = nb_outputs

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        E.call(C.fn.network_set_layer_name, self._net.handle, self._id, C.b(value))
        self._name = value

    @property
    def num_outputs(self) -> int:
        return C.fn.network_layer_output_count(self._net.handle, self._id)

    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    def get_input(self, index: int) -> ITensor:
        return self._inputs[index]

    def get_output(self, index: int) -> ITensor:
        out = c_int32()
        E.call(C.fn.network_get_layer_output, self._net.handle, self._id, int(index), byref(out))
        return self._net._tensor(out.value)

    def __repr__(self):
        return "<%s %r>" % (type(self).__name__, self._name)


class IPluginV3Layer(ILayer):
    def get_plugin(self) -> Any:
        return self.plugin


class IConstantLayer(ILayer):
    """A constant's layer: no inputs, one output (the constant)."""

    def __init__(self, net: "INetworkDefinition", name: str, tensor: ITensor):
        super().__init__(net, -1, name, [])
        self._out = tensor

    @property
    def num_outputs(self) -> int:
        return 1

    def get_output(self, index: int = 0) -> ITensor:
        if index != 0:
            raise IndexError("a constant layer has one output, not %d" % index)
        return self._out


class INetworkDefinition(Closable):
    """A network: inputs, plugin layers (built-in ops are plugins too),
    constants and marked outputs. Networks are strongly typed (every input
    has a dtype). Made by Builder.create_network or filled by OnnxParser."""

    def __init__(self, flags: int = 0):
        h = c_void_p()
        E.call(C.fn.network_create, byref(h))
        self._box = [h.value]
        self._keep: List[Any] = []  # registries whose plugins the network holds
        self._tensors: "weakref.WeakValueDictionary[int, ITensor]" = weakref.WeakValueDictionary()
        self._layers: List[ILayer] = []
        self.flags = int(flags)
        self._finalizer = weakref.finalize(self, _destroy_box, C.fn.network_destroy,
                                           self._box, self._keep)
        self.name = ""

    @property
    def handle(self) -> int:
        if not self._box[0]:
            raise E.StateError("the network is closed")
        return self._box[0]

    def close(self) -> None:
        """Destroys the network (`with` does at the block's end); engines
        built from it do not need it."""
        self._finalizer()

    def _alive(self) -> bool:
        return bool(self._box[0])

    def _describe(self) -> str:
        def io(t):
            shape = t.shape
            return "%s %s %s" % (t.name, t.dtype.name if t.dtype is not None else "?",
                                 tuple(shape) if shape is not None else "?")
        return "%sinputs [%s], outputs [%s]" % (
            "%r: " % self.name if self.name else "", ", ".join(io(t) for t in self._inputs()),
            ", ".join(t.name for t in self._outputs()))

    def _hold(self, obj):
        for k in getattr(obj, "_keep", ()) or ():
            if k not in self._keep:
                self._keep.append(k)
        if isinstance(obj, Registry) and obj not in self._keep:
            self._keep.append(obj)

    def _tensor(self, tid) -> ITensor:
        t = self._tensors.get(tid)
        if t is None:
            t = ITensor(self, tid)
            self._tensors[tid] = t
        return t

    def _adopt(self, h, registry):
        """Takes a network the ONNX parser made, in place of this empty one."""
        if self.num_inputs or self._layers:
            C.fn.network_destroy(h)
            raise E.StateError("OnnxParser fills an empty network; this one already has "
                               "inputs or layers")
        old, self._box[0] = self._box[0], h
        C.fn.network_destroy(old)
        self._tensors = weakref.WeakValueDictionary()
        self._hold(registry)

    # -- building -----------------------------------------------------------
    def add_input(self, name: str, dtype: DTypeLike, shape: Sequence[int]) -> ITensor:
        """An input; -1 dims are dynamic (bounded by a profile)."""
        out = c_int32()
        E.call(C.fn.network_add_input, self.handle, C.b(name), int(to_dtype(dtype)),
               byref(C.prt_dims.of(shape)), byref(out))
        return self._tensor(out.value)

    def add_constant(self, shape: Sequence[int], weights: Any,
                     name: Optional[str] = None) -> IConstantLayer:
        arr = np.ascontiguousarray(getattr(weights, "numpy", lambda: weights)())
        dt = to_dtype(arr.dtype)
        shape = tuple(shape)
        if volume(shape) != arr.size:
            raise E.ShapeError("constant of shape %s needs %d values, got %d" % (
                shape, volume(shape), arr.size))
        out = c_int32()
        name = name or "constant_%d" % len(self._layers)
        E.call(C.fn.network_add_constant, self.handle, C.b(name), int(dt),
               byref(C.prt_dims.of(shape)), arr.ctypes.data, byref(out))
        layer = IConstantLayer(self, name, self._tensor(out.value))
        self._layers.append(layer)
        return layer

    def add_plugin_v3(self, inputs: Sequence[ITensor], shape_inputs: Sequence[ITensor],
                      plugin: Any) -> IPluginV3Layer:
        """A plugin layer. `plugin`: a Python plugin (IPluginV3 / plugrt.Plugin,
        or a decorator plugin), or a C plugin from creator.create_plugin, which
        the network takes (use it twice: clone() it)."""
        p = plugin_address(plugin)
        ins = list(inputs)
        sis = list(shape_inputs or [])
        for t in ins + sis:
            if not isinstance(t, ITensor) or t._net is not self:
                raise E.InvalidArgumentError("inputs must be tensors of this network: %r" % (t,))
        arr_in = (c_int32 * max(1, len(ins)))(*[t._id for t in ins])
        arr_si = (c_int32 * max(1, len(sis)))(*[t._id for t in sis])
        out = c_int32()
        if isinstance(p, Bridge):
            addr = p.publish()
            try:
                E.call(C.fn.network_add_plugin, self.handle, arr_in, len(ins),
                       arr_si if sis else None, len(sis), addr, byref(out))
            except BaseException:
                LIVE.pop(addr, None)  # the caller still owns it: nothing of C holds it
                raise
            name = p.name
        else:
            E.call(C.fn.network_add_plugin, self.handle, arr_in, len(ins),
                   arr_si if sis else None, len(sis), p._addr, byref(out))
            p._take()
            self._hold(p)
            name = p.plugin_name
        layer = IPluginV3Layer(self, out.value, "%s_%d" % (name, out.value), ins, plugin)
        self._layers.append(layer)
        return layer

    def add_plugin(self, op: Any, aot: Optional[bool] = None) -> IPluginV3Layer:
        """A layer from a decorator plugin's op: network.add_plugin(
        plugrt.plugin.op.ns.name(x, attr=...)). aot: True runs the plugin's
        aot_impl kernel on CUDA, False its impl; None (the default) leaves
        it to the builder flags PREFER_AOT/JIT_PYTHON_PLUGINS, or to the one
        implementation the plugin has."""
        try:
            inputs, shape_inputs, plugin = op
        except (TypeError, ValueError):
            raise TypeError("add_plugin takes what plugrt.plugin.op.<ns>.<name>(...) returns")
        if aot is not None:
            from .plugin._bridge import DecoratorPlugin  # noqa: PLC0415 - cycle
            if not isinstance(plugin, DecoratorPlugin):
                raise TypeError("aot= applies to decorator plugins (plugrt.plugin.op...)")
            plugin = DecoratorPlugin(plugin.pdef, plugin.attrs, plugin.hints, bool(aot))
        return self.add_plugin_v3(inputs, shape_inputs, plugin)

    def mark_output(self, tensor: ITensor) -> None:
        E.call(C.fn.network_mark_output, self.handle, tensor._id)

    # -- queries ------------------------------------------------------------
    def _inputs(self):
        return [self.get_input(i) for i in range(self.num_inputs)]

    def _outputs(self):
        return [self.get_output(i) for i in range(self.num_outputs)]

    @property
    def num_inputs(self) -> int:
        return C.fn.network_input_count(self.handle)

    @property
    def num_outputs(self) -> int:
        return C.fn.network_output_count(self.handle)

    def get_input(self, index: int) -> ITensor:
        out = c_int32()
        E.call(C.fn.network_get_input, self.handle, int(index), byref(out))
        return self._tensor(out.value)

    def get_output(self, index: int) -> ITensor:
        out = c_int32()
        E.call(C.fn.network_get_output, self.handle, int(index), byref(out))
        return self._tensor(out.value)

    def get_tensor(self, name: str) -> ITensor:
        out = c_int32()
        E.call(C.fn.network_find_tensor, self.handle, C.b(name), byref(out))
        return self._tensor(out.value)

    @property
    def num_layers(self) -> int:
        """Layers added through this object (a parsed network's layers are
        not listed)."""
        return len(self._layers)

    def get_layer(self, index: int) -> ILayer:
        return self._layers[index]

    @property
    def has_implicit_batch_dimension(self) -> bool:
        return False


def _shape_value(v) -> int:
    """A shape input's value as the profile holds it: an int as itself, a
    Python float as its order key (prt_float_shape_value: keys compare as
    the floats do)."""
    if isinstance(v, float):
        if v != v:
            raise ValueError("a shape input's bound is never NaN")
        return int(C.fn.float_shape_value(v))
    return int(v)


class IOptimizationProfile:
    """min/opt/max shapes of dynamic inputs (set_shape) and min/opt/max
    values of shape inputs (set_shape_input), applied by
    IBuilderConfig.add_optimization_profile."""

    def __init__(self):
        self._shapes = {}
        self._values = {}

    def set_shape(self, input: str, min: Sequence[int], opt: Sequence[int],
                  max: Sequence[int]) -> None:
        self._shapes[input] = (Dims(min), Dims(opt), Dims(max))

    def get_shape(self, input: str) -> List[Dims]:
        return list(self._shapes.get(input, ()))

    def set_shape_input(self, input: str, min: Sequence[int], opt: Sequence[int],
                        max: Sequence[int]) -> None:
        """Bounds of a shape input's values: ints for an int32/int64 input,
        Python floats for a float32 one (Resize's scales given at run time),
        which the profile holds as their order keys (prt_float_shape_value)."""
        self._values[input] = (tuple(_shape_value(v) for v in min),
                               tuple(_shape_value(v) for v in opt),
                               tuple(_shape_value(v) for v in max))

    def get_shape_input(self, input: str) -> List[Tuple[int, ...]]:
        return list(self._values.get(input, ()))

    def __bool__(self):
        return True

    def __repr__(self) -> str:
        def triple(t):
            return "%s..%s..%s" % tuple(str(tuple(v)) for v in t)
        parts = ["%s %s" % (n, triple(t)) for n, t in self._shapes.items()]
        parts += ["%s values %s" % (n, triple(t)) for n, t in self._values.items()]
        return "<plugrt.IOptimizationProfile%s>" % (": " + ", ".join(parts) if parts else "")


class BuilderFlag(enum.IntEnum):
    """Builder flags plugrt takes (TensorRT's names and meanings); set with
    IBuilderConfig.set_flag."""
    #: Run layers in float16 where their kernels (a plugin: its
    #: supports_format_combination) take it; I/O keep their types
    #: (prt_builder_config_set_precision_flags, PRT_PRECISION_FP16).
    FP16 = 0
    #: Float32 products and convolutions on CUDA may use TF32 tensor cores
    #: (off by default in plugrt, unlike TensorRT: float32 stays float32).
    TF32 = 6
    #: As FP16, in bfloat16.
    BF16 = 17
    #: Python plugins with both impl and aot_impl run the aot_impl's kernel
    #: (a kernel layer), unless the layer says otherwise (add_plugin's aot).
    PREFER_AOT_PYTHON_PLUGINS = 33
    #: ... run impl (Python at run time).
    PREFER_JIT_PYTHON_PLUGINS = 34


class IBuilderConfig(Closable):
    """Build options: workspace limit, profiles, device, autotuning, timing
    cache."""
    _what = "builder config"

    def __init__(self):
        h = c_void_p()
        E.call(C.fn.builder_config_create, byref(h))
        self._h = h.value
        self._finalizer = weakref.finalize(self, C.fn.builder_config_destroy, self._h)
        self._profiles = []
        self._pool = {MemoryPoolType.WORKSPACE: 1 << 30}
        self._device = Device.CPU
        # TensorRT times a plugin's tactics on every build; libplugrt's
        # default (off) is for C callers that ask for it.
        E.call(C.fn.builder_config_set_autotune, self._h, 1)
        self._autotune = True
        self._cache = None
        self._embed = False
        self._cpu_fallback = False
        self._flags = 0

    def set_flag(self, flag: BuilderFlag) -> None:
        self._flags |= 1 << int(BuilderFlag(flag))

    def clear_flag(self, flag: BuilderFlag) -> None:
        self._flags &= ~(1 << int(BuilderFlag(flag)))

    def get_flag(self, flag: BuilderFlag) -> bool:
        return bool(self._flags >> int(BuilderFlag(flag)) & 1)

    @property
    def flags(self) -> int:
        """The flags as a mask of 1 << BuilderFlag (TensorRT's flags)."""
        return self._flags

    @flags.setter
    def flags(self, mask: int) -> None:
        known = sum(1 << int(f) for f in BuilderFlag)
        if int(mask) & ~known:
            raise ValueError("unknown builder flags in %#x (plugrt takes %s)" % (
                int(mask), ", ".join(f.name for f in BuilderFlag)))
        self._flags = int(mask)

    def set_memory_pool_limit(self, pool: MemoryPoolType, pool_size: int) -> None:
        pool = MemoryPoolType(pool)
        E.call(C.fn.builder_config_set_workspace_limit, self.handle, int(pool_size))
        self._pool[pool] = int(pool_size)

    def get_memory_pool_limit(self, pool: MemoryPoolType) -> int:
        return self._pool[MemoryPoolType(pool)]

    def add_optimization_profile(self, profile: IOptimizationProfile) -> int:
        idx = c_int32()
        E.call(C.fn.builder_config_add_profile, self.handle, byref(idx))
        for name, (mn, op, mx) in profile._shapes.items():
            E.call(C.fn.builder_config_set_profile_dims, self.handle, idx.value, C.b(name),
                   byref(C.prt_dims.of(mn)), byref(C.prt_dims.of(op)),
                   byref(C.prt_dims.of(mx)))
        for name, (mn, op, mx) in profile._values.items():
            n = len(mn)
            arr = [(c_int64 * max(1, n))(*v) for v in (mn, op, mx)]
            E.call(C.fn.builder_config_set_profile_shape_values, self.handle, idx.value,
                   C.b(name), arr[0], arr[1], arr[2], n)
        self._profiles.append(profile)
        return idx.value

    @property
    def num_optimization_profiles(self) -> int:
        return len(self._profiles)

    def get_optimization_profile(self, index: int) -> IOptimizationProfile:
        return self._profiles[index]

    @property
    def device(self) -> Device:
        """The device to build for: Device.CPU (default) or Device.CUDA."""
        return self._device

    @device.setter
    def device(self, value: DeviceLike) -> None:
        d = to_device(value)
        E.call(C.fn.builder_config_set_device, self.handle, int(d))
        self._device = d

    @property
    def autotune(self) -> bool:
        """True (the default, as TensorRT times tactics on every build): the
        builder runs each plugin layer with more than one candidate on
        random data at the profile's opt shapes, times every accepted format
        combination and tactic the plugin declares, and keeps the fastest
        whose outputs agree with the first declared tactic's. False (a
        plugrt flag): no timing runs; the first accepted combination and
        each plugin's first declared tactic (0 for one that declares none).
        A plugin never runs at a tactic it did not declare."""
        return self._autotune

    @autotune.setter
    def autotune(self, on: bool) -> None:
        E.call(C.fn.builder_config_set_autotune, self.handle, 1 if on else 0)
        self._autotune = bool(on)

    @property
    def embed_plugins(self) -> bool:
        """True: the engine carries the plugin libraries its layers' creators
        came from (TensorRT's setPluginsToSerialize; `plugrt build
        --embed-plugins`), so its bytes are all a deployment needs. Loading
        it then needs Runtime.engine_host_code_allowed (or `plugrt run
        --allow-embedded-plugins`). Every plugin must come from a library
        loaded by path; Python plugins cannot be carried. Default False."""
        return self._embed

    @embed_plugins.setter
    def embed_plugins(self, on: bool) -> None:
        E.call(C.fn.builder_config_set_embed_plugins, self.handle, 1 if on else 0)
        self._embed = bool(on)

    @property
    def allow_cpu_fallback(self) -> bool:
        """CPU fallback (`plugrt build --allow-cpu-fallback`; plugrt's own,
        TensorRT has none): on a CUDA build, a layer whose op or plugin has
        no CUDA kernel for its dtypes runs on the CPU, with copies between
        the device and the host around it, instead of failing the build.
        Such an engine cannot be captured into a CUDA graph. Default False."""
        return self._cpu_fallback

    @allow_cpu_fallback.setter
    def allow_cpu_fallback(self, on: bool) -> None:
        E.call(C.fn.builder_config_set_cpu_fallback, self.handle, 1 if on else 0)
        self._cpu_fallback = bool(on)

    @property
    def timing_cache_path(self) -> Optional[str]:
        return self._cache

    @timing_cache_path.setter
    def timing_cache_path(self, path: Optional[Union[str, os.PathLike]]) -> None:
        E.call(C.fn.builder_config_set_timing_cache_file, self.handle,
               C.b(os.fspath(path)) if path is not None else None)
        self._cache = os.fspath(path) if path is not None else None

    def _describe(self) -> str:
        ws = self._pool[MemoryPoolType.WORKSPACE]
        n = len(self._profiles)
        return "%s, autotune %s, workspace %s, %d profile%s%s" % (
            self._device.name.lower(), "on" if self._autotune else "off",
            "%d MiB" % (ws >> 20) if ws % (1 << 20) == 0 else "%d bytes" % ws, n,
            "" if n == 1 else "s", ", timing cache %r" % self._cache if self._cache else "")


class Builder(_WithRegistry):
    """Makes networks, configs and profiles, and builds engines; Builder(logger,
    registry=None)."""

    def create_network(self, flags: int = 0) -> INetworkDefinition:
        """A network; networks are always strongly typed, so
        1 << NetworkDefinitionCreationFlag.STRONGLY_TYPED (or any flags) is
        accepted and changes nothing."""
        return INetworkDefinition(flags)

    def create_builder_config(self) -> IBuilderConfig:
        return IBuilderConfig()

    def create_optimization_profile(self) -> IOptimizationProfile:
        return IOptimizationProfile()

    @property
    def platform_has_fast_fp16(self) -> bool:
        return False

    def _registry_for(self, network):
        for k in network._keep:
            if isinstance(k, Registry):
                return k
        return self.get_plugin_registry()

    def build_engine_with_config(self, network: INetworkDefinition,
                                 config: Optional[IBuilderConfig] = None) -> "ICudaEngine":
        """Builds an engine (an ICudaEngine, whatever its device)."""
        from ._runtime import ICudaEngine  # noqa: PLC0415 - cycle
        cfg = config or IBuilderConfig()
        reg = self._registry_for(network)
        out = c_void_p()
        from .plugin._bridge import building  # noqa: PLC0415 - cycle
        precision = ((1 if cfg.get_flag(BuilderFlag.FP16) else 0)
                     | (2 if cfg.get_flag(BuilderFlag.BF16) else 0)
                     | (4 if cfg.get_flag(BuilderFlag.TF32) else 0))
        E.call(C.fn.builder_config_set_precision_flags, cfg.handle, precision)
        try:
            with building(cfg.get_flag(BuilderFlag.PREFER_AOT_PYTHON_PLUGINS),
                          cfg.get_flag(BuilderFlag.PREFER_JIT_PYTHON_PLUGINS)):
                E.call(C.fn.engine_build, network.handle, cfg.handle, reg.handle,
                       byref(out))
        except E.UnsupportedError as e:
            hint = _device_hint(str(e))
            if not hint:
                raise
            raise E.UnsupportedError("%s. %s" % (e, hint)) from None
        return ICudaEngine(out.value or 0, reg)  # E.call raised where there is none

    def build_serialized_network(self, network: INetworkDefinition,
                                 config: Optional[IBuilderConfig] = None) -> "HostMemory":
        """Builds an engine and returns its bytes (a HostMemory, which is
        bytes). Unlike TensorRT, a failure raises plugrt.Error (it does not
        return None)."""
        eng = self.build_engine_with_config(network, config)
        try:
            return eng.serialize()
        finally:
            eng.close()


def _device_hint(message):
    """How a Python plugin that a build refused for its device says it runs
    there (None when the refused plugin is not Python's)."""
    m = re.search(r"plugin (.+?) does not run on (the CPU|CUDA)", message)
    if not m:
        return None
    from .plugin._bridge import DecoratorBridge  # noqa: PLC0415 - cycle
    name, dev = m.group(1), "cuda" if m.group(2) == "CUDA" else "cpu"
    for br in list(LIVE.values()):
        # The builder names a plugin "ns::name" (just "name" in the empty
        # namespace).
        if name != ("%s::%s" % (br.namespace, br.name) if br.namespace else br.name):
            continue
        if isinstance(br, DecoratorBridge):
            return ("%s is a Python decorator plugin: give it an impl for that device "
                    "(@plugrt.plugin.impl(%r, device=%r))" % (br.pdef.id, br.pdef.id, dev))
        return ("%s is a Python plugin: list the device in its `devices` (e.g. devices = "
                "[trt.Device.%s]; a plugin listing several takes `device` in enqueue)"
                % (br.key, dev.upper()))
    return None


class HostMemory(bytes):
    """Engine bytes (TensorRT's IHostMemory): a bytes object."""

    @property
    def nbytes(self) -> int:
        return len(self)

    def __repr__(self) -> str:  # not bytes' repr: an engine's bytes are megabytes
        return "<plugrt.HostMemory %d bytes>" % len(self)


class ParserError:
    """One error of OnnxParser: desc() is the message, code() its status."""

    def __init__(self, status: int, message: str):
        self._status, self._message = status, message

    def desc(self) -> str:
        return self._message

    def code(self) -> int:
        return self._status

    def __str__(self):
        return self._message

    __repr__ = __str__


class OnnxParser(Closable):
    """Reads an ONNX model into an (empty) network. Nodes that are not
    built-in ops become plugin layers when the registry (default: the
    default registry) has their creator: TensorRT's key (op_type,
    plugin_version, plugin_namespace). parse and parse_from_file return True
    or raise plugrt.Error; each failure is also kept in get_error(i).

    strict (default False, as prt_onnx_parser_set_strict): a plugin layer's
    output whose dtype or shape disagrees with what the model declares fails
    the build with plugrt.ShapeError instead of logging a warning. The
    short path plugrt.build() and the `plugrt` program are strict unless
    told otherwise."""
    _what = "ONNX parser"

    def __init__(self, network: INetworkDefinition, logger: Optional[ILogger] = None,
                 registry: Optional[Registry] = None, strict: bool = False):
        use_logger(logger)
        o = C.onnx()
        if o is None:
            raise E.UnsupportedError("this build of the plugrt package has no ONNX importer")
        self._o = o
        self.network = network
        self.registry = registry or get_plugin_registry()
        h = c_void_p()
        E.call(o.parser_create, self.registry.handle, byref(h))
        self._h = h.value
        self._finalizer = weakref.finalize(self, _destroy_parser, o.parser_destroy, self._h,
                                           self.registry)
        self._errors: List[ParserError] = []
        self._strict = False
        self.strict = strict

    @property
    def strict(self) -> bool:
        """Whether the networks of later parses are strict (a network keeps
        what its parse said)."""
        return self._strict

    @strict.setter
    def strict(self, value: bool) -> None:
        E.call(self._o.parser_set_strict, self.handle, 1 if value else 0)
        self._strict = bool(value)

    def map_op(self, op_type: str, plugin_name: str, plugin_version: str = "1",
               plugin_namespace: str = "") -> None:
        """Sends every node of op_type to that plugin instead."""
        E.call(self._o.parser_map_op, self.handle, C.b(op_type), C.b(plugin_namespace),
               C.b(plugin_name), C.b(plugin_version))

    def _run(self, f, *args):
        out = c_void_p()
        try:
            E.call(f, self.handle, *args, byref(out))
        except E.Error as e:
            self._errors.append(ParserError(e.status, str(e)))
            raise
        self.network._adopt(out.value, self.registry)
        return True

    def parse(self, model: Any, path: Optional[str] = None) -> bool:
        """Parses model bytes; `path` (optional) is the model file's path,
        whose folder holds external data."""
        data = bytes(model)
        base = os.path.dirname(os.path.abspath(os.fspath(path))) if path else None
        buf = ctypes.create_string_buffer(data, len(data))
        return self._run(self._o.parser_parse_bytes, buf, c_size_t(len(data)), C.b(base))

    def parse_from_file(self, model: Union[str, os.PathLike]) -> bool:
        return self._run(self._o.parser_parse_file, C.b(os.fspath(model)))

    @property
    def num_errors(self) -> int:
        return len(self._errors)

    def _describe(self) -> str:
        n = len(self._errors)
        return "into %r, %d error%s" % (self.network, n, "" if n == 1 else "s")

    def get_error(self, index: int) -> ParserError:
        return self._errors[index]

    def clear_errors(self) -> None:
        self._errors.clear()


__all__ = ["Builder", "INetworkDefinition", "ITensor", "ILayer", "IPluginV3Layer",
           "IConstantLayer", "IBuilderConfig", "IOptimizationProfile", "OnnxParser",
           "ParserError", "HostMemory"]

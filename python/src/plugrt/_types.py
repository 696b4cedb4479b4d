"""Enums, dims, tensor descriptors and plugin fields, with TensorRT's names."""

import ctypes
import enum
from typing import (Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union,
                    cast)

import numpy as np

from . import _capi as C


class DataType(enum.IntEnum):
    """Element types (prt_dtype values)."""
    FLOAT = 0
    HALF = 1
    BF16 = 2
    INT8 = 3
    UINT8 = 4
    INT32 = 5
    INT64 = 6
    BOOL = 7
    FP8 = 8  # FLOAT8E4M3FN, TensorRT's FP8
    FP8E5M2 = 9  # FLOAT8E5M2
    DOUBLE = 10  # float64
    INT16 = 11
    UINT16 = 12
    UINT32 = 13
    UINT64 = 14

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self]


_ITEMSIZE = {DataType.FLOAT: 4, DataType.HALF: 2, DataType.BF16: 2, DataType.INT8: 1,
             DataType.UINT8: 1, DataType.INT32: 4, DataType.INT64: 8, DataType.BOOL: 1,
             DataType.FP8: 1, DataType.FP8E5M2: 1, DataType.DOUBLE: 8, DataType.INT16: 2,
             DataType.UINT16: 2, DataType.UINT32: 4, DataType.UINT64: 8}

_NP = {DataType.FLOAT: np.float32, DataType.HALF: np.float16, DataType.INT8: np.int8,
       DataType.UINT8: np.uint8, DataType.INT32: np.int32, DataType.INT64: np.int64,
       DataType.BOOL: np.bool_, DataType.DOUBLE: np.float64, DataType.INT16: np.int16,
       DataType.UINT16: np.uint16, DataType.UINT32: np.uint32, DataType.UINT64: np.uint64}
_FROM_NP = {np.dtype(v): k for k, v in _NP.items()}
# __array_interface__ typestr of each type (bfloat16 as raw 2-byte values).
TYPESTR = {k: np.dtype(v).str for k, v in _NP.items()}
TYPESTR[DataType.BF16] = "<V2"
# numpy has no 8-bit floats either: their bytes as they are.
TYPESTR[DataType.FP8] = TYPESTR[DataType.FP8E5M2] = "|V1"


#: What a dtype argument takes: a DataType, its int, a numpy dtype or type,
#: or a name ("float32", "FP16", ...).
DTypeLike = Union[DataType, int, str, type, np.dtype]


def nptype(dtype: DTypeLike) -> type:
    """The numpy type of a DataType (TypeError for bfloat16, which numpy
    lacks)."""
    dt = to_dtype(dtype)
    if dt not in _NP:
        raise TypeError("%s has no numpy type" % dt.name)
    return _NP[dt]


def to_dtype(x: DTypeLike) -> DataType:
    """A DataType from a DataType, its int, a numpy dtype or type, or a name
    ("float32", "FP16", ...)."""
    if isinstance(x, DataType):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return DataType(int(x))
    if isinstance(x, str):
        key = x.upper()
        if key in _NAMES:
            return _NAMES[key]
    try:
        return _FROM_NP[np.dtype(cast(Any, x))]
    except (TypeError, KeyError):
        raise TypeError("not a plugrt data type: %r" % (x,)) from None


_NAMES = {"FLOAT": DataType.FLOAT, "FLOAT32": DataType.FLOAT, "FP32": DataType.FLOAT,
          "HALF": DataType.HALF, "FLOAT16": DataType.HALF, "FP16": DataType.HALF,
          "BF16": DataType.BF16, "BFLOAT16": DataType.BF16, "INT8": DataType.INT8,
          "UINT8": DataType.UINT8, "INT32": DataType.INT32, "INT64": DataType.INT64,
          "BOOL": DataType.BOOL, "FP8": DataType.FP8, "FLOAT8E4M3FN": DataType.FP8,
          "FP8E5M2": DataType.FP8E5M2, "FLOAT8E5M2": DataType.FP8E5M2,
          "DOUBLE": DataType.DOUBLE, "FLOAT64": DataType.DOUBLE, "FP64": DataType.DOUBLE,
          "INT16": DataType.INT16, "UINT16": DataType.UINT16, "UINT32": DataType.UINT32,
          "UINT64": DataType.UINT64}


class TensorFormat(enum.IntEnum):
    """Memory layouts (prt_format, plugin.h): LINEAR (dense, row-major) and
    CHW8 (channels in blocks of eight, one block's eight lanes a pixel), which
    the builder offers between the CPU's convolutions. A value this module does
    not know (the builder asks with one to see whether a plugin reads the
    format) stays a plain int, equal to no member."""
    LINEAR = 0
    CHW8 = 1


def _format(v):
    try:
        return TensorFormat(v)
    except ValueError:
        return int(v)


class TensorIOMode(enum.IntEnum):
    NONE = 0
    INPUT = 1
    OUTPUT = 2


class TensorLocation(enum.IntEnum):
    HOST = 0
    DEVICE = 1


class TensorRTPhase(enum.IntEnum):
    """The phase a creator makes a plugin for."""
    BUILD = C.PRT_PHASE_BUILD
    RUNTIME = C.PRT_PHASE_RUNTIME


class Device(enum.IntEnum):
    CPU = C.PRT_DEVICE_CPU
    CUDA = C.PRT_DEVICE_CUDA


#: What a device argument takes: a Device, its int, or "cpu" / "cuda".
DeviceLike = Union[Device, int, str]


def to_device(x: DeviceLike) -> "Device":
    if isinstance(x, str):
        try:
            return Device[x.upper()]
        except KeyError:
            raise ValueError("unknown device %r (cpu or cuda)" % x) from None
    return Device(x)


class DimensionOperation(enum.IntEnum):
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    SUB = 4
    EQUAL = 5
    LESS = 6
    FLOOR_DIV = 7
    CEIL_DIV = 8


class PluginCapabilityType(enum.IntEnum):
    CORE = 0
    BUILD = 1
    RUNTIME = 2


class NetworkDefinitionCreationFlag(enum.IntEnum):
    """Networks are always strongly typed; EXPLICIT_BATCH is TensorRT 8's
    and also accepted (it is what plugrt does anyway)."""
    EXPLICIT_BATCH = 0
    STRONGLY_TYPED = 5


class MemoryPoolType(enum.IntEnum):
    WORKSPACE = 0


class PluginFieldType(enum.IntEnum):
    """Field types (prt_field_type values). UNKNOWN, TensorRT's type of
    opaque data, is BYTES here."""
    INT8 = 0
    INT16 = 1
    INT32 = 2
    INT64 = 3
    FLOAT16 = 4
    FLOAT32 = 5
    FLOAT64 = 6
    BF16 = 7
    CHAR = 8
    DIMS = 9
    BYTES = 10
    UNKNOWN = 10


FIELD_NUMPY = {
    PluginFieldType.INT8: np.int8, PluginFieldType.INT16: np.int16,
    PluginFieldType.INT32: np.int32, PluginFieldType.INT64: np.int64,
    PluginFieldType.FLOAT16: np.float16, PluginFieldType.FLOAT32: np.float32,
    PluginFieldType.FLOAT64: np.float64, PluginFieldType.BF16: np.uint16,
    PluginFieldType.CHAR: np.int8, PluginFieldType.BYTES: np.uint8,
}


class Dims(tuple):
    """A shape: a tuple of ints (-1 where not known until run)."""

    def __new__(cls, shape: Iterable[int] = ()):
        return super().__new__(cls, (int(v) for v in shape))

    @property
    def nbDims(self) -> int:  # noqa: N802 - TensorRT's name
        return len(self)

    def __repr__(self):
        return "Dims(%s)" % (", ".join(str(v) for v in self) if self else "")


def volume(shape: Iterable[int]) -> int:
    n = 1
    for v in shape:
        n *= int(v)
    return n


class Quantization(NamedTuple):
    """What an int8/uint8 tensor's integers stand for (plugin.h,
    prt_quant_desc): real = (q - zero_point) * scale, with one scale and zero
    point (axis None) or one per index along dim `axis`."""
    scales: Tuple[float, ...]
    zero_points: Tuple[int, ...]
    axis: Optional[int] = None

    @property
    def per_channel(self) -> bool:
        return self.axis is not None

    @classmethod
    def _of(cls, q) -> Optional["Quantization"]:
        """From a prt_quant_desc pointer (NULL or kind NONE: None)."""
        if not q:
            return None
        q = q.contents
        if q.kind not in (1, 2) or q.count < 1:
            return None
        n = int(q.count)
        return cls(tuple(float(q.scales[i]) for i in range(n)),
                   tuple(int(q.zero_points[i]) for i in range(n)) if q.zero_points
                   else (0,) * n, int(q.axis) if q.kind == 2 else None)


def quant_scale(q: Optional[Quantization], default=None):
    """The `scale` attribute of descriptors and tensors: the one scale of a
    per-tensor quantization, the tuple of a per-channel one, else default."""
    if q is None:
        return default
    return q.scales if q.per_channel else q.scales[0]


def quant_zero_point(q: Optional[Quantization], default=None):
    if q is None:
        return default
    return q.zero_points if q.per_channel else q.zero_points[0]


class PluginTensorDesc:
    """A tensor as a plugin sees it at run time: type, format, dims, and for
    a quantized int8/uint8 tensor its `quantization` (scale and zero_point
    give its per-tensor values, or tuples per channel; 1.0 and 0 when it has
    none, as TensorRT's scale)."""
    __slots__ = ("type", "format", "dims", "scale", "zero_point", "quantization")

    def __init__(self, type: DTypeLike = DataType.FLOAT,
                 format: "TensorFormat" = TensorFormat.LINEAR, dims: Iterable[int] = (),
                 scale: float = 1.0):
        self.type = to_dtype(type)
        self.format = TensorFormat(format)
        self.dims = Dims(dims)
        self.scale = scale
        self.zero_point = 0
        self.quantization: Optional[Quantization] = None

    @classmethod
    def _of(cls, d):
        o = cls.__new__(cls)
        o.type = DataType(d.dtype)
        o.format = _format(d.format)
        o.dims = Dims(d.dims.totuple())
        o.quantization = Quantization._of(d.quant)
        o.scale = quant_scale(o.quantization, 1.0)
        o.zero_point = quant_zero_point(o.quantization, 0)
        return o

    def __repr__(self):
        q = "" if self.quantization is None else ", scale=%r, zero_point=%r" % (
            self.scale, self.zero_point)
        return "PluginTensorDesc(type=%s, format=%s, dims=%s%s)" % (
            self.type.name, self.format.name, tuple(self.dims), q)


class DynamicPluginTensorDesc:
    """A tensor as a plugin sees it at build time: `desc` (dims -1 where not
    known) and the profile's bounds `min`, `opt`, `max`."""
    __slots__ = ("desc", "min", "opt", "max")

    @classmethod
    def _of(cls, d):
        o = cls.__new__(cls)
        o.desc = PluginTensorDesc._of(d.desc)
        o.min = Dims(d.min.totuple())
        o.opt = Dims(d.opt.totuple())
        o.max = Dims(d.max.totuple())
        return o

    def __repr__(self):
        return "DynamicPluginTensorDesc(desc=%r, min=%s, opt=%s, max=%s)" % (
            self.desc, tuple(self.min), tuple(self.opt), tuple(self.max))


def tensor_descs(addr, n):
    arr = (C.prt_tensor_desc * n).from_address(addr) if n else ()
    return [PluginTensorDesc._of(d) for d in arr]


def dynamic_descs(addr, n):
    arr = (C.prt_dynamic_tensor_desc * n).from_address(addr) if n else ()
    return [DynamicPluginTensorDesc._of(d) for d in arr]


# ---------------------------------------------------------------------------
# Plugin fields
# ---------------------------------------------------------------------------

class PluginField:
    """One plugin parameter: a name, a 1-D array and its PluginFieldType.
    `data` may be a numpy array, a sequence of numbers, or (for CHAR) a str
    or bytes; it is kept as a 1-D numpy array of the type's numpy type."""
    __slots__ = ("name", "data", "type")

    def __init__(self, name: str = "", data: Any = None,
                 type: PluginFieldType = PluginFieldType.FLOAT32):
        self.name = name
        self.type = PluginFieldType(type)
        self.data = _field_array(self.type, data)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def length(self) -> int:
        return len(self.data)

    def to_str(self) -> str:
        """A CHAR field's text (without trailing NULs)."""
        return bytes(np.asarray(self.data, np.int8).tobytes()).rstrip(b"\0").decode(
            "utf-8", "replace")

    def __repr__(self):
        return "PluginField(%r, %r, %s)" % (self.name, self.data, self.type.name)


def _field_array(ftype, data):
    if ftype == PluginFieldType.DIMS:
        return [Dims(d) for d in (data if data is not None else [])]
    if data is None:
        return np.zeros(0, FIELD_NUMPY[ftype])
    if isinstance(data, str):
        data = data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(data), FIELD_NUMPY[ftype]).copy()
    arr = np.asarray(data)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    target = np.dtype(FIELD_NUMPY[ftype])
    if arr.dtype.kind in "SU" or arr.dtype == object:
        raw = b"".join(x.encode() if isinstance(x, str) else bytes(x) for x in arr.ravel())
        return np.frombuffer(raw, target).copy()
    if arr.size == 0:
        return np.zeros(0, target)
    if ftype == PluginFieldType.BF16 and arr.dtype != np.uint16:
        # float -> bfloat16 bits, rounding to nearest even.
        bits = np.ascontiguousarray(arr, np.float32).ravel().view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.ascontiguousarray(arr.ravel(), target)


class PluginFieldCollection(list):
    """A list of PluginField (TensorRT's PluginFieldCollection); indexing by
    name works too: fc["axis"]."""

    def __init__(self, fields: Iterable[PluginField] = ()):
        super().__init__(fields)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for f in self:
                if f.name == key:
                    return f
            raise KeyError(key)
        return super().__getitem__(key)

    def get(self, name: str, default: Any = None) -> Any:
        for f in self:
            if f.name == name:
                return f
        return default

    @property
    def nbFields(self) -> int:  # noqa: N802
        return len(self)


def read_fields(addr) -> PluginFieldCollection:
    """A borrowed prt_field_collection * -> a PluginFieldCollection of copies."""
    out = PluginFieldCollection()
    if not addr:
        return out
    fc = C.prt_field_collection.from_address(addr)
    for i in range(fc.nb_fields):
        f = fc.fields[i]
        out.append(read_field(f))
    return out


def read_field(f) -> PluginField:
    name = C.s(f.name) or ""
    n = int(f.length)
    try:
        ftype = PluginFieldType(f.type)
    except ValueError:
        pf = PluginField.__new__(PluginField)
        pf.name, pf.type, pf.data = name, f.type, np.zeros(0, np.uint8)
        return pf
    pf = PluginField.__new__(PluginField)
    pf.name, pf.type = name, ftype
    if ftype == PluginFieldType.DIMS:
        arr = (C.prt_dims * n).from_address(f.data) if n and f.data else ()
        pf.data = [Dims(d.totuple()) for d in arr]
        return pf
    dt = np.dtype(FIELD_NUMPY[ftype])
    if n and f.data:
        raw = ctypes.string_at(f.data, n * dt.itemsize)
        pf.data = np.frombuffer(raw, dt).copy()
    else:
        pf.data = np.zeros(0, dt)
    return pf


class FieldSet:
    """A prt_field_collection made from PluginFields, with every buffer it
    points to kept alive by this object."""
    __slots__ = ("_keep", "array", "collection", "address")

    def __init__(self, fields: Sequence[PluginField]):
        self._keep: List[Any] = []
        n = len(fields)
        self.array = (C.prt_field * max(1, n))()
        for i, f in enumerate(fields):
            nb = ctypes.create_string_buffer(C.b(f.name))
            self._keep.append(nb)
            ftype = PluginFieldType(f.type)
            if ftype == PluginFieldType.DIMS:
                dims = (C.prt_dims * max(1, len(f.data)))()
                for k, d in enumerate(f.data):
                    dims[k] = C.prt_dims.of(d)
                self._keep.append(dims)
                data, length = (ctypes.addressof(dims) if f.data else None), len(f.data)
            else:
                arr = np.ascontiguousarray(f.data, FIELD_NUMPY[ftype])
                self._keep.append(arr)
                data, length = (arr.ctypes.data if arr.size else None), arr.size
            self.array[i].name = ctypes.cast(nb, ctypes.c_char_p)
            self.array[i].data = data
            self.array[i].type = int(ftype)
            self.array[i].length = length
        self.collection = C.prt_field_collection(n, self.array)
        self.address = ctypes.addressof(self.collection)


def fields_of(fc) -> List[PluginField]:
    """PluginFields from a PluginFieldCollection, a list of PluginField, a
    dict {name: PluginField or value}, or None."""
    if fc is None:
        return []
    if isinstance(fc, dict):
        out = []
        for k, v in fc.items():
            out.append(v if isinstance(v, PluginField) else PluginField(k, *_guess_field(v)))
        return out
    return list(fc)


def _guess_field(v):
    if isinstance(v, str):
        return v.encode() + b"\0", PluginFieldType.CHAR
    if isinstance(v, bytes):
        return v, PluginFieldType.BYTES
    arr = np.asarray(v)
    if arr.dtype == np.bool_:
        return arr.astype(np.int32), PluginFieldType.INT32
    for ft, nt in FIELD_NUMPY.items():
        if ft in (PluginFieldType.CHAR, PluginFieldType.BYTES, PluginFieldType.BF16):
            continue
        if arr.dtype == np.dtype(nt):
            return arr, ft
    if arr.dtype.kind == "i":
        return arr.astype(np.int64), PluginFieldType.INT64
    if arr.dtype.kind == "f":
        return arr.astype(np.float64), PluginFieldType.FLOAT64
    raise TypeError("cannot make a plugin field of %r" % (v,))


ShapeLike = Union[Sequence[int], Tuple[int, ...]]
OptionalShape = Optional[ShapeLike]


class _Iface:
    __slots__ = ("__array_interface__",)
    __array_interface__: Dict[str, Any]


def host_array(ptr: int, shape_or_desc: Union["PluginTensorDesc", Sequence[int]],
               dtype: Optional[DTypeLike] = None, readonly: bool = False) -> np.ndarray:
    """A numpy view (no copy) of host memory at `ptr`: give a shape and a
    dtype, or a PluginTensorDesc (what enqueue receives). For CPU plugins'
    enqueue: host_array(inputs[0], input_desc[0])."""
    if isinstance(shape_or_desc, PluginTensorDesc):
        shape = tuple(shape_or_desc.dims)
        typestr = TYPESTR[shape_or_desc.type]
    else:
        shape = tuple(int(v) for v in shape_or_desc)
        if dtype is None:
            raise TypeError("host_array needs a dtype with a shape")
        typestr = TYPESTR[to_dtype(dtype)] if not isinstance(dtype, np.dtype) else dtype.str
    o = _Iface()
    o.__array_interface__ = {"shape": shape, "typestr": typestr, "data": (int(ptr), readonly),
                             "strides": None, "version": 3}
    return np.asarray(o)

"""Shape expressions, tensor descriptors and tensors of the decorator API.

ShapeExpr builds a small Python expression tree (constants folded as it
goes), lowered to the host's expressions once the register function has
returned: so a size tensor's expr() can be used in other outputs' shapes
before the index of its output is known. A ShapeExpr made with no builder
behind it (when plugrt calls the register function only to learn how many
outputs there are and their types) is "fake": every operation on it gives a
fake one, and it cannot be lowered.
"""

import builtins
from typing import Any, Iterable, Iterator, Optional, Tuple, Union

import numpy as np

from .. import _cuda
from .. import _dlpack as _dl
from .._types import (TYPESTR, DataType, Device, DeviceLike, Dims, DTypeLike,
                      PluginTensorDesc, Quantization, TensorFormat, quant_scale,
                      quant_zero_point, to_device, to_dtype, volume)

_SUM, _PROD, _MAX, _MIN, _SUB, _EQUAL, _LESS, _FLOOR_DIV, _CEIL_DIV = range(9)
_OP_NAMES = ["+", "*", "max", "min", "-", "==", "<", "//", "cdiv"]


def _fold(op, a, b):
    if op == _SUM:
        return a + b
    if op == _PROD:
        return a * b
    if op == _MAX:
        return builtins.max(a, b)
    if op == _MIN:
        return builtins.min(a, b)
    if op == _SUB:
        return a - b
    if op == _EQUAL:
        return 1 if a == b else 0
    if op == _LESS:
        return 1 if a < b else 0
    if b == 0:
        raise ValueError("division of %d by zero in a shape expression" % a)
    if op == _FLOOR_DIV:
        return a // b
    return -((-a) // b)


class ShapeExpr:
    """One symbolic dim (TensorRT's tensorrt.plugin.ShapeExpr): + - * //,
    comparisons (giving 0/1 expressions), and cdiv/max/min below; ints mix
    in on either side."""
    __slots__ = ("_kind", "_v", "_a", "_b")
    _kind: str
    _v: Any
    _a: Any
    _b: Any

    # kinds: "const" (_v: int), "leaf" (_v: IDimensionExpr), "op" (_v: op),
    # "size" (_v: SizeTensorDesc), "fake"
    def __init__(self, value: Union[int, "ShapeExpr", None] = None):
        if isinstance(value, ShapeExpr):
            self._kind, self._v, self._a, self._b = value._kind, value._v, value._a, value._b
        elif value is None:
            self._kind, self._v, self._a, self._b = "fake", None, None, None
        else:
            self._kind, self._v, self._a, self._b = "const", int(value), None, None

    @classmethod
    def _make(cls, kind, v=None, a=None, b=None):
        e = cls.__new__(cls)
        e._kind, e._v, e._a, e._b = kind, v, a, b
        return e

    @classmethod
    def _leaf(cls, dexpr):
        if dexpr.is_constant():
            return cls._make("const", dexpr.get_constant_value())
        return cls._make("leaf", dexpr)

    @property
    def is_constant(self) -> bool:
        return self._kind == "const"

    @property
    def constant_value(self) -> int:
        if self._kind != "const":
            raise ValueError("the shape expression is not a constant")
        return self._v

    @property
    def is_fake(self) -> bool:
        return self._kind == "fake"

    @property
    def is_size_tensor(self) -> bool:
        return self._kind == "size"

    def _op(self, op, other, reflected=False):
        if isinstance(other, (int, np.integer)) and not isinstance(other, builtins.bool):
            other = ShapeExpr._make("const", int(other))
        elif not isinstance(other, ShapeExpr):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        if a._kind == "fake" or b._kind == "fake":
            return ShapeExpr._make("fake")
        if a._kind == "const" and b._kind == "const":
            return ShapeExpr._make("const", _fold(op, a._v, b._v))
        if b._kind == "const" and b._v == 0 and op in (_FLOOR_DIV, _CEIL_DIV):
            raise ValueError("division by zero in a shape expression")
        return ShapeExpr._make("op", op, a, b)

    def __add__(self, o):
        return self._op(_SUM, o)

    def __radd__(self, o):
        return self._op(_SUM, o, True)

    def __sub__(self, o):
        return self._op(_SUB, o)

    def __rsub__(self, o):
        return self._op(_SUB, o, True)

    def __mul__(self, o):
        return self._op(_PROD, o)

    def __rmul__(self, o):
        return self._op(_PROD, o, True)

    def __floordiv__(self, o):
        return self._op(_FLOOR_DIV, o)

    def __rfloordiv__(self, o):
        return self._op(_FLOOR_DIV, o, True)

    def __eq__(self, o):
        return self._op(_EQUAL, o)

    def __ne__(self, o):
        r = self._op(_EQUAL, o)
        return r if r is NotImplemented else 1 - r

    def __lt__(self, o):
        return self._op(_LESS, o)

    def __gt__(self, o):
        return self._op(_LESS, o, True)

    def __le__(self, o):
        r = self._op(_LESS, o, True)  # a <= b is not (b < a)
        return r if r is NotImplemented else 1 - r

    def __ge__(self, o):
        r = self._op(_LESS, o)
        return r if r is NotImplemented else 1 - r

    __hash__ = object.__hash__

    def __bool__(self):
        if self._kind == "const":
            return self._v != 0
        raise TypeError("a symbolic shape expression has no truth value until the engine "
                        "runs; compare constants only (is_constant / constant_value)")

    def __int__(self):
        return self.constant_value

    __index__ = __int__

    def __repr__(self):
        if self._kind == "const":
            return "ShapeExpr(%d)" % self._v
        if self._kind == "op":
            return "(%r %s %r)" % (self._a, _OP_NAMES[self._v], self._b)
        if self._kind == "size":
            return "ShapeExpr(size tensor)"
        if self._kind == "leaf":
            return "ShapeExpr(input dim)"
        return "ShapeExpr(fake)"

    # Lowering to the host's expressions (memo: id -> IDimensionExpr).
    def _lower(self, eb, sizes, memo):
        k = id(self)
        got = memo.get(k)
        if got is not None:
            return got
        if self._kind == "const":
            r = eb.constant(self._v)
        elif self._kind == "leaf":
            r = self._v
        elif self._kind == "op":
            r = eb.operation(self._v, self._a._lower(eb, sizes, memo),
                             self._b._lower(eb, sizes, memo))
        elif self._kind == "size":
            r = sizes.get(id(self._v))
            if r is None:
                raise ValueError("a size tensor's expr() is used in an output shape, but "
                                 "the size tensor is not among the register function's "
                                 "outputs")
        else:
            raise ValueError("a placeholder shape expression cannot be an output dim")
        memo[k] = r
        return r


def _expr(x) -> ShapeExpr:
    if isinstance(x, ShapeExpr):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, builtins.bool):
        return ShapeExpr(int(x))
    raise TypeError("not a shape expression or int: %r" % (x,))


#: An argument of shape arithmetic: a ShapeExpr or an int.
ExprLike = Union[ShapeExpr, int]


def cdiv(first: ExprLike, second: ExprLike) -> ShapeExpr:
    """Ceiling division (ValueError if both are ints)."""
    return _fn(_CEIL_DIV, first, second, "cdiv")


def max(first: ExprLike, second: ExprLike) -> ShapeExpr:  # noqa: A001 - tensorrt.plugin.max
    """The larger of two (ValueError if both are ints)."""
    return _fn(_MAX, first, second, "max")


def min(first: ExprLike, second: ExprLike) -> ShapeExpr:  # noqa: A001 - tensorrt.plugin.min
    """The smaller of two (ValueError if both are ints)."""
    return _fn(_MIN, first, second, "min")


def _fn(op, a, b, name):
    if not isinstance(a, ShapeExpr) and not isinstance(b, ShapeExpr):
        raise ValueError("%s: at least one argument must be a ShapeExpr" % name)
    return _expr(a)._op(op, _expr(b))


class ShapeExprs:
    """The dims of a tensor as ShapeExprs: indexable, assignable (unless
    immutable), iterable."""
    __slots__ = ("_d", "_immutable")

    def __init__(self, dims: Union[int, Iterable[ExprLike]] = 0, _immutable: bool = False):
        if isinstance(dims, int):
            self._d = [ShapeExpr() for _ in range(dims)]
        else:
            self._d = [_expr(x) for x in dims]
        self._immutable = _immutable

    @classmethod
    def from_tuple(cls, shape: Iterable[ExprLike]) -> "ShapeExprs":
        return cls(list(shape))

    def __len__(self) -> int:
        return len(self._d)

    def __getitem__(self, i: Union[int, slice]) -> Any:
        if isinstance(i, slice):
            return ShapeExprs(self._d[i])
        return self._d[i]

    def __setitem__(self, i: int, v: ExprLike) -> None:
        if self._immutable:
            raise ValueError("these shape expressions are immutable (like() gives a copy "
                             "to change)")
        self._d[i] = _expr(v)

    def __iter__(self) -> Iterator[ShapeExpr]:
        return iter(self._d)

    def numel(self) -> ShapeExpr:
        n = ShapeExpr(1)
        for d in self._d:
            n = n * d
        return n

    def copy(self) -> "ShapeExprs":
        return ShapeExprs(list(self._d))

    def __repr__(self):
        return "ShapeExprs(%r)" % (self._d,)


class TensorDesc:
    """A tensor's type, format and shape expressions (never its data)."""
    __slots__ = ("_shape", "_dtype", "_format", "_scale", "_aliased", "_immutable",
                 "_index")
    # None until set: placeholders the register function is called with.
    _shape: Any
    _dtype: Any
    _aliased: Optional["TensorDesc"]

    def __init__(self, shape_expr: Optional[Iterable[ExprLike]] = None,
                 dtype: Optional[DTypeLike] = None, format: Optional[TensorFormat] = None,
                 scale: Optional[float] = None):
        self._shape = shape_expr if isinstance(shape_expr, ShapeExprs) else (
            ShapeExprs(list(shape_expr)) if shape_expr is not None else None)
        self._dtype = to_dtype(dtype) if dtype is not None else None
        self._format = TensorFormat(format) if format is not None else TensorFormat.LINEAR
        self._scale = scale
        self._aliased = None
        self._immutable = False
        self._index = None

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @dtype.setter
    def dtype(self, v: DTypeLike) -> None:
        self._mut()
        self._dtype = to_dtype(v)

    @property
    def shape_expr(self) -> ShapeExprs:
        return self._shape

    @shape_expr.setter
    def shape_expr(self, v: Iterable[ExprLike]) -> None:
        self._mut()
        self._shape = v if isinstance(v, ShapeExprs) else ShapeExprs(list(v))

    @property
    def has_shape_expr(self) -> bool:
        return self._shape is not None

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def format(self) -> TensorFormat:
        return self._format

    @format.setter
    def format(self, v: TensorFormat) -> None:
        self._mut()
        self._format = TensorFormat(v)

    @property
    def scale(self) -> Optional[float]:
        return self._scale

    @property
    def is_size_tensor(self) -> bool:
        return False

    def _mut(self):
        if self._immutable:
            raise ValueError("this TensorDesc is immutable (like() gives a copy to change)")

    def like(self) -> "TensorDesc":
        """A new, changeable TensorDesc with this one's type, format and shape."""
        d = TensorDesc(self._shape.copy() if self._shape is not None else None,
                       self._dtype, self._format, self._scale)
        return d

    def aliased(self) -> "TensorDesc":
        """An output descriptor that shares this input's memory (in place):
        same type and shape, immutable."""
        d = self.like()
        d._aliased = self
        d._shape._immutable = True
        d._immutable = True
        return d

    @property
    def is_aliased(self) -> bool:
        return self._aliased is not None

    def get_aliased(self) -> Optional["TensorDesc"]:
        return self._aliased

    def __repr__(self):
        return "TensorDesc(dtype=%s, shape_expr=%r%s)" % (
            self._dtype.name if self._dtype is not None else None, self._shape,
            ", aliased" if self._aliased is not None else "")


class SizeTensorDesc(TensorDesc):
    """A size tensor's descriptor: a 0-D int64 output whose value the plugin
    writes at run time. expr() is its value, for other outputs' shapes."""
    __slots__ = ("_opt", "_upper", "_e")

    def __init__(self, opt: ExprLike, upper_bound: ExprLike):
        super().__init__(ShapeExprs(0), DataType.INT64)
        self._opt = _expr(opt)
        self._upper = _expr(upper_bound)
        self._e = ShapeExpr._make("size", self)
        self._immutable = True

    def expr(self) -> ShapeExpr:
        return self._e

    @property
    def opt(self) -> ShapeExpr:
        return self._opt

    @property
    def upper_bound(self) -> ShapeExpr:
        return self._upper

    @property
    def is_size_tensor(self) -> bool:
        return True


def size_tensor(opt: ExprLike, upper_bound: ExprLike) -> SizeTensorDesc:
    """A size tensor with tuning value `opt` and bound `upper_bound`."""
    return SizeTensorDesc(opt, upper_bound)


def from_shape_expr(shape_expr: Iterable[ExprLike], dtype: DTypeLike,
                    format: TensorFormat = TensorFormat.LINEAR) -> TensorDesc:
    """A TensorDesc from shape expressions (or ints) and a type."""
    se = shape_expr.copy() if isinstance(shape_expr, ShapeExprs) else ShapeExprs(list(shape_expr))
    return TensorDesc(se, dtype, format)


class Tensor:
    """A tensor as impl (or a class plugin, through plugrt.device_tensor)
    sees it: data_ptr, shape, dtype, strides (in elements), device, stream.

    On the CPU it has __array_interface__ (np.asarray(t) is a view, writable
    for outputs); on CUDA __cuda_array_interface__ (version 3, with the
    stream the plugin runs on), so torch.as_tensor(t) and cupy.asarray(t)
    wrap it without a copy. Both have __dlpack__ / __dlpack_device__
    (torch.from_dlpack, cupy.from_dlpack, np.from_dlpack). Data-dependent
    dims hold their upper bound; the plugin writes the tensor densely with
    the true dims. The memory is valid during the call only. A quantized
    int8/uint8 tensor has its scale and zero_point (numbers, or tuples per
    channel; None when it has none) and `quantization`."""
    __slots__ = ("_ptr", "_shape", "_dtype", "_typestr", "_strides", "_format", "_aliased",
                 "_readonly", "_view", "_iface", "_device", "_stream", "_cai", "_dev_id",
                 "_quant")

    def __init__(self, shape: Iterable[int] = (), dtype: DataType = DataType.FLOAT,
                 ptr: int = 0, readonly: bool = False, device: DeviceLike = Device.CPU,
                 stream: int = 0):
        self._shape = Dims(shape)
        self._dtype = DataType(dtype)
        self._typestr = TYPESTR[self._dtype]
        st, acc = [], 1
        for d in reversed(self._shape):
            st.append(acc)
            acc *= d
        self._strides = tuple(reversed(st))
        self._ptr = ptr
        self._format = TensorFormat.LINEAR
        self._aliased = None
        self._readonly = readonly
        self._view: Optional[Tuple[int, np.ndarray]] = None  # (ptr, view) of the last numpy()
        self._iface = None  # (ptr, dict) of the last __array_interface__
        self._cai = None    # (ptr, stream, dict) of the last __cuda_array_interface__
        self._dev_id = None  # (ptr, GPU ordinal) of the last __dlpack_device__
        self._device = int(to_device(device))
        self._stream = int(stream or 0)
        self._quant: Optional[Quantization] = None

    @property
    def data_ptr(self) -> int:
        return self._ptr

    @property
    def quantization(self) -> Optional[Quantization]:
        return self._quant

    @property
    def scale(self) -> Union[float, Tuple[float, ...], None]:
        return quant_scale(self._quant)

    @property
    def zero_point(self) -> Union[int, Tuple[int, ...], None]:
        return quant_zero_point(self._quant)

    @property
    def shape(self) -> Dims:
        return self._shape

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @property
    def strides(self) -> Tuple[int, ...]:
        return self._strides

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def format(self) -> TensorFormat:
        return self._format

    @property
    def device(self) -> Device:
        """Device.CPU or Device.CUDA: where the memory is."""
        return _DEVICES[self._device]

    @property
    def stream(self) -> int:
        """The cudaStream_t (an int) the plugin runs on; 0 on the CPU and for
        CUDA's default stream."""
        return self._stream

    @property
    def nbytes(self) -> int:
        return volume(self._shape) * self._dtype.itemsize

    def numel(self) -> int:
        return volume(self._shape)

    @property
    def is_aliased(self) -> bool:
        return self._aliased is not None

    def get_aliased(self) -> Optional["Tensor"]:
        return self._aliased

    @property
    def __array_interface__(self):
        if self._device:
            raise AttributeError("this Tensor is in CUDA memory; it has "
                                 "__cuda_array_interface__, not __array_interface__")
        c = self._iface
        if c is None or c[0] != self._ptr:
            c = self._iface = (self._ptr, {"shape": tuple(self._shape), "typestr": self._typestr,
                                           "data": (self._ptr, self._readonly), "strides": None,
                                           "version": 3})
        return c[1]

    @property
    def __cuda_array_interface__(self):
        if not self._device:
            raise AttributeError("this Tensor is in host memory; it has __array_interface__, "
                                 "not __cuda_array_interface__")
        c = self._cai
        if c is None or c[0] != self._ptr or c[1] != self._stream:
            # Inputs too are (ptr, False): torch refuses read-only CUDA arrays.
            c = self._cai = (self._ptr, self._stream, {
                "shape": tuple(self._shape), "typestr": self._typestr,
                "data": (self._ptr, False), "strides": None, "version": 3,
                "stream": self._stream or 1})
        return c[2]

    def __array__(self, dtype=None, copy=None):
        if self._device:
            raise TypeError("this Tensor is in CUDA memory, which numpy cannot read: wrap it "
                            "with torch.as_tensor(t) or cupy.asarray(t) "
                            "(__cuda_array_interface__), or torch.from_dlpack(t)")
        o = _Iface()
        o.__array_interface__ = self.__array_interface__
        a = np.asarray(o)
        return a if dtype is None else a.astype(dtype, copy=bool(copy))

    def __dlpack_device__(self):
        if not self._device:
            return (_dl.KDL_CPU, 0)
        c = self._dev_id
        if c is None or c[0] != self._ptr:
            c = self._dev_id = (self._ptr, _cuda.pointer_device(self._ptr))
        return (_dl.KDL_CUDA, c[1])

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the memory (no copy; copy=True is refused).
        On CUDA, a consumer's stream other than the plugin's is made to wait
        for the plugin's (an event; the host does not wait)."""
        if copy:
            raise BufferError("a plugrt Tensor is exported without a copy (copy=True asked)")
        if dl_device is not None and tuple(dl_device)[0] != self.__dlpack_device__()[0]:
            raise BufferError("a plugrt Tensor on %s cannot be exported to DLPack device %r"
                              % (self.device.name, tuple(dl_device)))
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        if self._device:
            _cuda.order_streams(1 if stream is None else (int(stream) or 1), self._stream or 1)
            return _dl.export(self._ptr, self._shape, self._dtype, _dl.KDL_CUDA,
                              self.__dlpack_device__()[1], False, versioned)
        if stream is not None:
            raise BufferError("a CPU tensor takes no stream (got %r)" % (stream,))
        return _dl.export(self._ptr, self._shape, self._dtype, _dl.KDL_CPU, 0, self._readonly,
                          versioned)

    def numpy(self) -> np.ndarray:
        """A numpy view of the memory (CPU), like np.asarray(self) but kept
        between runs while the address stays the same: the cheapest way in."""
        c = self._view
        if c is None or c[0] != self._ptr:
            c = self._view = (self._ptr, np.asarray(self))
        return c[1]

    def __repr__(self):
        return "Tensor(shape=%s, dtype=%s, data_ptr=0x%x%s)" % (
            tuple(self._shape), self._dtype.name, self._ptr,
            ", device=CUDA, stream=0x%x" % self._stream if self._device else "")


class _Iface:
    __slots__ = ("__array_interface__",)


_DEVICES = (Device.CPU, Device.CUDA)


def device_tensor(ptr: int, shape_or_desc: Union[PluginTensorDesc, Iterable[int]],
                  dtype: Optional[DTypeLike] = None, stream: Any = 0, readonly: bool = False,
                  device: DeviceLike = Device.CUDA) -> Tensor:
    """A Tensor over memory at `ptr` (no copy), by default CUDA memory: give
    a PluginTensorDesc (what enqueue receives) or a shape and a dtype. For a
    class plugin's enqueue on CUDA: torch.as_tensor(plugrt.device_tensor(
    inputs[0], input_desc[0], stream=stream)). The stream goes into its
    __cuda_array_interface__; readonly only marks CPU views."""
    if isinstance(shape_or_desc, PluginTensorDesc):
        shape, dt = shape_or_desc.dims, shape_or_desc.type
    else:
        if dtype is None:
            raise TypeError("device_tensor needs a dtype with a shape")
        shape, dt = Dims(shape_or_desc), to_dtype(dtype)
    return Tensor(shape, dt, int(ptr or 0), readonly, device, _cuda.stream_handle(stream))


__all__ = ["ShapeExpr", "ShapeExprs", "TensorDesc", "SizeTensorDesc", "Tensor", "device_tensor",
           "size_tensor", "from_shape_expr", "cdiv", "max", "min"]

"""Ahead-of-time kernels of decorator plugins (tensorrt.plugin's aot_impl).

An aot_impl returns (kernel_name, compiled_kernel, KernelLaunchParams,
extra_args); this module turns that into plugin.h's prt_kernel_desc, every
size an expression of the builder handed to get_kernel, so the engine holds
the code and launches it with no Python (the C side: src/kernel).

Parameters, in order, as TensorRT passes them: a pointer per input, the
extra arguments, a pointer per output; then, when the code declares more
parameters than that (Triton >= 3 appends global_scratch and
profile_scratch), the layer's workspace for the first when the launch asks
for global scratch (KernelLaunchParams.global_scratch), and NULL for the
rest. Unlike TensorRT's, extra arguments may be int64 and float too, and the
code may be a cubin (or several codes: cubins for several capabilities and
PTX).
"""

import builtins
import ctypes
import re
import struct
from typing import Any, Iterable, List, Optional, Sequence, Union

import numpy as np

from .. import _capi as C
from ._shape import ShapeExpr, ShapeExprs

_PTR = object()  # an argument kind of its own: a pointer parameter


def _as_expr(v, what) -> ShapeExpr:
    """An int, numpy integer, ShapeExpr or integer SymExpr as a ShapeExpr."""
    if isinstance(v, SymExpr):
        if v._float:
            raise TypeError("%s must be an integer expression, got %r" % (what, v))
        v = v.expr
    if isinstance(v, ShapeExpr):
        if v.is_fake:
            raise ValueError("%s is a placeholder shape expression" % what)
        return v
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("%s must be an int or a shape expression, got %r" % (what, v))
    if isinstance(v, (int, np.integer)):
        return ShapeExpr(int(v))
    raise TypeError("%s must be an int, a ShapeExpr or a SymInt32, got %r" % (what, v))


class SymExpr:
    """A scalar kernel argument: an expression over the layer's dims (a
    ShapeExpr, evaluated at each shape change) or a constant, passed as
    the C type the subclass names."""
    __slots__ = ("expr", "value")
    kind = C.PRT_KARG_INT32
    ctype = "int32"
    _float = False

    def __init__(self, value: Union[int, float, ShapeExpr, "SymExpr"]):
        if isinstance(value, SymExpr):
            value = value.expr if value.expr is not None else value.value  # type: ignore[assignment]
        self.expr: Optional[ShapeExpr] = None
        self.value: Optional[Union[int, float]] = None
        if self._float and isinstance(value, (float, np.floating)):
            self.value = float(value)
        else:
            self.expr = _as_expr(value, type(self).__name__)
            if self.expr.is_constant:
                self._check_range(self.expr.constant_value)

    def _check_range(self, v):
        if self.kind == C.PRT_KARG_INT32 and not -2**31 <= v < 2**31:
            raise ValueError("SymInt32(%d): the value does not fit int32 (use SymInt64)" % v)

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.expr if self.expr is not None
                           else self.value)


class SymInt32(SymExpr):
    """An int32 kernel argument (TensorRT's trtp.SymInt32)."""
    __slots__ = ()


class SymInt64(SymExpr):
    """An int64 kernel argument (plugrt's; TensorRT takes int32 only)."""
    __slots__ = ()
    kind = C.PRT_KARG_INT64
    ctype = "int64"


class SymFloat32(SymExpr):
    """A float kernel argument: a float constant, or an integer expression
    converted at each launch (plugrt's)."""
    __slots__ = ()
    kind = C.PRT_KARG_FLOAT32
    ctype = "float32"
    _float = True


class SymFloat64(SymFloat32):
    """A double kernel argument (plugrt's)."""
    __slots__ = ()
    kind = C.PRT_KARG_FLOAT64
    ctype = "float64"


def _sym(v, i) -> SymExpr:
    """An extra argument as a SymExpr: SymExprs as they are, ints and
    ShapeExprs as int32 (TensorRT's only kind), floats as float32."""
    if isinstance(v, SymExpr):
        return v
    if isinstance(v, (float, np.floating)):
        return SymFloat32(float(v))
    try:
        return SymInt32(v)
    except TypeError:
        raise TypeError("extra argument %d must be a SymInt32, SymInt64, SymFloat32, "
                        "SymFloat64, int, float or ShapeExpr, got %r" % (i, v)) from None


class SymExprs:
    """The extra kernel arguments (TensorRT's trtp.SymExprs / SymIntExprs):
    SymExprs(n) has n slots to assign; SymExprs.from_tuple(values)."""

    def __init__(self, length: Union[int, Iterable[Any]] = 0):
        if isinstance(length, (int, np.integer)):
            self._items: List[Optional[SymExpr]] = [None] * int(length)
        else:
            self._items = [_sym(v, i) for i, v in enumerate(length)]

    @classmethod
    def from_tuple(cls, values: Iterable[Any]) -> "SymExprs":
        return cls(list(values))

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> Optional[SymExpr]:
        return self._items[i]

    def __setitem__(self, i: int, v: Any) -> None:
        self._items[i] = _sym(v, i)

    def __iter__(self):
        return iter(self._items)

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self._items)


class SymIntExprs(SymExprs):
    """TensorRT's name for integer extra arguments; holds any SymExpr here."""


class KernelLaunchParams:
    """Grid, block and dynamic shared memory of the launch (TensorRT's
    trtp.KernelLaunchParams): each an int, a ShapeExpr or a SymInt32,
    evaluated from the layer's shapes at each shape change. Grid and block
    default to 1, shared_mem to 0.

    global_scratch (plugrt's): bytes of global scratch each program needs
    (a Triton kernel's metadata.global_scratch_size); when positive, the
    layer's workspace holds grid_x * grid_y * grid_z of them and is passed
    as the first parameter past the outputs (Triton's global_scratch).

    arg_order (plugrt's): None for TensorRT's parameter order (input
    pointers, extra arguments, output pointers), else the kernel's
    parameters in their declared order, each ("input", i), ("output", j) or
    ("extra", k) (the k-th extra argument, each placed exactly once): for
    kernels written without TensorRT's order in mind, such as the one a
    torch triton_op launches (from_torch_op). Trailing scratch parameters
    follow either way."""
    _NAMES = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_mem",
              "global_scratch")

    def __init__(self):
        self.grid_x = self.grid_y = self.grid_z = 1
        self.block_x = self.block_y = self.block_z = 1
        self.shared_mem = 0
        self.global_scratch = 0
        self.arg_order: Optional[Sequence[Any]] = None

    def __repr__(self):
        return "KernelLaunchParams(%s)" % ", ".join("%s=%r" % (n, getattr(self, n))
                                                    for n in self._NAMES)


# ---------------------------------------------------------------------------
# The code: kind, and how many parameters its entry declares
# ---------------------------------------------------------------------------

_ELF = b"\x7fELF"


def code_kind(code: Union[str, bytes, bytearray, memoryview]):
    """(prt_kernel_code_kind, bytes): a cubin by its ELF magic, else PTX."""
    if isinstance(code, str):
        return C.PRT_KERNEL_PTX, code.encode()
    if isinstance(code, (bytes, bytearray, memoryview)):
        b = bytes(code)
        if b.startswith(_ELF):
            return C.PRT_KERNEL_CUBIN, b
        if b"\0" in b.rstrip(b"\0"):
            raise ValueError("the compiled kernel is neither PTX text nor an ELF cubin "
                             "(binary bytes without the ELF magic)")
        return C.PRT_KERNEL_PTX, b.rstrip(b"\0")
    raise TypeError("the compiled kernel must be PTX (str or bytes) or a cubin (bytes), "
                    "got %s" % type(code).__name__)


def ptx_param_count(ptx: bytes, entry: str) -> Optional[int]:
    """How many parameters `.entry <entry>(...)` declares; None if absent."""
    m = re.search(rb"\.entry\s+" + re.escape(entry.encode()) + rb"\s*\(([^)]*)\)", ptx)
    if m is None:
        m = re.search(rb"\.entry\s+" + re.escape(entry.encode()) + rb"\s*(\{|$)", ptx,
                      re.M)
        return 0 if m else None
    return len(re.findall(rb"\.param\b", m.group(1)))


def cubin_param_count(elf: bytes, entry: str) -> Optional[int]:
    """How many parameters the cubin's .nv.info.<entry> lists
    (EIATTR_KPARAM_INFO, as src/kernel/code.c reads them); None when the
    file or section cannot be read (the builder then names the problem)."""
    try:
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3a)

        def sec(i):
            h = shoff + i * shentsize
            name, = struct.unpack_from("<I", elf, h)
            off, size = struct.unpack_from("<QQ", elf, h + 0x18)
            return name, off, size

        _, stroff, _ = sec(shstrndx)
        want = (".nv.info." + entry).encode()
        for i in range(shnum):
            name, off, size = sec(i)
            end = elf.index(b"\0", stroff + name)
            if elf[stroff + name:end] != want:
                continue
            n, at = 0, 0
            while at + 4 <= size:
                fmt, attr = elf[off + at], elf[off + at + 1]
                ln = struct.unpack_from("<H", elf, off + at + 2)[0] if fmt == 4 else 0
                if fmt == 4 and attr == 0x17 and ln >= 12:
                    n = builtins.max(n, struct.unpack_from("<H", elf, off + at + 8)[0] + 1)
                at += 4 + ln
            return n
    except (struct.error, ValueError, IndexError):
        return None
    return None


def declared_params(codes, entry) -> Optional[int]:
    for kind, data in codes:
        n = (ptx_param_count(data, entry) if kind == C.PRT_KERNEL_PTX
             else cubin_param_count(data, entry))
        if n is not None:
            return n
    return None


# ---------------------------------------------------------------------------
# aot_impl's answer -> prt_kernel_desc
# ---------------------------------------------------------------------------

class KernelDesc:
    """A prt_kernel_desc and everything it points to, kept alive as long as
    this object is (the builder reads it after get_kernel returns)."""

    def __init__(self):
        self.keep: List[Any] = []
        self.desc = C.prt_kernel_desc()
        self.entry = ""
        self.codes: List[Any] = []
        self.args: List[Any] = []  # (kind, index, expr or None, fvalue): for tests
        self.launch: dict = {}  # name -> ShapeExpr
        self.workspace: Optional[ShapeExpr] = None


def _unpack(result, who):
    if not isinstance(result, (tuple, list)) or len(result) not in (3, 4):
        raise TypeError("%s must return (kernel_name, compiled_kernel, KernelLaunchParams, "
                        "extra_args), got %r" % (who, type(result).__name__))
    name, code, params = result[0], result[1], result[2]
    extra = result[3] if len(result) == 4 else None
    if isinstance(name, (bytes, bytearray)):
        name = bytes(name).decode()
    if not isinstance(name, str) or not name:
        raise TypeError("%s: kernel_name must be a non-empty str or bytes, got %r" % (
            who, name))
    if not isinstance(params, KernelLaunchParams):
        raise TypeError("%s: the third value must be a plugrt.plugin.KernelLaunchParams, "
                        "got %r" % (who, type(params).__name__))
    if extra is None:
        extra = SymExprs(0)
    elif not isinstance(extra, SymExprs):
        extra = SymExprs(list(extra))
    for i, a in enumerate(extra):
        if a is None:
            raise ValueError("%s: extra argument %d was never set" % (who, i))
    codes = [code_kind(c) for c in (code if isinstance(code, (list, tuple)) else [code])]
    if not codes:
        raise ValueError("%s: no compiled kernel" % who)
    return name, codes, params, list(extra)


def _ordered_args(order, extra, nb_in: int, nb_out: int, who: str) -> List[Any]:
    """The launch's parameters (kind, index, expr, fvalue) before any
    trailing scratch: TensorRT's order, or KernelLaunchParams.arg_order's."""
    def ext(a):
        return (a.kind, 0, a.expr, a.value if a.value is not None else 0.0)
    if order is None:
        return ([(C.PRT_KARG_INPUT, i, None, 0.0) for i in range(nb_in)] +
                [ext(a) for a in extra] +
                [(C.PRT_KARG_OUTPUT, i, None, 0.0) for i in range(nb_out)])
    args: List[Any] = []
    placed = set()
    limits = {"input": nb_in, "output": nb_out, "extra": len(extra)}
    for pos, ent in enumerate(order):
        try:
            kind, index = ent
            index = int(index)
        except (TypeError, ValueError):
            raise TypeError("%s: KernelLaunchParams.arg_order[%d] is %r, not (kind, index)"
                            % (who, pos, ent)) from None
        if kind not in limits:
            raise ValueError("%s: KernelLaunchParams.arg_order[%d] has kind %r (input, "
                             "output or extra)" % (who, pos, kind))
        if not 0 <= index < limits[kind]:
            raise ValueError("%s: KernelLaunchParams.arg_order[%d] names %s %d of %d" % (
                who, pos, kind, index, limits[kind]))
        if kind == "extra":
            if index in placed:
                raise ValueError("%s: KernelLaunchParams.arg_order places extra argument %d "
                                 "twice" % (who, index))
            placed.add(index)
            args.append(ext(extra[index]))
        else:
            args.append((C.PRT_KARG_INPUT if kind == "input" else C.PRT_KARG_OUTPUT, index,
                         None, 0.0))
    missing = sorted(set(range(len(extra))) - placed)
    if missing:
        raise ValueError("%s: KernelLaunchParams.arg_order does not place extra argument(s) "
                         "%s" % (who, ", ".join(map(str, missing))))
    return args


def describe(result, nb_in: int, nb_out: int, who: str) -> KernelDesc:
    """Checks aot_impl's answer and lays out its parameters (no expression
    is lowered yet: lower() does that with the builder's expressions)."""
    name, codes, params, extra = _unpack(result, who)
    kd = KernelDesc()
    kd.entry, kd.codes = name, codes
    for n in KernelLaunchParams._NAMES[:7]:
        e = _as_expr(getattr(params, n), "KernelLaunchParams." + n)
        if e.is_constant:
            lo = 0 if n == "shared_mem" else 1
            if e.constant_value < lo:
                raise ValueError("%s: KernelLaunchParams.%s is %d; it must be >= %d" % (
                    who, n, e.constant_value, lo))
        kd.launch[n] = e
    args = _ordered_args(getattr(params, "arg_order", None), extra, nb_in, nb_out, who)
    scratch = _as_expr(params.global_scratch, "KernelLaunchParams.global_scratch")
    if scratch.is_constant and scratch.constant_value < 0:
        raise ValueError("%s: KernelLaunchParams.global_scratch is negative" % who)
    declared = declared_params(codes, name)
    if declared is None:
        pass  # the builder reads the code again and names what is wrong
    elif declared < len(args):
        raise ValueError(
            "%s: kernel %s declares %d parameters, but the launch passes %d (%d input "
            "pointers, %d extra arguments, %d output pointers)" % (
                who, name, declared, len(args),
                sum(1 for a in args if a[0] == C.PRT_KARG_INPUT), len(extra),
                sum(1 for a in args if a[0] == C.PRT_KARG_OUTPUT)))
    else:
        # Trailing parameters (Triton's global_scratch, profile_scratch):
        # the workspace for global scratch if the kernel needs it, else NULL.
        for k in range(declared - len(args)):
            if k == 0 and not (scratch.is_constant and scratch.constant_value == 0):
                kd.workspace = scratch * (kd.launch["grid_x"] * kd.launch["grid_y"] *
                                          kd.launch["grid_z"])
                args.append((C.PRT_KARG_WORKSPACE, 0, None, 0.0))
            else:
                args.append((C.PRT_KARG_NULL, 0, None, 0.0))
    if kd.workspace is None and not (scratch.is_constant and scratch.constant_value == 0):
        raise ValueError("%s: KernelLaunchParams.global_scratch is set, but kernel %s has "
                         "no parameter past its outputs to take it" % (who, name))
    kd.args = args
    return kd


def lower(kd: KernelDesc, eb) -> C.prt_kernel_desc:
    """Fills kd.desc with the builder's expressions (eb: the IExprBuilder
    over get_kernel's builder) and returns it."""
    memo: dict = {}
    sizes: dict = {}

    def ex(e):
        return e._lower(eb, sizes, memo)._p

    keep = kd.keep
    codes = (C.prt_kernel_code * len(kd.codes))()
    for i, (kind, data) in enumerate(kd.codes):
        buf = ctypes.create_string_buffer(data, len(data))
        keep.append(buf)
        codes[i] = C.prt_kernel_code(kind, 0, ctypes.addressof(buf), len(data))
    args = (C.prt_kernel_arg * builtins.max(1, len(kd.args)))()
    for i, (kind, index, e, fv) in enumerate(kd.args):
        args[i].kind, args[i].index = kind, index
        args[i].value = ex(e) if e is not None else None
        args[i].fvalue = float(fv)
    entry = ctypes.create_string_buffer(kd.entry.encode())
    launch = C.prt_kernel_launch()
    launch.entry = ctypes.addressof(entry)
    for k, n in enumerate(("x", "y", "z")):
        launch.grid[k] = ex(kd.launch["grid_" + n])
        launch.block[k] = ex(kd.launch["block_" + n])
    sm = kd.launch["shared_mem"]
    launch.shared_bytes = None if sm.is_constant and sm.constant_value == 0 else ex(sm)
    launch.nb_args = len(kd.args)
    launch.args = ctypes.addressof(args)
    keep += [codes, args, entry, launch]
    d = kd.desc
    d.nb_code = len(kd.codes)
    d.code = ctypes.addressof(codes)
    d.nb_launches = 1
    d.launches = ctypes.addressof(launch)
    d.compile_options = None
    return d


def shape_exprs(dims) -> ShapeExprs:
    return ShapeExprs([ShapeExpr._leaf(e) for e in dims])


def as_sequence(x) -> Sequence[Any]:
    return x if isinstance(x, (list, tuple)) else [x]

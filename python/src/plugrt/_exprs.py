"""Symbolic dims for class plugins: IDimensionExpr, IExprBuilder, DimsExprs.

These wrap the host's expression builder (plugin.h's prt_expr_builder) for
the one get_output_shapes call it is handed to; an expression or builder
used after that call ends is a StateError (the host frees them when the
build ends).
"""

import ctypes
from typing import Iterable, Optional, Set, Union

from . import _capi as C
from . import _errors as E
from ._types import DimensionOperation


class IExprBuilder:
    """The expression builder handed to get_output_shapes."""
    __slots__ = ("_addr", "_eb", "_alive", "_sizes", "_constant", "_operation",
                 "_declare", "_is_constant")

    def __init__(self, addr: int):
        self._addr = addr
        eb = C.prt_expr_builder.from_address(addr)
        self._eb = eb
        self._alive = True
        self._sizes: Set[int] = set()
        self._constant = eb.constant
        self._operation = eb.operation
        self._declare = eb.declare_size_tensor
        self._is_constant = eb.is_constant

    def _check(self):
        if not self._alive:
            raise E.StateError("this expression builder belonged to a get_output_shapes "
                               "call that has returned; expressions live only for it")

    def _wrap(self, p, what):
        if not p:
            raise E.InvalidArgumentError("expression builder: %s failed (a bad operand, a "
                                         "division by a constant zero, or out of memory)"
                                         % what)
        return IDimensionExpr(p, self)

    def _expr(self, v):
        if isinstance(v, IDimensionExpr):
            if v._eb is not self:
                v._eb._check()
            return v._p
        return self.constant(int(v))._p

    def constant(self, value: int) -> "IDimensionExpr":
        self._check()
        return self._wrap(self._constant(self._addr, int(value)), "constant(%d)" % int(value))

    def operation(self, op: DimensionOperation, first: "ExprLike",
                  second: "ExprLike") -> "IDimensionExpr":
        self._check()
        op = DimensionOperation(op)
        return self._wrap(self._operation(self._addr, int(op), self._expr(first),
                                          self._expr(second)), "operation(%s)" % op.name)

    def declare_size_tensor(self, output_index: int, opt: "ExprLike",
                            upper_bound: "ExprLike") -> "IDimensionExpr":
        """Declares output `output_index` a size tensor (a 0-D int32/int64
        output the plugin writes at run time) and returns its symbolic value."""
        self._check()
        e = self._wrap(self._declare(self._addr, int(output_index), self._expr(opt),
                                     self._expr(upper_bound)),
                       "declare_size_tensor(%d)" % int(output_index))
        self._sizes.add(e._p)
        return e

    def _end(self):
        self._alive = False


def _binop(op, reflected=False):
    def f(self, other):
        if not isinstance(other, (IDimensionExpr, int)):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        return self._eb.operation(op, a, b)
    return f


class IDimensionExpr:
    """One symbolic dim. Supports + - * // (floor), and the builder's other
    operations through IExprBuilder.operation."""
    __slots__ = ("_p", "_eb")

    def __init__(self, p: int, eb: IExprBuilder):
        self._p = p
        self._eb = eb

    def is_constant(self) -> bool:
        self._eb._check()
        v = ctypes.c_int64()
        return bool(self._eb._is_constant(self._eb._addr, self._p, ctypes.byref(v)))

    def get_constant_value(self) -> int:
        """The value of a constant expression (ValueError if it is not)."""
        self._eb._check()
        v = ctypes.c_int64()
        if not self._eb._is_constant(self._eb._addr, self._p, ctypes.byref(v)):
            raise ValueError("the expression is not a constant")
        return v.value

    def is_size_tensor(self) -> bool:
        return self._p in self._eb._sizes

    __add__ = _binop(DimensionOperation.SUM)
    __radd__ = _binop(DimensionOperation.SUM, True)
    __sub__ = _binop(DimensionOperation.SUB)
    __rsub__ = _binop(DimensionOperation.SUB, True)
    __mul__ = _binop(DimensionOperation.PROD)
    __rmul__ = _binop(DimensionOperation.PROD, True)
    __floordiv__ = _binop(DimensionOperation.FLOOR_DIV)
    __rfloordiv__ = _binop(DimensionOperation.FLOOR_DIV, True)

    def __eq__(self, other):
        # Hash-consing: equal expressions are one object.
        return isinstance(other, IDimensionExpr) and other._p == self._p

    def __hash__(self):
        return hash(self._p)

    def __repr__(self):
        try:
            if self.is_constant():
                return "IDimensionExpr(%d)" % self.get_constant_value()
        except E.StateError:
            pass
        return "IDimensionExpr(<symbolic 0x%x>)" % self._p


ExprLike = Union[IDimensionExpr, int]


class DimsExprs(list):
    """The dims of one tensor as expressions: DimsExprs(n) has n empty
    slots; DimsExprs([e0, e1]) holds those. Slots take IDimensionExpr or
    int (turned into constants)."""

    def __init__(self, dims: Optional[Union[int, Iterable[ExprLike]]] = 0):
        if isinstance(dims, int):
            super().__init__([None] * dims)
        else:
            super().__init__(dims if dims is not None else [])

    @property
    def nbDims(self) -> int:  # noqa: N802
        return len(self)


def read_dim_exprs(addr, n, eb):
    if not n:
        return []
    arr = (C.prt_dim_exprs * n).from_address(addr)
    return [DimsExprs([IDimensionExpr(e.d[k], eb) for k in range(e.nb_dims)])
            if e.nb_dims >= 0 else DimsExprs() for e in arr]

"""Fitting a Triton launch recorded at several shapes (from_torch_op's
aot_impl for torch.library.triton_op ops): pure Python, no torch or Triton.

from_torch_op runs a triton_op's body under fake tensors at a few "probe"
shapes and records the one kernel launch it makes (plugin/_tritonop.py).
This module turns those recordings into one launch description valid at
every shape: each grid size and each integer scalar argument becomes an
expression over the layer's dims, chosen from a small family and checked
against every probe:

  - a constant;
  - c + k * P, where P is a product of some dims of one tensor (an input's
    or an output's: x.numel(), x.shape[1] * x.shape[2], a stride);
  - c + sum(k_j * d_j), affine in the inputs' dims (H + 2 * pad);
  - cdiv(P + c, B) or (P + c) // B, B a constant (a constexpr of the launch
    or a power of two): the usual triton.cdiv(n, meta["BLOCK"]) grid.

A value that is none of these at every probe is refused, naming the grid
axis or argument and the values seen. Float scalars and constexprs must be
the same at every probe (a BLOCK that follows the shape would need a kernel
per shape). Tensor arguments must be the op's inputs or the tensors it
returns; anything else (a temporary, a view) is refused, naming it.
"""

import itertools
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

_INT32 = (-2**31, 2**31 - 1)


class TensorRef:
    """A tensor argument as recorded: ("input", i) or ("output", j), and its
    Triton pointer type ("*fp32", ...)."""
    __slots__ = ("kind", "index", "ptype")

    def __init__(self, kind: str, index: int, ptype: str = "*fp32"):
        self.kind, self.index, self.ptype = kind, index, ptype

    def __eq__(self, o):
        return isinstance(o, TensorRef) and (o.kind, o.index, o.ptype) == (
            self.kind, self.index, self.ptype)

    def __hash__(self):
        return hash((self.kind, self.index, self.ptype))

    def __repr__(self):
        return "TensorRef(%r, %d, %r)" % (self.kind, self.index, self.ptype)


class Form:
    """An integer over the dims: div(c + sum(k * prod(dims of mono)), B).
    mono: ((tensor, dim), ...), tensor numbering inputs first then outputs;
    mode: "" (no division), "floor" or "ceil" (division by `div`)."""
    __slots__ = ("c", "terms", "div", "mode")

    def __init__(self, c: int, terms=(), div: int = 1, mode: str = ""):
        self.c, self.terms, self.div, self.mode = c, tuple(terms), div, mode

    def eval(self, shapes: Sequence[Sequence[int]]) -> int:
        v = self.c
        for k, mono in self.terms:
            p = 1
            for t, d in mono:
                p *= shapes[t][d]
            v += k * p
        if self.mode == "floor":
            return v // self.div
        if self.mode == "ceil":
            return -((-v) // self.div)
        return v

    def render(self, dims: Sequence[Sequence[Any]]):
        """The value over `dims` (per tensor, per dim: ints or ShapeExprs)."""
        v: Any = None
        for k, mono in self.terms:
            p: Any = None
            for t, d in mono:
                p = dims[t][d] if p is None else p * dims[t][d]
            p = p if k == 1 else p * k
            v = p if v is None else v + p
        if v is None:
            v = self.c
        elif self.c:
            v = v + self.c
        if self.mode == "floor":
            return v // self.div
        if self.mode == "ceil":
            return (v + (self.div - 1)) // self.div
        return v

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def __eq__(self, o):
        return isinstance(o, Form) and (self.c, self.terms, self.div, self.mode) == (
            o.c, o.terms, o.div, o.mode)

    def __repr__(self):
        s = " + ".join([str(self.c)] + ["%d*%s" % (k, "*".join("t%dd%d" % td for td in m))
                                        for k, m in self.terms])
        if self.mode:
            s = "%s(%s, %d)" % ("cdiv" if self.mode == "ceil" else "floordiv", s, self.div)
        return s


class Launch:
    """One recorded launch: the kernel (anything comparable: the launch's
    JIT function), its grid (ints, up to 3), its parameters in the kernel's
    order as (name, value) with value a TensorRef, int, float, bool or None,
    its constexprs {name: value} and compile options {num_warps: ...}."""

    def __init__(self, kernel: Any, grid: Sequence[int], params: Sequence[Tuple[str, Any]],
                 constexprs: Optional[Dict[str, Any]] = None,
                 options: Optional[Dict[str, Any]] = None):
        self.kernel, self.grid = kernel, tuple(int(g) for g in grid)
        self.params = list(params)
        self.constexprs = dict(constexprs or {})
        self.options = dict(options or {})


class FittedLaunch:
    """The launch for every shape: grid (3 Forms), params as (name, kind,
    value) with kind "tensor" (value: TensorRef), "int32"/"int64" (Form),
    "float" (float) or "constexpr" (a constant the compile specializes:
    bools and None passed as plain arguments); constexprs, options."""

    def __init__(self, kernel, grid, params, constexprs, options):
        self.kernel, self.grid, self.params = kernel, grid, params
        self.constexprs, self.options = constexprs, options


def _powers_of_two():
    return [1 << s for s in range(1, 17)]


def _monomials(shapes: Sequence[Sequence[Sequence[int]]]):
    """Products of subsets of each tensor's varying dims, smallest first,
    with those equal at every probe to an earlier one left out."""
    nb_t = len(shapes[0])
    out, seen = [], set()
    per_t = []
    for t in range(nb_t):
        var = [d for d in range(len(shapes[0][t]))
               if len({s[t][d] for s in shapes}) > 1]
        per_t.append(var)
    for size in range(1, 1 + max([len(v) for v in per_t] + [0])):
        for t, var in enumerate(per_t):
            for sub in itertools.combinations(var, size):
                mono = tuple((t, d) for d in sub)
                vals = tuple(Form(0, [(1, mono)]).eval(s) for s in shapes)
                if vals not in seen:
                    seen.add(vals)
                    out.append((mono, vals))
    return out


def _solve_affine(rows: List[List[int]], ys: List[int]) -> Optional[List[int]]:
    """An integer x with rows . x == ys (exactly), or None: Gaussian
    elimination over fractions, free unknowns set to 0."""
    n = len(rows[0])
    m = [[Fraction(v) for v in r] + [Fraction(y)] for r, y in zip(rows, ys)]
    piv_cols, r = [], 0
    for c in range(n):
        p = next((i for i in range(r, len(m)) if m[i][c] != 0), None)
        if p is None:
            continue
        m[r], m[p] = m[p], m[r]
        inv = m[r][c]
        m[r] = [v / inv for v in m[r]]
        for i in range(len(m)):
            if i != r and m[i][c] != 0:
                f = m[i][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[r])]
        piv_cols.append(c)
        r += 1
    if any(all(v == 0 for v in row[:n]) and row[n] != 0 for row in m):
        return None
    x = [Fraction(0)] * n
    for i, c in enumerate(piv_cols):
        x[c] = m[i][n]
    if any(v.denominator != 1 for v in x):
        return None
    return [int(v) for v in x]


def fit_value(ys: Sequence[int], shapes, nb_in: int, divisors: Sequence[int],
              what: str) -> Form:
    """The simplest Form giving ys[p] at shapes[p] for every probe p, in the
    order the module's docstring lists; ValueError naming `what` if none."""
    ys = [int(y) for y in ys]
    if len(set(ys)) == 1:
        return Form(ys[0])
    monos = _monomials(shapes)
    for mono, vals in monos:
        a = next((p for p in range(1, len(ys)) if vals[p] != vals[0]), None)
        if a is None:
            continue
        k, r = divmod(ys[a] - ys[0], vals[a] - vals[0])
        if r or not k:
            continue
        c = ys[0] - k * vals[0]
        if all(c + k * v == y for v, y in zip(vals, ys)):
            return Form(c, [(k, mono)])
    singles = [m for m, _ in monos if len(m) == 1 and m[0][0] < nb_in]
    if singles and len(ys) > len(singles) + 1:
        rows = [[1] + [s[m[0][0]][m[0][1]] for m in singles] for s in shapes]
        x = _solve_affine(rows, ys)
        if x is not None:
            return Form(x[0], [(k, m) for k, m in zip(x[1:], singles) if k])
    # cdiv/floor of P + c: the offsets c with div(P + c, b) == y at every
    # probe form an interval (cdiv: b*(y-1) < P + c <= b*y). c == 0 first
    # (the boundary probes rule it out wherever c is another), then an
    # interval of one value; a wider one is refused, not guessed.
    ambiguous: List[str] = []
    for exact in (True, False):
        for b in divisors:
            if b < 2:
                continue
            for mono, vals in monos:
                for mode in ("ceil", "floor"):
                    lo, hi = -2**62, 2**62
                    for v, y in zip(vals, ys):
                        if mode == "ceil":
                            lo, hi = max(lo, b * (y - 1) - v + 1), min(hi, b * y - v)
                        else:
                            lo, hi = max(lo, b * y - v), min(hi, b * (y + 1) - v - 1)
                    if exact and lo <= 0 <= hi:
                        return Form(0, [(1, mono)], b, mode)
                    if not exact and lo == hi:
                        return Form(lo, [(1, mono)], b, mode)
                    if not exact and lo < hi and len(ambiguous) < 3:
                        ambiguous.append("%r with c in [%d, %d]" % (
                            Form(0, [(1, mono)], b, mode), lo, hi))
    if ambiguous:
        raise ValueError(
            "%s takes the values %s at the probe shapes %s: that is div(P + c, B) for "
            "more than one offset c (%s), which the shapes tried cannot tell apart; "
            "compute it from a tensor's dims directly (e.g. the output's)" % (
                what, ys, [[list(t) for t in s] for s in shapes], "; ".join(ambiguous)))
    raise ValueError(
        "%s takes the values %s at the probe shapes %s: that is not a constant, c + k * "
        "(a product of one tensor's dims), an affine function of the input dims, or "
        "cdiv/floor of such a product plus a constant by a constant, the forms plugrt "
        "can carry into the engine" % (what, ys, [[list(t) for t in s] for s in shapes]))


def fit_launches(shapes: Sequence[Sequence[Sequence[int]]], launches: Sequence[Launch],
                 nb_in: int, who: str) -> FittedLaunch:
    """One launch description from launches[p] recorded at shapes[p] (per
    probe: every input's then every output's shape). who names the op in
    errors. Raises ValueError where the launches disagree or a value does
    not fit."""
    if not launches or len(launches) != len(shapes):
        raise ValueError("%s: %d recorded launches for %d probe shapes" % (
            who, len(launches), len(shapes)))
    first = launches[0]
    for p, ln in enumerate(launches[1:], 1):
        if ln.kernel is not first.kernel and ln.kernel != first.kernel:
            raise ValueError("%s launches a different kernel at the input shapes %s" % (
                who, shapes[p][:nb_in]))
        if [n for n, _ in ln.params] != [n for n, _ in first.params]:
            raise ValueError("%s passes different parameters at the input shapes %s" % (
                who, shapes[p][:nb_in]))
        for n, v in ln.constexprs.items():
            if first.constexprs.get(n) != v:
                raise ValueError(
                    "%s: constexpr %s is %r at the input shapes %s but %r at %s; plugrt "
                    "compiles one kernel for every shape, so a constexpr must not follow "
                    "the shapes" % (who, n, first.constexprs.get(n), shapes[0][:nb_in], v,
                                    shapes[p][:nb_in]))
        if ln.options != first.options:
            raise ValueError("%s: the launch options %s change with the shapes (%s)" % (
                who, first.options, ln.options))
    divisors = [v for v in first.constexprs.values()
                if isinstance(v, int) and not isinstance(v, bool) and v > 1]
    divisors += [v for v in _powers_of_two() if v not in divisors]
    grid = []
    for ax in range(3):
        ys = [ln.grid[ax] if ax < len(ln.grid) else 1 for ln in launches]
        grid.append(fit_value(ys, shapes, nb_in, divisors, "%s: grid[%d]" % (who, ax)))
    params: List[Tuple[str, str, Any]] = []
    for i, (name, v0) in enumerate(first.params):
        vals = [ln.params[i][1] for ln in launches]
        what = "%s: argument %s" % (who, name)
        if isinstance(v0, TensorRef):
            if any(v != v0 for v in vals):
                raise ValueError("%s is a different tensor at different shapes (%s)" % (
                    what, vals))
            params.append((name, "tensor", v0))
        elif v0 is None or isinstance(v0, bool):
            if any(v is not v0 for v in vals):
                raise ValueError("%s changes with the shapes (%s)" % (what, vals))
            params.append((name, "constexpr", v0))
        elif isinstance(v0, int):
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
                raise ValueError("%s is not always an int (%s)" % (what, vals))
            f = fit_value(vals, shapes, nb_in, divisors, what)
            wide = any(not _INT32[0] <= v <= _INT32[1] for v in vals)
            params.append((name, "int64" if wide else "int32", f))
        elif isinstance(v0, float):
            if any(v != v0 for v in vals):
                raise ValueError("%s is a float that changes with the shapes (%s); plugrt "
                                 "carries float arguments as constants" % (what, vals))
            params.append((name, "float", float(v0)))
        else:
            raise ValueError("%s is a %s (%r): plugrt passes tensors, ints, floats and "
                             "bools" % (what, type(v0).__name__, v0))
    return FittedLaunch(first.kernel, grid, params, dict(first.constexprs),
                        dict(first.options))


def probe_shapes(ranks: Sequence[int], fixed: Sequence[Sequence[Optional[int]]],
                 count: Optional[int] = None) -> List[List[List[int]]]:
    """Input shapes to record the launch at: dims given in `fixed` (a
    constant of the layer) keep their value; the others vary from probe to
    probe, each tensor's element count ranging up to about 2**21 so that
    a grid of cdiv(numel, BLOCK) moves for any BLOCK up to a few thousand.
    Deterministic (a fixed linear congruential sequence).

    Then boundary probes: every varying dim at 2**a, 2**a + 1, 2**(a+1)
    and 2**(a+1) - 1 (2**a about the same element count), and each varying
    dim alone at 2**12 and 2**12 + 1 (the others 1): random shapes alone rarely tell
    cdiv(n, 1024) from cdiv(n + 3, 1024), while a product of powers of two
    is a multiple of the block and one of 2**a + 1 is one past it, where the
    two differ."""
    var = [(i, k) for i, r in enumerate(ranks) for k in range(r) if fixed[i][k] is None]
    n = count or len(var) + 5
    state = 12345
    probes = []
    nvars = [sum(1 for k in range(r) if fixed[i][k] is None) or 1
             for i, r in enumerate(ranks)]
    for p in range(n):
        shape = []
        for i, r in enumerate(ranks):
            hi = max(8, int(2 ** (21.0 / nvars[i])))
            dims = []
            for k in range(r):
                f = fixed[i][k]
                if f is not None:
                    dims.append(int(f))
                    continue
                state = (state * 1103515245 + 12345) % 2**31
                # The first probe small, the rest spread up to hi.
                top = max(3, int(hi ** 0.5) if p == 0 else hi)
                dims.append(2 + state % (top - 1))
            shape.append(dims)
        probes.append(shape)
    for shift, off in ((0, 0), (0, 1), (1, 0), (1, -1)):
        shape = []
        for i, r in enumerate(ranks):
            a = max(2, 20 // nvars[i]) + shift
            shape.append([2**a + off if f is None else int(f) for f in fixed[i]])
        probes.append(shape)
    # One dim large and the others 1: a grid over one dim of a rank-4
    # tensor by a block of 1024 moves only here, and every product of dims
    # is 2**12 or one past it.
    for i, k in var:
        for off in (0, 1):
            probes.append([[(2**12 + off if (j, m) == (i, k) else 1) if f is None else int(f)
                            for m, f in enumerate(fixed[j])] for j in range(len(ranks))])
    return probes

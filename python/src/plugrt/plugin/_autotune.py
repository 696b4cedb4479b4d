"""AutoTuneCombination: the type/format combinations and tactics a decorator
plugin offers (tensorrt.plugin's)."""

import itertools
from typing import Any, Iterable, List, Optional, Tuple, Union

from .._types import DataType, TensorFormat

_TYPES = {"FP32": DataType.FLOAT, "FLOAT": DataType.FLOAT, "FP16": DataType.HALF,
          "HALF": DataType.HALF, "BF16": DataType.BF16, "INT8": DataType.INT8,
          "UINT8": DataType.UINT8, "INT32": DataType.INT32, "INT64": DataType.INT64,
          "BOOL": DataType.BOOL, "FP64": DataType.DOUBLE, "DOUBLE": DataType.DOUBLE,
          "INT16": DataType.INT16, "UINT16": DataType.UINT16, "UINT32": DataType.UINT32,
          "UINT64": DataType.UINT64}
_FORMATS = {"LINEAR": TensorFormat.LINEAR}


def _parse_one(text, table, what):
    """"FP32|FP16" -> ("|", [FP32, FP16]); "FP32*FP16" -> ("*", ...)."""
    t = text.strip()
    if "|" in t and "*" in t:
        raise ValueError("%r mixes '|' and '*'; use one separator" % text)
    sep = "*" if "*" in t else "|"
    out = []
    for part in t.split(sep):
        key = part.strip().upper()
        if key not in table:
            raise ValueError("%r is not a %s (one of %s)" % (part.strip(), what,
                                                             ", ".join(sorted(table))))
        out.append(table[key])
    return sep, out


def _parse(text, table, what):
    if text is None:
        return None
    return [_parse_one(p, table, what) for p in text.split(",")]


def _expand(specs, n):
    """Position specs -> list of {pos: value}. '|' positions go together
    (the k-th alternative of each, or the only one); '*' positions combine
    with every choice of the others."""
    if specs is None:
        return [{}]
    if len(specs) != n and len(specs) != 1:
        raise ValueError("%d entries for %d inputs and outputs" % (len(specs), n))
    if len(specs) == 1 and n > 1:
        specs = specs * n
    bar = [(i, v) for i, (sep, v) in enumerate(specs) if sep == "|"]
    star = [(i, v) for i, (sep, v) in enumerate(specs) if sep == "*"]
    lens = {len(v) for _, v in bar if len(v) > 1}
    if len(lens) > 1:
        raise ValueError("'|' lists of different lengths %s: each alternative of a "
                         "combination needs one entry per position" % sorted(lens))
    k = lens.pop() if lens else 1
    rows = [{i: (v[j] if len(v) > 1 else v[0]) for i, v in bar} for j in range(k)]
    out = []
    for row in rows:
        for pick in itertools.product(*[v for _, v in star]):
            d = dict(row)
            d.update({i: p for (i, _), p in zip(star, pick)})
            out.append(d)
    return out


class AutoTuneCombination:
    """Type/format combinations of a plugin's inputs and outputs, in
    position order (inputs, then outputs), and the tactics offered for them.

    io_types: "TYPE,TYPE,..." one entry per position (or one for all); an
    entry "FP32|FP16" lists alternatives taken together with the other
    positions' k-th ("FP32|FP16, FP32|FP16": (FP32, FP32) and (FP16, FP16)),
    "FP32*FP16" alternatives combined with every choice of the others.
    layouts: the same for formats ("LINEAR"). tactics: positive ids; the
    builder runs the plugin only at declared tactics (the first one when
    autotuning is off), and at tactic 0 only when no combination declares
    any."""

    def __init__(self, io_types: Optional[str] = None, layouts: Optional[str] = None,
                 tactics: Optional[Iterable[int]] = None):
        self._types = _parse(io_types, _TYPES, "type")
        self._layouts = _parse(layouts, _FORMATS, "format")
        self._pos: List[Tuple[List[int], Any, Any]] = []  # (positions, types, formats)
        self._tactics: List[int] = []
        if tactics is not None:
            self.tactics(tactics)

    def pos(self, pos: Union[int, Iterable[int]], io_types: str, layouts: str = "LINEAR") -> None:
        """Types (and formats) for some positions; several positions given
        together share one type."""
        ps = [pos] if isinstance(pos, int) else list(pos)
        self._pos.append((ps, _parse_one(io_types, _TYPES, "type"),
                          _parse_one(layouts, _FORMATS, "format")))

    def tactics(self, tactics: Iterable[int]) -> None:
        ts = [int(t) for t in tactics]
        if any(t <= 0 for t in ts):
            raise ValueError("custom tactics must be positive integers (0 is the tactic "
                             "of a plugin that declares none): %r" % (ts,))
        self._tactics = ts

    def _combinations(self, n: int) -> List[Tuple[Tuple, Tuple]]:
        """Every (types, formats) tuple over n positions; None = any."""
        types = _expand(self._types, n)
        formats = _expand(self._layouts, n)
        groups = []
        for ps, (_, tv), (_, fv) in self._pos:
            for p in ps:
                if not 0 <= p < n:
                    raise ValueError("position %d is out of range (%d inputs and outputs)"
                                     % (p, n))
            groups.append([(ps, t, f) for t in tv for f in fv])
        out = []
        for t in types:
            for f in formats:
                for pick in itertools.product(*groups):
                    tt, ff = dict(t), dict(f)
                    for ps, ty, fo in pick:
                        for p in ps:
                            tt[p] = ty
                            ff[p] = fo
                    out.append((tuple(tt.get(i) for i in range(n)),
                                tuple(ff.get(i, TensorFormat.LINEAR) for i in range(n))))
        return out

    def __repr__(self):
        return "AutoTuneCombination(types=%r, layouts=%r, pos=%r, tactics=%r)" % (
            self._types, self._layouts, self._pos, self._tactics)


__all__ = ["AutoTuneCombination"]

"""Plugins from torch custom ops (Torch-TensorRT's custom_op): from_torch_op.

Shapes. The op's fake (meta) implementation is run under torch's
FakeTensorMode at concrete input shapes: one base shape, one more per input
dim (that dim changed alone) and a check shape with every dim changed. Each
output dim is fitted as an affine function of the input dims (a constant
plus integer multiples of dims) and must reproduce the check shape; an op
whose output dims are not affine in its input dims (a reshape to a
product, data-dependent sizes) is refused, naming the output and dim. The
fitted expressions become the register function's ShapeExpr arithmetic, so
the engine's shapes follow the inputs at run time.

Types come from the same fake run (per input dtype combination). impl views
plugrt's buffers as torch tensors without a copy (torch.as_tensor over
__cuda_array_interface__ on CUDA, torch.from_numpy on the CPU), calls the
op, and copies its results into the outputs (the op allocates them: a
functional op has nowhere else to write).

AOT. For an op defined with torch.library.triton_op (torch >= 2.6) whose
body launches exactly one Triton kernel, from_torch_op also registers an
aot_impl (plugin/_tritonop.py): the body is run under fake tensors at
several shapes with wrap_triton's launches recorded, the grid and integer
arguments fitted as expressions over the layer's dims (plugin/_launchfit.py),
and the kernel compiled with triton.compile and embedded in the engine, so
that the engine runs with no Python (plugrt run --allow-embedded-kernels).
As with any plugin having both, the network chooses impl or aot_impl
(add_plugin(..., aot=), PREFER_AOT/JIT_PYTHON_PLUGINS). A triton_op the
recording cannot carry (no kernel or several, a constexpr that follows the
shapes, a grid outside the fitted forms) fails the build naming the op and
the reason; aot=False runs it through impl.
"""

import importlib
import inspect
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import numpy.typing as npt

from .._types import DataType
from ._bridge import aot_impl, impl, register
from ._shape import TensorDesc

_SCALARS = {"int": int, "SymInt": int, "float": float, "bool": bool, "str": str}
_LISTS: Dict[str, Any] = {"int[]": npt.NDArray[np.int64], "SymInt[]": npt.NDArray[np.int64],
                           "float[]": npt.NDArray[np.float64],
                           "bool[]": npt.NDArray[np.bool_]}


def _torch():
    try:
        # An optional dependency, imported by name so that type checkers
        # without torch's stubs pass.
        torch = importlib.import_module("torch")
    except ImportError:
        raise ImportError("from_torch_op needs torch (pip install torch)") from None
    return torch


def _dtype_maps(torch):
    from .._cuda import torch_dtype  # noqa: PLC0415
    to_torch, from_torch = {}, {}
    for d in DataType:
        try:
            t = torch_dtype(d)
        except Exception:  # noqa: BLE001 - no torch counterpart
            continue
        to_torch[d] = t
        from_torch.setdefault(t, d)
    return to_torch, from_torch


def _fit(samples, nb_vars, what):
    """Fits y = c + sum(k_j * v_j) (integers) through samples [(vars, y)]:
    sample 0 is the base, sample 1 + j changes var j alone; the rest check.
    Returns (c, [k_j]) or raises ValueError naming `what`."""
    base_v, base_y = samples[0]
    ks = []
    for j in range(nb_vars):
        v, y = samples[1 + j]
        dv = v[j] - base_v[j]
        k, r = divmod(y - base_y, dv)
        if r:
            raise ValueError("%s is not an integer multiple of input dim %d" % (what, j))
        ks.append(k)
    c = base_y - sum(k * x for k, x in zip(ks, base_v))
    for v, y in samples[1 + nb_vars:]:
        if c + sum(k * x for k, x in zip(ks, v)) != y:
            raise ValueError("%s is not an affine function of the input dims (plugrt fits "
                             "output dims as constant + multiples of input dims)" % what)
    return c, ks


def _signature(inputs: Sequence[str], keywords: Sequence[str]) -> inspect.Signature:
    """What impl and aot_impl functions made here declare: the inputs, then
    keyword-only attributes and the entry's own (outputs, stream, tactic)."""
    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in inputs] +
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in keywords])


def from_torch_op(op_name: str, plugin_id: Optional[str] = None,
                  devices: Sequence[str] = ("cpu", "cuda"),
                  aot: Optional[bool] = None) -> str:
    """Registers the torch custom op `op_name` ("ns::op", from
    torch.library.custom_op or a library with a fake/meta kernel) as a
    decorator plugin `plugin_id` (default: the op's name) and returns the
    plugin id. Tensor arguments are the plugin's inputs (in the schema's
    order); int, float, bool, str and int[]/float[] arguments become its
    attributes (keyword arguments of plugrt.plugin.op.<ns>.<name>).
    Outputs: the op's Tensor returns.

    aot: None registers an aot_impl too when the op is a
    torch.library.triton_op (its one Triton kernel compiled and embedded in
    CUDA engines that choose it); True requires that (TypeError for other
    ops); False registers impl only."""
    torch = _torch()
    ns, name = op_name.split("::", 1)
    packet = getattr(getattr(torch.ops, ns), name)
    overload = packet.default
    schema = overload._schema
    to_torch, from_torch = _dtype_maps(torch)
    inputs: List[str] = []
    attrs: List[inspect.Parameter] = []
    ann: Dict[str, Any] = {}
    for a in schema.arguments:
        t = str(a.type)
        if t == "Tensor":
            if attrs:
                raise TypeError("%s: tensor argument %r comes after an attribute; plugrt "
                                "plugins take tensors first" % (op_name, a.name))
            inputs.append(a.name)
            ann[a.name] = TensorDesc
            continue
        if t in _SCALARS:
            kind = _SCALARS[t]
        elif t in _LISTS:
            kind = _LISTS[t]
        else:
            raise TypeError("%s: argument %r of type %s has no plugin attribute type "
                            "(int, float, bool, str, int[], float[])" % (op_name, a.name, t))
        default = a.default_value if a.has_default_value() else inspect.Parameter.empty
        attrs.append(inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                       default=default, annotation=kind))
        ann[a.name] = kind
    rets = [str(r.type) for r in schema.returns]
    if not rets or any(r != "Tensor" for r in rets):
        raise TypeError("%s: plugrt plugins return tensors; the op returns (%s)" % (
            op_name, ", ".join(rets) or "nothing"))
    attr_names = [p.name for p in attrs]
    pid = plugin_id or op_name

    def run_fake(shapes, dtypes, kw):
        FakeTensorMode = importlib.import_module("torch._subclasses.fake_tensor").FakeTensorMode
        with FakeTensorMode():
            ts = [torch.empty(s, dtype=to_torch[d]) for s, d in zip(shapes, dtypes)]
            out = overload(*ts, **kw)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        got = []
        for o in outs:
            try:
                got.append(([int(x) for x in o.shape], from_torch[o.dtype]))
            except Exception as exc:  # noqa: BLE001 - symbolic or unknown dtype
                raise ValueError("%s: output shape %s or dtype %s cannot be a plugin's "
                                 "(data-dependent sizes are not supported)" % (
                                     op_name, tuple(o.shape), o.dtype)) from exc
        return got

    def kwargs_of(values):
        kw = {}
        for n, v in values.items():
            kw[n] = v.tolist() if isinstance(v, np.ndarray) else v
        return kw

    def reg(*descs, **values):
        dtypes = [d.dtype or DataType.FLOAT for d in descs]
        ranks = [len(d.shape_expr) for d in descs]
        kw = kwargs_of(values)
        slots = [(i, k) for i, r in enumerate(ranks) for k in range(r)]
        base = [[3 + (7 * i + 3 * k) % 5 for k in range(r)] for i, r in enumerate(ranks)]
        probes = [base]
        for i, k in slots:
            p = [list(s) for s in base]
            p[i][k] += 4
            probes.append(p)
        probes.append([[x + 2 + (j % 3) for j, x in enumerate(s)] for s in base])
        runs = [run_fake(p, dtypes, kw) for p in probes]
        outs = []
        for o, (shape0, dt) in enumerate(runs[0]):
            dims = []
            for d in range(len(shape0)):
                what = "%s: output %d dim %d" % (op_name, o, d)
                samples = []
                for p, r in zip(probes, runs):
                    if len(r[o][0]) != len(shape0):
                        raise ValueError("%s: output %d's rank changes with the input shapes"
                                         % (op_name, o))
                    samples.append(([p[i][k] for i, k in slots], r[o][0][d]))
                c, ks = _fit(samples, len(slots), what)
                e = c
                for (i, k), m in zip(slots, ks):
                    if m:
                        e = descs[i].shape_expr[k] * m + e
                dims.append(e if not isinstance(e, int) else e)
            td = TensorDesc([x for x in dims], dt)
            outs.append(td)
        return outs[0] if len(outs) == 1 else tuple(outs)

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=TensorDesc) for n in inputs] + attrs
    reg.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    reg.__annotations__ = dict(ann)
    reg.__qualname__ = reg.__name__ = "from_torch_op(%r)" % op_name
    register(pid)(reg)

    def run(*tensors, outputs, stream, **values):
        kw = kwargs_of({n: values[n] for n in attr_names if n in values})
        if tensors and tensors[0].device.name == "CUDA" or (
                not tensors and outputs and outputs[0].device.name == "CUDA"):
            with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
                ts = [torch.as_tensor(t, device="cuda") for t in tensors]
                got = overload(*ts, **kw)
                got = got if isinstance(got, (tuple, list)) else (got,)
                for o, g in zip(outputs, got):
                    torch.as_tensor(o, device="cuda").copy_(g)
            return
        ts = [torch.from_numpy(np.asarray(t)) for t in tensors]
        got = overload(*ts, **kw)
        got = got if isinstance(got, (tuple, list)) else (got,)
        for o, g in zip(outputs, got):
            torch.from_numpy(np.asarray(o)).copy_(g)

    sig = _signature(inputs, attr_names + ["outputs", "stream"])
    run.__signature__ = sig  # type: ignore[attr-defined]
    run.__qualname__ = run.__name__ = "from_torch_op(%r).impl" % op_name
    impl(pid, device=list(devices))(run)
    if aot is not False:
        from . import _tritonop  # noqa: PLC0415
        if _tritonop.is_triton_op(torch, op_name):
            aot_impl(pid)(_tritonop.make_aot_impl(
                torch, op_name, overload, to_torch, kwargs_of, attr_names,
                _signature(inputs, attr_names + ["outputs", "tactic"])))
        elif aot:
            raise TypeError("from_torch_op(%r, aot=True): the op is not a "
                            "torch.library.triton_op, so it has no Triton kernel to embed"
                            % op_name)
    return pid

"""from_torch_op's aot_impl for torch.library.triton_op ops (torch >= 2.6).

A triton_op's body allocates its outputs and launches Triton kernels through
torch.library.wrap_triton; torch registers that body as the op's fake
implementation. So the body can run under FakeTensorMode at any shape, with
no GPU work: while it does, wrap_triton's kernel wrapper
(TraceableTritonKernelWrapper: `wrap_triton(k)[grid](...)` and
`wrap_triton(k).run(..., grid=)`) is replaced by a recorder that keeps the
kernel, its grid (a callable grid is called with the launch's arguments and
constexprs, as Triton calls it) and the arguments bound to the kernel's
parameters, and launches nothing. Tensor arguments are identified as the
op's inputs (by identity) or the tensors it returns.

The body is recorded at several probe shapes (_launchfit.probe_shapes:
dims that are constants of the layer stay fixed), and _launchfit fits the
grid and the integer arguments as expressions over the layer's dims. The
kernel is compiled once with triton.compile for the current device (cubin
and PTX), every non-constexpr parameter in the kernel's own order (the
launch names each one's place: KernelLaunchParams.arg_order), no
specialization on argument values (the code is correct for every value the
expressions take).

Refused, naming the op and the reason: a body that launches no kernel
through wrap_triton or more than one (plugrt's aot_impl embeds one kernel
per layer), an autotuned kernel with more than one config, @triton.heuristics,
a constexpr that changes with the shapes, tensors that are neither inputs
nor returned outputs (temporaries, views), a cluster launch (num_ctas > 1).
"""

import importlib
import inspect
import threading
from typing import Any, Dict, List, Sequence

from . import _launchfit as F
from ._aot import KernelLaunchParams, SymFloat32, SymInt32, SymInt64

_lock = threading.Lock()  # the recorder patches a class: one op body at a time
_compiled: Dict[Any, Any] = {}

# Triton pointer types of torch dtypes (by name: torch is imported late).
_PTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
           "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
           "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def is_triton_op(torch, op_name: str) -> bool:
    """Whether op_name was defined with torch.library.triton_op."""
    try:
        tri = importlib.import_module("torch._library.triton")
    except ImportError:
        return False
    table = getattr(tri, "triton_ops_to_kernels", None)
    if isinstance(table, dict) and op_name in table:
        return True
    # torch 2.6 has no table: its triton_op wraps the body in a backend_fn.
    try:
        opdef = importlib.import_module("torch._library.custom_ops").OPDEFS.get(op_name)
    except (ImportError, AttributeError):
        return False
    init = getattr(opdef, "_init_fn", None)
    return "triton_op" in getattr(init, "__qualname__", "")


def _fake_body(torch, op_name, overload):
    """The function to run under fake tensors: the op's registered fake
    (the triton_op body itself, so tensors keep their identity), else the
    op through the dispatcher."""
    try:
        opdef = importlib.import_module("torch._library.custom_ops").OPDEFS.get(op_name)
        fn = getattr(opdef, "_abstract_fn", None)
        if fn is not None:
            return fn
    except (ImportError, AttributeError):
        pass
    return overload


def _unwrap_kernel(kernel, who):
    """(JITFunction, config kwargs, config options) of a launched kernel."""
    jit_t = importlib.import_module("triton.runtime.jit").JITFunction
    auto_t = getattr(importlib.import_module("triton.runtime.autotuner"), "Autotuner", ())
    heur_t = getattr(importlib.import_module("triton.runtime.autotuner"), "Heuristics", ())
    kw: Dict[str, Any] = {}
    opts: Dict[str, Any] = {}
    k = kernel
    while not isinstance(k, jit_t):
        if auto_t and isinstance(k, auto_t):
            if len(k.configs) != 1:
                raise ValueError(
                    "%s: its kernel is autotuned over %d configs; plugrt's aot_impl compiles "
                    "one kernel at build time (give @triton.autotune one config, or build "
                    "with aot=False to run the op through impl)" % (who, len(k.configs)))
            cfg = k.configs[0]
            kw.update(getattr(cfg, "kwargs", {}) or {})
            for o in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                if getattr(cfg, o, None) is not None:
                    opts[o] = getattr(cfg, o)
            k = k.fn
        elif heur_t and isinstance(k, heur_t):
            raise ValueError("%s: its kernel uses @triton.heuristics, which plugrt's aot_impl "
                             "does not evaluate (build with aot=False)" % who)
        else:
            raise ValueError("%s launches %r, which is not a @triton.jit function" % (
                who, k))
    return k, kw, opts


def _record(torch, body, shapes, dtypes, kw, to_torch, who):
    """Runs the body under fake tensors at `shapes`; returns (Launch,
    output shapes)."""
    W = importlib.import_module(
        "torch._higher_order_ops.triton_kernel_wrap").TraceableTritonKernelWrapper
    FakeTensorMode = importlib.import_module("torch._subclasses.fake_tensor").FakeTensorMode
    calls: List[Any] = []

    def call(self, *args, **kwargs):
        calls.append((self.kernel, self.grid, args, kwargs))

    def run(self, *args, **kwargs):
        kwargs = dict(kwargs)
        grid = kwargs.pop("grid", None)
        calls.append((self.kernel, grid, args, kwargs))

    device = "cuda" if torch.cuda.is_available() else "cpu"
    with _lock:
        saved = W.__call__, W.run
        W.__call__, W.run = call, run
        try:
            with FakeTensorMode():
                ts = [torch.empty(s, dtype=to_torch[d], device=device)
                      for s, d in zip(shapes, dtypes)]
                out = body(*ts, **kw)
        finally:
            W.__call__, W.run = saved
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(calls) != 1:
        names = [getattr(getattr(c[0], "fn", c[0]), "__name__", "?") for c in calls]
        raise ValueError(
            "%s: its body launches %s through wrap_triton at the input shapes %s; plugrt's "
            "aot_impl embeds exactly one Triton kernel per layer (build with aot=False to "
            "run the op through impl)" % (
                who, "no kernel" if not calls else "%d kernels (%s)" % (
                    len(calls), ", ".join(names)), [list(s) for s in shapes]))
    kernel, grid, args, kwargs = calls[0]
    jit, cfg_kw, opts = _unwrap_kernel(kernel, who)
    names = list(jit.arg_names)
    call_kw = {}
    for n, v in kwargs.items():
        if n in names:
            call_kw[n] = v
        else:
            opts[n] = v  # launch options: num_warps, num_stages, ...
    for n, v in cfg_kw.items():
        call_kw.setdefault(n, v)
    try:
        bound = inspect.signature(jit.fn).bind(*args, **call_kw)
    except TypeError as exc:
        raise ValueError("%s: the launch of %s does not match its parameters: %s" % (
            who, jit.__name__, exc)) from None
    bound.apply_defaults()
    values = dict(bound.arguments)
    constexprs: Dict[str, Any] = {}
    params = []
    for p, n in zip(jit.params, names):
        v = values.get(n)
        if hasattr(v, "value") and type(v).__name__ == "constexpr":
            v = v.value
        if getattr(p, "is_constexpr", False):
            constexprs[n] = v
            continue
        if isinstance(v, torch.Tensor):
            ref = None
            for i, t in enumerate(ts):
                if v is t:
                    ref = ("input", i)
            for j, t in enumerate(outs):
                if ref is None and v is t:
                    ref = ("output", j)
            if ref is None:
                raise ValueError(
                    "%s: kernel %s's argument %s is a tensor that is neither one of the op's "
                    "inputs nor a tensor it returns (a temporary or a view); plugrt passes "
                    "only the layer's own buffers" % (who, jit.__name__, n))
            ptype = _PTYPES.get(str(v.dtype).replace("torch.", ""))
            if ptype is None:
                raise ValueError("%s: argument %s has dtype %s, which has no Triton pointer "
                                 "type here" % (who, n, v.dtype))
            params.append((n, F.TensorRef(ref[0], ref[1], "*" + ptype)))
            continue
        # numpy scalars (an attribute, a size computed with numpy) as Python's.
        item = getattr(v, "item", None)
        if item is not None and getattr(v, "shape", None) == ():
            v = item()
        params.append((n, v))
    if callable(grid):
        meta = dict(values)
        meta.update(constexprs)
        grid = grid(meta)
    if grid is None:
        raise ValueError("%s: the launch of %s has no grid" % (who, jit.__name__))
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    if not 1 <= len(grid) <= 3:
        raise ValueError("%s: grid %r has %d dims" % (who, grid, len(grid)))
    launch = F.Launch(jit, [int(g) for g in grid], params, constexprs, opts)
    return launch, [[int(x) for x in o.shape] for o in outs]


def _target():
    torch = importlib.import_module("torch")
    cc = torch.cuda.get_device_capability()
    try:
        GPUTarget = importlib.import_module("triton.backends.compiler").GPUTarget
        return GPUTarget("cuda", cc[0] * 10 + cc[1], 32), cc
    except (ImportError, AttributeError):
        return None, cc


def compile_fitted(fit: F.FittedLaunch, who: str):
    """triton.compile of the fitted launch for the current device, across
    Triton 3.x's signature formats (keyed by name with the constexprs listed
    from 3.3, by name without them in 3.2, by position in 3.0 and 3.1)."""
    triton = importlib.import_module("triton")
    ASTSource = importlib.import_module("triton.compiler").ASTSource
    jit = fit.kernel
    names = list(jit.arg_names)
    types: Dict[str, str] = {}
    consts = dict(fit.constexprs)
    for n, kind, v in fit.params:
        if kind == "tensor":
            types[n] = v.ptype
        elif kind == "int32":
            types[n] = "i32"
        elif kind == "int64":
            types[n] = "i64"
        elif kind == "float":
            types[n] = "fp32"
        else:
            consts[n] = v
    missing = [n for n in names if n not in types and n not in consts]
    if missing:
        raise ValueError("%s: kernel %s's parameter(s) %s were given no value" % (
            who, jit.__name__, ", ".join(missing)))
    target, cc = _target()
    opts = {k: v for k, v in fit.options.items() if v is not None}
    key = (id(jit), tuple(sorted(types.items())), repr(sorted(consts.items())),
           repr(sorted(opts.items())), cc)
    got = _compiled.get(key)
    if got is not None:
        return got
    full = {n: types.get(n, "constexpr") for n in names}
    attempts = [
        lambda: ASTSource(jit, full, constexprs=consts),
        lambda: ASTSource(jit, {n: types[n] for n in names if n in types}, constants=consts),
        lambda: ASTSource(jit, {i: types[n] for i, n in enumerate(names) if n in types},
                          constants={names.index(n): v for n, v in consts.items()}),
    ]
    errors: List[str] = []
    for make in attempts:
        try:
            src = make()
            kw: Dict[str, Any] = {"options": opts} if opts else {}
            if target is not None:
                kw["target"] = target
            k = triton.compile(src, **kw)
            break
        except Exception as exc:  # noqa: BLE001 - the next signature format
            errors.append("%s: %s" % (type(exc).__name__, exc))
    else:
        # The first format's error is the one that says what is wrong on a
        # current Triton; the others only say it is not their format.
        raise RuntimeError("%s: triton %s cannot compile %s: %s" % (
            who, triton.__version__, jit.__name__, " | ".join(errors)))
    if int(getattr(k.metadata, "num_ctas", 1) or 1) != 1:
        raise ValueError("%s: kernel %s is compiled for a cluster of %d CTAs; plugrt launches "
                         "one" % (who, jit.__name__, k.metadata.num_ctas))
    _compiled[key] = k
    return k


def aot_result(fit: F.FittedLaunch, k, in_dims: Sequence[Sequence[Any]],
               out_dims: Sequence[Sequence[Any]]):
    """aot_impl's answer for a compiled kernel k of the fitted launch:
    (kernel_name, [cubin, PTX], KernelLaunchParams, extra args), the
    parameter order in KernelLaunchParams.arg_order."""
    dims = [list(d) for d in in_dims] + [list(d) for d in out_dims]
    lp = KernelLaunchParams()
    lp.grid_x, lp.grid_y, lp.grid_z = [g.render(dims) for g in fit.grid]
    lp.block_x = int(k.metadata.num_warps) * 32
    lp.shared_mem = int(getattr(k.metadata, "shared", 0) or 0)
    lp.global_scratch = int(getattr(k.metadata, "global_scratch_size", 0) or 0)
    order = []
    extra: List[Any] = []
    for _, kind, v in fit.params:
        if kind == "tensor":
            order.append((v.kind, v.index))
        elif kind in ("int32", "int64", "float"):
            order.append(("extra", len(extra)))
            if kind == "float":
                extra.append(SymFloat32(v))
            else:
                e = v.render(dims)
                extra.append(SymInt64(e) if kind == "int64" else SymInt32(e))
    lp.arg_order = order
    code = [k.asm["cubin"], k.asm["ptx"]] if "cubin" in k.asm else k.asm["ptx"]
    return k.metadata.name, code, lp, extra


def make_aot_impl(torch, op_name, overload, to_torch, kwargs_of, attr_names, signature):
    """The aot_impl function from_torch_op registers for a triton_op
    (signature: the inputs, attributes, outputs and tactic it declares)."""
    from .._types import DataType  # noqa: PLC0415
    body = _fake_body(torch, op_name, overload)
    who = "from_torch_op(%r)" % op_name

    def aot(*descs, outputs, tactic, **values):
        kw = kwargs_of({n: values[n] for n in attr_names if n in values})
        dtypes = [d.dtype or DataType.FLOAT for d in descs]
        ranks = [len(d.shape_expr) for d in descs]
        fixed = [[e.constant_value if e.is_constant else None for e in d.shape_expr]
                 for d in descs]
        probes = F.probe_shapes(ranks, fixed)
        shapes, launches = [], []
        for p in probes:
            ln, outs = _record(torch, body, p, dtypes, kw, to_torch, who)
            launches.append(ln)
            shapes.append([list(s) for s in p] + outs)
        fit = F.fit_launches(shapes, launches, len(descs), who)
        k = compile_fitted(fit, who)
        return aot_result(fit, k, [d.shape_expr for d in descs],
                          [o.shape_expr for o in outputs])

    aot.__signature__ = signature  # type: ignore[attr-defined]
    aot.__qualname__ = aot.__name__ = "%s.aot_impl" % who
    return aot

"""The fitting behind from_torch_op's aot_impl for torch triton_op ops
(plugin/_launchfit.py): launches recorded at several shapes become one
launch description whose grid and integer arguments are expressions over
the layer's dims. Pure Python: the recordings are made here by simulating
what a triton_op body computes at each probe shape (no torch, no Triton),
and every fitted expression is checked at shapes the fit never saw."""

import random

import pytest

from plugrt.plugin import _aot
from plugrt.plugin import _launchfit as F
from plugrt.plugin._shape import ShapeExpr


def cdiv(a, b):
    return -((-a) // b)


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def record(body, ranks, fixed=None, count=None):
    """(shapes, launches) for body(input shapes) -> (output shapes, Launch)
    at the probe shapes from_torch_op uses."""
    fixed = fixed or [[None] * r for r in ranks]
    shapes, launches = [], []
    for p in F.probe_shapes(ranks, fixed, count):
        outs, ln = body(p)
        shapes.append([list(s) for s in p] + outs)
        launches.append(ln)
    return shapes, launches


def unseen(ranks, fixed=None, n=6, seed=99):
    """Input shapes unlike the probes' (other magnitudes, dims of 1 too)."""
    r = random.Random(seed)
    fixed = fixed or [[None] * k for k in ranks]
    return [[[f if f is not None else r.choice([1, 2, 5, 33, 129, 1000, 4097])
              for f in fx] for fx in fixed] for _ in range(n)]


# ---------------------------------------------------------------------------
# Simulated triton_op bodies (what the op computes before its launch)
# ---------------------------------------------------------------------------

KERNEL = object()  # the JIT function, as the recorder would keep it


def scaled_add(shapes, alpha=0.5, block=1024):
    """add_kernel(x, y, out, n, alpha, BLOCK): grid (cdiv(n, BLOCK),)."""
    x, _ = shapes
    n = numel(x)
    ln = F.Launch(KERNEL, (cdiv(n, block),),
                  [("x_ptr", F.TensorRef("input", 0)), ("y_ptr", F.TensorRef("input", 1)),
                   ("out_ptr", F.TensorRef("output", 0)), ("n", n), ("alpha", alpha)],
                  {"BLOCK": block}, {"num_warps": 4})
    return [list(x)], ln


def circ_pad_rows(shapes, pad=(1, 2), block=64):
    """A 2-D launch: one program per output row and per BLOCK of columns;
    arguments in the kernel's own order (out first)."""
    (x,) = shapes
    rows = numel(x[:-1])
    w_out = x[-1] + pad[0] + pad[1]
    ln = F.Launch(KERNEL, (rows, cdiv(w_out, block)),
                  [("out", F.TensorRef("output", 0)), ("inp", F.TensorRef("input", 0)),
                   ("w_in", x[-1]), ("w_out", w_out), ("before", pad[0]),
                   ("row_stride", x[-1]), ("flag", True)],
                  {"BLOCK": block})
    return [list(x[:-1]) + [w_out]], ln


def test_scaled_add_grid_and_arguments_hold_at_unseen_shapes():
    shapes, launches = record(scaled_add, [2, 2])
    fit = F.fit_launches(shapes, launches, 2, "t::scaled_add")
    assert [k for _, k, _ in fit.params] == ["tensor", "tensor", "tensor", "int32", "float"]
    assert fit.params[4][2] == 0.5
    assert fit.constexprs == {"BLOCK": 1024} and fit.options == {"num_warps": 4}
    assert fit.grid[1].is_constant and fit.grid[1].eval([]) == 1
    for s in unseen([2, 2]):
        all_shapes = s + [s[0]]
        want, ln = scaled_add(s)
        assert fit.grid[0].eval(all_shapes) == ln.grid[0], s
        assert fit.params[3][2].eval(all_shapes) == numel(s[0])


def test_two_dim_grid_kernel_order_and_constant_dims():
    fixed = [[None, 3, None]]  # a dim the layer fixes stays fixed in the probes
    shapes, launches = record(circ_pad_rows, [3], fixed)
    assert all(s[0][1] == 3 for s in shapes)
    fit = F.fit_launches(shapes, launches, 1, "t::pad")
    kinds = [(n, k) for n, k, _ in fit.params]
    assert kinds == [("out", "tensor"), ("inp", "tensor"), ("w_in", "int32"),
                     ("w_out", "int32"), ("before", "int32"), ("row_stride", "int32"),
                     ("flag", "constexpr")]
    for s in unseen([3], fixed):
        outs, ln = circ_pad_rows(s)
        all_shapes = s + outs
        assert [g.eval(all_shapes) for g in fit.grid] == list(ln.grid) + [1]
        assert [v.eval(all_shapes) for _, k, v in fit.params if k == "int32"] == \
            [v for _, v in ln.params[2:6]]


def test_fitted_forms_render_as_shape_expressions():
    shapes, launches = record(circ_pad_rows, [3])
    fit = F.fit_launches(shapes, launches, 1, "t::pad")
    leaves = [[ShapeExpr._make("leaf", ("in", k)) for k in range(3)],
              [ShapeExpr._make("leaf", ("out", k)) for k in range(3)]]
    g0 = fit.grid[0].render(leaves)
    assert isinstance(g0, ShapeExpr) and not g0.is_constant
    assert fit.grid[2].render(leaves) == 1 or fit.grid[2].render(leaves).is_constant


def test_forms_of_the_family():
    shapes = [[[a, b]] for a, b in ((3, 5), (7, 5), (3, 11), (9, 4), (13, 17), (20, 2))]
    # affine in the dims: a + 2 * b - 1
    f = F.fit_value([a + 2 * b - 1 for [[a, b]] in shapes], shapes, 1, [], "v")
    assert all(f.eval(s) == s[0][0] + 2 * s[0][1] - 1 for s in shapes)
    # a product with a factor and an offset: 4 * a * b + 3
    f = F.fit_value([4 * a * b + 3 for [[a, b]] in shapes], shapes, 1, [], "v")
    assert f.terms == ((4, ((0, 0), (0, 1))),) and f.c == 3
    # floor division by a constexpr
    f = F.fit_value([(a * b) // 6 for [[a, b]] in shapes], shapes, 1, [6], "v")
    assert (f.mode, f.div) == ("floor", 6)


def test_non_affine_values_are_refused_naming_them():
    shapes = [[[a, b]] for a, b in ((3, 5), (7, 5), (3, 11), (9, 4), (13, 17), (20, 2))]
    with pytest.raises(ValueError, match=r"v takes the values .* not a constant"):
        F.fit_value([a * a for [[a, b]] in shapes], shapes, 1, [], "v")
    with pytest.raises(ValueError, match="v takes the values"):
        F.fit_value([max(a, b) for [[a, b]] in shapes], shapes, 1, [], "v")


def test_launches_that_disagree_are_refused():
    def shape_block(shapes):
        x, y = shapes
        b = 1 << max(4, (numel(x) - 1).bit_length())  # next power of two: follows the shape
        return scaled_add(shapes, block=b)
    shapes, launches = record(shape_block, [2, 2])
    with pytest.raises(ValueError, match="constexpr BLOCK .* must not follow the shapes"):
        F.fit_launches(shapes, launches, 2, "t::op")

    def float_follows(shapes):
        return scaled_add(shapes, alpha=1.0 / shapes[0][0])
    shapes, launches = record(float_follows, [2, 2])
    with pytest.raises(ValueError, match="argument alpha is a float that changes"):
        F.fit_launches(shapes, launches, 2, "t::op")

    def other_kernel(shapes):
        outs, ln = scaled_add(shapes)
        if shapes[0][0] > 100:
            ln.kernel = object()
        return outs, ln
    shapes, launches = record(other_kernel, [2, 2])
    with pytest.raises(ValueError, match="launches a different kernel"):
        F.fit_launches(shapes, launches, 2, "t::op")


def test_probe_shapes_keep_fixed_dims_and_move_the_others():
    probes = F.probe_shapes([1, 3], [[None], [2, None, None]])
    assert len(probes) == 3 + 5 + 4 + 2 * 3
    assert all(p[1][0] == 2 for p in probes)
    # a rank-1 input's size spans far past a block of a few thousand
    sizes = [p[0][0] for p in probes]
    assert min(sizes) < 2048 and max(sizes) > 65536
    assert len({tuple(p[1][1:]) for p in probes[:8]}) == 8
    # the boundary probes: powers of two and one past them
    assert [p[0][0] for p in probes[8:12]] == [2**20, 2**20 + 1, 2**21, 2**21 - 1]
    assert [p[1][2] for p in probes[-2:]] == [2**12, 2**12 + 1]
    assert probes == F.probe_shapes([1, 3], [[None], [2, None, None]])  # deterministic


def test_a_grid_near_another_is_told_apart():
    """cdiv(w + 3, 1024) and cdiv(w, 1024) agree at most shapes: the
    boundary probes tell them apart, here for a dim and a product."""
    for ranks, val in (([1], lambda s: s[0][0]), ([3], lambda s: numel(s[0]))):
        for c in (3, -1):
            def body(shapes):
                x = shapes[0]
                return [list(x)], F.Launch(KERNEL, (cdiv(val(shapes) + c, 1024),),
                                           [("x", F.TensorRef("input", 0))], {"BLOCK": 1024})
            shapes, launches = record(body, ranks)
            try:
                fit = F.fit_launches(shapes, launches, 1, "t")
            except ValueError as exc:
                # Refused as ambiguous, never guessed: c is not 0.
                assert "more than one offset c" in str(exc)
                continue
            assert (fit.grid[0].c, fit.grid[0].div) == (c, 1024)
            for s in unseen(ranks):
                assert fit.grid[0].eval(s + s) == cdiv(val(s) + c, 1024), (ranks, c, s)


# ---------------------------------------------------------------------------
# KernelLaunchParams.arg_order: the kernel's own parameter order
# ---------------------------------------------------------------------------

PTX = """
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u32 n, .param .u64 b,
                  .param .u64 gs, .param .u64 ps)
{ ret; }
"""


def test_arg_order_lays_out_parameters_in_the_kernels_order():
    lp = _aot.KernelLaunchParams()
    lp.arg_order = [("output", 0), ("input", 0), ("extra", 0), ("input", 1)]
    kd = _aot.describe(("k", PTX, lp, [7]), 2, 1, "t")
    C = _aot.C
    assert [a[0] for a in kd.args] == [C.PRT_KARG_OUTPUT, C.PRT_KARG_INPUT,
                                       C.PRT_KARG_INT32, C.PRT_KARG_INPUT,
                                       C.PRT_KARG_NULL, C.PRT_KARG_NULL]
    assert [a[1] for a in kd.args[:4]] == [0, 0, 0, 1]


@pytest.mark.parametrize("order,match", [
    ([("output", 0), ("input", 0), ("input", 1)], "does not place extra argument"),
    ([("output", 1), ("input", 0), ("extra", 0), ("input", 1)], "names output 1 of 1"),
    ([("output", 0), ("extra", 0), ("extra", 0), ("input", 1)], "places extra argument 0 twice"),
    ([("weights", 0)], "has kind 'weights'"),
])
def test_arg_order_mistakes_are_refused(order, match):
    lp = _aot.KernelLaunchParams()
    lp.arg_order = order
    with pytest.raises(ValueError, match=match):
        _aot.describe(("k", PTX, lp, [7]), 2, 1, "t")


# ---------------------------------------------------------------------------
# With Triton (no torch, no GPU needed): the fitted launch compiled, and the
# parameters laid out against the PTX Triton writes
# ---------------------------------------------------------------------------

def test_fitted_launch_compiles_and_its_parameters_match_the_ptx(monkeypatch):
    triton = pytest.importorskip("triton", reason="Triton is not installed")
    tl = pytest.importorskip("triton.language")
    from triton.backends.compiler import GPUTarget  # noqa: PLC0415

    from plugrt.plugin import _tritonop  # noqa: PLC0415

    @triton.jit
    def pad_kernel(out_ptr, x_ptr, w_in, w_out, before, row_stride, flag,
                   BLOCK: tl.constexpr):
        row = tl.program_id(0)
        j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = j < w_out
        src = ((j - before) % w_in + w_in) % w_in
        v = tl.load(x_ptr + row * row_stride + src, mask=m)
        if flag:
            v = v * 2
        tl.store(out_ptr + row * w_out + j, v, mask=m)

    def body(shapes):
        outs, ln = circ_pad_rows(shapes)
        ln.kernel = pad_kernel
        ln.params = [(kn, v) for kn, (_, v) in zip(pad_kernel.arg_names, ln.params)]
        assert len(ln.params) == len(pad_kernel.arg_names) - 1  # all but BLOCK
        ln.options = {"num_warps": 2}
        return outs, ln

    # A target of its own: no device is asked (sm_80: any Triton 3.x has it).
    monkeypatch.setattr(_tritonop, "_target", lambda: (GPUTarget("cuda", 80, 32), (8, 0)))
    shapes, launches = record(body, [3])
    fit = F.fit_launches(shapes, launches, 1, "t::pad")
    k = _tritonop.compile_fitted(fit, "t::pad")
    assert _tritonop.compile_fitted(fit, "t::pad") is k  # compiled once
    dims = [[7, 3, 100], [7, 3, 103]]
    name, code, lp, extra = _tritonop.aot_result(fit, k, dims[:1], dims[1:])
    assert name == k.metadata.name and lp.block_x == 64
    assert (lp.grid_x, lp.grid_y, lp.grid_z) == (21, 2, 1)
    kd = _aot.describe((name, code, lp, extra), 1, 1, "t::pad")
    C = _aot.C
    declared = _aot.ptx_param_count(k.asm["ptx"].encode(), name)
    assert len(kd.args) == declared
    # out, x, w_in, w_out, before, row_stride (flag specialized), then
    # Triton's scratch pointers
    assert [a[0] for a in kd.args[:6]] == [C.PRT_KARG_OUTPUT, C.PRT_KARG_INPUT] + \
        [C.PRT_KARG_INT32] * 4
    assert all(a[0] in (C.PRT_KARG_NULL, C.PRT_KARG_WORKSPACE) for a in kd.args[6:])
    assert [e.expr.constant_value for e in extra] == [100, 103, 1, 100]

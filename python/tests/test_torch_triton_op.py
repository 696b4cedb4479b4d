"""from_torch_op on torch.library.triton_op ops: the op's one Triton kernel
captured from its body, compiled and embedded in the engine (aot_impl), the
saved engine run by `plugrt run --allow-embedded-kernels` in a process with
a bare environment (no Python, no plugin library) and compared with the
torch op's own output at several shapes.

Needs torch >= 2.6 (triton_op), Triton, a CUDA device and the plugrt
program (PLUGRT_CLI); skips naming what is missing (python/tests/gpu_run.sh
runs it on the GPU machine). The fitting itself is tested without any of
these in test_launch_fit.py."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import plugrt as trt
import plugrt.plugin as trtp
from conftest import EXAMPLES


def _why_not():
    """What this machine lacks (the example's own check), then the program."""
    sys.path.insert(0, EXAMPLES)
    try:
        from torch_triton_op_aot import why_not  # noqa: PLC0415
    finally:
        sys.path.remove(EXAMPLES)
    return why_not() or (None if _cli() else "no plugrt program (set PLUGRT_CLI)")


def _cli():
    exe = os.environ.get("PLUGRT_CLI")
    if exe and os.path.exists(exe):
        return exe
    return shutil.which("plugrt")


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def _define(uid):
    """Two triton_ops in a fresh namespace: scaled_add (a 1-D grid over the
    element count, the output pointer before the scalars, a float argument)
    and pad_rows (a 2-D grid over rows and blocks of the padded row, the
    output pointer first, int arguments from dims and attributes)."""
    import torch  # noqa: PLC0415
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415
    from torch.library import triton_op, wrap_triton  # noqa: PLC0415

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        x = tl.load(x_ptr + i, mask=m)
        y = tl.load(y_ptr + i, mask=m)
        tl.store(out_ptr + i, x + alpha * y, mask=m)

    @triton.jit
    def pad_kernel(out_ptr, x_ptr, w_in, w_out, before, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = j < w_out
        src = ((j - before) % w_in + w_in) % w_in
        v = tl.load(x_ptr + row * w_in + src, mask=m)
        tl.store(out_ptr + row * w_out + j, v, mask=m)

    ns = uid("tritonop")

    @triton_op(ns + "::scaled_add", mutates_args=())
    def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        wrap_triton(add_kernel)[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](
            x, y, out, n, alpha, BLOCK=256)
        return out

    @triton_op(ns + "::pad_rows", mutates_args=())
    def pad_rows(x: torch.Tensor, before: int, after: int) -> torch.Tensor:
        w = x.shape[-1]
        out = x.new_empty(list(x.shape[:-1]) + [w + before + after])
        rows = x.numel() // w
        wrap_triton(pad_kernel)[(rows, triton.cdiv(w + before + after, 64))](
            out, x, w, w + before + after, before, BLOCK=64)
        return out

    return ns


def _build(net_fn, profiles, path):
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network()
    net_fn(net)
    cfg = builder.create_builder_config()
    cfg.device = "cuda"
    prof = builder.create_optimization_profile()
    for name, (lo, opt, hi) in profiles.items():
        prof.set_shape(name, lo, opt, hi)
    cfg.add_optimization_profile(prof)
    data = builder.build_serialized_network(net, cfg)
    path.write_bytes(bytes(data))
    return path


def _plugrt_run(engine, inputs, tmp_path):
    """Runs the engine in `plugrt run` with a bare environment: no
    PYTHONPATH, no PLUGRT_PLUGINS, nothing but PATH."""
    args = [_cli(), "run", str(engine), "--allow-embedded-kernels",
            "--output-dir", str(tmp_path / "out")]
    for name, v in inputs.items():
        f = tmp_path / ("%s.npy" % name)
        np.save(f, v)
        args += ["--input", "%s=%s" % (name, f)]
    r = subprocess.run(args, capture_output=True, text=True, env={"PATH": os.defpath})
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_scaled_add_triton_op_runs_in_plugrt_run_without_python(uid, tmp_path, rng):
    import torch  # noqa: PLC0415
    ns = _define(uid)
    pid = trtp.from_torch_op(ns + "::scaled_add")
    assert trtp.get_plugin(pid).aot_fn is not None

    def net_fn(net):
        x = net.add_input("x", trt.float32, (-1, -1))
        y = net.add_input("y", trt.float32, (-1, -1))
        layer = net.add_plugin(getattr(getattr(trtp.op, ns), "scaled_add")(x, y, alpha=0.75),
                               aot=True)
        layer.get_output(0).name = "z"
        net.mark_output(layer.get_output(0))
    shapes = ((4, 7), (33, 129), (3, 5000))
    engine = _build(net_fn, {"x": ((1, 1), (4, 7), (64, 5000)),
                             "y": ((1, 1), (4, 7), (64, 5000))}, tmp_path / "add.engine")
    op = getattr(torch.ops, ns).scaled_add
    for shape in shapes:
        xv = rng.standard_normal(shape).astype(np.float32)
        yv = rng.standard_normal(shape).astype(np.float32)
        want = op(torch.from_numpy(xv).cuda(), torch.from_numpy(yv).cuda(), 0.75).cpu().numpy()
        _plugrt_run(engine, {"x": xv, "y": yv}, tmp_path)
        got = np.load(str(tmp_path / "out" / "output_z.npy"))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # The engine holds the kernel: refused without the flag.
    r = subprocess.run([_cli(), "run", str(engine), "--input",
                        "x=%s" % (tmp_path / "x.npy"), "--input", "y=%s" % (tmp_path / "y.npy")],
                       capture_output=True, text=True, env={"PATH": os.defpath})
    assert r.returncode != 0 and "embedded" in (r.stdout + r.stderr)


def test_two_dim_grid_triton_op_runs_in_plugrt_run_without_python(uid, tmp_path, rng):
    import torch  # noqa: PLC0415
    ns = _define(uid)
    trtp.from_torch_op(ns + "::pad_rows")

    def net_fn(net):
        x = net.add_input("x", trt.float32, (-1, 3, -1))
        layer = net.add_plugin(getattr(getattr(trtp.op, ns), "pad_rows")(x, before=2, after=5),
                               aot=True)
        layer.get_output(0).name = "y"
        net.mark_output(layer.get_output(0))
    engine = _build(net_fn, {"x": ((1, 3, 1), (2, 3, 10), (8, 3, 300))},
                    tmp_path / "pad.engine")
    op = getattr(torch.ops, ns).pad_rows
    for shape in ((2, 3, 10), (5, 3, 131), (8, 3, 300)):
        xv = rng.standard_normal(shape).astype(np.float32)
        want = op(torch.from_numpy(xv).cuda(), 2, 5).cpu().numpy()
        np.testing.assert_array_equal(want, np.pad(xv, ((0, 0), (0, 0), (2, 5)), mode="wrap"))
        _plugrt_run(engine, {"x": xv}, tmp_path)
        np.testing.assert_array_equal(np.load(str(tmp_path / "out" / "output_y.npy")), want)


def test_a_triton_op_with_two_kernels_is_refused_naming_it(uid):
    import torch  # noqa: PLC0415
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415
    from torch.library import triton_op, wrap_triton  # noqa: PLC0415

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)

    name = uid("twok") + "::twice"

    @triton_op(name, mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        wrap_triton(copy_kernel)[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        wrap_triton(copy_kernel)[(triton.cdiv(n, 128),)](out, out, n, BLOCK=128)
        return out

    trtp.from_torch_op(name)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1,))
    ns, short = name.split("::")
    layer = net.add_plugin(getattr(getattr(trtp.op, ns), short)(x), aot=True)
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    cfg.device = "cuda"
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1,), (64,), (4096,))
    cfg.add_optimization_profile(prof)
    with pytest.raises(Exception, match="launches 2 kernels"):
        builder.build_serialized_network(net, cfg)

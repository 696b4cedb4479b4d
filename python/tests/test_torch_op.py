"""plugrt.plugin.from_torch_op: a torch custom op as a decorator plugin,
built and run on the CPU against the op itself (and on CUDA where there is
a GPU). Skips without torch (python/tests/gpu_run.sh runs it where torch
is installed)."""

import numpy as np
import pytest

import plugrt as trt
import plugrt.plugin as trtp
from plugrt.plugin._torch import _fit

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs torch 2.4 or later", allow_module_level=True)


def test_affine_fit_and_its_refusal():
    # y = 2 * a + b - 1 over vars (a, b)
    f = lambda v: 2 * v[0] + v[1] - 1  # noqa: E731
    pts = [[3, 4], [7, 4], [3, 8], [5, 9]]
    assert _fit([(p, f(p)) for p in pts], 2, "y") == (-1, [2, 1])
    g = lambda v: v[0] * v[1]  # noqa: E731
    with pytest.raises(ValueError, match="not an affine function"):
        _fit([(p, g(p)) for p in pts], 2, "y")


def _define(uid):
    ns = uid("torchop")
    name = "%s::cat_pad" % ns

    @torch.library.custom_op(name, mutates_args=())
    def cat_pad(x: torch.Tensor, y: torch.Tensor, pad: int) -> torch.Tensor:
        return torch.nn.functional.pad(torch.cat([x, y], dim=1), (pad, pad))

    @cat_pad.register_fake
    def _(x, y, pad):
        return x.new_empty((x.shape[0], x.shape[1] + y.shape[1], x.shape[2] + 2 * pad))
    return ns, name


def _run(ns, device, rng):
    trtp.from_torch_op("%s::cat_pad" % ns)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, 2, -1))
    y = net.add_input("y", trt.float32, (-1, 3, -1))
    layer = net.add_plugin(getattr(getattr(trtp.op, ns), "cat_pad")(x, y, pad=2))
    layer.get_output(0).name = "z"
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    cfg.device = device
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 2, 1), (2, 2, 5), (4, 2, 9))
    prof.set_shape("y", (1, 3, 1), (2, 3, 5), (4, 3, 9))
    cfg.add_optimization_profile(prof)
    eng = builder.build_engine_with_config(net, cfg)
    ctx = eng.create_execution_context()
    for b, w in ((2, 5), (4, 9), (1, 1)):
        xv = rng.standard_normal((b, 2, w)).astype(np.float32)
        yv = rng.standard_normal((b, 3, w)).astype(np.float32)
        want = torch.ops.__getattr__(ns).cat_pad(torch.from_numpy(xv), torch.from_numpy(yv),
                                                 2).numpy()
        got = np.asarray(ctx.run({"x": xv, "y": yv})["z"])
        np.testing.assert_array_equal(got, want)


def test_custom_op_runs_as_a_plugin_on_the_cpu(uid, rng):
    ns, _ = _define(uid)
    _run(ns, "cpu", rng)


@pytest.mark.cuda
def test_custom_op_runs_as_a_plugin_on_cuda(uid, rng):
    from conftest import CUDA_REASON
    if CUDA_REASON or not torch.cuda.is_available():
        pytest.skip(CUDA_REASON or "torch sees no GPU")
    ns, _ = _define(uid)
    _run(ns, "cuda", rng)

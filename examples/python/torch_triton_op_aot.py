#!/usr/bin/env python3
"""A torch.library.triton_op as an ahead-of-time plugin, with no kernel code
written for plugrt: the seed's circular padding defined the way a PyTorch
user would (a Triton kernel launched through wrap_triton inside a
triton_op), turned into a plugin by plugrt.plugin.from_torch_op, which
captures the op's one kernel launch, compiles it with triton.compile and
embeds it in the engine (aot_impl). The engine is saved, then run by
`plugrt run --allow-embedded-kernels`, a process with no Python and no
plugin library, and its outputs are compared with the torch op's own at
three shapes.

    python3 torch_triton_op_aot.py [--plugrt PATH] [--keep DIR]

Needs a GPU, torch >= 2.6 (torch.library.triton_op), Triton and the plugrt
program (--plugrt, else PLUGRT_CLI, else `plugrt` on PATH); without them it
says which is missing and exits 0 ("skipped"). Prints "Inference result
correct!" when every shape matches.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import plugrt as trt
import plugrt.plugin as trtp

BLOCK = 256


def define_op():
    """sample::circ_pad2d(x, top, bottom, left, right): circular padding of
    the last two dims of an NCHW tensor, one program per BLOCK outputs. The
    kernel's parameters are in the order its author chose (from_torch_op
    passes them so); its grid follows the output's element count."""
    import torch  # noqa: PLC0415
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415
    from torch.library import triton_op, wrap_triton  # noqa: PLC0415

    @triton.jit
    def circ_pad2d_kernel(x_ptr, y_ptr, h, w, h_out, w_out, top, left, n_out,
                          BLOCK_SIZE: tl.constexpr):
        i = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = i < n_out
        col = i % w_out
        row = (i // w_out) % h_out
        plane = i // (w_out * h_out)
        src_row = (row - top + h) % h
        src_col = (col - left + w) % w
        v = tl.load(x_ptr + plane * h * w + src_row * w + src_col, mask=mask)
        tl.store(y_ptr + i, v, mask=mask)

    @triton_op("sample::circ_pad2d", mutates_args=())
    def circ_pad2d(x: torch.Tensor, top: int, bottom: int, left: int,
                   right: int) -> torch.Tensor:
        n, c, h, w = x.shape
        y = x.new_empty((n, c, h + top + bottom, w + left + right))
        n_out = y.numel()
        wrap_triton(circ_pad2d_kernel)[lambda meta: (triton.cdiv(n_out, meta["BLOCK_SIZE"]),)](
            x, y, h, w, h + top + bottom, w + left + right, top, left, n_out,
            BLOCK_SIZE=BLOCK)
        return y

    return torch


def why_not():
    if trt.device_unavailable("cuda"):
        return "no usable CUDA device: %s" % trt.device_unavailable("cuda")
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return "torch is not installed"
    if not hasattr(torch.library, "triton_op"):
        return "torch %s has no torch.library.triton_op (torch >= 2.6)" % torch.__version__
    if not torch.cuda.is_available():
        return "torch %s sees no CUDA device" % torch.__version__
    try:
        import triton  # noqa: F401, PLC0415
    except ImportError:
        return "Triton is not installed"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugrt", default=os.environ.get("PLUGRT_CLI") or shutil.which("plugrt"))
    ap.add_argument("--keep", help="write the engine and data here")
    args = ap.parse_args()
    why = why_not()
    if why:
        print("torch_triton_op_aot: skipped: %s" % why)
        return 0
    if not args.plugrt:
        print("torch_triton_op_aot: skipped: no plugrt program (--plugrt or PLUGRT_CLI)")
        return 0
    torch = define_op()
    # The plugin: inputs, attributes and output shapes from the op's schema
    # and fake runs; impl calls the op; aot_impl embeds its Triton kernel.
    pid = trtp.from_torch_op("sample::circ_pad2d")
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, 3, -1, -1))
    layer = net.add_plugin(trtp.op.sample.circ_pad2d(x, top=1, bottom=2, left=3, right=0))
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    cfg.device = "cuda"
    # The plugin has both: prefer the embedded kernel (no Python at run time).
    cfg.set_flag(trt.BuilderFlag.PREFER_AOT_PYTHON_PLUGINS)
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 3, 1, 1), (2, 3, 16, 16), (8, 3, 128, 128))
    cfg.add_optimization_profile(prof)
    data = builder.build_serialized_network(net, cfg)
    work = args.keep or tempfile.mkdtemp(prefix="torch_triton_op_aot")
    os.makedirs(work, exist_ok=True)
    plan = os.path.join(work, "circ_pad2d.plan")
    with open(plan, "wb") as f:
        f.write(bytes(data))
    print("engine of %s with its Triton kernel embedded: %s (%d bytes)" % (pid, plan, len(data)))
    rng = np.random.default_rng(0)
    ok = True
    for shape in ((2, 3, 16, 16), (1, 3, 5, 7), (8, 3, 128, 97)):
        xv = rng.standard_normal(shape).astype(np.float32)
        want = torch.ops.sample.circ_pad2d(torch.from_numpy(xv).cuda(), 1, 2, 3, 0).cpu().numpy()
        np.save(os.path.join(work, "x.npy"), xv)
        out = os.path.join(work, "out")
        # A bare environment: the engine needs neither Python nor a plugin library.
        r = subprocess.run([args.plugrt, "run", plan, "--allow-embedded-kernels",
                            "--input", "x=" + os.path.join(work, "x.npy"),
                            "--output-dir", out], capture_output=True, text=True,
                           env={"PATH": os.defpath})
        if r.returncode:
            print("plugrt run failed (%d): %s" % (r.returncode, r.stderr.strip()))
            ok = False
            continue
        got = np.load(os.path.join(out, "output_y.npy"))
        same = got.shape == want.shape and np.array_equal(got, want)
        print("shape %s -> %s by plugrt run (no Python) against the torch op: %s" % (
            shape, got.shape, "matches" if same else "DIFFERS"))
        ok &= same
    if ok:
        print("Inference result correct!")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())

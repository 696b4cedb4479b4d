#!/usr/bin/env python3
"""The seed's circular padding as an ahead-of-time plugin: aot_impl compiles
a Triton kernel with triton.compile and returns its PTX (and cubin) with
launch sizes as expressions over the layer's dims; the builder embeds the
kernel in the engine (a kernel layer), which is saved, then run by
`plugrt run --allow-embedded-kernels`: a process with no Python and no
plugin library. Its outputs are compared with np.pad(mode="wrap").

    python3 circ_pad_aot.py [--plugrt PATH] [--keep DIR]

Needs a GPU, Triton and the plugrt program (--plugrt, else PLUGRT_CLI, else
`plugrt` on PATH); without them it says which is missing and exits 0
("skipped"). Prints "Inference result correct!" when every shape matches.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Tuple

import numpy as np
import numpy.typing as npt

import plugrt as trt
import plugrt.plugin as trtp

BLOCK = 256


@trtp.register("sample::circ_pad_aot")
def circ_pad_desc(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
    ndim = inp0.ndim
    out = inp0.like()
    for i in range(np.size(pads) // 2):
        out.shape_expr[ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
    return out


def triton_kernel():
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def circ_pad_kernel(X, all_pads_0, all_pads_2, all_pads_4, all_pads_6,
                        orig_dims_0, orig_dims_1, orig_dims_2, orig_dims_3,
                        Y_shape_1, Y_shape_2, Y_shape_3, X_len, Y_len, Y,
                        BLOCK_SIZE: tl.constexpr):
        # Scalars between the input and the output pointer: the order
        # TensorRT's (and plugrt's) AOT plugins pass parameters in.
        pid = tl.program_id(0)
        i = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask_y = i < Y_len
        i3 = i % Y_shape_3
        i2 = (i // Y_shape_3) % Y_shape_2
        i1 = (i // Y_shape_3 // Y_shape_2) % Y_shape_1
        i0 = i // Y_shape_3 // Y_shape_2 // Y_shape_1
        j0 = (i0 - all_pads_0 + orig_dims_0) % orig_dims_0
        j1 = (i1 - all_pads_2 + orig_dims_1) % orig_dims_1
        j2 = (i2 - all_pads_4 + orig_dims_2) % orig_dims_2
        j3 = (i3 - all_pads_6 + orig_dims_3) % orig_dims_3
        load_idx = (orig_dims_3 * orig_dims_2 * orig_dims_1 * j0
                    + orig_dims_3 * orig_dims_2 * j1 + orig_dims_3 * j2 + j3)
        mask_x = load_idx < X_len
        x = tl.load(X + load_idx, mask=mask_x)
        tl.store(Y + i, x, mask=mask_y)
    return triton, circ_pad_kernel


def compile_triton(type_str):
    """triton.compile across Triton 3.x: the signature is keyed by name
    (3.2 on; 3.3 on also lists the constexpr) or by position (3.0, 3.1)."""
    triton, fn = triton_kernel()
    from triton.compiler import ASTSource  # noqa: PLC0415
    names = fn.arg_names
    types = ["*" + type_str] + ["i32"] * 13 + ["*" + type_str]
    target = None
    try:
        from triton.backends.compiler import GPUTarget  # noqa: PLC0415
        import torch  # noqa: PLC0415
        cc = torch.cuda.get_device_capability()
        target = GPUTarget("cuda", cc[0] * 10 + cc[1], 32)
    except Exception:  # noqa: BLE001 - the active device's target
        target = None
    attempts = [
        lambda: ASTSource(fn, dict(zip(names, types + ["constexpr"])),
                          constexprs={"BLOCK_SIZE": BLOCK}),
        lambda: ASTSource(fn, dict(zip(names[:15], types)), constants={"BLOCK_SIZE": BLOCK}),
        lambda: ASTSource(fn, dict(enumerate(types)), constants={15: BLOCK}),
    ]
    last = None
    for make in attempts:
        try:
            src = make()
            return triton.compile(src, target=target) if target else triton.compile(src)
        except Exception as exc:  # noqa: BLE001 - the next signature format
            last = exc
    raise RuntimeError("triton %s: cannot compile the kernel: %s" % (triton.__version__, last))


@trtp.aot_impl("sample::circ_pad_aot")
def circ_pad_aot(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32],
                 outputs: Tuple[trtp.TensorDesc], tactic: int):
    n = inp0.ndim
    all_pads = np.zeros((n * 2,), dtype=np.int32)
    inp_dims = inp0.shape_expr
    out_dims = outputs[0].shape_expr
    for i in range(np.size(pads) // 2):
        all_pads[n * 2 - 2 * i - 2] = pads[i * 2]
        all_pads[n * 2 - 2 * i - 1] = pads[i * 2 + 1]
    extra_args = trtp.SymIntExprs.from_tuple([trtp.SymInt32(e) for e in [
        int(all_pads[0]), int(all_pads[2]), int(all_pads[4]), int(all_pads[6]),
        inp_dims[0], inp_dims[1], inp_dims[2], inp_dims[3],
        out_dims[1], out_dims[2], out_dims[3], inp_dims.numel(), out_dims.numel()]])
    type_str = "fp32" if inp0.dtype == trt.float32 else "fp16"
    k = compile_triton(type_str)
    launch = trtp.KernelLaunchParams()
    launch.grid_x = trtp.cdiv(out_dims.numel(), BLOCK)
    launch.block_x = k.metadata.num_warps * 32
    launch.shared_mem = k.metadata.shared
    # Triton >= 3.3: bytes of global scratch per program (0 for this one).
    launch.global_scratch = int(getattr(k.metadata, "global_scratch_size", 0) or 0)
    # The cubin for this GPU and the PTX for others (plugrt takes both).
    code = [k.asm["cubin"], k.asm["ptx"]] if "cubin" in k.asm else k.asm["ptx"]
    return k.metadata.name, code, launch, extra_args


def why_not():
    if trt.device_unavailable("cuda"):
        return "no usable CUDA device: %s" % trt.device_unavailable("cuda")
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
        print("circ_pad_aot: skipped: %s" % why)
        return 0
    if not args.plugrt:
        print("circ_pad_aot: skipped: no plugrt program (--plugrt or PLUGRT_CLI)")
        return 0
    pads = np.array([1, 1, 2, 2], np.int32)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, 2, -1, -1))
    layer = net.add_plugin(trtp.op.sample.circ_pad_aot(x, pads=pads))
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    cfg.device = "cuda"
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 2, 1, 1), (10, 2, 32, 32), (16, 2, 64, 64))
    cfg.add_optimization_profile(prof)
    data = builder.build_serialized_network(net, cfg)
    work = args.keep or tempfile.mkdtemp(prefix="circ_pad_aot")
    os.makedirs(work, exist_ok=True)
    plan = os.path.join(work, "circ_pad_aot.plan")
    with open(plan, "wb") as f:
        f.write(bytes(data))
    print("engine with its Triton kernel embedded: %s (%d bytes)" % (plan, len(data)))
    rng = np.random.default_rng(0)
    ok = True
    for shape in ((10, 2, 32, 32), (3, 2, 5, 7), (16, 2, 64, 64)):
        xv = rng.standard_normal(shape).astype(np.float32)
        want = np.pad(xv, ((0, 0), (0, 0), (2, 2), (1, 1)), mode="wrap")
        np.save(os.path.join(work, "x.npy"), xv)
        out = os.path.join(work, "out")
        r = subprocess.run([args.plugrt, "run", plan, "--allow-embedded-kernels",
                            "--input", "x=" + os.path.join(work, "x.npy"),
                            "--output-dir", out], capture_output=True, text=True)
        if r.returncode:
            print("plugrt run failed (%d): %s" % (r.returncode, r.stderr.strip()))
            ok = False
            continue
        got = np.load(os.path.join(out, "output_y.npy"))
        same = got.shape == want.shape and np.array_equal(got, want)
        print("shape %s -> %s by plugrt run (no Python): %s" % (
            shape, got.shape, "matches" if same else "DIFFERS"))
        ok &= same
    if ok:
        print("Inference result correct!")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())

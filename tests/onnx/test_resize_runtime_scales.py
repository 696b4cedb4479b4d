#!/usr/bin/env python3
"""Resize (opsets 10, 11, 13, 18, 19) and Upsample (opset 9) whose scales
are a float32 graph input, not a constant, through `plugrt run` against
ONNX Runtime: the engine is built with the scales' values from the data.
Nearest, linear and cubic; non-integer scales, antialias, axes, rank 3, a
uint8 X. Output dims are floor(D * scale) in exact arithmetic, where ORT's
float32 product rounds up (checked on plugrt alone). Refused with a clear
message (non-zero exit, no crash): a scale that is 0, negative, NaN or
inf; the wrong number of scales; float16 scales; scales and sizes both.

    test_resize_runtime_scales.py --plugrt PATH

Exits 77 (skipped) when onnx, numpy or onnxruntime is missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from ort_compare import np, onnx, helper, TensorProto, run_vs_ort

F, F16, I64, U8 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.UINT8
SC = "factors"  # the scales input; a name no message says by chance


def model(x_shape, sc_shape=(4,), opset=13, op="Resize", name="rz", xt=F, sct=F,
          sizes=None, **attrs):
    """One Resize (or Upsample) node on graph inputs x and SC: X, scales
    for Upsample and Resize 10; X, roi (an empty constant for opset 11,
    else omitted), scales and optionally constant sizes for later ones."""
    inits = []
    if op == "Upsample" or opset < 11:
        ins = ["x", SC]
    else:
        ins = ["x", "roi" if opset == 11 else "", SC]
        if opset == 11:
            inits.append(helper.make_tensor("roi", F, [0], []))
    if sizes is not None:
        ins.append("sizes")
        inits.append(helper.make_tensor("sizes", I64, [len(sizes)], sizes))
    inputs = [helper.make_tensor_value_info("x", xt, list(x_shape)),
              helper.make_tensor_value_info(SC, sct, list(sc_shape))]
    g = helper.make_graph([helper.make_node(op, ins, ["y"], name=name, **attrs)], "g",
                          inputs, [helper.make_tensor_value_info("y", xt, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9 if opset >= 11 else 5
    return m


def plugrt_run(plugrt, d, m, feeds):
    """`plugrt run` of model m (saved in the new folder d) on feeds, its
    outputs into d; the CompletedProcess."""
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    cmd = [plugrt, "run", path, "-o", d, "-n", "1", "--warmup", "0"]
    for k, v in feeds.items():
        np.save(os.path.join(d, k + ".npy"), v)
        cmd += ["-i", f"{k}={os.path.join(d, k + '.npy')}"]
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    args = ap.parse_args()
    r = np.random.default_rng(13)

    def rand(*shape):
        return r.uniform(-1, 1, shape).astype(np.float32)

    dyn = ["N", 3, "H", "W"]
    x57, x79, x75, x10 = rand(2, 3, 5, 7), rand(1, 3, 7, 9), rand(1, 3, 7, 5), rand(1, 3, 10, 10)
    x10_5 = x10[:, :, :, :5].copy()
    u8 = r.integers(0, 256, (1, 3, 5, 7)).astype(np.uint8)
    x3 = rand(2, 3, 7)
    lin, cub = dict(mode="linear"), dict(mode="cubic")
    # (name, model, x, scales, tolerance). D * scale is the same in float32
    # and float64 here (ORT's kernel multiplies in float32: see dims_floor).
    cases = [
        ("nearest_up_dynamic", model(dyn), x57, [1, 1, 2, 2], 0.0),
        ("nearest_up_static", model(x57.shape), x57, [1, 1, 2, 2], 0.0),
        ("nearest_frac_dims", model(dyn), x79, [1, 1, 1.5, 0.75], 0.0),
        ("linear_half_pixel", model(dyn, coordinate_transformation_mode="half_pixel", **lin),
         x79, [1, 1, 1.5, 0.75], 1e-5),
        # D * scale whole (17, 22): align_corners divides by W - 1, ONNX's
        # reference with W = D * scale, ORT's with the output's dim floor(W)
        ("cubic_align_corners", model(x10.shape, coordinate_transformation_mode="align_corners",
                                      **cub), x10, [1, 1, 1.7, 2.2], 1e-5),
        ("nearest_floor_asymmetric", model(dyn, nearest_mode="floor",
                                           coordinate_transformation_mode="asymmetric"),
         x75, [1, 1, 1.5, 2.5], 0.0),
        # ORT's linear and cubic resize H and W alone on rank 4: nearest does N, C
        ("nearest_batch_channel", model(dyn), x57, [2, 1.5, 1, 2], 0.0),
        ("opset11_linear", model(dyn, opset=11, **lin), x79, [1, 1, 1.5, 0.75], 1e-5),
        ("opset18_linear_antialias", model(dyn, opset=18, antialias=1, **lin),
         x10_5, [1, 1, 0.5, 0.6], 1e-5),
        ("opset18_cubic_antialias", model(dyn, opset=18, antialias=1, **cub),
         x10_5, [1, 1, 0.5, 0.6], 1e-5),
        ("opset18_axes", model(dyn, sc_shape=[2], opset=18, axes=[2, 3], **lin),
         x75, [1.5, 2.5], 1e-5),
        ("opset19_half_pixel_symmetric",
         model(dyn, opset=19, coordinate_transformation_mode="half_pixel_symmetric", **lin),
         x79, [1, 1, 1.7, 0.6], 1e-5),
        ("resize10_nearest", model(dyn, opset=10), x57, [1, 1, 2, 3], 0.0),
        ("upsample9_nearest", model(dyn, opset=9, op="Upsample"), x57, [1, 1, 1.5, 2], 0.0),
        ("rank3_linear", model([2, "C", "L"], sc_shape=[3], **lin), x3, [1, 1, 1.6], 1e-5),
        ("rank3_nearest", model([2, "C", "L"], sc_shape=[3]), x3, [1, 2, 1.6], 0.0),
        ("uint8_nearest", model(dyn, xt=U8), u8, [1, 1, 2, 1.5], 0.0),
    ]
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for name, m, x, sc, tol in cases:
            feeds = {"x": x, SC: np.array(sc, np.float32)}
            try:
                f = run_vs_ort(args.plugrt, work, name, m, feeds, tol=tol)
            except Exception as e:  # ORT refused the model, or shapes differ
                if name.startswith("uint8") and "ONNXRuntimeError" in str(e):
                    print(f"SKIP {name}: ORT: {str(e).splitlines()[0][:200]}")
                    continue
                print(f"FAIL {name}: {e}")
                f = 1
            print(f"{'FAIL' if f else 'PASS'} {name}")
            fails += f
        # floor(D * scale) in exact arithmetic: 5 * 1.4f and 10 * 1.3f are
        # 6.99999988 and 12.9999995 (ONNX's reference: 6, 12), rounded to 7
        # and 13 in float32 (ORT's kernel: 7, 13).
        x = rand(1, 3, 5, 10)
        d = os.path.join(work, "dims_floor")
        p = plugrt_run(args.plugrt, d, model(dyn, **lin),
                       {"x": x, SC: np.array([1, 1, 1.4, 1.3], np.float32)})
        shape = np.load(os.path.join(d, "output_y.npy")).shape if p.returncode == 0 else None
        ok = shape == (1, 3, 6, 12)
        print(f"{'PASS' if ok else 'FAIL'} dims_floor: {shape or p.stderr.strip()[-300:]}")
        fails += not ok
        # (name, model, scales' data, words stderr must hold as well as
        # "scale" and the node's or the scales input's name)
        x = x57[:1]
        errors = [
            ("zero", model(x.shape, name="rz_zero"), [1, 1, 0, 2], []),
            ("negative", model(x.shape, name="rz_neg"), [1, 1, -1.5, 2], []),
            ("nan", model(x.shape, name="rz_nan", **lin), [1, 1, np.nan, 2], []),
            ("inf", model(x.shape, name="rz_inf"), [1, 1, 2, np.inf], []),
            ("wrong_count", model(x.shape, sc_shape=["S"], name="rz_count"), [1, 2, 2], []),
            ("upsample_zero", model(x.shape, opset=9, op="Upsample", name="up_zero"),
             [1, 1, 0, 2], []),
            ("float16_scales", model(x.shape, name="rz_f16", sct=F16), [1, 1, 2, 2],
             ["float32"]),
            ("scales_and_sizes", model(x.shape, name="rz_both", sizes=[1, 3, 10, 14]),
             [1, 1, 2, 2], []),
        ]
        for name, m, sc, words in errors:
            sct = np.float16 if name == "float16_scales" else np.float32
            p = plugrt_run(args.plugrt, os.path.join(work, "err_" + name), m,
                           {"x": x, SC: np.array(sc, sct)})
            err = p.stderr.lower()
            node = m.graph.node[0].name
            why = []
            if p.returncode < 0 or p.returncode >= 128:
                why.append(f"died (status {p.returncode})")
            elif p.returncode == 0:
                why.append("succeeded")
            if "scale" not in err:
                why.append("no 'scale' in stderr")
            if node.lower() not in err and SC not in err:
                why.append(f"names neither {node} nor {SC}")
            if "must be a constant" in err:  # the refusal from before runtime scales
                why.append("refused as not a constant")
            why += [f"no '{w}' in stderr" for w in words if w.lower() not in err]
            lines = p.stderr.strip().splitlines() or ["(nothing on stderr)"]
            line = next((ln for ln in lines if "scale" in ln.lower()), lines[-1])
            print(f"{'FAIL' if why else 'PASS'} error_{name}: {'; '.join(why) or 'refused'}: "
                  f"{line[-240:]}")
            fails += bool(why)
    print(f"test_resize_runtime_scales: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

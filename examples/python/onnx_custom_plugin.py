#!/usr/bin/env python3
"""An ONNX model with a custom op served by a C plugin library (TensorRT's
onnx_custom_plugin sample, on plugrt): load libplugrt_plugins.so from the
package, parse qa_custom_hardmax.onnx (MatMul -> Transpose -> MatMul ->
CustomHardmax -> Einsum), build with a profile for q's batch (min 1, opt 8,
max 64), save the engine and load it back, run it and compare with the
reference outputs; then the plugin alone, as the seed's plugin test does:
every rank 1..7, every axis, random dims 1..3, values (rand - 0.5) * 200,
against a numpy hardmax.

    python3 onnx_custom_plugin.py [--models DIR] [--device cpu|cuda]

On CUDA the engines run the plugin library's CUDA kernels; inputs go in as
numpy arrays and come back as numpy (the short path copies them). Prints
"Inference result correct!" and exits 0 when everything matches.
"""

import argparse
import os
import sys
import tempfile

import numpy as np

import plugrt as trt

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "models"))


def hardmax(x, axis):
    """one_hot(first argmax) along axis."""
    idx = np.expand_dims(np.argmax(x, axis=axis), axis)
    y = np.zeros_like(x)
    np.put_along_axis(y, idx, 1, axis=axis)
    return y


def run_model(models, logger, registry, device):
    onnx_path = os.path.join(models, "qa_custom_hardmax.onnx")
    data_dir = os.path.join(models, "qa_custom_hardmax.data")
    builder = trt.Builder(logger, registry)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    parser = trt.OnnxParser(network, logger, registry)
    parser.parse_from_file(onnx_path)
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 28)
    config.device = device
    profile = builder.create_optimization_profile()
    profile.set_shape("q", (1, 32), (8, 32), (64, 32))
    config.add_optimization_profile(profile)
    engine_bytes = builder.build_serialized_network(network, config)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "qa_custom_hardmax.plan")
        trt.Runtime(logger, registry).deserialize_cuda_engine(engine_bytes).save(path)
        engine = trt.load(path, registry=registry)
    if engine.device != trt.Device[device.upper()]:
        print("the loaded engine runs on %s, not %s" % (engine.device.name, device))
        return False

    feeds = {n: np.load(os.path.join(data_dir, "input_%s.npy" % n)) for n in ("q", "k")}
    ctx = engine.create_execution_context()
    out = ctx.run(feeds)
    ok = True
    for name in ("start", "answer"):
        want = np.load(os.path.join(data_dir, "output_%s.npy" % name))
        good = out[name].shape == want.shape and np.allclose(out[name], want, rtol=1e-4,
                                                             atol=1e-4)
        print("model output %s %s: %s" % (name, want.shape, "ok" if good else "WRONG"))
        ok &= bool(good)
    # Another batch inside the profile: rows are independent, so the
    # reference rows come back the same, and every start row is one-hot.
    q = np.random.default_rng(1).standard_normal((37, 32)).astype(np.float32)
    q[:len(feeds["q"])] = feeds["q"]
    got = ctx.run({"q": q, "k": feeds["k"]})
    n = len(feeds["q"])
    good = (got["start"].shape == (37, 64) and got["answer"].shape == (37,)
            and np.array_equal(got["start"][:n], out["start"])
            and np.allclose(got["answer"][:n], out["answer"], rtol=1e-5)
            and np.array_equal(got["start"].sum(axis=1), np.ones(37, np.float32))
            and set(np.unique(got["start"])) <= {0.0, 1.0})
    print("batch 37: %s" % ("ok" if good else "WRONG"))
    return ok and good


def plugin_sweep(logger, registry, device, seed=0):
    """CustomHardmax alone: every rank 1..7, every axis (both signs)."""
    rng = np.random.default_rng(seed)
    creator = registry.get_creator("CustomHardmax", "1", "")
    builder = trt.Builder(logger, registry)
    cases = 0
    for rank in range(1, 8):
        for axis in range(-rank, rank):
            shape = tuple(int(v) for v in rng.integers(1, 4, size=rank))
            x = ((rng.random(shape) - 0.5) * 200).astype(np.float32)
            network = builder.create_network()
            t = network.add_input("x", trt.float32, shape)
            fc = trt.PluginFieldCollection([
                trt.PluginField("axis", np.array([axis], np.int32), trt.PluginFieldType.INT32)])
            layer = network.add_plugin_v3([t], [], creator.create_plugin("hardmax", fc))
            layer.get_output(0).name = "y"
            network.mark_output(layer.get_output(0))
            config = builder.create_builder_config()
            config.device = device
            engine = builder.build_engine_with_config(network, config)
            y = engine.create_execution_context().run({"x": x})["y"]
            if not np.array_equal(y, hardmax(x, axis)):
                print("hardmax rank %d axis %d shape %s: WRONG" % (rank, axis, shape))
                return False
            cases += 1
    print("hardmax plugin on %s: %d cases (ranks 1..7, every axis): ok" % (device, cases))
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=MODELS, help="folder of the seed models (%(default)s)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args(argv)
    why = args.device == "cuda" and trt.device_unavailable("cuda")
    if why:
        print("--device cuda needs a CUDA device: %s" % why)
        return 2
    logger = trt.Logger(trt.Logger.WARNING)
    registry = trt.Registry()
    registry.load_library(trt.PLUGINS_LIBRARY)  # the library inside the package
    ok = run_model(args.models, logger, registry, args.device)
    ok &= plugin_sweep(logger, registry, args.device)
    if ok:
        print("Inference result correct!")
        return 0
    print("Inference result incorrect")
    return 1


if __name__ == "__main__":
    sys.exit(main())

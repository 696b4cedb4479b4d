"""BuilderFlag.FP16 / BF16 / TF32 (issue 24): TensorRT's values, and a
reduced-precision build that keeps its I/O types and agrees with the float32
engine within the 16-bit type's tolerance."""

import numpy as np

import plugrt as trt
from plugrt import _capi as C


def test_builder_flag_values_are_tensorrts():
    # TensorRT 10's nvinfer1::BuilderFlag: kFP16 0, kTF32 6, kBF16 17.
    assert int(trt.BuilderFlag.FP16) == 0
    assert int(trt.BuilderFlag.TF32) == 6
    assert int(trt.BuilderFlag.BF16) == 17


def _network(builder, w, b):
    reg = trt.get_plugin_registry()
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (4, 16))
    wc = net.add_constant(w.shape, w).get_output(0)
    bc = net.add_constant(b.shape, b).get_output(0)

    def op(name, ins):
        p = reg.get_creator(name, "1", "plugrt").create_plugin(name.lower())
        return net.add_plugin_v3(ins, [], p).get_output(0)

    y = op("Softmax", [op("Relu", [op("Add", [op("MatMul", [x, wc]), bc])])])
    y.name = "y"
    net.mark_output(y)
    return net


def _build(flags):
    rng = np.random.default_rng(24)
    w = (rng.random((16, 16)) - 0.5).astype(np.float32)
    b = ((rng.random(16) - 0.5) * 0.1).astype(np.float32)
    builder = trt.Builder()
    config = builder.create_builder_config()
    for f in flags:
        config.set_flag(f)
        assert config.get_flag(f)
    return builder.build_engine_with_config(_network(builder, w, b), config)


def test_fp16_build_keeps_io_types_and_agrees_with_float32():
    x = np.random.default_rng(1).uniform(-2, 2, (4, 16)).astype(np.float32)
    ref = _build([]).create_execution_context().run({"x": x})["y"]
    for flag, tol, bits in ((trt.BuilderFlag.FP16, 1e-2, 1), (trt.BuilderFlag.BF16, 5e-2, 2)):
        e = _build([flag])
        assert e.get_tensor_dtype("x") == trt.float32
        assert e.get_tensor_dtype("y") == trt.float32
        assert C.fn.engine_get_precision_flags(e.handle) == bits
        # Cast layers at the input and the output.
        assert e.num_layers >= 6
        got = e.create_execution_context().run({"x": x})["y"]
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * float(np.abs(ref).max()))


def test_tf32_is_recorded_and_changes_nothing_on_the_cpu():
    x = np.random.default_rng(2).uniform(-2, 2, (4, 16)).astype(np.float32)
    ref = _build([]).create_execution_context().run({"x": x})["y"]
    e = _build([trt.BuilderFlag.TF32])
    assert C.fn.engine_get_precision_flags(e.handle) == 4
    assert np.array_equal(e.create_execution_context().run({"x": x})["y"], ref)

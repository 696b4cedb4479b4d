"""Objects free what they own, deterministically (close, with) and on
garbage collection; closed objects refuse use."""

import gc

import numpy as np
import pytest

import plugrt as trt
from plugrt._plugin import LIVE
from plugrt._runtime import _ALLOCS

import plugins_for_tests


def engine():
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (2, 4))
    y = net.add_plugin_v3([x], [], plugins_for_tests.ScalePlugin(2.0)).get_output(0)
    y.name = "y"
    net.mark_output(y)
    return b.build_engine_with_config(net)


def test_close_order_and_use_after_close():
    e = engine()
    ctx = e.create_execution_context()
    ctx.run({"x": np.ones((2, 4), np.float32)})
    e.close()  # closes its contexts first
    with pytest.raises(trt.StateError):
        ctx.run({"x": np.ones((2, 4), np.float32)})
    with pytest.raises(trt.StateError):
        e.create_execution_context()
    e.close()


def test_context_managers():
    with engine() as e:
        with e.create_execution_context() as ctx:
            assert ctx.run({"x": np.ones((2, 4), np.float32)})["y"].sum() == 16
        with pytest.raises(trt.StateError):
            ctx.execute_async_v3()
    with trt.Registry() as reg:
        reg.load_library(trt.PLUGINS_LIBRARY)
    with pytest.raises(trt.StateError):
        reg.get_creator("NonZeroPlugin")


def test_tensorrt_with_idiom(tmp_path):
    """TensorRT samples' `with` chain works (Builder, Runtime, configs and
    parsers raised TypeError): each object is itself inside the block; at
    its end what owns a C object releases it and refuses use, while the
    engine made inside outlives the Builder, network, config, parser and
    Runtime it came from."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - only this test needs it
    node = helper.make_node("Relu", ["x"], ["y"])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    logger = trt.Logger(trt.Logger.WARNING)
    with trt.Builder(logger) as builder, builder.create_network(0) as network, \
            builder.create_builder_config() as config, \
            trt.OnnxParser(network, logger) as parser, trt.Runtime(logger) as runtime:
        assert isinstance(builder, trt.Builder) and isinstance(runtime, trt.Runtime)
        assert isinstance(config, trt.IBuilderConfig) and isinstance(parser, trt.OnnxParser)
        assert parser.parse(m.SerializeToString())
        plan = builder.build_serialized_network(network, config)
        engine = runtime.deserialize_cuda_engine(plan)
    with pytest.raises(trt.StateError):
        config.device = "cpu"
    with pytest.raises(trt.StateError):
        parser.parse(m.SerializeToString())
    with pytest.raises(trt.StateError):
        network.add_input("z", trt.float32, (1,))
    # Builder and Runtime own nothing: they, and the engine, still work.
    assert builder.create_network() is not None
    with engine, engine.create_execution_context() as context:
        x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
        assert np.array_equal(context.run({"x": x})["y"], np.maximum(x, 0))
    with pytest.raises(trt.StateError):
        context.run({"x": x})
    with pytest.raises(trt.StateError):
        engine.create_execution_context()
    with runtime as r2:  # still usable, and `with` again
        assert r2.deserialize_cuda_engine(plan).num_io_tensors == 2


def test_collection_frees_everything():
    gc.collect()
    live, allocs = len(LIVE), len(_ALLOCS)

    class A(trt.IOutputAllocator):
        def reallocate_output(self, *a):
            return 0

    for _ in range(3):
        e = engine()
        ctx = e.create_execution_context()
        ctx.set_output_allocator("y", A())
        # A cycle through the context: collected all the same.
        ctx.me = ctx
        del e, ctx
    gc.collect()
    assert len(LIVE) == live and len(_ALLOCS) == allocs


def test_network_keeps_the_library_loaded(std_registry):
    reg = trt.Registry()
    reg.load_library(trt.PLUGINS_LIBRARY)
    p = reg.get_creator("CustomHardmax", "1", "").create_plugin("h")
    net = trt.Builder(registry=reg).create_network()
    x = net.add_input("x", trt.float32, (4,))
    y = net.add_plugin_v3([x], [], p).get_output(0)
    y.name = "y"
    net.mark_output(y)
    del reg, p
    gc.collect()
    e = trt.Builder().build_engine_with_config(net)  # the network's registry is used
    del net
    gc.collect()
    out = e.create_execution_context().run({"x": np.array([1, 5, 2, 5], np.float32)})["y"]
    assert out.tolist() == [0, 1, 0, 0]

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

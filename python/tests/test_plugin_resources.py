"""What a context gives Python plugins at attach_to_context (plugin.h's
prt_plugin_resources): objects shared by name among the context's layers,
memory counted in the context, errors reported for the next run; and
graph-capture safety declared by class and decorator plugins."""

import threading

import numpy as np
import pytest

import plugrt as trt
import plugrt.plugin as trtp


class Table:
    """The shared object: made once per context, released with it."""
    made = []
    released = []

    def __init__(self):
        Table.made.append(self)
        self.add = np.float32(10 * len(Table.made))


class AddShared(trt.Plugin):
    """y = x + the context's Table.add; holds `nbytes` of context memory;
    reports an error when told to."""
    plugin_name = "PyAddShared"
    plugin_namespace = "tests_res"
    capture_safe = False

    def __init__(self):
        super().__init__()
        self.ctx = None
        self.table = None
        self.mem = 0
        self.report = None

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return in_out[pos].desc.type == trt.float32

    def attach_to_context(self, context):
        c = AddShared()
        c.ctx = context
        c.table = context.acquire("tests_res::table", Table, Table.released.append)
        c.mem = context.alloc(1000)
        return c

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        x = trt.host_array(inputs[0], input_desc[0])
        y = trt.host_array(outputs[0], output_desc[0])
        np.add(x, self.table.add, out=y)
        if self.report:
            self.ctx.report_error(self.report)
            self.report = None

    def get_fields_to_serialize(self):
        return trt.PluginFieldCollection()


class AddSharedCreator(trt.PluginCreator):
    name = "PyAddShared"
    plugin_namespace = "tests_res"
    plugin_version = "1"

    def create_plugin(self, name, fc, phase):
        return AddShared()


trt.get_plugin_registry().register_creator(AddSharedCreator())


def two_layers():
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (4,))
    creator = trt.get_plugin_registry().get_creator("PyAddShared", "1", "tests_res")
    t = x
    for _ in range(2):
        layer = net.add_plugin_v3([t], [], creator.create_plugin(
            "a", trt.PluginFieldCollection(), trt.TensorRTPhase.BUILD))
        t = layer.get_output(0)
    t.name = "y"
    net.mark_output(t)
    return b.build_engine_with_config(net, b.create_builder_config())


def test_shared_object_once_per_context_and_memory():
    del Table.made[:], Table.released[:]
    engine = two_layers()
    own = engine.device_memory_size
    c1 = engine.create_execution_context()
    c2 = engine.create_execution_context()
    assert len(Table.made) == 2  # one per context, though two layers asked
    assert c1.memory_size == own + 2000 and c2.memory_size == own + 2000
    x = np.arange(4, dtype=np.float32)
    # Both layers of a context add its own table's value.
    assert np.array_equal(c1.run({"x": x})["y"], x + 2 * Table.made[0].add)
    assert np.array_equal(c2.run({"x": x})["y"], x + 2 * Table.made[1].add)
    assert Table.released == []
    t1 = Table.made[0]
    del c1
    import gc
    gc.collect()
    assert Table.released == [t1]
    del c2
    gc.collect()
    assert len(Table.released) == 2


def test_reported_error_fails_the_run_naming_the_layer():
    engine = two_layers()
    ctx = engine.create_execution_context()
    from plugrt._plugin import LIVE
    clones = [b.plugin for b in LIVE.values()
              if isinstance(getattr(b, "plugin", None), AddShared) and b.plugin.ctx is not None
              and b.plugin.table is not None]
    assert clones
    clones[-1].report = "the table went stale"
    x = np.ones(4, np.float32)
    with pytest.raises(trt.PluginError) as ei:
        ctx.run({"x": x})
    assert "reported an error: the table went stale" in str(ei.value)
    assert "tests_res::PyAddShared" in str(ei.value)
    ctx.run({"x": x})  # once
    # From another thread, between runs.
    th = threading.Thread(target=clones[-1].ctx.report_error, args=("from a thread",))
    th.start()
    th.join()
    with pytest.raises(trt.PluginError, match="from a thread"):
        ctx.run({"x": x})


def test_class_plugin_capture_safe_recorded():
    engine = two_layers()
    assert engine.get_layer_info(0)["capture_safe"] is False


@trtp.register("tests_res::nocap", capture_safe=False)
def nocap_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tests_res::nocap")
def nocap_impl(x: trtp.Tensor, outputs, stream) -> None:
    np.copyto(np.asarray(outputs[0]), np.asarray(x))


@trtp.register("tests_res::cap")
def cap_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tests_res::cap")
def cap_impl(x: trtp.Tensor, outputs, stream) -> None:
    np.copyto(np.asarray(outputs[0]), np.asarray(x))


@pytest.mark.parametrize("op, safe", [("nocap", False), ("cap", True)])
def test_decorator_capture_safe_recorded_through_save_and_load(op, safe):
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (4,))
    layer = net.add_plugin(getattr(trtp.op.tests_res, op)(x))
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    data = b.build_serialized_network(net, b.create_builder_config())
    engine = trt.Runtime().deserialize_cuda_engine(data)
    assert engine.get_layer_info(0)["capture_safe"] is safe
    x = np.arange(4, dtype=np.float32)
    assert np.array_equal(engine.create_execution_context().run({"x": x})["y"], x)

"""Python class plugins (IPluginV3 + capabilities / plugrt.Plugin) and
creators: every method called, tactics, workspace, serialization, engines
saved and loaded, expressions, and errors raised in every method."""

import gc
import subprocess
import sys

import numpy as np
import pytest

import plugrt as trt
from plugrt import _capi
from plugrt._plugin import LIVE

import plugins_for_tests as P
from conftest import HERE


def scale_network(builder, scale=2.5, fail_in=None, reg=None):
    reg = reg or trt.get_plugin_registry()
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, 4))
    fc = trt.PluginFieldCollection([
        trt.PluginField("scale", np.array([scale], np.float32), trt.PluginFieldType.FLOAT32),
        trt.PluginField("fail_in", (fail_in or "").encode(), trt.PluginFieldType.CHAR)])
    plugin = reg.get_creator("PyScale", "1", "tests").create_plugin("scale", fc,
                                                                   trt.TensorRTPhase.BUILD)
    assert isinstance(plugin, P.ScalePlugin) and plugin.scale == np.float32(scale)
    layer = net.add_plugin_v3([x], [], plugin)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    return net


def config(builder, autotune=False):
    cfg = builder.create_builder_config()
    cfg.autotune = autotune
    p = builder.create_optimization_profile()
    p.set_shape("x", (1, 4), (3, 4), (8, 4))
    cfg.add_optimization_profile(p)
    return cfg


def test_creator_registered_and_found():
    c = trt.get_plugin_registry().get_creator("PyScale", "1", "tests")
    assert isinstance(c, P.ScaleCreator)
    assert any(x is c for x in trt.get_plugin_registry().all_creators)


def test_every_method_runs_and_results_are_right(rng):
    P.ScalePlugin.calls.clear()
    b = trt.Builder(trt.Logger())
    engine = b.build_engine_with_config(scale_network(b), config(b, autotune=True))
    calls = dict(P.ScalePlugin.calls)
    for m in ("get_output_data_types", "get_output_shapes", "supports_format_combination",
              "configure_plugin", "get_workspace_size", "get_valid_tactics", "set_tactic",
              "on_shape_change", "enqueue", "get_fields_to_serialize"):
        assert calls.get(m), "%s was not called: %r" % (m, calls)
    info = engine.get_layer_info(0)
    assert info["tactic"] in (0, 1, 2) and info["workspace"] == 64
    assert info["plugin_name"] == "PyScale" and info["plugin_namespace"] == "tests"
    ctx = engine.create_execution_context()
    assert P.ScalePlugin.calls["attach_to_context"] >= 1
    for n in (1, 5, 8):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        assert np.array_equal(ctx.run({"x": x})["y"], x * np.float32(2.5))


def test_saved_and_loaded(tmp_path, rng):
    b = trt.Builder()
    data = b.build_serialized_network(scale_network(b, 4.0), config(b))
    path = tmp_path / "scale.plan"
    path.write_bytes(data)
    e = trt.load(str(path))
    x = rng.standard_normal((3, 4)).astype(np.float32)
    assert np.array_equal(e.create_execution_context().run({"x": x})["y"], x * 4)


def test_load_in_a_process_that_has_not_imported_the_module(tmp_path):
    b = trt.Builder()
    path = tmp_path / "scale.plan"
    trt.Runtime().deserialize_cuda_engine(
        b.build_serialized_network(scale_network(b, 3.0), config(b))).save(str(path))
    code = ("import plugrt, sys\n"
            "try:\n    plugrt.load(sys.argv[1])\n"
            "except plugrt.NotFoundError as e:\n    print(e)\n    sys.exit(3)\n")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert "tests::PyScale version 1" in r.stdout
    assert "import module 'plugins_for_tests'" in r.stdout
    # With the module imported it loads and runs.
    code2 = ("import sys; sys.path.insert(0, %r)\nimport numpy as np, plugrt, plugins_for_tests\n"
             "e = plugrt.load(sys.argv[1])\n"
             "print(e.create_execution_context().run({'x': np.ones((2, 4), np.float32)})['y'].sum())"
             % HERE)
    r = subprocess.run([sys.executable, "-c", code2, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == 24.0


BUILD_METHODS = ["get_output_data_types", "get_output_shapes", "supports_format_combination",
                 "configure_plugin", "get_workspace_size", "get_fields_to_serialize"]


@pytest.mark.parametrize("method", BUILD_METHODS + ["get_valid_tactics"])
def test_exception_in_a_build_method(method):
    b = trt.Builder()
    net = scale_network(b, fail_in=method)
    with pytest.raises(trt.PluginError) as ei:
        b.build_serialized_network(net, config(b, autotune=True))
    msg = str(ei.value)
    assert "tests::PyScale" in msg and method in msg and "asked to fail in %s" % method in msg
    assert "ValueError" in msg
    assert isinstance(ei.value.__cause__, ValueError)


@pytest.mark.parametrize("method", ["on_shape_change", "enqueue"])
def test_exception_in_a_runtime_method(method):
    b = trt.Builder()
    engine = b.build_engine_with_config(scale_network(b), config(b))
    ctx = engine.create_execution_context()
    bridge = list(LIVE.values())[-1]  # the context's clone, made last
    assert isinstance(bridge.plugin, P.ScalePlugin)
    bridge.plugin.fail_in = method
    bridge.runtime.fail_in = method
    with pytest.raises(trt.PluginError) as ei:
        ctx.run({"x": np.ones((2, 4), np.float32)})
    assert method in str(ei.value) and "tests::PyScale" in str(ei.value)
    assert isinstance(ei.value.__cause__, ValueError)


def test_exception_in_create_plugin():
    """The creator raises when C calls it: the engine loader (or, in newer
    libplugrt, the builder, which re-creates each plugin as a loader will)."""
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1, 4))
    y = net.add_plugin_v3([x], [], P.ScalePlugin(2.0, fail_in="create_plugin")).get_output(0)
    y.name = "y"
    net.mark_output(y)
    with pytest.raises(trt.PluginError) as ei:
        data = b.build_serialized_network(net, config(b))
        trt.Runtime().deserialize_cuda_engine(data)
    assert "create_plugin" in str(ei.value) and "KeyError" in str(ei.value)
    assert "tests::PyScale" in str(ei.value)
    assert isinstance(ei.value.__cause__, KeyError)
    assert ei.value.message == _capi.last_error()


def one_layer_network(builder, plugin):
    """x (-1, 4) -> plugin -> its output."""
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, 4))
    net.mark_output(net.add_plugin_v3([x], [], plugin).get_output(0))
    return net


class RaisesText(P.ScalePlugin):
    """ScalePlugin whose get_output_shapes raises ValueError(text)."""

    def __init__(self, text):
        super().__init__(2.0)
        self.text = text

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        raise ValueError(self.text)


@pytest.mark.parametrize("text,shown", [
    ("bad\x1b[31mred\x07 \x9b end \udc80", "bad\\x1b[31mred\\x07 \\xc2\\x9b end \\x80"),
    ("long " + "x" * 3000 + " end", "long " + "x" * 3000 + " end")])
def test_exception_text_escaped_and_said_once(text, shown):
    """A Python plugin's exception reaches the message once, its control
    bytes escaped as libplugrt escapes every message (they reached the
    terminal raw, and the text came twice: once escaped by C, once not, and
    a text longer than C's message the same way)."""
    b = trt.Builder()
    net = one_layer_network(b, RaisesText(text))
    with pytest.raises(trt.PluginError) as ei:
        b.build_serialized_network(net, config(b))
    msg = str(ei.value)
    assert msg.startswith("layer ") and msg.endswith("raised ValueError: " + shown), msg
    assert msg.count("raised ValueError") == 1 and "after:" not in msg, msg
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or 0xd800 <= ord(c) <= 0xdfff
                   for c in msg), msg
    assert str(ei.value.__cause__) == text  # the exception itself is untouched


class HugeWorkspace(P.ScalePlugin):
    """ScalePlugin asking for a workspace of `size` bytes."""

    def __init__(self, size):
        super().__init__(2.0)
        self.size = size

    def get_workspace_size(self, inp, out):
        return self.size


@pytest.mark.parametrize("size", [2**64, 2**64 + 64, 2**63, -1, -2**64])
def test_workspace_size_outside_int64(size):
    """A size that does not fit int64_t is refused naming the plugin and the
    method (2**64 + 64 used to become a workspace of 64 bytes)."""
    b = trt.Builder()
    net = one_layer_network(b, HugeWorkspace(size))
    with pytest.raises(trt.PluginError) as ei:
        b.build_serialized_network(net, config(b))
    msg = str(ei.value)
    assert "tests::PyScale" in msg and "method get_workspace_size" in msg, msg
    assert "returned %d" % size in msg and "0 to 2**63-1" in msg, msg
    assert isinstance(ei.value.__cause__, ValueError)


def test_workspace_size_of_the_largest_int64():
    """2**63-1 passes the check (and the builder then refuses what it cannot
    reserve, as for a C plugin)."""
    b = trt.Builder()
    net = one_layer_network(b, HugeWorkspace(2**63 - 1))
    with pytest.raises(trt.Error) as ei:
        b.build_serialized_network(net, config(b))
    assert "0 to 2**63-1" not in str(ei.value)


class Broken(trt.Plugin):
    """A plugin whose answers are wrong in ways plugrt must catch."""
    plugin_name = "Broken"
    plugin_namespace = "tests"

    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def get_output_data_types(self, input_types):
        return [input_types[0]] * (2 if self.mode == "types" else 1)

    def get_output_shapes(self, inputs, shape_inputs, eb):
        if self.mode == "shape-none":
            return [trt.DimsExprs(2)]
        if self.mode == "div0":
            return [[eb.operation(trt.DimensionOperation.FLOOR_DIV, inputs[0][0], 0)]]
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return True

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        return 7 if self.mode == "status" else None

    def get_fields_to_serialize(self):
        return [trt.PluginField("mode", self.mode, trt.PluginFieldType.CHAR)]


class BrokenCreator(trt.PluginCreator):
    name, plugin_namespace = "Broken", "tests"
    field_names = [trt.PluginField("mode", None, trt.PluginFieldType.CHAR)]

    def create_plugin(self, name, fc, phase):
        return Broken(fc["mode"].to_str())


def broken_registry():
    reg = trt.Registry()
    reg.register_creator(BrokenCreator())
    return reg


@pytest.mark.parametrize("mode,needle", [("types", "returned 2 types for 1 outputs"),
                                         ("shape-none", "was not set"),
                                         ("div0", "FLOOR_DIV")])
def test_wrong_answers_are_errors(mode, needle):
    b = trt.Builder(registry=broken_registry())
    net = b.create_network()
    x = net.add_input("x", trt.float32, (3,))
    net.mark_output(net.add_plugin_v3([x], [], Broken(mode)).get_output(0))
    with pytest.raises(trt.PluginError) as ei:
        b.build_serialized_network(net, None)
    assert needle in str(ei.value) and "tests::Broken" in str(ei.value)


def test_enqueue_returning_a_status_is_an_error():
    b = trt.Builder(registry=broken_registry())
    net = b.create_network()
    x = net.add_input("x", trt.float32, (3,))
    y = net.add_plugin_v3([x], [], Broken("status")).get_output(0)
    y.name = "y"
    net.mark_output(y)
    e = b.build_engine_with_config(net)
    with pytest.raises(trt.PluginError) as ei:
        e.create_execution_context().run({"x": np.ones(3, np.float32)})
    assert "returned 7" in str(ei.value)


class Concat2(trt.IPluginV3, trt.IPluginV3OneCore, trt.IPluginV3OneBuild,
              trt.IPluginV3OneRuntime):
    """[N, ...] -> [N + N, ...] (x then 2x), with DimsExprs arithmetic."""

    def __init__(self):
        trt.IPluginV3.__init__(self)
        self.plugin_name, self.plugin_version, self.plugin_namespace = "Concat2", "1", "tests"
        self.num_outputs = 1
        self.notes = {}

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, eb):
        d0 = inputs[0][0]
        rows = d0 + d0
        n = self.notes
        n["same"] = rows == eb.operation(trt.DimensionOperation.SUM, d0, d0)
        n["const"] = eb.constant(2).is_constant() and eb.constant(2).get_constant_value() == 2
        n["dyn"] = not d0.is_constant() and not d0.is_size_tensor()
        n["mixed"] = (3 * d0 - 1) // 2 is not None
        with pytest.raises(ValueError):
            d0.get_constant_value()
        n["eb"] = eb
        out = trt.DimsExprs(len(inputs[0]))
        out[0] = rows
        for i in range(1, len(inputs[0])):
            out[i] = inputs[0][i]
        return [out]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return in_out[pos].desc.type == trt.float32

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        x = trt.host_array(inputs[0], input_desc[0])
        y = trt.host_array(outputs[0], output_desc[0])
        n = x.shape[0]
        y[:n] = x
        y[n:] = 2 * x

    def get_fields_to_serialize(self):
        return trt.PluginFieldCollection()

    def clone(self):
        c = Concat2()
        c.notes = self.notes
        return c


def test_expressions_and_plugins_without_a_creator(rng):
    reg = trt.Registry()
    b = trt.Builder(registry=reg)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1, 3))
    plugin = Concat2()
    y = net.add_plugin_v3([x], [], plugin).get_output(0)
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1, 3), (2, 3), (4, 3))
    cfg.add_optimization_profile(p)
    try:
        e = b.build_engine_with_config(net, cfg)
    except trt.PluginError as err:
        # Newer libplugrt re-creates every plugin from its creator at build.
        assert "creator" in str(err)
        reg.register_creator(_Concat2Creator())
        e = b.build_engine_with_config(net, cfg)
    n = plugin.notes
    assert n["same"] and n["const"] and n["dyn"] and n["mixed"]
    with pytest.raises(trt.StateError):
        n["eb"].constant(1)  # the builder is gone with its call
    for rows in (1, 4):
        a = rng.standard_normal((rows, 3)).astype(np.float32)
        assert np.array_equal(e.create_execution_context().run({"x": a})["y"],
                              np.concatenate([a, 2 * a]))


class _Concat2Creator(trt.IPluginCreatorV3One):
    name, plugin_version, plugin_namespace = "Concat2", "1", "tests"

    def create_plugin(self, name, fc, phase):
        return Concat2()


def test_bridges_are_freed():
    gc.collect()
    before = len(LIVE)
    b = trt.Builder()
    e = b.build_engine_with_config(scale_network(b), config(b))
    ctx = e.create_execution_context()
    ctx.run({"x": np.ones((2, 4), np.float32)})
    assert len(LIVE) > before
    del ctx, e, b
    gc.collect()
    assert len(LIVE) == before

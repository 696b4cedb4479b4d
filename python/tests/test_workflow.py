"""TensorRT's core workflow over C plugins: network, builder, config,
profiles, serialized engines, runtime, engine queries, contexts, output
allocators, the short path, the ONNX parser."""

import os

import numpy as np
import pytest

import plugrt as trt

from conftest import models_dir


def nonzero_network(builder, reg, dtype=trt.float32, row_order=1):
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    x = net.add_input("X", dtype, (-1, -1))
    assert x.name == "X" and x.dtype == dtype and x.shape == (-1, -1) and x.is_network_input
    creator = reg.get_creator("NonZeroPlugin", "1", "")
    assert isinstance(creator, trt.CCreator)
    assert [f.name for f in creator.field_names] == ["rowOrder", "backend"]
    assert creator.field_names[0].type == trt.PluginFieldType.INT32
    fc = trt.PluginFieldCollection([trt.PluginField("rowOrder", np.array([row_order], np.int32),
                                                    trt.PluginFieldType.INT32)])
    plugin = creator.create_plugin("nz", fc, trt.TensorRTPhase.BUILD)
    assert plugin.plugin_name == "NonZeroPlugin" and plugin.num_outputs == 2
    layer = net.add_plugin_v3([x], [], plugin)
    assert layer.num_outputs == 2 and layer.get_input(0) == x
    layer.name = "nonzero"
    assert layer.name == "nonzero"
    y = layer.get_output(0)
    y.name = "Y"
    assert y.name == "Y" and y.dtype is None  # known after a build
    net.mark_output(y)
    assert net.num_inputs == 1 and net.num_outputs == 1 and net.get_output(0) == y
    assert y.is_network_output and net.num_layers == 1 and net.get_layer(0) is layer
    return net


def build_nonzero(reg, **kw):
    builder = trt.Builder(trt.Logger(), reg)
    net = nonzero_network(builder, reg, **kw)
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 26)
    assert config.get_memory_pool_limit(trt.MemoryPoolType.WORKSPACE) == 1 << 26
    profile = builder.create_optimization_profile()
    profile.set_shape("X", (1, 1), (16, 16), (64, 64))
    assert profile.get_shape("X") == [(1, 1), (16, 16), (64, 64)]
    assert config.add_optimization_profile(profile) == 0
    assert config.num_optimization_profiles == 1
    data = builder.build_serialized_network(net, config)
    assert isinstance(data, bytes) and data.nbytes == len(data) > 0
    return data


def random_zeros(rng, shape, dtype=np.float32):
    a = rng.random(shape).astype(dtype)
    a[rng.random(shape) < 0.5] = 0
    return a


def test_build_serialize_deserialize_run(std_registry, rng):
    data = build_nonzero(std_registry)
    engine = trt.Runtime(trt.Logger(), std_registry).deserialize_cuda_engine(data)
    assert engine.num_io_tensors == 2
    assert [engine.get_tensor_name(i) for i in range(2)] == ["X", "Y"]
    assert engine.get_tensor_mode("X") == trt.TensorIOMode.INPUT
    assert engine.get_tensor_mode("Y") == trt.TensorIOMode.OUTPUT
    assert engine.get_tensor_mode("nope") == trt.TensorIOMode.NONE
    assert engine.get_tensor_dtype("Y") == trt.int32
    assert engine.get_tensor_shape("X") == (-1, -1)
    assert engine.get_tensor_shape("Y") == (-1, 2) and engine.is_data_dependent("Y")
    assert engine.get_tensor_format("Y") == trt.TensorFormat.LINEAR
    assert engine.num_layers == 1 and engine.num_optimization_profiles == 1
    assert engine.device == trt.Device.CPU
    assert engine.serialize() == data

    ctx = engine.create_execution_context()
    a = random_zeros(rng, (16, 16))
    ctx.set_input_shape("X", a.shape)
    upper = ctx.get_tensor_shape("Y")
    assert upper == (256, 2)  # the upper bound before a run
    y = np.full(upper, -1, np.int32)
    ctx.set_tensor_address("X", a.ctypes.data)
    ctx.set_tensor_address("Y", y.ctypes.data)
    assert ctx.get_tensor_address("Y") == y.ctypes.data
    assert ctx.execute_async_v3(0)
    shape = ctx.get_tensor_shape("Y")  # the true shape after it
    ref = np.stack(np.nonzero(a), axis=1)
    assert shape == ref.shape
    assert np.array_equal(y[:shape[0]], ref)


def test_output_allocator(std_registry, rng):
    engine = trt.Runtime(registry=std_registry).deserialize_cuda_engine(build_nonzero(std_registry))

    class Alloc(trt.IOutputAllocator):
        def __init__(self):
            super().__init__()
            self.asked, self.shapes, self.mem = [], [], {}

        def reallocate_output(self, tensor_name, memory, size, alignment):
            self.asked.append((tensor_name, size, alignment))
            self.mem[tensor_name] = np.zeros(max(size, 1), np.uint8)
            return self.mem[tensor_name].ctypes.data

        def notify_shape(self, tensor_name, shape):
            self.shapes.append((tensor_name, tuple(shape)))

    ctx = engine.create_execution_context()
    alloc = Alloc()
    ctx.set_output_allocator("Y", alloc)
    assert ctx.get_output_allocator("Y") is alloc
    for n in (5, 30):
        a = random_zeros(rng, (n, n))
        ctx.set_input_shape("X", a.shape)
        ctx.set_tensor_address("X", a)
        ctx.execute_async_v3()
        ref = np.stack(np.nonzero(a), axis=1).astype(np.int32)
        assert alloc.shapes[-1] == ("Y", ref.shape)
        assert alloc.asked[-1][0] == "Y" and alloc.asked[-1][1] >= ref.nbytes
        got = alloc.mem["Y"][:ref.nbytes].view(np.int32).reshape(ref.shape)
        assert np.array_equal(got, ref)
    ctx.set_output_allocator("Y", None)
    assert ctx.get_output_allocator("Y") is None


def test_output_allocator_that_raises(std_registry, rng):
    engine = trt.Runtime(registry=std_registry).deserialize_cuda_engine(build_nonzero(std_registry))

    class Bad(trt.IOutputAllocator):
        def reallocate_output(self, tensor_name, memory, size, alignment):
            raise MemoryError("no memory for %s" % tensor_name)

    ctx = engine.create_execution_context()
    ctx.set_output_allocator("Y", Bad())
    a = random_zeros(rng, (4, 4))
    ctx.set_input_shape("X", a.shape)
    ctx.set_tensor_address("X", a)
    with pytest.raises(trt.Error) as ei:
        ctx.execute_async_v3()
    assert isinstance(ei.value.__cause__, MemoryError)


@pytest.mark.parametrize("row_order", [1, 0])
def test_run_returns_true_shapes(std_registry, rng, row_order):
    engine = trt.Runtime(registry=std_registry).deserialize_cuda_engine(
        build_nonzero(std_registry, row_order=row_order))
    ctx = engine.create_execution_context()
    for shape in [(3, 7), (64, 64), (1, 1), (16, 16), (3, 7)]:
        a = random_zeros(rng, shape)
        out = ctx.run({"X": a})
        ref = np.stack(np.nonzero(a), axis=1 if row_order else 0)
        assert out["Y"].shape == ref.shape and np.array_equal(out["Y"], ref)
    zero = np.zeros((4, 4), np.float32)
    assert ctx.run({"X": zero})["Y"].shape == ((0, 2) if row_order else (2, 0))


def test_short_path_save_load(std_registry, rng, tmp_path):
    models = models_dir()
    onnx = os.path.join(models, "nonzero_plugin.onnx")
    engine = trt.build(onnx, device="cpu", profiles=[{"X": ((1, 1), (128, 128), (256, 256))}],
                       plugins=[trt.PLUGINS_LIBRARY], registry=trt.Registry())
    path = tmp_path / "nz.plan"
    engine.save(str(path))
    loaded = trt.load(str(path), registry=trt.Registry(), plugins=[trt.PLUGINS_LIBRARY])
    data = os.path.join(models, "nonzero_plugin.data")
    feeds = {"X": np.load(os.path.join(data, "input_X.npy"))}
    for e in (engine, loaded):
        out = e.create_execution_context().run(feeds)
        for name in out:
            want = np.load(os.path.join(data, "output_%s.npy" % name))
            assert out[name].shape == want.shape and np.array_equal(out[name], want)


def test_load_without_the_library_names_the_plugin(std_registry, tmp_path):
    data = build_nonzero(std_registry)
    with pytest.raises(trt.NotFoundError) as ei:
        trt.Runtime(registry=trt.Registry()).deserialize_cuda_engine(data)
    assert "NonZeroPlugin" in str(ei.value) and "libplugrt_plugins" in str(ei.value)


def test_onnx_parser_and_profiles(std_registry):
    models = models_dir()
    b = trt.Builder(trt.Logger(), std_registry)
    net = b.create_network()
    parser = trt.OnnxParser(net, trt.Logger(), std_registry)
    with open(os.path.join(models, "qa_custom_hardmax.onnx"), "rb") as f:
        assert parser.parse(f.read())
    assert [net.get_input(i).name for i in range(net.num_inputs)] == ["q", "k"]
    assert net.get_input(0).shape == (-1, 32)
    cfg = b.create_builder_config()
    for lo, hi in ((1, 8), (9, 64)):
        p = b.create_optimization_profile()
        p.set_shape("q", (lo, 32), (lo, 32), (hi, 32))
        cfg.add_optimization_profile(p)
    engine = b.build_engine_with_config(net, cfg)
    assert engine.num_optimization_profiles == 2
    data = os.path.join(models, "qa_custom_hardmax.data")
    feeds = {n: np.load(os.path.join(data, "input_%s.npy" % n)) for n in "qk"}
    ctx = engine.create_execution_context()
    out = ctx.run(feeds)
    assert np.allclose(out["start"], np.load(os.path.join(data, "output_start.npy")), atol=1e-4)
    ctx.set_optimization_profile_async(1, 0)
    assert ctx.active_optimization_profile == 1
    with pytest.raises(trt.ShapeError):
        ctx.run(feeds)  # batch 3 is outside profile 1
    q = np.tile(feeds["q"], (4, 1))
    assert ctx.run({"q": q, "k": feeds["k"]})["start"].shape == (12, 64)
    # A parser fills an empty network only.
    with pytest.raises(trt.StateError):
        parser.parse_from_file(os.path.join(models, "qa_custom_hardmax.onnx"))


def test_parser_map_op(std_registry):
    models = models_dir()
    net = trt.Builder().create_network()
    parser = trt.OnnxParser(net, None, std_registry)
    parser.map_op("CustomHardmax", "NoSuchPlugin", "1", "")
    with pytest.raises(trt.Error) as ei:
        parser.parse_from_file(os.path.join(models, "qa_custom_hardmax.onnx"))
    assert "NoSuchPlugin" in str(ei.value)


def test_builtin_ops_and_constants():
    reg = trt.get_plugin_registry()
    relu = reg.get_creator("Relu", "1", "plugrt")
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (2, 3))
    w = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    c = net.add_constant((2, 3), w)
    add = reg.get_creator("Add", "1", "plugrt").create_plugin("add")
    s = net.add_plugin_v3([x, c.get_output(0)], [], add).get_output(0)
    y = net.add_plugin_v3([s], [], relu.create_plugin("relu")).get_output(0)
    y.name = "y"
    net.mark_output(y)
    e = b.build_engine_with_config(net, b.create_builder_config())
    xin = np.ones((2, 3), np.float32)
    assert np.array_equal(e.create_execution_context().run({"x": xin})["y"],
                          np.maximum(xin + w, 0))


@pytest.mark.parametrize("dt", [np.float64, np.int16, np.uint16, np.uint32, np.uint64])
def test_wide_dtypes_through_the_api(dt):
    # float64, int16 and the unsigned types as network inputs, constants and
    # outputs: numpy arrays in and out, Add in the type's own arithmetic
    # (integers wrap, doubles keep their precision).
    reg = trt.get_plugin_registry()
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", dt, (2, 3))
    assert x.dtype == trt.DataType[{np.float64: "DOUBLE"}.get(dt, np.dtype(dt).name.upper())]
    w = np.array([[1, 2, 3], [4, 5, np.iinfo(dt).max if dt != np.float64 else 1e-300]], dt)
    c = net.add_constant((2, 3), w)
    add = reg.get_creator("Add", "1", "plugrt").create_plugin("add")
    y = net.add_plugin_v3([x, c.get_output(0)], [], add).get_output(0)
    y.name = "y"
    net.mark_output(y)
    e = b.build_engine_with_config(net, b.create_builder_config())
    xin = np.array([[7, 8, 9], [10, 11, 1 if dt != np.float64 else 2.0 ** 53]], dt)
    got = e.create_execution_context().run({"x": xin})["y"]
    with np.errstate(over="ignore"):
        assert got.dtype == dt and np.array_equal(got, xin + w)
    assert trt.nptype(trt.DataType.DOUBLE) is np.float64 and trt.float64.itemsize == 8


def test_c_plugin_ownership(std_registry):
    c = std_registry.get_creator("CustomHardmax", "1", "")
    p = c.create_plugin("h", {"axis": np.array([0], np.int32)})
    net = trt.Builder().create_network()
    x = net.add_input("x", trt.float32, (3,))
    net.add_plugin_v3([x], [], p)
    with pytest.raises(trt.StateError):
        net.add_plugin_v3([x], [], p)  # the network owns it now
    q = c.create_plugin("h2", None)
    q2 = q.clone()
    net.add_plugin_v3([x], [], q)
    net.add_plugin_v3([x], [], q2)
    q3 = c.create_plugin("h3", None)
    q3.destroy()
    q3.destroy()  # twice is fine
    with pytest.raises(trt.StateError):
        q3.clone()


def test_logger_receives_messages(std_registry):
    got = []

    class Mine(trt.ILogger):
        min_severity = trt.ILogger.Severity.VERBOSE

        def log(self, severity, msg):
            got.append((severity, msg))

    lg = Mine()
    b = trt.Builder(lg, std_registry)
    net = nonzero_network(b, std_registry)
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("X", (1, 1), (4, 4), (8, 8))
    cfg.add_optimization_profile(p)
    b.build_serialized_network(net, cfg)
    assert got and all(isinstance(m, str) for _, m in got)
    assert all(isinstance(s, trt.ILogger.Severity) for s, _ in got)


def test_dtypes_and_fields():
    assert trt.nptype(trt.float16) is np.float16 and trt.nptype(trt.bool) is np.bool_
    assert trt.nptype(trt.DataType.INT64) is np.int64
    with pytest.raises(TypeError):
        trt.nptype(trt.bfloat16)
    assert trt.float32 == trt.DataType.FLOAT and trt.DataType.HALF.itemsize == 2
    f = trt.PluginField("s", "hello", trt.PluginFieldType.CHAR)
    assert f.to_str() == "hello" and f.size == 5
    g = trt.PluginField("v", [1.5, 2.5], trt.PluginFieldType.FLOAT16)
    assert g.data.dtype == np.float16 and g.data.tolist() == [1.5, 2.5]
    fc = trt.PluginFieldCollection([f, g])
    assert fc["v"] is g and len(fc) == 2 and fc.get("nope") is None
    bf = trt.PluginField("b", [1.0, -2.0], trt.PluginFieldType.BF16)
    assert bf.data.tolist() == [0x3F80, 0xC000]


class PyReshape(trt.Plugin):
    """y = x reshaped to the values of a shape input."""
    plugin_name = "PyReshape"
    plugin_namespace = "tests"

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        assert len(shape_inputs) == 1 and len(shape_inputs[0]) == 2
        return [shape_inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return True

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        x = trt.host_array(inputs[0], input_desc[0])
        trt.host_array(outputs[0], output_desc[0])[...] = x.reshape(tuple(output_desc[0].dims))

    def get_fields_to_serialize(self):
        return []


class PyReshapeCreator(trt.PluginCreator):
    name, plugin_namespace = "PyReshape", "tests"

    def create_plugin(self, name, fc, phase):
        return PyReshape()


@pytest.mark.parametrize("which", ["builtin", "python"])
def test_shape_inputs(which):
    reg = trt.Registry()
    reg.register_creator(PyReshapeCreator())
    b = trt.Builder(registry=reg)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1,))
    s = net.add_input("s", trt.int64, (2,))
    plugin = (reg.get_creator("Reshape", "1", "plugrt").create_plugin("r")
              if which == "builtin" else PyReshape())
    y = net.add_plugin_v3([x], [s], plugin).get_output(0)
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1,), (6,), (12,))
    p.set_shape_input("s", (1, 1), (2, 3), (3, 4))
    assert p.get_shape_input("s") == [(1, 1), (2, 3), (3, 4)]
    cfg.add_optimization_profile(p)
    engine = b.build_engine_with_config(net, cfg)
    assert engine.is_shape_inference_io("s") and not engine.is_shape_inference_io("x")
    assert engine.get_tensor_location("s") == trt.TensorLocation.HOST
    ctx = engine.create_execution_context()
    for shape in [(2, 3), (3, 4), (1, 1), (3, 2)]:
        xin = np.arange(np.prod(shape), dtype=np.float32)
        out = ctx.run({"x": xin, "s": np.array(shape, np.int64)})["y"]
        assert out.shape == shape and np.array_equal(out, xin.reshape(shape))


def test_float_shape_input_resize_scales():
    """Resize with its scales a float32 shape input: the profile bounds the
    floats, each run's scales size the output (floor(D * scale))."""
    reg = trt.Registry()
    b = trt.Builder(registry=reg)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (1, 2, 4, 5))
    s = net.add_input("s", trt.float32, (4,))
    fc = trt.PluginFieldCollection([
        trt.PluginField("coordinate_transformation_mode", b"asymmetric",
                        trt.PluginFieldType.CHAR),
        trt.PluginField("nearest_mode", b"floor", trt.PluginFieldType.CHAR),
        trt.PluginField("scales_input", np.array([1], np.int32), trt.PluginFieldType.INT32)])
    plugin = reg.get_creator("Resize", "1", "plugrt").create_plugin("rz", fc)
    y = net.add_plugin_v3([x, s], [s], plugin).get_output(0)
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape_input("s", (1.0, 1.0, 0.5, 0.5), (1.0, 1.0, 2.0, 2.0), (1.0, 1.0, 3.0, 3.0))
    cfg.add_optimization_profile(p)
    engine = b.build_engine_with_config(net, cfg)
    ctx = engine.create_execution_context()
    xin = np.arange(40, dtype=np.float32).reshape(1, 2, 4, 5)
    for sh, sw in [(2.0, 2.0), (1.5, 0.5), (3.0, 1.3), (0.5, 2.5)]:
        out = ctx.run({"x": xin, "s": np.array([1, 1, sh, sw], np.float32)})["y"]
        oh, ow = int(np.floor(4 * np.float32(sh))), int(np.floor(5 * np.float32(sw)))
        rows = np.floor(np.arange(oh) / np.float32(sh)).astype(int)
        cols = np.floor(np.arange(ow) / np.float32(sw)).astype(int)
        assert out.shape == (1, 2, oh, ow)
        assert np.array_equal(out, xin[:, :, rows][:, :, :, cols])
    with pytest.raises(trt.ShapeError) as ei:
        ctx.run({"x": xin, "s": np.array([1, 1, 4.0, 1], np.float32)})
    assert "outside profile" in str(ei.value) and "'s'" in str(ei.value)


def test_registries_are_independent_objects(std_registry):
    a, b = trt.Registry(), trt.Registry()
    a.load_library(trt.PLUGINS_LIBRARY)
    b.load_library(trt.PLUGINS_LIBRARY)  # the same keys in two registries
    assert a.load_library(trt.PLUGINS_LIBRARY) == trt.PLUGINS_LIBRARY  # once per registry
    ca = a.get_creator("CustomHardmax", "1", "")
    assert a.library_of(ca) and os.path.samefile(a.library_of(ca), trt.PLUGINS_LIBRARY)
    with pytest.raises(trt.AlreadyExistsError):
        a.register_creator(b.get_creator("CustomHardmax", "1", ""))
    a.deregister_creator(ca)
    with pytest.raises(trt.NotFoundError):
        a.get_creator("CustomHardmax", "1", "")
    a.register_creator(b.get_creator("CustomHardmax", "1", ""))  # borrowed from b
    assert a.get_plugin_creator("CustomHardmax", "1", "").name == "CustomHardmax"
    b.deregister_library(trt.PLUGINS_LIBRARY)
    with pytest.raises(trt.NotFoundError):
        b.get_creator("NonZeroPlugin", "1", "")
    assert len(a.plugin_creator_list) == 5


def test_python_creator_registered_in_two_registries():
    a, b = trt.Registry(), trt.Registry()
    a.register_creator(PyReshapeCreator())
    b.register_creator(PyReshapeCreator(), "other")
    assert isinstance(a.get_creator("PyReshape", "1", "tests"), PyReshapeCreator)
    assert b.get_creator("PyReshape", "1", "other") is not None
    with pytest.raises(trt.NotFoundError):
        b.get_creator("PyReshape", "1", "tests")


def test_cuda_device_without_cuda_is_a_clear_error():
    cfg = trt.Builder().create_builder_config()
    from plugrt import _capi
    if _capi.fn.device_check(1) == 0:
        pytest.skip("CUDA is usable here")
    with pytest.raises(trt.UnsupportedError) as ei:
        cfg.device = "cuda"
    assert str(ei.value)
    assert cfg.device == trt.Device.CPU
    with pytest.raises(ValueError):
        cfg.device = "tpu"


def test_init_libnvinfer_plugins_loads_the_standard_library():
    assert trt.init_libnvinfer_plugins(trt.Logger(), "")
    names = {c.name for c in trt.get_plugin_registry().all_creators}
    assert {"NonZeroPlugin", "CustomHardmax", "circ_pad_plugin", "AddInPlace", "QuantFC"} <= names


class PyChannelScale(trt.Plugin):
    """y[:, c] = x[:, c] * (c + 1): reads its tensors as LINEAR and accepts
    every format without looking (as a careless plugin might)."""
    plugin_name = "PyChannelScale"
    plugin_namespace = "tests"

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return True

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        x = trt.host_array(inputs[0], input_desc[0])
        c = np.arange(1, x.shape[1] + 1, dtype=np.float32).reshape(1, -1, 1, 1)
        trt.host_array(outputs[0], output_desc[0])[...] = x * c

    def get_fields_to_serialize(self):
        return []


class PyChannelScaleCreator(trt.PluginCreator):
    name, plugin_namespace = "PyChannelScale", "tests"

    def create_plugin(self, name, fc, phase):
        return PyChannelScale()


def test_plugin_blind_to_formats_gets_linear_between_convolutions():
    """Between two pointwise Convs the builder gives tensors the blocked
    CHW8 format; a plugin that accepts any format value (it never reads the
    format) keeps LINEAR, so it computes what it means to."""
    reg = trt.Registry()
    reg.register_creator(PyChannelScaleCreator())
    conv = reg.get_creator("Conv", "1", "plugrt")
    rng = np.random.default_rng(3)
    b = trt.Builder(registry=reg)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (2, 12, 5, 5))
    w1 = rng.standard_normal((12, 12, 1, 1)).astype(np.float32)
    w2 = rng.standard_normal((12, 12, 1, 1)).astype(np.float32)
    fc = trt.PluginFieldCollection([trt.PluginField("kernel_shape", [1, 1],
                                                    trt.PluginFieldType.INT32)])
    t = net.add_plugin_v3([x, net.add_constant(w1.shape, w1).get_output(0)], [],
                          conv.create_plugin("c1", fc)).get_output(0)
    t = net.add_plugin_v3([t], [], PyChannelScale()).get_output(0)
    y = net.add_plugin_v3([t, net.add_constant(w2.shape, w2).get_output(0)], [],
                          conv.create_plugin("c2", fc)).get_output(0)
    y.name = "y"
    net.mark_output(y)
    e = b.build_engine_with_config(net, b.create_builder_config())
    xin = rng.standard_normal((2, 12, 5, 5)).astype(np.float32)
    got = e.create_execution_context().run({"x": xin})["y"]
    mid = np.einsum("mc,nchw->nmhw", w1[:, :, 0, 0], xin)
    mid = mid * np.arange(1, 13, dtype=np.float32).reshape(1, -1, 1, 1)
    want = np.einsum("mc,nchw->nmhw", w2[:, :, 0, 0], mid)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4)


def circ_pad_model(declared):
    """X [2, 3] -> example::circ_pad_plugin (pads [1, 1], giving [2, 5]) -> P,
    which the model declares `declared`."""
    onnx = pytest.importorskip("onnx")
    H, T = onnx.helper, onnx.TensorProto
    node = H.make_node("circ_pad_plugin", ["X"], ["P"], name="pad",
                       plugin_namespace="example", pads=[1, 1])
    g = H.make_graph([node], "g", [H.make_tensor_value_info("X", T.FLOAT, [2, 3])],
                     [H.make_tensor_value_info("P", T.FLOAT, declared)])
    m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def test_onnx_strict(std_registry):
    """A plugin output the model declares otherwise: plugrt.build refuses it
    unless strict=False, as `plugrt build` does; OnnxParser follows
    prt_onnx_parser_set_strict (lenient unless told)."""
    wrong = circ_pad_model([2, 3])
    with pytest.raises(trt.ShapeError) as ei:
        trt.build(wrong, registry=std_registry)
    assert ("layer 'pad' (plugin example::circ_pad_plugin): output 0 ('P') is float32 "
            "[2, 5], but the model declares float32 [2, 3]") in str(ei.value)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    e = trt.build(wrong, registry=std_registry, strict=False)
    p = e.create_execution_context().run({"X": x})["P"]
    assert np.array_equal(p, np.pad(x, ((0, 0), (1, 1)), mode="wrap"))
    assert trt.build(circ_pad_model([2, 5]), registry=std_registry) is not None
    for strict in (False, True):
        b = trt.Builder(None, std_registry)
        net = b.create_network()
        parser = trt.OnnxParser(net, None, std_registry, strict=strict)
        assert parser.strict == strict and parser.parse(wrong)
        cfg = b.create_builder_config()
        if strict:
            with pytest.raises(trt.ShapeError):
                b.build_engine_with_config(net, cfg)
        else:
            assert b.build_engine_with_config(net, cfg) is not None

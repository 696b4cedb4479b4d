"""Every prt_status failure is an exception of its status's class, whose
message is prt_last_error()."""

import numpy as np
import pytest

import plugrt as trt
from plugrt import _capi, _errors


def test_one_class_per_status():
    seen = set()
    for st in range(1, 13):
        cls = _errors.BY_STATUS[st]
        assert issubclass(cls, trt.Error) and cls.status == st
        assert cls not in seen
        seen.add(cls)
        assert cls("m").status_name == _capi.status_name(st)
    assert trt.ShapeError is _errors.BY_STATUS[_capi.PRT_ERR_SHAPE]
    assert issubclass(trt.NotFoundError, LookupError)
    assert issubclass(trt.InvalidArgumentError, ValueError)


def test_message_is_prt_last_error():
    reg = trt.Registry()
    with pytest.raises(trt.NotFoundError) as ei:
        reg.get_creator("NoSuchPlugin", "7", "nowhere")
    assert str(ei.value) == _capi.last_error()
    assert "NoSuchPlugin" in str(ei.value) and "nowhere" in str(ei.value)
    assert ei.value.status == _capi.PRT_ERR_NOT_FOUND
    assert ei.value.status_name == "PRT_ERR_NOT_FOUND"


def test_load_library_errors(tmp_path):
    reg = trt.Registry()
    with pytest.raises(trt.IOError) as ei:
        reg.load_library(str(tmp_path / "missing.so"))
    assert "missing.so" in str(ei.value)
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"\x7fELF not really")
    with pytest.raises(trt.Error):
        reg.load_library(str(bad))


def test_malformed_engine_and_model():
    with pytest.raises(trt.MalformedError):
        trt.Runtime().deserialize_cuda_engine(b"this is not an engine")
    net = trt.Builder().create_network()
    parser = trt.OnnxParser(net, trt.Logger())
    with pytest.raises(trt.MalformedError) as ei:
        parser.parse(b"\x08\x07garbage that is not a ModelProto")
    assert parser.num_errors == 1
    assert parser.get_error(0).desc() == str(ei.value)
    assert parser.get_error(0).code() == _capi.PRT_ERR_MALFORMED
    parser.clear_errors()
    assert parser.num_errors == 0
    with pytest.raises(trt.IOError):
        parser.parse_from_file("/nonexistent/model.onnx")


def test_shape_outside_profile(std_registry):
    b = trt.Builder(registry=std_registry)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1, 4))
    c = std_registry.get_creator("CustomHardmax", "1", "")
    layer = net.add_plugin_v3([x], [], c.create_plugin("h", None))
    net.mark_output(layer.get_output(0))
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1, 4), (2, 4), (8, 4))
    cfg.add_optimization_profile(p)
    ctx = b.build_engine_with_config(net, cfg).create_execution_context()
    with pytest.raises(trt.ShapeError) as ei:
        ctx.set_input_shape("x", (9, 4))
    assert "x" in str(ei.value)
    with pytest.raises(trt.InvalidArgumentError):
        ctx.run({"x": np.zeros((2, 4), np.float64)})
    with pytest.raises(trt.InvalidArgumentError):
        ctx.run({"nope": np.zeros((2, 4), np.float32)})


def test_network_errors():
    net = trt.Builder().create_network()
    net.add_input("x", trt.float32, (2,))
    with pytest.raises(trt.Error):
        net.add_input("x", trt.float32, (2,))  # names are unique
    with pytest.raises(trt.NotFoundError):
        net.get_tensor("nope")
    with pytest.raises(trt.Error):
        trt.Builder().build_serialized_network(net, None)  # no outputs

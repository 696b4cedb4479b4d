"""Plugin libraries carried in the engine (IBuilderConfig.embed_plugins,
TensorRT's setPluginsToSerialize): an engine built from a copy of the
standard library, deleted before loading, loads into an empty registry only
when the runtime allows engine host code, and runs AddInPlace to x + b; a
registry holding a library of the same content hash serves it unasked."""
import os
import shutil

import numpy as np
import pytest

import plugrt as trt


def _build(lib, embed):
    reg = trt.Registry()
    reg.load_library(str(lib))
    b = trt.Builder(registry=reg)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (2, 3))
    bias = net.add_input("b", trt.float32, (2, 3))
    add = reg.get_creator("AddInPlace", "1", "example").create_plugin("add")
    y = net.add_plugin_v3([x, bias], [], add).get_output(0)
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    cfg.autotune = False
    cfg.embed_plugins = embed
    assert cfg.embed_plugins is embed
    data = bytes(b.build_serialized_network(net, cfg))
    return data


def test_embedded_library_runs_only_when_allowed(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    lib = tmp_path / "libcopied.so"
    shutil.copy(trt.PLUGINS_LIBRARY, lib)  # once: a loaded library is never rewritten
    plain = _build(lib, False)
    data = _build(lib, True)
    assert len(data) > len(plain) + os.path.getsize(trt.PLUGINS_LIBRARY) // 2
    os.remove(lib)

    with pytest.raises(trt.UnsupportedError, match="libcopied.so"):
        trt.Runtime(registry=trt.Registry()).deserialize_cuda_engine(data)
    rt = trt.Runtime(registry=trt.Registry())
    rt.engine_host_code_allowed = True
    engine = rt.deserialize_cuda_engine(data)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    b = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    want = x + b
    out = engine.create_execution_context().run({"x": x, "b": b})["y"]
    assert np.array_equal(out, want)
    assert sorted(os.listdir(tmp_path)) == []  # the temporary copy is gone

    # The caller's library of the same hash serves it, with no permission.
    reg = trt.Registry()
    reg.load_library(trt.PLUGINS_LIBRARY)
    same = trt.Runtime(registry=reg).deserialize_cuda_engine(data)
    assert np.array_equal(same.create_execution_context().run({"x": x, "b": b})["y"], want)

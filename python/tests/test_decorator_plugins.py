"""plugrt.plugin: register / impl / autotune, attributes, shape
expressions, size tensors, aliasing, ops, ONNX nodes, saved engines."""

import subprocess
import sys
from typing import List, Tuple

import numpy as np
import numpy.typing as npt
import pytest

import plugrt as trt
import plugrt.plugin as trtp
from plugrt.plugin import _shape

import plugins_for_tests  # noqa: F401 - registers tests::twice
from conftest import HERE


def one_layer(op, in_shape=(-1, 4), dtype=trt.float32, profile=((1, 4), (2, 4), (8, 4)),
              autotune=False):
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", dtype, in_shape)
    layer = net.add_plugin(op(x))
    for i in range(layer.num_outputs):
        layer.get_output(i).name = "y%d" % i
        net.mark_output(layer.get_output(i))
    cfg = b.create_builder_config()
    cfg.autotune = autotune
    if -1 in in_shape:
        p = b.create_optimization_profile()
        p.set_shape("x", *profile)
        cfg.add_optimization_profile(p)
    return b.build_engine_with_config(net, cfg)


def test_shape_expr_arithmetic():
    a, b = _shape.ShapeExpr(6), _shape.ShapeExpr(4)
    assert (a + b).constant_value == 10 and (a - b).constant_value == 2
    assert (a * b).constant_value == 24 and (a // b).constant_value == 1
    assert (3 + a).constant_value == 9 and (20 - a).constant_value == 14
    assert (2 * a).constant_value == 12 and (13 // a).constant_value == 2
    assert (a == 6).constant_value == 1 and (a < b).constant_value == 0
    assert (a > b).constant_value == 1 and (a <= 6).constant_value == 1
    assert (a >= 7).constant_value == 0 and (a != b).constant_value == 1
    assert trtp.cdiv(a, b).constant_value == 2 and trtp.cdiv(7, _shape.ShapeExpr(7)).constant_value == 1
    assert trtp.max(a, b).constant_value == 6 and trtp.min(a, 2).constant_value == 2
    with pytest.raises(ValueError):
        trtp.cdiv(1, 2)
    with pytest.raises(ValueError):
        a // 0
    fake = _shape.ShapeExpr()
    assert (fake + 1).is_fake and not fake.is_constant
    with pytest.raises(TypeError):
        bool(fake == 1)
    st = trtp.size_tensor(a // 2, a)
    assert st.expr().is_size_tensor and st.dtype == trt.int64 and st.is_size_tensor
    d = trtp.from_shape_expr((st.expr(), 2), dtype=trt.int32)
    assert d.ndim == 2 and d.shape_expr[1].constant_value == 2
    al = trtp.TensorDesc((1, 2), trt.float32).aliased()
    with pytest.raises(ValueError):
        al.shape_expr[0] = 3


@trtp.register("tdec::expr_zoo")
def expr_zoo_desc(x: trtp.TensorDesc) -> Tuple[trtp.TensorDesc, trtp.TensorDesc]:
    n, m = x.shape_expr[0], x.shape_expr[1]
    a = trtp.from_shape_expr((n + 1, m * 2 - 1, trtp.cdiv(m, 3), trtp.max(n, m) // 2,
                              trtp.min(n, m), (n < m) + (n >= m) * 10, 7 - n + (n == m)), x.dtype)
    b = trtp.from_shape_expr((2 * n, 12 // m), x.dtype)
    return a, b


@trtp.impl("tdec::expr_zoo")
def expr_zoo_impl(x, outputs, stream):
    for o in outputs:
        np.asarray(o)[...] = 1


@pytest.mark.parametrize("n,m", [(2, 3), (3, 3), (4, 2), (6, 1)])
def test_shape_expressions_reach_the_engine(n, m):
    e = one_layer(trtp.op.tdec.expr_zoo, (-1, -1), profile=((1, 1), (3, 3), (6, 6)))
    out = e.create_execution_context().run({"x": np.zeros((n, m), np.float32)})
    want0 = (n + 1, m * 2 - 1, -(-m // 3), max(n, m) // 2, min(n, m),
             (1 if n < m else 0) + (10 if n >= m else 0), 7 - n + (1 if n == m else 0))
    assert out["y0"].shape == want0
    assert out["y1"].shape == (2 * n, 12 // m)


ATTR_CASES = {
    "i": (int, 7, -3), "f": (float, 0.5, 2.25), "s": (str, "wrap", "x y"),
    "flag": (bool, True, False), "raw": (bytes, b"\x00\x01z", b""),
    "a8": (npt.NDArray[np.int8], np.array([1, -2], np.int8), np.array([127], np.int8)),
    "a16": (npt.NDArray[np.int16], np.array([300], np.int16), np.array([-5, 5], np.int16)),
    "a32": (npt.NDArray[np.int32], np.array([1, 2, 3], np.int32), np.array([7], np.int32)),
    "a64": (npt.NDArray[np.int64], np.array([1 << 40], np.int64), np.array([-1], np.int64)),
    "h": (npt.NDArray[np.float16], np.array([0.5], np.float16), np.array([1.5, 2], np.float16)),
    "f32": (npt.NDArray[np.float32], np.array([1.25], np.float32), np.array([3], np.float32)),
    "f64": (npt.NDArray[np.float64], np.array([1e100], np.float64), np.array([2.0], np.float64)),
    "b": (npt.NDArray[np.bool_], np.array([True, False]), np.array([False])),
}
SEEN_ATTRS = []


def _attrs_register():
    def desc(x: trtp.TensorDesc, i: int, f: float, s: str, flag: bool, raw: bytes,
             a8: npt.NDArray[np.int8], a16: npt.NDArray[np.int16], a32: npt.NDArray[np.int32],
             a64: npt.NDArray[np.int64], h: npt.NDArray[np.float16],
             f32: npt.NDArray[np.float32], f64: npt.NDArray[np.float64],
             b: npt.NDArray[np.bool_]) -> trtp.TensorDesc:
        return x.like()
    trtp.register("tdec::attrs")(desc)

    @trtp.impl("tdec::attrs")
    def impl(x, i, f, s, flag, raw, a8, a16, a32, a64, h, f32, f64, b, outputs, stream):
        SEEN_ATTRS.append(dict(i=i, f=f, s=s, flag=flag, raw=raw, a8=a8, a16=a16, a32=a32,
                               a64=a64, h=h, f32=f32, f64=f64, b=b))
        np.copyto(np.asarray(outputs[0]), np.asarray(x))


_attrs_register()


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("pick", [1, 2])
def test_attributes_of_every_type_survive_save_and_load(tmp_path, pick):
    attrs = {k: v[pick] for k, v in ATTR_CASES.items()}
    e = one_layer(lambda x: trtp.op.tdec.attrs(x, **attrs))
    path = tmp_path / "a.plan"
    e.save(str(path))
    for eng in (e, trt.load(str(path))):
        SEEN_ATTRS.clear()
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        assert np.array_equal(eng.create_execution_context().run({"x": x})["y0"], x)
        got = SEEN_ATTRS[-1]
        for k, v in attrs.items():
            assert _same(got[k], v), (k, got[k], v)


def test_attribute_errors():
    with pytest.raises(TypeError):
        trtp.op.tdec.attrs(None, i=1)  # attributes missing
    with pytest.raises(TypeError):
        trtp.op.tests.twice(None, factor="big")
    with pytest.raises(TypeError):
        trtp.op.tests.twice(None, nope=1)
    with pytest.raises(TypeError):
        @trtp.register("tdec::bad_attr")
        def bad(x: trtp.TensorDesc, d: dict) -> trtp.TensorDesc:
            return x
    with pytest.raises(ValueError):
        trtp.impl("tdec::never_registered")(lambda x, outputs: None)
    with pytest.raises(ValueError):
        trtp.register("tests::twice")(plugins_for_tests.twice_desc)  # twice


def test_default_attribute_and_op():
    e = one_layer(trtp.op.tests.twice)
    x = np.ones((3, 4), np.float32)
    assert np.array_equal(e.create_execution_context().run({"x": x})["y0"], 2 * x)
    e = one_layer(lambda x: trtp.op.tests.twice(x, factor=-0.5))
    assert np.array_equal(e.create_execution_context().run({"x": x})["y0"], -0.5 * x)


@trtp.register("tdec::nonzero")
def nonzero_desc(x: trtp.TensorDesc) -> Tuple[trtp.TensorDesc, trtp.TensorDesc]:
    upper = x.shape_expr[0] * x.shape_expr[1]
    st = trtp.size_tensor(upper // 2, upper)
    return trtp.from_shape_expr((st.expr(), 2), dtype=trt.int32), st


@trtp.impl("tdec::nonzero")
def nonzero_impl(x: trtp.Tensor, outputs: Tuple[trtp.Tensor], stream: int) -> None:
    a = np.asarray(x)
    idx = np.stack(np.nonzero(a), axis=1).astype(np.int32)
    out = np.asarray(outputs[0])  # upper-bound rows; the first K are the result
    assert outputs[0].shape[0] == a.size
    out[:len(idx)] = idx
    np.asarray(outputs[1])[()] = len(idx)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_size_tensor_gives_the_true_shape(rng, dtype):
    e = one_layer(trtp.op.tdec.nonzero, (-1, -1), trt.float16 if dtype == np.float16 else trt.float32,
                  profile=((1, 1), (8, 8), (32, 32)))
    assert e.get_tensor_shape("y0") == (-1, 2) and e.get_tensor_dtype("y1") == trt.int64
    ctx = e.create_execution_context()
    for shape in [(8, 8), (32, 32), (1, 5)]:
        a = rng.random(shape).astype(dtype)
        a[a < 0.6] = 0
        out = ctx.run({"x": a})
        ref = np.stack(np.nonzero(a), axis=1)
        assert np.array_equal(out["y0"], ref) and int(out["y1"]) == len(ref)


@trtp.register("tdec::addip")
def addip_desc(a: trtp.TensorDesc, b: trtp.TensorDesc) -> trtp.TensorDesc:
    return a.aliased()


@trtp.impl("tdec::addip")
def addip_impl(a, b, outputs, stream):
    assert outputs[0].data_ptr == a.data_ptr and outputs[0].get_aliased() is a
    o = np.asarray(outputs[0])
    np.add(o, np.asarray(b), out=o)


def test_aliased_output_is_the_input():
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (5,))
    y = net.add_plugin(trtp.op.tests.twice(x)).get_output(0)
    z = net.add_plugin(trtp.op.tdec.addip(y, x)).get_output(0)
    z.name = "z"
    net.mark_output(z)
    e = b.build_engine_with_config(net)
    xin = np.arange(5, dtype=np.float32)
    assert np.array_equal(e.create_execution_context().run({"x": xin})["z"], 3 * xin)
    # Loaded back, the recreated plugin knows its output is aliased too.
    e2 = trt.Runtime().deserialize_cuda_engine(e.serialize())
    assert np.array_equal(e2.create_execution_context().run({"x": xin})["z"], 3 * xin)


TACTICS_RUN = []


@trtp.register("tdec::tuned")
def tuned_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tdec::tuned")
def tuned_impl(x, outputs, stream, tactic):
    TACTICS_RUN.append((tactic, x.dtype))
    np.copyto(np.asarray(outputs[0]), np.asarray(x))


@trtp.autotune("tdec::tuned")
def tuned_autotune(x: trtp.TensorDesc, outputs) -> List[trtp.AutoTuneCombination]:
    c = trtp.AutoTuneCombination()
    c.pos([0, 1], "FP16")
    c.tactics([3, 5])
    return [trtp.AutoTuneCombination("FP32, FP32", "LINEAR", [1]), c]


@pytest.mark.parametrize("dtype,tactics", [(np.float32, {1}), (np.float16, {3, 5})])
def test_autotune_combinations_and_tactics(dtype, tactics):
    TACTICS_RUN.clear()
    e = one_layer(trtp.op.tdec.tuned, dtype=trt.float16 if dtype == np.float16 else trt.float32,
                  autotune=True)
    # Timed: every tactic declared for the layer's types, and no other (one
    # candidate alone needs no timing).
    ran = {t for t, dt in TACTICS_RUN}
    assert ran == (tactics if len(tactics) > 1 else set()), (tactics, TACTICS_RUN)
    chosen = e.get_layer_info(0)["tactic"]
    assert chosen in tactics
    TACTICS_RUN.clear()
    x = np.ones((2, 4), dtype)
    assert np.array_equal(e.create_execution_context().run({"x": x})["y0"], x)
    assert TACTICS_RUN[-1][0] == chosen


TWO_TACTICS_RUN = []


@trtp.register("tdec::two_tactics")
def two_tactics_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.autotune("tdec::two_tactics")
def two_tactics_autotune(x: trtp.TensorDesc, outputs) -> List[trtp.AutoTuneCombination]:
    return [trtp.AutoTuneCombination("FP32, FP32", "LINEAR", [1, 2])]


@trtp.impl("tdec::two_tactics")
def two_tactics_impl(x, outputs, stream, tactic):
    """TensorRT's style: a branch per declared tactic, nothing else."""
    TWO_TACTICS_RUN.append(tactic)
    if tactic == 1:
        np.multiply(np.asarray(x), 2, out=np.asarray(outputs[0]))
    elif tactic == 2:
        np.add(np.asarray(x), np.asarray(x), out=np.asarray(outputs[0]))


@pytest.mark.parametrize("autotune", [None, False])
def test_only_declared_tactics_run(autotune, rng):
    """build_serialized_network times the declared tactics by default, as
    TensorRT does; with config.autotune = False it takes the first declared.
    impl never gets tactic 0, which it would leave unwritten (it used to:
    no timing by default, and tactic 0 timed as the reference)."""
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1, 4))
    y = net.add_plugin(trtp.op.tdec.two_tactics(x)).get_output(0)
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    assert cfg.autotune is True  # the default
    if autotune is not None:
        cfg.autotune = autotune
    p = b.create_optimization_profile()
    p.set_shape("x", (1, 4), (2, 4), (8, 4))
    cfg.add_optimization_profile(p)
    TWO_TACTICS_RUN.clear()
    e = trt.Runtime().deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    built = set(TWO_TACTICS_RUN)
    chosen = e.get_layer_info(0)["tactic"]
    if autotune is None:
        assert built == {1, 2} and chosen in (1, 2), TWO_TACTICS_RUN
    else:
        assert built == set() and chosen == 1, TWO_TACTICS_RUN
    TWO_TACTICS_RUN.clear()
    xin = rng.standard_normal((3, 4)).astype(np.float32)
    assert np.array_equal(e.create_execution_context().run({"x": xin})["y"], 2 * xin)
    assert TWO_TACTICS_RUN == [chosen]


def test_autotune_combination_strings():
    C = trtp.AutoTuneCombination
    assert C("FP32|FP16, FP32|FP16")._combinations(2) == [
        ((trt.float32, trt.float32), (0, 0)), ((trt.float16, trt.float16), (0, 0))]
    got = {t for t, _ in C("FP32*FP16, FP16")._combinations(2)}
    assert got == {(trt.float32, trt.float16), (trt.float16, trt.float16)}
    got = {t for t, _ in C("FP32|FP16, INT32")._combinations(2)}
    assert got == {(trt.float32, trt.int32), (trt.float16, trt.int32)}
    assert len(C("FP32*FP16, INT32*INT64")._combinations(2)) == 4
    c = C()
    c.pos(0, "FP32|FP16")
    c.pos([1, 2], "INT32")
    assert {t for t, _ in c._combinations(3)} == {(trt.float32, trt.int32, trt.int32),
                                                  (trt.float16, trt.int32, trt.int32)}
    with pytest.raises(ValueError):
        C("FP32|FP16*INT8")
    with pytest.raises(ValueError):
        C("FP99")
    with pytest.raises(ValueError):
        C("FP32|FP16, FP32|FP16|INT8")._combinations(2)
    with pytest.raises(ValueError):
        C("FP32", tactics=[0])


def test_onnx_node_with_plugin_namespace():
    from onnx import TensorProto, helper
    node = helper.make_node("twice", ["x"], ["y"], plugin_namespace="tests", factor=3.0)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    e = trt.build(m.SerializeToString())
    x = np.ones((2, 3), np.float32)
    assert np.array_equal(e.create_execution_context().run({"x": x})["y"], 3 * x)


REG_ERR = {"mode": None}


@trtp.register("tdec::faulty")
def faulty_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    if REG_ERR["mode"] == "register":
        raise ZeroDivisionError("register says no")
    return x.like()


@trtp.impl("tdec::faulty")
def faulty_impl(x, outputs, stream):
    if REG_ERR["mode"] == "impl":
        raise OverflowError("impl says no")
    np.copyto(np.asarray(outputs[0]), np.asarray(x))


@pytest.mark.parametrize("mode,exc", [("register", ZeroDivisionError), ("impl", OverflowError)])
def test_errors_in_decorator_functions(mode, exc):
    REG_ERR["mode"] = mode
    try:
        with pytest.raises(trt.PluginError) as ei:
            e = one_layer(trtp.op.tdec.faulty)
            e.create_execution_context().run({"x": np.ones((2, 4), np.float32)})
        msg = str(ei.value)
        assert "tdec::faulty" in msg and exc.__name__ in msg and ("%s says no" % mode) in msg
        assert ("faulty_%s" % ("desc" if mode == "register" else "impl")) in msg
        assert isinstance(ei.value.__cause__, exc)
    finally:
        REG_ERR["mode"] = None


def test_engine_with_a_decorator_plugin_in_a_fresh_process(tmp_path):
    path = tmp_path / "twice.plan"
    one_layer(lambda x: trtp.op.tests.twice(x, factor=5.0)).save(str(path))
    code = ("import sys, numpy as np, plugrt\nsys.path.insert(0, %r)\n"
            "try:\n    plugrt.load(sys.argv[1])\nexcept plugrt.NotFoundError as e:\n    print(e)\n"
            "import plugins_for_tests\n"
            "e = plugrt.load(sys.argv[1])\n"
            "print(e.create_execution_context().run({'x': np.ones((2, 4), np.float32)})['y0'].sum())"
            % HERE)
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert "tests::twice version 1" in lines[0]
    assert "import module 'plugins_for_tests'" in lines[0]
    assert float(lines[1]) == 40.0


def test_tensor_object():
    buf = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = trtp.Tensor((2, 3), trt.float32, buf.ctypes.data)
    assert t.shape == (2, 3) and t.strides == (3, 1) and t.numel() == 6 and t.ndim == 2
    assert t.data_ptr == buf.ctypes.data and t.dtype == trt.float32
    v = np.asarray(t)
    v[1, 2] = 42
    assert buf[1, 2] == 42
    ro = trtp.Tensor((2, 3), trt.float32, buf.ctypes.data, readonly=True)
    assert not np.asarray(ro).flags.writeable


def test_ndarray_attribute_as_a_type_alias():
    """numpy >= 2.3 spells NDArray as a PEP 695 type alias; its NDArray[X]
    must be read as X like the older generic alias."""
    import typing
    from typing import Any
    TypeAliasType = getattr(typing, "TypeAliasType", None)
    if TypeAliasType is None:
        te = pytest.importorskip("typing_extensions")
        TypeAliasType = getattr(te, "TypeAliasType", None)
        if TypeAliasType is None:
            pytest.skip("no TypeAliasType in typing or typing_extensions")
    from plugrt.plugin._bridge import _ndarray_dtype
    T = typing.TypeVar("T", bound=np.generic)
    alias = TypeAliasType("NDArray", np.ndarray[Any, np.dtype[T]], type_params=(T,))
    assert _ndarray_dtype(alias[np.int32]) == np.dtype(np.int32)
    assert _ndarray_dtype(alias[np.float16]) == np.dtype(np.float16)
    assert _ndarray_dtype(alias[np.complex64]) is None
    assert _ndarray_dtype(np.ndarray[Any, np.dtype[np.int8]]) == np.dtype(np.int8)

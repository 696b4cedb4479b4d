"""Plugins written in Python, through ctypes only, run by plugrt.

Proves that the plugin ABI (plugin.h) can be filled from Python's ctypes:

  - the binding's struct layouts equal the C compiler's (plugin_layout);
  - PyScale (py::PyScale v1, float32 field `scale`): out = in * scale;
    PyConcatRows (py::PyConcatRows v1): out = concat(x, 2 * x) along dim 0,
    whose dim 0 is SUM(d0, d0) built with the expression builder;
  - both creators registered with prt_registry_add_creator; a network with a
    dynamic input and a profile; build, serialize, deserialize (the creator
    recreates PyScale from its serialized field); runs at two shapes against
    numpy, on the built and on the loaded engine;
  - errors: create rejects a wrong-typed field through the host's set_error,
    both when Python calls create and when the engine loader does;
  - every plugin object C was given is destroyed by the end, and no callback
    raised.

Environment: PLUGRT_LIB (libplugrt.so), PLUGRT_LAYOUT (the plugin_layout
program). Prints "N passed, M failed"; exits 1 on any failure.
"""

import ctypes
import os
import subprocess
import sys
import traceback
from ctypes import byref, c_int32, c_size_t, c_void_p, sizeof

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not importable by %s" % sys.executable)
    sys.exit(77)

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plugrt_ctypes as prt  # noqa: E402

passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s" % what)


def section(fn):
    """Runs one group of checks; an exception counts as one failure."""
    global failed
    try:
        fn()
    except Exception:  # noqa: BLE001
        failed += 1
        print("FAIL: %s raised:\n%s" % (fn.__name__, traceback.format_exc()))
    return fn


# ---------------------------------------------------------------------------
# The plugins
# ---------------------------------------------------------------------------

CREATE_CALLS = []   # (plugin, layer name, phase, fields) for every create
SHAPE_NOTES = {}    # what PyConcatRows saw of the expression builder


def supports_f32_same(pos, io, nb_in, nb_out):
    d = io[pos].desc
    return d.format == prt.PRT_FORMAT_LINEAR and d.dtype == prt.PRT_FLOAT32


class PyScale(prt.PythonPlugin):
    NAME, VERSION, NAMESPACE = "PyScale", "1", "py"

    def __init__(self, scale):
        super().__init__()
        self.scale = np.float32(scale)
        # Test hook: serialize `scale` as float64, which create rejects.
        self.serialize_wrong_type = False

    def nb_outputs(self):
        return 1

    def output_dtypes(self, in_types):
        return [in_types[0]]

    def output_shapes(self, inputs, shape_inputs, exprs):
        return [inputs[0]]  # the input's expressions, passed through

    def supports(self, pos, io, nb_in, nb_out):
        return supports_f32_same(pos, io, nb_in, nb_out)

    def fields(self):
        if self.serialize_wrong_type:
            return [("scale", prt.PRT_FIELD_FLOAT64, np.array([self.scale], np.float64))]
        return [("scale", prt.PRT_FIELD_FLOAT32, np.array([self.scale], np.float32))]

    def enqueue(self, ins, outs, in_desc, out_desc):
        np.multiply(ins[0], self.scale, out=outs[0])

    def copy(self):
        c = PyScale(self.scale)
        c.serialize_wrong_type = self.serialize_wrong_type
        return c


def make_scale(layer_name, fields, phase):
    CREATE_CALLS.append(("PyScale", layer_name, phase, fields))
    scale = 1.0
    if "scale" in fields:
        ftype, value = fields["scale"]
        if ftype != prt.PRT_FIELD_FLOAT32 or len(value) != 1:
            # The ABI's error convention: set_error, then return the status.
            prt.host_set_error(
                prt.PRT_ERR_INVALID_ARGUMENT,
                "PyScale: field 'scale' must be float32[1], got type %d length %d"
                % (ftype, len(value)))
            return prt.PRT_ERR_INVALID_ARGUMENT
        scale = float(value[0])
    return PyScale(scale)


class PyConcatRows(prt.PythonPlugin):
    """[N, ...] -> [N + N, ...]: x, then 2 * x."""
    NAME, VERSION, NAMESPACE = "PyConcatRows", "1", "py"

    def nb_outputs(self):
        return 1

    def output_dtypes(self, in_types):
        return [in_types[0]]

    def output_shapes(self, inputs, shape_inputs, exprs):
        d0 = inputs[0][0]
        rows = exprs.op(prt.PRT_DIM_SUM, d0, d0)
        two = exprs.constant(2)
        # Notes for the test: hash-consing, is_constant, NULL on bad operands.
        SHAPE_NOTES["d0"] = d0
        SHAPE_NOTES["rows"] = rows
        SHAPE_NOTES["rows_again"] = exprs.op(prt.PRT_DIM_SUM, d0, d0)
        SHAPE_NOTES["two_const"] = exprs.is_constant(two)
        SHAPE_NOTES["d0_const"] = exprs.is_constant(d0)
        SHAPE_NOTES["div0"] = exprs.op(prt.PRT_DIM_FLOOR_DIV, d0, exprs.constant(0))
        SHAPE_NOTES["null_operand"] = exprs.op(prt.PRT_DIM_SUM, None, d0)
        return [[rows] + inputs[0][1:]]

    def supports(self, pos, io, nb_in, nb_out):
        return supports_f32_same(pos, io, nb_in, nb_out)

    def fields(self):
        return []

    def enqueue(self, ins, outs, in_desc, out_desc):
        n = ins[0].shape[0]
        outs[0][:n] = ins[0]
        np.multiply(ins[0], 2, out=outs[0][n:])

    def copy(self):
        return PyConcatRows()


def make_concat(layer_name, fields, phase):
    CREATE_CALLS.append(("PyConcatRows", layer_name, phase, fields))
    return PyConcatRows()


SCALE_CREATOR = prt.Creator(
    "PyScale", "1", "py",
    [("scale", prt.PRT_FIELD_FLOAT32, 1, "the factor, default 1")], make_scale)
CONCAT_CREATOR = prt.Creator("PyConcatRows", "1", "py", [], make_concat)

SCALE = 2.5


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def new(create_fn, *args):
    h = c_void_p()
    prt.check(create_fn(*args, byref(h)), create_fn.__name__)
    return h


def find_creator(reg, name):
    out = ctypes.POINTER(prt.prt_plugin_creator)()
    prt.check(prt.prt_registry_find_creator(reg, b"py", name, b"1", byref(out)),
              "find_creator")
    return out


def build_engine(reg, scale_plugin, concat_plugin):
    """X [-1, 4] -> PyScale -> Y -> PyConcatRows -> Z; Y and Z outputs;
    one profile [1..8] x 4. The network takes the plugins."""
    net = new(prt.prt_network_create)
    cfg = new(prt.prt_builder_config_create)
    try:
        x, y, z, l0, l1, prof = (c_int32() for _ in range(6))
        prt.check(prt.prt_network_add_input(net, b"X", prt.PRT_FLOAT32,
                                            prt.prt_dims.of([-1, 4]), byref(x)),
                  "add_input")
        prt.check(prt.prt_network_add_plugin(net, byref(x), 1, None, 0,
                                             scale_plugin, byref(l0)), "add PyScale")
        prt.check(prt.prt_network_set_layer_name(net, l0, b"scale"), "layer name")
        prt.check(prt.prt_network_get_layer_output(net, l0, 0, byref(y)), "out 0")
        prt.check(prt.prt_network_add_plugin(net, byref(y), 1, None, 0,
                                             concat_plugin, byref(l1)),
                  "add PyConcatRows")
        prt.check(prt.prt_network_get_layer_output(net, l1, 0, byref(z)), "out 1")
        prt.check(prt.prt_network_set_tensor_name(net, y, b"Y"), "name Y")
        prt.check(prt.prt_network_set_tensor_name(net, z, b"Z"), "name Z")
        prt.check(prt.prt_network_mark_output(net, y), "mark Y")
        prt.check(prt.prt_network_mark_output(net, z), "mark Z")
        prt.check(prt.prt_builder_config_add_profile(cfg, byref(prof)), "profile")
        prt.check(prt.prt_builder_config_set_profile_dims(
            cfg, prof, b"X", prt.prt_dims.of([1, 4]), prt.prt_dims.of([3, 4]),
            prt.prt_dims.of([8, 4])), "profile dims")
        eng = c_void_p()
        st = prt.prt_engine_build(net, cfg, reg, byref(eng))
        return st, eng
    finally:
        prt.prt_builder_config_destroy(cfg)
        prt.prt_network_destroy(net)


def make_plugins(reg, scale_items):
    st, sp = prt.call_create(find_creator(reg, b"PyScale"), "scale",
                             scale_items, prt.PRT_PHASE_BUILD)
    prt.check(st, "create PyScale")
    st, cp = prt.call_create(find_creator(reg, b"PyConcatRows"), "concat", [],
                             prt.PRT_PHASE_BUILD)
    prt.check(st, "create PyConcatRows")
    return sp, cp


def serialize(eng):
    ptr, size = c_void_p(), c_size_t()
    prt.check(prt.prt_engine_serialize(eng, byref(ptr), byref(size)), "serialize")
    try:
        return ctypes.string_at(ptr, size.value)
    finally:
        prt.prt_free(ptr)


def deserialize(reg, data):
    eng = c_void_p()
    buf = ctypes.create_string_buffer(data, len(data))
    st = prt.prt_engine_deserialize(reg, buf, len(data), byref(eng))
    return st, eng


def run(eng, rows, label):
    """Runs the engine on an rows x 4 input; checks Y and Z against numpy."""
    ctx = new(prt.prt_context_create, eng)
    try:
        rng = np.random.default_rng(rows)
        x = rng.standard_normal((rows, 4)).astype(np.float32)
        prt.check(prt.prt_context_set_input_shape(ctx, b"X", prt.prt_dims.of(x.shape)),
                  "set_input_shape")
        yd, zd = prt.prt_dims(), prt.prt_dims()
        prt.check(prt.prt_context_get_tensor_shape(ctx, b"Y", byref(yd)), "shape Y")
        prt.check(prt.prt_context_get_tensor_shape(ctx, b"Z", byref(zd)), "shape Z")
        check(yd.tolist() == [rows, 4], "%s: Y shape %s" % (label, yd.tolist()))
        check(zd.tolist() == [2 * rows, 4], "%s: Z shape %s" % (label, zd.tolist()))
        y = np.full((rows, 4), np.nan, np.float32)
        z = np.full((2 * rows, 4), np.nan, np.float32)
        for name, arr in ((b"X", x), (b"Y", y), (b"Z", z)):
            prt.check(prt.prt_context_set_tensor_address(ctx, name, arr.ctypes.data),
                      "address")
        prt.check(prt.prt_context_enqueue(ctx, None), "enqueue")
        want_y = x * np.float32(SCALE)
        check(np.array_equal(y, want_y), "%s: Y = X * scale" % label)
        check(np.array_equal(z, np.concatenate([want_y, want_y * 2])),
              "%s: Z = concat(Y, 2Y)" % label)
    finally:
        prt.prt_context_destroy(ctx)


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

@section
def test_layout():
    out = subprocess.run([os.environ["PLUGRT_LAYOUT"]], check=True,
                         capture_output=True, text=True).stdout
    bad = prt.layout_mismatches(out)
    for m in bad:
        print("layout: " + m)
    check(not bad, "ctypes layouts equal C's (%d differences)" % len(bad))
    hs = prt.prt_host_services_get().contents
    check(hs.struct_size == sizeof(prt.prt_host_services) and
          hs.abi_version == prt.PRT_PLUGIN_ABI_VERSION and bool(hs.set_error),
          "host services: struct_size %d abi %d" % (hs.struct_size, hs.abi_version))


REG = new(prt.prt_registry_create)


@section
def test_register():
    for c in (SCALE_CREATOR, CONCAT_CREATOR):
        prt.check(prt.prt_registry_add_creator(REG, c.pointer()), "add_creator")
    found = find_creator(REG, b"PyScale")
    check(ctypes.addressof(found.contents) == ctypes.addressof(SCALE_CREATOR.struct),
          "the registry hands back our creator struct")
    check(found.contents.nb_fields == 1 and found.contents.fields[0].name == b"scale",
          "the registry sees the field schema")
    check(prt.prt_registry_add_creator(REG, SCALE_CREATOR.pointer()) ==
          prt.PRT_ERR_ALREADY_EXISTS, "a second PyScale is refused")


@section
def test_create_rejects_wrong_type():
    creator = find_creator(REG, b"PyScale")
    for items, what in (
            ([("scale", prt.PRT_FIELD_INT32, np.array([3], np.int32))], "type 2 length 1"),
            ([("scale", prt.PRT_FIELD_FLOAT32, np.array([1, 2], np.float32))],
             "type 5 length 2")):
        st, p = prt.call_create(creator, "bad", items, prt.PRT_PHASE_BUILD)
        msg = prt.last_error()
        check(st == prt.PRT_ERR_INVALID_ARGUMENT and p is None,
              "create with a bad field fails (%s)" % prt.status_name(st))
        check("field 'scale' must be float32[1], got " + what in msg,
              "prt_last_error() has the plugin's message: %r" % msg)
    # A good create, destroyed through the plugin's own C table.
    st, p = prt.call_create(creator, "good", [], prt.PRT_PHASE_BUILD)
    check(st == prt.PRT_OK and p and prt.LIVE, "create with defaults")
    if p:
        check(prt.LIVE[prt._PluginStruct.from_address(p).id].scale == 1.0,
              "default scale is 1")
        prt.destroy_plugin(p)
    check(not prt.LIVE, "destroy through the table frees the Python object")


ENGINES = {}


@section
def test_build_and_run():
    sp, cp = make_plugins(REG, [("scale", prt.PRT_FIELD_FLOAT32,
                                 np.array([SCALE], np.float32))])
    st, eng = build_engine(REG, sp, cp)
    prt.check(st, "build")
    ENGINES["built"] = eng

    # The expression builder, as PyConcatRows saw it.
    n = SHAPE_NOTES
    check(n.get("rows") and n["rows"] != n["d0"], "SUM(d0, d0) is an expression")
    check(n.get("rows") == n.get("rows_again"), "equal expressions are one object")
    check(n.get("two_const") == (True, 2), "is_constant(constant(2)) = %r"
          % (n.get("two_const"),))
    check(n.get("d0_const") == (False, 0) or n.get("d0_const", (1,))[0] is False,
          "a dynamic dim is not constant: %r" % (n.get("d0_const"),))
    check(n.get("div0") is None, "division by a constant zero gives NULL")
    check(n.get("null_operand") is None, "a NULL operand gives NULL")

    io = prt.prt_io_info(struct_size=ctypes.sizeof(prt.prt_io_info))
    check(prt.prt_engine_io_count(eng) == 3, "three I/O tensors")
    prt.check(prt.prt_engine_get_io(eng, 2, byref(io)), "get_io")
    check(io.name == b"Z" and io.dims.tolist() == [-1, 4],
          "Z is [-1, 4]: %s %s" % (io.name, io.dims.tolist()))
    li = prt.prt_layer_info(struct_size=ctypes.sizeof(prt.prt_layer_info))
    prt.check(prt.prt_engine_get_layer(eng, 0, byref(li)), "get_layer")
    fc = prt.prt_field_collection(li.nb_fields, li.fields)
    fields = prt.read_fields(ctypes.pointer(fc))
    check(li.plugin_name == b"PyScale" and li.plugin_namespace == b"py",
          "layer 0 is py::PyScale")
    check(list(fields) == ["scale"] and fields["scale"][0] == prt.PRT_FIELD_FLOAT32
          and fields["scale"][1].tolist() == [SCALE],
          "the engine stores the serialized field: %r" % (fields,))

    run(eng, 2, "built, 2 rows")
    run(eng, 7, "built, 7 rows")


@section
def test_serialize_deserialize_run():
    data = serialize(ENGINES["built"])
    before = len(CREATE_CALLS)
    st, eng = deserialize(REG, data)
    prt.check(st, "deserialize")
    ENGINES["loaded"] = eng
    runtime_calls = [c for c in CREATE_CALLS[before:] if c[2] == prt.PRT_PHASE_RUNTIME]
    scale_calls = [c for c in runtime_calls if c[0] == "PyScale"]
    check(len(runtime_calls) == 2 and len(scale_calls) == 1,
          "the loader called both creators for the runtime phase")
    if scale_calls:
        _, layer, _, f = scale_calls[0]
        check(layer == "scale" and f["scale"][1].tolist() == [SCALE],
              "PyScale recreated from its serialized field: %r %r" % (layer, f))
    check(serialize(eng) == data, "the loaded engine serializes to the same bytes")
    run(eng, 2, "loaded, 2 rows")
    run(eng, 7, "loaded, 7 rows")
    run(eng, 8, "loaded, 8 rows (profile max)")
    # Outside the profile: the host refuses before any plugin runs.
    ctx = new(prt.prt_context_create, eng)
    st = prt.prt_context_set_input_shape(ctx, b"X", prt.prt_dims.of([9, 4]))
    check(st == prt.PRT_ERR_SHAPE, "9 rows is outside the profile")
    prt.prt_context_destroy(ctx)


@section
def test_loader_rejects_wrong_type():
    """A PyScale that serializes its field as float64: its creator refuses
    those fields through set_error, and the builder, which re-creates every
    plugin from its serialized fields as the loader will, fails the build
    with the plugin's message rather than writing an engine that would not
    load."""
    sp, cp = make_plugins(REG, [("scale", prt.PRT_FIELD_FLOAT32,
                                 np.array([SCALE], np.float32))])
    prt.LIVE[prt._PluginStruct.from_address(sp).id].serialize_wrong_type = True
    st, eng = build_engine(REG, sp, cp)
    msg = prt.last_error()
    check(st != prt.PRT_OK and not eng.value,
          "the build fails: %s" % prt.status_name(st))
    check("field 'scale' must be float32[1], got type 6 length 1" in msg
          and "created again from the fields it serializes" in msg,
          "the build passes the plugin's message on: %r" % msg)


@section
def test_teardown():
    for eng in ENGINES.values():
        prt.prt_engine_destroy(eng)
    ENGINES.clear()
    prt.prt_registry_destroy(REG)
    check(not prt.LIVE, "every plugin object given to C was destroyed (%d left: %s)"
          % (len(prt.LIVE), [type(o).__name__ for o in prt.LIVE.values()]))
    for e in prt.CALLBACK_ERRORS:
        print("callback raised: " + e)
    check(not prt.CALLBACK_ERRORS, "no callback raised")


print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)

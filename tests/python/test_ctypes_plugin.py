"""Plugins written in Python, through ctypes, run by plugrt.

Proves that the plugin ABI (plugin.h) can be served from Python's ctypes and
driven through libplugrt.so's C API as a C host drives it. The ctypes side
is the plugrt Python package's binding (python/src/plugrt: _capi.py's
layouts and prototypes, _plugin.py's C tables over Python plugin classes);
everything else is plain C calls:

  - the binding's struct layouts equal the C compiler's (plugin_layout);
  - PyScale (py::PyScale v1, float32 field `scale`): out = in * scale;
    PyConcatRows (py::PyConcatRows v1): out = concat(x, 2 * x) along dim 0,
    whose dim 0 is SUM(d0, d0) built with the host's expression builder;
  - both creators registered with prt_registry_add_creator and called
    through their C function pointers; a network with a dynamic input and a
    profile; build, serialize, deserialize (the creator recreates PyScale
    from its serialized field); runs at several shapes against numpy, on the
    built and on the loaded engine;
  - errors: create rejects a wrong-typed field through the host's set_error,
    both when Python calls create and when the builder does;
  - every plugin object C was given is destroyed by the end, and no callback
    raised unseen.

Environment (tests/python/CMakeLists.txt): PYTHONPATH (python/src),
PLUGRT_LIBRARY_DIR (the folder of libplugrt.so, where the package looks for
it), PLUGRT_LAYOUT (the plugin_layout program). Prints "N passed, M failed";
exits 1 on any failure.
"""

import ctypes
import os
import subprocess
import sys
import traceback
from ctypes import addressof, byref, c_int32, c_size_t, c_void_p, sizeof

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not importable by %s" % sys.executable)
    sys.exit(77)

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import plugrt as trt  # noqa: E402
from plugrt import _capi as C  # noqa: E402
from plugrt import _errors as E  # noqa: E402
from plugrt._plugin import LIVE, MODULE_FIELD, CreatorBridge  # noqa: E402
from plugrt._types import FieldSet, fields_of, read_fields  # noqa: E402

FLOAT32 = trt.PluginFieldType.FLOAT32
DimOp = trt.DimensionOperation
fn = C.fn

passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s" % what)


def section(f):
    """Runs one group of checks; an exception counts as one failure."""
    global failed
    try:
        f()
    except Exception:  # noqa: BLE001
        failed += 1
        print("FAIL: %s raised:\n%s" % (f.__name__, traceback.format_exc()))
    return f


# ---------------------------------------------------------------------------
# The plugins
# ---------------------------------------------------------------------------

CREATE_CALLS = []   # (plugin, layer name, phase, fields) for every create
SHAPE_NOTES = {}    # what PyConcatRows saw of the expression builder


def float32_linear(d):
    return d.desc.format == trt.TensorFormat.LINEAR and d.desc.type == trt.float32


def constant_value(e):
    """(whether e is a constant, its value or 0), as plugin.h's is_constant
    answers."""
    return (True, e.get_constant_value()) if e.is_constant() else (False, 0)


class PyScale(trt.Plugin):
    plugin_name, plugin_version, plugin_namespace = "PyScale", "1", "py"
    num_outputs = 1

    def __init__(self, scale):
        super().__init__()
        self.scale = np.float32(scale)
        # Test hook: serialize `scale` as float64, which create rejects.
        self.serialize_wrong_type = False

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, exprs):
        return [inputs[0]]  # the input's expressions, passed through

    def supports_format_combination(self, pos, in_out, num_inputs):
        return float32_linear(in_out[pos])

    def get_fields_to_serialize(self):
        if self.serialize_wrong_type:
            f = trt.PluginField("scale", np.array([self.scale], np.float64),
                                trt.PluginFieldType.FLOAT64)
        else:
            f = trt.PluginField("scale", np.array([self.scale], np.float32), FLOAT32)
        return trt.PluginFieldCollection([f])

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        np.multiply(trt.host_array(inputs[0], input_desc[0]), self.scale,
                    out=trt.host_array(outputs[0], output_desc[0]))


class ScaleCreator(trt.IPluginCreatorV3One):
    name, plugin_version, plugin_namespace = "PyScale", "1", "py"
    field_names = trt.PluginFieldCollection(
        [trt.PluginField("scale", np.array([1], np.float32), FLOAT32)])

    def create_plugin(self, name, fc, phase):
        CREATE_CALLS.append(("PyScale", name, phase, fc))
        scale = 1.0
        f = fc.get("scale")
        if f is not None:
            if f.type != FLOAT32 or len(f.data) != 1:
                # The ABI's error convention through the binding: C gets
                # the status the error names, its message through set_error.
                raise trt.InvalidArgumentError(
                    "PyScale: field 'scale' must be float32[1], got type "
                    "%d length %d" % (f.type, len(f.data)))
            scale = float(f.data[0])
        return PyScale(scale)


class PyConcatRows(trt.Plugin):
    """[N, ...] -> [N + N, ...]: x, then 2 * x."""
    plugin_name, plugin_version, plugin_namespace = "PyConcatRows", "1", "py"
    num_outputs = 1

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, exprs):
        d0 = inputs[0][0]
        rows = exprs.operation(DimOp.SUM, d0, d0)
        two = exprs.constant(2)
        # Notes for the test: hash-consing, is_constant, NULL on bad operands.
        SHAPE_NOTES["d0"] = d0
        SHAPE_NOTES["rows"] = rows
        SHAPE_NOTES["rows_again"] = exprs.operation(DimOp.SUM, d0, d0)
        SHAPE_NOTES["two_const"] = constant_value(two)
        SHAPE_NOTES["d0_const"] = constant_value(d0)
        try:
            SHAPE_NOTES["div0"] = exprs.operation(DimOp.FLOOR_DIV, d0, exprs.constant(0))
        except trt.InvalidArgumentError:  # what the binding makes of the host's NULL
            SHAPE_NOTES["div0"] = None
        # The binding never passes a NULL operand: ask the host's builder
        # through its C table.
        eb = C.prt_expr_builder.from_address(exprs._addr)
        SHAPE_NOTES["null_operand"] = eb.operation(exprs._addr, int(DimOp.SUM), None,
                                                   d0._p)
        return [[rows] + list(inputs[0][1:])]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return float32_linear(in_out[pos])

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        x = trt.host_array(inputs[0], input_desc[0])
        out = trt.host_array(outputs[0], output_desc[0])
        n = x.shape[0]
        out[:n] = x
        np.multiply(x, 2, out=out[n:])


class ConcatCreator(trt.IPluginCreatorV3One):
    name, plugin_version, plugin_namespace = "PyConcatRows", "1", "py"

    def create_plugin(self, name, fc, phase):
        CREATE_CALLS.append(("PyConcatRows", name, phase, fc))
        return PyConcatRows()


# The prt_plugin_creator structs C sees.
SCALE_CREATOR = CreatorBridge(ScaleCreator())
CONCAT_CREATOR = CreatorBridge(ConcatCreator())

SCALE = 2.5


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def new(create_fn, *args):
    h = c_void_p()
    E.call(create_fn, *args, byref(h))
    return h.value


def find_creator(reg, name):
    """The registry's creator for py::<name> v1, seen from C (whatever
    language serves it): its create goes through the C function pointer."""
    out = c_void_p()
    E.call(fn.registry_find_creator, reg, b"py", name, b"1", byref(out))
    return out.value


def create(reg, name, layer_name, fields):
    return trt.CCreator(find_creator(reg, name)).create_plugin(
        layer_name, trt.PluginFieldCollection(fields), trt.TensorRTPhase.BUILD)


def c_create(reg, name, layer_name, fields):
    """The creator's create called as C calls it: (status, plugin address).
    A Python creator that raised has told C through set_error; the record
    the package keeps to re-raise it in Python is dropped, as C is the
    caller here."""
    cc = trt.CCreator(find_creator(reg, name))
    fs = FieldSet(fields_of(trt.PluginFieldCollection(fields)))
    out = c_void_p()
    mark = len(E.pending())
    st = cc._c.create(cc._addr, layer_name.encode(), fs.address,
                      int(trt.TensorRTPhase.BUILD), addressof(out))
    del E.pending()[mark:]
    return st, out.value


def scale_field(value, ftype=FLOAT32, dtype=np.float32):
    return trt.PluginField("scale", np.array(value, dtype), ftype)


def build_engine(reg, scale_plugin, concat_plugin):
    """X [-1, 4] -> PyScale -> Y -> PyConcatRows -> Z; Y and Z outputs;
    one profile [1..8] x 4. The network takes the plugins."""
    net = new(fn.network_create)
    cfg = new(fn.builder_config_create)
    try:
        x, y, z, l0, l1, prof = (c_int32() for _ in range(6))
        E.call(fn.network_add_input, net, b"X", int(trt.float32), C.prt_dims.of([-1, 4]),
               byref(x))
        E.call(fn.network_add_plugin, net, byref(x), 1, None, 0, scale_plugin._take(),
               byref(l0))
        E.call(fn.network_set_layer_name, net, l0, b"scale")
        E.call(fn.network_get_layer_output, net, l0, 0, byref(y))
        E.call(fn.network_add_plugin, net, byref(y), 1, None, 0, concat_plugin._take(),
               byref(l1))
        E.call(fn.network_get_layer_output, net, l1, 0, byref(z))
        E.call(fn.network_set_tensor_name, net, y, b"Y")
        E.call(fn.network_set_tensor_name, net, z, b"Z")
        E.call(fn.network_mark_output, net, y)
        E.call(fn.network_mark_output, net, z)
        E.call(fn.builder_config_add_profile, cfg, byref(prof))
        E.call(fn.builder_config_set_profile_dims, cfg, prof, b"X", C.prt_dims.of([1, 4]),
               C.prt_dims.of([3, 4]), C.prt_dims.of([8, 4]))
        return new(fn.engine_build, net, cfg, reg)
    finally:
        fn.builder_config_destroy(cfg)
        fn.network_destroy(net)


def make_plugins(reg, scale_fields):
    return (create(reg, b"PyScale", "scale", scale_fields),
            create(reg, b"PyConcatRows", "concat", []))


def serialize(eng):
    ptr, size = c_void_p(), c_size_t()
    E.call(fn.engine_serialize, eng, byref(ptr), byref(size))
    try:
        return ctypes.string_at(ptr, size.value)
    finally:
        fn.free(ptr)


def deserialize(reg, data):
    buf = ctypes.create_string_buffer(data, len(data))
    return new(fn.engine_deserialize, reg, buf, len(data))


def run(eng, rows, label):
    """Runs the engine on an rows x 4 input; checks Y and Z against numpy."""
    ctx = new(fn.context_create, eng)
    try:
        rng = np.random.default_rng(rows)
        x = rng.standard_normal((rows, 4)).astype(np.float32)
        E.call(fn.context_set_input_shape, ctx, b"X", C.prt_dims.of(x.shape))
        yd, zd = C.prt_dims(), C.prt_dims()
        E.call(fn.context_get_tensor_shape, ctx, b"Y", byref(yd))
        E.call(fn.context_get_tensor_shape, ctx, b"Z", byref(zd))
        check(yd.totuple() == (rows, 4), "%s: Y shape %s" % (label, yd.totuple()))
        check(zd.totuple() == (2 * rows, 4), "%s: Z shape %s" % (label, zd.totuple()))
        y = np.full((rows, 4), np.nan, np.float32)
        z = np.full((2 * rows, 4), np.nan, np.float32)
        for name, arr in ((b"X", x), (b"Y", y), (b"Z", z)):
            E.call(fn.context_set_tensor_address, ctx, name, arr.ctypes.data)
        E.call(fn.context_enqueue, ctx, None)
        want_y = x * np.float32(SCALE)
        check(np.array_equal(y, want_y), "%s: Y = X * scale" % label)
        check(np.array_equal(z, np.concatenate([want_y, want_y * 2])),
              "%s: Z = concat(Y, 2Y)" % label)
    finally:
        fn.context_destroy(ctx)


def layout_mismatches(layout_text):
    """Compares `plugin_layout` output with the binding's structs; returns a
    list of differences (empty when every size, alignment and offset
    agrees)."""
    bad = []
    seen = set()
    lines = [l.split() for l in layout_text.splitlines() if l.strip()]
    for parts in lines:
        if parts[0] == "S":
            name, size, align = parts[1], int(parts[2]), int(parts[3])
            cls = C.STRUCTS.get(name)
            if cls is None:
                bad.append("%s: not in the binding" % name)
                continue
            seen.add(name)
            if sizeof(cls) != size or ctypes.alignment(cls) != align:
                bad.append("%s: C size/align %d/%d, ctypes %d/%d" % (
                    name, size, align, sizeof(cls), ctypes.alignment(cls)))
            nfields = sum(1 for p in lines if p[0] == "F" and p[1].startswith(name + "."))
            if nfields != len(cls._fields_):
                bad.append("%s: C lists %d fields, ctypes has %d" % (
                    name, nfields, len(cls._fields_)))
        elif parts[0] == "F":
            sname, fname = parts[1].split(".", 1)
            cls = C.STRUCTS.get(sname)
            if cls is None:
                continue
            desc = getattr(cls, fname, None)
            if desc is None:
                bad.append("%s.%s: not in the binding" % (sname, fname))
            elif desc.offset != int(parts[2]):
                bad.append("%s.%s: C offset %s, ctypes %d" % (
                    sname, fname, parts[2], desc.offset))
    for name in C.STRUCTS:
        if name not in seen:
            bad.append("%s: not checked against C" % name)
    return bad


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

@section
def test_layout():
    out = subprocess.run([os.environ["PLUGRT_LAYOUT"]], check=True,
                         capture_output=True, text=True).stdout
    bad = layout_mismatches(out)
    for m in bad:
        print("layout: " + m)
    check(not bad, "ctypes layouts equal C's (%d differences)" % len(bad))
    hs = fn.host_services_get().contents
    check(hs.struct_size == sizeof(C.prt_host_services) and
          hs.abi_version == C.PRT_PLUGIN_ABI_VERSION and bool(hs.set_error),
          "host services: struct_size %d abi %d" % (hs.struct_size, hs.abi_version))


REG = new(fn.registry_create)


@section
def test_register():
    for c in (SCALE_CREATOR, CONCAT_CREATOR):
        E.call(fn.registry_add_creator, REG, c.addr)
    found = find_creator(REG, b"PyScale")
    check(found == SCALE_CREATOR.addr, "the registry hands back our creator struct")
    fc = C.prt_plugin_creator.from_address(found)
    check(fc.nb_fields == 1 and fc.fields[0].name == b"scale",
          "the registry sees the field schema")
    check(fn.registry_add_creator(REG, SCALE_CREATOR.addr) == C.PRT_ERR_ALREADY_EXISTS,
          "a second PyScale is refused")


@section
def test_create_rejects_wrong_type():
    for f, what in ((scale_field([3], trt.PluginFieldType.INT32, np.int32),
                     "type 2 length 1"),
                    (scale_field([1, 2]), "type 5 length 2")):
        st, p = c_create(REG, b"PyScale", "bad", [f])
        msg = C.last_error()
        check(st == C.PRT_ERR_INVALID_ARGUMENT and not p,
              "create with a bad field fails (%s)" % C.status_name(st))
        check("field 'scale' must be float32[1], got " + what in msg,
              "prt_last_error() has the plugin's message: %r" % msg)
    # A good create, destroyed through the plugin's own C table.
    p = create(REG, b"PyScale", "good", [])
    check(p._addr in LIVE, "create with defaults")
    check(LIVE[p._addr].plugin.scale == 1.0, "default scale is 1")
    p.destroy()
    check(not LIVE, "destroy through the table frees the Python object")


ENGINES = {}


@section
def test_build_and_run():
    sp, cp = make_plugins(REG, [scale_field([SCALE])])
    eng = ENGINES["built"] = build_engine(REG, sp, cp)

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

    io = C.struct_of(C.prt_io_info)
    check(fn.engine_io_count(eng) == 3, "three I/O tensors")
    E.call(fn.engine_get_io, eng, 2, byref(io))
    check(io.name == b"Z" and io.dims.totuple() == (-1, 4),
          "Z is [-1, 4]: %s %s" % (io.name, io.dims.totuple()))
    li = C.struct_of(C.prt_layer_info)
    E.call(fn.engine_get_layer, eng, 0, byref(li))
    fc = C.prt_field_collection(li.nb_fields, li.fields)
    fields = read_fields(addressof(fc))
    check(li.plugin_name == b"PyScale" and li.plugin_namespace == b"py",
          "layer 0 is py::PyScale")
    # Beside the plugin's field, the binding stores the module that defines
    # the plugin (creators never see it).
    check([f.name for f in fields] == ["scale", MODULE_FIELD]
          and fields["scale"].type == FLOAT32 and fields["scale"].data.tolist() == [SCALE],
          "the engine stores the serialized field: %r" % (fields,))

    run(eng, 2, "built, 2 rows")
    run(eng, 7, "built, 7 rows")


@section
def test_serialize_deserialize_run():
    data = serialize(ENGINES["built"])
    before = len(CREATE_CALLS)
    eng = ENGINES["loaded"] = deserialize(REG, data)
    runtime_calls = [c for c in CREATE_CALLS[before:] if c[2] == C.PRT_PHASE_RUNTIME]
    scale_calls = [c for c in runtime_calls if c[0] == "PyScale"]
    check(len(runtime_calls) == 2 and len(scale_calls) == 1,
          "the loader called both creators for the runtime phase")
    if scale_calls:
        _, layer, _, f = scale_calls[0]
        check(layer == "scale" and f["scale"].data.tolist() == [SCALE],
              "PyScale recreated from its serialized field: %r %r" % (layer, f))
    check(serialize(eng) == data, "the loaded engine serializes to the same bytes")
    run(eng, 2, "loaded, 2 rows")
    run(eng, 7, "loaded, 7 rows")
    run(eng, 8, "loaded, 8 rows (profile max)")
    # Outside the profile: the host refuses before any plugin runs.
    ctx = new(fn.context_create, eng)
    st = fn.context_set_input_shape(ctx, b"X", C.prt_dims.of([9, 4]))
    check(st == C.PRT_ERR_SHAPE, "9 rows is outside the profile")
    fn.context_destroy(ctx)


@section
def test_loader_rejects_wrong_type():
    """A PyScale that serializes its field as float64: its creator refuses
    those fields through set_error, and the builder, which re-creates every
    plugin from its serialized fields as the loader will, fails the build
    with the plugin's message rather than writing an engine that would not
    load."""
    sp, cp = make_plugins(REG, [scale_field([SCALE])])
    LIVE[sp._addr].plugin.serialize_wrong_type = True
    st, eng = C.PRT_OK, None
    try:
        eng = build_engine(REG, sp, cp)
    except trt.Error as e:
        st = e.status
    msg = C.last_error()
    check(st != C.PRT_OK and not eng, "the build fails: %s" % C.status_name(st))
    check("field 'scale' must be float32[1], got type 6 length 1" in msg
          and "created again from the fields it serializes" in msg,
          "the build passes the plugin's message on: %r" % msg)


@section
def test_teardown():
    for eng in ENGINES.values():
        fn.engine_destroy(eng)
    ENGINES.clear()
    fn.registry_destroy(REG)
    check(not LIVE, "every plugin object given to C was destroyed (%d left: %s)"
          % (len(LIVE), [type(b.plugin).__name__ for b in LIVE.values()]))
    # A callback that raised during a call made through E.call failed that
    # call; one raised during any other call would be left here.
    for exc, m in E.pending():
        print("callback raised: " + m)
    check(not E.pending(), "no callback raised")


print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)

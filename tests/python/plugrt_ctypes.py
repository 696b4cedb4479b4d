"""A small ctypes binding of libplugrt.so and of the plugin ABI (plugin.h).

Everything here is plain ctypes: the structs of plugin.h and plugrt.h, the
public functions the Python test needs, and a thin layer that fills the
plugin function tables from Python objects:

  - PythonPlugin: subclass it; one set of C tables per subclass.
  - Creator: a prt_plugin_creator whose create() calls a Python function.

Lifetimes. C holds raw pointers to the tables, to the callbacks (CFUNCTYPE
thunks), to the strings the tables return, to plugin objects and to the
fields a plugin serializes. Python must keep all of them alive:

  - the CFUNCTYPE thunks and the tables are module globals / class
    attributes, never freed (like a C plugin's static tables);
  - a C-visible plugin object is a ctypes struct _PluginStruct
    {prt_plugin base; int64 id;} that lives in LIVE[id] together with its
    Python object from its creation until C calls destroy() on it;
  - strings returned by name()/version()/plugin_namespace() are per-class
    buffers; the field collection returned by get_fields_to_serialize() and
    its buffers are held by the plugin until the next call or destroy().

A callback that raises is caught: the exception goes to CALLBACK_ERRORS, the
host's set_error gets its text, and C sees PRT_ERR_PLUGIN (or NULL / 0).
Nothing may propagate through a ctypes thunk: ctypes would print it and
return 0, which C reads as success.
"""

import ctypes
import itertools
import os
import traceback
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int8, c_int32,
                    c_int64, c_size_t, c_uint32, c_uint64, c_void_p, sizeof)

import numpy as np

# ---------------------------------------------------------------------------
# Constants (plugin.h)
# ---------------------------------------------------------------------------

PRT_PLUGIN_ABI_VERSION = 1
PRT_MAX_DIMS = 8

(PRT_OK, PRT_ERR_INVALID_ARGUMENT, PRT_ERR_OUT_OF_MEMORY, PRT_ERR_NOT_FOUND,
 PRT_ERR_ALREADY_EXISTS, PRT_ERR_UNSUPPORTED, PRT_ERR_MALFORMED, PRT_ERR_VERSION,
 PRT_ERR_SHAPE, PRT_ERR_PLUGIN, PRT_ERR_IO, PRT_ERR_STATE,
 PRT_ERR_INTERNAL) = range(13)

(PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8, PRT_UINT8, PRT_INT32,
 PRT_INT64, PRT_BOOL) = range(8)
PRT_FORMAT_LINEAR = 0
PRT_DEVICE_CPU, PRT_DEVICE_CUDA = 0, 1

(PRT_FIELD_INT8, PRT_FIELD_INT16, PRT_FIELD_INT32, PRT_FIELD_INT64,
 PRT_FIELD_FLOAT16, PRT_FIELD_FLOAT32, PRT_FIELD_FLOAT64, PRT_FIELD_BFLOAT16,
 PRT_FIELD_CHAR, PRT_FIELD_DIMS, PRT_FIELD_BYTES) = range(11)

PRT_SEV_ERROR, PRT_SEV_WARNING, PRT_SEV_INFO, PRT_SEV_VERBOSE = range(4)

(PRT_DIM_SUM, PRT_DIM_PROD, PRT_DIM_MAX, PRT_DIM_MIN, PRT_DIM_SUB,
 PRT_DIM_EQUAL, PRT_DIM_LESS, PRT_DIM_FLOOR_DIV, PRT_DIM_CEIL_DIV) = range(9)

PRT_PHASE_BUILD, PRT_PHASE_RUNTIME = 0, 1

DTYPE_TO_NUMPY = {
    PRT_FLOAT32: np.float32, PRT_FLOAT16: np.float16, PRT_INT8: np.int8,
    PRT_UINT8: np.uint8, PRT_INT32: np.int32, PRT_INT64: np.int64,
    PRT_BOOL: np.bool_,
}

# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------


class prt_dims(Structure):
    _fields_ = [("nb_dims", c_int32), ("d", c_int64 * PRT_MAX_DIMS)]

    @classmethod
    def of(cls, shape):
        d = cls()
        d.nb_dims = len(shape)
        for i, v in enumerate(shape):
            d.d[i] = v
        return d

    def tolist(self):
        return [self.d[i] for i in range(self.nb_dims)]


class prt_tensor_desc(Structure):
    _fields_ = [("dtype", c_int32), ("format", c_int32), ("dims", prt_dims),
                ("dims_device", POINTER(c_int64)), ("reserved", c_void_p * 2)]


class prt_dynamic_tensor_desc(Structure):
    _fields_ = [("desc", prt_tensor_desc), ("min", prt_dims), ("opt", prt_dims),
                ("max", prt_dims)]


class prt_field(Structure):
    _fields_ = [("name", c_char_p), ("data", c_void_p), ("type", c_int32),
                ("length", c_int64)]


class prt_field_collection(Structure):
    _fields_ = [("nb_fields", c_int32), ("fields", POINTER(prt_field))]


class prt_field_schema(Structure):
    _fields_ = [("name", c_char_p), ("type", c_int32), ("length", c_int64),
                ("doc", c_char_p)]


HOST_LOG_FN = CFUNCTYPE(None, c_void_p, c_int32, c_char_p)
HOST_SET_ERROR_FN = CFUNCTYPE(None, c_void_p, c_int32, c_char_p)
# prt_range_fn: void (*)(void *arg, int64_t begin, int64_t end)
RANGE_FN = CFUNCTYPE(None, c_void_p, c_int64, c_int64)
HOST_PARALLEL_FOR_FN = CFUNCTYPE(None, c_void_p, c_int64, c_int64, RANGE_FN, c_void_p)
HOST_INT_FN = CFUNCTYPE(c_int32, c_void_p)


class prt_host_services(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("host", c_void_p), ("log", HOST_LOG_FN),
                ("set_error", HOST_SET_ERROR_FN),
                ("parallel_for", HOST_PARALLEL_FOR_FN),
                ("nb_threads", HOST_INT_FN), ("thread_index", HOST_INT_FN)]


# const prt_expr * is an opaque pointer: c_void_p (an int, or None for NULL).
class prt_dim_exprs(Structure):
    _fields_ = [("nb_dims", c_int32), ("d", c_void_p * PRT_MAX_DIMS)]


class prt_expr_builder(Structure):
    pass  # self-referential: fields below


EB_CONSTANT_FN = CFUNCTYPE(c_void_p, POINTER(prt_expr_builder), c_int64)
EB_OPERATION_FN = CFUNCTYPE(c_void_p, POINTER(prt_expr_builder), c_int32,
                            c_void_p, c_void_p)
EB_DECLARE_SIZE_FN = CFUNCTYPE(c_void_p, POINTER(prt_expr_builder), c_int32,
                               c_void_p, c_void_p)
EB_IS_CONSTANT_FN = CFUNCTYPE(c_int32, POINTER(prt_expr_builder), c_void_p,
                              POINTER(c_int64))
prt_expr_builder._fields_ = [
    ("struct_size", c_uint32), ("abi_version", c_uint32),
    ("constant", EB_CONSTANT_FN), ("operation", EB_OPERATION_FN),
    ("declare_size_tensor", EB_DECLARE_SIZE_FN),
    ("is_constant", EB_IS_CONSTANT_FN), ("host", c_void_p)]

# Plugin entries take the plugin as a plain address (c_void_p): the Python
# side finds its object from the id stored after the prt_plugin header.
# Entries returning a string or a pointer return c_void_p, not c_char_p or a
# POINTER type: a ctypes callback cannot return a c_char_p safely (the bytes
# object would die on return), so they return the address of a buffer that
# Python keeps alive.
P = c_void_p
CORE_STR_FN = CFUNCTYPE(c_void_p, P)
CORE_DEVICES_FN = CFUNCTYPE(c_uint32, P)


class prt_plugin_core(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("name", CORE_STR_FN), ("version", CORE_STR_FN),
                ("plugin_namespace", CORE_STR_FN), ("devices", CORE_DEVICES_FN)]


NB_OUTPUTS_FN = CFUNCTYPE(c_int32, P)
GET_OUTPUT_DTYPES_FN = CFUNCTYPE(c_int32, P, POINTER(c_int32), c_int32,
                                 POINTER(c_int32), c_int32)
GET_OUTPUT_SHAPES_FN = CFUNCTYPE(c_int32, P, POINTER(prt_dim_exprs), c_int32,
                                 POINTER(prt_dim_exprs), c_int32,
                                 POINTER(prt_dim_exprs), c_int32,
                                 POINTER(prt_expr_builder))
SUPPORTS_FN = CFUNCTYPE(c_int32, P, c_int32, POINTER(prt_dynamic_tensor_desc),
                        c_int32, c_int32)
CONFIGURE_FN = CFUNCTYPE(c_int32, P, POINTER(prt_dynamic_tensor_desc), c_int32,
                         POINTER(prt_dynamic_tensor_desc), c_int32)
WORKSPACE_FN = CFUNCTYPE(c_int32, P, POINTER(prt_dynamic_tensor_desc), c_int32,
                         POINTER(prt_dynamic_tensor_desc), c_int32,
                         POINTER(c_int64))
TACTICS_FN = CFUNCTYPE(c_int32, P, POINTER(c_int32), c_int32, POINTER(c_int32))
ALIASED_FN = CFUNCTYPE(c_int32, P, c_int32)
OUTPUT_VALUES_FN = CFUNCTYPE(c_int32, P, POINTER(prt_dim_exprs),
                             POINTER(prt_dim_exprs), c_int32,
                             POINTER(prt_dim_exprs), c_int32,
                             POINTER(prt_expr_builder))


REQUIRES_HOST_DIMS_FN = CFUNCTYPE(c_int32, P, c_int32)


class prt_plugin_build(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("nb_outputs", NB_OUTPUTS_FN),
                ("get_output_dtypes", GET_OUTPUT_DTYPES_FN),
                ("get_output_shapes", GET_OUTPUT_SHAPES_FN),
                ("supports_format_combination", SUPPORTS_FN),
                ("configure", CONFIGURE_FN),
                ("get_workspace_size", WORKSPACE_FN),
                ("get_valid_tactics", TACTICS_FN),
                ("get_aliased_input", ALIASED_FN),
                ("get_output_values", OUTPUT_VALUES_FN),
                ("requires_host_dims", REQUIRES_HOST_DIMS_FN)]


SET_TACTIC_FN = CFUNCTYPE(c_int32, P, c_int32)
ON_SHAPE_CHANGE_FN = CFUNCTYPE(c_int32, P, POINTER(prt_tensor_desc), c_int32,
                               POINTER(prt_tensor_desc), c_int32)
ENQUEUE_FN = CFUNCTYPE(c_int32, P, POINTER(prt_tensor_desc),
                       POINTER(prt_tensor_desc), POINTER(c_void_p),
                       POINTER(c_void_p), c_void_p, c_int32, c_void_p)
ATTACH_FN = CFUNCTYPE(c_void_p, P, c_void_p)
GET_FIELDS_FN = CFUNCTYPE(c_void_p, P)
CLONE_FN = CFUNCTYPE(c_void_p, P)
DESTROY_FN = CFUNCTYPE(None, P)


class prt_plugin_runtime(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("set_tactic", SET_TACTIC_FN),
                ("on_shape_change", ON_SHAPE_CHANGE_FN),
                ("enqueue", ENQUEUE_FN),
                ("attach_to_context", ATTACH_FN),
                ("get_fields_to_serialize", GET_FIELDS_FN),
                ("clone", CLONE_FN), ("destroy", DESTROY_FN)]


class prt_plugin_vtable(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("core", POINTER(prt_plugin_core)),
                ("build", POINTER(prt_plugin_build)),
                ("runtime", POINTER(prt_plugin_runtime))]


class prt_plugin(Structure):
    _fields_ = [("vt", POINTER(prt_plugin_vtable))]


class prt_plugin_creator(Structure):
    pass  # self-referential: fields below


CREATE_FN = CFUNCTYPE(c_int32, POINTER(prt_plugin_creator), c_char_p,
                      POINTER(prt_field_collection), c_int32, POINTER(c_void_p))
prt_plugin_creator._fields_ = [
    ("struct_size", c_uint32), ("abi_version", c_uint32), ("name", c_char_p),
    ("version", c_char_p), ("plugin_namespace", c_char_p),
    ("nb_fields", c_int32), ("fields", POINTER(prt_field_schema)),
    ("create", CREATE_FN), ("user", c_void_p)]


class prt_plugin_library(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("name", c_char_p), ("version", c_char_p),
                ("nb_creators", c_int32),
                ("creators", POINTER(POINTER(prt_plugin_creator)))]


class prt_io_info(Structure):
    _fields_ = [("struct_size", c_uint32), ("location", c_int32),
                ("name", c_char_p), ("is_input", c_int32), ("dtype", c_int32),
                ("format", c_int32), ("dims", prt_dims),
                ("data_dependent_mask", c_uint32), ("is_size_tensor", c_int32),
                ("is_shape_input", c_int32)]


class prt_layer_info(Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("plugin_namespace", c_char_p),
                ("plugin_name", c_char_p), ("plugin_version", c_char_p),
                ("library", c_char_p), ("library_hash", c_uint64),
                ("tactic", c_int32), ("workspace", c_int64),
                ("nb_inputs", c_int32), ("inputs", POINTER(c_int32)),
                ("nb_outputs", c_int32), ("outputs", POINTER(c_int32)),
                ("alias_input", POINTER(c_int32)),
                ("nb_fields", c_int32), ("fields", POINTER(prt_field)),
                ("skipped", c_int32)]


# Every struct above, by its C name: the layout check compares them with the
# C compiler's layout (plugin_layout.c).
STRUCTS = {cls.__name__: cls for cls in (
    prt_dims, prt_tensor_desc, prt_dynamic_tensor_desc, prt_field,
    prt_field_collection, prt_field_schema, prt_host_services, prt_dim_exprs,
    prt_expr_builder, prt_plugin_core, prt_plugin_build, prt_plugin_runtime,
    prt_plugin_vtable, prt_plugin, prt_plugin_creator, prt_plugin_library,
    prt_io_info, prt_layer_info)}


def layout_mismatches(layout_text):
    """Compares `plugin_layout` output with ctypes; returns a list of
    differences (empty when every size, alignment and offset agrees)."""
    bad = []
    seen = set()
    for line in layout_text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "S":
            name, size, align = parts[1], int(parts[2]), int(parts[3])
            cls = STRUCTS.get(name)
            if cls is None:
                bad.append("%s: not in the binding" % name)
                continue
            seen.add(name)
            if sizeof(cls) != size or ctypes.alignment(cls) != align:
                bad.append("%s: C size/align %d/%d, ctypes %d/%d" % (
                    name, size, align, sizeof(cls), ctypes.alignment(cls)))
            nfields = len(cls._fields_)
            cfields = [l for l in layout_text.splitlines()
                       if l.startswith("F %s." % name)]
            if len(cfields) != nfields:
                bad.append("%s: C lists %d fields, ctypes has %d" % (
                    name, len(cfields), nfields))
        elif parts[0] == "F":
            sname, fname = parts[1].split(".", 1)
            cls = STRUCTS.get(sname)
            if cls is None:
                continue
            desc = getattr(cls, fname, None)
            if desc is None:
                bad.append("%s.%s: not in the binding" % (sname, fname))
            elif desc.offset != int(parts[2]):
                bad.append("%s.%s: C offset %s, ctypes %d" % (
                    sname, fname, parts[2], desc.offset))
    for name in STRUCTS:
        if name not in seen:
            bad.append("%s: not checked against C" % name)
    return bad


# ---------------------------------------------------------------------------
# The library
# ---------------------------------------------------------------------------

class PlugrtError(Exception):
    def __init__(self, status, where, message):
        super().__init__("%s: %s (%s)" % (where, message, status_name(status)))
        self.status = status
        self.message = message


lib = ctypes.CDLL(os.environ["PLUGRT_LIB"])

_opaque = c_void_p  # every handle: prt_registry *, prt_network *, ...


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


prt_version_string = _fn("prt_version_string", c_char_p)
prt_last_error = _fn("prt_last_error", c_char_p)
prt_status_name = _fn("prt_status_name", c_char_p, c_int32)
prt_free = _fn("prt_free", None, c_void_p)
prt_host_services_get = _fn("prt_host_services_get", POINTER(prt_host_services))
LOG_FN = CFUNCTYPE(None, c_void_p, c_int32, c_char_p)
prt_set_logger = _fn("prt_set_logger", None, LOG_FN, c_void_p, c_int32)

prt_registry_create = _fn("prt_registry_create", c_int32, POINTER(_opaque))
prt_registry_destroy = _fn("prt_registry_destroy", None, _opaque)
prt_registry_add_creator = _fn("prt_registry_add_creator", c_int32, _opaque,
                               POINTER(prt_plugin_creator))
prt_registry_remove_creator = _fn("prt_registry_remove_creator", c_int32, _opaque,
                                  c_char_p, c_char_p, c_char_p)
prt_registry_find_creator = _fn("prt_registry_find_creator", c_int32, _opaque,
                                c_char_p, c_char_p, c_char_p,
                                POINTER(POINTER(prt_plugin_creator)))

prt_network_create = _fn("prt_network_create", c_int32, POINTER(_opaque))
prt_network_destroy = _fn("prt_network_destroy", None, _opaque)
prt_network_add_input = _fn("prt_network_add_input", c_int32, _opaque, c_char_p,
                            c_int32, POINTER(prt_dims), POINTER(c_int32))
prt_network_add_plugin = _fn("prt_network_add_plugin", c_int32, _opaque,
                             POINTER(c_int32), c_int32, POINTER(c_int32), c_int32,
                             c_void_p, POINTER(c_int32))
prt_network_get_layer_output = _fn("prt_network_get_layer_output", c_int32,
                                   _opaque, c_int32, c_int32, POINTER(c_int32))
prt_network_set_tensor_name = _fn("prt_network_set_tensor_name", c_int32,
                                  _opaque, c_int32, c_char_p)
prt_network_set_layer_name = _fn("prt_network_set_layer_name", c_int32,
                                 _opaque, c_int32, c_char_p)
prt_network_mark_output = _fn("prt_network_mark_output", c_int32, _opaque, c_int32)

prt_builder_config_create = _fn("prt_builder_config_create", c_int32,
                                POINTER(_opaque))
prt_builder_config_destroy = _fn("prt_builder_config_destroy", None, _opaque)
prt_builder_config_add_profile = _fn("prt_builder_config_add_profile", c_int32,
                                     _opaque, POINTER(c_int32))
prt_builder_config_set_profile_dims = _fn(
    "prt_builder_config_set_profile_dims", c_int32, _opaque, c_int32, c_char_p,
    POINTER(prt_dims), POINTER(prt_dims), POINTER(prt_dims))
prt_engine_build = _fn("prt_engine_build", c_int32, _opaque, _opaque, _opaque,
                       POINTER(_opaque))

prt_engine_destroy = _fn("prt_engine_destroy", None, _opaque)
prt_engine_serialize = _fn("prt_engine_serialize", c_int32, _opaque,
                           POINTER(c_void_p), POINTER(c_size_t))
prt_engine_deserialize = _fn("prt_engine_deserialize", c_int32, _opaque,
                             c_void_p, c_size_t, POINTER(_opaque))
prt_engine_io_count = _fn("prt_engine_io_count", c_int32, _opaque)
prt_engine_get_io = _fn("prt_engine_get_io", c_int32, _opaque, c_int32,
                        POINTER(prt_io_info))
prt_engine_layer_count = _fn("prt_engine_layer_count", c_int32, _opaque)
prt_engine_get_layer = _fn("prt_engine_get_layer", c_int32, _opaque, c_int32,
                           POINTER(prt_layer_info))

prt_context_create = _fn("prt_context_create", c_int32, _opaque, POINTER(_opaque))
prt_context_destroy = _fn("prt_context_destroy", None, _opaque)
prt_context_set_input_shape = _fn("prt_context_set_input_shape", c_int32,
                                  _opaque, c_char_p, POINTER(prt_dims))
prt_context_set_tensor_address = _fn("prt_context_set_tensor_address", c_int32,
                                     _opaque, c_char_p, c_void_p)
prt_context_get_tensor_shape = _fn("prt_context_get_tensor_shape", c_int32,
                                   _opaque, c_char_p, POINTER(prt_dims))
prt_context_enqueue = _fn("prt_context_enqueue", c_int32, _opaque, c_void_p)


def status_name(st):
    return prt_status_name(st).decode()


def last_error():
    return prt_last_error().decode()


def check(st, where):
    """Raises PlugrtError with prt_last_error() unless st is PRT_OK."""
    if st != PRT_OK:
        raise PlugrtError(st, where, last_error())


def b(s):
    return s if isinstance(s, bytes) or s is None else s.encode()


# ---------------------------------------------------------------------------
# Host services as a plugin sees them
# ---------------------------------------------------------------------------

def host_set_error(status, message):
    hs = prt_host_services_get().contents
    hs.set_error(hs.host, status, b(message))


def host_log(severity, message):
    hs = prt_host_services_get().contents
    hs.log(hs.host, severity, b(message))


# ---------------------------------------------------------------------------
# Fields
# ---------------------------------------------------------------------------

FIELD_NUMPY = {
    PRT_FIELD_INT8: np.int8, PRT_FIELD_INT16: np.int16,
    PRT_FIELD_INT32: np.int32, PRT_FIELD_INT64: np.int64,
    PRT_FIELD_FLOAT16: np.uint16, PRT_FIELD_FLOAT32: np.float32,
    PRT_FIELD_FLOAT64: np.float64, PRT_FIELD_BFLOAT16: np.uint16,
    PRT_FIELD_CHAR: np.uint8, PRT_FIELD_BYTES: np.uint8,
}


def read_fields(fc_ptr):
    """A borrowed prt_field_collection * -> {name: (type, copied value)}.
    CHAR fields become str, DIMS fields a list of shapes, others numpy."""
    out = {}
    if not fc_ptr:
        return out
    fc = fc_ptr.contents
    for i in range(fc.nb_fields):
        f = fc.fields[i]
        name = f.name.decode()
        n = f.length
        if f.type == PRT_FIELD_DIMS:
            arr = ctypes.cast(f.data, POINTER(prt_dims))
            val = [arr[k].tolist() for k in range(n)]
        elif f.type in FIELD_NUMPY:
            dt = np.dtype(FIELD_NUMPY[f.type])
            raw = ctypes.string_at(f.data, n * dt.itemsize) if n else b""
            val = np.frombuffer(raw, dtype=dt).copy()
            if f.type == PRT_FIELD_CHAR:
                val = raw.decode()
        else:
            val = None
        out[name] = (f.type, val)
    return out


class FieldSet:
    """A prt_field_collection built from Python values, with every buffer it
    points to kept alive by this object."""

    def __init__(self, items):
        # items: [(name, field_type, value)]; value is a numpy array (numeric)
        self._keep = []
        self.array = (prt_field * max(1, len(items)))()
        for i, (name, ftype, value) in enumerate(items):
            nb = ctypes.create_string_buffer(b(name))
            arr = np.ascontiguousarray(
                value, dtype=FIELD_NUMPY.get(ftype, np.uint8))
            self._keep += [nb, arr]
            self.array[i].name = ctypes.cast(nb, c_char_p)
            self.array[i].data = arr.ctypes.data if arr.size else None
            self.array[i].type = ftype
            self.array[i].length = arr.size
        self.collection = prt_field_collection(len(items), self.array)

    def pointer(self):
        return ctypes.pointer(self.collection)


# ---------------------------------------------------------------------------
# Python plugins behind the C tables
# ---------------------------------------------------------------------------

class _PluginStruct(Structure):
    """What C sees: prt_plugin first, then the id of the Python object."""
    _fields_ = [("base", prt_plugin), ("id", c_int64)]


LIVE = {}               # id -> PythonPlugin, while C may hold the object
CALLBACK_ERRORS = []    # exceptions raised inside callbacks
_ids = itertools.count(1)


def _obj(addr):
    return LIVE[_PluginStruct.from_address(addr).id]


def _report(entry, exc):
    CALLBACK_ERRORS.append("%s: %s" % (entry, traceback.format_exc()))
    try:
        host_set_error(PRT_ERR_PLUGIN, "Python plugin %s raised %r" % (entry, exc))
    except Exception:  # pragma: no cover - nothing more can be done
        pass


def _guard(entry, fail):
    """Wraps a callback so that no exception crosses into C."""
    def wrap(fn):
        def inner(*args):
            try:
                return fn(*args)
            except Exception as exc:  # noqa: BLE001 - reported, never lost
                _report(entry, exc)
                return fail
        return inner
    return wrap


class ExprBuilder:
    """The prt_expr_builder handed to get_output_shapes, called from Python."""

    def __init__(self, ptr):
        self.ptr = ptr
        self.eb = ptr.contents

    def constant(self, v):
        return self.eb.constant(self.ptr, v)

    def op(self, op, a, b_):
        return self.eb.operation(self.ptr, op, a, b_)

    def declare_size_tensor(self, output_index, opt, upper):
        return self.eb.declare_size_tensor(self.ptr, output_index, opt, upper)

    def is_constant(self, e):
        v = c_int64(0)
        return (self.eb.is_constant(self.ptr, e, ctypes.byref(v)) == 1, v.value)


def tensor_view(desc, ptr):
    """A numpy array over a tensor's memory (no copy)."""
    shape = tuple(desc.dims.tolist())
    dt = np.dtype(DTYPE_TO_NUMPY[desc.dtype])
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 or not ptr:
        return np.zeros(shape, dtype=dt)
    raw = np.ctypeslib.as_array(ctypes.cast(ptr, POINTER(ctypes.c_uint8)),
                                shape=(n * dt.itemsize,))
    return raw.view(dt).reshape(shape)


class PythonPlugin:
    """Subclass and define: NAME, VERSION, NAMESPACE, nb_outputs(),
    output_dtypes(in_types), output_shapes(inputs, shape_inputs, exprs),
    supports(pos, in_out, nb_in, nb_out), fields(), enqueue(ins, outs, in_desc,
    out_desc), copy(). Optional: configure(in_descs, out_descs)."""

    NAME = VERSION = NAMESPACE = None
    DEVICES = 1 << PRT_DEVICE_CPU

    def __init__(self):
        self.nb_in = None
        self.nb_out = None
        self._fieldset = None
        self.id = next(_ids)
        self.cstruct = _PluginStruct()
        self.cstruct.base.vt = ctypes.pointer(type(self)._vtable())
        self.cstruct.id = self.id

    # -- the C object --------------------------------------------------------
    def publish(self):
        """Hands this object to C: returns its prt_plugin * as an int. It stays
        alive (in LIVE) until C calls destroy()."""
        LIVE[self.id] = self
        return ctypes.addressof(self.cstruct)

    def fresh_copy(self):
        c = self.copy()
        c.nb_in, c.nb_out = self.nb_in, self.nb_out
        return c

    # -- one set of tables per subclass -------------------------------------
    @classmethod
    def _vtable(cls):
        if "_vt" in cls.__dict__:
            return cls._vt
        strs = {k: ctypes.create_string_buffer(b(getattr(cls, k)))
                for k in ("NAME", "VERSION", "NAMESPACE")}
        core = prt_plugin_core(sizeof(prt_plugin_core), PRT_PLUGIN_ABI_VERSION,
                               _core_name, _core_version, _core_namespace,
                               _core_devices)
        vt = prt_plugin_vtable(sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION,
                               ctypes.pointer(core), ctypes.pointer(_BUILD),
                               ctypes.pointer(_RUNTIME))
        cls._strs, cls._core, cls._vt = strs, core, vt
        return vt

    def configure(self, in_descs, out_descs):
        pass


# The thunks: module globals, so they live as long as the process.

@CORE_STR_FN
@_guard("name", None)
def _core_name(p):
    return ctypes.addressof(type(_obj(p))._strs["NAME"])


@CORE_STR_FN
@_guard("version", None)
def _core_version(p):
    return ctypes.addressof(type(_obj(p))._strs["VERSION"])


@CORE_STR_FN
@_guard("plugin_namespace", None)
def _core_namespace(p):
    return ctypes.addressof(type(_obj(p))._strs["NAMESPACE"])


@CORE_DEVICES_FN
@_guard("devices", 0)
def _core_devices(p):
    return _obj(p).DEVICES


@NB_OUTPUTS_FN
@_guard("nb_outputs", -1)
def _b_nb_outputs(p):
    return _obj(p).nb_outputs()


@GET_OUTPUT_DTYPES_FN
@_guard("get_output_dtypes", PRT_ERR_PLUGIN)
def _b_dtypes(p, out_types, nb_out, in_types, nb_in):
    got = _obj(p).output_dtypes([in_types[i] for i in range(nb_in)])
    for i in range(nb_out):
        out_types[i] = got[i]
    return PRT_OK


def _exprs_list(arr, n):
    return [[arr[i].d[k] for k in range(arr[i].nb_dims)] for i in range(n)]


@GET_OUTPUT_SHAPES_FN
@_guard("get_output_shapes", PRT_ERR_PLUGIN)
def _b_shapes(p, inputs, nb_in, shape_inputs, nb_si, outputs, nb_out, eb):
    shapes = _obj(p).output_shapes(_exprs_list(inputs, nb_in),
                                   _exprs_list(shape_inputs, nb_si),
                                   ExprBuilder(eb))
    if isinstance(shapes, int):
        return shapes
    for i in range(nb_out):
        outputs[i].nb_dims = len(shapes[i])
        for k, e in enumerate(shapes[i]):
            if not e:
                host_set_error(PRT_ERR_PLUGIN, "%s: output %d dim %d is NULL" % (
                    _obj(p).NAME, i, k))
                return PRT_ERR_PLUGIN
            outputs[i].d[k] = e
    return PRT_OK


@SUPPORTS_FN
@_guard("supports_format_combination", 0)
def _b_supports(p, pos, in_out, nb_in, nb_out):
    return 1 if _obj(p).supports(pos, in_out, nb_in, nb_out) else 0


@CONFIGURE_FN
@_guard("configure", PRT_ERR_PLUGIN)
def _b_configure(p, ins, nb_in, outs, nb_out):
    o = _obj(p)
    o.nb_in, o.nb_out = nb_in, nb_out
    return o.configure([ins[i] for i in range(nb_in)],
                       [outs[i] for i in range(nb_out)]) or PRT_OK


@ON_SHAPE_CHANGE_FN
@_guard("on_shape_change", PRT_ERR_PLUGIN)
def _r_on_shape_change(p, ins, nb_in, outs, nb_out):
    # enqueue() is not told how many inputs and outputs there are: learn it
    # here (the context calls this before the first enqueue of each clone).
    o = _obj(p)
    o.nb_in, o.nb_out = nb_in, nb_out
    return PRT_OK


@ENQUEUE_FN
@_guard("enqueue", PRT_ERR_PLUGIN)
def _r_enqueue(p, in_desc, out_desc, inputs, outputs, workspace, device, stream):
    o = _obj(p)
    if device != PRT_DEVICE_CPU:
        host_set_error(PRT_ERR_UNSUPPORTED, "%s runs on the CPU only" % o.NAME)
        return PRT_ERR_UNSUPPORTED
    if o.nb_in is None:
        host_set_error(PRT_ERR_STATE, "%s: enqueue before on_shape_change" % o.NAME)
        return PRT_ERR_STATE
    ins = [tensor_view(in_desc[i], inputs[i]) for i in range(o.nb_in)]
    outs = [tensor_view(out_desc[i], outputs[i]) for i in range(o.nb_out)]
    return o.enqueue(ins, outs, in_desc, out_desc) or PRT_OK


@ATTACH_FN
@_guard("attach_to_context", None)
def _r_attach(p, resources):
    return _obj(p).fresh_copy().publish()


@CLONE_FN
@_guard("clone", None)
def _r_clone(p):
    return _obj(p).fresh_copy().publish()


@GET_FIELDS_FN
@_guard("get_fields_to_serialize", None)
def _r_fields(p):
    o = _obj(p)
    o._fieldset = FieldSet(o.fields())  # valid until the next call / destroy
    return ctypes.addressof(o._fieldset.collection)


@DESTROY_FN
@_guard("destroy", None)
def _r_destroy(p):
    LIVE.pop(_PluginStruct.from_address(p).id)


# get_workspace_size, get_valid_tactics, get_aliased_input, get_output_values
# and set_tactic stay NULL: optional entries.
_BUILD = prt_plugin_build(sizeof(prt_plugin_build), PRT_PLUGIN_ABI_VERSION,
                          _b_nb_outputs, _b_dtypes, _b_shapes, _b_supports,
                          _b_configure)
_RUNTIME = prt_plugin_runtime(sizeof(prt_plugin_runtime), PRT_PLUGIN_ABI_VERSION,
                              SET_TACTIC_FN(), _r_on_shape_change, _r_enqueue,
                              _r_attach, _r_fields, _r_clone, _r_destroy)


# ---------------------------------------------------------------------------
# Creators
# ---------------------------------------------------------------------------

class Creator:
    """A prt_plugin_creator whose create() calls
    make(layer_name, fields, phase) -> PythonPlugin, or a non-zero status
    (after calling host_set_error). `schema`: [(name, type, length, doc)]."""

    def __init__(self, name, version, namespace, schema, make):
        self.make = make
        self._keep = [b(name), b(version), b(namespace)]
        self.schema = (prt_field_schema * max(1, len(schema)))()
        for i, (fname, ftype, length, doc) in enumerate(schema):
            self._keep += [b(fname), b(doc)]
            self.schema[i] = prt_field_schema(b(fname), ftype, length, b(doc))
        self._thunk = CREATE_FN(self._create)
        self.struct = prt_plugin_creator(
            sizeof(prt_plugin_creator), PRT_PLUGIN_ABI_VERSION, b(name),
            b(version), b(namespace), len(schema), self.schema, self._thunk, None)

    def pointer(self):
        return ctypes.pointer(self.struct)

    def _create(self, creator, layer_name, fields, phase, out):
        try:
            got = self.make(layer_name.decode() if layer_name else "",
                            read_fields(fields), phase)
            if isinstance(got, int):
                return got
            out[0] = got.publish()
            return PRT_OK
        except Exception as exc:  # noqa: BLE001
            _report("create", exc)
            return PRT_ERR_PLUGIN


def call_create(creator_ptr, layer_name, items, phase):
    """Calls a creator's create through its C function pointer (whatever
    language it is written in). Returns (status, plugin address or None)."""
    fs = FieldSet(items)
    out = c_void_p()
    c = creator_ptr.contents
    st = c.create(creator_ptr, b(layer_name), fs.pointer(), phase,
                  ctypes.byref(out))
    return st, out.value


def destroy_plugin(addr):
    """Calls destroy through the plugin's own table (for a plugin Python got
    from a creator and did not hand to a network)."""
    pl = prt_plugin.from_address(addr)
    pl.vt.contents.runtime.contents.destroy(addr)

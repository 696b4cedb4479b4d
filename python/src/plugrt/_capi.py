"""ctypes declarations of libplugrt's public API (plugrt.h, plugin.h, onnx.h).

Only this module knows the C layouts and prototypes; the rest of the package
goes through it. The layouts are checked against the C compiler's by
tests/test_layout.py. Every function that can compute is a plain ctypes
foreign function, and ctypes releases the GIL around each call, so runs on
several threads overlap; C calling back into Python (plugins, loggers, output
allocators) takes the GIL for the callback only.

The libraries are the ones shipped inside the package (plugrt/_libs), found
by this file's location; PLUGRT_LIBRARY_DIR, if set, names another folder
holding libplugrt.so*, libplugrt_plugins.so and libplugrt_onnx.so (for
testing the package against a sanitizer build).
"""

import ctypes
import os
import threading
from typing import Any, List, Tuple
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_float,
                    c_int32, c_int64, c_size_t, c_uint32, c_uint64, c_void_p, sizeof)

# ---------------------------------------------------------------------------
# Constants (plugin.h); values are the C header's
# ---------------------------------------------------------------------------

PRT_PLUGIN_ABI_VERSION = 1
PRT_MAX_DIMS = 8
PRT_OK = 0
PRT_ERR_INVALID_ARGUMENT = 1
PRT_ERR_OUT_OF_MEMORY = 2
PRT_ERR_NOT_FOUND = 3
PRT_ERR_ALREADY_EXISTS = 4
PRT_ERR_UNSUPPORTED = 5
PRT_ERR_MALFORMED = 6
PRT_ERR_VERSION = 7
PRT_ERR_SHAPE = 8
PRT_ERR_PLUGIN = 9
PRT_ERR_IO = 10
PRT_ERR_STATE = 11
PRT_ERR_INTERNAL = 12
PRT_DEVICE_CPU = 0
PRT_DEVICE_CUDA = 1
PRT_PHASE_BUILD = 0
PRT_PHASE_RUNTIME = 1

# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------


class prt_dims(Structure):
    _fields_ = [("nb_dims", c_int32), ("d", c_int64 * PRT_MAX_DIMS)]

    @classmethod
    def of(cls, shape):
        shape = tuple(int(v) for v in shape)
        if len(shape) > PRT_MAX_DIMS:
            raise ValueError("a shape has at most %d dims, got %d" % (PRT_MAX_DIMS, len(shape)))
        d = cls()
        d.nb_dims = len(shape)
        d.d[:len(shape)] = shape
        return d

    def totuple(self):
        n = self.nb_dims
        return tuple(self.d[:n]) if n > 0 else ()


PRT_QUANT_NONE = 0
PRT_QUANT_PER_TENSOR = 1
PRT_QUANT_PER_CHANNEL = 2


class prt_quant_desc(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("kind", c_int32),
                ("axis", c_int32), ("count", c_int64), ("scales", POINTER(c_float)),
                ("zero_points", POINTER(c_int32)), ("scale", c_float),
                ("zero_point", c_int32)]


class prt_tensor_desc(Structure):
    _fields_ = [("dtype", c_int32), ("format", c_int32), ("dims", prt_dims),
                ("dims_device", POINTER(c_int64)), ("reserved", c_void_p * 2)]

    @property
    def quant(self):
        """reserved[0] as plugin.h's prt_tensor_desc_quant reads it."""
        return ctypes.cast(self.reserved[0], POINTER(prt_quant_desc))

    @property
    def on_host(self):
        """reserved[1] as plugin.h's prt_tensor_desc_on_host reads it: the
        data lies in host memory although the layer runs on a device."""
        return bool(self.reserved[1])


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


EB_CONSTANT_FN = CFUNCTYPE(c_void_p, c_void_p, c_int64)
EB_OPERATION_FN = CFUNCTYPE(c_void_p, c_void_p, c_int32, c_void_p, c_void_p)
EB_DECLARE_SIZE_FN = CFUNCTYPE(c_void_p, c_void_p, c_int32, c_void_p, c_void_p)
EB_IS_CONSTANT_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p, POINTER(c_int64))


class prt_expr_builder(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("constant", EB_CONSTANT_FN), ("operation", EB_OPERATION_FN),
                ("declare_size_tensor", EB_DECLARE_SIZE_FN),
                ("is_constant", EB_IS_CONSTANT_FN), ("host", c_void_p)]


# Plugin entries take every pointer as c_void_p (a plain int): the cheapest
# conversion ctypes makes, which matters on the enqueue path. Entries that
# return a string or a pointer return c_void_p too: a callback cannot return
# a c_char_p safely (the bytes would die on return), so they return the
# address of a buffer that Python keeps alive.
P = c_void_p
CORE_STR_FN = CFUNCTYPE(c_void_p, P)
CORE_DEVICES_FN = CFUNCTYPE(c_uint32, P)


class prt_plugin_core(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32),
                ("name", CORE_STR_FN), ("version", CORE_STR_FN),
                ("plugin_namespace", CORE_STR_FN), ("devices", CORE_DEVICES_FN)]


NB_OUTPUTS_FN = CFUNCTYPE(c_int32, P)
GET_OUTPUT_DTYPES_FN = CFUNCTYPE(c_int32, P, P, c_int32, P, c_int32)
GET_OUTPUT_SHAPES_FN = CFUNCTYPE(c_int32, P, P, c_int32, P, c_int32, P, c_int32, P)
SUPPORTS_FN = CFUNCTYPE(c_int32, P, c_int32, P, c_int32, c_int32)
CONFIGURE_FN = CFUNCTYPE(c_int32, P, P, c_int32, P, c_int32)
WORKSPACE_FN = CFUNCTYPE(c_int32, P, P, c_int32, P, c_int32, P)
TACTICS_FN = CFUNCTYPE(c_int32, P, P, c_int32, P)
ALIASED_FN = CFUNCTYPE(c_int32, P, c_int32)
OUTPUT_VALUES_FN = CFUNCTYPE(c_int32, P, P, P, c_int32, P, c_int32, P)
REQUIRES_HOST_DIMS_FN = CFUNCTYPE(c_int32, P, c_int32)
SET_TARGET_DEVICE_FN = CFUNCTYPE(c_int32, P, c_int32)
CAPTURE_SAFE_FN = CFUNCTYPE(c_int32, P, c_int32)
GET_KERNEL_FN = CFUNCTYPE(c_int32, P, c_int32, P, c_int32, P, c_int32, P, P, P, P)


# Kernel layers (plugin.h): what get_kernel fills.
PRT_KERNEL_PTX, PRT_KERNEL_CUBIN, PRT_KERNEL_CUDA_SOURCE = 0, 1, 2
(PRT_KARG_INPUT, PRT_KARG_OUTPUT, PRT_KARG_WORKSPACE, PRT_KARG_NULL, PRT_KARG_INT32,
 PRT_KARG_INT64, PRT_KARG_FLOAT32, PRT_KARG_FLOAT64, PRT_KARG_DIMS) = range(9)


class prt_kernel_code(Structure):
    _fields_ = [("kind", c_int32), ("arch", c_int32), ("data", c_void_p), ("size", c_int64)]


class prt_kernel_arg(Structure):
    _fields_ = [("kind", c_int32), ("index", c_int32), ("value", c_void_p),
                ("fvalue", c_double)]


class prt_kernel_launch(Structure):
    _fields_ = [("entry", c_void_p), ("grid", c_void_p * 3), ("block", c_void_p * 3),
                ("shared_bytes", c_void_p), ("nb_args", c_int32), ("args", c_void_p)]


class prt_kernel_desc(Structure):
    _fields_ = [("struct_size", c_uint32), ("nb_code", c_int32), ("code", c_void_p),
                ("nb_launches", c_int32), ("launches", c_void_p),
                ("compile_options", c_void_p)]


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
                ("requires_host_dims", REQUIRES_HOST_DIMS_FN),
                ("set_target_device", SET_TARGET_DEVICE_FN),
                ("capture_safe", CAPTURE_SAFE_FN),
                ("get_kernel", GET_KERNEL_FN)]


SET_TACTIC_FN = CFUNCTYPE(c_int32, P, c_int32)
ON_SHAPE_CHANGE_FN = CFUNCTYPE(c_int32, P, P, c_int32, P, c_int32)
ENQUEUE_FN = CFUNCTYPE(c_int32, P, P, P, P, P, P, c_int32, P)
ATTACH_FN = CFUNCTYPE(c_void_p, P, P)
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


RES_ALLOC_FN = CFUNCTYPE(c_int32, P, c_uint64, P)
RES_FREE_FN = CFUNCTYPE(None, P, P)
RES_REPORT_ERROR_FN = CFUNCTYPE(None, P, c_int32, c_char_p)
RES_CREATE_FN = CFUNCTYPE(c_int32, P, c_int32, P)
RES_DESTROY_FN = CFUNCTYPE(None, P, P)
RES_ACQUIRE_FN = CFUNCTYPE(c_int32, P, c_char_p, RES_CREATE_FN, RES_DESTROY_FN, P, P)


class prt_plugin_resources(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("device", c_int32),
                ("context", c_void_p), ("alloc", RES_ALLOC_FN), ("free", RES_FREE_FN),
                ("report_error", RES_REPORT_ERROR_FN), ("acquire", RES_ACQUIRE_FN)]


CREATE_FN = CFUNCTYPE(c_int32, c_void_p, c_char_p, c_void_p, c_int32, c_void_p)


class prt_plugin_creator(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("name", c_char_p),
                ("version", c_char_p), ("plugin_namespace", c_char_p),
                ("nb_fields", c_int32), ("fields", POINTER(prt_field_schema)),
                ("create", CREATE_FN), ("user", c_void_p)]


# What a plugin library's entry point answers (plugin.h); creators is
# const prt_plugin_creator *const *. plugrt.check makes one for the Python
# creators a module registers.
class prt_plugin_library(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("name", c_char_p),
                ("version", c_char_p), ("nb_creators", c_int32),
                ("creators", POINTER(c_void_p))]


# prt_plugin_entry_fn: the library's entry point, given the host's services.
PLUGIN_ENTRY_FN = CFUNCTYPE(c_void_p, c_uint32, POINTER(prt_host_services))


class prt_device_info(Structure):
    _fields_ = [("struct_size", c_uint32), ("device", c_int32), ("name", ctypes.c_char * 96),
                ("cc_major", c_int32), ("cc_minor", c_int32),
                ("multiprocessors", c_int32), ("memory_bytes", c_int64)]


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
                ("skipped", c_int32), ("capture_safe", c_int32), ("kernel", c_int32),
                ("device", c_int32), ("copy_to_host_bytes", c_int64),
                ("copy_to_device_bytes", c_int64),
                ("tactic_name", c_char_p)]


class prt_context_options(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_uint32),
                ("memory_limit", c_int64), ("external_memory", c_int32),
                ("threads", c_int32), ("switch_device", c_int32),
                ("allow_embedded_kernels", c_int32)]


class prt_deserialize_options(Structure):
    _fields_ = [("struct_size", c_uint32), ("allow_embedded", c_uint32)]


PRT_EMBEDDED_PLUGIN_LIBRARIES = 0x1
PRT_EMBEDDED_KERNELS = 0x2
PRT_EMBEDDED_CODE = PRT_EMBEDDED_PLUGIN_LIBRARIES | PRT_EMBEDDED_KERNELS


REALLOCATE_FN = CFUNCTYPE(c_void_p, c_void_p, c_char_p, c_void_p, c_uint64, c_uint64)
NOTIFY_SHAPE_FN = CFUNCTYPE(None, c_void_p, c_char_p, POINTER(prt_dims))


class prt_output_allocator(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("user", c_void_p),
                ("reallocate", REALLOCATE_FN), ("notify_shape", NOTIFY_SHAPE_FN)]


# Every struct above by its C name, for the layout test.
STRUCTS = {cls.__name__: cls for cls in (
    prt_dims, prt_quant_desc, prt_tensor_desc, prt_dynamic_tensor_desc, prt_field,
    prt_field_collection, prt_field_schema, prt_host_services, prt_dim_exprs,
    prt_expr_builder, prt_plugin_core, prt_plugin_build, prt_plugin_runtime,
    prt_plugin_vtable, prt_plugin, prt_plugin_resources, prt_plugin_creator,
    prt_plugin_library, prt_device_info, prt_io_info, prt_layer_info, prt_context_options,
    prt_output_allocator, prt_kernel_code, prt_kernel_arg, prt_kernel_launch,
    prt_kernel_desc)}

# ---------------------------------------------------------------------------
# The libraries
# ---------------------------------------------------------------------------

LIBDIR = os.environ.get("PLUGRT_LIBRARY_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "_libs")


def _find(names, where):
    for d in where:
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p):
                return p
    return None


def _core_library():
    names = sorted((n for n in os.listdir(LIBDIR) if n.startswith("libplugrt.so")),
                   key=len) if os.path.isdir(LIBDIR) else []
    # libplugrt.so.MAJOR.MINOR (the soname) in the package; in a build folder
    # libplugrt.so, a symlink to it, is as good.
    path = _find(names, [LIBDIR])
    if path is None:
        raise ImportError("plugrt: libplugrt.so is not in %s; the package is not "
                          "installed properly (pip install ./python builds it)" % LIBDIR)
    return path


LIBPLUGRT_PATH = _core_library()
lib = ctypes.CDLL(LIBPLUGRT_PATH)
#: The standard plugin library shipped in the package (NonZeroPlugin,
#: CustomHardmax, circ_pad_plugin, AddInPlace): pass it to
#: Registry.load_library.
PLUGINS_LIBRARY = _find(["libplugrt_plugins.so"], [LIBDIR]) or os.path.join(
    LIBDIR, "libplugrt_plugins.so")
#: The plugin checker as a library (prt_check_main), which plugrt.check
#: runs on Python plugins; None where the package lacks it.
CHECK_LIBRARY = _find(["libplugrt_check.so"], [LIBDIR, os.path.join(LIBDIR, "tools")])
_ONNX_PATH = _find(["libplugrt_onnx.so"], [LIBDIR, os.path.join(LIBDIR, "src", "onnx")])
_onnx = None
_onnx_lock = threading.Lock()


def _fn(library, name, restype, *argtypes):
    f = getattr(library, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


H = c_void_p  # every handle: prt_registry *, prt_network *, ...
PH = POINTER(c_void_p)
I32P = POINTER(c_int32)


class _Functions:
    """libplugrt's functions by name less "prt_" (fn.engine_build), set
    from _decls below."""

    def __getattr__(self, name: str) -> Any:  # for type checkers: set at import
        raise AttributeError("libplugrt has no function prt_%s declared in _capi" % name)


fn = _Functions()
# (name, restype, argtypes...)
_decls: List[Tuple[Any, ...]] = [
    ("prt_version_string", c_char_p),
    ("prt_version_number", c_int32),
    ("prt_last_error", c_char_p),
    ("prt_clear_error", None),
    ("prt_status_name", c_char_p, c_int32),
    ("prt_set_logger", None, c_void_p, c_void_p, c_int32),
    ("prt_free", None, c_void_p),
    ("prt_malloc", c_void_p, c_size_t),
    ("prt_dtype_size", c_size_t, c_int32),
    ("prt_dtype_name", c_char_p, c_int32),
    ("prt_host_services_get", POINTER(prt_host_services)),
    ("prt_device_check", c_int32, c_int32),
    ("prt_device_get_info", c_int32, c_int32, POINTER(prt_device_info)),
    ("prt_device_count", c_int32, c_int32, POINTER(c_int32)),
    ("prt_device_get_current", c_int32, c_int32, POINTER(c_int32)),
    ("prt_device_set_current", c_int32, c_int32, c_int32),
    ("prt_device_malloc", c_int32, c_int32, c_size_t, PH),
    ("prt_device_free", None, c_int32, c_void_p),
    ("prt_device_memcpy", c_int32, c_int32, c_void_p, c_void_p, c_size_t, c_int32, c_void_p),
    ("prt_device_synchronize", c_int32, c_int32),
    ("prt_stream_create", c_int32, c_int32, PH),
    ("prt_stream_destroy", None, c_int32, c_void_p),
    ("prt_stream_synchronize", c_int32, c_int32, c_void_p),
    ("prt_registry_create", c_int32, PH),
    ("prt_registry_destroy", None, H),
    ("prt_registry_add_creator", c_int32, H, c_void_p),
    ("prt_registry_remove_creator", c_int32, H, c_char_p, c_char_p, c_char_p),
    ("prt_registry_find_creator", c_int32, H, c_char_p, c_char_p, c_char_p, PH),
    ("prt_registry_creator_count", c_int32, H),
    ("prt_registry_get_creator", c_void_p, H, c_int32),
    ("prt_registry_load_library", c_int32, H, c_char_p),
    ("prt_registry_unload_library", c_int32, H, c_char_p),
    ("prt_registry_get_creator_library", c_char_p, H, c_void_p, POINTER(c_uint64)),
    ("prt_builtin_find_creator", c_int32, c_char_p, c_char_p, PH),
    ("prt_builtin_creator_count", c_int32),
    ("prt_builtin_get_creator", c_void_p, c_int32),
    ("prt_builtin_get_dtypes", c_int32, c_int32, c_int32, POINTER(c_uint32)),
    ("prt_network_create", c_int32, PH),
    ("prt_network_destroy", None, H),
    ("prt_network_add_input", c_int32, H, c_char_p, c_int32, POINTER(prt_dims), I32P),
    ("prt_network_add_constant", c_int32, H, c_char_p, c_int32, POINTER(prt_dims),
     c_void_p, I32P),
    ("prt_network_add_plugin", c_int32, H, I32P, c_int32, I32P, c_int32, c_void_p, I32P),
    ("prt_network_get_layer_output", c_int32, H, c_int32, c_int32, I32P),
    ("prt_network_layer_output_count", c_int32, H, c_int32),
    ("prt_network_set_tensor_name", c_int32, H, c_int32, c_char_p),
    ("prt_network_set_layer_name", c_int32, H, c_int32, c_char_p),
    ("prt_network_mark_output", c_int32, H, c_int32),
    ("prt_network_input_count", c_int32, H),
    ("prt_network_output_count", c_int32, H),
    ("prt_network_get_input", c_int32, H, c_int32, I32P),
    ("prt_network_get_output", c_int32, H, c_int32, I32P),
    ("prt_network_get_tensor", c_int32, H, c_int32, POINTER(c_char_p), I32P,
     POINTER(prt_dims)),
    ("prt_network_find_tensor", c_int32, H, c_char_p, I32P),
    ("prt_network_set_tensor_quant", c_int32, H, c_int32, POINTER(prt_quant_desc)),
    ("prt_network_get_tensor_quant", c_int32, H, c_int32, POINTER(prt_quant_desc)),
    ("prt_engine_get_tensor_quant", c_int32, H, c_int32, POINTER(prt_quant_desc)),
    ("prt_builder_config_create", c_int32, PH),
    ("prt_builder_config_destroy", None, H),
    ("prt_builder_config_set_device", c_int32, H, c_int32),
    ("prt_builder_config_set_workspace_limit", c_int32, H, c_int64),
    ("prt_builder_config_set_autotune", c_int32, H, c_int32),
    ("prt_builder_config_set_timing_cache_file", c_int32, H, c_char_p),
    ("prt_builder_config_set_embed_plugins", c_int32, H, c_int32),
    ("prt_builder_config_set_precision_flags", c_int32, H, c_uint32),
    ("prt_builder_config_get_precision_flags", c_uint32, H),
    ("prt_engine_get_precision_flags", c_uint32, H),
    ("prt_builder_config_set_cpu_fallback", c_int32, H, c_int32),
    ("prt_builder_config_add_profile", c_int32, H, I32P),
    ("prt_builder_config_set_profile_dims", c_int32, H, c_int32, c_char_p,
     POINTER(prt_dims), POINTER(prt_dims), POINTER(prt_dims)),
    ("prt_builder_config_set_profile_shape_values", c_int32, H, c_int32, c_char_p,
     POINTER(c_int64), POINTER(c_int64), POINTER(c_int64), c_int32),
    ("prt_float_shape_value", c_int64, c_float),
    ("prt_engine_build", c_int32, H, H, H, PH),
    ("prt_engine_destroy", None, H),
    ("prt_engine_serialize", c_int32, H, PH, POINTER(c_size_t)),
    ("prt_engine_deserialize", c_int32, H, c_void_p, c_size_t, PH),
    ("prt_engine_deserialize_with_options", c_int32, H, c_void_p, c_size_t,
     POINTER(prt_deserialize_options), PH),
    ("prt_engine_embedded_library_count", c_int32, H),
    ("prt_engine_io_count", c_int32, H),
    ("prt_engine_get_io", c_int32, H, c_int32, POINTER(prt_io_info)),
    ("prt_engine_find_io", c_int32, H, c_char_p, I32P),
    ("prt_engine_context_memory_size", c_int64, H),
    ("prt_engine_profile_count", c_int32, H),
    ("prt_engine_layer_count", c_int32, H),
    ("prt_engine_device", c_int32, H),
    ("prt_engine_get_device_index", c_int32, H),
    ("prt_engine_get_layer", c_int32, H, c_int32, POINTER(prt_layer_info)),
    ("prt_context_create", c_int32, H, PH),
    ("prt_context_create_with_options", c_int32, H, POINTER(prt_context_options), PH),
    ("prt_context_get_threads", c_int32, H),
    ("prt_context_get_memory_size", c_int64, H),
    ("prt_default_thread_count", c_int32),
    ("prt_context_destroy", None, H),
    ("prt_context_set_profile", c_int32, H, c_int32),
    ("prt_context_set_input_shape", c_int32, H, c_char_p, POINTER(prt_dims)),
    ("prt_context_set_tensor_address", c_int32, H, c_char_p, c_void_p),
    ("prt_context_set_output_allocator", c_int32, H, c_char_p,
     POINTER(prt_output_allocator)),
    ("prt_context_get_tensor_shape", c_int32, H, c_char_p, POINTER(prt_dims)),
    ("prt_context_enqueue", c_int32, H, c_void_p),
]
for _d in _decls:
    setattr(fn, _d[0][4:], _fn(lib, _d[0], _d[1], *_d[2:]))


def onnx():
    """The ONNX importer's functions, loaded on first use (libplugrt_onnx.so
    beside libplugrt). None if this build of the package has no importer."""
    global _onnx
    with _onnx_lock:
        if _onnx is None and _ONNX_PATH:
            o = ctypes.CDLL(_ONNX_PATH)
            ns = _Functions()
            ns.parser_create = _fn(o, "prt_onnx_parser_create", c_int32, H, PH)
            ns.parser_destroy = _fn(o, "prt_onnx_parser_destroy", None, H)
            ns.parser_map_op = _fn(o, "prt_onnx_parser_map_op", c_int32, H, c_char_p,
                                   c_char_p, c_char_p, c_char_p)
            ns.parser_parse_file = _fn(o, "prt_onnx_parser_parse_file", c_int32, H,
                                       c_char_p, PH)
            ns.parser_parse_bytes = _fn(o, "prt_onnx_parser_parse_bytes", c_int32, H,
                                        c_void_p, c_size_t, c_char_p, PH)
            ns.parser_set_strict = _fn(o, "prt_onnx_parser_set_strict", c_int32, H,
                                       c_int32)
            _onnx = ns
        return _onnx


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

def b(s):
    """str -> bytes for char * arguments (None stays None)."""
    if s is None or isinstance(s, bytes):
        return s
    return os.fsencode(s) if isinstance(s, os.PathLike) else str(s).encode()


def s(raw):
    """char * result -> str."""
    return raw.decode("utf-8", "replace") if raw is not None else None


def last_error():
    return s(fn.last_error()) or ""


def status_name(st):
    return s(fn.status_name(st))


_HOST = fn.host_services_get().contents


def host_set_error(status, message):
    """The plugin side's error report (prt_host_services.set_error): the user
    reads `message` from prt_last_error()."""
    _HOST.set_error(_HOST.host, status, b(message))


def host_log(severity, message):
    _HOST.log(_HOST.host, severity, b(message))


def use_host_services(services):
    """Sends the Python plugins' set_error and log calls to another host's
    services (a prt_host_services that lives as long as the process), in
    place of libplugrt's: plugrt.check gives the checker's, which records
    them, as a C plugin library reports to the services its entry point
    was given."""
    global _HOST
    _HOST = services


def struct_of(cls):
    """A query struct with struct_size set."""
    v = cls()
    v.struct_size = sizeof(cls)
    return v


__all__ = ["fn", "lib", "onnx", "b", "s", "last_error", "status_name",
           "host_set_error", "host_log", "struct_of", "STRUCTS", "PLUGINS_LIBRARY"]

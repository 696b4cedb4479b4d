"""DLPack in ctypes: capsules of plugrt tensors for other libraries
(Tensor.__dlpack__), and other libraries' capsules read as memory (what
run() and set_tensor_address accept).

An exported capsule points to one block from prt_malloc holding the managed
tensor, its shape and its strides; the block's deleter is prt_free itself, a
C function, so a consumer frees it from any thread without Python. A
capsule nobody consumed frees the block in its destructor (the one Python
callback here, run while the capsule is collected, with the GIL held). The
memory a capsule describes is borrowed: a plugin's tensors are valid during
the enqueue call only, as in TensorRT.

Versions: a consumer that passes max_version >= (1, 0) gets a versioned
capsule ("dltensor_versioned", DLPack 1.0); others get the legacy one.
"""

import ctypes
from typing import Any, Tuple
from ctypes import (CFUNCTYPE, POINTER, PYFUNCTYPE, Structure, c_char_p, c_int, c_int32,
                    c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p, sizeof)

from . import _capi as C
from ._types import DataType

# DLDeviceType
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13

# DLDataTypeCode
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT, _KDL_BOOL = 0, 1, 2, 4, 6
# DLPack 1.1's 8-bit floats: kDLFloat8_e4m3fn, kDLFloat8_e5m2.
_KDL_FLOAT8_E4M3FN, _KDL_FLOAT8_E5M2 = 10, 12

#: DataType -> (code, bits) of DLDataType (lanes 1).
DL_TYPES = {DataType.FLOAT: (_KDL_FLOAT, 32), DataType.HALF: (_KDL_FLOAT, 16),
            DataType.BF16: (_KDL_BFLOAT, 16), DataType.INT8: (_KDL_INT, 8),
            DataType.UINT8: (_KDL_UINT, 8), DataType.INT32: (_KDL_INT, 32),
            DataType.INT64: (_KDL_INT, 64), DataType.BOOL: (_KDL_BOOL, 8),
            DataType.FP8: (_KDL_FLOAT8_E4M3FN, 8), DataType.FP8E5M2: (_KDL_FLOAT8_E5M2, 8),
            DataType.DOUBLE: (_KDL_FLOAT, 64), DataType.INT16: (_KDL_INT, 16),
            DataType.UINT16: (_KDL_UINT, 16), DataType.UINT32: (_KDL_UINT, 32),
            DataType.UINT64: (_KDL_UINT, 64)}
_FROM_DL = {v: k for k, v in DL_TYPES.items()}

DLPACK_FLAG_BITMASK_READ_ONLY = 1


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


# Capsule names: module globals, so the pointers stay valid for every
# capsule's life.
_NAME = ctypes.create_string_buffer(b"dltensor")
_NAME_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")
_NAME_P = ctypes.cast(_NAME, c_void_p).value
_NAME_VERSIONED_P = ctypes.cast(_NAME_VERSIONED, c_void_p).value

# The CPython calls, as private prototypes (ctypes.pythonapi's attributes are
# shared with every other user of ctypes in the process).
_api = ctypes.pythonapi
_capsule_new = PYFUNCTYPE(ctypes.py_object, c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_New", _api))
_capsule_get = PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(("PyCapsule_GetPointer", _api))
_capsule_is_valid_raw = PYFUNCTYPE(c_int, c_void_p, c_void_p)(("PyCapsule_IsValid", _api))
_capsule_get_raw = PYFUNCTYPE(c_void_p, c_void_p, c_void_p)(("PyCapsule_GetPointer", _api))
_capsule_is_valid = PYFUNCTYPE(c_int, ctypes.py_object, c_char_p)(("PyCapsule_IsValid", _api))

_PRT_FREE = ctypes.cast(C.lib.prt_free, c_void_p).value


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(cap):
    # Called while the capsule is collected: the raw pointer, no reference
    # taken. A consumer renames a capsule it takes ("used_dltensor"), and
    # then calls the deleter itself; here only unconsumed ones are freed.
    for name in (_NAME_P, _NAME_VERSIONED_P):
        if _capsule_is_valid_raw(cap, name):
            C.fn.free(_capsule_get_raw(cap, name))
            return


_DESTRUCTOR_P = ctypes.cast(_capsule_destructor, c_void_p).value


def export(ptr, shape, dtype, device_type, device_id, readonly=False, versioned=False):
    """A DLPack capsule describing `shape` elements of `dtype` at `ptr`
    (row-major, compact), on (device_type, device_id)."""
    ndim = len(shape)
    head = sizeof(DLManagedTensorVersioned if versioned else DLManagedTensor)
    block = C.fn.malloc(head + 16 * max(1, ndim))
    if not block:
        raise MemoryError("DLPack export: out of memory")
    if versioned:
        m = DLManagedTensorVersioned.from_address(block)
        m.version.major, m.version.minor = 1, 0
        m.flags = DLPACK_FLAG_BITMASK_READ_ONLY if readonly else 0
    else:
        m = DLManagedTensor.from_address(block)
    m.manager_ctx = None
    m.deleter = _PRT_FREE
    t = m.dl_tensor
    t.data = ptr or None
    t.device.device_type, t.device.device_id = device_type, device_id
    t.ndim = ndim
    t.dtype.code, t.dtype.bits = DL_TYPES[dtype]
    t.dtype.lanes = 1
    dims = (c_int64 * (2 * max(1, ndim))).from_address(block + head)
    acc = 1
    for k in range(ndim - 1, -1, -1):
        dims[k] = shape[k]
        dims[ndim + k] = acc
        acc *= shape[k]
    t.shape = ctypes.cast(block + head, POINTER(c_int64))
    t.strides = ctypes.cast(block + head + 8 * ndim, POINTER(c_int64))
    t.byte_offset = 0
    try:
        return _capsule_new(block, _NAME_VERSIONED_P if versioned else _NAME_P, _DESTRUCTOR_P)
    except BaseException:
        C.fn.free(block)
        raise


def dl_dtype(code, bits, lanes):
    """DataType of a DLDataType; TypeError naming it if plugrt has none."""
    dt = _FROM_DL.get((code, bits)) if lanes == 1 else None
    if dt is None:
        raise TypeError("DLPack dtype (code %d, %d bits, %d lanes) is not a plugrt type"
                        % (code, bits, lanes))
    return dt


class Imported:
    """Memory another library exported through DLPack: data pointer, shape,
    DataType, device, whether it is row-major compact; `capsule` keeps it
    alive (it is not consumed: its producer frees it when it is collected)."""
    __slots__ = ("ptr", "shape", "dtype", "device_type", "device_id", "contiguous", "capsule",
                 "readonly")
    ptr: int
    shape: Tuple[int, ...]
    dtype: Any
    device_type: int
    device_id: int
    contiguous: bool
    capsule: Any
    readonly: bool

    @property
    def nbytes(self):
        n = self.dtype.itemsize
        for d in self.shape:
            n *= d
        return n


def read_capsule(capsule) -> Imported:
    """Reads a legacy or versioned DLPack capsule (without consuming it)."""
    m: Any
    if _capsule_is_valid(capsule, b"dltensor"):
        m = DLManagedTensor.from_address(_capsule_get(capsule, b"dltensor"))
        ro = False
    elif _capsule_is_valid(capsule, b"dltensor_versioned"):
        m = DLManagedTensorVersioned.from_address(_capsule_get(capsule, b"dltensor_versioned"))
        if m.version.major != 1:
            raise TypeError("DLPack %d.%d capsules are not supported (1.x are)" % (
                m.version.major, m.version.minor))
        ro = bool(m.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    else:
        raise TypeError("not an unconsumed DLPack capsule")
    t = m.dl_tensor
    out = Imported()
    out.capsule = capsule
    out.readonly = ro
    out.shape = tuple(t.shape[k] for k in range(t.ndim))
    out.dtype = dl_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    out.ptr = (t.data or 0) + t.byte_offset
    out.device_type, out.device_id = t.device.device_type, t.device.device_id
    contiguous = True
    if t.strides and 0 not in out.shape:
        acc = 1
        for k in range(t.ndim - 1, -1, -1):
            if out.shape[k] != 1 and t.strides[k] != acc:
                contiguous = False
            acc *= out.shape[k]
    out.contiguous = contiguous
    return out


__all__ = ["export", "read_capsule", "Imported", "DL_TYPES", "KDL_CPU", "KDL_CUDA"]

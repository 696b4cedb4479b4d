"""Loggers and plugin registries."""

import ctypes
import enum
import os
import sys
import threading
import weakref
from typing import Any, List, Optional, Tuple, Union

from . import _capi as C
from . import _errors as E
from ._lifetime import Closable, NothingToClose
from ._plugin import CCreator, CreatorBridge, CREATORS

# ---------------------------------------------------------------------------
# Logging
# ---------------------------------------------------------------------------


class ILogger:
    """Receives plugrt's messages: subclass and define log(severity, msg)."""

    class Severity(enum.IntEnum):
        INTERNAL_ERROR = 0
        ERROR = 1
        WARNING = 2
        INFO = 3
        VERBOSE = 4

    INTERNAL_ERROR = Severity.INTERNAL_ERROR
    ERROR = Severity.ERROR
    WARNING = Severity.WARNING
    INFO = Severity.INFO
    VERBOSE = Severity.VERBOSE

    min_severity = Severity.WARNING

    def __init__(self):
        pass

    def log(self, severity: "ILogger.Severity", msg: str) -> None:
        raise NotImplementedError


class Logger(ILogger):
    """Prints messages at or above min_severity to stderr."""

    def __init__(self, min_severity: ILogger.Severity = ILogger.Severity.WARNING):
        ILogger.__init__(self)
        self.min_severity = ILogger.Severity(min_severity)

    def __repr__(self) -> str:
        return "<plugrt.Logger %s>" % ILogger.Severity(self.min_severity).name

    def log(self, severity: "ILogger.Severity", msg: str) -> None:
        if severity <= self.min_severity:
            print("[plugrt] %s: %s" % (ILogger.Severity(severity).name, msg), file=sys.stderr)


# plugrt has one process-wide logger (prt_set_logger); every ILogger that a
# Builder, Runtime or OnnxParser was given gets each message at or above its
# own min_severity, until the logger is collected.
_loggers: "weakref.WeakSet[ILogger]" = weakref.WeakSet()
_log_lock = threading.Lock()
_installed: List[Optional[int]] = [None]


@C.HOST_LOG_FN
def _log_thunk(user, severity, message):
    try:
        sev = ILogger.Severity(min(int(severity) + 1, 4))
        text = C.s(message) or ""
        for lg in list(_loggers):
            if sev <= getattr(lg, "min_severity", ILogger.Severity.WARNING):
                lg.log(sev, text)
    except BaseException:  # noqa: BLE001 - a logger must not break plugrt
        pass


def use_logger(logger: Optional[ILogger]):
    if logger is None:
        return
    with _log_lock:
        _loggers.add(logger)
        most = max(int(getattr(lg, "min_severity", 2)) for lg in _loggers)
        threshold = max(0, most - 1)  # ILogger severity -> prt_severity
        if _installed[0] != threshold:
            C.fn.set_logger(ctypes_fn_address(), None, threshold)
            _installed[0] = threshold


def ctypes_fn_address():
    return ctypes.cast(_log_thunk, ctypes.c_void_p)


# ---------------------------------------------------------------------------
# Registries
# ---------------------------------------------------------------------------


class PluginLibrary(str):
    """What load_library returns: the library's path (a str), for
    deregister_library."""


class Registry(Closable):
    """A plugin registry: creators keyed by (namespace, name, version), and
    the plugin libraries loaded into it. Registries are independent objects
    (two may hold creators with the same key); trt.get_plugin_registry() is
    the default one, which the decorator plugins of plugrt.plugin join.

    Engines, networks and plugins made through a registry keep it alive;
    close() (or collection) unloads its libraries."""
    _what = "registry"

    def __init__(self):
        h = ctypes.c_void_p()
        E.call(C.fn.registry_create, ctypes.byref(h))
        self._h = h.value
        self._python = {}     # key -> CreatorBridge (Python creators)
        self._borrowed = {}   # key -> CCreator added from elsewhere (keeps its owner)
        self._libraries = {}  # realpath -> PluginLibrary
        self._finalizer = weakref.finalize(self, C.fn.registry_destroy, self._h)

    def close(self) -> None:
        """Unloads the registry's libraries. Engines and networks holding
        plugins from them must be gone first."""
        self._finalizer()

    # -- creators -----------------------------------------------------------
    def register_creator(self, creator: Any, plugin_namespace: Optional[str] = None) -> bool:
        """Adds a creator: a Python one (IPluginCreatorV3One / PluginCreator,
        or a decorator plugin's), or a C one taken from another registry.
        AlreadyExistsError if the key is taken."""
        if isinstance(creator, CCreator):
            key = (creator.plugin_namespace, creator.name, creator.plugin_version)
            E.call(C.fn.registry_add_creator, self.handle, creator._addr)
            self._borrowed[key] = creator
            return True
        cb = getattr(creator, "_plugrt_creator_bridge", None)
        if cb is None or (plugin_namespace is not None and plugin_namespace != cb.namespace):
            cb = CreatorBridge(creator, plugin_namespace)
        key = (cb.namespace, cb.name, cb.version)
        E.call(C.fn.registry_add_creator, self.handle, ctypes.addressof(cb.struct))
        self._python[key] = cb
        return True

    def deregister_creator(self, creator: Any) -> bool:
        key: Optional[Tuple[str, str, str]]
        if isinstance(creator, CCreator):
            key = (creator.plugin_namespace, creator.name, creator.plugin_version)
        else:
            key = next((k for k, v in self._python.items() if v.creator is creator), None)
            if key is None:
                raise E.NotFoundError("the creator is not registered here")
        E.call(C.fn.registry_remove_creator, self.handle, C.b(key[0]), C.b(key[1]),
               C.b(key[2]))
        self._python.pop(key, None)
        self._borrowed.pop(key, None)
        return True

    def _wrap(self, addr):
        cb = CREATORS.get(addr)
        if cb is not None:
            return cb.creator
        return CCreator(addr, keep=(self,))

    def get_creator(self, name: str, version: str = "1", plugin_namespace: str = "") -> Any:
        """The creator with this key: the Python object for a Python
        creator, a CCreator for a library's. In namespace "plugrt" the
        built-in ops (Relu, MatMul, ...) are found too. NotFoundError names
        the key and the libraries loaded."""
        out = ctypes.c_void_p()
        if plugin_namespace == "plugrt":
            E.call(C.fn.builtin_find_creator, C.b(name), C.b(version), ctypes.byref(out))
            return CCreator(out.value or 0)  # E.call raised where there is none
        E.call(C.fn.registry_find_creator, self.handle, C.b(plugin_namespace), C.b(name),
               C.b(version), ctypes.byref(out))
        return self._wrap(out.value)

    @property
    def all_creators(self) -> List:
        n = C.fn.registry_creator_count(self.handle)
        return [self._wrap(C.fn.registry_get_creator(self.handle, i)) for i in range(n)]

    # TensorRT's older names.
    get_plugin_creator = get_creator
    plugin_creator_list = all_creators

    # -- libraries ----------------------------------------------------------
    def load_library(self, path: Union[str, os.PathLike]) -> PluginLibrary:
        """Loads a plugin library (its creators join the registry); loading
        the same file again returns the same handle."""
        p = os.fspath(path)
        real = os.path.realpath(p)
        lib = self._libraries.get(real)
        if lib is not None:
            return lib
        E.call(C.fn.registry_load_library, self.handle, C.b(p))
        lib = self._libraries[real] = PluginLibrary(p)
        return lib

    def deregister_library(self, handle: PluginLibrary) -> None:
        real = os.path.realpath(handle)
        E.call(C.fn.registry_unload_library, self.handle, C.b(str(handle)))
        self._libraries.pop(real, None)

    def library_of(self, creator: Any) -> Optional[str]:
        """The path a creator's library was loaded from (None: not a
        library's)."""
        if not isinstance(creator, CCreator):
            return None
        return C.s(C.fn.registry_get_creator_library(self.handle, creator._addr, None))

    def _describe(self) -> str:
        n = C.fn.registry_creator_count(self.handle)
        libs = len(self._libraries)
        return "with %d creator%s%s" % (n, "" if n == 1 else "s", ", %d librar%s" % (
            libs, "y" if libs == 1 else "ies") if libs else "")


_default: List[Optional[Registry]] = [None]
_default_lock = threading.Lock()


def get_plugin_registry() -> Registry:
    """The default registry: the one Builder, Runtime, OnnxParser and
    plugrt.build use unless given another, and the one plugrt.plugin's
    decorator plugins register into."""
    with _default_lock:
        reg = _default[0]
        if reg is None:
            reg = _default[0] = Registry()
        return reg


class _WithRegistry(NothingToClose):
    """What Builder and Runtime share: a logger, and the registry they use
    (the default one unless given another). Neither owns a C object, so
    `with trt.Builder(logger) as builder:` frees nothing at its end: what
    they made lives on."""

    def __init__(self, logger=None, registry: Optional[Registry] = None):
        use_logger(logger)
        self.logger = logger
        self._registry = registry

    def get_plugin_registry(self) -> Registry:
        return self._registry or get_plugin_registry()

    def __repr__(self) -> str:
        return "<plugrt.%s, %s registry>" % (type(self).__name__,
                                             "its own" if self._registry else "the default")

    @property
    def plugin_registry(self) -> Registry:
        return self.get_plugin_registry()


def init_libnvinfer_plugins(logger: Optional[ILogger] = None, namespace: str = "") -> bool:
    """Loads the standard plugin library (NonZeroPlugin, CustomHardmax,
    circ_pad_plugin, AddInPlace) into the default registry: TensorRT's
    name for it."""
    use_logger(logger)
    get_plugin_registry().load_library(C.PLUGINS_LIBRARY)
    return True

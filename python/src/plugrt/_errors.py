"""Exceptions: one class per prt_status under plugrt.Error.

Every C call that returns a prt_status goes through call(): a failure raises
the status's class with prt_last_error() as its message. Python code that C
calls back (plugins, creators, output allocators, loggers) cannot raise
through C, so a callback that raises records the exception here, on the
thread that C called it on, reports the failure to C (set_error and a
failing status), and call() re-raises it when the C call returns: chained as
the __cause__ of the plugrt.Error, or as itself for KeyboardInterrupt and
SystemExit. A callback that raised makes the C call fail in Python even if
the library found a way around the failure (a format combination it then did
not use, say): a Python error is never swallowed.
"""

import re
import threading
from typing import Optional

from . import _capi as C


class Error(Exception):
    """A plugrt call failed. `status` is the prt_status code, `status_name`
    its name (e.g. "PRT_ERR_SHAPE"); str(error) is prt_last_error()."""

    status: Optional[int] = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def status_name(self):
        return C.status_name(self.status) if self.status is not None else None

    @property
    def message(self):
        return self.args[0] if self.args else ""


class InvalidArgumentError(Error, ValueError):
    """PRT_ERR_INVALID_ARGUMENT: a bad value passed by the caller."""
    status = C.PRT_ERR_INVALID_ARGUMENT


class OutOfMemoryError(Error, MemoryError):
    """PRT_ERR_OUT_OF_MEMORY."""
    status = C.PRT_ERR_OUT_OF_MEMORY


class NotFoundError(Error, LookupError):
    """PRT_ERR_NOT_FOUND: a name, key or file that does not exist."""
    status = C.PRT_ERR_NOT_FOUND


class AlreadyExistsError(Error):
    """PRT_ERR_ALREADY_EXISTS: a duplicate key or name."""
    status = C.PRT_ERR_ALREADY_EXISTS


class UnsupportedError(Error):
    """PRT_ERR_UNSUPPORTED: valid, but not supported (dtype, device)."""
    status = C.PRT_ERR_UNSUPPORTED


class MalformedError(Error, ValueError):
    """PRT_ERR_MALFORMED: untrusted bytes (ONNX, engine) that do not parse."""
    status = C.PRT_ERR_MALFORMED


class VersionError(Error):
    """PRT_ERR_VERSION: a version this build cannot serve."""
    status = C.PRT_ERR_VERSION


class ShapeError(Error, ValueError):
    """PRT_ERR_SHAPE: a shape that breaks a rule or a bound."""
    status = C.PRT_ERR_SHAPE


class PluginError(Error):
    """PRT_ERR_PLUGIN: a plugin reported or caused a failure. For a plugin
    written in Python the message names the plugin, the method and the
    Python exception, which is also the error's __cause__."""
    status = C.PRT_ERR_PLUGIN


class IOError(Error):  # noqa: A001 - the status is PRT_ERR_IO; plugrt.IOError
    """PRT_ERR_IO: the file system or the dynamic loader."""
    status = C.PRT_ERR_IO


class StateError(Error, RuntimeError):
    """PRT_ERR_STATE: a call made at the wrong time."""
    status = C.PRT_ERR_STATE


class InternalError(Error):
    """PRT_ERR_INTERNAL: a bug in plugrt; please report it."""
    status = C.PRT_ERR_INTERNAL


BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, NotFoundError, AlreadyExistsError,
    UnsupportedError, MalformedError, VersionError, ShapeError, PluginError,
    IOError, StateError, InternalError)}


def error_for(status, message):
    cls = BY_STATUS.get(status)
    if cls is None:
        return Error(message or "status %d" % status, status)
    return cls(message)


# ---------------------------------------------------------------------------
# Exceptions raised in callbacks, per thread
# ---------------------------------------------------------------------------

_tls = threading.local()


def pending():
    p = getattr(_tls, "p", None)
    if p is None:
        p = _tls.p = []
    return p


def record(exc, message):
    """A callback raised `exc`; C was told `message`."""
    pending().append((exc, message))


# What libplugrt writes as \xNN when it stores a message (src/base/error.c):
# control bytes, C1 controls (U+0080 to U+009F: U+009B is CSI to some
# terminals) and what is not valid UTF-8 (here: lone surrogates).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape_one(m):
    o = ord(m.group())
    if o < 0x80:
        return "\\x%02x" % o
    if o <= 0x9f:  # its two UTF-8 bytes, as C writes them
        return "\\xc2\\x%02x" % o
    if 0xdc80 <= o <= 0xdcff:  # a byte that was not UTF-8 (surrogateescape)
        return "\\x%02x" % (o - 0xdc00)
    return "".join("\\x%02x" % c for c in m.group().encode("utf-8", "surrogatepass"))


def escape(text):
    """`text` as libplugrt stores a message: control bytes, C1 controls and
    lone surrogates written as \\xNN, so an exception's text cannot drive
    the terminal it is printed on."""
    return _UNSAFE.sub(_escape_one, text)


def report(exc, message, status=None):
    """A callback raised `exc`: records it with `message` (escaped) for the
    Python caller of the C function and, with a status, tells C through the
    host's set_error. Returns the escaped message."""
    msg = escape(message)
    record(exc, msg)
    if status is not None:
        try:
            C.host_set_error(status, msg)
        except BaseException:  # noqa: BLE001 - nothing more can be done
            pass
    return msg


def _raise(status, items):
    msg = C.last_error() if status else ""
    cause = None
    for exc, m in items:
        if not isinstance(exc, Exception):
            raise exc  # KeyboardInterrupt, SystemExit: as themselves
        if cause is None:
            cause, first = exc, m
    if cause is not None:
        # A Python callback raised: the error is the plugin's. If C went on
        # (another combination, a fallback) or said something else, the
        # Python error still stands, and its message goes first.
        if not msg:
            msg = first
        elif first not in msg:
            # C's message usually holds the Python one after the layer and
            # entry it came through, cut short where it is long: keep that
            # context and the whole Python message, once.
            at = msg.find(first[:64])
            msg = msg[:at] + first if at >= 0 else "%s (after: %s)" % (first, msg)
        status = C.PRT_ERR_PLUGIN
    err = error_for(status, msg)
    if cause is not None:
        raise err from cause
    raise err


def call(f, *args):
    """Calls a C function returning prt_status; raises on failure."""
    p = pending()
    mark = len(p)
    st = f(*args)
    if st or len(p) > mark:
        items = p[mark:]
        del p[mark:]
        _raise(st, items)


def check(st, mark=None):
    """Raises for a status a caller got itself (mark: len(pending()) before)."""
    p = pending()
    if st or (mark is not None and len(p) > mark):
        items = p[mark:] if mark is not None else []
        if mark is not None:
            del p[mark:]
        _raise(st, items)

"""Objects owning a C object: their handle, close(), and `with`, as
TensorRT's Python objects have it."""

import weakref
from typing import Any, TypeVar

from . import _errors as E

T = TypeVar("T", bound="Closable")


class Closable:
    """An object owning a C object (`_h`, freed by `_finalizer`, which
    collection also runs): `with obj as o:` gives obj itself, and the
    block's end calls obj.close(), which releases what it owns (as
    TensorRT's __exit__ destroyed its object); using it afterwards raises
    plugrt.StateError. `_what` names it in that error."""

    _what = "object"
    _h: Any
    _finalizer: weakref.finalize

    @property
    def handle(self) -> int:
        """The C object's address; StateError once closed."""
        if not self._finalizer.alive:
            raise E.StateError("the %s is closed" % self._what)
        return self._h

    def close(self) -> None:
        """Destroys the C object now (`with` does at the block's end); what
        was made from it does not need it unless its class says so."""
        self._finalizer()

    def _alive(self) -> bool:
        return self._finalizer.alive

    def _describe(self) -> str:
        """What __repr__ says of an open object after its class name."""
        return ""

    def __repr__(self) -> str:
        if not self._alive():
            return "<plugrt.%s (closed)>" % type(self).__name__
        text = self._describe()
        return "<plugrt.%s%s>" % (type(self).__name__, " " + text if text else "")

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()


class NothingToClose:
    """An object owning no C object of its own (a Builder, a Runtime: the
    engines and networks they make outlive them): `with obj as o:` gives
    obj, and the block's end releases nothing, as in TensorRT 8 and later
    ("context managers have no effect; objects are freed when the
    reference count reaches 0")."""

    def __enter__(self: Any) -> Any:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        return None


__all__ = ["Closable", "NothingToClose"]

"""python -m plugrt.check MODULE[:NAME] [checker options]: the plugin
checker (`plugrt check`, plugin.h's contract) on Python plugins.

Importing MODULE registers its plugins (decorator plugins of plugrt.plugin,
creators given to get_plugin_registry().register_creator) in the default
registry; those it adds (or the one NAME: name, ns::name or
ns::name@version) are the library the checker checks, with every check of
`plugrt check LIB.so` and the same options (--fields, --seed,
--iterations, --json, ...; --help lists them). The exit status is the
checker's; 1 also when the module cannot be imported or registers no
plugin, 2 for wrong usage.

The checker is C (libplugrt_check.so in the package: prt_check_main). It
runs each check in a forked copy of this process, and each copy asks
_entry for the library, as a child of `plugrt check` opens a plugin
library: the plugins run where the module made them. ctypes releases the
GIL while the checker runs, so those calls (from two threads at once in
the threads check) take it as any thread of C's does. What the plugins
report through set_error goes to the checker (_capi.use_host_services),
which checks that each failure says why.

`plugrt check --python MODULE[:NAME] ...` runs this module.
"""

import ctypes
import importlib
import sys
import threading
import traceback
from typing import List, Optional

from . import _capi as C
from ._registry import get_plugin_registry

USAGE = "usage: python -m plugrt.check MODULE[:NAME] [checker options] (--help: the options)"


def _say(msg: str) -> None:
    print("plugrt check: error: %s" % msg, file=sys.stderr)


def _matches(pattern: str, cb) -> bool:
    """NAME as the checker's --plugin takes a key (ns::name@version,
    ns::name, and for the empty namespace name@version and name), or the
    bare name in any namespace."""
    ns, name, version = cb.namespace, cb.name, cb.version
    keys = {"%s::%s@%s" % (ns, name, version), "%s::%s" % (ns, name), name}
    if not ns:
        keys |= {"%s@%s" % (name, version)}
    return pattern in keys


def _import(module: str):
    """Imports the module; returns the Python creators it added to the
    default registry, in the order it added them, or None after saying
    why it failed."""
    reg = get_plugin_registry()
    before = set(reg._python)
    try:
        importlib.import_module(module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the module's fault
        traceback.print_exc()
        _say("cannot import %s: %s: %s" % (module, type(exc).__name__, exc))
        return None
    return [cb for key, cb in reg._python.items() if key not in before]


class _Library:
    """A prt_plugin_library of the chosen creators, and the entry point
    that answers with it (kept alive while the checker runs)."""

    def __init__(self, label: str, creators: List) -> None:
        self._name = C.b(label)
        self._creators = (ctypes.c_void_p * len(creators))(*[cb.addr for cb in creators])
        self.struct = C.prt_plugin_library(
            ctypes.sizeof(C.prt_plugin_library), C.PRT_PLUGIN_ABI_VERSION, self._name,
            C.b(sys.modules["plugrt"].__version__), len(creators),
            ctypes.cast(self._creators, ctypes.POINTER(ctypes.c_void_p)))
        self.entry = C.PLUGIN_ENTRY_FN(self._entry)

    def _entry(self, host_abi_version, services):
        if host_abi_version < C.PRT_PLUGIN_ABI_VERSION or not services:
            return None
        C.use_host_services(services.contents)
        return ctypes.addressof(self.struct)


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return _usage("name the module whose plugins to check")
    if args[0] in ("-h", "--help"):
        return _run("python:MODULE", [], ["--help"])
    spec = args.pop(0)
    if spec.startswith("-"):
        return _usage("name the module first, not %s" % spec)
    module, _, name = spec.partition(":")
    if not module:
        return _usage("no module in %r" % spec)
    creators = _import(module)
    if creators is None:
        return 1
    if not creators:
        _say("importing %s registers no Python plugin in plugrt's default registry (the "
             "checker takes decorator plugins, @plugrt.plugin.register, and creators "
             "given to get_plugin_registry().register_creator; a C library's plugins: "
             "plugrt check LIB.so)" % module)
        return 1
    if threading.active_count() > 1:
        # Each check forks this process, and only the forking thread goes
        # on in the copy: a lock another thread holds then stays held.
        print("plugrt check: warning: importing %s started %d other Python thread(s); "
              "the checks run in forked copies of this process, where those threads "
              "do not run (a lock one of them holds at a fork stays held)" % (
                  module, threading.active_count() - 1), file=sys.stderr)
    if name:
        chosen = [cb for cb in creators if _matches(name, cb)]
        if not chosen:
            _say("%s registers no plugin %s; it registers %s" % (
                module, name, ", ".join("%s::%s@%s" % (cb.namespace, cb.name, cb.version)
                                        for cb in creators)))
            return 1
        creators = chosen
    return _run("python:%s" % spec, creators, args)


def _usage(msg: str = "") -> int:
    if msg:
        _say(msg)
    print(USAGE, file=sys.stderr)
    return 2


def _run(label: str, creators: List, args: List[str]) -> int:
    if C.CHECK_LIBRARY is None:
        _say("the checker library (libplugrt_check.so) is not in %s: the package is not "
             "installed properly (pip install ./python builds it)" % C.LIBDIR)
        return 1
    checker = ctypes.CDLL(C.CHECK_LIBRARY)
    run = checker.prt_check_main
    run.restype = ctypes.c_int
    run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), C.PLUGIN_ENTRY_FN]
    lib = _Library(label, creators)
    words = [b"check", C.b(label)] + [C.b(a) for a in args]
    argv = (ctypes.c_char_p * (len(words) + 1))(*words, None)
    # The checker forks: what Python buffered would be written twice.
    sys.stdout.flush()
    sys.stderr.flush()
    return int(run(len(words), argv, lib.entry))


if __name__ == "__main__":
    sys.exit(main())

"""The installed package: importable from anywhere, libraries inside it,
struct layouts equal to the C compiler's, reprs that say what an object is."""

import ctypes
import os
import shutil
import subprocess
import sys

import pytest

import plugrt as trt
from plugrt import _capi

from conftest import REPO


def test_import_from_any_directory(tmp_path):
    out = subprocess.run([sys.executable, "-c", "import plugrt, os; print(plugrt.__file__); "
                          "print(plugrt.__version__); print(plugrt.PLUGINS_LIBRARY)"],
                         cwd=str(tmp_path), capture_output=True, text=True, check=True)
    path, version, plugins = out.stdout.split()
    assert version == trt.__version__ and version.count(".") == 2
    assert os.path.isfile(plugins)
    libdir = os.environ.get("PLUGRT_LIBRARY_DIR") or os.path.join(os.path.dirname(path), "_libs")
    assert os.path.dirname(plugins) == libdir


def test_libraries_ship_inside_the_package():
    libdir = os.path.join(os.path.dirname(trt.__file__), "_libs")
    if os.environ.get("PLUGRT_LIBRARY_DIR"):
        pytest.skip("PLUGRT_LIBRARY_DIR points elsewhere")
    names = os.listdir(libdir)
    assert any(n.startswith("libplugrt.so") for n in names)
    assert "libplugrt_plugins.so" in names and "libplugrt_onnx.so" in names
    assert "libplugrt_check.so" in names  # python -m plugrt.check
    assert _capi.LIBPLUGRT_PATH.startswith(libdir)


def test_onnx_library_exports_only_its_api():
    nm = shutil.which("nm")
    if nm is None or _capi._ONNX_PATH is None:
        pytest.skip("no nm or no importer")
    out = subprocess.run([nm, "-D", "--defined-only", _capi._ONNX_PATH], capture_output=True,
                         text=True, check=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if l.strip()]
    assert syms and all(s.startswith("prt_onnx_") for s in syms), syms


def test_checker_library_exports_only_its_entry():
    nm = shutil.which("nm")
    if nm is None or _capi.CHECK_LIBRARY is None:
        pytest.skip("no nm or no checker library")
    out = subprocess.run([nm, "-D", "--defined-only", _capi.CHECK_LIBRARY],
                         capture_output=True, text=True, check=True).stdout
    assert [l.split()[-1] for l in out.splitlines() if l.strip()] == ["prt_check_main"]


def test_version_matches_cmake():
    text = open(os.path.join(REPO, "CMakeLists.txt")).read()
    assert "project(plugrt VERSION %s" % trt.__version__ in text


LAYOUT_C = r"""
#include <stddef.h>
#include <stdio.h>
#include "plugrt/plugrt.h"
#define S(T) printf("S %s %zu %zu\n", #T, sizeof(T), _Alignof(T))
#define F(T, f) printf("F %s.%s %zu\n", #T, #f, offsetof(T, f))
int main(void)
{
@BODY@
    return 0;
}
"""


def test_struct_layouts_match_the_c_compiler(tmp_path):
    """Every struct the binding declares, its size, alignment and each
    field's offset, as gcc lays them out from the public headers."""
    cc = shutil.which("cc") or shutil.which("gcc")
    inc = os.path.join(REPO, "include")
    if cc is None or not os.path.isfile(os.path.join(inc, "plugrt", "plugrt.h")):
        pytest.skip("no C compiler or no headers")
    gen = tmp_path / "gen" / "plugrt"
    gen.mkdir(parents=True)
    (gen / "version.h").write_text("#define PRT_VERSION \"0\"\n#define PRT_VERSION_NUMBER 0\n")
    body = []
    for name, cls in _capi.STRUCTS.items():
        body.append("    S(%s);" % name)
        body += ["    F(%s, %s);" % (name, f[0]) for f in cls._fields_]
    src = tmp_path / "layout.c"
    src.write_text(LAYOUT_C.replace("@BODY@", "\n".join(body)))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", inc, "-I", str(tmp_path / "gen"), str(src), "-o",
                    str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    bad = []
    for line in out.splitlines():
        kind, what, *nums = line.split()
        if kind == "S":
            cls = _capi.STRUCTS[what]
            if (ctypes.sizeof(cls), ctypes.alignment(cls)) != (int(nums[0]), int(nums[1])):
                bad.append("%s: C %s/%s, ctypes %d/%d" % (what, nums[0], nums[1],
                                                          ctypes.sizeof(cls), ctypes.alignment(cls)))
        else:
            sname, fname = what.split(".")
            off = getattr(_capi.STRUCTS[sname], fname).offset
            if off != int(nums[0]):
                bad.append("%s: C offset %s, ctypes %d" % (what, nums[0], off))
    assert not bad, bad
    assert len(out.splitlines()) == sum(1 + len(c._fields_) for c in _capi.STRUCTS.values())


def test_reprs_say_what_an_object_is(rng):
    """The core classes' reprs name the object and its key fields in one
    short line (most were <... object at 0x...>), and never raise, closed
    or not."""
    import plugins_for_tests as P  # noqa: PLC0415 - registers tests::twice
    import plugrt.plugin as trtp  # noqa: PLC0415
    logger = trt.Logger(trt.Logger.INFO)
    b = trt.Builder(logger)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1, 4))
    layer = net.add_plugin_v3([x], [], P.ScalePlugin(2.0))
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    prof.set_shape("x", (1, 4), (2, 4), (8, 4))
    cfg.add_optimization_profile(prof)
    plan = b.build_serialized_network(net, cfg)
    rt = trt.Runtime(logger)
    engine = rt.deserialize_cuda_engine(plan)
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", (3, 4))
    parser = trt.OnnxParser(b.create_network(), logger)
    want = [
        (b, "<plugrt.Builder, the default registry>"),
        (rt, "<plugrt.Runtime, the default registry>"),
        (logger, "<plugrt.Logger INFO>"),
        (net, "<plugrt.INetworkDefinition inputs [x FLOAT (-1, 4)], outputs [y]>"),
        (prof, "<plugrt.IOptimizationProfile: x (1, 4)..(2, 4)..(8, 4)>"),
        (cfg, "<plugrt.IBuilderConfig cpu, autotune on, workspace 1024 MiB, 1 profile>"),
        (plan, "<plugrt.HostMemory %d bytes>" % len(plan)),
        (engine, "<plugrt.ICudaEngine on cpu: input x FLOAT (-1, 4), output y FLOAT (-1, 4)>"),
        (ctx, "<plugrt.IExecutionContext on cpu, profile 0: x (3, 4)>"),
        (parser, "<plugrt.OnnxParser into <plugrt.INetworkDefinition inputs [], outputs []>, "
                 "0 errors>"),
        (P.ScalePlugin(1.0), "<Python plugin tests::PyScale version 1 (ScalePlugin)>"),
        (P.ScaleCreator(), "<Python plugin creator tests::PyScale version 1 (ScaleCreator)>"),
        (trtp.get_plugin("tests::twice"), "<plugrt.plugin.PluginDef tests::twice(x, factor=2.0) "
                                          "on cpu+cuda>"),
        (trt.PluginResourceContext(trt.Device.CPU), "PluginResourceContext(device=CPU)"),
    ]
    for obj, text in want:
        assert repr(obj) == text
    assert repr(trt.Registry()) == "<plugrt.Registry with 0 creators>"
    for obj in (ctx, engine, net, cfg, parser):
        obj.close()
        assert repr(obj) == "<plugrt.%s (closed)>" % type(obj).__name__


def test_type_checks(tmp_path):
    """The package ships py.typed: mypy finds no error in it (where mypy is
    installed), and every public function and method of plugrt and
    plugrt.plugin is annotated."""
    import enum  # noqa: PLC0415
    import inspect  # noqa: PLC0415
    import plugrt.plugin as trtp  # noqa: PLC0415
    missing = []
    for mod in (trt, trtp):
        for name in mod.__all__:
            obj = getattr(mod, name)
            funcs = []
            if inspect.isfunction(obj):
                funcs.append((name, obj))
            elif inspect.isclass(obj) and not issubclass(obj, (enum.Enum, BaseException)):
                for k, v in vars(obj).items():
                    if k.startswith("_") and k != "__init__":
                        continue
                    if isinstance(v, property):
                        funcs += [(name + "." + k, f) for f in (v.fget, v.fset) if f]
                    elif isinstance(v, (staticmethod, classmethod)):
                        funcs.append((name + "." + k, v.__func__))
                    elif inspect.isfunction(v):
                        funcs.append((name + "." + k, v))
            for qual, f in funcs:
                if "plugrt" not in (inspect.getsourcefile(f) or ""):
                    continue  # inherited from outside (enum, bytes, list)
                sig = inspect.signature(f)
                bare = [n for n, p in sig.parameters.items()
                        if n not in ("self", "cls") and p.annotation is p.empty
                        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
                if sig.return_annotation is sig.empty and f.__name__ != "__init__":
                    bare.append("return")
                if bare:
                    missing.append("%s: %s" % (qual, ", ".join(bare)))
    assert not missing, missing
    pytest.importorskip("mypy", reason="mypy is not installed")
    # By name, as users' code finds it: installed, mypy finds it among the
    # interpreter's packages; from the tree (PYTHONPATH), through MYPYPATH.
    env = dict(os.environ)
    where = os.path.dirname(os.path.dirname(trt.__file__))
    if "site-packages" not in where:
        env["MYPYPATH"] = where
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                        "-p", "plugrt"], capture_output=True, text=True, cwd=str(tmp_path),
                       env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_optional_extras():
    """plugrt[onnx] brings onnx (what makes and edits models in Python) and
    plugrt[torch] torch, as the installed package's metadata says."""
    from importlib import metadata  # noqa: PLC0415
    try:
        md = metadata.metadata("plugrt")
    except metadata.PackageNotFoundError:
        pytest.skip("plugrt is not installed as a distribution (PYTHONPATH run)")
    assert {"onnx", "torch"} <= set(md.get_all("Provides-Extra") or [])
    reqs = md.get_all("Requires-Dist") or []
    for extra in ("onnx", "torch"):
        assert any(r.startswith(extra) and 'extra == "%s"' % extra in r for r in reqs), reqs

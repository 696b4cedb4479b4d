"""python -m plugrt.check (and plugrt check --python): the plugin checker on
the Python plugins a module registers (check_plugins.py), each run in a
process of its own, verdicts read from its --json report; and the example
plugins of examples/python, each of which must pass with every run-time
check run.

`plugrt check --python` needs the plugrt program: PLUGRT_CLI names it
(scripts/test.sh gives the one it built); without it that test skips."""

import json
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES, HERE

# The checks that run the plugin: a plugin that passes "every check that
# applies" passes these, so none is a pass by not running.
RUN_TIME = ("coverage", "bounds", "repeat", "clone", "attach", "serialize", "contexts",
            "threads", "empty-inputs")


def _env(extra=None):
    env = dict(os.environ)
    # check_plugins.py beside this file.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, env.get("PYTHONPATH")) if p)
    env.update(extra or {})
    return env


def check(*args, cwd=None):
    """Runs python -m plugrt.check ARGS --json: (exit status, report or
    None, stderr)."""
    p = subprocess.run([sys.executable, "-m", "plugrt.check", *args, "--json"],
                       capture_output=True, text=True, env=_env(), cwd=cwd, timeout=600)
    try:
        report = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        pytest.fail("not JSON (exit %d): %s\n%s" % (p.returncode, p.stdout, p.stderr))
    return p.returncode, report, p.stderr


def verdicts(report):
    """{plugin key: {check: status}} and the library checks under ''."""
    out = {"": {c["check"]: c["status"] for c in report["library_checks"]}}
    for pl in report["plugins"]:
        out[pl["key"]] = {c["check"]: c["status"] for c in pl["checks"]}
    return out


@pytest.mark.parametrize("name,key", [("pcheck::affine", "pcheck::affine@1"),
                                      ("Offset", "pcheck::Offset@1")])
def test_good_plugins_pass_every_check_they_run(name, key):
    rc, report, err = check("check_plugins:" + name)
    v = verdicts(report)
    assert set(v) == {"", key}, v
    assert v[""] == {"abi": "pass"}
    failed = {c: s for c, s in v[key].items() if s == "fail"}
    assert not failed, (failed, err)
    for c in RUN_TIME + ("abi", "outputs", "formats", "errors"):
        assert v[key][c] == "pass", (c, v[key])
    assert rc == 0, err
    if name == "pcheck::affine":
        assert v[key]["tactics"] == "pass"  # two tactics, the same bits


@pytest.mark.parametrize("name,key,check_name", [
    ("Lazy", "pcheck::Lazy@1", "coverage"),            # enqueue writes nothing
    ("pcheck::overrun", "pcheck::overrun@1", "bounds"),  # a float past its output
    ("pcheck::drifting", "pcheck::drifting@1", "repeat"),  # another result each run
])
def test_broken_plugins_fail_the_check_for_their_defect(name, key, check_name):
    rc, report, err = check("check_plugins:" + name)
    v = verdicts(report)[key]
    assert v[check_name] == "fail", v
    assert rc != 0
    # Everything up to the run-time checks held: the defect is what failed.
    assert v["abi"] == v["outputs"] == v["errors"] == "pass", v


def test_every_plugin_of_a_module_without_name():
    rc, report, _ = check("check_plugins", "--iterations", "1")
    keys = [pl["key"] for pl in report["plugins"]]
    assert keys == ["pcheck::affine@1", "pcheck::overrun@1", "pcheck::drifting@1",
                    "pcheck::Offset@1", "pcheck::Lazy@1"]
    assert report["library"] == "python:check_plugins"
    assert rc != 0


def test_module_that_fails_to_import(tmp_path):
    (tmp_path / "pc_broken.py").write_text("import plugrt\nraise RuntimeError('no luck')\n")
    rc, report, err = check("pc_broken", cwd=str(tmp_path))
    assert rc == 1 and report is None
    assert "cannot import pc_broken: RuntimeError: no luck" in err


def test_module_that_registers_no_plugin(tmp_path):
    (tmp_path / "pc_empty.py").write_text("import plugrt\nX = 1\n")
    rc, report, err = check("pc_empty", cwd=str(tmp_path))
    assert rc == 1 and report is None
    assert "importing pc_empty registers no Python plugin" in err
    rc, report, err = check("pc_missing_module", cwd=str(tmp_path))
    assert rc == 1 and "cannot import pc_missing_module: ModuleNotFoundError" in err


def test_name_the_module_does_not_register():
    rc, report, err = check("check_plugins:pcheck::nothing")
    assert rc == 1 and report is None
    assert "check_plugins registers no plugin pcheck::nothing" in err
    assert "pcheck::affine@1" in err


def test_usage():
    p = subprocess.run([sys.executable, "-m", "plugrt.check"], capture_output=True,
                       text=True, env=_env())
    assert p.returncode == 2 and "MODULE[:NAME]" in p.stderr
    p = subprocess.run([sys.executable, "-m", "plugrt.check", "--help"], capture_output=True,
                       text=True, env=_env())
    assert p.returncode == 0 and "--python MODULE[:NAME]" in p.stdout
    assert "coverage" in p.stdout


def test_plugrt_check_python_gives_the_same_verdicts():
    cli = os.environ.get("PLUGRT_CLI")
    if not cli or not os.access(cli, os.X_OK):
        pytest.skip("PLUGRT_CLI does not name the plugrt program")
    for name in ("Lazy", "pcheck::affine", "pcheck::drifting"):
        _, want, _ = check("check_plugins:" + name)
        p = subprocess.run([cli, "check", "--python", "check_plugins:" + name, "--json"],
                           capture_output=True, text=True, timeout=600,
                           env=_env({"PLUGRT_PYTHON": sys.executable}))
        got = json.loads(p.stdout)
        assert verdicts(got) == verdicts(want), (name, p.stderr)
        assert (p.returncode == 0) == (name == "pcheck::affine"), p.stderr


def test_module_that_starts_a_thread_is_warned_of_and_checked(tmp_path):
    (tmp_path / "pc_thread.py").write_text(
        "import threading\nimport check_plugins  # noqa: F401\n"
        "stop = threading.Event()\n"
        "threading.Thread(target=stop.wait, daemon=True).start()\n")
    rc, report, err = check("pc_thread:pcheck::affine", "--iterations", "1",
                            cwd=str(tmp_path))
    assert "importing pc_thread started 1 other Python thread(s)" in err
    assert verdicts(report)["pcheck::affine@1"]["threads"] == "pass"
    assert rc == 0, err


# ---- the example plugins (examples/python) ------------------------------------

# Each plugin module of examples/python, as python -m plugrt.check is given
# it: (module, source of a module registering the plugins when the example
# registers them only in main(), the --fields file's content, the keys it
# must check). Every module there is here or in NO_PYTHON_PLUGIN.
EXAMPLE_CHECKS = {
    # A pad larger than the dim it pads (the last dim is drawn 1..), which
    # once made tactic 2 disagree with tactic 0.
    "circ_pad_plugin pads [1, 2]": (
        "circ_pad_plugin", None, {"sample::circ_pad_plugin": {"pads": [1, 2]}},
        ["sample::circ_pad_plugin@1"]),
    "circ_pad_plugin pads [3, 5, 2, 1]": (
        "circ_pad_plugin", None, {"sample::circ_pad_plugin": {"pads": [3, 5, 2, 1]}},
        ["sample::circ_pad_plugin@1"]),
    # add_in_place computes out += b: its output holds a's copy at enqueue.
    "in_place_add": ("in_place_add", None, None,
                     ["sample::add_in_place@1", "sample::double@1"]),
    # The example registers its creator in main(), with the backend it is
    # given: numpy is the CPU's.
    "non_zero_plugin": (
        "pc_non_zero", "import non_zero_plugin\nimport plugrt\n\n"
        "plugrt.get_plugin_registry().register_creator(\n"
        "    non_zero_plugin.NonZeroPluginCreator(\"numpy\"), \"\")\n",
        None, ["NonZeroPlugin@1"]),
}
NO_PYTHON_PLUGIN = {
    # It builds networks over the standard C library's CustomHardmax, which
    # tests/check/standard.sh checks (plugrt check LIB.so).
    "onnx_custom_plugin",
    # Its plugin has only an aot_impl: a CUDA kernel layer, nothing the
    # checker can run; python/tests/gpu_run.sh runs its engine on the GPU.
    "circ_pad_aot",
    # Its plugin is made (from_torch_op) only where torch has triton_op and
    # a GPU is: importing it registers nothing; gpu_run.sh runs its engine.
    "torch_triton_op_aot",
}
# The run-time checks each example plugin must pass, not skip: every one
# that applies on the CPU. A plugin with tactics passes tactics by
# comparing them; one whose output aliases an input passes alias.
EXAMPLE_RUN_TIME = RUN_TIME + ("tactics",)


def test_every_example_module_is_checked():
    modules = {f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py")}
    checked = {case.split(" ")[0] for case in EXAMPLE_CHECKS}
    assert modules == checked | NO_PYTHON_PLUGIN, modules ^ (checked | NO_PYTHON_PLUGIN)


def test_an_example_without_python_plugins_says_so():
    rc, report, err = check("onnx_custom_plugin", cwd=EXAMPLES)
    assert rc == 1 and report is None
    assert "importing onnx_custom_plugin registers no Python plugin" in err


@pytest.mark.parametrize("case", sorted(EXAMPLE_CHECKS))
def test_example_plugins_pass_with_their_run_time_checks_run(case, tmp_path):
    module, source, fields, keys = EXAMPLE_CHECKS[case]
    args = [module]
    if source:
        (tmp_path / (module + ".py")).write_text(source)
    if fields:
        (tmp_path / "fields.json").write_text(json.dumps(fields))
        args += ["--fields", str(tmp_path / "fields.json")]
    # The example's directory first: the module and what it imports.
    p = subprocess.run([sys.executable, "-m", "plugrt.check", *args, "--json"],
                       capture_output=True, text=True, cwd=str(tmp_path), timeout=600,
                       env=_env({"PYTHONPATH": os.pathsep.join(
                           d for d in (EXAMPLES, str(tmp_path), HERE,
                                       os.environ.get("PYTHONPATH")) if d)}))
    report = json.loads(p.stdout) if p.stdout.strip() else None
    assert report is not None, (p.returncode, p.stderr)
    v = verdicts(report)
    assert sorted(v) == sorted([""] + keys), v
    for key in keys:
        failed = {c: s for c, s in v[key].items() if s == "fail"}
        assert not failed, (case, key, failed, p.stderr)
        not_run = [c for c in EXAMPLE_RUN_TIME if v[key][c] != "pass"]
        assert not not_run, (case, key, {c: v[key][c] for c in not_run})
    assert p.returncode == 0, p.stderr
    if module == "in_place_add":
        assert v["sample::add_in_place@1"]["alias"] == "pass"
        coverage = [c["message"] for pl in report["plugins"] for c in pl["checks"]
                    if pl["key"] == "sample::add_in_place@1" and c["check"] == "coverage"]
        assert "hold the input's copy" in coverage[0], coverage

"""python -m plugrt.check (and plugrt check --python): the plugin checker on
the Python plugins a module registers (check_plugins.py), each run in a
process of its own, verdicts read from its --json report.

`plugrt check --python` needs the plugrt program: PLUGRT_CLI names it
(scripts/test.sh gives the one it built); without it that test skips."""

import json
import os
import subprocess
import sys

import pytest

from conftest import HERE

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

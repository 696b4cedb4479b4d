"""The examples in examples/python run and print their verdict."""

import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES, MODELS

VERDICT = "Inference result correct!"


def run(script, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)] + list(args),
                       capture_output=True, text=True, cwd=EXAMPLES, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == VERDICT, r.stdout
    return r.stdout


@pytest.mark.parametrize("net_type", ["network", "onnx"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_non_zero_plugin(net_type, precision):
    run("non_zero_plugin.py", "--net-type", net_type, "--precision", precision, "--backend",
        "numpy")


def test_non_zero_plugin_gpu_backends_say_later():
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "non_zero_plugin.py"),
                        "--backend", "cuda"], capture_output=True, text=True)
    assert r.returncode == 2 and "later" in r.stdout


def test_circ_pad_plugin():
    out = run("circ_pad_plugin.py")
    for net_type in ("network", "onnx"):
        for prec in ("fp32", "fp16"):
            assert "%s %s: tactic" % (net_type, prec) in out


def test_onnx_custom_plugin():
    if not os.path.isdir(MODELS):
        pytest.skip("no seed models")
    out = run("onnx_custom_plugin.py", "--models", MODELS)
    assert "56 cases" in out


def test_in_place_add():
    out = run("in_place_add.py")
    assert out.count(": True") == 3

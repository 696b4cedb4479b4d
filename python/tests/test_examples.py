"""The examples in examples/python run and print their verdict."""

import os
import subprocess
import sys

import pytest

from conftest import CUDA_REASON, EXAMPLES, MODELS

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


@pytest.mark.skipif(CUDA_REASON is None, reason="there is a CUDA device here")
@pytest.mark.parametrize("script,args", [
    ("non_zero_plugin.py", ["--backend", "torch"]), ("non_zero_plugin.py", ["--backend", "cuda"]),
    ("circ_pad_plugin.py", ["--device", "cuda"]), ("in_place_add.py", ["--device", "cuda"]),
    ("onnx_custom_plugin.py", ["--device", "cuda"])])
def test_gpu_options_without_a_gpu_say_why(script, args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)] + args,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "needs a CUDA device" in r.stdout, r.stdout + r.stderr


def test_circ_pad_plugin():
    out = run("circ_pad_plugin.py")
    for net_type in ("network", "onnx"):
        for prec in ("fp32", "fp16"):
            assert "%s %s on cpu: tactic" % (net_type, prec) in out


def test_onnx_custom_plugin():
    if not os.path.isdir(MODELS):
        pytest.skip("no seed models")
    out = run("onnx_custom_plugin.py", "--models", MODELS)
    assert "56 cases" in out


def test_in_place_add():
    out = run("in_place_add.py")
    assert out.count(": True") == 3


# On the GPU: the examples with their GPU backends (torch, NVRTC through
# cupy, Triton) and CUDA engines.

def _needs(*modules):
    for m in modules:
        pytest.importorskip(m, reason="%s is not installed" % m)


@pytest.mark.cuda
@pytest.mark.parametrize("net_type", ["network", "onnx"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("backend", ["torch", "cuda"])
def test_non_zero_plugin_on_the_gpu(backend, net_type, precision):
    _needs("torch" if backend == "torch" else "cupy")
    run("non_zero_plugin.py", "--net-type", net_type, "--precision", precision, "--backend",
        backend)


@pytest.mark.cuda
def test_circ_pad_plugin_on_the_gpu():
    _needs("torch", "triton")
    out = run("circ_pad_plugin.py", "--device", "cuda")
    for net_type in ("network", "onnx"):
        for prec in ("fp32", "fp16"):
            assert "%s %s on cuda: tactic" % (net_type, prec) in out


@pytest.mark.cuda
def test_onnx_custom_plugin_on_the_gpu():
    if not os.path.isdir(MODELS):
        pytest.skip("no seed models")
    out = run("onnx_custom_plugin.py", "--models", MODELS, "--device", "cuda")
    assert "on cuda: 56 cases" in out


@pytest.mark.cuda
def test_in_place_add_on_the_gpu():
    _needs("torch")
    out = run("in_place_add.py", "--device", "cuda")
    assert out.count(": True") == 3


@pytest.mark.parametrize("script", ["circ_pad_aot.py", "torch_triton_op_aot.py"])
def test_aot_examples_without_a_gpu_skip_cleanly(script):
    if CUDA_REASON is None:
        pytest.skip("a GPU is here: the GPU test runs it")
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)],
                       capture_output=True, text=True, cwd=EXAMPLES, timeout=120)
    assert r.returncode == 0 and "skipped: no usable CUDA device" in r.stdout, r.stdout + r.stderr


@pytest.mark.cuda
def test_circ_pad_aot_on_the_gpu():
    _needs("torch", "triton")
    cli = os.environ.get("PLUGRT_CLI")
    if not cli:
        pytest.skip("PLUGRT_CLI names no plugrt program")
    out = run("circ_pad_aot.py", "--plugrt", cli)
    assert out.count("by plugrt run (no Python): matches") == 3, out


@pytest.mark.cuda
def test_torch_triton_op_aot_on_the_gpu():
    _needs("torch", "triton")
    import torch  # noqa: PLC0415
    if not hasattr(torch.library, "triton_op"):
        pytest.skip("torch %s has no torch.library.triton_op" % torch.__version__)
    cli = os.environ.get("PLUGRT_CLI")
    if not cli:
        pytest.skip("PLUGRT_CLI names no plugrt program")
    out = run("torch_triton_op_aot.py", "--plugrt", cli)
    assert out.count("against the torch op: matches") == 3, out

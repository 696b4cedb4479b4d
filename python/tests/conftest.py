"""Shared fixtures. The tests run against the installed plugrt package
(scripts/test.sh installs the wheel into a virtual environment).

CUDA tests are marked `cuda` and skip, saying why, where this build or
machine has no usable CUDA device (no GPU, no driver, a CPU-only build), and
those needing torch or cupy skip where it is missing or sees no GPU
(python/tests/gpu_run.sh runs them all on a GPU machine)."""

import itertools
import os
import sys

import numpy as np
import pytest

import plugrt as trt

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
EXAMPLES = os.path.join(REPO, "examples", "python")
# The seed models: ../shared/models beside the repository, or PLUGRT_MODELS.
MODELS = os.environ.get("PLUGRT_MODELS") or os.path.normpath(
    os.path.join(REPO, "..", "shared", "models"))
sys.path.insert(0, HERE)  # helper modules (plugins_for_tests.py)

_ids = itertools.count()


@pytest.fixture
def uid():
    """A fresh name per call: plugins registered in the default registry
    live for the whole session, so tests use names of their own."""
    return lambda prefix="t": "%s%d_%d" % (prefix, os.getpid(), next(_ids))


@pytest.fixture(scope="session")
def std_registry():
    """A registry holding the standard plugin library."""
    reg = trt.Registry()
    reg.load_library(trt.PLUGINS_LIBRARY)
    return reg


@pytest.fixture
def logger():
    return trt.Logger(trt.Logger.WARNING)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


_why = trt.device_unavailable("cuda")
CUDA_REASON = "no usable CUDA device: %s" % _why if _why else None
#: Skips a test where plugrt cannot run CUDA engines.
requires_cuda = pytest.mark.skipif(CUDA_REASON is not None, reason=CUDA_REASON or "")


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "cuda" in item.keywords and CUDA_REASON is not None:
            item.add_marker(pytest.mark.skip(reason=CUDA_REASON))


@pytest.fixture(scope="session")
def torch():
    """torch with CUDA, or a skip saying what is missing."""
    if CUDA_REASON is not None:
        pytest.skip(CUDA_REASON)
    t = pytest.importorskip("torch", reason="torch is not installed")
    if not t.cuda.is_available():
        pytest.skip("torch %s sees no CUDA device" % t.__version__)
    return t


@pytest.fixture(scope="session")
def cupy():
    """cupy with a GPU, or a skip saying what is missing."""
    if CUDA_REASON is not None:
        pytest.skip(CUDA_REASON)
    c = pytest.importorskip("cupy", reason="cupy is not installed")
    try:
        c.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - cupy's own error type
        pytest.skip("cupy cannot use the GPU: %s" % e)
    return c


def models_dir():
    if not os.path.isdir(MODELS):
        pytest.skip("the seed models are not at %s" % MODELS)
    return MODELS

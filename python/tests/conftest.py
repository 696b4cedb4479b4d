"""Shared fixtures. The tests run against the installed plugrt package
(scripts/test.sh installs the wheel into a virtual environment)."""

import itertools
import os
import sys

import numpy as np
import pytest

import plugrt as trt

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
EXAMPLES = os.path.join(REPO, "examples", "python")
MODELS = os.path.normpath(os.path.join(REPO, "..", "shared", "models"))
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


def models_dir():
    if not os.path.isdir(MODELS):
        pytest.skip("the seed models are not at %s" % MODELS)
    return MODELS

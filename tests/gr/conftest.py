"""Fixtures of the GNU Radio QA (tests/gr): skip without GNU Radio, pick the CPU backend."""
import os

import numpy as np
import pytest

pytest.importorskip("gnuradio.gr", reason="GNU Radio is not installed")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def backend():
    """The compiled CPU backend when it is built, else the NumPy reference (both CPU-only)."""
    import gpuldpc as gl

    try:
        gl.Decoder(gl.codes.get("wifi-648-1/2"), backend="cpu")
        return "cpu"
    except gl.BackendUnavailable:
        return "reference"


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)

"""Fixtures of the GNU Radio QA (tests/gr): skip without GNU Radio (the backend fixture is in tests/conftest.py)."""
import os

import numpy as np
import pytest

pytest.importorskip("gnuradio.gr", reason="GNU Radio is not installed")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)

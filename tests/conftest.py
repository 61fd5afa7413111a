"""Fixtures shared by every test folder."""
import importlib.util
import os

import pytest


@pytest.fixture(scope="session")
def native_core():
    """The compiled module ``gpuldpc._core``.

    Without it the test is skipped (a source tree on PYTHONPATH), except in CI
    (``CI`` set, as ``.ci/run`` runs): there the package was just built and
    installed, so a missing module is a failure.
    """
    from gpuldpc import _native

    if not _native.available():
        if os.environ.get("CI"):
            pytest.fail(f"CI: {_native.why_unavailable()}")
        pytest.skip(_native.why_unavailable())
    return _native.core()


@pytest.fixture(scope="session")
def backend() -> str:
    """The fastest CPU backend here: ``cpu`` (compiled) when present, else ``reference``."""
    import gpuldpc as gl

    try:
        gl.Decoder(gl.codes.get("wifi-648-1/2"), backend="cpu")
        return "cpu"
    except gl.BackendUnavailable:
        return "reference"


@pytest.fixture(scope="session")
def bench_module():
    """``bench_module(name)``: the script ``bench/<name>.py`` loaded as a module (the benches
    are scripts run from the repository root, not a package)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")

    def load(name):
        spec = importlib.util.spec_from_file_location(name, os.path.join(root, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load

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


@pytest.fixture(scope="session")
def left_to_collector():
    """``left_to_collector(make, llr, close=False)``: the gpuldpc and pycuda objects, by type
    (``{type name: count}``), that only Python's cyclic collector frees once ``make()``'s
    decoder has decoded ``llr`` (and run ``close()``) and is deleted.  Empty is the goal: a
    decoder in a reference cycle keeps its GPU objects until the collector runs, in whatever
    thread that is, where PyCUDA cannot free them (docs/gpu.md "Tests")."""
    import gc

    def run(make, llr, close=False):
        gc.collect()
        dec = make()
        dec.decode(llr)
        if close:
            dec.close()
        del dec
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            kinds = {}
            for obj in gc.garbage:
                kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
                if kind.startswith(("gpuldpc", "pycuda")):
                    kinds[kind] = kinds.get(kind, 0) + 1
        finally:
            gc.garbage.clear()
            gc.set_debug(0)
            gc.collect()                 # now freed for real
        return kinds

    return run

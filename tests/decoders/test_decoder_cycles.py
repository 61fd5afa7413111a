"""A dropped decoder is freed by reference counting, not left in a reference cycle.

Python frees an object in a cycle only when its cyclic collector next runs, in whatever thread
that is; for a GPU decoder PyCUDA then cannot free the CUDA objects ("... in out-of-thread context
could not be cleaned up", docs/gpu.md "Tests").  The same rule is held here on the CPU backends
and on the shaped-code wrapper (whose ``submit`` once was a bound method stored on the object);
tests/gpu/test_decoder_cycles.py holds it for the CUDA decoders.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes.shaping import ShapedBackend


@pytest.mark.parametrize("name, width", [("wimax-576-1/2", 576), ("gf4-192-96", None), ("nr:500:1000", 1000)])
def test_cpu_decoders_leave_nothing_to_the_cyclic_collector(name, width, backend, left_to_collector):
    code = gl.codes.nr(500, 1000) if name.startswith("nr:") else gl.codes.get(name)
    llr = np.full((3, width or code.n * code.bits_per_symbol), 2.0, np.float32)
    assert left_to_collector(lambda: gl.Decoder(code, backend=backend), llr) == {}
    assert left_to_collector(lambda: gl.Decoder(code, backend=backend), llr, close=True) == {}


def test_shaped_backend_with_submit_leaves_nothing_to_the_cyclic_collector(backend, left_to_collector):
    """A backend with ``submit``/``result`` behind the rate recovery (as cuda's): the wrapper
    offers ``submit`` and gives the same frames through it, and forms no cycle."""
    code = gl.codes.nr(500, 1000)
    inner = gl.Decoder(code.decoded, backend=backend, max_iterations=5)

    class Submitting:                      # a backend with tickets of its own, as cuda's engine
        decode = staticmethod(inner.decode)

        @staticmethod
        def submit(llr, out=None):
            return inner.decode(llr, out)

        @staticmethod
        def result(handle):
            return handle

    llr = np.random.default_rng(5).normal(2.0, 1.0, (4, code.n)).astype(np.float32)
    shaped = ShapedBackend(Submitting(), code)
    assert shaped.submit is not None
    got, want = shaped.result(shaped.submit(llr)), shaped.decode(llr)
    np.testing.assert_array_equal(got.info, want.info)
    assert got.info.shape == (4, code.k)
    assert left_to_collector(lambda: ShapedBackend(Submitting(), code), llr) == {}
    decode_only = type("DecodeOnly", (), {"decode": staticmethod(inner.decode)})()
    assert getattr(ShapedBackend(decode_only, code), "submit", None) is None

"""A dropped CUDA decoder is freed at once, in the thread that drops it (reference counting).

In a reference cycle its CUDA objects (allocations, streams, events, the resident kernel's
buffers) wait for Python's cyclic collector, which may run in any thread, where PyCUDA cannot
free them: "... in out-of-thread context could not be cleaned up", a leak (docs/gpu.md
"Tests"; session 10 measured 79 such objects a CudaDecoder).  Each case makes a decoder,
decodes once, deletes it (after ``close()`` where named) and asks the collector what only it
could free (``left_to_collector``, tests/conftest.py): nothing.
"""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda

WIMAX, NB, DVB = "wimax-2304-1/2", "gf32-620-310", "dvbs2-short-2/3"     # DVB: the sparse kernel


def _cases(cuda):
    wimax, nb, nr, dvb = gl.codes.get(WIMAX), gl.codes.get(NB), gl.codes.nr(8448, 9504), gl.codes.get(DVB)
    x = np.full((300, wimax.n), 2.0, np.float32)
    bits = np.full((10, nb.n * nb.bits_per_symbol), 2.0, np.float32)
    e = np.full((20, nr.n), 2.0, np.float32)
    return {
        "CudaDecoder throughput": (lambda: cuda.CudaDecoder(wimax, devices=[0]), x),
        "CudaDecoder latency (resident)": (lambda: cuda.CudaDecoder(wimax, devices=[0], preset="latency"), x[:1]),
        "gl.Decoder cuda": (lambda: gl.Decoder(wimax, backend="cuda", devices=[0]), x),
        "gl.Decoder cuda float16 int8": (lambda: gl.Decoder(wimax, backend="cuda", devices=[0], precision="float16",
                                                            llr_dtype="int8"), x.astype(np.int8)),
        "gl.Decoder cuda GF(32)": (lambda: gl.Decoder(nb, backend="cuda", devices=[0]), bits),
        "gl.Decoder cuda GF(32) latency": (lambda: gl.Decoder(nb, backend="cuda", devices=[0], preset="latency"),
                                           bits[:1]),
        "gl.Decoder cuda NR (GPU recovery)": (lambda: gl.Decoder(nr, backend="cuda", devices=[0]), e),
        "gl.Decoder cuda sparse kernel": (lambda: gl.Decoder(dvb, backend="cuda", devices=[0]),
                                          np.full((10, dvb.n), 2.0, np.float32)),
    }


@pytest.mark.parametrize("close", [False, True], ids=["deleted", "closed, deleted"])
def test_cuda_decoders_leave_nothing_to_the_cyclic_collector(cuda, left_to_collector, close):
    left = {name: left_to_collector(make, llr, close) for name, (make, llr) in _cases(cuda).items()}
    assert left == {name: {} for name in left}

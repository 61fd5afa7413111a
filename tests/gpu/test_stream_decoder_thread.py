"""The GNU Radio blocks' work path on the GPU, without GNU Radio: StreamDecoder from a second thread.

The decoder blocks build a :class:`gpuldpc.streaming.StreamDecoder` in
``__init__`` (main thread) and call ``decode_frames`` from GNU Radio's block
thread; here the same happens with a plain ``threading.Thread``, the input a
view of a larger array (as GNU Radio's buffers are) that is overwritten after
the call, and the results are compared with the reference decoder (min-sum is
bit-exact across backends).
"""
import threading

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.streaming import StreamDecoder

pytestmark = pytest.mark.cuda
CODE = "wifi-1944-1/2"


@pytest.fixture(scope="module")
def stream(cuda):
    try:
        return StreamDecoder(CODE, backend="cuda", batch=512, on_failure="drop", max_iterations=8)
    except gl.BackendUnavailable as exc:
        pytest.skip(f"no CUDA backend here: {exc}")


def test_decode_frames_from_a_second_thread_matches_reference(stream):
    code = gl.codes.get(CODE)
    rng = np.random.default_rng(3)
    info = rng.integers(0, 2, (1000, code.k), dtype=np.uint8)
    llr = gl.channel.transmit(code, code.encode(info), 1.6, rng)     # some frames fail
    buffer = np.zeros((1200, code.n), np.float32)                      # "GNU Radio's buffer"
    results = []

    def work():
        for start in range(0, 1000, stream.batch):
            view = buffer[100 + start:100 + min(start + stream.batch, 1000)]
            view[:] = -llr[start:start + view.shape[0]]                  # GNU Radio sign
            results.append(stream.decode_frames(view))
            view[:] = np.nan                                            # the block's buffer is reused

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    expected = gl.Decoder(code, backend="reference", max_iterations=8).decode(llr)
    out = np.concatenate([r.out for r in results])
    kept = np.concatenate([r.kept + i * stream.batch for i, r in enumerate(results)])
    assert np.array_equal(kept, np.flatnonzero(expected.valid))
    assert np.array_equal(out, expected.info[expected.valid])
    assert np.array_equal(np.concatenate([r.iterations for r in results]),
                          expected.iterations[expected.valid])
    stats = stream.stats()
    assert stats["backend"] == "cuda" and stats["frames"] == 1000
    assert stats["failures"] == stats["dropped"] == int((~expected.valid).sum()) > 0

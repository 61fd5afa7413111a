"""The blocks' work path never dies on bad frames or backend faults (issue 19).

:class:`gpuldpc.streaming.StreamDecoder` driven as the decoder block drives it (one
batch in flight: the next batch handed over, then the previous one finished), on the
fastest CPU backend here and, on a machine with a GPU, on ``cuda`` too: frames with
NaN/+-inf LLRs placed first, last, at a batch boundary, as a whole batch, and as in
the issue (frames 17, 18, 150, 299 NaN, 200 +inf).  Good frames must come out
exactly as ``gl.Decoder`` decodes them without the bad ones, in order; ``erase``
keeps every frame and marks the bad ones, ``drop`` leaves exactly the bad ones out;
``bad_llr_frames`` counts them.  Driven through :meth:`StreamDecoder.work`, the
blocks' pipelined step.  A backend raising a CUDA-like fault in the middle of
a stream (at submit or at the result) moves the stream to another backend with no
frame lost; a programming error propagates.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.errors import BackendFault
from gpuldpc.streaming import StreamDecoder

CODE = "wifi-648-1/2"
FRAMES, BATCH = 320, 64
LAYOUTS = {
    "issue": {17: np.nan, 18: np.nan, 150: np.nan, 299: np.nan, 200: np.inf},
    "first": {0: np.nan},
    "last": {319: -np.inf},
    "boundary": {63: np.nan, 64: np.inf},
    "whole batch": {f: np.nan for f in range(128, 192)},
}


def _backends():
    found = ["cpu"]
    try:
        from gpuldpc import cuda

        if cuda.available():
            found.append("cuda")
    except ImportError:
        pass
    return found


@pytest.fixture(scope="module")
def stream_frames():
    """(code, LLRs in GNU Radio's sign [FRAMES, n], textbook-sign LLRs) at Eb/N0 = 3 dB."""
    code = gl.codes.get(CODE)
    rng = np.random.default_rng(19)
    llr = gl.channel.transmit(code, code.encode(rng.integers(0, 2, (FRAMES, code.k), dtype=np.uint8)),
                              3.0, rng).astype(np.float32)
    return code, -llr, llr


def with_bad(llr_gr, layout, seed=3):
    """A copy of ``llr_gr`` with one bad value (two for the issue's frames) in each frame of ``layout``."""
    rng = np.random.default_rng(seed)
    bad = llr_gr.copy()
    for frame, value in layout.items():
        bad[frame, rng.integers(0, bad.shape[1], 2)] = value
    return bad


def pipelined(stream, frames):
    """Decode ``frames`` through :meth:`StreamDecoder.work` as the block's ``general_work``
    calls it (a buffer of up to two batches waiting); concatenated output rows, kept
    indices (in the input), bad_llr marks."""
    outs, kept, marks = [], [], []
    done = 0
    while done < frames.shape[0]:
        consumed, batch = stream.work(frames[done:done + 2 * stream.batch])
        if batch is not None:
            outs.append(np.array(batch.out))
            kept.append(batch.kept + done)
            marks.append(batch.bad_llr)
            done += consumed
    return np.concatenate(outs), np.concatenate(kept), np.concatenate(marks)


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("policy", ["erase", "drop"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_bad_frames_counted_not_fatal(stream_frames, backend, policy, layout):
    code, llr_gr, llr = stream_frames
    bad_frames = sorted(LAYOUTS[layout])
    good = np.setdiff1d(np.arange(FRAMES), bad_frames)
    expected = gl.Decoder(code, backend=backend, early_stop=True).decode(llr[good])
    stream = StreamDecoder(CODE, backend=backend, batch=BATCH, on_bad_llr=policy)
    out, kept, marks = pipelined(stream, with_bad(llr_gr, LAYOUTS[layout]))
    if policy == "erase":
        assert np.array_equal(kept, np.arange(FRAMES))
        assert np.array_equal(np.flatnonzero(marks), bad_frames)
        assert np.array_equal(out[good], expected.info)
    else:
        assert np.array_equal(kept, good) and not marks.any()
        assert np.array_equal(out, expected.info)
    stats = stream.stats()
    assert stats["bad_llr_frames"] == len(bad_frames)
    assert stats["frames"] == FRAMES
    assert stats["dropped"] == (len(bad_frames) if policy == "drop" else 0)
    assert stats["fallbacks"] == 0 and stats["backend"] == backend
    stream.close()


class _Fault:
    """Wraps a callable: its ``at``-th call raises ``error`` instead (later calls go through)."""

    def __init__(self, wrapped, at, error):
        self.wrapped, self.at, self.error, self.calls = wrapped, at, error, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.at:
            raise self.error
        return self.wrapped(*args, **kwargs)


@pytest.mark.parametrize("where", ["result", "submit"])
def test_backend_fault_mid_stream_falls_back_without_loss(stream_frames, backend, where):
    code, llr_gr, llr = stream_frames
    expected = gl.Decoder(code, backend=backend).decode(llr)
    warnings = []
    stream = StreamDecoder(CODE, backend=backend, batch=BATCH, warn=warnings.append)
    fault = BackendFault("CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure (injected)")
    if where == "result":          # the backend's decode raises inside the ticket: seen at finish
        stream.decoder._impl.decode = _Fault(stream.decoder._impl.decode, 3, fault)
    else:                          # the third hand-over raises at once
        stream.decoder.submit = _Fault(stream.decoder.submit, 3, fault)
    out, kept, _ = pipelined(stream, llr_gr)
    assert np.array_equal(kept, np.arange(FRAMES))
    assert np.array_equal(out, expected.info)
    stats = stream.stats()
    assert stats["fallbacks"] == 1 and stats["frames"] == FRAMES
    assert stats["backend"] != backend
    assert len(warnings) == 1 and "injected" in warnings[0] and stats["backend"] in warnings[0]


def test_programming_error_propagates(stream_frames, backend):
    _, llr_gr, _ = stream_frames
    stream = StreamDecoder(CODE, backend=backend, batch=BATCH)
    stream.decoder._impl.decode = _Fault(stream.decoder._impl.decode, 1, TypeError("a bug"))
    with pytest.raises(TypeError, match="a bug"):
        stream.decode_frames(llr_gr[:BATCH])
    assert stream.stats()["fallbacks"] == 0
    assert np.array_equal(stream.decode_frames(llr_gr[:BATCH]).kept, np.arange(BATCH))


def test_wrong_vector_length_names_the_expected_one(backend):
    stream = StreamDecoder(CODE, backend=backend)
    with pytest.raises(ValueError, match="vector of 648 LLRs"):
        stream.submit(np.zeros((2, 640), np.float32))


def test_coded_mbps_counts_while_a_batch_is_in_flight(stream_frames, backend):
    """The pipelined step always leaves a batch in flight: the stats must still show the
    decoder's rate in the middle of a stream, not 0 until it drains."""
    _, llr_gr, _ = stream_frames
    stream = StreamDecoder(CODE, backend=backend, batch=BATCH)
    consumed, batch = stream.work(llr_gr[:2 * BATCH])
    assert batch is None and consumed == 0                      # handed over, left in flight
    stream.work(llr_gr[:3 * BATCH])                             # the next one handed over, the first finished
    stats = stream.stats()
    assert stats["frames"] == BATCH and stats["coded_mbps"] > 0

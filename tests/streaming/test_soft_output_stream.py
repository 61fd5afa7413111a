"""Soft output through the blocks' work path (:class:`gpuldpc.streaming.StreamDecoder`,
``soft_output``): each kept frame's LLRs beside its bits, in the input's sign, equal to
``gl.Decoder``'s on the same frames; dropped frames leave their LLRs out with them."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.streaming import StreamDecoder

CODE = "wifi-648-1/2"


@pytest.fixture(scope="module")
def frames():
    """40 frames of wifi-648-1/2 at 1.5 dB (some fail), GNU Radio sign (positive = bit 1)."""
    code = gl.codes.get(CODE)
    rng = np.random.default_rng(31)
    words = code.encode(rng.integers(0, 2, (40, code.k), dtype=np.uint8))
    return code, -gl.channel.transmit(code, words, 1.5, rng)


def _work_all(stream, llr, batch):
    """Drive ``work`` as a block does; (bits rows, soft rows) of every output frame."""
    bits, soft, start = [], [], 0
    out = np.empty((batch, stream.vlen_out), np.uint8)
    soft_out = np.empty((batch, stream.vlen_soft), np.float32)
    while True:
        consumed, done = stream.work(llr[start:], out, soft_out)
        if done is not None:
            bits.append(out[:done.out.shape[0]].copy())
            soft.append(soft_out[:done.out.shape[0]].copy())
        start += consumed
        if start == llr.shape[0] and stream._in_flight is None:
            return np.concatenate(bits), np.concatenate(soft)


@pytest.mark.parametrize("soft_output", ["posterior", "extrinsic"])
@pytest.mark.parametrize("on_failure", ["pass", "drop"])
def test_stream_soft_output_equals_the_decoders(backend, frames, soft_output, on_failure):
    code, llr = frames
    want = gl.Decoder(code, backend=backend, positive_llr_bit=1, soft_output=soft_output).decode(llr)
    assert 0 < want.valid.sum() < 40
    stream = StreamDecoder(CODE, backend=backend, batch=16, output="codeword", on_failure=on_failure,
                           soft_output=soft_output)
    assert stream.vlen_soft == code.n
    bits, soft = _work_all(stream, llr, 16)
    kept = want.valid if on_failure == "drop" else np.ones(40, bool)
    np.testing.assert_array_equal(bits, want.bits[kept])
    np.testing.assert_array_equal(soft, want.llr[kept])


def test_stream_without_soft_output_has_none(backend, frames):
    code, llr = frames
    stream = StreamDecoder(CODE, backend=backend, batch=16)
    assert stream.vlen_soft == 0
    assert stream.decode_frames(llr[:4]).llr is None


def test_nr_stream_soft_output_at_the_decoded_positions(backend):
    code = gl.codes.nr(1000, 1800)
    stream = StreamDecoder(code, backend=backend, soft_output="posterior", positive_llr_bit=0)
    assert stream.vlen_soft == len(code.decoded_positions)
    rng = np.random.default_rng(32)
    llr = gl.channel.awgn_llr(code.encode(rng.integers(0, 2, (3, code.k), dtype=np.uint8)), 0.7, rng)
    batch = stream.decode_frames(llr)
    assert batch.llr.shape == (3, stream.vlen_soft)
    np.testing.assert_array_equal(batch.llr, gl.Decoder(code, backend=backend, soft_output="posterior").decode(llr).llr)

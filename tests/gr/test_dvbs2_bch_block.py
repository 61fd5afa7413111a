"""The DVB-S2 BCH Decoder block (gnuradio.gpuldpc.dvbs2_bch_decoder): values, tags, counts,
errors in Python (in grcc: test_grc_and_errors.py)."""
import re

import numpy as np
import pmt
import pytest
from gnuradio import blocks, gr

from gnuradio import gpuldpc
from gpuldpc.codes import dvbs2_bch


def run_frames(code, frames, tags=()):
    """frames [batch, n_bch] (with stream tags) -> DVB-S2 BCH Decoder -> (block, output, tags)."""
    block = gpuldpc.dvbs2_bch_decoder(code)
    tb = gr.top_block()
    source = blocks.vector_source_b(frames.ravel().tolist(), False, block.vlen_in, list(tags))
    sink = blocks.vector_sink_b(block.vlen_out)
    tb.connect(source, block, sink)
    tb.run()
    out = np.array(sink.data(), np.uint8).reshape(-1, block.vlen_out)
    found = {(tag.offset, pmt.symbol_to_string(tag.key)): pmt.to_python(tag.value) for tag in sink.tags()}
    return block, out, found


def tag(offset, key, value):
    return gr.tag_utils.python_to_tag((offset, pmt.intern(key), value, pmt.intern("src")))


@pytest.mark.parametrize("frame, rate, t", [("short", "1/2", 12), ("normal", "2/3", 10)])
def test_frames_decode_with_tags_and_counts(frame, rate, t, rng, capsys):
    """No error, t errors (corrected), 2t errors (failed: passed on as received); the upstream
    LDPC decoder's tags stay on their frame."""
    k_bch, n_bch = dvbs2_bch.sizes(frame, rate)
    info = rng.integers(0, 2, (3, k_bch), dtype=np.uint8)
    received = dvbs2_bch.bch_encode(frame, rate, info)
    received[1, rng.choice(n_bch, t, replace=False)] ^= 1
    received[2, rng.choice(n_bch, 2 * t, replace=False)] ^= 1
    upstream = [tag(i, "valid", pmt.from_bool(i != 2)) for i in range(3)]
    block, out, tags = run_frames(f"dvbs2-{frame}-{rate}", received, upstream)
    assert (block.vlen_in, block.vlen_out) == (n_bch, k_bch)
    np.testing.assert_array_equal(out[:2], info[:2])
    np.testing.assert_array_equal(out[2], received[2, :k_bch])
    assert tags == {(0, "bch_ok"): True, (0, "bch_errors"): 0, (0, "valid"): True,
                    (1, "bch_ok"): True, (1, "bch_errors"): t, (1, "valid"): True,
                    (2, "bch_ok"): False, (2, "bch_errors"): -1, (2, "valid"): False}
    assert block.counts() == {"frames": 3, "bch_failures": 1, "bits_corrected": t}
    assert block.error is None
    assert re.search(rf"^dvbs2_bch_decoder\d+: 3 frames, 2 BCH ok, 1 failed, {t} bits corrected$",
                     capsys.readouterr().out, re.M)


@pytest.mark.parametrize("code, lengths", [("dvbs2-normal-1/2", (32400, 32208)),
                                           ("dvbs2-normal-8/9", (57600, 57472)),
                                           ("dvbs2-short-1/4", (3240, 3072)),
                                           ("dvbs2-normal-154/180", (55440, 55248))])
def test_vector_lengths_are_n_bch_and_k_bch(code, lengths):
    assert gpuldpc.bch_lengths(code) == lengths
    block = gpuldpc.dvbs2_bch_decoder(code)
    assert block.input_signature().sizeof_stream_item(0) == lengths[0]
    assert block.output_signature().sizeof_stream_item(0) == lengths[1]


@pytest.mark.parametrize("code, message", [
    ("wifi-648-1/2", r"code 'wifi-648-1/2' is not a DVB-S2 code: the DVB-S2 BCH decoder takes the "
                     r"code of its LDPC decoder, dvbs2-<normal\|short>-<rate>"),
    ("ccsds-c2", r"code 'ccsds-c2' is not a DVB-S2 code"),
    ("gf16-300-150", r"code 'gf16-300-150' is not a DVB-S2 code"),
    ("dvbs2-short-9/10", r"dvbs2: rate='9/10' is not a code rate of short frames; use one of '1/4'"),
])
def test_a_code_that_is_not_dvbs2_is_refused(code, message):
    with pytest.raises(ValueError, match=message):
        gpuldpc.dvbs2_bch_decoder(code)
    with pytest.raises(ValueError, match=message):
        gpuldpc.bch_lengths(code)


def test_wrong_vector_length_is_refused_at_connect():
    """The LDPC decoder's codeword output (n bits) is not the BCH codeword (k_ldpc bits)."""
    decoder = gpuldpc.ldpc_decoder("dvbs2-short-1/2", output="codeword", backend="reference")
    with pytest.raises(Exception, match="itemsize mismatch"):
        gr.top_block().connect(decoder, gpuldpc.dvbs2_bch_decoder("dvbs2-short-1/2"))


def test_bytes_other_than_bits_end_the_stream_with_a_message(rng):
    k_bch, n_bch = dvbs2_bch.sizes("short", "1/2")
    frames = dvbs2_bch.bch_encode("short", "1/2", rng.integers(0, 2, (2, k_bch), dtype=np.uint8))
    frames[1, 5] = 2
    block, out, tags = run_frames("dvbs2-short-1/2", frames)
    assert out.shape == (0, k_bch) and tags == {}
    assert block.error == ("frame 1 bit 5 is 2, not 0 or 1 (the input must be unpacked bits 0/1, "
                           "e.g. the LDPC Decoder's)")

"""gl.Decoder(packed=True) on the host backends: decisions packed eight to a byte
(numpy.packbits order), equal to the unpacked decisions of the same decoder; the info bits of
plain and shaped codes (5G NR with and without filler bits); ``out=``; errors."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import packed_bits


def _frames(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    return info, gl.channel.transmit(code, code.encode(info), ebn0_db, rng)


def _unpacked(res, n, k):
    return np.unpackbits(res.bits, axis=1, count=n), np.unpackbits(res.info, axis=1, count=k)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("name, ebn0_db", [("wimax-576-1/2", 1.5), ("wifi-648-5/6", 3.5)])
def test_packed_decisions_equal_the_unpacked_ones(backend, name, ebn0_db):
    if backend == "cpu":
        pytest.importorskip("gpuldpc._core")
    code = gl.codes.get(name)
    _, llr = _frames(code, 60, ebn0_db, seed=3)       # a waterfall point: decoded and failed frames
    want = gl.Decoder(code, backend=backend).decode(llr)
    got = gl.Decoder(code, backend=backend, packed=True).decode(llr)
    assert got.bits.shape == (60, (code.n + 7) // 8) and got.bits.dtype == np.uint8
    assert got.info.shape == (60, (code.k + 7) // 8) and np.shares_memory(got.info, got.bits)
    bits, info = _unpacked(got, code.n, code.k)
    np.testing.assert_array_equal(bits, want.bits)
    np.testing.assert_array_equal(info, want.info)
    np.testing.assert_array_equal(got.bits, np.packbits(want.bits, axis=1))
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)
    assert 0 < want.valid.sum() < 60


def test_out_receives_the_packed_bytes_and_a_wrong_shape_is_named():
    code = gl.codes.get("wimax-576-1/2")
    _, llr = _frames(code, 8, 3.0, seed=4)
    dec = gl.Decoder(code, backend="reference", packed=True)
    out = np.zeros((8, 72), np.uint8)
    got = dec.decode(llr, out=out)
    assert got.bits is out
    np.testing.assert_array_equal(out, np.packbits(gl.Decoder(code, backend="reference").decode(llr).bits, axis=1))
    with pytest.raises(ValueError, match=r"shape \(8, 72\) \(packed=True: ceil\(n/8\) bytes a frame\)"):
        dec.decode(llr, out=np.zeros((8, 576), np.uint8))


@pytest.mark.parametrize("k, e", [(1000, 1500), (1056, 1600)])
def test_shaped_nr_code_packs_its_decoded_positions_and_info(k, e):
    pytest.importorskip("gpuldpc._core")
    code = gl.codes.nr(k, e)
    info, llr = _frames(code, 12, 2.5, seed=5)
    want = gl.Decoder(code, backend="cpu").decode(llr)
    dec = gl.Decoder(code, backend="cpu", packed=True)
    got = dec.decode(llr)
    n = len(code.decoded_positions)
    bits, got_info = _unpacked(got, n, code.k)
    np.testing.assert_array_equal(bits, want.bits)
    np.testing.assert_array_equal(got_info, want.info)
    np.testing.assert_array_equal(got_info, info)                   # 2.5 dB: every block decoded
    assert got.bits.shape == (12, (n + 7) // 8)
    np.testing.assert_array_equal(dec.submit(llr).result().bits, got.bits)


def test_c2_packs_its_information_bits_from_inside_a_byte():
    """CCSDS C2's 7136 information bits start at decoded bit 18 (after the fill): a shifted copy."""
    pytest.importorskip("gpuldpc._core")
    code = gl.codes.get("ccsds-c2")
    info, llr = _frames(code, 6, 4.5, seed=7)
    want = gl.Decoder(code, backend="cpu", max_iterations=20).decode(llr)
    got = gl.Decoder(code, backend="cpu", max_iterations=20, packed=True).decode(llr)
    assert got.info.shape == (6, 892) and not np.shares_memory(got.info, got.bits)
    np.testing.assert_array_equal(np.unpackbits(got.info, axis=1), want.info)
    np.testing.assert_array_equal(want.info, info)                   # 4.5 dB: every frame decoded


def test_info_is_a_view_of_the_bytes_holding_the_information_bits():
    rng = np.random.default_rng(6)
    bits = rng.integers(0, 2, (5, 61), dtype=np.uint8)
    packed = np.packbits(bits, axis=1)
    for at in (slice(0, 16), slice(0, 13), slice(8, 61), slice(0, 61)):   # runs from a byte: views
        got = packed_bits.info_of(packed, 61, at)
        assert np.shares_memory(got, packed) and got.shape == (5, -(-(at.stop - at.start) // 8))
        np.testing.assert_array_equal(np.unpackbits(got, axis=1, count=at.stop - at.start), bits[:, at])
    np.testing.assert_array_equal(packed_bits.info_of(packed, 61, slice(0, 13))[:, 1] & 7, packed[:, 1] & 7)
    for at in (slice(3, 40), slice(18, 61), slice(7, 8), slice(1, 57), np.array([0, 5, 9, 60])):   # the rest: copies
        got = packed_bits.info_of(packed, 61, at)
        assert not np.shares_memory(got, packed)
        np.testing.assert_array_equal(got, np.packbits(bits[:, at], axis=1))


def test_bad_packed_values_and_gf_codes_are_refused():
    with pytest.raises(TypeError, match="packed must be True or False, got 1"):
        gl.Decoder(gl.codes.get("wimax-576-1/2"), backend="reference", packed=1)
    with pytest.raises(ValueError, match="code 'gf32-620-310' is over GF\\(32\\)"):
        gl.Decoder(gl.codes.get("gf32-620-310"), backend="reference", packed=True)


def test_the_host_wrapper_keeps_the_backends_other_attributes():
    code = gl.codes.get("wimax-576-1/2")
    dec = gl.Decoder(code, backend="reference", packed=True, positive_llr_bit=1, llr_dtype="int4", llr_scale=0.5)
    assert dec.pinned_llr(3).shape == (3, 288)                       # the int4 backend's, through the wrapper
    cw = np.zeros((2, code.n), np.uint8)
    q = gl.pack_int4(np.full((2, code.n), -6, np.int8))             # positive_llr_bit=1: negative means 0
    got = dec.decode(q)
    np.testing.assert_array_equal(got.bits, np.packbits(cw, axis=1))
    assert got.valid.all()


def test_the_decoder_blocks_core_refuses_packed():
    from gpuldpc.streaming import StreamDecoder

    with pytest.raises(ValueError, match=r"one bit a byte .*unpacked_to_packed_bb"):
        StreamDecoder("wimax-576-1/2", backend="reference", packed=True)


def test_soft_output_is_unchanged_by_packing():
    code = gl.codes.get("wimax-576-1/2")
    _, llr = _frames(code, 6, 2.0, seed=8)
    want = gl.Decoder(code, backend="reference", soft_output="posterior").decode(llr)
    got = gl.Decoder(code, backend="reference", soft_output="posterior", packed=True).decode(llr)
    np.testing.assert_array_equal(got.llr, want.llr)
    np.testing.assert_array_equal(got.bits, np.packbits(want.llr < 0, axis=1))

"""The Decoder front door: arguments, GF(q) bit LLRs, non-finite LLRs (the bad-LLR rule and
the on_bad_llr policy), submit/result, out=, batch helpers.

(Binary LLR shape/dtype/NaN errors: tests/decoders/test_reference_binary.py.)
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel
from gpuldpc import bad_llr


@pytest.fixture(scope="module")
def nb_case():
    code = gl.codes.get("gf16-300-150")
    rng = np.random.default_rng(5)
    cw = code.encode(rng.integers(0, code.q, (3, code.k)))
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(3, -1)      # binary image, bit order of gf
    bit_llr = channel.awgn_llr(bits, channel.sigma_from_ebn0(3.0, code.rate), rng)
    return code, cw, bit_llr


def test_nb_bit_llrs_equal_their_symbol_llrs(nb_case):
    code, cw, bit_llr = nb_case
    dec = gl.Decoder(code, backend="reference", max_iterations=5)
    from_bits = dec.decode(bit_llr)
    from_symbols = dec.decode(channel.bit_llr_to_symbol_llr(bit_llr, code.q))
    np.testing.assert_array_equal(from_bits.bits, from_symbols.bits)
    np.testing.assert_array_equal(from_bits.iterations, from_symbols.iterations)
    np.testing.assert_array_equal(from_bits.bits, cw)          # 3 dB on GF(16): these frames decode
    one = dec.decode(bit_llr[1])                                 # a single frame of bit LLRs
    np.testing.assert_array_equal(one.bits[0], cw[1])


def test_nb_wrong_shape_names_both_forms(nb_case):
    code, _, bit_llr = nb_case
    dec = gl.Decoder(code, backend="reference")
    with pytest.raises(ValueError, match=r"\[batch, 300, 16\] or \[batch, 1200\], got \(3, 1199\)"):
        dec.decode(bit_llr[:, :-1])


def _wifi_llrs(frames, seed=3, ebn0=2.0):
    code = gl.codes.get("wifi-648-1/2")
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    return code, cw, channel.transmit(code, cw, ebn0, rng)


def test_bad_llr_rule_on_the_host():
    llr = np.array([[1.0, np.nan, np.inf, -np.inf], [1.0, 2.0, 3.0, 4.0]], np.float32)
    clean, bad = bad_llr.sanitized(llr)
    np.testing.assert_array_equal(clean[0], [1.0, 0.0, 2.0 ** 64, -2.0 ** 64])
    np.testing.assert_array_equal(bad, [True, False])
    same, none = bad_llr.sanitized(llr[1:])
    assert same is not None and not none.any() and np.shares_memory(same, llr)


@pytest.mark.parametrize("where", ["first", "last", "boundary", "all"])
def test_bad_frames_raise_or_erase(backend, where):
    code, cw, llr = _wifi_llrs(24)
    frames = {"first": [0], "last": [23], "boundary": [7, 8], "all": list(range(24))}[where]
    bad = llr.copy()
    for i, f in enumerate(frames):
        bad[f, (5 * i) % code.n] = (np.nan, np.inf, -np.inf)[i % 3]
    raising = gl.Decoder(code, backend=backend)
    with pytest.raises(ValueError, match=rf"code 'wifi-648-1/2': LLRs contain NaN or infinite values "
                                         rf"\(frames {frames[:8]}".replace("[", r"\[").replace("]", r"\]")):
        raising.decode(bad)
    erasing = gl.Decoder(code, backend=backend, on_bad_llr="erase")
    got = erasing.decode(bad)
    np.testing.assert_array_equal(np.flatnonzero(got.bad_llr), frames)
    # the bad frames decode as their sanitized LLRs, the others as if nothing happened
    want = raising.decode(bad_llr.sanitized(bad)[0])
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
    assert not want.bad_llr.any()


def test_nb_bit_llrs_follow_the_rule_before_conversion(nb_case):
    code, cw, bit_llr = nb_case
    bad = bit_llr.copy()
    bad[1, 7] = np.nan
    dec = gl.Decoder(code, backend="reference", max_iterations=5, on_bad_llr="erase")
    got = dec.decode(bad)
    np.testing.assert_array_equal(got.bad_llr, [False, True, False])
    clean = bad.copy()
    clean[1, 7] = 0.0
    want = dec.decode(channel.bit_llr_to_symbol_llr(clean, code.q))
    np.testing.assert_array_equal(got.bits, want.bits)
    with pytest.raises(ValueError, match=r"frames \[1\]"):
        gl.Decoder(code, backend="reference", max_iterations=5).decode(bad)


def test_submit_result_in_any_order_and_out(backend):
    code, cw, llr = _wifi_llrs(30, ebn0=3.0)
    dec = gl.Decoder(code, backend=backend)
    want = [dec.decode(llr[a:a + 10]) for a in (0, 10, 20)]
    tickets = [dec.submit(llr[a:a + 10]) for a in (0, 10, 20)]
    for i in (2, 0, 1):
        got = tickets[i].result()
        np.testing.assert_array_equal(got.bits, want[i].bits)
        np.testing.assert_array_equal(got.iterations, want[i].iterations)
        assert tickets[i].result() is got                       # collected once
    out = np.full((30, code.n), 7, np.uint8)
    res = dec.decode(llr, out=out)
    assert res.bits is out and (out[res.valid] == cw[res.valid]).all() and res.valid.mean() > 0.9
    np.testing.assert_array_equal(res.info, out[:, :code.k])
    with pytest.raises(ValueError, match="out must be a C-contiguous uint8 array of shape"):
        dec.decode(llr, out=np.empty((30, code.n), np.int32))
    dec.close()


def test_submit_raises_bad_llr_at_result(backend):
    code, _, llr = _wifi_llrs(4)
    llr[3, 0] = np.nan
    dec = gl.Decoder(code, backend=backend)
    ticket = dec.submit(llr)
    with pytest.raises(ValueError, match=r"frames \[3\]"):
        ticket.result()
    assert dec.decode(llr[:3]).valid.shape == (3,)               # the decoder goes on


def test_batch_helpers_without_gpu():
    code = gl.codes.get("wifi-648-1/2")
    dec = gl.Decoder(code, backend="reference")
    assert dec.preferred_batch("latency") == 1 and dec.preferred_batch("throughput") == 64
    with pytest.raises(ValueError, match="preset='fast'"):
        dec.preferred_batch("fast")
    buf = dec.pinned_llr(7)
    assert buf.shape == (7, 648) and buf.dtype == np.float32
    buf[:] = 4.0                                                  # all-zero codeword, noiseless
    res = dec.decode(buf)
    assert res.valid.all() and not res.bits.any() and (res.iterations == 1).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(algorithm="minmax"), "algorithm='minmax' is not one of 'nms', 'oms', 'spa'"),
    (dict(schedule="serial"), "schedule='serial'"),
    (dict(max_iterations=0), "max_iterations must be an integer >= 1"),
    (dict(alpha=1.5), r"alpha must lie in \(0, 1\]"),
    (dict(beta=-1), "beta must be >= 0"),
    (dict(backend="fpga"), "backend='fpga'"),
    (dict(threads=0), "threads must be None or an integer >= 1"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gl.Decoder(gl.codes.get("wifi-648-1/2"), **kwargs)


def test_not_a_code():
    with pytest.raises(TypeError, match="code must be a gpuldpc Code"):
        gl.Decoder("wifi-648-1/2")


def test_decode_device_needs_the_cuda_backend():
    dec = gl.Decoder(gl.codes.get("wifi-648-1/2"), backend="reference")
    with pytest.raises(TypeError, match="decode_device needs the cuda backend; this decoder runs on 'reference'"):
        dec.decode_device(0, 1)


SIGN_CASES = [
    ("wifi-648-1/2", "cpu", dict()),
    ("wifi-648-1/2", "cpu", dict(precision="int8")),
    ("wifi-648-1/2", "cpu", dict(precision="int16", schedule="flooding")),
    ("wifi-648-1/2", "cpu", dict(algorithm="spa")),
    ("wifi-648-1/2", "reference", dict()),
    ("gf16-300-150", "cpu", dict()),                 # bit LLRs of a GF(q) code: negated on the host
]


@pytest.mark.parametrize("name,backend,settings", SIGN_CASES)
def test_positive_llr_bit_decodes_gnu_radio_sign_as_the_textbook_sign(native_core, name, backend, settings):
    """positive_llr_bit=1 on -L gives what the default gives on L, bit for bit, bad frames
    included (the C++ load negates binary LLRs; other paths negate a copy on the host)."""
    code = gl.codes.get(name)
    rng = np.random.default_rng(41)
    m = code.bits_per_symbol
    cw = code.encode(rng.integers(0, code.q, (12, code.k), dtype=np.uint8))
    bits = cw if code.is_binary else gl.gf.GF(code.q).to_bits(cw).reshape(12, -1)
    llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(2.5, code.k / code.n), rng).astype(np.float32)
    llr[3, 5], llr[7, 9] = np.nan, -np.inf
    textbook = gl.Decoder(code, backend=backend, on_bad_llr="erase", **settings).decode(llr)
    dec = gl.Decoder(code, backend=backend, on_bad_llr="erase", positive_llr_bit=1, **settings)
    gnuradio = dec.decode(-llr)
    for field in ("bits", "iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(gnuradio, field), getattr(textbook, field), err_msg=field)
    assert gnuradio.bad_llr.tolist() == [i in (3, 7) for i in range(12)]
    assert gnuradio.valid.sum() >= 8 and llr.shape[1] == code.n * m


def test_positive_llr_bit_must_be_0_or_1():
    with pytest.raises(ValueError, match="positive_llr_bit must be 0"):
        gl.Decoder(gl.codes.get("wifi-648-1/2"), backend="reference", positive_llr_bit=-1)

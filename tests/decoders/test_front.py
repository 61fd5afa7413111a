"""The Decoder front door: arguments, GF(q) bit LLRs, the finite check, batch helpers.

(Binary LLR shape/dtype/NaN errors: tests/decoders/test_reference_binary.py.)
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel
from gpuldpc.decoders.front import check_finite


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


def test_check_finite_large_arrays_and_no_false_alarm():
    big = np.full((600, 20000), 3e38, np.float32)                # several chunks, near float32 max
    check_finite(big, "big")                                     # a float64 sum cannot overflow
    big[599, 19999] = np.nan
    with pytest.raises(ValueError, match=r"code 'big'.*frames \[599\]"):
        check_finite(big, "big")


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

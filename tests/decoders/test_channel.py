"""gpuldpc.channel: BPSK/AWGN LLR statistics, symbol LLRs, error counting."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel
from gpuldpc.gf import GF


def test_sigma_from_ebn0_matches_the_formula():
    # sigma^2 = 1 / (2 R Eb/N0): R = 1/2 at 0 dB gives 1; R = 5/6 at 3 dB gives 0.3007...
    assert channel.sigma_from_ebn0(0.0, 0.5) == pytest.approx(1.0, rel=1e-15)
    assert channel.sigma_from_ebn0(3.0, 5 / 6) ** 2 == pytest.approx(1 / (2 * 5 / 6 * 10 ** 0.3), rel=1e-12)
    with pytest.raises(ValueError, match="rate must lie in"):
        channel.sigma_from_ebn0(1.0, 1.5)
    with pytest.raises(ValueError, match="ebn0_db must be a finite"):
        channel.sigma_from_ebn0(float("nan"), 0.5)


@pytest.mark.parametrize("bit, sign", [(0, 1.0), (1, -1.0)])
def test_llr_mean_and_variance_are_2_and_4_over_sigma_squared(bit, sign):
    sigma = 0.8
    n = 400_000
    llr = channel.awgn_llr(np.full(n, bit, np.uint8), sigma, np.random.default_rng(7))
    assert llr.dtype == np.float32 and llr.shape == (n,)
    mean, var = 2 / sigma ** 2, 4 / sigma ** 2
    # standard errors: sqrt(var/n) for the mean, var*sqrt(2/n) for the variance; 5 of them
    assert abs(llr.mean(dtype=np.float64) - sign * mean) < 5 * np.sqrt(var / n)
    assert abs(llr.var(dtype=np.float64) - var) < 5 * var * np.sqrt(2 / n)


def test_llrs_are_2y_over_sigma2_of_the_seeded_noise():
    bits = np.array([[0, 1, 1, 0, 1]], np.uint8)
    sigma = 0.6
    llr = channel.awgn_llr(bits, sigma, np.random.default_rng(3))
    w = np.random.default_rng(3).standard_normal(bits.shape, dtype=np.float32)
    y = (1 - 2 * bits.astype(np.float32)) + np.float32(sigma) * w
    np.testing.assert_array_equal(llr, np.float32(2 / sigma ** 2) * y)
    again = channel.awgn_llr(bits, sigma, np.random.default_rng(3))
    np.testing.assert_array_equal(llr, again)
    assert not np.array_equal(llr, channel.awgn_llr(bits, sigma, np.random.default_rng(4)))


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match=r"numpy.random.Generator .*default_rng"):
        channel.awgn_llr(np.zeros(4, np.uint8), 1.0, 1234)
    with pytest.raises(ValueError, match="bits must be 0 or 1"):
        channel.awgn_llr(np.array([0, 2]), 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="sigma must be a positive"):
        channel.awgn_llr(np.zeros(4, np.uint8), 0.0, np.random.default_rng(0))


def test_transmit_binary_code_uses_the_code_rate():
    code = gl.codes.get("wifi-648-5/6")
    cw = np.zeros((2000, code.n), np.uint8)
    llr = channel.transmit(code, cw, 2.0, np.random.default_rng(11))
    sigma2 = 1 / (2 * (540 / 648) * 10 ** 0.2)
    assert llr.shape == (2000, 648) and llr.dtype == np.float32
    assert llr.mean(dtype=np.float64) == pytest.approx(2 / sigma2, rel=0.01)
    with pytest.raises(ValueError, match=r"codewords must have shape \[batch, 648\]"):
        channel.transmit(code, cw[:, :100], 2.0, np.random.default_rng(0))


@pytest.mark.parametrize("q", [4, 16, 64])
def test_symbol_llrs_minimum_zero_at_bitwise_hard_decision(q):
    field = GF(q)
    rng = np.random.default_rng(q)
    bit_llr = rng.normal(0, 3, size=(50, 20 * field.m)).astype(np.float32)
    bit_llr[0, :field.m] = 0.0                    # ties: zero bit LLRs decide bit 0
    sym = channel.bit_llr_to_symbol_llr(bit_llr, q)
    assert sym.shape == (50, 20, q) and sym.dtype == np.float32
    hard = field.from_bits(channel.hard_decision(bit_llr).reshape(50, 20, field.m))
    assert (sym >= 0).all()
    np.testing.assert_array_equal(sym.min(axis=-1), 0.0)
    np.testing.assert_array_equal(sym.argmin(axis=-1), hard)
    # against ln P(x = s)/P(x = a) from the bit probabilities, in float64
    lam = bit_llr.astype(np.float64).reshape(50, 20, 1, field.m)
    abits = field.to_bits(np.arange(q)).astype(np.float64)             # [q, m]
    log_p = -np.log1p(np.exp(-lam)) * (1 - abits) - np.log1p(np.exp(lam)) * abits
    log_p = log_p.sum(axis=-1)                                           # ln P(x = a)
    expected = log_p.max(axis=-1, keepdims=True) - log_p
    np.testing.assert_allclose(sym, expected, rtol=1e-5, atol=1e-4)


def test_symbol_llr_rejects_bad_shapes_and_fields():
    with pytest.raises(ValueError, match=r"shape \[batch, n\*5\]"):
        channel.bit_llr_to_symbol_llr(np.zeros((2, 12), np.float32), 32)
    with pytest.raises(ValueError, match="power of two"):
        channel.bit_llr_to_symbol_llr(np.zeros((2, 12), np.float32), 12)


def test_transmit_gf_code_gives_symbol_llrs_whose_argmin_is_the_codeword_at_high_snr():
    code = gl.codes.get("gf32-620-310")
    rng = np.random.default_rng(2)
    cw = code.encode(rng.integers(0, 32, (4, code.k)))
    llr = channel.transmit(code, cw, 20.0, rng)          # bit error rate ~1e-22
    assert llr.shape == (4, 620, 32) and llr.dtype == np.float32
    np.testing.assert_array_equal(llr.argmin(axis=-1), cw)
    np.testing.assert_array_equal(llr.min(axis=-1), 0.0)
    with pytest.raises(ValueError, match=r"codeword entries must lie in 0..31"):
        channel.transmit(code, cw + 32, 3.0, rng)


def test_symbol_probabilities_sum_to_one_and_follow_exp_minus_llr():
    llr = np.array([[[0.0, 1.0, 3.0, 0.5]]], np.float32)
    p = channel.symbol_llr_to_probability(llr)
    e = np.exp(-llr.astype(np.float64))
    np.testing.assert_allclose(p, e / e.sum(axis=-1, keepdims=True), rtol=1e-6)
    assert p.dtype == np.float32
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-6)


def test_count_errors_binary_and_gf():
    sent = np.zeros((3, 6), np.uint8)
    decoded = sent.copy()
    decoded[1, [0, 4]] = 1
    counts = channel.count_errors(decoded, sent)
    assert counts.bit_errors.tolist() == [0, 2, 0]
    assert (counts.frame_errors, counts.frames, counts.bits) == (1, 3, 18)
    assert counts.fer == pytest.approx(1 / 3) and counts.ber == pytest.approx(2 / 18)
    # GF(8): 5 = 0b101 differs from 0 in two bits, 7 from 1 in two bits
    gf_counts = channel.count_errors(np.array([[5, 7, 2]]), np.array([[0, 1, 2]]), q=8)
    assert gf_counts.bit_errors.tolist() == [4] and gf_counts.bits == 9
    with pytest.raises(ValueError, match="must be equal 2-D shapes"):
        channel.count_errors(np.zeros((2, 3)), np.zeros((3, 2)))

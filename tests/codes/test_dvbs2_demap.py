"""DVB-S2 soft demapping (gpuldpc.dvbs2_demap) without GNU Radio: exact and max-log LLRs
against a brute-force sum per bit, the QPSK closed form, a noisy 8PSK frame decoded, and the
errors.  (Against gr-dtv's interleaver and modulator: tests/gr/test_dvbs2_demapper.py.)"""
import math

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import dvbs2_demap

# A MODCOD of each constellation, and the column each label bit (most significant first)
# is read from, as EN 302 307-1 Table 7 / EN 302 307-2 give them (QPSK: not interleaved).
CASES = [("dvbs2-short-1/2", "qpsk", None), ("dvbs2-short-3/5", "8psk", (2, 1, 0)),
         ("dvbs2-normal-2/3", "8psk", (0, 1, 2)), ("dvbs2-short-26/45", "16apsk", (2, 1, 3, 0)),
         ("dvbs2-normal-3/4", "32apsk", (0, 1, 2, 3, 4))]


def noisy_symbols(rng, mapping, frames, n0):
    """Random codeword-like bits modulated, plus complex Gaussian noise of variance n0."""
    bits = rng.integers(0, 2, (frames, mapping.n), dtype=np.uint8)
    y = mapping.modulate(bits)
    noise = rng.standard_normal(y.shape + (2,)) @ np.array([1, 1j]) * math.sqrt(n0 / 2)
    return bits, (y + noise).astype(np.complex64)


def symbol_and_bit(p, m, s, columns):
    """The symbol j and label bit i (most significant first) carrying frame bit p."""
    if columns is None:
        return p // m, p % m
    return p % s, columns.index(p // s)


@pytest.mark.parametrize("code, constellation, columns", CASES)
def test_llrs_equal_a_brute_force_sum_over_the_constellation(code, constellation, columns):
    """L_p = ln sum_{x: bit 0} exp(-|y-x|^2/N0) - ln sum_{x: bit 1} ...(float64, label by
    label) at 300 frame positions, and the max-log form (nearest point of each bit value)."""
    mapping = dvbs2_demap.mapping(code, constellation)
    rng = np.random.default_rng(3)
    n0 = 0.3
    _, y = noisy_symbols(rng, mapping, 2, n0)
    exact, max_log = mapping.llr(y, n0), mapping.llr(y, n0, max_log=True)
    assert exact.shape == max_log.shape == (2, mapping.n) and exact.dtype == np.float32
    m, s = mapping.bits_per_symbol, mapping.symbols_per_frame
    for p in np.concatenate([[0, mapping.n - 1], rng.choice(mapping.n, 300, replace=False)]):
        j, i = symbol_and_bit(int(p), m, s, columns)
        for f in range(2):
            dist = {0: [], 1: []}
            for label, x in enumerate(mapping.points):
                dist[(label >> (m - 1 - i)) & 1].append(abs(complex(y[f, j]) - x) ** 2)
            want = (math.log(sum(math.exp(-d / n0) for d in dist[0]))
                    - math.log(sum(math.exp(-d / n0) for d in dist[1])))
            assert exact[f, p] == pytest.approx(want, rel=1e-4, abs=1e-4)
            assert max_log[f, p] == pytest.approx((min(dist[1]) - min(dist[0])) / n0, rel=1e-4, abs=1e-4)


def test_qpsk_exact_llrs_are_the_linear_formula():
    """Gray QPSK factorises: L(b_2j) = 2 sqrt(2) Re(y_j) / N0, L(b_2j+1) = 2 sqrt(2) Im(y_j) / N0
    (the stock-block demapping of examples/dvbs2_rx); max-log gives the same."""
    mapping = dvbs2_demap.mapping("dvbs2-normal-1/2", "qpsk")
    _, y = noisy_symbols(np.random.default_rng(5), mapping, 3, 0.5)
    want = np.stack([y.real, y.imag], axis=-1).reshape(3, -1) * (2 * math.sqrt(2) / 0.5)
    np.testing.assert_allclose(mapping.llr(y, 0.5), want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(mapping.llr(y, 0.5, max_log=True), want, rtol=1e-5, atol=1e-4)


def test_every_modcod_is_a_permutation_and_round_trips_at_high_snr():
    """Every MODCOD: the frame positions are a permutation of 0..n-1, the points have mean
    energy 1, and the noiseless symbols demap at N0 = 1e-4 (|metrics| up to 1e5) to finite LLRs
    whose signs are the bits, exact and max-log."""
    rng = np.random.default_rng(7)
    for constellation, frames in dvbs2_demap.MODCODS.items():
        for frame, rates in frames.items():
            for rate in rates:
                mapping = dvbs2_demap.mapping(f"dvbs2-{frame}-{rate}", constellation)
                np.testing.assert_array_equal(np.sort(mapping.positions.ravel()), np.arange(mapping.n))
                assert np.mean(np.abs(mapping.points) ** 2) == pytest.approx(1.0, abs=1e-12)
                bits = rng.integers(0, 2, mapping.n, dtype=np.uint8)
                for max_log in (False, True):
                    llr = mapping.llr(mapping.modulate(bits), 1e-4, max_log)
                    assert np.isfinite(llr).all(), (constellation, frame, rate)
                    np.testing.assert_array_equal(llr < 0, bits.astype(bool))


def test_ring_ratios_are_the_standards():
    """16APSK: |outer| / |inner| = gamma (Table 9); 32APSK: R2/R1, R3/R1 (Table 10)."""
    radii = np.unique(np.round(np.abs(dvbs2_demap.points("16apsk", "2/3")), 9))
    assert radii[1] / radii[0] == pytest.approx(3.15)
    radii = np.unique(np.round(np.abs(dvbs2_demap.points("32apsk", "9/10")), 9))
    assert (radii[1] / radii[0], radii[2] / radii[0]) == (pytest.approx(2.53), pytest.approx(4.30))


@pytest.mark.parametrize("max_log", [False, True])
def test_noisy_8psk_frames_decode_above_threshold_and_fail_below(max_log):
    """8PSK 3/5 short frames (waterfall at Es/N0 ~5.2 dB, docs/dvbs2.md): 4 frames at 6 dB
    decode to the sent information (cpu backend, sum-product, 50 iterations), 4 at 4.5 dB
    do not."""
    code = gl.codes.get("dvbs2-short-3/5")
    mapping = dvbs2_demap.mapping(code, "8psk")
    dec = gl.Decoder(code, algorithm="spa", backend="cpu", max_iterations=50)
    rng = np.random.default_rng(11)
    for esn0_db, decodes in ((6.0, True), (4.5, False)):
        info = rng.integers(0, 2, (4, code.k), dtype=np.uint8)
        y = mapping.modulate(code.encode(info))
        n0 = dvbs2_demap.n0_from_esn0_db(esn0_db)
        y = y + (rng.standard_normal(y.shape + (2,)) @ np.array([1, 1j]) * math.sqrt(n0 / 2))
        res = dec.decode(dvbs2_demap.demap(y, "dvbs2-short-3/5", "8psk", n0, max_log=max_log))
        assert (res.info == info).all(axis=1).tolist() == [decodes] * 4, esn0_db


@pytest.mark.parametrize("code, constellation, message", [
    ("dvbs2-normal-1/2", "32apsk", "constellation='32apsk' is not used with rate 1/2 in normal frames "
     "(DVB-S2/S2X MODCODs); rate 1/2 normal takes 'qpsk', and 32apsk takes the normal rates "
     "'3/4', '4/5', '5/6', '8/9', '9/10'"),
    ("dvbs2-short-4/5", "8psk", "rate 4/5 short takes 'qpsk', '16apsk', '32apsk', and 8psk takes"),
    ("dvbs2-normal-90/180", "16apsk", "rate 90/180 normal takes none of them"),
    ("dvbs2-short-1/2", "64apsk", "constellation='64apsk' is not a DVB-S2 constellation; use one of "
     "'qpsk', '8psk', '16apsk', '32apsk'"),
    ("dvbs2-short-9/10", "qpsk", "dvbs2: rate='9/10' is not a code rate of short frames; use one of '1/4'"),
    ("dvbs2-long-1/2", "qpsk",
     "dvbs2: frame='long' is not a DVB-S2 frame size; use one of 'normal', 'short'"),
    ("wifi-648-1/2", "qpsk", "code='wifi-648-1/2' is not a DVB-S2 code; use 'dvbs2-<normal|short>-<rate>'"),
    (gl.codes.get("wifi-648-1/2"), "qpsk", "code='wifi-648-1/2' is not a DVB-S2 code"),
])
def test_bad_modcods_name_the_parameter_and_valid_values(code, constellation, message):
    with pytest.raises(ValueError) as info:
        dvbs2_demap.mapping(code, constellation)
    assert message in str(info.value)


def test_column_orders_of_table_7():
    assert dvbs2_demap.column_order("8psk", "short", "3/5") == (2, 1, 0)
    assert dvbs2_demap.column_order("8psk", "normal", "25/36") == (1, 0, 2)
    assert dvbs2_demap.column_order("16apsk", "normal", "26/45") == (3, 2, 0, 1)
    assert dvbs2_demap.column_order("32apsk", "normal", "8/9") == (0, 1, 2, 3, 4)
    with pytest.raises(ValueError, match="QPSK has no interleaver columns"):
        dvbs2_demap.column_order("qpsk", "normal", "1/2")


def test_bad_noise_and_shapes_name_the_parameter():
    mapping = dvbs2_demap.mapping("dvbs2-short-3/5", "8psk")
    y = np.zeros(5400, np.complex64)
    assert mapping.llr(y, 1.0).shape == (16200,)
    for n0 in (0.0, -1.0, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match=r"n0=.* must be a finite number > 0"):
            mapping.llr(y, n0)
    for esn0_db in (float("nan"), "6", None):
        with pytest.raises(ValueError, match=r"esn0_db=.* must be a finite number \(dB\)"):
            dvbs2_demap.n0_from_esn0_db(esn0_db)
    assert dvbs2_demap.n0_from_esn0_db(10) == pytest.approx(0.1)
    with pytest.raises(ValueError, match=r"symbols must be \[batch, S\] or \[S\] with S = 5400 "
                                         r"\(16200 bits / 3 for 8psk\), got shape \(2, 5401\)"):
        mapping.llr(np.zeros((2, 5401), np.complex64), 1.0)
    with pytest.raises(ValueError,
                       match=r"bits must have n = 16200 bits in the last axis, got shape \(3, 64800\)"):
        mapping.modulate(np.zeros((3, 64800), np.uint8))

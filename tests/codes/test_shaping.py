"""Transmission shaping (gpuldpc.codes.shaping): selection, recovery, combining, errors."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.bad_llr import LLR_SATURATION
from gpuldpc.codes.shaping import Shaping


def test_shaping_sets_and_select():
    s = Shaping(8, [2, 3, 4, 5, 2], shortened=[0])
    assert s.n == 5 and s.repeats
    assert s.shortened.tolist() == [0] and s.punctured.tolist() == [1, 6, 7]
    cw = np.arange(16).reshape(2, 8)
    assert s.select(cw).tolist() == [[2, 3, 4, 5, 2], [10, 11, 12, 13, 10]]
    assert s.select(cw[0]).tolist() == [2, 3, 4, 5, 2]


def test_recover_sums_repeats_zeroes_punctured_and_saturates_shortened():
    s = Shaping(8, [2, 3, 4, 5, 2, 2], shortened=[0, 7])
    llr = np.array([[1.0, 2.0, 3.0, 4.0, 10.0, 100.0]], np.float32)
    got = s.recover(llr)
    want = [LLR_SATURATION, 0, 111.0, 2.0, 3.0, 4.0, 0, LLR_SATURATION]
    assert got.dtype == np.float32 and np.array_equal(got[0], np.array(want, np.float32))
    assert np.array_equal(s.recover(llr[0]), got[0])          # 1-D in, 1-D out
    # soft combining: recover into the same buffer adds
    acc = s.recover(llr)
    s.recover(llr, out=acc)
    assert acc[0, 2] == 222.0 and acc[0, 1] == 0 and acc[0, 0] == np.float32(LLR_SATURATION)
    # non-finite LLRs pass through (the decoder's bad-LLR rule sees them)
    bad = llr.copy()
    bad[0, 1] = np.nan
    assert np.isnan(s.recover(bad)[0, 3])


def test_shaping_errors():
    with pytest.raises(ValueError, match=r"transmitted must hold positions in 0\.\.7"):
        Shaping(8, [0, 8])
    with pytest.raises(ValueError, match="shortened positions cannot be transmitted"):
        Shaping(8, [0, 1], shortened=[1])
    with pytest.raises(ValueError, match="at least one"):
        Shaping(8, [])
    with pytest.raises(ValueError, match=r"LLRs must have shape \[batch, 2\]"):
        Shaping(8, [0, 1]).recover(np.zeros((1, 3), np.float32))
    with pytest.raises(ValueError, match="out must be one of float32, float16, int8, got float64"):
        Shaping(8, [0, 1]).recover(np.zeros((1, 2), np.float32), out=np.zeros((1, 8)))


def test_shaped_wifi_code_encodes_and_drops_shortened_info():
    wifi = gl.codes.wifi(648, "1/2")
    code = gl.codes.shaped(wifi, punctured=range(600, 648), shortened=range(300, 324), repeated=[0, 1])
    assert (code.n, code.k) == (648 - 48 - 24 + 2, 300)
    assert np.array_equal(code.info_positions, np.arange(300))
    info = np.random.default_rng(3).integers(0, 2, (4, 300)).astype(np.uint8)
    mother = code.encode_mother(info)
    assert wifi.is_codeword(mother).all() and not mother[:, 300:324].any()
    tx = code.encode(info)
    assert np.array_equal(tx[:, :300], info) and np.array_equal(tx[:, -2:], info[:, :2])
    assert np.array_equal(tx[:, 300:576], mother[:, 324:600])
    with pytest.raises(ValueError, match="information positions"):
        gl.codes.shaped(wifi, shortened=[400])           # a parity position cannot be a known zero
    with pytest.raises(ValueError, match="both punctured and shortened"):
        gl.codes.shaped(wifi, punctured=[5], shortened=[5])
    with pytest.raises(ValueError, match="repeated positions"):
        gl.codes.shaped(wifi, punctured=[5], repeated=[5])


def test_combine_concatenates_redundancy_versions():
    c0 = gl.codes.nr(500, 800, rv=0)
    c2 = c0.with_rv(2, e=600)
    both = gl.codes.combine(c0, c2)
    assert both.n == 1400 and both.k == 500 and both.mother is c0.mother
    assert both.name == f"{c0.name}+{c2.name}"
    info = np.random.default_rng(1).integers(0, 2, (2, 500)).astype(np.uint8)
    assert np.array_equal(both.encode(info), np.hstack([c0.encode(info), c2.encode(info)]))
    llr = np.random.default_rng(2).standard_normal((2, 1400)).astype(np.float32)
    acc = c0.recover(llr[:, :800])
    c2.recover(llr[:, 800:], out=acc)
    assert np.array_equal(both.recover(llr), acc)
    with pytest.raises(ValueError, match="different mother codes"):
        gl.codes.combine(c0, gl.codes.nr(1000, 2000))
    with pytest.raises(TypeError, match="ShapedCode"):
        gl.codes.combine(c0, c0.mother)


@pytest.mark.parametrize("k, e, rv, qm", [(8448, 12672, 0, None), (500, 4000, 1, None), (300, 1500, 3, 4),
                                          (3840, 25000, 2, None), (1000, 1500, 2, 2)])
def test_recover_equals_the_plain_definition(k, e, rv, qm):
    """Recovery by slice runs (circular-buffer reads) or fancy indexing (interleaved) equals
    np.add.at over the transmitted positions, zeros elsewhere, saturation at the fillers;
    recovering into an array adds to it."""
    code = gl.codes.nr(k, e, rv=rv, qm=qm)
    s = code.shaping
    llr = np.random.default_rng(e).standard_normal((3, e)).astype(np.float32)
    want = np.zeros((3, code.mother.n), np.float32)
    np.add.at(want, (np.arange(3)[:, None], s.transmitted[None, :]), llr)
    want[:, s.shortened] = LLR_SATURATION
    got = s.recover(llr)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    assert not got[:, s.punctured].any()
    twice = s.recover(llr, out=got.copy())
    np.testing.assert_allclose(twice[:, s.transmitted], 2 * want[:, s.transmitted], rtol=1e-6, atol=1e-5)


def test_recover_add_false_overwrites_and_the_pinned_pool_reuses_blocks(backend):
    """``add=False`` writes every mother position (no stale values), and a backend with
    page-locked input gets the recovery in reused blocks of its own (ShapedBackend's pool),
    with the same results as fresh arrays."""
    from gpuldpc.codes.shaping import ShapedBackend
    from gpuldpc.decoders import cpu as cpu_backend

    code = gl.codes.nr(500, 1000, rv=1)
    rng = np.random.default_rng(3)
    llr = gl.channel.awgn_llr(code.encode(rng.integers(0, 2, (40, code.k), dtype=np.uint8)),
                              gl.channel.sigma_from_ebn0(3.0, code.k / code.n), rng).astype(np.float32)
    stale = np.full((40, code.mother.n), 123.0, np.float32)
    np.testing.assert_array_equal(code.recover(llr, stale, add=False), code.recover(llr))
    if backend != "cpu":
        pytest.skip("needs the cpu backend")
    dec = gl.Decoder(code, backend="cpu")
    made = []

    class PinnedCpu:                       # the cpu backend, as if it offered page-locked input
        def __init__(self, impl):
            self.decode = impl.decode

        def pinned_llr(self, rows):
            made.append(np.empty((rows, code.decoded.n), np.float32))
            return made[-1]

    shaped = ShapedBackend(PinnedCpu(cpu_backend.make(code.decoded, dec.settings)), code)
    for rows in (40, 17, 40, 3):
        got, want = shaped.decode(llr[:rows]), dec.decode(llr[:rows])
        np.testing.assert_array_equal(got.info, want.info)
        np.testing.assert_array_equal(got.iterations, want.iterations)
    assert len(made) == 1 and len(shaped._free) == 1


def _saturating_recovery(shaping, q, limit=127):
    """The plain definition of int8 recovery: each transmitted LLR added to its mother position
    in the order of transmission, every sum clipped to +-limit; punctured 0, shortened +limit."""
    acc = np.zeros((q.shape[0], shaping.n_mother), np.int64)
    seen = np.zeros(shaping.n_mother, bool)
    for j, p in enumerate(shaping.transmitted):
        acc[:, p] = np.clip(acc[:, p] + q[:, j], -limit, limit) if seen[p] else q[:, j]
        seen[p] = True
    acc[:, shaping.shortened] = limit
    return acc


def _occurrences(shaping):
    return np.bincount(shaping.transmitted, minlength=shaping.n_mother)


def _int8_cases():
    wifi = gl.codes.wifi(648, "1/2")
    return {
        "nr rv0": gl.codes.nr(500, 1000),                                   # 140 fillers, no repeats
        "nr rv0 wrapping": gl.codes.nr(500, 4000),                          # E past the buffer: 2 a position
        "nr rv2 wrapping": gl.codes.nr(500, 4000, rv=2),
        "nr rv0+rv2": gl.codes.combine(gl.codes.nr(500, 2000), gl.codes.nr(500, 2000, rv=2)),
        "nr rv0+rv2 wrapping": gl.codes.combine(gl.codes.nr(500, 4000), gl.codes.nr(500, 4000, rv=2)),  # up to 4
        "shaped wifi": gl.codes.shaped(wifi, punctured=range(600, 648), shortened=range(300, 324),
                                       repeated=[0, 1, 2, 0, 5, 0]),          # position 0 three times
    }


@pytest.mark.parametrize("name", list(_int8_cases()))
def test_int8_recovery_is_the_float32_recovery_saturated(name):
    """int8 E LLRs are recovered in int8 (punctured 0, shortened +127, repeats added with
    saturation at +-127, never wrapped): where a position is received at most twice this is
    the float32 recovery of the same values clipped to +-127 exactly; in general each sum is
    clipped in the order of transmission.  Into the decoded (pruned) code's layout likewise;
    recovering into an int8 array adds to it, saturating."""
    code = _int8_cases()[name]
    s = code.shaping
    rng = np.random.default_rng(len(name))
    q = rng.integers(-127, 128, (3, code.n)).astype(np.int8)        # large values: sums saturate
    got = s.recover(q)
    assert got.dtype == np.int8 and got.shape == (3, code.mother.n)
    f32 = s.recover(q.astype(np.float32))
    clipped = np.clip(f32, -127, 127)
    np.testing.assert_array_equal(got, _saturating_recovery(s, q))
    twice = _occurrences(s) <= 2
    np.testing.assert_array_equal(got[:, twice], clipped[:, twice])
    assert (got[:, s.shortened] == 127).all() and not got[:, s.punctured].any()
    if s.repeats:
        assert (np.abs(f32) > 127).any() and (np.abs(got) == 127).any()      # saturation was exercised
    if _occurrences(s).max() > 2:
        assert not np.array_equal(got, clipped.astype(np.int8))      # sequential saturation differs there
    # the decoder's layout: the decoded code's recovery is the mother's at the kept positions
    np.testing.assert_array_equal(code.decoded_shaping.recover(q), got[:, code.decoded_positions])
    # soft combining into an int8 array saturates as well
    acc = got.copy()
    s.recover(q, out=acc)
    sent = np.unique(s.transmitted)
    want = np.clip(got[:, sent].astype(np.int16) + _saturating_recovery(s, q)[:, sent], -127, 127)
    if not s.repeats:
        np.testing.assert_array_equal(acc[:, sent], want)
    assert acc.dtype == np.int8 and (acc[:, s.shortened] == 127).all()
    # into a stale page-locked-like buffer with add=False: every position written
    stale = np.full_like(got, 99)
    np.testing.assert_array_equal(s.recover(q, stale, add=False), got)


def test_float16_recovery_rounds_saturates_and_keeps_non_finite():
    """float16 recovery: sums rounded to float16 and saturated to +-65504 (not inf), fillers
    +65504, NaN and +-inf passed through for the decoder's bad-LLR rule."""
    s = Shaping(8, [2, 3, 4, 5, 2, 3, 4], shortened=[0])
    h = np.array([[60000, 1.0, np.inf, 3.0, 60000, 0.5, -np.inf],
                  [-60000, np.nan, 1e-3, 1.0, -60000, 1.0, 2.0]], np.float16)
    got = s.recover(h)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got[:, 0], [65504, 65504])
    np.testing.assert_array_equal(got[:, [1, 6, 7]], np.zeros((2, 3)))
    np.testing.assert_array_equal(got[:, 2], [65504, -65504])                 # 120000 saturated
    np.testing.assert_array_equal(got[:, 3], np.float16([1.5, np.nan]))
    assert np.isnan(got[0, 4]) and got[1, 4] == np.float16(np.float16(1e-3) + np.float16(2.0))   # inf + -inf
    assert got[0, 5] == 3 and got[1, 5] == 1
    f32 = s.recover(h[1:].astype(np.float32))
    finite = np.isfinite(f32[0])
    np.testing.assert_array_equal(got[1, finite], np.clip(f32[0, finite], -65504, 65504).astype(np.float16))


def test_recovery_refuses_floats_into_int8():
    s = Shaping(8, [0, 1])
    with pytest.raises(TypeError, match=r"float32 LLRs cannot be recovered into int8: quantize"):
        s.recover(np.zeros((1, 2), np.float32), out=np.zeros((1, 8), np.int8))
    # int8 into float32 is exact, float64 becomes float32
    got = s.recover(np.array([[5, -7]], np.int8), out=np.zeros((1, 8), np.float32), add=False)
    assert got.dtype == np.float32 and got[0, :2].tolist() == [5, -7]
    assert s.recover(np.zeros((1, 2))).dtype == np.float32

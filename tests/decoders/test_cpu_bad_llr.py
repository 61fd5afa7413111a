"""cpu backend: the bad-LLR rule (gpuldpc.bad_llr) applied in the C++ load of each chunk.

NaN, +inf and -inf at the first, middle and last LLR of a frame; bad frames first, last,
astride a SIMD chunk boundary, and filling a whole chunk.  Checked: ``bad_llr`` flags
exactly those frames; every other frame decodes exactly as in the clean batch; a bad
frame decodes exactly as its LLRs sanitized on the host (float32: by the reference
backend, bit for bit, as for clean input; int16/int8: by the same cpu decoder, and an
infinity clips like any huge finite LLR).
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import bad_llr, channel

core = pytest.importorskip("gpuldpc._core", reason="gpuldpc._core is not built (pip install .)")

BAD_VALUES = (np.nan, np.inf, -np.inf)
PLACES = ("first", "last", "boundary", "chunk")


def batch_size(lanes: int) -> int:
    """Three chunks, the last one three frames short (a partly filled chunk)."""
    return 3 * lanes - 3


def bad_frames(place: str, lanes: int) -> list[int]:
    return {"first": [0], "last": [batch_size(lanes) - 1], "boundary": [lanes - 1, lanes],
            "chunk": list(range(lanes, 2 * lanes))}[place]


def spoil(llr: np.ndarray, frames) -> np.ndarray:
    """A copy of ``llr`` with NaN, +inf and -inf at the first, middle and last LLR of each
    frame of ``frames`` (which value goes where rotates from frame to frame)."""
    bad = llr.copy()
    flat = bad.reshape(len(bad), -1)
    positions = (0, flat.shape[1] // 2, flat.shape[1] - 1)
    for i, f in enumerate(frames):
        for j, p in enumerate(positions):
            flat[f, p] = BAD_VALUES[(i + j) % 3]
    return bad


def assert_rows(got, rows, want, want_rows=slice(None)):
    """Frames ``rows`` of ``got`` equal frames ``want_rows`` of ``want`` (bits, iterations, valid)."""
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field)[rows], getattr(want, field)[want_rows])


def check_bad_frames(dec, oracle, llr, frames):
    """The module docstring's checks for one decoder and one placement; returns the result
    of the spoiled batch.  ``oracle`` decodes the bad frames' sanitized LLRs."""
    spoiled = spoil(llr, frames)
    got = dec.decode(spoiled)
    np.testing.assert_array_equal(np.flatnonzero(got.bad_llr), frames)
    clean = dec.decode(llr)
    assert not clean.bad_llr.any()
    others = np.setdiff1d(np.arange(len(llr)), frames)
    assert_rows(got, others, clean, others)
    assert_rows(got, frames, oracle.decode(bad_llr.sanitized(spoiled[frames])[0]))
    return got


def test_llr_saturation_is_the_python_constant():
    assert core.llr_saturation == bad_llr.LLR_SATURATION == 2.0 ** 64


@pytest.fixture(scope="module")
def wifi():
    code = gl.codes.get("wifi-648-1/2")
    rng = np.random.default_rng(11)
    sent = code.encode(rng.integers(0, 2, (batch_size(64), code.k), dtype=np.uint8))
    return code, channel.transmit(code, sent, 1.5, rng)     # the waterfall: mixed outcomes


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("precision, schedule", [("float32", "layered"), ("float32", "flooding"),
                                                 ("int16", "layered"), ("int8", "layered")])
def test_binary_bad_frames_are_flagged_and_loaded_by_the_rule(wifi, precision, schedule, place):
    code, llr = wifi
    kwargs = dict(schedule=schedule, max_iterations=8, on_bad_llr="erase")
    dec = gl.Decoder(code, backend="cpu", precision=precision, threads=2, **kwargs)
    lanes = dec._impl.lanes
    llr = llr[:batch_size(lanes)]
    frames = bad_frames(place, lanes)
    oracle = gl.Decoder(code, backend="reference", **kwargs) if precision == "float32" else dec
    got = check_bad_frames(dec, oracle, llr, frames)
    clean = dec.decode(llr)
    assert len(set(zip(clean.valid, clean.iterations))) > 1     # the batch is not uniform
    if precision != "float32":   # +-inf -> +-2^64 clips to the integer range as 1e30 does
        huge = spoil(llr, frames)
        inf = np.isinf(huge)
        huge[inf] = np.copysign(np.float32(1e30), huge[inf])
        assert_rows(got, slice(None), dec.decode(np.nan_to_num(huge, nan=0.0)))


@pytest.fixture(scope="module")
def gf16():
    code = gl.codes.get("gf16-300-150")
    rng = np.random.default_rng(12)
    words = code.encode(rng.integers(0, code.q, (batch_size(16), code.k)))
    return code, channel.transmit(code, words, 2.0, rng)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_nb_min_max_bad_frames_are_flagged_and_loaded_by_the_rule(gf16, schedule, place):
    code, llr = gf16
    kwargs = dict(algorithm="minmax", schedule=schedule, max_iterations=5, on_bad_llr="erase")
    dec = gl.Decoder(code, backend="cpu", threads=2, **kwargs)
    lanes = dec._impl.lanes
    llr = llr[:batch_size(lanes)]
    check_bad_frames(dec, gl.Decoder(code, backend="reference", **kwargs), llr, bad_frames(place, lanes))


def test_compiled_decoder_returns_the_flags(wifi):
    """gpuldpc._core itself: decode() returns (bits, iterations, valid, bad_llr, None: no soft
    output asked for), no exception."""
    code, llr = wifi
    impl = gl.Decoder(code, backend="cpu")._impl._impl
    spoiled = spoil(llr[:5], [1, 4])
    bits, iterations, valid, flags, soft = impl.decode(spoiled)
    assert soft is None
    assert flags.dtype == np.bool_ and flags.tolist() == [False, True, False, False, True]
    assert bits.shape == (5, code.n) and iterations.shape == valid.shape == (5,)


@pytest.mark.parametrize("backend,precision", [("cpu", "float32"), ("cpu", "int16"), ("cpu", "int8"),
                                               ("reference", "float32")])
def test_huge_finite_llrs_are_clamped_not_overflowed(wifi, backend, precision):
    """Finite LLRs beyond 2^64 (1e30, 1e38, 3e38: a noise estimate near zero) decode as
    +-2^64 -- the received signs, no overflow inside the decoder -- and are not flagged."""
    code, llr = wifi
    llr = llr[:16]
    sign = np.where(llr < 0, np.float32(-1), np.float32(1))
    dec = gl.Decoder(code, backend=backend, precision=precision, max_iterations=8, on_bad_llr="raise")
    want = dec.decode(sign * np.float32(bad_llr.LLR_SATURATION))
    for magnitude in (1e30, 1e38, 3e38):
        got = dec.decode(sign * np.float32(magnitude))
        np.testing.assert_array_equal(got.bits, want.bits)
        np.testing.assert_array_equal(got.iterations, want.iterations)
        assert not got.bad_llr.any()
    mixed = llr.copy()
    mixed[3, :7] = np.float32(3e38) * sign[3, :7]                # a few huge values in a noisy frame
    clamped = llr.copy()
    clamped[3, :7] = np.float32(bad_llr.LLR_SATURATION) * sign[3, :7]
    np.testing.assert_array_equal(dec.decode(mixed).bits, dec.decode(clamped).bits)

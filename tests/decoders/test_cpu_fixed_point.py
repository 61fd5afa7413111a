"""cpu backend, fixed point (int16, int8 min-sum): frame error rate against float32.

Band, per code and SNR point, on the same N frames (paired): with ``a`` the
frames only float32 fails and ``b`` the frames only the fixed-point decoder
fails, McNemar's statistic says ``b - a`` has standard deviation sqrt(a + b)
when both decode equally well.  int16 must satisfy ``b - a <= 3 sqrt(a+b) + 2``
(no measurable loss).  int8 (8-bit messages and posteriors) loses a little
resolution at high rates: ``b - a <= 3 sqrt(a+b) + 0.08 * F + 2`` with F the
float32 failures (at most 8 % more failures, about 0.03 dB).  Float32 stands
for the reference decoder here: test_cpu_binary proves them bit-identical.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel

pytest.importorskip("gpuldpc._core", reason="gpuldpc._core is not built (pip install .)")

WIFI = [f"wifi-{n}-{r}" for n in (648, 1296, 1944) for r in ("1/2", "2/3", "3/4", "5/6")]
WIMAX = [f"wimax-{n}-{r}" for n in (576, 2304) for r in ("1/2", "2/3A", "2/3B", "3/4A", "3/4B", "5/6")]
WATERFALL_DB = {"1/2": 1.5, "2/3": 2.0, "3/4": 2.5, "5/6": 3.0}
FRAMES = 600
RELATIVE_LOSS = {"int16": 0.0, "int8": 0.08}


def failures(decoder, llr, sent):
    return (decoder.decode(llr).bits != sent).any(axis=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", WIFI + WIMAX)
def test_layered_nms_fixed_point_fer_within_band_of_float(name):
    code = gl.codes.get(name)
    start = WATERFALL_DB[name.split("-")[2][:3]]
    decoders = {p: gl.Decoder(code, backend="cpu", precision=p) for p in ("float32", "int16", "int8")}
    rng = np.random.default_rng(1)
    sent = code.encode(rng.integers(0, 2, (FRAMES, code.k), dtype=np.uint8))
    for ebn0 in (start, start + 0.25, start + 0.5):
        llr = channel.transmit(code, sent, ebn0, rng)
        ref = failures(decoders["float32"], llr, sent)
        for precision in ("int16", "int8"):
            fixed = failures(decoders[precision], llr, sent)
            a, b = int((ref & ~fixed).sum()), int((fixed & ~ref).sum())
            band = 3 * np.sqrt(a + b) + RELATIVE_LOSS[precision] * ref.sum() + 2
            assert b - a <= band, (f"{name} {precision} at {ebn0} dB: {fixed.sum()} failures vs "
                                   f"{ref.sum()} in float32 out of {FRAMES}")


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_offset_min_sum_fixed_point_fer_within_band_of_float(schedule):
    code = gl.codes.get("wifi-1944-1/2")
    rng = np.random.default_rng(4)
    sent = code.encode(rng.integers(0, 2, (FRAMES, code.k), dtype=np.uint8))
    ebn0 = 1.75 if schedule == "layered" else 2.25
    llr = channel.transmit(code, sent, ebn0, rng)
    ref = failures(gl.Decoder(code, "oms", schedule, backend="cpu"), llr, sent)
    assert 0.02 * FRAMES <= ref.sum() <= 0.8 * FRAMES, "the SNR point should sit in the waterfall"
    for precision in ("int16", "int8"):
        fixed = failures(gl.Decoder(code, "oms", schedule, backend="cpu", precision=precision), llr, sent)
        a, b = int((ref & ~fixed).sum()), int((fixed & ~ref).sum())
        assert b - a <= 3 * np.sqrt(a + b) + RELATIVE_LOSS[precision] * ref.sum() + 2


def test_saturation_keeps_huge_llrs_decodable():
    """LLRs far beyond the int8/int16 range saturate (no wrap-around)."""
    code = gl.codes.get("wimax-2304-1/2")
    rng = np.random.default_rng(9)
    sent = code.encode(rng.integers(0, 2, (8, code.k), dtype=np.uint8))
    llr = (1.0 - 2.0 * sent).astype(np.float32) * 1e6
    llr[:, ::7] *= -1e-6   # some weak wrong-signed bits (|L| = 1)
    for precision in ("int16", "int8"):
        res = gl.Decoder(code, backend="cpu", precision=precision).decode(llr)
        np.testing.assert_array_equal(res.bits, sent)
        assert res.valid.all()

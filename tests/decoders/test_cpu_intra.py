"""cpu backend, intra-frame path (``preset="latency"``, lib/cpu_intra_decoder.cpp): one frame
at a time with the z rows of a QC layer in the SIMD lanes.

In float32 it gives the reference decoder's hard decisions, iteration counts and syndrome
flags bit for bit, and in float32, int16 and int8 the inter-frame path's (posteriors too),
for WiMAX and WiFi codes at several rates, layered NMS and OMS, early stop on and off, and
frames holding NaN / +-inf; the preset picks the path only where it applies (binary QC
code, layered min-sum, a batch of at most ``intra_frames`` frames).
"""
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import bad_llr, channel

core = pytest.importorskip("gpuldpc._core", reason="gpuldpc._core is not built (pip install .)")

CODES = ["wimax-576-1/2", "wimax-576-3/4A", "wimax-2304-1/2", "wimax-2304-2/3B", "wimax-2304-5/6",
         "wifi-648-1/2", "wifi-648-2/3", "wifi-1944-1/2", "wifi-1944-5/6"]
# Eb/N0 (dB) near the top of the 10-iteration layered NMS waterfall: mixed outcomes.
WATERFALL_DB = {"1/2": 1.5, "2/3": 2.0, "3/4": 2.5, "5/6": 3.0}
NON_QC_ALIST = Path(__file__).parents[1] / "codes" / "data" / "aff3ct_WIMAX_288_576.alist"


def noisy(code, frames, seed, ebn0_db=None):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    rate = code.name.split("-")[2][:3]
    return channel.transmit(code, words, WATERFALL_DB[rate] if ebn0_db is None else ebn0_db, rng)


def assert_same(got, want, rows=slice(None)):
    for field in ("bits", "iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field)[rows], err_msg=field)


@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("algorithm", ["nms", "oms"])
@pytest.mark.parametrize("early_stop", [True, False])
def test_intra_frame_path_matches_reference_bit_for_bit(name, algorithm, early_stop):
    code = gl.codes.get(name)
    llr = noisy(code, 12, seed=7)
    kwargs = dict(algorithm=algorithm, max_iterations=8, early_stop=early_stop)
    dec = gl.Decoder(code, backend="cpu", preset="latency", threads=2, **kwargs)
    step = dec._impl.intra_frames            # 8 with AVX2's float32 lanes, 16 with AVX-512's
    assert step >= 8 and dec._impl.path(step) == "intra-frame"
    want = gl.Decoder(code, backend="reference", **kwargs).decode(llr)
    for i in range(0, len(llr), step):
        assert_same(dec.decode(llr[i:i + step]), want, rows=slice(i, i + step))
    if early_stop:   # the batch is not uniform: frames differ in outcome or iterations
        assert want.valid.any() and len(set(zip(want.valid, want.iterations))) > 1
    else:
        assert (want.iterations == 8).all() and want.valid.any()


@pytest.mark.parametrize("precision", ["float32", "int16", "int8"])
@pytest.mark.parametrize("name", ["wimax-576-1/2", "wimax-2304-3/4A", "wifi-648-1/2", "wifi-1944-5/6"])
def test_every_precision_equals_the_inter_frame_path(name, precision):
    """Row for row the inter-frame decoder's arithmetic (fixed point: saturating, R = L_new - Q):
    the same bits, iterations, flags and (de-scaled) posteriors, NMS and OMS."""
    code = gl.codes.get(name)
    llr = noisy(code, 8, seed=3)
    llr[0, :40] *= 50.0                   # saturated posteriors in frame 0 (fixed point)
    for kwargs in (dict(algorithm="nms", alpha=0.8125), dict(algorithm="oms")):
        kwargs.update(precision=precision, max_iterations=8, soft_output="posterior")
        intra = gl.Decoder(code, backend="cpu", preset="latency", **kwargs)
        inter = gl.Decoder(code, backend="cpu", **kwargs)
        assert intra._impl.path(8) == "intra-frame" and inter._impl.path(8) == "inter-frame"
        got, want = intra.decode(llr), inter.decode(llr)
        assert_same(got, want)
        np.testing.assert_array_equal(got.llr, want.llr)
        assert len(set(zip(want.valid, want.iterations))) > 1


def test_gnu_radio_sign_and_one_frame():
    code = gl.codes.get("wimax-2304-1/2")
    llr = noisy(code, 1, seed=4)
    want = gl.Decoder(code, backend="reference").decode(llr)
    got = gl.Decoder(code, backend="cpu", preset="latency", positive_llr_bit=1).decode(-llr)
    assert_same(got, want)


@pytest.mark.parametrize("name", ["wimax-576-1/2", "wifi-648-1/2"])
def test_non_finite_llrs_are_flagged_and_loaded_by_the_rule(name):
    """NaN, +inf, -inf at the first, middle and last LLR of frames 1 and 3: flagged, and
    decoded as the reference decodes the sanitized LLRs; the other frames as when clean."""
    code = gl.codes.get(name)
    llr = noisy(code, 5, seed=9)
    spoiled = llr.copy()
    for f, values in ((1, (np.nan, np.inf, -np.inf)), (3, (-np.inf, np.nan, np.inf))):
        spoiled[f, [0, code.n // 2, code.n - 1]] = values
    dec = gl.Decoder(code, backend="cpu", preset="latency", on_bad_llr="erase", max_iterations=8)
    assert dec._impl.path(5) == "intra-frame"
    got = dec.decode(spoiled)
    np.testing.assert_array_equal(got.bad_llr, [False, True, False, True, False])
    want = gl.Decoder(code, backend="reference", max_iterations=8).decode(bad_llr.sanitized(spoiled)[0])
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)


def test_preset_picks_the_path_by_batch_size():
    code = gl.codes.get("wimax-2304-1/2")
    dec = gl.Decoder(code, backend="cpu", preset="latency", threads=2)
    limit = dec._impl.intra_frames
    assert limit == max(1, dec._impl.lanes * 2 // 2)
    assert dec._impl.path(1) == dec._impl.path(limit) == "intra-frame"
    assert dec._impl.path(limit + 1) == "inter-frame"
    assert dec.preferred_batch("latency") == 2
    llr = noisy(code, limit + 1, seed=5)
    ref = gl.Decoder(code, backend="reference")
    for frames in (limit + 1, limit, 3, 1):   # inter-frame, then intra-frame (spread over the
        batch = llr[:frames]                 # pool, then on the calling thread): the reference's
        assert_same(dec.decode(batch), ref.decode(batch))            # numbers
    assert dec.decode(llr[:0]).bits.shape == (0, code.n)


@pytest.mark.parametrize("kwargs", [dict(), dict(schedule="flooding"), dict(algorithm="spa")])
def test_other_settings_stay_inter_frame(kwargs):
    code = gl.codes.get("wimax-576-1/2")
    preset = {} if not kwargs else dict(preset="latency")
    dec = gl.Decoder(code, backend="cpu", **preset, **kwargs)
    assert dec._impl.intra_frames == 0 and dec._impl.path(1) == "inter-frame"
    assert dec.preferred_batch("latency") == dec._impl.lanes


def test_code_without_qc_structure_stays_inter_frame():
    code = gl.codes.from_alist(NON_QC_ALIST)
    assert code.base is None
    dec = gl.Decoder(code, backend="cpu", preset="latency")
    assert dec._impl.path(1) == "inter-frame"
    llr = np.full((1, code.n), 2.0, np.float32)
    result = dec.decode(llr)
    assert result.valid.all() and result.iterations.tolist() == [1]


def _compiled(code, base, z, **kwargs):
    H = code.H
    args = dict(algorithm="nms", schedule="layered", precision="float32")
    args.update(kwargs)
    return core.BinaryDecoder(code.n, H.indptr, H.indices, args["algorithm"], args["schedule"],
                              args["precision"], 10, True, 0.75, 0.5, 1.0, 1, 1.0,
                              base=base, z=z, intra_frames=4)


def test_compiled_decoder_refuses_what_the_intra_frame_path_cannot_run():
    code = gl.codes.get("wimax-576-1/2")
    base = np.asarray(code.base, dtype=np.int64)
    assert _compiled(code, base, code.z).intra_frames == 4
    with pytest.raises(ValueError, match="needs the code's QC base matrix"):
        _compiled(code, None, code.z)
    with pytest.raises(ValueError, match="runs 'nms' and 'oms', layered"):
        _compiled(code, base, code.z, algorithm="spa")
    with pytest.raises(ValueError, match="runs 'nms' and 'oms', layered"):
        _compiled(code, base, code.z, schedule="flooding")
    shifted = base.copy()
    shifted[shifted >= 0] = (shifted[shifted >= 0] + 1) % code.z
    with pytest.raises(ValueError, match="check row 0 of H is not row 0 of base row 0 expanded"):
        _compiled(code, shifted, code.z)
    with pytest.raises(ValueError, match="not the base matrix's"):
        _compiled(code, base, code.z + 4)


@pytest.mark.parametrize("precision", ["float32", "int16", "int8"])
@pytest.mark.parametrize("name", ["wimax-2304-1/2", "wifi-1944-1/2"])
def test_frame_errors_equal_the_inter_frame_decoders_on_300_noisy_frames(name, precision):
    """Issue 17's CPU target asks for the inter-frame decoder's FER: 300 frames in the
    waterfall (1.5 dB), 10 iterations, early stop, decoded one call per frame on the
    intra-frame path and as one batch on the inter-frame path: the same bits, iterations and
    flags frame for frame, so the same frame errors (some, not all)."""
    code = gl.codes.get(name)
    rng = np.random.default_rng(17)
    words = code.encode(rng.integers(0, 2, (300, code.k), dtype=np.uint8))
    llr = channel.transmit(code, words, 1.5, rng)
    kwargs = dict(precision=precision, max_iterations=10, threads=1)
    intra = gl.Decoder(code, backend="cpu", preset="latency", **kwargs)
    assert intra._impl.path(1) == "intra-frame"
    frames = [intra.decode(frame) for frame in llr]
    want = gl.Decoder(code, backend="cpu", **kwargs).decode(llr)
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(np.concatenate([getattr(f, field) for f in frames]), getattr(want, field),
                                      err_msg=field)
    errors = (want.bits != words).any(axis=1).sum()
    assert 10 < errors < 290

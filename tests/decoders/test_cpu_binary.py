"""cpu backend, binary codes: float32 min-sum gives the reference decoder's bits.

Every WiFi code and the WiMAX rates at n = 576 and 2304, both schedules, both
min-sum rules: identical hard decisions, iteration counts and syndrome flags
on identical LLRs (the contract in gpuldpc.decoders.reference_binary).
Sum-product is held to the reference's frame error rate.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel

pytest.importorskip("gpuldpc._core", reason="gpuldpc._core is not built (pip install .)")

WIFI = [f"wifi-{n}-{r}" for n in (648, 1296, 1944) for r in ("1/2", "2/3", "3/4", "5/6")]
WIMAX = [f"wimax-{n}-{r}" for n in (576, 2304) for r in ("1/2", "2/3A", "2/3B", "3/4A", "3/4B", "5/6")]
CODES = WIFI + WIMAX
# Eb/N0 (dB) near the top of the waterfall of 10-iteration layered NMS (FER 0.2..0.5),
# so a batch mixes frames that converge early, late and never; flooding needs ~0.5 dB more.
WATERFALL_DB = {"1/2": 1.5, "2/3": 2.0, "3/4": 2.5, "5/6": 3.0}
FLOODING_EXTRA_DB = 0.5


def waterfall_db(name, schedule="layered"):
    return WATERFALL_DB[name.split("-")[2][:3]] + (FLOODING_EXTRA_DB if schedule == "flooding" else 0.0)


def noisy_codewords(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    return words, channel.transmit(code, words, ebn0_db, rng)


def assert_same_result(got, want):
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)


@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
@pytest.mark.parametrize("algorithm", ["nms", "oms"])
def test_float_min_sum_matches_reference_bit_for_bit(name, schedule, algorithm):
    code = gl.codes.get(name)
    _, llr = noisy_codewords(code, 24, waterfall_db(name, schedule), seed=7)
    kwargs = dict(algorithm=algorithm, schedule=schedule, max_iterations=8)
    want = gl.Decoder(code, backend="reference", **kwargs).decode(llr)
    got = gl.Decoder(code, backend="cpu", precision="float32", threads=1, **kwargs).decode(llr)
    assert_same_result(got, want)
    # the batch is not uniform: frames differ in outcome or iterations
    assert want.valid.any() and len(set(zip(want.valid, want.iterations))) > 1


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_fixed_iterations_and_non_default_alpha_beta_match_reference(schedule):
    code = gl.codes.get("wimax-576-1/2")
    _, llr = noisy_codewords(code, 40, 1.5, seed=3)
    for kwargs in (dict(algorithm="nms", alpha=0.8125), dict(algorithm="oms", beta=0.3)):
        kwargs.update(schedule=schedule, max_iterations=6, early_stop=False)
        want = gl.Decoder(code, backend="reference", **kwargs).decode(llr)
        got = gl.Decoder(code, backend="cpu", threads=1, **kwargs).decode(llr)
        assert_same_result(got, want)
        assert (got.iterations == 6).all()


def test_negative_zero_and_tied_minima_match_reference():
    """-0.0 counts as positive; equal smallest |Q| in a row gives min2 = min1."""
    code = gl.codes.get("wifi-648-1/2")
    rng = np.random.default_rng(5)
    llr = rng.choice(np.float32([-2.0, -1.0, -0.0, 0.0, 1.0, 2.0]), size=(20, code.n))
    want = gl.Decoder(code, backend="reference", max_iterations=5).decode(llr)
    got = gl.Decoder(code, backend="cpu", threads=1, max_iterations=5).decode(llr)
    assert_same_result(got, want)


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_sum_product_frame_error_rate_matches_reference(schedule):
    """FER band: the two decoders' failures on the same 200 frames differ by at
    most 3 sigma of a paired (McNemar) count plus one frame."""
    code = gl.codes.get("wimax-576-1/2")
    sent, llr = noisy_codewords(code, 200, 1.75, seed=11)
    kwargs = dict(algorithm="spa", schedule=schedule, max_iterations=10)
    ref_fail = (gl.Decoder(code, backend="reference", **kwargs).decode(llr).bits != sent).any(1)
    cpu_fail = (gl.Decoder(code, backend="cpu", **kwargs).decode(llr).bits != sent).any(1)
    only_ref, only_cpu = int((ref_fail & ~cpu_fail).sum()), int((cpu_fail & ~ref_fail).sum())
    assert 10 <= ref_fail.sum() <= 190, "the SNR point should sit in the waterfall"
    assert abs(only_cpu - only_ref) <= 3 * np.sqrt(only_ref + only_cpu) + 1


def test_noiseless_codewords_decode_in_one_iteration_in_every_precision():
    code = gl.codes.get("wifi-1944-5/6")
    rng = np.random.default_rng(2)
    words = code.encode(rng.integers(0, 2, (70, code.k), dtype=np.uint8))
    llr = (1.0 - 2.0 * words).astype(np.float32) * 4.0
    for precision in ("float32", "int16", "int8"):
        res = gl.Decoder(code, backend="cpu", precision=precision).decode(llr)
        np.testing.assert_array_equal(res.bits, words)
        np.testing.assert_array_equal(res.info, words[:, :code.k])
        assert res.valid.all() and (res.iterations == 1).all()

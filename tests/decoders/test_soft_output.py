"""Soft output (``gl.Decoder(soft_output=...)``, :mod:`gpuldpc.soft`): reference and cpu backends.

The reference decoder is the oracle: its ``DecodeResult.llr`` of each frame equals its
posteriors after that frame's iteration count (``posterior``); the cpu backend gives the same
float32 numbers for min-sum (both schedules, early stop on and off), SPA within 1e-4 relative
after whole decodes;
hard decisions follow from the LLRs in the decoder's sign.  ``soft_dtype="float16"``: the
float32 soft output through :func:`gpuldpc.soft.to_float16`, bit for bit, on both backends.
"""
import dataclasses

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel, soft
from gpuldpc.decoders import cuda as cuda_backend
from gpuldpc.decoders import reference

CODES = ("wimax-2304-1/2", "wifi-1944-2/3")
EBN0_DB = {"wimax-2304-1/2": 1.5, "wifi-1944-2/3": 2.0}   # waterfall: frames stop early, late, never


def ebn0(name, schedule):
    """The waterfall of layered NMS; flooding needs 0.5 dB more."""
    return EBN0_DB[name] + (0.5 if schedule == "flooding" else 0.0)


def noisy(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, code.q, (frames, code.k)))
    return words, channel.transmit(code, words, ebn0_db, rng)


def decode(code, backend, llr, **kw):
    return gl.Decoder(code, backend=backend, soft_output="posterior", **kw).decode(llr)


@pytest.fixture(scope="module")
def cpu(native_core):
    return "cpu"


@pytest.fixture(params=["reference", "cpu"])
def host_backend(request):
    """Each host backend in turn (cpu: skipped without gpuldpc._core)."""
    if request.param == "cpu":
        request.getfixturevalue("native_core")
    return request.param


def wifi_648(seed):
    code = gl.codes.get("wifi-648-1/2")
    return code, noisy(code, 8, 2.0, seed)[1]


@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_reference_llr_is_the_posterior_at_each_frames_stop(name, schedule):
    code = gl.codes.get(name)
    _, llr = noisy(code, 12, ebn0(name, schedule), 1)
    dec = gl.Decoder(code, backend="reference", schedule=schedule, soft_output="posterior")
    res = dec.decode(llr)
    assert res.llr.dtype == np.float32 and res.llr.shape == (12, code.n)
    assert len(set(res.iterations.tolist())) > 1                 # frames stopped at different iterations
    oracle = reference.make(code, dec.settings)
    for f in range(12):
        np.testing.assert_array_equal(res.llr[f], oracle.posterior(llr[f:f + 1], int(res.iterations[f]))[0])
    np.testing.assert_array_equal(res.bits, (res.llr < 0).astype(np.uint8))


@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("algorithm", ["nms", "oms"])
def test_cpu_min_sum_llrs_are_the_references(cpu, name, schedule, early_stop, algorithm):
    code = gl.codes.get(name)
    _, llr = noisy(code, 40, ebn0(name, schedule), 2)
    kw = dict(schedule=schedule, early_stop=early_stop, algorithm=algorithm)
    want, got = decode(code, "reference", llr, **kw), decode(code, cpu, llr, **kw)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    assert got.llr.dtype == np.float32
    assert np.array_equal(got.llr.view(np.uint32), want.llr.view(np.uint32))   # bit for bit
    np.testing.assert_array_equal(got.bits, (got.llr < 0).astype(np.uint8))


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
@pytest.mark.parametrize("name, ebn0_db", [("wimax-2304-1/2", 2.5), ("wifi-1944-1/2", 1.6)])
def test_cpu_spa_llrs_within_1e4_of_the_reference(cpu, schedule, name, ebn0_db):
    """Whole decodes, 10 iterations (early stop on and off): within 1e-4 relative of the
    reference's tanh products in float64.  The cpu forms the sum over a row's other edges as a
    prefix plus a suffix sum; with the row's total less the edge's own term (before) a dominant
    edge cancelled the rest, and after 10 iterations values differed by up to 88 % (docs/cpu.md)."""
    code = gl.codes.get(name)
    _, llr = noisy(code, 32, ebn0_db, 3)
    for early_stop in (False, True):
        kw = dict(schedule=schedule, algorithm="spa", early_stop=early_stop, max_iterations=10)
        want, got = decode(code, "reference", llr, **kw), decode(code, cpu, llr, **kw)
        assert np.abs(want.llr).max() > 30 and 0 < want.valid.sum()
        np.testing.assert_array_equal(got.iterations, want.iterations)
        np.testing.assert_allclose(got.llr, want.llr, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(got.bits, want.bits)
        np.testing.assert_array_equal(got.bits, (got.llr < 0).astype(np.uint8))


def test_positive_llr_bit_negates_the_soft_output(host_backend):
    backend = host_backend
    code, llr = wifi_648(4)
    textbook = decode(code, backend, llr)
    gnuradio = decode(code, backend, -llr, positive_llr_bit=1)
    np.testing.assert_array_equal(gnuradio.llr, -textbook.llr)
    np.testing.assert_array_equal(gnuradio.bits, (gnuradio.llr > 0).astype(np.uint8))


def test_extrinsic_is_posterior_less_channel(host_backend):
    backend = host_backend
    code, llr = wifi_648(5)
    llr[2, 7], llr[3, 9] = np.nan, -np.inf
    post = decode(code, backend, llr, on_bad_llr="erase").llr
    ext = gl.Decoder(code, backend=backend, soft_output="extrinsic", on_bad_llr="erase").decode(llr).llr
    channel_llr = np.nan_to_num(llr, nan=0.0, posinf=gl.bad_llr.LLR_SATURATION, neginf=-gl.bad_llr.LLR_SATURATION)
    np.testing.assert_array_equal(ext, post - channel_llr)
    flipped = gl.Decoder(code, backend=backend, soft_output="extrinsic", positive_llr_bit=1,
                         on_bad_llr="erase").decode(-llr).llr
    np.testing.assert_array_equal(flipped, -ext)
    submitted = gl.Decoder(code, backend=backend, soft_output="extrinsic", on_bad_llr="erase").submit(llr)
    np.testing.assert_array_equal(submitted.result().llr, ext)


def test_reference_float16_llrs_are_its_binary16_posteriors():
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = noisy(code, 12, 1.5, 6)
    res = decode(code, "reference", llr, precision="float16")
    assert res.llr.dtype == np.float32
    np.testing.assert_array_equal(res.llr.astype(np.float16).astype(np.float32), res.llr)   # half values
    np.testing.assert_array_equal(res.bits, (res.llr < 0).astype(np.uint8))
    dec = gl.Decoder(code, backend="reference", precision="float16", early_stop=False, max_iterations=4,
                     soft_output="posterior")
    np.testing.assert_array_equal(dec.decode(llr).llr,
                                  reference.make(code, dec.settings).posterior(llr, 4).astype(np.float32))


@pytest.mark.parametrize("precision, scale", [("int16", 64.0), ("int8", 6.0)])
def test_cpu_fixed_point_llrs_are_descaled(cpu, precision, scale):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = noisy(code, 16, 2.0, 7)
    res = decode(code, cpu, llr, precision=precision)
    steps = res.llr * scale
    np.testing.assert_array_equal(steps, np.round(steps))                      # whole fixed-point steps
    assert np.abs(steps).max() <= np.iinfo(precision).max
    np.testing.assert_array_equal(res.bits, (res.llr < 0).astype(np.uint8))
    flipped = decode(code, cpu, -llr, precision=precision, positive_llr_bit=1)
    np.testing.assert_array_equal(flipped.llr, -res.llr)


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_gf_q_soft_output_cpu_equals_reference(cpu, schedule):
    code = gl.codes.get("gf16-300-150")
    _, llr = noisy(code, 12, 2.0, 8)
    want, got = decode(code, "reference", llr, schedule=schedule), decode(code, cpu, llr, schedule=schedule)
    assert want.llr.shape == (12, code.n, code.q)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.llr, want.llr)
    np.testing.assert_array_equal(want.llr.min(axis=-1), 0.0)                # normalised costs
    np.testing.assert_array_equal(want.llr.argmin(axis=-1), want.bits)        # 0 at the decision


def test_shaped_code_soft_output_at_the_decoded_positions(backend):
    code = gl.codes.nr(1000, 1800)
    rng = np.random.default_rng(9)
    llr = channel.awgn_llr(code.encode(rng.integers(0, 2, (4, code.k), dtype=np.uint8)), 0.7, rng)
    res = decode(code, backend, llr)
    assert res.llr.shape == res.bits.shape == (4, len(code.decoded_positions))
    np.testing.assert_array_equal(res.bits, (res.llr < 0).astype(np.uint8))
    assert res.valid.all()
    flipped = decode(code, backend, -llr, positive_llr_bit=1)
    np.testing.assert_array_equal(flipped.llr, -res.llr)


def test_no_soft_output_by_default(backend):
    code, llr = wifi_648(10)
    assert gl.Decoder(code, backend=backend).decode(llr).llr is None


@pytest.mark.parametrize("code_name, soft_output, message", [
    ("wifi-648-1/2", "yes", "soft_output='yes' is not one of"),
    ("gf16-300-150", "extrinsic", "soft_output='extrinsic' is for binary codes"),
])
def test_bad_soft_output_raises(code_name, soft_output, message):
    with pytest.raises(ValueError, match=message):
        gl.Decoder(gl.codes.get(code_name), backend="reference", soft_output=soft_output)


def test_extrinsic_of_a_shaped_code_raises():
    with pytest.raises(ValueError, match="soft_output='extrinsic' is for unshaped codes"):
        gl.Decoder(gl.codes.nr(1000, 1800), backend="reference", soft_output="extrinsic")


@pytest.mark.parametrize("algorithm, preset", [("fft-spa", "throughput"), ("minmax", "latency")])
def test_gf_q_cuda_soft_output_refusals_before_any_gpu(algorithm, preset):
    """GF(q) soft output on the GPU is Min-Max's (throughput preset); the others are refused
    before any GPU is touched."""
    code = gl.codes.get("gf16-300-150")
    settings = gl.Decoder(code, backend="reference", soft_output="posterior").settings
    settings = dataclasses.replace(settings, algorithm=algorithm, options={"preset": preset})
    with pytest.raises(ValueError, match="GF\\(q\\) cuda decoders write posterior costs with Min-Max"):
        cuda_backend.make(code, settings)


def test_to_float16_clamps_to_the_largest_finite_half_and_rounds_to_nearest_even():
    x = np.array([1e6, -1e6, 65519.0, 65520.0, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, -2 ** -26, 0.1],
                 np.float32)
    got = soft.to_float16(x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got[:4], [65504, -65504, 65504, 65504])   # NumPy alone: 65520 -> inf
    assert got[4] == 1 and got[5] == 1 + 2 ** -9                             # ties to even
    assert got[6] == 0 and np.signbit(got[7]) and got[7] == 0                # below 2^-25: +-0
    assert got[8] == np.float16(0.1)


@pytest.mark.parametrize("soft_output", ["posterior", "extrinsic"])
@pytest.mark.parametrize("positive_llr_bit", [0, 1])
def test_float16_soft_output_is_the_float32_one_converted(host_backend, soft_output, positive_llr_bit):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = noisy(code, 16, 1.5, 11)
    llr[3] *= 2e4                                    # posteriors past 65504: clamped, not inf
    sign = -1 if positive_llr_bit else 1
    kw = dict(backend=host_backend, soft_output=soft_output, positive_llr_bit=positive_llr_bit)
    wide = gl.Decoder(code, **kw).decode(sign * llr)
    half = gl.Decoder(code, soft_dtype="float16", **kw).decode(sign * llr)
    assert half.llr.dtype == np.float16 and np.isfinite(half.llr).all()
    np.testing.assert_array_equal(half.llr.view(np.uint16), soft.to_float16(wide.llr).view(np.uint16))
    np.testing.assert_array_equal(half.bits, wide.bits)
    assert np.abs(wide.llr[3]).max() > 65504 and np.abs(half.llr[3]).max() == 65504


def test_float16_soft_output_of_gf_q_costs_and_fixed_point(cpu):
    code = gl.codes.get("gf16-300-150")
    _, llr = noisy(code, 6, 2.0, 12)
    wide = decode(code, cpu, llr)
    half = decode(code, cpu, llr, soft_dtype="float16")
    np.testing.assert_array_equal(half.llr, soft.to_float16(wide.llr))
    binary = gl.codes.get("wifi-648-1/2")
    _, llr = noisy(binary, 6, 2.0, 13)
    wide = decode(binary, cpu, llr, precision="int8")
    np.testing.assert_array_equal(decode(binary, cpu, llr, precision="int8", soft_dtype="float16").llr,
                                  soft.to_float16(wide.llr))


@pytest.mark.parametrize("kw, message", [
    (dict(soft_output="posterior", soft_dtype="float64"), "soft_dtype='float64' is not one of 'float32', 'float16'"),
    (dict(soft_dtype="float16"), "soft_dtype='float16' is the dtype of the soft output; ask for one"),
])
def test_bad_soft_dtype_raises(kw, message):
    with pytest.raises(ValueError, match=message):
        gl.Decoder(gl.codes.get("wifi-648-1/2"), backend="reference", **kw)

"""Packed int4 LLRs (``llr_dtype="int4"``, :mod:`gpuldpc.int4`) on the host backends.

``gl.pack_int4`` / ``gl.unpack_int4``: the byte layout (low nibble = even position), the
quantiser ``clip(rint(llr / llr_scale), -7, 7)``, -8 read as -7, odd ``n``; the reference and
cpu backends decode packed input exactly as the float32 LLRs ``unpack_int4(p) * llr_scale``
(bits, iterations, flags, soft output, both signs of ``positive_llr_bit``); the cpu's
fixed-point precisions take the int4 values as their integers; errors name the parameter.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import int4


def _noisy(name, frames, ebn0_db=1.8, seed=3):
    code = gl.codes.get(name)
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    return code, cw, gl.channel.transmit(code, cw, ebn0_db, rng)


@pytest.fixture(params=["reference", "cpu"])
def host_backend(request):
    """Each host backend in turn (cpu: skipped without gpuldpc._core)."""
    if request.param == "cpu":
        request.getfixturevalue("native_core")
    return request.param


def test_pack_layout_low_nibble_is_the_even_position():
    llr = np.array([1, -1, 7, -7, 0, 3, -2], np.float32)
    packed = gl.pack_int4(llr)
    assert packed.dtype == np.uint8 and packed.shape == (4,)
    assert packed.tolist() == [0xF1, 0x97, 0x30, 0x0E]          # odd n: the last high nibble is 0
    np.testing.assert_array_equal(gl.unpack_int4(packed, 7), llr.astype(np.int8))


def test_quantiser_scale_rounding_and_bad_values():
    llr = np.array([[0.74, 0.76, 1.25, -1.25, 100.0, -100.0, np.nan, np.inf, -np.inf, -0.2]], np.float32)
    q = gl.unpack_int4(gl.pack_int4(llr, llr_scale=0.5), 10)
    # rint(llr / 0.5): 1.48 -> 1, 1.52 -> 2, 2.5 -> 2 (half to even), clipped to +-7; NaN 0, +-inf +-7
    assert q.tolist() == [[1, 2, 2, -2, 7, -7, 0, 7, -7, 0]]


def test_round_trip_of_every_value_and_minus_eight_read_as_minus_seven():
    every = np.arange(256, dtype=np.uint8)                      # all nibble pairs, once each
    values = gl.unpack_int4(every, 512)
    assert values.dtype == np.int8 and values.min() == -7 and values.max() == 7
    lo, hi = values[0::2], values[1::2]
    assert lo[8] == -7 and hi[0x80] == -7                       # the nibble 0x8
    np.testing.assert_array_equal(lo[:16], [0, 1, 2, 3, 4, 5, 6, 7, -7, -7, -6, -5, -4, -3, -2, -1])
    np.testing.assert_array_equal(gl.unpack_int4(gl.pack_int4(values.astype(np.float32)), 512), values)
    rng = np.random.default_rng(0)
    q = rng.integers(-7, 8, (5, 9)).astype(np.int8)             # batch, odd n
    np.testing.assert_array_equal(gl.unpack_int4(gl.pack_int4(q * np.float32(0.3), 0.3), 9), q)


@pytest.mark.parametrize("call, error, message", [
    (lambda: gl.unpack_int4(np.zeros((2, 4), np.int8), 8), TypeError, "must be uint8"),
    (lambda: gl.unpack_int4(np.zeros((2, 4), np.uint8), 9), ValueError, r"shape \[batch, 5\]"),
    (lambda: gl.unpack_int4(np.zeros((2, 4), np.uint8), 0), ValueError, "n must be an integer >= 1"),
    (lambda: gl.pack_int4(np.zeros(4), llr_scale=0), ValueError, "llr_scale must be a positive finite"),
    (lambda: gl.pack_int4(np.zeros((2, 2, 2))), ValueError, r"shape \[n\] or \[batch, n\]"),
    (lambda: gl.pack_int4(np.zeros(3, complex)), TypeError, "real array"),
])
def test_pack_unpack_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("name", ["wimax-2304-1/2", "wifi-648-1/2"])
@pytest.mark.parametrize("positive_llr_bit", [0, 1])
def test_host_backends_decode_int4_as_its_float32_values(host_backend, name, positive_llr_bit):
    code, cw, llr = _noisy(name, 24)
    scale = 0.75
    sign = -1 if positive_llr_bit else 1
    packed = gl.pack_int4(sign * llr, scale)
    values = gl.unpack_int4(packed, code.n) * np.float32(scale)
    for soft in ("posterior", "extrinsic"):
        kw = dict(backend=host_backend, positive_llr_bit=positive_llr_bit, soft_output=soft, early_stop=True)
        got = gl.Decoder(code, llr_dtype="int4", llr_scale=scale, **kw).decode(packed)
        want = gl.Decoder(code, **kw).decode(values)
        for field in ("bits", "iterations", "valid", "llr"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=f"{soft} {field}")
    assert not got.bad_llr.any()
    assert (got.bits != cw).any(axis=1).mean() < 0.5
    assert len(set(got.iterations.tolist())) > 1


@pytest.mark.parametrize("precision", ["int16", "int8"])
def test_cpu_fixed_point_takes_the_int4_values_as_its_integers(native_core, precision):
    """Fixed-point scale 1 / llr_scale: the decoder's integers are the int4 values, so the
    decode is that of the same integers given as float32 with llr_scale 1 (steps of 1)."""
    code, _, llr = _noisy("wimax-576-1/2", 40)
    packed = gl.pack_int4(llr, 0.4)
    got = gl.Decoder(code, backend="cpu", precision=precision, llr_dtype="int4", llr_scale=0.4,
                     soft_output="posterior").decode(packed)
    want = gl.Decoder(code, backend="cpu", precision=precision, llr_scale=1.0,
                      soft_output="posterior").decode(gl.unpack_int4(packed, code.n).astype(np.float32))
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_allclose(got.llr, want.llr * np.float32(0.4), rtol=1e-6)   # de-scaled: LLR units


def test_submit_pinned_llr_and_a_single_frame(host_backend):
    code, _, llr = _noisy("wifi-648-1/2", 6)
    dec = gl.Decoder(code, backend=host_backend, llr_dtype="int4")
    pinned = dec.pinned_llr(6)
    assert pinned.shape == (6, 324) and pinned.dtype == np.uint8
    pinned[:] = gl.pack_int4(llr)
    want = dec.decode(pinned)
    np.testing.assert_array_equal(dec.submit(pinned).result().bits, want.bits)
    np.testing.assert_array_equal(dec.decode(pinned[2]).bits, want.bits[2:3])


@pytest.mark.parametrize("kw, llr, error, message", [
    (dict(llr_scale=-0.5), None, ValueError, "llr_scale must be a positive finite number"),
    (dict(llr_scale="1"), None, ValueError, "llr_scale must be a positive finite number"),
    (dict(), np.zeros((2, 648), np.float32), TypeError, r"packed int4 LLRs .*gl.pack_int4"),
    (dict(), np.zeros((2, 648), np.int8), TypeError, r"packed int4 LLRs .*gl.pack_int4"),
    (dict(), np.zeros((2, 648), np.uint8), ValueError, r"shape \[batch, 324\] \(llr_dtype='int4'"),
])
def test_bad_int4_input_raises(host_backend, kw, llr, error, message):
    code = gl.codes.get("wifi-648-1/2")
    with pytest.raises(error, match=message):
        gl.Decoder(code, backend=host_backend, llr_dtype="int4", **kw).decode(llr)


def test_int4_refuses_gf_q_and_shaped_codes():
    with pytest.raises(ValueError, match="llr_dtype='int4' is for binary codes"):
        gl.Decoder(gl.codes.get("gf16-300-150"), backend="reference", llr_dtype="int4")
    with pytest.raises(ValueError, match="llr_dtype='int4' takes plain codes"):
        gl.Decoder(gl.codes.nr(1000, 1800), backend="reference", llr_dtype="int4")


def test_packed_width_and_fixed_point_scale():
    assert [int4.packed_width(n) for n in (1, 2, 575, 2304)] == [1, 1, 288, 1152]
    assert int4.fixed_point_scale({"llr_dtype": "int4", "llr_scale": 0.25}) == 4.0
    assert not int4.requested({"llr_dtype": "int8"}) and int4.requested({"llr_dtype": "int4"})


@pytest.mark.parametrize("name", ["wimax-2304-1/2", "wifi-1944-2/3", "wimax-576-5/6"])
def test_binary16_kernels_read_int4_the_others_int8(name):
    """Which entry point an int4 decoder runs (no GPU): the binary16 QC kernels read the packed
    rows themselves (``_i4``), the float32 ones (and the latency kernels) the unpacked int8 rows."""
    from gpuldpc.cuda.decoder import kernel_name, unpacked_suffix
    from gpuldpc.cuda.layout import qc_layout

    lay = qc_layout(gl.codes.get(name))
    for schedule in ("layered", "flooding"):
        for preset in ("throughput", "latency"):
            half = kernel_name(lay, "nms", schedule, "int4", preset, "float16")
            assert half.startswith(("qc_hs", "qc_hw", "qc_hm")) and half.endswith(f"{schedule}_i4")
            assert half[:-3] == kernel_name(lay, "nms", schedule, "int8", preset, "float16")[:-3]
            assert kernel_name(lay, "nms", schedule, "int4", preset).endswith(f"{schedule}_i8")
    assert [unpacked_suffix(d) for d in ("float32", "float16", "int8", "int4")] == ["f32", "f16", "i8", "i8"]

"""Soft output of the CUDA kernels (``gl.Decoder(backend="cuda", soft_output=...)``,
:mod:`gpuldpc.soft`) against the reference decoder, the oracle: the throughput preset's
float32 min-sum kernels (``ms*``, ``stored``) give the reference's float32 posteriors bit for
bit, the binary16 kernels (``hs*``) the reference's float16 posteriors (converted to float32),
each frame's at its stop; the sign of ``positive_llr_bit``; extrinsic LLRs; several streams
and chunks (the results block); a shaped 5G NR code (GPU recovery); GF(q) Min-Max posterior
costs; refusals of the latency preset, of FFT-SPA and of results on the GPU;
``soft_dtype="float16"`` (converted on the GPU) equal to :func:`gpuldpc.soft.to_float16` of the
float32 soft output for every input dtype (int4 too).

The tests without the ``cuda`` marker need no GPU.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import soft
from gpuldpc.cuda import qc_layout

CODES = ("wimax-2304-1/2", "wifi-1944-2/3", "wifi-648-1/2")
EBN0_DB = {"wimax-2304-1/2": 1.5, "wifi-1944-2/3": 2.0, "wifi-648-1/2": 2.0}   # waterfall: mixed stops
SETTINGS = [dict(algorithm="nms", schedule="layered", early_stop=True),
            dict(algorithm="oms", schedule="layered", early_stop=False),
            dict(algorithm="nms", schedule="flooding", early_stop=True),
            dict(algorithm="oms", schedule="flooding", early_stop=False)]


def _llrs(frames, name, schedule, count=300, seed=11):
    code = gl.codes.get(name)
    return code, frames(code, EBN0_DB[name] + (0.5 if schedule == "flooding" else 0.0), count, seed)[1]


def _decode(code, backend, llr, **kw):
    return gl.Decoder(code, backend=backend, max_iterations=10, soft_output="posterior", **kw).decode(llr)


def _assert_identical(got, want, what):
    np.testing.assert_array_equal(got.iterations, want.iterations, err_msg=what)
    np.testing.assert_array_equal(got.bits, want.bits, err_msg=what)
    assert got.llr.dtype == np.float32 and got.llr.shape == want.llr.shape, what
    differ = np.flatnonzero((got.llr.view(np.uint32) != want.llr.view(np.uint32)).any(axis=1))
    assert differ.size == 0, f"{what}: {differ.size} frames differ in their LLRs, first {differ[:5].tolist()}"


@pytest.mark.cuda
@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_cuda_soft_output_is_the_references(cuda, frames, name, settings, precision):
    code, llr = _llrs(frames, name, settings["schedule"])
    want = _decode(code, "reference", llr, precision=precision, **settings)
    got = _decode(code, "cuda", llr, precision=precision, **settings)
    if settings["early_stop"]:
        assert len(set(want.iterations.tolist())) > 2      # frames stopped at several iterations
    _assert_identical(got, want, f"{name} {settings} {precision}")
    np.testing.assert_array_equal(got.bits, (got.llr < 0).astype(np.uint8))


@pytest.mark.cuda
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
@pytest.mark.parametrize("name, ebn0_db", [("wimax-2304-1/2", 2.5), ("wifi-1944-1/2", 1.6)])
def test_cuda_spa_llrs_within_1e4_of_the_reference(cuda, frames, schedule, name, ebn0_db):
    """SPA runs on the stored kernel in the phi form (R = sign phi(sum of the other edges'
    phi(|Q|)), prefix plus suffix, |R| <= 30): whole decodes, 10 iterations, early stop on and
    off, within 1e-4 relative of the reference's tanh products in float64 (issue 16), the same
    iteration counts and decisions, ``bits == (llr < 0)``.  The former boxplus recursion
    (``__expf``, no cap at 30) held only 1e-3 after one iteration."""
    code = gl.codes.get(name)
    llr = frames(code, ebn0_db, 32, 3)[1]
    for early_stop in (False, True):
        kw = dict(schedule=schedule, algorithm="spa", early_stop=early_stop)
        dec = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="posterior", **kw)
        assert dec._impl.decoder.kernel.startswith("qc_stored")
        got, want = dec.decode(llr), _decode(code, "reference", llr, **kw)
        assert np.abs(want.llr).max() > 30 and 0 < want.valid.sum()
        np.testing.assert_array_equal(got.iterations, want.iterations)
        np.testing.assert_allclose(got.llr, want.llr, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(got.bits, want.bits)
        np.testing.assert_array_equal(got.bits, (got.llr < 0).astype(np.uint8))


@pytest.mark.cuda
@pytest.mark.parametrize("llr_dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_cuda_soft_output_in_the_positive_llr_bit_sign(cuda, frames, llr_dtype, precision):
    code, llr = _llrs(frames, "wimax-2304-1/2", "layered", count=64)
    scale = 0.25 if llr_dtype == "int8" else 1.0
    host = (np.clip(np.round(llr / scale), -127, 127).astype(np.int8) if llr_dtype == "int8"
            else llr.astype(llr_dtype))
    channel_llr = host.astype(np.float32) * np.float32(scale) + np.float32(0)   # as the kernels load it
    opts = dict(llr_dtype=llr_dtype, llr_scale=scale, precision=precision)
    want = _decode(code, "reference", channel_llr, precision=precision)
    got = _decode(code, "cuda", host, **opts)
    _assert_identical(got, want, f"{llr_dtype} {precision}")
    gnuradio = _decode(code, "cuda", -host, positive_llr_bit=1, **opts)     # (int8: no -128 to wrap)
    np.testing.assert_array_equal(gnuradio.llr, -got.llr)
    np.testing.assert_array_equal(gnuradio.bits, (gnuradio.llr > 0).astype(np.uint8))
    ext = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="extrinsic", **opts).decode(host)
    np.testing.assert_array_equal(ext.llr, got.llr - channel_llr)


@pytest.mark.cuda
def test_cuda_soft_output_over_streams_chunks_and_submit(cuda, frames):
    """Small chunks over several streams: every frame's posteriors land in its own row."""
    code, llr = _llrs(frames, "wifi-648-1/2", "layered", count=1001)
    want = _decode(code, "reference", llr)
    dec = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="posterior", streams=3, chunk_frames=64)
    _assert_identical(dec.decode(llr), want, "decode")
    tickets = [dec.submit(llr[a:a + 300]) for a in range(0, 1001, 300)]
    np.testing.assert_array_equal(np.concatenate([t.result().llr for t in tickets]), want.llr)
    pinned = dec.pinned_llr(1001)
    pinned[...] = llr
    out = np.empty((1001, code.n), np.uint8)
    res = dec.decode(pinned, out=out)
    assert res.bits is out
    _assert_identical(res, want, "pinned input, out=")


@pytest.mark.cuda
def test_cuda_shaped_code_soft_output(cuda):
    code = gl.codes.nr(1000, 1800)
    rng = np.random.default_rng(12)
    llr = gl.channel.awgn_llr(code.encode(rng.integers(0, 2, (40, code.k), dtype=np.uint8)), 0.8, rng)
    want = _decode(code, "reference", llr)
    got = _decode(code, "cuda", llr)
    _assert_identical(got, want, code.name)
    assert got.llr.shape == (40, len(code.decoded_positions))
    half = _decode(code, "cuda", llr, soft_dtype="float16")        # behind the recovery stage
    np.testing.assert_array_equal(half.llr.view(np.uint16), soft.to_float16(got.llr).view(np.uint16))


@pytest.mark.cuda
@pytest.mark.parametrize("name, algorithm, schedule, ebn0, count", [
    ("gf16-300-150", "minmax", "flooding", 2.25, 48),
    ("gf8-224-112", "mmma", "layered", 2.0, 48),
    ("gf64-1260-630", "mmma", "layered", 1.9, 12),
])
def test_cuda_gfq_soft_output_is_the_references(cuda, name, algorithm, schedule, ebn0, count):
    """GF(q) Min-Max (``nb_minmax`` write_costs): the posterior costs [batch, n, q] at each frame's
    stop, 0 at the decision, bit for bit the reference's, from bit LLRs and from symbol LLRs."""
    code = gl.codes.get(name)
    rng = np.random.default_rng(5)
    cw = code.encode(rng.integers(0, code.q, (count, code.k)))
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(count, -1)
    llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(ebn0, code.k / code.n), rng)
    symbols = gl.channel.bit_llr_to_symbol_llr(llr, code.q)
    kw = dict(algorithm=algorithm, schedule=schedule, early_stop=True)
    want = _decode(code, "reference", llr, **kw)
    assert 0 < want.valid.sum() < count, "the SNR point should mix decoded and failed frames"
    for arr in (llr, symbols):
        got = _decode(code, "cuda", arr, **kw)
        assert got.llr.shape == (count, code.n, code.q)
        _assert_identical(got, want, f"{name} {algorithm} {schedule} {arr.ndim}-D input")
        np.testing.assert_array_equal(got.llr.min(axis=-1), 0.0)
        np.testing.assert_array_equal(got.llr.argmin(axis=-1), got.bits)


@pytest.mark.cuda
def test_cuda_soft_output_refusals(cuda, frames):
    code, llr = _llrs(frames, "wimax-2304-1/2", "layered", count=4)
    with pytest.raises(ValueError, match="preset='throughput'"):
        gl.Decoder(code, backend="cuda", preset="latency", soft_output="posterior")
    dec = gl.Decoder(code, backend="cuda", soft_output="posterior")
    with pytest.raises(ValueError, match="pass out_device=False"):
        dec.decode(llr, out_device=True)
    for kw in (dict(algorithm="fft-spa"), dict(preset="latency")):
        with pytest.raises(ValueError, match="GF\\(q\\) cuda decoders write posterior costs with Min-Max"):
            gl.Decoder(gl.codes.get("gf16-300-150"), backend="cuda", soft_output="posterior", **kw)
    low = cuda.CudaDecoder(code, soft_output=True, devices=[0])
    with pytest.raises(ValueError, match="soft output is copied to the host with the bits"):
        low.decode_checked(llr, "llr", out_device=True)
    np.testing.assert_array_equal(low.decode(llr).llr, dec.decode(llr).llr)


def test_soft_output_kernels_are_the_throughput_presets():
    """Without a GPU: the kernels the throughput preset picks for the codes above are the
    ones that write soft output (ms*, hs*, stored), never the latency ep* kernels."""
    from gpuldpc.cuda import kernel_name

    for name in CODES:
        layout = qc_layout(gl.codes.get(name))
        for precision in ("float32", "float16"):
            kernel = kernel_name(layout, "nms", "layered", "float32", "throughput", precision)
            assert kernel.split("_")[1][:2] in ("ms", "hs", "st"), kernel


@pytest.mark.parametrize("out", [False, True])
def test_ticket_places_the_soft_output_after_the_bits(out):
    """Without a GPU: the ticket's result block holds the soft output after the hard decisions,
    16-byte aligned, overlapping nothing (``out=``: the bits are the caller's array)."""
    from gpuldpc.cuda.engine import Ticket

    batch, width = 5, 7
    bits = np.zeros((batch, width), np.uint8) if out else None
    assert Ticket(None, batch, width, bits, ()).llr is None
    t = Ticket(None, batch, width, bits, (), None, width)
    assert t.llr.shape == (batch, width) and t.llr.dtype == np.float32
    start = t.iterations.ctypes.data
    offset = t.llr.ctypes.data - start
    assert offset % 16 == 0
    ends = [t.flags.ctypes.data + batch] + ([] if out else [t.bits.ctypes.data + batch * width])
    assert all(end - start <= offset for end in ends)


@pytest.mark.cuda
@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("precision", ["float32", "float16"])
@pytest.mark.parametrize("llr_dtype", ["float32", "int8", "int4"])
def test_cuda_float16_soft_output_is_the_float32_one_converted(cuda, frames, name, precision, llr_dtype):
    """``soft_dtype="float16"`` (converted on the GPU by kernels/transport.cu ``soft_to_half``)
    equals :func:`gpuldpc.soft.to_float16` of the float32 soft output, bit for bit; LLRs large
    enough to push posteriors past 65504 are clamped there, not made infinite."""
    code, llr = _llrs(frames, name, "layered")
    if llr_dtype == "float32":
        llr[5] *= 3e4                                          # float32 posteriors past 65504
        host, opts = llr, {}
    elif llr_dtype == "int8":
        host, opts = np.clip(np.round(llr * 4), -127, 127).astype(np.int8), dict(llr_scale=0.25)
    else:
        host, opts = gl.pack_int4(llr, 0.5), dict(llr_scale=0.5)
    opts.update(llr_dtype=llr_dtype, precision=precision, streams=3, chunk_frames=64)
    wide = _decode(code, "cuda", host, **opts)
    dec = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="posterior", soft_dtype="float16", **opts)
    assert dec._impl.decoder.engines[0].soft_dtype == np.float16       # converted before the copy
    half = dec.decode(host)
    assert half.llr.dtype == np.float16 and half.llr.shape == wide.llr.shape and np.isfinite(half.llr).all()
    np.testing.assert_array_equal(half.llr.view(np.uint16), soft.to_float16(wide.llr).view(np.uint16))
    np.testing.assert_array_equal(half.bits, wide.bits)
    np.testing.assert_array_equal(half.iterations, wide.iterations)
    np.testing.assert_array_equal(dec.submit(host).result().llr, half.llr)
    if precision == "float16":                                  # binary16 posteriors: no rounding at all
        np.testing.assert_array_equal(half.llr.astype(np.float32), wide.llr)
    flipped = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="posterior", soft_dtype="float16",
                         positive_llr_bit=1, **opts).decode(gl.pack_int4(-llr, 0.5) if llr_dtype == "int4" else -host)
    np.testing.assert_array_equal(flipped.llr, -half.llr)


@pytest.mark.cuda
def test_cuda_float16_extrinsic_and_the_reference(cuda, frames):
    """``"extrinsic"`` brings float32 posteriors over and converts after the subtraction; the
    float16 posteriors equal the reference's converted (min-sum: the same float32 numbers)."""
    code, llr = _llrs(frames, "wimax-2304-1/2", "layered", count=200)
    kw = dict(soft_dtype="float16")
    want = _decode(code, "reference", llr, **kw)
    got = _decode(code, "cuda", llr, **kw)
    np.testing.assert_array_equal(got.llr.view(np.uint16), want.llr.view(np.uint16))
    dec = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="extrinsic", **kw)
    assert dec._impl.decoder.engines[0].soft_dtype == np.float32
    wide = gl.Decoder(code, backend="cuda", max_iterations=10, soft_output="extrinsic").decode(llr)
    np.testing.assert_array_equal(dec.decode(llr).llr, soft.to_float16(wide.llr))


def test_half_soft_plan_converts_the_inner_posteriors_into_the_slot_buffer(fake_kernels):
    """HalfSoftPlan (no GPU: kernel faked): the inner kernel writes float32 posteriors into the
    stage buffer, ``soft_to_half`` converts count * soft_width values into the slot's soft buffer
    (``out[3]``); without a soft buffer (results on the GPU) no posteriors and no conversion."""
    from gpuldpc.cuda import stages

    ctx = fake_kernels({("transport", "soft_to_half"): stages.HALF_ARGS})

    plan = stages.HalfSoftPlan(ctx, ctx.inner_plan("qc_ms12x7_layered_f32", 2304, soft_width=2304))
    assert plan.soft_dtype == np.float16 and plan.soft_width == 2304 and plan.resident(None) is None
    assert plan.scratch_bytes(10) == 4 * 10 * 2304
    plan.launch("stream", 7, 4096, "llr", ("bits", "it", "flags", 9 << 20), 1 << 20, 10)
    decode, (_, grid, block, args) = ctx.calls
    assert decode == ("decode", 7, 4096, ("bits", "it", "flags", 1 << 20), None, 10)
    assert grid == (-(-7 * 2304 // 4 // 256), 1) and block == (256, 1, 1)
    assert args == (1 << 20, 9 << 20, 7 * 2304)
    ctx.calls.clear()
    plan.launch("stream", 7, 4096, "llr", ("bits", "it", "flags", 0), 1 << 20, 10)
    assert ctx.calls == [("decode", 7, 4096, ("bits", "it", "flags", 0), None, 10)]


def test_ticket_holds_float16_soft_output():
    from gpuldpc.cuda.engine import Ticket

    t = Ticket(None, 5, 7, None, (), None, 7, np.float16)
    assert t.llr.dtype == np.float16 and t.llr.shape == (5, 7)
    offset = t.llr.ctypes.data - t.iterations.ctypes.data
    assert offset % 16 == 0 and t.llr.base.nbytes == offset + 2 * 5 * 7

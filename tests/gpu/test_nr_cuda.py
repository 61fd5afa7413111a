"""5G NR codes on the cuda backend (issue 14 item 3): the existing QC kernels take both base
graphs, BG1 at Zc = 384 included, and give the cpu backend's bits (which are the reference
decoder's, tests/decoders/test_nr_decode.py) for layered min-sum in float32, from the E
received LLRs of a rate-matched code block (rate recovery on the GPU for the throughput
preset, gpuldpc.cuda.recovery, held to the host recovery at the end of this file; on the host
for the latency preset; the mother code's kernels on the GPU); a shape that does not fit the device (flooding on BG1 Zc >= 288) makes
``backend="auto"`` fall back to the cpu backend instead of failing.  Rate-matched blocks run
on the pruned mother (``code.decoded``, gpuldpc.codes.shaping.prune; its equality with the
full graph is tested on the CPU, tests/decoders/test_nr_prune.py): the cuda bits equal the
cpu backend's on it (float32) and the float16 reference decoder's (``precision="float16"``)
where a binary16 kernel holds the pruned shape."""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda
BLOCKS = [(8448, 25344, 0), (8448, 9504, 0), (8448, 12672, 2), (3840, 11520, 0), (500, 1000, 3), (40, 120, 1)]


def _received(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    sent = code.encode(info)
    sigma = gl.channel.sigma_from_ebn0(ebn0_db, code.k / code.n)
    return info, gl.channel.awgn_llr(sent, sigma, rng).astype(np.float32)


@pytest.mark.parametrize("k,e,rv", BLOCKS, ids=lambda v: str(v))
def test_nr_block_on_the_gpu_gives_the_cpu_bits(cuda, k, e, rv):
    code = gl.codes.nr(k, e, rv=rv)
    info, llr = _received(code, 96, 3.0 if e > 2 * k else 4.5, seed=k + e + rv)
    settings = dict(algorithm="nms", schedule="layered", max_iterations=5, early_stop=True)
    want = gl.Decoder(code, backend="cpu", **settings).decode(llr)
    got = gl.Decoder(code, backend="cuda", devices=[0], **settings).decode(llr)
    for field in ("bits", "info", "iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    assert got.info.shape == (96, k)
    if rv in (0, 3):                    # self-decodable; rv 1 and 2 alone carry few systematic bits
        assert (got.info == info).all(axis=1).mean() > 0.5


def test_nr_gnu_radio_sign_and_bad_llrs_on_the_gpu(cuda):
    code = gl.codes.nr(8448, 12672)
    _, llr = _received(code, 32, 3.0, seed=5)
    llr[4, 100] = np.nan
    want = gl.Decoder(code, backend="cuda", on_bad_llr="erase", devices=[0]).decode(llr)
    got = gl.Decoder(code, backend="cuda", on_bad_llr="erase", positive_llr_bit=1, devices=[0]).decode(-llr)
    np.testing.assert_array_equal(got.info, want.info)
    assert got.bad_llr.tolist() == [i == 4 for i in range(32)]


def test_a_shape_the_device_cannot_hold_falls_back_to_the_cpu(cuda):
    code = gl.codes.get("nr-bg1-z384")
    with pytest.raises(gl.BackendUnavailable, match="shared memory"):
        gl.Decoder(code, backend="cuda", schedule="flooding", devices=[0])
    dec = gl.Decoder(code, schedule="flooding", max_iterations=2)
    assert dec.backend == "cpu"


PRUNED = [(8448, 9504, 1, 4.5), (3840, 4320, 2, 6.0), (3840, 11520, 2, 2.5)]
"""(k, E, base graph, Eb/N0): BG1 Zc 384 rate 8/9 (5 x 27 blocks left of 46 x 68), BG2 Zc 384
rate 8/9 (4 x 14 of 42 x 52) and rate 1/3 (22 x 32)."""


@pytest.mark.parametrize("k,e,bg,ebn0", PRUNED, ids=lambda v: str(v))
@pytest.mark.parametrize("early_stop", [False, True])
def test_pruned_graph_on_the_gpu_gives_the_cpu_bits(cuda, k, e, bg, ebn0, early_stop):
    code = gl.codes.nr(k, e, bg=bg)
    assert code.decoded.n < code.mother.n
    info, llr = _received(code, 96, ebn0, seed=k + e)
    settings = dict(algorithm="nms", schedule="layered", max_iterations=5, early_stop=early_stop)
    want = gl.Decoder(code, backend="cpu", **settings).decode(llr)
    got = gl.Decoder(code, backend="cuda", devices=[0], **settings).decode(llr)
    assert got.bits.shape == (96, code.decoded.n) and got.info.shape == (96, k)
    for field in ("bits", "info", "iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    assert (got.info == info).all(axis=1).mean() > 0.5


@pytest.mark.parametrize("k,e,bg,ebn0", PRUNED, ids=lambda v: str(v))
def test_pruned_graph_in_float16_gives_the_reference_bits(cuda, reference, k, e, bg, ebn0):
    """The binary16 kernels (``qc_hs*``) hold every pruned shape here: BG2 at rate 8/9 (4 layers,
    rows of 10) ``hs8x16``, BG1 at rate 8/9 (5 layers, rows of 19) ``hs8x24``, BG2 at rate 1/3 (22
    layers) ``hs24x10``."""
    code = gl.codes.nr(k, e, bg=bg)
    settings = dict(algorithm="nms", schedule="layered", max_iterations=5, early_stop=True)
    dec = gl.Decoder(code, backend="cuda", precision="float16", devices=[0], **settings)
    info, llr = _received(code, 32, ebn0, seed=k + e + 1)
    got = dec.decode(llr)
    want = reference(code.decoded, code.decoded_shaping.recover(llr), precision="float16", **settings)
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    np.testing.assert_array_equal(got.info, want.bits[:, code.decoded_info])
    assert (got.info == info).all(axis=1).mean() > 0.5


NEW_VARIANTS = [((8448, 9504, 1), 4.25, "ms8x24", "hs8x24"),      # BG1 Zc 384 rate 8/9: 5 x 27, rows of 19
                ((8448, 12672, 1), 2.75, "ms16x24", "hs16x24"),   # BG1 Zc 384 rate 2/3: 13 x 35
                ((3840, 11520, 2), 1.75, "ms24x10", "hs24x10"),   # BG2 Zc 384 rate 1/3: 22 x 32, rows <= 10
                ((1000, 3000, 2), 2.0, "ms24x10", "hs24x10"),    # BG2 Zc 104 rate 1/3: several frames a block
                ((1000, 3000, 1), 1.5, "mm24", "hm24"),          # BG1 Zc 48 rate 1/3: 44 x 66, state in memory
                ((1000, 5000, 2), 1.5, "mm24", "hm24")]          # BG2 Zc 104 rate 1/5: 41 x 51
"""(k, E, base graph), Eb/N0 (6 iterations, cpu backend: layered NMS decodes 60-100 % of the frames
there, flooding OMS 0-5 %: the comparison sees decoded and failed frames),
the float32 and the float16 variant of its pruned graph (kernels/qc_decode.cu: rows' state in
registers, or for graphs of more layers in device memory)."""
NEW_SETTINGS = [dict(algorithm="nms", schedule="layered", early_stop=True),
                dict(algorithm="oms", schedule="layered", early_stop=False),
                dict(algorithm="nms", schedule="flooding", early_stop=False),
                dict(algorithm="oms", schedule="flooding", early_stop=True)]


@pytest.mark.parametrize("precision", ["float32", "float16"])
@pytest.mark.parametrize("block,ebn0,ms,hs", NEW_VARIANTS, ids=lambda v: str(v))
def test_nr_register_variants_give_the_reference_bits(cuda, reference, block, ebn0, ms, hs, precision):
    """The variants added for the pruned NR graphs (float32 ``ms8x24``, ``ms16x24``, ``ms24x10``,
    ``mm24``; binary16 ``hs8x24``, ``hs16x24``, ``hs24x10``, ``hm24``) against the reference decoder on the
    same pruned code and recovered LLRs (float32 min-sum: bit-exact; float16: bit-exact with its
    float16 arithmetic): bits, iterations, syndrome flags, for layered and flooding, NMS and OMS,
    early stop on and off, odd batches (float16: a frame pair with no partner) of 37 and 1."""
    k, e, bg = block
    code = gl.codes.nr(k, e, bg=bg)
    info, llr = _received(code, 37, ebn0, seed=k + e + 7)
    mother_llr = code.decoded_shaping.recover(llr)
    variant = hs if precision == "float16" else ms
    decoded = []
    for st in NEW_SETTINGS:
        dec = cuda.CudaDecoder(code.decoded, max_iterations=6, precision=precision, devices=[0], **st)
        assert dec.kernel == f"qc_{variant}_{st['schedule']}_f32", dec.kernel
        want = reference(code.decoded, mother_llr, max_iterations=6, precision=precision, **st)
        for batch in (mother_llr, mother_llr[5:6]):
            got = dec.decode(batch)
            sub = slice(None) if batch.shape[0] == 37 else slice(5, 6)
            what = f"{code.decoded.name} {dec.kernel} {st} batch {batch.shape[0]}"
            bad = np.flatnonzero((got.bits != want.bits[sub]).any(axis=1))
            assert bad.size == 0, f"{what}: {bad.size} frames differ in bits, first {bad[:5].tolist()}"
            np.testing.assert_array_equal(got.iterations, want.iterations[sub], err_msg=what)
            np.testing.assert_array_equal(got.valid, want.valid[sub], err_msg=what)
        decoded.append((want.bits[:, code.decoded_info] == info).all(axis=1).mean())
    assert max(decoded) > 0.3 and min(decoded) < 1, decoded   # decoded and failed frames compared


MEMORY_STATE = [((8448, 25344), 1.75, 46), ((8448, 16896), 2.5, 24)]
"""(k, E), Eb/N0, layers: BG1 Zc 384 at rate 1/3 (the whole 46 x 68 graph) and rate 1/2 (24 x 46)."""


@pytest.mark.parametrize("precision", ["float32", "float16"])
@pytest.mark.parametrize("block,ebn0,layers", MEMORY_STATE, ids=lambda v: str(v))
def test_bg1_zc384_below_rate_2_3_gives_the_reference_bits(cuda, reference, block, ebn0, layers, precision):
    """BG1 at Zc = 384 with more layers than registers hold: ``mm24`` / ``hm24`` (the rows' state in
    device memory, one frame or frame pair a block of 384 threads) against the reference decoder,
    layered NMS with early stop and OMS without, 5 iterations, 21 frames (float16: an odd one out)."""
    code = gl.codes.nr(*block)
    info, llr = _received(code, 21, ebn0, seed=sum(block))
    mother_llr = code.decoded_shaping.recover(llr)
    decoded = []
    for st in NEW_SETTINGS[:2]:
        dec = cuda.CudaDecoder(code.decoded, max_iterations=5, precision=precision, devices=[0], **st)
        assert dec.kernel == f"qc_{'hm24' if precision == 'float16' else 'mm24'}_layered_f32", dec.kernel
        assert dec.layout.layers == layers
        want = reference(code.decoded, mother_llr, max_iterations=5, precision=precision, **st)
        got = dec.decode(mother_llr)
        bad = np.flatnonzero((got.bits != want.bits).any(axis=1))
        assert bad.size == 0, f"{dec.kernel} {st}: {bad.size} frames differ in bits, first {bad[:5].tolist()}"
        np.testing.assert_array_equal(got.iterations, want.iterations)
        np.testing.assert_array_equal(got.valid, want.valid)
        decoded.append((got.bits[:, code.decoded_info] == info).all(axis=1).mean())
    assert max(decoded) > 0.3 and min(decoded) < 1, decoded


def _quantized(llr, dtype, scale):
    """E LLRs in the cuda option's input dtype (value x llr_scale on load): int8 rounded and
    clipped to +-127 (tests/gpu/test_half_kernel.py), float16 rounded."""
    x = llr / np.float32(scale)
    return (np.clip(np.round(x), -127, 127) if dtype == "int8" else x).astype(dtype)


NARROW = [  # (name, code, llr_dtype, llr_scale, precision, Eb/N0)
    ("bg2-rate-8/9 int8 f16", lambda: gl.codes.nr(3840, 4320, bg=2), "int8", 0.25, "float16", 6.0),
    ("bg2-rate-8/9 float16-in f16", lambda: gl.codes.nr(3840, 4320, bg=2), "float16", 0.5, "float16", 6.0),
    ("bg1-rate-8/9 int8 f32", lambda: gl.codes.nr(8448, 9504), "int8", 0.25, "float32", 4.5),
    ("rv0+rv2 wrapping int8 f32", lambda: gl.codes.combine(gl.codes.nr(500, 4000), gl.codes.nr(500, 4000, rv=2)),
     "int8", 1 / 32, "float32", 2.0),
]


@pytest.mark.parametrize("case", NARROW, ids=[c[0] for c in NARROW])
def test_nr_int8_and_float16_input_gives_the_reference_bits(cuda, reference, case):
    """E LLRs in int8 (or float16) through ``gl.Decoder(..., llr_dtype=..., llr_scale=...)``:
    recovered on the GPU in that dtype (fillers at the dtype's maximum, repeats added with
    saturation: gpuldpc.codes.shaping.LlrFormat, kernels/shaping.cu) before the decoding kernel,
    decoded as the reference decoder decodes the same recovery dequantized (value x llr_scale
    in float32, as the kernels' load does); where nothing is shortened or repeated that is
    the reference decoder on the dequantized E LLRs itself.  Skips where no kernel of the
    asked precision holds the pruned shape."""
    _, make_code, dtype, scale, precision, ebn0 = case
    code = make_code()
    settings = dict(algorithm="nms", schedule="layered", max_iterations=5, early_stop=True)
    try:
        dec = gl.Decoder(code, backend="cuda", precision=precision, llr_dtype=dtype, llr_scale=scale,
                         devices=[0], **settings)
    except gl.BackendUnavailable as exc:
        pytest.skip(f"no {precision} kernel for {code.decoded.name}: {exc}")
    info, llr = _received(code, 64, ebn0, seed=code.n + 7)
    q = _quantized(llr, dtype, scale)
    got = dec.decode(q)
    recovered = code.decoded_shaping.recover(q)
    assert recovered.dtype == np.dtype(dtype)
    want = reference(code.decoded, recovered.astype(np.float32) * np.float32(scale), precision=precision, **settings)
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    np.testing.assert_array_equal(got.info, want.bits[:, code.decoded_info])
    if code.shaping.shortened.size == 0 and not code.shaping.repeats:
        front = gl.Decoder(code, backend="reference", precision=precision, **settings).decode(
            q.astype(np.float32) * np.float32(scale))
        np.testing.assert_array_equal(got.bits, front.bits)
        np.testing.assert_array_equal(got.iterations, front.iterations)
    assert (got.info == info).all(axis=1).mean() > 0.5
    if dtype == "int8":                       # floats into an int8 decoder: refused, not reinterpreted
        with pytest.raises(TypeError, match=r"takes int8 LLRs here \(llr_dtype='int8'\), got float32"):
            dec.decode(llr)
    dec.close()


GPU_RECOVERY = [  # (name, code, llr_dtype, llr_scale, precision, Eb/N0)
    ("bg1-8448/9504 int8 f16", lambda: gl.codes.nr(8448, 9504), "int8", 0.25, "float16", 4.5),
    ("bg1-8448/9504 float32", lambda: gl.codes.nr(8448, 9504), "float32", 1.0, "float32", 4.5),
    ("bg2-3840/4320 int8 f16", lambda: gl.codes.nr(3840, 4320), "int8", 0.25, "float16", 6.0),
    ("bg2-3840/4320 float16-in f16", lambda: gl.codes.nr(3840, 4320), "float16", 0.5, "float16", 6.0),
    ("fillers+wrapping 500/4000 float32", lambda: gl.codes.nr(500, 4000), "float32", 1.0, "float32", 0.0),
    ("fillers+wrapping 500/4000 int8", lambda: gl.codes.nr(500, 4000), "int8", 1 / 32, "float32", 0.0),
    ("rv0+rv2 wrapping int8 f32", lambda: gl.codes.combine(gl.codes.nr(500, 4000), gl.codes.nr(500, 4000, rv=2)),
     "int8", 1 / 32, "float32", -1.0),
]


@pytest.mark.parametrize("case", GPU_RECOVERY, ids=[c[0] for c in GPU_RECOVERY])
def test_rate_recovery_on_the_gpu_gives_the_host_recovery_bits(cuda, case):
    """``gl.Decoder(nr code, backend="cuda")`` (throughput preset) hands the E LLRs to the GPU
    as they are and recovers them there (gpuldpc.cuda.recovery, kernels/shaping.cu): bits,
    iterations, valid and info equal decoding ``code.decoded`` from the host recovery
    ``code.decoded_shaping.recover(llr)`` with the same cuda settings; decode, submit/result
    and page-locked E input alike; the latency preset (a launched kernel, no resident one for
    these codes) recovers on the GPU too, reading the E LLRs in place."""
    _, make_code, dtype, scale, precision, ebn0 = case
    code = make_code()
    settings = dict(algorithm="nms", schedule="layered", max_iterations=5, early_stop=True)
    opts = dict(precision=precision, llr_dtype=dtype, llr_scale=scale, devices=[0])
    try:
        dec = gl.Decoder(code, backend="cuda", **opts, **settings)
    except gl.BackendUnavailable as exc:
        pytest.skip(f"no {precision} kernel for {code.decoded.name}: {exc}")
    assert dec._impl.on_device
    info, llr = _received(code, 300, ebn0, seed=code.n + 11)
    q = _quantized(llr, dtype, scale) if dtype != "float32" else llr
    host = cuda.CudaDecoder(code.decoded, settings["algorithm"], settings["schedule"], settings["max_iterations"],
                            settings["early_stop"], **opts)
    want = host.decode(code.decoded_shaping.recover(q))
    pinned = dec.pinned_llr(q.shape[0])
    assert pinned.shape == q.shape and cuda.is_pinned(pinned)
    pinned[...] = q
    for how, got in (("decode", dec.decode(q)), ("submit", dec.submit(q).result()), ("pinned", dec.decode(pinned))):
        for field in ("bits", "iterations", "valid"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=f"{how} {field}")
        np.testing.assert_array_equal(got.info, want.bits[:, code.decoded_info], err_msg=how)
    if ebn0 >= 4:
        assert (got.info == info).all(axis=1).mean() > 0.5
    lat = gl.Decoder(code, backend="cuda", preset="latency", **opts, **settings)
    assert lat._impl.on_device
    for start, rows in ((0, q[:1]), (0, q[:3]), (3, pinned[3:5])):   # numpy (staged) and page-locked (in place)
        got = lat.decode(rows)
        for field in ("bits", "iterations", "valid"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field)[start:start + rows.shape[0]],
                                          err_msg=f"latency {field}")
    for d in (dec, lat, host):
        d.close()


RECOVERY_KERNEL = [("bg1-8448/9504", lambda: gl.codes.nr(8448, 9504)),
                   ("fillers+wrapping 500/4000 rv2", lambda: gl.codes.nr(500, 4000, rv=2)),
                   ("rv0+rv2 wrapping", lambda: gl.codes.combine(gl.codes.nr(500, 4000), gl.codes.nr(500, 4000, rv=2))),
                   ("shaped wifi, a position sent 3 times", lambda: gl.codes.shaped(
                       gl.codes.wifi(648, "1/2"), punctured=range(600, 648), shortened=range(300, 324),
                       repeated=[0, 1, 2, 0, 5, 0]))]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("name,make_code", RECOVERY_KERNEL, ids=[c[0] for c in RECOVERY_KERNEL])
def test_recovery_kernel_output_is_the_host_recovery(cuda, name, make_code, dtype):
    """kernels/shaping.cu's output, copied back, equals ``Shaping.recover`` bit for bit (int8:
    -128 inputs and sums saturated in order of transmission; float16: sums saturated at 65504,
    +-inf passed through), for the mother and the decoded layout; NaN where the host has NaN
    (its payload may differ)."""
    from gpuldpc.cuda.recovery import RecoveryPlan, RecoveryTables

    drv = cuda.driver()
    code = make_code()
    rng = np.random.default_rng(len(name))
    for shaping in (code.shaping, code.decoded_shaping):
        frames = 70
        if dtype == "int8":
            q = rng.integers(-128, 128, (frames, shaping.n)).astype(np.int8)
        else:
            big = 30000.0 if dtype == "float16" else 1e3
            q = np.clip(rng.standard_normal((frames, shaping.n)) * big, -65504, 65504).astype(dtype)
            q[0, :4] = [np.inf, -np.inf, 65504, -0.0]
            q[1, 5] = np.nan
        want = shaping.recover(q)
        dec = cuda.CudaDecoder(code.decoded, devices=[0], llr_dtype=dtype, shaping=code.decoded_shaping)
        eng = dec.engines[0]
        with eng.ctx.active():
            plan = RecoveryPlan(eng.ctx, eng.plan.inner, RecoveryTables(shaping), np.dtype(dtype))
            d_in, d_out = drv.to_device(q), drv.mem_alloc(want.nbytes)
            plan.recover(eng.slots[0].stream, frames, d_in, d_out)
            eng.slots[0].stream.synchronize()
            got = np.empty_like(want)
            drv.memcpy_dtoh(got, d_out)
        dec.close()
        nan = np.isnan(want) if dtype != "int8" else np.zeros(want.shape, bool)
        if dtype != "int8":
            np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))

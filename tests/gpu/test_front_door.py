"""gl.Decoder on the cuda backend: where the bytes go (issue 13) and what bad input does.

Results land once in pooled page-locked blocks that the returned arrays are (and a kept
result is never overwritten by a later call); a numpy array handed in again is registered
in place, other input staged in the background, chunk by chunk; tickets overlap and come back in any order; NaN frames are found by the kernels'
LLR load, in the middle of a multi-stream batch, and raised or erased by the policy; a
decoder used from several threads survives one thread's bad call.
"""
import gc
import threading

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import bad_llr

pytestmark = pytest.mark.cuda
WIMAX = "wimax-2304-1/2"


def _same(got, want):
    for field in ("bits", "info", "iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)


def _decoder(cuda, **kw):
    kw.setdefault("devices", [0])
    return gl.Decoder(gl.codes.get(WIMAX), backend="cuda", **kw)


def test_numpy_and_pinned_input_give_the_reference_results_in_pinned_arrays(cuda, frames, reference):
    code = gl.codes.get(WIMAX)
    cw, llr = frames(code, 1.8, 1500, seed=21)
    llr = llr.copy()                                 # an array that owns its memory
    dec = _decoder(cuda, streams=3, chunk_frames=256, max_iterations=8)
    want = reference(code, llr, max_iterations=8)
    got = dec.decode(llr)
    _same(got, want)
    assert cuda.is_pinned(got.bits) and cuda.is_pinned(got.iterations)      # landed once, by DMA
    registry = dec._impl.decoder.engines[0].registry
    assert registry.registered_bytes(llr) == 0      # first call: staged in the background
    pinned = dec.pinned_llr(1500)
    pinned[:] = llr
    _same(dec.decode(pinned), want)
    _same(dec.decode(llr), want)                     # handed in again: registered in place, one range
    assert registry.registered_bytes(llr) >= llr.nbytes
    _same(dec.decode(llr), want)
    drv = cuda.driver()                              # other CUDA copies of the array still work,
    with dec._impl.decoder.engines[0].ctx.active():  # and of new arrays that may share its pages
        dev = drv.mem_alloc(llr.nbytes)
        drv.memcpy_htod(dev, llr)
        np.testing.assert_array_equal(drv.from_device(dev, llr.shape, llr.dtype), llr)
        near = [np.full(n, 7, np.uint8) for n in (100, 5000, 3 << 20)]
        for a in near:
            np.testing.assert_array_equal(drv.from_device(drv.to_device(a), a.shape, a.dtype), a)
    key = id(llr)
    del llr
    gc.collect()
    assert key not in registry._ranges               # unregistered before NumPy freed it


@pytest.mark.parametrize("preset", ["throughput", "latency"])
def test_input_staged_in_the_background_step_by_step(cuda, frames, reference, layered_as, monkeypatch, preset):
    """A foreign buffer and a float32 array seen for the first time are staged by the copy
    threads in steps (here of 64 KiB: many steps a chunk, chunks waiting for steps) while the
    chunks before go to the GPU: the results are the reference's, through decode and submit."""
    from gpuldpc import row_copy

    monkeypatch.setattr(row_copy, "STEP_BYTES", 1 << 16)
    code = gl.codes.get(WIMAX)
    _, llr = frames(code, 2.0, 1300, seed=23)
    foreign = np.frombuffer(bytearray(llr.tobytes()), np.float32).reshape(llr.shape)
    opts = dict(streams=3, chunk_frames=200) if preset == "throughput" else dict(preset="latency")
    dec = _decoder(cuda, **opts)
    want = reference(layered_as(code, dec), llr)
    _same(dec.decode(foreign), want)
    _same(dec.submit(foreign).result(), want)
    _same(dec.decode(llr.copy()), want)


def test_a_kept_result_is_never_overwritten(cuda, frames):
    code = gl.codes.get(WIMAX)
    dec = _decoder(cuda, streams=2, chunk_frames=128)
    _, a = frames(code, 1.5, 400, seed=1)
    _, b = frames(code, 4.0, 400, seed=2)
    first = dec.decode(a)
    kept = first.bits.copy(), first.iterations.copy(), first.valid.copy()
    for _ in range(3):
        dec.decode(b)
    np.testing.assert_array_equal(first.bits, kept[0])
    np.testing.assert_array_equal(first.iterations, kept[1])
    np.testing.assert_array_equal(first.valid, kept[2])
    pool = dec._impl.decoder.results
    before = pool.pinned_bytes
    del first
    gc.collect()
    dec.decode(a)                                    # reuses the block given back
    assert pool.pinned_bytes == before


def test_tickets_overlap_and_come_back_in_any_order(cuda, frames):
    code = gl.codes.get(WIMAX)
    dec = _decoder(cuda, streams=2, chunk_frames=200)
    _, llr = frames(code, 2.0, 1800, seed=5)
    parts = [llr[i * 600:(i + 1) * 600] for i in range(3)]
    want = [dec.decode(p) for p in parts]
    tickets = [dec.submit(p) for p in parts]
    for i in (1, 2, 0):
        _same(tickets[i].result(), want[i])
    dropped = dec.submit(parts[0])                   # never collected: its block waits for its streams
    del dropped
    gc.collect()
    for i in range(3):
        _same(dec.decode(parts[i]), want[i])


@pytest.mark.parametrize("preset", ["throughput", "latency"])
def test_nan_frames_found_by_the_kernels_in_a_multi_stream_batch(cuda, frames, reference, layered_as, preset):
    code = gl.codes.get(WIMAX)
    cw, llr = frames(code, 2.5, 900, seed=9)
    bad = llr.copy()
    rows = [0, 255, 256, 511, 600, 899]              # first, chunk edges, middle, last
    for i, r in enumerate(rows):
        bad[r, (97 * i) % code.n] = (np.nan, np.inf, -np.inf)[i % 3]
    opts = dict(streams=3, chunk_frames=256) if preset == "throughput" else dict(preset="latency")
    with pytest.raises(ValueError, match=r"LLRs contain NaN or infinite values \(frames \[0, 255, 256, 511, 600, "
                                         r"899\]\)"):
        _decoder(cuda, **opts).decode(bad)
    dec = _decoder(cuda, on_bad_llr="erase", **opts)
    got = dec.decode(bad)
    np.testing.assert_array_equal(np.flatnonzero(got.bad_llr), rows)
    want = reference(layered_as(code, dec), bad_llr.sanitized(bad)[0])
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)


def test_one_thread_raising_leaves_the_others_decoding(cuda, frames):
    code = gl.codes.get(WIMAX)
    dec = _decoder(cuda, streams=2, chunk_frames=128)
    _, llr = frames(code, 2.0, 300, seed=12)
    want = dec.decode(llr)
    bad = llr.copy()
    bad[7, 3] = np.nan
    errors, results = [], []

    def good():
        for _ in range(5):
            results.append(dec.decode(llr))

    def wrong():
        for _ in range(5):
            try:
                dec.decode(bad)
            except ValueError as exc:
                errors.append(str(exc))

    threads = [threading.Thread(target=good), threading.Thread(target=wrong), threading.Thread(target=good)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 10 and len(errors) == 5
    assert all("frames [7]" in e for e in errors)
    for r in results:
        _same(r, want)


def test_latency_preset_from_numpy_and_out(cuda, frames, reference, layered_as):
    code = gl.codes.get(WIMAX)
    dec = _decoder(cuda, preset="latency")
    for count in (1, 6, 40):
        cw, llr = frames(code, 2.5, count, seed=count)
        first = dec.decode(llr)
        kept = first.bits.copy()
        _same(first, reference(layered_as(code, dec), llr))
        dec.decode(frames(code, 1.0, count, seed=99)[1])
        np.testing.assert_array_equal(first.bits, kept)      # not a view of the slot's buffer
    out = np.empty((6, code.n), np.uint8)
    res = dec.decode(frames(code, 2.5, 6, seed=6)[1], out=out)
    assert res.bits is out


def test_gf_latency_preset_takes_the_frame_kernel_from_numpy_bit_llrs(cuda):
    code = gl.codes.get("gf32-620-310")
    dec = gl.Decoder(code, backend="cuda", preset="latency", devices=[0])
    assert dec.schedule == "flooding"
    assert dec._impl.decoder.engines[0].plan.name == "nb_frame_q32"
    rng = np.random.default_rng(4)
    words = code.encode(rng.integers(0, code.q, (3, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(words).reshape(3, -1)
    llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(3.5, code.rate), rng)
    ref = gl.Decoder(code, backend="reference", preset="latency")
    _same(dec.decode(llr[:1]), ref.decode(llr[:1]))
    _same(dec.decode(llr), ref.decode(llr))


SIGN_SETTINGS = [
    dict(),                                                   # float32, throughput kernel
    dict(preset="latency"),                                   # the resident latency kernel
    dict(preset="latency", resident=False),                   # the latency kernel, launched
    dict(schedule="flooding", algorithm="spa"),
    dict(precision="float16"),                                # two frames a thread
    dict(llr_dtype="int8", llr_scale=0.25),
    dict(llr_dtype="float16", llr_scale=0.5),
]


@pytest.mark.parametrize("settings", SIGN_SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "float32")
def test_positive_llr_bit_is_applied_in_the_kernels_load(cuda, frames, settings):
    """GNU Radio's sign (positive = bit 1) decoded where it lies: the kernels multiply by a
    negative scale; the same bits, iterations and flags as the textbook sign, bad frames
    included (NaN and +-inf keep their meaning), for every kernel family and input type."""
    code = gl.codes.get(WIMAX)
    _, llr = frames(code, 2.0, 300, seed=23)
    scale = np.float32(settings.get("llr_scale", 1.0))
    dtype = {"int8": np.int8, "float16": np.float16}.get(settings.get("llr_dtype"), np.float32)
    q = np.clip(np.round(llr / scale), -127, 127) if dtype is np.int8 else llr / scale
    q = q.astype(dtype)
    if dtype is not np.int8:
        q[[5, 150], 7] = np.nan
        q[299, 11] = np.inf
    textbook = _decoder(cuda, on_bad_llr="erase", **settings).decode(q)
    gnuradio = _decoder(cuda, on_bad_llr="erase", positive_llr_bit=1, **settings).decode(-q)
    _same(gnuradio, textbook)
    assert gnuradio.valid.sum() > 150          # decoding works (flooding SPA: about 200 of 300 at 2 dB)
    if dtype is not np.int8:
        assert np.flatnonzero(gnuradio.bad_llr).tolist() == [5, 150, 299]


@pytest.mark.parametrize("settings", [dict(), dict(preset="latency"), dict(precision="float16"),
                                      dict(schedule="flooding", algorithm="spa")],
                         ids=["float32", "latency", "float16", "flooding-spa"])
def test_huge_finite_llrs_are_clamped_in_the_load(cuda, frames, settings):
    """LLRs beyond 2^64 (1e30, 3e38) decode as +-2^64 (no overflow in the kernels), unflagged:
    the same results as the clamped values, on every kernel family."""
    code = gl.codes.get(WIMAX)
    _, llr = frames(code, 2.0, 64, seed=29)
    huge, clamped = llr.copy(), llr.copy()
    sign = np.where(llr[[4, 40]] < 0, np.float32(-1), np.float32(1))
    huge[[4, 40]] = sign * np.float32(3e38)
    huge[7, :50] = np.copysign(np.float32(1e30), llr[7, :50])
    clamped[[4, 40]] = sign * np.float32(bad_llr.LLR_SATURATION)
    clamped[7, :50] = np.copysign(np.float32(bad_llr.LLR_SATURATION), llr[7, :50])
    dec = _decoder(cuda, **settings)
    got, want = dec.decode(huge), dec.decode(clamped)
    _same(got, want)
    assert not got.bad_llr.any()


def test_tickets_collected_on_other_threads_release_their_events(cuda, frames):
    """Events of tickets whose results are collected on a thread of their own are destroyed
    with their context current (PyCUDA otherwise keeps them: a leak the GPU soak showed)."""
    import concurrent.futures
    import warnings

    code = gl.codes.get(WIMAX)
    _, llr = frames(code, 2.0, 512, seed=31)
    llr = llr.copy()
    dec = _decoder(cuda, streams=4, chunk_frames=64)
    pool = concurrent.futures.ThreadPoolExecutor(2)
    gc.collect()                                     # earlier tests' garbage, freed here (their thread)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(20):
            tickets = [dec.submit(llr) for _ in range(3)]
            list(pool.map(lambda t: t.result(), tickets))
            del tickets
        gc.collect()
    pool.shutdown()
    assert not [w for w in seen if "could not be cleaned up" in str(w.message)]

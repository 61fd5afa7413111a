"""cpu backend: front door, input checking, threads and batch shapes."""
import re
import threading

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel

core = pytest.importorskip("gpuldpc._core", reason="gpuldpc._core is not built (pip install .)")


@pytest.fixture(scope="module")
def wimax():
    code = gl.codes.get("wimax-576-1/2")
    rng = np.random.default_rng(0)
    sent = code.encode(rng.integers(0, 2, (300, code.k), dtype=np.uint8))
    return code, sent, channel.transmit(code, sent, 1.75, rng)


def test_backend_cpu_reports_itself(wimax):
    code, _, _ = wimax
    dec = gl.Decoder(code, backend="cpu", precision="int8", threads=2)
    assert dec.backend == "cpu"
    assert dec._impl.threads == 2
    assert dec._impl.lanes in (16, 32, 64)      # int8 lanes: SSE4, AVX2, AVX-512
    assert dec._impl.simd == core.simd_target()
    assert dec.preferred_batch("latency") == dec._impl.lanes
    assert dec.preferred_batch("throughput") == 8 * 2 * dec._impl.lanes


@pytest.mark.parametrize("precision", ["float32", "int16", "int8"])
def test_any_batch_size_and_thread_count_give_the_same_frames(wimax, precision):
    code, _, llr = wimax
    one = gl.Decoder(code, backend="cpu", precision=precision, threads=1).decode(llr)
    many = gl.Decoder(code, backend="cpu", precision=precision, threads=3).decode(llr)
    np.testing.assert_array_equal(one.bits, many.bits)
    np.testing.assert_array_equal(one.iterations, many.iterations)
    for frame in (0, 17, 299):   # a lone frame in a chunk of padding lanes
        alone = gl.Decoder(code, backend="cpu", precision=precision).decode(llr[frame])
        np.testing.assert_array_equal(alone.bits[0], one.bits[frame])
        assert alone.iterations[0] == one.iterations[frame]
        assert alone.valid[0] == one.valid[frame]


def test_two_python_threads_at_once_give_the_results_of_one(wimax):
    code, _, llr = wimax
    dec = gl.Decoder(code, backend="cpu", threads=2)
    alone = dec.decode(llr)
    results = [None] * 4

    def work(i):
        results[i] = dec.decode(llr[::-1] if i % 2 else llr)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, res in enumerate(results):
        want = alone.bits[::-1] if i % 2 else alone.bits
        np.testing.assert_array_equal(res.bits, want)


def test_empty_batch(wimax):
    code, _, _ = wimax
    res = gl.Decoder(code, backend="cpu").decode(np.zeros((0, code.n), np.float32))
    assert res.bits.shape == (0, code.n) and res.iterations.shape == (0,)


@pytest.mark.parametrize("bad,error,text", [
    (np.zeros((2, 575), np.float32), ValueError, "must have shape [batch, 576]"),
    (np.zeros((2, 576), np.int32), TypeError, "must be floating point"),
    (np.full((2, 576), np.nan, np.float32), ValueError, "NaN or infinite"),
    (np.full((2, 576), np.inf, np.float32), ValueError, "NaN or infinite"),
])
def test_bad_llrs_raise_clear_errors(wimax, bad, error, text):
    code, _, _ = wimax
    with pytest.raises(error) as info:
        gl.Decoder(code, backend="cpu").decode(bad)
    assert text in str(info.value)


def test_workers_name_the_non_finite_frames(wimax):
    """The C++ load of each chunk flags its bad frames (two workers, chunks of every size), and
    the default policy names every one of them after the decode, returning no result."""
    code, _, llr = wimax
    bad = np.array(llr[:300])
    bad[17, 5], bad[299, 575], bad[64, 0] = np.nan, -np.inf, np.inf
    with pytest.raises(ValueError, match=r"code 'wimax-576-1/2': LLRs contain NaN or infinite values "
                                         r"\(frames \[17, 64, 299\]\)"):
        gl.Decoder(code, backend="cpu", threads=2).decode(bad)


def test_compiled_decoder_checks_dtype_and_shape(wimax):
    code, _, _ = wimax
    impl = gl.Decoder(code, backend="cpu")._impl._impl
    with pytest.raises(TypeError, match="C-contiguous float32"):
        impl.decode(np.zeros((1, 576), np.float64))
    with pytest.raises(ValueError, match=r"shape \[batch, 576\], got \(1, 577\)"):
        impl.decode(np.zeros((1, 577), np.float32))


@pytest.mark.parametrize("preset", [{}, {"preset": "latency"}])
def test_decisions_go_into_out_where_given(wimax, preset):
    """The C++ call writes the bits into the caller's ``out`` (both paths) and checks it: a
    writeable C-contiguous uint8 array [batch, n], else ValueError naming ``out``."""
    code, _, llr = wimax
    dec = gl.Decoder(code, backend="cpu", threads=1, **preset)
    frames = llr[:3]
    want = dec.decode(frames)
    out = np.full((3, code.n), 7, np.uint8)
    got = dec.decode(frames, out=out)
    assert got.bits is out and got.info.base is out
    np.testing.assert_array_equal(out, want.bits)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    bits, iterations, valid, bad, soft = dec._impl._impl.decode(frames, False, out)
    assert bits is out and soft is None and valid.tolist() == want.valid.tolist()
    read_only = np.zeros((3, code.n), np.uint8)
    read_only.flags.writeable = False
    for wrong, got_text in ((np.zeros((3, code.n), np.int32), "int32 (3, 576)"),
                            (np.zeros((code.n, 3), np.uint8).T, "uint8 (3, 576)"),
                            (np.zeros((2, code.n), np.uint8), "uint8 (2, 576)"),
                            (np.zeros(3 * code.n, np.uint8), "uint8 (1728,)"),
                            (read_only, "uint8 (3, 576) (read-only)"),
                            ([[0] * code.n] * 3, "list")):
        with pytest.raises(ValueError, match=re.escape("out must be a C-contiguous uint8 array of shape "
                                                       f"(3, 576), got {got_text}")):
            dec.decode(frames, out=wrong)


def test_bad_settings_raise_clear_errors(wimax):
    code, _, _ = wimax
    with pytest.raises(ValueError, match="'spa' runs in float32 only"):
        gl.Decoder(code, "spa", backend="cpu", precision="int8")
    with pytest.raises(ValueError, match="llr_scale must be a positive finite number"):
        gl.Decoder(code, backend="cpu", precision="int8", llr_scale=-1)
    nb = gl.codes.get("gf16-300-150")
    with pytest.raises(ValueError, match="float32 only"):
        gl.Decoder(nb, backend="cpu", precision="int16")
    with pytest.raises(gl.BackendUnavailable, match="not in the cpu backend"):
        gl.Decoder(nb, "fft-spa", backend="cpu")


def test_non_binary_llr_shape_is_checked():
    nb = gl.codes.get("gf16-300-150")
    with pytest.raises(ValueError, match=r"shape \[batch, 300, 16\]"):
        gl.Decoder(nb, backend="cpu").decode(np.zeros((2, 300, 8), np.float32))

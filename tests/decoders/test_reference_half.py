"""The reference decoder in float16 (``precision="float16"``, gpuldpc.decoders.reference_binary):
the arithmetic it promises (correctly rounded binary16 operations, the clamps), decoding,
huge LLRs, its frame error rate against float32, and the errors of every backend.

The cuda backend's float16 kernels are held to these bits in tests/gpu/test_half_kernel.py.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import gpuldpc as gl
from gpuldpc.decoders import reference, reference_binary
from gpuldpc.decoders.front import BackendUnavailable
from gpuldpc.decoders.reference_binary import HALF_LLR_MAX, HALF_R_MAX, channel_llr, check_update


def decoder(code, algorithm="nms", schedule="layered", **kw):
    return gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="reference", precision="float16", **kw)


def noisy(code, ebn0, frames, seed):
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    return cw, gl.channel.transmit(code, cw, ebn0, rng)


def test_float16_operations_are_correctly_rounded():
    """NumPy's float16 +, -, * equal the exact result rounded once to the nearest half (the
    GPU's HADD2 / HMUL2), normal and subnormal; float32 -> float16 rounds to nearest."""
    rng = np.random.default_rng(3)
    a = (rng.normal(size=20000) * np.exp2(rng.integers(-26, 8, 20000))).astype(np.float16)
    b = (rng.normal(size=20000) * np.exp2(rng.integers(-26, 8, 20000))).astype(np.float16)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for got, exact in ((a + b, a64 + b64), (a - b, a64 - b64), (a * b, a64 * b64)):
        np.testing.assert_array_equal(got, exact.astype(np.float16))   # float64 -> half: one rounding
    x = (rng.normal(size=20000) * np.exp2(rng.integers(-26, 12, 20000))).astype(np.float32)
    np.testing.assert_array_equal(x.astype(np.float16), x.astype(np.float64).astype(np.float16))


def test_channel_clamp_rounding_and_no_negative_zero():
    llr = np.array([[1e30, -1e30, 2047.3, -3000.0, 1.0e-3, -1e-9, -0.0, 0.1]], np.float32)
    h = channel_llr(llr, "float16")
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h[0], np.array([2048, -2048, 2047, -2048, 1.0e-3, 0, 0, 0.1], np.float16))
    assert not np.signbit(h[h == 0]).any()    # -1e-9 and -0.0 become +0
    assert channel_llr(llr, "float32") is llr


def test_float16_check_rule_equals_per_edge_loop():
    """R_i = s_i * min(f(min_{j != i} |Q_j|), R_MAX) in float16, alpha and beta rounded to half."""
    rng = np.random.default_rng(1)
    q = rng.normal(0, 3, size=(4, 5, 7)).astype(np.float16)
    q[0, 0, :3] = [1.5, -1.5, 1.5]            # tied minima
    q[1, 0, 4] = 0.0
    q[2, 1, :] = [3000, -4000, 5000, 6000, -2500, 3500, 2600]   # message magnitudes over R_MAX
    for algorithm in ("nms", "oms"):
        got = check_update(q, algorithm, alpha=0.8, beta=0.4, r_max=HALF_R_MAX)
        assert got.dtype == np.float16
        want = np.empty_like(q)
        for idx in np.ndindex(q.shape[:-1]):
            row = q[idx]
            for i in range(row.size):
                others = np.delete(row, i)
                m = np.abs(others).min()
                f = (np.float16(np.float32(0.8)) * m if algorithm == "nms"
                     else max(m - np.float16(np.float32(0.4)), np.float16(0)))
                v = min(f, np.float16(HALF_R_MAX))
                want[idx + (i,)] = -v if np.count_nonzero(others < 0) % 2 else v
        np.testing.assert_array_equal(got, want)
        assert np.abs(got[2, 1]).max() == HALF_R_MAX


def test_huge_llrs_stay_finite_and_decode():
    """LLRs of 1e30 are clamped to 2048; posteriors stay finite and within 2048 + dv * 2048,
    and five weak wrong bits among them are corrected."""
    code = gl.codes.get("wimax-576-1/2")
    rng = np.random.default_rng(4)
    cw = code.encode(rng.integers(0, 2, (8, code.k), dtype=np.uint8))
    llr = np.where(cw == 0, np.float32(1e30), np.float32(-1e30))
    wrong = rng.choice(code.n, (8, 5), replace=True)
    np.put_along_axis(llr, wrong, np.where(np.take_along_axis(cw, wrong, 1) == 0, -1.0, 1.0).astype(np.float32), 1)
    dec = decoder(code, max_iterations=10)
    res = dec.decode(llr)
    np.testing.assert_array_equal(res.bits, cw)
    assert res.valid.all() and (res.iterations <= 2).all(), res.iterations
    dv = int(np.bincount(code.H.indices).max())
    for schedule in ("layered", "flooding"):
        post = reference.make(code, decoder(code, schedule=schedule).settings).posterior(llr, 10)
        assert post.dtype == np.float16 and np.isfinite(post).all()
        assert np.abs(post.astype(np.float32)).max() <= HALF_LLR_MAX + dv * HALF_R_MAX


@pytest.mark.parametrize("algorithm, schedule, ebn0", [("nms", "layered", 1.5), ("nms", "layered", 2.0),
                                                       ("oms", "flooding", 2.0)])
def test_frame_error_rate_close_to_float32(algorithm, schedule, ebn0):
    """WiMAX 576 rate 1/2, 600 frames: float16 fails on as many frames as float32 within
    three standard deviations of a difference of counts plus 5 % (two-sided), and the two
    agree on which frames decode for at least 95 % of them."""
    code = gl.codes.get("wimax-576-1/2")
    cw, llr = noisy(code, ebn0, 600, seed=int(10 * ebn0))
    st = dict(algorithm=algorithm, schedule=schedule, max_iterations=10, early_stop=True)
    half = gl.Decoder(code, backend="reference", precision="float16", **st).decode(llr)
    full = gl.Decoder(code, backend="reference", **st).decode(llr)
    a = int((full.bits != cw).any(axis=1).sum())
    b = int((half.bits != cw).any(axis=1).sum())
    assert 5 <= a <= 500, a
    assert abs(b - a) <= 3 * np.sqrt(a + b) + 0.05 * a, f"600 frames at {ebn0} dB: float32 {a}, float16 {b} failed"
    assert (half.valid == full.valid).mean() >= 0.95
    np.testing.assert_array_equal(half.valid, code.is_codeword(half.bits))


def _heavy_column_code(weight):
    """A binary code with a column of weight ``weight`` (every row: that column and its own)."""
    rows = np.repeat(np.arange(weight), 2)
    cols = np.stack([np.zeros(weight, int), np.arange(1, weight + 1)], axis=1).ravel()
    H = sp.csr_matrix((np.ones(2 * weight, np.uint8), (rows, cols)), shape=(weight, weight + 1))
    return gl.codes.Code(f"heavy-{weight}", H, k=1)


def test_errors_name_the_input_and_the_fix():
    code = gl.codes.get("wifi-648-1/2")
    with pytest.raises(ValueError, match="precision='float16' runs min-sum only"):
        decoder(code, "spa")
    with pytest.raises(ValueError, match=r"column weight dv = 31 is 65536, over the float16 maximum 65504 "
                                         r"\(column weight <= 30 fits\); use precision='float32'"):
        decoder(_heavy_column_code(31))
    assert decoder(_heavy_column_code(30)).decode(np.ones(31, np.float32)).valid.all()
    with pytest.raises(BackendUnavailable, match="the cpu backend has no float16 arithmetic"):
        gl.Decoder(code, backend="cpu", precision="float16")
    with pytest.raises(BackendUnavailable, match="precision='float16' is for binary codes"):
        gl.Decoder(gl.codes.get("gf4-192-96"), backend="reference", precision="float16")
    with pytest.raises(ValueError, match="precision='float64' is not one of 'float32', 'float16'"):
        gl.Decoder(code, precision="float64")
    # auto: the GPU where there is one, else the reference's identical float16 numbers
    from gpuldpc import cuda

    auto = gl.Decoder(code, precision="float16")
    assert auto.backend == ("cuda" if cuda.available() else "reference")
    assert reference_binary.check_half_range(code) is None

"""DVB-S2 8PSK and 32APSK frames through the soft demapper (gpuldpc.dvbs2_demap) into the cuda
backend: LLRs shaped unlike BPSK's (label bits of unequal reliability, three APSK rings,
magnitudes to ~80) decoded by the sparse kernel bit for bit as the reference decoder, float32
and binary16 messages, and to the sent frames above the waterfall.
"""
import math

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import dvbs2_demap

pytestmark = pytest.mark.cuda

# (code, constellation, Es/N0 dB where layered NMS alpha 0.85 at 10 iterations stops some
# frames early and leaves others failed (cpu backend, 64 frames, seed 11), Es/N0 dB where
# 50 iterations lose none)
CASES = (("dvbs2-short-3/5", "8psk", 6.0, 6.5), ("dvbs2-short-3/4", "32apsk", 13.0, 13.5))


def demapped_frames(code, constellation, esn0_db, frames, seed):
    """(information bits, float32 LLRs): random frames encoded, modulated, sent over complex
    AWGN at ``esn0_db`` and demapped (exact LLRs)."""
    mapping = dvbs2_demap.mapping(code, constellation)
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    y = mapping.modulate(code.encode(info))
    n0 = dvbs2_demap.n0_from_esn0_db(esn0_db)
    y = y + (rng.standard_normal(y.shape + (2,)) @ np.array([1, 1j])) * math.sqrt(n0 / 2)
    return info, mapping.llr(y, n0)


@pytest.mark.parametrize("precision", ["float32", "float16"])
@pytest.mark.parametrize("name, constellation, esn0_db, _", CASES, ids=[c[1] for c in CASES])
def test_demapped_frames_bit_exact_with_the_reference(cuda, reference, name, constellation, esn0_db, _,
                                                      precision):
    code = gl.codes.get(name)
    _, llr = demapped_frames(code, constellation, esn0_db, 64, seed=11)
    settings = dict(algorithm="nms", alpha=0.85, schedule="layered", max_iterations=10, early_stop=True,
                    precision=precision)
    got = gl.Decoder(code, backend="cuda", **settings).decode(llr)
    want = reference(code, llr, **settings)
    bad = np.flatnonzero((got.bits != want.bits).any(axis=1))
    assert bad.size == 0, f"{bad.size} frames differ in bits, first {bad[:5].tolist()}"
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)
    assert got.valid.any() and not got.valid.all(), got.valid.mean()


@pytest.mark.parametrize("name, constellation, _, esn0_db", CASES, ids=[c[1] for c in CASES])
def test_demapped_frames_decode_on_the_gpu(cuda, name, constellation, _, esn0_db):
    code = gl.codes.get(name)
    info, llr = demapped_frames(code, constellation, esn0_db, 64, seed=12)
    res = gl.Decoder(code, backend="cuda", algorithm="nms", alpha=0.85, max_iterations=50).decode(llr)
    np.testing.assert_array_equal(res.info, info)
    assert res.valid.all()

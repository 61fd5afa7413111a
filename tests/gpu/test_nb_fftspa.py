"""GF(q) FFT-SPA kernels (kernels/nb_fftspa.cu) against the float64 reference.

The kernel computes paper 002's decoder in float32, the reference
(:mod:`gpuldpc.decoders.reference_fftspa`) the same steps in float64: on identical LLRs
nearly every frame must end the same way, and the frame error rates must agree within
statistical tolerance.  Every q = 4..256 on one code.  The reference itself is checked
here too (it runs without a GPU).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.decoders.front import Settings
from gpuldpc.decoders.reference_fftspa import FftSpaReferenceDecoder, walsh_hadamard

_spec = importlib.util.spec_from_file_location("gpu_reference_cache",
                                               Path(__file__).with_name("reference_cache.py"))
_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cache)
cached = _cache.cached


def _settings(iterations, early_stop=True):
    return Settings("fft-spa", "flooding", iterations, early_stop, 0.75, 0.5, "float32", None, {})


def fftspa_reference(code, llr, iterations):
    return cached(("fft-spa", iterations), code, llr,
                  lambda: FftSpaReferenceDecoder(code, _settings(iterations)).decode(llr))


def test_walsh_hadamard_is_the_hadamard_matrix():
    h = np.array([[1.0]])
    for _ in range(4):
        h = np.block([[h, h], [h, -h]])
    x = np.random.default_rng(0).random((3, 16))
    np.testing.assert_allclose(walsh_hadamard(x), x @ h, rtol=1e-12)
    np.testing.assert_allclose(walsh_hadamard(walsh_hadamard(x)), 16 * x, rtol=1e-12)


def test_reference_beats_min_max_on_gf4():
    """FFT-SPA (exact BP) needs fewer frames to fail than Min-Max at the same LLRs."""
    code = gl.codes.get("gf4-192-96")
    rng = np.random.default_rng(1)
    cw = code.encode(rng.integers(0, 2, (200, code.k), dtype=np.uint8))
    llr = gl.channel.transmit(code, cw, 2.0, rng)
    spa = FftSpaReferenceDecoder(code, _settings(10)).decode(llr)
    mm = gl.Decoder(code, "minmax", schedule="flooding", backend="reference").decode(llr)
    fer_spa = (spa.bits != cw).any(axis=1).mean()
    fer_mm = (mm.bits != cw).any(axis=1).mean()
    assert 0.05 < fer_spa < fer_mm, (fer_spa, fer_mm)
    assert (spa.valid == code.is_codeword(spa.bits)).all()
    assert (spa.iterations[spa.valid] < 10).any()


CASES = [                                  # code, Eb/N0, frames (FER of the reference 0.2..0.6)
    ("gf4-192-96", 2.0, 400),
    ("gf8-224-112", 1.75, 300),
    ("gf16-300-150", 1.5, 200),
    ("gf32-384-128", 1.25, 120),
    ("gf64-384-128", 1.0, 80),
    ("gf128-384-128", 1.0, 60),
    ("gf256-384-128", 1.0, 48),
]


@pytest.mark.cuda
@pytest.mark.parametrize("name, ebn0, count", CASES)
def test_fft_spa_matches_float64_reference(cuda, frames, name, ebn0, count):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get(name)
    cw, llr = frames(code, ebn0, count, seed=21)
    got = NbCudaDecoder(code, "fft-spa", max_iterations=10).decode(llr)
    want = fftspa_reference(code, llr, 10)
    ok_gpu = ~(got.bits != cw).any(axis=1)
    ok_ref = ~(want.bits != cw).any(axis=1)
    assert (got.valid == code.is_codeword(got.bits)).all()
    # same outcome frame by frame (float32 vs float64 may flip a borderline frame)
    assert (ok_gpu == ok_ref).mean() >= 0.9, ((ok_gpu != ok_ref).sum(), count)
    fer_gpu, fer_ref = 1 - ok_gpu.mean(), 1 - ok_ref.mean()
    tol = 3 * np.sqrt(max(fer_ref * (1 - fer_ref), 0.05) / count)
    assert abs(fer_gpu - fer_ref) <= tol, (fer_gpu, fer_ref, tol)
    assert 0 < ok_ref.sum() < count


@pytest.mark.cuda
def test_fft_spa_bit_llr_input_and_fixed_iterations(cuda, frames):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get("gf64-384-128")
    rng = np.random.default_rng(4)
    cw = code.encode(rng.integers(0, 2, (40, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(cw.shape[0], -1)
    bit_llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(2.0, code.k / code.n), rng)
    dec = NbCudaDecoder(code, "fft-spa", max_iterations=10, early_stop=False)
    a = dec.decode(bit_llr)
    b = dec.decode(gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q))
    np.testing.assert_array_equal(a.bits, b.bits)
    assert (a.iterations == 10).all()
    assert (a.bits == cw).all(axis=1).mean() > 0.85      # the float64 reference: 0.97 at 2 dB

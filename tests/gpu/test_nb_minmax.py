"""GF(q) Min-Max kernels (kernels/nb_minmax.cu) against the reference Min-Max decoder.

Min and max are exact and every float32 addition follows the reference's order, so the
GPU must give the reference's symbols, iteration counts and syndrome flags exactly, on
identical LLRs, for both schedules: flooding (paper 003) and block-layered MMMA
(paper 000), and for bit-LLR input converted on the GPU.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda

_spec = importlib.util.spec_from_file_location("gpu_reference_cache",
                                               Path(__file__).with_name("reference_cache.py"))
_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cache)
reference = _cache.reference_decode     # cached reference Min-Max (reference_cache.py)


def _decoder(code, algorithm, schedule, early_stop=True, **options):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    return NbCudaDecoder(code, algorithm, schedule, max_iterations=10, early_stop=early_stop, **options)



# every q = 4..256 on at least one code; both schedules; QC layers and row-run layers (384)
CASES = [
    ("gf4-192-96", "minmax", "flooding", 2.0, 96),
    ("gf8-224-112", "mmma", "layered", 2.0, 96),
    ("gf16-300-150", "minmax", "flooding", 2.25, 64),
    ("gf32-620-310", "minmax", "flooding", 2.25, 64),       # paper 003's (3,6) GF(32) code
    ("gf64-1260-630", "mmma", "layered", 1.75, 24),
    ("gf128-384-128", "mmma", "layered", 1.0, 32),
    ("gf256-384-128", "minmax", "flooding", 1.5, 16),
]


@pytest.mark.parametrize("name, algorithm, schedule, ebn0, count", CASES)
def test_same_symbols_as_reference(cuda, frames, name, algorithm, schedule, ebn0, count, same):
    code = gl.codes.get(name)
    _, llr = frames(code, ebn0, count, seed=11)
    got = _decoder(code, algorithm, schedule).decode(llr)
    want = reference(code, llr, algorithm=algorithm, schedule=schedule, max_iterations=10, early_stop=True)
    same(got, want)
    assert 0 < got.valid.sum() < count, "the SNR point should mix decoded and failed frames"


# paper 000's codes, block-layered MMMA, two SNR points each (failures and successes)
@pytest.mark.parametrize("name", ["gf32-744-653", "gf64-1512-1325"])
@pytest.mark.parametrize("ebn0", [3.5, 4.25])
def test_paper000_codes_same_as_reference(cuda, frames, name, ebn0, same):
    code = gl.codes.get(name)
    _, llr = frames(code, ebn0, 48, seed=int(10 * ebn0))
    got = _decoder(code, "mmma", "layered").decode(llr)
    same(got, reference(code, llr, algorithm="mmma", schedule="layered", max_iterations=10,
                                early_stop=True))


def test_fixed_iterations_and_streams(cuda, frames, same):
    """No early stop; chunks smaller than the batch spread over three streams."""
    code = gl.codes.get("gf32-744-653")
    _, llr = frames(code, 3.75, 40, seed=5)
    dec = _decoder(code, "mmma", "layered", early_stop=False, streams=3, chunk_frames=7)
    got = dec.decode(llr)
    same(got, reference(code, llr, algorithm="mmma", schedule="layered", max_iterations=10,
                                early_stop=False))
    assert (got.iterations == 10).all()


def test_info_copied_run_by_run(cuda, frames):
    """gf32-837-726's information symbols lie in three runs: each chunk's runs are DMA'd into
    ``info`` (engine.copy_columns), for chunks over three streams, two tickets in flight, the
    caller's ``out`` for the symbols, and the soft output between them in the result block."""
    code = gl.codes.get("gf32-837-726")
    where = np.asarray(code.info_positions)
    _, llr = frames(code, 3.9, 40, seed=8)
    dec = _decoder(code, "mmma", "layered", streams=3, chunk_frames=7)
    first, second = dec.submit(llr), dec.submit(llr[::-1].copy(), out=np.empty((40, code.n), np.uint8))
    a, b = dec.result(first), dec.result(second)
    for res in (a, b):
        assert len(dec.info_runs) == 3 and not np.shares_memory(res.info, res.bits)
        np.testing.assert_array_equal(res.info, res.bits[:, where])
    np.testing.assert_array_equal(b.bits, a.bits[::-1])
    soft = _decoder(code, "tmm", "layered", soft_output=True, chunk_frames=9).decode(llr)
    np.testing.assert_array_equal(soft.info, soft.bits[:, where])
    assert soft.llr.shape == (40, code.n, 32) and (soft.llr.min(axis=2) == 0).all()


@pytest.mark.parametrize("name, schedule, ebn0", [("gf32-620-310", "flooding", 3.0),
                                                  ("gf64-1512-1325", "layered", 4.25)])
def test_bit_llr_input_converted_on_gpu(cuda, name, schedule, ebn0, same):
    """decode(bit LLRs) == decode(gpuldpc.channel.bit_llr_to_symbol_llr(bit LLRs))."""
    code = gl.codes.get(name)
    rng = np.random.default_rng(3)
    cw = code.encode(rng.integers(0, 2, (24, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(cw.shape[0], -1)
    sigma = gl.channel.sigma_from_ebn0(ebn0, code.k / code.n)
    bit_llr = gl.channel.awgn_llr(bits, sigma, rng)
    dec = _decoder(code, "minmax", schedule)
    from_bits = dec.decode(bit_llr)
    same(from_bits, dec.decode(gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q)))
    assert from_bits.valid.mean() > 0.5


def test_gpu_bit_to_symbol_llr_exact(cuda):
    from gpuldpc.cuda.nb_decoder import bit_llr_to_symbol_llr

    rng = np.random.default_rng(9)
    for q in (4, 32, 256):
        m = q.bit_length() - 1
        bit_llr = rng.normal(0.5, 2.0, (5, 17 * m)).astype(np.float32)
        bit_llr[0, :m] = 0.0                                     # ties: l = 0
        got = bit_llr_to_symbol_llr(bit_llr, q)
        want = gl.channel.bit_llr_to_symbol_llr(bit_llr, q)
        np.testing.assert_array_equal(got, want)


def test_errors(cuda):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get("gf16-300-150")
    dec = _decoder(code, "minmax", "layered")
    with pytest.raises(ValueError, match=r"symbol LLRs \[batch, 300, 16\] or bit LLRs \[batch, 1200\]"):
        dec.decode(np.zeros((2, 300, 8), np.float32))
    llr = np.ones((3, 300, 16), np.float32)
    llr[1, 5, 3] = np.nan
    np.testing.assert_array_equal(dec.decode(llr).bad_llr, [False, True, False])  # found by the kernel
    with pytest.raises(TypeError, match="floating point"):
        dec.decode(np.ones((1, 1200), np.int32))
    with pytest.raises(ValueError, match="is binary"):
        NbCudaDecoder(gl.codes.get("wifi-648-1/2"))
    with pytest.raises(ValueError, match="algorithm='nms'"):
        NbCudaDecoder(code, "nms")
    with pytest.raises(ValueError, match="units=99"):
        NbCudaDecoder(code, units=99)


def test_front_door_routes_gf_codes_to_the_gpu(cuda, same):
    """gl.Decoder(nb_code, backend="cuda") reaches the GF(q) kernels; bit LLRs [batch, n*m]
    are converted on the GPU and give the symbols the reference gives on symbol LLRs."""
    code = gl.codes.get("gf16-300-150")
    rng = np.random.default_rng(21)
    cw = code.encode(rng.integers(0, code.q, (48, code.k)))
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(48, -1)
    bit_llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(2.25, code.rate), rng)
    dec = gl.Decoder(code, algorithm="minmax", schedule="flooding", backend="cuda")
    assert dec.backend == "cuda" and dec.preferred_batch("throughput") >= dec.preferred_batch("latency") >= 1
    got = dec.decode(bit_llr)
    want = reference(code, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q), algorithm="minmax",
                     schedule="flooding")
    same(got, want)
    assert got.valid.sum() >= 32                     # 2.25 dB on GF(16), seed 21: 36 of 48 decode

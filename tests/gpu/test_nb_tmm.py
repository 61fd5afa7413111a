"""Trellis Min-Max kernels (kernels/nb_minmax.cu ``nb_tmm_q<q>``, and ``nb_tmm1_q<q>``, its
one-minimum-only form) against the reference T-MM.

The rule (gpuldpc.decoders.reference_tmm) applies only comparisons, min, max and one float32
product by ``alpha`` to the messages, and the variable-node sums follow the reference's
order, so the GPU must give the reference's symbols, iteration counts, syndrome flags and
posterior costs exactly, on identical LLRs, for both schedules and every q.  The last test
(the kernel's name and shared memory a worker) runs without a GPU.
"""
import numpy as np
import pytest

import gpuldpc as gl

# (code, schedule, Eb/N0, frames): points where T-MM (alpha 0.75, 10 iterations) decodes some
# frames and fails others (cpu backend, the same numbers: 61/96, 78/96, 39/64, 59/64, 48/64,
# 39/64, 18/24, 14/24, 11/12 valid)
CASES = [
    ("gf4-192-96", "flooding", 2.0, 96),
    ("gf8-224-112", "layered", 2.0, 96),
    ("gf16-300-150", "flooding", 2.25, 64),
    ("gf32-620-310", "layered", 2.25, 64),
    ("gf32-837-726", "layered", 3.8, 64),
    ("gf32-837-726", "flooding", 3.8, 64),
    ("gf64-1512-1325", "layered", 3.8, 24),
    ("gf128-384-128", "layered", 2.5, 24),
    ("gf256-384-128", "flooding", 3.0, 12),
]



@pytest.mark.cuda
@pytest.mark.parametrize("algorithm", ["tmm", "tmm1"])
@pytest.mark.parametrize("name, schedule, ebn0, count", CASES)
def test_same_symbols_as_reference(cuda, frames, reference, name, schedule, ebn0, count, algorithm, same):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get(name)
    _, llr = frames(code, ebn0, count, seed=11)
    dec = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    assert dec.engines[0].plan.name == f"nb_{algorithm}_q{code.q}"
    got = dec.decode(llr)
    want = reference(code, llr, algorithm=algorithm, schedule=schedule, max_iterations=10, early_stop=True,
                     alpha=0.75)
    same(got, want)
    assert 0 < got.valid.sum() < count, "the SNR point should mix decoded and failed frames"


@pytest.mark.cuda
@pytest.mark.parametrize("algorithm", ["tmm", "tmm1"])
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_posterior_costs_alpha_and_bit_llrs_through_the_front_door(cuda, frames, schedule, algorithm, same):
    """gl.Decoder(algorithm="tmm" / "tmm1") takes the cuda kernel; its soft output (posterior costs
    at each frame's stop), at alpha 0.6, equals the reference's; bit LLRs give the same frames."""
    code = gl.codes.get("gf32-837-726")
    _, llr = frames(code, 3.9, 24, seed=4)
    kw = dict(algorithm=algorithm, schedule=schedule, max_iterations=10, alpha=0.6, soft_output="posterior")
    dec = gl.Decoder(code, backend="cuda", **kw)
    got = dec.decode(llr)
    want = gl.Decoder(code, backend="reference", **kw).decode(llr)
    same(got, want)
    np.testing.assert_array_equal(got.llr, want.llr)
    assert gl.Decoder(code, algorithm).backend == "cuda"
    rng = np.random.default_rng(5)
    words = code.encode(rng.integers(0, code.q, (16, code.k)))
    bits = gl.gf.GF(code.q).to_bits(words).reshape(16, -1)
    bit_llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(3.9, code.rate), rng)
    same(dec.decode(bit_llr), dec.decode(gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q)))


@pytest.mark.cuda
@pytest.mark.parametrize("algorithm", ["tmm", "tmm1"])
def test_many_frames_equal_the_cpu_backend(cuda, algorithm, same):
    """2048 frames of gf32-837-726 at 4.0 dB (layered, 10 iterations): the cpu backend (bit for
    bit the reference, tests/decoders/test_cpu_nb.py) and the kernel agree frame for frame."""
    code = gl.codes.get("gf32-837-726")
    rng = np.random.default_rng(17)
    words = code.encode(rng.integers(0, code.q, (2048, code.k)))
    llr = gl.channel.transmit(code, words, 4.0, rng)
    kw = dict(algorithm=algorithm, max_iterations=10, alpha=0.6)
    got = gl.Decoder(code, backend="cuda", **kw).decode(llr)
    same(got, gl.Decoder(code, backend="cpu", **kw).decode(llr))
    assert 0 < (got.bits != words).any(axis=1).sum() < 100


@pytest.mark.cuda
def test_alpha_is_checked(cuda):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\], got 0"):
        NbCudaDecoder(gl.codes.get("gf16-300-150"), "tmm", alpha=0)


def test_kernel_name_and_shared_words_a_worker():
    """nb_tmm_q<q> in nb_minmax.cu; a worker's shared words (nb_minmax.cu minmax_decode): the
    edges, z, Q and the trellis rule's 10 q words (the trellis rows twice: an int2 {first minimum,
    column} a row, an int4 a row; 4 planes of outputs); "tmm1" (nb_tmm1_q<q>) 6, without the int4
    rows."""
    from gpuldpc.cuda.nb_decoder import kernel_name
    from gpuldpc.cuda.nb_layout import nb_layout, unit_floats

    assert kernel_name("tmm", 32) == ("nb_minmax", "nb_tmm_q32")
    assert kernel_name("tmm1", 64) == ("nb_minmax", "nb_tmm1_q64")
    assert kernel_name("mmma", 32) == ("nb_minmax", "nb_minmax_q32")
    high = nb_layout(gl.codes.get("gf32-837-726"))                 # d = 27: 2 * 28 + 28 + (27 + 10) * 32
    assert (unit_floats("tmm", high), unit_floats("minmax", high)) == (1268, 2584)
    assert unit_floats("tmm1", high) == 1268 - 4 * 32
    low = nb_layout(gl.codes.get("gf256-384-128"))                 # d = 3: 2 * 4 + 4 + (3 + 10) * 256
    assert (unit_floats("tmm", low), unit_floats("minmax", low)) == (3340, 1800)
    assert unit_floats("tmm1", low) == 3340 - 4 * 256
    # FFT-SPA (nb_fftspa.cu check_row): the edges with their columns' other edges, d transforms and
    # the permutation buffer: (3 * (1 + 2) + 3 & ~3) + (3 + 1) * 256
    assert unit_floats("fft-spa", low) == 12 + 4 * 256

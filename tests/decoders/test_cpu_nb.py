"""cpu backend, GF(q) codes: Min-Max gives the reference decoder's symbols.

Forward-backward Min-Max with the MMMA merger (paper 003 Algorithm 2, paper
000 §2.3) over GF(4) .. GF(256), layered and flooding: identical symbols,
iteration counts and syndrome flags on identical LLRs.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel

pytest.importorskip("gpuldpc._core", reason="gpuldpc._core is not built (pip install .)")

# code, Eb/N0 in its waterfall (some frames decode, some do not), frames, iterations
CASES = [
    ("gf4-192-96", 2.0, 24, 6),
    ("gf8-224-112", 2.0, 24, 6),
    ("gf16-300-150", 2.0, 20, 5),
    ("gf32-744-653", 4.0, 16, 4),
    ("gf64-384-128", 1.0, 8, 3),
    ("gf256-384-128", 1.0, 2, 2),
]


def noisy_words(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, code.q, (frames, code.k)))
    return words, channel.transmit(code, words, ebn0_db, rng)


@pytest.mark.parametrize("name,ebn0,frames,iterations", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_min_max_matches_reference_symbol_for_symbol(name, ebn0, frames, iterations, schedule):
    code = gl.codes.get(name)
    _, llr = noisy_words(code, frames, ebn0, seed=3)
    kwargs = dict(algorithm="minmax", schedule=schedule, max_iterations=iterations)
    want = gl.Decoder(code, backend="reference", **kwargs).decode(llr)
    got = gl.Decoder(code, backend="cpu", threads=1, **kwargs).decode(llr)
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)


def test_mmma_is_min_max_and_fixed_iterations_match_reference():
    code = gl.codes.get("gf16-300-150")
    _, llr = noisy_words(code, 20, 2.0, seed=8)
    want = gl.Decoder(code, "minmax", max_iterations=4, early_stop=False, backend="reference").decode(llr)
    got = gl.Decoder(code, "mmma", max_iterations=4, early_stop=False, backend="cpu").decode(llr)
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.valid, want.valid)
    assert (got.iterations == 4).all()


def test_gf32_code_decodes_at_high_snr():
    code = gl.codes.get("gf32-837-726")
    words, llr = noisy_words(code, 20, 5.0, seed=1)
    res = gl.Decoder(code, backend="cpu").decode(llr)
    assert res.valid.all()
    np.testing.assert_array_equal(res.bits, words)

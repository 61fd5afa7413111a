"""cpu backend, GF(q) codes: Min-Max and T-MM give the reference decoder's symbols.

Forward-backward Min-Max with the MMMA merger (paper 003 Algorithm 2, paper
000 §2.3) and the trellis Min-Max ("tmm", gpuldpc.decoders.reference_tmm, and
"tmm1", its form with step 5's pairs from first minima) over GF(4) .. GF(256),
layered and flooding: identical symbols, iteration counts, syndrome flags and
posterior costs on identical LLRs.
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
    ("gf32-620-310", 2.5, 12, 5),
    ("gf32-744-653", 4.0, 16, 4),
    ("gf32-837-726", 4.0, 16, 6),
    ("gf64-384-128", 1.0, 8, 3),
    ("gf64-1512-1325", 4.2, 4, 4),
    ("gf256-384-128", 1.0, 2, 2),
]


def noisy_words(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, code.q, (frames, code.k)))
    return words, channel.transmit(code, words, ebn0_db, rng)


@pytest.mark.parametrize("name,ebn0,frames,iterations", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
@pytest.mark.parametrize("algorithm", ["minmax", "tmm", "tmm1"])
def test_matches_reference_symbol_for_symbol(name, ebn0, frames, iterations, schedule, algorithm):
    """Min-Max and the trellis Min-Max ("tmm" and "tmm1", alpha 0.625): symbols, iterations,
    flags and the posterior costs of the reference."""
    code = gl.codes.get(name)
    _, llr = noisy_words(code, frames, ebn0, seed=3)
    kwargs = dict(algorithm=algorithm, schedule=schedule, max_iterations=iterations, alpha=0.625,
                  soft_output="posterior")
    want = gl.Decoder(code, backend="reference", **kwargs).decode(llr)
    got = gl.Decoder(code, backend="cpu", threads=1, **kwargs).decode(llr)
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)
    np.testing.assert_array_equal(got.llr, want.llr)


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


# ---- trellis Min-Max ("tmm", gpuldpc.decoders.reference_tmm) --------------------------------

def test_tmm_frame_error_rate_is_min_max_s_with_the_scale():
    """gf32-837-726, 4.0 dB, 10 iterations, the same 1200 frames: Min-Max fails about 1 in 200;
    T-MM with alpha 0.6 within about a factor 2 of it, the rule without a scale (alpha 1) on a third of them
    (docs/cpu.md, "Trellis Min-Max")."""
    code = gl.codes.get("gf32-837-726")
    words, llr = noisy_words(code, 1200, 4.0, seed=21)

    def errors(algorithm, **kw):
        res = gl.Decoder(code, algorithm, max_iterations=10, backend="cpu", **kw).decode(llr)
        return int((res.bits != words).any(axis=1).sum())

    minmax, scaled, published = errors("minmax"), errors("tmm", alpha=0.6), errors("tmm", alpha=1.0)
    print(f"frame errors of 1200: minmax {minmax}, tmm alpha 0.6 {scaled}, tmm alpha 1 {published}")
    assert 4 <= minmax <= 30
    assert minmax / 2 <= scaled <= 2 * minmax + 4
    assert published > 10 * minmax


def test_tmm_settings_errors_and_backend_choice():
    core = gl._native.core("cpu_decoders")
    code = gl.codes.get("gf16-300-150")
    H = code.H
    table = np.zeros((H.nnz, code.q), np.int64)
    with pytest.raises(ValueError, match="algorithm"):
        core.NonBinaryDecoder(code.n, code.q, H.indptr, H.indices, table, table, "layered", 5, True, 1,
                              algorithm="ems")
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\]"):
        core.NonBinaryDecoder(code.n, code.q, H.indptr, H.indices, table, table, "layered", 5, True, 1,
                              algorithm="tmm", alpha=0.0)
    with pytest.raises(ValueError, match="float32 only"):
        gl.Decoder(code, "tmm", backend="cpu", precision="int8")
    try:
        gl.Decoder(code, "tmm", backend="cuda")
        cuda = True
    except gl.BackendUnavailable as exc:
        cuda = False
        print(exc)
    assert gl.Decoder(code, "tmm").backend == ("cuda" if cuda else "cpu")

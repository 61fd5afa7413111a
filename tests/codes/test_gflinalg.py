"""GF(q) linear algebra: rank against brute force, RREF, syndromes, the systematic encoder."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from gpuldpc.codes.code import Code
from gpuldpc.gf import GF
from gpuldpc.gflinalg import GFqEncoder, gf_rank, gf_rref, gf_syndrome


def _all_vectors(q, length):
    return np.array(list(itertools.product(range(q), repeat=length)), dtype=np.int64)


def _brute_row_space_size(H, q):
    """|{c H : c in GF(q)^M}| by enumeration."""
    F = GF(q)
    coeffs = _all_vectors(q, H.shape[0])  # [q^M, M]
    combos = np.bitwise_xor.reduce(F.mul[coeffs[:, :, None], H[None, :, :]], axis=1)
    return len({row.tobytes() for row in combos})


def _brute_null_space_size(H, q):
    """|{x : H x = 0}| by enumeration."""
    F = GF(q)
    xs = _all_vectors(q, H.shape[1])  # [q^N, N]
    synd = np.bitwise_xor.reduce(F.mul[H[None, :, :], xs[:, None, :]], axis=2)
    return int((~synd.any(axis=1)).sum())


def _random_matrix(rng, q, M, N, density):
    H = rng.integers(1, q, size=(M, N)) * (rng.random((M, N)) < density)
    return H.astype(np.int64)


@pytest.mark.parametrize("q,M,N", [(2, 8, 10), (4, 4, 6), (8, 3, 5), (16, 2, 4), (256, 2, 3)])
def test_rank_matches_brute_force(q, M, N):
    rng = np.random.default_rng(q * 100 + M)
    for trial in range(12):
        density = (0.3, 0.6, 1.0)[trial % 3]
        H = _random_matrix(rng, q, M, N, density)
        if trial % 4 == 3:  # force a dependency: last row = c * first row + second row
            F = GF(q)
            H[-1] = F.mul[rng.integers(1, q), H[0]] ^ H[1]
        r = gf_rank(H, q)
        assert q**r == _brute_row_space_size(H, q)
        if q ** N <= 5000:
            assert q ** (N - r) == _brute_null_space_size(H, q)


def test_rank_of_special_matrices():
    assert gf_rank(np.zeros((3, 4), dtype=np.uint8), 4) == 0
    assert gf_rank(np.eye(5, dtype=np.uint8), 2) == 5
    assert gf_rank(sp.csr_matrix(np.ones((3, 70), dtype=np.uint8)), 2) == 1  # > 64 columns
    F = GF(32)
    row = np.arange(1, 31)
    assert gf_rank(np.stack([row, F.mul[7, row]]), 32) == 1


@pytest.mark.parametrize("q", [2, 4, 64])
def test_rref_structure(q):
    rng = np.random.default_rng(5 + q)
    H = _random_matrix(rng, q, 12, 80, 0.3)
    order = rng.permutation(80)
    R, piv = gf_rref(H, q, column_order=order)
    F = GF(q)
    r = len(piv)
    assert r == gf_rank(H, q)
    np.testing.assert_array_equal(R[:, piv], np.eye(r, dtype=np.uint8))
    # pivots appear in the requested order
    pos = np.argsort(order)[piv]
    assert np.all(np.diff(pos) > 0)
    # same row space: stacking R on H does not raise the rank
    assert gf_rank(np.vstack([H, R]), q) == r
    # every row of R is a combination of H's rows: H's null space annihilates it
    x = GFqEncoder(Code("t", sp.csr_matrix(H), 80 - r, q=q)).encode(rng.integers(0, q, (4, 80 - r)))
    assert not np.bitwise_xor.reduce(F.mul[R[None], x[:, None, :]], axis=2).any()


def test_rref_rejects_bad_input():
    with pytest.raises(ValueError, match="outside GF\\(4\\)"):
        gf_rank(np.array([[1, 4]]), 4)
    with pytest.raises(ValueError, match="q=6 is not supported"):
        gf_rank(np.array([[1, 2]]), 6)
    with pytest.raises(ValueError, match="column_order must be a permutation of 0..1"):
        gf_rref(np.array([[1, 1]]), 2, column_order=[0, 0])
    with pytest.raises(TypeError, match="integer GF\\(2\\) elements"):
        gf_rank(np.array([[0.5, 1.0]]), 2)


@pytest.mark.parametrize("q", [2, 16, 128])
def test_syndrome_matches_dense_loop(q):
    rng = np.random.default_rng(q)
    H = _random_matrix(rng, q, 9, 15, 0.3)
    H[4] = 0  # an empty row
    H[-1] = 0  # an empty last row
    words = rng.integers(0, q, (7, 15))
    F = GF(q)
    expect = np.zeros((7, 9), dtype=np.uint8)
    for b in range(7):
        for i in range(9):
            for j in range(15):
                expect[b, i] ^= F.mul[H[i, j], words[b, j]]
    np.testing.assert_array_equal(gf_syndrome(sp.csr_matrix(H), words, q), expect)


def test_syndrome_errors():
    H = sp.csr_matrix(np.array([[1, 2, 3]]))
    with pytest.raises(ValueError, match="words must have shape \\[batch, 3\\], got \\(2, 4\\)"):
        gf_syndrome(H, np.zeros((2, 4), dtype=np.uint8), 4)
    with pytest.raises(ValueError, match="words has entries outside GF\\(4\\)"):
        gf_syndrome(H, np.array([[0, 4, 0]]), 4)
    with pytest.raises(ValueError, match="H has entries outside GF\\(2\\)"):
        gf_syndrome(H, np.array([[0, 1, 0]]), 2)


@pytest.mark.parametrize("q", [2, 4, 32, 256])
def test_encoder_random_code(q):
    """Full-rank and rank-deficient H: codewords, info positions, linearity."""
    rng = np.random.default_rng(11 * q)
    F = GF(q)
    H = _random_matrix(rng, q, 10, 30, 0.25)
    H[9] = F.mul[3 % q or 1, H[0]] ^ H[1]  # one dependent row
    r = gf_rank(H, q)
    code = Code("random", sp.csr_matrix(H), 30 - r, q=q)
    enc = GFqEncoder(code)
    assert enc.k == 30 - r == len(enc.info_positions)
    assert sorted(np.concatenate([enc.info_positions, enc.parity_positions]).tolist()) == list(range(30))
    u = rng.integers(0, q, (50, enc.k)).astype(np.uint8)
    cw = enc.encode(u)
    assert cw.dtype == np.uint8 and cw.shape == (50, 30)
    assert not gf_syndrome(code.H, cw, q).any()
    np.testing.assert_array_equal(cw[:, enc.info_positions], u)
    # linearity over GF(q): enc(a*u + v) = a*enc(u) + enc(v)
    a = int(rng.integers(1, q))
    np.testing.assert_array_equal(enc.encode(F.mul[a, u[:25]] ^ u[25:]), F.mul[a, cw[:25]] ^ cw[25:])


def test_encoder_prefers_last_columns_and_falls_back():
    # [I | I]: the last 2 columns are independent -> info first
    H = np.hstack([np.eye(2), np.eye(2)]).astype(np.uint8)
    enc = GFqEncoder(Code("a", sp.csr_matrix(H), 2, q=2))
    np.testing.assert_array_equal(enc.info_positions, [0, 1])
    np.testing.assert_array_equal(enc.encode(np.array([[1, 0]])), [[1, 0, 1, 0]])
    # last two columns equal -> dependent; the pivots become columns 3 and 1
    H = np.array([[1, 0, 1, 1], [0, 1, 0, 0]], dtype=np.uint8)
    enc = GFqEncoder(Code("b", sp.csr_matrix(H), 2, q=2))
    np.testing.assert_array_equal(enc.info_positions, [0, 2])
    cw = enc.encode(np.array([[1, 1], [0, 1]]))
    np.testing.assert_array_equal(cw, [[1, 0, 1, 0], [0, 0, 1, 1]])


def test_encoder_errors():
    H = sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 1]], dtype=np.uint8))
    with pytest.raises(ValueError, match="code 'x': k=2 but H has GF\\(2\\) rank 2, so k must be 1"):
        GFqEncoder(Code("x", H.copy(), 2, q=2))
    enc = GFqEncoder(Code("y", H.copy(), 1, q=2))
    with pytest.raises(ValueError, match="info must have shape \\[batch, 1\\], got \\(3,\\)"):
        enc.encode(np.zeros(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="GF\\(2\\) elements 0..1"):
        enc.encode(np.array([[2]]))

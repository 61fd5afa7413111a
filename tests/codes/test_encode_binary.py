"""Binary encoders: dual-diagonal (standards) against Gaussian elimination, syndromes, info positions."""
import numpy as np
import pytest
import scipy.sparse as sp

import gpuldpc as gl
from gpuldpc.codes.standards import WIFI_RATES, WIFI_Z, WIMAX_LENGTHS, WIMAX_RATES
from gpuldpc.decoders.front import make_result
from gpuldpc.encode import (CoreExtensionEncoder, DualDiagonalEncoder, core_extension_plan,
                            dual_diagonal_shift, make_encoder)
from gpuldpc.gflinalg import GFqEncoder

NAMES = [f"wifi-{n}-{r}" for n in WIFI_Z for r in WIFI_RATES] + \
        [f"wimax-{n}-{r}" for n in WIMAX_LENGTHS for r in WIMAX_RATES]


@pytest.mark.parametrize("name", NAMES)
def test_standard_code_encodes_systematic_codewords(name):
    code = gl.codes.get(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    info = rng.integers(0, 2, (6, code.k), dtype=np.uint8)
    info[0] = 0
    info[1] = 1
    cw = code.encode(info)
    assert isinstance(code.encoder, DualDiagonalEncoder)
    assert cw.dtype == np.uint8 and cw.shape == (6, code.n)
    np.testing.assert_array_equal(cw[:, :code.k], info)
    assert not code.syndrome(cw).any()
    assert code.is_codeword(cw).all()
    assert not cw[0].any()
    np.testing.assert_array_equal(code.info_positions, np.arange(code.k))
    # the Gaussian-elimination generator is systematic too, so both give the same codewords
    np.testing.assert_array_equal(GFqEncoder(code).encode(info), cw)


def test_h_b_column_shift():
    for n in WIFI_Z:
        for rate in WIFI_RATES:
            assert dual_diagonal_shift(gl.codes.wifi(n, rate).base) == 0
    for n in WIMAX_LENGTHS:
        z = n // 24
        # rate 3/4B: h_b = (0, -1, 80, -1, -1, 0) -> P^0 + P^floor(80z/96) + P^0 = P^floor(80z/96)
        assert dual_diagonal_shift(gl.codes.wimax(n, "3/4B").base) == 80 * z // 96
        assert dual_diagonal_shift(gl.codes.wimax(n, "5/6").base) == 0


def test_one_codeword_by_hand():
    # 3 x 5 base, z = 3: info blocks u0, u1; h_b = (1, 0, 1) sums to P^0; dual diagonal after it.
    base = np.array([[0, -1, 1, 0, -1],
                     [-1, 2, 0, 0, 0],
                     [1, -1, 1, -1, 0]])
    z = 3
    code = gl.codes.Code("toy", gl.codes.qc_expand(base, z), 6, base=base, z=z)
    assert dual_diagonal_shift(base) == 0
    info = np.array([[1, 0, 0, 0, 1, 1]], dtype=np.uint8)
    cw = code.encode(info)
    assert isinstance(code.encoder, DualDiagonalEncoder)
    # P^s v = v[(r+s) mod z]; lambda_0 = u0 = 100, lambda_1 = P^2 u1 = 101, lambda_2 = P^1 u0 = 001
    # p0 = lambda_0 + lambda_1 + lambda_2 = 000; p1 = lambda_0 = 100; p2 = p1 + lambda_1 = 001
    np.testing.assert_array_equal(cw[0], [1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1])
    assert not code.syndrome(cw).any()


def test_base_matrix_code_without_the_structure_uses_elimination():
    base = gl.codes.wifi(648, "1/2").base.copy()
    base[[0, 1]] = base[[1, 0]]               # rows swapped: same code, no dual diagonal
    assert dual_diagonal_shift(base) is None
    code = gl.codes.Code("swapped", gl.codes.qc_expand(base, 27), 324, base=base, z=27)
    # the core + peeling encoder (5G NR's) still solves it: rows in any order
    assert isinstance(make_encoder(code), CoreExtensionEncoder)
    info = np.random.default_rng(5).integers(0, 2, (4, 324), dtype=np.uint8)
    np.testing.assert_array_equal(code.encode(info), gl.codes.wifi(648, "1/2").encode(info))
    with pytest.raises(gl.codes.CodeError, match="no h_b"):
        DualDiagonalEncoder(base, 27)
    # an information column swapped into the parity part: neither structure, elimination
    base[:, [0, 12]] = base[:, [12, 0]]
    assert dual_diagonal_shift(base) is None and core_extension_plan(base) is None
    code = gl.codes.Code("mixed", gl.codes.qc_expand(base, 27), 324, base=base, z=27)
    assert isinstance(make_encoder(code), GFqEncoder)
    assert code.is_codeword(code.encode(info)).all()
    with pytest.raises(gl.codes.CodeError, match="no core"):
        CoreExtensionEncoder(base, 27)


def test_non_systematic_code_exposes_info_positions():
    # last two columns [[0, 0], [1, 1]] are dependent: pivots 3 and 1, information at 0 and 2
    H = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1]], dtype=np.uint8))
    code = gl.codes.Code("pairs", H, 2)
    np.testing.assert_array_equal(code.info_positions, [0, 2])
    cw = code.encode(np.array([[1, 0], [0, 1], [1, 1]], dtype=np.uint8))
    np.testing.assert_array_equal(cw, [[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]])
    res = make_result(code, cw, np.ones(3), np.ones(3, dtype=bool))
    np.testing.assert_array_equal(res.info, [[1, 0], [0, 1], [1, 1]])
    systematic = gl.codes.wifi(648, "1/2")
    bits = np.arange(2 * 648).reshape(2, 648) % 2
    res = make_result(systematic, bits, np.ones(2), np.ones(2, dtype=bool))
    np.testing.assert_array_equal(res.info, bits[:, :324])


def test_syndrome_of_a_flipped_bit_is_its_column():
    code = gl.codes.wimax(576, "3/4A")
    cw = code.encode(np.random.default_rng(2).integers(0, 2, code.k, dtype=np.uint8))
    assert cw.ndim == 1
    for j in (0, 100, code.n - 1):
        bad = cw.copy()
        bad[j] ^= 1
        s = code.syndrome(bad)
        assert s.shape == (code.m,)
        np.testing.assert_array_equal(s, code.H[:, j].toarray().ravel())
        assert not code.is_codeword(bad)[0]
    with pytest.raises(ValueError, match=r"code 'wimax-576-3/4A': words must have shape \[batch, 576\]"):
        code.syndrome(np.zeros((2, 575), dtype=np.uint8))


def test_encoding_is_linear_over_the_batch():
    code = gl.codes.wifi(1944, "5/6")
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 2, (2, 50, code.k), dtype=np.uint8)
    np.testing.assert_array_equal(code.encode(a ^ b), code.encode(a) ^ code.encode(b))

"""GF(q) QC codes: dimensions, rank, regularity, CPM structure, girth, encoding."""
import time

import numpy as np
import pytest
import scipy.sparse as sp

from gpuldpc.codes import nb
from gpuldpc.codes.code import CodeError
from gpuldpc.codes.qc import qc_expand
from gpuldpc.gf import GF, binary_image
from gpuldpc.gflinalg import GFqEncoder, gf_rank, gf_syndrome

# name: (q, dv, dc, n, k, rank, girth) -- the table of gpuldpc.codes.nb and docs/codes.md
TABLE = {
    "gf32-744-653": (32, 3, 24, 744, 653, 91, 6),
    "gf32-837-726": (32, 4, 27, 837, 726, 111, 6),
    "gf64-1512-1325": (64, 3, 24, 1512, 1325, 187, 6),
    "gf32-620-310": (32, 3, 6, 620, 310, 310, 4),
    "gf16-300-150": (16, 3, 6, 300, 150, 150, 4),
    "gf64-1260-630": (64, 3, 6, 1260, 630, 630, 6),
    "gf4-192-96": (4, 3, 6, 192, 96, 96, 6),
    "gf8-224-112": (8, 3, 6, 224, 112, 112, 8),
    "gf32-384-128": (32, 2, 3, 384, 128, 256, 24),
    "gf64-384-128": (64, 2, 3, 384, 128, 256, 24),
    "gf128-384-128": (128, 2, 3, 384, 128, 256, 24),
    "gf256-384-128": (256, 2, 3, 384, 128, 256, 24),
}
# Rank-deficient arrays: where the encoder puts the information (documented in nb.py)
INFO_POSITIONS = {
    "gf32-744-653": np.r_[0:652, 682],
    "gf32-837-726": np.r_[0:719, 744:750, 775],
    "gf64-1512-1325": np.r_[0:1324, 1386],
}


@pytest.fixture(scope="module", params=sorted(TABLE))
def code(request):
    return nb.FACTORIES[request.param]()


def test_factories_are_the_table_and_every_q():
    assert sorted(nb.FACTORIES) == sorted(TABLE)
    assert {v[0] for v in TABLE.values()} == {4, 8, 16, 32, 64, 128, 256}


def test_build_time():
    for name, factory in nb.FACTORIES.items():
        t0 = time.perf_counter()
        code = factory()
        assert time.perf_counter() - t0 < 1.0, name
        assert code.name == name


def test_dimensions_rank_regularity(code):
    q, dv, dc, n, k, rank, _ = TABLE[code.name]
    assert (code.q, code.n, code.k) == (q, n, k)
    assert code.name == f"gf{q}-{n}-{k}"
    assert gf_rank(code.H, q) == rank == n - k
    np.testing.assert_array_equal(np.diff(code.H.tocsc().indptr), dv)
    np.testing.assert_array_equal(np.diff(code.H.indptr), dc)
    assert code.edges == n * dv
    assert code.H.data.min() >= 1 and code.H.data.max() <= q - 1


def test_structure(code):
    """CPM codes: every block a pure alpha-multiplied CPM; 384 codes: a QC support."""
    q = code.q
    if code.base is None:
        support = qc_expand(nb.read_matrix("dv2_384_support_z32.txt"), nb.DV2_384_Z)
        np.testing.assert_array_equal(code.H.indptr, support.indptr)
        np.testing.assert_array_equal(code.H.indices, support.indices)
        assert code.z is None
    else:
        assert code.z == q - 1
        np.testing.assert_array_equal(nb.cpm_exponents(code.H, q), code.base)
        # block (I, J) with exponent s: row i has alpha^c at column c = (s+i) mod (q-1)
        I, J = np.argwhere(code.base >= 0)[0]
        s, z = code.base[I, J], q - 1
        block = code.H[I * z:(I + 1) * z, J * z:(J + 1) * z].toarray()
        c = (s + np.arange(z)) % z
        expect = np.zeros((z, z), dtype=np.int64)
        expect[np.arange(z), c] = GF(q).exp[c]
        np.testing.assert_array_equal(block, expect)


def test_girth(code):
    z = code.z or nb.DV2_384_Z
    assert nb.tanner_girth(code.H, z) == TABLE[code.name][6]


def test_encoding(code):
    rng = np.random.default_rng(code.n)
    enc = GFqEncoder(code)
    u = rng.integers(0, code.q, (16, code.k)).astype(np.uint8)
    cw = enc.encode(u)
    assert not gf_syndrome(code.H, cw, code.q).any()
    np.testing.assert_array_equal(cw[:, enc.info_positions], u)
    expect = INFO_POSITIONS.get(code.name, np.arange(code.k))
    np.testing.assert_array_equal(enc.info_positions, expect)
    # a single symbol error is detected
    bad = cw.copy()
    bad[:, 5] ^= 1
    assert gf_syndrome(code.H, bad, code.q).any(axis=1).all()


def test_published_constructions():
    # (744,653) and (1512,1325): s(i,j) = i*j mod (q-1)
    np.testing.assert_array_equal(nb.FACTORIES["gf32-744-653"]().base[2, 14:18], [28, 30, 1, 3])
    np.testing.assert_array_equal(nb.FACTORIES["gf64-1512-1325"]().base[2, -2:], [44, 46])
    # (837,726): W = [alpha^(j-i) + 1] in GF(32), rows 0..3, columns 4..30; first row of
    # shared/reference/codes/nb/recon_837_726_GF32_W1_rows0-3_cols4-30_base_exponents.txt
    base = nb.FACTORIES["gf32-837-726"]().base
    np.testing.assert_array_equal(base[0, :8], [10, 2, 27, 22, 20, 16, 4, 19])
    np.testing.assert_array_equal(base[1, 1:], base[0, :-1])  # circulant W
    W = nb.zech_array_exponents(32)
    assert (np.diag(W) == -1).all() and (W[~np.eye(31, dtype=bool)] >= 0).all()
    # Rice (620,310): first row of the public matrix
    np.testing.assert_array_equal(
        nb.FACTORIES["gf32-620-310"]().base[0],
        [2, -1, -1, -1, -1, -1, -1, -1, 20, 25, 4, -1, -1, -1, -1, -1, -1, -1, 16, 13])


def test_rank_bound_of_full_arrays():
    """Every block nonzero: rank <= mb*(q-1) - (mb-1), reached by the 744 and 1512 codes."""
    for name, mb in (("gf32-744-653", 3), ("gf64-1512-1325", 3), ("gf32-837-726", 4)):
        q = TABLE[name][0]
        assert TABLE[name][5] <= mb * (q - 1) - (mb - 1)
    assert TABLE["gf64-1512-1325"][5] == 3 * 63 - 2


def test_binary_image_codewords():
    code = nb.FACTORIES["gf8-224-112"]()
    F = GF(8)
    cw = GFqEncoder(code).encode(np.random.default_rng(1).integers(0, 8, (5, 112)))
    bits = F.to_bits(cw).reshape(5, -1)  # symbol j -> bits 3j..3j+2, LSB first
    Hb = binary_image(code.H, 8)
    assert Hb.shape == (3 * 112, 3 * 224)
    assert not ((Hb @ bits.T.astype(np.int64)) % 2).any()


def test_disperse_and_cpm_exponents_errors():
    with pytest.raises(CodeError, match="base exponent \\(0, 1\\) = 31 is not -1 or an exponent in 0..30"):
        nb.disperse([[0, 31]], 32)
    H = nb.disperse([[0, 3], [-1, 5]], 8).tolil()
    H[8, 7 + 6] = 1  # block (1, 1) gets a second entry in row 1
    with pytest.raises(CodeError, match="block \\(1, 1\\) of H is not an alpha-multiplied CPM"):
        nb.cpm_exponents(H.tocsr(), 8)
    H = nb.disperse([[0, 3]], 8).tolil()
    H[2, 2] = 1  # right position, wrong value (should be alpha^2 = 4)
    with pytest.raises(CodeError, match="block \\(0, 0\\)"):
        nb.cpm_exponents(H.tocsr(), 8)
    with pytest.raises(CodeError, match="not a multiple of q-1 = 7"):
        nb.cpm_exponents(sp.csr_matrix((7, 8), dtype=np.uint8), 8)


def test_tanner_girth_small_graphs():
    assert nb.tanner_girth(np.ones((2, 2))) == 4
    assert nb.tanner_girth(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])) == 6
    assert nb.tanner_girth(np.array([[1, 1, 0], [0, 1, 1]])) is None  # a tree
    # the QC shortcut agrees with searching every column
    code = nb.FACTORIES["gf8-224-112"]()
    assert nb.tanner_girth(code.H) == nb.tanner_girth(code.H, 7) == 8

"""CCSDS 131.0-B codes (gpuldpc.codes.ccsds): structure, encoders, shaping, errors."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes import ccsds

SMALL_AR4JA = [f"ccsds-ar4ja-{k}-{r}" for k in (1024, 4096) for r in ("1/2", "2/3", "4/5")] + ["ccsds-ar4ja-16384-4/5"]


def test_ar4ja_permutation_formula_and_are_permutations():
    # pi_k(i) = M/4 ((theta_k + floor(4i/M)) mod 4) + (phi_k(floor(4i/M), M) + i) mod M/4, 7.4.2.4
    m = 128
    for index in range(1, 27):
        pi = ccsds.ar4ja_pi(index, m)
        assert np.array_equal(np.sort(pi), np.arange(m))
    # hand-checked entries: theta_1 = 3, phi_1(0, 128) = 1, phi_1(1..3, 128) = 0
    pi1 = ccsds.ar4ja_pi(1, 128)
    assert pi1[0] == 32 * 3 + 1 and pi1[31] == 96 + 0 and pi1[32] == 0 + 0 and pi1[127] == 64 + 31
    pi2 = ccsds.ar4ja_pi(2, 512)          # theta_2 = 0, phi_2(j, 512) = 103, 53, 8, 35
    assert pi2[0] == 103 and pi2[128] == 128 + 53 and pi2[256] == 256 + 8 and pi2[511] == 384 + (35 + 511) % 128


@pytest.mark.parametrize("name", SMALL_AR4JA)
def test_ar4ja_shapes_degrees_and_encoding(name):
    code = gl.codes.get(name)
    k, rate = int(name.split("-")[2]), name.split("-")[3]
    m = ccsds.AR4JA_M[k, rate]
    mother = code.mother
    num, den = map(int, rate.split("/"))
    assert (code.k, code.n) == (k, k * den // num)
    assert mother.n == code.n + m and mother.m == 3 * m and mother.k == k
    # the punctured bits are the last M columns (the degree-6 ones of the protograph)
    assert np.array_equal(code.shaping.punctured, np.arange(mother.n - m, mother.n))
    assert code.shaping.shortened.size == 0
    assert np.array_equal(code.info_positions, np.arange(k))
    assert np.array_equal(np.diff(mother.H[:, -m:].tocsc().indptr), np.full(m, 6))
    # QC form: z = M/4, one shift per block, equal to the H built from pi_k
    assert mother.z == m // 4 and mother.base.shape == (12, 4 * (mother.n // m))
    assert (gl.codes.qc_expand(mother.base, mother.z) != mother.H).nnz == 0
    assert code.decoded is mother                      # nothing pruned: punctured columns have degree 6
    info = np.random.default_rng(5).integers(0, 2, (8, k)).astype(np.uint8)
    cw = code.encode_mother(info)
    assert mother.is_codeword(cw).all()
    assert np.array_equal(cw[:, :k], info)
    assert np.array_equal(code.encode(info), cw[:, :code.n])


def test_ar4ja_qc_form_gives_a_cuda_layout():
    from gpuldpc.cuda.layout import NotQuasiCyclic, qc_layout
    lay = qc_layout(gl.codes.get("ccsds-ar4ja-1024-1/2").decoded)
    assert (lay.n, lay.z, lay.layers) == (2560, 128, 12)
    with pytest.raises(NotQuasiCyclic, match="ccsds-c2-mother"):   # weight-2 circulants: no QC form yet
        qc_layout(gl.codes.get("ccsds-c2").decoded)


def test_c2_base_mother_and_shortening():
    base = ccsds.c2_base()
    assert (base.n, base.m, base.k) == (8176, 1022, 7156)
    assert np.array_equal(np.diff(base.H.indptr), np.full(1022, 32))           # 16 blocks x 2
    assert np.array_equal(np.diff(base.H.tocsc().indptr), np.full(8176, 4))     # 2 blocks x 2
    assert base.H[0, 176] == 1 and base.H[0, 0] == 1 and base.H[511 + 1, 100] == 1   # Table 7-1
    code = gl.codes.get("ccsds-c2")
    mother = code.mother
    assert (code.n, code.k, mother.n, mother.k) == (8160, 7136, 8178, 7154)
    assert np.array_equal(code.shaping.shortened, np.arange(18))
    assert np.array_equal(code.shaping.transmitted, np.arange(18, 8178))
    assert np.array_equal(code.info_positions, np.arange(18, 7154))
    info = np.random.default_rng(6).integers(0, 2, (6, 7136)).astype(np.uint8)
    cw = code.encode_mother(info)
    assert mother.is_codeword(cw).all() and base.is_codeword(cw[:, :8176]).all()
    assert not cw[:, :18].any() and not cw[:, -2:].any()      # fill and the two appended zeros
    tx = code.encode(info)
    assert tx.shape == (6, 8160) and np.array_equal(tx[:, :7136], info)
    assert np.array_equal(tx, cw[:, 18:])
    # every word of the base code followed by two zeros is a mother codeword, nothing else
    flipped = cw.copy()
    flipped[:, -1] ^= 1
    assert not mother.is_codeword(flipped).any()


def test_bad_parameters_name_the_valid_values():
    with pytest.raises(ValueError, match=r"k=2048 .* 1024, 4096, 16384"):
        gl.codes.ar4ja(2048, "1/2")
    with pytest.raises(ValueError, match=r"rate='3/4' is not one of '1/2', '2/3', '4/5'"):
        gl.codes.ar4ja(1024, "3/4")
    with pytest.raises(gl.codes.UnknownCodeError, match="ccsds-ar4ja-1024-1/2"):
        gl.codes.get("ccsds-ar4ja-1024-1/3")
    names = gl.codes.names()
    assert "ccsds-c2" in names and sum(n.startswith("ccsds-ar4ja-") for n in names) == 9


def test_c2_encoder_is_the_standards_generator():
    """The encoder is G = [I | P] of 131.0-B 7.3 (14 x 2 circulants of 511 from their first rows,
    data/ccsds_c2_generator.txt): all 7154 rows of G are codewords of the base code (a wrong
    digit or shift direction in the table would break some), the first row's parity is the
    table's first row pair as printed, and encoding is info @ G."""
    P = ccsds.c2_generator_parity()
    assert P.shape == (7154, 1022)
    H = ccsds.c2_base().H.astype(np.float32)
    syndromes = (H[:, :7154] + H[:, 7154:] @ P.T.astype(np.float32)).astype(np.int64) % 2
    assert not syndromes.any()
    first = np.unpackbits(np.frombuffer(bytes.fromhex("55BF56CC55283DFE"), np.uint8))[1:]
    assert np.array_equal(P[0, :63], first)                 # B_{1,1} first row, after its pad bit
    assert np.array_equal(P[1, 1:64], first) and P[1, 0] == P[0, 510]      # row 1: rotated right by one
    info = np.random.default_rng(7).integers(0, 2, (5, 7136)).astype(np.uint8)
    cw = gl.codes.get("ccsds-c2").encode_mother(info)
    u = cw[:, :7154]
    np.testing.assert_array_equal(cw[:, 7154:8176], (u.astype(np.float32) @ P.astype(np.float32)).astype(np.int64) % 2)

"""IEEE 802.11n / 802.16e codes: dimensions, edge counts, rank, shift rules, registry."""
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import gpuldpc as gl
from gpuldpc.codes.registry import UnknownCodeError
from gpuldpc.codes.standards import WIFI_RATES, WIMAX_LENGTHS, WIMAX_RATES, wimax_shifts
from gpuldpc.gflinalg import gf_rank

DATA = Path(__file__).parent / "data"

# Non-empty blocks of each base matrix (shared/reference/codes/README.md: edges = blocks x z).
WIFI_BLOCKS = {
    648: {"1/2": 88, "2/3": 88, "3/4": 88, "5/6": 88},
    1296: {"1/2": 86, "2/3": 88, "3/4": 88, "5/6": 85},
    1944: {"1/2": 86, "2/3": 88, "3/4": 85, "5/6": 79},
}
WIMAX_BLOCKS = {"1/2": 76, "2/3A": 80, "2/3B": 81, "3/4A": 85, "3/4B": 88, "5/6": 80}
RATE_K = {"1/2": (1, 2), "2/3": (2, 3), "3/4": (3, 4), "5/6": (5, 6)}

STANDARD = [("wifi", n, r) for n in WIFI_BLOCKS for r in WIFI_RATES] + \
           [("wimax", n, r) for n in WIMAX_LENGTHS for r in WIMAX_RATES]
NAMES = [f"{fam}-{n}-{r}" for fam, n, r in STANDARD]


def _same(A, B) -> bool:
    return A.shape == B.shape and (sp.csr_matrix(A, dtype=np.int64) != sp.csr_matrix(B, dtype=np.int64)).nnz == 0


def test_there_are_12_wifi_and_114_wimax_codes():
    assert len(STANDARD) == 12 + 19 * 6
    assert WIMAX_LENGTHS == tuple(range(576, 2305, 96))


@pytest.mark.parametrize("family,n,rate", STANDARD, ids=NAMES)
def test_dimensions_edges_and_full_rank(family, n, rate):
    code = getattr(gl.codes, family)(n, rate)
    z = n // 24
    num, den = RATE_K[rate[:3]]
    blocks = WIFI_BLOCKS[n][rate] if family == "wifi" else WIMAX_BLOCKS[rate]
    assert (code.n, code.z, code.q, code.standard) == (n, z, 2, family)
    assert code.k == n * num // den
    assert code.m == n - code.k
    assert code.base.shape == (24 * (den - num) // den, 24)
    assert code.edges == blocks * z
    assert int((code.base >= 0).sum()) == blocks
    assert gf_rank(code.H, 2) == n - code.k
    # every block is a permutation: row and column weights follow the base matrix
    nonzero = (code.base >= 0).astype(int)
    np.testing.assert_array_equal(np.diff(code.H.indptr), np.repeat(nonzero.sum(axis=1), z))
    np.testing.assert_array_equal(np.diff(code.H.tocsc().indptr), np.repeat(nonzero.sum(axis=0), z))


def test_qc_expand_follows_the_shift_convention():
    base = np.array([[0, 2, -1], [3, -1, 1]])
    z = 4
    P = lambda s: np.roll(np.eye(z, dtype=int), s, axis=1)  # row r has its 1 at (r+s) mod z
    O = np.zeros((z, z), dtype=int)
    expected = np.block([[P(0), P(2), O], [P(3), O, P(1)]])
    H = gl.codes.qc_expand(base, z)
    assert H.dtype == np.uint8
    np.testing.assert_array_equal(H.toarray(), expected)
    assert H[1, z + 3] == 1   # block (0,1), shift 2: row 1 -> column (1+2) mod 4


@pytest.mark.parametrize("base,z,message", [
    ([[0, 4]], 4, "entry (0, 1) = 4 is not -1 or a shift in 0..3"),
    ([[0, -2]], 4, "entry (0, 1) = -2"),
    ([[0, 1]], 0, "z must be an integer >= 1"),
    ([[0.5]], 2, "must be integers"),
    ([1, 2], 3, "2-D"),
])
def test_qc_expand_rejects_bad_input(base, z, message):
    with pytest.raises(gl.codes.CodeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gl.codes.qc_expand(base, z)


def test_column_degrees_of_the_rate_half_codes():
    # shared/reference/codes/README.md
    degrees = np.diff(gl.codes.wifi(1944, "1/2").H.tocsc().indptr)
    assert dict(zip(*np.unique(degrees, return_counts=True))) == {2: 891, 3: 729, 4: 81, 11: 243}
    degrees = np.diff(gl.codes.wimax(2304, "1/2").H.tocsc().indptr)
    assert dict(zip(*np.unique(degrees, return_counts=True))) == {2: 1056, 3: 768, 6: 480}


def test_disputed_wimax_cells_use_the_later_editions():
    assert gl.codes.wimax(2304, "3/4B").base[5, 7] == 35
    assert gl.codes.wimax(2304, "5/6").base[3, 0] == 68


def test_wimax_shift_scaling():
    b1 = gl.codes.wimax(2304, "1/2").base
    assert b1[0, 1] == 94
    assert gl.codes.wimax(576, "1/2").base[0, 1] == 94 * 24 // 96 == 23
    assert gl.codes.wimax(1440, "1/2").base[0, 1] == 94 * 60 // 96 == 58
    b2 = gl.codes.wimax(2304, "2/3A").base
    i, j = np.argwhere(b2 >= 24)[0]
    p = int(b2[i, j])
    assert gl.codes.wimax(576, "2/3A").base[i, j] == p % 24 != p * 24 // 96
    np.testing.assert_array_equal(wimax_shifts(np.array([-1, 0, 1, 95]), 24, "1/2"), [-1, 0, 0, 23])
    np.testing.assert_array_equal(wimax_shifts(np.array([-1, 0, 1, 95]), 24, "2/3A"), [-1, 0, 1, 23])
    for n in WIMAX_LENGTHS:   # zero blocks and unshifted identities keep their place
        for rate in WIMAX_RATES:
            b, b0 = gl.codes.wimax(n, rate).base, gl.codes.wimax(2304, rate).base
            np.testing.assert_array_equal(b == -1, b0 == -1)
            assert (b[b0 == 0] == 0).all()


def test_reference_alists_equal_our_codes():
    assert _same(gl.codes.from_alist(DATA / "wifi_1944_1_2.alist").H, gl.codes.wifi(1944, "1/2").H)
    assert _same(gl.codes.from_alist(DATA / "wimax_2304_1_2.alist").H, gl.codes.wimax(2304, "1/2").H)
    assert _same(gl.codes.from_alist(DATA / "aff3ct_WIFI_540_648.alist").H, gl.codes.wifi(648, "5/6").H)


def test_aff3ct_wimax_576_alists_follow_the_floor_scaling():
    # AFF3CT's r1/2 alist has every circulant transposed: shift s -> -s mod z.
    code = gl.codes.wimax(576, "1/2")
    transposed = np.where(code.base >= 0, (-code.base) % 24, -1)
    assert _same(gl.codes.from_alist(DATA / "aff3ct_WIMAX_288_576.alist").H,
                 gl.codes.qc_expand(transposed, 24))
    # AFF3CT's r5/6 alist is the older transcription: cell (3,0) = 50 instead of 68.
    code = gl.codes.wimax(576, "5/6")
    older = code.base.copy()
    assert older[3, 0] == 68 * 24 // 96 == 17
    older[3, 0] = 50 * 24 // 96
    aff3ct = gl.codes.from_alist(DATA / "aff3ct_WIMAX_480_576.alist").H
    assert _same(aff3ct, gl.codes.qc_expand(older, 24))
    assert not _same(aff3ct, code.H)


def test_standard_matrices_with_4_cycles_are_kept():
    # 802.16e 3/4A rows 0/1, columns 0/1: 6 - 38 + 94 - 62 = 0 (shared/reference/codes/README.md)
    b = gl.codes.wimax(2304, "3/4A").base
    assert b[0, 0] - b[1, 0] + b[1, 1] - b[0, 1] == 0


def test_registry_names_and_cache():
    names = gl.codes.names()
    assert names[:len(NAMES)] == NAMES
    assert len(set(names)) == len(names)
    assert "wifi-1944-1/2" in names and "wimax-2304-2/3A" in names
    code = gl.codes.get("wimax-2304-2/3A")
    assert code is gl.codes.get("wimax-2304-2/3A") is gl.codes.wimax(2304, "2/3A")
    assert code.name == "wimax-2304-2/3A"
    assert gl.codes.get("wifi-1944-1/2") is gl.codes.wifi(1944, "1/2")
    nr_names = [n for n in names if n.startswith("nr-")]
    assert names[len(NAMES):len(NAMES) + len(nr_names)] == nr_names and len(nr_names) == 102
    nb_names = [n for n in names[len(NAMES) + len(nr_names):] if not n.startswith(("dvbs2-", "ccsds-"))]
    assert sum(n.startswith("dvbs2-") for n in names) == 51      # DVB-S2 + S2X (test_dvbs2.py)
    assert sum(n.startswith("ccsds-") for n in names) == 10      # CCSDS: 9 AR4JA + C2 (test_ccsds.py)
    assert "gf32-744-653" in nb_names
    assert all(re.fullmatch(r"gf(4|8|16|32|64|128|256)-[0-9]+-[0-9]+", name) for name in nb_names)
    nb = gl.codes.get("gf32-620-310")   # GF(q) codes come from gpuldpc.codes.nb, cached here too
    assert (nb.q, nb.n, nb.k, nb.name) == (32, 620, 310, "gf32-620-310")
    assert nb is gl.codes.get("gf32-620-310")


def test_unknown_names_suggest_close_ones():
    with pytest.raises(KeyError) as err:
        gl.codes.get("wifi-1944-1/3")
    assert isinstance(err.value, UnknownCodeError)
    assert "no code named 'wifi-1944-1/3'" in str(err.value)
    assert "'wifi-1944-1/2'" in str(err.value)
    with pytest.raises(UnknownCodeError, match="'wimax-2304-2/3A'"):
        gl.codes.get("WIMAX-2304-2/3a")
    with pytest.raises(TypeError, match="code name must be a string"):
        gl.codes.get(1944)


@pytest.mark.parametrize("call,message", [
    (lambda: gl.codes.wifi(1000, "1/2"), "n=1000 is not a code length of the standard; use one of 648, 1296, 1944"),
    (lambda: gl.codes.wifi(648, "2/3A"), "rate='2/3A' is not one of '1/2', '2/3', '3/4', '5/6'"),
    (lambda: gl.codes.wimax(600, "1/2"), "n=600 is not a code length"),
    (lambda: gl.codes.wimax(2304, "2/3"), "rate='2/3' is not one of '1/2', '2/3A'"),
    (lambda: gl.codes.wimax(2304.0, "1/2"), "n=2304.0 is not a code length"),
])
def test_bad_standard_arguments(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)

"""CCSDS 131.0-B (TM Synchronization and Channel Coding) LDPC codes: AR4JA and C2.

AR4JA (section 7.4), :func:`ar4ja`, registry names ``ccsds-ar4ja-<k>-<rate>``: rates 1/2,
2/3, 4/5 for k = 1024, 4096, 16384.  The parity-check matrix is 3 x (5 + 2E) blocks of
M x M (E = 0, 1, 3 extra column pairs for rates 1/2, 2/3, 4/5; M from Table 7-2); each
block is zero, the identity or a sum of the permutation matrices Pi_k (row i has its 1 in
column pi_k(i), 7.4.2.4)::

    pi_k(i) = M/4 * ((theta_k + floor(4i/M)) mod 4) + (phi_k(floor(4i/M), M) + i) mod M/4

with theta_k and phi_k of Tables 7-3 and 7-4 (the tables of daniestevez/ldpc-toolbox,
``src/codes/ccsds.rs``, taken over as facts of the standard).  These blocks are not
circulants of size M, but each is 4 x 4 blocks of M/4 x M/4 circulants (row quarter j goes
to column quarter (theta_k + j) mod 4, shift phi_k(j, M)), and no sum of the standard puts
two terms in one small block: the mother code is QC with z = M/4 and one shift per block
(:func:`ar4ja_base`, checked equal to the H built from pi_k), so the QC kernels apply.
The last M columns are punctured (7.4.2.2): the registered code is a
:class:`~gpuldpc.codes.ShapedCode` over the mother (``code.mother``) with n = k / rate
transmitted bits; ``gl.Decoder(code)`` takes those n LLRs and loads LLR 0 for the
punctured ones.  Encoding is systematic (7.4.3: info first, parity in the last 3M
columns of the mother) by :class:`Ar4jaEncoder`: a sparse syndrome of the info part, then
the three parity blocks from the block structure, with one dense M x M GF(2) inverse.

C2 (section 7.3), :func:`c2`, registry name ``ccsds-c2``: the base code is (8176, 7156),
H = 2 x 16 blocks of 511 x 511 circulants, each the sum of two (Table 7-1, same tables
source; row r of a circulant with shift s has its 1 in column (r + s) mod 511, as in
:mod:`.qc`).  H has rank 1020 (every block has even weight, so each block row sums to
zero): 2 redundant rows.  The standard's systematic generator has 7154 rows (14 x 16
circulant blocks), an expurgated (8176, 7154) subcode; the transmitted (8160, 7136) code
prepends 18 virtual fill zeros to the 7136 information bits (not transmitted) and appends
two zero bits to the 8158 sent ones.  Here:

* the mother code (``code.mother``, n = 8178) is the base H with two more columns, the two
  appended zero bits, each in one check of its block row (rows 0 and 511).  The sum of a
  block row's checks is then that one bit, so every codeword has them 0: the mother is the
  base code followed by two zeros, H has full rank 1022, and the decoder sees their LLRs
  as ordinary evidence of 0;
* its encoder (:class:`C2Encoder`) is the standard's generator: information in positions
  0..7153, parity ``info @ P`` in 7154..8175 with P the 14 x 2 circulants of 7.3
  (``data/ccsds_c2_generator.txt``), the two appended zeros last -- bit for bit the expurgated
  (8176, 7154) subcode (the base code's two free dimensions are the standard's choice, not
  two parity positions taken as zero, as before session 12); the decoder decodes the base
  code, which holds every standard codeword;
* ``ccsds-c2`` is the ShapedCode: positions 0..17 shortened (the fill), the rest sent:
  n = 8160, k = 7136.

Bad parameters raise ValueError naming the parameter and its valid values.
"""
from __future__ import annotations

import functools
from importlib import resources

import numpy as np
import scipy.sparse as sp

from ..gflinalg import _rref_gf2
from .code import Code
from .qc import qc_expand
from .shaping import ShapedCode, shaped

AR4JA_K = (1024, 4096, 16384)
AR4JA_RATES = ("1/2", "2/3", "4/5")
AR4JA_M = {(1024, "1/2"): 512, (1024, "2/3"): 256, (1024, "4/5"): 128,
           (4096, "1/2"): 2048, (4096, "2/3"): 1024, (4096, "4/5"): 512,
           (16384, "1/2"): 8192, (16384, "2/3"): 4096, (16384, "4/5"): 2048}
"""Table 7-2: the block size M of each (k, rate)."""
AR4JA_EXTRA = {"1/2": 0, "2/3": 2, "4/5": 6}
"""Extra column blocks in front of the rate-1/2 part."""
C2_Z = 511
C2_FILL = 18
C2_PAD = 2

THETA = (3, 0, 1, 2, 2, 3, 0, 1, 0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 3)
"""Table 7-3: theta_k, k = 1..26 (index k-1)."""

PHI = (
    (   # j = 0; columns M = 128, 256, 512, 1024, 2048, 4096, 8192
        (1, 59, 16, 160, 108, 226, 1148),
        (22, 18, 103, 241, 126, 618, 2032),
        (0, 52, 105, 185, 238, 404, 249),
        (26, 23, 0, 251, 481, 32, 1807),
        (0, 11, 50, 209, 96, 912, 485),
        (10, 7, 29, 103, 28, 950, 1044),
        (5, 22, 115, 90, 59, 534, 717),
        (18, 25, 30, 184, 225, 63, 873),
        (3, 27, 92, 248, 323, 971, 364),
        (22, 30, 78, 12, 28, 304, 1926),
        (3, 43, 70, 111, 386, 409, 1241),
        (8, 14, 66, 66, 305, 708, 1769),
        (25, 46, 39, 173, 34, 719, 532),
        (25, 62, 84, 42, 510, 176, 768),
        (2, 44, 79, 157, 147, 743, 1138),
        (27, 12, 70, 174, 199, 759, 965),
        (7, 38, 29, 104, 347, 674, 141),
        (7, 47, 32, 144, 391, 958, 1527),
        (15, 1, 45, 43, 165, 984, 505),
        (10, 52, 113, 181, 414, 11, 1312),
        (4, 61, 86, 250, 97, 413, 1840),
        (19, 10, 1, 202, 158, 925, 709),
        (7, 55, 42, 68, 86, 687, 1427),
        (9, 7, 118, 177, 168, 752, 989),
        (26, 12, 33, 170, 506, 867, 1925),
        (17, 2, 126, 89, 489, 323, 270),
    ),
    (   # j = 1; columns M = 128, 256, 512, 1024, 2048, 4096, 8192
        (0, 0, 0, 0, 0, 0, 0),
        (27, 32, 53, 182, 375, 767, 1822),
        (30, 21, 74, 249, 436, 227, 203),
        (28, 36, 45, 65, 350, 247, 882),
        (7, 30, 47, 70, 260, 284, 1989),
        (1, 29, 0, 141, 84, 370, 957),
        (8, 44, 59, 237, 318, 482, 1705),
        (20, 29, 102, 77, 382, 273, 1083),
        (26, 39, 25, 55, 169, 886, 1072),
        (24, 14, 3, 12, 213, 634, 354),
        (4, 22, 88, 227, 67, 762, 1942),
        (12, 15, 65, 42, 313, 184, 446),
        (23, 48, 62, 52, 242, 696, 1456),
        (15, 55, 68, 243, 188, 413, 1940),
        (15, 39, 91, 179, 1, 854, 1660),
        (22, 11, 70, 250, 306, 544, 1661),
        (31, 1, 115, 247, 397, 864, 587),
        (3, 50, 31, 164, 80, 82, 708),
        (29, 40, 121, 17, 33, 1009, 1466),
        (21, 62, 45, 31, 7, 437, 433),
        (2, 27, 56, 149, 447, 36, 1345),
        (5, 38, 54, 105, 336, 562, 867),
        (11, 40, 108, 183, 424, 816, 1551),
        (26, 15, 14, 153, 134, 452, 2041),
        (9, 11, 30, 177, 152, 290, 1383),
        (17, 18, 116, 19, 492, 778, 1790),
    ),
    (   # j = 2; columns M = 128, 256, 512, 1024, 2048, 4096, 8192
        (0, 0, 0, 0, 0, 0, 0),
        (12, 46, 8, 35, 219, 254, 318),
        (30, 45, 119, 167, 16, 790, 494),
        (18, 27, 89, 214, 263, 642, 1467),
        (10, 48, 31, 84, 415, 248, 757),
        (16, 37, 122, 206, 403, 899, 1085),
        (13, 41, 1, 122, 184, 328, 1630),
        (9, 13, 69, 67, 279, 518, 64),
        (7, 9, 92, 147, 198, 477, 689),
        (15, 49, 47, 54, 307, 404, 1300),
        (16, 36, 11, 23, 432, 698, 148),
        (18, 10, 31, 93, 240, 160, 777),
        (4, 11, 19, 20, 454, 497, 1431),
        (23, 18, 66, 197, 294, 100, 659),
        (5, 54, 49, 46, 479, 518, 352),
        (3, 40, 81, 162, 289, 92, 1177),
        (29, 27, 96, 101, 373, 464, 836),
        (11, 35, 38, 76, 104, 592, 1572),
        (4, 25, 83, 78, 141, 198, 348),
        (8, 46, 42, 253, 270, 856, 1040),
        (2, 24, 58, 124, 439, 235, 779),
        (11, 33, 24, 143, 333, 134, 476),
        (11, 18, 25, 63, 399, 542, 191),
        (3, 37, 92, 41, 14, 545, 1393),
        (15, 35, 38, 214, 277, 777, 1752),
        (13, 21, 120, 70, 412, 483, 1627),
    ),
    (   # j = 3; columns M = 128, 256, 512, 1024, 2048, 4096, 8192
        (0, 0, 0, 0, 0, 0, 0),
        (13, 44, 35, 162, 312, 285, 1189),
        (19, 51, 97, 7, 503, 554, 458),
        (14, 12, 112, 31, 388, 809, 460),
        (15, 15, 64, 164, 48, 185, 1039),
        (20, 12, 93, 11, 7, 49, 1000),
        (17, 4, 99, 237, 185, 101, 1265),
        (4, 7, 94, 125, 328, 82, 1223),
        (4, 2, 103, 133, 254, 898, 874),
        (11, 30, 91, 99, 202, 627, 1292),
        (17, 53, 3, 105, 285, 154, 1491),
        (20, 23, 6, 17, 11, 65, 631),
        (8, 29, 39, 97, 168, 81, 464),
        (22, 37, 113, 91, 127, 823, 461),
        (19, 42, 92, 211, 8, 50, 844),
        (15, 48, 119, 128, 437, 413, 392),
        (5, 4, 74, 82, 475, 462, 922),
        (21, 10, 73, 115, 85, 175, 256),
        (17, 18, 116, 248, 419, 715, 1986),
        (9, 56, 31, 62, 459, 537, 19),
        (20, 9, 127, 26, 468, 722, 266),
        (18, 11, 98, 140, 209, 37, 471),
        (31, 23, 23, 121, 311, 488, 1166),
        (13, 8, 38, 12, 211, 179, 1300),
        (2, 7, 18, 41, 510, 430, 1033),
        (18, 24, 62, 249, 320, 264, 1606),
    ),
)
"""Tables 7-3 and 7-4: phi_k(j, M) as PHI[j][k-1][log2(M) - 7]."""

C2_CIRCULANTS = (
    ((0, 176), (12, 239), (0, 352), (24, 431), (0, 392), (151, 409), (0, 351), (9, 359),
     (0, 307), (53, 329), (0, 207), (18, 281), (0, 399), (202, 457), (0, 247), (36, 261)),
    ((99, 471), (130, 473), (198, 435), (260, 478), (215, 420), (282, 481), (48, 396), (193, 445),
     (273, 430), (302, 451), (96, 379), (191, 386), (244, 467), (364, 470), (51, 382), (192, 414)),
)
"""Table 7-1: the two circulant shifts of each 511 x 511 block of the C2 base code's H
(2 block rows x 16 block columns; every block has weight 2)."""


def _check_ar4ja(k, rate) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) not in AR4JA_K:
        raise ValueError(f"ccsds ar4ja: k={k!r} is not an information block size of CCSDS 131.0-B; "
                         f"use one of {', '.join(map(str, AR4JA_K))}")
    if rate not in AR4JA_RATES:
        raise ValueError(f"ccsds ar4ja: rate={rate!r} is not one of {', '.join(map(repr, AR4JA_RATES))}")
    return int(k)


def ar4ja_pi(index: int, m: int) -> np.ndarray:
    """The permutation pi_index (index = 1..26) of block size M = m: int64 [m], entry i = pi(i)."""
    i = np.arange(m)
    j = 4 * i // m
    phi = np.array([PHI[jj][index - 1][m.bit_length() - 8] for jj in range(4)])[j]
    return m // 4 * ((THETA[index - 1] + j) % 4) + (phi + i) % (m // 4)


def _ar4ja_blocks(rate: str) -> list[tuple[int, int, tuple[int, ...]]]:
    """(block row, block column, permutations) of H; permutation 0 is the identity."""
    e = AR4JA_EXTRA[rate]
    blocks = [(0, e + 2, (0,)), (0, e + 4, (0, 1)), (1, e + 0, (0,)), (1, e + 1, (0,)),
              (1, e + 3, (0,)), (1, e + 4, (2, 3, 4)), (2, e + 0, (0,)), (2, e + 1, (5, 6)),
              (2, e + 3, (7, 8)), (2, e + 4, (0,))]
    if rate != "1/2":
        f = 0 if rate == "2/3" else 4
        blocks += [(1, f, (9, 10, 11)), (1, f + 1, (0,)), (2, f, (0,)), (2, f + 1, (12, 13, 14))]
    if rate == "4/5":
        blocks += [(1, 0, (21, 22, 23)), (1, 1, (0,)), (1, 2, (15, 16, 17)), (1, 3, (0,)),
                   (2, 0, (0,)), (2, 1, (24, 25, 26)), (2, 2, (0,)), (2, 3, (18, 19, 20))]
    return blocks


def ar4ja_base(rate: str, m: int) -> np.ndarray:
    """The AR4JA H as a QC base matrix of z = M/4 circulants (convention of :mod:`.qc`).

    Row quarter j of Pi_k goes to column quarter (theta_k + j) mod 4 with circulant shift
    phi_k(j, M) (the formula above), so each M x M block is 4 x 4 blocks of size M/4, one
    shift each: within every sum of the standard the thetas differ (and differ from the
    identity's 0 where it is summed with Pi_1), so no two terms share a small block.
    """
    nb = 5 + AR4JA_EXTRA[rate]
    base = np.full((12, 4 * nb), -1, np.int64)
    for r, c, perms in _ar4ja_blocks(rate):
        for p in perms:
            for j in range(4):
                col = 4 * c + (j if p == 0 else (THETA[p - 1] + j) % 4)
                if base[4 * r + j, col] != -1:
                    raise AssertionError(f"AR4JA {rate}: two terms in block ({4 * r + j}, {col})")
                base[4 * r + j, col] = 0 if p == 0 else PHI[j][p - 1][m.bit_length() - 8]
    return base


def _perm_sum(perms, m: int) -> sp.csr_matrix:
    """Sum over GF(2) of the M x M permutation matrices (0 = identity, k = Pi_k)."""
    rows = np.tile(np.arange(m), len(perms))
    cols = np.concatenate([np.arange(m) if p == 0 else ar4ja_pi(p, m) for p in perms])
    A = sp.csr_matrix((np.ones(rows.size, np.int32), (rows, cols)), shape=(m, m))
    A.data %= 2
    A.eliminate_zeros()
    return A


def _gf2_inverse(A: np.ndarray) -> np.ndarray:
    """Inverse over GF(2) of a square 0/1 matrix (ValueError if singular)."""
    m = A.shape[0]
    R, pivots = _rref_gf2(np.hstack([A.astype(np.uint8) & 1, np.eye(m, dtype=np.uint8)]))
    if pivots[:m] != list(range(m)):
        raise ValueError("matrix is singular over GF(2)")
    return R[:m, m:]


class Ar4jaEncoder:
    """Systematic AR4JA encoder: info in mother positions 0..k-1, parity p2, p3, p4 in the
    last three column blocks (7.4.3).  With s = H[:, :k] u (block rows s0, s1, s2) and the
    rate-1/2 part's blocks A = Pi2+Pi3+Pi4 (row 1), C = Pi7+Pi8 (row 2)::

        row 0:  p2 + (I + Pi1) p4 = s0
        row 1:  p3 + A p4 = s1
        row 2:  C p3 + p4 = s2      =>  p4 = (I + C A)^-1 (s2 + C s1)

    (I + CA)^-1 is dense, computed once (seconds for M = 8192, 256 MiB as float32)."""

    def __init__(self, code: "Code", m: int, rate: str):
        e = AR4JA_EXTRA[rate]
        self.k, self.n, self.m = code.k, code.n, m
        self.info_positions = np.arange(self.k)
        self.info_positions.setflags(write=False)
        self._Hu = code.H[:, :self.k].tocsc().astype(np.float32)
        self._P1 = _perm_sum((0, 1), m).astype(np.float32)
        self._A = _perm_sum((2, 3, 4), m)
        self._C = _perm_sum((7, 8), m)
        W = (sp.identity(m, dtype=np.int32, format="csr") + self._C @ self._A).toarray() & 1
        self._Winv_t = np.ascontiguousarray(_gf2_inverse(W).T, dtype=np.float32)
        self._A, self._C = self._A.astype(np.float32), self._C.astype(np.float32)
        assert self.k == e * m + 2 * m

    def encode(self, info) -> np.ndarray:
        info = np.asarray(info, dtype=np.uint8)
        m, b = self.m, info.shape[0]
        s = (np.asarray(self._Hu @ info.T.astype(np.float32)).astype(np.int64) & 1).astype(np.float32)
        s0, s1, s2 = s[:m], s[m:2 * m], s[2 * m:]
        rhs = (s2 + self._C @ s1).astype(np.int64) & 1
        p4 = (rhs.T.astype(np.float32) @ self._Winv_t).astype(np.int64) & 1       # [b, m]
        p4t = p4.T.astype(np.float32)
        p3 = (s1 + self._A @ p4t).astype(np.int64) & 1
        p2 = (s0 + self._P1 @ p4t).astype(np.int64) & 1
        cw = np.empty((b, self.n), np.uint8)
        cw[:, :self.k] = info
        cw[:, self.k:self.k + m] = p2.T
        cw[:, self.k + m:self.k + 2 * m] = p3.T
        cw[:, self.k + 2 * m:] = p4
        return cw


class _EncodedBy(Code):
    """A Code whose encoder is given (``_make_encoder(code)``) instead of chosen by
    :func:`gpuldpc.encode.make_encoder`, with the information in positions 0..k-1 (known
    without building the encoder: AR4JA k = 16384 r1/2 takes ~10 s and ~0.6 GiB to build)."""

    @functools.cached_property
    def info_positions(self) -> np.ndarray:
        pos = np.arange(self.k)
        pos.setflags(write=False)
        return pos

    @functools.cached_property
    def encoder(self):
        return self._make_encoder(self)


@functools.lru_cache(maxsize=None)
def ar4ja_mother(k: int, rate: str) -> Code:
    """The AR4JA mother code (all 3M parity bits, nothing punctured): n = k/rate + M."""
    k = _check_ar4ja(k, rate)
    m = AR4JA_M[k, rate]
    nb = 5 + AR4JA_EXTRA[rate]
    H = sp.bmat(_block_grid(rate, m, nb), format="csr")
    H.data %= 2
    H.eliminate_zeros()
    base = ar4ja_base(rate, m)
    if (abs(qc_expand(base, m // 4).astype(np.int8) - H.astype(np.int8))).nnz:
        raise AssertionError(f"AR4JA {k} {rate}: QC form differs from the permutation H")
    code = _EncodedBy(f"ccsds-ar4ja-{k}-{rate}-mother", H.astype(np.uint8), k, base=base, z=m // 4)
    object.__setattr__(code, "_make_encoder", functools.partial(Ar4jaEncoder, m=m, rate=rate))
    return code


def _block_grid(rate: str, m: int, nb: int):
    grid = [[None] * nb for _ in range(3)]
    for r, c, perms in _ar4ja_blocks(rate):
        grid[r][c] = _perm_sum(perms, m).astype(np.int32)
    for c in range(nb):                       # bmat needs every block column's width
        if all(grid[r][c] is None for r in range(3)):
            raise AssertionError(f"empty block column {c}")
    return grid


@functools.lru_cache(maxsize=None)
def _ar4ja(k: int, rate: str) -> ShapedCode:
    mother = ar4ja_mother(k, rate)
    m = AR4JA_M[k, rate]
    return shaped(mother, punctured=range(mother.n - m, mother.n), name=f"ccsds-ar4ja-{k}-{rate}")


def ar4ja(k: int, rate: str) -> ShapedCode:
    """CCSDS AR4JA code: k in {1024, 4096, 16384}, rate in {"1/2", "2/3", "4/5"}; the last M
    columns of the mother punctured (n = k / rate transmitted bits).  Same object each call."""
    return _ar4ja(_check_ar4ja(k, rate), rate)


def c2_generator_parity() -> np.ndarray:
    """The parity part P (7154 x 1022, uint8) of the standard's systematic C2 generator G = [I | P]:
    14 x 2 circulants of 511 (``data/ccsds_c2_generator.txt``: each circulant's first row, row r
    the first rotated right by r).  Every row of G is a codeword of the base code
    (tests/codes/test_ccsds.py)."""
    text = resources.files(__package__).joinpath("data", "ccsds_c2_generator.txt").read_text("ascii")
    rows = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    z = C2_Z
    parity = np.zeros((len(rows) * z, 2 * z), np.uint8)
    shift = np.arange(z)[:, None]
    for i, pair in enumerate(rows):
        for j, digits in enumerate(pair):
            first = np.unpackbits(np.frombuffer(bytes.fromhex(digits), np.uint8))[1:]   # drop the pad bit
            parity[i * z:(i + 1) * z, j * z:(j + 1) * z] = first[(np.arange(z)[None, :] - shift) % z]
    return parity


class C2Encoder:
    """Systematic encoder of the C2 mother with the standard's generator (7.3): info in
    0..7153, parity ``info @ P`` in 7154..8175 (:func:`c2_generator_parity`), the two appended
    zeros in 8176, 8177 -- the (8176, 7154) expurgated subcode bit for bit."""

    def __init__(self, code: "Code"):
        self.k, self.n = code.k, code.n
        self.info_positions = np.arange(self.k)
        self.info_positions.setflags(write=False)
        self.parity_positions = np.arange(self.k, self.k + 2 * C2_Z)
        self._G = c2_generator_parity().astype(np.float32)          # [k, 1022]: a BLAS product

    def encode(self, info) -> np.ndarray:
        info = np.asarray(info, dtype=np.uint8)
        cw = np.zeros((info.shape[0], self.n), np.uint8)
        cw[:, :self.k] = info
        cw[:, self.parity_positions] = (info.astype(np.float32) @ self._G).astype(np.int64) & 1
        return cw


@functools.lru_cache(maxsize=None)
def c2_base() -> Code:
    """The C2 base code (8176, 7156), H 1022 x 8176 of rank 1020 (Table 7-1)."""
    z = C2_Z
    r = np.arange(z)
    rows, cols = [], []
    for i, row in enumerate(C2_CIRCULANTS):
        for j, shifts in enumerate(row):
            for s in shifts:
                rows.append(i * z + r)
                cols.append(j * z + (r + s) % z)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    H = sp.csr_matrix((np.ones(rows.size, np.uint8), (rows, cols)), shape=(2 * z, 16 * z))
    return Code("ccsds-c2-base", H, 16 * z - (2 * z - 2))


@functools.lru_cache(maxsize=None)
def c2_mother() -> Code:
    """The C2 mother: the base code followed by its two appended zero bits (n = 8178, k = 7154,
    the expurgated code's information; see the module docstring)."""
    base = c2_base()
    pad = sp.csr_matrix((np.ones(C2_PAD, np.uint8), ([0, C2_Z], [0, 1])), shape=(base.m, C2_PAD))
    H = sp.hstack([base.H, pad], format="csr")
    code = _EncodedBy("ccsds-c2-mother", H, 14 * C2_Z)
    object.__setattr__(code, "_make_encoder", C2Encoder)
    return code


@functools.lru_cache(maxsize=None)
def c2() -> ShapedCode:
    """CCSDS C2 (8160, 7136): the mother with its first 18 (fill) bits shortened."""
    return shaped(c2_mother(), shortened=range(C2_FILL), name="ccsds-c2")


REGISTRY = {
    **{f"ccsds-ar4ja-{k}-{rate}": (ar4ja, k, rate) for k in AR4JA_K for rate in AR4JA_RATES},
    "ccsds-c2": (lambda _a, _b: c2(), None, None),
}
"""Registry names -> (builder, a, b) as :mod:`.registry` keeps them."""

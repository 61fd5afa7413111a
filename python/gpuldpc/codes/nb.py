"""Non-binary (GF(q)) LDPC codes: alpha-multiplied CPM array dispersion and the code set.

Array dispersion (Zhou, Kang, Song, Lin, Abdel-Ghaffar; paper 000 section
2.1): a base matrix of exponents s (``-1`` = zero block) becomes H made of
(q-1) x (q-1) blocks ``A(alpha^s)``: row i (0..q-2) of the block has its only
nonzero at column ``c = (s + i) mod (q-1)``, with value ``alpha^c`` (the
q-ary location vector of alpha^(s+i); each row is the previous one shifted
right and multiplied by alpha).  Elements are polynomial-basis integers of
:mod:`gpuldpc.gf`.  Writing ``A(alpha^s) = P^s D`` with D = diag(alpha^c)
shows that column scaling, hence the rank, is the one of the binary array of
CPMs ``P^s``: **with every block nonzero, the rows of each block row sum to
the same vector, so rank <= mb*(q-1) - (mb-1)**.

The codes (``FACTORIES``; n, k in symbols; girth of the Tanner graph)::

  name            q   (dv,dc)  n     k     rank  girth  construction
  gf32-744-653    32  (3,24)   744   653    91    6     s(i,j) = i*j mod 31, i<3, j<24
  gf32-837-726    32  (4,27)   837   726   111    6     W = [alpha^(j-i) + 1], rows 0..3, cols 4..30
  gf64-1512-1325  64  (3,24)   1512  1325  187    6     s(i,j) = i*j mod 63, i<3, j<24
  gf32-620-310    32  (3,6)    620   310   310    4     Rice nbldpc 10x20 array (data file)
  gf16-300-150    16  (3,6)    300   150   150    4     Rice nbldpc 10x20 array, columns rotated
  gf64-1260-630   64  (3,6)    1260  630   630    6     Rice nbldpc 10x20 array (data file)
  gf4-192-96       4  (3,6)    192    96    96    6     32x64 array, searched (tools/find_nb_codes.py)
  gf8-224-112      8  (3,6)    224   112   112    8     16x32 array, searched (tools/find_nb_codes.py)
  gf<q>-384-128   q   (2,3)    384   128   256   24     QC support z=32, searched edge coefficients,
                                                          q = 32, 64, 128, 256

Systematic positions: every full-rank code above has its last n-k columns
independent, so the information sits in positions 0..k-1 (the Rice (300,150)
block columns are rotated left by 2 for that; an equivalent code).  The three
rank-deficient arrays cannot: with every block nonzero, the columns of any two
whole block columns are dependent (each block's columns, scaled by
alpha^-c, sum to the all-ones vector), and the last n-k columns always hold
at least two whole block columns.  Their encoders put the information at
``code.info_positions``: (744,653) 0..651 and 682; (837,726) 0..718,
744..749 and 775; (1512,1325) 0..1323 and 1386.
The Rice (620,310) and (300,150) matrices have 4-cycles (8 base 4-cycles with
exponent sum 0 mod q-1, 8(q-1) in H), as published.

Published codes (paper 000): (744,653) and (837,726) over GF(32) reach the
published k.  (1512,1323) over GF(64) cannot be built from pure
alpha-multiplied CPMs with (dv,dc) = (3,24): its 3x24 array has every block
nonzero, so rank <= 3*63-2 = 187 and k >= 1325 (1323 = n - m assumes full
rank); ``gf64-1512-1325`` reaches that bound with the same construction as
the 744 code.  The (620,310) code (paper 003's size) is the public Rice
University nbldpc matrix, whose (n, k, q, dv, dc) agree with paper 003 but
which is not confirmed to be the identical matrix.  The (2,3)-regular
384-symbol codes (paper 002's size: N = 384, M = 256, Poulliat et al.) cannot
be alpha-multiplied CPM arrays (q-1 does not divide 384); they are
quasi-cyclic in their support (an 8x12 array of 32x32 CPMs, Tanner girth 24)
with one GF(q) coefficient per edge, drawn at random and redrawn until no
cycle of length 24 satisfies the product condition that would make it the
support of a weight-12 codeword.  These are not in the alpha-CPM form, so
``base`` and ``z`` are None for them.  See docs/codes.md for sources.
"""
from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..gf import GF
from .code import Code, CodeError
from .qc import qc_expand

DATA_DIR = Path(__file__).parent / "nb_data"
DV2_384_Z = 32


def _exponent_matrix(base_exponents, q: int) -> np.ndarray:
    """``base_exponents`` as int64 after checking shape and range (-1 or 0..q-2)."""
    GF(q)  # raises for an unsupported q
    E = np.asarray(base_exponents)
    if E.ndim != 2 or E.size == 0:
        raise CodeError(f"base exponent matrix must be a non-empty 2-D array, got shape {E.shape}")
    if E.dtype.kind not in "iu":
        raise CodeError(f"base exponents must be integers, got dtype {E.dtype}")
    E = E.astype(np.int64)
    bad = np.argwhere((E < -1) | (E > q - 2))
    if bad.size:
        i, j = bad[0]
        raise CodeError(f"base exponent ({i}, {j}) = {E[i, j]} is not -1 or an exponent "
                        f"in 0..{q - 2} (GF({q}))")
    return E


def disperse(base_exponents, q: int) -> sp.csr_matrix:
    """Array dispersion: exponents [mb, nb] -> H [mb*(q-1), nb*(q-1)] over GF(q) (uint8 CSR).

    Block (I, J) with exponent s >= 0 is A(alpha^s):
    ``H[I*z + i, J*z + c] = alpha^c`` with ``c = (s + i) mod z``, z = q-1;
    ``-1`` is the zero block.
    """
    E = _exponent_matrix(base_exponents, q)
    z = q - 1
    bi, bj = np.nonzero(E >= 0)
    i = np.arange(z)
    c = (E[bi, bj][:, None] + i[None, :]) % z
    rows = (bi[:, None] * z + i[None, :]).ravel()
    cols = (bj[:, None] * z + c).ravel()
    H = sp.csr_matrix((GF(q).exp[c.ravel()], (rows, cols)), shape=(E.shape[0] * z, E.shape[1] * z))
    H.sort_indices()
    return H


def cpm_exponents(H, q: int) -> np.ndarray:
    """Inverse of :func:`disperse`: the exponent matrix of H.

    Raises CodeError naming the first block that is neither zero nor a pure
    alpha-multiplied CPM A(alpha^s).
    """
    z = q - 1
    H = sp.csr_matrix(H, copy=True)
    H.eliminate_zeros()
    H = H.tocoo()  # from CSR: no duplicate entries
    M, N = H.shape
    if M % z or N % z:
        raise CodeError(f"H shape {H.shape} is not a multiple of q-1 = {z}")
    F = GF(q)
    bi, i = np.divmod(H.row.astype(np.int64), z)
    bj, c = np.divmod(H.col.astype(np.int64), z)
    s = (c - i) % z
    E = np.full((M // z, N // z), -1, dtype=np.int64)
    count = np.zeros_like(E)
    np.add.at(count, (bi, bj), 1)
    E[bi, bj] = s
    consistent = (E[bi, bj] == s) & (H.data == F.exp[c])
    bad_blocks = set(zip(bi[~consistent].tolist(), bj[~consistent].tolist()))
    bad_blocks |= set(map(tuple, np.argwhere((count != 0) & (count != z)).tolist()))
    if bad_blocks:
        I, J = min(bad_blocks)
        raise CodeError(f"block ({I}, {J}) of H is not an alpha-multiplied CPM over GF({q})")
    return E


def tanner_girth(H, z: int | None = None) -> int | None:
    """Length of the shortest cycle of the Tanner graph of H (None if it has none).

    Breadth-first search from each variable node; a non-tree edge between
    nodes at depths d1, d2 closes a cycle of length <= d1 + d2 + 1, with
    equality from a node on a shortest cycle.  Only the support of H counts.
    For a quasi-cyclic support with block size ``z`` every cycle can be
    shifted to pass through the first column of some block column, so only
    those columns are searched.
    """
    H = sp.csr_matrix(H)
    M, N = H.shape
    Hc = H.tocsc()
    adj = [(Hc.indices[Hc.indptr[v]:Hc.indptr[v + 1]] + N).tolist() for v in range(N)]
    adj += [H.indices[H.indptr[c]:H.indptr[c + 1]].tolist() for c in range(M)]
    starts = range(N) if z is None else range(0, N, z)
    best = None
    for s in starts:
        dist = {s: 0}
        parent = {s: -1}
        queue = deque([s])
        while queue:
            u = queue.popleft()
            du = dist[u]
            if best is not None and 2 * du + 1 >= best:
                break
            for w in adj[u]:
                if w == parent[u]:
                    continue
                if w in dist:
                    length = du + dist[w] + 1
                    if best is None or length < best:
                        best = length
                else:
                    dist[w] = du + 1
                    parent[w] = u
                    queue.append(w)
    return best


def alpha_ij_exponents(q: int, rows: int, cols: int) -> np.ndarray:
    """Exponents ``s(i, j) = i*j mod (q-1)``: the array [alpha^(i*j)], i < rows, j < cols.

    Two block rows i != i' and columns j != j' close a 4-cycle only if
    (i - i')(j - j') = 0 mod (q-1), impossible for rows, cols small enough
    (here q-1 = 31 prime, or 63 with |i - i'| <= 2 and |j - j'| < 31).
    """
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    return (i * j) % (q - 1)


def zech_array_exponents(q: int) -> np.ndarray:
    """The (q-1) x (q-1) base W = [alpha^((j-i) mod (q-1)) + 1] as exponents (-1 on the diagonal).

    Zhou et al.'s first array (GF subtraction of 1 is addition in
    characteristic 2); W is circulant, so consecutive rows give the same code.
    """
    F = GF(q)
    z = q - 1
    d = (np.arange(z)[None, :] - np.arange(z)[:, None]) % z
    return F.log[F.exp[d] ^ 1].astype(np.int64)  # log[0] = -1 on the diagonal


def read_matrix(filename: str) -> np.ndarray:
    """An integer matrix from ``nb_data/<filename>`` (whitespace separated, ``#`` comments)."""
    return np.loadtxt(DATA_DIR / filename, dtype=np.int64, comments="#", ndmin=2)


def cpm_code(name: str, base: np.ndarray, q: int, k: int) -> Code:
    """A Code from an exponent matrix (``base``), with the dimension ``k`` known in advance."""
    return Code(name, disperse(base, q), k, q=q, base=base, z=q - 1)


def dv2_384_code(q: int) -> Code:
    """The (2,3)-regular (384, 128) code over GF(q): QC support, one coefficient per edge.

    Support: ``nb_data/dv2_384_support_z32.txt`` (8x12 circulant shifts,
    z = 32, binary convention of :func:`gpuldpc.codes.qc.qc_expand`).
    Coefficients: ``nb_data/gf<q>_384_128_coefficients.txt``, row i lists the
    exponents e of the three entries alpha^e of check i in column order.
    """
    support = qc_expand(read_matrix("dv2_384_support_z32.txt"), DV2_384_Z)
    exps = read_matrix(f"gf{q}_384_128_coefficients.txt")
    if exps.shape != (support.shape[0], 3) or exps.min() < 0 or exps.max() > q - 2:
        raise CodeError(f"nb_data/gf{q}_384_128_coefficients.txt: expected 256 rows of 3 "
                        f"exponents in 0..{q - 2}")
    H = sp.csr_matrix((GF(q).exp[exps.ravel()], support.indices, support.indptr),
                      shape=support.shape)
    return Code(f"gf{q}-384-128", H, 128, q=q)


def _rice(q: int, n: int, rotate: int = 0) -> Code:
    """A Rice nbldpc array; block columns rotated left by ``rotate`` (see the table above)."""
    k = n // 2
    base = np.roll(read_matrix(f"rice_{n}_{k}_GF{q}_base_exponents.txt"), -rotate, axis=1)
    return cpm_code(f"gf{q}-{n}-{k}", base, q, k)


def _searched(q: int, n: int, k: int) -> Code:
    """An alpha-CPM array found by tools/find_nb_codes.py."""
    return cpm_code(f"gf{q}-{n}-{k}", read_matrix(f"gf{q}_{n}_{k}_base_exponents.txt"), q, k)


FACTORIES = {
    "gf32-744-653": lambda: cpm_code("gf32-744-653", alpha_ij_exponents(32, 3, 24), 32, 653),
    "gf32-837-726": lambda: cpm_code("gf32-837-726", zech_array_exponents(32)[0:4, 4:31], 32, 726),
    "gf64-1512-1325": lambda: cpm_code("gf64-1512-1325", alpha_ij_exponents(64, 3, 24), 64, 1325),
    "gf32-620-310": lambda: _rice(32, 620),
    "gf16-300-150": lambda: _rice(16, 300, rotate=2),
    "gf64-1260-630": lambda: _rice(64, 1260),
    "gf4-192-96": lambda: _searched(4, 192, 96),
    "gf8-224-112": lambda: _searched(8, 224, 112),
    **{f"gf{q}-384-128": (lambda q=q: dv2_384_code(q)) for q in (32, 64, 128, 256)},
}
"""Code name -> zero-argument factory returning a new :class:`Code` (see the table above)."""

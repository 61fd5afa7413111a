"""Linear algebra over GF(q), q = 2^m (q = 2 included): rank, syndromes, systematic encoding.

Gaussian elimination over GF(2) works on bit-packed rows (64 columns per
uint64 word, XOR of whole rows); over GF(q) on uint8 rows with the
multiplication table of :mod:`gpuldpc.gf`.  Either way a row update only
touches the columns from the pivot on: the pivot row is zero left of its pivot
(the rows it came from were zero there).

Encoding (:class:`GFqEncoder`): H [M, N] of rank r is brought to reduced row
echelon form with pivots searched **from the last column backwards**, which
picks the last r columns whenever they are independent.  Pivot row t then
reads ``x_{P_t} + sum_{j in info} R[t, j] x_j = 0``, so the parity symbols are
``x_P = R_info u`` (characteristic 2: minus is plus).  The product runs over
GF(2) on binary images (m x m blocks of :meth:`gpuldpc.gf.GaloisField.mul_matrix`;
one float32 BLAS matrix product per batch chunk, exact since the integer sums
stay below 2^24): ``bits(x_P) = bits(u) @ G mod 2`` with
``G[(i, a), (t, b)] = mul_matrix(R[t, i])[b, a]``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .gf import GF

_SYNDROME_CHUNK = 1 << 22  # products held at once by gf_syndrome
_ENCODE_CHUNK = 1 << 23  # information bits per matrix product in GFqEncoder.encode


def _dense_elements(H, q: int, name: str) -> np.ndarray:
    """H (dense or sparse) as a fresh uint8 [M, N] array of GF(q) elements, checked."""
    GF(q)  # validates q
    A = H.toarray() if sp.issparse(H) else np.array(H)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {A.shape}")
    if A.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer GF({q}) elements, got dtype {A.dtype}")
    if A.size and (A.min() < 0 or A.max() >= q):
        raise ValueError(f"{name} has entries outside GF({q}) (0..{q - 1})")
    return A.astype(np.uint8)


def _rref_gf2(A: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Reduced row echelon form over GF(2) of a 0/1 uint8 matrix (bit-packed elimination)."""
    M, N = A.shape
    words = -(-N // 64)
    padded = np.zeros((M, words * 64), dtype=np.uint8)
    padded[:, :N] = A
    P = np.packbits(padded, axis=1, bitorder="little").view("<u8").copy()  # [M, words]
    pivots: list[int] = []
    r = 0
    for col in range(N):
        if r == M:
            break
        w, bit = col >> 6, np.uint64(col & 63)
        colbits = (P[:, w] >> bit) & np.uint64(1)
        below = np.flatnonzero(colbits[r:])
        if below.size == 0:
            continue
        p = r + below[0]
        if p != r:
            P[[r, p]] = P[[p, r]]
            colbits[[r, p]] = colbits[[p, r]]
        colbits[r] = 0
        rows = np.flatnonzero(colbits)
        if rows.size:
            P[rows, w:] ^= P[r, w:]
        pivots.append(col)
        r += 1
    bits = np.unpackbits(P[:r].astype("<u8").view(np.uint8), axis=1, bitorder="little")
    return bits[:, :N].copy(), pivots


def _rref_gfq(A: np.ndarray, q: int) -> tuple[np.ndarray, list[int]]:
    """Reduced row echelon form over GF(q), q > 2 (uint8 rows, table arithmetic)."""
    F = GF(q)
    mul = F.mul.ravel()
    A = A.copy()
    M, N = A.shape
    pivots: list[int] = []
    r = 0
    for col in range(N):
        if r == M:
            break
        below = np.flatnonzero(A[r:, col])
        if below.size == 0:
            continue
        p = r + below[0]
        if p != r:
            A[[r, p]] = A[[p, r]]
        piv = int(A[r, col])
        if piv != 1:
            A[r, col:] = mul[int(F.inv[piv]) * q + A[r, col:].astype(np.intp)]
        rows = np.flatnonzero(A[:, col])
        rows = rows[rows != r]
        if rows.size:
            f = A[rows, col].astype(np.intp)[:, None] * q
            A[rows, col:] ^= mul[f + A[r, col:].astype(np.intp)[None, :]]
        pivots.append(col)
        r += 1
    return A[:r], pivots


def gf_rref(H, q: int, column_order=None) -> tuple[np.ndarray, np.ndarray]:
    """Reduced row echelon form of H over GF(q).

    Parameters
    ----------
    H : array-like or scipy.sparse, [M, N], entries 0..q-1
    q : int
        Field size (2 for binary matrices).
    column_order : sequence of int, optional
        Order in which columns are tried as pivots (a permutation of 0..N-1);
        default left to right.

    Returns
    -------
    R : uint8 [r, N]
        The r = rank nonzero rows, in the original column order; row t has a 1
        at ``pivots[t]`` and 0 in every other pivot column.
    pivots : int64 [r]
        Pivot columns (original indices), in the order they were found.
    """
    A = _dense_elements(H, q, "H")
    N = A.shape[1]
    order = np.arange(N) if column_order is None else np.asarray(column_order, dtype=np.int64)
    if order.shape != (N,) or not np.array_equal(np.sort(order), np.arange(N)):
        raise ValueError(f"column_order must be a permutation of 0..{N - 1}")
    Ap = A[:, order]
    R, piv = _rref_gf2(Ap) if q == 2 else _rref_gfq(Ap, q)
    out = np.empty_like(R)
    out[:, order] = R
    return out, order[np.asarray(piv, dtype=np.int64)]


def gf_rank(H, q: int) -> int:
    """Rank of H over GF(q) (q = 2 for binary matrices), by Gaussian elimination."""
    return len(gf_rref(H, q)[1])


def gf_syndrome(H, words, q: int) -> np.ndarray:
    """Syndromes ``s = H x^T`` over GF(q) of a batch of words.

    Parameters
    ----------
    H : scipy.sparse matrix [M, N], entries 1..q-1 (or 1 for q = 2)
    words : integer array [batch, N], entries 0..q-1
    q : int

    Returns
    -------
    uint8 [batch, M]: ``s[b, i] = XOR_j mul(H[i, j], words[b, j])`` (zero for codewords).
    """
    H = sp.csr_matrix(H)
    words = np.asarray(words)
    if words.ndim != 2 or words.shape[1] != H.shape[1]:
        raise ValueError(f"words must have shape [batch, {H.shape[1]}], got {words.shape}")
    if words.dtype.kind not in "iub":
        raise TypeError(f"words must hold integer GF({q}) elements, got dtype {words.dtype}")
    if words.size and (words.min() < 0 or words.max() >= q):
        raise ValueError(f"words has entries outside GF({q}) (0..{q - 1})")
    if H.nnz and (H.data.min() < 0 or H.data.max() >= q):
        raise ValueError(f"H has entries outside GF({q}) (0..{q - 1})")
    B, M = words.shape[0], H.shape[0]
    out = np.zeros((B, M), dtype=np.uint8)
    if H.nnz == 0 or B == 0:
        return out
    if q == 2:
        return ((H.astype(np.int32) @ words.T.astype(np.int32)).T & 1).astype(np.uint8)
    mul = GF(q).mul.ravel()
    coef = H.data.astype(np.intp)[None, :] * q
    rows = np.diff(H.indptr) > 0
    starts = H.indptr[:-1][rows]
    step = max(1, _SYNDROME_CHUNK // H.nnz)
    for b0 in range(0, B, step):
        prod = mul[coef + words[b0:b0 + step, H.indices].astype(np.intp)]
        out[b0:b0 + step, rows] = np.bitwise_xor.reduceat(prod, starts, axis=1)
    return out


class GFqEncoder:
    """Systematic encoder of any code over GF(q), q = 2, 4, ..., 256.

    Built once per code from Gaussian elimination of H (see the module
    docstring).  ``info_positions`` (sorted) receive the information symbols
    and ``parity_positions`` (pivot order, row t of ``parity_matrix`` [r, k]
    gives symbol ``parity_positions[t]``) the parity; when the last n-k columns of H are
    independent these are ``0..k-1`` and ``k..n-1``, the systematic layout of
    :meth:`gpuldpc.codes.code.Code.encode`; otherwise the info sits in the
    complement of the pivot columns found from the right (for example the
    rank-deficient codes of :mod:`gpuldpc.codes.nb`, where it cannot be
    ``0..k-1``).

    Parameters
    ----------
    code : gpuldpc.codes.code.Code
        Uses ``code.H``, ``code.q``, ``code.k`` and ``code.name``; raises
        ValueError if ``code.k`` is not ``n - rank(H)``.
    """

    def __init__(self, code):
        H, q = code.H, int(code.q)
        n = H.shape[1]
        R, pivots = gf_rref(H, q, column_order=np.arange(n)[::-1])
        r = len(pivots)
        if code.k != n - r:
            raise ValueError(
                f"code {code.name!r}: k={code.k} but H has GF({q}) rank {r}, so k must be {n - r}"
            )
        F = GF(q)
        self.q, self.n, self.k = q, n, n - r
        is_parity = np.zeros(n, dtype=bool)
        is_parity[pivots] = True
        self.parity_positions = np.asarray(pivots, dtype=np.int64)
        self.info_positions = np.flatnonzero(~is_parity)
        self.parity_matrix = R[:, self.info_positions]  # [r, k]: x_P = parity_matrix @ u
        for a in (self.parity_positions, self.info_positions, self.parity_matrix):
            a.setflags(write=False)
        m = F.m
        blocks = F.bit_matrices[self.parity_matrix]  # [t, i, b, a]
        self._G = np.ascontiguousarray(
            blocks.transpose(1, 3, 0, 2).reshape(self.k * m, r * m), dtype=np.float32
        )

    def encode(self, info) -> np.ndarray:
        """``info`` uint8 [batch, k] -> codewords uint8 [batch, n] (info at ``info_positions``)."""
        info = np.asarray(info)
        if info.ndim != 2 or info.shape[1] != self.k:
            raise ValueError(f"info must have shape [batch, {self.k}], got {info.shape}")
        if info.dtype.kind not in "iub" or (info.size and (info.min() < 0 or info.max() >= self.q)):
            raise ValueError(f"info must hold integer GF({self.q}) elements 0..{self.q - 1}")
        F = GF(self.q)
        B = info.shape[0]
        cw = np.empty((B, self.n), dtype=np.uint8)
        cw[:, self.info_positions] = info
        step = max(1, _ENCODE_CHUNK // max(1, self._G.shape[0]))
        for b0 in range(0, B, step):
            ubits = F.to_bits(info[b0:b0 + step]).reshape(-1, self._G.shape[0]).astype(np.float32)
            pbits = (ubits @ self._G).astype(np.int64) & 1  # exact: integer sums < 2^24
            parity = F.from_bits(pbits.reshape(len(ubits), -1, F.m))
            cw[b0:b0 + step, self.parity_positions] = parity
        return cw

"""The code description every backend reads.

A :class:`Code` is a small immutable object: the parity-check matrix ``H``
(``scipy.sparse`` CSR; entries 1 for binary codes, GF(q) element integers in
polynomial basis for non-binary ones, see :mod:`gpuldpc.gf`), the length ``n``,
the dimension ``k = n - rank(H)`` and, for quasi-cyclic codes, the base matrix
and expansion factor ``z``.

Encoding is systematic: ``code.encode(info[batch, k]) -> [batch, n]`` puts the
information in positions ``0..k-1`` (every standard code, and any code whose
last n-k columns of H are independent; otherwise at ``code.info_positions``).
Standard codes (WiFi, WiMAX) encode in linear time through the dual-diagonal
parity part; every other code through a generator obtained once by Gaussian
elimination and cached on the object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

import numpy as np
import scipy.sparse as sp

from ..errors import CodeError


@dataclass(frozen=True, eq=False)
class Code:
    """An LDPC code: parity-check matrix plus optional QC structure.

    Parameters
    ----------
    name : str
        Registry name (``wifi-1944-1/2``, ``wimax-2304-2/3A``, ``gf32-744-653``)
        or a file name for codes read from disk.
    H : scipy.sparse.csr_matrix, shape [m, n]
        Parity-check matrix.  Binary: entries 1.  GF(q): entries 1..q-1.
    q : int
        Field size (2 for binary codes).
    k : int
        Dimension (number of information symbols), ``n - rank(H)``.
    base : numpy.ndarray or None, shape [mb, nb]
        QC base matrix.  Binary: circulant shifts (``-1`` = zero block, ``s`` =
        identity shifted right by ``s``: row r has its 1 in column (r+s) mod z).
        GF(q): exponents of alpha-multiplied CPMs (block size ``z = q-1``).
    z : int or None
        Expansion factor (block size).
    standard : str or None
        ``"wifi"`` or ``"wimax"`` for the standards' codes (enables the
        linear-time dual-diagonal encoder), else None.
    """

    name: str
    H: sp.csr_matrix = field(repr=False)
    k: int
    q: int = 2
    base: Optional[np.ndarray] = field(default=None, repr=False)
    z: Optional[int] = None
    standard: Optional[str] = None

    def __post_init__(self):
        H = sp.csr_matrix(self.H, copy=True)
        H.sort_indices()
        H.eliminate_zeros()
        for arr in (H.data, H.indices, H.indptr):
            arr.setflags(write=False)
        object.__setattr__(self, "H", H)
        if self.base is not None:
            base = np.array(self.base, dtype=np.int32)
            base.setflags(write=False)
            object.__setattr__(self, "base", base)
        if not 0 < self.k < self.n:
            raise CodeError(f"code {self.name!r}: k={self.k} outside 1..n-1 (n={self.n})")

    @property
    def n(self) -> int:
        """Code length (symbols)."""
        return self.H.shape[1]

    @property
    def m(self) -> int:
        """Number of parity checks (rows of H, possibly redundant)."""
        return self.H.shape[0]

    @property
    def rate(self) -> float:
        return self.k / self.n

    @property
    def is_binary(self) -> bool:
        return self.q == 2

    @property
    def bits_per_symbol(self) -> int:
        """m = log2(q): 1 for binary codes."""
        return int(self.q).bit_length() - 1

    @property
    def edges(self) -> int:
        """Number of nonzero entries of H (Tanner-graph edges)."""
        return int(self.H.nnz)

    @property
    def info_positions(self) -> np.ndarray:
        """Sorted codeword positions of the k information symbols (``0..k-1`` when possible)."""
        return self.encoder.info_positions

    @cached_property
    def encoder(self):
        """The encoder object, built once (see :mod:`gpuldpc.encode`)."""
        from ..encode import make_encoder

        return make_encoder(self)

    def encode(self, info) -> np.ndarray:
        """Systematic encoding: ``info[batch, k] -> codeword[batch, n]`` (uint8).

        A 1-D ``info`` of length k gives a 1-D codeword.  Entries are bits
        (binary) or GF(q) element integers.
        """
        info = np.asarray(info)
        one = info.ndim == 1
        info2 = np.atleast_2d(info)
        if info2.ndim != 2 or info2.shape[1] != self.k:
            raise ValueError(
                f"code {self.name!r}: info must have shape [batch, {self.k}], got {info.shape}"
            )
        if info2.size and (info2.min() < 0 or info2.max() >= self.q):
            raise ValueError(f"code {self.name!r}: info entries must lie in 0..{self.q - 1}")
        cw = self.encoder.encode(info2.astype(np.uint8, copy=False))
        return cw[0] if one else cw

    def syndrome(self, words) -> np.ndarray:
        """``H @ words^T`` over GF(q): [batch, n] -> [batch, m] (zero for codewords)."""
        from ..encode import syndrome

        return syndrome(self, words)

    def is_codeword(self, words) -> np.ndarray:
        """Per-frame boolean: zero syndrome."""
        s = self.syndrome(np.atleast_2d(words))
        return ~s.any(axis=1)

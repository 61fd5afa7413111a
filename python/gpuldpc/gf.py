"""Arithmetic in GF(2^m), m = 1..8, by lookup tables.

Representation (used by every part of gpuldpc: code files, encoders, channel
helpers, decoders, kernels): an element is its **polynomial-basis integer**
``a = sum_j a_j 2^j``, meaning ``a_0 + a_1 x + ... + a_{m-1} x^{m-1}`` modulo
the field's primitive polynomial ``p(x)``.  The primitive element is
``alpha = x`` (integer 2), so ``alpha^5 = 0b00101 = 5`` in GF(32).  Addition is
bitwise XOR; multiplication goes through ``exp``/``log`` tables.

Primitive polynomials (bit j = coefficient of x^j)::

    q    m   p(x)                        integer
    2    1   x + 1                       0x3     (alpha = 1, the only unit)
    4    2   x^2 + x + 1                 0x7
    8    3   x^3 + x + 1                 0xB
    16   4   x^4 + x + 1                 0x13
    32   5   x^5 + x^2 + 1               0x25
    64   6   x^6 + x + 1                 0x43
    128  7   x^7 + x^3 + 1               0x89
    256  8   x^8 + x^4 + x^3 + x^2 + 1   0x11D

GF(16), GF(32), GF(64) and GF(256) match /work/shared/reference/codes/nb
(the Rice nbldpc code, Lab-STICC NB_LDPC_FB); GF(4), GF(8) and GF(128) use the
conventional minimal-weight primitive polynomials (x^3+x+1 is also paper 002's
GF(8) example).  GF(2) is included so that the linear algebra of
:mod:`gpuldpc.gflinalg` treats binary codes as q = 2; there alpha = 1.

Binary image (bit order, fixed for the whole package): ``to_bits(a)[..., j]``
is bit j of the element integer, the coefficient of alpha^j -- **LSB first**.
Multiplication by a constant c is the GF(2)-linear map with matrix
``mul_matrix(c)`` ([m, m], column j = ``to_bits(c * alpha^j)``), so
``to_bits(c*a) = mul_matrix(c) @ to_bits(a) mod 2``; :func:`binary_image`
replaces every entry of a GF(q) parity-check matrix by that m x m block.

Usage::

    F = GF(32)                 # cached: GF(32) is GF(32)
    F.mul[a, b]                # table lookup, broadcasts like any NumPy indexing
    F.multiply(a, b), F.divide(a, b), F.inverse(a), F.power(a, e)
    F.exp[e], F.log[a]
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.sparse as sp

PRIMITIVE_POLYNOMIALS = {
    2: 0x3,
    4: 0x7,
    8: 0xB,
    16: 0x13,
    32: 0x25,
    64: 0x43,
    128: 0x89,
    256: 0x11D,
}
"""Primitive polynomial per field size q (bit j = coefficient of x^j)."""

LOG_OF_ZERO = -1
"""``log[0]``: sentinel, since 0 has no logarithm (every other log is 0..q-2)."""


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class GaloisField:
    """GF(q), q = 2^m, m = 1..8: lookup tables and vectorized operations.

    Build through :func:`GF` (cached per q).  All tables are read-only NumPy
    arrays indexed by element integers; fancy indexing them is the vectorized
    operation (``F.mul[a, b]`` for arrays ``a``, ``b`` of any broadcastable
    shapes).

    Attributes
    ----------
    q, m : int
        Field size and degree (q = 2^m).
    poly : int
        Primitive polynomial (see :data:`PRIMITIVE_POLYNOMIALS`).
    exp : uint8 [2(q-1)]
        ``exp[i] = alpha^(i mod (q-1))``; doubled so that
        ``exp[log[a] + log[b]]`` needs no reduction.
    log : int16 [q]
        ``log[a]`` = e with ``alpha^e = a`` for a != 0, e in 0..q-2;
        ``log[0] = LOG_OF_ZERO = -1``.
    add : uint8 [q, q]
        ``a XOR b`` (addition = subtraction in characteristic 2).
    mul : uint8 [q, q]
        Product table; row and column 0 are 0.
    div : uint8 [q, q]
        ``div[a, b] = a / b`` for b != 0.  Column 0 holds 0 as a placeholder
        (division by zero is undefined); :meth:`divide` raises instead.
    inv : uint8 [q]
        ``inv[a] = 1/a``; ``inv[0] = 0`` placeholder, :meth:`inverse` raises.
    bit_matrices : uint8 [q, m, m]
        ``bit_matrices[c] = mul_matrix(c)``.
    """

    def __init__(self, q: int):
        if q not in PRIMITIVE_POLYNOMIALS:
            raise ValueError(
                f"GF(q): q={q!r} is not supported; use one of {sorted(PRIMITIVE_POLYNOMIALS)}"
            )
        self.q = q
        self.m = q.bit_length() - 1
        self.poly = PRIMITIVE_POLYNOMIALS[q]
        order = q - 1

        powers = np.empty(order, dtype=np.int64)
        x = 1
        for i in range(order):
            powers[i] = x
            x <<= 1
            if x & q:
                x ^= self.poly
        if x != 1 or len(set(powers.tolist())) != order:
            raise AssertionError(f"GF({q}): polynomial {self.poly:#x} is not primitive")

        self.exp = _frozen(np.concatenate([powers, powers]).astype(np.uint8))
        log = np.full(q, LOG_OF_ZERO, dtype=np.int16)
        log[powers] = np.arange(order, dtype=np.int16)
        self.log = _frozen(log)

        elems = np.arange(q)
        self.add = _frozen((elems[:, None] ^ elems[None, :]).astype(np.uint8))

        la = log.astype(np.int64)
        mul = self.exp[(la[:, None] + la[None, :]) % order].copy()
        mul[0, :] = 0
        mul[:, 0] = 0
        self.mul = _frozen(mul)

        inv = np.zeros(q, dtype=np.uint8)
        inv[1:] = self.exp[(-la[1:]) % order]
        self.inv = _frozen(inv)
        self.div = _frozen(mul[:, inv].copy())  # a / b = a * inv[b]; column 0 -> mul[:, 0] = 0

        cols = self.mul[:, self.exp[: self.m]]  # [q, m]: c * alpha^j
        self.bit_matrices = _frozen(self.to_bits(cols).transpose(0, 2, 1).copy())

    def __repr__(self) -> str:
        return f"GF({self.q})"

    # ---- element checks --------------------------------------------------
    def _elements(self, a, name: str) -> np.ndarray:
        a = np.asarray(a)
        if a.dtype.kind not in "iu":
            raise TypeError(f"{self!r}: {name} must be integer element(s), got dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() >= self.q):
            raise ValueError(f"{self!r}: {name} has entries outside 0..{self.q - 1}")
        return a

    # ---- vectorized operations ------------------------------------------
    def multiply(self, a, b) -> np.ndarray:
        """Elementwise ``a * b`` (broadcasting), uint8."""
        return self.mul[self._elements(a, "a"), self._elements(b, "b")]

    def divide(self, a, b) -> np.ndarray:
        """Elementwise ``a / b``; raises ZeroDivisionError if any b is 0."""
        a, b = self._elements(a, "a"), self._elements(b, "b")
        if np.any(b == 0):
            raise ZeroDivisionError(f"{self!r}: division by the zero element")
        return self.div[a, b]

    def inverse(self, a) -> np.ndarray:
        """Elementwise ``1 / a``; raises ZeroDivisionError if any a is 0."""
        a = self._elements(a, "a")
        if np.any(a == 0):
            raise ZeroDivisionError(f"{self!r}: the zero element has no inverse")
        return self.inv[a]

    def power(self, a, e) -> np.ndarray:
        """Elementwise ``a ** e`` for integer e (negative e needs a != 0).

        ``a^0 = 1`` for every a (including 0), ``0^e = 0`` for e > 0, else
        ``alpha^(log(a) * e mod (q-1))``.
        """
        a = self._elements(a, "a")
        e = np.asarray(e)
        if e.dtype.kind not in "iu":
            raise TypeError(f"{self!r}: exponent must be integer, got dtype {e.dtype}")
        if np.any((a == 0) & (e < 0)):
            raise ZeroDivisionError(f"{self!r}: the zero element has no negative power")
        la = self.log[a].astype(np.int64)
        out = self.exp[(la * (e.astype(np.int64) % (self.q - 1))) % (self.q - 1)]
        out = np.where(a == 0, 0, out)
        return np.where(e == 0, 1, out).astype(np.uint8)

    def alpha_power(self, e) -> np.ndarray:
        """``alpha^e`` for integer exponent(s) e (any sign), uint8."""
        return self.exp[np.asarray(e, dtype=np.int64) % (self.q - 1)]

    # ---- binary image ----------------------------------------------------
    def to_bits(self, a) -> np.ndarray:
        """Elements ``[...]`` -> bits ``[..., m]`` uint8, LSB first (bit j = coeff. of alpha^j)."""
        a = np.asarray(a)
        return ((a[..., None] >> np.arange(self.m)) & 1).astype(np.uint8)

    def from_bits(self, bits) -> np.ndarray:
        """Bits ``[..., m]`` (LSB first) -> elements ``[...]`` uint8."""
        bits = np.asarray(bits)
        if bits.shape[-1:] != (self.m,):
            raise ValueError(
                f"{self!r}: bits must have last dimension m={self.m}, got shape {bits.shape}"
            )
        return (bits.astype(np.int64) << np.arange(self.m)).sum(axis=-1).astype(np.uint8)

    def mul_matrix(self, c: int) -> np.ndarray:
        """The m x m binary matrix M_c with ``to_bits(c*a) = M_c @ to_bits(a) mod 2``."""
        c = int(self._elements(c, "c"))
        return self.bit_matrices[c]


@lru_cache(maxsize=None)
def GF(q: int) -> GaloisField:
    """The (cached) field GF(q) for q in 2, 4, ..., 256."""
    return GaloisField(int(q))


def binary_image(H, q: int) -> sp.csr_matrix:
    """Binary image of a GF(q) parity-check matrix: [M, N] -> [M*m, N*m] over GF(2).

    Entry ``h`` at (i, j) becomes the block ``mul_matrix(h)`` at rows
    ``i*m .. i*m+m-1`` and columns ``j*m .. j*m+m-1``, so a word x is a codeword
    of H over GF(q) iff its bit vector (symbol j -> bits ``j*m + t``, t LSB
    first) is a codeword of the image.
    """
    F = GF(q)
    H = sp.coo_matrix(H)
    m = F.m
    blocks = F.bit_matrices[H.data.astype(np.int64)]  # [nnz, m, m]
    r = H.row.astype(np.int64)[:, None, None] * m + np.arange(m)[None, :, None]
    c = H.col.astype(np.int64)[:, None, None] * m + np.arange(m)[None, None, :]
    r, c = np.broadcast_arrays(r, c)
    nz = blocks != 0
    out = sp.csr_matrix(
        (blocks[nz].astype(np.uint8), (r[nz], c[nz])), shape=(H.shape[0] * m, H.shape[1] * m)
    )
    out.sort_indices()
    return out

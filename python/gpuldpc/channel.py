"""BPSK over AWGN, LLRs and error counting (the simulation channel).

Conventions
-----------
* BPSK maps bit 0 to +1 and bit 1 to -1 (``x = 1 - 2b``), one real sample per
  coded bit, unit symbol energy (Es = 1).
* Eb/N0 is per information bit: ``Es = R * Eb`` with the code rate
  ``R = k / n`` (for GF(2^m) codes the rate of the binary image is the same,
  ``k m / (n m)``).  With real noise of variance ``sigma^2 = N0 / 2``::

      sigma^2 = 1 / (2 R Eb/N0)          (Eb/N0 as a linear ratio)

  which is AFF3CT's ``--sim-noise-type EBN0`` with BPSK, so FER curves can be
  compared point for point.
* Received ``y = x + sigma w``, ``w ~ N(0, 1)``; the bit LLR is
  ``L = ln P(b=0|y) / P(b=1|y) = 2 y / sigma^2`` (positive means bit 0), mean
  ``2/sigma^2`` and variance ``4/sigma^2`` for a transmitted 0.
* float32 throughout: ``w`` is drawn as float32 standard normals from the
  caller's ``numpy.random.Generator`` (argument ``rng``; no global random
  state), then ``y = x + s w`` and ``L = g y`` in float32 with ``s = sigma`` and
  ``g = 2/sigma^2`` rounded to float32.  The same seed gives the same LLRs.

GF(q) codes (q = 2^m) send the binary image of each symbol: symbol ``x_n`` of
the codeword becomes bits ``n*m + j`` (j = 0..m-1) given by
``gf.GF(q).to_bits`` (bit j = coefficient of alpha^j of the polynomial-basis
element integer, LSB first; see :mod:`gpuldpc.gf`).  Symbol LLRs follow the Min-Max papers
(000, 003) ::

      L_n(a) = ln P(x_n = s_n) / P(x_n = a) >= 0,   s_n the most likely symbol,

which for independent bits is ``L_n(a) = sum_{j: a_j != s_j} |l_{n,j}|`` with
``l_{n,j}`` the bit LLRs; ``s_n`` is the bitwise hard decision of the bit LLRs
(bit 1 iff ``l < 0``).  :func:`bit_llr_to_symbol_llr` evaluates that sum in
float32, adding the bits in increasing j, so ``L_n(s_n)`` is exactly 0.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import gf

__all__ = [
    "sigma_from_ebn0", "bpsk", "awgn_llr", "transmit", "hard_decision",
    "bit_llr_to_symbol_llr", "symbol_llr_to_probability", "ErrorCounts", "count_errors",
]


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")
    return rng


def _check_field(q):
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or q < 2 or q & (q - 1):
        raise ValueError(f"q must be a power of two >= 2 (field size), got {q!r}")
    return int(q).bit_length() - 1


def sigma_from_ebn0(ebn0_db, rate) -> float:
    """Noise standard deviation of BPSK/AWGN: ``sigma = sqrt(1 / (2 R 10^(EbN0_dB/10)))``."""
    ebn0_db = float(ebn0_db)
    rate = float(rate)
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"rate must lie in (0, 1], got {rate!r}")
    if not np.isfinite(ebn0_db):
        raise ValueError(f"ebn0_db must be a finite number of dB, got {ebn0_db!r}")
    return float(np.sqrt(1.0 / (2.0 * rate * 10.0 ** (ebn0_db / 10.0))))


def bpsk(bits) -> np.ndarray:
    """BPSK symbols ``1 - 2b`` (bit 0 -> +1.0, bit 1 -> -1.0) as float32."""
    bits = np.asarray(bits)
    if bits.size and (bits.min() < 0 or bits.max() > 1):
        raise ValueError("bpsk: bits must be 0 or 1")
    return (1.0 - 2.0 * bits.astype(np.float32)).astype(np.float32)


def awgn_llr(bits, sigma, rng: np.random.Generator) -> np.ndarray:
    """Send ``bits`` (any shape, 0/1) by BPSK over AWGN; return float32 LLRs ``2y/sigma^2``."""
    _check_rng(rng)
    sigma = float(sigma)
    if not sigma > 0.0 or not np.isfinite(sigma):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    x = bpsk(bits)
    w = rng.standard_normal(x.shape, dtype=np.float32)
    y = x + np.float32(sigma) * w
    return np.float32(2.0 / sigma ** 2) * y


def transmit(code, codewords, ebn0_db, rng: np.random.Generator) -> np.ndarray:
    """Codewords through BPSK/AWGN at ``ebn0_db`` (rate ``code.k/code.n``) -> decoder input.

    Parameters
    ----------
    code : gpuldpc.codes.Code
    codewords : int array [batch, n]
        Bits (binary code) or GF(q) element integers.
    ebn0_db : float
    rng : numpy.random.Generator

    Returns
    -------
    float32 [batch, n] bit LLRs (binary codes) or [batch, n, q] symbol LLRs in
    the Min-Max convention (GF(q) codes), ready for ``Decoder.decode``.
    """
    codewords = np.asarray(codewords)
    if codewords.ndim != 2 or codewords.shape[1] != code.n:
        raise ValueError(f"code {code.name!r}: codewords must have shape [batch, {code.n}], "
                         f"got {codewords.shape}")
    if codewords.size and (codewords.min() < 0 or codewords.max() >= code.q):
        raise ValueError(f"code {code.name!r}: codeword entries must lie in 0..{code.q - 1}")
    sigma = sigma_from_ebn0(ebn0_db, code.k / code.n)
    if code.is_binary:
        return awgn_llr(codewords, sigma, rng)
    bits = gf.GF(code.q).to_bits(codewords).reshape(codewords.shape[0], -1)
    return bit_llr_to_symbol_llr(awgn_llr(bits, sigma, rng), code.q)


def hard_decision(llr) -> np.ndarray:
    """Bitwise hard decision of bit LLRs: 1 iff ``L < 0`` (uint8, same shape)."""
    return (np.asarray(llr) < 0).astype(np.uint8)


def bit_llr_to_symbol_llr(bit_llr, q) -> np.ndarray:
    """Bit LLRs of the binary image [batch, n*m] -> symbol LLRs [batch, n, q] (float32).

    ``L_n(a) = sum_{j=0..m-1, a_j != s_j} |l_{n,j}|`` (see the module docstring),
    accumulated in float32 in increasing j; ``min_a L_n(a) = 0`` is reached at
    ``a = s_n``, the symbol whose bits are the hard decisions of ``l_{n,.}`` (the
    smallest such element integer when some ``l = 0``).  Element ``a``'s bit j
    is ``gf.GF(q).to_bits(a)[j]``.
    """
    m = _check_field(q)
    bit_llr = np.asarray(bit_llr)
    if bit_llr.ndim != 2 or bit_llr.shape[1] % m:
        raise ValueError(f"bit_llr must have shape [batch, n*{m}] for q={q}, got {bit_llr.shape}")
    lam = bit_llr.astype(np.float32, copy=False).reshape(bit_llr.shape[0], -1, m)
    hard = lam < 0                                              # [b, n, m]: s_n's bits
    abs_lam = np.abs(lam)
    element_bits = gf.GF(q).to_bits(np.arange(q)).astype(bool)  # [a, j]
    out = np.zeros(lam.shape[:2] + (q,), dtype=np.float32)
    for j in range(m):
        differs = hard[:, :, j, None] != element_bits[None, None, :, j]     # [b, n, a]
        out += np.where(differs, abs_lam[:, :, j, None], np.float32(0))
    return out


def symbol_llr_to_probability(symbol_llr) -> np.ndarray:
    """Min-Max symbol LLRs [..., q] -> probabilities ``P(a) = e^{-L(a)} / sum_b e^{-L(b)}`` (float32).

    The probability-domain input of FFT-SPA decoders (paper 002).  Computed in
    float64 and rounded once; every row sums to 1 within float32 rounding.
    """
    llr = np.asarray(symbol_llr, dtype=np.float64)
    p = np.exp(-(llr - llr.min(axis=-1, keepdims=True)))
    return (p / p.sum(axis=-1, keepdims=True)).astype(np.float32)


class ErrorCounts(NamedTuple):
    """Errors of a batch: ``bit_errors`` per frame (int64 [batch]), totals and rates."""

    bit_errors: np.ndarray
    bits: int
    frames: int

    @property
    def frame_errors(self) -> int:
        return int(np.count_nonzero(self.bit_errors))

    @property
    def ber(self) -> float:
        return float(self.bit_errors.sum()) / self.bits if self.bits else 0.0

    @property
    def fer(self) -> float:
        return self.frame_errors / self.frames if self.frames else 0.0


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def count_errors(decoded, sent, q: int = 2) -> ErrorCounts:
    """Compare decoded and sent words [batch, length] (bits, or GF(q) symbols).

    For GF(q) the bit errors are counted on the binary images (popcount of
    ``decoded XOR sent``), so the BER is per transmitted bit.  A frame is in
    error when any position differs.  Pass ``bits[:, :k]`` and ``info`` to count
    information errors only (as AFF3CT does).
    """
    m = _check_field(q)
    decoded = np.asarray(decoded)
    sent = np.asarray(sent)
    if decoded.shape != sent.shape or decoded.ndim != 2:
        raise ValueError(f"count_errors: decoded {decoded.shape} and sent {sent.shape} must be "
                         "equal 2-D shapes [batch, length]")
    # elements of GF(q <= 256) fit a byte: XOR, then one popcount-table look-up per element
    diff = np.bitwise_xor(decoded.astype(np.uint8, copy=False), sent.astype(np.uint8, copy=False))
    if m == 1:
        per_frame = np.count_nonzero(diff, axis=1).astype(np.int64)
    else:
        per_frame = _POPCOUNT[diff].sum(axis=1, dtype=np.int64)
    return ErrorCounts(per_frame, int(decoded.size) * m, int(decoded.shape[0]))

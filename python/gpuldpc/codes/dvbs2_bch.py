"""DVB-S2 BCH outer code (EN 302 307-1 5.3.1): systematic encoder and decoder.

``bch_encode(frame, rate, bits[batch, k_bch]) -> [batch, n_bch]`` (n_bch = the LDPC code's
k): the information, then the 16 t (normal frames) or 14 t (short frames) parity bits, the
remainder of m(x) x^(n_bch - k_bch) divided by g(x), highest power first, m(x)'s highest
power being the first information bit -- the order of gr-dtv's ``dvb_bch_bb``, which
tests/codes/test_dvbs2.py checks bit for bit.  g(x) is the product of g_1 .. g_t of
Tables 6a (normal, GF(2^16)) and 6b (short, GF(2^14)); t = 12, except normal 2/3 and 5/6
(t = 10) and normal 8/9 and 9/10 (t = 8) (Tables 5a/5b); every DVB-S2X rate
has t = 12 (EN 302 307-2 Tables 17a/17b).

``bch_decode(frame, rate, bits[batch, n_bch]) -> (info[batch, k_bch], ok[batch])``: hard
decisions (the LDPC decoder's information bits) through the C++ decoder
``gpuldpc._core.BchDecoder`` (remainder, syndromes, Berlekamp-Massey, Chien search;
include/gpuldpc/bch_decoder.hpp).  alpha is a root of g_1 (the primitive polynomial of the
field, x^16 + x^5 + x^3 + x^2 + 1 or x^14 + x^5 + x^3 + x + 1); g(x) vanishes at alpha^1 ..
alpha^2t.  "BCH ok" (``ok``): the error locator's degree L is at most t and it has L
distinct roots among the n_bch positions, which are then corrected.  With at most t bit
errors a frame always decodes to the sent one with ok = True; with more, the decoder
reports ok = False or (rarely) miscorrects to another codeword with ok = True.
"""
from __future__ import annotations

import functools

import numpy as np

from .dvb_s2 import FRAME_LENGTHS, K_LDPC, check

# g_1 .. g_12, exponents of the nonzero terms (Tables 6a and 6b).
_G_NORMAL = (
    (0, 2, 3, 5, 16), (0, 1, 4, 5, 6, 8, 16), (0, 2, 3, 4, 5, 7, 8, 9, 10, 11, 16),
    (0, 2, 4, 6, 9, 11, 12, 14, 16), (0, 1, 2, 3, 5, 8, 9, 10, 11, 12, 16),
    (0, 2, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 16), (0, 2, 5, 6, 8, 9, 10, 11, 13, 15, 16),
    (0, 1, 2, 5, 6, 8, 9, 12, 13, 14, 16), (0, 5, 7, 9, 10, 11, 16),
    (0, 1, 2, 5, 7, 8, 10, 12, 13, 14, 16), (0, 2, 3, 5, 9, 11, 12, 13, 16),
    (0, 1, 5, 6, 7, 9, 11, 12, 16))
_G_SHORT = (
    (0, 1, 3, 5, 14), (0, 6, 8, 11, 14), (0, 1, 2, 6, 9, 10, 14), (0, 4, 7, 8, 10, 12, 14),
    (0, 2, 4, 6, 8, 9, 11, 13, 14), (0, 3, 7, 8, 9, 13, 14), (0, 2, 5, 6, 7, 10, 11, 13, 14),
    (0, 5, 8, 9, 10, 11, 14), (0, 1, 2, 3, 9, 10, 14), (0, 3, 6, 9, 11, 12, 14),
    (0, 4, 11, 12, 14), (0, 1, 2, 3, 5, 6, 7, 8, 10, 13, 14))

T = {"normal": {"2/3": 10, "5/6": 10, "8/9": 8, "9/10": 8}, "short": {}}
"""Frame -> rate -> t where it is not 12."""


def _clmul(a: int, b: int) -> int:
    out = 0
    while b:
        if b & 1:
            out ^= a
        a <<= 1
        b >>= 1
    return out


def generator(frame: str, rate: str) -> int:
    """g(x) as an integer (bit d = coefficient of x^d)."""
    frame, rate = check(frame, rate)
    g = 1
    for terms in (_G_NORMAL if frame == "normal" else _G_SHORT)[:T[frame].get(rate, 12)]:
        g = _clmul(g, sum(1 << d for d in terms))
    return g


def sizes(frame: str, rate: str) -> tuple[int, int]:
    """(k_bch, n_bch)."""
    n_bch = K_LDPC[frame][rate]
    return n_bch - (16 if frame == "normal" else 14) * T[frame].get(rate, 12), n_bch


@functools.lru_cache(maxsize=2)            # up to 45 MB each (normal 9/10)
def _parity_matrix(frame: str, rate: str) -> np.ndarray:
    """float32 [k_bch, r]: row i = the parity of information bit i alone."""
    k, n = sizes(frame, rate)
    r = n - k
    g = generator(frame, rate)
    assert g.bit_length() == r + 1, (frame, rate)
    rows, cur = [], g ^ (1 << r)                      # x^r mod g
    for _ in range(k):                                # x^(j + r) mod g, j = 0 .. k-1
        rows.append(cur)
        cur <<= 1
        if cur >> r & 1:
            cur ^= g
    rows.reverse()                                    # information bit i is x^(k-1-i)
    words = (r + 63) // 64
    w = np.array([[(v >> (64 * j)) & 0xFFFFFFFFFFFFFFFF for j in range(words)] for v in rows],
                 dtype=np.uint64)
    bits = np.unpackbits(w.view(np.uint8).reshape(k, words, 8)[:, :, ::-1], axis=2)  # MSB first
    bits = bits[:, ::-1, :].reshape(k, 64 * words)[:, 64 * words - r:]   # x^(r-1) .. x^0
    return bits.astype(np.float32)


def _batch(frame: str, rate: str, bits, width: int) -> tuple[np.ndarray, bool]:
    """bits as [batch, width] and whether they came as one 1-D frame."""
    bits = np.asarray(bits)
    one = bits.ndim == 1
    bits = np.atleast_2d(bits)
    if bits.ndim != 2 or bits.shape[1] != width:
        raise ValueError(f"dvbs2 BCH {frame} {rate}: bits must have shape [batch, {width}], got {bits.shape}")
    return bits, one


def bch_encode(frame: str, rate: str, bits) -> np.ndarray:
    """Systematic BCH encoding: uint8 [batch, k_bch] -> [batch, n_bch] (1-D -> 1-D)."""
    frame, rate = check(frame, rate)
    bits, one = _batch(frame, rate, bits, sizes(frame, rate)[0])
    parity = (bits.astype(np.float32) @ _parity_matrix(frame, rate)).astype(np.int64) & 1
    out = np.concatenate([bits.astype(np.uint8), parity.astype(np.uint8)], axis=1)
    return out[0] if one else out


@functools.lru_cache(maxsize=None)
def bch_decoder(frame: str, rate: str):
    """The compiled decoder ``gpuldpc._core.BchDecoder`` of a DVB-S2 outer code (cached).

    ``decode(bits uint8 [batch, n_bch]) -> (corrected [batch, n_bch], errors int32 [batch])``,
    errors = the bits corrected, -1 where decoding failed.  Raises ``NativeModuleMissing``
    when ``gpuldpc._core`` is not built.
    """
    from .._native import core
    frame, rate = check(frame, rate)
    k, n = sizes(frame, rate)
    m = 16 if frame == "normal" else 14
    primitive = sum(1 << d for d in (_G_NORMAL if frame == "normal" else _G_SHORT)[0])
    g = generator(frame, rate)
    coefficients = np.array([(g >> d) & 1 for d in range(n - k + 1)], dtype=np.uint8)
    return core().BchDecoder(m, primitive, coefficients, n, T[frame].get(rate, 12))


def bch_decode(frame: str, rate: str, bits) -> tuple[np.ndarray, np.ndarray]:
    """Hard-decision BCH decoding: uint8 [batch, n_bch] -> (info uint8 [batch, k_bch], ok bool [batch]).

    ``bits`` are the LDPC decoder's information bits (one per byte, 0/1; a 1-D frame gives
    1-D info and a 0-d ok).  ``ok[f]`` is "BCH ok": frame f decoded (at most t errors
    found and corrected); where it is False, ``info[f]`` is the received information
    unchanged.  Runs in C++ without the GIL.  Raises ValueError for a wrong shape or a
    bit other than 0/1, TypeError for a non-integer array.
    """
    frame, rate = check(frame, rate)
    k, n = sizes(frame, rate)
    bits, one = _batch(frame, rate, bits, n)
    if bits.dtype.kind not in "biu":
        raise TypeError(f"dvbs2 BCH {frame} {rate}: bits must be an integer array of 0/1, got dtype {bits.dtype}")
    if bits.dtype != np.uint8:
        if bits.size and (bits.min() < 0 or bits.max() > 1):
            raise ValueError(f"dvbs2 BCH {frame} {rate}: bits must be 0 or 1")
        bits = bits.astype(np.uint8)
    corrected, errors = bch_decoder(frame, rate).decode(bits)
    info, ok = corrected[:, :k], errors >= 0
    return (info[0], ok[0]) if one else (info, ok)


assert set(FRAME_LENGTHS) == set(T)

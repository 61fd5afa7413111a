"""Counter-based noise: every batch of a campaign has its own reproducible stream.

A batch is named by ``(seed, code, Eb/N0, batch index)``.  Its stream key is::

    key = SeedSequence(seed, spawn_key=(crc32(code.name), mdB + 10^6, batch)).generate_state(2, uint64)

(``mdB`` = Eb/N0 in milli-dB, rounded), so any batch is regenerated alone, in any
order, on any worker, without running the ones before it.

Random words are Philox4x64-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
numbers: as easy as 1, 2, 3", SC 2011) with that key and counters 1, 2, 3, ...:
word ``i`` of the batch is output lane ``i mod 4`` of ``Philox(ctr = (i // 4 + 1, 0,
0, 0), key)``.  That is exactly ``numpy.random.Philox(key=key).random_raw()``, and
exactly what ``kernels/sim_noise.cu`` computes on the GPU, so a batch simulated
on the GPU is regenerated bit for bit on the CPU (up to one rounding of the
float64 ``log``/``cos``/``sin`` below) -- and tested that way.

Normals come from Box-Muller on each 64-bit word, read as two uint32 ``lo``
(bits 0-31) and ``hi`` (bits 32-63), all in float32 arithmetic::

    u1    = float(lo) * 2^-32 + 2^-33          in (0, 1]
    theta = float(hi) * (2 pi 2^-32)           in [0, 2 pi)
    r     = sqrt(-2 ln u1)
    z_{2i} = r cos(theta),   z_{2i+1} = r sin(theta)

so normal ``g`` of a batch comes from word ``g // 2``.  The integer-to-float
conversions and products are exactly rounded on both devices; ``ln``, ``cos``
and ``sin`` are the libraries' accurate float32 functions (1 ulp or better), so
GPU and CPU normals agree to about 1e-7 relative.  The smallest ``u1`` is 2^-33,
so ``|z| <= 6.77``: the tail beyond (probability 1.3e-11 per sample) is not
drawn, far below any error rate a campaign measures through many-bit events.
"""
from __future__ import annotations

import zlib

import numpy as np

__all__ = ["batch_key", "pool_key", "philox4x64_words", "standard_normals", "MDB_OFFSET"]

MDB_OFFSET = 1_000_000
"""Added to Eb/N0 in milli-dB so that the spawn key is a non-negative integer."""

_POOL_TAG = 0xC0DE
"""Spawn-key tag of the codeword pool stream (distinct from every Eb/N0 entry)."""


def code_id(code_name: str) -> int:
    """Stable 32-bit identity of a code for stream keys: CRC-32 of its name."""
    return zlib.crc32(code_name.encode("utf-8"))


def ebn0_mdb(ebn0_db: float) -> int:
    """Eb/N0 in milli-dB, rounded: the point's identity in keys and the store."""
    return int(round(float(ebn0_db) * 1000.0))


def batch_key(seed: int, code_name: str, ebn0_db: float, batch: int) -> np.ndarray:
    """Philox key (2 x uint64) of one batch; see the module docstring."""
    ss = np.random.SeedSequence(int(seed), spawn_key=(code_id(code_name),
                                                      ebn0_mdb(ebn0_db) + MDB_OFFSET, int(batch)))
    return ss.generate_state(2, np.uint64)


def pool_key(seed: int, code_name: str) -> np.random.SeedSequence:
    """Seed of the transmitted-codeword pool of ``(seed, code)`` (independent of Eb/N0)."""
    return np.random.SeedSequence(int(seed), spawn_key=(code_id(code_name), _POOL_TAG))


def philox4x64_words(key: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` 64-bit words of the batch stream with this key (uint64)."""
    return np.random.Philox(key=np.asarray(key, dtype=np.uint64)).random_raw(int(count))


_TWO_M32 = np.float32(2.0 ** -32)
_TWO_M33 = np.float32(2.0 ** -33)
_TWO_PI_M32 = np.float32(2.0 * np.pi * 2.0 ** -32)


def standard_normals(key: np.ndarray, count: int) -> np.ndarray:
    """``count`` float32 N(0, 1) samples of the batch stream (Box-Muller, module docstring)."""
    words = philox4x64_words(key, (int(count) + 1) // 2).view(np.uint32).reshape(-1, 2)
    if not np.little_endian:
        words = words[:, ::-1]                               # keep lo = bits 0-31 on big-endian hosts
    u = words.astype(np.float32)
    r = np.sqrt(np.float32(-2.0) * np.log(u[:, 0] * _TWO_M32 + _TWO_M33))
    theta = u[:, 1] * _TWO_PI_M32
    z = np.empty(words.shape, dtype=np.float32)
    np.multiply(r, np.cos(theta), out=z[:, 0])
    np.multiply(r, np.sin(theta), out=z[:, 1])
    return z.reshape(-1)[:count]

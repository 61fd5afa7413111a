"""Hard decisions packed eight to a byte: ``gl.Decoder(code, packed=True)``.

``DecodeResult.bits`` is then uint8 [batch, ceil(n/8)] in :func:`numpy.packbits` order (bit
``j`` of a frame is bit ``7 - j % 8`` of byte ``j // 8``; the unused low bits of the last byte
are 0) and ``info`` [batch, ceil(k/8)] the bytes that hold the ``k`` information bits, packed
the same way; a shaped code packs its decisions at ``decoded_positions``.
``numpy.unpackbits(res.bits, axis=1, count=n)`` gives the decisions one a byte, and
``numpy.unpackbits(res.info, axis=1, count=k)`` the information bits.  Where ``k % 8 != 0`` the
low ``8 - k % 8`` bits of ``info``'s last byte are not information bits: ``info`` is a view of
``bits`` (the decisions that follow the information bits are there), so that no call copies or
repacks anything (:func:`info_of`).  What it is for: a batch's results are an
eighth of the bytes to move over PCIe and through the caller's memory, the form a MAC layer or
a file of transport blocks takes them in (5G NR at 30-40 Gb/s: 10 KB of decisions a block
unpacked, against 9.5 KB of int8 LLRs in).

Who packs: the cuda backend's kernels store the decisions packed (one transfer of the packed
bytes, no host pass; an ``info`` run starting inside a byte is shifted on the GPU by the
throughput preset, :class:`gpuldpc.cuda.stages.PackedInfoPlan`, as :func:`info_of` does it
here); the host backends (cpu, reference) pack what they decoded (:class:`HostPacked`).
Binary codes only: a GF(q) symbol already fills its byte.
"""
from __future__ import annotations

import numpy as np

from .result import info_index


def width(n: int) -> int:
    """Bytes of ``n`` packed bits."""
    return (n + 7) // 8


def check(code, packed) -> bool:
    """``packed`` as a bool; TypeError unless it is one, ValueError for a GF(q) code."""
    if not isinstance(packed, (bool, np.bool_)):
        raise TypeError(f"packed must be True or False, got {packed!r}")
    if packed and not code.is_binary:
        raise ValueError(f"packed=True packs binary hard decisions eight to a byte; code {code.name!r} is over "
                         f"GF({code.q}), whose symbols take a byte each: decode it without packed")
    return bool(packed)


def info_of(bits: np.ndarray, n: int, info_at) -> np.ndarray:
    """The bytes of packed decisions ``bits`` [batch, ceil(n/8)] that hold the information bits.

    ``info_at``: where the information bits lie among the ``n`` (a slice, or positions, as
    :func:`gpuldpc.result.info_index` gives them).  A run starting on a byte (every systematic
    code, 5G NR with or without filler bits): a view of the bytes from its first to its last
    bit (module docstring: the last byte's low bits past the run are the decisions that
    follow).  A run starting inside a byte (CCSDS C2: bits 18 .. 7153 after the fill): a copy
    shifted by whole bytes, ``(b[s + i] << r) | (b[s + i + 1] >> (8 - r))`` for the run's first
    bit at ``8 s + r``, zeros after its last bit (:func:`_shifted`: three byte-wide NumPy passes,
    50 times fewer operations than unpacking the batch).  Scattered positions: unpacked,
    selected and packed again."""
    if isinstance(info_at, slice) and info_at.step in (None, 1):
        start, stop, _ = info_at.indices(n)
        if start % 8 == 0:
            return bits[:, start // 8:width(stop)]
        return _shifted(bits, start, stop)
    return np.packbits(np.unpackbits(bits, axis=1, count=n)[:, info_at], axis=1)


def _shifted(bits: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Bits ``start .. stop - 1`` of each row of packed ``bits``, packed from bit 0 of a new
    array, the low bits of its last byte past ``stop`` zero (``start % 8 != 0``)."""
    s, r, nbytes = start // 8, start % 8, width(stop - start)
    out = np.left_shift(bits[:, s:s + nbytes], r)
    follow = bits[:, s + 1:s + nbytes + 1]          # one byte short where the run ends in the row's last byte
    out[:, :follow.shape[1]] |= np.right_shift(follow, 8 - r)
    if (stop - start) % 8:
        out[:, -1] &= np.uint8((0xFF << (8 - (stop - start) % 8)) & 0xFF)
    return out


def packed_result(res, info_at, out: np.ndarray | None = None):
    """``res`` (a DecodeResult of unpacked bits) with ``bits`` packed and ``info`` (at ``info_at``,
    :func:`info_of`) their bytes; ``bits`` written into ``out`` (uint8 [batch, ceil(n/8)],
    C-contiguous) when given."""
    bits = np.packbits(res.bits, axis=1)
    if out is not None:
        if out.shape != bits.shape or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous uint8 array of shape {bits.shape} (packed=True: "
                             f"ceil(n/8) bytes a frame), got {out.dtype} {out.shape}")
        out[...] = bits
        bits = out
    return res._replace(bits=bits, info=info_of(bits, res.bits.shape[1], info_at))


class HostPacked:
    """A host backend (``cpu``, ``reference``) whose results are packed (:func:`packed_result`,
    ``info`` as the cuda backend gives it); every other attribute is the inner backend's."""

    def __init__(self, impl, code):
        self._impl, self._info_at = impl, info_index(code)

    def __getattr__(self, name):
        if name == "_impl":            # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._impl, name)

    def decode(self, llr, out=None):
        return packed_result(self._impl.decode(llr), self._info_at, out)


def host_backend(impl, code, settings):
    """``impl`` (a host backend of ``code``) behind :class:`HostPacked` when ``settings.packed``,
    else ``impl``."""
    return HostPacked(impl, code) if settings.packed else impl

"""What :meth:`gpuldpc.MixedDecoder.decode` returns: :class:`MixedDecodeResult`, frames of
several codes in their input order, in arrays padded to the widest code."""
from __future__ import annotations

import numpy as np

from .result import DecodeResult


class MixedDecodeResult:
    """The frames of one :meth:`gpuldpc.MixedDecoder.decode` call, in input order (first axis =
    frame), each as :class:`gpuldpc.DecodeResult` gives it for its code, padded with zeros.

    Attributes
    ----------
    codes : tuple
        The decoder's codes (``code_index`` points into it).
    code_index : int64 [frames]
        The code of each frame, as handed to ``decode``.
    n : int32 [frames]
        Width of each frame's row in ``bits`` (and ``llr``): its code's ``n`` (a shaped code,
        e.g. 5G NR: ``len(code.decoded_positions)``; GF(q): ``n`` symbols).
    k : int32 [frames]
        Width of each frame's row in ``info``: its code's ``k``.
    bits : uint8 [frames, max n]
        Hard decisions; row i is ``DecodeResult.bits`` of frame i in ``bits[i, :n[i]]``,
        zeros after.
    info : uint8 [frames, max k]
        The information part, ``info[i, :k[i]]``, zeros after (made from ``bits`` when first
        read, at the code's information positions).
    iterations : int32 [frames]
    valid : bool [frames]
        Syndrome zero.
    bad_llr : bool [frames]
        The frame's LLRs held NaN or +-inf (``on_bad_llr="erase"``).
    llr : float32 [frames, max n] or None
        Soft output (``soft_output=...``): ``llr[i, :n[i]]``, zeros after.

    ``frames_of(c)`` gives the frames of code ``c`` as one DecodeResult, in their input order.
    """

    __slots__ = ("codes", "code_index", "n", "k", "bits", "iterations", "valid", "bad_llr", "llr",
                 "_widths", "_info_positions", "_info")

    def __init__(self, codes, code_index, widths, info_positions, bits, iterations, valid, bad_llr, llr=None):
        self.codes = tuple(codes)
        self.code_index = code_index
        self._widths = widths                   # (bits widths, k) per code, int32
        self.n = widths[0][code_index]
        self.k = widths[1][code_index]
        self.bits, self.iterations, self.valid, self.bad_llr, self.llr = bits, iterations, valid, bad_llr, llr
        self._info_positions = info_positions   # per code: a slice (a run) or an index array into bits
        self._info = None

    def __len__(self) -> int:
        return self.code_index.size

    def rows_of(self, c: int) -> np.ndarray:
        """Input positions of the frames of code ``c`` (increasing)."""
        return np.flatnonzero(self.code_index == c)

    @property
    def info(self) -> np.ndarray:
        if self._info is None:
            info = np.zeros((len(self), int(self._widths[1].max())), np.uint8)
            for c, pos in enumerate(self._info_positions):
                rows = self.rows_of(c)
                if rows.size:
                    info[rows, :self._widths[1][c]] = self.bits[rows][:, pos]
            self._info = info
        return self._info

    def frames_of(self, c: int) -> DecodeResult:
        """The frames of code ``c`` (an index into ``codes``) as the DecodeResult
        ``gl.Decoder(codes[c]).decode`` gives them, in their input order (copies)."""
        if not 0 <= int(c) < len(self.codes):
            raise ValueError(f"c={c!r}: the decoder has codes 0..{len(self.codes) - 1}")
        c = int(c)
        rows, width = self.rows_of(c), int(self._widths[0][c])
        bits = self.bits[rows, :width]
        return DecodeResult(bits, bits[:, self._info_positions[c]], self.iterations[rows], self.valid[rows],
                            self.bad_llr[rows], None if self.llr is None else self.llr[rows, :width])

    def __repr__(self):
        counts = np.bincount(self.code_index, minlength=len(self.codes))
        mix = ", ".join(f"{code.name}: {int(m)}" for code, m in zip(self.codes, counts))
        return f"MixedDecodeResult({len(self)} frames; {mix})"

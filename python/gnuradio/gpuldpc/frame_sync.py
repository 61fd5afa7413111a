"""Frame Sync: soft BPSK symbols in, one LLR vector per sync-word-led frame out.

Thin skin over :class:`gpuldpc.framing.FrameSync` (correlation with the 64-bit
sync word, 180-degree ambiguity resolved by the sign of the peak, LLRs
``2 A y / sigma^2`` scaled from the sync word and the frame's power).  Input:
complex symbols, one per sample, after timing and carrier recovery (the real
part is used).  Output: float vectors of ``n`` LLRs with **positive = bit 0**
(textbook sign: connect to a decoder with ``positive_llr_bit=0``).  Each frame
is tagged ``sync_rho`` (its correlation peak, 0..1) and ``sync_flipped``.
"""
from __future__ import annotations

from collections import deque

import numpy as np
import pmt
from gnuradio import gr

from gpuldpc.framing import SYNC_WORD, FrameSync

_KEY_RHO = pmt.intern("sync_rho")
_KEY_FLIPPED = pmt.intern("sync_flipped")


class frame_sync(gr.basic_block):
    """Frame Sync (see the module docstring).

    Parameters
    ----------
    n : int
        Codeword length after the sync word.
    threshold : float
        Minimum normalized correlation (0..1) of a sync-word match.
    sync_word : int
        The 64-bit sync word (default CCSDS ASM ``0x034776C7272895B0``).
    """

    def __init__(self, n=1944, threshold=0.6, sync_word=SYNC_WORD):
        self.core = FrameSync(n, threshold, sync_word)
        gr.basic_block.__init__(self, name="frame_sync", in_sig=[np.complex64],
                                out_sig=[(np.float32, int(n))])
        self.set_tag_propagation_policy(gr.TPP_DONT)
        self._pending = deque()

    def forecast(self, noutput_items, ninputs):
        # frames found earlier and not yet sent need no input
        return [0 if self._pending else 1] * ninputs

    def general_work(self, input_items, output_items):
        symbols = input_items[0]
        if len(self._pending) < len(output_items[0]):
            llr, flipped, rho = self.core.push(symbols.real)
            self._pending.extend(zip(llr, flipped.tolist(), rho.tolist()))
            self.consume(0, len(symbols))
        produced = min(len(self._pending), len(output_items[0]))
        written = self.nitems_written(0)
        for i in range(produced):
            llr, flipped, rho = self._pending.popleft()
            output_items[0][i] = llr
            self.add_item_tag(0, written + i, _KEY_RHO, pmt.from_double(rho))
            self.add_item_tag(0, written + i, _KEY_FLIPPED, pmt.from_bool(flipped))
        return produced

"""Error Counter: compares sent and received frames, counts bit and frame errors.

Two uint8 vector inputs of equal length (one frame per item, unpacked bits or
GF(q) symbols): 0 = sent, 1 = received, in the same order.  Counting is
:func:`gpuldpc.channel.count_errors` (for GF(q) symbols, bit errors of the
binary images).  The ``counts`` message port sends a dict (frames,
frame_errors, bit_errors, fer, ber) every ``interval`` seconds and when the
flowgraph stops.
"""
from __future__ import annotations

import time

import numpy as np
import pmt
from gnuradio import gr

from gpuldpc.channel import count_errors

from .decoder_blocks import stats_to_pmt

COUNTS_PORT = "counts"


class error_counter(gr.sync_block):
    """Error Counter sink (see the module docstring); ``counts()`` gives the totals."""

    def __init__(self, vlen=972, q=2, interval=1.0):
        gr.sync_block.__init__(self, name="error_counter", in_sig=[(np.uint8, int(vlen))] * 2,
                               out_sig=None)
        self.message_port_register_out(pmt.intern(COUNTS_PORT))
        self.q = int(q)
        self.interval = float(interval)
        self._bits = self._frames = self._frame_errors = self._bit_errors = 0
        self._last = time.monotonic()

    def counts(self) -> dict:
        return {"frames": self._frames, "frame_errors": self._frame_errors,
                "bit_errors": self._bit_errors,
                "fer": self._frame_errors / self._frames if self._frames else 0.0,
                "ber": self._bit_errors / self._bits if self._bits else 0.0}

    def work(self, input_items, output_items):
        result = count_errors(input_items[1], input_items[0], self.q)
        self._frames += result.frames
        self._bits += result.bits
        self._frame_errors += result.frame_errors
        self._bit_errors += int(result.bit_errors.sum())
        if time.monotonic() - self._last >= self.interval:
            self.publish()
        return len(input_items[0])

    def publish(self):
        self._last = time.monotonic()
        self.message_port_pub(pmt.intern(COUNTS_PORT), stats_to_pmt(self.counts()))

    def stop(self):
        self.publish()
        return True

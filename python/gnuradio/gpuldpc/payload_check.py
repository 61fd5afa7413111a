"""Payload Check: a sink that counts frame and bit errors of received payloads.

Thin skin over :class:`gpuldpc.framing.PayloadCheck`: each input vector is one
frame's k information bits (unpacked uint8), compared with
:func:`gpuldpc.framing.payload` for the frame's sequence number and the
transmitter's payload seed; lost and reordered frames are counted from the
sequence numbers.
"""
from __future__ import annotations

import numpy as np
from gnuradio import gr

from gpuldpc.framing import PayloadCheck


class payload_check(gr.sync_block):
    """Payload Check sink; ``counts`` is the :class:`~gpuldpc.framing.PayloadCheck`.

    Parameters
    ----------
    k : int
        Information bits per frame (vector length).
    seed : int
        The transmitter's payload seed (``ldpc:payload_seed`` of a recording).
    """

    def __init__(self, k=972, seed=0):
        gr.sync_block.__init__(self, name="payload_check", in_sig=[(np.uint8, int(k))], out_sig=None)
        self.counts = PayloadCheck(int(k), int(seed))

    def work(self, input_items, output_items):
        for info in input_items[0]:
            self.counts.check(info)
        return len(input_items[0])

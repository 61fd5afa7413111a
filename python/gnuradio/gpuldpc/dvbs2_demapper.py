"""DVB-S2 Soft Demapper: received QPSK/8PSK/16APSK/32APSK symbols -> a FECFRAME's LLRs.

The receiver's counterpart of gr-dtv's ``dvbs2_interleaver_bb`` -> ``dvbs2_modulator_bc``
(EN 302 307-1 5.3.3 and 5.4), in front of the LDPC Decoder:

=====================  ==========================  ===================================
input stream           output vector               per output item
=====================  ==========================  ===================================
complex symbols, mean  float32 LLRs, ``n``         S = n / m symbols (m bits a
energy Es = 1          (64800 or 16200)            symbol): decimation S
=====================  ==========================  ===================================

The LLRs are in the LDPC code's bit order (the interleaver undone), positive means bit 0
(the LDPC Decoder's "Positive LLR means = Bit 0"), exact (log-sum-exp over the 2^m
points) or max-log: :mod:`gpuldpc.dvbs2_demap` gives the equations and tables.  The input
stream must start at a frame's first symbol (as gr-dtv's modulator sends it; a receiver
of a real signal puts its PL frame synchronisation and header removal in front).  N0 is
10^(-Es/N0 / 10) for the ``esn0_db`` given (settable while running).
"""
from __future__ import annotations

import numpy as np
from gnuradio import gr

from gpuldpc import dvbs2_demap


def demapper_lengths(code, constellation) -> tuple[int, int]:
    """``(symbols, llrs)`` of one FECFRAME: (S = n / m, n).  Raises ValueError naming the
    parameter for an unknown code or constellation or a MODCOD the standard lacks (GRC
    evaluates it for the output vector length, so a bad choice is reported there)."""
    m = dvbs2_demap.mapping(code, constellation)
    return m.symbols_per_frame, m.n


class dvbs2_demapper(gr.decim_block):
    """DVB-S2 Soft Demapper (see the module docstring).

    Parameters
    ----------
    code : str or DvbS2Code
        The LDPC code of the frames, ``"dvbs2-<normal|short>-<rate>"``: n LLRs a frame, and
        the rate selects the interleaver's column order and the APSK ring ratios.
    constellation : str
        ``"qpsk"``, ``"8psk"``, ``"16apsk"`` or ``"32apsk"``, one the standard uses with
        that rate (:data:`gpuldpc.dvbs2_demap.MODCODS`).
    esn0_db : float
        Es/N0 of the received symbols in dB (Es = 1): N0 = 10^(-esn0_db / 10).
    max_log : bool
        Max-log LLRs (nearest point of each bit value) instead of the exact log-sum-exp.
    """

    def __init__(self, code="dvbs2-short-3/5", constellation="8psk", esn0_db=6.0, max_log=False):
        self.mapping = dvbs2_demap.mapping(code, constellation)
        self.set_esn0_db(esn0_db)
        self.set_max_log(max_log)
        gr.decim_block.__init__(self, name="dvbs2_demapper", in_sig=[np.complex64],
                                out_sig=[(np.float32, self.mapping.n)],
                                decim=self.mapping.symbols_per_frame)

    def set_esn0_db(self, esn0_db):
        self.n0 = dvbs2_demap.n0_from_esn0_db(esn0_db)
        self.esn0_db = float(esn0_db)

    def set_max_log(self, max_log):
        self.max_log = bool(max_log)

    def work(self, input_items, output_items):
        frames = len(output_items[0])
        symbols = input_items[0][:frames * self.mapping.symbols_per_frame]
        output_items[0][:] = self.mapping.llr(symbols.reshape(frames, -1), self.n0, self.max_log)
        return frames

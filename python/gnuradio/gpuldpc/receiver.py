"""BPSK Frame Receiver: samples in, frame LLR vectors out (a hierarchical block).

GNU Radio's digital blocks do the synchronisation, then
:class:`gnuradio.gpuldpc.frame_sync` finds the frames::

    FLL band-edge (coarse carrier) -> symbol sync (maximum-likelihood timing
    error detector, polyphase interpolator with the RRC matched filter, 1
    sample/symbol out) -> Costas loop, order 2 (carrier phase) -> frame_sync
    (sync word, LLRs, positive = bit 0)

Timing recovery is ``digital.symbol_sync_cc``, not ``pfb_clock_sync_ccf``: in
GNU Radio 3.10.5 the latter's output depends on how the scheduler cuts its input
(on the committed recording it dropped one symbol, and so one frame, in about
one run in ten under load), while ``symbol_sync_cc`` gave the same symbols for
every cut tried (80 runs, 1 to 100000 items per call).  Loop bandwidths: radians
per sample for the FLL and the Costas loop (GNU Radio's convention), normalized
to the symbol rate for the symbol sync; the defaults suit the committed recording
(carrier offset up to a few 1e-3 cycles/sample, clock offset ~100 ppm).
"""
from __future__ import annotations

import math

from gnuradio import digital, filter, gr

from gpuldpc.framing import SYNC_WORD

from .frame_sync import frame_sync

NFILTS = 32


class bpsk_frame_receiver(gr.hier_block2):
    """See the module docstring.

    Parameters
    ----------
    n : int
        Codeword length (LLRs per output vector).
    sps : int
        Samples per symbol at the input.
    rolloff : float
        Root-raised-cosine roll-off of the transmit pulse.
    fll_bw, timing_bw, costas_bw : float
        Loop bandwidths of the FLL, the symbol sync and the Costas loop (module docstring).
    threshold, sync_word : as :class:`frame_sync`.
    """

    def __init__(self, n=1944, sps=2, rolloff=0.35, fll_bw=2 * math.pi / 500,
                 timing_bw=2 * math.pi / 200, costas_bw=2 * math.pi / 200, threshold=0.6,
                 sync_word=SYNC_WORD):
        gr.hier_block2.__init__(self, "bpsk_frame_receiver",
                                gr.io_signature(1, 1, gr.sizeof_gr_complex),
                                gr.io_signature(1, 1, gr.sizeof_float * int(n)))
        taps = filter.firdes.root_raised_cosine(NFILTS, NFILTS * sps, 1.0, rolloff,
                                                11 * sps * NFILTS)
        self.fll = digital.fll_band_edge_cc(sps, rolloff, 44, fll_bw)
        # damping 1, TED gain 1, at most 1.5 samples of deviation, 1 sample/symbol out, BPSK slicer
        self.clock = digital.symbol_sync_cc(digital.TED_SIGNAL_TIMES_SLOPE_ML, sps, timing_bw, 1.0, 1.0, 1.5, 1,
                                            digital.constellation_bpsk().base(), digital.IR_PFB_MF, NFILTS, taps)
        self.costas = digital.costas_loop_cc(costas_bw, 2, False)
        self.sync = frame_sync(n, threshold, sync_word)
        self.connect(self, self.fll, self.clock, self.costas, self.sync, self)

    @property
    def frames(self) -> int:
        """Frames found so far."""
        return self.sync.nitems_written(0)

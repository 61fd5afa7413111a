"""DVB-S2 BCH Decoder: the outer code of a DVB-S2 FECFRAME, after the LDPC Decoder.

A DVB-S2 receiver decodes the LDPC code (``ldpc_decoder``, ``output="info"``: the
k_ldpc = n_bch bits of the BCH codeword) and then the BCH code (EN 302 307-1 5.3.1),
which gives the k_bch bits of the BBFRAME.  This block is that second stage:

================  ==========================  ================================
input vector      output vector               per frame
================  ==========================  ================================
uint8 bits,       uint8 bits, ``k_bch``       tags ``bch_ok`` (bool) and
``n_bch``         (the BBFRAME)               ``bch_errors`` (long: the bits
(= the LDPC k)                                corrected, -1 where it failed)
================  ==========================  ================================

It is a separate block rather than an option of the LDPC Decoder: the LDPC Decoder stays
one block for every code family (its ``valid`` and ``iterations`` tags reach this block's
output with their frame), and the BCH stage runs in its own thread (C++, the GIL released) while
the LDPC decoder works on the next batch.  The decoding is
:func:`gpuldpc.codes.dvbs2_bch.bch_decoder` (C++ ``BchDecoder``): at most t bit errors
always give the sent frame with ``bch_ok`` True; with more the frame is passed on as
received with ``bch_ok`` False (or, rarely, miscorrected to another codeword, docs/dvbs2.md).

Input bytes other than 0/1 end the stream with a logged message (kept in ``error``), so
the flowgraph finishes instead of hanging.  The ``stats`` message port sends a dict
(frames, bch_failures, bits_corrected) every ``stats_interval`` seconds of work and when
the flowgraph stops; ``counts()`` gives it.  When the flowgraph stops the block also
prints one line with the counts, named by its alias, as the Error Counter does.
"""
from __future__ import annotations

import time

import numpy as np
import pmt
from gnuradio import gr

from gpuldpc.codes import dvbs2_bch
from gpuldpc.codes.dvb_s2 import DvbS2Code
from gpuldpc.streaming import load_code

from .decoder_blocks import STATS_PORT, stats_to_pmt

_KEY_OK = pmt.intern("bch_ok")
_KEY_ERRORS = pmt.intern("bch_errors")
_OK = (pmt.PMT_F, pmt.PMT_T)


def dvbs2_code(code) -> DvbS2Code:
    """The DVB-S2 LDPC code whose BCH outer code a block decodes: a registry name
    (``"dvbs2-short-1/2"``) or the code itself.  Raises ValueError for any other code, and
    the registry's error (naming the valid rates) for a rate the frame size lacks."""
    resolved = load_code(code)
    if not isinstance(resolved, DvbS2Code):
        raise ValueError(f"code {resolved.name!r} is not a DVB-S2 code: the DVB-S2 BCH decoder "
                         "takes the code of its LDPC decoder, dvbs2-<normal|short>-<rate> "
                         "(e.g. 'dvbs2-short-1/2')")
    return resolved


def bch_lengths(code) -> tuple[int, int]:
    """``(vlen_in, vlen_out)`` = (n_bch, k_bch) of the BCH decoder of a DVB-S2 code."""
    resolved = dvbs2_code(code)
    k_bch, n_bch = dvbs2_bch.sizes(resolved.frame, resolved.rate_label)
    return n_bch, k_bch


class dvbs2_bch_decoder(gr.sync_block):
    """DVB-S2 BCH Decoder (see the module docstring).

    Parameters
    ----------
    code : str or DvbS2Code
        The LDPC code of the frames, ``"dvbs2-<normal|short>-<rate>"`` (any DVB-S2 or S2X
        rate of :func:`gpuldpc.codes.dvbs2`): input vectors of n_bch = its k bits, output
        vectors of k_bch bits.
    stats_interval : float
        Seconds between ``stats`` messages.
    """

    def __init__(self, code="dvbs2-normal-1/2", stats_interval=1.0):
        self.code = dvbs2_code(code)
        self.vlen_in, self.vlen_out = bch_lengths(self.code)
        self._decoder = dvbs2_bch.bch_decoder(self.code.frame, self.code.rate_label)
        gr.sync_block.__init__(self, name="dvbs2_bch_decoder",
                               in_sig=[(np.uint8, self.vlen_in)], out_sig=[(np.uint8, self.vlen_out)])
        self.message_port_register_out(pmt.intern(STATS_PORT))
        self.stats_interval = float(stats_interval)
        self._last_stats = time.monotonic()
        self._frames = self._failures = self._corrected = 0
        self.error = None          # what ended the stream, when an error did

    def counts(self) -> dict:
        """Frames decoded, frames whose BCH decoding failed, bits corrected in the others."""
        return {"frames": self._frames, "bch_failures": self._failures,
                "bits_corrected": self._corrected}

    def work(self, input_items, output_items):
        count = len(input_items[0])
        try:
            corrected, errors = self._decoder.decode(input_items[0][:count])
        except ValueError as exc:      # a byte other than 0/1: not unpacked bits, end the stream
            self.error = f"{exc} (the input must be unpacked bits 0/1, e.g. the LDPC Decoder's)"
            gr.log.error(f"{self.name()}: stopping the stream: {self.error}")
            return int(gr.WORK_DONE)
        output_items[0][:count] = corrected[:, :self.vlen_out]
        written = self.nitems_written(0)
        for i, found in enumerate(errors.tolist()):
            self.add_item_tag(0, written + i, _KEY_OK, _OK[found >= 0])
            self.add_item_tag(0, written + i, _KEY_ERRORS, pmt.from_long(found))
        failed = errors < 0
        self._frames += count
        self._failures += int(failed.sum())
        self._corrected += int(errors[~failed].sum())
        if time.monotonic() - self._last_stats >= self.stats_interval:
            self.publish_stats()
        return count

    def set_stats_interval(self, seconds: float):
        self.stats_interval = float(seconds)

    def publish_stats(self):
        """Send the counts on the ``stats`` port now."""
        self._last_stats = time.monotonic()
        self.message_port_pub(pmt.intern(STATS_PORT), stats_to_pmt(self.counts()))

    def stop(self):
        self.publish_stats()
        c = self.counts()
        # One write (the newline in it): blocks stop in parallel threads.
        print(f"{self.alias()}: {c['frames']} frames, {c['frames'] - c['bch_failures']} BCH ok, "
              f"{c['bch_failures']} failed, {c['bits_corrected']} bits corrected\n", end="", flush=True)
        return True

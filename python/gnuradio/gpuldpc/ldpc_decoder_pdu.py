"""LDPC Decoder (PDU): f32vector PDUs of LLRs in, u8vector PDUs of bits out.

For bursty receive chains.  A PDU holds one or more whole frames (its length a
multiple of the block's input frame length, n LLRs for binary codes); they
are decoded in one ``Decoder.decode`` call and leave as one PDU (dropped frames
left out).  The output metadata is the input's plus ``iterations``, ``valid``
and ``bad_llr`` (one entry per output frame: s32vector, u8vector, u8vector),
``frames`` and ``dropped``; with ``soft_output`` (:mod:`gpuldpc.soft`) also ``llr``, an
f32vector of the output frames' soft output one after the other (``vlen_soft`` values a frame:
n LLRs, a 5G NR block's decoded positions; in the input's sign).  Frames with NaN/+-inf LLRs
follow ``on_bad_llr`` (erased and marked, or dropped), a backend fault moves the block to the CPU
backend with the PDU decoded again there (:mod:`gpuldpc.streaming`).  Malformed
PDUs (not a pair, not an f32vector, wrong length), and a PDU whose decoding
raised any other error, are counted and reported on the ``stats`` port as
``rejected`` with a log message naming the reason; the block goes on.  The work path, conventions and parameters are those of
:class:`gnuradio.gpuldpc.ldpc_decoder` (binary codes) and
:class:`gnuradio.gpuldpc.nb_ldpc_decoder` (GF(q) codes).

Several codes (ACM/VCM, ``codes=[...]``; :mod:`gpuldpc.code_switch`): each PDU's metadata
entry ``ldpc_code`` (a symbol naming one of the codes as listed, or an integer index into the
list) chooses the code of its frames, decoded by that code's own decoder; a PDU without it, or
naming no code of the list, is rejected.  With one code the entry may be left out.  The output
metadata carries ``ldpc_code``: the name of the code decoded, as listed.
"""
from __future__ import annotations

import numpy as np
import pmt
from gnuradio import gr

from gpuldpc.code_switch import CodeSwitch, merged_stats
from gpuldpc.streaming import StreamDecoder, block_code

from .decoder_blocks import STATS_PORT, stats_to_pmt
from .pdu_code import split_pdu, with_code

IN_PORT = "in"
OUT_PORT = "out"


class ldpc_decoder_pdu(gr.basic_block):
    """Decode the frames of each incoming PDU; see the module docstring.

    Parameters as :class:`gnuradio.gpuldpc.ldpc_decoder` (``code``,
    ``algorithm``, ``schedule``, ``max_iterations``, ``early_stop``,
    ``backend``, ``positive_llr_bit``, ``output``, ``on_failure``, ``on_bad_llr``,
    ``devices``, ``streams``, and the 5G NR fields ``k``, ``e``, ``rv``, ``bg``, ``n_ref``,
    ``qm`` instead of ``code``: a frame is then ``e`` LLRs, or one ``e`` per rv of
    ``rv=[0, 2]`` side by side), plus ``llr_input`` and ``output_format`` for GF(q) codes.
    ``algorithm=None`` takes the code's default (``nms`` / ``minmax``).  ``soft_output``
    (None, ``"posterior"``, ``"extrinsic"``): the ``llr`` metadata entry; the GPU then runs the
    throughput preset's kernels (the latency preset's write no soft output).  ``codes``: a list
    of codes (as ``code`` takes them) instead of ``code``, chosen per PDU by its ``ldpc_code``
    (see the module docstring); each code gets its own decoder with these parameters.

    Attributes: ``switch`` (:class:`gpuldpc.code_switch.CodeSwitch`: ``names`` as listed,
    ``workers`` their :class:`gpuldpc.streaming.StreamDecoder`), ``core`` (the first code's,
    the only one with ``code``).
    """

    def __init__(self, code=None, algorithm=None, schedule="layered",
                 max_iterations=10, early_stop=True, backend="auto", positive_llr_bit=1,
                 output="info", on_failure="pass", llr_input="bit", output_format="symbols",
                 devices=None, streams=None, on_bad_llr="erase", k=None, e=None, rv=0, bg=None,
                 n_ref=None, qm=None, soft_output=None, codes=None):
        if codes is not None and (code is not None or k is not None or e is not None):
            raise ValueError(f"codes={codes!r} and code={code!r} (or the 5G NR fields k, e) both given: give "
                             "one code, or the list of codes chosen by each PDU's ldpc_code")

        def make(one):
            return StreamDecoder(one, positive_llr_bit=positive_llr_bit, output=output,
                                 on_failure=on_failure, on_bad_llr=on_bad_llr,
                                 warn=gr.log.warn, llr_input=llr_input,
                                 output_format=output_format,
                                 preset="latency" if soft_output is None else "throughput",
                                 devices=devices, streams=streams, algorithm=algorithm,
                                 schedule=schedule, max_iterations=max_iterations,
                                 early_stop=early_stop, backend=backend, soft_output=soft_output)

        self.switch = CodeSwitch([block_code(code, k, e, rv, bg, n_ref, qm)] if codes is None else codes, make)
        self.core = self.switch.workers[0]
        gr.basic_block.__init__(self, name="ldpc_decoder_pdu", in_sig=None, out_sig=None)
        self.rejected = 0
        self.message_port_register_in(pmt.intern(IN_PORT))
        self.message_port_register_out(pmt.intern(OUT_PORT))
        self.message_port_register_out(pmt.intern(STATS_PORT))
        self.set_msg_handler(pmt.intern(IN_PORT), self.handle_pdu)

    @property
    def backend(self) -> str:
        return ",".join(dict.fromkeys(d.backend for d in self.switch.workers))

    def stats(self) -> dict:
        """The decoders' counters (summed over the codes, :func:`gpuldpc.code_switch.merged_stats`)
        plus ``rejected`` (malformed PDUs)."""
        return dict(merged_stats(self.switch.workers), rejected=self.rejected)

    def _reject(self, why: str):
        self.rejected += 1
        gr.log.warn(f"ldpc_decoder_pdu: PDU rejected ({self.rejected} so far): {why}")
        self.message_port_pub(pmt.intern(STATS_PORT), stats_to_pmt(self.stats()))

    def handle_pdu(self, msg):
        try:
            meta, name, core, llr = split_pdu(msg, self.switch, "f32vector")
        except ValueError as exc:
            self._reject(str(exc))
            return
        try:
            batch = core.decode_frames(llr)
        except Exception as exc:  # noqa: BLE001  (a PDU that cannot be decoded must not stop the block)
            self._reject(f"decoding failed: {type(exc).__name__}: {exc}")
            return
        meta = pmt.dict_add(meta, pmt.intern("iterations"),
                            pmt.init_s32vector(batch.iterations.size, batch.iterations.tolist()))
        meta = pmt.dict_add(meta, pmt.intern("valid"),
                            pmt.init_u8vector(batch.valid.size, batch.valid.astype(np.uint8).tolist()))
        meta = pmt.dict_add(meta, pmt.intern("bad_llr"),
                            pmt.init_u8vector(batch.bad_llr.size, batch.bad_llr.astype(np.uint8).tolist()))
        meta = pmt.dict_add(meta, pmt.intern("frames"), pmt.from_long(batch.kept.size))
        meta = pmt.dict_add(meta, pmt.intern("dropped"),
                            pmt.from_long(llr.shape[0] - batch.kept.size))
        meta = with_code(meta, name)
        if batch.llr is not None:
            soft = batch.llr.reshape(-1)
            meta = pmt.dict_add(meta, pmt.intern("llr"), pmt.init_f32vector(soft.size, soft.tolist()))
        bits = batch.out.reshape(-1)
        self.message_port_pub(pmt.intern(OUT_PORT),
                              pmt.cons(meta, pmt.init_u8vector(bits.size, bits.tolist())))
        self.message_port_pub(pmt.intern(STATS_PORT), stats_to_pmt(self.stats()))

    def stop(self):
        self.switch.close()
        return True

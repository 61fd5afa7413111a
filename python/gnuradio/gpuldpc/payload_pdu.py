"""Payloads as PDUs, for links whose frames change code (ACM/VCM): ``payload_pdu_source`` makes
them, ``payload_check_pdu`` counts the errors of what comes back.

A frame's payload is :func:`gpuldpc.framing.payload` (32-bit sequence number, then PRBS from
the payload seed) at its code's length, so the check needs nothing but the seed: it reads each
frame's length from its PDU, lost and reordered frames from the sequence numbers
(:class:`gpuldpc.framing.PayloadCheck`).
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pmt
from gnuradio import gr

from gpuldpc.code_switch import CodeSwitch
from gpuldpc.framing import PayloadCheck, payload
from gpuldpc.streaming import encoder_lengths

from .pdu_code import code_key, with_code

_SEQ = pmt.intern("seq")
_FRAMES = pmt.intern("frames")


class payload_pdu_source(gr.sync_block):
    """Payload PDU Source: a stream of code indices (uint8, one item a frame) in, one PDU a frame
    out on the ``out`` message port: metadata ``ldpc_code`` (``codes[index]``, a symbol) and
    ``seq`` (the frame's sequence number, from 0), a u8vector of the code's information bits
    (GF(q) codes: the bits of the k symbols, for ``ldpc_encoder_pdu(symbols=False)``).  An
    index outside ``codes`` is skipped and counted (``skipped``).  The flowgraph's end reaches
    the blocks downstream as GNU Radio's end-of-messages notice when the index stream ends.
    """

    def __init__(self, codes=("wifi-1944-1/2",), seed=0):
        self.switch = CodeSwitch([codes] if isinstance(codes, str) else codes,
                                 lambda code: encoder_lengths(code, symbols=False)[0])
        gr.sync_block.__init__(self, name="payload_pdu_source", in_sig=[np.uint8], out_sig=None)
        self.message_port_register_out(pmt.intern("out"))
        self.seed = int(seed)
        self.seq = 0
        self.skipped = 0

    def work(self, input_items, output_items):
        port = pmt.intern("out")
        for index in input_items[0]:
            if index >= len(self.switch.names):
                self.skipped += 1
                gr.log.warn(f"payload_pdu_source: code index {index} outside 0..{len(self.switch.names) - 1} "
                            f"skipped ({self.skipped} so far)")
                continue
            name, k = self.switch.select(int(index))
            bits = payload(self.seq, k, self.seed)
            meta = pmt.dict_add(with_code(pmt.make_dict(), name), _SEQ, pmt.from_long(self.seq))
            self.message_port_pub(port, pmt.cons(meta, pmt.init_u8vector(k, bits.tolist())))
            self.seq += 1
        return len(input_items[0])


class payload_check_pdu(gr.basic_block):
    """Payload Check (PDU): decoded PDUs in (u8vector of ``frames`` payloads one after the other,
    as :class:`gnuradio.gpuldpc.ldpc_decoder_pdu` sends them); ``counts`` (a
    :class:`gpuldpc.framing.PayloadCheck` of every frame at its own length), ``by_code`` and
    ``errors_by_code`` (frames and frame errors per ``ldpc_code``).  When the flowgraph ends it
    prints one line with the counts and one with the frames (frame errors) per code."""

    def __init__(self, seed=0):
        gr.basic_block.__init__(self, name="payload_check_pdu", in_sig=None, out_sig=None)
        self.counts = PayloadCheck(0, int(seed))
        self.by_code, self.errors_by_code = Counter(), Counter()
        self.rejected = 0
        self.message_port_register_in(pmt.intern("in"))
        self.set_msg_handler(pmt.intern("in"), self.handle_pdu)

    def handle_pdu(self, msg):
        if not pmt.is_pair(msg) or not pmt.is_u8vector(pmt.cdr(msg)):
            self.rejected += 1
            gr.log.warn("payload_check_pdu: expected a PDU (metadata, u8vector)")
            return
        meta = pmt.car(msg) if pmt.is_dict(pmt.car(msg)) else pmt.make_dict()
        bits = np.array(pmt.u8vector_elements(pmt.cdr(msg)), dtype=np.uint8)
        frames = pmt.to_long(pmt.dict_ref(meta, _FRAMES, pmt.from_long(1)))
        if frames < 1 or bits.size % frames:
            self.rejected += 1
            gr.log.warn(f"payload_check_pdu: {bits.size} bits do not split into {frames} frames")
            return
        name, before = str(code_key(meta)), self.counts.frame_errors
        for info in bits.reshape(frames, -1):
            self.counts.check(info)
        self.by_code[name] += frames
        self.errors_by_code[name] += self.counts.frame_errors - before

    def stop(self):
        c = self.counts
        print(f"payload_check_pdu: {c.frames} of {c.next_seq} frames decoded, {c.missing} missing, "
              f"{c.out_of_order} out of order; FER {c.fer:.3g} ({c.frame_errors}/{c.frames}), "
              f"BER {c.ber:.3g} ({c.bit_errors}/{c.bits} info bits)", flush=True)
        print("frames per code (frame errors): " + ", ".join(
            f"{name} {count} ({self.errors_by_code[name]})" for name, count in sorted(self.by_code.items())), flush=True)
        return True

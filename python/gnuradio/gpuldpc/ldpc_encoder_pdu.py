"""LDPC Encoder (PDU): u8vector PDUs of information bits in, u8vector PDUs of codewords out.

The transmit side of :class:`gnuradio.gpuldpc.ldpc_decoder_pdu` for ACM/VCM links: a PDU holds
one or more whole frames of one code (its length a multiple of the code's k; GF(q) codes:
element integers, or their bits with ``symbols=False``); the code is the only one of the
block's ``codes`` or the one the PDU's metadata entry ``ldpc_code`` names (a symbol as listed
in ``codes``, or an index into the list: :mod:`gpuldpc.code_switch`).  The output PDU is the
codewords one after the other (``code.encode``, :class:`gpuldpc.streaming.StreamEncoder`) with
the input metadata plus ``ldpc_code`` (the code's name as listed) and ``frames``.  PDUs that
are malformed (not a pair, not a u8vector, a wrong length) or name no code of the list are
counted (``rejected``) and logged, and the block goes on.
"""
from __future__ import annotations

import pmt
from gnuradio import gr

from gpuldpc.code_switch import CodeSwitch
from gpuldpc.streaming import StreamEncoder

from .pdu_code import split_pdu, with_code

IN_PORT = "in"
OUT_PORT = "out"


class ldpc_encoder_pdu(gr.basic_block):
    """Encode the frames of each incoming PDU; see the module docstring.

    Parameters
    ----------
    codes : str or list
        One code (a name, a 5G NR ``nr-k<k>-e<E>`` name, a matrix file: as
        :class:`gnuradio.gpuldpc.ldpc_encoder` takes it) or a list of them.
    symbols : bool
        GF(q) codes: element integers in and out (True) or their binary images (False).
    """

    def __init__(self, codes="wifi-1944-1/2", symbols=True):
        self.switch = CodeSwitch([codes] if isinstance(codes, str) else codes,
                                 lambda code: StreamEncoder(code, bool(symbols)))
        gr.basic_block.__init__(self, name="ldpc_encoder_pdu", in_sig=None, out_sig=None)
        self.rejected = 0
        self.message_port_register_in(pmt.intern(IN_PORT))
        self.message_port_register_out(pmt.intern(OUT_PORT))
        self.set_msg_handler(pmt.intern(IN_PORT), self.handle_pdu)

    def _reject(self, why: str):
        self.rejected += 1
        gr.log.warn(f"ldpc_encoder_pdu: PDU rejected ({self.rejected} so far): {why}")

    def handle_pdu(self, msg):
        try:
            meta, name, core, info = split_pdu(msg, self.switch, "u8vector")
            words = core.encode_frames(info).reshape(-1)
        except ValueError as exc:          # malformed, no or an unknown code, symbols outside GF(q)
            self._reject(str(exc))
            return
        meta = pmt.dict_add(with_code(meta, name), pmt.intern("frames"), pmt.from_long(info.shape[0]))
        self.message_port_pub(pmt.intern(OUT_PORT), pmt.cons(meta, pmt.init_u8vector(words.size, words.tolist())))

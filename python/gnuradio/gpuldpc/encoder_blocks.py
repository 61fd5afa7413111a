"""Stream encoder blocks: ``ldpc_encoder`` (binary) and ``nb_ldpc_encoder`` (GF(q)).

Thin skins over :class:`gpuldpc.streaming.StreamEncoder`: one stream item is
one frame, the output equals ``code.encode`` (systematic: the first k
positions are the input).
"""
from __future__ import annotations

import numpy as np
from gnuradio import gr

from gpuldpc.streaming import StreamEncoder, block_code

from .code_kind import require_kind


class _FrameEncoderBlock(gr.sync_block):
    """Common body of the stream encoders."""

    def __init__(self, name: str, code, symbols: bool):
        self.core = StreamEncoder(code, symbols)
        gr.sync_block.__init__(self, name=name, in_sig=[(np.uint8, self.core.vlen_in)],
                               out_sig=[(np.uint8, self.core.vlen_out)])

    def work(self, input_items, output_items):
        count = len(input_items[0])
        output_items[0][:count] = self.core.encode_frames(input_items[0][:count])
        return count


class ldpc_encoder(_FrameEncoderBlock):
    """LDPC Encoder: unpacked info bits (uint8 0/1, vlen k) in, codeword bits (vlen n) out.

    ``code``: a name from ``gpuldpc.codes.names()`` or an alist / base-matrix file (None:
    ``"wifi-1944-1/2"``).  Or a 5G NR code block from its fields instead (``code`` left
    None): ``k`` information bits sent as ``e`` bits of redundancy version ``rv`` (0..3;
    a list, ``[0, 2]``, gives those transmissions side by side, ``e`` bits each), ``bg``
    (1, 2, None = TS 38.212's choice), ``n_ref`` (LBRM), ``qm`` (bit interleaver):
    :func:`gpuldpc.streaming.nr_code`, e.g. ``ldpc_encoder(k=1000, e=1200, rv=2)``.
    """

    def __init__(self, code=None, k=None, e=None, rv=0, bg=None, n_ref=None, qm=None):
        code = require_kind(block_code(code, k, e, rv, bg, n_ref, qm), binary=True)
        super().__init__("ldpc_encoder", code, True)


class nb_ldpc_encoder(_FrameEncoderBlock):
    """NB-LDPC Encoder for GF(q) codes.

    ``symbols=True``: GF(q) element integers in (vlen k) and out (vlen n);
    ``symbols=False``: their binary images, m = log2(q) bits per symbol, LSB
    first (vlen k*m in, n*m out).
    """

    def __init__(self, code="gf32-744-653", symbols=True):
        require_kind(code, binary=False)
        super().__init__("nb_ldpc_encoder", code, symbols)

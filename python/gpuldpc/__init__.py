"""gpuldpc: LDPC decoding on NVIDIA GPUs (and CPUs) for GNU Radio and Python.

The core package; it never imports GNU Radio (the blocks live in
``gnuradio.gpuldpc``).  See DESIGN.md for the layers and the public API::

    import gpuldpc as gl
    code = gl.codes.get("wifi-1944-1/2")
    dec = gl.Decoder(code, algorithm="nms", backend="auto")
    res = dec.decode(llr)          # llr: float32 [batch, n], positive means bit 0
    mixed = gl.MixedDecoder(["wimax-2304-1/2", "wifi-1944-2/3"])
    res = mixed.decode(llrs, code_index)   # frames of several codes, results in input order
"""
from . import channel, codes, gf  # noqa: F401
from .decoders import BackendUnavailable, DecodeResult, Decoder, Ticket  # noqa: F401
from .decoders.mixed import MixedDecoder  # noqa: F401
from .mixed_result import MixedDecodeResult  # noqa: F401
from .int4 import pack_int4, unpack_int4  # noqa: F401

__version__ = "0.1.0"

"""gr-gpuldpc GNU Radio blocks (``from gnuradio import gpuldpc``).

Thin blocks over the core package :mod:`gpuldpc` (which never imports GNU
Radio): the stream decoders ``ldpc_decoder`` and ``nb_ldpc_decoder``, the
encoders ``ldpc_encoder`` and ``nb_ldpc_encoder``, the PDU decoder
``ldpc_decoder_pdu`` and encoder ``ldpc_encoder_pdu`` (one code, or several chosen per PDU by
its ``ldpc_code`` metadata: ACM/VCM); for receive chains ``bpsk_frame_receiver`` (synchronisation
and ``frame_sync``: sync-word framing of soft symbols) and the sinks
``payload_check`` and ``error_counter`` (``payload_pdu_source`` and ``payload_check_pdu``
for PDUs of several codes); ``dvbs2_bch_decoder``, the DVB-S2 BCH
outer decoder after the LDPC Decoder; ``dvbs2_demapper``, DVB-S2 symbols to LLRs before it.
``decoder_lengths`` / ``encoder_lengths`` / ``bch_lengths`` / ``demapper_lengths`` give a block's vector
lengths from its code, ``load_code`` a code from its name or file and ``nr_code`` a 5G NR code
block from its fields k, E, rv (GRC uses them).

Found by ``gnuradio/__init__.py``'s ``pkgutil.extend_path``: any ``sys.path``
entry holding ``gnuradio/gpuldpc/`` (GR_PYTHON_DIR after a CMake install,
site-packages after a pip install, ``python/`` in the source tree) works.
"""
from gpuldpc.streaming import decoder_lengths, encoder_lengths, load_code, nr_code  # noqa: F401

from .decoder_blocks import ldpc_decoder, nb_ldpc_decoder  # noqa: F401
from .dvbs2_bch_decoder import bch_lengths, dvbs2_bch_decoder  # noqa: F401
from .dvbs2_demapper import demapper_lengths, dvbs2_demapper  # noqa: F401
from .encoder_blocks import ldpc_encoder, nb_ldpc_encoder  # noqa: F401
from .error_counter import error_counter  # noqa: F401
from .frame_sync import frame_sync  # noqa: F401
from .payload_check import payload_check  # noqa: F401
from .receiver import bpsk_frame_receiver  # noqa: F401
from .ldpc_decoder_pdu import ldpc_decoder_pdu  # noqa: F401
from .ldpc_encoder_pdu import ldpc_encoder_pdu  # noqa: F401
from .payload_pdu import payload_check_pdu, payload_pdu_source  # noqa: F401

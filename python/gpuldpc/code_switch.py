"""One worker per code, chosen frame batch by frame batch: what the PDU blocks of an ACM/VCM
link run (``ldpc_decoder_pdu(codes=[...])``, ``ldpc_encoder_pdu(codes=[...])``).

Adaptive and variable coding changes the code from one burst to the next; a receiver learns
each burst's code from its header (DVB-S2's PLS code, a MAC's MCS field) and hands the burst
on with that code in its metadata.  The key ``ldpc_code`` (:data:`KEY`) names it: one of the
block's codes as written in its ``codes`` list (or the code's own name, ``code.name``), or its
index in that list.  :class:`CodeSwitch` holds one worker per code (a
:class:`gpuldpc.streaming.StreamDecoder`: its decoder, pipelining, bad-frame policies and
counters; or a :class:`gpuldpc.streaming.StreamEncoder`) and :meth:`CodeSwitch.select` gives
the one a burst's key names, or ValueError naming the codes (the blocks count and log such a
burst as rejected).

Why bursts (PDUs) and not the vector stream: a GNU Radio stream has one item size, and frames
of different codes have different lengths (n LLRs in, k bits out).  A stream variant would pad
every frame to the longest code and carry the true lengths in tags: more bytes through every
buffer, outputs whose valid part varies per item, and the decoder's batches cut at each code
change.  A burst carries its own length, so the PDU path is the way for variable-length frames.
"""
from __future__ import annotations

import numpy as np

from .streaming import load_code

KEY = "ldpc_code"
"""The metadata key that names a burst's code."""


class CodeSwitch:
    """Workers of several codes, selected by ``ldpc_code`` (see the module docstring).

    Parameters
    ----------
    codes : sequence of str or Code
        Code specs as :func:`gpuldpc.streaming.load_code` takes them (names, 5G NR
        ``nr-k<k>-e<E>`` names, matrix files) or code objects; distinct codes.
    make : callable
        ``make(code) -> worker`` for each code (the loaded Code).
    """

    def __init__(self, codes, make):
        if isinstance(codes, (str, bytes)) or not hasattr(codes, "__len__") or len(codes) == 0:
            raise ValueError(f"codes must be a non-empty list of code names, got {codes!r}")
        loaded = [load_code(c) for c in codes]
        self.names = [c if isinstance(c, str) else c.name for c in codes]
        self._canonical = [c.name for c in loaded]
        twice = sorted({n for n in self._canonical if self._canonical.count(n) > 1})
        if twice:
            raise ValueError(f"codes: {twice} given more than once")
        self.workers = []
        try:
            for code in loaded:
                self.workers.append(make(code))
        except BaseException:
            self.close()
            raise

    def select(self, key):
        """``(name, worker)`` of the code ``key`` names (a name from ``codes``, a code's own
        name, or an index into ``codes``); ``key`` None (no ``ldpc_code`` entry) selects the
        only code of a one-code switch.  ValueError naming the codes otherwise."""
        if key is None:
            if len(self.workers) == 1:
                return self.names[0], self.workers[0]
            raise ValueError(f"no {KEY!r} entry in the metadata: it must name one of the codes {self.names} "
                             f"(or give its index 0..{len(self.names) - 1})")
        try:
            i = code_position(self.names, key)
        except ValueError:
            if not isinstance(key, str) or key not in self._canonical:
                raise
            i = self._canonical.index(key)
        return self.names[i], self.workers[i]

    def close(self):
        for worker in self.workers:
            close = getattr(worker, "close", None)
            if close is not None:
                close()


def code_position(names, key) -> int:
    """Index of ``key`` in the code names ``names``: ``key`` a name (str or bytes) or an index
    (an integer 0..len-1); ValueError naming the choices otherwise."""
    if isinstance(key, bytes):
        key = key.decode("utf-8", "replace")
    if isinstance(key, str):
        if key in names:
            return names.index(key)
    elif isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < len(names):
        return int(key)
    raise ValueError(f"ldpc_code={key!r} is neither one of the codes {list(names)} nor an index 0..{len(names) - 1}")


def merged_stats(decoders) -> dict:
    """The counters of several :class:`gpuldpc.streaming.StreamDecoder` as one
    ``StreamDecoder.stats()`` dict: sums, the mean iterations over all frames, coded Mb/s over
    the decoders' busy time together, ``backend`` their backends joined by "," when they
    differ."""
    each = [d.stats() for d in decoders]
    frames = sum(s["frames"] for s in each)
    bits = [s["frames"] * d.code.n * d.code.bits_per_symbol for s, d in zip(each, decoders)]
    busy = sum(b / (s["coded_mbps"] * 1e6) for b, s in zip(bits, each) if s["coded_mbps"] > 0)
    backends = list(dict.fromkeys(s["backend"] for s in each))
    out = {key: sum(s[key] for s in each) for key in ("frames", "failures", "dropped", "bad_llr_frames")}
    out.update(mean_iterations=sum(s["mean_iterations"] * s["frames"] for s in each) / frames if frames else 0.0,
               coded_mbps=sum(bits) / busy / 1e6 if busy > 0 else 0.0,
               fallbacks=sum(s["fallbacks"] for s in each), backend=",".join(backends))
    return out

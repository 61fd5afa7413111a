"""Stream decoder blocks: ``ldpc_decoder`` (binary) and ``nb_ldpc_decoder`` (GF(q)).

Thin skins over :class:`gpuldpc.streaming.StreamDecoder`, which owns the code,
the vector lengths, the LLR sign, the pipelined work step, the bad-frame and fault
policies and the counters (see its module docstring for the stream layout and the
LLR conventions).

One stream item is one frame.  A ``work()`` call (:meth:`StreamDecoder.work
<gpuldpc.streaming.StreamDecoder.work>`) hands over ``min(frames waiting, batch)``
frames (``set_output_multiple`` and ``set_max_noutput_items`` are the batch) and
returns the frames of the batch handed over in the call before: the copy-in and decoding of one batch overlap the waiting for and the
output of the previous one (:meth:`gpuldpc.streaming.StreamDecoder.submit`).  A
batch's input is consumed only once it is decoded, so the frames of the batch in
flight are the first ones waiting at the next call; when no more input waits, a
call finishes its own batch at once, so the last frames of a finite stream, or
the frames of a slow stream, are never held back.

With ``soft_output`` (``ldpc_decoder``) a second output port carries each kept frame's soft
output, a float vector of ``vlen_soft`` LLRs (:mod:`gpuldpc.soft`, in the input's LLR sign),
item for item with the bits.

Per output frame stream tags are added at its item: ``iterations`` (long),
``valid`` (bool, syndrome zero) unless ``frame_tags=False`` (their cost, about
1 us a frame on the block's thread, is its largest after the decode on the cpu
backend), and ``bad_llr`` (bool True, always) on a frame whose LLRs held NaN or
+-inf and was decoded with them erased (``on_bad_llr="erase"``); tags on the input
frames move with their frame (tags of dropped frames are dropped with them).  The
``stats`` message port publishes a PMT dict (frames, failures, dropped, bad_llr_frames,
mean_iterations, coded_mbps, fallbacks, backend, page_locked_bytes) every
``stats_interval`` seconds of work and when the flowgraph stops.  On the cuda backend
the block page-locks the GNU Radio buffer its input lies in once, for DMA from where the
frames lie, and unlocks it at ``stop()`` (``page_locked_bytes``; docs/blocks.md "GNU
Radio's buffers").

Never a dead flowgraph: bad frames are counted, not fatal; a backend fault (CUDA
error, lost device, out of memory) logs one line and the block continues on the
CPU backend, decoding the batch in flight again (:mod:`gpuldpc.streaming`);
any other error in ``work()`` is logged with its message, kept in ``error``,
and ends the block's stream (``WORK_DONE``), so the flowgraph finishes instead
of hanging.
"""
from __future__ import annotations

import time
import traceback
from functools import lru_cache

import numpy as np
import pmt
from gnuradio import gr

from gpuldpc.streaming import ON_BAD_LLR, ON_FAILURE, StreamDecoder, block_code

from .code_kind import require_kind

STATS_PORT = "stats"
_KEY_ITERATIONS = pmt.intern("iterations")
_KEY_VALID = pmt.intern("valid")
_KEY_BAD_LLR = pmt.intern("bad_llr")
_VALID = (pmt.PMT_F, pmt.PMT_T)


@lru_cache(maxsize=None)
def _iterations_pmt(count: int):
    """``pmt.from_long(count)``, made once per count: the tags of a batch share a handful of
    iteration counts, and building a PMT per frame was most of the tags' cost (below)."""
    return pmt.from_long(count)


def stats_to_pmt(stats: dict):
    """A ``StreamDecoder.stats()`` dict as a PMT dict (symbols -> long/double/symbol)."""
    out = pmt.make_dict()
    for key, value in stats.items():
        if isinstance(value, str):
            item = pmt.intern(value)
        elif isinstance(value, (int, np.integer)):
            item = pmt.from_long(int(value))
        else:
            item = pmt.from_double(float(value))
        out = pmt.dict_add(out, pmt.intern(key), item)
    return out


class _FrameDecoderBlock(gr.basic_block):
    """Common body of the stream decoders (a general block: dropped frames change the rate)."""

    def __init__(self, name: str, stats_interval: float, frame_tags: bool, **stream_args):
        self.set_frame_tags(frame_tags)
        self.core = StreamDecoder(warn=gr.log.warn, **stream_args)
        soft = [(np.float32, self.core.vlen_soft)] if self.core.vlen_soft else []
        gr.basic_block.__init__(self, name=name,
                                in_sig=[(np.float32, self.core.vlen_in)],
                                out_sig=[(np.uint8, self.core.vlen_out)] + soft)
        self.set_output_multiple(self.core.batch)
        self.set_max_noutput_items(self.core.batch)
        self.set_tag_propagation_policy(gr.TPP_DONT)
        self.message_port_register_out(pmt.intern(STATS_PORT))
        self.stats_interval = float(stats_interval)
        self._last_stats = time.monotonic()
        self.error = None          # what ended the stream, when an error did

    @property
    def backend(self) -> str:
        return self.core.backend

    @property
    def batch(self) -> int:
        return self.core.batch

    def stats(self) -> dict:
        """Counters so far (see :meth:`gpuldpc.streaming.StreamDecoder.stats`)."""
        return self.core.stats()

    def set_positive_llr_bit(self, positive_llr_bit: int):
        if positive_llr_bit not in (0, 1):
            raise ValueError(f"positive_llr_bit must be 0 or 1, got {positive_llr_bit!r}")
        self.core.positive_llr_bit = int(positive_llr_bit)

    def set_on_failure(self, on_failure: str):
        if on_failure not in ON_FAILURE:
            raise ValueError(f"on_failure must be 'pass' or 'drop', got {on_failure!r}")
        self.core.on_failure = on_failure

    def set_on_bad_llr(self, on_bad_llr: str):
        if on_bad_llr not in ON_BAD_LLR:
            raise ValueError(f"on_bad_llr must be 'erase' or 'drop', got {on_bad_llr!r}")
        self.core.on_bad_llr = on_bad_llr

    def set_stats_interval(self, seconds: float):
        self.stats_interval = float(seconds)

    def set_frame_tags(self, frame_tags: bool):
        """Whether every output frame gets its ``iterations`` and ``valid`` tags."""
        if not isinstance(frame_tags, (bool, np.bool_)):
            raise ValueError(f"frame_tags must be True or False, got {frame_tags!r}")
        self.frame_tags = bool(frame_tags)

    def forecast(self, noutput_items, ninputs):
        # One frame is enough to run: a call hands over what is waiting, up to a batch.
        return [1] * ninputs

    def general_work(self, input_items, output_items):
        try:
            produced = self._work(input_items[0], *output_items)
        except Exception as exc:  # noqa: BLE001  (anything left is fatal: end the stream, say why)
            self.error = f"{type(exc).__name__}: {exc}"
            gr.log.error(f"{self.name()}: stopping the stream: {self.error}\n{traceback.format_exc()}")
            return int(gr.WORK_DONE)
        if time.monotonic() - self._last_stats >= self.stats_interval:
            self.publish_stats()
        return produced

    def _work(self, inp, out, soft_out=None):
        """:meth:`gpuldpc.streaming.StreamDecoder.work`: hand over, finish, tag, consume
        (``soft_out``: the soft output port's buffer, with ``soft_output``)."""
        consumed, batch = self.core.work(inp, out, soft_out)
        if batch is None:
            return 0
        self._tag_frames(consumed, batch)
        self.consume(0, consumed)
        return batch.out.shape[0]

    def _tag_frames(self, count, batch):
        read = self.nitems_read(0)
        written = self.nitems_written(0)
        out_index = np.full(count, -1, dtype=np.int64)
        out_index[batch.kept] = np.arange(batch.kept.size)
        for tag in self.get_tags_in_window(0, 0, count):
            target = out_index[tag.offset - read]
            if target >= 0:
                self.add_item_tag(0, written + int(target), tag.key, tag.value, tag.srcid)
        # Two tags a frame, the block's largest cost after the decode on the cpu backend: 3 us
        # a frame with a PMT built per tag, 1.2 us with the PMT values shared (a GNU Radio
        # 3.10.5 sync block adding 30000 frames' tags; 3000 WiFi 1944 frames took 9 ms
        # of CPU against 43 ms for their decode).  What is left is add_item_tag itself.
        add = self.add_item_tag
        if self.frame_tags:
            for i, (iterations, valid) in enumerate(zip(batch.iterations.tolist(), batch.valid.tolist())):
                add(0, written + i, _KEY_ITERATIONS, _iterations_pmt(iterations))
                add(0, written + i, _KEY_VALID, _VALID[valid])
        for i in np.flatnonzero(batch.bad_llr).tolist():
            self.add_item_tag(0, written + i, _KEY_BAD_LLR, pmt.PMT_T)

    def publish_stats(self):
        """Send the counters on the ``stats`` port now."""
        self._last_stats = time.monotonic()
        self.message_port_pub(pmt.intern(STATS_PORT), stats_to_pmt(self.core.stats()))

    def stop(self):
        self.publish_stats()
        self.core.close()
        return True


class ldpc_decoder(_FrameDecoderBlock):
    """LDPC Decoder: float LLR vectors (vlen n) in, unpacked bits (vlen k or n) out.

    Parameters
    ----------
    code : str or None
        Code name (``gpuldpc.codes.names()``) or an alist / base-matrix file; None gives
        ``"wifi-1944-1/2"``, or the 5G NR code of ``k`` and ``e``.
    k, e, rv, bg, n_ref, qm : 5G NR code block (instead of ``code``)
        ``k`` information bits received as ``e`` LLRs of redundancy version ``rv`` (0..3),
        or several transmissions soft-combined: ``rv=[0, 2]``, their LLRs side by side in
        one input vector (``e`` each, or ``e=[e0, e2]``); base graph ``bg`` (1, 2, None =
        TS 38.212's choice), LBRM ``n_ref``, bit interleaver ``qm``
        (:func:`gpuldpc.streaming.nr_code`).  ``output="codeword"`` gives the decisions
        at ``code.decoded_positions`` (the mother codeword less the block columns pruned
        away, :func:`gpuldpc.codes.shaping.prune`).
    algorithm : {"nms", "oms", "spa"}
    schedule : {"layered", "flooding"}
    max_iterations : int
    early_stop : bool
    backend : {"auto", "cuda", "cpu", "reference"}
    positive_llr_bit : {1, 0}
        Which bit a positive input LLR means: 1 = GNU Radio's soft decoders and
        gr-fec (default), 0 = textbook ``ln P(0)/P(1)``.
    output : {"info", "codeword"}
        k information bits or all n codeword bits per frame.
    on_failure : {"pass", "drop"}
        Frames failing the syndrome check are passed on (tag ``valid`` False)
        or dropped; both counted in ``stats``.
    on_bad_llr : {"erase", "drop"}
        Frames whose LLRs hold NaN or +-inf: decoded with NaN as 0 (an erasure) and
        +-inf as the largest LLR of its sign, tagged ``bad_llr``; or dropped with their
        tags.  Counted in ``stats`` as ``bad_llr_frames``.
    preset : {"latency", "throughput"}, batch : int
        Frames per decode call (``batch`` > 0 overrides the preset's).
    devices, streams : GPU device ids and streams (cuda backend; None = its default).
    alpha, beta : min-sum scale and offset.
    stats_interval : float
        Seconds between ``stats`` messages.
    frame_tags : bool
        Tag every output frame with ``iterations`` and ``valid`` (True, the default); False
        leaves them out (``bad_llr`` tags and the input's tags still move with their frames).
    precision : {"float32", "float16", "int16", "int8"}
        Message arithmetic (:class:`gpuldpc.Decoder`): "float16" runs min-sum in binary16,
        two frames a GPU thread (cuda, or the reference decoder: the same bits), "int16" and
        "int8" fixed point on the cpu backend.
    soft_output : {None, "posterior", "extrinsic"}
        A second output port of float vectors: each frame's posterior LLRs (``n``; a 5G NR
        block: its ``decoded_positions``), or those less the channel LLRs, in the input's
        sign (:mod:`gpuldpc.soft`; cuda: the throughput preset).
    """

    def __init__(self, code=None, algorithm="nms", schedule="layered",
                 max_iterations=10, early_stop=True, backend="auto", positive_llr_bit=1,
                 output="info", on_failure="pass", preset="throughput", batch=0,
                 devices=None, streams=None, alpha=0.75, beta=0.5, stats_interval=1.0,
                 precision="float32", on_bad_llr="erase", k=None, e=None, rv=0, bg=None,
                 n_ref=None, qm=None, soft_output=None, frame_tags=True):
        code = require_kind(block_code(code, k, e, rv, bg, n_ref, qm), binary=True)
        super().__init__("ldpc_decoder", stats_interval, frame_tags, code=code, algorithm=algorithm,
                         schedule=schedule, max_iterations=max_iterations,
                         early_stop=early_stop, backend=backend,
                         positive_llr_bit=positive_llr_bit, output=output,
                         on_failure=on_failure, on_bad_llr=on_bad_llr, preset=preset, batch=batch,
                         devices=devices, streams=streams, alpha=alpha, beta=beta,
                         precision=precision, soft_output=soft_output)


class nb_ldpc_decoder(_FrameDecoderBlock):
    """NB-LDPC Decoder: GF(q) codes; bit LLRs (vlen n*m) or symbol LLRs (n*q) in.

    Output: symbols (element integers, vlen k or n) or their binary image
    (LSB first, vlen k*m or n*m).  ``positive_llr_bit`` applies to bit LLRs;
    symbol LLRs are in the core's convention ``L(a) = ln P(best)/P(a) >= 0``.
    Other parameters as :class:`ldpc_decoder`; ``algorithm`` is one of
    ``"minmax"``, ``"mmma"``, ``"tmm"`` (trellis Min-Max, check messages scaled by 0.75), ``"tmm1"``
    (T-MM with step 5's pairs from first minima: faster), ``"fft-spa"``.
    """

    def __init__(self, code="gf32-744-653", algorithm="minmax", schedule="layered",
                 max_iterations=10, early_stop=True, backend="auto", positive_llr_bit=1,
                 llr_input="bit", output="info", output_format="symbols", on_failure="pass",
                 preset="throughput", batch=0, devices=None, streams=None, stats_interval=1.0,
                 on_bad_llr="erase", frame_tags=True):
        require_kind(code, binary=False)
        super().__init__("nb_ldpc_decoder", stats_interval, frame_tags, code=code, algorithm=algorithm,
                         schedule=schedule, max_iterations=max_iterations,
                         early_stop=early_stop, backend=backend,
                         positive_llr_bit=positive_llr_bit, llr_input=llr_input, output=output,
                         output_format=output_format, on_failure=on_failure,
                         on_bad_llr=on_bad_llr, preset=preset, batch=batch, devices=devices,
                         streams=streams)

"""Frame-stream adapters: what a streaming block (GNU Radio or other) runs.

The GNU Radio blocks in ``gnuradio.gpuldpc`` are thin skins over the two classes
here, so that their whole work path -- code lookup, vector lengths, LLR sign,
batching and pipelining, bad frames, backend faults, drop/pass of failed frames and
the counters -- runs and is tested without GNU Radio (the GPU machine has none).

Stream layout (one stream item = one frame, as in gr-ldpc-toolbox):

================  ==========================  ================================
block             input vector (per frame)    output vector (per frame)
================  ==========================  ================================
binary decoder    float32 bit LLRs, ``n``      uint8 bits, ``k`` (``output=
                                               "info"``) or ``n`` ("codeword")
GF(q) decoder     float32 bit LLRs ``n*m``     uint8 symbols ``k`` / ``n``, or
                  (``llr_input="bit"``) or     their bits ``k*m`` / ``n*m``
                  symbol LLRs ``n*q``          (``output_format="bits"``)
                  (``llr_input="symbol"``)
binary encoder    uint8 info bits ``k``        uint8 codeword bits ``n``
GF(q) encoder     uint8 symbols ``k`` or       uint8 symbols ``n`` or bits
                  bits ``k*m``                 ``n*m``
================  ==========================  ================================

m = log2(q); the binary image of a GF(q) symbol is LSB first (:mod:`gpuldpc.gf`).

Soft output (``soft_output="posterior"`` or ``"extrinsic"``, :mod:`gpuldpc.soft`): a second
float32 vector per frame, ``vlen_soft`` values: the decoder's ``DecodeResult.llr`` (binary:
``n`` LLRs, a shaped code's at its ``decoded_positions``; GF(q): ``n*q`` costs) in the input's
LLR sign (``positive_llr_bit``), as ``FrameBatch.llr``.

LLR sign at the input (``positive_llr_bit``): GNU Radio's soft decoders and
gr-fec deliver ``l`` with *positive = bit 1*; the core (and the papers) use
``L = ln P(0)/P(1)``, positive = bit 0.  With ``positive_llr_bit=1`` the input
is negated, ``L = -l``; with ``positive_llr_bit=0`` it is taken as is.  Symbol
LLRs (``llr_input="symbol"``) are in the core's Min-Max convention
``L_n(a) = ln P(x_n = s_n)/P(x_n = a) >= 0`` and are not sign converted.

The frames are handed to :class:`gpuldpc.Decoder` where they lie (built with
``positive_llr_bit``: the GPU kernels and the C++ load apply the sign), so they must
stay unchanged until their batch is finished; how they reach a GPU (page-locked in
place, or staged) is the backend's business.  :meth:`StreamDecoder.work`
is a block's ``general_work`` step: it hands the next batch over before it waits for
the previous one (:meth:`StreamDecoder.submit` / :meth:`StreamDecoder.finish`), so
the copy-in and decoding of one batch overlap the output of the other, and a
batch's input is consumed only once it is decoded.

Never fatal for a live stream (issue 19):

* frames with NaN or +-inf LLRs (:mod:`gpuldpc.bad_llr`) are found where the backend
  loads them; ``on_bad_llr="erase"`` decodes them with NaN as an erasure (0) and +-inf
  saturated and marks them (``FrameBatch.bad_llr``), ``"drop"`` leaves them out; the
  other frames are decoded exactly as without them; counted as ``bad_llr_frames``;
* a backend fault (:class:`gpuldpc.errors.BackendFault`: a CUDA error, a lost device,
  device memory exhausted; also ``MemoryError`` and PyCUDA's own errors) logs one
  line, moves the stream to the CPU backend for good (``backend`` changes,
  ``fallbacks`` counts) and decodes the batches in flight again there, so no frame is
  lost; any other exception is a programming error and propagates.
"""
from __future__ import annotations

import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import codes, gf, memory_maps
from .codes.code import Code
from .decoders.front import Decoder
from .errors import BackendFault, BackendUnavailable
from .row_copy import copy_rows

OUTPUTS = ("info", "codeword")
LLR_INPUTS = ("bit", "symbol")
OUTPUT_FORMATS = ("symbols", "bits")
ON_FAILURE = ("pass", "drop")
ON_BAD_LLR = ("erase", "drop")
PRESETS = ("latency", "throughput")

def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")


_BASE_SUFFIX = re.compile(r"^(?P<path>.+):(?P<key>[zq])=(?P<value>\d+)$")
_NR_BLOCK = re.compile(r"^nr(-bg(?P<bg>\d+))?(-z(?P<z>\d+))?-k(?P<k>\d+)-e(?P<e>\d+)(-rv(?P<rv>\d+))?"
                       r"(-nref(?P<n_ref>\d+))?(-qm(?P<qm>\d+))?$")


def _nr_block(match):
    """:func:`nr_code` of a name such as ``nr-k8448-e12672-rv2`` (the names NR code blocks
    carry, ``nr-bg1-z384-k8448-e12672-rv0``, are accepted as they are)."""
    args = {key: int(value) for key, value in match.groupdict().items() if value is not None}
    z = args.pop("z", None)
    code = nr_code(args.pop("k"), args.pop("e"), **args)
    if z is not None and z != code.z:
        raise ValueError(f"code {match.string!r}: z={z}, but TS 38.212 gives this block z={code.z}")
    return code


def nr_code(k, e, rv=0, bg=None, n_ref=None, qm=None):
    """The code of the blocks' 5G NR fields: one code block, k information bits, sent as E
    bits of redundancy version ``rv`` (:func:`gpuldpc.codes.nr`).

    ``rv`` is 0..3, or a list of them (``[0, 2]``): the block's transmissions in that order,
    soft-combined (:func:`gpuldpc.codes.combine`): a decoder takes their LLRs side by side
    (E LLRs each) and an encoder gives their bits side by side.  ``e`` is one E for every
    transmission or a list of one per rv.  ``bg`` (1, 2, None = as TS 38.212 chooses),
    ``n_ref`` (LBRM) and ``qm`` (bit interleaver) are those of :func:`gpuldpc.codes.nr`, whose
    errors name the wrong field and its range (k with no lifting size, E below
    ceil(k / 0.95), rv outside 0..3, ...).  The same arguments give the same object, so GRC
    can evaluate a block's vector lengths as often as it likes.  What the blocks'
    ``k=, e=, rv=, ...`` arguments, their GRC fields and the ``nr-k<k>-e<E>[-rv<rv>]`` names
    all go through.
    """
    rvs = tuple(rv) if isinstance(rv, (list, tuple, np.ndarray)) else (rv,)
    if not rvs:
        raise ValueError("rv=[]: give a redundancy version 0..3, or a list of those sent")
    es = tuple(e) if isinstance(e, (list, tuple, np.ndarray)) else (e,) * len(rvs)
    if len(es) != len(rvs):
        raise ValueError(f"e={list(es)!r} gives {len(es)} E for the {len(rvs)} transmissions of "
                         f"rv={list(rvs)!r}: give one E, or one per rv")
    return _nr_code(k, es, rvs, bg, n_ref, qm)


@lru_cache(maxsize=64)
def _nr_code(k, es, rvs, bg, n_ref, qm):
    parts = [codes.nr(k, e, rv=rv, bg=bg, n_ref=n_ref, qm=qm) for e, rv in zip(es, rvs)]
    return parts[0] if len(parts) == 1 else codes.combine(*parts)


def block_code(code=None, k=None, e=None, rv=0, bg=None, n_ref=None, qm=None,
               default: str = "wifi-1944-1/2"):
    """A block's code from its arguments: ``code`` (a name, a matrix file, a Code:
    :func:`load_code`; None = ``default``), or the 5G NR fields ``k`` and ``e`` (with ``rv``,
    ``bg``, ``n_ref``, ``qm``: :func:`nr_code`)."""
    if k is None and e is None:
        return load_code(default if code is None else code)
    if code is not None:
        raise ValueError(f"code={code!r} and the 5G NR fields k={k!r}, e={e!r} both given: "
                         "give a code, or k and e (with rv, bg, n_ref, qm)")
    if k is None or e is None:
        raise ValueError(f"a 5G NR code needs both k and e, got k={k!r}, e={e!r}")
    return nr_code(k, e, rv, bg, n_ref, qm)


@lru_cache(maxsize=64)
def load_code(spec: str) -> Code:
    """Resolve a block's ``code`` parameter: a registry name or a matrix file.

    ``spec`` is one of

    * a name from ``gpuldpc.codes.names()`` (``"wifi-1944-1/2"``, ``"gf32-744-653"``,
      the 5G NR mother codes ``"nr-bg1-z384"``, DVB-S2 ``"dvbs2-<normal|short>-<rate>"``,
      CCSDS ``"ccsds-ar4ja-<k>-<rate>"`` and ``"ccsds-c2"`` (a DVB-S2 or AR4JA name with a
      frame, k or rate the family does not have: the registry's error names the valid values);
    * a 5G NR code block with rate matching, ``"nr-k<k>-e<E>[-rv<rv>]"`` (optionally
      ``-bg<1|2>``, ``-nref<N>``, ``-qm<Qm>``; :func:`gpuldpc.codes.nr`), e.g.
      ``"nr-k8448-e12672-rv2"``: E LLRs in, k bits out; several of them joined by ``+``
      (``"nr-k1000-e1200-rv0+nr-k1000-e1200-rv2"``) are one code block's transmissions
      soft-combined (:func:`gpuldpc.codes.combine`): their LLRs side by side in, k bits out;
    * the path of an alist file (binary or GF(q), :func:`gpuldpc.codes.from_alist`);
    * the path of a QC base-matrix file followed by ``:z=<expansion>`` for a
      binary code or ``:q=<field size>`` for a GF(q) code, e.g.
      ``"B.txt:z=81"`` (:func:`gpuldpc.codes.from_base_matrix`).

    A :class:`~gpuldpc.codes.Code` is returned as is.  Results are cached, so
    GRC can call this for every vector length it evaluates.  Malformed files
    raise :class:`gpuldpc.codes.CodeFormatError` naming the file and line.
    """
    if isinstance(spec, (Code, codes.ShapedCode)):
        return spec
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"code must be a code name or a matrix file path (str), got {spec!r}")
    try:
        return codes.get(spec)
    except codes.UnknownCodeError as exc:
        unknown = exc
    blocks = [_NR_BLOCK.match(part) for part in spec.split("+")]
    if all(blocks):
        parts = [_nr_block(block) for block in blocks]
        return parts[0] if len(parts) == 1 else codes.combine(*parts)
    base = _BASE_SUFFIX.match(spec)
    path = os.path.expanduser(base.group("path") if base else spec)
    if not os.path.isfile(path):
        raise ValueError(f"code {spec!r}: {unknown}; or give an existing .alist file, or a "
                         "base-matrix file as '<file>:z=<expansion>' (binary) or "
                         "'<file>:q=<field size>' (GF(q))") from None
    if base:
        return codes.from_base_matrix(path, **{base.group("key"): int(base.group("value"))})
    if not path.endswith(".alist"):
        raise ValueError(f"code file {spec!r}: an alist file must end in .alist; a base-matrix "
                         f"file needs its expansion: '{spec}:z=<expansion>' (binary) or "
                         f"'{spec}:q=<field size>' (GF(q))")
    return codes.from_alist(path)


def decoder_lengths(code, output: str = "info", llr_input: str = "bit",
                    output_format: str = "symbols") -> tuple[int, int]:
    """``(vlen_in, vlen_out)`` of a decoder block for ``code`` (name, file or Code).

    See the module docstring's table; ``llr_input`` and ``output_format``
    matter for GF(q) codes only.  A shaped code (5G NR block) takes its E transmitted
    LLRs; ``output="codeword"`` gives the decisions at its ``decoded_positions`` (the
    mother codeword less the block columns pruned away, :func:`gpuldpc.codes.shaping.prune`).
    """
    code = load_code(code)
    _check_choice("output", output, OUTPUTS)
    _check_choice("llr_input", llr_input, LLR_INPUTS)
    _check_choice("output_format", output_format, OUTPUT_FORMATS)
    length = code.k if output == "info" else code.decoded.n if isinstance(code, codes.ShapedCode) else code.n
    if code.is_binary:
        return code.n, length
    m = code.bits_per_symbol
    vlen_in = code.n * m if llr_input == "bit" else code.n * code.q
    return vlen_in, length * m if output_format == "bits" else length


def encoder_lengths(code, symbols: bool = True) -> tuple[int, int]:
    """``(vlen_in, vlen_out)`` of an encoder block: ``(k, n)`` symbols, or bits if not ``symbols``."""
    code = load_code(code)
    m = 1 if symbols else code.bits_per_symbol
    return code.k * m, code.n * m


class FrameBatch(NamedTuple):
    """What :meth:`StreamDecoder.finish` returns for a batch of ``frames`` input frames.

    out : uint8 [kept, vlen_out]
        The frames that leave the block (all of them, less those dropped by
        ``on_failure="drop"`` and ``on_bad_llr="drop"``); may be a view of the
        decoder's result, copy it out before the next call.
    kept : int array [kept]
        Index (0..frames-1) of each output frame in the input batch.
    iterations, valid, bad_llr : [kept]
        Per output frame: iterations run, syndrome zero, LLRs held NaN/+-inf (erased).
    llr : float32 [kept, vlen_soft] or None
        The soft output (``soft_output``; see the module docstring), else None.
    """

    out: np.ndarray
    kept: np.ndarray
    iterations: np.ndarray
    valid: np.ndarray
    bad_llr: np.ndarray
    llr: np.ndarray | None = None


@dataclass
class Counters:
    """Running totals of a :class:`StreamDecoder` (read with :meth:`StreamDecoder.stats`)."""

    frames: int = 0
    failures: int = 0
    dropped: int = 0
    bad_llr_frames: int = 0
    iterations: int = 0
    fallbacks: int = 0
    busy_s: float = 0.0


class Pending:
    """A batch handed to :meth:`StreamDecoder.submit`; :meth:`StreamDecoder.finish` ends it."""

    __slots__ = ("frames", "decoder", "ticket")

    def __init__(self, frames, decoder, ticket):
        self.frames, self.decoder, self.ticket = frames, decoder, ticket

    @property
    def count(self) -> int:
        return self.frames.shape[0]


def is_backend_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is a backend's failure (survived by moving to the CPU) rather than a
    programming error: :class:`BackendFault`, ``MemoryError``, or an error raised by PyCUDA."""
    return isinstance(exc, (BackendFault, MemoryError)) or type(exc).__module__.startswith("pycuda")


_GPU_OPTIONS = ("devices", "streams", "preset")


class StreamDecoder:
    """Decode frames arriving as vectors of a stream (the decoder blocks' work path).

    Parameters
    ----------
    code : str or Code
        Code name or matrix file (:func:`load_code`).
    positive_llr_bit : {1, 0}
        Which bit a positive input LLR means (see the module docstring).
        1 = GNU Radio's convention (default), 0 = the textbook one.
    output : {"info", "codeword"}
    on_failure : {"pass", "drop"}
        What to do with a frame whose decided word fails the syndrome check:
        pass it on (its ``valid`` is False) or drop it; both are counted.
    on_bad_llr : {"erase", "drop"}
        Frames with NaN/+-inf LLRs: decoded with NaN as 0 and +-inf saturated, and
        marked (``bad_llr``); or dropped.  Both counted (``bad_llr_frames``).
    llr_input : {"bit", "symbol"}
        GF(q) codes: bit LLRs of the binary image or symbol LLRs.
    output_format : {"symbols", "bits"}
        GF(q) codes: element integers or their binary image (LSB first).
    batch : int
        Frames per decode call; 0 = from ``preset``.
    preset : {"latency", "throughput"}
        Small batches (each frame leaves at once) or large ones (best
        throughput, a batch's frames wait for each other).  Also handed to the
        backend (GPU batch shape).
    devices, streams : optional
        GPU device ids and stream count, handed to the backend when given.
    warn : callable, optional
        Where the one line about a fallback goes (default: the ``gpuldpc`` logger).
    **decoder_args
        ``algorithm``, ``schedule``, ``max_iterations``, ``early_stop``,
        ``backend``, ``alpha``, ``beta``, ``precision``, ``threads``, ``soft_output``:
        as for :class:`gpuldpc.Decoder` (``soft_output``: ``vlen_soft`` floats a frame,
        else ``vlen_soft`` is 0).
    """

    def __init__(self, code, positive_llr_bit: int = 1, output: str = "info",
                 on_failure: str = "pass", on_bad_llr: str = "erase", llr_input: str = "bit",
                 output_format: str = "symbols", batch: int = 0, preset: str = "throughput",
                 devices=None, streams=None, warn=None, **decoder_args):
        self.code = load_code(code)
        if positive_llr_bit not in (0, 1) or isinstance(positive_llr_bit, bool):
            raise ValueError(f"positive_llr_bit must be 1 (GNU Radio: positive LLR = bit 1) or "
                             f"0 (textbook: positive LLR = bit 0), got {positive_llr_bit!r}")
        _check_choice("on_failure", on_failure, ON_FAILURE)
        _check_choice("on_bad_llr", on_bad_llr, ON_BAD_LLR)
        _check_choice("preset", preset, PRESETS)
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 0:
            raise ValueError(f"batch must be an integer >= 0 (0 = from the preset), got {batch!r}")
        if decoder_args.get("packed"):
            raise ValueError("packed=True: the decoder blocks write one bit a byte (GNU Radio's unpacked bytes); "
                             "pack them downstream (blocks.unpacked_to_packed_bb(1, gr.GR_MSB_FIRST))")
        self.vlen_in, self.vlen_out = decoder_lengths(self.code, output, llr_input, output_format)
        self.output = output
        self.on_failure = on_failure
        self.on_bad_llr = on_bad_llr
        self.llr_input = llr_input
        self.output_format = output_format
        self._warn = warn or logging.getLogger("gpuldpc").warning
        options = {"preset": preset}
        if devices is not None:
            options["devices"] = devices
        if streams is not None:
            options["streams"] = streams
        self._args = dict(decoder_args, **options)
        self.decoder = self._make_decoder(positive_llr_bit, **self._args)
        soft = decoder_args.get("soft_output") is not None
        self.vlen_soft = decoder_lengths(self.code, "codeword")[1] * (1 if self.code.is_binary else self.code.q) \
            if soft else 0
        self.batch = int(batch) or self.decoder.preferred_batch(preset)
        self._lock = threading.Lock()
        self._counters = Counters()
        self._outstanding = 0
        self._busy_since = 0.0
        self._failed: list[Decoder] = []
        self._retired: list[Decoder] = []
        self._in_flight: Pending | None = None     # the batch :meth:`work` left in flight
        self._buffers: list[tuple] = []            # (start, stop, bytes locked) of input buffers seen by
        self._buffers_decoder = None               # this decoder (:meth:`_lock_buffer`)

    def _make_decoder(self, positive_llr_bit, **args) -> Decoder:
        return Decoder(self.code, on_bad_llr="erase", positive_llr_bit=positive_llr_bit, **args)

    @property
    def backend(self) -> str:
        """The backend the decoder runs on (``cuda``, ``cpu`` or ``reference``)."""
        return self.decoder.backend

    @property
    def positive_llr_bit(self) -> int:
        return self.decoder.settings.positive_llr_bit

    @positive_llr_bit.setter
    def positive_llr_bit(self, value: int):
        """Decode the batches handed over from now on with the other sign convention (GRC's
        run-time callback): a new decoder; the old one finishes its batches in flight and
        is released by :meth:`close`."""
        if value != self.positive_llr_bit:
            self._retired.append(self.decoder)
            self.decoder = self._make_decoder(value, **self._current_args())

    def _frames(self, frames) -> np.ndarray:
        """``frames`` as [count, vlen_in] (a view), or ValueError naming the expected length."""
        frames = np.asarray(frames)
        if frames.ndim == 1 and frames.size % self.vlen_in == 0:
            frames = frames.reshape(-1, self.vlen_in)
        if frames.ndim != 2 or frames.shape[1] != self.vlen_in:
            raise ValueError(f"code {self.code.name!r}: each input frame must be a vector of "
                             f"{self.vlen_in} LLRs ({self._input_description()}), got shape "
                             f"{frames.shape}; set the upstream vector length to {self.vlen_in}")
        return frames

    def _decoder_input(self, frames: np.ndarray) -> np.ndarray:
        if self.llr_input == "symbol" and not self.code.is_binary:
            return frames.reshape(frames.shape[0], self.code.n, self.code.q)
        return frames

    def submit(self, frames) -> Pending:
        """Hand a batch over (float [count, vlen_in]); returns at once.  ``frames`` must
        stay unchanged until :meth:`finish` of the returned batch returns."""
        frames = self._frames(frames)
        with self._lock:
            if self._outstanding == 0:
                self._busy_since = time.perf_counter()
            self._outstanding += 1
        decoder = self.decoder
        try:
            ticket = decoder.submit(self._decoder_input(frames))
        except Exception as exc:
            if not is_backend_fault(exc):
                self._idle()
                raise
            self._fall_back(exc)
            ticket = None
        return Pending(frames, decoder, ticket)

    def finish(self, pending: Pending) -> FrameBatch:
        """Wait for a submitted batch; apply the policies, update the counters."""
        try:
            result = self._result(pending)
        finally:
            self._idle()
        frames = pending.count
        valid = np.asarray(result.valid, dtype=bool)
        bad = np.asarray(result.bad_llr, dtype=bool)
        keep = np.ones(frames, dtype=bool)
        if self.on_failure == "drop":
            keep &= valid
        if self.on_bad_llr == "drop":
            keep &= ~bad
        kept = np.arange(frames) if keep.all() else np.flatnonzero(keep)
        words = self._shape_output(result)
        if kept.size != frames:
            words = words[kept]
        with self._lock:
            c = self._counters
            c.frames += frames
            c.failures += int(frames - np.count_nonzero(valid))
            c.dropped += int(frames - kept.size)
            c.bad_llr_frames += int(np.count_nonzero(bad))
            c.iterations += int(np.sum(result.iterations))
        llr = None if result.llr is None else result.llr.reshape(frames, -1)
        if llr is not None and kept.size != frames:
            llr = llr[kept]
        return FrameBatch(words, kept, np.asarray(result.iterations, dtype=np.int32)[kept],
                          valid[kept], bad[kept], llr)

    def work(self, waiting, out: np.ndarray | None = None,
             soft_out: np.ndarray | None = None) -> tuple[int, FrameBatch | None]:
        """One step of a block's ``general_work``, pipelined: ``(consumed, batch)``.

        ``waiting``: the frames waiting at the input [count, vlen_in]; the first of them are
        the batch in flight, if any (its input is consumed only once it is decoded).  The
        frames after it, up to a batch, are handed over; then the batch in flight is
        finished -- or, when nothing more waits, the batch just handed over, so the last
        frames of a stream are never held back.  The finished batch's words are copied
        (by several threads: :mod:`gpuldpc.row_copy`) to ``out[:kept]`` when ``out`` is
        given (and the soft output to ``soft_out[:kept]``); ``consumed`` input frames are done with.
        Returns ``(0, None)`` when a batch was handed over and is left in flight.
        ``waiting`` in memory NumPy does not own, in a shared mapping (GNU Radio's stream
        buffers) is page-locked whole on the cuda backend (:meth:`_lock_buffer`): the caller
        keeps such a buffer mapped until :meth:`close`.
        """
        self._lock_buffer(waiting)
        pending = self._in_flight
        first = pending.count if pending is not None else 0
        new = min(len(waiting) - first, self.batch)
        handed = self.submit(waiting[first:first + new]) if new > 0 else None
        if pending is None:
            if handed is None or len(waiting) > new:      # more frames wait: finish it next step
                self._in_flight = handed
                return 0, None
            pending, handed = handed, None
        self._in_flight = handed
        batch = self.finish(pending)
        if out is not None:
            copy_rows(out[:batch.out.shape[0]], batch.out)
        if soft_out is not None and batch.llr is not None:
            copy_rows(soft_out[:batch.llr.shape[0]], batch.llr)
        return pending.count, batch

    def _lock_buffer(self, frames: np.ndarray):
        """Page-lock, once, the buffer that ``frames`` lie in, when it is memory NumPy does not
        own in a shared mapping: GNU Radio's stream buffers (the double map of
        :mod:`gpuldpc.memory_maps`, the same every call while the flowgraph runs), handed
        whole to :meth:`gpuldpc.Decoder.page_lock` so that every batch in it is copied to
        the GPU where it lies instead of being staged (docs/blocks.md "GNU Radio's
        buffers").  Only on the cuda backend; what was seen is remembered per decoder (a
        new decoder after a fallback or a sign change starts afresh; :meth:`close`
        unlocks)."""
        if self._buffers_decoder is not self.decoder:
            self._buffers, self._buffers_decoder = [], self.decoder
        if (self.decoder.backend != "cuda" or not isinstance(frames, np.ndarray) or frames.size == 0
                or memory_maps.numpy_owner(frames) is not None):
            return
        start = frames.ctypes.data
        stop = start + frames.nbytes
        if any(a <= start and stop <= b for a, b, _ in self._buffers):
            return
        run = memory_maps.mapping_of(start, stop - start)
        if run is None:
            self._buffers.append((start, stop, 0))
        else:
            locked = self.decoder.page_lock(run.array()) if run.shared else 0
            self._buffers.append((run.start, run.stop, locked))

    def decode_frames(self, frames) -> FrameBatch:
        """Decode ``frames`` (float [count, vlen_in], any count) now: ``finish(submit(frames))``.
        A wrong vector length raises ``ValueError`` naming the expected one."""
        return self.finish(self.submit(frames))

    def _result(self, pending: Pending):
        """The batch's DecodeResult; after a backend fault, decoded again on the fallback."""
        if pending.ticket is not None and not any(pending.decoder is d for d in self._failed):
            try:
                return pending.ticket.result()
            except Exception as exc:
                if not is_backend_fault(exc):
                    raise
                self._fall_back(exc)
        return self.decoder.decode(self._decoder_input(pending.frames))

    def _fall_back(self, exc: BaseException):
        """Move to the CPU backend (the reference decoder without the compiled module)."""
        failed = self.decoder
        if any(failed is d for d in self._failed):
            return                     # a second batch of the same failure: already moved
        self._failed.append(failed)
        args = self._host_args()
        for backend in ("cpu", "reference"):
            if backend == failed.backend:
                continue
            try:
                self.decoder = self._make_decoder(self.positive_llr_bit, backend=backend, **args)
                break
            except BackendUnavailable:
                continue
        else:
            raise exc
        with self._lock:
            self._counters.fallbacks += 1
        self._warn(f"gpuldpc: backend {failed.backend!r} failed ({type(exc).__name__}: {exc}); code "
                   f"{self.code.name!r} is decoded on {self.decoder.backend!r} from now on, the batches "
                   "in flight again")
        try:
            failed.close()
        except Exception:  # noqa: BLE001  (a failed device may fail to release: nothing to save)
            pass

    def _host_args(self) -> dict:
        """The decoder arguments for a host backend: without the GPU's options and the
        backend, float16 arithmetic (GPU only) as float32."""
        args = {k: v for k, v in self._args.items() if k not in _GPU_OPTIONS and k != "backend"}
        if args.get("precision") == "float16":
            args["precision"] = "float32"
        return args

    def _current_args(self) -> dict:
        """The decoder arguments of the backend in use (the fallback's after a fallback)."""
        return dict(self._host_args(), backend=self.decoder.backend) if self._failed else self._args

    def _idle(self):
        with self._lock:
            self._outstanding -= 1
            if self._outstanding == 0:
                self._counters.busy_s += time.perf_counter() - self._busy_since

    def _shape_output(self, result) -> np.ndarray:
        words = result.info if self.output == "info" else result.bits
        if not self.code.is_binary and self.output_format == "bits":
            words = gf.GF(self.code.q).to_bits(words).reshape(words.shape[0], -1)
        return words

    def _input_description(self) -> str:
        if self.code.is_binary:
            return f"n={self.code.n} bit LLRs"
        if self.llr_input == "bit":
            return f"n*m={self.code.n}*{self.code.bits_per_symbol} bit LLRs"
        return f"n*q={self.code.n}*{self.code.q} symbol LLRs"

    def stats(self) -> dict:
        """Totals so far: frames, failures, dropped, bad_llr_frames, mean_iterations,
        coded_mbps, fallbacks, backend, and ``page_locked_bytes``: the input buffers'
        bytes the decoder in use holds page-locked in place (:meth:`_lock_buffer`).

        ``coded_mbps`` = coded bits decoded per second of decoder time (n * m * frames /
        time with at least one batch in flight), excluding time the block waits for input.
        """
        with self._lock:
            c = Counters(**vars(self._counters))
            if self._outstanding:                  # a pipelined stream is never idle: count the ongoing stretch
                c.busy_s += time.perf_counter() - self._busy_since
        coded_bits = c.frames * self.code.n * self.code.bits_per_symbol
        return {
            "frames": c.frames,
            "failures": c.failures,
            "dropped": c.dropped,
            "bad_llr_frames": c.bad_llr_frames,
            "mean_iterations": c.iterations / c.frames if c.frames else 0.0,
            "coded_mbps": coded_bits / c.busy_s / 1e6 if c.busy_s > 0 else 0.0,
            "fallbacks": c.fallbacks,
            "backend": self.backend,
            "page_locked_bytes": sum(locked for _, _, locked in self._buffers)
            if self._buffers_decoder is self.decoder else 0,
        }

    def close(self):
        """Release the decoders' resources (GPU memory, contexts, page-locked input buffers)
        where they hold any."""
        for decoder in self._retired + [self.decoder]:
            decoder.close()
        self._retired.clear()
        self._buffers.clear()          # unlocked: a buffer seen again is looked up again


class StreamEncoder:
    """Encode frames arriving as vectors of a stream (the encoder blocks' work path).

    ``symbols=True`` (default): GF(q) element integers in and out (for binary
    codes, bits); ``symbols=False``: the binary image (LSB first), ``m`` bits
    per symbol, in and out.  The output equals ``code.encode``.
    """

    def __init__(self, code, symbols: bool = True):
        self.code = load_code(code)
        self.symbols = bool(symbols)
        self.vlen_in, self.vlen_out = encoder_lengths(self.code, self.symbols)

    def encode_frames(self, frames) -> np.ndarray:
        """uint8 [count, vlen_in] -> uint8 [count, vlen_out]."""
        frames = np.asarray(frames)
        if frames.ndim != 2 or frames.shape[1] != self.vlen_in:
            raise ValueError(f"code {self.code.name!r}: each input frame must be a vector of "
                             f"{self.vlen_in} {'symbols' if self.symbols else 'bits'}, got shape "
                             f"{frames.shape}; set the upstream vector length to {self.vlen_in}")
        if self.symbols or self.code.is_binary:
            return self.code.encode(frames)
        field = gf.GF(self.code.q)
        info = field.from_bits(frames.reshape(frames.shape[0], self.code.k, -1))
        return field.to_bits(self.code.encode(info)).reshape(frames.shape[0], -1)

"""Frame-stream adapters: what a streaming block (GNU Radio or other) runs.

The GNU Radio blocks in ``gnuradio.gpuldpc`` are thin skins over the two classes
here, so that their whole work path -- code lookup, vector lengths, LLR sign
conversion, staging, batching, drop/pass of failed frames and the counters --
runs and is tested without GNU Radio (the GPU machine has none).

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

LLR sign at the input (``positive_llr_bit``): GNU Radio's soft decoders and
gr-fec deliver ``l`` with *positive = bit 1*; the core (and the papers) use
``L = ln P(0)/P(1)``, positive = bit 0.  With ``positive_llr_bit=1`` the input
is negated, ``L = -l``; with ``positive_llr_bit=0`` it is taken as is.  Symbol
LLRs (``llr_input="symbol"``) are in the core's Min-Max convention
``L_n(a) = ln P(x_n = s_n)/P(x_n = a) >= 0`` and are not sign converted.

Staging: :meth:`StreamDecoder.decode_frames` copies (and sign converts) its
input into an array it owns before decoding, so a caller may pass views of
foreign buffers (GNU Radio's ``input_items``) and nothing refers to them after
the call returns.
"""
from __future__ import annotations

import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import channel, codes, gf
from .codes.code import Code
from .decoders.front import Decoder

OUTPUTS = ("info", "codeword")
LLR_INPUTS = ("bit", "symbol")
OUTPUT_FORMATS = ("symbols", "bits")
ON_FAILURE = ("pass", "drop")
PRESETS = ("latency", "throughput")

STAGE_SPLIT_BYTES = 8 << 20
STAGE_THREADS = max(1, min(8, os.cpu_count() or 1))
"""Batches above ``STAGE_SPLIT_BYTES`` are staged by ``STAGE_THREADS`` threads (NumPy
releases the GIL): one thread copies a few GB/s, less than a GPU decodes (4 bytes per
coded bit of float32 LLRs)."""

PRESET_BATCH = {"latency": 1, "throughput": 64}
"""Frames per ``work()`` call when neither ``batch`` nor the backend says otherwise.

``latency``: one frame per call (a frame leaves as soon as it arrives);
``throughput``: enough frames that the backend's per-call overhead and its
threads are amortised.  A backend that knows better exposes
``Decoder.preferred_batch(preset)`` and that value is used instead.
"""


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")


_BASE_SUFFIX = re.compile(r"^(?P<path>.+):(?P<key>[zq])=(?P<value>\d+)$")


@lru_cache(maxsize=64)
def load_code(spec: str) -> Code:
    """Resolve a block's ``code`` parameter: a registry name or a matrix file.

    ``spec`` is one of

    * a name from ``gpuldpc.codes.names()`` (``"wifi-1944-1/2"``, ``"gf32-744-653"``);
    * the path of an alist file (binary or GF(q), :func:`gpuldpc.codes.from_alist`);
    * the path of a QC base-matrix file followed by ``:z=<expansion>`` for a
      binary code or ``:q=<field size>`` for a GF(q) code, e.g.
      ``"B.txt:z=81"`` (:func:`gpuldpc.codes.from_base_matrix`).

    A :class:`~gpuldpc.codes.Code` is returned as is.  Results are cached, so
    GRC can call this for every vector length it evaluates.  Malformed files
    raise :class:`gpuldpc.codes.CodeFormatError` naming the file and line.
    """
    if isinstance(spec, Code):
        return spec
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"code must be a code name or a matrix file path (str), got {spec!r}")
    try:
        return codes.get(spec)
    except codes.UnknownCodeError as exc:
        unknown = exc
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
    matter for GF(q) codes only.
    """
    code = load_code(code)
    _check_choice("output", output, OUTPUTS)
    _check_choice("llr_input", llr_input, LLR_INPUTS)
    _check_choice("output_format", output_format, OUTPUT_FORMATS)
    length = code.k if output == "info" else code.n
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
    """What :meth:`StreamDecoder.decode_frames` returns for ``frames`` input frames.

    out : uint8 [kept, vlen_out]
        The frames that leave the block (all of them with ``on_failure="pass"``,
        the valid ones with ``"drop"``); may be a view of the decoder's result,
        copy it out before the next call.
    kept : int array [kept]
        Index (0..frames-1) of each output frame in the input batch.
    iterations, valid : [kept]
        Per output frame: iterations run, syndrome zero.
    """

    out: np.ndarray
    kept: np.ndarray
    iterations: np.ndarray
    valid: np.ndarray


@dataclass
class Counters:
    """Running totals of a :class:`StreamDecoder` (read with :meth:`StreamDecoder.stats`)."""

    frames: int = 0
    failures: int = 0
    dropped: int = 0
    iterations: int = 0
    busy_s: float = 0.0


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
    **decoder_args
        ``algorithm``, ``schedule``, ``max_iterations``, ``early_stop``,
        ``backend``, ``alpha``, ``beta``, ``precision``, ``threads``:
        as for :class:`gpuldpc.Decoder`.
    """

    def __init__(self, code, positive_llr_bit: int = 1, output: str = "info",
                 on_failure: str = "pass", llr_input: str = "bit", output_format: str = "symbols",
                 batch: int = 0, preset: str = "throughput", devices=None, streams=None,
                 **decoder_args):
        self.code = load_code(code)
        if positive_llr_bit not in (0, 1) or isinstance(positive_llr_bit, bool):
            raise ValueError(f"positive_llr_bit must be 1 (GNU Radio: positive LLR = bit 1) or "
                             f"0 (textbook: positive LLR = bit 0), got {positive_llr_bit!r}")
        _check_choice("on_failure", on_failure, ON_FAILURE)
        _check_choice("preset", preset, PRESETS)
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 0:
            raise ValueError(f"batch must be an integer >= 0 (0 = from the preset), got {batch!r}")
        self.vlen_in, self.vlen_out = decoder_lengths(self.code, output, llr_input, output_format)
        self.positive_llr_bit = int(positive_llr_bit)
        self.output = output
        self.on_failure = on_failure
        self.llr_input = llr_input
        self.output_format = output_format
        options = {"preset": preset}
        if devices is not None:
            options["devices"] = devices
        if streams is not None:
            options["streams"] = streams
        self.decoder = Decoder(self.code, **decoder_args, **options)
        hint = getattr(self.decoder, "preferred_batch", None)
        self.batch = int(batch) or int(hint(preset) if callable(hint) else PRESET_BATCH[preset])
        self._stage = self._new_stage(self.batch)
        self._pool = None
        self._lock = threading.Lock()
        self._counters = Counters()

    @property
    def backend(self) -> str:
        """The backend the decoder runs on (``cuda``, ``cpu`` or ``reference``)."""
        return self.decoder.backend

    def _copy_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(STAGE_THREADS, "gpuldpc-stage")
        return self._pool

    def _new_stage(self, count: int) -> np.ndarray:
        """The staging array: page-locked when the decoder offers it (``pinned_llr``), so a
        GPU backend copies it to the device directly."""
        pinned = getattr(self.decoder, "pinned_llr", None)
        if callable(pinned) and self.code.is_binary:
            return pinned(count)
        return np.empty((count, self.vlen_in), dtype=np.float32)

    def _staged_llr(self, frames: np.ndarray) -> np.ndarray:
        """Copy ``frames`` into the staging array, sign converted to the core's convention."""
        count = frames.shape[0]
        if count > self._stage.shape[0]:
            self._stage = self._new_stage(count)
        stage = self._stage[:count]
        copy = np.negative if self.llr_input == "bit" and self.positive_llr_bit == 1 else \
            (lambda src, out: np.copyto(out, src))
        if frames.nbytes < STAGE_SPLIT_BYTES:
            copy(frames, out=stage)
        else:
            edges = np.linspace(0, count, STAGE_THREADS + 1).astype(int)
            pool = self._copy_pool()
            list(pool.map(lambda ab: copy(frames[ab[0]:ab[1]], out=stage[ab[0]:ab[1]]),
                          zip(edges[:-1], edges[1:])))
        if self.code.is_binary:
            return stage
        if self.llr_input == "bit":
            return channel.bit_llr_to_symbol_llr(stage, self.code.q)
        return stage.reshape(count, self.code.n, self.code.q)

    def _shape_output(self, result) -> np.ndarray:
        words = result.info if self.output == "info" else result.bits
        if not self.code.is_binary and self.output_format == "bits":
            words = gf.GF(self.code.q).to_bits(words).reshape(words.shape[0], -1)
        return words

    def decode_frames(self, frames) -> FrameBatch:
        """Decode ``frames`` (float [count, vlen_in], any count); update the counters.

        The input is copied before decoding (see the module docstring); a
        wrong vector length raises ``ValueError`` naming the expected one.
        """
        frames = np.asarray(frames)
        if frames.ndim == 1 and frames.size % self.vlen_in == 0:
            frames = frames.reshape(-1, self.vlen_in)
        if frames.ndim != 2 or frames.shape[1] != self.vlen_in:
            raise ValueError(f"code {self.code.name!r}: each input frame must be a vector of "
                             f"{self.vlen_in} LLRs ({self._input_description()}), got shape "
                             f"{frames.shape}; set the upstream vector length to {self.vlen_in}")
        start = time.perf_counter()
        result = self.decoder.decode(self._staged_llr(frames))
        busy = time.perf_counter() - start
        valid = np.asarray(result.valid, dtype=bool)
        words = self._shape_output(result)
        if self.on_failure == "pass":
            kept = np.arange(frames.shape[0])
        else:
            kept = np.flatnonzero(valid)
            words = words[kept]
        with self._lock:
            c = self._counters
            c.frames += frames.shape[0]
            c.failures += int(frames.shape[0] - np.count_nonzero(valid))
            c.dropped += int(frames.shape[0] - kept.size)
            c.iterations += int(np.sum(result.iterations))
            c.busy_s += busy
        return FrameBatch(words, kept,
                          np.asarray(result.iterations, dtype=np.int32)[kept], valid[kept])

    def _input_description(self) -> str:
        if self.code.is_binary:
            return f"n={self.code.n} bit LLRs"
        if self.llr_input == "bit":
            return f"n*m={self.code.n}*{self.code.bits_per_symbol} bit LLRs"
        return f"n*q={self.code.n}*{self.code.q} symbol LLRs"

    def stats(self) -> dict:
        """Totals so far: frames, failures, dropped, mean_iterations, coded_mbps, backend.

        ``coded_mbps`` = coded bits decoded per second of decoder time
        (n * m * frames / time spent in ``decode``), excluding time the block
        waits for input.
        """
        with self._lock:
            c = Counters(**vars(self._counters))
        coded_bits = c.frames * self.code.n * self.code.bits_per_symbol
        return {
            "frames": c.frames,
            "failures": c.failures,
            "dropped": c.dropped,
            "mean_iterations": c.iterations / c.frames if c.frames else 0.0,
            "coded_mbps": coded_bits / c.busy_s / 1e6 if c.busy_s > 0 else 0.0,
            "backend": self.backend,
        }

    def close(self):
        """Release the decoder's resources (GPU memory, contexts) where it holds any."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        release = getattr(self.decoder, "close", None)
        if callable(release):
            release()


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

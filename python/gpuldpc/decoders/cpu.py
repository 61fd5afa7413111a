"""The ``cpu`` backend: SIMD decoders in C++ (``gpuldpc._core``), see docs/cpu.md.

``gl.Decoder(code, backend="cpu", precision=..., threads=N)`` lands here.

Binary codes: layered or flooding min-sum ("nms", "oms") in float32, int16 or
int8, and sum-product ("spa") in float32.  GF(q) codes (q <= 256): Min-Max
("minmax" and "mmma", the same numbers, see :mod:`.reference_nb`) and the trellis
Min-Max ("tmm", :mod:`.reference_tmm`, check messages scaled by ``alpha``; "tmm1", its
form with step 5's pairs from first minima) in float32, layered or flooding.  Frames are
interleaved across SIMD lanes (a chunk is 16 float32 / 32 int16 / 64 int8 frames with
AVX-512, half with AVX2) and chunks are spread over a thread pool (``threads``, default
every core); the GIL is released while decoding, so several Python threads may decode
at once.

``preset="latency"`` (a Decoder option): batches of at most :func:`intra_frames` frames
of a binary QC code (``code.base``, ``code.z``) in layered "nms"/"oms" (float32, int16,
int8) take the
intra-frame path instead: one frame at a time with the z rows of a layer in the SIMD
lanes (Le Gal & Jego, SiPS 2017; ``lib/cpu_intra_decoder.cpp``), frames spread over the
thread pool, the same numbers as the inter-frame path.  Other codes and settings, and
larger batches, stay inter-frame.  ``CpuDecoder.path(batch)`` says which path a batch
takes.

Float32 min-sum, Min-Max, T-MM and "tmm1" give the reference decoder's decisions, iteration
counts and syndrome flags bit for bit; "spa" matches its frame error rate.

Non-finite LLRs (:mod:`gpuldpc.bad_llr`): the C++ load of each chunk (where the
frames are interleaved into the SIMD lanes) turns NaN into 0 and +-inf into
+-2^64 (``gpuldpc._core.llr_saturation``) and flags the frame; the front door
applies the decoder's ``on_bad_llr`` policy to the flags.

``precision="float16"`` is not here (BackendUnavailable, so ``backend="auto"``
goes on to the reference decoder, which gives the cuda backend's float16 bits).

Fixed point (``precision="int16"`` / ``"int8"``, min-sum only): the channel
LLR ``L`` becomes ``clip(round(L * llr_scale), -(2^(b-1)-1), 2^(b-1)-1)`` and
every sum saturates to the same symmetric range; ``alpha`` is applied as
``round(m * round(alpha * 2^(b-1)) / 2^(b-1))`` and ``beta`` as
``round(beta * llr_scale)``.  ``llr_scale`` (a Decoder option) defaults to
:data:`DEFAULT_LLR_SCALE`; min-sum is scale-invariant, so the scale only
trades resolution against the saturation level (``int8`` default 6: steps of
1/6, saturation at |L| = 21.2; ``int16`` default 64: steps of 1/64, saturation
at |L| = 512).  docs/cpu.md gives the measured error rates.

Packed int4 input (``llr_dtype="int4"``, :mod:`gpuldpc.int4`): unpacked on the host and
decoded as the float32 LLRs ``q * llr_scale`` (:class:`gpuldpc.int4.HostInt4`); the
fixed-point precisions then take the int4 values as their integers (fixed-point scale
``1 / llr_scale``, so ``round(q * llr_scale / llr_scale) = q``).

Soft output (``soft_output``, :mod:`gpuldpc.soft`): the C++ decoders copy each frame's
posteriors out of its SIMD lane when it stops (binary: in the input's sign, fixed point
de-scaled by ``llr_scale``; GF(q): the costs, normalised here by
:func:`gpuldpc.soft.normalized_costs`).  Float32 min-sum gives the reference's numbers.
"""
from __future__ import annotations

import os

import numpy as np

from .. import _native, int4, packed_bits
from ..errors import BackendUnavailable
from ..result import DecodeResult, info_index
from ..soft import normalized_costs

DEFAULT_LLR_SCALE = {"float32": 1.0, "int16": 64.0, "int8": 6.0}
"""Fixed-point LLR unit per precision: integer = round(L * scale), saturated."""

_NB_ALGORITHMS = ("minmax", "mmma", "tmm", "tmm1")


def _core():
    try:
        return _native.core("cpu_decoders")
    except ImportError as exc:
        raise BackendUnavailable(str(exc)) from exc


def _threads(settings) -> int:
    """Worker threads for _core: 0 means every core."""
    return 0 if settings.threads is None else int(settings.threads)


def _llr_scale(settings) -> float:
    """The fixed-point scale (integers a unit of LLR): the ``llr_scale`` option, or its inverse
    for packed int4 input, whose ``llr_scale`` is the LLR of one step (:mod:`gpuldpc.int4`)."""
    if int4.requested(settings.options):
        return int4.fixed_point_scale(settings.options)
    scale = settings.options.get("llr_scale", DEFAULT_LLR_SCALE[settings.precision])
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)) \
            or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"llr_scale must be a positive finite number, got {scale!r}")
    return float(scale)


class CpuDecoder:
    """A compiled decoder for one code; ``decode(llr) -> DecodeResult``.

    ``llr`` is what :meth:`gpuldpc.Decoder.check_llr` returns: C-contiguous
    float32 [batch, n] (binary) or [batch, n, q] (GF(q)); NaN and +-inf follow the
    rule of :mod:`gpuldpc.bad_llr` (NaN 0, +-inf +-2^64, then the fixed-point clip).

    Attributes
    ----------
    lanes : int
        Frames decoded together in one SIMD chunk on this machine; batches
        that are multiples of ``lanes * threads`` keep every lane busy.
    threads : int
        Worker threads.
    simd : str
        Instruction set chosen at run time ("AVX3" = AVX-512, "AVX2", "SSE4").
    intra_frames : int
        Batches of at most this many frames take the intra-frame path (0: none; the
        ``latency`` preset on a binary QC code, layered min-sum).
    """

    def __init__(self, code, impl, simd, soft: bool = False):
        self.code = code
        self._impl = impl
        self.simd = simd
        self._soft = bool(soft)
        self._info = info_index(code)
        self.applies_llr_sign = code.is_binary   # gl.Decoder(positive_llr_bit=1): the C++ load negates

    @property
    def lanes(self) -> int:
        return self._impl.lanes

    @property
    def threads(self) -> int:
        return self._impl.threads

    @property
    def intra_frames(self) -> int:
        return getattr(self._impl, "intra_frames", 0)

    def path(self, batch: int) -> str:
        """``"intra-frame"`` or ``"inter-frame"``: the path a batch of ``batch`` frames takes."""
        return "intra-frame" if batch <= self.intra_frames else "inter-frame"

    def preferred_batch(self, preset: str = "throughput") -> int:
        """``latency``: one frame per worker thread on the intra-frame path, else one SIMD
        chunk (``lanes`` frames); ``throughput``: eight chunks per worker thread, so every
        thread stays busy and the per-call cost is amortised."""
        if preset == "latency":
            return self.threads if self.intra_frames else self.lanes
        return 8 * self.lanes * self.threads

    def decode(self, llr: np.ndarray, out=None):
        """Decode the batch; NaN / +-inf LLRs are loaded by the rule of :mod:`gpuldpc.bad_llr`
        in the C++ load of each chunk (no pass here) and their frames flagged in ``bad_llr``.

        The C++ call does the rest of :func:`gpuldpc.result.make_result`'s work: it returns
        the arrays in their dtypes and writes the decisions into ``out`` (checked there)
        when given, so that a lone frame costs little more than its decoding."""
        bits, iterations, valid, bad, post = self._impl.decode(llr, self._soft, out)
        if post is not None and not self.code.is_binary:
            post = normalized_costs(post)
        return DecodeResult(bits, bits[:, self._info], iterations, valid, bad, post)


def intra_frames(code, settings, lanes: int, threads: int) -> int:
    """Largest batch for the intra-frame path: 0 unless ``preset="latency"`` on a binary QC
    code in layered "nms"/"oms" (any precision); else half a SIMD chunk per worker thread (a chunk
    of ``lanes`` frames costs the inter-frame path about as much as ``lanes`` intra-frame
    frames on one thread: docs/cpu.md, "Intra-frame path")."""
    if settings.options.get("preset") != "latency" or code.base is None or not code.z:
        return 0
    if settings.schedule != "layered" or settings.algorithm == "spa":
        return 0
    return max(1, lanes * threads // 2)


def _binary(core, code, settings):
    if settings.algorithm == "spa" and settings.precision != "float32":
        raise ValueError(f"algorithm='spa' runs in float32 only on the cpu backend; "
                         f"precision={settings.precision!r} is for 'nms' and 'oms'")
    H = code.H
    intra = intra_frames(code, settings, core.binary_lanes(settings.precision), _threads(settings) or os.cpu_count())
    return core.BinaryDecoder(code.n, H.indptr, H.indices, settings.algorithm, settings.schedule,
                              settings.precision, settings.max_iterations, settings.early_stop,
                              settings.alpha, settings.beta, _llr_scale(settings),
                              _threads(settings), -1.0 if settings.positive_llr_bit else 1.0,
                              base=None if not intra else np.asarray(code.base, dtype=np.int64),
                              z=int(code.z or 0), intra_frames=intra)


def _non_binary(core, code, settings):
    from ..gf import GF

    if settings.algorithm not in _NB_ALGORITHMS:
        raise BackendUnavailable(f"algorithm={settings.algorithm!r} is not in the cpu backend "
                                 f"(GF(q) codes: {', '.join(map(repr, _NB_ALGORITHMS))})")
    if settings.precision != "float32":
        raise ValueError(f"GF(q) Min-Max and T-MM run in float32 only on the cpu backend, "
                         f"got precision={settings.precision!r}")
    field, H = GF(code.q), code.H
    elements = np.arange(code.q)
    div = field.div[elements[None, :], H.data[:, None]].astype(np.int64)   # a / h_e
    mul = field.mul[H.data[:, None], elements[None, :]].astype(np.int64)   # h_e a
    return core.NonBinaryDecoder(code.n, code.q, H.indptr, H.indices, div, mul, settings.schedule,
                                 settings.max_iterations, settings.early_stop, _threads(settings),
                                 algorithm=settings.algorithm, alpha=settings.alpha)


def make(code, settings) -> CpuDecoder:
    """Build the compiled decoder for ``code`` and validated ``settings`` (front.Settings).

    Raises
    ------
    BackendUnavailable
        ``gpuldpc._core`` is not built, the algorithm is not in this backend, or
        ``precision="float16"``.
    ValueError
        A precision the algorithm does not run in, or a bad ``llr_scale``.
    """
    if settings.precision == "float16":
        raise BackendUnavailable("the cpu backend has no float16 arithmetic; precision='float16' runs on "
                                 "backend='cuda' (or 'reference': the same bits, slowly)")
    core = _core()
    build = _binary if code.is_binary else _non_binary
    dec = CpuDecoder(code, build(core, code, settings), core.simd_target(), settings.soft_output is not None)
    return packed_bits.host_backend(int4.host_backend(dec, code, settings), code, settings)

"""The ``cuda`` backend of :class:`gpuldpc.Decoder`: :class:`gpuldpc.cuda.CudaDecoder` for
binary QC codes, :class:`gpuldpc.cuda.nb_decoder.NbCudaDecoder` for GF(q) codes.

``make(code, settings)`` raises :class:`BackendUnavailable` without PyCUDA, a
GPU, or a QC description of ``code`` (``backend="auto"`` then falls back).
Options (``gl.Decoder(..., **options)``): ``devices`` ("all", an id or a list),
``preset`` ("throughput" | "latency"), ``streams``, ``chunk_frames``,
``frames_per_block`` (see :mod:`gpuldpc.cuda.tuning`),
``llr_dtype`` ("float32" | "float16" | "int8": the dtype ``decode`` then takes,
copied to the GPU as it is; "int4": packed uint8 [batch, ceil(n/2)], :mod:`gpuldpc.int4`,
unpacked on the GPU), ``llr_scale`` (every LLR is multiplied by it in the kernels'
load; ``positive_llr_bit=1`` negates it), ``resident``, ``posteriors`` (the sparse kernel's, for
codes the QC kernels do not hold: DVB-S2, CCSDS C2, AR4JA k = 16384, alist codes;
:mod:`gpuldpc.cuda.sparse_layout`).  Messages are computed in float32
(``precision="float32"``) or, for binary min-sum, in IEEE binary16 with two frames
a thread (``precision="float16"``: the reference decoder's float16 bits, see
:class:`gpuldpc.cuda.CudaDecoder`).  GF(q) codes: ``devices``, ``streams``,
``chunk_frames``, ``units``, ``preset``, ``resident`` (:class:`gpuldpc.cuda.nb_decoder.NbCudaDecoder`);
bit LLRs [batch, n*m] are converted to symbol LLRs on the GPU.

A thin adapter (:class:`_Backend`) hands the arrays the front door has checked straight
to the decoder's ``decode_checked``/``submit_checked`` (no second check).  ``gl.Decoder(...,
packed=True)`` (:mod:`gpuldpc.packed_bits`): the kernels store the decisions packed and the
DecodeResult holds them as they came (``CudaDecoder(packed=True)``).  GPU arrays
(:class:`gpuldpc.device_arrays.DeviceLLR`, checked by the front door against
``device_ids``/``device_ordinal``) go the same way; ``out_device`` keeps the results on the
GPU (not with ``packed=True``).

Shaped codes (5G NR, :mod:`gpuldpc.codes.shaping`): :func:`make_shaped` builds the decoder
of ``code.decoded`` with ``shaping=code.decoded_shaping``, so that the E received LLRs go
to the GPU as they are and are recovered there (:mod:`gpuldpc.cuda.recovery`); the
latency preset too, except where it decodes with a resident kernel (a shaped WiMAX rate-1/2
code), which keeps the host recovery.

Soft output (``soft_output``, :mod:`gpuldpc.soft`): with the throughput preset, binary codes
(the kernels write the posteriors, ``CudaDecoder(soft_output=True)``) and GF(q) Min-Max (the
posterior costs, ``NbCudaDecoder(soft_output=True)``, T-MM as well); the latency preset and FFT-SPA raise
ValueError.  ``soft_dtype="float16"`` with ``"posterior"``: converted
on the GPU before the copy (``CudaDecoder(soft_dtype="float16")``); ``"extrinsic"`` takes the
float32 posteriors to the host, where the front door subtracts the channel and converts.
``llr_unit`` (``|llr_scale|``) is what the front door multiplies the input by for
``"extrinsic"``; ``llr_width``: the columns of an input row (int4: ``ceil(n/2)`` bytes).
"""
from __future__ import annotations

import numpy as np

from ..errors import BackendUnavailable
from ..result import info_index

_BINARY_OPTIONS = ("devices", "preset", "streams", "chunk_frames", "frames_per_block", "llr_dtype", "llr_scale",
                   "resident", "posteriors")
_NB_OPTIONS = ("devices", "streams", "chunk_frames", "units", "preset", "resident")


class _Backend:
    """The front door's view of a CUDA decoder: checked arrays in, DecodeResult out."""

    def __init__(self, decoder):
        self.decoder = decoder
        self.llr_dtypes = (np.dtype(getattr(decoder, "llr_np_dtype", np.float32)),)
        if decoder.code.is_binary:
            self.llr_width = decoder.n_in
        self.accepts_bit_llr = not decoder.code.is_binary
        self.applies_llr_sign = decoder.code.is_binary  # a negative llr_scale (kernels' load)
        self.llr_unit = abs(float(getattr(decoder, "llr_scale", 1.0)))  # kernels' LLR = value * llr_scale
        self._packed = getattr(decoder, "packed", False)
        self._binary = decoder.code.is_binary
        self.pinned_llr = decoder.pinned_llr
        self.page_lock = decoder.page_lock
        self.page_unlock = decoder.page_unlock
        self.preferred_batch = decoder.preferred_batch
        self.close = decoder.close
        self.device_ids = decoder.device_ids
        self.device_ordinal = decoder.device_ordinal
        self.plan_on = decoder.plan_on
        self.result = decoder.result

    def _kind(self, arr) -> str:
        if self._binary:
            return "llr"
        return "bits" if arr.ndim == 2 else "symbols"

    def decode(self, arr, out=None, out_device=False):
        if out_device:
            self._check_out_device(out_device)
        return self.decoder.decode_checked(arr, self._kind(arr), out, out_device)

    def submit(self, arr, out=None, out_device=False):
        if out_device:
            self._check_out_device(out_device)
        return self.decoder.submit_checked(arr, self._kind(arr), out, out_device)

    def _check_out_device(self, out_device):
        if out_device and self._packed:
            raise ValueError("out_device=True is not offered with packed=True (the packed decisions come to the "
                             "host): pass out_device=False, or build the decoder without packed")


def _check_options(options, known, what):
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown {what} option(s) {unknown}; known: {', '.join(known)}")


def make(code, settings, shaping=None, info_at=None):
    """Build the CUDA decoder for ``code`` and validated ``settings`` (gpuldpc.settings.Settings);
    ``shaping``, ``info_at``: see :func:`make_shaped`."""
    from ..cuda import CudaDecoder, NotQuasiCyclic, driver

    if settings.precision not in ("float32", "float16") or (settings.precision != "float32"
                                                             and not code.is_binary):
        raise BackendUnavailable(f"the cuda backend computes messages in float32 (binary min-sum also in "
                                 f"float16); precision={settings.precision!r} is not offered (int8/float16 "
                                 "LLR input: llr_dtype='int8' / 'float16')")
    if not code.is_binary:
        from ..cuda.nb_decoder import NbCudaDecoder, check_soft_output

        _check_options(settings.options, _NB_OPTIONS, "GF(q) cuda")
        check_soft_output(settings.soft_output is not None, settings.algorithm,
                          settings.options.get("preset", "throughput"))
        driver()

        return _Backend(NbCudaDecoder(code, settings.algorithm, settings.schedule, settings.max_iterations,
                                      settings.early_stop, soft_output=settings.soft_output is not None,
                                      alpha=settings.alpha, **settings.options))
    _check_options(settings.options, _BINARY_OPTIONS, "cuda backend")
    driver()
    options = dict(settings.options)
    if settings.positive_llr_bit:
        options["llr_scale"] = -float(options.get("llr_scale", 1.0))
    try:
        dec = CudaDecoder(code, settings.algorithm, settings.schedule, settings.max_iterations,
                          settings.early_stop, settings.alpha, settings.beta, precision=settings.precision,
                          shaping=shaping, soft_output=settings.soft_output is not None,
                          soft_dtype=settings.soft_dtype if settings.soft_output == "posterior" else "float32",
                          packed=settings.packed, info_at=info_at, **options)
    except NotQuasiCyclic as exc:
        raise BackendUnavailable(str(exc)) from exc
    return _Backend(dec)


def make_shaped(code, settings):
    """The decoder of a ShapedCode's ``decoded`` code taking its E received LLRs, recovered on
    the GPU (:mod:`gpuldpc.cuda.recovery`: with the latency preset the recovery kernel reads
    them in place, mapped, and the decoding kernel is launched); None where the latency preset
    decodes ``code.decoded`` with a resident kernel
    (:func:`gpuldpc.cuda.decoder.latency_kernel_is_resident`), which reads its input in place
    itself: the caller, :func:`gpuldpc.codes.shaping.make_backend`, then recovers on the host
    and keeps it.  The decoder's ``DecodeResult.info`` is the shaped code's (``info_at``:
    :func:`gpuldpc.result.info_index`; packed, shifted on the GPU where it starts inside a byte)."""
    from ..cuda.decoder import latency_kernel_is_resident

    o = settings.options
    if o.get("preset", "throughput") == "latency" and latency_kernel_is_resident(
            code.decoded, settings.algorithm, settings.schedule, o.get("llr_dtype", "float32"), settings.precision,
            o.get("resident", True)):
        return None
    return make(code.decoded, settings, code.decoded_shaping, info_index(code))

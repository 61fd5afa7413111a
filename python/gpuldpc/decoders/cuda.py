"""The ``cuda`` backend of :class:`gpuldpc.Decoder`: :class:`gpuldpc.cuda.CudaDecoder` for
binary QC codes, :class:`gpuldpc.cuda.nb_decoder.NbCudaDecoder` for GF(q) codes.

``make(code, settings)`` raises :class:`BackendUnavailable` without PyCUDA, a
GPU, or a QC description of ``code`` (``backend="auto"`` then falls back).
Options (``gl.Decoder(..., **options)``): ``devices`` ("all", an id or a list),
``preset`` ("throughput" | "latency"), ``streams``, ``chunk_frames``,
``frames_per_block`` (see :mod:`gpuldpc.cuda.tuning`), ``packed`` (transfer the
hard decisions packed; they are unpacked on the host for the DecodeResult),
``llr_dtype`` ("float32" | "float16" | "int8": the dtype ``decode`` then takes,
copied to the GPU as it is).  Messages are computed in float32
(``precision="float32"``) or, for binary min-sum, in IEEE binary16 with two frames
a thread (``precision="float16"``: the reference decoder's float16 bits, see
:class:`gpuldpc.cuda.CudaDecoder`).  GF(q) codes: the options of
:func:`gpuldpc.cuda.nb_decoder.make`; bit LLRs [batch, n*m] are converted to
symbol LLRs on the GPU.
"""
from __future__ import annotations

import numpy as np

from .front import BackendUnavailable, DecodeResult, make_result

_OPTIONS = ("devices", "preset", "streams", "chunk_frames", "frames_per_block", "packed", "llr_dtype",
            "resident")


class CudaBackend:
    """Adapter: validated LLRs in, unpacked DecodeResult out."""

    def __init__(self, decoder):
        self.decoder = decoder
        self.llr_dtypes = (np.dtype(decoder.llr_np_dtype),)

    def decode(self, llr) -> DecodeResult:
        return self._unpacked(self.decoder.decode(llr))

    def decode_device(self, llr, frames: int) -> DecodeResult:
        """LLRs already in device memory (:meth:`gpuldpc.cuda.StreamDecoder.decode_device`)."""
        return self._unpacked(self.decoder.decode_device(llr, frames))

    def _unpacked(self, res) -> DecodeResult:
        if not self.decoder.packed:
            return res
        code = self.decoder.code
        return make_result(code, np.unpackbits(res.bits, axis=1, count=code.n), res.iterations, res.valid)

    def pinned_llr(self, frames: int) -> np.ndarray:
        return self.decoder.pinned_llr(frames)

    def preferred_batch(self, preset: str) -> int:
        """One wave of every device (latency), or all streams of every device busy (throughput)."""
        return self.decoder.preferred_batch(preset)


def make(code, settings):
    """Build the CUDA decoder for ``code`` and validated ``settings`` (front.Settings)."""
    from ..cuda import CudaDecoder, NotQuasiCyclic, driver

    if settings.precision not in ("float32", "float16") or (settings.precision != "float32"
                                                             and not code.is_binary):
        raise BackendUnavailable(f"the cuda backend computes messages in float32 (binary min-sum also in "
                                 f"float16); precision={settings.precision!r} is not offered (int8/float16 "
                                 "LLR input: gpuldpc.cuda.CudaDecoder(llr_dtype=...))")
    if not code.is_binary:
        driver()
        from ..cuda import nb_decoder

        return nb_decoder.make(code, settings)
    unknown = sorted(set(settings.options) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"unknown cuda backend option(s) {unknown}; known: {', '.join(_OPTIONS)}")
    driver()
    try:
        dec = CudaDecoder(code, settings.algorithm, settings.schedule, settings.max_iterations,
                          settings.early_stop, settings.alpha, settings.beta, precision=settings.precision,
                          check_finite=False, **settings.options)
    except NotQuasiCyclic as exc:
        raise BackendUnavailable(str(exc)) from exc
    return CudaBackend(dec)

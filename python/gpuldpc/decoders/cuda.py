"""The ``cuda`` backend of :class:`gpuldpc.Decoder`: :class:`gpuldpc.cuda.CudaDecoder`.

``make(code, settings)`` raises :class:`BackendUnavailable` without PyCUDA, a
GPU, or a QC description of ``code`` (``backend="auto"`` then falls back).
Options (``gl.Decoder(..., **options)``): ``devices`` ("all", an id or a list),
``preset`` ("throughput" | "latency"), ``streams``, ``chunk_frames``,
``frames_per_block`` (see :mod:`gpuldpc.cuda.tuning`), ``packed`` (transfer the
hard decisions packed; they are unpacked on the host for the DecodeResult).
Messages are computed in float32 (``precision="float32"``); float16/int8 LLR
input is offered by :class:`gpuldpc.cuda.CudaDecoder` directly (``llr_dtype``).
"""
from __future__ import annotations

import numpy as np

from .front import BackendUnavailable, DecodeResult

_OPTIONS = ("devices", "preset", "streams", "chunk_frames", "frames_per_block", "packed")


class CudaBackend:
    """Adapter: validated float32 LLRs in, unpacked DecodeResult out."""

    def __init__(self, decoder):
        self.decoder = decoder

    def decode(self, llr) -> DecodeResult:
        res = self.decoder.decode(llr)
        if not self.decoder.packed:
            return res
        code = self.decoder.code
        bits = np.unpackbits(res.bits, axis=1, count=code.n)
        return DecodeResult(bits, bits[:, :code.k], res.iterations, res.valid)


def make(code, settings):
    """Build the CUDA decoder for ``code`` and validated ``settings`` (front.Settings)."""
    from ..cuda import CudaDecoder, NotQuasiCyclic, driver

    if not code.is_binary:
        raise BackendUnavailable(f"the cuda backend decodes binary codes; {code.name!r} is GF({code.q})")
    if settings.precision != "float32":
        raise BackendUnavailable(f"the cuda backend computes messages in float32; precision="
                                 f"{settings.precision!r} is not offered (int8/float16 LLR input: "
                                 "gpuldpc.cuda.CudaDecoder(llr_dtype=...))")
    unknown = sorted(set(settings.options) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"unknown cuda backend option(s) {unknown}; known: {', '.join(_OPTIONS)}")
    driver()
    try:
        dec = CudaDecoder(code, settings.algorithm, settings.schedule, settings.max_iterations,
                          settings.early_stop, settings.alpha, settings.beta,
                          check_finite=False, **settings.options)
    except NotQuasiCyclic as exc:
        raise BackendUnavailable(str(exc)) from exc
    return CudaBackend(dec)

"""Packed int4 LLRs (issue 16 item 4): two signed 4-bit LLRs a byte, half the bytes of int8.

``gl.Decoder(code, llr_dtype="int4", llr_scale=s)`` takes uint8 arrays [batch, ceil(n/2)]:

* byte ``j`` of a row holds positions ``2j`` (low nibble, bits 0-3) and ``2j + 1`` (high
  nibble, bits 4-7); for odd ``n`` the high nibble of the last byte is padding, never read;
* each nibble is a two's complement 4-bit integer ``q``, used in the symmetric range
  -7..+7 (so that ``positive_llr_bit=1`` negates exactly, as int8 uses -127..127); the
  nibble 0x8 (-8) is read as -7 by every backend (:func:`unpack_int4`, the cuda unpack
  kernel) -- no backend makes a pass to refuse it;
* the LLR is ``q * llr_scale``: ``llr_scale`` is the LLR of one step, the convention of the
  cuda backend's ``llr_dtype="int8"`` (the kernels multiply each loaded value by it), default
  1.0, a positive finite number.  :func:`pack_int4` quantises with the same scale,
  ``q = clip(rint(llr / llr_scale), -7, 7)``, so a decoder built with ``llr_scale=s`` reads
  back ``q * s ~= llr``.  (The cpu backend's fixed-point ``llr_scale`` is the inverse, integers
  a unit of LLR; with int4 input it is not used, see below.)

What each backend does with them (all decode the LLRs ``float32(q) * float32(llr_scale)``,
the product the cuda kernels form, so every backend gives its own float32 decode of
those values, and cuda int4 equals cuda ``llr_dtype="int8"`` of :func:`unpack_int4` bit for bit):

* ``cuda``: the packed bytes cross PCIe (a WiMAX 2304 frame: 1152 bytes, against 2304 int8
  and 9216 float32); the binary16 QC kernels (``precision="float16"``) read them as they are
  (their ``_i4`` entry points, kernels/qc_decode.cuh ``Nibbles``); for the other kernels
  (float32 messages, the latency and sparse kernels) a kernel (kernels/transport.cu
  ``unpack_int4``) first expands each chunk on the GPU, on the slot's stream, into the int8
  rows their int8 entry points read (:class:`gpuldpc.cuda.stages.Int4Plan`); both presets (no
  resident kernel); GPU arrays of packed bytes too;
* ``cpu``, ``reference`` (:class:`HostInt4`): unpacked on the host to int8, then the float32
  LLRs above; the cpu's fixed-point precisions (``"int16"``, ``"int8"``) take the int4
  values as their integers (fixed-point scale ``1 / llr_scale``: :func:`fixed_point_scale`).

Not for GF(q) codes or shaped codes (5G NR: their E LLRs take ``llr_dtype="int8"``).
int4 values are always finite: ``DecodeResult.bad_llr`` is never set by them.
"""
from __future__ import annotations

import numpy as np

LLR_DTYPE = "int4"
Q_MAX = 7
PACKED = np.dtype(np.uint8)


def packed_width(n: int) -> int:
    """Bytes of a packed row of ``n`` LLRs: ``ceil(n / 2)``."""
    return (int(n) + 1) // 2


def requested(options: dict) -> bool:
    """Whether decoder ``options`` ask for packed int4 input (``llr_dtype="int4"``)."""
    return options.get("llr_dtype") == LLR_DTYPE


def checked_scale(options: dict) -> float:
    """The ``llr_scale`` option of an int4 decoder (default 1.0), checked: ValueError unless a
    positive finite number."""
    scale = options.get("llr_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.integer, np.floating)) \
            or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"llr_scale must be a positive finite number (the LLR of one int4 step), got {scale!r}")
    return float(scale)


def check(code, options: dict, shaped: bool) -> None:
    """``llr_dtype="int4"`` validated for ``code`` before any backend is built (ValueError
    naming what to use instead)."""
    if not requested(options):
        return
    if not code.is_binary:
        raise ValueError(f"llr_dtype='int4' is for binary codes; code {code.name!r} is over GF({code.q}) "
                         "(symbol or bit LLRs in float32)")
    if shaped:
        raise ValueError(f"code {code.name!r}: llr_dtype='int4' takes plain codes; a shaped code's E LLRs "
                         "take llr_dtype='int8' (cuda) or float32")
    checked_scale(options)


def fixed_point_scale(options: dict) -> float:
    """The cpu fixed-point scale (integers a unit of LLR) that keeps int4 values as they are:
    ``round(q * s * (1 / s)) = q``."""
    return 1.0 / checked_scale(options)


def _check_llr(llr) -> np.ndarray:
    arr = np.asarray(llr)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"llr must be a real array (float LLRs), got dtype {arr.dtype}")
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValueError(f"llr must have shape [n] or [batch, n] with n >= 1, got {arr.shape}")
    return arr


def pack_int4(llr, llr_scale: float = 1.0) -> np.ndarray:
    """LLRs [batch, n] (or [n]) as packed int4 bytes uint8 [batch, ceil(n/2)] (module docstring):
    ``q = clip(rint(llr / llr_scale), -7, 7)`` (round half to even), position ``2j`` in the low
    nibble of byte ``j``; NaN becomes 0 (an erasure) and +-inf +-7, the bad-LLR rule of
    :mod:`gpuldpc.bad_llr` without its flag (int4 carries none)."""
    arr = _check_llr(llr)
    scaled = np.divide(arr, np.float32(checked_scale({"llr_scale": llr_scale})), dtype=np.float32)
    q = np.clip(np.rint(np.nan_to_num(scaled, nan=0.0, copy=False)), -Q_MAX, Q_MAX).astype(np.int8).view(PACKED)
    if q.shape[-1] % 2:
        q = np.concatenate([q, np.zeros(q.shape[:-1] + (1,), PACKED)], axis=-1)
    return np.ascontiguousarray((q[..., 0::2] & 0x0F) | (q[..., 1::2] << np.uint8(4)))


def unpack_int4(packed, n: int) -> np.ndarray:
    """Packed int4 bytes uint8 [batch, ceil(n/2)] (or [ceil(n/2)]) as int8 [batch, n] values
    -7..7 (the nibble -8 read as -7; module docstring)."""
    arr = np.asarray(packed)
    if arr.dtype != PACKED:
        raise TypeError(f"packed int4 LLRs must be uint8 (two 4-bit values a byte, gl.pack_int4), got dtype "
                        f"{arr.dtype}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1 (LLRs a frame), got {n!r}")
    if arr.ndim not in (1, 2) or arr.shape[-1] != packed_width(n):
        raise ValueError(f"packed int4 LLRs of n = {n} must have shape [batch, {packed_width(n)}] "
                         f"(ceil(n/2) bytes a frame), got {arr.shape}")
    out = np.empty(arr.shape[:-1] + (2 * arr.shape[-1],), np.int8)
    out[..., 0::2] = np.left_shift(arr, np.uint8(4)).view(np.int8) >> 4   # low nibble, sign-extended
    out[..., 1::2] = arr.view(np.int8) >> 4                               # high nibble
    np.maximum(out, -Q_MAX, out=out)
    return out if n % 2 == 0 else np.ascontiguousarray(out[..., :n])


class HostInt4:
    """A host backend (``cpu``, ``reference``) behind packed int4 input: each batch unpacked
    (:func:`unpack_int4`) into the float32 LLRs ``q * llr_scale`` and decoded as such.

    It applies ``positive_llr_bit`` itself (``applies_llr_sign``, as the cuda backend does: the
    front door never negates packed bytes): a backend that applies the sign gets ``q * s``,
    any other ``q * -s`` and its soft output negated back, so ``DecodeResult.llr`` is in the
    caller's sign, in LLR units (``llr_unit``: what the front door multiplies the channel by
    for ``soft_output="extrinsic"``)."""

    def __init__(self, impl, code, settings):
        self._impl, self._n = impl, code.n
        scale = checked_scale(settings.options)
        self._flip = bool(settings.positive_llr_bit) and not getattr(impl, "applies_llr_sign", False)
        self._scale = np.float32(-scale if self._flip else scale)
        self.llr_dtypes = (PACKED,)
        self.llr_width = packed_width(code.n)
        self.applies_llr_sign = True
        self.llr_unit = scale
        for attr in ("preferred_batch", "close"):
            if hasattr(impl, attr):
                setattr(self, attr, getattr(impl, attr))

    def llr(self, packed: np.ndarray) -> np.ndarray:
        """The float32 LLRs the inner backend decodes for ``packed``."""
        return np.multiply(unpack_int4(packed, self._n), self._scale, dtype=np.float32)

    def decode(self, packed, out=None):
        res = self._impl.decode(self.llr(packed), out)
        if self._flip and res.llr is not None:
            res = res._replace(llr=np.negative(res.llr, out=res.llr))
        return res

    def pinned_llr(self, frames: int) -> np.ndarray:
        """An empty packed array [frames, ceil(n/2)] (ordinary memory: the host backends read it in place)."""
        return np.empty((frames, self.llr_width), PACKED)


def host_backend(impl, code, settings):
    """``impl`` behind :class:`HostInt4` when ``settings`` ask for int4 input, else ``impl``."""
    return HostInt4(impl, code, settings) if requested(settings.options) else impl

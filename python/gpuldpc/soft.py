"""Soft output (issue 16): ``gl.Decoder(code, soft_output=...)`` fills ``DecodeResult.llr``.

``soft_output`` (None by default: no soft output, ``llr`` is None and no backend writes any):

* ``"posterior"``: binary codes, float32 [batch, n], the posterior LLR of every bit
  ``L_n = Lch_n + sum_m R_mn`` as the decoder holds it (layered: the running ``L`` after the
  iteration's last layer; flooding: the totals ``T`` summed after the check update;
  :mod:`gpuldpc.decoders.reference`), at the iteration the frame stopped
  (``DecodeResult.iterations``; without early stop the last).  Its sign is the decoder's input
  convention: positive means bit 0, or bit 1 with ``positive_llr_bit=1`` (the posterior
  negated), so the hard decisions are ``bits == (llr < 0)`` (``llr > 0`` with
  ``positive_llr_bit=1``).  GF(q) codes: float32 [batch, n, q], the posterior cost vector of
  every symbol normalised by :func:`normalized_costs` (``L_n(a) - min_b L_n(b)``, 0 at the
  decided symbol, the Min-Max convention of the input).
* ``"extrinsic"`` (binary codes, host LLRs, unshaped codes): ``posterior - Lch`` with ``Lch``
  the channel LLRs as given, under the rule of :mod:`gpuldpc.bad_llr` and in LLR units
  (:func:`extrinsic`; with ``precision="float16"`` not the decoder's clamped binary16 copy;
  packed int4 input, :mod:`gpuldpc.int4`: its unpacked values), computed on the host after the
  decode (one pass over the batch).

``soft_dtype`` ("float32" by default, or "float16", issue 16's "float16 on request"): the
dtype of ``DecodeResult.llr``.  float16 is :func:`to_float16` of the float32 soft output
above, bit for bit on every backend: each value clamped to +-65504 (the largest finite
binary16) and rounded to nearest even.  ``reference`` and ``cpu``: converted by the front door
after the decode; ``cuda`` with ``"posterior"``: converted on the GPU before the copy to the
host (kernels/transport.cu ``soft_to_half``), so 2 bytes a bit cross PCIe instead of 4;
``"extrinsic"`` brings the float32 posteriors over and converts after the subtraction.  The
sign of a float16 value is the hard decision except where ``|L| < 2^-25`` rounds to +-0
(``bits`` are the decisions; do not derive them from float16 signs).  binary16 keeps 11
significant bits (relative steps of 2^-11) and posteriors up to 65504; the binary16 decoder
(``precision="float16"``) keeps its posteriors within that range, so its float16 soft output
is its posteriors exactly.

Arithmetic per precision (what makes the backends agree):

* float32 min-sum: the reference's float32 posteriors; the cpu backend and the cuda kernels
  give them bit for bit.  Sum-product: within the rule's own tolerance (cpu: 1e-4 relative).
* float16 (reference, cuda ``qc_hs*``): the binary16 posteriors converted to float32
  (exact): both give the same numbers.
* int16 / int8 (cpu): the saturated fixed-point posterior ``p`` de-scaled,
  ``float32(p) / llr_scale`` (so ``|llr| <= (2^(b-1) - 1) / llr_scale``).
* cuda ``llr_dtype="int8"``/``"float16"`` input: the kernels' LLRs are ``value * llr_scale``;
  the posteriors are in those units.

Where: ``reference`` (binary float32 and float16, GF(q) Min-Max), ``cpu`` (binary, every
precision; GF(q) Min-Max), ``cuda`` with ``preset="throughput"``: binary (the ``ms*``,
``hs*`` and ``stored`` kernels write each frame's posteriors once, at the end or, for the
frame pairs of ``hs*``, when the frame stops) and GF(q) Min-Max (``nb_minmax`` writes the
normalised costs when the frame stops: the reference's bit for bit).  The cuda latency preset
(``ep*``, resident and one-frame GF(q) kernels) and GF(q) FFT-SPA raise ValueError naming the
alternative.  Results on
the GPU (``out_device=True``) carry no soft output (ValueError).  A shaped code
(:mod:`gpuldpc.codes.shaping`): the posteriors at ``code.decoded_positions``, the columns of
``bits``.
"""
from __future__ import annotations

import numpy as np

from . import bad_llr
from .float16 import FLOAT16_MAX
from .int4 import PACKED, unpack_int4
from .settings import SOFT_DTYPES, SOFT_OUTPUTS


def check(code, soft_output, shaped: bool, soft_dtype: str = "float32") -> str | None:
    """``soft_output`` and ``soft_dtype`` validated for ``code`` (ValueError naming what to use
    instead)."""
    if soft_output not in SOFT_OUTPUTS:
        raise ValueError(f"soft_output={soft_output!r} is not one of {', '.join(map(repr, SOFT_OUTPUTS))}")
    if soft_dtype not in SOFT_DTYPES:
        raise ValueError(f"soft_dtype={soft_dtype!r} is not one of {', '.join(map(repr, SOFT_DTYPES))}")
    if soft_dtype != "float32" and soft_output is None:
        raise ValueError(f"soft_dtype={soft_dtype!r} is the dtype of the soft output; ask for one with "
                         "soft_output='posterior' (or 'extrinsic')")
    if soft_output == "extrinsic" and not code.is_binary:
        raise ValueError("soft_output='extrinsic' is for binary codes; GF(q) codes give "
                         "soft_output='posterior' (normalised symbol costs)")
    if soft_output == "extrinsic" and shaped:
        raise ValueError(f"code {code.name!r}: soft_output='extrinsic' is for unshaped codes; take "
                         "soft_output='posterior' and subtract code.decoded_shaping.recover(llr)")
    return soft_output


def to_float16(llr: np.ndarray) -> np.ndarray:
    """float32 soft output as float16: ``float16(clip(llr, -65504, 65504))``, round to nearest
    even (NaN passes; the posteriors never hold one), what kernels/transport.cu ``soft_to_half``
    computes."""
    return np.clip(llr, -FLOAT16_MAX, FLOAT16_MAX).astype(np.float16)


def normalized_costs(post: np.ndarray) -> np.ndarray:
    """GF(q) posteriors [..., q] as float32 costs ``L(a) - min_b L(b)`` (one float32
    subtraction a value; 0 at the decided symbol)."""
    post = np.asarray(post, dtype=np.float32)
    return post - post.min(axis=-1, keepdims=True)


def extrinsic(posterior: np.ndarray, llr: np.ndarray, unit: float = 1.0) -> np.ndarray:
    """``posterior - Lch`` in float32, in place in ``posterior``: ``Lch`` is ``llr`` (the
    array the backend decoded, in its sign; packed int4 bytes: their values, :func:`gpuldpc.int4.unpack_int4`)
    under the rule of :mod:`gpuldpc.bad_llr` (NaN 0, +-inf +-LLR_SATURATION), times ``unit`` (the
    ``llr_scale`` of int8, int4 and cuda float16 input; 1 otherwise)."""
    if llr.dtype == PACKED:
        llr = unpack_int4(llr, posterior.shape[-1])
    channel, _ = bad_llr.sanitized(np.asarray(llr, dtype=np.float32))
    if unit != 1.0:
        channel = channel * np.float32(unit)
    return np.subtract(posterior, channel, out=posterior)

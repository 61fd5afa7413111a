"""Non-finite LLRs: how every backend loads them, and what the caller then sees.

A NaN or an infinity in a frame's LLRs (a demapper dividing by a zero noise estimate, an
AGC transient) must neither stop a receiver nor go unnoticed.  Every backend applies one
rule where it *loads* the channel LLRs -- in the CUDA kernels' LLR load, in the C++ load of
the cpu backend, in NumPy for the reference backend (:func:`sanitized`) -- so there is no
extra pass over the batch on the host:

* NaN becomes 0 (an erasure: no information about the bit or symbol);
* +inf becomes ``+LLR_SATURATION``, -inf ``-LLR_SATURATION`` (a certainty, the largest
  LLR the decoders take in; far from float32 overflow even after the decoders' sums);
* the frame is flagged (``DecodeResult.bad_llr``) and decoded with those values;
* a finite LLR beyond +-``LLR_SATURATION`` (1e30, 3e38: a noise estimate near zero) is
  clamped to it, not flagged (it is a number), so no decoder's sums overflow float32.

What the caller gets is the decoder's ``on_bad_llr`` policy:

* ``"raise"`` (the default of :class:`gpuldpc.Decoder`): after the decode, ``ValueError``
  naming the flagged frames (:func:`check`); no result is returned, so nothing decoded
  from bad LLRs can be taken for valid;
* ``"erase"``: the result is returned, ``bad_llr`` marks the frames (the GNU Radio blocks'
  default; their ``drop`` policy then drops those frames).
"""
from __future__ import annotations

import numpy as np

LLR_SATURATION = 2.0 ** 64
"""|LLR| an infinity becomes (kernels/llr_load.cuh ``kLlrSaturation``, C++ ``kLlrSaturation``)."""

POLICIES = ("raise", "erase")


def sanitized(llr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``llr`` with the rule applied, bool [batch] frames that held NaN or +-inf): the host
    form of the rule, for the reference backend.  ``llr`` is returned as it is when every
    value is finite and within +-``LLR_SATURATION``."""
    flat = llr.reshape(llr.shape[0], -1)
    bad = ~np.isfinite(flat).all(axis=1)
    if not bad.any() and not (np.abs(flat) >= LLR_SATURATION).any():
        return llr, bad
    clean = np.clip(np.nan_to_num(llr, nan=0.0, posinf=LLR_SATURATION, neginf=-LLR_SATURATION),
                    -LLR_SATURATION, LLR_SATURATION).astype(llr.dtype, copy=False)
    return clean, bad


def check(code_name: str, bad: np.ndarray) -> None:
    """The ``"raise"`` policy: ValueError naming the flagged frames, if any."""
    if bad.any():
        frames = np.flatnonzero(bad)
        raise ValueError(f"code {code_name!r}: LLRs contain NaN or infinite values "
                         f"(frames {frames[:8].tolist()}{'...' if frames.size > 8 else ''}); "
                         "gl.Decoder(..., on_bad_llr='erase') decodes them as erasures instead")

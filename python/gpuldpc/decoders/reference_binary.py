"""Reference binary LDPC decoders: min-sum (normalized, offset) and sum-product.

The float32 arithmetic below is the contract the cpu and cuda backends meet
bit-exactly for "nms" and "oms" (see :mod:`gpuldpc.decoders.reference`).

Check-node rules, for a check with incoming messages ``Q_j`` (float32) and the
output to edge ``i`` computed from the others (``j != i``)::

    sign(x)  = -1 if x < 0 else +1               (so -0.0 counts as +1)
    s_i      = prod_{j != i} sign(Q_j)
    mn_i     = min_{j != i} |Q_j|                  (exact: a selection)
    nms:  R_i = s_i * (alpha * mn_i)               (one float32 multiply)
    oms:  R_i = s_i * max(mn_i - beta, 0)          (one float32 subtraction)
    spa:  R_i = s_i * 2 atanh(min(prod_{j != i} tanh(|Q_j| / 2), P_MAX))

``s * v`` is a sign flip (exact).  ``alpha`` and ``beta`` are rounded to float32
first.  For "spa" the products are forward-backward (prefix times suffix)
products evaluated in float64 and ``R`` is rounded to float32; ``P_MAX =
tanh(SPA_MAX_LLR / 2)`` caps ``|R|`` at ``SPA_MAX_LLR = 30`` (29.9998 after
float64 rounding; the product of ``tanh`` values rounds to 1 for reliable
inputs, and atanh(1) is infinite).

Variable-node side (all float32, ``R`` starts at 0):

* layered: for each layer in order, for its edges ``Q = L - R_old``, new
  ``R`` from the rule above, ``L = Q + R_new``; ``L`` starts as the channel
  LLRs and is the posterior.
* flooding: ``T = Lch + R_1 + R_2 + ...`` summed left to right over the
  variable's edges in increasing check-row order; ``Q = T - R`` for every edge,
  then every check's new ``R``; after the check update ``T`` is summed again
  and is the posterior.

Hard decision: bit 1 iff posterior < 0.

``precision="float16"`` (min-sum only): the same operations in IEEE binary16, each
rounded once to nearest (NumPy float16 arithmetic computes in float32 and rounds;
24 >= 2 * 11 + 2 bits, so that is the correctly rounded half result, the GPU's),
with two clamps that keep every posterior finite:

* channel LLRs: ``L = float16(clip(llr, -HALF_LLR_MAX, HALF_LLR_MAX)) + 0`` (rounded
  to nearest; the ``+ 0`` makes a rounded ``-0`` ``+0``, as on the GPU);
* messages: ``R_i = s_i * min(f(mn_i), HALF_R_MAX)`` with ``alpha`` and ``beta``
  rounded to float32, then to float16 (what the GPU kernels receive).

So ``|L| <= HALF_LLR_MAX + dv * HALF_R_MAX`` for a column of weight ``dv``, up to
the rounding of the sums; :func:`check_half_range` refuses codes where that bound
exceeds 65504, the largest float16.  (Past it a sum would round to +-inf, which then
stays there with its sign, never NaN, because every ``R`` is finite.)
"""
from __future__ import annotations

import numpy as np

from ..float16 import HALF_LLR_MAX, HALF_R_MAX, check_half_range
from .reference_graph import ScheduledDecoder

SPA_MAX_LLR = 30.0
_P_MAX = np.tanh(SPA_MAX_LLR / 2.0)


def channel_llr(llr, precision="float32"):
    """The posteriors' starting values: ``llr`` as it is (float32), or clamped to
    ``+-HALF_LLR_MAX``, rounded to float16 and ``+ 0`` (float16)."""
    if precision == "float32":
        return llr
    return np.clip(llr, -HALF_LLR_MAX, HALF_LLR_MAX).astype(np.float16) + np.float16(0)


def _exclusive_sign_negative(q):
    """Per edge: is the product of the other edges' signs negative? (sign(x) = -1 iff x < 0)."""
    neg = q < 0
    return neg ^ np.logical_xor.reduce(neg, axis=-1, keepdims=True)


def _exclusive_min(mag):
    """Per edge: min of the other edges' magnitudes, from the two smallest of each row."""
    first = mag.argmin(axis=-1)[..., None]
    min1 = np.take_along_axis(mag, first, axis=-1)
    others = mag.copy()
    np.put_along_axis(others, first, np.inf, axis=-1)
    min2 = others.min(axis=-1, keepdims=True)
    return np.where(np.arange(mag.shape[-1]) == first, min2, min1)


def _exclusive_product(t):
    """Per edge: product of the other edges' values (forward-backward: prefix * suffix)."""
    ones = np.ones(t.shape[:-1] + (1,), dtype=t.dtype)
    prefix = np.cumprod(np.concatenate([ones, t[..., :-1]], axis=-1), axis=-1)
    suffix = np.cumprod(np.concatenate([ones, t[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return prefix * suffix


def check_update(q, algorithm, alpha=0.75, beta=0.5, r_max=None):
    """New check-to-variable messages from ``q`` [..., degree], see the module docstring:
    float32, or (min-sum) float16 for float16 ``q``; magnitudes capped at ``r_max`` if given."""
    mag = np.abs(q)
    real = q.dtype.type          # min-sum computes in the dtype of q
    if algorithm == "nms":
        value = real(np.float32(alpha)) * _exclusive_min(mag)
    elif algorithm == "oms":
        value = np.maximum(_exclusive_min(mag) - real(np.float32(beta)), real(0))
    elif algorithm == "spa":
        t = np.tanh(mag.astype(np.float64) / 2.0)
        value = (2.0 * np.arctanh(np.minimum(_exclusive_product(t), _P_MAX))).astype(np.float32)
    else:
        raise ValueError(f"binary reference decoder: unknown algorithm {algorithm!r}")
    if r_max is not None:
        value = np.minimum(value, real(r_max))
    return np.where(_exclusive_sign_negative(q), -value, value)


class BinaryReferenceDecoder(ScheduledDecoder):
    """Binary flooding / layered decoder; ``decode(llr[batch, n]) -> DecodeResult``.

    ``settings.precision``: "float32", or "float16" for min-sum (module docstring; raises
    ValueError for "spa" and for codes outside :func:`check_half_range`)."""

    def __init__(self, code, settings):
        if settings.precision == "float16":
            if settings.algorithm == "spa":
                raise ValueError("precision='float16' runs min-sum only ('nms', 'oms'); algorithm='spa' "
                                 "needs precision='float32'")
            check_half_range(code)
        super().__init__(code, settings)
        self._r_max = HALF_R_MAX if settings.precision == "float16" else None

    def _initial_state(self, llr):
        state = super()._initial_state(channel_llr(llr, self.settings.precision))
        state["r"] = state["r"].astype(state["post"].dtype, copy=False)
        return state

    def _check_update(self, q, block):
        s = self.settings
        return check_update(q, s.algorithm, s.alpha, s.beta, self._r_max)

    def _decisions(self, post):
        return (post < 0).astype(np.uint8)

    def _satisfied(self, bits):
        return ~self.graph.row_xor(bits[:, self.graph.edge_col]).any(axis=1)

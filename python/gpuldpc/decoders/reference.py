"""The reference backend: readable NumPy decoders, the oracle for ``cpu`` and ``cuda``.

``gl.Decoder(code, ..., backend="reference")`` lands here.  Every decoder is
vectorized across the batch (and across the rows of a layer) but follows one
fixed order of float32 operations, written down here so that a faster
backend fed the same float32 LLRs reproduces the min-sum and Min-Max results
**bit-exactly** (decoded bits, iteration counts and syndrome flags).  The
sum-product rule is held to the same frame error rate, not to the same bits.

Supported
---------
============  ==================  ===========================================
code          algorithm           module
============  ==================  ===========================================
binary        nms, oms, spa       :mod:`.reference_binary` (rules, VN sums)
GF(q)         minmax, mmma        :mod:`.reference_nb` (Min-Max, paper 003
                                  Algorithm 2; MMMA merger, paper 000 §2.3)
GF(q)         tmm, tmm1           :mod:`.reference_tmm` (trellis Min-Max,
                                  Lacruz et al. TVLSI 2015; tmm1: step
                                  5's pairs from first minima), same
                                  schedules
GF(q)         fft-spa             not here: raises BackendUnavailable
============  ==================  ===========================================

both schedules ("layered", "flooding"), ``precision="float32"``; binary min-sum also
``precision="float16"`` (IEEE binary16 with clamps, the arithmetic of the cuda
backend's float16 kernels: :mod:`.reference_binary`).
``settings.options`` (GPU/CPU tuning knobs) have no meaning here and are
ignored.

Schedules (common to every rule; ``R`` check-to-variable messages, start 0)
------------------------------------------------------------------------
* layered: the layers are the base-matrix rows of a QC code (``code.z``
  checks each, in row order); for other codes each check row in increasing
  order (consecutive rows with disjoint supports are updated together, which
  gives identical numbers).  Per layer and edge: ``Q = L - R_old``, the check
  rule gives ``R_new``, then ``L = Q + R_new`` (``L`` starts as the channel
  LLRs and is the posterior).
* flooding: ``T = Lch + R_1 + R_2 + ...`` accumulated left to right in float32
  over the variable's checks in increasing row order; extrinsic ``Q = T - R``
  per edge; all checks update from these ``Q``; ``T`` is summed again after the
  check update and is the posterior.
* GF(q): every ``Q`` vector is then normalized, ``Q(a) - min_b Q(b)``, before
  the check rule (the ``L = Q + R_new`` of the layered schedule uses it).

Decisions and stopping
----------------------
Binary: bit 1 iff posterior < 0.  GF(q): the element of smallest posterior
(smallest element integer on ties).  One iteration = every layer once
(layered) or one check update plus the posterior sum (flooding).  With
``early_stop`` a frame stops after the first iteration whose decisions
satisfy every check; it returns those decisions and that iteration number.
Without it every frame runs ``max_iterations`` iterations.  ``valid`` is the
zero-syndrome flag of the returned decisions (GF(q) arithmetic for GF(q)
codes).

The exact check-node arithmetic of each rule is in the docstrings of
:mod:`.reference_binary`, :mod:`.reference_nb` and :mod:`.reference_tmm`.  Besides ``decode``, the
object ``make`` returns offers ``posterior(llr, iterations)``: the float32
posteriors after a fixed number of iterations, to compare another backend
value by value (``reference.make(code, gl.Decoder(...).settings)``).

Soft output (``settings.soft_output``, :mod:`gpuldpc.soft`): ``DecodeResult.llr`` holds each
frame's posteriors at the iteration it stopped (``run_iterations`` keeps them with its
decisions): binary, float32 (float16 posteriors converted, exact); GF(q), the posterior costs
normalised to 0 at the decided symbol.
"""
from __future__ import annotations

from .. import int4, packed_bits
from ..errors import BackendUnavailable
from .reference_binary import BinaryReferenceDecoder
from .reference_nb import MinMaxReferenceDecoder


def make(code, settings):
    """Build the reference decoder for ``code`` and validated ``settings`` (front.Settings)."""
    p = settings.precision
    if p != "float32" and not (p == "float16" and code.is_binary):
        raise BackendUnavailable(f"the reference backend computes in float32 only (binary min-sum also in "
                                 f"float16); precision={p!r} "
                                 + ("is for binary codes" if p == "float16" else "needs the cpu backend"))
    if code.is_binary:     # packed int4 input (llr_dtype="int4"): unpacked on the host, gpuldpc.int4
        return packed_bits.host_backend(int4.host_backend(BinaryReferenceDecoder(code, settings), code, settings),
                                        code, settings)
    if settings.algorithm not in MinMaxReferenceDecoder.RULES:
        raise BackendUnavailable(f"algorithm={settings.algorithm!r} is not implemented by the reference "
                                 "backend, which decodes GF(q) codes with "
                                 + ", ".join(map(repr, MinMaxReferenceDecoder.RULES)))
    return MinMaxReferenceDecoder(code, settings)

"""The clamps of the binary16 min-sum arithmetic (``precision="float16"``), shared by the
reference decoder (:mod:`gpuldpc.decoders.reference_binary`, which states the arithmetic)
and the CUDA kernels (kernels/qc_decode.cuh ``kHalfLlrMax``, ``kHalfRMax2``)."""
from __future__ import annotations

import numpy as np

HALF_LLR_MAX = 2048.0      # float16: |channel LLR| clamp (kernels/qc_decode.cuh kHalfLlrMax)
HALF_R_MAX = 2048.0        # float16: |R| clamp (kHalfRMax2)
FLOAT16_MAX = 65504.0      # largest finite float16


def check_half_range(code):
    """Raise ValueError unless ``HALF_LLR_MAX + dv * HALF_R_MAX <= 65504`` for the largest
    column weight ``dv`` of ``code``: the bound on the float16 posteriors."""
    dv = int(np.bincount(code.H.indices, minlength=code.n).max())
    bound = HALF_LLR_MAX + dv * HALF_R_MAX
    if bound > FLOAT16_MAX:
        raise ValueError(f"code {code.name!r}: precision='float16' keeps |L| <= {HALF_LLR_MAX:g} + dv x "
                         f"{HALF_R_MAX:g}, which for its column weight dv = {dv} is {bound:g}, over the float16 "
                         f"maximum {FLOAT16_MAX:g} (column weight <= "
                         f"{int((FLOAT16_MAX - HALF_LLR_MAX) // HALF_R_MAX)} fits); use precision='float32'")

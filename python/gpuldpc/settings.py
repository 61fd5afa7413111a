"""Decoder settings: the names every backend understands, and the validated
:class:`Settings` that :class:`gpuldpc.Decoder` hands to a backend."""
from __future__ import annotations

import dataclasses

BINARY_ALGORITHMS = ("nms", "oms", "spa")
NB_ALGORITHMS = ("minmax", "mmma", "tmm", "tmm1", "fft-spa")
SCHEDULES = ("layered", "flooding")
PRECISIONS = ("float32", "float16", "int16", "int8")
BACKENDS = ("auto", "cuda", "cpu", "reference")
SOFT_OUTPUTS = (None, "posterior", "extrinsic")
SOFT_DTYPES = ("float32", "float16")


def check_choice(name, value, choices):
    """ValueError naming ``name`` and the valid choices unless ``value`` is one of them."""
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Validated decoder settings handed to a backend (``on_bad_llr``: :mod:`gpuldpc.bad_llr`;
    ``soft_output``: :mod:`gpuldpc.soft`, a backend writes posteriors for any value but None;
    ``soft_dtype``: theirs, float16 converted by the front door unless the backend gives it;
    ``packed``: hard decisions packed eight to a byte, :mod:`gpuldpc.packed_bits`)."""

    algorithm: str
    schedule: str
    max_iterations: int
    early_stop: bool
    alpha: float
    beta: float
    precision: str
    threads: int | None
    options: dict
    on_bad_llr: str = "raise"
    positive_llr_bit: int = 0
    soft_output: str | None = None
    soft_dtype: str = "float32"
    packed: bool = False

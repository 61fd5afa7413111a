"""A point's result from its stored batches: the counted prefix, rates, intervals.

**Counted prefix.**  A point counts batches ``0, 1, ..., K-1``: the shortest run
of consecutive batch indices from 0 whose frame errors reach ``max_errors`` or
whose frames reach ``max_frames``; when neither is reached, every batch of the
longest consecutive run from 0.  Batches finished beyond K (workers run ahead
in parallel) stay in the store but are not counted.  So the counts depend only
on the seed and the budget -- never on how many workers ran, in which order
batches finished, or where a campaign was interrupted and resumed.

**Intervals (95 %).**  FER: Clopper-Pearson exact binomial interval over the
frames, ``[B(a/2; e, N-e+1), B(1-a/2; e+1, N-e)]`` with ``B`` the beta quantile.
BER: bit errors inside a frame are not independent, so the interval is taken
over frames: with ``X_f`` the bit errors of frame ``f`` and ``b`` bits per
frame, ``BER = mean(X)/b`` and ``mean(X) +- 1.96 sd(X)/sqrt(N)`` from the stored
sums of ``X`` and ``X^2`` (a normal approximation, fine once a few frames are in
error); with no bit error the upper end is the FER's (``BER <= FER``).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from scipy import stats as _stats

from .spec import Budget

__all__ = ["PointResult", "Prefix", "counted_prefix", "summarize", "clopper_pearson", "ber_interval"]

CONFIDENCE = 0.95


class PointResult(NamedTuple):
    """One row of ``results.csv`` (see :data:`gpuldpc.sim.results.CSV_COLUMNS`)."""

    ebn0_db: float
    batches: int
    frames: int
    frame_errors: int
    bit_errors: int
    fer: float
    fer_low: float
    fer_high: float
    ber: float
    ber_low: float
    ber_high: float
    mean_iterations: float
    seconds: float
    frames_per_second: float
    coded_mbps: float
    status: str                  # "errors" | "frames" (budget reached) | "partial" ("failed": results.collect)


class Prefix:
    """The counted prefix (module docstring) grown as batches arrive: batches
    ``0..count-1``, their frames and frame errors, and ``status`` -- "partial" while it
    may still grow, else why it stopped ("errors" or "frames").  :meth:`extend` costs one
    step per newly counted batch, so a running campaign keeps one per point."""

    def __init__(self):
        self.count, self.frames, self.errors, self.status = 0, 0, 0, "partial"

    def extend(self, batches: dict, budget: Budget) -> "Prefix":
        """Count the batches that continue the prefix; returns self."""
        while self.status == "partial" and self.count in batches:
            c = batches[self.count]
            self.count += 1
            self.frames += c.frames
            self.errors += c.frame_errors
            if self.errors >= budget.max_errors:
                self.status = "errors"
            elif self.frames >= budget.max_frames:
                self.status = "frames"
        return self


def counted_prefix(batches: dict, budget: Budget) -> tuple[list, str]:
    """The counted batches (module docstring) and why counting stopped."""
    prefix = Prefix().extend(batches, budget)
    return [batches[b] for b in range(prefix.count)], prefix.status


def clopper_pearson(errors: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Exact binomial interval for ``errors`` out of ``trials``."""
    if trials == 0:
        return 0.0, 1.0
    a = 1.0 - confidence
    low = 0.0 if errors == 0 else float(_stats.beta.ppf(a / 2, errors, trials - errors + 1))
    high = 1.0 if errors == trials else float(_stats.beta.ppf(1 - a / 2, errors + 1, trials - errors))
    return low, high


def ber_interval(bit_errors: int, bit_errors_sq: int, frames: int, bits_per_frame: int,
                 fer_high: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Normal interval of the BER over frames (module docstring)."""
    if frames == 0:
        return 0.0, 1.0
    if bit_errors == 0:
        return 0.0, fer_high
    mean = bit_errors / frames
    var = max(bit_errors_sq / frames - mean * mean, 0.0) * frames / max(frames - 1, 1)
    half = _stats.norm.ppf(0.5 + confidence / 2) * math.sqrt(var / frames)
    return max(mean - half, 0.0) / bits_per_frame, min((mean + half) / bits_per_frame, 1.0)


def summarize(ebn0_db: float, batches: dict, budget: Budget, info_bits: int, coded_bits: int) -> PointResult:
    """Counts, rates and intervals of one point (``info_bits = k*m``, ``coded_bits = n*m``)."""
    counted, status = counted_prefix(batches, budget)
    frames = sum(c.frames for c in counted)
    fe = sum(c.frame_errors for c in counted)
    be = sum(c.bit_errors for c in counted)
    be2 = sum(c.bit_errors_sq for c in counted)
    its = sum(c.iterations_sum for c in counted)
    seconds = sum(c.seconds for c in counted)
    fer_low, fer_high = clopper_pearson(fe, frames)
    ber_low, ber_high = ber_interval(be, be2, frames, info_bits, fer_high)
    fps = frames / seconds if seconds > 0 else 0.0
    return PointResult(float(ebn0_db), len(counted), frames, fe, be,
                       fe / frames if frames else 0.0, fer_low, fer_high,
                       be / (frames * info_bits) if frames else 0.0, ber_low, ber_high,
                       its / frames if frames else 0.0, seconds, fps, fps * coded_bits / 1e6, status)

"""What a campaign simulates: runs (code x algorithm x iterations), Eb/N0 points, budgets.

Everything a user types is checked here once, with errors that name the input
and the fix (:class:`SimError`, a ``ValueError``); the runner, the workers and
the store receive validated objects only.

A **run** is one curve: a code, a decoding algorithm, a schedule and an
iteration limit, simulated with one seed and one batch size.  A **point** is a
run at one Eb/N0.  A point stops when its frame errors reach ``max_errors``, or
its frames reach ``max_frames``, or (per invocation) ``max_seconds`` of wall
time have passed; later points of a run are skipped once a finished point's FER
is below ``min_fer``.
"""
from __future__ import annotations

import dataclasses
import math
import os
from typing import Sequence

import numpy as np

from ..codes.code import Code
from ..settings import BACKENDS, BINARY_ALGORITHMS, NB_ALGORITHMS, SCHEDULES
from .noise import ebn0_mdb

__all__ = ["SimError", "parse_ebn0", "load_code", "RunSpec", "Budget", "CampaignSpec"]

EBN0_RANGE_DB = (-50.0, 100.0)


class SimError(ValueError):
    """A campaign argument is wrong; the message names it and says how to fix it."""


def _ebn0_value(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SimError(f"--ebn0: {what} {text!r} is not a number of dB") from None
    if not EBN0_RANGE_DB[0] <= value <= EBN0_RANGE_DB[1]:
        raise SimError(f"--ebn0: {what} {value} dB lies outside {EBN0_RANGE_DB[0]}..{EBN0_RANGE_DB[1]} dB")
    return value


def parse_ebn0(items: str | float | Sequence[str | float]) -> tuple[float, ...]:
    """Eb/N0 points in dB from ``"START:STOP:STEP"`` (STOP included), ``"1,1.5,2"`` or a list.

    Items may mix both forms (``["0:1:0.5", "3"]``).  Values are rounded to
    milli-dB (the store's key), sorted, and must be distinct.
    """
    if isinstance(items, (str, int, float, np.floating, np.integer)):
        items = [items]
    values: list[float] = []
    for item in items:
        if not isinstance(item, str):
            values.append(_ebn0_value(str(item), "value"))
            continue
        for part in filter(None, (p.strip() for p in item.split(","))):
            if ":" not in part:
                values.append(_ebn0_value(part, "value"))
                continue
            fields = part.split(":")
            if len(fields) != 3:
                raise SimError(f"--ebn0: range {part!r} must be START:STOP:STEP, e.g. 0.5:3.0:0.25")
            start, stop, step = (_ebn0_value(f, name) for f, name in zip(fields, ("START", "STOP", "STEP")))
            if not step > 0:
                raise SimError(f"--ebn0: range {part!r} needs a positive STEP, got {step}")
            count = math.floor((stop - start) / step + 1e-9) + 1
            if count < 1:
                raise SimError(f"--ebn0: range {part!r} is empty (STOP {stop} is below START {start})")
            values.extend(start + i * step for i in range(count))
    if not values:
        raise SimError("--ebn0: the list of Eb/N0 points is empty; give START:STOP:STEP or values, "
                       "e.g. --ebn0 1:3:0.5")
    mdb = [ebn0_mdb(v) for v in values]
    if len(set(mdb)) != len(mdb):
        dup = sorted({m for m in mdb if mdb.count(m) > 1})
        raise SimError(f"--ebn0: points repeat ({', '.join(f'{m / 1000:g}' for m in dup)} dB); "
                       "give each Eb/N0 once")
    return tuple(m / 1000.0 for m in sorted(mdb))


def load_code(spec: str | Code) -> Code:
    """A code from a ``gl.codes`` name (``wifi-648-1/2``) or an alist file path."""
    from .. import codes

    if isinstance(spec, Code):
        return spec
    if not isinstance(spec, str) or not spec:
        raise SimError(f"code must be a gl.codes name or an alist file, got {spec!r}")
    if os.path.isfile(spec):
        try:
            return codes.from_alist(spec)
        except codes.CodeError as exc:
            raise SimError(f"code file {spec}: {exc}") from None
    try:
        return codes.get(spec)
    except codes.UnknownCodeError as exc:
        raise SimError(f"unknown code {spec!r}: not a file, and {exc}; gpuldpc-sim --list-codes prints "
                       "every name") from None


def _positive_int(name: str, value, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise SimError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One curve: the key of its batches in the store (with Eb/N0 and batch index).

    ``code`` is the :class:`Code` itself (shipped to workers); ``code_name`` its
    key.  ``frames_per_batch`` is part of the key because batch ``b`` holds
    frames ``b*B .. b*B+B-1``: a resume with another batch size shares nothing.
    """

    code: Code
    algorithm: str
    schedule: str
    iterations: int
    seed: int
    frames_per_batch: int

    @property
    def code_name(self) -> str:
        return self.code.name

    @property
    def key(self) -> tuple:
        return (self.code_name, self.algorithm, self.schedule, self.iterations, self.seed,
                self.frames_per_batch)

    @property
    def label(self) -> str:
        return f"{self.code_name} {self.algorithm} {self.schedule} {self.iterations} it"


@dataclasses.dataclass(frozen=True)
class Budget:
    """When a point stops: ``max_errors`` frame errors or ``max_frames`` frames (whole
    batches), or ``max_seconds`` of wall time in one invocation (None = no limit);
    ``min_fer``: skip a run's higher Eb/N0 points once a finished point's FER < min_fer."""

    max_errors: int = 100
    max_frames: int = 1_000_000
    max_seconds: float | None = None
    min_fer: float | None = None

    def __post_init__(self):
        _positive_int("--max-errors", self.max_errors)
        _positive_int("--max-frames", self.max_frames)
        if self.max_seconds is not None and not (float(self.max_seconds) > 0 and math.isfinite(self.max_seconds)):
            raise SimError(f"--max-seconds must be a positive number of seconds, got {self.max_seconds!r}")
        if self.min_fer is not None and not 0.0 < float(self.min_fer) < 1.0:
            raise SimError(f"--min-fer must lie in (0, 1), got {self.min_fer!r}")


@dataclasses.dataclass(frozen=True)
class CampaignSpec:
    """A validated campaign: runs x Eb/N0 points, budget, backend, batch size.

    Build it with :meth:`make`, which checks every argument.
    """

    runs: tuple[RunSpec, ...]
    ebn0_db: tuple[float, ...]
    budget: Budget
    backend: str

    @classmethod
    def make(cls, codes: str | Code | Sequence[str | Code], ebn0, algorithms: str | Sequence[str] | None = None,
             iterations: int | Sequence[int] = 10, schedule: str = "layered", max_errors: int = 100,
             max_frames: int = 1_000_000, max_seconds: float | None = None, min_fer: float | None = None,
             backend: str = "auto", seed: int = 1, frames_per_batch: int | None = None) -> "CampaignSpec":
        """Check every argument and build the spec (see the CLI's ``--help`` for each)."""
        if isinstance(codes, (str, Code)):
            codes = [codes]
        codes = [load_code(c) for c in codes]
        if not codes:
            raise SimError("give at least one code (a gl.codes name such as wifi-648-1/2, or an alist file)")
        if isinstance(algorithms, str):
            algorithms = [algorithms]
        if isinstance(iterations, (int, np.integer)):
            iterations = [iterations]
        iterations = [_positive_int("--iterations", i) for i in iterations]
        if not iterations:
            raise SimError("--iterations: give at least one iteration count, e.g. --iterations 10")
        if schedule not in SCHEDULES:
            raise SimError(f"--schedule {schedule!r} is not one of {', '.join(SCHEDULES)}")
        if backend not in BACKENDS:
            raise SimError(f"--backend {backend!r} is not one of {', '.join(BACKENDS)}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise SimError(f"--seed must be an integer >= 0, got {seed!r}")
        batch = _positive_int("--batch", frames_per_batch if frames_per_batch is not None
                              else default_batch(backend))
        runs = []
        for code in codes:
            allowed = BINARY_ALGORITHMS if code.is_binary else NB_ALGORITHMS
            algs = list(algorithms) if algorithms else [allowed[0]]
            for alg in algs:
                if alg not in allowed:
                    kind = "binary" if code.is_binary else f"GF({code.q})"
                    raise SimError(f"--algorithm {alg!r} does not apply to the {kind} code {code.name!r}; "
                                   f"use one of {', '.join(allowed)}")
                for it in iterations:
                    runs.append(RunSpec(code, alg, schedule, it, int(seed), batch))
        keys = [r.key for r in runs]
        if len(set(keys)) != len(keys):
            raise SimError("the same code, algorithm and iteration count is given twice; give each once")
        budget = Budget(max_errors, max_frames, max_seconds, min_fer)
        return cls(tuple(runs), parse_ebn0(ebn0), budget, backend)


def default_batch(backend: str) -> int:
    """Frames per batch when none is given: 4096 when the GPU decodes (one batch fills the
    device's streams), 64 on the CPU so that budgets are met closely."""
    from .executors import visible_gpus

    on_gpu = backend == "cuda" or (backend == "auto" and visible_gpus() > 0)
    return 4096 if on_gpu else 64

"""The campaign loop: hand batches to workers, store what finishes, stop each point.

The client keeps up to ``2 x workers`` batches in flight.  It gives them to the
first points (run order, then increasing Eb/N0) that still need batches, each
point taking no more than its budget is estimated to need (frames left, or
frame errors left at the error rate seen so far), so idle workers move on to
the next point instead of overshooting this one.  Every finished batch is
stored at once (:mod:`gpuldpc.sim.store`); a point is done when its counted
prefix (:mod:`gpuldpc.sim.stats`) reaches the error or frame budget, or its wall
time in this invocation reaches ``max_seconds``.  Results never depend on the
number of workers or on interruptions, only on the seed and the budget.

**Failures.**  A batch that raises on its worker (a CUDA error, a backend fault, a
worker process that died) is run once more (``RETRIES``); the counter-based noise
makes the second run the same batch, so a campaign with a batch that failed once
gives the counts of a clean run.  When it fails again its point is marked failed
with the reason (the store's ``failures`` table, ``status`` ``failed`` and the
``failure`` column of ``results.csv``, the live display) and gets no more batches;
the other points go on.  ``resume`` simulates a failed point again; the mark goes
when it reaches its end.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time

from .executors import DaskExecutor, InlineExecutor, LocalProcessExecutor, visible_gpus
from .noise import ebn0_mdb
from .plot import plot_results
from .progress import NoProgress, RichProgress
from .results import collect, write_csv
from .spec import CampaignSpec, RunSpec, SimError
from .stats import PointResult, Prefix, summarize
from .store import ResultsStore
from .worker import BatchTask, run_batch

__all__ = ["run_campaign", "make_executor", "write_outputs", "RETRIES"]

DISPLAY_SECONDS = 0.5        # a running point's summary (intervals, progress line) is refreshed this often
RETRIES = 1                  # runs of a failed batch before its point is marked failed


@dataclasses.dataclass
class _Point:
    run: RunSpec
    ebn0_db: float
    batches: dict
    in_flight: set = dataclasses.field(default_factory=set)
    started: float | None = None
    done: bool = False
    changed: bool = False               # batches arrived since ``result`` was computed
    result: PointResult | None = None
    shown: float = -math.inf            # when ``result`` was computed
    prefix: Prefix = dataclasses.field(default_factory=Prefix)    # the counted batches so far
    failed_runs: dict = dataclasses.field(default_factory=dict)    # batch -> times it raised
    failure: str | None = None          # why the point failed (a batch raised RETRIES + 1 times)

    def __post_init__(self):
        self.changed = bool(self.batches)   # resumed: stored batches to count

    @property
    def label(self) -> str:
        return f"{self.run.label} {self.ebn0_db:5.2f} dB"

    def next_batch(self) -> int:
        b = 0
        while b in self.batches or b in self.in_flight:
            b += 1
        return b


def make_executor(backend: str, scheduler: str | None = None, workers: int | None = None):
    """Dask when ``scheduler`` is given; else one local process per GPU (or ``workers``
    processes) when more than one would work; else this process."""
    if scheduler:
        return DaskExecutor(scheduler)
    gpus = visible_gpus() if backend in ("auto", "cuda") else 0
    if workers is None:
        workers = gpus if gpus > 1 else 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SimError(f"--workers must be a positive integer, got {workers!r}")
    if workers == 1:
        return InlineExecutor()
    devices = [i % gpus for i in range(workers)] if gpus else None
    return LocalProcessExecutor(workers, devices)


def _info_bits(run: RunSpec) -> tuple[int, int]:
    m = run.code.bits_per_symbol
    return run.code.k * m, run.code.n * m


def _batches_needed(point: _Point, budget) -> int:
    """Batches still to start for the point: the budget's estimate minus those in flight
    or already stored beyond the counted prefix."""
    frames, errors = point.prefix.frames, point.prefix.errors
    per_batch = point.run.frames_per_batch
    need = math.ceil(max(budget.max_frames - frames, 0) / per_batch)
    if errors:
        need = min(need, math.ceil((budget.max_errors - errors) * frames / errors / per_batch))
    ahead = len(point.batches) - point.prefix.count
    return max(need, 1) - len(point.in_flight) - ahead


def run_campaign(spec: CampaignSpec, out_dir, resume: bool = False, scheduler: str | None = None,
                 workers: int | None = None, progress: bool = True, references=(), executor=None) -> list[dict]:
    """Simulate ``spec`` into ``out_dir`` (store, ``results.csv``, plots); return the CSV rows.

    Parameters
    ----------
    spec : CampaignSpec
    out_dir : path
        Holds ``results.sqlite``; one that already holds batches is only reused
        with ``resume=True`` (finished batches are kept, the rest is simulated).
    scheduler : str, optional
        ``tcp://host:port`` of a Dask scheduler to run the batches on.
    workers : int, optional
        Local worker processes (default: one per visible GPU when there are
        several, else none: batches run in this process).
    progress : bool
        Show the live per-point display.
    references : sequence of :class:`~gpuldpc.sim.plot.ReferenceCurve`
        Drawn beside the runs in the plots.
    executor : optional
        An executor object (:mod:`gpuldpc.sim.executors`) to use instead.
    """
    with ResultsStore(out_dir) as store:
        stored = store.batch_count()
        if stored and not resume:
            raise SimError(f"{os.fspath(out_dir)} already holds {stored} finished batches; pass --resume "
                           "(resume=True) to continue that campaign, or choose another --out directory")
        points = []
        for run in spec.runs:
            store.set_run(run, spec.budget)
            have = store.batches(run.key)
            points += [_Point(run, e, dict(have.get(ebn0_mdb(e), {}))) for e in spec.ebn0_db]
        own_executor = executor is None
        executor = executor or make_executor(spec.backend, scheduler, workers)
        try:
            with (RichProgress() if progress else NoProgress()) as display:
                _loop(spec, store, points, executor, display)
        finally:
            if own_executor:
                executor.close()
            write_outputs(out_dir, references)
        keys = {r.key for r in spec.runs}
        return [row for row in collect(store)
                if (row["code"], row["algorithm"], row["schedule"], row["iterations"], row["seed"],
                    row["frames_per_batch"]) in keys]


def _loop(spec: CampaignSpec, store: ResultsStore, points: list, executor, display):
    budget = spec.budget
    cap = 2 * executor.workers if executor.workers > 1 else 1
    futures: dict = {}

    def submit(point: _Point, b: int):
        task = BatchTask.of(point.run, point.ebn0_db, b, spec.backend)
        futures[executor.submit(run_batch, task)] = (point, b)

    while True:
        _update_states(points, budget, display, store)
        for point in points:
            if point.done or len(futures) >= cap:
                continue
            for _ in range(min(_batches_needed(point, budget), cap - len(futures))):
                b = point.next_batch()
                point.in_flight.add(b)
                point.started = point.started or time.monotonic()
                submit(point, b)
        if not futures:
            return
        for future in executor.wait_first(list(futures)):
            point, b = futures.pop(future)
            try:
                counts = future.result()
            except Exception as exc:  # the worker's fault, not ours: retry, then fail the point
                if _run_again(point, b, exc, store, display):
                    submit(point, b)
                else:
                    point.in_flight.discard(b)
                continue
            point.in_flight.discard(b)
            store.add(point.run.key, point.ebn0_db, b, counts)
            point.batches[b] = counts
            point.changed = True


def _run_again(point: _Point, b: int, exc: Exception, store: ResultsStore, display) -> bool:
    """Batch ``b`` raised ``exc``: True to run it again (at most ``RETRIES`` times); else
    the point is marked failed (store, display) -- unless it is already done, when the
    batch lies beyond what it counts and is simply dropped."""
    runs = point.failed_runs[b] = point.failed_runs.get(b, 0) + 1
    if point.done:
        return False
    if runs <= RETRIES:
        return True
    detail = " ".join(str(exc).split())          # one line for the CSV and the display
    point.failure = f"batch {b} raised {runs} times: {type(exc).__name__}: {detail}"
    point.done = True
    store.set_failure(point.run.key, point.ebn0_db, point.failure)
    display.fail(point.label, point.failure)
    return False


def _update_states(points: list, budget, display, store: ResultsStore):
    """Mark points done (budget reached, time spent, or skipped after a FER below min_fer;
    a point that reaches its end loses an earlier failure mark).  The counted prefix grows
    as batches arrive; a point's full result (intervals) is recomputed when it finishes,
    and for the display at most every ``DISPLAY_SECONDS``."""
    now = time.monotonic()
    low_fer_runs = set()
    for point in points:
        if not point.done:
            if point.run.key in low_fer_runs:
                point.done = True                       # skipped: a lower Eb/N0 is already below min_fer
                continue
            point.prefix.extend(point.batches, budget)
            if point.batches:
                timed_out = (budget.max_seconds is not None and point.started is not None
                             and now - point.started >= budget.max_seconds)
                finished = point.prefix.status != "partial" or timed_out
                if finished or (point.changed and now - point.shown >= DISPLAY_SECONDS):
                    point.result = summarize(point.ebn0_db, point.batches, budget, *_info_bits(point.run))
                    point.changed, point.shown = False, now
                    display.update(point.label, point.result, budget, finished)
                if finished:
                    store.clear_failure(point.run.key, point.ebn0_db)
                point.done = finished
        if (point.done and point.failure is None and point.result is not None and budget.min_fer is not None
                and point.result.frames and point.result.fer < budget.min_fer):
            low_fer_runs.add(point.run.key)


def write_outputs(out_dir, references=()) -> str:
    """``results.csv`` and the plots from the store of ``out_dir``; returns the CSV path."""
    path = write_csv(out_dir)
    with ResultsStore(out_dir) as store:
        plot_results(collect(store), out_dir, references)
    return path

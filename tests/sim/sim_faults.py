"""Fault injection for the campaign tests: chosen batches raise, or kill their worker
process, on their first runs -- on any executor.

test_failures.py imports this module by its plain name with this folder on ``sys.path``,
which spawned worker processes (local pools, Dask's nannies) inherit, so they can unpickle
the wrapped batch function.  Runs are counted in marker files, so the count holds across
processes and across a worker that died.
"""
from __future__ import annotations

import itertools
import os


def _marker(directory, ebn0_db: float, batch: int, run: int) -> str:
    return os.path.join(os.fspath(directory), f"{ebn0_db:g}dB-batch{batch}-run{run}")


def runs(directory) -> dict:
    """``{(ebn0_db, batch): runs started}`` of the faulty batches, from the marker files."""
    out: dict = {}
    for name in os.listdir(directory):
        db, batch, _ = name.split("-")
        key = (float(db[:-2]), int(batch[5:]))
        out[key] = out.get(key, 0) + 1
    return out


class FailingBatches:
    """``fn(task)``, except that batch ``(ebn0_db, batch)`` of ``faults`` raises
    ``RuntimeError("injected fault: batch B at E dB, run R")`` on its first ``faults[...]``
    runs (or, with ``crash``, ends its process as a segfault in a backend would)."""

    def __init__(self, fn, directory, faults: dict, crash: bool = False):
        self.fn, self.directory, self.faults, self.crash = fn, os.fspath(directory), dict(faults), crash

    def __call__(self, task):
        key = (task.ebn0_db, task.batch)
        if key in self.faults:
            run = self._start_run(*key)
            if run <= self.faults[key]:
                if self.crash:
                    os._exit(70)
                raise RuntimeError(f"injected fault: batch {task.batch} at {task.ebn0_db:g} dB, run {run}")
        return self.fn(task)

    def _start_run(self, ebn0_db: float, batch: int) -> int:
        """This run's number (1, 2, ...): the first marker file that this call creates."""
        for run in itertools.count(1):
            try:
                os.close(os.open(_marker(self.directory, ebn0_db, batch, run), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
                return run
            except FileExistsError:
                continue


class FaultyExecutor:
    """An executor (:mod:`gpuldpc.sim.executors`) whose tasks run through
    :class:`FailingBatches`; ``inner`` does the work and stays the caller's to close."""

    def __init__(self, inner, directory, faults: dict, crash: bool = False):
        os.makedirs(directory, exist_ok=True)
        self.inner, self.workers = inner, inner.workers
        self._args = (directory, faults, crash)

    def submit(self, fn, task):
        return self.inner.submit(FailingBatches(fn, *self._args), task)

    def wait_first(self, futures):
        return self.inner.wait_first(futures)

    def close(self):
        pass

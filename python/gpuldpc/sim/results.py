"""``results.csv``: derived from the store alone, one row per run and Eb/N0 point.

The first ten columns are the ones every user script reads (code, algorithm,
iterations, ebn0_db, frames, frame_errors, bit_errors, fer, ber,
mean_iterations); the rest add the schedule, seed and batch size that complete a
run's key, 95 % intervals (:mod:`gpuldpc.sim.stats`), the budget status, the
throughput of the workers (frames and coded Mbit/s per worker-second: channel,
decode and counting included) and, last, ``failure``: empty, or why the point
failed (a batch raised on its worker twice; ``status`` is then ``failed`` and the
counts are those of the batches stored before).
"""
from __future__ import annotations

import csv
import os

from .stats import PointResult, summarize
from .store import ResultsStore

__all__ = ["CSV_COLUMNS", "RESULTS_NAME", "collect", "write_csv", "read_csv"]

RESULTS_NAME = "results.csv"

CSV_COLUMNS = ("code", "algorithm", "iterations", "ebn0_db", "frames", "frame_errors", "bit_errors",
               "fer", "ber", "mean_iterations", "schedule", "seed", "frames_per_batch", "batches",
               "fer_low", "fer_high", "ber_low", "ber_high", "status", "seconds", "frames_per_second",
               "coded_mbps", "failure")


def collect(store: ResultsStore) -> list[dict]:
    """Every (run, point) of the store as a dict of :data:`CSV_COLUMNS`."""
    rows = []
    for run in store.runs():
        m = int(run["q"]).bit_length() - 1
        key = tuple(run[c] for c in ("code", "algorithm", "schedule", "iterations", "seed", "frames_per_batch"))
        stored, failures = store.batches(key), store.failures(key)
        for mdb in sorted(stored.keys() | failures.keys()):
            point: PointResult = summarize(mdb / 1000.0, stored.get(mdb, {}), run["budget"], run["k"] * m,
                                           run["n"] * m)
            row = {c: run[c] for c in ("code", "algorithm", "schedule", "iterations", "seed", "frames_per_batch")}
            row.update(point._asdict(), failure=failures.get(mdb, ""))
            if row["failure"]:
                row["status"] = "failed"
            rows.append({c: row[c] for c in CSV_COLUMNS})
    return rows


def _fmt(value):
    return f"{value:.6g}" if isinstance(value, float) else value


def write_csv(directory) -> str:
    """Write ``DIR/results.csv`` from ``DIR/results.sqlite``; return its path."""
    with ResultsStore(directory) as store:
        rows = collect(store)
    path = os.path.join(os.fspath(directory), RESULTS_NAME)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(v) for k, v in row.items()})
    os.replace(tmp, path)
    return path


_INT_COLUMNS = {"iterations", "frames", "frame_errors", "bit_errors", "seed", "frames_per_batch", "batches"}
_STR_COLUMNS = {"code", "algorithm", "schedule", "status", "failure"}


def read_csv(path) -> list[dict]:
    """Rows of a ``results.csv`` with numbers parsed (ints and floats)."""
    with open(path, newline="") as f:
        return [{k: (v if k in _STR_COLUMNS else int(v) if k in _INT_COLUMNS else float(v))
                 for k, v in row.items()} for row in csv.DictReader(f)]

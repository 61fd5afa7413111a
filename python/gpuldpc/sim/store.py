"""The results store: one SQLite database (WAL mode) per campaign directory.

Why SQLite: every finished batch is one row written in its own transaction, so
a campaign killed at any instant keeps every batch it finished and no half row;
the primary key ``(code, algorithm, schedule, iterations, seed,
frames_per_batch, ebn0_mdb, batch)`` makes a batch count once however often it
is computed (``INSERT OR IGNORE``: a resumed or duplicated batch is dropped);
WAL lets a plot or ``results.csv`` be read while the campaign writes; it is in
the standard library of every Python the package runs on.  An appended CSV has
no atomic rows or uniqueness, and Parquet files cannot be appended one row at a
time.  Only the client process writes (workers return counts), so there is
one writer.

Tables: ``batches`` (one row per finished batch, :class:`~gpuldpc.sim.frames.BatchCounts`
plus the key), ``runs`` (the budget last used for each run, so that
``results.csv`` can be derived from the store alone) and ``failures`` (one row per
point that failed: a batch raised on its worker twice; the reason, until the point is
simulated to its end again).  ``failures`` came after the first stores: ``CREATE TABLE
IF NOT EXISTS`` adds it to an older store when it is opened, so the schema version stays 1.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time

from .frames import BatchCounts
from .noise import ebn0_mdb
from .spec import Budget, RunSpec, SimError

__all__ = ["ResultsStore", "STORE_NAME"]

STORE_NAME = "results.sqlite"
SCHEMA_VERSION = 1

_RUN_COLUMNS = ("code", "algorithm", "schedule", "iterations", "seed", "frames_per_batch")
_COUNT_COLUMNS = ("frames", "frame_errors", "bit_errors", "bit_errors_sq", "iterations_sum", "seconds",
                  "backend")
_BATCH_WIDTH = len(_RUN_COLUMNS) + 2 + len(_COUNT_COLUMNS) + 1      # + ebn0_mdb, batch; + finished_at

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    code TEXT NOT NULL, algorithm TEXT NOT NULL, schedule TEXT NOT NULL, iterations INTEGER NOT NULL,
    seed INTEGER NOT NULL, frames_per_batch INTEGER NOT NULL,
    n INTEGER NOT NULL, k INTEGER NOT NULL, q INTEGER NOT NULL, budget TEXT NOT NULL,
    PRIMARY KEY ({", ".join(_RUN_COLUMNS)}));
CREATE TABLE IF NOT EXISTS batches (
    code TEXT NOT NULL, algorithm TEXT NOT NULL, schedule TEXT NOT NULL, iterations INTEGER NOT NULL,
    seed INTEGER NOT NULL, frames_per_batch INTEGER NOT NULL, ebn0_mdb INTEGER NOT NULL,
    batch INTEGER NOT NULL,
    frames INTEGER NOT NULL, frame_errors INTEGER NOT NULL, bit_errors INTEGER NOT NULL,
    bit_errors_sq INTEGER NOT NULL, iterations_sum INTEGER NOT NULL, seconds REAL NOT NULL,
    backend TEXT NOT NULL, finished_at REAL NOT NULL,
    PRIMARY KEY ({", ".join(_RUN_COLUMNS)}, ebn0_mdb, batch));
CREATE TABLE IF NOT EXISTS failures (
    code TEXT NOT NULL, algorithm TEXT NOT NULL, schedule TEXT NOT NULL, iterations INTEGER NOT NULL,
    seed INTEGER NOT NULL, frames_per_batch INTEGER NOT NULL, ebn0_mdb INTEGER NOT NULL,
    reason TEXT NOT NULL, failed_at REAL NOT NULL,
    PRIMARY KEY ({", ".join(_RUN_COLUMNS)}, ebn0_mdb));
"""
_RUN_WHERE = " AND ".join(f"{c} = ?" for c in _RUN_COLUMNS)


class ResultsStore:
    """Open (or create) ``DIR/results.sqlite``.

    Parameters
    ----------
    directory : path
        The campaign directory (created if missing).
    """

    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(os.fspath(directory), STORE_NAME)
        self._db = sqlite3.connect(self.path, timeout=60.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._db:
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise SimError(f"{self.path}: results store schema {row[0]} is not {SCHEMA_VERSION}; "
                               "use a new --out directory")

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def batch_count(self) -> int:
        """Number of stored batches (all runs)."""
        return self._db.execute("SELECT COUNT(*) FROM batches").fetchone()[0]

    def set_run(self, run: RunSpec, budget: Budget):
        """Record a run and the budget it is simulated with (replacing an earlier budget)."""
        code = run.code
        with self._db:
            self._db.execute(f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * 10)})",
                             (*run.key, code.n, code.k, code.q, json.dumps(budget.__dict__)))

    def runs(self) -> list[dict]:
        """Every recorded run: its key columns, n, k, q and ``budget`` (a :class:`Budget`)."""
        cur = self._db.execute(f"SELECT {', '.join(_RUN_COLUMNS)}, n, k, q, budget FROM runs "
                               "ORDER BY code, algorithm, schedule, iterations, seed, frames_per_batch")
        out = []
        for row in cur.fetchall():
            rec = dict(zip(_RUN_COLUMNS + ("n", "k", "q"), row[:-1]))
            rec["budget"] = Budget(**json.loads(row[-1]))
            out.append(rec)
        return out

    def add(self, run_key: tuple, ebn0_db: float, batch: int, counts: BatchCounts) -> bool:
        """Store one finished batch atomically; False when it was already stored."""
        with self._db:
            cur = self._db.execute(
                f"INSERT OR IGNORE INTO batches VALUES ({', '.join('?' * _BATCH_WIDTH)})",
                (*run_key, ebn0_mdb(ebn0_db), int(batch), *counts, time.time()))
        return cur.rowcount == 1

    def batches(self, run_key: tuple, ebn0_db: float | None = None) -> dict:
        """Stored batches of a run: ``{ebn0_mdb: {batch: BatchCounts}}`` (one point if given)."""
        where = _RUN_WHERE
        args = list(run_key)
        if ebn0_db is not None:
            where += " AND ebn0_mdb = ?"
            args.append(ebn0_mdb(ebn0_db))
        cur = self._db.execute(f"SELECT ebn0_mdb, batch, {', '.join(_COUNT_COLUMNS)} FROM batches "
                               f"WHERE {where} ORDER BY ebn0_mdb, batch", args)
        out: dict = {}
        for mdb, batch, *counts in cur.fetchall():
            out.setdefault(mdb, {})[batch] = BatchCounts(*counts)
        return out

    def set_failure(self, run_key: tuple, ebn0_db: float, reason: str):
        """Mark a point failed with ``reason`` (replacing an earlier reason)."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (*run_key, ebn0_mdb(ebn0_db), reason, time.time()))

    def clear_failure(self, run_key: tuple, ebn0_db: float):
        """Forget a point's failure (it was simulated to its end since)."""
        with self._db:
            self._db.execute(f"DELETE FROM failures WHERE {_RUN_WHERE} AND ebn0_mdb = ?",
                             (*run_key, ebn0_mdb(ebn0_db)))

    def failures(self, run_key: tuple) -> dict:
        """Failed points of a run: ``{ebn0_mdb: reason}``."""
        cur = self._db.execute(f"SELECT ebn0_mdb, reason FROM failures WHERE {_RUN_WHERE}", run_key)
        return dict(cur.fetchall())

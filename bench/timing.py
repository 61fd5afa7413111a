"""Wall-clock timing shared by the benchmark scripts (run as ``python3 bench/<script>.py``)."""
import os
import subprocess
import time

import numpy as np


def median_time(fn, reps, warmup=2):
    """Median wall time of ``fn()`` over ``reps`` calls, after ``warmup`` untimed calls.

    ``fn`` must return only when its work is done (synchronize device work inside it).
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def latency(decode, reps, warm_seconds=1.0):
    """(median, p99) seconds of ``decode()`` over ``reps`` calls, after ``warm_seconds`` of
    calls (the GPU's clocks up, as in a live receiver)."""
    start = time.perf_counter()
    while time.perf_counter() - start < warm_seconds:
        decode()
    times = np.empty(reps)
    for i in range(reps):
        t0 = time.perf_counter()
        decode()
        times[i] = time.perf_counter() - t0
    return float(np.median(times)), float(np.percentile(times, 99))


def source_commit() -> str | None:
    """The commit the benchmarked code comes from: ``$GPULDPC_COMMIT`` when set (a copy of the
    working tree on another machine may carry a stale ``.git``), else ``git rev-parse HEAD``."""
    commit = os.environ.get("GPULDPC_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, text=True).stdout.strip()
    return commit or None

"""Wall-clock timing shared by the benchmark scripts (run as ``python3 bench/<script>.py``)."""
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

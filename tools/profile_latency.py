"""Where the time of a latency call goes: ``gl.Decoder(preset="latency")`` calls from numpy
arrays, on the GPU machine (``python3 tools/profile_latency.py [CODE ...]``: code names, or
``nr:K:E`` for a 5G NR block of k = K and E = E; by default WiMAX 2304 r1/2 and GF(32) (620,310)).

Prints, per case, the wall time per call at 1, 5 and 10 iterations (the slope is the GPU's time an
iteration, the intercept all the rest: host work, launch, transfers) and the profile of 10-iteration
calls, the functions taking the most time of their own, so a change to the Python path can be aimed
at what costs (docs/gpu.md, "The front door").
"""
from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time

import numpy as np

import gpuldpc as gl


def code_of(name: str):
    """A library code by name, or ``nr:K:E``: ``gl.codes.nr(K, E)``."""
    if name.startswith("nr:"):
        k, e = (int(v) for v in name.split(":")[1:])
        return gl.codes.nr(k, e)
    return gl.codes.get(name)


def per_call(dec, llr, calls=2000) -> float:
    """Seconds a ``dec.decode(llr)`` call, after a second of calls."""
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        dec.decode(llr)
    t0 = time.perf_counter()
    for _ in range(calls):
        dec.decode(llr)
    return (time.perf_counter() - t0) / calls


def case(name, **kw):
    """Wall time a call at 1, 5 and 10 iterations (the intercept is what a call costs besides
    the iterations), then the profile of 10-iteration calls."""
    code = code_of(name)
    rng = np.random.default_rng(1)
    width = code.n if code.is_binary else code.n * code.bits_per_symbol   # E LLRs for an NR block
    llr = rng.normal(2.0, 1.5, (1, width)).astype(np.float32)
    times = {}
    for iterations in (1, 5, 10):
        dec = gl.Decoder(code, backend="cuda", max_iterations=iterations, early_stop=False, devices=[0],
                         preset="latency", **kw)
        times[iterations] = per_call(dec, llr) * 1e6
        if iterations < 10:
            dec.close()
    slope = (times[10] - times[1]) / 9
    print(f"== {name} ({dec.schedule}): " + ", ".join(f"{t:.1f} us at {i} it." for i, t in times.items())
          + f" without the profiler: {slope:.2f} us an iteration, {times[1] - slope:.1f} us besides")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(2000):
        dec.decode(llr)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(14)
    print(out.getvalue())
    dec.close()


def main():
    for name in sys.argv[1:] or ("wimax-2304-1/2", "gf32-620-310"):
        case(name)


if __name__ == "__main__":
    sys.exit(main())

"""Where the host time of a latency call goes: cProfile of ``gl.Decoder(preset="latency")``
calls from numpy arrays, on the GPU machine (``python3 tools/profile_latency.py``).

Prints, per case, the wall time per call with and without the profiler and the functions
taking the most time of their own, so a change to the Python path can be aimed at what
costs (docs/gpu.md, "The front door").
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


def case(name, **kw):
    code = code_of(name)
    dec = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0], preset="latency",
                     **kw)
    rng = np.random.default_rng(1)
    if code.is_binary:
        llr = rng.normal(2.0, 1.5, (1, code.n)).astype(np.float32)   # E LLRs for an NR block
    else:
        llr = rng.normal(2.0, 1.5, (1, code.n * code.bits_per_symbol)).astype(np.float32)
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        dec.decode(llr)
    calls = 2000
    t0 = time.perf_counter()
    for _ in range(calls):
        dec.decode(llr)
    plain = (time.perf_counter() - t0) / calls
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        dec.decode(llr)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(14)
    print(f"== {name} ({dec.schedule}): {plain * 1e6:.1f} us a call without the profiler")
    print(out.getvalue())
    dec.close()


def main():
    for name in sys.argv[1:] or ("wimax-2304-1/2", "gf32-620-310"):
        case(name)


if __name__ == "__main__":
    sys.exit(main())

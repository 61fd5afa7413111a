"""What a dropped GPU decoder leaves to Python's cyclic collector (run on the GPU machine).

A decoder freed by reference counting releases its CUDA objects at once, in the thread that
drops it; one held in a reference cycle waits for the cyclic collector, which may run in any
thread, where PyCUDA cannot release them ("... in out-of-thread context could not be cleaned
up": a leak; docs/gpu.md "Tests").  For each configuration this makes a decoder, decodes once,
deletes it (after ``close()`` where named) and prints the unreachable objects the collector
finds, by type (gpuldpc and pycuda types; an empty list is the goal), then frees them.

    source tools/device_env.sh && python3 tools/decoder_cycles.py
"""
import gc

import numpy as np

import gpuldpc as gl
from gpuldpc import cuda


def unreachable_after(make, llr, close):
    """Types and counts of the objects only the cyclic collector frees once ``make()``'s
    decoder, after one decode (and ``close()``), is deleted."""
    gc.collect()
    dec = make()
    dec.decode(llr)
    if close:
        dec.close()
    del dec
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    kinds = {}
    for obj in gc.garbage:
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        if kind.startswith(("gpuldpc", "pycuda")):
            kinds[kind] = kinds.get(kind, 0) + 1
    gc.garbage.clear()
    gc.set_debug(0)
    gc.collect()                       # now freed for real
    return sorted(kinds.items(), key=lambda kv: -kv[1])


def main():
    wimax, nb = gl.codes.get("wimax-2304-1/2"), gl.codes.get("gf32-620-310")
    x = np.zeros((300, wimax.n), np.float32)
    bits = np.zeros((10, nb.n * nb.bits_per_symbol), np.float32)
    cases = [("CudaDecoder, throughput", lambda: cuda.CudaDecoder(wimax, devices=[0]), x, False),
             ("CudaDecoder, latency (resident)", lambda: cuda.CudaDecoder(wimax, devices=[0], preset="latency"),
              x[:1], False),
             ("gl.Decoder cuda", lambda: gl.Decoder(wimax, backend="cuda", devices=[0]), x, False),
             ("gl.Decoder cuda, closed first", lambda: gl.Decoder(wimax, backend="cuda", devices=[0]), x, True),
             ("gl.Decoder cuda GF(32)", lambda: gl.Decoder(nb, backend="cuda", devices=[0]), bits, False)]
    for label, make, llr, close in cases:
        print(f"{label}: {unreachable_after(make, llr, close)}", flush=True)


if __name__ == "__main__":
    main()

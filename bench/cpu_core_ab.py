"""A/B of gpuldpc._core builds in one process: one frame through BinaryDecoder.decode, interleaved.

The intra-frame figures of docs/cpu.md ("Intra-frame path", "Measured") compare builds of
the C++ decoder this way, because this VM is shared and noisy: the builds run in turns
(rounds of ``--calls`` calls each, the order reversed every round) in one process, on the same
frame, and each build's per-round medians are reported as a median and a range, with the
ratio to the first build round by round.  Before timing, every build must give the first
build's bits, iterations, flags and posteriors on 64 frames (``--no-check`` for builds that
are wrong on purpose, such as a timing experiment).

The first build is ``gpuldpc._core`` (the package's own); the others are .so files built with
another pybind11 internals id, which lets two builds of one module live in one process::

    cmake -S . -B /tmp/build-b -G Ninja -DENABLE_GNURADIO=OFF -DCMAKE_BUILD_TYPE=Release \\
          -DPython_EXECUTABLE=/usr/bin/python3 -DCMAKE_CXX_FLAGS='-DPYBIND11_BUILD_ABI=\\"_b\\"'
    ninja -C /tmp/build-b _core && cp /tmp/build-b/_core*.so /tmp/b.so
    python bench/cpu_core_ab.py /tmp/b.so --precision float32 --code wimax-2304-1/2
"""
from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

import gpuldpc as gl
from gpuldpc import _native, channel

SCALE = {"float32": 1.0, "int16": 64.0, "int8": 6.0}


def load_build(path: str, tag: str):
    """The _core module in the .so file ``path`` (built with its own PYBIND11_BUILD_ABI)."""
    spec = importlib.util.spec_from_file_location(f"ab_{tag}._core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def round_medians(decoders, llr, rounds: int, calls: int) -> np.ndarray:
    """[build, round] median seconds of one decode(llr) call, builds in turns."""
    def block(dec):
        times = np.empty(calls)
        for i in range(calls):
            t0 = time.perf_counter()
            dec.decode(llr, False)
            times[i] = time.perf_counter() - t0
        return np.median(times)

    for dec in decoders:       # warm-up
        block(dec)
    out = np.empty((len(decoders), rounds))
    order = list(range(len(decoders)))
    for r in range(rounds):
        for k in (order if r % 2 else order[::-1]):
            out[k, r] = block(decoders[k])
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", help="_core .so files (another PYBIND11_BUILD_ABI each)")
    parser.add_argument("--code", default="wimax-2304-1/2")
    parser.add_argument("--precision", default="float32", choices=tuple(SCALE))
    parser.add_argument("--algorithm", default="nms", choices=("nms", "oms"))
    parser.add_argument("--iterations", type=int, default=10, help="fixed (early stop off)")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=300, help="calls per round")
    parser.add_argument("--no-check", action="store_true", help="time builds whose numbers differ")
    args = parser.parse_args(argv)

    code = gl.codes.get(args.code)
    rng = np.random.default_rng(1)
    words = code.encode(rng.integers(0, 2, (64, code.k), dtype=np.uint8))
    llr = np.ascontiguousarray(channel.transmit(code, words, 2.0, rng), dtype=np.float32)
    names = ["gpuldpc._core"] + args.builds
    modules = [_native.core("cpu_decoders")] + [load_build(p, f"b{i}") for i, p in enumerate(args.builds)]
    decoders = [m.BinaryDecoder(code.n, code.H.indptr, code.H.indices, args.algorithm, "layered", args.precision,
                                args.iterations, False, 0.75, 0.5, SCALE[args.precision], 1, 1.0,
                                base=np.asarray(code.base, np.int64), z=code.z, intra_frames=1)
                for m in modules]
    if not args.no_check:
        for f in range(len(llr)):
            want = decoders[0].decode(llr[f:f + 1], True)
            for name, dec in zip(names[1:], decoders[1:]):
                for a, b in zip(want, dec.decode(llr[f:f + 1], True)):
                    if not np.array_equal(a, b):
                        raise SystemExit(f"{name} differs from {names[0]} on frame {f}")
    t = round_medians(decoders, llr[:1], args.rounds, args.calls) * 1e6
    print(f"{args.code} {args.algorithm} {args.precision}, {args.iterations} it, one frame, _core, "
          f"{args.rounds} rounds x {args.calls} calls: median [range] of the round medians, us")
    for name, row in zip(names, t):
        ratio = row / t[0]
        print(f"  {name:40} {np.median(row):7.2f} [{row.min():.2f} .. {row.max():.2f}]   "
              f"x {np.median(ratio):.3f} [{ratio.min():.3f} .. {ratio.max():.3f}]")


if __name__ == "__main__":
    main()

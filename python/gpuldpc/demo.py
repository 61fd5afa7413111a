"""The main job: encode frames, send them over BPSK/AWGN, decode, count errors.

::

    python -m gpuldpc.demo                          # WiFi 1944 r1/2, 2 dB, 2000 frames
    python -m gpuldpc.demo --ebn0 1.5 --frames 5000 --seed 7 --backend reference

Per batch: random information bits (``numpy.random.default_rng(seed)``),
``code.encode`` (systematic), :func:`gpuldpc.channel.transmit` (BPSK, AWGN at
Eb/N0 for the code rate, LLR ``L = 2y/sigma^2``), ``Decoder.decode``.
Errors are counted on the information bits (as AFF3CT does); a frame is in
error when any of its information bits is wrong.  Throughput is coded bits per
second of the decoder alone, ``n * frames / decode time`` (host LLRs to host
bits, DESIGN.md "Measuring"), with encoding and channel outside the clock.
``--backend auto`` takes the best backend here (cuda, then cpu, then the
NumPy reference); the report names the one that ran.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from . import channel, codes
from .decoders import BackendUnavailable, Decoder
from .settings import BACKENDS, BINARY_ALGORITHMS, SCHEDULES


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m gpuldpc.demo", description=__doc__.split("\n")[0])
    p.add_argument("--code", default="wifi-1944-1/2", help="a gl.codes name (binary code); default %(default)s")
    p.add_argument("--ebn0", type=float, default=2.0, help="Eb/N0 in dB; default %(default)s")
    p.add_argument("--frames", type=int, default=2000, help="frames to send; default %(default)s")
    p.add_argument("--batch", type=int, default=200, help="frames per decode call; default %(default)s")
    p.add_argument("--seed", type=int, default=1, help="seed of the information bits and noise; default %(default)s")
    p.add_argument("--backend", choices=BACKENDS, default="auto", help="decoder backend; default %(default)s")
    p.add_argument("--algorithm", choices=BINARY_ALGORITHMS, default="nms", help="default %(default)s")
    p.add_argument("--schedule", choices=SCHEDULES, default="layered", help="default %(default)s")
    p.add_argument("--iterations", type=int, default=10, help="maximum iterations; default %(default)s")
    args = p.parse_args(argv)
    for name in ("frames", "batch", "iterations"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    try:
        code = codes.get(args.code)
    except KeyError as exc:
        p.error(str(exc))
    if not code.is_binary:
        p.error(f"--code: the demo sends binary codes over BPSK; {args.code!r} is over GF({code.q})")
    return args


def run(args: argparse.Namespace) -> dict:
    """Simulate ``args.frames`` frames; return the counts and rates."""
    code = codes.get(args.code)
    dec = Decoder(code, algorithm=args.algorithm, schedule=args.schedule,
                  max_iterations=args.iterations, backend=args.backend)
    rng = np.random.default_rng(args.seed)
    bit_errors = frame_errors = undetected = iterations = 0
    decode_s = 0.0
    for start in range(0, args.frames, args.batch):
        batch = min(args.batch, args.frames - start)
        info = rng.integers(0, 2, size=(batch, code.k), dtype=np.uint8)
        llr = channel.transmit(code, code.encode(info), args.ebn0, rng)
        t0 = time.perf_counter()
        res = dec.decode(llr)
        decode_s += time.perf_counter() - t0
        errors = channel.count_errors(res.info, info)
        wrong = errors.bit_errors > 0
        bit_errors += int(errors.bit_errors.sum())
        frame_errors += int(wrong.sum())
        undetected += int((wrong & res.valid).sum())
        iterations += int(res.iterations.sum())
    frames = args.frames
    return dict(code=code.name, n=code.n, k=code.k, ebn0_db=args.ebn0, backend=dec.backend,
                algorithm=dec.algorithm, schedule=dec.schedule, max_iterations=dec.max_iterations,
                frames=frames, frame_errors=frame_errors, undetected=undetected, bit_errors=bit_errors,
                fer=frame_errors / frames, ber=bit_errors / (frames * code.k),
                mean_iterations=iterations / frames, decode_s=decode_s,
                coded_mbps=code.n * frames / decode_s / 1e6, info_mbps=code.k * frames / decode_s / 1e6)


def report(r: dict) -> str:
    return "\n".join([
        f"code        {r['code']} (n={r['n']}, k={r['k']}), BPSK/AWGN at Eb/N0 = {r['ebn0_db']:g} dB",
        f"decoder     backend={r['backend']} algorithm={r['algorithm']} schedule={r['schedule']} "
        f"max_iterations={r['max_iterations']} (early stop)",
        f"frames      {r['frames']}  frame errors {r['frame_errors']} "
        f"(undetected: {r['undetected']})  bit errors {r['bit_errors']}",
        f"FER         {r['fer']:.3e}",
        f"BER         {r['ber']:.3e}  (information bits)",
        f"iterations  {r['mean_iterations']:.2f} per frame on average",
        f"throughput  {r['coded_mbps']:.2f} Mb/s coded, {r['info_mbps']:.2f} Mb/s information "
        f"({r['decode_s']:.2f} s decoding)",
    ])


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        result = run(args)
    except BackendUnavailable as exc:
        print(f"python -m gpuldpc.demo: {exc}", file=sys.stderr)
        return 1
    print(report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

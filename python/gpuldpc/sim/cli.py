"""``gpuldpc-sim`` / ``python -m gpuldpc.sim``: a BER/FER campaign from the command line.

Example::

    gpuldpc-sim wifi-1944-1/2 --ebn0 0.5:3.0:0.25 --algorithm nms spa --iterations 10 \\
        --max-errors 100 --max-frames 10000000 --backend auto --seed 1 --out runs/wifi1944

writes ``runs/wifi1944/results.sqlite`` (the store), ``results.csv`` and
``error_rates.png``/``.svg``.  Exit status 0 when done, 2 for a wrong argument
(the message names it), 1 when a point failed (one of its batches raised on its
worker twice; the other points are complete, the table and ``results.csv`` say
which point and why, ``--resume`` simulates it again), 130 when interrupted
(every finished batch is kept: run again with ``--resume``).
"""
from __future__ import annotations

import argparse
import sys

from .spec import CampaignSpec, SimError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpuldpc-sim",
        description="BER/FER vs Eb/N0 of LDPC codes over BPSK/AWGN, on the GPU, the CPU or a Dask cluster.",
        epilog="Results go to OUT/results.sqlite (resumable), OUT/results.csv and OUT/error_rates.{png,svg}.")
    p.add_argument("codes", nargs="*", metavar="CODE",
                   help="gl.codes name (wifi-648-1/2, wimax-2304-1/2, gf32-744-653) or alist file; several allowed")
    p.add_argument("--ebn0", nargs="+", metavar="DB",
                   help="Eb/N0 points: START:STOP:STEP (STOP included), values, or comma lists")
    p.add_argument("--algorithm", nargs="+", metavar="ALG",
                   help="nms, oms, spa (binary); minmax, mmma, tmm, tmm1, fft-spa (GF(q)); several give several curves "
                        "(default nms / minmax)")
    p.add_argument("--iterations", nargs="+", type=int, default=[10], metavar="N",
                   help="maximum iterations (early stop on zero syndrome); several give several curves")
    p.add_argument("--schedule", default="layered", choices=("layered", "flooding"))
    p.add_argument("--max-errors", type=int, default=100, metavar="N", help="frame errors that end a point")
    p.add_argument("--max-frames", type=int, default=1_000_000, metavar="N",
                   help="frames that end a point (rounded up to whole batches)")
    p.add_argument("--max-seconds", type=float, metavar="T", help="wall seconds per point in this invocation")
    p.add_argument("--min-fer", type=float, metavar="F",
                   help="skip a curve's higher Eb/N0 points once a finished point's FER is below F")
    p.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu", "reference"))
    p.add_argument("--batch", type=int, metavar="B", help="frames per batch (default 4096 on a GPU, else 64)")
    p.add_argument("--seed", type=int, default=1, help="campaign seed (noise and transmitted words)")
    p.add_argument("--out", metavar="DIR", help="campaign directory")
    p.add_argument("--resume", action="store_true", help="continue the campaign stored in DIR")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the batches on this Dask scheduler")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: one per visible GPU when there are several)")
    p.add_argument("--reference-curve", action="append", default=[], metavar="[fer=|ber=]FILE",
                   help="two-column file (Eb/N0 dB, FER or BER) drawn beside the runs; repeatable")
    p.add_argument("--show", action="store_true",
                   help="rewrite results.csv and the plots of the campaign in --out from its store, print "
                        "its table and exit (no simulation)")
    p.add_argument("--quiet", action="store_true", help="no live progress display")
    p.add_argument("--list-codes", action="store_true", help="print the gl.codes names and exit")
    return p


def _spec_from_args(args) -> CampaignSpec:
    if not args.codes:
        raise SimError("give a CODE (a gl.codes name such as wifi-648-1/2, or an alist file)")
    if args.ebn0 is None:
        raise SimError("--ebn0 is required, e.g. --ebn0 1:3:0.5")
    if not args.out:
        raise SimError("--out DIR is required (the campaign directory)")
    return CampaignSpec.make(args.codes, args.ebn0, args.algorithm, args.iterations, args.schedule,
                             args.max_errors, args.max_frames, args.max_seconds, args.min_fer, args.backend,
                             args.seed, args.batch)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_codes:
        from .. import codes

        print("\n".join(codes.names()))
        return 0
    from .plot import parse_reference_arg
    from .runner import run_campaign

    try:
        if args.show:
            return _show(args.out, [parse_reference_arg(r) for r in args.reference_curve])
        spec = _spec_from_args(args)
        references = [parse_reference_arg(r) for r in args.reference_curve]
        rows = run_campaign(spec, args.out, resume=args.resume, scheduler=args.scheduler, workers=args.workers,
                            progress=not args.quiet, references=references)
    except SimError as exc:
        parser.error(str(exc))
    except KeyboardInterrupt:
        print(f"gpuldpc-sim: interrupted; finished batches are kept in {args.out}: add --resume to continue",
              file=sys.stderr)
        return 130
    _print_table(rows)
    failed = [r for r in rows if r["status"] == "failed"]
    if failed:
        print(f"gpuldpc-sim: {len(failed)} of {len(rows)} points failed (the others are complete); finished "
              f"batches are kept in {args.out}: fix the cause and add --resume to simulate them again",
              file=sys.stderr)
        return 1
    return 0


def _show(out, references) -> int:
    import os

    from .results import read_csv
    from .runner import write_outputs
    from .store import STORE_NAME

    if not out or not os.path.isfile(os.path.join(out, STORE_NAME)):
        raise SimError(f"--show needs --out DIR holding a campaign ({STORE_NAME}); {out!r} holds none")
    _print_table(read_csv(write_outputs(out, references)))
    return 0


def _print_table(rows):
    print(f"{'code':<16} {'alg':<7} {'it':>3} {'Eb/N0':>6} {'frames':>10} {'fe':>6} {'FER':>9} {'BER':>9} "
          f"{'iter':>5} {'fr/s':>10} {'status':>7}")
    for r in rows:
        print(f"{r['code']:<16} {r['algorithm']:<7} {r['iterations']:>3} {r['ebn0_db']:>6.2f} {r['frames']:>10} "
              f"{r['frame_errors']:>6} {r['fer']:>9.3e} {r['ber']:>9.3e} {r['mean_iterations']:>5.2f} "
              f"{r['frames_per_second']:>10.0f} {r['status']:>7}")
    for r in rows:
        if r["status"] == "failed":
            print(f"failed: {r['code']} {r['algorithm']} {r['iterations']} it {r['ebn0_db']:.2f} dB: {r['failure']}")

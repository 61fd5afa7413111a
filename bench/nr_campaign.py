#!/usr/bin/env python3
"""FER/BER campaign for 5G NR (issue 14 item 5): our decoders against Sionna's on identical LLRs.

    python bench/nr_campaign.py [--out DIR] [--seconds 200] [--backend cuda] [--quick]

Curves (``CURVES``): BG1 k = 8448 at rates 1/3, 2/3, 8/9 and BG2 k = 3840 at rates 1/5, 1/3,
2/3 (``gl.codes.nr(k, E)``, rv 0), BPSK/AWGN, ``POINTS`` Eb/N0 points a curve spanning our
layered decoder's FER ~1 to Sionna's FER ~1e-3.  At each point every decoder gets the same
LLR arrays, batch after batch: the pool of random codewords and the counter-based noise of
:mod:`gpuldpc.sim.frames` (made on the GPU by :mod:`gpuldpc.sim.gpu_channel` with the cuda
backend, on the host otherwise), errors counted on the k information bits
(:func:`gpuldpc.sim.frames.frame_bit_errors`; the loop is ``bench/fer_points.py``'s, shared with
``bench/dvb_ccsds_campaign.py``).  Decoders, ``--iterations`` (10) each:

* ``gl.Decoder`` layered normalized min-sum (alpha 0.75), early stop on, E LLRs from numpy
  (the pruned graph, :func:`gpuldpc.codes.shaping.prune`);
* ``gl.Decoder`` flooding sum-product (``--flooding-algorithm``, default "spa"), early stop
  on: the like-for-like peer of Sionna's flooding boxplus-phi BP (a shape the cuda
  kernels cannot hold, flooding BG1 Zc 384 on the full mother, is noted and skipped);
* Sionna's ``LDPC5GDecoder`` (``bench/gpu_nr.py``'s :func:`sionna_decoder`: flooding
  boxplus-phi, no early stop, logits ln P(1)/P(0), so our LLRs negated), on the GPU;
  without sionna/torch it is skipped with the reason printed and kept in the notes.

A decoder leaves a point after ``--max-errors`` (100) frame errors; the point ends when
every decoder has left it, after ``--max-frames``, or when its share of ``--seconds`` (the
time left over the points left) is spent.  Rows (api, code, rate, ebn0_db, frames,
frame_errors, fer, ber, decoder, ...) go to ``<out>/<gpu>-nrfer.json`` with a plot
``<out>/<gpu>-nrfer.png`` (matplotlib, Agg).  ``--quick``: short blocks (BG1 k = 1056 at
rate 2/3, BG2 k = 480 at rate 1/3), four points, a few seconds, the cpu backend by default
(what CI runs, tests/sim/test_nr_campaign.py).
"""
from __future__ import annotations

import json
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

import gpuldpc as gl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fer_points import (SEED, arguments, gl_decoders, llr_source, point_fields, print_table,  # noqa: E402
                        run_point, save, save_figure)
from gpu_nr import header, sionna_decoder  # noqa: E402  (bench/gpu_nr.py)

CURVES = [  # (k, E, base graph, first Eb/N0 dB, last Eb/N0 dB)
    (8448, 25344, 1, 0.8, 1.7),     # rate 1/3
    (8448, 12672, 1, 1.7, 3.0),     # rate 2/3
    (8448, 9504, 1, 3.3, 4.7),      # rate 8/9
    (3840, 19200, 2, 0.4, 1.8),     # rate 1/5
    (3840, 11520, 2, 0.6, 2.2),     # rate 1/3
    (3840, 5760, 2, 1.6, 3.3),      # rate 2/3
]
POINTS = 8
QUICK_CURVES = [(1056, 1584, 1, 1.0, 4.0), (480, 1440, 2, 0.0, 3.0)]
QUICK_POINTS = 4


def our_decoders(code, backend, iterations, flooding_algorithm, notes):
    """{label: (api, description, decode(llr) -> DecodeResult, backend)} of gl.Decoder, layered NMS and flooding."""
    return gl_decoders(code, [("nms", "layered", backend, {}), (flooding_algorithm, "flooding", backend, {})],
                       iterations, notes)


def peer_decoders(code, iterations, notes):
    """{label: ...} of Sionna's LDPC5GDecoder, or {} with the reason in ``notes``."""
    try:
        prepare, run = sionna_decoder(code, iterations)
    except Exception as exc:  # no sionna here: a note, not the end of the campaign
        why = f"sionna skipped: {type(exc).__name__}: {exc}"
        if why not in notes:
            print(why, flush=True)
            notes.append(why)
        return {}
    desc = f"flooding boxplus-phi, {iterations} it., no early stop"
    return {"sionna LDPC5GDecoder": ("sionna LDPC5GDecoder", desc, lambda llr: SimpleNamespace(
        info=run(prepare(llr)), iterations=np.full(len(llr), iterations)), "sionna")}


def campaign(curves, points, backend, seconds, batch, iterations, max_errors, max_frames,
             flooding_algorithm, peers=True):
    """Every curve's rows and the notes (see the module docstring)."""
    rows, notes = [], []
    total = len(curves) * points
    deadline = time.perf_counter() + seconds
    done = 0
    for k, e, bg, first, last in curves:
        code = gl.codes.nr(k, e, bg=bg)
        decoders = our_decoders(code, backend, iterations, flooding_algorithm, notes)
        if peers:
            decoders.update(peer_decoders(code, iterations, notes))
        tx, llr_of = llr_source(code, backend)
        for ebn0 in np.round(np.linspace(first, last, points), 3):
            budget = max(deadline - time.perf_counter(), 0.0) / (total - done)
            counts = run_point(tx, llr_of, decoders, float(ebn0), budget, batch, max_errors, max_frames, notes)
            done += 1
            for label, tally in counts.items():
                if label not in decoders:
                    continue
                api, desc, _, used = decoders[label]
                r = dict(api=api, decoder=desc, label=label, code=code.name, k=k, e=e, bg=bg,
                         rate=round(k / e, 4), ebn0_db=float(ebn0), **point_fields(tally, k), iterations=iterations,
                         backend=used, decoded=code.decoded.name)
                rows.append(r)
                print(json.dumps(r), flush=True)
    return rows, notes


def plot(rows, path):
    """FER against Eb/N0: a panel per base graph, a colour per rate, a line style per decoder."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"gpuldpc nms layered": ("-", "o"), "sionna LDPC5GDecoder": (":", "^")}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, bg in zip(axes, (1, 2)):
        mine = [r for r in rows if r["bg"] == bg and r["frame_errors"]]
        rates = sorted({(r["k"], r["e"]) for r in mine}, key=lambda ke: -ke[0] / ke[1])
        for i, (k, e) in enumerate(rates):
            for label in sorted({r["label"] for r in mine}):
                pts = sorted((r["ebn0_db"], r["fer"]) for r in mine if (r["k"], r["e"], r["label"]) == (k, e, label))
                if not pts:
                    continue
                ls, mk = styles.get(label, ("--", "s"))
                ax.semilogy(*zip(*pts), linestyle=ls, marker=mk, color=f"C{i}", label=f"k={k} E={e}: {label}")
        ax.set_title(f"5G NR base graph {bg}, BPSK/AWGN")
        ax.set_xlabel("Eb/N0 (dB)")
    save_figure(fig, axes, path)


def main(argv=None):
    parser = arguments(__doc__.split("\n\n")[0], 200, "frames a batch (512; --quick 64)", 10, 10 ** 6,
                       "short blocks, 4 points, a few seconds (CI)")
    parser.add_argument("--flooding-algorithm", default="spa", choices=("spa", "nms", "oms"))
    parser.add_argument("--no-peer", action="store_true", help="leave Sionna out")
    args = parser.parse_args(argv)
    backend = args.backend or ("cpu" if args.quick else "cuda")
    seconds = args.seconds if args.seconds is not None else (12.0 if args.quick else 200.0)
    batch = args.batch or (64 if args.quick else 512)
    curves, points = (QUICK_CURVES, QUICK_POINTS) if args.quick else (CURVES, POINTS)
    t0 = time.perf_counter()
    rows, notes = campaign(curves, points, backend, seconds, batch, args.iterations, args.max_errors,
                           args.max_frames, args.flooding_algorithm, peers=not args.no_peer)
    doc = header(rows=rows, notes=notes, seed=SEED, quick=args.quick, wall_seconds=round(time.perf_counter() - t0, 1))
    print_table(doc, save(doc, args.out, "nrfer", plot))


if __name__ == "__main__":
    sys.exit(main())

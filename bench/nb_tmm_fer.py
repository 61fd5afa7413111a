#!/usr/bin/env python3
"""FER of the trellis Min-Max check rules ("tmm", "tmm1") against Min-Max on the same frames (issue 17 item 3).

    python bench/nb_tmm_fer.py [--out DIR] [--backend cpu] [--seconds 150] [--max-errors 100]
                               [--max-frames 100000] [--quick]

Curves (``CURVES``): gf32-837-726 (rate 0.87, check degree 27) and gf32-620-310 (rate 1/2,
degree 6), layered, 10 iterations, early stop, float32.  Decoders per code: Min-Max
("minmax"), T-MM and T-MM with step 5's pairs from first minima ("tmm1"; :mod:`gpuldpc.decoders.reference_tmm`),
each with the Decoder's default ``alpha`` 0.75 and with the code's best T-MM ``alpha`` of a tuning
run on other frames
(``BEST_ALPHA``: gf32-837-726 0.6 of 0.45..1.0, gf32-620-310 0.85 of 0.45..1.0; tuning:
4000 / 3000 frames of seed 99 at 3.8-4.2 / 1.8-2.6 dB, docs/cpu.md "Trellis Min-Max").

Channel: BPSK over AWGN, the LLRs of :mod:`gpuldpc.sim.frames` (random codewords, counter-based
noise), identical for every decoder: ``bench/fer_points.py`` ``run_point`` with
``same_frames``, so at every point all decoders decode the same batches until each has
``--max-errors`` frame errors (or ``--max-frames`` / ``--seconds`` are spent).  Errors are
counted on the information symbols' bits.

Output: ``<out>/<device>-tmm-fer.json`` (rows, and ``losses``: per code and T-MM decoder the
Eb/N0 where FER crosses 1e-2 and 1e-3, log-linear between the points around it, and its
distance from Min-Max's, the loss in dB), ``.csv`` (the rows), ``.txt`` (the printed tables)
and ``.png``; ``<device>`` is ``cpu-vm`` on the cpu backend, else the GPU's name.
"""
from __future__ import annotations

import contextlib
import csv
import io
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpuldpc as gl  # noqa: E402
from fer_points import (SEED, arguments, crossing, gl_decoders, llr_source, point_fields,  # noqa: E402
                        print_table, run_point, save, save_figure)
from gpu_nr import header  # noqa: E402  (bench/gpu_nr.py)

CURVES = {
    "gf32-837-726": (3.8, 3.9, 4.0, 4.1, 4.2, 4.3),
    "gf32-620-310": (2.2, 2.4, 2.6, 2.8, 3.0, 3.2, 3.4, 3.6),
}
BEST_ALPHA = {"gf32-837-726": 0.6, "gf32-620-310": 0.85}
DEFAULT_ALPHA = 0.75
TARGETS = (1e-2, 1e-3)


def decoders(code, backend, iterations, notes):
    """{label: entry} (``fer_points.gl_decoders``): Min-Max, and T-MM and "tmm1" at
    the default and the best alpha."""
    out = gl_decoders(code, [("minmax", "layered", backend, {})], iterations, notes)
    for rule in ("tmm", "tmm1"):
        for alpha in sorted({DEFAULT_ALPHA, BEST_ALPHA.get(code.name, DEFAULT_ALPHA)}):
            built = gl_decoders(code, [(rule, "layered", backend, {"alpha": alpha})], iterations, notes)
            out.update({f"gpuldpc {rule} alpha {alpha}": entry for entry in built.values()})
    return out


def losses(rows):
    """Per code and T-MM label: the Eb/N0 at each target FER and its distance from Min-Max's."""
    curves = {}
    for r in rows:
        if r["fer"] is not None:
            curves.setdefault((r["code"], r["label"]), []).append((r["ebn0_db"], r["fer"]))
    out = []
    for (code, label), points in sorted(curves.items()):
        if not label.startswith("gpuldpc tmm"):
            continue
        base = sorted(curves.get((code, "gpuldpc minmax layered"), []))
        for target in TARGETS:
            at, ref = crossing(sorted(points), target), crossing(base, target)
            out.append(dict(code=code, label=label, fer=target, ebn0_db=at, minmax_ebn0_db=ref,
                            loss_db=None if at is None or ref is None else round(at - ref, 3)))
    return out


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    codes = sorted({r["code"] for r in rows})
    fig, axes = plt.subplots(1, len(codes), figsize=(5 * len(codes), 4), squeeze=False)
    for ax, code in zip(axes[0], codes):
        for label in sorted({r["label"] for r in rows if r["code"] == code}):
            pts = [(r["ebn0_db"], r["fer"]) for r in rows if r["code"] == code and r["label"] == label and r["fer"]]
            ax.semilogy(*zip(*pts), marker="o", label=label.replace("gpuldpc ", ""))
        ax.set_title(code)
        ax.set_xlabel("Eb/N0 (dB)")
    save_figure(fig, list(axes[0]), path)


def main(argv=None):
    parser = arguments(__doc__.split("\n\n")[0], 150, "frames a batch (default 2000; --quick 200)", 10, 10 ** 5,
                       "two points a code, 400 frames: a smoke run")
    args = parser.parse_args(argv)
    backend = args.backend or "cpu"
    batch = args.batch or (200 if args.quick else 2000)
    budget = 12 if args.quick else (args.seconds or 150)
    max_frames = 400 if args.quick else args.max_frames
    notes, rows, t0 = [], [], time.perf_counter()
    for name, points in CURVES.items():
        code = gl.codes.get(name)
        decs = decoders(code, backend, args.iterations, notes)
        tx, llr_of = llr_source(code, backend)
        for ebn0 in points[2:4] if args.quick else points:
            counts = run_point(tx, llr_of, decs, float(ebn0), budget, batch, args.max_errors, max_frames, notes,
                               same_frames=True)
            for label, tally in counts.items():
                rows.append(dict(code=name, label=label, ebn0_db=float(ebn0), **point_fields(tally, code.k)))
                print(f"{name} {label} {ebn0} dB: {tally.frame_errors}/{tally.frames}", flush=True)
    doc = header(what="T-MM vs Min-Max FER, same frames", backend=backend, seed=SEED, iterations=args.iterations, schedule="layered", max_errors=args.max_errors, max_frames=max_frames,
               best_alpha=BEST_ALPHA, default_alpha=DEFAULT_ALPHA, quick=args.quick, rows=rows,
               losses=losses(rows), notes=notes, wall_seconds=round(time.perf_counter() - t0, 1))
    if backend == "cpu":
        doc.update(gpu="cpu-vm", cpu_simd=gl.Decoder(gl.codes.get("gf16-300-150"), backend="cpu")._impl.simd)
    stem = save(doc, args.out, "tmm-fer", plot)
    with open(stem + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_table(doc, stem, columns=(("mean it", "mean_iterations"),))
        print(f"\n{'code':14s} {'decoder':36s} {'FER':>6s} {'Eb/N0':>7s} {'Min-Max':>8s} {'loss dB':>8s}")
        for x in doc["losses"]:
            cells = [("-" if x[k] is None else f"{x[k]:.3f}") for k in ("ebn0_db", "minmax_ebn0_db", "loss_db")]
            print(f"{x['code']:14s} {x['label']:36s} {x['fer']:6.0e} {cells[0]:>7s} {cells[1]:>8s} {cells[2]:>8s}")
    print(text.getvalue(), end="")
    with open(stem + ".txt", "w") as f:
        f.write(text.getvalue())


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()

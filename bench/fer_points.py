"""What the FER campaigns share (bench/nr_campaign.py, bench/dvb_ccsds_campaign.py): the LLR
source, one Eb/N0 point's counting loop, the row fields of a point, the output files and table.

* :func:`llr_source` -- the pool of random codewords and the counter-based noise of
  :mod:`gpuldpc.sim.frames`, made on the GPU (:mod:`gpuldpc.sim.gpu_channel`) with the cuda
  backend and on the host otherwise: the same values either way, so every decoder of a point
  gets identical LLRs.
* :func:`gl_decoders` -- the ``gl.Decoder`` entries of a campaign, one a spec; one that cannot
  be built is a note.
* :func:`run_point` -- batch after batch at one Eb/N0, each decoder counted on the k
  information bits (:func:`gpuldpc.sim.frames.frame_bit_errors`) until it has ``max_errors``
  frame errors, the point's frames or its time are spent; a decoder that raises leaves the
  campaign with a note, the others go on.
* :func:`crossing` -- the Eb/N0 where a curve falls to a FER, log-linear between two points.
* :func:`point_fields` -- a tally as row fields (frames, frame_errors, fer, bit_errors, ber,
  mean_iterations, decode_seconds).
* :func:`arguments` -- the options both scripts take; :func:`save_figure` -- a plot's last steps.
* :func:`save` / :func:`print_table` -- ``<out>/<gpu>-<what>[-quick].json`` and ``.png`` (a
  plot that fails is a note, the JSON is still written) and the table printed at the end.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import dataclass

import numpy as np

import gpuldpc as gl
from gpuldpc.sim.frames import Transmitter, frame_bit_errors

SEED = 2024


def llr_source(code, backend, seed=SEED):
    """(transmitter, llr(ebn0_db, batch, frames)): the GPU's channel with the cuda backend
    (copied to a reused page-locked host array), else the host's; the same values."""
    tx = Transmitter(code, seed)
    if backend == "cuda":
        from gpuldpc.sim.gpu_channel import DeviceTransmitter

        return tx, DeviceTransmitter(tx).llr_host
    return tx, tx.llr


@dataclass
class Tally:
    """One decoder's counts at one point.  ``beyond``: frames with more than ``beyond_t``
    wrong information bits (what an outer code correcting ``beyond_t`` errors still loses)."""

    frames: int = 0
    frame_errors: int = 0
    bit_errors: int = 0
    iterations: int = 0
    beyond: int = 0
    seconds: float = 0.0


def gl_decoders(code, specs, iterations, notes):
    """{label: ("gl.Decoder", description, decode, backend)}, one ``gl.Decoder`` (early stop on)
    a spec ``(algorithm, schedule, backend, options)``, labelled ``gpuldpc <algorithm>
    <schedule>``; one that cannot be built (no kernel for the shape, no GPU) is a note."""
    out = {}
    for algorithm, schedule, backend, options in specs:
        desc = f"{algorithm} {schedule}, {iterations} it., early stop" + "".join(f", {k} {v}" for k, v in options.items())
        try:
            dec = gl.Decoder(code, algorithm=algorithm, schedule=schedule, max_iterations=iterations,
                             early_stop=True, backend=backend, **options)
        except Exception as exc:  # a decoder that cannot be built is left out, with its reason
            notes.append(f"{code.name} {desc} on {backend}: {type(exc).__name__}: {exc}")
            print(notes[-1], flush=True)
            continue
        out[f"gpuldpc {algorithm} {schedule}"] = ("gl.Decoder", desc, dec.decode, backend)
    return out


def run_point(tx, llr_of, decoders, ebn0_db, budget_s, batch, max_errors, max_frames, notes, beyond_t=None,
              same_frames=False):
    """Counts of each decoder at one point: {label: Tally}.  ``decoders``: {label: (api,
    description, decode(llr) -> result with ``info`` [frames, k] and ``iterations``
    [frames], ...)}.  A decoder that raises leaves the campaign (``decoders`` loses it), with a
    note.  ``beyond_t``: count the frames with more than this many bit errors (None: not).
    ``same_frames``: every decoder decodes every batch until all have ``max_errors`` (else each
    stops at its own ``max_errors``)."""
    counts = {label: Tally() for label in decoders}
    active, index, t0 = list(decoders), 0, time.perf_counter()
    while active and time.perf_counter() - t0 < budget_s and index * batch < max_frames \
            and not (same_frames and all(counts[label].frame_errors >= max_errors for label in active)):
        llr = llr_of(ebn0_db, index, batch)
        for label in list(active):
            t = time.perf_counter()
            try:
                result = decoders[label][2](llr)
                errors = frame_bit_errors(tx, index, np.asarray(result.info))
            except Exception as exc:  # one decoder failing ends its curve, not the campaign
                notes.append(f"{tx.code.name} {label} at {ebn0_db} dB failed: {type(exc).__name__}: {exc}")
                print(notes[-1], flush=True)
                active.remove(label)
                del decoders[label]
                continue
            tally = counts[label]
            tally.frames += errors.size
            tally.frame_errors += int(np.count_nonzero(errors))
            tally.bit_errors += int(errors.sum())
            tally.iterations += int(np.asarray(result.iterations, dtype=np.int64).sum())
            tally.beyond += int(np.count_nonzero(errors > beyond_t)) if beyond_t is not None else 0
            tally.seconds += time.perf_counter() - t
            if tally.frame_errors >= max_errors and not same_frames:
                active.remove(label)
        index += 1
    return counts


def crossing(points, target):
    """Eb/N0 where the (ebn0, fer) ``points`` first fall to ``target``: log-linear between the
    last point above it and the next one (both with errors), or None."""
    for (x0, f0), (x1, f1) in zip(points, points[1:]):
        if f0 > target >= f1 and f1 > 0:
            return round(x0 + (math.log10(target) - math.log10(f0)) / (math.log10(f1) - math.log10(f0)) * (x1 - x0), 3)
    return None


def point_fields(tally: Tally, k: int) -> dict:
    """A point's row fields from its tally (FER, BER on the k information bits; None without frames)."""
    frames = tally.frames
    return dict(frames=frames, frame_errors=tally.frame_errors, fer=tally.frame_errors / frames if frames else None,
                bit_errors=tally.bit_errors, ber=tally.bit_errors / (frames * k) if frames else None,
                mean_iterations=round(tally.iterations / frames, 2) if frames else None,
                decode_seconds=round(tally.seconds, 3))


def save(doc, out, what, plot):
    """Write ``doc`` to ``<out>/<gpu>-<what>[-quick].json`` after ``plot(rows, path)`` drew the
    ``.png`` beside it (a plot that fails is a note in ``doc``); returns the path without suffix."""
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, doc["gpu"].replace(" ", "_").lower() + f"-{what}" + ("-quick" if doc.get("quick") else ""))
    try:
        plot(doc["rows"], stem + ".png")
    except Exception as exc:  # no matplotlib, a bad row: the numbers still land
        doc.setdefault("notes", []).append(f"plot failed: {type(exc).__name__}: {exc}")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=2)
    return stem


def print_table(doc, stem, columns=()):
    """The rows as a table (code, decoder label, Eb/N0, frames, errors, FER, BER and ``columns``:
    (title, key) pairs of further float fields), the notes, and the files written."""
    def num(value, fmt):
        return "-" if value is None else format(value, fmt)

    print(f"{'code':34s} {'decoder':24s} {'Eb/N0':>6s} {'frames':>8s} {'errors':>7s} {'FER':>9s} {'BER':>9s}"
          + "".join(f" {title:>9s}" for title, _ in columns))
    for r in doc["rows"]:
        print(f"{r['code']:34s} {r['label']:24s} {r['ebn0_db']:6.2f} {r['frames']:8d} {r['frame_errors']:7d} "
              f"{num(r['fer'], '.2e'):>9s} {num(r['ber'], '.2e'):>9s}"
              + "".join(f" {num(r.get(key), '.3g'):>9s}" for _, key in columns))
    for note in doc.get("notes", []):
        print("note:", note)
    print(f"wrote {stem}.json, {stem}.png ({doc['wall_seconds']} s)")


def arguments(description, seconds, batch_help, iterations, max_frames, quick_help):
    """An argument parser with the options every campaign takes: --out, --backend, --seconds
    (``seconds``; --quick 12), --batch, --iterations, --max-errors (100), --max-frames, --quick."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=os.environ.get("OUT") or os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--backend", default=None, help="gl.Decoder's backend (default: cuda; --quick: cpu)")
    parser.add_argument("--seconds", type=float, default=None, help=f"decoding budget, all points ({seconds}; --quick 12)")
    parser.add_argument("--batch", type=int, default=None, help=batch_help)
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--max-errors", type=int, default=100)
    parser.add_argument("--max-frames", type=int, default=max_frames)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    return parser


def save_figure(fig, axes, path):
    """A campaign plot's last steps: grids, legends, the FER label, ``path`` at 120 dpi."""
    import matplotlib.pyplot as plt

    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    axes[0].set_ylabel("FER (information bits)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

"""BER and FER versus Eb/N0: every run of a campaign overlaid, reference curves beside.

One figure with two log-scale panels (BER left, FER right), written as
``DIR/error_rates.png`` and ``DIR/error_rates.svg``.  Each run is one series
(marker and line, vertical bars = the 95 % intervals of ``results.csv``);
points with no error are not drawn (zero has no place on a log axis; the CSV
keeps them).  Each series carries an SVG id ``ber-<run>`` / ``fer-<run>``, each
reference curve ``ref-<kind>-<file stem>``, so a drawing can be checked by id.

Reference curve files have two columns, Eb/N0 in dB and FER (or BER),
separated by blanks or a comma; ``#`` starts a comment, a first non-numeric
line is a header.  Name the kind as ``ber=FILE`` or ``fer=FILE`` (default FER).
"""
from __future__ import annotations

import os
import re
from typing import NamedTuple, Sequence

import numpy as np

from .spec import SimError

__all__ = ["ReferenceCurve", "read_reference_curve", "parse_reference_arg", "plot_results", "PLOT_NAME",
           "series_id"]

PLOT_NAME = "error_rates"


class ReferenceCurve(NamedTuple):
    """A published curve: ``kind`` ("fer" or "ber"), its label and points."""

    kind: str
    label: str
    ebn0_db: np.ndarray
    rate: np.ndarray


def read_reference_curve(path, kind: str = "fer", label: str | None = None) -> ReferenceCurve:
    """Read a two-column reference curve file (module docstring); errors name the file and line."""
    if kind not in ("fer", "ber"):
        raise SimError(f"reference curve kind must be 'fer' or 'ber', got {kind!r}")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise SimError(f"--reference-curve {path}: cannot read the file ({exc.strerror})") from None
    points, first = [], True
    for no, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        fields = [f for f in re.split(r"[,\s]+", text) if f]
        try:
            values = [float(f) for f in fields]
        except ValueError:
            if first:                                        # a header line
                first = False
                continue
            raise SimError(f"--reference-curve {path}, line {no}: {raw.strip()!r} is not two numbers") from None
        first = False
        if len(values) != 2:
            raise SimError(f"--reference-curve {path}, line {no}: expected 2 columns (Eb/N0 dB, {kind.upper()}), "
                           f"got {len(values)}")
        if not 0.0 <= values[1] <= 1.0:
            raise SimError(f"--reference-curve {path}, line {no}: {kind.upper()} {values[1]} is outside 0..1")
        points.append(values)
    if not points:
        raise SimError(f"--reference-curve {path}: no data lines (two columns: Eb/N0 dB, {kind.upper()})")
    arr = np.array(points)
    name = label or os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return ReferenceCurve(kind, name, arr[:, 0], arr[:, 1])


def parse_reference_arg(text: str) -> ReferenceCurve:
    """``FILE``, ``fer=FILE`` or ``ber=FILE`` -> :class:`ReferenceCurve`."""
    kind, sep, path = text.partition("=")
    if sep and kind in ("fer", "ber"):
        return read_reference_curve(path, kind)
    return read_reference_curve(text, "fer")


def series_id(kind: str, label: str) -> str:
    """SVG id of a series: ``kind-`` + the label with every run of other characters made ``_``."""
    return f"{kind}-" + re.sub(r"[^A-Za-z0-9.-]+", "_", label).strip("_")


def _run_label(row: dict) -> str:
    return f"{row['code']} {row['algorithm']} {row['schedule']} {row['iterations']} it"


def plot_results(rows: Sequence[dict], directory=None, references: Sequence[ReferenceCurve] = (),
                 title: str | None = None):
    """Draw rows of ``results.csv`` (:func:`gpuldpc.sim.results.collect`); save PNG and SVG in
    ``directory`` when given.  Returns the matplotlib Figure (its axes: BER, FER)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.6), layout="constrained")
    ax_ber, ax_fer = fig.subplots(1, 2)
    runs: dict = {}
    for row in rows:
        runs.setdefault(_run_label(row), []).append(row)
    for label, pts in runs.items():
        pts = sorted(pts, key=lambda r: r["ebn0_db"])
        x = np.array([p["ebn0_db"] for p in pts])
        for ax, kind in ((ax_ber, "ber"), (ax_fer, "fer")):
            y = np.array([p[kind] for p in pts])
            lo = np.array([p[f"{kind}_low"] for p in pts])
            hi = np.array([p[f"{kind}_high"] for p in pts])
            keep = y > 0
            if not keep.any():
                continue
            bars = ax.errorbar(x[keep], y[keep], yerr=[y[keep] - lo[keep], hi[keep] - y[keep]], marker="o",
                               markersize=4, capsize=2, label=label)
            bars.lines[0].set_gid(series_id(kind, label))
    for ref in references:
        ax = ax_ber if ref.kind == "ber" else ax_fer
        keep = ref.rate > 0
        (line,) = ax.plot(ref.ebn0_db[keep], ref.rate[keep], "k--", linewidth=1.2, marker="x", markersize=4,
                          label=f"{ref.label} (reference)")
        line.set_gid(series_id(f"ref-{ref.kind}", ref.label))
    for ax, name in ((ax_ber, "BER"), (ax_fer, "FER")):
        ax.set_yscale("log")
        ax.set_xlabel("Eb/N0 (dB)")
        ax.set_ylabel(name)
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    fig.suptitle(title or "BPSK / AWGN")
    if directory is not None:
        for ext in ("png", "svg"):
            fig.savefig(os.path.join(os.fspath(directory), f"{PLOT_NAME}.{ext}"), dpi=120)
    return fig

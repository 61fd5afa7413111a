#!/usr/bin/env python3
"""FER campaign for DVB-S2 and CCSDS (issue 15 item 4): gl.Decoder's min-sum curves beside the published reference points.

    python bench/dvb_ccsds_campaign.py [--out DIR] [--seconds 60] [--backend cuda] [--codes NAME ...]
                                       [--flooding] [--spa] [--quick]

Curves (``CURVES``, ``gl.codes.get`` names): DVB-S2 normal frames (64800) at the eight rates
of Table 13 (1/2, 3/5, 2/3, 3/4, 4/5, 5/6, 8/9, 9/10; the spans of the five added in session 14
centred 0.1 dB above the QEF point's Eb/N0) and short frames (16200) at 1/2 (real rate 4/9); CCSDS 131.0-B C2 (8160, 7136), AR4JA
k = 1024 rate 1/2 and k = 4096 rate 2/3 (n = k/rate sent, the punctured columns restored by
the decoder).  ``POINTS`` Eb/N0 points a curve, from FER ~1 to past the waterfall of our
layered decoder.  ``--codes`` picks others by name (a code not in ``CURVES`` gets the span
0.2 .. 1.8 dB above its BPSK capacity limit; a name that is no code is a note).

Channel: BPSK over AWGN at Eb/N0 for the rate k/n of the code as sent, the LLRs of
:mod:`gpuldpc.sim.frames` (random codewords, counter-based noise; made on the GPU with the
cuda backend), identical for every decoder of a point (``bench/fer_points.py``, shared with
``bench/nr_campaign.py``).  DVB-S2 rows also give ``esn0_db``, the Es/N0 of Gray QPSK (each of
I and Q is a BPSK channel, so the same bits see the same LLRs): Es/N0 = Eb/N0 + 10 log10(2 k/n),
the axis of the standard's table; CCSDS rows the Es/N0 of BPSK, Eb/N0 + 10 log10(k/n).

Decoders (``gl.Decoder``, early stop on, ``--iterations`` 50, as the standard's thresholds
assume, ``--precision`` float32, ``--backend`` cuda: the sparse kernel for DVB-S2, C2 and
AR4JA k = 16384, the QC kernels for AR4JA k = 1024/4096; docs/gpu.md):

* layered normalized min-sum, alpha per family (``FAMILY_ALPHA``): 0.85 for DVB-S2 (docs/dvbs2.md:
  alpha 0.75 loses frames there; on the cpu backend, short 1/2 at 1.0 dB, 64 frames: FER 1.0 /
  0.17 / 0.016 with alpha 0.75 / 0.8 / 0.85, 0.06 with offset min-sum), 0.75 for CCSDS (AR4JA
  k = 1024 r1/2 at 1.5 dB, 128 frames: 0.016 / 0.047 / 0.070 with 0.75 / 0.8 / 0.85; C2 at
  3.6 dB: 0.078 / 0.109 with 0.75 / 0.8); ``--algorithm oms`` (offset ``--beta``) and ``--alpha``
  override;
* ``--flooding``: the same algorithm with the flooding schedule;
* ``--spa``: layered sum-product on the cpu backend (the kernels have no sum-product): the
  belief-propagation curve the min-sum ones lose against, slow (budgeted like the others).

Errors are counted on the k information bits (for DVB-S2: the BCH codeword).  DVB-S2 rows add
``fer_after_bch``: the share of frames with more than t wrong bits among those k (t = 12; 10
for normal 2/3 and 5/6; EN 302 307-1 Table 5a/5b): the frames the BCH outer decoder cannot
return (with at most t errors it always returns the sent frame, docs/dvbs2.md), so the FER
after BCH of this LDPC decoder without running BCH (a packet error rate is at most this).

Reference points (``references`` in the JSON, markers in the plot):

* DVB-S2: ETSI EN 302 307-1 V1.4.1 Table 13, the ideal Es/N0 for quasi-error-free reception
  (PER 1e-7 after BCH, 188-byte packets; AWGN, QPSK, normal FECFRAME, 50 LDPC iterations,
  perfect synchronisation): 1/2 1.00 dB, 3/5 2.23, 2/3 3.10, 3/4 4.03, 4/5 4.68, 5/6 5.18,
  8/9 6.20, 9/10 6.42 (``QEF_ESN0_DB``).  The standard's PDF was not at hand: the figures are
  the ones two public copies of the table give (opensatcom's DVB-S2 ModCod table, which labels them Eb/N0 at BLER 1e-5 but holds the standard's Es/N0 values,
  and the linuxtv stv0900 test list https://pastebin.com/8xvbxkCA: 3/5 2.23, 3/4 4.03, 5/6
  5.18, 8/9 6.20, 9/10 6.42).  Table 13 gives normal frames only: short 1/2 has no published
  point here.
* CCSDS: no published FER curve or threshold of AR4JA or C2 was found (searched: CCSDS
  130.1-G, the AR4JA papers, vendor manuals; only figure captions and plots without numbers),
  so none is marked; said in ``reference_notes``.
* Every code: the BPSK-input AWGN capacity limit at its rate (computed, :func:`bpsk_capacity_ebn0_db`;
  infinite block length, any FER), a dotted line.

``gaps`` in the JSON: for each curve, the Eb/N0 where FER (and, DVB-S2, FER after BCH) crosses
each of ``--gap-fer`` (1e-2 and 1e-3; log-linear between the two points around it, None where no measured pair
brackets it), its distance from the capacity limit and, where the standard gives one, from the
QEF point.  The QEF point is at PER 1e-7, far below what a short run measures: our Eb/N0 for
1e-7 lies at or above the one for ``--gap-fer``, so ``gap_db_to_reference`` is a lower bound
of the distance at 1e-7.

A decoder leaves a point after ``--max-errors`` (100) frame errors; the point ends when every
decoder has left it, after ``--max-frames``, or when its share of ``--seconds`` (the time left
over the points left) is spent.  A code or decoder that fails (construction, a kernel, a
decode) is a note in the JSON and the printout, and the campaign goes on.  Rows (api, code,
ebn0_db, esn0_db, frames, frame_errors, fer, ber, decoder, iterations, ...) go to
``<out>/<gpu>-dvbccsds-fer.json`` with the header of ``bench/gpu_nr.py`` and a plot
``<out>/<gpu>-dvbccsds-fer.png`` (matplotlib, Agg).  ``--quick``: DVB-S2 short 1/2 and AR4JA
k = 1024 r1/2, four points, a few seconds, the cpu backend (what CI runs,
tests/sim/test_dvb_ccsds_campaign.py).
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as np

import gpuldpc as gl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fer_points import (SEED, arguments, crossing, gl_decoders, llr_source, point_fields,  # noqa: E402
                        print_table, run_point, save, save_figure)
from gpu_nr import header  # noqa: E402  (bench/gpu_nr.py)

CURVES = {  # gl.codes name: (first Eb/N0 dB, last Eb/N0 dB), BPSK/AWGN at the rate sent
    "dvbs2-normal-1/2": (0.7, 1.4),
    "dvbs2-normal-3/5": (1.4, 2.2),
    "dvbs2-normal-2/3": (1.5, 2.2),
    "dvbs2-normal-3/4": (1.9, 2.8),
    "dvbs2-normal-4/5": (2.3, 3.2),
    "dvbs2-normal-5/6": (2.6, 3.5),
    "dvbs2-normal-8/9": (3.3, 4.2),
    "dvbs2-normal-9/10": (3.5, 4.4),
    "dvbs2-short-1/2": (0.4, 1.8),
    "ccsds-c2": (3.2, 4.3),
    "ccsds-ar4ja-1024-1/2": (0.6, 2.8),
    "ccsds-ar4ja-4096-2/3": (1.4, 2.9),
}
POINTS = 8
QUICK_CURVES = {"dvbs2-short-1/2": (0.3, 1.5), "ccsds-ar4ja-1024-1/2": (0.0, 2.4)}
QUICK_POINTS = 4
FAMILY_ALPHA = {"dvbs2": 0.85, "ccsds": 0.75}
"""Min-sum scale per family (module docstring: why)."""

QEF_ESN0_DB = {"1/2": 1.00, "3/5": 2.23, "2/3": 3.10, "3/4": 4.03, "4/5": 4.68, "5/6": 5.18, "8/9": 6.20,
               "9/10": 6.42}
"""EN 302 307-1 V1.4.1 Table 13: QPSK, normal FECFRAME, ideal Es/N0 (dB) for PER 1e-7 (QEF)."""
QEF_PER = 1e-7
QEF_SOURCE = ("ETSI EN 302 307-1 V1.4.1 Table 13: ideal Es/N0 for quasi-error-free reception (PER 1e-7 after "
              "BCH, 188-byte packets), QPSK, normal FECFRAME, AWGN, 50 LDPC iterations, perfect synchronisation")
CCSDS_NOTE = ("CCSDS: no published FER curve or threshold of AR4JA or C2 found (searched CCSDS 130.1-G, the AR4JA "
              "papers, vendor manuals); only the computed capacity limit is marked")
SHORT_NOTE = "DVB-S2 short frames: EN 302 307-1 Table 13 gives normal frames only; no published point marked"


def family(name: str) -> str:
    """"dvbs2", "ccsds" or "other", from a ``gl.codes`` name."""
    head = name.split("-", 1)[0]
    return head if head in FAMILY_ALPHA else "other"


def esn0_db(name: str, ebn0: float, rate: float) -> float:
    """Es/N0 of the family's modulation at ``ebn0`` (dB): Gray QPSK for DVB-S2 (2 coded bits a
    symbol), BPSK otherwise."""
    bits = 2 if family(name) == "dvbs2" else 1
    return ebn0 + 10 * math.log10(bits * rate)


def bpsk_capacity_ebn0_db(rate: float) -> float:
    """Smallest Eb/N0 (dB) at which BPSK over AWGN carries ``rate`` bits a channel use:
    C = 1 - E[log2(1 + exp(-L))], L = 2 (1 + sigma z) / sigma^2 (Gauss-Hermite, 200 nodes),
    solved for C = rate by bisection on Eb/N0 = 1 / (2 rate sigma^2)."""
    z, w = np.polynomial.hermite_e.hermegauss(200)
    w = w / w.sum()

    def capacity(ebn0_db):
        sigma = math.sqrt(1.0 / (2 * rate * 10 ** (ebn0_db / 10)))
        llr = 2 * (1 + sigma * z) / sigma ** 2
        return 1 - float(w @ (np.logaddexp(0, -llr) / math.log(2)))

    lo, hi = -2.0, 12.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if capacity(mid) < rate else (lo, mid)
    return round((lo + hi) / 2, 4)


def bch_t(name: str):
    """The BCH outer code's t of a DVB-S2 code name (EN 302 307-1 Tables 5a/5b), else None."""
    if family(name) != "dvbs2":
        return None
    from gpuldpc.codes import dvbs2_bch

    _, frame, rate = name.split("-", 2)
    return dvbs2_bch.T[frame].get(rate, 12)


def references(name: str, rate: float) -> list:
    """The reference points of a curve: the computed capacity limit, and the standard's QEF point
    where EN 302 307-1 Table 13 has the code."""
    refs = [dict(code=name, kind="computed", source="BPSK-input AWGN capacity limit at rate k/n (any block length)",
                 ebn0_db=bpsk_capacity_ebn0_db(rate), esn0_db=None, fer=None)]
    refs[0]["esn0_db"] = round(esn0_db(name, refs[0]["ebn0_db"], rate), 4)
    parts = name.split("-")
    if family(name) == "dvbs2" and parts[1] == "normal" and parts[2] in QEF_ESN0_DB:
        es = QEF_ESN0_DB[parts[2]]
        refs.append(dict(code=name, kind="published", source=QEF_SOURCE, esn0_db=es,
                         ebn0_db=round(es - 10 * math.log10(2 * rate), 4), fer=QEF_PER, measure="PER after BCH"))
    return refs


def decoders_for(code, args, notes):
    """{label: (api, description, decode, backend)}: layered min-sum, ``--flooding``, ``--spa``."""
    fam = family(code.name)
    options = ({"alpha": args.alpha or FAMILY_ALPHA.get(fam, 0.75)} if args.algorithm == "nms"
               else {"beta": args.beta})
    specs = [(args.algorithm, "layered", args.backend, dict(options, precision=args.precision))]
    if args.flooding:
        specs.append((args.algorithm, "flooding", args.backend, dict(options, precision=args.precision)))
    if args.spa:
        specs.append(("spa", "layered", "cpu", {}))
    return gl_decoders(code, specs, args.iterations, notes)


def gaps(rows, refs, targets):
    """Per curve, measure (fer; DVB-S2 also fer_after_bch) and FER in ``targets``: the Eb/N0 where
    the curve crosses it and its distance from each reference point of the code (module docstring)."""
    out = []
    for code, label in sorted({(r["code"], r["label"]) for r in rows}):
        mine = sorted((r for r in rows if (r["code"], r["label"]) == (code, label)), key=lambda r: r["ebn0_db"])
        for measure in ("fer", "fer_after_bch"):
            pts = [(r["ebn0_db"], r[measure]) for r in mine if r.get(measure) is not None]
            for target in targets if pts else ():
                at = crossing(pts, target)
                g = dict(code=code, label=label, measure=measure, fer_target=target, ebn0_db=at)
                for ref in (x for x in refs if x["code"] == code):
                    key = "gap_db_to_capacity" if ref["kind"] == "computed" else "gap_db_to_reference"
                    g[key] = None if at is None else round(at - ref["ebn0_db"], 3)
                out.append(g)
    return out


def curve_rows(code, decoders, counts, ebn0, args):
    """The rows of one point (module docstring: fields)."""
    rate, t = code.k / code.n, bch_t(code.name)
    rows = []
    for label, tally in counts.items():
        if label not in decoders:
            continue
        api, desc, _, backend = decoders[label]
        r = dict(api=api, decoder=desc, label=label, code=code.name, family=family(code.name), n=code.n, k=code.k,
                 rate=round(rate, 4), ebn0_db=float(ebn0), esn0_db=round(esn0_db(code.name, float(ebn0), rate), 3),
                 modulation="QPSK (Gray), simulated as BPSK" if family(code.name) == "dvbs2" else "BPSK",
                 **point_fields(tally, code.k), iterations=args.iterations, early_stop=True, backend=backend)
        if t is not None:
            r.update(bch_t=t, frames_beyond_bch_t=tally.beyond,
                     fer_after_bch=tally.beyond / tally.frames if tally.frames else None)
        rows.append(r)
        print(json.dumps(r), flush=True)
    return rows


def batch_for(n: int, requested) -> int:
    """Frames a batch: ``requested``, else the power of two nearest 2^24 / n LLRs (64 MB of
    float32), within 64 .. 4096."""
    if requested:
        return requested
    return int(2 ** round(math.log2(min(max(2 ** 24 / n, 64), 4096))))


def campaign(curves, points, args):
    """(rows, references, notes) of every curve (see the module docstring)."""
    rows, refs, notes = [], [], []
    total, done = len(curves) * points, 0
    deadline = time.perf_counter() + args.seconds
    for name, (first, last) in curves.items():
        try:
            code = gl.codes.get(name)
            decoders = decoders_for(code, args, notes)
            tx, llr_of = llr_source(code, args.backend)
        except Exception as exc:  # an unknown name, a code or channel that fails: a note, the rest goes on
            notes.append(f"{name} skipped: {type(exc).__name__}: {exc}")
            print(notes[-1], flush=True)
            done += points
            continue
        refs += references(name, code.k / code.n)
        batch = batch_for(code.n, args.batch)
        for ebn0 in np.round(np.linspace(first, last, points), 3):
            budget = max(deadline - time.perf_counter(), 0.0) / (total - done)
            done += 1
            if not decoders:
                continue
            counts = run_point(tx, llr_of, decoders, float(ebn0), budget, batch, args.max_errors, args.max_frames,
                               notes, beyond_t=bch_t(name))
            rows += curve_rows(code, decoders, counts, ebn0, args)
    return rows, refs, notes


def plot(rows, refs, path):
    """FER against Eb/N0: a panel per family, a colour per code, a line style per decoder; DVB-S2's
    FER after BCH dotted; the standard's QEF points as stars at their PER, capacity limits as
    dotted verticals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"layered": ("-", "o"), "flooding": ("--", "s")}
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    titles = {"dvbs2": "DVB-S2, BPSK/AWGN (= Gray QPSK)", "ccsds": "CCSDS 131.0-B, BPSK/AWGN"}
    for ax, fam in zip(axes, titles):
        codes = sorted({r["code"] for r in rows if r["family"] == fam} | {x["code"] for x in refs if family(x["code"]) == fam})
        for i, code in enumerate(codes):
            colour = f"C{i}"
            for label in sorted({r["label"] for r in rows if r["code"] == code}):
                mine = sorted((r for r in rows if (r["code"], r["label"]) == (code, label)), key=lambda r: r["ebn0_db"])
                ls, mk = styles["flooding" if "flooding" in label else "layered"]
                mk = "^" if " spa " in label else mk
                pts = [(r["ebn0_db"], r["fer"]) for r in mine if r["frame_errors"]]
                if pts:
                    ax.semilogy(*zip(*pts), linestyle=ls, marker=mk, color=colour, label=f"{code}: {label}")
                bch = [(r["ebn0_db"], r["fer_after_bch"]) for r in mine if r.get("frames_beyond_bch_t")]
                if bch:
                    ax.semilogy(*zip(*bch), linestyle=":", marker="x", color=colour)
            for ref in (x for x in refs if x["code"] == code):
                if ref["kind"] == "published":
                    ax.axvline(ref["ebn0_db"], color=colour, linestyle="--", linewidth=0.8)
                    ax.semilogy([ref["ebn0_db"]], [ref["fer"]], marker="*", markersize=12, color=colour, linestyle="",
                                label=f"{code}: EN 302 307-1 QEF, PER 1e-7 (Es/N0 {ref['esn0_db']} dB)")
                else:
                    ax.axvline(ref["ebn0_db"], color=colour, linestyle=":", linewidth=0.8)
        if fam == "dvbs2":
            ax.plot([], [], linestyle=":", marker="x", color="grey", label="x, dotted: FER after BCH (frames > t errors)")
        ax.set_title(titles[fam])
        ax.set_xlabel("Eb/N0 (dB), rate k/n as sent; dotted verticals: BPSK capacity limits")
    low = [x["fer"] for x in refs if x["fer"]] + [r["fer"] for r in rows if r["frame_errors"]]
    axes[0].set_ylim(bottom=min(low + [1e-3]) / 3, top=1.5)      # shared by both panels
    save_figure(fig, axes, path)


def main(argv=None):
    parser = arguments(__doc__.split("\n\n")[0], 60, "frames a batch (default: ~2^24 LLRs; --quick 64)", 50, 10 ** 7,
                       "2 short codes, 4 points, a few seconds (CI)")
    parser.add_argument("--codes", nargs="+", default=None, help="gl.codes names (default: CURVES; --quick: 2 short codes)")
    parser.add_argument("--points", type=int, default=None, help=f"Eb/N0 points a curve ({POINTS}; --quick {QUICK_POINTS})")
    parser.add_argument("--algorithm", default="nms", choices=("nms", "oms"))
    parser.add_argument("--alpha", type=float, default=None, help="nms scale (default: FAMILY_ALPHA)")
    parser.add_argument("--beta", type=float, default=0.5, help="oms offset")
    parser.add_argument("--precision", default="float32", choices=("float32", "float16"))
    parser.add_argument("--flooding", action="store_true", help="add the flooding schedule")
    parser.add_argument("--spa", action="store_true", help="add layered sum-product on the cpu backend")
    parser.add_argument("--gap-fer", type=float, nargs="+", default=[1e-2, 1e-3], help="FERs at which gaps are read")
    args = parser.parse_args(argv)
    args.backend = args.backend or ("cpu" if args.quick else "cuda")
    args.seconds = args.seconds if args.seconds is not None else (12.0 if args.quick else 60.0)
    args.batch = args.batch or (64 if args.quick else None)
    table = QUICK_CURVES if args.quick else CURVES
    points = args.points or (QUICK_POINTS if args.quick else POINTS)
    curves = dict(table)
    if args.codes:
        curves = {}
        for name in args.codes:
            if name in table or name in CURVES:
                curves[name] = table.get(name, CURVES.get(name))
            else:      # any other code: 0.2 .. 1.8 dB above its capacity limit (a bad name fails later, as a note)
                try:
                    code = gl.codes.get(name)
                    cap = bpsk_capacity_ebn0_db(code.k / code.n)
                    curves[name] = (round(cap + 0.2, 2), round(cap + 1.8, 2))
                except Exception:
                    curves[name] = (0.0, 1.0)
    t0 = time.perf_counter()
    rows, refs, notes = campaign(curves, points, args)
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "codes")}
    doc = header(rows=rows, references=refs, gaps=gaps(rows, refs, args.gap_fer), notes=notes,
                 reference_notes=[QEF_SOURCE, CCSDS_NOTE, SHORT_NOTE], seed=SEED, quick=args.quick,
                 settings=settings, family_alpha=FAMILY_ALPHA, wall_seconds=round(time.perf_counter() - t0, 1))
    stem = save(doc, args.out, "dvbccsds-fer", lambda r, path: plot(r, refs, path))
    print_table(doc, stem, columns=(("Es/N0", "esn0_db"), ("FER BCH", "fer_after_bch"), ("mean it", "mean_iterations")))
    for g in doc["gaps"]:
        print("gap:", json.dumps(g))


if __name__ == "__main__":
    sys.exit(main())

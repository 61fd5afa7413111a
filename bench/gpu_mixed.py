#!/usr/bin/env python3
"""Mixed codes in one call (issue 16 item 1: >= 0.8 x the throughput of the same frames decoded
code by code in separate batches, bit-identical to them), through the public API on one device.

    python3 bench/gpu_mixed.py [--out DIR] [--backend cuda|cpu|reference] [--frames N|small]
                               [--piece-frames 0,2640,...] [--quick]

The batch: ``--frames`` frames (50 000; ``small``: 600), 50 % WiMAX 2304 r1/2, 25 % WiMAX 2304
r5/6, 25 % WiFi 1944 r2/3 in random order, BPSK/AWGN LLRs in one numpy array [frames, 2304]
(a WiFi row's last 360 entries unused), layered NMS, 10 iterations, no early stop; two
configurations: float32 LLRs and messages, and (cuda) int8 LLRs with binary16 messages (cpu:
int8 messages from float32 LLRs).  Rows, each the median of 7 calls (3 with ``--quick``):

* ``gl.MixedDecoder``, input ``numpy``: ``decode(llr, code_index)`` on the mixed array; on cuda
  its GPU path (``path`` "gpu gather": the mixed rows copied to the GPU as they lie, piece by
  piece, gathered and scattered there by kernels/mixed_rows.cu, one copy of the results back),
  elsewhere the host grouping (``path`` "host grouping": the groups gathered into the decoders'
  inputs, submitted in pieces, scattered back); one row per ``--piece-frames`` value (0: the
  default; on cuda frames of the mixed batch a piece, else of a code's group);
* ``gl.Decoder`` code by code, the same frames already grouped (the separate batches of the
  issue's target; the MixedDecoder's own decoders): input ``numpy`` (three arrays, the same
  ones every call: registered in place once), one ``decode`` after the other and all three
  ``submit``-ted before the results are taken (``how``); input ``pinned`` (``pinned_llr``);
* ``gl.Decoder`` code by code grouped by the caller each call, input ``numpy, grouped per
  call``: ``llr[rows, :n]`` (a fresh array a code each call), what a user without
  MixedDecoder writes.

Every row's results are asserted bit-identical (bits, iterations, syndrome flags) to the
code-by-code ones.  The ratio of the MixedDecoder to each code-by-code row is printed and kept
(``ratio`` rows).  Output: ``<out>/<gpu>-mixed.json`` (``cpu-mixed.json`` without a GPU) and a
``.txt`` table; the commit comes from ``$GPULDPC_COMMIT`` (else git).
"""
import argparse
import json
import os
import sys

import numpy as np

import gpuldpc as gl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_nr import header, write_json  # noqa: E402  (bench/gpu_nr.py)
from timing import median_time  # noqa: E402

MIX = (("wimax-2304-1/2", 0.50, 2.0), ("wimax-2304-5/6", 0.25, 4.5), ("wifi-1944-2/3", 0.25, 3.0))
"""(code, share of the frames, Eb/N0 dB of its LLRs)."""
WIDTH = 2304
INT8_SCALE = 0.25
"""The int8 configuration's quantisation step (|LLR| up to 32 kept)."""
SETTINGS = dict(algorithm="nms", schedule="layered", max_iterations=10, early_stop=False)


def mixed_batch(frames: int, seed: int = 1):
    """(code_index int64 [frames], float32 LLRs [frames, WIDTH]) of random codewords."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(MIX), frames, p=[share for _, share, _ in MIX])
    llr = np.zeros((frames, WIDTH), np.float32)
    for c, (name, _, ebn0) in enumerate(MIX):
        code = gl.codes.get(name)
        rows = np.flatnonzero(idx == c)
        bits = rng.integers(0, 2, (rows.size, code.k), dtype=np.uint8)
        llr[rows, :code.n] = gl.channel.transmit(code, code.encode(bits), ebn0, rng)
    return idx, llr


def configurations(backend: str):
    """(label, decoder options, LLRs as the decoders take them) per configuration."""
    same = lambda llr: llr                                                    # noqa: E731
    rows = [("float32", dict(precision="float32"), same)]
    if backend == "cuda":
        quantize = lambda llr: np.clip(np.round(llr / INT8_SCALE), -127, 127).astype(np.int8)  # noqa: E731
        rows.append(("int8+float16", dict(llr_dtype="int8", llr_scale=INT8_SCALE, precision="float16"), quantize))
    elif backend == "cpu":
        rows.append(("int8 messages", dict(precision="int8"), same))
    return rows


def same_results(got, want, what):
    for field in ("bits", "iterations", "valid"):
        if not np.array_equal(getattr(got, field), getattr(want, field)):
            raise AssertionError(f"{what}: {field} differ from the code-by-code results")


def run_config(label, options, llr, idx, backend, pieces, reps):
    """The rows of one configuration (see the module docstring)."""
    codes = [gl.codes.get(name) for name, _, _ in MIX]
    device = dict(devices=[0]) if backend == "cuda" else {}
    groups = [np.flatnonzero(idx == c) for c in range(len(codes))]
    numpy_in = [np.ascontiguousarray(llr[rows, :code.n]) for rows, code in zip(groups, codes)]
    coded = sum(code.n * rows.size for rows, code in zip(groups, codes))
    info_bits = sum(code.k * rows.size for rows, code in zip(groups, codes))
    base = dict(system="gpuldpc", backend=backend, code="+".join(name for name, _, _ in MIX),
                mix=[share for _, share, _ in MIX], ebn0_db=[e for _, _, e in MIX], config=label,
                llr_dtype=str(llr.dtype), precision=options["precision"], iterations=SETTINGS["max_iterations"],
                early_stop=False, algorithm=SETTINGS["algorithm"], schedule=SETTINGS["schedule"],
                frames_per_batch=int(idx.size), kernel_gbps=None)
    rows, reference = [], None

    def row(api, input_, t, res, **extra):
        r = dict(base, api=api, input=input_, coded_gbps=coded / t / 1e9, info_gbps=info_bits / t / 1e9,
                 latency_us=t * 1e6, fer=float(1 - np.mean(res)), **extra)
        rows.append(r)
        print(json.dumps(r), flush=True)

    for piece in pieces:
        mix = gl.MixedDecoder(codes, backend=backend, piece_frames=piece or None, **device, **SETTINGS, **options)
        decs = mix.decoders
        if reference is None:           # code by code, grouped arrays: the separate batches
            reference = [d.decode(g) for d, g in zip(decs, numpy_in)]
            for d, g, want in zip(decs, numpy_in, reference):
                same_results(d.submit(g).result(), want, "gl.Decoder submit")
            t = median_time(lambda: [d.decode(g) for d, g in zip(decs, numpy_in)], reps)
            row("gl.Decoder", "numpy", t, np.concatenate([r.valid for r in reference]), how="decode")
            t = median_time(lambda: [tk.result() for tk in [d.submit(g) for d, g in zip(decs, numpy_in)]], reps)
            row("gl.Decoder", "numpy", t, np.concatenate([r.valid for r in reference]), how="submit")
            pinned = []
            for d, g in zip(decs, numpy_in):
                p = d.pinned_llr(g.shape[0])
                p[:] = g
                pinned.append(p)
            for d, p, want in zip(decs, pinned, reference):
                same_results(d.decode(p), want, "gl.Decoder pinned")
            t = median_time(lambda: [d.decode(p) for d, p in zip(decs, pinned)], reps)
            row("gl.Decoder", "pinned", t, np.concatenate([r.valid for r in reference]), how="decode")
            del pinned
            widths = [code.n for code in codes]
            for d, r, w, want in zip(decs, groups, widths, reference):
                same_results(d.decode(llr[r, :w]), want, "gl.Decoder grouped per call")
            t = median_time(lambda: [d.decode(llr[r, :w]) for d, r, w in zip(decs, groups, widths)], reps)
            row("gl.Decoder", "numpy, grouped per call", t, np.concatenate([r.valid for r in reference]),
                how="decode")
        res = mix.decode(llr, idx)
        for c, want in enumerate(reference):
            same_results(res.frames_of(c), want, f"gl.MixedDecoder piece_frames={piece}")
        t = median_time(lambda: mix.decode(llr, idx), reps)
        row("gl.MixedDecoder", "numpy", t, res.valid, path="gpu gather" if mix.on_gpu else "host grouping",
            piece_frames=mix.piece_frames if mix.on_gpu else list(mix.piece_frames))
        mix.close()
    mixed = [r for r in rows if r["api"] == "gl.MixedDecoder"]
    best = max(mixed, key=lambda r: r["coded_gbps"])
    for r in list(rows):
        if r.get("api") == "gl.Decoder":
            rows.append(dict(config=label, ratio=best["coded_gbps"] / r["coded_gbps"], against=r["input"],
                             how=r["how"], piece_frames=best["piece_frames"]))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--backend", default="cuda", choices=("cuda", "cpu", "reference"))
    parser.add_argument("--frames", default="50000", help="frames a batch, or 'small' (600: a quick CPU check)")
    parser.add_argument("--piece-frames", default="0",
                        help="comma-separated MixedDecoder piece_frames to measure (0: its default)")
    parser.add_argument("--quick", action="store_true", help="3 timed calls a row instead of 7")
    args = parser.parse_args(argv)
    frames = 600 if args.frames == "small" else int(args.frames)
    pieces = [int(p) for p in args.piece_frames.split(",")]
    reps = 3 if args.quick else 7
    idx, llr = mixed_batch(frames)
    rows = []
    for label, options, convert in configurations(args.backend):
        rows += run_config(label, options, convert(llr), idx, args.backend, pieces, reps)
    doc = header(rows=rows)
    stem = write_json(doc, args.out, "mixed")
    lines = [f"{doc['gpu']}  driver {doc['driver']}  commit {doc['commit']}  {doc['date']}",
             f"{frames} frames: 50 % wimax-2304-1/2, 25 % wimax-2304-5/6, 25 % wifi-1944-2/3, random order; "
             f"backend {args.backend}, layered NMS, 10 it, no early stop (coded Gb/s)"]
    for r in rows:
        if "coded_gbps" in r:
            how = f" ({r['how']})" if "how" in r else f" ({r['path']}, pieces {r['piece_frames']})"
            lines.append(f"{r['config']:14s} {r['api']:16s} {r['input'] + how:40s} {r['coded_gbps']:8.3f} Gb/s "
                         f"{r['latency_us'] / 1e3:9.2f} ms")
    lines += [f"{r['config']:14s} gl.MixedDecoder / gl.Decoder {r['against']} ({r['how']}): {r['ratio']:.2f}"
              for r in rows if "ratio" in r]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

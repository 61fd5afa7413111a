"""GF(q) LDPC decoding on the GPU (kernels/nb_*.cu) beside the figures of papers 000, 002, 003.

Run on the GPU machine (see docs/gpu_nb.md)::

    python bench/gpu_nb.py --out bench/results

Rows (DESIGN.md "Measuring"; ``api`` and ``input`` name what was timed): end-to-end
throughput through ``gl.Decoder`` from a host float32 numpy LLR array (bit LLRs of the
binary image: n*m floats per frame, converted to symbol LLRs on the GPU; one row with
[n, q] symbol LLRs) to host symbols, fixed iterations unless ``early_stop``; kernel-only
throughput (CUDA events around one launch on resident data); latency of one frame
through ``gl.Decoder(preset="latency")``; FER on the frames timed; FER/BER curves of
paper 000's codes from 3 to 5 dB.  Each row carries the paper's own figure
(``paper_mbps``, ``paper``) for comparison, and the launch shapes its decoder timed when it
was made (``shapes_timed``: rows a block -> kernel info Mb/s, :mod:`gpuldpc.cuda.autotune`).
Writes ``<gpu>-nb.json`` and ``<gpu>-nb.txt``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time

import numpy as np

import gpuldpc as gl
from timing import median_time, source_commit  # noqa: E402  (bench/timing.py)
from gpuldpc import cuda
from gpuldpc.cuda.nb_decoder import NbCudaDecoder

# (code, algorithm, schedule, iterations, early_stop, Eb/N0, paper Mb/s, source)
ROWS = [
    ("gf32-620-310", "minmax", "flooding", 10, False, 3.0, 0.6935, "003 Table III, GTX 470, OpenCL (coded bits)"),
    ("gf32-620-310", "minmax", "flooding", 10, True, 3.0, 1.26, "003 Table III, GTX 470, early stop, 3 dB (coded bits)"),
    ("gf32-744-653", "mmma", "layered", 10, False, 4.0, 653 * 5 / 285e-3 / 1e6,
     "000 Table 3, GTX TITAN Black, 285 ms at 0-3 dB (read as one frame, info bits)"),
    ("gf64-1512-1325", "mmma", "layered", 10, False, 4.0, None, "000 reports no GF(64) timing"),
    ("gf32-837-726", "mmma", "layered", 10, False, 4.0, 818.0,
     "OMO T-MM ASIC, Lacruz et al. TCAS-I 2015, 90 nm (info bits)"),
    ("gf32-837-726", "tmm", "layered", 10, False, 4.0, 818.0,
     "OMO T-MM ASIC, Lacruz et al. TCAS-I 2015, 90 nm (info bits); ours: T-MM alpha 0.75"),
    ("gf32-837-726", "tmm1", "layered", 10, False, 4.0, 818.0,
     "OMO T-MM ASIC, Lacruz et al. TCAS-I 2015, 90 nm (info bits); ours: T-MM, step 5's pairs from first minima (tmm1), alpha 0.75"),
]
FFT_PAPER = {  # paper 002 Table 1 (Tesla C1060, kernels only), Mb/s at 5, 10, 15 iterations
    32: (1.63, 0.82, 0.55), 64: (0.78, 0.39, 0.26), 128: (3.34, 1.67, 1.11), 256: (2.37, 1.20, 0.79)}
FFT_EBN0 = 3.0


def bit_llrs(code, frames, ebn0, seed=1, distinct=2048):
    """(codewords, float32 bit LLRs [frames, n*m]): ``distinct`` random codewords tiled, fresh noise."""
    rng = np.random.default_rng(seed)
    d = min(frames, distinct)
    cw = code.encode(rng.integers(0, 2, (d, code.k), dtype=np.uint8))
    cw = np.tile(cw, (-(-frames // d), 1))[:frames]
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(frames, -1)
    sigma = gl.channel.sigma_from_ebn0(ebn0, code.k / code.n)
    return cw, gl.channel.awgn_llr(bits, sigma, rng)


def row(code, dec, frames, seconds, *, api, input, kernel_s=None, kernel_frames=None, fer=None, ebn0=None,
        **extra):
    """A result row; ``dec`` is the NbCudaDecoder that ran (``gl.Decoder``'s own for its rows)."""
    coded, info = code.n * code.bits_per_symbol, code.k * code.bits_per_symbol   # bits per frame
    r = dict(system="gpuldpc", code=code.name, algorithm=dec.algorithm, schedule=dec.schedule,
             iterations=dec.max_iterations, early_stop=dec.early_stop, llr_dtype="float32",
             frames_per_batch=frames, streams=dec.streams, api=api, input=input,
             coded_gbps=coded * frames / seconds / 1e9, info_gbps=info * frames / seconds / 1e9,
             latency_us=seconds * 1e6,
             kernel_gbps=coded * kernel_frames / kernel_s / 1e9 if kernel_s else None,
             kernel_info_gbps=info * kernel_frames / kernel_s / 1e9 if kernel_s else None,
             fer=fer, ebn0_db=ebn0, units=dec.shape.units, threads=dec.shape.threads,
             blocks_per_sm=dec.shape.blocks_per_sm, chunk_frames=dec.chunk_frames,
             registers=dec.kernel_attributes.registers,
             shapes_timed={str(u): info * rate / 1e6 for u, rate in dec.tuning.items()} if dec.tuning else None)
    r.update(extra)
    return r


def throughput(code, algorithm, schedule, iterations, early_stop, ebn0, frames, symbol_input=False):
    """One end-to-end row through ``gl.Decoder`` from a numpy array: at least ``frames``
    frames and the decoder's preferred batch."""
    front = gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="cuda", max_iterations=iterations,
                       early_stop=early_stop)
    dec = front._impl.decoder                   # the NbCudaDecoder below it (launch shape, kernel time)
    frames = max(frames, front.preferred_batch("throughput"))
    cw, llr = bit_llrs(code, frames, ebn0)
    if symbol_input:
        llr = gl.channel.bit_llr_to_symbol_llr(llr, code.q)
    t0 = time.perf_counter()
    res = front.decode(llr)
    t0 = time.perf_counter() - t0
    t = t0 if t0 > 2.0 else median_time(lambda: front.decode(llr), reps=3, warmup=0)
    ks = dec.kernel_seconds(llr)
    fer = float((res.bits != cw).any(axis=1).mean())
    return dec, row(code, dec, frames, t, api="gl.Decoder",
                    input="numpy symbol LLRs [n, q]" if symbol_input else "numpy bit LLRs [n*m]",
                    kernel_s=ks, kernel_frames=min(frames, dec.chunk_frames), fer=fer, ebn0=ebn0,
                    mean_iterations=float(res.iterations.mean()))


def latency(code, algorithm, schedule, iterations):
    """One frame through ``gl.Decoder(preset="latency")`` from a numpy array, after a second of
    calls (the GPU's clocks up); its kernel alone beside it."""
    front = gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="cuda", max_iterations=iterations,
                       early_stop=False, preset="latency")
    dec = front._impl.decoder
    _, llr = bit_llrs(code, 1, 3.0)
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        front.decode(llr)
    t = median_time(lambda: front.decode(llr), reps=500, warmup=0)
    return row(code, dec, 1, t, api="gl.Decoder", input="numpy bit LLRs [n*m]",
               kernel_s=dec.kernel_seconds(llr, repeats=50), kernel_frames=1, preset="latency",
               kernel=dec.engines[0].plan.name)


def units_sweep(code, algorithm, schedule, counts, frames=4096):
    """Kernel-only info Mb/s for forced block shapes (``units`` rows at once), 10 iterations."""
    _, llr = bit_llrs(code, frames, 3.0)
    out = []
    for units in counts:
        try:
            dec = NbCudaDecoder(code, algorithm, schedule, 10, False, streams=1, chunk_frames=frames,
                                units=units)
        except ValueError as exc:
            out.append(dict(units=units, error=str(exc)))
            continue
        t = dec.kernel_seconds(llr, repeats=3)
        out.append(dict(api="kernel", units=units, threads=dec.shape.threads, blocks_per_sm=dec.shape.blocks_per_sm,
                        kernel_info_mbps=code.k * code.bits_per_symbol * frames / t / 1e6))
    return out


def occupancy_scaling(code, algorithm, schedule, counts=(1, 132, 264, 528, 1056)):
    """Kernel time per launch against frames per launch (10 iterations): how a frame's time
    grows when more frames share the multiprocessors."""
    dec = NbCudaDecoder(code, algorithm, schedule, 10, False, streams=1, chunk_frames=max(counts))
    _, llr = bit_llrs(code, max(counts), 3.0)
    return [dict(api="kernel", frames=f, ms=dec.kernel_seconds(llr[:f], repeats=3) * 1e3) for f in counts]


def probe(algorithm_rows):
    """One launch per configuration, for a profiler (``ncu ... python bench/gpu_nb.py --probe``)."""
    for name, alg, sched, frames in algorithm_rows:
        code = gl.codes.get(name)
        dec = NbCudaDecoder(code, alg, sched, 10, False, streams=1, chunk_frames=frames)
        dec.decode(bit_llrs(code, frames, 3.0)[1])


PROBES = [("gf32-744-653", "mmma", "layered", 396), ("gf32-620-310", "minmax", "flooding", 1056),
          ("gf256-384-128", "fft-spa", "flooding", 264), ("gf32-837-726", "tmm", "layered", 396)]


def curve(code, frames, points=(3.0, 3.5, 4.0, 4.5, 5.0)):
    """Paper 000 Fig. 8: FER and BER (information bits) of MMMA, 10 iterations, early stop."""
    dec = gl.Decoder(code, algorithm="mmma", schedule="layered", backend="cuda", max_iterations=10)
    out = []
    for k, ebn0 in enumerate(points):
        cw, llr = bit_llrs(code, frames, ebn0, seed=100 + k)
        res = dec.decode(llr)
        f = gl.gf.GF(code.q)
        errors = f.to_bits(res.info ^ cw[:, code.info_positions]).sum()
        out.append(dict(api="gl.Decoder", code=code.name, ebn0_db=ebn0, frames=frames,
                        fer=float((res.bits != cw).any(axis=1).mean()),
                        ber=float(errors / (frames * code.k * f.m)),
                        mean_iterations=float(res.iterations.mean())))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--frames", type=int, default=16384)
    ap.add_argument("--curve-frames", type=int, default=8192)
    ap.add_argument("--probe", action="store_true", help="one launch of each PROBES row, for ncu")
    args = ap.parse_args(argv)
    if args.probe:
        return probe(PROBES)
    drv = cuda.driver()
    rows, notes = [], {}
    commit = source_commit()
    dev0 = drv.Device(0)
    doc = dict(gpu=dev0.name(), gpus=1, driver=drv.get_driver_version(),
               cuda=".".join(map(str, drv.get_version())), commit=commit,
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               rows=rows, notes=notes)
    os.makedirs(args.out, exist_ok=True)
    stem = ("h200" if "H200" in dev0.name() else dev0.name().replace(" ", "_").lower()) + "-nb"

    def save():
        with open(os.path.join(args.out, stem + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
    for name, alg, sched, it, es, ebn0, paper, source in ROWS:
        code = gl.codes.get(name)
        _, r = throughput(code, alg, sched, it, es, ebn0, args.frames)
        rows.append(dict(r, paper_mbps=paper, paper=source))
        save()
        print(f"{name} {alg} {sched} es={es}: {r['info_gbps'] * 1e3:.1f} Mb/s info", flush=True)
    code = gl.codes.get("gf32-744-653")
    _, r = throughput(code, "mmma", "layered", 10, False, 4.0, args.frames, symbol_input=True)
    rows.append(dict(r, paper_mbps=None, paper=None))
    for name in ("gf32-620-310", "gf32-744-653"):
        code = gl.codes.get(name)
        alg, sched = ("minmax", "flooding") if name == "gf32-620-310" else ("mmma", "layered")
        rows.append(dict(latency(code, alg, sched, 10), paper_mbps=None,
                         paper="issue 13: one (620,310) frame through gl.Decoder <= 90 us"))
    for q in (32, 64, 128, 256):
        code = gl.codes.get(f"gf{q}-384-128")
        for k, it in enumerate((5, 10, 15)):
            _, r = throughput(code, "fft-spa", "flooding", it, False, FFT_EBN0, args.frames)
            rows.append(dict(r, paper_mbps=FFT_PAPER[q][k], paper="002 Table 1, Tesla C1060, kernels only"))
            save()
            print(f"{code.name} fft-spa {it} it: {r['info_gbps'] * 1e3:.1f} Mb/s info", flush=True)
    notes["units_sweep"] = {
        "gf32-620-310 minmax flooding": units_sweep(gl.codes.get("gf32-620-310"), "minmax", "flooding",
                                                    (1, 2, 4, 8, 16, 31)),
        "gf32-744-653 mmma layered": units_sweep(gl.codes.get("gf32-744-653"), "mmma", "layered",
                                                 (2, 4, 8, 11, 16)),
        "gf256-384-128 fft-spa": units_sweep(gl.codes.get("gf256-384-128"), "fft-spa", "flooding",
                                             (2, 4, 8, 16)),
    }
    notes["occupancy_scaling"] = {f"{n} {a} {s}": occupancy_scaling(gl.codes.get(n), a, s)
                                  for n, a, s, _ in PROBES}
    save()
    notes["curves"] = []
    for name in ("gf32-744-653", "gf64-1512-1325"):
        notes["curves"] += curve(gl.codes.get(name), args.curve_frames)
    save()
    text = render(doc)
    with open(os.path.join(args.out, stem + ".txt"), "w") as f:
        f.write(text + "\n")
    print(text)


def render(doc) -> str:
    """The table of a results document (bench/results/<gpu>-nb.txt)."""
    notes = doc["notes"]
    lines = [f"{doc['gpu']}  driver {doc['driver']}  CUDA {doc['cuda']}  {doc['date']}",
             "every row: gl.Decoder from a numpy array (kern info: the kernel alone, CUDA events)",
             f"{'code':15s} {'alg':7s} {'sched':8s} {'it':>3s} {'es':>2s} {'input':6s} {'frames':>6s} "
             f"{'coded Mb/s':>10s} {'info Mb/s':>9s} {'kern info':>9s} {'lat us':>9s} {'FER':>6s} "
             f"{'paper Mb/s':>10s}  paper (its own count)"]
    for r in doc["rows"]:
        k = f"{r['kernel_info_gbps'] * 1e3:9.1f}" if r["kernel_info_gbps"] else "        -"
        fer = f"{r['fer']:6.3f}" if r["fer"] is not None else "     -"
        p = f"{r['paper_mbps']:10.3f}" if r["paper_mbps"] else "         -"
        inp = "sym" if "symbol" in str(r.get("input", "")) else "bits"
        lines.append(f"{r['code']:15s} {r['algorithm']:7s} {r['schedule']:8s} {r['iterations']:3d} "
                     f"{'y' if r['early_stop'] else 'n':>2s} {inp:6s} {r['frames_per_batch']:6d} "
                     f"{r['coded_gbps'] * 1e3:10.1f} {r['info_gbps'] * 1e3:9.1f} {k} {r['latency_us']:9.1f} "
                     f"{fer} {p}  {r['paper'] or ''}")
    lines.append("shapes timed when the decoder was made (gpuldpc.cuda.autotune; rows a block: info Mb/s of two "
                 "waves, kernel only; * kept):")
    for r in doc["rows"]:
        if r.get("shapes_timed"):
            lines.append(f"  {r['code']:15s} {r['algorithm']:7s} {r['schedule']:8s} " + ", ".join(
                f"{u}{'*' if int(u) == r['units'] else ''}: {mbps:.0f}" for u, mbps in r["shapes_timed"].items()))
    for key, points in notes["units_sweep"].items():
        lines.append(f"units sweep {key}: " + ", ".join(
            f"{p['units']}: {p['kernel_info_mbps']:.0f}" if "kernel_info_mbps" in p else f"{p['units']}: -"
            for p in points) + " (kernel info Mb/s)")
    for key, points in notes["occupancy_scaling"].items():
        lines.append(f"kernel ms vs frames per launch, {key}: " + ", ".join(
            f"{p['frames']}: {p['ms']:.2f}" for p in points))
    lines.append("FER/BER, MMMA layered, 10 iterations, early stop (paper 000 Fig. 8):")
    for c in notes["curves"]:
        lines.append(f"  {c['code']:15s} {c['ebn0_db']:4.1f} dB  FER {c['fer']:.2e}  BER {c['ber']:.2e}  "
                     f"({c['frames']} frames, {c['mean_iterations']:.2f} it)")
    for key in ("ncu", "correction"):
        if key in notes:
            lines.append(f"{key}: {notes[key]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

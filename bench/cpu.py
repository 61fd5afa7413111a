"""Benchmark of the cpu backend (docs/cpu.md): throughput per core and on every core.

Codes WiFi 1944 r1/2 and WiMAX 2304 r1/2, layered NMS / OMS, 10 iterations fixed
(no early stop), float32 / int16 / int8, end to end through
``gl.Decoder(..., backend="cpu", threads=T).decode()`` from a float32 LLR array
to hard decisions, as DESIGN.md "Measuring" defines.  Each figure is the best
and the median of ``--repeats`` timings (the machine may be shared: say so when
publishing).  The reference (NumPy) decoder is timed in the same run, and
AFF3CT v3.0.2's published one-core figures (issue 4) are printed beside them.
Single-frame latency: one frame, one thread, median of ``--latency-repeats``.

    python bench/cpu.py                       # table + bench/results/cpu-<host>.json
    python bench/cpu.py --frames 2048 --repeats 9 --out /tmp/cpu.json
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import socket
import subprocess
import time

import numpy as np

import gpuldpc as gl
from gpuldpc import channel

CODES = ("wimax-2304-1/2", "wifi-1944-1/2")
# (algorithm, precision) pairs timed per code and thread count
CONFIGS = (("nms", "float32"), ("nms", "int16"), ("nms", "int8"), ("oms", "int16"), ("oms", "int8"))
ITERATIONS = 10
FER_POINTS_DB = (2.0, 2.5)
# AFF3CT v3.0.2, AVX2 inter-frame SIMD, one core, 10 iterations, WiMAX 2304 r1/2
# (issue 4; not measured here): coded Mbps.
AFF3CT_MBPS = {("nms", "int16"): 128.0, ("oms", "int16"): 138.0, ("nms", "float32"): 70.0}


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             cwd=pathlib.Path(__file__).parent, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timings(fn, repeats):
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return np.array(out)


def row(system, code, algorithm, precision, threads, frames, seconds, fer, ebn0, **extra):
    best, median = float(seconds.min()), float(np.median(seconds))
    return dict(system=system, code=code.name, algorithm=algorithm, schedule="layered",
                iterations=ITERATIONS, early_stop=False, llr_dtype="float32", precision=precision,
                threads=threads, frames_per_batch=frames, streams=None,
                coded_gbps=code.n * frames / best / 1e9,
                coded_gbps_median=code.n * frames / median / 1e9,
                info_gbps=code.k * frames / best / 1e9,
                latency_us=best * 1e6, kernel_gbps=None, fer=fer, ebn0_db=ebn0, **extra)


def frame_errors(result, sent) -> float:
    return float((result.bits != sent).any(axis=1).mean())


def bench_code(name, frames, repeats, latency_repeats, reference_frames):
    code = gl.codes.get(name)
    rng = np.random.default_rng(2024)
    sent = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    llrs = {ebn0: channel.transmit(code, sent, ebn0, rng) for ebn0 in FER_POINTS_DB}
    timed = llrs[FER_POINTS_DB[0]]
    rows = []
    cores = os.cpu_count() or 1
    for algorithm, precision in CONFIGS:
        for threads in sorted({1, cores}):
            dec = gl.Decoder(code, algorithm, max_iterations=ITERATIONS, early_stop=False,
                             backend="cpu", precision=precision, threads=threads)
            dec.decode(timed)  # warm up: pool, page faults
            seconds = timings(lambda: dec.decode(timed), repeats)
            fers = {e: frame_errors(dec.decode(llr), sent) for e, llr in llrs.items()}
            rows.append(row("gpuldpc", code, algorithm, precision, threads, frames, seconds,
                            fers[FER_POINTS_DB[0]], FER_POINTS_DB[0], fer_by_ebn0_db=fers,
                            lanes=dec._impl.lanes, simd=dec._impl.simd))
            if threads == 1:
                one = timed[:1]
                lat = timings(lambda: dec.decode(one), latency_repeats)
                rows[-1]["single_frame_latency_us"] = float(np.median(lat) * 1e6)
                rows[-1]["single_frame_latency_us_best"] = float(lat.min() * 1e6)
    ref = gl.Decoder(code, "nms", max_iterations=ITERATIONS, early_stop=False, backend="reference")
    part = timed[:reference_frames]
    seconds = timings(lambda: ref.decode(part), 2)
    rows.append(row("gpuldpc-reference", code, "nms", "float32", 1, reference_frames, seconds,
                    frame_errors(ref.decode(part), sent[:reference_frames]), FER_POINTS_DB[0]))
    if name == "wimax-2304-1/2":
        for (algorithm, precision), mbps in AFF3CT_MBPS.items():
            rows.append(dict(system="aff3ct-3.0.2 (issue 4, not measured here)", code=name,
                             algorithm=algorithm, schedule="layered", iterations=ITERATIONS,
                             early_stop=False, llr_dtype="float32", precision=precision,
                             threads=1, frames_per_batch=None, streams=None,
                             coded_gbps=mbps / 1e3, info_gbps=mbps / 2e3, latency_us=None,
                             kernel_gbps=None, fer=None, ebn0_db=None))
    return rows


def print_table(rows):
    head = (f"{'system':<12} {'code':<15} {'alg':<4} {'prec':<8} {'thr':>3} {'lanes':>5} "
            f"{'coded Mb/s':>10} {'median':>8} {'info Mb/s':>9} {'1-frame us':>10} "
            f"{'FER@2.0':>8} {'FER@2.5':>8}")
    print(head)
    print("-" * len(head))
    for r in rows:
        fers = r.get("fer_by_ebn0_db") or {}
        med = r.get("coded_gbps_median")
        lat = r.get("single_frame_latency_us")
        system = r["system"].split(" ")[0]
        print(f"{system:<12} {r['code']:<15} {r['algorithm']:<4} {r['precision']:<8} "
              f"{r['threads']:>3} {r.get('lanes') or '':>5} {r['coded_gbps'] * 1e3:>10.1f} "
              f"{'' if med is None else f'{med * 1e3:.1f}':>8} {r['info_gbps'] * 1e3:>9.1f} "
              f"{'' if lat is None else f'{lat:.1f}':>10} "
              f"{'' if 2.0 not in fers else f'{fers[2.0]:.4f}':>8} "
              f"{'' if 2.5 not in fers else f'{fers[2.5]:.4f}':>8}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1024, help="frames per timed batch")
    parser.add_argument("--repeats", type=int, default=7, help="timings per figure (best, median)")
    parser.add_argument("--latency-repeats", type=int, default=200)
    parser.add_argument("--reference-frames", type=int, default=32)
    parser.add_argument("--conditions", default="", help="free text: machine load while measuring")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="JSON path (default bench/results/cpu-<host>.json)")
    args = parser.parse_args(argv)
    rows = []
    for name in CODES:
        rows += bench_code(name, args.frames, args.repeats, args.latency_repeats, args.reference_frames)
    print_table(rows)
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    result = {"gpu": None, "driver": None, "cuda": None, "cpu": cpu_model(),
              "cores": os.cpu_count(), "host": socket.gethostname(), "commit": git_commit(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_average": load, "conditions": args.conditions, "rows": rows}
    out = args.out or pathlib.Path(__file__).parent / "results" / f"cpu-{socket.gethostname()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()

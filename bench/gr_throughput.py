#!/usr/bin/env python3
"""Throughput through GNU Radio: float LLR vectors -> gpuldpc.ldpc_decoder -> null sink.

    python bench/gr_throughput.py [--backend cpu] [--code wifi-1944-1/2] [--frames 20000]
                                  [--preset throughput] [--batch 0] [--path block|core]
                                  [--early-stop] [--no-frame-tags] [--repeats 1] [--out bench/results]

A ``vector_source_f`` holding ``--frames`` frames (a pool of 256 noisy codewords,
Eb/N0 = 2.5 dB, GNU Radio sign, repeated) feeds the decoder block, whose words go to a
``null_sink``: the flowgraph of issue 13, with nothing else on the cores (a ``head``
after a repeating source, as this bench had until commit 5f992cd, copies every frame
once more: 6 ms of CPU for 3000 WiFi 1944 frames, 14 % of their decode).  Reported:
coded Mb/s = n x frames / wall time of ``tb.run()`` (the whole flowgraph, start and
stop, copies into and out of GNU Radio's buffers included), info Mb/s, the decoder's
own figure (time with a batch in flight), and ``gl.Decoder.decode`` on the same frames
(the same array, batches of the block's size) for the ratio issue 13 asks of the block;
iterations fixed at 10, without early stop unless ``--early-stop`` (DESIGN.md
"Measuring"); ``--no-frame-tags`` builds the block with ``frame_tags=False``.
``--repeats R`` runs the flowgraph and ``gl.Decoder`` R times each, interleaved (a shared
machine's load changes within a second): the row gives the medians, each repeat's ratio
and the process CPU time of both (``cpu_ratio``: gl.Decoder's CPU seconds over the
flowgraph's, what the block costs beside the decode whatever the load).
Rows are appended to ``<out>/<host>-gr_throughput.json`` in the bench results format.

``--path core`` (for the GPU machine, which has no GNU Radio) times the block's
work path without GNU Radio: :meth:`gpuldpc.streaming.StreamDecoder.work` called
from a second thread as ``general_work`` calls it, on a ring of two batches of
input (``--foreign``: memory NumPy does not own, laid out as GNU Radio's buffers:
:class:`gpuldpc.memory_maps.DoubleMap`, which the work path page-locks whole), the
output written into an array as into GNU Radio's.  Rows carry ``api`` ("GNU Radio
block" or "block work path") and ``input``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import mmap
import os
import platform
import subprocess
import sys
import threading
import time

import numpy as np

import gpuldpc as gl
from gpuldpc import memory_maps
from gpuldpc.streaming import StreamDecoder

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import source_commit  # noqa: E402  (bench/timing.py)

POOL = 256


def pool_llr(code, ebn0_db):
    """POOL noisy codewords' LLRs in GNU Radio's sign."""
    rng = np.random.default_rng(1)
    info = rng.integers(0, 2, (POOL, code.k), dtype=np.uint8)
    return -gl.channel.transmit(code, code.encode(info), ebn0_db, rng)


def measure_core(code, llr, frames, decoder_args, foreign=False, bad_fraction=0.0):
    """Wall time of the block's work path over ``frames`` frames, from a second thread:
    :meth:`StreamDecoder.work` called as ``general_work`` is, on a buffer of two batches
    (a ring: the frames after the batch in flight, handed over before it is finished),
    the words written into an output array as into GNU Radio's."""
    stream = StreamDecoder(code.name, **decoder_args)
    rows = 2 * stream.batch
    # foreign: memory NumPy does not own, laid out as GNU Radio's buffers (one SysV segment
    # mapped twice), which the work path page-locks whole (StreamDecoder._lock_buffer)
    pages = -(-rows * code.n * 4 // mmap.PAGESIZE)
    double_map = memory_maps.DoubleMap(pages * mmap.PAGESIZE) if foreign else None
    ring = (double_map.array(np.float32)[:rows * code.n].reshape(rows, code.n) if foreign
            else np.empty((rows, code.n), np.float32))
    ring[:] = np.resize(llr, ring.shape)
    bad = np.random.default_rng(2).random(ring.shape[0]) < bad_fraction
    ring[bad, ::97] = np.nan                   # decoded with the NaNs erased (on_bad_llr="erase")
    out = np.empty((stream.batch, stream.vlen_out), np.uint8)
    done = []

    def work(count):
        start = time.perf_counter()
        left, head = count, 0                  # frames still to come; ring position of the first waiting
        while left > 0:
            waiting = min(left, 2 * stream.batch - head)
            consumed, batch = stream.work(ring[head:head + waiting], out)
            if batch is not None:
                left -= consumed
                head = (head + consumed) % (2 * stream.batch)
        done.append(time.perf_counter() - start)

    work(8 * stream.batch)                     # warm-up: kernels, the ring's registration, result blocks
    warm = stream.stats()["frames"]
    thread = threading.Thread(target=work, args=(max(frames, 32 * stream.batch),))
    thread.start()
    thread.join()
    stats = stream.stats()
    stream.close()                             # unlocks the ring before it is unmapped
    if double_map is not None:
        double_map.close()
    return stream, done[1], stats, stats["frames"] - warm


def measure_block(code, frames_llr, decoder_args, frame_tags=True):
    """Wall and process CPU time of a GNU Radio flowgraph vector source -> ldpc_decoder ->
    null sink over ``frames_llr`` [frames, n] (``frame_tags``: the block's per-frame tags)."""
    from gnuradio import blocks, gr

    from gnuradio import gpuldpc

    decoder = gpuldpc.ldpc_decoder(code.name, frame_tags=frame_tags, **decoder_args)
    tb = gr.top_block("gr_throughput")
    source = blocks.vector_source_f(frames_llr.ravel(), False, code.n)
    tb.connect(source, decoder, blocks.null_sink(gr.sizeof_char * decoder.core.vlen_out))
    cpu, start = time.process_time(), time.perf_counter()
    tb.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    stats = decoder.stats()
    return decoder, wall, cpu, stats, stats["frames"]


def measure_decoder(code, frames_llr, count, decoder_args, batch):
    """``count`` frames of ``frames_llr`` (GNU Radio's sign; taken cyclically: all the
    flowgraph's frames, or the work path's ring of two batches) through
    ``gl.Decoder.decode``, ``batch`` frames a call: what the block is compared with.
    Returns (wall s, process CPU s)."""
    args = {k: v for k, v in decoder_args.items() if k != "batch"}
    dec = gl.Decoder(code, positive_llr_bit=1, **args)
    dec.decode(frames_llr[:batch])
    cpu, start = time.process_time(), time.perf_counter()
    for first in range(0, count, batch):
        head = first % frames_llr.shape[0]
        dec.decode(frames_llr[head:head + min(batch, count - first)])
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    dec.close()
    return wall, cpu


def measure(code_name, backend, frames, preset, batch, path="block", iterations=10, ebn0_db=2.5,
            foreign=False, bad_fraction=0.0, early_stop=False, repeats=1, frame_tags=True):
    code = gl.codes.get(code_name)
    llr = pool_llr(code, ebn0_db)
    args = dict(backend=backend, max_iterations=iterations, early_stop=early_stop, preset=preset,
                batch=batch)
    frames_llr = np.resize(llr, (frames, code.n)).astype(np.float32) if path == "block" else None
    block_runs, gl_runs = [], []
    for _ in range(repeats):                   # interleaved: flowgraph, gl.Decoder, flowgraph, ...
        if path == "block":
            runner, wall, cpu, stats, timed = measure_block(code, frames_llr, args, frame_tags)
        else:
            runner, wall, stats, timed = measure_core(code, llr, frames, args, foreign, bad_fraction)
            cpu = None
        block_runs.append((wall, cpu))
        if frames_llr is None:                 # the work path's ring: two batches
            frames_llr = np.resize(llr, (2 * runner.batch, code.n)).astype(np.float32)
        gl_runs.append(measure_decoder(code, frames_llr, timed, args, runner.batch))
    ratios = [g[0] / b[0] for b, g in zip(block_runs, gl_runs)]
    cpu_ratios = [g[1] / b[1] for b, g in zip(block_runs, gl_runs) if b[1]]
    wall = float(np.median([b[0] for b in block_runs]))
    return {
        "system": f"gpuldpc ({'GNU Radio block' if path == 'block' else 'block work path, no GNU Radio'})",
        "api": "GNU Radio block" if path == "block" else "block work path",
        "input": "GNU Radio buffer" if path == "block" else "foreign" if foreign else "numpy",
        "bad_frame_fraction": bad_fraction, "bad_llr_frames": stats["bad_llr_frames"],
        "page_locked_bytes": stats["page_locked_bytes"],
        "code": code_name, "algorithm": "nms",
        "schedule": "layered", "iterations": iterations, "early_stop": early_stop,
        "llr_dtype": "float32", "frames_per_batch": runner.batch, "streams": None,
        "backend": stats["backend"], "frames": timed,
        "coded_gbps": timed * code.n / wall / 1e9,
        "info_gbps": timed * code.k / wall / 1e9,
        "decoder_only_gbps": stats["coded_mbps"] / 1e3,
        "latency_us": wall / -(-timed // runner.batch) * 1e6,
        "kernel_gbps": None,
        "fer": stats["failures"] / stats["frames"], "ebn0_db": ebn0_db,
        "gl_decoder_gbps": timed * code.n / float(np.median([g[0] for g in gl_runs])) / 1e9,
        "repeats": repeats, "ratio": float(np.median(ratios)), "ratios": [round(r, 3) for r in ratios],
        "cpu_ratio": float(np.median(cpu_ratios)) if cpu_ratios else None,
        "cpu_ratios": [round(r, 3) for r in cpu_ratios],
        "flowgraph": "vector_source_f -> ldpc_decoder -> null_sink" if path == "block" else None,
        "frame_tags": frame_tags if path == "block" else None,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu", "reference"))
    parser.add_argument("--code", default="wifi-1944-1/2")
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--preset", default="throughput", choices=("throughput", "latency"))
    parser.add_argument("--batch", type=int, default=0)
    parser.add_argument("--path", default="block", choices=("block", "core"))
    parser.add_argument("--foreign", action="store_true",
                        help="core path: the input ring in memory NumPy does not own, laid out as GNU Radio's "
                             "buffers (a SysV segment mapped twice)")
    parser.add_argument("--bad-fraction", type=float, default=0.0,
                        help="core path: this fraction of the frames holds NaN LLRs (erased)")
    parser.add_argument("--early-stop", action="store_true", help="stop frames whose syndrome is zero")
    parser.add_argument("--no-frame-tags", action="store_true",
                        help="block path: the decoder block without its per-frame iterations/valid tags")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of the flowgraph and of gl.Decoder, interleaved; the row gives medians")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    row = measure(args.code, args.backend, args.frames, args.preset, args.batch, args.path,
                  foreign=args.foreign, bad_fraction=args.bad_fraction, early_stop=args.early_stop,
                  repeats=args.repeats, frame_tags=not args.no_frame_tags)
    host, gpu, drv = "cpu-" + platform.node(), None, None
    if row["backend"] == "cuda":
        query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                               capture_output=True, text=True, check=False).stdout.splitlines()
        gpu, drv = [x.strip() for x in query[0].split(",")] if query else ("gpu", None)
        host = gpu.replace(" ", "-").lower()
    path = os.path.join(args.out, f"{host}-gr_throughput.json")
    doc = {"rows": []}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    doc.update(gpu=gpu, driver=drv, cpu=platform.processor() or platform.machine(),
               python=platform.python_version(), numpy=np.__version__, commit=source_commit(),
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    row["commit"] = doc["commit"]
    doc["rows"].append(row)
    os.makedirs(args.out, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"{row['backend']:>9} {row['code']}  batch {row['frames_per_batch']:>5}  "
          f"{row['frames']} frames  {row['coded_gbps'] * 1e3:9.2f} Mb/s coded through the {row['api']} "
          f"({row['input']} input, {row['bad_llr_frames']} bad frames) "
          f"({row['decoder_only_gbps'] * 1e3:.2f} Mb/s inside decode; gl.Decoder on the same frames "
          f"{row['gl_decoder_gbps'] * 1e3:.2f} Mb/s: {row['ratio']:.2f}x, repeats {row['ratios']}, "
          f"CPU time {row['cpu_ratio'] and round(row['cpu_ratio'], 2)}x)  -> {path}")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Throughput through GNU Radio: float LLR vectors -> gpuldpc.ldpc_decoder -> null sink.

    python bench/gr_throughput.py [--backend cpu] [--code wifi-1944-1/2] [--frames 20000]
                                  [--preset throughput] [--batch 0] [--path block|core]
                                  [--out bench/results]

A ``vector_source_f`` repeats a pool of 256 noisy codewords (Eb/N0 = 2.5 dB,
GNU Radio sign) and ``head`` stops it after ``--frames`` frames.  Reported:
coded Mb/s = n x frames / wall time of ``tb.run()`` (the whole flowgraph,
copies into and out of GNU Radio's buffers included), info Mb/s, the
decoder's own figure (time inside ``Decoder.decode`` only), iterations fixed
at 10 without early stop (DESIGN.md "Measuring").  Rows are appended to
``<out>/<host>-gr_throughput.json`` in the bench results format.

``--path core`` (for the GPU machine, which has no GNU Radio) times the block's
work path without GNU Radio: :meth:`gpuldpc.streaming.StreamDecoder.work` called
from a second thread as ``general_work`` calls it, on a ring of two batches of
input (``--foreign``: memory NumPy does not own, like GNU Radio's buffers), the
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
from gpuldpc.streaming import StreamDecoder

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import source_commit  # noqa: E402  (bench/timing.py)

POOL = 256


def pool_llr(code, ebn0_db):
    """POOL noisy codewords' LLRs in GNU Radio's sign."""
    rng = np.random.default_rng(1)
    info = rng.integers(0, 2, (POOL, code.k), dtype=np.uint8)
    return -gl.channel.transmit(code, code.encode(info), ebn0_db, rng)


def frame_buffer(rows: int, width: int, foreign: bool) -> np.ndarray:
    """A float32 [rows, width] array: NumPy's own memory, or (``foreign``) an anonymous
    memory map as GNU Radio's buffers are, which the CUDA backend cannot page-lock in
    place (its lifetime is not NumPy's) and so stages."""
    if not foreign:
        return np.empty((rows, width), np.float32)
    return np.frombuffer(mmap.mmap(-1, rows * width * 4), np.float32).reshape(rows, width)


def measure_core(code, llr, frames, decoder_args, foreign=False, bad_fraction=0.0):
    """Wall time of the block's work path over ``frames`` frames, from a second thread:
    :meth:`StreamDecoder.work` called as ``general_work`` is, on a buffer of two batches
    (a ring: the frames after the batch in flight, handed over before it is finished),
    the words written into an output array as into GNU Radio's."""
    stream = StreamDecoder(code.name, **decoder_args)
    ring = frame_buffer(2 * stream.batch, code.n, foreign)
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
    return stream, done[1], stats, stats["frames"] - warm


def measure_block(code, llr, frames, decoder_args):
    """Wall time of a GNU Radio flowgraph source -> head -> ldpc_decoder -> null sink."""
    from gnuradio import blocks, gr

    from gnuradio import gpuldpc

    decoder = gpuldpc.ldpc_decoder(code.name, **decoder_args)
    tb = gr.top_block("gr_throughput")
    source = blocks.vector_source_f(llr.ravel().tolist(), True, code.n)
    tb.connect(source, blocks.head(gr.sizeof_float * code.n, frames), decoder,
               blocks.null_sink(gr.sizeof_char * code.k))
    start = time.perf_counter()
    tb.run()
    wall = time.perf_counter() - start
    stats = decoder.stats()
    return decoder, wall, stats, stats["frames"]


def measure_decoder(code, llr, frames, decoder_args, batch):
    """The same frames through ``gl.Decoder.decode`` (numpy, GNU Radio's sign), ``batch``
    frames a call: what the block is compared with."""
    args = {k: v for k, v in decoder_args.items() if k != "batch"}
    dec = gl.Decoder(code, positive_llr_bit=1, **args)
    pool = np.resize(llr, (batch + POOL, code.n)).astype(np.float32)
    dec.decode(pool[:batch])
    start = time.perf_counter()
    for first in range(0, frames, batch):
        count = min(batch, frames - first)
        dec.decode(pool[first % POOL:first % POOL + count])
    wall = time.perf_counter() - start
    dec.close()
    return frames * code.n / wall / 1e9


def measure(code_name, backend, frames, preset, batch, path="block", iterations=10, ebn0_db=2.5,
            foreign=False, bad_fraction=0.0):
    code = gl.codes.get(code_name)
    llr = pool_llr(code, ebn0_db)
    args = dict(backend=backend, max_iterations=iterations, early_stop=False, preset=preset,
                batch=batch)
    if path == "block":
        runner, wall, stats, timed = measure_block(code, llr, frames, args)
    else:
        runner, wall, stats, timed = measure_core(code, llr, frames, args, foreign, bad_fraction)
    return {
        "system": f"gpuldpc ({'GNU Radio block' if path == 'block' else 'block work path, no GNU Radio'})",
        "api": "GNU Radio block" if path == "block" else "block work path",
        "input": "GNU Radio buffer" if path == "block" else "foreign" if foreign else "numpy",
        "bad_frame_fraction": bad_fraction, "bad_llr_frames": stats["bad_llr_frames"],
        "code": code_name, "algorithm": "nms",
        "schedule": "layered", "iterations": iterations, "early_stop": False,
        "llr_dtype": "float32", "frames_per_batch": runner.batch, "streams": None,
        "backend": stats["backend"], "frames": timed,
        "coded_gbps": timed * code.n / wall / 1e9,
        "info_gbps": timed * code.k / wall / 1e9,
        "decoder_only_gbps": stats["coded_mbps"] / 1e3,
        "latency_us": wall / -(-timed // runner.batch) * 1e6,
        "kernel_gbps": None,
        "fer": stats["failures"] / stats["frames"], "ebn0_db": ebn0_db,
        "gl_decoder_gbps": measure_decoder(code, llr, timed, args, runner.batch),
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
                        help="core path: the input ring in memory NumPy does not own, as GNU Radio's buffers")
    parser.add_argument("--bad-fraction", type=float, default=0.0,
                        help="core path: this fraction of the frames holds NaN LLRs (erased)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    row = measure(args.code, args.backend, args.frames, args.preset, args.batch, args.path,
                  foreign=args.foreign, bad_fraction=args.bad_fraction)
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
          f"{row['gl_decoder_gbps'] * 1e3:.2f} Mb/s: {row['coded_gbps'] / row['gl_decoder_gbps']:.2f}x)  -> {path}")


if __name__ == "__main__":
    sys.exit(main())

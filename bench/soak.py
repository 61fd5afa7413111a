#!/usr/bin/env python3
"""Soak: a flowgraph decoding continuously; resident memory and frame order checked.

    python bench/soak.py [--seconds 600] [--backend cpu] [--code wifi-1944-1/2]

Flowgraph: a source of frames carrying :func:`gpuldpc.framing.payload`
(sequence number + PRBS), encoded and sent by BPSK over AWGN (LLRs in GNU
Radio's sign) -> ``gpuldpc.ldpc_decoder`` -> ``gpuldpc.payload_check``.  The
source stops after ``seconds`` and the flowgraph drains, so every frame made
must arrive: none lost, repeated or out of order, none wrong.  Resident set
size (``/proc/self/statm``) is sampled once a second; the figure of merit is
its growth from the end of the warm-up to the end of the run.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np
from gnuradio import gr

import gpuldpc as gl
from gnuradio import gpuldpc
from gpuldpc import framing

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """Resident set size of this process (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class payload_frame_source(gr.sync_block):
    """Frames of LLRs (GNU Radio sign) carrying payloads 0, 1, 2, ... until ``deadline``."""

    def __init__(self, code, seed, ebn0_db, deadline, per_call=32):
        self.code = code
        gr.sync_block.__init__(self, name="payload_frame_source", in_sig=None,
                               out_sig=[(np.float32, code.n)])
        self.seed, self.deadline, self.per_call = seed, deadline, per_call
        self.sigma = gl.channel.sigma_from_ebn0(ebn0_db, code.rate)
        self.rng = np.random.default_rng(seed)
        self.made = 0

    def work(self, input_items, output_items):
        if time.monotonic() >= self.deadline:
            return -1
        count = min(len(output_items[0]), self.per_call)
        info = np.stack([framing.payload(self.made + i, self.code.k, self.seed) for i in range(count)])
        output_items[0][:count] = -gl.channel.awgn_llr(self.code.encode(info), self.sigma, self.rng)
        self.made += count
        return count


def run(seconds: float, backend: str = "cpu", code_name: str = "wifi-1944-1/2",
        warmup: float = 10.0, ebn0_db: float = 4.0, seed: int = 1) -> dict:
    """Run the soak; return counts, RSS samples and throughput (see the module docstring)."""
    code = gl.codes.get(code_name)
    tb = gr.top_block("soak")
    start = time.monotonic()
    source = payload_frame_source(code, seed, ebn0_db, start + seconds)
    decoder = gpuldpc.ldpc_decoder(code_name, backend=backend)
    check = gpuldpc.payload_check(code.k, seed)
    tb.connect(source, decoder, check)
    samples = []
    done = threading.Event()

    def sample():
        while not done.wait(1.0):
            samples.append((time.monotonic() - start, rss_bytes()))

    sampler = threading.Thread(target=sample, daemon=True)
    tb.start()
    sampler.start()
    tb.wait()
    done.set()
    sampler.join()
    wall = time.monotonic() - start
    after_warmup = [rss for t, rss in samples if t >= warmup]
    c = check.counts
    return {
        "backend": decoder.backend, "code": code_name, "seconds": wall,
        "frames_made": source.made, "frames_checked": c.frames, "frame_errors": c.frame_errors,
        "bit_errors": c.bit_errors, "missing": c.missing, "out_of_order": c.out_of_order,
        "decoder": decoder.stats(),
        "rss_warm_mb": after_warmup[0] / 2**20 if after_warmup else None,
        "rss_end_mb": samples[-1][1] / 2**20 if samples else None,
        "rss_max_after_warmup_mb": max(after_warmup) / 2**20 if after_warmup else None,
        "coded_mbps": c.frames * code.n / wall / 1e6,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--backend", default="cpu", choices=("auto", "cuda", "cpu", "reference"))
    parser.add_argument("--code", default="wifi-1944-1/2")
    parser.add_argument("--warmup", type=float, default=30.0)
    args = parser.parse_args(argv)
    result = run(args.seconds, args.backend, args.code, args.warmup)
    print(json.dumps(result, indent=2))
    ok = (result["frames_made"] == result["frames_checked"] and result["missing"] == 0
          and result["out_of_order"] == 0 and result["frame_errors"] == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Make the committed SigMF recording of LDPC-coded BPSK frames over a realistic channel.

    python tools/make_recording.py [--out examples/data/wifi1944_bpsk] [--seed 2026]

Transmitter (see :mod:`gpuldpc.framing`): frames ``sync word | codeword`` of
``wifi-1944-1/2`` carrying :func:`gpuldpc.framing.payload` (sequence number
+ seeded PRBS), BPSK (bit 0 -> +1), root-raised-cosine pulses (roll-off 0.35),
2 samples per symbol, preceded by random preamble symbols for the receiver's
loops to settle and followed by random tail symbols.

Channel, all drawn from ``numpy.random.default_rng(seed)`` so the file is
reproducible: the pulse train is evaluated at sample instants
``t_i = i (1 + delta) / sps - tau`` (sample-clock offset ``delta`` in ppm,
fractional delay ``tau`` in symbols), a second path ``g`` one sample later, a
carrier offset ``f`` (cycles/sample) with a random initial phase, and complex
white Gaussian noise at the given Es/N0 (symbol energy over noise density).

Output: ``<out>.sigmf-data`` (cf32_le) and ``<out>.sigmf-meta`` whose
``ldpc:`` keys tell a receiver what it must recover: code, standard, n, k,
rate, q, payload seed, frame count, sync word, modulation, samples per symbol,
roll-off, and the channel's parameters.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import gpuldpc as gl  # noqa: E402
from gpuldpc import framing  # noqa: E402

CODE = "wifi-1944-1/2"
SPS = 2
ROLLOFF = 0.35
SPAN = 8                      # pulse truncated to |t| <= SPAN symbols
PREAMBLE, TAIL = 1024, 256    # random symbols before the first and after the last frame


def rrc(t, beta):
    """Root-raised-cosine pulse at ``t`` symbol periods (unit energy per symbol period)."""
    t = np.asarray(t, dtype=np.float64)
    out = np.empty_like(t)
    at0 = np.abs(t) < 1e-9
    at_edge = np.abs(np.abs(t) - 1 / (4 * beta)) < 1e-9
    rest = ~(at0 | at_edge)
    tr = t[rest]
    out[rest] = (np.sin(np.pi * tr * (1 - beta)) + 4 * beta * tr * np.cos(np.pi * tr * (1 + beta))) \
        / (np.pi * tr * (1 - (4 * beta * tr) ** 2))
    out[at0] = 1 - beta + 4 * beta / np.pi
    out[at_edge] = beta / np.sqrt(2) * ((1 + 2 / np.pi) * np.sin(np.pi / (4 * beta))
                                        + (1 - 2 / np.pi) * np.cos(np.pi / (4 * beta)))
    return out


def pulse_train(symbols, sps, delta, tau):
    """``sum_k a_k h(t_i - k)`` at ``t_i = i (1 + delta) / sps - tau`` for all i covering the symbols."""
    count = int((symbols.size + SPAN) * sps / (1 + delta))
    t = np.arange(count) * (1 + delta) / sps - tau
    k0 = np.floor(t).astype(np.int64)
    out = np.zeros(count, dtype=np.float64)
    for d in range(-SPAN, SPAN + 1):
        k = k0 - d
        ok = (k >= 0) & (k < symbols.size)
        out[ok] += symbols[k[ok]] * rrc(t[ok] - k[ok], ROLLOFF)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("examples", "data", "wifi1944_bpsk"))
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--esn0-db", type=float, default=4.0)
    parser.add_argument("--freq-offset", type=float, default=2e-3, help="cycles per sample")
    parser.add_argument("--clock-ppm", type=float, default=80.0)
    parser.add_argument("--echo", type=float, default=0.2, help="second-path amplitude")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    payload_seed = int(rng.integers(1 << 31))
    code = gl.codes.get(CODE)
    info = np.stack([framing.payload(i, code.k, payload_seed) for i in range(args.frames)])
    bits = np.concatenate([rng.integers(0, 2, PREAMBLE, dtype=np.uint8),
                           framing.frame_bits(code.encode(info)),
                           rng.integers(0, 2, TAIL, dtype=np.uint8)])
    tau = float(rng.uniform(0, 1))
    phase = float(rng.uniform(0, 2 * np.pi))
    echo = args.echo * np.exp(1j * rng.uniform(0, 2 * np.pi))
    s = pulse_train(1.0 - 2.0 * bits, SPS, args.clock_ppm * 1e-6, tau)
    x = s + echo * np.concatenate([[0.0], s[:-1]])
    x = x * np.exp(1j * (2 * np.pi * args.freq_offset * np.arange(x.size) + phase))
    es = float(np.mean(s ** 2)) * SPS          # symbol energy: SPS samples of the pulse train
    n0 = es / 10 ** (args.esn0_db / 10)        # complex noise variance per sample
    noise = np.sqrt(n0 / 2) * (rng.standard_normal(x.size) + 1j * rng.standard_normal(x.size))
    samples = (x + noise).astype(np.complex64)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    samples.tofile(args.out + ".sigmf-data")
    frame_len = framing.SYNC_BITS + code.n
    meta = {
        "global": {
            "core:datatype": "cf32_le",
            "core:sample_rate": 1.0e6,
            "core:version": "1.0.0",
            "core:recorder": "tools/make_recording.py",
            "core:description": f"{args.frames} frames of {CODE}, BPSK, RRC {ROLLOFF}, {SPS} samples/symbol, "
                                "over noise, carrier and clock offsets and a second path (synthetic)",
            "core:extensions": [{"name": "ldpc", "version": "1.0.0", "optional": True}],
            "ldpc:code": CODE,
            "ldpc:standard": code.standard,
            "ldpc:n": code.n,
            "ldpc:k": code.k,
            "ldpc:rate": "1/2",
            "ldpc:q": code.q,
            "ldpc:payload_seed": payload_seed,
            "ldpc:frame_count": args.frames,
            "ldpc:sync_word": f"0x{framing.SYNC_WORD:016X}",
            "ldpc:modulation": "bpsk",
            "ldpc:samples_per_symbol": SPS,
            "ldpc:rrc_rolloff": ROLLOFF,
            "ldpc:generator_seed": args.seed,
            "ldpc:channel": {
                "esn0_db": args.esn0_db,
                "freq_offset_cycles_per_sample": args.freq_offset,
                "clock_offset_ppm": args.clock_ppm,
                "delay_symbols": tau,
                "second_path": {"delay_samples": 1, "gain_re": echo.real, "gain_im": echo.imag},
            },
        },
        "captures": [{"core:sample_start": 0}],
        "annotations": [
            {"core:sample_start": int(round(((PREAMBLE + i * frame_len) + tau) * SPS / (1 + args.clock_ppm * 1e-6))),
             "core:sample_count": int(round(frame_len * SPS)), "core:label": f"frame {i}"}
            for i in range(args.frames)
        ],
    }
    with open(args.out + ".sigmf-meta", "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}.sigmf-data ({samples.nbytes} bytes, {samples.size} samples) and .sigmf-meta")


if __name__ == "__main__":
    main()

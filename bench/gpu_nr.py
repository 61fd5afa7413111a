#!/usr/bin/env python3
"""5G NR code blocks on the GPU through ``gl.Decoder`` (issue 14), beside Sionna and the cpu backend.

    python bench/gpu_nr.py [--out DIR] [--quick]

For each code block ``gl.codes.nr(k, E)`` (BG1 Zc 384, k = 8448, at rates 8/9 and 1/3; BG2
Zc 384, k = 3840, at rate 1/3), 5 iterations, early stop off, layered normalized min-sum in float32, BPSK/AWGN
LLRs of random blocks:

* ``gl.Decoder`` -- what a user gets: E received LLRs in a numpy array, rate recovery on
  the host into the mother code's LLRs, the mother code's QC kernels (the headline);
* ``gl.Decoder, mother code`` -- the mother code's LLRs already recovered, page-locked:
  what the kernels and transfers do without the host's recovery (lower level, labelled);
* ``sionna LDPC5GDecoder`` -- Sionna's 5G decoder (``sionna`` wheel, PyTorch, this GPU;
  its own schedule and check-node rule, ``num_iter=5``) on pinned torch tensors of the
  same E LLRs (logits ln P(1)/P(0): negated);
* ``cpu`` -- our C++ backend on this machine's cores, same blocks.

Throughput: info bits (k a block) and transmitted bits (E a block) per second; FER on the
same frames.  Rows go to ``<out>/<gpu>-nr.json`` and a table to ``<out>/<gpu>-nr.txt``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np

import gpuldpc as gl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_time, source_commit  # noqa: E402  (bench/timing.py)

BLOCKS = [(8448, 9504, 1), (8448, 25344, 1), (3840, 11520, 2)]     # (k, E, base graph)
ITERATIONS, EBN0_DB = 5, {9504: 4.5, 25344: 3.0, 11520: 3.0}
SIONNA_FRAMES = 512          # Sionna's decoder holds every message of the batch: 8448 blocks ran out of memory


def received(code, frames, ebn0_db, seed=1):
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    sigma = gl.channel.sigma_from_ebn0(ebn0_db, code.k / code.n)
    return info, gl.channel.awgn_llr(code.encode(info), sigma, rng).astype(np.float32)


def row(code, frames, seconds, api, input, fer, **extra):
    r = dict(code=code.name, k=code.k, e=code.n, rate=code.k / code.n, iterations=ITERATIONS,
             early_stop=False, frames_per_batch=frames, api=api, input=input,
             info_gbps=code.k * frames / seconds / 1e9, transmitted_gbps=code.n * frames / seconds / 1e9,
             latency_us=seconds * 1e6, fer=fer, **extra)
    print(json.dumps(r), flush=True)
    return r


def fer_of(info_hat, info):
    return float((np.asarray(info_hat) != info).any(axis=1).mean())


def ours(code, reps):
    settings = dict(algorithm="nms", schedule="layered", max_iterations=ITERATIONS, early_stop=False)
    dec = gl.Decoder(code, backend="cuda", devices=[0], **settings)
    batch = dec.preferred_batch("throughput")
    info, llr = received(code, batch, EBN0_DB[code.n])
    fer = fer_of(dec.decode(llr).info, info)
    rows = [row(code, batch, median_time(lambda: dec.decode(llr), reps), "gl.Decoder", "numpy", fer,
                backend="cuda", schedule="layered", precision="float32")]
    mother = gl.Decoder(code.mother, backend="cuda", devices=[0], **settings)
    pinned = mother.pinned_llr(batch)
    pinned[:] = code.recover(llr)
    rows.append(row(code, batch, median_time(lambda: mother.decode(pinned), reps), "gl.Decoder, mother code",
                    "pinned, recovered", fer_of(mother.decode(pinned).info[:, :code.k], info), backend="cuda",
                    schedule="layered", precision="float32"))
    dec.close()
    mother.close()
    cpu = gl.Decoder(code, backend="cpu", **settings)
    frames = min(batch, cpu.preferred_batch("throughput"))
    info_c, llr_c = info[:frames], llr[:frames]
    rows.append(row(code, frames, median_time(lambda: cpu.decode(llr_c), 2, warmup=1), "gl.Decoder", "numpy",
                    fer_of(cpu.decode(llr_c).info, info_c), backend="cpu", schedule="layered",
                    precision="float32", threads=os.cpu_count()))
    return rows, info, llr


def sionna(code, info, llr, reps):
    try:
        import torch
        from sionna.phy.fec.ldpc import LDPC5GDecoder, LDPC5GEncoder
    except Exception as exc:  # record why the peer could not run
        return [], f"sionna not importable: {type(exc).__name__}: {exc}"
    enc = LDPC5GEncoder(code.k, code.n, device="cuda:0")
    dec = LDPC5GDecoder(enc, num_iter=ITERATIONS, hard_out=True, device="cuda:0")
    info, llr = info[:SIONNA_FRAMES], llr[:SIONNA_FRAMES]
    host = torch.from_numpy(-llr).pin_memory()

    def run():
        bits = dec(host.to("cuda", non_blocking=True)).to("cpu")
        torch.cuda.synchronize()
        return bits

    fer = fer_of(run().numpy().astype(np.uint8), info)
    return [row(code, llr.shape[0], median_time(run, reps), "sionna LDPC5GDecoder", "pinned torch tensor", fer,
                backend="sionna", schedule="sionna default")], None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--quick", action="store_true", help="3 timed calls a row instead of 7")
    args = parser.parse_args(argv)
    reps = 3 if args.quick else 7
    rows, notes = [], {}
    for k, e, bg in BLOCKS:
        code = gl.codes.nr(k, e, bg=bg)
        ours_rows, info, llr = ours(code, reps)
        rows += ours_rows
        try:
            peer, why = sionna(code, info, llr, reps)
        except Exception as exc:  # the peer failing is a note, not the end of the run
            peer, why = [], f"sionna failed: {type(exc).__name__}: {exc}"
        rows += peer
        if why:
            notes[code.name] = why
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, check=False).stdout.splitlines()
    gpu, drv = [x.strip() for x in smi[0].split(",")] if smi else ("gpu", None)
    doc = dict(gpu=gpu, driver=drv, python=platform.python_version(), numpy=np.__version__,
               commit=source_commit(), date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               rows=rows, notes=notes)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, gpu.replace(" ", "_").lower() + "-nr")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=2)
    lines = [f"{gpu}  driver {drv}  commit {doc['commit']}  {doc['date']}  ({ITERATIONS} iterations, no early stop)",
             f"{'api':24s} {'input':22s} {'code block':24s} {'backend':8s} {'frames':>7s} {'info Gb/s':>10s} "
             f"{'E Gb/s':>8s} {'call ms':>9s} {'FER':>7s}"]
    for r in rows:
        lines.append(f"{r['api']:24s} {r['input']:22s} {r['code']:24s} {r['backend']:8s} {r['frames_per_batch']:7d} "
                     f"{r['info_gbps']:10.3f} {r['transmitted_gbps']:8.3f} {r['latency_us'] / 1e3:9.2f} {r['fer']:7.4f}")
    lines += [f"note {k}: {v}" for k, v in notes.items()]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

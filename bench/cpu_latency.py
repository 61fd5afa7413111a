"""Latency of one frame on the cpu backend: intra-frame path against inter-frame (docs/cpu.md).

WiMAX 2304 r1/2 (and WiFi 1944 r1/2), layered NMS / OMS in float32, NMS in int16 and int8,
one frame per call (and two frames on two threads):
10 iterations fixed (early stop off) and with early stop at 2.0 dB, through
``gl.Decoder(code, backend="cpu", preset="latency", threads=T).decode(llr[1, n])`` and through
the raw ``gpuldpc._core.BinaryDecoder.decode`` it wraps; the inter-frame path (no preset)
beside it.  The four timings of a setting (the two paths, each through ``gl.Decoder`` and
``_core``) run interleaved in 10 rounds of ``--calls`` / 10 calls (this VM is shared and
noisy): each figure is the median of its round medians, their spread (max - min) and the
p99 of all its calls.  The frame errors of both paths on the same ``--fer-frames``
frames are counted too (the paths give the same bits, so the counts must be equal).

    python bench/cpu_latency.py               # table + bench/results/<machine>-cpu-latency.json/.txt
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

import numpy as np

import gpuldpc as gl
from gpuldpc import _native, channel
from timing import latency, source_commit

CODES = ("wimax-2304-1/2", "wifi-1944-1/2")
CONFIGS = (("nms", "float32"), ("oms", "float32"), ("nms", "int16"), ("nms", "int8"))
ITERATIONS = 10
ROUNDS = 10
EBN0_DB = 2.0
FER_DB = (1.5, 2.0)


def cpu_model() -> str:
    """The model name with its family and model numbers (a VM may call Zen 4 and Zen 5 both
    "AMD EPYC": family 25 is Zen 3/4, 26 Zen 5)."""
    fields = {}
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name") or platform.processor() or "unknown"
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']} model {fields['model']})"
    return name


def frames(code, count, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, 2, (count, code.k), dtype=np.uint8))
    return words, np.ascontiguousarray(channel.transmit(code, words, ebn0_db, rng), dtype=np.float32)


def interleaved_latency(fns, calls, rounds=ROUNDS, warm_seconds=0.5):
    """{key: (median, p99, spread)} seconds of each ``fns[key]()``: ``rounds`` rounds of
    ``calls // rounds`` calls, the functions in turns (order reversed every round), so that a
    neighbour's burst on this shared VM falls on all of them; median = the median of the round
    medians, spread = their range (max - min), p99 over every call."""
    for fn in fns.values():
        latency(fn, 10, warm_seconds=warm_seconds / len(fns))
    per_round = max(1, calls // rounds)
    times = {key: np.empty((rounds, per_round)) for key in fns}
    keys = list(fns)
    for r in range(rounds):
        for key in (keys if r % 2 else keys[::-1]):
            fn, out = fns[key], times[key][r]
            for i in range(per_round):
                t0 = time.perf_counter()
                fn()
                out[i] = time.perf_counter() - t0
    result = {}
    for key, t in times.items():
        medians = np.median(t, axis=1)
        result[key] = (float(np.median(medians)), float(np.percentile(t, 99)), float(np.ptp(medians)))
    return result


def latency_rows(name, calls):
    """Each setting's four timings (intra / inter path x gl.Decoder / _core) interleaved."""
    code = gl.codes.get(name)
    _, llr = frames(code, 16, EBN0_DB, seed=1)
    rows = []
    for algorithm, precision in CONFIGS:
        for early_stop in (False, True):
            for threads, batch in ((1, 1), (2, 2)):
                x = llr[:batch]
                kwargs = dict(algorithm=algorithm, precision=precision, max_iterations=ITERATIONS,
                              early_stop=early_stop, threads=threads)
                decoders = {preset: gl.Decoder(code, backend="cpu", **kwargs, **({"preset": preset} if preset else {}))
                            for preset in ("latency", None)}
                fns = {}
                for preset, dec in decoders.items():
                    fns[preset, "gl.Decoder.decode"] = lambda dec=dec: dec.decode(x)
                    fns[preset, "gpuldpc._core.BinaryDecoder.decode"] = lambda dec=dec: dec._impl._impl.decode(x, False)
                for (preset, api), (median, p99, spread) in interleaved_latency(fns, calls).items():
                    dec = decoders[preset]
                    rows.append(dict(code=name, algorithm=algorithm, precision=precision,
                                     iterations=ITERATIONS, early_stop=early_stop,
                                     mean_iterations=float(dec.decode(x).iterations.mean()),
                                     threads=threads, batch=batch, path=dec._impl.path(batch),
                                     simd=dec._impl.simd, api=api, median_us=median * 1e6,
                                     p99_us=p99 * 1e6, spread_us=spread * 1e6))
    return rows


def fer_rows(name, count):
    """Frame errors of both paths on the same frames (batches of intra_frames frames)."""
    code = gl.codes.get(name)
    rows = []
    for ebn0 in FER_DB:
        words, llr = frames(code, count, ebn0, seed=2)
        for precision in ("float32", "int8"):
            errors = {}
            for preset in ("latency", None):
                dec = gl.Decoder(code, backend="cpu", precision=precision, max_iterations=ITERATIONS,
                                 **({"preset": preset} if preset else {}))
                step = dec._impl.intra_frames or count
                bits = np.concatenate([dec.decode(llr[i:i + step]).bits for i in range(0, count, step)])
                errors[dec._impl.path(step)] = int((bits != words).any(axis=1).sum())
            rows.append(dict(code=name, ebn0_db=ebn0, frames=count, algorithm="nms", precision=precision,
                             iterations=ITERATIONS, frame_errors=errors))
    return rows


def table(doc) -> str:
    out = [f"cpu latency, {doc['cpu']} ({os.cpu_count()} cores), SIMD {doc['simd']}, commit {doc['commit']}, "
           f"{doc['date']}; median of {ROUNDS} interleaved round medians (spread: their range) / p99 of "
           f"{doc['calls']} calls",
           f"{'code':15} {'alg':4} {'prec':7} {'es':3} {'thr':3} {'batch':5} {'path':12} {'api':35} {'it':>5} "
           f"{'median us':>10} {'p99 us':>8} {'spread us':>9}"]
    for r in doc["latency"]:
        out.append(f"{r['code']:15} {r['algorithm']:4} {r['precision']:7} {'on' if r['early_stop'] else 'off':3} {r['threads']:3} "
                   f"{r['batch']:5} {r['path']:12} {r['api']:35} {r['mean_iterations']:5.1f} "
                   f"{r['median_us']:10.1f} {r['p99_us']:8.1f} {r['spread_us']:9.1f}")
    out.append("frame errors, same frames, both paths (nms, 10 it, early stop):")
    for r in doc["fer"]:
        out.append(f"  {r['code']} {r['precision']} {r['ebn0_db']} dB, {r['frames']} frames: {r['frame_errors']}")
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--machine", default="debian12-2core", help="file name prefix")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--fer-frames", type=int, default=2000)
    args = parser.parse_args(argv)
    doc = dict(cpu=cpu_model(), cores=os.cpu_count(), simd=_native.core("cpu_decoders").simd_target(),
               python=platform.python_version(), numpy=np.__version__, commit=source_commit(),
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               calls=args.calls, ebn0_db=EBN0_DB,
               latency=[r for name in CODES for r in latency_rows(name, args.calls)],
               fer=[r for name in CODES for r in fer_rows(name, args.fer_frames)])
    text = table(doc)
    print(text, end="")
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"{args.machine}-cpu-latency")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=2)
    with open(stem + ".txt", "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

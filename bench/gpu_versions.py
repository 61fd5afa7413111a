"""The binary kernels side by side on one GPU, for docs/gpu.md's version log.

Row-per-thread min-sum (``ms``, the throughput preset's kernel) against the
edge-parallel kernel (``ep8x1``: a check row over 8 threads, one edge each, the
latency preset's), forced into the throughput preset through
``decoder.EDGE_PARALLEL`` (v7 also measured ``ep4x2``, 4 threads of two edges,
through an entry point since removed: docs/gpu.md):

1. bit-exactness of each ``ep`` against ``ms`` (which tests/gpu checks against the
   reference decoder): bits, iterations and flags on 10^4 frames per setting
   (Eb/N0 1, 1.5, 2, 2.5 dB), NMS/OMS x layered/flooding x early stop on/off,
   WiMAX 576/2304 r1/2 and WiFi 648/1944 r1/2, plus int8 input;
2. kernel-only coded Gbps, WiMAX 2304 r1/2, 10 iterations (one launch on resident
   frames, CUDA events), and end to end from int8 input;
3. one and six codewords: hand-over to bits on the host, and the kernel alone.

``--latency-only`` (v8, v10, v11, issue 3): the latency preset's candidates
(``LATENCY_VARIANTS``, forced through ``decoder.EDGE_PARALLEL``; v11's ``pl2x8``, two layers
a step, through ``decoder.PAIRED_ROWS``, which the others run without; v10's ``ep1x8`` and
v11's ``pl2x8`` also resident, :mod:`gpuldpc.cuda.resident`): per candidate the one-frame
kernel (CUDA events, median of 300 launches), one and six codewords from hand-over to bits
on the host, and exactness against ``ms`` as in 1 (``pl2x8`` against ``ms`` on the code with
its layers in the paired order, :func:`gpuldpc.codes.qc.in_layer_order`).

    python bench/gpu_versions.py --out DIR     # writes h200-binary-kernel-v7.{json,txt}
    python bench/gpu_versions.py --latency-only --out DIR   # <gpu>-binary-latency-v11.{json,txt}
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

import numpy as np

import gpuldpc as gl
from gpuldpc import cuda
from gpuldpc.codes.qc import in_layer_order

sys.path.insert(0, os.path.dirname(__file__))
from gpu_binary import end_to_end, kernel_gbps, noisy, quantised  # noqa: E402
from timing import median_time, source_commit  # noqa: E402

SNRS = (1.0, 1.5, 2.0, 2.5)


def latency(dec, frames, reps, kernel_reps):
    """(median seconds from hand-over to bits on the host, microseconds of the kernel alone) of
    ``frames`` codewords in page-locked buffers through the lower-level ``dec`` (a CudaDecoder:
    these rows compare kernels; what a user gets is in bench/gpu_front_door.py)."""
    code = dec.code
    src = dec.pinned_llr(frames)
    src[:] = noisy(code, frames)[1]
    out = dec.pinned_bits(frames)
    t = median_time(lambda: dec.decode(src, out=out), reps=reps, warmup=reps // 10)
    return t, code.n * frames / kernel_gbps(dec, frames, reps=kernel_reps) / 1e3


def frames_at_snrs(code, per_snr, seed=5):
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (per_snr * len(SNRS), code.k), dtype=np.uint8))
    return np.concatenate([gl.channel.transmit(code, cw[i * per_snr:(i + 1) * per_snr], s, rng)
                           for i, s in enumerate(SNRS)])


# the kernels compared: row per thread (ms) and edge-parallel (ep, decoder.EDGE_PARALLEL entries)
VARIANTS = {"ms": None, "ep8x1": (12, 8, 1, 768)}
# the latency preset's candidates (v7's ep8x1, v8's ep2x4, v10's ep1x8, v11's pl2x8: docs/gpu.md)
LATENCY_VARIANTS = {"ms": None, "ep8x1": (12, 8, 1, 768), "ep2x4": (12, 2, 4, 192), "ep1x8": (12, 1, 8, 96),
                    "pl2x8": (12, 1, 8, 96)}
PAIRED = "pl2x8"                  # ep1x8 with decoder.PAIRED_ROWS: two layers a step where they pair up


@contextlib.contextmanager
def forced(preset, entry, paired):
    """``decoder.EDGE_PARALLEL`` for both schedules of ``preset`` set to ``entry`` (None: the
    row-per-thread kernels), and ``decoder.PAIRED_ROWS`` emptied unless ``paired``, while the
    block runs."""
    table, pairs = cuda.decoder.EDGE_PARALLEL, cuda.decoder.PAIRED_ROWS
    saved, saved_pairs = dict(table), dict(pairs)
    for schedule in ("layered", "flooding"):
        table.pop((preset, schedule), None)
        if entry is not None:
            table[(preset, schedule)] = entry
    if not paired:
        pairs.clear()
    try:
        yield
    finally:
        table.clear()
        table.update(saved)
        pairs.update(saved_pairs)


def decoder(variant, code, preset="throughput", **kw):
    """A decoder of the preset on device 0 running the given kernel variant."""
    with forced(preset, (VARIANTS if preset == "throughput" else LATENCY_VARIANTS)[variant], variant == PAIRED):
        return cuda.CudaDecoder(code, devices=[0], preset=preset, **kw)


def exactness(per_snr, preset="throughput"):
    rows = []
    for name in ("wimax-2304-1/2", "wifi-1944-1/2", "wifi-648-1/2", "wimax-576-1/2"):
        code = gl.codes.get(name)
        llr = frames_at_snrs(code, per_snr)
        q = quantised(llr, "int8", 0.25)
        settings = [dict(algorithm=alg, schedule=sched, early_stop=es) for alg in ("nms", "oms")
                    for sched in ("layered", "flooding") for es in (False, True)]
        settings.append(dict(algorithm="nms", schedule="layered", early_stop=True, llr_dtype="int8",
                             llr_scale=0.25))
        for st in settings:
            x = q if st.get("llr_dtype") == "int8" else llr
            table = VARIANTS if preset == "throughput" else LATENCY_VARIANTS
            decs = {v: decoder(v, code, preset if v != "ms" else "throughput", max_iterations=10, streams=2,
                               chunk_frames=4096, **st) for v in table}
            res = {v: d.decode(x) for v, d in decs.items()}
            for v in list(table)[1:]:
                got, order = res[v], decs[v].layout.order
                want = res["ms"]
                if order is not None:               # ms on the code with its layers in that order
                    ms = decoder("ms", in_layer_order(code, order), max_iterations=10, streams=2, chunk_frames=4096,
                                 **st)
                    want = ms.decode(x)
                    ms.close()
                same = (np.array_equal(want.bits, got.bits) and np.array_equal(want.iterations, got.iterations)
                        and np.array_equal(want.valid, got.valid))
                rows.append(dict(code=name, frames=len(x), kernel=decs[v].kernel, identical=bool(same),
                                 differing_frames=int((want.bits != got.bits).any(axis=1).sum()),
                                 **{k: val for k, val in st.items() if k != "llr_scale"}))
                print(json.dumps(rows[-1]), flush=True)
            for d in decs.values():
                d.close()
    return rows


def kernel_rows(frames):
    code = gl.codes.get("wimax-2304-1/2")
    llr = noisy(code, frames)[1]
    out = {}
    for v in VARIANTS:
        dec = decoder(v, code, early_stop=False, streams=1, chunk_frames=frames)
        dec.decode(llr)
        out[v] = dict(kernel=dec.kernel, describe=dec.describe()["devices"][0],
                      kernel_gbps_one_launch=[kernel_gbps(dec, frames) for _ in range(2)])
        print(json.dumps(out[v]), flush=True)
        dec.close()
    return out


def int8_rows(frames, variants):
    code = gl.codes.get("wimax-2304-1/2")
    rows = {}
    for v in variants:
        with forced("throughput", VARIANTS[v]):
            dec, t, fer = end_to_end(code, frames, llr_dtype="int8", devices=[0])
        rows[v] = dict(kernel=dec.kernel, coded_gbps=code.n * frames / t / 1e9, fer=fer,
                       chunk=dec.engines[0].chunk, kernel_gbps_chunk=kernel_gbps(dec, dec.engines[0].chunk))
        print(json.dumps(rows[v]), flush=True)
        dec.close()
    return rows


def latency_rows():
    code = gl.codes.get("wimax-2304-1/2")
    rows = []
    for label, make in (("ms", lambda: decoder("ms", code, early_stop=False, streams=1, chunk_frames=132,
                                               frames_per_block=1)),
                        ("latency preset", lambda: cuda.CudaDecoder(code, early_stop=False, devices=[0],
                                                                    preset="latency"))):
        dec = make()
        for frames in (1, 6):
            t, k_us = latency(dec, frames, reps=300, kernel_reps=50)
            rows.append(dict(kernel=dec.kernel, frames=frames, end_to_end_us=t * 1e6, kernel_us=k_us,
                             host_us=t * 1e6 - k_us))
            print(json.dumps(rows[-1]), flush=True)
        dec.close()
    return rows


def latency_candidates():
    """One-frame kernel and hand-over-to-bits latency of each latency candidate."""
    code = gl.codes.get("wimax-2304-1/2")
    rows = []
    for v, resident in [(v, False) for v in LATENCY_VARIANTS] + [("ep1x8", True), (PAIRED, True)]:
        dec = (decoder(v, code, early_stop=False, streams=1, chunk_frames=132, frames_per_block=1) if v == "ms"
               else decoder(v, code, "latency", early_stop=False, resident=resident))
        for frames in (1, 6):
            t, k_us = latency(dec, frames, reps=300, kernel_reps=300)
            rows.append(dict(variant=v, kernel=dec.kernel, registers=dec.describe()["devices"][0]["registers"],
                             resident=dec.engines[0].slots[0].resident is not None,
                             frames=frames, end_to_end_us=t * 1e6, kernel_us=k_us, host_us=t * 1e6 - k_us))
            print(json.dumps(rows[-1]), flush=True)
        dec.close()
    return rows


def latency_only(args):
    doc = dict(gpu=cuda.driver().Device(0).name(), commit=source_commit(), latency=latency_candidates(),
               exactness=exactness(args.per_snr, "latency"))
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, ("h200" if "H200" in doc["gpu"] else "h100") + "-binary-latency-v11")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    lines = [f"{doc['gpu']} (commit {doc['commit']}): WiMAX 2304 r1/2, 10 iterations, latency candidates"]
    for r in doc["latency"]:
        lines.append(f"{r['kernel']:24s}{' resident' if r['resident'] else '         '} regs {r['registers']:3d} "
                     f"{r['frames']} frames: kernel {r['kernel_us']:6.1f} us, "
                     f"hand-over to bits {r['end_to_end_us']:6.1f} us (host {r['host_us']:5.1f})")
    bad = [r for r in doc["exactness"] if not r["identical"]]
    lines.append(f"latency kernels == ms: {len(doc['exactness']) - len(bad)}/{len(doc['exactness'])} "
                 f"(kernel, code, setting) identical" + "".join(f"\n  DIFFER {r}" for r in bad))
    text = "\n".join(lines)
    with open(stem + ".txt", "w") as f:
        f.write(text + "\n")
    print(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--per-snr", type=int, default=2500)
    ap.add_argument("--frames", type=int, default=131072)
    ap.add_argument("--latency-only", action="store_true", help="only the latency preset's candidates (v10)")
    args = ap.parse_args(argv)
    if args.latency_only:
        return latency_only(args)
    doc = dict(gpu=cuda.driver().Device(0).name())
    doc["latency"] = latency_rows()
    doc["kernel"] = kernel_rows(args.frames)
    best = max(doc["kernel"], key=lambda k: np.median(doc["kernel"][k]["kernel_gbps_one_launch"]))
    doc["int8_end_to_end"] = int8_rows(args.frames, list(dict.fromkeys(["ms", best])))
    doc["exactness"] = exactness(args.per_snr)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "h200-binary-kernel-v7.json"), "w") as f:
        json.dump(doc, f, indent=1)
    lines = [f"{doc['gpu']}: WiMAX 2304 r1/2, 10 iterations"]
    for k, v in doc["kernel"].items():
        lines.append(f"kernel-only {v['kernel']:24s} regs {v['describe']['registers']:3d} "
                     f"fpb {v['describe']['frames_per_block']} blocks/SM {v['describe']['blocks_per_sm']:2d}: "
                     + " ".join(f"{g:6.2f}" for g in v["kernel_gbps_one_launch"]) + " Gb/s")
    for k, v in doc["int8_end_to_end"].items():
        lines.append(f"int8 end to end {v['kernel']:24s} chunk {v['chunk']:5d}: {v['coded_gbps']:6.2f} Gb/s "
                     f"(kernel on the chunk {v['kernel_gbps_chunk']:6.2f})")
    for r in doc["latency"]:
        lines.append(f"latency {r['kernel']:24s} {r['frames']} frames: {r['end_to_end_us']:6.1f} us "
                     f"(kernel {r['kernel_us']:5.1f}, host {r['host_us']:5.1f})")
    bad = [r for r in doc["exactness"] if not r["identical"]]
    lines.append(f"ep == ms: {len(doc['exactness']) - len(bad)}/{len(doc['exactness'])} (kernel, setting) identical"
                 + "".join(f"\n  DIFFER {r}" for r in bad))
    text = "\n".join(lines)
    with open(os.path.join(args.out, "h200-binary-kernel-v7.txt"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())

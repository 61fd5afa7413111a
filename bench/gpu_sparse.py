"""DVB-S2 and CCSDS decoding on the GPU through ``gl.Decoder`` (issue 15's targets), no early stop.

Rows per code (``api`` names what was called): ``gl.Decoder`` on numpy float32 LLRs (the
headline), on ``dec.pinned_llr`` arrays, on numpy int8 LLRs with binary16 messages; the sparse
kernel's posteriors in shared and in device memory where both fit (issue 15 item 2: "measured
both ways"); the kernel alone (``kernel_coded_gbps``, labelled, from ``kernel_seconds``); our C++
backend on this machine's cores; Sionna's ``LDPCBPDecoder`` (flooding min-sum on the same
parity-check matrix, pinned torch tensor in, the same iterations) as the peer on this GPU.
Coded throughput = n * frames / call time; info = k * frames / call time.

    python3 bench/gpu_sparse.py [--out DIR] [--quick]
"""
import argparse
import json
import os
import sys

import numpy as np

import gpuldpc as gl
from gpu_binary import sionna_rows
from gpu_nr import header, quantized, write_json
from timing import median_time

# (code, iterations, Eb/N0 dB for the FER column)
CODES = (("dvbs2-normal-1/2", 20, 1.3), ("dvbs2-short-1/2", 20, 1.6), ("ccsds-c2", 10, 4.0),
         ("ccsds-ar4ja-1024-1/2", 10, 2.0), ("ccsds-ar4ja-16384-1/2", 10, 1.5))


def received(code, frames, ebn0_db, seed=1):
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    return info, gl.channel.transmit(code, code.encode(info), ebn0_db, rng)


def fer_of(res, info):
    return float((np.asarray(res.info) != info).any(axis=1).mean())


def row(code, frames, seconds, iterations, api, input, fer, **extra):
    r = dict(code=code.name, n=code.n, k=code.k, iterations=iterations, early_stop=False, frames_per_batch=frames,
             api=api, input=input, coded_gbps=code.n * frames / seconds / 1e9,
             info_gbps=code.k * frames / seconds / 1e9, call_ms=seconds * 1e3, fer=fer, **extra)
    print(json.dumps(r), flush=True)
    return r


def lowest(dec):
    """The CudaDecoder behind a gl.Decoder (shaped codes: behind the shaping adapter)."""
    impl = dec._impl
    while not hasattr(impl, "engines"):
        impl = getattr(impl, "decoder", None) or impl._impl
    return impl


def ours(code, iterations, ebn0, reps):
    settings = dict(algorithm="nms", schedule="layered", max_iterations=iterations, early_stop=False)
    rows = []
    for precision, llr_dtype, posteriors in (("float32", "float32", "auto"), ("float16", "float32", "auto"),
                                             ("float16", "int8", "auto"), ("float32", "float32", "device"),
                                             ("float16", "float32", "device")):
        options = dict(precision=precision, llr_dtype=llr_dtype)
        try:
            dec = gl.Decoder(code, backend="cuda", devices=[0], posteriors=posteriors, **options, **settings)
        except (gl.BackendUnavailable, ValueError) as exc:
            rows.append(dict(code=code.name, api="gl.Decoder", note=f"{options}, posteriors={posteriors}: {exc}"))
            continue
        low = lowest(dec)
        if posteriors == "device" and not low.sparse:
            dec.close()
            continue                                  # QC kernels: no placement to choose
        batch = dec.preferred_batch("throughput")
        info, llr = received(code, batch, ebn0)
        if llr_dtype == "int8":
            llr, scale = quantized(llr)
            dec.close()
            dec = gl.Decoder(code, backend="cuda", devices=[0], llr_scale=scale, posteriors=posteriors, **options,
                             **settings)
            low = lowest(dec)
        placement = low.engines[0].plan.posteriors if low.sparse else "shared (QC kernel)"
        extra = dict(backend="cuda", precision=precision, llr_dtype=llr_dtype, kernel=low.kernel,
                     posteriors=placement)
        fer = fer_of(dec.decode(llr), info)
        if posteriors == "auto":
            rows.append(row(code, batch, median_time(lambda: dec.decode(llr), reps), iterations, "gl.Decoder",
                            f"numpy {llr_dtype}", fer, **extra))
            pinned = dec.pinned_llr(batch)
            pinned[:] = llr
            rows.append(row(code, batch, median_time(lambda: dec.decode(pinned), reps), iterations, "gl.Decoder",
                            f"pinned {llr_dtype}", fer, **extra))
        chunk = low.engines[0].chunk
        t_kernel = low.kernel_seconds(frames=chunk)
        rows.append(row(code, chunk, t_kernel, iterations, "CudaDecoder kernel only (labelled, not the headline)",
                        "device", fer, **extra))
        dec.close()
    return rows


def cpu_row(code, iterations, ebn0):
    settings = dict(algorithm="nms", schedule="layered", max_iterations=iterations, early_stop=False)
    cpu = gl.Decoder(code, backend="cpu", **settings)
    frames = min(256, cpu.preferred_batch("throughput"))
    info, llr = received(code, frames, ebn0)
    fer = fer_of(cpu.decode(llr), info)
    return row(code, frames, median_time(lambda: cpu.decode(llr), 2, warmup=1), iterations, "gl.Decoder", "numpy",
               fer, backend="cpu", precision="float32", threads=os.cpu_count())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--quick", action="store_true", help="3 timed calls a row instead of 5, no Sionna")
    args = parser.parse_args(argv)
    reps = 3 if args.quick else 5
    rows, notes = [], {}
    for name, iterations, ebn0 in CODES:
        code = gl.codes.get(name)
        rows += ours(code, iterations, ebn0, reps)
        try:
            rows.append(cpu_row(code, iterations, ebn0))
        except Exception as exc:  # a failing row is a note, not the end of the run
            notes[f"{name} cpu"] = f"{type(exc).__name__}: {exc}"
        if not args.quick and not hasattr(code, "decoded"):
            try:
                peer, why = sionna_rows(code, 512 if code.n > 20000 else 2048, iterations)
            except Exception as exc:
                peer, why = [], f"sionna failed: {type(exc).__name__}: {exc}"
            rows += [dict(r, code=name) for r in peer]
            if why:
                notes[f"{name} sionna"] = why
    doc = header(rows=rows, notes=notes)
    gpu, drv = doc["gpu"], doc["driver"]
    stem = write_json(doc, args.out, "sparse")
    lines = [f"{gpu}  driver {drv}  commit {doc['commit']}  {doc['date']}  (no early stop)",
             f"{'api':54s} {'input':14s} {'code':24s} {'it':>3s} {'backend':7s} {'prec':7s} {'post':8s} "
             f"{'frames':>7s} {'coded Gb/s':>10s} {'info Gb/s':>9s} {'FER':>7s}"]
    for r in rows:
        if "note" in r:
            lines.append(f"note {r['code']}: {r['note']}")
            continue
        lines.append(f"{r['api'][:54]:54s} {r.get('input', '-'):14s} {r['code']:24s} {r.get('iterations', 0):3d} "
                     f"{r.get('backend', 'sionna'):7s} {r.get('precision', '-'):7s} "
                     f"{str(r.get('posteriors', '-'))[:8]:8s} {r['frames_per_batch' if 'frames_per_batch' in r else 'frames']:7d} "
                     f"{r.get('coded_gbps', r.get('gbps', 0.0)):10.3f} {r.get('info_gbps', 0.0):9.3f} "
                     f"{r.get('fer', float('nan')):7.4f}" + (f"  {r['kernel']}" if r.get("kernel") else ""))
    lines += [f"note {k}: {v}" for k, v in notes.items()]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

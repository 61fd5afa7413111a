"""Two or more builds of the kernels side by side on one GPU (METHOD.md's A/B): alternated
processes, each loading its fatbins from its own ``GPULDPC_KERNEL_DIR``, the same Python.

    bash tools/build_kernels.sh .gpukernels-base      # (at the old commit) the baseline's fatbins
    python bench/kernel_ab.py --variant B=.gpukernels-base --variant P=.gpukernels --rounds 2 \\
        --out $OUT --name h200-binary16-alu-ab

A variant may also set environment variables after its folder, ``NAME=FOLDER@VAR=VALUE@...``
(e.g. ``model=.gpukernels@GPULDPC_AUTOTUNE=0``: the same build without measured launch shapes);
``@PYTHONPATH=DIR`` puts DIR in front of the path instead (another tree's ``python/``, where the
change is in the Python too: ``base=.gk-base@PYTHONPATH=/tmp/base/python``).

Each process measures, binary16 messages (``precision="float16"``), layered NMS, 10 it., no
early stop, WiMAX 2304 r1/2 and WiFi 1944 r1/2:

* ``kernel only``: one launch of ``--frames`` resident frames between CUDA events
  (``CudaDecoder.kernel_seconds``: the lower-level figure, labelled so);
* ``gl.Decoder``: int4 and int8 LLRs with packed decisions from a ``dec.pinned_llr`` array
  (what a user gets, issue 16's int4 row), the chunk's kernel beside it;
* a digest of the decisions, iteration counts and flags of 4096 frames at 1.5 and 2 dB for
  NMS and OMS, layered and flooding, early stop on: the builds must agree bit for bit (the
  GPU tests compare each with the reference decoder).

``--sparse`` measures the sparse kernel instead (kernels/sparse_decode.cu, docs/gpu.md "Sparse
kernel"): ``gl.Decoder`` from numpy (the preferred batch; no early stop; 10 it. for C2, 20 for
DVB-S2) and one chunk's kernel, for CCSDS C2 (int8 and float32 LLRs with binary16 messages,
float32), DVB-S2 short 1/2 (int8 + binary16, float32), short 3/5 and normal 1/2 (int8 +
binary16); each row's digest is that of its first 2048 frames' information bits and iterations.

``--nr K,E`` (repeatable) adds the 5G NR block ``gl.codes.nr(K, E)``: issue 14's row
(``gl.Decoder``, int8 E LLRs from numpy, binary16 messages, packed decisions, 5 it., no early
stop; info and transmitted Gb/s, the chunk's kernel beside it) and a digest of 512 blocks at
rate-dependent Eb/N0, NMS and OMS, layered, early stop on.

Writes ``<name>.json`` (every row names its ``api`` and ``variant``) and ``<name>.txt``.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import gpuldpc as gl  # noqa: E402
from gpu_binary import kernel_gbps, noisy, one_launch, quantised  # noqa: E402
from gpu_nr import quantized, received  # noqa: E402
from gpu_sparse import lowest  # noqa: E402
from timing import median_time, source_commit  # noqa: E402

CODES = ("wimax-2304-1/2", "wifi-1944-1/2")


def digest(code):
    """sha256 over decisions, iterations and flags of the settings in the module docstring."""
    h = hashlib.sha256()
    rng = np.random.default_rng(11)
    cw = code.encode(rng.integers(0, 2, (4096, code.k), dtype=np.uint8))
    llr = np.concatenate([gl.channel.transmit(code, cw[:2048], 1.5, rng), gl.channel.transmit(code, cw[2048:], 2.0, rng)])
    for algorithm in ("nms", "oms"):
        for schedule in ("layered", "flooding"):
            dec = gl.Decoder(code, backend="cuda", precision="float16", algorithm=algorithm, schedule=schedule,
                             max_iterations=10, early_stop=True, devices=[0])
            res = dec.decode(llr)
            for a in (res.bits, res.iterations, res.valid):
                h.update(np.ascontiguousarray(a).tobytes())
            dec.close()
    return h.hexdigest()[:16]


def nr_rows(k, e, reps):
    """Issue 14's row of ``gl.codes.nr(k, e)`` (module docstring) and the block's digest."""
    code = gl.codes.nr(k, e)
    info, llr = received(code, 2048, 3.0 if k / e < 0.5 else 4.5)   # tiled to the batch
    q, scale = quantized(llr)
    dec = gl.Decoder(code, backend="cuda", max_iterations=5, early_stop=False, devices=[0], precision="float16",
                     llr_dtype="int8", llr_scale=scale, packed=True)
    batch = dec.preferred_batch("throughput")
    q, info = np.resize(q, (batch, q.shape[1])), np.resize(info, (batch, info.shape[1]))
    fer = float((np.unpackbits(dec.decode(q).info, axis=1, count=code.k) != info).any(axis=1).mean())
    t = median_time(lambda: dec.decode(q), reps)
    low = lowest(dec)
    chunk = low.engines[0].chunk
    # kernel only in E bits a block (gpu_binary.kernel_gbps counts low.code's n: the pruned graph's)
    row = dict(code=code.name, api="gl.Decoder", input="numpy int8 E LLRs, packed bits", frames=batch, iterations=5,
               coded_gbps=code.n * batch / t / 1e9, info_gbps=code.k * batch / t / 1e9, fer=fer, kernel=low.kernel,
               kernel_gbps=code.n * chunk / low.kernel_seconds(frames=chunk) / 1e9)
    dec.close()
    h = hashlib.sha256()
    for algorithm in ("nms", "oms"):
        d = gl.Decoder(code, backend="cuda", precision="float16", algorithm=algorithm, max_iterations=10,
                       early_stop=True, devices=[0])
        res = d.decode(llr[:512])
        for a in (res.info, res.iterations, res.valid):
            h.update(np.ascontiguousarray(a).tobytes())
        d.close()
    return row, h.hexdigest()[:16]


# --sparse: (code, Eb/N0 dB, iterations, messages, LLR dtype, packed decisions)
SPARSE_ROWS = (("ccsds-c2", 3.6, 10, "float16", "int8", False), ("ccsds-c2", 3.6, 10, "float16", "int8", True),
               ("ccsds-c2", 3.6, 10, "float16", "float32", False), ("ccsds-c2", 3.6, 10, "float32", "float32", False),
               ("dvbs2-short-1/2", 2.4, 20, "float16", "int8", False),
               ("dvbs2-short-1/2", 2.4, 20, "float32", "float32", False),
               ("dvbs2-normal-1/2", 1.0, 20, "float16", "int8", False),
               ("dvbs2-short-3/5", 2.8, 20, "float16", "int8", False))


def sparse_rows(reps):
    """The ``--sparse`` rows (module docstring) and their digests."""
    rows, digests = [], {}
    for name, ebn0, iterations, precision, llr_dtype, packed in SPARSE_ROWS:
        code = gl.codes.get(name)
        _, llr = noisy(code, 2048, ebn0=ebn0)
        dec = gl.Decoder(code, backend="cuda", max_iterations=iterations, early_stop=False, devices=[0],
                         precision=precision, llr_dtype=llr_dtype, llr_scale=0.25 if llr_dtype == "int8" else 1.0,
                         packed=packed)
        batch = dec.preferred_batch("throughput")
        x = np.resize(quantised(llr, "int8", 0.25) if llr_dtype == "int8" else llr, (batch, code.n))
        res = dec.decode(x)
        t = median_time(lambda: dec.decode(x), reps)
        low = lowest(dec)
        rows.append(dict(code=name, api="gl.Decoder", input=f"numpy {llr_dtype}, {precision} messages"
                         + (", packed bits" if packed else ""), frames=batch,
                         iterations=iterations, coded_gbps=code.n * batch / t / 1e9, kernel=low.kernel,
                         kernel_gbps=kernel_gbps(low, low.engines[0].chunk)))
        digests[f"{name} {precision} {llr_dtype}{' packed' if packed else ''}"] = hashlib.sha256(
            np.ascontiguousarray(res.info[:2048]).tobytes() + res.iterations[:2048].tobytes()).hexdigest()[:16]
        dec.close()
    return rows, digests


def child(frames, reps, nr=(), sparse=False):
    if sparse:
        rows, digests = sparse_rows(reps)
        return dict(rows=rows, digests=digests)
    rows, digests = [], {}
    for name in CODES:
        code = gl.codes.get(name)
        t, fer = one_launch(code, frames, precision="float16")
        rows.append(dict(code=name, api="CudaDecoder.kernel_seconds (kernel only, one launch)", input="resident",
                         frames=frames, coded_gbps=code.n * frames / t / 1e9, fer=fer))
        for llr_dtype, scale in (("int4", 0.75), ("int8", 0.25)):
            dec = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0],
                             precision="float16", llr_dtype=llr_dtype, llr_scale=scale, packed=True)
            batch = dec.preferred_batch("throughput")
            cw, llr = noisy(code, batch)
            src = dec.pinned_llr(batch)
            src[:] = quantised(llr, llr_dtype, scale)
            fer = float((np.unpackbits(dec.decode(src).bits, axis=1, count=code.n) != cw).any(axis=1).mean())
            t = median_time(lambda: dec.decode(src), reps)
            low = dec._impl.decoder
            plan = low.engines[0].plan
            rows.append(dict(code=name, api="gl.Decoder", input=f"pinned {llr_dtype}, packed bits", frames=batch,
                             coded_gbps=code.n * batch / t / 1e9, fer=fer,
                             kernel_gbps=kernel_gbps(low, low.engines[0].chunk),
                             frames_per_block=plan.shape.frames_per_block,
                             shapes_timed={str(f): code.n * r / 1e9 for f, r in plan.tuning.items()} if plan.tuning
                             else None))
            dec.close()
        digests[name] = digest(code)
    for k, e in nr:
        row, digests[f"nr-{k}-{e}"] = nr_rows(k, e, reps)
        rows.append(row)
    return dict(rows=rows, digests=digests)


def gpu_facts():
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().split(", ")
    return dict(gpu=smi[0], driver=smi[1] if len(smi) > 1 else None)


def format_table(doc):
    lines = [f"# {doc['gpu']} (driver {doc['driver']}), commit {doc['commit']}, {doc['date']}; "
             f"variants {doc['variants']}; processes in the order below",
             "# binary16 messages (the sparse rows: as named), layered NMS, 10 it. (5G NR: 5 it.; DVB-S2: 20), "
             "no early stop, coded Gb/s (5G NR: info too)"]
    for p in doc["processes"]:
        lines.append("")
        for r in p["rows"]:
            kern = f"  (kernel only {r['kernel_gbps']:.1f})" if r.get("kernel_gbps") else ""
            if r.get("info_gbps"):
                kern += f"  info {r['info_gbps']:.2f} Gb/s"
            if r.get("kernel") and r["code"] not in CODES:
                kern += f"  {r['kernel']}"
            if r.get("frames_per_block"):
                kern += f"  {r['frames_per_block']} frames a block"
            if r.get("shapes_timed"):
                kern += " (timed: " + ", ".join(f"{f}: {g:.1f}" for f, g in r["shapes_timed"].items()) + " Gb/s)"
            lines.append(f"{p['variant']}{p['round']}  {r['code']:<15} {r['api']:<52} {r['input']:<26} "
                         f"{r['coded_gbps']:6.2f} Gb/s{kern}")
        lines.append(f"{p['variant']}{p['round']}  digests {p['digests']}")
    lines.append("")
    lines.append(f"decisions, iterations, flags identical across variants: {doc['identical']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=kernel folder[@VAR=VALUE...] (two or more)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--frames", type=int, default=131072, help="frames of the kernel-only launch")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--name", default="kernel-ab")
    ap.add_argument("--nr", action="append", default=[], metavar="K,E", help="a 5G NR block gl.codes.nr(K, E)")
    ap.add_argument("--sparse", action="store_true", help="the sparse kernel's rows (DVB-S2, C2) instead")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.frames, args.reps, [tuple(int(v) for v in b.split(",")) for b in args.nr],
                               args.sparse)))
        return 0
    variants = dict(v.split("=", 1) for v in args.variant)
    if len(variants) < 2:
        ap.error("give two or more --variant NAME=folder")
    processes = []
    for rnd in range(1, args.rounds + 1):
        for name, spec in variants.items():
            folder, *settings = spec.split("@")
            env = dict(os.environ, GPULDPC_KERNEL_DIR=os.path.abspath(folder))
            for var, value in (v.split("=", 1) for v in settings):
                env[var] = os.pathsep.join(filter(None, (value, env.get(var)))) if var == "PYTHONPATH" else value
            out = subprocess.run([sys.executable, __file__, "--child", "--frames", str(args.frames),
                                  "--reps", str(args.reps)] + [f"--nr={b}" for b in args.nr]
                                 + (["--sparse"] if args.sparse else []),
                                 env=env, capture_output=True, text=True)
            if out.returncode:
                sys.stderr.write(out.stderr)
                return out.returncode
            processes.append(dict(variant=name, round=rnd, **json.loads(out.stdout.splitlines()[-1])))
            print(f"{name}{rnd} done", flush=True)
    doc = dict(**gpu_facts(), commit=source_commit(), date=datetime.datetime.now().isoformat(timespec="seconds"),
               variants=variants, processes=processes,
               identical=len({json.dumps(p["digests"], sort_keys=True) for p in processes}) == 1)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{args.name}.json"), "w") as f:
        json.dump(doc, f, indent=1)
    text = format_table(doc)
    with open(os.path.join(args.out, f"{args.name}.txt"), "w") as f:
        f.write(text)
    print(text)
    return 0 if doc["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())

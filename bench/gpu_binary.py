"""Binary QC-LDPC decoding on the GPU: paper 004 Tables II and III on this GPU, plus Sionna.

Run on the GPU machine (see docs/gpu.md)::

    python bench/gpu_binary.py --out bench/results            # one GPU
    python bench/gpu_binary.py --out bench/results --multi    # every visible GPU

Measures (DESIGN.md "Measuring"; every row names its ``api`` and ``input``):
end-to-end throughput through ``gl.Decoder`` from a host LLR array to host hard
decisions (``dec.pinned_llr`` page-locked arrays, so the copies are the PCIe transfers;
a numpy-input row too), kernel-only throughput (CUDA events around one launch on
resident data, ``api="kernel"``), Table III's sweep of streams x frames per block x
frames per launch (the lower-level ``CudaDecoder``, labelled), and Sionna's
LDPCBPDecoder (min-sum, same code, same iterations) on the same GPU.  The latency
rows live in bench/gpu_front_door.py.  ``precision="float16"`` rows (the binary16
kernels, two frames a thread): kernel only at 5, 10, 15 iterations (one launch of
``--frames`` frames, beside the float32 kernel's), end to end from float32 and from
int8 input.  Writes ``<gpu>-binary.json`` (rows as
DESIGN.md lists) and prints the table (also ``<gpu>-binary.txt``).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys

import numpy as np

import gpuldpc as gl
from timing import median_time, source_commit  # noqa: E402  (bench/timing.py)
from gpuldpc import cuda

EBN0_DB = 2.0


def noisy(code, frames, seed=1, ebn0=EBN0_DB):
    """Random codewords and their float32 LLRs (BPSK, AWGN); 4096 distinct frames tiled."""
    rng = np.random.default_rng(seed)
    distinct = min(frames, 4096)
    cw = code.encode(rng.integers(0, 2, (distinct, code.k), dtype=np.uint8))
    llr = gl.channel.transmit(code, cw, ebn0, rng)
    reps = -(-frames // distinct)
    return np.tile(cw, (reps, 1))[:frames], np.tile(llr, (reps, 1))[:frames]


def quantised(llr, llr_dtype, scale):
    """float32 LLRs as the host array of ``llr_dtype`` "int8" (round(llr / scale) in -127..127) or
    "int4" (:func:`gpuldpc.pack_int4`), with ``llr_scale=scale``."""
    if llr_dtype == "int4":
        return gl.pack_int4(llr, scale)
    return np.clip(np.round(llr / np.float32(scale)), -127, 127).astype(np.int8)


def row(system, code, frames, seconds, *, api, input, algorithm="nms", schedule="layered", iterations=10,
        early_stop=False, llr_dtype="float32", streams=None, kernel_gbps=None, fer=None, **extra):
    r = dict(system=system, code=code.name, algorithm=algorithm, schedule=schedule,
                iterations=iterations, early_stop=early_stop, llr_dtype=llr_dtype,
                frames_per_batch=frames, streams=streams, api=api, input=input,
                coded_gbps=code.n * frames / seconds / 1e9, info_gbps=code.k * frames / seconds / 1e9,
                latency_us=seconds * 1e6, kernel_gbps=kernel_gbps, fer=fer, ebn0_db=EBN0_DB, **extra)
    print(json.dumps(r), flush=True)
    return r


def kernel_gbps(dec, frames, reps=5):
    """Coded Gbps of one launch over resident data (events around the kernel only): the
    input of the decoder's last call, ``frames`` frames of it."""
    return dec.code.n * frames / dec.kernel_seconds(frames=frames, repeats=reps) / 1e9


def pcie(dec):
    """H2D and D2H GB/s of one 256 MiB page-locked copy (the end-to-end floor)."""
    drv = cuda.driver()
    eng = dec.engines[0]
    with eng.ctx.active():
        host = cuda.pinned_empty(64 << 20, np.float32, eng.ctx)
        host[:] = 1.0
        dev = drv.mem_alloc(host.nbytes)
        out = {}
        for name, fn in (("h2d", lambda: drv.memcpy_htod(dev, host)), ("d2h", lambda: drv.memcpy_dtoh(host, dev))):
            out[name] = host.nbytes / median_time(fn, 5) / 1e9
        dev.free()
    return out


def one_launch(code, frames, iterations=10, precision="float32"):
    """Seconds of one kernel launch of ``frames`` resident frames (CUDA events) and the FER."""
    dec = cuda.CudaDecoder(code, max_iterations=iterations, early_stop=False, devices=[0], streams=1,
                           chunk_frames=frames, precision=precision)
    cw, llr = noisy(code, frames)
    fer = float((dec.decode(llr).bits != cw).any(axis=1).mean())
    t = dec.kernel_seconds(frames=frames)
    dec.close()
    return t, fer


def end_to_end(code, frames, iterations=10, llr_dtype="float32", pinned=True, devices="all", **opts):
    """``gl.Decoder`` on the cuda backend from a ``pinned_llr`` array (or a numpy array):
    (the CudaDecoder below it, seconds a batch, FER)."""
    front = gl.Decoder(code, backend="cuda", max_iterations=iterations, early_stop=False, devices=devices,
                       llr_dtype=llr_dtype, llr_scale=0.25 if llr_dtype == "int8" else 1.0, **opts)
    cw, llr = noisy(code, frames)
    if llr_dtype == "int8":
        llr = quantised(llr, "int8", 0.25)
    elif llr_dtype == "float16":
        llr = llr.astype(np.float16)
    src = front.pinned_llr(frames) if pinned else llr
    if pinned:
        src[:] = llr
    res = front.decode(src)
    bits = np.unpackbits(res.bits, axis=1, count=code.n) if opts.get("packed") else res.bits
    fer = float((bits != cw).any(axis=1).mean())
    t = median_time(lambda: front.decode(src), reps=5)
    return front._impl.decoder, t, fer


def sionna_rows(code, frames, iterations):
    try:
        import torch
        from sionna.phy.fec.ldpc import LDPCBPDecoder
    except Exception as exc:  # record why the peer could not run
        return [], f"sionna not importable: {type(exc).__name__}: {exc}"
    cw, llr = noisy(code, frames)
    dec = LDPCBPDecoder(code.H, cn_update="minsum", num_iter=iterations, hard_out=True, device="cuda:0")
    host = torch.from_numpy(-llr).pin_memory()        # sionna's logits are ln P(1)/P(0)

    def run():
        bits = dec(host.to("cuda", non_blocking=True)).to("cpu")
        torch.cuda.synchronize()
        return bits

    bits = run().numpy().astype(np.uint8)
    fer = float((bits != cw).any(axis=1).mean())
    t = median_time(run, reps=3)
    dev_llr = host.to("cuda")
    torch.cuda.synchronize()

    def kernel_only():
        dec(dev_llr)
        torch.cuda.synchronize()

    tk = median_time(kernel_only, reps=3)
    return [row("sionna-LDPCBPDecoder", code, frames, t, api="sionna LDPCBPDecoder", input="pinned torch tensor",
                schedule="flooding", iterations=iterations, streams=1, kernel_gbps=code.n * frames / tk / 1e9,
                fer=fer)], None


def cpu_rows(code, frames, iterations):
    """Our C++ backend on this machine's cores, same code and iterations (the issue's CPU peer)."""
    rows = []
    cw, llr = noisy(code, frames)
    for precision in ("int8", "float32"):
        try:
            dec = gl.Decoder(code, backend="cpu", precision=precision, max_iterations=iterations,
                             early_stop=False)
        except gl.BackendUnavailable as exc:
            return rows, f"cpu backend unavailable: {exc}"
        bits = dec.decode(llr).bits
        t = median_time(lambda: dec.decode(llr), reps=3)
        rows.append(row("gpuldpc-cpu", code, frames, t, api="gl.Decoder", input="numpy", iterations=iterations,
                        streams=None,
                        fer=float((bits != cw).any(axis=1).mean()), precision=precision,
                        threads=os.cpu_count()))
    return rows, None


def table3(code, goals=(1, 2, 4, 8, 12)):
    """Paper 004 Table III: lowest latency reaching each throughput goal (10 iterations)."""
    cw, llr = noisy(code, 16 * 2112)
    points = []
    for streams in (1, 2, 4, 8, 16):
        for fpb in (1, 2):
            for chunk in (fpb, 6, 33, 132, 528, 2112):
                if chunk % fpb or streams * chunk > llr.shape[0]:
                    continue
                dec = cuda.CudaDecoder(code, max_iterations=10, early_stop=False, devices=[0],
                                       streams=streams, chunk_frames=chunk, frames_per_block=fpb)
                batch = streams * chunk
                src = dec.pinned_llr(batch)
                src[:] = llr[:batch]
                out = dec.pinned_bits(batch)
                t = median_time(lambda: dec.decode(src, out=out), reps=7)
                points.append(dict(streams=streams, frames_per_block=fpb, chunk_frames=chunk,
                                   frames=batch, latency_us=t * 1e6, coded_gbps=code.n * batch / t / 1e9))
                dec.close()
    best = []
    for g in goals:
        ok = [p for p in points if p["coded_gbps"] >= g]
        if ok:
            best.append(dict(goal_gbps=g, **min(ok, key=lambda p: p["latency_us"])))
    return points, best


def format_table(doc) -> str:
    """The printed table of a result document (the .txt beside the .json)."""
    lines = [f"{doc['gpu']} x{doc['gpus']}  driver {doc['driver']}  CUDA {doc['cuda']}  {doc['date']}",
             f"{'system':22s} {'api':21s} {'input':7s} {'code':15s} {'alg':4s} {'sched':8s} {'it':>3s} "
             f"{'dtype':8s} {'frames':>7s} "
             f"{'str':>3s} {'coded Gb/s':>10s} {'info Gb/s':>9s} {'lat us':>9s} {'kernel':>7s} {'FER':>6s}"]
    for r in doc["rows"]:
        k = f"{r['kernel_gbps']:7.2f}" if r["kernel_gbps"] else "      -"
        fer = f"{r['fer']:6.3f}" if r["fer"] is not None else "     -"
        system = r["system"] + (f" {r['precision']}" if "precision" in r else "")
        lines.append(f"{system:22s} {r['api']:21s} {r['input'][:7]:7s} {r['code']:15s} {r['algorithm']:4s} {r['schedule']:8s} {r['iterations']:3d} "
                     f"{r['llr_dtype']:8s} {r['frames_per_batch']:7d} {r['streams'] or 0:3d} {r['coded_gbps']:10.3f} "
                     f"{r['info_gbps']:9.3f} {r['latency_us']:9.1f} {k} {fer}")
    for b in doc["notes"].get("table3", []):
        lines.append(f"Table III goal {b['goal_gbps']:>3} Gb/s: streams {b['streams']:2d} fpb {b['frames_per_block']} "
                     f"chunk {b['chunk_frames']:5d} -> {b['coded_gbps']:6.2f} Gb/s, {b['latency_us']:9.1f} us")
    for key in ("pcie_gbytes_per_s", "kernel_gbps_one_launch", "sionna", "cpu"):
        if key in doc["notes"]:
            lines.append(f"{key}: {doc['notes'][key]}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--multi", action="store_true", help="every visible GPU (aggregate rows)")
    ap.add_argument("--frames", type=int, default=131072)
    ap.add_argument("--quick", action="store_true", help="skip Table III and Sionna")
    args = ap.parse_args(argv)
    drv = cuda.driver()
    rows, notes = [], {}
    wimax, wifi = gl.codes.get("wimax-2304-1/2"), gl.codes.get("wifi-1944-1/2")
    ndev = drv.Device.count()
    if args.multi:
        one, t1, fer = end_to_end(wimax, args.frames, devices=[0])
        rows.append(row("gpuldpc", wimax, args.frames, t1, api="gl.Decoder", input="pinned", streams=one.engines[0].streams, fer=fer,
                        devices=1))
        every, tn, fer = end_to_end(wimax, args.frames * ndev, devices="all")
        rows.append(row("gpuldpc", wimax, args.frames * ndev, tn, api="gl.Decoder", input="pinned", streams=every.engines[0].streams, fer=fer,
                        devices=ndev, scaling=(args.frames * ndev / tn) / (args.frames / t1) / ndev))
        notes["describe"] = every.describe()
    else:
        for code in (wimax, wifi):
            for it in (5, 10, 15):
                dec, t, fer = end_to_end(code, args.frames, iterations=it, devices=[0])
                k = kernel_gbps(dec, dec.engines[0].chunk)
                rows.append(row("gpuldpc", code, args.frames, t, api="gl.Decoder", input="pinned", iterations=it, streams=dec.engines[0].streams,
                                kernel_gbps=k, fer=fer, table="II"))
                if code is wimax and it == 10:
                    notes["pcie_gbytes_per_s"] = pcie(dec)
                    notes["describe"] = dec.describe()
                    big = cuda.CudaDecoder(code, early_stop=False, devices=[0], streams=1,
                                           chunk_frames=args.frames)
                    big.decode(noisy(code, args.frames)[1])
                    notes["kernel_gbps_one_launch"] = kernel_gbps(big, args.frames)
                dec.close()
        for dtype in ("int8", "float16"):
            dec, t, fer = end_to_end(wimax, args.frames, llr_dtype=dtype, devices=[0])
            rows.append(row("gpuldpc", wimax, args.frames, t, api="gl.Decoder", input="pinned", llr_dtype=dtype,
                            streams=dec.engines[0].streams, kernel_gbps=kernel_gbps(dec, dec.engines[0].chunk),
                            fer=fer))
        # float16 message arithmetic: kernel only (one launch, with the float32 kernel beside
        # it), then end to end from float32 and int8 input
        for it in (5, 10, 15):
            for precision in ("float32", "float16"):
                t, fer = one_launch(wimax, args.frames, it, precision)
                rows.append(row("gpuldpc kernel", wimax, args.frames, t, api="kernel", input="device", iterations=it,
                                kernel_gbps=wimax.n * args.frames / t / 1e9, fer=fer, precision=precision,
                                measure="one launch, resident data"))
        for dtype in ("float32", "int8"):
            dec, t, fer = end_to_end(wimax, args.frames, llr_dtype=dtype, devices=[0], precision="float16")
            rows.append(row("gpuldpc", wimax, args.frames, t, api="gl.Decoder", input="pinned", llr_dtype=dtype,
                            streams=dec.engines[0].streams, kernel_gbps=kernel_gbps(dec, dec.engines[0].chunk),
                            fer=fer, precision="float16"))
        dec, t, fer = end_to_end(wimax, args.frames, pinned=False, devices=[0])
        rows.append(row("gpuldpc", wimax, args.frames, t, api="gl.Decoder", input="numpy",
                        streams=dec.engines[0].streams, fer=fer))
        dec, t, fer = end_to_end(wimax, args.frames, devices=[0], packed=True)
        rows.append(row("gpuldpc", wimax, args.frames, t, api="gl.Decoder", input="pinned", streams=dec.engines[0].streams, fer=fer,
                        output="packed bits"))
        for sched in ("flooding",):
            dec, t, fer = end_to_end(wimax, args.frames, devices=[0], schedule=sched)
            rows.append(row("gpuldpc", wimax, args.frames, t, api="gl.Decoder", input="pinned", schedule=sched,
                            streams=dec.engines[0].streams,
                            kernel_gbps=kernel_gbps(dec, dec.engines[0].chunk), fer=fer))
        if not args.quick:
            for code in (wimax, wifi):
                try:
                    srows, why = sionna_rows(code, 8192, 10)
                except Exception as exc:  # the peer failed: record why, keep our rows
                    srows, why = [], f"sionna failed: {type(exc).__name__}: {exc}"
                    print(why, flush=True)
                rows += srows
                if why:
                    notes["sionna"] = why
                crows, why = cpu_rows(code, 16384, 10)
                rows += crows
                if why:
                    notes["cpu"] = why
            points, best = table3(wimax)
            notes["table3_points"] = points
            notes["table3"] = best
    commit = source_commit() or ""
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.split()
    dev0 = drv.Device(0)
    doc = dict(gpu=dev0.name(), gpus=ndev if args.multi else 1,
               driver=smi[0] if smi else f"CUDA driver API {drv.get_driver_version()}",
               cuda=".".join(map(str, drv.get_version())),
               commit=commit if re.fullmatch(r"[0-9a-f]{7,40}", commit) else None,
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               rows=rows, notes=notes)
    os.makedirs(args.out, exist_ok=True)
    stem = "h200" if "H200" in dev0.name() else dev0.name().replace(" ", "_").lower()
    stem += "-binary" + ("-multi" if args.multi else "")
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
    text = format_table(doc)
    with open(os.path.join(args.out, stem + ".txt"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())

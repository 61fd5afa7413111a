"""What a user gets: ``gl.Decoder(...).decode()`` on the GPU, next to the lower-level object,
in one run (issue 13's figures).

    python bench/gpu_front_door.py --out $OUT [--quick]

Rows (DESIGN.md "Measuring"; every row names its ``api`` and ``input``):

* throughput, WiMAX 2304 r1/2 and WiFi 1944 r1/2, layered NMS, 10 iterations, no early
  stop, ``batch = dec.preferred_batch("throughput")``: ``gl.Decoder.decode`` from a
  ``dec.pinned_llr`` array ("pinned"), from the same numpy array handed in again
  ("numpy, same array"), from a fresh numpy array every call ("numpy, fresh array");
  int8 and packed int4 LLRs (``llr_dtype="int4"``, ``gl.pack_int4``, one after the other in the
  same run) with ``precision="float16"`` from page-locked and numpy arrays; the
  low-level ``CudaDecoder`` (pinned in, ``out=`` pinned bits) beside them, labelled;
* submit/result pipelining: two tickets in flight from numpy arrays;
* the machine's multi-threaded host memcpy bandwidth (the bound of "fresh array");
* ``on_bad_llr="erase"``: clean input and input with 1 % bad frames, beside "raise"
  on clean input (issue 19: the in-kernel check costs <= 3 %);
* latency, ``preset="latency"``: one and six WiMAX 2304 codewords from numpy arrays
  (median and p99 over many calls), one GF(32) (620,310) frame from numpy bit LLRs (the
  resident one-frame kernel; beside it the launched one, ``resident=False``, and the resident
  kernel's post and answer alone: the GPU's part);
* LLRs already on the GPU (issue 16: >= 45 Gb/s with float16 messages): ``gl.Decoder.decode``
  of a PyTorch CUDA tensor (input "device"), WiMAX 2304 r1/2, float32 LLRs with float32 and
  float16 messages, int8 LLRs with float16 messages, results on the host and (``out_device``)
  on the GPU (``--only device``; skipped without PyTorch);
* GF(q) throughput from numpy bit LLRs through ``gl.Decoder`` and through
  ``NbCudaDecoder`` with pinned input (the lower-level figure, same frames).

Writes ``<gpu>-front-door.json`` and ``.txt`` (the printed table).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import time
import traceback
import types

import numpy as np

import gpuldpc as gl
from gpuldpc import cuda, row_copy
from gpu_binary import quantised  # noqa: E402
from timing import latency as timed_latency  # noqa: E402  (bench/timing.py)
from timing import median_time, source_commit  # noqa: E402

EBN0_DB = 2.0


def noisy(code, frames, seed=1, ebn0=EBN0_DB):
    """Codewords and float32 LLRs (BPSK, AWGN); 2048 distinct frames tiled."""
    rng = np.random.default_rng(seed)
    distinct = min(frames, 2048)
    cw = code.encode(rng.integers(0, 2, (distinct, code.k), dtype=np.uint8))
    llr = gl.channel.transmit(code, cw, ebn0, rng)
    reps = -(-frames // distinct)
    return np.tile(cw, (reps, 1))[:frames], np.tile(llr, (reps, 1))[:frames]


def row(code, frames, seconds, api, input, *, algorithm="nms", schedule="layered", iterations=10,
        llr_dtype="float32", fer=None, p99=None, **extra):
    r = dict(system="gpuldpc", code=code.name, algorithm=algorithm, schedule=schedule, iterations=iterations,
             early_stop=False, llr_dtype=llr_dtype, frames_per_batch=frames, api=api, input=input,
             coded_gbps=code.n * code.bits_per_symbol * frames / seconds / 1e9,
             info_gbps=code.k * code.bits_per_symbol * frames / seconds / 1e9,
             latency_us=seconds * 1e6, latency_p99_us=None if p99 is None else p99 * 1e6,
             kernel_gbps=None, fer=fer, ebn0_db=EBN0_DB, **extra)
    print(json.dumps(r), flush=True)
    return r


def memcpy_gbytes(nbytes=512 << 20, threads=8):
    """Host memcpy GB/s (bytes copied per second) with ``threads`` threads, pageable to
    pageable: the bound of staging a fresh array."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    pool = concurrent.futures.ThreadPoolExecutor(threads)
    edges = np.linspace(0, src.size, threads + 1).astype(int)

    def copy():
        list(pool.map(lambda ab: np.copyto(dst[ab[0]:ab[1]], src[ab[0]:ab[1]]), zip(edges[:-1], edges[1:])))

    t = median_time(copy, 5)
    pool.shutdown()
    return {"threads": threads, "gbytes_per_s": nbytes / t / 1e9,
            "one_thread": nbytes / median_time(lambda: np.copyto(dst, src), 3) / 1e9}


def fer_of(res, cw):
    return float((res.bits != cw).any(axis=1).mean())


def throughput_rows(code, reps):
    rows = []
    dec = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0])
    batch = dec.preferred_batch("throughput")
    cw, llr = noisy(code, batch)
    pinned = dec.pinned_llr(batch)
    pinned[:] = llr
    fer = fer_of(dec.decode(pinned), cw)
    rows.append(row(code, batch, median_time(lambda: dec.decode(pinned), reps), "gl.Decoder", "pinned", fer=fer))
    rows.append(row(code, batch, median_time(lambda: dec.decode(llr), reps), "gl.Decoder", "numpy, same array"))
    fresh = [llr.copy() for _ in range(2)]
    times = []
    for i in range(reps + 1):                     # a new array each call (copied outside the timing)
        fresh[i % 2] = llr.copy()
        t0 = time.perf_counter()
        dec.decode(fresh[i % 2])
        times.append(time.perf_counter() - t0)
    rows.append(row(code, batch, float(np.median(times[1:])), "gl.Decoder", "numpy, fresh array"))

    def fresh_in_flight():                        # a producer handing fresh arrays to submit()
        arrays = [llr.copy() for _ in range(8)]
        start = time.perf_counter()
        tickets = [dec.submit(a) for a in arrays[:2]]
        for a in arrays[2:]:
            tickets.pop(0).result()
            tickets.append(dec.submit(a))
        for t in tickets:
            t.result()
        return time.perf_counter() - start
    fresh_in_flight()
    rows.append(row(code, 8 * batch, float(np.median([fresh_in_flight() for _ in range(3)])), "gl.Decoder.submit",
                    "numpy, fresh array each, 2 in flight"))

    def pipelined():                              # two tickets in flight
        tickets = [dec.submit(llr if i % 2 else pinned) for i in range(2)]
        for i in range(6):
            tickets.pop(0).result()
            tickets.append(dec.submit(llr if i % 2 else pinned))
        for t in tickets:
            t.result()
    rows.append(row(code, 8 * batch, median_time(pipelined, max(2, reps // 4), warmup=1), "gl.Decoder.submit",
                    "numpy and pinned alternating, 2 in flight"))
    low = cuda.CudaDecoder(code, max_iterations=10, early_stop=False, devices=[0])
    src, out = low.pinned_llr(batch), low.pinned_bits(batch)
    src[:] = llr
    r = row(code, batch, median_time(lambda: low.decode(src, out=out), reps), "CudaDecoder", "pinned, out=pinned",
            fer=fer_of(low.decode(src, out=out), cw))
    r["kernel_gbps"] = code.n * low.engines[0].chunk / low.kernel_seconds(frames=low.engines[0].chunk) / 1e9
    rows.append(r)
    low.close()
    # the bad-LLR rule (issue 19): erase on clean input and on 1 % bad frames, against raise
    erase = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0], on_bad_llr="erase")
    bad = pinned.copy()
    bad[::100, 7] = np.nan
    bad_pinned = erase.pinned_llr(batch)
    bad_pinned[:] = bad
    for src, what in ((pinned, "pinned, clean"), (bad_pinned, "pinned, 1 % frames with a NaN")):
        res = erase.decode(src)
        r = row(code, batch, median_time(lambda: erase.decode(src), reps), "gl.Decoder", what,
                fer=fer_of(res, cw), on_bad_llr="erase", bad_llr_frames=int(res.bad_llr.sum()))
        rows.append(r)
    erase.close()
    dec.close()
    # int8 and packed int4 LLRs, binary16 messages (issue 16 item 4: PCIe bounds 55 / 110 Gb/s in);
    # each also with packed=True (gpuldpc.packed_bits: an eighth of the decisions' bytes out)
    for llr_dtype, scale, packed in (("int8", 0.25, False), ("int8", 0.25, True), ("int4", 0.75, False),
                                     ("int4", 0.75, True)):
        half = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0],
                          precision="float16", llr_dtype=llr_dtype, llr_scale=scale, packed=packed)
        batch = half.preferred_batch("throughput")
        cw, llr = noisy(code, batch)
        q = quantised(llr, llr_dtype, scale)
        qp = half.pinned_llr(batch)
        qp[:] = q
        fer = fer_of(half.decode(qp), np.packbits(cw, axis=1) if packed else cw)
        for src, what in ((qp, "pinned"), (q, "numpy, same array")):
            rows.append(row(code, batch, median_time(lambda: half.decode(src), reps), "gl.Decoder", what,
                            llr_dtype=llr_dtype, fer=fer, precision="float16", llr_scale=scale,
                            output="packed bits" if packed else "bits"))
        low = half._impl.decoder                  # one chunk's launch, the int4 unpack kernel included
        chunk = low.engines[0].chunk
        rows[-2]["kernel_gbps"] = code.n * chunk / low.kernel_seconds(frames=chunk) / 1e9
        half.close()
    return rows


def device_rows(reps):
    """``gl.Decoder.decode`` of a torch CUDA tensor, results to the host and kept on the GPU."""
    try:
        import torch
    except ImportError:
        print("device rows skipped: no PyTorch", flush=True)
        return []
    code, rows = gl.codes.get("wimax-2304-1/2"), []
    for precision, llr_dtype in (("float32", "float32"), ("float16", "float32"), ("float16", "int8")):
        extra = dict(llr_dtype="int8", llr_scale=0.25) if llr_dtype == "int8" else {}
        dec = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0],
                         precision=precision, **extra)
        batch = dec.preferred_batch("throughput")
        cw, llr = noisy(code, batch)
        if llr_dtype == "int8":
            llr = quantised(llr, "int8", 0.25)
        dev = torch.from_numpy(llr).cuda()
        torch.cuda.synchronize()
        fer = fer_of(dec.decode(dev, out_device=False), cw)
        for out_device in (False, True):
            rows.append(row(code, batch, median_time(lambda: dec.decode(dev, out_device=out_device), reps),
                            "gl.Decoder", "device (torch CUDA tensor)" + (", out_device" if out_device else ""),
                            llr_dtype=llr_dtype, fer=fer, precision=precision, out_device=out_device))
        low = dec._impl.decoder                         # the kernel's own bound, beside (kernel only)
        chunk = low.engines[0].chunk
        rows[-1]["kernel_gbps"] = code.n * chunk / low.kernel_seconds(frames=chunk) / 1e9
        dec.close()
    return rows


def latency(dec, llr, reps, out=None):
    """(median, p99) seconds of ``dec.decode(llr, out=out)`` (:func:`timing.latency`)."""
    return timed_latency(lambda: dec.decode(llr, out=out), reps)


def latency_rows(reps):
    rows = []
    wimax = gl.codes.get("wimax-2304-1/2")
    dec = gl.Decoder(wimax, backend="cuda", max_iterations=10, early_stop=False, devices=[0], preset="latency")
    for frames in (1, 6):
        cw, llr = noisy(wimax, frames)
        med, p99 = latency(dec, llr, reps)
        rows.append(row(wimax, frames, med, "gl.Decoder", "numpy", p99=p99, fer=fer_of(dec.decode(llr), cw),
                        preset="latency"))
        pinned = dec.pinned_llr(frames)
        pinned[:] = llr
        med, p99 = latency(dec, pinned, reps)
        rows.append(row(wimax, frames, med, "gl.Decoder", "pinned", p99=p99, preset="latency"))
        low = cuda.CudaDecoder(wimax, early_stop=False, devices=[0], preset="latency")
        src, out = low.pinned_llr(frames), low.pinned_bits(frames)
        src[:] = llr
        med, p99 = latency(low, src, reps, out=out)
        rows.append(row(wimax, frames, med, "CudaDecoder", "pinned, out=pinned", p99=p99, preset="latency"))
        resident = low.engines[0].slots[0].resident          # the GPU's part: a post and its answer
        address = cuda.host_memory.mapped_address(src)
        bare = types.SimpleNamespace(decode=lambda x, out=None: (resident.post(frames, address), resident.wait()))
        med, p99 = latency(bare, None, reps)
        rows.append(row(wimax, frames, med, "resident kernel post+wait", "pinned", p99=p99, preset="latency"))
        # the same with the numpy rows copied into the page-locked input first: the floor of a
        # numpy call without any Python layer (the copy leaves the lines dirty in the CPU's cache)
        staged = types.SimpleNamespace(decode=lambda x, out=None: (np.copyto(src, llr), resident.post(frames, address),
                                                                   resident.wait()))
        med, p99 = latency(staged, None, reps)
        rows.append(row(wimax, frames, med, "resident kernel copy+post+wait", "numpy copied to pinned", p99=p99,
                        preset="latency"))
        low.close()
    dec.close()
    nb = gl.codes.get("gf32-620-310")
    dec = gl.Decoder(nb, backend="cuda", max_iterations=10, early_stop=False, devices=[0], preset="latency")
    words, bits = nb_frames(nb, 1, 3.0)
    med, p99 = latency(dec, bits, max(50, reps // 4))
    rows.append(row(nb, 1, med, "gl.Decoder", "numpy bit LLRs", algorithm=dec.algorithm, schedule=dec.schedule,
                    p99=p99, fer=float((dec.decode(bits).bits != words).any()), preset="latency"))
    low = dec._impl.decoder
    pinned = low.pinned_llr(1, "bits")
    pinned[:] = bits
    med, p99 = latency(low, pinned, max(50, reps // 4))
    r = row(nb, 1, med, "NbCudaDecoder", "pinned bit LLRs", algorithm=dec.algorithm, schedule=dec.schedule,
            p99=p99, preset="latency")
    r["kernel_us"] = low.kernel_seconds(pinned, frames=1, repeats=50) * 1e6      # the launched kernel
    rows.append(r)
    resident, address = low._small.resident, cuda.host_memory.mapped_address(pinned)
    bare = types.SimpleNamespace(decode=lambda x, out=None: (resident.post(1, address), resident.wait()))
    med, p99 = latency(bare, None, max(50, reps // 4))
    rows.append(row(nb, 1, med, "resident kernel post+wait", "pinned bit LLRs", algorithm=dec.algorithm,
                    schedule=dec.schedule, p99=p99, preset="latency"))
    dec.close()
    launched = gl.Decoder(nb, backend="cuda", max_iterations=10, early_stop=False, devices=[0], preset="latency",
                          resident=False)
    med, p99 = latency(launched, bits, max(50, reps // 4))
    rows.append(row(nb, 1, med, "gl.Decoder", "numpy bit LLRs, launched (resident=False)", algorithm=dec.algorithm,
                    schedule=dec.schedule, p99=p99, preset="latency"))
    launched.close()
    return rows


def nb_frames(code, frames, ebn0):
    rng = np.random.default_rng(7)
    distinct = min(frames, 512)
    words = code.encode(rng.integers(0, code.q, (distinct, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(words).reshape(distinct, -1)
    llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(ebn0, code.rate), rng)
    reps = -(-frames // distinct)
    return np.tile(words, (reps, 1))[:frames], np.ascontiguousarray(np.tile(llr, (reps, 1))[:frames])


def nb_rows(reps):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    rows = []
    for name, algorithm, schedule, iterations, ebn0 in (("gf32-744-653", "mmma", "layered", 10, 4.5),
                                                        ("gf32-620-310", "minmax", "flooding", 10, 3.0),
                                                        ("gf256-384-128", "fft-spa", "flooding", 5, 3.0)):
        code = gl.codes.get(name)
        dec = gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="cuda", max_iterations=iterations,
                         early_stop=False, devices=[0])
        batch = dec.preferred_batch("throughput")
        words, bits = nb_frames(code, batch, ebn0)
        fer = float((dec.decode(bits).bits != words).any(axis=1).mean())
        rows.append(row(code, batch, median_time(lambda: dec.decode(bits), reps), "gl.Decoder", "numpy bit LLRs",
                        algorithm=algorithm, schedule=schedule, iterations=iterations, fer=fer))
        dec.close()
        low = NbCudaDecoder(code, algorithm, schedule, iterations, False, devices=[0])
        pinned = low.pinned_llr(batch, "bits")
        pinned[:] = bits
        rows.append(row(code, batch, median_time(lambda: low.decode(pinned), reps), "NbCudaDecoder",
                        "pinned bit LLRs", algorithm=algorithm, schedule=schedule, iterations=iterations))
        low.close()
    return rows


def sweep_rows(reps):
    """Where the time of a throughput batch goes (exploration rows, WiMAX 2304 float32): batch
    size and streams with page-locked input, tickets in flight, the host side of a fresh
    array (registering it in place, staging it with 8 or 16 threads)."""
    from gpuldpc.cuda import host_memory

    code = gl.codes.get("wimax-2304-1/2")
    rows = []
    for streams, chunk, rounds in ((8, None, 1), (8, None, 2), (8, None, 4), (16, 1320, 2), (4, 5280, 2)):
        dec = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0], streams=streams,
                         chunk_frames=chunk)
        batch = dec.preferred_batch("throughput") * rounds
        pinned = dec.pinned_llr(batch)
        pinned[:] = noisy(code, batch)[1]
        rows.append(row(code, batch, median_time(lambda: dec.decode(pinned), reps), "gl.Decoder", "pinned",
                        streams=streams, chunk_frames=dec._impl.decoder.engines[0].chunk, sweep="batch"))
        if rounds == 1:
            def two_in_flight():
                tickets = [dec.submit(pinned) for _ in range(2)]
                for _ in range(6):
                    tickets.pop(0).result()
                    tickets.append(dec.submit(pinned))
                for t in tickets:
                    t.result()
            rows.append(row(code, 8 * batch, median_time(two_in_flight, max(2, reps // 4), warmup=1),
                            "gl.Decoder.submit", "pinned, 2 in flight", streams=streams, sweep="tickets"))
        dec.close()
    drv = cuda.driver()
    dec = gl.Decoder(code, backend="cuda", max_iterations=10, early_stop=False, devices=[0])
    batch = dec.preferred_batch("throughput")
    llr = noisy(code, batch)[1]
    ctx = dec._impl.decoder.engines[0].ctx
    lib = host_memory.libcuda()
    fresh = llr.copy()

    def register():
        with ctx.active():
            assert lib.cuMemHostRegister_v2(fresh.ctypes.data, fresh.nbytes, 1) == 0
            lib.cuMemHostUnregister(fresh.ctypes.data)
    t_reg = median_time(register, 3, warmup=1)
    staging = dec.pinned_llr(batch)
    notes = {"register_unregister_ms": t_reg * 1e3, "bytes": fresh.nbytes}
    for threads in (8, 16):
        row_copy.THREADS = threads
        notes[f"stage_gbytes_per_s_{threads}_threads"] = fresh.nbytes / median_time(
            lambda: row_copy.copy_rows(staging, fresh), 5) / 1e9
        times = []
        for i in range(reps + 1):
            fresh = llr.copy()
            t0 = time.perf_counter()
            dec.decode(fresh)
            times.append(time.perf_counter() - t0)
        rows.append(row(code, batch, float(np.median(times[1:])), "gl.Decoder", "numpy, fresh array",
                        stage_threads=threads, sweep="staging"))
    row_copy.THREADS = 8
    print(notes, flush=True)
    dec.close()
    del drv
    return rows, notes


def format_table(doc) -> str:
    lines = [f"{doc['gpu']}  driver {doc['driver']}  CUDA {doc['cuda']}  commit {doc['commit']}  {doc['date']}",
             f"{'api':30s} {'input':40s} {'code':15s} {'alg':7s} {'dtype':7s} {'frames':>7s} {'coded Gb/s':>10s} "
             f"{'info Gb/s':>9s} {'lat us':>9s} {'p99 us':>8s} {'FER':>6s}"]
    for r in doc["rows"]:
        p99 = f"{r['latency_p99_us']:8.1f}" if r["latency_p99_us"] else "       -"
        fer = f"{r['fer']:6.3f}" if r["fer"] is not None else "     -"
        alg = r["algorithm"] + ("/h" if r.get("precision") == "float16" else "")
        lines.append(f"{r['api']:30s} {r['input']:40s} {r['code']:15s} {alg:7s} {r['llr_dtype']:7s} "
                     f"{r['frames_per_batch']:7d} {r['coded_gbps']:10.3f} {r['info_gbps']:9.3f} "
                     f"{r['latency_us']:9.1f} {p99} {fer}"
                     + (f"  (kernel only {r['kernel_gbps']:.1f} Gb/s)" if r.get("kernel_gbps") else ""))
    lines.append(f"host memcpy: {doc['notes']['memcpy']}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--only", default="throughput,latency,nb,device", help="comma-separated parts (also: sweep)")
    args = ap.parse_args(argv)
    drv = cuda.driver()
    reps = 4 if args.quick else 10
    parts = args.only.split(",")
    rows, notes = [], {"memcpy": memcpy_gbytes()}
    print(notes, flush=True)
    runs = {"throughput": lambda: [r for name in ("wimax-2304-1/2", "wifi-1944-1/2")
                                   for r in throughput_rows(gl.codes.get(name), reps)],
            "latency": lambda: latency_rows(500 if args.quick else 3000),
            "nb": lambda: nb_rows(reps),
            "device": lambda: device_rows(reps)}
    failed = []
    for part in parts:                  # a part that fails is a note; the other parts' rows are kept
        try:
            if part == "sweep":
                sweep, notes["sweep"] = sweep_rows(reps)
                rows += sweep
            else:
                rows += runs[part]()
        except Exception as exc:
            notes[f"{part} failed"] = f"{type(exc).__name__}: {exc}"
            failed.append(part)
            traceback.print_exc()
    commit = source_commit() or ""
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.split()
    dev0 = drv.Device(0)
    doc = dict(gpu=dev0.name(), driver=smi[0] if smi else f"CUDA driver API {drv.get_driver_version()}",
               cuda=".".join(map(str, drv.get_version())), numpy=np.__version__,
               commit=commit if re.fullmatch(r"[0-9a-f]{7,40}", commit) else None,
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               rows=rows, notes=notes)
    os.makedirs(args.out, exist_ok=True)
    stem = ("h200" if "H200" in dev0.name() else dev0.name().replace(" ", "_").lower()) + "-front-door"
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
    text = format_table(doc)
    with open(os.path.join(args.out, stem + ".txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

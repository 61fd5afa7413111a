#!/usr/bin/env python3
"""5G NR code blocks on the GPU through ``gl.Decoder`` (issue 14), beside Sionna and the cpu backend.

    python bench/gpu_nr.py [--out DIR] [--quick]

For each code block ``gl.codes.nr(k, E)`` (BG1 Zc 384, k = 8448, at rates 8/9 and 1/3; BG2
Zc 384, k = 3840, at rates 8/9 and 1/3), 5 iterations, early stop off, layered normalized
min-sum, BPSK/AWGN LLRs of random blocks:

* ``gl.Decoder`` -- what a user gets: E received LLRs in a numpy array, rate recovery on
  the host straight into the LLRs of the pruned mother code (``code.decoded``:
  :func:`gpuldpc.codes.shaping.prune`), its QC kernels (the headline), float32 messages;
  and the same with ``precision="float16"`` where a binary16 kernel holds the pruned shape
  (else a note);
* ``gl.Decoder`` with int8 E LLRs (``llr_dtype="int8"``, ``llr_scale`` a power of two that
  puts the 99.9th percentile of |LLR| near 127: :func:`quantized`), float16 messages where
  a binary16 kernel holds the pruned shape (else a note) and float32 messages: the issue's
  target input, recovered on the GPU in int8 (kernels/shaping.cu: fillers +127, repeats saturated) from the
  page-locked int8 input, a quarter of the float32 bytes over PCIe; with binary16 messages
  also from a PyTorch CUDA tensor of the same int8 E LLRs (a GPU demapper's output: no PCIe
  in, the results left on the GPU, ``out_device``);
* ``gl.Decoder, pruned code`` / ``gl.Decoder, full mother graph`` -- the pruned code's /
  the whole mother code's LLRs already recovered, page-locked: what the kernels and
  transfers do without the host's recovery, on the graph decoded now and on the one
  decoded before pruning (lower level, labelled);
* ``sionna LDPC5GDecoder`` -- Sionna's 5G decoder (``sionna`` wheel, PyTorch, this GPU;
  its own schedule and check-node rule, ``num_iter=5``) on pinned torch tensors of the
  same E LLRs (logits ln P(1)/P(0): negated);
* ``cpu`` -- our C++ backend on this machine's cores, same blocks.

Throughput: info bits (k a block) and transmitted bits (E a block) per
second; FER on the same frames.  Rows go to ``<out>/<gpu>-nr.json`` and a table to
``<out>/<gpu>-nr.txt``.  FER curves against Sionna: ``bench/nr_campaign.py``.
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
from gpu_binary import quantised  # noqa: E402  (bench/gpu_binary.py)
from timing import latency, median_time, source_commit  # noqa: E402  (bench/timing.py)

BLOCKS = [(8448, 9504, 1), (8448, 25344, 1), (3840, 4320, 2), (3840, 11520, 2)]     # (k, E, base graph)
ITERATIONS, EBN0_DB = 5, {9504: 4.5, 25344: 3.0, 4320: 6.0, 11520: 3.0}
SIONNA_FRAMES = 512          # Sionna's decoder holds every message of the batch: 8448 blocks ran out of memory


def received(code, frames, ebn0_db, seed=1):
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    sigma = gl.channel.sigma_from_ebn0(ebn0_db, code.k / code.n)
    return info, gl.channel.awgn_llr(code.encode(info), sigma, rng).astype(np.float32)


def quantized(llr):
    """(int8 LLRs, llr_scale): ``llr_scale`` the power of two that puts the 99.9th percentile
    of |llr| at or below 127 steps, values rounded and clipped to +-127."""
    scale = float(2.0 ** np.ceil(np.log2(np.percentile(np.abs(llr), 99.9) / 127)))
    return quantised(llr, "int8", scale), scale


def row(code, frames, seconds, api, input, fer, llr_dtype="float32", **extra):
    r = dict(code=code.name, k=code.k, e=code.n, rate=code.k / code.n, iterations=ITERATIONS,
             early_stop=False, frames_per_batch=frames, api=api, input=input, llr_dtype=llr_dtype,
             info_gbps=code.k * frames / seconds / 1e9, transmitted_gbps=code.n * frames / seconds / 1e9,
             latency_us=seconds * 1e6, fer=fer, **extra)
    print(json.dumps(r), flush=True)
    return r


def unpacked(packed_info, k):
    """The k information bits of ``packed=True`` results (gpuldpc.packed_bits)."""
    return np.unpackbits(packed_info, axis=1, count=k)


def fer_of(info_hat, info):
    return float((np.asarray(info_hat) != info).any(axis=1).mean())


def ours(code, reps):
    settings = dict(algorithm="nms", schedule="layered", max_iterations=ITERATIONS, early_stop=False)
    dec = gl.Decoder(code, backend="cuda", devices=[0], **settings)
    batch = dec.preferred_batch("throughput")
    info, llr = received(code, batch, EBN0_DB[code.n])
    fer = fer_of(dec.decode(llr).info, info)
    shape = dict(decoded=code.decoded.name, decoded_edges=code.decoded.edges, mother_edges=code.mother.edges)
    rows = [row(code, batch, median_time(lambda: dec.decode(llr), reps), "gl.Decoder", "numpy", fer,
                backend="cuda", schedule="layered", precision="float32", **shape)]
    dec.close()
    notes = []
    try:
        half = gl.Decoder(code, backend="cuda", devices=[0], precision="float16", **settings)
    except gl.BackendUnavailable as exc:
        notes.append(f"precision='float16': {exc}")
    else:
        rows.append(row(code, batch, median_time(lambda: half.decode(llr), reps), "gl.Decoder", "numpy",
                        fer_of(half.decode(llr).info, info), backend="cuda", schedule="layered",
                        precision="float16", **shape))
        half.close()
    q, scale = quantized(llr)
    for precision, packed in (("float16", False), ("float16", True), ("float32", False)):
        try:
            narrow = gl.Decoder(code, backend="cuda", devices=[0], precision=precision, llr_dtype="int8",
                                llr_scale=scale, packed=packed, **settings)
        except gl.BackendUnavailable as exc:
            notes.append(f"int8 LLRs, precision={precision!r}: {exc}")
            continue
        frames = narrow.preferred_batch("throughput")      # its own batch (binary16: two frames a thread)
        qb, ib = np.resize(q, (frames, q.shape[1])), np.resize(info, (frames, info.shape[1]))
        r = row(code, frames, median_time(lambda: narrow.decode(qb), reps), "gl.Decoder", "numpy int8",
                fer_of(unpacked(narrow.decode(qb).info, code.k) if packed else narrow.decode(qb).info, ib),
                llr_dtype="int8",
                llr_scale=scale, backend="cuda", schedule="layered", precision=precision,
                output="packed bits" if packed else "bits", **shape)
        low = narrow._impl._impl.decoder                   # ShapedBackend -> cuda backend -> CudaDecoder
        chunk = low.engines[0].chunk
        r["kernel_info_gbps"] = code.k * chunk / low.kernel_seconds(frames=chunk) / 1e9   # kernel only, labelled
        r["kernel"] = low.kernel
        r["kernel_includes_recovery"] = low.shaping is not None   # kernels/shaping.cu launched with it
        rows.append(r)
        dev = cuda_tensor(qb) if (precision, packed) == ("float16", False) else None
        if dev is not None:                           # E LLRs from a GPU demapper: no PCIe in, results stay
            res = narrow.decode(dev)
            rows.append(row(code, frames, median_time(lambda: narrow.decode(dev), reps), "gl.Decoder",
                            "torch int8 on GPU", fer_of(res.info.get(), ib), llr_dtype="int8", llr_scale=scale,
                            backend="cuda", schedule="layered", precision=precision, output="bits on the GPU",
                            **shape))
        narrow.close()
    for api, target, recover in (("gl.Decoder, pruned code", code.decoded, code.decoded_shaping.recover),
                                 ("gl.Decoder, full mother graph", code.mother, code.recover)):
        if api.endswith("pruned code") and code.decoded is code.mother:
            continue                                   # nothing pruned: the mother row says it
        lower = gl.Decoder(target, backend="cuda", devices=[0], **settings)
        pinned = lower.pinned_llr(batch)
        pinned[:] = recover(llr)
        positions = code.decoded_info if target is code.decoded else code.info_positions
        rows.append(row(code, batch, median_time(lambda: lower.decode(pinned), reps), api, "pinned, recovered",
                        fer_of(lower.decode(pinned).bits[:, positions], info), backend="cuda",
                        schedule="layered", precision="float32", **shape))
        lower.close()
    cpu = gl.Decoder(code, backend="cpu", **settings)
    frames = min(batch, cpu.preferred_batch("throughput"))
    info_c, llr_c = info[:frames], llr[:frames]
    rows.append(row(code, frames, median_time(lambda: cpu.decode(llr_c), 2, warmup=1), "gl.Decoder", "numpy",
                    fer_of(cpu.decode(llr_c).info, info_c), backend="cpu", schedule="layered",
                    precision="float32", threads=os.cpu_count(), **shape))
    return rows, info, llr, notes


def cuda_tensor(arr):
    """``arr`` as a PyTorch CUDA tensor (the E LLRs a GPU demapper hands over), or None without
    torch or a GPU it sees."""
    try:
        import torch
    except ImportError:
        return None
    return torch.from_numpy(arr).cuda() if torch.cuda.is_available() else None


def latency_rows(code, calls=300):
    """One code block a call through ``gl.Decoder(preset="latency")`` from a numpy array, hand-over
    to bits on the host (the issue's <= 60 us): median and p99 of ``calls`` calls after half a
    second of calls, float32 LLRs and int8 LLRs with binary16 messages."""
    settings = dict(algorithm="nms", schedule="layered", max_iterations=ITERATIONS, early_stop=False)
    info, llr = received(code, 1, EBN0_DB[code.n])
    q, scale = quantized(llr)
    rows, notes = [], []
    for precision, dtype, src, extra in (("float32", "float32", llr, {}),
                                         ("float16", "int8", q, dict(llr_dtype="int8", llr_scale=scale))):
        try:
            dec = gl.Decoder(code, backend="cuda", devices=[0], preset="latency", precision=precision, **extra,
                             **settings)
        except gl.BackendUnavailable as exc:
            notes.append(f"latency, precision={precision!r}: {exc}")
            continue
        med, p99 = latency(lambda: dec.decode(src), calls, warm_seconds=0.5)
        rows.append(row(code, 1, med, "gl.Decoder", "numpy" if dtype == "float32" else "numpy int8",
                        fer_of(dec.decode(src).info, info), backend="cuda", schedule="layered", precision=precision,
                        llr_dtype=dtype, preset="latency", latency_p99_us=p99 * 1e6))
        dec.close()
    return rows, notes


def sionna_decoder(code, iterations, device="cuda:0"):
    """Sionna's ``LDPC5GDecoder`` for ``code`` (``gl.codes.nr``: Sionna's own rate matching of
    (k, E), rv 0, on the code's base graph), flooding belief propagation (boxplus-phi), ``num_iter=iterations``, no
    early stop: ``(prepare, run)``, ``prepare(llr)`` our E LLRs (float32 [frames, E],
    positive means 0) as Sionna's logits ln P(1)/P(0) (negated) in a pinned torch tensor,
    ``run(tensor)`` the k decided information bits uint8 [frames, k] (copied to ``device``,
    decoded, back on the host).  Raises ImportError without sionna/torch."""
    import torch
    from sionna.phy.fec.ldpc import LDPC5GDecoder, LDPC5GEncoder

    # the base graph named: Sionna picks it by TS 38.212's rule from (k, rate) otherwise, which
    # for k = 3840 above rate 1/4 is BG1 -- another code than gl.codes.nr(3840, E, bg=2)
    enc = LDPC5GEncoder(code.k, code.n, bg=f"bg{code.bg}", device=device)
    dec = LDPC5GDecoder(enc, num_iter=iterations, hard_out=True, device=device)

    def prepare(llr):
        return torch.from_numpy(np.negative(llr)).pin_memory()

    def run(host):
        bits = dec(host.to(device, non_blocking=True)).to("cpu")
        torch.cuda.synchronize()
        return bits.numpy().astype(np.uint8)

    return prepare, run


def sionna(code, info, llr, reps):
    try:
        prepare, run = sionna_decoder(code, ITERATIONS)
    except Exception as exc:  # record why the peer could not run
        return [], f"sionna not importable: {type(exc).__name__}: {exc}"
    info, host = info[:SIONNA_FRAMES], prepare(llr[:SIONNA_FRAMES])
    fer = fer_of(run(host), info)
    return [row(code, host.shape[0], median_time(lambda: run(host), reps), "sionna LDPC5GDecoder",
                "pinned torch tensor", fer, backend="sionna", schedule="sionna default")], None


def gpu_identity() -> tuple[str, str | None]:
    """(GPU name, driver) from nvidia-smi; ("cpu", None) on a machine without it."""
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout.splitlines()
    except OSError:
        smi = []
    return tuple(x.strip() for x in smi[0].split(",")) if smi else ("cpu", None)


def write_json(doc: dict, out: str, suffix: str) -> str:
    """``doc`` as ``<out>/<gpu>-<suffix>.json``; the path without ``.json`` (for the table)."""
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, doc["gpu"].replace(" ", "_").lower() + "-" + suffix)
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=2)
    return stem


def header(**fields) -> dict:
    """The JSON document's header (DESIGN.md "Measuring"): gpu, driver, versions, commit, date."""
    gpu, drv = gpu_identity()
    return dict(gpu=gpu, driver=drv, python=platform.python_version(), numpy=np.__version__,
                commit=source_commit(), date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                **fields)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--quick", action="store_true", help="3 timed calls a row instead of 7")
    args = parser.parse_args(argv)
    reps = 3 if args.quick else 7
    rows, notes = [], {}
    for k, e, bg in BLOCKS:
        code = gl.codes.nr(k, e, bg=bg)
        ours_rows, info, llr, why_not = ours(code, reps)
        rows += ours_rows
        if code.n in (9504, 25344):                    # the one-codeword target: BG1 rates 8/9 and 1/3
            lat_rows, lat_notes = latency_rows(code)
            rows += lat_rows
            why_not += lat_notes
        try:
            peer, why = sionna(code, info, llr, reps)
        except Exception as exc:  # the peer failing is a note, not the end of the run
            peer, why = [], f"sionna failed: {type(exc).__name__}: {exc}"
        rows += peer
        why_not += [why] if why else []
        if why_not:
            notes[code.name] = "; ".join(why_not)
    doc = header(rows=rows, notes=notes)
    gpu, drv = doc["gpu"], doc["driver"]
    stem = write_json(doc, args.out, "nr")
    lines = [f"{gpu}  driver {drv}  commit {doc['commit']}  {doc['date']}  ({ITERATIONS} iterations, no early stop)",
             f"{'api':30s} {'input':18s} {'code block':28s} {'backend':8s} {'prec':4s} {'frames':>7s} "
             f"{'info Gb/s':>10s} {'E Gb/s':>8s} {'call ms':>9s} {'FER':>7s}"]
    for r in rows:
        prec = {"float32": "f32", "float16": "f16"}.get(r.get("precision"), "-")
        lines.append(f"{r['api']:30s} {r['input']:18s} {r['code']:28s} {r['backend']:8s} {prec:4s} "
                     f"{r['frames_per_batch']:7d} {r['info_gbps']:10.3f} {r['transmitted_gbps']:8.3f} "
                     f"{r['latency_us'] / 1e3:9.3f} {r['fer']:7.4f}"
                     + (f"  one block: {r['latency_us']:.1f} us median, {r['latency_p99_us']:.1f} p99"
                        if r.get("preset") == "latency" else "")
                     + (f"  kernel only {r['kernel_info_gbps']:.1f} Gb/s info ({r['kernel']})"
                        if r.get("kernel_info_gbps") else "")
                     + ("  packed=True (an eighth of the decisions' bytes out)" if r.get("output") == "packed bits"
                        else ""))
    lines += [f"note {k}: {v}" for k, v in notes.items()]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

"""Where a level of the GF(q) one-frame kernel goes: a %globaltimer trace of its tasks.

    python bench/nb_frame_trace.py [--code gf32-620-310] [--iterations 10] [--out FILE]

Builds a copy of ``kernels/nb_frame.cu`` with ``-DGPULDPC_NB_TRACE`` (nvcc, for the GPU found),
whose lane 0 stamps five points of every task (ticket taken, channel loads done, inputs ready
after the neighbour polls and the acquire fence, the neighbours' R staged, the flag published),
loads it instead of the packaged module (``GPULDPC_KERNEL_DIR``, the other modules copied from
the current one), decodes one frame (Min-Max flooding, no early stop) 20 times launched
(``resident=False``) and 200 times through the resident kernel, and prints per level (the tasks
of iteration it, which wait for it-1) the medians over the check rows, in ns:

* detect: inputs ready - max(the last neighbour's publish, the task's own loads);
* picked late: the fraction of tasks whose ticket was taken after their inputs were complete,
  and by how much;
* stage, compute + publish: staged - ready, published - staged;
* period: published(it) - published(it-1) of the same row;
* spread: when the last neighbour published, after the level's first publish.

Session 15's H200 run: ``bench/results/h200-nb-frame-trace.txt`` (docs/gpu_nb.md).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def traced_kernel_dir(arch: str) -> str:
    """A folder holding the traced nb_frame.fatbin and the current folder's other fatbins."""
    out = tempfile.mkdtemp(prefix="nb-trace-")
    current = os.environ.get("GPULDPC_KERNEL_DIR")
    if current:
        for f in Path(current).glob("*.fatbin"):
            shutil.copy(f, out)
    subprocess.run(["nvcc", "-fatbin", "-O3", "-std=c++17", "-DGPULDPC_NB_TRACE", "-gencode",
                    f"arch=compute_{arch},code=sm_{arch}", "-o", os.path.join(out, "nb_frame.fatbin"),
                    str(ROOT / "kernels" / "nb_frame.cu")], check=True)
    return out


def stamps(dec, tasks: int, levels: int) -> np.ndarray:
    """[levels, 5, tasks] stamps (ns) of the last frame the decoder's nb_frame module decoded."""
    from gpuldpc.cuda.driver import driver

    ctx = dec.engines[0].ctx
    with ctx.active():
        ptr, size = ctx._modules["nb_frame"][0].get_global("g_trace")
        a = np.empty(size // 8, np.uint64)
        driver().memcpy_dtoh(a, ptr)
    t = a.reshape(-1, 5)[:levels * tasks].astype(np.int64)
    return (t - t[:, 0].min()).reshape(levels, tasks, 5).transpose(0, 2, 1)


def report(name, s, neighbours, iterations) -> list[str]:
    taken, loads, ready, staged, pub = (s[:, i] for i in range(5))
    lines = [f"== {name}: last publish {pub[iterations - 1].max() / 1e3:.1f} us, last inputs ready "
             f"{ready[iterations].max() / 1e3:.1f} us",
             "level  detect med/p90   picked late frac, med   stage   compute+publish   period   spread  (ns)"]
    for lv in range(1, iterations + 1):
        avail = np.array([pub[lv - 1][nb].max() for nb in neighbours])
        detect = ready[lv] - np.maximum(avail, loads[lv])
        late = taken[lv] - avail
        compute = np.median(pub[lv] - staged[lv]) if lv < iterations else 0.0
        period = np.median(pub[lv] - pub[lv - 1]) if lv < iterations else float("nan")
        lines.append("%5d  %6.0f %6.0f   %6.2f %6.0f   %5.0f   %8.0f   %9.0f   %6.0f" % (
            lv + 1, np.median(detect), np.percentile(detect, 90), np.mean(late > 0), np.median(np.maximum(late, 0)),
            np.median(staged[lv] - ready[lv]), compute, period, np.median(avail - pub[lv - 1].min())))
    lines.append("iteration 1: ticket taken -> loads done %.0f, loads done -> published %.0f ns" % (
        np.median(loads[0] - taken[0]), np.median(pub[0] - loads[0])))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", default="gf32-620-310")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    import gpuldpc as gl
    from gpuldpc.cuda import DeviceContext
    from gpuldpc.cuda.host_memory import mapped_address
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder
    from gpuldpc.cuda.nb_frame import frame_tables
    from gpuldpc.cuda.nb_layout import nb_layout

    major, minor = DeviceContext(0).device.compute_capability()
    os.environ["GPULDPC_KERNEL_DIR"] = traced_kernel_dir(f"{major}{minor}")
    code = gl.codes.get(args.code)
    tables = frame_tables(nb_layout(code))
    tasks, levels = tables["task_row"].shape[0], args.iterations + 1
    if levels * tasks > 8192:
        raise SystemExit(f"{levels} x {tasks} tasks: the trace holds 8192")
    neighbours = [tables["nbr_row"][tables["nbr_ptr"][k]:tables["nbr_ptr"][k + 1]] for k in range(tasks)]
    rng = np.random.default_rng(1)
    words = code.encode(rng.integers(0, code.q, (1, code.k), dtype=np.uint8))
    x = gl.channel.awgn_llr(gl.gf.GF(code.q).to_bits(words).reshape(1, -1),
                            gl.channel.sigma_from_ebn0(3.0, code.rate), rng)
    lines = [f"{DeviceContext(0).device.name()}  {args.code}  Min-Max flooding, {args.iterations} it., no early stop"]
    launched = NbCudaDecoder(code, "minmax", "flooding", args.iterations, False, devices=[0], preset="latency",
                             resident=False)
    for _ in range(20):
        launched.decode(x)
    lines += report("launched", stamps(launched, tasks, levels), neighbours, args.iterations)
    launched.close()
    res = NbCudaDecoder(code, "minmax", "flooding", args.iterations, False, devices=[0], preset="latency")
    pinned = res.pinned_llr(1, "bits")
    pinned[:] = x
    kernel, address = res._small.resident, mapped_address(pinned)
    for _ in range(200):
        kernel.post(1, address)
        kernel.wait()
    lines += report("resident", stamps(res, tasks, levels), neighbours, args.iterations)
    res.close()
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

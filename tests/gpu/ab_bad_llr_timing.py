"""A/B timing of the kernels' LLR load before and after the non-finite rule (kernels/llr_load.cuh).

Kernel-only time (CUDA events: CudaDecoder.kernel_seconds, inputs resident) of WiMAX 2304 r1/2,
NMS layered, 10 iterations, no early stop: the throughput kernels (float32 messages with float32
and float16 input; binary16 messages with float16 and float32 input) on one launch of the
decoder's chunk, and the latency kernel on 1 and 6 frames; with clean LLRs, and (``+bad``) with
1 % of the frames holding a NaN.  Each variant runs in its own process (the kernels come from
GPULDPC_KERNEL_DIR), in turns A B A B ..., so that drift shows as spread:

    python tests/gpu/ab_bad_llr_timing.py OLD_FATBIN_DIR NEW_FATBIN_DIR [rounds] [json_out]

Not a test (pytest does not collect it); run on the GPU machine with python/ on PYTHONPATH.
"""
import json
import os
import subprocess
import sys

import numpy as np

CODE = "wimax-2304-1/2"
CONFIGS = {  # name: CudaDecoder options, frames (None: the decoder's chunk), repeats
    "ms f32 in": (dict(), None, 30),
    "ms f16 in": (dict(llr_dtype="float16"), None, 30),
    "hs f16 in": (dict(precision="float16", llr_dtype="float16"), None, 30),
    "hs f32 in": (dict(precision="float16"), None, 30),
    "latency 1": (dict(preset="latency", resident=False), 1, 400),
    "latency 6": (dict(preset="latency", resident=False), 6, 400),
}
BAD = ("ms f32 in", "hs f16 in")          # also timed with 1 % bad frames


def child():
    import gpuldpc as gl
    from gpuldpc import cuda

    code = gl.codes.get(CODE)
    rng = np.random.default_rng(1)
    sigma = gl.channel.sigma_from_ebn0(2.0, code.k / code.n)
    out = {}
    for name, (opts, frames, repeats) in CONFIGS.items():
        dec = cuda.CudaDecoder(code, "nms", "layered", 10, early_stop=False, devices=[0], streams=1, **opts)
        count = frames or dec.engines[0].chunk
        # the all-zero codeword over BPSK/AWGN (no encoder needed)
        llr = (2.0 / sigma ** 2 * (1.0 + sigma * rng.standard_normal((count, code.n)))).astype(dec.llr_np_dtype)
        t = dec.kernel_seconds(llr, count, repeats)
        out[name] = dict(seconds=t, frames=count, kernel=dec.kernel, gbps=code.n * count / t / 1e9)
        if name in BAD:
            bad = llr.copy()
            rows = rng.choice(count, max(1, count // 100), replace=False)
            bad[rows, rng.integers(0, code.n, rows.size)] = np.nan
            got = dec.decode(bad)
            assert np.array_equal(np.flatnonzero(got.bad_llr), np.sort(rows)) or "OLD" in os.environ.get("AB_TAG", "")
            t = dec.kernel_seconds(bad, count, repeats)
            out[name + " +bad"] = dict(seconds=t, frames=count, kernel=dec.kernel, gbps=code.n * count / t / 1e9)
        dec.close()
    print("AB-RESULT " + json.dumps(out), flush=True)


def main():
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    runs = {"old": [], "new": []}
    for r in range(rounds):
        for tag, folder in (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old)):
            env = dict(os.environ, GPULDPC_KERNEL_DIR=os.path.abspath(folder), AB_TAG=tag.upper())
            text = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
                                  check=True).stdout
            runs[tag].append(json.loads(text.split("AB-RESULT ", 1)[1]))
            print(f"round {r} {tag} done", flush=True)
    rows = []
    print(f"{'config':<16} {'kernel':<28} {'frames':>6} {'old us (spread)':>22} {'new us (spread)':>22} {'new/old':>8}")
    for name in runs["new"][0]:
        line = {"config": name, "kernel": runs["new"][0][name]["kernel"], "frames": runs["new"][0][name]["frames"]}
        for tag in ("old", "new"):
            v = np.array([x[name]["seconds"] for x in runs[tag] if name in x]) * 1e6
            line[tag] = v.tolist()
        o, n = np.array(line["old"]), np.array(line["new"])
        ratio = n.mean() / o.mean() if o.size else float("nan")
        fmt = lambda v: f"{v.mean():9.1f} ({v.min():.1f}-{v.max():.1f})" if v.size else "-"  # noqa: E731
        print(f"{name:<16} {line['kernel']:<28} {line['frames']:>6} {fmt(o):>22} {fmt(n):>22} {ratio:8.4f}")
        rows.append(line)
    if len(sys.argv) > 4:
        with open(sys.argv[4], "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    child() if sys.argv[1:] == ["--child"] else main()

"""A/B timing of the kernels' LLR load before and after the non-finite rule (kernels/llr_load.cuh).

Kernel-only time (CUDA events: CudaDecoder.kernel_seconds, inputs resident) of WiMAX 2304 r1/2,
NMS layered, 10 iterations, no early stop: the throughput kernels (float32 messages with float32
and float16 input; binary16 messages with float16 and float32 input) on one launch of the
decoder's chunk, and the latency kernel on 1 and 6 frames; with clean LLRs, and (``+bad``) with
1 % of the frames holding a NaN.  Each variant runs in its own process (the kernels come from
GPULDPC_KERNEL_DIR), in turns A B A B ..., so that drift shows as spread:

    python tests/gpu/ab_bad_llr_timing.py [--rounds N] [--json OUT] NAME=FATBIN_DIR NAME=FATBIN_DIR ...

(the first variant is the baseline of the ratio column).

Not a test (pytest does not collect it); run on the GPU machine with python/ on PYTHONPATH.
"""
import json
import os
import subprocess
import sys

import numpy as np

CODE = "wimax-2304-1/2"
CONFIGS = {  # name: code, CudaDecoder options, frames (None: one launch of the decoder's chunk), repeats
    "ms f32 in": (CODE, dict(), None, 30),
    "ms f32 in 10560": (CODE, dict(chunk_frames=10560), None, 20),
    "ms f16 in": (CODE, dict(llr_dtype="float16"), None, 30),
    "hs f16 in": (CODE, dict(precision="float16", llr_dtype="float16"), None, 30),
    "hs f32 in": (CODE, dict(precision="float16"), None, 30),
    "latency 1": (CODE, dict(preset="latency", resident=False), 1, 400),
    "latency 6": (CODE, dict(preset="latency", resident=False), 6, 400),
    "ms8x16 2/3A": ("wimax-2304-2/3A", dict(), None, 30),
    "ms4x24 5/6": ("wimax-2304-5/6", dict(), None, 30),
}
BAD = ("ms f32 in", "hs f16 in")          # also timed with 1 % bad frames


def child():
    import gpuldpc as gl
    from gpuldpc import cuda

    rng = np.random.default_rng(1)
    out = {}
    for name, (code_name, opts, frames, repeats) in CONFIGS.items():
        code = gl.codes.get(code_name)
        sigma = gl.channel.sigma_from_ebn0(2.0 if code.k * 2 == code.n else 4.0, code.k / code.n)
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
            out[name + " +bad"] = dict(flagged=int(got.bad_llr.sum()), expected=int(rows.size))
            t = dec.kernel_seconds(bad, count, repeats)
            out[name + " +bad"].update(seconds=t, frames=count, kernel=dec.kernel, gbps=code.n * count / t / 1e9)
        dec.close()
    print("AB-RESULT " + json.dumps(out), flush=True)


def main(argv):
    rounds, out_json, variants = 3, None, []
    while argv:
        a = argv.pop(0)
        if a == "--rounds":
            rounds = int(argv.pop(0))
        elif a == "--json":
            out_json = argv.pop(0)
        else:
            variants.append(a.split("=", 1))
    runs = {tag: [] for tag, _ in variants}
    for r in range(rounds):
        order = variants if r % 2 == 0 else variants[::-1]
        for tag, folder in order:
            env = dict(os.environ, GPULDPC_KERNEL_DIR=os.path.abspath(folder))
            text = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
                                  check=True).stdout
            runs[tag].append(json.loads(text.split("AB-RESULT ", 1)[1]))
        print(f"round {r} done", flush=True)
    base = variants[0][0]
    rows = []
    head = f"{'config':<14} {'kernel':<26} {'frames':>6}"
    print(head + "".join(f" {tag + ' us (min-max)':>24} {'/' + base:>8}" for tag, _ in variants))
    for name in runs[base][0]:
        first = runs[base][0][name]
        line = {"config": name, "kernel": first["kernel"], "frames": first["frames"]}
        text = f"{name:<14} {first['kernel']:<26} {first['frames']:>6}"
        ref = np.mean([x[name]["seconds"] for x in runs[base]])
        for tag, _ in variants:
            v = np.array([x[name]["seconds"] for x in runs[tag]]) * 1e6
            line[tag] = v.tolist()
            if "flagged" in first:
                line[tag + " flagged"] = [x[name]["flagged"] for x in runs[tag]]
            text += f" {v.mean():9.1f} ({v.min():6.1f}-{v.max():6.1f}) {v.mean() / ref / 1e6:8.4f}"
        print(text)
        rows.append(line)
    if out_json:
        with open(out_json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    child() if sys.argv[1:] == ["--child"] else main(sys.argv[1:])

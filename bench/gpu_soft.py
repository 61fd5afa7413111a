"""What soft output costs (issue 16 item 2: <= 15 % of the throughput at float32), through
``gl.Decoder`` on the same GPU in one run: WiMAX 2304 r1/2, layered NMS, 10 iterations, no
early stop, page-locked float32 input, ``soft_output=None`` against ``"posterior"`` with
``soft_dtype="float32"`` (4 bytes a bit back over PCIe beside the 1 of the hard decisions) and
``"float16"`` (2 bytes, converted on the GPU), float32 and binary16 messages, the median of 7
calls of the preferred batch each; the cost of each soft dtype in % of the no-soft row.

    python3 bench/gpu_soft.py [--out DIR]
"""
import argparse
import json
import os
import sys

import numpy as np

import gpuldpc as gl
from gpu_nr import header, write_json
from timing import median_time


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    code = gl.codes.get("wimax-2304-1/2")
    settings = dict(algorithm="nms", schedule="layered", max_iterations=10, early_stop=False)
    rows = []
    for precision in ("float32", "float16"):
        for soft, soft_dtype in ((None, "float32"), ("posterior", "float32"), ("posterior", "float16")):
            dec = gl.Decoder(code, backend="cuda", devices=[0], precision=precision, soft_output=soft,
                             soft_dtype=soft_dtype, **settings)
            batch = dec.preferred_batch("throughput")
            pinned = dec.pinned_llr(batch)
            rng = np.random.default_rng(1)
            pinned[:] = gl.channel.transmit(code, code.encode(rng.integers(0, 2, (batch, code.k), np.uint8)), 2.0,
                                            rng)
            res = dec.decode(pinned)
            t = median_time(lambda: dec.decode(pinned), 7)
            rows.append(dict(api="gl.Decoder", input="pinned float32", code=code.name, precision=precision,
                             soft_output=soft, soft_dtype=soft_dtype if soft else None, llr_dtype="float32",
                             frames_per_batch=batch, coded_gbps=code.n * batch / t / 1e9,
                             fer=float((~res.valid).mean()), iterations=10, early_stop=False,
                             bytes_per_bit_out=1 + (np.dtype(soft_dtype).itemsize if soft else 0)))
            print(json.dumps(rows[-1]), flush=True)
            dec.close()
    for precision in ("float32", "float16"):
        plain, *softs = [r for r in rows if r["precision"] == precision and "coded_gbps" in r]
        rows += [dict(precision=precision, soft_dtype=r["soft_dtype"],
                      soft_cost=1 - r["coded_gbps"] / plain["coded_gbps"]) for r in softs]
    doc = header(rows=rows)
    stem = write_json(doc, args.out, "soft")
    lines = [f"{doc['gpu']}  driver {doc['driver']}  commit {doc['commit']}  {doc['date']}",
             "gl.Decoder, pinned float32 in, wimax-2304-1/2, layered NMS, 10 it, no early stop (coded Gb/s)"]
    lines += [f"{r['precision']:8s} soft_output={str(r['soft_output']):10s} {str(r['soft_dtype']):8s} "
              f"{r['frames_per_batch']:6d} frames {r['coded_gbps']:7.2f} Gb/s  (4 B a bit in, "
              f"{r['bytes_per_bit_out']} out)" for r in rows if "coded_gbps" in r]
    lines += [f"{r['precision']:8s} {r['soft_dtype']} soft output costs {100 * r['soft_cost']:.1f} %"
              for r in rows if "soft_cost" in r]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

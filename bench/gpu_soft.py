"""What soft output costs (issue 16 item 2: <= 15 % of the throughput at float32), through
``gl.Decoder`` on the same GPU in one run: WiMAX 2304 r1/2, layered NMS, 10 iterations, no
early stop, page-locked input, ``soft_output=None`` against ``"posterior"`` (float32 and
binary16 messages), the median of 7 calls of the preferred batch each.

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
        for soft in (None, "posterior"):
            dec = gl.Decoder(code, backend="cuda", devices=[0], precision=precision, soft_output=soft, **settings)
            batch = dec.preferred_batch("throughput")
            pinned = dec.pinned_llr(batch)
            rng = np.random.default_rng(1)
            pinned[:] = gl.channel.transmit(code, code.encode(rng.integers(0, 2, (batch, code.k), np.uint8)), 2.0,
                                            rng)
            res = dec.decode(pinned)
            t = median_time(lambda: dec.decode(pinned), 7)
            rows.append(dict(api="gl.Decoder", input="pinned float32", code=code.name, precision=precision,
                             soft_output=soft, frames_per_batch=batch, coded_gbps=code.n * batch / t / 1e9,
                             fer=float((~res.valid).mean()), iterations=10, early_stop=False))
            print(json.dumps(rows[-1]), flush=True)
            dec.close()
    for precision in ("float32", "float16"):
        plain, soft = (r["coded_gbps"] for r in rows if r["precision"] == precision)
        rows.append(dict(precision=precision, soft_cost=1 - soft / plain))
    doc = header(rows=rows)
    stem = write_json(doc, args.out, "soft")
    lines = [f"{doc['gpu']}  driver {doc['driver']}  commit {doc['commit']}  {doc['date']}",
             "gl.Decoder, pinned float32 in, wimax-2304-1/2, layered NMS, 10 it, no early stop (coded Gb/s)"]
    lines += [f"{r['precision']:8s} soft_output={str(r['soft_output']):10s} {r['frames_per_batch']:6d} frames "
              f"{r['coded_gbps']:7.2f} Gb/s" for r in rows if "coded_gbps" in r]
    lines += [f"{r['precision']:8s} soft output costs {100 * r['soft_cost']:.1f} %" for r in rows if "soft_cost" in r]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

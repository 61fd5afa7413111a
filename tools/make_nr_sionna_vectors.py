"""Writes Sionna's 5G NR encoder output on a grid (tests/codes/data/nr_sionna_vectors.npz)
and its decoder's frame errors on stored LLRs (tests/decoders/data/nr_sionna_decoder.npz).

Run in a virtual environment holding Sionna (the ``sionna`` wheel with PyTorch, CPU is
enough), not the project's venv (Sionna needs NumPy 2, GNU Radio NumPy 1.24)::

    python3 -m venv /tmp/sionna-venv
    /tmp/sionna-venv/bin/pip install torch numpy scipy importlib-resources h5py matplotlib
    /tmp/sionna-venv/bin/pip install --no-deps sionna-2.2.0-py3-none-any.whl
    /tmp/sionna-venv/bin/python tools/make_nr_sionna_vectors.py

The grid covers both base graphs and all eight lifting-size sets (iLS 0..7), filler bits,
the redundancy versions 0..3 (Sionna's ``rv=[...]``) and the bit interleaver
(``num_bits_per_symbol``).  Per case the file keeps k, n, the redundancy versions, Qm (0:
none), the random information bits and Sionna's output, packed (numpy.packbits); the
test (tests/codes/test_nr.py) encodes the same bits with ``gpuldpc.codes.nr`` and
compares bit for bit.

Decoder: per case, BPSK/AWGN LLRs (positive means 0) of random rate-matched codewords,
rounded to steps of 1/4 and kept as int8 (L = q / 4), Sionna's ``LDPC5GDecoder`` (flooding
belief propagation, "boxplus-phi", 20 iterations, no early stop; its input is the logit
-L) on exactly those LLRs, and its per-frame error flags on the k information bits.
"""
import pathlib
import sys

import numpy as np
import sionna
import torch
from sionna.phy.fec.ldpc import LDPC5GEncoder

# (k, n, redundancy versions, Qm or 0); the comment gives base graph, Zc (iLS) as chosen.
CASES = [
    (8448, 12672, (0, 1, 2, 3), 0),   # BG1 384 (1)
    (5500, 7000, (0,), 0),            # BG1 256 (0)
    (6800, 9000, (0, 2), 0),          # BG1 320 (2)
    (4900, 6000, (0,), 0),            # BG1 224 (3)
    (6000, 8000, (0,), 4),            # BG1 288 (4), 16-QAM interleaver
    (7700, 10000, (0, 3), 0),         # BG1 352 (5)
    (4500, 6000, (0, 1), 0),          # BG1 208 (6)
    (5200, 6500, (0,), 0),            # BG1 240 (7)
    (400, 500, (0, 1, 2, 3), 0),      # BG1 20 (2), fillers
    (300, 400, (0,), 2),              # BG1 14 (3), fillers, QPSK interleaver
    (4000, 12000, (0, 2), 0),         # BG1 192 (1), rate 1/3
    (3840, 19200, (0, 1, 2, 3), 0),   # BG2 384 (1), rate 1/5
    (12, 60, (0, 1, 2, 3), 0),        # BG2 2 (0), K_b = 6
    (36, 100, (0,), 0),               # BG2 6 (1)
    (60, 120, (0, 2), 0),             # BG2 10 (2)
    (40, 80, (0,), 0),                # BG2 7 (3)
    (100, 300, (0, 3), 0),            # BG2 18 (4)
    (64, 128, (0,), 0),               # BG2 11 (5)
    (75, 160, (0, 1), 0),             # BG2 13 (6)
    (85, 170, (0,), 0),               # BG2 15 (7)
    (170, 400, (0,), 0),              # BG2 30 (7)
    (200, 600, (0, 1, 2, 3), 6),      # BG2 26 (6), K_b = 8, 64-QAM interleaver
    (600, 1000, (0,), 0),             # BG2 72 (4), K_b = 9
    (1000, 2000, (0, 2), 0),          # BG2 104 (6), K_b = 10
    (2500, 5000, (0,), 0),            # BG2 256 (0)
    (3000, 9000, (0, 1, 2, 3), 0),    # BG2 320 (2)
]


def main(out=pathlib.Path(__file__).resolve().parents[1] / "tests/codes/data/nr_sionna_vectors.npz"):
    rng = np.random.default_rng(20261125)
    arrays = {}
    for i, (k, n, rvs, qm) in enumerate(CASES):
        enc = LDPC5GEncoder(k, n, num_bits_per_symbol=qm or None, device="cpu")
        info = rng.integers(0, 2, (2, k)).astype(np.float32)
        got = enc(torch.tensor(info), rv=list(rvs)).numpy().astype(np.uint8)   # [2, len(rvs), n]
        arrays[f"case{i}"] = np.array([k, n, qm, enc.z, 1 if enc._bg == "bg1" else 2] + list(rvs))
        arrays[f"info{i}"] = np.packbits(info.astype(np.uint8), axis=-1)
        arrays[f"out{i}"] = np.packbits(got, axis=-1)
        # rv=None (the plain call) must be rv 0
        plain = enc(torch.tensor(info)).numpy().astype(np.uint8)
        assert rvs[0] != 0 or np.array_equal(plain, got[:, 0]), (k, n)
        print(f"k={k} n={n} bg={enc._bg} z={enc.z} rvs={rvs} qm={qm}")
    arrays["sionna_version"] = np.array(sionna.__version__)
    np.savez_compressed(out, **arrays)
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


DECODER_CASES = [(500, 1000, 1.25, 160), (1200, 1700, 2.25, 96)]   # (k, n, Eb/N0 dB, frames)


def decoder_vectors(out=pathlib.Path(__file__).resolve().parents[1] / "tests/decoders/data/nr_sionna_decoder.npz"):
    from sionna.phy.fec.ldpc import LDPC5GDecoder

    rng = np.random.default_rng(20261126)
    arrays = {}
    for i, (k, n, ebn0, frames) in enumerate(DECODER_CASES):
        enc = LDPC5GEncoder(k, n, device="cpu")
        dec = LDPC5GDecoder(enc, num_iter=20, device="cpu")
        info = rng.integers(0, 2, (frames, k)).astype(np.float32)
        x = enc(torch.tensor(info)).numpy()
        sigma = np.sqrt(1 / (2 * (k / n) * 10 ** (ebn0 / 10)))
        llr = 2 * ((1 - 2 * x) + sigma * rng.standard_normal(x.shape)) / sigma ** 2
        q = np.clip(np.round(4 * llr), -127, 127).astype(np.int8)
        hat = dec(torch.tensor(-q.astype(np.float32) / 4)).numpy()
        errors = (hat != info).any(axis=1)
        arrays[f"case{i}"] = np.array([k, n, int(ebn0 * 100), frames])
        arrays[f"info{i}"] = np.packbits(info.astype(np.uint8), axis=-1)
        arrays[f"llr4_{i}"] = q
        arrays[f"errors{i}"] = errors
        print(f"decoder k={k} n={n} bg={enc._bg} z={enc.z} Eb/N0={ebn0}: {errors.sum()} of {frames} frames in error")
    arrays["sionna_version"] = np.array(sionna.__version__)
    out.parent.mkdir(exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
    decoder_vectors()

"""GF(q) block shapes by measurement: the model's first few shapes timed on the device, the fastest kept.

:func:`.nb_layout.ranked_shapes` scores every block shape of a GF(q) throughput kernel from the
device's limits (rows busy, barrier waits, the L2); its constants were fitted on one GPU (the H200)
and the score misses what it does not model: on the H200 gf32-837-726 MMMA ran 213.7 Mb/s kernel only
in the model's 2 blocks of 11 rows against 224.2 in 5 blocks of 4 rows, gf64-1512-1325 MMMA 115.9 in
4 x 3 rows against 125.2 in 3 x 4 (``bench/results/h200-nb-shapes.txt``).  So a decoder of the
throughput preset whose shape is not forced (``units=None``) times the model's first
:data:`CANDIDATES` shapes, each on one full wave of its own (``sm_count x blocks`` frames: the
frames a launch keeps resident, the throughput a chunk of whole waves sees) of noise bit LLRs
(never a codeword, so every iteration runs), in :data:`ROUNDS` rounds after one launch to warm up,
and keeps the shape of the most frames a second (each shape's best round), the model's first unless
another beats it by more than :data:`SAME`.  The decisions do not depend on the shape (the kernels
are bit-exact for any block shape); only the speed does.

One measurement a process per (device, kernel, code, settings): later decoders of the same key reuse
it (:data:`measured`).  ``GPULDPC_NB_AUTOTUNE=0`` in the environment turns it off (the model's first
shape, nothing timed).
"""
from __future__ import annotations

import os

CANDIDATES = 4      # the model's best shapes timed
ROUNDS = 2          # timed launches of each shape, alternated (after one warm-up launch)
SAME = 0.02         # another shape must beat the model's first by more than this share
ENV = "GPULDPC_NB_AUTOTUNE"

measured: dict = {}   # key -> (units of the chosen shape, {units: frames per second})


def enabled() -> bool:
    """False where ``GPULDPC_NB_AUTOTUNE=0``."""
    return os.environ.get(ENV, "1").strip() != "0"


def fastest(shapes, seconds_of, rounds: int = ROUNDS):
    """(shape, {units: frames per second}) of ``shapes`` (the model's ranking, best first).

    ``seconds_of(shape) -> (frames, seconds)`` runs one timed launch; the first shape runs once
    more before, untimed (module loads, clocks).  A shape's rate is frames over its best round's
    seconds; the model's first is kept unless another's rate exceeds it by more than ``SAME``."""
    seconds_of(shapes[0])
    best = {}
    for _ in range(rounds):
        for shape in shapes:
            frames, seconds = seconds_of(shape)
            best[shape.units] = max(best.get(shape.units, 0.0), frames / seconds)
    pick = max(shapes, key=lambda shape: best[shape.units])
    if best[pick.units] <= (1.0 + SAME) * best[shapes[0].units]:
        pick = shapes[0]
    return pick, best

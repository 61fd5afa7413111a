"""Launch shapes by measurement: the model's first few shapes timed on the device, the fastest kept.

The throughput kernels' shapes come from models of the device's limits: frames a block for the
binary kernels (:func:`.tuning.ranked_shapes`: the most useful resident threads, ties to fewer
frames a block), check rows a block for the GF(q) kernels (:func:`.nb_layout.ranked_shapes`: rows
busy, barrier waits, the L2).  The models miss what they do not model.  Measured on the H200
(``bench/results/h200-nb-shapes.txt``, ``h200-autotune-binary-fpb-sweep.txt``): gf32-837-726 MMMA ran 213.7 Mb/s
kernel only in the model's 2 blocks of 11 rows against 224.2 in 5 blocks of 4 rows, gf64-1512-1325
MMMA 115.9 in 4 x 3 rows against 125.2 in 3 x 4; the binary16 WiMAX 2304 r1/2 kernel 56.6 Gb/s
with the model's one frame pair a block against 58.4 with two (the same resident threads: a tie
the model breaks the other way).

So a decoder of the throughput preset whose shape is not forced (``frames_per_block`` /
``units`` None) times the model's first :data:`CANDIDATES` shapes (:func:`measured_shape`) on
the launches it will make: each on :data:`WAVES` waves of its own (a wave: the frames a launch
keeps resident; the throughput preset's chunk is two), or on the decoder's ``chunk_frames`` where
it was given (one launch of 131072 WiMAX frames ran two frame pairs a block 3 % faster than one,
chunks of two waves from int8 LLRs within 1 %), of noise LLRs (never a codeword, so every
iteration runs), in :data:`ROUNDS` alternated rounds after one launch to warm up, and keeps the shape of the most
frames a second (each shape's best round): the model's first unless another beats it by more
than :data:`SAME`.  The kernels decide the same for any shape (each block decodes its own
frames); only the speed depends on it.

One measurement a process per (device, kernel, code, settings): later decoders of the same key
reuse it (:data:`measured`).  ``GPULDPC_AUTOTUNE=0`` in the environment turns it off (the model's
first shape, nothing timed).
"""
from __future__ import annotations

import os

from .driver import driver

CANDIDATES = 4      # the model's best shapes timed
WAVES = 2           # waves a timed launch (the throughput preset's chunk)
ROUNDS = 2          # timed launches of each shape, alternated (after one warm-up launch)
SAME = 0.02         # another shape must beat the model's first by more than this share
ENV = "GPULDPC_AUTOTUNE"
MEMORY_SHARE = 8    # the buffers of the launches timed take at most 1 / this of the free device memory

measured: dict = {}   # key -> (the chosen shape, {shape: frames a second})


def enabled() -> bool:
    """False where ``GPULDPC_AUTOTUNE=0``."""
    return os.environ.get(ENV, "1").strip() != "0"


def fastest(shapes, seconds_of, rounds: int = ROUNDS):
    """(shape, {shape: frames a second}) of ``shapes`` (the model's ranking, best first).

    ``seconds_of(shape) -> (frames, seconds)`` runs one timed launch; the first shape runs once
    more before, untimed (clocks, caches).  A shape's rate is frames over its best round's
    seconds; the model's first is kept unless another's rate exceeds it by more than ``SAME``."""
    seconds_of(shapes[0])
    best = {}
    for _ in range(rounds):
        for shape in shapes:
            frames, seconds = seconds_of(shape)
            best[shape] = max(best.get(shape, 0.0), frames / seconds)
    pick = max(shapes, key=best.get)
    return (pick if best[pick] > (1.0 + SAME) * best[shapes[0]] else shapes[0]), best


def measured_shape(plan, ctx, shapes, key, noise, kind: str, chunk: int | None = None):
    """The shape ``plan`` launches in, and {shape: frames a second} where shapes were timed (else None).

    ``shapes``: the model's ranking; ``key``: what the choice depends on besides the device
    (kernel, code, settings); ``noise()``: a few frames of input in the kernel's format, repeated
    over each launch; ``kind``: the input kind of ``plan.launch``; ``chunk``: the frames of every
    timed launch (None: :data:`WAVES` waves of each shape).  ``plan`` gives
    ``use_shape(shape)``, ``wave_frames(shape)``, ``launch``, ``scratch_bytes(frames)``,
    ``bits_width`` and ``soft_width`` (float32 values a frame)."""
    if len(shapes) < 2 or not enabled():
        return shapes[0], None
    shapes = shapes[:CANDIDATES]
    key = (ctx.id, ctx.name, chunk) + tuple(key)
    if key not in measured:
        count = {shape: chunk or WAVES * plan.wave_frames(shape) for shape in shapes}
        measured[key] = _measure(plan, ctx, shapes, noise, kind, count)
    return measured[key]


def _measure(plan, ctx, shapes, noise, kind, count):
    """:func:`fastest` of ``shapes``, each timed on launches of ``count[shape]`` frames of ``noise()``
    in device memory; the model's first and nothing timed where fewer than two shapes' launches fit
    in a 1 / :data:`MEMORY_SHARE` of the free device memory."""
    drv = driver()
    rows = noise()
    per_frame = plan.scratch_bytes(1) + rows[0].nbytes + plan.bits_width + 5 + 4 * plan.soft_width
    fit = [shape for shape in shapes if count[shape] * per_frame <= ctx.free_memory() // MEMORY_SHARE]
    if len(fit) < 2 or fit[0] != shapes[0]:
        return shapes[0], None
    frames = max(count[shape] for shape in fit)
    dev_in = drv.mem_alloc(frames * rows[0].nbytes)
    for first in range(0, frames, len(rows)):
        drv.memcpy_htod(int(dev_in) + first * rows[0].nbytes, rows[:frames - first])
    iters_at = (frames * plan.bits_width + 15) & ~15                # decisions, iterations, flags, soft output
    soft_at = (iters_at + 5 * frames + 15) & ~15
    outputs = drv.mem_alloc(soft_at + 4 * frames * plan.soft_width)
    base = int(outputs)
    out = (base, base + iters_at, base + iters_at + 4 * frames, base + soft_at if plan.soft_width else 0)
    scratch_bytes = plan.scratch_bytes(frames)
    scratch = drv.mem_alloc(scratch_bytes) if scratch_bytes else None
    stream, start, stop = drv.Stream(), drv.Event(), drv.Event()

    def seconds_of(shape):
        plan.use_shape(shape)
        start.record(stream)
        plan.launch(stream, count[shape], dev_in, kind, out, scratch, frames)
        stop.record(stream)
        stop.synchronize()
        return count[shape], stop.time_since(start) * 1e-3

    try:
        return fastest(fit, seconds_of)
    finally:
        for buffer in (dev_in, outputs, scratch):
            if buffer is not None:
                buffer.free()

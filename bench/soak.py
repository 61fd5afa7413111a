#!/usr/bin/env python3
"""Soak: a receive stream decoded for a given time with bursts of bad frames; nothing lost.

    python bench/soak.py --path block --backend cpu --seconds 600          # GNU Radio flowgraph
    python bench/soak.py --path core --backend cuda --seconds 300 --out $OUT # no GNU Radio

Frames carry :func:`gpuldpc.framing.payload` (32-bit sequence number + PRBS), encoded and
sent by BPSK over AWGN at Eb/N0 = 4 dB (LLRs in GNU Radio's sign, positive = bit 1).  The
noise rows come from a fixed pool of 512, each along its frame's bits, y = (2b - 1)(1 + n):
the decoders are sign-symmetric, so a frame decodes as its noise row does whatever its
payload, and every row of the pool decodes at 4 dB.  A good frame decoded wrong is then the
stream's fault, never the channel's.  (With y = 2b - 1 + n, until 5202a64, each payload met
a new effective noise: one good frame in 1.5 M failed to decode in a CI run, none in the 28 M
of the committed soaks.)  The source delivers 1 to 256 frames at a time, at random, as a
live framer does, so the decoder sees batches of every size from the start.
``--bad-fraction`` of them (1 %) are spoiled, in bursts of consecutive frames (1 to 16
frames; one burst in ten 64 to 256 frames, a batch or more), the bursts' kinds in turn:

* ``nan``:  NaN over a stretch of the frame (a quarter of them: the whole frame);
* ``inf``:  +-inf over a stretch, the sign of the received value (a noise estimate of 0);
* ``zero``: the whole frame 0 (a blanked frame);
* ``huge``: +-1e30 over a stretch, the sign of the received value (finite).

Only ``nan`` and ``inf`` frames are non-finite: the decoder counts them (``bad_llr_frames``)
and, with ``--on-bad-llr erase`` (the blocks' default), decodes them with NaN erased and
+-inf saturated and marks them; ``drop`` leaves them out.  ``zero`` and ``huge`` frames are
finite, so they are decoded like any frame and not counted: what each kind decoded to (the
sent payload, all zeros, valid or not) is reported.

Paths:

* ``block``: a GNU Radio flowgraph, source -> ``gpuldpc.ldpc_decoder`` -> checking sink;
  each frame carries a ``seq`` stream tag, which the decoder must move with its frame.
* ``core``: no GNU Radio (the GPU machine has none).  A producer thread makes the frames
  into a bounded queue, taken into an input buffer (:class:`BlockWork`); a work thread drives
  :class:`gpuldpc.streaming.StreamDecoder` as the block's ``general_work`` does, one batch
  in flight (``StreamDecoder.work`` where the stream has it, else the same step written
  out): the frames after the batch in flight are handed over (``submit``), then the batch
  in flight is finished (``finish``) and only then consumed; with nothing more waiting, a
  call finishes its own batch at once.

Checked: every frame made leaves the decoder once, in order, unless dropped by the
``drop`` policy (only ``nan``/``inf`` frames may be); every good frame's bits are its
payload; ``bad_llr_frames`` = ``nan`` + ``inf`` frames made and only those are marked.
Sampled each second: resident set size (``/proc/self/statm``) and, on the cuda backend,
device memory in use (``mem_get_info`` in the decoder's context).  Figures of merit: RSS
and device memory at the end within ``--bound`` (5 %) of their value at the end of the
warm-up (``--warmup``, default the first minute; a quarter of runs shorter than four
minutes).  Diagnostics beside them, to tell a leak from an allocator keeping what was
freed: the C heap in use and held (glibc ``mallinfo2``), Python's allocated blocks, the
largest rise between two samples and the slope over the second half of the run.

Exit status 1 when a frame is lost, repeated, reordered or wrong, a count is off, or
memory left the bound.  ``--out DIR`` writes ``DIR/<host>-soak-<path>-<backend>.json``
(bench results format, one row, ``api`` "GNU Radio block" or "block work path") and
``.txt`` (the summary printed).  The soak's rate is its source's (Python, about 15 000
frames/s here), not the decoder's: ``decoder busy`` is the decoder's own figure.
"""
from __future__ import annotations

import argparse
import collections
import ctypes
import datetime
import json
import os
import platform
import queue
import re
import subprocess
import sys
import threading
import time

import numpy as np

import gpuldpc as gl
from gpuldpc import framing
from gpuldpc.streaming import StreamDecoder

PAGE = os.sysconf("SC_PAGE_SIZE")
KINDS = ("nan", "inf", "zero", "huge")
NON_FINITE = ("nan", "inf")
GOOD = -1
"""Frame kinds: ``GOOD`` or ``2 * KINDS.index(kind) + whole`` (whole: the whole frame spoiled)."""
HUGE = np.float32(1e30)
NOISE_POOL = 512
SHORT_BURST, LONG_BURST, LONG_SHARE = (1, 16), (64, 256), 0.1
"""Burst lengths (frames, both ends included): short ones, and a share of long ones."""
EBN0_DB = 4.0
BOUNDED = ("rss", "gpu")
"""The memory figures held to the bound; the C heap's (``malloc_*``) are diagnostics."""


def rss_bytes() -> int:
    """Resident set size of this process (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def kind_name(code: int) -> str:
    return KINDS[code // 2] + (" (whole frame)" if code % 2 else " (stretch)")


class FrameMaker:
    """Frames ``0, 1, 2, ...``: payloads, their LLRs in GNU Radio's sign, bad bursts.

    ``make(count)`` returns ``(seqs int64 [count], info uint8 [count, k], kinds int8
    [count], llr float32 [count, n])``.  The noise is drawn from a pool of
    ``NOISE_POOL`` rows (a row per frame at random), so that making frames costs little
    beside decoding them; the payloads differ in every frame.  A row's noise points along
    the frame's bits, LLR = (2b - 1)(1 + n) 2 / sigma^2, so that a good frame decodes as its
    row does (see the module docstring).
    """

    def __init__(self, code, bad_fraction: float = 0.01, seed: int = 1, ebn0_db: float = EBN0_DB):
        if not 0.0 <= bad_fraction < 0.5:
            raise ValueError(f"bad_fraction must lie in [0, 0.5), got {bad_fraction!r}")
        self.code, self.seed, self.bad_fraction = code, seed, bad_fraction
        self.rng = np.random.default_rng([seed, 19])
        sigma = gl.channel.sigma_from_ebn0(ebn0_db, code.rate)
        self.scale = np.float32(2.0 / sigma ** 2)
        self.noise = (sigma * self.rng.standard_normal((NOISE_POOL, code.n))).astype(np.float32)
        self.made = 0
        self.bursts = 0
        self._burst_left = 0
        self._burst_kind = 0
        self._gap = self._next_gap()

    def _burst_length(self) -> int:
        low, high = LONG_BURST if self.rng.random() < LONG_SHARE else SHORT_BURST
        return int(self.rng.integers(low, high + 1))

    def _next_gap(self) -> int:
        """Good frames before the next burst: geometric, mean L (1 - f) / f for mean burst L."""
        if self.bad_fraction == 0:
            return 1 << 62
        mean_burst = (1 - LONG_SHARE) * sum(SHORT_BURST) / 2 + LONG_SHARE * sum(LONG_BURST) / 2
        return int(self.rng.geometric(self.bad_fraction / (mean_burst * (1 - self.bad_fraction))))

    def kinds(self, count: int) -> np.ndarray:
        """The kinds of the next ``count`` frames (``GOOD`` or a kind code): the burst schedule."""
        kinds = np.full(count, GOOD, dtype=np.int8)
        i = 0
        while i < count:
            if self._burst_left == 0:
                step = min(self._gap, count - i)
                self._gap -= step
                i += step
                if self._gap == 0:
                    self._burst_left = self._burst_length()
                    self._burst_kind = self.bursts % len(KINDS)
                    self.bursts += 1
                    self._gap = self._next_gap()
                continue
            step = min(self._burst_left, count - i)
            whole = self.rng.random(step) < 0.25
            if KINDS[self._burst_kind] == "zero":
                whole[:] = True
            kinds[i:i + step] = 2 * self._burst_kind + whole
            self._burst_left -= step
            i += step
        return kinds

    def _spoil(self, row: np.ndarray, code: int):
        n = row.size
        start, stop = 0, n
        if not code % 2:
            start = int(self.rng.integers(0, n))
            stop = min(n, start + int(self.rng.integers(1, n + 1)))
        kind = KINDS[code // 2]
        part = row[start:stop]
        if kind == "nan":
            part[:] = np.nan
        elif kind == "inf":
            part[:] = np.copysign(np.float32(np.inf), part)
        elif kind == "zero":
            part[:] = 0.0
        else:
            part[:] = np.copysign(HUGE, part)

    def chunk(self, most: int) -> int:
        """Frames the source delivers at once: 1 to ``most`` at random, as a live receiver's
        framer does; so the decoder sees batches of every size from the start (its buffers
        and the allocator reach their steady state within the warm-up)."""
        return int(self.rng.integers(1, most + 1))

    def make(self, count: int, out: np.ndarray | None = None):
        """The next ``count`` frames; their LLRs written into ``out`` (float32 [count, n])
        when given (a GNU Radio output buffer), else into a new array.  No other
        frame-sized temporaries: the harness's own allocations stay small and steady."""
        seqs = np.arange(self.made, self.made + count, dtype=np.int64)
        info = np.stack([framing.payload(int(s), self.code.k, self.seed) for s in seqs])
        bits = self.code.encode(info)
        llr = np.take(self.noise, self.rng.integers(0, len(self.noise), count), axis=0, out=out)
        llr += 1.0                                     # GNU Radio sign: bit b -> (2b - 1)(1 + n)
        np.negative(llr, out=llr, where=bits == 0)
        llr *= self.scale
        kinds = self.kinds(count)
        for i in np.flatnonzero(kinds != GOOD):
            self._spoil(llr[i], int(kinds[i]))
        self.made += count
        return seqs, info, kinds, llr


class Checker:
    """What left the decoder against what was sent (thread safe: sender and receiver may differ).

    ``sent(seqs, info, kinds)`` records frames as they enter; ``received(seqs, bits,
    flagged, valid)`` checks frames as they leave (``seqs``: the sequence number each
    output frame was sent with, from its tag or the batch's ``kept`` index; ``flagged``:
    marked ``bad_llr`` by the decoder); ``close()`` counts the frames never received.
    A frame not received is ``dropped`` when the ``drop`` policy may drop it (a ``nan`` or
    ``inf`` frame), else ``lost``.
    """

    def __init__(self, k: int, on_bad_llr: str = "erase"):
        self.k, self.on_bad_llr = k, on_bad_llr
        self._lock = threading.Lock()
        self._sent = collections.deque()       # (first seq, info, kinds) not yet received
        self.next = 0                           # lowest sequence number not yet accounted for
        self.made = 0
        self.received_frames = 0
        self.out_of_order = 0
        self.lost = 0
        self.lost_first = []
        self.dropped = 0
        self.good = self.good_wrong = self.bit_errors = 0
        self.good_wrong_valid = 0               # wrong, yet syndrome zero: another frame's bits?
        self.mismarked = 0
        self.untagged = 0                       # block path: frames out without their seq tag
        self.made_kind = collections.Counter()
        self.outcomes = {}      # kind code -> Counter(out, flagged, valid, payload, all_zero)

    def sent(self, seqs, info, kinds):
        with self._lock:
            self._sent.append((int(seqs[0]), info, kinds))
            self.made += len(seqs)
            for code, count in zip(*np.unique(kinds[kinds != GOOD], return_counts=True)):
                self.made_kind[int(code)] += int(count)

    def _take(self, stop: int):
        """(info, kinds) of the frames ``self.next .. stop - 1``, forgotten here."""
        infos, kinds = [], []
        need = self.next
        while need < stop:
            if not self._sent:
                raise RuntimeError(f"soak: frame {stop - 1} received but only {need} frames were sent")
            first, info, kind = self._sent[0]
            lo, hi = need - first, min(stop - first, len(kind))
            infos.append(info[lo:hi])
            kinds.append(kind[lo:hi])
            need = first + hi
            if hi == len(kind):
                self._sent.popleft()
        return (np.concatenate(infos) if infos else np.zeros((0, self.k), np.uint8),
                np.concatenate(kinds) if kinds else np.zeros(0, np.int8))

    def _skipped(self, kinds):
        droppable = np.isin(kinds // 2, [KINDS.index(k) for k in NON_FINITE]) & (kinds != GOOD)
        if self.on_bad_llr == "drop":
            self.dropped += int(np.count_nonzero(droppable))
            missing = ~droppable
        else:
            missing = np.ones(kinds.size, dtype=bool)
        if missing.any():
            self.lost += int(np.count_nonzero(missing))
            if len(self.lost_first) < 8:
                self.lost_first += (self.next + np.flatnonzero(missing)[:8]).tolist()

    def received(self, seqs, bits, flagged, valid):
        seqs = np.asarray(seqs, dtype=np.int64)
        if seqs.size == 0:
            return
        with self._lock:
            self.received_frames += seqs.size
            # a frame not above every earlier one was repeated or reordered: counted, not checked
            before = np.maximum.accumulate(np.concatenate(([self.next - 1], seqs[:-1])))
            ahead = seqs > before
            self.out_of_order += int(np.count_nonzero(~ahead))
            seqs, bits = seqs[ahead], np.asarray(bits)[ahead]
            flagged, valid = np.asarray(flagged, bool)[ahead], np.asarray(valid, bool)[ahead]
            if seqs.size == 0:
                return
            info, kinds = self._take(int(seqs[-1]) + 1)
            got = np.zeros(kinds.size, dtype=bool)
            got[seqs - self.next] = True
            self._skipped(kinds[~got])
            info, kinds = info[got], kinds[got]
            errors = np.count_nonzero(bits != info, axis=1)
            good = kinds == GOOD
            self.good += int(np.count_nonzero(good))
            self.good_wrong += int(np.count_nonzero(errors[good]))
            self.good_wrong_valid += int(np.count_nonzero(errors[good & valid]))
            self.bit_errors += int(errors[good].sum())
            non_finite = np.isin(kinds // 2, [KINDS.index(k) for k in NON_FINITE]) & ~good
            self.mismarked += int(np.count_nonzero(flagged != non_finite))
            for i in np.flatnonzero(~good):
                tally = self.outcomes.setdefault(int(kinds[i]), collections.Counter())
                tally["out"] += 1
                tally["flagged"] += bool(flagged[i])
                tally["valid"] += bool(valid[i])
                tally["payload"] += errors[i] == 0
                tally["all_zero"] += not bits[i].any()
            self.next = int(seqs[-1]) + 1

    def close(self):
        """Count the frames sent after the last one received (lost, or dropped by policy)."""
        with self._lock:
            if self.next < self.made:
                _, kinds = self._take(self.made)
                self._skipped(kinds)
                self.next = self.made

    def counts(self) -> dict:
        made_bad = sum(self.made_kind.values())
        return {
            "frames_in": self.made, "frames_out": self.received_frames,
            "dropped_by_policy": self.dropped, "lost": self.lost, "lost_first": self.lost_first,
            "out_of_order": self.out_of_order, "untagged": self.untagged,
            "good_frames": self.made - made_bad, "good_frames_out": self.good,
            "good_frames_wrong": self.good_wrong, "good_frames_wrong_valid": self.good_wrong_valid,
            "good_bit_errors": self.bit_errors,
            "bad_frames_made": made_bad,
            "non_finite_frames_made": sum(c for code, c in self.made_kind.items()
                                          if KINDS[code // 2] in NON_FINITE),
            "bad_frames_mismarked": self.mismarked,
            "bad_frames": {kind_name(code): dict(made=self.made_kind[code],
                                                 **{key: int(self.outcomes.get(code, {}).get(key, 0))
                                                    for key in ("out", "flagged", "valid", "payload",
                                                                "all_zero")})
                           for code in sorted(self.made_kind)},
        }


# ------------------------------------------------------------------ memory sampling
def gpu_memory_probe(stream: StreamDecoder):
    """A function returning the device memory in use (bytes) on the stream's first GPU,
    read inside the decoder's own context; None off the cuda backend."""
    if stream.backend != "cuda":
        return None
    from gpuldpc import cuda

    impl = getattr(stream.decoder, "_impl", None)             # gpuldpc.decoders.cuda's adapter
    devices = getattr(getattr(impl, "decoder", impl), "devices", None)   # CudaDecoder.devices
    ctx = devices[0] if devices else cuda.DeviceContext(0)    # (the same primary context)
    drv = cuda.driver()

    def used() -> int:
        with ctx.current():            # the primary context pushed on this thread, no lock
            free, total = drv.mem_get_info()
        return total - free

    return used


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                 "fordblks", "keepcost")]


def _mallinfo2():
    try:
        fn = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = _Mallinfo2
    return fn


_MALLINFO2 = _mallinfo2()


def malloc_figures() -> tuple[int | None, int | None]:
    """(bytes the C heap has handed out and not got back, bytes it holds): glibc
    ``mallinfo2``, every arena: ``uordblks + hblkhd`` and ``arena + hblkhd``; Nones off
    glibc.  Beside RSS they tell a leak (in use grows) from the allocator keeping freed
    memory in its arenas (held grows, in use does not)."""
    if _MALLINFO2 is None:
        return None, None
    info = _MALLINFO2()
    return info.uordblks + info.hblkhd, info.arena + info.hblkhd


class Sampler(threading.Thread):
    """Once a second: (seconds since start, RSS bytes, device bytes or None, frames out,
    C heap in use, C heap held (or Nones), Python's allocated blocks)."""

    def __init__(self, start: float, frames_out, gpu_used=None):
        super().__init__(daemon=True, name="soak-sampler")
        self.start_time, self.frames_out, self.gpu_used = start, frames_out, gpu_used
        self.samples = []
        self.done = threading.Event()

    def sample(self):
        self.samples.append((time.monotonic() - self.start_time, rss_bytes(),
                             self.gpu_used() if self.gpu_used else None, self.frames_out(),
                             *malloc_figures(), sys.getallocatedblocks()))

    def run(self):
        while not self.done.wait(1.0):
            self.sample()

    def stop(self):
        self.done.set()
        self.join()


def memory_figures(samples, warmup: float, bound: float) -> dict:
    """RSS and device memory at the start, at the end of the warm-up and at the end; whether
    the end lies within ``bound`` (a fraction) of the warm value.  To tell a leak from a step
    (an allocator settling once): the largest rise between two samples after the warm-up
    (MiB, and when) and the least-squares slope over the second half of the run (MiB/min)."""
    out = {}
    for index, name in ((1, "rss"), (2, "gpu"), (4, "malloc_in_use"), (5, "malloc_held")):
        series = np.array([(s[0], s[index]) for s in samples if s[index] is not None], dtype=np.float64)
        if not series.size:
            out[name] = None
            continue
        t, mb = series[:, 0], series[:, 1] / 2**20
        after = t >= warmup
        if not after.any():
            after[-1] = True
        warm, end = mb[after][0], mb[-1]
        rises = np.diff(mb[after])
        step = int(np.argmax(rises)) if rises.size else None
        half = t >= (t[after][0] + t[-1]) / 2
        slope = float(np.polyfit(t[half], mb[half], 1)[0] * 60) if half.sum() >= 3 else None
        out[name] = {"start_mb": float(mb[0]), "warm_mb": float(warm), "end_mb": float(end),
                     "max_after_warmup_mb": float(mb[after].max()),
                     "change": float((end - warm) / warm) if warm else 0.0,
                     "largest_rise_mb": float(rises[step]) if step is not None else 0.0,
                     "largest_rise_at_s": float(t[after][step + 1]) if step is not None else None,
                     "second_half_slope_mb_per_min": slope}
        out[name]["within_bound"] = abs(out[name]["change"]) <= bound
    return out


# ------------------------------------------------------------------ the two paths
def _run_block(maker, checker, decoder_args, seconds, per_call, start, sampler_for):
    from gnuradio import gr

    import pmt
    from gnuradio import gpuldpc

    code = maker.code
    key_seq, key_bad, key_valid = pmt.intern("seq"), pmt.intern("bad_llr"), pmt.intern("valid")
    deadline = start + seconds

    class frame_source(gr.sync_block):
        """Frames of :class:`FrameMaker` until the deadline, each tagged ``seq``."""

        def __init__(self):
            gr.sync_block.__init__(self, name="soak_source", in_sig=None, out_sig=[(np.float32, code.n)])

        def work(self, input_items, output_items):
            if time.monotonic() >= deadline:
                return -1
            count = min(len(output_items[0]), maker.chunk(per_call))
            seqs, info, kinds, _ = maker.make(count, out=output_items[0][:count])
            checker.sent(seqs, info, kinds)
            written = self.nitems_written(0)
            for i, seq in enumerate(seqs.tolist()):
                self.add_item_tag(0, written + i, key_seq, pmt.from_uint64(seq))
            return count

    class frame_check(gr.sync_block):
        """Hands each decoded frame, with its ``seq``, ``bad_llr`` and ``valid`` tags, to the checker."""

        def __init__(self):
            gr.sync_block.__init__(self, name="soak_check", in_sig=[(np.uint8, code.k)], out_sig=None)
            self.frames = 0

        def _tag_values(self, key, count, default, convert):
            values = np.full(count, default, dtype=np.int64)
            read = self.nitems_read(0)
            for tag in self.get_tags_in_window(0, 0, count, key):
                values[tag.offset - read] = convert(tag.value)
            return values

        def work(self, input_items, output_items):
            bits = input_items[0]
            count = len(bits)
            seqs = self._tag_values(key_seq, count, -1, pmt.to_uint64)
            flagged = self._tag_values(key_bad, count, 0, pmt.to_bool)
            valid = self._tag_values(key_valid, count, 0, pmt.to_bool)
            tagged = seqs >= 0
            if not tagged.all():                 # a tag lost by the decoder: counted, frame unchecked
                checker.untagged += int(count - np.count_nonzero(tagged))
                seqs, bits, flagged, valid = seqs[tagged], bits[tagged], flagged[tagged], valid[tagged]
            checker.received(seqs, bits, flagged, valid)
            self.frames += count
            return count

    tb = gr.top_block("soak")
    source, decoder, check = frame_source(), gpuldpc.ldpc_decoder(code.name, **decoder_args), frame_check()
    tb.connect(source, decoder, check)
    sampler = sampler_for(decoder.core, lambda: check.frames)
    tb.start()
    sampler.start()
    tb.wait()
    sampler.stop()
    if decoder.error:
        raise RuntimeError(f"soak: the decoder block stopped: {decoder.error}")
    return decoder.core, decoder.stats(), decoder.batch


class BlockWork:
    """The decoder block's ``general_work`` step (``decoder_blocks._FrameDecoderBlock._work``)
    over an input buffer: the frames waiting, the batch in flight first among them.

    The buffer is GNU Radio's in miniature: two arrays of ``capacity`` frames used in turn.
    Frames are appended at the end of the one in use; when a chunk no longer fits there, the
    frames still waiting move to the start of the other one (the batch in flight keeps
    reading the old one and is finished by the next step, before that array is written
    again: at most one move per step).  Nothing is allocated once running, so the harness
    adds nothing to the memory figures.
    """

    def __init__(self, stream: StreamDecoder, n: int, capacity: int):
        self.stream, self.capacity = stream, capacity
        self.out = np.empty((min(stream.batch, capacity), stream.vlen_out), dtype=np.uint8)
        self._frames = [np.empty((capacity, n), dtype=np.float32) for _ in range(2)]
        self._seqs = [np.empty(capacity, dtype=np.int64) for _ in range(2)]
        self._use = self.start = self.end = 0
        self._moved = False

    def waiting(self) -> int:
        return self.end - self.start

    def fits(self, count: int) -> bool:
        return count <= self.capacity - self.waiting() and not (
            self._moved and self.end + count > self.capacity)

    def push(self, seqs, llr):
        """Append frames (call only when :meth:`fits`)."""
        count = len(seqs)
        if self.end + count > self.capacity:
            other, waiting = 1 - self._use, self.waiting()
            self._frames[other][:waiting] = self._frames[self._use][self.start:self.end]
            self._seqs[other][:waiting] = self._seqs[self._use][self.start:self.end]
            self._use, self.start, self.end, self._moved = other, 0, waiting, True
        self._frames[self._use][self.end:self.end + count] = llr
        self._seqs[self._use][self.end:self.end + count] = seqs
        self.end += count

    def step(self):
        """One ``general_work`` call, :meth:`StreamDecoder.work` (the block's step itself, the
        words copied into an output buffer): (FrameBatch, sequence numbers of its input
        frames, the words written to the output) or None."""
        self._moved = False
        inp = self._frames[self._use][self.start:self.end]
        consumed, batch = self.stream.work(inp, self.out)
        if batch is None:
            return None
        seqs = self._seqs[self._use][self.start:self.start + consumed].copy()
        self.start += consumed
        return batch, seqs, self.out[:batch.kept.size]


_END = object()


def _run_core(maker, checker, decoder_args, seconds, per_call, start, sampler_for, depth=4):
    stream = StreamDecoder(maker.code.name, **decoder_args)
    frames_in = queue.Queue(maxsize=depth)        # the producer's chunks on their way
    deadline = start + seconds
    out_count = [0]
    errors = []
    failed = threading.Event()           # the work thread died: the producer stops too

    def put(item):
        while not failed.is_set():
            try:
                return frames_in.put(item, timeout=0.2)
            except queue.Full:
                continue

    def produce():
        try:
            while time.monotonic() < deadline and not failed.is_set():
                seqs, info, kinds, llr = maker.make(maker.chunk(per_call))
                checker.sent(seqs, info, kinds)
                put((seqs, llr))
        except BaseException as exc:  # noqa: BLE001  (reported by the main thread)
            errors.append(exc)
        finally:
            put(_END)

    def work():
        try:
            block = BlockWork(stream, maker.code.n, min(stream.batch, 4096) + 2 * per_call)
            ended, held = False, None
            while True:
                while not ended:                 # take in what has come and fits
                    if held is None:
                        try:
                            held = frames_in.get(block=block.waiting() == 0)   # idle: wait
                        except queue.Empty:
                            break
                    if held is _END:
                        ended, held = True, None
                    elif block.fits(len(held[0])):
                        block.push(*held)
                        held = None
                    else:
                        break
                if ended and block.waiting() == 0:
                    return
                done = block.step()
                if done is not None:
                    batch, seqs, words = done
                    checker.received(seqs[batch.kept], words, batch.bad_llr, batch.valid)
                    out_count[0] += len(batch.kept)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            failed.set()

    sampler = sampler_for(stream, lambda: out_count[0])
    threads = [threading.Thread(target=produce, name="soak-producer"),
               threading.Thread(target=work, name="soak-work")]
    for thread in threads:
        thread.start()
    sampler.start()
    for thread in threads:
        thread.join()
    sampler.stop()
    stats = stream.stats()
    stream.close()
    if errors:
        raise errors[0]
    return stream, stats, stream.batch


def run(seconds: float, backend: str = "cpu", code_name: str = "wifi-1944-1/2",
        warmup: float | None = None, bad_fraction: float = 0.01, path: str = "block",
        on_bad_llr: str = "erase", bound: float = 0.05, seed: int = 1, per_call: int = 256) -> dict:
    """Run the soak; return the counts, the memory samples and figures, and the verdict
    (``failures``: empty when everything held).  See the module docstring."""
    if path not in ("block", "core"):
        raise ValueError(f"path must be 'block' or 'core', got {path!r}")
    if warmup is None:
        warmup = 60.0 if seconds >= 240 else seconds / 4
    code = gl.codes.get(code_name)
    maker = FrameMaker(code, bad_fraction, seed)
    checker = Checker(code.k, on_bad_llr)
    decoder_args = dict(backend=backend, on_bad_llr=on_bad_llr)
    samplers = []

    def sampler_for(stream, frames_out):
        samplers.append(Sampler(start, frames_out, gpu_memory_probe(stream)))
        samplers[-1].sample()
        return samplers[-1]

    start = time.monotonic()
    stream, stats, batch = (_run_block if path == "block" else _run_core)(
        maker, checker, decoder_args, seconds, per_call, start, sampler_for)
    wall = time.monotonic() - start
    checker.close()
    counts = checker.counts()
    samples = samplers[0].samples
    memory = memory_figures(samples, warmup, bound)
    streaming = [s for s in samples if s[0] <= seconds]
    result = {
        "path": path, "backend": stats["backend"], "code": code_name, "seconds": seconds,
        "wall_s": wall, "warmup_s": warmup, "bad_fraction": bad_fraction, "on_bad_llr": on_bad_llr,
        "frames_per_batch": batch, "per_call": per_call, "ebn0_db": EBN0_DB, "bursts": maker.bursts,
        **counts, "decoder": stats, "memory": memory, "memory_bound": bound,
        "coded_mbps": counts["frames_out"] * code.n / wall / 1e6,
        "info_mbps": counts["frames_out"] * code.k / wall / 1e6,
        "frames_per_s_by_minute": _rate_by_minute(streaming),
        "samples": [{"t": round(t, 2), "rss_mb": round(r / 2**20, 3),
                     "gpu_mb": None if g is None else round(g / 2**20, 3), "frames_out": f,
                     "malloc_in_use_mb": None if h is None else round(h / 2**20, 3),
                     "malloc_held_mb": None if a is None else round(a / 2**20, 3), "py_blocks": b}
                    for t, r, g, f, h, a, b in samples],
    }
    result["failures"] = verdict(result)
    return result


def _rate_by_minute(samples) -> list:
    """Frames out per second over each minute of the run (steady throughput: no slow-down)."""
    rates, last = [], (0.0, 0)
    for t, _, _, frames, *_ in samples:
        if t - last[0] >= 60.0 or t == samples[-1][0]:
            if t > last[0]:
                rates.append(round((frames - last[1]) / (t - last[0]), 1))
            last = (t, frames)
    return rates


def verdict(result: dict) -> list[str]:
    """What went wrong, one sentence each; empty when the soak passed."""
    failures = []
    d = result["decoder"]
    if result["lost"]:
        failures.append(f"{result['lost']} frames lost (first: {result['lost_first']})")
    if result["out_of_order"]:
        failures.append(f"{result['out_of_order']} frames repeated or out of order")
    if result["untagged"]:
        failures.append(f"{result['untagged']} frames left the decoder without their seq tag")
    if (result["frames_out"] + result["dropped_by_policy"] + result["lost"]
            != result["frames_in"] + result["out_of_order"]):
        failures.append("frames out + dropped + lost != frames in")
    if result["good_frames_wrong"]:
        failures.append(f"{result['good_frames_wrong']} good frames decoded wrong "
                        f"({result['good_bit_errors']} bits; {result['good_frames_wrong_valid']} "
                        f"of them marked valid)")
    if result["good_frames_out"] != result["good_frames"]:
        failures.append(f"{result['good_frames'] - result['good_frames_out']} good frames missing")
    if d["frames"] != result["frames_in"]:
        failures.append(f"decoder counted {d['frames']} frames, {result['frames_in']} were made")
    if d["bad_llr_frames"] != result["non_finite_frames_made"]:
        failures.append(f"decoder counted {d['bad_llr_frames']} bad_llr_frames, "
                        f"{result['non_finite_frames_made']} NaN/inf frames were made")
    if d["dropped"] != result["dropped_by_policy"]:
        failures.append(f"decoder dropped {d['dropped']} frames, {result['dropped_by_policy']} "
                        "were missing by the policy")
    if result["bad_frames_mismarked"]:
        failures.append(f"{result['bad_frames_mismarked']} frames marked bad_llr wrongly (or not marked)")
    for name in BOUNDED:
        m = result["memory"][name]
        if m is not None and not m["within_bound"]:
            failures.append(f"{name} {m['warm_mb']:.1f} MiB after warm-up, {m['end_mb']:.1f} MiB at the "
                            f"end ({m['change']:+.2%}, bound {result['memory_bound']:.1%})")
    return failures


# ------------------------------------------------------------------ report
def summary(result: dict) -> str:
    r, d, mem = result, result["decoder"], result["memory"]
    api = "GNU Radio block" if r["path"] == "block" else "block work path, no GNU Radio"
    lines = [
        f"soak: {r['code']}, {r['path']} path ({api}), backend {d['backend']}, "
        f"batch {r['frames_per_batch']}, on_bad_llr={r['on_bad_llr']}, {r['seconds']:.0f} s streaming "
        f"({r['wall_s']:.1f} s with the drain), warm-up {r['warmup_s']:.0f} s",
        f"frames: {r['frames_in']} in, {r['frames_out']} out, {r['dropped_by_policy']} dropped by "
        f"the policy, {r['lost']} lost, {r['out_of_order']} repeated/out of order",
        f"good frames: {r['good_frames_out']} of {r['good_frames']} out, {r['good_frames_wrong']} wrong "
        f"({r['good_bit_errors']} bit errors, {r['good_frames_wrong_valid']} marked valid); "
        f"Eb/N0 {r['ebn0_db']} dB",
        f"bad frames: {r['bad_frames_made']} made in {r['bursts']} bursts "
        f"({r['bad_frames_made'] / max(r['frames_in'], 1):.2%}); NaN/inf {r['non_finite_frames_made']}, "
        f"decoder's bad_llr_frames {d['bad_llr_frames']}, dropped {d['dropped']}, "
        f"fallbacks {d['fallbacks']}, mismarked {r['bad_frames_mismarked']}",
        f"  {'kind':24} {'made':>7} {'out':>7} {'flagged':>7} {'valid':>7} {'payload':>7} {'zeros':>7}",
    ]
    for name, t in result["bad_frames"].items():
        lines.append(f"  {name:24} {t['made']:7} {t['out']:7} {t['flagged']:7} {t['valid']:7} "
                     f"{t['payload']:7} {t['all_zero']:7}")
    lines.append("  (out: left the decoder; flagged: marked bad_llr; valid: syndrome zero; payload: decoded "
                 "to the payload sent; zeros: decoded to all zeros)")
    for name, label in (("rss", "RSS"), ("gpu", "GPU memory in use"), ("malloc_in_use", "C heap in use"),
                        ("malloc_held", "C heap held")):
        m = mem[name]
        if m is None:
            lines.append(f"{label}: not measured" + (" (not on a GPU)" if name == "gpu" else ""))
            continue
        slope = m["second_half_slope_mb_per_min"]
        bound = (f"bound {result['memory_bound']:.0%}" if name in BOUNDED
                 else "diagnostic, no bound")
        lines.append(f"{label}: {m['start_mb']:.1f} MiB at start, {m['warm_mb']:.1f} after warm-up, "
                     f"{m['end_mb']:.1f} at the end ({m['change']:+.2%}; {bound}); "
                     f"max after warm-up {m['max_after_warmup_mb']:.1f}, largest 1 s rise "
                     f"{m['largest_rise_mb']:+.2f} MiB at {m['largest_rise_at_s'] or 0:.0f} s, second half "
                     + ("-" if slope is None else f"{slope:+.3f} MiB/min"))
    lines.append(f"throughput: {r['coded_mbps']:.1f} Mb/s coded end to end "
                 f"({r['frames_out'] / r['wall_s']:.0f} frames/s; per minute {r['frames_per_s_by_minute']}), "
                 f"decoder busy {d['coded_mbps']:.1f} Mb/s, mean iterations {d['mean_iterations']:.2f}")
    lines.append("PASS" if not result["failures"] else "FAIL: " + "; ".join(result["failures"]))
    return "\n".join(lines)


def machine(backend: str) -> tuple[str, dict]:
    """(file name stem of this machine, the results header: gpu, driver, cuda, versions, commit)."""
    head = {"gpu": None, "driver": None, "cuda": None}
    stem = None
    if backend == "cuda":
        from gpuldpc import cuda

        drv = cuda.driver()
        name = drv.Device(0).name()
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout.split()
        head = {"gpu": name, "driver": smi[0] if smi else f"CUDA driver API {drv.get_driver_version()}",
                "cuda": ".".join(map(str, drv.get_version()))}
        stem = "h200" if "H200" in name else "h100" if "H100" in name else name.replace(" ", "_").lower()
    os_id = {}
    try:
        with open("/etc/os-release") as f:
            os_id = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    except OSError:
        pass
    distro = (os_id.get("ID", "linux") + os_id.get("VERSION_ID", "")).replace('"', "")
    stem = stem or f"{distro}-{os.cpu_count()}core"
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "gpuldpc": getattr(gl, "__version__", None)}
    try:
        from gnuradio import gr

        versions["gnuradio"] = gr.version()
    except ImportError:
        versions["gnuradio"] = None
    if backend == "cuda":
        import pycuda

        versions["pycuda"] = pycuda.VERSION_TEXT
    commit = os.environ.get("GPULDPC_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, text=True,
        cwd=os.path.dirname(os.path.abspath(__file__)), check=False).stdout.strip()
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    head.update(host=platform.node(), cpu=cpu, cores=os.cpu_count(), os=distro, versions=versions,
                commit=commit if re.fullmatch(r"[0-9a-f]{7,40}", commit or "") else None,
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    return stem, head


def results_row(result: dict) -> dict:
    """The bench results row (DESIGN.md "Measuring") of a soak result."""
    row = {"system": "gpuldpc", "code": result["code"], "algorithm": "nms", "schedule": "layered",
           "iterations": 10, "early_stop": True, "llr_dtype": "float32",
           "frames_per_batch": result["frames_per_batch"], "streams": None,
           "coded_gbps": result["coded_mbps"] / 1e3, "info_gbps": result["info_mbps"] / 1e3,
           "latency_us": None, "latency_p99_us": None,
           "api": "GNU Radio block" if result["path"] == "block" else "block work path",
           "kernel_gbps": None,
           "fer": result["good_frames_wrong"] / result["good_frames"] if result["good_frames"] else None,
           "ebn0_db": result["ebn0_db"], "what": "soak"}
    row.update({k: v for k, v in result.items() if k not in row})
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", default="block", choices=("block", "core"),
                        help="block: the GNU Radio flowgraph; core: StreamDecoder as the block drives it")
    parser.add_argument("--backend", default="cpu", choices=("auto", "cuda", "cpu", "reference"))
    parser.add_argument("--code", default="wifi-1944-1/2")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--warmup", type=float, default=None,
                        help="seconds before the reference memory sample "
                             "(default 60; runs under 240 s: a quarter)")
    parser.add_argument("--bad-fraction", type=float, default=0.01)
    parser.add_argument("--on-bad-llr", default="erase", choices=("erase", "drop"))
    parser.add_argument("--bound", type=float, default=0.05, help="memory bound, a fraction (default 0.05)")
    parser.add_argument("--out", default=None, help="folder for <host>-soak-<path>-<backend>.json and .txt")
    parser.add_argument("--host", default=None,
                        help="the machine's name in the file names (default: derived)")
    args = parser.parse_args(argv)
    result = run(args.seconds, args.backend, args.code, args.warmup, args.bad_fraction, args.path,
                 args.on_bad_llr, args.bound)
    text = summary(result)
    print(text, flush=True)
    if args.out:
        stem, head = machine(result["backend"])
        stem = f"{args.host or stem}-soak-{args.path}-{result['backend']}"
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, stem + ".json"), "w") as f:
            json.dump(dict(head, rows=[results_row(result)]), f, indent=1)
            f.write("\n")
        with open(os.path.join(args.out, stem + ".txt"), "w") as f:
            f.write(text + "\n")
        print(f"-> {os.path.join(args.out, stem)}.json, .txt")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

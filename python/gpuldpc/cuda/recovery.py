"""Rate recovery on the GPU: the E received LLRs of a shaped code (5G NR rate matching,
:mod:`gpuldpc.codes.shaping`) turned into the decoded code's LLRs by a kernel
(kernels/shaping.cu) in the stream pipeline, just before the decoding kernel.

:class:`RecoveryTables` (NumPy, no GPU) says for each decoded position where its value
comes from: ``src`` int32 [n], the index of its first received copy, :data:`PUNCTURED`
(LLR 0) or :data:`SHORTENED` (the dtype's certain zero,
:data:`gpuldpc.codes.shaping.LLR_FORMATS`); for repeated positions (a circular buffer
read past its end, soft-combined retransmissions) ``rep_start`` int32 [n + 1] /
``rep_index`` int32: the further copies in order of transmission, added with the
format's saturating sums.  :meth:`RecoveryTables.emulate` is the kernel's arithmetic in
NumPy (the CPU tests hold it equal to :meth:`Shaping.recover`, bit for bit).

:class:`RecoveryPlan` wraps the binary decoder's plan (a :class:`.stages.StagePlan`):
input frames are E values (``frame_bytes``), the slot's scratch holds the recovered rows
of the chunk in front of the inner plan's own scratch, and ``launch`` enqueues the
recovery kernel, then the inner launch reading the recovered rows.  The caller's E array
is thus registered in place or staged like any plain input: the host does no per-value
work.  No resident kernel (it reads the slot's input in place): the latency preset of a
shaped code launches its kernels.
"""
from __future__ import annotations

import numpy as np

from ..codes.shaping import LLR_FORMATS, Shaping
from .driver import PackedLaunch, driver
from .stages import StagePlan

MODULE = "shaping"
PUNCTURED, SHORTENED = -1, -2
ENTRY = {np.dtype(np.float32): "shaping_recover_f32", np.dtype(np.float16): "shaping_recover_f16",
         np.dtype(np.int8): "shaping_recover_i8"}
THREADS = 256
ARG_TYPES = "PiPiPPPif"            # kernels/shaping.cu GPULDPC_RECOVER (tests/gpu/test_kernel_signatures.py)
MAX_GRID_Y = 65535


class RecoveryTables:
    """The kernel's tables of a :class:`~gpuldpc.codes.shaping.Shaping` (see the module
    docstring): ``n`` decoded positions, ``e`` received values a frame, ``src``,
    ``rep_start``/``rep_index`` (None without repeats)."""

    def __init__(self, shaping: Shaping):
        n, sent = shaping.n_mother, shaping.transmitted
        self.n, self.e = n, shaping.n
        order = np.argsort(sent, kind="stable")           # by position, each in order of transmission
        counts = np.bincount(sent, minlength=n)
        first = np.r_[0, np.cumsum(counts)[:-1]]           # index in ``order`` of each position's first copy
        self.src = np.full(n, PUNCTURED, np.int32)
        self.src[shaping.shortened] = SHORTENED
        received = counts > 0
        self.src[received] = order[first[received]]
        if shaping.repeats:
            extra = np.maximum(counts - 1, 0)
            self.rep_start = np.r_[0, np.cumsum(extra)].astype(np.int32)
            later = np.ones(sent.size, bool)
            later[first[received]] = False
            self.rep_index = order[later].astype(np.int32)
        else:
            self.rep_start = self.rep_index = None

    def emulate(self, llr: np.ndarray) -> np.ndarray:
        """The kernel's result for ``llr`` [batch, e] (float32, float16 or int8), in NumPy:
        per position the first copy, then each further copy added with the format's
        saturating sum (:meth:`~gpuldpc.codes.shaping.LlrFormat.add`, kernels/shaping.cu's F32/F16/I8::add);
        punctured 0, shortened the format's certain zero."""
        fmt = LLR_FORMATS[llr.dtype]
        out = np.zeros((llr.shape[0], self.n), llr.dtype)
        got = self.src >= 0
        out[:, got] = llr[:, self.src[got]]
        out[:, self.src == SHORTENED] = llr.dtype.type(fmt.certain)
        if self.rep_start is None:
            return out
        for p in np.flatnonzero(np.diff(self.rep_start)):
            v = out[:, p]
            for i in self.rep_index[self.rep_start[p]:self.rep_start[p + 1]]:
                v = fmt.add(v, llr[:, i])
            out[:, p] = v
        return out


class RecoveryPlan(StagePlan):
    """A binary plan (:class:`.decoder._QcPlan`) behind the recovery kernel (a
    :class:`.stages.StagePlan`: every attribute not set here is the inner plan's -- kernel
    attributes, launch shape, ``bits_width``; the stage buffer holds the recovered rows)."""

    def __init__(self, ctx, inner, tables: RecoveryTables, dtype):
        drv = driver()
        super().__init__(inner)
        self.dtype = np.dtype(dtype)
        self.tables = tables
        self.func = ctx.function(MODULE, ENTRY[self.dtype])
        self.func.prepare(ARG_TYPES)
        self._launch = PackedLaunch(self.func, THREADS, 0)
        self.src = drv.to_device(tables.src)
        self.rep_start = drv.to_device(tables.rep_start) if tables.rep_start is not None else None
        self.rep_index = drv.to_device(tables.rep_index) if tables.rep_index is not None else None
        self.certain = np.float32(LLR_FORMATS[self.dtype].certain)
        self.name = f"{MODULE}/{ENTRY[self.dtype]} + {inner.name}"

    def frame_bytes(self, kind) -> int:
        return self.tables.e * self.dtype.itemsize

    def stage_bytes(self, frames) -> int:
        return frames * self.tables.n * self.dtype.itemsize

    def recover(self, stream, count, dev_in, dev_out):
        """Enqueue the recovery of ``count`` frames: E values a row at ``dev_in`` -> n values a
        row at ``dev_out`` (device addresses)."""
        t = self.tables
        self._launch(
            stream, (-(-t.n // THREADS), min(count, MAX_GRID_Y)),
            int(dev_in), np.int32(t.e), int(dev_out), np.int32(t.n), self.src,
            self.rep_start if self.rep_start is not None else 0,
            self.rep_index if self.rep_index is not None else 0, np.int32(count), self.certain)

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        recovered = int(scratch)
        self.recover(stream, count, dev_in, recovered)
        self.inner.launch(stream, count, recovered, kind, out, self.inner_scratch(scratch, capacity), capacity)

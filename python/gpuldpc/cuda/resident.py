"""The resident latency kernels, host side (``kernels/resident.cuh``: the request protocol;
``kernels/qc_resident.cu``: binary, ``kernels/nb_frame.cu``: the GF(q) one-frame kernel).

A kernel launch costs the host about 5 us more than handing work to a kernel that is
already running: on the H200, a launch plus ``synchronize`` of an empty kernel took
8.9 us, a request posted through mapped page-locked memory to a running kernel and
its acknowledgement 3.5 us (docs/gpu.md, "Resident latency kernel").  For the latency
presets the decoding kernel therefore stays resident between calls (binary: the layered
latency kernels, one frame a block; GF(q): the one-frame Min-Max kernel, one frame over
many blocks, bit LLRs only):

* :meth:`ResidentKernel.post` writes the request (frame count, LLR address) and then
  its number into a mapped request block, and launches the kernel if it is not
  running (it leaves by itself after :data:`IDLE_NS` without a request, or
  :data:`LIFE_NS` after its launch);
* :meth:`ResidentKernel.wait` spins on the acknowledgement, launching the kernel
  again if it left before seeing the request, and raises :class:`CudaError` if the
  kernel failed or nothing came back within ``timeout`` seconds;
* :meth:`ResidentKernel.call` is both for one chunk, the rows first copied into the
  staging buffer: one native call (``gpuldpc._core.resident_request``, lib/resident_bindings.cpp)
  copies, posts and spins for :data:`SPIN_NS` with the GIL released, and hands back to
  :meth:`wait` only when the kernel must be launched or has not answered by then.  The
  request's store is native in both (the compiled ``gpuldpc._core`` is needed: without it
  the engine keeps no resident kernel and launches every chunk).

Why the kernel leaves: ``cuMemFree`` (and other calls that synchronize the device)
wait for every running kernel of the context, so a kernel that never ended would
block them for ever; with these limits they wait at most :data:`LIFE_NS`.  The
kernel runs on a non-blocking stream, so work on the legacy default stream (PyCUDA's
synchronous copies) does not wait for it.  It occupies at most :data:`MAX_FRAMES`
frames (binary: one block each; GF(q): one frame of ``blocks`` blocks): larger chunks are
launched as usual.
"""
from __future__ import annotations

import time

import numpy as np

from .._native import core
from .context import CudaError
from .host_memory import mapped_address, pinned_empty
from .driver import driver

IDLE_NS = 1_000_000          # the kernel leaves after 1 ms without a request ...
LIFE_NS = 20_000_000         # ... or 20 ms after its launch
MAX_FRAMES = 8               # blocks of a resident kernel (frames a request may carry)
SPIN_NS = 200_000            # call(): the native spin's limit before wait() takes over
MODULE = "qc_resident"
# kernels/qc_resident.cu GPULDPC_RESIDENT (tests/gpu/test_kernel_signatures.py)
ARG_TYPES = "PPIQQfPiPPPPP" + "i" * 7 + "ff"
_ACK, _ALIVE = 2, 3                 # 32-bit words of the request block; [0], [1]: the request


def resident_name(kernel: str) -> str:
    """Resident entry point of a layered latency entry point (``qc_ep12x1x8_layered_f32`` ->
    ``qc_ep12x1x8_resident_layered_f32``)."""
    return kernel.replace("_layered_", "_resident_layered_", 1)


class ResidentKernel:
    """One resident decoding kernel for one stream slot of the engine.

    ``func`` is the prepared resident entry point, ``threads``/``shared`` its block shape,
    ``frames`` the most frames a request may carry, ``tail`` the arguments after the request
    block, broadcast, launch id and limits (the binary kernel: what a launch of the ordinary
    kernel takes after the LLR pointer, without ``frames`` and ``frames_per_block``).
    ``blocks``: the grid (default one block a frame); ``kind``: the only input kind it
    decodes (None: the decoder's one kind); ``align``: the alignment its LLR addresses need;
    ``buffers``: device allocations the kernel uses, kept alive with it.
    """

    def __init__(self, ctx, func, threads: int, shared: int, frames: int, tail: tuple, blocks: int | None = None,
                 kind: str | None = None, align: int = 8, buffers: tuple = ()):
        drv = driver()
        self.ctx, self.func, self.threads, self.shared = ctx, func, threads, shared
        self.frames, self.blocks = frames, blocks or frames
        self.kind, self.align, self.buffers = kind, align, buffers
        self.tail = tail
        self.ctrl = pinned_empty(4, np.uint32, ctx)
        self.ctrl[:] = 0
        self.ctrl_address = mapped_address(self.ctrl)
        self._words = memoryview(self.ctrl)         # plain int reads and writes (cheaper than NumPy's)
        self._native = core()
        self.broadcast = drv.mem_alloc(64)
        drv.memset_d32(self.broadcast, 0, 16)
        self.stream = drv.Stream(flags=1)          # CU_STREAM_NON_BLOCKING
        self.seq = 0
        self.launches = 0

    def serves(self, frames: int, kind: str) -> bool:
        """Whether a chunk of ``frames`` frames of input ``kind`` can be posted to this kernel
        (from mapped host memory aligned to :attr:`align` bytes)."""
        return frames <= self.frames and self.kind in (None, kind)

    def _request(self, frames: int, llr_address: int) -> int:
        """The next request word, seq << 48 | address | frames - 1 (seq 1 .. 65535)."""
        if not 1 <= frames <= self.frames or llr_address % self.align or llr_address >> 48:
            raise ValueError(f"resident request of {frames} frames at {llr_address:#x}: needs 1..{self.frames} "
                             f"frames at a {self.align}-byte aligned address below 2^48")
        self.seq = self.seq % 0xffff + 1
        return self.seq << 48 | llr_address | (frames - 1)

    def post(self, frames: int, llr_address: int):
        """Hand ``frames`` (1 .. :attr:`frames`) frames at ``llr_address`` (:attr:`align`-byte aligned) to
        the kernel: one aligned 64-bit store of the request word, which the kernel reads at
        once (the caller holds the device's lock; no driver call unless the kernel must be
        launched)."""
        if self._native.resident_request(self.ctrl_address, self._request(frames, llr_address), self.seq,
                                         None, 0, 0) == 1:
            self._launch()

    def call(self, frames: int, llr_address: int, rows=None, staging_address: int = 0):
        """:meth:`post` and :meth:`wait` as one native call (module docstring); ``rows``: C-contiguous
        host rows copied to ``staging_address`` first (then ``llr_address`` is that buffer's), or None."""
        status = self._native.resident_request(self.ctrl_address, self._request(frames, llr_address), self.seq,
                                               rows, staging_address, SPIN_NS)
        if status:                                 # not running (wait() launches it) or no answer yet
            self.wait()

    @property
    def running(self) -> bool:
        """Whether the kernel is running (launched and not yet left)."""
        return bool(self._words[_ALIVE])

    def _launch(self):
        """Start the kernel: it resumes after the last request done."""
        self._words[_ALIVE] = 1
        self.launches += 1
        with self.ctx.active():
            self.func.prepared_async_call((self.blocks, 1), (self.threads, 1, 1), self.stream,
                                          self.ctrl_address, self.broadcast, self.launches & 0xffffffff,
                                          IDLE_NS, LIFE_NS, *self.tail, shared_size=self.shared)

    def wait(self, timeout: float = 10.0):
        """Spin until the kernel acknowledges the last request."""
        c, seq = self._words, self.seq
        spins = 0
        deadline = None
        while c[_ACK] != seq:
            if not c[_ALIVE]:                      # it left before seeing the request
                self._launch()
            spins += 1
            if spins % 4096 == 0:
                now = time.perf_counter()
                deadline = deadline or now + timeout
                try:
                    with self.ctx.active():
                        done = self.stream.is_done()
                except driver().Error as exc:
                    raise CudaError(f"resident kernel failed: {exc}") from exc
                if done and c[_ACK] != seq and c[_ALIVE]:
                    raise CudaError("resident kernel ended without acknowledging request "
                                    f"{seq} (last done: {c[_ACK]})")
                if now > deadline:
                    raise CudaError(f"resident kernel: no answer to request {seq} in {timeout} s")

    def close(self):
        """Wait for the kernel to leave (at most :data:`IDLE_NS` after the last request)."""
        with self.ctx.active():
            self.stream.synchronize()

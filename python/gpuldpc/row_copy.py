"""Row copies split over threads: ``dst[...] = src`` at the host's memory bandwidth.

One thread copies a few GB/s (10.6 GB/s measured on an H100 host), less than PCIe moves
(about 50 GB/s) and less than a GPU decodes float32 LLRs (4 bytes per coded bit at
12 Gb/s = 48 GB/s); NumPy releases the GIL while it copies, so :data:`THREADS` threads
copying a block of rows each reach the host's multi-threaded bandwidth (20-40 GB/s
measured on the GPU hosts).  Used where rows must move on the host: the CUDA engine's
staging of foreign input (:mod:`gpuldpc.cuda.engine`), the stream blocks' copy of
decoded words into GNU Radio's output buffer (:mod:`gpuldpc.streaming`), the staging of
pageable input in the background while the first chunks cross PCIe (:class:`BackgroundCopy`), the rate
recovery of shaped codes (:mod:`gpuldpc.codes.shaping`), and the gather of a mixed batch's
frames by code and the scatter of their results back (:func:`gather_rows`,
:func:`scatter_rows`; :mod:`gpuldpc.decoders.mixed`).
"""
from __future__ import annotations

import concurrent.futures
import os
import threading

import numpy as np

THREADS = max(1, min(16, os.cpu_count() or 1))
"""Up to 16: 23.5 GB/s with 8 threads, 36 GB/s with 16, on a 16-core H100 host (394 MB)."""
SPLIT_BYTES = 1 << 20
"""Copies of fewer bytes are one ``numpy.copyto`` (a thread hand-off costs more)."""

_pools: dict[int, concurrent.futures.ThreadPoolExecutor] = {}
_lock = threading.Lock()


def _pool(threads: int) -> concurrent.futures.ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = concurrent.futures.ThreadPoolExecutor(threads, "gpuldpc-copy")
    return pool


def by_rows(work, rows: int, nbytes: int, threads: int | None = None):
    """``work(a, b)`` for row ranges covering ``0..rows``, split over ``threads`` threads
    (default :data:`THREADS`) when the data moved is :data:`SPLIT_BYTES` or more; ``work``
    must release the GIL (NumPy copies and slice arithmetic do)."""
    threads = threads or THREADS
    if threads == 1 or rows < 2 or nbytes < SPLIT_BYTES:
        work(0, rows)
        return
    pool = _pool(threads)
    edges = np.linspace(0, rows, threads + 1).astype(int)
    parts = [pool.submit(work, a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    for part in parts:
        part.result()


STEP_BYTES = 2 << 20
"""Bytes a step of :class:`BackgroundCopy` (about 0.1 ms of one thread): the first rows are
ready soon after the copy starts, and the 150-200 steps of a 400 MB batch cost the threads
about 1 ms of Python between them."""


class BackgroundCopy:
    """``dst[...] = src`` by the copy threads while the caller goes on: steps of
    :data:`STEP_BYTES` of rows, taken in row order by :data:`THREADS` threads; :meth:`wait`
    returns once given rows are there (copies below :data:`SPLIT_BYTES`: done at once, in the
    caller's thread).

    The CUDA engine stages a pageable batch this way and copies each chunk to the GPU as soon
    as its rows are staged, so the host's copy overlaps the DMA of the chunks before it
    (:meth:`gpuldpc.cuda.engine.GpuDecoder._host_input`): a fresh WiMAX 2304 batch of 389 MB
    took the copy's 11.6 ms (at 33.6 GB/s on an H200 host) *plus* the transfers' 8 ms when
    staged whole first.

    The steps' views and a held lock per step are made here, in the caller's thread; a worker
    copies a step and releases its lock, allocating no Python object, so the interpreter's
    cyclic garbage collector is not set off in a copy thread (where it found decoders of the
    caller's and could not free their CUDA objects: PyCUDA frees them only in a thread where
    their context is current or that made it)."""

    def __init__(self, dst: np.ndarray, src: np.ndarray, threads: int | None = None):
        rows = src.shape[0]
        self.step = max(1, STEP_BYTES // max(1, src[:1].nbytes))
        self._locks = []
        steps = []
        for a in range(0, rows, self.step):
            lock = threading.Lock()
            lock.acquire()
            self._locks.append(lock)
            steps.append((dst[a:a + self.step], src[a:a + self.step], lock))
        self.steps = len(steps)
        self._error = None
        self._next = iter(steps)                  # next() on a list iterator is atomic under the GIL
        if src.nbytes < SPLIT_BYTES:              # one copy here: a thread hand-off costs more
            self._work()
            return
        pool = _pool(threads or THREADS)
        for _ in range(min(threads or THREADS, self.steps)):
            pool.submit(self._work)

    def _work(self):
        for d, s, lock in self._next:
            try:
                np.copyto(d, s)
            except BaseException as exc:  # noqa: BLE001  (raised in the waiting thread)
                self._error = exc
            finally:
                lock.release()

    def wait(self, a: int = 0, b: int | None = None):
        """Return once rows ``a:b`` (default: all) are copied; raise what a copy raised."""
        b = self.steps * self.step if b is None else b
        for lock in self._locks[a // self.step:-(-b // self.step)]:
            if lock.locked():
                lock.acquire()                    # blocks until the step's worker releases it
                lock.release()
        if self._error is not None:
            raise self._error


def copy_rows(dst: np.ndarray, src: np.ndarray, threads: int | None = None):
    """``dst[...] = src`` (same shape; any strides), split by rows (:func:`by_rows`) from
    :data:`SPLIT_BYTES` on.  Smaller copies skip building the closure for :func:`by_rows`:
    a one-frame latency call's staging copy took 1.8 us through it against 0.6 us as one
    ``numpy.copyto`` (development machine), and the assignment skips ``copyto``'s dispatch."""
    if src.nbytes < SPLIT_BYTES:
        dst[...] = src
    else:
        def work(a, b):
            dst[a:b] = src[a:b]

        by_rows(work, src.shape[0], src.nbytes, threads)


GATHER_STEP = 64
"""Rows per step of :func:`gather_rows` from a strided source: the fancy-indexed temporary
(64 rows of 9 KB) stays in the CPU's caches, so the gather is one pass over memory: 13.5-14 ms
for 155-184 MB against 9-10 ms for a plain copy and 25-27 ms for one fancy index of the whole
group (development machine, 2 cores)."""


def gather_rows(dst: np.ndarray, src: np.ndarray, rows: np.ndarray, threads: int | None = None):
    """``dst[i] = src[rows[i], :dst.shape[1]]`` for every i (in ``dst``'s dtype), split by rows
    over threads (:func:`by_rows`).  ``rows`` must index ``src`` (the caller checks them).

    Rows of ``src`` as wide as ``dst``'s, of its dtype and C-contiguous go straight from
    ``src`` into ``dst`` (``numpy.take`` with ``out``); other rows (a wider padded batch, a
    conversion) a step of :data:`GATHER_STEP` rows at a time through a small temporary
    (``numpy.take`` would first copy the whole of a strided ``src``)."""
    width = dst.shape[1]
    whole = src.shape[1] == width and src.dtype == dst.dtype and src.flags.c_contiguous

    def work(a, b):
        if whole:
            np.take(src, rows[a:b], axis=0, out=dst[a:b], mode="clip")
            return
        for lo in range(a, b, GATHER_STEP):
            hi = min(lo + GATHER_STEP, b)
            dst[lo:hi] = src[rows[lo:hi], :width]

    by_rows(work, rows.size, dst.nbytes, threads)


def scatter_rows(dst: np.ndarray, rows: np.ndarray, src: np.ndarray, threads: int | None = None):
    """``dst[rows[i], :src.shape[1]] = src[i]`` for every i (1-D ``src``: ``dst[rows] = src``),
    split by rows over threads (:func:`by_rows`)."""
    if src.ndim == 1:
        dst[rows] = src
        return

    def work(a, b):
        dst[rows[a:b], :src.shape[1]] = src[a:b]

    by_rows(work, rows.size, src.nbytes, threads)

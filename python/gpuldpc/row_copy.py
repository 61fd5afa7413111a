"""Row copies split over threads: ``dst[...] = src`` at the host's memory bandwidth.

One thread copies a few GB/s (10.6 GB/s measured on an H100 host), less than PCIe moves
(about 50 GB/s) and less than a GPU decodes float32 LLRs (4 bytes per coded bit at
12 Gb/s = 48 GB/s); NumPy releases the GIL while it copies, so :data:`THREADS` threads
copying a block of rows each reach the host's multi-threaded bandwidth (20-40 GB/s
measured on the GPU hosts).  Used where rows must move on the host: the CUDA engine's
staging of foreign input (:mod:`gpuldpc.cuda.engine`), the stream blocks' copy of
decoded words into GNU Radio's output buffer (:mod:`gpuldpc.streaming`), the rate
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


def by_rows(work, rows: int, nbytes: int, threads: int | None = None):
    """``work(a, b)`` for row ranges covering ``0..rows``, split over ``threads`` threads
    (default :data:`THREADS`) when the data moved is :data:`SPLIT_BYTES` or more; ``work``
    must release the GIL (NumPy copies and slice arithmetic do)."""
    threads = threads or THREADS
    if threads == 1 or rows < 2 or nbytes < SPLIT_BYTES:
        work(0, rows)
        return
    with _lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = concurrent.futures.ThreadPoolExecutor(threads, "gpuldpc-copy")
    edges = np.linspace(0, rows, threads + 1).astype(int)
    parts = [pool.submit(work, a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    for part in parts:
        part.result()


def copy_rows(dst: np.ndarray, src: np.ndarray, threads: int | None = None):
    """``dst[...] = src`` (same shape; any strides), split by rows (:func:`by_rows`) from
    :data:`SPLIT_BYTES` on.  Smaller copies skip building the closure for :func:`by_rows`:
    a one-frame latency call's staging copy took 1.8 us through it against 0.6 us as one
    ``numpy.copyto`` (development machine)."""
    if src.nbytes < SPLIT_BYTES:
        np.copyto(dst, src)
    else:
        by_rows(lambda a, b: np.copyto(dst[a:b], src[a:b]), src.shape[0], src.nbytes, threads)


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

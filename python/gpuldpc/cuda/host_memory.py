"""Host memory the GPU copies from and to: page-locked buffers, the result pool, the
registry of caller arrays page-locked in place, and the threads that stage pageable rows.

Why (paper 004 section IV; DESIGN.md "GPU rules"): a copy between the GPU and pageable
memory goes through a driver bounce buffer and holds the calling thread; from page-locked
memory it is one DMA that overlaps the other streams' work.  So

* results land once, by DMA, in page-locked memory that the returned ``DecodeResult``
  arrays *are* (:class:`ResultPool`: blocks reused once every array made from them is gone);
* a caller's array handed in again is page-locked in place (``cuMemHostRegister``) and
  copied by DMA from where it lies (:class:`HostRegistry`);
* any other pageable input is copied into a stream's page-locked staging buffer by several
  threads (:class:`Stager`), while the copies and kernels of the other streams run.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import os
import threading
import weakref

import numpy as np

from .driver import driver

_PINNED_KINDS: tuple = ()


def _pinned_base(array):
    """The PyCUDA page-locked allocation under ``array`` (following ``.base``, and a result
    lease's ``block``), or None."""
    global _PINNED_KINDS
    if not _PINNED_KINDS:
        drv = driver()
        _PINNED_KINDS = tuple(getattr(drv, k) for k in ("HostAllocation", "PagelockedHostAllocation",
                                                        "RegisteredHostMemory") if hasattr(drv, k))
    base = array
    while base is not None:
        if isinstance(base, _PINNED_KINDS):
            return base
        base = base.block if isinstance(base, _Lease) else getattr(base, "base", None)
    return None


def is_pinned(array: np.ndarray) -> bool:
    """True when ``array``'s memory is page-locked host memory from PyCUDA (or a result of
    this package's pool)."""
    return _pinned_base(array) is not None


def mapped_address(array: np.ndarray) -> int | None:
    """The address a kernel reads ``array`` at, for page-locked memory from
    ``cuMemHostAlloc`` (:func:`pinned_empty`) under unified addressing, where it is
    the host address (CUDA C++ Programming Guide, "Unified Virtual Address Space");
    None for any other memory (pageable, or registered with ``cuMemHostRegister``)."""
    base = _pinned_base(array)
    registered = getattr(driver(), "RegisteredHostMemory", ())
    if base is None or isinstance(base, registered):
        return None
    return array.ctypes.data


def pinned_empty(shape, dtype, ctx=None) -> np.ndarray:
    """A page-locked host array, portable (usable from every device's context) and
    mapped (kernels may read and write it in place: :func:`mapped_address`).

    CUDA allocates it under ``ctx``'s context, or under the current one when
    ``ctx`` is None (the caller is inside some ``DeviceContext.active()``).
    """
    drv = driver()
    flags = drv.host_alloc_flags.PORTABLE | drv.host_alloc_flags.DEVICEMAP
    if ctx is None:
        return drv.pagelocked_empty(shape, dtype, mem_flags=flags)
    with ctx.active():
        return drv.pagelocked_empty(shape, dtype, mem_flags=flags)


# ----------------------------------------------------------------------------- results
class _Lease:
    """The base object of the arrays handed out from one pool block: while any of them
    lives, so does the lease; when the last one goes, the block returns to its pool
    (``weakref.finalize``).  ``__array_interface__`` makes ``numpy.asarray(lease)`` a view
    of the block whose views all keep the lease (not the block) as their base."""

    __slots__ = ("__array_interface__", "block", "__weakref__")

    def __init__(self, block: np.ndarray):
        self.block = block
        self.__array_interface__ = block.__array_interface__


def _size_class(nbytes: int) -> int:
    """Block size serving ``nbytes``: the next power of two, at least 64 KiB (batches of
    varying size, as a GNU Radio block's, share a few blocks; at most 2x the bytes)."""
    return max(1 << 16, 1 << (max(nbytes, 1) - 1).bit_length())


class ResultPool:
    """Page-locked blocks for the results of decode calls, reused once released.

    :meth:`take` gives a byte array of ``nbytes`` bytes, the start of a free block of its
    size class (:func:`_size_class`) or of a new page-locked one; the block goes back to the
    pool when every array made from it has been garbage collected.  Past ``limit_bytes`` of
    page-locked blocks (a caller keeping every result) new blocks are ordinary memory, which
    the GPU fills through the driver's bounce buffer (slower, same results);
    :attr:`pageable_blocks` counts them.
    """

    def __init__(self, ctx, limit_bytes: int = 1 << 30):
        self.ctx, self.limit_bytes = ctx, int(limit_bytes)
        self._free: dict[int, list] = {}
        self._lock = threading.Lock()
        self.pinned_bytes = 0
        self.pageable_blocks = 0

    def take(self, nbytes: int, guard: list) -> np.ndarray:
        """A uint8 array of ``nbytes`` bytes (16-byte aligned) on loan from the pool.

        ``guard`` is the borrower's list of (engine, slot) whose queued copies and kernels
        write into the block; whatever it still holds when the block comes back (a ticket
        dropped uncollected) is waited for before the block is lent again."""
        size = _size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            entry = free.pop() if free else None
            grow = entry is None and self.pinned_bytes + size <= self.limit_bytes
            if grow:
                self.pinned_bytes += size
        if entry is not None:
            block, old_guard = entry
            for eng, slot in old_guard:
                with eng.ctx.active():
                    slot.done.synchronize()
        elif grow:
            block = pinned_empty(size, np.uint8, self.ctx)
        else:
            self.pageable_blocks += 1
            return np.empty(nbytes, np.uint8)
        lease = _Lease(block)
        weakref.finalize(lease, self._give_back, block, guard)
        return np.asarray(lease)[:nbytes]

    def _give_back(self, block, guard):
        with self._lock:
            self._free.setdefault(block.nbytes, []).append((block, guard))


# ----------------------------------------------------------------------- caller arrays
_CU_MEMHOSTREGISTER_PORTABLE = 1
_cuda_library = None


def _libcuda():
    """The CUDA driver library, for the two calls PyCUDA does not offer in the form needed."""
    global _cuda_library
    if _cuda_library is None:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
        lib.cuMemHostUnregister.argtypes = [ctypes.c_void_p]
        _cuda_library = lib
    return _cuda_library


def _owner(array: np.ndarray):
    """The ndarray that owns ``array``'s memory (following ``.base``), or None when the
    memory belongs to something else (a foreign buffer: its lifetime is not ours to see)."""
    base = array
    while isinstance(base, np.ndarray):
        if base.flags.owndata:
            return base
        base = base.base
    return None


class HostRegistry:
    """Caller arrays page-locked in place (``cuMemHostRegister``), remembered while they live.

    The first time an array is seen it is only noted; handed in again (a ring of buffers,
    the same array refilled) its owner's memory is registered once and copied by DMA from
    where it lies from then on.  Registration follows the owner's life: it is undone just
    before NumPy frees the memory (the weak reference's callback runs first).  Memory not
    owned by a NumPy array (foreign buffers), and owners of more than :attr:`limit_bytes`
    (slices of a large recording: page-locking gigabytes costs more than it saves), are
    never registered: their rows are staged.
    """

    limit_bytes = 1 << 30

    _shared = None

    @classmethod
    def shared(cls, ctx) -> "HostRegistry":
        """The process's registry (a range can be registered once per process; PORTABLE
        registrations serve every device), created under ``ctx`` on first use."""
        with Stager._lock:
            if cls._shared is None:
                cls._shared = cls(ctx)
        return cls._shared

    def __init__(self, ctx):
        self.ctx = ctx
        self._seen: dict[int, object] = {}       # id(owner) -> weakref.finalize (noted or registered)
        self._registered: dict[int, tuple] = {}  # id(owner) -> (start, stop, registration)
        self._lock = threading.Lock()

    def covers(self, array: np.ndarray) -> bool:
        """Whether ``array`` lies in registered memory: True from the second call with the
        same owner on (registering it then)."""
        owner = _owner(array)
        if owner is None or owner.nbytes > self.limit_bytes:
            return False
        key = id(owner)
        hit = self._registered.get(key)
        if hit is not None:
            start = array.ctypes.data
            return hit[0] <= start and start + array.nbytes <= hit[1]
        with self._lock:
            if key not in self._seen:
                self._seen[key] = weakref.finalize(owner, self._forget, key)
                return False
            if key not in self._registered:
                self._register(owner, key)
        return self.covers(array)

    def _register(self, owner, key):
        """``cuMemHostRegister`` of the owner's memory (through the driver library itself:
        PyCUDA's wrapper would keep a reference to the array, which then never dies).  A
        range the driver refuses is remembered as empty: staged, not tried again."""
        start, nbytes = owner.ctypes.data, owner.nbytes
        with self.ctx.active():
            status = _libcuda().cuMemHostRegister_v2(start, nbytes, _CU_MEMHOSTREGISTER_PORTABLE)
        self._registered[key] = (start, start + nbytes) if status == 0 else (start, start)

    def _forget(self, key):
        self._seen.pop(key, None)
        entry = self._registered.pop(key, None)
        if entry is not None and entry[1] > entry[0]:
            with self.ctx.active():
                _libcuda().cuMemHostUnregister(entry[0])


# ------------------------------------------------------------------------------ staging
STAGE_THREADS = max(1, min(8, os.cpu_count() or 1))
STAGE_SPLIT_BYTES = 1 << 20     # rows of more bytes than this are copied by several threads


class Stager:
    """Copies rows into page-locked staging buffers with :data:`STAGE_THREADS` threads
    (NumPy releases the GIL while copying; one thread copies a few GB/s, less than PCIe)."""

    _pool = None
    _lock = threading.Lock()

    @classmethod
    def copy(cls, dst: np.ndarray, src: np.ndarray):
        """``dst[...] = src`` (same shape), split over the threads for large copies."""
        if src.nbytes < STAGE_SPLIT_BYTES or STAGE_THREADS == 1 or src.shape[0] < 2:
            np.copyto(dst, src)
            return
        with cls._lock:
            if cls._pool is None:
                cls._pool = concurrent.futures.ThreadPoolExecutor(STAGE_THREADS, "gpuldpc-stage")
        edges = np.linspace(0, src.shape[0], STAGE_THREADS + 1).astype(int)
        parts = [cls._pool.submit(np.copyto, dst[a:b], src[a:b]) for a, b in zip(edges[:-1], edges[1:]) if b > a]
        for part in parts:
            part.result()

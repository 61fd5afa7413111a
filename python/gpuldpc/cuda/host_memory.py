"""Host memory the GPU copies from and to: page-locked buffers, the result pool, the
registry of caller arrays page-locked in place, and the threads that stage pageable rows.

Why (paper 004 section IV; DESIGN.md "GPU rules"): a copy between the GPU and pageable
memory goes through a driver bounce buffer and holds the calling thread; from page-locked
memory it is one DMA that overlaps the other streams' work.  So

* results land once, by DMA, in page-locked memory that the returned ``DecodeResult``
  arrays *are* (:class:`ResultPool`: blocks reused once every array made from them is gone);
* a caller's NumPy array handed in a second time is page-locked in place
  (``cuMemHostRegister``) and copied by DMA from where it lies (:class:`HostRegistry`; kept
  while it lives, so every later call costs nothing more);
* memory a caller vouches for (:meth:`gpuldpc.Decoder.page_lock`: GNU Radio's stream
  buffers, which the decoder blocks hold while they run) likewise, from the call on;
* any other pageable input (an array seen for the first time, other foreign buffers) is copied
  into a pooled page-locked block (a :class:`ResultPool` of the decoder's: its staged
  inputs) by several threads in the background, each chunk copied on to the GPU as soon as
  its rows are there (:func:`host_rows`, :class:`gpuldpc.row_copy.BackgroundCopy`).
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ..memory_maps import numpy_owner
from ..row_copy import BackgroundCopy
from .driver import driver, libcuda

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
    if base is None or isinstance(base, getattr(driver(), "RegisteredHostMemory", ())):
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


def size_class(nbytes: int) -> int:
    """Block size serving ``nbytes``: the next power of two, at least 64 KiB (batches of
    varying size, as a GNU Radio block's, share a few blocks; at most 2x the bytes)."""
    return max(1 << 16, 1 << (max(nbytes, 1) - 1).bit_length())


def release_events(triples: list, wait: bool = False):
    """Empty a list of (engine, slot, event), waiting for each event first if ``wait``, with
    each event's context current: PyCUDA cannot destroy an event from a thread where its
    context is not current and keeps it ("event in out-of-thread context could not be
    cleaned up"), which leaked the events of every ticket collected on a thread of its own
    (RSS +3.4 MiB a minute in a 5-minute GPU soak; device memory flat)."""
    while triples:
        ctx = triples[-1][0].ctx
        with ctx.current():
            while triples and triples[-1][0].ctx is ctx:
                if wait:
                    triples[-1][2].synchronize()
                triples.pop()


class ResultPool:
    """Page-locked blocks for the results of decode calls (and for staged input), reused
    once released.

    :meth:`take` gives a byte array of ``nbytes`` bytes, the start of a free block of its
    size class (:func:`size_class`) or of a new page-locked one; the block goes back to the
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

        ``guard`` is the borrower's list of (engine, slot, event): the events after its
        queued copies and kernels that write into the block; whatever it still holds when
        the block comes back (a ticket dropped uncollected) is waited for before the block
        is lent again."""
        size = size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            entry = free.pop() if free else None
            grow = entry is None and self.pinned_bytes + size <= self.limit_bytes
            if grow:
                self.pinned_bytes += size
        if entry is not None:
            block, old_guard = entry
            release_events(old_guard, wait=True)
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


_SEEN = (0, -1)
"""A :class:`HostRegistry` entry: the owner was handed in once, not registered yet."""


class HostRegistry:
    """Caller arrays page-locked in place (``cuMemHostRegister``) while they live.

    :meth:`pin` makes the rows handed in DMA-able where they lie: on the first call with
    an owner it registers exactly the owner's bytes as one range.  The driver pins the
    pages under it but tracks the byte range, and refuses a copy that straddles a range's
    edge; so one range per array keeps every copy within the array valid (ours, and any
    other CUDA library's), and the exact bytes keep copies of neighbouring allocations on
    the same pages valid (rounding out to pages broke them; docs/gpu.md).  Measured on an
    H200 host (16 cores): registering and later unregistering 195 MB costs 7 ms of
    one thread, against 6.4 ms of eight threads to copy it into a staging buffer -- and the
    copy, unlike the registration, competes with the DMA for the host's memory bandwidth.
    (Registering on a background thread while the first chunks were staged measured
    slower: 4.9 against 5.8 Gb/s for a fresh WiMAX batch; registering chunk by chunk
    split the array's registration, which broke other libraries' copies of it.)  An array
    handed in again costs nothing more; with ``submit`` the registration of the next
    batch's array overlaps the decoding of the current one.

    An owner is registered the *second* time its rows are handed in; the first time
    :meth:`pin` says False and the engine stages the rows, in the background and overlapped
    with the transfers (:func:`host_rows`): registering costs about what copying costs, but
    only a copy can overlap the DMA, and only an array that comes back repays the
    registration (a fresh array every call, or a ring of arrays, the first time round).

    Registration follows the owner's life: it is undone just before NumPy frees the memory
    (the weak reference's callback runs first).  Memory not owned by a NumPy array (foreign
    buffers, whose lifetime is not ours to see) is registered only when its owner vouches for
    it: :meth:`hold` page-locks a range until as many :meth:`release` calls (a decoder's
    :meth:`~.engine.GpuDecoder.page_lock`: GNU Radio's stream buffers, which the decoder
    blocks hold from their first ``work()`` to ``stop()``), and :meth:`covers` says whether
    rows lie in a held range.  Owners outside ``min_bytes .. limit_bytes``
    (small ones are staged at once and share pages with other allocations; large ones,
    slices of a long recording, would keep gigabytes locked) and ranges the driver refuses
    (e.g. a page already registered with a neighbour) are not pinned: :meth:`pin` says
    False and the engine stages those rows.
    """

    limit_bytes = 1 << 30
    min_bytes = 1 << 20

    _shared = None
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls, ctx) -> "HostRegistry":
        """The process's registry (a page can be registered once per process; PORTABLE
        registrations serve every device), created under ``ctx`` on first use."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls(ctx)
        return cls._shared

    def __init__(self, ctx):
        self.ctx = ctx
        self._ranges: dict[int, tuple] = {}    # id(owner) -> registered (start, stop), or (0, 0): refused
        self._lock = threading.Lock()
        self._holds: dict[tuple, int] = {}     # held (start, stop) -> holders
        self._held: tuple = ()                 # its keys, for covers() without the lock

    def pin(self, rows: np.ndarray) -> bool:
        """Whether the memory of ``rows`` is registered: False the first time its owner is
        seen (remembered while it lives), registered on the second."""
        owner = numpy_owner(rows)
        if owner is None or not self.min_bytes <= owner.nbytes <= self.limit_bytes:
            return False
        key = id(owner)
        hit = self._ranges.get(key)
        if hit is None or hit is _SEEN:
            with self._lock:
                hit = self._ranges.get(key)
                if hit is None:
                    hit = self._ranges[key] = _SEEN
                    weakref.finalize(owner, self._forget, key)
                elif hit is _SEEN:
                    hit = self._ranges[key] = self._register(owner)
        return hit[1] > 0

    def hold(self, start: int, stop: int) -> bool:
        """Page-lock the bytes ``[start, stop)`` until :meth:`release` has been called as
        often as this (several decoders may read one buffer: a GNU Radio output feeding two
        blocks); False where the driver refuses the range (e.g. it overlaps a registered
        one) -- rows in it are then staged as before."""
        key = (int(start), int(stop))
        with self._lock:
            holders = self._holds.get(key, 0)
            if not holders:
                with self.ctx.active():
                    if libcuda().cuMemHostRegister_v2(key[0], key[1] - key[0], _CU_MEMHOSTREGISTER_PORTABLE):
                        return False
            self._holds[key] = holders + 1
            self._held = tuple(self._holds)
        return True

    def release(self, start: int, stop: int):
        """One :meth:`hold` of ``[start, stop)`` less; unregistered after the last (the
        caller makes sure no copy from it is still queued)."""
        key = (int(start), int(stop))
        with self._lock:
            holders = self._holds.pop(key, 0)
            if holders > 1:
                self._holds[key] = holders - 1
            self._held = tuple(self._holds)
        if holders == 1:
            with self.ctx.active():
                libcuda().cuMemHostUnregister(key[0])

    def covers(self, rows: np.ndarray) -> bool:
        """Whether all of ``rows`` lies in one held range."""
        start = rows.ctypes.data
        stop = start + rows.nbytes
        return any(a <= start and stop <= b for a, b in self._held)

    def _register(self, owner) -> tuple:
        start = owner.ctypes.data
        stop = start + owner.nbytes
        with self.ctx.active():
            refused = libcuda().cuMemHostRegister_v2(start, stop - start, _CU_MEMHOSTREGISTER_PORTABLE)
        return (0, 0) if refused else (start, stop)

    def registered_bytes(self, owner: np.ndarray) -> int:
        """Bytes registered for ``owner``."""
        start, stop = self._ranges.get(id(owner), (0, 0))
        return max(0, stop - start)

    def _forget(self, key):
        with self._lock:
            start, stop = self._ranges.pop(key, (0, 0))
        if stop > 0:
            with self.ctx.active():
                libcuda().cuMemHostUnregister(start)


def host_rows(arr: np.ndarray, registry: HostRegistry, pool: ResultPool, guard: list, dtype=None,
              register: bool = True) -> tuple[np.ndarray, BackgroundCopy | None]:
    """Host rows as a DMA copies them: ``(rows, None)`` where ``arr`` itself serves (C-contiguous,
    of ``dtype`` -- default its own --, page-locked, held by ``registry`` or taken by it
    unless ``register`` is False), else ``(staged, copy)``: a block of ``pool`` (lent with
    ``guard``, :meth:`ResultPool.take`) that ``copy`` (:class:`~gpuldpc.row_copy.BackgroundCopy`)
    fills in the background, converting to ``dtype``; copy each chunk only after
    ``copy.wait(a, b)``."""
    dtype = arr.dtype if dtype is None else np.dtype(dtype)
    if arr.dtype == dtype and arr.flags.c_contiguous and (
            is_pinned(arr) or (register and (registry.covers(arr) or registry.pin(arr)))):
        return arr, None
    staged = pool.take(arr.size * dtype.itemsize, guard).view(dtype).reshape(arr.shape)
    return staged, BackgroundCopy(staged, arr)

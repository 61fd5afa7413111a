"""Where a buffer lies in the process's address space (Linux ``/proc/self/maps``), and
whose it is.

GNU Radio's stream buffers (``gr::vmcircbuf``) are one shared memory object mapped twice,
back to back, so that a reader finds up to a whole buffer's items contiguous wherever it
starts: GNU Radio 3.10 on Linux takes the ``sysv_shm`` factory by default (two
``/SYSV...`` mappings of one segment between two guard pages), else ``mmap_shm_open``
(a POSIX shared memory file mapped twice) or ``mmap_tmpfile`` (a file).  A ``work()``
call's input array is a window into that double map; its memory belongs to the
flowgraph, not to NumPy, and the same double map comes back every call.  The decoder
blocks page-lock the whole double map once (:meth:`gpuldpc.Decoder.page_lock`), which
needs its exact extent: :func:`mapping_of` reads it from the kernel's list of mappings.
"""
from __future__ import annotations

import ctypes
from typing import NamedTuple

import numpy as np


class Mapping(NamedTuple):
    """A run of adjacent mappings of one object: bytes ``[start, stop)``; ``shared`` when it is
    writable shared memory -- SysV (``/SYSV...``), POSIX (``/dev/shm/...``) or shared anonymous
    memory: GNU Radio's buffers -- and not a mapped file (whose pages a lock would pin from the
    file: a recording mapped with ``numpy.memmap``)."""

    start: int
    stop: int
    shared: bool

    def array(self) -> np.ndarray:
        """The run's bytes as a uint8 array (a view: no copy)."""
        return np.frombuffer((ctypes.c_char * (self.stop - self.start)).from_address(self.start), np.uint8)


def numpy_owner(array: np.ndarray) -> np.ndarray | None:
    """The ndarray that owns ``array``'s memory (following ``.base``), or None when the
    memory belongs to something else (a foreign buffer: its lifetime is not NumPy's)."""
    base = array
    while isinstance(base, np.ndarray):
        if base.flags.owndata:
            return base
        base = base.base
    return None


def byte_range(buffer) -> tuple[int, int]:
    """``(start, stop)`` addresses of the bytes of a non-empty C-contiguous array or buffer
    object (what :meth:`gpuldpc.Decoder.page_lock` takes), else ``ValueError``."""
    arr = buffer if isinstance(buffer, np.ndarray) else np.frombuffer(buffer, np.uint8)
    if not arr.flags.c_contiguous or arr.nbytes == 0:
        raise ValueError(f"page_lock takes a non-empty C-contiguous buffer, got shape {arr.shape} "
                         f"with strides {arr.strides}")
    return arr.ctypes.data, arr.ctypes.data + arr.nbytes


def _entries(maps_text: str):
    """(start, stop, object key, shared memory) of each line of ``/proc/<pid>/maps``; the key
    (permissions, device, inode, path) is what the mappings of one object share."""
    for line in maps_text.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 5:
            continue
        lo, hi = fields[0].split("-")
        perms = fields[1]
        path = fields[5].strip() if len(fields) > 5 else ""
        shm = perms.startswith("rw") and perms[3:4] == "s" and path.startswith(_SHARED_MEMORY)
        yield int(lo, 16), int(hi, 16), (perms, fields[3], fields[4], path), shm


_SHARED_MEMORY = ("/SYSV", "/dev/shm/", "/dev/zero")   # SysV, POSIX, shared anonymous (mmap(-1, n))


def mapping_of(address: int, nbytes: int, maps_text: str | None = None) -> Mapping | None:
    """The run of adjacent mappings of one object (same permissions, device, inode and
    path: GNU Radio's two views of a buffer) that holds the bytes ``[address, address +
    nbytes)``; None when no such run holds them all, or where ``/proc/self/maps`` cannot
    be read (not Linux).  ``maps_text``: the list to read instead of ``/proc/self/maps``."""
    if maps_text is None:
        try:
            with open("/proc/self/maps") as f:
                maps_text = f.read()
        except OSError:
            return None
    stop = address + max(int(nbytes), 1)
    run = None                                  # (start, stop, key, shared) of the current run
    for lo, hi, key, shared in _entries(maps_text):
        if run is not None and lo == run[1] and key == run[2]:
            run = (run[0], hi, key, shared)
        else:
            if run is not None and run[0] <= address and stop <= run[1]:
                break
            run = (lo, hi, key, shared)
    if run is None or not (run[0] <= address and stop <= run[1]):
        return None
    return Mapping(run[0], run[1], run[3])


class DoubleMap:
    """A circular buffer laid out as GNU Radio's ``vmcircbuf_sysv_shm`` lays out its stream
    buffers: one SysV shared memory segment of ``nbytes`` (a whole number of pages)
    attached twice, back to back, so that ``nbytes`` bytes from any offset below
    ``nbytes`` are contiguous (``array`` of ``2 * nbytes``: byte ``i + nbytes`` is byte ``i``).
    For the tests and benchmarks of the decoder blocks' work path on a machine without GNU
    Radio, and for callers that want such a ring.  :meth:`close` detaches it."""

    _IPC_PRIVATE, _IPC_CREAT, _IPC_RMID, _SHM_REMAP = 0, 0o1000, 0, 0o40000
    _PROT_NONE, _MAP_PRIVATE, _MAP_ANONYMOUS = 0, 0x02, 0x20

    def __init__(self, nbytes: int):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = libc.shmat.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        libc.shmdt.argtypes = [ctypes.c_void_p]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        page = ctypes.CDLL(None).getpagesize()
        if nbytes <= 0 or nbytes % page:
            raise ValueError(f"DoubleMap: nbytes must be a positive multiple of the page size {page}, got {nbytes}")
        self._libc, self.nbytes = libc, int(nbytes)
        segment = libc.shmget(self._IPC_PRIVATE, ctypes.c_size_t(nbytes), self._IPC_CREAT | 0o600)
        if segment < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        self._halves = []
        try:
            base = libc.mmap(None, 2 * nbytes, self._PROT_NONE, self._MAP_PRIVATE | self._MAP_ANONYMOUS, -1, 0)
            if base in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "mmap")
            for at in (base, base + nbytes):       # each replaces its half of the reservation
                if libc.shmat(segment, at, self._SHM_REMAP) != at:
                    error = OSError(ctypes.get_errno(), "shmat")
                    self.close()
                    libc.munmap(ctypes.c_void_p(at), ctypes.c_size_t(base + 2 * nbytes - at))
                    raise error
                self._halves.append(at)
        finally:
            libc.shmctl(segment, self._IPC_RMID, None)    # freed once both halves are detached
        self.start = base

    def array(self, dtype=np.uint8) -> np.ndarray:
        """Both views, ``2 * nbytes`` bytes, as a flat array of ``dtype`` (no copy)."""
        return Mapping(self.start, self.start + 2 * self.nbytes, True).array().view(dtype)

    def close(self):
        """Detach both views (arrays made by :meth:`array` must not be used after this)."""
        while self._halves:
            self._libc.shmdt(ctypes.c_void_p(self._halves.pop()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

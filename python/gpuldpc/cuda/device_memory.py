"""GPU memory the decoder shares with other libraries (issue 16, item 3).

* :func:`device_ordinal`: the GPU a foreign pointer (CUDA Array Interface, which has no
  device field) lies on, ``cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)``;
* :func:`wait_for_stream`: the decoder's streams wait, on the GPU, for a producer's stream
  (CUDA Array Interface v3 ``stream``; :mod:`gpuldpc.device_arrays` states the rule);
* :class:`DeviceArray`: results that stay on the GPU (``decode(..., out_device=True)``),
  exposing ``__cuda_array_interface__`` so that ``cupy.asarray(x)`` and
  ``torch.as_tensor(x, device="cuda")`` wrap them without a copy.  Their memory comes from
  a :class:`DevicePool` per device (no ``cuMemAlloc``/``cuMemFree`` per call: ``cuMemFree``
  would synchronize the device) and goes back to it when the last object holding it (the
  DeviceArray, a tensor or CuPy array wrapping it) is gone.

The CUDA libraries share the device's primary context with the decoder (:mod:`.context`),
so their pointers and ours are valid in both.
"""
from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

from .context import CudaError
from .driver import driver, libcuda
from .host_memory import size_class

_DEVICE_ORDINAL = 9             # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
_EVENT_DISABLE_TIMING = 2


def device_ordinal(pointer: int) -> int:
    """The ordinal of the GPU whose memory ``pointer`` points into (a context must be current)."""
    ordinal = ctypes.c_int(-1)
    err = libcuda().cuPointerGetAttribute(ctypes.byref(ordinal), _DEVICE_ORDINAL, int(pointer))
    if err:
        raise ValueError(f"device LLRs at {int(pointer):#x}: not memory CUDA knows (cuPointerGetAttribute "
                         f"error {err}); hand GPU arrays of this process, or host arrays")
    return ordinal.value


def wait_for_stream(producer: int, streams) -> None:
    """Work queued next on each of ``streams`` (PyCUDA streams) waits for what ``producer``
    (a CUDA stream handle; 2 is the calling thread's per-thread default stream) holds now:
    an event recorded there, waited for on the GPU."""
    lib, event = libcuda(), ctypes.c_void_p()
    err = lib.cuEventCreate(ctypes.byref(event), _EVENT_DISABLE_TIMING)
    if err:
        raise CudaError(f"cuEventCreate failed (error {err}) while waiting for the producer's stream")
    try:
        err = lib.cuEventRecord(event, producer)
        for s in streams:
            err = err or lib.cuStreamWaitEvent(s.handle, event, 0)
        if err:
            raise CudaError(f"waiting for the device LLRs' stream {producer:#x} failed (CUDA error {err}); "
                            "is __cuda_array_interface__['stream'] a stream of this device?")
    finally:
        lib.cuEventDestroy_v2(event)


class DeviceArray:
    """Results in GPU memory, with ``__cuda_array_interface__`` (version 3, ``stream`` None:
    complete when the decode returns, no stream to wait for).

    ``cupy.asarray(x)``, ``torch.as_tensor(x, device="cuda")`` and ``numba.cuda.as_cuda_array(x)``
    view the memory without a copy and keep ``x`` (and so the memory) alive; :meth:`get`
    copies it to a NumPy array.  The memory returns to the decoder's pool when the last
    holder is gone: work that reads it on a non-default stream must be synchronized before
    then (as with any caching allocator)."""

    __slots__ = ("ptr", "shape", "dtype", "strides", "_owner", "_ctx")

    def __init__(self, owner, ptr: int, shape: tuple, dtype, strides: tuple | None, ctx):
        self.ptr, self.shape, self.dtype, self.strides = int(ptr), tuple(shape), np.dtype(dtype), strides
        self._owner, self._ctx = owner, ctx       # the pooled allocation; the context it lives in

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": self.strides, "version": 3, "stream": None}

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def device(self) -> int:
        """The GPU's ordinal."""
        return self._ctx.id

    def __len__(self) -> int:
        return self.shape[0]

    def columns(self, stop: int, start: int = 0) -> "DeviceArray":
        """Columns ``start .. stop - 1`` of a C-contiguous 2-D array (a view: same memory)."""
        rows, width = self.shape
        size = self.dtype.itemsize
        return DeviceArray(self._owner, self.ptr + start * size, (rows, stop - start), self.dtype,
                           None if (start, stop) == (0, width) else (width * size, size), self._ctx)

    def get(self) -> np.ndarray:
        """A host copy (NumPy)."""
        rows = self.shape[0]
        row_bytes = self.strides[0] if self.strides else int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize
        host = np.empty(rows * row_bytes, np.uint8)
        with self._ctx.active():
            driver().memcpy_dtoh(host, self.ptr)
        if not self.strides:
            return host.view(self.dtype).reshape(self.shape)
        return host.reshape(rows, row_bytes)[:, :self.shape[1] * self.dtype.itemsize].view(self.dtype).copy()

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device}, ptr={self.ptr:#x})"


class DevicePool:
    """GPU blocks for results kept on the GPU, reused once released: the device twin of
    :class:`.host_memory.ResultPool` (size classes of :func:`.host_memory.size_class`).

    :meth:`take` gives a block from the free list of its size class or a new ``cuMemAlloc``
    (inside the context): no allocation and no ``cuMemFree`` per call (``cuMemFree`` waits
    for the whole device).  The block comes back when the last :class:`DeviceArray` made
    from it is garbage collected (``weakref.finalize`` on its lease; no CUDA call there, so
    it may happen on any thread, at any time, also at the interpreter's exit);
    :meth:`free_held` gives the free blocks back to CUDA (inside the context).  Plain PyCUDA
    allocations, not PyCUDA's ``DeviceMemoryPool``: a block of that pool freed where no
    context is current aborts the process (``explicit_context_dependent failed``, measured
    on the GPU machine when a result outlived its context)."""

    def __init__(self):
        self._free: dict[int, list] = {}
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> "_DeviceLease":
        size = size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            block = free.pop() if free else None
        if block is None:
            block = driver().mem_alloc(size)
        lease = _DeviceLease(block)
        weakref.finalize(lease, self._give_back, size, block)
        return lease

    def _give_back(self, size, block):
        with self._lock:
            self._free.setdefault(size, []).append(block)

    def free_held(self):
        with self._lock:
            blocks = [b for free in self._free.values() for b in free]
            self._free.clear()
        for block in blocks:
            block.free()


class _DeviceLease:
    """What the DeviceArrays of one block hold; the block goes back to its pool with it."""

    __slots__ = ("block", "__weakref__")

    def __init__(self, block):
        self.block = block

    def __int__(self):
        return int(self.block)


class DeviceResults:
    """One batch's results on a GPU, laid out as the host result blocks (:mod:`.engine`):
    iteration counts (int32), flag bytes, padding to 16 bytes, hard decisions.  ``out`` is
    the (bits, iterations, flags) base addresses for the kernels; ``bits`` and
    ``iterations`` the DeviceArrays handed to the caller.  Call inside the context."""

    __slots__ = ("out", "bits", "iterations")

    def __init__(self, ctx, pool: DevicePool, batch: int, width: int, flags_offset: int):
        lease = pool.take(max(1, flags_offset + batch * width))
        base = int(lease)
        self.out = (base + flags_offset, base, base + 4 * batch)
        self.bits = DeviceArray(lease, self.out[0], (batch, width), np.uint8, None, ctx)
        self.iterations = DeviceArray(lease, base, (batch,), np.int32, None, ctx)

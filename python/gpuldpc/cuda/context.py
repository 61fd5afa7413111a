"""One GPU: its retained primary context, pushed and popped around every call.

DESIGN.md "GPU rules": GNU Radio calls ``work()`` from a thread other than the one
that built the block, so nothing here relies on a current context: every use goes
through :meth:`DeviceContext.active`, which takes the device's lock, pushes the
retained primary context, and pops it again.  Several :class:`DeviceContext`
objects (several decoders) may use one GPU at once; the primary context is
shared and each object keeps its own modules, streams and buffers.
"""
from __future__ import annotations

import threading

from ..errors import BackendFault
from .driver import driver, load_module
from .tuning import DeviceLimits, KernelAttributes


class CudaError(BackendFault):
    """A CUDA call failed; the message names the kernel, the code and the batch."""


class _Active:
    """The context manager of :meth:`DeviceContext.active` (one object per context, no
    state per use: a plain class costs a microsecond less a call than a generator).  It holds
    the context's lock and CUDA context, not the :class:`DeviceContext`, so that the two form
    no reference cycle: a dropped decoder's CUDA objects are then freed at once, in the thread
    that drops it, never later by the cyclic collector in some other thread (docs/gpu.md "Tests")."""

    __slots__ = ("lock", "context")

    def __init__(self, lock, context):
        self.lock, self.context = lock, context

    def __enter__(self):
        self.lock.acquire()
        try:
            self.context.push()
        except BaseException:
            self.lock.release()
            raise

    def __exit__(self, *exc):
        try:
            driver().Context.pop()
        finally:
            self.lock.release()


class _Current:
    """The context manager of :meth:`DeviceContext.current` (push ... pop, no lock)."""

    __slots__ = ("context",)

    def __init__(self, context):
        self.context = context

    def __enter__(self):
        self.context.push()

    def __exit__(self, *exc):
        driver().Context.pop()


class DeviceContext:
    """A device id's retained primary context, its limits and its loaded kernels."""

    def __init__(self, device_id: int):
        drv = driver()
        self.id = device_id
        self.device = drv.Device(device_id)
        self.name = self.device.name()
        self.context = self.device.retain_primary_context()
        self.lock = threading.RLock()       # held around every use of this object's buffers
        self._modules = {}
        a = drv.device_attribute
        attr = self.device.get_attribute
        self.limits = DeviceLimits(
            sm_count=attr(a.MULTIPROCESSOR_COUNT),
            max_threads_per_sm=attr(a.MAX_THREADS_PER_MULTIPROCESSOR),
            max_threads_per_block=attr(a.MAX_THREADS_PER_BLOCK),
            registers_per_sm=attr(a.MAX_REGISTERS_PER_MULTIPROCESSOR),
            shared_per_sm=attr(a.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
            shared_per_block_optin=attr(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            max_blocks_per_sm=(attr(a.MAX_BLOCKS_PER_MULTIPROCESSOR)
                               if hasattr(a, "MAX_BLOCKS_PER_MULTIPROCESSOR") else 32),
            l2_bytes=attr(a.L2_CACHE_SIZE),
        )
        self.unified = bool(attr(a.UNIFIED_ADDRESSING))     # host memory readable by address in kernels
        self._active = _Active(self.lock, self.context)

    def current(self):
        """``with ctx.current():`` the primary context current, *without* the device's lock:
        for waiting on events while other threads issue work on the device."""
        return _Current(self.context)

    def active(self) -> "_Active":
        """``with ctx.active():`` holds the device's lock with its primary context current
        (push ... pop); re-entrant within a thread."""
        return self._active

    def function(self, module: str, kernel: str):
        """A kernel of a module (loaded once per context); call inside :meth:`active`."""
        if module not in self._modules:
            self._modules[module] = load_module(module, self.device)
        return self._modules[module][0].get_function(kernel)

    def module_origin(self, module: str) -> str:
        """Where a loaded module came from (fatbin path or compiled source)."""
        return self._modules[module][1]

    def kernel_attributes(self, func) -> KernelAttributes:
        a = driver().function_attribute
        return KernelAttributes(registers=func.get_attribute(a.NUM_REGS),
                                static_shared=func.get_attribute(a.SHARED_SIZE_BYTES),
                                local_bytes=func.get_attribute(a.LOCAL_SIZE_BYTES),
                                max_threads=func.get_attribute(a.MAX_THREADS_PER_BLOCK))

    def free_memory(self) -> int:
        return driver().mem_get_info()[0]

    def __repr__(self):
        return f"DeviceContext({self.id}, {self.name!r})"

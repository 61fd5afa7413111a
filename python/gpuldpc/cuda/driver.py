"""PyCUDA access: import on first use, device enumeration, kernel modules.

Nothing here runs at import time of :mod:`gpuldpc`: the package imports on
machines without a GPU or PyCUDA, and :func:`driver` raises
:class:`~gpuldpc.errors.BackendUnavailable` there.  No
``pycuda.autoinit``: contexts are the devices' retained primary contexts
(:mod:`.context`).

Kernel modules are looked up, in order, as

1. ``$GPULDPC_KERNEL_DIR/<name>.fatbin`` (or ``.cubin``) when the variable is set;
2. ``gpuldpc/kernels/<name>.fatbin``, installed by the CMake build
   (``cmake/GpuldpcKernels.cmake``: sm_80, sm_90 and compute_90 PTX);
3. the source ``kernels/<name>.cu`` of a source checkout, compiled once for the
   device's architecture through ``pycuda.compiler.compile`` (nvcc) and cached
   on disk in ``$GPULDPC_CACHE_DIR`` (default ``~/.cache/gpuldpc/kernels``).
"""
from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

from ..errors import BackendUnavailable

_PACKAGE = Path(__file__).resolve().parent.parent
_SOURCE_DIRS = (_PACKAGE / "kernels", _PACKAGE.parent.parent / "kernels")
_lock = threading.Lock()
_drv = None
_cuda_library = None


def driver():
    """``pycuda.driver``, initialized; BackendUnavailable without PyCUDA or a GPU."""
    global _drv
    if _drv is not None:
        return _drv
    with _lock:
        if _drv is None:
            try:
                import pycuda.driver as drv
            except ImportError as exc:
                raise BackendUnavailable(f"PyCUDA is not installed ({exc}); pip install pycuda") from exc
            try:
                drv.init()
                count = drv.Device.count()
            except Exception as exc:  # pycuda raises its own RuntimeError subclasses
                raise BackendUnavailable(f"CUDA driver not usable: {exc}") from exc
            if count == 0:
                raise BackendUnavailable("no CUDA device is visible")
            _drv = drv
    return _drv


def libcuda():
    """The CUDA driver library through ctypes, for the calls PyCUDA does not offer in the form
    needed: page-locking caller arrays in place (:mod:`.host_memory`), the device of a foreign
    pointer and waiting on a foreign stream (:mod:`.device_memory`)."""
    global _cuda_library
    if _cuda_library is None:
        lib = ctypes.CDLL("libcuda.so.1")
        ptr, uint = ctypes.c_void_p, ctypes.c_uint
        lib.cuMemHostRegister_v2.argtypes = [ptr, ctypes.c_size_t, uint]
        lib.cuMemHostUnregister.argtypes = [ptr]
        lib.cuPointerGetAttribute.argtypes = [ptr, ctypes.c_int, ctypes.c_uint64]
        lib.cuEventCreate.argtypes = [ctypes.POINTER(ptr), uint]
        lib.cuEventRecord.argtypes = [ptr, ptr]
        lib.cuStreamWaitEvent.argtypes = [ptr, ptr, uint]
        lib.cuEventDestroy_v2.argtypes = [ptr]
        _cuda_library = lib
    return _cuda_library


def device_ids(devices) -> list[int]:
    """Normalize ``devices``: None or "all" (every visible device), an int, or a list of ids."""
    count = driver().Device.count()
    if devices is None or devices == "all":
        return list(range(count))
    ids = [devices] if isinstance(devices, int) else list(devices)
    if not ids or any(not isinstance(i, int) or not 0 <= i < count for i in ids) or len(set(ids)) != len(ids):
        raise ValueError(f"devices={devices!r}: expected 'all', a device id or a list of distinct ids "
                         f"in 0..{count - 1}")
    return ids


def _cache_dir() -> str:
    path = os.environ.get("GPULDPC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gpuldpc", "kernels")
    os.makedirs(path, exist_ok=True)
    return path


def _binary(name: str):
    if os.environ.get("GPULDPC_KERNEL_DIR"):
        for ext in (".fatbin", ".cubin"):
            path = Path(os.environ["GPULDPC_KERNEL_DIR"]) / (name + ext)
            if path.is_file():
                return path
    from .._native import kernel_fatbin

    return kernel_fatbin(name)


def load_module(name: str, device):
    """The module ``name`` for ``device`` (a pycuda Device) in the current context."""
    drv = driver()
    path = _binary(name)
    if path is not None:
        return drv.module_from_file(str(path)), str(path)
    for d in _SOURCE_DIRS:
        src = d / (name + ".cu")
        if src.is_file():
            break
    else:
        raise BackendUnavailable(f"kernel module {name!r}: no {name}.fatbin in the package (build with "
                                 f"CMake) and no source {name}.cu in {', '.join(map(str, _SOURCE_DIRS))}")
    from pycuda.compiler import compile as nvcc_compile

    major, minor = device.compute_capability()
    try:
        cubin = nvcc_compile(src.read_text(), no_extern_c=True, arch=f"sm_{major}{minor}",
                             options=["-O3", "-std=c++17"], include_dirs=[str(src.parent)],
                             cache_dir=_cache_dir())
    except Exception as exc:
        raise BackendUnavailable(f"compiling {src} for sm_{major}{minor} failed: {exc}") from exc
    return drv.module_from_buffer(cubin), f"{src} (compiled for sm_{major}{minor})"


SHARED_DEFAULT_LIMIT = 48 * 1024     # dynamic shared memory a kernel gets without opting in


def allow_shared(func, nbytes: int):
    """Let ``func`` launch with ``nbytes`` of dynamic shared memory: past 48 KiB a kernel must opt
    in (``MAX_DYNAMIC_SHARED_SIZE_BYTES``)."""
    if nbytes > SHARED_DEFAULT_LIMIT:
        func.set_attribute(driver().function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)


class PackedLaunch:
    """Launches of one prepared kernel (``func.prepare(arg_types)`` done) with a fixed block
    shape and dynamic shared memory (allowed to the kernel here, :func:`allow_shared`), each
    distinct (grid, arguments) packed once.

    PyCUDA's ``prepared_async_call`` packs the arguments at every call (``pycuda._pvt_struct``):
    of the 10-11 us that a launch of ``nb_frame`` (25 arguments) took on the H200 host, 5 us
    were that packing and its Python; the call with the arguments packed once took 5.3 us
    (session 11, docs/gpu_nb.md).  The latency presets launch with the same arguments call
    after call (one slot, its buffers), so their buffer is packed once and handed to the
    function's launch, ``Function._launch_kernel`` (what ``prepared_async_call`` calls after
    packing).  At most :attr:`LIMIT` buffers are kept (the throughput paths' chunks vary).
    """

    LIMIT = 64

    def __init__(self, func, threads: int, shared: int):
        self.func, self.block, self.shared = func, (int(threads), 1, 1), int(shared)
        allow_shared(func, self.shared)
        self._packed = {}

    def __call__(self, stream, grid: tuple, *args):
        """Enqueue the kernel on ``stream`` over ``grid`` with ``args`` (as ``prepared_async_call``)."""
        key = (grid, args)
        buf = self._packed.get(key)
        if buf is None:
            from pycuda._pvt_struct import pack

            if len(self._packed) >= self.LIMIT:
                self._packed.clear()
            buf = self._packed[key] = pack(self.func.arg_format, *args)
        self.func._launch_kernel(grid, self.block, buf, self.shared, stream)

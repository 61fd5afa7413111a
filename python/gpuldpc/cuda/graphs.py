"""A latency call's GPU work replayed as one CUDA graph: one ``cuGraphLaunch`` instead of a
copy and one or two kernel launches.

A one-chunk call of a latency plan that is not resident (:meth:`.engine.GpuDecoder._decode_small`:
the GF(q) one-frame kernel, the 5G NR recovery and decoding kernels, binary16 latency kernels)
enqueues the same work call after call: copy the staged input to the slot's device buffer
(unless the plan reads it mapped), then ``plan.launch`` with the slot's fixed buffers.  Each
of those driver calls costs the host a few microseconds on the call's critical path (a packed
kernel launch 5.3 us, the copy's call 3-5 us on the H200 host, docs/gpu_nb.md "Session 11"),
while the GPU waits for them.  CUDA graphs (CUDA Programming Guide, "CUDA Graphs"; stream
capture, ``cuStreamBeginCapture``) record such a sequence once and launch it with one call.

:class:`GraphCache` keys a call by everything its enqueued work depends on (frames, input
kind, the input's device address, the staged host buffer's address and size; the slot's
other buffers and the plan's arguments are fixed for the slot's life): the first call of a
key runs as usual (kernels are loaded, scratch is zeroed, arguments packed), the second is
captured on the slot's stream (relaxed mode: other threads' calls are not affected) and
instantiated, and every call after it launches the graph.  Work that cannot be captured
(an error during the capture, an invalidated capture) runs as usual, and that key is never
captured again.  ``close()`` of the decoder destroys its graphs; a decoder dropped without it
keeps them (a few KB of driver memory each, at most 16 a slot) until the process ends.  PyCUDA
has no graph API: the six driver entry points are called through ``ctypes`` in the caller's
current context (the engine's ``ctx.active()``).
"""
from __future__ import annotations

import ctypes

from .context import CudaError

_CAPTURE_MODE_RELAXED = 2          # CUstreamCaptureMode: CU_STREAM_CAPTURE_MODE_RELAXED
_LIMIT = 16                        # graphs kept per slot (a latency slot sees a handful of keys)
_api = None


def _driver_api():
    """The CUDA driver library's graph entry points (loaded on first use), or False where the
    library cannot be loaded by that name (then nothing is captured)."""
    global _api
    if _api is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            _api = False
            return _api
        handle = ctypes.c_void_p
        for name, args in (("cuStreamBeginCapture_v2", (handle, ctypes.c_int)),
                           ("cuStreamEndCapture", (handle, ctypes.POINTER(handle))),
                           ("cuGraphInstantiateWithFlags", (ctypes.POINTER(handle), handle, ctypes.c_ulonglong)),
                           ("cuGraphLaunch", (handle, handle)),
                           ("cuGraphExecDestroy", (handle,)),
                           ("cuGraphDestroy", (handle,))):
            getattr(lib, name).argtypes, getattr(lib, name).restype = args, ctypes.c_int
        _api = lib
    return _api


class GraphError(CudaError):
    """A CUDA driver graph call failed (its CUresult in the message)."""


def _check(result: int, what: str):
    if result != 0:
        raise GraphError(f"{what} failed: CUresult {result}")


class GraphCache:
    """Captured graphs of one stream's repeated work (module docstring)."""

    def __init__(self):
        self._seen: set = set()
        self._refused: set = set()
        self._execs: dict = {}          # key -> CUgraphExec handle (int)

    def run(self, key, stream, enqueue):
        """Enqueue ``enqueue()``'s work on ``stream`` (a PyCUDA stream, its context current):
        as the graph captured for ``key`` where there is one, else by calling ``enqueue()``."""
        exe = self._execs.get(key)
        if exe is None and key in self._seen and key not in self._refused and len(self._execs) < _LIMIT \
                and _driver_api():
            exe = self._capture(key, stream, enqueue)
        if exe is None:
            self._seen.add(key)
            enqueue()
            return
        _check(_driver_api().cuGraphLaunch(exe, stream.handle), "cuGraphLaunch")

    def _capture(self, key, stream, enqueue):
        """The instantiated graph of ``enqueue()`` on ``stream`` (nothing runs), or None (the key
        refused) where the work cannot be captured: ``enqueue()`` raised under capture, or the
        capture was invalidated (e.g. by another thread's work on the legacy default stream,
        which a blocking stream's capture may not wait for) or could not be instantiated."""
        api, handle = _driver_api(), stream.handle
        graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
        ok = api.cuStreamBeginCapture_v2(handle, _CAPTURE_MODE_RELAXED) == 0
        if ok:
            try:
                enqueue()
            except Exception:
                ok = False
            ok = api.cuStreamEndCapture(handle, ctypes.byref(graph)) == 0 and ok    # always ends the capture
            ok = ok and api.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0) == 0
        if graph.value:
            api.cuGraphDestroy(graph)
        if not ok:
            self._refused.add(key)
            return None
        self._execs[key] = exe.value
        return exe.value

    def clear(self):
        """Destroy the graphs (their context current): before the buffers they name are freed."""
        execs, self._execs = self._execs, {}
        self._seen.clear()
        for exe in execs.values():
            _driver_api().cuGraphExecDestroy(exe)

"""The unit of work: simulate batch ``b`` of a point, wherever it runs.

:func:`run_batch` is a module-level function of a small picklable
:class:`BatchTask`, so the same call runs in the client process, in a local
process pinned to one GPU, or on a Dask worker of another machine.  Each
process keeps its decoders and codeword pools in an LRU cache (a CUDA decoder
holds device memory and compiled kernels: built once per process, not per
batch), keyed by thread too, since a Dask worker may run several tasks at once
and a decoder's buffers serve one call at a time.  A batch that raises drops
the decoder and transmitter it used from this thread's cache (a CUDA error may
leave them unusable), so the runner's retry builds fresh ones.  Workers return
counts only; the client writes the store.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections import OrderedDict

from ..codes.code import Code
from ..decoders.front import Decoder
from .frames import BatchCounts, Transmitter, simulate_batch
from .spec import RunSpec

__all__ = ["BatchTask", "run_batch", "code_ref"]

_CACHE_SIZE = 8
_decoders: OrderedDict = OrderedDict()
_transmitters: OrderedDict = OrderedDict()
_codes: dict = {}
_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class BatchTask:
    """Batch ``batch`` of ``run`` at ``ebn0_db`` on ``backend``.

    ``code`` is a ``gl.codes`` name (resolved on the worker) or, for codes read
    from files that a remote worker cannot open, the :class:`Code` itself.
    """

    code: str | Code
    algorithm: str
    schedule: str
    iterations: int
    seed: int
    frames: int
    ebn0_db: float
    batch: int
    backend: str

    @classmethod
    def of(cls, run: RunSpec, ebn0_db: float, batch: int, backend: str) -> "BatchTask":
        return cls(code_ref(run.code), run.algorithm, run.schedule, run.iterations, run.seed,
                   run.frames_per_batch, float(ebn0_db), int(batch), backend)


def code_ref(code: Code) -> str | Code:
    """The code's registry name when ``gl.codes.get`` gives this very code, else the code itself."""
    from .. import codes

    try:
        return code.name if codes.get(code.name) is code else code
    except codes.UnknownCodeError:
        return code


def _resolve_code(ref: str | Code) -> Code:
    if isinstance(ref, Code):
        return ref
    if ref not in _codes:
        from .. import codes

        _codes[ref] = codes.get(ref)
    return _codes[ref]


def _cached(cache: OrderedDict, key, build):
    key = (threading.get_ident(),) + key
    with _lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = build()
    with _lock:
        cache[key] = value
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
    return value


def _forget(cache: OrderedDict, key):
    """Drop this thread's entry ``key``; a decoder is closed (its GPU memory released)."""
    with _lock:
        value = cache.pop((threading.get_ident(),) + key, None)
    close = getattr(value, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):   # a decoder broken by the failure may not close cleanly
            close()


def run_batch(task: BatchTask) -> BatchCounts:
    """Simulate one batch; the result depends on the task only (counter-based noise).
    When it raises, this thread's cached decoder and transmitter for it are dropped."""
    code = _resolve_code(task.code)
    decoder_key = (code.name, code.n, code.k, task.algorithm, task.schedule, task.iterations, task.backend)
    transmitter_key = None
    try:
        decoder = _cached(_decoders, decoder_key,
                          lambda: Decoder(code, algorithm=task.algorithm, schedule=task.schedule,
                                          max_iterations=task.iterations, early_stop=True, backend=task.backend))
        if decoder.backend == "cuda":
            from .gpu_channel import simulate_batch_on_device

            sim = simulate_batch_on_device
            transmitter_key = ("cuda", code.name, code.n, code.k, task.seed)
            build = lambda: _device_transmitter(code, task.seed)  # noqa: E731
        else:
            sim = simulate_batch
            transmitter_key = ("host", code.name, code.n, code.k, task.seed)
            build = lambda: Transmitter(code, task.seed)  # noqa: E731
        transmitter = _cached(_transmitters, transmitter_key, build)
        return sim(decoder, transmitter, task.ebn0_db, task.batch, task.frames)
    except Exception:
        _forget(_decoders, decoder_key)
        if transmitter_key is not None:
            _forget(_transmitters, transmitter_key)
        raise


def _device_transmitter(code: Code, seed: int):
    from .gpu_channel import DeviceTransmitter

    return DeviceTransmitter(Transmitter(code, seed))

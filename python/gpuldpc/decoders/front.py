"""The decoder front door: ``gl.Decoder(code, ...)`` and ``DecodeResult``.

One object checks every argument once, picks a backend and checks every LLR
array handed to ``decode``; the backends (``reference``, ``cpu``, ``cuda``)
receive validated settings and validated, contiguous float32 arrays.

LLR convention (DESIGN.md): binary ``L = ln(P(bit=0)/P(bit=1))`` (positive means
0), shape [batch, n]; GF(q) ``L_n(a) = ln(P(x_n = s_n)/P(x_n = a)) >= 0`` with 0 at
the most likely symbol, shape [batch, n, q].
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib
import os
from typing import NamedTuple

import numpy as np

from ..codes.code import Code

BINARY_ALGORITHMS = ("nms", "oms", "spa")
NB_ALGORITHMS = ("minmax", "mmma", "fft-spa")
SCHEDULES = ("layered", "flooding")
PRECISIONS = ("float32", "float16", "int16", "int8")
BACKENDS = ("auto", "cuda", "cpu", "reference")

# backend name -> module (inside gpuldpc.decoders) whose ``make(code, settings)``
# returns an object with ``decode(llr) -> DecodeResult``.
_BACKEND_MODULES = {
    "reference": "gpuldpc.decoders.reference",
    "cpu": "gpuldpc.decoders.cpu",
    "cuda": "gpuldpc.decoders.cuda",
}


class DecodeResult(NamedTuple):
    """What ``Decoder.decode`` returns (numpy arrays, first axis = frame).

    bits : uint8 [batch, n]
        Hard decisions (bits, or GF(q) symbols as element integers).
    info : uint8 [batch, k]
        The information part, ``bits[:, code.info_positions]`` (``bits[:, :k]``
        for every systematic code).
    iterations : int32 [batch]
        Iterations run per frame (with early stop: the iteration whose
        decisions satisfied every check; without: ``max_iterations``).
    valid : bool [batch]
        Syndrome of ``bits`` is zero.
    """

    bits: np.ndarray
    info: np.ndarray
    iterations: np.ndarray
    valid: np.ndarray


@dataclasses.dataclass(frozen=True)
class Settings:
    """Validated decoder settings handed to a backend."""

    algorithm: str
    schedule: str
    max_iterations: int
    early_stop: bool
    alpha: float
    beta: float
    precision: str
    threads: int | None
    options: dict


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (no GPU, no compiled module)."""


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")


class Decoder:
    """LDPC decoder for one code; see DESIGN.md "Public API".

    Parameters
    ----------
    code : Code
        From :mod:`gpuldpc.codes` (binary or GF(q)).
    algorithm : str, optional
        Binary codes: ``"nms"`` (normalized min-sum, scale ``alpha``),
        ``"oms"`` (offset min-sum, offset ``beta``), ``"spa"`` (log-domain
        sum-product).  GF(q) codes: ``"minmax"``, ``"mmma"``, ``"fft-spa"``.
        Default ``"nms"`` / ``"minmax"``.
    schedule : {"layered", "flooding"}
    max_iterations : int >= 1
    early_stop : bool
        Stop a frame as soon as its hard decisions satisfy every check.
    backend : {"auto", "cuda", "cpu", "reference"}
        ``auto`` takes ``cuda`` when a GPU and PyCUDA are usable, then ``cpu``
        when the compiled module is present, then ``reference``; ``backend``
        says which was taken.
    alpha, beta : float
        Min-sum scale (0 < alpha <= 1) and offset (beta >= 0).
    precision : {"float32", "float16", "int16", "int8"}
        Message arithmetic, where the backend offers it: "float16" (binary min-sum,
        IEEE binary16 with clamps, :mod:`gpuldpc.decoders.reference_binary`) on
        ``cuda`` and ``reference`` (the same bits), where ``auto`` takes ``cuda`` or
        else ``reference``; "int16", "int8" on ``cpu``.
    threads : int or None
        Worker threads (cpu backend); None = all cores.
    **options
        Backend-specific options (e.g. ``devices``, ``streams``, ``preset``).
    """

    def __init__(self, code: Code, algorithm: str | None = None, schedule: str = "layered",
                 max_iterations: int = 10, early_stop: bool = True, backend: str = "auto",
                 alpha: float = 0.75, beta: float = 0.5, precision: str = "float32",
                 threads: int | None = None, **options):
        if not isinstance(code, Code):
            raise TypeError(f"code must be a gpuldpc Code (gl.codes.get(...)), got {type(code).__name__}")
        algorithms = BINARY_ALGORITHMS if code.is_binary else NB_ALGORITHMS
        if algorithm is None:
            algorithm = algorithms[0]
        _check_choice("algorithm", algorithm, algorithms)
        _check_choice("schedule", schedule, SCHEDULES)
        _check_choice("backend", backend, BACKENDS)
        _check_choice("precision", precision, PRECISIONS)
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
                or max_iterations < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        if not 0.0 < float(alpha) <= 1.0:
            raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
        if not float(beta) >= 0.0:
            raise ValueError(f"beta must be >= 0, got {beta!r}")
        if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
            raise ValueError(f"threads must be None or an integer >= 1, got {threads!r}")
        self.code = code
        self.settings = Settings(algorithm, schedule, int(max_iterations), bool(early_stop),
                                 float(alpha), float(beta), precision, threads, dict(options))
        self.backend, self._impl = self._make_backend(backend)

    def _make_backend(self, backend):
        order = ("cuda", "cpu", "reference") if backend == "auto" else (backend,)
        errors = []
        for name in order:
            try:
                module = importlib.import_module(_BACKEND_MODULES[name])
                return name, module.make(self.code, self.settings)
            except (ImportError, BackendUnavailable) as exc:
                if backend != "auto":
                    raise BackendUnavailable(f"backend {name!r} is not usable here: {exc}") from exc
                errors.append(f"{name}: {exc}")
        raise BackendUnavailable("no decoder backend is usable: " + "; ".join(errors))

    @property
    def algorithm(self) -> str:
        return self.settings.algorithm

    @property
    def schedule(self) -> str:
        return self.settings.schedule

    @property
    def max_iterations(self) -> int:
        return self.settings.max_iterations

    def check_llr(self, llr) -> np.ndarray:
        """Validate an LLR array; return it C-contiguous, shape [batch, ...].

        Binary codes: [batch, n].  GF(q) codes: symbol LLRs [batch, n, q], or the
        bit LLRs of the binary image [batch, n*m] (m = log2 q, bit order of
        :mod:`gpuldpc.gf`), converted here by
        :func:`gpuldpc.channel.bit_llr_to_symbol_llr` unless the backend takes
        them as they are (``accepts_bit_llr``: cuda converts on the GPU).
        Floating-point input becomes float32 unless the backend takes its dtype
        as is (``llr_dtypes`` of the backend, e.g. float16 or int8 for cuda).
        """
        code = self.code
        arr = np.asarray(llr)
        accepted = getattr(self._impl, "llr_dtypes", (np.dtype(np.float32),))
        if arr.dtype not in accepted and arr.dtype.kind != "f":
            names = ", ".join(str(np.dtype(d)) for d in accepted)
            raise TypeError(f"LLRs must be floating point ({names} for backend {self.backend!r}), "
                            f"got dtype {arr.dtype}")
        shapes = [(code.n,)] if code.is_binary else [(code.n, code.q), (code.n * code.bits_per_symbol,)]
        if any(arr.shape == s for s in shapes):
            arr = arr[None]
        if arr.ndim < 2 or tuple(arr.shape[1:]) not in shapes:
            wanted = " or ".join("[batch, " + ", ".join(map(str, s)) + "]" for s in shapes)
            raise ValueError(f"code {code.name!r}: LLRs must have shape {wanted}, got {tuple(np.shape(llr))}")
        arr = np.ascontiguousarray(arr, dtype=arr.dtype if arr.dtype in accepted else np.float32)
        if not getattr(self._impl, "checks_finite", False):     # else the backend raises the same
            check_finite(arr, code.name)
        if arr.ndim == 2 and not code.is_binary and not getattr(self._impl, "accepts_bit_llr", False):
            from ..channel import bit_llr_to_symbol_llr

            arr = bit_llr_to_symbol_llr(arr, code.q)
        return arr

    def decode(self, llr) -> DecodeResult:
        """Decode a batch of frames; see the class docstring for the conventions."""
        return self._impl.decode(self.check_llr(llr))

    def decode_device(self, llr, frames: int) -> DecodeResult:
        """Decode ``frames`` frames whose LLRs are already on the GPU (cuda backend only).

        ``llr``: a device allocation (PyCUDA ``DeviceAllocation`` or an integer device
        pointer) on the decoder's first device holding the frames one after the
        other: float32 [frames, n] for binary codes (the backend's ``llr_dtype``),
        symbol LLRs float32 [frames, n, q] for GF(q) codes.  No copy in and no finite
        check (the values never visit the host): for pipelines whose LLRs are made on
        the GPU, such as the simulator's noise (:mod:`gpuldpc.sim.gpu_channel`).
        """
        own = getattr(self._impl, "decode_device", None)
        if own is None:
            raise TypeError(f"decode_device needs the cuda backend; this decoder runs on {self.backend!r}: "
                            "hand host arrays to decode()")
        return own(llr, frames)

    def pinned_llr(self, frames: int) -> np.ndarray:
        """An LLR array [frames, ...] that ``decode`` takes without staging it.

        Page-locked memory for the cuda backend (copied to the GPU as is);
        ordinary memory for the others.
        """
        own = getattr(self._impl, "pinned_llr", None)
        if own is not None:
            return own(frames)
        tail = (self.code.n,) if self.code.is_binary else (self.code.n, self.code.q)
        return np.empty((frames,) + tail, np.float32)

    def preferred_batch(self, preset: str = "throughput") -> int:
        """Frames per ``decode`` call that keep the backend busy.

        ``latency``: the smallest batch that fills the backend once (one GPU wave,
        or one SIMD chunk); ``throughput``: enough to overlap copies and kernels
        over all streams (or all threads).
        """
        _check_choice("preset", preset, ("latency", "throughput"))
        own = getattr(self._impl, "preferred_batch", None)
        return int(own(preset)) if own is not None else (1 if preset == "latency" else 64)

    def __repr__(self):
        s = self.settings
        return (f"Decoder({self.code.name!r}, algorithm={s.algorithm!r}, schedule={s.schedule!r}, "
                f"max_iterations={s.max_iterations}, early_stop={s.early_stop}, "
                f"backend={self.backend!r})")


_FINITE_CHUNK = 1 << 22          # elements per reduction in check_finite
_finite_pool = None


def _chunk_sum(flat, start):
    return float(np.add.reduce(flat[start:start + _FINITE_CHUNK], dtype=np.float64))


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise ValueError naming the frames when ``arr`` holds NaN or +-inf.

    One pass without temporaries: a NaN or infinity makes the (float64) sum of a
    chunk non-finite, and finite float32 values cannot overflow a float64 sum.
    Large arrays are reduced in chunks on a thread pool (NumPy releases the GIL),
    so the check stays far from being the bottleneck of a GPU decode.
    """
    if arr.dtype.kind != "f" or arr.size == 0:
        return
    flat = arr.reshape(-1)
    starts = range(0, flat.size, _FINITE_CHUNK)
    if len(starts) > 1:
        global _finite_pool
        if _finite_pool is None:
            _finite_pool = concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1),
                                                                 "gpuldpc-check")
        total = sum(_finite_pool.map(lambda s: _chunk_sum(flat, s), starts))
    else:
        total = _chunk_sum(flat, 0)
    if not np.isfinite(total):
        bad = np.flatnonzero(~np.isfinite(arr).reshape(arr.shape[0], -1).all(axis=1))
        raise ValueError(f"code {name!r}: LLRs contain NaN or infinite values "
                         f"(frames {bad[:8].tolist()}{'...' if bad.size > 8 else ''})")


def make_result(code: Code, bits: np.ndarray, iterations: np.ndarray, valid: np.ndarray) -> DecodeResult:
    """Assemble a DecodeResult from a backend's arrays (info at ``code.info_positions``)."""
    bits = np.ascontiguousarray(bits, dtype=np.uint8)
    pos = code.info_positions
    # pos is sorted: it is 0..k-1 exactly when its last entry is k-1.
    info = bits[:, :code.k] if pos[-1] == code.k - 1 else bits[:, pos]
    return DecodeResult(bits, info, np.asarray(iterations, dtype=np.int32),
                        np.asarray(valid, dtype=bool))

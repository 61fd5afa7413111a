"""GF(q) decoding on one GPU: Min-Max (flooding / block-layered) and FFT-SPA kernels.

::

    from gpuldpc.cuda.nb_decoder import NbCudaDecoder
    dec = NbCudaDecoder(gl.codes.get("gf32-744-653"), "mmma", "layered", max_iterations=10)
    res = dec.decode(symbol_llr)       # float32 [batch, n, q], Min-Max convention
    res = dec.decode(bit_llr)          # float32 [batch, n*m], binary image over BPSK

Kernels (``kernels/nb_minmax.cu``, ``kernels/nb_fftspa.cu``; module docstrings there):
``"minmax"`` and ``"mmma"`` run the forward-backward Min-Max check update with the
MMMA merger; the two names give the same numbers (:mod:`gpuldpc.decoders.reference_nb`)
and the schedule picks flooding (paper 003) or block-layered (paper 000).
``"fft-spa"`` is paper 002's probability-domain decoder (flooding only).  One thread
block decodes one frame through all its iterations (one launch per chunk of frames);
bit LLRs are turned into symbol LLRs inside the kernel (``nb_common.cuh``), so a
caller may hand either and only ``n*m`` floats per frame cross PCIe for bit LLRs.

Context machinery shared with the binary decoder (:mod:`.context`): the device's
retained primary context pushed and popped around every call, page-locked staging
buffers (:func:`.context.pinned_empty`) reused across calls, ``streams`` streams each
owning its buffers, issued depth-first (copy in, kernel, copy out) with a stream's
results collected only when its buffers are needed again.  Launch shape from the
device's limits and the kernel's registers (:func:`.nb_layout.launch_shape`).

Outputs are a :class:`~gpuldpc.decoders.front.DecodeResult` with the symbols (element
integers) in ``bits``, the information symbols in ``info``, iterations and syndrome
flags per frame, as the reference decoders give them.
"""
from __future__ import annotations

import numpy as np

from ..decoders.front import check_finite, make_result
from .context import CudaError, DeviceContext, pinned_empty
from .driver import driver
from .nb_layout import NbLayout, launch_shape, nb_layout

ALGORITHMS = ("minmax", "mmma", "fft-spa")
SCHEDULES = ("layered", "flooding")


def kernel_name(algorithm: str, q: int) -> tuple[str, str]:
    """(module, function) of the decoding kernel for ``algorithm`` over GF(q)."""
    return ("nb_fftspa", f"nb_fftspa_q{q}") if algorithm == "fft-spa" else ("nb_minmax", f"nb_minmax_q{q}")


class _Slot:
    """One stream with its device buffers and page-locked host buffers.

    Buffers are sized on first use for the frames a launch needs (at most the
    decoder's ``chunk_frames``) and the input's floats per frame (bit or symbol LLRs),
    grown when a later call needs more, and reused otherwise.
    """

    def __init__(self, ctx, layout: NbLayout, channel_copy: bool, r_copies: int):
        self.ctx, self.layout, self.channel_copy, self.r_copies = ctx, layout, channel_copy, r_copies
        self.stream = driver().Stream()
        self.frames = 0
        self.in_floats = 0
        self.pending = None                                                # (start, stop) in flight

    def reserve(self, frames: int, in_floats: int):
        """Make room for ``frames`` frames of ``in_floats`` input floats each."""
        drv = driver()
        n, q, e = self.layout.n, self.layout.q, self.layout.edges
        if frames * in_floats > self.frames * self.in_floats:
            self.dev_in = drv.mem_alloc(4 * frames * in_floats)
            self.host_in = pinned_empty(frames * in_floats, np.float32, self.ctx)
            self.in_floats = in_floats
        if frames > self.frames:
            self.dev_post = drv.mem_alloc(4 * frames * n * q)              # L / T / Pch
            self.dev_chan = drv.mem_alloc(4 * frames * n * q) if self.channel_copy else None
            self.dev_r = drv.mem_alloc(4 * frames * e * q * self.r_copies)
            self.dev_sym = drv.mem_alloc(frames * n)
            self.dev_iters = drv.mem_alloc(4 * frames)
            self.dev_valid = drv.mem_alloc(frames)
            self.host_sym = pinned_empty((frames, n), np.uint8, self.ctx)
            self.host_iters = pinned_empty(frames, np.int32, self.ctx)
            self.host_valid = pinned_empty(frames, np.uint8, self.ctx)
            self.frames = frames


class NbCudaDecoder:
    """GF(q) LDPC decoder on one CUDA device.

    Parameters
    ----------
    code : Code
        A GF(q) code, q in 4..256 (``gl.codes.get("gf32-744-653")``).
    algorithm : {"minmax", "mmma", "fft-spa"}
    schedule : {"layered", "flooding"}
        FFT-SPA runs flooding whatever is asked (its rows are independent within an
        iteration); ``schedule`` reports what ran.
    max_iterations : int >= 1
    early_stop : bool
        A frame stops after the first iteration whose decisions satisfy every check.
    device : int
        CUDA device id.
    streams : int >= 1
        Streams (each with its own buffers), issued depth-first.
    chunk_frames : int or None
        Frames per launch per stream; None: two waves of resident blocks, at most
        an eighth of the free device memory per stream.
    units : int or None
        Check rows per block at once (Min-Max workers / FFT-SPA groups); None: from ``preset``.
    preset : {"throughput", "latency"}
        Block shape keeping the most rows in flight per multiprocessor, or the most rows
        per block (:func:`.nb_layout.launch_shape`).
    check_finite : bool
        Reject NaN and infinite LLRs (ValueError naming the frames).
    """

    def __init__(self, code, algorithm: str = "minmax", schedule: str = "layered", max_iterations: int = 10,
                 early_stop: bool = True, *, device: int = 0, streams: int = 2,
                 chunk_frames: int | None = None, units: int | None = None, preset: str = "throughput",
                 check_finite: bool = True):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={algorithm!r} is not one of {', '.join(map(repr, ALGORITHMS))}")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not one of {', '.join(map(repr, SCHEDULES))}")
        for name, value in (("max_iterations", max_iterations), ("streams", streams)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        self.code = code
        self.layout = layout = nb_layout(code)
        self.algorithm = algorithm
        self.schedule = "flooding" if algorithm == "fft-spa" else schedule
        self.max_iterations = int(max_iterations)
        self.early_stop = bool(early_stop)
        self.check_finite = bool(check_finite)
        self.ctx = DeviceContext(device)
        drv = driver()
        flooding = self.schedule == "flooding"
        self._groups = (layout.flood_ptr, layout.flood_rows) if flooding else (layout.layer_ptr, layout.layer_rows)
        rows_at_once = layout.m if flooding or algorithm == "fft-spa" else layout.largest_layer
        self.module, self.kernel = kernel_name(algorithm, layout.q)
        with self.ctx.active():
            self._func = self.ctx.function(self.module, self.kernel)
            self.kernel_attributes = self.ctx.kernel_attributes(self._func)
            self.shape = launch_shape(algorithm, layout, self.ctx.limits, self.kernel_attributes,
                                      rows_at_once, units, preset)
            self._func.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, self.shape.shared)
            self._tables = {name: drv.to_device(np.ascontiguousarray(getattr(layout, name)))
                            for name in ("exp", "log", "row_ptr", "edge_col", "edge_h", "vn_ptr", "vn_edge",
                                         "edge_other")}
            self._tables["group_ptr"] = drv.to_device(self._groups[0])
            self._tables["group_rows"] = drv.to_device(self._groups[1])
            per_frame = 4 * layout.q * (layout.n * (3 if flooding and algorithm != "fft-spa" else 2)
                                        + layout.edges * (2 if algorithm == "fft-spa" else 1)) + layout.n + 5
            self.wave = wave = self.ctx.limits.sm_count * self.shape.blocks_per_sm
            if chunk_frames is None:
                chunk_frames = max(1, min(2 * wave, self.ctx.free_memory() // (8 * streams * per_frame)))
            elif isinstance(chunk_frames, bool) or not isinstance(chunk_frames, (int, np.integer)) \
                    or chunk_frames < 1:
                raise ValueError(f"chunk_frames must be an integer >= 1, got {chunk_frames!r}")
            self.chunk_frames = int(chunk_frames)
            fft = algorithm == "fft-spa"
            self._slots = [_Slot(self.ctx, layout, flooding and not fft, 2 if fft else 1)
                           for _ in range(int(streams))]

    accepts_bit_llr = True      # gl.Decoder hands [batch, n*m] bit LLRs through: converted on the GPU

    @property
    def streams(self) -> int:
        return len(self._slots)

    def preferred_batch(self, preset: str = "throughput") -> int:
        """Frames per call: one wave (``latency``) or a chunk for every stream (``throughput``)."""
        return self.wave if preset == "latency" else self.streams * self.chunk_frames

    # ---- input checks ----------------------------------------------------
    def check_llr(self, llr) -> tuple[np.ndarray, bool]:
        """(float32 C-contiguous [batch, ...], True for bit LLRs) or a clear exception."""
        n, q, m = self.layout.n, self.layout.q, self.layout.bits_per_symbol
        arr = np.asarray(llr)
        if arr.dtype.kind != "f":
            raise TypeError(f"code {self.code.name!r}: LLRs must be floating point (float32), got dtype "
                            f"{arr.dtype}")
        if arr.ndim == 3 and arr.shape[1:] == (n, q):
            bits = False
        elif arr.ndim == 2 and arr.shape[1] == n * m:
            bits = True
        else:
            raise ValueError(f"code {self.code.name!r}: LLRs must be symbol LLRs [batch, {n}, {q}] or bit "
                             f"LLRs [batch, {n * m}] (n*m, m = {m} bits per symbol), got shape {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if self.check_finite:
            check_finite(arr, self.code.name)
        return arr, bits

    # ---- decoding ----------------------------------------------------------
    def _launch(self, slot: _Slot, frames: int, bits: bool):
        t, lay = self._tables, self.layout
        gptr, grows = self._groups
        sizes = (np.int32(lay.n), np.int32(lay.m), np.int32(lay.edges), np.int32(lay.max_degree))
        common = sizes + (np.int32(self.max_iterations), np.int32(self.early_stop))
        if self.algorithm == "fft-spa":
            args = (slot.dev_in, np.int32(bits), slot.dev_post, slot.dev_r, slot.dev_sym, slot.dev_iters,
                    slot.dev_valid, t["exp"], t["log"], t["row_ptr"], t["edge_col"], t["edge_h"],
                    t["edge_other"], t["vn_ptr"], t["vn_edge"]) + sizes + (
                    np.int32(lay.max_column_weight), np.int32(self.max_iterations), np.int32(self.early_stop))
        else:
            flooding = self.schedule == "flooding"
            args = (slot.dev_in, np.int32(bits), slot.dev_post,
                    slot.dev_chan if flooding else np.intp(0), slot.dev_r, slot.dev_sym, slot.dev_iters,
                    slot.dev_valid, t["exp"], t["log"], t["row_ptr"], t["edge_col"], t["edge_h"],
                    t["group_ptr"], t["group_rows"], np.int32(len(gptr) - 1), t["vn_ptr"],
                    t["vn_edge"]) + common + (np.int32(flooding),)
        self._func(*args, block=(self.shape.threads, 1, 1), grid=(frames, 1), shared=self.shape.shared,
                   stream=slot.stream)

    def _where(self, a: int, b: int, batch: int) -> str:
        return (f"kernel {self.kernel} (code {self.code.name!r}, {self.algorithm}/{self.schedule}, "
                f"frames {a}..{b - 1} of a batch of {batch})")

    def _issue(self, slot: _Slot, arr: np.ndarray, a: int, b: int, bits: bool):
        drv = driver()
        count = b - a
        src = slot.host_in[:count * arr[0].size].reshape((count,) + arr.shape[1:])
        np.copyto(src, arr[a:b])
        try:
            drv.memcpy_htod_async(slot.dev_in, src, slot.stream)
            self._launch(slot, count, bits)
            drv.memcpy_dtoh_async(slot.host_sym[:count], slot.dev_sym, slot.stream)
            drv.memcpy_dtoh_async(slot.host_iters[:count], slot.dev_iters, slot.stream)
            drv.memcpy_dtoh_async(slot.host_valid[:count], slot.dev_valid, slot.stream)
        except drv.Error as exc:
            raise CudaError(f"{self._where(a, b, arr.shape[0])}: {exc}") from exc
        slot.pending = (a, b)

    def _collect(self, slot: _Slot, out, batch: int):
        a, b = slot.pending
        try:
            slot.stream.synchronize()
        except driver().Error as exc:
            raise CudaError(f"{self._where(a, b, batch)}: {exc}") from exc
        sym, iters, valid = out
        sym[a:b] = slot.host_sym[:b - a]
        iters[a:b] = slot.host_iters[:b - a]
        valid[a:b] = slot.host_valid[:b - a]
        slot.pending = None

    def decode(self, llr):
        """Decode symbol LLRs [batch, n, q] or bit LLRs [batch, n*m]; returns a DecodeResult."""
        arr, bits = self.check_llr(llr)
        batch = arr.shape[0]
        out = (np.empty((batch, self.layout.n), np.uint8), np.empty(batch, np.int32),
               np.empty(batch, np.uint8))
        per_launch = min(batch, self.chunk_frames)
        with self.ctx.active():
            for slot in self._slots[:-(-batch // per_launch)]:
                slot.reserve(per_launch, arr[0].size)
            for k, a in enumerate(range(0, batch, self.chunk_frames)):
                slot = self._slots[k % len(self._slots)]
                if slot.pending is not None:
                    self._collect(slot, out, batch)
                self._issue(slot, arr, a, min(a + self.chunk_frames, batch), bits)
            for slot in self._slots:
                if slot.pending is not None:
                    self._collect(slot, out, batch)
        return make_result(self.code, out[0], out[1], out[2].astype(bool))

    def kernel_seconds(self, llr, repeats: int = 5) -> float:
        """Median time of one launch on the first ``chunk_frames`` frames of ``llr`` (inputs on
        the device already): the kernel-only figure of bench/gpu_nb.py."""
        arr, bits = self.check_llr(llr)
        count = min(arr.shape[0], self.chunk_frames)
        drv = driver()
        slot = self._slots[0]
        with self.ctx.active():
            slot.reserve(count, arr[0].size)
            drv.memcpy_htod(slot.dev_in, np.ascontiguousarray(arr[:count]))
            times = []
            for _ in range(repeats + 1):
                start, stop = drv.Event(), drv.Event()
                start.record(slot.stream)
                self._launch(slot, count, bits)
                stop.record(slot.stream)
                stop.synchronize()
                times.append(stop.time_since(start) * 1e-3)
        return float(np.median(times[1:]))

    def __repr__(self):
        return (f"NbCudaDecoder({self.code.name!r}, {self.algorithm!r}, {self.schedule!r}, "
                f"max_iterations={self.max_iterations}, early_stop={self.early_stop}, "
                f"units={self.shape.units}, threads={self.shape.threads}, chunk_frames={self.chunk_frames}, "
                f"streams={self.streams}, device={self.ctx.name!r})")


def bit_llr_to_symbol_llr(bit_llr, q: int, device: int = 0) -> np.ndarray:
    """:func:`gpuldpc.channel.bit_llr_to_symbol_llr` on the GPU (kernels/nb_llr.cu), bit for bit.

    ``bit_llr``: float32 [batch, n*m] (m = log2 q); returns float32 [batch, n, q].
    """
    if q not in (4, 8, 16, 32, 64, 128, 256):
        raise ValueError(f"q must be one of 4, 8, ..., 256, got {q!r}")
    m = q.bit_length() - 1
    arr = np.ascontiguousarray(bit_llr, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] % m:
        raise ValueError(f"bit_llr must have shape [batch, n*{m}] for q={q}, got {arr.shape}")
    symbols = arr.size // m
    out = np.empty((arr.shape[0], arr.shape[1] // m, q), np.float32)
    drv = driver()
    ctx = DeviceContext(device)
    with ctx.active():
        func = ctx.function("nb_llr", "nb_bits_to_symbol_llr")
        threads = 256
        blocks = -(-symbols * q // threads)
        try:
            func(drv.In(arr), drv.Out(out), np.int64(symbols), np.int32(m), block=(threads, 1, 1),
                 grid=(blocks, 1))
        except drv.Error as exc:
            raise CudaError(f"kernel nb_bits_to_symbol_llr ({symbols} symbols of GF({q})): {exc}") from exc
    return out


def make(code, settings) -> NbCudaDecoder:
    """The GF(q) CUDA decoder for validated ``front.Settings`` (for gpuldpc.decoders.cuda to call)."""
    options = dict(settings.options)
    known = ("device", "streams", "chunk_frames", "units", "preset")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown GF(q) cuda option(s) {unknown}; known: {', '.join(known)}")
    return NbCudaDecoder(code, settings.algorithm, settings.schedule, settings.max_iterations,
                         settings.early_stop, check_finite=False, **options)

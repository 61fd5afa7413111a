"""GF(q) decoding on the GPU: Min-Max and trellis Min-Max (flooding / block-layered) and FFT-SPA kernels.

::

    from gpuldpc.cuda.nb_decoder import NbCudaDecoder
    dec = NbCudaDecoder(gl.codes.get("gf32-744-653"), "mmma", "layered", max_iterations=10)
    res = dec.decode(symbol_llr)       # float32 [batch, n, q], Min-Max convention
    res = dec.decode(bit_llr)          # float32 [batch, n*m], binary image over BPSK

Kernels (``kernels/nb_minmax.cu``, ``kernels/nb_fftspa.cu``; module docstrings there):
``"minmax"`` and ``"mmma"`` run the forward-backward Min-Max check update with the
MMMA merger; the two names give the same numbers (:mod:`gpuldpc.decoders.reference_nb`)
and the schedule picks flooding (paper 003) or block-layered (paper 000).  ``"tmm"`` runs
the same kernel template with the trellis Min-Max check node (``nb_tmm_q<q>``,
:mod:`gpuldpc.decoders.reference_tmm`, check messages scaled by ``alpha``), ``"tmm1"`` with
step 5's pairs from first minima (``nb_tmm1_q<q>``).
``"fft-spa"`` is paper 002's probability-domain decoder (flooding only).  One thread
block decodes one frame through all its iterations (one launch per chunk of frames);
bit LLRs are turned into symbol LLRs inside the kernel (``nb_common.cuh``), so a
caller may hand either and only ``n*m`` floats per frame cross PCIe for bit LLRs.

The stream engine is the binary decoder's (:mod:`.engine`): the device's retained
primary context pushed and popped around every call, page-locked buffers reused
across calls, ``streams`` streams per device each owning its buffers, issued
depth-first (copy in, kernel, copy out), ``submit``/``result``, several GPUs
(``devices``), device-resident input (``decode_device``).  This module gives it
the per-device plan: the kernel, the tables and the block shape from the device's
limits and the kernel's registers (:func:`.nb_layout.ranked_shapes`), the model's first
few shapes timed on the device (:mod:`.autotune`).

Outputs are a :class:`~gpuldpc.result.DecodeResult` with the symbols (element
integers) in ``bits``, the information symbols in ``info``, iterations and syndrome
flags per frame, as the reference decoders give them.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..result import DecodeResult, info_index, info_runs
from . import autotune
from .context import CudaError, DeviceContext
from .driver import PackedLaunch, driver
from .engine import GpuDecoder
from .host_memory import pinned_empty
from .nb_frame import NbFrameKernel
from .nb_layout import nb_layout, ranked_shapes

ALGORITHMS = ("minmax", "mmma", "tmm", "tmm1", "fft-spa")
SCHEDULES = ("layered", "flooding")
# argument types of the entry points (prepared calls): kernels/nb_minmax.cu, kernels/nb_fftspa.cu
_MINMAX_ARGS = "Pi" + "P" * 13 + "i" + "PP" + "i" * 7 + "Pf"
_FFTSPA_ARGS = "Pi" + "P" * 13 + "i" * 7


def check_soft_output(soft_output: bool, algorithm: str, preset: str):
    """ValueError unless soft output is off or the decoder runs Min-Max or T-MM with the throughput
    preset (``nb_minmax`` writes the posterior costs; FFT-SPA and the one-frame latency kernel do not)."""
    if soft_output and (algorithm == "fft-spa" or preset != "throughput"):
        raise ValueError(f"soft_output: the GF(q) cuda decoders write posterior costs with Min-Max "
                         f"('minmax', 'mmma', 'tmm', 'tmm1') and preset='throughput'; got algorithm={algorithm!r}, "
                         f"preset={preset!r}")


def kernel_name(algorithm: str, q: int) -> tuple[str, str]:
    """(module, function) of the decoding kernel for ``algorithm`` over GF(q)."""
    if algorithm == "fft-spa":
        return "nb_fftspa", f"nb_fftspa_q{q}"
    return "nb_minmax", (f"nb_{algorithm}_q{q}" if algorithm.startswith("tmm") else f"nb_minmax_q{q}")


class _NbPlan:
    """The GF(q) kernel on one device (the stream engine's plan, :mod:`.engine`): entry
    point, GF tables and index tables, block shape (:func:`.nb_layout.ranked_shapes`, :mod:`.autotune`).

    Scratch of a stream, per frame (float32): posteriors ``L``/``T``/``Pch`` [n, q], the
    flooding Min-Max channel copy [n, q], messages ``R`` [E, q] (FFT-SPA keeps two copies).
    """

    def __init__(self, ctx, dec: "NbCudaDecoder"):
        drv = driver()
        lay = dec.layout
        self.dec, self.name = weakref.proxy(dec), dec.kernel   # weak: the decoder owns the plan (no cycle)
        self.sm_count = ctx.limits.sm_count
        self.fft = dec.algorithm == "fft-spa"
        # latency preset, Min-Max flooding: one frame over many multiprocessors (nb_frame.py)
        self.frame = (NbFrameKernel(ctx, lay, dec.algorithm, dec.schedule, dec.max_iterations, dec.early_stop)
                      if dec.preset == "latency" and NbFrameKernel.supports(lay, dec.algorithm, dec.schedule,
                                                                            ctx.limits) else None)
        if self.frame is not None:
            self.name = f"nb_frame_q{lay.q}"
        self.func = ctx.function(dec.module, dec.kernel)
        self.attributes = ctx.kernel_attributes(self.func)
        self.func.prepare(_FFTSPA_ARGS if self.fft else _MINMAX_ARGS)
        self.tables = {name: drv.to_device(np.ascontiguousarray(getattr(lay, name)))
                       for name in ("exp", "log", "row_ptr", "edge_col", "edge_h", "vn_ptr", "vn_edge",
                                    "edge_other")}
        self.tables["group_ptr"] = drv.to_device(dec.groups[0])
        self.tables["group_rows"] = drv.to_device(dec.groups[1])
        self.bits_width = lay.n
        self.default_streams = 1 if dec.preset == "latency" else 2
        # bit LLRs are read q times each by the conversion: in place over PCIe they would
        # cost more than the copy, so the GF(q) kernels always read device copies; the
        # latency preset writes symbols, iterations and flags straight into mapped host
        # memory (no copy out, :mod:`.engine`)
        self.mapped_input = False
        self.mapped_output = dec.preset == "latency" and ctx.unified
        self.channel_copy = dec.schedule == "flooding" and not self.fft
        self.nq = lay.n * lay.q
        self.soft_width = self.nq if dec.soft_output else 0    # posterior costs a frame (engine)
        shapes = ranked_shapes(dec.algorithm, lay, ctx.limits, self.attributes, dec.rows_at_once, dec.units,
                               dec.preset)
        key = (dec.kernel, lay.n, lay.m, lay.edge_col.tobytes(), lay.edge_h.tobytes(), dec.schedule,
               dec.max_iterations, dec.soft_output)
        shape, rates = autotune.measured_shape(self, ctx, shapes, key, self._noise, "bits",
                                               dec.chunk_request)
        self.tuning = None if rates is None else {s.units: rate for s, rate in rates.items()}
        self.use_shape(shape)

    def use_shape(self, shape):
        """Launch in ``shape`` from now on."""
        self.shape = shape
        self._launch = PackedLaunch(self.func, shape.threads, shape.shared)
        self.frames_per_wave = (self.frame.frames_per_launch_hint if self.frame is not None
                                else self.wave_frames(shape))

    def wave_frames(self, shape) -> int:
        """Frames a launch in ``shape`` keeps resident: a frame a block."""
        return self.sm_count * shape.blocks_per_sm

    def _noise(self) -> np.ndarray:
        """64 frames of noise bit LLRs (:mod:`.autotune`)."""
        lay = self.dec.layout
        return np.random.default_rng(0).normal(0.0, 2.0, (64, lay.n * lay.bits_per_symbol)).astype(np.float32)

    def resident(self, slot):
        """The one-frame kernel kept running for the slot's lone frames of bit LLRs (latency
        preset, Min-Max flooding, ``resident=True``, a device that maps host memory), or None
        (:mod:`.engine`, :meth:`.nb_frame.NbFrameKernel.resident`)."""
        if self.frame is None or not self.dec.resident or not self.frame.ctx.unified:
            return None
        return self.frame.resident(slot.out)

    def default_chunk(self, streams, free_bytes) -> int:
        """Two waves of resident blocks (one for latency), at most an eighth of the free
        device memory per stream."""
        per_frame = self.scratch_bytes(1) + self.frame_bytes("symbols") + self.bits_width + 5
        waves = 1 if self.dec.preset == "latency" else 2
        return max(1, min(waves * self.frames_per_wave, free_bytes // (8 * streams * per_frame)))

    def frame_bytes(self, kind) -> int:
        lay = self.dec.layout
        return 4 * (lay.n * lay.bits_per_symbol if kind == "bits" else self.nq)

    def scratch_bytes(self, frames) -> int:
        lay = self.dec.layout
        if self.frame is not None:
            return self.frame.scratch_bytes(frames)
        return 4 * frames * (self.nq * (2 if self.channel_copy else 1) + lay.edges * lay.q * (2 if self.fft else 1))

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        if self.frame is not None:
            return self.frame.launch(stream, count, dev_in, kind == "bits", *out[:3], scratch)  # (no soft output)
        d, lay, t = self.dec, self.dec.layout, self.tables
        post = int(scratch)
        r = post + 4 * capacity * self.nq * (2 if self.channel_copy else 1)
        ptr = np.intp
        head = (ptr(int(dev_in)), np.int32(kind == "bits"), ptr(post))
        outs = (ptr(out[0]), ptr(out[1]), ptr(out[2]), t["exp"], t["log"], t["row_ptr"], t["edge_col"], t["edge_h"])
        sizes = (np.int32(lay.n), np.int32(lay.m), np.int32(lay.edges), np.int32(lay.max_degree))
        run = (np.int32(d.max_iterations), np.int32(d.early_stop))
        if self.fft:
            args = head + (ptr(r),) + outs + (t["edge_other"], t["vn_ptr"], t["vn_edge"]) + sizes + (
                np.int32(lay.max_column_weight),) + run
        else:
            chan = ptr(post + 4 * capacity * self.nq if self.channel_copy else 0)
            args = head + (chan, ptr(r)) + outs + (t["group_ptr"], t["group_rows"], np.int32(len(d.groups[0]) - 1),
                                                   t["vn_ptr"], t["vn_edge"]) + sizes + run + (
                np.int32(d.schedule == "flooding"), ptr(out[3]), np.float32(d.alpha))
        self._launch(stream, (count, 1), *args)


class NbCudaDecoder(GpuDecoder):
    """GF(q) LDPC decoder on one or several CUDA devices (the engine: :mod:`.engine`).

    Parameters
    ----------
    code : Code
        A GF(q) code, q in 4..256 (``gl.codes.get("gf32-744-653")``).
    algorithm : {"minmax", "mmma", "tmm", "tmm1", "fft-spa"}
    schedule : {"layered", "flooding"}
        FFT-SPA runs flooding whatever is asked (its rows are independent within an
        iteration); ``schedule`` reports what ran.
    max_iterations : int >= 1
    early_stop : bool
        A frame stops after the first iteration whose decisions satisfy every check.
    devices : "all", int or list of int
        GPUs to use; a batch is split over them in equal parts.
    streams : int or None
        Streams per device (each with its own buffers), issued depth-first; None: 2
        (``throughput``) or 1 (``latency``).
    chunk_frames : int or None
        Frames per launch per stream; None: two waves of resident blocks (one for
        ``latency``), at most an eighth of the free device memory per stream.
    units : int or None
        Check rows per block at once (Min-Max workers / FFT-SPA groups); None: from ``preset``
        (``throughput``: the fastest of the model's first shapes, timed on the device when the
        decoder is made, :mod:`.autotune`; ``tuning`` says what was measured).
    preset : {"throughput", "latency"}
        Block shape keeping the most rows in flight per multiprocessor, or the most rows
        per block (:func:`.nb_layout.launch_shape`); ``latency`` with Min-Max flooding runs
        one frame over many multiprocessors (:class:`.nb_frame.NbFrameKernel`).
    alpha : float in (0, 1]
        ``"tmm"``, ``"tmm1"``: the scale of the check messages (:mod:`gpuldpc.decoders.reference_tmm`);
        unused by the other rules.
    resident : bool
        With ``preset="latency"`` and Min-Max flooding: lone frames of bit LLRs go to a copy of
        the one-frame kernel that stays running between calls (:mod:`.resident`; it leaves
        1 ms after the last call), instead of a launch each (False: always launched).
    soft_output : bool
        Min-Max (``"minmax"``, ``"mmma"``, ``"tmm"``, ``"tmm1"``) with ``preset="throughput"``: ``DecodeResult.llr``
        holds each frame's posterior costs at its stop, float32 [batch, n, q], normalised to 0 at
        the decided symbol (:func:`gpuldpc.soft.normalized_costs`; written by the kernel,
        ``kernels/nb_minmax.cu`` ``write_costs``): the reference decoder's numbers bit for bit.
    """

    device_kind = "symbols"

    def __init__(self, code, algorithm: str = "minmax", schedule: str = "layered", max_iterations: int = 10,
                 early_stop: bool = True, *, devices="all", streams: int | None = None,
                 chunk_frames: int | None = None, units: int | None = None, preset: str = "throughput",
                 soft_output: bool = False, alpha: float = 0.75, resident: bool = True):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={algorithm!r} is not one of {', '.join(map(repr, ALGORITHMS))}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)) \
                or not 0.0 < float(alpha) <= 1.0:
            raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
        self.alpha = float(alpha)
        check_soft_output(soft_output, algorithm, preset)
        self.soft_output = bool(soft_output)
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not one of {', '.join(map(repr, SCHEDULES))}")
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
                or max_iterations < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        self.code = code
        self.info_at = info_index(code)     # where DecodeResult.info lies in the symbols (found once)
        self.info_runs = info_runs(self.info_at)   # copied into it by DMA unless a view (.engine.copy_columns)
        self.layout = layout = nb_layout(code)
        self.algorithm = algorithm
        self.schedule = "flooding" if algorithm == "fft-spa" else schedule
        self.max_iterations = int(max_iterations)
        self.early_stop = bool(early_stop)
        self.units, self.preset, self.resident = units, preset, bool(resident)
        flooding = self.schedule == "flooding"
        self.groups = (layout.flood_ptr, layout.flood_rows) if flooding else (layout.layer_ptr, layout.layer_rows)
        self.rows_at_once = layout.m if flooding or algorithm == "fft-spa" else layout.largest_layer
        self.module, self.kernel = kernel_name(algorithm, layout.q)
        self._start(devices, streams, chunk_frames, "bits")

    accepts_bit_llr = True      # gl.Decoder hands [batch, n*m] bit LLRs through: converted on the GPU

    def _plan(self, ctx) -> _NbPlan:
        return _NbPlan(ctx, self)

    def pinned_llr(self, batch: int, kind: str = "symbols") -> np.ndarray:
        """A page-locked LLR array that ``decode`` copies as is: symbol LLRs [batch, n, q],
        or with ``kind="bits"`` bit LLRs [batch, n*m]."""
        lay = self.layout
        shape = (batch, lay.n * lay.bits_per_symbol) if kind == "bits" else (batch, lay.n, lay.q)
        return pinned_empty(shape, np.float32, self.engines[0].ctx)

    @property
    def shape(self):
        """Block shape on the first device."""
        return self.engines[0].plan.shape

    @property
    def kernel_attributes(self):
        return self.engines[0].plan.attributes

    @property
    def streams(self) -> int:
        return self.engines[0].streams

    @property
    def chunk_frames(self) -> int:
        return self.engines[0].chunk

    # ---- input checks ----------------------------------------------------
    def check_llr(self, llr) -> tuple[np.ndarray, str]:
        """(float32 C-contiguous [batch, ...], "bits" or "symbols") or a clear exception."""
        n, q, m = self.layout.n, self.layout.q, self.layout.bits_per_symbol
        arr = np.asarray(llr)
        if arr.dtype.kind != "f":
            raise TypeError(f"code {self.code.name!r}: LLRs must be floating point (float32), got dtype "
                            f"{arr.dtype}")
        if arr.ndim == 3 and arr.shape[1:] == (n, q):
            kind = "symbols"
        elif arr.ndim == 2 and arr.shape[1] == n * m:
            kind = "bits"
        else:
            raise ValueError(f"code {self.code.name!r}: LLRs must be symbol LLRs [batch, {n}, {q}] or bit "
                             f"LLRs [batch, {n * m}] (n*m, m = {m} bits per symbol), got shape {arr.shape}")
        return np.ascontiguousarray(arr, dtype=np.float32), kind

    def _result(self, ticket):
        """The engine's result, the soft output [batch, n*q] seen as [batch, n, q]."""
        res = super()._result(ticket)
        return res if res.llr is None else res._replace(llr=res.llr.reshape(-1, self.layout.n, self.layout.q))

    def _make_result(self, bits, iterations, valid, bad_llr, info=None):
        """DecodeResult of the arrays the kernels filled (``valid``, ``bad_llr``: the flags' bits,
        :func:`.engine.split_flags`); ``info`` a view of ``bits`` where the information symbols
        are a run, else the ticket's copy of them (DMA'd run by run: a host gather of gf32-837-726's
        three runs took 26 ms of a 131 ms call of 16384 frames on the H200's host), or gathered here."""
        return DecodeResult(bits, bits[:, self.info_at] if info is None else info, iterations, valid, bad_llr)

    def __repr__(self):
        return (f"NbCudaDecoder({self.code.name!r}, {self.algorithm!r}, {self.schedule!r}, "
                f"max_iterations={self.max_iterations}, early_stop={self.early_stop}, "
                f"units={self.shape.units}, threads={self.shape.threads}, chunk_frames={self.chunk_frames}, "
                f"streams={self.streams}, devices={[e.ctx.id for e in self.engines]})")


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

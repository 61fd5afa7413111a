"""The CUDA decoder: fused kernels, pinned buffers, depth-first streams, several GPUs.

Paper 004 section IV: page-locked host buffers allocated once and reused;
asynchronous copies; ``N`` streams, each owning its buffers, issued depth-first
(Algorithm 2: for each stream H2D, kernel, D2H; then wait); several GPUs, one
host thread each (Fig. 5).  Paper 001 section IV-D: the launch shape comes from
the device and the kernel (:mod:`.tuning`).

A batch of ``B`` frames is split over the devices (equal parts), and on each
device into chunks of ``chunk_frames`` frames handed to the streams in turn.  A
chunk is copied into the stream's pinned input buffer unless the caller's array
is already page-locked (:meth:`CudaDecoder.pinned_llr`, or any PyCUDA
page-locked array), in which case it is copied to the GPU as is; likewise the
hard decisions go straight into a page-locked ``out`` array.

``submit(llr)`` issues the work and returns at once (a :class:`Ticket`);
``result(ticket)`` waits and returns the :class:`~gpuldpc.decoders.front.DecodeResult`.
``decode(llr) = result(submit(llr))``.  A stream reused before its previous chunk
was collected is first waited for and its results stored in that chunk's
ticket, so any number of tickets may be outstanding.
"""
from __future__ import annotations

import concurrent.futures
from typing import NamedTuple

import numpy as np

from ..decoders.front import BINARY_ALGORITHMS, SCHEDULES, DecodeResult, check_finite
from .context import CudaError, DeviceContext, is_pinned, pinned_empty
from .driver import device_ids, driver
from .layout import NotQuasiCyclic, qc_layout
from .tuning import PRESETS, launch_shape

KERNEL_MODULE = "qc_decode"
# min-sum kernels with compressed rows in registers: (layers, blocks per row) they fit
REGISTER_VARIANTS = ((12, 7), (12, 8), (8, 16), (4, 24), (16, 16))
# min-sum with a check row spread over several threads (kernels/qc_decode.cu EdgeParallelMinSum),
# per preset: (layers, lanes per row, edges per lane, block limit of its __launch_bounds__)
EDGE_PARALLEL = {"latency": (12, 8, 1, 768), "throughput": None}
STORED_MAX_ROW_BLOCKS = 27        # kernels/qc_decode.cu: StoredMessages<27>, sign bits of a row
RULES = {"nms": 0, "oms": 1, "spa": 2}
LLR_DTYPES = {"float32": ("f32", np.float32), "float16": ("f16", np.float16), "int8": ("i8", np.int8)}
_SMEM_DEFAULT_LIMIT = 48 * 1024
# hard decisions of a chunk larger than this go straight into a page-locked `out` array;
# smaller ones come back with the flags in one copy (one driver call less, a short host copy)
DIRECT_BITS_MIN = 64 * 1024
_ARG_TYPES = "PfPiPPPPPiiiiiiiiiff"


def kernel_name(layout, algorithm: str, schedule: str, llr_dtype: str, preset: str = "throughput") -> str:
    """Entry point of kernels/qc_decode.cu for a code layout and settings: the preset's
    edge-parallel kernel (:data:`EDGE_PARALLEL`) where the code fits it, else the
    row-per-thread kernels."""
    variant = "stored"
    ep = EDGE_PARALLEL[preset]
    if (ep and algorithm != "spa" and layout.layers <= ep[0] and layout.max_row_blocks <= ep[1] * ep[2]
            and layout.z * ep[1] <= ep[3]):
        variant = "ep{}x{}x{}".format(*ep[:3])
    elif algorithm != "spa":
        for layers, row in REGISTER_VARIANTS:
            if layout.layers <= layers and layout.max_row_blocks <= row:
                variant = f"ms{layers}x{row}"
                break
    if layout.max_row_blocks > STORED_MAX_ROW_BLOCKS:
        raise NotQuasiCyclic(f"a check row of {layout.max_row_blocks} blocks exceeds the kernels' "
                             f"limit of {STORED_MAX_ROW_BLOCKS}")
    return f"qc_{variant}_{schedule}_{LLR_DTYPES[llr_dtype][0]}"


class Ticket(NamedTuple):
    """Work issued by :meth:`CudaDecoder.submit`; pass it to :meth:`CudaDecoder.result`."""

    bits: np.ndarray
    iterations: np.ndarray
    valid: np.ndarray
    parts: tuple            # (engine, start, stop) per device


def kernel_lanes(kernel: str) -> int:
    """Threads per check row of an entry point (``qc_ep<layers>x<lanes>x<edges>_...``: lanes, else 1)."""
    variant = kernel.split("_")[1]
    return int(variant.split("x")[1]) if variant.startswith("ep") else 1


class _Slot:
    """One stream with its pinned host buffers and device buffers (``capacity`` frames).

    The results share one buffer on each side: iteration counts (int32), valid flags
    (uint8), padding to 16 bytes, then the hard decisions; so a chunk's results come
    back in one copy (its first ``flags + count * bits_width`` bytes), or in two when
    the bits go straight into the caller's page-locked array."""

    def __init__(self, ctx, capacity, n, llr_dtype, bits_width, msg_floats):
        drv = driver()
        self.stream = drv.Stream()
        self.capacity = capacity
        self.flags = -(-5 * capacity // 16) * 16
        self.bits_width = bits_width
        self.host_in = pinned_empty((capacity, n), llr_dtype, ctx)
        self.host_out = pinned_empty(self.flags + capacity * bits_width, np.uint8, ctx)
        self.host_iters = self.host_out[:4 * capacity].view(np.int32)
        self.host_valid = self.host_out[4 * capacity:5 * capacity]
        self.host_bits = self.host_out[self.flags:].reshape(capacity, bits_width)
        self.dev_in = drv.mem_alloc(self.host_in.nbytes)
        self.dev_out = drv.mem_alloc(self.host_out.nbytes)
        self.dev_iters = int(self.dev_out)
        self.dev_valid = int(self.dev_out) + 4 * capacity
        self.dev_bits = int(self.dev_out) + self.flags
        self.dev_msgs = drv.mem_alloc(capacity * msg_floats * 4) if msg_floats else None
        self.pending = None     # (ticket arrays, start, stop, bits written directly)

    @staticmethod
    def device_bytes(capacity, n, itemsize, bits_width, msg_floats) -> int:
        return capacity * (n * itemsize + bits_width + 4 + 1 + 4 * msg_floats) + 16


class _DeviceEngine:
    """The decoder on one device: kernel, launch shape, stream slots."""

    def __init__(self, ctx: DeviceContext, owner: "CudaDecoder", streams, chunk_frames, frames_per_block):
        drv = driver()
        self.ctx, self.owner = ctx, owner
        layout = owner.layout
        flooding = owner.schedule == "flooding"
        with ctx.active():
            self.func = ctx.function(KERNEL_MODULE, owner.kernel)
            self.attributes = ctx.kernel_attributes(self.func)
            self.shape = launch_shape(layout, ctx.limits, self.attributes, flooding, owner.preset,
                                      frames_per_block, kernel_lanes(owner.kernel))
            if self.shape.shared_bytes > _SMEM_DEFAULT_LIMIT:
                self.func.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        self.shape.shared_bytes)
            self.func.prepare(_ARG_TYPES)
            wave = self.shape.frames_per_wave
            if owner.preset == "latency":
                self.streams = streams or 1
                self.chunk = chunk_frames or wave
            else:
                self.streams = streams or 8
                self.chunk = chunk_frames or 2 * wave
            msg_floats = layout.nblocks * layout.z if owner.kernel.startswith("qc_stored") else 0
            itemsize = np.dtype(owner.llr_np_dtype).itemsize
            need = self.streams * _Slot.device_bytes(self.chunk, layout.n, itemsize, owner.bits_width,
                                                     msg_floats)
            free = ctx.free_memory()
            try:
                if need > free:
                    raise drv.MemoryError("requested more than the free device memory")
                self.edges = drv.to_device(layout.edges)
                self.layer_start = drv.to_device(layout.layer_start)
                self.slots = [_Slot(ctx, self.chunk, layout.n, owner.llr_np_dtype, owner.bits_width, msg_floats)
                              for _ in range(self.streams)]
            except drv.MemoryError as exc:
                raise MemoryError(
                    f"cuda decoder for code {owner.code.name!r} on device {ctx.id} ({ctx.name}): "
                    f"{self.streams} streams x {self.chunk} frames need {need / 2**20:.1f} MiB of device "
                    f"memory (and as much page-locked host memory), "
                    f"{free / 2**20:.1f} MiB are free; lower streams= or chunk_frames=") from exc
        self._next = 0

    def _where(self, start, stop, batch):
        o = self.owner
        return (f"kernel {o.kernel} (code {o.code.name!r}, batch of {batch} frames, frames "
                f"{start}..{stop - 1}, device {self.ctx.id})")

    def issue(self, ticket: Ticket, start: int, stop: int, llr: np.ndarray):
        """Issue frames ``start:stop`` of the ticket (``llr`` holds just those) depth-first."""
        drv = driver()
        o, shape = self.owner, self.shape
        batch = ticket.bits.shape[0]
        llr_pinned = is_pinned(llr)
        out_bits = ticket.bits[start:stop]
        bits_pinned = (stop - start) * o.bits_width > DIRECT_BITS_MIN and is_pinned(out_bits)
        with self.ctx.active():
            for a in range(0, stop - start, self.chunk):
                b = min(a + self.chunk, stop - start)
                count = b - a
                slot = self.slots[self._next % self.streams]
                self._next += 1
                self._collect(slot)
                src = llr[a:b]
                if not llr_pinned:
                    slot.host_in[:count] = src
                    src = slot.host_in[:count]
                # small chunks (the latency path): one copy back, then a short host copy
                direct = bits_pinned and count * slot.bits_width > DIRECT_BITS_MIN
                try:
                    drv.memcpy_htod_async(slot.dev_in, src, slot.stream)
                    self.func.prepared_async_call(
                        (-(-count // shape.frames_per_block), 1), (shape.threads, 1, 1), slot.stream,
                        slot.dev_in, o.llr_scale, slot.dev_bits, int(o.packed), slot.dev_iters,
                        slot.dev_valid, self.edges, self.layer_start,
                        slot.dev_msgs if slot.dev_msgs is not None else 0,
                        o.layout.n, o.layout.z, o.layout.layers, o.layout.nblocks, count,
                        shape.frames_per_block, o.max_iterations, int(o.early_stop), RULES[o.algorithm],
                        o.alpha, o.beta, shared_size=shape.shared_bytes)
                    if direct:
                        drv.memcpy_dtoh_async(out_bits[a:b], slot.dev_bits, slot.stream)
                        drv.memcpy_dtoh_async(slot.host_out[:slot.flags], slot.dev_out, slot.stream)
                    else:
                        drv.memcpy_dtoh_async(slot.host_out[:slot.flags + count * slot.bits_width],
                                              slot.dev_out, slot.stream)
                except drv.Error as exc:
                    raise CudaError(f"{self._where(start + a, start + b, batch)}: {exc}") from exc
                slot.pending = (ticket, start + a, start + b, direct)

    def _collect(self, slot: _Slot):
        """Wait for a slot's chunk and store its results in its ticket."""
        if slot.pending is None:
            return
        ticket, a, b, direct = slot.pending
        slot.pending = None
        try:
            slot.stream.synchronize()
        except driver().Error as exc:
            raise CudaError(f"{self._where(a, b, ticket.bits.shape[0])}: {exc}") from exc
        count = b - a
        if not direct:
            ticket.bits[a:b] = slot.host_bits[:count]
        ticket.iterations[a:b] = slot.host_iters[:count]
        ticket.valid[a:b] = slot.host_valid[:count].view(bool)

    def collect(self, ticket: Ticket):
        """Wait for every chunk of ``ticket`` on this device."""
        with self.ctx.active():
            for slot in self.slots:
                if slot.pending is not None and slot.pending[0] is ticket:
                    self._collect(slot)


class CudaDecoder:
    """Binary QC-LDPC decoder on one or several GPUs.

    Parameters
    ----------
    code : gpuldpc Code
        A binary QC code (``code.base``, ``code.z``), e.g. ``gl.codes.get("wimax-2304-1/2")``.
    algorithm, schedule, max_iterations, early_stop, alpha, beta
        As :class:`gpuldpc.Decoder`; min-sum ("nms", "oms") is bit-exact with the
        reference decoder, "spa" matches its frame error rate.
    devices : "all", int or list of int
        GPUs to use; a batch is split over them in equal parts.
    preset : {"throughput", "latency"}
        Launch shape and stream count (:mod:`gpuldpc.cuda.tuning`).
    streams, chunk_frames, frames_per_block : int, optional
        Overrides: streams per device, frames per stream launch, frames per block.
    llr_dtype : {"float32", "float16", "int8"}
        Input format; float16/int8 values are multiplied by ``llr_scale`` on the GPU.
    packed : bool
        Hard decisions packed 8 per byte (``numpy.packbits`` order) instead of one per byte.
    check_finite : bool
        Reject NaN/infinite float LLRs (costs one pass over the input on the host).
    """

    def __init__(self, code, algorithm="nms", schedule="layered", max_iterations=10, early_stop=True,
                 alpha=0.75, beta=0.5, *, devices="all", preset="throughput", streams=None,
                 chunk_frames=None, frames_per_block=None, llr_dtype="float32", llr_scale=1.0,
                 packed=False, check_finite=True):
        if algorithm not in BINARY_ALGORITHMS:
            raise ValueError(f"algorithm={algorithm!r} is not one of {BINARY_ALGORITHMS}")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not one of {SCHEDULES}")
        if preset not in PRESETS:
            raise ValueError(f"preset={preset!r} is not one of {PRESETS}")
        if llr_dtype not in LLR_DTYPES:
            raise ValueError(f"llr_dtype={llr_dtype!r} is not one of {tuple(LLR_DTYPES)}")
        for name, value in (("streams", streams), ("chunk_frames", chunk_frames),
                            ("frames_per_block", frames_per_block)):
            if value is not None and (not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f"{name} must be None or an integer >= 1, got {value!r}")
        if not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        self.code = code
        self.layout = qc_layout(code)
        self.algorithm, self.schedule, self.preset = algorithm, schedule, preset
        self.max_iterations, self.early_stop = int(max_iterations), bool(early_stop)
        self.alpha, self.beta = np.float32(alpha), np.float32(beta)
        self.llr_dtype, self.llr_np_dtype = llr_dtype, LLR_DTYPES[llr_dtype][1]
        self.llr_scale = np.float32(llr_scale)
        self.packed, self.check_finite = bool(packed), bool(check_finite)
        self.bits_width = (code.n + 7) // 8 if self.packed else code.n
        self.kernel = kernel_name(self.layout, algorithm, schedule, llr_dtype, preset)
        self.engines = [_DeviceEngine(DeviceContext(i), self, streams, chunk_frames, frames_per_block)
                        for i in device_ids(devices)]
        self._pool = (concurrent.futures.ThreadPoolExecutor(len(self.engines), "gpuldpc-device")
                      if len(self.engines) > 1 else None)

    # ----------------------------------------------------------------- buffers
    def pinned_llr(self, batch: int) -> np.ndarray:
        """A page-locked LLR array [batch, n] of ``llr_dtype`` that ``decode`` copies as is."""
        return pinned_empty((batch, self.code.n), self.llr_np_dtype, self.engines[0].ctx)

    def preferred_batch(self, preset: str = "throughput") -> int:
        """Frames per call: one wave of every device (``latency``), or every stream of
        every device given a full chunk (``throughput``)."""
        if preset == "latency":
            return sum(e.shape.frames_per_wave for e in self.engines)
        return sum(e.streams * e.chunk for e in self.engines)

    def pinned_bits(self, batch: int) -> np.ndarray:
        """A page-locked hard-decision array for ``out=``."""
        return pinned_empty((batch, self.bits_width), np.uint8, self.engines[0].ctx)

    def check_llr(self, llr) -> np.ndarray:
        """Validate ``llr`` [batch, n] of ``llr_dtype``; returns a C-contiguous array."""
        arr = np.asarray(llr)
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[1] != self.code.n:
            raise ValueError(f"code {self.code.name!r}: LLRs must have shape [batch, {self.code.n}], "
                             f"got {np.shape(llr)}")
        if arr.dtype != self.llr_np_dtype:
            raise TypeError(f"LLRs must be {self.llr_dtype} for this decoder (llr_dtype="
                            f"{self.llr_dtype!r}), got dtype {arr.dtype}")
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        if self.check_finite:
            check_finite(arr, self.code.name)
        return arr

    # ------------------------------------------------------------------ decode
    def _ticket(self, llr, out) -> tuple:
        arr = self.check_llr(llr)
        batch = arr.shape[0]
        if out is None:
            out = np.empty((batch, self.bits_width), np.uint8)
        elif out.shape != (batch, self.bits_width) or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous uint8 array of shape {(batch, self.bits_width)}, "
                             f"got {out.dtype} {out.shape}")
        if len(self.engines) == 1:
            parts = ((self.engines[0], 0, batch),)
        else:
            edges = np.linspace(0, batch, len(self.engines) + 1).astype(int)
            parts = tuple((eng, int(a), int(b)) for eng, a, b in zip(self.engines, edges[:-1], edges[1:]) if b > a)
        return arr, Ticket(out, np.empty(batch, np.int32), np.empty(batch, bool), parts)

    def submit(self, llr, out=None) -> Ticket:
        """Issue a batch and return at once; ``out`` (optional) receives the hard decisions."""
        arr, ticket = self._ticket(llr, out)
        for eng, a, b in ticket.parts:
            eng.issue(ticket, a, b, arr[a:b])
        return ticket

    def result(self, ticket: Ticket) -> DecodeResult:
        """Wait for a submitted batch; its DecodeResult (bits packed when ``packed``)."""
        for eng, _, _ in ticket.parts:
            eng.collect(ticket)
        return self._result(ticket)

    def decode(self, llr, out=None) -> DecodeResult:
        """Decode a batch: ``result(submit(llr, out))``, devices driven from one thread each."""
        if self._pool is None:
            return self.result(self.submit(llr, out))
        arr, ticket = self._ticket(llr, out)

        def run(part):
            eng, a, b = part
            eng.issue(ticket, a, b, arr[a:b])
            eng.collect(ticket)

        for f in [self._pool.submit(run, p) for p in ticket.parts]:
            f.result()
        return self._result(ticket)

    def _result(self, ticket):
        k = self.code.k
        if self.packed:
            info = (ticket.bits[:, :k // 8] if k % 8 == 0 else
                    np.packbits(np.unpackbits(ticket.bits, axis=1, count=k), axis=1))
        else:
            info = ticket.bits[:, :k]
        return DecodeResult(ticket.bits, info, ticket.iterations, ticket.valid)

    def syndrome_weight(self, bits) -> np.ndarray:
        """Unsatisfied checks per frame of hard decisions uint8 [batch, n] (kernels/syndrome.cu)."""
        drv = driver()
        bits = np.ascontiguousarray(bits, dtype=np.uint8)
        if bits.ndim != 2 or bits.shape[1] != self.code.n:
            raise ValueError(f"code {self.code.name!r}: bits must have shape [batch, {self.code.n}], "
                             f"got {bits.shape}")
        layout, eng = self.layout, self.engines[0]
        weight = np.zeros(bits.shape[0], np.int32)
        threads = 256
        with eng.ctx.active():
            func = eng.ctx.function("syndrome", "syndrome_weight")
            d_bits, d_weight = drv.to_device(bits), drv.to_device(weight)
            try:
                func(d_bits, d_weight, eng.edges, eng.layer_start, np.int32(layout.layers),
                     np.int32(layout.n), np.int32(layout.z), np.int32(bits.shape[0]),
                     block=(threads, 1, 1), grid=(-(-bits.shape[0] * layout.layers * layout.z // threads), 1))
                drv.memcpy_dtoh(weight, d_weight)
            except drv.Error as exc:
                raise CudaError(f"kernel syndrome_weight (code {self.code.name!r}, batch of "
                                f"{bits.shape[0]} frames, device {eng.ctx.id}): {exc}") from exc
        return weight

    @property
    def devices(self) -> list[DeviceContext]:
        return [e.ctx for e in self.engines]

    def describe(self) -> dict:
        """Kernel, launch shape and streams per device (for logs and benchmarks)."""
        return {"kernel": self.kernel, "devices": [
            {"id": e.ctx.id, "name": e.ctx.name, "module": e.ctx.module_origin(KERNEL_MODULE),
             "registers": e.attributes.registers, "frames_per_block": e.shape.frames_per_block,
             "threads": e.shape.threads, "shared_bytes": e.shape.shared_bytes,
             "blocks_per_sm": e.shape.blocks_per_sm, "frames_per_wave": e.shape.frames_per_wave,
             "streams": e.streams, "chunk_frames": e.chunk} for e in self.engines]}

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __repr__(self):
        return (f"CudaDecoder({self.code.name!r}, {self.algorithm}, {self.schedule}, "
                f"max_iterations={self.max_iterations}, devices={[e.ctx.id for e in self.engines]})")

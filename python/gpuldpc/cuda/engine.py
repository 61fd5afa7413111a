"""The stream engine under the binary and GF(q) CUDA decoders.

Paper 004 section IV: page-locked host buffers allocated once and reused; asynchronous
copies; ``N`` streams, each owning its device buffers, issued depth-first (Algorithm 2:
for each stream H2D, kernel, D2H); several GPUs, one host thread each (Fig. 5).  Paper
001 section IV-D: the launch shape comes from the device and the kernel (each decoder's
*plan*).

A batch of ``B`` frames is split over the devices (equal parts), and on each device into
chunks of ``chunk`` frames handed to the streams in turn.  Where the bytes go
(:mod:`.host_memory`):

* input: page-locked arrays (:meth:`GpuDecoder.pinned_llr`) and caller NumPy arrays handed
  in again (registered in place) are copied to the GPU as they lie; other host memory (an
  array's first call, foreign buffers such as GNU Radio's) is staged into a pooled
  page-locked block by several threads in the background, each chunk issued as soon as its
  rows are staged (:meth:`GpuDecoder._host_input`); the latency presets' kernels read
  page-locked input in place and stage the rest into the slot's mapped buffer; input already on the device
  (a :class:`~gpuldpc.device_arrays.DeviceLLR`: CuPy, PyTorch, ... arrays, or
  :meth:`GpuDecoder.decode_device`'s pointer) is read in place, on its own device only (the
  batch is not split); a producer stream it names is waited for on the GPU
  (:func:`.device_memory.wait_for_stream`; the slots' streams are *blocking* streams, so
  work on the legacy default stream is always ordered before them);
* results: the iteration counts, the flags (bit 0: syndrome satisfied, bit 1: the frame's
  LLRs held NaN or infinities, :mod:`gpuldpc.bad_llr`) and the hard decisions of every
  chunk are copied once, by DMA, into one page-locked block of the ticket
  (:class:`.host_memory.ResultPool`), which the returned arrays are views of (or the bits
  into the caller's ``out``); where ``DecodeResult.info`` is not a run of the decisions (a
  decoder's ``info_runs``: GF(q) codes such as gf32-837-726), each run of it is copied into
  the same block by a 2D DMA a chunk (:func:`copy_columns`) instead of gathered on the host
  (packed decisions whose information bits start inside a byte, CCSDS C2: from the rows a
  stage shifted on the GPU, :class:`.stages.PackedInfoPlan`, :meth:`DeviceEngine.info_rows`);
  the latency presets' kernels write theirs straight into the
  slot's mapped host buffer, copied from there into small arrays;
* soft output (a plan with ``soft_width`` > 0 values a frame, :mod:`gpuldpc.soft`): each slot
  has a device array of its chunk's posteriors (``soft_dtype``: float32, or float16 behind
  :class:`.stages.HalfSoftPlan`), which the plan's launch fills once and which is copied by
  DMA after the bits into the same page-locked block of the ticket (``llr``, [batch,
  soft_width]); not with mapped output or ``out_device`` (the decoders refuse those);
* ``out_device``: the kernels write the bits and iteration counts straight into a pooled
  device block of the ticket (:class:`.device_memory.DeviceResults`), which the result's
  :class:`~.device_memory.DeviceArray` objects are; only the flag bytes are copied to the
  host (``valid``, ``bad_llr``, the ``on_bad_llr`` policy).  The batch runs on one device,
  without the resident kernel (which writes to its slot's buffers).

``submit(llr)`` issues the work and returns a :class:`Ticket` at once; ``result(ticket)``
waits for its streams and returns the DecodeResult; ``decode(llr) = result(submit(llr))``
with the devices driven from one thread each.  Any number of tickets may be outstanding:
a stream's buffers are reused in stream order, and a staging buffer only once its copy to
the GPU is done.

A *plan* is what one decoder kind keeps on one device (kernel, tables, launch shape); the
engine asks it for

* ``name``: the kernel's name (error messages);
* ``bits_width``: bytes of hard decisions (or GF(q) symbols) per frame;
* ``frame_bytes(kind)``: input bytes per frame of an input kind (the decoder's
  ``check_llr`` names the kind of each call);
* ``scratch_bytes(frames)``: device scratch of one stream (messages);
* ``default_streams``, ``default_chunk(streams, free_bytes)``, ``frames_per_wave``;
* ``mapped_input``, ``mapped_output``: zero copy (the latency presets, on a device with
  unified addressing): the kernel reads the LLRs from (input) or writes its results to
  (output) mapped page-locked host memory in place, instead of a copy in or a copy out;
* ``soft_width`` (optional, default 0): values of soft output a frame; ``soft_dtype``
  (optional, default float32): their dtype;
* ``launch(stream, count, dev_in, kind, out, scratch, capacity)`` with ``out = (bits,
  iterations, flags, soft)`` addresses (soft 0: none): enqueue the kernel(s) of ``count`` frames;
* ``resident(slot)``: a :class:`~.resident.ResidentKernel` serving the slot's small chunks
  (the binary latency preset), or None: chunks of at most its ``frames`` frames are posted
  to the running kernel instead of launched.
"""
from __future__ import annotations

import concurrent.futures
import weakref
from typing import NamedTuple

import numpy as np

from .._native import available as native_available
from .._native import core as native
from ..device_arrays import DeviceLLR, from_pointer
from ..memory_maps import byte_range, numpy_owner
from ..result import DecodeResult
from ..row_copy import copy_rows
from .context import CudaError, DeviceContext
from .device_memory import DevicePool, DeviceResults, device_ordinal, wait_for_stream
from .driver import device_ids, driver
from .graphs import GraphCache
from .host_memory import (HostRegistry, ResultPool, host_rows, is_pinned, mapped_address, pinned_empty,
                          release_events)


def aligned_mapped_address(array: np.ndarray) -> int | None:
    """:func:`.host_memory.mapped_address` where it is 16-byte aligned (the kernels read rows
    of LLRs by 16-byte vectors), else None (the rows are then staged)."""
    address = mapped_address(array)
    return address if address is not None and address % 16 == 0 else None


def _release_if_held(locked: list, registry, span: tuple):
    """A page-locked NumPy array freed: its range released if its decoder still holds it."""
    if span in locked:
        locked.remove(span)
        registry.release(*span)


def _flags_offset(frames: int) -> int:
    """Bytes before the hard decisions in a result buffer of ``frames`` frames: int32
    iteration counts, one flag byte a frame, padding to 16 bytes."""
    return -(-5 * frames // 16) * 16


def _ceil16(nbytes: int) -> int:
    return -(-nbytes // 16) * 16


def _check_out(out: np.ndarray, batch: int, width: int):
    """ValueError unless ``out`` can take the hard decisions of ``batch`` frames."""
    if out.shape != (batch, width) or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous uint8 array of shape {(batch, width)}, "
                         f"got {out.dtype} {out.shape}")


def copy_columns(rows: np.ndarray, at: int, source: int, pitch: int, width: int, stream):
    """Queue on ``stream`` the copy of ``width`` bytes of each of ``len(rows)`` device rows
    (the first at address ``source``, ``pitch`` bytes apart) into columns ``at:at + width``
    of the page-locked host array ``rows`` (uint8 [count, w]): one ``cuMemcpy2DAsync``."""
    copy = driver().Memcpy2D()
    copy.set_src_device(source)
    copy.src_pitch = pitch
    copy.set_dst_host(rows)
    copy.dst_x_in_bytes, copy.dst_pitch = at, rows.shape[1]
    copy.width_in_bytes, copy.height = width, rows.shape[0]
    copy(stream)


def split_flags(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(valid, bad_llr) bool arrays of the kernels' flag bytes (bit 0: syndrome satisfied,
    bit 1: non-finite LLRs).  Small batches whose flags are all 0 or 1 (a latency decoder's
    usual case; its one-chunk path has them split natively, ``_core.mapped_results``) skip
    the NumPy operations, which cost a microsecond each there."""
    if flags.size <= 64 and max(flags.tobytes(), default=0) < 2:
        return flags.view(bool), np.zeros(flags.size, bool)
    return (flags & 1).view(bool), flags > 1


def drain(slots):
    """After a failed call: wait (best effort) for what the slots (anything with a ``stream``)
    had queued, so that no copy lands in memory lent again after its owner is gone."""
    for slot in slots:
        try:
            slot.stream.synchronize()
        except driver().Error:
            pass


class Ticket:
    """Work issued by :meth:`GpuDecoder.submit`; pass it to :meth:`GpuDecoder.result`.

    ``bits``, ``iterations``, ``flags`` are the result arrays (views of one page-locked
    block from ``pool``, or of an ordinary one without a pool; ``bits`` the caller's ``out``
    if given); ``parts`` is (engine, start, stop) per device; ``streams`` the (engine, slot,
    event) triples it waits for (an event recorded on the slot's stream after the ticket's
    last chunk there, so a later ticket's work on the same stream is not waited for);
    ``keep`` holds the input until then.  ``device``: results on the GPU (``out_device``),
    a :class:`.device_memory.DeviceResults` whose ``bits``/``iterations`` the ticket's are
    (only the flags come to the host); else None.  ``llr``: the soft output, ``soft_dtype``
    [batch, soft_width] in the same block after the bits (16-byte aligned), or None.
    ``info``: ``DecodeResult.info`` [batch, k] after them, filled by DMA from the runs
    ``info_runs`` (:func:`gpuldpc.result.info_runs`) where the block is page-locked (``()``
    or a pageable block: ``info`` None, the decoder gathers it from ``bits``)."""

    __slots__ = ("bits", "iterations", "flags", "parts", "streams", "keep", "device", "llr", "info",
                 "info_runs")

    def __init__(self, pool: ResultPool | None, batch: int, width: int, out, parts, device=None,
                 soft_width: int = 0, soft_dtype=np.float32, info_runs=()):
        off = _flags_offset(batch)
        self.streams = []
        soft_dtype = np.dtype(soft_dtype)
        soft_at = off + _ceil16(batch * width if out is None and device is None else 0)
        soft_end = soft_at + soft_dtype.itemsize * batch * soft_width
        info_at = _ceil16(soft_end) if info_runs else soft_end
        info_width = sum(run[2] for run in info_runs)
        size = info_at + batch * info_width
        block = pool.take(size, self.streams) if pool is not None else np.empty(size, np.uint8)
        if info_runs and (pool is None or not is_pinned(block)):
            info_runs = ()      # a pageable block (past the pool's limit): info gathered on the host
        self.llr = block[soft_at:soft_end].view(soft_dtype).reshape(batch, soft_width) if soft_width else None
        self.info = block[info_at:size].reshape(batch, info_width) if info_runs else None
        self.info_runs = info_runs
        self.flags = block[4 * batch:5 * batch]
        self.device = device
        if device is not None:
            self.bits, self.iterations = device.bits, device.iterations
        else:
            self.iterations = block[:4 * batch].view(np.int32)
            self.bits = block[off:off + batch * width].reshape(batch, width) if out is None else out
        self.parts = parts
        self.keep = None

    def done(self):
        """Collected: the result block no longer waits for the streams (``streams`` is what
        the pool waits for before it hands the block out again, should the ticket be
        dropped uncollected); the input is let go.  The events are released with their
        context current (:func:`release_events`)."""
        release_events(self.streams)
        self.keep = None


class DeviceInput(NamedTuple):
    """LLRs already in device memory: ``pointer`` to ``frames`` rows of ``frame_bytes`` each;
    ``stream``: a producer stream to wait for first (None: none)."""

    pointer: int
    frame_bytes: int
    stream: int | None = None


class _Slot:
    """One stream with its buffers (``capacity`` frames).

    Device side: the input rows, the results (iteration counts, flag bytes, padding, hard
    decisions: :func:`_flags_offset`), the plan's scratch.  Host side: the page-locked
    staging buffer of the input (:meth:`reserve_input`, sized for the largest input kind
    used so far).  With ``mapped_in`` (``mapped_out``) the kernel works on mapped host
    buffers instead of device copies: the staging buffer, and ``host_out``, where the
    results land and are copied from when collected (``pending``).  ``done`` is recorded after
    the slot's last chunk, ``input_free`` after the copy out of its staging buffer."""

    def __init__(self, ctx, capacity, bits_width, scratch_bytes, mapped_in=False, mapped_out=False, soft_bytes=0):
        drv = driver()
        self.ctx, self.mapped_in, self.mapped_out = ctx, mapped_in, mapped_out
        self.stream = drv.Stream()
        self.done = drv.Event(drv.event_flags.DISABLE_TIMING)
        self.input_free = drv.Event(drv.event_flags.DISABLE_TIMING)
        self.staging_busy = False
        self.capacity = capacity
        self.flags = _flags_offset(capacity)
        self.bits_width = bits_width
        nbytes = self.flags + capacity * bits_width
        if mapped_out:
            self.host_out = pinned_empty(nbytes, np.uint8, ctx)
            self.host_out_address = self.host_out.ctypes.data    # where the host reads it
            base = mapped_address(self.host_out)
        else:
            self.dev_out = drv.mem_alloc(nbytes)
            base = int(self.dev_out)
        self.soft = drv.mem_alloc(capacity * soft_bytes) if soft_bytes else None  # posteriors
        self.out = (base + self.flags, base, base + 4 * capacity, int(self.soft) if soft_bytes else 0)
        self.scratch = drv.mem_alloc(scratch_bytes) if scratch_bytes else None
        self.frame_bytes = 0
        self._view = None       # the staging buffer's view of the last staged shape
        self.last_input = None  # mapped input: the host rows of the last launch (kernel_seconds)
        self.last_mapped = None  # and their mapped address (None: pageable, staged)
        self.resident = None    # the plan's resident kernel for small chunks (or None)
        self.graphs = GraphCache()  # _decode_small's work as CUDA graphs (.graphs)
        self.pending = None     # (ticket, start, stop, posted): results in host_out to copy

    def reserve_input(self, frame_bytes: int):
        """Page-locked (and, unless mapped, device) input buffers for ``capacity`` frames."""
        if frame_bytes > self.frame_bytes:
            self.host_in = pinned_empty(self.capacity * frame_bytes, np.uint8, self.ctx)
            self.host_address = mapped_address(self.host_in)     # where a resident kernel reads it
            if self.mapped_in:
                self.dev_in = self.host_address
            else:
                with self.ctx.active():
                    self.dev_in = driver().mem_alloc(self.capacity * frame_bytes)
            self.frame_bytes = frame_bytes
            self._view = None

    def staged(self, src: np.ndarray) -> np.ndarray:
        """``src`` (rows of one chunk) copied into the staging buffer, once the buffer's
        previous copy to the GPU is done.  The view of the buffer is kept for the next
        chunk of the same shape (making it costs about a microsecond, a fifth of the
        host's part of a one-frame latency call)."""
        if self.staging_busy:
            self.input_free.synchronize()
            self.staging_busy = False
        view = self._view
        if view is None or view.shape != src.shape or view.dtype != src.dtype:
            view = self._view = self.host_in[:src.nbytes].view(src.dtype).reshape(src.shape)
        copy_rows(view, src)
        return view

    def copy_results(self):
        """The pending chunk's results, from ``host_out`` into its ticket (after its wait)."""
        ticket, a, b, _ = self.pending
        self.pending = None
        count, flags, width = b - a, self.flags, self.bits_width
        ticket.bits[a:b] = self.host_out[flags:flags + count * width].reshape(count, width)
        ticket.iterations[a:b] = self.host_out[:4 * count].view(np.int32)
        ticket.flags[a:b] = self.host_out[4 * self.capacity:4 * self.capacity + count]

    @staticmethod
    def device_bytes(capacity, frame_bytes, bits_width, scratch_bytes, soft_bytes=0) -> int:
        return capacity * (frame_bytes + bits_width + 5 + soft_bytes) + 16 + scratch_bytes


class DeviceEngine:
    """A decoder's plan on one device and its stream slots."""

    def __init__(self, ctx: DeviceContext, plan, code_name: str, streams, chunk, default_kind):
        drv = driver()
        self.ctx, self.plan, self.code_name = ctx, plan, code_name
        with ctx.active():
            self.streams = streams or plan.default_streams
            free = ctx.free_memory()
            self.chunk = chunk or plan.default_chunk(self.streams, free)
            frame_bytes = self.frame_bytes = plan.frame_bytes(default_kind)   # input bytes a frame
            scratch = plan.scratch_bytes(self.chunk)
            self.soft_width = getattr(plan, "soft_width", 0)
            self.soft_dtype = np.dtype(getattr(plan, "soft_dtype", np.float32))
            soft = self.soft_bytes = self.soft_dtype.itemsize * self.soft_width     # soft output a frame
            need = self.streams * _Slot.device_bytes(self.chunk, frame_bytes, plan.bits_width, scratch, soft)
            try:
                if need > free:
                    raise drv.MemoryError("requested more than the free device memory")
                self.slots = [_Slot(ctx, self.chunk, plan.bits_width, scratch, plan.mapped_input,
                                    plan.mapped_output, soft)
                              for _ in range(self.streams)]
                for slot in self.slots:
                    slot.reserve_input(frame_bytes)
                    slot.resident = plan.resident(slot) if native_available() else None   # .resident
            except drv.MemoryError as exc:
                raise MemoryError(
                    f"cuda decoder for code {code_name!r} on device {ctx.id} ({ctx.name}): "
                    f"{self.streams} streams x {self.chunk} frames need {need / 2**20:.1f} MiB of device "
                    f"memory (and as much page-locked host memory), "
                    f"{free / 2**20:.1f} MiB are free; lower streams= or chunk_frames=") from exc
        self.registry = HostRegistry.shared(ctx)
        self._next = 0
        self._device_pool = None

    def device_results(self, batch: int, width: int) -> DeviceResults:
        """A pooled device block for a ticket's results (``out_device``); call inside ``active()``."""
        if self._device_pool is None:
            self._device_pool = DevicePool()
        return DeviceResults(self.ctx, self._device_pool, batch, width, _flags_offset(batch))

    def free_device_pool(self):
        """Give the pool's unused blocks back to CUDA (blocks still held by results stay valid)."""
        if self._device_pool is not None:
            with self.ctx.active():
                self._device_pool.free_held()

    def info_rows(self, slot) -> tuple[int, int]:
        """(address, pitch) of the device rows ``DecodeResult.info``'s runs are copied from: the
        slot's decisions, or a stage's own rows (:class:`.stages.PackedInfoPlan`)."""
        rows = getattr(self.plan, "info_rows", None)
        return rows(slot.scratch) if rows is not None else (slot.out[0], self.plan.bits_width)

    def where(self, start, stop, batch):
        return (f"kernel {self.plan.name} (code {self.code_name!r}, batch of {batch} frames, frames "
                f"{start}..{stop - 1}, device {self.ctx.id})")

    def issue(self, ticket: Ticket, start: int, stop: int, llr, kind, staging=None):
        """Issue frames ``start:stop`` of the ticket depth-first; ``llr`` holds just those
        frames (a host array) or is a :class:`DeviceInput` pointing at the first of them.
        ``staging``: the :class:`~gpuldpc.row_copy.BackgroundCopy` filling the ticket's host
        rows (each chunk waits for its rows), or None.  Call inside ``self.ctx.active()``."""
        drv = driver()
        plan = self.plan
        on_device = isinstance(llr, DeviceInput)
        dev_out = ticket.device.out if ticket.device is not None else None
        if on_device:
            dev_base = llr.pointer
            if llr.stream is not None:              # the producer's stream, before any chunk
                count = -(-(stop - start) // self.chunk)
                wait_for_stream(llr.stream, [self.slots[(self._next + i) % self.streams].stream
                                             for i in range(min(count, self.streams))])
        elif plan.mapped_input:
            dev_base = aligned_mapped_address(llr)          # None: staged; else read in place
        else:
            dev_base = None
        batch = ticket.bits.shape[0]
        used = []
        for a in range(0, stop - start, self.chunk):
            b = min(a + self.chunk, stop - start)
            count = b - a
            slot = self.slots[self._next % self.streams]
            self._next += 1
            if slot.pending is not None:            # its host_out is about to be rewritten
                self._wait(slot)
            if staging is not None:
                try:
                    staging.wait(start + a, start + b)
                except BaseException:
                    drain(used)               # nothing lands in memory lent again
                    raise
            try:
                if on_device:
                    dev_in = dev_base + a * llr.frame_bytes
                elif plan.mapped_input:
                    src = llr[a:b]
                    slot.reserve_input(src[0].nbytes)
                    if dev_base is not None:
                        dev_in = dev_base + a * src[0].nbytes
                    else:
                        slot.staged(src)
                        dev_in = slot.dev_in        # the mapped address of the staging buffer
                    slot.last_input, slot.last_mapped = src, (dev_in if dev_base is not None else None)
                    staged_for_kernel = dev_base is None
                else:                               # page-locked or registered: GpuDecoder._host_input
                    src = llr[a:b]
                    slot.last_input = None              # (kernel_seconds: the device copy)
                    slot.reserve_input(src[0].nbytes)
                    dev_in = slot.dev_in
                    drv.memcpy_htod_async(dev_in, src, slot.stream)
                posted = (plan.mapped_input and slot.resident is not None and dev_out is None
                          and slot.resident.serves(count, kind) and int(dev_in) % slot.resident.align == 0)
                if posted:
                    slot.resident.post(count, int(dev_in))
                elif dev_out is not None:           # results into the ticket's device block
                    i = start + a
                    out = (dev_out[0] + i * plan.bits_width, dev_out[1] + 4 * i, dev_out[2] + i, 0)
                    plan.launch(slot.stream, count, dev_in, kind, out, slot.scratch, slot.capacity)
                    drv.memcpy_dtoh_async(ticket.flags[i:start + b], out[2], slot.stream)
                else:
                    plan.launch(slot.stream, count, dev_in, kind, slot.out, slot.scratch, slot.capacity)
                if slot.mapped_out and dev_out is None:     # results in host_out: copied when collected
                    slot.pending = (ticket, start + a, start + b, posted)
                elif dev_out is None:
                    s, dev_bits, dev_iters, dev_flags, _ = slot.stream, *slot.out
                    drv.memcpy_dtoh_async(ticket.bits[start + a:start + b], dev_bits, s)
                    drv.memcpy_dtoh_async(ticket.iterations[start + a:start + b], dev_iters, s)
                    drv.memcpy_dtoh_async(ticket.flags[start + a:start + b], dev_flags, s)
                    if slot.soft is not None:
                        drv.memcpy_dtoh_async(ticket.llr[start + a:start + b], slot.soft, s)
                    if ticket.info_runs:                             # DecodeResult.info, run by run
                        rows, pitch = self.info_rows(slot)
                        for column, at, width in ticket.info_runs:
                            copy_columns(ticket.info[start + a:start + b], at, rows + column, pitch, width, s)
                if not posted:
                    slot.done.record(slot.stream)
                    if plan.mapped_input and not on_device and staged_for_kernel:
                        slot.input_free.record(slot.stream)     # the kernel has read the staging buffer
                        slot.staging_busy = True
            except drv.Error as exc:
                drain(used + [slot])
                raise CudaError(f"{self.where(start + a, start + b, batch)}: {exc}") from exc
            if slot not in used:
                used.append(slot)
        for slot in used:                           # what the ticket waits for, slot by slot
            event = drv.Event(drv.event_flags.DISABLE_TIMING)
            event.record(slot.stream)
            ticket.streams.append((self, slot, event))

    def _wait(self, slot: _Slot):
        """Wait for the slot's work so far; copy its pending results into their ticket."""
        posted = slot.pending is not None and slot.pending[3]
        try:
            if posted:
                slot.resident.wait()
            else:
                slot.done.synchronize()
        except (driver().Error, CudaError) as exc:
            pending = slot.pending
            where = self.where(pending[1], pending[2], pending[0].bits.shape[0]) if pending else self.plan.name
            slot.pending = None
            raise CudaError(f"{where}: {exc}") from exc
        if slot.pending is not None:
            slot.copy_results()

    def collect(self, ticket: Ticket):
        """Wait for this device's streams of ``ticket`` -- on the ticket's own events and
        without the device's lock, so other threads keep issuing work meanwhile -- then copy
        the results left in mapped slot buffers (latency presets) into it.  Call outside
        ``self.ctx.active()``."""
        mine = [(slot, event) for eng, slot, event in ticket.streams if eng is self]
        try:
            with self.ctx.current():
                for _, event in mine:
                    event.synchronize()
        except driver().Error as exc:
            raise CudaError(f"{self.where(0, ticket.bits.shape[0], ticket.bits.shape[0])}: {exc}") from exc
        with self.ctx.active():
            for slot, _ in mine:
                if slot.pending is not None and slot.pending[0] is ticket:
                    self._wait(slot)

    def kernel_seconds(self, llr, kind, frames, repeats) -> float:
        """Median seconds of one launch of ``frames`` frames on stream slot 0 (CUDA events),
        inputs in device memory: ``llr`` (host rows) uploaded first, None: the slot's last input."""
        drv = driver()
        slot = self.slots[0]
        frames = min(frames, slot.capacity)
        with self.ctx.active():
            self._wait(slot)
            if llr is None:                         # mapped or resident input: the host rows
                llr = slot.last_input
            if llr is not None:
                src = np.ascontiguousarray(llr[:frames])
                frames = src.shape[0]
                dev_in = drv.to_device(src)
            else:
                dev_in = drv.mem_alloc(frames * slot.frame_bytes)
                drv.memcpy_dtod(dev_in, slot.dev_in, frames * slot.frame_bytes)
            start, stop = drv.Event(), drv.Event()
            times = []
            for i in range(repeats + 1):
                start.record(slot.stream)
                self.plan.launch(slot.stream, frames, dev_in, kind, slot.out, slot.scratch, slot.capacity)
                stop.record(slot.stream)
                stop.synchronize()
                if i:
                    times.append(stop.time_since(start) * 1e-3)
        return float(np.median(times))


class GpuDecoder:
    """What the CUDA decoders share: engines on the devices, the result pool,
    submit/result/decode.

    A subclass sets ``code``, implements ``check_llr(llr) -> (array, kind)``,
    ``_result(ticket) -> DecodeResult`` and ``_plan(ctx) -> plan``, and calls
    :meth:`_start` with the device list and the stream/chunk overrides.
    ``device_kind`` is the input kind :meth:`decode_device` assumes by default.
    """

    device_kind = "llr"
    info_runs = ()      # DecodeResult.info by DMA where it is not a run of bits (gpuldpc.result.info_runs)
    info_at = None      # where DecodeResult.info lies in the decisions (gpuldpc.result.info_index), set by a subclass

    def _start(self, devices, streams, chunk_frames, default_kind):
        for name, value in (("streams", streams), ("chunk_frames", chunk_frames)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                      or value < 1):
                raise ValueError(f"{name} must be None or an integer >= 1, got {value!r}")
        self.chunk_request = chunk_frames        # the plans time their shapes on such launches (.autotune)
        self.engines = []
        for i in device_ids(devices):
            ctx = DeviceContext(i)
            with ctx.active():
                plan = self._plan(ctx)
            self.engines.append(DeviceEngine(ctx, plan, self.code.name, streams, chunk_frames, default_kind))
        # results by DMA into pooled page-locked blocks; the latency presets' kernels write
        # theirs into the slots' mapped buffers, copied into small ordinary arrays
        self.results = None if self.engines[0].plan.mapped_output else ResultPool(self.engines[0].ctx)
        self.inputs = ResultPool(self.engines[0].ctx)       # staged host input (_host_input)
        self._pool = (concurrent.futures.ThreadPoolExecutor(len(self.engines), "gpuldpc-device")
                      if len(self.engines) > 1 else None)
        # one device, one stream, results in mapped memory (the latency presets): batches of
        # one chunk take _decode_small (its host side native: without gpuldpc._core, the general path)
        eng = self.engines[0]
        self._small = (eng.slots[0] if len(self.engines) == 1 and len(eng.slots) == 1 and eng.plan.mapped_output
                       and native_available() else None)
        self._locked: list[tuple] = []      # (start, stop) held by page_lock

    # ----------------------------------------------------------------- caller memory
    def page_lock(self, buffer) -> int:
        """Page-lock ``buffer``'s bytes in place until :meth:`page_unlock` or :meth:`close`
        (``HostRegistry.hold``): batches lying in them are copied by DMA where they lie,
        not staged.  The bytes locked; 0 where the plan's kernels read host memory
        themselves (a latency plan) or the driver refuses the range.  Memory a NumPy array
        owns is also unlocked when NumPy frees it (no copy from it can be in flight then:
        a ticket keeps its input alive)."""
        span = byte_range(buffer)
        registry = self.engines[0].registry
        if span in self._locked:
            return span[1] - span[0]
        if self.engines[0].plan.mapped_input or not registry.hold(*span):
            return 0
        self._locked.append(span)
        owner = numpy_owner(buffer) if isinstance(buffer, np.ndarray) else None
        if owner is not None:
            weakref.finalize(owner, _release_if_held, self._locked, registry, span)
        return span[1] - span[0]

    def page_unlock(self, buffer=None):
        """Undo :meth:`page_lock` of ``buffer`` (every buffer when None), after the copies
        queued so far."""
        span = None if buffer is None else byte_range(buffer)
        ranges = list(self._locked) if span is None else [r for r in self._locked if r == span]
        if not ranges:
            return
        for eng in self.engines:             # the copies are queued on the slots' streams
            with eng.ctx.active():
                for slot in eng.slots:
                    slot.stream.synchronize()
        for r in ranges:
            self._locked.remove(r)
            self.engines[0].registry.release(*r)

    # ----------------------------------------------------------------- buffers
    @property
    def bits_width(self) -> int:
        return self.engines[0].plan.bits_width

    @property
    def devices(self) -> list[DeviceContext]:
        return [e.ctx for e in self.engines]

    @property
    def device_ids(self) -> tuple:
        """The GPUs this decoder runs on (device arrays must lie on one of them)."""
        return tuple(e.ctx.id for e in self.engines)

    def device_ordinal(self, pointer: int) -> int:
        """The GPU a device pointer points into (:func:`.device_memory.device_ordinal`)."""
        with self.engines[0].ctx.current():
            return device_ordinal(pointer)

    def plan_on(self, device: int | None = None):
        """This decoder's plan on GPU ``device`` (default: its first), for a caller that queues
        its kernels on streams and buffers of its own (:mod:`.mixed_pipeline`): the plan
        interface of the module docstring (``launch``, ``scratch_bytes``, ``bits_width``).  The
        plan refers to this decoder weakly (no reference cycle): keep the decoder while using it."""
        return self._engine(device).plan

    def pinned_bits(self, batch: int) -> np.ndarray:
        """A page-locked hard-decision array for ``out=``."""
        return pinned_empty((batch, self.bits_width), np.uint8, self.engines[0].ctx)

    def preferred_batch(self, preset: str = "throughput") -> int:
        """Frames per call: one wave of every device (``latency``), or two rounds of every
        stream of every device given a full chunk (``throughput``: the pipeline's fill and
        drain amortised; WiMAX 2304 on an H200, page-locked input: 11.7 Gb/s with one round,
        12.5 with two, 12.8 with four), one round where two would leave the page-locked pools,
        and the most whole chunks that stay in them where one round would not
        (:meth:`_page_locked_frames`: DVB-S2 normal frames in binary16, a round of 4224 float32
        frames is 1.09 GB; staged through pageable memory it ran at 1.3 Gb/s, 5.8 page-locked)."""
        if preset == "latency":
            return sum(e.plan.frames_per_wave for e in self.engines)
        round_ = sum(e.streams * e.chunk for e in self.engines)
        fit = self._page_locked_frames()
        if fit >= round_:
            return round_ * min(2, fit // round_)
        unit = sum(e.chunk for e in self.engines)
        return max(unit, fit // unit * unit)

    def _page_locked_frames(self) -> int:
        """Frames a call may take and stay in page-locked memory: a staged input block within
        the input pool's limit, two result blocks (the caller's last one and the one being
        filled) within the result pool's (:class:`.host_memory.ResultPool`: past it blocks are
        pageable and the copies crawl; soft output makes a frame's results 5 bytes a bit,
        binary16's doubled batch then took a pageable block every call, 0.6 Gb/s)."""
        eng = self.engines[0]
        result = eng.plan.bits_width + eng.soft_bytes + 5 + sum(run[2] for run in self.info_runs)
        frames = self.inputs.limit_bytes // eng.frame_bytes
        if self.results is not None:
            frames = min(frames, self.results.limit_bytes // (2 * result))
        return frames

    # ------------------------------------------------------------------ decode
    def _ticket(self, batch, out, llr, out_device=False) -> Ticket:
        """A ticket of ``batch`` frames with its result block from the pool: ``parts``
        (engine, start, stop) per device, equal shares of a host batch; the whole batch on
        the device of device input (:class:`DeviceLLR`), or on the first device for results
        on the GPU (``out_device``), whose device block it then holds."""
        eng = self.engines[0]
        width, soft = self.bits_width, eng.soft_width
        if out_device and soft:
            raise ValueError("soft output is copied to the host with the bits; pass out_device=False")
        if out is not None:
            if out_device:
                raise ValueError("out= takes host arrays; with out_device=True the results are new GPU arrays")
            _check_out(out, batch, width)
        if isinstance(llr, DeviceLLR):
            parts = ((self._engine(llr.device), 0, batch),)
        elif out_device:
            parts = ((self.engines[0], 0, batch),)
        else:
            parts = self._shares(batch)
        device = None
        if out_device:
            with parts[0][0].ctx.active():
                device = parts[0][0].device_results(batch, width)
        runs = self.info_runs if self.results is not None and not out_device else ()   # DMA'd into the ticket
        return Ticket(self.results, batch, width, out, parts, device, soft, eng.soft_dtype, runs)

    def _engine(self, device):
        """The engine on GPU ``device`` (None: the first)."""
        for eng in self.engines:
            if device is None or eng.ctx.id == device:
                return eng
        raise ValueError(f"device={device!r} is not one of this decoder's devices {list(self.device_ids)}")

    @staticmethod
    def _rows(llr, eng, a, b, kind):
        """Frames ``a:b`` of the input as :meth:`DeviceEngine.issue` takes them."""
        if isinstance(llr, DeviceLLR):
            size = eng.plan.frame_bytes(kind)
            return DeviceInput(llr.pointer + a * size, size, llr.stream)
        return llr[a:b]

    def _shares(self, batch) -> tuple:
        """(engine, start, stop): the batch in equal parts over the devices."""
        if len(self.engines) == 1:
            return ((self.engines[0], 0, batch),)
        edges = np.linspace(0, batch, len(self.engines) + 1).astype(int)
        return tuple((eng, int(a), int(b)) for eng, a, b in zip(self.engines, edges[:-1], edges[1:]) if b > a)

    def submit(self, llr, out=None) -> Ticket:
        """Issue a batch and return at once; ``out`` (optional) receives the hard decisions.
        ``llr`` must stay unchanged until :meth:`result` returns (it may be read in place)."""
        arr, kind = self.check_llr(llr)
        return self.submit_checked(arr, kind, out)

    def submit_checked(self, arr, kind, out=None, out_device=False) -> Ticket:
        """:meth:`submit` for an array ``check_llr`` has already accepted, or a checked
        :class:`~gpuldpc.device_arrays.DeviceLLR` (read where it lies); ``out_device``: the
        bits and iteration counts stay on the GPU (:class:`.device_memory.DeviceArray`)."""
        ticket = self._ticket(arr.shape[0], out, arr, out_device)
        arr, staging = self._host_input(arr, ticket)
        ticket.keep = arr
        for eng, a, b in ticket.parts:
            with eng.ctx.active():
                eng.issue(ticket, a, b, self._rows(arr, eng, a, b, kind), kind, staging)
        return ticket

    def result(self, ticket: Ticket):
        """Wait for a submitted batch; its DecodeResult."""
        for eng, _, _ in ticket.parts:
            eng.collect(ticket)
        ticket.done()
        return self._result(ticket)

    def decode(self, llr, out=None):
        """Decode a batch: ``result(submit(llr, out))``, devices driven from one thread each."""
        arr, kind = self.check_llr(llr)
        return self.decode_checked(arr, kind, out)

    def decode_checked(self, arr, kind, out=None, out_device=False):
        """:meth:`decode` for what :meth:`submit_checked` takes."""
        if self._small is not None and not out_device and isinstance(arr, np.ndarray) \
                and arr.shape[0] <= self._small.capacity:
            return self._decode_small(arr, kind, out)
        ticket = self._ticket(arr.shape[0], out, arr, out_device)
        arr, staging = self._host_input(arr, ticket)

        def run(part):
            eng, a, b = part
            with eng.ctx.active():
                eng.issue(ticket, a, b, self._rows(arr, eng, a, b, kind), kind, staging)
            eng.collect(ticket)

        if self._pool is None:
            run(ticket.parts[0])
        else:
            for f in [self._pool.submit(run, p) for p in ticket.parts]:
                f.result()
        ticket.done()
        return self._result(ticket)

    def _host_input(self, arr, ticket: Ticket):
        """``(rows, staging)``: a host batch as the engines copy it (module docstring, "input";
        :func:`.host_memory.host_rows`): page-locked memory (``pinned_llr``, a pool block) and,
        for plans that copy their input, a NumPy array handed in again (registered in place)
        as they lie (staging None); any other memory -- an array's first call, foreign buffers
        such as GNU Radio's -- staged into a pooled page-locked block that the ticket holds
        until it is collected, by threads in the background (``staging``, a
        :class:`~gpuldpc.row_copy.BackgroundCopy`): each chunk is issued once its rows are
        staged, so the copy overlaps the transfers of the chunks before it.  Device input
        (:class:`DeviceLLR`) passes as it is."""
        if not isinstance(arr, np.ndarray):
            return arr, None
        eng = self.engines[0]
        return host_rows(arr, eng.registry, self.inputs, ticket.streams, register=not eng.plan.mapped_input)

    def _decode_small(self, arr, kind, out=None):
        """A batch of one chunk at most on the only device and stream of a latency plan
        (mapped results), without the tickets and events of the general path.  Handed to
        the resident kernel when there is one that serves the chunk (no context push, launch
        or synchronize: :mod:`.resident`; copy, request and spin in one native call), which
        reads mapped host memory: the caller's page-locked array in place, or the rows
        copied into the slot's buffer.  Else launched: the input read likewise where the
        plan reads mapped memory, staged and copied in where it reads device memory (from
        the second call of the same shape on, copy and launch as one CUDA graph:
        :mod:`.graphs`), and synchronized.  The results are copied out of the slot's mapped
        buffer into fresh arrays by ``gpuldpc._core.mapped_results``."""
        eng, slot, count = self.engines[0], self._small, arr.shape[0]
        plan = eng.plan
        with eng.ctx.lock:
            if slot.pending is not None or slot.staging_busy:   # work of the general path in flight
                with eng.ctx.active():
                    eng._wait(slot)
                    slot.staging_busy = False
            resident = slot.resident if slot.resident is not None and slot.resident.serves(count, kind) else None
            host_read = plan.mapped_input or resident is not None
            address, staged, rows = None, None, None
            if host_read:   # the caller's page-locked array of the previous call is held: `is` is safe
                address = slot.last_mapped if arr is slot.last_input else aligned_mapped_address(arr)
                slot.last_input, slot.last_mapped = arr, address
            if address is None:
                slot.reserve_input(arr.nbytes // count)
                if resident is not None:     # copied by the resident call
                    rows, address = arr, slot.host_address
                else:
                    staged = slot.staged(arr)
                    address = slot.host_address if host_read else slot.dev_in

            def enqueue():
                if not plan.mapped_input:
                    driver().memcpy_htod_async(slot.dev_in, staged, slot.stream)
                plan.launch(slot.stream, count, address, kind, slot.out, slot.scratch, slot.capacity)

            try:
                if resident is not None:     # address: 16-byte aligned (aligned_mapped_address or staged)
                    resident.call(count, address, rows, slot.host_address)
                else:
                    with eng.ctx.active():   # the same work call after call: one graph launch (.graphs)
                        key = (count, kind, int(address), None if staged is None else staged.ctypes.data,
                               None if staged is None else staged.nbytes)
                        slot.graphs.run(key, slot.stream, enqueue)
                        slot.stream.synchronize()
            except (driver().Error, CudaError) as exc:
                raise CudaError(f"{eng.where(0, count, count)}: {exc}") from exc
            bits, iterations, valid, bad_llr = native().mapped_results(
                slot.host_out_address, count, slot.bits_width, slot.flags, slot.capacity)
        if out is not None:
            _check_out(out, count, slot.bits_width)
            out[...] = bits
            bits = out
        return self._make_result(bits, iterations, valid, bad_llr)

    def _result(self, ticket: Ticket):
        if ticket.device is None:
            res = self._make_result(ticket.bits, ticket.iterations, *split_flags(ticket.flags), ticket.info)
            return res if ticket.llr is None else res._replace(llr=ticket.llr)
        at, info = self.info_at, None                       # results on the GPU: info a view of a run
        if isinstance(at, slice):
            start, stop, _ = at.indices(ticket.bits.shape[1])
            info = ticket.bits.columns(stop, start)
        return DecodeResult(ticket.bits, info, ticket.iterations, *split_flags(ticket.flags))

    def decode_device(self, llr, frames: int, kind: str | None = None, device: int | None = None, out=None,
                      out_device=False):
        """A thin wrapper of :meth:`decode_checked` for a raw pointer: ``frames`` frames whose
        LLRs are in device memory at ``llr`` (a device allocation or an integer) on device
        ``device`` (default: the first of this decoder), one row after the other, of the
        input ``kind`` (default :attr:`device_kind`: the dtype and row length ``decode``
        takes).  No copy in: the values never visit the host (the kernels still flag
        non-finite ones).  Work queued on streams other than the legacy default stream must
        be finished before the call."""
        eng = self._engine(device)
        view = from_pointer(int(llr), frames, (), np.uint8, llr)._replace(device=eng.ctx.id)
        return self.decode_checked(view, kind or self.device_kind, out, out_device)

    @property
    def tuning(self):
        """The launch shapes timed on the first device when the decoder was made (:mod:`.autotune`),
        {frames a block (binary) / rows a block (GF(q)): frames a second}, the kept one in ``shape``;
        None where nothing was timed (a shape given, ``preset="latency"``, the sparse kernel,
        ``GPULDPC_AUTOTUNE=0``)."""
        return getattr(self.engines[0].plan, "tuning", None)

    def kernel_seconds(self, llr=None, frames: int | None = None, repeats: int = 5) -> float:
        """Median time of one launch on the first device (inputs resident, CUDA events):
        ``frames`` frames (default: one chunk) of ``llr`` (None: the input of the last call)."""
        kind = self.device_kind
        if llr is not None:
            llr, kind = self.check_llr(llr)
            frames = frames or llr.shape[0]
        eng = self.engines[0]
        return eng.kernel_seconds(llr, kind, frames or eng.chunk, repeats)

    def close(self):
        """Stop the device threads, wait for resident kernels to leave, undo :meth:`page_lock`."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        self.page_unlock()
        for eng in self.engines:
            eng.free_device_pool()
            with eng.ctx.active():
                for slot in eng.slots:
                    slot.graphs.clear()
                    if slot.resident is not None:
                        slot.resident.close()

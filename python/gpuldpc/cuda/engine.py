"""The stream engine shared by the binary and GF(q) CUDA decoders.

Paper 004 section IV: page-locked host buffers allocated once and reused;
asynchronous copies; ``N`` streams, each owning its buffers, issued depth-first
(Algorithm 2: for each stream H2D, kernel, D2H; then wait); several GPUs, one
host thread each (Fig. 5).  Paper 001 section IV-D: the launch shape comes from
the device and the kernel (each decoder's *plan*).

A batch of ``B`` frames is split over the devices (equal parts), and on each
device into chunks of ``chunk`` frames handed to the streams in turn.  A chunk
is copied into the stream's pinned input buffer unless the caller's array is
already page-locked, in which case it is copied to the GPU as is; likewise the
hard decisions go straight into a page-locked ``out`` array.  Input already on
the device (:meth:`StreamDecoder.decode_device`) skips the copy in.

``submit(llr)`` issues the work and returns at once (a :class:`Ticket`);
``result(ticket)`` waits and returns the DecodeResult; ``decode(llr) =
result(submit(llr))``.  A stream reused before its previous chunk was collected
is first waited for and its results stored in that chunk's ticket, so any number
of tickets may be outstanding.

A *plan* is what one decoder kind keeps on one device (kernel, tables, launch
shape); the engine asks it for

* ``name``: the kernel's name (error messages);
* ``bits_width``: bytes of hard decisions (or GF(q) symbols) per frame;
* ``frame_bytes(kind)``: input bytes per frame of an input kind (the decoder's
  ``check_llr`` names the kind of each call);
* ``scratch_bytes(frames)``: device scratch of one stream (messages);
* ``default_streams``, ``default_chunk(streams, free_bytes)``, ``frames_per_wave``;
* ``mapped_input``, ``mapped_output``: zero copy (the latency presets, on a device with
  unified addressing): the kernel reads the LLRs from (input) or writes its results to
  (output) mapped page-locked host memory in place, instead of a copy in or a copy
  out (a driver call and a transfer's latency less per call each);
* ``launch(stream, count, dev_in, kind, out, scratch, capacity)`` with
  ``out = (dev_bits, dev_iters, dev_valid)``: enqueue the kernel(s) of ``count``
  frames (asynchronous);
* ``resident(slot)``: a :class:`~.resident.ResidentKernel` serving the slot's small
  chunks (the binary latency preset), or None: chunks of at most its ``frames`` frames
  are posted to the running kernel instead of launched.
"""
from __future__ import annotations

import concurrent.futures
from typing import NamedTuple

import numpy as np

from .context import CudaError, DeviceContext, is_pinned, mapped_address, pinned_empty
from .driver import device_ids, driver

# hard decisions of a chunk larger than this go straight into a page-locked `out` array;
# smaller ones come back with the flags in one copy (one driver call less, a short host copy)
DIRECT_BITS_MIN = 64 * 1024


def aligned_mapped_address(array: np.ndarray) -> int | None:
    """:func:`.context.mapped_address` where it is 16-byte aligned (the kernels read rows of
    LLRs by 16-byte vectors), else None (the rows are then staged)."""
    address = mapped_address(array)
    return address if address is not None and address % 16 == 0 else None


class Ticket(NamedTuple):
    """Work issued by :meth:`StreamDecoder.submit`; pass it to :meth:`StreamDecoder.result`."""

    bits: np.ndarray
    iterations: np.ndarray
    valid: np.ndarray
    parts: tuple            # (engine, start, stop) per device


class DeviceInput(NamedTuple):
    """LLRs already in device memory: ``pointer`` to ``frames`` rows of ``frame_bytes`` each."""

    pointer: int
    frame_bytes: int


class _Slot:
    """One stream with its pinned host buffers and device buffers (``capacity`` frames).

    The results share one buffer on each side: iteration counts (int32), valid flags
    (uint8), padding to 16 bytes, then the hard decisions; so a chunk's results come
    back in one copy (its first ``flags + count * bits_width`` bytes), or in two when
    the bits go straight into the caller's page-locked array.  The input buffers are
    sized for the largest input kind used so far.  With ``mapped_in`` (``mapped_out``)
    there is no device copy of the input (results) buffer: the kernel works on the
    mapped host buffer."""

    def __init__(self, ctx, capacity, bits_width, scratch_bytes, mapped_in=False, mapped_out=False):
        drv = driver()
        self.ctx, self.mapped_in, self.mapped_out = ctx, mapped_in, mapped_out
        self.stream = drv.Stream()
        self.capacity = capacity
        self.flags = -(-5 * capacity // 16) * 16
        self.bits_width = bits_width
        self.host_out = pinned_empty(self.flags + capacity * bits_width, np.uint8, ctx)
        self.host_iters = self.host_out[:4 * capacity].view(np.int32)
        self.host_valid = self.host_out[4 * capacity:5 * capacity]
        self.host_bits = self.host_out[self.flags:].reshape(capacity, bits_width)
        self.dev_out = None if mapped_out else drv.mem_alloc(self.host_out.nbytes)
        base = mapped_address(self.host_out) if mapped_out else int(self.dev_out)
        self.out = (base + self.flags, base, base + 4 * capacity)
        self.scratch = drv.mem_alloc(scratch_bytes) if scratch_bytes else None
        self.frame_bytes = 0
        self.last_input = None  # mapped input: the host rows of the last launch (kernel_seconds)
        self.last_mapped = None  # and their mapped address (None: pageable, staged)
        self.resident = None    # the plan's resident kernel for small chunks (or None)
        self.pending = None     # (ticket, start, stop, bits written directly, posted to the resident kernel)

    def reserve_input(self, frame_bytes: int):
        """Pinned and device input buffers for ``capacity`` frames of ``frame_bytes``."""
        if frame_bytes > self.frame_bytes:
            self.host_in = pinned_empty(self.capacity * frame_bytes, np.uint8, self.ctx)
            self.dev_in = (mapped_address(self.host_in) if self.mapped_in
                           else driver().mem_alloc(self.capacity * frame_bytes))
            self.frame_bytes = frame_bytes

    def results_to(self, ticket, a, b, direct=False):
        """The results of the slot's last chunk into frames ``a:b`` of ``ticket`` (its bits too,
        unless they went ``direct``ly into the caller's array)."""
        count = b - a
        if not direct:
            ticket.bits[a:b] = self.host_bits[:count]
        ticket.iterations[a:b] = self.host_iters[:count]
        ticket.valid[a:b] = self.host_valid[:count]

    def staged(self, src: np.ndarray) -> np.ndarray:
        """``src`` (rows of one chunk) copied into the pinned input buffer."""
        view = self.host_in[:src.nbytes].view(src.dtype).reshape(src.shape)
        np.copyto(view, src)
        return view

    @staticmethod
    def device_bytes(capacity, frame_bytes, bits_width, scratch_bytes) -> int:
        return capacity * (frame_bytes + bits_width + 5) + 16 + scratch_bytes


class DeviceEngine:
    """A decoder's plan on one device and its stream slots."""

    def __init__(self, ctx: DeviceContext, plan, code_name: str, streams, chunk, default_kind):
        drv = driver()
        self.ctx, self.plan, self.code_name = ctx, plan, code_name
        with ctx.active():
            self.streams = streams or plan.default_streams
            free = ctx.free_memory()
            self.chunk = chunk or plan.default_chunk(self.streams, free)
            frame_bytes = plan.frame_bytes(default_kind)
            scratch = plan.scratch_bytes(self.chunk)
            need = self.streams * _Slot.device_bytes(self.chunk, frame_bytes, plan.bits_width, scratch)
            try:
                if need > free:
                    raise drv.MemoryError("requested more than the free device memory")
                self.slots = [_Slot(ctx, self.chunk, plan.bits_width, scratch, plan.mapped_input,
                                    plan.mapped_output)
                              for _ in range(self.streams)]
                for slot in self.slots:
                    slot.reserve_input(frame_bytes)
                    slot.resident = plan.resident(slot)
            except drv.MemoryError as exc:
                raise MemoryError(
                    f"cuda decoder for code {code_name!r} on device {ctx.id} ({ctx.name}): "
                    f"{self.streams} streams x {self.chunk} frames need {need / 2**20:.1f} MiB of device "
                    f"memory (and as much page-locked host memory), "
                    f"{free / 2**20:.1f} MiB are free; lower streams= or chunk_frames=") from exc
        self._next = 0

    def where(self, start, stop, batch):
        return (f"kernel {self.plan.name} (code {self.code_name!r}, batch of {batch} frames, frames "
                f"{start}..{stop - 1}, device {self.ctx.id})")

    def issue(self, ticket: Ticket, start: int, stop: int, llr, kind):
        """Issue frames ``start:stop`` of the ticket depth-first; ``llr`` holds just those
        frames (a host array) or is a :class:`DeviceInput` pointing at the first of them.
        Call inside ``self.ctx.active()``."""
        drv = driver()
        on_device = isinstance(llr, DeviceInput)
        mapped_in = self.plan.mapped_input
        llr_mapped = not on_device and mapped_in and aligned_mapped_address(llr)   # the kernel reads it in place
        llr_pinned = not on_device and not mapped_in and is_pinned(llr)        # copied to the GPU as is
        out_bits = ticket.bits[start:stop]
        bits_pinned = ((stop - start) * self.plan.bits_width > DIRECT_BITS_MIN and not self.plan.mapped_output
                       and is_pinned(out_bits))
        for a in range(0, stop - start, self.chunk):
            b = min(a + self.chunk, stop - start)
            count = b - a
            slot = self.slots[self._next % self.streams]
            self._next += 1
            if slot.pending is not None:
                self.collect_slot(slot)
            direct = bits_pinned and count * slot.bits_width > DIRECT_BITS_MIN
            try:
                if on_device:
                    dev_in = llr.pointer + a * llr.frame_bytes
                else:
                    src = llr[a:b]
                    slot.reserve_input(src[0].nbytes)
                    if mapped_in:
                        if llr_mapped:
                            dev_in = llr_mapped + a * src[0].nbytes
                        else:
                            slot.staged(src)
                            dev_in = slot.dev_in        # the mapped address of the staging buffer
                        slot.last_input, slot.last_mapped = src, (dev_in if llr_mapped else None)
                    else:
                        drv.memcpy_htod_async(slot.dev_in, src if llr_pinned else slot.staged(src), slot.stream)
                        dev_in = slot.dev_in
                posted = slot.resident is not None and count <= slot.resident.frames and int(dev_in) % 8 == 0
                if posted:
                    slot.resident.post(count, int(dev_in))
                else:
                    self.plan.launch(slot.stream, count, dev_in, kind, slot.out, slot.scratch, slot.capacity)
                if direct:
                    drv.memcpy_dtoh_async(out_bits[a:b], slot.out[0], slot.stream)
                    drv.memcpy_dtoh_async(slot.host_out[:slot.flags], slot.dev_out, slot.stream)
                elif not slot.mapped_out:       # mapped: the kernel wrote slot.host_out in place
                    drv.memcpy_dtoh_async(slot.host_out[:slot.flags + count * slot.bits_width],
                                          slot.dev_out, slot.stream)
            except drv.Error as exc:
                raise CudaError(f"{self.where(start + a, start + b, ticket.bits.shape[0])}: {exc}") from exc
            slot.pending = (ticket, start + a, start + b, direct, posted)

    def collect_slot(self, slot: _Slot):
        """Wait for a slot's chunk and store its results in its ticket."""
        if slot.pending is None:
            return
        ticket, a, b, direct, posted = slot.pending
        slot.pending = None
        try:
            if posted:
                slot.resident.wait()
            else:
                slot.stream.synchronize()
        except (driver().Error, CudaError) as exc:
            raise CudaError(f"{self.where(a, b, ticket.bits.shape[0])}: {exc}") from exc
        slot.results_to(ticket, a, b, direct)

    def collect(self, ticket: Ticket):
        """Wait for every chunk of ``ticket`` on this device (inside ``self.ctx.active()``)."""
        for slot in self.slots:
            if slot.pending is not None and slot.pending[0] is ticket:
                self.collect_slot(slot)

    def kernel_seconds(self, llr, kind, frames, repeats) -> float:
        """Median seconds of one launch of ``frames`` frames on stream slot 0 (CUDA events),
        inputs in device memory: ``llr`` (host rows) uploaded first, None: the slot's last input."""
        drv = driver()
        slot = self.slots[0]
        frames = min(frames, slot.capacity)
        with self.ctx.active():
            self.collect_slot(slot)
            if llr is None and slot.mapped_in:
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


class StreamDecoder:
    """What the CUDA decoders share: engines on the devices, submit/result/decode.

    A subclass sets ``code``, implements ``check_llr(llr) -> (array, kind)``,
    ``_result(ticket) -> DecodeResult`` and ``_plan(ctx) -> plan``, and calls
    :meth:`_start` with the device list and the stream/chunk overrides.
    ``device_kind`` is the input kind :meth:`decode_device` assumes by default.
    """

    device_kind = "llr"

    def _start(self, devices, streams, chunk_frames, default_kind):
        for name, value in (("streams", streams), ("chunk_frames", chunk_frames)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                      or value < 1):
                raise ValueError(f"{name} must be None or an integer >= 1, got {value!r}")
        self.engines = []
        for i in device_ids(devices):
            ctx = DeviceContext(i)
            with ctx.active():
                plan = self._plan(ctx)
            self.engines.append(DeviceEngine(ctx, plan, self.code.name, streams, chunk_frames, default_kind))
        self._pool = (concurrent.futures.ThreadPoolExecutor(len(self.engines), "gpuldpc-device")
                      if len(self.engines) > 1 else None)
        # one device, one stream with a resident kernel: small batches take _decode_posted
        slot = self.engines[0].slots[0]
        self._posted = (slot if len(self.engines) == 1 and len(self.engines[0].slots) == 1
                        and slot.resident is not None else None)

    # ----------------------------------------------------------------- buffers
    @property
    def bits_width(self) -> int:
        return self.engines[0].plan.bits_width

    @property
    def devices(self) -> list[DeviceContext]:
        return [e.ctx for e in self.engines]

    def pinned_bits(self, batch: int) -> np.ndarray:
        """A page-locked hard-decision array for ``out=``."""
        return pinned_empty((batch, self.bits_width), np.uint8, self.engines[0].ctx)

    def preferred_batch(self, preset: str = "throughput") -> int:
        """Frames per call: one wave of every device (``latency``), or every stream of
        every device given a full chunk (``throughput``)."""
        if preset == "latency":
            return sum(e.plan.frames_per_wave for e in self.engines)
        return sum(e.streams * e.chunk for e in self.engines)

    # ------------------------------------------------------------------ decode
    def _ticket(self, batch, out, parts=None) -> Ticket:
        """Result arrays of a batch and its parts: (engine, start, stop) per device, equal
        shares unless ``parts`` is given."""
        if out is None:
            out = np.empty((batch, self.bits_width), np.uint8)
        elif out.shape != (batch, self.bits_width) or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous uint8 array of shape {(batch, self.bits_width)}, "
                             f"got {out.dtype} {out.shape}")
        return Ticket(out, np.empty(batch, np.int32), np.empty(batch, bool), parts or self._shares(batch))

    def _shares(self, batch) -> tuple:
        """(engine, start, stop): the batch in equal parts over the devices."""
        if len(self.engines) == 1:
            return ((self.engines[0], 0, batch),)
        edges = np.linspace(0, batch, len(self.engines) + 1).astype(int)
        return tuple((eng, int(a), int(b)) for eng, a, b in zip(self.engines, edges[:-1], edges[1:]) if b > a)

    def submit(self, llr, out=None) -> Ticket:
        """Issue a batch and return at once; ``out`` (optional) receives the hard decisions."""
        arr, kind = self.check_llr(llr)
        ticket = self._ticket(arr.shape[0], out)
        for eng, a, b in ticket.parts:
            with eng.ctx.active():
                eng.issue(ticket, a, b, arr[a:b], kind)
        return ticket

    def result(self, ticket: Ticket):
        """Wait for a submitted batch; its DecodeResult."""
        for eng, _, _ in ticket.parts:
            with eng.ctx.active():
                eng.collect(ticket)
        return self._result(ticket)

    def decode(self, llr, out=None):
        """Decode a batch: ``result(submit(llr, out))``, devices driven from one thread each."""
        arr, kind = self.check_llr(llr)
        ticket = self._ticket(arr.shape[0], out)
        if self._posted is not None and arr.shape[0] <= self._posted.resident.frames:
            return self._decode_posted(arr, ticket)

        def run(part):
            eng, a, b = part
            with eng.ctx.active():
                eng.issue(ticket, a, b, arr[a:b], kind)
                eng.collect(ticket)

        if self._pool is None:
            run(ticket.parts[0])
        else:
            for f in [self._pool.submit(run, p) for p in ticket.parts]:
                f.result()
        return self._result(ticket)

    def _decode_posted(self, arr, ticket):
        """A batch of at most the resident kernel's ``frames`` on the only device and stream:
        posted to the running kernel under the device's lock, without the context push and
        pop, the launch and the synchronize of the general path (the context is made current
        only if the kernel has to be launched again; :mod:`.resident`)."""
        eng, slot, count = self.engines[0], self._posted, arr.shape[0]
        with eng.ctx.lock:
            if slot.pending is not None:            # a submit() not yet collected
                with eng.ctx.active():
                    eng.collect_slot(slot)
            # the caller's page-locked array of the previous call (held here, so `is` is safe)
            address = slot.last_mapped if arr is slot.last_input else aligned_mapped_address(arr)
            slot.last_input, slot.last_mapped = arr, address
            if address is None:
                slot.reserve_input(arr[0].nbytes)
                slot.staged(arr)
                address = slot.dev_in
            try:
                slot.resident.post(count, address)
                slot.resident.wait()
            except (driver().Error, CudaError) as exc:
                raise CudaError(f"{eng.where(0, count, count)}: {exc}") from exc
            slot.results_to(ticket, 0, count)
        return self._result(ticket)

    def decode_device(self, llr, frames: int, kind: str | None = None, device: int | None = None, out=None):
        """Decode ``frames`` frames whose LLRs are already in device memory: ``llr`` is a
        device allocation (or pointer) on device ``device`` (default: the first of this
        decoder) holding the rows one after the other, of the input ``kind`` (default
        :attr:`device_kind`: the dtype and row length ``decode`` takes).  No copy in and
        no finite check: the caller vouches for the values (e.g. the simulator's noise).
        Work queued on other streams must be finished before the call."""
        kind = kind or self.device_kind
        matches = [e for e in self.engines if device is None or e.ctx.id == device]
        if not matches:
            raise ValueError(f"device={device!r} is not one of this decoder's devices "
                             f"{[e.ctx.id for e in self.engines]}")
        if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1:
            raise ValueError(f"frames must be an integer >= 1, got {frames!r}")
        eng = matches[0]
        ticket = self._ticket(int(frames), out, parts=((eng, 0, int(frames)),))
        with eng.ctx.active():
            eng.issue(ticket, 0, int(frames), DeviceInput(int(llr), eng.plan.frame_bytes(kind)), kind)
            eng.collect(ticket)
        return self._result(ticket)

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
        """Stop the device threads and wait for resident kernels to leave."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        for eng in self.engines:
            with eng.ctx.active():
                for slot in eng.slots:
                    if slot.resident is not None:
                        slot.resident.close()

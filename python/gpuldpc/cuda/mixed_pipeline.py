"""The cuda path of :class:`gpuldpc.MixedDecoder`: a mixed batch's rows copied to the GPU as
they lie, gathered by code there, decoded by each code's ``gl.Decoder`` in place, and the
results scattered into input order on the GPU before one copy back (docs/mixed.md, "On the
GPU").

The caller's batch, in input order, in *pieces* of ``piece`` frames; each piece takes one of
:data:`SLOTS` slots (a stream and its device buffers), in turn:

1. **in** (the slot's stream): one H2D of the piece's rows ``[count, W]`` as they lie (the
   caller's array registered in place, :class:`.host_memory.HostRegistry`, as the engine
   takes input; or staged once, whole, into a pooled page-locked block: foreign or strided
   memory, another float dtype), and one of its *table* (:func:`piece_rows`: the piece's
   positions grouped by code, each code's in input order);
2. **gather** (kernels/mixed_rows.cu, :mod:`.mixed_rows`): each code's rows packed into
   the slot's device buffer, 16-byte aligned;
3. **decode**: ``gl.Decoder.submit`` of each code's rows as a
   :class:`~gpuldpc.device_arrays.DeviceLLR` naming the slot's stream, ``out_device=True``:
   the decoder's streams wait for the gather on the GPU (an event,
   :func:`.device_memory.wait_for_stream`), its kernels write bits and iteration counts to
   device memory, only the flag bytes come to the host;
4. **out** (once the piece's tickets are collected): the scatter kernel puts each code's
   bits (rows of ``n`` bytes) and iteration counts into the slot's result rows ``[count,
   max n]`` at their positions (zeros first where some code is narrower), then one D2H of
   those rows and counts into the caller's page-locked result block; ``valid``/``bad_llr``
   (the flags, already on the host) are set by the table.

A slot is used again, ``SLOTS`` pieces later, only after its previous piece's tickets are
collected; by then every GPU read of its buffers is done (the decoders' work waited for its
stream after the piece's gather, which comes after the scatter before it).  What crosses
PCIe: the rows of the mixed array once (4 bytes a LLR for float32, 1 for int8; the padding
of narrower codes' rows too), and the hard decisions once (1 byte a bit, padded to the
widest code), 4 bytes of iteration count and 1 flag byte a frame: the bytes of the separate
batches plus the padding.  The host copies nothing but the flags (and staged input).

The whole batch runs on the decoders' first device (GPU arrays are decoded on their own
device, :mod:`gpuldpc.cuda.engine`).
"""
from __future__ import annotations

import numpy as np

from ..device_arrays import DeviceLLR
from ..row_copy import copy_rows
from .context import DeviceContext
from .driver import device_ids, driver
from .host_memory import HostRegistry, ResultPool, is_pinned, pinned_empty
from .mixed_rows import RowKernels

SLOTS = 4
"""Pieces in flight: one being copied in and gathered while up to three decode or go out."""


def _ceil16(nbytes: int) -> int:
    return -(-int(nbytes) // 16) * 16


def piece_rows(code_index: np.ndarray, codes: int) -> tuple[np.ndarray, list]:
    """The table of one piece whose frames have codes ``code_index`` (of ``codes`` codes):
    ``rows`` int32 [count], the positions in the piece of code 0's frames, then code 1's, ...
    (a stable sort: each code's in input order), and ``parts`` [(code, offset, frames)] for
    each code with frames: its frames' positions are ``rows[offset:offset + frames]``."""
    counts = np.bincount(code_index, minlength=codes)
    offsets = np.cumsum(counts) - counts
    return (np.argsort(code_index, kind="stable").astype(np.int32),
            [(int(c), int(offsets[c]), int(counts[c])) for c in np.flatnonzero(counts)])


class _Slot:
    """A stream and its device buffers (grown, never shrunk), the page-locked copy of its
    table, the piece in flight (``work``: start, stop, [(code, row offset, frames, ticket)])
    and the results of its last collected piece (``hold``: the scatter reads them)."""

    def __init__(self):
        self.stream = driver().Stream()
        self.buffers: dict = {}
        self.table_host = None
        self.work = None
        self.hold = ()

    def buffer(self, name: str, nbytes: int) -> int:
        """The address of device buffer ``name`` of at least ``nbytes`` bytes (inside
        ``ctx.active()``); a larger one replaces it once the stream is idle."""
        old = self.buffers.get(name)
        if old is None or old[1] < nbytes:
            if old is not None:
                self.stream.synchronize()
                old[0].free()
            self.buffers[name] = (driver().mem_alloc(max(nbytes, 16)), nbytes)
        return int(self.buffers[name][0])

    def table(self, frames: int) -> np.ndarray:
        """The page-locked table of ``frames`` rows at least (the H2D of the last one is done:
        the slot's tickets were collected)."""
        if self.table_host is None or self.table_host.size < frames:
            self.table_host = pinned_empty(frames, np.int32)
        return self.table_host

    def free(self):
        self.stream.synchronize()
        for alloc, _ in self.buffers.values():
            alloc.free()
        self.buffers.clear()


class MixedPipeline:
    """The device side of a cuda :class:`gpuldpc.MixedDecoder` (module docstring).

    ``decoders``: one ``gl.Decoder`` per code (cuda backend, taking GPU arrays);
    ``in_widths``: LLRs a frame per code; ``bits_widths``: bytes of hard decisions a frame
    per code; ``piece``: frames of the caller's batch per piece."""

    def __init__(self, decoders, in_widths, bits_widths, piece: int):
        self.decoders = tuple(decoders)
        self.in_widths = [int(w) for w in in_widths]
        self.width = int(np.max(bits_widths))             # of the result rows
        self.piece = int(piece)
        self.device = device_ids(self.decoders[0].settings.options.get("devices"))[0]
        self.ctx = DeviceContext(self.device)
        with self.ctx.active():
            self.kernels = RowKernels(self.ctx)
            self.slots = [_Slot() for _ in range(SLOTS)]
        self.registry = HostRegistry.shared(self.ctx)
        self.inputs = ResultPool(self.ctx)      # staged input
        self.results = ResultPool(self.ctx)     # the result blocks the caller's arrays view

    def decode(self, llr: np.ndarray, code_index: np.ndarray, dtype):
        """(bits uint8 [frames, max n], iterations int32, valid bool, bad_llr bool) of frame i
        of ``llr`` [frames, W] (a host array whose rows hold each frame's LLRs first) decoded
        by ``decoders[code_index[i]]``; ``dtype``: the decoders' LLR dtype."""
        frames = code_index.size
        host = self._host_input(llr, np.dtype(dtype))
        off = _ceil16(4 * frames)
        block = self.results.take(off + frames * self.width, [])
        out = (block[off:].reshape(frames, self.width), block[:4 * frames].view(np.int32),
               np.zeros(frames, bool), np.zeros(frames, bool))
        starts = range(0, frames, self.piece)
        try:
            for p, a in enumerate(starts):
                slot = self.slots[p % SLOTS]
                if slot.work is not None:
                    self._finish(slot, out)
                self._start(slot, host, code_index, a, min(a + self.piece, frames))
            for p in range(len(starts), len(starts) + SLOTS):      # the pieces in flight, in order
                slot = self.slots[p % SLOTS]
                if slot.work is not None:
                    self._finish(slot, out)
        finally:
            self._drain()
        return out

    def _host_input(self, llr: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """``llr`` as one H2D copies it: in place when it is C-contiguous ``dtype`` in
        page-locked or registered memory (the engine's rule,
        :meth:`.engine.GpuDecoder._host_input`), else staged whole (converted) into a pooled
        page-locked block by several threads (:func:`gpuldpc.row_copy.copy_rows`)."""
        if llr.dtype == dtype and llr.flags.c_contiguous and (is_pinned(llr) or self.registry.pin(llr)):
            return llr
        staged = self.inputs.take(llr.shape[0] * llr.shape[1] * dtype.itemsize, [])
        staged = staged.view(dtype).reshape(llr.shape)
        copy_rows(staged, llr)
        return staged

    def _start(self, slot: _Slot, host: np.ndarray, code_index: np.ndarray, a: int, b: int):
        """Steps 1-3 of the module docstring for frames ``a:b``."""
        drv, count, row_bytes, size = driver(), b - a, host.strides[0], host.itemsize
        tickets = []
        slot.work = (a, b, tickets)
        packed = []
        with self.ctx.active():
            raw = slot.buffer("raw", self.piece * row_bytes)
            dst = slot.buffer("packed", self.piece * row_bytes + 16 * len(self.decoders))
            table = slot.buffer("table", 4 * self.piece)
            rows, parts = piece_rows(code_index[a:b], len(self.decoders))
            table_host = slot.table(self.piece)[:count]
            table_host[:] = rows
            drv.memcpy_htod_async(raw, host[a:b], slot.stream)
            drv.memcpy_htod_async(table, table_host, slot.stream)
            for c, offset, frames in parts:
                width = self.in_widths[c] * size
                self.kernels.gather(slot.stream, raw, row_bytes, dst, width, table + 4 * offset, width, frames)
                packed.append((c, offset, frames, dst))
                dst += _ceil16(frames * width)
        for c, offset, frames, address in packed:
            view = DeviceLLR(address, (frames, self.in_widths[c]), host.dtype, None, self.device,
                             slot.stream.handle, slot)
            tickets.append((c, offset, frames, self.decoders[c].submit(view, out_device=True)))

    def _finish(self, slot: _Slot, out):
        """Step 4 of the module docstring for the slot's piece (waits for its tickets)."""
        bits, iterations, valid, bad = out
        a, b, tickets = slot.work
        results = [(offset, frames, ticket.result()) for _, offset, frames, ticket in tickets]
        slot.work = None
        drv, count = driver(), b - a
        with self.ctx.active():
            table = int(slot.buffers["table"][0])
            dev_iterations = slot.buffer("out", _ceil16(4 * self.piece) + self.piece * self.width)
            dev_bits = dev_iterations + _ceil16(4 * self.piece)
            if any(res.bits.shape[1] < self.width for _, _, res in results):    # zero padding
                drv.memset_d8_async(dev_bits, 0, count * self.width, slot.stream)
            for offset, frames, res in results:
                width, rows = res.bits.shape[1], table + 4 * offset
                self.kernels.scatter(slot.stream, res.bits.ptr, width, dev_bits, self.width, rows, width, frames)
                self.kernels.scatter(slot.stream, res.iterations.ptr, 4, dev_iterations, 4, rows, 4, frames)
            drv.memcpy_dtoh_async(bits[a:b], dev_bits, slot.stream)
            drv.memcpy_dtoh_async(iterations[a:b], dev_iterations, slot.stream)
        for offset, frames, res in results:
            rows = a + slot.table_host[offset:offset + frames]
            valid[rows], bad[rows] = res.valid, res.bad_llr
        slot.hold = results

    def _drain(self):
        """Every piece's tickets collected (after a failure too: their first error is already
        on its way up) and every stream idle, so no copy lands in memory handed out again;
        then the results the scatters read are let go."""
        for slot in self.slots:
            if slot.work is not None:
                for _, _, _, ticket in slot.work[2]:
                    try:
                        ticket.result()
                    except Exception:  # noqa: BLE001  (a failed piece: the first error is raised)
                        pass
                slot.work = None
        with self.ctx.active():
            for slot in self.slots:
                slot.stream.synchronize()
        for slot in self.slots:
            slot.hold = ()

    def close(self):
        """Free the slots' device buffers and the pools' page-locked blocks' hold on them."""
        with self.ctx.active():
            for slot in self.slots:
                slot.free()

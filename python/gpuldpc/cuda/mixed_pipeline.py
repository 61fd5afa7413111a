"""The cuda path of :class:`gpuldpc.MixedDecoder`: a mixed batch's rows copied to the GPU as
they lie, gathered by code there, decoded by each code's kernels in place, and the results
scattered into input order on the GPU before one copy back (docs/mixed.md, "On the GPU").

The caller's batch, in input order, in *pieces* of ``piece`` frames; each piece's frames sorted
by code on the host (:func:`piece_table`), whose order is the *table* the gather and scatter
kernels index (row numbers within the piece), in page-locked memory.  A piece is sorted while
the GPU works on the pieces before it, so only the first piece's sort (about 10 us) comes before
the first copy (one sort of the whole call by (piece, code), the design until session 14, took
0.7 ms on the development VM before anything was queued).  Each piece takes one of
:data:`SLOTS` slots (a stream and its device buffers) in turn, and everything of a piece is
queued on its slot's stream, with no event, ticket or wait between:

1. **in**: one H2D of the piece's rows ``[count, W]`` as they lie (the caller's array as the
   engine takes input, :func:`.host_memory.host_rows`: page-locked or registered in place, or
   staged by threads in the background, each piece copied once its rows are staged), and one
   of its slice of the table;
2. per code with frames in the piece: **gather** (kernels/mixed_rows.cu, :mod:`.mixed_rows`)
   of its rows into the slot's packed input, 16-byte aligned; **decode**: the code's decoder
   plan (:mod:`.engine`'s plan interface: ``plan.launch``) on those rows, writing its hard
   decisions, iteration counts and flag bytes into the slot's result buffer, in table order;
   **scatter** of its hard decisions (rows of ``n`` bytes) into the slot's result rows
   ``[count, max n]`` at their positions (zeroed first where some code is narrower);
3. **out**: one D2H of the result rows into the caller's page-locked result block, and one
   each of the iteration counts and flag bytes (5 bytes a frame) in table order, put into
   input order on the host once the call's streams are done (the inverse permutation of the
   table, one NumPy assignment a call).

A slot is used again, ``SLOTS`` pieces later, after a ``synchronize`` of its stream.  What
crosses PCIe: the rows of the mixed array once (4 bytes a LLR for float32, 1 for int8; the
padding of narrower codes' rows too), and the hard decisions once (1 byte a bit, padded to
the widest code), 5 bytes a frame of counts and flags: the bytes of the separate batches plus
the padding.  The host's work a piece is about twenty asynchronous CUDA calls.

The whole batch runs on the decoders' first device.
"""
from __future__ import annotations

import numpy as np

from .context import CudaError, DeviceContext
from .driver import driver
from .engine import drain
from .host_memory import HostRegistry, ResultPool, host_rows, pinned_empty
from .mixed_rows import RowKernels

SLOTS = 4
"""Pieces in flight: one being copied in and gathered while up to three decode or go out."""


def _ceil16(nbytes: int) -> int:
    return -(-int(nbytes) // 16) * 16


def piece_table(code_index: np.ndarray, codes: int, out: np.ndarray) -> np.ndarray:
    """The table of one piece whose frames have codes ``code_index`` (of ``codes`` codes): ``out``
    [count] gets the piece's row numbers grouped by code (code 0's first, each code's in input
    order: a stable sort by code, NumPy's radix sort of a 16-bit key, about 10 us for 5280
    frames); returns the frames of each code, int [codes]."""
    out[:] = np.argsort(code_index.astype(np.int16 if codes < 1 << 15 else np.int64), kind="stable")
    return np.bincount(code_index, minlength=codes)


class _Slot:
    """A stream and its device buffers, each grown when a piece needs more (never shrunk)."""

    def __init__(self):
        self.stream = driver().Stream()
        self.buffers: dict = {}

    def buffer(self, name: str, nbytes: int) -> int:
        """The address of device buffer ``name`` of at least ``nbytes`` bytes (inside
        ``ctx.active()``, the stream idle); MemoryError naming the buffer where the GPU has
        no room."""
        old = self.buffers.get(name)
        if old is None or old[1] < nbytes:
            if old is not None:
                old[0].free()
                del self.buffers[name]
            try:
                self.buffers[name] = (driver().mem_alloc(max(nbytes, 16)), nbytes)
            except driver().MemoryError as exc:
                raise MemoryError(f"MixedDecoder on the GPU: {nbytes / 2**20:.1f} MiB of device memory for a "
                                  f"piece's {name} buffer: {exc}; lower piece_frames") from exc
        return int(self.buffers[name][0])

    def free(self):
        self.stream.synchronize()
        for alloc, _ in self.buffers.values():
            alloc.free()
        self.buffers.clear()


class MixedPipeline:
    """The device side of a cuda :class:`gpuldpc.MixedDecoder` (module docstring).

    ``plans``: each code's decoder plan on ``device`` (``GpuDecoder.plan_on``); ``kinds``: the
    input kind each plan reads ("llr", GF(q) "bits"); ``in_widths``: LLRs a frame per code;
    ``bits_widths``: bytes of hard decisions a frame per code; ``piece``: frames of the
    caller's batch per piece."""

    def __init__(self, plans, kinds, in_widths, bits_widths, piece: int, device: int, names=()):
        self.plans, self.kinds = tuple(plans), tuple(kinds)
        self.names = tuple(names) or tuple(p.name for p in self.plans)
        self.in_widths = [int(w) for w in in_widths]
        self.bits_widths = [int(w) for w in bits_widths]
        self.width = max(self.bits_widths)                # of the result rows
        self.piece = int(piece)
        self.scratch = max(p.scratch_bytes(self.piece) for p in self.plans)
        self.device = device
        self.ctx = DeviceContext(device)
        with self.ctx.active():
            self.kernels = RowKernels(self.ctx)
            self.slots = [_Slot() for _ in range(SLOTS)]
        self.registry = HostRegistry.shared(self.ctx)
        self.inputs = ResultPool(self.ctx)      # staged input
        self.results = ResultPool(self.ctx)     # the result blocks the caller's arrays view
        self._host = None                       # page-locked: the table, then counts and flags

    def decode(self, llr: np.ndarray, code_index: np.ndarray, dtype):
        """(bits uint8 [frames, max n], iterations int32, valid bool, bad_llr bool) of frame i
        of ``llr`` [frames, W] (a host array whose rows hold each frame's LLRs first) decoded
        by code ``code_index[i]``'s plan; ``dtype``: the plans' LLR dtype."""
        frames = code_index.size
        host, staging = host_rows(llr, self.registry, self.inputs, [], dtype)
        aux = self._host_block(9 * frames)
        table = aux[:4 * frames].view(np.int32)
        packed_iterations = aux[4 * frames:8 * frames].view(np.int32)
        packed_flags = aux[8 * frames:]
        order = np.empty(frames, np.int64)                 # input position of each table entry
        bits = self.results.take(frames * self.width, []).reshape(frames, self.width)
        drv = driver()
        with self.ctx.active():
            try:
                for p, a in enumerate(range(0, frames, self.piece)):
                    b = min(a + self.piece, frames)
                    counts = piece_table(code_index[a:b], len(self.plans), table[a:b])   # while the GPU works
                    np.add(table[a:b], a, out=order[a:b])
                    slot = self.slots[p % SLOTS]
                    slot.stream.synchronize()              # its piece before: buffers free again
                    if staging is not None:
                        staging.wait(a, b)
                    self._issue(slot, host[a:b], table[a:b], counts,
                                (bits[a:b], packed_iterations[a:b], packed_flags[a:b]))
                for slot in self.slots:
                    slot.stream.synchronize()
            except BaseException as exc:
                drain(self.slots)
                if isinstance(exc, drv.Error):
                    raise CudaError(f"MixedDecoder on device {self.device} (codes {list(self.names)}, {frames} "
                                    f"frames): {exc}") from exc
                raise
        iterations = np.empty(frames, np.int32)
        flags = np.empty(frames, np.uint8)
        iterations[order], flags[order] = packed_iterations, packed_flags
        return bits, iterations, (flags & 1).view(bool), flags > 1

    def _host_block(self, nbytes: int) -> np.ndarray:
        """The page-locked bytes of the call's table, counts and flags (grown; every copy of
        the last call is done)."""
        if self._host is None or self._host.size < nbytes:
            self._host = None
            self._host = pinned_empty(max(nbytes, 16), np.uint8, self.ctx)
        return self._host[:nbytes]

    def _issue(self, slot: _Slot, rows: np.ndarray, table: np.ndarray, counts: np.ndarray, out):
        """Steps 1-3 of the module docstring for one piece: ``rows`` its host rows, ``table``
        its slice of the call's table, ``counts`` its frames per code, ``out`` (bits, packed
        iteration counts, packed flags) the host arrays its results go to."""
        drv, s, count = driver(), slot.stream, rows.shape[0]
        row_bytes, size, piece, width = rows.strides[0], rows.itemsize, self.piece, self.width
        raw = slot.buffer("rows", piece * row_bytes)
        packed = slot.buffer("packed rows", piece * row_bytes + 16 * len(self.plans))
        dev_table = slot.buffer("table", 4 * piece)
        iterations = slot.buffer("results", _ceil16(5 * piece) + piece * width)
        flags, results = iterations + 4 * piece, iterations + _ceil16(5 * piece)
        dev_bits = slot.buffer("result rows", piece * width)
        scratch = slot.buffer("scratch", self.scratch) if self.scratch else None
        drv.memcpy_htod_async(raw, rows, s)
        drv.memcpy_htod_async(dev_table, table, s)
        if any(w < width for w, n in zip(self.bits_widths, counts) if n):
            drv.memset_d8_async(dev_bits, 0, count * width, s)
        offset = 0
        for c in np.flatnonzero(counts):
            frames, in_bytes, bits_width = int(counts[c]), self.in_widths[c] * size, self.bits_widths[c]
            index, bits = dev_table + 4 * offset, results + offset * width
            self.kernels.gather(s, raw, row_bytes, packed, in_bytes, index, in_bytes, frames)
            self.plans[c].launch(s, frames, packed, self.kinds[c], (bits, iterations + 4 * offset, flags + offset, 0),
                                 scratch, piece)
            self.kernels.scatter(s, bits, bits_width, dev_bits, width, index, bits_width, frames)
            packed += _ceil16(frames * in_bytes)
            offset += frames
        drv.memcpy_dtoh_async(out[0], dev_bits, s)
        drv.memcpy_dtoh_async(out[1], iterations, s)
        drv.memcpy_dtoh_async(out[2], flags, s)

    def close(self):
        """Free the slots' device buffers."""
        with self.ctx.active():
            for slot in self.slots:
                slot.free()

"""Plans behind a stage: a kernel of their own queued before or after an inner plan's launch,
on the same stream, in a device buffer in front of the inner plan's scratch.

The stream engine (:mod:`.engine`) sees one plan; a stage wraps the decoding plan (or
another stage) and changes what crosses PCIe without touching the decoding kernels:

* :class:`Int4Plan` (issue 16 item 4, :mod:`gpuldpc.int4`): input rows of packed int4 LLRs,
  ``ceil(n/2)`` bytes a frame, expanded by ``unpack_int4`` (kernels/transport.cu) into the
  int8 rows the inner plan's int8 kernel reads (kernels without an ``_i4`` entry point: the
  binary16 QC kernels read the packed rows themselves);
* :class:`HalfSoftPlan` (issue 16 item 2, :func:`gpuldpc.soft.to_float16`): the inner kernel
  writes its float32 posteriors into the stage buffer, ``soft_to_half`` converts them into the
  slot's soft-output buffer as binary16, so 2 bytes a bit cross PCIe instead of 4;
* :class:`PackedInfoPlan` (``packed=True`` where the information bits start inside a byte:
  CCSDS C2): ``packed_run`` copies each frame's run of information bits from the packed
  decisions into the stage buffer, shifted to start at bit 0, and the engine copies those rows
  into ``DecodeResult.info`` (``info_rows``) instead of the host shifting them;
* :class:`gpuldpc.cuda.recovery.RecoveryPlan`: 5G NR rate recovery of the E received LLRs.

Each is a :class:`StagePlan`: every attribute it does not set is the inner plan's (launch
shape, ``bits_width``, ``soft_width``, ``mapped_input``: a latency plan's stage kernel reads
the mapped host rows in place), its scratch is its buffer (256-byte aligned) followed by the
inner plan's, and it has no resident kernel (that reads the slot's input rows in place, with
no stage before it).
"""
from __future__ import annotations

import numpy as np

from .. import packed_bits

MODULE = "transport"
THREADS = 256
UNPACK_ARGS = "PPii"          # kernels/transport.cu unpack_int4 (tests/gpu/test_kernel_signatures.py)
HALF_ARGS = "PPq"             # kernels/transport.cu soft_to_half
RUN_ARGS = "PPiiii"           # kernels/transport.cu packed_run
_ALIGN = 256


def _blocks(threads: int) -> int:
    return max(1, -(-threads // THREADS))


class StagePlan:
    """An inner plan (:mod:`.engine`'s plan interface) behind a stage kernel (module docstring);
    a subclass gives ``stage_bytes(frames)`` and ``launch``."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def resident(self, slot):
        return None

    def _stage_size(self, frames) -> int:
        return -(-self.stage_bytes(frames) // _ALIGN) * _ALIGN

    def scratch_bytes(self, frames) -> int:
        return self._stage_size(frames) + self.inner.scratch_bytes(frames)

    def inner_scratch(self, scratch, capacity):
        """The inner plan's scratch, after the stage buffer (None where it needs none)."""
        return int(scratch) + self._stage_size(capacity) if self.inner.scratch_bytes(capacity) else None


class Int4Plan(StagePlan):
    """Packed int4 input (:mod:`gpuldpc.int4`) in front of an int8 plan: ``frame_bytes`` is
    ``ceil(n/2)``, and ``launch`` unpacks the chunk into the stage buffer (n int8 a frame), the
    rows the inner launch then reads."""

    def __init__(self, ctx, inner, kind="llr"):
        super().__init__(inner)
        self.n = inner.frame_bytes(kind)               # int8 values a frame
        self.func = ctx.function(MODULE, "unpack_int4")
        self.func.prepare(UNPACK_ARGS)
        self.name = f"{MODULE}/unpack_int4 + {inner.name}"

    def frame_bytes(self, kind) -> int:
        return (self.n + 1) // 2

    def stage_bytes(self, frames) -> int:
        return frames * self.n

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        unpacked = int(scratch)
        groups = -(-self.frame_bytes(kind) // 4)
        self.func.prepared_async_call((_blocks(count * groups), 1), (THREADS, 1, 1), stream, int(dev_in), unpacked,
                                      np.int32(self.n), np.int32(count))
        self.inner.launch(stream, count, unpacked, kind, out, self.inner_scratch(scratch, capacity), capacity)


class HalfSoftPlan(StagePlan):
    """Soft output as binary16: the inner kernel's float32 posteriors go to the stage buffer,
    ``soft_to_half`` writes them into the slot's soft buffer (``out[3]``, ``soft_dtype``
    float16), which the engine copies to the host."""

    soft_dtype = np.dtype(np.float16)

    def __init__(self, ctx, inner):
        super().__init__(inner)
        self.func = ctx.function(MODULE, "soft_to_half")
        self.func.prepare(HALF_ARGS)
        self.name = f"{inner.name} + {MODULE}/soft_to_half"

    def stage_bytes(self, frames) -> int:
        return 4 * frames * self.inner.soft_width

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        half = out[3]
        posteriors = int(scratch) if half else 0          # no soft buffer (out_device): none written
        self.inner.launch(stream, count, dev_in, kind, (*out[:3], posteriors), self.inner_scratch(scratch, capacity),
                          capacity)
        if half:
            values = count * self.inner.soft_width
            self.func.prepared_async_call((_blocks(-(-values // 4)), 1), (THREADS, 1, 1), stream, posteriors,
                                          int(half), np.int64(values))


class PackedInfoPlan(StagePlan):
    """``DecodeResult.info`` of packed decisions whose information bits ``start .. stop - 1``
    do not start on a byte (:func:`gpuldpc.packed_bits.info_of`'s shifted copy, made on the
    GPU): after the inner launch, ``packed_run`` writes each frame's run, packed from bit 0,
    into the stage buffer; ``info_rows`` is where the engine copies ``info`` from."""

    def __init__(self, ctx, inner, start, stop):
        super().__init__(inner)
        self.start, self.count = start, stop - start
        self.width = packed_bits.width(self.count)        # bytes of info a frame
        self.func = ctx.function(MODULE, "packed_run")
        self.func.prepare(RUN_ARGS)
        self.name = f"{inner.name} + {MODULE}/packed_run"

    def stage_bytes(self, frames) -> int:
        return frames * self.width

    def info_rows(self, scratch) -> tuple[int, int]:
        """(address, pitch) of the info rows in a slot's ``scratch``."""
        return int(scratch), self.width

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        self.inner.launch(stream, count, dev_in, kind, out, self.inner_scratch(scratch, capacity), capacity)
        self.func.prepared_async_call((_blocks(count * self.width), 1), (THREADS, 1, 1), stream, int(out[0]),
                                      int(scratch), np.int32(self.inner.bits_width), np.int32(self.start),
                                      np.int32(self.count), np.int32(count))

"""Rows of bytes gathered and scattered on the GPU through an index table (kernels/mixed_rows.cu).

* gather:  ``dst[i, :width] = src[rows[i], :width]`` -- one code's frames of a mixed batch
  packed into the contiguous input of its decoder;
* scatter: ``dst[rows[i], :width] = src[i, :width]`` -- a decoder's results put back at the
  frames' positions.

Byte rows ``src_pitch`` / ``dst_pitch`` apart, ``rows`` int32 in device memory.  Each kernel
entry moves vectors of V bytes; :func:`vector_bytes` picks the largest V of :data:`VECTORS`
that divides the width, both pitches and both addresses, so every access is aligned (V = 16,
one 128-bit load and store a thread, for float32/float16/int8 rows of the WiFi and WiMAX
codes; a WiFi 1944 row of int8 LLRs or of hard decisions: V = 8).  Used by
:mod:`.mixed_pipeline`.
"""
from __future__ import annotations

MODULE = "mixed_rows"
ARG_TYPES = "PqPqPii"     # kernels/mixed_rows.cu GPULDPC_MIXED_ROWS (tests/gpu/test_kernel_signatures.py)
VECTORS = (16, 8, 4, 2, 1)
THREADS = 128
MAX_BLOCKS = 1 << 16
"""Blocks of a launch at most (each strides over the rows: a block a row at a time)."""


def vector_bytes(*sizes: int) -> int:
    """The largest V of :data:`VECTORS` dividing every one of ``sizes`` (a width, pitches,
    addresses): the vector a kernel may move without a misaligned access."""
    return next(v for v in VECTORS if all(int(s) % v == 0 for s in sizes))


class RowKernels:
    """The gather and scatter entries of kernels/mixed_rows.cu on one device, prepared.
    Build inside the device's ``ctx.active()``; launches are asynchronous on the given stream."""

    def __init__(self, ctx):
        self._funcs = {}
        for kind in ("gather", "scatter"):
            for v in VECTORS:
                func = ctx.function(MODULE, f"mixed_{kind}_v{v}")
                func.prepare(ARG_TYPES)
                self._funcs[kind, v] = func

    def _launch(self, kind, stream, src, src_pitch, dst, dst_pitch, rows, width, count):
        v = vector_bytes(width, src_pitch, dst_pitch, src, dst)
        self._funcs[kind, v].prepared_async_call(
            (min(int(count), MAX_BLOCKS), 1), (THREADS, 1, 1), stream,
            int(src), int(src_pitch), int(dst), int(dst_pitch), int(rows), int(width), int(count))

    def gather(self, stream, src, src_pitch, dst, dst_pitch, rows, width, count):
        """Enqueue ``dst[i, :width] = src[rows[i], :width]`` for ``i < count`` (device addresses)."""
        self._launch("gather", stream, src, src_pitch, dst, dst_pitch, rows, width, count)

    def scatter(self, stream, src, src_pitch, dst, dst_pitch, rows, width, count):
        """Enqueue ``dst[rows[i], :width] = src[i, :width]`` for ``i < count`` (device addresses)."""
        self._launch("scatter", stream, src, src_pitch, dst, dst_pitch, rows, width, count)

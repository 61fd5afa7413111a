"""The tables of the sparse CUDA kernel (kernels/sparse_decode.cu) and its plan.

For the binary codes the QC kernels cannot describe (:func:`needs_sparse`): blocks that are
sums of circulants (DVB-S2, CCSDS C2), a circulant with an entry missing (DVB-S2's
accumulator wrap), circulants wider than a block of threads (AR4JA k = 16384: z = 2048,
1024), or no QC structure (alist codes).  The kernel reads ``code.H`` row by row:

* ``cols_t`` int32 [max_row, m]: ``cols_t[e, r]`` the e-th column of row r in the order of
  ``code.H.indices`` (the reference decoder's edge order, which its two-min scan follows), -1
  past the row's degree: transposed, so a warp's rows read one coalesced line an edge and no
  row pointer comes first (:class:`SparsePlan` uploads it with the pad column in place of -1: the
  word after the posteriors, ``n`` (flooding ``2n``), which the kernel holds at +inf, so that a
  lighter row's slot needs no test of its own column: kernels/sparse_decode.cu TableColumns);
* ``layer_start`` int32 [layers + 1]: layer ``l`` is rows ``layer_start[l] ..
  layer_start[l+1] - 1``, the reference decoder's layers
  (:class:`gpuldpc.codes.tanner.TannerGraph`: runs of consecutive rows with
  disjoint supports, or the QC block rows), so the layered schedule is the reference's;
* ``col_ptr`` int32 [n + 1], ``col_edges`` int32 [E, 2]: per column its edges as (row,
  position of the edge in the row), rows increasing (the flooding sum's order);
* ``kcol`` int32 [n] or None: the kernel's column of each of the frame's columns, for a code
  that names a column order of its own (``code.qc_columns``, the frame's column of each QC
  column: DVB-S2, whose parity bits p_i, p_{i+q}, ... of a block row's consecutive checks lie q
  columns apart in the frame and next to each other in the QC form, so a warp's posterior
  gathers coalesce); ``cols_t``, ``col_ptr`` and ``col_edges`` then count kernel columns, and the
  kernel reads the LLRs and writes the decisions and soft output through ``kcol``, in the
  frame's order.  The arithmetic is unchanged (same rows, layers and edge order): bit for bit.
* ``circulants`` (:func:`circulant_form`) or None: where every row is, but for at most one extra
  column, a sum of circulants of size z whose block rows hold the reference's layers (CCSDS
  C2: two block rows of 16 weight-2 blocks of z = 511, and the mother's two pad columns in
  two rows), the float32 layered kernel with posteriors in shared memory computes each row's
  columns (``sp33c``: row t of block row i reads block column j at ``j z + (t + s) mod z``)
  instead of loading them from ``cols_t`` and holding them in registers (C2: 93 registers instead
  of 128 and a spill, five blocks an SM instead of four, +15 %; binary16 keeps the table: there the
  computed columns ran 18 % slower, docs/gpu.md "Circulant rows").  The slots' order is then the
  block row's circulants', not ``code.H``'s; a min-sum row's messages do not depend on the
  order of its edges (the two smallest |Q| and the sign product of a multiset; a tie of min1
  makes min1 = min2), so the decisions are the same bit for bit.

:class:`SparsePlan` is the engine's plan (:mod:`.engine`) for this kernel: one frame a block
of up to 384 threads for rows of up to 8 edges (three blocks an SM), 512 for 16 (binary16
with the posteriors in shared memory: 384 and two blocks an SM), 384 for 32, 256 above (the
kernel's launch bounds; a layer's rows, rounded up to the warp, a row a thread;
``precision="float16"``: a frame pair a block, in the halves of half2 words), posteriors in
shared memory where ``n`` words of them (flooding: ``2n``, with the channel LLRs) fit a
block's opt-in shared memory and leave :data:`MIN_SHARED_WARPS` warps an SM, else in device
memory; each block's scratch holds its row records (:func:`record_bytes`) and those
posteriors.
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from .. import packed_bits
from ..codes.tanner import TannerGraph
from .driver import PackedLaunch, driver
from .layout import NotQuasiCyclic
from .tuning import WARP, LaunchShape, blocks_per_sm

MODULE = "sparse_decode"
ROW_VARIANTS = (8, 16, 32, 34, 40, 58)  # kernels/sparse_decode.cu sp<DC_MAX>: rows of up to DC_MAX edges in registers
CIRCULANT_SLOTS = 33    # sp33c: up to 32 circulants a row and one extra column (kernels/sparse_decode.cu)
MAX_ROW = ROW_VARIANTS[-1]      # the sign bits 0..57 of a row record
QC_MAX_THREADS = 512        # the QC kernels' largest block: z (rounded up to the warp) above it goes here
POSTERIORS = ("auto", "shared", "device")
_ARG_TYPES = "PfPiPPPiPPPPPPiPiiiiiiiiffP"
_RULES = {"nms": 0, "oms": 1}
# posteriors="auto" takes shared memory where it fits and leaves at least this many warps an SM
# (H200, commit ae7413e, kernel only, coded Gb/s shared / device: AR4JA k = 16384, one block of 16
# warps an SM, float32 4.54 / 4.77, binary16 pairs 9.69 / 11.34; DVB-S2 short frames, three blocks
# of 12 warps, binary16 7.77 / 6.80, float32 3.84 / 2.17; C2, 24 warps by shared memory, binary16
# 11.0 / 10.6, float32 6.46 / 3.97.  16 before that commit's kernel, when AR4JA float32 took shared
# memory at 4.55 against 4.04 on an H100)
MIN_SHARED_WARPS = 24


class Circulants(NamedTuple):
    """The circulant form of a code's rows (:func:`circulant_form`): ``slots`` int32 [m / z,
    CIRCULANT_SLOTS, 2], block row i's circulant e as ``(j z + s, z - s)`` for e < count_i and
    ``(count_i, 0)`` in its last entry; ``extra`` int32 [m], each row's column outside those
    circulants or -1."""

    z: int
    slots: np.ndarray
    extra: np.ndarray


class SparseLayout(NamedTuple):
    """Kernel-side description of a binary code by its rows (see the module docstring)."""

    n: int
    m: int
    cols_t: np.ndarray
    layer_start: np.ndarray
    col_ptr: np.ndarray
    col_edges: np.ndarray
    max_layer_rows: int
    max_row: int                # edges of the heaviest row
    kcol: np.ndarray | None = None
    circulants: Circulants | None = None

    @property
    def layers(self) -> int:
        return int(self.layer_start.size - 1)


def needs_sparse(layout) -> bool:
    """Whether a QC layout is beyond the QC kernels' blocks: one frame's z threads, rounded up
    to the warp, above :data:`QC_MAX_THREADS`."""
    return -(-layout.z // WARP) * WARP > QC_MAX_THREADS


def sparse_layout(code) -> SparseLayout:
    """The :class:`SparseLayout` of a binary ``code``; raises :class:`NotQuasiCyclic` for a row
    heavier than :data:`MAX_ROW` edges."""
    if not code.is_binary:
        raise NotQuasiCyclic(f"code {code.name!r} is a GF({code.q}) code; the binary kernels need q = 2")
    graph = TannerGraph(code)          # the reference decoder's own tables and layers
    H = code.H
    row_ptr = np.asarray(H.indptr, dtype=np.int32)
    degrees = np.diff(row_ptr)
    if degrees.max(initial=0) > MAX_ROW:
        raise NotQuasiCyclic(f"code {code.name!r}: a check row of {int(degrees.max())} edges exceeds the "
                             f"sparse kernel's limit of {MAX_ROW}")
    starts = [0]
    for layer in graph.layers:         # runs of consecutive rows (empty rows belong to none: span them)
        rows = np.concatenate([b.rows for b in layer])
        end = int(rows.max()) + 1
        if rows.min() < starts[-1] or np.count_nonzero(degrees[starts[-1]:end]) != rows.size:
            raise NotQuasiCyclic(f"code {code.name!r}: a layer of the reference schedule is not a run of "
                                 "consecutive rows")
        starts.append(end)
    starts[-1] = code.m                # trailing empty rows join the last layer
    layer_start = np.asarray(starts, dtype=np.int32)
    kcol = kernel_columns(code)
    to_kernel = (lambda c: c) if kcol is None else (lambda c: kcol[c])
    position = np.arange(H.nnz) - row_ptr[graph.edge_row]          # of each edge in its row
    cols_t = np.full((max(int(degrees.max(initial=0)), 1), code.m), -1, dtype=np.int32)
    cols_t[position, graph.edge_row] = to_kernel(H.indices)
    edge_col = to_kernel(graph.edge_col)
    order = np.lexsort((graph.edge_row, edge_col))                # by column, then row
    col_ptr = np.concatenate([[0], np.cumsum(np.bincount(edge_col, minlength=code.n))]).astype(np.int32)
    col_edges = np.stack([graph.edge_row[order], position[order]], axis=1).astype(np.int32)
    circulants = circulant_form(H, layer_start) if kcol is None and degrees.max(initial=0) > 16 else None
    return SparseLayout(code.n, code.m, cols_t, layer_start, col_ptr, col_edges,
                        int(np.diff(layer_start).max()), int(degrees.max(initial=0)), kcol, circulants)


def circulant_form(H, layer_start) -> Circulants | None:
    """The rows of ``H`` as sums of circulants of size z and at most one extra column a row
    (:class:`Circulants`), for the largest z dividing m (32 <= z <= 1024) such that every layer
    (``layer_start``) lies in one block row, no block row has more than ``CIRCULANT_SLOTS - 1``
    circulants and at most m / 16 rows have an extra column; None where no z does.
    (:func:`sparse_layout` asks for codes of rows of more than 16 edges and no column order of
    their own.)

    Edge (r, c), t = r mod z, lies on circulant (i, j, s) = (r div z, c div z, (c - t) mod z); a
    circulant of the form holds z edges, one a row of its block row."""
    H = H.tocsr()
    m, n = H.shape
    rows = np.repeat(np.arange(m), np.diff(H.indptr))
    cols = H.indices.astype(np.int64)
    starts = np.asarray(layer_start)
    for z in sorted((d for d in range(32, min(m, 1024) + 1) if m % d == 0), reverse=True):
        if np.any(starts[:-1] // z != (starts[1:] - 1) // z):
            continue
        i, t, j = rows // z, rows % z, cols // z
        key = (i * (n // z + 1) + j) * z + (cols % z - t) % z
        uniq, inverse, count = np.unique(key, return_inverse=True, return_counts=True)
        full = count[inverse] == z
        loose = rows[~full]
        if loose.size > m // 16 or (loose.size and np.bincount(loose).max() > 1):
            continue
        per_row = np.bincount(rows[full] // z, minlength=m // z) // z
        if per_row.max(initial=0) > CIRCULANT_SLOTS - 1:
            continue
        slots = np.zeros((m // z, CIRCULANT_SLOTS, 2), dtype=np.int32)
        circ = uniq[count == z]
        ci, rest = circ // ((n // z + 1) * z), circ % ((n // z + 1) * z)
        cj, cs = rest // z, rest % z
        for b in range(m // z):
            mine = ci == b
            slots[b, :per_row[b], 0] = cj[mine] * z + cs[mine]
            slots[b, :per_row[b], 1] = z - cs[mine]
            slots[b, -1] = (per_row[b], 0)
        extra = np.full(m, -1, dtype=np.int32)
        extra[loose] = cols[~full]
        return Circulants(z, slots, extra)
    return None


def kernel_columns(code) -> np.ndarray | None:
    """``kcol`` (module docstring): the inverse of ``code.qc_columns`` as int32, or None for a
    code without one (its frame order is the kernel's)."""
    qc_columns = getattr(code, "qc_columns", None)
    if qc_columns is None:
        return None
    kcol = np.empty(code.n, dtype=np.int32)
    kcol[qc_columns] = np.arange(code.n, dtype=np.int32)
    return kcol


def row_variant(layout: SparseLayout) -> int:
    """DC_MAX of the kernel variant: the smallest of :data:`ROW_VARIANTS` that holds the code's
    heaviest row."""
    return next(d for d in ROW_VARIANTS if d >= layout.max_row)


def circulant_rows(layout: SparseLayout, precision: str, posteriors: str, schedule: str) -> bool:
    """Whether the launch computes its rows' columns (``sp33c``: a circulant form, float32,
    layered, posteriors in shared memory)."""
    return (layout.circulants is not None and precision == "float32" and posteriors == "shared"
            and schedule == "layered")


def kernel_name(layout: SparseLayout, precision: str, posteriors: str, schedule: str, llr_code: str) -> str:
    """Entry point of kernels/sparse_decode.cu, ``sp<DC_MAX>_<f32|f16>_<sh|gl>_<schedule>_<input>``
    (:func:`row_variant`), or ``sp33c_f32_sh_layered_<input>`` (:func:`circulant_rows`)."""
    circulant = circulant_rows(layout, precision, posteriors, schedule)
    rows = f"sp{CIRCULANT_SLOTS}c" if circulant else f"sp{row_variant(layout)}"
    return (f"{rows}_{'f16' if precision == 'float16' else 'f32'}_"
            f"{'sh' if posteriors == 'shared' else 'gl'}_{schedule}_{llr_code}")


def record_bytes(layout: SparseLayout, precision: str) -> int:
    """Bytes of a check row's message record in a block's scratch: float32 16 (f(min1), f(min2),
    idx and 58 sign bits); float16, a frame pair's, 4 x (2 + DC_MAX / 8 rounded up) (kernels/
    sparse_decode.cu: two half2 magnitudes, then 4 bits an edge)."""
    return 4 * (2 + -(-row_variant(layout) // 8)) if precision == "float16" else 16


class SparsePlan:
    """The sparse kernel on one device: tables, posterior placement, launch shape."""

    def __init__(self, ctx, dec, llr_code: str, posteriors: str = "auto"):
        drv = driver()
        lay, lim = dec.layout, ctx.limits
        self.dec = weakref.proxy(dec)   # weak: the decoder owns the plan (no cycle)
        pairs = dec.precision == "float16"      # binary16: a frame pair a block, a half2 word a posterior
        words = lay.n * (2 if dec.schedule == "flooding" else 1)   # posteriors (and channel LLRs)
        post_bytes = 4 * (words + 1)            # and the pad column's word (kernels/sparse_decode.cu TableColumns)
        fits = post_bytes + 16 <= lim.shared_per_block_optin
        if posteriors == "shared" and not fits:
            raise ValueError(f"posteriors='shared': code {dec.code.name!r} needs {post_bytes} B of shared memory "
                             f"a frame, this device allows {lim.shared_per_block_optin} B; use 'device' or 'auto'")
        self.posteriors = "shared" if posteriors == "shared" or (posteriors == "auto" and fits) else "device"

        def load():
            self.circulant = circulant_rows(lay, dec.precision, self.posteriors, dec.schedule)
            self.name = kernel_name(lay, dec.precision, self.posteriors, dec.schedule, llr_code)
            self.func = ctx.function(MODULE, self.name)
            self.attributes = ctx.kernel_attributes(self.func)
            return min(self.attributes.max_threads, lim.max_threads_per_block, -(-lay.max_layer_rows // WARP) * WARP)

        threads = load()
        if posteriors == "auto" and self.posteriors == "shared":
            by_shared = lim.shared_per_sm // (post_bytes + self.attributes.static_shared + lim.shared_reserved)
            if by_shared * threads < MIN_SHARED_WARPS * WARP:
                self.posteriors = "device"
                threads = load()
        circ = lay.circulants if self.circulant else None
        shared = 0 if self.posteriors != "shared" else (
            post_bytes if circ is None else 4 * ((lay.n + 2) & ~1) + circ.slots.nbytes)   # the slots after the pad
        self.func.prepare(_ARG_TYPES)
        self.shape = LaunchShape(2 if pairs else 1, threads, shared,
                                 blocks_per_sm(lim, self.attributes, threads, shared), lim.sm_count)
        self._launch = PackedLaunch(self.func, threads, shared)
        self.frames_per_wave = self.shape.frames_per_wave
        records = -(-record_bytes(lay, dec.precision) * lay.m // 16) * 16
        self.scratch_block = records + (0 if shared else -(-post_bytes // 16) * 16)
        self.cols_t, self.layer_start, self.col_ptr, self.col_edges = (   # lighter rows padded with the pad word
            drv.to_device(a) for a in (np.where(lay.cols_t < 0, words, lay.cols_t).astype(np.int32), lay.layer_start,
                                       lay.col_ptr, lay.col_edges))
        self.kcol = drv.to_device(lay.kcol) if lay.kcol is not None else np.intp(0)
        self.circ, self.extra, self.z = ((drv.to_device(circ.slots), drv.to_device(circ.extra), circ.z)
                                         if circ is not None else (np.intp(0), np.intp(0), 1))
        self.bits_width = packed_bits.width(lay.n) if dec.packed else lay.n
        self.soft_width = lay.n if dec.soft_output else 0       # posteriors a frame (engine)
        self.default_streams = 1 if dec.preset == "latency" else 4
        self.mapped_input = self.mapped_output = False

    def resident(self, slot):
        return None

    def default_chunk(self, streams, free_bytes) -> int:
        """One wave (latency) or two (throughput) a stream launch."""
        return self.frames_per_wave * (1 if self.dec.preset == "latency" else 2)

    def frame_bytes(self, kind) -> int:
        return self.dec.layout.n * np.dtype(self.dec.llr_np_dtype).itemsize

    def scratch_bytes(self, frames) -> int:
        return self.shape.grid_blocks(frames) * self.scratch_block

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        d, lay = self.dec, self.dec.layout
        self._launch(
            stream, (self.shape.grid_blocks(count), 1),
            dev_in, d.llr_scale, out[0], int(d.packed), out[1], out[2], self.cols_t, lay.cols_t.shape[0],
            self.layer_start, self.col_ptr, self.col_edges, self.kcol, self.circ, self.extra, self.z, scratch,
            self.scratch_block, lay.n, lay.m, lay.layers, count, d.max_iterations, int(d.early_stop),
            _RULES[d.algorithm], d.alpha, d.beta, out[3])

"""One GF(q) frame over many multiprocessors: the low-latency Min-Max flooding kernel.

``kernels/nb_frame.cu`` (module docstring there) decodes a frame as a dataflow of
(iteration, check row) tasks, one warp per task, taken in ticket order by every warp of the
frame's blocks: paper 003's Min-Max flooding (Algorithm 1, forward-backward check update of
Algorithm 2), bit-exact with :mod:`gpuldpc.decoders.reference_nb`.  This module builds its
tables and launches it; the stream engine owns buffers and copies::

    k = NbFrameKernel(ctx, nb_layout(code), "minmax", "flooding", max_iterations=10, early_stop=True)
    scratch = drv.mem_alloc(k.scratch_bytes(frames))
    k.launch(stream, frames, dev_in, in_is_bits, dev_sym, dev_iters, dev_valid, scratch)

or kept running between calls, one frame of bit LLRs in mapped host memory a request
(``nb_frame_resident_q<q>``, :meth:`NbFrameKernel.resident`, :mod:`.resident`)::

    rk = k.resident(out)            # out: device addresses of symbols, iterations, flags
    rk.post(1, mapped_address_of_bit_llrs); rk.wait()
"""
from __future__ import annotations

import numpy as np

from .driver import PackedLaunch, allow_shared, driver
from .resident import ResidentKernel
from .nb_layout import FIELD_SIZES, NbLayout, table_bytes
from .tuning import blocks_per_sm

WARPS = 4                    # warps per block (kWarps in nb_frame.cu)
THREADS = 32 * WARPS
MAX_DEGREE = 32              # a row's decisions and check fit one warp (symrow[32])
SYMBOL_PAD = 16              # decisions per iteration padded to 16 bytes (uint4 copy-out)
# argument types of nb_frame_q<q> (a prepared call: the arguments are packed by this format
# instead of being inspected one by one at every launch; tests/gpu/test_kernel_signatures.py)
ARG_TYPES = "PiPPPPqiqiiPPPPPPPiiiiiii"
# nb_frame_resident_q<q>: the request block, broadcast, launch id and limits (resident.py), then the
# same arguments with the resident's device copy of the input and its float count for (in, in_bits)
RESIDENT_ARG_TYPES = "PPIQQ" + ARG_TYPES


def _round(x: int, to: int) -> int:
    return -(-x // to) * to


def _column_rows(layout: NbLayout) -> list[np.ndarray]:
    """Check rows of each column (from the CSR tables)."""
    rows_of_edge = np.repeat(np.arange(layout.m), np.diff(layout.row_ptr))
    return [rows_of_edge[layout.vn_edge[layout.vn_ptr[v]:layout.vn_ptr[v + 1]]] for v in range(layout.n)]


def frame_tables(layout: NbLayout) -> dict:
    """Task tables of nb_frame.cu for ``layout`` (tasks are its non-empty rows, ``flood_rows``).

    * ``task_row`` int4 [M]: first CSR edge, degree, start and length of the row's stage list;
    * ``stage_edge`` [sum]: for each edge of the row in CSR order, the edges of its column in
      increasing row order (the order of the sums ``T = Lch + R_1 + R_2 + ...``);
    * ``edge_meta`` int4 [E]: column, log h, offset of the column's edges in the row's stage
      list, and count | (position of the edge itself among them) << 16;
    * ``nbr_ptr`` [M+1], ``nbr_row``: task rows sharing a column with each task row, itself
      included (a task of iteration it waits for these at it-1).
    """
    rows = layout.flood_rows
    task_of_row = np.full(layout.m, -1, np.int64)
    task_of_row[rows] = np.arange(rows.size)
    col_rows = _column_rows(layout)
    task_row = np.zeros((rows.size, 4), np.int32)
    edge_meta = np.zeros((layout.edges, 4), np.int32)
    stage, nbr, nbr_ptr = [], [], [0]
    for k, r in enumerate(rows):
        rb, re = int(layout.row_ptr[r]), int(layout.row_ptr[r + 1])
        start, offset, near = len(stage), 0, set()
        for e in range(rb, re):
            v = int(layout.edge_col[e])
            col_edges = layout.vn_edge[layout.vn_ptr[v]:layout.vn_ptr[v + 1]]
            own = int(np.flatnonzero(col_edges == e)[0])
            edge_meta[e] = (v, layout.log[layout.edge_h[e]], offset, col_edges.size | (own << 16))
            stage.extend(int(x) for x in col_edges)
            offset += col_edges.size
            near.update(int(task_of_row[x]) for x in col_rows[v])
        task_row[k] = (rb, re - rb, start, offset)
        nbr.extend(sorted(near))
        nbr_ptr.append(len(nbr))
    return dict(task_row=task_row, edge_meta=edge_meta, stage_edge=np.asarray(stage, np.int32),
                nbr_ptr=np.asarray(nbr_ptr, np.int32), nbr_row=np.asarray(nbr, np.int32),
                stage_max=int(task_row[:, 3].max()))


def shared_bytes(q: int, max_degree: int, stage_max: int) -> int:
    """Dynamic shared bytes of a block: field tables, then per warp the row's edges (32 int4) and
    decisions (32 ints), the staged R of its columns, the channel LLRs of its variables, Qh, F, B
    and two merge outputs."""
    return table_bytes(q) + WARPS * (640 + 4 * q * (stage_max + 4 * max_degree - 2))


class NbFrameKernel:
    """Latency kernel for GF(q) Min-Max flooding: one frame spread over many multiprocessors.

    Design (kernels/nb_frame.cu): paper 003's flooding Min-Max (Algorithm 1) with its
    forward-backward check update (Algorithm 2, section IV-E) as one task per (iteration,
    check row), one warp per task; a task recomputes the posteriors of its row's variables
    from the previous iteration's R (so no variable-node phase and no barrier), waits only for
    the rows sharing a variable with it (flags in device memory, acquire/release), and the
    warps of all the frame's blocks take tasks in ticket order, which keeps the schedule
    deadlock-free for any residency.  The syndrome of iteration it-1 is counted by the tasks
    of iteration it; the frame's last warp writes symbols, iterations and flags.  Symbols,
    iteration counts and flags equal the reference Min-Max flooding decoder's
    (:mod:`gpuldpc.decoders.reference_nb`), early stop included.

    ``warps_per_frame`` (optional): warps working on one frame; default 1.5 per check row (the
    fastest of 1, 1.5, 2 and 4 on the H200 for the (620,310) code), capped by what the launch
    keeps resident.
    """

    @staticmethod
    def supports(layout: NbLayout, algorithm: str, schedule: str, limits) -> bool:
        """Min-Max ("minmax"/"mmma") flooding over GF(q), q = 4..256, check degrees 2..32,
        every column in some check, and a block's shared memory within the device's opt-in limit."""
        if algorithm not in ("minmax", "mmma") or schedule != "flooding" or layout.q not in FIELD_SIZES:
            return False
        if not 2 <= layout.max_degree <= MAX_DEGREE or np.diff(layout.vn_ptr).min() < 1:
            return False
        stage_max = int(max(np.diff(layout.vn_ptr)[layout.edge_col[layout.row_ptr[r]:layout.row_ptr[r + 1]]].sum()
                            for r in layout.flood_rows))
        return shared_bytes(layout.q, layout.max_degree, stage_max) <= limits.shared_per_block_optin

    def __init__(self, ctx, layout: NbLayout, algorithm: str, schedule: str, max_iterations: int,
                 early_stop: bool, warps_per_frame: int | None = None):
        if not self.supports(layout, algorithm, schedule, ctx.limits):
            raise ValueError(f"NbFrameKernel: GF({layout.q}) code with check degree {layout.max_degree}, "
                             f"{algorithm}/{schedule}: not supported (Min-Max flooding, q in {FIELD_SIZES}, "
                             f"check degree 2..{MAX_DEGREE}); use the nb_minmax kernel")
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
                or max_iterations < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        drv = driver()
        self.ctx, self.layout = ctx, layout
        self.max_iterations, self.early_stop = int(max_iterations), bool(early_stop)
        tables = frame_tables(layout)
        self.tasks = int(layout.flood_rows.size)
        self.stage_max = tables.pop("stage_max")
        self.shared = shared_bytes(layout.q, layout.max_degree, self.stage_max)
        n, q = layout.n, layout.q
        self.sym_stride = _round(n, SYMBOL_PAD)
        self.sym_offset = _round(4 * (3 + self.max_iterations + 2 + self.tasks), 256)
        self.r_offset = self.sym_offset + _round((self.max_iterations + 1) * self.sym_stride, 256)
        self.frame_bytes = _round(self.r_offset + 2 * layout.edges * q * 4, 256)
        with ctx.active():
            self._func = ctx.function("nb_frame", f"nb_frame_q{q}")
            self._func.prepare(ARG_TYPES)
            self._launch = PackedLaunch(self._func, THREADS, self.shared)
            self.kernel_attributes = ctx.kernel_attributes(self._func)
            self._tables = {name: drv.to_device(np.ascontiguousarray(a)) for name, a in tables.items()}
            self._tables["exp"] = drv.to_device(np.ascontiguousarray(layout.exp))
            self._tables["log"] = drv.to_device(np.ascontiguousarray(layout.log))
        self.resident_blocks = ctx.limits.sm_count * max(
            1, blocks_per_sm(ctx.limits, self.kernel_attributes, THREADS, self.shared))
        self.warps_per_frame = int(warps_per_frame) if warps_per_frame else (3 * self.tasks + 1) // 2
        self.frames_per_launch_hint = max(1, (4 * ctx.limits.sm_count) // self.tasks)
        self._scratch_frames = {}        # scratch address -> frames of its last launch

    def blocks_per_frame(self, frames: int, resident_blocks: int | None = None) -> int:
        """Blocks given to each frame of a launch of ``frames`` frames (at most ``resident_blocks``
        in all, default what the launched kernel keeps resident)."""
        wanted = -(-self.warps_per_frame // WARPS)
        return max(1, min(wanted, (resident_blocks or self.resident_blocks) // frames))

    def resident(self, out) -> ResidentKernel:
        """The kernel kept running between calls (:mod:`.resident`): one frame of bit LLRs a
        request, copied by block 0 from mapped host memory (16-byte aligned) into the kernel's
        own device buffer before the other blocks start; symbols, iterations and flags written
        to ``out`` (device addresses: the slot's mapped result buffer).  Its grid is the blocks of
        one frame (:meth:`blocks_per_frame`, by the resident entry point's own occupancy)."""
        drv = driver()
        lay, t, ctx = self.layout, self._tables, self.ctx
        in_floats = lay.n * lay.bits_per_symbol
        with ctx.active():
            func = ctx.function("nb_frame", f"nb_frame_resident_q{lay.q}")
            allow_shared(func, self.shared)
            func.prepare(RESIDENT_ARG_TYPES)
            per_sm = blocks_per_sm(ctx.limits, ctx.kernel_attributes(func), THREADS, self.shared)
            blocks = self.blocks_per_frame(1, ctx.limits.sm_count * max(1, per_sm))
            in_dev = drv.mem_alloc(4 * in_floats)
            scratch = drv.mem_alloc(self.frame_bytes)
            drv.memset_d32(scratch, 0, self.frame_bytes // 4)       # control words zero before the first request
        tail = (in_dev, in_floats, *out[:3], scratch, self.frame_bytes, self.sym_offset, self.r_offset,
                self.sym_stride, blocks, t["exp"], t["log"], t["task_row"], t["edge_meta"], t["stage_edge"],
                t["nbr_ptr"], t["nbr_row"], lay.n, self.tasks, lay.edges, lay.max_degree, self.stage_max,
                self.max_iterations, int(self.early_stop))
        return ResidentKernel(ctx, func, THREADS, self.shared, 1, tail, blocks=blocks, kind="bits", align=16,
                              buffers=(in_dev, scratch))

    def scratch_bytes(self, frames: int) -> int:
        """Device scratch of a launch of ``frames`` frames: control words, decisions, R [2][E][q]."""
        return frames * self.frame_bytes

    def launch(self, stream, frames: int, dev_in, in_is_bits: bool, dev_sym, dev_iters, dev_valid, scratch):
        """Decode ``frames`` frames asynchronously on ``stream``.

        ``dev_in``: float32 [frames, n*q] symbol LLRs or [frames, n*m] bit LLRs (``in_is_bits``);
        outputs uint8 [frames, n] symbols, int32 [frames] iterations, uint8 [frames] flags; every
        pointer a device address (int) or a PyCUDA allocation.
        ``scratch``: ``scratch_bytes(frames)`` bytes, owned by this object between launches: it is
        zeroed here (on ``stream``) when an address is first seen or serves more frames than in
        its previous launch, and every launch leaves the control words of its frames zero.
        """
        drv = driver()
        lay, t = self.layout, self._tables
        address = int(scratch)
        if frames > self._scratch_frames.get(address, 0):
            drv.memset_d32_async(address, 0, self.scratch_bytes(frames) // 4, stream)
        self._scratch_frames[address] = frames
        per_frame = self.blocks_per_frame(frames)
        self._launch(
            stream, (frames * per_frame, 1),
            dev_in, int(bool(in_is_bits)), dev_sym, dev_iters, dev_valid, scratch, self.frame_bytes,
            self.sym_offset, self.r_offset, self.sym_stride, per_frame, t["exp"], t["log"], t["task_row"],
            t["edge_meta"], t["stage_edge"], t["nbr_ptr"], t["nbr_row"], lay.n, self.tasks, lay.edges,
            lay.max_degree, self.stage_max, self.max_iterations, int(self.early_stop))

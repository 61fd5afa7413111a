"""GF(q) code -> the tables of the GF(q) kernels (kernels/nb_*.cu) and their launch shape.

Edges are the nonzeros of ``code.H`` in CSR order (row by row, columns increasing),
the numbering of :class:`gpuldpc.codes.tanner.TannerGraph`, so message
``R[e]`` of the kernels is the reference's ``r[:, e]``:

* ``row_ptr`` [m+1], ``edge_col`` [E], ``edge_h`` [E] (GF element of the edge);
* ``vn_ptr`` [n+1], ``vn_edge`` [E]: each variable's edges in increasing check row
  (the order of the flooding sums ``T = Lch + R_1 + R_2 + ...``); ``edge_other``
  [E, dvmax-1]: the other edges of each edge's column, in that order, -1 padded
  (FFT-SPA's variable-node products);
* ``layer_ptr``, ``layer_rows``: the layered schedule of the reference (one layer per
  base-matrix row of ``z = q-1`` checks for QC codes, else runs of consecutive rows
  with disjoint supports); ``flood_ptr``, ``flood_rows``: every non-empty row, one group;
* ``exp`` [2(q-1)] and ``log`` [q] of :class:`gpuldpc.gf.GaloisField`, loaded into
  shared memory by every block.

:func:`launch_shape` sizes a block from the device's limits (``DeviceLimits``) and
the kernel's registers (paper 001 section IV-D, as :mod:`gpuldpc.cuda.tuning` does for
the binary kernels): the number of check rows a block works on at once (Min-Max
*workers* of ``2 min(q/4, 32)`` threads, trellis Min-Max's of four parts up to GF(32),
FFT-SPA *groups* of ``min(q, 32)`` lanes: :func:`unit_threads`)
that keeps the most rows in flight per multiprocessor, discounted for the idle
workers of a layer's last round.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codes.tanner import TannerGraph
from ..gf import GF
from .tuning import blocks_per_sm

FIELD_SIZES = (4, 8, 16, 32, 64, 128, 256)
MAX_THREADS = 512            # kernels' __launch_bounds__ (kMaxThreads in nb_minmax.cu, nb_fftspa.cu)
MAX_NAMED_BARRIERS = 15      # Min-Max workers of 64 threads synchronize by named barriers 1..15
BARRIER_WAIT = 0.15          # share of a lone block's time at its barriers (launch_shape)
MAX_FRAMES_PER_SM = 8        # resident blocks (frames) a multiprocessor beyond which shapes lose (launch_shape)
L2_MISS = 0.05               # share of a shape's rows lost when the resident frames' posteriors overflow ..
L2_SHARE = 0.75              # .. this share of the L2 (launch_shape)


@dataclass(frozen=True)
class NbLayout:
    """Index tables of one GF(q) code for kernels/nb_minmax.cu and nb_fftspa.cu."""

    q: int
    n: int
    m: int
    edges: int
    max_degree: int
    max_column_weight: int
    row_ptr: np.ndarray
    edge_col: np.ndarray
    edge_h: np.ndarray
    vn_ptr: np.ndarray
    vn_edge: np.ndarray
    edge_other: np.ndarray
    layer_ptr: np.ndarray
    layer_rows: np.ndarray
    flood_ptr: np.ndarray
    flood_rows: np.ndarray
    exp: np.ndarray
    log: np.ndarray

    @property
    def bits_per_symbol(self) -> int:
        return self.q.bit_length() - 1

    @property
    def largest_layer(self) -> int:
        return int(np.diff(self.layer_ptr).max())


def _groups(row_sets) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.concatenate([[0], np.cumsum([len(r) for r in row_sets])]).astype(np.int32)
    return ptr, np.concatenate(row_sets).astype(np.int32)


def nb_layout(code) -> NbLayout:
    """The kernel tables of a GF(q) ``code`` (q = 4 .. 256); ValueError for other codes."""
    if code.is_binary:
        raise ValueError(f"code {code.name!r} is binary; the GF(q) kernels need q in {FIELD_SIZES}")
    if code.q not in FIELD_SIZES:
        raise ValueError(f"code {code.name!r}: GF({code.q}) is not supported; q must be one of "
                         f"{FIELD_SIZES}")
    graph = TannerGraph(code)          # raises for degree-1 checks
    H = code.H
    degrees = np.diff(H.indptr)
    order = np.lexsort((graph.edge_row, graph.edge_col))          # by column, then row
    weights = np.bincount(graph.edge_col, minlength=code.n)
    vn_ptr = np.concatenate([[0], np.cumsum(weights)])
    dv = max(int(weights.max()), 1)
    table = graph.vn_edges                                         # [n, dv], padded with E
    edge_other = np.full((graph.num_edges, max(dv - 1, 1)), -1, dtype=np.int32)
    for slot in range(table.shape[1]):
        others = np.delete(table, slot, axis=1)
        real = table[:, slot] < graph.num_edges
        edge_other[table[real, slot], :others.shape[1]] = np.where(others[real] < graph.num_edges,
                                                                    others[real], -1)
    layer_ptr, layer_rows = _groups([np.concatenate([b.rows for b in layer]) for layer in graph.layers])
    flood_ptr, flood_rows = _groups([np.flatnonzero(degrees > 0)])
    field = GF(code.q)
    return NbLayout(
        q=code.q, n=code.n, m=code.m, edges=graph.num_edges, max_degree=int(degrees.max()),
        max_column_weight=dv,
        row_ptr=H.indptr.astype(np.int32), edge_col=H.indices.astype(np.int32),
        edge_h=H.data.astype(np.uint8), vn_ptr=vn_ptr.astype(np.int32), vn_edge=order.astype(np.int32),
        edge_other=edge_other,
        layer_ptr=layer_ptr, layer_rows=layer_rows, flood_ptr=flood_ptr, flood_rows=flood_rows,
        exp=np.ascontiguousarray(field.exp, dtype=np.uint8),
        log=np.ascontiguousarray(np.where(np.arange(code.q) == 0, 0, field.log), dtype=np.int16))


def table_bytes(q: int) -> int:
    """Shared bytes of the field tables (nb_common.cuh ``table_bytes``)."""
    return (2 * (q - 1) + 2 * q + 15) & ~15


@dataclass(frozen=True)
class NbShape:
    """One block's shape: ``units`` check rows at once, ``threads``, dynamic ``shared`` bytes,
    and ``blocks_per_sm`` resident blocks (frames) per multiprocessor."""

    units: int
    threads: int
    shared: int
    blocks_per_sm: int


def unit_threads(algorithm: str, q: int) -> int:
    """Threads per check row: a worker of parts of min(q/4, 32) threads -- Min-Max's two halves,
    trellis Min-Max's four parts up to GF(32) and two above (nb_minmax.cu ``TrellisParts``) --
    or an FFT-SPA group (min(q, 32))."""
    if algorithm == "fft-spa":
        return min(q, 32)
    return (4 if algorithm.startswith("tmm") and q <= 32 else 2) * min(q // 4, 32)


def unit_floats(algorithm: str, layout: NbLayout) -> int:
    """Shared 4-byte words per unit (nb_minmax.cu / nb_fftspa.cu ``check_row``).

    Min-Max: the row's edges (column, log h; an even count of pairs), Qh, F, B and two merge
    buffers.  T-MM ("tmm"): the row's edges, a word an edge for z_i, z_i / h_i and log h_i (a
    multiple of 4), Q (unpermuted), the trellis rows twice (q int2: first minimum, its column; q
    int4: first and second minima, columns) and four planes of outputs (alpha E,
    alpha A_c1, alpha A_c2, paths).  "tmm1" (step 5's pairs from first minima): the same
    without the int4 rows.
    FFT-SPA: the row's edges (column, log h, the other edges of the column), d transforms and
    a permutation buffer.
    """
    d, q = layout.max_degree, layout.q
    if algorithm.startswith("tmm"):
        return 2 * ((d + 1) & ~1) + ((d + 3) & ~3) + (d + (10 if algorithm == "tmm" else 6)) * q
    if algorithm != "fft-spa":
        return 2 * ((d + 1) & ~1) + (3 * d - 2) * q
    return ((d * (1 + layout.max_column_weight) + 3) & ~3) + (d + 1) * q


def launch_shape(algorithm: str, layout: NbLayout, limits, kern, rows_at_once: int,
                 units: int | None = None, preset: str = "throughput") -> NbShape:
    """The block shape keeping the most check rows busy per multiprocessor: the first of
    :func:`ranked_shapes`."""
    return ranked_shapes(algorithm, layout, limits, kern, rows_at_once, units, preset)[0]


def ranked_shapes(algorithm: str, layout: NbLayout, limits, kern, rows_at_once: int,
                  units: int | None = None, preset: str = "throughput") -> list[NbShape]:
    """The admissible block shapes, the model's best first (its score below); with ``units``
    or ``preset="latency"`` the one shape asked for.

    ``limits``/``kern``: :class:`~.tuning.DeviceLimits` and the kernel's
    :class:`~.tuning.KernelAttributes`; ``rows_at_once``: rows that may run in parallel
    (the largest layer, or every row for flooding); ``units`` forces a count;
    ``preset="latency"`` takes the most rows one block can hold (one frame finishes
    soonest), ``"throughput"`` the most rows per multiprocessor.

    Throughput score of ``count`` rows a block, ``blocks`` blocks a multiprocessor and
    ``rounds = ceil(rows_at_once / count)``: the rows busy, ``blocks rows_at_once / rounds``,
    times ``1 - BARRIER_WAIT ** blocks``, the chance that some block is not waiting at a
    barrier (a block waits for its slowest row at every ``__syncthreads``; measured on the
    H200, T-MM gf32-837-726 kernel only: one block of 31 rows 426 Mb/s, 2 x 16 rows 478,
    4 x 8 rows 496, 8 x 4 rows 497), and times ``1 - L2_MISS`` where the posteriors of the
    resident frames (``sm_count x blocks`` frames of ``4 n q`` bytes) fill more than ``L2_SHARE``
    of the device's L2: the layers reread every posterior column a quarter iteration or so later,
    which then comes from DRAM; the rest of the L2 holds R on its way (streamed, evict first), the
    copies' buffers and the tables.  Both constants are measured (H200, 60 MiB of L2; tmm1, kernel
    only, bench/results/h200-nb-shapes.txt): gf32-837-726 2 x 16 rows (28 MB of posteriors) 815
    Mb/s against 777 for 4 x 8 rows (57 MB, 90 % of the L2), through ``gl.Decoder`` 834 against
    787; gf32-620-310 (rows of 6 edges) 4 x 8 rows (42 MB, 67 %) 334 against 323 for 2 x 16 and
    335 for 8 x 4 (84 MB): the loss depends on the code's rows, 5 % lies between.  Shapes within
    1 % of the best score count as equal and the one with the fewest frames in flight (the most
    rows a block) comes first.  Shapes of more than
    ``MAX_FRAMES_PER_SM`` resident frames a multiprocessor count only where no other shape fits: T-MM
    gf32-837-726 with a warp a row and 64 registers scores 32 one-row blocks highest (every block
    busy in every round), and ran 537 Mb/s through the call against 599 / 609 / 607 for 2 / 4 / 8
    rows a block (16 / 8 / 4 blocks; H200, bench/results/h200-nb-tmm-warp-rows-ab.txt); the GF(64)
    trellis kernels (122-124 registers, 16 warps an SM) ran 16 one-row blocks 5 % slower than 4 x 4
    rows (gf64-1260-630 tmm1 138 against 146 Mb/s, gf64-1512-1325 T-MM 412 against 433).
    """
    if preset not in ("throughput", "latency"):
        raise ValueError(f"preset={preset!r} is not one of 'throughput', 'latency'")
    per_unit = unit_threads(algorithm, layout.q)
    posterior_bytes = 4 * layout.n * layout.q          # a frame's posteriors (float32 [n][q])
    fixed = table_bytes(layout.q) + ((layout.n + 15) & ~15)
    unit_bytes = 4 * unit_floats(algorithm, layout)
    most = min(MAX_THREADS, limits.max_threads_per_block) // per_unit
    if algorithm != "fft-spa" and per_unit > 32:
        most = min(most, MAX_NAMED_BARRIERS)
    most = max(1, min(most, rows_at_once, (limits.shared_per_block_optin - fixed) // unit_bytes))
    if fixed + unit_bytes > limits.shared_per_block_optin:
        raise ValueError(f"GF({layout.q}) code with check degree {layout.max_degree}: one check row "
                         f"needs {fixed + unit_bytes} bytes of shared memory, the device offers "
                         f"{limits.shared_per_block_optin}")
    if units is not None and not (isinstance(units, (int, np.integer)) and 1 <= units <= most):
        raise ValueError(f"units={units!r}: a block of this kernel takes 1..{most} check rows at once "
                         f"({per_unit} threads and {unit_bytes} B of shared memory each)")
    scored, crowded = [], []
    for count in ([units] if units else [most] if preset == "latency" else range(1, most + 1)):
        threads = count * per_unit
        shared = fixed + count * unit_bytes
        blocks = blocks_per_sm(limits, kern, -(-threads // 32) * 32, shared)
        rounds = -(-rows_at_once // count)
        if blocks >= 1:
            score = blocks * rows_at_once / rounds * (1.0 - BARRIER_WAIT ** blocks)
            if limits.l2_bytes and limits.sm_count * blocks * posterior_bytes > L2_SHARE * limits.l2_bytes:
                score *= 1.0 - L2_MISS
            shape = NbShape(count, threads, shared, blocks)
            (scored if blocks <= MAX_FRAMES_PER_SM else crowded).append((score, shape))
    scored = scored or crowded
    top = max(score for score, _ in scored)
    tied = sorted((shape for score, shape in scored if score >= 0.99 * top), key=lambda shape: -shape.units)
    rest = [shape for score, shape in sorted(scored, key=lambda s: -s[0]) if score < 0.99 * top]
    return tied + rest

"""The Tanner graph of a code as index tables for vectorized message passing.

Edges are the nonzeros of ``code.H`` in CSR order (row by row, columns
increasing): edge ``e`` joins check ``edge_row[e]`` and variable
``edge_col[e]`` with coefficient ``edge_value[e]`` (1, or a GF(q) element).
Message arrays carry one extra edge ``E`` (= number of edges) that always
holds 0; padded slots of the variable-node table point at it.

Check rows are processed in *blocks*: rows of one degree ``d`` whose supports
are pairwise disjoint, as index arrays ``edges[r, d]`` and ``cols[r, d]``.
Because the rows of a block touch disjoint variables, updating them together
gives exactly the same numbers as updating them one after another.

The reference decoders (:mod:`gpuldpc.decoders.reference_graph`) iterate over these
tables; the GPU layouts (:mod:`gpuldpc.cuda.sparse_layout`, :mod:`gpuldpc.cuda.nb_layout`)
number their edges and layers by them, so their messages line up with the reference's.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class CheckBlock(NamedTuple):
    """Rows of equal degree with disjoint supports: edge and column ids [rows, degree]."""

    rows: np.ndarray
    edges: np.ndarray
    cols: np.ndarray


class TannerGraph:
    """Index tables of ``code.H`` for vectorized message passing.

    Attributes
    ----------
    n, m, num_edges : int
    edge_row, edge_col, edge_value : int arrays [E]
    layers : list of list of CheckBlock
        The layered schedule, in order: for QC codes (``code.base`` and
        ``code.z`` set, every block row with disjoint rows) one layer per base
        row (its ``z`` checks); otherwise maximal runs of consecutive check rows
        with pairwise disjoint supports.  Both are the same computation as
        updating check rows one at a time in increasing row order.
    all_checks : list of CheckBlock
        Every nonempty row, grouped by degree (flooding schedule).
    vn_edges : int array [n, dv_max]
        Edges of each variable in increasing check-row order, padded with
        ``E`` (the always-zero message).
    """

    def __init__(self, code):
        H = code.H
        self.n, self.m = code.n, code.m
        self.num_edges = int(H.nnz)
        indptr = H.indptr.astype(np.int64)
        degrees = np.diff(indptr)
        if np.any(degrees == 1):
            row = int(np.flatnonzero(degrees == 1)[0])
            raise ValueError(f"code {code.name!r}: check row {row} has a single nonzero; a degree-1 "
                             "check fixes its variable and is not supported by the message-passing "
                             "decoders (remove the row and the variable it fixes)")
        self.edge_row = np.repeat(np.arange(self.m), degrees)
        self.edge_col = H.indices.astype(np.int64)
        self.edge_value = H.data.astype(np.int64)
        self._indptr = indptr
        self._nonempty_starts = indptr[:-1][degrees > 0]
        self._nonempty_rows = np.flatnonzero(degrees > 0)
        self.all_checks = self._blocks(np.arange(self.m))
        self.layers = [self._blocks(rows) for rows in self._layer_rows(code)]
        self.vn_edges = self._variable_table()

    def _row_edges(self, row):
        return np.arange(self._indptr[row], self._indptr[row + 1])

    def _blocks(self, rows) -> list[CheckBlock]:
        """Group ``rows`` by degree (ascending) into CheckBlocks; empty rows are dropped."""
        rows = np.asarray(rows)
        degrees = self._indptr[rows + 1] - self._indptr[rows]
        blocks = []
        for d in np.unique(degrees[degrees > 0]):
            sel = rows[degrees == d]
            edges = self._indptr[sel][:, None] + np.arange(d)[None, :]
            blocks.append(CheckBlock(sel, edges, self.edge_col[edges]))
        return blocks

    def _disjoint(self, rows) -> bool:
        cols = self.edge_col[np.concatenate([self._row_edges(r) for r in rows])]
        return np.unique(cols).size == cols.size

    def _layer_rows(self, code) -> list[np.ndarray]:
        z = code.z
        if code.base is not None and z and self.m % z == 0:
            layers = [np.arange(i, i + z) for i in range(0, self.m, z)]
            if all(self._disjoint(rows) for rows in layers):
                return layers
        layers, current, used = [], [], set()
        for row in range(self.m):
            cols = set(self.edge_col[self._row_edges(row)].tolist())
            if current and used & cols:
                layers.append(np.array(current))
                current, used = [], set()
            current.append(row)
            used |= cols
        layers.append(np.array(current))
        return layers

    def _variable_table(self) -> np.ndarray:
        order = np.lexsort((self.edge_row, self.edge_col))        # by column, then row
        cols = self.edge_col[order]
        counts = np.bincount(cols, minlength=self.n)
        table = np.full((self.n, max(int(counts.max(initial=0)), 1)), self.num_edges, dtype=np.int64)
        slot = np.arange(order.size) - np.repeat(np.cumsum(counts) - counts, counts)
        table[cols, slot] = order
        return table

    def row_xor(self, values) -> np.ndarray:
        """XOR of ``values[:, e]`` (int array [batch, E]) over each check row -> [batch, m]."""
        out = np.zeros((values.shape[0], self.m), dtype=values.dtype)
        if self._nonempty_starts.size:
            out[:, self._nonempty_rows] = np.bitwise_xor.reduceat(values, self._nonempty_starts, axis=1)
        return out

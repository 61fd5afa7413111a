"""Tanner graph, schedules and iteration driver shared by the reference decoders.

Edges are the nonzeros of ``code.H`` in CSR order (row by row, columns
increasing): edge ``e`` joins check ``edge_row[e]`` and variable
``edge_col[e]`` with coefficient ``edge_value[e]`` (1, or a GF(q) element).
Message arrays carry one extra edge ``E`` (= number of edges) that always
holds 0; padded slots of the variable-node table point at it.

Check rows are processed in *blocks*: rows of one degree ``d`` whose supports
are pairwise disjoint, as index arrays ``edges[r, d]`` and ``cols[r, d]``.
Because the rows of a block touch disjoint variables, updating them together
gives exactly the same numbers as updating them one after another.

:class:`ScheduledDecoder` runs the layered and flooding schedules of
:mod:`gpuldpc.decoders.reference` for any check rule; the binary and GF(q)
decoders supply the rule, the decisions and the syndrome.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .. import bad_llr
from ..result import make_result


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


def run_iterations(state: dict, iteration: Callable[[dict], dict], decisions: Callable[[dict], np.ndarray],
                   satisfied: Callable[[np.ndarray], np.ndarray], max_iterations: int,
                   early_stop: bool, posterior: Callable[[dict], np.ndarray] | None = None):
    """Iterate a batch of frames; return ``(bits, iterations, valid, soft)``.

    ``state`` maps names to arrays whose axis 0 is the frame; ``iteration``
    runs one full iteration and returns the new state; ``decisions`` gives the
    hard decisions [batch, n] of a state; ``satisfied`` says per frame whether
    decisions have a zero syndrome; ``posterior`` (optional) gives the soft output
    of a state (``soft`` is None without it).  With ``early_stop``, after each
    iteration the frames whose decisions satisfy every check leave the batch with
    those decisions (and posteriors) and that iteration number (frames are
    independent, so the others' numbers do not change); frames that never do keep
    those of the last iteration and report ``max_iterations``.
    """
    batch = next(iter(state.values())).shape[0]
    iterations = np.full(batch, max_iterations, dtype=np.int32)
    if not early_stop:
        for _ in range(max_iterations):
            state = iteration(state)
        bits = decisions(state)
        return bits, iterations, satisfied(bits), None if posterior is None else posterior(state)
    bits = soft = None
    active = np.arange(batch)
    for it in range(1, max_iterations + 1):
        state = iteration(state)
        hard = decisions(state)
        if bits is None:
            bits = np.empty((batch,) + hard.shape[1:], dtype=hard.dtype)
        ok = satisfied(hard)
        done = ok | (it == max_iterations)
        bits[active[done]] = hard[done]
        if posterior is not None and done.any():
            post = posterior(state)
            if soft is None:
                soft = np.empty((batch,) + post.shape[1:], dtype=post.dtype)
            soft[active[done]] = post[done]
        iterations[active[ok]] = it
        if done.all():
            break
        if done.any():
            keep = ~done
            active = active[keep]
            state = {name: value[keep] for name, value in state.items()}
    return bits, iterations, satisfied(bits), soft


class ScheduledDecoder:
    """Layered / flooding message passing; subclasses define the check rule.

    Messages are float32 arrays with the frame on axis 0: posteriors
    ``[batch, n, ...]``, check-to-variable messages ``[batch, E + 1, ...]``
    (``...`` is empty for binary codes, ``q`` for GF(q) codes).  Per edge:

    * layered, per layer: ``Q = extrinsic(L - R_old)``, ``R_new = rule(Q)``,
      ``L = Q + R_new``;
    * flooding: ``Q = extrinsic(T - R)`` on every edge, ``R = rule(Q)`` for
      every check, then ``T = Lch + R_1 + R_2 + ...`` (increasing check row).

    Subclasses implement ``_extrinsic(q)`` (identity for binary codes),
    ``_check_update(q, block)`` (q: [batch, rows, d, ...]), ``_decisions(post)``
    and ``_satisfied(decisions)``.
    """

    def __init__(self, code, settings):
        self.code = code
        self.settings = settings
        self.graph = TannerGraph(code)

    def _extrinsic(self, q):
        return q

    def _initial_state(self, llr):
        r = np.zeros((llr.shape[0], self.graph.num_edges + 1) + llr.shape[2:], dtype=np.float32)
        state = {"post": llr.copy(), "r": r}
        if self.settings.schedule == "flooding":
            state["channel"] = llr
        return state

    def _layered_iteration(self, state):
        post, r = state["post"], state["r"]
        for layer in self.graph.layers:
            for block in layer:
                q = self._extrinsic(post[:, block.cols] - r[:, block.edges])
                new = self._check_update(q, block)
                r[:, block.edges] = new
                post[:, block.cols] = q + new
        return state

    def _flooding_iteration(self, state):
        g, r = self.graph, state["r"]
        q = state["post"][:, g.edge_col] - r[:, :-1]
        for block in g.all_checks:
            r[:, block.edges] = self._check_update(self._extrinsic(q[:, block.edges]), block)
        total = state["channel"].copy()
        for slot in range(g.vn_edges.shape[1]):
            total += r[:, g.vn_edges[:, slot]]
        state["post"] = total
        return state

    def _iteration(self, state):
        if self.settings.schedule == "flooding":
            return self._flooding_iteration(state)
        return self._layered_iteration(state)

    def posterior(self, llr, iterations: int) -> np.ndarray:
        """Posteriors (float32, the shape of ``llr``) after ``iterations`` iterations, no early stop.

        For comparing another backend value by value with this oracle.
        """
        state = self._initial_state(np.ascontiguousarray(llr, dtype=np.float32))
        for _ in range(iterations):
            state = self._iteration(state)
        return state["post"]

    def _soft(self, post) -> np.ndarray:
        """The soft output of posteriors (:mod:`gpuldpc.soft`): float32 (binary16 converted)."""
        return post.astype(np.float32)

    def decode(self, llr, out=None):
        """Decode validated float32 LLRs (non-finite ones by the rule of :mod:`gpuldpc.bad_llr`);
        see :mod:`gpuldpc.decoders.reference`.  ``settings.soft_output``: ``llr`` of the result
        holds the posteriors at each frame's stop (:meth:`_soft`; in the input's sign)."""
        s = self.settings
        llr, bad = bad_llr.sanitized(llr)
        posterior = None if s.soft_output is None else (lambda st: self._soft(st["post"]))
        bits, iterations, valid, soft = run_iterations(
            self._initial_state(llr), self._iteration, lambda st: self._decisions(st["post"]),
            self._satisfied, s.max_iterations, s.early_stop, posterior)
        return make_result(self.code, bits, iterations, valid, bad, out, soft)

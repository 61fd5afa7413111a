"""Reference GF(q) decoder: Min-Max with the forward-backward check update (and the
trellis Min-Max rule of :mod:`.reference_tmm`, ``algorithm="tmm"``, and ``"tmm1"``, its form with
step 5's pairs from first minima, on the same schedules).

Messages are float32 vectors over the q field elements in the Min-Max
convention (papers 000 and 003): ``Q_{m,n}(a)``, ``R_{m,n}(a)`` and the
posteriors are costs, smaller is more likely; every ``Q`` is normalized so its
smallest entry is 0 (``R`` then has smallest entry 0 as well).  GF arithmetic
is :mod:`gpuldpc.gf` (element integers, addition = XOR).

Check-node update (Savin's Min-Max; paper 003 Algorithm 2, written in the
"multiplied" form of paper 000 §2.3).  For check m with neighbours
``n_0 .. n_{d-1}`` (CSR order, columns increasing) and coefficients ``h_i``:

    Qh_i(a)  = Q_{m,n_i}(h_i^{-1} a)                    (cost of h_i x_i = a)
    F_0 = Qh_0,      F_i(a) = min_{a' + a'' = a} max(F_{i-1}(a'), Qh_i(a''))     i = 1..d-2
    B_{d-1} = Qh_{d-1}, B_i(a) = min_{a' + a'' = a} max(B_{i+1}(a'), Qh_i(a''))  i = d-2..1
    M_0 = B_1,  M_{d-1} = F_{d-2},  M_i(a) = min_{a' + a'' = a} max(F_{i-1}(a'), B_{i+1}(a''))
    R_{m,n_i}(a) = M_i(h_i a)

``M_i(a)`` is the cost of ``sum_{j != i} h_j x_j = a``; the check needs that sum
to equal ``h_i x_i`` (characteristic 2), hence the last line.  Because the
merger uses the already multiplied F and B, it needs no GF multiplication:
that is paper 000's modified Min-Max (MMMA) merger, and the numbers are the
same as paper 003's form.  min and max are exact in floating point, so every
evaluation order gives the same ``R``: "minmax" and "mmma" are the same
function here (they differ in the GPU kernels' cost only) and both run either
schedule.

Variable-node side (float32; ``R`` starts at 0):

* layered (paper 000 Algorithm 1, one layer = one base-matrix row of ``z =
  q-1`` checks): ``Q' = L - R_old``; ``Q = Q' - min_a Q'``; ``R_new`` from
  the update above; ``L = Q + R_new``.  ``L`` starts as the channel LLRs.
* flooding (paper 003 Algorithm 1): ``T = Lch + R_1 + R_2 + ...`` in
  increasing check-row order; ``Q' = T - R``; ``Q = Q' - min_a Q'``; all
  checks update; ``T`` is summed again and is the posterior.

Decision: ``argmin_a`` of the posterior, the smallest element integer on ties.
The channel LLRs need not have minimum 0: every ``Q`` is normalized before
the check update.
"""
from __future__ import annotations

import functools

import numpy as np

from ..gf import GF
from ..soft import normalized_costs
from .reference_graph import ScheduledDecoder
from .reference_tmm import trellis_check_update

_CHUNK_VALUES = 1 << 17
"""Message values (checks x q) per check-update chunk: about 512 KiB per float32 operand."""


def minmax_convolution(a, b, xor_table):
    """``out(x) = min_y max(a(y), b(x + y))`` over GF(2^m) on axis 0 (the symbol axis).

    ``a``, ``b``: [q, ...]; ``xor_table[y]`` lists ``x + y`` for every x, so
    ``b[xor_table[y]][x] = b(x + y)``.  The loop over y keeps every NumPy
    operation elementwise over the trailing (frame, row) axes.
    """
    out = np.maximum(a[0], b)
    tmp = np.empty_like(out)
    for y in range(1, a.shape[0]):
        np.maximum(a[y], b[xor_table[y]], out=tmp)
        np.minimum(out, tmp, out=out)
    return out


def check_update(q_msgs, div_index, mul_index, xor_table):
    """Min-Max check update of ``q_msgs`` [d, q, ...] -> R [d, q, ...] (edge, symbol first).

    ``div_index[i, a, ...] = a / h_i`` and ``mul_index[i, a, ...] = h_i a``
    (broadcast over the trailing axes) are the gathers that move a message
    into and out of the multiplied domain; ``xor_table[x, y] = x + y``.
    """
    qh = np.ascontiguousarray(np.take_along_axis(q_msgs, div_index, axis=1))
    d = qh.shape[0]
    forward = [qh[0]]
    for i in range(1, d - 1):
        forward.append(minmax_convolution(forward[-1], qh[i], xor_table))
    backward = {d - 1: qh[d - 1]}
    for i in range(d - 2, 0, -1):
        backward[i] = minmax_convolution(backward[i + 1], qh[i], xor_table)
    merged = [backward[1]]
    merged += [minmax_convolution(forward[i - 1], backward[i + 1], xor_table) for i in range(1, d - 1)]
    merged.append(forward[d - 2])
    return np.take_along_axis(np.stack(merged), mul_index, axis=1)


class MinMaxReferenceDecoder(ScheduledDecoder):
    """GF(q) Min-Max decoder; ``decode(llr[batch, n, q]) -> DecodeResult`` (symbols in ``bits``).

    ``settings.algorithm`` picks the check rule (:data:`RULES`); the schedules, the
    normalisation and the decisions are the same for every rule."""

    RULES = ("minmax", "mmma", "tmm", "tmm1")

    def __init__(self, code, settings):
        super().__init__(code, settings)
        self._rule = (functools.partial(trellis_check_update, alpha=settings.alpha,
                                        first_minima_pairs=settings.algorithm == "tmm1")
                      if settings.algorithm.startswith("tmm") else check_update)
        self.field = F = GF(code.q)
        elements = np.arange(code.q)
        values = self.graph.edge_value[:, None]
        self._xor = F.add.astype(np.intp)
        self._div = F.div[elements[None, :], values].astype(np.intp)     # [E, q]: a / h_e
        self._mul = F.mul[values, elements[None, :]].astype(np.intp)     # [E, q]: h_e a

    def _extrinsic(self, q):
        """Normalize every message so that its smallest entry is 0."""
        return q - q.min(axis=-1, keepdims=True)

    def _check_update(self, q_msgs, block):
        """R for the checks of one block: ``q_msgs`` [batch, rows, d, q].

        Works on chunks of (frames x rows) of about ``_CHUNK_VALUES / q`` checks so
        that the convolution operands stay in cache.
        """
        batch, rows, d, q = q_msgs.shape
        per_chunk = max(1, _CHUNK_VALUES // q)
        rows_step = min(rows, per_chunk)
        frames_step = max(1, per_chunk // rows_step)
        out = np.empty_like(q_msgs)
        for r0 in range(0, rows, rows_step):
            sel = block.edges[r0:r0 + rows_step]
            div = self._div[sel].transpose(1, 2, 0)[:, :, None, :]     # [d, q, 1, rows]
            mul = self._mul[sel].transpose(1, 2, 0)[:, :, None, :]
            for f0 in range(0, batch, frames_step):
                chunk = q_msgs[f0:f0 + frames_step, r0:r0 + rows_step].transpose(2, 3, 0, 1)
                r = self._rule(np.ascontiguousarray(chunk), div, mul, self._xor)
                out[f0:f0 + frames_step, r0:r0 + rows_step] = r.transpose(2, 3, 0, 1)
        return out

    def _soft(self, post):
        """Soft output: the posterior costs normalised, :func:`gpuldpc.soft.normalized_costs`."""
        return normalized_costs(post)

    def _decisions(self, post):
        return post.argmin(axis=-1).astype(np.uint8)

    def _satisfied(self, symbols):
        g = self.graph
        products = self.field.mul[g.edge_value, symbols[:, g.edge_col]]
        return ~g.row_xor(products).any(axis=1)

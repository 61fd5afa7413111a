"""Schedules and iteration driver shared by the reference decoders, over the index tables of
:class:`gpuldpc.codes.tanner.TannerGraph` (edges in CSR order, check rows in blocks of
disjoint supports).

:class:`ScheduledDecoder` runs the layered and flooding schedules of
:mod:`gpuldpc.decoders.reference` for any check rule; the binary and GF(q)
decoders supply the rule, the decisions and the syndrome.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .. import bad_llr
from ..codes.tanner import TannerGraph
from ..result import make_result


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

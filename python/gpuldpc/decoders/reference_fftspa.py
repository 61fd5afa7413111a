"""Reference GF(q) FFT-SPA decoder in float64 (the oracle for the cuda ``fft-spa`` kernels).

Paper 002 (FFT-SPA), flooding, probability domain; the same steps as
``kernels/nb_fftspa.cu`` in float64 (the kernel's float32 results are held to the same
frame error rate, not to the same symbols):

* channel: ``Pch_n(a) = exp(-(L_n(a) - min_b L_n(b))) / sum`` from Min-Max symbol LLRs;
* variable node: ``Q_{mn}(a) = Pch_n(a) prod_{m' != m} R_{m'n}(a)`` normalized to sum 1
  (``Pch_n`` where that product is 0 for every a); ``R`` starts uniform;
* permutation ``Qh_{mn}(h a) = Q_{mn}(a)``, ``F = WHT(Qh)`` (unnormalized
  Walsh-Hadamard transform ``y(k) = sum_b (-1)^{popcount(b & k)} x(b)``);
* check node ``G_{mn} = prod_{n' != n} F_{mn'}`` (prefix and suffix products),
  ``Rh = max(WHT(G) / (q G(0)), 0)`` (normalized in the Fourier domain),
  ``R_{mn}(a) = Rh_{mn}(h a)``;
* decision ``argmax_a log Pch_n(a) + sum_m log R_{mn}(a)`` (smallest a on ties);
  early stop and the returned iterations / syndrome flags as in
  :mod:`gpuldpc.decoders.reference`.

``FftSpaReferenceDecoder(code, settings).decode(llr[batch, n, q]) -> DecodeResult``
(symbols in ``bits``); ``settings`` is a :class:`gpuldpc.decoders.front.Settings`
(``max_iterations``, ``early_stop`` are read).
"""
from __future__ import annotations

import numpy as np

from .. import bad_llr
from ..codes.tanner import TannerGraph
from ..gf import GF
from ..result import make_result
from .reference_graph import run_iterations

_TINY = 1e-300


def walsh_hadamard(x: np.ndarray) -> np.ndarray:
    """Unnormalized WHT along the last axis (length a power of two), float64."""
    q = x.shape[-1]
    lead = x.shape[:-1]
    y = np.array(x, dtype=np.float64).reshape(-1, q)
    h = 1
    while h < q:
        y = y.reshape(y.shape[0], q // (2 * h), 2, h)
        y = np.stack([y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]], axis=2).reshape(-1, q)
        h *= 2
    return y.reshape(lead + (q,))


def channel_probabilities(llr) -> np.ndarray:
    """Min-Max symbol LLRs [..., q] -> float64 probabilities ``exp(-(L - min L)) / sum``."""
    llr = np.asarray(llr, dtype=np.float64)
    p = np.exp(-(llr - llr.min(axis=-1, keepdims=True)))
    return p / p.sum(axis=-1, keepdims=True)


class FftSpaReferenceDecoder:
    """GF(q) FFT-SPA in float64, flooding; see the module docstring."""

    def __init__(self, code, settings):
        if code.is_binary:
            raise ValueError(f"code {code.name!r} is binary; FFT-SPA decodes GF(q) codes")
        self.code = code
        self.settings = settings
        self.graph = g = TannerGraph(code)
        self.field = F = GF(code.q)
        elements = np.arange(code.q)
        h = g.edge_value[:, None]
        self._perm = F.div[elements[None, :], h].astype(np.intp)     # Qh_e(b) = Q_e(b / h_e)
        self._deperm = F.mul[h, elements[None, :]].astype(np.intp)   # R_e(a) = Rh_e(h_e a)

    def _variable_messages(self, pch, r):
        """Q [batch, E, q]: channel times the other incoming R of each edge, normalized."""
        g = self.graph
        rpad = np.concatenate([r, np.ones_like(r[:, :1])], axis=1)
        slots = g.vn_edges                                           # [n, dv], padded with E
        q_msgs = np.empty_like(r)
        for s in range(slots.shape[1]):
            prod = pch.copy()
            for t in range(slots.shape[1]):
                if t != s:
                    prod *= rpad[:, slots[:, t]]
            edges = slots[:, s]
            real = edges < g.num_edges
            q_msgs[:, edges[real]] = prod[:, real]
        total = q_msgs.sum(axis=-1, keepdims=True)
        fallback = pch[:, g.edge_col]
        ok = total > 0
        return np.where(ok, q_msgs / np.where(ok, total, 1.0), fallback)

    def _check_messages(self, q_msgs):
        """R [batch, E, q] from Q by permutation, WHT, excluded products and de-permutation."""
        qsize = self.code.q
        qh = np.take_along_axis(q_msgs, self._perm[None], axis=2)
        f = walsh_hadamard(qh)
        r = np.empty_like(q_msgs)
        for block in self.graph.all_checks:
            fb = f[:, block.edges]                                   # [batch, rows, d, q]
            ones = np.ones_like(fb[:, :, :1])
            prefix = np.cumprod(np.concatenate([ones, fb[:, :, :-1]], axis=2), axis=2)
            suffix = np.cumprod(np.concatenate([ones, fb[:, :, :0:-1]], axis=2), axis=2)[:, :, ::-1]
            gprod = prefix * suffix
            g0 = gprod[..., :1]
            rh = np.maximum(walsh_hadamard(gprod) / (qsize * np.where(g0 > 0, g0, 1.0)), 0.0)
            rh = np.where(g0 > 0, rh, 1.0 / qsize)
            r[:, block.edges] = rh
        return np.take_along_axis(r, self._deperm[None], axis=2)

    def _iteration(self, state):
        state["r"] = self._check_messages(self._variable_messages(state["pch"], state["r"]))
        return state

    def _decisions(self, state):
        g = self.graph
        logs = np.log(np.maximum(state["pch"], _TINY))
        logr = np.log(np.maximum(np.concatenate([state["r"], np.ones_like(state["r"][:, :1])], axis=1),
                                 _TINY))
        for s in range(g.vn_edges.shape[1]):
            logs = logs + logr[:, g.vn_edges[:, s]]
        return logs.argmax(axis=-1).astype(np.uint8)

    def _satisfied(self, symbols):
        g = self.graph
        return ~g.row_xor(self.field.mul[g.edge_value, symbols[:, g.edge_col]]).any(axis=1)

    def decode(self, llr):
        """Decode Min-Max symbol LLRs [batch, n, q]; returns a DecodeResult (symbols in ``bits``)."""
        llr = np.asarray(llr)
        shape = (self.code.n, self.code.q)
        if llr.ndim != 3 or llr.shape[1:] != shape:
            raise ValueError(f"code {self.code.name!r}: LLRs must have shape [batch, {shape[0]}, "
                             f"{shape[1]}], got {llr.shape}")
        llr, bad = bad_llr.sanitized(llr)
        pch = channel_probabilities(llr)
        r = np.full((llr.shape[0], self.graph.num_edges, self.code.q), 1.0 / self.code.q)
        s = self.settings
        bits, iterations, valid, _ = run_iterations({"pch": pch, "r": r}, self._iteration, self._decisions,
                                                    self._satisfied, s.max_iterations, s.early_stop)
        return make_result(self.code, bits, iterations, valid, bad)

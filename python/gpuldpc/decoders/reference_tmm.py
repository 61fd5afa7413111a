"""Trellis Min-Max ("tmm") check update over GF(q): the extra column of the Δ-domain trellis.

The rule is the trellis Min-Max (T-MM) check node of Lacruz, García-Herrero, Declercq and
Valls, "Simplified trellis min-max decoder architecture for nonbinary low-density
parity-check codes", IEEE Trans. VLSI Syst. 23(9), 2015, §II-B (the trellis in the delta
domain: messages shifted so that the hard decision is 0, configurations of at most
``n_c = 2`` deviations, the extra column) and §III (the check node: first and second
minimum of each trellis row, the extra column with the path of each entry, each output
from the extra column unless its column lies on the entry's path); the one-minimum-only
variant (OMO T-MM: Lacruz, García-Herrero, Valls, Declercq, IEEE TCAS-I 62(1), 2015)
replaces the second minimum by an approximation.  The papers' full text was not at hand
here (the search corpora hold their abstracts only), so the steps below are this library's
statement of the rule from the published description; where it leaves a choice (ties, the
value of a column that lies on the path, the scale ``alpha``) the choice made is stated.
``trellis_check_update`` is T-MM with both minima (``"tmm"``); with ``first_minima_pairs=True``
it is this library's rule ``"tmm1"`` (below), which drops the second minima from step 5's pairs
after the idea of the OMO paper, not a transcription of that paper's approximation.

Messages follow :mod:`.reference_nb`: float32 costs, ``Q`` normalised to minimum 0, for
check m with neighbours ``n_0 .. n_{d-1}`` and coefficients ``h_i``, in the multiplied
domain ``Qh_i(x) = Q_{m,n_i}(x / h_i)`` (the cost of ``h_i x_{n_i} = x``).

1. Hard decisions and syndrome: ``z_i = argmin_x Qh_i(x)`` (smallest x on ties, so
   ``Qh_i(z_i) = 0``), ``beta = z_0 + z_1 + ... + z_{d-1}`` (GF addition = XOR).
2. Delta domain (the trellis, rows ``eta = 1 .. q-1``, one column per edge):
   ``dQ_i(eta) = Qh_i(eta + z_i)``, the cost of deviating from the hard decision by ``eta``
   (``dQ_i(0) = 0``).
3. Per row, the first and second minimum over the columns and their columns:
   ``m1(eta) = min_i dQ_i(eta)`` at column ``p(eta)`` (the smallest i attaining it),
   ``m2(eta) = min_{i != p(eta)} dQ_i(eta)`` at column ``p2(eta)`` (likewise).
4. Extra column (configurations of one or two deviations, from the first minima):
   ``E(eta) = min( m1(eta), min_{eta' + eta'' = eta, eta' < eta'', p(eta') != p(eta'')}
   max(m1(eta'), m1(eta'')) )`` with its path ``P(eta) = {c1(eta), c2(eta)}``: ``{p(eta)}``
   for the one-deviation value, ``{p(eta'), p(eta'')}`` for a pair.  Candidates are taken
   in the order written (the one deviation first, then ``eta' = 1, 2, ...``) and a later one
   replaces the current value only when strictly smaller.
5. The same minimum without column x, for x = c1(eta) and x = c2(eta): step 4 with each
   row's best value off column x, ``v_x(e) = m1(e)`` at column ``p(e)`` if ``p(e) != x``,
   else ``m2(e)`` at column ``p2(e)``; call it ``A_x(eta)``.
6. Output of column i (Δ domain): ``dR_i(0) = 0`` and, for ``eta != 0``,
   ``dR_i(eta) = A_{c1}(eta)`` if ``i = c1(eta)``, ``A_{c2}(eta)`` if ``i = c2(eta)``, else
   ``E(eta)``: every column off the path takes the extra column, a column on it the best
   configuration that avoids it (the second-best value of the papers; OMO T-MM builds
   it from first minima only, this is T-MM with both minima).
7. Back to the symbol domain: the other columns' hard decisions sum to ``beta + z_i``, so
   ``h_i x = beta + z_i + eta`` and ``R_{m,n_i}(a) = alpha * dR_i(h_i a + beta + z_i)``
   (one float32 product; ``alpha`` is the Decoder's ``alpha``, default 0.75).

Pairs from first minima (``"tmm1"``, ``first_minima_pairs=True``): step 5's pairs take each row's
first minimum only, ``v_x(e) = +inf`` where ``p(e) = x`` (a row whose first minimum lies on the
avoided column offers nothing to a pair), while the one deviation keeps ``v_x(eta)`` of step 5
(``m2(eta)`` where ``p(eta) = x``), so ``A_x(eta)`` stays finite.  Every pair candidate is then one
of step 4's (the same maxima and columns; only which are allowed differs), so on the GPU step 5
reads the same two words a row as step 4 instead of choosing between both minima of every row, and
the second minima are kept for a thread's own rows only.  The idea of dropping second minima is
that of the one-minimum-only trellis decoder (OMO T-MM: Lacruz, García-Herrero, Valls,
Declercq, IEEE TCAS-I 62(1), 2015, the (837,726) GF(32) ASIC of issue 17); dropping them from the
one deviation as well (every ``m2`` = +inf) decoded far worse on codes of low check degree
(GF(4) (192,96): no frame of 96 at 2 dB where T-MM decodes 61) and was not kept.  Its loss against
T-MM and Min-Max is measured on the same frames in ``bench/nb_tmm_fer.py`` (docs/gpu_nb.md).

The scale ``alpha`` is this library's addition (a normalised T-MM, as normalised min-sum
scales min-sum): restricting the configurations to two deviations over-estimates the cost
of every symbol that needs three or more, which makes the check messages over-confident;
without a scale (``alpha = 1``) gf32-837-726 decodes far worse than Min-Max (a third of the
frames lost at 4.0 dB where Min-Max loses 1 in 100),
with ``alpha`` about 0.5 (high-rate codes, check degree 24-27) to 0.75 (rate 1/2, degree
6) it comes close (docs/cpu.md, "Trellis Min-Max", gives the measured losses).  Min-Max
itself is unchanged by a common scale of all costs, so ``alpha`` acts only as the weight
of the check messages against the channel.

Every ``dR_i(eta)`` is the cost of a configuration of the other edges that satisfies the
check (one deviation from column ``p(eta)``, or two from two other columns), so ``dR`` is
never below Min-Max's and equals it for ``d = 2`` (a column then sees the other column's
value).  ``R`` has minimum 0.  Only comparisons, min, max
and the one product by ``alpha`` are applied to the input values, so every backend that
follows these steps reproduces the numbers bit for bit.  Cost per check: ``O(d q)`` for
steps 1-3 and 7 and ``3 (q-1)(q-2) / 2`` pair comparisons for steps 4-5, against
Min-Max's ``3 (d-2) q^2`` (forward, backward, merger).
"""
from __future__ import annotations

import numpy as np


def _two_deviations(m1, p, m2, p2, xor_table, row_shape, avoid=None, first_minima_pairs=False):
    """Steps 4/5 over the rows [q, ...]: ``E(eta)`` and the columns of its path (c1, c2), or with
    ``avoid`` (the column x per row eta) ``A_x(eta)`` from the values ``v_x`` (``first_minima_pairs``:
    the pairs' rows with +inf in place of their second minimum)."""
    def off(e, x, second=m2):                                            # (v_x(e), its column)
        if x is None:
            return m1[e], p[e]
        on = p[e] == x
        return np.where(on, second[e], m1[e]), np.where(on, p2[e], p[e])

    q = m1.shape[0]
    best, c1 = off(np.arange(q), avoid)
    c2 = c1
    pair_second = np.full_like(m2, np.inf) if first_minima_pairs else m2
    for e1 in range(1, q):
        partner = xor_table[e1]                                          # eta'' = eta + eta' per eta
        v1, col1 = off(e1, avoid, pair_second)
        v2, col2 = off(partner, avoid, pair_second)
        cand = np.maximum(v1, v2)
        take = (cand < best) & (col1 != col2) & (e1 < partner).reshape(row_shape)
        best = np.where(take, cand, best)
        c1 = np.where(take, col1, c1)
        c2 = np.where(take, col2, c2)
    return best, c1, c2


def trellis_check_update(q_msgs, div_index, mul_index, xor_table, alpha=1.0, first_minima_pairs=False):
    """T-MM check update of ``q_msgs`` [d, q, ...] -> R [d, q, ...] (steps 1-7 above;
    ``first_minima_pairs=True``: step 5's pairs from first minima, ``"tmm1"``).

    Same arguments as :func:`.reference_nb.check_update`: ``div_index[i, a, ...] = a / h_i``,
    ``mul_index[i, a, ...] = h_i a`` (broadcast over the trailing axes), ``xor_table[x, y] = x + y``;
    ``alpha``: the output scale of step 7 (rounded to float32).
    """
    qh = np.take_along_axis(q_msgs, div_index, axis=1)
    d, q = qh.shape[:2]
    trailing = (1,) * (qh.ndim - 2)
    eta = np.arange(q).reshape((1, q) + trailing)
    z = qh.argmin(axis=1)                                               # [d, ...]
    beta = np.bitwise_xor.reduce(z, axis=0)
    delta = np.take_along_axis(qh, eta ^ z[:, None], axis=1)           # dQ_i(eta)
    p = delta.argmin(axis=0)                                            # [q, ...]
    m1 = np.take_along_axis(delta, p[None], axis=0)[0]
    np.put_along_axis(delta, p[None], np.float32(np.inf), axis=0)
    p2 = delta.argmin(axis=0)
    m2 = np.take_along_axis(delta, p2[None], axis=0)[0]
    trellis = (m1, p, m2, p2, xor_table, (q,) + trailing)
    extra, c1, c2 = _two_deviations(*trellis)
    avoid1 = _two_deviations(*trellis, avoid=c1, first_minima_pairs=first_minima_pairs)[0]
    avoid2 = _two_deviations(*trellis, avoid=c2, first_minima_pairs=first_minima_pairs)[0]
    col = np.arange(d).reshape((d, 1) + trailing)
    out = np.where(c1 == col, avoid1, np.where(c2 == col, avoid2, extra))
    out[:, 0] = 0.0
    out *= np.float32(alpha)
    return np.take_along_axis(out, mul_index ^ (beta ^ z)[:, None], axis=1)

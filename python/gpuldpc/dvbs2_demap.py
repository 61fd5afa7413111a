"""DVB-S2 soft demapping: complex symbols of a FECFRAME -> the n code-bit LLRs, in the
LDPC code's bit order (EN 302 307-1 5.3.3 bit interleaver, 5.4 bit mapping; EN 302 307-2
for the DVB-S2X MODCODs of the same four constellations).

::

    from gpuldpc import dvbs2_demap
    m = dvbs2_demap.mapping("dvbs2-short-3/5", "8psk")   # or a DvbS2Code
    symbols = m.modulate(codewords)                      # [batch, n] bits -> [batch, n / bits]
    llr = m.llr(symbols + noise, n0)                     # [batch, n] float32, > 0 means bit 0
    llr = dvbs2_demap.demap(symbols, "dvbs2-short-3/5", "8psk", n0, max_log=True)

**Transmitter (what is undone).**  The LDPC codeword c_0 .. c_{n-1} (gr-dtv's
``dvb_ldpc_bb`` order, our decoders' column order) is bit-interleaved (5.3.3, Table 7):
for 8PSK, 16APSK and 32APSK (eta_MOD = m = 3, 4, 5 bits a symbol) it is written column
by column into m columns of S = n / m rows (column t holds c_{tS} .. c_{tS+S-1}) and read
row by row; symbol j's label, most significant bit first, is (c_{t_0 S + j}, ..,
c_{t_{m-1} S + j}) with the column order t_0 .. t_{m-1} of the MODCOD
(:data:`COLUMN_ORDER`: 0, 1, .., m-1 for the DVB-S2 MODCODs except 8PSK 3/5, read 2, 1,
0; the DVB-S2X MODCODs have their own orders).  QPSK is not interleaved: symbol j
carries (c_{2j}, c_{2j+1}).  The label is mapped to a point of the constellation
(5.4.1-5.4.4, Figures 9-12), scaled to mean energy Es = 1 as gr-dtv's
``dvbs2_modulator_bc`` does; 16APSK (4 + 12 points) has ring ratio gamma = R2/R1
(Table 9, :data:`GAMMA_16APSK`), 32APSK (4 + 12 + 16) gamma1 = R2/R1 and gamma2 = R3/R1
(Table 10, :data:`GAMMA_32APSK`), both per code rate.

**LLRs.**  For a received symbol y = x + w, w complex Gaussian with E|w|^2 = N0, the LLR
of label bit i (positive means 0, the convention of every decoder here) is

    L_i(y) = ln sum_{x in X_i^0} exp(-|y - x|^2 / N0) - ln sum_{x in X_i^1} exp(-|y - x|^2 / N0)

X_i^b: the points whose label has bit i equal to b.  Each sum is computed as a
log-sum-exp about its own largest term, so neither underflows at high Es/N0; ``max_log``
keeps that term alone, L_i ~= (min_{X_i^1} |y - x|^2 - min_{X_i^0} |y - x|^2) / N0.  For
Gray QPSK both give L = 2 sqrt(2) y_I / N0 (and y_Q for the second bit).  The LLR of
label bit i of symbol j is written at frame position t_i S + j (QPSK: 2j + i), so the
output is the frame in the LDPC code's order.  Es/N0 = 10 log10(1 / N0)
(:func:`n0_from_esn0_db`).

Tables (facts of the standards, as gr-dtv ``dvbs2_interleaver_bb_impl.cc`` and
``dvbs2_modulator_bc_impl.cc`` use them; tests/gr/test_dvbs2_demapper.py checks
:meth:`Dvbs2Mapping.modulate` against those blocks for every MODCOD here).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .codes import dvb_s2

CONSTELLATIONS = ("qpsk", "8psk", "16apsk", "32apsk")
"""The constellations of EN 302 307-1 5.4 (``constellation=`` values)."""

BITS_PER_SYMBOL = {"qpsk": 2, "8psk": 3, "16apsk": 4, "32apsk": 5}

_S2_NORMAL = tuple(dvb_s2.K_LDPC_S2["normal"])
_S2_SHORT = tuple(dvb_s2.K_LDPC_S2["short"])

MODCODS = {
    "qpsk": {"normal": _S2_NORMAL + ("13/45", "9/20", "11/20"),
             "short": _S2_SHORT + ("11/45", "4/15", "14/45", "7/15", "8/15", "32/45")},
    "8psk": {"normal": ("3/5", "2/3", "3/4", "5/6", "8/9", "9/10", "23/36", "25/36", "13/18"),
             "short": ("3/5", "2/3", "3/4", "5/6", "8/9", "7/15", "8/15", "26/45", "32/45")},
    "16apsk": {"normal": ("2/3", "3/4", "4/5", "5/6", "8/9", "9/10", "26/45", "3/5", "28/45",
                          "23/36", "25/36", "13/18", "140/180", "154/180"),
               "short": ("2/3", "3/4", "4/5", "5/6", "8/9", "7/15", "8/15", "26/45", "3/5",
                         "32/45")},
    "32apsk": {"normal": ("3/4", "4/5", "5/6", "8/9", "9/10"),
               "short": ("3/4", "4/5", "5/6", "8/9")},
}
"""constellation -> frame -> code rates it is used with: the DVB-S2 MODCODs (EN 302 307-1
5.4: QPSK every rate, 8PSK 3/5 .. 9/10, 16APSK 2/3 .. 9/10, 32APSK 3/4 .. 9/10; short
frames have no 9/10), then the DVB-S2X ones of these constellations (EN 302 307-2; its
16APSK "7/9" and "77/90" are the codes 140/180 and 154/180).  Not here: the S2X
constellations 8APSK-L, 8+8APSK, the S2X 32APSK (4+8+4+16, 4+12+16rb), 64APSK and up."""

GAMMA_16APSK = {"2/3": 3.15, "3/4": 2.85, "4/5": 2.75, "5/6": 2.70, "8/9": 2.60, "9/10": 2.57,
                "26/45": 3.70, "3/5": 3.70, "28/45": 3.50, "23/36": 3.10, "25/36": 3.10,
                "13/18": 2.85, "140/180": 3.60, "154/180": 3.20, "7/15": 3.32, "8/15": 3.50,
                "32/45": 2.85}
"""16APSK ring ratio gamma = R2/R1 per code rate (EN 302 307-1 Table 9; EN 302 307-2 for
the S2X rates; the same for both frame sizes)."""

GAMMA_32APSK = {"3/4": (2.84, 5.27), "4/5": (2.72, 4.87), "5/6": (2.64, 4.64),
                "8/9": (2.54, 4.33), "9/10": (2.53, 4.30)}
"""32APSK ring ratios (gamma1 = R2/R1, gamma2 = R3/R1) per code rate (EN 302 307-1 Table 10)."""

_8PSK_102 = ("25/36", "13/18", "7/15", "8/15", "26/45")
_16APSK_ORDERS = {
    ("normal", "26/45"): (3, 2, 0, 1), ("short", "26/45"): (2, 1, 3, 0),
    ("normal", "3/5"): (3, 2, 1, 0), ("short", "3/5"): (3, 2, 0, 1),
    "28/45": (3, 0, 1, 2), "23/36": (3, 0, 2, 1), "13/18": (3, 0, 2, 1), "25/36": (2, 3, 1, 0),
    "7/15": (2, 1, 0, 3), "8/15": (2, 1, 0, 3), "140/180": (3, 2, 1, 0), "154/180": (0, 3, 2, 1),
}


def column_order(constellation: str, frame: str, rate: str) -> tuple[int, ...]:
    """The interleaver's column order t_0 .. t_{m-1} (the column read for the label's most
    significant bit first) of an 8PSK, 16APSK or 32APSK MODCOD (EN 302 307-1 Table 7;
    EN 302 307-2 for S2X).  QPSK is not interleaved (symbol j: bits 2j, 2j + 1)."""
    if constellation == "qpsk":
        raise ValueError("dvbs2 demapper: QPSK has no interleaver columns (symbol j carries bits 2j, 2j + 1)")
    if constellation == "8psk":
        return (2, 1, 0) if rate == "3/5" else (1, 0, 2) if rate in _8PSK_102 else (0, 1, 2)
    if constellation == "16apsk":
        return _16APSK_ORDERS.get((frame, rate), _16APSK_ORDERS.get(rate, (0, 1, 2, 3)))
    return tuple(range(BITS_PER_SYMBOL[constellation]))


# Points by label (Figures 9-12, gr-dtv's tables): (ring, angle in units of pi / 24).
_QPSK = [(0, 6), (0, 42), (0, 18), (0, 30)]
_8PSK = [(0, 6 * a) for a in (1, 0, 4, 5, 2, 7, 3, 6)]
_16APSK = [(1, 2 * a) for a in (3, -3, 9, -9, 1, -1, 11, -11, 5, -5, 7, -7)] + \
          [(0, 2 * a) for a in (3, -3, 9, -9)]
_32APSK = [(1, 6), (1, 10), (1, -6), (1, -10), (1, 18), (1, 14), (1, -18), (1, -14),
           (2, 3), (2, 9), (2, -6), (2, -12), (2, 18), (2, 12), (2, -21), (2, -15),
           (1, 2), (0, 6), (1, -2), (0, -6), (1, 22), (0, 18), (1, -22), (0, -18),
           (2, 0), (2, 6), (2, -3), (2, -9), (2, 21), (2, 15), (2, 24), (2, -18)]
_LAYOUT = {"qpsk": (_QPSK, (4,)), "8psk": (_8PSK, (8,)), "16apsk": (_16APSK, (4, 12)),
           "32apsk": (_32APSK, (4, 12, 16))}


def points(constellation: str, rate: str) -> np.ndarray:
    """complex128 [2^m]: the constellation point of each label (label = the m bits, first
    bit most significant), mean energy 1.  Ring radii 1, gamma (, gamma2) before scaling."""
    layout, ring_sizes = _LAYOUT[constellation]
    radii = np.array((1.0,) + ((GAMMA_16APSK[rate],) if constellation == "16apsk" else
                               GAMMA_32APSK[rate] if constellation == "32apsk" else ()))
    radii /= math.sqrt(np.dot(ring_sizes, radii ** 2) / sum(ring_sizes))
    ring, angle = np.array(layout).T
    return radii[ring] * np.exp(1j * np.pi / 24 * angle)


def check_modcod(frame: str, rate: str, constellation: str) -> None:
    """Raise ValueError naming ``constellation`` (unknown, or not used with this code rate)
    and its valid values."""
    if constellation not in MODCODS:
        raise ValueError(f"dvbs2 demapper: constellation={constellation!r} is not a DVB-S2 "
                         f"constellation; use one of {', '.join(map(repr, CONSTELLATIONS))}")
    if rate not in MODCODS[constellation][frame]:
        usable = [c for c in CONSTELLATIONS if rate in MODCODS[c][frame]]
        raise ValueError(f"dvbs2 demapper: constellation={constellation!r} is not used with "
                         f"rate {rate} in {frame} frames (DVB-S2/S2X MODCODs); rate {rate} "
                         f"{frame} takes {', '.join(map(repr, usable)) or 'none of them'}, and "
                         f"{constellation} takes the {frame} rates "
                         f"{', '.join(map(repr, MODCODS[constellation][frame]))}")


def frame_and_rate(code) -> tuple[str, str]:
    """(frame, rate) of a DVB-S2 code: a :class:`~gpuldpc.codes.dvb_s2.DvbS2Code` or its
    name ``"dvbs2-<normal|short>-<rate>"`` (the code library's errors for a bad frame or
    rate); any other code raises ValueError naming ``code``."""
    if isinstance(code, dvb_s2.DvbS2Code):
        return code.frame, code.rate_label
    parts = code.split("-", 2) if isinstance(code, str) else ()
    if len(parts) != 3 or parts[0] != "dvbs2":
        name = getattr(code, "name", code)
        raise ValueError(f"dvbs2 demapper: code={name!r} is not a DVB-S2 code; use "
                         "'dvbs2-<normal|short>-<rate>' (e.g. 'dvbs2-short-3/5') or a DvbS2Code")
    return dvb_s2.check(parts[1], parts[2])


def _finite_number(value) -> bool:
    """A real number (not a bool or a string) and finite."""
    return (not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
            and math.isfinite(value))


def n0_from_esn0_db(esn0_db: float) -> float:
    """N0 = 10^(-Es/N0 / 10) for symbols of mean energy Es = 1 (ValueError naming
    ``esn0_db`` unless it is a finite number)."""
    if not _finite_number(esn0_db):
        raise ValueError(f"dvbs2 demapper: esn0_db={esn0_db!r} must be a finite number (dB)")
    return 10.0 ** (-float(esn0_db) / 10.0)


@dataclass(frozen=True, eq=False)
class Dvbs2Mapping:
    """The bit interleaver and mapping of one MODCOD (see the module docstring).

    ``points[label]`` the constellation (complex128, Es = 1); ``order`` the gather that
    takes the [S, m] label-bit LLRs of a frame (symbol-major, most significant bit first)
    to the frame's order; ``positions[j, i]`` the frame position of label bit i of symbol j.
    """

    frame: str
    rate: str
    constellation: str
    n: int
    points: np.ndarray
    positions: np.ndarray

    @property
    def bits_per_symbol(self) -> int:
        return self.positions.shape[1]

    @property
    def symbols_per_frame(self) -> int:
        return self.positions.shape[0]

    @functools.cached_property
    def order(self) -> np.ndarray:
        return np.argsort(self.positions.ravel())

    @functools.cached_property
    def _subsets(self) -> tuple[np.ndarray, np.ndarray]:
        """[m, 2^(m-1)] labels with label bit i (most significant first) 0, and 1."""
        m = self.bits_per_symbol
        labels = np.arange(1 << m)
        bit = (labels[None, :] >> (m - 1 - np.arange(m))[:, None]) & 1
        return (np.stack([labels[row == 0] for row in bit]),
                np.stack([labels[row == 1] for row in bit]))

    def modulate(self, bits) -> np.ndarray:
        """Codeword bits [batch, n] (or [n]) -> complex64 symbols [batch, S]: the bit
        interleaver and mapping, what gr-dtv's dvbs2_interleaver_bb -> dvbs2_modulator_bc
        (interpolation off) send."""
        bits = np.asarray(bits)
        if bits.shape[-1:] != (self.n,):
            raise ValueError(f"dvbs2 modulate: bits must have n = {self.n} bits in the last "
                             f"axis, got shape {bits.shape}")
        m = self.bits_per_symbol
        weights = (1 << np.arange(m - 1, -1, -1)).astype(np.int64)
        labels = (bits[..., self.positions].astype(np.int64) & 1) @ weights
        return self.points[labels].astype(np.complex64)

    def llr(self, symbols, n0: float, max_log: bool = False) -> np.ndarray:
        """Received symbols [batch, S] (or [S]; complex, Es = 1) -> float32 LLRs [batch, n]
        (or [n]) in the LDPC code's bit order, positive means 0: the exact log-sum-exp of the
        module docstring over all 2^m points, or its max-log form with ``max_log``.  ``n0``:
        the complex noise variance E|w|^2 (> 0)."""
        if not (_finite_number(n0) and n0 > 0):
            raise ValueError(f"dvbs2 demapper: n0={n0!r} must be a finite number > 0 (the "
                             "complex noise variance, 10^(-Es/N0 / 10) at Es = 1)")
        y = np.asarray(symbols)
        if y.shape[-1:] != (self.symbols_per_frame,) or y.ndim > 2:
            raise ValueError(f"dvbs2 demapper: symbols must be [batch, S] or [S] with S = "
                             f"{self.symbols_per_frame} ({self.n} bits / {self.bits_per_symbol} "
                             f"for {self.constellation}), got shape {y.shape}")
        y = y.astype(np.complex64, copy=False)
        diff = y[..., None] - self.points.astype(np.complex64)
        metric = diff.real ** 2 + diff.imag ** 2
        metric *= np.float32(-1.0 / n0)                     # [..., S, 2^m]: -|y - x|^2 / N0
        llr = _log_sum(metric[..., self._subsets[0]], max_log) - \
            _log_sum(metric[..., self._subsets[1]], max_log)  # [..., S, m]
        return llr.reshape(*y.shape[:-1], self.n)[..., self.order]


def _log_sum(terms: np.ndarray, max_log: bool) -> np.ndarray:
    """ln sum exp(terms) over the last axis about its largest term (that term alone with
    ``max_log``)."""
    top = terms.max(axis=-1)
    if max_log:
        return top
    return top + np.log(np.exp(terms - top[..., None]).sum(axis=-1))


@functools.lru_cache(maxsize=None)
def _mapping(frame: str, rate: str, constellation: str) -> Dvbs2Mapping:
    n = dvb_s2.FRAME_LENGTHS[frame]
    m = BITS_PER_SYMBOL[constellation]
    s = n // m
    j = np.arange(s)[:, None]
    if constellation == "qpsk":
        positions = m * j + np.arange(m)
    else:
        positions = np.array(column_order(constellation, frame, rate)) * s + j
    positions.setflags(write=False)
    pts = points(constellation, rate)
    pts.setflags(write=False)
    return Dvbs2Mapping(frame, rate, constellation, n, pts, positions)


def mapping(code, constellation: str) -> Dvbs2Mapping:
    """The interleaver and mapping of a DVB-S2 MODCOD: ``code`` a DVB-S2 code or its name
    (``"dvbs2-short-3/5"``), ``constellation`` one of :data:`CONSTELLATIONS` used with that
    rate (:data:`MODCODS`).  Raises ValueError naming the parameter and its valid values.
    The same object for the same MODCOD."""
    frame, rate = frame_and_rate(code)
    check_modcod(frame, rate, constellation)
    return _mapping(frame, rate, constellation)


def demap(symbols, code, constellation: str, n0: float, max_log: bool = False) -> np.ndarray:
    """``mapping(code, constellation).llr(symbols, n0, max_log)``: the LLRs [batch, n] of
    received DVB-S2 symbols [batch, n / m], in the LDPC code's bit order, positive = bit 0."""
    return mapping(code, constellation).llr(symbols, n0, max_log)

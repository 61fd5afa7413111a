"""DVB-S2 LDPC codes (ETSI EN 302 307-1, 5.3.2): normal (64800) and short (16200) frames,
with the DVB-S2X rates of those frame sizes (EN 302 307-2, 5.3.2; the same construction).

Each code is given by the standard's address table (Annex B for normal frames, Annex C
for short ones; ``data/dvbs2_<frame>_<rate>.txt``, one table row per line): the k
information bits form k/360 groups of 360, and bit ``m = 360 j + t`` of group j adds
into the parity accumulators ``(x + t q) mod (n - k)`` for every address x of table row
j, with ``q = (n - k) / 360`` (Tables 7a/7b).  The parity bits are then accumulated,
``p_i ^= p_{i-1}`` for i = 1 .. n-k-1.  In H (n - k checks, n columns) check i holds the
information bits that reach accumulator i, p_i and p_{i-1} (no p_{-1}): the parity part
is the staircase (column weight 2, the last column weight 1).

Short frames use the "effective" k_ldpc of Table 5b (rate 1/4 short: k = 3240, so its
real rate is 1/5): the rate in the name is the standard's label, ``code.k / code.n`` the
real one.

Bit order.  ``code.H``'s columns are in the frame's order (information, then p_0 ..
p_{n-k-1}), as gr-dtv's ``dvb_ldpc_bb`` sends them; ``encode`` and the decoders work in
that order.  H's *rows* are stored block row by block row of :func:`qc_form` (the standard's
check ``i`` is in block row ``i mod q``, at position ``i // q`` of its 360), and within a
block row in *classes*: greedily, each check (in QC order) joins the first class whose
checks share no variable with it (:func:`layer_order`; :func:`check_rows` maps the
standard's checks to rows).  A row order does not change the code; this one lets a layered
schedule, whose layers are runs of consecutive rows with disjoint supports (the reference
decoder's and the GPU's), take about a class at a time: 102 layers for normal 1/2 (90 block
rows; QC order gave 159), 132 for normal 3/5 (278), one per block row for every
S2X code (their blocks are single circulants).

Quasi-cyclic form (:func:`qc_form`): permuting the parity columns the same way
(``p_i`` -> column ``k + 360 (i mod q) + i // q``) gives z = 360 circulants everywhere,
except the accumulator's wrap: block (0, nb-1) is the circulant of shift 359 with its
entry in row 0 (column 359 of the block) missing (p_0 has no predecessor), the one
non-circulant entry.  Some information blocks are the sum of two to four circulants
(addresses of one table row that share ``x mod q``; four once, in normal 5/6); the form
lists one entry per circulant, so a layered GPU schedule of 360 checks at a time must
let such a block's circulants update the same variable (or split the layer).

The table values are those of EN 302 307-1 V1.4.1 Annexes B and C and EN 302 307-2
Annexes B and C (S2X), taken over from GNU Radio's gr-dtv
(``gr-dtv/lib/dvb/dvb_ldpc_bb_impl.cc``, ``ldpc_tab_*N``/``*S``, the DVB-S2 variants of
rate 2/3 normal and 3/5 short); tests/codes/test_dvbs2.py checks our encoder against
``dvb_ldpc_bb`` bit for bit for every code.  Not included: the S2X VL-SNR codes (2/9
normal and the short 1/5, 11/45, 4/15, 1/3 VL-SNR variants, which puncture or shorten
these codes) and the medium frames (n = 32400).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np
import scipy.sparse as sp

from .code import Code

Z = 360
"""Circulant size (the standard's M = 360)."""

FRAME_LENGTHS = {"normal": 64800, "short": 16200}
"""Frame size (FECFRAME) -> n_ldpc."""

K_LDPC_S2 = {
    "normal": {"1/4": 16200, "1/3": 21600, "2/5": 25920, "1/2": 32400, "3/5": 38880,
               "2/3": 43200, "3/4": 48600, "4/5": 51840, "5/6": 54000, "8/9": 57600,
               "9/10": 58320},
    "short": {"1/4": 3240, "1/3": 5400, "2/5": 6480, "1/2": 7200, "3/5": 9720,
              "2/3": 10800, "3/4": 11880, "4/5": 12600, "5/6": 13320, "8/9": 14400},
}
"""DVB-S2 (EN 302 307-1): frame size -> rate label -> k_ldpc (Tables 5a and 5b; short
frames' effective k)."""

K_LDPC_S2X = {
    "normal": {"13/45": 18720, "9/20": 29160, "90/180": 32400, "96/180": 34560,
               "11/20": 35640, "100/180": 36000, "104/180": 37440, "26/45": 37440,
               "18/30": 38880, "28/45": 40320, "23/36": 41400, "116/180": 41760,
               "20/30": 43200, "124/180": 44640, "25/36": 45000, "128/180": 46080,
               "13/18": 46800, "132/180": 47520, "22/30": 47520, "135/180": 48600,
               "140/180": 50400, "7/9": 50400, "154/180": 55440},
    "short": {"11/45": 3960, "4/15": 4320, "14/45": 5040, "7/15": 7560, "8/15": 8640,
              "26/45": 9360, "32/45": 11520},
}
"""DVB-S2X (EN 302 307-2, Tables 17a/17b) rates added to those frame sizes, without the
VL-SNR (punctured/shortened) and medium-frame (32400) codes: frame -> rate -> k_ldpc.
Some share k with an S2 rate (normal 90/180 and 1/2, 18/30 and 3/5, 20/30 and 2/3,
135/180 and 3/4) or with each other (104/180 and 26/45, 132/180 and 22/30, 140/180 and
7/9) but have their own tables."""

K_LDPC = {frame: {**K_LDPC_S2[frame], **K_LDPC_S2X[frame]} for frame in K_LDPC_S2}
"""Frame size -> rate label -> k_ldpc: the DVB-S2 rates, then the DVB-S2X ones."""

RATES = {frame: tuple(rates) for frame, rates in K_LDPC.items()}
"""Frame size -> the rate labels it has (short frames have no 9/10)."""

NAMES = tuple(f"dvbs2-{frame}-{rate}" for frame in K_LDPC for rate in K_LDPC[frame])
"""Registry names, ``dvbs2-<normal|short>-<rate>``."""


def check(frame, rate) -> tuple[str, str]:
    """Validate a (frame, rate) pair; errors name the parameter and its valid values."""
    if not isinstance(frame, str) or frame not in K_LDPC:
        raise ValueError(f"dvbs2: frame={frame!r} is not a DVB-S2 frame size; use one of "
                         f"{', '.join(map(repr, K_LDPC))} (n = 64800, 16200)")
    if not isinstance(rate, str) or rate not in K_LDPC[frame]:
        raise ValueError(f"dvbs2: rate={rate!r} is not a code rate of {frame} frames; use one of "
                         f"{', '.join(map(repr, K_LDPC_S2[frame]))} (DVB-S2) or "
                         f"{', '.join(map(repr, K_LDPC_S2X[frame]))} (DVB-S2X)")
    return frame, rate


@functools.lru_cache(maxsize=None)
def address_table(frame: str, rate: str) -> tuple[np.ndarray, ...]:
    """The standard's address table: one int64 array of parity addresses per 360-bit group."""
    frame, rate = check(frame, rate)
    file = f"dvbs2_{frame}_{rate.replace('/', '_')}.txt"
    text = resources.files(__package__).joinpath("data", file).read_text("ascii")
    rows = tuple(np.array(line.split(), dtype=np.int64) for line in text.splitlines() if line.strip())
    if len(rows) * Z != K_LDPC[frame][rate]:
        raise RuntimeError(f"gpuldpc/codes/data/{file}: {len(rows)} rows, expected "
                           f"{K_LDPC[frame][rate] // Z}")
    return rows


def _info_edges(frame: str, rate: str) -> tuple[np.ndarray, np.ndarray]:
    """(accumulator address, information bit) of every 1 of the information part."""
    n, k = FRAME_LENGTHS[frame], K_LDPC[frame][rate]
    m = n - k
    q = m // Z
    table = address_table(frame, rate)
    group = np.repeat(np.arange(len(table)), [len(r) for r in table])
    x = np.concatenate(table)
    t = np.arange(Z)
    checks = (x[:, None] + t[None, :] * q) % m                   # [entries, 360]
    bits = group[:, None] * Z + t[None, :]
    return checks.ravel(), bits.ravel()


def check_order(m: int) -> np.ndarray:
    """``order[i]``: the QC position ``360 (i mod q) + i // q`` of accumulator/check i (q = m/360)."""
    i = np.arange(m)
    q = m // Z
    return Z * (i % q) + i // q


def layer_order(H_qc: sp.csr_matrix) -> np.ndarray:
    """The rows of ``H_qc`` (checks in QC order) as ``code.H`` stores them: block row by block
    row, each split greedily into classes of checks with disjoint supports (a check joins the
    first class it shares no variable with), classes in order of creation, checks in QC order
    within a class.  ``H = H_qc[layer_order(H_qc)]``."""
    n = H_qc.shape[1]
    order = []
    for start in range(0, H_qc.shape[0], Z):
        used, members = [], []
        for r in range(start, start + Z):
            cols = H_qc.indices[H_qc.indptr[r]:H_qc.indptr[r + 1]]
            for u, rows in zip(used, members):
                if not u[cols].any():
                    u[cols] = True
                    rows.append(r)
                    break
            else:
                u = np.zeros(n, dtype=bool)
                u[cols] = True
                used.append(u)
                members.append([r])
        order.extend(r for rows in members for r in rows)
    return np.array(order, dtype=np.int64)


def check_rows(code) -> np.ndarray:
    """``rows[i]``: the row of ``code.H`` holding the standard's check (accumulator) ``i``."""
    return code.row_of_qc[check_order(code.n - code.k)]


class DvbS2Encoder:
    """Systematic accumulator encoder (5.3.2): ``[batch, k] -> [batch, n]`` uint8.

    Vectorized: the information part A [n-k, k] (CSC over the information bits) gives
    every accumulator's XOR in one sparse product; the accumulation is a cumulative XOR.
    """

    def __init__(self, frame: str, rate: str):
        self.n, self.k = FRAME_LENGTHS[frame], K_LDPC[frame][rate]
        m = self.n - self.k
        checks, bits = _info_edges(frame, rate)
        # Duplicate (check, bit) pairs would cancel over GF(2); the tables have none.
        self._A_T = sp.csr_matrix((np.ones(bits.size, np.int32), (bits, checks)), shape=(self.k, m))
        self.info_positions = np.arange(self.k)
        self.info_positions.setflags(write=False)

    def encode(self, info: np.ndarray) -> np.ndarray:
        batch = info.shape[0]
        acc = (self._A_T.T @ info.T.astype(np.int32)).T          # [batch, n-k] (sparse @ dense)
        parity = np.bitwise_xor.accumulate((np.asarray(acc) & 1).astype(np.uint8), axis=1)
        cw = np.empty((batch, self.n), dtype=np.uint8)
        cw[:, :self.k] = info
        cw[:, self.k:] = parity
        return cw


@dataclass(frozen=True, eq=False)
class DvbS2Code(Code):
    """A DVB-S2 LDPC code (see the module docstring); ``frame`` and ``rate`` as named."""

    frame: str = "normal"
    rate_label: str = "1/2"
    row_of_qc: np.ndarray = None  # row of H holding QC row r (:func:`layer_order`'s inverse)

    @functools.cached_property
    def encoder(self):
        return DvbS2Encoder(self.frame, self.rate_label)

    @property
    def qc_columns(self) -> np.ndarray:
        """The frame's column of each column of the quasi-cyclic form (``qc_form(self).cols``):
        the column order the GPU's sparse kernel decodes in (:mod:`gpuldpc.cuda.sparse_layout`)."""
        return _qc_form(self.frame, self.rate_label).cols


@functools.lru_cache(maxsize=None)
def _dvbs2(frame: str, rate: str) -> DvbS2Code:
    n, k = FRAME_LENGTHS[frame], K_LDPC[frame][rate]
    m = n - k
    checks, bits = _info_edges(frame, rate)
    acc = np.arange(m)
    rows = np.concatenate([checks, acc, acc[1:]])
    cols = np.concatenate([bits, k + acc, k + acc[1:] - 1])
    order = check_order(m)
    H_qc = sp.csr_matrix((np.ones(rows.size, np.uint8), (order[rows], cols)), shape=(m, n))
    if H_qc.nnz != rows.size or H_qc.data.max() != 1:
        raise RuntimeError(f"dvbs2-{frame}-{rate}: repeated entries in the address table")
    layered = layer_order(H_qc)
    row_of_qc = np.empty(m, dtype=np.int64)
    row_of_qc[layered] = np.arange(m)
    row_of_qc.setflags(write=False)
    return DvbS2Code(f"dvbs2-{frame}-{rate}", H_qc[layered], k, standard="dvbs2", frame=frame, rate_label=rate,
                     row_of_qc=row_of_qc)


def dvbs2(frame: str, rate: str) -> DvbS2Code:
    """The DVB-S2 LDPC code of ``frame`` ("normal": n = 64800, "short": n = 16200) and
    ``rate``: the DVB-S2 rates "1/4", "1/3", "2/5", "1/2", "3/5", "2/3", "3/4", "4/5",
    "5/6", "8/9", and "9/10" for normal frames only, or a DVB-S2X rate of that frame
    (:data:`K_LDPC_S2X`: normal "13/45" .. "154/180", short "11/45" .. "32/45").  The
    same object for the same arguments.

    Raises ValueError naming ``frame`` or ``rate`` and their valid values.
    """
    return _dvbs2(*check(frame, rate))


@dataclass(frozen=True)
class QcForm:
    """The quasi-cyclic form of a DVB-S2 code (see :func:`qc_form`).

    ``H[rows][:, cols]`` (new index -> old index) is block-circulant with z = 360 except
    ``missing`` (one (row, column) of the permuted matrix absent from the circulant).

    Attributes
    ----------
    rows, cols : int64 [n-k], [n]
        Permutations: permuted row/column r is H's row/column ``rows[r]``/``cols[r]``.
    entries : int64 [E, 3]
        (block row, block column, shift) of every circulant, shift in the convention of
        :mod:`.qc` (row r of the block has its 1 in column (r + s) mod 360); a block that
        is the sum of several circulants has one entry per circulant.
    missing : (int, int)
        The accumulator's wrap: entry (0, n - 1) of the permuted matrix, i.e. row 0 of
        block (0, nb-1), whose circulant (shift 359) would put a 1 there.
    shape : (int, int)
        (mb, nb) in blocks.
    """

    rows: np.ndarray
    cols: np.ndarray
    entries: np.ndarray
    missing: tuple
    shape: tuple

    def expand(self) -> sp.csr_matrix:
        """The block-circulant matrix of ``entries`` (the missing entry included), uint8 CSR."""
        bi, bj, s = self.entries.T
        r = np.arange(Z)
        rr = (bi[:, None] * Z + r).ravel()
        cc = (bj[:, None] * Z + (r + s[:, None]) % Z).ravel()
        mb, nb = self.shape
        M = sp.csr_matrix((np.ones(rr.size, np.uint8), (rr, cc)), shape=(mb * Z, nb * Z))
        M.data %= 2
        M.eliminate_zeros()
        return M


@functools.lru_cache(maxsize=None)
def _qc_form(frame: str, rate: str) -> QcForm:
    n, k = FRAME_LENGTHS[frame], K_LDPC[frame][rate]
    m = n - k
    q = m // Z
    # Parity bit p_c goes to new column k + check_order(m)[c], as its check does.
    cols = np.concatenate([np.arange(k), k + np.argsort(check_order(m))])
    entries = []
    for j, addrs in enumerate(address_table(frame, rate)):
        for x in addrs:                        # bit 360j + t -> new row 360 (x mod q) + (x//q + t) mod 360
            entries.append((x % q, j, (-(x // q)) % Z))
    kb, mb = k // Z, q
    for a in range(mb):                        # p_i (new column 360 a + b) in checks i and i + 1
        entries.append((a, kb + a, 0))
        if a >= 1:
            entries.append((a, kb + a - 1, 0))
    entries.append((0, kb + mb - 1, Z - 1))    # check 0 + q b holds p_{q b - 1}: new col 360 (q-1) + b-1
    return QcForm(_dvbs2(frame, rate).row_of_qc, cols, np.array(entries, dtype=np.int64), (0, n - 1),
                  (mb, kb + mb))


def qc_form(code_or_frame, rate: str | None = None) -> QcForm:
    """The quasi-cyclic form of a DVB-S2 code: ``qc_form(code)`` or ``qc_form(frame, rate)``.

    ``code.H[f.rows][:, f.cols]`` equals ``f.expand()`` with entry ``f.missing`` removed
    (``f.rows``: ``code.row_of_qc``, see :func:`layer_order`); the standard's check i is QC row
    ``check_order(n - k)[i]``, row ``check_rows(code)[i]`` of ``code.H``.
    """
    if isinstance(code_or_frame, DvbS2Code):
        return _qc_form(code_or_frame.frame, code_or_frame.rate_label)
    return _qc_form(*check(code_or_frame, rate))

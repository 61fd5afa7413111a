"""Transmission shaping: puncturing, shortening and repetition over a mother code.

A :class:`Shaping` says how the ``n`` transmitted bits are taken from a mother codeword
of length ``n_mother`` and how received LLRs go back:

* ``transmitted`` int64 [n]: the mother position of each transmitted bit, in order of
  transmission.  A position may occur several times (repetition, a circular buffer
  read past its end, retransmissions concatenated by :func:`combine`): the receiver
  adds its LLRs (maximum-ratio combining of soft bits).
* ``shortened`` (sorted int64): mother positions whose bits are known zeros (shortening,
  the filler bits of 5G NR); never transmitted.  The receiver loads them as a certain 0,
  ``+LLR_SATURATION`` (:mod:`gpuldpc.bad_llr`, the largest LLR every decoder takes in; the
  fixed-point and float16 paths clip it to their own maximum; int8 and float16 input are
  recovered in their own dtype with their largest value, :class:`LlrFormat`).  They must be information
  positions of the mother code: the encoder sets them to zero.
* ``punctured`` (derived): every other mother position -- neither transmitted nor known;
  the receiver loads LLR 0 (no information) and the decoder decides them.

A :class:`ShapedCode` is a mother :class:`~gpuldpc.codes.Code` plus a Shaping, with the
small interface the encoder and the decoder front read: ``n`` (transmitted bits), ``k``
(information bits, shortened ones removed), ``encode(info) -> [batch, n]``,
``recover(llr) -> mother LLRs [batch, mother.n]``.  :class:`gpuldpc.Decoder` takes a
ShapedCode: it builds the backend for the code it decodes (``decoded``, see below), maps
each batch of ``n`` received LLRs straight into that code's LLRs (one host pass, or on the
GPU for the cuda backend's throughput preset: :class:`ShapedBackend`) and
returns ``DecodeResult.bits`` as the hard decisions of the decoded positions
[batch, len(decoded_positions)] and ``info`` as the ``k`` information bits, shortened
bits dropped.

Pruning (:func:`prune`; ``ShapedCode.decoded``, ``decoded_positions``).  A block column c
of a QC mother whose z positions are all punctured and which has one nonzero block left
(row r) carries nothing: its message to row r is its channel LLR 0 plus nothing, so every
message row r sends to the other columns has magnitude 0 (min-sum: the minimum includes
0; offset min-sum: max(0 - beta, 0); sum-product: tanh(0) = 0), and removing row r and
column c changes no other message.  Repeated until nothing changes (a removed row can
leave another punctured column with one block, or none), this leaves a QC code -- the
sub-base-matrix of the kept block rows and columns -- whose decoding gives the same
decisions on the kept positions as the full mother graph, with any schedule, algorithm
and precision; 5G NR at high rates loses most of its extension rows (BG1, k = 8448, rate
8/9: 5 of 46 block rows and 27 of 68 columns are left).  A zero syndrome on the kept rows
means a valid mother codeword exists: undoing the removals in reverse order, each
removed column is the one unknown of its removed row.  (The full graph's own syndrome
also checks the removed rows against the removed columns' decisions, which lag one
update behind; its ``valid`` and early stop can differ from the pruned code's by that
lag, never its decisions with early stop off.)  Columns holding information bits and
columns left without any check that are sent or shortened are never removed; a mother
without QC structure is decoded as it is (``decoded`` is the mother itself, as it is
when nothing can be removed).

Used by :func:`gpuldpc.codes.nr` (5G NR rate matching) and :func:`shaped` (any code)::

    import gpuldpc as gl
    wifi = gl.codes.wifi(648, "1/2")
    code = gl.codes.shaped(wifi, shortened=range(300, 324), punctured=range(600, 648))
    code.n, code.k                       # 576 transmitted bits, 300 information bits
    dec = gl.Decoder(code)               # takes [batch, 576] LLRs
"""
from __future__ import annotations

import dataclasses
import functools
import threading
from functools import cached_property

import numpy as np

from .. import packed_bits
from ..bad_llr import LLR_SATURATION
from ..float16 import FLOAT16_MAX
from ..result import info_index
from ..row_copy import by_rows
from .code import Code
from .qc import qc_expand


def _positions(name: str, values, n_mother: int) -> np.ndarray:
    """``values`` as int64 positions, checked to lie in 0..n_mother-1."""
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values)
    if arr.size == 0:
        return np.zeros(0, np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a 1-D sequence of integer positions, got {arr.dtype} {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.min() < 0 or arr.max() >= n_mother:
        raise ValueError(f"{name} must hold positions in 0..{n_mother - 1} (the mother code's length "
                         f"{n_mother}), got values in {arr.min()}..{arr.max()}")
    return arr


class LlrFormat:
    """How LLRs of one dtype are recovered: the value a known zero (shortened bit) gets and
    how the LLRs of a position received more than once are added.

    ``float32``: known zeros ``+LLR_SATURATION`` (2^64), plain float32 sums (the kernels'
    load clamps beyond 2^64).  ``float16``: known zeros +65504 (the largest float16), each
    sum rounded to float16 and saturated to +-65504 (not overflowed to inf, which the
    bad-LLR rule would flag).  ``int8``: known zeros +127, each sum saturated to +-127
    (never wrapped).  Both narrow formats are scaled by the kernels' ``llr_scale`` on load,
    so a known zero is the largest LLR the input can carry (``127 * llr_scale``).  NaN and
    +-inf (float formats) pass through every copy and sum unchanged.
    """

    def __init__(self, dtype, certain: float, limit: float | None, wide):
        self.dtype, self.certain, self.limit, self.wide = np.dtype(dtype), certain, limit, np.dtype(wide)

    def add(self, cur, val, out=None):
        """``cur + val`` saturated (into ``out``, a view where ``cur`` lies, or a new array)."""
        if self.limit is None:
            return np.add(cur, val, out=out)
        with np.errstate(invalid="ignore"):          # inf + -inf: NaN, flagged by the decoder
            total = np.add(cur, val, dtype=self.wide)
        np.clip(total, -self.limit, self.limit, out=total,
                where=np.isfinite(total) if self.wide.kind == "f" else True)
        if out is None:
            return total.astype(self.dtype)
        out[...] = total
        return out

    def __repr__(self):
        return f"LlrFormat({self.dtype}, certain={self.certain:g}, limit={self.limit})"


LLR_FORMATS = {f.dtype: f for f in (LlrFormat(np.float32, LLR_SATURATION, None, np.float32),
                                    LlrFormat(np.float16, FLOAT16_MAX, FLOAT16_MAX, np.float32),
                                    LlrFormat(np.int8, 127, 127, np.int16))}
"""dtype -> :class:`LlrFormat`: the LLR dtypes :meth:`Shaping.recover` takes and writes."""


class _Moves:
    """Copies or adds ``src[:, idx]`` into ``dst[:, pos]`` (or fills ``dst[:, pos]`` with a
    constant, ``idx`` None) as slice copies where idx and pos run in steps of 1 together
    (a circular buffer read: a few long runs, memcpy speed), else as one fancy-index
    operation."""

    def __init__(self, idx, pos):
        self.idx, self.pos = idx, pos
        if pos.size == 0:
            self.runs = []
            return
        step = np.diff(pos) != 1
        if idx is not None:
            step |= np.diff(idx) != 1
        cuts = np.flatnonzero(step) + 1
        starts, ends = np.r_[0, cuts], np.r_[cuts, pos.size]
        # runs of 16 values or more on average: slices; else fancy indexing (runs = None)
        self.runs = ([(0 if idx is None else int(idx[a]), int(pos[a]), int(b - a)) for a, b in zip(starts, ends)]
                     if 16 * starts.size <= pos.size else None)

    def fill(self, dst, value):
        if self.runs is None:
            dst[:, self.pos] = value
            return
        for _, d0, length in self.runs:
            dst[:, d0:d0 + length] = value

    def copy(self, dst, src):
        if self.runs is None:
            dst[:, self.pos] = src[:, self.idx]
            return
        for s0, d0, length in self.runs:
            dst[:, d0:d0 + length] = src[:, s0:s0 + length]

    def add(self, dst, src, fmt: LlrFormat):
        if self.runs is None:
            dst[:, self.pos] = fmt.add(dst[:, self.pos], src[:, self.idx])
            return
        for s0, d0, length in self.runs:
            view = dst[:, d0:d0 + length]
            fmt.add(view, src[:, s0:s0 + length], out=view)


class Shaping:
    """Which mother positions are transmitted (in order, repeats allowed), which are known
    zeros (shortened); the rest are punctured.  Immutable; see the module docstring.

    Parameters
    ----------
    n_mother : int
        Length of the mother code.
    transmitted : sequence of int, length n >= 1
        Mother position of each transmitted bit.
    shortened : sequence of int
        Mother positions known to be zero; must not be transmitted.
    """

    def __init__(self, n_mother: int, transmitted, shortened=()):
        if isinstance(n_mother, bool) or not isinstance(n_mother, (int, np.integer)) or n_mother < 1:
            raise ValueError(f"n_mother must be an integer >= 1, got {n_mother!r}")
        self.n_mother = int(n_mother)
        sent = _positions("transmitted", transmitted, self.n_mother)
        if sent.size == 0:
            raise ValueError("transmitted must hold at least one position")
        known = np.unique(_positions("shortened", shortened, self.n_mother))
        clash = np.intersect1d(sent, known)
        if clash.size:
            raise ValueError(f"shortened positions cannot be transmitted: {clash[:8].tolist()} are both")
        mask = np.zeros(self.n_mother, bool)
        mask[sent] = True
        mask[known] = True
        self.transmitted = sent
        self.shortened = known
        self.punctured = np.flatnonzero(~mask)
        for a in (self.transmitted, self.shortened, self.punctured):
            a.setflags(write=False)
        self._groups = [_Moves(idx, pos) for idx, pos in self._repeat_groups(sent)]
        self._punctured, self._shortened = _Moves(None, self.punctured), _Moves(None, known)

    @staticmethod
    def _repeat_groups(sent: np.ndarray):
        """[(transmitted indices, mother positions)]: the r-th occurrences of each position,
        so that every group's positions are distinct and recovery is a few fancy-index adds."""
        order = np.argsort(sent, kind="stable")
        sorted_pos = sent[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sorted_pos)) + 1]
        occurrence = np.arange(sent.size) - np.repeat(starts, np.diff(np.r_[starts, sent.size]))
        groups = []
        for r in range(int(occurrence.max()) + 1):
            idx = np.sort(order[occurrence == r])
            groups.append((idx, sent[idx]))
        return groups

    @property
    def n(self) -> int:
        """Transmitted bits per codeword."""
        return int(self.transmitted.size)

    @property
    def repeats(self) -> bool:
        """Some mother position is transmitted more than once."""
        return len(self._groups) > 1

    def select(self, codewords) -> np.ndarray:
        """Mother codewords [batch, n_mother] -> transmitted bits [batch, n] (1-D -> 1-D)."""
        cw = np.asarray(codewords)
        if cw.shape[-1] != self.n_mother or cw.ndim not in (1, 2):
            raise ValueError(f"codewords must have shape [batch, {self.n_mother}], got {cw.shape}")
        return cw[..., self.transmitted]

    def recover(self, llr, out: np.ndarray | None = None, add: bool = True) -> np.ndarray:
        """Received LLRs [batch, n] -> mother-code LLRs [batch, n_mother], float32, float16
        or int8 (:data:`LLR_FORMATS`): the dtype of ``out``, else of ``llr`` (other input
        becomes float32).

        Transmitted positions get the sum of their received LLRs, punctured ones 0,
        shortened ones the format's certain 0 (float32 ``+LLR_SATURATION``, float16
        +65504, int8 +127).  A position received more than once adds its LLRs in the
        order of transmission, each sum saturated to the format's limit (float16 +-65504,
        rounded to float16; int8 +-127, never wrapped; float32: plain sums), so the int8
        recovery of values in -127..127 is their float32 recovery clipped to +-127 wherever
        a position is received at most twice or no partial sum leaves the range.  ``out``
        ([batch, n_mother] of the format): the LLRs are *added* to it (soft combining of
        retransmissions: recover each into the same array; the same saturating sums),
        shortened positions set again; it is returned.  With ``add=False`` ``out`` is
        overwritten instead (a page-locked buffer the decoder reuses).  ``llr`` must have
        ``out``'s dtype or one that casts to it within its kind (float64 into float32,
        int8 into float32; never floats into int8: quantize them yourself, with the
        decoder's ``llr_scale``).  NaN and +-inf pass through unchanged, so the decoder's
        bad-LLR rule (:mod:`gpuldpc.bad_llr`) still sees and flags them.
        """
        arr = llr if type(llr) is np.ndarray else np.asarray(llr)
        dtype = out.dtype if out is not None else arr.dtype if arr.dtype in LLR_FORMATS else np.dtype(np.float32)
        fmt = LLR_FORMATS.get(dtype)
        if fmt is None:
            raise ValueError(f"out must be one of {', '.join(map(str, LLR_FORMATS))}, got {dtype}")
        if arr.dtype != dtype:
            if not np.can_cast(arr.dtype, dtype, "same_kind"):
                raise TypeError(f"{arr.dtype} LLRs cannot be recovered into {dtype}: quantize them first "
                                f"(e.g. np.clip(np.round(llr / llr_scale), -127, 127).astype(np.int8))")
            arr = arr.astype(dtype)
        one = arr.ndim == 1
        arr2 = arr[None] if one else arr
        if arr2.ndim != 2 or arr2.shape[1] != self.n:
            raise ValueError(f"LLRs must have shape [batch, {self.n}], got {np.shape(llr)}")
        want = (self.n_mother,) if one else (arr2.shape[0], self.n_mother)
        if out is None:
            out = np.empty(want, dtype)
            add = False
        if out.shape != want:
            raise ValueError(f"out must have shape {want}, got {out.shape}")
        view = out if out.ndim == 2 else out[None]
        rest = self._groups
        if not add:                           # every mother position written once, no zeroing pass
            self._groups[0].copy(view, arr2)
            self._punctured.fill(view, 0)
            rest = self._groups[1:]
        for moves in rest:
            moves.add(view, arr2, fmt)
        self._shortened.fill(view, fmt.certain)
        return out[0] if one and out.ndim == 2 else out

    def concat(self, other: "Shaping") -> "Shaping":
        """Both transmissions one after the other (same mother, same shortened positions):
        the shaping of a retransmission combined with the first one."""
        if other.n_mother != self.n_mother or not np.array_equal(other.shortened, self.shortened):
            raise ValueError("only shapings of the same mother code with the same shortened "
                             "positions can be combined")
        return Shaping(self.n_mother, np.r_[self.transmitted, other.transmitted], self.shortened)

    def __repr__(self):
        return (f"Shaping(n_mother={self.n_mother}, n={self.n}, shortened={self.shortened.size}, "
                f"punctured={self.punctured.size}, repeats={self.repeats})")


def prune(mother: Code, shaping: Shaping, keep=()) -> tuple[Code, np.ndarray]:
    """The QC code a shaped code is decoded on, and the mother positions it keeps.

    Removes, while one is left, a block row r and a block column c where every position of
    c is punctured (``shaping.punctured``), c has exactly one nonzero block among the
    rows left (in row r), c holds none of ``keep`` (mother positions whose decisions are
    wanted: the information bits), and no column that is sent or shortened is left
    without a block; and a punctured column without any block left (none of ``keep``).
    See the module docstring for why the decisions on the kept positions do not change.

    Returns ``(code, positions)``: ``code`` a binary QC :class:`Code` (the sub-base-matrix
    of the kept block rows and columns, in mother order; ``code.k`` is the mother's k
    less z per column removed without a row), ``positions`` int64, the mother position of
    each of its ``code.n`` columns (increasing).  ``code`` is ``mother`` itself, and
    ``positions`` 0..n-1, when the mother has no QC base matrix or nothing is removed.
    """
    if mother.base is None or not mother.z or not mother.is_binary:
        return mother, np.arange(mother.n)
    z = int(mother.z)
    base = np.asarray(mother.base)
    mb, nb = base.shape
    punct = np.zeros(mother.n, bool)
    punct[shaping.punctured] = True
    held = np.zeros(mother.n, bool)
    held[np.asarray(keep, dtype=np.int64)] = True
    free = punct.reshape(nb, z).all(axis=1) & ~held.reshape(nb, z).any(axis=1)
    nz = base >= 0
    rows, cols = np.ones(mb, bool), np.ones(nb, bool)
    changed = True
    while changed:
        changed = False
        degree = (nz & rows[:, None]).sum(axis=0)
        for c in np.flatnonzero(cols & free):
            if degree[c] == 0:
                cols[c], changed = False, True
                continue
            if degree[c] != 1:
                continue
            r = int(np.flatnonzero(nz[:, c] & rows)[0])
            after = degree - nz[r]
            if ((after == 0) & cols & ~free & (np.arange(nb) != c)).any():
                continue                          # a sent or shortened column would lose its last check
            rows[r], cols[c] = False, False
            degree = after
            changed = True
    if rows.all() and cols.all():
        return mother, np.arange(mother.n)
    return _pruned_code(mother, tuple(np.flatnonzero(rows)), tuple(np.flatnonzero(cols))), \
        (np.flatnonzero(cols)[:, None] * z + np.arange(z)).ravel()


@functools.lru_cache(maxsize=64)
def _pruned_code(mother: Code, rows: tuple, cols: tuple) -> Code:
    """The sub-code of ``mother``'s base matrix at block ``rows`` x ``cols`` (one object per
    mother and selection, so that backends and encoders built on it are shared)."""
    base = np.asarray(mother.base)[np.ix_(rows, cols)]
    mb, nb = mother.base.shape
    # each removed row took its own column (z independent checks less, z positions less):
    # k changes only by the columns removed without a row
    k = mother.k - mother.z * ((nb - len(cols)) - (mb - len(rows)))
    return Code(f"{mother.name}-pruned-{len(rows)}x{len(cols)}", qc_expand(base, mother.z), k,
                base=base, z=mother.z)


class ShapedCode:
    """A mother code transmitted through a :class:`Shaping`; see the module docstring.

    Attributes
    ----------
    name : str
    mother : Code
        The code the decoder runs on (binary).
    shaping : Shaping
    n : int
        Transmitted bits per codeword (the length of ``encode``'s output and of the
        decoder's LLR input).
    k : int
        Information bits (the mother's minus the shortened ones).
    info_positions : int64 [k]
        Mother positions of the information bits.
    decoded : Code
        The code the decoder runs on: the mother pruned of the block rows and columns
        that carry nothing (:func:`prune`), or the mother itself.
    decoded_positions : int64 [decoded.n]
        Mother position of each of ``decoded``'s columns, increasing: ``DecodeResult.bits``
        holds the hard decisions at these positions.
    decoded_shaping : Shaping
        The transmission in ``decoded``'s positions (its :meth:`Shaping.recover` fills
        the decoder's LLRs).
    """

    q = 2
    is_binary = True
    bits_per_symbol = 1

    def __init__(self, mother: Code, shaping: Shaping, name: str | None = None):
        if not isinstance(mother, Code) or not mother.is_binary:
            raise TypeError("the mother code must be a binary gpuldpc Code")
        if shaping.n_mother != mother.n:
            raise ValueError(f"shaping is for a mother code of length {shaping.n_mother}, "
                             f"code {mother.name!r} has n={mother.n}")
        info = np.asarray(mother.info_positions)
        keep = ~np.isin(info, shaping.shortened)
        if int(keep.sum()) != info.size - shaping.shortened.size:
            raise ValueError(f"shortened positions must be information positions of {mother.name!r} "
                             "(the encoder sets them to 0)")
        self.mother, self.shaping = mother, shaping
        self.name = name or f"{mother.name}-shaped-n{shaping.n}"
        self._keep = np.flatnonzero(keep)                  # index into the mother's info order
        self.info_positions = info[keep]
        self.info_positions.setflags(write=False)

    @property
    def n(self) -> int:
        return self.shaping.n

    @property
    def k(self) -> int:
        return int(self.info_positions.size)

    @property
    def rate(self) -> float:
        return self.k / self.n

    def encode_mother(self, info) -> np.ndarray:
        """info [batch, k] -> mother codewords uint8 [batch, mother.n] (shortened bits 0)."""
        info = np.asarray(info)
        one = info.ndim == 1
        info2 = np.atleast_2d(info)
        if info2.ndim != 2 or info2.shape[1] != self.k:
            raise ValueError(f"code {self.name!r}: info must have shape [batch, {self.k}], got {info.shape}")
        full = np.zeros((info2.shape[0], self.mother.k), np.uint8)
        full[:, self._keep] = info2
        cw = self.mother.encode(full)
        return cw[0] if one else cw

    def encode(self, info) -> np.ndarray:
        """info [batch, k] -> transmitted bits uint8 [batch, n] (1-D -> 1-D)."""
        return self.shaping.select(self.encode_mother(info))

    def recover(self, llr, out: np.ndarray | None = None, add: bool = True) -> np.ndarray:
        """Received LLRs [batch, n] -> mother LLRs [batch, mother.n] in their dtype (float32,
        float16 or int8: :meth:`Shaping.recover`)."""
        return self.shaping.recover(llr, out, add)

    @cached_property
    def _pruning(self) -> tuple[Code, np.ndarray]:
        code, positions = prune(self.mother, self.shaping, self.info_positions)
        positions.setflags(write=False)
        return code, positions

    @property
    def decoded(self) -> Code:
        return self._pruning[0]

    @property
    def decoded_positions(self) -> np.ndarray:
        return self._pruning[1]

    @cached_property
    def decoded_shaping(self) -> Shaping:
        code, positions = self._pruning
        if code is self.mother:
            return self.shaping
        index = np.full(self.mother.n, -1, np.int64)
        index[positions] = np.arange(positions.size)
        s = self.shaping               # removed columns are all punctured: every index below is >= 0
        return Shaping(code.n, index[s.transmitted], index[s.shortened])

    @cached_property
    def decoded_info(self) -> np.ndarray:
        """Index of each information bit in ``decoded_positions`` (``info = bits[:, decoded_info]``)."""
        index = np.searchsorted(self.decoded_positions, self.info_positions)
        index.setflags(write=False)
        return index

    def syndrome(self, words) -> np.ndarray:
        """Syndrome on the decoded code's checks of its words [batch, len(decoded_positions)]
        (``DecodeResult.bits``); zero means a valid mother codeword with these bits exists."""
        return self.decoded.syndrome(words)

    def __repr__(self):
        return f"ShapedCode({self.name!r}, n={self.n}, k={self.k}, mother={self.mother.name!r})"


def shaped(code: Code, punctured=(), shortened=(), repeated=(), name: str | None = None) -> ShapedCode:
    """Puncture, shorten and repeat bits of any binary code.

    The transmitted bits are the mother positions that are neither punctured nor
    shortened, in increasing order, followed by the ``repeated`` positions in the order
    given (each sent once more).

    Parameters
    ----------
    code : Code
        Binary mother code.
    punctured : sequence of int
        Positions not sent (the receiver loads LLR 0).
    shortened : sequence of int
        Information positions fixed to 0 and not sent (the receiver loads a certain 0).
    repeated : sequence of int
        Positions sent a second time at the end (their LLRs are added on receipt).
    name : str, optional
    """
    if not isinstance(code, Code):
        raise TypeError(f"code must be a gpuldpc Code, got {type(code).__name__}")
    p = _positions("punctured", punctured, code.n)
    s = _positions("shortened", shortened, code.n)
    r = _positions("repeated", repeated, code.n)
    if np.intersect1d(p, s).size:
        raise ValueError("a position cannot be both punctured and shortened")
    keep = np.ones(code.n, bool)
    keep[p] = False
    keep[s] = False
    if np.isin(r, np.r_[p, s]).any():
        raise ValueError("repeated positions must be transmitted ones (not punctured or shortened)")
    shaping = Shaping(code.n, np.r_[np.flatnonzero(keep), r], s)
    return ShapedCode(code, shaping, name)


def combine(*codes: ShapedCode, name: str | None = None) -> ShapedCode:
    """One code for several transmissions of the same information (HARQ soft combining).

    ``combine(a, b).encode(info)`` is ``[a.encode(info), b.encode(info)]`` side by side, and
    its decoder takes the received LLRs of ``a`` and ``b`` side by side, adding those of
    the same mother position (e.g. 5G NR redundancy versions 0 and 2 of one code block)."""
    if not codes or not all(isinstance(c, ShapedCode) for c in codes):
        raise TypeError("combine takes one or more ShapedCode objects")
    first = codes[0]
    shaping = first.shaping
    for c in codes[1:]:
        if c.mother is not first.mother:
            raise ValueError(f"codes {first.name!r} and {c.name!r} have different mother codes")
        shaping = shaping.concat(c.shaping)
    return ShapedCode(first.mother, shaping, name or "+".join(c.name for c in codes))


class ShapedBackend:
    """A backend of ``code.decoded`` (the pruned mother, :func:`prune`) behind the decoder
    front: LLRs [batch, n] are recovered straight into the decoded code's LLRs
    [batch, decoded.n] (``code.decoded_shaping``, one host pass, rows split over threads:
    :func:`gpuldpc.row_copy.by_rows`) before the backend decodes them, in the backend's
    LLR dtype (``llr_dtypes``: float32, or the cuda option ``llr_dtype="int8"`` /
    ``"float16"``: the E LLRs come in and are recovered in that dtype, :class:`LlrFormat`,
    and the front door takes them as the backend does); ``bits``
    are the decisions at ``code.decoded_positions``, ``info`` the k information bits
    (shortened bits dropped) and ``valid`` the syndrome of the decoded code's checks.  A
    backend with page-locked input (``pinned_llr``, cuda) gets the recovery written into
    page-locked buffers it copies as they lie, taken from a free list and given back when
    the call (or the ticket's result) is done.  GPU arrays of E LLRs (``decode_device``, DLPack,
    ``__cuda_array_interface__``) and ``out_device`` are offered where the GPU recovers
    (``on_device``: ``device_ids`` and ``out_device`` are the decoder's); with the host recovery
    the front door refuses them, and page-locked input of the E LLRs is not offered.

    Where the recovery runs, one rule per backend (:func:`make_backend`): a backend module
    with ``make_shaped`` returning a decoder (cuda, unless its latency preset's kernel is a
    resident one: :func:`gpuldpc.cuda.decoder.latency_kernel_is_resident`) takes the E LLRs
    itself (``on_device=True``: handed over as they are, registered in place or staged like
    any input, recovered by a kernel chunk by chunk, :mod:`gpuldpc.cuda.recovery`, bit for
    bit this recovery; ``pinned_llr`` then gives page-locked [batch, E] arrays; its results'
    ``info`` is already this code's, packed C2 info shifted on the GPU); the others (cpu,
    reference, the cuda latency preset of a resident kernel) get the host recovery above."""

    def __init__(self, impl, code: ShapedCode, on_device: bool = False, packed: bool = False):
        self._impl, self._code, self.on_device, self._packed = impl, code, bool(on_device), bool(packed)
        self._shaping, self._n = code.decoded_shaping, code.decoded.n
        self._pinned = getattr(impl, "pinned_llr", None)
        self.llr_dtypes = tuple(np.dtype(d) for d in getattr(impl, "llr_dtypes", (np.float32,)))
        unknown = [d for d in self.llr_dtypes if d not in LLR_FORMATS]
        if unknown:
            raise TypeError(f"code {code.name!r}: rate recovery writes {', '.join(map(str, LLR_FORMATS))} "
                            f"LLRs; the backend takes {', '.join(map(str, self.llr_dtypes))}")
        self._dtype = self.llr_dtypes[0]
        self._free: list[np.ndarray] = []
        self._lock = threading.Lock()
        self._info_at = info_index(code)           # a slice (a view, no copy) where it can be
        self._can_submit = hasattr(impl, "submit") and hasattr(impl, "result")
        if self.on_device:
            self._pinned = None
            self.pinned_llr = impl.pinned_llr
            for attr in ("device_ids", "device_ordinal"):     # GPU arrays of E LLRs (cuda)
                if hasattr(impl, attr):
                    setattr(self, attr, getattr(impl, attr))
        for attr in ("preferred_batch", "close"):
            if hasattr(impl, attr):
                setattr(self, attr, getattr(impl, attr))

    def _info(self, res):
        if self.on_device:          # the decoder gives the shaped code's info itself (make_shaped)
            return res
        if self._packed:                                   # gl.Decoder(packed=True): packed_bits
            return res._replace(info=packed_bits.info_of(res.bits, self._n, self._info_at))
        return res._replace(info=res.bits[:, self._info_at])

    def _recovered(self, llr) -> tuple[np.ndarray, np.ndarray | None]:
        """(the decoded code's LLRs of ``llr``, the pool's page-locked block holding them or None)."""
        rows, shaping = llr.shape[0], self._shaping
        block = None
        if self._pinned is None:
            out = np.empty((rows, self._n), self._dtype)
        else:
            with self._lock:
                fits = [b for b in self._free if b.shape[0] >= rows]
                block = min(fits, key=len) if fits else None
                if block is not None:
                    self._free.remove(block)
            if block is None:
                block = self._pinned(rows)
            out = block if block.shape[0] == rows else block[:rows]   # the block itself: the engine
            # remembers the address of the array it was handed last (cuda latency preset, resident)
        by_rows(lambda a, b: shaping.recover(llr[a:b], out[a:b], add=False), rows, out.nbytes)
        return out, block

    def _release(self, block):
        if block is not None:
            with self._lock:
                self._free.append(block)

    def decode(self, llr, out=None, out_device=False):
        if self.on_device:
            return self._info(self._impl.decode(llr, out, out_device))
        decoded, block = self._recovered(llr)
        try:
            return self._info(self._impl.decode(decoded, out))
        finally:
            self._release(block)

    @property
    def submit(self):
        """``submit(llr, out) -> handle`` where the backend has one, else None (the front then
        decodes on a worker thread).  A property, not a bound method stored on the object: that
        would be a reference cycle, keeping the backend's GPU objects for the cyclic collector."""
        return self._submit if self._can_submit else None

    def _submit(self, llr, out=None, out_device=False):
        if self.on_device:
            return None, self._impl.submit(llr, out, out_device)
        decoded, block = self._recovered(llr)
        return block, self._impl.submit(decoded, out)     # the recovered LLRs live as long as the handle

    def result(self, handle):
        try:
            return self._info(self._impl.result(handle[1]))
        finally:
            self._release(handle[0])


def make_backend(module, code, settings):
    """``module.make(code, settings)``, for a ShapedCode on ``code.decoded`` (its pruned
    mother) behind a :class:`ShapedBackend` (the decoder front's one hook for shaping).

    The ShapedBackend does not apply ``positive_llr_bit`` itself, so the front hands it
    LLRs already in the core's sign (positive means 0); the decoded code's backend is built
    with ``positive_llr_bit=0`` so that it does not negate them a second time.  A module with
    ``make_shaped(code, settings)`` (cuda) is asked first: a decoder it returns takes the E
    LLRs and recovers them itself (None: the host recovery)."""
    if isinstance(code, ShapedCode):
        if getattr(settings, "positive_llr_bit", 0):
            settings = dataclasses.replace(settings, positive_llr_bit=0)
        own = getattr(module, "make_shaped", None)
        impl = own(code, settings) if own is not None else None
        packed = settings.packed
        if impl is not None:
            return ShapedBackend(impl, code, on_device=True, packed=packed)
        return ShapedBackend(module.make(code.decoded, settings), code, packed=packed)
    return module.make(code, settings)

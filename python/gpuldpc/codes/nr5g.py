"""5G NR LDPC codes (3GPP TS 38.212): base graphs, lifting, rate matching and recovery.

Mother codes (the registry's ``nr-bg1-z<Zc>`` and ``nr-bg2-z<Zc>``, 2 x 51 codes):
base graph 1 (46 x 68 blocks, 22 systematic columns) and base graph 2 (42 x 52 blocks,
10 systematic columns) of Tables 5.3.2-2/-3 (``data/nr_bg1.txt``, ``data/nr_bg2.txt``),
lifted to one of the 51 lifting sizes Zc of Table 5.3.2-1 (eight sets iLS = 0..7,
Zc = a * 2^j <= 384): block (i, j) is the identity shifted right by ``V_ij mod Zc``
(5.3.2; the convention of :mod:`.qc`).  n = 68 Zc or 52 Zc, k = 22 Zc or 10 Zc (H has full
rank); encoded in linear time by :class:`gpuldpc.encode.CoreExtensionEncoder`.

A code block, :func:`nr` (a :class:`~gpuldpc.codes.shaping.ShapedCode`):

* base graph (6.2.2 / 7.2.2): BG2 if A <= 292, or A <= 3824 and R <= 0.67, or R <= 0.25,
  else BG1, with A = k (the code block's bits, CRC included) and R = k / E, as Sionna's
  ``LDPC5GEncoder`` takes them (a transport block of one code block; the standard's A is
  the payload before its CRC);
* lifting size (5.3.2): K_b = 22 for BG1; for BG2 10, 9, 8 or 6 as K' = k > 640, > 560,
  > 192 or not; Zc = the smallest lifting size with K_b Zc >= K'; K = 22 Zc (BG1) or
  10 Zc (BG2); the K - K' filler bits c_{K'}..c_{K-1} are known zeros (shortened);
* the first 2 Zc systematic bits are never transmitted (punctured): the encoder's output
  d has N = 66 Zc (BG1) or 50 Zc (BG2) bits, d_i = c_{i + 2 Zc};
* rate matching (5.4.2.1): circular buffer d_0..d_{N_cb - 1} with N_cb = N, or
  min(N, N_ref) with limited-buffer rate matching (LBRM, ``n_ref``); starting position
  k0 of redundancy version rv (Table 5.4.2.1-2): 0, floor(17 N_cb / (66 Zc)) Zc,
  floor(33 N_cb / (66 Zc)) Zc, floor(56 N_cb / (66 Zc)) Zc for BG1 and 0, 13, 25, 43
  over 50 for BG2; bit selection reads E bits from k0 on, cyclically, skipping filler
  bits (a buffer shorter than E repeats);
* bit interleaving (5.4.2.2), optional (``qm``, the modulation order):
  f_{i + j Qm} = e_{i E/Qm + j}.

Rate recovery is the inverse (:meth:`Shaping.recover`): each received LLR is added into
its mother position (repeated and retransmitted bits combine), filler bits become certain
zeros, punctured and unsent bits LLR 0.  ``gl.Decoder(gl.codes.nr(k, e))`` takes the E
received LLRs; ``gl.codes.combine(c_rv0, c_rv2)`` decodes two redundancy versions of one
block together.
"""
from __future__ import annotations

import functools
from importlib import resources

import numpy as np

from .code import Code
from .qc import qc_expand
from .shaping import ShapedCode, Shaping, combine  # noqa: F401  (combine: see docstring)

LIFTING_SETS = tuple(tuple(a << j for j in range(8) if a << j <= 384) for a in (2, 3, 5, 7, 9, 11, 13, 15))
"""Table 5.3.2-1: the lifting sizes of set iLS = 0..7 (Zc = a * 2^j <= 384, a = 2, 3, 5, .., 15)."""

LIFTING_SIZES = tuple(sorted(z for s in LIFTING_SETS for z in s))
"""All 51 lifting sizes, increasing."""

SET_INDEX = {z: i for i, s in enumerate(LIFTING_SETS) for z in s}
"""Lifting size -> its set index iLS."""

BASE_SHAPE = {1: (46, 68), 2: (42, 52)}
"""Base graph -> (rows, columns) of its base matrix."""

SYSTEMATIC_COLUMNS = {1: 22, 2: 10}
"""Base graph -> K/Zc, the systematic columns of the mother code."""

K_MAX = {1: 8448, 2: 3840}
"""Base graph -> K_cb, the largest code block (5.2.2); larger blocks need segmentation."""

K_MIN = 12
"""Smallest k taken (as Sionna's LDPC5GEncoder): below it filler bits would reach the
punctured columns."""

RATE_MAX = 0.95
"""Largest k/E: TS 38.214 5.1.3.1 (a UE skips decoding above an effective rate of 0.95)."""

K0_NUMERATORS = {1: (0, 17, 33, 56), 2: (0, 13, 25, 43)}
"""Table 5.4.2.1-2: k0 = floor(num * N_cb / (den * Zc)) * Zc, den = 66 (BG1) or 50 (BG2)."""

K0_DENOMINATOR = {1: 66, 2: 50}


@functools.lru_cache(maxsize=None)
def _table(bg: int) -> np.ndarray:
    """The shipped table of base graph ``bg``: int64 [edges, 10] = row, column, V(iLS=0..7)."""
    text = resources.files(__package__).joinpath("data", f"nr_bg{bg}.txt").read_text("ascii")
    rows = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return np.array(rows, dtype=np.int64)


def _check_bg(bg) -> int:
    if bg not in (1, 2) or isinstance(bg, bool):
        raise ValueError(f"bg={bg!r} is not a 5G NR base graph; use 1 or 2 (or None to choose as TS 38.212 does)")
    return int(bg)


def _check_z(z) -> int:
    if isinstance(z, bool) or not isinstance(z, (int, np.integer)) or int(z) not in SET_INDEX:
        raise ValueError(f"z={z!r} is not a lifting size of TS 38.212 Table 5.3.2-1; use one of "
                         f"{', '.join(map(str, LIFTING_SIZES))}")
    return int(z)


def base_matrix(bg: int, z: int) -> np.ndarray:
    """Base matrix of base graph ``bg`` at lifting size ``z``: int64 [46, 68] or [42, 52],
    -1 for a zero block, else the shift ``V_ij mod z`` of z's set (5.3.2)."""
    bg, z = _check_bg(bg), _check_z(z)
    t = _table(bg)
    base = np.full(BASE_SHAPE[bg], -1, np.int64)
    base[t[:, 0], t[:, 1]] = t[:, 2 + SET_INDEX[z]] % z
    return base


@functools.lru_cache(maxsize=None)
def _mother(bg: int, z: int) -> Code:
    base = base_matrix(bg, z)
    H = qc_expand(base, z)
    return Code(f"nr-bg{bg}-z{z}", H, SYSTEMATIC_COLUMNS[bg] * z, base=base, z=z, standard="nr")


def mother(bg: int, z: int) -> Code:
    """The mother code ``nr-bg<bg>-z<z>``: n = 68z / 52z, k = 22z / 10z (the same object
    for the same arguments)."""
    return _mother(_check_bg(bg), _check_z(z))


NAMES = tuple(f"nr-bg{bg}-z{z}" for bg in (1, 2) for z in LIFTING_SIZES)
"""Registry names of the mother codes."""


def select_base_graph(k: int, rate: float) -> int:
    """Base graph of TS 38.212 6.2.2 / 7.2.2 for payload ``k`` (as A) and code rate ``rate``."""
    if k <= 292 or (k <= 3824 and rate <= 0.67) or rate <= 0.25:
        return 2
    return 1


def lifting_size(k: int, bg: int) -> int:
    """Zc of TS 38.212 5.3.2: the smallest lifting size with K_b Zc >= k."""
    kb = 22 if bg == 1 else 10 if k > 640 else 9 if k > 560 else 8 if k > 192 else 6
    return next(z for z in LIFTING_SIZES if kb * z >= k)


def lbrm_n_ref(tbs_lbrm: int, c: int = 1) -> int:
    """N_ref of limited-buffer rate matching (5.4.2.1): floor(TBS_LBRM / (C * R_LBRM)),
    R_LBRM = 2/3, for a transport block of C code blocks (TBS_LBRM from 38.214 5.4.2)."""
    return (3 * int(tbs_lbrm)) // (2 * int(c))


def _int(name: str, value, low: int, high: int | None, why: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
            or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name}={value!r} is outside {span} ({why})")
    return int(value)


class NrCode(ShapedCode):
    """A 5G NR code block: k information bits sent as E bits of redundancy version rv.

    Made by :func:`nr`.  Besides the :class:`ShapedCode` interface (``n`` = E, ``k``,
    ``encode``, ``recover``, ``mother``, ``shaping``): ``bg``, ``z``, ``ils`` (set index),
    ``rv``, ``e``, ``k0``, ``n_cb``, ``filler`` (count), ``qm``; :meth:`with_rv` gives
    another redundancy version of the same block.
    """

    def __init__(self, k, e, rv, bg, z, n_cb, qm, n_ref):
        self.bg, self.z, self.ils, self.rv, self.e = bg, z, SET_INDEX[z], rv, e
        self.n_cb, self.qm, self.n_ref = n_cb, qm, n_ref
        K = SYSTEMATIC_COLUMNS[bg] * z
        self.filler = K - k
        self.k0 = (K0_NUMERATORS[bg][rv] * n_cb // (K0_DENOMINATOR[bg] * z)) * z
        m = mother(bg, z)
        # Circular buffer over d (d_i = c_{i + 2z}); filler bits are d_{k - 2z} .. d_{K - 2z - 1}.
        cyc = (self.k0 + np.arange(n_cb)) % n_cb
        cyc = cyc[(cyc < k - 2 * z) | (cyc >= K - 2 * z)]
        sent = np.resize(cyc, e) + 2 * z                  # np.resize repeats the buffer cyclically
        if qm is not None:                                # 5.4.2.2: f_{i + j Qm} = e_{i E/Qm + j}
            sent = sent.reshape(qm, e // qm).T.ravel()
        name = f"nr-bg{bg}-z{z}-k{k}-e{e}-rv{rv}" + (f"-nref{n_ref}" if n_ref else "") \
            + (f"-qm{qm}" if qm else "")
        super().__init__(m, Shaping(m.n, sent, np.arange(k, K)), name)

    def with_rv(self, rv: int, e: int | None = None) -> "NrCode":
        """The same code block sent as redundancy version ``rv`` (E bits, default this E)."""
        return nr(self.k, self.e if e is None else e, rv=rv, bg=self.bg, n_ref=self.n_ref, qm=self.qm)


def nr(k: int, n_or_e: int, rv: int = 0, bg: int | None = None, n_ref: int | None = None,
       qm: int | None = None) -> NrCode:
    """A 5G NR LDPC code block with rate matching (TS 38.212 5.3.2, 5.4.2, 6.2.2/7.2.2).

    ``nr(k, n).encode(info)`` gives the n = E transmitted bits of redundancy version 0, the
    output of Sionna's ``LDPC5GEncoder(k, n)``; ``gl.Decoder(nr(k, n))`` takes the E
    received LLRs (positive means 0) and returns ``info`` [batch, k] and the hard
    decisions ``bits`` at ``decoded_positions`` [batch, len(decoded_positions)] (the mother
    codeword, 68 Zc or 52 Zc bits, less the block columns pruned away:
    :func:`gpuldpc.codes.shaping.prune`).

    Parameters
    ----------
    k : int
        Information bits of the code block (K', CRC included), 12..8448 (BG1) or
        12..3840 (BG2).
    n_or_e : int
        Transmitted bits E, at least ceil(k / 0.95); more than the circular buffer holds
        repeats it.
    rv : int
        Redundancy version 0..3 (start k0 in the circular buffer).
    bg : 1, 2 or None
        Base graph; None chooses as TS 38.212 6.2.2 does (A = k, R = k / E).
    n_ref : int or None
        LBRM: the circular buffer holds min(N, n_ref) bits (:func:`lbrm_n_ref`); None for
        the full buffer (I_LBRM = 0).
    qm : int or None
        Modulation order Qm for the bit interleaver of 5.4.2.2 (E a multiple of it); None
        leaves the bits in selection order (as Sionna's encoder without
        ``num_bits_per_symbol``).

    Raises
    ------
    ValueError
        Naming the parameter and its valid range: k outside 12..8448 (or its base graph's
        K_cb), E below ceil(k / 0.95) (a code rate above 0.95, which the standard does not
        decode), rv outside 0..3, bg not 1/2/None, n_ref below the systematic part,
        E not a multiple of qm.
    """
    k = _int("k", k, K_MIN, K_MAX[1], "5G NR code blocks; larger ones need code block segmentation")
    e = _int("n_or_e", n_or_e, -(-20 * k // 19), None,     # k / E <= 0.95 = 19/20
             f"E >= k/{RATE_MAX} for k={k}: TS 38.214 allows code rates up to {RATE_MAX}")
    rv = _int("rv", rv, 0, 3, "the redundancy versions of TS 38.212 Table 5.4.2.1-2")
    if bg is None:
        bg = select_base_graph(k, k / e)
        if k > K_MAX[bg]:
            raise ValueError(f"k={k} at code rate {k / e:.3f} selects base graph 2 (TS 38.212 6.2.2), "
                             f"whose code blocks hold k in {K_MIN}..{K_MAX[2]}: segment the block, "
                             "or pass bg=1")
    else:
        bg = _check_bg(bg)
        _int("k", k, K_MIN, K_MAX[bg], f"base graph {bg} holds code blocks up to K_cb = {K_MAX[bg]}")
    z = lifting_size(k, bg)
    K = SYSTEMATIC_COLUMNS[bg] * z
    N = (BASE_SHAPE[bg][1] - 2) * z
    if n_ref is None:
        n_cb = N
    else:
        n_ref = _int("n_ref", n_ref, K - 2 * z, None,
                     f"the LBRM circular buffer must hold the K - 2Zc = {K - 2 * z} systematic bits sent")
        n_cb = min(N, n_ref)
    if qm is not None:
        qm = _int("qm", qm, 1, 10, "the modulation order Qm of TS 38.212 5.4.2.2")
        if e % qm:
            raise ValueError(f"n_or_e={e} must be a multiple of qm={qm} for the bit interleaver (5.4.2.2)")
    return NrCode(k, e, rv, bg, z, n_cb, qm, n_ref)

"""Encoders and syndromes.

Every encoder maps ``info`` uint8 [batch, k] to codewords uint8 [batch, n] and
puts the information at ``info_positions`` (``0..k-1`` whenever the code
allows it, which includes every standard code).

* :class:`DualDiagonalEncoder` -- binary QC codes whose parity part is one
  column h_b followed by a dual diagonal (IEEE 802.11n, 802.16e): linear time.
* :class:`CoreExtensionEncoder` -- binary QC codes whose parity part is a small
  core solved by summing its rows and peeling, followed by an identity
  extension (5G NR base graphs 1 and 2, TS 38.212 5.3.2): linear time.
* :class:`gpuldpc.gflinalg.GFqEncoder` -- every other code, binary (q = 2) or
  GF(q): a generator obtained once by Gauss-Jordan elimination of H, pivots
  searched from the last column backwards.

``make_encoder(code)`` picks one; ``Code.encoder`` caches it.
"""
from __future__ import annotations

import numpy as np

from .errors import CodeError
from .gflinalg import GFqEncoder, gf_syndrome


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def dual_diagonal_shift(base: np.ndarray) -> int | None:
    """The shift x of sum_i P^{h_b,i} = P^x if ``base`` has the standards' parity structure.

    Structure (kb = nb - mb): column kb is h_b; columns kb+1..nb-1 form the
    dual diagonal (block (j, kb+1+j) and (j+1, kb+1+j) are identities, every
    other block of those columns is zero); the circulants of h_b sum to a
    single P^x over GF(2), i.e. exactly one shift occurs an odd number of
    times (802.11n: (1, 0, 1) -> x = 0; 802.16e rate 3/4B: (0, 80, 0) ->
    x = floor(80 z / 96)).  Returns None for any other base matrix.
    """
    base = np.asarray(base)
    mb, nb = base.shape
    kb = nb - mb
    if kb < 1:
        return None
    expected = np.full((mb, mb - 1), -1)
    j = np.arange(mb - 1)
    expected[j, j] = 0
    expected[j + 1, j] = 0
    if not np.array_equal(base[:, kb + 1:], expected):
        return None
    shifts, counts = np.unique(base[:, kb][base[:, kb] >= 0], return_counts=True)
    odd = shifts[counts % 2 == 1]
    return int(odd[0]) if odd.size == 1 else None


class DualDiagonalEncoder:
    """Linear-time systematic encoder of the 802.11n / 802.16e codes.

    The encoding the IEEE 802.11n (802.11-2020 Annex F) and 802.16e (section
    8.4.9.2.5) parity structure was designed for: with the info split into
    z-bit blocks u_j and (P^s v)[r] = v[(r+s) mod z],

    * lambda_i = sum_j P^{s_ij} u_j for each block row i (index gathers);
    * summing all block rows cancels the dual diagonal: P^x p_0 = sum_i lambda_i,
      so p_0 = P^{-x} sum_i lambda_i (x from :func:`dual_diagonal_shift`);
    * p_1 = lambda_0 + P^{h_0} p_0, p_{i+1} = p_i + lambda_i + P^{h_i} p_0
      (a cumulative XOR over the block rows).

    The codeword is [u, p_0, p_1, .., p_{mb-1}], vectorized over the batch.
    """

    def __init__(self, base: np.ndarray, z: int):
        x = dual_diagonal_shift(base)
        if x is None:
            raise CodeError("base matrix has no h_b + dual-diagonal parity part; "
                            "encode with gflinalg.GFqEncoder")
        base = np.asarray(base, dtype=np.int64)
        mb, nb = base.shape
        kb = nb - mb
        self.z = z
        self.k, self.n = kb * z, nb * z
        self.info_positions = _readonly(np.arange(self.k))
        r = np.arange(z)
        blocks = [np.flatnonzero(base[i, :kb] >= 0) for i in range(mb)]
        width = max(1, max(len(b) for b in blocks))
        # Index into [info, z zeros]: padding entries read the zero block.
        gather = np.tile(self.k + r, (mb, width, 1))
        for i, cols in enumerate(blocks):
            gather[i, :len(cols)] = cols[:, None] * z + (r + base[i, cols][:, None]) % z
        self._lambda_index = gather
        self._p0_index = (r - x) % z
        h = base[:, kb]
        self._h_rows = np.flatnonzero(h >= 0)
        self._h_index = (r + h[self._h_rows][:, None]) % z

    def encode(self, info: np.ndarray) -> np.ndarray:
        """uint8 [batch, k] -> uint8 [batch, n], information first."""
        batch = info.shape[0]
        ext = np.zeros((batch, self.k + self.z), dtype=np.uint8)
        ext[:, :self.k] = info
        lam = ext[:, self._lambda_index[:, 0]]                              # [batch, mb, z]
        for t in range(1, self._lambda_index.shape[1]):
            lam ^= ext[:, self._lambda_index[:, t]]
        p0 = np.bitwise_xor.reduce(lam, axis=1)[:, self._p0_index]
        lam[:, self._h_rows] ^= p0[:, self._h_index]
        cw = np.empty((batch, self.n), dtype=np.uint8)
        cw[:, :self.k] = info
        cw[:, self.k:self.k + self.z] = p0
        cw[:, self.k + self.z:] = np.bitwise_xor.accumulate(lam[:, :-1], axis=1).reshape(batch, -1)
        return cw


def _shift_index(shift: int, z: int) -> np.ndarray:
    """Gather index of P^s: ``(P^s v)[r] = v[(r + s) mod z]`` (the convention of :mod:`.codes.qc`)."""
    return (np.arange(z) + shift) % z


def core_extension_plan(base: np.ndarray):
    """How :class:`CoreExtensionEncoder` solves a base matrix, or None if it cannot.

    Structure (kb = nb - mb info columns): for the smallest g >= 1, the last mb - g parity
    columns form an identity extension (block (i, kb+i) is the identity for i >= g, every
    other block of those columns is zero) and the g core rows hold the g core parity
    columns kb..kb+g-1.  Summing the core rows must cancel every core column but one
    (each of its shifts occurs an even number of times), whose shifts sum to a single P^x
    (exactly one shift of odd count): that column follows from the sum, and every other
    core column from a core row in which it is the only unknown (peeling).  5G NR: g = 4,
    column kb with shifts (1, 0, 1) or (V, V', V); 802.11n/802.16e: g = mb.

    Returns ``(g, first, x, order)``: core column ``first`` solved by P^x, then
    ``order`` = [(row, column), ...] in peeling order; None for any other structure.
    """
    base = np.asarray(base)
    mb, nb = base.shape
    kb = nb - mb
    if kb < 1:
        return None
    for g in range(1, mb + 1):
        ext = np.full((mb - g, mb - g), -1)
        np.fill_diagonal(ext, 0)
        if np.array_equal(base[g:, kb + g:], ext) and (base[:g, kb + g:] < 0).all():
            break
    else:                                   # pragma: no cover (g = mb always matches)
        return None
    core = base[:g, kb:kb + g]
    odd = []
    for j in range(g):
        shifts, counts = np.unique(core[:, j][core[:, j] >= 0], return_counts=True)
        odd.append(shifts[counts % 2 == 1])
    uncancelled = [j for j in range(g) if odd[j].size]
    if len(uncancelled) != 1 or odd[uncancelled[0]].size != 1:
        return None
    first = uncancelled[0]
    known, order = {first}, []
    while len(known) < g:
        for i in range(g):
            unknown = [j for j in np.flatnonzero(core[i] >= 0) if j not in known]
            if len(unknown) == 1:
                order.append((i, int(unknown[0])))
                known.add(int(unknown[0]))
                break
        else:
            return None
    return g, first, int(odd[first][0]), order


class CoreExtensionEncoder:
    """Linear-time systematic encoder of QC codes with a core and an identity extension.

    The 5G NR structure (TS 38.212 5.3.2, base graphs 1 and 2; see
    :func:`core_extension_plan` for the exact condition).  With the info split into
    z-bit blocks u_j and ``(P^s v)[r] = v[(r + s) mod z]``:

    * lambda_i = sum_j P^{s_ij} u_j for each core row i (index gathers);
    * summing the core rows leaves P^x p_first = sum_i lambda_i;
    * each other core parity block from the core row where it is the only unknown:
      p_j = P^{-s_ij} (lambda_i + sum of the row's known core terms);
    * each extension parity block (row i >= g) is the sum over the row's info and core
      blocks: p_{kb+i} = sum_j P^{s_ij} c_j.

    The codeword is [u, core parity, extension parity], vectorized over the batch.
    """

    def __init__(self, base: np.ndarray, z: int):
        plan = core_extension_plan(base)
        if plan is None:
            raise CodeError("base matrix has no core + identity-extension parity part; "
                            "encode with gflinalg.GFqEncoder")
        base = np.asarray(base, dtype=np.int64)
        mb, nb = base.shape
        kb = nb - mb
        self.base, self.z, self.kb, self.mb = base, z, kb, mb
        self.g, self.first, self.x, self.order = plan
        self.k, self.n = kb * z, nb * z
        self.info_positions = _readonly(np.arange(self.k))

    def _row_sum(self, blocks: np.ndarray, row: int, columns) -> np.ndarray:
        """sum_j P^{s_row,j} c_j over ``columns`` (block indices) present in ``row``: [batch, z]."""
        z = self.z
        acc = np.zeros((blocks.shape[0], z), dtype=np.uint8)
        for j in columns:
            s = self.base[row, j]
            if s >= 0:
                acc ^= blocks[:, j, _shift_index(s, z)]
        return acc

    def encode(self, info: np.ndarray) -> np.ndarray:
        """uint8 [batch, k] -> uint8 [batch, n], information first."""
        batch, z, kb, g = info.shape[0], self.z, self.kb, self.g
        cw = np.zeros((batch, self.n), dtype=np.uint8)
        cw[:, :self.k] = info
        blocks = cw.reshape(batch, -1, z)                 # a view: writes land in cw
        lam = np.stack([self._row_sum(blocks, i, range(kb)) for i in range(g)], axis=1)
        # P^x p_first = sum_i lambda_i  ->  p_first[t] = (sum)[(t - x) mod z]
        blocks[:, kb + self.first] = np.bitwise_xor.reduce(lam, axis=1)[:, _shift_index(-self.x, z)]
        for i, j in self.order:
            rhs = lam[:, i] ^ self._row_sum(blocks, i, [kb + c for c in range(g) if c != j])
            blocks[:, kb + j] = rhs[:, _shift_index(-self.base[i, kb + j], z)]
        for i in range(g, self.mb):
            blocks[:, kb + i] = self._row_sum(blocks, i, range(kb + g))
        return cw


def make_encoder(code):
    """The encoder for ``code`` (called once by the cached ``Code.encoder``)."""
    if code.is_binary and code.base is not None:
        if dual_diagonal_shift(code.base) is not None:
            return DualDiagonalEncoder(code.base, code.z)
        if core_extension_plan(code.base) is not None:
            return CoreExtensionEncoder(code.base, code.z)
    return GFqEncoder(code)


def syndrome(code, words) -> np.ndarray:
    """``H x^T`` over GF(q) for each word: [batch, n] -> uint8 [batch, m] (1-D -> 1-D)."""
    words = np.asarray(words)
    if words.ndim not in (1, 2) or words.shape[-1] != code.n:
        raise ValueError(f"code {code.name!r}: words must have shape [batch, {code.n}], "
                         f"got {words.shape}")
    s = gf_syndrome(code.H, np.atleast_2d(words), code.q)
    return s[0] if words.ndim == 1 else s

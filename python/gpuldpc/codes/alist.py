"""alist files: MacKay's format for binary codes, the KN/RPTU format for GF(q) codes.

Binary (D. MacKay, "alist" sparse matrix format)::

    N M                       columns, rows
    maxcol maxrow             largest column and row weights
    N column weights
    M row weights
    N lines: the 1-based rows of column 1..N    (zero-padded to maxcol, or not)
    M lines: the 1-based columns of row 1..M    (zero-padded to maxrow, or not)

GF(q) (KN/RPTU database, also ``*.nbalist``; see
``shared/reference/codes/nb/README.md``)::

    N M q
    N column degrees
    M row degrees
    M lines: pairs "column e" (1-based column, entry alpha^e, 0 <= e <= q-2)

The header decides: two numbers mean binary, three mean GF(q).  Entries become
element integers through the tables of :mod:`gpuldpc.gf` (polynomial basis,
alpha = 2).  Both lists of a binary file must describe the same matrix.  The
dimension is k = n - rank(H) (:func:`gpuldpc.gflinalg.gf_rank`).
"""
from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from ..gf import GF
from ..gflinalg import gf_rank
from .code import Code, CodeError
from .textfile import IntLines, check_dimension

FIELD_SIZES = tuple(2 ** m for m in range(2, 9))


def _list_entries(lines: IntLines, no, values, weight, maxw, limit, owner, kind):
    """The nonzero entries of one adjacency line: ``weight`` indices 1..limit, then zero padding."""
    if len(values) > max(weight, maxw):
        raise lines.error(no, f"{owner} lists {len(values)} numbers, more than the largest "
                              f"{'column' if kind == 'row' else 'row'} weight {maxw}")
    found = sum(1 for v in values if v != 0)
    if found != weight:
        raise lines.error(no, f"{owner} has weight {weight} in the weight lists but "
                              f"{found} {kind} indices here")
    entries = values[:weight]
    if 0 in entries:
        raise lines.error(no, f"{owner}: zero padding before the last {kind} index "
                              "(zeros may only pad the end of the line)")
    lines.check_range(no, entries, 1, limit, f"{kind} index")
    if len(set(entries)) != weight:
        dup = next(v for v in entries if entries.count(v) > 1)
        raise lines.error(no, f"{owner} lists {kind} {dup} twice")
    return entries


def _read_weights(lines: IntLines, count, limit, what):
    no, weights = lines.next_count(f"the {count} {what}s", count)
    lines.check_range(no, weights, 0, limit, what)
    return no, weights


def _read_binary(lines: IntLines, no, header, name) -> Code:
    N, M = header
    if N < 1 or M < 1:
        raise lines.error(no, f"N = {N} columns and M = {M} rows must both be >= 1")
    no2, maxw = lines.next_count("'maxcol maxrow' (largest column and row weights)", 2)
    no_c, colw = _read_weights(lines, N, M, "column weight")
    no_r, roww = _read_weights(lines, M, N, "row weight")
    if maxw != [max(colw), max(roww)]:
        raise lines.error(no2, f"largest weights given as {maxw[0]} {maxw[1]}, but the weight "
                               f"lists have {max(colw)} {max(roww)}")
    if sum(colw) != sum(roww):
        raise lines.error(no_r, f"row weights sum to {sum(roww)} but column weights to {sum(colw)}")
    col_lines, row_lines = [], []
    pairs_c, pairs_r = [], []
    for j in range(N):
        owner = f"column {j + 1}"
        lno, values = lines.next(f"the row list of {owner}")
        col_lines.append(lno)
        pairs_c += [(r - 1) * N + j for r in
                    _list_entries(lines, lno, values, colw[j], maxw[0], M, owner, "row")]
    for i in range(M):
        owner = f"row {i + 1}"
        lno, values = lines.next(f"the column list of {owner}")
        row_lines.append(lno)
        pairs_r += [i * N + c - 1 for c in
                    _list_entries(lines, lno, values, roww[i], maxw[1], N, owner, "column")]
    lines.expect_end("the M row lists")
    by_col = np.sort(np.array(pairs_c, dtype=np.int64))
    by_row = np.sort(np.array(pairs_r, dtype=np.int64))
    if not np.array_equal(by_col, by_row):
        # equal weight sums and no duplicates: both lists hold the same number of
        # entries, so some entry of the row lists is missing from the column lists
        i, j = divmod(int(np.setdiff1d(by_row, by_col)[0]), N)
        raise lines.error(row_lines[i], f"row {i + 1} lists column {j + 1}, but column {j + 1} "
                                        f"(line {col_lines[j]}) does not list row {i + 1}")
    rows, cols = np.divmod(by_row, N)
    H = sp.csr_matrix((np.ones(rows.size, dtype=np.uint8), (rows, cols)), shape=(M, N))
    k = check_dimension(lines.path, N, gf_rank(H, 2), "GF(2)")
    return Code(name, H, k)


def _read_gfq(lines: IntLines, no, header, name) -> Code:
    N, M, q = header
    if N < 1 or M < 1:
        raise lines.error(no, f"N = {N} columns and M = {M} rows must both be >= 1")
    if q not in FIELD_SIZES:
        raise lines.error(no, f"field size q = {q} is not one of {', '.join(map(str, FIELD_SIZES))}"
                              " (binary codes use the two-number MacKay header 'N M')")
    no_c, colw = _read_weights(lines, N, M, "column degree")
    no_r, roww = _read_weights(lines, M, N, "row degree")
    if sum(colw) != sum(roww):
        raise lines.error(no_r, f"row degrees sum to {sum(roww)} but column degrees to {sum(colw)}")
    rows, cols, exps = [], [], []
    for i in range(M):
        owner = f"row {i + 1}"
        lno, values = lines.next_count(f"the {roww[i]} (column, exponent) pairs of {owner}",
                                       2 * roww[i])
        c, e = values[0::2], values[1::2]
        lines.check_range(lno, c, 1, N, "column index")
        lines.check_range(lno, e, 0, q - 2, f"exponent (entry alpha^e of GF({q})) e =")
        if len(set(c)) != len(c):
            dup = next(v for v in c if c.count(v) > 1)
            raise lines.error(lno, f"{owner} lists column {dup} twice")
        rows += [i] * len(c)
        cols += [v - 1 for v in c]
        exps += e
    lines.expect_end("the M row lists")
    counts = np.bincount(np.array(cols, dtype=np.int64), minlength=N)
    bad = np.flatnonzero(counts != np.array(colw))
    if bad.size:
        j = int(bad[0])
        raise lines.error(no_c, f"column {j + 1} has degree {colw[j]} here but appears in "
                                f"{counts[j]} row lists")
    values = GF(q).exp[np.array(exps, dtype=np.int64)]
    H = sp.csr_matrix((values, (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
                      shape=(M, N))
    k = check_dimension(lines.path, N, gf_rank(H, q), f"GF({q})")
    return Code(name, H, k, q=q)


def from_alist(path, name: str | None = None) -> Code:
    """Read a binary (MacKay) or GF(q) (KN/RPTU) alist file.

    Parameters
    ----------
    path : str or os.PathLike
    name : str, optional
        The code's name (default: the file name).

    Returns
    -------
    Code
        ``k = n - rank(H)`` over GF(2) or GF(q); no QC structure is assumed.

    Raises
    ------
    CodeFormatError
        Naming the file, the line and the problem, for any malformed input.
    """
    lines = IntLines(path)
    no, header = lines.next("the header 'N M' (binary) or 'N M q' (GF(q))")
    name = os.path.basename(lines.path) if name is None else name
    if len(header) == 2:
        return _read_binary(lines, no, header, name)
    if len(header) == 3:
        return _read_gfq(lines, no, header, name)
    raise lines.error(no, f"header has {len(header)} numbers: expected 'N M' (binary alist) "
                          "or 'N M q' (GF(q) alist)")


def _join(values) -> str:
    return " ".join(map(str, values))


def format_alist(code: Code, pad: bool = False) -> str:
    """The alist text of a code: MacKay for binary codes, KN for GF(q) codes (see to_alist)."""
    H, Hc = code.H, code.H.tocsc()
    Hc.sort_indices()
    n, m = code.n, code.m
    colw, roww = np.diff(Hc.indptr), np.diff(H.indptr)
    if code.is_binary:
        maxc, maxr = int(colw.max()), int(roww.max())
        out = [f"{n} {m}", f"{maxc} {maxr}", _join(colw), _join(roww)]
        for ptr, idx, width in ((Hc.indptr, Hc.indices, maxc), (H.indptr, H.indices, maxr)):
            for a, b in zip(ptr[:-1], ptr[1:]):
                entries = (idx[a:b] + 1).tolist()
                out.append(_join(entries + [0] * (width - len(entries)) if pad else entries or [0]))
    else:
        log = np.asarray(GF(code.q).log)
        if not roww.all():
            raise CodeError(f"code {code.name!r}: row {int(np.argmin(roww)) + 1} of H is empty, "
                            "which the KN alist format cannot store (remove the empty rows)")
        out = [f"{n} {m} {code.q}", _join(colw), _join(roww)]
        for a, b in zip(H.indptr[:-1], H.indptr[1:]):
            pairs = np.stack([H.indices[a:b] + 1, log[H.data[a:b]]], axis=1)
            out.append(_join(pairs.ravel()))
    return "\n".join(out) + "\n"


def to_alist(code: Code, path, pad: bool = False):
    """Write ``code`` as an alist file.

    Binary codes: MacKay's format.  By default each list holds just its
    indices (a weight-0 column or row is written as a single ``0``), the form
    gr-fec's readers (``fec_mtrx``, ``alist``, ``read_alist_file``) accept;
    ``pad=True`` zero-pads every list to the largest weight as MacKay's own
    files do.  GF(q) codes: the KN format ``N M q`` with (column, exponent)
    pairs; every row of H must be nonzero.
    """
    text = format_alist(code, pad)
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(text)

"""QC base-matrix text files: one base row per line, ``-1`` for a zero block.

Binary codes: entries are circulant shifts 0..z-1 (see :mod:`.qc` for the
convention).  GF(q) codes: entries are the exponents s of alpha-multiplied
circulant permutation matrices A(alpha^s) of size z = q-1 (array dispersion,
:func:`gpuldpc.codes.nb.disperse`).  Every row must have the same number of
entries.  The standards' base matrices shipped in ``data/`` use this format.
"""
from __future__ import annotations

import os

import numpy as np

from ..gflinalg import gf_rank
from .alist import FIELD_SIZES
from .code import Code, CodeError
from .nb import disperse
from .qc import qc_expand
from .textfile import IntLines, check_dimension


def parse_base_matrix(path, limit: int, data: bytes | None = None,
                      what: str = "shift") -> np.ndarray:
    """Read a base matrix whose entries are -1 or 0..limit-1; int64 [mb, nb]."""
    lines = IntLines(path, data)
    no, first = lines.next("the first row of the base matrix")
    rows = [first]
    lines.check_range(no, first, -1, limit - 1, what)
    while not lines.at_end:
        no, row = lines.next_count(f"base-matrix row {len(rows) + 1} ({len(first)} entries, "
                                   "as many as row 1)", len(first))
        lines.check_range(no, row, -1, limit - 1, what)
        rows.append(row)
    return np.array(rows, dtype=np.int64)


def from_base_matrix(path, z: int | None = None, *, q: int = 2, name: str | None = None) -> Code:
    """Read a QC code from a base-matrix text file.

    Parameters
    ----------
    path : str or os.PathLike
    z : int
        Expansion factor of a binary code (entries are shifts 0..z-1).  For
        GF(q) codes it is q-1 and may be left out.
    q : int
        Field size: 2 (binary, default) or 4..256 (entries are exponents
        0..q-2 of alpha-multiplied circulant permutation matrices).
    name : str, optional
        The code's name (default: the file name).

    Returns
    -------
    Code
        With ``base`` and ``z`` set and ``k = n - rank(H)``.

    Raises
    ------
    CodeFormatError
        Naming the file, line and problem for malformed input.
    CodeError
        For a bad ``z`` or ``q``.
    """
    name = os.path.basename(os.fspath(path)) if name is None else name
    if q == 2:
        if isinstance(z, bool) or not isinstance(z, (int, np.integer)) or z < 1:
            raise CodeError(f"from_base_matrix({os.fspath(path)!r}): a binary base matrix needs "
                            f"the expansion factor z (an integer >= 1), got z={z!r}")
        base = parse_base_matrix(path, z)
        H = qc_expand(base, z)
        r, field = gf_rank(H, 2), "GF(2)"
    elif q in FIELD_SIZES:
        if z not in (None, q - 1):
            raise CodeError(f"from_base_matrix({os.fspath(path)!r}): GF({q}) blocks have size "
                            f"z = q-1 = {q - 1}, got z={z!r} (leave z out)")
        z = q - 1
        base = parse_base_matrix(path, z, what=f"exponent (GF({q}): -1 or 0..{q - 2})")
        H = disperse(base, q)
        r, field = gf_rank(H, q), f"GF({q})"
    else:
        raise CodeError(f"from_base_matrix: q={q!r} is not 2 or one of "
                        f"{', '.join(map(str, FIELD_SIZES))}")
    k = check_dimension(path, H.shape[1], r, field)
    return Code(name, H, k, q=q, base=base, z=z)


def format_base_matrix(base) -> str:
    """Text of a base matrix: one row per line, entries separated by single spaces."""
    return "".join(" ".join(map(str, row)) + "\n" for row in np.asarray(base).tolist())


def to_base_matrix(code: Code, path):
    """Write the base matrix of a QC code (shifts, or GF(q) exponents), one row per line."""
    if code.base is None:
        raise CodeError(f"code {code.name!r} has no base matrix (not built as a QC code); "
                        "write it with to_alist instead")
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(format_base_matrix(code.base))

"""Strict reading of the integer text files that describe codes (alist, base matrix).

Every problem found in a file raises :class:`CodeFormatError` naming the file,
the line (1-based, as an editor counts them) and what is wrong.  Files are
read as ASCII; lines are split on ``\\n`` (a trailing ``\\r`` is whitespace);
whitespace-only lines are skipped; every token must be a decimal integer
(``-?[0-9]+``).  Nothing is evaluated.
"""
from __future__ import annotations

import os
import re

from .code import CodeError

_INTEGER = re.compile(r"-?[0-9]+")


class CodeFormatError(CodeError):
    """A code file is malformed.

    Attributes
    ----------
    path : str
        The file (as given by the caller).
    line : int or None
        1-based line number of the problem, None when it concerns the whole
        file (for instance a matrix of rank n).
    problem : str
        What is wrong, without the location.
    """

    def __init__(self, path, line, problem):
        self.path = os.fspath(path)
        self.line = line
        self.problem = problem
        where = f"file {self.path!r}" + (f", line {line}" if line is not None else "")
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):
        return type(self), (self.path, self.line, self.problem)


class IntLines:
    """The non-blank lines of a text file as lists of integers, read in order.

    Parameters
    ----------
    path : str or os.PathLike
        Named in every error.
    data : bytes, optional
        The file's content (read from ``path`` when omitted; a missing file
        raises the usual ``FileNotFoundError``).
    """

    def __init__(self, path, data: bytes | None = None):
        self.path = os.fspath(path)
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise CodeFormatError(path, line, f"byte 0x{data[exc.start]:02x} is not ASCII: "
                                              "not a text matrix file") from None
        lines = text.split("\n")
        self.last_line = len(lines) - (lines[-1] == "")
        self._lines = [(no, tokens) for no, tokens in
                       ((i + 1, line.split()) for i, line in enumerate(lines)) if tokens]
        self._next = 0

    def error(self, line, problem) -> CodeFormatError:
        return CodeFormatError(self.path, line, problem)

    @property
    def at_end(self) -> bool:
        """No non-blank line is left."""
        return self._next == len(self._lines)

    def next(self, what: str) -> tuple[int, list[int]]:
        """The next non-blank line (its number and integers); ``what`` names it in errors."""
        if self.at_end:
            if not self._lines:
                raise self.error(1, f"file is empty (expected {what})")
            raise self.error(self.last_line, f"file ends here, truncated: expected {what}")
        no, tokens = self._lines[self._next]
        self._next += 1
        for tok in tokens:
            if not _INTEGER.fullmatch(tok):
                shown = tok if len(tok) <= 20 else tok[:20] + "..."
                raise self.error(no, f"{shown!r} is not an integer (in {what})")
        return no, [int(tok) for tok in tokens]

    def next_count(self, what: str, count: int) -> tuple[int, list[int]]:
        """The next line, which must hold exactly ``count`` integers."""
        no, values = self.next(what)
        if len(values) != count:
            raise self.error(no, f"expected {count} integers ({what}), found {len(values)}")
        return no, values

    def expect_end(self, after: str):
        """Fail if any non-blank line is left."""
        if not self.at_end:
            no = self._lines[self._next][0]
            raise self.error(no, f"unexpected content after {after}")

    def check_range(self, no: int, values, lo: int, hi: int, what: str):
        """Every value must lie in lo..hi."""
        for v in values:
            if not lo <= v <= hi:
                raise self.error(no, f"{what} {v} is outside {lo}..{hi}")


def check_dimension(path, n: int, rank: int, field: str) -> int:
    """k = n - rank, which must lie in 1..n-1 for a usable code."""
    k = n - rank
    if not 0 < k < n:
        raise CodeFormatError(path, None, f"H has {field} rank {rank} with n = {n}: dimension "
                                          f"k = {k} is outside 1..n-1, not a usable code")
    return k

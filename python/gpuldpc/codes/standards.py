"""The IEEE 802.11n (WiFi) and IEEE 802.16e (WiMAX) LDPC codes.

Both standards define each code by a 24-column base matrix of circulant
shifts (convention of :mod:`.qc`) whose parity part is one column h_b of odd
structure followed by a dual diagonal, which gives linear-time encoding
(:class:`gpuldpc.encode.DualDiagonalEncoder`).

* 802.11n-2009 (802.11-2020 Annex F): n = 648, 1296, 1944 with
  z = 27, 54, 81, rates 1/2, 2/3, 3/4, 5/6: one base matrix per (n, rate).
* 802.16e-2005 section 8.4.9.2.5: n = 576..2304 in steps of 96, z = n/24,
  rates 1/2, 2/3A, 2/3B, 3/4A, 3/4B, 5/6, from the z0 = 96 base matrices:
  a shift p > 0 becomes floor(p*z/96), except rate 2/3A where it becomes
  p mod z; -1 and 0 stay.

The base matrices in ``data/`` are the cross-checked transcriptions of
``shared/reference/codes`` (two cells where public copies disagree: rate 3/4B
row 5 column 7 is 35, rate 5/6 row 3 column 0 is 68, the later editions'
values).  All codes have full-rank H, so k = n - m.
"""
from __future__ import annotations

import functools
from importlib import resources

import numpy as np

from .basefile import parse_base_matrix
from .code import Code
from .qc import qc_expand

WIFI_Z = {648: 27, 1296: 54, 1944: 81}
WIFI_RATES = ("1/2", "2/3", "3/4", "5/6")
WIMAX_LENGTHS = tuple(range(576, 2304 + 1, 96))
WIMAX_RATES = ("1/2", "2/3A", "2/3B", "3/4A", "3/4B", "5/6")
WIMAX_Z0 = 96


def _base_data(file: str, limit: int) -> np.ndarray:
    """Read a shipped base matrix (``gpuldpc/codes/data/<file>``)."""
    resource = resources.files(__package__).joinpath("data", file)
    return parse_base_matrix(f"gpuldpc/codes/data/{file}", limit, data=resource.read_bytes())


def _check(family: str, n, rate, lengths, rates):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or int(n) not in lengths:
        raise ValueError(f"{family}: n={n!r} is not a code length of the standard; use one of "
                         f"{', '.join(map(str, lengths))}")
    if rate not in rates:
        raise ValueError(f"{family}: rate={rate!r} is not one of {', '.join(map(repr, rates))}")
    return int(n)


def wimax_shifts(base0: np.ndarray, z: int, rate: str) -> np.ndarray:
    """Scale the z0 = 96 shifts to z: floor(p*z/96) (p mod z for rate 2/3A); -1 and 0 stay."""
    scaled = base0 % z if rate == "2/3A" else (base0 * z) // WIMAX_Z0
    return np.where(base0 > 0, scaled, base0)


@functools.lru_cache(maxsize=None)
def _wifi(n: int, rate: str) -> Code:
    z = WIFI_Z[n]
    base = _base_data(f"wifi_{n}_{rate.replace('/', '_')}.txt", z)
    H = qc_expand(base, z)
    return Code(f"wifi-{n}-{rate}", H, H.shape[1] - H.shape[0], base=base, z=z, standard="wifi")


@functools.lru_cache(maxsize=None)
def _wimax(n: int, rate: str) -> Code:
    z = n // 24
    base0 = _base_data(f"wimax_2304_{rate.replace('/', '_')}.txt", WIMAX_Z0)
    base = wimax_shifts(base0, z, rate)
    H = qc_expand(base, z)
    return Code(f"wimax-{n}-{rate}", H, H.shape[1] - H.shape[0], base=base, z=z, standard="wimax")


def wifi(n: int, rate: str) -> Code:
    """IEEE 802.11n LDPC code: n in {648, 1296, 1944}, rate in {"1/2", "2/3", "3/4", "5/6"}.

    The same object is returned for the same arguments.
    """
    return _wifi(_check("wifi", n, rate, tuple(WIFI_Z), WIFI_RATES), rate)


def wimax(n: int, rate: str) -> Code:
    """IEEE 802.16e LDPC code: n = 576..2304 step 96 (z = n/24), rate in
    {"1/2", "2/3A", "2/3B", "3/4A", "3/4B", "5/6"}.

    The same object is returned for the same arguments.
    """
    return _wimax(_check("wimax", n, rate, WIMAX_LENGTHS, WIMAX_RATES), rate)

"""Codes by name: ``get("wifi-1944-1/2")``, ``get("wimax-2304-2/3A")``, ``get("gf32-744-653")``.

Binary names are ``wifi-<n>-<rate>`` and ``wimax-<n>-<rate>`` (see
:mod:`.standards`) and the 5G NR mother codes ``nr-bg<1|2>-z<Zc>`` (see :mod:`.nr5g`; a
rate-matched code block is ``gpuldpc.codes.nr(k, e, rv)``); GF(q) names ``gf<q>-<n>-<k>`` come from
:data:`gpuldpc.codes.nb.FACTORIES`; CCSDS ``ccsds-ar4ja-<k>-<rate>`` and
``ccsds-c2`` (:mod:`.ccsds`, ShapedCode objects).  Each name gives the same object every time.
"""
from __future__ import annotations

import difflib
import re

from .ccsds import REGISTRY as CCSDS
from .ccsds import ar4ja
from .code import Code
from .dvb_s2 import K_LDPC as DVBS2_K_LDPC
from .dvb_s2 import dvbs2
from .nb import FACTORIES
from .nr5g import LIFTING_SIZES
from .nr5g import mother as nr_mother
from .standards import WIFI_RATES, WIFI_Z, WIMAX_LENGTHS, WIMAX_RATES, wifi, wimax

_BINARY = {
    **{f"wifi-{n}-{rate}": (wifi, n, rate) for n in WIFI_Z for rate in WIFI_RATES},
    **{f"wimax-{n}-{rate}": (wimax, n, rate) for n in WIMAX_LENGTHS for rate in WIMAX_RATES},
    **{f"nr-bg{bg}-z{z}": (nr_mother, bg, z) for bg in (1, 2) for z in LIFTING_SIZES},
    **{f"dvbs2-{f}-{rate}": (dvbs2, f, rate) for f in DVBS2_K_LDPC for rate in DVBS2_K_LDPC[f]},
    **CCSDS,
}
_NB_CACHE: dict[str, Code] = {}
_FAMILY = re.compile(r"^(?:dvbs2-(?P<frame>[^-]+)-(?P<rate>.+)|ccsds-ar4ja-(?P<k>\d+)-(?P<ar4ja_rate>.+))$")


def _family_error(name: str) -> str:
    """For a DVB-S2 or AR4JA name whose frame, k or rate the family does not have:
    " (<the family constructor's error, naming the valid values>)"; else ""."""
    family = _FAMILY.match(name)
    if family is None:
        return ""
    try:
        if family["frame"]:
            dvbs2(family["frame"], family["rate"])
        else:
            ar4ja(int(family["k"]), family["ar4ja_rate"])
    except ValueError as exc:
        return f" ({exc})"
    return ""


class UnknownCodeError(KeyError):
    """No code has this name; the message lists the closest names."""

    def __str__(self):
        return str(self.args[0])


def names() -> list[str]:
    """Every registered name: WiFi, WiMAX, 5G NR mother codes, then the GF(q) codes."""
    return list(_BINARY) + list(FACTORIES)


def get(name: str) -> Code:
    """The code registered as ``name`` (the same object on every call).

    Raises
    ------
    UnknownCodeError (a KeyError)
        When no code has that name; the message suggests close names (and, for a DVB-S2
        or AR4JA name, gives the family's error naming the valid frames, k and rates).
    """
    if not isinstance(name, str):
        raise TypeError("code name must be a string like 'wifi-1944-1/2', "
                        f"got {type(name).__name__}")
    if name in _BINARY:
        build, n, rate = _BINARY[name]
        return build(n, rate)
    if name in FACTORIES:
        if name not in _NB_CACHE:
            _NB_CACHE[name] = FACTORIES[name]()
        return _NB_CACHE[name]
    by_lower = {known.lower(): known for known in names()}
    close = [by_lower[c] for c in
             difflib.get_close_matches(name.lower(), by_lower, n=5, cutoff=0.6)]
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise UnknownCodeError(f"no code named {name!r}{_family_error(name)}{hint} (gl.codes.names() lists "
                           f"{len(_BINARY) + len(FACTORIES)} codes)")

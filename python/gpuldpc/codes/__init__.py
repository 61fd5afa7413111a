"""The code library: standard codes, GF(q) codes, file I/O.

::

    import gpuldpc as gl
    code = gl.codes.wifi(1944, "1/2")          # IEEE 802.11n
    code = gl.codes.wimax(2304, "2/3A")        # IEEE 802.16e
    code = gl.codes.get("wifi-1944-1/2")       # by name; gl.codes.names() lists them
    code = gl.codes.dvbs2("normal", "1/2")    # DVB-S2, n = 64800 / 16200 (docs/dvbs2.md)
    code = gl.codes.nr(8448, 12672, rv=0)      # 5G NR code block, rate matched (docs/nr.md)
    code = gl.codes.ar4ja(1024, "1/2"); gl.codes.c2()   # CCSDS (docs/ccsds.md)
    code = gl.codes.shaped(wifi, punctured=.., shortened=..)   # any code, punctured/shortened
    code = gl.codes.from_alist("H.alist")      # binary (MacKay) or GF(q) (KN) alist
    code = gl.codes.from_base_matrix("B.txt", z=81)      # binary QC base matrix
    code = gl.codes.from_base_matrix("E.txt", q=32)      # GF(q) exponents, z = q-1
    gl.codes.to_alist(code, "out.alist"); gl.codes.to_base_matrix(code, "out.txt")

Malformed files raise :class:`CodeFormatError` (a ``ValueError``) naming the
file, the line and the problem.
"""
from .alist import from_alist, to_alist  # noqa: F401
from .basefile import from_base_matrix, to_base_matrix  # noqa: F401
from .ccsds import ar4ja, c2  # noqa: F401
from .code import Code, CodeError  # noqa: F401
from .dvb_s2 import dvbs2  # noqa: F401
from .qc import qc_expand  # noqa: F401
from .nr5g import NrCode, nr  # noqa: F401
from .registry import UnknownCodeError, get, names  # noqa: F401
from .shaping import ShapedCode, Shaping, combine, shaped  # noqa: F401
from .standards import wifi, wimax  # noqa: F401
from .textfile import CodeFormatError  # noqa: F401

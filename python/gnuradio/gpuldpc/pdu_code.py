"""The ``ldpc_code`` entry of PDU metadata (:mod:`gpuldpc.code_switch`), read for the PDU blocks."""
from __future__ import annotations

import pmt

from gpuldpc.code_switch import KEY

_KEY = pmt.intern(KEY)


def code_key(meta):
    """The metadata's ``ldpc_code`` as Python (a symbol or string: str; an integer: int; other
    values as ``pmt.to_python`` gives them), or None when the entry is absent or nil."""
    value = pmt.dict_ref(meta, _KEY, pmt.PMT_NIL)
    return None if pmt.is_null(value) else pmt.to_python(value)


def with_code(meta, name: str):
    """``meta`` with ``ldpc_code`` set to the symbol ``name``."""
    return pmt.dict_add(meta, _KEY, pmt.intern(name))
